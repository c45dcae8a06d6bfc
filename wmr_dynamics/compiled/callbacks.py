"""User models written in Python, called from inside the compiled engine.

A contact model or actuator that has no compiled kernel (a :class:`~wmr_dynamics.contact_models.ContactModel`
or :class:`~wmr_dynamics.actuators.ActuatorModel` subclass written in Python) still runs on the one engine:
the kernels dispatch its kind (``CONTACT_PYTHON``, ``ACTUATOR_PYTHON``) to a numba object-mode block that calls
back into Python through this module.  Everything else in the step — collision, CRBA/RNEA, the force
balance, integration — stays compiled; the call costs a few microseconds plus the model itself.

Models are held in a process-wide table by slot number (the kernels can only carry integers); a slot lives as
long as the :class:`Callbacks` handle that registered it.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.errors import ModelError

_MODELS: dict[int, object] = {}
_SLOTS = itertools.count(1)


def register(model: object) -> int:
    """Put ``model`` in the table; returns its slot (release it with :func:`release`)."""
    slot = next(_SLOTS)
    _MODELS[slot] = model
    return slot


def release(slot: int) -> None:
    _MODELS.pop(slot, None)


def registered(model: object, owner: object) -> int:
    """A slot for ``model`` that is released when ``owner`` is garbage-collected (0 for ``None``)."""
    if model is None:
        return 0
    slot = register(model)
    weakref.finalize(owner, release, slot)
    return slot


def contact_forces(slot: int, v_c: NDArray, R_omega: NDArray, dz: NDArray, f: NDArray, df_dv: NDArray,
                   df_dRw: NDArray, df_ddz: NDArray) -> None:
    """Evaluate the Python contact model in ``slot`` into the kernel's arrays (eq. 2.71)."""
    model = _MODELS[slot]
    out = model.evaluate(v_c.copy(), R_omega.copy(), dz.copy())
    _store(f"contact model {type(model).__name__}", out, (f, df_dv, df_dRw, df_ddz))


def actuator_forces(slot: int, theta: NDArray, theta_dot: NDArray, u: NDArray, dt: float, f: NDArray,
                    df: NDArray) -> None:
    """Evaluate the Python actuator model in ``slot`` (eq. 2.73): forces into ``f`` (na,), ∂f/∂θ̇ into ``df``."""
    model = _MODELS[slot]
    na = theta_dot.shape[0]
    out = model.evaluate(theta.copy(), theta_dot.copy(), u.copy(), dt)
    _store(f"actuator model {type(model).__name__}", out, (f[:na], df[:na, :na]))


def _store(who: str, out: object, dest: tuple) -> None:
    if not isinstance(out, tuple) or len(out) != len(dest):
        raise ModelError(f"{who}.evaluate must return a tuple of {len(dest)} arrays, got {type(out).__name__}")
    for k, (a, d) in enumerate(zip(out, dest, strict=True)):
        a = np.asarray(a, dtype=float)
        if a.shape != d.shape:
            raise ModelError(f"{who}.evaluate: output {k} has shape {a.shape}, expected {d.shape}")
        if not np.all(np.isfinite(a)):
            raise ModelError(f"{who}.evaluate: output {k} contains NaN or inf")
        d[...] = a
