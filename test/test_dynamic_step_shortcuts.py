"""The dynamic step's shortcuts and the cases where they must not be taken (issue 14).

The independent rows of the force balance (thesis eqs. 2.66–2.68) are selected by a pivoted Gram–Schmidt;
a step reuses the previous step's selection when it had full row rank and the wheels in contact (Δz ≤ 0) are
the same.  It must select afresh when a wheel lifts off or touches down, and when the reused rows have become
nearly dependent.  Each case is checked on the compiled step itself, against a fresh workspace (no
selection to reuse) at the same state.
"""

import itertools

import numpy as np
import pytest

from wmr_dynamics.compiled import dynamics as D
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.scenarios import zoe_rough as zoe

DT = 0.04


@pytest.fixture(scope="module")
def run():
    """Zoë, dynamic, piecewise-linear contact, 2 s on rough terrain 1: the engine, states and commands."""
    model = zoe.zoe_model()
    terrain = zoe.load_terrain(1)
    sim = zoe.make_simulator(model, terrain, "linear", DT, zoe.dynamics_options(model, "linear"))
    r = sim.run(2.0, (zoe.SPEED, 0.0), q0=zoe.initial_state(model, terrain), progress=False)
    U = np.array([sim.controller(q, forward_kinematics(model, q), zoe.SPEED, 0.0) for q in r.q])
    return model, sim.compiled, r.q, r.qvel, U


def step(engine, ws, q, qvel, u):
    """One compiled force-balance step from (q, q̇'); returns q̇' at its end."""
    integral = np.zeros(len(u))
    qn, qvn = np.empty_like(q), np.empty_like(qvel)
    status, _, _, _ = D.force_balance_step(engine.md, engine.td, engine.fd, ws, q.copy(), qvel.copy(), u.copy(),
                                           integral, DT, qn, qvn)
    assert status == 0
    return qvn


def fresh(engine, q, qvel, u):
    """The step from a new workspace (the selection computed by the pivoted Gram–Schmidt) and its kept rows."""
    ws = engine.workspace()
    return step(engine, ws, q, qvel, u), ws.keep.copy()


def test_selection_is_reused_while_the_wheels_in_contact_stay_the_same(run):
    model, engine, Q, QV, U = run
    ws = engine.workspace()
    step(engine, ws, Q[20], QV[20], U[20])
    assert ws.counts[D.C_SELECTIONS] == 1
    assert ws.counts[D.C_INDEP] == model.num_dof  # full row rank: reusable
    assert ws.counts[D.C_SELECTION] == 1
    contacts = ws.counts[D.C_SELECTION_CONTACTS]
    assert contacts == 0b1111  # all four wheels on the ground
    differs = 0
    for k in range(21, 50):
        got = step(engine, ws, Q[k], QV[k], U[k])
        assert ws.counts[D.C_SELECTION_CONTACTS] == contacts
        want, keep = fresh(engine, Q[k], QV[k], U[k])
        assert np.linalg.matrix_rank(ws.A[:len(keep)][ws.keep[:len(keep)]]) == model.num_dof
        # the pivoting may prefer other rows of a dependent group now; the reused ones parameterize the same
        # velocities, so the step's result is the same to the Newton tolerance
        differs += int(np.any(ws.keep != keep))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert ws.counts[D.C_SELECTIONS] == 1  # 29 steps, no new selection
    assert differs > 0  # (the run includes steps where a fresh selection would have differed)


def test_selection_is_redone_when_wheels_lift_off_or_touch_down(run):
    model, engine, Q, QV, U = run
    ws = engine.workspace()
    step(engine, ws, Q[20], QV[20], U[20])
    assert ws.counts[D.C_SELECTIONS] == 1
    lifted = Q[21].copy()
    lifted[6] += 0.05  # 5 cm up: every wheel off the ground
    got = step(engine, ws, lifted, QV[21], U[21])
    assert ws.counts[D.C_SELECTION_CONTACTS] == 0
    assert ws.counts[D.C_SELECTIONS] == 2  # lift-off: selected afresh
    want, keep = fresh(engine, lifted, QV[21], U[21])
    np.testing.assert_array_equal(ws.keep, keep)
    np.testing.assert_array_equal(got, want)
    got = step(engine, ws, Q[22], QV[22], U[22])
    assert ws.counts[D.C_SELECTION_CONTACTS] == 0b1111
    assert ws.counts[D.C_SELECTIONS] == 3  # touch-down: selected afresh
    np.testing.assert_array_equal(got, fresh(engine, Q[22], QV[22], U[22])[0])
    step(engine, ws, Q[23], QV[23], U[23])
    n_sel = ws.counts[D.C_SELECTIONS]
    step(engine, ws, Q[24], QV[24], U[24])
    assert ws.counts[D.C_SELECTIONS] == n_sel  # same wheels on the ground: reused
    ws.counts[D.C_SELECTION_CONTACTS] = 0b0111  # as if wheel 3 had been in the air at the last selection
    got = step(engine, ws, Q[25], QV[25], U[25])
    assert ws.counts[D.C_SELECTIONS] == n_sel + 1  # one wheel's contact changed: selected afresh
    np.testing.assert_array_equal(got, fresh(engine, Q[25], QV[25], U[25])[0])


def test_nearly_dependent_reused_rows_are_selected_afresh(run):
    """A stale selection whose rows no longer span the joint space (here: kept rows swapped for dropped ones
    that the others already span) is caught by C's pivots and replaced; the step equals a fresh one."""
    model, engine, Q, QV, U = run
    ws = engine.workspace()
    step(engine, ws, Q[20], QV[20], U[20])
    keep = ws.keep.copy()
    A = ws.A[:len(keep)].copy()
    n = model.num_dof
    swap = None
    kept, dropped = np.flatnonzero(keep & ~ws.rigid[:len(keep)]), np.flatnonzero(~keep)
    for m in (1, 2):  # swap m kept rows for m dropped ones until the rows no longer span the joint space
        for ks in itertools.combinations(kept, m):
            for ds in itertools.combinations(dropped, m):
                trial = keep.copy()
                trial[list(ks)], trial[list(ds)] = False, True
                if np.linalg.matrix_rank(A[trial], tol=1e-9 * np.abs(A).max()) < n:
                    swap = trial
                    break
            if swap is not None:
                break
        if swap is not None:
            break
    assert swap is not None, "no rank-deficient swap found at this state"
    ws.keep[:len(keep)] = swap
    n_sel = ws.counts[D.C_SELECTIONS]
    got = step(engine, ws, Q[21], QV[21], U[21])
    assert ws.counts[D.C_SELECTIONS] == n_sel + 1  # the reuse was refused
    want, keep21 = fresh(engine, Q[21], QV[21], U[21])
    np.testing.assert_array_equal(ws.keep, keep21)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("vehicle", ["zoe", "rocky7"])
def test_only_a_full_rank_selection_is_kept_for_reuse(vehicle):
    """Where fewer independent rows than joint-space dimensions are kept, a dropped row could become
    independent as the vehicle moves: the step marks its selection reusable exactly when it has full rank."""
    from wmr_dynamics import load_model
    from wmr_dynamics.scenarios.paths import rough_terrain_path
    from wmr_dynamics.terrain import load_wmrde_grid

    model = zoe.zoe_model() if vehicle == "zoe" else load_model(vehicle)
    terrain = load_wmrde_grid(rough_terrain_path("zoe_rough_1" if vehicle == "zoe" else "rocky_rough_0"))
    sim = zoe.make_simulator(model, terrain, "linear", DT, zoe.dynamics_options(model, "linear"))
    r = sim.run(1.0, (zoe.SPEED, 0.0), q0=zoe.initial_state(model, terrain), progress=False)
    engine = sim.compiled
    ws = engine.workspace()
    for k in range(0, len(r.q), 5):
        u = sim.controller(r.q[k], forward_kinematics(model, r.q[k]), zoe.SPEED, 0.0)
        step(engine, ws, r.q[k], r.qvel[k], u)
        assert ws.counts[D.C_SELECTION] == (ws.counts[D.C_INDEP] == model.num_dof)
