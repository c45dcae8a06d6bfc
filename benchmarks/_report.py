"""Helpers shared by the benchmark scripts that write parts of one markdown file (e.g. docs/benchmarks.md)."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import subprocess
from pathlib import Path

import numpy as np


def update_section(path: str | os.PathLike[str], name: str, markdown: str, position: str = "end") -> Path:
    """Put ``markdown`` between the markers ``<!-- BEGIN {name} -->`` and ``<!-- END {name} -->`` of ``path``.

    Only the text between that pair of markers is replaced; the rest of the file is kept as it is.  Without
    the markers the marked section is added: at the end (``position="end"``, the default), or with
    ``position="top"`` before the first marked section of the file (after any unmarked text above it, such
    as the file's title; at the end if the file has no marked section).  An existing section stays where it
    is whatever ``position`` says.  A missing file (and folder) is created.  A BEGIN marker without its END
    marker raises ValueError (the file was edited by hand; nothing is written).  Returns the path.
    """
    if not name or "--" in name or "\n" in name:
        raise ValueError(f"section name must be non-empty, one line and free of '--': {name!r}")
    if position not in ("end", "top"):
        raise ValueError(f"position must be 'end' or 'top', got {position!r}")
    p = Path(path)
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    block = f"{begin}\n{markdown.strip(chr(10))}\n{end}"
    text = p.read_text(encoding="utf-8") if p.exists() else ""
    i = text.find(begin)
    if i >= 0:
        j = text.find(end, i + len(begin))
        if j < 0:
            raise ValueError(f"{p}: found '{begin}' but no '{end}' after it")
        new = text[:i] + block + text[j + len(end):]
    elif position == "top" and (k := _first_marker(text)) >= 0:
        new = text[:k] + block + "\n\n" + text[k:]
    else:
        new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(new, encoding="utf-8")
    return p


def _first_marker(text: str) -> int:
    """Index of the first ``<!-- BEGIN name -->`` line of ``text`` (−1 if none)."""
    m = re.search(r"^<!-- BEGIN [^\n]*? -->$", text, flags=re.MULTILINE)
    return m.start() if m else -1


def machine_info() -> dict[str, str]:
    """nproc, CPU model, python / numpy / scipy / numba versions, git commit."""
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        nproc = subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        nproc = str(len(os.sched_getaffinity(0)))
    info = {"cpu": cpu, "nproc": nproc, "python": platform.python_version(), "numpy": np.__version__}
    with contextlib.suppress(ImportError):
        import scipy

        info["scipy"] = scipy.__version__
    with contextlib.suppress(ImportError):
        import numba

        info["numba"] = numba.__version__
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                        check=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    return info


def figures_table(rows: list[tuple[str, ...]], head: tuple[str, ...] = ("figure", "value")) -> str:
    """A markdown table of named figures (``rows``: one tuple of cells per figure; ``|`` in a cell escaped).

    The generated part of a report is tables only; the prose that explains them is in the hand-written part
    of the page and refers to these figures by name."""
    def cells(row: tuple[str, ...]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |"
    return "\n".join([cells(head), "|" + "|".join(" --- " for _ in head) + "|", *(cells(r) for r in rows)])
