"""Output files that are never lost: folders checked before a long run starts, names made safe, files written
atomically (a reader never sees half a file; an interrupted write leaves the old file, not a torn one)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from wmr_dynamics.errors import WmrError


class OutputError(WmrError, OSError):
    """An output path that cannot be written (the text names the path and why)."""


def prepare_dir(path: str | os.PathLike[str], what: str = "--out") -> Path:
    """Create ``path`` (and parents) if needed and check that files can be written in it; returns it.
    Raises OutputError naming ``what`` when it is a file, or cannot be created or written."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputError(f"{what} {p}: exists and is not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p, prefix=".wmr_write_test_"):
            pass
    except OSError as e:
        raise OutputError(f"{what} {p}: cannot create or write the folder: {e.strerror or e}") from None
    return p


def safe_name(name: str) -> str:
    """``name`` usable as one file-name component: path separators, '..' and other unsafe characters
    become '_' (a vehicle named '../../x' must not write outside the output folder)."""
    s = re.sub(r"[^A-Za-z0-9._+-]", "_", str(name)).strip(".")
    return s or "unnamed"


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and an atomic rename."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p
