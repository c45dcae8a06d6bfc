"""Model / Data and a stateful stepper: advance a simulation one or N steps at a time (real-time users, ROS).

:class:`~wmr_dynamics.model.WmrModel` is the immutable description of the vehicle (MuJoCo's ``mjModel``,
Pinocchio's ``Model``); :class:`SimData` holds everything a step changes (``mjData``): the state q, the
joint-space velocity q̇', time, the PI actuators' integrals, and the compiled engine's workspace, which
carries the kinematic contact set (thesis §2.2.2), the force balance's cached mass matrix and factor
(``constant_mass_matrix``, §2.4.4) and its scratch arrays.  :class:`~wmr_dynamics.dynamics.force_balance.
DynamicsOptions` and the contact and actuator models are immutable, so any number of steppers and
simulators may share one model and one set of options.

A :class:`Stepper` advances a :class:`SimData` with a command set from outside between calls — (v, ω)
through the vehicle's controller, or the actuated joints' rates directly — in kinematic, enhanced and
dynamic mode; the terrain may be replaced between calls (:meth:`Stepper.set_terrain`, no recompilation)
and a simulation reset to a pose (:meth:`Stepper.reset`).  Kinematic (Euler) and dynamic steps run on the
compiled engine, N steps per call (a custom controller callable is called in Python before each step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics import checks, spatial
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.errors import ArgumentError, CommandError, ModelError, StateError
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain

MODES = ("kinematic", "enhanced", "dynamic")


@dataclass
class SimData:
    """Everything a step changes; created by :meth:`Stepper.make_data`, advanced by :meth:`Stepper.advance`.

    Attributes:
        t: simulated time, s.  steps: steps taken since the last reset.
        q: (nq,) state [body quaternion (x, y, z, w); body position, m; joint displacements, rad or m].
        qvel: (ndof,) joint-space velocity q̇' = [ω_b; v_b (body frame); θ̇] of the last step (rad/s, m/s).
        integral: (na,) PI actuators' integrals of the rate error, rad (m) (dynamic mode).
        in_contact: (nw,) bool, the kinematic contact set carried from step to step.
        dz: (nw,) contact height errors at the last step's start, m.  contact_points: (nw, 3) world, m.
        contact_speed: (nw,) ‖v_c‖ of the last step, m/s.
        contact_force: (nw, 3) dynamic mode: model contact forces of the last step, N, contact frames.
        slip_ratio, slip_angle: (nw,) dynamic mode, of the last step (eqs. 2.40, 2.42; rad).
        iterations: force-balance iterations of the last call (summed over its steps).  cost: ‖e‖ of the
            last step's force balance, N.  converged: every step of the last call met its tolerance.
        residual: kinematic modes: ‖A q̇' − v‖ of the last step's solve (eq. 2.38), m/s.
        rollover_margin: enhanced mode: the last step's rollover margin, m (positive: stable; NaN otherwise).
        workspace: the compiled kernels' workspace.
    """

    t: float
    steps: int
    q: NDArray
    qvel: NDArray
    integral: NDArray
    in_contact: NDArray
    dz: NDArray
    contact_points: NDArray
    contact_speed: NDArray
    contact_force: NDArray
    slip_ratio: NDArray
    slip_angle: NDArray
    iterations: int = 0
    cost: float = 0.0
    converged: bool = True
    residual: float = 0.0
    rollover_margin: float = float("nan")
    workspace: Any = None
    _u: NDArray | None = None
    _stats: NDArray | None = None
    _slip: NDArray | None = None

    def pose(self) -> NDArray:
        """(6,) x, y, z (m), roll, pitch, yaw (rad) of the body."""
        return np.r_[self.q[4:7], spatial.quat_to_rpy(self.q[:4])]


def initial_state(model: WmrModel, terrain: Terrain, xyz: ArrayLike | None = None, yaw: float | None = None) -> NDArray:
    """A state on the terrain (§2.2.4) at the vehicle YAML's ``initial_pose`` or the given x, y (m), yaw (rad)."""
    from wmr_dynamics.kinematics import initialize_contact

    pose = model.config.get("initial_pose") or {}
    p = np.array(pose.get("xyz", (0.0, 0.0, 0.0)), dtype=float)
    rpy = np.array(pose.get("rpy", (0.0, 0.0, 0.0)), dtype=float)
    if xyz is not None:
        xyz = checks.as_float_array("initial position xyz", xyz, StateError).ravel()
        if not 2 <= xyz.size <= 3:
            raise StateError(f"initial position xyz: expected 2 or 3 numbers (x, y[, z] m), got {xyz.size} "
                             f"({xyz.tolist()})")
        p[:xyz.size] = checks.finite("initial position xyz", xyz, StateError)
    if yaw is not None:
        rpy[2] = checks.number("initial yaw", yaw, unit="rad", error=StateError)
    p[2] = max(p[2], float(terrain.height(p[0], p[1])) + float(model.wheel_radii.max()))
    q = model.state(xyz=p, rpy=(0.0, 0.0, rpy[2]))
    return initialize_contact(model, q, terrain)


class Stepper:
    """Advance simulations of one vehicle on one (replaceable) terrain, one or N steps per call.

    Args:
        model: the vehicle.  terrain: the ground.  mode: ``"kinematic"``, ``"enhanced"`` or ``"dynamic"``.
        dt: time step, s.
        dynamics: ``DynamicsOptions`` for dynamic mode (default: from the vehicle YAML); immutable, may be shared.
        controller: (v, ω) → actuated joint rates; default the vehicle's
            :class:`~wmr_dynamics.controllers.BodyVelocityController` (compiled).  A custom callable
            ``controller(q, T_world, v, omega)`` is called in Python before each step.
        slip: ``SlipParams`` for enhanced mode.  baumgarte: σ of eqs. 2.35–2.36, 1/s (default
            :func:`~wmr_dynamics.simulate.default_baumgarte`).
        integrator: ``"euler"`` or, for the kinematic modes, ``"rk4"``.

    Example::

        stepper = Stepper(model, terrain, mode="dynamic", dt=0.01)
        data = stepper.make_data()
        for _ in range(100):
            stepper.advance(data, command=(0.5, 0.1))  # v m/s, ω rad/s
        print(data.t, data.pose())
    """

    def __init__(self, model: WmrModel, terrain: Terrain, mode: str = "dynamic", dt: float = 0.01, *,
                 dynamics: object | None = None, controller: Callable | None = None, slip: object | None = None,
                 baumgarte: float | None = None, integrator: str = "euler") -> None:
        from wmr_dynamics.simulate import Simulator

        if mode not in MODES:
            raise ModelError(f"mode '{mode}' is not one of {', '.join(MODES)}")
        # Simulator validates the arguments and builds the engine (compiled where it can)
        self._attach(Simulator(model, terrain, mode, dt, integrator, controller, slip, baumgarte, dynamics))

    @classmethod
    def of(cls, sim: Any) -> Stepper:
        """A stepper on an existing :class:`~wmr_dynamics.simulate.Simulator`'s engine (shared, not copied)."""
        self = cls.__new__(cls)
        self._attach(sim)
        return self

    def _attach(self, sim: Any) -> None:
        self._sim = sim
        self.model, self.mode, self.dt, self.terrain = sim.model, sim.mode, sim.dt, sim.terrain
        self.controller = sim.controller
        self.custom_controller = not isinstance(self.controller, BodyVelocityController)
        self.engine = sim.compiled  # CompiledKinematics / CompiledDynamics
        self.options = getattr(self.engine, "options", None)
        if self.mode == "dynamic":
            from wmr_dynamics.compiled.rollout import dynamic_advance as kernel
        else:
            from wmr_dynamics.compiled.kinematics import kinematic_advance as kernel
        self._kernel = kernel
        self._entry = None  # the compiled entry point for the step's argument types (see _call)
        self._rate_limits = self.model.actuated_velocity_limits
        self._warned_rates = False

    # ---- data ------------------------------------------------------------------------------------------
    def initial_state(self, xyz: ArrayLike | None = None, yaw: float | None = None) -> NDArray:
        """A state on the current terrain, see :func:`initial_state`."""
        return initial_state(self.model, self.terrain, xyz, yaw)

    def make_data(self, q0: ArrayLike | None = None, qvel0: ArrayLike | None = None) -> SimData:
        """A fresh :class:`SimData` at ``q0`` (default :meth:`initial_state`) with velocity ``qvel0`` (default 0)."""
        m = self.model
        nw, na = m.num_wheels, len(m.actuated_joint_names)
        self.engine.warm_up()
        ws = self.engine.workspace()
        slip = np.zeros((2, nw))
        data = SimData(0.0, 0, np.zeros(m.num_states), np.zeros(m.num_dof), np.zeros(na), np.ones(nw, dtype=bool),
                       np.zeros(nw), np.zeros((nw, 3)), np.zeros(nw), np.zeros((nw, 3)), slip[0], slip[1],
                       workspace=ws, _u=np.zeros(max(na, 1)), _stats=np.zeros(4), _slip=slip)
        # the kernels' own arrays: nothing to copy after a step
        if self.mode == "dynamic":
            data.contact_force = ws.fc
        else:
            data.qvel, data.in_contact, data.dz, data.contact_points = ws.qvel, ws.in_contact, ws.dz, ws.points
        self.reset(data, q0, qvel0)
        return data

    def reset(self, data: SimData, q: ArrayLike | None = None, qvel: ArrayLike | None = None) -> SimData:
        """Back to time 0 at state ``q`` (default :meth:`initial_state`) with velocity ``qvel`` (default 0):
        integrals zeroed, contact set, contact angles (the collision search's warm start), cached mass matrix, the
        previous step's factor of ∂e/∂x (``DynamicsOptions.reuse_factor``) and external wrench dropped, every
        wheel sticking (coulomb contact)."""
        m = self.model
        q = self.initial_state() if q is None else checks.state("q", q, m.num_states)
        data.q[:] = q
        data.q[:4] /= np.linalg.norm(q[:4])
        data.qvel[:] = 0.0 if qvel is None else _vector("qvel", qvel, m.num_dof)
        data.integral[:] = 0.0
        data.in_contact[:] = True
        data.t, data.steps, data.iterations, data.converged = 0.0, 0, 0, True
        ws = data.workspace
        ws.angle[:] = np.nan  # no previous contact angle: the first step's collision search is the full one
        if self.mode == "dynamic":
            from wmr_dynamics.compiled.dynamics import C_FACTOR, C_MASS_READY, C_REUSE_MISSES, C_REUSE_SKIP, C_SLIDING

            ws.counts[C_MASS_READY] = 0
            ws.counts[C_FACTOR] = 0  # (the next step's first chord step would start from it: not a replay)
            ws.counts[C_REUSE_SKIP] = ws.counts[C_REUSE_MISSES] = 0  # (nor would the reuse's back-off)
            ws.counts[C_SLIDING] = 0  # coulomb contact: every wheel starts sticking
            ws.tau_ext[:] = 0.0  # no external wrench
        else:
            ws.row_weight[:] = 1.0
        return data

    def set_terrain(self, terrain: Terrain) -> None:
        """Replace the ground for the following steps (e.g. a new height grid from a map message); the engine
        is not recompiled (every terrain kind is one argument type)."""
        if not isinstance(terrain, Terrain):
            raise ArgumentError(f"set_terrain: expected a Terrain, got {type(terrain).__name__}")
        from wmr_dynamics.compiled.engine import terrain_data

        self.engine.td = terrain_data(terrain)
        self._sim.terrain = terrain
        self.terrain = terrain

    def set_slip(self, slip: object) -> None:
        """Replace the enhanced model's body slip parameters (``SlipParams``, eqs. 2.48–2.49) for the following
        steps, without recompiling (calibration evaluates many parameter sets on one stepper); kinematic and
        enhanced mode only.  Zero parameters give the plain kinematic model."""
        from wmr_dynamics.kinematics.enhanced import SlipParams

        if self.mode == "dynamic":
            raise ModelError("set_slip: body slip parameters belong to the kinematic modes, not dynamic mode")
        if not isinstance(slip, SlipParams):
            raise ModelError(f"set_slip: expected SlipParams, got {type(slip).__name__}")
        e = self.engine
        enhanced = not slip.is_zero
        e.kd = e.kd._replace(slip=slip.kernel_data(), enhanced=enhanced, margin=e.kd.margin or enhanced)
        e.kd_margin = e.kd._replace(margin=True)

    # ---- stepping --------------------------------------------------------------------------------------
    def set_external_wrench(self, data: SimData, wrench: ArrayLike | None) -> None:
        """Apply an external wrench to the body in the following steps (dynamic mode) until changed: ``wrench`` =
        [τ_x, τ_y, τ_z (N·m); f_x, f_y, f_z (N)] in the body frame, the force acting at the body frame's origin
        (a push, a tow rope, wind); ``None`` removes it (so does :meth:`reset`).  It is the generalized force τ
        of eq. 2.82 on the body's six coordinates of q̇' (the body-frame twist [ω_b; v_b]), so it is applied
        implicitly, as every force of the step."""
        if self.mode != "dynamic":
            raise ArgumentError(f"set_external_wrench: external forces need the dynamic model (mode is {self.mode!r})")
        w = np.zeros(6) if wrench is None else _vector("wrench", wrench, 6)
        data.workspace.tau_ext[:] = 0.0
        data.workspace.tau_ext[:6] = w

    def advance(self, data: SimData, n: int = 1, command: ArrayLike | None = None,
                rates: ArrayLike | None = None, clip: bool = True) -> SimData:
        """Advance ``data`` by ``n`` steps holding one command: ``command`` = (v m/s, ω rad/s) through the
        controller, or ``rates`` = the actuated joints' rates (rad/s or m/s, ``model.actuated_joint_names``
        order; clipped to the joints' URDF speed limits with one warning per stepper, unless ``clip=False``:
        measured rates, as odometry feeds them, are what they are).  Raises ModelError (``data`` then holds the
        state the failing step started from)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ArgumentError(f"advance: n must be a non-negative integer number of steps, got {n!r}")
        if (command is None) == (rates is None):
            raise CommandError("advance: give exactly one of command=(v, omega) or rates=[...]")
        if rates is not None:
            row = _vector("rates", rates, len(self.model.actuated_joint_names))
            lim = self._rate_limits
            if clip and np.any(np.abs(row) > lim):  # the joints' URDF speed limits (one warning per stepper)
                if not self._warned_rates:
                    import warnings

                    warnings.warn(f"{self.model.name}: joint rates {row.tolist()} beyond the URDF speed limits "
                                  f"{lim.tolist()}; clipped (this warning once per stepper)", stacklevel=2)
                    self._warned_rates = True
                row = np.clip(row, -lim, lim)
        else:
            row = _vector("command", command, 2)
        if rates is None and self.custom_controller:
            from wmr_dynamics.kinematics import forward_kinematics

            na = len(self.model.actuated_joint_names)
            for _ in range(int(n)):
                u = self.controller(data.q, forward_kinematics(self.model, data.q), row[0], row[1])
                self._advance_compiled(data, 1, _vector("controller output", u, na), True)
            return data
        return self._advance_compiled(data, int(n), row, rates is not None or self.custom_controller)

    def _call(self, args: tuple, data: SimData) -> tuple:
        """The kernel call.  numba's dispatcher works out the argument types on every call (~18 µs for these
        tuples of arrays); the arguments of a step are always of the same types, so after the first call the
        compiled entry point for them is called directly (~6 µs) — as long as the state arrays are still the
        float64, C-contiguous ones ``make_data`` created (else the dispatcher checks them, as always)."""
        if self._entry is not None and all(
                type(a) is np.ndarray and a.dtype == np.float64 and a.flags.c_contiguous
                for a in (data.q, data.qvel, data.integral)):
            return self._entry(*args)
        out = self._kernel(*args)
        if self._entry is None and hasattr(self._kernel, "overloads"):  # not under NUMBA_DISABLE_JIT=1
            import numba

            cres = self._kernel.overloads.get(tuple(numba.typeof(a) for a in args))
            self._entry = None if cres is None else cres.entry_point
        return out

    def _advance_compiled(self, data: SimData, n: int, row: NDArray, direct: bool) -> SimData:
        e = self.engine
        cd = e.cd_direct if direct else e.cd
        ws = data.workspace  # (its contact angles carry on from the last call: the collision search's warm start)
        if self.mode == "dynamic":
            args = (e.md, e.td, e.fd, cd, ws, data.q, data.qvel, row, n, self.dt, data.integral, data._u, data.dz,
                    data.contact_points, data._slip, data._stats)
            try:
                st, k = self._call(args, data)
            except Exception:  # raised by a Python model called back from the step: count the steps done
                done = int(data._stats[3])
                data.steps += done
                data.t += done * self.dt
                raise
            vc = ws.vc
            np.sqrt(np.einsum("ij,ij->i", vc, vc), out=data.contact_speed)
            it, cost, conv, _ = data._stats
            data.iterations, data.cost, data.converged = int(it), float(cost), bool(conv)
        else:
            st, k = self._call((e.md, e.td, cd, e.kd, ws, data.q, row, n, self.dt, data.contact_speed,
                                data._stats[:2]), data)
            data.residual, data.rollover_margin = float(data._stats[0]), float(data._stats[1])
        done = n if st == 0 else k
        data.steps += done
        data.t += done * self.dt
        e.raise_status(st, data.steps, self.dt)
        return data


def _vector(name: str, x: ArrayLike, n: int) -> NDArray:
    error = StateError if name in ("q", "qvel") else CommandError
    return checks.vector(name, x, n, error=error)
