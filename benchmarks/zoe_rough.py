#!/usr/bin/env python3
"""Thesis Tables 2.6–2.7 (§2.5.4): the Zoë rover benchmark on the ten rough terrains — step-size accuracy.

Zoë is commanded straight at 0.5 m/s for 10 s (VEHICLES.md, "speed benchmark") on each of the ten rough
terrains of the thesis author's library (``rough_terrains/zoe_rough_{1..10}.txt``: RMS height ≈ 0.15 m,
correlation length ≈ 0.8 m), from the YAML's initial pose (x = y = 0, yaw 0, body height r + 0.119 − 0.01
before the §2.2.4 contact initialization).  The dynamic runs start already moving at the command (body
v_x = v, wheels at v / r), as the thesis author's own Zoë demo initializes its velocity state to the command:
the study measures the step size's effect on driving over rough ground; a launch from rest with ideal
actuators (wheel slip ≈ 1 for the first tenths of a second) is a different transient, shown in a supplement.
Both passive steering joints are held straight, as in the
benchmark (VEHICLES.md): the benchmark model adds two rigid joint constraints θ_s1 = θ_s2 = 0 to the bundled
Zoë (its steer joints are passive and unconstrained); the controller drives all four wheels at v / r
(``BodyVelocityController(model, "naive")``); actuators are ideal (wheel rates = commands, §2.4.4).

Models, each at Δt = 0.01, 0.02, 0.04, 0.10 s:

- **linear**: dynamic, piecewise-linear ("uniform") contact of VEHICLES.md;
- **pacejka**: dynamic, Pacejka/Nicolas–Comstock contact (Table C.1, μ = 1);
- **ishigami**: dynamic, Ishigami terramechanics contact by direct stress integration (Table C.2 soil);
- **ishigami_lut**: the same with the precomputed lookup table (the thesis's "terramechanics-based"
  column used a lookup table);
- **kinematic**: the stabilized-DAE kinematic model (σ = 1/Δt).

Reported per model and Δt, averaged over the terrains: final position error (3D Euclidean) and |yaw|
error relative to the same model at Δt = 0.01 s on the same terrain (thesis Table 2.7), the mean number
of force-balance (Newton) iterations per step, and the loop wall time (speed: benchmarks/speed.py).
Supplements (full run only): the same with the steering joints left passive, and at the thesis text's
1 m/s (10 m).

The scenario (model, terrains, start, one run, the Table 2.7 errors) is :mod:`wmr_dynamics.scenarios.zoe_rough`;
this script runs the study and writes its report.

Usage::

    python benchmarks/zoe_rough.py             # 10 terrains: tables of docs/zoe_rough.md, docs/figures/zoe_paths.png
    python benchmarks/zoe_rough.py --quick     # 3 terrains, Δt 0.01/0.04/0.10, no supplements

The report is tables only, in the ``<!-- BEGIN zoe_rough NAME -->`` sections of docs/zoe_rough.md
(``_report.update_section``); the text around them is hand-written and refers to their figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from wmr_dynamics.model import WmrModel
from wmr_dynamics.scenarios.zoe_rough import (
    DT_REF,
    DURATION,
    DYNAMIC,
    MODELS,
    SPEED,
    START,
    TERRAIN_DIR,
    TERRAINS,
    Run,
    dynamics_options,
    initial_state,
    load_terrain,
    pose_errors,
    run_one,
    zoe_model,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import figures_table, machine_info, update_section  # noqa: E402  (shared with the other scripts)

ROOT = Path(__file__).resolve().parents[1]
TERRAINS_QUICK = (1, 2, 3)
DTS = (0.01, 0.02, 0.04, 0.10)
DTS_QUICK = (0.01, 0.04, 0.10)
T_SHORT = 4.0  # s: errors also reported at this time
TARGET_POS_ERR = 0.06  # m: the bound on the mean final position error at Δt = 0.10 s

NAMES = {"linear": "piecewise-linear", "pacejka": "Pacejka", "ishigami": "Ishigami (direct)",
         "ishigami_lut": "Ishigami (LUT)", "kinematic": "kinematic"}
THESIS_COLUMN = {"linear": "linear", "pacejka": "pacejka", "ishigami": "terra", "ishigami_lut": "terra",
                 "kinematic": "kinematic"}

# Thesis Table 2.7: (column, dt) -> (pos. err. m, yaw err. rad, iterations per step); 10 terrains, 1 m/s.
THESIS_T27 = {
    ("linear", 0.01): (None, None, 0.9990), ("linear", 0.02): (0.0039, 0.0003, 0.9980),
    ("linear", 0.04): (0.0126, 0.0009, 0.9960), ("linear", 0.10): (0.0401, 0.0039, 0.9901),
    ("pacejka", 0.01): (None, None, 1.7364), ("pacejka", 0.02): (0.0037, 0.0006, 1.8663),
    ("pacejka", 0.04): (0.0109, 0.0014, 2.0100), ("pacejka", 0.10): (0.0292, 0.0038, 2.3624),
    ("terra", 0.01): (None, None, 1.4118), ("terra", 0.02): (0.0085, 0.0020, 1.6525),
    ("terra", 0.04): (0.0226, 0.0043, 1.9657), ("terra", 0.10): (0.0513, 0.0128, 2.3149),
}
# Thesis Table 2.6: normalized computation time (wall / simulated time, × 1e-3), C++ on a 3.4 GHz Intel desktop.
THESIS_T26 = {
    "kinematic": {0.01: 0.9840, 0.02: 0.4690, 0.04: 0.2190, 0.10: 0.0780},
    "erp/cfm": {0.01: 1.7990, 0.02: 0.9040, 0.04: 0.4540, 0.10: 0.1910},
    "linear": {0.01: 3.1380, 0.02: 1.5620, 0.04: 0.7800, 0.10: 0.3120},
    "pacejka": {0.01: 4.3660, 0.02: 2.2030, 0.04: 1.1410, 0.10: 0.5000},
    "terra": {0.01: 3.6090, 0.02: 1.8740, 0.04: 0.9530, 0.10: 0.3600},
    "OpenDE": {0.01: 2.9060, 0.02: 1.4380, 0.04: 0.7340, 0.10: 0.2960},
}


# ---- set-up and single runs: wmr_dynamics.scenarios.zoe_rough ---------------------------------------------

# ---- the study --------------------------------------------------------------------------------------------
def _log(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def warm_up(model: WmrModel, kinds: Sequence[str] = MODELS, terrain_dir: Path | None = None) -> None:
    """Compile / load the numba kernels of every model (a short run each), so no timing includes it."""
    terrain = load_terrain(1, terrain_dir)
    q0 = initial_state(model, terrain)
    for kind in kinds:
        run_one(model, terrain, kind, 0.04, q0, duration=0.2)


def run_study(terrains: Sequence[int], dts: Sequence[float] = DTS, kinds: Sequence[str] = MODELS,
              supplements: bool = True, terrain_dir: Path | None = None, quiet: bool = False) -> list[Run]:
    """Every model at every step on every terrain (dts must include DT_REF), plus the supplements."""
    if DT_REF not in dts:
        raise ValueError(f"dts must include the reference step {DT_REF} s")
    model = zoe_model()
    _log("warming up (numba kernels) ...", quiet)
    warm_up(model, kinds, terrain_dir)
    # one options object per dynamic model (the Ishigami table is built once)
    opts = {k: dynamics_options(model, k) for k in kinds if k in DYNAMIC}
    jobs: list[tuple[WmrModel, str, float, float, str, str]] = [(model, k, dt, SPEED, "", START) for k in kinds
                                                                for dt in dts]
    if supplements:
        passive = zoe_model(lock_steer=False)
        jobs += [(passive, k, dt, SPEED, "passive", START) for k in ("linear", "pacejka") if k in kinds
                 for dt in (DT_REF, 0.10)]
        jobs += [(model, k, dt, 1.0, "1mps", START) for k in ("linear", "pacejka", "ishigami_lut") if k in kinds
                 for dt in (DT_REF, 0.04, 0.10)]
        jobs += [(model, k, dt, 1.0, "1mps-rest", "rest") for k in ("linear", "pacejka", "ishigami_lut") if k in kinds
                 for dt in (DT_REF, 0.10)]
    runs: list[Run] = []
    start = time.perf_counter()
    for i, tid in enumerate(terrains):
        terrain = load_terrain(tid, terrain_dir)
        q0 = {id(model): initial_state(model, terrain)}
        for m, kind, dt, speed, variant, start_from in jobs:
            q0.setdefault(id(m), initial_state(m, terrain))
            o = opts.get(kind) if m is model else None
            run = run_one(m, terrain, kind, dt, q0[id(m)], terrain_id=tid, speed=speed, options=o, variant=variant,
                          start=start_from)
            runs.append(run)
            _log(f"  terrain {tid} ({i + 1}/{len(terrains)})  {NAMES[kind]:>17s} {variant:>7s}  dt={dt:.2f}  "
                 f"final x={run.q[-1, 4]:.3f} y={run.q[-1, 5]:+.3f}  iter/step={run.mean_iterations:.3f}  "
                 f"loop {run.wall_s:.2f} s  ({time.perf_counter() - start:.0f} s elapsed)", quiet)
    return runs


@dataclasses.dataclass
class Row:
    """Statistics over terrains for one (model, variant, dt)."""

    kind: str
    variant: str
    dt: float
    n: int
    pos_err: float | None
    pos_sd: float | None
    pos_max: float | None
    yaw_err: float | None
    yaw_sd: float | None
    pos_err_short: float | None  # position error at T_SHORT (mean, max over terrains)
    pos_max_short: float | None
    iterations: float
    max_iterations: float  # the most iterations any step needed
    us_per_step: float
    final_abs_y: float
    capped: int = 0  # steps (all terrains) whose Newton iteration reached the limit (then retaken as sub-steps)
    pos_max_terrain: int | None = None  # the terrain of the largest position error
    pos_median: float | None = None
    capped_t_max: float | None = None  # s: the latest time of a step that reached the iteration limit
    unconverged: int = 0  # steps (all terrains) that missed the force-balance tolerance in the end

    @property
    def real_time_factor(self) -> float:
        return self.dt / (1e-6 * self.us_per_step)


def _sd(x: Sequence[float]) -> float | None:
    """Terrain-to-terrain sample standard deviation (None for fewer than two)."""
    return float(np.std(x, ddof=1)) if len(x) > 1 else None


def summarize(runs: Sequence[Run]) -> list[Row]:
    """Rows per (variant, model, dt): errors relative to the same model and variant at DT_REF."""
    ref = {(r.kind, r.variant, r.terrain): r for r in runs if r.dt == DT_REF}
    rows = []
    for variant in dict.fromkeys(r.variant for r in runs):
        for kind in MODELS:
            for dt in sorted({r.dt for r in runs if r.kind == kind and r.variant == variant}):
                group = [r for r in runs if r.kind == kind and r.variant == variant and r.dt == dt]
                is_ref = dt == DT_REF
                pos, yaw, short, tids = [], [], [], []
                for r in group:
                    base = ref.get((kind, variant, r.terrain))
                    if base is None or is_ref:
                        continue
                    p, y = pose_errors(r, base)
                    pos.append(p)
                    yaw.append(y)
                    tids.append(r.terrain)
                    if r.t[-1] >= T_SHORT - 1e-9:
                        short.append(pose_errors(r, base, T_SHORT)[0])
                ok = len(pos) == len(group) and pos
                its = np.concatenate([r.iterations for r in group])
                rows.append(Row(kind, variant, dt, len(group),
                                float(np.mean(pos)) if ok else None, _sd(pos) if ok else None,
                                float(np.max(pos)) if ok else None,
                                float(np.mean(yaw)) if ok else None, _sd(yaw) if ok else None,
                                float(np.mean(short)) if ok and short else None,
                                float(np.max(short)) if ok and short else None,
                                float(its.mean()) if its.size else float("nan"),
                                float(its.max()) if its.size else float("nan"),
                                1e6 * sum(r.wall_s for r in group) / sum(r.steps for r in group),
                                float(np.mean([abs(r.q[-1, 5] - r.q[0, 5]) for r in group])),
                                int(sum(np.count_nonzero(r.iterations >= r.max_iterations) for r in group
                                        if r.max_iterations)),
                                tids[int(np.argmax(pos))] if ok else None,
                                float(np.median(pos)) if ok else None,
                                max((float(r.t[np.flatnonzero(r.iterations >= r.max_iterations)].max())
                                     for r in group if r.max_iterations and np.any(r.iterations >= r.max_iterations)),
                                    default=None),
                                sum(r.unconverged for r in group)))
    return rows


def find(rows: Sequence[Row], kind: str, dt: float, variant: str = "") -> Row | None:
    return next((r for r in rows if r.kind == kind and r.variant == variant and abs(r.dt - dt) < 1e-12), None)


def _f(x: float | None, fmt: str = ".4f") -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, fmt)


def _pm(x: float | None, sd: float | None, fmt: str = ".4f") -> str:
    return _f(x, fmt) if x is None or sd is None else f"{x:{fmt}} ± {sd:{fmt}}"


def _render(head: list[str], body: list[list[str]], markdown: bool) -> str:
    if markdown:
        esc = [[c.replace("|", "\\|") for c in row] for row in [head, *body]]
        lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in esc[1:]]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[c]) for row in body)) if body else len(h) for c, h in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*row) for row in body])


def format_table(rows: Sequence[Row], variant: str = "", markdown: bool = False) -> str:
    """Table 2.7 layout, one row per (model, Δt), the thesis's values alongside."""
    head = ["model", "dt (s)", "pos. err. (m)", "max (m, terrain)", "yaw err. (rad)", "iter/step", "max iter",
            "at limit / unconv.", f"pos. err. at {T_SHORT:g} s (max)", "µs/step", "thesis pos.", "thesis yaw",
            "thesis iter"]
    body = []
    for r in rows:
        if r.variant != variant:
            continue
        th = THESIS_T27.get((THESIS_COLUMN[r.kind], round(r.dt, 2)), (None,) * 3)
        worst = "–" if r.pos_max is None else f"{r.pos_max:.4f} ({r.pos_max_terrain})"
        body.append([NAMES[r.kind], f"{r.dt:.2f}", _pm(r.pos_err, r.pos_sd), worst, _pm(r.yaw_err, r.yaw_sd),
                     _f(r.iterations, ".3f"), _f(r.max_iterations, ".0f"),
                     "–" if r.kind == "kinematic" else f"{r.capped} / {r.unconverged}",
                     "–" if r.pos_err_short is None else f"{r.pos_err_short:.4f} ({r.pos_max_short:.4f})",
                     f"{r.us_per_step:.0f}", _f(th[0]), _f(th[1]), _f(th[2])])
    return _render(head, body, markdown)


# ---- report -----------------------------------------------------------------------------------------------
def plot_paths(runs: Sequence[Run], path: Path, terrain_dir: Path | None = None) -> None:
    """Overhead body paths on each terrain: every model at Δt = 0.01 (solid) and 0.10 (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    main = [r for r in runs if r.variant == ""]
    tids = sorted({r.terrain for r in main})
    ncol = 2 if len(tids) > 1 else 1
    nrow = int(np.ceil(len(tids) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.2 * ncol, 2.7 * nrow + 0.8), squeeze=False,
                             layout="constrained")
    colors = {"linear": "C0", "pacejka": "C1", "ishigami": "C2", "ishigami_lut": "C4", "kinematic": "k"}
    x0, x1, y0, y1 = -1.2, 6.2, -1.3, 1.3
    im = None
    for ax, tid in zip(axes.ravel(), tids, strict=False):
        terrain = load_terrain(tid, terrain_dir)
        xs, ys = np.linspace(x0, x1, 300), np.linspace(y0, y1, 110)
        im = ax.imshow(terrain.height(xs[None, :], ys[:, None]), origin="lower", extent=(x0, x1, y0, y1),
                       cmap="gray", alpha=0.6, aspect="equal", vmin=-0.45, vmax=0.45)
        for kind in MODELS:
            for dt, ls in ((DT_REF, "-"), (0.10, "--")):
                r = next((r for r in main if r.terrain == tid and r.kind == kind and abs(r.dt - dt) < 1e-12), None)
                if r is not None:
                    ax.plot(r.q[:, 4], r.q[:, 5], ls=ls, color=colors[kind], lw=1.3 if ls == "-" else 1.0,
                            label=f"{NAMES[kind]}, Δt {dt:g} s")
        ax.plot([0.0, SPEED * DURATION], [0.0, 0.0], ":", color="w", lw=0.8)
        ax.set_title(f"zoe_rough_{tid}", fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(tids):]:
        ax.set_visible(False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=5, fontsize=7)
    if im is not None:
        fig.colorbar(im, ax=axes, shrink=0.3, label="terrain height (m)")
    fig.suptitle(f"Zoë, {SPEED} m/s straight for {DURATION:g} s, steering held straight: body paths (x, y in m; "
                 "start at the origin, white dotted: the commanded line)", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


GROWTH_TIMES = (0.5, 1.0, 2.0, 4.0, 7.0, 10.0)  # s


def error_growth(runs: Sequence[Run], kind: str, dt: float, variant: str = "",
                 times: Sequence[float] = GROWTH_TIMES) -> dict[float, float]:
    """Mean position error (m) over terrains of (kind, dt) vs the same model at DT_REF, at each time."""
    ref = {r.terrain: r for r in runs if r.kind == kind and r.variant == variant and r.dt == DT_REF}
    group = [r for r in runs if r.kind == kind and r.variant == variant and abs(r.dt - dt) < 1e-12
             and r.terrain in ref]
    out = {}
    for t in times:
        errs = [pose_errors(r, ref[r.terrain], t)[0] for r in group if r.t[-1] >= t - 1e-9]
        if errs:
            out[t] = float(np.mean(errs))
    return out


def format_growth(runs: Sequence[Run], dt: float = 0.10, variant: str = "", markdown: bool = False) -> str:
    kinds = [k for k in MODELS if any(r.kind == k and r.variant == variant and abs(r.dt - dt) < 1e-12 for r in runs)]
    growth = {k: error_growth(runs, k, dt, variant) for k in kinds}
    times = sorted({t for g in growth.values() for t in g})
    head = ["model"] + [f"t = {t:g} s" for t in times]
    body = [[NAMES[k]] + [_f(growth[k].get(t)) for t in times] for k in kinds]
    return _render(head, body, markdown)


def _final_abs_y(runs: Sequence[Run], kind: str, terrain: int | None, variant: str = "") -> float:
    r = next((r for r in runs if r.kind == kind and r.terrain == terrain and r.variant == variant and r.dt == DT_REF),
             None)
    return float("nan") if r is None else abs(float(r.q[-1, 5] - r.q[0, 5]))


def _ratio_1mps(rows: Sequence[Row]) -> str:
    """Ours / thesis at 1 m/s, Δt = 0.10, over linear, Pacejka, Ishigami (LUT): 'a–b× on the mean, c–d× on the
    median over terrains' ('' without the 1 m/s runs)."""
    r = [(find(rows, k, 0.10, "1mps"), THESIS_T27[(THESIS_COLUMN[k], 0.10)][0])
         for k in ("linear", "pacejka", "ishigami_lut")]
    r = [(row.pos_err / th, row.pos_median / th) for row, th in r if row is not None and row.pos_err is not None]
    if not r:
        return ""
    return (f"{min(a for a, _ in r):.1f}–{max(a for a, _ in r):.1f}× on the mean, "
            f"{min(b for _, b in r):.1f}–{max(b for _, b in r):.1f}× on the median")


def _iteration_excess(rows: Sequence[Row]) -> str:
    """Range of (ours − thesis) mean iterations per step over the nonlinear models and step sizes."""
    diffs = [find(rows, k, dt).iterations - THESIS_T27[(THESIS_COLUMN[k], dt)][2]
             for k in ("pacejka", "ishigami_lut") for dt in DTS
             if find(rows, k, dt) and (THESIS_COLUMN[k], dt) in THESIS_T27]
    return f"{min(diffs):.1f}–{max(diffs):.1f}" if diffs else "?"


def contact_eval_us(kind: str, repeat: int = 2000) -> float:
    """µs per call of the contact model's ``evaluate`` (4 wheels, forces and Jacobians) at a typical state."""
    model = zoe_model()
    c = dynamics_options(model, kind).contact
    v = np.tile([-0.01, 0.005, -0.001], (4, 1))
    rw, dz = np.full(4, 0.5), np.full(4, -0.03)
    c.evaluate(v, rw, dz)
    t0 = time.perf_counter()
    for _ in range(repeat):
        c.evaluate(v, rw, dz)
    return 1e6 * (time.perf_counter() - t0) / repeat


def discussion_figures(rows: Sequence[Row], runs: Sequence[Run]) -> list[tuple[str, str]]:
    """The derived figures the hand-written discussion of docs/zoe_rough.md refers to (the rest are in the
    tables)."""
    out: list[tuple[str, str]] = []
    fast = {k: find(rows, k, 0.10, "1mps") for k in DYNAMIC}
    at_1mps = [k for k in DYNAMIC if fast.get(k) and fast[k].pos_err is not None]
    if at_1mps:  # the bound is stated for the thesis's 1 m/s (10 m driven)
        ok = all(fast[k].pos_err <= TARGET_POS_ERR for k in at_1mps)
        out.append((f"issue target at 1 m/s: mean final position error ≤ {TARGET_POS_ERR} m at Δt = 0.10 s",
                    "**met**" if ok else "**NOT met**"))
        if ratio := _ratio_1mps(rows):
            out.append(("1 m/s, Δt 0.10: our position error / the thesis's (linear, Pacejka, Ishigami LUT)", ratio))
    g = {k: error_growth(runs, k, 0.10) for k in DYNAMIC}
    have = [k for k in DYNAMIC if g.get(k) and 1.0 in g[k] and 10.0 in g[k]]
    if have:
        flat = [NAMES[k] for k in have if g[k][10.0] <= 1.25 * g[k][1.0]]
        out += [("error of the Δt 0.10 runs about constant after 1 s (at 10 s ≤ 1.25× at 1 s)",
                 ", ".join(flat) or "none"),
                ("error still growing after 1 s", ", ".join(NAMES[k] for k in have if NAMES[k] not in flat) or "none")]
    if find(rows, "linear", DT_REF) and find(rows, "pacejka", DT_REF):
        capped = {(k, dt): find(rows, k, dt).capped for k in DYNAMIC for dt in DTS if find(rows, k, dt)}
        t_cap = max((r.capped_t_max for r in rows if r.capped_t_max is not None and r.variant == ""), default=None)
        out += [("nonlinear models: our iterations per step − the thesis's", _iteration_excess(rows)),
                ("steps at the 20-iteration limit (benchmark runs): all (Ishigami direct, LUT); latest at t (s)",
                 f"{sum(capped.values())} ({sum(v for (k, _), v in capped.items() if k == 'ishigami')}, "
                 f"{sum(v for (k, _), v in capped.items() if k == 'ishigami_lut')}); "
                 + ("–" if t_cap is None else f"{t_cap:.2f}")),
                ("steps unconverged after the half steps (benchmark runs)",
                 f"{sum(r.unconverged for r in rows if r.variant == '')}")]
    if all(find(rows, k, 0.10) for k in ("ishigami", "ishigami_lut")):
        cost = {k: contact_eval_us(k) for k in ("ishigami", "ishigami_lut")}
        i1 = find(rows, "ishigami", DT_REF)
        out.append(("one 4-wheel Ishigami evaluation with Jacobian from Python, LUT / direct (µs); LUT saving per "
                    "step (µs)", f"{cost['ishigami_lut']:.0f} / {cost['ishigami']:.0f}; "
                    + (f"~{(1 + 2 * i1.iterations) * (cost['ishigami'] - cost['ishigami_lut']):.0f}" if i1 else "–")))
    rest = {k: find(rows, k, 0.10, "1mps-rest") for k in DYNAMIC}
    have_rest = [k for k in DYNAMIC if rest.get(k) and rest[k].pos_err is not None]
    if have_rest:
        worst = max(have_rest, key=lambda k: rest[k].pos_max)
        w = rest[worst]
        out += [("from rest, 1 m/s, Δt 0.10: median position error over terrains (m)",
                 ", ".join(f"{NAMES[k]} {rest[k].pos_median:.4f}" for k in have_rest)),
                ("from rest: largest error (model, terrain, m); its lateral end offset at Δt = 0.01 (m)",
                 f"{NAMES[worst]}, {w.pos_max_terrain}, {w.pos_max:.3f}; "
                 f"{_final_abs_y(runs, worst, w.pos_max_terrain, '1mps-rest'):.2f}")]
    return out


SUPPLEMENTS = (("1mps", "1 m/s"), ("1mps-rest", "1 m/s from rest"), ("passive", "steering passive"))


def report_sections(rows: Sequence[Row], runs: Sequence[Run], terrains: Sequence[int], elapsed: float
                    ) -> dict[str, str]:
    """The generated sections of docs/zoe_rough.md (tables only; the page's hand-written text explains them)."""
    info = machine_info()
    out = {"setup": figures_table([
        ("terrains", f"`zoe_rough_{{{','.join(map(str, terrains))}}}.txt`"),
        ("speed, duration", f"{SPEED} m/s, {DURATION:g} s"),
        ("machine", f"{info['cpu']}; " + ", ".join(f"{k} {v}" for k, v in info.items() if k != "cpu")),
        ("whole study (s)", f"{elapsed:.0f}")], ("setting", "value")),
        "results": format_table(rows, "", markdown=True),
        "discussion": figures_table(discussion_figures(rows, runs)),
        "growth": format_growth(runs, 0.10, "", markdown=True)}
    for variant, _ in SUPPLEMENTS:
        if any(r.variant == variant for r in rows):
            out[variant] = format_table(rows, variant, markdown=True)
    return out


def write_markdown(path: Path, sections: dict[str, str]) -> None:
    """Update the generated sections of ``path`` (docs/zoe_rough.md); its hand-written text stays as it is."""
    for name, text in sections.items():
        update_section(path, f"zoe_rough {name}", text)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="3 terrains, Δt 0.01/0.04/0.10, no supplements")
    p.add_argument("--terrains", type=int, nargs="+", help="terrain numbers (1..10), default all ten")
    p.add_argument("--models", nargs="+", choices=MODELS, help="models to run (default all)")
    p.add_argument("--no-supplements", action="store_true", help="skip the passive-steer and 1 m/s runs")
    p.add_argument("--terrain-dir", type=Path, default=None, help=f"default {TERRAIN_DIR}")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for zoe_rough.md and figures/ (default docs/; with --quick out/zoe_quick/)")
    p.add_argument("--no-write", action="store_true", help="print the table only; write no files")
    p.add_argument("--runs-file", type=Path, default=None,
                   help="where the runs are pickled after a study (default out/zoe_rough_runs.pkl; with --quick "
                        "out/zoe_quick/runs.pkl)")
    p.add_argument("--from-runs", action="store_true",
                   help="do not simulate: re-make the tables and docs from --runs-file (after editing this script)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    a = p.parse_args(argv)
    terrains = a.terrains or (TERRAINS_QUICK if a.quick else TERRAINS)
    dts = DTS_QUICK if a.quick else DTS
    kinds = a.models or MODELS
    t0 = time.perf_counter()
    runs_file = a.runs_file or ROOT / "out" / ("zoe_quick/runs.pkl" if a.quick else "zoe_rough_runs.pkl")
    if a.from_runs:
        with runs_file.open("rb") as f:
            saved = pickle.load(f)
        runs, elapsed = saved["runs"], saved["elapsed"]
        terrains = sorted({r.terrain for r in runs})
    else:
        runs = run_study(terrains, dts, kinds, supplements=not (a.quick or a.no_supplements),
                         terrain_dir=a.terrain_dir, quiet=a.quiet)
        elapsed = time.perf_counter() - t0
        runs_file.parent.mkdir(parents=True, exist_ok=True)
        with runs_file.open("wb") as f:
            pickle.dump({"runs": runs, "elapsed": elapsed}, f)
    rows = summarize(runs)
    print(format_table(rows))
    print("\nmean position error of the dt 0.10 runs along the way:\n" + format_growth(runs))
    for variant, title in SUPPLEMENTS:
        if any(r.variant == variant for r in rows):
            print(f"\n{title}:\n" + format_table(rows, variant))
    if not a.no_write:
        out = a.out or (ROOT / "out" / "zoe_quick" if a.quick else ROOT / "docs")
        fig = out / "figures" / "zoe_paths.png"
        plot_paths(runs, fig, a.terrain_dir)
        md = out / "zoe_rough.md"
        write_markdown(md, report_sections(rows, runs, terrains, elapsed))
        _log(f"wrote {md} and {fig}", a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
