"""Kinematics of the frame tree (thesis §2.2–2.3).

- :func:`forward_kinematics` — Alg. 1;
- :func:`wheel_jacobians` — Alg. 2, eqs. 2.16–2.24; :func:`joint_constraint_residual` — eqs. 2.25–2.26;
- :func:`state_rate`, :func:`euler_step` — eqs. 2.14, 2.39;
- :func:`evaluate`, :func:`solve_velocity` — stabilized DAE, eqs. 2.33–2.38, used as
  :func:`navigation_kinematics` (encoders, optional gyro) and :func:`actuation_kinematics` (body velocity →
  joint rates); :func:`initialize_contact` — §2.2.4;
- :mod:`~wmr_dynamics.kinematics.enhanced` — body slip (§2.3) and the rollover indicator.
"""

from wmr_dynamics.kinematics.dae import (
    KinematicState,
    VelocitySolution,
    actuated_indices,
    actuation_kinematics,
    evaluate,
    initialize_contact,
    navigation_kinematics,
    solve_velocity,
)
from wmr_dynamics.kinematics.fk import check_state, forward_kinematics
from wmr_dynamics.kinematics.jacobians import joint_constraint_residual, wheel_jacobians
from wmr_dynamics.kinematics.state import euler_step, state_rate

__all__ = [
    "KinematicState", "VelocitySolution", "actuated_indices", "actuation_kinematics", "check_state", "euler_step",
    "evaluate", "forward_kinematics", "initialize_contact", "joint_constraint_residual", "navigation_kinematics",
    "solve_velocity",
    "state_rate", "wheel_jacobians",
]
