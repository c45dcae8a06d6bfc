"""``wmr-bag-play``: publish a rosbag2's messages over DDS with their timing, where ``ros2 bag`` is not installed.

    wmr-bag-play BAG [--rate R] [--topics T ...] [--namespace NS] [--no-clock] [--start-delay S]

Messages are read with ``rosbags`` (MCAP or SQLite3) and published as the bag's serialized bytes (no decoding)
on publishers of the bag's types; their log times are kept (scaled by ``--rate``), and ``/clock`` carries
the bag time (for nodes with ``use_sim_time``).  ``--namespace`` puts every topic under a namespace (``/odom``
→ ``/ns/odom``; ``/tf`` and ``/clock`` stay global), which lets tests and several replays share a DDS domain.
Before the first message the player waits until every topic it will publish has a subscriber, at most
``--wait-subscribers`` s (default 0: no wait), so a node started just before gets the bag from its start.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import rclpy
from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from wmr_dynamics.errors import WmrError
from wmr_dynamics.io.bag import read, topics
from wmr_dynamics.ros import convert
from wmr_dynamics.ros.common import init

GLOBAL_TOPICS = ("/tf", "/tf_static", "/clock")
CLOCK_PERIOD_NS = 10_000_000  # /clock at most every 10 ms of bag time


def message_class(msgtype: str):  # noqa: ANN201
    """The rclpy class of a ROS 2 type name such as ``nav_msgs/msg/Odometry``."""
    pkg, kind, name = msgtype.split("/")
    try:
        return getattr(importlib.import_module(f"{pkg}.{kind}"), name)
    except (ImportError, AttributeError):
        raise WmrError(f"message type {msgtype}: not importable here (is the package {pkg} installed?)") from None


def _remap(topic: str, namespace: str) -> str:
    if not namespace or topic in GLOBAL_TOPICS:
        return topic
    return "/" + namespace.strip("/") + "/" + topic.lstrip("/")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wmr-bag-play", description=__doc__.splitlines()[0])
    p.add_argument("bag", help="rosbag2 folder (or its .mcap / .db3 file)")
    p.add_argument("--rate", type=float, default=1.0, help="playback speed factor (default 1)")
    p.add_argument("--topics", nargs="+", default=None, help="only these topics (default all)")
    p.add_argument("--namespace", default="", help="prefix for every topic except /tf and /clock")
    p.add_argument("--no-clock", action="store_true", help="do not publish /clock")
    p.add_argument("--wait-subscribers", type=float, default=0.0, metavar="S",
                   help="wait up to S s for a subscriber on every topic before starting (default 0)")
    return p


def play(args: argparse.Namespace, node: Node) -> int:
    available = topics(args.bag)
    wanted = args.topics or sorted(available)
    missing = [t for t in wanted if t not in available]
    if missing:
        raise WmrError(f"{args.bag}: no topics {missing} (topics: {', '.join(sorted(available))})")
    if not (args.rate > 0):
        raise WmrError(f"--rate: expected a positive factor, got {args.rate}")
    pubs = {t: node.create_publisher(message_class(available[t]), _remap(t, args.namespace), 100) for t in wanted}
    clock = None if args.no_clock else node.create_publisher(Clock, "/clock", 10)
    end = time.monotonic() + args.wait_subscribers
    while time.monotonic() < end and any(p.get_subscription_count() == 0 for p in pubs.values()):
        time.sleep(0.05)
    wall0 = bag0 = None
    count, last_clock = 0, -CLOCK_PERIOD_NS
    for topic, _, t_ns, raw in read(args.bag, wanted, raw=True):
        if wall0 is None:
            wall0, bag0 = time.monotonic(), t_ns
        delay = wall0 + (t_ns - bag0) * 1e-9 / args.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if clock is not None and t_ns - last_clock >= CLOCK_PERIOD_NS:
            clock.publish(Clock(clock=convert.stamp(t_ns * 1e-9)))
            last_clock = t_ns
        pubs[topic].publish(raw)
        count += 1
    node.get_logger().info(f"played {count} messages on {len(wanted)} topics")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ros_args = argv[argv.index("--ros-args"):] if "--ros-args" in argv else []
    args = parser().parse_args(argv[:len(argv) - len(ros_args)])
    init(["wmr-bag-play", *ros_args])  # Ctrl-C and SIGTERM: KeyboardInterrupt on this thread
    node = Node("wmr_bag_play")
    try:
        return play(args, node)
    except WmrError as e:
        print(f"wmr-bag-play: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
