"""Running a sweep: :func:`run_sweep` dispatches the jobs to a backend (``local`` or ``ray``), stores the rows
as they come (:mod:`wmr_dynamics.sweep.store`) and reports progress on stderr.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from wmr_dynamics.sweep.local import _run_local
from wmr_dynamics.sweep.ray_backend import _run_ray
from wmr_dynamics.sweep.scenario import SweepError
from wmr_dynamics.sweep.spec import Sweep
from wmr_dynamics.sweep.store import _Results


class _Progress:
    """``done/total, elapsed, ETA`` lines on stderr."""

    def __init__(self, total: int, skipped: int, enabled: bool) -> None:
        self.total, self.done, self.enabled, self.start = total, skipped, enabled, time.perf_counter()
        self.skipped = skipped

    def update(self, row: dict) -> None:
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        ran = self.done - self.skipped
        eta = elapsed / ran * (self.total - self.done)
        status = "FAILED" if row.get("error") else f"{row['wall_time_s']:.2f} s"
        print(f"wmr-sweep: {self.done}/{self.total} done (job {row['job']}: {status}), elapsed {elapsed:.1f} s, "
              f"ETA {eta:.1f} s", file=sys.stderr, flush=True)


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did: all rows (ordered by job), how many jobs ran now / were kept from before."""

    rows: list[dict]
    ran: int
    skipped: int
    wall_time_s: float


def run_sweep(sweep: Sweep, backend: str = "local", workers: int | None = None, address: str | None = None,
              out: str | Path | None = None, resume: bool = False, progress: bool = True,
              engine: str | None = None) -> SweepOutcome:
    """Run every job of ``sweep`` (skipping those already in ``out/results.jsonl`` with ``resume``).

    Args:
        backend: ``"local"`` (process pool; ``workers=1`` runs in this process) or ``"ray"``.
        workers: local processes, or the CPUs of a local Ray instance (default: the number of CPUs).
        address: Ray cluster address (``ray start --head`` prints it); None starts a local instance.
        out: folder for ``results.jsonl`` and ``results.csv`` (None: write nothing).
    """
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):  # a pool worker re-running a script
        raise RuntimeError("run_sweep was called while a worker process imported the main script: protect the "
                           "script's entry point with `if __name__ == \"__main__\":` (the local backend's "
                           "workers start with multiprocessing's forkserver method)")
    if backend not in ("local", "ray"):
        raise SweepError(f"unknown backend {backend!r}; one of local, ray")
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise SweepError(f"--workers must be >= 1, got {workers}")
    if resume and out is None:
        raise SweepError("--resume needs --out (the folder whose results.jsonl to continue)")
    t0 = time.perf_counter()
    results = _Results(Path(out) if out is not None else None, sweep.jobs, resume)
    todo = [j for j in sweep.jobs if j["job"] not in results.rows]
    bar = _Progress(len(sweep.jobs), len(sweep.jobs) - len(todo), progress)

    def done(row: dict) -> None:
        results.add(row)
        bar.update(row)

    try:
        if backend == "local":
            _run_local(todo, workers, engine, sweep.outputs, done)
        elif todo:
            _run_ray(todo, workers, address, engine, sweep.outputs, done)
    finally:
        results.close()
    return SweepOutcome(results.ordered(), len(todo), len(sweep.jobs) - len(todo), time.perf_counter() - t0)
