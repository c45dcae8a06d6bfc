"""An external wrench on the body (``Stepper.set_external_wrench``: the generalized force τ of eq. 2.82).

Oracle: Newton's second law for the whole vehicle in free flight.  LandTamer held rigid by its ideal actuators
(wheel rates 0) 2 m above the ground is one rigid body of mass m: a force F through its centre of mass
accelerates it at F/m on top of gravity and turns it not at all.
"""

import numpy as np
import pytest

from wmr_dynamics import load_model
from wmr_dynamics.errors import ArgumentError, CommandError
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.kinematics.enhanced import composite_inertia
from wmr_dynamics.model import G
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import Plane

DT = 0.01


def _flying(name="landtamer"):
    model = load_model(name)
    st = Stepper(model, Plane(), "dynamic", DT)
    d = st.make_data(model.state(xyz=(0.0, 0.0, 2.0)))
    return model, st, d


def test_a_force_through_the_centre_of_mass_accelerates_the_vehicle_at_f_over_m():
    model, st, d = _flying()
    m, com, _ = composite_inertia(model, forward_kinematics(model, d.q))
    F = np.array([30.0, -12.0, 5.0])  # N, body frame (level body: also world)
    st.set_external_wrench(d, np.r_[np.cross(com, F), F])  # about the body origin: the force acts at the com
    n = 20
    st.advance(d, n, rates=np.zeros(len(model.actuated_joint_names)))
    t = n * DT
    assert np.all(d.dz > 0.5)  # still in the air: no contact force
    v_expected = F / m * t + np.array([0.0, 0.0, -G * t])
    np.testing.assert_allclose(d.qvel[3:6], v_expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(d.qvel[:3], 0.0, atol=1e-9)  # no rotation
    np.testing.assert_allclose(d.q[:4], [0.0, 0.0, 0.0, 1.0], atol=1e-9)


def test_the_wrench_stays_until_removed_and_reset_drops_it():
    model, st, d = _flying()
    rates = np.zeros(len(model.actuated_joint_names))
    st.set_external_wrench(d, [0, 0, 0, 0, 0, model.total_mass * G])  # cancels gravity (at the origin: it may turn)
    st.advance(d, 10, rates=rates)
    free = st.make_data(model.state(xyz=(0.0, 0.0, 2.0)))
    st.advance(free, 10, rates=rates)
    assert free.qvel[5] == pytest.approx(-G * 10 * DT, rel=1e-9)
    assert abs(d.q[6] - 2.0) < 0.1 * abs(free.q[6] - 2.0)  # held up, nearly
    st.set_external_wrench(d, None)
    z = d.qvel.copy()
    st.advance(d, 1, rates=rates)
    assert d.qvel[5] - z[5] == pytest.approx(-G * DT, abs=0.2 * G * DT)  # falling again
    st.set_external_wrench(d, [0, 0, 0, 1.0, 0, 0])
    st.reset(d)
    assert not d.workspace.tau_ext.any()


def test_bad_wrenches_are_named():
    model, st, d = _flying()
    with pytest.raises(CommandError, match="wrench"):
        st.set_external_wrench(d, [0, 0, 0, np.nan, 0, 0])
    with pytest.raises(CommandError, match="wrench"):
        st.set_external_wrench(d, [1.0, 2.0])
    kin = Stepper(model, Plane(), "kinematic", DT)
    with pytest.raises(ArgumentError, match="dynamic model"):
        kin.set_external_wrench(kin.make_data(), np.zeros(6))
