"""Synthetic driving logs for calibration: a vehicle driven randomly by a model the calibrated one does not
share (the dynamic model with Pacejka/Nicolas–Comstock contact, thesis App. C), recorded with realistic
sensors (:mod:`wmr_dynamics.sensors`: encoders, IMU, GPS/INS, fix) as a rosbag2.

The drive follows the thesis's LandTamer/RecBot experiments (§3.4.2: "driven randomly at speeds up to
2.9 m/s and 0.8 rad/s"): speed and yaw-rate commands are drawn at random every few seconds and
interpolated linearly between draws; a vehicle farther than ``radius_m`` from its start is turned back
toward it, so a log of any length stays on a terrain of bounded size.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain


@dataclass
class DriveSpec:
    """A random drive: duration (s), speed and yaw-rate bounds (m/s, rad/s), seconds between random commands,
    the radius (m) beyond which the vehicle is turned home, the driver's acceleration limits (m/s², rad/s²:
    commands ramp, as a driver's do), and the seed."""

    duration: float = 180.0
    v_max: float = 2.9
    w_max: float = 0.8
    hold_s: float = 3.0
    radius_m: float = 40.0
    a_max: float = 1.0
    alpha_max: float = 1.0
    seed: int = 0


#: the truth's ground: Pacejka/Nicolas–Comstock constants (Table C.1 names) over the defaults, and the tyres'
#: effective rolling radius as a fraction of the URDF's (a loaded tyre rolls on a smaller radius; assumed)
GROUNDS = {
    "asphalt": {"params": {"mu": 0.9}, "radius_scale": 0.98},
    "dirt": {"params": {"mu": 0.6, "Ks": 40.0, "Ka": 40.0, "c_rr": -0.015}, "radius_scale": 0.98},
    "grass": {"params": {"mu": 0.45, "Ks": 25.0, "Ka": 25.0, "c_rr": -0.03}, "radius_scale": 0.97},
}


def truth_model(model: WmrModel, ground: str) -> WmrModel:
    """``model`` as the truth of a synthetic log on ``ground`` (:data:`GROUNDS`): Pacejka contact with the
    ground's constants and the tyres' effective rolling radii — what a calibrated model must discover."""
    from wmr_dynamics.calibration.log import CalibrationError
    from wmr_dynamics.urdf import load_model

    if ground not in GROUNDS:
        raise CalibrationError(f"ground {ground!r}: expected one of {', '.join(GROUNDS)}")
    g = GROUNDS[ground]
    cfg = dict(model.config)
    cfg["contact"] = {"model": "pacejka", "params": dict(g["params"])}
    wheels = {k: dict(v) for k, v in (cfg.get("wheels") or {}).items()}
    for joint, w in zip(model.wheel_joint_names, model.wheels, strict=True):
        wheels.setdefault(joint, {})["radius"] = w.radius * g["radius_scale"]
    cfg["wheels"] = wheels
    return load_model(model.source, cfg)


@dataclass
class SyntheticRun:
    """The truth of a synthetic drive: times t (s), states q, joint-space velocities qvel, commands (v, ω)."""

    t: NDArray
    q: NDArray
    qvel: NDArray
    commands: NDArray
    dt: float


def drive(model: WmrModel, terrain: Terrain, spec: DriveSpec | None = None, contact: str = "pacejka",
          dt: float = 0.01, progress: bool = True) -> SyntheticRun:
    """Drive ``model`` randomly over ``terrain`` with the dynamic model and ``contact`` (see the module docstring)."""
    from wmr_dynamics.dynamics.force_balance import DynamicsOptions
    from wmr_dynamics.stepper import Stepper

    spec = spec or DriveSpec()
    rng = np.random.default_rng(spec.seed)
    n_knots = int(spec.duration / spec.hold_s) + 2
    knots_t = np.arange(n_knots) * spec.hold_s
    knots_v = rng.uniform(0.0, spec.v_max, n_knots)
    knots_w = rng.uniform(-spec.w_max, spec.w_max, n_knots)
    stepper = Stepper(model, terrain, "dynamic", dt, dynamics=DynamicsOptions.from_config(model, contact=contact))
    data = stepper.make_data()
    n = int(round(spec.duration / dt))
    T, Q, QV, C = np.arange(n + 1) * dt, np.empty((n + 1, model.num_states)), np.empty((n + 1, model.num_dof)), \
        np.empty((n + 1, 2))
    Q[0], QV[0] = data.q, data.qvel
    start = data.q[4:6].copy()
    if progress:
        print(f"driving {model.name} randomly for {spec.duration:g} s (dynamic model, {contact} contact) ...",
              file=sys.stderr, flush=True)
    for k in range(n):
        t = T[k]
        v, w = float(np.interp(t, knots_t, knots_v)), float(np.interp(t, knots_t, knots_w))
        away = data.q[4:6] - start
        if np.hypot(*away) > spec.radius_m:  # turn home: steer the heading toward the start
            yaw = data.pose()[5]
            err = math.atan2(-away[1], -away[0]) - yaw
            w = float(np.clip(2.0 * math.atan2(math.sin(err), math.cos(err)), -spec.w_max, spec.w_max))
        if k:  # the driver's acceleration limits
            v = float(np.clip(v, C[k - 1, 0] - spec.a_max * dt, C[k - 1, 0] + spec.a_max * dt))
            w = float(np.clip(w, C[k - 1, 1] - spec.alpha_max * dt, C[k - 1, 1] + spec.alpha_max * dt))
        else:
            v = w = 0.0
        C[k] = v, w
        stepper.advance(data, 1, command=(v, w))
        Q[k + 1], QV[k + 1] = data.q, data.qvel
    C[n] = C[n - 1]
    return SyntheticRun(T, Q, QV, C, dt)


def record(path: str | Path, model: WmrModel, terrain: Terrain, spec: DriveSpec | None = None,
           contact: str = "pacejka", sensors: object | None = None, dt: float = 0.01, progress: bool = True) -> Path:
    """Drive randomly (:func:`drive`) and record the run as a rosbag2 (``/joint_states``, ``/imu``,
    ``/gps/odom``, ``/fix``, truth ``/odom`` and ``/tf``, ``/cmd_vel``); returns the bag folder.
    ``sensors``: a :class:`~wmr_dynamics.sensors.SensorSpec` (default: its defaults, seeded by the drive's seed)."""
    from wmr_dynamics.io.bag import write_run
    from wmr_dynamics.sensors import SensorSpec, sample_sensors

    spec = spec or DriveSpec()
    run = drive(model, terrain, spec, contact, dt, progress)
    sp = sensors or SensorSpec(seed=spec.seed)
    return write_run(path, model, run, sample_sensors(run.t, run.q, run.qvel, sp), run.commands, spec=sp)


def terrain_for(kind: str, spec: DriveSpec | None = None) -> Terrain:
    """The ground geometry of a synthetic log: ``"flat"`` (a plane) or ``"rough"`` (Gaussian rough terrain,
    RMS 0.05 m, correlation length 1 m, 0.2 m grid, covering the drive's radius with 30 m to spare)."""
    from wmr_dynamics.calibration.log import CalibrationError
    from wmr_dynamics.terrain import Plane, gaussian_rough_terrain

    spec = spec or DriveSpec()
    if kind == "flat":
        return Plane()
    if kind == "rough":
        r = spec.radius_m + 30.0
        return gaussian_rough_terrain(rms=0.05, corr_len=1.0, bounds=(-r, r, -r, r), spacing=0.2, seed=spec.seed)
    raise CalibrationError(f"terrain {kind!r}: expected flat or rough")
