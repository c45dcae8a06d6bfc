#!/usr/bin/env python3
"""Auchter, Moore & Ghosal (papers/002): Passive Variable Camber (PVC) removes kinematic slip.

Claim (their §4.1, Fig. 7): a three-wheeled robot — steerable front wheel, two rear wheels on passive
camber joints, torus-shaped wheels — traverses smooth uneven terrain without kinematic slip when the PVC
joints are free; the error of their constraint equation (7), ``error_1`` of eq. 10, stays near zero.

What is run — the terrain, the vehicle variants (PVC free / locked), the two-solve step and the slip
measures — is :mod:`wmr_dynamics.scenarios.auchter_pvc` (its docstring); this script runs the variants and
writes the report.

Usage::

    python benchmarks/auchter_pvc.py            # all runs (~40 s); writes docs/figures/auchter_pvc.png and
                                                # the generated block of docs/auchter_pvc.md
    python benchmarks/auchter_pvc.py --quick    # the main free/locked pair only, prints, writes nothing
    python benchmarks/auchter_pvc.py --no-write # all runs, prints the generated markdown instead
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

from wmr_dynamics.scenarios.auchter_pvc import PvcRun, free_vs_locked, make_terrain
from wmr_dynamics.terrain import Terrain

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import figures_table  # noqa: E402  (shared with the other benchmark scripts)

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "auchter_pvc.md"
FIGURE = REPO / "docs" / "figures" / "auchter_pvc.png"


# ----------------------------------------------------------------------------------------------- output
def _row(name: str, free: PvcRun, locked: PvcRun) -> str:
    f, lk = free.summary(), locked.summary()
    lim = (" (at stop)" if free.joint_limits else " (beyond stop)") if free.limit_steps else ""
    return (f"| {name} | {f['max_slip']:.1e} | {f['max_residual']:.1e} | {lk['max_slip']:.2e} | "
            f"{lk['mean_slip']:.2e} | {lk['max_residual']:.2e} | {f['gamma_range'][0]:.3f} / "
            f"{f['gamma_range'][1]:.3f} | {f['gamma_max_abs']:.3f}{lim} | {f['min_sv']:.3f} | "
            f"{f['fd_max']:.1e} / {lk['fd_max']:.1e} |")


TABLE_HEAD = ("| case | free: max slip (m/s) | free: max ‖r‖ | locked: max slip (m/s) | locked: mean slip | "
              "locked: max ‖r‖ | free: PVC range pvc2 / pvc3 (rad) | free: max abs PVC (rad) | "
              "free: min σ(A_u) | FD slip max free / locked (m/s) |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def print_pair(name: str, free: PvcRun, locked: PvcRun) -> None:
    print(name)
    for r in (free, locked):
        s = r.summary()
        print(f"  {r.label:22s} slip max {s['max_slip']:.2e} mean {s['mean_slip']:.2e}  "
              f"|r| max {s['max_residual']:.2e} mean {s['mean_residual']:.2e}  PVC range "
              f"{s['gamma_range'][0]:.4f}/{s['gamma_range'][1]:.4f} rad (|max| {s['gamma_max_abs']:.3f})  "
              f"min sv {s['min_sv']:.3f}  FD max {s['fd_max']:.1e}  limit steps {s['limit_steps']}  "
              f"({s['wall_s']:.1f} s)", flush=True)


def plot(free: PvcRun, locked: PvcRun, terrain: Terrain, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(13, 9))
    floor = 1e-17
    a = ax[0, 0]
    for r, c in ((free, "C0"), (locked, "C3")):
        a.semilogy(r.t, np.maximum(r.slip.max(axis=1), floor), c, lw=1.2, label=f"{r.label}: max ‖v_c,xy‖")
        a.semilogy(r.t, np.maximum(r.residual, floor), c, lw=0.6, ls=":", label=f"{r.label}: ‖r‖ (eq. 10)")
    a.axhline(1e-3, color="k", lw=0.8, ls="--", label="1e-3 m/s")
    a.set(xlabel="t (s)", ylabel="m/s", title=f"kinematic slip, straight at {free.speed} m/s", ylim=(1e-17, 1e-1))
    a.legend(fontsize=7, loc="center right")
    a = ax[0, 1]
    for k, (ls, nm) in enumerate((("-", "pvc2 (left)"), ("--", "pvc3 (right)"))):
        a.plot(np.r_[free.t, free.t[-1] + free.dt], free.gamma[:, k], "C0" + ls, label=f"free, {nm}")
        a.plot(np.r_[locked.t, locked.t[-1] + locked.dt], locked.gamma[:, k], "C3" + ls, lw=0.8,
               label=f"locked, {nm}")
    a.set(xlabel="t (s)", ylabel="PVC angle γ (rad)", title="passive camber angles")
    a.legend(fontsize=8)
    a = ax[1, 0]
    cp, wc = free.contact_points, free.wheel_centres
    xs = np.linspace(cp[..., 0].min() - 0.2, cp[..., 0].max() + 0.2, 200)
    ys = np.linspace(-0.5, 0.5, 80)
    X, Y = np.meshgrid(xs, ys)
    cs = a.contourf(X, Y, terrain.height(X, Y), levels=20, cmap="gist_earth", alpha=0.5)
    fig.colorbar(cs, ax=a, label="terrain height (m)")
    for w, name in enumerate(("W1 (front)", "W2 (left)", "W3 (right)")):
        a.plot(cp[:, w, 0], cp[:, w, 1], f"C{w}-", lw=1.2, label=f"{name} contact")
        a.plot(wc[:, w, 0], wc[:, w, 1], f"C{w}:", lw=1.0, label=f"{name} centre")
    a.set(xlabel="x_G (m)", ylabel="y_G (m)", title="PVC free: contact points and wheel centres (cf. Auchter Fig. 6)")
    a.legend(fontsize=7, ncol=2, loc="upper left")
    a = ax[1, 1]
    for r, c in ((free, "C0"), (locked, "C3")):
        for w, ls in ((1, "-"), (2, "--")):
            a.plot(r.t, 1e3 * r.lateral[:, w], c + ls, lw=1.0, label=f"{r.label}, W{w + 1}")
    a.set(xlabel="t (s)", ylabel="contact offset along wheel axis (mm)",
          title="contact point across the torus tread (rear wheels)")
    a.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the main free/locked pair only; write nothing")
    ap.add_argument("--no-write", action="store_true", help="run everything but write no files")
    args = ap.parse_args(argv)
    terrain = make_terrain()
    main_pair = free_vs_locked(terrain)
    print_pair("main: smooth terrain RMS 0.05 m, L 0.3 m, seed 6", *main_pair)
    if args.quick:
        return 0
    rows = {"main: smooth terrain RMS 0.05 m, L 0.3 m, seed 6, Δt 0.01 s": main_pair}
    variants = {
        "same, Δt = 0.005 s": (terrain, "torus", {"dt": 0.005}),
        "same, speed 0.6 m/s (5 s)": (terrain, "torus", {"speed": 0.6, "duration": 5.0}),
        "same, thin-disk wheels": (terrain, "cylinder", {}),
        "same field, bilinear HeightGrid": (make_terrain(smooth=False), "torus", {}),
        "same field, bilinear, Δt = 0.005 s": (make_terrain(smooth=False), "torus", {"dt": 0.005}),
    }
    for seed in (1, 2, 3):
        variants[f"gentle: smooth RMS 0.03 m, L 0.5 m, seed {seed}"] = (make_terrain(0.03, 0.5, seed), "torus", {})
    for seed in (1, 2, 3, 4, 5):
        variants[f"rough: smooth RMS 0.05 m, L 0.3 m, seed {seed}"] = (make_terrain(0.05, 0.3, seed), "torus", {})
    for seed in (1, 3):
        variants[f"rough seed {seed}, no joint limits"] = (make_terrain(0.05, 0.3, seed), "torus",
                                                           {"joint_limits": False})
    very_rough = make_terrain(0.08, 0.5, 1, bounds=(-2.0, 6.0, -2.0, 2.0))
    variants["very rough: RMS 0.08 m, L 0.5 m, bounds (-2, 6, -2, 2), seed 1"] = (very_rough, "torus", {})
    variants["very rough, no joint limits"] = (very_rough, "torus", {"joint_limits": False})
    for name, (ter, shape, kw) in variants.items():
        rows[name] = free_vs_locked(ter, shape, **kw)
        print_pair(name, *rows[name])
    if args.no_write:
        print(results_markdown(rows))
        return 0
    plot(*main_pair, terrain, FIGURE)
    write_doc(rows)
    print(f"wrote {FIGURE.relative_to(REPO)} and the generated block of {DOC.relative_to(REPO)}")
    return 0


BEGIN, END = "<!-- BEGIN GENERATED by benchmarks/auchter_pvc.py -->", "<!-- END GENERATED -->"


def results_markdown(rows: dict[str, tuple[PvcRun, PvcRun]]) -> str:
    """The generated part of docs/auchter_pvc.md: the main result and the table of all runs."""
    free, locked = next(iter(rows.values()))
    f, lk = free.summary(), locked.summary()
    main = [
        "| main run | max tangential slip (m/s) | mean (m/s) | max ‖r‖ (m/s) | PVC range pvc2 / pvc3 (rad) "
        "| min σ(A_u) |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| PVC free | {f['max_slip']:.1e} | {f['mean_slip']:.1e} | {f['max_residual']:.1e} | "
        f"{f['gamma_range'][0]:.3f} / {f['gamma_range'][1]:.3f} | {f['min_sv']:.3f} |",
        f"| PVC locked at 0 | {lk['max_slip']:.2e} | {lk['mean_slip']:.2e} | {lk['max_residual']:.2e} | 0 / 0 | "
        f"{lk['min_sv']:.3f} |",
    ]
    settings = [("run", f"straight at {free.speed} m/s for {free.t[-1] + free.dt:g} s, Δt = {free.dt} s, σ = 1/Δt"),
                ("Python; wall time per run", f"{platform.python_version()}; {free.wall_s:.1f} s")]
    return "\n".join([BEGIN, figures_table(settings, ("setting", "value")), "", *main, "", "All runs:", "",
                       TABLE_HEAD, *(_row(k, *v) for k, v in rows.items()), END])


def write_doc(rows: dict[str, tuple[PvcRun, PvcRun]], path: Path = DOC) -> None:
    """Replace the generated block of ``path`` (or create the file with only that block)."""
    block = results_markdown(rows)
    text = path.read_text() if path.exists() else f"# Passive Variable Camber and kinematic slip\n\n{BEGIN}\n{END}\n"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
