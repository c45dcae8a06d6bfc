"""A vehicle on a Gazebo-style ramp — a box tilted by its SDF <pose> (``worlds/ramp.sdf``, an OrientedBox) — in
the compiled step, against closed forms and against the same vehicle on the plane of the ramp's top."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics import spatial
from wmr_dynamics.compiled.data import TERRAIN_COMPOSITE
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import OrientedBox, Plane, load_terrain

RAMP = Path(__file__).resolve().parents[1] / "worlds" / "ramp.sdf"
THETA = math.radians(10.0)  # the ramp's slope; its top is z = (x − 2) tan θ for 2 <= x <= 7.909 m, |y| <= 1.5 m
TOP = Plane(normal=(-math.sin(THETA), 0.0, math.cos(THETA)), point=(2.0, 0.0, 0.0))


@pytest.fixture(scope="module")
def zoe():
    return wmr.load_model("zoe")


@pytest.fixture(scope="module")
def ramp():
    t = load_terrain(RAMP)
    assert any(isinstance(m, OrientedBox) for m in t.surfaces)
    return t


def test_the_world_file_is_the_documented_ramp(ramp):
    x = np.linspace(2.01, 7.89, 50)
    for y in (-1.4, 0.0, 1.4):
        h, n = ramp.height_normal(x, np.full_like(x, y))
        np.testing.assert_allclose(h, (x - 2.0) * math.tan(THETA), atol=1e-9)  # (the file's 13 digits)
        np.testing.assert_allclose(n, np.tile(TOP.unit_normal, (x.size, 1)), atol=1e-12)
    assert ramp.height(1.9, 0.0) == 0.0 and ramp.height(4.0, 1.6) == 0.0  # the ground before and beside it


def test_zoe_drives_up_the_ramp_to_the_right_height(zoe, ramp):
    """Kinematic Zoë from flat ground up the ramp: once all four wheels are on it, the body is parallel to the top
    (pitch −θ) at the perpendicular height it has on flat ground, i.e. z = (x − 2) tan θ + z_flat / cos θ."""
    sim = Simulator(zoe, ramp, dt=0.04)
    assert sim.compiled.td.kind == TERRAIN_COMPOSITE  # the exact kind in the step, not a raster
    res = sim.run(14.0, (0.5, 0.0), q0=sim.initial_state(xyz=(-1.0, 0.0, 0.0), yaw=0.0), progress=False)
    z_flat = res.q[0, 6]  # on the ground plane at the start
    x, z = res.q[-1, 4], res.q[-1, 6]
    assert 2.5 < x - 0.955 and x + 0.955 < 7.7  # both axles on the ramp (2 <= x <= 7.9)
    assert z == pytest.approx((x - 2.0) * math.tan(THETA) + z_flat / math.cos(THETA), abs=2e-3)
    roll, pitch, _ = spatial.quat_to_rpy(res.q[-1, :4])
    assert pitch == pytest.approx(-THETA, abs=2e-3) and abs(roll) < 1e-6
    assert np.all(np.abs(res.dz[-1]) < 2e-3)  # the wheels on the ramp's surface


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_on_the_ramp_top_the_run_is_the_plane_run(zoe, ramp, mode):
    """Where the wheels stay on the ramp's top face, the world is the plane of that face: the runs agree (to
    rounding: the box's height is c_z + t_hi of its slab, the plane's (d − n·r)/n_z)."""
    runs = []
    for t in (ramp, TOP):
        sim = Simulator(zoe, t, mode=mode, dt=0.04)
        runs.append(sim.run(3.0, (0.5, 0.0), q0=sim.initial_state(xyz=(3.5, 0.0, 0.0), yaw=0.0), progress=False))
    assert runs[0].q[-1, 4] - runs[0].q[0, 4] > 1.0
    np.testing.assert_allclose(runs[0].q, runs[1].q, atol=1e-8)
