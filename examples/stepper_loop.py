#!/usr/bin/env python3
"""Stepping a simulation call by call, as a real-time loop or a ROS node does (``wmr_dynamics.stepper``).

Zoë, dynamic model, Δt = 0.01 s, on a rough terrain: every 0.1 s of simulated time the "outside" sets a new
command — here a slow weave of the yaw rate — and the stepper advances 10 steps; halfway the terrain is
replaced by a rougher one (as a new map message would) without recompiling, and at the end the simulation
is reset to its start pose and replayed, which reproduces the first run exactly.  Prints one line per
simulated second and the cost per call.

Run: ``.venv/bin/python examples/stepper_loop.py``
"""

from __future__ import annotations

import math
import time

import numpy as np

import wmr_dynamics as wmr
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import gaussian_rough_terrain

DT, BLOCK, SECONDS = 0.01, 10, 6.0


def drive(stepper: Stepper, data, swap_at: float | None = None, rougher=None) -> np.ndarray:  # noqa: ANN001
    """Advance ``SECONDS`` of simulation in blocks of ``BLOCK`` steps; returns the poses after each block."""
    poses = []
    calls, start = 0, time.perf_counter()
    while data.t < SECONDS - 1e-9:
        if swap_at is not None and abs(data.t - swap_at) < 1e-9:
            stepper.set_terrain(rougher)
            print(f"  t = {data.t:4.1f} s: new terrain (RMS 6 cm)")
        omega = 0.4 * math.sin(0.8 * data.t)  # the command of this block, set from outside
        stepper.advance(data, BLOCK, command=(0.6, omega))
        calls += 1
        poses.append(data.pose())
        if abs(data.t - round(data.t)) < 1e-9:
            x, y, z, roll, pitch, yaw = data.pose()
            print(f"  t = {data.t:4.1f} s  x {x:+.3f}  y {y:+.3f}  z {z:+.3f} m  yaw {yaw:+.3f} rad  "
                  f"normal forces {data.contact_force[:, 2].round(0).tolist()} N")
    wall = time.perf_counter() - start
    print(f"  {calls} calls of {BLOCK} steps: {1e6 * wall / calls:.0f} µs per call, "
          f"{SECONDS / wall:,.0f}× real time")
    return np.array(poses)


def main() -> None:
    model = wmr.load_model("zoe")
    ground = gaussian_rough_terrain(rms=0.03, corr_len=0.5, bounds=(-3, 8, -6, 6), seed=2)
    rougher = gaussian_rough_terrain(rms=0.06, corr_len=0.5, bounds=(-3, 8, -6, 6), seed=3)
    stepper = Stepper(model, ground, mode="dynamic", dt=DT)
    data = stepper.make_data()
    q0 = data.q.copy()
    print("first run:")
    first = drive(stepper, data, swap_at=3.0, rougher=rougher)
    stepper.set_terrain(ground)
    stepper.reset(data, q0)
    print("replay after reset():")
    again = drive(stepper, data, swap_at=3.0, rougher=rougher)
    print(f"largest difference between the runs: {np.abs(again - first).max():.1e}")


if __name__ == "__main__":
    main()
