"""Helpers for the ROS tests: nodes in subprocesses over real DDS (loopback only, conftest.py), a test-side
rclpy node that records topics, and waiting with a deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import rclpy
from grid_map_msgs.msg import GridMap
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import Float32MultiArray, MultiArrayDimension

ROOT = Path(__file__).resolve().parent.parent


def ros_env() -> dict:
    env = dict(os.environ)
    assert env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"  # set by conftest.py; mandatory here
    env["PYTHONFAULTHANDLER"] = "1"  # a node that crashes prints its threads' stacks into its log
    return env


def namespace() -> str:
    """A namespace of its own for each node under test (parallel test workers share the DDS domain)."""
    return "/t" + uuid.uuid4().hex[:10]


class NodeProcess:
    """A node started as ``python -m MODULE --ros-args -r __ns:=NS -p k:=v ...``; output in ``log``."""

    def __init__(self, module: str, ns: str, params: dict, log: Path, args: tuple[str, ...] = ()) -> None:
        cmd = [sys.executable, "-m", module, *args, "--ros-args", "-r", f"__ns:={ns}"]
        for k, v in params.items():
            cmd += ["-p", f"{k}:={v}"]
        self.ns, self.log = ns, log
        self._out = open(log, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT, env=ros_env(), cwd=ROOT)

    def output(self) -> str:
        if not self._out.closed:  # also after stop(): the log file stays readable
            self._out.flush()
        return self.log.read_text()

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Stop the node with ``sig`` (Ctrl-C by default); its exit status (-9: it ignored ``sig`` for 15 s)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._out.close()
        return self.proc.returncode


class Probe:
    """A test-side node: publishers on demand, and every message received on the subscribed topics."""

    def __init__(self, context: rclpy.Context) -> None:
        self.node = Node("probe_" + uuid.uuid4().hex[:8], context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.received: dict[str, list] = {}
        self._pubs: dict[str, object] = {}

    def subscribe(self, topic: str, msg_type, latched: bool = False, depth: int = 100) -> list:  # noqa: ANN001
        box = self.received.setdefault(topic, [])
        qos = QoSProfile(depth=depth, durability=DurabilityPolicy.TRANSIENT_LOCAL) if latched else depth
        self.node.create_subscription(msg_type, topic, box.append, qos)
        return box

    def publish(self, topic: str, msg) -> None:  # noqa: ANN001
        if topic not in self._pubs:  # a new publisher: wait until the node's subscription has matched it
            pub = self._pubs[topic] = self.node.create_publisher(type(msg), topic, 10)
            self.wait_for(lambda: pub.get_subscription_count() > 0, 10.0, what=f"a subscriber on {topic}")
        self._pubs[topic].publish(msg)

    def spin(self, seconds: float, every: Callable[[], None] | None = None, period: float = 0.05) -> None:
        """Process messages for ``seconds`` of wall time, calling ``every()`` each ``period`` s."""
        end = time.monotonic() + seconds
        nxt = time.monotonic()
        while time.monotonic() < end:
            if every is not None and time.monotonic() >= nxt:
                every()
                nxt += period
            self.executor.spin_once(timeout_sec=0.01)

    def wait_for(self, condition: Callable[[], bool], timeout: float, every: Callable[[], None] | None = None,
                 what: str = "condition") -> None:
        end = time.monotonic() + timeout
        nxt = time.monotonic()
        while not condition():
            if time.monotonic() > end:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            if every is not None and time.monotonic() >= nxt:
                every()
                nxt += 0.05
            self.executor.spin_once(timeout_sec=0.01)

    def wait_publisher(self, topic: str, timeout: float = 60.0) -> None:
        """Until a node publishes ``topic`` and this probe's subscription has matched it (nothing is missed)."""
        self.wait_for(lambda: self.node.count_publishers(topic) > 0, timeout, what=f"a publisher of {topic}")
        self.spin(0.2)

    def call(self, srv_type, name: str, request, timeout: float = 10.0):  # noqa: ANN001, ANN201
        client = self.node.create_client(srv_type, name)
        assert client.wait_for_service(timeout_sec=timeout), f"service {name} not available"
        future = client.call_async(request)
        self.wait_for(future.done, timeout, what=f"the reply of {name}")
        return future.result()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def grid_map(heights_xy: np.ndarray, x_min: float, y_min: float, res: float, layer: str = "elevation",
             row_major: bool = False, start: tuple[int, int] = (0, 0)) -> GridMap:
    """A GridMap of ``heights_xy[i, j]`` = the height at (x_min + i res, y_min + j res), laid out as grid_map
    does (cell (0, 0) at max x and max y; column-major unless ``row_major``; a circular buffer rotated by
    ``start`` = (outer, inner) start indices) — written from the ROS_NOTES.md description, independently of
    the node's reader."""
    nx, ny = heights_xy.shape
    m = GridMap()
    m.header.frame_id = "odom"
    m.info.resolution, m.info.length_x, m.info.length_y = res, nx * res, ny * res
    m.info.pose.position.x = x_min - res / 2 + nx * res / 2
    m.info.pose.position.y = y_min - res / 2 + ny * res / 2
    m.info.pose.orientation.w = 1.0
    m.layers = [layer]
    M = heights_xy[::-1, ::-1]  # row r ↔ x index nx-1-r, column c ↔ y index ny-1-c
    stored = np.empty_like(M)  # cell (r, c) of the map lives at ((r + outer) mod rows, (c + inner) mod cols)
    rr, cc = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    stored[(rr + start[0]) % nx, (cc + start[1]) % ny] = M
    m.outer_start_index, m.inner_start_index = start
    arr = Float32MultiArray()
    if row_major:
        arr.layout.dim = [MultiArrayDimension(label="row_index", size=nx, stride=nx * ny),
                          MultiArrayDimension(label="column_index", size=ny, stride=ny)]
        arr.data = stored.ravel().astype(np.float32).tolist()
    else:
        arr.layout.dim = [MultiArrayDimension(label="column_index", size=ny, stride=nx * ny),
                          MultiArrayDimension(label="row_index", size=nx, stride=nx)]
        arr.data = stored.T.ravel().astype(np.float32).tolist()  # column-major: column by column
    m.data = [arr]
    return m
