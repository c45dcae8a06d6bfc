"""What the nodes share: loading the vehicle from parameters, throttled warnings, and the process's main."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import rclpy
from rclpy._rclpy_pybind11 import RCLError
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from wmr_dynamics.errors import WmrError


def load_vehicle_parameters(node: Node):  # noqa: ANN201
    """Declare the parameters vehicle ("rocky7"), robot_description, urdf_file and vehicle_config on ``node``
    and load the WmrModel they name (robot_description, else urdf_file, else vehicle); raises WmrError
    naming the parameter."""
    from wmr_dynamics.urdf import load_model

    p = {name: node.declare_parameter(name, default).value for name, default in
         (("vehicle", "rocky7"), ("robot_description", ""), ("urdf_file", ""), ("vehicle_config", ""))}
    config = p["vehicle_config"] or None
    if p["robot_description"] and config is None:
        raise WmrError("parameter vehicle_config: needed with robot_description (the vehicle YAML names the wheels, "
                       "actuators and contact model)")
    try:
        if p["robot_description"]:
            with tempfile.TemporaryDirectory(prefix="wmr_") as tmp:  # the parser reads files; meshes by absolute path
                path = Path(tmp) / "robot_description.urdf"
                path.write_text(p["robot_description"])
                return load_model(path, config)
        if p["urdf_file"]:
            return load_model(p["urdf_file"], config)
        return load_model(p["vehicle"], config)
    except WmrError as e:
        which = "robot_description" if p["robot_description"] else "urdf_file" if p["urdf_file"] else "vehicle"
        raise WmrError(f"parameter {which}: {e}") from None


class ThrottledWarnings:
    """Warnings at most every ``period`` s per kind: a stream of bad messages does not flood the log, and one
    kind does not hide another.  ``warn(text, key)``; the key defaults to the text's first word."""

    def __init__(self, node: Node, period: float = 2.0) -> None:
        self._logger, self._period = node.get_logger(), period
        self._last: dict[str, float] = {}

    def __call__(self, text: str, key: str | None = None) -> None:
        key = key or text.split(" ", 1)[0]
        now = time.monotonic()
        if now - self._last.get(key, -float("inf")) >= self._period:
            self._last[key] = now
            self._logger.warning(text)


def run_node(prog: str, make_node: Callable[[], Node], spin: Callable[[Node], None],
             args: list[str] | None = None) -> int:
    """A node's process: init, build the node (a WmrError is one line on stderr and exit 2), ``spin`` it until
    Ctrl-C or shutdown (a publisher whose context a signal invalidated is a clean exit, ROS_NOTES.md); Ctrl-C or
    SIGTERM before the node has started is a clean exit too."""
    rclpy.init(args=args)
    try:
        node = make_node()
    except WmrError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    except KeyboardInterrupt:  # Ctrl-C while the node was starting: as clean an exit as during spin
        rclpy.try_shutdown()
        return 0
    except (RCLError, ExternalShutdownException):
        if rclpy.ok():
            raise
        rclpy.try_shutdown()  # a signal (SIGTERM) shut the context down while the node published its first
        return 0  # messages: a clean exit, as during spin
    try:
        spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RCLError:
        if rclpy.ok():
            raise
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
