"""The simulator node over real DDS (loopback only): commands in, odom / TF / joint states out, terrain maps,
malformed input.  Each node runs in a subprocess in a namespace of its own."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Twist, TwistStamped
from grid_map_msgs.msg import GridMap
from nav_msgs.msg import Odometry
from ros_util import NodeProcess, Probe, grid_map, namespace
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage

from wmr_dynamics.urdf import load_model

START_TIMEOUT = 120.0  # s: a node's start (engine loaded from the warm cache in a few seconds)


def _start(tmp_path, params: dict, probe: Probe) -> NodeProcess:
    # a loaded test machine may starve the probe for a while: commands must not time out meanwhile
    params = {"cmd_timeout": 10.0, **params}
    node = NodeProcess("wmr_dynamics.ros.sim_node", namespace(), params, tmp_path / "node.log")
    probe.subscribe(f"{node.ns}/odom", Odometry)
    try:
        probe.wait_for(lambda: len(probe.received[f"{node.ns}/odom"]) > 0 or node.proc.poll() is not None,
                       START_TIMEOUT, what="the first odom")
    except AssertionError:
        node.stop()
        raise AssertionError(node.output()) from None
    assert node.proc.poll() is None, node.output()
    return node


def _twist(v: float, w: float = 0.0) -> Twist:
    t = Twist()
    t.linear.x, t.angular.z = v, w
    return t


def _t(msg) -> float:  # noqa: ANN001
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def _speed(odoms: list, window: float) -> float:
    """Mean speed (m/s) over the last ``window`` s of simulated time, from positions and stamps."""
    last = odoms[-1]
    first = next(o for o in odoms if _t(o) >= _t(last) - window)
    p0, p1 = first.pose.pose.position, last.pose.pose.position
    return math.hypot(p1.x - p0.x, p1.y - p0.y) / (_t(last) - _t(first))


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_cmd_vel_drives_odom_at_the_commanded_speed_and_tf_and_joint_states_agree(tmp_path, probe, mode):
    model = load_model("rocky7")
    prefix = f"r{mode[0]}_"  # frames of its own: other tests' nodes publish on the same /tf
    node = _start(tmp_path, {"vehicle": "rocky7", "world": "flat", "mode": mode, "real_time_factor": 4.0,
                             "dt": 0.01 if mode == "kinematic" else 0.005, "frame_prefix": prefix}, probe)
    try:
        ns = node.ns
        tfs = probe.subscribe("/tf", TFMessage)
        joints = probe.subscribe(f"{ns}/joint_states", JointState)
        odoms = probe.received[f"{ns}/odom"]
        probe.publish(f"{ns}/cmd_vel", _twist(0.5))  # matched before the window starts
        t_start = _t(odoms[-1])
        probe.wait_for(lambda: _t(odoms[-1]) > t_start + 4.0, 30.0, every=lambda: probe.publish(f"{ns}/cmd_vel",
                       _twist(0.5)), what="4 s of simulated driving")
        assert node.proc.poll() is None, node.output()
        assert _speed(odoms, 1.5) == pytest.approx(0.5, abs=0.05)
        last = odoms[-1]
        assert last.twist.twist.linear.x == pytest.approx(0.5, abs=0.05)  # body frame
        base = prefix + model.frame_names[0]
        assert last.header.frame_id == prefix + "odom" and last.child_frame_id == base
        assert all(np.isfinite(o.pose.pose.position.x) for o in odoms)
        # /tf carries the same pose as odom at the same stamp
        mine = {(_t(m.transforms[0])): m.transforms[0] for m in tfs
                if m.transforms and m.transforms[0].child_frame_id == base}
        matched = [(o, mine[_t(o)]) for o in odoms[-20:] if _t(o) in mine]
        assert len(matched) >= 10
        for o, tf in matched:
            assert tf.header.frame_id == prefix + "odom"
            assert tf.transform.translation.x == pytest.approx(o.pose.pose.position.x, abs=1e-9)
            assert tf.transform.translation.z == pytest.approx(o.pose.pose.position.z, abs=1e-9)
            assert tf.transform.rotation.w == pytest.approx(o.pose.pose.orientation.w, abs=1e-9)
        # every movable joint, the wheels turning at v / r
        js = joints[-1]
        assert list(js.name) == model.joint_names
        assert len(js.position) == len(js.velocity) == model.num_joints
        rate = dict(zip(js.name, js.velocity, strict=True))
        for name, r in zip(model.wheel_joint_names, model.wheel_radii, strict=True):
            assert rate[name] == pytest.approx(0.5 / r, rel=0.1), name
    finally:
        assert node.stop() == 0, node.output()


def test_a_tracked_robot_drives_from_cmd_vel(tmp_path, probe):
    """Talon (two tracks, Contact Surface Motion): cmd_vel moves it at the commanded speed, and joint states
    carry the sprocket joints turning at the belt speed over the sprocket radius."""
    model = load_model("talon")
    r_s = model.wheel_radii[0]  # the sprocket radius, m
    node = _start(tmp_path, {"vehicle": "talon", "world": "flat", "mode": "dynamic", "real_time_factor": 4.0,
                             "dt": 0.01, "frame_prefix": "talon_"}, probe)
    try:
        ns = node.ns
        joints = probe.subscribe(f"{ns}/joint_states", JointState)
        odoms = probe.received[f"{ns}/odom"]
        probe.publish(f"{ns}/cmd_vel", _twist(0.3))
        t_start = _t(odoms[-1])
        probe.wait_for(lambda: _t(odoms[-1]) > t_start + 4.0, 30.0, every=lambda: probe.publish(f"{ns}/cmd_vel",
                       _twist(0.3)), what="4 s of simulated driving")
        assert node.proc.poll() is None, node.output()
        assert _speed(odoms, 1.5) == pytest.approx(0.3, abs=0.015)
        rate = dict(zip(joints[-1].name, joints[-1].velocity, strict=True))
        assert set(rate) == set(model.joint_names) == {"left_track_joint", "right_track_joint"}
        for name in rate:
            assert rate[name] == pytest.approx(0.3 / r_s, rel=0.02), name
    finally:
        assert node.stop() == 0, node.output()


def test_absurd_and_malformed_commands_are_rejected_or_limited_and_nothing_nan_is_published(tmp_path, probe):
    model = load_model("rocky7")
    node = _start(tmp_path, {"vehicle": "rocky7", "world": "flat", "real_time_factor": 4.0}, probe)
    try:
        ns = node.ns
        odoms = probe.received[f"{ns}/odom"]
        nan_cmd = _twist(float("nan"), 0.0)
        probe.spin(1.0, every=lambda: probe.publish(f"{ns}/cmd_vel", nan_cmd))
        bad_len = Float64MultiArray(data=[1.0, 2.0])
        probe.spin(0.5, every=lambda: probe.publish(f"{ns}/joint_commands", bad_len))
        assert node.proc.poll() is None, node.output()
        p = odoms[-1].pose.pose.position
        assert math.hypot(p.x - 1.1, p.y) < 0.01  # never moved: every command so far was rejected
        # 1e6 m/s: scaled down to the wheels' URDF speed limit, 20 rad/s x 0.065 m = 1.3 m/s
        t0 = _t(odoms[-1])
        probe.wait_for(lambda: _t(odoms[-1]) > t0 + 3.0, 30.0,
                       every=lambda: probe.publish(f"{ns}/cmd_vel", _twist(1e6)), what="3 s of driving")
        v_lim = model.actuated_velocity_limits[model.actuated_joint_names.index("A1_joint")] * model.wheel_radii[0]
        assert _speed(odoms, 1.0) == pytest.approx(v_lim, rel=0.05)
        for o in odoms:
            vals = [o.pose.pose.position.x, o.pose.pose.position.z, o.twist.twist.linear.x, o.pose.pose.orientation.w]
            assert np.all(np.isfinite(vals))
        log = node.output()
        assert "cmd_vel rejected: non-finite" in log
        assert "joint_commands rejected: 2 values, expected 8" in log
        assert "beyond the wheels' speed limits" in log
        # reset service: back to the start pose and to time 0 (the odom published by the reset itself)
        t_before, n = _t(odoms[-1]), len(odoms)
        reply = probe.call(Trigger, f"{ns}/wmr_sim/reset", Trigger.Request())
        assert reply.success
        probe.wait_for(lambda: _t(odoms[-1]) < t_before, 10.0, what="odom after the reset")
        after = next(o for o in odoms[n:] if _t(o) < t_before - 1.0)
        assert after.pose.pose.position.x == pytest.approx(1.1, abs=0.01)
        # pause: simulated time stands still until resumed
        assert probe.call(SetBool, f"{ns}/wmr_sim/pause", SetBool.Request(data=True)).success
        probe.spin(0.3)
        n = len(odoms)
        probe.spin(1.0)
        assert len(odoms) == n
        assert probe.call(SetBool, f"{ns}/wmr_sim/pause", SetBool.Request(data=False)).message == "running"
        probe.wait_for(lambda: len(odoms) > n + 10, 10.0, what="odom after resuming")
    finally:
        assert node.stop() == 0, node.output()


def test_a_grid_map_with_a_step_raises_the_vehicle_and_bad_maps_are_rejected(tmp_path, probe):
    node = _start(tmp_path, {"vehicle": "zoe", "world": "flat", "real_time_factor": 4.0,
                             "initial_pose": "[0.0, 0.0, 0.0]"}, probe)
    try:
        ns = node.ns
        odoms = probe.received[f"{ns}/odom"]
        z0 = odoms[-1].pose.pose.position.z
        res = 0.05
        xs = np.arange(-3.0, 8.0 + res / 2, res)
        ys = np.arange(-3.0, 3.0 + res / 2, res)
        h = np.where(xs[:, None] >= 2.0, 0.2, 0.0) * np.ones((1, ys.size))  # 0.2 m step at x = 2 m
        bad = grid_map(h, xs[0], ys[0], res)
        bad.data[0].data = bad.data[0].data[:-5]  # mis-sized
        probe.publish(f"{ns}/terrain_map", bad)
        probe.spin(0.5)  # the node keeps only the latest map (queue depth 1)
        empty = GridMap()
        probe.publish(f"{ns}/terrain_map", empty)
        probe.spin(0.5)
        probe.publish(f"{ns}/terrain_map", grid_map(h, xs[0], ys[0], res))
        # (a bound, not a delay: generous for a loaded machine, as the first-run compile of the node's kernels)
        probe.wait_for(lambda: "terrain replaced" in node.output(), 60.0, what="the map to be taken")
        probe.publish(f"{ns}/cmd_vel", _twist(0.5))  # matched before the window starts
        t0 = _t(odoms[-1])
        probe.wait_for(lambda: _t(odoms[-1]) > t0 + 9.0, 120.0,
                       every=lambda: probe.publish(f"{ns}/cmd_vel", _twist(0.5)),
                       what="9 s of driving")
        p = odoms[-1].pose.pose.position
        assert p.x > 3.5  # past the step with every wheel (Zoë's wheelbase is 1.6 m)
        assert p.z - z0 == pytest.approx(0.2, abs=0.02)
        log = node.output()
        assert "terrain map rejected: GridMap data['elevation']" in log, log
        assert "terrain map rejected: GridMap info.resolution" in log
    finally:
        assert node.stop() == 0, node.output()


def test_a_urdf_that_does_not_parse_is_a_clear_startup_error(tmp_path):
    bad = tmp_path / "broken.urdf"
    bad.write_text("<robot name='x'><link name='a'></robot>")
    node = NodeProcess("wmr_dynamics.ros.sim_node", namespace(), {"urdf_file": str(bad)}, tmp_path / "node.log")
    node.proc.wait(120)
    out = node.output()
    node.stop()
    assert node.proc.returncode == 2, out
    assert "wmr-ros-sim: error: parameter urdf_file:" in out and "broken.urdf" in out and "malformed XML" in out


def test_sim_time_clock_stamped_commands_and_simulated_sensors(tmp_path, probe):
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, NavSatFix

    node = _start(tmp_path, {"vehicle": "zoe", "world": "flat", "real_time_factor": 4.0, "use_sim_time": "true",
                             "frame_prefix": "clk_", "gps_rate": 5.0, "cmd_vel_stamped": "true"}, probe)
    try:
        ns = node.ns
        odoms = probe.received[f"{ns}/odom"]
        clocks = probe.subscribe("/clock", Clock)
        imus = probe.subscribe(f"{ns}/imu", Imu, depth=1000)
        gps = probe.subscribe(f"{ns}/gps/odom", Odometry)
        fixes = probe.subscribe(f"{ns}/fix", NavSatFix)
        stamped = TwistStamped()  # this node takes TwistStamped on cmd_vel
        stamped.twist = _twist(1.0, 0.25)
        probe.publish(f"{ns}/cmd_vel", stamped)  # matched before the window starts
        t0 = _t(odoms[-1])
        probe.wait_for(lambda: _t(odoms[-1]) > t0 + 8.0, 60.0, what="8 s of simulated driving",
                       every=lambda: probe.publish(f"{ns}/cmd_vel", stamped))
        probe.spin(0.5)  # the queued /clock and sensor messages too
        # sim time: stamps from 0 (not the wall clock, 1.7e9 s), /clock carrying the same times
        assert 8.0 < _t(odoms[-1]) < 300.0
        mine = {c.clock.sec + 1e-9 * c.clock.nanosec for c in clocks}
        assert sum(_t(o) in mine for o in odoms[-40:-20]) >= 15, (len(clocks), sorted(mine)[-3:])
        # IMU in the steady turn: gravity reaction up, centripetal v ω to the left, yaw rate ω (Zoë at 1 m/s)
        late = [m for m in imus if _t(m) > _t(odoms[-1]) - 2.0]
        assert len(late) > 50
        f = np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z] for m in late])
        w = np.array([m.angular_velocity.z for m in late])
        assert np.median(f[:, 2]) == pytest.approx(9.81, abs=0.1)
        assert np.median(f[:, 1]) == pytest.approx(0.25, abs=0.05)
        assert np.median(w) == pytest.approx(0.25, abs=0.02)
        # GPS/INS at 5 Hz of simulated time, within a few noise deviations (0.02 m) of the truth
        stamps = np.array([_t(m) for m in gps])
        assert np.median(np.diff(stamps)) == pytest.approx(0.2, abs=1e-6)
        by_t = {_t(o): o.pose.pose.position for o in odoms}
        close = [(m.pose.pose.position, by_t[_t(m)]) for m in gps if _t(m) in by_t]
        assert len(close) > 10
        assert max(abs(a.x - b.x) for a, b in close) < 0.1
        assert len(fixes) == pytest.approx(len(gps), abs=2)
        north = [f.latitude for f in fixes[-5:]]
        assert all(abs(lat - 40.4433) < 1e-3 for lat in north)  # tens of metres from the datum
    finally:
        assert node.stop() == 0, node.output()


def test_a_diverged_state_is_undone_and_never_published(context, probe):
    """In-process node: the state is corrupted between steps (as a blow-up would leave it); the next tick puts
    the vehicle back to its last good state, logs an error, and nothing non-finite reaches odom."""
    from rclpy.parameter import Parameter

    from wmr_dynamics.ros.sim_node import SimNode

    ns = namespace()
    node = SimNode(context=context, namespace=ns, parameter_overrides=[
        Parameter("vehicle", value="zoe"), Parameter("real_time_factor", value=0.0), Parameter("markers", value=False)])
    try:
        odoms = probe.subscribe(f"{ns}/odom", Odometry)
        probe.wait_publisher(f"{ns}/odom")
        node._command = ("twist", np.array([1.0, 0.0]), float("inf"))  # a command that never times out
        for _ in range(50):
            node.tick()
        good_x, good_t = node.data.q[4], node.data.t
        assert good_x > 0.5
        node.data.q[4] = float("nan")  # what a diverged step would leave behind
        node.tick()
        assert np.isfinite(node.data.q).all()
        assert node.data.t == pytest.approx(good_t) and node.data.q[4] == pytest.approx(good_x)
        assert node._command[0] == "twist" and not node._command[1].any()  # stopped until a new command
        node._command = ("twist", np.array([1.0, 0.0]), float("inf"))
        for _ in range(5):
            node.tick()
        assert node.data.q[4] > good_x + 0.05  # and it drives on from the good state
        probe.spin(0.5)
        assert odoms and all(np.isfinite(o.pose.pose.position.x) and abs(o.twist.twist.linear.x) < 10 for o in odoms)
    finally:
        node.destroy_node()
