"""Ding et al.'s single-wheel trends (their Fig. 7): at steady state (F_N = the wheel load) the drawbar pull and
the resistance moment M_R — the drive torque a motor must supply — rise with slip, and a heavier wheel sinks
deeper and needs more torque at every slip (docs/ding_wheel.md)."""

import numpy as np
import pytest

from wmr_dynamics.contact_models import make_contact_model

R, B, LUG = 0.09, 0.11, 0.005  # El-Dorado II's wheel, m


def _steady(model, s, load):
    lo, hi = 0.0, R
    for _ in range(50):  # sinkage with F_N = load
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if model.slip_forces(s, 0.0, mid, mean_wheel_load=load)["f_z"] < load else (lo, mid)
    f = model.slip_forces(s, 0.0, lo, mean_wheel_load=load)
    return lo, float(f["f_x"]), float(f["M_R"]), float(f["f_z"])


@pytest.mark.parametrize("preset", ["flat", "slope"])
def test_drive_torque_grows_with_slip_and_load(preset):
    model = make_contact_model("ding", radius=R, width=B, lug_height=LUG, preset=preset)
    slips = np.linspace(0.0, 0.6, 7)
    by_load = {}
    for load in (73.6, 110.4):
        rows = np.array([_steady(model, s, load) for s in slips])
        assert np.allclose(rows[:, 3], load, rtol=1e-6)  # the steady state was found
        z, dp, mr = rows[:, 0], rows[:, 1], rows[:, 2]
        assert np.all(np.diff(mr) > 0), mr  # more slip, more torque
        assert np.all(np.diff(dp) > 0), dp  # more slip, more pull
        assert np.all(np.diff(z) > 0), z  # slip-sinkage
        assert dp[0] < 0 < dp[-1]  # rolling resistance without slip, traction with it
        by_load[load] = rows
    assert np.all(by_load[110.4][:, 2] > by_load[73.6][:, 2])  # a heavier wheel needs more torque
    assert np.all(by_load[110.4][:, 0] > by_load[73.6][:, 0])  # and sinks deeper
