"""The force-balance Newton loop's shortcuts (issue 14; docs/dynamics.md, "Work skipped where it is not needed"):
the chord step with the last Newton step's factor where quadratic convergence predicts that it ends the loop,
the first chord step with the previous time step's factor (``reuse_factor``), and the cases where they must not
be taken.  The loop runs as plain Python (NUMBA_DISABLE_JIT=1, the same kernels)
so that its steps can be counted and the chord step forced to fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

_RUN = r"""
import dataclasses, json, sys
sys.path.insert(0, sys.argv[1])
from wmr_dynamics.compiled import dynamics as D
from wmr_dynamics.scenarios import zoe_rough as zoe

calls = {"tried": 0, "taken": 0, "halved": 0, "first_tried": 0, "first_taken": 0, "first_lower": 0}
chord = D._chord_step

def counted(md, fd, ws, qvel, integral, dt, norm, nx, lu, decrease):
    first = decrease == 1.0  # (the first chord step, on the previous time step's factor)
    calls["first_tried" if first else "tried"] += 1
    new = chord(md, fd, ws, qvel, integral, dt, norm, nx, lu, decrease)
    if new >= 0.0:
        calls["first_taken" if first else "taken"] += 1
        calls["first_lower" if first else "halved"] += new <= (norm if first else 0.5 * norm)
    return new

def rejected(md, fd, ws, qvel, integral, dt, norm, nx, lu, decrease):
    if variant == "reuse_rejected" and decrease != 1.0:
        return counted(md, fd, ws, qvel, integral, dt, norm, nx, lu, decrease)
    calls["first_tried" if decrease == 1.0 else "tried"] += 1
    x, e = ws.x.copy(), ws.e.copy()
    chord(md, fd, ws, qvel, integral, dt, norm, nx, lu, decrease)  # evaluated (the trial point is left in ws),
    ws.x[:] = x  # then refused: x and e as a refused step leaves them
    ws.e[:] = e
    return -1.0

variant, kind = sys.argv[2], sys.argv[3]
D._chord_step = rejected if variant.endswith("rejected") else counted
if variant == "newton":
    D.CHORD_MARGIN = 0.0  # the chord test never passes: Newton steps only
model = zoe.zoe_model()
terrain = zoe.load_terrain(1)
opts = dataclasses.replace(zoe.dynamics_options(model, kind), reuse_factor=variant.startswith("reuse"))
sim = zoe.make_simulator(model, terrain, kind, 0.04, opts)
res = sim.run(1.2, (zoe.SPEED, 0.0), q0=zoe.initial_state(model, terrain), progress=False)
print(json.dumps({"calls": calls, "q": res.q.tolist(), "qvel": res.qvel.tolist(), "it": res.iterations.tolist(),
                  "cost": res.cost.tolist(), "converged": res.converged.tolist(), "tol": sim.compiled.fd.tolerance}))
"""


def _run(variant: str, kind: str) -> dict:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _RUN, str(ROOT), variant, kind], env=env, capture_output=True,
                         text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def pacejka() -> dict:
    """Runs without the previous step's factor (``reuse_factor=False``) unless the variant says "reuse"."""
    return {v: _run(v, "pacejka") for v in ("default", "newton", "rejected", "reuse", "reuse_rejected")}


def test_chord_steps_end_the_loop_within_the_tolerance(pacejka):
    run = pacejka["default"]
    steps = len(run["it"]) - 1
    assert run["calls"]["taken"] >= 0.1 * steps  # the nonlinear model's third step is often a chord step
    assert run["calls"]["halved"] == run["calls"]["taken"]  # a chord step is kept only where it halves ‖e‖
    assert all(run["converged"][:-1])
    assert max(run["cost"][:-1]) <= run["tol"]  # ‖e‖ of the final point, evaluated there
    # the same trajectory as Newton steps only, to what the tolerance allows
    newton = pacejka["newton"]
    assert newton["calls"]["tried"] == 0
    np.testing.assert_allclose(run["q"], newton["q"], rtol=0, atol=1e-6)
    assert sum(run["it"]) <= sum(newton["it"]) + 0.05 * steps


def test_a_chord_step_that_does_not_halve_the_error_is_replaced_by_the_newton_step(pacejka):
    """Every chord step refused: the loop goes on from the same point with the Newton step it would have taken
    without the shortcut — the Newton-only run, bit for bit, in as many iterations."""
    rejected, newton = pacejka["rejected"], pacejka["newton"]
    assert rejected["calls"]["tried"] >= 0.1 * (len(newton["it"]) - 1)
    assert rejected["q"] == newton["q"]
    assert rejected["qvel"] == newton["qvel"]
    assert rejected["it"] == newton["it"]


def test_the_previous_steps_factor_starts_the_loop(pacejka):
    """With ``reuse_factor`` nearly every step starts with a chord step on the previous step's factor, kept only
    where it lowers ‖e‖; the steps still end within the tolerance, on the same trajectory as without it, in
    fewer Newton steps (iterations count chord steps too)."""
    run, off = pacejka["reuse"], pacejka["default"]
    steps = len(run["it"]) - 1
    assert off["calls"]["first_tried"] == 0  # off: never tried
    assert run["calls"]["first_tried"] >= 0.9 * steps
    assert run["calls"]["first_taken"] >= 0.8 * steps
    assert run["calls"]["first_lower"] == run["calls"]["first_taken"]
    assert all(run["converged"][:-1]) and max(run["cost"][:-1]) <= run["tol"]
    np.testing.assert_allclose(run["q"], off["q"], rtol=0, atol=1e-6)


def test_a_refused_first_chord_step_leaves_the_newton_loop_as_without_it(pacejka):
    """Every first chord step refused: the loop goes on from the warm start with the Newton step it takes without
    the previous step's factor — that run bit for bit, in as many iterations (a refused chord step and the
    Newton step that replaces it are one iteration)."""
    rejected, off = pacejka["reuse_rejected"], pacejka["default"]
    steps = len(off["it"]) - 1
    assert rejected["calls"]["first_tried"] >= 0.9 * steps
    assert rejected["q"] == off["q"]
    assert rejected["qvel"] == off["qvel"]
    assert rejected["it"] == off["it"]


def test_the_piecewise_linear_model_needs_no_chord_step():
    """One Newton step solves a piecewise-linear model exactly while no wheel changes piece: the loop ends
    there, and no chord step is even tried (the shortcut leaves its trajectories as Newton's)."""
    run, newton = _run("default", "linear"), _run("newton", "linear")
    assert run["calls"]["tried"] == 0
    assert run["q"] == newton["q"]
    assert np.mean(run["it"][:-1]) < 1.2


_BACKTRACK = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from wmr_dynamics import load_model
from wmr_dynamics.compiled import dynamics as D
from wmr_dynamics.scenarios import zoe_rough
from wmr_dynamics.simulate import Simulator

searches = []
search = D._line_search

def phi_at(md, fd, ws, qvel, integral, dt, a, nx):
    e = np.zeros(ws.e.shape[0])
    D._residual(md, fd, ws, ws.x[:nx] + a * ws.p[:nx], qvel, integral, dt, False, e)
    return float(e[:nx] @ e[:nx])

def recorded(md, fd, ws, qvel, integral, dt, phi0, dphi0, nx):
    a = search(md, fd, ws, qvel, integral, dt, phi0, dphi0, nx)
    x_t, e_t = ws.x_t[:nx].copy(), ws.e_t[:nx].copy()
    trials = [(b, phi_at(md, fd, ws, qvel, integral, dt, b, nx)) for b in 0.5 ** np.arange(13)]
    if a > 0.0:  # the accepted point last, so that ws holds its contact partials again, as the search left it
        phi_at(md, fd, ws, qvel, integral, dt, a, nx)
    searches.append({"alpha": a, "phi0": phi0, "dphi0": dphi0, "trials": trials,
                     "kept": bool(np.array_equal(x_t, ws.x[:nx] + a * ws.p[:nx])) if a > 0.0 else True,
                     "phi_kept": float(e_t @ e_t)})
    return a

D._line_search = recorded
model = load_model("zoe")
sim = Simulator(model, zoe_rough.load_terrain(1), mode="dynamic", dt=0.04)
res = sim.run(1.0, (0.51182162, 0.54055644), progress=False)
print(json.dumps({"searches": searches, "c1": D.C1, "converged": res.converged.tolist()}))
"""


def test_the_line_search_takes_the_longest_halved_step_that_decreases_the_error_enough():
    """Backtracking (Nocedal & Wright Alg. 3.1) in place of the thesis's strong-Wolfe zoom (App. D): each Newton
    step takes the first of α = 1, 1/2, 1/4, … that meets the sufficient decrease (eq. D.2) — never a shorter
    one, which the zoom's curvature test guarded against — and 0 (the loop stops) where none down to 2^−12
    does.  Zoë (YAML defaults) from rest turning (the planner's batch, whose friction caps the full Newton
    steps cross): ‖e(x + αp)‖² recomputed at every α = 2^−k for every line search of 1 s."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _BACKTRACK, str(ROOT)], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    run = json.loads(out.stdout.strip().splitlines()[-1])
    c1, damped = run["c1"], 0
    for s in run["searches"]:
        ok = [b for b, phi in s["trials"] if phi <= s["phi0"] + c1 * b * s["dphi0"]]
        assert s["dphi0"] < 0.0  # a descent direction of the Gauss–Newton model
        assert s["alpha"] == (ok[0] if ok else 0.0)  # the first (longest) α meeting eq. D.2, or none
        assert s["kept"]  # the accepted point is the search's last evaluation (no re-evaluation)
        if s["alpha"] > 0.0:
            assert s["phi_kept"] == pytest.approx(dict(s["trials"])[s["alpha"]], rel=1e-12, abs=1e-12)
        damped += 0.0 < s["alpha"] < 1.0
    assert damped >= 10  # (26 of 64 on 2026-11-28) full steps across a friction cap that fail eq. D.2
    assert all(run["converged"])
