#!/usr/bin/env python3
"""Trajectories in SIMD lanes (issue 14 item 4): what a lanes batch kernel would give, measured in parts.

A lanes kernel runs the same step on W trajectories at once, every array with a last axis of length W
(structure of arrays), so that each arithmetic line of the step becomes one vector instruction for W
trajectories.  Before building one (a rewrite of the whole compiled step in that layout), this script measures
the three figures that decide its worth, in one run:

1. **Vector speed-up of branch-free work** — the Newton step's core, the LU factorization and solve of the
   force balance's ``nx × nx`` system (Zoë: nx = 7), on L = 1,024 systems: our engine's
   ``compiled.linalg.lu_factor`` + ``lu_solve`` one system after the other, against a lanes kernel written
   here (``(nx, nx, W)`` blocks, the lane loop innermost, which LLVM turns into vector instructions).  The
   lanes kernel is timed without pivoting (every lane takes the same path: the upper bound of the gain) and
   with partial pivoting (each lane swaps its own rows: per-lane selects, as every data-dependent branch of
   the step would need).
2. **Lockstep loss** — lanes of one group run until their slowest lane is done.  From single rollouts of the
   batch benchmark's trajectories (``benchmarks/batch.py``: Zoë on ``zoe_rough_1``, random (v, ω) segments),
   the Newton iterations of every step: the mean over groups of W trajectories of the group's maximum, over
   the mean — the factor by which the Newton loop's work grows in lanes.
3. **Amdahl estimate** for the whole step from the compiled step's profile (``speed.profile_step``): the
   rigid-body parts (FK, Plücker, CRBA, RNEA, Jacobians, reduced matrices) at the branch-free speed-up, the
   Newton loop at the pivoting speed-up divided by the lockstep loss, the contact search and the rest of the
   set-up (sampled search with warm starts and fallbacks, pivoted Gram–Schmidt, contact sets: per-lane
   control flow) at no gain; and as a bound, those too at the branch-free speed-up.

Writes the section ``simd_lanes`` of docs/benchmarks.md.  Usage::

    python benchmarks/simd_lanes.py            # ~1 min
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numba import njit
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

import batch  # noqa: E402
import speed  # noqa: E402
from _report import machine_info, update_section  # noqa: E402

from wmr_dynamics.compiled.linalg import lu_factor, lu_solve  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NX = 7  # Zoë's force-balance unknowns (null-space coordinates), speed.profile_step's "nx"
SYSTEMS = 1024
WIDTHS = (4, 8)  # AVX2 holds 4 doubles, AVX-512 8


@njit(cache=True)
def scalar_lu(A: NDArray, b: NDArray, x: NDArray, LU: NDArray, piv: NDArray) -> None:
    """The engine's LU factor and solve, one system after the other (A: (L, n, n), b and x: (L, n))."""
    n = A.shape[1]
    for s in range(A.shape[0]):
        lu_factor(A[s], n, LU, piv, 1e-14)
        for i in range(n):
            x[s, i] = b[s, i]
        lu_solve(LU, piv, n, x[s])


@njit(cache=True)
def lanes_lu(A: NDArray, b: NDArray, x: NDArray, LU: NDArray, pivot: bool) -> None:
    """Gaussian elimination on lane blocks: A (G, n, n, W), b and x (G, n, W); the lane loop is innermost.
    ``pivot``: partial pivoting per lane (each lane picks and swaps its own rows by selects)."""
    n, W = A.shape[1], A.shape[3]
    for g in range(A.shape[0]):
        for i in range(n):
            for j in range(n):
                for w in range(W):
                    LU[i, j, w] = A[g, i, j, w]
            for w in range(W):
                x[g, i, w] = b[g, i, w]
        for k in range(n):
            if pivot:
                for i in range(k + 1, n):  # per lane: swap rows k and i where row i's entry is larger
                    for w in range(W):
                        bigger = abs(LU[i, k, w]) > abs(LU[k, k, w])
                        for j in range(n):
                            a, c = LU[k, j, w], LU[i, j, w]
                            LU[k, j, w] = c if bigger else a
                            LU[i, j, w] = a if bigger else c
                        a, c = x[g, k, w], x[g, i, w]
                        x[g, k, w] = c if bigger else a
                        x[g, i, w] = a if bigger else c
            for i in range(k + 1, n):
                for w in range(W):
                    m = LU[i, k, w] / LU[k, k, w]
                    for j in range(k + 1, n):
                        LU[i, j, w] -= m * LU[k, j, w]
                    x[g, i, w] -= m * x[g, k, w]
        for k in range(n - 1, -1, -1):
            for w in range(W):
                t = x[g, k, w] / LU[k, k, w]
                x[g, k, w] = t
                for i in range(k):
                    x[g, i, w] -= LU[i, k, w] * t


def systems(count: int, n: int = NX, seed: int = 3) -> tuple[NDArray, NDArray]:
    """``count`` well-conditioned n × n systems whose pivots are off the diagonal (as a Newton step's ∂e/∂x
    can be), and right-hand sides."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(count, n, n)) + 2.0 * n * np.eye(n)[rng.permutation(n)]
    return A, rng.normal(size=(count, n))


def _ns_per(call: Callable[[], object], count: int) -> float:
    """ns per item of ``call()``, which handles ``count`` items (speed's timer: fastest of its repeats)."""
    return 1e3 * speed._time_us(lambda reps: [call() for _ in range(reps)]) / count


def lu_speedups(count: int = SYSTEMS) -> dict:
    """ns per system: the engine's scalar LU, and the lanes kernel without / with pivoting per width; checks
    that all solve the systems."""
    A, b = systems(count)
    x = np.empty_like(b)
    LU, piv = np.empty((NX, NX)), np.empty(NX, dtype=np.int64)
    out = {"scalar": _ns_per(lambda: scalar_lu(A, b, x, LU, piv), count)}
    ref = np.linalg.solve(A, b[..., None])[..., 0]
    if not np.allclose(x, ref, rtol=1e-9, atol=1e-12):
        raise AssertionError("the engine's LU does not solve the benchmark's systems")
    for W in WIDTHS:
        Al = np.ascontiguousarray(A.reshape(count // W, W, NX, NX).transpose(0, 2, 3, 1))
        bl = np.ascontiguousarray(b.reshape(count // W, W, NX).transpose(0, 2, 1))
        xl, LUl = np.empty_like(bl), np.empty((NX, NX, W))
        for pivot in (False, True):
            out[(W, pivot)] = _ns_per(lambda: lanes_lu(Al, bl, xl, LUl, pivot), count)  # noqa: B023
            got = xl.transpose(0, 2, 1).reshape(count, NX)
            if not np.allclose(got, ref, rtol=1e-6, atol=1e-9):
                raise AssertionError(f"the lanes LU (W {W}, pivot {pivot}) does not solve the systems")
    return out


def lockstep_loss(n_traj: int = 64) -> dict[int, tuple[float, float]]:
    """Per lane width W: (mean Newton iterations per trajectory-step, mean of each W-group's maximum) over the
    steps of single rollouts of the batch benchmark's first ``n_traj`` trajectories."""
    sim, q0 = batch.make_sim()
    cmds = batch.commands(n_traj)
    its = np.array([sim.compiled.rollout(q0, np.zeros(sim.model.num_dof), c, sim.dt).iterations[:-1]
                    for c in cmds])  # (n_traj, steps)
    return {W: (float(its.mean()), float(its.reshape(n_traj // W, W, -1).max(axis=1).mean())) for W in WIDTHS}


#: profile parts (speed.profile_step's names) a lanes kernel runs branch-free, in lockstep
BRANCH_FREE = ("fk", "plucker", "crba", "rnea", "jacobians", "reduced")


def estimate(us: dict[str, float], lu: dict, loss: dict) -> dict[int, dict]:
    """Per width: the step's µs in lanes (per trajectory) against the scalar step, by parts (module docstring)."""
    vectorized = sum(us[k] for k in BRANCH_FREE)
    newton = us["newton"]
    rest = us["step"] - vectorized - newton  # contact search, contact sets, null space, the step's glue
    out = {}
    for W in WIDTHS:
        s_free, s_piv = lu["scalar"] / lu[(W, False)], lu["scalar"] / lu[(W, True)]
        mean_it, max_it = loss[W]
        newton_lanes = newton * (max_it / mean_it) / s_piv
        lanes = vectorized / s_free + newton_lanes + rest
        bound = (vectorized + rest) / s_free + newton_lanes  # as if the search and the rest vectorized too
        out[W] = {"free": s_free, "pivot": s_piv, "loss": max_it / mean_it, "lanes_us": lanes,
                  "gain": us["step"] / lanes, "bound": us["step"] / bound}
    out["parts"] = {"vectorized": vectorized, "newton": newton, "rest": rest, "step": us["step"]}
    return out


def markdown(lu: dict, loss: dict, est: dict, elapsed: float) -> str:
    info = machine_info()
    p = est["parts"]
    lines = [f"Measured {time.strftime('%Y-%m-%d')} ({elapsed:.0f} s, {info['cpu']}, "
             f"commit {info.get('commit', '?')}).", "",
             f"| LU factor + solve, {NX} × {NX}, {SYSTEMS:,} systems | ns per system | vs the engine's |",
             "| --- | --- | --- |",
             f"| the engine's `lu_factor` + `lu_solve`, one after the other | {lu['scalar']:.0f} | 1× |"]
    for W in WIDTHS:
        for pivot in (False, True):
            what = "partial pivoting per lane (selects)" if pivot else "no pivoting (all lanes one path)"
            lines.append(f"| lanes of {W}, {what} | {lu[(W, pivot)]:.0f} | {lu['scalar'] / lu[(W, pivot)]:.2f}× |")
    lines += ["", "| lane width | Newton iterations per step: mean | group maximum (lockstep) | loss |",
              "| --- | --- | --- | --- |"]
    for W in WIDTHS:
        mean_it, max_it = loss[W]
        lines.append(f"| {W} | {mean_it:.2f} | {max_it:.2f} | {max_it / mean_it:.2f}× |")
    lines += ["", f"Estimate for the whole step (profile, µs): branch-free parts {p['vectorized']:.2f}, Newton loop "
              f"{p['newton']:.2f}, contact search and the rest {p['rest']:.2f}, step {p['step']:.2f}.", "",
              "| lane width | branch-free speed-up | Newton (pivoting ÷ lockstep loss) | step in lanes (µs per "
              "trajectory) | step speed-up | bound: the search and the rest at the branch-free speed-up too |",
              "| --- | --- | --- | --- | --- | --- |"]
    for W in WIDTHS:
        e = est[W]
        lines.append(f"| {W} | {e['free']:.2f}× | {e['pivot']:.2f}× ÷ {e['loss']:.2f} | {e['lanes_us']:.2f} | "
                     f"{e['gain']:.2f}× | {e['bound']:.2f}× |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    print("LU in lanes ...", file=sys.stderr, flush=True)
    lu = lu_speedups()
    print("lockstep loss over the batch's trajectories ...", file=sys.stderr, flush=True)
    loss = lockstep_loss()
    print("the step's profile ...", file=sys.stderr, flush=True)
    est = estimate(speed.profile_step()["us"], lu, loss)
    text = markdown(lu, loss, est, time.perf_counter() - t0)
    print(text)
    update_section(a.out, "simd_lanes", text)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
