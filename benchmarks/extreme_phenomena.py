#!/usr/bin/env python3
"""Thesis §2.5.3 (Figs. 2.16–2.21): loss of traction and rollover predicted by the DAE dynamics, LandTamer.

Same vehicle, Pacejka / Nicolas–Comstock contact (App. C, Table C.1) and P actuator (kp 2000, ki 0, no torque
limit) as the ramp test (benchmarks/landtamer_ramp.py), on flat ground, Δt = 0.04 s unless stated.

(a) Loss of traction, μ = 0.6 (thesis: "lowered to 0.6 to simulate a low traction surface"):

- straight: speed command 0.5 m/s from rest, 5 m/s at t = 1 s, back to 0.5 m/s at t = 3 s (thesis: "at the 1
  second mark ... accelerates from 0.5 to 5 m/s, and at the 3 second mark it decelerates back to 0.5 m/s"); 6 s;
- turning: the same, plus a yaw-rate command of 2 rad/s while the speed command is 5 m/s (1 ≤ t < 3 s; the thesis
  says "turn at 2 rad/s at full speed" without the interval, this is our reading); contrast: the same turn
  command at a constant 0.5 m/s.

Normalized longitudinal force f_x/f_z (the thesis's plots) and slip ratio s (eq. 2.40, bounded to [−1, 1], as
SimResult reports it; > 0 driving, < 0 braking).  The model's own curve f_x/f_z(s) at zero slip angle, computed
with the contact model, peaks at the critical slip (s ≈ 0.28 driving, −0.38 braking, f_x/f_z = 0.96 μ).
Yaw stability: body yaw rate ω_z vs. the command, heading change after the turn command has ended, body
sideslip angle β = atan2(v_y, v_x) at the body frame.

(b) Rollover: 5 m/s straight from rest, then a 7 rad/s yaw-rate command from t = 1 s (held); μ = 1; 5 s.  Body
cg height 0.83 m (the bundled model) vs. 1.25 m (the body's centre of mass moved up, mass and inertia about the
cg kept: :func:`wmr_dynamics.scenarios.landtamer_ramp.landtamer`).  Liftoff: a wheel's model normal force is 0.
Rollover: ``SimResult.rolled_over`` (body z axis below the horizontal).  The library collides wheels only, so
motion after the body has turned over (the vehicle "lands" on its wheels upside down, body below ground) is not
physical and is left out of the analysis.  Variants: Δt 0.01–0.10 s, starting already at 5 m/s
(``Simulator.run(..., qvel0=...)``), and a sweep of cg heights.

The scenario (commands, runs and the traction, yaw and rollover metrics) is
:mod:`wmr_dynamics.scenarios.extreme_phenomena`; this script runs the variants and writes the report.

Usage::

    python benchmarks/extreme_phenomena.py             # all runs (~1 min): writes docs/figures/traction_*.png,
                                                       # rollover_*.png and the generated block of
                                                       # docs/dynamics_reproductions.md
    python benchmarks/extreme_phenomena.py --quick     # the four main runs only; prints, writes nothing
    python benchmarks/extreme_phenomena.py --no-write  # all runs, prints the generated markdown instead
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import figures_table  # noqa: E402
from landtamer_ramp import DOC, FIGURES, REPO, log, machine_info, write_block  # noqa: E402

from wmr_dynamics.model import WmrModel  # noqa: E402
from wmr_dynamics.scenarios.extreme_phenomena import (  # noqa: E402
    CG_RAISED,
    DT,
    MU_LOW,
    ROLL_TURN_AT,
    TURN_RATE,
    V_HIGH,
    V_LOW,
    RolloverMetrics,
    TractionMetrics,
    YawMetrics,
    critical_slip,
    model_curve,
    normalized_force,
    rollover_command,
    rollover_metrics,
    run_rollover,
    run_traction,
    traction_command,
    traction_metrics,
    upright,
    yaw_metrics,
)
from wmr_dynamics.scenarios.landtamer_ramp import cg_height, landtamer, run_dae  # noqa: E402
from wmr_dynamics.simulate import SimResult  # noqa: E402
from wmr_dynamics.terrain import Plane  # noqa: E402

CG_SWEEP = (0.90, 0.95, 1.00, 1.05, 1.15, 1.25)  # m, body cg heights of the sweep


# ---- study -----------------------------------------------------------------------------------------------

@dataclass
class Study:
    model: WmrModel
    straight: SimResult
    turning: SimResult
    slow_turn: SimResult
    traction_dt: dict[float, tuple[TractionMetrics, TractionMetrics, YawMetrics]]
    base: SimResult
    raised: SimResult
    rollover_variants: dict[str, tuple[RolloverMetrics, RolloverMetrics]]
    cg_sweep: dict[float, RolloverMetrics]


def run_study(quick: bool = False) -> Study:
    model = landtamer()
    raised_model = landtamer(CG_RAISED)
    log(f"baseline: body cg {cg_height(model, True):.3f} m (vehicle {cg_height(model):.3f} m); raised: body cg "
        f"{cg_height(raised_model, True):.3f} m (vehicle {cg_height(raised_model):.3f} m)")
    run_dae(model, Plane(), rollover_command, 0.2)  # compile / load the kernels
    straight = run_traction(0.0)
    turning = run_traction(TURN_RATE)
    slow = run_traction(TURN_RATE, v_high=V_LOW)
    log(f"  traction runs: {straight.wall_time_s:.2f} s, {turning.wall_time_s:.2f} s, {slow.wall_time_s:.2f} s wall")
    traction_dt = {DT: (traction_metrics(straight, model), traction_metrics(turning, model), yaw_metrics(turning))}
    base = run_rollover(None)
    raised = run_rollover(CG_RAISED)
    log(f"  rollover runs: {base.wall_time_s:.2f} s, {raised.wall_time_s:.2f} s wall")
    variants = {f"from rest, Δt {DT}": (rollover_metrics(base, model), rollover_metrics(raised, raised_model))}
    sweep: dict[float, RolloverMetrics] = {}
    if not quick:
        for dt in (0.01, 0.02, 0.10):
            s, tr = run_traction(0.0, dt), run_traction(TURN_RATE, dt)
            traction_dt[dt] = (traction_metrics(s, model), traction_metrics(tr, model), yaw_metrics(tr))
            log(f"  traction Δt {dt}: done")
        for at_speed in (False, True):
            for dt in (0.01, 0.02, 0.04, 0.10):
                if not at_speed and dt == DT:
                    continue
                key = f"{'at 5 m/s' if at_speed else 'from rest'}, Δt {dt}"
                variants[key] = (rollover_metrics(run_rollover(None, dt, at_speed=at_speed), model),
                                 rollover_metrics(run_rollover(CG_RAISED, dt, at_speed=at_speed), raised_model))
                log(f"  rollover {key}: done")
        for cg in CG_SWEEP:
            sweep[cg] = rollover_metrics(run_rollover(cg), landtamer(cg))
            log(f"  rollover body cg {cg} m: {'rolls over' if sweep[cg].rolled_over else 'stays upright'}")
    return Study(model, straight, turning, slow, traction_dt, base, raised, variants, sweep)


def print_summary(st: Study) -> None:
    crit = critical_slip(MU_LOW)
    log(f"model curve (μ {MU_LOW}, α 0): peak f_x/f_z {crit['peak_drive']:.3f} at s = {crit['s_drive']:.2f} "
        f"(driving), {crit['peak_brake']:.3f} at s = {crit['s_brake']:.2f} (braking)")
    for name, m in (("straight", st.traction_dt[DT][0]), ("turning", st.traction_dt[DT][1])):
        log(f"{name}: accelerating: peak f_x/f_z {m.peak_drive:.3f} at s {m.s_at_peak_drive:.2f}; at max s "
            f"{m.max_s_drive:.2f}: {m.force_at_max_s_drive:.3f} ({100 * m.drop_drive:.0f}% below the peak); "
            f"braking: peak {m.peak_brake:.3f} at s {m.s_at_peak_brake:.2f}; at min s {m.min_s_brake:.2f}: "
            f"{m.force_at_min_s_brake:.3f} ({100 * m.drop_brake:.0f}% below); non-converged steps "
            f"{m.nonconverged}, mean iterations {m.mean_iterations:.2f}")
    y, ys = yaw_metrics(st.turning), yaw_metrics(st.slow_turn)
    for name, m in (("5 m/s turn", y), ("0.5 m/s turn", ys)):
        log(f"{name}: yaw rate {m.mean_rate_turning:.2f} rad/s (command {TURN_RATE}), heading at 3 s "
            f"{m.heading_at_end_of_turn:.0f}° (commanded {m.commanded_heading:.0f}°), then "
            f"{m.heading_change_after:+.0f}° with the command at 0 (yaw rate {m.rate_at_end_of_turn:.2f} rad/s at 3 s, "
            f"max {m.max_rate_after:.2f} rad/s after), max sideslip {m.max_sideslip:.0f}°")
    for key, (b, r) in st.rollover_variants.items():
        for name, m in (("baseline", b), ("raised", r)):
            log(f"rollover {key} {name}: rolled over {m.rolled_over}"
                + (f" at {m.t_rollover:.2f} s, last wheel {m.last_wheel}" if m.rolled_over else "")
                + f"; max tilt {m.max_tilt:.1f}°; lifted at launch {m.lifted_launch}, in the turn {m.lifted_turn} "
                f"(recontact {m.recontact}); non-converged steps {m.nonconverged_before} before / "
                f"{m.nonconverged_after} after rollover")


# ---- output ----------------------------------------------------------------------------------------------

BEGIN = "<!-- BEGIN GENERATED by benchmarks/extreme_phenomena.py -->"
END = "<!-- END GENERATED by benchmarks/extreme_phenomena.py -->"


def _lift(m: RolloverMetrics) -> str:
    if m.rolled_over:
        order = sorted(m.final_liftoff.items(), key=lambda kv: kv[1])
        return "all, last liftoff " + ", ".join(f"{n} {tt:.2f} s" for n, tt in order)
    if not m.lifted_turn:
        return "none"
    return ", ".join(f"{n}{'' if m.recontact.get(n) else ' (stays off)'}" for n in m.lifted_turn)


def results_markdown(st: Study) -> str:
    crit = critical_slip(MU_LOW)
    trac = ["| test | Δt (s) | peak f_x/f_z accelerating (at s) | f_x/f_z at max s | peak f_x/f_z braking (at s) "
            "| f_x/f_z at min s | non-conv. steps | mean iterations |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for dt, (s, tr, _) in sorted(st.traction_dt.items()):
        for name, m in (("straight", s), ("turning", tr)):
            trac.append(f"| {name} | {dt:.2f} | {m.peak_drive:.3f} ({m.s_at_peak_drive:+.2f}) | "
                        f"{m.force_at_max_s_drive:.3f} (s {m.max_s_drive:+.2f}, −{100 * m.drop_drive:.0f}%) | "
                        f"{m.peak_brake:.3f} ({m.s_at_peak_brake:+.2f}) | {m.force_at_min_s_brake:.3f} "
                        f"(s {m.min_s_brake:+.2f}, −{100 * m.drop_brake:.0f}%) | {m.nonconverged} | "
                        f"{m.mean_iterations:.2f} |")
    yaw_rows = ["| run | Δt (s) | mean yaw rate 1.5–3 s (rad/s; cmd 2) | heading at 3 s (cmd 229°) | heading change "
                "3 s → end (cmd 0) | yaw rate at 3 s → max after (cmd 0) | max sideslip |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
    for dt, (_, _, y) in sorted(st.traction_dt.items()):
        yaw_rows.append(f"| 5 m/s + 2 rad/s | {dt:.2f} | {y.mean_rate_turning:.2f} | {y.heading_at_end_of_turn:.0f}° | "
                        f"{y.heading_change_after:+.0f}° | {y.rate_at_end_of_turn:.2f} → {y.max_rate_after:.2f} | "
                        f"{y.max_sideslip:.0f}° |")
    ys = yaw_metrics(st.slow_turn)
    yaw_rows.append(f"| 0.5 m/s + 2 rad/s (contrast) | {DT:.2f} | {ys.mean_rate_turning:.2f} | "
                    f"{ys.heading_at_end_of_turn:.0f}° | {ys.heading_change_after:+.0f}° | "
                    f"{ys.rate_at_end_of_turn:.2f} → {ys.max_rate_after:.2f} | {ys.max_sideslip:.0f}° |")
    roll = ["| run | model | rolled over (t) | max tilt before | wheels lifted 0–1 s | wheels lifted in the turn "
            "| most lifted at once | last wheel in contact | non-conv. steps before / after rollover |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key, pair in st.rollover_variants.items():
        for name, m in zip(("cg 0.83 m", f"cg {CG_RAISED} m"), pair, strict=True):
            roll.append(f"| {key} | {name} | {'yes (' + format(m.t_rollover, '.2f') + ' s)' if m.rolled_over else 'no'}"
                        f" | {m.max_tilt:.1f}° | {', '.join(m.lifted_launch) or 'none'} | {_lift(m)} | "
                        f"{m.max_lifted_at_once} | {m.last_wheel or '-'} | {m.nonconverged_before} / "
                        f"{m.nonconverged_after} |")
    sweep = [f"| body cg (m) | 0.83 | {' | '.join(f'{c:g}' for c in st.cg_sweep)} |",
             f"| --- | --- | {' | '.join('---' for _ in st.cg_sweep)} |"]
    base = st.rollover_variants[f"from rest, Δt {DT}"][0]
    cells = [base, *st.cg_sweep.values()]
    sweep.append("| rolls over (t) | " + " | ".join(
        f"yes ({m.t_rollover:.2f} s)" if m.rolled_over else "no" for m in cells) + " |")
    sweep.append("| max tilt before rollover | " + " | ".join(f"{m.max_tilt:.1f}°" for m in cells) + " |")
    settings = figures_table([
        ("machine", machine_info()),
        (f"model curve (μ = {MU_LOW}, α = 0): peak f_x/f_z driving (at s) / braking (at s)",
         f"{crit['peak_drive']:.3f} ({crit['s_drive']:+.2f}) / {crit['peak_brake']:.3f} ({crit['s_brake']:+.2f})")],
        ("setting", "value"))
    return "\n".join([
        BEGIN, settings, "",
        "Loss of traction (accelerating 1–3 s, braking 3–5 s):", "", *trac, "",
        "Yaw stability in the turning test:", "", *yaw_rows, "",
        "Rollover (5 m/s, 7 rad/s from t = 1 s):", "", *roll, "",
        *(["Body cg height sweep (from rest, Δt 0.04 s):", "", *sweep, ""] if st.cg_sweep else []),
        END,
    ])


WHEEL_COLORS = ["C0", "C1", "C2", "C3", "C4", "C5"]


def plot_all(st: Study, out: Path = FIGURES) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    names = st.model.wheel_names
    paths = []
    crit = critical_slip(MU_LOW)

    # Fig. 2.16: f_x/f_z and slip ratio vs time, straight
    r = st.straight
    nx, _ = normalized_force(r)
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    for w in range(6):
        ax[0].plot(r.t[:-1], nx[:-1, w], color=WHEEL_COLORS[w], lw=1.2, label=names[w])
        ax[1].plot(r.t[:-1], r.slip_ratio[:-1, w], color=WHEEL_COLORS[w], lw=1.2, label=names[w])
    for v in (crit["peak_drive"], crit["peak_brake"]):
        ax[0].axhline(v, color="k", ls=":", lw=0.8)
    for v in (crit["s_drive"], crit["s_brake"]):
        ax[1].axhline(v, color="k", ls=":", lw=0.8)
    ax[0].set(xlabel="time (s)", ylabel="f_x / f_z",
              title=f"normalized longitudinal force (μ = {MU_LOW}; dotted: peak)")
    ax[1].set(xlabel="time (s)", ylabel="slip ratio", title="slip ratio (dotted: critical slip)")
    for a in ax:
        a.grid(alpha=0.3)
        a.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    paths.append(out / "traction_straight.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    # Figs. 2.17 and 2.19: f_x/f_z vs slip, with the model's curves
    s = np.linspace(-0.999, 0.999, 800)
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    ax[0].plot(s, model_curve(MU_LOW, s), "k-", lw=1, label="model, α = 0")
    for w in range(6):
        ax[0].plot(r.slip_ratio[:-1, w], nx[:-1, w], "o", ms=3, color=WHEEL_COLORS[w], label=names[w])
    ax[0].set(xlabel="slip ratio", ylabel="f_x / f_z", title="straight: simulation (dots) on the model curve")
    rt = st.turning
    nxt, _ = normalized_force(rt)
    for a_ in (0.0, 0.25, 0.5, 1.0):
        ax[1].plot(s, model_curve(MU_LOW, s, a_), lw=1, color=plt.cm.viridis(a_ / 1.2), label=f"model, |α| = {a_:g}")
    sc = ax[1].scatter(rt.slip_ratio[:-1].ravel(), nxt[:-1].ravel(), c=np.abs(rt.slip_angle[:-1]).ravel(), s=8,
                       cmap="viridis", vmin=0.0, vmax=1.2)
    fig.colorbar(sc, ax=ax[1], label="|slip angle| (rad)")
    ax[1].set(xlabel="slip ratio", ylabel="f_x / f_z", title="turning: f_x/f_z falls as |slip angle| grows")
    for a in ax:
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    paths.append(out / "traction_force_slip.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    # Fig. 2.18: the turning test: path, yaw rate, sideslip
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.5))
    for res, lab, col in ((st.turning, f"{V_HIGH:g} m/s + {TURN_RATE:g} rad/s", "C0"),
                          (st.slow_turn, f"{V_LOW:g} m/s + {TURN_RATE:g} rad/s", "C1")):
        yaw = res.rpy()[:, 2]
        ax[0].plot(res.q[:, 4], res.q[:, 5], color=col, label=lab)
        for k in range(0, len(res.t), 10):
            ax[0].arrow(res.q[k, 4], res.q[k, 5], 0.6 * np.cos(yaw[k]), 0.6 * np.sin(yaw[k]), color=col,
                        head_width=0.15, lw=0.6)
        ax[1].plot(res.t, res.qvel[:, 2], color=col, label=f"yaw rate, {lab}")
        beta = np.degrees(np.arctan2(res.qvel[:, 4], res.qvel[:, 3]))
        beta[np.hypot(res.qvel[:, 3], res.qvel[:, 4]) < 0.2] = np.nan
        ax[2].plot(res.t, beta, color=col, label=lab)
    cmd = np.array([traction_command(TURN_RATE)(t)[1] for t in st.turning.t])
    ax[1].plot(st.turning.t, cmd, "k--", lw=1, label="command")
    ax[0].set(xlabel="x (m)", ylabel="y (m)", title="body path, heading every 0.4 s", aspect="equal")
    ax[1].set(xlabel="time (s)", ylabel="yaw rate (rad/s)", title="yaw rate vs. command")
    ax[2].set(xlabel="time (s)", ylabel="sideslip β (°)", title="body sideslip angle atan2(v_y, v_x)")
    for a in ax:
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    paths.append(out / "traction_turning.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    # Fig. 2.21: normal forces vs time
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for a, res, title in ((ax[0], st.base, "body cg 0.83 m (baseline)"), (ax[1], st.raised, f"body cg {CG_RAISED} m")):
        c = upright(res)
        k_end = int(np.argmax(c < 0.0)) if np.any(c < 0.0) else len(res.t) - 1
        show = min(len(res.t) - 1, k_end + int(round(0.3 / DT)))
        for w in range(6):
            a.plot(res.t[:show], res.contact_force[:show, w, 2], color=WHEEL_COLORS[w], lw=1.2, label=names[w])
        if k_end < len(res.t) - 1:
            a.axvspan(res.t[k_end], res.t[show], color="0.85", label="rolled over (not physical after)")
        a.axvline(ROLL_TURN_AT, color="k", ls=":", lw=0.8)
        a.set(xlabel="time (s)", title=title)
        a.grid(alpha=0.3)
        a.legend(fontsize=8, ncol=2)
    ax[0].set_ylabel("normal force f_z (N)")
    fig.tight_layout()
    paths.append(out / "rollover_normal_forces.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    # Fig. 2.20: body path (blue) and contact point traces (red, broken at liftoff); roll angle
    fig, ax = plt.subplots(1, 3, figsize=(16, 5))
    for a, res, title in ((ax[0], st.base, "body cg 0.83 m"), (ax[1], st.raised, f"body cg {CG_RAISED} m")):
        c = upright(res)
        k_end = int(np.argmax(c < 0.0)) if np.any(c < 0.0) else len(res.t) - 1
        a.plot(res.q[:k_end + 1, 4], res.q[:k_end + 1, 5], "b-", lw=1.5, label="body frame")
        for w in range(6):
            p = res.contact_points[:k_end + 1, w, :2].copy()
            p[res.contact_force[:k_end + 1, w, 2] <= 0.0] = np.nan
            a.plot(p[:, 0], p[:, 1], "r-", lw=0.7, label="contact points (gaps: liftoff)" if w == 0 else None)
        a.set(xlabel="x (m)", ylabel="y (m)", title=title + (" (until rollover)" if k_end < len(res.t) - 1 else ""),
              aspect="equal")
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    for res, lab, col in ((st.base, "cg 0.83 m", "C0"), (st.raised, f"cg {CG_RAISED} m", "C3")):
        c = upright(res)
        k_end = int(np.argmax(c < 0.0)) if np.any(c < 0.0) else len(res.t) - 1
        tilt = np.degrees(np.arccos(np.clip(c, -1.0, 1.0)))
        ax[2].plot(res.t[:k_end + 1], tilt[:k_end + 1], color=col, label=lab)
    ax[2].axhline(90.0, color="k", ls=":", lw=0.8)
    ax[2].set(xlabel="time (s)", ylabel="tilt from upright (°)", title="body tilt (90°: on its side)")
    ax[2].grid(alpha=0.3)
    ax[2].legend(fontsize=8)
    fig.tight_layout()
    paths.append(out / "rollover_paths.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the main runs only; write nothing")
    ap.add_argument("--no-write", action="store_true", help="run everything but write no files")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    log(f"LandTamer extreme phenomena (thesis §2.5.3) on {machine_info()}")
    st = run_study(quick=args.quick)
    print_summary(st)
    log(f"total {time.perf_counter() - start:.0f} s")
    if args.quick:
        return 0
    if args.no_write:
        print(results_markdown(st))
        return 0
    paths = plot_all(st)
    write_block(results_markdown(st), BEGIN, END, DOC)
    log("wrote " + ", ".join(str(p.relative_to(REPO)) for p in paths) + f" and the generated block of "
        f"{DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
