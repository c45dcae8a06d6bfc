#!/usr/bin/env python3
"""µs per step of the compiled engine on the SDF obstacle world (``worlds/obstacles.sdf``: a plane and two
boxes), the measurement behind docs/terrain.md's table (exact Box/Composite kinds in the step vs the 2 cm
raster they replaced).  Rocky 7 across the 10 cm box (left wheels on it) and Zoë across both boxes, in the
kinematic, dynamic and enhanced modes, and both vehicles beside the boxes (y = 4 m: the terrain query's cost
alone); Δt 0.04 s, fastest of ``--reps`` runs.  Prints one JSON line; compare revisions by running it
interleaved (``PYTHONPATH=<other checkout>``), fastest of several rounds: this machine's load scatters single
runs by tens of percent.

Usage::

    python benchmarks/obstacle_world_speed.py [--reps 5]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import wmr_dynamics as wmr
from wmr_dynamics.kinematics.enhanced import SlipParams
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import load_terrain

WORLD = Path(__file__).resolve().parents[1] / "worlds" / "obstacles.sdf"
SLIP = SlipParams(p=(-0.1, -0.05, -0.1, -0.05, 0.01, -0.05))
# (label, vehicle, start (x, y), duration s, modes)
CASES = (("rocky7 across the 10 cm box", "rocky7", (0.0, 0.3), 10.0, ("kinematic", "dynamic", "enhanced")),
         ("zoe across both boxes", "zoe", (0.0, -0.5), 16.0, ("kinematic", "dynamic", "enhanced")),
         ("rocky7 beside the boxes", "rocky7", (0.0, 4.0), 8.0, ("kinematic", "dynamic")),
         ("zoe beside the boxes", "zoe", (0.0, 4.0), 8.0, ("kinematic", "dynamic")))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5, help="runs per case; the fastest counts")
    args = p.parse_args()
    world = load_terrain(str(WORLD))
    out = {}
    for label, vehicle, (x, y), duration, modes in CASES:
        model = wmr.load_model(vehicle)
        for mode in modes:
            sim = Simulator(model, world, mode=mode, dt=0.04, slip=SLIP if mode == "enhanced" else None)
            q0 = sim.initial_state(xyz=(x, y, 0.0), yaw=0.0)
            runs = [sim.run(duration, (0.5, 0.0), q0=q0, progress=False) for _ in range(args.reps)]
            steps = runs[0].q.shape[0] - 1
            out[f"{label}, {mode}"] = round(min(r.wall_time_s for r in runs) / steps * 1e6, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
