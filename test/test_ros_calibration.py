"""The calibration node over real DDS, fed by ``wmr-bag-play``: it reaches the offline CLI's parameters on the
same bag, feeds the odometry node live, writes its YAML as it goes and resumes from it."""

from __future__ import annotations

import signal
import subprocess
import sys

import numpy as np
import pytest
import yaml
from ros_util import ROOT, NodeProcess, namespace, ros_env
from std_msgs.msg import Float64MultiArray, String

from wmr_dynamics import load_model
from wmr_dynamics.calibration import calibrate, log_from_bag
from wmr_dynamics.calibration.synthetic import DriveSpec, record, truth_model
from wmr_dynamics.odometry import OdometryParams
from wmr_dynamics.terrain import Plane


@pytest.fixture(scope="module")
def grass_bag(tmp_path_factory):
    model = load_model("landtamer")
    return record(tmp_path_factory.mktemp("live") / "grass.mcap", truth_model(model, "grass"), Plane(),
                  DriveSpec(duration=40.0, seed=6), progress=False)


def test_live_calibration_matches_the_offline_cli_and_feeds_the_odometry(grass_bag, probe, tmp_path):
    params_file = tmp_path / "live.yaml"
    ns = namespace()
    cal = NodeProcess("wmr_dynamics.ros.calibration_node", ns, {"vehicle": "landtamer", "params_file": params_file},
                      tmp_path / "cal.log")
    odo = NodeProcess("wmr_dynamics.ros.odometry_node", ns, {"vehicle": "landtamer"}, tmp_path / "odo.log")
    try:
        residuals = probe.subscribe(f"{ns}/calibration/residual", Float64MultiArray)
        published = probe.subscribe(f"{ns}/calibration/parameters", String, latched=True)
        probe.wait_publisher(f"{ns}/calibration/residual")
        player = subprocess.Popen([sys.executable, "-m", "wmr_dynamics.ros.bag_play", str(grass_bag), "--rate", "4",
                                   "--topics", "/joint_states", "/imu", "/gps/odom", "--namespace", ns,
                                   "--wait-subscribers", "60"], env=ros_env(), cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        probe.wait_for(lambda: player.poll() is not None, 120.0, what="the player to finish")
        assert player.returncode == 0, player.stdout.read()
        probe.wait_for(lambda: len(residuals) >= 19, 30.0, what="a residual for every 2 s interval")
        probe.wait_for(lambda: "calibrated parameters applied" in odo.output(), 10.0, what="the odometry to switch")
        assert cal.proc.poll() is None, cal.output()
    finally:
        # a process manager (launch, systemd) stops with SIGTERM: a clean exit that writes what it learned
        assert cal.stop(signal.SIGTERM) == 0, cal.output()
        assert odo.stop() == 0, odo.output()
    live = yaml.safe_load(params_file.read_text())
    assert yaml.safe_load(published[-1].data)["slip"] == live["slip"]  # the last estimate went out and to disk
    assert OdometryParams.load(params_file).model == "enhanced"
    r = np.array([m.data for m in residuals])
    np.testing.assert_allclose(np.diff(r[:, 0]), 2.0, atol=0.11,  # consecutive 2 s intervals, none skipped
                               err_msg=f"interval starts {r[:, 0].tolist()}; node log:\n{cal.output()[-3000:]}")
    # the offline CLI's computation on the same bag: the same parameters, within their covariance
    model = load_model("landtamer")
    offline = calibrate(model, log_from_bag(grass_bag, model), "enhanced", 2.0)
    sd = np.sqrt(np.diag(offline.cov))
    diff = np.abs(np.array(live["slip"]) - offline.p)
    assert np.all(diff <= 0.5 * sd + 1e-6), (live["slip"], offline.p.tolist(), sd.tolist())
    assert live["calibration"]["accepted"] == offline.accepted

    # a restarted node resumes from the file it wrote
    again = NodeProcess("wmr_dynamics.ros.calibration_node", namespace(),
                        {"vehicle": "landtamer", "params_file": params_file}, tmp_path / "again.log")
    try:
        probe.wait_for(lambda: "resumed from" in again.output() or again.proc.poll() is not None, 60.0,
                       what="the restarted node's start")
        assert f"resumed from {offline.accepted} intervals" in again.output(), again.output()
    finally:
        assert again.stop() == 0, again.output()
    assert yaml.safe_load(params_file.read_text())["slip"] == live["slip"]  # nothing learned, nothing lost


def test_bad_parameters_are_named(tmp_path):
    out = subprocess.run([sys.executable, "-m", "wmr_dynamics.ros.calibration_node", "--ros-args", "-r",
                          f"__ns:={namespace()}", "-p", "vehicle:=landtamer", "-p", "model:=magic"],
                         env=ros_env(), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "parameter model: expected one of enhanced, kinematic, diffdrive, dynamic" in out.stderr
