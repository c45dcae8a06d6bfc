"""Body-velocity controllers: a commanded (v, ω) → rate commands for the actuated joints.

The command is the body's forward speed v (m/s, along body x) and yaw rate ω (rad/s, about body z).  One
geometric rule serves every vehicle type of the thesis (skid-steer LandTamer/Crusher, Ackermann RecBot,
rocker-bogie Rocky 7 with steered corners, Zoë's passively steered axles, the PVC tricycle):

- an actuated steering joint (RZ above a wheel) is servoed to the angle that points its wheels along the
  velocity of the steering axis under the commanded body twist (no lateral slip on flat ground);
- a passive steering joint above two or more driven wheels (Zoë's axles) is steered by driving those
  wheels at different speeds: the axle's yaw rate relative to the ground is (v_R − v_L) / track, so the
  wheels get the speed difference that turns the axle towards its target angle;
- each driven wheel turns at the speed of its centre along its heading, divided by its radius.

The ``naive`` controller of the thesis's Table 2.4 test assumes flat ground and drives all wheels at v / r
with steering held straight.  Inverse (actuation) kinematics on rough terrain, which solves eq. 2.37 with
the body velocity known, is :func:`wmr_dynamics.kinematics.actuation_kinematics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import WmrModel

CONTROLLER_TYPES = ("skid_steer", "ackermann", "rocker_bogie", "zoe", "tricycle", "geometric", "naive")


@dataclass(frozen=True)
class _Steer:
    frame: int  # the steering joint's frame index
    wheels: tuple[int, ...]  # wheel numbers below it
    actuated: bool


def _wheels_below(model: WmrModel, frame: int) -> list[int]:
    out = []
    for w, f in enumerate(model.wheel_frame):
        i = int(f)
        while i > 0 and i != frame:
            i = int(model.parent[i])
        if i == frame:
            out.append(w)
    return out


class BodyVelocityController:
    """Turns a body velocity command into actuated joint rates (see the module docstring).

    Args:
        model: the WMR model.
        kind: one of ``CONTROLLER_TYPES``; ``None`` takes ``model.config['controller']['type']`` (or
            ``geometric``).  All kinds except ``naive`` use the geometric rule.
        steer_gain: proportional gain of the steering servo, 1/s.
        max_steer_rate: rate limit of steering joints, rad/s; capped by the smallest URDF ``<limit velocity>`` of
            the actuated steering joints (so a steering servo never asks a joint for more than it can do).
        steering_efficiency: χ in (0, 1] of Martínez et al.'s skid-steer kinematics: a wheel or belt at lateral
            offset y from the body's x axis is driven at v − ω·y/χ, so a skid-steer vehicle whose turns lose
            a fraction 1 − χ to skidding turns at the commanded ω.  ``None`` takes
            ``model.config['controller']['steering_efficiency']`` (or 1, the no-slip geometric rule).
    """

    def __init__(self, model: WmrModel, kind: str | None = None, steer_gain: float = 5.0,
                 max_steer_rate: float = 2.0, steering_efficiency: float | None = None) -> None:
        cfg = model.config.get("controller") or {}
        kind = kind or cfg.get("type") or "geometric"
        if kind not in CONTROLLER_TYPES:
            raise ModelError(f"controller type '{kind}' is not one of {', '.join(CONTROLLER_TYPES)}")
        chi = cfg.get("steering_efficiency", 1.0) if steering_efficiency is None else steering_efficiency
        if isinstance(chi, bool) or not isinstance(chi, (int, float)) or not 0.0 < chi <= 1.0:
            raise ModelError(f"controller steering_efficiency must be a number in (0, 1], got {chi!r}")
        self.steering_efficiency = float(chi)
        self.model, self.kind = model, kind
        self.steer_gain, self.max_steer_rate = float(steer_gain), float(max_steer_rate)
        self.actuated_frames = np.flatnonzero(model.actuated)
        wheel_frames = set(model.wheel_frame.tolist())
        self.steers = [_Steer(int(i), tuple(_wheels_below(model, int(i))), bool(model.actuated[i]))
                       for i in range(1, model.num_frames)
                       if model.joint_type[i] == 2 and i not in wheel_frames and _wheels_below(model, int(i))]
        self.steers = [s for s in self.steers if s.actuated or len(s.wheels) >= 2]
        limits = [model.frames[s.frame].velocity_limit for s in self.steers if s.actuated]
        self.max_steer_rate = min([self.max_steer_rate, *(float(x) for x in limits if np.isfinite(x))])
        self.wheel_of_frame = {int(f): w for w, f in enumerate(model.wheel_frame)}
        self._kernel_data = None  # (ModelData, ControllerData), built at the first call

    def __call__(self, q: NDArray, T_world: NDArray, v: float, omega: float) -> NDArray:
        """Rates (rad/s or m/s) for ``model.actuated_joint_names``, in that order: the compiled rule
        (:func:`wmr_dynamics.compiled.controllers.controller_rates`, the one implementation).

        Args:
            q: state.  T_world: its forward kinematics (nf, 4, 4).
            v: forward speed, m/s.  omega: yaw rate, rad/s.
        """
        from wmr_dynamics.compiled.controllers import controller_data, controller_rates
        from wmr_dynamics.compiled.data import model_data

        if not (np.isfinite(v) and np.isfinite(omega)):
            raise ModelError(f"velocity command must be finite, got v={v!r} m/s, omega={omega!r} rad/s")
        m = self.model
        if self._kernel_data is None:
            self._kernel_data = (model_data(m), controller_data(self, m))
        md, cd = self._kernel_data
        q = np.ascontiguousarray(q, dtype=float)
        T_world = np.ascontiguousarray(T_world, dtype=float)
        if q.shape != (m.num_states,) or T_world.shape != (m.num_frames, 4, 4):
            raise ModelError(f"controller: expected q ({m.num_states},) and T_world ({m.num_frames}, 4, 4), got "
                             f"{q.shape} and {T_world.shape}")
        u = np.zeros(max(len(self.actuated_frames), 1))
        controller_rates(md, cd, q, T_world, np.array([float(v), float(omega)]), u)
        return u[:len(self.actuated_frames)]
