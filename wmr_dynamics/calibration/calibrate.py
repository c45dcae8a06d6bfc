"""Calibrate a motion model to a driving log (IPEM, thesis Ch. 3) and write the parameters as the YAML that
``wmr-odometry --params``, ``odometry_node`` and :class:`~wmr_dynamics.odometry.OdometryParams` read.

The YAML (written atomically after every interval of online calibration, so an interrupted run keeps what it
had learned)::

    model: enhanced              # kinematic | enhanced (the odometry model); diffdrive for the baseline
    slip: [p1, ..., p6]          # body slip, eqs. 2.48-2.49 (enhanced)
    wheels: {FL_joint: {radius: 0.41}, ...}   # calibrated radii (kinematic: radius_scale x the URDF's)
    process_noise: {v_x: .., v_y: .., omega_z: .., units: ...}   # Q' = diag(s^2), eqs. 3.40-3.41
    covariance: {parameters: [p1, ...], matrix: [[...]]}         # of the systematic parameters
    sensor_offset: [x, y, z]     # pose sensor in the body frame, m (eq. 3.57)
    calibration: {...}           # how it was made: log, intervals, accepted, horizon
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from numpy.typing import NDArray

from wmr_dynamics.calibration.ipem import (
    DEFAULT_S0,
    Evaluation,
    OnlineIpem,
    OnlineSettings,
    Step,
    calibrate_offline,
    evaluate,
    prior_std,
)
from wmr_dynamics.calibration.log import CalibrationError, DrivingLog
from wmr_dynamics.calibration.predict import Predictor, intervals
from wmr_dynamics.model import WmrModel

#: horizons every calibration is evaluated on, besides its own: 10 m segments (thesis Tables 3.4-3.8)
EVAL_SEGMENT_M = 10.0


@dataclass
class CalibrationResult:
    """Calibrated parameters and how the model predicts before and after.

    Attributes:
        kind: the motion model.  names, p: the systematic parameters.  cov: their covariance.
        s: the stochastic parameters (√ spectral densities of v_x, v_y m²/s and ω_z rad²/s).
        history: online calibration's record per interval (empty offline).
        before, after: :class:`Evaluation` per horizon label ("2 s", "10 m"): the uncalibrated model (p
            nominal) and the calibrated one.
    """

    kind: str
    names: tuple[str, ...]
    p: NDArray
    s: NDArray
    cov: NDArray
    history: list[Step] = field(default_factory=list)
    before: dict[str, Evaluation] = field(default_factory=dict)
    after: dict[str, Evaluation] = field(default_factory=dict)
    intervals: int = 0
    accepted: int = 0

    @property
    def parameters(self) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.names, self.p, strict=True)}

    def summary(self) -> dict:
        """JSON-ready: parameters, and per horizon the mean errors before/after and their reductions (%)."""
        out = {"model": self.kind, "intervals": self.intervals, "accepted": self.accepted,
               "parameters": self.parameters, "process_noise": [float(x) for x in self.s ** 2], "horizons": {}}
        for h, after in self.after.items():
            b, a = self.before[h].summary, after.summary
            red = {k: (100.0 * (1.0 - a[k] / b[k]) if b[k] else None)
                   for k in ("mean_position_error_m", "mean_yaw_error_rad")}
            out["horizons"][h] = {"before": b, "after": a, "reduction_pct": red}
        return out


def params_mapping(model: WmrModel, result: CalibrationResult, pred: Predictor, source: str = "") -> dict:
    """The YAML mapping of the calibrated parameters (see the module docstring)."""
    par = result.parameters
    kind = result.kind
    out: dict = {"model": kind, "vehicle": model.name}
    if kind == "enhanced":
        out["slip"] = [par[f"p{i}"] for i in range(1, 7)]
    elif kind == "diffdrive":
        out["alpha"] = par["alpha"]
    elif kind == "dynamic":  # a vehicle YAML contact block (wmr-sim, load_model)
        params = {k: (float(v) if isinstance(v, (int, float, np.floating)) else v)
                  for k, v in pred.contact_params(result.p).items()}
        out["contact"] = {"model": pred.contact_name, "params": params}
        if "cg_x" in par:
            out["cg_offset"] = [par["cg_x"], par["cg_y"]]
    if "track_scale" in par:
        out["track_scale"] = par["track_scale"]
    if "radius_scale" in par:
        out["wheels"] = {j: {"radius": float(w.radius * par["radius_scale"])}
                         for j, w in zip(model.wheel_joint_names, model.wheels, strict=True)}
    s2 = result.s ** 2
    out["process_noise"] = {"v_x": float(s2[0]), "v_y": float(s2[1]), "omega_z": float(s2[2]),
                            "units": "spectral densities of white noise on the body velocity: m^2/s, m^2/s, "
                                     "rad^2/s (thesis eq. 3.13's Q')"}
    out["covariance"] = {"parameters": list(result.names), "matrix": np.round(result.cov, 12).tolist()}
    offset = pred.sensor_offset.copy()
    offset[:2] = par.get("sensor_x", offset[0]), par.get("sensor_y", offset[1])
    out["sensor_offset"] = [float(v) for v in offset]
    out["calibration"] = {"log": source, "intervals": result.intervals, "accepted": result.accepted}
    out["calibration_parameters"] = {n: float(v) for n, v in par.items()}  # as calibrated (a restart resumes)
    out["note"] = "written by wmr-calibrate (IPEM, Seegmiller 2014 ch. 3)"
    return out


def write_params(path: str | Path, mapping: dict) -> Path:
    """Write the parameter YAML atomically (a reader never sees half a file)."""
    from wmr_dynamics.io.output import atomic_write_text

    return atomic_write_text(Path(path), yaml.safe_dump(mapping, sort_keys=False, width=120, default_flow_style=None))


def calibrate(model: WmrModel, log: DrivingLog, kind: str = "enhanced", interval_s: float | None = 2.0,
              segment_m: float | None = None, online: bool = True, offline: bool = False,
              settings: OnlineSettings | None = None, out: str | Path | None = None, sensor_params: bool = False,
              progress: Callable[[str], None] | None = None, contact: str | None = None,
              cg_params: bool = False) -> CalibrationResult:
    """Calibrate ``kind`` (``enhanced``, ``kinematic``, ``diffdrive`` or ``dynamic``) to ``log``.

    Args:
        interval_s / segment_m: the prediction horizon: intervals of this many seconds, or path segments of
            this many metres (then ``interval_s`` is ignored).
        online: the identification EKF over the intervals in time order (§3.2.4).  offline: batch
            calibration (eqs. 3.44-3.47), started from the online result when both are asked.
        out: parameter YAML, rewritten atomically after every online interval and at the end.
        sensor_params: calibrate the pose sensor's (x, y) offset too.
        progress: called with one line per interval (and per offline iteration).
        contact: dynamic model: the contact model whose constants are calibrated (default the vehicle YAML's).
        cg_params: dynamic model: calibrate the centre-of-gravity offset (x, y) too.
    """
    if not (online or offline):
        raise CalibrationError("calibrate: choose online, offline or both")
    settings = settings or OnlineSettings()
    pred = Predictor(model, log, kind, sensor_params, contact=contact, cg_params=cg_params)
    ivs = intervals(log, None if segment_m else interval_s, segment_m)
    if len(ivs) < 2:
        raise CalibrationError(f"{log.source}: only {len(ivs)} usable interval(s) of "
                               f"{f'{segment_m:g} m' if segment_m else f'{interval_s:g} s'} in a log of "
                               f"{log.duration:.1f} s (gaps, or too short)")
    p0 = pred.nominal
    result = CalibrationResult(kind, pred.names, p0.copy(), np.array(settings.s0, dtype=float),
                               np.diag(prior_std(pred, settings.p_std, len(p0)) ** 2), intervals=len(ivs))

    def save() -> None:
        if out is not None:
            write_params(out, params_mapping(model, result, pred, log.source))

    if online:
        ekf = OnlineIpem(pred, p0, settings)
        try:
            for k, iv in enumerate(ivs):
                st = ekf.update(iv)
                result.p, result.s, result.cov = ekf.p, ekf.s, ekf.cov[:len(p0), :len(p0)]
                result.history, result.accepted = ekf.history, ekf.accepted
                if progress:
                    progress(_progress_line(k, len(ivs), st, pred.names))
                save()
        finally:
            save()
    if offline:
        p, s, cov = calibrate_offline(pred, ivs, result.p, result.s, settings.gate, p_std=settings.p_std,
                                      progress=progress)
        result.p, result.s, result.cov = p, s, cov
        result.accepted = result.accepted or len(ivs)
        save()
    horizons = {f"{segment_m:g} m" if segment_m else f"{interval_s:g} s": ivs}
    if not segment_m or segment_m != EVAL_SEGMENT_M:
        seg = intervals(log, None, EVAL_SEGMENT_M)
        if seg:
            horizons[f"{EVAL_SEGMENT_M:g} m"] = seg
    for label, hv in horizons.items():
        result.before[label] = evaluate(pred, hv, p0, result.s)
        result.after[label] = evaluate(pred, hv, result.p, result.s)
    return result


def _progress_line(k: int, n: int, st: Step, names: tuple[str, ...]) -> str:
    if st.failed:
        return (f"interval {k + 1}/{n} t {st.interval.t0:7.1f}-{st.interval.t1:7.1f} s: skipped, the model failed: "
                f"{st.failed}")
    pos = math.hypot(st.r[0], st.r[1])
    flag = "" if st.accepted else f"  rejected (Mahalanobis {st.mahalanobis:.1f})"
    par = " ".join(f"{nm}={v:+.4f}" for nm, v in zip(names, st.p, strict=True))
    return (f"interval {k + 1}/{n} t {st.interval.t0:7.1f}-{st.interval.t1:7.1f} s: error {pos:.3f} m "
            f"{st.r[2]:+.4f} rad | {par}{flag}")


__all__ = ["DEFAULT_S0", "CalibrationResult", "calibrate", "params_mapping", "write_params"]
