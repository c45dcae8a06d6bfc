#!/usr/bin/env python3
"""Pecka, Zimmermann & Svoboda's eight tracked-robot scenarios (§V-B, Table I) on our engine.

Models (the paper's, in our dynamic engine; Absolem-like robot ``absolem``, flippers held level; each with its
default contact: ``coulomb`` (static friction) for the tracks, ``linear`` for the wheels):

- ``csm``: Contact Surface Motion — the tracks as belt contact elements (docs/tracks.md), static friction;
- ``csm linear``: the same with the wheels' linear contact model (like for like with the wheel models' speed);
- ``4wheels`` / ``8wheels``: each track replaced by 4 or 8 wheels between its rollers, driven in sync
  (:func:`wmr_dynamics.tracks.wheel_approximation`);
- ``pushed``: the paper's no_friction model — frictionless belts (linear contact, μ = 0) held still, the robot
  pushed by an external wrench at the body origin (``Stepper.set_external_wrench``) that a PI controller sets
  every step from the commanded body velocity (v, 0, ω) (gain ``PUSH_GAIN``); stepped from Python, one call
  per step, so its CPU time includes ~30 µs of call overhead per step (docs/benchmarks.md, "Stepping call by
  call").

Scenarios and metrics (the paper's; where its metric compares with the real robot's recorded trajectory,
which we do not have, we report the metric against the ideal no-slip motion instead and say so):

1. straight: 0.3 m/s for 10 s on flat ground — d_t, the distance to (3, 0) (m);
2. rotate: 0.6 rad/s for 10 s — d_ω, the heading's angular distance to 6.0 rad, and the centre's drift (m);
3. circular: left belt 0.1 m/s, right 0.3 m/s for 10 s — distance of the end point to the ideal
   no-slip circle's (m, not the paper's Σd_t against the real robot);
4. ramp: 0.3 m/s for 10 s up ``worlds/pecka_ramp.sdf`` (15°) — the height climbed (m), the pitch on the board;
5. staircase: 0.3 m/s for 10 s down ``worlds/pecka_staircase.sdf`` from the landing — the drop achieved (m),
   the largest |roll| (no tumbling sideways);
6. stand: at rest across the steps for 10 s (after 2 s settling) — d_st, the drift (m), and d_ω (rad);
7. pallet: 0.1 m/s for 30 s over ``worlds/pecka_pallet.sdf``, front flippers raised 40° — whether it crossed
   (x beyond the far edge);
8. back & forth: 10 × (0.2 m/s forward 2 s, backward 2 s) — d_st, the distance from the start (m);
9. (ours) parked on a 20° plane for 10 s after 2 s settling — the drift (mm).

Each model's steering efficiency χ (Martínez et al.) is identified first, as the paper tuned each model's
angular gain: the yaw a 10 s turn in place at 0.6 rad/s reaches with χ = 1, over the commanded 6.0 rad.

CPU time per model (summed over the scenarios every model finished) and the real-time factor; the ratio
against the wheel approximations is measured in the same run (the paper's Gazebo runs ~3.7× real time).

Writes the section ``pecka`` of docs/benchmarks.md.  Usage::

    python benchmarks/pecka_scenarios.py            # all scenarios, all models (~1 min)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import machine_info, update_section  # noqa: E402

from wmr_dynamics import load_model  # noqa: E402
from wmr_dynamics.collision import drop_onto_terrain  # noqa: E402
from wmr_dynamics.controllers import BodyVelocityController  # noqa: E402
from wmr_dynamics.errors import SimulationError  # noqa: E402
from wmr_dynamics.kinematics import forward_kinematics  # noqa: E402
from wmr_dynamics.kinematics.enhanced import composite_inertia  # noqa: E402
from wmr_dynamics.model import WmrModel  # noqa: E402
from wmr_dynamics.simulate import Simulator  # noqa: E402
from wmr_dynamics.spatial import quat_to_rpy  # noqa: E402
from wmr_dynamics.stepper import Stepper  # noqa: E402
from wmr_dynamics.terrain import Plane, load_sdf_world  # noqa: E402
from wmr_dynamics.tracks import tracks, wheel_approximation  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DT = 0.01  # s: the obstacles' edges want short steps
MODELS = ("csm", "csm linear", "4wheels", "8wheels", "pushed")
#: the pushed baseline's velocity servo towards the commanded body velocity (v, 0, ω), a PI controller per axis
#: (the paper's P(ID)): e.g. body force m (K e + K²/4 ∫e) for the forward error e = v − v_x (critically damped
#: for a free body), K in 1/s
PUSH_GAIN = 20.0


def _models(vehicle: str) -> dict:
    csm = load_model(vehicle)
    linear = WmrModel(frames=csm.frames, wheels=csm.wheels, joint_constraints=csm.joint_constraints,
                      joint_springs=dict(csm.joint_springs), name=f"{csm.name}_linear",
                      config={**csm.config, "contact": "linear"}, source=csm.source)
    pushed = WmrModel(frames=csm.frames, wheels=csm.wheels, joint_constraints=csm.joint_constraints,
                      joint_springs=dict(csm.joint_springs), name=f"{csm.name}_pushed",
                      config={**csm.config, "contact": {"model": "linear", "params": {"mu": 0.0}}}, source=csm.source)
    return {"csm": csm, "csm linear": linear, "4wheels": wheel_approximation(csm, 4),
            "8wheels": wheel_approximation(csm, 8), "pushed": pushed}


_CHI: dict = {}  # model name → steering efficiency χ (Martínez et al.), identified by calibrate_chi


class _Pushed:
    """The states of a pushed run (``q``: (steps + 1, nq)), as a SimResult's."""

    def __init__(self, q: list) -> None:
        self.q = np.array(q)


def _run_pushed(model, terrain, duration: float, command, q0=None):  # noqa: ANN001, ANN202
    """Pecka et al.'s no_friction model: frictionless belts (μ = 0) held still, the robot pushed by an external
    wrench at the body origin that a P controller sets each step from the commanded (v, ω)."""
    st = Stepper(model, terrain, "dynamic", DT)
    d = st.make_data(q0)
    m, _, I_b = composite_inertia(model, forward_kinematics(model, d.q))
    rates = np.zeros(len(model.actuated_joint_names))
    n = int(round(duration / DT))
    states = [d.q.copy()]
    gain = np.array([I_b[2, 2], m, m])  # yaw, forward, lateral
    integral = np.zeros(3)
    t0 = time.perf_counter()
    for k in range(n):
        v, w = command(k * DT) if callable(command) else command
        err = np.array([w - d.qvel[2], v - d.qvel[3], -d.qvel[4]])
        integral += err * DT
        out = gain * (PUSH_GAIN * err + PUSH_GAIN ** 2 / 4 * integral)
        st.set_external_wrench(d, [0.0, 0.0, out[0], out[1], out[2], 0.0])
        st.advance(d, 1, rates=rates)
        states.append(d.q.copy())
    return _Pushed(states), time.perf_counter() - t0


def _run(model, terrain, duration: float, command, q0=None):  # noqa: ANN001, ANN202
    if model.name.endswith("_pushed"):
        return _run_pushed(model, terrain, duration, command, q0)
    controller = BodyVelocityController(model, steering_efficiency=_CHI.get(model.name, 1.0))
    sim = Simulator(model, terrain, mode="dynamic", dt=DT, controller=controller)
    t0 = time.perf_counter()
    r = sim.run(duration, command, q0=q0, progress=False)
    return r, time.perf_counter() - t0


def _start(model, terrain, x: float, z_ground: float, pitch: float = 0.0, flippers: float = 0.0):  # noqa: ANN001, ANN202
    """A pose at x on the ground, dropped onto it; ``flippers``: the front flippers' angle (rad, < 0 raised)."""
    joints = {j: flippers for j in ("flipper_fl_joint", "flipper_fr_joint") if j in model.joint_names}
    q = model.state(xyz=(x, 0.0, z_ground + 0.3), rpy=(0.0, pitch, 0.0), joints=joints)
    return drop_onto_terrain(model, q, terrain)


def _yaw(r) -> np.ndarray:  # noqa: ANN001
    return np.unwrap([quat_to_rpy(q[:4])[2] for q in r.q])


def straight(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    r, cpu = _run(model, Plane(), 10.0, (0.3, 0.0))
    return {"d_t (m)": math.hypot(r.q[-1, 4] - 3.0, r.q[-1, 5])}, cpu


def rotate(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    r, cpu = _run(model, Plane(), 10.0, (0.0, 0.6))
    err = (_yaw(r)[-1] - 6.0 + math.pi) % (2 * math.pi) - math.pi
    return {"d_ω (rad)": abs(err), "yaw (rad)": _yaw(r)[-1],
            "drift (m)": float(np.hypot(r.q[:, 4] - r.q[0, 4], r.q[:, 5] - r.q[0, 5]).max())}, cpu


def circular(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    vl, vr = 0.1, 0.3
    v, w = (vl + vr) / 2, (vr - vl) / track  # belts at 0.1 / 0.3 m/s through the skid-steer rule (χ = 1)
    r, cpu = _run(model, Plane(), 10.0, (v, w))
    R, th = v / w, w * 10.0
    ideal = np.array([R * math.sin(th), R * (1 - math.cos(th))])
    return {"end vs no-slip circle (m)": float(np.linalg.norm(r.q[-1, 4:6] - ideal)),
            "yaw (rad)": _yaw(r)[-1]}, cpu


def ramp(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    world = load_sdf_world(ROOT / "worlds" / "pecka_ramp.sdf")
    q0 = _start(model, world, -0.5, 0.0)
    r, cpu = _run(model, world, 10.0, (0.3, 0.0), q0)
    pitch = np.degrees([quat_to_rpy(q[:4])[1] for q in r.q])
    return {"climbed (m)": float(r.q[-1, 6] - r.q[0, 6]), "min pitch (°)": float(pitch.min()),
            "x end (m)": float(r.q[-1, 4])}, cpu


def staircase(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    world = load_sdf_world(ROOT / "worlds" / "pecka_staircase.sdf")
    q0 = _start(model, world, -0.6, 0.68)
    r, cpu = _run(model, world, 10.0, (0.3, 0.0), q0)
    roll = np.degrees([abs(quat_to_rpy(q[:4])[0]) for q in r.q])
    return {"dropped (m)": float(r.q[0, 6] - r.q[-1, 6]), "x end (m)": float(r.q[-1, 4]),
            "max |roll| (°)": float(roll.max())}, cpu


def stand(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    world = load_sdf_world(ROOT / "worlds" / "pecka_staircase.sdf")
    pitch = math.atan2(0.17, 0.29)  # nose down along the stair line
    q0 = _start(model, world, 0.58, 0.34, pitch)
    settle, cpu0 = _run(model, world, 2.0, (0.0, 0.0), q0)
    r, cpu = _run(model, world, 10.0, (0.0, 0.0), settle.q[-1])
    d = float(np.linalg.norm(r.q[-1, 4:7] - r.q[0, 4:7]))
    rpy0, rpy1 = quat_to_rpy(r.q[0, :4]), quat_to_rpy(r.q[-1, :4])
    return {"d_st (m)": d, "d_ω (rad)": float(np.abs(rpy1 - rpy0).max())}, cpu0 + cpu


def slope(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    """Not one of the paper's eight: parked across nothing on a 20° plane, facing uphill — what its §III-B says
    a frictionless model cannot do, and a slip-velocity friction model does only approximately."""
    a = math.radians(20.0)
    ground = Plane(normal=(-math.sin(a), 0.0, math.cos(a)))
    q0 = drop_onto_terrain(model, model.state(xyz=(0.0, 0.0, 0.5), rpy=(0.0, -a, 0.0)), ground)
    settle, cpu0 = _run(model, ground, 2.0, (0.0, 0.0), q0)
    r, cpu = _run(model, ground, 10.0, (0.0, 0.0), settle.q[-1])
    return {"drift in 10 s (mm)": 1e3 * float(np.linalg.norm(r.q[-1, 4:7] - r.q[0, 4:7]))}, cpu0 + cpu


def pallet(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    world = load_sdf_world(ROOT / "worlds" / "pecka_pallet.sdf")
    q0 = _start(model, world, 0.2, 0.0, flippers=-0.7)  # front flippers raised 40°, as the robot climbs
    r, cpu = _run(model, world, 30.0, (0.1, 0.0), q0)
    return {"x end (m)": float(r.q[-1, 4]), "crossed": bool(r.q[-1, 4] > 1.8 + 0.45),
            "max z (m)": float(r.q[:, 6].max())}, cpu


def back_and_forth(model, track: float) -> tuple[dict, float]:  # noqa: ANN001
    def cmd(t: float) -> tuple[float, float]:
        return (0.2 if int(t // 2.0) % 2 == 0 else -0.2, 0.0)

    r, cpu = _run(model, Plane(), 40.0, cmd)
    return {"d_st (m)": float(np.linalg.norm(r.q[-1, 4:6] - r.q[0, 4:6]))}, cpu


def calibrate_chi(model) -> float:  # noqa: ANN001
    """The paper tuned each model's "angular gain"; ours is the steering efficiency χ: the yaw a 10 s turn in
    place at 0.6 rad/s reaches with χ = 1, over the commanded 6.0 rad."""
    _CHI.pop(model.name, None)
    r, _ = _run(model, Plane(), 10.0, (0.0, 0.6))
    _CHI[model.name] = chi = float(min(max(_yaw(r)[-1] / 6.0, 0.05), 1.0))
    return chi


SCENARIOS = {"straight": (straight, 10.0), "rotate": (rotate, 10.0), "circular": (circular, 10.0),
             "ramp": (ramp, 10.0), "staircase": (staircase, 10.0), "stand": (stand, 12.0),
             "pallet": (pallet, 30.0), "back & forth": (back_and_forth, 40.0), "20° slope, parked": (slope, 12.0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vehicle", default="absolem")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    models = _models(args.vehicle)
    csm = models["csm"]
    ys = [csm.T0[t.frame][1, 3] for t in tracks(csm)[:2]]
    track = max(ys) - min(ys)  # distance between the main tracks' centre lines, m
    chi = {m: calibrate_chi(models[m]) for m in MODELS}
    print("steering efficiency χ: " + ", ".join(f"{m} {c:.3f}" for m, c in chi.items()), flush=True)
    rows, cpu = {}, {}
    for name, (fn, _) in SCENARIOS.items():
        for m in MODELS:
            try:
                metrics, c = fn(models[m], track)
            except SimulationError as e:  # a model failing a scenario is a result, reported as such
                first = str(e).split(":", 1)[-1].split(";")[0].strip()
                metrics, c = {"failed": f"{type(e).__name__}: {first[:90]}"}, float("nan")
            rows[(name, m)] = metrics
            cpu[(name, m)] = c
            print(f"{name:>13} {m:>8}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in metrics.items()), flush=True)
    done = [n for n in SCENARIOS if all(math.isfinite(cpu[(n, m)]) for m in MODELS)]
    sim_time = sum(SCENARIOS[n][1] for n in done)
    total = {m: sum(cpu[(n, m)] for n in done) for m in MODELS}
    info = machine_info()
    load = os.getloadavg()[0]
    lines = ["## Pecka et al.'s tracked-robot scenarios", "",
             f"`benchmarks/pecka_scenarios.py` (vehicle `{args.vehicle}`, dynamic, csm: coulomb, the others linear "
             f"contact, Δt {DT} s; "
             f"{info['cpu']}, load {load:.2f}, commit {info.get('commit', '?')}).", "",
             "| scenario | metric | " + " | ".join(MODELS) + " |", "| --- | --- | " + " | ".join("---" for _ in MODELS)
             + " |"]
    for name in SCENARIOS:
        keys = list(dict.fromkeys(k for m in MODELS for k in rows[(name, m)]))
        for k in keys:
            lines.append(f"| {name} | {k} | " + " | ".join(_fmt(rows[(name, m)].get(k, "")) for m in MODELS) + " |")
    lines.append("| all | steering efficiency χ (identified) | " + " | ".join(f"{chi[m]:.3f}" for m in MODELS) + " |")
    lines.append(f"| {len(done)} scenarios all models finished | CPU time (s) for {sim_time:g} s simulated | "
                 + " | ".join(f"{total[m]:.2f}" for m in MODELS) + " |")
    lines.append("| same | real-time factor | " + " | ".join(f"{sim_time / total[m]:.0f}×" for m in MODELS) + " |")
    lines.append("| same | CPU time relative to csm | "
                 + " | ".join(f"{total[m] / total['csm']:.2f}" for m in MODELS) + " |")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        update_section(ROOT / "docs" / "benchmarks.md", "pecka", text)
    return 0


def _fmt(v: object) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


if __name__ == "__main__":
    raise SystemExit(main())
