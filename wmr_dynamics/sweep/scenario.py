"""Scenario keys of a sweep job: names, defaults and value checks (:data:`SCENARIO`), the summary keys a job
can output (:data:`OUTPUT_KEYS`), and :class:`SweepError`.

A **scenario** is one fully resolved simulation set-up (vehicle, mode, terrain, time step, command, ...): the
keys a sweep file's ``base``, ``grid``, ``cases`` and ``random`` may set.  Each key's check takes the value and
the sweep file's folder (relative paths are relative to it) and returns the normalized value or raises
``_Bad`` with what is wrong (``wmr_dynamics.sweep.spec`` turns it into a :class:`SweepError` naming file and key).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wmr_dynamics.errors import WmrError


class SweepError(WmrError, ValueError):
    """An invalid sweep file or sweep request; the message names the file, the key and what is wrong."""


class _Bad(ValueError):
    """A value check failed (internal; turned into a SweepError naming file and key)."""


# ---- scenario keys ------------------------------------------------------------------------------------
MODES = ("kinematic", "enhanced", "dynamic")
CONTACTS = ("linear", "pacejka", "ishigami", "ding", "coulomb")  # wmr_dynamics.contact_models.MODELS (checked in tests)
ACTUATORS = ("ideal", "pi")
INTEGRATORS = ("euler", "rk4")
TERRAIN_PRESETS = ("flat", "rough", "ramp", "steps")
TERRAIN_SUFFIXES = (".txt", ".yaml", ".yml", ".npy", ".png", ".sdf", ".world")
SLIP_NAMES = ("p1", "p2", "p3", "p4", "p5", "p6")


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        hint = ""
        if isinstance(v, str):
            try:
                float(v)
                hint = " (YAML reads e.g. 1e-2 as text: write 1.0e-2)"
            except ValueError:
                pass
        raise _Bad(f"must be a number, got {v!r} ({type(v).__name__}){hint}")
    if not math.isfinite(v):
        raise _Bad(f"must be finite, got {v!r}")
    return float(v)


def _positive(unit: str) -> Callable[[Any, Path], float]:
    def check(v: Any, _base: Path) -> float:
        x = _number(v)
        if x <= 0:
            raise _Bad(f"must be > 0 ({unit}), got {v!r}")
        return x
    return check


def _real(v: Any, _base: Path) -> float:
    return _number(v)


def _optional_real(v: Any, _base: Path) -> float | None:
    return None if v is None else _number(v)


def _seed(v: Any, _base: Path) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise _Bad(f"must be an integer >= 0, got {v!r}")
    return int(v)


def _one_of(options: Sequence[str], optional: bool = False) -> Callable[[Any, Path], str | None]:
    def check(v: Any, _base: Path) -> str | None:
        if v is None and optional:
            return None
        if v not in options:
            extra = " or null (the vehicle YAML's)" if optional else ""
            raise _Bad(f"must be one of {', '.join(options)}{extra}, got {v!r}")
        return v
    return check


def _controller(v: Any, _base: Path) -> str | None:
    from wmr_dynamics.controllers import CONTROLLER_TYPES

    return _one_of(CONTROLLER_TYPES, optional=True)(v, _base)


def _path_or_name(v: Any, base: Path, names: Iterable[str], what: str, suffixes: Sequence[str]) -> str:
    if not isinstance(v, str) or not v:
        raise _Bad(f"must be a {what} name or a file path, got {v!r}")
    if v in names:
        return v
    p = Path(os.path.expandvars(v)).expanduser()
    p = p if p.is_absolute() else base / p
    if p.suffix.lower() not in suffixes:
        raise _Bad(f"unknown {what} {v!r}: not one of {', '.join(names)} nor a file ending in {', '.join(suffixes)}")
    if not p.is_file():
        raise _Bad(f"unknown {what} {v!r}: {p} not found (relative paths are relative to the sweep file)")
    return str(p.resolve())


def _vehicle(v: Any, base: Path) -> str:
    from wmr_dynamics.urdf import bundled_vehicles

    return _path_or_name(v, base, bundled_vehicles(), "vehicle", (".urdf", ".yaml", ".yml"))


def _terrain(v: Any, base: Path) -> str:
    return _path_or_name(v, base, TERRAIN_PRESETS, "terrain", TERRAIN_SUFFIXES)


def _slip(v: Any, _base: Path) -> list[float]:
    if not isinstance(v, list) or len(v) != 6:
        raise _Bad(f"must be a list of 6 numbers p1..p6 (thesis eqs. 2.48-2.49), got {v!r}")
    return [_number(x) for x in v]


def _names(v: Any, _base: Path) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise _Bad(f"must be a list of joint names, got {v!r}")
    return list(v)


@dataclass(frozen=True)
class _Key:
    default: Any
    check: Callable[[Any, Path], Any]
    doc: str


SCENARIO: dict[str, _Key] = {
    "vehicle": _Key("rocky7", _vehicle, "bundled vehicle name or URDF / vehicle YAML path"),
    "lock_joints": _Key([], _names, "joints held at 0 by rigid constraints (e.g. Zoë's steering)"),
    "mode": _Key("kinematic", _one_of(MODES), "motion model"),
    "contact": _Key(None, _one_of(CONTACTS, optional=True), "dynamic mode: contact model"),
    "actuator": _Key(None, _one_of(ACTUATORS, optional=True), "dynamic mode: actuator model"),
    "controller": _Key(None, _controller, "controller type (default: the vehicle YAML's)"),
    "integrator": _Key("euler", _one_of(INTEGRATORS), "kinematic modes: euler or rk4"),
    "slip": _Key([0.0] * 6, _slip, "enhanced mode: body slip parameters p1..p6"),
    "terrain": _Key("rough", _terrain, "flat | rough | ramp | steps | terrain file"),
    "rms": _Key(0.05, _positive("m"), "rough terrain RMS height, m"),
    "corr_len": _Key(0.2, _positive("m"), "rough terrain correlation length, m"),
    "seed": _Key(1, _seed, "rough terrain random seed"),
    "dt": _Key(0.04, _positive("time step, s"), "time step, s"),
    "duration": _Key(10.0, _positive("simulated time, s"), "simulated time, s"),
    "speed": _Key(0.5, _real, "commanded forward speed, m/s"),
    "yaw_rate": _Key(0.0, _real, "commanded yaw rate, rad/s"),
    "x": _Key(None, _optional_real, "start x, m (default: the vehicle YAML's initial_pose)"),
    "y": _Key(None, _optional_real, "start y, m"),
    "yaw": _Key(None, _optional_real, "start yaw, rad"),
}

# SimResult.summary() keys (the summary's own "wall_time_s", the stepping loop's, is "loop_wall_time_s").
SUMMARY_KEYS = ("vehicle", "mode", "dt_s", "distance_m", "final_pose", "mean_contact_speed_mps", "max_abs_dz_m",
                "contact_fraction", "min_rollover_margin_m", "steps", "sim_time_s", "loop_wall_time_s",
                "real_time_factor", "rolled_over")
DYNAMIC_SUMMARY_KEYS = ("normal_force_min_N", "normal_force_max_N", "slip_ratio", "slip_angle_rad",
                        "mean_iterations", "unconverged_steps")
OUTPUT_KEYS = SUMMARY_KEYS + DYNAMIC_SUMMARY_KEYS
TIMING_KEYS = frozenset({"wall_time_s", "loop_wall_time_s", "real_time_factor"})  # differ between runs
