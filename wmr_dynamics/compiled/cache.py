"""Is the compiled engine already in numba's on-disk cache?  Say so before a run that must compile.

numba compiles a kernel the first time it is called with given argument types and, with ``cache=True``,
stores the machine code under :func:`wmr_dynamics._jit.cache_dir` (keyed on the kernel sources, so an
upgrade starts afresh).  A cold compile of the dynamic engine takes a minute or more on a small machine;
loading it from the cache takes a second or two.  ``make install`` (``python -m wmr_dynamics.warmup``)
fills the cache, so a user's first run starts at once.  When the cache is cold anyway (a new NUMBA_CACHE_DIR,
an edited kernel), :func:`announce` prints one line before the compile, so nobody waits in silence.

Each engine part (``"kinematic"``, ``"dynamic"``, ``"dynamic-batch"``) leaves a marker file in the cache
folder once it has been compiled and stored; the marker says the cache is warm for that part.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numba

from wmr_dynamics._jit import cache_dir

T = TypeVar("T")

#: cold-compile wall time of each part on this project's 2-core machines (s), for the message
COMPILE_S = {"kinematic": 300, "dynamic": 600, "dynamic-batch": 70}  # docs/benchmarks.md, "Install"


def _marker(part: str):  # noqa: ANN202
    return cache_dir() / f"{part}.warm"


def is_warm(part: str) -> bool:
    """True when ``part``'s kernels are in the on-disk cache (its marker exists)."""
    return _marker(part).is_file()


def compiled(part: str, call: Callable[[], T], quiet: bool = False) -> T:
    """Run ``call`` (the first call of ``part``'s kernels); if the cache is cold, say so on stderr before and
    how long it took after, then mark the part warm.  Under ``NUMBA_DISABLE_JIT=1`` nothing compiles: no
    message, no marker."""
    if numba.config.DISABLE_JIT:
        return call()
    if is_warm(part):
        _touch(_marker(part))  # the last use, for prune()
        return call()
    if not quiet:
        print(f"wmr_dynamics: compiling the {part} engine (first run after install or upgrade; about "
              f"{COMPILE_S.get(part, 60)} s, cached for later runs) ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    out = call()
    if not quiet:
        print(f"wmr_dynamics: {part} engine compiled in {time.perf_counter() - start:.0f} s", file=sys.stderr,
              flush=True)
    _touch(_marker(part))
    return out


def _touch(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass  # a read-only cache: numba will not store the kernels either, nothing to mark


#: the warm-up removes the caches of other kernel versions unused for this long (days)
STALE_DAYS = 30.0


def prune(days: float = STALE_DAYS, now: float | None = None) -> tuple[int, int]:
    """Remove the caches of other kernel versions — the sibling ``wmr_dynamics-<hash>`` folders of
    :func:`cache_dir`, one left behind by every upgrade or kernel edit (≈ 55 MB each) — not used for ``days``
    days.  A folder's last use: the newest of its part markers (touched by :func:`compiled` at each process's
    first use of the part), else the folder's own modification time.  The current version's folder is never
    removed.  Returns (folders removed, bytes freed)."""
    current = cache_dir()
    cutoff = (time.time() if now is None else now) - days * 86400.0
    removed, freed = 0, 0
    for folder in current.parent.glob("wmr_dynamics-*"):
        if folder == current or not folder.is_dir():
            continue
        try:
            used = max([m.stat().st_mtime for m in folder.glob("*.warm")] or [folder.stat().st_mtime])
            if used >= cutoff:
                continue
            size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
            shutil.rmtree(folder)
        except OSError:
            continue  # another process's, read-only, or removed meanwhile: leave it
        removed, freed = removed + 1, freed + size
    return removed, freed
