"""Wheel–terrain contact (thesis §2.2.1, eqs. 2.8–2.9) against closed forms on planes, ramps and steps."""

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from wmr_dynamics import Frame, Wheel, WmrModel, forward_kinematics, load_model
from wmr_dynamics.collision import drop_onto_terrain, wheel_contacts
from wmr_dynamics.errors import TerrainError
from wmr_dynamics.terrain import Box, Composite, Plane, Ramp, Steps, Terrain

DATA = Path(__file__).parent / "data"


def one_wheel(radius=0.3, shape="cylinder", tube=0.0):
    """A body carrying one wheel at its origin (wheel frame = body frame at zero wheel angle)."""
    inertia = ((0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1))
    frames = [Frame("body", mass=10.0, inertia=inertia), Frame("w", "body", "RY", mass=1.0, inertia=inertia)]
    return WmrModel(frames, [Wheel("w", radius, 0.1, shape, tube)])


def contacts_at(model, terrain, xyz, rpy, spin=0.0):
    T = forward_kinematics(model, model.state(xyz=xyz, rpy=rpy, joints={"w": spin}))
    return wheel_contacts(model, T, terrain), T[1]


def closed_form_plane(T_w, n, p0, radius, tube=0.0):
    """Lowest point of a (torus) wheel over a plane: δ* = atan2(x̂·n, ẑ·n), Δz = signed distance (eq. 2.8)."""
    x, z, c = T_w[:3, 0], T_w[:3, 2], T_w[:3, 3]
    delta = np.arctan2(x @ n, z @ n)
    centre_line = c - (radius - tube) * (np.sin(delta) * x + np.cos(delta) * z)
    point = centre_line - tube * n
    return (point - p0) @ n, delta, point


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape, tube", [("cylinder", 0.0), ("torus", 0.08)])
def test_tilted_plane_matches_closed_form(seed, shape, tube):
    rng = np.random.default_rng(seed)
    n = np.r_[rng.uniform(-0.4, 0.4, 2), 1.0]
    n /= np.linalg.norm(n)
    p0 = np.array([0.2, -0.1, 0.05])
    ground = Plane(normal=n, point=p0)
    model = one_wheel(0.3, shape, tube)
    spin = rng.uniform(-3, 3)
    c, T_w = contacts_at(model, ground, xyz=(1.0, 0.5, 0.3), rpy=rng.uniform(-0.3, 0.3, 3), spin=spin)
    dz, delta, point = closed_form_plane(T_w, n, p0, 0.3, tube)
    assert c.dz[0] == pytest.approx(dz, abs=1e-9)
    hub_delta = delta + spin  # δ is reported in the hub frame: the wheel frame is the hub turned by spin
    assert np.cos(c.angle[0] - hub_delta) == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(c.points[0], point, atol=1e-4)
    np.testing.assert_allclose(c.normals[0], n, atol=1e-12)
    # contact frame: orthonormal, right-handed, x̂_c ⟂ wheel axis (longitudinal), ẑ_c = normal
    R = c.frames[0]
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0)
    assert abs(R[:, 0] @ T_w[:3, 1]) < 1e-12
    if shape == "torus":  # the contact point slides across the tread by −ρ (n̂·ŷ_w)
        assert c.lateral[0] == pytest.approx(-tube * (n @ T_w[:3, 1]), abs=1e-6)
    else:
        assert c.lateral[0] == pytest.approx(0.0, abs=1e-12)


def test_flat_ground_contact_frame_is_forward_left_up():
    c, _ = contacts_at(one_wheel(0.3), Plane(), xyz=(0, 0, 0.25), rpy=(0, 0, 0.4), spin=1.3)
    assert c.dz[0] == pytest.approx(-0.05, abs=1e-9)
    assert c.angle[0] == pytest.approx(0.0, abs=1e-3)
    yaw = Rotation.from_euler("z", 0.4).as_matrix()
    np.testing.assert_allclose(c.frames[0], yaw, atol=1e-9)


def test_ramp_incline_normal_and_dz():
    a = np.radians(20.0)
    ramp = Ramp(x_start=0.0, height=1.5, slope_deg=20.0, top_length=5.0)
    model = one_wheel(0.3)
    x = 2.0  # on the incline (which ends at 1.5 / tan 20° = 4.12 m)
    centre = np.array([x, 0.0, x * np.tan(a) + 0.3 / np.cos(a) + 0.01])
    c, T_w = contacts_at(model, ramp, xyz=centre, rpy=(0, -a, 0))  # pitched nose-up with the slope
    n = np.array([-np.sin(a), 0.0, np.cos(a)])
    np.testing.assert_allclose(c.normals[0], n, atol=1e-12)
    # the wheel plane contains n, so the closest rim point is at distance R from the centre along −n
    assert c.dz[0] == pytest.approx(0.01 * np.cos(a), abs=1e-6)
    assert c.angle[0] == pytest.approx(0.0, abs=2e-3)  # wheel pitched with the slope: contact straight below


def test_step_edge_in_front_of_the_wheel():
    R, d, H, zc = 0.3, 0.2, 0.15, 0.31
    step = Steps(x_start=0.0, step_length=5.0, step_height=H, n_steps=1)
    c, _ = contacts_at(one_wheel(R), step, xyz=(-d, 0.0, zc), rpy=(0, 0, 0))
    delta_edge = -np.arcsin(d / R)  # rim point above the step's edge (eq. 2.9: x = x_c − R sin δ)
    assert c.dz[0] == pytest.approx(zc - R * np.cos(delta_edge) - H, abs=5e-4)
    assert c.angle[0] == pytest.approx(delta_edge, abs=2e-3)
    assert c.points[0, 0] == pytest.approx(0.0, abs=2e-3)


@pytest.mark.parametrize("terrain", [Box(center=(2.5, 0.0), size=(5.0, 4.0), height=0.15),
                                     Composite([Plane(), Box(center=(2.5, 0.0), size=(5.0, 4.0), height=0.15)])],
                         ids=["box", "composite"])
def test_box_edge_in_front_of_the_wheel_is_exact(terrain):
    """Terrains without a compiled kind are queried exactly (called back), not rasterized: the rim point above
    a box's vertical edge, as for Steps."""
    R, d, H, zc = 0.3, 0.2, 0.15, 0.31
    c, _ = contacts_at(one_wheel(R), terrain, xyz=(-d, 0.0, zc), rpy=(0, 0, 0))
    delta_edge = -np.arcsin(d / R)
    assert c.dz[0] == pytest.approx(zc - R * np.cos(delta_edge) - H, abs=5e-4)
    assert c.angle[0] == pytest.approx(delta_edge, abs=2e-3)
    assert c.points[0, 0] == pytest.approx(0.0, abs=2e-3)


class _TiltedPlane(Terrain):
    """A user terrain written in Python: z = a x + b y + c (queried by the contact search through callbacks)."""

    def __init__(self, a, b, c, nan_beyond=np.inf, bad_shape=False):
        self.a, self.b, self.c, self.nan_beyond, self.bad_shape = a, b, c, nan_beyond, bad_shape

    def height(self, x, y):
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        return np.where(x > self.nan_beyond, np.nan, self.a * x + self.b * y + self.c)

    def normal(self, x, y):
        x, _ = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        n = np.array([-self.a, -self.b, 1.0]) / np.sqrt(1 + self.a**2 + self.b**2)
        return np.zeros(2) if self.bad_shape else np.broadcast_to(n, x.shape + (3,)).copy()


@pytest.mark.parametrize("shape, tube", [("cylinder", 0.0), ("torus", 0.08)])
def test_a_python_terrain_gives_the_closed_form_contact(shape, tube):
    ground = _TiltedPlane(0.2, -0.1, 0.05)
    n = np.array([-0.2, 0.1, 1.0]) / np.sqrt(1.05)
    c, T_w = contacts_at(one_wheel(0.3, shape, tube), ground, xyz=(1.0, 0.5, 0.3), rpy=(0.1, -0.2, 0.3), spin=0.5)
    dz, delta, point = closed_form_plane(T_w, n, np.array([0.0, 0.0, 0.05]), 0.3, tube)
    assert c.dz[0] == pytest.approx(dz, abs=1e-9)
    assert np.cos(c.angle[0] - (delta + 0.5)) == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(c.points[0], point, atol=1e-4)
    np.testing.assert_allclose(c.normals[0], n, atol=1e-12)


def test_a_python_terrain_that_answers_nan_or_the_wrong_shape_is_named():
    model = load_model(DATA / "skid4.urdf")
    T = forward_kinematics(model, model.state(xyz=(0.0, 0.0, 0.3)))
    front = int(np.argmax(T[model.wheel_frame, 0, 3]))  # NaN ahead of the rear wheels only
    with pytest.raises(TerrainError, match=model.wheel_names[front]):
        wheel_contacts(model, T, _TiltedPlane(0.0, 0.0, 0.0, nan_beyond=T[model.wheel_frame, 0, 3].min() + 0.35))
    with pytest.raises(TerrainError, match="_TiltedPlane.height_normal.*sizes 1 and 2"):
        wheel_contacts(model, T, _TiltedPlane(0.0, 0.0, 0.0, bad_shape=True))


def test_wheel_lifted_off_has_positive_dz():
    c, _ = contacts_at(one_wheel(0.3), Plane(), xyz=(0, 0, 0.42), rpy=(0.1, 0, 0))
    assert c.dz[0] > 0 and not c.in_contact()[0]


def test_every_wheel_of_a_vehicle_on_flat_ground():
    model = load_model(DATA / "rocker.urdf")
    q = drop_onto_terrain(model, model.state(xyz=(0, 0, 1.0)), Plane())
    c = wheel_contacts(model, forward_kinematics(model, q), Plane())
    np.testing.assert_allclose(c.dz, 0.0, atol=1e-9)  # all four wheels at the same height: all touch
    assert q[6] == pytest.approx(0.1 + 0.06)  # wheels 0.1 m below the body, radius 0.06 m
    np.testing.assert_allclose(c.points[:, 2], 0.0, atol=1e-9)


def test_drop_onto_tilted_terrain_touches_with_lowest_wheel():
    model = load_model(DATA / "skid4.urdf")
    ground = Plane(normal=(0.1, -0.2, 1.0), point=(0, 0, 0.3))
    q = drop_onto_terrain(model, model.state(xyz=(0.5, 0.2, 2.0), rpy=(0, 0, 0.3)), ground, clearance=0.002)
    dz = wheel_contacts(model, forward_kinematics(model, q), ground).dz
    assert dz.min() == pytest.approx(0.002, abs=1e-8)
    assert np.all(dz >= 0.002 - 1e-8)
