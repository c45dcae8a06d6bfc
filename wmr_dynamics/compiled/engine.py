"""Python side of the compiled path: turn models, options and controllers into the kernels' flat data, run
rollouts, and raise clear errors from the kernels' status codes.

:class:`CompiledDynamics` is what :class:`~wmr_dynamics.simulate.Simulator` uses in dynamic mode (and what
planners use through :meth:`~wmr_dynamics.simulate.Simulator.rollout_batch`).  Everything the kernels cannot
run — a contact model or actuator written in Python, the fused-body bias approximation (eq. 2.89), a
custom controller callable — is reported by :func:`compile_problem` as ``NotCompilable`` with the reason,
and the Simulator then takes the Python path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.actuators import PIActuator, TorqueSpeedActuator
from wmr_dynamics.compiled import cache as _cache
from wmr_dynamics.compiled import dynamics as D
from wmr_dynamics.compiled.controllers import ControllerData, controller_data
from wmr_dynamics.compiled.data import ModelData, TerrainData, model_data
from wmr_dynamics.compiled.rollout import dynamic_rollout, dynamic_rollout_batch
from wmr_dynamics.contact_models._terra import lut_kernel, terra_kernel
from wmr_dynamics.contact_models.linear import _linear_kernel
from wmr_dynamics.contact_models.pacejka import _pacejka_kernel
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.errors import ModelError, WmrError
from wmr_dynamics.model import WmrModel

#: columns of the ``stats`` array of :func:`rollout_batch`
BATCH_STATS = ("max_abs_slip_ratio", "max_abs_slip_angle_rad", "min_normal_force_N", "max_abs_dz_m",
               "max_contact_speed_mps", "mean_iterations", "converged", "rolled_over")

_STATUS = {1: "the terrain returned a non-finite height or normal under a wheel",
           2: "the force balance produced a non-finite velocity (time step too large?)",
           3: "the joint-space inertia matrix is not positive definite (check the URDF inertias)",
           4: "the controller produced a non-finite joint rate command"}


class NotCompilable(WmrError):
    """The configuration needs the Python path (the message says why)."""


def _contact_kind(contact: object) -> int:
    kernel = getattr(contact, "kernel", None)
    for k, fn in ((D.CONTACT_LINEAR, _linear_kernel), (D.CONTACT_PACEJKA, _pacejka_kernel),
                  (D.CONTACT_TERRA, terra_kernel), (D.CONTACT_TERRA_LUT, lut_kernel)):
        if kernel is fn or getattr(kernel, "py_func", None) is getattr(fn, "py_func", fn):
            return k
    raise NotCompilable(f"contact model {type(contact).__name__} has no compiled kernel (a Python model runs on the "
                        "Python path)")


def _actuator(actuator: object, na: int) -> tuple[int, NDArray, NDArray]:
    """(kind, act_P (4, na), initial PI integral (na,))."""
    P = np.zeros((4, max(na, 1)))
    if actuator is None:
        return D.ACTUATOR_IDEAL, P, np.zeros(na)
    if isinstance(actuator, PIActuator):
        P[0], P[1] = actuator.kp, actuator.ki
        P[2] = 0.0 if actuator.torque_limit is None else actuator.torque_limit
        P[3] = 1.0 if actuator.saturation == "tanh" else 0.0
        integral = np.zeros(na) if actuator.integral is None else np.array(actuator.integral, dtype=float)
        return D.ACTUATOR_PI, P, integral
    if isinstance(actuator, TorqueSpeedActuator):
        P[0], P[1], P[2], P[3] = (actuator.stall_torque, actuator.no_load_speed, actuator.gain,
                                  actuator.torque_limit)
        return D.ACTUATOR_TORQUE_SPEED, P, np.zeros(na)
    raise NotCompilable(f"actuator model {type(actuator).__name__} has no compiled kernel")


def dynamics_data(model: WmrModel, options, max_halvings: int = 3) -> tuple[D.DynamicsData, NDArray]:  # noqa: ANN001
    """The kernels' :class:`~wmr_dynamics.compiled.dynamics.DynamicsData` for ``DynamicsOptions`` ``options``,
    and the actuators' initial integral state.  Raises :class:`NotCompilable`."""
    from wmr_dynamics.dynamics.force_balance import ForceBalance

    if options.approximate_bias:
        raise NotCompilable("approximate_bias (eq. 2.89) runs on the Python path")
    fb = ForceBalance(model, None, options)  # joint rows and spring models, as the Python path builds them
    kind = _contact_kind(options.contact)
    P, aux = options.contact.kernel_data(model.num_wheels)
    act_kind, act_P, integral = _actuator(options.actuator, len(model.actuated_joint_names))
    tol = options.tolerance * fb.weight
    fd = D.DynamicsData(
        np.ascontiguousarray(fb.A_joint, dtype=float), np.ascontiguousarray(fb.b_joint, dtype=float),
        np.ascontiguousarray(fb.joint_k, dtype=float), np.ascontiguousarray(fb.joint_d, dtype=float),
        np.ascontiguousarray(fb.joint_rigid, dtype=np.bool_), kind, np.ascontiguousarray(P, dtype=float),
        np.ascontiguousarray(aux, dtype=float), act_kind, act_P, int(options.max_iterations), float(tol),
        float(max(tol, 1e-3 * fb.weight)), float(options.qr_tolerance), bool(options.constant_mass_matrix),
        int(max_halvings), int(options.collision_samples))
    return fd, integral


def terrain_data(terrain, exact_only: bool = False) -> TerrainData:  # noqa: ANN001
    """The terrain for the kernels (``exact_only``: raise NotCompilable rather than rasterize)."""
    from wmr_dynamics.compiled.terrain import compile_terrain
    from wmr_dynamics.terrain import HeightGrid, Plane, Ramp, Steps

    if exact_only and not isinstance(terrain, (Plane, HeightGrid, Ramp, Steps)):
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
        model: the vehicle.  terrain: the ground (Plane, HeightGrid, Ramp, Steps exactly; other terrains
            are rasterized at 2 cm, or refused with ``exact_terrain``).  options: ``DynamicsOptions``.
        controller: a :class:`BodyVelocityController` (commands are (v, ω) rows), or None: command rows are
            actuated joint rates.
        max_halvings: sub-stepping depth of unconverged steps (as ``ForceBalance.step``).
    """

    def __init__(self, model: WmrModel, terrain, options, controller: BodyVelocityController | None = None,  # noqa: ANN001
                 max_halvings: int = 3, exact_terrain: bool = False) -> None:
        if controller is not None and not isinstance(controller, BodyVelocityController):
            raise NotCompilable("a custom controller callable runs on the Python path")
        self.model, self.options = model, options
        self.md: ModelData = model_data(model)
        self.td: TerrainData = terrain_data(terrain, exact_only=exact_terrain)
        self.fd, self.integral = dynamics_data(model, options, max_halvings)
        self.cd: ControllerData = controller_data(controller, model)
        self.n_cmd = 2 if controller is not None else len(model.actuated_joint_names)

    def warm_up(self, batch: bool = False, quiet: bool = False) -> None:
        """Compile (or load from numba's cache) the kernels with a one-row rollout — and, with ``batch``, the
        parallel batch kernel; state is left unchanged.  A cold compile is announced on stderr
        (:mod:`~wmr_dynamics.compiled.cache`) unless ``quiet``."""
        q0, v0, cmds = self.model.neutral_state(), np.zeros(self.model.num_dof), np.zeros((1, self.n_cmd))
        if not getattr(self, "_warm", False):
            saved = self.integral.copy()
            act = self.options.actuator
            saved_act = None if act is None else getattr(act, "integral", None)
            _cache.compiled("dynamic", lambda: _ignore_model_error(lambda: self.rollout(q0, v0, cmds, 0.01)), quiet)
            self.integral = saved
            if act is not None and hasattr(act, "integral"):
                act.integral = saved_act
            self._warm = True
        if batch and not getattr(self, "_warm_batch", False):
            _cache.compiled("dynamic-batch", lambda: self.rollout_batch(q0, v0, cmds[None], 0.01), quiet)
            self._warm_batch = True

    def _commands(self, cmds: NDArray, lead: tuple) -> NDArray:
        c = np.ascontiguousarray(cmds, dtype=float)
        if c.ndim != len(lead) + 2 or c.shape[:len(lead)] != lead or c.shape[-1] != self.n_cmd or c.shape[-2] < 1:
            what = "(v m/s, omega rad/s)" if self.n_cmd == 2 else f"{self.n_cmd} actuated joint rates"
            raise ModelError(f"commands: expected shape {(*lead, 'steps+1', self.n_cmd)} of {what}, got {c.shape}")
        if not np.all(np.isfinite(c)):
            k = np.argwhere(~np.isfinite(c))[0].tolist()
            raise ModelError(f"commands: non-finite value at index {k}")
        return c

    def _check_dt(self, dt: float) -> float:
        if not (np.isfinite(dt) and dt > 0):
            raise ModelError(f"dt must be a positive number of seconds, got {dt!r}")
        return float(dt)

    def rollout(self, q0: NDArray, qvel0: NDArray, cmds: NDArray, dt: float) -> Rollout:
        """One rollout: rows k = 0..n of ``cmds`` (n+1, m) are the commands at t = k·dt (see ``Simulator.run``)."""
        m, dt = self.model, self._check_dt(dt)
        cmds = self._commands(cmds, ())
        n1, nw = cmds.shape[0], m.num_wheels
        q0 = np.ascontiguousarray(q0, dtype=float)
        qvel0 = np.ascontiguousarray(qvel0, dtype=float)
        out = Rollout(np.full((n1, m.num_states), np.nan), np.zeros((n1, m.num_dof)), np.zeros((n1, nw)),
                      np.zeros((n1, nw, 3)), np.zeros((n1, nw)), np.zeros((n1, nw, 3)), np.zeros((n1, nw)),
                      np.zeros((n1, nw)), np.zeros(n1), np.zeros(n1), np.ones(n1, dtype=np.bool_))
        ws = D.dynamics_workspace(self.md, self.fd)
        integral = self.integral.copy()
        status, row = dynamic_rollout(self.md, self.td, self.fd, self.cd, ws, q0, qvel0, cmds, dt, integral,
                                      np.empty(max(len(integral), 1)), out.q, out.qvel, out.dz, out.contact_points,
                                      out.contact_speed, out.contact_force, out.slip_ratio, out.slip_angle,
                                      out.iterations, out.cost, out.converged, True)
        self._raise(status, row, dt)
        if isinstance(self.options.actuator, PIActuator):
            self.options.actuator.integral = integral  # the Python path keeps the PI state across runs too
        return out

    def rollout_batch(self, q0: NDArray, qvel0: NDArray, cmds: NDArray, dt: float,
                      contact_params: NDArray | None = None) -> tuple[NDArray, NDArray, NDArray]:
        """N rollouts in parallel over the cores; returns (Q (N, n+1, nq), stats (N, 8), status (N, 2)).

        ``stats`` columns are :data:`BATCH_STATS`; a trajectory whose step failed has status[i, 0] != 0 (the
        failing row in status[i, 1]) and NaN rows in Q after it.  ``contact_params``: optional (N, k, p)
        per-trajectory contact parameter rows (the layout of the model's ``kernel_data()[0]``).
        """
        dt = self._check_dt(dt)
        cmds = np.ascontiguousarray(cmds, dtype=float)
        N = cmds.shape[0] if cmds.ndim == 3 else -1
        cmds = self._commands(cmds, (N,))
        m = self.model
        q0 = _rows("q0", q0, N, m.num_states)
        qvel0 = _rows("qvel0", qvel0, N, m.num_dof)
        if contact_params is None:
            P = np.zeros((0, *self.fd.contact_P.shape))
        else:
            P = np.ascontiguousarray(contact_params, dtype=float)
            if P.shape[0] != N or P.shape[2:] != self.fd.contact_P.shape[1:] or P.shape[1] not in (1, m.num_wheels):
                raise ModelError(f"contact_params: expected shape ({N}, 1 or {m.num_wheels}, "
                                 f"{self.fd.contact_P.shape[1]}), got {P.shape}")
        Q = np.full((N, cmds.shape[1], m.num_states), np.nan)
        stats = np.zeros((N, len(BATCH_STATS)))
        status = np.zeros((N, 2), dtype=np.int64)
        dynamic_rollout_batch(self.md, self.td, self.fd, self.cd, q0, qvel0, cmds, dt, P, Q, stats, status)
        return Q, stats, status

    def _raise(self, status: int, row: int, dt: float) -> None:
        if status != 0:
            raise ModelError(f"{self.model.name}: step {row} (t = {row * dt:g} s): {_STATUS.get(status, status)}")


class CompiledKinematics:
    """Compiled kinematic model (stabilized DAE, Euler integration) of one vehicle on one terrain.

    Args as :class:`CompiledDynamics`; ``sigma`` is the Baumgarte gain (1/s, eqs. 2.35–2.36).  Raises
    :class:`NotCompilable` for what only the Python path runs (enhanced mode, RK4, custom controllers).
    """

    def __init__(self, model: WmrModel, terrain, controller: BodyVelocityController | None, sigma: float,  # noqa: ANN001
                 exact_terrain: bool = False) -> None:
        if controller is not None and not isinstance(controller, BodyVelocityController):
            raise NotCompilable("a custom controller callable runs on the Python path")
        self.model, self.sigma = model, float(sigma)
        self.md = model_data(model)
        self.td = terrain_data(terrain, exact_only=exact_terrain)
        self.cd = controller_data(controller, model)
        self.n_cmd = 2 if controller is not None else len(model.actuated_joint_names)
        self._warm = False

    def warm_up(self, quiet: bool = False) -> None:
        """Compile (or load from the cache) the kernels with a one-row rollout (a cold compile is announced on
        stderr unless ``quiet``)."""
        if not self._warm:
            cmds = np.zeros((1, self.n_cmd))
            _cache.compiled("kinematic", lambda: _ignore_model_error(
                lambda: self.rollout(self.model.neutral_state(), cmds, 0.01)), quiet)
            self._warm = True

    def rollout(self, q0: NDArray, cmds: NDArray, dt: float) -> tuple[NDArray, ...]:
        """(Q, QV, DZ, CP, VC, RES) for command rows ``cmds`` (n+1, m); raises ModelError on failure."""
        from wmr_dynamics.compiled.kinematics import kinematic_rollout, kinematic_workspace

        m = self.model
        c = np.ascontiguousarray(cmds, dtype=float)
        if c.ndim != 2 or c.shape[1] != self.n_cmd or not np.all(np.isfinite(c)):
            raise ModelError(f"commands: expected finite rows of {self.n_cmd} values, got shape {c.shape}")
        n1, nw = c.shape[0], m.num_wheels
        Q = np.full((n1, m.num_states), np.nan)
        QV, DZ, CP = np.zeros((n1, m.num_dof)), np.zeros((n1, nw)), np.zeros((n1, nw, 3))
        VC, RES = np.zeros((n1, nw)), np.zeros(n1)
        ws = kinematic_workspace(self.md)
        status, row = kinematic_rollout(self.md, self.td, self.cd, ws, np.ascontiguousarray(q0, dtype=float), c,
                                        float(dt), self.sigma, Q, QV, DZ, CP, VC, RES)
        if status != 0:
            raise ModelError(f"{m.name}: step {row} (t = {row * dt:g} s): {_KIN_STATUS.get(status, status)}")
        return Q, QV, DZ, CP, VC, RES


_KIN_STATUS = {1: "the terrain returned a non-finite height or normal under a wheel",
               2: "the kinematic constraint system is singular",
               3: "the state became non-finite",
               4: "the controller produced a non-finite joint rate command"}


def _ignore_model_error(call) -> None:  # noqa: ANN001
    """Run a warm-up call: the neutral state may be off the terrain; compilation happened all the same."""
    try:
        call()
    except ModelError:
        pass


def _rows(name: str, x: NDArray, N: int, width: int) -> NDArray:
    """``x`` as an (N, width) finite C array: one row for all trajectories, or one per trajectory."""
    x = np.asarray(x, dtype=float)
    if x.shape not in ((width,), (N, width)):
        raise ModelError(f"{name}: expected shape ({width},) or ({N}, {width}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ModelError(f"{name}: contains NaN or inf")
    return np.ascontiguousarray(np.broadcast_to(x, (N, width)))
