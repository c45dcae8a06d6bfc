#!/usr/bin/env python3
"""Thesis §2.5.2 (Table 2.5, Figs. 2.11–2.14, F.1, F.2): DAE dynamics vs. the stiff ODE, LandTamer on a ramp.

Scenario (thesis §2.5.2, read literally where it is explicit, our choice where it is not):

- vehicle: ``landtamer`` (urdf/landtamer.urdf, thesis Table E.1; 1462.8 kg, cg 0.83 m above flat ground);
- contact: Pacejka / Nicolas–Comstock (thesis App. C, Table C.1 coefficients, μ = 1), normal stiffness
  kp = m·g/(6·0.02 m), kd = kp/20 (VEHICLES.md); actuators: "a basic proportional controller with a modest
  gain" = the PI actuator of config/landtamer.yaml with its kp = 2000 N·m per rad/s and ki = 0, no torque limit;
- terrain: flat ground, then a 1.5 m high 20° ramp (4.12 m up, a 5 m plateau, 4.12 m down) starting at x = 4 m.
  The thesis gives only "in the interval from 2–10 seconds it traverses a 1.5 m high, 20° ramp"; with the ramp
  at x = 4 m and a 5 m plateau the front wheels reach the incline at t ≈ 2 s and the rear wheels leave the
  descent at t ≈ 10 s (printed by the benchmark);
- command (skid steer, :class:`~wmr_dynamics.controllers.BodyVelocityController`): v = 1 m/s from rest, 2 m/s
  from t = 1 s; yaw rate 0, then +1 rad/s (left) from t = 10 s and −1 rad/s (right) from t = 15 s; 20 s total.

Methods: the DAE / force-balance model (:class:`~wmr_dynamics.simulate.Simulator`, ``mode="dynamic"``) at
Δt = 0.01…0.20 s, and the stiff ODE (:func:`~wmr_dynamics.dynamics.stiff_ode.simulate_stiff_ode`: the same
contact and actuator forces added directly to eq. 2.53) with SciPy's stiff solvers BDF, LSODA and Radau at the
thesis's settings: RelTol 1e-2, MaxStep 0.04 s, MATLAB's default AbsTol 1e-6.

Slip (the same definitions for both methods, as the dynamic engine (``compiled/rollout.py``)
reports them): slip ratio s = (Rω − V_x)/max(|Rω|, |V_x|) (eq. 2.40, bounded to [−1, 1]; s > 0 when the wheel
surface turns faster than the wheel centre moves: driving / slipping backwards), slip angle
α = atan2(v_y, |V_x|) (eq. 2.42), v_y the lateral velocity of the contact point over the ground, contact-frame
y to the left: α < 0 when the wheel slides to its right.  In a left turn (ω > 0) the centre of curvature is on
the left, so "outward" slip is α < 0; in a right turn it is α > 0.

The scenario (vehicle, contact, terrain, command, the DAE and stiff-ODE runs, slips and phases) is
:mod:`wmr_dynamics.scenarios.landtamer_ramp`; this script times the methods and writes the report.

Usage::

    python benchmarks/landtamer_ramp.py            # all runs (~1.5 min on 2 cores): writes
                                                   # docs/figures/landtamer_*.png, the generated block of
                                                   # docs/dynamics_reproductions.md and the section
                                                   # ``stiff_ode`` of docs/benchmarks.md
    python benchmarks/landtamer_ramp.py --quick    # DAE Δt = 0.04 s and BDF only; prints, writes nothing
    python benchmarks/landtamer_ramp.py --no-write # all runs, prints the generated markdown instead
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import WmrModel
from wmr_dynamics.scenarios.landtamer_ramp import (
    DT,
    DURATION,
    ODE_SETTINGS,
    OdeRun,
    cg_height,
    dae_simulator,
    dae_slips,
    landtamer,
    nonconverged,
    p_gain,
    pacejka_options,
    phases,
    pitch,
    ramp_command,
    ramp_contact_interval,
    ramp_terrain,
    run_dae,
    run_ode,
    start_state,
)
from wmr_dynamics.simulate import SimResult, Simulator
from wmr_dynamics.terrain import Ramp, Terrain

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import figures_table  # noqa: E402  (shared with the other benchmark scripts)

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "dynamics_reproductions.md"
BENCHMARKS_DOC = REPO / "docs" / "benchmarks.md"
TARGET_SPEEDUP = 10.0  # the dynamics issue: the DAE at Δt 0.04 s ≥ 10× faster than the stiff solver
TARGET_POS_DIFF = 0.1  # m: DAE and stiff ODE final positions agree within
FIGURES = REPO / "docs" / "figures"

DT_SWEEP = (0.01, 0.02, 0.04, 0.10, 0.20)  # Table 2.5
ODE_METHODS = ("BDF", "LSODA", "Radau")

# thesis Table 2.5 (MATLAB; normalized time = computation time / 20 s)
THESIS_TABLE_2_5 = {
    "DAE 0.01": (None, 0.3204), "DAE 0.02": (0.0041, 0.1635), "DAE 0.04": (0.0766, 0.0903),
    "DAE 0.10": (0.0053, 0.0435), "DAE 0.20": (0.3780, 0.0281),
    "ode15s": (0.0742, 9.7647), "ode23s": (0.0503, 7.0499), "ode23tb": (0.0508, 1.5267),
}
THESIS_MEAN_STEP = {"ode15s": 0.0025, "ode23s": 0.0114, "ode23tb": 0.0141}  # s, the thesis's stiff solvers


# ---- model, terrain, command, runs: wmr_dynamics.scenarios.landtamer_ramp ------------------------------------

def run_dae_timed(model: WmrModel, terrain: Terrain, command: Callable[[float], tuple[float, float]],
                  duration: float, dt: float = DT, mu: float = 1.0, q0: NDArray | None = None,
                  progress: bool | None = False, engine: str = "auto", **overrides) -> tuple[SimResult, float]:
    """:func:`~wmr_dynamics.scenarios.landtamer_ramp.run_dae` and the process CPU time (s) of ``Simulator.run``
    (``engine``: as ``Simulator``'s)."""
    sim = dae_simulator(model, terrain, dt, mu, engine, **overrides)
    q0 = start_state(model, terrain) if q0 is None else q0
    c0 = time.process_time()
    res = sim.run(duration, command, q0=q0, progress=progress)
    return res, time.process_time() - c0


# ---- scenario phases and metrics -------------------------------------------------------------------------

@dataclass
class Comparison:
    """DAE (Δt = 0.04 s) vs. one stiff-ODE run."""

    method: str
    final_dae: NDArray
    final_ode: NDArray
    pos_diff: float  # m, horizontal distance between final positions
    yaw_diff: float  # rad
    ode_wall: float  # s
    dae_wall: float  # s
    ode_cpu: float  # s, process CPU time
    dae_cpu: float  # s
    n_rhs: int
    n_steps: int | None
    mean_step: float  # NaN if unknown

    @property
    def speedup(self) -> float:
        return self.ode_wall / self.dae_wall

    @property
    def speedup_cpu(self) -> float:
        return self.ode_cpu / self.dae_cpu


def yaw(q: NDArray) -> NDArray:
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def compare(dae: SimResult, ode: OdeRun, dae_wall: float | None = None, dae_cpu: float = float("nan")
            ) -> Comparison:
    d = float(np.linalg.norm(dae.q[-1, 4:6] - ode.q[-1, 4:6]))
    dy = float(np.angle(np.exp(1j * (yaw(dae.q[-1]) - yaw(ode.q[-1])))))
    return Comparison(ode.result.method, dae.q[-1, 4:7], ode.q[-1, 4:7], d, dy, ode.result.wall_time_s,
                      dae.wall_time_s if dae_wall is None else dae_wall, ode.cpu_s, dae_cpu, ode.result.n_rhs,
                      ode.n_steps, ode.mean_step)


def phase_means(t: NDArray, q: NDArray, S: NDArray, A: NDArray) -> dict[str, NDArray]:
    """Per-wheel mean slip ratio while climbing / descending and mean slip angle in the steady turns."""
    m = phases(t, q)
    return {"s_climb": S[m["climb"]].mean(0), "s_descent": S[m["descent"]].mean(0),
            "a_left": A[m["left"]].mean(0), "a_right": A[m["right"]].mean(0)}


# ---- study -----------------------------------------------------------------------------------------------

@dataclass
class Study:
    model: WmrModel
    terrain: Ramp
    dae: dict[float, SimResult]
    dae_wall: dict[float, float]  # best of the repeats, s
    dae_cpu: dict[float, float]  # best of the repeats, process CPU time, s
    ode: dict[str, OdeRun]
    comparisons: list[Comparison]
    dae_S: NDArray
    dae_A: NDArray
    repeats: int = 1
    ode_repeats: int = 1
    load: tuple[float, float] = (float("nan"), float("nan"))  # 1-minute load average before / after
    engine: str = "?"  # the engine the DAE ran on (Simulator.engine_used)
    dae_python: SimResult | None = None  # the DAE at Δt = DT on the Python path (engine="python"), for comparison
    dae_python_cpu: float = float("nan")  # its process CPU time, s
    failed: dict[str, str] = field(default_factory=dict)  # stiff solver → why it stopped (ModelError's message)


def log(msg: str) -> None:
    print(msg, flush=True)


def warm_up(model: WmrModel, terrain: Terrain) -> None:
    """Compile / load the numba kernels before timing anything."""
    run_dae(model, terrain, ramp_command, 0.2)
    run_ode(model, terrain, ramp_command, 0.05, slips=False)


def run_study(dts: tuple[float, ...] = DT_SWEEP, methods: tuple[str, ...] = ODE_METHODS, repeats: int = 3,
              ode_repeats: int = 1, duration: float = DURATION) -> Study:
    """All runs.  Timing: the best of several runs, wall (perf_counter) and process CPU time; each stiff-ODE run
    is paired with a DAE Δt = 0.04 s run right before it, so that a busy machine affects both alike."""
    model, terrain = landtamer(), ramp_terrain()
    load0 = os.getloadavg()[0]
    warm_up(model, terrain)
    dae, wall, cpu = {}, {}, {}
    for dt in dts:
        walls, cpus = [], []
        for _ in range(repeats):
            dae[dt], c = run_dae_timed(model, terrain, ramp_command, duration, dt)
            walls.append(dae[dt].wall_time_s)
            cpus.append(c)
        wall[dt], cpu[dt] = min(walls), min(cpus)
        log(f"  DAE dt={dt:.2f} s: {dae[dt].steps} steps, best wall {wall[dt]:.3f} s (CPU {cpu[dt]:.3f} s) of "
            f"{repeats}, mean Newton iterations {dae[dt].iterations[:-1].mean():.2f}, "
            f"final x, y = {dae[dt].q[-1, 4]:.3f}, {dae[dt].q[-1, 5]:.3f} m")
    ref = dae[DT] if DT in dae else dae[dts[0]]
    ode, runs_by_method, failed = {}, {}, {}
    for method in methods:
        log(f"  stiff ODE {method} (rtol {ODE_SETTINGS['rtol']:g}, atol {ODE_SETTINGS['atol']:g}, max step "
            f"{ODE_SETTINGS['max_step']:g} s) ...")
        runs = []
        for i in range(ode_repeats):
            r, c = run_dae_timed(model, terrain, ramp_command, duration, DT)  # the paired DAE run
            wall[DT], cpu[DT] = min(wall.get(DT, np.inf), r.wall_time_s), min(cpu.get(DT, np.inf), c)
            try:
                runs.append(run_ode(model, terrain, ramp_command, duration, method, slips=(i == 0)))
            except ModelError as e:  # a solver that gives up is a result of the comparison, not a crash of it
                failed[method] = str(e)
                log(f"    run {i + 1}: {e}")
                break
            log(f"    run {i + 1}: ODE wall {runs[-1].result.wall_time_s:.2f} s (CPU {runs[-1].cpu_s:.2f} s); paired "
                f"DAE wall {r.wall_time_s:.3f} s (CPU {c:.3f} s)")
        if method in failed:
            continue
        best = min(runs, key=lambda r: r.result.wall_time_s)
        best.cpu_s = min(r.cpu_s for r in runs)
        best.slip_ratio, best.slip_angle = runs[0].slip_ratio, runs[0].slip_angle
        ode[method] = best
        runs_by_method[method] = runs
    comps = [compare(ref, ode[m], wall.get(DT, ref.wall_time_s), cpu.get(DT, float("nan"))) for m in ode]
    for c in comps:
        steps = f"{c.n_steps} steps (mean {c.mean_step * 1e3:.1f} ms)" if c.n_steps else "steps unknown"
        log(f"  {c.method}: {c.n_rhs} RHS evaluations, {steps}, final position {c.pos_diff:.4f} m from the DAE's; "
            f"wall {c.ode_wall:.2f} s = {c.speedup:.1f}x the DAE's, CPU {c.ode_cpu:.2f} s = {c.speedup_cpu:.1f}x")
    S, A = dae_slips(model, terrain, ref)
    engine = Simulator(model, terrain, mode="dynamic", dt=DT, dynamics=pacejka_options(model)).engine_used
    py, py_cpu = None, float("nan")
    if engine != "python":
        py, py_cpu = run_dae_timed(model, terrain, ramp_command, duration, DT, engine="python")
        log(f"  DAE dt={DT} on the Python path: wall {py.wall_time_s:.3f} s (CPU {py_cpu:.3f} s)")
    return Study(model, terrain, dae, wall, cpu, ode, comps, S, A, repeats, ode_repeats, (load0, os.getloadavg()[0]),
                 engine, py, py_cpu, failed)


# ---- output ----------------------------------------------------------------------------------------------

def _failure(why: str) -> str:
    """The solver's own words from a stiff-solver ModelError ("stiff ODE solver M failed (...): WHY; hint")."""
    return why.split(":", 1)[-1].split(";")[0].strip()


def machine_info() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba
    import scipy

    return (f"{os.cpu_count()} CPU cores ({cpu}), Python {platform.python_version()}, NumPy {np.__version__}, "
            f"SciPy {scipy.__version__}, Numba {numba.__version__}")


def _fmt_wheels(a: NDArray, fmt: str = "{:+.3f}") -> str:
    return " / ".join(fmt.format(v) for v in a)


def print_summary(st: Study) -> None:
    ref = st.dae[DT] if DT in st.dae else next(iter(st.dae.values()))
    t0, t1 = ramp_contact_interval(ref, st.terrain)
    log(f"wheels on the ramp from t = {t0:.2f} s to t = {t1:.2f} s (thesis: 2-10 s)")
    pm = phase_means(ref.t, ref.q, st.dae_S, st.dae_A)
    log(f"DAE mean slip ratio climbing  (FL/FR/ML/MR/BL/BR): {_fmt_wheels(pm['s_climb'])}")
    log(f"DAE mean slip ratio descending                    : {_fmt_wheels(pm['s_descent'])}")
    log(f"DAE mean slip angle, left turn  12-15 s (rad)     : {_fmt_wheels(pm['a_left'])}")
    log(f"DAE mean slip angle, right turn 17-20 s (rad)     : {_fmt_wheels(pm['a_right'])}")
    for method, run in st.ode.items():
        po = phase_means(run.t, run.q, run.slip_ratio, run.slip_angle)
        log(f"{method:5s} mean slip ratio climbing / descending (ML): {po['s_climb'][2]:+.3f} / "
            f"{po['s_descent'][2]:+.3f}; slip angle left / right (ML): {po['a_left'][2]:+.3f} / "
            f"{po['a_right'][2]:+.3f}")
    bad = nonconverged(ref, st.model)
    log(f"DAE dt={DT}: {len(bad)} steps above the force-balance tolerance: "
        + ", ".join(f"t={ref.t[k]:.2f} s (|e| {ref.cost[k]:.0f} N)" for k in bad))


BEGIN = "<!-- BEGIN GENERATED by benchmarks/landtamer_ramp.py -->"
END = "<!-- END GENERATED by benchmarks/landtamer_ramp.py -->"


def results_markdown(st: Study) -> str:
    """The generated block of docs/dynamics_reproductions.md: tables only (the page's text explains them)."""
    ref_dt = min(st.dae)
    ref = st.dae[ref_dt]
    base = st.dae[DT]
    t0, t1 = ramp_contact_interval(base, st.terrain)
    rows = ["| method | step size (s) | pos. diff. (m) | yaw diff. (°) | comp. time (CPU, normalized) | thesis pos. "
            "diff. (m) | thesis comp. time |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for dt, r in st.dae.items():
        d = np.linalg.norm(r.q[-1, 4:6] - ref.q[-1, 4:6])
        dy = np.degrees(abs(np.angle(np.exp(1j * (yaw(r.q[-1]) - yaw(ref.q[-1]))))))
        th = THESIS_TABLE_2_5.get(f"DAE {dt:.2f}", (None, None))
        rows.append(f"| DAE | {dt:.2f} | {'-' if dt == ref_dt else f'{d:.4f}'} | {'-' if dt == ref_dt else f'{dy:.2f}'}"
                    f" | {st.dae_cpu[dt] / DURATION:.4f} | {'-' if th[0] is None else th[0]} | "
                    f"{'-' if th[1] is None else th[1]} |")
    for c in st.comparisons:
        d = np.linalg.norm(c.final_ode[:2] - ref.q[-1, 4:6])
        dy = np.degrees(abs(np.angle(np.exp(1j * (yaw(st.ode[c.method].q[-1]) - yaw(ref.q[-1]))))))
        th = THESIS_TABLE_2_5["ode15s"] if c.method == "BDF" else None  # both variable-order multistep (BDF/NDF)
        mean = f"{c.mean_step:.4f} (mean)" if c.n_steps else "n/a"
        rows.append(f"| SciPy {c.method} | {mean} | {d:.4f} | {dy:.2f} | {c.ode_cpu / DURATION:.4f}"
                    f" | {'-' if th is None else f'ode15s: {th[0]}'} | {'-' if th is None else th[1]} |")
    for method, why in st.failed.items():
        rows.append(f"| SciPy {method} | failed: {_failure(why)} | – | – | – | – | – |")
    thesis = figures_table([(k, f"{THESIS_TABLE_2_5[k][0]}", f"{THESIS_TABLE_2_5[k][1]}", f"{THESIS_MEAN_STEP[k]}")
                            for k in ("ode15s", "ode23s", "ode23tb")],
                           ("thesis stiff solver (MATLAB)", "pos. diff. (m)", "normalized time", "mean step (s)"))
    comp = ["| stiff ODE | final x, y (m) | DAE Δt 0.04 final x, y (m) | ‖Δ‖ (m) | RHS evals | steps | ODE wall (CPU) "
            "(s) | DAE wall (CPU) (s) | ODE / DAE wall (CPU) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in st.comparisons:
        comp.append(f"| {c.method} | {c.final_ode[0]:.3f}, {c.final_ode[1]:.3f} | {c.final_dae[0]:.3f}, "
                    f"{c.final_dae[1]:.3f} | {c.pos_diff:.4f} | {c.n_rhs} | {c.n_steps or 'n/a'} | {c.ode_wall:.2f} "
                    f"({c.ode_cpu:.2f}) | {c.dae_wall:.3f} ({c.dae_cpu:.3f}) | {c.speedup:.1f}× "
                    f"({c.speedup_cpu:.1f}×) |")
    pm = phase_means(base.t, base.q, st.dae_S, st.dae_A)
    slip = ["| quantity (mean over the phase) | method | FL | FR | ML | MR | BL | BR |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    labels = {"s_climb": "slip ratio, climbing (pitch < −15°)", "s_descent": "slip ratio, descending (pitch > 15°)",
              "a_left": "slip angle (rad), left turn 12–15 s", "a_right": "slip angle (rad), right turn 17–20 s"}
    bdf = st.ode.get("BDF") or next(iter(st.ode.values()))
    po = phase_means(bdf.t, bdf.q, bdf.slip_ratio, bdf.slip_angle)
    for key, label in labels.items():
        slip.append(f"| {label} | DAE 0.04 | " + " | ".join(f"{v:+.3f}" for v in pm[key]) + " |")
        slip.append(f"| | {bdf.result.method} | " + " | ".join(f"{v:+.3f}" for v in po[key]) + " |")
    bad = nonconverged(base, st.model)
    iters = base.iterations[:-1]
    settings = [("machine", machine_info()),
                ("repetitions (best kept): DAE / each stiff solver", f"{st.repeats} / {st.ode_repeats}"),
                ("1-minute load average before / after the runs", f"{st.load[0]:.1f} / {st.load[1]:.1f}"),
                ("wheels on the ramp (s)", f"t = {t0:.2f} to {t1:.2f}")]
    figures = [("CPU time per unit of work: DAE per step (ms)", f"{1e3 * st.dae_cpu[DT] / base.steps:.2f}")]
    figures += [(f"– {c.method} per RHS evaluation (ms)", f"{1e3 * c.ode_cpu / c.n_rhs:.2f}") for c in st.comparisons]
    figures += [("DAE Δt = 0.04 s: Newton iterations per step, mean (thesis 0.87) / max",
                 f"{iters.mean():.2f} / {iters.max():.0f}"),
                ("– steps that needed none", f"{int((iters == 0).sum())} of {len(iters)}"),
                ("– steps that ended above the force-balance tolerance (1e-5 × weight)",
                 ", ".join(f"t = {base.t[k]:.2f} s (‖e‖ = {base.cost[k]:.0f} N)" for k in bad) or "none")]
    return "\n".join([
        BEGIN, figures_table(settings, ("setting", "value")), "",
        f"Table 2.5 analogue (final pose relative to the DAE at Δt = {ref_dt} s):", "", *rows, "", thesis, "",
        "DAE (Δt = 0.04 s) vs. each stiff solver:", "", *comp, "", figures_table(figures), "",
        "Mean slip per wheel and phase (DAE Δt 0.04 s vs. BDF):", "", *slip, END])


def stiff_ode_markdown(st: Study) -> str:
    """The ``stiff_ode`` section of docs/benchmarks.md: the DAE-vs-stiff-solver ratios of this run."""
    base = st.dae[DT]
    py = st.dae_python
    head = ["stiff solver (SciPy)", "ODE wall (CPU) (s)", "RHS evals", "DAE Δt 0.04 wall (CPU) (s)",
            "ODE / DAE wall (CPU)", f"target ≥ {TARGET_SPEEDUP:g}×", "DAE Python path: ODE / DAE (CPU)",
            "final position DAE vs ODE (m)"]
    rows = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    for c in st.comparisons:
        py_ratio = f"{c.ode_cpu / st.dae_python_cpu:.1f}×" if py is not None else "–"
        rows.append(f"| {c.method} | {c.ode_wall:.2f} ({c.ode_cpu:.2f}) | {c.n_rhs} | {c.dae_wall:.4f} "
                    f"({c.dae_cpu:.4f}) | {c.speedup:.0f}× ({c.speedup_cpu:.0f}×) | "
                    f"{'**met**' if c.speedup >= TARGET_SPEEDUP else '**not met**'} | {py_ratio} | {c.pos_diff:.4f} |")
    for method, why in st.failed.items():
        rows.append(f"| {method} | failed ({_failure(why)}) | – | – | – | – | – | – |")
    worst = max(c.pos_diff for c in st.comparisons)
    by = {c.method: c for c in st.comparisons}
    data = {"dae_wall": round(st.dae_wall[DT], 5), "dae_cpu": round(st.dae_cpu[DT], 5),
            "max_pos_diff": round(worst, 4), "engine": st.engine}
    for m, c in by.items():
        data[f"{m.lower()}_wall"] = round(c.speedup, 1)
        data[f"{m.lower()}_cpu"] = round(c.speedup_cpu, 1)
    settings = [("DAE engine; simulated time (s); path driven (m)",
                 f"`{st.engine}`; {base.t[-1]:g}; {_path_length(base.q):.0f}"),
                ("repetitions (best kept): DAE / each stiff solver", f"{st.repeats} / {st.ode_repeats}"),
                ("machine; 1-minute load average before / after", f"{machine_info()}; {st.load[0]:.2f} / "
                                                                  f"{st.load[1]:.2f}")]
    ok = all(c.speedup >= TARGET_SPEEDUP for c in st.comparisons)
    figures = [(f"DAE at Δt 0.04 s ≥ {TARGET_SPEEDUP:g}× faster than every stiff solver (wall)",
                "**met**" if ok else "**not met** for " + ", ".join(m for m, c in by.items()
                                                                   if c.speedup < TARGET_SPEEDUP))]
    if py is not None:
        figures.append(("Python path's DAE (same run): CPU (s)", f"{st.dae_python_cpu:.3f}"))
    figures += [(f"largest final position difference DAE vs ODE (m; bound {TARGET_POS_DIFF:g})",
                 f"{worst:.4f} ({'within' if worst <= TARGET_POS_DIFF else 'NOT within'})"),
                ("DAE Newton iterations per step", f"{base.iterations[:-1].mean():.2f}"),
                ("ODE right-hand side (Python) per evaluation (ms)",
                 ", ".join(f"{c.method} {1e3 * c.ode_cpu / c.n_rhs:.2f}" for c in st.comparisons)),
                ("DAE compiled step (µs)", f"{1e6 * st.dae_wall[DT] / base.steps:.0f}")]
    if "BDF" in by:
        figures.append(("BDF's evaluations, compiled, ≈ DAE steps (≈ × the DAE's steps)",
                        f"{by['BDF'].n_rhs} ≈ {by['BDF'].n_rhs / 4:.0f} (≈ {by['BDF'].n_rhs / 4 / base.steps:.1f}× "
                        f"the DAE's {base.steps})"))
    return "\n".join([figures_table(settings, ("setting", "value")), "", *rows, "", figures_table(figures), "",
                      "<!-- data stiff_ode " + json.dumps(data, separators=(",", ":")) + " -->"])


def _path_length(q: NDArray) -> float:
    """Length (m) of the body's path through the states ``q``."""
    return float(np.linalg.norm(np.diff(q[:, 4:7], axis=0), axis=1).sum())


def write_stiff_ode_section(st: Study, path: Path = BENCHMARKS_DOC) -> None:
    """Write the ``stiff_ode`` section of docs/benchmarks.md and refresh its summary (benchmarks/speed.py)."""
    import speed
    from _report import update_section

    speed.prepare_doc(path)
    update_section(path, "stiff_ode", stiff_ode_markdown(st))
    speed.write_summary(path)


def write_block(block: str, begin: str, end: str, path: Path = DOC) -> None:
    """Replace the block between ``begin`` and ``end`` markers in ``path`` (appending it if absent)."""
    text = path.read_text() if path.exists() else "# Dynamics reproductions\n"
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


# ---- figures ---------------------------------------------------------------------------------------------

ODE_STYLE = {"BDF": dict(color="C1", ls="--"), "LSODA": dict(color="C2", ls=":"), "Radau": dict(color="C3", ls="-.")}


def plot_all(st: Study, out: Path = FIGURES) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    dae = st.dae[DT]
    names = st.model.wheel_names
    paths = []

    # path (top view) and elevation / pitch (Fig. 2.11 is an animation screenshot)
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.8))
    ax[0].axvspan(st.terrain.x_start, st.terrain.s_top, color="0.85", label="incline")
    ax[0].axvspan(st.terrain.s_top_end, st.terrain.s_end, color="0.92", label="descent")
    ax[0].plot(dae.q[:, 4], dae.q[:, 5], "C0-", lw=2, label=f"DAE Δt = {DT} s")
    for m, run in st.ode.items():
        ax[0].plot(run.q[:, 4], run.q[:, 5], lw=1.3, label=f"stiff ODE ({m})", **ODE_STYLE[m])
    for tm in (1.0, 10.0, 15.0):
        k = int(round(tm / DT))
        ax[0].plot(*dae.q[k, 4:6], "ko", ms=4)
        ax[0].annotate(f"{tm:g} s", dae.q[k, 4:6], textcoords="offset points", xytext=(5, -12))
    ax[0].set(xlabel="x (m)", ylabel="y (m)", title="body path (top view)", aspect="equal")
    ax[0].legend(loc="upper left", fontsize=8)
    ax[1].plot(dae.t, dae.q[:, 6], "C0-", lw=2, label="z, DAE")
    bdf = st.ode.get("BDF") or next(iter(st.ode.values()))
    ax[1].plot(bdf.t, bdf.q[:, 6], "C1--", label=f"z, {bdf.result.method}")
    ax[1].set(xlabel="time (s)", ylabel="body frame height z (m)", title="elevation and pitch")
    a2 = ax[1].twinx()
    a2.plot(dae.t, np.degrees(pitch(dae.q)), "C2-", lw=1, label="pitch, DAE")
    a2.plot(bdf.t, np.degrees(pitch(bdf.q)), "C3--", lw=1, label=f"pitch, {bdf.result.method}")
    a2.set_ylabel("pitch (°, + nose down)")
    h1, l1 = ax[1].get_legend_handles_labels()
    h2, l2 = a2.get_legend_handles_labels()
    ax[1].legend(h1 + h2, l1 + l2, fontsize=8, loc="upper right")
    fig.tight_layout()
    paths.append(out / "landtamer_ramp_path.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    # Fig. 2.14: middle-left wheel
    w = 2
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    ax[0].plot(dae.t, st.dae_S[:, w], "C0-", lw=1.8, label="DAE Δt = 0.04 s")
    ax[1].plot(dae.t, st.dae_A[:, w], "C0-", lw=1.8, label="DAE Δt = 0.04 s")
    ax[0].plot(bdf.t, bdf.slip_ratio[:, w], "C1--", lw=1.2, label=f"stiff ODE ({bdf.result.method})")
    ax[1].plot(bdf.t, bdf.slip_angle[:, w], "C1--", lw=1.2, label=f"stiff ODE ({bdf.result.method})")
    ax[0].set(xlabel="time (s)", ylabel="slip ratio", title=f"{names[w]} wheel: slip ratio", ylim=(-0.35, 0.35))
    ax[1].set(xlabel="time (s)", ylabel="slip angle (rad)", title=f"{names[w]} wheel: slip angle (< 0: sliding right)",
              ylim=(-0.1, 0.1))
    for a in ax:
        a.axhline(0, color="0.6", lw=0.6)
        a.legend(fontsize=8)
        a.grid(alpha=0.3)
    fig.tight_layout()
    paths.append(out / "landtamer_ramp_slip_ml.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    # Figs. F.1 and F.2: all wheels
    for key, label, ylim, fname in (("S", "slip ratio", (-0.35, 0.35), "landtamer_slip_ratio_all.png"),
                                    ("A", "slip angle (rad)", (-0.4, 0.4), "landtamer_slip_angle_all.png")):
        fig, ax = plt.subplots(3, 2, figsize=(12, 8), sharex=True, sharey=True)
        for i in range(st.model.num_wheels):
            a = ax[i // 2, i % 2]
            a.plot(dae.t, (st.dae_S if key == "S" else st.dae_A)[:, i], "C0-", lw=1.5, label="DAE Δt = 0.04 s")
            a.plot(bdf.t, (bdf.slip_ratio if key == "S" else bdf.slip_angle)[:, i], "C1--", lw=1.1,
                   label=f"stiff ODE ({bdf.result.method})")
            a.axhline(0, color="0.6", lw=0.6)
            a.set(title=names[i], ylim=ylim)
            a.grid(alpha=0.3)
            if i % 2 == 0:
                a.set_ylabel(label)
            if i >= 4:
                a.set_xlabel("time (s)")
        ax[0, 0].legend(fontsize=8)
        fig.tight_layout()
        paths.append(out / fname)
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)

    # Figs. 2.12 and 2.13: solver effort
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    ax[0].step(dae.t[:-1], dae.iterations[:-1], "C0-", where="post", lw=1)
    ax[0].set(xlabel="time (s)", ylabel="Newton iterations", title=f"DAE (Δt = {DT} s): force-balance iterations "
              f"(mean {dae.iterations[:-1].mean():.2f})")
    for m, run in st.ode.items():
        if not run.steps_known:
            continue
        h = np.diff(np.r_[0.0, run.step_times])
        ax[1].semilogy(run.step_times, h, lw=0.8, label=f"{m}: {len(h)} steps, mean {run.mean_step * 1e3:.1f} ms",
                       color=ODE_STYLE[m]["color"])
    ax[1].set(xlabel="time (s)", ylabel="step size (s)", title="stiff ODE: accepted step sizes (max step 0.04 s)")
    ax[1].legend(fontsize=8)
    for a in ax:
        a.grid(alpha=0.3)
    fig.tight_layout()
    paths.append(out / "landtamer_ramp_solver.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="DAE at Δt 0.04 s and BDF only, one repeat; write nothing")
    ap.add_argument("--no-write", action="store_true", help="run everything but write no files")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    log(f"LandTamer ramp (thesis §2.5.2) on {machine_info()}")
    model = landtamer()
    log(f"body cg height {cg_height(model, True):.3f} m (vehicle {cg_height(model):.3f} m), mass "
        f"{model.total_mass:.1f} kg, P gain {p_gain(model)[0]:g} N·m·s/rad")
    if args.quick:
        st = run_study(dts=(DT,), methods=("BDF",), repeats=1)
    else:
        st = run_study(ode_repeats=2)
    print_summary(st)
    log(f"total {time.perf_counter() - start:.0f} s")
    if args.quick:
        return 0
    if args.no_write:
        print(results_markdown(st))
        print(stiff_ode_markdown(st))
        return 0
    paths = plot_all(st)
    write_block(results_markdown(st), BEGIN, END)
    write_stiff_ode_section(st)
    log("wrote " + ", ".join(str(p.relative_to(REPO)) for p in paths) + f", the generated block of "
        f"{DOC.relative_to(REPO)} and the section stiff_ode of {BENCHMARKS_DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
