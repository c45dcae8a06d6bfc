"""The local backend: jobs in this process (one worker) or in a process pool."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wmr_dynamics.sweep.job import run_job


def _run_local(jobs: Sequence[dict], workers: int, engine: str | None, outputs: Sequence[str],
               done: Callable[[dict], None]) -> None:
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            done(run_job(job, engine, outputs))
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # forkserver: workers fork from a clean server process that has imported this package, not from this
    # (possibly multi-threaded: numba, Ray) process.  run_job is pickled by reference to its module (never
    # __main__: `python -m wmr_dynamics.sweep` runs the package's __main__.py).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([run_job.__module__])
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx) as pool:
        pending = {pool.submit(run_job, job, engine, outputs) for job in jobs}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    done(f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            raise
