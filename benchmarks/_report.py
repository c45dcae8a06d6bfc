"""Helpers shared by the benchmark scripts that write parts of one markdown file (e.g. docs/benchmarks.md)."""

from __future__ import annotations

import os
from pathlib import Path


def update_section(path: str | os.PathLike[str], name: str, markdown: str) -> Path:
    """Put ``markdown`` between the markers ``<!-- BEGIN {name} -->`` and ``<!-- END {name} -->`` of ``path``.

    Only the text between that pair of markers is replaced; the rest of the file is kept as it is.  Without
    the markers the marked section is appended at the end; a missing file (and folder) is created.  A BEGIN
    marker without its END marker raises ValueError (the file was edited by hand; nothing is written).
    Returns the path.
    """
    if not name or "--" in name or "\n" in name:
        raise ValueError(f"section name must be non-empty, one line and free of '--': {name!r}")
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
    else:
        new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(new, encoding="utf-8")
    return p
