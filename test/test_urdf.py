"""URDF import against Pinocchio (an independent URDF-based rigid-body library) and bad-input handling."""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from wmr_dynamics import UrdfError, bundled_vehicles, forward_kinematics, load_model

DATA = Path(__file__).parent / "data"
TEST_URDFS = [DATA / "skid4.urdf", DATA / "odd_axes.urdf"]


def _pin(path):
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return model, model.createData()


def _body_offset(model):
    """T_root_body: where our floating body sits in the URDF root link (identity unless a massless root was dropped)."""
    for name, (frame, T_body_name) in model.fixed_frames.items():
        if frame == model.frame_names[0] and name not in model.frames[0].aliases:
            return np.linalg.inv(np.array(T_body_name))
    return np.eye(4)


def _composite_about_com(model, T):
    """Total mass, com and inertia about the com (world axes) from the model's per-frame mass properties."""
    m = model.mass.sum()
    coms = np.einsum("nij,nj->ni", T[:, :3, :3], model.com) + T[:, :3, 3]
    c = (model.mass[:, None] * coms).sum(0) / m
    I = np.zeros((3, 3))
    for k in range(model.num_frames):
        R, d = T[k, :3, :3], coms[k] - c
        I += R @ model.inertia[k] @ R.T + model.mass[k] * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, I


def _all_urdfs():
    from wmr_dynamics.urdf import data_dirs

    bundled = [data_dirs()[0] / "urdf" / f"{v}.urdf" for v in bundled_vehicles()]
    return TEST_URDFS + bundled


@pytest.mark.parametrize("path", _all_urdfs(), ids=lambda p: p.stem)
def test_merged_mass_properties_match_pinocchio(path):
    model = load_model(path)
    T = forward_kinematics(model, model.neutral_state())
    m, c, I = _composite_about_com(model, T)
    pm, pd = _pin(path)
    q = pin.neutral(pm)
    pin.ccrba(pm, pd, q, np.zeros(pm.nv))
    # Pinocchio's free flyer carries the URDF root; express its results in our body frame.
    T_rb = _body_offset(model)
    R, p = T_rb[:3, :3], T_rb[:3, 3]
    assert m == pytest.approx(pin.computeTotalMass(pm), rel=1e-12)
    np.testing.assert_allclose(c, R.T @ (pin.centerOfMass(pm, pd, q) - p), atol=1e-12)
    np.testing.assert_allclose(I, R.T @ pd.Ig.inertia @ R, atol=1e-10 * max(1.0, np.abs(I).max()))


def _pin_config(pm, model, T_root, theta):
    q = pin.neutral(pm)
    q[:3] = T_root[:3, 3]
    q[3:7] = pin.Quaternion(T_root[:3, :3]).coeffs()  # (x, y, z, w)
    for jid in range(2, pm.njoints):
        j = pm.joints[jid]
        val = theta[model.joint_index(pm.names[jid])]
        if j.nq == 2:  # continuous joints are (cos, sin) in Pinocchio
            q[j.idx_q:j.idx_q + 2] = np.cos(val), np.sin(val)
        else:
            q[j.idx_q] = val
    return q


@pytest.mark.parametrize("path", _all_urdfs(), ids=lambda p: p.stem)
def test_forward_kinematics_matches_pinocchio(path):
    model = load_model(path)
    pm, pd = _pin(path)
    rng = np.random.default_rng(3)
    for _ in range(3):
        T_root = np.eye(4)
        T_root[:3, :3] = pin.rpy.rpyToMatrix(*rng.uniform(-0.6, 0.6, 3))
        T_root[:3, 3] = rng.normal(size=3)
        theta = rng.uniform(-0.5, 0.5, model.num_joints)
        q_pin = _pin_config(pm, model, T_root, theta)
        pin.framesForwardKinematics(pm, pd, q_pin)
        T_body = T_root @ _body_offset(model)
        q = model.state(xyz=T_body[:3, 3], rpy=pin.rpy.matrixToRpy(T_body[:3, :3]), joints=theta)
        T = forward_kinematics(model, q)
        for i, f in enumerate(model.frames):
            oMf = pd.oMf[pm.getFrameId(f.name)]
            np.testing.assert_allclose(T[i, :3, 3], oMf.translation, atol=1e-10, err_msg=f.name)
            if i == 0:
                np.testing.assert_allclose(T[i, :3, :3], oMf.rotation, atol=1e-10)
                continue
            # Our frame is the URDF link frame rotated so the joint axis is one of its own axes.
            urdf_joint = pm.joints[pm.getJointId(f.joint_name)]
            axis_world = oMf.rotation @ _urdf_axis(path, f.joint_name)
            np.testing.assert_allclose(T[i, :3, "XYZ".index(f.joint_type[1])], axis_world, atol=1e-10,
                                       err_msg=f"{f.name} ({urdf_joint.shortname()})")


def _urdf_axis(path, joint_name):
    import xml.etree.ElementTree as ET

    for j in ET.parse(path).getroot().iter("joint"):
        if j.get("name") == joint_name:
            a = j.find("axis")
            v = np.array([float(s) for s in a.get("xyz").split()]) if a is not None else np.array([1.0, 0, 0])
            return v / np.linalg.norm(v)
    raise KeyError(joint_name)


def test_massless_root_is_skipped_and_fixed_links_merged():
    model = load_model(DATA / "skid4.urdf")
    assert model.frame_names[0] == "chassis"
    assert set(model.frames[0].aliases) == {"mast", "battery"}
    assert model.total_mass == pytest.approx(29.0)
    assert model.frame_index("battery") == 0
    assert model.fixed_frames["base_footprint"][0] == "chassis"
    np.testing.assert_allclose(np.array(model.fixed_frames["base_footprint"][1])[:3, 3], [0, 0, -0.15])
    # the config round-trips: a model's YAML dict rebuilds the same model
    again = load_model(DATA / "skid4.urdf", config=model.config)
    np.testing.assert_array_equal(again.T0, model.T0)


def test_wheels_from_rotated_cylinders_and_axes():
    model = load_model(DATA / "odd_axes.urdf")
    assert model.wheel_names == ["w1", "w2", "w3"]
    np.testing.assert_allclose(model.wheel_radii, [0.12, 0.1, 0.1])
    np.testing.assert_allclose(model.wheel_widths, [0.04, 0.05, 0.05])
    assert [model.frames[model.frame_index(n)].joint_type for n in ("arm", "slider")] == ["RX", "PZ"]
    assert (model.joint_lower[1], model.joint_upper[1]) == (-1.0, 1.0)
    assert (model.joint_lower[2], model.joint_upper[2]) == (-0.2, 0.2)
    assert np.isinf(model.joint_upper[3])
    assert model.actuated_joint_names == ["w1_joint", "w2_joint", "w3_joint"]


def test_mimic_becomes_rocker_differential_constraint():
    model = load_model(DATA / "rocker.urdf")
    assert model.num_joint_constraints == 1
    row = np.zeros(model.num_dof)
    row[5 + model.frame_index("D1")] = 1.0
    row[5 + model.frame_index("D2")] = 1.0
    np.testing.assert_array_equal(model.A_joint[0], row)
    assert model.b_joint[0] == 0.0


def test_yaml_sets_actuation_wheels_constraints_and_springs(tmp_path):
    cfg = {
        "name": "rocker_cfg",
        "actuated_joints": ["W1_joint", "W3_joint"],
        "wheels": {"W2_joint": {"radius": 0.08, "shape": "torus", "tube_radius": 0.02}},
        "joint_constraints": [{"name": "lock_D1", "coeffs": {"D1_joint": 1.0}, "value": 0.1}],
        "joint_springs": {"D1_joint": {"stiffness": 100.0, "damping": 5.0}},
        "controller": {"type": "skid_steer"},
    }
    (tmp_path / "rocker.yaml").write_text(yaml.safe_dump(cfg))
    model = load_model(DATA / "rocker.urdf", config=tmp_path / "rocker.yaml")
    assert model.name == "rocker_cfg"
    assert model.actuated_joint_names == ["W1_joint", "W3_joint"]
    assert model.wheel_radius("W2_joint") == 0.08 and model.wheel_radius("W1") == 0.06
    assert model.wheels[model.wheel_index("W2")].shape == "torus"
    assert model.num_joint_constraints == 2 and model.b_joint[1] == 0.1
    assert model.joint_springs["D1_joint"].stiffness == 100.0
    assert model.config["controller"]["type"] == "skid_steer"


# ---- bad input: one test per case, each must raise UrdfError naming the file and the element ----------------
GOOD = (DATA / "rocker.urdf").read_text()


def _write(tmp_path, text, name="robot.urdf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _expect(path, *fragments, config=None):
    with pytest.raises(UrdfError) as e:
        load_model(path, config=config)
    msg = str(e.value)
    assert str(path) in msg or (config is not None and str(config) in msg), msg
    for frag in fragments:
        assert frag in msg, msg
    return msg


def test_missing_file(tmp_path):
    _expect(tmp_path / "nope.urdf", "not found")


def test_unknown_bundled_name():
    with pytest.raises(UrdfError, match="not a bundled vehicle"):
        load_model("no_such_rover")


def test_malformed_xml(tmp_path):
    _expect(_write(tmp_path, GOOD.replace("</robot>", "")), "malformed XML")


def test_unexpanded_xacro(tmp_path):
    line = next(i for i, t in enumerate(GOOD.splitlines(), 1) if 'radius="0.06"' in t)
    _expect(_write(tmp_path, GOOD.replace('radius="0.06"', 'radius="${wheel_r}"', 1)), "xacro", f"line {line}:",
            "'${wheel_r}'")
    _expect(_write(tmp_path, GOOD.replace('<robot name="rocker">', '<robot name="$(arg name)">')), "xacro")


def test_several_roots(tmp_path):
    _expect(_write(tmp_path, GOOD.replace("</robot>", '<link name="orphan"/></robot>')), "several root links",
            "orphan")


def test_cycle(tmp_path):
    loop = ('<joint name="loop" type="fixed"><parent link="W4"/><child link="body"/></joint></robot>')
    _expect(_write(tmp_path, GOOD.replace("</robot>", loop)), "cycle")


def test_link_with_two_parents(tmp_path):
    extra = '<joint name="again" type="fixed"><parent link="D1"/><child link="W3"/></joint></robot>'
    _expect(_write(tmp_path, GOOD.replace("</robot>", extra)), "'W3' is the child of two joints")


def test_no_wheels(tmp_path):
    text = GOOD.replace('type="continuous"', 'type="revolute"').replace(
        '<axis xyz="0 1 0"/></joint>',
        '<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    _expect(_write(tmp_path, text), "no wheels found")


def test_nan_mass(tmp_path):
    _expect(_write(tmp_path, GOOD.replace('<mass value="5"/>', '<mass value="nan"/>')), "link 'body'", "mass")


def test_negative_mass(tmp_path):
    _expect(_write(tmp_path, GOOD.replace('<mass value="5"/>', '<mass value="-5"/>')), "link 'body'", "mass")


def test_zero_mass_wheel(tmp_path):
    text = GOOD.replace('<inertial><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" '
                        'izz="0.001"/></inertial>\n    <collision><origin rpy="1.5707963267948966 0 0"/><geometry>'
                        '<cylinder radius="0.06" length="0.05"/></geometry></collision></link>\n'
                        '  <joint name="W2_joint"',
                        '<collision><origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.06" '
                        'length="0.05"/></geometry></collision></link>\n  <joint name="W2_joint"', 1)
    assert text != GOOD
    _expect(_write(tmp_path, text), "wheel link 'W1' has no mass")


def test_wheel_without_radius(tmp_path):
    # A wheel named in the YAML whose link has no cylinder and no radius in the YAML.
    text = GOOD.replace('<collision><origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.06" '
                        'length="0.05"/></geometry></collision></link>\n  <joint name="W2_joint"',
                        '</link>\n  <joint name="W2_joint"', 1)
    assert text != GOOD
    cfg = _write(tmp_path, yaml.safe_dump({"wheels": {"W1_joint": {"width": 0.05}}}), "cfg.yaml")
    urdf = _write(tmp_path, text)
    assert load_model(urdf).num_wheels == 3  # without the YAML, W1 is not a wheel (no cylinder)
    _expect(urdf, "wheel joint 'W1_joint'", "no radius", config=cfg)
    assert load_model(urdf, config={"wheels": {"W1_joint": {"radius": 0.06}}}).num_wheels == 4


def test_wheel_axis_not_along_cylinder(tmp_path):
    text = GOOD.replace('<origin xyz="0.2 0 -0.1"/><axis xyz="0 1 0"/>',
                        '<origin xyz="0.2 0 -0.1"/><axis xyz="1 0 0"/>', 1)
    _expect(_write(tmp_path, text), "wheel joint 'W1_joint'", "cylinder")


def test_yaml_errors(tmp_path):
    urdf = _write(tmp_path, GOOD)
    bad = _write(tmp_path, "actuated_joints: [W9_joint]\n", "bad.yaml")
    _expect(urdf, "actuated_joints", "W9_joint", config=bad)
    _expect(urdf, "unknown keys", "wheelz", config=_write(tmp_path, "wheelz: {}\n", "k.yaml"))
    _expect(urdf, "malformed YAML", config=_write(tmp_path, "a: [1, 2\n", "m.yaml"))
    _expect(urdf, "joint_constraints[0]", config=_write(tmp_path, "joint_constraints: [{value: 1}]\n", "c.yaml"))
