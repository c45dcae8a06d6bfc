"""Auchter, Moore & Ghosal (papers/002): Passive Variable Camber (PVC) removes kinematic slip — the scenario.

Claim (their §4.1, Fig. 7): a three-wheeled robot — steerable front wheel, two rear wheels on passive camber
joints, torus-shaped wheels — traverses smooth uneven terrain without kinematic slip when the PVC joints are
free; the error of their constraint equation (7), ``error_1`` of eq. 10, stays near zero.  The set-up of
``benchmarks/auchter_pvc.py`` (the study and its report) and of the tests that check it
(``pvc_tricycle``: urdf/pvc_tricycle.urdf + config/pvc_tricycle.yaml):

- terrain: :func:`wmr_dynamics.terrain.gaussian_rough_terrain` (RMS height, correlation length, seed), made C²
  by a bicubic spline through its nodes (:class:`~wmr_dynamics.terrain.SmoothGrid`) because Auchter's surfaces
  are smooth and the library's bilinear ``HeightGrid`` has creases at every cell edge;
- each step (Δt = 0.01 s, Baumgarte σ = 1/Δt, 10 s at 0.3 m/s; :func:`simulate`):
  1. actuation (inverse) kinematics, Auchter's eqs. 11–12 / our eq. 2.37 reversed: known body forward speed
     v, yaw rate 0 and the steering rate 0 (plus the PVC rates 0 when locked) → slip-free actuated rates as
     far as the mechanism allows (least squares);
  2. navigation (forward) kinematics, Auchter's eq. 9 / our eq. 2.38: the actuated rates of step 1 known →
     q̇' and the residual of the contact constraints (Auchter's ``r_1``, eq. 10), with the URDF joint limits
     as hard stops as in :class:`wmr_dynamics.simulate.Simulator`;
  3. Euler step (eq. 2.39).
- "PVC free": the bundled model (``pvc2_joint``, ``pvc3_joint`` passive, i.e. unknown in both solves);
  "PVC locked": the same vehicle with the PVC joints moved to the actuated (known) set and held at 0 rad
  (contact initialization then keeps them at 0 too).

Slip measures (:class:`PvcRun`): the tangential contact-point velocity ‖v_c[x, y]‖ of every wheel (m/s,
contact frame) and ‖r‖ = ‖A q̇' − v‖ (the full residual, Auchter's ``error_1``); a geometric cross-check
without the wheel Jacobian: the displacement over one step of the wheel material point that was in contact,
from forward kinematics at the two states (finite-difference slip; O(Δt) integration error included).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import yaml
from numpy.typing import NDArray

import wmr_dynamics as wmr
from wmr_dynamics.kinematics import (
    actuated_indices,
    actuation_kinematics,
    euler_step,
    evaluate,
    initialize_contact,
    solve_velocity,
)
from wmr_dynamics.kinematics.dae import solve_velocity_limited
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import SmoothGrid, Terrain, gaussian_rough_terrain
from wmr_dynamics.terrain.surfaces import Bounds
from wmr_dynamics.urdf import data_dirs

PVC_JOINTS = ("pvc2_joint", "pvc3_joint")
STEER_JOINT = "steer1_joint"
BOUNDS: Bounds = (-1.0, 5.0, -1.5, 1.5)  # terrain extent, m (the robot drives from x = 0 to about x = 3)

# The main scenario (benchmark figure and test): smooth random terrain, RMS 0.05 m, correlation length 0.3 m
# (RMS slope ≈ 13°), seed 6; 0.3 m/s straight ahead for 10 s.
MAIN_TERRAIN = {"rms": 0.05, "corr_len": 0.3, "seed": 6}
SPEED = 0.3  # m/s
DT = 0.01  # s
DURATION = 10.0  # s


# ------------------------------------------------------------------------------------------- terrain
def make_terrain(rms: float = MAIN_TERRAIN["rms"], corr_len: float = MAIN_TERRAIN["corr_len"],
                 seed: int = MAIN_TERRAIN["seed"], smooth: bool = True, bounds: Bounds = BOUNDS) -> Terrain:
    """Gaussian rough terrain (m, m, seed) over ``bounds``; bicubic-smoothed unless ``smooth=False`` (bilinear)."""
    grid = gaussian_rough_terrain(rms=rms, corr_len=corr_len, bounds=bounds, seed=seed)
    return SmoothGrid(grid) if smooth else grid


# --------------------------------------------------------------------------------------------- vehicle
def vehicle_config(wheel_shape: str = "torus", pvc_locked: bool = False) -> dict:
    """config/pvc_tricycle.yaml as a dict, optionally with thin-disk wheels and/or the PVC joints locked.

    ``wheel_shape="cylinder"`` replaces the torus wheels by the thesis's thin 3D circles of the same outer
    radius; ``pvc_locked=True`` adds the PVC joints to the actuated (known) joints, so that both kinematic
    solves and the contact initialization hold them.
    """
    path = next((d / "config" / "pvc_tricycle.yaml" for d in data_dirs()
                 if (d / "config" / "pvc_tricycle.yaml").is_file()), None)
    if path is None:
        raise FileNotFoundError("config/pvc_tricycle.yaml not found in " + ", ".join(map(str, data_dirs())))
    cfg = yaml.safe_load(path.read_text())
    cfg.pop("urdf")  # the URDF comes from the bundled vehicle name
    if wheel_shape == "cylinder":
        cfg["wheels"] = {j: {"radius": w["radius"], "width": w["width"]} for j, w in cfg["wheels"].items()}
    elif wheel_shape != "torus":
        raise ValueError(f"wheel_shape must be 'torus' or 'cylinder', got {wheel_shape!r}")
    if pvc_locked:
        cfg["actuated_joints"] = [*cfg["actuated_joints"], *PVC_JOINTS]
    return cfg


def make_model(wheel_shape: str = "torus", pvc_locked: bool = False) -> WmrModel:
    """The PVC tricycle; the unmodified bundled model for torus wheels with free PVC joints."""
    if wheel_shape == "torus" and not pvc_locked:
        return wmr.load_model("pvc_tricycle")
    return wmr.load_model("pvc_tricycle", config=vehicle_config(wheel_shape, pvc_locked))


def joint_index(model: WmrModel, name: str) -> int:
    """Joint-space (q̇') index of a joint: frame i → i + 5."""
    return model.frame_index(name) + 5


# ------------------------------------------------------------------------------------------- simulation
@dataclass
class PvcRun:
    """One run; per-step arrays have n rows (the state at the step's start), ``q`` and ``gamma`` n + 1.

    Attributes:
        label: description.  pvc_locked: whether the PVC joints were held.  joint_limits: whether the URDF
            limits acted as hard stops.  t: (n,) s.
        q: (n+1, nq) states.  qvel: (n, ndof) q̇' of the navigation solve.
        slip: (n, nw) tangential contact-point speed ‖v_c[x, y]‖ per wheel, m/s.
        normal_err: (n, nw) normal contact velocity minus its Baumgarte target −σΔz, m/s.
        residual: (n,) ‖A q̇' − v‖ of the navigation solve (Auchter's error_1, eq. 10), m/s.
        gamma: (n+1, 2) PVC angles (pvc2, pvc3), rad.
        lateral: (n, nw) contact-point offset along the wheel axis from the wheel centre, m.
        contact_points, wheel_centres: (n, nw, 3) world, m.
        min_sv: (n,) smallest singular value of the actuation system's unknown columns (m or m/rad).
        fd_slip: (n-1, nw) finite-difference tangential slip of the contact material point, m/s.
        limit_steps: steps that started with a joint at (or past) a URDF limit, where the hard stop of
            ``solve_velocity_limited`` may hold it.
        wall_s: wall time of the loop, s.
    """

    label: str
    pvc_locked: bool
    joint_limits: bool
    dt: float
    speed: float
    t: NDArray
    q: NDArray
    qvel: NDArray
    slip: NDArray
    normal_err: NDArray
    residual: NDArray
    gamma: NDArray
    lateral: NDArray
    contact_points: NDArray
    wheel_centres: NDArray
    min_sv: NDArray
    fd_slip: NDArray
    limit_steps: int
    wall_s: float

    @property
    def max_slip(self) -> float:
        """max over steps and wheels of the tangential contact speed, m/s."""
        return float(self.slip.max())

    @property
    def mean_slip(self) -> float:
        """mean over steps of the max-over-wheels tangential contact speed, m/s."""
        return float(self.slip.max(axis=1).mean())

    @property
    def gamma_range(self) -> NDArray:
        """(2,) peak-to-peak PVC angle of pvc2, pvc3, rad."""
        return np.ptp(self.gamma, axis=0)

    def summary(self) -> dict:
        """Key figures (m/s, rad): slip, residual, PVC range, conditioning, FD slip, joint-limit steps."""
        return {
            "label": self.label, "max_slip": self.max_slip, "mean_slip": self.mean_slip,
            "max_residual": float(self.residual.max()), "mean_residual": float(self.residual.mean()),
            "gamma_range": self.gamma_range.tolist(), "gamma_max_abs": float(np.abs(self.gamma).max()),
            "max_normal_err": float(np.abs(self.normal_err).max()), "min_sv": float(self.min_sv.min()),
            "fd_max": float(self.fd_slip.max()), "fd_mean": float(self.fd_slip.max(axis=1).mean()),
            "limit_steps": self.limit_steps, "final_xy": self.q[-1, 4:6].tolist(), "wall_s": self.wall_s,
        }


def initial_state(model: WmrModel, terrain: Terrain) -> NDArray:
    """Body at the origin heading +x, wheels on the terrain (§2.2.4); held joints (steering, locked PVC) at 0."""
    q0 = model.state(xyz=(0.0, 0.0, float(terrain.height(0.0, 0.0)) + model.wheel_radii.max()))
    return initialize_contact(model, q0, terrain)


def simulate(model: WmrModel, terrain: Terrain, speed: float = SPEED, dt: float = DT, duration: float = DURATION,
             label: str = "", joint_limits: bool = True) -> PvcRun:
    """Drive straight (v = ``speed``, yaw rate 0, steering held at 0) with the two-solve scheme of the module doc.

    Every actuated joint that is not a wheel (the steering; the PVC joints when locked) is held at rate 0 in
    the actuation solve; the navigation solve takes all actuated rates from it, with the URDF joint limits
    as hard stops (``solve_velocity_limited``) unless ``joint_limits=False`` (plain ``solve_velocity``).
    """
    navigate = solve_velocity_limited if joint_limits else solve_velocity
    sigma = 1.0 / dt
    nw = model.num_wheels
    act = actuated_indices(model)
    wheel_idx = set((model.wheel_frame + 5).tolist())
    held = {int(i): 0.0 for i in act if int(i) not in wheel_idx}
    unknown = np.setdiff1d(np.arange(model.num_dof), [2, 3, *held])
    pvc = np.array([joint_index(model, j) for j in PVC_JOINTS])
    wf = model.wheel_frame
    n = int(round(duration / dt))
    q = initial_state(model, terrain)
    out = {k: [] for k in ("q", "qvel", "slip", "nerr", "res", "lat", "cp", "wc", "sv", "fd")}
    limit_steps = 0
    lower, upper = model.joint_lower[1:], model.joint_upper[1:]
    prev = None
    t0 = time.perf_counter()
    for _ in range(n):
        ks = evaluate(model, q, terrain)
        T_w = ks.T_world[wf]
        if prev is not None:  # finite-difference slip of the previous step's contact material point
            T_p, p_prev, R_c = prev
            w = np.einsum("nji,nj->ni", T_p[:, :3, :3], p_prev - T_p[:, :3, 3])  # wheel coordinates
            moved = np.einsum("nij,nj->ni", T_w[:, :3, :3], w) + T_w[:, :3, 3]
            v_fd = np.einsum("nji,nj->ni", R_c, (moved - p_prev) / dt)  # contact-frame coordinates
            out["fd"].append(np.linalg.norm(v_fd[:, :2], axis=1))
        out["sv"].append(np.linalg.svd(ks.A[:, unknown], compute_uv=False)[-1])
        cmd = actuation_kinematics(model, ks, speed, 0.0, sigma, held_joints=held)
        sol = navigate(model, ks, act, cmd.qvel[act], sigma)
        theta = q[7:]
        limit_steps += bool(np.any((theta >= upper - 1e-9) | (theta <= lower + 1e-9)))  # a hard stop may act
        out["q"].append(q)
        out["qvel"].append(sol.qvel)
        out["slip"].append(np.linalg.norm(sol.v_contact[:, :2], axis=1))
        out["nerr"].append(sol.v_contact[:, 2] + sigma * ks.contacts.dz)
        out["res"].append(np.linalg.norm(sol.residual))
        out["lat"].append(ks.contacts.lateral)
        out["cp"].append(ks.contacts.points)
        out["wc"].append(T_w[:, :3, 3])
        prev = (T_w, ks.contacts.points, ks.contacts.frames)
        q = euler_step(q, sol.qvel, dt)
    wall = time.perf_counter() - t0
    qs = np.array([*out["q"], q])
    return PvcRun(
        label=label, pvc_locked=bool(np.isin(pvc, act).all()), joint_limits=joint_limits, dt=dt, speed=speed,
        t=dt * np.arange(n), q=qs,
        qvel=np.array(out["qvel"]), slip=np.array(out["slip"]).reshape(n, nw),
        normal_err=np.array(out["nerr"]), residual=np.array(out["res"]), gamma=qs[:, pvc + 1],
        lateral=np.array(out["lat"]), contact_points=np.array(out["cp"]), wheel_centres=np.array(out["wc"]),
        min_sv=np.array(out["sv"]), fd_slip=np.array(out["fd"]).reshape(n - 1, nw), limit_steps=limit_steps,
        wall_s=wall)


def free_vs_locked(terrain: Terrain, wheel_shape: str = "torus", **kw) -> tuple[PvcRun, PvcRun]:
    """The same drive with the PVC joints free and locked."""
    free = simulate(make_model(wheel_shape, pvc_locked=False), terrain, label=f"{wheel_shape}, PVC free", **kw)
    locked = simulate(make_model(wheel_shape, pvc_locked=True), terrain, label=f"{wheel_shape}, PVC locked", **kw)
    return free, locked
