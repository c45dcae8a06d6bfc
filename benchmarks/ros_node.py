#!/usr/bin/env python3
"""Cost of the simulator node (``wmr-ros-sim``) over real DDS on this machine (loopback only).

- **start-up**: from starting the process to the first ``odom`` received, kinematic and dynamic mode (the
  engine loaded from the cache that ``make install`` warms);
- **real time**: CPU share of the node process (user + system time over wall time, /proc) driving Rocky 7
  at 0.5 m/s on flat ground in real time, Δt 0.01 s, odom / TF / joint states / markers at 50 Hz;
- **as fast as possible** (``real_time_factor:=0``): the node's real-time factor (simulated s per wall s,
  from the odom stamps) against the library stepping the same way in one process (``Stepper.advance`` two
  steps per call, the node's publish period) and in one call (``Simulator.run``) — the difference is the
  ROS overhead (building and publishing the messages of each period);
- **soak** (``--soak MINUTES``, not part of the default run): as fast as possible under a random ``cmd_vel``
  changing every second; resident memory sampled every 10 s (growth after the first minute), any NaN in
  odom, and the longest wall-time gap between two odom messages.

Writes the section ``ros_node`` of docs/benchmarks.md (``--soak`` adds ``ros_soak``).

Usage::

    python benchmarks/ros_node.py              # ~1.5 min
    python benchmarks/ros_node.py --soak 10    # + a 10-minute soak
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # mandatory on this project's machines
os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 101)))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rclpy  # noqa: E402
from _report import figures_table, machine_info, update_section  # noqa: E402
from geometry_msgs.msg import Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, s (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Bench:
    """A probe node in this process and the node under test in a subprocess."""

    def __init__(self, params: dict) -> None:
        self.ns = "/b" + uuid.uuid4().hex[:8]
        cmd = [sys.executable, "-m", "wmr_dynamics.ros.sim_node", "--ros-args", "-r", f"__ns:={self.ns}"]
        for k, v in params.items():
            cmd += ["-p", f"{k}:={v}"]
        self.t_start = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        self.node = rclpy.create_node("bench_" + uuid.uuid4().hex[:6])
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(self.node)
        self.odom: list[tuple[float, float, float]] = []  # (wall, stamp s, x)
        self.nan, self.max_gap = 0, 0.0
        self.node.create_subscription(Odometry, f"{self.ns}/odom", self._on_odom, 1000)
        self.cmd = self.node.create_publisher(Twist, f"{self.ns}/cmd_vel", 10)

    def _on_odom(self, m: Odometry) -> None:
        if self.odom:
            self.max_gap = max(self.max_gap, time.monotonic() - self.odom[-1][0])
        x = m.pose.pose.position.x
        if not math.isfinite(x):
            self.nan += 1
        self.odom.append((time.monotonic(), m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, x))

    def first_odom(self, timeout: float = 300.0) -> float:
        while not self.odom:
            if time.monotonic() - self.t_start > timeout or self.proc.poll() is not None:
                raise RuntimeError("the node did not start")
            self.ex.spin_once(timeout_sec=0.01)
        return self.odom[0][0] - self.t_start

    def drive(self, seconds: float, v: float = 0.5, w: float = 0.0, change_every: float | None = None) -> None:
        end = time.monotonic() + seconds
        nxt = nxt_change = time.monotonic()
        t = Twist()
        t.linear.x, t.angular.z = v, w
        while time.monotonic() < end:
            now = time.monotonic()
            if change_every is not None and now >= nxt_change:
                t.linear.x, t.angular.z = random.uniform(-1.0, 1.0), random.uniform(-0.5, 0.5)
                nxt_change += change_every
            if now >= nxt:
                self.cmd.publish(t)
                nxt += 0.1
            self.ex.spin_once(timeout_sec=0.005)

    def stop(self) -> None:
        self.proc.send_signal(2)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.ex.shutdown()
        self.node.destroy_node()


def startup(mode: str) -> float:
    b = Bench({"vehicle": "rocky7", "mode": mode})
    try:
        return b.first_odom()
    finally:
        b.stop()


def realtime_share(mode: str, seconds: float) -> tuple[float, float]:
    """(CPU share of one core, real-time factor achieved) over ``seconds`` of real-time driving."""
    b = Bench({"vehicle": "rocky7", "mode": mode, "dt": 0.01, "publish_rate": 50.0})
    try:
        b.first_odom()
        b.drive(1.0)
        c0, w0, n0 = cpu_seconds(b.proc.pid), time.monotonic(), len(b.odom)
        b.drive(seconds)
        c1, w1 = cpu_seconds(b.proc.pid), time.monotonic()
        sim = b.odom[-1][1] - b.odom[n0][1]
        return (c1 - c0) / (w1 - w0), sim / (w1 - w0)
    finally:
        b.stop()


def afap(mode: str, seconds: float) -> float:
    """The node's real-time factor as fast as possible (simulated s per wall s)."""
    b = Bench({"vehicle": "rocky7", "mode": mode, "dt": 0.01, "real_time_factor": 0.0, "publish_rate": 50.0})
    try:
        b.first_odom()
        b.drive(1.0)
        n0 = len(b.odom)
        b.drive(seconds)
        (w0, s0, _), (w1, s1, _) = b.odom[n0], b.odom[-1]
        return (s1 - s0) / (w1 - w0)
    finally:
        b.stop()


def library_rtf(mode: str, seconds: float) -> tuple[float, float]:
    """(Stepper two steps per call, Simulator.run in one call) real-time factors on the same run."""
    from wmr_dynamics.simulate import Simulator
    from wmr_dynamics.stepper import Stepper
    from wmr_dynamics.terrain import Plane
    from wmr_dynamics.urdf import load_model

    model = load_model("rocky7")
    stepper = Stepper(model, Plane(), mode=mode, dt=0.01)
    data = stepper.make_data()
    n = int(seconds / 0.01) // 2
    stepper.advance(data, 2, command=(0.5, 0.0))
    t0 = time.perf_counter()
    for _ in range(n):
        stepper.advance(data, 2, command=(0.5, 0.0))
    per_call = 2 * n * 0.01 / (time.perf_counter() - t0)
    sim = Simulator(model, Plane(), mode=mode, dt=0.01)
    r = sim.run(seconds, (0.5, 0.0), progress=False)
    return per_call, seconds / r.wall_time_s


def soak(minutes: float) -> dict:
    b = Bench({"vehicle": "rocky7", "mode": "kinematic", "dt": 0.01, "real_time_factor": 0.0})
    rss: list[tuple[float, float]] = []
    try:
        b.first_odom()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60 * minutes:
            b.drive(10.0, change_every=1.0)
            rss.append((time.monotonic() - t0, rss_mib(b.proc.pid)))
            b.odom = b.odom[-1:]  # keep the probe's own memory flat
        return {"rss": rss, "nan": b.nan, "alive": b.proc.poll() is None, "max_gap": b.max_gap}
    finally:
        b.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=15.0, help="wall time of each timed run (default 15)")
    ap.add_argument("--soak", type=float, default=0.0, metavar="MINUTES", help="also soak for MINUTES")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = ap.parse_args(argv)
    rclpy.init()
    rows = []
    for mode in ("kinematic", "dynamic"):
        up = startup(mode)
        share, rt = realtime_share(mode, args.seconds)
        node = afap(mode, args.seconds)
        lib_call, lib_run = library_rtf(mode, 20.0)
        rows.append((mode, up, share, rt, node, lib_call, lib_run))
        print(f"{mode}: start-up {up:.1f} s; real time: {100 * share:.1f} % of a core (RTF {rt:.2f}); as fast as "
              f"possible: node {node:.0f}x, library 2 steps/call {lib_call:.0f}x, one call {lib_run:.0f}x", flush=True)
    m = machine_info()
    lines = [
        figures_table([("machine; transport",
                        f"{m.get('cpu', '?')}, {m.get('nproc', '?')} cores; Fast DDS on loopback")],
                      ("setting", "value")), "",
        "| mode | start-up to first odom (s) | real time: CPU share of one core | node RTF, as fast as possible | "
        "library RTF, 2 steps per call | library RTF, one call | node / library (2 steps per call) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for mode, up, share, rt, node, lib_call, lib_run in rows:
        lines.append(f"| {mode} | {up:.1f} | {100 * share:.1f} % (RTF {rt:.2f}) | {node:.0f}× | {lib_call:.0f}× | "
                     f"{lib_run:.0f}× | {node / lib_call:.3f} |")
    update_section(args.out, "ros_node", "\n".join(lines))
    if args.soak > 0:
        s = soak(args.soak)
        base = next((r for t, r in s["rss"] if t >= 60), s["rss"][0][1])
        last = s["rss"][-1][1]
        text = figures_table([
            ("soak: as fast as possible under a random cmd_vel (min)", f"{args.soak:g}"),
            ("resident memory after the first minute / at the end (MiB)",
             f"{base:.0f} / {last:.0f} ({100 * (last / base - 1):+.1f} %)"),
            ("NaN odom messages", f"{s['nan']}"),
            ("longest gap between two odom messages (s)", f"{s['max_gap']:.2f}"),
            ("node alive at the end", f"{s['alive']}")])
        print(text)
        update_section(args.out, "ros_soak", text)
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
