#!/usr/bin/env python3
"""Speed of the Zoë rough-terrain benchmark (thesis §2.5.4, Table 2.6; issue 5 items 4–5) and a profile of
the compiled dynamic step.

Runs the benchmark of ``benchmarks/zoe_rough.py`` (Zoë, steering held straight, 0.5 m/s straight for 10 s
on the ten terrains ``zoe_rough_{1..10}.txt``, naive controller, ideal actuators) with the kinematic model
and the dynamic model with piecewise-linear, Pacejka and Ishigami-LUT contact at Δt = 0.01, 0.04, 0.10 s on
the default engine (``engine="auto"``: the whole run in one compiled call), and at Δt = 0.04 s also as the
step loop (``engine="python"``: single compiled steps called from Python; before the one-engine change this
was a separate NumPy implementation, the "Python path" of the older figures), all in one run.  Reported
per model and Δt: real-time factor (simulated time / wall time of the stepping call,
``SimResult.wall_time_s``, over all terrains), µs per step, force-balance iterations per step — next to the
thesis author's C++ (``rough_terrains/README.md``), the issue's targets and the step loop's figures.  The
same runs give the Table 2.7 accuracy check (final pose at Δt = 0.10 vs 0.01 s) and the agreement of the
one-call run and the step loop at Δt = 0.04 s.

Then a profile of one compiled dynamic step (linear contact, Δt = 0.04, a state of a terrain-1 run): small
``numba.njit`` loops call the kernels' parts directly (forward kinematics, collision, CRBA, RNEA,
the rigid rows' null space, the reduced matrices, the whole set-up, one evaluation of the force
balance with its Jacobian, the whole step), timed with ``time.process_time`` (fastest of several
repetitions); evaluations per step are counted by re-running the Newton loop of the recorded states in
Python around the compiled evaluation.

Writes the sections ``machine``, ``speed`` and ``profile`` of docs/benchmarks.md (``_report.update_section``;
other sections are left alone) and refreshes the ``summary`` section at the top from the data of all
sections (``benchmarks/batch.py``, ``benchmarks/vehicles_speed.py``, ``benchmarks/landtamer_ramp.py`` write
theirs).

Usage::

    python benchmarks/speed.py             # ~3–5 min; writes docs/benchmarks.md
    python benchmarks/speed.py --quick     # 2 terrains, 1–2 repetitions (smoke run; writes out/speed_quick/)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from numba import njit
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

import zoe_rough as zr  # noqa: E402
from _report import figures_table, update_section  # noqa: E402

import wmr_dynamics.compiled.dynamics as D  # noqa: E402
from wmr_dynamics import spatial  # noqa: E402
from wmr_dynamics.compiled.collision import wheel_contacts_kernel  # noqa: E402
from wmr_dynamics.compiled.controllers import controller_rates  # noqa: E402
from wmr_dynamics.compiled.linalg import null_space_rows  # noqa: E402
from wmr_dynamics.controllers import BodyVelocityController  # noqa: E402
from wmr_dynamics.dynamics.rigid_body import _crba, _plucker_all, _rnea  # noqa: E402
from wmr_dynamics.kinematics import forward_kinematics  # noqa: E402
from wmr_dynamics.kinematics.fk import _forward_kinematics  # noqa: E402
from wmr_dynamics.kinematics.jacobians import _wheel_jacobian  # noqa: E402
from wmr_dynamics.simulate import Simulator  # noqa: E402

DOC = zr.ROOT / "docs" / "benchmarks.md"
KINDS = ("kinematic", "linear", "pacejka", "ishigami_lut")
DTS = (0.01, 0.04, 0.10)
PY_DT = 0.04  # the Python path is timed at this step only
PROFILE_DT = 0.04
PROFILE_STATE = 100  # row of the terrain-1 run whose state the profile uses (t = 4 s at Δt 0.04)
NAMES = zr.NAMES

# The thesis author's C++ (wmrde, single thread, g++ -O2) on this project's machines: real-time factors
# from rough_terrains/README.md (same terrains, 0.5 m/s, 10 s).  Zoë dynamic: the "uniform" linear contact.
CPP_RTF = {("linear", 0.04): 2330.0, ("linear", 0.10): 5100.0, ("kinematic", 0.04): 3740.0}
CPP_ODE_RTF_004 = 1450.0  # Open Dynamics Engine on the same vehicle, Δt = 0.04
CPP_FAST_RTF_004 = 4800.0  # Zoë dynamic with that library's fastest build options
# wmrde C++ per-part costs (DESIGN.md "Speed"), µs
CPP_PARTS = {"collision_per_wheel": 0.35, "crba": 0.15, "rnea": 0.35, "jacobians": 0.2, "step_rough": 17.0}
# Issue 5 item 5: single-thread targets at Δt = 0.04 (2× the C++ for the dynamic model).
TARGET_RTF = {("linear", 0.04): 4600.0, ("kinematic", 0.04): 7500.0}
ACCURACY_BOUND = zr.TARGET_POS_ERR  # m, mean final position error at Δt = 0.10 vs 0.01
# Mean final position error (m) at Δt = 0.10 vs 0.01 of the Python path (docs/zoe_rough.md at commit 1135c9e,
# before the compiled engine), for "accuracy unchanged".
PYTHON_PATH_ERR = {"linear": 0.0112, "pacejka": 0.0217, "ishigami_lut": 0.0494, "kinematic": 0.0064}

# This shared virtual machine's speed drifts between sessions by more than our tuning moves it: the same
# kernels measured 36 µs per compiled Zoë step (Python path 877 µs) on 2026-11-22 and 43.6 µs (Python path
# 1,999 µs) on 2026-11-24.
TITLE = ("# Speed benchmarks\n\nThe tables between `<!-- BEGIN name -->` / `<!-- END name -->` markers are written "
         "by the scripts in `benchmarks/`; the text around them is hand-written (see docs/benchmarks.md).\n\n")


# ---- the runs ---------------------------------------------------------------------------------------------
@dataclass
class Cell:
    """One (model, Δt, engine) over the terrains: the fastest repetition per terrain, summed."""

    kind: str
    dt: float
    engine: str  # "auto" (the default engine) or "python"
    sim_s: float = 0.0
    wall_s: float = 0.0
    steps: int = 0
    iterations: list[float] = field(default_factory=list)
    finals: dict[int, NDArray] = field(default_factory=dict)  # terrain -> final state
    engines_used: set[str] = field(default_factory=set)
    unconverged: int = 0

    @property
    def rtf(self) -> float:
        return self.sim_s / self.wall_s if self.wall_s > 0 else float("nan")

    @property
    def us_per_step(self) -> float:
        return 1e6 * self.wall_s / self.steps if self.steps else float("nan")

    @property
    def mean_iterations(self) -> float:
        return float(np.mean(self.iterations)) if self.iterations else float("nan")


def make_simulator(model, terrain, kind: str, dt: float, options=None, engine: str = "auto") -> Simulator:  # noqa: ANN001
    """``zoe_rough.make_simulator`` with a choice of engine."""
    ctrl = BodyVelocityController(model, "naive")
    if kind == "kinematic":
        return Simulator(model, terrain, mode="kinematic", dt=dt, controller=ctrl, engine=engine)
    return Simulator(model, terrain, mode="dynamic", dt=dt, controller=ctrl,
                     dynamics=options or zr.dynamics_options(model, kind), engine=engine)


def measure(terrains: Sequence[int], kinds: Sequence[str] = KINDS, dts: Sequence[float] = DTS, repeat: int = 5,
            py_repeat: int = 2, py_dt: float | None = PY_DT, terrain_dir: Path | None = None,
            quiet: bool = False) -> dict[tuple[str, float, str], Cell]:
    """Every (model, Δt) on every terrain on the default engine ``repeat`` times, and at ``py_dt`` on the Python
    path ``py_repeat`` times; the repetitions are interleaved (all runs once, then again), so that a change of
    the machine's load affects all alike; the fastest repetition of each run is kept."""
    model = zr.zoe_model()
    opts = {k: zr.dynamics_options(model, k) for k in kinds if k in zr.DYNAMIC}
    jobs = []
    for tid in terrains:
        terrain = zr.load_terrain(tid, terrain_dir)
        q0 = zr.initial_state(model, terrain)
        for kind in kinds:
            for dt in dts:
                jobs.append((tid, kind, dt, "auto", make_simulator(model, terrain, kind, dt, opts.get(kind)), q0))
            if py_dt is not None and py_repeat > 0:
                jobs.append((tid, kind, py_dt, "python",
                             make_simulator(model, terrain, kind, py_dt, opts.get(kind), "python"), q0))
    out: dict[tuple[str, float, str], Cell] = {}
    best: dict[tuple, float] = {}
    start = time.perf_counter()
    for rep in range(max(repeat, py_repeat)):
        for tid, kind, dt, engine, sim, q0 in jobs:
            if rep >= (repeat if engine == "auto" else py_repeat):
                continue
            res = sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=q0, progress=False)
            key = (tid, kind, dt, engine)
            cell = out.setdefault((kind, dt, engine), Cell(kind, dt, engine))
            if rep == 0:
                cell.sim_s += float(res.t[-1] - res.t[0])
                cell.steps += res.steps
                cell.finals[tid] = res.q[-1].copy()
                cell.engines_used.add(sim.engine_used)
                if res.iterations is not None:
                    cell.iterations.append(float(res.iterations[:-1].mean()))
                conv = getattr(res, "converged", None)
                if conv is not None:
                    cell.unconverged += int(np.count_nonzero(~conv[:-1]))
            best[key] = min(best.get(key, np.inf), res.wall_time_s)
        zr._log(f"  repetition {rep + 1}/{max(repeat, py_repeat)} done ({time.perf_counter() - start:.0f} s)", quiet)
    for (_tid, kind, dt, engine), w in best.items():
        out[(kind, dt, engine)].wall_s += w
    return dict(sorted(out.items(), key=lambda kv: (KINDS.index(kv[0][0]), kv[0][2] != "auto", kv[0][1])))


def warm_up(kinds: Sequence[str] = KINDS, terrain_dir: Path | None = None) -> None:
    """Compile / load the kernels of every model on both engines (short runs), so no timing includes it."""
    model = zr.zoe_model()
    terrain = zr.load_terrain(1, terrain_dir)
    q0 = zr.initial_state(model, terrain)
    for kind in kinds:
        for engine in ("auto", "python"):
            make_simulator(model, terrain, kind, 0.04, engine=engine).run(0.2, (zr.SPEED, 0.0), q0=q0, progress=False)


def _yaw(q: NDArray) -> float:
    return float(spatial.quat_to_rpy(q[:4])[2])


def accuracy(cells: dict[tuple[str, float, str], Cell], coarse: float = 0.10, ref: float = zr.DT_REF
             ) -> dict[str, dict[str, float]]:
    """Per model: mean / max final position error (m) and mean |yaw error| (rad) of Δt = ``coarse`` vs ``ref``
    over the terrains (thesis Table 2.7), from the default-engine runs."""
    out = {}
    for kind in KINDS:
        a, b = cells.get((kind, coarse, "auto")), cells.get((kind, ref, "auto"))
        if a is None or b is None:
            continue
        tids = sorted(set(a.finals) & set(b.finals))
        pos = [float(np.linalg.norm(a.finals[t][4:7] - b.finals[t][4:7])) for t in tids]
        yaw = [abs(float(np.angle(np.exp(1j * (_yaw(a.finals[t]) - _yaw(b.finals[t])))))) for t in tids]
        out[kind] = {"mean": float(np.mean(pos)), "max": float(np.max(pos)), "yaw": float(np.mean(yaw))}
    return out


def parity(cells: dict[tuple[str, float, str], Cell], dt: float = PY_DT) -> dict[str, float]:
    """Per model: the largest final-position difference (m) between the default engine and the Python path."""
    out = {}
    for kind in KINDS:
        a, b = cells.get((kind, dt, "auto")), cells.get((kind, dt, "python"))
        if a and b:
            out[kind] = max(float(np.linalg.norm(a.finals[t][4:7] - b.finals[t][4:7]))
                            for t in a.finals if t in b.finals)
    return out


# ---- profile of the compiled step -------------------------------------------------------------------------
# Each timer runs one part of the step ``reps`` times on a prepared workspace (numba compiles it on first use;
# the kernels it calls come from the package's cache), without reference counting, as the step's own kernels
# run (a timer with it would add the workspace's reference counts to every call it times).
def _jit(fn):  # noqa: ANN001, ANN202
    return njit(_nrt=False)(fn)


@_jit
def _t_fk(reps, md, ws, q):  # noqa: ANN001, ANN201
    for _ in range(reps):
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
    return ws.T_world[0, 0, 3]


@_jit
def _t_controller(reps, md, cd, ws, q, cmd, u):  # noqa: ANN001, ANN201
    for _ in range(reps):
        controller_rates(md, cd, q, ws.T_world, cmd, u)
    return u[0]


@_jit
def _t_collision(reps, md, td, fd, ws):  # noqa: ANN001, ANN201
    for _ in range(reps):
        wheel_contacts_kernel(md, td, ws.T_world, fd.n_samples, ws.points, ws.frames, ws.dz0, ws.angle, ws.lateral)
    return ws.dz0[0]


@_jit
def _t_plucker(reps, ws):  # noqa: ANN001, ANN201
    for _ in range(reps):
        _plucker_all(ws.T_parent, ws.X)
    return ws.X[1, 0, 0]


@_jit
def _t_crba(reps, md, ws):  # noqa: ANN001, ANN201
    for _ in range(reps):
        _crba(md.parent, md.jtype, md.I_spatial, ws.X, ws.Ic, ws.M)
    return ws.M[0, 0]


@_jit
def _t_rnea(reps, md, ws, qvel):  # noqa: ANN001, ANN201
    for _ in range(reps):
        _rnea(md.parent, md.jtype, md.I_spatial, ws.X, ws.T_world[0, :3, :3], qvel, ws.zeros_n, md.gravity,
              ws.rnea_f, ws.rnea_v, ws.rnea_a, ws.rnea_fr, ws.bias)
    return ws.bias[0]


@_jit
def _t_jacobians(reps, md, ws):  # noqa: ANN001, ANN201
    nw = md.wheel_frame.shape[0]
    for _ in range(reps):
        for w in range(nw):
            _wheel_jacobian(md.parent, md.jtype, ws.T_world, md.wheel_frame[w], ws.points[w], ws.frames[w],
                            ws.A[3 * w:3 * w + 3], ws.jtmp)
    return ws.A[0, 0]


@_jit
def _t_null_space(reps, md, fd, ws, nA, n):  # noqa: ANN001, ANN201
    """What a step does for the rigid rows: B and N are made once per workspace (the set-up before this keeps
    them), so: check the rows against those kept, then the targets (``_same_rigid_rows``, ``_rigid_targets``)."""
    nb = 0
    r0 = 3 * md.wheel_frame.shape[0]
    for _ in range(reps):
        if D._same_rigid_rows(ws, r0, nA, n):
            nb = D._rigid_targets(ws, r0, nA, n)
    return nb


@_jit
def _t_null_space_anew(reps, fd, ws, nA, n):  # noqa: ANN001, ANN201
    nz = 0
    for _ in range(reps):
        nb = D._rigid_basis(fd, ws, nA, n)
        nz = null_space_rows(ws.basis, nb, n, ws.Nt, ws.qp)
    return nz


@_jit
def _t_reduced(reps, md, fd, ws, qvel, dt):  # noqa: ANN001, ANN201
    n = md.parent.shape[0] + 5
    nA = 3 * md.wheel_frame.shape[0] + md.actuated_frames.shape[0] + fd.A_joint.shape[0]
    for _ in range(reps):
        D._reduced(md, ws, ws.counts[D.C_INPUTS], n, nA, qvel, dt)
    return ws.G[0, 0]


@_jit
def _t_setup(reps, md, td, fd, ws, q, qvel, u, dt):  # noqa: ANN001, ANN201
    st = 0
    for _ in range(reps):
        st = D._setup(md, td, fd, ws, q, qvel, u, dt)
    return st


@_jit
def _t_evaluate(reps, md, fd, ws, x, x2, qvel, integral, dt, e, J):  # noqa: ANN001, ANN201
    for i in range(reps):  # two points in turn: the same point over and over runs unrealistically fast
        D._residual(md, fd, ws, x if i % 2 == 0 else x2, qvel, integral, dt, True, e)
    return e[0]


@_jit
def _t_newton(reps, md, fd, ws, x0, qvel, integral, dt):  # noqa: ANN001, ANN201
    n = md.parent.shape[0] + 5
    it = 0
    for _ in range(reps):
        for k in range(x0.shape[0]):
            ws.x[k] = x0[k]  # from the step's warm start every time
        it, norm = D._newton(md, fd, ws, qvel, integral, dt, n)
    return it


@_jit
def _t_step(reps, md, td, fd, ws, q, qvel, u, integral, dt, qn, qvn):  # noqa: ANN001, ANN201
    it = 0
    for _ in range(reps):
        st, it, norm, conv = D.force_balance_step(md, td, fd, ws, q, qvel, u, integral, dt, qn, qvn)
    return it


@_jit
def _t_step_run(reps, md, td, fd, ws, Q, QV, U, integral, dt, qn, qvn):  # noqa: ANN001, ANN201
    total = 0
    for _ in range(reps):
        for k in range(Q.shape[0]):
            st, it, norm, conv = D.force_balance_step(md, td, fd, ws, Q[k], QV[k], U[k], integral, dt, qn, qvn)
            total += it
    return total


def _time_us(fn: Callable, *args, target_s: float = 0.02, repeats: int = 7) -> float:
    """µs per repetition of ``fn(reps, *args)``: process CPU time, fastest of ``repeats`` timings."""
    fn(1, *args)  # compile
    reps, el = 1, 0.0
    while True:
        t0 = time.process_time()
        fn(reps, *args)
        el = time.process_time() - t0
        if el >= target_s / 5 or reps >= 10**7:
            break
        reps *= 10
    reps = max(1, int(reps * target_s / max(el, 1e-9)))
    best = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        fn(reps, *args)
        best = min(best, time.process_time() - t0)
    return 1e6 * best / reps


def count_evaluations(cd, md, td, fd, ws, Q: NDArray, QV: NDArray, U: NDArray, integral: NDArray, dt: float  # noqa: ANN001
                      ) -> tuple[NDArray, NDArray]:
    """Force-balance evaluations and Newton iterations per step for the states (Q[k], QV[k]) with rates U[k]:
    the compiled set-up, then the Newton loop and line search run as Python (their ``py_func``) around the
    compiled evaluation, which is counted.  Same arithmetic as the compiled step."""
    del cd
    n = md.parent.shape[0] + 5
    names = ("_residual", "_line_search", "_trial", "_chord_step", "_newton_direction")
    saved = {k: getattr(D, k) for k in names}
    calls = [0]

    def counted(*args):  # noqa: ANN002, ANN202
        calls[0] += 1
        return saved["_residual"](*args)

    evals, iters = [], []
    try:
        D._residual = counted
        for k in names[1:]:  # the loop's helpers as Python too, so that their evaluations go through the counter
            setattr(D, k, saved[k].py_func)
        newton = D._newton.py_func
        for k in range(Q.shape[0]):
            ws.act_u[:len(U[k])] = U[k]
            if D._setup(md, td, fd, ws, Q[k], QV[k], U[k], dt) != 0:
                continue
            calls[0] = 0
            it, _ = newton(md, fd, ws, QV[k], integral, dt, n)
            evals.append(calls[0])
            iters.append(it)
    finally:
        for k, v in saved.items():
            setattr(D, k, v)
    return np.array(evals, dtype=float), np.array(iters, dtype=float)


def profile_step(terrain_id: int = 1, dt: float = PROFILE_DT, kind: str = "linear", state: int = PROFILE_STATE,
                 terrain_dir: Path | None = None, repeats: int = 7) -> dict:
    """µs per call of each part of a compiled dynamic step (see the module docstring)."""
    model = zr.zoe_model()
    terrain = zr.load_terrain(terrain_id, terrain_dir)
    q0 = zr.initial_state(model, terrain)
    sim = make_simulator(model, terrain, kind, dt)
    if sim.engine_used != "compiled":
        raise RuntimeError(f"the profile needs the compiled engine (got {sim.engine_used})")
    res = sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=q0, progress=False)
    run_us = min(sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=q0, progress=False).wall_time_s
                 for _ in range(repeats)) * 1e6 / res.steps
    c = sim.compiled
    md, td, fd, cd = c.md, c.td, c.fd, c.cd
    ws = D.dynamics_workspace(md, fd)
    n, nw = md.parent.shape[0] + 5, md.wheel_frame.shape[0]
    nA = 3 * nw + md.actuated_frames.shape[0] + fd.A_joint.shape[0]
    Q, QV = np.ascontiguousarray(res.q[:-1]), np.ascontiguousarray(res.qvel[:-1])
    U = np.ascontiguousarray([sim.controller(q, forward_kinematics(model, q), zr.SPEED, 0.0) for q in Q])
    q, qvel, u = Q[state].copy(), QV[state].copy(), U[state].copy()
    integral = np.zeros(len(model.actuated_joint_names))
    qn, qvn = np.empty_like(q), np.empty_like(qvel)
    cmd = np.array([zr.SPEED, 0.0])
    uu = np.empty_like(u)
    us: dict[str, float] = {}

    def t(name: str, fn: Callable, *args) -> None:
        us[name] = _time_us(fn, *args, repeats=repeats)

    # the state's set-up fills the workspace for the parts that need it
    if D._setup(md, td, fd, ws, q, qvel, u, dt) != 0:
        raise RuntimeError("set-up failed at the profile's state")
    t("fk", _t_fk, md, ws, q)
    t("controller", _t_controller, md, cd, ws, q, cmd, uu)
    t("collision", _t_collision, md, td, fd, ws)
    t("plucker", _t_plucker, ws)
    t("crba", _t_crba, md, ws)
    t("rnea", _t_rnea, md, ws, qvel)
    t("jacobians", _t_jacobians, md, ws)
    t("null_space", _t_null_space, md, fd, ws, nA, n)
    t("null_space_anew", _t_null_space_anew, fd, ws, nA, n)
    D._setup(md, td, fd, ws, q, qvel, u, dt)
    t("reduced", _t_reduced, md, fd, ws, qvel, dt)
    t("setup", _t_setup, md, td, fd, ws, q, qvel, u, dt)
    D._setup(md, td, fd, ws, q, qvel, u, dt)
    x = ws.x.copy()
    e, J = np.empty(n), np.empty((n, n))
    t("evaluate", _t_evaluate, md, fd, ws, x, x + 1e-3, qvel, integral, dt, e, J)
    t("newton", _t_newton, md, fd, ws, x, qvel, integral, dt)
    t("step", _t_step, md, td, fd, ws, q, qvel, u, integral, dt, qn, qvn)
    us["step_run"] = _time_us(_t_step_run, md, td, fd, ws, Q, QV, U, integral, dt, qn, qvn, target_s=0.05,
                              repeats=max(3, repeats // 2)) / Q.shape[0]
    ws_run = D.dynamics_workspace(md, fd)  # the run's states in order
    evals, iters = count_evaluations(cd, md, td, fd, ws_run, Q, QV, U, integral, dt)
    evals_state, iters_state = count_evaluations(cd, md, td, fd, ws, Q[state:state + 1], QV[state:state + 1],
                                                 U[state:state + 1], integral, dt)
    return {"us": us, "run_us": run_us, "evals_per_step": float(evals.mean()) if evals.size else float("nan"),
            "iters_per_step": float(iters.mean()) if iters.size else float("nan"),
            "evals_state": float(evals_state[0]) if evals_state.size else float("nan"),
            "iters_state": float(iters_state[0]) if iters_state.size else float("nan"),
            "recorded_iters": float(res.iterations[:-1].mean()), "nw": nw, "n": n, "nA": nA,
            "nb": int(ws.counts[D.C_RIGID_BASIS]), "nx": int(ws.counts[D.C_INPUTS]), "terrain": terrain_id,
            "state": state,
            "t_state": float(res.t[state]), "kind": kind, "dt": dt, "steps": res.steps}


# ---- report -----------------------------------------------------------------------------------------------
def _num(x: float, fmt: str = ",.0f") -> str:
    return "–" if x is None or not np.isfinite(x) else format(x, fmt)


def format_speed(cells: dict[tuple[str, float, str], Cell], markdown: bool = False) -> str:
    head = ["model", "Δt (s)", "×RT", "µs/step", "iter/step", "step loop ×RT", "step loop µs/step",
            "one call / step loop", "C++ ×RT (README)", "ours / C++", "target ×RT", "target"]
    body = []
    for (kind, dt, engine), c in cells.items():
        if engine != "auto":
            continue
        py = cells.get((kind, dt, "python"))
        cpp = CPP_RTF.get((kind, dt))
        tgt = TARGET_RTF.get((kind, dt))
        body.append([NAMES[kind], f"{dt:.2f}", _num(c.rtf), _num(c.us_per_step, ".1f"), _num(c.mean_iterations, ".3f"),
                     _num(py.rtf if py else None, ".1f"), _num(py.us_per_step if py else None),
                     f"{py.wall_s / c.wall_s * c.sim_s / py.sim_s:.0f}×" if py else "–",
                     _num(cpp), f"{c.rtf / cpp:.2f}×" if cpp else "–", _num(tgt),
                     ("**met**" if c.rtf >= tgt else "**not met**") if tgt else "–"])
    return zr._render(head, body, markdown)


def _git_state() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                                cwd=zr.ROOT).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "wmr_dynamics"],
                               capture_output=True, text=True, check=True, cwd=zr.ROOT).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return commit + (" with uncommitted changes to wmr_dynamics/" if dirty else "")


def machine_line() -> str:
    """One line: CPU, cores, versions, commit (the other scripts quote it in their sections)."""
    info = zr.machine_info()
    return (f"{info['cpu']}, `nproc` = {info['nproc']}; Python {info['python']}, numpy {info['numpy']}, scipy "
            f"{info.get('scipy', '?')}, numba {info.get('numba', '?')}; commit {_git_state()}")


def load_note(load: Sequence[float]) -> str:
    return f"1-minute load average {load[0]:.2f} at the start / {load[1]:.2f} at the end"


def _data(name: str, payload: dict) -> str:
    """A machine-readable copy of a section's key results (read by :func:`write_summary`)."""
    return f"<!-- data {name} {json.dumps(payload, separators=(',', ':'))} -->"


def machine_markdown(elapsed: float, load: Sequence[float]) -> str:
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel region has run in this process
        layer = numba.config.THREADING_LAYER
    return figures_table([
        ("machine", machine_line()),
        ("numba threading layer, threads available", f"`{layer}`, {numba.config.NUMBA_NUM_THREADS}"),
        ("`speed.py` run (UTC), wall time in all", f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M}, {elapsed:.0f} s"),
        ("1-minute load average at the start / end", f"{load[0]:.2f} / {load[1]:.2f}"),
    ], ("setting", "value"))


def speed_markdown(cells: dict[tuple[str, float, str], Cell], terrains: Sequence[int], repeat: int, py_repeat: int,
                   acc: dict, par: dict) -> str:
    lin, kin = cells.get(("linear", 0.04, "auto")), cells.get(("kinematic", 0.04, "auto"))
    engines = sorted({e for (_, _, eng), c in cells.items() if eng == "auto" for e in c.engines_used})
    settings = [("terrains", f"`zoe_rough_{{{','.join(map(str, terrains))}}}`"),
                ("engine(s) the default (`engine=\"auto\"`) ran", " and ".join(engines)),
                ("repetitions (fastest kept): one call / step loop", f"{repeat} / {py_repeat}"),
                ("step loop Δt (s)", f"{PY_DT}")]
    figures = [("C++ Open Dynamics Engine on the same vehicle, Δt 0.04 (×RT)", f"{CPP_ODE_RTF_004:,.0f}"),
               ("C++ Zoë dynamic with the library's fastest build options, Δt 0.04 (×RT)", f"{CPP_FAST_RTF_004:,.0f}")]
    for kind, c in (("linear", lin), ("kinematic", kin)):
        if c:
            figures.append((f"{NAMES[kind]}, Δt 0.04: ×RT / µs per step / × the C++'s speed / × the target",
                            f"{c.rtf:,.0f} / {c.us_per_step:.1f} / {c.rtf / CPP_RTF[(kind, 0.04)]:.2f} / "
                            f"{c.rtf / TARGET_RTF[(kind, 0.04)]:.2f}"))
    lines = [figures_table(settings, ("setting", "value")), "", format_speed(cells, markdown=True), "",
             figures_table(figures), ""]
    if acc:
        head = ["model", "mean pos. err. Δt 0.10 vs 0.01 (m)", "max (m)", "mean yaw err. (rad)",
                "Python path before (m)", "bound (m)", "one call vs step loop at Δt 0.04: max Δ final pos. (m)"]
        body = [[NAMES[k], f"{v['mean']:.4f}", f"{v['max']:.4f}", f"{v['yaw']:.4f}",
                 _num(PYTHON_PATH_ERR.get(k), ".4f"), f"{ACCURACY_BOUND:g}" if k != "kinematic" else "–",
                 _num(par.get(k), ".1e")] for k, v in acc.items()]
        ok = all(v["mean"] <= ACCURACY_BOUND for k, v in acc.items() if k != "kinematic")
        lines += ["Accuracy (thesis Table 2.7) from the same runs: " + ("**the bounds still hold**." if ok else
                                                                       "**a bound is exceeded**."), "",
                  zr._render(head, body, True), ""]
    data = {"terrains": list(terrains),
            "rtf": {f"{k}@{dt:g}": round(c.rtf, 1) for (k, dt, e), c in cells.items() if e == "auto"},
            "us": {f"{k}@{dt:g}": round(c.us_per_step, 3) for (k, dt, e), c in cells.items() if e == "auto"},
            "py_rtf": {f"{k}@{dt:g}": round(c.rtf, 2) for (k, dt, e), c in cells.items() if e == "python"},
            "accuracy": {k: round(v["mean"], 4) for k, v in acc.items()},
            "parity": {k: v for k, v in par.items()}}
    lines.append(_data("speed", data))
    return "\n".join(lines)


PROFILE_ROWS = (  # key, label, calls per step (None: from the data), C++ µs (per step)
    ("fk", "forward kinematics (Alg. 1)", 2, None),
    ("controller", "controller (naive: wheel rates)", 1, None),
    ("collision", "collision: contact search of the 4 wheels", 1, "collision"),
    ("plucker", "Plücker transforms", 1, None),
    ("crba", "CRBA (M, Alg. 3)", 1, "crba"),
    ("rnea", "RNEA (bias c, Alg. 4)", 1, "rnea"),
    ("jacobians", "wheel Jacobians (Alg. 2), 4 wheels", 1, "jacobians"),
    ("null_space", "rigid rows' targets (B and N kept from the workspace's first step: `_rigid_targets`)", 1, None),
    ("null_space_anew", "– B and N made anew (Gram–Schmidt; a workspace's first step, the coulomb mode)", 0, None),
    ("reduced", "reduced matrices (G = N M Nᵀ/Δt, e0, A Nᵀ)", 1, None),
    ("setup_rest", "rest of the set-up (A, q̇'_p, warm start)", 1, None),
    ("setup", "**whole set-up** (`_setup`)", 1, None),
    ("evaluate", "one force-balance evaluation e(x) with ∂f_model/∂x (contact model included)", "evals", None),
    ("newton", "**Newton loop** (`_newton`, from the warm start)", 1, None),
    ("newton_rest", "– of which besides the evaluations (∂e/∂x once per Newton step, its LU factor, line "
     "search)", 1, None),
    ("step", "**whole `force_balance_step`** at the profiled state", 1, "step_rough"),
    ("step_run", "whole `force_balance_step`, mean over the run's states", 1, None),
    ("run", "one step of `Simulator.run` (rollout: FK, controller, step, recording)", 1, None),
)
SETUP_PARTS = ("collision", "plucker", "crba", "rnea", "jacobians", "null_space", "reduced")


def _profile_values(p: dict) -> dict[str, tuple[float, float]]:
    """key -> (µs per call, calls per step)."""
    us = dict(p["us"])
    us["run"] = p["run_us"]
    us["setup_rest"] = us["setup"] - us["fk"] - sum(us[k] for k in SETUP_PARTS)
    us["newton_rest"] = us["newton"] - p["evals_state"] * us["evaluate"]
    calls = {"evals": p["evals_state"]}
    return {k: (us[k], float(calls[c]) if isinstance(c, str) else float(c)) for k, _, c, _ in PROFILE_ROWS}


def format_profile(p: dict, markdown: bool = False) -> str:
    vals = _profile_values(p)
    head = ["part of the step", "µs per call", "calls per step", "µs per step", "% of the step", "C++ µs (DESIGN.md)"]
    body = []
    for key, label, _, cpp in PROFILE_ROWS:
        u, n = vals[key]
        per_step = u * n
        inside = key not in ("controller", "run", "step_run", "step")
        share = per_step / vals["step"][0] * (0.5 if key == "fk" else 1.0) if inside else None
        c = CPP_PARTS.get(cpp) if cpp else None
        if cpp == "collision":
            c = CPP_PARTS["collision_per_wheel"] * p["nw"]
        body.append([label if markdown else label.replace("**", "").replace("`", ""), f"{u:.3f}" if u < 10 else
                     f"{u:.1f}", f"{n:g}", f"{per_step:.2f}",
                     "–" if share is None else f"{100 * share:.0f}", "–" if c is None else f"{c:g}"])
    return zr._render(head, body, markdown)


def gap_figures(p: dict, cells: dict) -> list[tuple[str, str]]:
    """The figures of "what would close the gap" (docs/benchmarks.md explains them)."""
    v = {k: u * n for k, (u, n) in _profile_values(p).items()}
    us = p["us"]
    lin = cells.get(("linear", 0.04, "auto"))
    run_us = lin.us_per_step if lin else p["run_us"]
    budget = 1e6 * 0.04 / TARGET_RTF[("linear", 0.04)]
    setup_other = v["setup"] - v["collision"]
    newton = v["newton"]
    rigid = v["crba"] + v["rnea"] + v["plucker"] + v["jacobians"]
    return [
        ("budget per step at the target (µs); a step of the benchmark (µs, × the budget)",
         f"{budget:.1f}; {run_us:.1f} ({run_us / budget:.1f}×)"),
        ("force-balance step at the profiled state (µs)", f"{v['step']:.1f}"),
        ("– collision (µs, %)", f"{v['collision']:.1f} ({100 * v['collision'] / v['step']:.0f}%)"),
        ("– the rest of the set-up (µs, %)", f"{setup_other:.1f} ({100 * setup_other / v['step']:.0f}%)"),
        ("– the Newton iteration (µs, %; evaluations at µs each)",
         f"{newton:.1f} ({100 * newton / v['step']:.0f}%; {p['evals_state']:g} at {us['evaluate']:.2f})"),
        ("outside the step: forward kinematics + controller (µs)", f"{us['fk'] + us['controller']:.2f}"),
        ("collision per wheel (µs); the C++'s for all wheels (µs)",
         f"{v['collision'] / p['nw']:.2f}; {0.35 * p['nw']:.1f} ({p['nw']} wheels)"),
        ("rigid-body terms together (µs, % of the step); CRBA + RNEA beyond the C++'s (µs)",
         f"{rigid:.1f} ({100 * rigid / v['step']:.0f}%); ≈ {max(v['crba'] + v['rnea'] - 0.5, 0.0):.1f}"),
        ("matrix sizes: DOF n, constraint rows, rigid-row rank, unknowns (null-space coordinates)",
         f"{p['n']}, {p['nA']}, {p['nb']}, {p['nx']}"),
    ]


def profile_markdown(p: dict, cells: dict) -> str:
    settings = [("profiled state", f"{NAMES[p['kind']]} contact, Δt = {p['dt']:g}, Zoë on terrain {p['terrain']}, "
                                   f"row {p['state']} (t = {p['t_state']:g} s)"),
                ("evaluations / iterations per step over the run (the run itself recorded)",
                 f"{p['evals_per_step']:.2f} / {p['iters_per_step']:.2f} ({p['recorded_iters']:.2f})"),
                ("set-up + Newton loop timed apart vs the whole step (µs)",
                 f"{p['us']['setup'] + p['us']['newton']:.1f} vs {p['us']['step']:.1f}")]
    return "\n".join([
        figures_table(settings, ("setting", "value")), "",
        format_profile(p, markdown=True), "",
        "What would close the gap (to the targets of the summary):", "",
        figures_table(gap_figures(p, cells)), "",
        _data("profile", {"step_us": round(p["us"]["step"], 2), "step_run_us": round(p["us"]["step_run"], 2),
                          "collision_us": round(p["us"]["collision"], 2), "evals": round(p["evals_per_step"], 3)}),
    ])


# ---- summary ----------------------------------------------------------------------------------------------
def read_data(doc: Path) -> dict[str, dict]:
    """The ``<!-- data name {...} -->`` blocks of ``doc``, by name."""
    if not doc.exists():
        return {}
    out = {}
    for m in re.finditer(r"<!-- data (\w+) (\{.*?\}) -->", doc.read_text(encoding="utf-8")):
        try:
            out[m.group(1)] = json.loads(m.group(2))
        except json.JSONDecodeError:
            continue
    return out


def summary_markdown(data: dict[str, dict]) -> str:
    def status(ok: bool | None) -> str:
        return "–" if ok is None else ("**met**" if ok else "**not met**")

    rows = []
    sp, ba, st = data.get("speed"), data.get("batch"), data.get("stiff_ode")
    none = "not measured yet"
    if sp:
        for kind, what in (("linear", "dynamic Zoë (linear contact), Δt 0.04, single thread"),
                           ("kinematic", "kinematic Zoë, Δt 0.04, single thread")):
            rtf, us = sp["rtf"].get(f"{kind}@0.04"), sp["us"].get(f"{kind}@0.04")
            tgt = TARGET_RTF[(kind, 0.04)]
            cpp = CPP_RTF[(kind, 0.04)]
            rows.append([what, f"≥ {tgt:,.0f}× real time (C++ {cpp:,.0f}× in rough_terrains/README.md, measured "
                         "once)", f"{rtf:,.0f}× ({us:.1f} µs/step)", status(rtf >= tgt), "speed"])
    else:
        rows.append(["single-trajectory speed", "≥ 4,600× / ≥ 7,500×", none, "–", "speed"])
    if ba:
        rows.append([f"{ba['n']:,} × {ba['horizon']:g} s dynamic Zoë rollouts, {ba['threads']} threads: wall time",
                     "≤ 0.1 s", f"{ba['wall']:.3f} s", status(ba["wall"] <= 0.1), "batch"])
        rows.append(["– aggregate real-time factor", "≥ 50,000×", f"{ba['rtf']:,.0f}×", status(ba["rtf"] >= 50000),
                     "batch"])
    else:
        rows.append(["1,000 × 5 s dynamic rollouts", "≤ 0.1 s, ≥ 50,000×", none, "–", "batch"])
    if sp and sp.get("accuracy"):
        a = sp["accuracy"]
        dyn = {k: v for k, v in a.items() if k != "kinematic"}
        rows.append(["Table 2.7 accuracy: mean final position error, Δt 0.10 vs 0.01",
                     f"≤ {ACCURACY_BOUND:g} m, unchanged (Python path: "
                     + " / ".join(f"{PYTHON_PATH_ERR[k]:.3f}" for k in dyn) + " m)",
                     " / ".join(f"{v:.3f}" for v in dyn.values()) + " m ("
                     + " / ".join(NAMES[k] for k in dyn) + ")",
                     status(all(v <= ACCURACY_BOUND for v in dyn.values())), "speed"])
    if st:
        others = "; ".join(f"{m} {st[m.lower() + '_wall']:.0f}×" for m in ("LSODA", "Radau")
                           if m.lower() + "_wall" in st)
        rows.append(["DAE (Δt 0.04) vs stiff ODE (SciPy BDF), LandTamer ramp (dynamics issue)", "≥ 10× faster",
                     f"{st['bdf_wall']:.0f}× (wall; CPU {st['bdf_cpu']:.0f}×)" + (f"; {others}" if others else ""),
                     status(st["bdf_wall"] >= 10), "stiff_ode"])
        rows.append(["– DAE and ODE agree: final position difference", "≤ 0.1 m", f"{st['max_pos_diff']:.3f} m",
                     status(st["max_pos_diff"] <= 0.1), "stiff_ode"])
    head = ["target (issue 5 item 5; dynamics issue)", "target", "measured", "status", "section"]
    lines = [zr._render(head, rows, True), "", issue14_markdown(data), ""]
    ve = data.get("vehicles")
    if ve:  # issue 5 item 4: every vehicle, dynamic, Δt 0.04 (section vehicles)
        lines += [figures_table([(k, f"{v['rtf']:,.0f}×") for k, v in ve.items()],
                                ("vehicle (dynamic, Δt 0.04; section vehicles)", "×RT")), ""]
    return "\n".join(lines)


#: cxx_reference.py's Talon with the C++'s own contacts: the like-for-like measure of the engine, shown under the
#: must's row for reference (its "must" in parentheses; the must is the bundled Talon's)
TALON_CXX_CONTACTS = ("Talon, linear, ours with the C++'s contacts (roller_arcs: false, belt_points 3: fixed points "
                      "only)")
#: rows of CXX_TARGETS shown for reference only
CXX_REFERENCE_ONLY = {TALON_CXX_CONTACTS}
#: issue 14's targets: case of cxx_reference.py -> (what, must, goal) as ours / C++ speed
CXX_TARGETS = (("Zoë dynamic, linear contact", "dynamic Zoë, linear contact, Δt 0.04, one thread: ours / C++ speed",
                1.0, 2.0),
               ("Rocky 7 dynamic, linear contact", "dynamic Rocky 7, same", 1.0, 2.0),
               ("Zoë kinematic (ours: the states recorded, as the C++'s loop)",
                "kinematic Zoë, Δt 0.04, one thread (the states recorded, as the C++)", 2.0, 3.0),
               ("Zoë kinematic, ours as Simulator.run (rollover margin and diagnostics at every step)",
                "– the same through `Simulator.run` (rollover margin and diagnostics at every step)", 2.0, 3.0),
               ("Talon (tracks) dynamic, Δt 0.01, linear contact", "Talon (tracks), dynamic, Δt 0.01 (issue 13)", 1.0,
                None),
               (TALON_CXX_CONTACTS, "– the same with the C++'s contacts (3 fixed points per lower run, no roller arcs)",
                1.0, None))


def issue14_markdown(data: dict[str, dict]) -> str:
    """Issue 14's table: the side-by-side ratios (section cxx), the contact models' step cost against the linear
    model's (section speed) and the batch (section batch)."""
    def status(value: float | None, must: float, below: bool = False) -> str:
        if value is None:
            return "not measured yet"
        return "**met**" if (value <= must if below else value >= must) else "**not met**"

    rows = []
    cx = data.get("cxx", {})
    for case, what, must, goal in CXX_TARGETS:
        r = cx.get(case)
        like = case in CXX_REFERENCE_ONLY  # a like-for-like row under the must's: its figure for reference
        rows.append([what, (f"(≥ {must:g}×)" if like else f"≥ {must:g}×") + (f" (goal ≥ {goal:g}×)" if goal else ""),
                     "–" if r is None else f"{r['ratio']:.2f}× ({r['ours_us']:.1f} vs {r['cxx_us']:.1f} µs/step)",
                     status(None if r is None else r["ratio"], must), "cxx"])
    sp = data.get("speed")
    us = sp["us"] if sp else {}
    lin = us.get("linear@0.04")
    for kind in ("pacejka", "ishigami_lut"):
        v = us.get(f"{kind}@0.04")
        ratio = v / lin if v and lin else None
        rows.append([f"{NAMES[kind]} dynamic step / the linear model's (Zoë, Δt 0.04)", "≤ 1.3× (goal ≤ 1.15×)",
                     "–" if ratio is None else f"{ratio:.2f}× ({v:.1f} vs {lin:.1f} µs/step)",
                     status(ratio, 1.3, below=True), "speed"])
    ba = data.get("batch")
    rows.append(["1,000 × 5 s dynamic Zoë rollouts, 2 threads: wall", "≤ 0.5 s (goal ≤ 0.1 s)",
                 "–" if not ba else f"{ba['wall']:.2f} s", status(ba["wall"] if ba else None, 0.5, below=True),
                 "batch"])
    if ba and ba.get("wall_coarse"):
        rows.append(["– the same at Δt 0.10 (Table 2.7's coarsest step, within its accuracy bound)",
                     "(≤ 0.5 s)", f"{ba['wall_coarse']:.2f} s", status(ba["wall_coarse"], 0.5, below=True), "batch"])
    head = ["target (issue 14; issue 13's Talon)", "must", "measured", "status", "section"]
    return zr._render(head, rows, True)


def write_summary(doc: Path = DOC) -> Path:
    """Refresh the ``summary`` section (at the top of ``doc``) from the data blocks of its sections."""
    prepare_doc(doc)
    return update_section(doc, "summary", summary_markdown(read_data(doc)), position="top")


def prepare_doc(doc: Path) -> None:
    """Give ``doc`` its title; drops the unmarked output of this script's former version (it wrote the whole
    file) — only the unmarked text above the first marked section, and only if it is that output."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    k = text.find("<!-- BEGIN ")
    head = text if k < 0 else text[:k]
    legacy = "Generated by `benchmarks/speed.py` (re-run the script rather than editing this file)" in head
    if head.strip() and not legacy:
        return
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(TITLE + ("" if k < 0 else text[k:]), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2 terrains, fewer repetitions (smoke run)")
    p.add_argument("--terrains", type=int, nargs="+", help="terrain numbers (1..10), default all ten")
    p.add_argument("--repeat", type=int, default=None, help="repetitions per run, fastest kept (default 5; quick 2)")
    p.add_argument("--py-repeat", type=int, default=None, help="repetitions of the Python-path runs (default 2; "
                                                               "quick 1; 0: skip them)")
    p.add_argument("--no-profile", action="store_true", help="skip the profile of the compiled step")
    p.add_argument("--terrain-dir", type=Path, default=None, help=f"default {zr.TERRAIN_DIR}")
    p.add_argument("--out", type=Path, default=None,
                   help="markdown file to update (default docs/benchmarks.md; --quick: out/speed_quick/benchmarks.md)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    a = p.parse_args(argv)
    terrains = a.terrains or ((1, 2) if a.quick else zr.TERRAINS)
    repeat = a.repeat or (2 if a.quick else 5)
    py_repeat = a.py_repeat if a.py_repeat is not None else (1 if a.quick else 2)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    zr._log("warming up (numba kernels) ...", a.quiet)
    warm_up(terrain_dir=a.terrain_dir)
    cells = measure(terrains, repeat=repeat, py_repeat=py_repeat, terrain_dir=a.terrain_dir, quiet=a.quiet)
    acc, par = accuracy(cells), parity(cells)
    print(format_speed(cells))
    print("accuracy (Δt 0.10 vs 0.01):", {k: round(v["mean"], 4) for k, v in acc.items()}, "parity:", par)
    prof = None
    if not a.no_profile:
        zr._log("profiling the compiled step ...", a.quiet)
        prof = profile_step(terrain_dir=a.terrain_dir)
        print(format_profile(prof))
        print(figures_table(gap_figures(prof, cells)))
    doc = a.out or (zr.ROOT / "out" / "speed_quick" / "benchmarks.md" if a.quick else DOC)
    load = (load0, os.getloadavg()[0])
    prepare_doc(doc)
    # first creation: reverse order at the top, so that they read machine, speed, profile (before other sections)
    if prof is not None:
        update_section(doc, "profile", profile_markdown(prof, cells), position="top")
    update_section(doc, "speed", speed_markdown(cells, terrains, repeat, py_repeat, acc, par), position="top")
    update_section(doc, "machine", machine_markdown(time.perf_counter() - t0, load), position="top")
    write_summary(doc)
    zr._log(f"wrote {doc} (sections machine, speed{', profile' if prof else ''}, summary)", a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
