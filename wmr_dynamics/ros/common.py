"""What the nodes share: loading the vehicle from parameters, throttled warnings, and the process's main."""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

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


#: the longest a node's executor waits for work before it looks for a stop request (s): Ctrl-C's latency
STOP_POLL_S = 0.1


class StopRequest:
    """SIGINT and SIGTERM, handled on the main thread (rclpy's own handlers are not installed, :func:`init`).

    rclpy's handlers shut the context down from a thread of their own, which can race a publish on the main
    thread; a node stopped that way now and then died with SIGSEGV (a CI run at stop 32).  Here a signal during
    the spin loop only sets ``requested``, which the loop reads between callbacks; the loop then destroys the
    node and shuts rclpy down itself, in that order, on one thread.  Before the loop runs (building a node may
    compile for minutes) and on a second signal, the signal raises KeyboardInterrupt at once."""

    def __init__(self) -> None:
        self.requested, self.spinning = False, False

    def __call__(self, signum: int, frame: object) -> None:
        if self.spinning and not self.requested:
            self.requested = True
            return
        raise KeyboardInterrupt(signal.Signals(signum).name)


def init(args: list[str] | None = None) -> StopRequest:
    """``rclpy.init`` without rclpy's signal handlers, and :class:`StopRequest` on SIGINT and SIGTERM."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = StopRequest()
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    return stop


def run_node(prog: str, make_node: Callable[[], Node], args: list[str] | None = None,
             wait_s: Callable[[Node], float] | None = None, tick: Callable[[Node], object] | None = None) -> int:
    """A node's process: init, build the node (a WmrError is one line on stderr and exit 2), spin it until
    SIGINT or SIGTERM, then destroy it and shut down (exit 0; :class:`StopRequest`).  Each spin waits for work at
    most ``wait_s(node)`` (and :data:`STOP_POLL_S`) seconds, then calls ``tick(node)`` where given."""
    stop = init(args)
    node = executor = None
    try:  # one try from init to shutdown: a signal at any point between is a clean exit
        node = make_node()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        stop.spinning = True
        while not stop.requested and rclpy.ok():
            executor.spin_once(timeout_sec=min(STOP_POLL_S, wait_s(node)) if wait_s else STOP_POLL_S)
            if tick is not None and not stop.requested:
                tick(node)
    except WmrError as e:
        if executor is not None:
            raise  # not a start-up error
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, ExternalShutdownException):
        pass  # a signal while the node was starting (or a second one): as clean an exit as a stop request
    finally:
        stop.spinning = False
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
