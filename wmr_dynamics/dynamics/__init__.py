"""Dynamics of the WMR frame tree (thesis §2.4).

- :func:`crba` — joint-space inertia, Alg. 3;  :func:`rnea_bias` / :func:`rnea` — bias force and inverse
  dynamics, Alg. 4.
"""

from wmr_dynamics.dynamics.rigid_body import crba, rnea, rnea_bias

__all__ = ["crba", "rnea", "rnea_bias"]
