#!/usr/bin/env python3
"""Speed of the Zoë rough-terrain benchmark (thesis §2.5.4, Table 2.6) and a per-step profile.

Runs the benchmark of ``benchmarks/zoe_rough.py`` (Zoë, steering held straight, 0.5 m/s straight for 10 s
on the ten terrains ``zoe_rough_{1..10}.txt``, naive controller, ideal actuators) with the kinematic model
and the dynamic model with piecewise-linear, Pacejka and Ishigami-LUT contact at Δt = 0.01, 0.04, 0.10 s,
and reports, per model and Δt: real-time factor (simulated time / wall time of the stepping loop, over
all terrains), µs per step, force-balance iterations per step — next to the thesis author's C++ on this
machine kind (``rough_terrains/README.md``) and the thesis's Table 2.6.  All numbers come from one run of
this script, after a warm-up (numba compilation) that is not timed.

Then a per-step profile of dynamic Zoë (linear contact; Pacejka and Ishigami-LUT alongside) at Δt = 0.04:
the library functions of one step are wrapped with timers (exclusive time: a wrapped function's time
excludes that of wrapped functions it calls), and a cProfile listing of the same run.

Usage::

    python benchmarks/speed.py             # writes docs/benchmarks.md
    python benchmarks/speed.py --quick     # 2 terrains, 1 repetition (smoke run; writes out/speed_quick/)
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import zoe_rough as zr  # noqa: E402

import wmr_dynamics.dynamics.force_balance as _fb  # noqa: E402
import wmr_dynamics.simulate as _sim  # noqa: E402

KINDS = ("kinematic", "linear", "pacejka", "ishigami_lut")
DTS = (0.01, 0.04, 0.10)
PROFILE_DT = 0.04
PROFILE_KINDS = ("linear", "pacejka", "ishigami_lut")
NAMES = zr.NAMES

# The thesis author's C++ (wmrde, single thread, g++ -O2) on this project's machines: real-time factors
# from rough_terrains/README.md (same terrains, 0.5 m/s, 10 s).  Zoë dynamic: the "uniform" linear contact.
CPP_RTF = {("linear", 0.04): 2330.0, ("linear", 0.10): 5100.0, ("kinematic", 0.04): 3740.0}
CPP_ODE_RTF_004 = 1450.0  # Open Dynamics Engine on the same vehicle, Δt = 0.04
CPP_FAST_RTF_004 = 4800.0  # Zoë dynamic with that library's fastest build options


# ---- speed table ------------------------------------------------------------------------------------------
@dataclass
class Timing:
    kind: str
    dt: float
    sim_s: float = 0.0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    steps: int = 0
    iterations: list[float] = field(default_factory=list)

    @property
    def rtf(self) -> float:
        return self.sim_s / self.wall_s

    @property
    def us_per_step(self) -> float:
        return 1e6 * self.wall_s / self.steps

    @property
    def cpu_us_per_step(self) -> float:
        return 1e6 * self.cpu_s / self.steps

    @property
    def mean_iterations(self) -> float:
        return float(np.mean(self.iterations)) if self.iterations else float("nan")


def measure(terrains: Sequence[int], kinds: Sequence[str] = KINDS, dts: Sequence[float] = DTS, repeat: int = 1,
            terrain_dir: Path | None = None, quiet: bool = False) -> dict[tuple[str, float], Timing]:
    """Run every (model, Δt) on every terrain ``repeat`` times; wall time: the fastest repetition per run."""
    model = zr.zoe_model()
    zr.warm_up(model, kinds, terrain_dir)
    opts = {k: zr.dynamics_options(model, k) for k in kinds if k in zr.DYNAMIC}
    out = {(k, dt): Timing(k, dt) for k in kinds for dt in dts}
    start = time.perf_counter()
    for tid in terrains:
        terrain = zr.load_terrain(tid, terrain_dir)
        q0 = zr.initial_state(model, terrain)
        for kind in kinds:
            for dt in dts:
                runs = [zr.run_one(model, terrain, kind, dt, q0, terrain_id=tid, options=opts.get(kind))
                        for _ in range(repeat)]
                best = min(runs, key=lambda r: r.wall_s)
                t = out[(kind, dt)]
                t.sim_s += float(best.t[-1] - best.t[0])
                t.wall_s += best.wall_s
                t.cpu_s += best.cpu_s
                t.steps += best.steps
                if best.iterations.size:
                    t.iterations.append(best.mean_iterations)
                zr._log(f"  terrain {tid}  {NAMES[kind]:>16s}  dt={dt:.2f}  {best.steps / best.wall_s * dt:7.1f}x real "
                        f"time  {1e6 * best.wall_s / best.steps:6.0f} µs/step  ({time.perf_counter() - start:.0f} s)",
                        quiet)
    return out


def format_speed(timings: dict[tuple[str, float], Timing], markdown: bool = False) -> str:
    head = ["model", "dt (s)", "real-time factor", "µs/step", "CPU µs/step", "iter/step", "C++ (README) ×RT",
            "C++ µs/step", "slower than C++", "thesis T2.6 ×RT"]
    body = []
    for (kind, dt), t in timings.items():
        cpp = CPP_RTF.get((kind, dt))
        th = zr.THESIS_T26.get(zr.THESIS_COLUMN[kind], {}).get(dt)
        body.append([NAMES[kind], f"{dt:.2f}", f"{t.rtf:.1f}", f"{t.us_per_step:.0f}", f"{t.cpu_us_per_step:.0f}",
                     zr._f(t.mean_iterations, ".3f"),
                     "–" if cpp is None else f"{cpp:,.0f}", "–" if cpp is None else f"{1e6 * dt / cpp:.0f}",
                     "–" if cpp is None else f"{cpp / t.rtf:.0f}×", "–" if th is None else f"{1e3 / th:,.0f}"])
    return zr._render(head, body, markdown)


# ---- per-step profile -------------------------------------------------------------------------------------
CATEGORIES = {
    "fk": "forward kinematics (Alg. 1; simulator + force balance)",
    "controller": "controller (naive: wheel rates)",
    "terrain": "collision: terrain height + normal lookups",
    "collision": "collision: contact search (rest of `wheel_contacts`)",
    "crba": "CRBA + RNEA (M, c; Plücker transforms)",
    "jacobians": "wheel Jacobians (Alg. 2)",
    "indep": "independent rows (scipy QR with pivoting + null space)",
    "chol": "Cholesky factor / solve (scipy `cho_factor`, `cho_solve`)",
    "setup": "force-balance setup glue (A, projector `np.linalg.solve`, indexing)",
    "contact": "contact model (`contact.evaluate`: checks + compiled kernel)",
    "residual": "force-balance residual e and Jacobian ∂e/∂x (numpy glue)",
    "line_search": "line search (strong Wolfe logic, excl. its evaluations)",
    "newton": "Newton loop glue (JᵀJ, Jᵀe, slip outputs)",
    "integrate": "integration (`euler_step`)",
    "loop": "simulator loop bookkeeping (result arrays, command)",
}


class StepProfiler:
    """Exclusive wall time per category of wrapped callables (a call's time minus its wrapped callees')."""

    def __init__(self) -> None:
        self.excl: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.top = 0.0  # time inside outermost wrapped calls
        self._stack: list[float] = []

    def wrap(self, name: str, fn: Callable) -> Callable:
        clock = time.perf_counter

        def wrapped(*args, **kwargs):
            self._stack.append(0.0)
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = clock() - t0
                child = self._stack.pop()
                self.excl[name] += dt - child
                self.calls[name] += 1
                if self._stack:
                    self._stack[-1] += dt
                else:
                    self.top += dt

        return wrapped


class _ScipyProxy:
    """Stand-in for ``scipy.linalg`` inside the force-balance module, timing cho_factor / cho_solve."""

    def __init__(self, sla, prof: StepProfiler) -> None:
        self._sla = sla
        self.cho_factor = prof.wrap("chol", sla.cho_factor)
        self.cho_solve = prof.wrap("chol", sla.cho_solve)

    def __getattr__(self, name: str):
        return getattr(self._sla, name)


@contextlib.contextmanager
def instrumented(sim, prof: StepProfiler) -> Iterator[None]:
    """Wrap the functions one dynamic step calls with ``prof``'s timers; restores everything on exit."""
    fb = sim.force_balance
    saved_mod = [(_sim, "forward_kinematics"), (_fb, "_forward_kinematics"), (_fb, "wheel_contacts"),
                 (_fb, "wheel_jacobians"), (_fb, "strong_wolfe"), (_fb, "euler_step"), (_fb, "sla")]
    saved = [(obj, name, getattr(obj, name)) for obj, name in saved_mod]
    saved_terrain = fb.terrain.height_normal
    saved_ctrl = sim.controller
    saved_contact = fb.opt.contact.evaluate
    try:
        _sim.forward_kinematics = prof.wrap("fk", _sim.forward_kinematics)
        _fb._forward_kinematics = prof.wrap("fk", _fb._forward_kinematics)
        _fb.wheel_contacts = prof.wrap("collision", _fb.wheel_contacts)
        _fb.wheel_jacobians = prof.wrap("jacobians", _fb.wheel_jacobians)
        _fb.strong_wolfe = prof.wrap("line_search", _fb.strong_wolfe)
        _fb.euler_step = prof.wrap("integrate", _fb.euler_step)
        _fb.sla = _ScipyProxy(saved[-1][2], prof)
        fb.terrain.height_normal = prof.wrap("terrain", saved_terrain)
        sim.controller = prof.wrap("controller", saved_ctrl)
        fb.opt.contact.evaluate = prof.wrap("contact", saved_contact)
        fb._mass_and_bias = prof.wrap("crba", fb._mass_and_bias)
        fb._independent_rows = prof.wrap("indep", fb._independent_rows)
        problem = fb.problem

        def problem_timed(*args, **kwargs):
            evaluate, x0, info = problem(*args, **kwargs)
            return prof.wrap("residual", evaluate), x0, info

        fb.problem = prof.wrap("setup", problem_timed)
        fb.step = prof.wrap("newton", fb.step)
        yield
    finally:
        for obj, name, val in saved:
            setattr(obj, name, val)
        for attr in ("_mass_and_bias", "_independent_rows", "problem", "step"):
            fb.__dict__.pop(attr, None)
        fb.terrain.__dict__.pop("height_normal", None)
        fb.opt.contact.__dict__.pop("evaluate", None)
        sim.controller = saved_ctrl


@dataclass
class Profile:
    kind: str
    steps: int
    wall_s: float  # instrumented loop
    plain_us: float  # µs/step of the same runs without instrumentation
    excl: dict[str, float]
    calls: dict[str, int]
    iterations: float

    def us(self, cat: str) -> float:
        return 1e6 * self.excl.get(cat, 0.0) / self.steps


def profile_step(kind: str, terrains: Sequence[int], dt: float = PROFILE_DT, terrain_dir: Path | None = None
                 ) -> Profile:
    """Per-category µs/step of dynamic Zoë (``kind`` contact) over the terrains, 10 s each at ``dt``."""
    model = zr.zoe_model()
    opts = zr.dynamics_options(model, kind)
    prof = StepProfiler()
    wall = plain = 0.0
    steps = 0
    its: list[float] = []
    for tid in terrains:
        terrain = zr.load_terrain(tid, terrain_dir)
        q0 = zr.initial_state(model, terrain)
        sim = zr.make_simulator(model, terrain, kind, dt, opts)
        sim.run(0.2, (zr.SPEED, 0.0), q0=q0, progress=False)  # warm
        plain += sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=q0, progress=False).wall_time_s
        top0 = prof.top
        with instrumented(sim, prof):
            res = sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=q0, progress=False)
        wall += res.wall_time_s
        prof.excl["loop"] += res.wall_time_s - (prof.top - top0)
        steps += res.steps + 1  # the Simulator also steps at the final row (its diagnostics)
        its.append(float(res.iterations[:-1].mean()))
    return Profile(kind, steps, wall, 1e6 * plain / steps, dict(prof.excl), dict(prof.calls), float(np.mean(its)))


def format_profile(profiles: Sequence[Profile], markdown: bool = False) -> str:
    head = ["part of the step"] + [f"{NAMES[p.kind]} µs/step" for p in profiles] + \
           [f"{NAMES[p.kind]} %" for p in profiles] + ["calls/step (linear)"]
    order = sorted(CATEGORIES, key=lambda c: -profiles[0].us(c))
    body = []
    for cat in order:
        calls = profiles[0].calls.get(cat)
        body.append([CATEGORIES[cat]] + [f"{p.us(cat):.0f}" for p in profiles]
                    + [f"{100 * p.excl.get(cat, 0.0) / p.wall_s:.1f}" for p in profiles]
                    + ["–" if not calls else f"{calls / profiles[0].steps:.1f}"])
    body.append(["**total (instrumented)**"] + [f"{1e6 * p.wall_s / p.steps:.0f}" for p in profiles]
                + ["100" for _ in profiles] + [""])
    body.append(["total without instrumentation"] + [f"{p.plain_us:.0f}" for p in profiles] + ["" for _ in profiles]
                + [""])
    return zr._render(head, body, markdown)


def cprofile_listing(kind: str = "linear", terrain_id: int = 1, dt: float = PROFILE_DT, top: int = 22,
                     terrain_dir: Path | None = None) -> str:
    """cProfile of one 10 s run, the ``top`` functions by own (tottime) time."""
    model = zr.zoe_model()
    terrain = zr.load_terrain(terrain_id, terrain_dir)
    q0 = zr.initial_state(model, terrain)
    sim = zr.make_simulator(model, terrain, kind, dt)
    sim.run(0.2, (zr.SPEED, 0.0), q0=q0, progress=False)
    pr = cProfile.Profile()
    pr.enable()
    res = sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=q0, progress=False)
    pr.disable()
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s)
    st.sort_stats("tottime").print_stats(top)
    lines = s.getvalue().splitlines()
    i = next((k for k, ln in enumerate(lines) if ln.strip().startswith("ncalls")), 0)
    text = "\n".join(ln.replace(str(zr.ROOT) + "/", "").replace(sys.prefix, "<venv>") for ln in lines[i:] if ln.strip())
    return f"{res.steps} steps, loop {res.wall_time_s:.2f} s under cProfile\n" + text


# ---- report -----------------------------------------------------------------------------------------------
def _profile_findings(profiles: Sequence[Profile]) -> list[str]:
    p = profiles[0]
    total = 1e6 * p.wall_s / p.steps
    ranked = sorted(CATEGORIES, key=lambda c: -p.us(c))
    compiled = ("fk", "crba", "jacobians")
    glue = ("setup", "residual", "newton", "line_search", "indep", "chol")
    n_eval = p.calls.get("residual", 0) / p.steps
    per_eval = (p.us("residual") + p.us("contact")) / max(n_eval, 1e-9)
    chol_calls = p.calls.get("chol", 0) / p.steps
    out = [
        f"- **Ranking** ({NAMES[p.kind]}, {total:.0f} µs per step instrumented, {p.plain_us:.0f} µs plain, "
        f"{p.iterations:.2f} Newton iterations): "
        + "; ".join(f"{CATEGORIES[c].split(' (')[0]} {p.us(c):.0f} µs ({100 * p.excl.get(c, 0) / p.wall_s:.0f}%)"
                    for c in ranked[:6]) + ".",
        f"- **Collision detection is the largest single cost**: {p.us('terrain') + p.us('collision'):.0f} µs "
        f"({100 * (p.excl.get('terrain', 0) + p.excl.get('collision', 0)) / p.wall_s:.0f}%). `wheel_contacts` is "
        f"vectorized numpy over the 4 wheels with {p.calls.get('terrain', 0) / p.steps:.0f} rounds of terrain "
        f"lookups per call (coarse δ samples, 4 refinements, a parabola, the final point), each round ~"
        f"{p.us('terrain') / max(p.calls.get('terrain', 1) / p.steps, 1e-9):.0f} µs of numpy dispatch for a "
        "few dozen bilinear interpolations. A compiled per-wheel loop would do the same arithmetic in ~1 µs.",
        f"- **The force balance is interpreter-bound numpy/scipy glue**: setup, residual/Jacobian assembly, "
        f"Newton loop, line search, QR, Cholesky calls add up to {sum(p.us(c) for c in glue):.0f} µs "
        f"({100 * sum(p.excl.get(c, 0) for c in glue) / p.wall_s:.0f}%) on 13-column matrices whose arithmetic "
        f"is nanoseconds. Each residual evaluation (e and ∂e/∂x, contact model included) costs ~{per_eval:.0f} µs; "
        f"scipy's `cho_factor`/`cho_solve` ~{p.us('chol') / max(chol_calls, 1e-9):.0f} µs per call "
        f"({chol_calls:.1f} calls per step: argument checking, `asarray_chkfinite`, LAPACK dispatch); the "
        f"independent-row selection (pivoted QR + SVD null space, every step) {p.us('indep'):.0f} µs.",
        f"- **Redundant work**: {n_eval:.1f} residual evaluations per step at {p.iterations:.2f} iterations — "
        "the Newton loop (`ForceBalance._step`) re-evaluates e and ∂e/∂x at the point the line search has just "
        "evaluated (with its Jacobian) and accepted, so every iteration costs two evaluations where one would "
        "do. `Simulator.run` "
        "also solves a full force balance at the final row (diagnostics only): n + 1 steps for n.",
        f"- **The compiled kernels are already cheap**: forward kinematics, CRBA + RNEA and the wheel Jacobians "
        f"together take {sum(p.us(c) for c in compiled):.0f} µs per step, most of it Python-side dispatch and "
        f"argument handling; the contact model {p.us('contact'):.0f} µs ({NAMES[p.kind]}; "
        + ", ".join(f"{NAMES[q.kind]} {q.us('contact'):.0f} µs" for q in profiles[1:])
        + ") — input checks and output allocation around a compiled kernel. The whole C++ step takes 17 µs.",
        "- **For the numba step**: compile collision detection, the force-balance setup and evaluation (with "
        "the contact kernels called directly — `CompiledContactModel.kernel` is meant for this), the small "
        "dense solves (Cholesky / QR of ≤ 13 × 13 matrices written as loops or `np.linalg` inside numba) and the "
        "Newton/line-search loop into one kernel; that removes essentially every row of the table except the "
        "kernels' own arithmetic. Caching the accepted line-search evaluation, and skipping the "
        "diagnostic step, are worth doing in Python too.",
    ]
    return out


def write_markdown(timings: dict[tuple[str, float], Timing], profiles: Sequence[Profile], listing: str,
                   kin_listing: str, terrains: Sequence[int], repeat: int, elapsed: float, load: Sequence[float],
                   path: Path) -> None:
    info = zr.machine_info()
    lin04 = timings.get(("linear", 0.04))
    kin04 = timings.get(("kinematic", 0.04))
    lines = [
        "# Speed benchmarks",
        "",
        "Generated by `benchmarks/speed.py` (re-run the script rather than editing this file). Accuracy of the",
        "same benchmark vs step size: [zoe_rough.md](zoe_rough.md).",
        "",
        "## Machine",
        "",
        f"- CPU: {info['cpu']}; `nproc` = {info['nproc']}",
        f"- Python {info['python']}, numpy {info['numpy']}, scipy {info.get('scipy', '?')}, "
        f"numba {info.get('numba', '?')}; commit {info.get('commit', '?')}",
        f"- single process, single thread; all numbers below from one run of the script ({elapsed:.0f} s), after an "
        "untimed warm-up that compiles / loads the numba kernels.",
        f"- 1-minute load average at the start / end of the run: {load[0]:.2f} / {load[1]:.2f} (the machine is shared;"
        " a load near 1 means another process was using one of the two cores, which slows ours by several %"
        " through shared caches and frequency — repetitions keep the fastest).",
        "",
        "## Zoë rough-terrain benchmark (thesis Table 2.6)",
        "",
        f"Zoë (steering held straight), {zr.SPEED} m/s straight for {zr.DURATION:g} s on terrains "
        f"`zoe_rough_{{{','.join(map(str, terrains))}}}`, naive controller, ideal actuators — the setting of",
        "`benchmarks/zoe_rough.py`. **real-time factor**: simulated time / wall time of `Simulator.run`'s",
        "stepping loop, summed over the terrains" + (f" (each run repeated {repeat}×, fastest kept)" if repeat > 1
                                                        else "") + "; **µs/step** the same per step; **CPU µs/step**:",
        "process CPU time of the whole `Simulator.run` call per step (insensitive to time-slicing when the",
        "machine is shared; it includes the run's small set-up).",
        "**C++ (README)**: the thesis author's C++ library (wmrde, g++ -O2, single thread) on this project's",
        "machines, from `rough_terrains/README.md` (same terrains and run; Zoë dynamic uses the piecewise-linear",
        "\"uniform\" contact); **slower than C++** = its real-time factor / ours. **thesis T2.6**: the thesis's",
        "normalized times as real-time factors (1000 / value; 3.4 GHz Intel desktop, 1 m/s; its",
        "terramechanics column used a lookup table).",
        "",
        format_speed(timings, markdown=True),
        "",
        f"Other C++ reference points (README, Δt = 0.04): Open Dynamics Engine on the same vehicle "
        f"{CPP_ODE_RTF_004:,.0f}×; Zoë dynamic with the library's fastest build options {CPP_FAST_RTF_004:,.0f}×.",
        "",
    ]
    if lin04 and kin04:
        lines += [
            f"**Summary**: dynamic Zoë (linear contact) runs {lin04.rtf:.0f}× faster than real time at Δt = 0.04 "
            f"({lin04.us_per_step:.0f} µs/step), {CPP_RTF[('linear', 0.04)] / lin04.rtf:.0f}× slower than the C++ "
            f"(17 µs/step); the kinematic model {kin04.rtf:.0f}× ({kin04.us_per_step:.0f} µs/step), "
            f"{CPP_RTF[('kinematic', 0.04)] / kin04.rtf:.0f}× slower than the C++. µs per step at Δt = "
            + " / ".join(f"{dt:g}" for dt in DTS) + ": "
            + "; ".join(f"{NAMES[k]} " + " / ".join(f"{timings[(k, dt)].us_per_step:.0f}" for dt in DTS
                                                    if (k, dt) in timings)
                        for k in KINDS if any((k, dt) in timings for dt in DTS))
            + " — the cost of a step follows the number of force-balance iterations (more at larger Δt for the "
            "nonlinear models), so the real-time factor grows less than proportionally to Δt.",
            "",
        ]
    lines += [
        f"## Where the time goes: one dynamic step at Δt = {PROFILE_DT}",
        "",
        "Manual instrumentation: every library function a dynamic step calls is wrapped with a timer",
        "(`StepProfiler`; exclusive times — a wrapped function's time excludes that of the wrapped functions",
        f"it calls), over the same 10 s runs on terrains {', '.join(map(str, terrains))}. \"calls/step\" counts calls",
        "of the wrapped function per step for the first column. The instrumentation adds a few µs per",
        "wrapped call, ~40 calls per step (compare the two totals).",
        "",
        format_profile(profiles, markdown=True),
        "",
        "Findings (for the next issue, compiling the whole step with numba):",
        "",
        *_profile_findings(profiles),
        "",
        f"### cProfile (dynamic Zoë, {NAMES['linear']} contact, Δt = {PROFILE_DT}, terrain 1; top functions by "
        "own time)",
        "",
        "cProfile's per-call overhead inflates the total, and numba kernels appear as single opaque calls; it",
        "shows which Python-level functions the time is spent *in*.",
        "",
        "```",
        listing,
        "```",
        "",
        f"### cProfile of the kinematic model (Δt = {PROFILE_DT}, terrain 1)",
        "",
        "The kinematic step (no force balance) is as expensive as a linear-contact dynamic step: collision",
        "detection dominates both, and the kinematic step also computes the enhanced-model diagnostics",
        "(composite inertia, rollover margin) and a least-squares velocity solve.",
        "",
        "```",
        kin_listing,
        "```",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2 terrains, no repetition (smoke run)")
    p.add_argument("--terrains", type=int, nargs="+", help="terrain numbers (1..10), default all ten")
    p.add_argument("--repeat", type=int, default=None, help="repetitions per run, fastest kept (default 2; quick 1)")
    p.add_argument("--terrain-dir", type=Path, default=None, help=f"default {zr.TERRAIN_DIR}")
    p.add_argument("--out", type=Path, default=None, help="output folder (default docs/; --quick: out/speed_quick/)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    a = p.parse_args(argv)
    terrains = a.terrains or ((1, 2) if a.quick else zr.TERRAINS)
    repeat = a.repeat or (1 if a.quick else 2)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    timings = measure(terrains, repeat=repeat, terrain_dir=a.terrain_dir, quiet=a.quiet)
    print(format_speed(timings))
    profiles = [profile_step(k, terrains, terrain_dir=a.terrain_dir) for k in PROFILE_KINDS]
    print(format_profile(profiles))
    listing = cprofile_listing(terrain_dir=a.terrain_dir)
    kin_listing = cprofile_listing("kinematic", top=14, terrain_dir=a.terrain_dir)
    print(listing + "\n\n" + kin_listing)
    out = a.out or (zr.ROOT / "out" / "speed_quick" if a.quick else zr.ROOT / "docs")
    md = out / "benchmarks.md"
    write_markdown(timings, profiles, listing, kin_listing, terrains, repeat, time.perf_counter() - t0,
                   (load0, os.getloadavg()[0]), md)
    zr._log(f"wrote {md}", a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
