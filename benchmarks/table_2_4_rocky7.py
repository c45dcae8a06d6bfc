#!/usr/bin/env python3
"""Thesis Table 2.4 (§2.5.1): stabilized-DAE kinematics vs. the unconstrained method with terrain fitting.

Rocky 7 is commanded to drive straight, open loop, at 0.5 m/s for 10 s with the naive flat-ground
controller (all six wheels at v / r, steering held straight) over random rough terrains (RMS height
0.05 m, correlation length 0.2 m, one seed per terrain).  Two motion predictors:

- **stabilized DAE** (thesis §2.2.5, ours): :class:`wmr_dynamics.simulate.Simulator` in ``kinematic`` mode,
  Baumgarte gain σ = 1/Δt (the library default), at Δt = 0.01 … 0.20 s;
- **unconstrained + terrain fitting** (Tarokh & McDermott): each step integrates the nominal body velocity
  (0.5 m/s along body x, zero angular velocity, body coordinates) for Δt, keeps x, y and yaw, then re-fits
  z, roll, pitch and the passive joints to the terrain by minimizing the contact height errors
  L(x) = Σ Δz² + ‖c‖² (§2.2.4, joint-constraint residuals c included).  Two fits (``--fit``):

  - ``newton``: the library's own §2.2.4 minimization, :func:`wmr_dynamics.kinematics.initialize_contact`
    (Gauss–Newton with a line search), which the thesis itself notes would shrink the speed gap (§2.5.1,
    last paragraph);
  - ``nelder-mead``: the thesis's method, a derivative-free Nelder–Mead search as MATLAB's ``fminsearch``
    (``scipy.optimize.minimize(method="Nelder-Mead")``, the same coefficients and stopping test), over the
    same free states, warm-started from the free-motion pose (the previous step's fitted z, roll, pitch and
    joints, z carried along by the free motion).  Tolerances are chosen so that the fit is as good as the
    Newton fit (``NM_*`` of :mod:`wmr_dynamics.kinematics.terrain_fit`, docs/table_2_4.md); it is slow, so by
    default it runs only at Δt = 0.04 s on the first ``--nm-terrains`` terrains (``--full``: also 0.10 and
    0.20 s).

The scenario (model, terrains, start, the two methods' runs, the collision counter) is
:mod:`wmr_dynamics.scenarios.table_2_4_rocky7`; the baseline's terrain fits are
:mod:`wmr_dynamics.kinematics.terrain_fit`.  This script runs the study and writes its report.

Metrics per method and Δt, averaged over the terrains: mean contact-point speed ‖v_c‖ (m/s), final
position and yaw error relative to the DAE at Δt = 0.01 s on the same terrain, wall time of the stepping
loop, and the number of wheel–terrain collision evaluations (``wheel_contacts`` calls) per step.

A supplementary run repeats the DAE with a fixed σ = 10 s⁻¹ — the Baumgarte time constant ``tc_z = 0.1 s``
of the thesis author's public MATLAB library (wmrde, ``forwardVelKin.m`` / ``rocky.m``) — which exceeds
the stability bound σ ≤ 1/Δt at Δt = 0.2 s; see docs/table_2_4.md.

Usage::

    python benchmarks/table_2_4_rocky7.py              # 10 terrains (Nelder–Mead: 3, dt 0.04): the tables of
                                                       # docs/table_2_4.md + figures (~5–7 min on 2 cores)
    python benchmarks/table_2_4_rocky7.py --quick      # 3 terrains, fewer step sizes, Nelder–Mead on 1
    python benchmarks/table_2_4_rocky7.py --fit newton # the Newton-fit baseline only (~1 min)
    python benchmarks/table_2_4_rocky7.py --full       # Nelder–Mead also at dt 0.10 and 0.20

The report is tables only, in the ``<!-- BEGIN table_2_4 NAME -->`` sections of docs/table_2_4.md
(``_report.update_section``); the text around them is hand-written and refers to their figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.kinematics import actuated_indices, euler_step, evaluate, initialize_contact, solve_velocity
from wmr_dynamics.kinematics.terrain_fit import (
    FITS,
    NM_FATOL,
    NM_MAXFEV_PER_VAR,
    NM_RESTART_L,
    NM_RESTARTS,
    NM_SIMPLEX_STEP,
    NM_XATOL,
    contact_velocities,
    nelder_mead_fit,
)
from wmr_dynamics.model import WmrModel
from wmr_dynamics.scenarios.table_2_4_rocky7 import (
    CORR_LEN,
    DURATION,
    RMS,
    SPEED,
    Run,
    initial_state,
    make_terrain,
    naive_controller,
    nominal_velocity,
    rocky7_model,
    run_dae,
    run_unconstrained,
)
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import HeightGrid

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import figures_table, machine_info, update_section  # noqa: E402  (shared with the other scripts)

DT_DAE = (0.01, 0.02, 0.04, 0.10, 0.20)
DT_UNC = (0.04, 0.10, 0.20)  # the thesis omitted .01 and .02 for the unconstrained method (cost)
DT_DAE_QUICK = (0.01, 0.04, 0.10)
DT_UNC_QUICK = (0.04, 0.10)
DT_REF = 0.01  # reference for the position / yaw errors: DAE at 0.01 s
SIGMA_WMRDE = 10.0  # 1/s, wmrde's tc_z = 0.1 s

# Nelder–Mead terrain fit (the thesis's fminsearch; its settings: wmr_dynamics.kinematics.terrain_fit.NM_*)
DT_UNC_NM = (0.04,)  # default: Nelder–Mead only at 0.04 s (cost); --full adds 0.10 and 0.20
NM_TERRAINS = 3  # default number of terrains (the first seeds) for the Nelder–Mead rows

# Thesis Table 2.4: (method, dt) -> (mean |v_c| m/s, pos err m, yaw err rad, motion time, total time),
# times normalized by the 10 s simulated (MATLAB).
THESIS = {
    ("dae", 0.01): (0.0703, None, None, 0.0438, 0.1655),
    ("dae", 0.02): (0.0708, 0.0136, 0.0073, 0.0217, 0.0823),
    ("dae", 0.04): (0.0721, 0.0412, 0.0268, 0.0109, 0.0413),
    ("dae", 0.10): (0.0830, 0.1286, 0.0703, 0.0044, 0.0166),
    ("dae", 0.20): (0.1650, 0.3004, 0.1554, 0.0023, 0.0085),
    ("unc", 0.04): (0.1158, 0.5199, 0.1367, 1.9639, 1.9952),
    ("unc", 0.10): (0.1188, 0.5199, 0.1367, 1.3569, 1.3692),
    ("unc", 0.20): (0.1246, 0.5200, 0.1367, 1.0541, 1.0604),
}
METHOD_NAMES = {"dae": "stabilized DAE", "unc": "unconstrained, Newton fit", "unc_nm": "unconstrained, Nelder–Mead fit",
                "dae10": "DAE, σ = 10/s", "dae1": "DAE, own loop"}
UNC_METHODS = ("unc", "unc_nm")


# ---- set-up and the two methods: wmr_dynamics.scenarios.table_2_4_rocky7 and .kinematics.terrain_fit -------

def run_dae_fixed_sigma(model: WmrModel, terrain: HeightGrid, dt: float, q0: NDArray, sigma: float,
                        seed: int = -1, method: str = "dae10") -> Run:
    """The same DAE step as the Simulator (evaluate → controller → eq. 2.38 → Euler) with a fixed σ that may
    exceed 1/Δt (the Simulator refuses that), as in wmrde with ``tc_z = 0.1 s``.  No joint limits."""
    ctrl, known = naive_controller(model), actuated_indices(model)
    n = int(round(DURATION / dt))
    Q = np.empty((n + 1, model.num_states))
    VC = np.empty((n, model.num_wheels))
    CP = np.empty((n + 1, model.num_wheels, 3))
    DZ = np.empty((n, model.num_wheels))
    V = np.empty((n, model.num_wheels, 3))
    q = np.asarray(q0, dtype=float)
    start = time.perf_counter()
    for k in range(n):
        Q[k] = q
        ks = evaluate(model, q, terrain)
        sol = solve_velocity(model, ks, known, ctrl(q, ks.T_world, SPEED, 0.0), sigma)
        VC[k], CP[k], DZ[k], V[k] = sol.slip_speed, ks.contacts.points, ks.contacts.dz, sol.v_contact
        q = euler_step(q, sol.qvel, dt)
    wall = time.perf_counter() - start
    Q[n] = q
    CP[n] = evaluate(model, q, terrain).contacts.points
    return Run(method, dt, seed, Q, VC, CP, wall, n, float(np.abs(DZ).mean()),
               float(np.linalg.norm(V[..., :2], axis=2).mean()), float(np.abs(V[..., 2]).mean()))


# ---- the study --------------------------------------------------------------------------------------------
def _log(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def warm_up(model: WmrModel) -> None:
    """Load / compile the numba kernels and touch every code path once, so no timing includes it."""
    terrain = make_terrain(10_000)
    q0 = initial_state(model, terrain)
    sim = Simulator(model, terrain, mode="kinematic", dt=0.1, controller=naive_controller(model))
    sim.run(0.3, (SPEED, 0.0), q0=q0, progress=False)
    q1 = euler_step(q0, nominal_velocity(model, q0), 0.1)
    q = initialize_contact(model, q1, terrain)
    nelder_mead_fit(model, q1, terrain)
    contact_velocities(model, terrain, np.stack([q0, q]), 0.1)


def run_study(seeds: Sequence[int], dt_dae: Sequence[float] = DT_DAE, dt_unc: Sequence[float] = DT_UNC,
              sigma_study: bool = True, joint_limits: bool = False, quiet: bool = False,
              dt_unc_nm: Sequence[float] = DT_UNC_NM, nm_seeds: Sequence[int] | None = None,
              fits: Sequence[str] = FITS) -> list[Run]:
    """All runs on all terrains (DAE at dt_dae, which must include DT_REF; unconstrained with the Newton fit
    at dt_unc; with the Nelder–Mead fit at dt_unc_nm on the terrains nm_seeds, default the first NM_TERRAINS)."""
    if DT_REF not in dt_dae:
        raise ValueError(f"dt_dae must include the reference step {DT_REF} s")
    nm_seeds = list(seeds[:NM_TERRAINS]) if nm_seeds is None else list(nm_seeds)
    if not set(nm_seeds) <= set(seeds):
        raise ValueError("nm_seeds must be a subset of seeds")
    model = rocky7_model(joint_limits)
    _log("warming up (numba kernels) ...", quiet)
    warm_up(model)
    runs: list[Run] = []
    t_start = time.perf_counter()
    for i, seed in enumerate(seeds):
        terrain = make_terrain(seed)
        q0 = initial_state(model, terrain)
        jobs = [("dae", dt) for dt in dt_dae]
        jobs += [("unc", dt) for dt in dt_unc] if "newton" in fits else []
        jobs += [("unc_nm", dt) for dt in dt_unc_nm] if "nelder-mead" in fits and seed in nm_seeds else []
        if sigma_study:
            jobs += [("dae10", dt) for dt in dt_dae] + [("dae1", DT_REF)]
        for method, dt in jobs:
            if method == "dae":
                run = run_dae(model, terrain, dt, q0, seed)
            elif method in UNC_METHODS:
                run = run_unconstrained(model, terrain, dt, q0, seed, "newton" if method == "unc" else "nelder-mead")
            elif method == "dae10":
                run = run_dae_fixed_sigma(model, terrain, dt, q0, SIGMA_WMRDE, seed)
            else:  # the own loop at the Simulator's σ = 1/dt: checks the loop, splits v_c
                run = run_dae_fixed_sigma(model, terrain, dt, q0, 1.0 / dt, seed, method="dae1")
            runs.append(run)
            _log(f"  terrain {i + 1}/{len(seeds)} (seed {seed})  {METHOD_NAMES[method]:>30s}  dt={dt:.2f}  "
                 f"mean|v_c|={run.contact_speed.mean():.4f}  final y={run.q[-1, 5]:+.3f} m  "
                 f"loop {run.wall_s:.2f} s  {run.collisions / run.steps:.1f} coll/step  "
                 f"({time.perf_counter() - t_start:.0f} s elapsed)", quiet)
    return runs


@dataclasses.dataclass
class Row:
    """Averages over terrains for one (method, dt)."""

    method: str
    dt: float
    n: int
    vc: float
    pos_err: float | None
    yaw_err: float | None
    abs_y: float
    wall_s: float
    collisions_per_step: float
    dz_mm: float = float("nan")  # mean |Δz|, mm
    pos_err_alt: float | None = None  # unconstrained only: errors relative to the σ = 10/s DAE at DT_REF
    yaw_err_alt: float | None = None
    vc_sd: float | None = None  # terrain-to-terrain standard deviations (None for a single terrain)
    pos_sd: float | None = None
    yaw_sd: float | None = None
    dz_max_mm: float = float("nan")  # unconstrained: largest |Δz| after any fit (over terrains), mm
    restarts_per_step: float = 0.0  # Nelder–Mead: restarted fits per step

    @property
    def time_norm(self) -> float:
        """Loop wall time divided by the simulated time (< 1 is faster than real time), as in the thesis."""
        return self.wall_s / DURATION


def _wrap(a: float) -> float:
    return float((a + np.pi) % (2 * np.pi) - np.pi)


def summarize(runs: Sequence[Run]) -> list[Row]:
    """Table rows: per (method, dt) averages over terrains; errors relative to the same terrain's reference
    (the DAE at DT_REF; for the σ = 10/s study, that study's own DT_REF run)."""
    ref = {(r.method, r.seed): r for r in runs if r.dt == DT_REF and r.method in ("dae", "dae10")}
    rows = []
    for method in ("dae", "unc", "unc_nm", "dae10"):
        for dt in sorted({r.dt for r in runs if r.method == method}):
            group = [r for r in runs if r.method == method and r.dt == dt]
            pos, yaw, pos_alt, yaw_alt = [], [], [], []
            for r in group:
                base = ref[("dae10" if method == "dae10" else "dae", r.seed)]
                pos.append(np.linalg.norm(r.q[-1, 4:7] - base.q[-1, 4:7]))
                yaw.append(abs(_wrap(r.yaw - base.yaw)))
                alt = ref.get(("dae10", r.seed))
                if method in UNC_METHODS and alt is not None:
                    pos_alt.append(np.linalg.norm(r.q[-1, 4:7] - alt.q[-1, 4:7]))
                    yaw_alt.append(abs(_wrap(r.yaw - alt.yaw)))
            is_ref = method not in UNC_METHODS and dt == DT_REF
            complete = len(pos_alt) == len(group)
            vcs = [r.contact_speed.mean() for r in group]
            sd = (lambda x: float(np.std(x, ddof=1))) if len(group) > 1 else (lambda x: None)
            rows.append(Row(method, dt, len(group), float(np.mean(vcs)),
                            None if is_ref else float(np.mean(pos)), None if is_ref else float(np.mean(yaw)),
                            float(np.mean([abs(r.q[-1, 5] - r.q[0, 5]) for r in group])),
                            float(np.mean([r.wall_s for r in group])),
                            float(np.mean([r.collisions / r.steps for r in group])),
                            1e3 * float(np.mean([r.mean_abs_dz for r in group])),
                            float(np.mean(pos_alt)) if complete else None,
                            float(np.mean(yaw_alt)) if complete else None,
                            sd(vcs), None if is_ref else sd(pos), None if is_ref else sd(yaw),
                            1e3 * float(np.max([r.max_abs_dz for r in group])),
                            float(np.mean([r.restarts / r.steps for r in group]))))
    return rows


@dataclasses.dataclass
class CostRatio:
    """Cost of a terrain-fitting baseline relative to the DAE at the same Δt on the same terrains."""

    method: str
    dt: float
    seeds: list[int]
    wall_ratio: float  # ratio of the mean loop wall times
    eval_ratio: float  # ratio of the collision evaluations per step
    ms_per_step: float  # the baseline's loop wall time per step, ms
    dae_ms_per_step: float
    ms_per_eval: float  # the baseline's loop wall time per collision evaluation, ms


def cost_ratios(runs: Sequence[Run], dt: float | None = None) -> list[CostRatio]:
    """DAE vs each terrain-fitting baseline at dt (default: every Δt a baseline ran); sorted by Δt, then baseline.

    Collision evaluations per step are paired by terrain (the baselines may run on fewer terrains); the DAE's
    loop time per step is its mean over all its terrains at dt."""
    if dt is None:
        return [c for d in sorted({round(r.dt, 6) for r in runs if r.method in UNC_METHODS})
                for c in cost_ratios(runs, d)]
    dae = {r.seed: r for r in runs if r.method == "dae" and abs(r.dt - dt) < 1e-12}
    out = []
    for method in UNC_METHODS:
        group = [r for r in runs if r.method == method and abs(r.dt - dt) < 1e-12 and r.seed in dae]
        if not group:
            continue
        base = [dae[r.seed] for r in group]
        # the DAE's work per step does not depend on the terrain (one evaluation): its wall time is averaged over
        # all its terrains, which damps timing noise (its loop is short); the evaluation counts are paired
        wall_u, wall_d = np.mean([r.wall_s for r in group]), np.mean([r.wall_s for r in dae.values()])
        cps_u = np.mean([r.collisions / r.steps for r in group])
        cps_d = np.mean([r.collisions / r.steps for r in base])
        steps = np.mean([r.steps for r in group])
        out.append(CostRatio(method, dt, [r.seed for r in group], float(wall_u / wall_d), float(cps_u / cps_d),
                             float(1e3 * wall_u / steps), float(1e3 * wall_d / steps),
                             float(1e3 * wall_u / np.mean([r.collisions for r in group]))))
    return out


def _find(rows: Sequence[Row], method: str, dt: float) -> Row | None:
    return next((r for r in rows if r.method == method and abs(r.dt - dt) < 1e-12), None)


def _f(x: float | None, fmt: str = ".4f") -> str:
    return "–" if x is None else format(x, fmt)


def _pm(x: float | None, sd: float | None, fmt: str = ".4f") -> str:
    """mean ± terrain-to-terrain standard deviation."""
    return _f(x, fmt) if x is None or sd is None else f"{x:{fmt}} ± {sd:{fmt}}"


def format_table(rows: Sequence[Row], markdown: bool = False) -> str:
    """Our table next to the thesis's numbers (main methods only)."""
    head = ["method", "dt (s)", "terrains", "mean ‖v_c‖ (m/s)", "pos. err. (m)", "yaw err. (rad)", "final |y| (m)",
            "loop time / 10 s", "collisions / step", "thesis ‖v_c‖", "thesis pos.", "thesis yaw",
            "thesis motion", "thesis total"]
    body = []
    for r in rows:
        if r.method == "dae10":
            continue
        th = THESIS.get(("unc" if r.method in UNC_METHODS else r.method, round(r.dt, 2)), (None,) * 5)
        body.append([METHOD_NAMES[r.method], f"{r.dt:.2f}", str(r.n), _pm(r.vc, r.vc_sd), _pm(r.pos_err, r.pos_sd),
                     _pm(r.yaw_err, r.yaw_sd), _f(r.abs_y),
                     _f(r.time_norm), _f(r.collisions_per_step, ".2f"), _f(th[0]), _f(th[1]), _f(th[2]), _f(th[3]),
                     _f(th[4])])
    return _render(head, body, markdown)


def format_sigma_table(rows: Sequence[Row], markdown: bool = False) -> str:
    head = ["dt (s)", "σ·dt", "mean ‖v_c‖ σ=1/dt", "mean ‖v_c‖ σ=10/s", "thesis ‖v_c‖",
            "pos. err. σ=10/s", "thesis pos.", "yaw err. σ=10/s", "thesis yaw", "mean |Δz| σ=1/dt (mm)",
            "mean |Δz| σ=10/s (mm)"]
    body = []
    for r in rows:
        if r.method != "dae10":
            continue
        base = _find(rows, "dae", r.dt)
        th = THESIS.get(("dae", round(r.dt, 2)), (None,) * 5)
        body.append([f"{r.dt:.2f}", f"{SIGMA_WMRDE * r.dt:.1f}", _f(base.vc if base else None), _f(r.vc), _f(th[0]),
                     _f(r.pos_err), _f(th[1]), _f(r.yaw_err), _f(th[2]), _f(base.dz_mm if base else None, ".2f"),
                     _f(r.dz_mm, ".2f")])
    return _render(head, body, markdown)


def _render(head: list[str], body: list[list[str]], markdown: bool) -> str:
    if markdown:
        esc = [[c.replace("|", "\\|") for c in row] for row in [head, *body]]
        lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in esc[1:]]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[c]) for row in body)) if body else len(h) for c, h in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*row) for row in body])


# ---- report -----------------------------------------------------------------------------------------------
def plot_paths(model: WmrModel, seed: int, dt: float, path: Path) -> None:
    """Overhead paths of body (blue) and contact points (red) on one terrain, DAE vs. unconstrained (Fig. 2.8)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    terrain = make_terrain(seed)
    q0 = initial_state(model, terrain)
    runs = [run_dae(model, terrain, dt, q0, seed), run_unconstrained(model, terrain, dt, q0, seed)]
    fig, axes = plt.subplots(2, 1, figsize=(10, 5.4), sharex=True, sharey=True, layout="constrained")
    x0, x1 = 0.6, 6.6
    allx = np.concatenate([r.contact_points[..., 0].ravel() for r in runs])
    ally = np.concatenate([r.contact_points[..., 1].ravel() for r in runs])
    x0, x1 = min(x0, allx.min() - 0.2), max(x1, allx.max() + 0.2)
    y0, y1 = ally.min() - 0.25, ally.max() + 0.25
    xs, ys = np.linspace(x0, x1, 400), np.linspace(y0, y1, 160)
    H = terrain.height(xs[None, :], ys[:, None])
    for ax, run, title in zip(axes, runs, (f"stabilized DAE (dt = {dt:g} s)",
                                           f"unconstrained + terrain fitting (dt = {dt:g} s)"), strict=True):
        im = ax.imshow(H, origin="lower", extent=(x0, x1, y0, y1), cmap="gray", alpha=0.55, aspect="equal")
        for w in range(run.contact_points.shape[1]):
            ax.plot(run.contact_points[:, w, 0], run.contact_points[:, w, 1], "r-", lw=0.8,
                    label="wheel contact points" if w == 0 else None)
        ax.plot(run.q[:, 4], run.q[:, 5], "b-", lw=2.0, label="body frame")
        ax.plot([run.q[0, 4], run.q[0, 4] + SPEED * DURATION], [run.q[0, 5]] * 2, "k:", lw=1.0,
                label="commanded straight line")
        ax.set_title(f"{title}: final y = {run.q[-1, 5]:+.3f} m, yaw = {np.degrees(run.yaw):+.1f}°", fontsize=10)
        ax.set_ylabel("y (m)")
    axes[-1].set_xlabel("x (m)")
    axes[0].legend(loc="lower left", fontsize=8, framealpha=0.8)
    fig.colorbar(im, ax=axes, shrink=0.8, label="terrain height (m)")
    fig.suptitle(f"Rocky 7, 0.5 m/s straight for 10 s, naive controller, rough terrain seed {seed} "
                 f"(RMS {RMS} m, corr. length {CORR_LEN} m)", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_errors(rows: Sequence[Row], path: Path) -> None:
    """Mean ‖v_c‖, position and yaw error vs. step size, ours and the thesis's (Fig. 2.9)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), layout="constrained")
    specs = [("vc", 0, "mean ‖v_c‖ (m/s)"), ("pos_err", 1, "final position error (m)"),
             ("yaw_err", 2, "final yaw error (rad)")]
    styles = {"dae": ("C0", "-", "o"), "unc": ("C3", "--", "s"), "unc_nm": ("C1", ":", "D"),
              "dae10": ("C2", "-.", "^")}
    for ax, (attr, col, label) in zip(axes, specs, strict=True):
        for method in ("dae", "unc", "unc_nm", "dae10"):
            pts = [(r.dt, getattr(r, attr)) for r in rows if r.method == method and getattr(r, attr) is not None]
            if pts:
                c, ls, mk = styles[method]
                n = sorted({r.n for r in rows if r.method == method})
                n_all = max((r.n for r in rows), default=0)
                name = f"ours: {METHOD_NAMES[method]}" + (f" ({n[0]} terrains)" if n and n[0] < n_all else "")
                ax.plot(*zip(*pts, strict=True), color=c, ls=ls, marker=mk, label=name)
            th = [(dt, v[col]) for (m, dt), v in sorted(THESIS.items()) if m == method and v[col] is not None]
            if th:
                c, ls, mk = styles[method]
                name = "unconstrained, fminsearch fit" if method == "unc" else METHOD_NAMES[method]
                ax.plot(*zip(*th, strict=True), color=c, ls=ls, marker=mk, mfc="none", alpha=0.45,
                        label=f"thesis: {name}")
        ax.set_xlabel("step size (s)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Rocky 7 kinematic simulation errors vs. step size (thesis Table 2.4 / Fig. 2.9); "
                 "open markers: thesis", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def supplement_stats(runs: Sequence[Run]) -> dict[str, float]:
    """Means over terrains at DT_REF of the own-loop DAE at σ = 1/Δt ("dae1") and σ = 10/s ("dae10"): tangential
    and normal contact-point speeds, and the largest difference of the own loop's ‖v_c‖ from the Simulator's."""
    out: dict[str, float] = {}
    for method in ("dae1", "dae10"):
        group = [r for r in runs if r.method == method and r.dt == DT_REF]
        if group:
            out[f"{method}_vxy"] = float(np.mean([r.mean_vxy for r in group]))
            out[f"{method}_vz"] = float(np.mean([r.mean_vz for r in group]))
    sim = {r.seed: r for r in runs if r.method == "dae" and r.dt == DT_REF}
    diffs = [abs(r.contact_speed.mean() - sim[r.seed].contact_speed.mean())
             for r in runs if r.method == "dae1" and r.seed in sim]
    if diffs:
        out["own_loop_diff"] = float(max(diffs))
    return out


# (label, initial simplex step h or None for fminsearch's default, xatol, fatol, restarts)
NM_SWEEP = (
    ("fminsearch defaults (5% simplex, TolX = TolFun = 1e-4)", None, 1e-4, 1e-4, 0),
    (f"h = {NM_SIMPLEX_STEP:g}, xatol = {NM_XATOL:g}, fatol = {NM_FATOL:g}, no restarts", NM_SIMPLEX_STEP, NM_XATOL,
     NM_FATOL, 0),
    (f"**the table's**: as above, ≤ {NM_RESTARTS} restarts while L > {NM_RESTART_L:g} m²", NM_SIMPLEX_STEP, NM_XATOL,
     NM_FATOL, NM_RESTARTS),
)
NM_SWEEP_STEPS = 75  # 3 s at dt 0.04


@dataclasses.dataclass
class SweepRow:
    label: str
    evals_per_step: float
    ms_per_step: float
    mean_dz_um: float
    max_dz_um: float
    pos_diff_mm: float  # final body position vs the Newton fit's, mm
    restarts: int
    vc: float  # mean ‖v_c‖, m/s


def nm_sweep(model: WmrModel, seed: int, dt: float = 0.04, steps: int = NM_SWEEP_STEPS) -> list[SweepRow]:
    """Nelder–Mead settings vs. cost and fit quality on one terrain (first ``steps`` steps), next to Newton."""
    terrain = make_terrain(seed)
    q0 = initial_state(model, terrain)
    duration = steps * dt
    newton = run_unconstrained(model, terrain, dt, q0, seed, "newton", duration)
    out = [SweepRow("Newton (`initialize_contact`, tol 1e-5 m)", newton.collisions / newton.steps,
                    1e3 * newton.wall_s / newton.steps, 1e6 * newton.mean_abs_dz, 1e6 * newton.max_abs_dz, 0.0, 0,
                    float(newton.contact_speed.mean()))]
    for label, h, xatol, fatol, restarts in NM_SWEEP:
        run = run_unconstrained(model, terrain, dt, q0, seed, "nelder-mead", duration,
                                {"simplex_step": h, "xatol": xatol, "fatol": fatol, "restarts": restarts})
        out.append(SweepRow(label, run.collisions / run.steps, 1e3 * run.wall_s / run.steps, 1e6 * run.mean_abs_dz,
                            1e6 * run.max_abs_dz, 1e3 * float(np.linalg.norm(run.q[-1, 4:7] - newton.q[-1, 4:7])),
                            run.restarts, float(run.contact_speed.mean())))
    return out


def format_sweep(sweep: Sequence[SweepRow], markdown: bool = False) -> str:
    head = ["fit", "collisions / step", "loop ms / step", "mean |Δz| (µm)", "max |Δz| (µm)",
            "final pos. vs Newton (mm)", "restarts", "mean ‖v_c‖ (m/s)"]
    body = [[r.label, f"{r.evals_per_step:.1f}", f"{r.ms_per_step:.1f}", f"{r.mean_dz_um:.3g}", f"{r.max_dz_um:.3g}",
             f"{r.pos_diff_mm:.3f}", str(r.restarts), f"{r.vc:.4f}"] for r in sweep]
    return _render(head, body, markdown)


def format_costs(costs: Sequence[CostRatio], rows: Sequence[Row], markdown: bool = False) -> str:
    head = ["baseline", "dt (s)", "terrains", "collisions / step", "DAE collisions / step", "collision ratio",
            "loop ms / step", "DAE loop ms / step", "wall-time ratio", "ms / collision eval.", "fit mean |Δz| (µm)",
            "fit max |Δz| (µm)"]
    body = []
    for c in costs:
        r = _find(rows, c.method, c.dt)
        d = _find(rows, "dae", c.dt)
        body.append([METHOD_NAMES[c.method], f"{c.dt:.2f}", str(len(c.seeds)),
                     _f(r.collisions_per_step if r else None, ".1f"), _f(d.collisions_per_step if d else None, ".2f"),
                     f"{c.eval_ratio:.0f}×" if c.eval_ratio >= 10 else f"{c.eval_ratio:.1f}×",
                     f"{c.ms_per_step:.2f}", f"{c.dae_ms_per_step:.2f}",
                     f"{c.wall_ratio:.0f}×" if c.wall_ratio >= 10 else f"{c.wall_ratio:.1f}×", f"{c.ms_per_eval:.2f}",
                     _f(1e3 * r.dz_mm if r else None, ".2f"), _f(1e3 * r.dz_max_mm if r else None, ".1f")])
    return _render(head, body, markdown)


def nm_vs_newton(runs: Sequence[Run]) -> dict[str, float]:
    """On the terrains where both fits ran at Δt = 0.04 s: the largest differences between the Nelder–Mead and
    the Newton runs (final position, m; per-terrain mean ‖v_c‖, m/s).  At 0.20 s (``--full``): the Newton
    fit's mean ‖v_c‖ on the Nelder–Mead terrains."""
    newton = {(r.seed, round(r.dt, 2)): r for r in runs if r.method == "unc"}
    out: dict[str, float] = {}
    pairs = [(r, newton[(r.seed, 0.04)]) for r in runs
             if r.method == "unc_nm" and round(r.dt, 2) == 0.04 and (r.seed, 0.04) in newton]
    if pairs:
        out |= {"nm_pos_diff": float(max(np.linalg.norm(a.q[-1, 4:7] - b.q[-1, 4:7]) for a, b in pairs)),
                "nm_vc_diff": float(max(abs(a.contact_speed.mean() - b.contact_speed.mean()) for a, b in pairs)),
                "nm_pairs": float(len(pairs))}
    same20 = [newton[(r.seed, 0.2)] for r in runs
              if r.method == "unc_nm" and round(r.dt, 2) == 0.2 and (r.seed, 0.2) in newton]
    if same20:
        out["nm20_newton_vc"] = float(np.mean([r.contact_speed.mean() for r in same20]))
    return out


def _ratio(x: float) -> str:
    return f"{x:.0f}×" if x >= 10 else f"{x:.1f}×"


def _pct(x: float) -> str:
    return f"{x:.0f} %"


def _z(row: Row, column: int) -> float | None:
    """(ours − thesis) in standard errors of our terrain mean (column 0: ‖v_c‖, 1: position, 2: yaw error)."""
    th = THESIS.get(("unc" if row.method in UNC_METHODS else "dae", round(row.dt, 2)))
    ours, sd = [(row.vc, row.vc_sd), (row.pos_err, row.pos_sd), (row.yaw_err, row.yaw_sd)][column]
    if th is None or th[column] is None or ours is None or not sd:
        return None
    return (ours - th[column]) / (sd / np.sqrt(row.n))


def setup_figures(n_terrains: int, seeds: Sequence[int], elapsed: float, joint_limits: bool,
                  costs: Sequence[CostRatio], rows: Sequence[Row]) -> list[tuple[str, str]]:
    """The run's settings (the ``setup`` section)."""
    info = machine_info()
    nm_rows = [r for r in rows if r.method == "unc_nm"]
    nm_cost = next((c for c in costs if c.method == "unc_nm"), None)
    out = [("terrains (seeds)", f"{n_terrains} ({', '.join(map(str, seeds))}); RMS {RMS} m, correlation length "
                                f"{CORR_LEN} m"),
           ("URDF joint limits", "kept (`--joint-limits`)" if joint_limits else "removed")]
    if nm_rows:
        out.append(("Nelder–Mead fit ran at Δt (s), terrains",
                    f"{', '.join(f'{r.dt:.2f}' for r in nm_rows)}; "
                    + (f"seeds {', '.join(map(str, nm_cost.seeds))}" if nm_cost else f"{nm_rows[0].n} terrains")))
    out += [("Nelder–Mead settings", f"h = {NM_SIMPLEX_STEP:g}, xatol = {NM_XATOL:g}, fatol = {NM_FATOL:g}, "
                                     f"≤ {NM_MAXFEV_PER_VAR} evaluations per variable, ≤ {NM_RESTARTS} restarts "
                                     f"while L > {NM_RESTART_L:g} m²"),
            ("machine", f"{info['cpu']}; " + ", ".join(f"{k} {v}" for k, v in info.items() if k != "cpu")),
            ("whole study (s), 1-min load average at the end", f"{elapsed:.0f}, {os.getloadavg()[0]:.1f}")]
    return out


def results_figures(rows: Sequence[Row], extra: dict[str, float]) -> list[tuple[str, str, str]]:
    """Accuracy at Δt = 0.04 s, DAE vs unconstrained, next to the thesis (the ``results`` section)."""
    d04, u04 = _find(rows, "dae", 0.04), _find(rows, "unc", 0.04)
    if not (d04 and u04):
        return []
    th_d, th_u = THESIS[("dae", 0.04)], THESIS[("unc", 0.04)]
    out = [("DAE's mean ‖v_c‖ lower than the unconstrained method's by", _pct(100 * (1 - d04.vc / u04.vc)),
            _pct(100 * (1 - th_d[0] / th_u[0]))),
           ("DAE's position / yaw error smaller by", f"{100 * (1 - d04.pos_err / u04.pos_err):.0f} % / "
                                                    f"{100 * (1 - d04.yaw_err / u04.yaw_err):.0f} %", "92 % / 80 %")]
    if "nm_pairs" in extra:
        out.append((f"Nelder–Mead vs Newton fit on the {extra['nm_pairs']:.0f} shared terrains: largest final "
                    "position / mean ‖v_c‖ difference", f"{1e3 * extra['nm_pos_diff']:.2g} mm / "
                                                         f"{extra['nm_vc_diff']:.1g} m/s", "–"))
    return out


def cost_figures(costs: Sequence[CostRatio], rows: Sequence[Row]) -> list[tuple[str, str, str]]:
    """The DAE-vs-fit ratios at Δt = 0.04 s and what they consist of (the ``cost`` section)."""
    th_d, th_u = THESIS[("dae", 0.04)], THESIS[("unc", 0.04)]
    out = [("motion-time / total-time ratio, unconstrained / DAE", "–",
            f"{th_u[3] / th_d[3]:.0f}× / {th_u[4] / th_d[4]:.0f}×")]
    costs04 = [c for c in costs if abs(c.dt - 0.04) < 1e-12]
    for c in costs04:
        out.append((f"{METHOD_NAMES[c.method]}: wall-time / collision-evaluation ratio",
                    f"{_ratio(c.wall_ratio)} / {_ratio(c.eval_ratio)}", "–"))
    nm = next((c for c in costs04 if c.method == "unc_nm"), None)
    if nm:
        out.append(("Nelder–Mead ratios at least 10× (both)", "yes" if min(nm.wall_ratio, nm.eval_ratio) >= 10 else
                    "**no**: " + ("wall time" if nm.wall_ratio < 10 else "collision evaluations"), "–"))
    stuck = [r for r in rows if r.method == "unc_nm" and r.dz_max_mm > 1.0]
    out.append(("Δt (s) where a Nelder–Mead fit ended in a local minimum (fit max |Δz| > 1 mm)",
                ", ".join(f"{r.dt:.2f}" for r in stuck) or "none", "–"))
    return out


def discussion_figures(rows: Sequence[Row], extra: dict[str, float]) -> list[tuple[str, str, str]]:
    """The derived figures the hand-written discussion of docs/table_2_4.md refers to (``discussion``)."""
    d01, d04, d20 = (_find(rows, "dae", dt) for dt in (0.01, 0.04, 0.20))
    u04, u20 = _find(rows, "unc", 0.04), _find(rows, "unc", 0.20)
    n20 = _find(rows, "unc_nm", 0.20)
    out: list[tuple[str, str, str]] = []
    if d04 and u04:
        shared = [(r, _find(rows, "dae", r.dt)) for r in rows if r.method == "unc"]
        lower = all(d is not None and d.vc < u.vc for u, d in shared)
        out += [("DAE's mean ‖v_c‖ lower at every Δt both methods ran", "yes" if lower else "**no**", "–"),
                ("final |y|, DAE / unconstrained, Δt 0.04 (m)", f"{d04.abs_y:.2f} / {u04.abs_y:.0e}", "–"),
                ("unconstrained, Δt 0.04: largest |ours − thesis| of pos. / yaw error (standard errors)",
                 f"{max(abs(_z(u04, 1) or np.nan), abs(_z(u04, 2) or np.nan)):.1f}", "–"),
                ("wall-time ratio, unconstrained (Newton fit) / DAE, Δt 0.04", f"{u04.wall_s / d04.wall_s:.0f}×", "–"),
                ("DAE loop time per step, Δt 0.04 (ms)", f"{1e3 * d04.wall_s * d04.dt / DURATION:.1f}",
                 "0.0413 × 10 s / 250 ≈ 1.7")]
    if u20 and _z(u20, 0):
        out.append(("unconstrained ‖v_c‖ at Δt 0.20 − thesis (standard errors)", f"{_z(u20, 0):.0f}", "–"))
    if n20:
        out.append((f"Nelder–Mead fit ‖v_c‖ at Δt 0.20 ({n20.n} terrains; Newton fit on the same terrains)",
                    f"{n20.vc:.4f}" + (f" ({extra['nm20_newton_vc']:.4f})" if "nm20_newton_vc" in extra else ""),
                    "0.1246"))
    if d01 and d04 and d20:
        out.append(("DAE σ = 1/Δt: ‖v_c‖ at Δt 0.04 vs thesis (relative, standard errors)",
                    f"{100 * (d04.vc / 0.0721 - 1):+.0f} %, {_z(d04, 0) or np.nan:.1f}", "0.0721"))
    zs = [_z(r, c) for r in rows if r.method == "dae10" for c in range(3) if not (c == 2 and r.dt > 0.15)]
    if zs:
        zmax = max((abs(z) for z in zs if z is not None), default=float("nan"))
        out.append(("σ = 10/s: largest |ours − thesis| of ‖v_c‖, pos. and yaw error at every Δt (yaw at 0.20 "
                    "excepted; standard errors)", f"{zmax:.1f}", "–"))
    if "dae1_vxy" in extra and "dae10_vxy" in extra:
        out.append(("Δt 0.01, σ = 10/s vs σ = 1/Δt: tangential / normal contact-point speed (m/s)",
                    f"{extra['dae10_vxy']:.3f} vs {extra['dae1_vxy']:.3f} / {extra['dae10_vz']:.3f} vs "
                    f"{extra['dae1_vz']:.3f}", "–"))
    return out


def sigma_figures(rows: Sequence[Row], extra: dict[str, float]) -> list[tuple[str, str, str]]:
    """Checks of the σ = 10/s supplement (the ``sigma`` section)."""
    out = []
    if "own_loop_diff" in extra:
        out.append(("own loop at σ = 1/Δt vs the Simulator, Δt 0.01: largest ‖v_c‖ difference over terrains "
                    "(m/s)", f"{extra['own_loop_diff']:.1g}", "–"))
    u04 = _find(rows, "unc", 0.04)
    if u04 and u04.pos_err_alt is not None:
        out.append(("unconstrained, Δt 0.04, errors relative to the σ = 10/s reference: pos. (m) / yaw (rad)",
                    f"{u04.pos_err_alt:.4f} / {u04.yaw_err_alt:.4f}", "0.5199 / 0.1367"))
    return out


def report_sections(rows: Sequence[Row], n_terrains: int, seeds: Sequence[int], elapsed: float,
                    joint_limits: bool, extra: dict[str, float] | None = None, costs: Sequence[CostRatio] = (),
                    sweep: Sequence[SweepRow] | None = None, sweep_seed: int = 0) -> dict[str, str]:
    """The generated sections of docs/table_2_4.md (name → markdown): tables only; the page's hand-written
    text explains them."""
    extra = extra or {}
    head3 = ("figure", "ours", "thesis")
    out = {"setup": figures_table(setup_figures(n_terrains, seeds, elapsed, joint_limits, costs, rows),
                                  ("setting", "value")),
           "results": format_table(rows, markdown=True) + "\n\n"
           + figures_table(results_figures(rows, extra), head3)}
    if costs:
        out["cost"] = format_costs(costs, rows, markdown=True) + "\n\n" + figures_table(cost_figures(costs, rows),
                                                                                        head3)
    if sweep:
        out["nm_sweep"] = (f"Terrain seed {sweep_seed}, first {NM_SWEEP_STEPS} steps at Δt = 0.04 s.\n\n"
                           + format_sweep(sweep, markdown=True))
    if any(r.method == "dae10" for r in rows):
        out["sigma"] = format_sigma_table(rows, markdown=True) + "\n\n" + figures_table(sigma_figures(rows, extra),
                                                                                        head3)
    out["discussion"] = figures_table(discussion_figures(rows, extra), head3)
    return out


def write_markdown(path: Path, sections: dict[str, str]) -> None:
    """Update the generated sections of ``path`` (docs/table_2_4.md); its hand-written text stays as it is."""
    for name, text in sections.items():
        update_section(path, f"table_2_4 {name}", text)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--terrains", type=int, default=10, help="number of random terrains (seeds 0..N-1), default 10")
    p.add_argument("--out", default="docs", help="output folder for table_2_4.md and figures/ (default docs)")
    p.add_argument("--quick", action="store_true",
                   help="3 terrains (Nelder–Mead: 1), fewer step sizes, no settings sweep (a smoke run)")
    p.add_argument("--fit", nargs="+", choices=FITS, default=list(FITS),
                   help="terrain fit(s) of the unconstrained method (default: both)")
    p.add_argument("--nm-terrains", type=int, default=None,
                   help=f"terrains (the first seeds) for the Nelder–Mead fit, default {NM_TERRAINS}")
    p.add_argument("--full", action="store_true", help=f"Nelder–Mead also at dt {DT_UNC[1]:g} and {DT_UNC[2]:g} "
                   "(default: 0.04 only; slow)")
    p.add_argument("--no-nm-sweep", action="store_true", help="skip the Nelder–Mead settings sweep")
    p.add_argument("--no-sigma-study", action="store_true", help="skip the supplementary σ = 10/s DAE runs")
    p.add_argument("--joint-limits", action="store_true", help="keep the URDF joint limits (thesis model has none)")
    p.add_argument("--no-figures", action="store_true", help="do not write the figures")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    args = p.parse_args(argv)
    if args.terrains < 1:
        p.error("--terrains must be at least 1")
    n = 3 if args.quick else args.terrains
    dt_dae, dt_unc = (DT_DAE_QUICK, DT_UNC_QUICK) if args.quick else (DT_DAE, DT_UNC)
    dt_nm = dt_unc if args.full else DT_UNC_NM
    n_nm = args.nm_terrains if args.nm_terrains is not None else (1 if args.quick else NM_TERRAINS)
    if n_nm < 0:
        p.error("--nm-terrains must be at least 0")
    seeds = list(range(n))
    start = time.perf_counter()
    runs = run_study(seeds, dt_dae, dt_unc, sigma_study=not args.no_sigma_study, joint_limits=args.joint_limits,
                     quiet=args.quiet, dt_unc_nm=dt_nm, nm_seeds=seeds[:n_nm], fits=args.fit)
    rows = summarize(runs)
    costs = cost_ratios(runs)
    extra = supplement_stats(runs) | nm_vs_newton(runs)
    print("\nThesis Table 2.4 reproduction — Rocky 7, mean over the terrains in the 'terrains' column")
    print(format_table(rows))
    if costs:
        print("\nCost, DAE vs each terrain fit (paired by terrain; thesis with fminsearch at dt 0.04: motion time "
              "180x, total time 48x)")
        print(format_costs(costs, rows))
    sweep = None
    if "nelder-mead" in args.fit and not args.quick and not args.no_nm_sweep:
        _log("Nelder–Mead settings sweep ...", args.quiet)
        sweep = nm_sweep(rocky7_model(args.joint_limits), seeds[0])
        print(f"\nNelder–Mead settings (seed {seeds[0]}, first {NM_SWEEP_STEPS} steps at dt 0.04)")
        print(format_sweep(sweep))
    if any(r.method == "dae10" for r in rows):
        print(f"\nSupplement: DAE with sigma = {SIGMA_WMRDE:g}/s (wmrde tc_z = 0.1 s)")
        print(format_sigma_table(rows))
    out = Path(args.out)
    if not args.no_figures:
        _log("writing figures ...", args.quiet)
        model = rocky7_model(args.joint_limits)
        plot_paths(model, seeds[0], 0.04, out / "figures" / "table_2_4_paths.png")
        plot_errors(rows, out / "figures" / "table_2_4_errors.png")
    elapsed = time.perf_counter() - start
    write_markdown(out / "table_2_4.md",
                   report_sections(rows, n, seeds, elapsed, args.joint_limits, extra, costs, sweep, seeds[0]))
    print(f"\nwrote {out / 'table_2_4.md'}" + ("" if args.no_figures else f" and {out / 'figures'}/table_2_4_*.png")
          + f" in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
