"""Kinematics of the frame tree (thesis §2.2–2.3).

- :func:`forward_kinematics` — Alg. 1;
- :func:`wheel_jacobians` — Alg. 2, eqs. 2.16–2.24; :func:`joint_constraint_residual` — eqs. 2.25–2.26;
- :func:`state_rate`, :func:`euler_step` — eqs. 2.14, 2.39.
"""

from wmr_dynamics.kinematics.fk import check_state, forward_kinematics
from wmr_dynamics.kinematics.jacobians import joint_constraint_residual, wheel_jacobians
from wmr_dynamics.kinematics.state import euler_step, state_rate

__all__ = ["check_state", "euler_step", "forward_kinematics", "joint_constraint_residual", "state_rate",
           "wheel_jacobians"]
