"""Compiled body-velocity controllers: the rules of :class:`wmr_dynamics.controllers.BodyVelocityController`
(module docstring there) as a numba kernel — their one implementation: rollouts call it in the step, and the
class's ``__call__`` calls it from Python.

Kinds: ``naive`` (all wheels at v / r, steering untouched), ``geometric`` (every other controller type of
the Python class: steering servo, passive-axle steering by differential wheel speeds, wheel rates from
the hub velocity), and ``direct`` (the command rows already are actuated joint rates).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.data import ModelData
from wmr_dynamics.controllers import BodyVelocityController

CONTROLLER_NAIVE, CONTROLLER_GEOMETRIC, CONTROLLER_DIRECT = 0, 1, 2


class ControllerData(NamedTuple):
    """A controller as flat arrays: steering joints (frame, actuated flag, wheels below) and gains."""

    kind: int
    steer_frame: NDArray  # (ns,) int64
    steer_actuated: NDArray  # (ns,) bool
    steer_wheels: NDArray  # (ns, nw) bool: wheel w is below steering joint s
    steer_gain: float  # 1/s
    max_steer_rate: float  # rad/s
    rates: NDArray  # (nf,) work
    steer_rate: NDArray  # (ns,) work
    steering_efficiency: float = 1.0  # χ of Martínez et al. (skid steering), in (0, 1]


def controller_data(controller: BodyVelocityController | None, model, direct: bool = False) -> ControllerData:  # noqa: ANN001
    """Flatten a :class:`BodyVelocityController` (``direct=True``: commands are joint rates, no controller)."""
    nw = model.num_wheels
    if direct or controller is None:
        kind, steers, gain, rate, chi = CONTROLLER_DIRECT, [], 0.0, 0.0, 1.0
    else:
        kind = CONTROLLER_NAIVE if controller.kind == "naive" else CONTROLLER_GEOMETRIC
        steers, gain, rate = controller.steers, controller.steer_gain, controller.max_steer_rate
        chi = controller.steering_efficiency
    ns = len(steers)
    wheels = np.zeros((ns, nw), dtype=np.bool_)
    for k, s in enumerate(steers):
        wheels[k, list(s.wheels)] = True
    return ControllerData(kind, np.array([s.frame for s in steers], dtype=np.int64),
                          np.array([s.actuated for s in steers], dtype=np.bool_), wheels, float(gain), float(rate),
                          np.zeros(model.num_frames), np.zeros(max(ns, 1)), float(chi))


@njit(inline="always")  # (a call per use cost more than the body)
def _heading_angle(ux: float, uy: float) -> float:
    """Direction of (ux, uy) folded into (−π/2, π/2] so wheels reverse instead of flipping."""
    if abs(ux) < 1e-12 and abs(uy) < 1e-12:
        return 0.0
    a = math.atan2(uy, ux)
    if a > math.pi / 2:
        a -= math.pi
    elif a <= -math.pi / 2:
        a += math.pi
    return a


@njit(inline="always")  # (a call per use cost more than the body)
def _in_body(T_world: NDArray, x: float, y: float, z: float) -> tuple:
    """Body-frame (x, y) coordinates of the world point (x, y, z) (z is not needed)."""
    d0, d1, d2 = x - T_world[0, 0, 3], y - T_world[0, 1, 3], z - T_world[0, 2, 3]
    return (T_world[0, 0, 0] * d0 + T_world[0, 1, 0] * d1 + T_world[0, 2, 0] * d2,
            T_world[0, 0, 1] * d0 + T_world[0, 1, 1] * d1 + T_world[0, 2, 1] * d2)


@njit(inline="always")  # (a call per use cost more than the body)
def _x_axis_in_body(T_world: NDArray, T0: NDArray, parent: int, frame: int) -> tuple:
    """x axis of frame ``frame`` at zero joint displacement (parent · T0), body coordinates (x, y)."""
    c0, c1, c2 = 0.0, 0.0, 0.0
    for r in range(3):  # world x axis of parent · T0
        v = T_world[parent, r, 0] * T0[frame, 0, 0] + T_world[parent, r, 1] * T0[frame, 1, 0] \
            + T_world[parent, r, 2] * T0[frame, 2, 0]
        if r == 0:
            c0 = v
        elif r == 1:
            c1 = v
        else:
            c2 = v
    return (T_world[0, 0, 0] * c0 + T_world[0, 1, 0] * c1 + T_world[0, 2, 0] * c2,
            T_world[0, 0, 1] * c0 + T_world[0, 1, 1] * c1 + T_world[0, 2, 1] * c2)


@njit(_nrt=False)
def controller_rates(md: ModelData, cd: ControllerData, q: NDArray, T_world: NDArray, cmd: NDArray,
                     u: NDArray) -> None:
    """Actuated joint rates ``u`` (rad/s or m/s, ``actuated_frames`` order) for the command row ``cmd``:
    (v m/s, ω rad/s) for the naive and geometric kinds, the rates themselves for ``direct``."""
    na = md.actuated_frames.shape[0]
    if cd.kind == CONTROLLER_DIRECT:
        for k in range(na):
            u[k] = cmd[k]
        return
    v, omega = cmd[0], cmd[1]
    rates = cd.rates
    rates[:] = 0.0
    nw = md.wheel_frame.shape[0]
    if cd.kind == CONTROLLER_NAIVE:
        for w in range(nw):
            rates[md.wheel_frame[w]] = v / md.wheel_radius[w]
    else:
        _geometric(md, cd, q, T_world, v, omega)
    for k in range(na):
        u[k] = rates[md.actuated_frames[k]]


@njit(inline="always")  # (a call per use cost more than the body)
def _geometric(md: ModelData, cd: ControllerData, q: NDArray, T_world: NDArray, v: float, omega: float) -> None:
    rates = cd.rates
    ns = cd.steer_frame.shape[0]
    for k in range(ns):  # steering servo toward the heading of the steering axis' velocity
        s = cd.steer_frame[k]
        px, py = _in_body(T_world, T_world[s, 0, 3], T_world[s, 1, 3], T_world[s, 2, 3])
        target = _heading_angle(v - omega * py, omega * px)
        hx, hy = _x_axis_in_body(T_world, md.T0, md.parent[s], s)
        a = target - math.atan2(hy, hx)
        desired = min(max((a + math.pi) % (2.0 * math.pi) - math.pi, md.joint_lower[s]), md.joint_upper[s])
        a = desired - q[6 + s]
        err = (a + math.pi) % (2.0 * math.pi) - math.pi
        r = min(max(cd.steer_gain * err, -cd.max_steer_rate), cd.max_steer_rate)
        cd.steer_rate[k] = r
        if cd.steer_actuated[k]:
            rates[s] = r
    for w in range(md.wheel_frame.shape[0]):  # wheel rate: hub velocity along the hub heading / radius
        f = md.wheel_frame[w]
        par = md.parent[f]
        h = (_hub(T_world, md.T0, par, f, 0), _hub(T_world, md.T0, par, f, 1), _hub(T_world, md.T0, par, f, 2))
        px, py = _in_body(T_world, h[0], h[1], h[2])
        # skid steering (Martínez et al.): the sides' speed difference is ω·B/χ, not ω·B — the turn loses
        # the part 1 − χ to lateral skidding; χ = 1 (default) is the no-slip geometric rule
        ux, uy = v - omega * py / cd.steering_efficiency, omega * px
        for k in range(ns):  # a passive steering joint above: its wheels drive its turn
            if cd.steer_wheels[k, w] and not cd.steer_actuated[k]:
                sf = cd.steer_frame[k]
                sx, sy = _in_body(T_world, T_world[sf, 0, 3], T_world[sf, 1, 3], T_world[sf, 2, 3])
                ux += cd.steer_rate[k] * -(py - sy)
                uy += cd.steer_rate[k] * (px - sx)
        hx, hy = _x_axis_in_body(T_world, md.T0, par, f)
        nrm = max(math.sqrt(hx * hx + hy * hy), 1e-9)
        rates[f] = (ux * hx + uy * hy) / nrm / md.wheel_radius[w]


@njit(inline="always")  # (a call per use cost more than the body)
def _hub(T_world: NDArray, T0: NDArray, parent: int, frame: int, r: int) -> float:
    """World coordinate r of the hub (the wheel frame's origin, parent · T0)."""
    return (T_world[parent, r, 0] * T0[frame, 0, 3] + T_world[parent, r, 1] * T0[frame, 1, 3]
            + T_world[parent, r, 2] * T0[frame, 2, 3] + T_world[parent, r, 3])
