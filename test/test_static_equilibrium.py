"""Static equilibrium of every bundled vehicle (issue: dynamics item 9) with the piecewise-linear contact model.

At rest on flat ground and on a 10° slope, with ideal actuators holding zero joint rate, the normal forces
must carry m·g·cos θ (within 1 %) and the vehicle must not drift.  A viscous slip law (eq. C.5,
f = c·v) cannot hold a vehicle on a slope without slipping: it creeps at exactly v = m g sin θ / (n |c|),
which is checked against that closed form; with a stiff slip coefficient the creep falls below 1 mm in 10 s.
"""

import numpy as np
import pytest

from wmr_dynamics import bundled_vehicles, load_model
from wmr_dynamics.contact_models import LinearContact
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.kinematics import initialize_contact
from wmr_dynamics.model import G
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import Plane

DT, SETTLE, DURATION = 0.04, 4.0, 10.0


def settle(model, ground, contact, yaw=0.0):
    """Start with the wheels just touching (Δz = 0), let the tires compress for 4 s, then hold 10 s.

    Returns the simulation data after the last step and the body's x, y over the 10 s hold.
    """
    st = Stepper(model, ground, "dynamic", DT, dynamics=DynamicsOptions(contact=contact))
    d = st.make_data(initialize_contact(model, model.state(xyz=(0.0, 0.0, 2.0), rpy=(0, 0, yaw)), ground))
    u = np.zeros(len(model.actuated_joint_names))
    st.advance(d, int(SETTLE / DT), rates=u)
    xy = [d.q[4:6].copy()]
    for _ in range(int(DURATION / DT)):
        st.advance(d, rates=u)
        xy.append(d.q[4:6].copy())
    return d, np.array(xy), d.q


def vehicle_contact(model, c_slip_factor):
    kp = model.total_mass * G / (model.num_wheels * 0.02)  # VEHICLES.md "uniform" model
    return LinearContact(kp=kp, kd=kp / 20, c_slip=-c_slip_factor * kp, mu=1.0)


@pytest.mark.parametrize("name", bundled_vehicles())
def test_at_rest_on_flat_ground(name):
    model = load_model(name)
    r, xy, _ = settle(model, Plane(), vehicle_contact(model, 0.1))
    assert r.contact_force[:, 2].sum() == pytest.approx(model.total_mass * G, rel=0.01)
    assert np.linalg.norm(xy[-1] - xy[0]) < 1e-3


@pytest.mark.parametrize("name", bundled_vehicles())
def test_at_rest_on_a_10_degree_slope(name):
    model = load_model(name)
    theta = np.radians(10.0)
    ground = Plane(normal=(-np.sin(theta), 0.0, np.cos(theta)))  # rises along +x: the vehicle faces uphill
    r, xy, _ = settle(model, ground, vehicle_contact(model, 100.0))
    # normal forces along each contact normal (= the slope normal) carry the weight component
    assert r.contact_force[:, 2].sum() == pytest.approx(model.total_mass * G * np.cos(theta), rel=0.01)
    assert np.linalg.norm(xy[-1] - xy[0]) < 1e-3


@pytest.mark.parametrize("name", ["zoe", "landtamer"])
def test_viscous_slip_creeps_at_the_closed_form_speed(name):
    model = load_model(name)
    theta = np.radians(10.0)
    ground = Plane(normal=(-np.sin(theta), 0.0, np.cos(theta)))
    c = 0.1 * model.total_mass * G / (model.num_wheels * 0.02)  # |c_slip| per wheel, VEHICLES.md
    r, xy, q = settle(model, ground, vehicle_contact(model, 0.1))
    creep = np.linalg.norm(xy[-1] - xy[0]) / DURATION  # steady creep over the hold
    assert creep == pytest.approx(model.total_mass * G * np.sin(theta) / (model.num_wheels * c), rel=0.03)
    assert xy[-1, 0] < xy[0, 0]  # downhill
