#!/usr/bin/env python3
"""Write the obstacle worlds of Pecka, Zimmermann & Svoboda's tracked-robot scenarios (§V-B) as Gazebo SDF.

The paper drives its Absolem robot over a ramp, down a staircase and over a pallet ("1:1 models of the
obstacles traversed by the real robot", Fig. 3) but gives no dimensions; the geometry here is assumed and
stated with each world, from common standards where one exists:

- ``pecka_ramp.sdf``: a 2.0 m × 1.0 m ramp board (0.05 m thick) rising at 15° along +x from x = 0.5 m, then
  a 1.5 m landing at its top height (0.518 m).  The board is a box with a pitch in its ``<pose>``, as Gazebo
  users write ramps.
- ``pecka_staircase.sdf``: four steps down along +x (rise 0.17 m, run 0.29 m: a common building stair,
  30° pitch line) from a 2.0 m landing at 0.68 m to the floor; 1.2 m wide.  The descent starts on the
  landing; "standing on the staircase" places the robot across the steps.
- ``pecka_pallet.sdf``: a EUR pallet (ISO 6780 / EN 13698-1: 1.2 m × 0.8 m × 0.144 m) crossed along its
  0.8 m side from x = 1.0 m: its five top-deck boards (``PALLET_BOARDS``: 145, 100, 145, 100, 145 mm wide,
  41 mm gaps), each a block from the floor to the deck's top (a height query sees the deck; what lies
  under the boards cannot be reached by a track from above).

The flat-ground scenarios (straight drive, rotation in place, circular path, back and forth) use the
plane.  Usage: ``python worlds/pecka_worlds.py`` rewrites the three files next to this script.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

RAMP = {"x0": 0.5, "length": 2.0, "width": 1.0, "thickness": 0.05, "angle_deg": 15.0, "landing": 1.5}
STAIRS = {"rise": 0.17, "run": 0.29, "steps": 4, "width": 1.2, "landing": 2.0}
PALLET_X0 = 1.0  # m: the pallet's near edge
PALLET_HEIGHT = 0.144  # m
PALLET_LENGTH = 1.2  # m, across the direction of travel
PALLET_BOARDS = (0.145, 0.1, 0.145, 0.1, 0.145)  # m: top-deck board widths along the 0.8 m side


def _box(name: str, pose: tuple[float, ...], size: tuple[float, float, float]) -> str:
    p = " ".join(f"{v:.12g}" for v in pose)
    s = " ".join(f"{v:.12g}" for v in size)
    geom = f"<geometry><box><size>{s}</size></box></geometry>"
    return (f'    <model name="{name}">\n      <static>true</static>\n      <pose>{p}</pose>\n'
            f'      <link name="link">\n        <collision name="collision">{geom}</collision>\n'
            f'        <visual name="visual">{geom}</visual>\n      </link>\n    </model>\n')


def _world(name: str, comment: str, models: list[str]) -> str:
    ground = ('    <model name="ground_plane">\n      <static>true</static>\n      <link name="link">\n'
              '        <collision name="collision"><geometry><plane><normal>0 0 1</normal><size>100 100</size>'
              '</plane></geometry></collision>\n      </link>\n    </model>\n')
    return (f'<?xml version="1.0" ?>\n<!-- {comment}\n     Written by worlds/pecka_worlds.py; read by '
            f'wmr_dynamics.terrain.load_sdf_world. -->\n<sdf version="1.6">\n  <world name="{name}">\n'
            f'    <gravity>0 0 -9.81</gravity>\n{ground}{"".join(models)}  </world>\n</sdf>\n')


def ramp_world() -> str:
    r = RAMP
    th = math.radians(r["angle_deg"])
    top = r["length"] * math.sin(th)  # the landing's height (m)
    # the board's top face runs from (x0, 0) up along (cos θ, sin θ); its centre lies half a thickness
    # below the top face's centre, along the face normal (−sin θ, 0, cos θ); pitch −θ raises +x
    cx = r["x0"] + 0.5 * r["length"] * math.cos(th) + 0.5 * r["thickness"] * math.sin(th)
    cz = 0.5 * r["length"] * math.sin(th) - 0.5 * r["thickness"] * math.cos(th)
    x_land = r["x0"] + r["length"] * math.cos(th)
    models = [_box("ramp_board", (cx, 0.0, cz, 0.0, -th, 0.0), (r["length"], r["width"], r["thickness"])),
              _box("ramp_landing", (x_land + 0.5 * r["landing"], 0.0, 0.5 * top, 0.0, 0.0, 0.0),
                   (r["landing"], r["width"], top))]
    return _world("pecka_ramp", f"Pecka et al. scenario 'ramp': a {r['angle_deg']:g} deg board from x = {r['x0']:g} m "
                  f"up to a landing at z = {top:.3f} m (assumed geometry: worlds/pecka_worlds.py)", models)


def staircase_world() -> str:
    s = STAIRS
    n, rise, run = s["steps"], s["rise"], s["run"]
    models = [_box("landing", (-0.5 * s["landing"], 0.0, 0.5 * n * rise, 0, 0, 0),
                   (s["landing"], s["width"], n * rise))]
    for k in range(1, n):  # step k: top (n − k)·rise over x ∈ [(k − 1)·run, k·run]
        h = (n - k) * rise
        models.append(_box(f"step_{k}", ((k - 0.5) * run, 0.0, 0.5 * h, 0, 0, 0), (run, s["width"], h)))
    return _world("pecka_staircase", f"Pecka et al. scenarios 'staircase' and 'stand on staircase': {n} steps down "
                  f"along +x, rise {rise:g} m, run {run:g} m, from a landing at z = {n * rise:.2f} m for x < 0 "
                  "(assumed geometry: worlds/pecka_worlds.py)", models)


def pallet_world() -> str:
    gap = (0.8 - sum(PALLET_BOARDS)) / (len(PALLET_BOARDS) - 1)
    models, x = [], PALLET_X0
    for i, w in enumerate(PALLET_BOARDS):
        models.append(_box(f"pallet_board_{i}", (x + 0.5 * w, 0.0, 0.5 * PALLET_HEIGHT, 0, 0, 0),
                           (w, PALLET_LENGTH, PALLET_HEIGHT)))
        x += w + gap
    return _world("pecka_pallet", f"Pecka et al. scenario 'pallet': a EUR pallet (1.2 x 0.8 x 0.144 m) from "
                  f"x = {PALLET_X0:g} m, its top boards across the direction of travel with {gap * 1000:.1f} mm gaps "
                  "(assumed geometry: worlds/pecka_worlds.py)", models)


WORLDS = {"pecka_ramp.sdf": ramp_world, "pecka_staircase.sdf": staircase_world, "pecka_pallet.sdf": pallet_world}


def main() -> int:
    for name, make in WORLDS.items():
        (HERE / name).write_text(make())
        print(HERE / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
