"""A calibration report folder: the thesis's figures (Figs. 3.5-3.9) and a Markdown summary with tables in the
form of Tables 3.3-3.8 (matplotlib with the Agg backend; headless-safe)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.calibration.calibrate import CalibrationResult
from wmr_dynamics.calibration.predict import Predictor, intervals


def _ellipse(cov: NDArray, k: float = 1.0, n: int = 64) -> NDArray:
    """(n, 2) points of the k-sigma ellipse of a 2 × 2 covariance."""
    w, V = np.linalg.eigh(cov)
    a = np.linspace(0, 2 * np.pi, n)
    return (V @ (k * np.sqrt(np.maximum(w, 0))[:, None] * np.vstack([np.cos(a), np.sin(a)]))).T


def write_report(folder: str | Path, result: CalibrationResult, pred: Predictor, title: str = "") -> list[Path]:
    """Figures and ``report.md`` in ``folder`` (created); returns the written files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    # Fig. 3.5: parameters vs iteration
    if result.history:
        P = np.array([h.p for h in result.history])
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, name in enumerate(result.names):
            ax.plot(np.arange(1, len(P) + 1), P[:, i], label=name)
        ax.set_xlabel("iteration (interval)")
        ax.set_ylabel("parameter value")
        ax.set_title(f"{title} parameters vs iteration (cf. thesis Fig. 3.5)")
        ax.legend(ncol=3, fontsize=8)
        ax.grid(alpha=0.3)
        files.append(_save(fig, out / "parameters.png"))
    for label, after in result.after.items():
        before = result.before[label]
        tag = label.replace(" ", "")
        # Figs. 3.6 / 3.8: error scatter in the initial body frame, sample vs predicted covariance
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
        for ax, ev, name in ((axes[0], before, "uncalibrated"), (axes[1], after, "calibrated")):
            r = ev.residual_body
            ax.plot(r[:, 0], r[:, 1], ".", ms=4, alpha=0.7)
            if len(r) > 2:
                ax.plot(*(r[:, :2].mean(0) + _ellipse(np.cov(r[:, :2].T))).T, "r-", label="sample covariance")
            ax.plot(*_ellipse(ev.cov_body[:, :2, :2].mean(0)).T, "g--", label="predicted (mean R_mu)")
            ax.set_title(f"{name}: mean error {ev.summary['mean_position_error_m']:.3f} m")
            ax.set_xlabel("along-track error, m")
            ax.axis("equal")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("cross-track error, m")
        axes[1].legend(fontsize=8)
        fig.suptitle(f"{title} final position errors, {label} horizon (cf. Figs. 3.6, 3.8)")
        files.append(_save(fig, out / f"error_scatter_{tag}.png"))
        # Fig. 3.9: yaw error histogram with sample and predicted standard deviations
        fig, ax = plt.subplots(figsize=(6, 4))
        y = after.residual_body[:, 2]
        ax.hist(y, bins=max(8, len(y) // 4), alpha=0.7)
        sd, sp = float(np.std(y)), float(np.sqrt(after.cov_body[:, 2, 2].mean()))
        for v, style, name in ((sd, "r-", "sample std"), (sp, "g--", "predicted std")):
            ax.axvline(v, color=style[0], ls=style[1:], label=f"{name} {v:.4f} rad")
            ax.axvline(-v, color=style[0], ls=style[1:])
        ax.set_xlabel("yaw error, rad")
        ax.set_title(f"{title} calibrated yaw errors, {label} (cf. Fig. 3.9)")
        ax.legend(fontsize=8)
        files.append(_save(fig, out / f"yaw_errors_{tag}.png"))
    files.append(_paths_figure(out / "paths.png", result, pred, title, plt))
    md = out / "report.md"
    md.write_text(report_markdown(result, title))
    files.append(md)
    return files


def _paths_figure(path: Path, result: CalibrationResult, pred: Predictor, title: str, plt) -> Path:  # noqa: ANN001
    """Fig. 3.7: measured and predicted paths of a few 4 s intervals, 1-sigma ellipses at each second."""
    from wmr_dynamics.calibration.ipem import propagate

    ivs = intervals(pred.log, 4.0)
    pick = [ivs[i] for i in np.linspace(0, len(ivs) - 1, min(4, len(ivs))).astype(int)] if ivs else []
    fig, axes = plt.subplots(1, max(1, len(pick)), figsize=(4 * max(1, len(pick)), 4), squeeze=False)
    log = pred.log
    for ax, iv in zip(axes[0], pick, strict=False):
        m = (log.pose_t >= iv.t0) & (log.pose_t <= iv.t1)
        ax.plot(log.pose[m, 0], log.pose[m, 1], "k-", lw=2, label="measured")
        for p, style, name in ((pred.nominal, "b--", "uncalibrated"), (result.p, "r-", "calibrated")):
            pts = [log.pose[iv.i0]]
            for t_end in np.arange(iv.t0 + 1.0, iv.t1 + 1e-6, 1.0):
                sub = _sub_interval(iv, pred, t_end)
                x, tr = pred.predict(sub, p, trace=True)
                pts.append(x)
                if name == "calibrated":
                    P, _ = propagate(tr, log.pose_cov[iv.i0], result.s)
                    ax.plot(*(x[:2] + _ellipse(P[:2, :2])).T, "r:", lw=0.8)
            pts = np.array(pts)
            ax.plot(pts[:, 0], pts[:, 1], style, label=name)
        ax.axis("equal")
        ax.set_title(f"t {iv.t0:.0f}-{iv.t1:.0f} s", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{title} predicted vs measured paths, 4 s intervals, 1-sigma ellipses at 1 s (cf. Fig. 3.7)")
    return _save(fig, path)


def _sub_interval(iv, pred: Predictor, t_end: float):  # noqa: ANN001, ANN202
    from wmr_dynamics.calibration.predict import Interval

    jt = pred.log.joint_t
    return Interval(iv.i0, iv.i1, iv.t0, float(t_end), iv.k0, int(np.searchsorted(jt, t_end, side="left")))


def report_markdown(result: CalibrationResult, title: str = "") -> str:
    """Tables like thesis Tables 3.3-3.5: mean errors per horizon before/after and the reductions."""
    lines = [f"# Calibration report{': ' + title if title else ''}", "",
             f"Model `{result.kind}`; {result.accepted} of {result.intervals} intervals used.", "",
             "| parameter | value | std |", "| --- | --- | --- |"]
    for i, (n, v) in enumerate(result.parameters.items()):
        sd = math.sqrt(max(float(result.cov[i, i]), 0.0))
        lines.append(f"| {n} | {v:+.5f} | {sd:.5f} |")
    s2 = result.s ** 2
    lines += ["", f"Q' = diag({s2[0]:.3g} m²/s, {s2[1]:.3g} m²/s, {s2[2]:.3g} rad²/s)", "",
              "| horizon | model | intervals | mean pos. err. (m) | mean yaw err. (rad) | mean NEES (3 dof) |",
              "| --- | --- | --- | --- | --- | --- |"]
    for h, after in result.after.items():
        for name, ev in (("uncalibrated", result.before[h]), ("calibrated", after)):
            s = ev.summary
            lines.append(f"| {h} | {name} | {s['intervals']} | {s['mean_position_error_m']:.4f} | "
                         f"{s['mean_yaw_error_rad']:.4f} | {s['mean_nees']:.2f} |")
    red = result.summary()["horizons"]
    lines += ["", "| horizon | pos. err. reduction | yaw err. reduction |", "| --- | --- | --- |"]
    for h, v in red.items():
        r = v["reduction_pct"]
        lines.append(f"| {h} | {r['mean_position_error_m']:.1f} % | {r['mean_yaw_error_rad']:.1f} % |")
    return "\n".join(lines) + "\n"


def _save(fig, path: Path) -> Path:  # noqa: ANN001
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
