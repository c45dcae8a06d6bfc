"""Thesis §2.5.4 (Tables 2.6–2.7): the Zoë rover driven straight over the ten rough benchmark terrains.

The set-up of ``benchmarks/zoe_rough.py`` (the study and its report) and of the tests that check it:

- vehicle: the bundled Zoë (thesis Table E.2) with both steering joints held straight
  (:func:`zoe_model`; VEHICLES.md: "both steer joints are held fixed (straight) in the speed benchmark");
- terrain: ``zoe_rough_k.txt``, k = 1..10, of the thesis author's library (RMS height ≈ 0.15 m, correlation
  length ≈ 0.8 m; :func:`load_terrain`);
- controller: ``BodyVelocityController(model, "naive")`` (all four wheels at v / r), straight at ``SPEED``;
- models (:data:`MODELS`): dynamic with piecewise-linear, Pacejka or Ishigami contact (direct or with its
  lookup table) and ideal actuators (§2.4.4), or the stabilized-DAE kinematic model;
- start: the YAML's initial pose put on the terrain (§2.2.4, :func:`initial_state`); dynamic runs start
  already moving at the command by default (:func:`moving_start`, as the thesis author's Zoë demo);
- metric of Table 2.7: final position (3D Euclidean) and |yaw| error of a run relative to the same model at
  Δt = :data:`DT_REF` on the same terrain (:func:`pose_errors`).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

import wmr_dynamics as wmr
from wmr_dynamics import spatial
from wmr_dynamics.contact_models import contact_model_from_config
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.model import JointConstraint, WmrModel
from wmr_dynamics.scenarios.paths import ROUGH_TERRAINS, rough_terrain_path
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import HeightGrid, Terrain, load_wmrde_grid

TERRAIN_DIR = ROUGH_TERRAINS
TERRAINS = tuple(range(1, 11))  # zoe_rough_1 .. zoe_rough_10
SPEED = 0.5  # m/s (VEHICLES.md; the thesis text says 1 m/s)
DURATION = 10.0  # s
DT_REF = 0.01  # s: Table 2.7's errors are relative to the same model at this step
START = "moving"  # dynamic runs: "moving" (q̇'(0) = the command, as wmrde's Zoë demo) or "rest" (q̇'(0) = 0)
STEER_JOINTS = ("s1_joint", "s2_joint")  # held straight in the benchmark

DYNAMIC = ("linear", "pacejka", "ishigami", "ishigami_lut")
MODELS = (*DYNAMIC, "kinematic")


def zoe_model(lock_steer: bool = True) -> WmrModel:
    """The bundled Zoë; by default with both steering joints held straight (the benchmark's setting).

    The hold is two rigid holonomic joint constraints θ_s1 = θ_s2 = 0 (eq. 2.25): rigid rows of the force
    balance, exact constraints of the kinematic solve.  ``lock_steer=False``: the bundled model (passive,
    unconstrained steering).
    """
    model = wmr.load_model("zoe")
    if not lock_steer:
        return model
    locks = tuple(JointConstraint(f"{j}_straight", {j: 1.0}) for j in STEER_JOINTS)
    return WmrModel(frames=model.frames, wheels=model.wheels, joint_constraints=model.joint_constraints + locks,
                    joint_springs=dict(model.joint_springs), name=model.name, config=dict(model.config),
                    source=model.source, fixed_frames=dict(model.fixed_frames))


def terrain_path(k: int, terrain_dir: Path | None = None) -> Path:
    """Path of benchmark terrain ``zoe_rough_k.txt`` (k = 1..10) in ``terrain_dir`` (default the shared data)."""
    return rough_terrain_path(f"zoe_rough_{k}", terrain_dir)


def load_terrain(k: int, terrain_dir: Path | None = None) -> HeightGrid:
    """Benchmark terrain ``zoe_rough_k.txt`` (k = 1..10) as a :class:`HeightGrid` (m)."""
    return load_wmrde_grid(terrain_path(k, terrain_dir))


def dynamics_options(model: WmrModel, kind: str) -> DynamicsOptions:
    """Ideal actuators and the contact model ``kind`` (one of :data:`DYNAMIC`; ``ishigami_lut``: Ishigami with
    its precomputed lookup table, as the thesis's "terramechanics-based" column)."""
    if kind == "ishigami_lut":
        contact = contact_model_from_config({"model": "ishigami", "params": {"lookup_table": True}},
                                            model.wheel_radii, model.wheel_widths, mass=model.total_mass,
                                            n_wheels=model.num_wheels)
        return DynamicsOptions(contact=contact)
    if kind not in DYNAMIC:
        raise ValueError(f"unknown dynamic model {kind!r}; one of {', '.join(DYNAMIC)}")
    return DynamicsOptions.from_config(model, contact=kind, actuator="ideal")


def make_simulator(model: WmrModel, terrain: Terrain, kind: str, dt: float,
                   options: DynamicsOptions | None = None, engine: str = "auto") -> Simulator:
    """A Simulator for one of :data:`MODELS` (Δt ``dt`` s) with the benchmark's naive controller."""
    ctrl = BodyVelocityController(model, "naive")
    if kind == "kinematic":
        return Simulator(model, terrain, mode="kinematic", dt=dt, controller=ctrl, engine=engine)
    return Simulator(model, terrain, mode="dynamic", dt=dt, controller=ctrl,
                     dynamics=options or dynamics_options(model, kind), engine=engine)


def initial_state(model: WmrModel, terrain: Terrain) -> NDArray:
    """The YAML's initial pose (x = y = 0, z = r + 0.119 − 0.01, yaw 0) put on the terrain (§2.2.4)."""
    return make_simulator(model, terrain, "kinematic", 0.04).initial_state()


def moving_start(model: WmrModel, speed: float) -> NDArray:
    """q̇'(0) for a rover already driving straight at ``speed`` (m/s): body v_x = speed, every actuated wheel at
    speed / r (the naive controller's rates), everything else 0 — as wmrde's Zoë demo initializes it."""
    qvel = np.zeros(model.num_dof)
    qvel[3] = speed  # [ω_b; v_b; θ̇]: body-frame forward velocity
    for w, f in enumerate(model.wheel_frame):
        if model.actuated[f]:
            qvel[f + 5] = speed / model.wheel_radii[w]
    return qvel


@dataclasses.dataclass
class Run:
    """One simulation: ``q`` (n+1, nq) states at times ``t`` (s); ``iterations`` (n,) force-balance iterations
    per step (dynamic; empty for the kinematic model); ``wall_s``: wall time of the stepping loop."""

    kind: str
    dt: float
    terrain: int
    t: NDArray
    q: NDArray
    iterations: NDArray
    wall_s: float
    variant: str = ""  # "" (benchmark), "passive" (steer free), "1mps" (thesis text's speed), "1mps-rest" (from rest)
    max_iterations: int = 0  # the force balance's iteration limit (0: kinematic)
    cpu_s: float = float("nan")  # process CPU time of the whole ``Simulator.run`` call
    unconverged: int = 0  # steps whose force balance missed its tolerance even after retaking them as sub-steps

    @property
    def steps(self) -> int:
        return len(self.t) - 1

    @property
    def mean_iterations(self) -> float:
        return float(self.iterations.mean()) if self.iterations.size else float("nan")

    def state_at(self, t: float | None = None) -> NDArray:
        """State at time t (s; the final state by default); t must be a multiple of dt."""
        if t is None:
            return self.q[-1]
        k = int(round(t / self.dt))
        if abs(k * self.dt - t) > 1e-9 or not 0 <= k <= self.steps:
            raise ValueError(f"t = {t} s is not a step of this run (dt {self.dt} s, {self.steps} steps)")
        return self.q[k]


def run_one(model: WmrModel, terrain: Terrain, kind: str, dt: float, q0: NDArray, *, terrain_id: int = 0,
            duration: float = DURATION, speed: float = SPEED, options: DynamicsOptions | None = None,
            variant: str = "", start: str = START) -> Run:
    """Drive straight at ``speed`` (m/s) for ``duration`` (s) with model ``kind`` and step ``dt`` (s) from
    ``q0``; a dynamic run starts at rest (``start="rest"``) or at the commanded velocity (:func:`moving_start`)."""
    if start not in ("moving", "rest"):
        raise ValueError(f"start must be 'moving' or 'rest', got {start!r}")
    sim = make_simulator(model, terrain, kind, dt, options)
    qvel0 = moving_start(model, speed) if kind != "kinematic" and start == "moving" else None
    cpu0 = time.process_time()
    res = sim.run(duration, (speed, 0.0), q0=q0, progress=False, qvel0=qvel0)
    cpu = time.process_time() - cpu0
    it = res.iterations[:-1] if res.iterations is not None else np.zeros(0)  # the last row is not a step
    options = getattr(sim.compiled, "options", None)  # dynamic mode's DynamicsOptions
    limit = options.max_iterations if options is not None else 0
    conv = getattr(res, "converged", None)
    unconverged = int(np.count_nonzero(~conv[:-1])) if conv is not None else 0
    return Run(kind, dt, terrain_id, res.t, res.q, it, res.wall_time_s, variant, limit, cpu, unconverged)


def _wrap(a: float) -> float:
    return float((a + np.pi) % (2 * np.pi) - np.pi)


def pose_errors(run: Run, ref: Run, t: float | None = None) -> tuple[float, float]:
    """(position error m, |yaw error| rad) of ``run`` relative to ``ref`` at time t (s; default: the end)."""
    a, b = run.state_at(t), ref.state_at(t)
    yaw_a, yaw_b = spatial.quat_to_rpy(a[:4])[2], spatial.quat_to_rpy(b[:4])[2]
    return float(np.linalg.norm(a[4:7] - b[4:7])), abs(_wrap(yaw_a - yaw_b))
