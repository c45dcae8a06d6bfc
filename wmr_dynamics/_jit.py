"""The project's JIT decorator: numba ``njit`` with the on-disk cache, one implementation for both modes.

``NUMBA_DISABLE_JIT=1`` makes numba's own decorator return the plain Python function, so the same code
runs interpreted for debugging and coverage (DESIGN.md, "Speed").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba


def njit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``numba.njit(cache=True, ...)``; use bare (``@njit``) or with options (``@njit(parallel=True)``)."""
    options.setdefault("cache", True)
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)
