"""The compiled kinematic path (stabilized DAE, Euler) against the Python Simulator it compiles."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import zoe_rough as zoe  # noqa: E402
from shared_paths import TERRAINS  # noqa: E402

import wmr_dynamics as wmr  # noqa: E402
from wmr_dynamics.collision import wheel_contacts  # noqa: E402
from wmr_dynamics.compiled.collision import wheel_contacts_kernel  # noqa: E402
from wmr_dynamics.compiled.data import model_data  # noqa: E402
from wmr_dynamics.compiled.terrain import compile_terrain, height_normal  # noqa: E402
from wmr_dynamics.controllers import BodyVelocityController  # noqa: E402
from wmr_dynamics.errors import ModelError  # noqa: E402
from wmr_dynamics.kinematics import forward_kinematics  # noqa: E402
from wmr_dynamics.simulate import Simulator  # noqa: E402
from wmr_dynamics.terrain import HeightGrid, Plane, Ramp, gaussian_rough_terrain  # noqa: E402


def both(model, terrain, duration, command, **kw):
    out = []
    for engine in ("python", "compiled"):
        sim = Simulator(model, terrain, mode="kinematic", engine=engine, **kw)
        assert sim.engine_used == engine
        out.append(sim.run(duration, command, progress=False))
    return out


def assert_same(py, cc, atol=1e-8):
    np.testing.assert_allclose(cc.q, py.q, atol=atol)
    np.testing.assert_allclose(cc.qvel, py.qvel, atol=atol * 10)
    np.testing.assert_allclose(cc.dz, py.dz, atol=atol)
    np.testing.assert_allclose(cc.contact_points, py.contact_points, atol=atol)
    np.testing.assert_allclose(cc.contact_speed, py.contact_speed, atol=1e-7)
    np.testing.assert_allclose(cc.residual, py.residual, atol=1e-7)


@pytest.mark.parametrize("name", sorted(wmr.bundled_vehicles()))
def test_every_bundled_vehicle_matches_python_on_rough_ground(name):
    model = wmr.load_model(name)
    terrain = gaussian_rough_terrain(rms=0.04, corr_len=0.4, bounds=(-3, 8, -4, 4), seed=7)
    py, cc = both(model, terrain, 2.0, lambda t: (0.5, 0.3 if t > 1.0 else 0.0), dt=0.04)
    assert_same(py, cc)
    assert np.all(np.isnan(cc.rollover_margin))  # not computed on the compiled path (documented)


def test_zoe_benchmark_run_matches_python():
    model = zoe.zoe_model()
    terrain = zoe.load_terrain(2, TERRAINS)
    ctrl = BodyVelocityController(model, "naive")
    py, cc = both(model, terrain, 10.0, (0.5, 0.0), dt=0.04, controller=ctrl)
    assert_same(py, cc)
    assert cc.summary()["distance_m"] == pytest.approx(py.summary()["distance_m"], abs=1e-9)


def test_joint_limits_are_hard_stops_on_both_paths():
    """The PVC tricycle's camber joints run into their ±0.35 rad stops on steep rough ground."""
    model = wmr.load_model("pvc_tricycle")
    terrain = gaussian_rough_terrain(rms=0.08, corr_len=0.3, bounds=(-3, 8, -4, 4), seed=3)
    py, cc = both(model, terrain, 3.0, (0.5, 0.0), dt=0.04)
    assert_same(py, cc, atol=1e-7)
    camber = [model.joint_index(j) for j in ("pvc2_joint", "pvc3_joint")]
    theta = cc.q[:, 7:][:, camber]
    assert theta.max() > 0.34  # a stop was reached ...
    # ... and held: the active set pulls back at rate σ·(limit − θ), so a step can overshoot by its motion
    assert np.all(np.abs(theta) <= 0.35 + 0.05)


def test_terrain_queries_and_contacts_match_python():
    terrain = zoe.load_terrain(1, TERRAINS)
    td = compile_terrain(terrain)
    rng = np.random.default_rng(0)
    xs = np.r_[rng.uniform(-8, 16, 200), terrain.x_min, terrain.x_min + 3 * terrain.dx]  # outside + on edges
    ys = np.r_[rng.uniform(-7, 7, 200), terrain.y_min, terrain.y_min + 5 * terrain.dy]
    h, n = terrain.height_normal(xs, ys)
    got = np.array([height_normal(td.kind, td.params, td.grid, x, y) for x, y in zip(xs, ys, strict=True)])
    np.testing.assert_allclose(got[:, 0], h, atol=1e-12)
    np.testing.assert_allclose(got[:, 1:], n, atol=1e-12)
    plane = Plane(normal=(0.1, -0.2, 1.0), point=(1.0, 2.0, 0.3))
    tp = compile_terrain(plane)
    np.testing.assert_allclose(height_normal(tp.kind, tp.params, tp.grid, 0.4, -1.0)[0], plane.height(0.4, -1.0),
                               atol=1e-12)
    for name in ("pvc_tricycle", "rocky7"):  # torus and cylinder wheels
        model = wmr.load_model(name)
        md = model_data(model)
        nw = model.num_wheels
        for k in range(3):
            q = model.state(xyz=(rng.uniform(0, 4), rng.uniform(-2, 2), 0.3), rpy=rng.normal(0, 0.2, 3))
            q[7:] = rng.normal(0, 0.1, model.num_joints)
            T = forward_kinematics(model, q)
            ref = wheel_contacts(model, T, terrain)
            out = [np.zeros((nw, 3)), np.zeros((nw, 3, 3)), np.zeros(nw), np.zeros(nw), np.zeros(nw)]
            assert wheel_contacts_kernel(md, td, T, 36, *out) == 0
            for a, b in zip(out, (ref.points, ref.frames, ref.dz, ref.angle, ref.lateral), strict=True):
                np.testing.assert_allclose(a, b, atol=1e-10)


def test_rasterized_ramp_matches_the_analytic_ramp_away_from_its_edges():
    ramp = Ramp(x_start=1.0, height=0.5, slope_deg=15.0)
    td = compile_terrain(ramp)
    for x in (0.3, 1.5, 2.2):
        got = height_normal(td.kind, td.params, td.grid, x, 0.3)
        assert got[0] == pytest.approx(float(ramp.height(x, 0.3)), abs=1e-9)
        np.testing.assert_allclose(got[1:], ramp.normal(x, 0.3), atol=1e-9)


def test_compiled_engine_refuses_what_it_cannot_run_and_bad_commands():
    model = wmr.load_model("rocky7")
    flat = Plane()
    assert Simulator(model, flat, mode="enhanced").engine_used == "python"
    assert Simulator(model, flat, mode="kinematic", integrator="rk4").engine_used == "python"
    with pytest.raises(ModelError, match="engine 'compiled' runs the kinematic mode"):
        Simulator(model, flat, mode="kinematic", integrator="rk4", engine="compiled")
    sim = Simulator(model, flat, mode="kinematic", engine="compiled")
    with pytest.raises(ModelError, match="command at t=0.12 s is not finite"):
        sim.run(0.4, lambda t: (0.2, np.inf if t > 0.1 else 0.0), progress=False)


def test_flat_ground_straight_driving_has_no_slip_on_the_compiled_path():
    """Closed form: on flat ground a straight command gives zero contact-point speed, distance v·t."""
    model = wmr.load_model("landtamer")
    sim = Simulator(model, HeightGrid(-5, -5, 0.5, 0.5, np.zeros((41, 41))), mode="kinematic", engine="compiled")
    r = sim.run(4.0, (0.7, 0.0), progress=False)
    assert np.abs(r.contact_speed[:-1]).max() < 1e-9
    assert r.summary()["distance_m"] == pytest.approx(0.7 * 4.0, rel=1e-6)
