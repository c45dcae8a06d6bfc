"""The Newton loop's first chord step on the previous step's factor of ∂e/∂x (``DynamicsOptions.reuse_factor``,
``compiled.dynamics._newton``).

A shortcut, so each case where it must not be taken is tested: a fresh workspace (no factor), another Δt (the
factor's G = N M Nᵀ/Δt is another matrix), another null space (the factor's coordinates are gone), the
coulomb mode, ``reuse_factor=False``, and for the piecewise-linear model (its default: where it has been paying) the
steps its back-off skips.  Where it is taken, the step still ends at the force balance's tolerance, on the same
trajectory as without it to that tolerance.
"""

import dataclasses

import numpy as np
import pytest

from wmr_dynamics import load_model
from wmr_dynamics.compiled import dynamics as D
from wmr_dynamics.contact_models import CoulombContact, IshigamiContact, LinearContact, PacejkaContact
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.errors import ModelError
from wmr_dynamics.kinematics import initialize_contact
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import gaussian_rough_terrain

DT = 0.04


def _sim(contact: str, reuse=None, model_name="zoe"):
    model = load_model(model_name)
    ground = gaussian_rough_terrain(rms=0.04, corr_len=0.5, seed=5)
    opts = DynamicsOptions.from_config(model, contact=contact)
    if reuse is not None:
        opts = dataclasses.replace(opts, reuse_factor=reuse)
    sim = Simulator(model, ground, mode="dynamic", dt=DT, dynamics=opts)
    q0 = initialize_contact(model, model.state(xyz=(0.5, 0.0, 1.0), rpy=(0, 0, 0.1)), ground)
    return model, sim, q0


def _copy(ws):
    return type(ws)(*[a.copy() for a in ws])


def _step(engine, ws, q, qvel, u, dt):
    qn, qvn = np.empty_like(q), np.empty_like(qvel)
    status, it, norm, conv = D.force_balance_step(engine.md, engine.td, engine.fd, ws, q.copy(), qvel.copy(),
                                                  u.copy(), np.zeros(len(u)), dt, qn, qvn)
    assert status == 0
    return it, norm, conv, qn, qvn


def _states(sim, q0, t=1.0):
    r = sim.run(t, (0.6, 0.2), q0=q0, progress=False)
    return r.q, r.qvel


def test_default_follows_the_contact_model():
    """Always for the smooth models (Pacejka, terramechanics), where it has been paying for the piecewise-linear
    model (one Newton step is exact there), never in the coulomb mode (it remakes its null space every step)."""
    assert PacejkaContact(1000.0).smooth_force and IshigamiContact(0.3, 0.1).smooth_force
    assert not LinearContact(1000.0).smooth_force and not CoulombContact(1000.0).smooth_force
    for contact, code in (("pacejka", D.REUSE_ALWAYS), ("ishigami", D.REUSE_ALWAYS), ("linear", D.REUSE_WHEN_PAID),
                          ("coulomb", D.REUSE_NEVER)):
        assert _sim(contact)[1].compiled.fd.reuse_factor == code
    assert _sim("pacejka", reuse=False)[1].compiled.fd.reuse_factor == D.REUSE_NEVER
    assert _sim("linear", reuse=True)[1].compiled.fd.reuse_factor == D.REUSE_ALWAYS
    assert _sim("linear", reuse=False)[1].compiled.fd.reuse_factor == D.REUSE_NEVER
    assert _sim("coulomb", reuse=True)[1].compiled.fd.reuse_factor == D.REUSE_NEVER  # never in the coulomb mode
    with pytest.raises(ModelError, match="reuse_factor must be True, False or None, got 1"):
        DynamicsOptions(contact=LinearContact(1000.0), reuse_factor=1)


def test_taken_only_with_a_factor_of_the_same_null_space_and_step():
    """Two workspaces equal in everything but the kept factor (C_FACTOR cleared in one): at another Δt, or with
    no factor, their steps are the same to the bit (the chord step was not taken); at the factor's Δt they
    differ (it was), both converged and within the tolerance's effect of each other."""
    model, sim, q0 = _sim("pacejka")
    engine = sim.compiled
    Q, QV = _states(sim, q0)
    u = np.array([4.0, 4.0, 4.0, 4.0])[:len(model.actuated_joint_names)]
    ws = engine.workspace()
    assert ws.counts[D.C_FACTOR] == 0  # fresh: none
    _step(engine, ws, Q[-3], QV[-3], u, DT)
    assert ws.counts[D.C_FACTOR] == 1 and ws.vp[1, 0] == DT  # the step's LU factor, kept with its Δt
    cleared = _copy(ws)
    cleared.counts[D.C_FACTOR] = 0
    for dt in (DT / 2, DT * 1.5):  # another step length: not taken
        a, b = _copy(ws), _copy(cleared)
        ra, rb = _step(engine, a, Q[-2], QV[-2], u, dt), _step(engine, b, Q[-2], QV[-2], u, dt)
        assert ra[0] == rb[0] and np.array_equal(ra[3], rb[3]) and np.array_equal(ra[4], rb[4])
    a, b = _copy(ws), _copy(cleared)
    ra, rb = _step(engine, a, Q[-2], QV[-2], u, DT), _step(engine, b, Q[-2], QV[-2], u, DT)
    assert ra[2] and rb[2] and ra[1] <= engine.fd.tolerance and rb[1] <= engine.fd.tolerance
    assert not np.array_equal(ra[4], rb[4])  # taken: another path to the same solution
    np.testing.assert_allclose(ra[4], rb[4], atol=1e-6)


def test_not_taken_after_the_null_space_changed():
    """The same workspace given other rigid rows (PI actuators in place of ideal ones: no actuator row is rigid)
    makes B and N anew and drops the factor: its step equals a fresh workspace's to the bit."""
    model, sim, q0 = _sim("pacejka")
    engine = sim.compiled
    Q, QV = _states(sim, q0)
    u = np.full(len(model.actuated_joint_names), 4.0)
    ws = engine.workspace()
    _step(engine, ws, Q[-3], QV[-3], u, DT)
    assert ws.counts[D.C_FACTOR] == 1
    opts = DynamicsOptions.from_config(model, contact="pacejka", actuator="pi")
    other = Simulator(model, sim.terrain, mode="dynamic", dt=DT, dynamics=opts).compiled
    assert other.fd.reuse_factor == D.REUSE_ALWAYS
    a = _step(other, _copy(ws), Q[-2], QV[-2], u, DT)
    fresh = other.workspace()
    fresh.angle[:] = ws.angle  # the collision search's warm start, as the used workspace has it
    b = _step(other, fresh, Q[-2], QV[-2], u, DT)
    assert a[0] == b[0] and np.array_equal(a[4], b[4])


@pytest.mark.parametrize("contact", ["pacejka", "ishigami_lut"])
def test_same_trajectory_with_and_without(contact):
    """Zoë on the thesis's rough terrain 1, 3 s, with and without the reused factor: every step converged to the
    tolerance, in fewer Newton steps with it (iterations count its chord steps too), and the trajectories agree
    to what the tolerance allows (µm; where the contact set switches, a tolerance-sized difference can grow)."""
    from wmr_dynamics.scenarios import zoe_rough as zoe

    model, terrain = zoe.zoe_model(), zoe.load_terrain(1)
    runs = []
    for reuse in (True, False):
        opts = dataclasses.replace(zoe.dynamics_options(model, contact), reuse_factor=reuse)
        sim = zoe.make_simulator(model, terrain, contact, 0.04, opts)
        assert sim.compiled.fd.reuse_factor == (D.REUSE_ALWAYS if reuse else D.REUSE_NEVER)
        runs.append(sim.run(3.0, (zoe.SPEED, 0.0), q0=zoe.initial_state(model, terrain), progress=False))
    a, b = runs
    assert a.converged.all() and b.converged.all()
    assert max(a.cost[:-1].max(), b.cost[:-1].max()) <= sim.compiled.fd.tolerance
    assert not np.array_equal(a.q, b.q)
    np.testing.assert_allclose(a.q[:, 4:7], b.q[:, 4:7], atol=1e-5)


def _talon(reuse=None, t=1.5):
    """Talon (tracks, 10 contact elements) on the thesis's rocky_rough_0 at Δt 0.01, linear contact: the states of a
    run and its engine."""
    from wmr_dynamics.scenarios import zoe_rough as zoe
    from wmr_dynamics.scenarios.paths import rough_terrain_path
    from wmr_dynamics.terrain import load_wmrde_grid

    model, terrain = load_model("talon"), load_wmrde_grid(rough_terrain_path("rocky_rough_0"))
    opts = zoe.dynamics_options(model, "linear")
    if reuse is not None:
        opts = dataclasses.replace(opts, reuse_factor=reuse)
    sim = zoe.make_simulator(model, terrain, "linear", 0.01, opts)
    return model, sim, sim.run(t, (zoe.SPEED, 0.0), q0=zoe.initial_state(model, terrain), progress=False)


def test_when_paid_backs_off_after_misses():
    """REUSE_WHEN_PAID (the piecewise-linear default): a loop that chord steps on the previous step's factor end
    without a Newton step (the factor in ws.H unchanged, within the tolerance) keeps it on (no misses, no skip);
    one that needs a Newton step makes the next 2^k − 1 steps start without it, k the misses in a row (capped); a
    skipped step is bit for bit the step without the option.  Checked step by step along the Talon's run, from one
    workspace carried from step to step as a run does, with every outcome seen."""
    model, sim, res = _talon()
    engine = sim.compiled
    assert engine.fd.reuse_factor == D.REUSE_WHEN_PAID
    never = engine.fd._replace(reuse_factor=D.REUSE_NEVER)
    ws = engine.workspace()
    u = np.zeros(len(model.actuated_joint_names))
    seen = {"paid": 0, "missed": 0, "skipped": 0}
    for k in range(60, 140):
        u[:] = res.qvel[k + 1, 6:]  # (ideal actuators: the commanded rates are the next state's)
        skip, misses = int(ws.counts[D.C_REUSE_SKIP]), int(ws.counts[D.C_REUSE_MISSES])
        tried = skip == 0 and ws.counts[D.C_FACTOR] != 0
        other, factor = _copy(ws), ws.H.copy()
        it, norm, conv, qn, qvn = _step(engine, ws, res.q[k], res.qvel[k], u, 0.01)
        if not tried:
            seen["skipped"] += 1
            assert ws.counts[D.C_REUSE_SKIP] == max(skip - 1, 0) and ws.counts[D.C_REUSE_MISSES] == misses
            qn2, qvn2 = np.empty_like(qn), np.empty_like(qvn)
            r = D.force_balance_step(engine.md, engine.td, never, other, res.q[k].copy(), res.qvel[k].copy(), u.copy(),
                                     np.zeros(len(u)), 0.01, qn2, qvn2)
            assert r[1] == it and np.array_equal(qvn2, qvn)
        elif np.array_equal(ws.H, factor) and norm <= engine.fd.tolerance:
            seen["paid"] += 1
            assert ws.counts[D.C_REUSE_MISSES] == 0 and ws.counts[D.C_REUSE_SKIP] == 0
        else:
            seen["missed"] += 1
            k_new = min(misses + 1, D.REUSE_MAX_BACKOFF)
            assert ws.counts[D.C_REUSE_MISSES] == k_new and ws.counts[D.C_REUSE_SKIP] == (1 << k_new) - 1
        assert np.isfinite(norm)  # (a step alone may end unconverged: a run retakes it as half steps)
    assert min(seen.values()) > 0, seen


def test_when_paid_same_trajectory_as_never():
    """The Talon's run with the piecewise-linear default (REUSE_WHEN_PAID) and with ``reuse_factor=False``: every
    step converged to the tolerance on both, they differ (chord steps were taken), and agree to what the tolerance
    allows (µm)."""
    runs = [_talon(reuse)[2] for reuse in (None, False)]
    a, b = runs
    assert a.converged.all() and b.converged.all()
    assert not np.array_equal(a.q, b.q)
    np.testing.assert_allclose(a.q[:, 4:7], b.q[:, 4:7], atol=1e-5)
