"""User models and terrains written in Python, called from inside the compiled engine.

A contact, actuator or joint model that has no compiled kernel (a
:class:`~wmr_dynamics.contact_models.ContactModel`, :class:`~wmr_dynamics.actuators.ActuatorModel` or
:class:`~wmr_dynamics.joint_models.JointModel` subclass written in Python) still runs on the one engine:
the kernels dispatch its code (``registry.PYTHON``) to a numba object-mode block that calls
back into Python through this module.  Everything else in the step — collision, CRBA/RNEA, the force
balance, integration — stays compiled; the call costs a few microseconds plus the model itself.

A :class:`~wmr_dynamics.terrain.Terrain` subclass without a compiled kind (``TERRAIN_PYTHON``) is queried the same
way, one point at a time, from the contact search (:func:`terrain_slot`).

Models are held in a process-wide table by slot number (the kernels can only carry integers); a slot lives as
long as the object that owns it (:func:`registered`).  Terrains are held weakly: a slot lives as long as its
terrain.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.errors import ModelError, TerrainError

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


def terrain_slot(terrain: object) -> int:
    """A slot for ``terrain`` (held weakly, released when the terrain is garbage-collected)."""
    slot = register(weakref.ref(terrain))
    weakref.finalize(terrain, release, slot)
    return slot


def terrain_height_normal(slot: int, x: float, y: float) -> tuple[float, float, float, float]:
    """(h, n_x, n_y, n_z) of the Python terrain in ``slot`` at (x, y) (m, world); a non-finite answer is passed
    on (the contact search reports it under the wheel's name)."""
    terrain = _MODELS[slot]()
    h, n = terrain.height_normal(np.array([x]), np.array([y]))
    h, n = np.asarray(h, dtype=float).reshape(-1), np.asarray(n, dtype=float).reshape(-1)
    if h.size != 1 or n.size != 3:
        raise TerrainError(f"{type(terrain).__name__}.height_normal at one point must return one height and one "
                           f"normal (3,), got sizes {h.size} and {n.size}")
    return float(h[0]), float(n[0]), float(n[1]), float(n[2])


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


def joint_force(slot: int, c: float, c_dot: float) -> tuple[float, float, float]:
    """Evaluate the Python joint model in ``slot`` (eq. 2.74) on one row: ``(f, ∂f/∂c, ∂f/∂ċ)``."""
    model = _MODELS[slot]
    out = model.evaluate(np.array([c]), np.array([c_dot]))
    who = f"joint model {type(model).__name__}"
    if not isinstance(out, tuple) or len(out) != 3:
        raise ModelError(f"{who}.evaluate must return a tuple (f, df_dc, df_dcdot), got {type(out).__name__}")
    vals = []
    for k, a in enumerate(out):
        a = np.asarray(a, dtype=float).reshape(-1)
        if a.size != 1:
            raise ModelError(f"{who}.evaluate: output {k} has {a.size} entries for one row, expected 1")
        if not np.isfinite(a[0]):
            raise ModelError(f"{who}.evaluate: output {k} is NaN or inf")
        vals.append(float(a[0]))
    return vals[0], vals[1], vals[2]


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
