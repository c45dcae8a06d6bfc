#!/usr/bin/env python3
"""Our step beside the thesis author's C++ (``../shared/tools/wmrde_bench``), measured in one run.

This machine's speed drifts by 1.5× between sessions, so speed is a *ratio* against the C++ measured in the
same run, interleaved: each round runs every case once on each side (the C++ first), and the table gives
the median over rounds of each side's µs per step and their ratio (C++ µs / our µs: above 1, ours is
faster).  Cases (issue 14's table): Zoë on the ten rough terrains ``zoe_rough_1..10`` and Rocky 7 on
``rocky_rough_0``, 0.5 m/s straight for 10 s at Δt 0.04 s, single thread, ideal actuators, the naive
controller; dynamic with the piecewise-linear contact model, and kinematic.  Issue 13's: the tracked Talon on
``rocky_rough_0`` at Δt 0.01 s (2 tracks × 5 contact elements here: two roller arcs and three belt points; the
C++ samples each lower run at 3 points and has no arcs), with the piecewise-linear contact model (like for like:
the C++'s contact is slip-velocity based too), with our tracks' default, ``coulomb`` (static friction), and
sampled as the C++ samples (:func:`cxx_sampled`: 3 elements per track), with the C++'s contacts exactly (3 fixed
points per lower run, no arcs: ``roller_arcs: false``), and recording the states alone as the C++'s loop does
(``CompiledDynamics.rollout(record=False)``).  Per terrain the fastest of
``--reps`` repetitions is kept on both sides (the C++ driver does the same), summed over the terrains.

Settings that differ (wmrde_bench/README.md): the C++ stops its Newton loop at ‖e‖² < 1 N² (ours: the
shipped tolerance), starts at the commanded velocity (ours: from rest on the terrain), and Zoë's steering
joints are passive in its dynamic model (ours: held straight, two rigid rows).

Writes the section ``cxx`` of docs/benchmarks.md.  Usage::

    python benchmarks/cxx_reference.py              # 7 rounds, ~1 min
    python benchmarks/cxx_reference.py --rounds 2   # a quick look (prints, writes out/cxx_quick/)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import machine_info, update_section  # noqa: E402

from wmr_dynamics import load_model  # noqa: E402
from wmr_dynamics.dynamics.force_balance import DynamicsOptions  # noqa: E402
from wmr_dynamics.model import G, Track, WmrModel, track_elements  # noqa: E402
from wmr_dynamics.scenarios import zoe_rough as zr  # noqa: E402
from wmr_dynamics.scenarios.paths import rough_terrain_path  # noqa: E402
from wmr_dynamics.simulate import Simulator  # noqa: E402
from wmr_dynamics.terrain import load_wmrde_grid  # noqa: E402
from wmr_dynamics.tracks import tracks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "tools" / "wmrde_bench" / "wmrde_bench"
DT = 0.04
#: (label, C++ model, C++ mode, our vehicle, our kind, terrain names, Δt s); kind "linear-cxx-tol": ours with the
#: C++'s Newton stopping rule, ‖e‖ < 1 N (its ‖e‖² < 1 N²) instead of the shipped 1e-5 × the weight
ZOE_TERRAINS = [f"zoe_rough_{k}" for k in zr.TERRAINS]
CASES = (
    ("Zoë dynamic, linear contact", "zoe", "dyn", "zoe", "linear", ZOE_TERRAINS, DT),
    ("Zoë dynamic, linear, ours with the C++'s tolerance", "zoe", "dyn", "zoe", "linear-cxx-tol", ZOE_TERRAINS, DT),
    ("Zoë kinematic (ours: the states recorded, as the C++'s loop)", "zoe", "kin", "zoe", "kinematic", ZOE_TERRAINS,
     DT),
    ("Zoë kinematic, ours as Simulator.run (rollover margin and diagnostics at every step)", "zoe", "kin", "zoe",
     "kinematic-run", ZOE_TERRAINS, DT),
    ("Rocky 7 dynamic, linear contact", "rocky", "dyn", "rocky7", "linear", ["rocky_rough_0"], DT),
    ("Talon (tracks) dynamic, Δt 0.01, linear contact", "talon", "dyn", "talon", "linear", ["rocky_rough_0"], 0.01),
    ("Talon (tracks) dynamic, Δt 0.01, ours with coulomb (its default)", "talon", "dyn", "talon", "coulomb",
     ["rocky_rough_0"], 0.01),
    ("Talon, linear, ours sampled as the C++ (3 points per lower run: belt_points 1)", "talon", "dyn",
     "talon-cxx-sampling", "linear", ["rocky_rough_0"], 0.01),
    ("Talon, linear, ours with the C++'s contacts (roller_arcs: false, belt_points 3: fixed points only)", "talon",
     "dyn", "talon-cxx-points", "linear", ["rocky_rough_0"], 0.01),
    ("Talon, linear, ours with the C++'s contacts and its tolerance", "talon", "dyn", "talon-cxx-points",
     "linear-cxx-tol", ["rocky_rough_0"], 0.01),
    ("Talon, linear, ours with the C++'s tolerance", "talon", "dyn", "talon", "linear-cxx-tol", ["rocky_rough_0"],
     0.01),
    ("Talon, linear, ours with the states recorded (as the C++'s loop)", "talon", "dyn", "talon", "linear-states",
     ["rocky_rough_0"], 0.01),
)


def cxx_sampled(model: WmrModel, roller_arcs: bool = True) -> WmrModel:
    """``model`` with each track's lower run sampled as the C++'s Talon samples it (wmrde's ``npflat`` = 3 points
    from the rear roller's lowest point to the front's): our roller arcs (whose lowest points are those ends)
    and one belt point between them (``belt_points: 1``; the arcs still climb edges, the C++'s points do not) —
    or, without ``roller_arcs``, the C++'s contacts exactly: 3 fixed points from end to end (``belt_points: 3``)."""
    wheels = [w for w in model.wheels if w.track is None]
    for t in tracks(model):
        first = model.wheels[t.elements[0]]
        wheels += track_elements(Track(frame=first.frame, sprocket_radius=t.sprocket_radius, rear=t.rear,
                                       front=t.front, rear_radius=t.rear_radius, front_radius=t.front_radius,
                                       belt_points=1 if roller_arcs else 3, width=first.width, name=t.name,
                                       roller_arcs=roller_arcs))
    return dataclasses.replace(model, wheels=tuple(wheels))


def cxx_us(model: str, mode: str, terrains: list[str], reps: int, dt: float = DT) -> float:
    """The C++'s µs per step (fastest repetition per terrain, summed over the terrains)."""
    files = [str(rough_terrain_path(t)) for t in terrains]
    out = subprocess.run([str(BENCH), model, mode, str(dt), str(zr.DURATION), str(reps), *files],
                         capture_output=True, text=True, check=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["us_per_step_min"])


class Ours:
    """Our side of one case: a simulator per terrain, built once (compiled engine warm)."""

    def __init__(self, vehicle: str, kind: str, terrains: list[str], dt: float = DT) -> None:
        if vehicle == "zoe":
            model = zr.zoe_model()
        elif vehicle.endswith("-cxx-sampling"):
            model = cxx_sampled(load_model(vehicle.removesuffix("-cxx-sampling")))
        elif vehicle.endswith("-cxx-points"):
            model = cxx_sampled(load_model(vehicle.removesuffix("-cxx-points")), roller_arcs=False)
        else:
            model = load_model(vehicle)
        # the states only: CompiledKinematics / CompiledDynamics .rollout(record=False), timed here
        self.states_only = kind == "kinematic" or kind.endswith("-states")
        kind = kind.removesuffix("-states")
        if kind.startswith("kinematic"):
            kind, opts = "kinematic", None
        elif kind == "coulomb":  # not one of the Zoë benchmark's models
            opts = DynamicsOptions.from_config(model, contact="coulomb", actuator="ideal")
        else:
            opts = zr.dynamics_options(model, kind.removesuffix("-cxx-tol"))
        if kind.endswith("-cxx-tol"):
            opts = dataclasses.replace(opts, tolerance=1.0 / (model.total_mass * G))
            kind = kind.removesuffix("-cxx-tol")
        self.runs = []
        for name in terrains:
            terrain = load_wmrde_grid(rough_terrain_path(name))
            self.runs.append((zr.make_simulator(model, terrain, kind, dt, opts), zr.initial_state(model, terrain)))
        self.us(1)  # compile or load the engine outside the timing

    def us(self, reps: int) -> float:
        wall, steps = 0.0, 0
        for sim, q0 in self.runs:
            if self.states_only:
                n = int(round(zr.DURATION / sim.dt))
                cmds = np.tile((zr.SPEED, 0.0), (n + 1, 1))
                wall += min(_timed(lambda: _states_only(sim, q0, cmds)) for _ in range(reps))  # noqa: B023
                steps += n
                continue
            results = [sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=q0, progress=False) for _ in range(reps)]
            wall += min(r.wall_time_s for r in results)
            steps += results[0].steps
        return 1e6 * wall / steps


def _states_only(sim: Simulator, q0: np.ndarray, cmds: np.ndarray) -> object:
    """The compiled rollout of ``sim`` recording the states alone (``record=False``); a dynamic one from rest, as
    ``Simulator.run`` starts (the same trajectory, bit for bit)."""
    if sim.mode == "kinematic":
        return sim.compiled.rollout(q0, cmds, sim.dt, record=False)
    return sim.compiled.rollout(q0, np.zeros(sim.model.num_dof), cmds, sim.dt, record=False)


def _timed(call: Callable[[], object]) -> float:
    """Wall time of ``call()``, s."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(rounds: int, reps: int, quiet: bool = False) -> list[dict]:
    ours = [Ours(v, k, t, dt) for _, _, _, v, k, t, dt in CASES]
    samples = [{"cxx": [], "ours": []} for _ in CASES]
    for r in range(rounds):
        for (_, model, mode, _, _, terrains, dt), side, s in zip(CASES, ours, samples, strict=True):
            s["cxx"].append(cxx_us(model, mode, terrains, reps, dt))
            s["ours"].append(side.us(reps))
        if not quiet:
            print(f"round {r + 1}/{rounds}: " + "; ".join(f"{c[0]}: C++ {s['cxx'][-1]:.1f} / ours {s['ours'][-1]:.1f} "
                                                       "µs" for c, s in zip(CASES, samples, strict=True)),
                  file=sys.stderr, flush=True)
    rows = []
    for case, s in zip(CASES, samples, strict=True):
        c, o = statistics.median(s["cxx"]), statistics.median(s["ours"])
        rows.append({"case": case[0], "cxx_us": c, "ours_us": o, "ratio": c / o,
                     "ratio_range": (min(s["cxx"]) / max(s["ours"]), max(s["cxx"]) / min(s["ours"]))})
    return rows


def markdown(rows: list[dict], rounds: int, reps: int, elapsed: float, load: tuple[float, float]) -> str:
    info = machine_info()
    lines = [f"Side by side with the thesis author's C++, {rounds} interleaved rounds, Δt {DT} s unless given "
             f"({elapsed:.0f} s, {info['cpu']}, load {load[0]:.2f} → {load[1]:.2f}, "
             f"commit {info.get('commit', '?')}).", "",
             "| case | C++ µs/step | ours µs/step | ours / C++ speed | range over rounds |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        lo, hi = r["ratio_range"]
        lines.append(f"| {r['case']} | {r['cxx_us']:.1f} | {r['ours_us']:.1f} | {r['ratio']:.2f}× | "
                     f"{lo:.2f}–{hi:.2f}× |")
    data = {r["case"]: {"cxx_us": round(r["cxx_us"], 2), "ours_us": round(r["ours_us"], 2),
                        "ratio": round(r["ratio"], 3)} for r in rows}
    lines += ["", f"<!-- data cxx {json.dumps(data, ensure_ascii=False)} -->"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--reps", type=int, default=3, help="repetitions per terrain and round, fastest kept")
    p.add_argument("--out", type=Path, default=None, help="default docs/benchmarks.md (out/cxx_quick/ for < 5 rounds)")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    if not BENCH.is_file():
        print(f"cxx_reference: the C++ reference {BENCH} is missing (../shared/tools/wmrde_bench)", file=sys.stderr)
        return 2
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    rows = measure(a.rounds, a.reps, a.quiet)
    text = markdown(rows, a.rounds, a.reps, time.perf_counter() - t0, (load0, os.getloadavg()[0]))
    print(text)
    out = a.out or (ROOT / "out" / "cxx_quick" / "benchmarks.md" if a.rounds < 5 else ROOT / "docs" / "benchmarks.md")
    update_section(out, "cxx", text)
    if out.name == "benchmarks.md" and out.parent.name == "docs":
        from speed import write_summary  # the summary's issue-14 table reads this section's data

        write_summary(out)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
