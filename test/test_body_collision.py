"""Non-wheel collision geometry against the terrain (issue 10): a chassis that passes through an obstacle
only wheels can touch is reported, with its depth, link and time."""

from __future__ import annotations

import numpy as np
import pytest

from wmr_dynamics import load_model
from wmr_dynamics.body_collision import body_points
from wmr_dynamics.cli import sim_main
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Box, Composite, Plane

BODY_BOX = ('<collision><origin xyz="0 0 0.414" rpy="0 0 0"/><geometry><box size="2.1336 1.6383 0.828"/>'
            "</geometry></collision>")


@pytest.fixture(scope="module")
def boxed(tmp_path_factory):
    """The LandTamer with its body box as a <collision> (the bundled URDF has wheel collisions only)."""
    import shutil
    from pathlib import Path

    import wmr_dynamics

    root = Path(wmr_dynamics.__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("boxed")
    text = (root / "urdf" / "landtamer.urdf").read_text()
    marker = '<geometry><box size="2.1336 1.6383 0.828"/></geometry>\n    </visual>'
    assert marker in text
    (out / "urdf").mkdir()
    (out / "urdf" / "landtamer.urdf").write_text(text.replace(marker, marker + "\n    " + BODY_BOX))
    (out / "config").mkdir()
    shutil.copy(root / "config" / "landtamer.yaml", out / "config" / "landtamer.yaml")
    return out / "urdf" / "landtamer.urdf"


def test_the_body_box_is_sampled_in_the_body_frame(boxed):
    model = load_model(boxed)
    bp = body_points(model)
    assert set(bp.link) == {"body"} and np.all(bp.frame == 0)
    lo, hi = bp.points.min(0), bp.points.max(0)
    np.testing.assert_allclose(lo, [-1.0668, -0.81915, 0.0], atol=1e-9)
    np.testing.assert_allclose(hi, [1.0668, 0.81915, 0.828], atol=1e-9)
    assert body_points(load_model("landtamer")) is None  # wheels only: nothing to check


def test_a_chassis_passing_through_an_obstacle_between_the_wheels_is_reported(boxed, tmp_path, capsys):
    """A 0.6 m block between the tracks: the wheels roll past it, the body's underside (at the axle height,
    0.4191 m) goes 0.6 − 0.4191 m into it."""
    model = load_model(boxed)
    ground = Composite([Plane(), Box(center=(3.0, 0.0), size=(1.0, 0.6), height=0.6)])
    res = Simulator(model, ground, dt=0.04).run(6.0, (1.0, 0.0))
    s = res.summary()
    assert s["max_body_penetration_m"] == pytest.approx(0.6 - 0.4191, abs=0.01)
    # the body spans x ± 1.0668 m: it is over the block (x in [2.5, 3.5]) from t = 1.43 s to 4.57 s
    assert s["body_penetration_link"] == "body" and 1.43 <= s["body_penetration_t_s"] <= 4.57
    clear = Simulator(model, Plane(), dt=0.04).run(2.0, (1.0, 0.0)).summary()
    assert clear["max_body_penetration_m"] == pytest.approx(0.0, abs=1e-6)
    # wmr-sim says so in its summary: the same block as an SDF world
    world = tmp_path / "block.sdf"
    world.write_text('<?xml version="1.0" ?><sdf version="1.6"><world name="w"><model name="ground"><static>true'
                     '</static><link name="l"><collision name="c"><geometry><plane><normal>0 0 1</normal><size>100 100'
                     '</size></plane></geometry></collision></link></model><model name="block"><static>true</static>'
                     '<pose>3.0 0 0.3 0 0 0</pose><link name="l"><collision name="c"><geometry><box><size>1.0 0.6 0.6'
                     '</size></box></geometry></collision></link></model></world></sdf>')
    assert sim_main(["--vehicle", str(boxed), "--terrain", str(world), "--speed", "1", "--duration", "6",
                     "--no-plots", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "WARNING: the link 'body' is 0.18" in out and "inside the terrain" in out
    assert sim_main(["--vehicle", str(boxed), "--terrain", "flat", "--speed", "1", "--duration", "1", "--no-plots",
                     "--out", str(tmp_path)]) == 0
    assert "inside the terrain" not in capsys.readouterr().out
