"""Actuator models (thesis eq. 2.73) for force-balance optimization (joint-constraint models, eq. 2.74:
:mod:`wmr_dynamics.joint_models`).

Force-balance optimization (§2.4.3) needs each model's force *and* its derivative with respect to the
velocities it solves for.  The models here are evaluated at the candidate joint rates of the *next* time
step (eq. 2.61 / 2.83), so anything integrated over the step (a PI controller's integral) is a *tentative*
value until the step is accepted.  Models are immutable parameter sets: the state they integrate lives in
the simulation's data (:class:`~wmr_dynamics.stepper.SimData`, ``integral``), is passed to
:meth:`PIActuator.evaluate` and advanced by :meth:`PIActuator.advance` once a step is accepted, so one model
may serve any number of simulations.

Units: joint rates θ̇ and commands u in rad/s (m/s for prismatic joints), forces in N·m (N), dt in s.
Arrays run over the actuated joints in ``WmrModel.actuated_joint_names`` order.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.errors import ModelError, VehicleConfigError
from wmr_dynamics.registry import ModelKind, Registry

__all__ = [
    "ACTUATOR_MODELS", "ActuatorModel", "IdealActuator", "PIActuator", "TorqueSpeedActuator", "actuator_from_config",
]


def _vec(owner: str, name: str, value: Any, n: int | None = None) -> NDArray:
    try:
        a = np.atleast_1d(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {name} must be numeric, got {value!r}") from None
    if a.ndim != 1:
        raise ModelError(f"{owner}: {name} must be a number or a 1-D array, got shape {a.shape}")
    if n is not None and a.size not in (1, n):
        raise ModelError(f"{owner}: {name} has {a.size} entries, expected {n}")
    bad = ~np.isfinite(a)
    if bad.any():
        raise ModelError(f"{owner}: {name} has NaN or inf at indices {np.argwhere(bad).ravel().tolist()}")
    return np.ascontiguousarray(a)


def _param(owner: str, name: str, value: Any, ok, what: str) -> NDArray:
    a = _vec(owner, f"parameter '{name}'", value)
    if not np.all(ok(a)):
        raise ModelError(f"{owner}: parameter '{name}' must be {what}, got {value!r}")
    return a


def _unbox(a: NDArray) -> float | NDArray:
    return float(a[0]) if a.size == 1 else a


class ActuatorModel(abc.ABC):
    """``f_act = f(θ_act, θ̇_act, u, ...)`` (thesis eq. 2.73) with its derivative in θ̇.

    Subclass and implement :meth:`evaluate` (a stateless law of θ, θ̇, u and dt).  A model may couple joints:
    the derivative is a full (na, na) matrix.  A Python model runs inside the compiled engine through a
    callback (:mod:`wmr_dynamics.compiled.callbacks`).
    """

    name: str = "custom"
    #: compiled kernel ``kernel(θ̇, u, dt, integral, P, f, df, state)`` registered in :data:`ACTUATOR_MODELS`
    #: (P = :meth:`kernel_data`), or None: a Python model, called back from the compiled step
    kernel: Callable[..., None] | None = None
    #: True: the dynamics enforces θ̇ = u exactly instead of calling :meth:`evaluate` (§2.4.4)
    ideal: bool = False

    @abc.abstractmethod
    def evaluate(self, theta: ArrayLike, theta_dot: ArrayLike, u: ArrayLike, dt: float) -> tuple[NDArray, NDArray]:
        """Actuator forces at the candidate next-step joint rates.

        Args:
            theta: (na,) actuated joint displacements, rad or m.
            theta_dot: (na,) actuated joint rates, rad/s or m/s.
            u: (na,) commanded joint rates, same units.
            dt: time step, s (> 0).

        Returns:
            ``(f, df_dthetadot)``: (na,) forces/torques exerted by the actuators (positive drives the joint in
            its positive direction), N or N·m; (na, na) ``∂f_i/∂θ̇_j``.
        """

    def _check(self, theta_dot: ArrayLike, u: ArrayLike, dt: float) -> tuple[NDArray, NDArray, float]:
        td = _vec(f"{self.name} actuator", "theta_dot", theta_dot)
        uu = _vec(f"{self.name} actuator", "u", u, td.size)
        if uu.size != td.size:
            uu = np.full(td.size, uu[0])
        if not (isinstance(dt, (int, float, np.floating)) and math.isfinite(dt) and dt > 0):
            raise ModelError(f"{self.name} actuator: dt must be a positive number of seconds, got {dt!r}")
        return td, uu, float(dt)


class IdealActuator(ActuatorModel):
    """Ideal actuators (thesis §2.4.4, as Open Dynamics Engine's motors): any force needed to make θ̇ = u.

    There is no force law: the dynamics removes the actuated rates from the force-balance inputs, sets them
    to the commands and drops the actuator rows from the cost.  :meth:`evaluate` therefore raises
    :class:`ModelError`; check :attr:`ideal` first.  The actual actuator forces are the constraint forces λ.
    """

    name = "ideal"
    ideal = True

    def evaluate(self, theta, theta_dot, u, dt):
        raise ModelError("ideal actuator: there is no force model to evaluate; the dynamics enforces θ̇ = u "
                         "(thesis §2.4.4) — test `actuator.ideal` before calling evaluate()")

    def __repr__(self) -> str:
        return "IdealActuator()"


@njit(_nrt=False)
def _pi_kernel(theta_dot: NDArray, u: NDArray, dt: float, integral: NDArray, kp: NDArray, ki: NDArray,
               limit: NDArray, smooth: bool, f: NDArray, df: NDArray, trial: NDArray) -> None:
    """PI law with the integral advanced by this step; ``f``, the diagonal of ``df`` (na, na) (the rest is left
    untouched: zero), ``trial`` (tentative integral)."""
    n = theta_dot.shape[0]
    for i in range(n):
        a = kp[0] if kp.shape[0] == 1 else kp[i]
        b = ki[0] if ki.shape[0] == 1 else ki[i]
        L = limit[0] if limit.shape[0] == 1 else limit[i]
        e = u[i] - theta_dot[i]
        trial[i] = integral[i] + e * dt
        fu = a * e + b * trial[i]
        dfu = -(a + b * dt)
        if L > 0.0 and smooth:
            t = math.tanh(fu / L)
            f[i] = L * t
            df[i, i] = (1.0 - t * t) * dfu
        elif L > 0.0 and (fu > L or fu < -L):
            f[i] = L if fu > 0.0 else -L
            df[i, i] = 0.0
        else:
            f[i] = fu
            df[i, i] = dfu


@njit(_nrt=False)
def pi_actuator_kernel(theta_dot: NDArray, u: NDArray, dt: float, integral: NDArray, P: NDArray, f: NDArray,
                       df: NDArray, state: NDArray) -> None:
    """The registered PI kernel; P rows (kp, ki, torque limit (0 = none), tanh flag) per joint.  ``state``:
    the integral after this step, clamped to ``|ki·I| <= limit`` (anti-windup; the force uses it unclamped)."""
    _pi_kernel(theta_dot, u, dt, integral, P[0], P[1], P[2], P[3, 0] > 0.5, f, df, state)
    for i in range(theta_dot.shape[0]):
        ki = P[1, 0] if P.shape[1] == 1 else P[1, i]
        lim = P[2, 0] if P.shape[1] == 1 else P[2, i]
        if lim > 0.0 and ki > 0.0:
            state[i] = min(max(state[i], -lim / ki), lim / ki)


class PIActuator(ActuatorModel):
    """Proportional–integral rate controller: ``f = kp (u − θ̇) + ki ∫(u − θ̇) dt``, optionally torque-limited.

    The integral ``I`` is the simulation's state (``SimData.integral``), not the model's: :meth:`evaluate`
    uses the integral advanced by this step, ``I + (u − θ̇)·dt`` (θ̇ being the candidate next-step rate), so
    ``∂f/∂θ̇ = −(kp + ki·dt)``; :meth:`advance` gives the integral after an accepted step.

    Torque limit ``torque_limit`` (eq. 2.72, ODE's ``dParamFMax``), per joint or shared:

    * ``saturation="clip"`` (default): ``f = clip(f_u, −L, L)``; the derivative is ``−(kp + ki·dt)`` inside and
      exactly 0 once ``|f_u| > L`` (one-sided at ``|f_u| = L``).
    * ``saturation="tanh"``: ``f = L·tanh(f_u/L)``, smooth, derivative ``(1 − tanh²)·∂f_u/∂θ̇``.

    With a limit, :meth:`advance` clamps the integral to ``|ki·I| <= L`` (anti-windup).

    Args:
        kp: N·m per rad/s (>= 0), a number or one per joint.  ki: N·m per rad (>= 0).
        torque_limit: N·m (> 0) or None for no limit.  n: number of actuated joints, if known (checks the
            per-joint parameters' lengths).
    """

    name = "pi"
    kernel = staticmethod(pi_actuator_kernel)

    def __init__(self, kp, ki=0.0, torque_limit=None, saturation: str = "clip", n: int | None = None) -> None:
        owner = "pi actuator"
        self.kp = _param(owner, "kp", kp, lambda a: a >= 0, ">= 0")
        self.ki = _param(owner, "ki", ki, lambda a: a >= 0, ">= 0")
        self.torque_limit = None if torque_limit is None else _param(owner, "torque_limit", torque_limit,
                                                                     lambda a: a > 0, "> 0 (N·m)")
        if saturation not in ("clip", "tanh"):
            raise ModelError(f"{owner}: parameter 'saturation' must be 'clip' or 'tanh', got {saturation!r}")
        self.saturation = saturation
        self._limit = np.zeros(1) if self.torque_limit is None else self.torque_limit
        sizes = {a.size for a in (self.kp, self.ki, self._limit) if a.size > 1}
        if len(sizes) > 1:
            raise ModelError(f"{owner}: per-joint parameters have different lengths {sorted(sizes)}")
        self.n = int(n) if n is not None else (sizes.pop() if sizes else None)

    def kernel_data(self, n: int) -> NDArray:
        """(4, n) parameter rows of :attr:`kernel`: kp, ki, torque limit (0: none), tanh flag."""
        self._integral(n, None)  # checks the per-joint lengths
        P = np.zeros((4, max(n, 1)))
        P[0], P[1], P[2] = self.kp, self.ki, self._limit
        P[3] = 1.0 if self.saturation == "tanh" else 0.0
        return P

    def _integral(self, n: int, integral: ArrayLike | None) -> NDArray:
        if self.n is not None and self.n != n:
            raise ModelError(f"pi actuator: called with {n} joints, configured for {self.n}")
        for a, name in ((self.kp, "kp"), (self.ki, "ki"), (self._limit, "torque_limit")):
            if a.size not in (1, n):
                raise ModelError(f"pi actuator: parameter '{name}' has {a.size} entries for {n} joints")
        if integral is None:
            return np.zeros(n)
        i = _vec("pi actuator", "integral", integral, n)
        return np.full(n, i[0]) if i.size != n else i

    def _law(self, theta_dot, u, dt, integral) -> tuple[NDArray, NDArray, NDArray]:
        td, uu, dt = self._check(theta_dot, u, dt)
        n = td.size
        I0 = self._integral(n, integral)
        f, d, state = np.empty(n), np.zeros((n, n)), np.empty(n)
        pi_actuator_kernel(td, uu, dt, I0, self.kernel_data(n), f, d, state)
        return f, d, state

    def evaluate(self, theta, theta_dot, u, dt, integral: ArrayLike | None = None):
        """Forces and ∂f/∂θ̇ with the committed integral ``integral`` (rad; default zero) advanced by this step."""
        f, d, _ = self._law(theta_dot, u, dt, integral)
        return f, d

    def advance(self, theta_dot: ArrayLike, u: ArrayLike, dt: float, integral: ArrayLike | None = None) -> NDArray:
        """The integral after accepting a step that ended at rates ``theta_dot``: ``I + (u − θ̇)·dt``, clamped
        to ``|ki·I| <= torque_limit`` (anti-windup)."""
        return self._law(theta_dot, u, dt, integral)[2]

    def __repr__(self) -> str:
        lim = None if self.torque_limit is None else _unbox(self.torque_limit)
        return (f"PIActuator(kp={_unbox(self.kp)}, ki={_unbox(self.ki)}, torque_limit={lim}, "
                f"saturation={self.saturation!r})")


@njit(_nrt=False)
def _torque_speed_kernel(theta_dot: NDArray, u: NDArray, stall: NDArray, w0: NDArray, gain: NDArray,
                         limit: NDArray, f: NDArray, df: NDArray) -> None:
    for i in range(theta_dot.shape[0]):
        T = stall[0] if stall.shape[0] == 1 else stall[i]
        W = w0[0] if w0.shape[0] == 1 else w0[i]
        g = gain[0] if gain.shape[0] == 1 else gain[i]
        L = limit[0] if limit.shape[0] == 1 else limit[i]
        volt = (u[i] + g * (u[i] - theta_dot[i])) / W  # commanded voltage / max voltage
        dvolt = -g / W
        if volt > 1.0:
            volt, dvolt = 1.0, 0.0
        elif volt < -1.0:
            volt, dvolt = -1.0, 0.0
        fi = T * (volt - theta_dot[i] / W)  # DC motor: τ = stall (V/V_max − θ̇/ω0)
        dfi = T * (dvolt - 1.0 / W)
        if fi > L:
            fi, dfi = L, 0.0
        elif fi < -L:
            fi, dfi = -L, 0.0
        f[i] = fi
        df[i, i] = dfi


@njit(_nrt=False)
def torque_speed_actuator_kernel(theta_dot: NDArray, u: NDArray, dt: float, integral: NDArray, P: NDArray,
                                 f: NDArray, df: NDArray, state: NDArray) -> None:
    """The registered torque–speed kernel; P rows (stall torque, no-load speed, gain, torque limit); stateless
    (``state`` = ``integral``)."""
    _torque_speed_kernel(theta_dot, u, P[0], P[1], P[2], P[3], f, df)
    for i in range(theta_dot.shape[0]):
        state[i] = integral[i]


class TorqueSpeedActuator(ActuatorModel):
    """A voltage-limited DC motor with a rate controller: the torque–speed line ``τ = stall·(V/V_max − θ̇/ω0)``.

    The controller sets the voltage that holds the commanded rate at no load, plus rate feedback,
    ``V/V_max = clip((u + gain·(u − θ̇))/ω0, −1, 1)``.  Unsaturated, ``f = stall·(1 + gain)·(u − θ̇)/ω0``;
    at full voltage the torque follows the motor line toward the command, ``f = ±stall − stall·θ̇/ω0``
    (stall torque at rest, zero at the no-load speed).  The torque is capped at ``|f| <= torque_limit``
    (default: the stall torque, i.e. a current limit; braking against the motion would otherwise exceed it).

    Derivative ``∂f/∂θ̇``: ``−stall·(1 + gain)/ω0`` unsaturated, ``−stall/ω0`` at full voltage, 0 when capped
    (one-sided at the switches).

    Args:
        stall_torque: N·m (> 0).  no_load_speed: rad/s (> 0).  gain: dimensionless rate feedback (>= 0,
        default 0).  torque_limit: N·m (> 0), default ``stall_torque``.  Numbers or one per joint.
    """

    name = "torque_speed"
    kernel = staticmethod(torque_speed_actuator_kernel)

    def __init__(self, stall_torque, no_load_speed, gain=0.0, torque_limit=None) -> None:
        owner = "torque_speed actuator"
        self.stall_torque = _param(owner, "stall_torque", stall_torque, lambda a: a > 0, "> 0 (N·m)")
        self.no_load_speed = _param(owner, "no_load_speed", no_load_speed, lambda a: a > 0, "> 0 (rad/s)")
        self.gain = _param(owner, "gain", gain, lambda a: a >= 0, ">= 0")
        self.torque_limit = self.stall_torque if torque_limit is None else _param(
            owner, "torque_limit", torque_limit, lambda a: a > 0, "> 0 (N·m)")

    def kernel_data(self, n: int) -> NDArray:
        """(4, n) parameter rows of :attr:`kernel`: stall torque, no-load speed, gain, torque limit."""
        P = np.zeros((4, max(n, 1)))
        for r, (a, name) in enumerate(((self.stall_torque, "stall_torque"), (self.no_load_speed, "no_load_speed"),
                                       (self.gain, "gain"), (self.torque_limit, "torque_limit"))):
            if a.size not in (1, n):
                raise ModelError(f"torque_speed actuator: parameter '{name}' has {a.size} entries for {n} joints")
            P[r, :n] = a
        return P

    def evaluate(self, theta, theta_dot, u, dt):
        td, uu, dt = self._check(theta_dot, u, dt)
        n = td.size
        f, d, state = np.empty(n), np.zeros((n, n)), np.zeros(n)
        torque_speed_actuator_kernel(td, uu, dt, state, self.kernel_data(n), f, d, state)
        return f, d

    def __repr__(self) -> str:
        return (f"TorqueSpeedActuator(stall_torque={_unbox(self.stall_torque)}, "
                f"no_load_speed={_unbox(self.no_load_speed)}, gain={_unbox(self.gain)}, "
                f"torque_limit={_unbox(self.torque_limit)})")


ACTUATOR_MODELS = Registry("actuator", (
    ModelKind("ideal", IdealActuator, (), "thesis §2.4.4: θ̇ = u enforced as a rigid row"),
    ModelKind("pi", PIActuator, (pi_actuator_kernel,), "thesis eq. 2.73 with a PI law, eq. 2.72 limit"),
    ModelKind("torque_speed", TorqueSpeedActuator, (torque_speed_actuator_kernel,), "DC motor torque–speed line"),
))
#: the vehicle YAML's parameters of each model with a force law (constructor arguments; ``n`` is the joints')
_ACTUATOR_KEYS = {e.name: (e.cls, set(ACTUATOR_MODELS.parameters(e.name)[0]) - {"n"})
                  for e in ACTUATOR_MODELS.entries if e.kernels}


def actuator_from_config(cfg: dict | None, n_actuated: int) -> ActuatorModel:
    """The actuator model of a vehicle YAML's ``actuators:`` block (docs/vehicle_yaml.md).

    ``{model: ideal}`` (the default, also for ``cfg=None``), ``{model: pi, pi: {kp, ki, torque_limit,
    saturation}}`` or ``{model: torque_speed, torque_speed: {stall_torque, no_load_speed, gain,
    torque_limit}}``.  Sub-blocks of the models not selected are allowed (a YAML may keep ``pi:`` settings
    while running ideal actuators).  ``n_actuated`` sizes the model's state and checks per-joint lists.
    """
    if not isinstance(n_actuated, (int, np.integer)) or n_actuated < 0:
        raise ModelError(f"actuators: n_actuated must be a non-negative integer, got {n_actuated!r}")
    if not cfg:
        return IdealActuator()
    if not isinstance(cfg, dict):
        raise ModelError(f"actuators: must be a mapping {{model: ideal|pi|torque_speed, ...}}, got {cfg!r}")
    valid = ["ideal", *_ACTUATOR_KEYS]
    extra = sorted(set(cfg) - {"model", *_ACTUATOR_KEYS})
    if extra:
        raise ModelError(f"actuators: unknown key(s) {extra}; allowed: model, {', '.join(_ACTUATOR_KEYS)}")
    model = cfg.get("model", "ideal")
    for key in _ACTUATOR_KEYS:
        if key in cfg and not isinstance(cfg[key], dict):
            raise ModelError(f"actuators: '{key}' must be a mapping of parameters, got {cfg[key]!r}")
    if model == "ideal":
        return IdealActuator()
    if model not in _ACTUATOR_KEYS:
        raise ModelError(f"actuators: unknown model {model!r}; valid models: {', '.join(valid)}")
    cls, keys = _ACTUATOR_KEYS[model]
    params = dict(cfg.get(model) or {})
    unknown = sorted(set(params) - keys)
    if unknown:
        raise VehicleConfigError(f"actuators: {model}: unknown parameter(s) {unknown}; valid: "
                                 f"{', '.join(sorted(keys))}")
    required = [k for k in ACTUATOR_MODELS.parameters(model)[1] if k in keys]
    missing = [k for k in required if k not in params]
    if missing:
        optional = sorted(keys - set(required))
        raise VehicleConfigError(
            f"actuators: {model}: missing parameter(s) {', '.join(missing)} under 'actuators.{model}' "
            f"(required: {', '.join(required)}; optional: {', '.join(optional) or 'none'})")
    try:
        act = cls(**params)
    except TypeError as e:
        raise ModelError(f"actuators: {model}: {e}") from None
    except ModelError as e:
        raise ModelError(f"actuators: {e}") from None
    for name in ("kp", "ki", "torque_limit", "stall_torque", "no_load_speed", "gain"):
        a = getattr(act, name, None)
        if isinstance(a, np.ndarray) and a.size not in (1, n_actuated):
            raise ModelError(f"actuators: {model}: '{name}' has {a.size} entries for {n_actuated} actuated joints")
    return act
