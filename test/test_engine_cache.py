"""The compiled engine's on-disk cache: what its key covers, and that a cold compile is announced.

``make install`` and ``make test`` run ``python -m wmr_dynamics.warmup`` first, so the suite also checks that
this left every engine part in the cache a user's first run will find (issue: a fast first run).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from wmr_dynamics import _jit
from wmr_dynamics.compiled import cache


def test_cache_key_covers_the_kernels_and_their_constants_but_not_the_front_end() -> None:
    names = {p.relative_to(_jit._ROOT).as_posix() for p in _jit._kernel_sources()}
    # modules that define kernels, and the modules they import constants from (G, N_SAMPLES, thresholds)
    assert {"compiled/dynamics.py", "compiled/kinematics.py", "kinematics/contact_set.py", "kinematics/fk.py",
            "model.py", "compiled/collision.py", "compiled/terrain.py", "compiled/callbacks.py"} <= names
    # code no kernel depends on: editing it must not throw away a warm cache (the Python entry points of
    # collision and terrain queries included)
    assert not names & {"cli.py", "simulate.py", "warmup.py", "compiled/engine.py", "compiled/cache.py",
                        "io/plots.py", "collision.py", "terrain/surfaces.py"}
    assert not any(n.startswith("sweep/") for n in names)


def test_a_cold_part_is_announced_once_and_then_marked_warm(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(cache, "cache_dir", lambda: tmp_path)
    calls = []
    assert not cache.is_warm("dynamic")
    assert cache.compiled("dynamic", lambda: calls.append(1) or 42) == 42
    err = capsys.readouterr().err
    assert "compiling the dynamic engine" in err and "compiled in" in err
    assert cache.is_warm("dynamic")
    assert cache.compiled("dynamic", lambda: calls.append(2) or 43) == 43
    assert capsys.readouterr().err == ""  # warm: silent
    assert calls == [1, 2]


def test_plain_python_mode_compiles_nothing_so_it_neither_announces_nor_marks_a_part(tmp_path, monkeypatch,
                                                                                     capsys) -> None:
    # NUMBA_DISABLE_JIT=1 (debugging, coverage) runs the kernels as Python: a marker written then would tell a
    # later compiled run that a cold cache is warm, and it would compile in silence
    monkeypatch.setattr(cache, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(cache.numba.config, "DISABLE_JIT", True)
    assert cache.compiled("dynamic", lambda: 42) == 42
    assert capsys.readouterr().err == ""
    assert not cache.is_warm("dynamic")


@pytest.mark.parametrize("part", ["kinematic", "dynamic", "dynamic-batch"])
def test_the_warm_up_left_every_engine_part_in_the_cache(part: str) -> None:
    assert cache.is_warm(part), f"run 'python -m wmr_dynamics.warmup' (make install does): {part} is cold"


def test_warm_up_loads_from_the_cache_and_says_so() -> None:
    r = subprocess.run([sys.executable, "-m", "wmr_dynamics.warmup"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for part in ("kinematic", "dynamic", "dynamic-batch"):
        assert any(line.startswith(f"wmr_dynamics: {part} engine loaded from the cache") for line in lines), lines
    assert str(_jit.cache_dir()) in r.stdout


def test_prune_removes_only_other_versions_caches_unused_for_the_given_days(tmp_path, monkeypatch) -> None:
    day = 86400.0
    now = 1_800_000_000.0
    current = tmp_path / "wmr_dynamics-current"
    monkeypatch.setattr(cache, "cache_dir", lambda: current)

    def folder(name: str, used_days_ago: float, marker: bool = True, size: int = 1000):
        f = tmp_path / name
        (f / "compiled").mkdir(parents=True)
        (f / "compiled" / "kernel.nbc").write_bytes(b"x" * size)
        t = now - used_days_ago * day
        if marker:
            (f / "dynamic.warm").touch()
            os.utime(f / "dynamic.warm", (t, t))
            os.utime(f, (now, now))  # the folder itself recent: the marker decides
        else:
            os.utime(f, (t, t))
        return f

    folder("wmr_dynamics-current", 400)  # the version in use: kept however old
    old = folder("wmr_dynamics-old", 31, size=5000)
    old_unmarked = folder("wmr_dynamics-unmarked", 45, marker=False, size=7000)
    recent = folder("wmr_dynamics-recent", 29)
    other = folder("somebody-else", 400)  # not a cache of ours
    removed, freed = cache.prune(30, now=now)
    assert (removed, freed) == (2, 12000)
    assert not old.exists() and not old_unmarked.exists()
    assert current.exists() and recent.exists() and other.exists()


def test_a_warm_parts_use_refreshes_its_marker(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(cache, "cache_dir", lambda: tmp_path)
    cache.compiled("kinematic", lambda: 1, quiet=True)
    marker = tmp_path / "kinematic.warm"
    os.utime(marker, (1.0, 1.0))
    cache.compiled("kinematic", lambda: 1)
    assert marker.stat().st_mtime > 1e9  # touched now: prune() sees the version in use
