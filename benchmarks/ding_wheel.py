#!/usr/bin/env python3
"""Ding et al.'s single-wheel trends (their Fig. 7: drawbar pull and resistance moment against slip) from our
``ding`` contact model, for two wheel loads.

El-Dorado II's wheel (r = 0.09 m, b = 0.11 m, 15 lugs of 5 mm: the bundled ``eldorado2``) on Toyoura sand
with the paper's flat-terrain parameters (Sec. V-B).  For each load W and slip ratio s the sinkage is found
by bisection so that the model's normal force F_N equals W (the wheel in steady state), then the drawbar
pull F_DP and the resistance moment M_R (the drive torque the motor must supply) are read off.
W̄ of eq. 16 is the load itself (one wheel carrying the mean load: no normal-force compensation).

Writes ``docs/figures/ding_wheel.png`` and the table of ``docs/ding_wheel.md``.  Usage::

    python benchmarks/ding_wheel.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from wmr_dynamics.contact_models import make_contact_model

ROOT = Path(__file__).resolve().parents[1]
RADIUS, WIDTH, LUG = 0.09, 0.11, 0.005  # m, El-Dorado II (Ding et al. Sec. V-A; urdf/eldorado2.urdf)
LOADS = (73.6, 110.4)  # N: a quarter of El-Dorado II's 30 kg, and 1.5 times that
SLIPS = np.round(np.arange(0.0, 0.61, 0.1), 2)


def sinkage_for_load(model, s: float, load: float) -> float:  # noqa: ANN001
    """The rim sinkage (m) at which the wheel's normal force equals ``load`` (N), by bisection."""
    lo, hi = 0.0, RADIUS
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        fz = model.slip_forces(s, 0.0, mid, mean_wheel_load=load)["f_z"]
        lo, hi = (mid, hi) if fz < load else (lo, mid)
    return 0.5 * (lo + hi)


def curves() -> dict[float, dict[str, np.ndarray]]:
    model = make_contact_model("ding", radius=RADIUS, width=WIDTH, lug_height=LUG)
    out = {}
    for load in LOADS:
        rows = []
        for s in SLIPS:
            z = sinkage_for_load(model, float(s), load)
            f = model.slip_forces(float(s), 0.0, z, mean_wheel_load=load)
            rows.append((z, float(f["f_x"]), float(f["M_R"]), float(f["f_z"])))
        z, dp, mr, fz = (np.array(c) for c in zip(*rows, strict=True))
        out[load] = {"sinkage": z, "F_DP": dp, "M_R": mr, "F_N": fz}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    res = curves()
    lines = ["| load W (N) | slip s | sinkage (mm) | drawbar pull F_DP (N) | resistance moment M_R (N·m) |",
             "| --- | --- | --- | --- | --- |"]
    for load, c in res.items():
        for k, s in enumerate(SLIPS):
            lines.append(f"| {load:g} | {s:.1f} | {1e3 * c['sinkage'][k]:.1f} | {c['F_DP'][k]:.1f} | "
                         f"{c['M_R'][k]:.3f} |")
    table = "\n".join(lines)
    print(table)
    if args.no_write:
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(9, 3.6))
    for load, c in res.items():
        ax[0].plot(SLIPS, c["F_DP"], "o-", label=f"W = {load:g} N")
        ax[1].plot(SLIPS, c["M_R"], "o-", label=f"W = {load:g} N")
    ax[0].set(xlabel="slip ratio s", ylabel="drawbar pull F_DP (N)", title="Drawbar pull (Ding Fig. 7 trend)")
    ax[1].set(xlabel="slip ratio s", ylabel="resistance moment M_R (N·m)", title="Drive torque needed")
    for a in ax:
        a.grid(True, alpha=0.3)
        a.legend()
    fig.tight_layout()
    (ROOT / "docs" / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(ROOT / "docs" / "figures" / "ding_wheel.png", dpi=110)
    doc = ROOT / "docs" / "ding_wheel.md"
    text = doc.read_text()
    start, end = "<!-- BEGIN table -->", "<!-- END table -->"
    doc.write_text(text[:text.index(start) + len(start)] + "\n" + table + "\n" + text[text.index(end):])
    return 0


if __name__ == "__main__":
    sys.exit(main())
