"""Tracked vehicles (Pecka et al.'s Contact Surface Motion): model description, belt Jacobians, motion.

Oracles: the wheel approximation (an independent code path — Alg. 2's revolute column of a wheel at the
same circle gives the same contact-point velocity as the belt column when the sprocket radius equals the
roller radius), finite differences of points fixed to the outline, and closed forms (speed × time).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import wmr_dynamics as wd
from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.errors import ModelError, UrdfError
from wmr_dynamics.kinematics.fk import forward_kinematics
from wmr_dynamics.kinematics.jacobians import wheel_jacobians
from wmr_dynamics.kinematics.state import euler_step
from wmr_dynamics.model import Track, track_elements
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.spatial import quat_to_rpy
from wmr_dynamics.terrain import Box, Plane
from wmr_dynamics.tracks import tracks, wheel_approximation

R_S = 0.127  # Talon sprocket and roller radius, m (VEHICLES.md: 5 in)


@pytest.fixture(scope="module")
def talon():
    return wd.load_model("talon")


def test_talon_track_geometry_comes_from_the_collision_box(talon):
    info = tracks(talon)
    assert [t.name for t in info] == ["left_track", "right_track"]
    length = 34 * 0.0254  # belt length overall, m
    for t in info:
        assert t.sprocket_radius == pytest.approx(R_S)
        assert t.rear == pytest.approx((-(length / 2 - R_S), 0.0))
        assert t.front == pytest.approx((length / 2 - R_S, 0.0))
        assert len(t.elements) == 5  # rear arc, 3 belt points, front arc
    assert list(talon.wheel_kind[:5]) == [1, 2, 2, 2, 1]
    # flat lower run sampled evenly: 24 in between the roller centres, 4 gaps
    assert np.diff(talon.wheel_centre[:5, 0]) == pytest.approx(np.full(4, 24 * 0.0254 / 4))


def test_bad_track_descriptions_are_refused_with_the_reason():
    good = dict(frame="t", sprocket_radius=0.1, rear=(-0.3, 0.0), front=(0.3, 0.0), rear_radius=0.1,
                front_radius=0.1)
    assert len(track_elements(Track(**good, belt_points=0))) == 2
    with pytest.raises(ModelError, match="front roller .* must be ahead"):
        track_elements(Track(**{**good, "front": (-0.4, 0.0)}))
    with pytest.raises(ModelError, match="sprocket_radius must be a positive"):
        track_elements(Track(**{**good, "sprocket_radius": 0.0}))
    with pytest.raises(ModelError, match="belt_points"):
        track_elements(Track(**good, belt_points=-1))
    with pytest.raises(ModelError, match="rear: expected"):
        track_elements(Track(**{**good, "rear": (np.nan, 0.0)}))
    for bad in (-1, 1.5, True, 61):
        with pytest.raises(ModelError, match="upper_points must be an integer"):
            track_elements(Track(**good, upper_points=bad))


def test_upper_run_points_sample_the_upper_run():
    """``upper_points`` fixed points of the upper run, between the lower-run points and the front arc: the
    highest points of circles interpolating the rollers' (a 0.1 m and a 0.05 m roller here)."""
    t = Track(frame="t", sprocket_radius=0.1, rear=(-0.3, 0.0), front=(0.3, 0.05), rear_radius=0.1,
              front_radius=0.05, belt_points=1, upper_points=2)
    el = track_elements(t)
    assert [e.kind for e in el] == ["arc", "belt", "upper", "upper", "arc"]
    for e, s in zip(el[2:4], (1 / 3, 2 / 3), strict=True):
        assert e.centre == pytest.approx((-0.3 + 0.6 * s, 0.05 * s))
        assert e.radius == pytest.approx(0.1 - 0.05 * s)
        assert e.name.startswith("t/upper")


def _talon_with_upper_points(n: int = 3):
    import yaml

    data = wd.urdf.data_dirs()[0]
    cfg = yaml.safe_load((data / "config" / "talon.yaml").read_text())
    cfg.pop("urdf")
    for spec in cfg["tracks"].values():
        spec["upper_points"] = n
    return wd.load_model(str(data / "urdf" / "talon.urdf"), config=cfg)


def test_a_turned_over_track_touches_with_its_upper_run():
    """Talon on its back (roll π), belts' upper runs on flat ground with a 3 cm ridge under the middle: the
    middle upper point is 3 cm into the ridge, the others on the ground, the lower-run points 2 r_s above the
    ground or the ridge (closed form); the belt runs forwards along the upper run (+r_s x̂_hub per rad/s),
    backwards along the lower."""
    m = _talon_with_upper_points(3)
    ridge = Box(center=(0.0, 0.0), size=(0.1, 3.0), height=0.03)
    T = forward_kinematics(m, m.state(xyz=(0.0, 0.0, R_S), rpy=(np.pi, 0.0, 0.0)))
    c = wheel_contacts(m, T, ridge)
    A = wheel_jacobians(m, T, c)
    for side, t in enumerate(tracks(m)):
        upper = [w for w in t.elements if m.wheels[w].kind == "upper"]
        lower = [w for w in t.elements if m.wheels[w].kind == "belt"]
        assert len(upper) == 3 and len(lower) == 3
        assert c.dz[upper] == pytest.approx([0.0, -0.03, 0.0], abs=1e-12)
        assert c.dz[lower] == pytest.approx([2 * R_S, 2 * R_S - 0.03, 2 * R_S], abs=1e-12)  # above the ridge too
        x_hub = T[t.frame, :3, 0]
        for w, sign in ((upper[0], 1.0), (lower[0], -1.0)):
            v_world = c.frames[w] @ A[3 * w:3 * w + 3, 6 + side]  # the belt's velocity per rad/s, world axes
            assert np.allclose(v_world, sign * R_S * x_hub, atol=1e-12)


def test_a_turned_over_tracked_vehicle_drives_backwards():
    """On its back the upper runs carry Talon, and they run the other way: belts driven as for 0.3 m/s
    forwards move the vehicle backwards at 0.3 m/s (5 s: 1.5 m within 2 %), straight."""
    m = _talon_with_upper_points(3)
    sim = Simulator(m, Plane(), mode="dynamic", dt=0.01)
    q0 = m.state(xyz=(0.0, 0.0, R_S - 0.005), rpy=(np.pi, 0.0, 0.0))
    settled = sim.run(1.0, (0.0, 0.0), q0=q0)
    r = sim.run(5.0, (0.3, 0.0), q0=settled.q[-1], qvel0=settled.qvel[-1])
    d = r.q[-1, 4:7] - r.q[0, 4:7]
    assert d[0] == pytest.approx(-1.5, rel=0.02)
    assert abs(d[1]) < 0.01


def _talon_yaml(tmp_path, tracks_block: str, box: str = "0.8636 0.1524 0.254") -> str:
    urdf = (wd.urdf.data_dirs()[0] / "urdf" / "talon.urdf").read_text()
    urdf = urdf.replace('<collision><geometry><box size="0.8636 0.1524 0.2540"/></geometry></collision>',
                        f'<collision><geometry><box size="{box}"/></geometry></collision>')
    (tmp_path / "t.urdf").write_text(urdf)
    (tmp_path / "t.yaml").write_text(f"urdf: t.urdf\ntracks:\n{textwrap.indent(tracks_block, '  ')}\n")
    return str(tmp_path / "t.yaml")


def test_bad_track_yaml_and_urdf_are_refused(tmp_path):
    with pytest.raises(UrdfError, match="'nope' is not a joint"):
        wd.load_model(_talon_yaml(tmp_path, "nope: {}"))
    with pytest.raises(UrdfError, match="longer"):
        wd.load_model(_talon_yaml(tmp_path, "left_track_joint: {}\nright_track_joint: {}", box="0.2 0.15 0.3"))
    with pytest.raises((UrdfError, wd.errors.VehicleConfigError), match="belt_points"):
        wd.load_model(_talon_yaml(tmp_path, "left_track_joint: {belt_points: -2}"))
    with pytest.raises((UrdfError, wd.errors.VehicleConfigError), match="radius: unknown key"):
        wd.load_model(_talon_yaml(tmp_path, "left_track_joint: {radius: 0.1}"))
    # an explicit outline in the YAML replaces the box
    m = wd.load_model(_talon_yaml(tmp_path, "left_track_joint: {rear: [-0.2, 0.0], front: [0.3, 0.0], "
                                            "rear_radius: 0.1, front_radius: 0.1, width: 0.1}\n"
                                            "right_track_joint: {belt_points: 1}"))
    assert tracks(m)[0].rear == (-0.2, 0.0) and tracks(m)[0].sprocket_radius == 0.1
    assert len(tracks(m)[1].elements) == 3


def _level_state(model, z=R_S):
    return model.state(xyz=(0.0, 0.0, z))


def test_belt_columns_equal_alg2_of_wheels_at_the_same_circles(talon):
    """Wheels at every element's circle centre (radius = sprocket radius) see the same contact points, so
    Alg. 2's revolute column of each wheel must equal the track element's belt column, and every other
    column must agree too — on flat ground and on a 20° slope with the vehicle pitched along it."""
    approx = wheel_approximation(talon, 5)  # wheels at the rollers and the three belt points
    for slope in (0.0, np.radians(20.0)):
        ground = Plane(normal=(-np.sin(slope), 0.0, np.cos(slope)))
        for model_pair in ((talon, approx),):
            A = []
            for m in model_pair:
                q = m.state(xyz=(0.1, 0.2, R_S / np.cos(slope) + 0.1 * np.tan(slope)), rpy=(0.0, -slope, 0.3 * 0))
                T = forward_kinematics(m, q)
                c = wheel_contacts(m, T, ground)
                assert np.allclose(c.dz, 0.0, atol=1e-9)
                A.append(wheel_jacobians(m, T, c))
            A_track, A_wheel = A
            assert np.allclose(A_track[:, :6], A_wheel[:, :6], atol=1e-12)
            for w in range(talon.num_wheels):
                side = w // 5
                col_wheel = A_wheel[3 * w:3 * w + 3, 6 + w]
                assert np.allclose(A_track[3 * w:3 * w + 3, 6 + side], col_wheel, atol=1e-12)
                assert col_wheel[0] == pytest.approx(-R_S)  # the belt runs backwards under the vehicle


def test_other_columns_are_the_velocity_of_a_point_fixed_to_the_outline(talon):
    """Finite differences: the body twist moves the outline (and the contact point fixed to it) rigidly."""
    rng = np.random.default_rng(3)
    ground = Plane(normal=(0.1, -0.05, 1.0))
    q = talon.state(xyz=(0.3, -0.2, 0.16), rpy=(0.05, -0.08, 0.7))
    T = forward_kinematics(talon, q)
    c = wheel_contacts(talon, T, ground)
    A = wheel_jacobians(talon, T, c)
    qvel = np.concatenate([rng.normal(size=6), [0.0, 0.0]])  # sprockets still: the outline is rigid
    eps = 1e-6
    for w, f in enumerate(talon.wheel_frame):
        p = talon.parent[f]
        T_hub = T[p] @ talon.T0[f]
        p_hub = np.linalg.solve(T_hub, np.append(c.points[w], 1.0))
        moved = []
        for sign in (1.0, -1.0):
            Tq = forward_kinematics(talon, euler_step(q, sign * qvel, eps))
            moved.append((Tq[p] @ talon.T0[f] @ p_hub)[:3])
        v_fd = (moved[0] - moved[1]) / (2 * eps)
        assert np.allclose(A[3 * w:3 * w + 3] @ qvel, c.frames[w].T @ v_fd, atol=1e-6)


def test_belt_speed_matching_the_vehicle_gives_zero_slip_and_held_vehicle_sees_the_belt(talon):
    q = _level_state(talon)
    T = forward_kinematics(talon, q)
    c = wheel_contacts(talon, T, Plane())
    A = wheel_jacobians(talon, T, c)
    v = 0.4
    rolling = np.zeros(8)
    rolling[3] = v  # body forward at v, belts at θ̇ = v / r_s: pure rolling, no slip anywhere
    rolling[6:] = v / R_S
    assert np.allclose(A @ rolling, 0.0, atol=1e-12)
    held = np.zeros(8)
    held[6:] = v / R_S  # vehicle held, belts running: every contact slides backwards at the belt speed
    vc = (A @ held).reshape(-1, 3)
    assert np.allclose(vc, np.tile([-v, 0.0, 0.0], (talon.num_wheels, 1)), atol=1e-12)


def _front_roller_centres(model, T):
    """World centres of each track's front roller (hub frame: x, z of ``tracks()``; the sprockets at 0)."""
    out = []
    for t in tracks(model):
        out.append(T[t.frame, :3, 3] + T[t.frame, :3, :3] @ np.array([t.front[0], 0.0, t.front[1]]))
    return out


def test_a_roller_at_a_step_edge_gets_the_belt_surface_normal(talon):
    """Issue 13 item 1, "on edges, from the belt surface": front rollers (centre C, radius r_s) with a 6 cm
    step's edge 9 cm ahead of their centres hold the step's corner E inside the circle, so the contact is the
    corner — normal (C − E)/|C − E|, Δz = |C − E| − r_s, point C − r_s n̂ (closed form).  A 20 cm face (above
    the axle) 1 cm into the rollers: the contact is the face — normal straight back, Δz = −1 cm, at the
    centre's height.  The kinematic model's contacts (``track_edges`` False) and the wheels of the two-wheel
    approximation at the same circles keep eq. 2.8's contact with the step: on the tread, normal straight up."""
    x_edge, height = 0.3048 + 0.09, 0.06
    step = Box(center=(x_edge + 1.0, 0.0), size=(2.0, 3.0), height=height)
    T = forward_kinematics(talon, _level_state(talon))
    c = wheel_contacts(talon, T, step, track_edges=True)
    for t, C in zip(tracks(talon), _front_roller_centres(talon, T), strict=True):
        w = t.elements[-1]
        d = C - np.array([x_edge, C[1], height])
        n = d / np.linalg.norm(d)
        assert c.dz[w] == pytest.approx(np.linalg.norm(d) - R_S, abs=1e-5)  # −14.8 mm
        assert np.allclose(c.normals[w], n, atol=1e-4)  # 53° back from vertical
        assert np.allclose(c.points[w], C - R_S * n, atol=1e-5)
    # a face higher than the axle, 1 cm into the rollers: the contact is the face, at the centre's height
    wall = Box(center=(0.3048 + R_S - 0.01 + 1.0, 0.0), size=(2.0, 3.0), height=0.2)
    c = wheel_contacts(talon, T, wall, track_edges=True)
    for t, C in zip(tracks(talon), _front_roller_centres(talon, T), strict=True):
        w = t.elements[-1]
        assert c.dz[w] == pytest.approx(-0.01, abs=1e-6)
        assert np.allclose(c.normals[w], [-1.0, 0.0, 0.0], atol=1e-9)
        assert np.allclose(c.points[w], C + [R_S, 0.0, 0.0], atol=1e-6)
    kinematic = wheel_contacts(talon, T, step)  # the kinematic model's contacts: eq. 2.8 (the tread's normal)
    assert np.allclose(kinematic.normals[[t.elements[-1] for t in tracks(talon)]], [0.0, 0.0, 1.0])
    wheels = wheel_approximation(talon, 2)
    cw = wheel_contacts(wheels, forward_kinematics(wheels, _level_state(wheels)), step, track_edges=True)
    front = [w for w in range(wheels.num_wheels) if cw.points[w, 0] > 0.3]
    assert len(front) == 2 and np.allclose(cw.normals[front], [0.0, 0.0, 1.0]) and (cw.dz[front] < -0.01).all()


def test_a_run_resting_on_a_step_edge_touches_at_the_edge(talon):
    """Issue 13 item 1: a rigid run touches a step's edge between its sampled points.  Talon nose up 2°, the
    lower run 1 cm above the ground at x = 0, a 2 cm step's edge at x = 5 cm (inside the middle belt point's
    stretch, ±7.6 cm): that point's contact is the run's point above the edge — Δz = (P_z − 0.02)·m̂_z, normal
    m̂ the run's normal (closed form from the run's line) — where the fixed point (on the ground side) would not
    touch.  On a level run resting on a box's flat top every run point stays at its fixed point."""
    pitch = np.radians(2.0)
    x_edge, height = 0.05, 0.02
    step = Box(center=(x_edge + 1.0, 0.0), size=(2.0, 3.0), height=height)
    T = forward_kinematics(talon, talon.state(xyz=(0.0, 0.0, R_S + 0.01), rpy=(0.0, -pitch, 0.0)))
    c = wheel_contacts(talon, T, step, track_edges=True)
    for t in tracks(talon):
        R, o = T[t.frame, :3, :3], T[t.frame, :3, 3]
        rear_bottom = o + R @ np.array([t.rear[0], 0.0, t.rear[1] - t.rear_radius])
        d, m = R[:, 0], R[:, 2]  # the level run's direction and normal
        p = rear_bottom + (x_edge - rear_bottom[0]) / d[0] * d  # the run's point above the edge
        w = t.elements[2]  # the middle belt point (hub x = 0)
        assert c.dz[w] == pytest.approx((p[2] - height) * m[2], abs=1e-6)  # −6.3 mm: touching
        assert np.allclose(c.normals[w], m, atol=1e-12)
        assert np.allclose(c.points[w], p, atol=1e-4)  # within 1e-4 of the stretch
    level = wheel_contacts(talon, forward_kinematics(talon, _level_state(talon, R_S + height)), step.__class__(
        center=(0.0, 0.0), size=(4.0, 4.0), height=height), track_edges=True)
    for t in tracks(talon):
        assert np.allclose(level.points[list(t.elements[1:-1]), 0], [-0.1524, 0.0, 0.1524], atol=1e-12)
        assert np.allclose(level.dz[list(t.elements)], 0.0, atol=1e-12)


def test_arc_contacts_are_eq_2_8s_on_planes_in_any_pose(talon):
    """On a plane the belt-surface normal is the plane's: every roller's Δz is the circle's signed distance
    n̂·C − n̂·p0 − r√(1 − (n̂·ŷ)²) (closed form, ŷ the roller axis) and its normal n̂, for random planes and poses
    (rollers sunk deeper than their radius included: they keep eq. 2.8's contact, the same on a plane)."""
    rng = np.random.default_rng(11)
    for _ in range(8):
        n = np.array([*rng.uniform(-0.4, 0.4, 2), 1.0])
        n /= np.linalg.norm(n)
        ground = Plane(normal=n, point=(0.0, 0.0, rng.uniform(-0.05, 0.05)))
        x, y = rng.uniform(-1, 1, 2)  # the body near the plane, any yaw (rollers up to 0.2 m in and above it)
        z = ground.height(x, y)[()] + R_S / n[2] + rng.uniform(-0.03, 0.03)
        q = talon.state(xyz=(x, y, z), rpy=(*rng.uniform(-0.3, 0.3, 2), rng.uniform(-3, 3)))
        T = forward_kinematics(talon, q)
        c = wheel_contacts(talon, T, ground, track_edges=True)
        for t in tracks(talon):
            y = T[t.frame, :3, 1]
            for w, (x, z, r) in ((t.elements[0], (*t.rear, t.rear_radius)),
                                 (t.elements[-1], (*t.front, t.front_radius))):
                C = T[t.frame, :3, 3] + T[t.frame, :3, :3] @ np.array([x, 0.0, z])
                dist = n @ (C - ground.point) - r * np.sqrt(1.0 - (n @ y) ** 2)
                assert c.dz[w] == pytest.approx(dist, abs=1e-9)
                assert np.allclose(c.normals[w], n, atol=1e-9)


def test_the_belt_runs_in_the_contact_plane(talon):
    """CSM (Pecka et al.: the surface motion lies in the contact plane): the belt slides along the outline,
    which does not move the outline into the ground.  With the track pitched 10° on flat ground, a belt
    point's normal row has no sprocket term, and its tangential rows hold the belt velocity −r_s x̂_hub
    projected on them: −r_s cos 10° along x̂_c, 0 along ŷ_c."""
    pitch = np.radians(10.0)
    T = forward_kinematics(talon, talon.state(xyz=(0.0, 0.0, 0.3), rpy=(0.0, pitch, 0.0)))
    c = wheel_contacts(talon, T, Plane())
    A = wheel_jacobians(talon, T, c)
    for side, t in enumerate(tracks(talon)):
        for w in t.elements[1:-1]:  # the belt points
            col = A[3 * w:3 * w + 3, 6 + side]
            assert col[2] == 0.0
            assert col[0] == pytest.approx(-R_S * np.cos(pitch), abs=1e-12)
            assert col[1] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_straight_drive_covers_speed_times_time(talon, mode):
    """Pecka's straight drive: 0.3 m/s for 10 s → 3.0 m (within 2 %), no sideways drift or turn."""
    r = Simulator(talon, Plane(), mode=mode, dt=0.04).run(10.0, (0.3, 0.0))
    x, y = r.q[-1, 4], r.q[-1, 5]
    assert x == pytest.approx(3.0, rel=0.02)
    assert abs(y) < 1e-6 and abs(quat_to_rpy(r.q[-1, :4])[2]) < 1e-6


def test_rotating_in_place_keeps_the_centre(talon):
    """Pecka's rotation: belts at ∓ω·B/2; the dynamic model turns by skidding, the centre stays within 5 cm."""
    r = Simulator(talon, Plane(), mode="dynamic", dt=0.04).run(10.0, (0.0, 0.6))
    drift = np.hypot(r.q[:, 4], r.q[:, 5]).max()
    yaw = np.unwrap([quat_to_rpy(qq[:4])[2] for qq in r.q])
    assert drift < 0.05
    assert yaw[-1] > 1.0  # it does turn (skid steering loses part of the commanded rate)


def test_a_small_yaw_rate_turns_in_place_without_creeping_forward(talon):
    """Gazebo's tracked-vehicle plugin divides by the turning radius and creeps at v = 0; CSM must not."""
    r = Simulator(talon, Plane(), mode="dynamic", dt=0.04).run(10.0, (0.0, 0.05))
    yaw = quat_to_rpy(r.q[-1, :4])[2]
    assert yaw > 0.05 * 10 * 0.2
    assert np.hypot(r.q[:, 4], r.q[:, 5]).max() < 1e-3


def test_front_roller_climbs_a_step(talon):
    """The front arc is what climbs edges: a 6 cm step (half the roller radius) is climbed at 0.3 m/s."""
    step = Box(center=(1.5, 0.0), size=(2.0, 3.0), height=0.06)
    sim = Simulator(talon, step, mode="dynamic", dt=0.01)
    r = sim.run(5.0, (0.3, 0.0))
    assert r.q[-1, 4] > 1.2  # the whole belt (±0.43 m) past the edge at x = 0.5 m, not yet at the far one
    assert r.q[-1, 6] == pytest.approx(0.06 + R_S - 0.02, abs=0.01)  # on top, the default 2 cm sinkage


def test_kernels_give_the_same_run_without_jit(talon):
    code = textwrap.dedent("""
        import numpy as np, wmr_dynamics as wd
        from wmr_dynamics.simulate import Simulator
        from wmr_dynamics.terrain import Plane
        r = Simulator(wd.load_model("talon"), Plane(normal=(0.05, 0.02, 1.0)), mode="dynamic", dt=0.04).run(
            1.0, (0.2, 0.3))
        np.save("OUT", r.q)
    """)
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"talon_nojit_{os.getpid()}.npy")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    subprocess.run([sys.executable, "-c", code.replace("OUT", out)], check=True, env=env, timeout=600)
    q_py = np.load(out)
    os.remove(out)
    r = Simulator(talon, Plane(normal=(0.05, 0.02, 1.0)), mode="dynamic", dt=0.04).run(1.0, (0.2, 0.3))
    assert np.allclose(r.q, q_py, atol=1e-9)


def test_steering_efficiency_makes_the_skid_steer_turn_at_the_commanded_rate(talon):
    """Martínez et al.'s χ: with the sides driven at v ∓ ω·B/(2χ) the turn's loss to skidding is made up.
    χ measured from a χ = 1 run (yaw rate reached / commanded) brings the next run to the commanded rate."""
    from wmr_dynamics.controllers import BodyVelocityController

    def yaw_rate(chi):
        sim = Simulator(talon, Plane(), mode="dynamic", dt=0.04,
                        controller=BodyVelocityController(talon, steering_efficiency=chi))
        r = sim.run(6.0, (0.2, 0.3))
        yaw = np.unwrap([quat_to_rpy(qq[:4])[2] for qq in r.q])
        return (yaw[-1] - yaw[50]) / (r.t[-1] - r.t[50])  # after the 2 s spin-up

    chi = yaw_rate(1.0) / 0.3
    assert 0.2 < chi < 0.95  # skid steering does lose part of the turn
    assert yaw_rate(chi) == pytest.approx(0.3, rel=0.1)
    with pytest.raises(ModelError, match="steering_efficiency"):
        BodyVelocityController(talon, steering_efficiency=0.0)


def test_a_planner_batch_of_tracked_rollouts_equals_single_runs(talon):
    """rollout_batch (the compiled parallel batch) on a tracked robot gives each single run's trajectory."""
    sim = Simulator(talon, Plane(normal=(0.03, 0.0, 1.0)), mode="dynamic", dt=0.04)
    n = 40
    cmds = np.zeros((3, n + 1, 2))
    cmds[:, :, 0] = 0.3
    cmds[:, :, 1] = [[-0.4], [0.0], [0.4]]
    batch = sim.rollout_batch(cmds)
    for k in range(3):
        single = sim.run(n * 0.04, tuple(cmds[k, 0]), limit_speeds=False)
        assert np.allclose(batch.q[k], single.q, atol=1e-9)
    yaw = [quat_to_rpy(batch.q[k, -1, :4])[2] for k in range(3)]
    assert yaw[0] < -0.1 and abs(yaw[1]) < 1e-6 and yaw[2] > 0.1


def test_kinematic_tracks_on_rough_ground_follow_the_dynamic_model(talon):
    """A rigid track's contacts cannot all keep Δz = 0 on rough ground: the default σ for tracked vehicles is
    capped (simulate.TRACK_BAUMGARTE) so the no-slip rows keep the course. Oracle: the dynamic model, for
    the distance covered and the heading kept.  (The sideways drift of either model over 5 m of this grid
    is a few decimetres, set by which contacts the rigid track trades off: the kinematic run's changes
    with σ — 0.66 m at 30/s, 0.1 m at 10/s, 0.01 m at 5/s — so it is bounded, not matched.)"""
    from wmr_dynamics.scenarios.paths import rough_terrain_path
    from wmr_dynamics.terrain import load_wmrde_grid

    ground = load_wmrde_grid(rough_terrain_path("rocky_rough_0"))
    end = {}
    for mode in ("kinematic", "dynamic"):
        sim = Simulator(talon, ground, mode=mode, dt=0.01)
        end[mode] = sim.run(10.0, (0.5, 0.0), q0=sim.initial_state()).q[-1]
    covered = {m: np.linalg.norm(q[4:6]) for m, q in end.items()}
    assert covered["kinematic"] == pytest.approx(covered["dynamic"], rel=0.03)  # of 4.9 m driven
    assert abs(end["kinematic"][5]) < 0.5
    assert abs(quat_to_rpy(end["kinematic"][:4])[2]) < np.radians(15)
    stiff = Simulator(talon, ground, mode="kinematic", dt=0.01, baumgarte=100.0)
    assert stiff.sigma == 100.0 and Simulator(talon, ground, dt=0.01).sigma == 10.0


def test_tracks_default_to_static_friction_and_park_on_a_20_degree_slope(talon):
    """Issue 13 item 7: at rest on 20° (μ = 1) the tracked vehicle (default contact: coulomb) drifts < 1 mm in
    10 s, while its 4-wheel approximation with the wheels' default slip-velocity model slides."""
    from wmr_dynamics.collision import drop_onto_terrain
    from wmr_dynamics.dynamics.force_balance import DynamicsOptions

    assert DynamicsOptions.from_config(talon).contact.name == "coulomb"
    a = np.radians(20.0)
    ground = Plane(normal=(-np.sin(a), 0.0, np.cos(a)))
    drift = {}
    for m in (talon, wheel_approximation(talon, 4)):
        q0 = drop_onto_terrain(m, m.state(xyz=(0.0, 0.0, 0.5), rpy=(0.0, -a, 0.0)), ground)
        sim = Simulator(m, ground, mode="dynamic", dt=0.04)
        settled = sim.run(2.0, (0.0, 0.0), q0=q0)
        r = sim.run(10.0, (0.0, 0.0), q0=settled.q[-1], qvel0=settled.qvel[-1])
        drift[m.name] = np.linalg.norm(r.q[-1, 4:7] - r.q[0, 4:7])
    assert drift["talon"] < 1e-3
    assert drift["talon_4wheels"] > 0.1


def test_the_coulomb_active_set_ends_every_step_inside_the_friction_cone(talon):
    """Issue 13 item 5 on rough ground: after the active set no element's tangential force exceeds μ f_z — the
    held elements' split forces inside the cone, the sliding ones on it.  Driving straight, elements are in
    both states (a run where all stick or all slide would not test the set's rules); a skid-steer turn slides
    nearly every contact."""
    from wmr_dynamics.scenarios.paths import rough_terrain_path
    from wmr_dynamics.terrain import load_wmrde_grid

    mu = 0.8
    m = dataclasses.replace(talon, name="talon_mu", config={**talon.config,
                                                             "contact": {"model": "coulomb", "params": {"mu": mu}}})
    sim = Simulator(m, load_wmrde_grid(rough_terrain_path("rocky_rough_0")), mode="dynamic", dt=0.01)
    for cmd, turning in (((0.5, 0.0), False), ((0.2, 0.5), True)):
        r = sim.run(2.0, cmd)
        f = r.contact_force
        on = f[..., 2] > 1e-6
        ratio = np.hypot(f[..., 0], f[..., 1])[on] / (mu * f[..., 2][on])
        assert r.converged.all()
        assert ratio.max() <= 1.0 + 1e-6
        sliding, inside = (ratio > 0.999).mean(), (ratio < 0.9).mean()
        if turning:
            assert sliding > 0.9
        else:
            assert sliding > 0.05 and inside > 0.05


# ---- roller_arcs: false — the C++ Talon's track (fixed points from one end of the lower run to the other) ----

def _talon_without_arcs(tmp_path, extra: str = ""):
    block = "\n".join(f"{j}: {{sprocket_radius: 0.127, belt_points: 3, roller_arcs: false{extra}}}"
                      for j in ("left_track_joint", "right_track_joint"))
    return wd.load_model(_talon_yaml(tmp_path, block))


def test_without_roller_arcs_the_belt_points_sample_the_lower_run_end_to_end(tmp_path, talon):
    """``roller_arcs: false``: n belt points at s = k/(n−1) from the rear roller's lowest point to the front's
    (circles interpolating the rollers', a 0.1 m and a 0.05 m roller here); the inner ones with half the spacing
    along the run, the inner ones sliding within it and the two ends not (``slides`` False); the upper points keep
    their places between the ends; the track's outline is unchanged."""
    t = Track(frame="t", sprocket_radius=0.1, rear=(-0.3, 0.0), front=(0.3, 0.05), rear_radius=0.1,
              front_radius=0.05, belt_points=4, upper_points=1, roller_arcs=False)
    el = track_elements(t)
    assert [e.kind for e in el] == ["belt"] * 4 + ["upper"]
    half = np.array((0.1, 0.05 / 3))  # ½ spacing along the line through the rollers' lowest points (z −0.1 → 0)
    for e, s, slides in zip(el[:4], (0.0, 1 / 3, 2 / 3, 1.0), (False, True, True, False), strict=True):
        assert e.centre == pytest.approx((-0.3 + 0.6 * s, 0.05 * s))
        assert e.radius == pytest.approx(0.1 - 0.05 * s)
        assert np.allclose(e.run, half, rtol=1e-12, atol=0.0)
        assert e.slides is slides
    assert el[4].centre == pytest.approx((0.0, 0.025))  # s = ½, as with the arcs
    m = _talon_without_arcs(tmp_path, ", upper_points: 1")
    for a, b in zip(tracks(m), tracks(talon), strict=True):
        assert (a.rear, a.front, a.rear_radius, a.front_radius) == (b.rear, b.front, b.rear_radius, b.front_radius)
        assert not a.roller_arcs and b.roller_arcs
        assert [m.wheels[w].kind for w in a.elements] == ["belt", "belt", "belt", "upper"]


def test_bad_roller_arcs_descriptions_are_refused_with_the_reason(tmp_path, talon):
    good = dict(frame="t", sprocket_radius=0.1, rear=(-0.3, 0.0), front=(0.3, 0.0), rear_radius=0.1,
                front_radius=0.1)
    with pytest.raises(ModelError, match="without roller_arcs .* at least 2 .* got 1"):
        track_elements(Track(**good, belt_points=1, roller_arcs=False))
    with pytest.raises(ModelError, match="roller_arcs must be true or false, got 'no'"):
        track_elements(Track(**good, roller_arcs="no"))
    with pytest.raises(wd.errors.VehicleConfigError, match="roller_arcs: expected true or false, got 0"):
        wd.load_model(_talon_yaml(tmp_path, "left_track_joint: {roller_arcs: 0}"))
    bad = dataclasses.replace(talon.wheels[1], slides="no")  # an element made by hand
    with pytest.raises(ModelError, match="slides must be true or false, got 'no'"):
        dataclasses.replace(talon, wheels=(talon.wheels[0], bad, *talon.wheels[2:]))


def test_without_roller_arcs_the_contacts_are_the_run_points_closed_form(tmp_path):
    """On a plane, in any pose, each element's contact is its fixed point on the lower run (the hub frame's
    (x_s, 0, z_s − r_s)) and Δz its signed distance from the plane along the normal (eq. 2.8): closed form."""
    m = _talon_without_arcs(tmp_path)
    rng = np.random.default_rng(5)
    for _ in range(6):
        n = np.array([*rng.uniform(-0.3, 0.3, 2), 1.0])
        n /= np.linalg.norm(n)
        ground = Plane(normal=n, point=(0.0, 0.0, rng.uniform(-0.05, 0.05)))
        q = m.state(xyz=(*rng.uniform(-1, 1, 2), R_S + rng.uniform(-0.03, 0.03)),
                    rpy=(*rng.uniform(-0.2, 0.2, 2), rng.uniform(-3, 3)))
        T = forward_kinematics(m, q)
        c = wheel_contacts(m, T, ground)
        for t in tracks(m):
            for w, s in zip(t.elements, (0.0, 0.5, 1.0), strict=True):
                x = (1 - s) * t.rear[0] + s * t.front[0]
                p = T[t.frame, :3, 3] + T[t.frame, :3, :3] @ np.array([x, 0.0, -R_S])
                assert np.allclose(c.points[w], p, atol=1e-12)
                assert c.dz[w] == pytest.approx(n @ (p - ground.point), abs=1e-12)


def test_without_roller_arcs_a_level_drive_matches_the_arcs_at_the_same_points(tmp_path, talon):
    """Driving straight on flat ground the track stays level, so the arcs' contacts are the rollers' lowest
    points: Talon with belt_points 1 and its arcs, and Talon with 3 end-to-end points and no arcs, touch at the
    same 3 points per run.  Two element kinds (a searched circle, a fixed point) must give the same drive:
    0.3 m/s for 10 s → 3.0 m within 2 %, and the two runs within 0.5 mm of each other."""
    points = _talon_without_arcs(tmp_path)
    wheels = []
    for t in tracks(talon):
        w0 = talon.wheels[t.elements[0]]
        wheels += track_elements(Track(frame=w0.frame, sprocket_radius=t.sprocket_radius, rear=t.rear,
                                       front=t.front, rear_radius=t.rear_radius, front_radius=t.front_radius,
                                       belt_points=1, width=w0.width, name=t.name))
    arcs = dataclasses.replace(talon, wheels=tuple(wheels))
    runs = [Simulator(m, Plane(), mode="dynamic", dt=0.01).run(10.0, (0.3, 0.0)) for m in (points, arcs)]
    for r in runs:
        assert r.q[-1, 4] == pytest.approx(3.0, rel=0.02)
    assert np.abs(runs[0].q[:, 4:7] - runs[1].q[:, 4:7]).max() < 5e-4


def test_without_roller_arcs_an_edge_ahead_of_the_track_is_not_felt(tmp_path):
    """The end points do not slide: a 10 cm step whose edge lies 5 cm ahead of the front roller's lowest point
    (inside the half spacing a sliding stretch would reach) leaves the front end point's contact at its fixed
    point on the ground (Δz 0, closed form), where a stretch reaching past the roller would have met the step."""
    m = _talon_without_arcs(tmp_path)
    T = forward_kinematics(m, _level_state(m))
    ends = [T[t.frame, :3, 3] + T[t.frame, :3, :3] @ np.array([t.front[0], 0.0, -R_S]) for t in tracks(m)]
    edge = ends[0][0] + 0.05
    step = Box(center=(edge + 1.0, 0.0), size=(2.0, 3.0), height=0.10)
    c = wheel_contacts(m, T, step, track_edges=True)
    for t, p in zip(tracks(m), ends, strict=True):
        w = t.elements[2]
        assert p[2] == pytest.approx(0.0, abs=1e-12)  # the front end point on the ground, the step just ahead
        assert c.dz[w] == pytest.approx(0.0, abs=1e-12)
        assert np.allclose(c.points[w], p, atol=1e-12)


def test_without_roller_arcs_every_belt_point_moves_along_the_run(tmp_path):
    """On a tapered outline (rollers 0.127 and 0.08 m, the front 2 cm higher) the lower run slopes against the
    hub's x axis; CSM moves every belt point at r_s along it, the ends too (their column follows the run's
    direction, not the roller's bottom tangent).  Level on a plane: each point's column is −r_s ê·x̂_c, with ê
    the unit run direction (closed form)."""
    block = "\n".join(f"{j}: {{rear: [-0.3, 0.0], front: [0.3, 0.02], rear_radius: 0.127, front_radius: 0.08, "
                      f"width: 0.15, sprocket_radius: 0.1, roller_arcs: false}}"
                      for j in ("left_track_joint", "right_track_joint"))
    m = wd.load_model(_talon_yaml(tmp_path, block))
    T = forward_kinematics(m, _level_state(m, z=0.5))
    c = wheel_contacts(m, T, Plane())
    A = wheel_jacobians(m, T, c)
    e = np.array([0.6, 0.0, (0.02 - 0.08) - (0.0 - 0.127)])
    e /= np.linalg.norm(e)
    for side, t in enumerate(tracks(m)):
        assert len(t.elements) == 3
        for w in t.elements:
            expected = -0.1 * (c.frames[w].T @ (T[t.frame, :3, :3] @ e))
            assert np.allclose(A[3 * w:3 * w + 2, 6 + side], expected[:2], atol=1e-12)
            assert A[3 * w + 2, 6 + side] == 0.0
