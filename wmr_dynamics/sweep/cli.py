"""The ``wmr-sweep`` command line (:func:`main`; also ``python -m wmr_dynamics.sweep``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from wmr_dynamics.sweep.runner import run_sweep
from wmr_dynamics.sweep.scenario import SweepError
from wmr_dynamics.sweep.spec import Sweep, load_sweep
from wmr_dynamics.sweep.table import _label, format_table, group_means


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wmr-sweep", description="Run a parameter sweep / Monte-Carlo study of the "
                                "simulator described by a sweep file (docs/sweep.md), locally or on Ray.")
    p.add_argument("sweep", help="sweep file (YAML)")
    p.add_argument("--backend", default="local", choices=["local", "ray"], help="where jobs run (default local)")
    p.add_argument("--address", default=None,
                   help="ray: address of an existing cluster (e.g. 10.0.0.5:6379 or auto); default: start a "
                        "local instance on loopback")
    p.add_argument("--workers", type=int, default=None,
                   help="local: processes (1 = in this process); ray without --address: CPUs of the local "
                        "instance (default: the number of CPUs)")
    p.add_argument("--out", default=None, help="folder for results.csv and results.jsonl (default: none)")
    p.add_argument("--resume", action="store_true", help="skip the jobs already in OUT/results.jsonl")
    p.add_argument("--dry-run", action="store_true", help="list the jobs and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one line of JSON as the last line of stdout")
    return p


def _dry_run(sweep: Sweep, as_json: bool) -> int:
    print(f"{sweep.name}: {len(sweep.jobs)} jobs; varied: {', '.join(sweep.varied) or 'nothing'}")
    for job in sweep.jobs:
        extra = [f"sample={job['sample']}"] if "sample" in job else []
        print(f"  {job['job']:>5d}  " + " ".join(extra + [f"{k}={_label(job[k])}" for k in sweep.varied]))
    if as_json:
        print(json.dumps({"name": sweep.name, "jobs": len(sweep.jobs), "varied": list(sweep.varied),
                          "dry_run": True}))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``wmr-sweep`` entry point.  Exit codes: 0 all jobs ran, 1 some jobs failed (rows with ``error``),
    2 bad input (one-line error on stderr), 130 interrupted (results so far kept in OUT)."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        sweep = load_sweep(args.sweep)
        if args.dry_run:
            return _dry_run(sweep, args.json)
        outcome = run_sweep(sweep, args.backend, args.workers, args.address, args.out, args.resume,
                            progress=not args.quiet)
    except SweepError as e:
        print(f"wmr-sweep: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"wmr-sweep: interrupted; finished jobs are in {args.out}/results.jsonl (rerun with --resume)"
              if args.out else "wmr-sweep: interrupted", file=sys.stderr)
        return 130
    table = group_means(outcome.rows, sweep.group_by, sweep.outputs)
    failed = sum(1 for r in outcome.rows if r.get("error"))
    print(f"{sweep.name}: {len(outcome.rows)} jobs ({outcome.ran} run, {outcome.skipped} resumed, {failed} failed) "
          f"in {outcome.wall_time_s:.1f} s on {args.backend}; means over "
          f"{', '.join(k for k in sweep.varied if k not in sweep.group_by) or 'nothing'}:")
    print(format_table(table, sweep.group_by))
    if args.out:
        print(f"wrote {Path(args.out) / 'results.csv'} and {Path(args.out) / 'results.jsonl'}")
    if args.json:
        print(json.dumps({"name": sweep.name, "jobs": len(outcome.rows), "ran": outcome.ran,
                          "skipped": outcome.skipped, "failed": failed, "backend": args.backend,
                          "wall_time_s": outcome.wall_time_s, "out": args.out, "group_by": list(sweep.group_by),
                          "groups": table}))
    return 1 if failed else 0
