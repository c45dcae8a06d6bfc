"""Command-line tools.

``wmr-sim`` (``python -m wmr_dynamics.cli sim``): simulate a vehicle on a terrain; summary, plots, CSV.
``wmr-show`` (``python -m wmr_dynamics.cli show``): place a vehicle on a terrain; model, contacts, picture.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from wmr_dynamics import spatial
from wmr_dynamics import terrain as terrain_mod
from wmr_dynamics.collision import drop_onto_terrain, wheel_contacts
from wmr_dynamics.errors import WmrError
from wmr_dynamics.io.output import atomic_write_text, prepare_dir, safe_name
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.urdf import bundled_vehicles, load_model


def finite_float(text: str) -> float:
    """argparse type: a finite number (NaN and inf are refused with the argument named by argparse)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def _terrain(args: argparse.Namespace) -> terrain_mod.Terrain:
    if args.terrain == "rough":
        return terrain_mod.gaussian_rough_terrain(rms=args.rms, corr_len=args.corr_len, seed=args.seed)
    return terrain_mod.load_terrain(args.terrain)


def _initial_xy_yaw(model, args: argparse.Namespace) -> tuple[np.ndarray, float]:
    pose = model.config.get("initial_pose") or {}
    xyz = np.array(pose.get("xyz", [0.0, 0.0, 0.0]), dtype=float)
    yaw = float((pose.get("rpy") or [0.0, 0.0, 0.0])[2])
    if args.x is not None:
        xyz[0] = args.x
    if args.y is not None:
        xyz[1] = args.y
    if args.yaw is not None:
        yaw = args.yaw
    return xyz, yaw


def _vehicle_and_terrain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vehicle", default="rocky7", help="bundled vehicle name or path to a URDF / vehicle YAML")
    p.add_argument("--terrain", default="rough",
                   help="flat | rough | ramp | steps | FILE (height grid .txt, heightmap .yaml/.npy, SDF world)")
    p.add_argument("--rms", type=finite_float, default=0.05, help="rough terrain RMS height, m (default 0.05)")
    p.add_argument("--corr-len", type=finite_float, default=0.2,
                   help="rough terrain correlation length, m (default 0.2)")
    p.add_argument("--seed", type=int, default=1, help="rough terrain random seed (default 1)")


def _pose_and_output_args(p: argparse.ArgumentParser, what: str, out_help: str) -> None:
    p.add_argument("--x", type=finite_float, default=None,
                   help=f"{what} x, m (default: the vehicle YAML's initial_pose)")
    p.add_argument("--y", type=finite_float, default=None, help=f"{what} y, m")
    p.add_argument("--yaw", type=finite_float, default=None, help=f"{what} yaw, rad")
    p.add_argument("--out", default="out", help=out_help)
    p.add_argument("--list-vehicles", action="store_true", help="list bundled vehicles and exit")
    p.add_argument("--json", action="store_true", help="print one line of JSON as the last line of stdout")


def show_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wmr-show", description="Place a vehicle on a terrain, print its model and "
                                "wheel contacts, write a picture.")
    _vehicle_and_terrain_args(p)
    _pose_and_output_args(p, "body", "output folder (default ./out)")
    return p


def show_main(argv: list[str] | None = None) -> int:
    args = show_parser().parse_args(argv)
    if args.list_vehicles:
        print("\n".join(bundled_vehicles()))
        return 0
    t0 = time.perf_counter()
    try:
        out = prepare_dir(args.out)  # before any work: a finished picture is never lost to a bad --out
        model = load_model(args.vehicle)
        ground = _terrain(args)
        xyz, yaw = _initial_xy_yaw(model, args)
        q = model.state(xyz=(xyz[0], xyz[1], xyz[2]), rpy=(0.0, 0.0, yaw))
        q = drop_onto_terrain(model, q, ground)
    except WmrError as e:
        print(f"wmr-show: error: {e}", file=sys.stderr)
        return 2
    T = forward_kinematics(model, q)
    contacts = wheel_contacts(model, T, ground)
    from wmr_dynamics.io.plots import plot_vehicle_on_terrain

    terrain_label = (f"Gaussian rough terrain (RMS {args.rms} m, correlation length {args.corr_len} m, "
                     f"seed {args.seed})" if args.terrain == "rough" else args.terrain)
    png = plot_vehicle_on_terrain(model, T, ground, contacts, out / f"{safe_name(model.name)}_on_terrain.png",
                                  title=f"{model.name} on {terrain_label}")
    rpy = spatial.quat_to_rpy(q[:4])
    print(model.summary())
    print(f"\nterrain: {terrain_label}")
    print(f"body pose: x {q[4]:+.3f} m, y {q[5]:+.3f} m, z {q[6]:+.3f} m, "
          f"roll {rpy[0]:+.3f}, pitch {rpy[1]:+.3f}, yaw {rpy[2]:+.3f} rad "
          "(lowered until the lowest wheel touches; contact initialization of §2.2.4 comes with the kinematics)")
    print(f"{'wheel':<12}{'dz (mm)':>9}{'contact angle (deg)':>21}   contact point (m)          normal")
    for w, name in enumerate(model.wheel_names):
        p, n = contacts.points[w], contacts.normals[w]
        print(f"{name:<12}{contacts.dz[w] * 1000:>9.1f}{np.degrees(contacts.angle[w]):>21.1f}   "
              f"({p[0]:+.3f}, {p[1]:+.3f}, {p[2]:+.3f})   ({n[0]:+.2f}, {n[1]:+.2f}, {n[2]:+.2f})")
    print(f"\npicture: {png}")
    if args.json:
        print(json.dumps({
            "vehicle": model.name, "num_wheels": model.num_wheels, "num_dof": model.num_dof,
            "total_mass_kg": model.total_mass, "pose": [float(v) for v in (*q[4:7], *rpy)],
            "dz_m": contacts.dz.tolist(), "contact_angle_rad": contacts.angle.tolist(),
            "picture": str(png), "wall_time_s": time.perf_counter() - t0,
        }))
    return 0


def sim_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wmr-sim", description="Simulate a wheeled mobile robot on a terrain "
                                "(kinematic, enhanced-kinematic or dynamic model, thesis §2.2–2.4).")
    _vehicle_and_terrain_args(p)
    p.add_argument("--mode", default="kinematic", choices=["kinematic", "enhanced", "dynamic"],
                   help="motion model: stabilized-DAE kinematics (§2.2), with body slip (§2.3), or dynamics (§2.4)")
    p.add_argument("--contact", default=None, choices=["linear", "pacejka", "ishigami", "ding", "coulomb"],
                   help="dynamic mode: wheel-ground contact model (default: the vehicle YAML's, else linear); "
                        "coulomb: rigid no-slip contact inside the friction cone, sliding beyond (stiction)")
    p.add_argument("--actuator", default=None, choices=["ideal", "pi"],
                   help="dynamic mode: actuator model (default: the vehicle YAML's, else ideal)")
    p.add_argument("--slip", type=finite_float, nargs=6, metavar=("P1", "P2", "P3", "P4", "P5", "P6"),
                   default=(0.0,) * 6, help="enhanced mode: body slip parameters p1..p6 (eqs. 2.48-2.49)")
    p.add_argument("--dt", type=finite_float, default=0.04, help="time step, s (default 0.04)")
    p.add_argument("--duration", type=finite_float, default=10.0, help="simulated time, s (default 10)")
    p.add_argument("--speed", type=finite_float, default=0.5, help="commanded forward speed, m/s (default 0.5)")
    p.add_argument("--yaw-rate", type=finite_float, default=0.0, help="commanded yaw rate, rad/s (default 0)")
    p.add_argument("--integrator", default="euler", choices=["euler", "rk4"], help="eq. 2.39 Euler or RK4")
    p.add_argument("--controller", default=None,
                   help="controller type (default: the vehicle YAML's; 'naive' = equal wheel speeds)")
    p.add_argument("--engine", default="auto", choices=["auto", "compiled", "python"],
                   help="compiled (numba) or Python step path; auto = compiled where supported (default)")
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    p.add_argument("--record", default=None, metavar="BAG",
                   help="also record the run as a rosbag2 (RUN.mcap or RUN.db3 -> folder RUN/): truth /odom, /tf, "
                        "/joint_states, /cmd_vel and simulated /imu, /gps/odom, /fix (wmr_dynamics.sensors)")
    _pose_and_output_args(p, "start", "output folder for plots and CSV (default ./out)")
    return p


def sim_main(argv: list[str] | None = None) -> int:
    from wmr_dynamics.controllers import BodyVelocityController
    from wmr_dynamics.kinematics.enhanced import SlipParams
    from wmr_dynamics.simulate import Simulator

    args = sim_parser().parse_args(argv)
    if args.list_vehicles:
        print("\n".join(bundled_vehicles()))
        return 0
    try:
        out = prepare_dir(args.out)  # before the run: a finished simulation is never lost to a bad --out
        if args.record:
            from wmr_dynamics.io.bag import BagError, bag_folder

            folder = bag_folder(args.record)[0]
            if folder.exists():
                raise BagError(f"--record {args.record}: the bag folder {folder} already exists (a bag is written "
                               "new; remove it or pick another name)")
            prepare_dir(folder.parent, "--record's folder")
        model = load_model(args.vehicle)
        ground = _terrain(args)
        dynamics = None
        if args.mode == "dynamic":
            from wmr_dynamics.dynamics.force_balance import DynamicsOptions

            dynamics = DynamicsOptions.from_config(model, contact=args.contact, actuator=args.actuator)
        sim = Simulator(model, ground, mode=args.mode, dt=args.dt, integrator=args.integrator,
                        controller=BodyVelocityController(model, args.controller), slip=SlipParams(tuple(args.slip)),
                        dynamics=dynamics, engine=args.engine)
        start = None if args.x is None and args.y is None else (
            args.x if args.x is not None else (model.config.get("initial_pose") or {}).get("xyz", [0, 0])[0],
            args.y if args.y is not None else (model.config.get("initial_pose") or {}).get("xyz", [0, 0])[1])
        q0 = sim.initial_state(xyz=start, yaw=args.yaw)
        command = _limited_command(model, sim.controller, q0, args.speed, args.yaw_rate)
        sim.run(min(args.duration, 2 * args.dt), command, q0=q0, progress=False)  # compile
        result = sim.run(args.duration, command, q0=q0)
    except WmrError as e:
        print(f"wmr-sim: error: {e}", file=sys.stderr)
        return 2
    summary = result.summary()
    name = safe_name(model.name)
    files = [result.to_csv(out / f"{name}_trajectory.csv")]
    if args.record:
        try:
            files.append(_record(args.record, model, result, command, args.seed))
        except WmrError as e:
            print(f"wmr-sim: error: --record {args.record}: {e}", file=sys.stderr)
            return 2
    if not args.no_plots:
        from wmr_dynamics.io.plots import plot_run_contacts, plot_run_overhead

        label = (f"Gaussian rough terrain (RMS {args.rms} m, corr. {args.corr_len} m, seed {args.seed})"
                 if args.terrain == "rough" else args.terrain)
        files.append(plot_run_overhead(result, ground, out / f"{name}_path.png",
                                       title=f"{model.name}, {args.mode}, {args.speed} m/s on {label}"))
        files.append(plot_run_contacts(result, out / f"{name}_contacts.png"))
    fp = summary["final_pose"]
    print(f"{model.name}: {args.mode} model, dt {args.dt} s, {summary['steps']} steps, "
          f"{summary['sim_time_s']:.2f} s simulated in {summary['wall_time_s']:.3f} s "
          f"({summary['real_time_factor']:.0f}x real time, {sim.engine_used} engine)")
    print(f"  distance {summary['distance_m']:.3f} m; final pose x {fp[0]:+.3f} y {fp[1]:+.3f} z {fp[2]:+.3f} m, "
          f"roll {fp[3]:+.3f} pitch {fp[4]:+.3f} yaw {fp[5]:+.3f} rad")
    print(f"  mean contact-point speed {summary['mean_contact_speed_mps']:.4f} m/s, max |dz| "
          f"{1000 * summary['max_abs_dz_m']:.1f} mm, wheels in contact {100 * summary['contact_fraction']:.1f} % "
          "of wheel-steps" + (f", min rollover margin {summary['min_rollover_margin_m']:.3f} m"
                              if summary["min_rollover_margin_m"] is not None else ""))
    if args.mode == "dynamic":
        fz_min, fz_max = summary["normal_force_min_N"], summary["normal_force_max_N"]
        print(f"  normal force per wheel min {min(fz_min):.0f} N / max {max(fz_max):.0f} N, slip ratio mean "
              f"{summary['slip_ratio']['mean']:+.4f}, slip angle mean {summary['slip_angle_rad']['mean']:+.4f} rad, "
              f"{summary['mean_iterations']:.2f} force-balance iterations per step, "
              f"rolled over: {'YES' if summary['rolled_over'] else 'no'}")
    if summary["tip_over_predicted"] and not summary["rolled_over"]:
        print(f"  WARNING: rollover: the rollover margin fell to {summary['min_rollover_margin_m']:.3f} m (the force "
              "through the centre of gravity leaves the support polygon): the real vehicle would tip over where the "
              f"{args.mode} model keeps its wheels on the ground; try --mode dynamic")
    if (summary["max_body_penetration_m"] or 0.0) > 0.01:
        print(f"  WARNING: the link '{summary['body_penetration_link']}' is {summary['max_body_penetration_m']:.3f} m "
              f"inside the terrain at t = {summary['body_penetration_t_s']:.2f} s: only wheels touch the ground in "
              "these models, so a body on an obstacle passes through it")
    if summary.get("unconverged_steps"):
        print(f"  WARNING: the force balance did not converge in {summary['unconverged_steps']} of "
              f"{summary['steps']} steps (first at t = {summary['first_unconverged_s']:.3f} s): the contact forces "
              "there are approximate; try a smaller --dt or check the vehicle's mass and contact parameters")
    print("  wrote " + ", ".join(str(f) for f in files))
    if args.json:
        print(json.dumps(summary))
    return 0


def _limited_command(model, controller, q0, v: float, omega: float) -> tuple[float, float]:  # noqa: ANN001
    """(v, ω) scaled to the wheels' URDF speed limits (wmr_dynamics.limits), with a warning when it was."""
    from wmr_dynamics.limits import limit_command

    if not (np.isfinite(v) and np.isfinite(omega)):
        return v, omega  # the simulator reports it
    v2, w2, s = limit_command(model, controller, q0, forward_kinematics(model, q0), v, omega)
    if s < 1:
        print(f"wmr-sim: warning: --speed {v:g} m/s / --yaw-rate {omega:g} rad/s need wheel rates beyond the URDF "
              f"joint speed limits ({', '.join(f'{x:g}' for x in model.actuated_velocity_limits)} rad/s); scaled "
              f"to {v2:.4g} m/s, {w2:.4g} rad/s", file=sys.stderr)
    return v2, w2


def _record(path: str, model, result, command: tuple[float, float], seed: int) -> Path:  # noqa: ANN001
    from wmr_dynamics.io.bag import write_run
    from wmr_dynamics.sensors import SensorSpec, sample_sensors

    spec = SensorSpec(seed=seed)
    sensors = sample_sensors(result.t, result.q, result.qvel, spec)
    return write_run(path, model, result, sensors, np.tile(command, (len(result.t), 1)), spec=spec)


def odometry_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wmr-odometry", description="3D wheel odometry over a rosbag2 (MCAP or SQLite): "
                                "joint states (+ IMU roll/pitch) through the vehicle's kinematic model "
                                "(wmr_dynamics.odometry); dead reckoning only, from the origin unless --initial-pose.")
    p.add_argument("bag", help="rosbag2 folder (or its .mcap / .db3 file)")
    p.add_argument("--vehicle", default="rocky7", help="bundled vehicle name or path to a URDF / vehicle YAML")
    p.add_argument("--params", default=None, help="calibrated odometry parameters YAML (model, slip, wheels)")
    p.add_argument("--joint-states-topic", default="/joint_states")
    p.add_argument("--imu-topic", default="/imu", help="roll/pitch source ('' for none; skipped if not in the bag)")
    p.add_argument("--initial-pose", type=finite_float, nargs=4, metavar=("X", "Y", "Z", "YAW"), default=(0.0,) * 4,
                   help="start pose, m and rad (default the origin, yaw 0)")
    p.add_argument("--out", required=True, help="CSV to write (stamp_ns,t_s,x_m,y_m,z_m,roll_rad,pitch_rad,yaw_rad)")
    p.add_argument("--json", action="store_true", help="print one line of JSON as the last line of stdout")
    return p


def odometry_main(argv: list[str] | None = None) -> int:
    from wmr_dynamics.odometry import OdometryParams, odometry_from_bag

    args = odometry_parser().parse_args(argv)
    try:
        model = load_model(args.vehicle)
        params = OdometryParams.load(args.params) if args.params else None
        rows = odometry_from_bag(args.bag, model, params, args.joint_states_topic, args.imu_topic or None,
                                 args.initial_pose)
        out = Path(args.out)
        prepare_dir(out.parent, "--out's folder")
        lines = [f"{int(r[0])},{r[1]:.9f}," + ",".join(f"{v:.9g}" for v in r[2:]) for r in rows]
        atomic_write_text(out, "\n".join(["stamp_ns,t_s,x_m,y_m,z_m,roll_rad,pitch_rad,yaw_rad", *lines]) + "\n")
    except (WmrError, OSError) as e:
        print(f"wmr-odometry: error: {e}", file=sys.stderr)
        return 2
    steps = np.linalg.norm(np.diff(rows[:, 2:5], axis=0), axis=1)
    summary = {"rows": len(rows), "duration_s": float(rows[-1, 1]), "distance_m": float(steps.sum()),
               "final_pose": [float(v) for v in rows[-1, 2:]], "csv": str(out)}
    fp = summary["final_pose"]
    print(f"{model.name}: {len(rows)} joint states over {summary['duration_s']:.2f} s, distance "
          f"{summary['distance_m']:.3f} m; final pose x {fp[0]:+.3f} y {fp[1]:+.3f} z {fp[2]:+.3f} m, yaw "
          f"{fp[5]:+.3f} rad; wrote {out}")
    if args.json:
        print(json.dumps(summary))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = {"sim": sim_main, "show": show_main, "odometry": odometry_main}
    if not argv or argv[0] not in commands:
        print(f"usage: python -m wmr_dynamics.cli {{{','.join(commands)}}} [options]  (--help for each)",
              file=sys.stderr)
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
