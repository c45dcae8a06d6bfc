"""The compiled per-step path (DESIGN.md, "Speed"): every kernel of a time step as numba code over flat
arrays and a preallocated workspace, so that a whole rollout — or a batch of them — is one compiled call.

Modules:
    data         ModelData / TerrainData: the immutable model and terrain as tuples of flat arrays.
    terrain      the terrain queries of every surface (the Terrain classes' height/normal call them).
    collision    the wheel–terrain contact search (``wmr_dynamics.collision.wheel_contacts`` calls it).
    callbacks    Python contact models, actuators and terrains called back from the kernels.
    linalg       small dense linear algebra written out (Cholesky, triangular solves, pivoted QR).
    kinematics   compiled stabilized-DAE kinematic step (§2.2.5).
    dynamics     compiled force-balance dynamic step (§2.4).
    controllers  compiled body-velocity controllers.
    rollout      single and batched rollouts (one compiled call; batches in parallel over cores).
"""
