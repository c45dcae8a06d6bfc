"""The compiled per-step path (DESIGN.md, "Speed"): every kernel of a time step as numba code over flat
arrays and a preallocated workspace, so that a whole rollout — or a batch of them — is one compiled call.

Modules:
    data         ModelData / TerrainData: the immutable model and terrain as tuples of flat arrays.
    terrain      compiled terrain queries (plane, bilinear height grid).
    collision    compiled wheel–terrain contact search (same algorithm as ``wmr_dynamics.collision``).
    linalg       small dense linear algebra written out (Cholesky, triangular solves, pivoted QR).
    kinematics   compiled stabilized-DAE kinematic step (§2.2.5).
    dynamics     compiled force-balance dynamic step (§2.4).
    controllers  compiled body-velocity controllers.
    rollout      single and batched rollouts (one compiled call; batches in parallel over cores).
"""
