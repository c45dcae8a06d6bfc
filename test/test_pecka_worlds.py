"""The Pecka et al. scenario worlds (worlds/pecka_worlds.py): the SDF files load with the real SDF loader and
their heights are the geometry the generator states (closed forms from its parameters)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from wmr_dynamics.terrain import load_sdf_world

WORLDS = Path(__file__).resolve().parent.parent / "worlds"
_spec = importlib.util.spec_from_file_location("pecka_worlds", WORLDS / "pecka_worlds.py")
pw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pw)


def height(terrain, x: float, y: float = 0.0) -> float:
    return float(np.asarray(terrain.height(np.array([x]), np.array([y])))[0])


@pytest.mark.parametrize("name", list(pw.WORLDS))
def test_committed_worlds_are_what_the_generator_writes(name: str) -> None:
    assert (WORLDS / name).read_text() == pw.WORLDS[name](), f"{name} is stale: run python worlds/pecka_worlds.py"


def test_staircase_heights_step_down_by_the_rise() -> None:
    t = load_sdf_world(WORLDS / "pecka_staircase.sdf")
    s = pw.STAIRS
    n, rise, run = s["steps"], s["rise"], s["run"]
    assert height(t, -0.5) == pytest.approx(n * rise, abs=1e-9)  # the landing
    for k in range(1, n):
        assert height(t, (k - 0.5) * run) == pytest.approx((n - k) * rise, abs=1e-9), f"step {k}"
        assert height(t, (k - 0.5) * run, 0.49 * s["width"]) == pytest.approx((n - k) * rise, abs=1e-9)
    assert height(t, (n - 0.5) * run) == pytest.approx(0.0, abs=1e-9)  # the floor after the last step
    assert height(t, 1.0, 0.51 * s["width"] + 0.05) == pytest.approx(0.0, abs=1e-9)  # beside the stairs
    # the pitch line of the steps: rise / run
    assert math.degrees(math.atan2(rise, run)) == pytest.approx(30.4, abs=0.1)


def test_pallet_deck_boards_and_gaps() -> None:
    t = load_sdf_world(WORLDS / "pecka_pallet.sdf")
    gap = (0.8 - sum(pw.PALLET_BOARDS)) / (len(pw.PALLET_BOARDS) - 1)
    assert gap == pytest.approx(0.04125)
    x = pw.PALLET_X0
    for w in pw.PALLET_BOARDS:
        assert height(t, x + 0.5 * w) == pytest.approx(pw.PALLET_HEIGHT, abs=1e-9)
        assert height(t, x + w + 0.5 * gap) == pytest.approx(0.0, abs=1e-9)  # a gap (after the last: the floor)
        x += w + gap
    assert x - gap == pytest.approx(pw.PALLET_X0 + 0.8)  # the deck spans the pallet's 0.8 m
    assert height(t, pw.PALLET_X0 - 0.01) == pytest.approx(0.0, abs=1e-9)
    assert height(t, pw.PALLET_X0 + 0.5 * pw.PALLET_BOARDS[0], 0.59) == pytest.approx(pw.PALLET_HEIGHT, abs=1e-9)
    assert height(t, pw.PALLET_X0 + 0.5 * pw.PALLET_BOARDS[0], 0.61) == pytest.approx(0.0, abs=1e-9)


def test_ramp_rises_at_its_angle_to_the_landing() -> None:
    t = load_sdf_world(WORLDS / "pecka_ramp.sdf")  # the board is a box pitched in its <pose>
    r = pw.RAMP
    th = math.radians(r["angle_deg"])
    x_top = r["x0"] + r["length"] * math.cos(th)
    assert height(t, r["x0"] - 0.2) == pytest.approx(0.0, abs=1e-9)
    for f in (0.1, 0.5, 0.9):  # on the board: the plane through (x0, 0) rising at θ
        x = r["x0"] + f * (x_top - r["x0"])
        assert height(t, x) == pytest.approx((x - r["x0"]) * math.tan(th), abs=1e-9)
        assert height(t, x, 0.45 * r["width"]) == pytest.approx((x - r["x0"]) * math.tan(th), abs=1e-9)
        n = np.asarray(t.normal(np.array([x]), np.array([0.0]))).reshape(-1)[:3]
        np.testing.assert_allclose(n, [-math.sin(th), 0.0, math.cos(th)], atol=1e-9)
    assert height(t, x_top + 0.5 * r["landing"]) == pytest.approx(r["length"] * math.sin(th), abs=1e-9)
    assert height(t, x_top + r["landing"] + 0.1) == pytest.approx(0.0, abs=1e-9)
