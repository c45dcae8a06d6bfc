"""Anisotropic friction of the piecewise-linear model (μ_x ≠ μ_y, thesis eqs. C.7–C.8) in the dynamic model: a
parked vehicle across a slope steeper than atan μ_y slides sideways with every wheel's lateral force at its cap
μ_y f_z, while with μ_y above tan(slope) it only creeps (the slip-velocity law)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.contact_models import LinearContact
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Plane

SLOPE = math.radians(25.0)  # tan 25° = 0.466


@pytest.fixture(scope="module")
def zoe():
    return wmr.load_model("zoe")


def parked_across_the_slope(model, mu_x, mu_y, duration=2.0):
    base = DynamicsOptions.from_config(model).contact.params
    contact = LinearContact(kp=base["kp"], kd=base["kd"], c_slip=base["c_slip"], mu_x=mu_x, mu_y=mu_y)
    side = Plane(normal=(0.0, -math.sin(SLOPE), math.cos(SLOPE)))  # h = y tan 25°: Zoë (yaw 0) stands across it
    sim = Simulator(model, side, mode="dynamic", dt=0.04, dynamics=DynamicsOptions(contact=contact))
    return sim.run(duration, (0.0, 0.0), q0=sim.initial_state(xyz=(0.0, 0.0, 0.0), yaw=0.0), progress=False)


def test_low_lateral_friction_slides_sideways_at_mu_y(zoe):
    slide = parked_across_the_slope(zoe, mu_x=1.0, mu_y=0.3)
    grip = parked_across_the_slope(zoe, mu_x=1.0, mu_y=1.0)
    dy_slide = slide.q[0, 5] - slide.q[-1, 5]
    dy_grip = grip.q[0, 5] - grip.q[-1, 5]
    # sliding down the slope: along it the acceleration is g (sin α − μ_y cos α) = 1.48 m/s², ≥ 2 m in 2 s minus
    # the start; gripping, the slip-velocity law creeps at cm/s
    assert dy_slide > 1.5 and abs(dy_grip) < 0.2 and dy_slide > 10 * abs(dy_grip)
    f = slide.contact_force[-2]
    on = f[:, 2] > 1.0
    assert on.sum() == 4
    np.testing.assert_allclose(np.abs(f[on, 1]), 0.3 * f[on, 2], rtol=1e-9)  # every wheel at its lateral cap
    assert np.all(np.abs(f[on, 0]) <= 1.0 * f[on, 2])
    # the same μ on the other axis changes nothing laterally: μ_x = 0.3, μ_y = 1 grips like μ = 1
    other = parked_across_the_slope(zoe, mu_x=0.3, mu_y=1.0)
    assert abs(other.q[0, 5] - other.q[-1, 5]) < 0.2
