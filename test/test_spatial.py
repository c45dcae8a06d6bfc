"""Rotation / quaternion / spatial-algebra helpers against SciPy and closed forms (thesis App. A–B)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from wmr_dynamics import spatial

rng = np.random.default_rng(7)
RPYS = [rng.uniform([-3, -1.4, -3], [3, 1.4, 3]) for _ in range(20)]


@pytest.mark.parametrize("rpy", RPYS)
def test_rpy_matches_scipy_extrinsic_xyz(rpy):
    # R = Rz(ψ) Ry(θ) Rx(φ) (eq. A.9) is SciPy's extrinsic "xyz" sequence.
    R = spatial.rpy_to_rot(rpy)
    np.testing.assert_allclose(R, Rotation.from_euler("xyz", rpy).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(spatial.rot_to_rpy(R), rpy, atol=1e-10)


@pytest.mark.parametrize("rpy", RPYS)
def test_quaternion_xyzw_matches_scipy(rpy):
    q_ref = Rotation.from_euler("xyz", rpy).as_quat()  # scipy order is (x, y, z, w)
    q = spatial.rpy_to_quat(rpy)
    assert np.isclose(abs(q @ q_ref), 1.0, atol=1e-12)
    np.testing.assert_allclose(spatial.quat_to_rot(q_ref), Rotation.from_quat(q_ref).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(spatial.quat_to_rpy(q), rpy, atol=1e-10)


def test_rot_to_quat_near_180_degrees():
    for axis in np.eye(3):
        R = Rotation.from_rotvec(axis * (np.pi - 1e-9)).as_matrix()
        np.testing.assert_allclose(spatial.quat_to_rot(spatial.rot_to_quat(R)), R, atol=1e-9)


def test_elementary_rotations_are_A1_to_A3():
    t = 0.3
    c, s = np.cos(t), np.sin(t)
    np.testing.assert_allclose(spatial.rot_x(t), [[1, 0, 0], [0, c, -s], [0, s, c]])
    np.testing.assert_allclose(spatial.rot_y(t), [[c, 0, s], [0, 1, 0], [-s, 0, c]])
    np.testing.assert_allclose(spatial.rot_z(t), [[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_plucker_transforms_velocity_like_rigid_body_kinematics():
    # Frame a moves with spatial velocity (ω, v_origin) given in a; in b coordinates the same motion
    # has ω_b = R ω and linear velocity of b's origin = R v + t × (R ω) (eqs. B.2–B.11).
    R = Rotation.from_euler("xyz", [0.3, -0.2, 1.0]).as_matrix()
    t = np.array([0.5, -1.0, 2.0])
    w, v = np.array([0.1, 0.2, -0.3]), np.array([1.0, 0.0, 0.5])
    out = spatial.plucker(spatial.homogeneous(R, t)) @ np.r_[w, v]
    np.testing.assert_allclose(out[:3], R @ w)
    np.testing.assert_allclose(out[3:], R @ v + np.cross(t, R @ w))


def test_spatial_inertia_kinetic_energy():
    # ½ vᵀ I v equals the kinetic energy of a body whose com moves with v + ω × c (eq. B.13).
    m, c = 3.0, np.array([0.1, -0.2, 0.3])
    Ic = np.diag([0.2, 0.3, 0.4])
    w, v = np.array([0.5, -0.1, 0.2]), np.array([1.0, 2.0, -0.5])
    v_com = v + np.cross(w, c)
    energy = 0.5 * m * v_com @ v_com + 0.5 * w @ Ic @ w
    I6 = spatial.spatial_inertia(m, c, Ic)
    assert np.isclose(0.5 * np.r_[w, v] @ I6 @ np.r_[w, v], energy)


def test_crf_is_minus_crm_transpose_and_crm_is_cross_product():
    a, b = rng.normal(size=6), rng.normal(size=6)
    # motion cross product: [ωa × ωb; va × ωb + ωa × vb]
    np.testing.assert_allclose(spatial.crm(a) @ b, np.r_[np.cross(a[:3], b[:3]),
                                                         np.cross(a[3:], b[:3]) + np.cross(a[:3], b[3:])])
    np.testing.assert_allclose(spatial.crf(a), -spatial.crm(a).T)
