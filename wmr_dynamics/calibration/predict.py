"""Interval predictions for IPEM (thesis §3.2.1, §3.3.1): x_pred(t) = g(x_meas(t0), u(*), p) (eq. 3.26).

The prediction of an interval [t0, t] starts at the measured pose of the pose sensor at t0, moved to the
body frame by the sensor offset (eq. 3.57), integrates the motion model over the logged inputs (actuated
joint rates from the encoders, roll and pitch from the IMU), and moves the predicted body pose back to the
sensor (eq. 3.58).  No pose measurement inside the interval is used.  The residual (eqs. 3.3, 3.56) is
r = [x, y, ψ]_meas(t) − [x, y, ψ]_pred(t), ψ wrapped.

Motion models (``kind``):

- ``"enhanced"`` / ``"kinematic"``: the vehicle's 3D (enhanced) kinematic model on the compiled engine,
  exactly as the odometry node runs it (:mod:`wmr_dynamics.odometry`: the model on a level plane gives the
  body twist, dead-reckoned in 3D with the IMU's roll and pitch).  Parameters: the body slip p1…p6
  (eqs. 2.48–2.49) for ``enhanced``; a wheel-radius scale ``radius_scale`` for ``kinematic``.
- ``"diffdrive"``: differential drive, v_x = (v_l + v_r)/2, ω_z = α (v_r − v_l)/B (eqs. 3.64–3.66); parameter α.

Every model may also calibrate the pose sensor's offset from the body frame (``sensor_x``, ``sensor_y``, m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics import spatial
from wmr_dynamics.calibration.log import CalibrationError, DrivingLog
from wmr_dynamics.model import WmrModel
from wmr_dynamics.odometry import MAX_GAP_S, STEP_S, dead_reckon, model_variant

KINDS = ("enhanced", "kinematic", "diffdrive", "dynamic")
#: the dynamic model's calibrated contact constants, per contact model: log_X is ln(X / X_nominal) (X keeps
#: its sign); c_rr is the rolling-resistance coefficient as −|c_rr| (s/m; it must be <= 0, and the sign of the
#: parameter is immaterial, so the filter can cross 0 without sticking at a bound)
CONTACT_PARAMS = {"linear": ("log_c_slip", "log_mu", "c_rr"), "pacejka": ("log_mu", "log_Ks", "log_Ka", "c_rr")}
#: the parameters each model calibrates, and their values in the uncalibrated model
MODEL_PARAMS = {"enhanced": ("p1", "p2", "p3", "p4", "p5", "p6"), "kinematic": ("radius_scale", "track_scale"),
                "diffdrive": ("alpha",)}
NOMINAL = {"radius_scale": 1.0, "track_scale": 1.0, "alpha": 1.0}
SENSOR_PARAMS = ("sensor_x", "sensor_y")
#: each parameter's prior standard deviation (the filter's initial uncertainty and the offline prior) and its
#: plausible range [lo, hi] (estimates are kept inside it: a nonlinear model far from its estimate can be
#: linearized badly, and one interval must not throw it to values where its predictions make no sense).
#: Slip p1…p6 dimensionless; scales dimensionless; log_X = ln(X / X_nominal): a factor 0.1–10; offsets m.
#: c_rr (s/m; f_x = c_rr·Rω·f_z) depends on the log (:meth:`Predictor._range`).
PARAM_RANGE = {"radius_scale": (0.1, 0.5, 1.5), "track_scale": (0.2, 0.5, 2.0), "alpha": (0.5, 0.1, 3.0),
               "cg_x": (0.2, -1.0, 1.0), "cg_y": (0.2, -1.0, 1.0),
               "sensor_x": (0.5, -5.0, 5.0), "sensor_y": (0.5, -5.0, 5.0)}
PARAM_RANGE_SLIP = (0.5, -5.0, 5.0)
C_RR_MAX_LOAD = 0.3
PARAM_RANGE_LOG = (0.5, math.log(0.1), math.log(10.0))


@dataclass(frozen=True)
class Interval:
    """One prediction interval: pose measurements ``i0`` → ``i1`` (times t0 → t1, s); joint-state messages
    ``k0`` (the last at or before t0) … ``k1`` (the first at or after t1)."""

    i0: int
    i1: int
    t0: float
    t1: float
    k0: int
    k1: int


def intervals(log: DrivingLog, length_s: float | None = 2.0, distance_m: float | None = None) -> list[Interval]:
    """Consecutive, non-overlapping intervals of about ``length_s`` seconds — or, with ``distance_m``, of that
    measured path length (the thesis's 10 m LandTamer segments, §3.4.2) — between pose measurements.

    Intervals where a stream has a gap (joint states or IMU more than ``MAX_GAP_S`` apart, or joint rates
    unknown) are skipped: the next interval starts after the gap.
    """
    if distance_m is None and not (length_s and length_s > 0 and math.isfinite(length_s)):
        raise CalibrationError(f"interval length: expected a positive number of seconds, got {length_s!r}")
    if distance_m is not None and not (distance_m > 0 and math.isfinite(distance_m)):
        raise CalibrationError(f"segment length: expected a positive distance in m, got {distance_m!r}")
    jt, pt = log.joint_t, log.pose_t
    rates_ok = np.all(np.isfinite(log.rates()), axis=1)
    path = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(log.pose[:, :2], axis=0), axis=1))]
    out: list[Interval] = []
    i0 = 0
    while i0 < len(pt) - 1:
        if distance_m is not None:
            i1 = int(np.searchsorted(path, path[i0] + distance_m))
        else:
            i1 = int(np.searchsorted(pt, pt[i0] + length_s - 1e-6))
        if i1 >= len(pt):
            break
        t0, t1 = pt[i0], pt[i1]
        k0 = int(np.searchsorted(jt, t0, side="right")) - 1
        k1 = int(np.searchsorted(jt, t1, side="left"))
        ok = k0 >= 0 and k1 < len(jt) and np.all(np.diff(jt[k0:k1 + 1]) <= MAX_GAP_S) and rates_ok[k0:k1].all()
        if ok and len(log.imu_t):
            m = (log.imu_t >= t0) & (log.imu_t <= t1)
            ti = np.r_[t0, log.imu_t[m], t1]
            ok = bool(np.all(np.diff(ti) <= MAX_GAP_S))
        if ok and np.all(np.diff(pt[i0:i1 + 1]) >= 0):
            out.append(Interval(i0, i1, float(t0), float(t1), k0, k1))
        i0 = i1
    return out


@dataclass
class Trace:
    """What covariance propagation needs along a prediction: per integration segment its length dt (s),
    mid-segment yaw ψ (rad), body twist [ω_b; v_b] and the roll and pitch used (rad)."""

    dt: NDArray
    yaw: NDArray
    twist: NDArray
    roll: NDArray
    pitch: NDArray


class Predictor:
    """g(x_meas(t0), u(*), p) of eq. 3.26 for one log and one motion model (see the module docstring).

    Args:
        model: the vehicle.  log: the driving log.  kind: ``"enhanced"``, ``"kinematic"`` or ``"diffdrive"``.
        sensor_params: also calibrate the pose sensor's (x, y) offset in the body frame.
        sensor_offset: the (x, y, z) offset of the pose sensor in the body frame (m) when not calibrated.
        contact: dynamic model: the contact model to calibrate ("linear" or "pacejka"; default the vehicle
            YAML's), its constants from the vehicle YAML as the starting point.  cg_params: dynamic model: also
            calibrate the body's centre-of-gravity offset (x, y).
    """

    def __init__(self, model: WmrModel, log: DrivingLog, kind: str = "enhanced", sensor_params: bool = False,
                 sensor_offset: tuple[float, float, float] = (0.0, 0.0, 0.0), contact: str | None = None,
                 cg_params: bool = False) -> None:
        if kind not in KINDS:
            raise CalibrationError(f"model {kind!r}: expected one of {', '.join(KINDS)}")
        self.model, self.kind = model, kind
        if kind == "dynamic":
            self._dynamic_setup(contact)
            self.names = (*CONTACT_PARAMS[self.contact_name], "radius_scale") + (
                ("cg_x", "cg_y") if cg_params else ()) + (SENSOR_PARAMS if sensor_params else ())
        else:
            self.names = MODEL_PARAMS[kind] + (SENSOR_PARAMS if sensor_params else ())
        self.sensor_offset = np.array(sensor_offset, dtype=float)
        self._wheel = np.array([n in model.wheel_joint_names for n in model.actuated_joint_names])
        self.use_log(log)
        if kind == "diffdrive":
            self._diffdrive_setup()
        if kind != "diffdrive":
            from wmr_dynamics.kinematics.enhanced import SlipParams
            from wmr_dynamics.stepper import Stepper
            from wmr_dynamics.terrain import Plane

            self.stepper = Stepper(model, Plane(), mode="enhanced", dt=STEP_S, slip=SlipParams())
            self._q_rest = self.stepper.make_data().q.copy()
            self._slip = None
            self._track: dict = {}

    def use_log(self, log: DrivingLog) -> None:
        """Predict on another log of the same vehicle (online calibration: the latest window of messages)."""
        if list(log.joint_names) != list(self.model.actuated_joint_names):
            raise CalibrationError(f"{log.source}: the log's joints {log.joint_names} are not {self.model.name}'s "
                                   f"actuated joints {self.model.actuated_joint_names}")
        self.log = log
        self.rates = np.nan_to_num(log.rates())
        names = self.model.wheel_joint_names
        self._radius = np.array([self.model.wheels[names.index(n)].radius if n in names else 0.0
                                 for n in self.model.actuated_joint_names])  # m; 0 for a steering joint
        self._top_speed = float(np.max(np.abs(self.rates * self._radius), initial=0.0))  # m/s, the fastest wheel
        ranges = np.array([self._range(n) for n in self.names]).reshape(-1, 3)
        self._prior_std, self._lo, self._hi = ranges[:, 0], ranges[:, 1], ranges[:, 2]
        mid = 0.5 * (log.joint_t[1:] + log.joint_t[:-1])
        self._imu_k = np.searchsorted(log.imu_t, mid, side="right") - 1  # the IMU sample in effect (−1: none)
        self._cache: dict = {}

    def _dynamic_setup(self, contact: str | None) -> None:
        from wmr_dynamics.dynamics.force_balance import DynamicsOptions

        name = contact or (self.model.config.get("contact") or {}).get("model", "linear")
        if name not in CONTACT_PARAMS:
            raise CalibrationError(f"dynamic model: contact {name!r} cannot be calibrated; choose one of "
                                   f"{', '.join(CONTACT_PARAMS)}")
        self.contact_name = name
        self.contact_base = DynamicsOptions.from_config(self.model, contact=name).contact.params
        self._dyn: dict = {}  # steppers by parameter values

    def contact_params(self, p: NDArray) -> dict:
        """The contact model's constructor parameters for the dynamic model's calibrated values ``p``."""
        par = dict(zip(self.names, np.asarray(p, dtype=float), strict=True))
        out = dict(self.contact_base)  # radius_scale and the sensor offset are not contact constants
        for name, v in par.items():
            if name.startswith("log_"):  # c_slip, mu: both axes where the model has separate ones (anisotropy kept)
                for key in [k for k in (name[4:], f"{name[4:]}_x", f"{name[4:]}_y") if k in out]:
                    out[key] = out[key] * math.exp(v)
            elif name == "c_rr":
                out["c_rr"] = -abs(v)
        return out

    def _dynamic_stepper(self, p: NDArray) -> tuple:
        """(Stepper, SimData) of the dynamic model with parameters ``p`` (cached by the contact constants and
        the cg offset: finite differences and the filter revisit the same values)."""
        from wmr_dynamics.contact_models import make_contact_model
        from wmr_dynamics.dynamics.force_balance import DynamicsOptions
        from wmr_dynamics.stepper import Stepper
        from wmr_dynamics.terrain import Plane

        par = dict(zip(self.names, np.asarray(p, dtype=float), strict=True))
        cg = (par.get("cg_x", 0.0), par.get("cg_y", 0.0))
        key = (*(round(par[n], 12) for n in CONTACT_PARAMS[self.contact_name]), *cg)
        if key not in self._dyn:
            if len(self._dyn) > 16:
                self._dyn.clear()
            opts = DynamicsOptions(contact=make_contact_model(self.contact_name, **self.contact_params(p)))
            st = Stepper(model_variant(self.model, cg=cg), Plane(), "dynamic", STEP_S, dynamics=opts)
            self._dyn[key] = (st, st.make_data())
        return self._dyn[key]

    @property
    def nominal(self) -> NDArray:
        """The uncalibrated model's parameters (slip 0, scales 1, sensor offset as given)."""
        return np.array([NOMINAL.get(n, 0.0) for n in self.names], dtype=float)

    def _range(self, name: str) -> tuple[float, float, float]:
        if name == "c_rr":
            # plausible: a rolling resistance of at most 30 % of the load at the log's top wheel speed (the
            # synthetic grounds' truths: 0 to 9 %); prior std the same (a tighter prior lets the radius scale
            # absorb the rolling resistance on flat logs: 60 s grass log, radius 0.905 with 0.05 s/m)
            b = C_RR_MAX_LOAD / max(self._top_speed, 1.0)
            return b, -b, b
        if name in PARAM_RANGE:
            return PARAM_RANGE[name]
        return PARAM_RANGE_LOG if name.startswith("log_") else PARAM_RANGE_SLIP

    @property
    def prior_std(self) -> NDArray:
        """Each parameter's prior standard deviation (:data:`PARAM_RANGE`)."""
        return self._prior_std

    @property
    def bounds(self) -> tuple[NDArray, NDArray]:
        """(lo, hi): each parameter's plausible range (:data:`PARAM_RANGE`)."""
        return self._lo, self._hi

    def clip(self, p: NDArray) -> NDArray:
        """``p`` kept inside :attr:`bounds`."""
        return np.clip(np.asarray(p, dtype=float), self._lo, self._hi)

    def _diffdrive_setup(self) -> None:
        from wmr_dynamics.kinematics import forward_kinematics

        m = self.model
        if not self._wheel.all():
            raise CalibrationError(f"diffdrive: every actuated joint must be a wheel; {m.name}'s "
                                   f"{[n for n, w in zip(m.actuated_joint_names, self._wheel, strict=True) if not w]} "
                                   "are not")
        T = forward_kinematics(m, m.neutral_state())
        names = m.wheel_joint_names
        y = np.array([T[m.frame_index(m.wheels[names.index(n)].frame)][1, 3] for n in m.actuated_joint_names])
        r = np.array([m.wheels[names.index(n)].radius for n in m.actuated_joint_names])
        left, right = y > 0, y < 0
        if not left.any() or not right.any():
            raise CalibrationError(f"diffdrive: {m.name} needs driven wheels on both sides (y > 0 and y < 0)")
        self._dd = (r * left / left.sum(), r * right / right.sum(), float(y[left].mean() - y[right].mean()))

    # ---- prediction ------------------------------------------------------------------------------------
    def predict(self, iv: Interval, p: NDArray, trace: bool = False) -> tuple[NDArray, Trace | None]:
        """Predicted sensor pose (x, y, ψ) at ``iv.t1`` with parameters ``p`` (in :attr:`names` order), and,
        with ``trace``, the :class:`Trace` of the prediction."""
        par = dict(zip(self.names, np.asarray(p, dtype=float), strict=True))
        offset = self.sensor_offset.copy()
        offset[:2] = par.get("sensor_x", offset[0]), par.get("sensor_y", offset[1])
        seg = self._segments(iv)
        twist = self._twists(iv, seg, par)
        x0, y0, yaw0 = self.log.pose[iv.i0]
        R0 = spatial.rpy_to_rot((seg.roll[0], seg.pitch[0], yaw0))
        pos0 = np.array([x0, y0, 0.0]) - R0 @ offset  # eq. 3.57: the body pose from the sensor's
        pos, yaw = dead_reckon(pos0, yaw0, twist, seg.roll, seg.pitch, seg.dt)
        self._check_travel(iv, seg, pos - pos0)
        end = pos[-1] + spatial.rpy_to_rot((seg.roll[-1], seg.pitch[-1], yaw[-1])) @ offset  # eq. 3.58
        tr = None
        if trace:
            rate_yaw = np.r_[yaw0, yaw[:-1]]  # yaw at each segment's start …
            mid = rate_yaw + 0.5 * np.angle(np.exp(1j * (yaw - rate_yaw)))  # … and its midpoint
            tr = Trace(seg.dt, mid, twist, seg.roll, seg.pitch)
        return np.array([end[0], end[1], yaw[-1]]), tr

    def _check_travel(self, iv: Interval, seg: _Segments, path: NDArray) -> None:
        """Refuse a diverged prediction: a body that strays farther than twice the distance its fastest wheel
        rolled (plus 1 m) has not been driven by these wheels (a dynamic model at implausible constants)."""
        if self.kind == "diffdrive":
            return
        rolled = float(np.sum(np.max(np.abs(self.rates[seg.k] * self._radius), axis=1) * seg.dt))
        reach = float(np.max(np.linalg.norm(path[:, :2], axis=1))) if len(path) else 0.0
        if not math.isfinite(reach) or reach > 2.0 * rolled + 1.0:
            raise CalibrationError(f"{self.kind} prediction diverged on t {iv.t0:.1f}-{iv.t1:.1f} s: the body "
                                   f"strays {reach:.1f} m while its wheels rolled at most {rolled:.1f} m")

    def residual(self, iv: Interval, pred: NDArray) -> NDArray:
        """r = x_meas(t1) − x_pred(t1) (eqs. 3.3, 3.56), yaw wrapped to (−π, π]."""
        return pose_difference(self.log.pose[iv.i1], pred)

    def _segments(self, iv: Interval) -> _Segments:
        """The interval's integration segments (the parts of joint-state message intervals inside [t0, t1])
        and the model's per-step rate rows (cached: they do not depend on the parameters)."""
        key = (iv.k0, iv.k1, iv.t0, iv.t1)
        seg = self._cache.get(key)
        if seg is not None:
            return seg
        jt = self.log.joint_t
        ks = np.arange(iv.k0, iv.k1)
        dt = np.minimum(jt[ks + 1], iv.t1) - np.maximum(jt[ks], iv.t0)
        ks, dt = ks[dt > 0], dt[dt > 0]
        n = np.maximum(1, np.round((jt[ks + 1] - jt[ks]) / STEP_S).astype(int))  # model steps per message
        rows = np.repeat(ks, n)
        cmds = np.ascontiguousarray(self.rates[np.r_[ks[0], rows, rows[-1]]])  # warm-up row, steps, last row
        last = np.cumsum(n)  # the row whose solve holds each message's twist
        imu = self._imu_k[np.minimum(ks, len(self._imu_k) - 1)] if len(self.log.imu_t) else np.full(len(ks), -1)
        rp = np.where((imu >= 0)[:, None], self.log.imu_rp[np.maximum(imu, 0)], 0.0) if len(self.log.imu_t) \
            else np.zeros((len(ks), 2))
        q0 = None
        if self.kind != "diffdrive":
            q0 = self._q_rest.copy()  # the model on its plane with the measured steering angles at t0
            for j, name in enumerate(self.model.actuated_joint_names):
                if not self._wheel[j] and np.isfinite(self.log.joint_position[iv.k0, j]):
                    q0[7 + self.model.joint_index(name)] = self.log.joint_position[iv.k0, j]
        seg = _Segments(ks, dt, rp[:, 0].copy(), rp[:, 1].copy(), cmds, last, q0)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = seg
        return seg

    def _dynamic_twists(self, seg: _Segments, par: dict) -> NDArray:
        """The dynamic model (eq. 3.59) on the level plane driven by the logged joint rates (ideal actuators):
        it starts at the kinematic model's velocity for the first rates, then runs each message's steps."""
        QV = np.zeros((2, self.model.num_dof))
        _rollout(self.stepper.engine, self.model, seg.q0, seg.cmds[:2], QV)
        st, data = self._dynamic_stepper(np.array([par[n] for n in self.names]))
        st.reset(data, seg.q0, QV[0])
        out = np.empty((len(seg.k), 6))
        for i, (k, n) in enumerate(zip(seg.k, np.diff(np.r_[0, seg.last]), strict=True)):
            rates = self.rates[k]
            if par["radius_scale"] != 1.0:
                rates = np.where(self._wheel, rates * par["radius_scale"], rates)
            st.advance(data, int(n), rates=rates, clip=False)
            out[i] = data.qvel[:6]
        return out

    def _twists(self, iv: Interval, seg: _Segments, par: dict) -> NDArray:
        """(m, 6) body twist [ω_b; v_b] of each segment."""
        if self.kind == "diffdrive":
            left, right, B = self._dd
            rates = self.rates[seg.k]
            vl, vr = rates @ left, rates @ right
            tw = np.zeros((len(seg.k), 6))
            tw[:, 2], tw[:, 3] = par["alpha"] * (vr - vl) / B, 0.5 * (vl + vr)  # eqs. 3.64–3.66
            return tw
        from wmr_dynamics.kinematics.enhanced import SlipParams

        if self.kind == "dynamic":
            return self._dynamic_twists(seg, par)
        if self.kind == "enhanced":
            key = tuple(par[f"p{i}"] for i in range(1, 7))
            if key != self._slip:
                self.stepper.set_slip(SlipParams(key))
                self._slip = key
        cmds = seg.cmds
        scale = par.get("radius_scale", 1.0)
        if scale != 1.0:
            cmds = np.ascontiguousarray(np.where(self._wheel, cmds * scale, cmds))
        # the model on the unbounded level plane, one compiled call for the interval: row 0 a warm-up step
        # (the enhanced slip sees the interval's velocity from the first segment on), then each message's steps
        QV = np.zeros((len(cmds), self.model.num_dof))
        _rollout(self._kinematic_engine(par.get("track_scale", 1.0)), self.model, seg.q0, cmds, QV)
        return QV[seg.last, :6]

    def _kinematic_engine(self, track_scale: float):  # noqa: ANN202
        """The compiled kinematic engine of the model with its track width scaled (cached by value)."""
        if track_scale == 1.0:
            return self.stepper.engine
        from wmr_dynamics.stepper import Stepper
        from wmr_dynamics.terrain import Plane

        key = round(float(track_scale), 12)
        if key not in self._track:
            if len(self._track) > 8:
                self._track.clear()
            st = Stepper(model_variant(self.model, track_scale=key), Plane(), "enhanced", STEP_S)
            self._track[key] = st.engine
        return self._track[key]


def _rollout(e, m: WmrModel, q0: NDArray, cmds: NDArray, QV: NDArray) -> None:  # noqa: ANN001
    """The kinematic model on its plane over the rate rows ``cmds`` (one compiled call); q̇' rows into ``QV``."""
    from wmr_dynamics.compiled.kinematics import kinematic_rollout

    n1, nw = len(cmds), m.num_wheels
    st, row = kinematic_rollout(e.md, e.td, e.cd_direct, e.kd, e.workspace(), q0, np.ascontiguousarray(cmds),
                                STEP_S, np.empty((n1, m.num_states)), QV, np.empty((n1, nw)), np.empty((n1, nw, 3)),
                                np.empty((n1, nw)), np.empty(n1), np.empty(n1), False)  # q̇' alone
    e.raise_status(st, row, STEP_S)


@dataclass
class _Segments:
    k: NDArray  # joint-state message interval of each segment
    dt: NDArray  # s
    roll: NDArray
    pitch: NDArray
    cmds: NDArray  # (steps + 2, na) the model's rate rows
    last: NDArray  # row of each segment's twist
    q0: NDArray | None


def pose_difference(a: NDArray, b: NDArray) -> NDArray:
    """a − b for (x, y, ψ) poses, ψ wrapped to (−π, π]."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d[2] = math.atan2(math.sin(d[2]), math.cos(d[2]))
    return d
