"""The wheel–ground contact-model interface (thesis eq. 2.71 / C.1) and helpers shared by the models.

Conventions (every model, thesis App. C):

* ``v_c`` (nw, 3), m/s: velocity, relative to the ground, of the wheel's *material* point at the contact
  point, in contact-frame coordinates (x longitudinal = normal × wheel-y, y lateral, z along the terrain
  normal), i.e. rows of ``A_wheel q̇'`` (Alg. 2).  It includes the wheel's spin, so a wheel rolling without
  slip has ``v_x = 0``.
* ``R_omega`` (nw,), m/s: wheel radius × wheel angular velocity about its y axis; positive spins the contact
  point backwards (``−x``), i.e. drives the vehicle forwards.  The wheel-centre longitudinal speed is
  ``V_x = v_x + Rω`` (eq. C.12).
* ``dz`` (nw,), m: contact-height error (eq. 2.8); ``dz < 0`` is penetration / tyre compression / sinkage.
* Output ``f`` (nw, 3), N: force of the ground on the wheel at the contact point, contact-frame coordinates;
  ``f_z > 0`` pushes the wheel up.  With ``dz >= 0`` (no contact) the force and its derivatives are zero.
* Derivatives: ``df_dv[w, i, j] = ∂f_i/∂v_j``, ``df_dRw[w, i] = ∂f_i/∂(Rω)``, ``df_ddz[w, i] = ∂f_i/∂Δz``,
  as force-balance optimization needs them (§2.4.3).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics.errors import ModelError

#: columns of a contact kernel's ``mw`` output (nw, ≥ MOMENT_COLUMNS): the moment about each wheel's axis that the
#: model adds beyond its contact force's (N·m; Ding's resistance moment), then its partials w.r.t. v_x, v_y,
#: v_z, Rω and Δz.  Kernels without such a moment leave it untouched (the engine zeroes it).
MOMENT_COLUMNS = 6

Outputs = tuple[NDArray, NDArray, NDArray, NDArray]


class ContactModel(abc.ABC):
    """A wheel–ground contact model ``f_c = f(v_c, Rω, Δz)`` with its Jacobian (thesis eq. 2.71, C.1).

    **Writing your own model in Python.**  Subclass and implement :meth:`evaluate`; the dynamics calls it once
    per force-balance iteration with all wheels at once::

        class Sticky(ContactModel):
            name = "sticky"

            def __init__(self, kp, c):
                self.kp, self.c = kp, c

            def evaluate(self, v_c, R_omega, dz):
                v_c, R_omega, dz = self.check_inputs(v_c, R_omega, dz)
                nw = len(dz)
                f, df_dv = np.zeros((nw, 3)), np.zeros((nw, 3, 3))
                df_dRw, df_ddz = np.zeros((nw, 3)), np.zeros((nw, 3))
                on = dz < 0
                f[on, 2] = -self.kp * dz[on]
                df_ddz[on, 2] = -self.kp
                f[on, :2] = self.c * v_c[on, :2]
                df_dv[on, 0, 0] = df_dv[on, 1, 1] = self.c
                return f, df_dv, df_dRw, df_ddz

    A Python model runs at Python speed.  The bundled models are :class:`CompiledContactModel` subclasses
    whose :attr:`kernel` is a compiled loop over the wheels that the compiled dynamics can call directly.
    """

    #: short name, as used by :func:`~wmr_dynamics.contact_models.make_contact_model`
    name: str = "custom"
    #: compiled kernel ``kernel(v_c, R_omega, dz, P, aux, f, df_dv, df_dRw, df_ddz)``, or None (Python model)
    kernel: Callable[..., None] | None = None

    @abc.abstractmethod
    def evaluate(self, v_c: ArrayLike, R_omega: ArrayLike, dz: ArrayLike) -> Outputs:
        """Contact forces and their derivatives for ``nw`` wheels.

        Args:
            v_c: (nw, 3) contact-point velocities, m/s, contact-frame coordinates (see module docstring).
            R_omega: (nw,) wheel radius × angular velocity, m/s.
            dz: (nw,) contact-height errors, m (negative = penetration).

        Returns:
            ``(f, df_dv, df_dRw, df_ddz)``: (nw, 3) force on the wheel in N; (nw, 3, 3) ∂f/∂v_c in N·s/m;
            (nw, 3) ∂f/∂(Rω) in N·s/m; (nw, 3) ∂f/∂Δz in N/m.
        """

    @staticmethod
    def check_inputs(v_c: ArrayLike, R_omega: ArrayLike, dz: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        """Convert to contiguous float64 arrays and check shapes and finiteness; raise :class:`ModelError`."""
        v = _as_float("v_c", v_c)
        rw = _as_float("R_omega", R_omega)
        d = _as_float("dz", dz)
        if v.ndim != 2 or v.shape[1] != 3:
            raise ModelError(f"contact model: v_c must have shape (n_wheels, 3), got {v.shape}")
        nw = v.shape[0]
        if rw.shape != (nw,):
            raise ModelError(f"contact model: R_omega must have shape ({nw},) to match v_c, got {rw.shape}")
        if d.shape != (nw,):
            raise ModelError(f"contact model: dz must have shape ({nw},) to match v_c, got {d.shape}")
        for name, a in (("v_c", v), ("R_omega", rw), ("dz", d)):
            bad = ~np.isfinite(a)
            if bad.any():
                raise ModelError(f"contact model: {name} has NaN or inf at indices {np.argwhere(bad).ravel().tolist()}")
        return v, rw, d

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


#: rows of a contact kernel's ``work`` scratch array
WORK_ROWS = 5


def kernel_work(n_wheels: int) -> NDArray:
    """A contact kernel's ``work`` scratch array for ``n_wheels`` wheels."""
    return np.zeros((WORK_ROWS, max(5, n_wheels)))


class CompiledContactModel(ContactModel):
    """A contact model evaluated by a compiled (numba) kernel over the wheels.

    ``kernel(v_c, R_omega, dz, P, aux, f, df_dv, df_dRw, df_ddz, mw, work)`` writes the outputs of
    :meth:`ContactModel.evaluate` into the preallocated arrays ``f`` … ``df_ddz`` (overwriting every entry), and
    a model with a moment about the wheel's axis (``has_axle_moment``) writes it into ``mw`` (MOMENT_COLUMNS).
    ``work`` is scratch the kernel may overwrite, (WORK_ROWS, ≥ max(5, nw)) float64 (:func:`kernel_work`): the
    compiled step allocates nothing, so a kernel must not either (it is compiled without reference counting).
    ``P`` is a (1 or nw, n_params) float64 array of parameters (one row shared by all wheels, or one row per
    wheel) and ``aux`` a 1-D float64 array of model data (quadrature nodes, lookup tables); both come from
    :meth:`kernel_data`.  The compiled dynamics calls ``kernel`` directly; :meth:`evaluate` is the checked
    Python entry point.  To compile your own model, subclass this, set ``kernel`` to a
    ``staticmethod(njit(...))`` with that signature and fill ``self._P`` and ``self._aux`` in ``__init__``.
    """

    _P: NDArray
    _aux: NDArray
    _params: dict[str, Any]
    #: the kernel writes a moment about the wheel axis into ``mw`` (the force balance then applies it)
    has_axle_moment: bool = False
    #: the force law is smooth and nonlinear in v_c, Rω, Δz (not piecewise linear): the force balance's Newton
    #: loop needs several steps, and starts each from the previous step's factor (DynamicsOptions.reuse_factor)
    smooth_force: bool = False

    def kernel_data(self, n_wheels: int | None = None) -> tuple[NDArray, NDArray]:
        """``(P, aux)`` for :attr:`kernel`; checks that per-wheel parameters match ``n_wheels``."""
        if n_wheels is not None and self._P.shape[0] not in (1, n_wheels):
            raise ModelError(f"{self.name} contact model: parameters were given for {self._P.shape[0]} wheels, "
                             f"called with {n_wheels}")
        return self._P, self._aux

    @property
    def params(self) -> dict[str, Any]:
        """The constructor parameters (after defaults), for inspection and logging."""
        return dict(self._params)

    def evaluate(self, v_c: ArrayLike, R_omega: ArrayLike, dz: ArrayLike) -> Outputs:
        v, rw, d = self.check_inputs(v_c, R_omega, dz)
        nw = v.shape[0]
        P, aux = self.kernel_data(nw)
        f = np.empty((nw, 3))
        df_dv = np.empty((nw, 3, 3))
        df_dRw = np.empty((nw, 3))
        df_ddz = np.empty((nw, 3))
        self.kernel(v, rw, d, P, aux, f, df_dv, df_dRw, df_ddz, np.zeros((nw, MOMENT_COLUMNS)), kernel_work(nw))
        return f, df_dv, df_dRw, df_ddz

    def axle_moment(self, v_c: ArrayLike, R_omega: ArrayLike, dz: ArrayLike) -> NDArray:
        """(nw, 6): the moment (N·m) the model adds about each wheel's axis beyond its contact force's (Ding's
        resistance moment, 0 for the other models), and its partials w.r.t. v_x, v_y, v_z, Rω, Δz."""
        v, rw, d = self.check_inputs(v_c, R_omega, dz)
        nw = v.shape[0]
        P, aux = self.kernel_data(nw)
        mw = np.zeros((nw, MOMENT_COLUMNS))
        self.kernel(v, rw, d, P, aux, np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty((nw, 3)),
                    np.empty((nw, 3)), mw, kernel_work(nw))
        return mw

    def evaluate_into(self, v_c: NDArray, R_omega: NDArray, dz: NDArray, f: NDArray, df_dv: NDArray,
                      df_dRw: NDArray, df_ddz: NDArray) -> None:
        """Unchecked :meth:`evaluate` into preallocated float64 arrays (for hot loops written in Python)."""
        self.kernel(v_c, R_omega, dz, self._P, self._aux, f, df_dv, df_dRw, df_ddz,
                    np.zeros((v_c.shape[0], MOMENT_COLUMNS)), kernel_work(v_c.shape[0]))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self._params.items())
        return f"{type(self).__name__}({shown})"


# ---- parameter handling ---------------------------------------------------------------------------------

def _as_float(name: str, value: ArrayLike) -> NDArray:
    try:
        return np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"contact model: {name} must be numeric, got {value!r}") from None


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return repr(v.tolist()) if v.size <= 6 else f"array(shape={v.shape})"
    if isinstance(v, float):
        return f"{v:.6g}"
    return repr(v)


def per_wheel(model: str, name: str, value: Any, check: Callable[[NDArray], NDArray] | None = None,
              what: str = "") -> NDArray:
    """``value`` (a number or a 1-D sequence, one per wheel) as a float64 array; ModelError naming it if bad.

    ``check`` maps the array to a boolean mask of valid entries; ``what`` says what valid means.
    """
    try:
        a = np.atleast_1d(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError):
        raise ModelError(f"{model} contact model: parameter '{name}' must be a number or a list of numbers, "
                         f"got {value!r}") from None
    if a.ndim != 1 or a.size == 0:
        raise ModelError(f"{model} contact model: parameter '{name}' must be a number or a 1-D list, got shape "
                         f"{a.shape}")
    if not np.all(np.isfinite(a)):
        raise ModelError(f"{model} contact model: parameter '{name}' must be finite, got {value!r}")
    if check is not None and not np.all(check(a)):
        raise ModelError(f"{model} contact model: parameter '{name}' must be {what}, got {value!r}")
    return a


def stack_rows(model: str, columns: Sequence[tuple[str, NDArray]]) -> NDArray:
    """Broadcast per-wheel parameter columns (length 1 or k) into a (k, n_params) C-contiguous array."""
    lengths = {len(c) for _, c in columns if len(c) > 1}
    if len(lengths) > 1:
        detail = ", ".join(f"{n}: {len(c)}" for n, c in columns if len(c) > 1)
        raise ModelError(f"{model} contact model: per-wheel parameters have different lengths ({detail})")
    k = lengths.pop() if lengths else 1
    P = np.empty((k, len(columns)))
    for j, (_, c) in enumerate(columns):
        P[:, j] = c
    return P


def unbox(a: NDArray) -> float | NDArray:
    """A length-1 parameter array as a float, else the array."""
    return float(a[0]) if a.size == 1 else a


def positive(a: NDArray) -> NDArray:
    return a > 0


def nonnegative(a: NDArray) -> NDArray:
    return a >= 0


def nonpositive(a: NDArray) -> NDArray:
    return a <= 0
