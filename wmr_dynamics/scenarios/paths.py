"""Where the project's shared data lives: the thesis author's benchmark terrains.

``shared/`` beside the repository (CI checkouts), else ``/work/shared``; the rough terrains of the thesis
author's library are ``<shared>/data/rough_terrains/`` (``zoe_rough_{1..10}.txt``, ``rocky_rough_*.txt``;
wmrde grid format, :func:`wmr_dynamics.terrain.load_wmrde_grid`).  The data are not shipped with the package.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # the source checkout (for an installed package: its prefix)
SHARED = next((p for p in (REPO_ROOT.parent / "shared", Path("/work/shared")) if p.is_dir()),
              REPO_ROOT.parent / "shared")
ROUGH_TERRAINS = SHARED / "data" / "rough_terrains"


def rough_terrain_path(name: str, terrain_dir: Path | None = None) -> Path:
    """Path of the benchmark terrain file ``<name>.txt`` (e.g. ``"zoe_rough_3"``) in ``terrain_dir``
    (default :data:`ROUGH_TERRAINS`).  The file need not exist (loading it then raises a clear error)."""
    return Path(terrain_dir or ROUGH_TERRAINS) / f"{name}.txt"
