"""Where the project's shared data lives: ``shared/`` beside the repository (CI), else /work/shared."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = next((p for p in (ROOT.parent / "shared", Path("/work/shared")) if p.is_dir()), ROOT.parent / "shared")
TERRAINS = SHARED / "data" / "rough_terrains"
