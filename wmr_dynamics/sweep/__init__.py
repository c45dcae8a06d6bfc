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

Modules: :mod:`~wmr_dynamics.sweep.scenario` (scenario keys, value checks, :class:`SweepError`),
:mod:`~wmr_dynamics.sweep.spec` (sweep file validation and expansion), :mod:`~wmr_dynamics.sweep.job` (one job,
the engines), :mod:`~wmr_dynamics.sweep.store` (results.jsonl / results.csv), :mod:`~wmr_dynamics.sweep.local`
and :mod:`~wmr_dynamics.sweep.ray_backend` (the backends), :mod:`~wmr_dynamics.sweep.runner` (:func:`run_sweep`),
:mod:`~wmr_dynamics.sweep.table` (the summary table), :mod:`~wmr_dynamics.sweep.cli` (``wmr-sweep``).  The names
below are the public interface; import them from ``wmr_dynamics.sweep``.  The engine routing hook
:func:`select_engine` is looked up here by :func:`run_job`, so it is replaced by assigning to this package.
"""

from pathlib import Path as Path  # re-exported: sweep.Path, as before the split

from wmr_dynamics.errors import WmrError as WmrError
from wmr_dynamics.sweep.cli import main, parser
from wmr_dynamics.sweep.job import ENGINES, reference_engine, run_job, select_engine, without_timing
from wmr_dynamics.sweep.ray_backend import import_ray, start_local_ray
from wmr_dynamics.sweep.runner import SweepOutcome, run_sweep
from wmr_dynamics.sweep.scenario import (
    ACTUATORS,
    CONTACTS,
    DYNAMIC_SUMMARY_KEYS,
    INTEGRATORS,
    MODES,
    OUTPUT_KEYS,
    SCENARIO,
    SLIP_NAMES,
    SUMMARY_KEYS,
    TERRAIN_PRESETS,
    TERRAIN_SUFFIXES,
    TIMING_KEYS,
    SweepError,
)
from wmr_dynamics.sweep.spec import DISTRIBUTIONS, TOP_KEYS, Sweep, expand, load_sweep
from wmr_dynamics.sweep.store import flatten, read_jsonl, write_csv
from wmr_dynamics.sweep.table import format_table, group_means

__all__ = [
    "ACTUATORS", "CONTACTS", "DISTRIBUTIONS", "DYNAMIC_SUMMARY_KEYS", "ENGINES", "INTEGRATORS", "MODES",
    "OUTPUT_KEYS", "SCENARIO", "SLIP_NAMES", "SUMMARY_KEYS", "TERRAIN_PRESETS", "TERRAIN_SUFFIXES",
    "TIMING_KEYS", "TOP_KEYS", "Sweep", "SweepError", "SweepOutcome", "WmrError", "expand", "flatten",
    "format_table", "group_means", "import_ray", "load_sweep", "main", "parser", "read_jsonl", "reference_engine",
    "run_job", "run_sweep", "select_engine", "start_local_ray", "without_timing", "write_csv",
]
