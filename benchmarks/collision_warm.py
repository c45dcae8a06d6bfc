#!/usr/bin/env python3
"""The collision search's warm start (issue 14 item 1) against the full search, on the thesis's rough terrains.

Zoë (the benchmark set-up of ``speed.py``: linear contact, Δt 0.04 s, 0.5 m/s straight for 10 s) on
``zoe_rough_1..10``.  Every state of each run is searched twice with the compiled kernel: warm-started from
the previous state's contact angles (as the steps do) and from none (the full search).  Reported per terrain:
how often both found the same minimum (angles within 1e-6 rad), the largest Δz and contact-angle differences,
each search's gap to the global minimum of a dense search (20,001 rim points over ±90° of the lowest one, the
terrain's own query; mean and largest), how often the warm start fell back to the full search (counted in
plain Python, NUMBA_DISABLE_JIT=1: the same kernels with the full search wrapped by a counter), and µs per
wheel of both searches over the run's states in order (a compiled loop, fastest of the repetitions).

Writes the section ``collision_warm`` of docs/benchmarks.md.  Usage::

    python benchmarks/collision_warm.py            # ~2 min
    python benchmarks/collision_warm.py --out x.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import machine_info, update_section  # noqa: E402

from wmr_dynamics.compiled.collision import wheel_contacts_kernel  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DT = 0.04

_COUNT = r"""
import json, sys
import numpy as np
import wmr_dynamics.compiled.collision as C
from wmr_dynamics.compiled.terrain import compile_terrain
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.scenarios import zoe_rough as zoe

full = [0]
search = C._search
def counted(*args):
    full[0] += 1
    return search(*args)
C._search = counted
model = zoe.zoe_model()
md = C._model_data(model)
nw = model.num_wheels
out = {}
for k, path in json.loads(sys.stdin.read()).items():
    Q = np.load(path)
    td = compile_terrain(zoe.load_terrain(int(k)))
    points, frames, dz, lateral = np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty(nw), np.empty(nw)
    angle = np.full(nw, np.nan)
    T = np.ascontiguousarray(forward_kinematics(model, Q[0]))
    C.wheel_contacts_kernel(md, td, T, C.N_SAMPLES, points, frames, dz, angle, lateral)
    full[0] = 0
    for q in Q[1:]:
        T = np.ascontiguousarray(forward_kinematics(model, q))
        C.wheel_contacts_kernel(md, td, T, C.N_SAMPLES, points, frames, dz, angle, lateral)
    out[k] = full[0]
print(json.dumps(out))
"""


@njit  # not cached: the kernel it calls comes from the package's cache
def _sweep(md, td, Ts, n_samples, points, frames, dz, angle, lateral, warm):  # noqa: ANN001, ANN201
    """The search at every state in order: warm-started from the previous state's angles, or from none."""
    angle[:] = np.nan
    for k in range(Ts.shape[0]):
        if not warm:
            angle[:] = np.nan
        wheel_contacts_kernel(md, td, Ts[k], n_samples, points, frames, dz, angle, lateral)
    return dz[0]


def dense_minimum(model, terrain, T, w: int, n: int = 20001) -> float:  # noqa: ANN001
    """The smallest Δz (eq. 2.8) over n points of wheel w's rim (eq. 2.9) within ±90° of its lowest one."""
    F = T[model.wheel_frame[w]]
    d = np.arctan2(F[2, 0], F[2, 2]) + np.linspace(-np.pi / 2, np.pi / 2, n)
    r = F[:3, 3] - model.wheel_circle[w] * (np.sin(d)[:, None] * F[:3, 0] + np.cos(d)[:, None] * F[:3, 2])
    h, nrm = terrain.height_normal(r[:, 0], r[:, 1])
    return float(((r[:, 2] - h) * np.asarray(nrm).reshape(-1, 3)[:, 2]).min())


def measure(terrains: Sequence[int], reps: int, quiet: bool) -> list[dict]:
    from wmr_dynamics.compiled.collision import N_SAMPLES
    from wmr_dynamics.compiled.data import model_data
    from wmr_dynamics.kinematics import forward_kinematics
    from wmr_dynamics.scenarios import zoe_rough as zr

    model = zr.zoe_model()
    md = model_data(model)
    nw = model.num_wheels
    rows, paths = [], {}
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"collision_warm_{os.getpid()}"
    tmp.mkdir(exist_ok=True)
    for k in terrains:
        terrain = zr.load_terrain(k)
        sim = zr.make_simulator(model, terrain, "linear", DT, zr.dynamics_options(model, "linear"))
        Q = sim.run(zr.DURATION, (zr.SPEED, 0.0), q0=zr.initial_state(model, terrain), progress=False).q
        td = sim.compiled.td
        Ts = np.ascontiguousarray([forward_kinematics(model, q) for q in Q])
        out = [np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty(nw), np.full(nw, np.nan), np.empty(nw)]
        cold = [np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty(nw), np.full(nw, np.nan), np.empty(nw)]
        ddz = dang = 0.0
        same = 0
        gaps = {True: [], False: []}
        for T in Ts:
            wheel_contacts_kernel(md, td, T, N_SAMPLES, *out)
            cold[3][:] = np.nan
            wheel_contacts_kernel(md, td, T, N_SAMPLES, *cold)
            ddz = max(ddz, float(np.abs(out[2] - cold[2]).max()))
            dang = max(dang, float(np.abs(out[3] - cold[3]).max()))
            same += int(np.count_nonzero(np.abs(out[3] - cold[3]) < 1e-6))
            for w in range(nw):
                low = dense_minimum(model, terrain, T, w)
                gaps[True].append(out[2][w] - low)
                gaps[False].append(cold[2][w] - low)
        us = {}
        for warm in (True, False):
            best = np.inf
            for _ in range(reps):
                t0 = time.perf_counter()
                _sweep(md, td, Ts, N_SAMPLES, *out, warm)
                best = min(best, time.perf_counter() - t0)
            us[warm] = best / (len(Ts) * nw) * 1e6
        np.save(tmp / f"{k}.npy", Q)
        paths[str(k)] = str(tmp / f"{k}.npy")
        rows.append({"terrain": k, "wheels": len(Ts) * nw, "ddz": ddz, "dangle": dang, "same": same,
                     "gap_warm": (float(np.mean(gaps[True])), float(np.max(gaps[True]))),
                     "gap_full": (float(np.mean(gaps[False])), float(np.max(gaps[False]))),
                     "us_warm": us[True], "us_full": us[False]})
        if not quiet:
            print(rows[-1], flush=True)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    counts = json.loads(subprocess.run([sys.executable, "-c", _COUNT], input=json.dumps(paths), env=env,
                                       capture_output=True, text=True, check=True, cwd=ROOT).stdout.splitlines()[-1])
    for r in rows:
        r["fallbacks"] = counts[str(r["terrain"])]
        r["warm_wheels"] = r["wheels"] - nw  # the first state has no previous angle
    for p in paths.values():
        Path(p).unlink()
    tmp.rmdir()
    return rows


def markdown(rows: list[dict], reps: int, elapsed: float, load: tuple[float, float]) -> str:
    m = machine_info()
    lines = [f"Zoë, linear contact, Δt {DT} s, 0.5 m/s straight for 10 s; every state of the run searched warm-started "
             f"(as the steps do) and without a previous angle (the full search); gaps to a dense search's minimum "
             f"(20,001 rim points); fastest of {reps} sweeps "
             f"({elapsed:.0f} s, {m['cpu'].split()[0]} {m['cpu'].split()[1] if len(m['cpu'].split()) > 1 else ''}, "
             f"load {load[0]:.2f} → {load[1]:.2f}, commit {m.get('commit', '?')}).", "",
             "| terrain | wheel searches | same minimum (angles within 1e-6 rad) | max abs. Δz / angle difference "
             "(m / rad) | gap to the dense minimum, warm start: mean / max (m) | full search: mean / max (m) | "
             "warm starts that fell back to the full search | µs per wheel: warm-started / full search |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['terrain']} | {r['wheels']} | {100 * r['same'] / r['wheels']:.1f} % | {r['ddz']:.1e} / "
                     f"{r['dangle']:.1e} | {r['gap_warm'][0]:.1e} / {r['gap_warm'][1]:.1e} | {r['gap_full'][0]:.1e} / "
                     f"{r['gap_full'][1]:.1e} | {r['fallbacks']} of {r['warm_wheels']} "
                     f"({100 * r['fallbacks'] / r['warm_wheels']:.1f} %) | {r['us_warm']:.2f} / {r['us_full']:.2f} |")
    fb = sum(r["fallbacks"] for r in rows)
    ww = sum(r["warm_wheels"] for r in rows)
    uw = float(np.mean([r["us_warm"] for r in rows]))
    uf = float(np.mean([r["us_full"] for r in rows]))
    n = sum(r["wheels"] for r in rows)
    gw = (sum(r["gap_warm"][0] * r["wheels"] for r in rows) / n, max(r["gap_warm"][1] for r in rows))
    gf = (sum(r["gap_full"][0] * r["wheels"] for r in rows) / n, max(r["gap_full"][1] for r in rows))
    lines.append(f"| **all** | {n} | {100 * sum(r['same'] for r in rows) / n:.1f} % | "
                 f"{max(r['ddz'] for r in rows):.1e} / {max(r['dangle'] for r in rows):.1e} | {gw[0]:.1e} / "
                 f"{gw[1]:.1e} | {gf[0]:.1e} / {gf[1]:.1e} | {fb} of {ww} ({100 * fb / ww:.1f} %) | "
                 f"{uw:.2f} / {uf:.2f} ({uf / uw:.2f}×) |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--terrains", type=int, nargs="+", default=list(range(1, 11)))
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    rows = measure(a.terrains, a.reps, a.quiet)
    md = markdown(rows, a.reps, time.perf_counter() - t0, (load0, os.getloadavg()[0]))
    print(md)
    update_section(a.out, "collision_warm", md)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
