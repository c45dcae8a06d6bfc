"""Compiled kinematic step and rollout: the stabilized DAE of thesis §2.2.5 (eqs. 2.33–2.39) as numba kernels.

``Simulator`` in ``kinematic`` mode with the Euler integrator: forward kinematics (Alg. 1) → collision
(§2.2.1) → wheel Jacobians (Alg. 2) → the constraint system [A_wheel; A_joint] q̇' = [v_c; −σ c] with
v_c = (0, 0, −σΔz) per wheel in contact (eqs. 2.34–2.36; the rows weighted, a lifted wheel's weakly, see
:mod:`wmr_dynamics.kinematics.contact_set`) → actuated rates known (eq. 2.37) → least squares for the
rest (eq. 2.38, :func:`~wmr_dynamics.compiled.linalg.least_squares`: normal equations by Cholesky, the
pseudoinverse solution when the unknown columns have full rank, which they have for any vehicle with three
wheels on the ground) → URDF joint limits as hard stops (an active set) → Euler
step (eq. 2.39).

Entry points: :func:`kinematic_step` (one step for given actuated rates), :func:`kinematic_rollout` (a whole
run driven by command rows through a compiled controller; ``controller_data(None, model, direct=True)``
takes the rows as the actuated rates themselves), :func:`kinematic_velocity` (the velocity solve alone),
:func:`velocity_solve` (eqs. 2.37–2.38 for any known set: the solve of the Python DAE API,
:mod:`wmr_dynamics.kinematics.dae`).

Speed, Zoë on the thesis rough terrains at Δt = 0.04 s, one core of this project's machines: 5.0 µs per
step with the sampled collision search (≈ 8,000× real time; ~3.5 µs of it the search; the thesis author's
C++ library on the same machines and terrains: 3,740×).  The per-row work runs in ``_nrt=False`` kernels (no
reference counting of the workspace's arrays per call) with Alg. 1, Alg. 2 and the controller inlined; a
step allocates nothing (enhanced kinematics and RK4 included: their scratch, :class:`KinematicScratch`, is
made once per rollout or advance call).

Cold compile: the step calls the collision search — the package's largest kernel — with the default sample
count and method as constants (numba then drops the other search and folds the sample tables: ~2 % of the
step, measured against a run-time count); the Python contact query calls the same specialization
(``collision._wheel_contacts_default``), so the kinematic engine compiles the search once.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled import controllers as _ctl
from wmr_dynamics.compiled.collision import METHOD_SAMPLED, N_SAMPLES, wheel_contacts_kernel
from wmr_dynamics.compiled.controllers import ControllerData
from wmr_dynamics.compiled.data import ModelData, TerrainData
from wmr_dynamics.compiled.linalg import least_squares
from wmr_dynamics.kinematics import contact_set as _cs
from wmr_dynamics.kinematics import fk as _fk
from wmr_dynamics.kinematics import jacobians as _jac
from wmr_dynamics.kinematics.enhanced import (
    EnhancedWork,
    _body_force,
    _body_slip,
    _composite_inertia,
    _mass_and_cg,
    _rollover_margin,
    enhanced_work,
)
from wmr_dynamics.kinematics.state import _euler_step, _state_rate

STATUS_TERRAIN, STATUS_SINGULAR, STATUS_NONFINITE, STATUS_COMMAND, STATUS_FREE_FALL = 1, 2, 3, 4, 5
INTEGRATOR_EULER, INTEGRATOR_RK4 = 0, 1
MAX_LIMIT_ROUNDS = 4  # solve_velocity_limited's max_rounds

# Alg. 1 and Alg. 2 of the kinematics package, inlined here: a call that is not inlined passes its arrays
# through reference counting (~0.1 µs per wheel Jacobian); same source, so one implementation.
_forward_kinematics = njit(inline="always", cache=False)(getattr(_fk._forward_kinematics, "py_func",
                                                                _fk._forward_kinematics))
_wheel_jacobian = njit(inline="always", cache=False)(getattr(_jac._wheel_jacobian, "py_func", _jac._wheel_jacobian))
_belt_column = njit(inline="always", cache=False)(getattr(_jac._belt_column, "py_func", _jac._belt_column))
# The collision search inlined into the velocity solve (its one caller here): as a call it is passed every array
# of the model, terrain and outputs by value, and its constants (N_SAMPLES, METHOD_SAMPLED) are not folded in.
# Inlined, Zoë's kinematic step runs 3.69 → 3.15 µs (bitwise the same; docs/benchmarks.md, 2026-11-27), for
# about three minutes more of the engine's one-off compile (≈ 120 → 307 s).  Same source: one implementation.
_wheel_contacts = njit(inline="always", cache=False)(getattr(wheel_contacts_kernel, "py_func", wheel_contacts_kernel))
_controller_rates = njit(inline="always", cache=False)(getattr(_ctl.controller_rates, "py_func",
                                                              _ctl.controller_rates))
_update_contact_set = njit(inline="always", cache=False)(getattr(_cs.update_contact_set, "py_func",
                                                                _cs.update_contact_set))
_normal_target = _cs.normal_target


class KinematicWorkspace(NamedTuple):
    """Preallocated arrays of one kinematic step (nf frames, n = nf + 5 dof, nw wheels, nr = 3 nw + nc rows)."""

    T_parent: NDArray  # (nf, 4, 4)
    T_world: NDArray  # (nf, 4, 4)
    points: NDArray  # (nw, 3) contact points, m
    frames: NDArray  # (nw, 3, 3) contact frames
    dz: NDArray  # (nw,) Δz, m (eq. 2.8)
    angle: NDArray  # (nw,) contact angles, rad (hub frame; the next search's warm start, NaN: none)
    lateral: NDArray  # (nw,) m
    jtmp: NDArray  # (3, n) Jacobian work
    A: NDArray  # (nr, n) [A_wheel; A_joint] (eq. 2.34)
    v: NDArray  # (nr,) right-hand side of eqs. 2.35–2.36
    known: NDArray  # (n,) bool
    value: NDArray  # (n,) known values
    unk: NDArray  # (n,) int64 unknown columns
    N: NDArray  # (n, n) normal matrix / its Cholesky factor
    rhs: NDArray  # (nr,)
    x: NDArray  # (n,)
    qvel: NDArray  # (n,) the solved q̇'
    u: NDArray  # (na,) actuated rates
    q_next: NDArray  # (nq,)
    in_contact: NDArray  # (nw,) bool, the contact set (kinematics.contact_set; carried from step to step)
    dz_pred: NDArray  # (nw,) Δz predicted one Baumgarte horizon ahead, m
    row_weight: NDArray  # (nw, 2) each wheel's (slip-row, normal-row) weight in eq. 2.38 (contact_set)
    body: NDArray  # (4, 6): body force f_b (eq. 2.44), body slip (eq. 2.50), [com (m), mass (kg), margin (m)]


class KinematicScratch(NamedTuple):
    """Scratch of the enhanced and RK4 steps, made once per rollout / advance call (:func:`kinematic_scratch`),
    so that their steps allocate nothing.  Not a part of :class:`KinematicWorkspace`: numba passes the
    workspace by value to every non-inlined kernel of the plain step, and 14 more arrays in it made the
    plain kinematic step 2–6 % slower (measured)."""

    enhanced: EnhancedWork  # the body force's composite inertia and the rollover margin's hull (thesis §2.3)
    rk: NDArray  # (6, nq) RK4: the stage state, k1…k4, the step's own q̇' (_rk4)
    rk_saved: NDArray  # (nw, 7) RK4: each wheel's contact set, row weights, Δz and contact point (_rk4)


class KinematicsData(NamedTuple):
    """The kinematic model's settings (built by ``wmr_dynamics.compiled.engine``)."""

    sigma: float  # Baumgarte gain σ, 1/s (eqs. 2.35–2.36)
    slip: NDArray  # (15,) body slip p1…p6, lon, lat, ang (SlipParams.kernel_data)
    enhanced: bool  # apply the body slip (eqs. 2.44–2.52)
    margin: bool  # compute the rollover margin (ws.body[2, 4])
    integrator: int  # INTEGRATOR_EULER (eq. 2.39) or INTEGRATOR_RK4


@njit
def kinematic_workspace(md: ModelData) -> KinematicWorkspace:
    """Allocate a :class:`KinematicWorkspace` for the model (once per rollout, not per step)."""
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    nr = 3 * nw + md.A_joint.shape[0]
    z = np.zeros
    return KinematicWorkspace(z((nf, 4, 4)), z((nf, 4, 4)), z((nw, 3)), z((nw, 3, 3)), z(nw),
                              np.full(nw, np.nan), z(nw),  # angle NaN: no previous contact angle
                              z((3, n)), z((nr, n)), z(nr), np.zeros(n, dtype=np.bool_), z(n),
                              np.zeros(n, dtype=np.int64), z((n, n)), z(nr), z(n), z(n),
                              z(max(md.actuated_frames.shape[0], 1)), z(nf + 6), np.ones(nw, dtype=np.bool_),
                              z(nw), np.ones((nw, 2)), z((4, 6)))


@njit
def kinematic_scratch(md: ModelData) -> KinematicScratch:
    """Allocate a :class:`KinematicScratch` for the model (once per rollout or advance call)."""
    nw = md.wheel_frame.shape[0]
    return KinematicScratch(enhanced_work(nw), np.zeros((6, md.parent.shape[0] + 6)), np.zeros((nw, 7)))


@njit(inline="always")
def _evaluate(md: ModelData, td: TerrainData, ws: KinematicWorkspace, q: NDArray, sigma: float,
              fk_done: bool) -> int:
    """FK (Alg. 1, unless ``fk_done``), collision (the default sampled search), the contact set (advanced one
    step), [A_wheel; A_joint] (eqs. 2.24, 2.26) and v (eqs. 2.35–2.36), each wheel's rows weighted by
    ``row_weight``."""
    nw = md.wheel_frame.shape[0]
    n = md.parent.shape[0] + 5
    if not fk_done:
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
    # the default search, inlined with its sample count and method as constants
    if _wheel_contacts(md, td, ws.T_world, N_SAMPLES, ws.points, ws.frames, ws.dz, ws.angle, ws.lateral,
                             METHOD_SAMPLED) != 0:
        return STATUS_TERRAIN
    for w in range(nw):
        _wheel_jacobian(md.parent, md.jtype, ws.T_world, md.wheel_frame[w], ws.points[w], ws.frames[w],
                        ws.A[3 * w:3 * w + 3], ws.jtmp)
        if md.wheel_kind[w] != 0:  # a track element: the belt's column (Contact Surface Motion)
            _belt_column(md, ws.T_world, w, ws.points[w], ws.frames[w], ws.A[3 * w:3 * w + 3])
        rate = 0.0  # the wheel's normal velocity under the previous solve's q̇' (ws.qvel)
        for j in range(n):
            rate += ws.A[3 * w + 2, j] * ws.qvel[j]
        ws.dz_pred[w] = ws.dz[w] + rate / sigma
    _update_contact_set(ws.dz, ws.dz_pred, ws.in_contact, ws.row_weight)  # rows only for wheels in contact
    _weighted_rows(md, ws, q, sigma, nw, n)
    return 0


@njit(inline="always")
def _weighted_rows(md: ModelData, ws: KinematicWorkspace, q: NDArray, sigma: float, nw: int, n: int) -> None:
    """The wheel rows of ws.A (A_wheel, eq. 2.24) weighted by ws.row_weight (rows only for wheels in contact,
    §2.2.2; :mod:`~wmr_dynamics.kinematics.contact_set`), their v (eq. 2.35: no slip, the normal row closing
    ``normal_target`` of Δz within 1/σ; slip rows 0 — enhanced kinematics sets them later, eq. 2.52), and the
    joint rows [A_joint, −σ c] (eqs. 2.25–2.26, 2.36)."""
    for w in range(nw):
        for c in range(3):
            wt = ws.row_weight[w, 1 if c == 2 else 0]
            if wt != 1.0:
                for j in range(n):
                    ws.A[3 * w + c, j] *= wt
        ws.v[3 * w] = 0.0
        ws.v[3 * w + 1] = 0.0
        ws.v[3 * w + 2] = -sigma * _normal_target(ws.dz[w], ws.in_contact[w]) * ws.row_weight[w, 1]  # eq. 2.35
    for k in range(md.A_joint.shape[0]):
        r = 3 * nw + k
        c = -md.b_joint[k]  # eq. 2.25: c = A_joint θ − b
        for j in range(n):
            ws.A[r, j] = md.A_joint[k, j]
            if j >= 6:
                c += md.A_joint[k, j] * q[j + 1]
        ws.v[r] = -sigma * c  # eq. 2.36


@njit(inline="always")
def _solve(ws: KinematicWorkspace, n: int, nr: int) -> bool:
    """Eqs. 2.37–2.38: q̇'[known] = value, the rest by least squares against rhs = v − A[:, known] value."""
    for r in range(nr):
        ws.rhs[r] = ws.v[r]
    nu = 0
    for j in range(n):  # a column at a time: the known test once per column, not once per entry
        if not ws.known[j]:
            ws.unk[nu] = j
            nu += 1
            continue
        vj = ws.value[j]
        for r in range(nr):
            ws.rhs[r] -= ws.A[r, j] * vj
    if not least_squares(ws.A, nr, ws.unk, nu, ws.rhs, ws.N, ws.x, ws.jtmp[0]):
        return False
    for j in range(n):
        ws.qvel[j] = ws.value[j] if ws.known[j] else 0.0
    for a in range(nu):
        ws.qvel[ws.unk[a]] = ws.x[a]
    return True


@njit(_nrt=False)  # allocation-free: no reference counting of the workspace's arrays per call
def kinematic_velocity(md: ModelData, td: TerrainData, ws: KinematicWorkspace, q: NDArray, u: NDArray,
                       sigma: float, fk_done: bool = False) -> int:
    """q̇' at state q for the actuated rates u (rad/s or m/s, ``actuated_frames`` order): the result in ws.qvel
    (and Δz, contacts, A, v in ws).  Without body slip: the enhanced model's second solve is :func:`_solve_at`'s.

    ``sigma``: the Baumgarte gain, 1/s.  ``fk_done``: ws.T_world already holds the forward kinematics of q.
    The collision search is the default sampled one (``collision.METHOD_SAMPLED``, ``N_SAMPLES``).  Returns 0,
    or STATUS_TERRAIN / STATUS_SINGULAR / STATUS_NONFINITE / STATUS_COMMAND (a non-finite rate in u).
    """
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    nr = 3 * nw + md.A_joint.shape[0]
    for k in range(md.actuated_frames.shape[0]):
        if not math.isfinite(u[k]):
            return STATUS_COMMAND
    st = _evaluate(md, td, ws, q, sigma, fk_done)
    if st != 0:
        return st
    if not _solve_limited(md, ws, q, u, sigma, n, nr):
        return STATUS_SINGULAR
    for j in range(n):
        if not math.isfinite(ws.qvel[j]):
            return STATUS_NONFINITE
    return 0


@njit(_nrt=False)
def _resolve(md: ModelData, kd: KinematicsData, ws: KinematicWorkspace, q: NDArray) -> int:
    """Eq. 2.38 again with the wheels' slip rows of v set (enhanced kinematics, eq. 2.52)."""
    n = md.parent.shape[0] + 5
    if not _solve_limited(md, ws, q, ws.u, kd.sigma, n, 3 * md.wheel_frame.shape[0] + md.A_joint.shape[0]):
        return STATUS_SINGULAR
    for j in range(n):
        if not math.isfinite(ws.qvel[j]):
            return STATUS_NONFINITE
    return 0


@njit(inline="always")
def _solve_at(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
              sc: KinematicScratch, q: NDArray, cmd: NDArray) -> int:
    """FK, controller and velocity solve at q for command row ``cmd``; enhanced kinematics (``kd.enhanced``):
    solved again with the wheel slips of the body slip predicted from the first solve's motion (eqs.
    2.44–2.52); with ``kd.margin`` the rollover margin of that body force goes to ws.body[2, 4].  Returns a
    STATUS_* code (STATUS_FREE_FALL: enhanced kinematics with no normal force at the cg)."""
    st = _solve_row(md, td, cd, kd, ws, q, cmd)
    if st != 0 or not (kd.enhanced or kd.margin):
        return st
    st = _body_slip_and_margin(md, kd, ws, sc.enhanced, md.wheel_frame.shape[0], md.parent.shape[0] + 5)
    if st != 0 or not kd.enhanced:
        return st
    return _resolve(md, kd, ws, q)


@njit(inline="always")
def _solve_limited(md: ModelData, ws: KinematicWorkspace, q: NDArray, u: NDArray, sigma: float, n: int,
                   nr: int) -> bool:
    """Eqs. 2.37–2.38 with the actuated rates known and the URDF joint limits as hard stops
    (:func:`_active_set`)."""
    for j in range(n):
        ws.known[j] = False
    for k in range(md.actuated_frames.shape[0]):  # eq. 2.37
        c = md.actuated_frames[k] + 5
        ws.known[c] = True
        ws.value[c] = u[k]
    return _active_set(md, ws, q, sigma, n, nr, MAX_LIMIT_ROUNDS)


@njit(inline="always")
def _active_set(md: ModelData, ws: KinematicWorkspace, q: NDArray, sigma: float, n: int, nr: int,
                rounds: int) -> bool:
    """Eqs. 2.37–2.38 for the known set in ws.known / ws.value with the URDF joint limits as hard stops (an active
    set; not in the thesis): a joint that would pass a limit within the horizon 1/σ is held at the rate
    σ·(limit − θ) that brings it exactly there (or back inside, if it was out: Baumgarte, as eq. 2.36), and the
    system is solved again, at most ``rounds`` times."""
    nf = md.parent.shape[0]
    for _ in range(rounds + 1):
        if not _solve(ws, n, nr):
            return False
        hit = False
        for i in range(1, nf):
            th, rate = q[6 + i], ws.qvel[5 + i]
            lo, hi = md.joint_lower[i], md.joint_upper[i]
            if rate > sigma * (hi - th):  # would pass the limit within the horizon 1/σ
                ws.known[5 + i], ws.value[5 + i], hit = True, sigma * (hi - th), True
            elif rate < sigma * (lo - th):
                ws.known[5 + i], ws.value[5 + i], hit = True, sigma * (lo - th), True
        if not hit:
            break
    return True


@njit(_nrt=False)
def velocity_solve(md: ModelData, ws: KinematicWorkspace, q: NDArray, sigma: float, slip: NDArray,
                   rounds: int) -> bool:
    """The velocity solve of the Python DAE API (``kinematics.dae.solve_velocity``) at state q: the caller has put
    A_wheel (unweighted) in the wheel rows of ws.A, Δz, the contact set and its row weights in ws.dz,
    ws.in_contact, ws.row_weight, and the known set in ws.known / ws.value; ``slip`` (nw, 2) are prescribed
    contact slip velocities (m/s; eq. 2.52).  The system is assembled (:func:`_weighted_rows`) and solved
    (eqs. 2.37–2.38) into ws.qvel: ``rounds`` < 0 one least-squares solve; else the joint limits as hard
    stops, at most ``rounds`` active-set rounds (:func:`_active_set`; the known set and values are updated).
    False if the solve failed (all-zero or non-finite system)."""
    n = md.parent.shape[0] + 5
    nw = md.wheel_frame.shape[0]
    _weighted_rows(md, ws, q, sigma, nw, n)
    for w in range(nw):
        ws.v[3 * w] = slip[w, 0] * ws.row_weight[w, 0]
        ws.v[3 * w + 1] = slip[w, 1] * ws.row_weight[w, 0]
    nr = 3 * nw + md.A_joint.shape[0]
    if rounds < 0:
        return _solve(ws, n, nr)
    return _active_set(md, ws, q, sigma, n, nr, rounds)


@njit(_nrt=False)
def _body_slip_and_margin(md: ModelData, kd: KinematicsData, ws: KinematicWorkspace, work: EnhancedWork, nw: int,
                          n: int) -> int:
    """Thesis §2.3 at the solved q̇': the body force f_b (eq. 2.44), the rollover margin of its line of action,
    and (enhanced) the body slip (eqs. 2.45–2.50) turned into the wheels' slip rows of v (eq. 2.52)."""
    # ``work``: preallocated scratch (KinematicScratch.enhanced): the step allocates nothing
    if not kd.enhanced:
        ws.body[2, 4] = _margin_only(md, ws, work)
        return 0
    Ib = work.inertia
    m = _composite_inertia(md.I_spatial, ws.T_world, Ib, work)
    com = ws.body[2, :3]
    com[0], com[1], com[2] = Ib[2, 4] / m, Ib[0, 5] / m, Ib[1, 3] / m
    ws.body[2, 3] = m
    R = ws.T_world[0]
    _body_force(Ib, R, ws.qvel, md.gravity, ws.body[0])  # eq. 2.44
    if kd.margin:
        cg, f = work.cg, work.force
        for a in range(3):
            cg[a] = R[a, 0] * com[0] + R[a, 1] * com[1] + R[a, 2] * com[2] + R[a, 3]
            f[a] = R[a, 0] * ws.body[0, 3] + R[a, 1] * ws.body[0, 4] + R[a, 2] * ws.body[0, 5]
        ws.body[2, 4] = _rollover_margin(cg, f, ws.points, ws.frames[:, :, 2], work)
    if not kd.enhanced:
        return 0
    if not _body_slip(kd.slip, com, ws.qvel, ws.body[0], ws.body[1]):
        return STATUS_FREE_FALL
    for w in range(nw):  # eq. 2.52: the wheels' slip rows (ws.A carries their row weights, so does v)
        for c in range(2):
            s = 0.0
            for j in range(6):
                s += ws.A[3 * w + c, j] * ws.body[1, j]
            ws.v[3 * w + c] = s
    return 0


@njit(inline="always")
def _margin_only(md: ModelData, ws: KinematicWorkspace, work: EnhancedWork) -> float:
    """The rollover margin without the body slip: the line of action it needs is that of the body force's linear
    part (eq. 2.44's rows 4–6), m g_b − ω × m(v + ω × c), through the centre of mass — the mass and centre of
    mass of the tree, not its composite rotational inertia (Σ R Ī Rᵀ + parallel axes over the frames: 0.36 of
    0.37 µs for Zoë).  ws.body[2] gets the centre of mass (body axes) and mass as with the body slip; the body
    force's angular part ws.body[0, :3] is not computed (NaN)."""
    cg, f = work.cg, work.force
    m = _mass_and_cg(md.I_spatial, ws.T_world, cg)
    R = ws.T_world[0]
    com = ws.body[2, :3]
    for a in range(3):  # c = R_wbᵀ (cg − p_wb), body axes
        com[a] = R[0, a] * (cg[0] - R[0, 3]) + R[1, a] * (cg[1] - R[1, 3]) + R[2, a] * (cg[2] - R[2, 3])
    ws.body[2, 3] = m
    w0, w1, w2, v = ws.qvel[0], ws.qvel[1], ws.qvel[2], ws.qvel
    p0 = m * (v[3] + w1 * com[2] - w2 * com[1])  # m (v + ω × c)
    p1 = m * (v[4] + w2 * com[0] - w0 * com[2])
    p2 = m * (v[5] + w0 * com[1] - w1 * com[0])
    g = md.gravity
    fb = ws.body[0]
    fb[0] = fb[1] = fb[2] = np.nan
    fb[3] = -m * g * R[2, 0] - (w1 * p2 - w2 * p1)  # m g_b − ω × p, g_b = R_wbᵀ (0, 0, −G)
    fb[4] = -m * g * R[2, 1] - (w2 * p0 - w0 * p2)
    fb[5] = -m * g * R[2, 2] - (w0 * p1 - w1 * p0)
    for a in range(3):
        f[a] = R[a, 0] * fb[3] + R[a, 1] * fb[4] + R[a, 2] * fb[5]
    return _rollover_margin(cg, f, ws.points, ws.frames[:, :, 2], work)


@njit(inline="always")
def _residual_and_speeds(md: ModelData, ws: KinematicWorkspace, qvel: NDArray, vc: NDArray) -> float:
    """‖A q̇' − v‖ of the last solve (VelocitySolution.residual's norm; lifted wheels' rows weighted), and
    vc[w] = ‖A_wheel,w q̇'‖ (m/s), the contact-point velocity of wheel w (``VelocitySolution.slip_speed``; the
    rows in ws.A carry the wheel's row weight, divided out here) — both from one product A q̇'."""
    n = qvel.shape[0]
    nw = md.wheel_frame.shape[0]
    res = 0.0
    for w in range(nw):
        s2 = 0.0
        for c in range(3):
            r = 3 * w + c
            s = 0.0
            for j in range(n):
                s += ws.A[r, j] * qvel[j]
            e = s - ws.v[r]
            res += e * e
            s /= ws.row_weight[w, 1 if c == 2 else 0]
            s2 += s * s
        vc[w] = math.sqrt(s2)
    for r in range(3 * nw, 3 * nw + md.A_joint.shape[0]):
        e = -ws.v[r]
        for j in range(n):
            e += ws.A[r, j] * qvel[j]
        res += e * e
    return math.sqrt(res)


@njit(_nrt=False)
def kinematic_step(md: ModelData, td: TerrainData, kd: KinematicsData, ws: KinematicWorkspace, q: NDArray,
                   u: NDArray, dt: float, q_next: NDArray, qvel: NDArray, dz: NDArray, vc: NDArray) -> int:
    """One Euler step of the stabilized-DAE kinematic model (eqs. 2.33–2.39) from state q for actuated rates u.

    Args:
        q: (nq,) state.  u: (na,) actuated joint rates (rad/s or m/s, ``actuated_frames`` order), held over
            the step.  dt: s.
        q_next: (nq,) out, the state at t + dt (eq. 2.39).  qvel: (ndof,) out, the q̇' used.  dz: (nw,) out,
            Δz at q, m.  vc: (nw,) out, ‖v_c‖ per wheel at q, m/s.
    Returns:
        0, or a STATUS_* code of :func:`kinematic_velocity`.
    """
    st = kinematic_velocity(md, td, ws, q, u, kd.sigma, False)
    if st != 0:
        return st
    for j in range(qvel.shape[0]):
        qvel[j] = ws.qvel[j]
    for w in range(md.wheel_frame.shape[0]):
        dz[w] = ws.dz[w]
    _residual_and_speeds(md, ws, qvel, vc)
    _euler_step(q, qvel, dt, q_next)  # eq. 2.39
    for i in range(q_next.shape[0]):
        if not math.isfinite(q_next[i]):
            return STATUS_NONFINITE
    return 0


@njit(inline="always")
def _solve_row_inline(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData,
                      ws: KinematicWorkspace, q: NDArray, cmd: NDArray) -> int:
    """FK, controller and the plain velocity solve at q, inlined into an allocation-free caller."""
    _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
    _controller_rates(md, cd, q, ws.T_world, cmd, ws.u)
    return kinematic_velocity(md, td, ws, q, ws.u, kd.sigma, True)


@njit(_nrt=False)
def _solve_row(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
               q: NDArray, cmd: NDArray) -> int:
    """:func:`_solve_row_inline` for callers that count references (allocation- and reference-count-free)."""
    return _solve_row_inline(md, td, cd, kd, ws, q, cmd)


@njit(_nrt=False)
def _rk4(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
         sc: KinematicScratch, q: NDArray, cmd: NDArray, dt: float) -> int:
    """ws.q_next from q and the solve at q in ws by classical Runge–Kutta 4, whose stages solve at their own
    states from the step's contact set without predicting touchdowns (ws.qvel, the set, Δz and the contact
    points of the step's own solve are restored afterwards; ws.A is the last stage's).  Its work arrays are
    sc.rk (rk[5] keeps the step's own q̇') and sc.rk_saved."""
    rk, saved = sc.rk, sc.rk_saved
    nq = q.shape[0]
    nw = md.wheel_frame.shape[0]
    n = ws.qvel.shape[0]
    for w in range(nw):
        saved[w, 0] = 1.0 if ws.in_contact[w] else 0.0
        saved[w, 1], saved[w, 2], saved[w, 3] = ws.row_weight[w, 0], ws.row_weight[w, 1], ws.dz[w]
        for c in range(3):
            saved[w, 4 + c] = ws.points[w, c]
    qvel0 = rk[5]
    for j in range(n):
        qvel0[j] = ws.qvel[j]
    _state_rate(q, ws.qvel, rk[1])  # k1
    for s in range(1, 4):
        h = dt if s == 3 else dt / 2
        for i in range(nq):
            rk[0, i] = q[i] + h * rk[s, i]
        _normalize_quaternion(rk[0])
        for w in range(nw):
            ws.in_contact[w] = saved[w, 0] > 0.5
            ws.row_weight[w, 0], ws.row_weight[w, 1] = saved[w, 1], saved[w, 2]
        for j in range(n):
            ws.qvel[j] = 0.0  # no touchdown prediction inside a step
        st = _solve_at(md, td, cd, kd, ws, sc, rk[0], cmd)
        if st != 0:
            return st
        _state_rate(rk[0], ws.qvel, rk[s + 1])  # k2, k3, k4
    for i in range(nq):
        ws.q_next[i] = q[i] + dt * (rk[1, i] + 2.0 * rk[2, i] + 2.0 * rk[3, i] + rk[4, i]) / 6.0
    _normalize_quaternion(ws.q_next)
    for w in range(nw):  # the step's own solve, as it was before the stages
        ws.in_contact[w] = saved[w, 0] > 0.5
        ws.row_weight[w, 0], ws.row_weight[w, 1], ws.dz[w] = saved[w, 1], saved[w, 2], saved[w, 3]
        for c in range(3):
            ws.points[w, c] = saved[w, 4 + c]
    for j in range(n):
        ws.qvel[j] = qvel0[j]
    return 0


@njit(inline="always")
def _normalize_quaternion(q: NDArray) -> None:
    s = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for i in range(4):
        q[i] /= s


@njit(_nrt=False)
def _rollout_row(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
                 work: EnhancedWork, q: NDArray, cmd: NDArray, k: int, last: bool, QV: NDArray, DZ: NDArray,
                 CP: NDArray, VC: NDArray, RES: NDArray, ROLL: NDArray, record: bool) -> int:
    """Row k of :func:`kinematic_rollout` at state q without body slip: the solve, the rollover margin where
    ``kd.margin`` (:func:`_margin_only`), and the diagnostics (only q̇' without ``record``); one call per row,
    allocation- and reference-count-free (a call passes the model and workspace tuples by value)."""
    st = _solve_row_inline(md, td, cd, kd, ws, q, cmd)
    if st == 0:
        if kd.margin:
            ws.body[2, 4] = _margin_only(md, ws, work)
        _row_record(md, kd, ws, k, last, QV, DZ, CP, VC, RES, ROLL, record)
    return st


@njit(inline="always")
def _row_record(md: ModelData, kd: KinematicsData, ws: KinematicWorkspace, k: int, last: bool, QV: NDArray,
                DZ: NDArray, CP: NDArray, VC: NDArray, RES: NDArray, ROLL: NDArray, record: bool) -> None:
    """Row k's diagnostics (:func:`_row_diagnostics_inline`), or without ``record`` its q̇' alone (unless it
    is the last row)."""
    if record:
        _row_diagnostics_inline(md, kd, ws, k, last, QV, DZ, CP, VC, RES, ROLL)
    elif not last:
        for j in range(QV.shape[1]):
            QV[k, j] = ws.qvel[j]


@njit(inline="always")
def _row_diagnostics_inline(md: ModelData, kd: KinematicsData, ws: KinematicWorkspace, k: int, last: bool,
                            QV: NDArray, DZ: NDArray, CP: NDArray, VC: NDArray, RES: NDArray, ROLL: NDArray) -> None:
    """Row k's residual, margin, Δz, contact points and ‖v_c‖ (the last row's ‖v_c‖ is overwritten by the
    caller); q̇' unless it is the last row."""
    RES[k] = _residual_and_speeds(md, ws, ws.qvel, VC[k])
    ROLL[k] = ws.body[2, 4] if kd.margin else np.nan
    for w in range(md.wheel_frame.shape[0]):
        DZ[k, w] = ws.dz[w]
        for c in range(3):
            CP[k, w, c] = ws.points[w, c]
    if not last:
        for j in range(QV.shape[1]):
            QV[k, j] = ws.qvel[j]


@njit(_nrt=False)
def _row_diagnostics(md: ModelData, kd: KinematicsData, ws: KinematicWorkspace, k: int, last: bool, QV: NDArray,
                     DZ: NDArray, CP: NDArray, VC: NDArray, RES: NDArray, ROLL: NDArray, record: bool) -> None:
    """:func:`_row_record` as a call (the rows with body slip: their code is not inlined twice)."""
    _row_record(md, kd, ws, k, last, QV, DZ, CP, VC, RES, ROLL, record)


@njit(_nrt=False)
def _step_diagnostics(md: ModelData, kd: KinematicsData, ws: KinematicWorkspace, vc: NDArray,
                      diag: NDArray) -> None:
    """‖v_c‖ per wheel, the residual and the margin of the solve in ws."""
    diag[0] = _residual_and_speeds(md, ws, ws.qvel, vc)
    diag[1] = ws.body[2, 4] if kd.margin else np.nan


@njit
def kinematic_rollout(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
                      q0: NDArray, cmds: NDArray, dt: float, Q: NDArray, QV: NDArray, DZ: NDArray, CP: NDArray,
                      VC: NDArray, RES: NDArray, ROLL: NDArray, record: bool) -> tuple:
    """Rows k = 0..n (n = len(cmds) − 1, t_k = k·dt), as ``Simulator.run`` in the kinematic modes: row k holds the
    state at t_k and the velocity solve there for command row ``cmds[k]`` (through ``controller_rates``; a
    ``direct`` ControllerData takes the rows as actuated rates); the last row's solve gives its Δz, contact
    points, residual and margin, its q̇' and ‖v_c‖ repeat the previous row's.

    Outputs (preallocated): Q (n+1, nq), QV (n+1, ndof), DZ (n+1, nw) m, CP (n+1, nw, 3) m, VC (n+1, nw) m/s,
    RES (n+1,), ROLL (n+1,) rollover margin, m (NaN unless ``kd.margin``).  Without ``record`` only Q and QV
    are written (the states alone, as a planner or the calibration's predictions need them: ≈ 0.2 µs less per
    step, issue 14).  Returns (status, row of the failure or −1); rows from the failing one on are not written
    (Q's is).
    """
    sc = kinematic_scratch(md)  # once per rollout: the steps allocate nothing
    return _rollout_loop(md, td, cd, kd, ws, sc, q0, cmds, dt, Q, QV, DZ, CP, VC, RES, ROLL, np.empty(q0.shape[0]),
                         record)


# The loops over the steps are functions of their own, compiled without reference counting: from a function
# that counts references (one that allocates, as the callers above), every call in the loop would count the
# references of every array in the model, terrain and workspace tuples it is passed (Zoë's kinematic step: 4.41
# → 4.26 µs, docs/benchmarks.md).
@njit(_nrt=False)
def _rollout_loop(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
                  sc: KinematicScratch, q0: NDArray, cmds: NDArray, dt: float, Q: NDArray, QV: NDArray, DZ: NDArray,
                  CP: NDArray, VC: NDArray, RES: NDArray, ROLL: NDArray, q: NDArray, record: bool) -> tuple:
    """:func:`kinematic_rollout`'s steps, from q0 in the work array q."""
    n = cmds.shape[0] - 1
    nq = q0.shape[0]
    for i in range(nq):
        q[i] = q0[i]
    for k in range(n + 1):
        for i in range(nq):
            Q[k, i] = q[i]
        if kd.enhanced:
            st = _solve_at(md, td, cd, kd, ws, sc, q, cmds[k])
            if st == 0:
                _row_diagnostics(md, kd, ws, k, k == n, QV, DZ, CP, VC, RES, ROLL, record)
        else:
            st = _rollout_row(md, td, cd, kd, ws, sc.enhanced, q, cmds[k], k, k == n, QV, DZ, CP, VC, RES, ROLL,
                              record)
        if st != 0:
            return st, k
        if k == n:
            break
        if kd.integrator == INTEGRATOR_EULER:
            _euler_step(q, ws.qvel, dt, ws.q_next)  # eq. 2.39
        else:
            st = _rk4(md, td, cd, kd, ws, sc, q, cmds[k], dt)
            if st != 0:
                return st, k
        for i in range(nq):
            if not math.isfinite(ws.q_next[i]):
                return STATUS_NONFINITE, k
            q[i] = ws.q_next[i]
    if n > 0:
        for j in range(QV.shape[1]):
            QV[n, j] = QV[n - 1, j]
        for w in range(VC.shape[1]):
            VC[n, w] = VC[n - 1, w]
    else:
        # n == 0: the one row's q̇' and ‖v_c‖ too (run-time arguments, as in the loop: one specialization)
        _row_diagnostics(md, kd, ws, n, n > 0, QV, DZ, CP, VC, RES, ROLL, record)
    return 0, -1


@njit
def kinematic_advance(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
                      q: NDArray, cmd: NDArray, n: int, dt: float, vc: NDArray, diag: NDArray) -> tuple:
    """Advance q in place by ``n`` steps with one command row ``cmd`` (the stepper's call); ``n`` = 0: the
    velocity solve at q alone, q unchanged (:func:`kinematic_solve`).

    The contact set carried in ``ws`` continues from the previous call.  The last step's solve stays in
    ``ws`` (q̇' in ws.qvel, Δz, contact points); its ‖v_c‖ per wheel goes to ``vc``, its residual ‖A q̇' − v‖
    and rollover margin (m; NaN unless ``kd.margin``) to ``diag`` (2,).  Returns
    (status, index of the failing step or −1); on failure q holds the state the failing step started from.
    """
    sc = kinematic_scratch(md)  # once per call: the steps allocate nothing
    return _advance_loop(md, td, cd, kd, ws, sc, q, cmd, n, dt, vc, diag)


@njit(_nrt=False)  # reference-count free: see _rollout_loop
def _advance_loop(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
                  sc: KinematicScratch, q: NDArray, cmd: NDArray, n: int, dt: float, vc: NDArray,
                  diag: NDArray) -> tuple:
    """:func:`kinematic_advance`'s steps."""
    nq = q.shape[0]
    for k in range(max(n, 1)):
        st = _solve_at(md, td, cd, kd, ws, sc, q, cmd)
        if st != 0:
            return st, k
        _step_diagnostics(md, kd, ws, vc, diag)
        if n == 0:
            break
        if kd.integrator == INTEGRATOR_EULER:
            _euler_step(q, ws.qvel, dt, ws.q_next)  # eq. 2.39
        else:
            st = _rk4(md, td, cd, kd, ws, sc, q, cmd, dt)
            if st != 0:
                return st, k
        for i in range(nq):
            if not math.isfinite(ws.q_next[i]):
                return STATUS_NONFINITE, k
        for i in range(nq):
            q[i] = ws.q_next[i]
    return 0, -1


def kinematic_solve(md: ModelData, td: TerrainData, cd: ControllerData, kd: KinematicsData, ws: KinematicWorkspace,
                    q: NDArray, cmd: NDArray, vc: NDArray) -> tuple[int, float]:
    """One velocity solve at q for command row ``cmd`` (``Simulator.velocity``): the result in ws, ‖v_c‖ per
    wheel in ``vc``; returns (status, ‖A q̇' − v‖).  :func:`kinematic_advance` with no step (a kernel of its
    own would add a full compile of the step to the engine's cold compile)."""
    diag = np.zeros(2)
    st, _ = kinematic_advance(md, td, cd, kd, ws, q, cmd, 0, 0.0, vc, diag)
    return (int(st), np.nan) if st != 0 else (0, float(diag[0]))
