#!/usr/bin/env python3
"""Cost of stepping call by call (``wmr_dynamics.stepper``) over the raw compiled step.

A ROS node or a real-time user advances a ``SimData`` one step per call with the command set from outside.
Measured on the bundled Zoë on the rough benchmark terrain ``zoe_rough_1`` at Δt = 0.04 s, driving
straight at 0.5 m/s for 10 s, kinematic and dynamic mode, single thread, fastest of several repetitions:

- **one call**: ``Simulator.run`` — the whole run in one compiled call (the raw step, µs/step);
- **N per call**: ``Stepper.advance(data, 25, command=...)`` — 1 s of simulation per call;
- **1 per call**: ``Stepper.advance(data, command=...)`` — one step per call, as a node at its step rate.

The overhead per call is (1-per-call µs/step − one-call µs/step): argument checks, unboxing the model,
terrain and workspace tuples into the compiled entry point (called directly: numba's type dispatch would add
~12 µs), and the step's few derived diagnostics.

Writes the section ``stepper`` of docs/benchmarks.md.

Usage::

    python benchmarks/stepper.py            # ~30 s; writes docs/benchmarks.md
    python benchmarks/stepper.py --quick    # 2 s runs; writes out/stepper_quick/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import speed  # noqa: E402
import zoe_rough as zr_bench  # noqa: E402
from _report import figures_table, update_section  # noqa: E402

from wmr_dynamics.scenarios import zoe_rough as zr  # noqa: E402
from wmr_dynamics.simulate import Simulator  # noqa: E402
from wmr_dynamics.stepper import Stepper  # noqa: E402

DT, SPEED, BLOCK = 0.04, 0.5, 25


def measure(mode: str, duration: float, repeat: int) -> dict[str, float]:
    """µs per step of the three ways of stepping (fastest of ``repeat``)."""
    model = zr.zoe_model()
    terrain = zr.load_terrain(1)
    sim = Simulator(model, terrain, mode=mode, dt=DT)
    q0 = zr.initial_state(model, terrain)
    n = int(round(duration / DT))
    one = min(sim.run(duration, (SPEED, 0.0), q0=q0, progress=False).wall_time_s for _ in range(repeat)) / n
    stepper = Stepper(model, terrain, mode=mode, dt=DT)
    data = stepper.make_data(q0)

    def timed(per_call: int) -> float:
        best = float("inf")
        for _ in range(repeat):
            stepper.reset(data, q0)
            start = time.perf_counter()
            for _ in range(n // per_call):
                stepper.advance(data, per_call, command=(SPEED, 0.0))
            best = min(best, time.perf_counter() - start)
        return best / (n // per_call * per_call)

    return {"one": one * 1e6, "block": timed(BLOCK) * 1e6, "single": timed(1) * 1e6}


def markdown(rows: dict[str, dict[str, float]], duration: float, repeat: int, load: Sequence[float],
             elapsed: float) -> str:
    head = ["mode", "one call µs/step", f"{BLOCK} steps/call µs/step", "1 step/call µs/step", "overhead µs/call",
            "1 step/call ×RT"]
    body = [[mode, f"{r['one']:.1f}", f"{r['block']:.1f}", f"{r['single']:.1f}", f"{r['single'] - r['one']:.1f}",
             f"{DT / (r['single'] * 1e-6):,.0f}"] for mode, r in rows.items()]
    settings = [("run", f"Zoë on `zoe_rough_1`, straight at {SPEED} m/s for {duration:g} s, Δt = {DT} s; single "
                        f"thread, fastest of {repeat}; steps per call in the middle column: {BLOCK}"),
                ("machine; wall time in all; load",
                 f"{speed.machine_line()}; {elapsed:.0f} s; {speed.load_note(load)}")]
    return "\n".join([figures_table(settings, ("setting", "value")), "", zr_bench._render(head, body, True), "",
                      speed._data("stepper", {m: {k: round(v, 2) for k, v in r.items()} for m, r in rows.items()})])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2 s runs, 2 repetitions")
    p.add_argument("--out", type=Path, default=None,
                   help="markdown file to update (default docs/benchmarks.md; --quick: out/stepper_quick/...)")
    args = p.parse_args(argv)
    duration, repeat = (2.0, 2) if args.quick else (10.0, 7)
    out = args.out or (Path("out/stepper_quick/benchmarks.md") if args.quick
                       else Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md")
    start, load0 = time.perf_counter(), os.getloadavg()[0]
    rows = {}
    for mode in ("kinematic", "dynamic"):
        rows[mode] = measure(mode, duration, repeat)
        r = rows[mode]
        print(f"{mode}: one call {r['one']:.1f} µs/step, {BLOCK}/call {r['block']:.1f}, 1/call {r['single']:.1f} "
              f"(overhead {r['single'] - r['one']:.1f} µs/call)", flush=True)
    text = markdown(rows, duration, repeat, (load0, os.getloadavg()[0]), time.perf_counter() - start)
    print(f"wrote {update_section(out, 'stepper', text)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
