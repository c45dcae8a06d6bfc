"""Message conversions (no DDS): GridMap and PointCloud2 height maps read back against heights written by an
independent writer, malformed maps rejected with the field named; odometry / TF conventions; speed limits."""

from __future__ import annotations

import numpy as np
import pytest
from ros_util import grid_map
from sensor_msgs.msg import PointCloud2, PointField

from wmr_dynamics import spatial
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.limits import command_scale, limit_command, limit_rates
from wmr_dynamics.ros import convert
from wmr_dynamics.ros.convert import MessageError
from wmr_dynamics.urdf import load_model

RES, X0, Y0 = 0.1, -1.0, 2.0


def _plane(nx: int = 30, ny: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys = X0 + RES * np.arange(nx), Y0 + RES * np.arange(ny)
    return xs, ys, 0.3 * xs[:, None] - 0.7 * ys[None, :] + 0.01 * xs[:, None] * ys[None, :]  # not symmetric


@pytest.mark.parametrize("row_major", [False, True])
@pytest.mark.parametrize("start", [(0, 0), (7, 3)])
def test_grid_map_heights_match_the_written_cells_in_every_layout(row_major, start):
    xs, ys, h = _plane()
    grid = convert.grid_map_heights(grid_map(h, X0, Y0, RES, row_major=row_major, start=start))
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    np.testing.assert_allclose(grid.height(X, Y), h.astype(np.float32), atol=1e-6)
    assert (grid.x_min, grid.y_min, grid.dx) == pytest.approx((X0, Y0, RES))


def test_grid_map_unknown_cells_take_the_nearest_known_height():
    xs, ys, h = _plane()
    h = h.copy()
    h[5, 6] = np.nan
    grid = convert.grid_map_heights(grid_map(h, X0, Y0, RES))
    neighbours = [h[4, 6], h[6, 6], h[5, 5], h[5, 7]]
    assert np.isfinite(grid.height(xs[5], ys[6]))
    assert min(abs(grid.height(xs[5], ys[6]) - n) for n in neighbours) < 1e-6


@pytest.mark.parametrize("spoil, field", [
    (lambda m: setattr(m.info, "resolution", 0.0), "info.resolution"),
    (lambda m: setattr(m.info, "resolution", float("nan")), "info.resolution"),
    (lambda m: setattr(m.info, "length_x", -1.0), "info.length_x"),
    (lambda m: setattr(m, "layers", ["traversability"]), "no 'elevation' layer"),
    (lambda m: setattr(m.data[0], "data", m.data[0].data[:-1]), "data['elevation']: 599 values, expected 30 x 20"),
    (lambda m: setattr(m.data[0], "data", [float("nan")] * 600), "every cell is NaN"),
    (lambda m: setattr(m.data[0], "data", [float("inf")] * 600), "contains inf"),
    (lambda m: setattr(m.info.pose.orientation, "z", 0.38), "axis-aligned"),
    (lambda m: setattr(m.info, "length_x", 1e6), "at most"),
])
def test_malformed_grid_maps_are_rejected_naming_the_field(spoil, field):
    _, _, h = _plane()
    msg = grid_map(h, X0, Y0, RES)
    spoil(msg)
    with pytest.raises(MessageError, match="GridMap") as e:
        convert.grid_map_heights(msg)
    assert field in str(e.value)


def _cloud(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, dtype: str = "<f4") -> PointCloud2:
    rows, cols = X.shape
    pts = np.zeros((rows, cols), dtype=[("x", dtype), ("y", dtype), ("z", dtype), ("intensity", "<f4")])
    pts["x"], pts["y"], pts["z"] = X, Y, Z
    kind = PointField.FLOAT32 if dtype == "<f4" else PointField.FLOAT64
    size = np.dtype(dtype).itemsize
    msg = PointCloud2(height=rows, width=cols, is_bigendian=False, is_dense=False,
                      point_step=pts.dtype.itemsize, row_step=pts.dtype.itemsize * cols)
    msg.fields = [PointField(name=n, offset=k * size, datatype=kind, count=1) for k, n in enumerate("xyz")]
    msg.fields.append(PointField(name="intensity", offset=3 * size, datatype=PointField.FLOAT32, count=1))
    msg.data = pts.tobytes()
    return msg


@pytest.mark.parametrize("dtype", ["<f4", "<f8"])
@pytest.mark.parametrize("flip", [False, True])
def test_organized_point_cloud_height_map(dtype, flip):
    xs, ys, h = _plane()
    X, Y = np.meshgrid(xs, ys)  # rows along y, columns along x
    Z = h.T
    if flip:  # x decreasing along the columns, y decreasing along the rows
        X, Y, Z = X[::-1, ::-1], Y[::-1, ::-1], Z[::-1, ::-1]
    Z = Z.copy()
    grid = convert.cloud_heights(_cloud(X, Y, Z, dtype))
    np.testing.assert_allclose(grid.height(X, Y), Z, atol=1e-5)


def test_point_clouds_that_are_not_height_maps_are_rejected():
    xs, ys, h = _plane()
    X, Y = np.meshgrid(xs, ys)
    with pytest.raises(MessageError, match="regular axis-aligned grid"):
        convert.cloud_heights(_cloud(X + 0.03 * np.sin(Y * 7), Y, h.T))
    with pytest.raises(MessageError, match="at least 2 x 2"):
        convert.cloud_heights(_cloud(X[:1], Y[:1], h.T[:1]))
    short = _cloud(X, Y, h.T)
    short.data = bytes(short.data)[:-16]
    with pytest.raises(MessageError, match="bytes for 20 rows"):
        convert.cloud_heights(short)


def test_odometry_and_transform_follow_rep_103():
    q = np.zeros(7)
    q[:4] = spatial.rpy_to_quat((0.1, -0.2, 1.0))
    q[4:7] = (1.0, 2.0, 3.0)
    qvel = np.array([0.01, 0.02, 0.3, 0.5, -0.1, 0.05])
    t = convert.stamp(12.25)
    assert (t.sec, t.nanosec) == (12, 250_000_000)
    o = convert.odometry(t, "odom", "base", q, qvel, 1e-4, 1e-3)
    assert (o.pose.pose.position.x, o.pose.pose.position.z) == (1.0, 3.0)
    assert [o.pose.pose.orientation.x, o.pose.pose.orientation.w] == [q[0], q[3]]
    assert (o.twist.twist.linear.x, o.twist.twist.angular.z) == (0.5, 0.3)  # body-frame twist, child frame
    assert o.pose.covariance[0] == 1e-4 and o.pose.covariance[35] == 1e-4 and o.pose.covariance[1] == 0
    tf = convert.transform(t, "odom", "base", q)
    assert tf.transform.translation.y == 2.0 and tf.transform.rotation.z == q[2]


def test_commands_beyond_the_wheel_speed_limits_scale_to_the_limit():
    m = load_model("zoe")  # wheels r = 0.325 m, <limit velocity="10"/>
    ctrl = BodyVelocityController(m)
    q = m.neutral_state()
    T = forward_kinematics(m, q)
    v, w, s = limit_command(m, ctrl, q, T, 100.0, 0.0)
    assert v == pytest.approx(10 * 0.325, rel=1e-6) and w == 0.0 and s == pytest.approx(0.0325, rel=1e-6)
    v, w, s = limit_command(m, ctrl, q, T, 1.0, 0.2)
    assert (v, w, s) == (1.0, 0.2, 1.0)
    v, w, s = limit_command(m, ctrl, q, T, 20.0, 4.0)  # curvature kept, fastest wheel at 10 rad/s
    assert w / v == pytest.approx(0.2) and np.abs(ctrl(q, T, v, w)).max() == pytest.approx(10.0, rel=0.01)
    assert np.abs(ctrl(q, T, v, w)).max() <= 10.0 * 1.001
    assert command_scale(m, [5.0, -20.0, 1.0, 1.0]) == pytest.approx(0.5)
    u, clipped = limit_rates(m, [5.0, -20.0, 1.0, 11.0])
    assert clipped and u.tolist() == [5.0, -10.0, 1.0, 10.0]


def test_contact_markers_draw_points_normals_and_forces_to_scale():
    pts = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 0.1]])
    normals = np.array([[0.0, 0.0, 1.0], [0.6, 0.0, 0.8]])
    forces = np.array([[0.0, 0.0, 100.0], [10.0, 0.0, 200.0]])
    arr = convert.contact_markers(convert.stamp(1.0), "odom", pts, normals, np.array([True, False]), forces, 100.0)
    by_ns = {m.ns: m for m in arr.markers}
    assert set(by_ns) == {"contact_points", "contact_normals", "contact_forces"}
    assert [c.g for c in by_ns["contact_points"].colors] == pytest.approx([0.8, 0.6])  # lifted: grey
    n = by_ns["contact_normals"].points
    assert (n[3].x - n[2].x, n[3].z - n[2].z) == pytest.approx((0.12, 0.16))  # 0.2 m along the normal
    f = by_ns["contact_forces"].points
    assert (f[3].x - f[2].x, f[3].z - f[2].z) == pytest.approx((0.1, 2.0))  # 1 m per 100 N
    assert all(m.header.frame_id == "odom" for m in arr.markers)
