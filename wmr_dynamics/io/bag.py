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

    def odometry(self, ns: int, frame: str, child: str, pos, quat, twist, var: float,  # noqa: ANN001, ANN201
                 rot_var: float | None = None):
        """``var``: variance of the position (m²), ``rot_var`` of the attitude (rad², default ``var``)."""
        T = self.T
        cov = np.diag([var] * 3 + [var if rot_var is None else rot_var] * 3).ravel()
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
    sp = spec or SensorSpec(imu_attitude_std=0.0, imu_gyro_std=0.0, imu_accel_std=0.0, gps_position_std=0.0,
                            gps_attitude_std=0.0)
    att, gyro, acc = (np.eye(3).ravel() * s * s for s in (sp.imu_attitude_std, sp.imu_gyro_std, sp.imu_accel_std))
    for t, qa, w, f in zip(sensors.imu_t, sensors.imu_quat, sensors.imu_gyro, sensors.imu_accel, strict=True):
        n = start_ns + int(round(t * 1e9))
        out.append((n, "/imu", T["Imu"](header=M.header(n, base), orientation=M.quat(qa), orientation_covariance=att,
                                        angular_velocity=M.vec(w), angular_velocity_covariance=gyro,
                                        linear_acceleration=M.vec(f), linear_acceleration_covariance=acc)))
    gvar = sp.gps_position_std ** 2
    for t, pos, qa, lla in zip(sensors.gps_t, sensors.gps_position, sensors.gps_quat, sensors.fix_lla, strict=True):
        n = start_ns + int(round(t * 1e9))
        out.append((n, "/gps/odom", M.odometry(n, odom, base, pos, qa, np.zeros(6), gvar, sp.gps_attitude_std ** 2)))
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
    """{topic: message type} of a bag (of a damaged MCAP file: of the channels before the damage)."""
    from rosbags.highlevel import AnyReader

    folder = _reader_path(path)
    try:
        with AnyReader([folder], default_typestore=_typestore()) as r:
            return {c.topic: c.msgtype for c in r.connections}
    except Exception as e:  # noqa: BLE001 - rosbags raises many kinds for damaged files
        mcap = _damaged_mcap(folder, e)
        return {topic: msgtype for topic, msgtype in _McapStream(mcap).channels().values()}


def read(path: str | Path, wanted: list[str] | None = None,
         raw: bool = False) -> Iterator[tuple[str, str, int, object]]:
    """(topic, message type, log time ns, message) of every message on ``wanted`` topics (default all), in log
    time order; ``raw=True`` gives the CDR bytes instead of a decoded message.  A corrupt or truncated tail
    ends the iteration with BagError after the messages read before it (an MCAP file that lost its end — a
    recorder killed — is read record by record up to the damage, in file order)."""
    from rosbags.highlevel import AnyReader

    folder = _reader_path(path)
    try:
        reader = AnyReader([folder], default_typestore=_typestore())
        reader.open()
    except Exception as e:  # noqa: BLE001
        mcap = _damaged_mcap(folder, e)
        yield from _McapStream(mcap).messages(wanted, raw, f"{folder}: damaged bag ({type(e).__name__}: {e})")
        return
    try:
        conns = [c for c in reader.connections if wanted is None or c.topic in wanted]
        for conn, t_ns, data in reader.messages(connections=conns):
            yield conn.topic, conn.msgtype, t_ns, (bytes(data) if raw else reader.deserialize(data, conn.msgtype))
    except BagError:
        raise
    except Exception as e:  # noqa: BLE001 - rosbags raises many kinds for damaged files
        raise BagError(f"{folder}: cannot read the bag: {type(e).__name__}: {e}") from None
    finally:
        reader.close()


def _damaged_mcap(folder: Path, error: Exception) -> Path:
    """The MCAP file of a bag rosbags cannot open, for the record-by-record reader; BagError otherwise."""
    files = sorted(folder.glob("*.mcap"))
    if not files:
        raise BagError(f"{folder}: cannot read the bag: {type(error).__name__}: {error}") from None
    return files[0]


class _McapStream:
    """MCAP records read in file order from the start (MCAP spec: magic, then opcode u8, length u64, content),
    uncompressed chunks opened; stops at the first torn record.  For files without their summary and footer."""

    MAGIC = b"\x89MCAP0\r\n"

    def __init__(self, path: Path) -> None:
        import struct

        self.path, self._u = path, struct.unpack_from
        self.data = path.read_bytes()
        if self.data[:8] != self.MAGIC:
            raise BagError(f"{path}: not an MCAP file (no MCAP magic at its start)")
        self.schemas: dict[int, str] = {}
        self.chans: dict[int, tuple[str, str]] = {}
        self.torn = False

    def _str(self, buf: bytes, pos: int) -> tuple[str, int]:
        n = self._u("<I", buf, pos)[0]
        return bytes(buf[pos + 4:pos + 4 + n]).decode("utf-8", "replace"), pos + 4 + n

    def _records(self, buf: bytes, pos: int, end: int) -> Iterator[tuple[int, bytes]]:
        while pos + 9 <= end:
            op, n = buf[pos], self._u("<Q", buf, pos + 1)[0]
            if pos + 9 + n > end:
                self.torn = True
                return
            body = buf[pos + 9:pos + 9 + n]
            pos += 9 + n
            if op == 0x06:  # chunk: start u64, end u64, size u64, crc u32, compression, records (u64 + bytes)
                comp, q = self._str(body, 28)
                if comp:
                    self.torn = True  # a compressed chunk: not read by this fallback
                    return
                yield from self._records(body, q + 8, q + 8 + self._u("<Q", body, q)[0])
            else:
                yield op, body
        if pos < end:
            self.torn = True

    def _scan(self) -> Iterator[tuple[int, bytes]]:
        for op, body in self._records(memoryview(self.data), 8, len(self.data)):
            if op == 0x03:  # schema: id u16, name, encoding, data
                self.schemas[self._u("<H", body, 0)[0]] = self._str(body, 2)[0]
            elif op == 0x04:  # channel: id u16, schema id u16, topic, encoding, metadata
                cid, sid = self._u("<HH", body, 0)
                self.chans[cid] = (self._str(body, 4)[0], self.schemas.get(sid, ""))
            elif op == 0x05:
                yield op, body
            elif op == 0x02:  # footer: the end
                return

    def channels(self) -> dict[int, tuple[str, str]]:
        for _ in self._scan():
            pass
        return self.chans

    def messages(self, wanted: list[str] | None, raw: bool, damage: str) -> Iterator[tuple[str, str, int, object]]:
        ts = _typestore()
        n = 0
        for _, body in self._scan():  # message: channel u16, sequence u32, log time u64, publish time u64, data
            cid, _seq, log_ns = self._u("<HIQ", body, 0)
            topic, msgtype = self.chans.get(cid, ("", ""))
            if wanted is not None and topic not in wanted:
                continue
            data = bytes(body[22:])
            try:
                msg = data if raw else ts.deserialize_cdr(data, msgtype)
            except Exception as e:  # noqa: BLE001
                raise BagError(f"{damage}; message {n + 1} on {topic} cannot be decoded: {e}") from None
            n += 1
            yield topic, msgtype, log_ns, msg
        raise BagError(f"{damage}; read {n} messages before the damage")
