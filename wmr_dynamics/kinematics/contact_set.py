"""Which wheels are in contact, and how much each constraint row counts (thesis §2.2.2 after eq. 2.24, eq. 2.38).

The thesis stacks "three rows per each wheel in contact" into A_wheel.  A wheel that the terrain has dropped
away from must not keep its rows: its Baumgarte row v_z = −σΔz (eq. 2.35) would pull the body down toward
the lost ground, and a rigid vehicle on rough terrain would settle into a least-squares compromise in which
the other wheels sink into the ground (before this module: 26–36 % of wheel-steps more than 1 cm deep for a
rigid four- or six-wheeler at 1 m/s on RMS 5 cm terrain, down to 7 cm).

**The contact set, with hysteresis.**  A lifted wheel enters contact when its Δz — or its Δz predicted one
Baumgarte horizon ahead, Δz + ż/σ with ż its normal velocity under the previous step's q̇' — is at most
``CONTACT_ON_M``: a wheel about to meet rising ground gets its rows back before it sinks in, not after.  A
wheel in contact leaves when both exceed ``CONTACT_OFF_M`` (> ``CONTACT_ON_M``: no chatter at the
threshold; a wheel already on its way back down stays).  **At most one wheel leaves per step**, the highest,
as an active-set method drops one constraint at a time: a rigid four-wheeler's least-squares fit leaves its
two diagonal wheels equally high (residuals +e, −e, −e, +e), and dropping both would balance it on the other
diagonal with nothing to tip it (the kinematic model has no gravity).

**Row weights (a weighted pseudoinverse in eq. 2.38).**  A wheel in contact: its two slip rows weigh 1 and
its normal row ``CONTACT_NORMAL_WEIGHT`` — the holonomic contact constraint takes precedence over the
no-slip assumption, which overconstrained vehicles must violate anyway (the thesis's plain pseudoinverse
spreads the conflict over penetration and slip alike).  A lifted wheel stays in the system: its slip rows at
``LIFTED_SLIP_WEIGHT`` (no traction in the air) and its normal row at ``LIFTED_NORMAL_WEIGHT``, aiming at most
``LIFTED_REACH_M`` down per horizon (v_z = −σ·min(Δz, LIFTED_REACH_M)), so however high it hangs it pulls no
harder than a wheel just leaving.  Against the normal rows of the wheels in contact that pull is weak
((1/3)² ≈ 11 % of a contact row's say, on at most 5 mm: a rigid vehicle resting beside a pit sits within
a millimetre of the ground); against slip rows it is even, so a passive mechanism's free wheel (a bogie
with one wheel up, a suspension arm) swings back down at up to σ·LIFTED_REACH_M, as gravity would make
it, and a vehicle in the air settles onto the ground: the system never becomes singular because a wheel
lost contact.  (Deleting the lifted rows outright leaves those directions free or near-singular: Rocky 7's
bogies then swing to their limits within a few steps on rough terrain; keeping them at full pull is the
compromise above.)

Measured (Δt = 0.04 s, 1 m/s, 8 s on Gaussian terrain RMS 5 cm, correlation length 0.2 m, seeds 1–4; share
of wheel-steps more than 1 cm deep and the deepest Δz; every row kept → this module): rigid four-wheeler
(test/data/skid4.urdf) 31 % / −6.0 cm → 0.7 % / −2.4 cm; LandTamer (rigid, six wheels) 33 % / −7.3 cm →
1.3 % / −2.5 cm; Rocky 7 8.5 % / −5.1 cm → 1.0 % / −2.2 cm.  Table 2.4 (Rocky 7, 0.5 m/s, two terrains): the
DAE's step-size error (Δt 0.04 vs 0.01) 0.025 m / 0.017 rad → 0.024 m / 0.035 rad (thesis 0.041 / 0.027),
its mean contact-point speed 0.086 → 0.093 m/s (thesis 0.072).  Tried: lifted weights 1e-4–1, reaches
5 mm–∞, contact normal weights 1–10, thresholds 2–10 mm, horizons 1/σ–2/σ, and a lifted normal row acting
through the passive joints only (Rocky 7 then loses a third of its contacts).  Contact normal weight 2 doubles
the Table 2.4 yaw error; weights above 3 push its contact-point speed more than 30 % past the thesis's;
each step up makes the body bob more where a wheel meets a riser (Rocky 7 over the `steps` preset: 0.47 m
of vertical travel for a 0.4 m climb with the plain pseudoinverse, 0.70 m at weight 3).  What remains is
the Euler step's own error: ground that curves up under a wheel within the step.
"""

from __future__ import annotations

from numpy.typing import NDArray

from wmr_dynamics._jit import njit

CONTACT_ON_M = 0.002  # a lifted wheel re-enters contact at Δz ≤ this (m)
CONTACT_OFF_M = 0.005  # a wheel in contact leaves it at Δz > this (m)
CONTACT_NORMAL_WEIGHT = 3.0  # weight of a contact's normal (holonomic) row; its two slip rows weigh 1
LIFTED_NORMAL_WEIGHT = 1.0  # weight of a lifted wheel's normal row ...
LIFTED_REACH_M = 0.005  # ... which aims at most this far down per Baumgarte horizon (m)
LIFTED_SLIP_WEIGHT = 0.1  # weight of a lifted wheel's two slip rows (no traction in the air)


@njit(_nrt=False)
def update_contact_set(dz: NDArray, dz_pred: NDArray, in_contact: NDArray, weight: NDArray) -> int:
    """Advance the contact set by one step and set the row weights of eq. 2.38.

    Args:
        dz: (nw,) Δz, m.  dz_pred: (nw,) Δz predicted one Baumgarte horizon ahead, Δz + ż/σ, m.
        in_contact: (nw,) bool, the set from the previous step, updated in place: every lifted wheel whose
            Δz or predicted Δz is ≤ ``CONTACT_ON_M`` enters; of the wheels in contact whose Δz and predicted
            Δz both exceed ``CONTACT_OFF_M``, the highest leaves.
        weight: (nw, 2) out: each wheel's (slip-row weight, normal-row weight).
    Returns:
        The number of wheels in contact.  Start a run with every wheel in contact (all True).
    """
    leave, highest = -1, CONTACT_OFF_M
    for w in range(dz.shape[0]):
        if in_contact[w]:
            lift = min(dz[w], dz_pred[w])  # lifted now and not on its way back within the horizon
            if lift > highest:  # at most one wheel leaves per step: the highest (an active-set step)
                leave, highest = w, lift
        else:
            in_contact[w] = min(dz[w], dz_pred[w]) <= CONTACT_ON_M
    if leave >= 0:
        in_contact[leave] = False
    n = 0
    for w in range(dz.shape[0]):
        if in_contact[w]:
            weight[w, 0], weight[w, 1] = 1.0, CONTACT_NORMAL_WEIGHT
            n += 1
        else:
            weight[w, 0], weight[w, 1] = LIFTED_SLIP_WEIGHT, LIFTED_NORMAL_WEIGHT
    return n


@njit(inline="always")
def normal_target(dz: float, in_contact: bool) -> float:
    """Δz (m) the normal row of eq. 2.35 closes within one Baumgarte horizon: all of it in contact, at most
    ``LIFTED_REACH_M`` for a lifted wheel (v_z = −σ · this)."""
    return dz if in_contact else min(dz, LIFTED_REACH_M)
