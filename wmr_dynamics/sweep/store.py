"""The results store: ``results.jsonl`` (one row per job, appended as jobs finish; what ``--resume`` reads)
and ``results.csv`` (the same rows flattened, ordered by job index).
"""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wmr_dynamics.io.output import OutputError, prepare_dir
from wmr_dynamics.sweep.scenario import SLIP_NAMES, SweepError

_NAMED_COLUMNS = {"final_pose": ("final_x_m", "final_y_m", "final_z_m", "final_roll_rad", "final_pitch_rad",
                                 "final_yaw_rad"),
                  "slip": tuple(f"slip_{p}" for p in SLIP_NAMES)}


def flatten(row: dict) -> dict:
    """One CSV row: lists of numbers → ``key_i`` columns (``final_pose`` → ``final_x_m`` … ``final_yaw_rad``,
    ``slip`` → ``slip_p1`` …), dicts → ``key_sub``, lists of names → ``"a;b"``."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, dict):
            out.update({f"{k}_{s}": x for s, x in v.items()})
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            out[k] = ";".join(v)
        elif isinstance(v, list):
            names = _NAMED_COLUMNS.get(k)
            out.update({(names[i] if names and i < len(names) else f"{k}_{i}"): x for i, x in enumerate(v)})
        else:
            out[k] = v
    return out


def write_csv(rows: Sequence[dict], path: Path) -> Path:
    """Write the (flattened) rows to ``path`` atomically; columns in order of first appearance."""
    flat = [flatten(r) for r in rows]
    columns = list(dict.fromkeys(c for r in flat for c in r))
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, restval="")
        w.writeheader()
        w.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in flat)
    os.replace(tmp, path)
    return path


def read_jsonl(path: Path) -> dict[int, dict]:
    """Rows of a results.jsonl by job index (a last line cut off by an interruption is ignored)."""
    rows: dict[int, dict] = {}
    if not path.is_file():
        return rows
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines) - 1:
                break
            raise SweepError(f"{path}: line {n + 1} is not JSON; cannot resume from this file") from None
        rows[int(row["job"])] = row
    return rows


class _Results:
    """results.jsonl (appended as jobs finish) and results.csv (rewritten at most every ``csv_every`` s)."""

    def __init__(self, out: Path | None, jobs: Sequence[dict], resume: bool, csv_every: float = 2.0) -> None:
        self.out, self.rows, self.csv_every, self._last_csv = out, {}, csv_every, 0.0
        self._jsonl = None
        if out is None:
            return
        try:
            prepare_dir(out)  # before any job runs: finished jobs are never lost to a bad --out
        except OutputError as e:
            raise SweepError(str(e)) from None
        jsonl = out / "results.jsonl"
        if jsonl.exists() and not resume:
            raise SweepError(f"{jsonl} exists: pass --resume to continue that sweep, or use another --out")
        if resume:
            self.rows = self._matching(read_jsonl(jsonl), jobs, jsonl)
        self._jsonl = jsonl.open("a")

    @staticmethod
    def _matching(old: dict[int, dict], jobs: Sequence[dict], path: Path) -> dict[int, dict]:
        for i, row in old.items():
            if i >= len(jobs) or any(row.get(k) != v for k, v in jobs[i].items()):
                raise SweepError(f"{path}: job {i} was written by a different sweep (its parameters differ); "
                                 "use another --out")
        return old

    def add(self, row: dict) -> None:
        self.rows[row["job"]] = row
        if self._jsonl is None:
            return
        self._jsonl.write(json.dumps(row) + "\n")
        self._jsonl.flush()
        if time.monotonic() - self._last_csv > self.csv_every:
            self.write_csv()

    def ordered(self) -> list[dict]:
        return [self.rows[i] for i in sorted(self.rows)]

    def write_csv(self) -> None:
        if self.out is not None and self.rows:
            write_csv(self.ordered(), self.out / "results.csv")
            self._last_csv = time.monotonic()

    def close(self) -> None:
        """Final files: both sorted by job index."""
        if self._jsonl is None:
            return
        self._jsonl.close()
        self._jsonl = None
        jsonl = self.out / "results.jsonl"
        tmp = jsonl.with_name("results.jsonl.tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in self.ordered()))
        os.replace(tmp, jsonl)
        self.write_csv()
