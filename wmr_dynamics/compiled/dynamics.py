"""Compiled dynamic step: force-balance optimization (thesis §2.4.2–2.4.4) as numba kernels — the one
implementation of the dynamic model (the steps and equations: :mod:`wmr_dynamics.dynamics.force_balance`).

- every quantity lives in a preallocated :class:`DynamicsWorkspace`; nothing is allocated per step;
- the unknowns are the null-space coordinates z of the rigid rows (ideal actuators, rigid joint constraints,
  and in the ``coulomb`` mode the sticking wheels' tangential rows): q̇'[i+1] = q̇'_p + Nᵀz meets every rigid
  row's target for any z, and the error is the force balance of eq. 2.82 along N,
  e(z) = N (M q̈' + c − Aᵀ f_model), a square system (the rigid rows' forces lie in the span N removes).  This
  is the thesis's force balance (eqs. 2.76–2.84) with the velocities of eq. 2.82 as unknowns instead of the
  input rows' (eq. 2.75): with A_I of full row rank the two are a linear change of variables, so Newton's
  iterates from the same point are the same (the warm start differs: see ``_setup``); it needs no
  independent-row selection (eqs. 2.66–2.68), no C = A_I M⁻¹A_Iᵀ and no factor of M, and where A_I is rank
  deficient the free directions follow M q̈' = −c as before;
- N comes from a pivoted Gram–Schmidt of the unit vectors against the rigid rows' orthonormal basis B
  (:func:`~wmr_dynamics.compiled.linalg.null_space_rows`): for unit rigid rows it is the other unit rows;
- the parts of e and ∂e/∂x that do not depend on z (G = N M Nᵀ/Δt, e0, A Nᵀ) are computed once per step, so
  an evaluation costs the contact model plus a few small matrix–vector products;
- the line search keeps its last evaluation: when the Newton loop accepts that point it is not evaluated
  again.

Contact, actuator and joint models are dispatched by an integer code through their registries'
dispatch tables (:mod:`wmr_dynamics.registry`; ``literal_unroll`` turns each table into direct calls, and
numba compiles one kernel for all of them and caches it on disk); a user's own Python model is called
back from an object-mode block (:mod:`wmr_dynamics.compiled.callbacks`), so it too runs on this one engine.

The ``coulomb`` contact mode (static friction, issue 13 item 5) adds an active set of rigid tangential rows
around this step: the functions at the end of the module (``_coulomb_*``); the other models' steps do not
enter them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np
from numba import literal_unroll
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.actuators import ACTUATOR_MODELS
from wmr_dynamics.compiled import callbacks as _cb
from wmr_dynamics.compiled.collision import METHOD_EDGES, wheel_contacts_kernel
from wmr_dynamics.compiled.data import ModelData, TerrainData
from wmr_dynamics.compiled.kinematics import _belt_column, _forward_kinematics, _wheel_jacobian  # Alg. 1, 2 inlined
from wmr_dynamics.compiled.linalg import cho_solve, cholesky, lu_factor, lu_solve, null_space_rows, orthonormalize_last
from wmr_dynamics.contact_models._base import MOMENT_COLUMNS, WORK_ROWS
from wmr_dynamics.contact_models.coulomb import _coulomb_kernel
from wmr_dynamics.contact_models.registry import CONTACT_MODELS
from wmr_dynamics.dynamics.rigid_body import _crba, _plucker_all, _rnea
from wmr_dynamics.joint_models import JOINT_MODELS
from wmr_dynamics.kinematics.enhanced import _body_force
from wmr_dynamics.kinematics.state import _euler_step
from wmr_dynamics.registry import PYTHON, RIGID

C1 = 1e-4  # the line search's sufficient decrease (eq. D.2)
#: a chord step is taken if it cuts ‖e‖² to this fraction (halves ‖e‖); one that does not is dropped (_chord_step)
STRONG_DECREASE = 0.25
#: a chord step ends the Newton loop where its predicted ‖e‖ is below this fraction of the tolerance (_newton)
CHORD_MARGIN = 0.25
#: the Newton step solves ∂e/∂x p = −e by LU unless a pivot is at most this fraction of ∂e/∂x's largest entry (then:
#: the regularized normal equations; _newton_direction)
LU_SINGULAR = 1e-10
#: halvings of the line search's step before it gives up (α down to 2^−12; _line_search): creeping on with
#: α ≈ 1e-9 until the iteration cap only delays the half steps that follow
BACKTRACK_STEPS = 12
#: the registries' dispatch tables ((code, kernel), ...), unrolled into direct calls by the kernels below
_CONTACT_KERNELS = CONTACT_MODELS.kernels
_ACTUATOR_KERNELS = ACTUATOR_MODELS.kernels
_JOINT_KERNELS = JOINT_MODELS.kernels
CONTACT_PYTHON = JOINT_PYTHON = ACTUATOR_PYTHON = PYTHON  # a Python model: called back
#: the ``coulomb`` contact mode's code: its wheels' tangential rows are held rigid while they stick (active set,
#: :func:`_coulomb_active_set`)
CONTACT_COULOMB = next(code for code, k in _CONTACT_KERNELS
                       if getattr(k, "py_func", k) is getattr(_coulomb_kernel, "py_func", _coulomb_kernel))
#: coulomb mode: at most this many re-solves of a step with a changed stick/slide set, plus one per wheel
COULOMB_MAX_PASSES = 4
#: coulomb mode, m/s: a sticking wheel whose tangential contact velocity at the step's end exceeds this is not
#: held (a dependent rigid row whose target the others contradict): it slides
COULOMB_STICK_SLIP = 1e-6
#: coulomb mode: a sticking row is held rigid if its component off the rows already held is above this
#: fraction of its norm (else it is dependent on them: held through them, its velocity follows)
COULOMB_DEPENDENT = 1e-6
#: coulomb mode: the compliance of an actuator's or rigid joint's row in the split of the held forces, per N of
#: the total normal force (a wheel's rows: its cone radius μ f_z; large: the motors take what they must)
COULOMB_FREE_ROW = 100.0
#: coulomb mode: at most this many wheels (one bit each in DynamicsWorkspace.counts[C_SLIDING])
COULOMB_MAX_WHEELS = 62
ACTUATOR_IDEAL = JOINT_RIGID = RIGID  # no force law: a rigid row
#: status codes of :func:`dynamic_step` (0 = ok)
STATUS_TERRAIN, STATUS_NONFINITE, STATUS_MASS_MATRIX = 1, 2, 3


class DynamicsData(NamedTuple):
    """The dynamic model's settings as flat arrays (built by ``wmr_dynamics.compiled.engine``).

    Joint rows are the model's holonomic constraints followed by one unit row per joint spring
    (:func:`~wmr_dynamics.dynamics.force_balance.joint_rows`); row k's model (eq. 2.74) has code
    ``joint_kind[k]`` in ``JOINT_MODELS`` (``JOINT_RIGID``: a rigid row; ``JOINT_PYTHON``: a Python model whose
    callback slot is ``joint_P[k, 0]``) and parameters ``joint_P[k]``.  ``act_P``: the actuator model's
    ``kernel_data`` (4, na).  ``contact_slot``/``actuator_slot``: the callback slots
    (:mod:`~wmr_dynamics.compiled.callbacks`) of a Python contact model and a Python actuator model (0: none).
    """

    A_joint: NDArray  # (nc, ndof)
    b_joint: NDArray  # (nc,)
    joint_kind: NDArray  # (nc,) int64 codes in JOINT_MODELS, or JOINT_RIGID / JOINT_PYTHON
    joint_P: NDArray  # (nc, N_PARAMS) each row's model parameters
    contact_kind: int
    contact_P: NDArray  # (1 or nw, n_params)
    contact_aux: NDArray  # (k,)
    act_kind: int
    act_P: NDArray  # (4, na)
    max_iterations: int
    tolerance: float  # N: stop when ‖e‖ is below
    accept: float  # N: a step with ‖e‖ below this counts as converged
    qr_tolerance: float
    constant_mass: bool
    max_halvings: int
    n_samples: int  # collision: coarse samples of the wheel circle
    approximate_bias: bool  # eq. 2.89: the whole vehicle's bias force as one rigid body's
    contact_slot: int  # CONTACT_PYTHON: the model's callback slot
    actuator_slot: int  # ACTUATOR_PYTHON: the model's callback slot
    contact_moment: bool = False  # the contact model adds a moment about each wheel's axis (Ding's M_R)
    reuse_factor: int = 0  # REUSE_*: a first chord step on the previous step's factor of ∂e/∂x (_newton)


# DynamicsWorkspace.counts entries.  (One small array, not five (1,)-array fields: every non-inlined kernel
# call passes the workspace by value: four more array structs in it made a dynamic step 9–17 % slower.)
C_INPUTS = 0  # the force balance's unknowns x: null-space coordinates z of the rigid rows (n − rank of B)
C_RIGID_BASIS = 1  # orthonormal basis vectors B of the rigid rows
C_MASS_READY = 2  # 1: ws.M holds M (constant_mass: reuse it)
C_MODEL_ROWS = 3  # model-force rows (every non-rigid row, ws.mrows)
C_SLIDING = 4  # coulomb mode: bit w set: wheel w slides (clear: it sticks when in contact) — the active set
C_FK_READY = 5  # 1: ws.T_parent/T_world hold the FK of the q the next set-up is for (set by the rollout loops,
#                 which compute it for the controller; the set-up consumes it): Alg. 1 once per step, not twice
C_NULL_READY = 6  # 1: ws.Nt, nt_cols and C_INPUTS are the null space of the rigid rows kept in ws.rigid_rows
C_UNIT_N = 7  # 1: every row of N has one nonzero entry (ws.nt_cols counts 1): _reduced's products are single terms
C_FACTOR = 8  # ws.H, ws.piv (ws.J): 1: the LU factor of ∂e/∂x, 2: the Cholesky factor of JᵀJ, of the last Newton step
#               taken with the current null space, at the step length ws.vp[1, 0]; 0: none (_newton's first chord step)
C_REUSE_SKIP = 9  # REUSE_WHEN_PAID: steps left that start without the previous step's factor (_reuse_first)
C_REUSE_MISSES = 10  # REUSE_WHEN_PAID: loops in a row that the chord steps on the previous factor did not end
N_COUNTS = 11

#: DynamicsData.reuse_factor: never; at every step; at the steps where it has been paying (_reuse_first)
REUSE_NEVER, REUSE_ALWAYS, REUSE_WHEN_PAID = 0, 1, 2
#: REUSE_WHEN_PAID: after k Newton loops in a row that the chord steps on the previous step's factor did not end,
#: the next 2^k − 1 steps start without one (at most 2^REUSE_MAX_BACKOFF − 1)
REUSE_MAX_BACKOFF = 5


class DynamicsWorkspace(NamedTuple):
    """Preallocated arrays of one dynamic step (sizes: nf frames, n dof, nw wheels, na actuators, nc joint
    rows, nA = 3 nw + na + nc constraint rows; nz ≤ n unknowns)."""

    T_parent: NDArray
    T_world: NDArray
    X: NDArray
    Ic: NDArray
    M: NDArray
    bias: NDArray
    rnea_f: NDArray
    rnea_v: NDArray
    rnea_a: NDArray
    rnea_fr: NDArray
    zeros_n: NDArray
    points: NDArray
    frames: NDArray
    dz0: NDArray
    angle: NDArray
    lateral: NDArray
    jtmp: NDArray
    A: NDArray
    rigid: NDArray
    v_target: NDArray
    c_joint: NDArray
    joint_g: NDArray  # (nc,) d f_joint / d ċ of each row's model through c + ċ dt (eq. 2.83)
    basis: NDArray  # (n, n): rows 0..nb−1 the rigid rows' orthonormal basis B
    target: NDArray  # (n,): B q̇'[i+1] must equal these (the rigid rows' targets, carried through Gram–Schmidt)
    Nt: NDArray  # (n, n): rows 0..nz−1 an orthonormal basis N of B's null space
    qp: NDArray  # (n,): q̇'_p = Bᵀ target, the part of q̇'[i+1] the rigid rows fix
    piv: NDArray  # (n,) int64: the row swaps of the LU factor of ∂e/∂x in H (_newton_direction)
    nt_cols: NDArray  # (n, n + 1) int64: row k = [count, columns] of N's row k's nonzero entries
    G: NDArray  # (n, n): N M Nᵀ / Δt
    e0: NDArray  # (n,): N (M (q̇'_p − q̇')/Δt + c)
    AN: NDArray  # (nA, n): A Nᵀ, each row's velocity per unit z
    ANt: NDArray  # (n, nA): AN transposed — an evaluation's products run along its rows (_residual)
    vcf: NDArray  # (nA,): scratch, the wheel rows' velocities v_c as one vector (_residual)
    resid: NDArray  # (nA, n): scratch (coulomb mode)
    rigid_rows: NDArray  # (nA, 2n + 1): per row r of A, [A[r] as the basis and null space were made from it (NaN in
    # column 0: r was not rigid) | R[b, :b+1] = A[r]·B[:b+1] | b, the basis vector row r gave (−1: none)] (C_NULL_READY)
    qn: NDArray
    vc: NDArray
    Rw: NDArray
    dzn: NDArray
    fc: NDArray
    df_dv: NDArray
    df_dRw: NDArray
    df_ddz: NDArray
    f_model: NDArray
    df: NDArray
    act_theta_dot: NDArray
    act_u: NDArray
    act_f: NDArray
    act_df: NDArray  # (na, na) ∂f/∂θ̇ (the bundled models are diagonal)
    act_trial: NDArray  # kernel models: the state after this step (PI: integral); ACTUATOR_PYTHON: θ
    x: NDArray
    p: NDArray
    grad: NDArray
    H: NDArray
    e: NDArray
    J: NDArray
    x_t: NDArray
    e_t: NDArray
    vp: NDArray  # (2, max(n, nA)): row 0: the wheel rows' velocities A q̇'_p at x = 0 (_setup_rows), from which an
    # evaluation forms v_c; vp[1, 0]: the Δt (s) of the factor in H (C_FACTOR)
    counts: NDArray  # (N_COUNTS,) int64: this step's counts and flags (C_*)
    mrows: NDArray  # (nA,) int64: the model-force rows (every non-rigid row)
    # adaptive sub-stepping
    q_cur: NDArray
    qvel_cur: NDArray
    q_try: NDArray
    qvel_try: NDArray
    integral_try: NDArray
    # axle moments (contact_moment): row w = [moment, its partials (v_x, v_y, v_z, Rω, Δz), N j_w (nz of n),
    # ∂moment/∂x (nz of n)], j_w the generalized direction of a moment about wheel w's axis
    mw: NDArray
    cwork: NDArray  # the contact kernel's scratch (contact_models._base.WORK_ROWS, ≥ max(5, nw))
    tau_ext: NDArray  # (n,) external generalized force τ of eq. 2.82 (N, N·m; q̇' coordinates), 0 unless set


@njit
def dynamics_workspace(md: ModelData, fd: DynamicsData) -> DynamicsWorkspace:
    """A workspace for ``md`` and ``fd`` (one per rollout / thread; compiled so batches allocate in parallel)."""
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    na = md.actuated_frames.shape[0]
    nc = fd.A_joint.shape[0]
    nA = 3 * nw + na + nc
    nq = nf + 6
    na1, nc1 = max(na, 1), max(nc, 1)
    n_moment = 1
    if fd.contact_moment:
        n_moment = nw
    z = np.zeros
    b = np.bool_
    return DynamicsWorkspace(
        z((nf, 4, 4)), z((nf, 4, 4)), z((nf, 6, 6)), z((nf, 6, 6)), z((n, n)), z(n),  # T..bias
        z((nf, 6)), z((nf, 6)), z((nf, 6)), z((nf, 6)), z(n),  # rnea work, zeros_n
        z((nw, 3)), z((nw, 3, 3)), z(nw), np.full(nw, np.nan), z(nw),  # points, frames, dz0, angle (NaN: no
        # previous contact angle, the collision search's warm start off), lateral
        z((3, n)), z((nA, n)), np.zeros(nA, dtype=b), z(nA), z(nc1), z(nc1),  # jtmp, A, rigid, v_target,
        # c_joint, joint_g
        z((n, n)), z(n), z((n, n)), z(n), np.zeros(n, dtype=np.int64), np.zeros((n, n + 1), dtype=np.int64),
        z((n, n)), z(n), z((nA, n)), z((n, nA)), z(nA), z((nA, n)), z((nA, 2 * n + 1)),  # basis, target, Nt, qp,
        # piv, nt_cols, G, e0, AN, ANt, vcf, resid, rigid_rows
        z(n), z((nw, 3)), z(nw), z(nw),  # qn, vc, Rw, dzn
        z((nw, 3)), z((nw, 3, 3)), z((nw, 3)), z((nw, 3)),  # fc, df_dv, df_dRw, df_ddz
        z(nA), z((nA, n)),  # f_model, df
        z(na1), z(na1), z(na1), z((na1, na1)), z(na1),  # actuator work
        z(n), z(n), z(n), z((n, n)), z(n), z((n, n)), z(n), z(n), z((2, max(n, nA))),  # x, p, grad, H, e, J, x_t,
        # e_t, vp
        np.zeros(N_COUNTS, dtype=np.int64),  # counts
        np.zeros(nA, dtype=np.int64),  # mrows
        z(nq), z(n), z(nq), z(n), z(na1),  # sub-stepping
        z((n_moment, MOMENT_COLUMNS + 2 * n)),  # mw
        z((WORK_ROWS, max(5, nw))),  # cwork
        z(n))  # tau_ext


# ---- per-step set-up (steps 1–2 of the force_balance module docstring) -----------------------------------
# inlined into force_balance_step: called, it copied the model, terrain, dynamics and workspace tuples (with
# _residual inlined too: Zoë's step 7.2 → 6.6 µs, 2026-11-28)
@njit(inline="always")
def _setup(md: ModelData, td: TerrainData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray, qvel: NDArray,
           u: NDArray, dt: float) -> int:
    """FK, collision, M and c, A (eq. 2.55), the rigid rows' null space and the reduced force balance (the
    force_balance module docstring, step 2).  Returns a status code."""
    status = _setup_geometry(md, td, fd, ws, q, qvel, u, dt)
    if status != 0:
        return status
    _setup_rows(md, fd, ws, qvel, dt)
    return 0


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _setup_geometry(md: ModelData, td: TerrainData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray,
                    qvel: NDArray, u: NDArray, dt: float) -> int:
    """The set-up's parts that depend on the state only: FK, collision, M and c, A (eq. 2.55) with the actuator
    and joint rows' flags and targets.  Returns a status code."""
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    na = md.actuated_frames.shape[0]
    nc = fd.A_joint.shape[0]
    if ws.counts[C_FK_READY] == 1:  # the caller's FK of this q (the controller's): used once
        ws.counts[C_FK_READY] = 0
    else:
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)  # Alg. 1
    bad = wheel_contacts_kernel(md, td, ws.T_world, fd.n_samples, ws.points, ws.frames, ws.dz0, ws.angle,
                                ws.lateral, METHOD_EDGES)  # tracks: edge contacts (docs/tracks.md)
    if bad != 0:
        return STATUS_TERRAIN
    _plucker_all(ws.T_parent, ws.X)
    if not (fd.constant_mass and ws.counts[C_MASS_READY] == 1):
        _crba(md.parent, md.jtype, md.I_spatial, ws.X, ws.Ic, ws.M)  # Alg. 3
        ws.counts[C_MASS_READY] = 1
    if fd.approximate_bias:
        _fused_body_bias(md, ws, qvel)  # eq. 2.89
    else:
        _rnea(md.parent, md.jtype, md.I_spatial, ws.X, ws.T_world[0, :3, :3], qvel, ws.zeros_n, md.gravity,
              ws.rnea_f, ws.rnea_v, ws.rnea_a, ws.rnea_fr, ws.bias)  # Alg. 4: c
    if fd.act_kind == ACTUATOR_PYTHON:
        for k in range(na):
            ws.act_trial[k] = q[md.actuated_frames[k] + 6]  # θ for the Python model
    # A = [A_wheel; A_act; A_joint] (eq. 2.55), rigid rows and their velocities
    for w in range(nw):
        _wheel_jacobian(md.parent, md.jtype, ws.T_world, md.wheel_frame[w], ws.points[w], ws.frames[w],
                        ws.A[3 * w:3 * w + 3], ws.jtmp)  # Alg. 2
        if md.wheel_kind[w] != 0:  # a track element: the belt's column (Contact Surface Motion)
            _belt_column(md, ws.T_world, w, ws.points[w], ws.frames[w], ws.A[3 * w:3 * w + 3])
    if fd.contact_kind == CONTACT_COULOMB:
        _coulomb_surface_rows(md, ws, nw, n)
    for k in range(na):
        r = 3 * nw + k
        for j in range(n):
            ws.A[r, j] = 0.0
        ws.A[r, md.actuated_frames[k] + 5] = 1.0
        ws.rigid[r] = fd.act_kind == ACTUATOR_IDEAL
        ws.v_target[r] = u[k]
    for k in range(nc):
        r = 3 * nw + na + k
        s = -fd.b_joint[k]
        for j in range(n):
            ws.A[r, j] = fd.A_joint[k, j]
            if j >= 6:
                s += fd.A_joint[k, j] * q[j + 1]
        ws.c_joint[k] = s  # eq. 2.25 residual (springs: θ − rest)
        ws.rigid[r] = fd.joint_kind[k] == JOINT_RIGID
        ws.v_target[r] = -s / dt
    return 0


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _setup_rows(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, qvel: NDArray, dt: float) -> None:
    """The set-up's parts that depend on which rows are rigid (after :func:`_setup_geometry`): the rigid rows'
    basis and null space, the reduced force balance, and the warm start x = N q̇' (the current velocity's free
    components)."""
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    na = md.actuated_frames.shape[0]
    nA = 3 * nw + na + fd.A_joint.shape[0]
    for r in range(3 * nw):
        ws.rigid[r] = False
    # the rigid rows' orthonormal basis B with their velocity targets, then the null space N of B (rows of Nt) —
    # or, where the rigid rows are those B and N were made from, only their targets
    coulomb = fd.contact_kind == CONTACT_COULOMB
    if not coulomb and _same_rigid_rows(ws, 3 * nw, nA, n):
        nb = _rigid_targets(ws, 3 * nw, nA, n)
    else:
        nb = _rigid_basis(fd, ws, nA, n)
        ws.counts[C_FACTOR] = 0  # another null space: the last factor's coordinates are gone
        if coulomb:
            nb = _coulomb_hold_rows(ws, nw, n, nb)
        nz = null_space_rows(ws.basis, nb, n, ws.Nt, ws.qp)
        ws.counts[C_INPUTS] = nz
        ws.counts[C_UNIT_N] = _row_pattern(ws.Nt, nz, n, ws.nt_cols)
        ws.counts[C_NULL_READY] = 0 if coulomb else _keep_rigid_rows(ws, 3 * nw, nA, n)
    ws.counts[C_RIGID_BASIS] = nb
    nz = ws.counts[C_INPUTS]
    for i in range(n):  # q̇'_p = Bᵀ t: the velocity in the rigid rows' span that meets their targets
        ws.qp[i] = 0.0
    for b in range(nb):
        t = ws.target[b]
        for i in range(n):
            ws.qp[i] += t * ws.basis[b, i]
    _reduced(md, ws, nz, n, nA, qvel, dt)
    vp = ws.vp[0]
    for r in range(3 * nw):  # the wheel rows' velocities at x = 0, A q̇'_p (an evaluation adds (A Nᵀ) x) ...
        vp[r] = 0.0
    for j in range(n):  # ... over q̇'_p's nonzero entries (ideal actuators: their joints' rates), column by column
        t = ws.qp[j]
        if t != 0.0:
            for r in range(3 * nw):
                vp[r] += ws.A[r, j] * t
    if fd.contact_moment:
        _moment_directions(md, ws, n, nz)
    for k in range(nz):  # warm start: the current velocity's free components (§2.4.4; the C++'s q̈' = 0)
        s = 0.0
        for c in range(1, ws.nt_cols[k, 0] + 1):
            j = ws.nt_cols[k, c]
            s += ws.Nt[k, j] * qvel[j]
        ws.x[k] = s


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _same_rigid_rows(ws: DynamicsWorkspace, r0: int, nA: int, n: int) -> bool:
    """The rigid rows r0..nA−1 of A (actuator and joint rows; the wheel rows are never rigid outside the coulomb
    mode) are those the null space in ws.Nt was made from, bit for bit: the same rows are rigid and their
    entries are equal.  Then the Gram–Schmidt of :func:`_rigid_basis` would give the same basis B (still in
    ws.basis), and N — a function of B alone (:func:`~wmr_dynamics.compiled.linalg.null_space_rows`) — is still the
    one in ws.Nt; only the rows' velocity targets change (:func:`_rigid_targets`).  Outside the coulomb mode these
    rows are constant for a workspace's model and DynamicsData, so B and N are made once per rollout (issue 14
    item 3, "keep the independent-row selection")."""
    if ws.counts[C_NULL_READY] != 1:
        return False
    for r in range(r0, nA):
        kept = ws.rigid_rows[r, 0] == ws.rigid_rows[r, 0]  # (row 0 NaN: the row was not rigid)
        if ws.rigid[r] != kept:
            return False
        if kept:
            for j in range(n):
                if ws.A[r, j] != ws.rigid_rows[r, j]:
                    return False
    return True


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _keep_rigid_rows(ws: DynamicsWorkspace, r0: int, nA: int, n: int) -> int:
    """Keep the rigid rows r0..nA−1 that ws.basis and ws.Nt were just made from in ws.rigid_rows (a row not rigid:
    NaN in column 0) for :func:`_same_rigid_rows`, with R[b, b'] = A[r]·B[b'] (b' ≤ b) of the basis vector b that
    row r gave (:func:`_rigid_basis` noted b) for :func:`_rigid_targets`.  Returns 1 (the C_NULL_READY flag), or 0
    where a kept entry is not finite (NaN ≠ NaN would never match)."""
    for r in range(r0, nA):
        if ws.rigid[r]:
            for j in range(n):
                t = ws.A[r, j]
                if not math.isfinite(t):
                    return 0
                ws.rigid_rows[r, j] = t
            b = int(ws.rigid_rows[r, 2 * n])
            for b2 in range(b + 1):
                s = 0.0
                for j in range(n):
                    s += ws.A[r, j] * ws.basis[b2, j]
                ws.rigid_rows[r, n + b2] = s
        else:
            ws.rigid_rows[r, 0] = math.nan
    return 1


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _rigid_targets(ws: DynamicsWorkspace, r0: int, nA: int, n: int) -> int:
    """The targets of the basis B in ws.basis (:func:`_same_rigid_rows` holds) for this step's row targets
    ws.v_target: B's vector b, from row r, satisfies A[r] = Σ_{b' ≤ b} R[b, b'] B[b'] (Gram–Schmidt), so the
    velocity Bᵀt meets A[r] q̇ = v_r where t_b = (v_r − Σ_{b' < b} R[b, b'] t_b') / R[b, b] (forward substitution;
    a row dependent on those before it gave no vector and is held through them, as in :func:`_rigid_basis`).
    Unit rows (ideal actuators) give t_b = v_r exactly, as the Gram–Schmidt does.  Returns the basis size."""
    nb = 0
    for r in range(r0, nA):
        if ws.rigid[r]:
            b = int(ws.rigid_rows[r, 2 * n])
            if b >= 0:
                t = ws.v_target[r]
                for b2 in range(b):
                    t -= ws.rigid_rows[r, n + b2] * ws.target[b2]
                ws.target[b] = t / ws.rigid_rows[r, n + b]
                nb += 1
    return nb


@njit(inline="always")
def _row_pattern(Nt: NDArray, nz: int, n: int, cols: NDArray) -> int:
    """cols[k] = [count, columns of the nonzero entries of N's row k].  N's rows are mostly unit rows (the
    unit vectors the rigid rows leave free: Zoë's nine in the planner's batch), so the products with N below
    loop over these lists rather than test every entry (G = N M Nᵀ: 9² products in place of 2 · 9 · 13²).
    Returns 1 where every row has a single nonzero entry (the C_UNIT_N flag), else 0."""
    unit = 1
    for k in range(nz):
        c = 0
        for j in range(n):
            if Nt[k, j] != 0.0:
                c += 1
                cols[k, c] = j
        cols[k, 0] = c
        if c != 1:
            unit = 0
    return unit


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _rigid_basis(fd: DynamicsData, ws: DynamicsWorkspace, nA: int, n: int) -> int:
    """The rigid rows' orthonormal basis B into ws.basis with their velocity targets in ws.target (a row dependent on
    those before it to ``fd.qr_tolerance`` is held through them); returns its size."""
    nb = 0
    for r in range(nA):
        if ws.rigid[r]:
            for j in range(n):
                ws.basis[nb, j] = ws.A[r, j]
            ws.target[nb] = ws.v_target[r]
            if orthonormalize_last(ws.basis, ws.target, nb, n, fd.qr_tolerance):
                ws.rigid_rows[r, 2 * n] = nb  # (for _keep_rigid_rows: the vector row r gave)
                nb += 1
            else:
                ws.rigid_rows[r, 2 * n] = -1.0
    return nb


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _reduced(md: ModelData, ws: DynamicsWorkspace, nz: int, n: int, nA: int, qvel: NDArray, dt: float) -> None:
    """The force balance in the null-space coordinates z (q̇'[i+1] = q̇'_p + Nᵀz, so every rigid row holds):
    G = N M Nᵀ/Δt, e0 = N (M (q̇'_p − q̇')/Δt + c − τ) — so that N (M q̈' + c − τ) = e0 + G z (eq. 2.82; τ the
    external generalized force ws.tau_ext) — and AN = A Nᵀ,
    each row's velocity per unit z (∂v/∂z); the model rows' list ``mrows``.  The products with N run over its rows'
    nonzero entries (ws.nt_cols: mostly one, N's rows being mostly unit rows)."""
    for i in range(n):  # r = M (q̇'_p − q̇')/Δt + c − τ into e_t (scratch; τ: external forces, eq. 2.82)
        s = 0.0
        for j in range(n):
            s += ws.M[i, j] * (ws.qp[j] - qvel[j])
        ws.e_t[i] = s / dt + ws.bias[i] - ws.tau_ext[i]
    cols = ws.nt_cols
    if ws.counts[C_UNIT_N] == 1:
        _reduced_unit(ws, nz, nA, dt)
        return
    for a in range(nz):  # e0 = N r
        s = 0.0
        for c in range(1, cols[a, 0] + 1):
            j = cols[a, c]
            s += ws.Nt[a, j] * ws.e_t[j]
        ws.e0[a] = s
    for a in range(nz):  # G = N M Nᵀ / Δt over N's nonzero entries (symmetric)
        for b in range(a + 1):
            s = 0.0
            for c in range(1, cols[a, 0] + 1):
                j = cols[a, c]
                t = 0.0
                for d in range(1, cols[b, 0] + 1):
                    i = cols[b, d]
                    t += ws.M[j, i] * ws.Nt[b, i]
                s += ws.Nt[a, j] * t
            g = s / dt
            ws.G[a, b] = g
            ws.G[b, a] = g
    nm = 0
    for r in range(nA):
        for k in range(nz):
            s = 0.0
            for c in range(1, cols[k, 0] + 1):
                j = cols[k, c]
                s += ws.A[r, j] * ws.Nt[k, j]
            ws.AN[r, k] = s
            ws.ANt[k, r] = s
        if not ws.rigid[r]:
            ws.mrows[nm] = r
            nm += 1
    ws.counts[C_MODEL_ROWS] = nm


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _reduced_unit(ws: DynamicsWorkspace, nz: int, nA: int, dt: float) -> None:
    """:func:`_reduced`'s e0, G, AN and model rows where every row k of N is a unit row (±1 in column j_k, or
    one entry), each product a single term: e0_a = N_a r_ja, G_ab = N_a M_ja,jb N_b / Δt, AN_rk = A_r,jk N_k —
    the same operations in the same order as the general loops (to the last bit), without their inner loops
    (at the planner's batch states: 0.47 → 0.25 µs per set-up)."""
    cols = ws.nt_cols
    for a in range(nz):
        ja = cols[a, 1]
        ws.e0[a] = 0.0 + ws.Nt[a, ja] * ws.e_t[ja]
    for a in range(nz):
        ja = cols[a, 1]
        na_ = ws.Nt[a, ja]
        for b in range(a + 1):
            jb = cols[b, 1]
            g = (0.0 + na_ * (0.0 + ws.M[ja, jb] * ws.Nt[b, jb])) / dt
            ws.G[a, b] = g
            ws.G[b, a] = g
    nm = 0
    for r in range(nA):
        for k in range(nz):
            jk = cols[k, 1]
            s = 0.0 + ws.A[r, jk] * ws.Nt[k, jk]
            ws.AN[r, k] = s
            ws.ANt[k, r] = s
        if not ws.rigid[r]:
            ws.mrows[nm] = r
            nm += 1
    ws.counts[C_MODEL_ROWS] = nm


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _moment_directions(md: ModelData, ws: DynamicsWorkspace, n: int, nz: int) -> None:
    """N j_w for each wheel: j_w = ∂(ω_w · ŷ_w)/∂q̇', the generalized direction of a moment about wheel w's axis
    (its transpose maps the moment to generalized forces, as Aᵀ maps contact forces): ŷ_w in body coordinates
    for the body's angular velocity, a revolute joint's axis · ŷ_w for each joint of the chain (1 for the
    wheel's own joint), 0 for prismatic joints and the body's translation; then in the null-space coordinates.
    (ws.e_t: scratch for j_w.)"""
    T = ws.T_world
    jw = ws.e_t
    for w in range(md.wheel_frame.shape[0]):
        row = MOMENT_COLUMNS
        for k in range(nz):
            ws.mw[w, row + k] = 0.0
        f = md.wheel_frame[w]
        if md.wheel_kind[w] != 0:  # a track element's belt has no axle moment
            continue
        for j in range(n):
            jw[j] = 0.0
        yx, yy, yz = T[f, 0, 1], T[f, 1, 1], T[f, 2, 1]
        for c in range(3):
            jw[c] = T[0, 0, c] * yx + T[0, 1, c] * yy + T[0, 2, c] * yz
        i = f
        while i > 0:
            if md.jtype[i] < 3:
                a = md.jtype[i]
                jw[i + 5] = T[i, 0, a] * yx + T[i, 1, a] * yy + T[i, 2, a] * yz
            i = md.parent[i]
        for k in range(nz):
            s = 0.0
            for c in range(1, ws.nt_cols[k, 0] + 1):
                j = ws.nt_cols[k, c]
                s += ws.Nt[k, j] * jw[j]
            ws.mw[w, row + k] = s


@njit(_nrt=False)
def _fused_body_bias(md: ModelData, ws: DynamicsWorkspace, qvel: NDArray) -> None:
    """Eq. 2.89: c = [−f_b; 0] with f_b of eq. 2.44 — the vehicle as one rigid body of composite inertia I_b
    (CRBA's Ic[0] = M[:6, :6], body axes about the body origin) moving with the body's velocity v_b."""
    _body_force(ws.M, ws.T_world[0], qvel, md.gravity, ws.bias)
    for i in range(6):
        ws.bias[i] = -ws.bias[i]
    for i in range(6, ws.bias.shape[0]):
        ws.bias[i] = 0.0


# ---- one evaluation of the force-balance error (eqs. 2.76–2.83) -------------------------------------------
@njit(_nrt=False)
def _evaluate(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, x: NDArray, qvel: NDArray, integral: NDArray,
              dt: float, need_jac: bool, e: NDArray, J: NDArray) -> None:
    """e(x) (and ∂e/∂x if ``need_jac``) into e, J; leaves q̇'[i+1], v_c and the contact forces in ws."""
    _residual(md, fd, ws, x, qvel, integral, dt, need_jac, e)
    if need_jac:
        _force_balance_jacobian(ws, ws.counts[C_INPUTS], ws.counts[C_MODEL_ROWS], md.parent.shape[0] + 5, J,
                                fd.contact_moment)


@njit(inline="always")  # passes the workspace: inlined, not copied per evaluation
def _residual(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, x: NDArray, qvel: NDArray, integral: NDArray,
              dt: float, need_df: bool, e: NDArray) -> None:
    """e(x) into e, and ∂f_model/∂x into ws.df if ``need_df`` (from which :func:`_force_balance_jacobian` forms
    ∂e/∂x when it is needed); leaves q̇'[i+1], v_c and the contact forces in ws."""
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    na = md.actuated_frames.shape[0]
    nx = ws.counts[C_INPUTS]
    for i in range(n):  # q̇'[i+1] = q̇'_p + Nᵀ x: every rigid row holds (eq. 2.82 in the null-space coordinates)
        ws.qn[i] = ws.qp[i]
    for k in range(nx):
        t = x[k]
        for c in range(1, ws.nt_cols[k, 0] + 1):
            i = ws.nt_cols[k, c]
            ws.qn[i] += t * ws.Nt[k, i]
    # contact-point velocities v_c = A q̇'[i+1] = A q̇'_p + (A Nᵀ) x as one vector, x's terms added column by column
    # of A Nᵀ (rows of ANt: contiguous, so the loop over the rows vectorizes; each row still sums in the order k —
    # the numbers of the row-by-row dot products, to the last bit: Talon 54 → 14 ns)
    vp, vf = ws.vp[0], ws.vcf
    for r in range(3 * nw):
        vf[r] = vp[r]
    for k in range(nx):
        t = x[k]
        for r in range(3 * nw):
            vf[r] += ws.ANt[k, r] * t
    for w in range(nw):  # ... into v_c; Rω, Δz at the step's end
        for r in range(3):
            ws.vc[w, r] = vf[3 * w + r]
        ws.Rw[w] = md.wheel_radius[w] * ws.qn[md.wheel_frame[w] + 5]
        ws.dzn[w] = ws.dz0[w] + ws.vc[w, 2] * dt
    _contact(fd.contact_kind, fd.contact_P, fd.contact_aux, fd.contact_slot, ws.vc, ws.Rw, ws.dzn, ws.fc, ws.df_dv,
             ws.df_dRw, ws.df_ddz, ws.mw, ws.cwork)  # eq. 2.71
    if fd.act_kind != ACTUATOR_IDEAL:  # eq. 2.73
        _actuators(md, fd, ws, integral, dt)
    nm = ws.counts[C_MODEL_ROWS]
    for m in range(nm):  # model forces of the non-rigid rows
        r = ws.mrows[m]
        if r < 3 * nw:
            ws.f_model[m] = ws.fc[r // 3, r % 3]
        elif r < 3 * nw + na:
            ws.f_model[m] = ws.act_f[r - 3 * nw]
        else:  # eq. 2.74, implicit in q̇'[i+1] (eq. 2.83: the residual at the step's end)
            k = r - 3 * nw - na
            s = 0.0
            for j in range(n):
                s += fd.A_joint[k, j] * ws.qn[j]
            f, df_dc, df_dcdot = _joint_force(fd, k, ws.c_joint[k] + dt * s, s)
            ws.f_model[m] = f
            ws.joint_g[k] = df_dc * dt + df_dcdot
    # eq. 2.78 in the null-space coordinates: e = N (M q̈' + c − Aᵀ f_model) = e0 + G x − (A Nᵀ)ᵀ f_model (the rigid
    # rows' forces lie in the span of B, which N removes), each e[i] summing its terms in the order k, then m (along
    # row i of ANt; Talon 96 → 67 ns for the two sums)
    for i in range(nx):
        s = ws.e0[i]
        for k in range(nx):
            s += ws.G[i, k] * x[k]
        for m in range(nm):
            s -= ws.ANt[i, ws.mrows[m]] * ws.f_model[m]
        e[i] = s
    if fd.contact_moment:  # axle moments as generalized forces j_wᵀ M_w, in the same coordinates
        for w in range(nw):
            t = ws.mw[w, 0]
            if t != 0.0:
                for i in range(nx):
                    e[i] -= ws.mw[w, MOMENT_COLUMNS + i] * t
    if need_df:
        _form_df(md, fd, ws, dt)


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _force_balance_jacobian(ws: DynamicsWorkspace, nx: int, nm: int, n: int, J: NDArray, moment: bool) -> None:
    """∂e/∂x = G − (A Nᵀ)ᵀ ∂f_model/∂x (eq. 2.78 in the null-space coordinates) from ws.df of the last evaluation
    (and − Σ N j_w ∂M_w/∂x with axle moments).  J is square: nx × nx.

    A wheel's three model rows (consecutive in ``mrows``) update row i of J in one pass over its entries, each
    entry still J_ik − t0 df_0k − t1 df_1k − t2 df_2k in that order (the row-by-row loop's numbers, to the last
    bit; three passes over J's row per wheel took 0.27 µs per Jacobian at the planner's batch states)."""
    for i in range(nx):
        for k in range(nx):
            J[i, k] = ws.G[i, k]
        m = 0
        while m < nm:
            r = ws.mrows[m]
            t = ws.AN[r, i]
            if m + 2 < nm and ws.mrows[m + 2] == r + 2:  # (mrows ascend: m + 1 is row r + 1)
                t1, t2 = ws.AN[r + 1, i], ws.AN[r + 2, i]
                if t != 0.0 and t1 != 0.0 and t2 != 0.0:
                    for k in range(nx):
                        J[i, k] = J[i, k] - t * ws.df[m, k] - t1 * ws.df[m + 1, k] - t2 * ws.df[m + 2, k]
                    m += 3
                    continue
            if t != 0.0:
                for k in range(nx):
                    J[i, k] -= t * ws.df[m, k]
            m += 1
    if moment:
        col = MOMENT_COLUMNS + n
        for w in range(ws.mw.shape[0]):
            for i in range(nx):
                t = ws.mw[w, MOMENT_COLUMNS + i]
                if t != 0.0:
                    for k in range(nx):
                        J[i, k] -= t * ws.mw[w, col + k]


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _model_force_jacobian(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, nx: int, nw: int, na: int,
                          nm: int, dt: float) -> None:
    """∂f_model/∂x of the model rows by the chain rule through q̇'[i+1] (contact: v_c, Rω, Δz; actuators;
    joint springs)."""
    for m in range(nm):
        r = ws.mrows[m]
        if r < 3 * nw:
            w, i = r // 3, r % 3
            col = md.wheel_frame[w] + 5
            a0, a1, a2 = ws.df_dv[w, i, 0], ws.df_dv[w, i, 1], ws.df_dv[w, i, 2] + ws.df_ddz[w, i] * dt
            b = ws.df_dRw[w, i] * md.wheel_radius[w]
            for k in range(nx):  # ∂v_c/∂x = A Nᵀ, ∂q̇'[col]/∂x = N[:, col]
                ws.df[m, k] = (a0 * ws.AN[3 * w, k] + a1 * ws.AN[3 * w + 1, k] + a2 * ws.AN[3 * w + 2, k]
                               + b * ws.Nt[k, col])
        elif r < 3 * nw + na:  # eq. 2.73: ∂f_a/∂θ̇ (na, na) through ∂θ̇/∂x
            a = r - 3 * nw
            for k in range(nx):
                s = 0.0
                for b2 in range(na):
                    s += ws.act_df[a, b2] * ws.Nt[k, md.actuated_frames[b2] + 5]
                ws.df[m, k] = s
        else:
            c = r - 3 * nw - na
            g = ws.joint_g[c]
            for k in range(nx):
                ws.df[m, k] = g * ws.AN[r, k]
    if fd.contact_moment:  # ∂M_w/∂x by the same chain rule
        col = MOMENT_COLUMNS + md.parent.shape[0] + 5
        for w in range(nw):
            a0, a1, a2 = ws.mw[w, 1], ws.mw[w, 2], ws.mw[w, 3] + ws.mw[w, 5] * dt
            b = ws.mw[w, 4] * md.wheel_radius[w]
            j = md.wheel_frame[w] + 5
            for k in range(nx):
                ws.mw[w, col + k] = (a0 * ws.AN[3 * w, k] + a1 * ws.AN[3 * w + 1, k] + a2 * ws.AN[3 * w + 2, k]
                                     + b * ws.Nt[k, j])


@njit(inline="always")  # inlined into _residual, its one caller: a call passing 13 arrays cost 0.12 µs
def _contact(kind: int, P: NDArray, aux: NDArray, slot: int, vc: NDArray, Rw: NDArray, dzn: NDArray, fc: NDArray,
             df_dv: NDArray, df_dRw: NDArray, df_ddz: NDArray, mw: NDArray, work: NDArray) -> None:
    """Eq. 2.71 by the contact model's kernel (CONTACT_MODELS) or its Python callback, and the axle moments of a
    model that has them into ``mw``.  (Passed its arrays, not the workspace: a call copies and reference-counts
    every array it is passed.)"""
    if kind == CONTACT_PYTHON:
        _python_contact(slot, vc, Rw, dzn, fc, df_dv, df_dRw, df_ddz)
        return
    for w in range(mw.shape[0]):
        for c in range(MOMENT_COLUMNS):
            mw[w, c] = 0.0
    for entry in literal_unroll(_CONTACT_KERNELS):
        if kind == entry[0]:
            entry[1](vc, Rw, dzn, P, aux, fc, df_dv, df_dRw, df_ddz, mw, work)


@njit
def _python_contact(slot: int, vc: NDArray, Rw: NDArray, dzn: NDArray, fc: NDArray, df_dv: NDArray, df_dRw: NDArray,
                    df_ddz: NDArray) -> None:
    """A Python contact model (CONTACT_PYTHON), called back from an object-mode block."""
    with numba.objmode():
        _cb.contact_forces(slot, vc, Rw, dzn, fc, df_dv, df_dRw, df_ddz)


@njit(_nrt=False)
def _actuators(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, integral: NDArray, dt: float) -> None:
    na = md.actuated_frames.shape[0]
    for k in range(na):
        ws.act_theta_dot[k] = ws.qn[md.actuated_frames[k] + 5]
    if fd.act_kind == ACTUATOR_PYTHON:
        _python_actuator(fd, ws, na, dt)
        return
    for entry in literal_unroll(_ACTUATOR_KERNELS):  # eq. 2.73 by the model's kernel (ACTUATOR_MODELS)
        if fd.act_kind == entry[0]:
            entry[1](ws.act_theta_dot[:na], ws.act_u[:na], dt, integral, fd.act_P, ws.act_f, ws.act_df, ws.act_trial)


@njit(_nrt=False)
def _joint_force(fd: DynamicsData, k: int, c: float, c_dot: float) -> tuple[float, float, float]:
    """(f, ∂f/∂c, ∂f/∂ċ) of joint row k's model (eq. 2.74; JOINT_MODELS, or its Python callback)."""
    kind = fd.joint_kind[k]
    if kind == JOINT_PYTHON:
        return _python_joint(fd, k, c, c_dot)
    f, df_dc, df_dcdot = 0.0, 0.0, 0.0
    for entry in literal_unroll(_JOINT_KERNELS):
        if kind == entry[0]:
            f, df_dc, df_dcdot = entry[1](c, c_dot, fd.joint_P[k])
    return f, df_dc, df_dcdot


@njit
def _python_joint(fd: DynamicsData, k: int, c: float, c_dot: float) -> tuple[float, float, float]:
    """A Python joint model (JOINT_PYTHON), called back from an object-mode block."""
    slot = int(fd.joint_P[k, 0])
    with numba.objmode(f="float64", df_dc="float64", df_dcdot="float64"):
        f, df_dc, df_dcdot = _cb.joint_force(slot, c, c_dot)
    return f, df_dc, df_dcdot


@njit
def _python_actuator(fd: DynamicsData, ws: DynamicsWorkspace, na: int, dt: float) -> None:
    """A Python actuator model (ACTUATOR_PYTHON), called back from an object-mode block."""
    with numba.objmode():
        _cb.actuator_forces(fd.actuator_slot, ws.act_trial[:na], ws.act_theta_dot[:na], ws.act_u[:na], dt,
                            ws.act_f, ws.act_df)


# ---- Newton iteration with a backtracking line search (eq. 2.84; App. D's sufficient decrease) ------------
@njit(inline="always")
def _dot(a: NDArray, b: NDArray, n: int) -> float:
    s = 0.0
    for i in range(n):
        s += a[i] * b[i]
    return s


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _form_df(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, dt: float) -> None:
    """∂f_model/∂x into ws.df at the point of the last :func:`_residual` call (whose contact, actuator and joint
    partials are still in ws): what ``need_df`` would have added, formed only once it is needed."""
    _model_force_jacobian(md, fd, ws, ws.counts[C_INPUTS], md.wheel_frame.shape[0], md.actuated_frames.shape[0],
                          ws.counts[C_MODEL_ROWS], dt)


@njit(inline="always")
def _trial(md, fd, ws, qvel, integral, dt, alpha, nx) -> float:  # noqa: ANN001
    """φ(α) = ‖e(x + α p)‖²: the trial point in x_t, e_t (its ∂f_model/∂x, if a Newton step follows from it:
    :func:`_form_df`)."""
    for k in range(nx):
        ws.x_t[k] = ws.x[k] + alpha * ws.p[k]
    _residual(md, fd, ws, ws.x_t, qvel, integral, dt, False, ws.e_t)
    return _dot(ws.e_t, ws.e_t, nx)


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _line_search(md, fd, ws, qvel, integral, dt, phi0, dphi0, nx) -> float:  # noqa: ANN001
    """Step length α in (0, 1] along the Newton direction p meeting the sufficient decrease (eq. D.2),
    φ(α) = ‖e(x + α p)‖² <= φ(0) + C1 α φ'(0), by backtracking from the full step: α = 1, 1/2, 1/4, …
    (Nocedal & Wright Alg. 3.1).  x_t/e_t hold the accepted point, the last one evaluated.

    The thesis (App. D) asks for the strong Wolfe conditions, found by Nocedal & Wright's Alg. 3.2–3.3
    (bisection zoom).  Their curvature condition (eq. D.4) keeps a step from being too short, which matters
    for quasi-Newton updates; backtracking from α = 1 along a Newton direction cannot return a step that is
    too short (N&W §3.1), and checking it needed ∂f_model/∂x and a slope φ'(α) at each trial point: in the
    planner's batch, whose friction caps the Newton steps cross 0.6 times per step, a damped search cost 4.5
    evaluations with their derivatives, and backtracking about 2 without (docs/benchmarks.md, "Backtracking
    line search").

    Returns α, or 0 where no α down to 2^−BACKTRACK_STEPS meets the sufficient decrease: p is no descent
    direction of ‖e‖² there (the Gauss–Newton model is that of one side of a kink of f_model, e.g. a friction
    cap), and creeping along it cost the planner's batch 40 % of its evaluations (docs/benchmarks.md,
    "Line-search failures")."""
    a = 1.0
    for _ in range(BACKTRACK_STEPS + 1):
        if _trial(md, fd, ws, qvel, integral, dt, a, nx) <= phi0 + C1 * a * dphi0:
            return a
        a *= 0.5
    return 0.0


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _newton_direction(ws, nx, phi0) -> tuple:  # noqa: ANN001
    """The Gauss–Newton direction of eq. 2.84 at the last evaluated point into ws.p, from ∂e/∂x in ws.J: J is
    square, so p = −(JᵀJ)⁻¹Jᵀe is p = −J⁻¹e, solved by LU with partial pivoting (nx³/3 multiply–adds; forming
    JᵀJ and its Cholesky factor took nx³/2 + nx³/6, and squared J's condition number).  Where J is numerically
    singular (a pivot ≤ LU_SINGULAR × its largest entry) the normal equations with a tiny ridge instead, as
    before 2026-11-28 (stop 30).  Returns (found, LU (else Cholesky of JᵀJ) in ws.H, φ'(0) = 2 eᵀJp with
    φ0 = ‖e‖²)."""
    for a in range(nx):
        ws.p[a] = -ws.e[a]
    if lu_factor(ws.J, nx, ws.H, ws.piv, LU_SINGULAR):
        lu_solve(ws.H, ws.piv, nx, ws.p)
        return True, True, -2.0 * phi0  # J p = −e
    # H = JᵀJ + ridge (Gauss–Newton Hessian of eq. 2.84, halved), g = Jᵀe, accumulated along J's rows
    for a in range(nx):
        ws.grad[a] = 0.0
        for b in range(a + 1):
            ws.H[a, b] = 0.0
    for i in range(nx):
        ei = ws.e[i]
        for a in range(nx):
            t = ws.J[i, a]
            ws.grad[a] += t * ei
            for b in range(a + 1):
                ws.H[a, b] += t * ws.J[i, b]
    tr = 0.0
    for a in range(nx):
        tr += ws.H[a, a]
    reg = 1e-12 * tr / max(nx, 1) + 1e-300
    for a in range(nx):
        ws.H[a, a] += reg
        ws.p[a] = -ws.grad[a]
    if not cholesky(ws.H, nx, ws.H):
        return False, False, 0.0
    cho_solve(ws.H, nx, ws.p)
    return True, False, 2.0 * _dot(ws.grad, ws.p, nx)


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _chord_step(md, fd, ws, qvel, integral, dt, norm, nx, lu, decrease) -> float:  # noqa: ANN001
    """A chord step: the last Newton step's factor in ws.H (``lu``: of ∂e/∂x, else of its JᵀJ, with J in ws.J)
    applied to the current e, p = −J⁻¹e (or −(JᵀJ)⁻¹Jᵀe), taken if it cuts ‖e‖² to ``decrease`` × or below
    (x, e updated).
    Returns the new ‖e‖, or −1 if the step was not taken (x unchanged; the last evaluation was the rejected
    trial point)."""
    if lu:
        for a in range(nx):
            ws.p[a] = -ws.e[a]
        lu_solve(ws.H, ws.piv, nx, ws.p)
    else:
        for a in range(nx):
            s = 0.0
            for i in range(nx):
                s += ws.J[i, a] * ws.e[i]
            ws.p[a] = -s
        cho_solve(ws.H, nx, ws.p)
    phi = _trial(md, fd, ws, qvel, integral, dt, 1.0, nx)
    if not phi <= decrease * norm * norm:
        return -1.0
    for k in range(nx):
        ws.x[k] = ws.x_t[k]
        ws.e[k] = ws.e_t[k]
    return math.sqrt(phi)


@njit(inline="always")  # passes the workspace: inlined, not copied per call
def _newton(md, fd, ws, qvel, integral, dt, n) -> tuple:  # noqa: ANN001
    """Gauss–Newton on ‖e‖² from the warm start ws.x; returns (iterations, ‖e‖).  ws.qn/vc/fc hold the
    final point's velocities and forces.  ∂f_model/∂x and ∂e/∂x are formed only where a Newton step is taken
    from the point: not at the point that ends the loop.

    Where the last full Newton step converged quadratically (‖e_k‖ ≈ C ‖e_k−1‖²) so far that the next step is
    predicted to end the loop, that step is a *chord* step with the last step's factor (:func:`_chord_step`):
    its error ≈ (‖e_k‖/‖e_k−1‖) ‖e_k‖ (the chord method's rate is the contraction the Newton step showed).
    It saves forming ∂f_model/∂x, ∂e/∂x and its factor once; a chord step that does not halve
    ‖e‖ is dropped for a Newton step.  Both count as iterations.

    With ``fd.reuse_factor`` (:func:`_reuse_first`) the loop starts with a chord step on the *previous step's*
    factor where it is one of ∂e/∂x in the same null-space coordinates at the same Δt (C_FACTOR): the
    iteration-matrix reuse of implicit ODE solvers (Hairer & Wanner, Radau5's Jacobian reuse).  It is kept if it
    lowers ‖e‖ at all; then a Newton step from the lower point — or, with REUSE_WHEN_PAID (the piecewise-linear
    models), a second chord step where the first one's contraction predicts that it ends the loop (as above).
    For the smooth contact models it replaces about 0.8 of their 2–3 Newton steps per step (docs/benchmarks.md,
    "The previous step's factor")."""
    nx = ws.counts[C_INPUTS]
    _residual(md, fd, ws, ws.x, qvel, integral, dt, False, ws.e)
    df_ready = False  # ws.df holds ∂f_model/∂x at ws.x (else: the last evaluation was at ws.x, _form_df forms it)
    it = 0
    norm = math.sqrt(_dot(ws.e, ws.e, nx))
    prev = math.inf  # ‖e‖ before the last accepted step
    chord = False  # ws.J, ws.H: the factor of the last full Newton step, which converged quadratically
    lu = True  # ws.H holds an LU factor of ∂e/∂x (else the Cholesky factor of JᵀJ)
    # the previous step's factor (same null space and Δt): a first chord step, kept if ‖e‖ falls at all
    first = (ws.counts[C_FACTOR] != 0 and ws.vp[1, 0] == dt and fd.max_iterations > 1 and norm > fd.tolerance
             and _reuse_first(fd, ws))
    tried = first  # (REUSE_WHEN_PAID: did the chord steps on the previous step's factor end the loop?)
    newton = False  # a Newton step was taken (∂e/∂x formed and factored)
    if first:
        chord, lu = True, ws.counts[C_FACTOR] == 1
    while it < fd.max_iterations and norm > fd.tolerance:
        it += 1
        if chord and (first or norm * norm <= CHORD_MARGIN * fd.tolerance * prev):
            new = _chord_step(md, fd, ws, qvel, integral, dt, norm, nx, lu, 1.0 if first else STRONG_DECREASE)
            if new >= 0.0:
                prev, norm = norm, new
                df_ready = False
                # the smooth models: the next chord step only on a Newton step's quadratic rate (a second one here
                # changed the stalls of Ding's wheels, whose unconverged steps follow the loop's path)
                if first and fd.reuse_factor != REUSE_WHEN_PAID:
                    chord = False
                first = False
                continue
            first = False
            _residual(md, fd, ws, ws.x, qvel, integral, dt, True, ws.e)  # back at x, with ∂f_model/∂x: Newton
            df_ready = True
            chord = False
        newton = True
        if not df_ready:
            _form_df(md, fd, ws, dt)
        _force_balance_jacobian(ws, nx, ws.counts[C_MODEL_ROWS], n, ws.J, fd.contact_moment)
        found, lu, dphi0 = _newton_direction(ws, nx, norm * norm)
        ws.counts[C_FACTOR] = 0 if not found else 1 if lu else 2
        ws.vp[1, 0] = dt
        if not found:
            break
        alpha = _line_search(md, fd, ws, qvel, integral, dt, norm * norm, dphi0, nx)
        if alpha == 0.0:  # the line search failed: stop, unconverged (dynamic_step retakes the step as half steps)
            _residual(md, fd, ws, ws.x, qvel, integral, dt, False, ws.e)  # ws.qn, vc, fc of the final x
            break
        for k in range(nx):  # the accepted point, the line search's last evaluation (its ∂f_model/∂x: _form_df)
            ws.x[k] = ws.x_t[k]
            ws.e[k] = ws.e_t[k]
        df_ready = False
        prev, norm = norm, math.sqrt(_dot(ws.e, ws.e, nx))
        chord = alpha == 1.0
    if tried and fd.reuse_factor == REUSE_WHEN_PAID:
        _reuse_paid(ws, not newton and norm <= fd.tolerance)
    # the last evaluation was at the final x (initial point, accepted trial, or re-evaluation): ws.qn, vc, fc
    return it, norm


@njit(inline="always")
def _reuse_first(fd: DynamicsData, ws: DynamicsWorkspace) -> bool:
    """Whether this step's Newton loop starts with a chord step on the previous step's factor (which exists): always
    (REUSE_ALWAYS), never (REUSE_NEVER), or (REUSE_WHEN_PAID) unless the back-off of :func:`_reuse_paid` skips
    this step."""
    if fd.reuse_factor != REUSE_WHEN_PAID:
        return fd.reuse_factor == REUSE_ALWAYS
    if ws.counts[C_REUSE_SKIP] > 0:
        ws.counts[C_REUSE_SKIP] -= 1
        return False
    return True


@njit(inline="always")
def _reuse_paid(ws: DynamicsWorkspace, paid: bool) -> None:
    """REUSE_WHEN_PAID's record of a loop that started with a chord step on the previous step's factor: ``paid`` —
    chord steps ended it without a Newton step, saving ∂f_model/∂x, ∂e/∂x, its factor and an evaluation — keeps
    it on; else the next 2^k − 1 steps start with a Newton step, k the misses in a row (exponential back-off, as
    a step-size controller's rejections): a piecewise-linear model's one Newton step is exact, so a chord step
    that does not end the loop only adds an evaluation.  Measured along a run: Zoë at Δt 0.04 tries it at a third
    of its steps and half of those pay; the Talon at Δt 0.01, whose 30 contact rows make ∂e/∂x and its factor a
    third of the loop, takes it at most steps."""
    if paid:
        ws.counts[C_REUSE_MISSES] = 0
        return
    k = min(ws.counts[C_REUSE_MISSES] + 1, REUSE_MAX_BACKOFF)
    ws.counts[C_REUSE_MISSES] = k
    ws.counts[C_REUSE_SKIP] = (1 << k) - 1


@njit(inline="always")  # inlined into _dynamic_step (the rollout loop) and force_balance_step
def _force_balance(md: ModelData, td: TerrainData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray,
                   qvel: NDArray, u: NDArray, integral: NDArray, dt: float, q_next: NDArray,
                   qvel_next: NDArray) -> tuple:
    """One force-balance step of ``dt`` without sub-stepping: :func:`force_balance_step`'s body.

    Returns (status, iterations, ‖e‖ (N), converged).  The PI integral is advanced in ``integral`` if the
    step converged.  Forces, v_c and Δz of the step stay in ``ws`` (fc, vc, dz0, points).
    """
    nf = md.parent.shape[0]
    n = nf + 5
    na = md.actuated_frames.shape[0]
    for k in range(na):
        ws.act_u[k] = u[k]
    status = _setup(md, td, fd, ws, q, qvel, u, dt)
    if status != 0:
        return status, 0, np.inf, False
    it, norm = _newton(md, fd, ws, qvel, integral, dt, n)
    if fd.contact_kind == CONTACT_COULOMB:
        it, norm = _coulomb_active_set(md, fd, ws, qvel, integral, dt, it, norm)
    for i in range(n):
        if not math.isfinite(ws.qn[i]):
            return STATUS_NONFINITE, it, norm, False
        qvel_next[i] = ws.qn[i]
    converged = norm <= fd.accept
    if converged and fd.act_kind >= 0:
        _commit_actuator_state(md, fd, ws, integral, dt)
    _euler_step(q, qvel_next, dt, q_next)  # eq. 2.86 with q̇'[i+1]
    return 0, it, norm, converged


@njit(_nrt=False)
def force_balance_step(md: ModelData, td: TerrainData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray,
                       qvel: NDArray, u: NDArray, integral: NDArray, dt: float, q_next: NDArray,
                       qvel_next: NDArray) -> tuple:
    """One force-balance step of ``dt`` without sub-stepping (``ForceBalance._step``): the sub-steps' and the
    stepper's (:func:`dynamic_step`); :func:`_dynamic_step` inlines the same code for the rollout loop.

    Returns (status, iterations, ‖e‖ (N), converged).  The PI integral is advanced in ``integral`` if the
    step converged.  Forces, v_c and Δz of the step stay in ``ws`` (fc, vc, dz0, points).
    """
    return _force_balance(md, td, fd, ws, q, qvel, u, integral, dt, q_next, qvel_next)


@njit(_nrt=False)
def _commit_actuator_state(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, integral: NDArray,
                           dt: float) -> None:
    """The actuators' state after an accepted step (PI: the advanced, anti-windup-clamped integral): the state
    the model's kernel gives at the accepted rates."""
    _actuators(md, fd, ws, integral, dt)
    for k in range(md.actuated_frames.shape[0]):
        integral[k] = ws.act_trial[k]


@njit(_nrt=False)
def dynamic_step(md: ModelData, td: TerrainData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray, qvel: NDArray,
                 u: NDArray, integral: NDArray, dt: float, q_next: NDArray, qvel_next: NDArray,
                 out_dz: NDArray, out_points: NDArray) -> tuple:
    """:func:`_dynamic_step` with the whole step a call of :func:`force_balance_step` (the stepper's loop and the
    tests; the rollout loop inlines :func:`_dynamic_step`)."""
    status, it, norm, conv = force_balance_step(md, td, fd, ws, q, qvel, u, integral, dt, q_next, qvel_next)
    return _step_end(md, fd, ws, q, qvel, u, integral, dt, q_next, qvel_next, out_dz, out_points, status, it,
                     norm, conv, td)


@njit(inline="always")  # inlined into the rollout loop (see the docstring)
def _dynamic_step(md: ModelData, td: TerrainData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray,
                  qvel: NDArray, u: NDArray, integral: NDArray, dt: float, q_next: NDArray, qvel_next: NDArray,
                  out_dz: NDArray, out_points: NDArray) -> tuple:
    """One time step with sub-stepping: an unconverged step is retaken as two half steps, up to
    ``fd.max_halvings`` times (``ForceBalance.step``; the non-iterative variant never retakes).

    Returns (status, total iterations, ‖e‖ of the last sub-step, converged, sub-steps).  Δz and contact
    points of the step's start go to ``out_dz``/``out_points``; forces, v_c (ws.fc, ws.vc) are those of the
    last sub-step.

    The whole step's force balance is inlined here, on the caller's arrays, and the sub-steps (rare) are calls of
    :func:`force_balance_step` (:func:`_sub_steps`).  The rollout loop inlines this function: the step then costs
    no call, which passes the model, terrain, dynamics data and workspace tuples (≈ 120 array structs) by value.
    Inlined instead inside the sub-steps' loop (one site for the step and its sub-steps, stop 31), the same code
    ran slower (Talon 5.9–6.1 against 5.6–5.8 µs per step; docs/benchmarks.md, "The whole step outside the
    sub-steps' loop").
    """
    status, it, norm, conv = _force_balance(md, td, fd, ws, q, qvel, u, integral, dt, q_next, qvel_next)
    return _step_end(md, fd, ws, q, qvel, u, integral, dt, q_next, qvel_next, out_dz, out_points, status, it,
                     norm, conv, td)


@njit(inline="always")
def _step_end(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray, qvel: NDArray, u: NDArray,
              integral: NDArray, dt: float, q_next: NDArray, qvel_next: NDArray, out_dz: NDArray, out_points: NDArray,
              status: int, it: int, norm: float, conv: bool, td: TerrainData) -> tuple:
    """After the whole step's force balance: its Δz and contact points out, then the sub-steps if it did not
    converge.  Returns :func:`_dynamic_step`'s tuple."""
    for w in range(md.wheel_frame.shape[0]):
        out_dz[w] = ws.dz0[w]
        for r in range(3):
            out_points[w, r] = ws.points[w, r]
    if status != 0 or conv or fd.max_halvings <= 0 or fd.max_iterations == 1:
        return status, it, norm, conv, 1
    return _sub_steps(md, td, fd, ws, q, qvel, u, integral, dt, q_next, qvel_next, it)


@njit(_nrt=False)
def _sub_steps(md: ModelData, td: TerrainData, fd: DynamicsData, ws: DynamicsWorkspace, q: NDArray, qvel: NDArray,
               u: NDArray, integral: NDArray, dt: float, q_next: NDArray, qvel_next: NDArray, total: int) -> tuple:
    """The step from (q, q̇', integral) as sub-steps, after the whole step (``total`` iterations) did not converge;
    into (q_next, q̇'_next).  Returns :func:`_dynamic_step`'s tuple."""
    # Sub-steps on the binary grid of N = 2^H finest steps: from position p the attempt is the largest
    # aligned interval (the recursion's next right child), halved while it fails to converge.
    N = 1 << max(fd.max_halvings, 0)
    nq = q.shape[0]
    ndof = qvel.shape[0]
    for i in range(nq):
        ws.q_cur[i] = q[i]
    for i in range(ndof):
        ws.qvel_cur[i] = qvel[i]
    subs = 0
    pos = 0
    size = N // 2  # the full step failed
    while True:
        for k in range(integral.shape[0]):
            ws.integral_try[k] = integral[k]
        status, it, norm, conv = force_balance_step(md, td, fd, ws, ws.q_cur, ws.qvel_cur, u, ws.integral_try,
                                                    dt * size / N, ws.q_try, ws.qvel_try)
        total += it
        if status != 0:
            return status, total, norm, False, subs
        if not (conv or size == 1):
            size //= 2
            continue
        for k in range(integral.shape[0]):
            integral[k] = ws.integral_try[k]
        for i in range(nq):
            ws.q_cur[i] = ws.q_try[i]
        for i in range(ndof):
            ws.qvel_cur[i] = ws.qvel_try[i]
        subs += 1
        pos += size
        if pos >= N:
            break
        size = pos & -pos
    for i in range(nq):
        q_next[i] = ws.q_cur[i]
    for i in range(ndof):
        qvel_next[i] = ws.qvel_cur[i]
    return 0, total, norm, conv, subs


# ---- the coulomb contact mode: stiction as an active set of rigid tangential rows (issue 13, item 5) --------
# A wheel in contact (Δz < 0 at the step's start) either *sticks* — its two tangential rows (contact-frame x and
# y, Alg. 2) are rigid rows with target velocity 0, exactly as ideal actuator rows are (§2.4.4) — or *slides*
# — they are model rows with the Coulomb force of CoulombContact.  The set starts from the previous step's
# (DynamicsWorkspace.counts[C_SLIDING]); after the force balance converges, the rigid rows' constraint forces
# are recovered (:func:`_coulomb_check`), the sticking wheel furthest out of its cone ‖f_t‖ <= μ f_z slides (one
# per pass; but every wheel that slid at the step's start, was tried held and leaves its cone slides again at
# once), a sliding wheel whose slip reverses over the step or falls below 10 v_eps sticks (unless it was
# released in this step), and the step is solved again with the new set, at most COULOMB_MAX_PASSES + nw times
# (docs/contact_models.md, "The active set").

@njit(inline="always")
def _coulomb_sticks(ws: DynamicsWorkspace, w: int) -> bool:
    """Wheel w is in the sticking set: in contact at the step's start and not marked sliding."""
    return ws.dz0[w] < 0.0 and (ws.counts[C_SLIDING] >> w) & 1 == 0


@njit(_nrt=False)
def _coulomb_surface_rows(md: ModelData, ws: DynamicsWorkspace, nw: int, n: int) -> None:
    """The tangential rows of a wheel in contact (Δz < 0) taken at the contact patch on the terrain's surface,
    p_s = p − Δz n̂ (n̂ the contact normal), rather than at the rim point p below it (Alg. 2 at p_s), with the
    wheel's own spin column kept at the rim (the tread moves at Rω, the slip of eqs. C.5/C.12).

    Why: the rim points of wheels sunk by different Δz lie at different depths, so holding them fixed also
    forbids (nearly, by ~ΔΔz / wheelbase) the body's pitch and roll about the ground, which the normal springs
    need to settle — rigid rows that are nearly dependent, with huge internal forces between them.  At the
    surface, on a plane, pitch and roll about the ground and motion along the normal move no held point
    tangentially: those rows are exactly dependent and the vehicle settles on its springs."""
    for w in range(nw):
        dz = ws.dz0[w]
        if not dz < 0.0:
            continue
        out = ws.resid  # scratch (6, n) before the row selection uses it
        for r in range(3):
            ws.e_t[r] = ws.points[w, r] - dz * ws.frames[w, r, 2]  # p_s (scratch: e_t is free in the set-up)
        _wheel_jacobian(md.parent, md.jtype, ws.T_world, md.wheel_frame[w], ws.e_t[:3], ws.frames[w],
                        out[0:3], ws.jtmp)  # Alg. 2 at p_s
        _wheel_jacobian(md.parent, md.jtype, ws.T_world, md.wheel_frame[w], ws.points[w], ws.frames[w],
                        out[3:6], ws.jtmp)  # Alg. 2 at p
        spin = md.wheel_frame[w] + 5
        for r in range(2):  # add the difference, so any other term of the row (e.g. a belt's) is kept
            for j in range(n):
                if j != spin:
                    ws.A[3 * w + r, j] += out[r, j] - out[3 + r, j]


@njit(_nrt=False)
def _coulomb_hold_rows(ws: DynamicsWorkspace, nw: int, n: int, nb: int) -> int:
    """Make the tangential rows of the sticking wheels rigid (target velocity 0, zero slip) — those whose
    direction is independent of the rows already held, appended to the orthonormal basis ws.basis[:nb] of the
    rigid rows (the others are held through them); returns the new basis size."""
    for w in range(nw):
        if not _coulomb_sticks(ws, w):
            continue
        for r in range(3 * w, 3 * w + 2):
            if nb >= n:
                break
            for j in range(n):
                ws.basis[nb, j] = ws.A[r, j]
            ws.target[nb] = 0.0  # no slip
            if not orthonormalize_last(ws.basis, ws.target, nb, n, COULOMB_DEPENDENT):
                continue  # dependent on the held rows
            nb += 1
            ws.rigid[r] = True
            ws.v_target[r] = 0.0
    return nb


@njit(inline="always")
def _coulomb_in_rigid_set(ws: DynamicsWorkspace, r: int, nw: int) -> bool:
    """Row r takes part in the rigid-force decomposition: a rigid row, or a sticking wheel's tangential row."""
    if ws.rigid[r]:
        return True
    return r < 3 * nw and r % 3 < 2 and _coulomb_sticks(ws, r // 3)


@njit(inline="always")
def _coulomb_row_weight(fd: DynamicsData, ws: DynamicsWorkspace, r: int, nw: int, one: bool, free: float) -> float:
    """s_r of :func:`_coulomb_check`'s split: √(μ f_z) of a tangential row (N^½; μ f_z at least 1e-9 N), else
    ``free``."""
    if r >= 3 * nw:
        return free
    w = r // 3
    return math.sqrt(max(fd.contact_P[0 if one else w, 2] * ws.fc[w, 2], 1e-9))


@njit(_nrt=False)
def _coulomb_check(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, qvel: NDArray, dt: float,
                   released: int, start: int) -> tuple:
    """After a converged force balance: the sticking wheels' tangential constraint forces into ws.fc, and the
    next stick/slide set: of the sticking wheels whose force leaves the cone or whose held velocity is not zero,
    those that slid at the step's start (mask ``start``: tried held in this step) slide again, and of the others
    the one with the largest ‖f_t‖/(μ f_z) slides; sliding wheels whose slip stopped or reversed stick.
    Returns (sliding mask, released mask).

    The rigid rows' generalized force is g = M q̈' + c − A_mᵀ f_model (the constraint force of eq. 2.82 less the
    model rows' forces; N g = e ≈ 0, so g lies in the span of the rigid rows, basis B).  Held rows that depend
    on each other share it statically indeterminately: the split is the one that minimizes Σ μ_r² / c_r subject to
    A_Rᵀμ = g, c_r the row's cone radius μ f_z (actuator and rigid joint rows: COULOMB_FREE_ROW times the total
    normal force, nearly free) — the elastic split of tangential springs whose stiffness is proportional to the
    load: each wheel's friction in proportion to its cone where the geometry allows (every wheel then at the
    same fraction of its cone), the motors giving whatever torque that needs.  With s_r = √c_r, S = diag(s_r):
    μ = S Q y, Q = S A_R Bᵀ, (QᵀQ) y = B g."""
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    na = md.actuated_frames.shape[0]
    nA = 3 * nw + na + fd.A_joint.shape[0]
    nm, nb = ws.counts[C_MODEL_ROWS], ws.counts[C_RIGID_BASIS]
    g = ws.p
    for j in range(n):  # eq. 2.82: M q̈' + c − τ is the constraint force; less the model rows' forces
        s = ws.bias[j] - ws.tau_ext[j]
        for i in range(n):
            s += ws.M[j, i] * (ws.qn[i] - qvel[i]) / dt
        for m in range(nm):
            r = ws.mrows[m]
            if not (r < 3 * nw and r % 3 < 2 and _coulomb_sticks(ws, r // 3)):  # a held row: its force is in g
                s -= ws.A[r, j] * ws.f_model[m]
        g[j] = s
    # Q (rows of the held set, in row order, scaled by their weights) into ws.resid; K = QᵀQ into ws.H; B g into
    # ws.grad
    one = fd.contact_P.shape[0] == 1
    total = 0.0
    for w in range(nw):
        total += max(ws.fc[w, 2], 0.0)
    free = math.sqrt(COULOMB_FREE_ROW * max(total, 1.0))
    nr = 0
    for r in range(nA):
        if _coulomb_in_rigid_set(ws, r, nw):
            sr = _coulomb_row_weight(fd, ws, r, nw, one, free)
            for b in range(nb):
                d = 0.0
                for j in range(n):
                    d += ws.A[r, j] * ws.basis[b, j]
                ws.resid[nr, b] = sr * d
            nr += 1
    tr = 0.0
    for a in range(nb):
        s = 0.0
        for j in range(n):
            s += ws.basis[a, j] * g[j]
        ws.grad[a] = s
        for b in range(a + 1):
            t = 0.0
            for i in range(nr):
                t += ws.resid[i, a] * ws.resid[i, b]
            ws.H[a, b] = t
        tr += ws.H[a, a]
    for a in range(nb):
        ws.H[a, a] += 1e-12 * tr / max(nb, 1) + 1e-300
    sliding = ws.counts[C_SLIDING]
    if nb > 0 and cholesky(ws.H, nb, ws.H):
        cho_solve(ws.H, nb, ws.grad)
        i = 0
        for r in range(nA):
            if _coulomb_in_rigid_set(ws, r, nw):
                if r < 3 * nw:
                    s = 0.0
                    for b in range(nb):
                        s += ws.resid[i, b] * ws.grad[b]
                    ws.fc[r // 3, r % 3] = _coulomb_row_weight(fd, ws, r, nw, one, free) * s
                i += 1
    worst, worst_ratio = -1, -1.0  # the sticking wheel to release: the one furthest out of its cone
    for w in range(nw):
        bit = 1 << w
        if ws.dz0[w] >= 0.0:  # out of contact: no rows held; it sticks when it touches down
            sliding &= ~bit
            continue
        p = 0 if one else w
        mu, eps = fd.contact_P[p, 2], fd.contact_P[p, 3]
        vx, vy = ws.vc[w, 0], ws.vc[w, 1]
        if _coulomb_sticks(ws, w):
            ft = math.sqrt(ws.fc[w, 0] ** 2 + ws.fc[w, 1] ** 2)
            lim = mu * ws.fc[w, 2]
            ratio = ft / lim if lim > 0.0 else (math.inf if ft > 0.0 else 0.0)  # ‖f_t‖ / (μ f_z)
            if ratio > 1.0 + 1e-9 or math.sqrt(vx * vx + vy * vy) > COULOMB_STICK_SLIP:
                if start & bit:  # it slid at the step's start and was tried held: back to sliding at once
                    sliding |= bit
                    released |= bit
                elif ratio > worst_ratio:
                    worst, worst_ratio = w, ratio
        elif released & bit == 0:
            v0x, v0y = 0.0, 0.0
            for j in range(n):
                v0x += ws.A[3 * w, j] * qvel[j]
                v0y += ws.A[3 * w + 1, j] * qvel[j]
            if math.sqrt(vx * vx + vy * vy) <= 10.0 * eps or vx * v0x + vy * v0y <= 0.0:
                sliding &= ~bit  # the slip stopped or reversed within the step: try holding it
    if worst >= 0:  # one at a time: releasing one wheel changes the force the others need
        sliding |= 1 << worst
        released |= 1 << worst
    return sliding, released


@njit(_nrt=False)
def _coulomb_active_set(md: ModelData, fd: DynamicsData, ws: DynamicsWorkspace, qvel: NDArray, integral: NDArray,
                        dt: float, it: int, norm: float) -> tuple:
    """The coulomb mode's active set over a step already solved with the previous set (see the section's
    comment): re-solve while the stick/slide set changes, at most COULOMB_MAX_PASSES + n_wheels times; the set
    reached is the next step's start.  Returns (total iterations, ‖e‖).

    A pass changes which rows are rigid, not the state: it keeps the step's geometry (collision, M, c, A) and
    redoes only :func:`_setup_rows`, from the same warm start as the step's first solve (measured: Talon on
    rocky_rough_0, 65 → 37 µs per step, bit for bit the same trajectory; a warm start at the last pass's
    solution instead took more iterations, 13.5 against 10.8 per step)."""
    n = md.parent.shape[0] + 5
    passes = COULOMB_MAX_PASSES + md.wheel_frame.shape[0]
    released = 0
    start = ws.counts[C_SLIDING]
    for k in range(passes + 1):
        sliding, released = _coulomb_check(md, fd, ws, qvel, dt, released, start)
        if sliding == ws.counts[C_SLIDING]:
            break
        ws.counts[C_SLIDING] = sliding
        if k == passes:
            break
        _setup_rows(md, fd, ws, qvel, dt)  # the geometry (collision, M, c, A) is the step's
        it2, norm = _newton(md, fd, ws, qvel, integral, dt, n)
        it += it2
    return it, norm
