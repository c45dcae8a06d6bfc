#!/usr/bin/env python3
"""Speed of the dynamic model for every thesis vehicle (issue 5 item 4): Rocky 7, LandTamer, RecBot, Crusher, Zoë.

Each bundled vehicle with its YAML defaults (contact model, actuators, controller type), dynamic mode,
Δt = 0.04 s, commanded straight at 0.5 m/s for 10 s from its YAML's initial pose (contact-initialized,
at rest) on one Gaussian rough terrain (RMS 0.03 m, correlation length 0.5 m, seeded).  Default engine
(``engine="auto"``: the whole run in one compiled call), single thread, fastest of several repetitions; the
step-by-step loop (``engine="python"``: single compiled steps called from Python, the path of a custom
controller) once for its overhead and the agreement of the final positions.  Reported: real-time factor,
µs per step, force-balance iterations per step.

Writes the section ``vehicles`` of docs/benchmarks.md and refreshes its ``summary``.

Usage::

    python benchmarks/vehicles_speed.py           # ~1 min; writes docs/benchmarks.md
    python benchmarks/vehicles_speed.py --quick   # 2 s runs, no Python path; writes out/vehicles_quick/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import speed  # noqa: E402
import zoe_rough as zr  # noqa: E402
from _report import figures_table, update_section  # noqa: E402

import wmr_dynamics as wmr  # noqa: E402
from wmr_dynamics.dynamics.force_balance import DynamicsOptions  # noqa: E402
from wmr_dynamics.simulate import Simulator  # noqa: E402
from wmr_dynamics.terrain import gaussian_rough_terrain  # noqa: E402

VEHICLES = ("rocky7", "landtamer", "recbot", "crusher", "zoe")
DT = 0.04  # s
DURATION = 10.0  # s
SPEED = 0.5  # m/s
RMS, CORR_LEN = 0.03, 0.5  # m
BOUNDS = (-8.0, 16.0, -8.0, 8.0)  # m: room for Crusher's length and 5 m of travel
SEED = 1


def _actuator_name(opts: DynamicsOptions) -> str:
    a = opts.actuator
    return "ideal" if a is None else type(a).__name__.replace("Actuator", "")


def run_vehicle(name: str, terrain, repeat: int, python: bool, duration: float) -> dict:  # noqa: ANN001
    model = wmr.load_model(name)
    opts = DynamicsOptions.from_config(model)
    sim = Simulator(model, terrain, mode="dynamic", dt=DT, dynamics=opts)
    q0 = sim.initial_state()
    res = sim.run(duration, (SPEED, 0.0), q0=q0, progress=False)
    wall = min([res.wall_time_s] + [sim.run(duration, (SPEED, 0.0), q0=q0, progress=False).wall_time_s
                                    for _ in range(repeat - 1)])
    out = {"name": name, "dof": model.num_dof, "wheels": model.num_wheels, "mass": model.total_mass,
           "contact": type(opts.contact).__name__.replace("Contact", ""), "actuator": _actuator_name(opts),
           "controller": sim.controller.kind, "engine": sim.engine_used,
           "steps": res.steps, "wall": wall, "iters": float(res.iterations[:-1].mean()),
           "unconverged": int(np.count_nonzero(~res.converged[:-1])), "final": res.q[-1, 4:7].copy(),
           "py_wall": float("nan"), "py_diff": float("nan")}
    if python:
        py = Simulator(model, terrain, mode="dynamic", dt=DT, dynamics=DynamicsOptions.from_config(model),
                       engine="python")
        pr = py.run(duration, (SPEED, 0.0), q0=q0, progress=False)
        out["py_wall"] = pr.wall_time_s
        out["py_diff"] = float(np.linalg.norm(pr.q[-1, 4:7] - res.q[-1, 4:7]))
    return out


def markdown(rows: list[dict], duration: float, repeat: int, load: Sequence[float], elapsed: float) -> str:
    head = ["vehicle", "DOF / wheels", "mass (kg)", "contact / actuators / controller", "engine", "×RT", "µs/step",
            "iter/step", "unconv. steps", "step loop ×RT", "one call / step loop", "Δ final pos. (m)"]
    body = []
    for r in rows:
        rtf = duration / r["wall"]
        py = duration / r["py_wall"] if np.isfinite(r["py_wall"]) else float("nan")
        body.append([r["name"], f"{r['dof']} / {r['wheels']}", f"{r['mass']:,.0f}",
                     f"{r['contact']} / {r['actuator']} / {r['controller']}", r["engine"], f"{rtf:,.0f}",
                     f"{1e6 * r['wall'] / r['steps']:.1f}", f"{r['iters']:.2f}", str(r["unconverged"]),
                     speed._num(py, ".1f"), f"{py and rtf / py:.0f}×" if np.isfinite(py) else "–",
                     speed._num(r["py_diff"], ".1e")])
    settings = [("terrain", f"`gaussian_rough_terrain`: RMS {RMS} m, correlation length {CORR_LEN} m, seed {SEED}"),
                ("run", f"straight at {SPEED} m/s for {duration:g} s, Δt = {DT} s; fastest of {repeat}"),
                ("machine; wall time in all; load",
                 f"{speed.machine_line()}; {elapsed:.0f} s; {speed.load_note(load)}")]
    return "\n".join([figures_table(settings, ("setting", "value")), "", zr._render(head, body, True), "",
                      speed._data("vehicles", {r["name"]: {"rtf": round(duration / r["wall"], 1), "engine": r["engine"]}
                                               for r in rows})])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2 s runs, 1 repetition, no Python path (smoke run)")
    p.add_argument("--vehicles", nargs="+", default=list(VEHICLES), choices=VEHICLES)
    p.add_argument("--repeat", type=int, default=None, help="repetitions (default 7; quick 1)")
    p.add_argument("--out", type=Path, default=None,
                   help="markdown file to update (default docs/benchmarks.md; --quick: out/vehicles_quick/...)")
    a = p.parse_args(argv)
    repeat = a.repeat or (1 if a.quick else 7)
    duration = 2.0 if a.quick else DURATION
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    terrain = gaussian_rough_terrain(rms=RMS, corr_len=CORR_LEN, bounds=BOUNDS, seed=SEED)
    rows = []
    for name in a.vehicles:
        r = run_vehicle(name, terrain, repeat, not a.quick, duration)
        rows.append(r)
        print(f"{name:10s} {r['engine']:8s} {duration / r['wall']:9,.0f}x  {1e6 * r['wall'] / r['steps']:7.1f} us/step "
              f"{r['iters']:.2f} it/step  python {duration / r['py_wall']:.1f}x  diff {r['py_diff']:.1e} m  "
              f"final {np.round(r['final'], 3).tolist()}", flush=True)
    md = markdown(rows, duration, repeat, (load0, os.getloadavg()[0]), time.perf_counter() - t0)
    doc = a.out or (zr.ROOT / "out" / "vehicles_quick" / "benchmarks.md" if a.quick else speed.DOC)
    speed.prepare_doc(doc)
    update_section(doc, "vehicles", md)
    speed.write_summary(doc)
    print(f"wrote {doc} (sections vehicles, summary)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
