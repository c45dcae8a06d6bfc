"""The frame-tree model (thesis §2.2.1) and forward position kinematics (Alg. 1)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from wmr_dynamics import Frame, JointConstraint, ModelError, Wheel, WmrModel, forward_kinematics

# Rocky 7, thesis Table 2.2 (cm → m); A4 and A6 belong to the right bogie B2 (the table's "B1" is a typo).
k1, k2, k3, k4, k5, k7, k8 = 0.105, 0.12075, 0.20, 0.288, 0.125, 0.069, 0.02
k6x, k6z = 0.16 * np.sin(np.radians(49)), 0.16 * np.cos(np.radians(49))
ROCKY_TABLE = [  # name, parent, type, actuated, xyz
    ("D1", "body", "RY", False, (k2, k3, k1)), ("S1", "D1", "RZ", True, (k4, 0, 0)),
    ("A1", "S1", "RY", True, (0, 0, -k5)), ("B1", "D1", "RY", False, (-k6x, 0, -k6z)),
    ("A3", "B1", "RY", True, (k7, 0, -k8)), ("A5", "B1", "RY", True, (-k7, 0, -k8)),
    ("D2", "body", "RY", False, (k2, -k3, k1)), ("S2", "D2", "RZ", True, (k4, 0, 0)),
    ("A2", "S2", "RY", True, (0, 0, -k5)), ("B2", "D2", "RY", False, (-k6x, 0, -k6z)),
    ("A4", "B2", "RY", True, (k7, 0, -k8)), ("A6", "B2", "RY", True, (-k7, 0, -k8)),
]
WHEELS = ["A1", "A2", "A3", "A4", "A5", "A6"]


def box_inertia(m, lx, ly, lz):
    return tuple(map(tuple, np.diag([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2]) * m / 12))


def rocky_from_table(rpy=None):
    frames = [Frame("body", mass=11.0, com=(0.18, 0, 0.155), inertia=box_inertia(11.0, 0.4, 0.26, 0.16))]
    for i, (name, parent, jt, act, xyz) in enumerate(ROCKY_TABLE):
        frames.append(Frame(name, parent, jt, actuated=act, xyz=xyz,
                            rpy=(0, 0, 0) if rpy is None else tuple(rpy[i]),
                            mass=0.5 if name in WHEELS else 0.0,
                            inertia=box_inertia(0.5, 0.1, 0.1, 0.1) if name in WHEELS else box_inertia(0, 1, 1, 1)))
    wheels = [Wheel(w, radius=0.065, width=0.08) for w in WHEELS]
    return WmrModel(frames, wheels, [JointConstraint("rocker", {"D1": 1.0, "D2": 1.0})], name="rocky7_table")


def chain_oracle(model, q):
    """World transform of every frame by multiplying transforms along each frame's chain from the body."""
    out = []
    body = np.eye(4)
    body[:3, :3] = Rotation.from_quat(q[:4]).as_matrix()
    body[:3, 3] = q[4:7]
    frames = {f.name: f for f in model.frames}
    for f in model.frames:
        chain = []
        g = f
        while g.parent is not None:
            chain.append(g)
            g = frames[g.parent]
        T = body.copy()
        for g in reversed(chain):
            theta = q[7 + model.frame_names.index(g.name) - 1]
            axis = np.eye(3)["XYZ".index(g.joint_type[1])]
            J = np.eye(4)
            J[:3, :3] = Rotation.from_euler("xyz", g.rpy).as_matrix()
            J[:3, 3] = g.xyz
            M = np.eye(4)
            if g.joint_type[0] == "R":
                M[:3, :3] = Rotation.from_rotvec(axis * theta).as_matrix()
            else:
                M[:3, 3] = axis * theta
            T = T @ J @ M
        out.append(T)
    return np.array(out)


@pytest.mark.parametrize("seed", range(5))
def test_forward_kinematics_matches_direct_chain(seed):
    rng = np.random.default_rng(seed)
    model = rocky_from_table(rpy=rng.uniform(-0.5, 0.5, (len(ROCKY_TABLE), 3)))
    q = model.state(xyz=rng.normal(size=3), rpy=rng.uniform(-1, 1, 3), joints=rng.uniform(-1, 1, model.num_joints))
    np.testing.assert_allclose(forward_kinematics(model, q), chain_oracle(model, q), atol=1e-12)


def test_prismatic_joints_follow_their_axis():
    frames = [Frame("body", mass=10.0, inertia=box_inertia(10, 1, 1, 1)),
              Frame("susp", "body", "PZ", xyz=(0.5, 0.3, 0), rpy=(0.2, 0, 0)),
              Frame("w", "susp", "RY", xyz=(0, 0, -0.1), mass=1.0, inertia=box_inertia(1, .1, .1, .1))]
    model = WmrModel(frames, [Wheel("w", 0.2)])
    q = model.state(joints={"susp": 0.07, "w": 1.0})
    T = forward_kinematics(model, q)
    np.testing.assert_allclose(T, chain_oracle(model, q), atol=1e-12)
    # the prismatic joint moves its frame along its own (tilted) z axis
    np.testing.assert_allclose(T[1, :3, 3], [0.5, 0.3, 0] + 0.07 * Rotation.from_euler("x", 0.2).as_matrix()[:, 2])


def test_rocky7_table_model_layout():
    model = rocky_from_table()
    assert model.num_dof == 6 + 12 and model.num_states == 7 + 12
    assert model.wheel_names == WHEELS
    assert model.total_mass == pytest.approx(14.0)
    assert model.actuated_joint_names == ["S1", "A1", "A3", "A5", "S2", "A2", "A4", "A6"]
    assert model.wheel_radius("A4") == 0.065
    assert all(model.parent[i] < i for i in range(1, model.num_frames))
    # eq. 2.26: rocker rates at joint-space indices 7 and 13 (1-based) = 6 and 12 (0-based)
    expected = np.zeros(model.num_dof)
    expected[[6, 12]] = 1.0
    np.testing.assert_array_equal(model.A_joint, [expected])
    # wheel A4 sits k7 ahead of the right bogie pivot, which is k6 behind/below the right rocker pivot
    T = forward_kinematics(model, model.neutral_state())
    np.testing.assert_allclose(T[model.frame_index("A4"), :3, 3], [k2 - k6x + k7, -k3, k1 - k6z - k8], atol=1e-15)


def test_compiled_arrays_are_read_only():
    model = rocky_from_table()
    with pytest.raises(ValueError):
        model.T0[0, 0, 0] = 2.0


@pytest.mark.parametrize("bad, match", [
    (lambda fr, wh: ([fr[0], fr[2], fr[1], *fr[3:]], wh), "frame 'S1': parent 'D1' must be a frame listed before it"),
    (lambda fr, wh: ([fr[0], Frame("D1", "body", "RW"), *fr[2:]], wh), "joint type 'RW'"),
    (lambda fr, wh: (fr, [Wheel("S1", 0.065), *wh[1:]]), "must turn about its own y axis"),
    (lambda fr, wh: (fr, [Wheel("A1", -0.065), *wh[1:]]), "radius must be a positive"),
    (lambda fr, wh: (fr, [Wheel("A1", 0.065, shape="torus", tube_radius=0.1), *wh[1:]]), "tube_radius"),
    (lambda fr, wh: (fr, [Wheel("A1", 0.065, shape="sphere"), *wh[1:]]), "shape must be"),
    (lambda fr, wh: (fr, []), "no wheels"),
    (lambda fr, wh: ([Frame("body", mass=np.nan), *fr[1:]], wh), "mass must be finite"),
    (lambda fr, wh: ([Frame("body", mass=-1.0), *fr[1:]], wh), "mass must be finite"),
    (lambda fr, wh: ([Frame("body", mass=1.0, inertia=((1, 0, 0), (0, 1, 0), (0, 0, 5))), *fr[1:]], wh),
     "triangle inequality"),
    (lambda fr, wh: ([Frame("body", mass=1.0, inertia=((1, 0, 0), (0, -1, 0), (0, 0, 1))), *fr[1:]], wh),
     "positive semi-definite"),
])
def test_invalid_models_are_rejected_with_a_clear_message(bad, match):
    good = rocky_from_table()
    frames, wheels = bad(list(good.frames), list(good.wheels))
    with pytest.raises(ModelError, match=match):
        WmrModel(frames, wheels)


def test_constraint_on_unknown_joint_is_rejected():
    good = rocky_from_table()
    with pytest.raises(ModelError, match="unknown joint 'D9'"):
        WmrModel(good.frames, good.wheels, [JointConstraint("c", {"D9": 1.0})])


def test_bad_states_are_rejected():
    model = rocky_from_table()
    with pytest.raises(ModelError, match="19 states"):
        forward_kinematics(model, np.zeros(5))
    q = model.neutral_state()
    q[9] = np.nan
    with pytest.raises(ModelError, match="NaN or inf at indices \\[9\\]"):
        forward_kinematics(model, q)
    with pytest.raises(ModelError, match="no frame, link or joint named 'Z9'"):
        model.state(joints={"Z9": 0.1})
    with pytest.raises(ModelError, match="not a wheel"):
        model.wheel_radius("D1")


def test_interpreted_kernels_give_the_same_transforms():
    # NUMBA_DISABLE_JIT=1 runs the same kernel source as plain Python (DESIGN.md "Speed"): both must agree.
    import json
    import os
    import subprocess
    import sys

    code = ("import json, numpy as np, wmr_dynamics as w\n"
            "m = w.load_model('rocky7')\n"
            "q = m.state(xyz=(1, 2, 0.3), rpy=(0.1, -0.2, 0.7), joints=np.linspace(-0.5, 0.5, m.num_joints))\n"
            "print(json.dumps(w.forward_kinematics(m, q).tolist()))")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    from wmr_dynamics import load_model

    m = load_model("rocky7")
    q = m.state(xyz=(1, 2, 0.3), rpy=(0.1, -0.2, 0.7), joints=np.linspace(-0.5, 0.5, m.num_joints))
    np.testing.assert_allclose(np.array(json.loads(r.stdout)), forward_kinematics(m, q), atol=1e-14)
