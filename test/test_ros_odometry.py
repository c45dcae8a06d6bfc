"""Odometry over real DDS and offline: a run recorded with ``wmr-sim --record``, replayed with ``wmr-bag-play``
into the odometry node, reproduces the simulated path; ``wmr-odometry`` on the bag gives the node's path."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys

import numpy as np
import pytest
import yaml
from nav_msgs.msg import Odometry
from ros_util import ROOT, NodeProcess, namespace, ros_env

from wmr_dynamics import spatial
from wmr_dynamics.cli import odometry_main, sim_main
from wmr_dynamics.errors import ModelError
from wmr_dynamics.io.bag import read, topics
from wmr_dynamics.odometry import OdometryParams, odometry_from_bag
from wmr_dynamics.urdf import load_model


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """Rocky 7 at 0.5 m/s turning at 0.2 rad/s for 10 s on flat ground, kinematic model, recorded."""
    out = tmp_path_factory.mktemp("rec")
    assert sim_main(["--vehicle", "rocky7", "--terrain", "flat", "--speed", "0.5", "--yaw-rate", "0.2",
                     "--duration", "10", "--dt", "0.02", "--no-plots", "--out", str(out),
                     "--record", str(out / "run.mcap")]) == 0
    with open(out / "rocky7_trajectory.csv") as f:
        truth = np.array([[float(r["t_s"]), float(r["x_m"]), float(r["y_m"]), float(r["yaw_rad"])]
                          for r in csv.DictReader(f)])
    return out / "run", truth


def test_the_recording_holds_every_topic_with_consistent_stamps(recording):
    bag, truth = recording
    assert topics(bag) == {"/odom": "nav_msgs/msg/Odometry", "/tf": "tf2_msgs/msg/TFMessage",
                           "/joint_states": "sensor_msgs/msg/JointState", "/imu": "sensor_msgs/msg/Imu",
                           "/gps/odom": "nav_msgs/msg/Odometry", "/fix": "sensor_msgs/msg/NavSatFix",
                           "/cmd_vel": "geometry_msgs/msg/Twist"}
    counts: dict[str, int] = {}
    last = None
    for topic, _, t_ns, msg in read(bag):
        counts[topic] = counts.get(topic, 0) + 1
        if hasattr(msg, "header"):  # header stamps are the log times
            assert msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec == t_ns
        if topic == "/odom":
            last = msg
    assert counts["/joint_states"] == 501 and counts["/odom"] == 501 and counts["/gps/odom"] == 101
    p = last.pose.pose.position
    assert (p.x, p.y) == pytest.approx(tuple(truth[-1, 1:3]), abs=1e-4)  # truth odom = the trajectory CSV (6 digits)


def _final_odom_pose(odoms: list) -> tuple[float, float, float]:
    o = odoms[-1].pose.pose
    yaw = spatial.quat_to_rpy(np.array([o.orientation.x, o.orientation.y, o.orientation.z, o.orientation.w]))[2]
    return o.position.x, o.position.y, yaw


def test_bag_replayed_into_the_odometry_node_reproduces_the_path_and_matches_wmr_odometry(recording, probe,
                                                                                        tmp_path):
    bag, truth = recording
    node = NodeProcess("wmr_dynamics.ros.odometry_node", namespace(), {"vehicle": "rocky7"}, tmp_path / "odo.log")
    try:
        odoms = probe.subscribe(f"{node.ns}/odom", Odometry, depth=1000)
        probe.wait_publisher(f"{node.ns}/odom")
        player = subprocess.Popen([sys.executable, "-m", "wmr_dynamics.ros.bag_play", str(bag), "--rate", "4",
                                   "--topics", "/joint_states", "/imu", "--namespace", node.ns,
                                   "--wait-subscribers", "60"], env=ros_env(), cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        probe.wait_for(lambda: player.poll() is not None, 180.0, what="the player to finish")
        assert player.returncode == 0, player.stdout.read()
        probe.wait_for(lambda: len(odoms) >= 500, 30.0, what="an odom for every joint state after the first")
        assert node.proc.poll() is None, node.output()
    finally:
        assert node.stop() == 0, node.output()
    # the truth path relative to its start (the odometry starts at the origin with yaw 0; the run starts with yaw 0)
    dx, dy, yaw = truth[-1, 1] - truth[0, 1], truth[-1, 2] - truth[0, 2], truth[-1, 3]
    distance = np.sum(np.hypot(np.diff(truth[:, 1]), np.diff(truth[:, 2])))
    x, y, yaw_odo = _final_odom_pose(odoms)
    assert math.hypot(x - dx, y - dy) < 0.01 * distance
    assert abs(yaw_odo - yaw) < 0.01
    # wmr-odometry on the same bag: the node's path, stamp for stamp
    out = tmp_path / "odo.csv"
    assert odometry_main([str(bag), "--vehicle", "rocky7", "--out", str(out), "--json"]) == 0
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["stamp_ns", "t_s", "x_m", "y_m", "z_m", "roll_rad", "pitch_rad", "yaw_rad"]
    by_stamp = {int(r["stamp_ns"]): r for r in rows}
    for o in odoms:
        r = by_stamp[o.header.stamp.sec * 10**9 + o.header.stamp.nanosec]
        assert float(r["x_m"]) == pytest.approx(o.pose.pose.position.x, abs=1e-6)
        assert float(r["y_m"]) == pytest.approx(o.pose.pose.position.y, abs=1e-6)
        assert float(r["z_m"]) == pytest.approx(o.pose.pose.position.z, abs=1e-6)
    assert float(rows[0]["t_s"]) == 0.0 and float(rows[-1]["t_s"]) == pytest.approx(10.0)


def test_wmr_odometry_reports_a_missing_topic_clearly(recording, tmp_path, capsys):
    bag, _ = recording
    assert odometry_main([str(bag), "--joint-states-topic", "/wheels", "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "no topic /wheels" in err and "/joint_states" in err
    assert not (tmp_path / "x.csv").exists()


def test_wmr_odometry_json_summary(recording, tmp_path, capsys):
    bag, truth = recording
    assert odometry_main([str(bag), "--out", str(tmp_path / "o.csv"), "--json", "--imu-topic", ""]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["rows"] == 501 and summary["distance_m"] == pytest.approx(5.0, rel=0.01)
    assert abs(summary["final_pose"][2]) < 1e-5  # no IMU: planar (a level-ground attitude, not a drifting z)


def test_calibrated_wheel_radii_scale_the_odometry_and_bad_params_are_named(recording, tmp_path, capsys):
    bag, _ = recording
    base = odometry_from_bag(bag, load_model("rocky7"))
    params = tmp_path / "cal.yaml"
    wheels = {j: {"radius": 0.065 * 1.1} for j in load_model("rocky7").wheel_joint_names}
    params.write_text(yaml.safe_dump({"model": "kinematic", "slip": [0.0] * 6, "wheels": wheels}))
    big = odometry_from_bag(bag, load_model("rocky7"), OdometryParams.load(params))

    def dist(rows):
        return np.sum(np.linalg.norm(np.diff(rows[:, 2:4], axis=0), axis=1))

    assert dist(big) == pytest.approx(1.1 * dist(base), rel=0.01)  # same wheel rates, 10 % larger wheels
    assert big[-1, 7] == pytest.approx(1.1 * base[-1, 7], rel=0.01)  # and the turn: ω ∝ r Δθ̇ / track
    start = odometry_from_bag(bag, load_model("rocky7"), initial_pose=(1.0, 2.0, 0.5, math.pi / 2))
    assert start[0, 2:5] == pytest.approx([1.0, 2.0, 0.5])
    assert start[-1, 2] - 1.0 == pytest.approx(-(base[-1, 3]), abs=1e-6)  # rotated by 90°: x' = −y
    params.write_text("model: enhanced\nslip: [1, 2]\n")
    with pytest.raises(ModelError, match="slip: expected 6 finite numbers"):
        OdometryParams.load(params)
    params.write_text("model: kinematic\ngain: 3\n")
    assert odometry_main([str(bag), "--params", str(params), "--out", str(tmp_path / "o.csv")]) == 2
    assert "unknown keys ['gain']" in capsys.readouterr().err


def test_recording_to_sqlite_and_into_an_existing_folder(tmp_path, capsys):
    args = ["--vehicle", "zoe", "--terrain", "flat", "--duration", "1", "--no-plots", "--out", str(tmp_path)]
    assert sim_main([*args, "--record", str(tmp_path / "run.db3")]) == 0
    assert (tmp_path / "run" / "run.db3").is_file()
    assert topics(tmp_path / "run")["/joint_states"] == "sensor_msgs/msg/JointState"
    assert sum(1 for _ in read(tmp_path / "run" / "run.db3", ["/gps/odom"])) == 11
    assert sim_main([*args, "--record", str(tmp_path / "run.db3")]) == 2  # never overwrites a bag
    assert "already exists" in capsys.readouterr().err
