"""rosbag2 logs (MCAP or SQLite3 storage) written and read with ``rosbags`` — no ROS install, no rclpy.

- :func:`write_run` records a simulated run in the topics the simulator node uses: ``/odom`` (truth),
  ``/tf``, ``/joint_states``, ``/cmd_vel``, and the simulated sensors of :mod:`wmr_dynamics.sensors`:
  ``/imu``, ``/gps/odom`` (GPS/INS pose, noisy) and ``/fix``.  Stamps are the simulated time from
  ``start_ns`` (header stamps and log times agree).
- :func:`read` iterates over a bag's messages (deserialized with the types the bag declares).

A bag is a rosbag2 folder (``metadata.yaml`` + storage file).  Paths ending in ``.mcap`` / ``.db3`` name the
storage format: ``run.mcap`` writes the folder ``run/`` holding ``run.mcap``, which Foxglove and
``ros2 bag`` open.  Readers accept the folder or its storage file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.errors import WmrError
from wmr_dynamics.sensors import SensorSpec

#: header/log time of a recording's first sample (ns): a fixed epoch keeps recordings reproducible
DEFAULT_START_NS = 1_700_000_000 * 1_000_000_000


class BagError(WmrError, ValueError):
    """A bag that cannot be written or read (the text names the file and the problem)."""


def _typestore():  # noqa: ANN202
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_KILTED)


def bag_folder(path: str | Path) -> tuple[Path, str]:
    """(rosbag2 folder, storage "mcap" | "sqlite3") for a path given by a user (see the module docstring)."""
    p = Path(path)
    if p.suffix == ".db3":
        return p.with_suffix(""), "sqlite3"
    return (p.with_suffix("") if p.suffix == ".mcap" else p), "mcap"


@dataclass
class _Msgs:
    """Builders of the messages a recording holds (rosbags dataclasses: every field given)."""

    ts: object

    def __post_init__(self) -> None:
        t = self.ts.types
        self.T = {k.rsplit("/", 1)[1]: v for k, v in t.items()
                  if k.split("/")[0] in ("std_msgs", "geometry_msgs", "nav_msgs", "sensor_msgs", "tf2_msgs",
                                         "builtin_interfaces")}

    def header(self, ns: int, frame: str):  # noqa: ANN201
        return self.T["Header"](stamp=self.T["Time"](sec=ns // 10**9, nanosec=ns % 10**9), frame_id=frame)

    def vec(self, v) -> object:  # noqa: ANN001
        return self.T["Vector3"](x=float(v[0]), y=float(v[1]), z=float(v[2]))

    def quat(self, q) -> object:  # noqa: ANN001
        return self.T["Quaternion"](x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3]))

    def odometry(self, ns: int, frame: str, child: str, pos, quat, twist, var: float):  # noqa: ANN001, ANN201
        T, cov = self.T, np.eye(6).ravel() * var
        point = T["Point"](x=float(pos[0]), y=float(pos[1]), z=float(pos[2]))
        pose = T["Pose"](position=point, orientation=self.quat(quat))
        tw = T["Twist"](linear=self.vec(twist[3:6]), angular=self.vec(twist[:3]))
        return T["Odometry"](header=self.header(ns, frame), child_frame_id=child,
                             pose=T["PoseWithCovariance"](pose=pose, covariance=cov),
                             twist=T["TwistWithCovariance"](twist=tw, covariance=cov.copy()))


def write_run(path: str | Path, model, result, sensors, commands: NDArray | None = None,  # noqa: ANN001, PLR0913
              start_ns: int = DEFAULT_START_NS, odom_rate_hz: float = 50.0, spec=None) -> Path:  # noqa: ANN001
    """Record ``result`` (a SimResult) and ``sensors`` (a SensorLog) as a rosbag2; returns the bag folder.

    ``commands``: (n, 2) the (v, ω) command of each step (m/s, rad/s), recorded on ``/cmd_vel`` at every step
    where it changes and at 10 Hz.  ``spec``: the sensors' SensorSpec (for the covariances).  Raises BagError
    when the folder exists or cannot be created.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    folder, storage = bag_folder(path)
    if folder.exists():
        raise BagError(f"{folder}: already exists (a rosbag2 folder is written new; remove it or pick another name)")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BagError(f"{folder}: cannot create the bag's folder: {e}") from None
    ts = _typestore()
    M = _Msgs(ts)
    T = M.T
    base, odom = model.frame_names[0], "odom"
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    out: list[tuple[int, str, object]] = []
    ns = [start_ns + int(round(x * 1e9)) for x in result.t]
    for k in np.unique(np.searchsorted(result.t, np.arange(0, result.t[-1] + 1e-9, 1 / odom_rate_hz) - 1e-9)):
        if k >= len(result.t):
            continue
        q, qv = result.q[k], result.qvel[k]
        out.append((ns[k], "/odom", M.odometry(ns[k], odom, base, q[4:7], q[:4], qv[:6], 1e-9)))
        tf = T["TransformStamped"](header=M.header(ns[k], odom), child_frame_id=base,
                                   transform=T["Transform"](translation=M.vec(q[4:7]), rotation=M.quat(q[:4])))
        out.append((ns[k], "/tf", T["TFMessage"](transforms=[tf])))
    names = list(model.joint_names)
    for t, p, v in zip(sensors.joint_t, sensors.joint_position, sensors.joint_velocity, strict=True):
        n = start_ns + int(round(t * 1e9))
        out.append((n, "/joint_states", T["JointState"](header=M.header(n, ""), name=names, position=p.copy(),
                                                        velocity=v.copy(), effort=np.zeros(0))))
    sp = spec or SensorSpec(imu_attitude_std=0.0, imu_gyro_std=0.0, imu_accel_std=0.0, gps_position_std=0.0)
    att, gyro, acc = (np.eye(3).ravel() * s * s for s in (sp.imu_attitude_std, sp.imu_gyro_std, sp.imu_accel_std))
    for t, qa, w, f in zip(sensors.imu_t, sensors.imu_quat, sensors.imu_gyro, sensors.imu_accel, strict=True):
        n = start_ns + int(round(t * 1e9))
        out.append((n, "/imu", T["Imu"](header=M.header(n, base), orientation=M.quat(qa), orientation_covariance=att,
                                        angular_velocity=M.vec(w), angular_velocity_covariance=gyro,
                                        linear_acceleration=M.vec(f), linear_acceleration_covariance=acc)))
    gvar = sp.gps_position_std ** 2
    for t, pos, qa, lla in zip(sensors.gps_t, sensors.gps_position, sensors.gps_quat, sensors.fix_lla, strict=True):
        n = start_ns + int(round(t * 1e9))
        out.append((n, "/gps/odom", M.odometry(n, odom, base, pos, qa, np.zeros(6), gvar)))
        out.append((n, "/fix", T["NavSatFix"](header=M.header(n, "gps"), status=T["NavSatStatus"](status=0, service=1),
                                             latitude=float(lla[0]), longitude=float(lla[1]), altitude=float(lla[2]),
                                             position_covariance=np.eye(3).ravel() * gvar,
                                             position_covariance_type=2)))
    if commands is not None:
        last = None
        for k in range(len(commands)):
            c = (float(commands[k, 0]), float(commands[k, 1]))
            if c != last or k % max(1, int(round(0.1 / result.dt))) == 0:
                out.append((ns[k], "/cmd_vel", T["Twist"](linear=M.vec((c[0], 0, 0)), angular=M.vec((0, 0, c[1])))))
                last = c
    out.sort(key=lambda m: m[0])
    with Writer(folder, version=9, storage_plugin=plugin) as w:
        conns = {}
        for n, topic, msg in out:
            if topic not in conns:
                conns[topic] = w.add_connection(topic, msg.__msgtype__, typestore=ts)
            w.write(conns[topic], n, ts.serialize_cdr(msg, msg.__msgtype__))
    return folder


def _reader_path(path: str | Path) -> Path:
    p = Path(path)
    if p.is_file() and p.suffix in (".mcap", ".db3") and (p.parent / "metadata.yaml").is_file():
        return p.parent
    if p.is_dir() and (p / "metadata.yaml").is_file():
        return p
    folder, _ = bag_folder(p)
    if folder.is_dir() and (folder / "metadata.yaml").is_file():
        return folder
    raise BagError(f"{p}: not a rosbag2 folder (a folder with metadata.yaml and an .mcap or .db3 file)")


def topics(path: str | Path) -> dict[str, str]:
    """{topic: message type} of a bag."""
    from rosbags.highlevel import AnyReader

    with AnyReader([_reader_path(path)], default_typestore=_typestore()) as r:
        return {c.topic: c.msgtype for c in r.connections}


def read(path: str | Path, wanted: list[str] | None = None,
         raw: bool = False) -> Iterator[tuple[str, str, int, object]]:
    """(topic, message type, log time ns, message) of every message on ``wanted`` topics (default all), in log
    time order; ``raw=True`` gives the CDR bytes instead of a decoded message.  A corrupt or truncated tail
    ends the iteration with BagError after the messages read before it."""
    from rosbags.highlevel import AnyReader

    folder = _reader_path(path)
    try:
        with AnyReader([folder], default_typestore=_typestore()) as r:
            conns = [c for c in r.connections if wanted is None or c.topic in wanted]
            for conn, t_ns, data in r.messages(connections=conns):
                yield conn.topic, conn.msgtype, t_ns, (bytes(data) if raw else r.deserialize(data, conn.msgtype))
    except BagError:
        raise
    except Exception as e:  # noqa: BLE001 - rosbags raises many kinds for damaged files
        raise BagError(f"{folder}: cannot read the bag: {type(e).__name__}: {e}") from None
