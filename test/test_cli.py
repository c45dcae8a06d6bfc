"""The wmr-show command, run as a user would (a subprocess of the installed console script / module)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from wmr_dynamics import bundled_vehicles, forward_kinematics, load_model
from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.terrain import gaussian_rough_terrain

DATA = Path(__file__).parent / "data"


def run(*args):
    return subprocess.run([sys.executable, "-m", "wmr_dynamics.cli", "show", *args], capture_output=True,
                          text=True, timeout=300)


def test_show_places_rocky7_on_rough_terrain_and_writes_a_picture(tmp_path):
    r = run("--vehicle", "rocky7", "--terrain", "rough", "--seed", "1", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    png = Path(result["picture"])
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert result["num_wheels"] == 6 and result["total_mass_kg"] == 14.0
    assert "rocky7" in r.stdout and "A1" in r.stdout
    # Independent check of the reported placement: recompute the contacts of the reported pose.
    model = load_model("rocky7")
    x, y, z, roll, pitch, yaw = result["pose"]
    ground = gaussian_rough_terrain(rms=0.05, corr_len=0.2, seed=1)
    T = forward_kinematics(model, model.state(xyz=(x, y, z), rpy=(roll, pitch, yaw)))
    dz = wheel_contacts(model, T, ground).dz
    np.testing.assert_allclose(dz, result["dz_m"], atol=1e-9)
    assert abs(min(dz)) < 1e-6  # the lowest wheel touches, none penetrates


def test_list_vehicles():
    r = subprocess.run([sys.executable, "-m", "wmr_dynamics.cli", "show", "--list-vehicles"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0
    assert r.stdout.split() == bundled_vehicles()
    assert {"rocky7", "zoe", "landtamer", "crusher", "recbot", "eldorado2", "pvc_tricycle"} <= set(r.stdout.split())


def test_bad_vehicle_gives_a_clear_error_and_exit_code_2(tmp_path):
    r = run("--vehicle", str(tmp_path / "missing.urdf"), "--out", str(tmp_path))
    assert r.returncode == 2
    assert "error" in r.stderr and "missing.urdf" in r.stderr and "not found" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_terrain_file_gives_a_clear_error(tmp_path):
    bad = tmp_path / "ground.txt"
    bad.write_text("1,2,3")
    r = run("--vehicle", str(DATA / "skid4.urdf"), "--terrain", str(bad), "--out", str(tmp_path))
    assert r.returncode == 2 and "ground.txt" in r.stderr and "Traceback" not in r.stderr
