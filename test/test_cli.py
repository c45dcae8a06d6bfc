"""The wmr-show command, run as a user would (a subprocess of the installed console script / module)."""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from wmr_dynamics import bundled_vehicles, forward_kinematics, load_model
from wmr_dynamics.cli import sim_main
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


def sim(*args):
    return subprocess.run([sys.executable, "-m", "wmr_dynamics.cli", "sim", *args], capture_output=True, text=True,
                          timeout=300)


SUMMARY_KEYS = {"distance_m", "final_pose", "mean_contact_speed_mps", "max_abs_dz_m", "contact_fraction", "steps",
                "sim_time_s", "wall_time_s", "real_time_factor"}


def test_sim_rocky7_on_rough_terrain_writes_summary_plots_and_csv(tmp_path):
    r = sim("--vehicle", "rocky7", "--terrain", "rough", "--seed", "1", "--speed", "0.5", "--duration", "4",
            "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert SUMMARY_KEYS <= set(s)
    assert s["steps"] == 100 and s["sim_time_s"] == pytest.approx(4.0)
    assert s["real_time_factor"] == pytest.approx(s["sim_time_s"] / s["wall_time_s"])
    # the CSV agrees with the summary: path length of the body origin and the final pose
    rows = np.genfromtxt(tmp_path / "rocky7_trajectory.csv", delimiter=",", names=True)
    xyz = np.c_[rows["x_m"], rows["y_m"], rows["z_m"]]
    assert np.linalg.norm(np.diff(xyz, axis=0), axis=1).sum() == pytest.approx(s["distance_m"], rel=1e-4)
    np.testing.assert_allclose(xyz[-1], s["final_pose"][:3], atol=1e-5)
    assert 1.8 < s["distance_m"] < 2.4  # 0.5 m/s for 4 s over rough ground
    # wheels the rocker-bogie cannot keep down on RMS 5 cm ground count as lifted (kinematics/contact_set.py)
    assert 0 < s["mean_contact_speed_mps"] < 0.2 and s["contact_fraction"] > 0.8
    for png in ("rocky7_path.png", "rocky7_contacts.png"):
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG"


def test_sim_accepts_a_bare_urdf_without_yaml(tmp_path):
    r = sim("--vehicle", str(DATA / "skid4.urdf"), "--terrain", "flat", "--speed", "1.0", "--yaw-rate", "0.0",
            "--duration", "2", "--dt", "0.05", "--out", str(tmp_path), "--json", "--no-plots")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["distance_m"] == pytest.approx(2.0, rel=1e-6)  # skid-steer straight on flat ground: no slip
    assert s["mean_contact_speed_mps"] < 1e-9


@pytest.mark.parametrize("args, message", [
    (["--speed", "nan"], "argument --speed: expected a finite number, got 'nan'"),
    (["--x", "nan"], "argument --x: expected a finite number, got 'nan'"),
    (["--dt", "-1"], "dt must be"),
    (["--vehicle", "no_such_rover"], "not a bundled vehicle"),
    (["--controller", "teleport"], "controller type 'teleport'"),
])
def test_sim_bad_input_gives_a_clear_error(tmp_path, args, message):
    r = sim("--terrain", "flat", "--duration", "1", "--out", str(tmp_path), *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_sim_dynamic_mode_reports_forces_slip_and_iterations(tmp_path):
    r = sim("--vehicle", "zoe", "--terrain", "flat", "--mode", "dynamic", "--contact", "pacejka", "--actuator", "pi",
            "--speed", "1.0", "--duration", "3", "--dt", "0.04", "--out", str(tmp_path), "--json", "--no-plots")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert {"normal_force_min_N", "normal_force_max_N", "slip_ratio", "slip_angle_rad", "mean_iterations",
            "rolled_over"} <= set(s)
    weight = 198.0 * 9.81
    assert len(s["normal_force_min_N"]) == 4 and max(s["normal_force_max_N"]) < weight
    assert s["rolled_over"] is False and s["mean_iterations"] >= 0
    assert s["slip_ratio"]["mean"] > 0  # a PI actuator accelerating the rover: driving slip (eq. 2.40)
    assert 1.0 < s["final_pose"][0] < 3.0  # accelerating from rest towards 1 m/s for 3 s


def test_sim_list_vehicles_prints_the_bundled_vehicles():
    r = sim("--list-vehicles")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == bundled_vehicles()


@pytest.mark.parametrize("spec", ["ramp", "steps"])
def test_sim_climbs_the_preset_terrains_and_ends_on_top(tmp_path, spec):
    """Rocky 7 driven 4 m over the ramp (1.5 m plateau) or the steps (top at 0.5 m): the body ends level on the
    top, at the flat-ground body height above the terrain there (the terrain object is the oracle)."""
    from wmr_dynamics.terrain import load_terrain

    runs = {}
    for terrain in ("flat", spec):
        r = sim("--vehicle", "rocky7", "--terrain", terrain, "--speed", "0.5", "--duration", "8", "--dt", "0.04",
                "--out", str(tmp_path), "--json", "--no-plots")
        assert r.returncode == 0, r.stderr
        runs[terrain] = json.loads(r.stdout.strip().splitlines()[-1])
    x, y, z, roll, pitch, _ = runs[spec]["final_pose"]
    top = float(load_terrain(spec).height(x, y))
    assert top > 0.4  # it really ended up on top
    assert z - top == pytest.approx(runs["flat"]["final_pose"][2], abs=2e-3)
    assert abs(roll) < 1e-3 and abs(pitch) < 1e-3
    # rolling without slip, the path length is set by the wheel speed, plus the body's up-and-down where a
    # wheel meets a riser (lifted back onto the step in one Baumgarte step; kinematics/contact_set.py: 0.70 m
    # of vertical travel for the 0.4 m climb, ≈ 7 % of the path); the climb costs horizontal progress
    assert runs[spec]["distance_m"] == pytest.approx(runs["flat"]["distance_m"], rel=0.08)
    assert x < runs["flat"]["final_pose"][0] - 0.05


def test_sim_reads_an_sdf_world_file(tmp_path):
    world = Path(__file__).resolve().parents[1] / "worlds" / "obstacles.sdf"
    r = sim("--vehicle", "rocky7", "--terrain", str(world), "--speed", "0.5", "--duration", "4", "--dt", "0.04",
            "--out", str(tmp_path), "--json", "--no-plots")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["steps"] == 100 and s["contact_fraction"] > 0.9 and 1.8 < s["distance_m"] < 2.3


def test_simulator_is_exported_at_the_top_level():
    import wmr_dynamics
    from wmr_dynamics import simulate

    assert wmr_dynamics.Simulator is simulate.Simulator and wmr_dynamics.SimResult is simulate.SimResult
    assert "Simulator" in wmr_dynamics.__all__
    with pytest.raises(AttributeError, match="no attribute 'Simulatr'"):
        wmr_dynamics.Simulatr  # noqa: B018


def test_commands_beyond_the_urdf_wheel_speed_limits_are_scaled_with_a_warning(tmp_path, capsys):
    # Zoë's wheels: <limit velocity="10"/> rad/s, radius 0.325 m -> at most 3.25 m/s
    assert sim_main(["--vehicle", "zoe", "--terrain", "flat", "--speed", "1e6", "--duration", "4", "--no-plots",
                     "--out", str(tmp_path), "--json"]) == 0
    out = capsys.readouterr()
    assert "beyond the URDF joint speed limits" in out.err and "scaled to 3.25 m/s" in out.err
    summary = json.loads(out.out.strip().splitlines()[-1])
    assert summary["distance_m"] == pytest.approx(3.25 * 4, rel=0.02)


def test_nothing_finished_is_lost_to_a_bad_output_path(tmp_path, capsys):
    afile = tmp_path / "a_file"
    afile.write_text("x")
    args = ["--vehicle", "zoe", "--terrain", "flat", "--duration", "1", "--no-plots"]
    t0 = time.perf_counter()
    assert sim_main([*args, "--out", str(afile)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "exists and is not a folder" in err
    assert sim_main([*args, "--out", str(afile / "sub")]) == 2
    assert "cannot create" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 60  # refused before simulating anything (no compile, no run)
    (tmp_path / "bag").mkdir()
    assert sim_main([*args, "--out", str(tmp_path / "o"), "--record", str(tmp_path / "bag.mcap")]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and not (tmp_path / "o" / "zoe_trajectory.csv").exists()  # refused up front


def test_a_vehicle_name_never_writes_outside_the_output_folder(tmp_path):
    root = Path(__file__).resolve().parent.parent
    cfg = yaml.safe_load((root / "config" / "zoe.yaml").read_text())
    cfg["name"], cfg["urdf"] = "../../escaped", str(root / "urdf" / "zoe.urdf")
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "evil.yaml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / "a" / "b"
    assert sim_main(["--vehicle", str(tmp_path / "v" / "evil.yaml"), "--terrain", "flat", "--duration", "0.4",
                     "--no-plots", "--out", str(out)]) == 0
    (written,) = out.iterdir()  # one file, in the output folder, named without any path separator
    assert written.name.endswith("escaped_trajectory.csv") and written.name == "_.._escaped_trajectory.csv"
    assert not list(tmp_path.glob("escaped*"))


def test_a_run_too_large_for_memory_is_refused_up_front(tmp_path, capsys):
    assert sim_main(["--vehicle", "zoe", "--terrain", "flat", "--duration", "1e9", "--dt", "0.01", "--out",
                     str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "1e+11 steps" in err and "GiB" in err and "Traceback" not in err


def test_unconverged_force_balance_steps_are_counted_with_their_first_time():
    """One Newton iteration with a tolerance no step can meet: every step is unconverged, and the summary
    (which the CLI prints as a warning) says how many and from when."""
    from wmr_dynamics.dynamics.force_balance import DynamicsOptions
    from wmr_dynamics.simulate import Simulator
    from wmr_dynamics.terrain import Plane

    model = load_model("zoe")
    opts = DynamicsOptions.from_config(model, max_iterations=1, tolerance=1e-300)
    sim = Simulator(model, Plane(), mode="dynamic", dt=0.01, dynamics=opts)
    r = sim.run(0.2, (0.5, 0.0), progress=False)
    s = r.summary()
    bad = np.flatnonzero(~r.converged[:20])
    assert s["unconverged_steps"] == len(bad) > 0 and s["first_unconverged_s"] == pytest.approx(0.01 * bad[0])
    s = Simulator(model, Plane(), mode="dynamic", dt=0.01).run(0.2, (0.5, 0.0), progress=False).summary()
    assert s["unconverged_steps"] == 0 and s["first_unconverged_s"] is None
