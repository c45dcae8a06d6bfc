"""Python side of the compiled path: turn models, options and controllers into the kernels' flat data, run
rollouts, and raise clear errors from the kernels' status codes.

:class:`CompiledDynamics` is the dynamic model of :class:`~wmr_dynamics.simulate.Simulator` and
:class:`~wmr_dynamics.stepper.Stepper` (and what planners use through
:meth:`~wmr_dynamics.simulate.Simulator.rollout_batch`).  A contact or actuator model written in Python runs
on it through a callback (:mod:`~wmr_dynamics.compiled.callbacks`); a custom controller callable is called
between steps by the stepper, which then drives the kernels with joint rates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics import checks
from wmr_dynamics.actuators import ACTUATOR_MODELS
from wmr_dynamics.compiled import cache as _cache
from wmr_dynamics.compiled import callbacks as _cb
from wmr_dynamics.compiled import dynamics as D
from wmr_dynamics.compiled.controllers import ControllerData, controller_data
from wmr_dynamics.compiled.data import ModelData, TerrainData, model_data
from wmr_dynamics.compiled.rollout import dynamic_rollout, dynamic_rollout_batch
from wmr_dynamics.contact_models.registry import CONTACT_MODELS
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.errors import ArgumentError, DivergenceError, ModelError, SimulationError, StateError, WmrError
from wmr_dynamics.joint_models import JOINT_MODELS, N_PARAMS
from wmr_dynamics.model import WmrModel
from wmr_dynamics.registry import PYTHON, RIGID

#: columns of the ``stats`` array of :func:`rollout_batch`
BATCH_STATS = ("max_abs_slip_ratio", "max_abs_slip_angle_rad", "min_normal_force_N", "max_abs_dz_m",
               "max_contact_speed_mps", "mean_iterations", "converged", "rolled_over")

_TERRAIN_NAN = ("the terrain returned a non-finite height or normal under a wheel (a hole in the terrain's data, or a "
                "state that diverged within the step: try a smaller dt, or a command within the vehicle's limits)")
_STATUS = {1: _TERRAIN_NAN,
           2: "the force balance produced a non-finite velocity (time step too large?)",
           3: "the joint-space inertia matrix is not positive definite (check the URDF inertias)",
           4: "the controller produced a non-finite joint rate command"}


#: engine parts whose kernels this process has compiled or loaded (the kernels are specialized on argument
#: types, which every model, terrain and contact model shares: one warm-up per process is enough)
_LOADED: set[str] = set()


class NotCompilable(WmrError):
    """The configuration needs the Python path (the message says why)."""


def _contact_kind(contact: object) -> int:
    """The kernel code of a contact model (CONTACT_MODELS), or ``PYTHON``: a callback to its ``evaluate``
    (see :class:`~wmr_dynamics.contact_models.ContactModel`)."""
    kind = CONTACT_MODELS.code(contact)
    if kind == PYTHON and not callable(getattr(contact, "evaluate", None)):
        raise ModelError(f"DynamicsOptions.contact must be a contact model with evaluate(v_c, R_omega, dz), got "
                         f"{type(contact).__name__}")
    return kind


def _actuator(actuator: object, na: int) -> tuple[int, NDArray]:
    """(code, act_P (4, na)): a registered actuator's kernel code and parameters, ``RIGID`` for ideal
    actuators, or ``PYTHON`` (a callback)."""
    if actuator is None or getattr(actuator, "ideal", False):
        return RIGID, np.zeros((4, max(na, 1)))
    kind = ACTUATOR_MODELS.code(actuator)
    if kind == PYTHON:
        if not callable(getattr(actuator, "evaluate", None)):
            raise ModelError(f"DynamicsOptions.actuator must be an actuator model with evaluate(theta, theta_dot, "
                             f"u, dt) or None, got {type(actuator).__name__}")
        return PYTHON, np.zeros((4, max(na, 1)))
    return kind, np.ascontiguousarray(actuator.kernel_data(na), dtype=float)


def _joint_models(models: tuple, slot) -> tuple[NDArray, NDArray]:  # noqa: ANN001
    """(joint_kind (nc,), joint_P (nc, N_PARAMS)) of the joint rows' models (JOINT_MODELS codes; ``RIGID`` for
    a rigid row; ``PYTHON`` rows carry their callback slot in P[k, 0])."""
    kinds = np.full(len(models), RIGID, dtype=np.int64)
    P = np.zeros((len(models), N_PARAMS))
    for k, m in enumerate(models):
        if m is None:
            continue
        kinds[k] = JOINT_MODELS.code(m)
        if kinds[k] == PYTHON:
            P[k, 0] = slot(m)
        else:
            P[k] = m.kernel_data()
    return kinds, P


def dynamics_data(model: WmrModel, options, max_halvings: int = 3, owner: object = None) -> D.DynamicsData:  # noqa: ANN001
    """The kernels' :class:`~wmr_dynamics.compiled.dynamics.DynamicsData` for ``DynamicsOptions`` ``options``.

    A Python contact, actuator or joint model is registered for callbacks for as long as ``owner`` lives (default:
    the returned data's lifetime is the caller's business, and the models stay registered)."""
    from wmr_dynamics.dynamics.force_balance import joint_rows
    from wmr_dynamics.model import G

    jr = joint_rows(model)
    kind = _contact_kind(options.contact)
    if kind == D.CONTACT_COULOMB and model.num_wheels > D.COULOMB_MAX_WHEELS:
        raise ModelError(f"{model.name}: the coulomb contact mode handles at most {D.COULOMB_MAX_WHEELS} wheels "
                         f"(one bit each in its stick/slide set), the vehicle has {model.num_wheels}")
    if kind == PYTHON:
        P, aux = np.zeros((1, 1)), np.zeros(1)
    else:
        P, aux = options.contact.kernel_data(model.num_wheels)
    act_kind, act_P = _actuator(options.actuator, len(model.actuated_joint_names))
    slot = (lambda obj: _cb.registered(obj, owner)) if owner is not None else _cb.register
    c_slot = slot(options.contact) if kind == PYTHON else 0
    a_slot = slot(options.actuator) if act_kind == PYTHON else 0
    joint_kind, joint_P = _joint_models(jr.models, slot)
    weight = model.total_mass * G
    tol = options.tolerance * weight
    return D.DynamicsData(
        jr.A, jr.b, joint_kind, joint_P, kind, np.ascontiguousarray(P, dtype=float),
        np.ascontiguousarray(aux, dtype=float), act_kind, act_P, int(options.max_iterations), float(tol),
        float(max(tol, 1e-3 * weight)), float(options.qr_tolerance), bool(options.constant_mass_matrix),
        int(max_halvings), int(options.collision_samples), bool(options.approximate_bias), c_slot, a_slot,
        bool(getattr(options.contact, "has_axle_moment", False) and kind != PYTHON), _reuse_factor(options, kind))


def _reuse_factor(options, kind: int) -> int:  # noqa: ANN001
    """DynamicsOptions.reuse_factor resolved to a ``REUSE_*`` code: None → always for the smooth contact models
    (``smooth_force``), where it paid for the piecewise ones; never in the coulomb mode, whose active set remakes
    the null space every step."""
    if kind == D.CONTACT_COULOMB or options.reuse_factor is False:
        return D.REUSE_NEVER
    if options.reuse_factor is None and not getattr(options.contact, "smooth_force", False):
        return D.REUSE_WHEN_PAID
    return D.REUSE_ALWAYS


def terrain_data(terrain, exact_only: bool = False) -> TerrainData:  # noqa: ANN001
    """The terrain for the kernels (:func:`~wmr_dynamics.compiled.terrain.compile_terrain`: exact for every
    built-in surface, rasterized otherwise; ``exact_only``: raise NotCompilable rather than rasterize)."""
    from wmr_dynamics.compiled.terrain import compile_terrain, has_exact_form

    if exact_only and not has_exact_form(terrain):
        raise NotCompilable(f"{type(terrain).__name__} terrain would be rasterized for the compiled path")
    return compile_terrain(terrain)


@dataclass
class Rollout:
    """Arrays of one compiled dynamic rollout (the fields of ``SimResult`` in dynamic mode)."""

    q: NDArray
    qvel: NDArray
    dz: NDArray
    contact_points: NDArray
    contact_speed: NDArray
    contact_force: NDArray
    slip_ratio: NDArray
    slip_angle: NDArray
    iterations: NDArray
    cost: NDArray
    converged: NDArray


class CompiledDynamics:
    """Compiled dynamic model of one vehicle on one terrain.

    Args:
        model: the vehicle.  terrain: the ground (every built-in surface exactly — Plane, HeightGrid, SmoothGrid,
            Ramp, Steps, Box, a Composite of them with at most one grid; other terrains are rasterized at 2 cm,
            or refused with ``exact_terrain``).  options: ``DynamicsOptions``.
        controller: a :class:`BodyVelocityController` (commands are (v, ω) rows), or None: command rows are
            actuated joint rates.
        max_halvings: sub-stepping depth of unconverged steps (``dynamic_step``).
    """

    def __init__(self, model: WmrModel, terrain, options, controller: BodyVelocityController | None = None,  # noqa: ANN001
                 max_halvings: int = 3, exact_terrain: bool = False) -> None:
        if controller is not None and not isinstance(controller, BodyVelocityController):
            raise NotCompilable("a custom controller callable is called between steps (Stepper), not in a rollout")
        self.model, self.options = model, options
        self.md: ModelData = model_data(model)
        self.td: TerrainData = terrain_data(terrain, exact_only=exact_terrain)
        self.fd: D.DynamicsData = dynamics_data(model, options, max_halvings, owner=self)
        self.cd: ControllerData = controller_data(controller, model)
        self.cd_direct: ControllerData = controller_data(None, model, direct=True)
        self.n_cmd = 2 if controller is not None else len(model.actuated_joint_names)

    def warm_up(self, batch: bool = False, quiet: bool = False) -> None:
        """Compile (or load from numba's cache) the kernels with a one-row rollout — and, with ``batch``, the
        parallel batch kernel; state is left unchanged.  A cold compile is announced on stderr
        (:mod:`~wmr_dynamics.compiled.cache`) unless ``quiet``."""
        q0, v0, cmds = self.model.neutral_state(), np.zeros(self.model.num_dof), np.zeros((1, self.n_cmd))
        if "dynamic" not in _LOADED:
            def run() -> None:
                _ignore_model_error(lambda: self.rollout(q0, v0, cmds, 0.01))
                _ignore_model_error(lambda: self._advance_once(q0, v0))

            _cache.compiled("dynamic", run, quiet)
            _LOADED.add("dynamic")
        if batch and "dynamic-batch" not in _LOADED:
            _cache.compiled("dynamic-batch", lambda: self.rollout_batch(q0, v0, cmds[None], 0.01), quiet)
            _LOADED.add("dynamic-batch")

    def workspace(self) -> D.DynamicsWorkspace:
        """A fresh :class:`~wmr_dynamics.compiled.dynamics.DynamicsWorkspace` (no cached mass matrix)."""
        return D.dynamics_workspace(self.md, self.fd)

    def _advance_once(self, q0: NDArray, v0: NDArray) -> None:
        """One step of the stepper's kernel (``dynamic_advance``), for the warm-up."""
        from wmr_dynamics.compiled.rollout import dynamic_advance

        nw, na = self.model.num_wheels, len(self.model.actuated_joint_names)
        st, k = dynamic_advance(self.md, self.td, self.fd, self.cd, self.workspace(), q0.copy(), v0.copy(),
                                np.zeros(self.n_cmd), 1, 0.01, np.zeros(na), np.zeros(max(na, 1)), np.zeros(nw),
                                np.zeros((nw, 3)), np.zeros((2, nw)), np.zeros(4))
        self.raise_status(st, k, 0.01)

    def _commands(self, cmds: NDArray, lead: tuple | None) -> NDArray:
        what = "(v m/s, omega rad/s) rows" if self.n_cmd == 2 else f"rows of {self.n_cmd} actuated joint rates"
        return checks.command_array("commands", cmds, lead, self.n_cmd, what)

    def _check_dt(self, dt: float) -> float:
        return checks.number("dt", dt, positive=True, unit="seconds")

    def rollout(self, q0: NDArray, qvel0: NDArray, cmds: NDArray, dt: float,
                integral: NDArray | None = None, record: bool = True) -> Rollout:
        """One rollout: rows k = 0..n of ``cmds`` (n+1, m) are the commands at t = k·dt (see ``Simulator.run``).

        ``integral``: the PI actuators' integrals at the start (default zero), advanced in place.

        ``record=False``: the states alone, as a planner needs them — ``q`` has every row, the other fields one
        row of running extremes over the steps (``dynamic_rollout``): ``dz`` max |Δz| (m), ``contact_speed`` max
        ‖v_c‖ (m/s), ``contact_force[0, :, 2]`` min normal force (N), ``slip_ratio``/``slip_angle`` max
        |·| per wheel, ``iterations`` the total, ``cost`` max ‖e‖ (N), ``converged`` all; ``qvel`` and the
        contact points are not kept (zeros).  The same trajectory, bit for bit; the Talon at Δt 0.01 takes 0.1–0.25
        µs less per step than recording (of ≈ 5.4; docs/benchmarks.md, "The Talon part by part")."""
        m, dt = self.model, self._check_dt(dt)
        cmds = self._commands(cmds, ())
        n1, nw = cmds.shape[0], m.num_wheels
        q0 = checks.state("q0", q0, m.num_states)
        qvel0 = checks.vector("qvel0", qvel0, m.num_dof, "joint-space velocities [omega_b; v_b; joint rates]",
                              StateError)
        k = n1 if record else 1
        out = Rollout(np.full((n1, m.num_states), np.nan), np.zeros((k, m.num_dof)), np.zeros((k, nw)),
                      np.zeros((k, nw, 3)), np.zeros((k, nw)), np.zeros((k, nw, 3)), np.zeros((k, nw)),
                      np.zeros((k, nw)), np.zeros(k), np.zeros(k), np.ones(k, dtype=np.bool_))
        ws = self.workspace()
        if integral is None:
            integral = np.zeros(len(m.actuated_joint_names))
        status, row = dynamic_rollout(self.md, self.td, self.fd, self.cd, ws, q0, qvel0, cmds, dt, integral,
                                      np.empty(max(len(integral), 1)), out.q, out.qvel, out.dz, out.contact_points,
                                      out.contact_speed, out.contact_force, out.slip_ratio, out.slip_angle,
                                      out.iterations, out.cost, out.converged, bool(record))
        _raise_diverged(m, status, row, dt, out.q)
        self.raise_status(status, row, dt)
        return out

    def rollout_batch(self, q0: NDArray, qvel0: NDArray, cmds: NDArray, dt: float,
                      contact_params: NDArray | None = None) -> tuple[NDArray, NDArray, NDArray]:
        """N rollouts in parallel over the cores; returns (Q (N, n+1, nq), stats (N, 8), status (N, 2)).

        ``stats`` columns are :data:`BATCH_STATS`; a trajectory whose step failed has status[i, 0] != 0 (the
        failing row in status[i, 1]) and NaN rows in Q after it.  ``contact_params``: optional (N, k, p)
        per-trajectory contact parameter rows (the layout of the model's ``kernel_data()[0]``).
        """
        dt = self._check_dt(dt)
        cmds = self._commands(cmds, None)
        N = cmds.shape[0]
        m = self.model
        q0 = checks.state_rows("q0", q0, N, m.num_states)
        qvel0 = checks.rows("qvel0", qvel0, N, m.num_dof)
        if contact_params is None:
            P = np.zeros((0, *self.fd.contact_P.shape))
        else:
            P = checks.as_float_array("contact_params", contact_params)
            if P.ndim != 3 or P.shape[0] != N or P.shape[2:] != self.fd.contact_P.shape[1:] \
                    or P.shape[1] not in (1, m.num_wheels):
                raise ArgumentError(f"contact_params: expected shape ({N}, 1 or {m.num_wheels}, "
                                    f"{self.fd.contact_P.shape[1]}), got {P.shape}")
            checks.finite("contact_params", P)
        Q = np.full((N, cmds.shape[1], m.num_states), np.nan)
        stats = np.zeros((N, len(BATCH_STATS)))
        status = np.zeros((N, 2), dtype=np.int64)
        dynamic_rollout_batch(self.md, self.td, self.fd, self.cd, q0, qvel0, cmds, dt, P, Q, stats, status)
        return Q, stats, status

    def raise_status(self, status: int, row: int, dt: float) -> None:
        """Raise ModelError for a kernel's status code (0: nothing) at step ``row``."""
        _raise_status(self.model, _STATUS, status, row, dt)


class CompiledKinematics:
    """Compiled kinematic model (stabilized DAE; Euler or RK4; optionally enhanced) of one vehicle on one terrain.

    Args:
        model, terrain, exact_terrain: as :class:`CompiledDynamics`.
        controller: a :class:`BodyVelocityController` (commands are (v, ω) rows), or None: command rows are
            actuated joint rates (a custom controller callable is called by the caller, between steps).
        sigma: the Baumgarte gain, 1/s (eqs. 2.35–2.36).  slip: ``SlipParams`` (enhanced kinematics, eqs.
            2.44–2.52) or None.  integrator: ``"euler"`` or ``"rk4"``.  margin: compute the rollover margin.
    """

    def __init__(self, model: WmrModel, terrain, controller: BodyVelocityController | None, sigma: float,  # noqa: ANN001
                 exact_terrain: bool = False, slip: object | None = None, integrator: str = "euler",
                 margin: bool = False) -> None:
        from wmr_dynamics.compiled.kinematics import INTEGRATOR_EULER, INTEGRATOR_RK4, KinematicsData

        if controller is not None and not isinstance(controller, BodyVelocityController):
            raise NotCompilable("a custom controller callable is called between steps, not in a rollout")
        self.model, self.sigma = model, float(sigma)
        self.md = model_data(model)
        self.td = terrain_data(terrain, exact_only=exact_terrain)
        self.cd = controller_data(controller, model)
        self.cd_direct = controller_data(None, model, direct=True)
        self.n_cmd = 2 if controller is not None else len(model.actuated_joint_names)
        enhanced = slip is not None and not slip.is_zero
        P = slip.kernel_data() if slip is not None else np.zeros(15)
        self.kd = KinematicsData(self.sigma, P, bool(enhanced), bool(margin or enhanced),
                                 INTEGRATOR_RK4 if integrator == "rk4" else INTEGRATOR_EULER)
        self.kd_margin = self.kd._replace(margin=True)  # for single steps and solves: with the rollover margin

    def workspace(self):  # noqa: ANN201
        """A fresh :class:`~wmr_dynamics.compiled.kinematics.KinematicWorkspace` (contact set: all in contact)."""
        from wmr_dynamics.compiled.kinematics import kinematic_workspace

        return kinematic_workspace(self.md)

    def warm_up(self, quiet: bool = False) -> None:
        """Compile (or load from the cache) the kernels with a one-row rollout (a cold compile is announced on
        stderr unless ``quiet``)."""
        if "kinematic" not in _LOADED:
            from wmr_dynamics.compiled.kinematics import kinematic_advance

            cmds = np.zeros((1, self.n_cmd))
            q0 = self.model.neutral_state()
            nw = self.model.num_wheels

            def run() -> None:
                _ignore_model_error(lambda: self.rollout(q0, cmds, 0.01))
                kinematic_advance(self.md, self.td, self.cd, self.kd, self.workspace(), q0.copy(), cmds[0], 1, 0.01,
                                  np.zeros(nw), np.zeros(2))

            _cache.compiled("kinematic", run, quiet)
            _LOADED.add("kinematic")

    def rollout(self, q0: NDArray, cmds: NDArray, dt: float, margin: bool = False,
                record: bool = True) -> tuple[NDArray, ...]:
        """(Q, QV, DZ, CP, VC, RES, ROLL) for command rows ``cmds`` (n+1, m); raises ModelError on failure.
        ``margin``: the rollover margin at every state in ROLL (m; ≈ 20 % more per step), else NaN (unless the
        engine's own settings compute it).  ``record=False``: the states alone — Q and QV, the other arrays NaN
        (≈ 0.2 µs less per step: a planner's or the calibration's use)."""
        from wmr_dynamics.compiled.kinematics import kinematic_rollout

        m = self.model
        what = "(v m/s, omega rad/s) rows" if self.n_cmd == 2 else f"rows of {self.n_cmd} actuated joint rates"
        c = checks.command_array("commands", cmds, (), self.n_cmd, what)
        dt = checks.number("dt", dt, positive=True, unit="seconds")
        q0 = checks.state("q0", q0, m.num_states)
        n1, nw = c.shape[0], m.num_wheels
        Q = np.full((n1, m.num_states), np.nan)
        diag = np.zeros if record else (lambda shape: np.full(shape, np.nan))
        QV, DZ, CP = np.zeros((n1, m.num_dof)), diag((n1, nw)), diag((n1, nw, 3))
        VC, RES, ROLL = diag((n1, nw)), diag(n1), np.full(n1, np.nan)
        kd = self.kd_margin if margin else self.kd
        status, row = kinematic_rollout(self.md, self.td, self.cd, kd, self.workspace(), q0, c, dt, Q, QV, DZ, CP,
                                        VC, RES, ROLL, bool(record))
        _raise_diverged(m, status, row, dt, Q)
        self.raise_status(status, row, dt)
        return Q, QV, DZ, CP, VC, RES, ROLL

    def raise_status(self, status: int, row: int, dt: float) -> None:
        """Raise ModelError for a kernel's status code (0: nothing) at step ``row``."""
        _raise_status(self.model, _KIN_STATUS, status, row, dt)


_KIN_STATUS = {1: _TERRAIN_NAN,
               2: "the kinematic constraint system is singular",
               3: "the state became non-finite",
               4: "the controller produced a non-finite joint rate command",
               5: "enhanced kinematics: the normal force at the centre of gravity is zero (free fall?)"}


def _raise_status(model: WmrModel, table: dict, status: int, row: int, dt: float) -> None:
    if status != 0:
        diverged = (table is _STATUS and status == 2) or (table is _KIN_STATUS and status == 3)
        error = DivergenceError if diverged else SimulationError
        raise error(f"{model.name}: step {row} (t = {row * dt:g} s): {table.get(status, status)}")


def _raise_diverged(model: WmrModel, status: int, row: int, dt: float, Q: NDArray) -> None:
    """A failed rollout whose states before the failure went non-finite or flew off (faster than 1 km/s)
    diverged: say so (DivergenceError) rather than blame what the kernel tripped over (e.g. the terrain query
    at a NaN position)."""
    if status == 0:
        return
    rows = Q[:row + 1]
    done = rows[np.isfinite(rows).all(axis=1)]
    speed = np.linalg.norm(np.diff(done[:, 4:7], axis=0), axis=1) / dt if len(done) > 1 else np.zeros(0)
    if len(done) < len(rows) or (speed.size and speed.max() > 1e3):
        what = ("the state became non-finite" if len(done) < len(rows)
                else f"the body moved at {speed.max():.3g} m/s")
        raise DivergenceError(
            f"{model.name}: step {row} (t = {row * dt:g} s): the run diverged: {what}.  Likely cause: a time step "
            f"too large for the command (dt = {dt:g} s) or a command beyond the vehicle's limits.  Fix: a smaller "
            "dt, or a command within the joint speed limits (wmr_dynamics.limits.limit_command)")


def _ignore_model_error(call) -> None:  # noqa: ANN001
    """Run a warm-up call: the neutral state may be off the terrain; compilation happened all the same."""
    try:
        call()
    except ModelError:
        pass


class ForceBalanceProblem:
    """The force balance of one dynamic step, set up by the engine's own kernels, for inspection and tests.

    ``evaluate(x)`` gives (e, ∂e/∂x, q̇'[i+1], contact forces (nw, 3)) for the unknowns x: the coordinates of
    q̇'[i+1] in the null space of the rigid rows (``compiled.dynamics``'s module docstring); e is the
    force-balance error of eqs. 2.76–2.78 along that null space (nx entries, ∂e/∂x square).  ``x0`` is the step's
    warm start (§2.4.4).

    Args as :class:`CompiledDynamics`, plus the step's state q, q̇', actuated rate commands u, dt (s) and the
    PI integrals ``integral`` (default zero).
    """

    def __init__(self, model: WmrModel, terrain, options, q: NDArray, qvel: NDArray, u: NDArray, dt: float,  # noqa: ANN001
                 integral: NDArray | None = None) -> None:
        self.engine = CompiledDynamics(model, terrain, options)
        e = self.engine
        self.ws = e.workspace()
        self.qvel = np.ascontiguousarray(qvel, dtype=float)
        self.dt = float(dt)
        na = len(model.actuated_joint_names)
        self.integral = np.zeros(na) if integral is None else np.array(integral, dtype=float)
        self.ws.act_u[:na] = u
        status = D._setup(e.md, e.td, e.fd, self.ws, np.ascontiguousarray(q, dtype=float), self.qvel,
                          np.ascontiguousarray(u, dtype=float), self.dt)
        e.raise_status(status, 0, self.dt)
        self.nx = int(self.ws.counts[D.C_INPUTS])
        self.x0 = self.ws.x[:self.nx].copy()

    def evaluate(self, x: NDArray) -> tuple[NDArray, NDArray, NDArray, NDArray]:
        n = self.qvel.shape[0]
        e, J = np.zeros(n), np.zeros((n, n))
        D._evaluate(self.engine.md, self.engine.fd, self.ws, np.ascontiguousarray(x, dtype=float), self.qvel,
                    self.integral, self.dt, True, e, J)
        return e[:self.nx].copy(), J[:self.nx, :self.nx].copy(), self.ws.qn.copy(), self.ws.fc.copy()
