#!/usr/bin/env python3
"""Force-vs-slip curves of the bundled contact models (docs/contact_models.md), as thesis Figs. C.1–C.3, C.5.

Usage: ``python benchmarks/plot_contact_models.py [out.png]`` (default ``docs/figures/contact_models.png``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

from wmr_dynamics.contact_models import DingContact, IshigamiContact, LinearContact, PacejkaContact  # noqa: E402

R, B = 0.09, 0.11  # El-Dorado II-like wheel, m


def main(out: Path) -> None:
    fig, ax = plt.subplots(2, 3, figsize=(15, 8.5))

    # (a) piecewise linear, Fig. C.1: f_x/f_z vs slip velocity, pyramid cap mu = 1
    lin = LinearContact.from_vehicle(14.0, 6)
    vx = np.linspace(-0.5, 0.5, 401)
    n = vx.size
    f = lin.evaluate(np.c_[vx, np.zeros(n), np.zeros(n)], np.zeros(n), np.full(n, lin.dz_target))[0]
    a = ax[0, 0]
    a.plot(vx, f[:, 0] / f[:, 2])
    a.set(title="linear (C.3–C.8), Rocky 7 'uniform'", xlabel="slip velocity $v_x$ (m/s)", ylabel="$f_x/f_z$")

    # (b) Pacejka pure slip, Fig. C.2
    pj = PacejkaContact(kp=1000.0)
    s = np.linspace(-1, 1, 401)
    a = ax[0, 1]
    a.plot(s, pj.longitudinal_curve(s), label="$f'_x/f_z$ vs $s$ (C.13)")
    a.plot(s, pj.lateral_curve(s * np.pi / 2), label="$f'_y/f_z$ vs $2α/π$ (C.14)")
    a.set(title="Pacejka, Table C.1 (pure slip)", xlabel="$s$ or $2α/π$", ylabel="normalized force")
    a.legend(fontsize=8)

    # (c) Pacejka / Nicolas–Comstock combined slip, Fig. C.3: f_x/f_z vs s for several α (V_x = 1 m/s)
    a = ax[0, 2]
    Vx = 1.0
    for alpha in (0.0, 0.05, 0.2, 0.5):
        vxs = -s * Vx  # s = −v_x/V_x
        v = np.c_[vxs, np.full(n, np.tan(alpha) * Vx), np.zeros(n)]
        f = pj.evaluate(v, Vx - vxs, np.full(n, -0.01))[0]
        a.plot(s, f[:, 0] / f[:, 2], label=f"α = {alpha:g} rad")
    a.set(title="Pacejka/Nicolas–Comstock (C.16–C.18)", xlabel="slip ratio $s$", ylabel="$f_x/f_z$")
    a.legend(fontsize=8)

    # (d, e) Ishigami, Fig. C.5: fixed sinkage, f_x/f_z and f_z vs s for several β
    ish = IshigamiContact(R, B)
    s2 = np.linspace(-1, 1, 201)
    for beta in (0.0, 0.1, 0.3, 0.6):
        r = ish.slip_forces(s2, beta, 0.01)
        ax[1, 0].plot(s2, r["f_x"] / r["f_z"], label=f"β = {beta:g} rad")
        ax[1, 1].plot(s2, r["f_z"], label=f"β = {beta:g} rad")
    ax[1, 0].set(title="Ishigami (C.19–C.36), Δz = −0.01 m", xlabel="slip ratio $s$", ylabel="$f_x/f_z$")
    ax[1, 1].set(title="Ishigami: normal force, Δz = −0.01 m", xlabel="slip ratio $s$", ylabel="$f_z$ (N)")
    ax[1, 0].legend(fontsize=8)

    # (f) Ding, eq. 16: drawbar pull vs slip at constant wheel load (sinkage solved for F_N = load),
    # Toyoura sand (flat), El-Dorado II-like 30 kg on 4 wheels, W̄ = 73.6 N
    wbar = 30 * 9.81 / 4
    ding = DingContact(R, B, mean_wheel_load=wbar)
    s3 = np.linspace(0.02, 1.0, 50)
    for load in (0.7 * wbar, wbar, 1.3 * wbar):
        h = [brentq(lambda z, si=si, w=load: ding.slip_forces(si, 0.0, z)["f_z"] - w, 1e-5, 0.045) for si in s3]
        dp = ding.slip_forces(s3, 0.0, np.array(h))["f_x"]
        ax[1, 2].plot(s3, dp / load, label=f"load {load:.0f} N (sinkage {1e3 * h[0]:.0f}→{1e3 * h[-1]:.0f} mm)")
    ax[1, 2].set(title="Ding et al. eq. 16, Toyoura sand, constant load", xlabel="slip ratio $s$",
                 ylabel="$F_{DP}$ / load")
    ax[1, 2].legend(fontsize=8)

    for a in ax.flat:
        a.grid(alpha=0.3)
        a.axhline(0, color="k", lw=0.5)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1] / "docs" / "figures" / "contact_models.png"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
