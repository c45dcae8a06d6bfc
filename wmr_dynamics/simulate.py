"""Simulator: whole runs of the kinematic, enhanced-kinematic and dynamic models over a terrain (Fig. 2.6).

Kinematic step: forward kinematics (Alg. 1) → collision (§2.2.1) → wheel Jacobians (Alg. 2) → controller →
stabilized DAE solve (eqs. 2.33–2.38; with body slip, eqs. 2.44–2.52, in ``enhanced`` mode; URDF joint
limits as hard stops) → integration (Euler, eq. 2.39, or classical Runge–Kutta 4).  Dynamic step: force-
balance optimization and symplectic Euler (§2.4, :mod:`wmr_dynamics.compiled.dynamics`).  For stepping a
simulation call by call (real time, ROS) see :mod:`wmr_dynamics.stepper`.
"""

from __future__ import annotations

import csv
import io
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics import checks, spatial
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.errors import (
    ArgumentError,
    CommandError,
    DivergenceError,
    ModelError,
    SimulationError,
    StateError,
    WmrError,
    WorkLimitError,
)
from wmr_dynamics.kinematics.enhanced import SlipParams
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain

MODES = ("kinematic", "enhanced", "dynamic")
ENGINES = ("auto", "compiled", "python")
INTEGRATORS = ("euler", "rk4")
CONTACT_TOLERANCE = 0.01  # m: a wheel counts as "in contact" when Δz <= 1 cm
_UNSET = object()  # a lazily computed attribute not computed yet

Command = tuple[float, float] | Callable[[float], tuple[float, float]]


@dataclass
class SimResult:
    """Arrays of one run; row k is time ``t[k]`` (the last row is the final state).

    Attributes:
        t: (n+1,) s.  q: (n+1, nq) states.  qvel: (n+1, ndof) joint-space velocity used from t[k]
            (the last row repeats the previous one).  dz: (n+1, nw) contact height errors, m.
        contact_points: (n+1, nw, 3) world, m.  contact_speed: (n+1, nw) ‖v_c‖, m/s.
        residual: (n+1,) ‖A q̇' − v‖ of the least-squares solve, m/s.
        rollover_margin: (n+1,) m, positive = the cg force line meets the ground inside the support polygon.
        wall_time_s: wall time of the stepping loop only.
    """

    model_name: str
    mode: str
    dt: float
    t: NDArray
    q: NDArray
    qvel: NDArray
    dz: NDArray
    contact_points: NDArray
    contact_speed: NDArray
    residual: NDArray
    rollover_margin: NDArray
    wall_time_s: float
    wheel_names: list[str] = field(default_factory=list)
    # dynamic mode only (None otherwise): model contact forces (n+1, nw, 3) N in contact frames, slip ratio
    # and angle (n+1, nw), force-balance iterations and final ‖e‖ (n+1,).  Forces and slips of row k are
    # those of step k, i.e. at the velocity q̇'[k+1] the step ends with (eq. 2.83), while qvel[k] is its start.
    contact_force: NDArray | None = None
    slip_ratio: NDArray | None = None
    slip_angle: NDArray | None = None
    iterations: NDArray | None = None
    cost: NDArray | None = None
    converged: NDArray | None = None  # (n+1,) bool: the force balance met its tolerance (after any sub-steps)
    # the deepest point of the non-wheel collision geometry below the terrain (wmr_dynamics.body_collision;
    # None: the URDF has none, or the result did not come from Simulator.run)
    body_penetration: object | None = None

    @property
    def rolled_over(self) -> bool:
        """True if the body ever turned more than 90° away from upright (its z axis pointing down)."""
        x, y = self.q[:, 0], self.q[:, 1]
        return bool(np.any(1.0 - 2.0 * (x * x + y * y) < 0.0))  # R[2, 2] of the body quaternion

    @property
    def steps(self) -> int:
        return len(self.t) - 1

    def rpy(self) -> NDArray:
        """(n+1, 3) body roll, pitch, yaw, rad."""
        return np.array([spatial.quat_to_rpy(qq[:4]) for qq in self.q])

    def summary(self) -> dict:
        """The run's key figures (the JSON line of ``wmr-sim --json``)."""
        xyz = self.q[:, 4:7]
        steps = slice(0, self.steps)  # per-step quantities (the final row repeats the last step)
        rpy = spatial.quat_to_rpy(self.q[-1, :4])
        sim_time = float(self.t[-1] - self.t[0])
        return {
            "vehicle": self.model_name, "mode": self.mode, "dt_s": self.dt,
            "distance_m": float(np.linalg.norm(np.diff(xyz, axis=0), axis=1).sum()),
            "final_pose": [float(v) for v in (*xyz[-1], *rpy)],
            "mean_contact_speed_mps": float(self.contact_speed[steps].mean()) if self.steps else 0.0,
            "max_abs_dz_m": float(np.abs(self.dz).max()),
            "contact_fraction": float((self.dz[steps] <= CONTACT_TOLERANCE).mean()) if self.steps else 1.0,
            "min_rollover_margin_m": (float(np.nanmin(self.rollover_margin))
                                      if np.any(np.isfinite(self.rollover_margin)) else None),
            "steps": self.steps, "sim_time_s": sim_time, "wall_time_s": self.wall_time_s,
            "real_time_factor": sim_time / self.wall_time_s if self.wall_time_s > 0 else float("inf"),
            "rolled_over": self.rolled_over,
            "tip_over_predicted": bool(np.nanmin(self.rollover_margin) < 0.0)
            if np.any(np.isfinite(self.rollover_margin)) else False,
            "max_body_penetration_m": None if self.body_penetration is None else self.body_penetration.depth,
            "body_penetration_link": None if self.body_penetration is None else self.body_penetration.link,
            "body_penetration_t_s": None if self.body_penetration is None else self.body_penetration.t,
        } | (self._dynamic_summary() if self.contact_force is not None else {})

    def _dynamic_summary(self) -> dict:
        k = slice(0, max(self.steps, 1))
        fz = self.contact_force[k, :, 2]
        return {
            "normal_force_min_N": fz.min(0).tolist(), "normal_force_max_N": fz.max(0).tolist(),
            "slip_ratio": {"mean": float(self.slip_ratio[k].mean()), "min": float(self.slip_ratio[k].min()),
                           "max": float(self.slip_ratio[k].max())},
            "slip_angle_rad": {"mean": float(self.slip_angle[k].mean()), "min": float(self.slip_angle[k].min()),
                               "max": float(self.slip_angle[k].max())},
            "mean_iterations": float(self.iterations[k].mean()),
            "unconverged_steps": int((~self.converged[k]).sum()),
            "first_unconverged_s": (float(self.t[np.flatnonzero(~self.converged[k])[0]])
                                    if (~self.converged[k]).any() else None),
        }

    def to_csv(self, path: str | Path) -> Path:
        """Write t, pose (x, y, z, roll, pitch, yaw), joint angles, Δz and ‖v_c‖ per wheel, one row per step
        (atomically: an interrupted write leaves no torn file)."""
        from wmr_dynamics.io.output import atomic_write_text

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        nj = self.q.shape[1] - 7
        rpy = self.rpy()
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["t_s", "x_m", "y_m", "z_m", "roll_rad", "pitch_rad", "yaw_rad"]
                   + [f"theta_{k}" for k in range(nj)]
                   + [f"dz_{n}_m" for n in self.wheel_names] + [f"vc_{n}_mps" for n in self.wheel_names])
        for k in range(len(self.t)):
            w.writerow([f"{v:.6g}" for v in (self.t[k], *self.q[k, 4:7], *rpy[k], *self.q[k, 7:],
                                              *self.dz[k], *self.contact_speed[k])])
        return atomic_write_text(path, buf.getvalue())


@dataclass
class StepInfo:
    """Diagnostics of one step: the velocity solve and the rollover margin at the step's start."""

    qvel: NDArray
    dz: NDArray
    contact_points: NDArray
    contact_speed: NDArray
    residual: float
    rollover_margin: float


#: σ (1/s) of eqs. 2.35–2.36 at most, by default, for a vehicle with tracks (docs/tracks.md, "Kinematic mode on
#: rough ground"): a rigid track's many contacts cannot all keep Δz = 0, and stiff normal rows then override
#: the no-slip rows (Talon on rocky_rough_0 at Δt 0.01 s: 170° of spurious yaw with σ = 100/s, 8° with 10/s)
TRACK_BAUMGARTE = 10.0


def default_baumgarte(model: WmrModel, dt: float) -> float:
    """The kinematic models' default Baumgarte gain σ (1/s): 1/dt, capped at ``TRACK_BAUMGARTE`` for a model
    with tracks."""
    return min(1.0 / dt, TRACK_BAUMGARTE) if model.track_names else 1.0 / dt


class Simulator:
    """Kinematic / enhanced-kinematic simulator of one vehicle on one terrain.

    Args:
        model: the WMR model.  terrain: the ground.
        mode: ``"kinematic"`` (stabilized DAE, §2.2.5) or ``"enhanced"`` (with body slip, §2.3).
        dt: time step, s.  integrator: ``"euler"`` (eq. 2.39) or ``"rk4"``.
        controller: maps (q, T_world, v, ω) → actuated joint rates; default
            :class:`~wmr_dynamics.controllers.BodyVelocityController` of the vehicle's YAML type.
        slip: body slip parameters for ``enhanced`` mode.
        baumgarte: σ of eqs. 2.35–2.36, 1/s; default :func:`default_baumgarte` (1/dt, its upper bound; at most
            10/s for a tracked vehicle).
        dynamics: ``DynamicsOptions`` for ``dynamic`` mode (default: from the vehicle YAML); immutable, may
            be shared by any number of simulators.
        engine: where the step loop runs.  Every mode runs on one engine (``wmr_dynamics.compiled``): ``"auto"``
            (default) and ``"compiled"`` run the whole simulation in one compiled call; ``"python"``, and any
            run with a custom controller callable, loop over single compiled steps in Python (a Python contact
            or actuator model is called back from the compiled step).  Built-in terrains are evaluated exactly
            (Box and Composite included); a terrain with no exact compiled form (a user's ``Terrain``
            subclass) is rasterized at 2 cm (``compiled.terrain.compile_terrain``).  A kinematic ``run``
            computes the rollover margin at every step (≈ 20 % of a step; a planner that needs the states alone
            calls ``Simulator.compiled.rollout(..., record=False)``).  ``engine_used`` says which runs.
    """

    def __init__(self, model: WmrModel, terrain: Terrain, mode: str = "kinematic", dt: float = 0.04,
                 integrator: str = "euler", controller: Callable | None = None, slip: SlipParams | None = None,
                 baumgarte: float | None = None, dynamics: object | None = None, engine: str = "auto") -> None:
        if mode not in MODES:
            raise ModelError(f"mode '{mode}' is not one of {', '.join(MODES)}")
        if integrator not in INTEGRATORS:
            raise ModelError(f"integrator '{integrator}' is not one of {', '.join(INTEGRATORS)}")
        if not isinstance(model, WmrModel):
            raise ArgumentError(f"model: expected a WmrModel (wmr_dynamics.load_model(...)), got "
                                f"{type(model).__name__}")
        if not isinstance(terrain, Terrain):
            raise ArgumentError(f"terrain: expected a Terrain (wmr_dynamics.terrain.load_terrain(...)), got "
                                f"{type(terrain).__name__}")
        dt = checks.number("dt", dt, positive=True, unit="seconds")
        self.model, self.terrain, self.mode, self.dt, self.integrator = model, terrain, mode, float(dt), integrator
        self.controller = controller or BodyVelocityController(model)
        self.slip = slip or SlipParams()
        self.sigma = default_baumgarte(model, self.dt) if baumgarte is None else float(baumgarte)
        if not 0 < self.sigma <= 1.0 / self.dt + 1e-12:
            raise ModelError(f"baumgarte gain must satisfy 0 < sigma <= 1/dt = {1 / self.dt:g}, got {self.sigma}")
        if mode == "dynamic" and integrator != "euler":
            raise ModelError("the dynamic mode integrates with symplectic Euler (eqs. 2.85–2.86); "
                             f"integrator '{integrator}' is for the kinematic modes")
        if engine not in ENGINES:
            raise ModelError(f"engine '{engine}' is not one of {', '.join(ENGINES)}")
        self.engine = engine
        self.custom_controller = not isinstance(self.controller, BodyVelocityController)
        if self.custom_controller and engine == "compiled":
            raise ModelError("engine 'compiled' cannot run this simulation: a custom controller callable is "
                             "called between steps (engine 'auto' or 'python' runs it step by step)")
        self.engine_used = "python" if self.custom_controller or engine == "python" else "compiled"
        self._scratch_ws = None
        self._body_points: object = _UNSET
        if mode != "dynamic":
            from wmr_dynamics.compiled.engine import CompiledKinematics

            self.compiled = CompiledKinematics(model, terrain, None if self.custom_controller else self.controller,
                                               self.sigma, slip=self.slip if mode == "enhanced" else None,
                                               integrator=integrator, margin=mode == "enhanced")
        else:
            from wmr_dynamics.compiled.engine import CompiledDynamics
            from wmr_dynamics.dynamics.force_balance import DynamicsOptions

            opts = dynamics if dynamics is not None else DynamicsOptions.from_config(model)
            if not isinstance(opts, DynamicsOptions):
                raise ModelError(f"dynamics must be a DynamicsOptions, got {type(opts).__name__}")
            self.compiled = CompiledDynamics(model, terrain, opts, None if self.custom_controller else self.controller)

    def initial_state(self, xyz: ArrayLike | None = None, yaw: float | None = None) -> NDArray:
        """A state on the terrain (§2.2.4) at the YAML's ``initial_pose`` or the given x, y (m) and yaw (rad)."""
        from wmr_dynamics.stepper import initial_state

        return initial_state(self.model, self.terrain, xyz, yaw)

    def velocity(self, q: NDArray, v: float, omega: float, in_contact: NDArray | None = None,
                 qvel_prev: NDArray | None = None, rates: NDArray | None = None,
                 contact_angle: NDArray | None = None) -> StepInfo:
        """Joint-space velocity at state q for the command (v m/s, ω rad/s): one DAE solve (eq. 2.38; enhanced
        mode: with the body slip of eqs. 2.44–2.52), on the compiled engine; kinematic modes only.

        ``rates``: the actuated joints' rates, instead of the controller's for (v, ω).
        ``in_contact``: the contact set (nw,) bool carried from the previous step, advanced in place (only
        wheels in contact keep their rows, :mod:`~wmr_dynamics.kinematics.contact_set`), with the previous
        step's q̇' ``qvel_prev`` to predict touchdowns; default: every wheel counts as having been in contact.
        ``contact_angle``: the wheels' contact angles (nw,) rad (hub frame) of the previous step, carried like
        ``in_contact`` and updated in place — the collision search starts there (its warm start, as a run's
        steps do); default: the full search, so that the result depends on q alone.
        """
        from wmr_dynamics.compiled.kinematics import kinematic_solve

        c, ws, q = self._scratch(q, in_contact, qvel_prev, contact_angle)
        cd, row = self._command_row(q, v, omega, rates)
        vc = np.zeros(self.model.num_wheels)
        st, residual = kinematic_solve(c.md, c.td, cd, c.kd_margin, ws, q, row, vc)
        if st != 0:
            raise (DivergenceError if st == 3 else SimulationError)(f"{self.model.name}: {_kin_status(st)}")
        self._carry(ws, in_contact, contact_angle)
        return StepInfo(ws.qvel.copy(), ws.dz.copy(), ws.points.copy(), vc, float(residual), float(ws.body[2, 4]))

    def step(self, q: NDArray, v: float, omega: float, in_contact: NDArray | None = None,
             qvel_prev: NDArray | None = None, rates: NDArray | None = None,
             contact_angle: NDArray | None = None) -> tuple[NDArray, StepInfo]:
        """Advance one time step with the command held constant (Euler, eq. 2.39, or RK4); returns (q_next,
        info at q).  Kinematic modes; arguments as :meth:`velocity` (RK4's inner stages start from the set of
        the step's start and do not advance it)."""
        from wmr_dynamics.compiled.kinematics import kinematic_advance

        c, ws, q_next = self._scratch(q, in_contact, qvel_prev, contact_angle)
        cd, row = self._command_row(q_next, v, omega, rates)
        vc, diag = np.zeros(self.model.num_wheels), np.zeros(2)
        st, _ = kinematic_advance(c.md, c.td, cd, c.kd_margin, ws, q_next, row, 1, self.dt, vc, diag)
        if st != 0:
            raise (DivergenceError if st == 3 else SimulationError)(f"{self.model.name}: {_kin_status(st)}")
        self._carry(ws, in_contact, contact_angle)
        return q_next, StepInfo(ws.qvel.copy(), ws.dz.copy(), ws.points.copy(), vc, float(diag[0]), float(diag[1]))

    def _scratch(self, q: NDArray, in_contact: NDArray | None, qvel_prev: NDArray | None,
                 contact_angle: NDArray | None = None) -> tuple:
        """(engine, a workspace holding the given contact set, contact angles and previous q̇', q as a fresh float
        array)."""
        if self.mode == "dynamic":
            raise ModelError("velocity() and step() are the kinematic modes' solves; the dynamic mode steps with "
                             "run() or wmr_dynamics.stepper.Stepper")
        c = self.compiled
        c.warm_up()
        if self._scratch_ws is None:
            self._scratch_ws = c.workspace()
        ws = self._scratch_ws
        ws.in_contact[:] = True if in_contact is None else in_contact
        nw = self.model.num_wheels
        if contact_angle is None:
            ws.angle[:] = np.nan  # a state unrelated to the last call's: the full collision search
        elif not (isinstance(contact_angle, np.ndarray) and contact_angle.shape == (nw,)
                  and contact_angle.dtype == np.float64):
            raise ArgumentError(f"contact_angle: a float64 array of shape ({nw},) (one angle per wheel, rad), "
                                f"updated in place; got {type(contact_angle).__name__} "
                                f"{getattr(contact_angle, 'shape', '')}")
        else:
            ws.angle[:] = contact_angle  # (NaN entries: the full search for that wheel)
        ws.qvel[:] = 0.0 if qvel_prev is None else qvel_prev
        q = checks.state("q", q, self.model.num_states)
        return c, ws, q

    @staticmethod
    def _carry(ws, in_contact: NDArray | None, contact_angle: NDArray | None) -> None:  # noqa: ANN001
        """The carried state back to the caller's arrays: the contact set and the contact angles."""
        if in_contact is not None:
            in_contact[:] = ws.in_contact
        if contact_angle is not None:
            contact_angle[:] = ws.angle

    def _command_row(self, q: NDArray, v: float, omega: float, rates: NDArray | None) -> tuple:
        """(controller data, command row) for the kernels: (v, ω) through the compiled controller, or joint rates
        (given, or from a custom controller callable called here)."""
        c = self.compiled
        if rates is None and self.custom_controller:
            from wmr_dynamics.kinematics import forward_kinematics

            rates = self.controller(q, forward_kinematics(self.model, q), v, omega)
        if rates is None:
            return c.cd, np.array([v, omega], dtype=float)
        na = len(self.model.actuated_joint_names)
        r = checks.vector("joint rates", rates, na, f"rates ({', '.join(self.model.actuated_joint_names)})",
                          CommandError)
        return c.cd_direct, r

    def run(self, duration: float, command: Command, q0: NDArray | None = None, progress: bool | None = None,
            qvel0: NDArray | None = None, limit_speeds: bool = True) -> SimResult:
        """Simulate ``duration`` seconds from ``q0`` (default :meth:`initial_state`).

        Args:
            command: (v, ω) held constant, or a function t → (v, ω) (m/s, rad/s).
            progress: print a progress bar on stderr; default: only when the run takes more than ~2 s.  The
                compiled engine runs the whole simulation in one call: instead of a bar it prints one line
                with its time estimate before and the time taken after (default: estimates above ~2 s).
            qvel0: dynamic mode: initial joint-space velocity [ω_b; v_b; θ̇] (default zero).
            limit_speeds: scale each (v, ω) so that no actuated wheel turns faster than its URDF speed limit
                (:func:`wmr_dynamics.limits.limit_command` at the start state; the path's curvature is kept),
                with one warning per run; with the vehicle's own controller only.  On by default (False lets
                a command beyond the limits through, to the divergence checks).  Steering joints are held to
                their limits by the controller itself (``BodyVelocityController.max_steer_rate``).

        Raises:
            DivergenceError: the run went non-finite or absurd (see :func:`check_divergence`); the run is the
                error's ``result``.
        """
        duration = checks.number("duration", duration, positive=True, unit="seconds")
        if callable(command):
            cmd = command
        else:
            cmd = _Constant(tuple(checks.vector("command", command, 2, "numbers (v m/s, omega rad/s)",
                                                CommandError)))
        _check_result_size(self.model, duration, self.dt)
        q = self.initial_state() if q0 is None else checks.state("q0", q0, self.model.num_states)
        if qvel0 is not None:
            qvel0 = checks.vector("qvel0", qvel0, self.model.num_dof,
                                  "joint-space velocities [omega_b; v_b; joint rates]", StateError)
        limited = None
        if limit_speeds and not self.custom_controller:
            cmd = limited = _SpeedLimited(self.model, self.controller, q, cmd)
        peak = np.zeros(2)  # the largest |v| and |omega| commanded, for the divergence check
        constant = cmd.constant if isinstance(cmd, (_Constant, _SpeedLimited)) else None
        if constant is not None:  # one evaluation, not one per step
            tracked: Callable = _Constant((float(constant[0]), float(constant[1])))
            peak[:] = np.abs(constant)
        else:
            def tracked(tk: float, cmd: Callable = cmd) -> tuple[float, float]:
                out = cmd(tk)
                try:
                    np.maximum(peak, np.abs(np.asarray(out, dtype=float)), out=peak)
                except (TypeError, ValueError):
                    pass  # a malformed command: _checked_command names it
                return out

        result = self._run(duration, tracked, q, progress, qvel0)
        if limited is not None and limited.scale < 1.0:
            warnings.warn(f"{self.model.name}: {limited.count} command(s) needed wheel rates beyond the URDF joint "
                          f"speed limits ({', '.join(f'{x:g}' for x in self.model.actuated_velocity_limits)} rad/s); "
                          f"scaled down (by up to a factor {limited.scale:.3g})", stacklevel=2)
        check_divergence(self.model, result, float(peak[0]), float(peak[1]))
        from wmr_dynamics.body_collision import body_penetration, body_points

        if self._body_points is _UNSET:  # the URDF's non-wheel geometry, read once per simulator
            self._body_points = body_points(self.model)
        result.body_penetration = None if self._body_points is None else body_penetration(
            self.model, self.terrain, result.t, result.q, self._body_points)
        return result

    def _run(self, duration: float, cmd: Callable, q: NDArray, progress: bool | None,
             qvel0: NDArray | None) -> SimResult:
        """The run of :meth:`run`, its arguments checked."""
        if self.mode == "dynamic":
            return self._run_dynamic(duration, cmd, q, progress, qvel0)
        n = int(round(duration / self.dt))
        nw, m = self.model.num_wheels, self.model
        t = np.arange(n + 1) * self.dt
        if self.engine_used == "compiled":
            cmds = _command_rows(cmd, t)
            self.compiled.warm_up()
            (Q, QV, DZ, CP, VC, RES, ROLL), wall = _one_call(
                n, _KINEMATIC_STEP_S, progress, lambda: self.compiled.rollout(q, cmds, self.dt, margin=True))
            return SimResult(m.name, self.mode, self.dt, t, Q, QV, DZ, CP, VC, RES, ROLL, wall, list(m.wheel_names))
        Q = np.empty((n + 1, m.num_states))
        QV = np.empty((n + 1, m.num_dof))
        DZ = np.empty((n + 1, nw))
        CP = np.empty((n + 1, nw, 3))
        VC = np.empty((n + 1, nw))
        RES = np.empty(n + 1)
        ROLL = np.empty(n + 1)
        in_contact, qvel_prev = np.ones(nw, dtype=bool), np.zeros(m.num_dof)  # the contact set, carried ...
        angle = np.full(nw, np.nan)  # ... and the contact angles (the collision search's warm start)
        start = time.perf_counter()
        bar = _Progress(n, progress)
        for k in range(n + 1):
            v, omega = _checked_command(cmd, t[k])
            Q[k] = q
            try:
                if k < n:
                    q, info = self.step(q, v, omega, in_contact, qvel_prev, contact_angle=angle)
                else:
                    info = self.velocity(q, v, omega, in_contact, qvel_prev, contact_angle=angle)
            except WmrError as e:  # name the step and its time, as the compiled path does
                raise type(e)(f"{e} (step {k}, t = {t[k]:g} s)") from None
            qvel_prev = info.qvel
            QV[k], DZ[k], CP[k], VC[k], RES[k], ROLL[k] = (info.qvel, info.dz, info.contact_points,
                                                           info.contact_speed, info.residual, info.rollover_margin)
            bar.update(k, time.perf_counter() - start)
        wall = time.perf_counter() - start
        bar.close()
        if n:
            QV[n], VC[n] = QV[n - 1], VC[n - 1]
        return SimResult(m.name, self.mode, self.dt, t, Q, QV, DZ, CP, VC, RES, ROLL, wall, list(m.wheel_names))


    def _run_dynamic(self, duration: float, cmd: Callable, q: NDArray, progress: bool | None,
                     qvel0: NDArray | None = None) -> SimResult:
        """Dynamic simulation (§2.4): force balance + symplectic Euler; q̇'(0) = 0 unless given.  One compiled
        call, or (custom controller, ``engine="python"``) a Python loop of single compiled steps."""
        from wmr_dynamics.stepper import Stepper

        m = self.model
        n = int(round(duration / self.dt))
        nw = m.num_wheels
        t = np.arange(n + 1) * self.dt
        if self.engine_used == "compiled":
            return self._run_compiled(t, cmd, q, qvel0, progress)
        Q, QV = np.empty((n + 1, m.num_states)), np.empty((n + 1, m.num_dof))
        DZ, CP, VC = np.empty((n + 1, nw)), np.empty((n + 1, nw, 3)), np.empty((n + 1, nw))
        F, SR, SA = np.empty((n + 1, nw, 3)), np.empty((n + 1, nw)), np.empty((n + 1, nw))
        IT, COST = np.zeros(n + 1), np.zeros(n + 1)
        CONV = np.ones(n + 1, dtype=bool)
        stepper = Stepper.of(self)
        data = stepper.make_data(q, qvel0)
        start = time.perf_counter()
        bar = _Progress(n, progress)
        for k in range(n + 1):
            v, omega = _checked_command(cmd, t[k])
            Q[k], QV[k] = data.q, data.qvel
            # (the last row's step only for its diagnostics, its state not recorded — as the compiled rollout's, on
            # the same workspace: the previous step's factor of ∂e/∂x, the contact angles)
            stepper.advance(data, 1, command=(v, omega))
            DZ[k], CP[k], VC[k], F[k] = data.dz, data.contact_points, data.contact_speed, data.contact_force
            SR[k], SA[k], IT[k], COST[k] = data.slip_ratio, data.slip_angle, data.iterations, data.cost
            CONV[k] = data.converged
            bar.update(k, time.perf_counter() - start)
        wall = time.perf_counter() - start
        bar.close()
        return SimResult(m.name, self.mode, self.dt, t, Q, QV, DZ, CP, VC, np.zeros(n + 1), np.full(n + 1, np.nan),
                         wall, list(m.wheel_names), F, SR, SA, IT, COST, CONV)

    def _run_compiled(self, t: NDArray, cmd: Callable, q: NDArray, qvel0: NDArray | None,
                      progress: bool | None = None) -> SimResult:
        """Dynamic mode on the compiled path: the whole run is one call (``wmr_dynamics.compiled``)."""
        m = self.model
        cmds = _command_rows(cmd, t)
        qvel = np.zeros(m.num_dof) if qvel0 is None else qvel0
        self.compiled.warm_up()  # one-off compilation / cache load stays out of the timed loop
        r, wall = _one_call(len(t) - 1, _DYNAMIC_STEP_S * m.num_wheels / 4, progress,
                            lambda: self.compiled.rollout(q, qvel, cmds, self.dt))
        return SimResult(m.name, self.mode, self.dt, t, r.q, r.qvel, r.dz, r.contact_points, r.contact_speed,
                         np.zeros(len(t)), np.full(len(t), np.nan), wall, list(m.wheel_names), r.contact_force,
                         r.slip_ratio, r.slip_angle, r.iterations, r.cost, r.converged)

    def rollout_batch(self, commands: ArrayLike, q0: ArrayLike | None = None, qvel0: ArrayLike | None = None,
                      contact_params: ArrayLike | None = None) -> BatchResult:
        """N dynamic rollouts in one compiled call, in parallel over the cores (for planners, Monte-Carlo).

        Args:
            commands: (N, n+1, 2) rows (v m/s, ω rad/s) at t = k·dt, k = 0..n (the last row only sets the
                final row's diagnostics, as in :meth:`run`).
            q0: (nq,) or (N, nq) initial states; default :meth:`initial_state`.
            qvel0: (ndof,) or (N, ndof) initial joint-space velocities; default zero.
            contact_params: optional (N, k, p) contact parameters per trajectory (rows as the contact
                model's ``kernel_data()[0]``), e.g. friction samples for Monte-Carlo.
        """
        if self.compiled is None or self.mode != "dynamic":
            raise ModelError("rollout_batch needs mode='dynamic' on the compiled engine "
                             f"(mode={self.mode!r}, engine used: {self.engine_used})")
        m = self.model
        q0 = self.initial_state() if q0 is None else q0
        qvel0 = np.zeros(m.num_dof) if qvel0 is None else qvel0
        self.compiled.warm_up(batch=True)
        start = time.perf_counter()
        Q, stats, status = self.compiled.rollout_batch(q0, qvel0, commands, self.dt, contact_params)
        wall = time.perf_counter() - start
        _flag_diverged(m, Q, np.asarray(commands, dtype=float), self.dt, status)
        return BatchResult(self.dt, np.arange(Q.shape[1]) * self.dt, Q, stats, status, wall)


#: ``BatchResult.status`` code of a trajectory that ran to its end but diverged (its body faster than the command
#: and the wheels allow, see :func:`allowed_body_speed`); the row is the first step too fast
STATUS_DIVERGED = 100


def _wheel_reach(model: WmrModel) -> float:
    """Largest horizontal distance (m) of a wheel centre from the body origin in the neutral state."""
    from wmr_dynamics.kinematics import forward_kinematics

    T = forward_kinematics(model, model.neutral_state())
    return float(np.max(np.linalg.norm(T[model.wheel_frame, :2, 3] - T[0, :2, 3], axis=1)))


def _flag_diverged(model: WmrModel, Q: NDArray, cmds: NDArray, dt: float, status: NDArray) -> None:
    """Mark (status :data:`STATUS_DIVERGED`, first row too fast) the trajectories of a batch that finished but
    whose body moved faster than :func:`allowed_body_speed` allows for their commands."""
    if Q.shape[1] < 2 or cmds.shape[-1] != 2:
        return
    reach = _wheel_reach(model)
    speed = np.linalg.norm(np.diff(Q[:, :, 4:7], axis=1), axis=2) / dt  # (N, n)
    peak = np.abs(cmds).max(axis=1)  # (N, 2)
    for i in np.flatnonzero(status[:, 0] == 0):
        limit, _ = allowed_body_speed(model, float(peak[i, 0]), float(peak[i, 1]), reach)
        fast = np.flatnonzero(~(speed[i] <= limit))
        if fast.size:
            status[i] = (STATUS_DIVERGED, int(fast[0]))


@dataclass
class BatchResult:
    """N rollouts of :meth:`Simulator.rollout_batch`.

    Attributes:
        t: (n+1,) s.  q: (N, n+1, nq) states (NaN after a failed step).  stats: (N, 8) per trajectory,
            columns ``wmr_dynamics.compiled.engine.BATCH_STATS`` (also as :meth:`stat`).  status: (N, 2)
            status code (0 = ok, :data:`STATUS_DIVERGED` = ran on but diverged, others: the step failed) and
            the failing row.  wall_time_s: wall time of the compiled call.
    """

    dt: float
    t: NDArray
    q: NDArray
    stats: NDArray
    status: NDArray
    wall_time_s: float

    def stat(self, name: str) -> NDArray:
        """(N,) one column of ``stats`` by name, e.g. ``"rolled_over"``, ``"min_normal_force_N"``."""
        from wmr_dynamics.compiled.engine import BATCH_STATS

        if name not in BATCH_STATS:
            raise KeyError(f"unknown statistic '{name}'; one of {', '.join(BATCH_STATS)}")
        return self.stats[:, BATCH_STATS.index(name)]

    def final_pose(self) -> NDArray:
        """(N, 6) final x, y, z (m), roll, pitch, yaw (rad) of each trajectory."""
        qf = self.q[:, -1]
        return np.array([[*qq[4:7], *spatial.quat_to_rpy(qq[:4])] for qq in qf])

    @property
    def real_time_factor(self) -> float:
        """Simulated time of all trajectories / wall time."""
        return self.q.shape[0] * float(self.t[-1]) / self.wall_time_s if self.wall_time_s > 0 else float("inf")


#: the largest result a run may allocate (bytes); longer runs are refused up front
MAX_RESULT_BYTES = 4 * 2**30


def _check_result_size(model: WmrModel, duration: float, dt: float) -> None:
    """Refuse a run whose per-step result arrays (SimResult's, dynamic mode's being the largest) would exceed
    MAX_RESULT_BYTES, before anything is allocated or simulated."""
    n = duration / dt
    nw = model.num_wheels
    per_step = 8 * (model.num_states + model.num_dof + 14 * nw + 4)
    size = (n + 1) * per_step
    if size > MAX_RESULT_BYTES:
        raise WorkLimitError(f"duration {duration:g} s at dt {dt:g} s is {n:.3g} steps: the result would take "
                         f"{size / 2**30:.1f} GiB (limit {MAX_RESULT_BYTES / 2**30:.0f} GiB); shorten the run, "
                         "use a larger dt, or step it in pieces (wmr_dynamics.stepper.Stepper)")


class _Constant:
    """A command held constant: t → ``constant`` (v m/s, ω rad/s)."""

    def __init__(self, constant: tuple[float, float]) -> None:
        self.constant = constant

    def __call__(self, _t: float) -> tuple[float, float]:
        return self.constant


def _command_rows(cmd: Callable, t: NDArray) -> NDArray:
    """The command rows (len(t), 2) at the times ``t`` (each checked; a constant command evaluated once)."""
    if isinstance(cmd, _Constant):
        return np.tile(np.asarray(_checked_command(cmd, 0.0), dtype=float), (len(t), 1))
    return np.array([_checked_command(cmd, tk) for tk in t], dtype=float).reshape(len(t), 2)


class _SpeedLimited:
    """A command function t → (v, ω) scaled to the wheels' URDF speed limits at state ``q`` (one evaluation of
    :func:`~wmr_dynamics.limits.limit_command` per distinct command); ``scale`` is the smallest factor used and
    ``count`` how many distinct commands were scaled."""

    def __init__(self, model: WmrModel, controller: Callable, q: NDArray, cmd: Callable) -> None:
        from wmr_dynamics.kinematics import forward_kinematics

        self.model, self.controller, self.q, self.cmd = model, controller, q, cmd
        self.T = forward_kinematics(model, q)
        self.cache: dict[tuple[float, float], tuple[float, float]] = {}
        self.scale, self.count = 1.0, 0

    @property
    def constant(self) -> tuple[float, float] | None:
        """The limited command, if the command is constant (:class:`_Constant`)."""
        return self(0.0) if isinstance(self.cmd, _Constant) else None

    def __call__(self, t: float) -> tuple[float, float]:
        v, omega = _checked_command(self.cmd, t)
        key = (v, omega)
        if key not in self.cache:
            from wmr_dynamics.limits import limit_command

            v2, w2, s = limit_command(self.model, self.controller, self.q, self.T, v, omega)
            self.cache[key] = (v2, w2)
            if s < 1.0:
                self.scale, self.count = min(self.scale, s), self.count + 1
        return self.cache[key]


#: body speeds (m/s) below this never count as divergence (a fall, a slide down a slope)
DIVERGENCE_SPEED_FLOOR = 40.0
#: a body faster than this factor times what the command and the wheels allow has diverged
DIVERGENCE_SPEED_FACTOR = 2.0


def allowed_body_speed(model: WmrModel, v_peak: float, omega_peak: float, reach: float) -> tuple[float, str]:
    """The body speed (m/s) above which a run counts as diverged, and what bounds it (for the message).

    What the command asks for, ``v_peak + omega_peak · reach`` (m/s; ``reach`` the wheels' distance from the body
    origin, m), and what the drive wheels can give, ``max(limit · radius)`` of the actuated wheels' URDF speed
    limits (m/s, when all are finite), whichever is smaller, times :data:`DIVERGENCE_SPEED_FACTOR`, but never
    below :data:`DIVERGENCE_SPEED_FLOOR`.
    """
    want = v_peak + omega_peak * reach
    why = f"the command asks for {want:.3g} m/s"
    act = list(model.actuated_joint_names)
    lims = model.actuated_velocity_limits
    rim = [lims[act.index(j)] * r for j, r in zip(model.wheel_joint_names, model.wheel_radii, strict=True)
           if j in act]
    if rim and np.all(np.isfinite(rim)) and max(rim) < want:
        want, why = float(max(rim)), f"the wheels' speed limits allow {max(rim):.3g} m/s"
    return max(DIVERGENCE_SPEED_FLOOR, DIVERGENCE_SPEED_FACTOR * want), why


def check_divergence(model: WmrModel, r: SimResult, v_peak: float, omega_peak: float) -> None:
    """Raise :class:`~wmr_dynamics.errors.DivergenceError` (with the run as ``.result``) if the run went
    physically absurd: a non-finite state, a wheel sunk deeper than its diameter into the ground, or the body
    faster than the command and the wheels allow (:func:`allowed_body_speed`).  The message names the time,
    the likely cause and the fix."""
    q, t, dt = r.q, r.t, r.dt
    fail: tuple[int, str] | None = None
    finite = np.isfinite(q).all(axis=1)
    if not finite.all():
        k = int(np.flatnonzero(~finite)[0])
        fail = (k, "the state became non-finite")
    # a wheel against a step face may measure a contact error of the step's height (more than its radius on
    # the preset steps), so the bound is a wheel wholly under the ground: deeper than its diameter (a track
    # element's: its roller's or belt point's circle)
    radius = model.wheel_circle
    sunk = r.dz < -2.0 * radius[None, :]
    if sunk.any():
        k, i = (int(v) for v in np.argwhere(sunk)[0])
        if fail is None or k < fail[0]:
            fail = (k, f"wheel '{r.wheel_names[i] if r.wheel_names else i}' is {-r.dz[k, i]:.3g} m deep in the "
                       f"ground, more than its diameter {2 * radius[i]:g} m")
    if len(t) > 1:
        p = np.where(finite[:, None], q[:, 4:7], 0.0)
        reach = float(np.nanmax(np.linalg.norm(r.contact_points[0] - q[0, 4:7], axis=1))) if finite[0] else 0.0
        limit, why = allowed_body_speed(model, v_peak, omega_peak, reach if np.isfinite(reach) else 0.0)
        speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / dt
        fast = (speed > limit) & finite[1:] & finite[:-1]
        if fast.any():
            k = int(np.flatnonzero(fast)[0])
            if fail is None or k < fail[0]:
                fail = (k, f"in the step to t = {t[k + 1]:g} s the body moved at {speed[k]:.3g} m/s, beyond "
                           f"{limit:.3g} m/s ({why})")
    if fail is None:
        return
    k, what = fail
    err = DivergenceError(
        f"{model.name}: {r.mode} run diverged at t = {t[k]:g} s (step {k}): {what}.  Likely cause: a time step "
        f"too large for the command or the contact stiffness (dt = {dt:g} s), or a command beyond the vehicle's "
        "limits.  Fix: a smaller dt, or a command within the joint speed limits "
        "(wmr_dynamics.limits.limit_command)")
    err.result = r
    raise err


def _kin_status(status: int) -> str:
    from wmr_dynamics.compiled.engine import _KIN_STATUS

    return _KIN_STATUS.get(status, f"status {status}")


def _checked_command(cmd: Callable[[float], tuple[float, float]], t: float) -> tuple[float, float]:
    try:
        v, omega = cmd(t)
        v, omega = float(v), float(omega)
    except (TypeError, ValueError) as e:
        raise CommandError(f"command at t={t:g} s must be (v m/s, omega rad/s): {e}") from None
    if not (np.isfinite(v) and np.isfinite(omega)):
        raise CommandError(f"command at t={t:g} s is not finite: v={v}, omega={omega}")
    return v, omega


# Rough cost of one compiled step (s) on a 2-core machine (docs/benchmarks.md), for the up-front estimate of a
# compiled run, which is one uninterruptible call: a dynamic step with 4 wheels, a kinematic step.
_DYNAMIC_STEP_S, _KINEMATIC_STEP_S = 60e-6, 10e-6


T = TypeVar("T")


def _one_call(steps: int, step_s: float, progress: bool | None, call: Callable[[], T]) -> tuple[T, float]:
    """Run a whole compiled simulation (one uninterruptible call, so no progress bar) and time it: (result,
    wall s).  A run estimated (``steps × step_s``) above ~2 s, or any run with ``progress=True``, says so on
    stderr before and how long it took after."""
    estimate = steps * step_s
    shown = progress is True or (progress is None and estimate > 2.0)
    if shown:
        print(f"simulating {steps} steps on the compiled engine in one call (about {estimate:.0f} s) ...",
              end="", file=sys.stderr, flush=True)
    start = time.perf_counter()
    result = call()
    wall = time.perf_counter() - start
    if shown:
        print(f" done in {wall:.1f} s", file=sys.stderr, flush=True)
    return result, wall


class _Progress:
    """A one-line progress bar on stderr, shown once a run looks longer than ~2 s."""

    def __init__(self, n: int, enabled: bool | None) -> None:
        self.n, self.enabled, self.shown, self.last = n, enabled, False, -1

    def update(self, k: int, elapsed: float) -> None:
        if self.enabled is False or self.n == 0:
            return
        if not self.shown:
            # auto mode: only once the run has taken 2 s (start-up and compilation included) and has
            # a noticeable remainder left
            remaining = elapsed / max(k, 1) * (self.n - k)
            if not (self.enabled or (elapsed > 2.0 and remaining > 1.0)):
                return
            self.shown = True
        pct = int(100 * k / self.n)
        if pct != self.last:
            self.last = pct
            bar = "#" * (pct // 4) + "." * (25 - pct // 4)
            print(f"\r[{bar}] {pct:3d}%  step {k}/{self.n}  {elapsed:.1f} s", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.shown:
            print(file=sys.stderr)
