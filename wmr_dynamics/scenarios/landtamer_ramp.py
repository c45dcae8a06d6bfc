"""Thesis §2.5.2 (Table 2.5, Figs. 2.11–2.14): LandTamer over a ramp, DAE dynamics vs. the stiff ODE — the scenario.

The set-up of ``benchmarks/landtamer_ramp.py`` (and, for the vehicle and contact, of
``benchmarks/extreme_phenomena.py``) and of the tests that check them; the thesis read literally where it is
explicit, our choice where it is not:

- vehicle: ``landtamer`` (urdf/landtamer.urdf, thesis Table E.1; 1462.8 kg, cg 0.83 m above flat ground);
  :func:`landtamer` also builds the raised-cg variant of §2.5.3;
- contact: Pacejka / Nicolas–Comstock (thesis App. C, Table C.1 coefficients, μ = 1), normal stiffness
  kp = m·g/(6·0.02 m), kd = kp/20 (VEHICLES.md); actuators: "a basic proportional controller with a modest
  gain" = the PI actuator of config/landtamer.yaml with its kp = 2000 N·m per rad/s and ki = 0, no torque
  limit (:func:`pacejka_options`);
- terrain: flat ground, then a 1.5 m high 20° ramp (4.12 m up, a 5 m plateau, 4.12 m down) starting at
  x = 4 m (:func:`ramp_terrain`; the thesis: "in the interval from 2–10 seconds it traverses a 1.5 m high,
  20° ramp");
- command (skid steer, :class:`~wmr_dynamics.controllers.BodyVelocityController`; :func:`ramp_command`):
  v = 1 m/s from rest, 2 m/s from t = 1 s; yaw rate 0, then +1 rad/s (left) from t = 10 s and −1 rad/s
  (right) from t = 15 s; 20 s total.

Methods: the DAE / force-balance model (:func:`run_dae`) and the stiff ODE (:func:`run_ode`: the same contact
and actuator forces added directly to eq. 2.53, SciPy's stiff solvers at the thesis's settings RelTol 1e-2,
MaxStep 0.04 s, MATLAB's default AbsTol 1e-6).

Slip, the same definitions for both methods, as the dynamic engine reports them (``compiled/rollout.py``;
:func:`wheel_slips`): slip ratio s = (Rω − V_x)/max(|Rω|, |V_x|) (eq. 2.40, bounded to [−1, 1];
s > 0 when the wheel surface turns faster than the wheel centre moves), slip angle α = atan2(v_y, |V_x|)
(eq. 2.42), v_y the lateral velocity of the contact point over the ground, contact-frame y to the left.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

import wmr_dynamics as wmr
from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.contact_models import PacejkaContact
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.dynamics.stiff_ode import OdeResult, simulate_stiff_ode
from wmr_dynamics.kinematics import forward_kinematics, wheel_jacobians
from wmr_dynamics.model import G, WmrModel
from wmr_dynamics.simulate import SimResult, Simulator
from wmr_dynamics.terrain import Ramp, Terrain

RAMP = dict(x_start=4.0, height=1.5, slope_deg=20.0, top_length=5.0, down=True)
DURATION = 20.0  # s
DT = 0.04  # s, the thesis's headline step size
ODE_SETTINGS = dict(rtol=1e-2, atol=1e-6, max_step=0.04)  # thesis: RelTol 1e-2, MaxStep .04; MATLAB AbsTol 1e-6
ODE_SAMPLE_DT = 0.01  # s, output spacing of the ODE (dense output; costs no extra RHS evaluations)
MIDDLE_WHEELS = (2, 3)  # ML, MR: at x = 0, beside the cg; their lateral slip is the body's


# ---- model, terrain, command ---------------------------------------------------------------------------

def landtamer(cg_height: float | None = None) -> WmrModel:
    """The bundled LandTamer; with ``cg_height`` (m) a variant whose body centre of mass is moved straight up or
    down to that height above flat ground (wheels just touching, undeformed).

    The thesis's "cg height" (0.83 m baseline, 1.25 m raised, §2.5.3) is read as the body's centre of mass, as in
    VEHICLES.md ("centre of mass 0.414 m above the body frame, i.e. 0.83 m above flat ground"); the whole
    vehicle's cg, wheels included, is then 0.812 m and 1.208 m (:func:`cg_height`).  Body mass and its rotational
    inertia about its own centre of mass are kept (the 2.1336 × 1.6383 × 0.828 m box); only ``Frame.com`` of the
    body frame changes, via ``dataclasses.replace`` (the model recompiles its spatial inertias in
    ``__post_init__``).  The body frame is at axle height, one wheel radius (0.4191 m) above the ground, so
    com_z = cg_height − 0.4191 m (baseline 0.414 m).
    """
    model = wmr.load_model("landtamer")
    if cg_height is None:
        return model
    body = model.frames[0]
    com = (float(body.com[0]), float(body.com[1]), float(cg_height) - float(model.wheel_radii[0]))
    return dataclasses.replace(model, frames=(dataclasses.replace(body, com=com), *model.frames[1:]),
                               name=f"{model.name}_cg{cg_height:g}")


def cg_height(model: WmrModel, body_only: bool = False) -> float:
    """Height (m) above flat ground (wheels just touching) of the vehicle's centre of mass, or the body's."""
    T = forward_kinematics(model, model.state(xyz=(0.0, 0.0, float(model.wheel_radii[0]))))
    z = np.array([(T[i, :3, :3] @ model.com[i] + T[i, :3, 3])[2] for i in range(model.num_frames)])
    if body_only:
        return float(z[0])
    return float(np.dot(model.mass, z) / model.total_mass)


def ramp_terrain() -> Ramp:
    return Ramp(**RAMP)


def ramp_command(t: float) -> tuple[float, float]:
    """(v m/s, ω rad/s): 1 m/s, 2 m/s from 1 s; left turn at 1 rad/s from 10 s, right turn from 15 s."""
    v = 1.0 if t < 1.0 else 2.0
    omega = 0.0 if t < 10.0 else (1.0 if t < 15.0 else -1.0)
    return v, omega


def p_gain(model: WmrModel) -> tuple[float, float]:
    """(kp, ki) of the vehicle YAML's PI actuator block (LandTamer: 2000 N·m·s/rad, 0)."""
    pi = (model.config.get("actuators") or {}).get("pi") or {}
    return float(pi.get("kp", 2000.0)), float(pi.get("ki", 0.0))


def pacejka_options(model: WmrModel, mu: float = 1.0, **overrides) -> DynamicsOptions:
    """Pacejka contact (Table C.1, kp from the vehicle mass, kd = kp/20, friction ``mu``) and the YAML's PI
    actuator (ki = 0: a P controller)."""
    opts = DynamicsOptions.from_config(model, contact="pacejka", actuator="pi", **overrides)
    if mu != 1.0:
        p = opts.contact.params
        opts = dataclasses.replace(opts, contact=PacejkaContact(kp=p["kp"], kd=p["kd"], mu=mu))
    return opts


def start_state(model: WmrModel, terrain: Terrain) -> NDArray:
    return Simulator(model, terrain).initial_state(xyz=(0.0, 0.0))


# ---- runs ------------------------------------------------------------------------------------------------

def dae_simulator(model: WmrModel, terrain: Terrain, dt: float = DT, mu: float = 1.0, engine: str = "auto",
                  **overrides) -> Simulator:
    """The DAE / force-balance Simulator (§2.4) of the scenario at Δt ``dt`` (s): Pacejka contact with friction
    ``mu`` and the P actuator (:func:`pacejka_options`, ``overrides`` passed on); ``engine`` as Simulator's."""
    return Simulator(model, terrain, mode="dynamic", dt=dt, dynamics=pacejka_options(model, mu, **overrides),
                     engine=engine)


def run_dae(model: WmrModel, terrain: Terrain, command: Callable[[float], tuple[float, float]], duration: float,
            dt: float = DT, mu: float = 1.0, q0: NDArray | None = None, progress: bool | None = False,
            **overrides) -> SimResult:
    """DAE / force-balance dynamics (§2.4) with the Pacejka contact and the P actuator: ``command`` t → (v m/s,
    ω rad/s) for ``duration`` (s) from ``q0`` (default :func:`start_state`), at rest."""
    sim = dae_simulator(model, terrain, dt, mu, **overrides)
    return sim.run(duration, command, q0=start_state(model, terrain) if q0 is None else q0, progress=progress)


@dataclass
class OdeRun:
    """A stiff-ODE run, its accepted step end times (from the RHS call times) and slips at the samples."""

    result: OdeResult
    step_times: NDArray  # accepted step ends, s (reconstructed from the RHS evaluation times)
    cpu_s: float = float("nan")  # process CPU time of simulate_stiff_ode, s
    slip_ratio: NDArray = field(default_factory=lambda: np.zeros((0, 0)))
    slip_angle: NDArray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def t(self) -> NDArray:
        return self.result.t

    @property
    def q(self) -> NDArray:
        return self.result.q

    @property
    def qvel(self) -> NDArray:
        return self.result.qvel

    @property
    def steps_known(self) -> bool:
        """Radau evaluates the RHS at its collocation nodes inside each step: the call times do not give its
        steps (BDF and LSODA evaluate only at step ends)."""
        return self.result.method != "Radau"

    @property
    def n_steps(self) -> int | None:
        return len(self.step_times) if self.steps_known else None

    @property
    def mean_step(self) -> float:
        return float(np.mean(np.diff(np.r_[0.0, self.step_times]))) if self.steps_known else float("nan")


def _accepted_steps(call_times: list[float]) -> NDArray:
    """Step end times from the sequence of RHS evaluation times.

    Consecutive distinct evaluation times are step attempts (a Newton iteration or a finite-difference Jacobian
    evaluates at the same time as its attempt; a Jacobian refresh re-evaluates at the last accepted time).  An
    attempt was accepted if the next attempt lies beyond it; a rejected one is followed by a smaller step.
    """
    a = np.asarray(call_times, dtype=float)
    a = a[np.r_[True, np.diff(a) != 0.0]]
    accepted = np.r_[a[:-1][np.diff(a) > 0.0], a[-1:]]
    return np.unique(accepted[accepted > a[0]])


def run_ode(model: WmrModel, terrain: Terrain, command: Callable[[float], tuple[float, float]], duration: float,
            method: str = "BDF", mu: float = 1.0, q0: NDArray | None = None, sample_dt: float = ODE_SAMPLE_DT,
            slips: bool = True, **settings) -> OdeRun:
    """The stiff ODE (eq. 2.53 with forces added directly) on the same scenario, actuator and contact model."""
    controller = BodyVelocityController(model)
    calls: list[float] = []

    def rates(t: float, q: NDArray) -> NDArray:
        calls.append(t)
        return controller(q, forward_kinematics(model, q), *command(t))

    kp, ki = p_gain(model)
    opts = {**ODE_SETTINGS, **settings}
    c0 = time.process_time()
    res = simulate_stiff_ode(model, terrain, pacejka_options(model, mu).contact, rates,
                             start_state(model, terrain) if q0 is None else q0, duration, kp=kp, ki=ki,
                             method=method, sample_dt=sample_dt, **opts)
    run = OdeRun(res, _accepted_steps(calls), time.process_time() - c0)
    if slips:
        run.slip_ratio, run.slip_angle = wheel_slips(model, terrain, res.q, res.qvel)
    return run


def wheel_slips(model: WmrModel, terrain: Terrain, Q: NDArray, QV: NDArray) -> tuple[NDArray, NDArray]:
    """Slip ratio and angle (n, nw) at states Q with joint-space velocities QV, exactly as the dynamic engine
    reports them (eqs. 2.40, 2.42): v_c = A_wheel q̇' in the contact frames of Q."""
    nw = model.num_wheels
    S, A = np.empty((len(Q), nw)), np.empty((len(Q), nw))
    cols = model.wheel_frame + 5
    for k, (q, qv) in enumerate(zip(Q, QV, strict=True)):
        T = forward_kinematics(model, q)
        contacts = wheel_contacts(model, T, terrain)
        vc = (wheel_jacobians(model, T, contacts) @ qv).reshape(nw, 3)
        Rw = model.wheel_radii * qv[cols]
        Vx = vc[:, 0] + Rw
        denom = np.maximum(np.abs(Rw), np.abs(Vx))
        S[k] = np.where(denom > 1e-9, (Rw - Vx) / np.where(denom > 1e-9, denom, 1.0), 0.0)
        A[k] = np.arctan2(vc[:, 1], np.abs(Vx))
    return S, A


def dae_slips(model: WmrModel, terrain: Terrain, res: SimResult) -> tuple[NDArray, NDArray]:
    """:func:`wheel_slips` at the DAE's states and velocities (row k: q(t_k), q̇'(t_k)), for comparison with the
    ODE samples.  (``SimResult.slip_ratio[k]`` is the same quantity at the velocity of the step's end,
    q̇'(t_{k+1}), in the contact frames of q(t_k).)"""
    return wheel_slips(model, terrain, res.q, res.qvel)


# ---- scenario phases and metrics -------------------------------------------------------------------------

def pitch(q: NDArray) -> NDArray:
    """Body pitch (rad, positive nose down) from the quaternions (xyzw) of the states q."""
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))


def phases(t: NDArray, q: NDArray) -> dict[str, NDArray]:
    """Boolean masks: climbing (pitch < −15°), descending (pitch > +15°), steady left and right turns (the
    last 3 s of each turn command)."""
    p = np.degrees(pitch(q))
    return {"climb": p < -15.0, "descent": p > 15.0, "left": (t >= 12.0) & (t < 15.0), "right": (t >= 17.0)}


def ramp_contact_interval(res: SimResult, terrain: Ramp) -> tuple[float, float]:
    """First time any wheel's contact point is on the incline, last time any is on the descent (s)."""
    x = res.contact_points[:, :, 0]
    on = ((x > terrain.x_start + 1e-3) & (x < terrain.s_end - 1e-3)).any(axis=1)
    return float(res.t[on][0]), float(res.t[on][-1])


def nonconverged(res: SimResult, model: WmrModel, tolerance: float = DynamicsOptions.tolerance) -> NDArray:
    """Indices of steps whose final force-balance residual ‖e‖ exceeds ``tolerance`` (a fraction of the weight;
    default the shipped stopping tolerance of the Newton loop, ``DynamicsOptions.tolerance``)."""
    return np.flatnonzero(res.cost[:-1] > tolerance * model.total_mass * G)
