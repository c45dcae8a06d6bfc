"""Wheel Jacobians (thesis Alg. 2) and joint-constraint Jacobians (eq. 2.26) against finite differences."""

import numpy as np
import pytest

from wmr_dynamics import bundled_vehicles, forward_kinematics, load_model
from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.kinematics import euler_step, joint_constraint_residual, state_rate, wheel_jacobians
from wmr_dynamics.terrain import Plane


def random_state(model, rng):
    return model.state(xyz=rng.normal(size=3), rpy=rng.uniform(-0.4, 0.4, 3),
                       joints=rng.uniform(-0.3, 0.3, model.num_joints))


@pytest.mark.parametrize("name", bundled_vehicles())
def test_wheel_jacobian_matches_finite_differences_of_contact_points(name):
    model = load_model(name)
    rng = np.random.default_rng(11)
    ground = Plane(normal=(0.2, -0.1, 1.0), point=(0, 0, -2))
    for _ in range(2):
        q = random_state(model, rng)
        T = forward_kinematics(model, q)
        c = wheel_contacts(model, T, ground)
        A = wheel_jacobians(model, T, c)
        # the contact point as a material point of each wheel, followed as q moves along each q̇' axis; a track
        # element's point is fixed to the outline (the hub frame), and its sprocket column is the belt speed
        # (test_tracks.py checks that one against Alg. 2 of wheels at the same circles)
        def carrier(T, w, f):
            return T[f] if model.wheel_kind[w] == 0 else T[model.parent[f]] @ model.T0[f]

        local = [np.linalg.solve(carrier(T, w, f), np.r_[c.points[w], 1.0]) for w, f in enumerate(model.wheel_frame)]
        eps = 1e-6
        for k in range(model.num_dof):
            e = np.zeros(model.num_dof)
            e[k] = 1.0
            Tp = forward_kinematics(model, euler_step(q, e, eps))
            Tm = forward_kinematics(model, euler_step(q, e, -eps))
            for w, f in enumerate(model.wheel_frame):
                if model.wheel_kind[w] != 0 and k == f + 5:
                    continue
                v_world = ((carrier(Tp, w, f) @ local[w]) - (carrier(Tm, w, f) @ local[w]))[:3] / (2 * eps)
                np.testing.assert_allclose(A[3 * w:3 * w + 3, k], c.frames[w].T @ v_world, atol=1e-7,
                                           err_msg=f"{name} wheel {model.wheel_names[w]} column {k}")


@pytest.mark.parametrize("name", ["rocky7", "crusher", "recbot", "eldorado2"])
def test_joint_constraint_jacobian_is_the_derivative_of_the_residual(name):
    model = load_model(name)
    rng = np.random.default_rng(2)
    q = random_state(model, rng)
    qvel = rng.normal(size=model.num_dof)
    eps = 1e-6
    dc = (joint_constraint_residual(model, euler_step(q, qvel, eps))
          - joint_constraint_residual(model, euler_step(q, qvel, -eps))) / (2 * eps)
    np.testing.assert_allclose(model.A_joint @ qvel, dc, atol=1e-8)


def test_state_rate_and_euler_step_agree():
    model = load_model("zoe")
    rng = np.random.default_rng(5)
    q = random_state(model, rng)
    qvel = rng.normal(size=model.num_dof)
    dt = 1e-7
    np.testing.assert_allclose((euler_step(q, qvel, dt) - q) / dt, state_rate(q, qvel), atol=1e-6)
    q2 = euler_step(q, qvel, 0.5)
    assert np.linalg.norm(q2[:4]) == pytest.approx(1.0, abs=1e-14)
    # body-frame angular velocity about body z for 1 s rotates the body by exactly that angle about its z axis
    qz = model.state(rpy=(0.3, 0.2, 0.1))
    w = np.zeros(model.num_dof)
    w[2] = 0.7
    R0, R1 = forward_kinematics(model, qz)[0, :3, :3], forward_kinematics(model, euler_step(qz, w, 1.0))[0, :3, :3]
    c, s = np.cos(0.7), np.sin(0.7)
    np.testing.assert_allclose(R0.T @ R1, [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-4, 0.05, 0.19, 0.2, 0.2001, 0.7, 3.0])
def test_euler_step_rotates_by_the_exponential_map(angle):
    """Eq. 2.39's orientation update q ⊗ exp(ω Δt / 2) against scipy's rotation vector, for rotations inside
    (Taylor series, a ≤ 0.2 rad) and beyond the series' range (libm), and the position by R(q) v Δt."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(int(angle * 1e4))
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    q = np.r_[Rotation.from_euler("xyz", [0.3, -0.2, 1.1]).as_quat(), 1.0, 2.0, 3.0, 0.4]
    dt = 0.04
    qvel = np.r_[axis * angle / dt, 0.5, -0.2, 0.1, 2.0]
    out = euler_step(q, qvel, dt)
    R0 = Rotation.from_quat(q[:4])
    want = (R0 * Rotation.from_rotvec(axis * angle)).as_quat()
    assert abs(np.dot(out[:4], want)) == pytest.approx(1.0, abs=1e-15)  # the same rotation (q or −q)
    np.testing.assert_allclose(out[:4] * np.sign(np.dot(out[:4], want)), want, atol=1e-15)
    np.testing.assert_allclose(out[4:7], q[4:7] + R0.apply(qvel[3:6]) * dt, atol=1e-15)
    assert out[7] == q[7] + qvel[6] * dt
