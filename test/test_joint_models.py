"""Joint-constraint models (thesis eq. 2.74) and the model registries (issue 9, item 3).

The engine's joint rows take any registered model, or a Python one through a callback.  Oracles: closed-form
laws and their finite differences, and the static deflection of a sprung slider carrying its own weight,
``f(c) = −m g`` — linear, with end stops, and a cubic hardening spring written in Python.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from wmr_dynamics import Frame, JointSpring, Simulator, Wheel, WmrModel, forward_kinematics, load_model
from wmr_dynamics.actuators import ACTUATOR_MODELS, IdealActuator, PIActuator, TorqueSpeedActuator
from wmr_dynamics.contact_models import CONTACT_MODELS, LinearContact, make_contact_model
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.errors import ModelError, UrdfError, VehicleConfigError
from wmr_dynamics.joint_models import JOINT_MODELS, BumpStop, JointModel, SpringDamper
from wmr_dynamics.registry import PYTHON, RIGID, ModelKind, Registry
from wmr_dynamics.terrain import Plane

G = 9.81
SLIDER_MASS = 6.0


# ---- laws ------------------------------------------------------------------------------------------------------
def test_bump_stop_closed_form_and_derivatives():
    bs = BumpStop(stiffness=3000.0, damping=50.0, lower=-0.01, upper=0.02, stop_stiffness=3.0e4, stop_damping=400.0)
    c = np.array([0.0, 0.015, 0.03, -0.02, 0.025, -0.015])
    cd = np.array([0.1, -0.2, 0.05, -0.1, -2.0, 2.0])
    f, dc, dcd = bs.evaluate(c, cd)
    inner = -3000.0 * c - 50.0 * cd
    expect = inner.copy()
    expect[2] += -3.0e4 * (0.03 - 0.02) - 400.0 * 0.05  # on the upper stop, pushing back
    expect[3] += -3.0e4 * (-0.02 + 0.01) - 400.0 * -0.1  # on the lower stop
    # rows 4, 5: beyond a stop but leaving it fast: the stop's damping would pull, so the stop gives nothing
    assert -3.0e4 * (0.025 - 0.02) - 400.0 * -2.0 > 0 and -3.0e4 * (-0.015 + 0.01) - 400.0 * 2.0 < 0
    np.testing.assert_allclose(f, expect, rtol=1e-12)
    np.testing.assert_allclose(dc, [-3000.0, -3000.0, -3.3e4, -3.3e4, -3000.0, -3000.0])
    np.testing.assert_allclose(dcd, [-50.0, -50.0, -450.0, -450.0, -50.0, -50.0])
    h = 1e-8
    for k in (0, 1, 2, 3):  # away from the switches the derivatives are the finite differences
        fd_c = (bs.evaluate(c[k] + h, cd[k])[0] - bs.evaluate(c[k] - h, cd[k])[0]) / (2 * h)
        fd_cd = (bs.evaluate(c[k], cd[k] + h)[0] - bs.evaluate(c[k], cd[k] - h)[0]) / (2 * h)
        assert fd_c[0] == pytest.approx(dc[k], rel=1e-6) and fd_cd[0] == pytest.approx(dcd[k], rel=1e-6)


@pytest.mark.parametrize(("make", "match"), [
    (lambda: BumpStop(1.0, 0.0, lower=0.1, upper=-0.1, stop_stiffness=10.0), "lower 0.1 must be <= upper -0.1"),
    (lambda: BumpStop(1.0, 0.0, lower=-0.1, upper=0.1, stop_stiffness=0.0), "'stop_stiffness' must be > 0"),
    (lambda: SpringDamper([1.0, 2.0], 0.0).kernel_data(), "one model per joint row"),
])
def test_joint_model_bad_parameters(make, match):
    with pytest.raises(ModelError, match=match):
        make()


# ---- registries --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("registry", [CONTACT_MODELS, ACTUATOR_MODELS, JOINT_MODELS], ids=lambda r: r.family)
def test_every_registered_class_dispatches_to_its_own_kernel(registry):
    """Each entry's kernels are in the dispatch table, codes are 0, 1, ... and distinct."""
    codes = [c for c, _ in registry.kernels]
    assert codes == list(range(len(codes)))
    for entry in registry.entries:
        for kernel in entry.kernels:
            assert sum(k is kernel for _, k in registry.kernels) == 1, entry.name


def test_codes_of_instances():
    assert CONTACT_MODELS.code(LinearContact(kp=1e4)) != CONTACT_MODELS.code(make_contact_model("pacejka", kp=1e4))
    assert ACTUATOR_MODELS.code(IdealActuator()) == RIGID
    assert ACTUATOR_MODELS.code(PIActuator(kp=1.0)) != ACTUATOR_MODELS.code(TorqueSpeedActuator(1.0, 1.0))
    assert JOINT_MODELS.code(HardeningSpring(1.0, 1.0, 0.0)) == PYTHON

    class Foreign(SpringDamper):
        kernel = staticmethod(lambda c, c_dot, P: (0.0, 0.0, 0.0))

    with pytest.raises(ModelError, match="not in the registry"):
        JOINT_MODELS.code(Foreign(1.0, 0.0))


def test_registry_make_errors():
    with pytest.raises(ModelError, match="unknown joint model 'coil'; valid models: spring_damper, bump_stop"):
        JOINT_MODELS.make("coil")
    with pytest.raises(ModelError, match=r"unknown parameter\(s\) \['travel'\]"):
        JOINT_MODELS.make("bump_stop", stiffness=1.0, damping=0.0, travel=0.1)
    with pytest.raises(ModelError, match=r"missing required parameter\(s\) \['lower', 'upper', 'stop_stiffness'\]"):
        JOINT_MODELS.make("bump_stop", stiffness=1.0, damping=0.0)
    with pytest.raises(ValueError, match="duplicate model names"):
        Registry("x", (ModelKind("a", SpringDamper, ()), ModelKind("a", BumpStop, ())))


# ---- the engine's joint rows: static deflection of a sprung slider ----------------------------------------------
class HardeningSpring(JointModel):
    """A cubic hardening spring in Python: f = −k c − k3 c³ − d ċ (called back from the compiled step)."""

    def __init__(self, k: float, k3: float, d: float) -> None:
        self.k, self.k3, self.d = k, k3, d

    def evaluate(self, c, c_dot):
        c, c_dot = np.asarray(c, float), np.asarray(c_dot, float)
        return -self.k * c - self.k3 * c**3 - self.d * c_dot, -self.k - 3 * self.k3 * c**2, np.full(c.shape, -self.d)


def sprung_slider(spring: JointSpring) -> WmrModel:
    """A 30 kg body on four 1.5 kg wheels with a 6 kg slider on a vertical (PZ) joint above its centre."""
    inertia = ((0.1, 0.0, 0.0), (0.0, 0.1, 0.0), (0.0, 0.0, 0.1))
    frames = [Frame("body", mass=30.0, com=(0.0, 0.0, 0.05), inertia=((1.0, 0, 0), (0, 1.6, 0), (0, 0, 2.2)))]
    wheels = (("fl", 0.3, 0.25), ("fr", 0.3, -0.25), ("rl", -0.3, 0.25), ("rr", -0.3, -0.25))
    for n, x, y in wheels:
        frames.append(Frame(n, "body", "RY", actuated=True, xyz=(x, y, -0.05), mass=1.5,
                            inertia=((0.01, 0, 0), (0, 0.018, 0), (0, 0, 0.01))))
    frames.append(Frame("slider", "body", "PZ", xyz=(0.0, 0.0, 0.2), mass=SLIDER_MASS, inertia=inertia))
    return WmrModel(frames, [Wheel(n, 0.12, 0.06) for n, _, _ in wheels], joint_springs={"slider": spring},
                    name="sprung_slider")


def settled_deflection(spring: JointSpring, engine: str) -> float:
    model = sprung_slider(spring)
    contact = LinearContact.from_vehicle(model.total_mass, model.num_wheels)
    sim = Simulator(model, Plane(), mode="dynamic", dt=0.005, dynamics=DynamicsOptions(contact=contact),
                    engine=engine)
    r = sim.run(3.0, (0.0, 0.0), q0=model.state(xyz=(0.0, 0.0, 0.17)))
    c = r.q[:, -1] - spring.rest
    assert np.ptp(c[-100:]) < 1e-6, "the slider has not settled"
    return float(c[-1])


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_static_deflection_linear_and_bump_stop(engine):
    """At rest the joint row carries the slider's weight: f(c) = −m g (eq. 2.74 at equilibrium).  Linear:
    c = −m g / k.  With a lower stop at −1 cm: c = lower − (m g − k |lower|)/(k + k_stop)."""
    k, d, w = 3000.0, 250.0, SLIDER_MASS * G
    c_lin = settled_deflection(JointSpring(k, d, rest=0.01), engine)
    assert c_lin == pytest.approx(-w / k, rel=1e-3)
    stop = BumpStop(k, d, lower=-0.01, upper=0.01, stop_stiffness=3.0e4, stop_damping=100.0)
    c_stop = settled_deflection(JointSpring(k, d, rest=0.01, model=stop), engine)
    assert c_stop == pytest.approx(-0.01 - (w - k * 0.01) / (k + 3.0e4), rel=1e-3)


def test_static_deflection_python_joint_model():
    """A Python law on the compiled engine: k c + k3 c³ = −m g, the real root of the cubic."""
    k, k3 = 1500.0, 4.0e6
    c = settled_deflection(JointSpring(k, 250.0, model=HardeningSpring(k, k3, 250.0)), "compiled")
    roots = np.roots([k3, 0.0, k, SLIDER_MASS * G])
    expect = float(roots[np.abs(roots.imag) < 1e-9].real[0])
    assert c == pytest.approx(expect, rel=1e-3)
    assert abs(expect) < SLIDER_MASS * G / k  # the cubic term mattered


def test_python_joint_model_bad_output_is_named():
    class Broken(JointModel):
        def evaluate(self, c, c_dot):
            return np.zeros(2), np.zeros(2), np.zeros(2)

    with pytest.raises(ModelError, match=r"joint model Broken.evaluate: output 0 has 2 entries for one row"):
        settled_deflection(JointSpring(1000.0, 100.0, model=Broken()), "compiled")


# ---- vehicle YAML ------------------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]


def _zoe_with(springs: dict):  # noqa: ANN202
    cfg = yaml.safe_load((ROOT / "config" / "zoe.yaml").read_text())
    cfg["joint_springs"] = springs
    return load_model(ROOT / "urdf" / "zoe.urdf", config=cfg)


def test_yaml_joint_spring_models():
    m = _zoe_with({"r2_joint": {"model": "bump_stop", "stiffness": 2000.0, "damping": 80.0, "rest": 0.0,
                                "lower": -0.1, "upper": 0.1, "stop_stiffness": 5.0e4}})
    s = m.joint_springs["r2_joint"]
    assert isinstance(s.model, BumpStop) and s.stiffness == 2000.0 and s.damping == 80.0
    assert float(s.model.stop_stiffness[0]) == 5.0e4 and float(s.model.lower[0]) == -0.1
    assert _zoe_with({"r2_joint": {"stiffness": 2000.0}}).joint_springs["r2_joint"].model is None
    with pytest.raises((UrdfError, VehicleConfigError), match="coil"):
        _zoe_with({"r2_joint": {"model": "coil", "stiffness": 1.0}})
    with pytest.raises(UrdfError, match=r"unknown key\(s\) \['lower'\] for the spring_damper model"):
        _zoe_with({"r2_joint": {"stiffness": 1.0, "lower": -0.1}})
    with pytest.raises(UrdfError, match="missing required parameter"):
        _zoe_with({"r2_joint": {"model": "bump_stop", "stiffness": 1.0}})


def test_stiff_ode_uses_the_joint_model():
    """The stiff-ODE baseline evaluates the same joint models (no linear copy): its settled deflection of the
    bump-stopped slider is the closed form too."""
    from wmr_dynamics.dynamics.stiff_ode import simulate_stiff_ode

    k, w = 3000.0, SLIDER_MASS * G
    stop = BumpStop(k, 250.0, lower=-0.01, upper=0.01, stop_stiffness=3.0e4)
    model = sprung_slider(JointSpring(k, 250.0, model=stop))
    contact = LinearContact.from_vehicle(model.total_mass, model.num_wheels)
    r = simulate_stiff_ode(model, Plane(), contact, lambda t, q: np.zeros(4), model.state(xyz=(0.0, 0.0, 0.17)),
                           duration=2.0, kp=50.0)
    assert r.q[-1, -1] == pytest.approx(-0.01 - (w - k * 0.01) / (k + 3.0e4), rel=1e-3)


def test_yaml_cg_offset_moves_the_body_centre_of_mass():
    """``cg_offset: [dx, dy]`` (what wmr-calibrate --cg-offset writes) moves the body link's centre of mass, and
    so the whole vehicle's by m_body/m_total of it."""
    cfg = yaml.safe_load((ROOT / "config" / "zoe.yaml").read_text())
    base = load_model(ROOT / "urdf" / "zoe.urdf", config=cfg)
    moved = load_model(ROOT / "urdf" / "zoe.urdf", config={**cfg, "cg_offset": [0.1, -0.05]})
    np.testing.assert_allclose(np.subtract(moved.frames[0].com, base.frames[0].com), [0.1, -0.05, 0.0], atol=1e-12)

    def vehicle_com(m: WmrModel) -> np.ndarray:
        from wmr_dynamics.kinematics.enhanced import composite_inertia

        return composite_inertia(m, forward_kinematics(m, m.neutral_state()))[1]

    shift = vehicle_com(moved) - vehicle_com(base)
    np.testing.assert_allclose(shift, np.array([0.1, -0.05, 0.0]) * base.mass[0] / base.total_mass, atol=1e-9)
    with pytest.raises(VehicleConfigError, match="cg_offset"):
        load_model(ROOT / "urdf" / "zoe.urdf", config={**cfg, "cg_offset": [0.1]})
