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

    python benchmarks/table_2_4_rocky7.py              # 10 terrains (Nelder–Mead: 3, dt 0.04), writes
                                                       # docs/table_2_4.md + figures (~5–7 min on 2 cores)
    python benchmarks/table_2_4_rocky7.py --quick      # 3 terrains, fewer step sizes, Nelder–Mead on 1
    python benchmarks/table_2_4_rocky7.py --fit newton # the Newton-fit baseline only (~1 min)
    python benchmarks/table_2_4_rocky7.py --full       # Nelder–Mead also at dt 0.10 and 0.20
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
from _report import machine_info  # noqa: E402  (shared with the other benchmark scripts)

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


def write_markdown(rows: Sequence[Row], n_terrains: int, seeds: Sequence[int], elapsed: float, path: Path,
                   joint_limits: bool, extra: dict[str, float] | None = None, costs: Sequence[CostRatio] = (),
                   sweep: Sequence[SweepRow] | None = None, sweep_seed: int = 0) -> None:
    extra = extra or {}
    info = machine_info()
    nm_rows = [r for r in rows if r.method == "unc_nm"]
    nm_cost = next((c for c in costs if c.method == "unc_nm"), None)
    costs04 = [c for c in costs if abs(c.dt - 0.04) < 1e-12]
    nm_where = ""
    if nm_rows:
        nm_where = (f" It is slow, so it ran at Δt = {', '.join(f'{r.dt:.2f}' for r in nm_rows)} s on "
                    + (f"the first {len(nm_cost.seeds)} of the {n_terrains} terrains (seeds "
                       f"{', '.join(map(str, nm_cost.seeds))}) only." if nm_cost else
                       f"{nm_rows[0].n} terrains only."))
    machine = ", ".join(f"{k} {v}" for k, v in info.items() if k != "cpu")
    lines = [
        "# Thesis Table 2.4: stabilized DAE vs. unconstrained kinematics (Rocky 7)",
        "",
        "Generated by `benchmarks/table_2_4_rocky7.py` (re-run the script rather than editing this file); the",
        "scenario is `wmr_dynamics.scenarios.table_2_4_rocky7`, the terrain fits "
        "`wmr_dynamics.kinematics.terrain_fit`.",
        "",
        "**Test** (thesis §2.5.1): Rocky 7 commanded straight, open loop, at 0.5 m/s for 10 s with the naive",
        "flat-ground controller (all wheels at v / r, steering straight), over random rough terrains",
        f"(`gaussian_rough_terrain`, RMS {RMS} m, correlation length {CORR_LEN} m, seeds "
        f"{', '.join(map(str, seeds))}).",
        "",
        "- **stabilized DAE**: `Simulator(mode=\"kinematic\")`, Baumgarte σ = 1/Δt (library default), Euler.",
        "- **unconstrained** (Tarokh & McDermott): each step integrates the nominal body velocity (0.5 m/s along",
        "  body x, zero angular velocity, wheels at v / r) for Δt, keeps x, y, yaw, then re-fits the 7 free states",
        "  z, roll, pitch and the passive joints (2 rockers, 2 bogies) by minimizing L = Σ Δz² + ‖c‖² (§2.2.4;",
        "  c: the rocker differential's joint-constraint residual), with one of two fits (`--fit`):",
        "  - **Newton fit**: our §2.2.4 routine `initialize_contact` (Gauss–Newton with a line search on the same",
        "    wheel Jacobians as the DAE; stops when every |Δz| and |c| is below 1e-5 m / rad).",
        "  - **Nelder–Mead fit**, the thesis's method (MATLAB `fminsearch`): `scipy.optimize.minimize(method=",
        "    \"Nelder-Mead\")` — fminsearch's algorithm, coefficients and stopping test — on the same L,",
        "    warm-started from the free-motion pose (the previous step's fitted roll, pitch and joints; z carried",
        "    along by the free motion, as for the Newton fit). Settings: initial simplex x0 + h·e_i with",
        f"    h = {NM_SIMPLEX_STEP:g} (m or rad); **xatol = {NM_XATOL:g}** (m or rad) and",
        f"    **fatol = {NM_FATOL:g}** (m²) (fminsearch's TolX, TolFun; both must hold); at most",
        f"    {NM_MAXFEV_PER_VAR} evaluations per variable (fminsearch's default); the search is restarted from",
        f"    its result with a fresh simplex, at most {NM_RESTARTS} times, while L > {NM_RESTART_L:g} m² (until no",
        "    |Δz| can exceed the Newton fit's 1e-5 m).",
        "    Each evaluation of L is one collision evaluation (forward kinematics + `wheel_contacts`, no",
        "    Jacobians). The settings were chosen so that its fit quality matches the Newton fit's (fit |Δz| in",
        "    the cost table and the settings sweep below)."
        + nm_where,
        "  Contact-point speeds of both are the ones implied by the motion: the q̇' that takes q[k] to q[k+1]",
        "  (finite differences: body angular velocity from the relative rotation, body-frame linear velocity,",
        "  joint rates) times the wheel Jacobians at q[k].",
        "- **Model**: the bundled Rocky 7 with its URDF joint limits "
        + ("kept (±0.8 rad rocker/bogie hard stops in the DAE)." if joint_limits else
           "removed: the thesis model has none, the bundled ±0.8 rad rocker/bogie limits are assumptions, the "
           "bogies exceed them on these terrains (up to ~1.1 rad), and the terrain fit ignores limits — "
           "`--joint-limits` keeps them."),
        "- **Errors**: final body position (Euclidean, 3D) and |yaw| difference from the DAE at Δt = 0.01 s on",
        "  the same terrain. **final |y|**: lateral offset from the commanded straight line.",
        "- **Times**: wall time of each method's stepping loop divided by the 10 s simulated (< 1 = faster than",
        "  real time). Both loops include collision detection, so they compare with the thesis's *total* time",
        "  more than with its *motion* time (wmrde times only the velocity solve, `forwardVelKin`, as motion).",
        "  **collisions / step**: wheel–terrain collision evaluations (`wheel_contacts` calls) per step — a",
        "  machine-independent cost measure.",
        "",
        f"**Machine**: {info['cpu']}; {machine}. The whole study ({n_terrains} terrains, incl. the supplementary",
        f"σ study, the Nelder–Mead runs and the figures) took {elapsed:.0f} s; 1-minute load average at the end",
        f"{os.getloadavg()[0]:.1f} (other jobs sharing the cores inflate and scatter the wall times).",
        "",
        "## Results next to thesis Table 2.4",
        "",
        "Means (± terrain-to-terrain standard deviation) over the number of terrains in the `terrains` column",
        "(seeds 0 … n−1). Thesis times are MATLAB, normalized the same way (motion = velocity solve / terrain",
        "fit only; total = the whole simulation); its unconstrained rows used `fminsearch`.",
        "",
        format_table(rows, markdown=True),
        "",
    ]
    d04, u04 = _find(rows, "dae", 0.04), _find(rows, "unc", 0.04)
    th_d, th_u = THESIS[("dae", 0.04)], THESIS[("unc", 0.04)]
    if d04 and u04:
        lines += [
            f"**Accuracy at Δt = 0.04 s**: the DAE's mean ‖v_c‖ is {100 * (1 - d04.vc / u04.vc):.0f}% lower than the "
            f"unconstrained method's (thesis {100 * (1 - th_d[0] / th_u[0]):.0f}%); its position / yaw errors are "
            f"{100 * (1 - d04.pos_err / u04.pos_err):.0f}% / {100 * (1 - d04.yaw_err / u04.yaw_err):.0f}% smaller "
            "(thesis 92% / 80%)."
            + (f" The two fits give the same motion: on the {extra['nm_pairs']:.0f} terrains where both ran, the "
               f"final positions differ by at most {1e3 * extra['nm_pos_diff']:.2g} mm and the mean ‖v_c‖ by "
               f"{extra['nm_vc_diff']:.1g} m/s." if "nm_pairs" in extra else ""),
            "",
        ]
    if costs:
        lines += [
            "## Cost: the DAE vs each terrain fit",
            "",
            "Ratios are baseline / DAE at the same Δt. Loop times are the wall times of the stepping loops only",
            "(collision detection included in both), per step; the baseline's over its terrains, the DAE's over all",
            "its terrains (its work per step does not depend on the terrain, and its short loop is the noisier",
            "one). Collision evaluations per step do not depend on the machine. Fit |Δz|: after each fit, over the",
            "fitted states and wheels (mean over terrains; max over all).",
            "",
            format_costs(costs, rows, markdown=True),
            "",
            f"Thesis at Δt = 0.04 s (MATLAB, `fminsearch`): motion time {th_u[3] / th_d[3]:.0f}×, total time "
            f"{th_u[4] / th_d[4]:.0f}×.",
            "",
        ]
        lines += _cost_meaning(costs04, rows)
    if sweep:
        lines += [
            f"### Nelder–Mead settings vs. cost and fit quality (terrain seed {sweep_seed}, first {NM_SWEEP_STEPS} "
            f"steps at Δt = 0.04 s)",
            "",
            format_sweep(sweep, markdown=True),
            "",
        ]
        lines += _sweep_meaning(sweep)
    if any(r.method == "dae10" for r in rows):
        lines += [
            "## Supplement: Baumgarte gain σ = 10 s⁻¹ (wmrde's `tc_z = 0.1 s`)",
            "",
            "The thesis author's public MATLAB library (wmrde: `forwardVelKin.m` sets the normal-velocity target",
            "−(Δz − dz_target)/tc_z; `rocky.m` sets tc_z = 0.1 s) stabilizes with a fixed σ = 10 s⁻¹ instead of",
            "σ = 1/Δt. We re-ran the DAE with σ = 10 s⁻¹ at every Δt — the same step as the Simulator (evaluate →",
            "controller → eq. 2.38 → Euler) in a loop of our own, because the Simulator rightly rejects σ > 1/Δt.",
            "Errors are relative to this study's own Δt = 0.01 s run."
            + (f" Check: the same loop at σ = 1/Δt reproduces the Simulator's mean ‖v_c‖ at Δt = 0.01 (largest "
               f"difference over terrains {extra['own_loop_diff']:.1g} m/s)." if "own_loop_diff" in extra else ""),
            "",
            format_sigma_table(rows, markdown=True),
            "",
        ]
        if u04 and u04.pos_err_alt is not None:
            lines += [
                "Relative to the σ = 10 s⁻¹ reference, the unconstrained method's errors are "
                f"{u04.pos_err_alt:.4f} m and {u04.yaw_err_alt:.4f} rad (thesis 0.5199 m, 0.1367 rad).",
                "",
            ]
    lines += ["## What matches, what does not, and why", ""]
    lines += _discussion(rows, extra, costs04, sweep)
    lines += [
        "",
        "## Figures",
        "",
        "![paths](figures/table_2_4_paths.png)",
        "",
        f"Overhead paths on terrain seed {seeds[0]} at Δt = 0.04 s (cf. thesis Fig. 2.8): body frame (blue) and "
        "wheel contact points (red) over the terrain height.",
        "",
        "![errors](figures/table_2_4_errors.png)",
        "",
        "Mean ‖v_c‖, final position and yaw error vs. step size (cf. thesis Fig. 2.9); open markers are the "
        "thesis's values. A method run on fewer terrains (the Nelder–Mead fit) averages only those, so its "
        "points differ from the Newton fit's by the terrain sample, not by the fit (on the same terrains the two "
        "fits give the same motion).",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def _z(row: Row, column: int) -> float | None:
    """(ours − thesis) in standard errors of our terrain mean (column 0: ‖v_c‖, 1: position, 2: yaw error)."""
    th = THESIS.get(("unc" if row.method in UNC_METHODS else "dae", round(row.dt, 2)))
    ours, sd = [(row.vc, row.vc_sd), (row.pos_err, row.pos_sd), (row.yaw_err, row.yaw_sd)][column]
    if th is None or th[column] is None or ours is None or not sd:
        return None
    return (ours - th[column]) / (sd / np.sqrt(row.n))


def _cost_meaning(costs: Sequence[CostRatio], rows: Sequence[Row]) -> list[str]:
    """What the DAE-vs-baseline ratios at Δt = 0.04 s mean (generated from the measured numbers)."""
    newton = next((c for c in costs if c.method == "unc"), None)
    nm = next((c for c in costs if c.method == "unc_nm"), None)
    out = []
    if newton and nm:
        verdict = ("at least 10× faster, as the thesis (and the issue asking for this reproduction) expect"
                   if min(nm.wall_ratio, nm.eval_ratio) >= 10 else
                   "**less than the expected 10×** in "
                   + ("wall time" if nm.wall_ratio < 10 else "collision evaluations"))
        out += [
            "**What the ratio means.** The DAE's speed advantage over terrain fitting is not a property of the DAE "
            "alone: it depends on how the fit is done. Against our Newton fit, which uses the same wheel Jacobians "
            f"as the DAE and converges in about two iterations, the DAE at Δt = 0.04 s is {_ratio(newton.wall_ratio)} "
            f"faster in wall time ({_ratio(newton.eval_ratio)} in collision evaluations). Against the thesis's way "
            f"of fitting — a derivative-free Nelder–Mead search, at the same fit quality — it is "
            f"{_ratio(nm.wall_ratio)} faster in wall time and {_ratio(nm.eval_ratio)} in collision evaluations, "
            f"i.e. {verdict}. The wall-time ratio is "
            + ("larger" if nm.wall_ratio > nm.eval_ratio else "smaller")
            + " than the evaluation ratio because one evaluation of the Nelder–Mead objective (forward kinematics "
            f"+ collision, no Jacobians or velocity solve, plus scipy's bookkeeping) costs {nm.ms_per_eval:.2f} ms "
            f"and one DAE step {nm.dae_ms_per_step:.2f} ms. Our Nelder–Mead ratio exceeds the thesis's total-time "
            "ratio (48×) and is of the order of its motion-time ratio (180×); the thesis's timing split (its "
            "unconstrained total minus motion time equals the DAE's collision time) suggests that its fit's "
            "objective evaluations were timed as motion and were cheaper than its full collision detection, so "
            "only the order of magnitude is comparable.",
            "",
        ]
    elif nm:
        out += [f"Against the Nelder–Mead fit the DAE at Δt = 0.04 s is {_ratio(nm.wall_ratio)} faster in wall "
                f"time and {_ratio(nm.eval_ratio)} in collision evaluations.", ""]
    stuck = [r for r in rows if r.method == "unc_nm" and r.dz_max_mm > 1.0]
    if stuck:
        out += [
            "At Δt = " + ", ".join(f"{r.dt:.2f}" for r in stuck) + " s the Nelder–Mead fit sometimes ends in a "
            "local minimum of L (on the terrains we looked at: a bogie turned far over, a wheel tens of mm off the "
            "ground) that restarts do not leave and the Newton fit, started from the same pose, avoids: its fit "
            "|Δz| above is worse than the Newton fit's there.",
            "",
        ]
    return out


def _sweep_meaning(sweep: Sequence[SweepRow]) -> list[str]:
    newton, rest = sweep[0], list(sweep[1:])
    if len(rest) < 3:
        return []
    default, norestart, ours = rest[:3]
    return [
        f"With fminsearch's defaults the fit is loose (mean |Δz| {default.mean_dz_um:.0f} µm vs the Newton fit's "
        f"{newton.mean_dz_um:.2g} µm) yet already costs {default.evals_per_step:.0f} evaluations per step. Its "
        "initial simplex steps each coordinate by 5% of its value, so a coordinate that is near zero at the warm "
        "start (e.g. the roll when the rover is nearly level) is hardly explored and can stay frozen for several "
        "steps; TolX = 1e-4 rad / m alone allows |Δz| of the order of 0.1 mm. The absolute initial step "
        f"h = {NM_SIMPLEX_STEP:g} and xatol = {NM_XATOL:g}, fatol = {NM_FATOL:g} reach the Newton fit's quality at "
        f"most steps for {norestart.evals_per_step:.0f} evaluations per step; Nelder–Mead occasionally stalls "
        f"(max |Δz| {norestart.max_dz_um:.0f} µm without restarts), and the restarts fix that "
        f"(max {ours.max_dz_um:.2g} µm) for {ours.evals_per_step:.0f} evaluations per step. Either way the cost "
        "is in the hundreds of evaluations per step, so the conclusion does not hinge on the tolerances. A looser "
        f"fit adds correction slip: mean ‖v_c‖ {default.vc:.4f} m/s with fminsearch's defaults vs "
        f"{newton.vc:.4f} with the Newton fit on these steps.",
        "",
    ]


def _discussion(rows: Sequence[Row], extra: dict[str, float], costs04: Sequence[CostRatio] = (),
                sweep: Sequence[SweepRow] | None = None) -> list[str]:
    d01, d04, d10, d20 = (_find(rows, "dae", dt) for dt in (0.01, 0.04, 0.10, 0.20))
    u04, u20 = _find(rows, "unc", 0.04), _find(rows, "unc", 0.20)
    n20 = _find(rows, "unc_nm", 0.20)
    s01, s04, s20 = (_find(rows, "dae10", dt) for dt in (0.01, 0.04, 0.20))
    shared = [(r, _find(rows, "dae", r.dt)) for r in rows if r.method == "unc"]
    lower_everywhere = all(d is not None and d.vc < u.vc for u, d in shared)
    out = []
    if d04 and u04:
        out += [
            "- **The qualitative result is reproduced.** The DAE has the lower mean contact-point speed "
            + ("at every step size both methods ran" if lower_everywhere else "at Δt = 0.04")
            + f" (Δt = 0.04: {d04.vc:.4f} vs {u04.vc:.4f} m/s) and predicts that the rover, commanded straight, "
            f"drifts off course (mean final |y| {d04.abs_y:.2f} m), whereas the unconstrained method drives "
            f"exactly straight as commanded (final |y| {u04.abs_y:.0e} m: with zero commanded angular velocity and "
            "the yaw kept, its body x axis never leaves the x–z plane). Its position and yaw errors are therefore "
            "just the DAE's deviation and, as in the thesis, do not depend on its step size.",
            f"- **The unconstrained column is close to the thesis**: mean ‖v_c‖ {u04.vc:.4f} m/s at Δt = 0.04 "
            "(thesis 0.1158); position error "
            f"{u04.pos_err:.2f} m (thesis 0.52) and yaw error {u04.yaw_err:.3f} rad (thesis 0.137), within "
            f"{max(abs(_z(u04, 1) or np.nan), abs(_z(u04, 2) or np.nan)):.1f} standard errors of our terrain "
            "mean — they measure how far the DAE rover deviates on the particular terrains."
            + (f" Its ‖v_c‖ grows faster with Δt than the thesis's ({u20.vc:.4f} vs 0.1246 m/s at 0.20, "
               f"{_z(u20, 0):.0f} standard errors): a longer free step means a larger correction by the fit; "
               "we have not pinned down the difference."
               + (f" The Nelder–Mead fit gives {n20.vc:.4f} m/s at 0.20 on its {n20.n} terrains"
                  + (f" (Newton fit on the same terrains: {extra['nm20_newton_vc']:.4f})"
                     if "nm20_newton_vc" in extra else "") + "." if n20 else "")
               + (f" A looser fit (`fminsearch`'s default tolerances) is not the explanation: it raises ‖v_c‖ "
                  f"(settings sweep above: {sweep[1].vc:.4f} vs {sweep[0].vc:.4f} m/s at Δt = 0.04)."
                  if sweep and len(sweep) > 1 and sweep[1].vc > sweep[0].vc else "") if u20 and _z(u20, 0) else ""),
        ]
    if d01 and d04 and d20:
        out += [
            f"- **The DAE column with the library default σ = 1/Δt does not match in detail.** Mean ‖v_c‖ is "
            f"{d04.vc:.4f} m/s at Δt = 0.04 ({100 * (d04.vc / 0.0721 - 1):+.0f}% vs 0.0721, {_z(d04, 0) or np.nan:.1f} "
            "standard errors of our mean) and nearly flat in Δt "
            f"({d01.vc:.4f} → {d20.vc:.4f} m/s from 0.01 to 0.20 s; thesis 0.0703 → 0.1650); the position / yaw "
            f"errors grow with Δt as in the thesis but stay smaller ({d04.pos_err:.3f} m / {d04.yaw_err:.3f} rad "
            f"at 0.04 vs 0.0412 / 0.0268; {d20.pos_err:.3f} / {d20.yaw_err:.3f} at 0.20 vs 0.3004 / 0.1554). The "
            "floor of ~0.07–0.08 m/s at small Δt is the overconstraint of a rocker-bogie with steering held "
            "straight on rough ground (18 contact constraints, 10 unknown rates: the least-squares residual is "
            "slip).",
        ]
    if s01 and s04 and s20 and d01 and d20:
        zs = [_z(r, c) for r in rows if r.method == "dae10" for c in range(3) if not (c == 2 and r.dt > 0.15)]
        zmax = max((abs(z) for z in zs if z is not None), default=float("nan"))
        split = ""
        if "dae1_vxy" in extra and "dae10_vxy" in extra:
            split = (f" (Δt = 0.01, mean over terrains: tangential {extra['dae10_vxy']:.3f} vs "
                     f"{extra['dae1_vxy']:.3f} m/s, normal {extra['dae10_vz']:.3f} vs {extra['dae1_vz']:.3f} m/s)")
        out += [
            "- **wmrde's σ = 10 s⁻¹ reproduces the thesis's DAE column** (supplement): mean ‖v_c‖ "
            f"{s01.vc:.4f} / {s04.vc:.4f} / {s20.vc:.4f} m/s at Δt = 0.01 / 0.04 / 0.20 (thesis 0.0703 / 0.0721 / "
            f"0.1650), position error {s04.pos_err:.4f} m at 0.04 (thesis 0.0412) and {s20.pos_err:.3f} m at "
            f"0.20 (thesis 0.3004), yaw error {s04.yaw_err:.4f} rad at 0.04 (thesis 0.0268). This strongly "
            "suggests that the thesis ran Table 2.4 with wmrde's tc_z = 0.1 s. Two effects: (1) a weaker σ "
            f"lets contact height errors persist (mean |Δz| {s01.dz_mm:.1f} mm vs {d01.dz_mm:.1f} mm at "
            "Δt = 0.01), which relaxes the overconstraint, so the least-squares solve needs less "
            "longitudinal/lateral slip — the normal part of v_c grows, but less than the slip shrinks, and "
            f"‖v_c‖ drops{split}; "
            "(2) at Δt = 0.20, σ·Δt = 2 is on the stability bound of the Euler-discretized Baumgarte "
            "correction (thesis eq. 2.35 requires σ ≤ 1/Δt; the linear recurrence multiplies the height error by "
            "1 − σΔt = −1 each step): the correction overshoots instead of decaying, and the normal velocities "
            f"it commands nearly double ‖v_c‖ ({d20.vc:.4f} → {s20.vc:.4f} m/s) — the thesis's 0.1650. The yaw "
            f"error at 0.20 does not match ({s20.yaw_err:.3f} vs 0.1554 rad); we have no explanation beyond "
            "that overshooting regime being sensitive to implementation details. Every other σ = 10/s entry "
            f"(‖v_c‖, position and yaw error at all Δt) lies within {zmax:.1f} standard errors of our "
            "10-terrain mean from the thesis's value (the thesis's own 10-terrain means scatter as much), so the "
            "other differences from wmrde — our terrain realizations and 0.04 m grid vs its 0.05 m, its "
            "dz_target = −0.02 m sinkage target, its contact search — matter less.",
        ]
    n04 = _find(rows, "unc_nm", 0.04)
    nm_cost = next((c for c in costs04 if c.method == "unc_nm"), None)
    if d04 and u04:
        out += [
            f"- **With the Newton fit the speed ratio is ~{u04.wall_s / d04.wall_s:.0f}×, as the thesis itself "
            "predicted** (§2.5.1, last paragraph: with its own Newton terrain fitting \"the efficiency advantage "
            "of our DAE method would be reduced ... Newton's method would usually converge in 1-2 steps\"). Our "
            f"Gauss–Newton fit needs {u04.collisions_per_step:.1f} collision evaluations per step (the initial "
            "residual plus about two iterations, line-search trials included, warm-started from the previous "
            "pose)"
            + (f"; the thesis's derivative-free Nelder–Mead (`fminsearch`) over the 7 free states needs "
               f"{n04.collisions_per_step:.0f} at a comparable fit quality, and the wall-time ratio becomes "
               f"~{nm_cost.wall_ratio:.0f}× (section *Cost* above)" if n04 and nm_cost else "")
            + ". The accuracy gap does not depend on the fit. "
            f"Our DAE costs {1e3 * d04.wall_s * d04.dt / DURATION:.1f} ms per step including "
            "collision detection (the thesis's MATLAB: 0.0413 × 10 s / 250 steps ≈ 1.7 ms). Wall times vary by "
            "several percent between runs (more when other jobs share the 2 cores); the collision counts do not.",
        ]
    if d10:
        out += [
            "- **Cost scales as expected**: the DAE's loop time is proportional to the number of steps (one "
            "collision evaluation each); the unconstrained method's cost per step grows slowly with Δt because "
            "a longer free step leaves the pose further from the terrain and the fit needs more iterations.",
        ]
    return out


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
    write_markdown(rows, n, seeds, elapsed, out / "table_2_4.md", args.joint_limits, extra, costs, sweep, seeds[0])
    print(f"\nwrote {out / 'table_2_4.md'}" + ("" if args.no_figures else f" and {out / 'figures'}/table_2_4_*.png")
          + f" in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
