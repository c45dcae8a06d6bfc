"""Set-ups of the reproduction studies, shared by ``benchmarks/`` and the tests (tests never import benchmarks/).

One module per study; each holds the scenario (vehicle variant, terrain, command, initial state, run
helpers and the per-run metrics the study's claims are stated in), not its report (tables, figures and
markdown stay in the benchmark script):

- :mod:`~wmr_dynamics.scenarios.paths` — where the thesis's benchmark terrains live;
- :mod:`~wmr_dynamics.scenarios.table_2_4_rocky7` — thesis §2.5.1 / Table 2.4, Rocky 7: stabilized DAE vs.
  unconstrained motion with terrain fitting (the fit itself: :mod:`wmr_dynamics.kinematics.terrain_fit`);
- :mod:`~wmr_dynamics.scenarios.zoe_rough` — thesis §2.5.4 / Tables 2.6–2.7, Zoë on the ten rough terrains;
- :mod:`~wmr_dynamics.scenarios.landtamer_ramp` — thesis §2.5.2, LandTamer over a ramp: DAE vs. stiff ODE;
- :mod:`~wmr_dynamics.scenarios.extreme_phenomena` — thesis §2.5.3, loss of traction and rollover;
- :mod:`~wmr_dynamics.scenarios.auchter_pvc` — Auchter, Moore & Ghosal: passive variable camber.

Plain Python over the public API (no compiled kernels here).  Nothing is imported by ``import wmr_dynamics``.
"""
