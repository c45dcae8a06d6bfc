"""The vehicle YAML is checked once, at the boundary: wrong types and ranges are errors naming the key path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from wmr_dynamics.errors import UrdfError, WmrError
from wmr_dynamics.urdf import bundled_vehicles, load_model
from wmr_dynamics.vehicle_schema import VehicleConfigError

ROOT = Path(__file__).resolve().parent.parent
ZOE_URDF = ROOT / "urdf" / "zoe.urdf"


def _zoe_cfg() -> dict:
    return yaml.safe_load((ROOT / "config" / "zoe.yaml").read_text())


@pytest.mark.parametrize("change, message", [
    ({"wheels": {"FL_joint": {"radius": "big"}}}, "wheels.FL_joint.radius: expected a number in (0, 10] m, got 'big'"),
    ({"wheels": {"FL_joint": {"radius": 0.0}}}, "wheels.FL_joint.radius: expected a number in (0, 10] m, got 0.0"),
    ({"wheels": {"FL_joint": {"radius": 0.3, "colour": "red"}}}, "wheels.FL_joint.colour: unknown key"),
    ({"wheels": {"FL_joint": {"shape": "square"}}}, "wheels.FL_joint.shape: expected one of cylinder, torus"),
    ({"initial_pose": {"xyz": [1, 2]}}, "initial_pose.xyz: expected a list of 3 numbers, got [1, 2]"),
    ({"initial_pose": {"xyz": [1, 2, float("inf")]}}, "initial_pose.xyz[2]: expected a number in [-1e+06, 1e+06] m"),
    ({"initial_pose": {"rpy": [0, True, 0]}}, "initial_pose.rpy[1]: expected a number"),
    ({"actuated_joints": ["FL_joint", "FL_joint"]}, "actuated_joints: expected distinct joint names"),
    ({"actuated_joints": "FL_joint"}, "actuated_joints: expected a non-empty list of joint names"),
    ({"contact": {"model": "linear", "params": {"kp": float("nan")}}}, "contact.params.kp: expected a finite number"),
    ({"contact": {"model": "magic"}}, "contact.model: expected one of linear, pacejka, ishigami, ding"),
    ({"joint_springs": {"FL_joint": {"stiffness": -5.0}}}, "joint_springs.FL_joint.stiffness: expected a number in [0"),
    ({"joint_constraints": [{"value": 0.0}]}, "joint_constraints[0]: key 'coeffs' is missing"),
    ({"name": ""}, "name: expected a non-empty string"),
    ({"controller": "zoe"}, "controller: expected a mapping of keys, got 'zoe'"),
])
def test_bad_values_name_their_key_path(change, message):
    cfg = {**_zoe_cfg(), **change}
    with pytest.raises(VehicleConfigError) as e:
        load_model(ZOE_URDF, cfg)
    assert message in str(e.value)
    assert isinstance(e.value, UrdfError) and isinstance(e.value, WmrError)


def test_a_yaml_file_error_names_the_file(tmp_path):
    cfg = _zoe_cfg()
    cfg["urdf"] = str(ZOE_URDF)
    cfg["wheels"] = {"FL_joint": {"radius": "big"}}
    path = tmp_path / "vehicle.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(VehicleConfigError, match=f"{path}: wheels.FL_joint.radius"):
        load_model(path)


def test_every_bundled_vehicle_passes_and_config_must_be_a_path_or_a_mapping():
    for name in bundled_vehicles():
        load_model(name)
    with pytest.raises(UrdfError, match="config: expected a vehicle YAML path or a dict"):
        load_model("zoe", config=[1, 2])
    with pytest.raises(UrdfError, match="name_or_path: expected a vehicle name or a path"):
        load_model(3.5)


def test_urdf_bytes_are_decoded_as_the_xml_declares_and_garbage_is_named(tmp_path):
    text = ZOE_URDF.read_text()
    if text.startswith("<?xml"):
        text = text.split("?>", 1)[1]
    utf16 = tmp_path / "zoe16.urdf"
    utf16.write_bytes(('<?xml version="1.0" encoding="UTF-16"?>' + text).encode("utf-16"))
    m = load_model(utf16, ROOT / "config" / "zoe.yaml")
    assert m.num_wheels == 4 and m.total_mass == pytest.approx(load_model("zoe").total_mass)
    garbage = tmp_path / "garbage.urdf"
    garbage.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(UrdfError, match=f"{garbage}: malformed XML"):
        load_model(garbage, ROOT / "config" / "zoe.yaml")


@pytest.mark.parametrize("tag", ["link", "joint"])
def test_duplicate_link_or_joint_names_are_refused(tmp_path, tag):
    text = ZOE_URDF.read_text()
    first = re.search(rf"<{tag} name=\"([^\"]+)\"", text)
    second = re.search(rf"<{tag} name=\"([^\"]+)\"", text[first.end():])
    dup = text[:first.end() + second.start()] + text[first.end() + second.start():].replace(
        f'<{tag} name="{second.group(1)}"', f'<{tag} name="{first.group(1)}"', 1)
    path = tmp_path / "dup.urdf"
    path.write_text(dup)
    with pytest.raises(UrdfError, match=f"two <{tag}> elements are named '{first.group(1)}'"):
        load_model(path, ROOT / "config" / "zoe.yaml")
