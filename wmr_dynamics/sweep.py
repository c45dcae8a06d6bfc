"""``wmr-sweep``: parameter sweeps and Monte-Carlo studies of the simulator, locally or on a Ray cluster.

A **sweep file** (YAML, ``docs/sweep.md``) describes a base scenario and what to vary::

    name: zoe_steps
    base: {vehicle: zoe, mode: dynamic, terrain: rough, duration: 10.0, speed: 0.5}
    grid: {dt: [0.01, 0.04], contact: [linear, pacejka], seed: [1, 2, 3]}   # Cartesian product
    cases: [{speed: 0.5}, {speed: 1.0, yaw_rate: 0.1}]                      # zipped, crossed with the grid
    samples: 20                                                             # Monte-Carlo draws ...
    random: {rms: {uniform: [0.02, 0.08]}}                                  # ... of these keys
    sweep_seed: 7
    outputs: [distance_m, final_pose, rolled_over]                          # summary keys kept

:func:`load_sweep` validates it and expands it into **jobs** (fully resolved scenario dicts, numbered in
order); :func:`run_job` runs one (the single place a scenario becomes a simulation; see :data:`ENGINES`);
:func:`run_sweep` runs them all on a backend (``local``: a process pool, or in-process with one worker;
``ray``: Ray tasks on an existing cluster or on a local instance bound to loopback) and writes
``results.jsonl`` / ``results.csv`` as jobs finish.  Results are ordered by job index and identical across
backends (the simulation is deterministic; only the wall times differ).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from wmr_dynamics.errors import WmrError


class SweepError(WmrError, ValueError):
    """An invalid sweep file or sweep request; the message names the file, the key and what is wrong."""


class _Bad(ValueError):
    """A value check failed (internal; turned into a SweepError naming file and key)."""


# ---- scenario keys ------------------------------------------------------------------------------------
MODES = ("kinematic", "enhanced", "dynamic")
CONTACTS = ("linear", "pacejka", "ishigami", "ding")  # wmr_dynamics.contact_models.MODELS (checked in tests)
ACTUATORS = ("ideal", "pi")
INTEGRATORS = ("euler", "rk4")
TERRAIN_PRESETS = ("flat", "rough", "ramp", "steps")
TERRAIN_SUFFIXES = (".txt", ".yaml", ".yml", ".npy", ".png", ".sdf", ".world")
SLIP_NAMES = ("p1", "p2", "p3", "p4", "p5", "p6")


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        hint = ""
        if isinstance(v, str):
            try:
                float(v)
                hint = " (YAML reads e.g. 1e-2 as text: write 1.0e-2)"
            except ValueError:
                pass
        raise _Bad(f"must be a number, got {v!r} ({type(v).__name__}){hint}")
    if not math.isfinite(v):
        raise _Bad(f"must be finite, got {v!r}")
    return float(v)


def _positive(unit: str) -> Callable[[Any, Path], float]:
    def check(v: Any, _base: Path) -> float:
        x = _number(v)
        if x <= 0:
            raise _Bad(f"must be > 0 ({unit}), got {v!r}")
        return x
    return check


def _real(v: Any, _base: Path) -> float:
    return _number(v)


def _optional_real(v: Any, _base: Path) -> float | None:
    return None if v is None else _number(v)


def _seed(v: Any, _base: Path) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise _Bad(f"must be an integer >= 0, got {v!r}")
    return int(v)


def _one_of(options: Sequence[str], optional: bool = False) -> Callable[[Any, Path], str | None]:
    def check(v: Any, _base: Path) -> str | None:
        if v is None and optional:
            return None
        if v not in options:
            extra = " or null (the vehicle YAML's)" if optional else ""
            raise _Bad(f"must be one of {', '.join(options)}{extra}, got {v!r}")
        return v
    return check


def _controller(v: Any, _base: Path) -> str | None:
    from wmr_dynamics.controllers import CONTROLLER_TYPES

    return _one_of(CONTROLLER_TYPES, optional=True)(v, _base)


def _path_or_name(v: Any, base: Path, names: Iterable[str], what: str, suffixes: Sequence[str]) -> str:
    if not isinstance(v, str) or not v:
        raise _Bad(f"must be a {what} name or a file path, got {v!r}")
    if v in names:
        return v
    p = Path(os.path.expandvars(v)).expanduser()
    p = p if p.is_absolute() else base / p
    if p.suffix.lower() not in suffixes:
        raise _Bad(f"unknown {what} {v!r}: not one of {', '.join(names)} nor a file ending in {', '.join(suffixes)}")
    if not p.is_file():
        raise _Bad(f"unknown {what} {v!r}: {p} not found (relative paths are relative to the sweep file)")
    return str(p.resolve())


def _vehicle(v: Any, base: Path) -> str:
    from wmr_dynamics.urdf import bundled_vehicles

    return _path_or_name(v, base, bundled_vehicles(), "vehicle", (".urdf", ".yaml", ".yml"))


def _terrain(v: Any, base: Path) -> str:
    return _path_or_name(v, base, TERRAIN_PRESETS, "terrain", TERRAIN_SUFFIXES)


def _slip(v: Any, _base: Path) -> list[float]:
    if not isinstance(v, list) or len(v) != 6:
        raise _Bad(f"must be a list of 6 numbers p1..p6 (thesis eqs. 2.48-2.49), got {v!r}")
    return [_number(x) for x in v]


def _names(v: Any, _base: Path) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise _Bad(f"must be a list of joint names, got {v!r}")
    return list(v)


@dataclass(frozen=True)
class _Key:
    default: Any
    check: Callable[[Any, Path], Any]
    doc: str


SCENARIO: dict[str, _Key] = {
    "vehicle": _Key("rocky7", _vehicle, "bundled vehicle name or URDF / vehicle YAML path"),
    "lock_joints": _Key([], _names, "joints held at 0 by rigid constraints (e.g. Zoë's steering)"),
    "mode": _Key("kinematic", _one_of(MODES), "motion model"),
    "contact": _Key(None, _one_of(CONTACTS, optional=True), "dynamic mode: contact model"),
    "actuator": _Key(None, _one_of(ACTUATORS, optional=True), "dynamic mode: actuator model"),
    "controller": _Key(None, _controller, "controller type (default: the vehicle YAML's)"),
    "integrator": _Key("euler", _one_of(INTEGRATORS), "kinematic modes: euler or rk4"),
    "slip": _Key([0.0] * 6, _slip, "enhanced mode: body slip parameters p1..p6"),
    "terrain": _Key("rough", _terrain, "flat | rough | ramp | steps | terrain file"),
    "rms": _Key(0.05, _positive("m"), "rough terrain RMS height, m"),
    "corr_len": _Key(0.2, _positive("m"), "rough terrain correlation length, m"),
    "seed": _Key(1, _seed, "rough terrain random seed"),
    "dt": _Key(0.04, _positive("time step, s"), "time step, s"),
    "duration": _Key(10.0, _positive("simulated time, s"), "simulated time, s"),
    "speed": _Key(0.5, _real, "commanded forward speed, m/s"),
    "yaw_rate": _Key(0.0, _real, "commanded yaw rate, rad/s"),
    "x": _Key(None, _optional_real, "start x, m (default: the vehicle YAML's initial_pose)"),
    "y": _Key(None, _optional_real, "start y, m"),
    "yaw": _Key(None, _optional_real, "start yaw, rad"),
}

# SimResult.summary() keys (the summary's own "wall_time_s", the stepping loop's, is "loop_wall_time_s").
SUMMARY_KEYS = ("vehicle", "mode", "dt_s", "distance_m", "final_pose", "mean_contact_speed_mps", "max_abs_dz_m",
                "contact_fraction", "min_rollover_margin_m", "steps", "sim_time_s", "loop_wall_time_s",
                "real_time_factor", "rolled_over")
DYNAMIC_SUMMARY_KEYS = ("normal_force_min_N", "normal_force_max_N", "slip_ratio", "slip_angle_rad",
                        "mean_iterations", "unconverged_steps")
OUTPUT_KEYS = SUMMARY_KEYS + DYNAMIC_SUMMARY_KEYS
TIMING_KEYS = frozenset({"wall_time_s", "loop_wall_time_s", "real_time_factor"})  # differ between runs
TOP_KEYS = ("name", "description", "base", "grid", "cases", "samples", "random", "sweep_seed", "outputs",
            "group_by")
DISTRIBUTIONS = ("uniform", "normal", "randint", "choice")


# ---- sweep file -----------------------------------------------------------------------------------------
@dataclass
class Sweep:
    """A validated, expanded sweep: ``jobs[i]`` is ``{"job": i, ["sample": k,] **scenario}``."""

    name: str
    path: Path
    jobs: list[dict]
    outputs: tuple[str, ...]
    group_by: tuple[str, ...]
    varied: tuple[str, ...] = field(default=())


def _err(path: Path | str, where: str, msg: str) -> SweepError:
    return SweepError(f"{path}: {where}: {msg}")


def _check_scenario(d: Any, where: str, path: Path, base_dir: Path) -> dict:
    """Validate a partial scenario dict (keys and values); returns it normalized."""
    if not isinstance(d, dict):
        raise _err(path, where, f"must be a mapping of scenario keys, got {type(d).__name__}")
    for k in d:
        if k not in SCENARIO:
            raise _err(path, f"{where}.{k}", f"unknown scenario key; valid keys: {', '.join(SCENARIO)}")
    return {k: _check_value(k, v, f"{where}.{k}", path, base_dir) for k, v in d.items()}


def _check_value(k: str, v: Any, where: str, path: Path, base_dir: Path) -> Any:
    try:
        return SCENARIO[k].check(v, base_dir)
    except _Bad as e:
        raise _err(path, where, str(e)) from None


def _check_grid(grid: Any, path: Path, base_dir: Path) -> dict[str, list]:
    if not isinstance(grid, dict):
        raise _err(path, "grid", f"must be a mapping key -> list of values, got {type(grid).__name__}")
    axes = {}
    for k, values in grid.items():
        if not isinstance(values, list):
            raise _err(path, f"grid.{k}", f"must be a list of values, got {values!r}")
        if not values:
            raise _err(path, f"grid.{k}", "empty axis (no values): the sweep would have no jobs")
        if k not in SCENARIO:
            raise _err(path, f"grid.{k}", f"unknown scenario key; valid keys: {', '.join(SCENARIO)}")
        axes[k] = [_check_value(k, v, f"grid.{k}[{i}]", path, base_dir) for i, v in enumerate(values)]
    return axes


def _check_cases(cases: Any, path: Path, base_dir: Path) -> list[dict]:
    if not isinstance(cases, list) or not cases:
        raise _err(path, "cases", f"must be a non-empty list of mappings, got {cases!r}")
    return [_check_scenario(c, f"cases[{i}]", path, base_dir) for i, c in enumerate(cases)]


def _check_distribution(k: str, spec: Any, path: Path, base_dir: Path) -> tuple[str, list]:
    where = f"random.{k}"
    if k not in SCENARIO:
        raise _err(path, where, f"unknown scenario key; valid keys: {', '.join(SCENARIO)}")
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in DISTRIBUTIONS:
        raise _err(path, where, f"must be one of {{uniform: [lo, hi]}}, {{normal: [mean, sd]}}, "
                                f"{{randint: [lo, hi]}}, {{choice: [values...]}}; got {spec!r}")
    kind, args = next(iter(spec.items()))
    if not isinstance(args, list) or not args:
        raise _err(path, f"{where}.{kind}", f"must be a non-empty list, got {args!r}")
    if kind == "choice":
        return kind, [_check_value(k, v, f"{where}.choice[{i}]", path, base_dir) for i, v in enumerate(args)]
    try:
        if len(args) != 2:
            raise _Bad(f"needs exactly 2 numbers, got {args!r}")
        lo, hi = (_seed(a, path) for a in args) if kind == "randint" else (_number(a) for a in args)
    except _Bad as e:
        raise _err(path, f"{where}.{kind}", str(e)) from None
    if kind == "normal" and hi <= 0:
        raise _err(path, f"{where}.normal", f"standard deviation must be > 0, got {hi!r}")
    if kind != "normal" and not lo < hi:
        raise _err(path, f"{where}.{kind}", f"needs lo < hi, got [{lo!r}, {hi!r}]")
    return kind, [lo, hi]


def _draw(k: str, kind: str, args: list, n: int, sweep_seed: int) -> list:
    """n draws for key k: an independent stream per key (adding a key does not change the others' draws)."""
    rng = np.random.default_rng([sweep_seed, zlib.crc32(k.encode())])
    if kind == "uniform":
        return [float(x) for x in rng.uniform(args[0], args[1], n)]
    if kind == "normal":
        return [float(x) for x in rng.normal(args[0], args[1], n)]
    if kind == "randint":
        return [int(x) for x in rng.integers(args[0], args[1], n, endpoint=True)]
    return [args[int(i)] for i in rng.integers(0, len(args), n)]


def _samples(spec: dict, path: Path, base_dir: Path) -> list[dict]:
    """The Monte-Carlo draws (a list of partial scenarios; one empty dict without ``samples``)."""
    n, rnd, seed = spec.get("samples"), spec.get("random") or {}, spec.get("sweep_seed", 0)
    if "random" in spec and not isinstance(spec["random"], dict):
        raise _err(path, "random", f"must be a mapping key -> distribution, got {spec['random']!r}")
    try:
        _seed(seed, base_dir)
    except _Bad as e:
        raise _err(path, "sweep_seed", str(e)) from None
    if n is None:
        if rnd:
            raise _err(path, "samples", "missing: `random:` needs `samples: N` (the number of draws)")
        return [{}]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise _err(path, "samples", f"must be an integer >= 1, got {n!r}")
    draws = {k: _draw(k, *_check_distribution(k, s, path, base_dir), n, seed) for k, s in rnd.items()}
    return [{"sample": i, **{k: _check_value(k, v[i], f"random.{k} (sample {i})", path, base_dir)
                             for k, v in draws.items()}} for i in range(n)]


def _check_outputs(v: Any, path: Path) -> tuple[str, ...]:
    if v is None:
        return OUTPUT_KEYS
    if not isinstance(v, list) or not v:
        raise _err(path, "outputs", f"must be a non-empty list of summary keys, got {v!r}")
    for k in v:
        if k not in OUTPUT_KEYS and k != "wall_time_s":
            raise _err(path, "outputs", f"unknown summary key {k!r}; valid keys: {', '.join(OUTPUT_KEYS)}")
    return tuple(k for k in v if k != "wall_time_s")  # the job's wall_time_s is always kept


def _lock_joints(model: Any, joints: Sequence[str]) -> Any:
    """``model`` with rigid holonomic constraints θ_j = 0 for each joint (eq. 2.25; benchmarks/zoe_rough.py)."""
    if not joints:
        return model
    from wmr_dynamics.model import JointConstraint, WmrModel

    unknown = [j for j in joints if j not in model.joint_names]
    if unknown:
        raise _Bad(f"{model.name} has no joint(s) {unknown}; its joints: {', '.join(model.joint_names)}")
    locks = tuple(JointConstraint(f"{j}_locked", {j: 1.0}) for j in joints)
    return WmrModel(frames=model.frames, wheels=model.wheels, joint_constraints=model.joint_constraints + locks,
                    joint_springs=dict(model.joint_springs), name=model.name, config=dict(model.config),
                    source=model.source, fixed_frames=dict(model.fixed_frames))


def _check_vehicles(jobs: list[dict], path: Path) -> None:
    """Load each distinct (vehicle, lock_joints) once, so broken vehicle files or joint names fail early."""
    for vehicle, locks in {(j["vehicle"], tuple(j["lock_joints"])) for j in jobs}:
        try:
            _model(vehicle, locks)
        except (_Bad, WmrError) as e:
            key = "lock_joints" if isinstance(e, _Bad) else "vehicle"
            raise _err(path, key, f"{vehicle}: {e}") from None


def _varied(jobs: list[dict]) -> tuple[str, ...]:
    return tuple(k for k in SCENARIO if len({json.dumps(j[k]) for j in jobs}) > 1)


def expand(spec: dict, path: str | Path = "<sweep>") -> Sweep:
    """Validate a parsed sweep file and expand it into jobs.

    Order: grid points (Cartesian product, the last axis fastest) × cases × Monte-Carlo samples (drawn once
    and crossed with the rest: every grid point and case sees the same draws).  Later sources override
    earlier ones: defaults < ``base`` < ``grid`` / ``cases`` / ``random`` (a key may be in only one of these).
    Raises :class:`SweepError` naming the file and the key.
    """
    path = Path(path)
    base_dir = path.parent if path.suffix else Path.cwd()
    if not isinstance(spec, dict):
        raise _err(path, "top level", f"must be a mapping with keys {', '.join(TOP_KEYS)}")
    for k in spec:
        if k not in TOP_KEYS:
            raise _err(path, k, f"unknown key; valid top-level keys: {', '.join(TOP_KEYS)}")
    name = spec.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise _err(path, "name", f"must be a non-empty string, got {name!r}")
    base = _check_scenario(spec.get("base") or {}, "base", path, base_dir)
    axes = _check_grid(spec["grid"], path, base_dir) if "grid" in spec else {}
    cases = _check_cases(spec["cases"], path, base_dir) if "cases" in spec else [{}]
    draws = _samples(spec, path, base_dir)
    sources = {"grid": set(axes), "cases": {k for c in cases for k in c}, "random": set(spec.get("random") or {})}
    for (a, ka), (b, kb) in itertools.combinations(sources.items(), 2):
        if ka & kb:
            raise _err(path, f"{b}.{sorted(ka & kb)[0]}", f"also varied in `{a}`: vary a key in one place only")
    defaults = {k: key.default for k, key in SCENARIO.items()}
    jobs = []
    for point in itertools.product(*axes.values()):
        for case in cases:
            for draw in draws:
                scenario = {**defaults, **base, **dict(zip(axes, point, strict=True)), **case}
                sample = {"sample": draw["sample"]} if "sample" in draw else {}
                scenario.update({k: v for k, v in draw.items() if k != "sample"})
                jobs.append({"job": len(jobs), **sample, **scenario})
    _check_vehicles(jobs, path)
    varied = _varied(jobs)
    group_by = spec.get("group_by")
    if group_by is None:
        group_by = [k for k in varied if k != "seed" and k not in sources["random"]]
    elif not isinstance(group_by, list) or any(k not in SCENARIO for k in group_by):
        raise _err(path, "group_by", f"must be a list of scenario keys ({', '.join(SCENARIO)}), got {group_by!r}")
    return Sweep(name, path, jobs, _check_outputs(spec.get("outputs"), path), tuple(group_by), varied)


def load_sweep(path: str | Path) -> Sweep:
    """Read, validate and expand a sweep file (YAML); raises :class:`SweepError` naming the file and key."""
    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text())
    except OSError as e:
        raise SweepError(f"{path}: cannot read the sweep file: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise SweepError(f"{path}: not valid YAML: {' '.join(str(e).split())}") from None
    return expand(spec, path)


# ---- one job --------------------------------------------------------------------------------------------
@lru_cache(maxsize=16)
def _model(vehicle: str, locks: tuple[str, ...]) -> Any:
    from wmr_dynamics.urdf import load_model

    return _lock_joints(load_model(vehicle), locks)


@lru_cache(maxsize=16)
def _ground(terrain: str, rms: float, corr_len: float, seed: int) -> Any:
    # wmr-sim's terrain spec (private helper of wmr_dynamics.cli, reused so both tools agree)
    from wmr_dynamics.cli import _terrain as cli_terrain

    return cli_terrain(argparse.Namespace(terrain=terrain, rms=rms, corr_len=corr_len, seed=seed))


def reference_engine(job: dict) -> dict:
    """Run a scenario with :class:`~wmr_dynamics.simulate.Simulator` (the Python reference path, as ``wmr-sim``).

    Returns ``SimResult.summary()`` (SI units; keys: :data:`OUTPUT_KEYS`).  Models and terrains are cached
    per process (both immutable), so jobs sharing them do not rebuild them.
    """
    from wmr_dynamics.cli import _initial_xy_yaw  # private helper of wmr-sim: start pose from x, y, yaw
    from wmr_dynamics.controllers import BodyVelocityController
    from wmr_dynamics.kinematics.enhanced import SlipParams
    from wmr_dynamics.simulate import Simulator

    model = _model(job["vehicle"], tuple(job["lock_joints"]))
    ground = _ground(job["terrain"], job["rms"], job["corr_len"], job["seed"])
    dynamics = None
    if job["mode"] == "dynamic":
        from wmr_dynamics.dynamics.force_balance import DynamicsOptions

        dynamics = DynamicsOptions.from_config(model, contact=job["contact"], actuator=job["actuator"])
    sim = Simulator(model, ground, mode=job["mode"], dt=job["dt"], integrator=job["integrator"],
                    controller=BodyVelocityController(model, job["controller"]), slip=SlipParams(tuple(job["slip"])),
                    dynamics=dynamics)
    xyz, yaw = _initial_xy_yaw(model, argparse.Namespace(x=job["x"], y=job["y"], yaw=job["yaw"]))
    q0 = sim.initial_state(xyz=xyz, yaw=yaw)
    summary = sim.run(job["duration"], (job["speed"], job["yaw_rate"]), q0=q0, progress=False).summary()
    summary["loop_wall_time_s"] = summary.pop("wall_time_s")
    return summary


#: Engines by name: ``engine(job) -> summary dict`` (the keys of :data:`OUTPUT_KEYS`).  Hook for the compiled
#: batch engine (``wmr_dynamics.compiled``): register it here at import time (Ray and process-pool workers
#: import this module) and make :func:`select_engine` route the jobs it supports to it.
ENGINES: dict[str, Callable[[dict], dict]] = {"reference": reference_engine}


def select_engine(job: dict) -> str:
    """The engine that runs ``job`` when none is forced: for now always ``"reference"``."""
    return "reference"


def run_job(job: dict, engine: str | None = None, outputs: Sequence[str] | None = None) -> dict:
    """Run one job; returns ``{job params..., outputs..., "error", "wall_time_s"}``.

    ``outputs``: summary keys to keep (default all; a dynamic-only key is None for a kinematic job).
    ``wall_time_s``: the whole job (model, terrain, simulator set-up and run), s.  A job whose simulation
    fails with a :class:`WmrError` (e.g. the vehicle leaves the terrain) is not an exception: its row has
    ``error`` set and the outputs None.
    """
    t0 = time.perf_counter()
    name = engine or select_engine(job)
    if name not in ENGINES:
        raise SweepError(f"unknown engine {name!r}; registered: {', '.join(ENGINES)}")
    try:
        summary, error = ENGINES[name](job), None
    except WmrError as e:
        summary, error = {}, f"{type(e).__name__}: {e}"
    keys = OUTPUT_KEYS if outputs is None else outputs
    return {**job, **{k: summary.get(k) for k in keys}, "error": error, "wall_time_s": time.perf_counter() - t0}


def without_timing(row: dict) -> dict:
    """``row`` without the keys that differ from run to run (wall times, real-time factor)."""
    return {k: v for k, v in row.items() if k not in TIMING_KEYS}


# ---- output files ---------------------------------------------------------------------------------------
_NAMED_COLUMNS = {"final_pose": ("final_x_m", "final_y_m", "final_z_m", "final_roll_rad", "final_pitch_rad",
                                 "final_yaw_rad"),
                  "slip": tuple(f"slip_{p}" for p in SLIP_NAMES)}


def flatten(row: dict) -> dict:
    """One CSV row: lists of numbers → ``key_i`` columns (``final_pose`` → ``final_x_m`` … ``final_yaw_rad``,
    ``slip`` → ``slip_p1`` …), dicts → ``key_sub``, lists of names → ``"a;b"``."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, dict):
            out.update({f"{k}_{s}": x for s, x in v.items()})
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            out[k] = ";".join(v)
        elif isinstance(v, list):
            names = _NAMED_COLUMNS.get(k)
            out.update({(names[i] if names and i < len(names) else f"{k}_{i}"): x for i, x in enumerate(v)})
        else:
            out[k] = v
    return out


def write_csv(rows: Sequence[dict], path: Path) -> Path:
    """Write the (flattened) rows to ``path`` atomically; columns in order of first appearance."""
    flat = [flatten(r) for r in rows]
    columns = list(dict.fromkeys(c for r in flat for c in r))
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, restval="")
        w.writeheader()
        w.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in flat)
    os.replace(tmp, path)
    return path


def read_jsonl(path: Path) -> dict[int, dict]:
    """Rows of a results.jsonl by job index (a last line cut off by an interruption is ignored)."""
    rows: dict[int, dict] = {}
    if not path.is_file():
        return rows
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines) - 1:
                break
            raise SweepError(f"{path}: line {n + 1} is not JSON; cannot resume from this file") from None
        rows[int(row["job"])] = row
    return rows


class _Results:
    """results.jsonl (appended as jobs finish) and results.csv (rewritten at most every ``csv_every`` s)."""

    def __init__(self, out: Path | None, jobs: Sequence[dict], resume: bool, csv_every: float = 2.0) -> None:
        self.out, self.rows, self.csv_every, self._last_csv = out, {}, csv_every, 0.0
        self._jsonl = None
        if out is None:
            return
        out.mkdir(parents=True, exist_ok=True)
        jsonl = out / "results.jsonl"
        if jsonl.exists() and not resume:
            raise SweepError(f"{jsonl} exists: pass --resume to continue that sweep, or use another --out")
        if resume:
            self.rows = self._matching(read_jsonl(jsonl), jobs, jsonl)
        self._jsonl = jsonl.open("a")

    @staticmethod
    def _matching(old: dict[int, dict], jobs: Sequence[dict], path: Path) -> dict[int, dict]:
        for i, row in old.items():
            if i >= len(jobs) or any(row.get(k) != v for k, v in jobs[i].items()):
                raise SweepError(f"{path}: job {i} was written by a different sweep (its parameters differ); "
                                 "use another --out")
        return old

    def add(self, row: dict) -> None:
        self.rows[row["job"]] = row
        if self._jsonl is None:
            return
        self._jsonl.write(json.dumps(row) + "\n")
        self._jsonl.flush()
        if time.monotonic() - self._last_csv > self.csv_every:
            self.write_csv()

    def ordered(self) -> list[dict]:
        return [self.rows[i] for i in sorted(self.rows)]

    def write_csv(self) -> None:
        if self.out is not None and self.rows:
            write_csv(self.ordered(), self.out / "results.csv")
            self._last_csv = time.monotonic()

    def close(self) -> None:
        """Final files: both sorted by job index."""
        if self._jsonl is None:
            return
        self._jsonl.close()
        self._jsonl = None
        jsonl = self.out / "results.jsonl"
        tmp = jsonl.with_name("results.jsonl.tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in self.ordered()))
        os.replace(tmp, jsonl)
        self.write_csv()


# ---- backends -------------------------------------------------------------------------------------------
class _Progress:
    """``done/total, elapsed, ETA`` lines on stderr."""

    def __init__(self, total: int, skipped: int, enabled: bool) -> None:
        self.total, self.done, self.enabled, self.start = total, skipped, enabled, time.perf_counter()
        self.skipped = skipped

    def update(self, row: dict) -> None:
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        ran = self.done - self.skipped
        eta = elapsed / ran * (self.total - self.done)
        status = "FAILED" if row.get("error") else f"{row['wall_time_s']:.2f} s"
        print(f"wmr-sweep: {self.done}/{self.total} done (job {row['job']}: {status}), elapsed {elapsed:.1f} s, "
              f"ETA {eta:.1f} s", file=sys.stderr, flush=True)


def _importable_run_job() -> Callable[..., dict]:
    """:func:`run_job` of the importable module (not of ``__main__`` under ``python -m``), so that workers
    unpickle it by reference."""
    import importlib

    return importlib.import_module("wmr_dynamics.sweep").run_job


def _run_local(jobs: Sequence[dict], workers: int, engine: str | None, outputs: Sequence[str],
               done: Callable[[dict], None]) -> None:
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            done(run_job(job, engine, outputs))
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # forkserver: workers fork from a clean server process that has imported this module, not from this
    # (possibly multi-threaded: numba, Ray) process.
    ctx = multiprocessing.get_context("forkserver")
    if getattr(sys.modules["__main__"].__spec__, "name", None) != __name__:  # not `python -m wmr_dynamics.sweep`
        ctx.set_forkserver_preload([__name__])
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx) as pool:
        pending = {pool.submit(_importable_run_job(), job, engine, outputs) for job in jobs}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    done(f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            raise


def import_ray(local: bool) -> Any:
    """Import Ray (lazily: the package works without it) with usage stats off; for a local instance also make
    Ray pick the loopback address as this node's IP, so that every Ray server binds to 127.0.0.1 only."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # node IP = 127.0.0.1 (ray_constants)
    try:
        import ray
        from ray._private import ray_constants
    except ImportError:
        raise SweepError("the ray backend needs Ray: pip install 'ray' (or use --backend local)") from None
    if local:  # Ray was imported before the variable was set: the constant it was read into (private)
        ray_constants.ENABLE_RAY_CLUSTER = False
    return ray


def start_local_ray(num_cpus: int) -> Any:
    """Start a local Ray instance bound to loopback, without dashboard; returns the ``ray`` module."""
    ray = import_ray(local=True)
    # address="local": always a new instance (never one found through RAY_ADDRESS or a `ray start` on this machine)
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             configure_logging=False)
    ip = ray.util.get_node_ip_address()
    if ip != "127.0.0.1":
        ray.shutdown()
        raise SweepError(f"the local Ray instance did not bind to loopback (node address {ip}); stopped it")
    return ray


def _run_ray(jobs: Sequence[dict], workers: int, address: str | None, engine: str | None,
             outputs: Sequence[str], done: Callable[[dict], None]) -> None:
    ray = import_ray(local=address is None)
    started = False
    if not ray.is_initialized():
        if address is None:
            start_local_ray(workers)
        else:
            ray.init(address=address, configure_logging=False)
        started = True
    pending: list = []
    try:
        task = ray.remote(num_cpus=1)(_importable_run_job())
        pending = [task.remote(job, engine, outputs) for job in jobs]
        while pending:
            finished, pending = ray.wait(pending, num_returns=1)
            for ref in finished:
                done(ray.get(ref))
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did: all rows (ordered by job), how many jobs ran now / were kept from before."""

    rows: list[dict]
    ran: int
    skipped: int
    wall_time_s: float


def run_sweep(sweep: Sweep, backend: str = "local", workers: int | None = None, address: str | None = None,
              out: str | Path | None = None, resume: bool = False, progress: bool = True,
              engine: str | None = None) -> SweepOutcome:
    """Run every job of ``sweep`` (skipping those already in ``out/results.jsonl`` with ``resume``).

    Args:
        backend: ``"local"`` (process pool; ``workers=1`` runs in this process) or ``"ray"``.
        workers: local processes, or the CPUs of a local Ray instance (default: the number of CPUs).
        address: Ray cluster address (``ray start --head`` prints it); None starts a local instance.
        out: folder for ``results.jsonl`` and ``results.csv`` (None: write nothing).
    """
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):  # a pool worker re-running a script
        raise RuntimeError("run_sweep was called while a worker process imported the main script: protect the "
                           "script's entry point with `if __name__ == \"__main__\":` (the local backend's "
                           "workers start with multiprocessing's forkserver method)")
    if backend not in ("local", "ray"):
        raise SweepError(f"unknown backend {backend!r}; one of local, ray")
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise SweepError(f"--workers must be >= 1, got {workers}")
    if resume and out is None:
        raise SweepError("--resume needs --out (the folder whose results.jsonl to continue)")
    t0 = time.perf_counter()
    results = _Results(Path(out) if out is not None else None, sweep.jobs, resume)
    todo = [j for j in sweep.jobs if j["job"] not in results.rows]
    bar = _Progress(len(sweep.jobs), len(sweep.jobs) - len(todo), progress)

    def done(row: dict) -> None:
        results.add(row)
        bar.update(row)

    try:
        if backend == "local":
            _run_local(todo, workers, engine, sweep.outputs, done)
        elif todo:
            _run_ray(todo, workers, address, engine, sweep.outputs, done)
    finally:
        results.close()
    return SweepOutcome(results.ordered(), len(todo), len(sweep.jobs) - len(todo), time.perf_counter() - t0)


# ---- summary table --------------------------------------------------------------------------------------
def _metrics(row: dict, outputs: Sequence[str]) -> dict[str, float]:
    flat = flatten({k: row.get(k) for k in outputs})
    return {k: float(v) for k, v in flat.items() if isinstance(v, (int, float)) and not isinstance(v, str)}


def _label(v: Any) -> str:
    if isinstance(v, str) and os.sep in v:
        return Path(v).name
    return json.dumps(v) if isinstance(v, (list, dict)) or v is None else str(v)


def group_means(rows: Sequence[dict], group_by: Sequence[str], outputs: Sequence[str]) -> list[dict]:
    """Mean of each numeric output (flattened; booleans as fractions) per combination of ``group_by`` values,
    over the rows without error; ``n``: rows averaged, ``errors``: failed rows of the group."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(json.dumps(r[k]) for k in group_by), []).append(r)
    table = []
    for members in groups.values():
        ok = [_metrics(r, outputs) for r in members if not r.get("error")]
        names = list(dict.fromkeys(k for m in ok for k in m))
        means = {k: float(np.mean([m[k] for m in ok if k in m])) for k in names}
        table.append({**{k: members[0][k] for k in group_by}, "n": len(ok),
                      "errors": len(members) - len(ok), **means})
    return table


def format_table(table: Sequence[dict], group_by: Sequence[str]) -> str:
    """A fixed-width text table of :func:`group_means`; timing columns left out."""
    if not table:
        return "(no results)"
    cols = [c for c in dict.fromkeys(k for r in table for k in r) if c not in TIMING_KEYS]
    if not any(r["errors"] for r in table):
        cols.remove("errors")
    cells = [[_label(r.get(c)) if c in group_by else _fmt(r.get(c)) for c in cols] for r in table]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    return f"{v:.5g}"


# ---- command line -----------------------------------------------------------------------------------------
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wmr-sweep", description="Run a parameter sweep / Monte-Carlo study of the "
                                "simulator described by a sweep file (docs/sweep.md), locally or on Ray.")
    p.add_argument("sweep", help="sweep file (YAML)")
    p.add_argument("--backend", default="local", choices=["local", "ray"], help="where jobs run (default local)")
    p.add_argument("--address", default=None,
                   help="ray: address of an existing cluster (e.g. 10.0.0.5:6379 or auto); default: start a "
                        "local instance on loopback")
    p.add_argument("--workers", type=int, default=None,
                   help="local: processes (1 = in this process); ray without --address: CPUs of the local "
                        "instance (default: the number of CPUs)")
    p.add_argument("--out", default=None, help="folder for results.csv and results.jsonl (default: none)")
    p.add_argument("--resume", action="store_true", help="skip the jobs already in OUT/results.jsonl")
    p.add_argument("--dry-run", action="store_true", help="list the jobs and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print one line of JSON as the last line of stdout")
    return p


def _dry_run(sweep: Sweep, as_json: bool) -> int:
    print(f"{sweep.name}: {len(sweep.jobs)} jobs; varied: {', '.join(sweep.varied) or 'nothing'}")
    for job in sweep.jobs:
        extra = [f"sample={job['sample']}"] if "sample" in job else []
        print(f"  {job['job']:>5d}  " + " ".join(extra + [f"{k}={_label(job[k])}" for k in sweep.varied]))
    if as_json:
        print(json.dumps({"name": sweep.name, "jobs": len(sweep.jobs), "varied": list(sweep.varied),
                          "dry_run": True}))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``wmr-sweep`` entry point.  Exit codes: 0 all jobs ran, 1 some jobs failed (rows with ``error``),
    2 bad input (one-line error on stderr), 130 interrupted (results so far kept in OUT)."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        sweep = load_sweep(args.sweep)
        if args.dry_run:
            return _dry_run(sweep, args.json)
        outcome = run_sweep(sweep, args.backend, args.workers, args.address, args.out, args.resume,
                            progress=not args.quiet)
    except SweepError as e:
        print(f"wmr-sweep: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"wmr-sweep: interrupted; finished jobs are in {args.out}/results.jsonl (rerun with --resume)"
              if args.out else "wmr-sweep: interrupted", file=sys.stderr)
        return 130
    table = group_means(outcome.rows, sweep.group_by, sweep.outputs)
    failed = sum(1 for r in outcome.rows if r.get("error"))
    print(f"{sweep.name}: {len(outcome.rows)} jobs ({outcome.ran} run, {outcome.skipped} resumed, {failed} failed) "
          f"in {outcome.wall_time_s:.1f} s on {args.backend}; means over "
          f"{', '.join(k for k in sweep.varied if k not in sweep.group_by) or 'nothing'}:")
    print(format_table(table, sweep.group_by))
    if args.out:
        print(f"wrote {Path(args.out) / 'results.csv'} and {Path(args.out) / 'results.jsonl'}")
    if args.json:
        print(json.dumps({"name": sweep.name, "jobs": len(outcome.rows), "ran": outcome.ran,
                          "skipped": outcome.skipped, "failed": failed, "backend": args.backend,
                          "wall_time_s": outcome.wall_time_s, "out": args.out, "group_by": list(sweep.group_by),
                          "groups": table}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
