"""The Ray backend: jobs as Ray tasks on an existing cluster, or on a local instance bound to loopback.

Ray is imported only here, and only when this backend is used (the package works without it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from wmr_dynamics.sweep.job import run_job
from wmr_dynamics.sweep.scenario import SweepError


def import_ray(local: bool) -> Any:
    """Import Ray (lazily: the package works without it) with usage stats off; for a local instance also make
    Ray pick the loopback address as this node's IP, so that every Ray server binds to 127.0.0.1 only."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # node IP = 127.0.0.1 (ray_constants)
    try:
        import ray
        from ray._private import ray_constants
    except ImportError:
        raise SweepError("the ray backend needs Ray: pip install 'ray' (or use --backend local)") from None
    if local:  # Ray was imported before the variable was set: the constant it was read into (private)
        ray_constants.ENABLE_RAY_CLUSTER = False
    return ray


def start_local_ray(num_cpus: int) -> Any:
    """Start a local Ray instance bound to loopback, without dashboard; returns the ``ray`` module."""
    ray = import_ray(local=True)
    # address="local": always a new instance (never one found through RAY_ADDRESS or a `ray start` on this machine)
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             configure_logging=False)
    ip = ray.util.get_node_ip_address()
    if ip != "127.0.0.1":
        ray.shutdown()
        raise SweepError(f"the local Ray instance did not bind to loopback (node address {ip}); stopped it")
    return ray


def _run_ray(jobs: Sequence[dict], workers: int, address: str | None, engine: str | None,
             outputs: Sequence[str], done: Callable[[dict], None]) -> None:
    ray = import_ray(local=address is None)
    started = False
    if not ray.is_initialized():
        if address is None:
            start_local_ray(workers)
        else:
            ray.init(address=address, configure_logging=False)
        started = True
    pending: list = []
    try:
        task = ray.remote(num_cpus=1)(run_job)
        pending = [task.remote(job, engine, outputs) for job in jobs]
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            for ref in finished:
                done(ray.get(ref))
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()
