"""The dynamic step solves the force balance in the null space of the rigid rows (``compiled.dynamics``).

What a step's result must satisfy, checked with NumPy from the step's own output and the contact model's Python
``evaluate`` (M and c are checked against Pinocchio in test_rigid_body):

- every rigid row holds: ideal actuators turn at their commanded rates, rigid joint constraints keep their
  velocity targets (a mimic joint, Rocky 7's differential);
- eq. 2.82's force balance: M q̈' + c − Aᵀ f_model lies in the span of the rigid rows (their constraint forces)
  with f_model the contact model's and the joint models' forces at the step's end — on the ground, with every
  wheel in the air (the rows of A then rank deficient: the old independent-row formulation's special case), and
  for a model whose rigid row is not a unit row.
"""

from pathlib import Path

import numpy as np
import pytest

from wmr_dynamics import load_model
from wmr_dynamics.compiled import dynamics as D
from wmr_dynamics.dynamics.force_balance import DynamicsOptions, joint_rows
from wmr_dynamics.kinematics import initialize_contact
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import gaussian_rough_terrain

DT = 0.02
DATA = Path(__file__).parent / "data"


def _state(name, lift=0.0):
    """A state after 1 s of driving over rough ground (then lifted by ``lift`` m) and its engine."""
    model = load_model(name)
    ground = gaussian_rough_terrain(rms=0.04, corr_len=0.5, seed=5)
    opts = DynamicsOptions.from_config(model, contact="linear")
    sim = Simulator(model, ground, mode="dynamic", dt=DT, dynamics=opts)
    q0 = initialize_contact(model, model.state(xyz=(0.5, 0.0, 1.0), rpy=(0, 0, 0.1)), ground)
    r = sim.run(1.0, (0.6, 0.2), q0=q0, progress=False)
    q, qvel = r.q[-1].copy(), r.qvel[-1].copy()
    q[6] += lift
    rng = np.random.default_rng(2)
    u = rng.normal(scale=2.0, size=len(model.actuated_joint_names))
    return model, sim.compiled, opts, q, qvel, u


def _step(engine, q, qvel, u):
    ws = engine.workspace()
    qn, qvn = np.empty_like(q), np.empty_like(qvel)
    status, _, norm, conv = D.force_balance_step(engine.md, engine.td, engine.fd, ws, q.copy(), qvel.copy(),
                                                 u.copy(), np.zeros(len(u)), DT, qn, qvn)
    assert status == 0 and conv
    return ws, qvn


@pytest.mark.parametrize("name, lift", [("zoe", 0.0), ("rocky7", 0.0), ("landtamer", 0.0), ("zoe", 0.3),
                                        (str(DATA / "rocker.urdf"), 0.0)])
def test_step_meets_rigid_rows_and_the_force_balance(name, lift):
    model, engine, opts, q, qvel, u = _state(name, lift)
    ws, qvn = _step(engine, q, qvel, u)
    n, nw, na = model.num_dof, model.num_wheels, len(model.actuated_joint_names)
    A = ws.A[:3 * nw + na + engine.fd.A_joint.shape[0]]
    rigid = ws.rigid[:A.shape[0]].copy()
    # rigid rows: ideal actuators at u, joint constraints at their targets
    np.testing.assert_allclose(A[rigid] @ qvn, ws.v_target[:A.shape[0]][rigid], atol=1e-10)
    act = [model.joint_index(j) + 6 for j in model.actuated_joint_names]
    np.testing.assert_allclose(qvn[act], u, atol=1e-10)
    # model forces at the step's end, from the contact model's Python evaluate
    vc = (A[:3 * nw] @ qvn).reshape(nw, 3)
    Rw = np.asarray(model.wheel_radii) * qvn[engine.md.wheel_frame + 5]  # R ω of each wheel
    dz = ws.dz0[:nw] + vc[:, 2] * DT
    fc = opts.contact.evaluate(vc, Rw, dz)[0]
    if lift > 0:
        assert np.all(ws.dz0[:nw] > 0) and np.allclose(fc, 0.0)  # in the air: no contact force
    else:
        assert fc[:, 2].sum() > 0.3 * model.total_mass * 9.81
    np.testing.assert_allclose(ws.fc[:nw], fc, rtol=1e-9, atol=1e-9 * model.total_mass)
    resid = ws.M[:n, :n] @ (qvn - qvel) / DT + ws.bias[:n] - A[:3 * nw].T @ fc.ravel()
    jr = joint_rows(model)  # joint springs and modelled constraints (eq. 2.74) at the step's end residual
    for k, law in enumerate(jr.models):
        if law is not None:
            c_dot = jr.A[k] @ qvn
            c_end = jr.A[k, 6:] @ q[7:] - jr.b[k] + DT * c_dot
            f = float(np.ravel(law.evaluate(np.array([c_end]), np.array([c_dot]))[0])[0])
            resid -= jr.A[k] * f
    # the rigid rows' constraint force absorbs what is left: resid ∈ span(A_rigidᵀ)
    if rigid.any():
        lam, *_ = np.linalg.lstsq(A[rigid].T, resid, rcond=None)
        resid = resid - A[rigid].T @ lam
    weight = model.total_mass * 9.81
    assert np.abs(resid).max() < 1e-6 * weight
    rank = np.linalg.matrix_rank(A[rigid]) if rigid.any() else 0
    assert ws.counts[D.C_INPUTS] == n - rank  # the unknowns: the null space of the rigid rows


def test_the_rollout_loops_forward_kinematics_is_used_once_and_only_for_its_own_state():
    """The rollout loops compute q's FK for the controller and flag it (``C_FK_READY``) so that the step's set-up
    does not compute it again.  The shortcut must not be taken where it does not hold: a set-up without the flag
    computes the FK of its own q even when the workspace holds another state's, the flag is consumed by the set-up
    that used it, and a flagged step equals an unflagged one."""
    from wmr_dynamics.compiled.rollout import dynamic_advance
    from wmr_dynamics.kinematics.fk import _forward_kinematics

    model, engine, _, q, qvel, u = _state("zoe")
    _, fresh = _step(engine, q, qvel, u)
    q_other = q.copy()
    q_other[4:7] += (0.7, -0.4, 0.05)  # another pose: its FK left in the workspace
    ws = engine.workspace()
    _forward_kinematics(engine.md.parent, engine.md.jtype, engine.md.T0, q_other, ws.T_parent, ws.T_world)
    qn, qvn = np.empty_like(q), np.empty_like(qvel)
    assert ws.counts[D.C_FK_READY] == 0
    D.force_balance_step(engine.md, engine.td, engine.fd, ws, q.copy(), qvel.copy(), u.copy(), np.zeros(len(u)), DT,
                         qn, qvn)
    np.testing.assert_array_equal(qvn, fresh)  # FK of q computed: not q_other's
    # flagged with q's own FK: the same step, and the flag is consumed
    ws2 = engine.workspace()
    ws2.counts[D.C_FK_READY] = 1
    _forward_kinematics(engine.md.parent, engine.md.jtype, engine.md.T0, q, ws2.T_parent, ws2.T_world)
    D.force_balance_step(engine.md, engine.td, engine.fd, ws2, q.copy(), qvel.copy(), u.copy(), np.zeros(len(u)),
                         DT, qn, qvn)
    np.testing.assert_array_equal(qvn, fresh)
    assert ws2.counts[D.C_FK_READY] == 0
    # the stepper's loop leaves no flag behind (a later set-up on another state computes its own FK)
    nw, na = model.num_wheels, len(model.actuated_joint_names)
    qa, va = q.copy(), qvel.copy()
    st, _ = dynamic_advance(engine.md, engine.td, engine.fd, engine.cd, ws, qa, va, np.array([0.5, 0.1]), 3, DT,
                            np.zeros(na), np.empty(max(na, 1)), np.empty(nw), np.empty((nw, 3)), np.empty((2, nw)),
                            np.zeros(4))
    assert st == 0 and ws.counts[D.C_FK_READY] == 0


def _fb_step(engine, fd, ws, q, qvel, u):
    """force_balance_step of (q, q̇', u) with ``fd`` in the workspace ``ws``: (status, converged, q̇'[i+1]).  The
    collision search starts afresh (no previous contact angles), as in a new workspace."""
    ws.angle[:] = np.nan
    qn, qvn = np.empty_like(q), np.empty_like(qvel)
    status, _, _, conv = D.force_balance_step(engine.md, engine.td, fd, ws, q.copy(), qvel.copy(), u.copy(),
                                              np.zeros(len(u)), DT, qn, qvn)
    return status, conv, qvn


@pytest.mark.parametrize("name", ["zoe", "rocky7"])
def test_a_workspace_keeps_its_null_space_while_the_rigid_rows_are_the_same(name):
    """Outside the coulomb mode the rigid rows (ideal actuators; Rocky 7's differential, not a unit row) are the
    same at every step: the set-up makes the basis B and null space N once per workspace and then only the rows'
    targets (``_same_rigid_rows``, ``_rigid_targets``).  Steps of other states and commands through one workspace
    equal each step made in a fresh workspace (Zoë's unit rows bit for bit; Rocky 7's targets by forward
    substitution where the fresh set-up orthonormalizes: to rounding)."""
    model, engine, _, q, qvel, u = _state(name)
    fd = engine.fd._replace(reuse_factor=D.REUSE_NEVER)  # (the kept factor's first chord step: its own tests)
    ws = engine.workspace()
    assert ws.counts[D.C_NULL_READY] == 0
    rng = np.random.default_rng(7)
    for _ in range(5):
        qk, uk = q.copy(), u + rng.normal(scale=1.0, size=u.shape)
        qk[4:6] += rng.normal(scale=0.02, size=2)
        st, conv, kept = _fb_step(engine, fd, ws, qk, qvel, uk)
        st0, conv0, fresh = _fb_step(engine, fd, engine.workspace(), qk, qvel, uk)
        assert st == st0 == 0 and conv and conv0
        assert ws.counts[D.C_NULL_READY] == 1
        if name == "zoe":
            np.testing.assert_array_equal(kept, fresh)
        else:
            np.testing.assert_allclose(kept, fresh, rtol=0, atol=1e-9)
        A = ws.A[3 * model.num_wheels:3 * model.num_wheels + len(u) + engine.fd.A_joint.shape[0]]
        rigid = ws.rigid[3 * model.num_wheels:3 * model.num_wheels + A.shape[0]]
        target = ws.v_target[3 * model.num_wheels:3 * model.num_wheels + A.shape[0]]
        np.testing.assert_allclose(A[rigid] @ kept, target[rigid], rtol=0, atol=1e-9)  # every rigid row holds


def test_a_workspace_given_other_rigid_rows_makes_its_null_space_anew():
    """The shortcut's must-not case: one workspace stepped with DynamicsData whose rigid rows differ from those its
    null space was made from — Rocky 7's differential row replaced by another (same rows rigid, other entries),
    then PI actuators (no actuator row rigid), then the original again — makes B and N anew each time: every step
    equals a fresh workspace's, and differs from the original data's (the cases are not alike)."""
    model, engine, _, q, qvel, u = _state("rocky7")
    fd0 = engine.fd
    A2 = fd0.A_joint.copy()
    cols = np.flatnonzero(A2[0])
    A2[0, cols[0]] *= 3.0  # a rocker differential with another ratio
    pi = DynamicsOptions.from_config(model, contact="linear", actuator="pi")
    fd_pi = Simulator(model, gaussian_rough_terrain(rms=0.04, corr_len=0.5, seed=5), mode="dynamic", dt=DT,
                      dynamics=pi).compiled.fd
    assert fd_pi.act_kind != fd0.act_kind
    _, _, original = _fb_step(engine, fd0, engine.workspace(), q, qvel, u)
    ws = engine.workspace()
    _fb_step(engine, fd0, ws, q, qvel, u)
    for fd in (fd0._replace(A_joint=A2), fd_pi, fd0):
        st, _, kept = _fb_step(engine, fd, ws, q, qvel, u)
        st0, _, fresh = _fb_step(engine, fd, engine.workspace(), q, qvel, u)
        assert st == st0 == 0
        np.testing.assert_array_equal(kept, fresh)
        if fd is not fd0:
            assert np.abs(fresh - original).max() > 1e-6


def test_the_coulomb_mode_makes_its_null_space_at_every_step():
    """The coulomb mode's held rows change with its active set: its workspace never keeps B and N."""
    model = load_model("zoe")
    ground = gaussian_rough_terrain(rms=0.04, corr_len=0.5, seed=5)
    sim = Simulator(model, ground, mode="dynamic", dt=DT, dynamics=DynamicsOptions.from_config(model, "coulomb"))
    q0 = initialize_contact(model, model.state(xyz=(0.5, 0.0, 1.0)), ground)
    ws = sim.compiled.workspace()
    st, _, _ = _fb_step(sim.compiled, sim.compiled.fd, ws, q0, np.zeros(model.num_dof),
                        np.full(len(model.actuated_joint_names), 1.0))
    assert st == 0 and ws.counts[D.C_NULL_READY] == 0
