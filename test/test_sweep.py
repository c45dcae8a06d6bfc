"""wmr-sweep (wmr_dynamics.sweep): sweep-file expansion and validation, backends (local pool, in-process, Ray on
loopback), output files and --resume, the command line.  Kinematic runs of 0.4–1 s keep it fast."""

import csv
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from shared_paths import TERRAINS

from wmr_dynamics import sweep as sw
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.model import JointConstraint, WmrModel
from wmr_dynamics.simulate import SimulationError, Simulator
from wmr_dynamics.terrain import gaussian_rough_terrain, load_wmrde_grid
from wmr_dynamics.urdf import load_model

# 4 jobs: Rocky 7, kinematic, 0.6 s on two rough terrains at two steps
SMALL = {"name": "small", "base": {"vehicle": "rocky7", "mode": "kinematic", "terrain": "rough", "duration": 0.6,
                                   "speed": 0.5, "yaw_rate": 0.2},
         "grid": {"dt": [0.04, 0.1], "seed": [1, 2]},
         "outputs": ["distance_m", "final_pose", "mean_contact_speed_mps", "rolled_over"]}


def write(tmp_path, spec, name="sweep.yaml"):
    path = tmp_path / name
    path.write_text(spec if isinstance(spec, str) else yaml.safe_dump(spec))
    return path


def strip(rows):
    return [sw.without_timing(r) for r in rows]


# ---- expansion --------------------------------------------------------------------------------------------
def test_grid_is_the_cartesian_product_in_order_with_defaults_filled(tmp_path):
    spec = {"base": {"vehicle": "zoe", "speed": 0.3}, "grid": {"dt": [0.02, 0.04], "seed": [1, 2, 3]}}
    s = sw.load_sweep(write(tmp_path, spec))
    assert s.name == "sweep" and len(s.jobs) == 6
    assert [(j["dt"], j["seed"]) for j in s.jobs] == [(0.02, 1), (0.02, 2), (0.02, 3), (0.04, 1), (0.04, 2),
                                                      (0.04, 3)]
    assert [j["job"] for j in s.jobs] == list(range(6))
    for j in s.jobs:  # base, defaults (wmr-sim's) and no extra keys
        assert j["vehicle"] == "zoe" and j["speed"] == 0.3 and j["mode"] == "kinematic" and j["terrain"] == "rough"
        assert j["duration"] == 10.0 and j["yaw_rate"] == 0.0 and j["rms"] == 0.05 and j["contact"] is None
        assert set(j) == {"job", *sw.SCENARIO}
    assert s.varied == ("seed", "dt") and s.group_by == ("dt",)  # seeds are averaged over
    assert s.outputs == sw.OUTPUT_KEYS


def test_cases_are_zipped_and_crossed_with_the_grid(tmp_path):
    spec = {"base": {"yaw_rate": 0.05}, "grid": {"dt": [0.02, 0.04]},
            "cases": [{"speed": 0.2, "yaw_rate": 0.1}, {"speed": 0.4}, {"speed": 0.6, "mode": "enhanced"}]}
    jobs = sw.load_sweep(write(tmp_path, spec)).jobs
    assert len(jobs) == 6
    assert [(j["dt"], j["speed"], j["yaw_rate"], j["mode"]) for j in jobs] == [
        (0.02, 0.2, 0.1, "kinematic"), (0.02, 0.4, 0.05, "kinematic"), (0.02, 0.6, 0.05, "enhanced"),
        (0.04, 0.2, 0.1, "kinematic"), (0.04, 0.4, 0.05, "kinematic"), (0.04, 0.6, 0.05, "enhanced")]


def test_monte_carlo_sampling_is_reproducible_per_sweep_seed(tmp_path):
    def draws(seed, extra=None):
        spec = {"grid": {"dt": [0.04, 0.1]}, "samples": 5, "sweep_seed": seed,
                "random": {"rms": {"uniform": [0.02, 0.08]}, "seed": {"randint": [1, 100]},
                           "speed": {"choice": [0.2, 0.4]}, **(extra or {})}}
        return sw.load_sweep(write(tmp_path, spec, f"mc{seed}.yaml")).jobs

    a, b, c = draws(3), draws(3), draws(4)
    assert len(a) == 10 and [j["sample"] for j in a] == [0, 1, 2, 3, 4] * 2
    assert a == b  # same sweep_seed: identical jobs
    rms = [j["rms"] for j in a[:5]]
    assert rms != [j["rms"] for j in c[:5]]  # another sweep_seed: other draws
    assert len(set(rms)) == 5 and all(0.02 <= r <= 0.08 for r in rms)
    assert all(isinstance(j["seed"], int) and 1 <= j["seed"] <= 100 for j in a)
    assert {j["speed"] for j in a} <= {0.2, 0.4}
    assert [j["rms"] for j in a[5:]] == rms  # the same draws under every grid point
    # every key has its own stream: adding a random key leaves the others' draws unchanged
    d = draws(3, {"yaw_rate": {"normal": [0.0, 0.1]}})
    assert [j["rms"] for j in d] == [j["rms"] for j in a] and len({j["yaw_rate"] for j in d[:5]}) == 5
    s = sw.load_sweep(write(tmp_path, {"grid": {"dt": [0.04, 0.1]}, "samples": 2, "sweep_seed": 1,
                                       "random": {"rms": {"uniform": [0.02, 0.08]}}}, "g.yaml"))
    assert s.group_by == ("dt",)  # random keys are averaged over


BAD = [
    ("grids: {dt: [0.1]}\n", "grids", "unknown key"),
    ("base: {speeed: 0.5}\n", "base.speeed", "unknown scenario key"),
    ("base: {vehicle: zoee}\n", "base.vehicle", "zoee"),
    ("grid: {dt: []}\n", "grid.dt", "empty axis"),
    ("grid: {dt: [0.04, -0.1]}\n", "grid.dt[1]", "must be > 0"),
    ("grid: {dt: 0.04}\n", "grid.dt", "list"),
    ("grid: {speeed: [1.0]}\n", "grid.speeed", "unknown scenario key"),
    ("base: {duration: ten}\n", "base.duration", "must be a number"),
    ("base: {dt: 1e-2}\n", "base.dt", "1.0e-2"),
    ("base: {seed: 1.5}\n", "base.seed", "integer"),
    ("base: {mode: dynamc}\n", "base.mode", "kinematic, enhanced, dynamic"),
    ("base: {contact: sticky}\n", "base.contact", "linear, pacejka"),
    ("base: {terrain: nowhere.txt}\n", "base.terrain", "not found"),
    ("base: {terrain: hills}\n", "base.terrain", "flat, rough, ramp, steps"),
    ("base: {slip: [0, 0, 0]}\n", "base.slip", "6 numbers"),
    ("base: {vehicle: zoe, lock_joints: [s9_joint]}\n", "lock_joints", "s9_joint"),
    ("cases: [{speed: 0.5}, {dt: 0}]\n", "cases[1].dt", "must be > 0"),
    ("cases: []\n", "cases", "non-empty"),
    ("grid: {dt: [0.04]}\ncases: [{dt: 0.1}]\n", "cases.dt", "also varied in `grid`"),
    ("random: {rms: {uniform: [0.01, 0.02]}}\n", "samples", "missing"),
    ("samples: 0\n", "samples", ">= 1"),
    ("samples: 3\nrandom: {rms: {uniform: [0.08, 0.02]}}\n", "random.rms.uniform", "lo < hi"),
    ("samples: 3\nrandom: {rms: {gaussian: [0.05, 0.01]}}\n", "random.rms", "uniform"),
    ("samples: 3\nrandom: {dt: {normal: [0.0, 0.1]}}\n", "random.dt (sample", "must be > 0"),
    ("samples: 3\nsweep_seed: -1\n", "sweep_seed", "integer"),
    ("samples: 3\nrandom: {mode: {choice: [kinematic, dynamc]}}\n", "random.mode.choice[1]", "dynamic"),
    ("outputs: [distance, final_pose]\n", "outputs", "'distance'"),
    ("group_by: [speeed]\n", "group_by", "scenario keys"),
    ("base: [1, 2]\n", "base", "mapping"),
    ("base: {dt: [0.1\n", "not valid YAML", "line"),
]


@pytest.mark.parametrize("text, key, what", BAD, ids=[b[1] for b in BAD])
def test_bad_sweep_files_raise_a_sweep_error_naming_file_and_key(tmp_path, text, key, what):
    path = write(tmp_path, text, "bad.yaml")
    with pytest.raises(sw.SweepError) as e:
        sw.load_sweep(path)
    msg = str(e.value)
    assert isinstance(e.value, sw.WmrError)
    assert msg.startswith(f"{path}: ") and key in msg and what in msg, msg


def test_scenario_choices_match_the_library():
    from wmr_dynamics import contact_models, simulate

    assert set(sw.CONTACTS) == set(contact_models.MODELS) and set(sw.MODES) == set(simulate.MODES)
    assert set(sw.INTEGRATORS) == set(simulate.INTEGRATORS)


# ---- running: local backends against the simulator --------------------------------------------------------
def oracle(vehicle, ground, dt, duration, v, w, model=None, controller=None):
    """The same run straight from Simulator (as a user would write it)."""
    model = model or load_model(vehicle)
    sim = Simulator(model, ground, mode="kinematic", dt=dt, controller=BodyVelocityController(model, controller))
    return sim.run(duration, (v, w), progress=False).summary()


def test_local_pool_equals_in_process_equals_the_simulator(tmp_path):
    s = sw.load_sweep(write(tmp_path, SMALL))
    one = sw.run_sweep(s, workers=1, progress=False)
    two = sw.run_sweep(s, workers=2, progress=False)
    assert one.ran == two.ran == 4 and [r["job"] for r in two.rows] == [0, 1, 2, 3]
    assert strip(two.rows) == strip(one.rows)
    assert len({tuple(r["final_pose"]) for r in one.rows}) == 4  # the axes matter
    for r in one.rows:
        assert set(r) == {"job", *sw.SCENARIO, *SMALL["outputs"], "error", "wall_time_s"}
        assert r["error"] is None and r["wall_time_s"] > 0
    r = one.rows[3]  # dt 0.1, seed 2
    ref = oracle("rocky7", gaussian_rough_terrain(rms=0.05, corr_len=0.2, seed=2), 0.1, 0.6, 0.5, 0.2)
    assert (r["dt"], r["seed"]) == (0.1, 2)
    assert {k: r[k] for k in SMALL["outputs"]} == {k: ref[k] for k in SMALL["outputs"]}


def test_terrain_file_start_pose_and_locked_joints_match_the_simulator(tmp_path):
    # Zoë on a thesis terrain, steering held straight (as benchmarks/zoe_rough.py builds it), from x = 1 m
    terrain = TERRAINS / "zoe_rough_1.txt"
    spec = {"base": {"vehicle": "zoe", "terrain": str(terrain), "duration": 0.4, "dt": 0.04, "speed": 0.5,
                     "yaw_rate": 0.3, "controller": "naive", "x": 1.0},
            "grid": {"lock_joints": [["s1_joint", "s2_joint"], []]}}
    rows = sw.run_sweep(sw.load_sweep(write(tmp_path, spec)), workers=1, progress=False).rows
    zoe = load_model("zoe")
    locked = WmrModel(frames=zoe.frames, wheels=zoe.wheels, joint_springs=dict(zoe.joint_springs), name=zoe.name,
                      joint_constraints=zoe.joint_constraints + tuple(
                          JointConstraint(f"lock_{j}", {j: 1.0}) for j in ("s1_joint", "s2_joint")),
                      config=dict(zoe.config), source=zoe.source, fixed_frames=dict(zoe.fixed_frames))
    ground = load_wmrde_grid(terrain)
    sim = Simulator(locked, ground, mode="kinematic", dt=0.04, controller=BodyVelocityController(locked, "naive"))
    ref = sim.run(0.4, (0.5, 0.3), q0=sim.initial_state(xyz=(1.0, 0.0)), progress=False).summary()
    assert rows[0]["final_pose"] == ref["final_pose"] and rows[0]["distance_m"] == ref["distance_m"]
    assert abs(rows[0]["final_pose"][0] - 1.2) < 0.05
    assert rows[1]["final_pose"] != ref["final_pose"]  # free steering: another run


# ---- Ray ----------------------------------------------------------------------------------------------------
def _listening(pids):
    """Local addresses of the TCP/UDP sockets that processes ``pids`` listen on (from ``ss -tulpn``)."""
    out = subprocess.run(["ss", "-tulpnH"], capture_output=True, text=True, check=True).stdout
    return [line.split()[4] for line in out.splitlines() if any(f"pid={p}," in line for p in pids)]


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module: 2 CPUs, no dashboard, usage stats off, loopback only."""
    if importlib.util.find_spec("ray") is None:  # (not importorskip: Ray must be imported by start_local_ray)
        pytest.skip("ray is not installed")
    ray = sw.start_local_ray(num_cpus=2)
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    yield ray
    ray.shutdown()


def test_ray_backend_equals_local_backend_and_stays_on_loopback(tmp_path, local_ray):
    s = sw.load_sweep(write(tmp_path, SMALL))
    on_ray = sw.run_sweep(s, backend="ray", progress=False)
    local = sw.run_sweep(s, workers=1, progress=False)
    assert on_ray.ran == 4 and strip(on_ray.rows) == strip(local.rows)
    assert local_ray.is_initialized()  # a running instance is used, not shut down
    try:
        import psutil

        pids = [os.getpid(), *(p.pid for p in psutil.Process().children(recursive=True))]
        addresses = _listening(pids)
    except (ImportError, FileNotFoundError, subprocess.CalledProcessError):
        pytest.skip("no psutil or ss to list listening sockets")
    assert len(pids) > 2 and addresses  # gcs_server, raylet, workers
    assert all(a.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")) for a in addresses), addresses


def test_ray_missing_gives_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    path = write(tmp_path, SMALL)
    with pytest.raises(sw.SweepError, match="needs Ray"):
        sw.run_sweep(sw.load_sweep(path), backend="ray", progress=False)
    assert sw.main([str(path), "--backend", "ray", "-q"]) == 2
    assert "needs Ray" in capsys.readouterr().err


# ---- output files and resume ----------------------------------------------------------------------------
def read_csv(path):
    with path.open() as f:
        return list(csv.DictReader(f))


def test_out_dir_csv_and_jsonl_then_resume_reruns_only_missing_jobs(tmp_path, monkeypatch):
    s = sw.load_sweep(write(tmp_path, SMALL))
    out = tmp_path / "out"
    first = sw.run_sweep(s, workers=1, out=out, progress=False)
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == first.rows
    table = read_csv(out / "results.csv")
    assert [int(r["job"]) for r in table] == [0, 1, 2, 3]
    for row, r in zip(table, first.rows, strict=True):
        assert float(row["dt"]) == r["dt"] and int(row["seed"]) == r["seed"] and row["vehicle"] == "rocky7"
        names = ["final_x_m", "final_y_m", "final_z_m", "final_roll_rad", "final_pitch_rad", "final_yaw_rad"]
        assert [float(row[n]) for n in names] == r["final_pose"]
        assert float(row["distance_m"]) == r["distance_m"] and row["rolled_over"] == "False"
        assert [float(row[f"slip_p{i}"]) for i in range(1, 7)] == [0.0] * 6 and row["lock_joints"] == ""
    with pytest.raises(sw.SweepError, match="--resume"):  # never overwrite results silently
        sw.run_sweep(s, workers=1, out=out, progress=False)

    # an interrupted sweep: jobs 1 and 3 missing, the last line cut off mid-write
    (out / "results.jsonl").write_text(lines[0] + "\n" + lines[2] + "\n" + lines[3][:40])
    ran = []
    real = sw.ENGINES["reference"]
    monkeypatch.setitem(sw.ENGINES, "reference", lambda job: ran.append(job["job"]) or real(job))
    second = sw.run_sweep(s, workers=1, out=out, resume=True, progress=False)
    assert sorted(ran) == [1, 3] and (second.ran, second.skipped) == (2, 2)
    assert strip(second.rows) == strip(first.rows)
    assert strip(json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()) == strip(first.rows)
    assert len(read_csv(out / "results.csv")) == 4

    other = sw.load_sweep(write(tmp_path, {**SMALL, "grid": {"dt": [0.05, 0.1], "seed": [1, 2]}}, "other.yaml"))
    with pytest.raises(sw.SweepError, match="different sweep"):
        sw.run_sweep(other, workers=1, out=out, resume=True, progress=False)


def test_failed_jobs_are_rows_with_an_error_and_exit_code_1(tmp_path, monkeypatch, capsys):
    def failing(job):
        raise SimulationError("the state became non-finite")

    monkeypatch.setitem(sw.ENGINES, "failing", failing)
    monkeypatch.setattr(sw, "select_engine", lambda job: "failing" if job["job"] == 1 else "reference")
    path = write(tmp_path, SMALL)
    assert sw.main([str(path), "--workers", "1", "-q", "--json"]) == 1
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["failed"] == 1 and summary["jobs"] == 4
    dt004 = next(g for g in summary["groups"] if g["dt"] == 0.04)
    assert dt004["n"] == 1 and dt004["errors"] == 1
    row = sw.run_job(sw.load_sweep(path).jobs[1])
    assert row["error"] == "SimulationError: the state became non-finite" and row["distance_m"] is None


# ---- command line -------------------------------------------------------------------------------------------
def test_an_out_that_is_a_file_is_refused_before_any_job_runs(tmp_path, capsys):
    path = write(tmp_path, SMALL)
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert sw.main([str(path), "--workers", "1", "--out", str(afile), "-q"]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "exists and is not a folder" in err and "Traceback" not in err


def test_cli_runs_prints_a_table_and_a_last_json_line(tmp_path, capsys):
    path = write(tmp_path, SMALL)
    assert sw.main([str(path), "--workers", "1", "--out", str(tmp_path / "o"), "--json"]) == 0
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    summary = json.loads(lines[-1])
    assert (summary["jobs"], summary["ran"], summary["failed"], summary["group_by"]) == (4, 4, 0, ["dt"])
    rows = [json.loads(line) for line in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    for g in summary["groups"]:  # means over the seeds
        members = [r for r in rows if r["dt"] == g["dt"]]
        assert g["n"] == 2 and g["distance_m"] == pytest.approx(np.mean([r["distance_m"] for r in members]))
        assert g["final_x_m"] == pytest.approx(np.mean([r["final_pose"][0] for r in members]))
    assert "distance_m" in cap.out and "means over seed" in cap.out
    assert "4/4 done" in cap.err and "ETA" in cap.err  # progress on stderr
    assert sw.main([str(path), "--workers", "1", "--out", str(tmp_path / "o"), "--resume", "--json", "-q"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["ran"] == 0


def test_cli_dry_run_and_bad_input(tmp_path, capsys):
    path = write(tmp_path, SMALL)
    assert sw.main([str(path), "--dry-run", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert json.loads(out[-1])["jobs"] == 4 and sum("dt=" in line and "seed=" in line for line in out) == 4
    bad = write(tmp_path, "base: {dt: -1.0}\n", "bad.yaml")
    assert sw.main([str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("wmr-sweep: error: ") and "base.dt" in err
    assert sw.main([str(tmp_path / "missing.yaml")]) == 2 and "cannot read" in capsys.readouterr().err
    assert sw.main([str(path), "--backend", "spark"]) == 2
    assert sw.main([str(path), "--workers", "0"]) == 2


def test_examples_expand_and_the_entry_point_is_registered():
    root = sw.Path(__file__).resolve().parents[1]
    quick = sw.load_sweep(root / "examples" / "sweeps" / "quick.yaml")
    assert len(quick.jobs) == 8 and quick.group_by == ("mode", "dt")
    if (root.parent / "shared" / "data" / "rough_terrains").is_dir():  # the example's relative paths
        zoe = sw.load_sweep(root / "examples" / "sweeps" / "zoe_table_2_7.yaml")
        assert len(zoe.jobs) == 90 and zoe.group_by == ("contact", "dt")
        assert {sw.Path(j["terrain"]).name for j in zoe.jobs} == {f"zoe_rough_{k}.txt" for k in range(1, 11)}
    assert "wmr-sweep = wmr_dynamics.sweep:main" in (root / "setup.py").read_text()
