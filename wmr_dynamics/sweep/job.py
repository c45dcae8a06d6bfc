"""One job: :func:`run_job` turns a resolved scenario into a simulation (through an engine of :data:`ENGINES`)
and a result row.  This is the function the backends run, in this process or in workers.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from wmr_dynamics.errors import WmrError
from wmr_dynamics.sweep.scenario import OUTPUT_KEYS, TIMING_KEYS, SweepError, _Bad


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


def _select_engine() -> Callable[[dict], str]:
    """``wmr_dynamics.sweep.select_engine`` as it is now: the routing hook is replaced on the package (by the
    compiled engine, or a test), which this module's own global name would not see."""
    return getattr(sys.modules.get(__package__ or ""), "select_engine", select_engine)


def run_job(job: dict, engine: str | None = None, outputs: Sequence[str] | None = None) -> dict:
    """Run one job; returns ``{job params..., outputs..., "error", "wall_time_s"}``.

    ``outputs``: summary keys to keep (default all; a dynamic-only key is None for a kinematic job).
    ``wall_time_s``: the whole job (model, terrain, simulator set-up and run), s.  A job whose simulation
    fails with a :class:`WmrError` (e.g. the vehicle leaves the terrain) is not an exception: its row has
    ``error`` set and the outputs None.
    """
    t0 = time.perf_counter()
    name = engine or _select_engine()(job)
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
