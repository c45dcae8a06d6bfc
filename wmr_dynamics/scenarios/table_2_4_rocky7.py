"""Thesis §2.5.1 (Table 2.4): Rocky 7 on random rough terrain, stabilized DAE vs. unconstrained + terrain fitting.

The set-up of ``benchmarks/table_2_4_rocky7.py`` (the study and its report) and of the tests that check it.
Rocky 7 is commanded to drive straight, open loop, at ``SPEED`` for ``DURATION`` with the naive flat-ground
controller (all six wheels at v / r, steering held straight) over Gaussian rough terrain (RMS height
``RMS``, correlation length ``CORR_LEN``, one seed per terrain).  Two motion predictors:

- **stabilized DAE** (§2.2.5): the library's :class:`~wmr_dynamics.simulate.Simulator` in ``kinematic`` mode,
  Baumgarte gain σ = 1/Δt, Euler (:func:`run_dae`);
- **unconstrained + terrain fitting** (Tarokh & McDermott): the nominal body velocity (``SPEED`` along body x,
  zero angular velocity) integrated each step, x, y and yaw kept, the rest re-fitted to the terrain
  (:func:`run_unconstrained`; the fit: :mod:`wmr_dynamics.kinematics.terrain_fit`).

Costs are counted in wheel–terrain collision evaluations (:class:`ContactCounter`), which do not depend on
the machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

import wmr_dynamics as wmr
import wmr_dynamics.kinematics.dae as _dae
from wmr_dynamics import spatial
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.kinematics import actuated_indices, forward_kinematics
from wmr_dynamics.kinematics.terrain_fit import FITS, contact_velocities, unconstrained_states
from wmr_dynamics.model import WmrModel
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import HeightGrid, gaussian_rough_terrain

SPEED = 0.5  # m/s, commanded forward speed
DURATION = 10.0  # s
RMS, CORR_LEN = 0.05, 0.2  # m, rough terrain (thesis §2.5.1)
BOUNDS = (-2.0, 12.0, -4.0, 4.0)  # m, terrain extent (x_min, x_max, y_min, y_max)
FIT_METHOD = {"newton": "unc", "nelder-mead": "unc_nm"}  # fit -> Run.method of the unconstrained runs


def rocky7_model(joint_limits: bool = False) -> WmrModel:
    """The bundled Rocky 7; by default with its (assumed, YAML-documented) joint limits removed.

    The thesis's Rocky 7 (and wmrde's ``rocky.m``) has no joint limits; the bundled URDF's ±0.8 rad
    rocker/bogie limits are hard stops in the library's kinematic solve, and the bogies reach them on this
    terrain, which the terrain-fitting method (no limits) would not see.  Both methods use the same model.
    """
    model = wmr.load_model("rocky7")
    if joint_limits:
        return model
    frames = tuple(dataclasses.replace(f, limits=(-np.inf, np.inf)) for f in model.frames)
    return WmrModel(frames=frames, wheels=model.wheels, joint_constraints=model.joint_constraints,
                    joint_springs=dict(model.joint_springs), name=model.name, config=dict(model.config),
                    source=model.source)


def make_terrain(seed: int) -> HeightGrid:
    """Gaussian rough terrain of thesis §2.5.1 over ``BOUNDS``: RMS 0.05 m, correlation length 0.2 m."""
    return gaussian_rough_terrain(rms=RMS, corr_len=CORR_LEN, bounds=BOUNDS, seed=seed)


def naive_controller(model: WmrModel) -> BodyVelocityController:
    """The flat-ground controller of §2.5.1: every wheel at v / r, steering straight."""
    return BodyVelocityController(model, "naive")


def initial_state(model: WmrModel, terrain: HeightGrid) -> NDArray:
    """The vehicle YAML's start pose (x 1.1 m, y 0, yaw 0) put on the terrain (§2.2.4)."""
    return Simulator(model, terrain, mode="kinematic", controller=naive_controller(model)).initial_state()


def nominal_velocity(model: WmrModel, q: NDArray) -> NDArray:
    """q̇' of the unconstrained method: body x velocity ``SPEED``, no rotation, wheels at the naive rates."""
    qvel = np.zeros(model.num_dof)
    qvel[3] = SPEED
    T = forward_kinematics(model, q)
    qvel[actuated_indices(model)] = naive_controller(model)(q, T, SPEED, 0.0)
    return qvel


class ContactCounter:
    """Counts wheel–terrain collision evaluations (calls of ``wheel_contacts`` made by the kinematics module).

    The Newton fit reaches collision detection through :func:`wmr_dynamics.kinematics.evaluate`; the
    Nelder–Mead objective (:func:`wmr_dynamics.kinematics.terrain_fit.fit_objective`) calls
    ``wmr_dynamics.kinematics.dae.wheel_contacts`` directly (it needs no Jacobians).  While :meth:`active`,
    that module attribute is wrapped, so both are counted: the methods' cost in the unit that dominates a
    kinematic step, independent of wall-clock noise.
    """

    def __init__(self) -> None:
        self.calls = 0

    @contextlib.contextmanager
    def active(self) -> Iterator[ContactCounter]:
        if not hasattr(_dae, "wheel_contacts"):
            raise RuntimeError("wmr_dynamics.kinematics.dae no longer calls wheel_contacts; update ContactCounter")
        original = _dae.wheel_contacts

        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        _dae.wheel_contacts = counted
        try:
            yield self
        finally:
            _dae.wheel_contacts = original


@dataclasses.dataclass
class Run:
    """One simulation.  ``q``: (n+1, nq) states; ``contact_speed``: (n, nw) ‖v_c‖ per step and wheel (m/s);
    ``contact_points``: (n+1, nw, 3) world (m); ``wall_s``: wall time of the stepping loop; ``collisions``:
    ``wheel_contacts`` calls made inside that loop; ``mean_abs_dz``: mean |Δz| over steps and wheels (m)."""

    method: str
    dt: float
    seed: int
    q: NDArray
    contact_speed: NDArray
    contact_points: NDArray
    wall_s: float
    collisions: int
    mean_abs_dz: float = float("nan")
    mean_vxy: float = float("nan")  # own-loop DAE only: mean tangential / normal contact-point speed, m/s
    mean_vz: float = float("nan")
    max_abs_dz: float = float("nan")  # unconstrained only: largest |Δz| after any fit (m)
    restarts: int = 0  # Nelder–Mead only: fits restarted

    @property
    def steps(self) -> int:
        return len(self.q) - 1

    @property
    def yaw(self) -> float:
        """Final yaw, rad."""
        return float(spatial.quat_to_rpy(self.q[-1, :4])[2])


def run_dae(model: WmrModel, terrain: HeightGrid, dt: float, q0: NDArray, seed: int = -1,
            duration: float = DURATION) -> Run:
    """Stabilized DAE (the library's Simulator, kinematic mode, σ = 1/Δt, Euler) for ``duration`` (s) at
    ``dt`` (s) from ``q0``, stepped from Python (``engine="python"``: one compiled solve per step, the loop in
    Python like the terrain-fitting baselines').  Its collision count is structural: an Euler step is one
    solve, one collision detection (the compiled engine's; :class:`ContactCounter` counts the baselines')."""
    sim = Simulator(model, terrain, mode="kinematic", dt=dt, controller=naive_controller(model), engine="python")
    res = sim.run(duration, (SPEED, 0.0), q0=q0, progress=False)
    return Run("dae", dt, seed, res.q, res.contact_speed[:-1], res.contact_points, res.wall_time_s,
               len(res.q) - 1, float(np.abs(res.dz[:-1]).mean()))


def run_unconstrained(model: WmrModel, terrain: HeightGrid, dt: float, q0: NDArray, seed: int = -1,
                      fit: str = "newton", duration: float = DURATION, nm_options: dict | None = None) -> Run:
    """Unconstrained motion at :func:`nominal_velocity` + terrain fitting (``fit``: one of
    :data:`~wmr_dynamics.kinematics.terrain_fit.FITS`) for ``duration`` (s) at ``dt`` (s) from ``q0``.

    The contact velocities are computed after the (timed, counted) loop; ``mean_abs_dz`` / ``max_abs_dz``:
    over the fitted states (steps 1 … n) and wheels.
    """
    if fit not in FITS:
        raise ValueError(f"fit must be one of {FITS}, got {fit!r}")
    q0 = np.asarray(q0, dtype=float)
    qvel = nominal_velocity(model, q0)  # the naive wheel rates do not depend on the state
    counter = ContactCounter()
    with counter.active():
        Q, wall, restarts = unconstrained_states(model, terrain, q0, qvel, dt, int(round(duration / dt)), fit,
                                                 nm_options)
    speed, points, dz = contact_velocities(model, terrain, Q, dt)
    return Run(FIT_METHOD[fit], dt, seed, Q, speed, points, wall, counter.calls, float(np.abs(dz[1:]).mean()),
               max_abs_dz=float(np.abs(dz[1:]).max()), restarts=restarts)
