"""Sweep files: validation and expansion into jobs (:func:`load_sweep`, :func:`expand`, :class:`Sweep`).

Every error is a :class:`~wmr_dynamics.sweep.scenario.SweepError` whose message names the file, the key (as a
path such as ``grid.dt[1]`` or ``random.rms (sample 3)``) and what is wrong.
"""

from __future__ import annotations

import itertools
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from wmr_dynamics.errors import WmrError
from wmr_dynamics.sweep.job import _model
from wmr_dynamics.sweep.scenario import OUTPUT_KEYS, SCENARIO, SweepError, _Bad, _number, _seed

TOP_KEYS = ("name", "description", "base", "grid", "cases", "samples", "random", "sweep_seed", "outputs",
            "group_by")
DISTRIBUTIONS = ("uniform", "normal", "randint", "choice")


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
