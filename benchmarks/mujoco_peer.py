#!/usr/bin/env python3
"""MuJoCo as a peer benchmark (issue 5, item 4): the Zoë rough-terrain benchmark in MuJoCo and in ours.

The same vehicle and ground as ``benchmarks/zoe_rough.py``: Zoë with both steering joints held straight,
commanded straight at 0.5 m/s for 10 s (all four wheels at v / r) on the ten thesis terrains
``rough_terrains/zoe_rough_{1..10}.txt``, starting at rest from our contact-initialized state (§2.2.4).
MuJoCo is a peer and a test oracle only: the ``wmr_dynamics`` package never imports it.

Reported, per terrain and overall: MuJoCo's largest stable timestep, its real-time factor there (and at
Δt = 0.04 s if stable), ours at Δt = 0.04 s (the public ``Simulator`` API, so the figures follow our engine
as it gets faster), and the final-pose differences between the engines, each at its own step, with both
also compared with our Δt = 0.01 s run.  Writes the section ``mujoco`` of docs/benchmarks.md (through
``_report.update_section``; the rest of that file belongs to benchmarks/speed.py) and
docs/figures/mujoco_peer.png.

The MuJoCo model (:func:`~wmr_dynamics.io.mjcf.mjcf_from_model`, :mod:`wmr_dynamics.io.mjcf`) is generated
from our ``WmrModel``:

- one body per frame with the same parent tree, pose ``T0[i]`` in the parent, the frame's mass, centre of
  mass and inertia about the centre of mass (``fullinertia``; ``inertiafromgeom="false"``, so geoms add no
  mass); a free joint for the body frame; hinge / slide joints along the joint-frame axis of our joint
  types RX…PZ (our joint frame is the child frame at θ = 0, ``T_i^p = T0 · J(θ)``, as MuJoCo's joint in the
  child body).  Joints held by a single-joint constraint ``θ = 0`` (Zoë's steering in the benchmark model
  ``wmr_dynamics.scenarios.zoe_rough.zoe_model()``) or named in ``locked`` are left out: the child body is
  welded to its parent, which holds them exactly straight.  Other one- and two-joint linear constraints become joint
  equalities.  Joint limits are left out by default (our dynamic model does not enforce them either).
- wheels: cylinder geoms (radius, width of the model) about the wheel frame's y axis; the only colliding
  geoms, with the terrain only.  Our "cylinder" wheel contacts the ground along its mid-plane circle
  (thesis §2.2.1) — MuJoCo's has a width, so on a side slope its edge touches first (≤ w/2·tan(slope)).
- terrain: an ``hfield`` on the grid's nodes (see :func:`hfield_xml`); flat ground (``terrain=None``) is
  a plane at z = 0.
- contact: friction μ = 1 (the linear model's), ``condim 3`` and the pyramidal friction cone (our linear
  model's C.7–C.8 pyramid); ``solref`` and ``solimp`` are MuJoCo's defaults, (0.02 s, 1) and (0.9, 0.95,
  0.001, 0.5, 2).  MuJoCo's ``refsafe`` raises timeconst to 2·Δt, so its contact softens above Δt = 0.01 s.
  Tried first and rejected: ``solref`` matched to the vertical mode of our linear contact on one wheel
  (:func:`solref_from_linear`: at full impedance MuJoCo's contact follows r'' = −(1/(tc·dr))² r − (2/tc) r',
  so dampratio = kd / (2√(kp·m)) = 0.55 and timeconst = 1/(ω·dampratio) = 0.082 s with ω = √(kp/m), m the
  load of one wheel).  That soft contact lets the thin (7 cm) cylinders sink 2–8 cm into the hfield, deep
  enough that a single hfield prism's minimum-penetration direction turns sideways: contacts with normals
  ±y on the prisms' side walls push the rover sideways or roll it over, and the final pose changes by
  decimetres between Δt = 0.001 and 0.004 s.  Either way MuJoCo's static penetration is set by the
  impedance, (1 − d)·g / ω² ≈ 1 mm, where ours sinks 2 cm (kp = m·g/(4·0.02 m)); matching that would need
  d ≈ 0.02, which would also make the friction rows very soft (they share the impedance).  Unlike our
  linear model (a viscous slip force c·v capped at μ·f_z), MuJoCo's friction is a (soft) constraint: no
  creep below the cap.
- actuators: one ``velocity`` actuator per wheel joint, ctrl = v / r (the naive controller), gain kv = 2000
  N·m·s/rad (Zoë's PI gain Kp in VEHICLES.md), no torque limit — close to our ideal actuators (wheel rates
  = commands).  ``integrator="implicitfast"`` (MuJoCo's recommendation with velocity actuators: the kv
  damping is integrated implicitly; the explicit Euler integrator is unstable with kv·Δt / I_wheel ≫ 2).
  Solver: MuJoCo's defaults (Newton, 100 iterations, tolerance 1e-8).

Start: both engines start at rest from our contact-initialized state, the wheels commanded at v / r from
t = 0 (no settling).  There our thin-disk wheels just touch our bilinear surface, but MuJoCo's 7 cm wide
cylinders on its triangulated surface penetrate by up to ~2 cm; MuJoCo's penetration recovery then
launches the rover (up to 2.7 m/s at Δt ≥ 0.004 s), so the MuJoCo body is first raised by its deepest
initial penetration (``run_mujoco(lift=True)``, ``MjRun.lift_m``) and drops the few millimetres.

Timing: MuJoCo — the ``mujoco.mj_step`` loop only (``mj_step(m, d, nstep=k)`` between pose samples every
0.04 s; compilation excluded), fastest of ``--repeat`` runs; ours — ``SimResult.wall_time_s`` of
``Simulator.run`` (its stepping loop), fastest of ``--repeat`` runs.

A MuJoCo run is **stable** at Δt when the state stays finite, MuJoCo raised no bad-qacc / qvel / qpos
warning (on those it resets the state), the vehicle stays upright (|roll|, |pitch| < 45° at every 0.04 s
sample) and its final pose is within 0.1 m (position) and 3° (roll, pitch, yaw) of MuJoCo's Δt = 0.001 s run.

Usage::

    python benchmarks/mujoco_peer.py                  # 10 terrains → docs/benchmarks.md (section), figure
    python benchmarks/mujoco_peer.py --quick          # terrains 1,2, 1 repetition → out/mujoco_quick/
    python benchmarks/mujoco_peer.py --terrains 1,2   # chosen terrains, written to docs/
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

import zoe_rough as zr  # noqa: E402  (its table renderer)
from _report import figures_table, update_section  # noqa: E402

from wmr_dynamics import spatial  # noqa: E402
from wmr_dynamics.io.mjcf import mjcf_from_model, qpos_from_state  # noqa: E402
from wmr_dynamics.model import WmrModel  # noqa: E402
from wmr_dynamics.scenarios import zoe_rough as zoe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STEER = zoe.STEER_JOINTS
SPEED, DURATION = zoe.SPEED, zoe.DURATION
DTS = (0.001, 0.002, 0.004, 0.005, 0.008, 0.01, 0.02, 0.04)  # MuJoCo steps tried (s)
DT_MJ_REF = 0.001  # MuJoCo's reference step for the stability test
DT_OURS = 0.04  # our engine's benchmark step
DT_OURS_REF = 0.01  # our reference step (zoe_rough.DT_REF)
SAMPLE_DT = 0.04  # s between recorded poses (both engines' paths)
POS_TOL = 0.1  # m: final position within this of the Δt = 0.001 run
ANG_TOL = np.radians(3.0)  # rad: final roll, pitch, yaw within this of the Δt = 0.001 run
UPRIGHT = np.radians(45.0)  # rad: |roll|, |pitch| bound along the run
BAD = ("mjWARN_BADQACC", "mjWARN_BADQVEL", "mjWARN_BADQPOS")
SECTION = "mujoco"


# ---- running MuJoCo -----------------------------------------------------------------------------------------
def set_state(mjm: mujoco.MjModel, mjd: mujoco.MjData, model: WmrModel, q: NDArray) -> None:
    """Put our state ``q = [quat xyzw; position; θ]`` into ``mjd`` (zero velocity, time 0, controls kept)."""
    ctrl = mjd.ctrl.copy()
    mujoco.mj_resetData(mjm, mjd)
    mjd.ctrl[:] = ctrl
    mjd.qpos[:] = qpos_from_state(mjm, model, q)
    mujoco.mj_forward(mjm, mjd)


def _pose(qpos7: NDArray) -> NDArray:
    """(x, y, z, roll, pitch, yaw) from a free joint's qpos (position, quat wxyz)."""
    w, x, y, z = qpos7[3:7]
    return np.r_[qpos7[:3], spatial.quat_to_rpy(np.array([x, y, z, w]))]


def pose_of_state(q: NDArray) -> NDArray:
    """(x, y, z, roll, pitch, yaw) of our state vector (m, rad)."""
    return np.r_[q[4:7], spatial.quat_to_rpy(q[:4])]


@dataclass
class MjRun:
    """One MuJoCo run: ``pose`` (k, 6) = x, y, z, roll, pitch, yaw at times ``t``; ``wall_s``: the mj_step loop."""

    dt: float
    t: NDArray
    pose: NDArray
    wall_s: float
    warnings: dict[str, int]
    terrain: int = 0
    stable: bool | None = None  # set by check_stable (against the Δt = 0.001 run)
    reason: str = ""  # why not stable
    lift_m: float = 0.0  # m the body was raised at the start (MuJoCo's deepest initial penetration)

    @property
    def final(self) -> NDArray:
        return self.pose[-1]

    @property
    def finite(self) -> bool:
        return bool(np.all(np.isfinite(self.pose)))

    @property
    def bad_warnings(self) -> int:
        return sum(self.warnings.get(w, 0) for w in BAD)

    @property
    def upright(self) -> bool:
        return bool(self.finite and np.all(np.abs(self.pose[:, 3:5]) < UPRIGHT))

    @property
    def rtf(self) -> float:
        return float(self.t[-1] / self.wall_s) if self.wall_s > 0 else float("nan")

    @property
    def steps(self) -> int:
        return int(round(self.t[-1] / self.dt))


def run_mujoco(mjm: mujoco.MjModel, model: WmrModel, q0: NDArray, dt: float, *, duration: float = DURATION,
               speed: float = SPEED, sample_dt: float = SAMPLE_DT, terrain_id: int = 0, lift: bool = True) -> MjRun:
    """Drive straight at ``speed`` (wheels at v / r) for ``duration`` from our state ``q0`` at rest.

    ``mjm.opt.timestep`` is set to ``dt``.  ``lift``: raise the body by MuJoCo's deepest initial penetration
    (module docstring, "Start").  The pose is sampled every ``sample_dt`` (every k = sample_dt/dt steps);
    ``wall_s`` times the stepping loop only (``mj_step(m, d, nstep=k)`` between the samples).  A non-finite
    state ends the run early (its remaining samples stay NaN).
    """
    mjm.opt.timestep = dt
    mjd = mujoco.MjData(mjm)
    for k, f in enumerate(model.wheel_frame):
        a = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_ACTUATOR, f"{model.joint_names[int(f) - 1]}_vel")
        if a >= 0:
            mjd.ctrl[a] = speed / float(model.wheel_radii[k])
    set_state(mjm, mjd, model, q0)
    adr = mjm.jnt_qposadr[mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_JOINT, "root")]
    raised = 0.0
    if lift:
        raised = max(0.0, -min([float(c.dist) for c in mjd.contact[:mjd.ncon]] + [0.0]))
        mjd.qpos[adr + 2] += raised
        mujoco.mj_forward(mjm, mjd)
    n = int(round(duration / dt))
    every = max(1, int(round(sample_dt / dt)))
    n_samples = -(-n // every)
    Q = np.full((n_samples + 1, 7), np.nan)
    t = np.minimum(np.arange(n_samples + 1) * every, n) * dt
    Q[0] = mjd.qpos[adr:adr + 7]
    done, k = 0, 0
    start = time.perf_counter()
    while done < n:
        m = min(every, n - done)
        mujoco.mj_step(mjm, mjd, nstep=m)
        done += m
        k += 1
        Q[k] = mjd.qpos[adr:adr + 7]
        if not np.isfinite(Q[k]).all():
            break
    wall = time.perf_counter() - start
    warnings = {w: int(mjd.warning[getattr(mujoco.mjtWarning, w)].number) for w in mujoco.mjtWarning.__members__
                if w.startswith("mjWARN_")}
    pose = np.array([_pose(r) if np.isfinite(r).all() else np.full(6, np.nan) for r in Q])
    return MjRun(dt, t, pose, wall, {w: c for w, c in warnings.items() if c}, terrain_id, lift_m=raised)


def check_stable(run: MjRun, ref: MjRun) -> MjRun:
    """Set ``run.stable`` / ``run.reason`` by the module docstring's test against the Δt = 0.001 s ``ref``."""
    d = pose_difference(run.final, ref.final) if run.finite else None
    if not run.finite:
        run.stable, run.reason = False, "non-finite state"
    elif run.bad_warnings:
        run.stable, run.reason = False, "MuJoCo warning " + ", ".join(f"{k[7:]}×{v}" for k, v in run.warnings.items())
    elif not run.upright:
        run.stable, run.reason = False, "tipped over"
    elif d is not None and d[0] > POS_TOL:
        run.stable, run.reason = False, f"{d[0]:.2f} m off"
    elif d is not None and d[2] > ANG_TOL:
        run.stable, run.reason = False, f"{np.degrees(d[2]):.0f}° off"
    else:
        run.stable, run.reason = True, ""
    return run


def _wrap(a: NDArray | float) -> NDArray:
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def pose_difference(a: NDArray, b: NDArray) -> tuple[float, float, float]:
    """(3-D position difference m, |yaw difference| rad, largest |roll, pitch, yaw difference| rad) of poses."""
    ang = np.abs(_wrap(a[3:6] - b[3:6]))
    return float(np.linalg.norm(a[:3] - b[:3])), float(ang[2]), float(ang.max())


# ---- our engine ---------------------------------------------------------------------------------------------
@dataclass
class OurRun:
    """Our dynamic Zoë (linear contact): ``pose`` (k, 6) at ``t``; ``wall_s`` = ``SimResult.wall_time_s``."""

    dt: float
    t: NDArray
    pose: NDArray
    wall_s: float
    engine: str
    terrain: int = 0

    @property
    def final(self) -> NDArray:
        return self.pose[-1]

    @property
    def rtf(self) -> float:
        return float(self.t[-1] / self.wall_s)

    @property
    def steps(self) -> int:
        return len(self.t) - 1


def our_simulator(model: WmrModel, terrain: object, dt: float, engine: str = "auto") -> object:
    """Our benchmark simulator (zoe_rough's): dynamic, linear contact, ideal actuators, naive controller."""
    from wmr_dynamics.controllers import BodyVelocityController
    from wmr_dynamics.simulate import Simulator

    return Simulator(model, terrain, mode="dynamic", dt=dt, controller=BodyVelocityController(model, "naive"),
                     dynamics=zoe.dynamics_options(model, "linear"), engine=engine)


def run_ours(model: WmrModel, terrain: object, q0: NDArray, dt: float, *, duration: float = DURATION,
             speed: float = SPEED, engine: str = "auto", terrain_id: int = 0) -> OurRun:
    """Our engine through the public ``Simulator`` API, from ``q0`` at rest."""
    sim = our_simulator(model, terrain, dt, engine)
    res = sim.run(duration, (speed, 0.0), q0=q0, progress=False)
    pose = np.array([pose_of_state(q) for q in res.q])
    return OurRun(dt, np.asarray(res.t), pose, float(res.wall_time_s), getattr(sim, "engine_used", engine),
                  terrain_id)


# ---- the study ----------------------------------------------------------------------------------------------
def _log(msg: str, quiet: bool = False) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


@dataclass
class TerrainResult:
    """Everything measured on one terrain."""

    terrain: int
    mj: dict[float, MjRun]  # one run per Δt (stability)
    ours: dict[float, OurRun]  # DT_OURS (fastest of the repeats) and DT_OURS_REF
    mj_timed: dict[float, MjRun] = field(default_factory=dict)  # fastest repeat at the timed steps

    @property
    def largest_stable(self) -> float | None:
        ok = [dt for dt, r in self.mj.items() if r.stable]
        return max(ok) if ok else None


def study(terrains: Sequence[int], dts: Sequence[float] = DTS, repeat: int = 3, engine: str = "auto",
          terrain_dir: Path | None = None, quiet: bool = False) -> tuple[list[TerrainResult], float | None, str]:
    """MuJoCo at every Δt and ours at 0.04 / 0.01 s on every terrain, then the timing repeats.

    Returns the per-terrain results, the overall largest stable MuJoCo step (stable on every terrain) and
    the engine our Simulator used.
    """
    if DT_MJ_REF not in dts:
        raise ValueError(f"dts must include MuJoCo's reference step {DT_MJ_REF} s")
    model = zoe.zoe_model()
    _log("warming up our engine (numba kernels) ...", quiet)
    g1 = zoe.load_terrain(terrains[0], terrain_dir)
    q1 = zoe.initial_state(model, g1)
    try:
        run_ours(model, g1, q1, DT_OURS, duration=0.2, engine=engine)
    except ImportError as e:  # a half-installed compiled engine: say so, and time the Python path
        _log(f"our engine '{engine}' failed to import ({e}); using engine='python'", quiet)
        engine = "python"
        run_ours(model, g1, q1, DT_OURS, duration=0.2, engine=engine)
    results: list[TerrainResult] = []
    used = engine
    start = time.perf_counter()
    for tid in terrains:
        grid = zoe.load_terrain(tid, terrain_dir)
        q0 = zoe.initial_state(model, grid)
        mjm = mujoco.MjModel.from_xml_string(mjcf_from_model(model, grid))
        mj = {dt: run_mujoco(mjm, model, q0, dt, terrain_id=tid) for dt in sorted(dts)}
        for dt in mj:
            check_stable(mj[dt], mj[DT_MJ_REF])
        ours = {DT_OURS: min((run_ours(model, grid, q0, DT_OURS, engine=engine, terrain_id=tid)
                             for _ in range(max(1, repeat))), key=lambda r: r.wall_s),
                DT_OURS_REF: run_ours(model, grid, q0, DT_OURS_REF, engine=engine, terrain_id=tid)}
        used = ours[DT_OURS].engine
        res = TerrainResult(tid, mj, ours)
        results.append(res)
        flags = " ".join(f"{dt:g}:{'ok' if r.stable else 'NO'}" for dt, r in mj.items())
        _log(f"  terrain {tid}: MuJoCo {flags}  (largest stable {res.largest_stable}, lift "
             f"{1000 * mj[DT_MJ_REF].lift_m:.1f} mm); ours dt {DT_OURS:g}: {ours[DT_OURS].rtf:.0f}x real time  "
             f"({time.perf_counter() - start:.0f} s)", quiet)
    stable_all = [dt for dt in sorted(dts) if all(r.mj[dt].stable for r in results)]
    overall = max(stable_all) if stable_all else None
    timed = sorted({dt for dt in (overall, DT_OURS) if dt is not None and any(r.mj[dt].stable for r in results)})
    _log(f"timing MuJoCo at dt {', '.join(f'{d:g}' for d in timed)} s ({repeat} repetitions) ...", quiet)
    for res in results:
        grid = zoe.load_terrain(res.terrain, terrain_dir)
        q0 = zoe.initial_state(model, grid)
        mjm = mujoco.MjModel.from_xml_string(mjcf_from_model(model, grid))
        for dt in timed:
            runs = [res.mj[dt]] + [run_mujoco(mjm, model, q0, dt, terrain_id=res.terrain)
                                   for _ in range(max(1, repeat) - 1)]
            res.mj_timed[dt] = min(runs, key=lambda r: r.wall_s)
    return results, overall, used


# ---- report -------------------------------------------------------------------------------------------------
def _rtf(sim_s: float, wall_s: float) -> str:
    return f"{sim_s / wall_s:,.0f}" if wall_s > 0 else "–"


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "–" if x is None or not np.isfinite(x) else format(x, fmt)


def summary(results: Sequence[TerrainResult], overall: float | None) -> dict:
    """Overall figures: real-time factors (sum of simulated over sum of wall time) and mean pose differences."""
    out: dict = {"overall_dt": overall}
    for key, runs in (("mj_dt", [r.mj_timed.get(overall) for r in results]),
                      ("mj_004", [r.mj_timed.get(DT_OURS) if r.mj[DT_OURS].stable else None for r in results]),
                      ("ours_004", [r.ours[DT_OURS] for r in results]),
                      ("ours_001", [r.ours[DT_OURS_REF] for r in results])):
        ok = [x for x in runs if x is not None]
        if ok and len(ok) == len(runs):
            sim, wall, steps = sum(x.t[-1] for x in ok), sum(x.wall_s for x in ok), sum(x.steps for x in ok)
            out[key] = (sim / wall, 1e6 * wall / steps)
        else:
            out[key] = None
    return out


def diffs(res: TerrainResult, overall: float | None) -> dict[str, tuple[float, float, float]]:
    """Final-pose differences on one terrain: pairs of (engine, Δt)."""
    ours, ref = res.ours[DT_OURS].final, res.ours[DT_OURS_REF].final
    out = {"ours.04-ours.01": pose_difference(ours, ref),
           "mj.001-ours.01": pose_difference(res.mj[DT_MJ_REF].final, ref)}
    if overall is not None:
        mj = res.mj[overall].final
        out["mj*-ours.04"] = pose_difference(mj, ours)
        out["mj*-ours.01"] = pose_difference(mj, ref)
        out["mj*-mj.001"] = pose_difference(mj, res.mj[DT_MJ_REF].final)
    return out


def format_tables(results: Sequence[TerrainResult], overall: float | None, markdown: bool = True) -> tuple[str, str]:
    """(main table per terrain, stability table terrain × Δt)."""
    dstar = "–" if overall is None else f"{overall:g}"
    head = ["terrain", "largest stable Δt (s)", f"MuJoCo ×RT at {dstar} s", f"MuJoCo ×RT at {DT_OURS:g} s",
            f"ours ×RT at {DT_OURS:g} s",
            f"MuJoCo {dstar} vs ours {DT_OURS:g}: Δpos (m) / Δyaw (rad)",
            f"MuJoCo {dstar} vs ours {DT_OURS_REF:g}", f"MuJoCo {DT_MJ_REF:g} vs ours {DT_OURS_REF:g}",
            f"ours {DT_OURS:g} vs ours {DT_OURS_REF:g}", f"MuJoCo {dstar} vs MuJoCo {DT_MJ_REF:g}"]
    body, all_d = [], []
    for r in results:
        d = diffs(r, overall)
        all_d.append(d)
        mjd = r.mj_timed.get(overall)
        mj4 = r.mj_timed.get(DT_OURS) if r.mj[DT_OURS].stable else None

        def pair(key: str, dd: dict = d) -> str:
            return "–" if key not in dd else f"{dd[key][0]:.3f} / {dd[key][1]:.3f}"

        body.append([str(r.terrain), _num(r.largest_stable, "g"), _num(mjd.rtf if mjd else None, ",.0f"),
                     _num(mj4.rtf if mj4 else None, ",.0f") if r.mj[DT_OURS].stable else "unstable",
                     _num(r.ours[DT_OURS].rtf, ",.0f"), pair("mj*-ours.04"), pair("mj*-ours.01"),
                     pair("mj.001-ours.01"), pair("ours.04-ours.01"), pair("mj*-mj.001")])
    s = summary(results, overall)
    keys = ["mj*-ours.04", "mj*-ours.01", "mj.001-ours.01", "ours.04-ours.01", "mj*-mj.001"]

    def agg(key: str, f) -> str:  # noqa: ANN001
        v = [d[key] for d in all_d if key in d]
        return "–" if not v else f"{f([x[0] for x in v]):.3f} / {f([x[1] for x in v]):.3f}"

    for name, f in (("all (mean Δ)", np.mean), ("max Δ", np.max)):
        body.append([f"**{name}**", _num(overall, "g") if name != "max Δ" else "",
                     _num(s["mj_dt"][0], ",.0f") if s["mj_dt"] and name != "max Δ" else "",
                     (_num(s["mj_004"][0], ",.0f") if s["mj_004"] else "–") if name != "max Δ" else "",
                     _num(s["ours_004"][0], ",.0f") if s["ours_004"] and name != "max Δ" else "",
                     *(agg(k, f) for k in keys)])
    main = zr._render(head, body, markdown)
    dts = sorted(results[0].mj)
    head2 = ["terrain", *(f"{dt:g}" for dt in dts)]
    body2 = [[str(r.terrain), *("✓" if r.mj[dt].stable else f"✗ {r.mj[dt].reason}" for dt in dts)]
             for r in results]
    return main, zr._render(head2, body2, markdown)


def plot_figure(results: Sequence[TerrainResult], overall: float | None, path: Path,
                terrain_dir: Path | None = None) -> None:
    """Overhead paths of both engines on (up to) two terrains; largest stable Δt and real-time factors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = list(results[:2])
    fig = plt.figure(figsize=(12.5, 7.2), layout="constrained")
    gs = fig.add_gridspec(2, 2, height_ratios=(1.0, 1.1))
    x0, x1, y0, y1 = -0.8, 5.8, -1.3, 1.3
    for c, res in enumerate(shown):
        ax = fig.add_subplot(gs[0, c])
        grid = zoe.load_terrain(res.terrain, terrain_dir)
        xs, ys = np.linspace(x0, x1, 300), np.linspace(y0, y1, 120)
        im = ax.imshow(grid.height(xs[None, :], ys[:, None]), origin="lower", extent=(x0, x1, y0, y1), cmap="gray",
                       alpha=0.55, aspect="equal", vmin=-0.45, vmax=0.45)
        for run, label, kw in ((res.ours[DT_OURS_REF], f"ours Δt {DT_OURS_REF:g} s", {"color": "C0", "lw": 1.6}),
                               (res.ours[DT_OURS], f"ours Δt {DT_OURS:g} s", {"color": "C0", "ls": "--", "lw": 1.2}),
                               (res.mj[DT_MJ_REF], f"MuJoCo Δt {DT_MJ_REF:g} s", {"color": "C3", "lw": 1.6}),
                               *(((res.mj[overall], f"MuJoCo Δt {overall:g} s", {"color": "C3", "ls": "--",
                                                                                 "lw": 1.2}),)
                                 if overall is not None and overall != DT_MJ_REF else ())):
            ax.plot(run.pose[:, 0], run.pose[:, 1], label=label, **kw)
        ax.plot([0.0, SPEED * DURATION], [0.0, 0.0], ":", color="w", lw=0.8)
        ax.set_title(f"zoe_rough_{res.terrain}: body paths (m)", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, loc="lower left")
        if c == len(shown) - 1:
            fig.colorbar(im, ax=ax, shrink=0.7, label="terrain height (m)")
    tids = [r.terrain for r in results]
    xpos = np.arange(len(tids))
    ax = fig.add_subplot(gs[1, 0])
    ax.bar(xpos, [r.largest_stable or 0.0 for r in results], color="C3", label="MuJoCo: largest stable Δt")
    ax.axhline(DT_OURS, color="C0", ls="--", lw=1.2, label=f"ours: benchmark Δt {DT_OURS:g} s")
    ax.set_yscale("log")
    ax.set_yticks(list(DTS), [f"{d:g}" for d in DTS])
    ax.minorticks_off()
    ax.set_xticks(xpos, [str(t) for t in tids])
    ax.set_xlabel("terrain")
    ax.set_ylabel("Δt (s)")
    ax.set_title("largest stable step", fontsize=9)
    if overall is not None:
        ax.axhline(overall, color="C3", ls=":", lw=1.2, label=f"MuJoCo: stable on every terrain ({overall:g} s)")
    ax.set_ylim(DTS[0] * 0.9, 0.08)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    ax = fig.add_subplot(gs[1, 1])
    series = [(f"MuJoCo Δt {overall:g} s", [r.mj_timed[overall].rtf for r in results], "C3")] if overall else []
    if all(r.mj[DT_OURS].stable for r in results) and overall != DT_OURS:
        series.append((f"MuJoCo Δt {DT_OURS:g} s", [r.mj_timed[DT_OURS].rtf for r in results], "C1"))
    series.append((f"ours Δt {DT_OURS:g} s", [r.ours[DT_OURS].rtf for r in results], "C0"))
    w = 0.8 / len(series)
    for k, (label, vals, color) in enumerate(series):
        ax.bar(xpos + (k - (len(series) - 1) / 2) * w, vals, w, label=label, color=color)
    ax.set_yscale("log")
    ax.set_ylim(1.0, 8.0 * max(max(v) for _, v, _ in series))
    ax.set_xticks(xpos, [str(t) for t in tids])
    ax.set_xlabel("terrain")
    ax.set_ylabel("real-time factor (simulated / wall time)")
    ax.set_title("speed (stepping loop only)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", ncol=len(series))
    fig.suptitle(f"Zoë (steering held straight), {SPEED} m/s straight for {DURATION:g} s: MuJoCo "
                 f"{mujoco.__version__} vs wmr_dynamics (dynamic, linear contact)", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _git_commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                               timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def markdown_section(results: Sequence[TerrainResult], overall: float | None, engine: str, elapsed: float,
                     load: tuple[float, float]) -> str:
    """The ``mujoco`` section of docs/benchmarks.md: tables only (the page's hand-written text explains them)."""
    main, stab = format_tables(results, overall, markdown=True)
    s = summary(results, overall)
    n = len(results)
    all_d = [diffs(r, overall) for r in results]

    def mean_max(key: str, i: int) -> str:
        v = [d[key][i] for d in all_d if key in d]
        return "–" if not v else f"{np.mean(v):.3f} (max {np.max(v):.3f})"

    dz = [r.mj[overall].final[2] - r.ours[DT_OURS].final[2] for r in results] if overall else []
    lifts = [1000 * r.mj[DT_MJ_REF].lift_m for r in results]
    rtf = (lambda k: "–" if s[k] is None else f"{s[k][0]:,.0f}× ({s[k][1]:.0f} µs/step)")  # noqa: E731
    settings = [
        ("terrains", f"`zoe_rough_{{{','.join(str(r.terrain) for r in results)}}}`"),
        ("our engine; MuJoCo version", f"`{engine}`; {mujoco.__version__}"),
        ("body raised by MuJoCo's deepest initial penetration: mean / max (mm)",
         f"{np.mean(lifts):.1f} / {np.max(lifts):.1f}"),
        (f"stable: final pose within (m, °) of MuJoCo's Δt = {DT_MJ_REF:g} s run", f"{POS_TOL:g}, "
                                                                               f"{np.degrees(ANG_TOL):.0f}"),
        ("Δt tried (s)", ", ".join(f"{d:g}" for d in DTS)),
        ("run: Python, numpy, MuJoCo, commit; wall time; 1-min load average start / end",
         f"{platform.python_version()}, {np.__version__}, {mujoco.__version__}, {_git_commit()}; {elapsed:.0f} s; "
         f"{load[0]:.2f} / {load[1]:.2f}")]
    figures = [
        (f"MuJoCo's largest step stable on all {n} terrains (s); ×RT there",
         f"**{_num(overall, 'g')}**; {rtf('mj_dt')}"),
        (f"MuJoCo at Δt = {DT_OURS:g} s: stable on terrains; ×RT",
         f"{sum(r.mj[DT_OURS].stable for r in results)} of {n}; {rtf('mj_004')}"),
        (f"ours at Δt = {DT_OURS:g} / {DT_OURS_REF:g} s: ×RT", f"{rtf('ours_004')} / {rtf('ours_001')}"),
        ("each engine at its own step: final position (m) / yaw (rad) difference, mean",
         f"{mean_max('mj*-ours.04', 0)} / {mean_max('mj*-ours.04', 1)}"),
        (f"MuJoCo Δt = {DT_MJ_REF:g} s vs our Δt = {DT_OURS_REF:g} s: final position difference (m)",
         mean_max("mj.001-ours.01", 0)),
        (f"ours Δt = {DT_OURS:g} vs {DT_OURS_REF:g} s; MuJoCo Δt = {_num(overall, 'g')} vs {DT_MJ_REF:g} s: final "
         "position difference (m)", f"{mean_max('ours.04-ours.01', 0)}; {mean_max('mj*-mj.001', 0)}"),
        ("MuJoCo's final height above ours, mean (mm)", f"{1000 * np.mean(dz):+.0f}" if dz else "–")]
    return "\n".join([figures_table(settings, ("setting", "value")), "", main, "", figures_table(figures), "",
                      "MuJoCo stability per terrain and Δt (✓ stable; ✗ why not):", "", stab])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="terrains 1,2, one repetition; writes out/mujoco_quick/")
    p.add_argument("--terrains", type=str, default=None, help="comma-separated terrain numbers (default 1..10)")
    p.add_argument("--repeat", type=int, default=None, help="timing repetitions (default 3; --quick 1)")
    p.add_argument("--engine", default="auto", choices=("auto", "python", "compiled"), help="our Simulator engine")
    p.add_argument("--terrain-dir", type=Path, default=None, help=f"default {zoe.TERRAIN_DIR}")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for benchmarks.md and figures/ (default docs/; with --quick out/mujoco_quick/)")
    p.add_argument("--no-write", action="store_true", help="print the tables only")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    if a.terrains:
        try:
            terrains = [int(t) for t in a.terrains.replace(" ", ",").split(",") if t]
        except ValueError:
            p.error(f"--terrains: expected comma-separated numbers, got {a.terrains!r}")
    else:
        terrains = [1, 2] if a.quick else list(zoe.TERRAINS)
    repeat = a.repeat or (1 if a.quick else 3)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    results, overall, engine = study(terrains, DTS, repeat, a.engine, a.terrain_dir, a.quiet)
    elapsed = time.perf_counter() - t0
    main_t, stab = format_tables(results, overall, markdown=False)
    print(main_t + "\n\nMuJoCo stability (terrain × dt):\n" + stab)
    if not a.no_write:
        out = a.out or (ROOT / "out" / "mujoco_quick" if a.quick else ROOT / "docs")
        fig = out / "figures" / "mujoco_peer.png"
        plot_figure(results, overall, fig, a.terrain_dir)
        doc = out / "benchmarks.md"
        update_section(doc, SECTION, markdown_section(results, overall, engine, elapsed,
                                                      (load0, os.getloadavg()[0])))
        _log(f"wrote section '{SECTION}' of {doc} and {fig}", a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
