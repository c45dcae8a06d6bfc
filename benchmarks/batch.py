#!/usr/bin/env python3
"""Batched dynamic rollouts (issue 5 items 4–5): 1,000 × 5 s dynamic Zoë rollouts in one compiled call.

The planner's use of the model (``examples/mpc_planner.py``): the bundled Zoë with its YAML defaults
(piecewise-linear contact, ideal actuators, the ``zoe`` controller steering the passive axles by
differential wheel speeds), Δt = 0.04 s, on the rough benchmark terrain ``zoe_rough_1``, from the
YAML's initial pose (contact-initialized, at rest).  Each of the N trajectories gets its own command
sequence: (v, ω) held for 1 s each over the 5 s horizon, drawn uniformly from v ∈ [0, 1] m/s,
ω ∈ [−0.6, 0.6] rad/s (seeded).  All N run in one ``Simulator.rollout_batch`` call (``prange`` over
the trajectories), with 1 and with 2 threads (``numba.set_num_threads``), fastest of several
repetitions each: wall time of the call (``BatchResult.wall_time_s``), aggregate real-time factor
(N × 5 s / wall time), µs per trajectory-step, parallel efficiency — against the issue's target
(≤ 0.1 s wall, ≥ 50,000× on this 2-core machine).  For comparison, single rollouts of the same
configuration (the first trajectories' commands, ``CompiledDynamics.rollout`` as ``Simulator.run``
calls it, with its per-step diagnostics recorded).

Writes the section ``batch`` of docs/benchmarks.md and refreshes its ``summary``.

Usage::

    python benchmarks/batch.py            # ~1 min; writes docs/benchmarks.md
    python benchmarks/batch.py --quick    # 200 trajectories, 2 repetitions; writes out/batch_quick/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numba
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

import speed  # noqa: E402
import zoe_rough as zr  # noqa: E402
from _report import figures_table, update_section  # noqa: E402

import wmr_dynamics as wmr  # noqa: E402
from wmr_dynamics.simulate import Simulator  # noqa: E402

N = 1000
HORIZON = 5.0  # s
DT = 0.04  # s
COARSE_DT = 0.10  # s: the planner's setting, Table 2.7's coarsest step
SEGMENT = 1.0  # s per (v, ω) command
V_RANGE = (0.0, 1.0)  # m/s
W_RANGE = (-0.6, 0.6)  # rad/s
TERRAIN = 1  # zoe_rough_1
TARGET_WALL = 0.1  # s, issue 5 item 5 (2 cores)
TARGET_RTF = 50_000.0


def commands(n: int, seed: int = 1, horizon: float = HORIZON, dt: float = DT) -> NDArray:
    """(n, steps + 1, 2) command rows: per trajectory, (v, ω) drawn uniformly for each 1 s segment."""
    steps = int(round(horizon / dt))
    segments = int(np.ceil(horizon / SEGMENT))
    rng = np.random.default_rng(seed)
    plans = rng.uniform([V_RANGE[0], W_RANGE[0]], [V_RANGE[1], W_RANGE[1]], size=(n, segments, 2))
    per = int(round(SEGMENT / dt))
    rows = np.repeat(plans, per, axis=1)
    return np.ascontiguousarray(np.concatenate([rows, rows[:, -1:]], axis=1)[:, :steps + 1])


def make_sim(terrain_dir: Path | None = None, dt: float = DT) -> tuple[Simulator, NDArray]:
    model = wmr.load_model("zoe")
    sim = Simulator(model, zr.load_terrain(TERRAIN, terrain_dir), mode="dynamic", dt=dt)
    if sim.engine_used != "compiled":
        raise SystemExit(f"rollout_batch needs the compiled engine (got {sim.engine_used})")
    return sim, sim.initial_state()


def time_batch(sim: Simulator, q0: NDArray, cmds: NDArray, threads: int, repeat: int) -> dict:
    """Fastest of ``repeat`` batch calls with ``threads`` threads: wall (the call), CPU time, the result."""
    numba.set_num_threads(threads)
    sim.rollout_batch(cmds[:4, :3], q0=q0)  # load the parallel kernel outside the timing
    best, cpu, res = np.inf, np.inf, None
    for _ in range(repeat):
        c0 = time.process_time()
        r = sim.rollout_batch(cmds, q0=q0)
        cpu = min(cpu, time.process_time() - c0)
        if r.wall_time_s < best:
            best, res = r.wall_time_s, r
    return {"threads": threads, "wall": best, "cpu": cpu, "result": res}


def time_single(sim: Simulator, q0: NDArray, cmds: NDArray, repeat: int) -> float:
    """µs per step of single rollouts (``CompiledDynamics.rollout``, as ``Simulator.run`` calls it)."""
    qvel0 = np.zeros(sim.model.num_dof)
    sim.compiled.warm_up()
    total = 0.0
    for c in cmds:
        best = np.inf
        for _ in range(repeat):
            t0 = time.perf_counter()
            sim.compiled.rollout(q0, qvel0, c, DT)
            best = min(best, time.perf_counter() - t0)
        total += best
    return 1e6 * total / (cmds.shape[0] * (cmds.shape[1] - 1))


def markdown(runs: list[dict], n: int, steps: int, single_us: float, n_single: int, identical: bool,
             load: Sequence[float], elapsed: float, coarse: dict | None = None) -> str:
    one = next(r for r in runs if r["threads"] == 1)
    two = max(runs, key=lambda r: r["threads"])
    res = two["result"]
    fail = int(np.count_nonzero(res.status[:, 0] != 0))
    rolled = int(res.stat("rolled_over").sum())
    unconv = int(np.count_nonzero(res.stat("converged") < 0.5))
    iters = float(np.nanmean(res.stat("mean_iterations")))
    head = ["threads", "wall time (s)", "aggregate ×RT", "µs per trajectory-step (wall)", "CPU µs per step",
            "parallel efficiency", "target wall / ×RT"]
    body = []
    for r in runs:
        rtf = n * HORIZON / r["wall"]
        eff = one["wall"] / (r["threads"] * r["wall"])
        body.append([str(r["threads"]), f"{r['wall']:.3f}", f"{rtf:,.0f}", f"{1e6 * r['wall'] / (n * steps):.2f}",
                     f"{1e6 * r['cpu'] / (n * steps):.2f}", f"{100 * eff:.0f}%",
                     ("**met**" if r["wall"] <= TARGET_WALL * n / N and rtf >= TARGET_RTF else "**not met**")
                     if r is two else "–"])
    rtf2 = n * HORIZON / two["wall"]
    need_cpu_us = TARGET_WALL * two["threads"] / (N * steps) * 1e6
    cpu_us = 1e6 * two["cpu"] / (n * steps)
    settings = [("rollouts; horizon; steps of Δt", f"{n:,}; {HORIZON:g} s; {steps} of {DT} s"),
                ("terrain; commands", f"`zoe_rough_{TERRAIN}`; (v, ω) held for {SEGMENT:g} s each, v ∈ "
                                      f"[{V_RANGE[0]:g}, {V_RANGE[1]:g}] m/s, "
                                      f"ω ∈ [{W_RANGE[0]:g}, {W_RANGE[1]:g}] rad/s"),
                ("machine; numba threading layer; wall time in all; load",
                 f"{speed.machine_line()}; `{numba.threading_layer()}`; {elapsed:.0f} s; {speed.load_note(load)}")]
    figures = [(f"{two['threads']} threads: wall (s); aggregate ×RT; wall µs per trajectory-step",
                f"**{two['wall']:.3f}**; **{rtf2:,.0f}×**; {1e6 * two['wall'] / (n * steps):.2f}"),
               ("1 thread: wall (s); aggregate ×RT", f"{one['wall']:.3f}; {n * HORIZON / one['wall']:,.0f}×"),
               (f"single rollout (`CompiledDynamics.rollout`, first {n_single} command sequences) vs the batch on one "
                "thread: µs per step", f"{single_us:.1f} vs {1e6 * one['wall'] / (n * steps):.1f}"),
               ("trajectories failed (status ≠ 0) / rolled over / with an unconverged step",
                f"{fail} / {rolled} / {unconv} of {n}"),
               ("force-balance iterations per step (mean)", f"{iters:.2f}"),
               (f"{two['threads']}-thread states bit-for-bit identical to the 1-thread ones",
                "yes" if identical else "**no**"),
               ("gap: CPU µs per trajectory-step the target allows on 2 cores; the batch's (× too much)",
                f"{need_cpu_us:.1f}; {cpu_us:.1f} ({cpu_us / need_cpu_us:.0f}×)"),
               ("the C++'s 17 µs per step on the 2 cores (s)", f"{N * steps * 17e-6 / 2:.2f}")]
    if coarse:
        cr = coarse["result"]
        its = float(np.nanmean(cr.stat("mean_iterations")))
        figures.append((f"the same batch at Δt {COARSE_DT:g} s (Table 2.7's coarsest step: its accuracy bound holds, "
                        f"section speed), {coarse['threads']} threads: wall (s); iterations per step; failed / "
                        "unconverged", f"**{coarse['wall']:.3f}**; {its:.2f}; "
                        f"{int(np.count_nonzero(cr.status[:, 0] != 0))} / "
                        f"{int(np.count_nonzero(cr.stat('converged') < 0.5))}"))
    return "\n".join([
        figures_table(settings, ("setting", "value")), "", zr._render(head, body, True), "", figures_table(figures), "",
        speed._data("batch", {"n": n, "horizon": HORIZON, "threads": two["threads"], "wall": round(two["wall"], 4),
                              "rtf": round(rtf2, 1), "wall1": round(one["wall"], 4),
                              "rtf1": round(n * HORIZON / one["wall"], 1),
                              "eff": round(one["wall"] / (two["threads"] * two["wall"]), 3),
                              "wall_coarse": round(coarse["wall"], 4) if coarse else None}),
    ])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="200 trajectories, 2 repetitions (smoke run)")
    p.add_argument("-n", type=int, default=None, help=f"trajectories (default {N}; quick 200)")
    p.add_argument("--repeat", type=int, default=None, help="repetitions per thread count (default 7; quick 2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--terrain-dir", type=Path, default=None, help=f"default {zr.TERRAIN_DIR}")
    p.add_argument("--out", type=Path, default=None,
                   help="markdown file to update (default docs/benchmarks.md; --quick: out/batch_quick/benchmarks.md)")
    a = p.parse_args(argv)
    n = a.n or (200 if a.quick else N)
    repeat = a.repeat or (2 if a.quick else 7)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    sim, q0 = make_sim(a.terrain_dir)
    cmds = commands(n, a.seed)
    steps = cmds.shape[1] - 1
    threads = sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)})
    runs = []
    for _ in range(2):  # interleaved: 1 thread, 2 threads, and again; fastest kept
        for th in threads:
            r = time_batch(sim, q0, cmds, th, (repeat + 1) // 2)
            old = next((x for x in runs if x["threads"] == th), None)
            if old is None:
                runs.append(r)
            elif r["wall"] < old["wall"]:
                r["cpu"] = min(r["cpu"], old["cpu"])
                runs[runs.index(old)] = r
            else:
                old["cpu"] = min(r["cpu"], old["cpu"])
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for r in runs:
        print(f"{r['threads']} thread(s): {r['wall']:.4f} s wall, {n * HORIZON / r['wall']:,.0f}x real time, "
              f"CPU {r['cpu']:.4f} s")
    q1, q2 = runs[0]["result"].q, runs[-1]["result"].q
    identical = bool(np.array_equal(q1, q2, equal_nan=True))
    n_single = min(50, n)
    single_us = time_single(sim, q0, cmds[:n_single], 3)
    print(f"single rollout: {single_us:.2f} us/step; threads identical: {identical}")
    sim_c, _ = make_sim(a.terrain_dir, COARSE_DT)
    coarse = time_batch(sim_c, q0, commands(n, a.seed, dt=COARSE_DT), threads[-1], repeat)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    print(f"Δt {COARSE_DT:g}: {coarse['wall']:.4f} s wall ({threads[-1]} threads)")
    md = markdown(runs, n, steps, single_us, n_single, identical, (load0, os.getloadavg()[0]),
                  time.perf_counter() - t0, coarse)
    doc = a.out or (zr.ROOT / "out" / "batch_quick" / "benchmarks.md" if a.quick else speed.DOC)
    speed.prepare_doc(doc)
    update_section(doc, "batch", md)
    speed.write_summary(doc)
    print(f"wrote {doc} (sections batch, summary)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
