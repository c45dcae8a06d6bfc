"""The vehicle YAML's schema (docs/vehicle_yaml.md), checked once at the boundary by :func:`validate`.

Every key's type and range is checked before anything is built from it, and an error names the key path
and what is wrong, e.g. ``wheels.FL_joint.radius: expected a number in (0, 10] m, got 'big'``.  The contact
and actuator models then check the names of their own parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from wmr_dynamics.contact_models.registry import CONTACT_MODELS
from wmr_dynamics.errors import VehicleConfigError
from wmr_dynamics.joint_models import JOINT_MODELS

__all__ = ["SCHEMA", "VehicleConfigError", "validate"]

Check = Callable[[str, Any], None]


def _fail(path: str, expected: str, got: Any) -> None:
    raise VehicleConfigError(f"{path}: expected {expected}, got {got!r}")


def number(lo: float = -math.inf, hi: float = math.inf, unit: str = "", lo_open: bool = False) -> Check:
    """A finite real in [lo, hi] (or (lo, hi] with ``lo_open``)."""
    lo_s = "-inf" if lo == -math.inf else f"{lo:g}"
    span = ("a finite number" if lo == -math.inf and hi == math.inf
            else f"a number in {'(' if lo_open else '['}{lo_s}, {hi:g}]" + (f" {unit}" if unit else ""))

    def check(path: str, v: Any) -> None:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            _fail(path, span, v)
        if v < lo or v > hi or (lo_open and v == lo):
            _fail(path, span, v)
    return check


def text(path: str, v: Any) -> None:
    if not isinstance(v, str) or not v.strip():
        _fail(path, "a non-empty string", v)


def one_of(*choices: str) -> Check:
    def check(path: str, v: Any) -> None:
        if v not in choices:
            _fail(path, f"one of {', '.join(choices)}", v)
    return check


def flag(path: str, v: Any) -> None:
    if not isinstance(v, bool):
        _fail(path, "true or false", v)


def vector(n: int, item: Check) -> Check:
    def check(path: str, v: Any) -> None:
        if not isinstance(v, (list, tuple)) or len(v) != n:
            _fail(path, f"a list of {n} numbers", v)
        for k, x in enumerate(v):
            item(f"{path}[{k}]", x)
    return check


def names(path: str, v: Any) -> None:
    if not isinstance(v, (list, tuple)) or not v:
        _fail(path, "a non-empty list of joint names", v)
    for k, x in enumerate(v):
        text(f"{path}[{k}]", x)
    if len(set(v)) != len(v):
        _fail(path, "distinct joint names", v)


def record(fields: dict[str, Check], required: tuple[str, ...] = (), open_: bool = False) -> Check:
    """A mapping with the given fields (unknown keys an error unless ``open_``)."""
    def check(path: str, v: Any) -> None:
        if not isinstance(v, dict):
            _fail(path, "a mapping of keys", v)
        for k in required:
            if k not in v:
                raise VehicleConfigError(f"{path}: key '{k}' is missing")
        for k, x in v.items():
            if k in fields:
                fields[k](f"{path}.{k}", x)
            elif not open_:
                raise VehicleConfigError(f"{path}.{k}: unknown key; allowed: {', '.join(sorted(fields))}")
    return check


def mapping_of(item: Check) -> Check:
    """A mapping from names (joint names, parameter names) to values checked by ``item``."""
    def check(path: str, v: Any) -> None:
        if not isinstance(v, dict):
            _fail(path, "a mapping of names", v)
        for k, x in v.items():
            text(f"{path} key", k)
            item(f"{path}.{k}", x)
    return check


def list_of(item: Check) -> Check:
    def check(path: str, v: Any) -> None:
        if not isinstance(v, list):
            _fail(path, "a list", v)
        for k, x in enumerate(v):
            item(f"{path}[{k}]", x)
    return check


def scalar_or_vector(path: str, v: Any) -> None:
    """A model parameter: a finite number or a list of finite numbers."""
    if isinstance(v, (list, tuple)):
        for k, x in enumerate(v):
            number()(f"{path}[{k}]", x)
    else:
        number()(path, v)


def contact_param(path: str, v: Any) -> None:
    """A contact-model parameter: a number, a list of numbers (one per wheel) or a word (an option such as
    ``friction: cone``; the contact model checks its values and names the valid ones)."""
    if not isinstance(v, str):
        scalar_or_vector(path, v)


def model_or_record(models: list[str], full: Check) -> Check:
    """A model's name alone (its default parameters, e.g. ``contact: coulomb``) or the full mapping ``full``."""
    def check(path: str, v: Any) -> None:
        if isinstance(v, str):
            one_of(*models)(path, v)
        else:
            full(path, v)
    return check


GAIN = number(0.0, 1e12)
#: a joint row's model (eq. 2.74): a registered joint model and its parameters (the model checks their ranges)
_JOINT_PARAMS = {p: number() for e in JOINT_MODELS.entries for p in JOINT_MODELS.parameters(e.name)[0]}
SPRING = record({**_JOINT_PARAMS, "model": one_of(*JOINT_MODELS.names), "stiffness": GAIN, "damping": GAIN})
SCHEMA = record({
    "name": text, "urdf": text, "base_link": text, "description": text,
    "actuated_joints": names,
    "wheels": mapping_of(record({"radius": number(0.0, 10.0, "m", lo_open=True), "width": number(0.0, 10.0, "m"),
                                 "shape": one_of("cylinder", "torus"), "tube_radius": number(0.0, 10.0, "m")})),
    "tracks": mapping_of(record({"sprocket_radius": number(0.0, 10.0, "m", lo_open=True),
                                 "belt_points": number(0, 60), "upper_points": number(0, 60), "roller_arcs": flag,
                                 "width": number(0.0, 10.0, "m"),
                                 "rear": vector(2, number(-1e3, 1e3, "m")), "front": vector(2, number(-1e3, 1e3, "m")),
                                 "rear_radius": number(0.0, 10.0, "m", lo_open=True),
                                 "front_radius": number(0.0, 10.0, "m", lo_open=True)})),
    "joint_constraints": list_of(record({"name": text, "coeffs": mapping_of(number(-1e6, 1e6)),
                                         "value": number(-1e6, 1e6), "stiffness": GAIN, "damping": GAIN},
                                        required=("coeffs",))),
    "constraint_models": mapping_of(SPRING),
    "joint_springs": mapping_of(record({**_JOINT_PARAMS, "model": one_of(*JOINT_MODELS.names), "stiffness": GAIN,
                                        "damping": GAIN, "rest": number(-1e3, 1e3)})),
    "contact": model_or_record(CONTACT_MODELS.names, record({"model": one_of(*CONTACT_MODELS.names),
                                                             "params": mapping_of(contact_param)})),
    "actuators": record({"model": text}, open_=True),
    "controller": record({"type": text, "steering_efficiency": number(0.0, 1.0, lo_open=True)}, open_=True),
    "cg_offset": vector(2, number(-10.0, 10.0, "m")),
    "initial_pose": record({"xyz": vector(3, number(-1e6, 1e6, "m")), "rpy": vector(3, number(-10.0, 10.0, "rad"))}),
})


def validate(cfg: Any, source: str = "config") -> None:
    """Check a vehicle YAML (loaded) against :data:`SCHEMA`; raises VehicleConfigError prefixed by ``source``."""
    try:
        SCHEMA("", cfg)
    except VehicleConfigError as e:
        msg = str(e)
        msg = msg[1:] if msg.startswith(".") else "the file" + msg if msg.startswith(":") else msg
        raise VehicleConfigError(f"{source}: {msg}") from None
