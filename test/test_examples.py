"""examples/mpc_planner.py, run as a user would: a few planning cycles with few candidates make progress."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mpc_planner_drives_towards_the_goal_and_writes_its_figure(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "mpc_planner.py"), "--candidates", "40",
                        "--cycles", "4", "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    dist = [float(d) for d in re.findall(r"to goal ([0-9.]+) m", r.stdout)]
    assert len(dist) == 4
    start = float((8.0 ** 2 + 3.0 ** 2) ** 0.5)  # the default goal (8, 3) m, Zoë starts near the origin
    assert dist[-1] < dist[0] < start + 0.5 and dist[-1] < start - 0.5  # 2 s driven at up to 1 m/s
    assert "rollouts" in r.stdout and "× real time" in r.stdout
    png = tmp_path / "mpc_planner.png"
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 20_000
