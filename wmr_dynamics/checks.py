"""Checks of the public API's arrays, once at the boundary (docs/reliability.md).

Everything a user hands to :class:`~wmr_dynamics.simulate.Simulator`, :class:`~wmr_dynamics.stepper.Stepper`
or a rollout passes through here before it reaches NumPy or the compiled kernels: the array is converted
with its dtype and shape checked (ragged nested lists and strings are named as such), values must be finite,
and a state's body quaternion must be nonzero (it is normalised; a norm off 1 by more than
:data:`QUAT_TOLERANCE` is normalised with a warning).  Errors are :class:`~wmr_dynamics.errors.StateError`
or :class:`~wmr_dynamics.errors.CommandError` naming the argument, what was expected and what came.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics.errors import ArgumentError, CommandError, StateError

#: a body quaternion whose norm is off 1 by more than this is normalised with a warning
QUAT_TOLERANCE = 1e-6
#: a body quaternion with a norm below this is refused (it has no direction to normalise to)
QUAT_MIN_NORM = 1e-6


def _short(x: Any, limit: int = 80) -> str:
    s = repr(x)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def as_float_array(name: str, x: ArrayLike, error: type[ArgumentError] = ArgumentError) -> NDArray:
    """``x`` as a float64 array; ragged nested lists, strings, None and objects raise ``error`` naming ``name``."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:  # the common case, without the checks below
        return np.ascontiguousarray(x)
    if x is None:
        raise error(f"{name}: expected numbers, got None")
    if isinstance(x, (str, bytes)):
        raise error(f"{name}: expected numbers, got the string {_short(x)}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's ComplexWarning etc.: the dtype check below decides
            a = np.asarray(x)
    except ValueError:  # "setting an array element with a sequence ... inhomogeneous shape"
        raise error(f"{name}: ragged rows (not every row has the same length): {_short(x)}") from None
    if a.dtype == object:
        raise error(f"{name}: expected a rectangular array of numbers, got ragged or mixed rows {_short(x)}")
    if a.dtype.kind not in "biuf":
        raise error(f"{name}: expected numbers, got {a.dtype} values {_short(x)}")
    return np.ascontiguousarray(a, dtype=np.float64)


def finite(name: str, a: NDArray, error: type[ArgumentError] = ArgumentError) -> NDArray:
    """``a`` unchanged if every value is finite; else ``error`` naming the first bad index."""
    bad = ~np.isfinite(a)
    if bad.any():
        k = tuple(int(i) for i in np.argwhere(bad)[0])
        raise error(f"{name}: non-finite value {a[k]} at index {list(k) if len(k) > 1 else k[0]}")
    return a


def vector(name: str, x: ArrayLike, n: int, what: str = "numbers",
           error: type[ArgumentError] = ArgumentError) -> NDArray:
    """``x`` as (n,) finite float64 (a scalar or any shape of n values is accepted, as ``ravel``)."""
    a = as_float_array(name, x, error).ravel()
    if a.size != n:
        raise error(f"{name}: expected {n} {what}, got {a.size} ({_short(a.tolist())})")
    return finite(name, a, error)


def number(name: str, x: Any, *, positive: bool = False, unit: str = "",
           error: type[ArgumentError] = ArgumentError) -> float:
    """A finite real (> 0 with ``positive``), as float; bools, strings and arrays are refused with
    ``"<name> must be a positive number of <unit>, got <x>"``."""
    span = f"{'positive' if positive else 'finite'} number" + (f" of {unit}" if unit else "")
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
            x = x.item()
        else:
            raise error(f"{name} must be a {span}, got {_short(x)}")
    v = float(x)
    if not math.isfinite(v) or (positive and v <= 0):
        raise error(f"{name} must be a {span}, got {v!r}")
    return v


def _unit_quaternions(name: str, q: NDArray) -> NDArray:
    """Normalise the quaternion block ``q[..., :4]`` in place (refusing zero ones, warning on ones far off 1)."""
    if q.ndim == 1:  # one state (every step of a Python loop): scalar arithmetic, a tenth of the array path's time
        x, y, z, w = q[:4].tolist()
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if QUAT_MIN_NORM <= norm and abs(norm - 1.0) <= 4 * np.finfo(float).eps:
            return q
    norms = np.linalg.norm(q[..., :4], axis=-1)
    low = np.atleast_1d(norms < QUAT_MIN_NORM)
    if low.any():
        where = "" if q.ndim == 1 else f" (row {int(np.flatnonzero(low)[0])})"
        raise StateError(f"{name}: the body quaternion q[0:4] (x, y, z, w) is zero{where}: it has no orientation; "
                         "give a unit quaternion, e.g. [0, 0, 0, 1] for upright")
    off = np.abs(norms - 1.0)
    if np.max(off) > QUAT_TOLERANCE:
        warnings.warn(f"{name}: the body quaternion has norm {float(np.atleast_1d(norms)[np.argmax(off)]):.6g}; "
                      "normalised to a unit quaternion", stacklevel=3)
    # quaternions already unit to rounding stay bit-identical (a state handed back in equals the one handed out)
    scale = np.where(off > 4 * np.finfo(float).eps, norms, 1.0)
    q[..., :4] /= scale[..., None]
    return q


def state(name: str, q: ArrayLike, nq: int) -> NDArray:
    """A state (nq,) = [quaternion (x, y, z, w); position m; joints]: finite, quaternion normalised."""
    a = vector(name, q, nq, "state values ([quaternion x y z w; position x y z m; joint angles])", StateError)
    return _unit_quaternions(name, a.copy())


def rows(name: str, x: ArrayLike, N: int, width: int, error: type[ArgumentError] = StateError) -> NDArray:
    """``x`` as an (N, width) finite C array of its own (writable): one row shared by all N, or one row each.

    Always a new writable array: a read-only one (``broadcast_to``'s view of an (N, width) input) is another
    argument type for the compiled kernels, which then compile a second specialization (the batch's rollout
    loop: ≈ 250 s more of the install's warm-up)."""
    a = as_float_array(name, x, error)
    if a.shape not in ((width,), (N, width)):
        raise error(f"{name}: expected shape ({width},) or ({N}, {width}), got {a.shape}")
    finite(name, a, error)
    return np.array(np.broadcast_to(a, (N, width)), order="C")


def state_rows(name: str, x: ArrayLike, N: int, nq: int) -> NDArray:
    """N states (one shared or one each), finite, quaternions normalised (see :func:`state`)."""
    return _unit_quaternions(name, rows(name, x, N, nq, StateError))


def command_array(name: str, x: ArrayLike, lead: tuple[int, ...] | None, width: int, what: str) -> NDArray:
    """Commands as a finite C array of shape (*lead, steps+1, width) (``lead`` None: any one leading size)."""
    a = as_float_array(name, x, CommandError)
    nlead = 1 if lead is None else len(lead)
    ok = a.ndim == nlead + 2 and a.shape[-1] == width and a.shape[-2] >= 1 and all(a.shape[:nlead])
    if ok and lead is not None:
        ok = a.shape[:nlead] == lead
    if not ok:
        want = ("N" if lead is None else ", ".join(map(str, lead))) + ", steps+1" if nlead else "steps+1"
        raise CommandError(f"{name}: expected shape ({want}, {width}) of {what}, got {a.shape}")
    return finite(name, a, CommandError)
