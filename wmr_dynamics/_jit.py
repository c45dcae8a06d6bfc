"""The project's JIT decorator: numba ``njit`` with the on-disk cache, one implementation for both modes.

``NUMBA_DISABLE_JIT=1`` makes numba's own decorator return the plain Python function, so the same code
runs interpreted for debugging and coverage (DESIGN.md, "Speed").

**Cache.**  numba keys a cached kernel on its own source file only, not on the files of the kernels it
calls: after an edit (or an upgrade) of ``compiled/dynamics.py``, a cached ``compiled/rollout.py`` kernel
would still hold the old step — with the old workspace layout, a crash.  So the package's kernels are
cached in a folder named after a hash of *all* the package's source files: any change starts a fresh
cache.  The folder is ``$NUMBA_CACHE_DIR/wmr_dynamics-<hash>`` (or ``~/.cache/wmr_dynamics/numba/...``
when NUMBA_CACHE_DIR is unset; ``$XDG_CACHE_HOME`` is honoured), so it works in read-only installs.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba

_ROOT = Path(__file__).resolve().parent


def _fingerprint() -> str:
    h = hashlib.sha1()
    for p in sorted(_ROOT.rglob("*.py")):
        h.update(p.relative_to(_ROOT).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """Where the package's compiled kernels are cached (see the module docstring)."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "wmr_dynamics", "numba")
    return Path(base) / f"wmr_dynamics-{_FINGERPRINT}"


_FINGERPRINT = _fingerprint()


def _install_locator() -> None:
    """Put the package's kernels in :func:`cache_dir` (numba's locator API is internal: pinned numba)."""
    from numba.core import caching

    class _PackageLocator(caching.UserProvidedCacheLocator):
        def __init__(self, py_func: Callable, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(cache_dir() / Path(py_file).resolve().relative_to(_ROOT).parent)

        @classmethod
        def from_function(cls, py_func: Callable, py_file: str):  # noqa: ANN206
            try:
                Path(py_file).resolve().relative_to(_ROOT)
            except ValueError:
                return None  # not one of ours: numba's own locators
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    classes = caching.CacheImpl._locator_classes
    if not any(c.__name__ == "_PackageLocator" for c in classes):
        classes.insert(0, _PackageLocator)


_install_locator()


def njit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``numba.njit(cache=True, ...)``; use bare (``@njit``) or with options (``@njit(parallel=True)``)."""
    options.setdefault("cache", True)
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)
