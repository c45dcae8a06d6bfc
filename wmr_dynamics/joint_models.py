"""Joint-constraint models (thesis eq. 2.74): the force ``f(c, ċ)`` along a joint row, with its derivatives.

A joint row is either a holonomic joint constraint (eq. 2.25, residual ``c = A_joint θ − b``; e.g. Rocky 7's
rocker differential) or one joint with a spring (``c = θ − rest``, a suspension).  Kinematics enforces
``c = 0``; force-balance optimization (§2.4.3) enforces the model ``f(c, ċ)``, evaluated at the step's end
(eq. 2.83: ``c + ċ·dt``, ċ the candidate rate), so the total derivative in ċ is ``∂f/∂c·dt + ∂f/∂ċ``.  The
thesis allows any ``f(θ, θ̇)``; the bundled models, declared once in :data:`JOINT_MODELS`:

================  ==============  ===================================================================
name              class           law
================  ==============  ===================================================================
``spring_damper`` SpringDamper    ``f = −k (c − rest) − d ċ`` (eq. 2.74 as written; the default)
``bump_stop``     BumpStop        spring–damper inside ``[lower, upper]``, plus stiff end stops beyond
================  ==============  ===================================================================

A model written in Python (subclass :class:`JointModel`, implement :meth:`JointModel.evaluate`, leave
``kernel`` None) runs on the compiled engine through a callback, like Python contact and actuator models.

Units: ``c`` in m or rad (per unit of the constraint's coefficients), ``ċ`` per second, ``f`` in N or N·m.
A model's ``kernel(c, c_dot, P) -> (f, df_dc, df_dcdot)`` works on one row; ``P`` is :meth:`kernel_data`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.actuators import _param, _unbox, _vec
from wmr_dynamics.errors import ModelError
from wmr_dynamics.registry import ModelKind, Registry

__all__ = ["JOINT_MODELS", "BumpStop", "JointModel", "SpringDamper", "joint_model_from_config"]

#: length of a joint row's parameter vector P (every model's kernel_data is padded to it)
N_PARAMS = 6


class JointModel(abc.ABC):
    """``f = f(c, ċ)`` on joint rows (eq. 2.74).  Subclass and implement :meth:`evaluate` for a model in Python."""

    name: str = "custom"
    #: compiled row kernel ``kernel(c, c_dot, P) -> (f, df_dc, df_dcdot)``, or None (a Python model)
    kernel: Callable[..., tuple[float, float, float]] | None = None

    @abc.abstractmethod
    def evaluate(self, c: ArrayLike, c_dot: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        """``(f, df_dc, df_dcdot)``, each like ``c``: the force along each row and its partial derivatives."""

    def kernel_data(self) -> NDArray:
        """The (N_PARAMS,) parameter row of :attr:`kernel` for one joint row."""
        raise ModelError(f"joint model {type(self).__name__} has no compiled kernel")


class _CompiledJointModel(JointModel):
    """A joint model with a compiled row kernel; :meth:`evaluate` runs it over arrays of rows."""

    _fields: tuple[str, ...] = ()

    def kernel_data(self) -> NDArray:
        values = [getattr(self, f) for f in self._fields]
        if any(v.size != 1 for v in values):
            raise ModelError(f"{self.name} joint model: the engine takes one model per joint row; give scalar "
                             f"parameters (got sizes {[v.size for v in values]})")
        P = np.zeros(N_PARAMS)
        P[:len(values)] = [float(v[0]) for v in values]
        return P

    def evaluate(self, c: ArrayLike, c_dot: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        owner = f"{self.name} joint model"
        cc = _vec(owner, "c", c)
        cd = _vec(owner, "c_dot", c_dot, cc.size)
        if cd.size != cc.size:
            raise ModelError(f"{owner}: c_dot has {cd.size} entries, c has {cc.size}")
        n = cc.size
        values = [getattr(self, f) for f in self._fields]
        for a, name in zip(values, self._fields, strict=True):
            if a.size not in (1, n):
                raise ModelError(f"{owner}: parameter '{name}' has {a.size} entries for {n} rows")
        out = np.empty((3, n))
        P = np.zeros(N_PARAMS)
        for i in range(n):
            P[:len(values)] = [v[0] if v.size == 1 else v[i] for v in values]
            out[:, i] = self.kernel(cc[i], cd[i], P)  # type: ignore[misc]
        return out[0], out[1], out[2]

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={_unbox(getattr(self, f))}" for f in self._fields)
        return f"{type(self).__name__}({shown})"


@njit(_nrt=False)
def spring_damper_kernel(c: float, c_dot: float, P: NDArray) -> tuple[float, float, float]:
    """Eq. 2.74: ``f = −k (c − rest) − d ċ``; P = (k, d, rest)."""
    k, d = P[0], P[1]
    return -k * (c - P[2]) - d * c_dot, -k, -d


class SpringDamper(_CompiledJointModel):
    """Linear spring–damper (thesis eq. 2.74): ``f = −stiffness·(c − rest) − damping·ċ``.

    Args:
        stiffness: N/m or N·m/rad (>= 0), damping: N·s/m or N·m·s/rad (>= 0), rest: residual at which the
        spring is relaxed (m or rad, default 0); numbers, or one per row for :meth:`evaluate`.
    """

    name = "spring_damper"
    kernel = staticmethod(spring_damper_kernel)
    _fields = ("stiffness", "damping", "rest")

    def __init__(self, stiffness, damping, rest=0.0) -> None:
        owner = "spring_damper model"
        self.stiffness = _param(owner, "stiffness", stiffness, lambda a: a >= 0, ">= 0")
        self.damping = _param(owner, "damping", damping, lambda a: a >= 0, ">= 0")
        self.rest = _param(owner, "rest", rest, lambda a: np.ones(a.shape, bool), "finite")

    @classmethod
    def from_constraints(cls, constraints, default_stiffness=None, default_damping=None) -> SpringDamper:
        """One spring–damper per :class:`~wmr_dynamics.model.JointConstraint` (their stiffness and damping)."""
        k, d = [], []
        for con in constraints:
            ks = con.stiffness if con.stiffness is not None else default_stiffness
            ds = con.damping if con.damping is not None else default_damping
            if ks is None or ds is None:
                raise ModelError(f"spring_damper model: joint constraint '{con.name}' has no stiffness/damping and "
                                 "no default was given")
            k.append(ks)
            d.append(ds)
        return cls(np.array(k, dtype=float), np.array(d, dtype=float))


@njit(_nrt=False)
def bump_stop_kernel(c: float, c_dot: float, P: NDArray) -> tuple[float, float, float]:
    """Spring–damper with end stops; P = (k, d, lower, upper, k_stop, d_stop) (see :class:`BumpStop`)."""
    k, d, lo, hi, ks, ds = P[0], P[1], P[2], P[3], P[4], P[5]
    f, dfc, dfcd = -k * c - d * c_dot, -k, -d
    if c > hi:
        s = -ks * (c - hi) - ds * c_dot
        if s < 0.0:  # the stop pushes back, it never pulls (no sticking when leaving it)
            f, dfc, dfcd = f + s, dfc - ks, dfcd - ds
    elif c < lo:
        s = -ks * (c - lo) - ds * c_dot
        if s > 0.0:
            f, dfc, dfcd = f + s, dfc - ks, dfcd - ds
    return f, dfc, dfcd


class BumpStop(_CompiledJointModel):
    """A suspension with end stops: eq. 2.74's spring–damper inside its travel, stiff stops beyond it.

    ``f = −stiffness·c − damping·ċ + f_stop`` with ``f_stop = min(0, −stop_stiffness·(c − upper) −
    stop_damping·ċ)`` above ``upper``, ``max(0, −stop_stiffness·(c − lower) − stop_damping·ċ)`` below
    ``lower``, and 0 in between: the stop only pushes (a real bump rubber), so a joint leaving it is not held.
    For a joint spring ``c = θ − rest``: ``lower``/``upper`` are deflections from rest (m or rad).

    Args:
        stiffness, damping: the suspension's own spring–damper (>= 0).  lower, upper: travel limits of c
        (lower <= upper).  stop_stiffness: (> 0), typically 10–100× the stiffness.  stop_damping: (>= 0).
    """

    name = "bump_stop"
    kernel = staticmethod(bump_stop_kernel)
    _fields = ("stiffness", "damping", "lower", "upper", "stop_stiffness", "stop_damping")

    def __init__(self, stiffness, damping, lower, upper, stop_stiffness, stop_damping=0.0) -> None:
        owner = "bump_stop model"
        self.stiffness = _param(owner, "stiffness", stiffness, lambda a: a >= 0, ">= 0")
        self.damping = _param(owner, "damping", damping, lambda a: a >= 0, ">= 0")
        self.lower = _param(owner, "lower", lower, lambda a: np.ones(a.shape, bool), "finite")
        self.upper = _param(owner, "upper", upper, lambda a: np.ones(a.shape, bool), "finite")
        self.stop_stiffness = _param(owner, "stop_stiffness", stop_stiffness, lambda a: a > 0, "> 0")
        self.stop_damping = _param(owner, "stop_damping", stop_damping, lambda a: a >= 0, ">= 0")
        if np.any(np.broadcast_to(self.lower, np.broadcast_shapes(self.lower.shape, self.upper.shape))
                  > self.upper):
            raise ModelError(f"{owner}: lower {_unbox(self.lower)} must be <= upper {_unbox(self.upper)}")


JOINT_MODELS = Registry("joint model", (
    ModelKind("spring_damper", SpringDamper, (spring_damper_kernel,), "thesis eq. 2.74"),
    ModelKind("bump_stop", BumpStop, (bump_stop_kernel,), "thesis eq. 2.74 with end stops"),
))


def joint_model_from_config(spec: dict[str, Any], where: str) -> tuple[JointModel | None, dict[str, float]]:
    """A vehicle YAML joint-row entry (``joint_springs.<joint>`` or ``constraint_models.<name>``) →
    ``(model or None, {stiffness, damping[, rest]})``.

    Without ``model:`` (or with ``model: spring_damper``) the row is eq. 2.74's linear spring–damper and the
    model is None (the row's own stiffness and damping are the law).  ``model: <name>`` builds that registered
    model from the entry's other keys (``rest`` excepted), which must then include its stiffness and damping
    — they stay the row's small-deflection linearization (stiff-ODE baseline, MJCF export).
    """
    if not isinstance(spec, dict):
        raise ModelError(f"{where}: must be a mapping such as {{stiffness: ..., damping: ...}}, got {spec!r}")
    spec = dict(spec)
    name = spec.pop("model", "spring_damper")
    rest = spec.pop("rest", None)
    if name not in JOINT_MODELS.names:
        raise ModelError(f"{where}: unknown joint model {name!r}; valid models: {', '.join(JOINT_MODELS.names)}")
    allowed, _ = JOINT_MODELS.parameters(name)
    try:
        values = {k: float(v) for k, v in spec.items()}
    except (TypeError, ValueError):
        raise ModelError(f"{where}: numbers expected, got {spec!r}") from None
    if name == "spring_damper":
        allowed = [a for a in allowed if a != "rest"]
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise ModelError(f"{where}: unknown key(s) {unknown} for the {name} model; allowed: "
                         f"{', '.join(['model', 'rest', *allowed])}")
    if "stiffness" not in values:
        raise ModelError(f"{where}: needs numeric stiffness (and optional damping, rest)")
    base = {"stiffness": values["stiffness"], "damping": values.get("damping", 0.0)}
    if rest is not None:
        try:
            base["rest"] = float(rest)
        except (TypeError, ValueError):
            raise ModelError(f"{where}: rest must be a number, got {rest!r}") from None
    if name == "spring_damper":
        return None, base
    try:
        return JOINT_MODELS.make(name, **{**values, "damping": base["damping"]}), base
    except ModelError as e:
        raise ModelError(f"{where}: {e}") from None
