"""``wmr-calibrate``: IPEM calibration of a motion model from a rosbag2 (MCAP or SQLite3) or CSV log, and
``wmr-drive-log``: a synthetic log (a random drive recorded with simulated sensors) to calibrate on."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from wmr_dynamics.cli import finite_float
from wmr_dynamics.errors import WmrError


def _positive(text: str) -> float:
    v = finite_float(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def calibrate_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="wmr-calibrate",
        description="Calibrate a WMR motion model to a driving log with IPEM (Seegmiller 2014, ch. 3): encoders "
                    "(sensor_msgs/JointState), IMU roll/pitch (sensor_msgs/Imu) and ground-truth poses "
                    "(nav_msgs/Odometry GPS/INS, or sensor_msgs/NavSatFix + the IMU's yaw).  Writes the "
                    "parameters as the YAML wmr-odometry --params and odometry_node read.")
    p.add_argument("bag", help="rosbag2 folder (or its .mcap / .db3 file); with --csv, the joints CSV")
    p.add_argument("--vehicle", default="landtamer", help="bundled vehicle name or path to a URDF / vehicle YAML")
    p.add_argument("--vehicle-config", default=None, help="vehicle YAML for a URDF given by path")
    p.add_argument("--model", default="enhanced", choices=("enhanced", "kinematic", "diffdrive", "dynamic"),
                   help="enhanced: body slip p1..p6 (eqs. 2.48-2.49); kinematic: a wheel-radius scale; diffdrive: "
                        "the yaw-rate scale alpha (eq. 3.66) baseline; dynamic: contact constants and a wheel-radius "
                        "scale of the dynamic model (writes a vehicle-YAML contact block)")
    p.add_argument("--contact", default=None, choices=("linear", "pacejka"),
                   help="dynamic model: the contact model to calibrate (default the vehicle YAML's)")
    h = p.add_mutually_exclusive_group()
    h.add_argument("--interval", type=_positive, default=2.0, help="prediction interval, s (default 2)")
    h.add_argument("--segment", type=_positive, default=None, help="prediction segments of this path length, m "
                                                                   "(the thesis's 10 m), instead of --interval")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--online", action="store_true", help="online identification EKF only (the default)")
    mode.add_argument("--offline", action="store_true", help="online EKF, then offline batch calibration")
    p.add_argument("--joint-states-topic", default="/joint_states")
    p.add_argument("--imu-topic", default="/imu", help="'' for none")
    p.add_argument("--pose-topic", default="/gps/odom", help="nav_msgs/Odometry or sensor_msgs/NavSatFix")
    p.add_argument("--pose-std", type=_positive, nargs=2, default=None, metavar=("POS_M", "YAW_RAD"),
                   help="pose measurement standard deviations (default: the messages' covariances)")
    p.add_argument("--csv", nargs=2, default=None, metavar=("POSES_CSV", "IMU_CSV"),
                   help="read CSV files instead of a bag: BAG is the joints CSV (t_s,<joint>...), then poses "
                        "(t_s,x_m,y_m,yaw_rad) and IMU (t_s,roll_rad,pitch_rad; '-' for none)")
    p.add_argument("--sensor-offset", action="store_true", help="also calibrate the pose sensor's x, y offset")
    p.add_argument("--cg-offset", action="store_true", help="dynamic model: also calibrate the cg's x, y offset")
    p.add_argument("--gate", type=_positive, default=90.0, help="Mahalanobis outlier gate, eq. 3.68 (default 90)")
    p.add_argument("--out", required=True, help="parameter YAML to write (atomically, after every interval)")
    p.add_argument("--report", default=None, metavar="DIR", help="write figures (Figs. 3.5-3.9) and report.md here")
    p.add_argument("--quiet", action="store_true", help="no per-interval progress lines")
    p.add_argument("--json", action="store_true", help="print one line of JSON as the last line of stdout")
    return p


def calibrate_main(argv: list[str] | None = None) -> int:
    from wmr_dynamics.calibration import OnlineSettings, calibrate, log_from_bag, log_from_csv
    from wmr_dynamics.calibration.predict import Predictor
    from wmr_dynamics.io.output import OutputError, prepare_dir
    from wmr_dynamics.urdf import load_model

    args = calibrate_parser().parse_args(argv)
    out = Path(args.out)
    t_start = time.perf_counter()
    try:
        prepare_dir(out.parent, "--out's folder")
        if out.is_dir():
            raise OutputError(f"--out {out}: is a folder; give the YAML file to write")
        if args.report:
            prepare_dir(args.report, "--report")
        model = load_model(args.vehicle, args.vehicle_config)
        if args.csv:
            imu = None if args.csv[1] == "-" else args.csv[1]
            log = log_from_csv(args.bag, args.csv[0], imu, **({"pose_std": tuple(args.pose_std)} if args.pose_std
                                                              else {}), model=model)
        else:
            log = log_from_bag(args.bag, model, args.joint_states_topic, args.imu_topic or None, args.pose_topic,
                               tuple(args.pose_std) if args.pose_std else None)
        for what, n in log.notes.items():
            print(f"note: {what}: {n}", file=sys.stderr)
        print(f"{model.name}: {len(log.joint_t)} joint states, {len(log.imu_t)} IMU samples, {len(log.pose_t)} poses "
              f"over {log.duration:.1f} s; calibrating the {args.model} model "
              f"({'offline' if args.offline else 'online'}, "
              f"{f'{args.segment:g} m segments' if args.segment else f'{args.interval:g} s intervals'})",
              file=sys.stderr)
        result = calibrate(model, log, args.model, args.interval, args.segment, online=True, offline=args.offline,
                           settings=OnlineSettings(gate=args.gate), out=out, sensor_params=args.sensor_offset,
                           progress=None if args.quiet else (lambda line: print(line, file=sys.stderr)),
                           contact=args.contact, cg_params=args.cg_offset)
        files = []
        if args.report:
            from wmr_dynamics.calibration.report import write_report

            pred = Predictor(model, log, args.model, args.sensor_offset, contact=args.contact,
                             cg_params=args.cg_offset)
            files = write_report(args.report, result, pred, model.name)
    except KeyboardInterrupt:
        print(f"wmr-calibrate: interrupted; the parameters learned so far are in {out}", file=sys.stderr)
        return 130
    except (WmrError, OSError) as e:
        msg = f"wmr-calibrate: error: {e}"
        if out.is_file():
            msg += f" (the parameters learned before it are in {out})"
        print(msg, file=sys.stderr)
        return 2
    summary = result.summary() | {"params_file": str(out), "wall_s": time.perf_counter() - t_start,
                                  "report": [str(f) for f in files]}
    print(f"{model.name} {args.model}: {result.accepted} of {result.intervals} intervals used; parameters "
          + ", ".join(f"{k} {v:+.4f}" for k, v in result.parameters.items()) + f"; wrote {out}")
    for h, v in summary["horizons"].items():
        b, a, r = v["before"], v["after"], v["reduction_pct"]
        print(f"  {h}: mean position error {b['mean_position_error_m']:.3f} -> {a['mean_position_error_m']:.3f} m "
              f"({r['mean_position_error_m']:.0f} % less), yaw {b['mean_yaw_error_rad']:.4f} -> "
              f"{a['mean_yaw_error_rad']:.4f} rad ({r['mean_yaw_error_rad']:.0f} % less), {a['intervals']} intervals")
    if args.json:
        print(json.dumps(summary))
    return 0


def drive_log_parser() -> argparse.ArgumentParser:
    from wmr_dynamics.calibration.synthetic import GROUNDS

    p = argparse.ArgumentParser(
        prog="wmr-drive-log",
        description="Record a synthetic driving log: the vehicle driven randomly by the dynamic model with "
                    "Pacejka contact on a chosen ground (the truth a calibration must discover), sampled by "
                    "simulated encoders, IMU and GPS/INS, written as a rosbag2.")
    p.add_argument("out", help="bag to write: NAME.mcap (MCAP) or NAME.db3 (SQLite3) -> folder NAME/")
    p.add_argument("--vehicle", default="landtamer")
    p.add_argument("--ground", default="grass", choices=sorted(GROUNDS), help="the truth's contact constants")
    p.add_argument("--terrain", default="flat", choices=("flat", "rough"),
                   help="flat, or Gaussian rough terrain (RMS 0.05 m, correlation length 1 m)")
    p.add_argument("--duration", type=_positive, default=180.0, help="s (default 180)")
    p.add_argument("--v-max", type=_positive, default=2.9, help="m/s (default 2.9, the thesis's LandTamer)")
    p.add_argument("--w-max", type=_positive, default=0.8, help="rad/s (default 0.8)")
    p.add_argument("--seed", type=int, default=0)
    return p


def drive_log_main(argv: list[str] | None = None) -> int:
    from wmr_dynamics.calibration.synthetic import DriveSpec, record, terrain_for, truth_model
    from wmr_dynamics.urdf import load_model

    args = drive_log_parser().parse_args(argv)
    try:
        spec = DriveSpec(duration=args.duration, v_max=args.v_max, w_max=args.w_max, seed=args.seed)
        model = load_model(args.vehicle)
        folder = record(args.out, truth_model(model, args.ground), terrain_for(args.terrain, spec), spec)
    except (WmrError, OSError) as e:
        print(f"wmr-drive-log: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {folder} ({args.duration:g} s of {args.vehicle} on {args.terrain} {args.ground})")
    return 0


if __name__ == "__main__":
    sys.exit(calibrate_main())
