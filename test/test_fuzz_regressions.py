"""Regression tests for what the fuzz suite (test/test_fuzz.py) found; each failure it finds becomes one here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.errors import SimulationError, UrdfError, VehicleConfigError
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Plane

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("line, error, message", [
    ("urdf: ;", UrdfError, "urdf: ';' ({d}/;) is not a file"),
    ("urdf: /", UrdfError, "urdf: '/' (/) is not a file"),
    ("urdf: [1, 2]", VehicleConfigError, "urdf: expected the path of the URDF (relative to this file), got [1, 2]"),
])
def test_a_vehicle_yaml_whose_urdf_is_not_a_file_is_named(tmp_path, line, error, message):
    """Found: 'urdf: ;' gave '/tmp/x/;: URDF file not found', naming neither the YAML nor its key."""
    p = tmp_path / "vehicle.yaml"
    p.write_text(line + "\n")
    with pytest.raises(error) as e:
        wmr.load_model(p)
    assert str(e.value).startswith(f"{p}: ") and message.format(d=tmp_path) in str(e.value)


def test_a_failure_at_the_first_step_of_an_absurd_command_points_at_the_command():
    """Found: a 2.4e12 m/s command failed in step 0 with only 'the terrain returned a non-finite height'.  (The
    first steps may complete — the ideal actuators meet the command exactly — and the divergence check stop the
    second or third: either way the message names the first steps and the command.)"""
    sim = Simulator(wmr.load_model("zoe"), Plane(), mode="dynamic", dt=0.01)
    with pytest.raises(SimulationError) as e:
        sim.run(0.08, np.array([2.36139631e12, 0.0]), progress=False, limit_speeds=False)
    msg = str(e.value)  # "step 0 (t = 0 s)", "at t = 0 s (step 0)" (the divergence check) or step 1's or 2's
    assert any(f"step {k} (t = {t} s)" in msg or f"t = {t} s (step {k})" in msg
               for k, t in ((0, "0"), (1, "0.01"), (2, "0.02")))
    assert "smaller dt, or a command within the" in str(e.value)


def test_a_tiny_command_scales_without_an_overflow_warning():
    """Found: `wmr-sim --speed 5e-324` warned 'overflow encountered in divide' in the speed-limit scale."""
    import warnings

    from wmr_dynamics.limits import command_scale

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert command_scale(wmr.load_model("zoe"), [5e-324, 1e-310, 20.0, 0.0]) == 0.5  # 10 rad/s of 20
