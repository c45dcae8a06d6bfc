"""Conversions between the library's arrays and ROS 2 messages (no node, no DDS: plain functions).

Conventions (REP 103 / REP 105): the state's body quaternion q[0:4] is (x, y, z, w), as in
geometry_msgs/Quaternion; q̇' = [ω_b; v_b; θ̇] holds the body twist in the body frame, which is what
nav_msgs/Odometry's twist means (expressed in ``child_frame_id``).

Incoming maps are checked here: a malformed message raises :class:`MessageError` naming the field and what
is wrong, and the node logs it and keeps its current terrain.
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, TransformStamped, Vector3
from nav_msgs.msg import Odometry
from numpy.typing import NDArray
from sensor_msgs.msg import Imu, JointState, NavSatFix, NavSatStatus, PointCloud2, PointField
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from wmr_dynamics.errors import TerrainError, WmrError
from wmr_dynamics.terrain import HeightGrid

#: largest map a node accepts (cells); a 2,000 × 2,000 grid at 5 cm is 100 m × 100 m
MAX_MAP_CELLS = 4_000_000


class MessageError(WmrError, ValueError):
    """A received message that cannot be used (the text names the field and what is wrong)."""


def stamp(t_s: float) -> Time:
    """builtin_interfaces/Time for ``t_s`` seconds (t ≥ 0)."""
    sec = int(np.floor(t_s))
    return Time(sec=sec, nanosec=min(int(round((t_s - sec) * 1e9)), 999_999_999))


def seconds(t: Time) -> float:
    """A builtin_interfaces/Time in seconds."""
    return t.sec + 1e-9 * t.nanosec


# ---- outgoing ------------------------------------------------------------------------------------------
def odometry(t: Time, frame_id: str, child_frame_id: str, q: NDArray, qvel: NDArray,
             pose_var: float, twist_var: float) -> Odometry:
    """nav_msgs/Odometry of the body: pose from q (world = ``frame_id``), twist from q̇' (body frame), with
    diagonal covariances ``pose_var`` (m², rad²) and ``twist_var`` ((m/s)², (rad/s)²)."""
    m = Odometry()
    m.header.stamp, m.header.frame_id, m.child_frame_id = t, frame_id, child_frame_id
    p, o = m.pose.pose.position, m.pose.pose.orientation
    p.x, p.y, p.z = float(q[4]), float(q[5]), float(q[6])
    o.x, o.y, o.z, o.w = (float(v) for v in q[:4])
    m.pose.covariance = _diag6(pose_var)
    tw = m.twist.twist
    tw.angular.x, tw.angular.y, tw.angular.z = (float(v) for v in qvel[:3])
    tw.linear.x, tw.linear.y, tw.linear.z = (float(v) for v in qvel[3:6])
    m.twist.covariance = _diag6(twist_var)
    return m


def _diag6(var: float) -> NDArray:
    c = np.zeros(36)
    c[::7] = var
    return c


def transform(t: Time, frame_id: str, child_frame_id: str, q: NDArray) -> TransformStamped:
    """geometry_msgs/TransformStamped frame_id → child_frame_id of the body pose in q."""
    m = TransformStamped()
    m.header.stamp, m.header.frame_id, m.child_frame_id = t, frame_id, child_frame_id
    tr, r = m.transform.translation, m.transform.rotation
    tr.x, tr.y, tr.z = float(q[4]), float(q[5]), float(q[6])
    r.x, r.y, r.z, r.w = (float(v) for v in q[:4])
    return m


def joint_state(t: Time, names: list[str], position: NDArray, velocity: NDArray) -> JointState:
    """sensor_msgs/JointState (rad, rad/s; m, m/s for prismatic joints)."""
    m = JointState()
    m.header.stamp = t
    m.name = list(names)
    m.position = np.asarray(position, dtype=float)
    m.velocity = np.asarray(velocity, dtype=float)
    return m


def imu(t: Time, frame_id: str, quat: NDArray, gyro: NDArray, accel: NDArray, var_att: float, var_gyro: float,
        var_acc: float) -> Imu:
    """sensor_msgs/Imu: attitude (x, y, z, w), angular rate (rad/s) and specific force (m/s²), body frame,
    with diagonal covariances."""
    m = Imu()
    m.header.stamp, m.header.frame_id = t, frame_id
    o = m.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quat)
    m.angular_velocity = Vector3(x=float(gyro[0]), y=float(gyro[1]), z=float(gyro[2]))
    m.linear_acceleration = Vector3(x=float(accel[0]), y=float(accel[1]), z=float(accel[2]))
    m.orientation_covariance = np.eye(3).ravel() * var_att
    m.angular_velocity_covariance = np.eye(3).ravel() * var_gyro
    m.linear_acceleration_covariance = np.eye(3).ravel() * var_acc
    return m


def nav_sat_fix(t: Time, frame_id: str, lla: NDArray, var: float) -> NavSatFix:
    """sensor_msgs/NavSatFix of latitude, longitude (deg) and altitude (m), diagonal covariance (m²)."""
    m = NavSatFix(latitude=float(lla[0]), longitude=float(lla[1]), altitude=float(lla[2]))
    m.header.stamp, m.header.frame_id = t, frame_id
    m.status.status, m.status.service = NavSatStatus.STATUS_FIX, NavSatStatus.SERVICE_GPS
    m.position_covariance = np.eye(3).ravel() * var
    m.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    return m


def _color(r: float, g: float, b: float, a: float = 1.0) -> ColorRGBA:
    return ColorRGBA(r=r, g=g, b=b, a=a)


def contact_markers(t: Time, frame_id: str, points: NDArray, normals: NDArray, in_contact: NDArray,
                    forces: NDArray | None = None, newton_per_m: float = 200.0) -> MarkerArray:
    """visualization_msgs/MarkerArray: contact points (green in contact, grey lifted), unit normals (0.2 m
    lines) and, in dynamic mode, the contact forces (world frame, N; lines of 1 m per ``newton_per_m``) —
    three markers whatever the number of wheels."""
    arr = MarkerArray()
    pts = Marker(type=Marker.SPHERE_LIST, action=Marker.ADD, ns="contact_points", id=0)
    pts.scale = Vector3(x=0.04, y=0.04, z=0.04)
    pts.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in points]
    pts.colors = [_color(0.1, 0.8, 0.1) if c else _color(0.6, 0.6, 0.6) for c in in_contact]
    arr.markers.append(pts)
    for ns, vecs, width, color in (("contact_normals", 0.2 * np.asarray(normals), 0.01, _color(0.2, 0.4, 1.0)),
                                   ("contact_forces", None if forces is None else np.asarray(forces) / newton_per_m,
                                    0.02, _color(1.0, 0.3, 0.1))):
        if vecs is None:
            continue
        lines = Marker(type=Marker.LINE_LIST, action=Marker.ADD, ns=ns, id=0, color=color)
        lines.scale = Vector3(x=width, y=0.0, z=0.0)
        ends = np.empty((2 * len(points), 3))
        ends[0::2], ends[1::2] = points, np.asarray(points) + vecs
        lines.points = [Point(x=float(e[0]), y=float(e[1]), z=float(e[2])) for e in ends]
        arr.markers.append(lines)
    for m in arr.markers:
        m.header.stamp, m.header.frame_id = t, frame_id
        m.pose.orientation.w = 1.0
    return arr


def terrain_marker(t: Time, frame_id: str, terrain, bounds: tuple[float, float, float, float],  # noqa: ANN001
                   spacing: float) -> Marker:
    """visualization_msgs/Marker TRIANGLE_LIST of the terrain over ``bounds`` (x_min, x_max, y_min, y_max; m)
    sampled every ``spacing`` m, coloured by height."""
    x0, x1, y0, y1 = bounds
    xs = np.linspace(x0, x1, max(2, int(round((x1 - x0) / spacing)) + 1))
    ys = np.linspace(y0, y1, max(2, int(round((y1 - y0) / spacing)) + 1))
    X, Y = np.meshgrid(xs, ys)
    Z = np.asarray(terrain.height(X, Y), dtype=float)
    lo, span = float(Z.min()), max(float(np.ptp(Z)), 1e-6)
    m = Marker(type=Marker.TRIANGLE_LIST, action=Marker.ADD, ns="terrain", id=0)
    m.header.stamp, m.header.frame_id = t, frame_id
    m.pose.orientation.w = 1.0
    m.scale = Vector3(x=1.0, y=1.0, z=1.0)
    pts, cols = [], []
    for j in range(len(ys) - 1):
        for i in range(len(xs) - 1):
            corners = ((j, i), (j, i + 1), (j + 1, i + 1), (j, i), (j + 1, i + 1), (j + 1, i))
            for a, b in corners:
                pts.append(Point(x=float(X[a, b]), y=float(Y[a, b]), z=float(Z[a, b])))
                s = (Z[a, b] - lo) / span
                cols.append(_color(0.35 + 0.4 * s, 0.3 + 0.3 * s, 0.2 + 0.1 * s))
    m.points, m.colors = pts, cols
    return m


# ---- incoming ------------------------------------------------------------------------------------------
def grid_map_heights(msg, layer: str = "elevation") -> HeightGrid:  # noqa: ANN001
    """grid_map_msgs/GridMap → :class:`HeightGrid` of ``layer`` (m), in the map's ``header.frame_id``.

    Layout (grid_map's convention): cell (0, 0) is the corner at maximum x and y; rows run along −x and
    columns along −y; the layer's Float32MultiArray is column-major unless ``layout.dim[0].label`` is
    ``row_index``; the start indices rotate a circular buffer.  NaN cells (unknown) take the height of the
    nearest known cell.  The map must be axis-aligned (its pose's yaw 0).
    """
    info = msg.info
    res, lx, ly = float(info.resolution), float(info.length_x), float(info.length_y)
    if not (np.isfinite(res) and res > 0):
        raise MessageError(f"GridMap info.resolution: expected a positive cell size in m, got {res}")
    if not (np.isfinite(lx) and np.isfinite(ly) and lx > 0 and ly > 0):
        raise MessageError(f"GridMap info.length_x/length_y: expected positive lengths in m, got {lx}, {ly}")
    rows, cols = int(round(lx / res)), int(round(ly / res))
    if rows < 2 or cols < 2 or rows * cols > MAX_MAP_CELLS:
        raise MessageError(f"GridMap size: {rows} x {cols} cells (length / resolution); need at least 2 x 2 and "
                           f"at most {MAX_MAP_CELLS} cells")
    o = info.pose.orientation
    if abs(o.x) > 1e-6 or abs(o.y) > 1e-6 or abs(o.z) > 1e-6:
        raise MessageError("GridMap info.pose.orientation: only axis-aligned maps (identity orientation) are "
                           f"supported, got ({o.x}, {o.y}, {o.z}, {o.w})")
    if layer not in msg.layers:
        raise MessageError(f"GridMap layers: no '{layer}' layer among {list(msg.layers)}")
    k = list(msg.layers).index(layer)
    if k >= len(msg.data):
        raise MessageError(f"GridMap data: {len(msg.data)} arrays for {len(msg.layers)} layers")
    arr = msg.data[k]
    values = np.asarray(arr.data, dtype=float)
    if values.size != rows * cols:
        raise MessageError(f"GridMap data['{layer}']: {values.size} values, expected {rows} x {cols} = "
                           f"{rows * cols} (length / resolution)")
    dims = arr.layout.dim
    row_major = len(dims) > 0 and dims[0].label == "row_index"
    M = values.reshape(rows, cols) if row_major else values.reshape(cols, rows).T
    M = np.roll(M, (-int(msg.outer_start_index), -int(msg.inner_start_index)), axis=(0, 1))
    if np.isinf(M).any():
        raise MessageError(f"GridMap data['{layer}']: contains inf")
    if np.isnan(M).all():
        raise MessageError(f"GridMap data['{layer}']: every cell is NaN (unknown)")
    p = info.pose.position
    # rows along −x: the last row has the smallest x; cell centres half a cell inside the map's edge
    heights = M[::-1, ::-1].T  # → [j (y up), i (x up)]
    try:
        return HeightGrid(p.x - lx / 2 + res / 2, p.y - ly / 2 + res / 2, res, res, heights, fill_holes=True,
                          source="GridMap")
    except TerrainError as e:
        raise MessageError(str(e)) from None


_FLOAT = {PointField.FLOAT32: "f4", PointField.FLOAT64: "f8"}


def cloud_heights(msg: PointCloud2) -> HeightGrid:
    """An organized sensor_msgs/PointCloud2 height map (height × width points with float x, y, z on a regular
    axis-aligned grid: x along the columns, y along the rows) → :class:`HeightGrid` (m).  NaN z are holes,
    filled with the nearest valid height."""
    h, w = int(msg.height), int(msg.width)
    if h < 2 or w < 2:
        raise MessageError(f"PointCloud2: an organized cloud of at least 2 x 2 points is needed, got height {h}, "
                           f"width {w}")
    if h * w > MAX_MAP_CELLS:
        raise MessageError(f"PointCloud2: {h * w} points, at most {MAX_MAP_CELLS}")
    fields = {f.name: f for f in msg.fields}
    if not {"x", "y", "z"} <= set(fields):
        raise MessageError(f"PointCloud2 fields: need x, y, z, got {sorted(fields)}")
    step = int(msg.point_step)
    data = bytes(msg.data)
    if len(data) < h * int(msg.row_step) or int(msg.row_step) < w * step:
        raise MessageError(f"PointCloud2 data: {len(data)} bytes for {h} rows of row_step {msg.row_step} "
                           f"(point_step {step}, width {w})")
    xyz = []
    for name in "xyz":
        f = fields[name]
        if f.datatype not in _FLOAT:
            raise MessageError(f"PointCloud2 field {name}: datatype {f.datatype}, expected FLOAT32 or FLOAT64")
        dt = np.dtype(_FLOAT[f.datatype]).newbyteorder(">" if msg.is_bigendian else "<")
        buf = np.frombuffer(data, dtype=np.uint8)[:h * int(msg.row_step)].reshape(h, int(msg.row_step))
        cols = buf[:, f.offset + step * np.arange(w)[:, None] + np.arange(dt.itemsize)[None, :]]
        xyz.append(np.ascontiguousarray(cols).view(dt).reshape(h, w).astype(float))
    X, Y, Z = xyz
    if not (np.isfinite(X).all() and np.isfinite(Y).all()):
        raise MessageError("PointCloud2: x or y contains NaN/inf (an organized height map needs every cell's x, y)")
    dx, dy = X[0, 1] - X[0, 0], Y[1, 0] - Y[0, 0]
    tol = 1e-3 * max(abs(dx), abs(dy), 1e-9)
    if (dx == 0 or dy == 0 or np.abs(np.diff(X, axis=1) - dx).max() > tol or np.abs(np.diff(Y, axis=0) - dy).max() > tol
            or np.abs(X - X[:1]).max() > tol or np.abs(Y - Y[:, :1]).max() > tol):
        raise MessageError("PointCloud2: not a regular axis-aligned grid (x must vary along the columns and y "
                           "along the rows with constant spacing)")
    if np.isinf(Z).any():
        raise MessageError("PointCloud2: z contains inf")
    if dx < 0:
        X, Z = X[:, ::-1], Z[:, ::-1]
    if dy < 0:
        Y, Z = Y[::-1], Z[::-1]
    try:
        return HeightGrid(X[0, 0], Y[0, 0], abs(dx), abs(dy), Z, fill_holes=True, source="PointCloud2")
    except TerrainError as e:
        raise MessageError(str(e)) from None
