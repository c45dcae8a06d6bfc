"""Print the outcome counts of a fuzz run (``make fuzz`` writes them to docs/fuzz-results.json) as a table."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def table(counts: dict[str, dict[str, int]]) -> str:
    rows = ["| target | examples | outcomes |", "| --- | ---: | --- |"]
    total = 0
    for target, c in counts.items():
        n = sum(c.values())
        total += n
        rows.append(f"| {target} | {n} | " + ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1]))
                    + " |")
    rows.append(f"| **all** | **{total}** | |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(json.loads(Path(sys.argv[1]).read_text())))
