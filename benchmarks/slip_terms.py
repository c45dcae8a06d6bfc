#!/usr/bin/env python3
"""Which body-slip terms the synthetic truths need: a least-squares study behind docs/calibration.md's limits.

For each vehicle and ground of ``benchmarks/calibration.py`` (flat terrain, the same first drive), the truth
(dynamic model, Pacejka contact) is driven without sensor noise; the kinematic model is fed the truth's
wheel rates on the level plane.  The body-velocity error of the kinematic model (v_x, v_y, ω_z; truth minus
model, body axes) is regressed on candidate terms, each velocity on its own terms, by least squares over
the whole drive; the fitted velocities are integrated over 10 m segments of the truth's path and scored by
the mean end-position error against the truth — the 10 m metric of Tables 3.4–3.8 without the pose sensor's
noise.  Terms (V = v_x, W = ω_z of the kinematic model, a_c = V·W/G its centripetal load, A = dV/dt,
Ẇ = dW/dt):

- ``eqs. 2.48–2.49``: v_x ← V (p2; p1's force is zero on level ground); v_y ← a_c·V (p3); ω_z ← a_c·V, V, W
  (p4, p5, p6);
- ``+ acceleration``: also v_x ← A, A·|V| (the body lags the wheels); ω_z ← Ẇ;
- ``+ v_y ∝ W``: a lateral velocity in proportion to the yaw rate (the centre of rotation off the origin);
- ``+ nonlinear yaw``: ω_z ← W|W|, W³;
- ``all``: every term above.

Usage::

    python benchmarks/slip_terms.py     # about 1 min; writes the section "slip_terms" of docs/calibration.md
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import update_section  # noqa: E402
from calibration import DOC, SEEDS, VEHICLES  # noqa: E402

from wmr_dynamics import load_model  # noqa: E402
from wmr_dynamics.calibration.synthetic import DriveSpec, drive, terrain_for, truth_model  # noqa: E402
from wmr_dynamics.model import G  # noqa: E402
from wmr_dynamics.stepper import Stepper  # noqa: E402
from wmr_dynamics.terrain import Plane  # noqa: E402

GROUNDS = ("asphalt", "dirt", "grass")


def twists(vehicle: str, ground: str) -> tuple[np.ndarray, np.ndarray, float]:
    """(n, 3) truth and kinematic-model body velocities (v_x, v_y, ω_z) of a noise-free drive, and its Δt (s)."""
    model = load_model(vehicle)
    v_max, w_max = VEHICLES[vehicle]
    spec = DriveSpec(v_max=v_max, w_max=w_max, seed=SEEDS[(vehicle, ground, "flat")])
    run = drive(truth_model(model, ground), terrain_for("flat", spec), spec, progress=False)
    cols = [6 + model.joint_index(n) for n in model.actuated_joint_names]
    st = Stepper(model, Plane(), "kinematic", run.dt)
    data = st.make_data()
    kin = np.empty((len(run.t), 3))
    for k, rates in enumerate(run.qvel[:, cols]):
        st.advance(data, 1, rates=rates, clip=False)  # the truth's own rates, at the limits to round-off
        kin[k] = data.qvel[3], data.qvel[4], data.qvel[2]
    truth = run.qvel[:, [3, 4, 2]]
    return truth, kin, run.dt


def segment_error(model_tw: np.ndarray, truth: np.ndarray, dt: float) -> float:
    """Mean end-position error (m) of ``model_tw`` integrated in the plane over 10 m segments of the truth."""
    s = np.r_[0.0, np.cumsum(np.abs(truth[:-1, 0]) * dt)]
    ends = [0]
    while (j := int(np.searchsorted(s, s[ends[-1]] + 10.0))) < len(s):
        ends.append(j)

    def end(tw: np.ndarray) -> np.ndarray:  # the planar dead-reckoned end position of one segment
        th = np.r_[0.0, np.cumsum(tw[:-1, 2] * dt)]
        return np.array([np.sum((tw[:, 0] * np.cos(th) - tw[:, 1] * np.sin(th)) * dt),
                         np.sum((tw[:, 0] * np.sin(th) + tw[:, 1] * np.cos(th)) * dt)])

    return float(np.mean([np.linalg.norm(end(model_tw[a:b]) - end(truth[a:b]))
                          for a, b in zip(ends[:-1], ends[1:], strict=True)]))


def fit(truth: np.ndarray, kin: np.ndarray, dt: float, terms: set[str]) -> np.ndarray:
    """The kinematic velocities plus the least-squares fit of the chosen term groups to the truth's error."""
    V, W = kin[:, 0], kin[:, 2]
    a_c = V * W / G
    smooth = np.convolve(V, np.ones(5) / 5, mode="same"), np.convolve(W, np.ones(5) / 5, mode="same")
    A, Wd = np.gradient(smooth[0], dt), np.gradient(smooth[1], dt)
    cols = {0: [V], 1: [a_c * V], 2: [a_c * V, V, W]}  # eqs. 2.48–2.49 on level ground
    if "acceleration" in terms:
        cols[0] += [A, A * np.abs(V)]
        cols[2] += [Wd]
    if "lateral" in terms:
        cols[1] += [W]
    if "yaw" in terms:
        cols[2] += [W * np.abs(W), W ** 3]
    out = kin.copy()
    for j, c in cols.items():
        X = np.column_stack(c)
        coef, *_ = np.linalg.lstsq(X, truth[:, j] - kin[:, j], rcond=None)
        out[:, j] += X @ coef
    return out


VARIANTS = {"eqs. 2.48–2.49": set(), "+ acceleration": {"acceleration"}, "+ v_y ∝ W": {"lateral"},
            "+ nonlinear yaw": {"yaw"}, "all": {"acceleration", "lateral", "yaw"}}


def main() -> int:
    t0 = time.perf_counter()
    lines = ["| vehicle | ground | kin. pos. err. (m) | " + " | ".join(VARIANTS) + " |", "| --- " * (3 + len(VARIANTS))
             + "|"]
    for vehicle in VEHICLES:
        for ground in GROUNDS:
            print(f"{vehicle} {ground} ...", file=sys.stderr, flush=True)
            truth, kin, dt = twists(vehicle, ground)
            e0 = segment_error(kin, truth, dt)
            cells = [f"{100 * (1 - segment_error(fit(truth, kin, dt, t), truth, dt) / e0):.0f} %"
                     for t in VARIANTS.values()]
            lines.append(f"| {vehicle} | {ground} | {e0:.3f} | " + " | ".join(cells) + " |")
    text = (f"Reduction of the mean 10 m position error against the kinematic model, flat ground, noise-free "
            f"(`python benchmarks/slip_terms.py`, {time.perf_counter() - t0:.0f} s).\n\n" + "\n".join(lines) + "\n")
    update_section(DOC, "slip_terms", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
