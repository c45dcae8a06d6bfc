"""The project's JIT decorator: numba ``njit`` with the on-disk cache, one implementation for both modes.

``NUMBA_DISABLE_JIT=1`` makes numba's own decorator return the plain Python function, so the same code
runs interpreted for debugging and coverage (DESIGN.md, "Speed").

**Cache.**  numba keys a cached kernel on its own source file only, not on the files of the kernels it
calls: after an edit (or an upgrade) of ``compiled/dynamics.py``, a cached ``compiled/rollout.py`` kernel
would still hold the old step — with the old workspace layout, a crash.  So the package's kernels are
cached in a folder named after a hash of the *kernel sources*: every module that defines a kernel, plus
the package modules those import names from (constants such as ``G`` are frozen into compiled code).  Any
change to them starts a fresh cache; an edit of a module no kernel depends on (the CLI, sweeps, plots,
the Simulator front) keeps the cache warm.

The folder is ``$NUMBA_CACHE_DIR/wmr_dynamics-<hash>``; when NUMBA_CACHE_DIR is unset, inside the virtual
environment the package runs from (``<venv>/var/cache/wmr_dynamics/numba/...``, so the cache that ``make
install`` warms is the one ``.venv/bin/wmr-sim`` finds), else ``~/.cache/wmr_dynamics/numba/...``
(``$XDG_CACHE_HOME`` is honoured), so it works in read-only installs.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba

_ROOT = Path(__file__).resolve().parent


def _kernel_sources() -> list[Path]:
    """The modules that define kernels and the (non-``__init__``) package modules they import from."""
    modules = {".".join(p.relative_to(_ROOT.parent).with_suffix("").parts): p for p in _ROOT.rglob("*.py")}
    kernel_files = {p for p in modules.values() if re.search(r"@njit|njit\(", p.read_text(encoding="utf-8"))}
    sources = set(kernel_files)
    for p in kernel_files:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(_ROOT.name):
                for alias in node.names:
                    dep = modules.get(f"{node.module}.{alias.name}") or modules.get(node.module)
                    if dep is not None and dep.name != "__init__.py":
                        sources.add(dep)
    return sorted(sources)


def _fingerprint() -> str:
    h = hashlib.sha1()
    for p in _kernel_sources():
        h.update(p.relative_to(_ROOT).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """Where the package's compiled kernels are cached (see the module docstring)."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    if not base and sys.prefix != sys.base_prefix and os.access(sys.prefix, os.W_OK):
        base = os.path.join(sys.prefix, "var", "cache", "wmr_dynamics", "numba")  # the venv's own cache
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "wmr_dynamics", "numba")
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
