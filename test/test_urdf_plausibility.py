"""Implausible URDF magnitudes (reliability issue, item 1): a 1e30 m wheel, a 1e30 kg·m² inertia, a negative
or enormous mass, a joint a kilometre away are ImplausibleModelError naming the file, the link or joint and
the accepted range — before any simulation fails to converge on them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wmr_dynamics.errors import ImplausibleModelError, UrdfError
from wmr_dynamics.urdf import load_model

ROOT = Path(__file__).resolve().parent.parent
ZOE = (ROOT / "urdf" / "zoe.urdf").read_text()
FL_CYL = '<cylinder radius="0.325" length="0.07"/>'
FL_INERTIA = '<inertia ixx="0.1327321875" ixy="0" ixz="0" iyy="0.261421875" iyz="0" izz="0.1327321875"/>'


def _first(text: str, old: str, new: str) -> str:
    """``text`` with the first ``old`` replaced (the first two for the wheel cylinder: visual and collision)."""
    assert old in text
    return text.replace(old, new, 2 if old == FL_CYL else 1)


@pytest.mark.parametrize("old, new, message", [
    (FL_CYL, '<cylinder radius="1e30" length="0.07"/>',
     "wheel link 'FL' (joint 'FL_joint'): <cylinder radius> must be in (0, 10] m, got 1e+30"),
    (FL_CYL, '<cylinder radius="0.325" length="1e30"/>', "<cylinder length> must be in [0, 10] m, got 1e+30"),
    (FL_CYL, '<cylinder radius="-0.3" length="0.07"/>', "<cylinder radius> must be in (0, 10] m, got -0.3"),
    ('<mass value="4.95"/>', '<mass value="-4.95"/>', "link 'FL' <inertial>: mass must be a finite number >= 0 kg"),
    ('<mass value="4.95"/>', '<mass value="1e30"/>', "link 'FL' <inertial>: mass 1e+30 kg is beyond the plausible"),
    (FL_INERTIA, FL_INERTIA.replace('iyy="0.261421875"', 'iyy="1e30"'),
     "link 'FL' <inertial>: <inertia> entry 1e+30 kg·m² is beyond the plausible 1e+07 kg·m²"),
    (FL_INERTIA, FL_INERTIA.replace('iyy="0.261421875"', 'iyy="-1"'), "<inertia> is not positive semi-definite"),
    ('<origin xyz="0 0.82 -0.119" rpy="0 0 0"/>', '<origin xyz="0 1e30 -0.119" rpy="0 0 0"/>',
     "joint 'FL_joint': <origin xyz> [0.0, 1e+30, -0.119] m must be finite and within ±1000 m"),
])
def test_implausible_magnitudes_name_the_link_or_joint(tmp_path, old, new, message):
    urdf = tmp_path / "zoe.urdf"
    urdf.write_text(_first(ZOE, old, new))
    cfg = yaml.safe_load((ROOT / "config" / "zoe.yaml").read_text())
    with pytest.raises(ImplausibleModelError) as e:
        load_model(urdf, cfg)
    assert str(e.value).startswith(str(urdf)) and message in str(e.value)
    assert isinstance(e.value, UrdfError)


def test_a_yaml_actuator_block_lacking_its_gain_names_the_yaml_file(tmp_path):
    cfg = yaml.safe_load((ROOT / "config" / "zoe.yaml").read_text())
    cfg["urdf"] = str(ROOT / "urdf" / "zoe.urdf")
    cfg["actuators"] = {"model": "pi", "pi": {"ki": 1.0}}
    path = tmp_path / "vehicle.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(UrdfError, match=f"{path}: actuators: pi: missing parameter\\(s\\) kp under 'actuators.pi' "
                                        "\\(required: kp; optional: ki, saturation, torque_limit\\)"):
        load_model(path)


def test_a_yaml_joint_constraint_outside_the_joint_limits_is_refused():
    """Zoë's steering joints are limited to ±0.6 rad: a constraint holding one at 2 rad is refused, at 0.3 rad
    accepted."""
    cfg = yaml.safe_load((ROOT / "config" / "zoe.yaml").read_text())
    cfg["joint_constraints"] = [{"name": "hold_s1", "coeffs": {"s1_joint": 2.0}, "value": 4.0}]
    with pytest.raises(ImplausibleModelError, match=r"config: joint constraint 'hold_s1' holds joint 's1_joint' at 2, "
                                                    r"outside its URDF limits \[-0.6, 0.6\]"):
        load_model(ROOT / "urdf" / "zoe.urdf", cfg)
    cfg["joint_constraints"][0]["value"] = 0.6
    model = load_model(ROOT / "urdf" / "zoe.urdf", cfg)
    assert any(c.name == "hold_s1" for c in model.joint_constraints)
