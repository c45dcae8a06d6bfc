"""Thesis §2.5.3 (Figs. 2.16–2.21): loss of traction and rollover of the LandTamer in the DAE dynamics — the scenario.

The set-up of ``benchmarks/extreme_phenomena.py`` (the study and its report) and of the tests that check it.
Same vehicle, Pacejka / Nicolas–Comstock contact (App. C, Table C.1) and P actuator (kp 2000, ki 0, no torque
limit) as the ramp test (:mod:`wmr_dynamics.scenarios.landtamer_ramp`), on flat ground, Δt = 0.04 s unless
stated.

(a) Loss of traction, μ = 0.6 (thesis: "lowered to 0.6 to simulate a low traction surface";
:func:`run_traction`):

- straight: speed command 0.5 m/s from rest, 5 m/s at t = 1 s, back to 0.5 m/s at t = 3 s; 6 s;
- turning: the same, plus a yaw-rate command of 2 rad/s while the speed command is 5 m/s (1 ≤ t < 3 s; the
  thesis says "turn at 2 rad/s at full speed" without the interval, this is our reading); contrast: the same
  turn command at a constant 0.5 m/s.

Normalized longitudinal force f_x/f_z and slip ratio s (eq. 2.40, bounded to [−1, 1], as SimResult reports
it); the model's own curve f_x/f_z(s) at zero slip angle (:func:`model_curve`) peaks at the critical slip
(:func:`critical_slip`).  Yaw stability (:func:`yaw_metrics`): body yaw rate vs. the command, heading change
after the turn command has ended, body sideslip angle β = atan2(v_y, v_x).

(b) Rollover (:func:`run_rollover`): 5 m/s straight from rest, then a 7 rad/s yaw-rate command from t = 1 s
(held); μ = 1; 5 s.  Body cg height 0.83 m (the bundled model) vs. 1.25 m (the body's centre of mass moved up,
mass and inertia about the cg kept: :func:`~wmr_dynamics.scenarios.landtamer_ramp.landtamer`).  Liftoff: a
wheel's model normal force is 0.  Rollover: ``SimResult.rolled_over`` (body z axis below the horizontal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.model import WmrModel
from wmr_dynamics.scenarios.landtamer_ramp import landtamer, nonconverged, pacejka_options, run_dae
from wmr_dynamics.simulate import SimResult, Simulator
from wmr_dynamics.terrain import Plane

DT = 0.04
# (a) loss of traction
MU_LOW = 0.6
V_LOW, V_HIGH = 0.5, 5.0  # m/s
T_FAST, T_SLOW = 1.0, 3.0  # s: speed up at 1 s, back down at 3 s
TURN_RATE = 2.0  # rad/s, while at full speed
TRACTION_DURATION = 6.0
# (b) rollover
ROLL_SPEED, ROLL_TURN, ROLL_TURN_AT = 5.0, 7.0, 1.0
ROLL_DURATION = 5.0
CG_RAISED = 1.25  # m, body cg; the baseline is the bundled model (0.833 m)


# ---- (a) loss of traction --------------------------------------------------------------------------------

def traction_command(turn_rate: float = 0.0, v_high: float = V_HIGH) -> Callable[[float], tuple[float, float]]:
    def command(t: float) -> tuple[float, float]:
        fast = T_FAST <= t < T_SLOW
        return (v_high if fast else V_LOW), (turn_rate if fast else 0.0)

    return command


def run_traction(turn_rate: float = 0.0, dt: float = DT, duration: float = TRACTION_DURATION, mu: float = MU_LOW,
                 v_high: float = V_HIGH, model: WmrModel | None = None) -> SimResult:
    """The loss-of-traction test on flat ground (μ = 0.6 by default)."""
    return run_dae(model or landtamer(), Plane(), traction_command(turn_rate, v_high), duration, dt, mu=mu)


def normalized_force(res: SimResult) -> tuple[NDArray, NDArray]:
    """f_x/f_z and f_y/f_z (n+1, nw); NaN where the wheel carries no load."""
    F = res.contact_force
    fz = np.where(F[:, :, 2] > 0.0, F[:, :, 2], np.nan)
    return F[:, :, 0] / fz, F[:, :, 1] / fz


def model_curve(mu: float, s: NDArray, alpha: float = 0.0, model: WmrModel | None = None) -> NDArray:
    """The contact model's f_x/f_z at bounded slip ratio ``s`` (eq. 2.40) and slip angle ``alpha`` (rad)."""
    model = model or landtamer()
    contact = pacejka_options(model, mu).contact
    s = np.asarray(s, dtype=float)
    Vx = 1.0
    Rw = np.where(s >= 0.0, Vx / np.maximum(1.0 - s, 1e-9), Vx * (1.0 + s))  # s = (Rω − V_x)/max(|Rω|, |V_x|)
    n = s.size
    v = np.c_[Vx - Rw, np.full(n, np.tan(alpha) * Vx), np.zeros(n)]
    f = contact.evaluate(v, Rw, np.full(n, -0.02))[0]
    return f[:, 0] / f[:, 2]


def critical_slip(mu: float) -> dict[str, float]:
    """Slip ratio and f_x/f_z at the peaks of the model's curve (α = 0), driving and braking."""
    s = np.linspace(-0.999, 0.999, 3997)
    c = model_curve(mu, s)
    i, j = int(np.argmax(c)), int(np.argmin(c))
    return {"s_drive": float(s[i]), "peak_drive": float(c[i]), "s_brake": float(s[j]), "peak_brake": float(c[j])}


@dataclass
class TractionMetrics:
    """Per test: over all wheels and steps, in the acceleration (1–3 s) and braking (3–5 s) windows."""

    peak_drive: float  # max f_x/f_z while accelerating
    s_at_peak_drive: float
    max_s_drive: float  # max slip ratio while accelerating
    force_at_max_s_drive: float  # f_x/f_z at that slip
    peak_brake: float  # min (most negative) f_x/f_z while braking
    s_at_peak_brake: float
    min_s_brake: float
    force_at_min_s_brake: float
    nonconverged: int
    mean_iterations: float

    @property
    def drop_drive(self) -> float:
        """Fraction by which f_x/f_z at the largest slip is below the peak (> 0: force falls past the peak)."""
        return 1.0 - self.force_at_max_s_drive / self.peak_drive

    @property
    def drop_brake(self) -> float:
        return 1.0 - self.force_at_min_s_brake / self.peak_brake


def traction_metrics(res: SimResult, model: WmrModel) -> TractionMetrics:
    nx, _ = normalized_force(res)
    s = res.slip_ratio
    k = np.arange(res.steps)  # rows with a step (the last row repeats)
    t = res.t[k]
    acc = (t >= T_FAST) & (t < T_SLOW)
    brk = (t >= T_SLOW) & (t < T_SLOW + 2.0)

    def window(mask: NDArray, sign: float) -> tuple[float, float, float, float]:
        f, ss = nx[k][mask], s[k][mask]
        ok = np.isfinite(f)
        f, ss = f[ok], ss[ok]
        i = int(np.argmax(sign * f))
        j = int(np.argmax(sign * ss))
        return float(f[i]), float(ss[i]), float(ss[j]), float(f[j])

    d = window(acc, 1.0)
    b = window(brk, -1.0)
    return TractionMetrics(*d, *b, len(nonconverged(res, model)), float(res.iterations[:-1].mean()))


@dataclass
class YawMetrics:
    mean_rate_turning: float  # rad/s, mean body yaw rate over the last 1.5 s of the turn command (1.5–3 s)
    rate_at_end_of_turn: float  # rad/s, at t = 3 s
    max_rate_after: float  # rad/s, max yaw rate once the turn command has ended (t >= 3 s, command 0)
    heading_at_end_of_turn: float  # deg, at t = 3 s
    heading_change_after: float  # deg, from t = 3 s to the end (command: 0)
    max_sideslip: float  # deg, max |β|
    commanded_heading: float  # deg, ∫ω_cmd dt


def yaw_metrics(res: SimResult, turn_rate: float = TURN_RATE) -> YawMetrics:
    yaw = np.unwrap(res.rpy()[:, 2])
    k3 = int(np.searchsorted(res.t, T_SLOW - 1e-9))
    wz = res.qvel[:, 2]
    turning = (res.t >= T_FAST + 0.5) & (res.t < T_SLOW)
    beta = np.degrees(np.arctan2(res.qvel[:, 4], res.qvel[:, 3]))
    moving = np.hypot(res.qvel[:, 3], res.qvel[:, 4]) > 0.2
    return YawMetrics(float(wz[turning].mean()), float(wz[k3]), float(np.abs(wz[k3:]).max()),
                      float(np.degrees(yaw[k3] - yaw[0])), float(np.degrees(yaw[-1] - yaw[k3])),
                      float(np.abs(beta[moving]).max()), float(np.degrees(turn_rate * (T_SLOW - T_FAST))))


# ---- (b) rollover ----------------------------------------------------------------------------------------

def rollover_command(t: float) -> tuple[float, float]:
    return ROLL_SPEED, (ROLL_TURN if t >= ROLL_TURN_AT else 0.0)


def run_rollover(cg: float | None = None, dt: float = DT, duration: float = ROLL_DURATION,
                 at_speed: bool = False) -> SimResult:
    """The rollover test; ``cg``: body cg height (m), None = the bundled model (0.83 m).  ``at_speed``: start
    at 5 m/s (body and wheels) instead of from rest."""
    model = landtamer(cg)
    terrain = Plane()
    if not at_speed:
        return run_dae(model, terrain, rollover_command, duration, dt)
    sim = Simulator(model, terrain, mode="dynamic", dt=dt, dynamics=pacejka_options(model))
    qvel0 = np.zeros(model.num_dof)
    qvel0[3] = ROLL_SPEED
    qvel0[model.wheel_frame + 5] = ROLL_SPEED / model.wheel_radii
    return sim.run(duration, rollover_command, q0=sim.initial_state(xyz=(0.0, 0.0)), progress=False, qvel0=qvel0)


def upright(res: SimResult) -> NDArray:
    """R[2, 2] of the body (cos of the tilt from vertical) per row."""
    x, y = res.q[:, 0], res.q[:, 1]
    return 1.0 - 2.0 * (x * x + y * y)


@dataclass
class RolloverMetrics:
    rolled_over: bool
    t_rollover: float | None  # s, first time the body's z axis is below the horizontal
    max_tilt: float  # deg, max tilt from vertical before rollover (the whole run if none)
    max_roll: float  # deg, max |roll| before rollover
    lifted_launch: list[str]  # wheels with zero normal force during 0–1 s
    lifted_turn: list[str]  # wheels with zero normal force from 1 s to rollover / the end
    recontact: dict[str, bool]  # per wheel lifted in the turn: carries load again at the end (or before rollover)
    max_lifted_at_once: int  # during the turn window
    last_wheel: str | None  # the last wheel in contact before rollover (the pivot)
    final_liftoff: dict[str, float]  # rolled over: wheel → time (s) it left the ground for the last time
    nonconverged_before: int  # force-balance steps above tolerance before rollover (or in the run)
    nonconverged_after: int
    final_yaw_rate: float

    @property
    def lifted_any(self) -> list[str]:
        return sorted(set(self.lifted_launch) | set(self.lifted_turn))


def rollover_metrics(res: SimResult, model: WmrModel) -> RolloverMetrics:
    names = model.wheel_names
    fz = res.contact_force[:-1, :, 2]
    t = res.t[:-1]
    c = upright(res)[:-1]
    k_roll = int(np.argmax(c < 0.0)) if np.any(c < 0.0) else None
    end = k_roll if k_roll is not None else len(t)
    off = fz <= 0.0
    launch = t < ROLL_TURN_AT
    turn = (t >= ROLL_TURN_AT) & (np.arange(len(t)) < end)
    lifted_launch = [names[w] for w in range(len(names)) if off[launch, w].any()]
    lifted_turn = [names[w] for w in range(len(names)) if off[turn, w].any()]
    recontact = {}
    for w, n in enumerate(names):
        if n in lifted_turn:
            last_off = np.flatnonzero(off[turn, w])[-1]
            recontact[n] = bool((~off[turn, w][last_off:]).any())
    last = None
    if k_roll is not None:
        in_contact = np.flatnonzero((~off[:k_roll]).any(axis=1))
        if in_contact.size:
            kk = in_contact[-1]
            last = names[int(np.argmax(fz[kk]))]
    final_liftoff = {}
    if k_roll is not None:
        for w, n in enumerate(names):
            on = np.flatnonzero(~off[:k_roll, w])
            final_liftoff[n] = float(t[on[-1] + 1]) if on.size else 0.0
    bad = nonconverged(res, model)
    rpy = np.degrees(res.rpy()[:end])
    tilt = np.degrees(np.arccos(np.clip(upright(res)[:end], -1.0, 1.0)))
    return RolloverMetrics(res.rolled_over, None if k_roll is None else float(t[k_roll]), float(tilt.max()),
                           float(np.abs(rpy[:, 0]).max()), lifted_launch, lifted_turn, recontact,
                           int(off[turn].sum(axis=1).max()) if turn.any() else 0, last, final_liftoff,
                           int((bad < end).sum()), int((bad >= end).sum()), float(res.qvel[-1, 2]))
