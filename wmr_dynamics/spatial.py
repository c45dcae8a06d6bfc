"""Rotations, poses, homogeneous and Plücker transforms, spatial inertia (thesis App. A–B).

Conventions (DESIGN.md): right-handed frames; Euler roll–pitch–yaw with R = Rz(ψ)·Ry(θ)·Rx(φ)
(thesis eq. A.9); unit quaternions stored ``(x, y, z, w)`` (ROS / scipy order); spatial vectors
``[angular; linear]`` (Featherstone, eq. B.1).  ``R_a^b`` maps coordinates in frame *a* to frame *b*.

Functions on single small matrices here are written for clarity; the per-step kernels in the other
modules inline what they need over flat arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics._jit import njit

AXIS_X, AXIS_Y, AXIS_Z = 0, 1, 2


@njit
def rot_axis(axis: int, angle: float) -> NDArray:
    """Rotation matrix about coordinate axis ``axis`` (0=x, 1=y, 2=z) by ``angle`` rad (eqs. A.1–A.3)."""
    c, s = np.cos(angle), np.sin(angle)
    R = np.eye(3)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R[i, i] = c
    R[i, j] = -s
    R[j, i] = s
    R[j, j] = c
    return R


def rot_x(angle: float) -> NDArray:
    """Rot_x(θ), thesis eq. A.1."""
    return rot_axis(AXIS_X, angle)


def rot_y(angle: float) -> NDArray:
    """Rot_y(θ), thesis eq. A.2."""
    return rot_axis(AXIS_Y, angle)


def rot_z(angle: float) -> NDArray:
    """Rot_z(θ), thesis eq. A.3."""
    return rot_axis(AXIS_Z, angle)


def rpy_to_rot(rpy: ArrayLike) -> NDArray:
    """Rotation matrix from roll, pitch, yaw (rad): R = Rz(ψ)·Ry(θ)·Rx(φ), thesis eq. A.9."""
    roll, pitch, yaw = np.asarray(rpy, dtype=float)
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def rot_to_rpy(R: ArrayLike) -> NDArray:
    """Roll, pitch, yaw (rad) of a rotation matrix, thesis eqs. A.10–A.13."""
    R = np.asarray(R, dtype=float)
    yaw = np.arctan2(R[1, 0], R[0, 0])
    roll = np.arctan2(R[2, 1], R[2, 2])
    # eq. A.12: either expression for cos(pitch); use the better conditioned one.
    c_roll, s_roll = np.cos(roll), np.sin(roll)
    cos_pitch = R[2, 2] / c_roll if abs(c_roll) > abs(s_roll) else R[2, 1] / s_roll
    pitch = np.arctan2(-R[2, 0], cos_pitch)
    return np.array([roll, pitch, yaw])


@njit
def quat_to_rot(quat: NDArray) -> NDArray:
    """Rotation matrix of a quaternion ``(x, y, z, w)``; the quaternion is normalized first."""
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    n = np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    R = np.empty((3, 3))
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - z * w)
    R[0, 2] = 2.0 * (x * z + y * w)
    R[1, 0] = 2.0 * (x * y + z * w)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - x * w)
    R[2, 0] = 2.0 * (x * z - y * w)
    R[2, 1] = 2.0 * (y * z + x * w)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return R


def rot_to_quat(R: ArrayLike) -> NDArray:
    """Unit quaternion ``(x, y, z, w)`` with ``w >= 0`` of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    # Pick the largest of w, x, y, z to divide by, for numerical stability.
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 - R[0, 0] + R[1, 1] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 - R[0, 0] - R[1, 1] + R[2, 2])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def rpy_to_quat(rpy: ArrayLike) -> NDArray:
    """Quaternion ``(x, y, z, w)`` of roll, pitch, yaw (rad)."""
    return rot_to_quat(rpy_to_rot(rpy))


def quat_to_rpy(quat: ArrayLike) -> NDArray:
    """Roll, pitch, yaw (rad) of a quaternion ``(x, y, z, w)``."""
    return rot_to_rpy(quat_to_rot(np.asarray(quat, dtype=float)))


def skew(v: ArrayLike) -> NDArray:
    """Cross-product matrix [v]× so that [v]× u = v × u."""
    x, y, z = np.asarray(v, dtype=float)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def homogeneous(R: ArrayLike, p: ArrayLike) -> NDArray:
    """4×4 homogeneous transform T = [R p; 0 1] (eq. 2.11)."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def pose_to_transform(xyz: ArrayLike, rpy: ArrayLike) -> NDArray:
    """Homogeneous transform of a pose: translation (m) and Euler roll, pitch, yaw (rad) (Alg. 1, line 1)."""
    return homogeneous(rpy_to_rot(rpy), xyz)


def inv_homogeneous(T: ArrayLike) -> NDArray:
    """Inverse of a homogeneous transform: [Rᵀ  −Rᵀp; 0 1]."""
    T = np.asarray(T, dtype=float)
    R, p = T[:3, :3], T[:3, 3]
    return homogeneous(R.T, -R.T @ p)


def plucker(T: ArrayLike) -> NDArray:
    """Plücker motion transform X_a^b equivalent to the homogeneous transform T_a^b (thesis eqs. B.2–B.10).

    ``T = T_a^b`` maps point coordinates in frame *a* to frame *b*; the result is
    ``X = [[R, 0], [[t]× R, R]]`` with t = T[:3, 3] (eq. B.9), so that ``X @ v_a`` expresses the
    spatial motion vector ``v_a`` (given in *a*) in *b* coordinates (eq. B.11).
    """
    T = np.asarray(T, dtype=float)
    R, t = T[:3, :3], T[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[3:, 3:] = R
    X[3:, :3] = skew(t) @ R
    return X


def spatial_inertia(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> NDArray:
    """6×6 spatial inertia about the frame origin (thesis eq. B.13).

    Args:
        mass: kg.
        com: centre of mass in the frame, m.
        inertia_com: 3×3 rotational inertia about the centre of mass, frame axes, kg·m².
    """
    C = skew(com)
    I = np.zeros((6, 6))  # noqa: E741 - I is the paper's symbol
    I[:3, :3] = np.asarray(inertia_com, dtype=float) + mass * C @ C.T
    I[:3, 3:] = mass * C
    I[3:, :3] = mass * C.T
    I[3:, 3:] = mass * np.eye(3)
    return I


def crm(v: ArrayLike) -> NDArray:
    """Spatial cross product matrix for motion vectors, v ×m (thesis eq. B.14)."""
    v = np.asarray(v, dtype=float)
    X = np.zeros((6, 6))
    X[:3, :3] = skew(v[:3])
    X[3:, 3:] = skew(v[:3])
    X[3:, :3] = skew(v[3:])
    return X


def crf(v: ArrayLike) -> NDArray:
    """Spatial cross product matrix for force vectors, v ×f = −(v ×m)ᵀ (thesis eq. B.15)."""
    return -crm(v).T
