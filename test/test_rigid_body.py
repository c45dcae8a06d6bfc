"""CRBA (thesis Alg. 3) and RNEA (Alg. 4) against Pinocchio on the bundled vehicles' URDFs."""

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from wmr_dynamics import bundled_vehicles, load_model
from wmr_dynamics.dynamics import crba, rnea, rnea_bias
from wmr_dynamics.urdf import data_dirs


def pinocchio_model(name, tmp_path):
    """Pinocchio model of the same URDF, rooted at our floating body (massless root dropped, mimic tags
    removed: they are our holonomic constraints, not part of the unconstrained tree)."""
    tree = ET.parse(data_dirs()[0] / "urdf" / f"{name}.urdf")
    robot = tree.getroot()
    for j in robot.iter("joint"):
        for mimic in j.findall("mimic"):
            j.remove(mimic)
    links = {lk.get("name"): lk for lk in robot.findall("link")}
    children = {j.find("child").get("link") for j in robot.findall("joint")}
    (root,) = [n for n in links if n not in children]
    if links[root].find("inertial") is None:
        joint = next(j for j in robot.findall("joint") if j.find("parent").get("link") == root)
        robot.remove(links[root])
        robot.remove(joint)
    path = tmp_path / f"{name}.urdf"
    tree.write(path)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return pm, pm.createData()


def mapping(model, pm):
    """Index map: ours[k] = pin[idx[k]] for joint-space vectors (base: ours [ω; v], Pinocchio [v; ω])."""
    idx = np.empty(model.num_dof, dtype=int)
    idx[:3], idx[3:6] = [3, 4, 5], [0, 1, 2]
    for jid in range(2, pm.njoints):
        idx[6 + model.joint_index(pm.names[jid])] = pm.joints[jid].idx_v
    return idx


def pin_q(model, pm, q):
    qp = pin.neutral(pm)
    qp[:3], qp[3:7] = q[4:7], q[:4]
    for jid in range(2, pm.njoints):
        j, th = pm.joints[jid], q[7 + model.joint_index(pm.names[jid])]
        if j.nq == 2:
            qp[j.idx_q:j.idx_q + 2] = np.cos(th), np.sin(th)
        else:
            qp[j.idx_q] = th
    return qp


@pytest.mark.parametrize("name", bundled_vehicles())
def test_crba_and_rnea_match_pinocchio(name, tmp_path):
    model = load_model(name)
    pm, pd = pinocchio_model(name, tmp_path)
    assert pm.nv == model.num_dof
    idx = mapping(model, pm)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = model.state(xyz=rng.normal(size=3), rpy=rng.uniform(-0.5, 0.5, 3),
                        joints=rng.uniform(-0.6, 0.6, model.num_joints))
        qvel, qacc = rng.normal(size=model.num_dof), rng.normal(size=model.num_dof)
        qp = pin_q(model, pm, q)
        M_pin = pin.crba(pm, pd, qp)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        M = crba(model, q)
        np.testing.assert_allclose(M, M_pin[np.ix_(idx, idx)], rtol=1e-9, atol=1e-9 * np.abs(M).max())
        v_pin, a_pin = np.empty(model.num_dof), np.empty(model.num_dof)
        v_pin[idx], a_pin[idx] = qvel, qacc
        c_pin = pin.rnea(pm, pd, qp, v_pin, np.zeros(pm.nv))
        c = rnea_bias(model, q, qvel)
        np.testing.assert_allclose(c, c_pin[idx], rtol=1e-9, atol=1e-9 * np.abs(c).max())
        tau_pin = pin.rnea(pm, pd, qp, v_pin, a_pin)
        np.testing.assert_allclose(rnea(model, q, qvel, qacc), tau_pin[idx], rtol=1e-9,
                                   atol=1e-9 * np.abs(tau_pin).max())


def test_external_force_enters_as_jacobian_transpose():
    # A force on a wheel frame is equivalent to −Jᵀ f in joint space (eq. 2.53 with f_ext in Alg. 4 line 10).
    model = load_model("zoe")
    rng = np.random.default_rng(1)
    q = model.state(xyz=(0, 0, 1), rpy=(0.1, -0.2, 0.3), joints=rng.uniform(-0.3, 0.3, model.num_joints))
    qvel = rng.normal(size=model.num_dof)
    k = model.frame_index("BL")
    f = np.zeros((model.num_frames, 6))
    f[k] = rng.normal(size=6)
    diff = rnea(model, q, qvel) - rnea(model, q, qvel, f_ext=f)
    # virtual power: diff · q̇' = f · (spatial velocity of frame k in its own coordinates) for any q̇'
    from wmr_dynamics.dynamics.rigid_body import _rnea, _transforms

    T_world, X = _transforms(model, q)
    for _ in range(3):
        u = rng.normal(size=model.num_dof)
        nf = model.num_frames
        vel = np.empty((nf, 6))
        _rnea(model.parent, model.joint_type, model.I_spatial, X, T_world[0, :3, :3], u, np.zeros(model.num_dof),
              0.0, np.zeros((nf, 6)), vel, np.empty((nf, 6)), np.empty((nf, 6)), np.empty(model.num_dof))
        assert diff @ u == pytest.approx(f[k] @ vel[k], rel=1e-10)


def test_gravity_only_bias_is_weight_on_a_level_body():
    model = load_model("landtamer")
    c = rnea_bias(model, model.state(), np.zeros(model.num_dof))
    np.testing.assert_allclose(c[3:6], [0, 0, model.total_mass * 9.81], rtol=1e-12)
