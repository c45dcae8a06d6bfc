"""The summary table ``wmr-sweep`` prints: means of the outputs per group of rows (:func:`group_means`)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from wmr_dynamics.sweep.scenario import TIMING_KEYS
from wmr_dynamics.sweep.store import flatten


def _metrics(row: dict, outputs: Sequence[str]) -> dict[str, float]:
    flat = flatten({k: row.get(k) for k in outputs})
    return {k: float(v) for k, v in flat.items() if isinstance(v, (int, float)) and not isinstance(v, str)}


def _label(v: Any) -> str:
    if isinstance(v, str) and os.sep in v:
        return Path(v).name
    return json.dumps(v) if isinstance(v, (list, dict)) or v is None else str(v)


def group_means(rows: Sequence[dict], group_by: Sequence[str], outputs: Sequence[str]) -> list[dict]:
    """Mean of each numeric output (flattened; booleans as fractions) per combination of ``group_by`` values,
    over the rows without error; ``n``: rows averaged, ``errors``: failed rows of the group."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(json.dumps(r[k]) for k in group_by), []).append(r)
    table = []
    for members in groups.values():
        ok = [_metrics(r, outputs) for r in members if not r.get("error")]
        names = list(dict.fromkeys(k for m in ok for k in m))
        means = {k: float(np.mean([m[k] for m in ok if k in m])) for k in names}
        table.append({**{k: members[0][k] for k in group_by}, "n": len(ok),
                      "errors": len(members) - len(ok), **means})
    return table


def format_table(table: Sequence[dict], group_by: Sequence[str]) -> str:
    """A fixed-width text table of :func:`group_means`; timing columns left out."""
    if not table:
        return "(no results)"
    cols = [c for c in dict.fromkeys(k for r in table for k in r) if c not in TIMING_KEYS]
    if not any(r["errors"] for r in table):
        cols.remove("errors")
    cells = [[_label(r.get(c)) if c in group_by else _fmt(r.get(c)) for c in cols] for r in table]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    return f"{v:.5g}"
