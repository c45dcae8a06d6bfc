"""Joint speed limits applied to commands (URDF ``<limit velocity>``), one implementation for every front end.

A body-velocity command (v, ω) is turned into actuated joint rates by the vehicle's controller; when a drive
wheel would have to turn faster than its joint's limit, the command is scaled down as a whole (v and ω by
the same factor, so the path's curvature is kept) until the fastest wheel is at its limit.  Direct joint
rate commands are clipped joint by joint.  Steering joints are not part of the scale: their rates come from
the controller's own steering loop, not from the command's magnitude.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics.model import WmrModel


def _wheel_actuators(model: WmrModel) -> NDArray:
    """Indices (into the actuated joints) of the actuated wheel joints."""
    act = model.actuated_joint_names
    return np.array([act.index(n) for n in model.wheel_joint_names if n in act], dtype=int)


def command_scale(model: WmrModel, rates: ArrayLike) -> float:
    """The factor s in (0, 1] that brings every actuated wheel joint of ``rates`` (rad/s, actuated-joint order)
    within its speed limit: s = min(1, min_i limit_i / |u_i|)."""
    u = np.abs(np.asarray(rates, dtype=float))
    k = _wheel_actuators(model)
    if k.size == 0:
        return 1.0
    lim = model.actuated_velocity_limits[k]
    with np.errstate(divide="ignore", over="ignore"):  # only the branch with u > lim is used
        ratio = np.where(u[k] > lim, lim / u[k], 1.0)
    return float(min(1.0, ratio.min()))


def limit_command(model: WmrModel, controller: Callable, q: NDArray, T_world: NDArray, v: float,
                  omega: float) -> tuple[float, float, float]:
    """(v m/s, ω rad/s) scaled so that no actuated wheel exceeds its speed limit; returns (v', ω', scale).

    ``controller(q, T_world, v, omega)`` gives the actuated joint rates (the vehicle's
    :class:`~wmr_dynamics.controllers.BodyVelocityController`); scale < 1 means the command was limited.
    The rates are not exactly proportional to the command where a steering error adds a correction, so the
    scale is refined a few times (each step only shrinks it, and ends within the limits to 1 %).
    """
    s = 1.0
    for _ in range(6):
        k = command_scale(model, controller(q, T_world, v * s, omega * s))
        if k >= 0.999:
            break
        s *= k * (0.999 if k > 0.99 else 1.0)
    return v * s, omega * s, s


def limit_rates(model: WmrModel, rates: ArrayLike) -> tuple[NDArray, bool]:
    """Actuated joint ``rates`` clipped to ±their speed limits; returns (clipped rates, whether any was clipped)."""
    u = np.asarray(rates, dtype=float)
    lim = model.actuated_velocity_limits
    out = np.clip(u, -lim, lim)
    return out, bool(np.any(out != u))
