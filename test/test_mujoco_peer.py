"""MuJoCo as an independent oracle for the MJCF export (:mod:`wmr_dynamics.io.mjcf`): the same vehicle and ground.

MuJoCo is a test oracle and peer benchmark (benchmarks/mujoco_peer.py), never a runtime dependency (DESIGN.md);
it is pinned in requirements-dev.txt, so a missing MuJoCo fails these tests instead of skipping them.

- the MJCF generated from our ``WmrModel`` loads; MuJoCo's forward kinematics puts every body where ours puts
  the frame (random body pose and joint angles), and its composite mass, centre of mass and the free joint's
  6×6 block of the joint-space inertia matrix (CRBA) equal ours (``composite_inertia``) — to 1e-7, the
  1e-9 kg given to the massless moving frames (MuJoCo needs mass on them) being the only difference;
- the ``hfield`` built from a benchmark terrain has our grid's heights at the nodes (mj_ray straight down;
  float32 storage → 1e-6 m) and, inside a cell, MuJoCo's triangle (split along (i, j)–(i+1, j+1)), which
  differs from our bilinear height by at most |h11 − h10 − h01 + h00| / 4;
- on flat ground both engines, the wheels commanded at v / r = 0.5 m/s from rest for 2 s, travel v·t less the
  start-up slip of the step command (within 4 %), straight, and MuJoCo rides 2 cm higher: ours sinks
  m·g / (4 kp) = 2 cm by design (kp = m·g / (4 · 0.02 m)), MuJoCo's stiff default contact a fraction of a mm;
- on a benchmark terrain, our contact-initialized start touches MuJoCo's surface: its 7 cm wide cylinders on
  the triangulated hfield penetrate by less than 3 cm where our disks just touch the bilinear grid, and
  from there MuJoCo drives the rover forward, upright, without instability warnings.

Driving MuJoCo (:func:`set_state`, :func:`drive_mujoco`) is written here, independently of the benchmark (the
state mapping is the package's :func:`~wmr_dynamics.io.mjcf.qpos_from_state`).  No
wall-clock times are asserted.  Our engine runs step by step from Python (engine="python"), the path a
custom controller takes.
"""

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics import spatial
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.io.mjcf import mjcf_from_model, qpos_from_state
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.kinematics.enhanced import composite_inertia
from wmr_dynamics.scenarios import zoe_rough
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Plane

SPEED = 0.5  # m/s
BAD_WARNINGS = ("mjWARN_BADQACC", "mjWARN_BADQVEL", "mjWARN_BADQPOS")  # MuJoCo resets the state on these


def _compile(model, grid=None, **kw):
    m = mujoco.MjModel.from_xml_string(mjcf_from_model(model, grid, **kw))
    return m, mujoco.MjData(m)


def _body(m, name):
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)


def set_state(m, d, model, q):
    """Our state q into MuJoCo's qpos (:func:`wmr_dynamics.io.mjcf.qpos_from_state`), at rest, then mj_forward."""
    mujoco.mj_resetData(m, d)
    d.qpos[:] = qpos_from_state(m, model, q)
    mujoco.mj_forward(m, d)


def deepest_penetration(d):
    """Largest penetration depth (m) among MuJoCo's active contacts (0 without any)."""
    return max([-float(c.dist) for c in d.contact[:d.ncon]] + [0.0])


def drive_mujoco(m, model, q0, dt, duration, speed=SPEED, lift=0.0):
    """From our state q0 at rest (raised by ``lift`` m), every wheel's velocity actuator at speed / r, for
    ``duration`` s at Δt ``dt``.  Returns (final (x, y, z, roll, pitch, yaw), largest |roll| or |pitch| along
    the way (sampled every 0.04 s), the bad-state warnings MuJoCo raised)."""
    m.opt.timestep = dt
    d = mujoco.MjData(m)
    set_state(m, d, model, q0)
    adr = int(m.joint("root").qposadr[0])
    d.qpos[adr + 2] += lift
    for k, f in enumerate(model.wheel_frame):
        a = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, f"{model.joint_names[int(f) - 1]}_vel")
        assert a >= 0
        d.ctrl[a] = speed / float(model.wheel_radii[k])
    mujoco.mj_forward(m, d)

    def pose():
        w, x, y, z = d.qpos[adr + 3:adr + 7]
        return np.r_[d.qpos[adr:adr + 3], spatial.quat_to_rpy(np.array([x, y, z, w]))]

    n, every, tilt = int(round(duration / dt)), max(1, int(round(0.04 / dt))), 0.0
    for done in range(0, n, every):
        mujoco.mj_step(m, d, nstep=min(every, n - done))
        tilt = max(tilt, float(np.abs(pose()[3:5]).max()))
    warnings = sum(int(d.warning[getattr(mujoco.mjtWarning, w)].number) for w in BAD_WARNINGS)
    return pose(), tilt, warnings


@pytest.fixture(scope="module")
def zoe():
    return wmr.load_model("zoe")


@pytest.fixture(scope="module")
def grid():
    return zoe_rough.load_terrain(1)  # the thesis author's terrain file: required, never skipped


def test_mjcf_loads_with_the_same_tree_joints_and_actuators(zoe):
    m, _ = _compile(zoe)
    assert m.nbody == zoe.num_frames + 1  # + world
    assert m.njnt == 1 + zoe.num_joints and m.nu == zoe.num_wheels
    for i, f in enumerate(zoe.frames[1:], start=1):
        b = _body(m, f.name)
        assert b >= 1 and m.body_parentid[b] == _body(m, zoe.frames[zoe.parent[i]].name)
    # the benchmark model (steering held straight by rigid θ = 0 constraints) welds the two steer joints
    locked, _ = _compile(zoe_rough.zoe_model())
    names = {mujoco.mj_id2name(locked, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(locked.njnt)}
    assert names == {"root", "FL_joint", "FR_joint", "r2_joint", "BL_joint", "BR_joint"}
    assert locked.nbody == m.nbody and locked.nu == 4
    # explicit locks do the same; the package itself never imports MuJoCo
    assert _compile(zoe, locked=zoe_rough.STEER_JOINTS)[0].njnt == locked.njnt
    pkg = Path(wmr.__file__).parent
    assert not [p for p in pkg.rglob("*.py") if re.search(r"^\s*(import|from)\s+mujoco\b", p.read_text(), re.M)]


def test_forward_kinematics_matches_ours(zoe):
    m, d = _compile(zoe)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = zoe.state(xyz=rng.normal(size=3), rpy=rng.uniform(-0.5, 0.5, 3) * (1, 1, 4),
                      joints=rng.uniform(-0.6, 0.6, zoe.num_joints))
        set_state(m, d, zoe, q)
        T = forward_kinematics(zoe, q)
        for i, f in enumerate(zoe.frames):
            b = _body(m, f.name)
            np.testing.assert_allclose(d.xpos[b], T[i, :3, 3], atol=1e-9, err_msg=f.name)
            np.testing.assert_allclose(d.xmat[b].reshape(3, 3), T[i, :3, :3], atol=1e-9, err_msg=f.name)


@pytest.mark.parametrize("joints", ["zero", "random"])
def test_mass_com_and_composite_inertia_match_ours(zoe, joints):
    m, d = _compile(zoe)
    theta = np.zeros(zoe.num_joints) if joints == "zero" else np.random.default_rng(5).uniform(-0.5, 0.5,
                                                                                                zoe.num_joints)
    q = zoe.state(joints=theta)  # body at the origin, level: MuJoCo's free-joint velocity = ours
    set_state(m, d, zoe, q)
    mass, com, I_b = composite_inertia(zoe, forward_kinematics(zoe, q))
    root = _body(m, "body")
    assert mass == pytest.approx(zoe.total_mass, rel=1e-12)
    assert m.body_subtreemass[root] == pytest.approx(mass, rel=1e-9)
    np.testing.assert_allclose(d.subtree_com[root], com, atol=1e-9)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    # MuJoCo's free joint: [v (world), ω (body)]; ours [ω; v] (body coordinates): swap the blocks
    P = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
    np.testing.assert_allclose(P @ M[:6, :6] @ P.T, I_b, atol=1e-7)
    assert np.abs(I_b[:3, :3] - I_b[:3, :3].T).max() < 1e-12 and I_b[0, 0] > 18.0  # a real inertia, not zeros


def test_hfield_heights_equal_the_grid_at_nodes_and_triangles_inside_cells(zoe, grid):
    m, d = _compile(zoe, grid)
    mujoco.mj_forward(m, d)
    geomid = np.zeros(1, dtype=np.int32)

    def ray(x, y):
        dist = mujoco.mj_ray(m, d, np.array([x, y, 10.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid)
        assert dist >= 0 and geomid[0] == mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "terrain")
        return 10.0 - dist

    rng = np.random.default_rng(7)
    gap = []
    for _ in range(60):
        i, j = int(rng.integers(1, grid.nx - 2)), int(rng.integers(1, grid.ny - 2))
        x, y = grid.x_min + i * grid.dx, grid.y_min + j * grid.dy
        assert ray(x, y) == pytest.approx(grid.heights[j, i], abs=1e-6)
        assert float(grid.height(x, y)) == pytest.approx(grid.heights[j, i], abs=1e-12)
        tx, ty = rng.uniform(0.05, 0.95, 2)
        h00, h10 = grid.heights[j, i], grid.heights[j, i + 1]
        h01, h11 = grid.heights[j + 1, i], grid.heights[j + 1, i + 1]
        tri = h00 + tx * (h10 - h00) + ty * (h11 - h10) if tx >= ty else h00 + ty * (h01 - h00) + tx * (h11 - h01)
        h_mj = ray(x + tx * grid.dx, y + ty * grid.dy)
        assert h_mj == pytest.approx(tri, abs=1e-6)
        bilinear = float(grid.height(x + tx * grid.dx, y + ty * grid.dy))
        bound = abs(h11 - h10 - h01 + h00) / 4
        assert abs(h_mj - bilinear) <= bound + 1e-6
        gap.append(abs(h_mj - bilinear))
    assert max(gap) > 1e-4  # the two surfaces do differ inside cells (the documented caveat)
    # the grid's corners: the hfield spans exactly the grid
    for x, y, h in ((grid.x_min + 1e-6, grid.y_min + 1e-6, grid.heights[0, 0]),
                    (grid.x_max - 1e-6, grid.y_max - 1e-6, grid.heights[-1, -1])):
        assert ray(x, y) == pytest.approx(h, abs=1e-4)


def test_flat_ground_both_engines_travel_v_t():
    model = zoe_rough.zoe_model()
    plane = Plane()
    q0 = zoe_rough.initial_state(model, plane)
    m, _ = _compile(model)
    duration, v = 2.0, SPEED
    for dt in (0.001, 0.004):
        (x, y, z, roll, pitch, yaw), _, warnings = drive_mujoco(m, model, q0, dt, duration)
        assert warnings == 0
        assert x == pytest.approx(v * duration, rel=0.04)
        assert abs(y) < 1e-3 and abs(yaw) < 1e-3 and abs(roll) < 1e-3 and abs(pitch) < 1e-3
    sim = Simulator(model, plane, mode="dynamic", dt=0.04, controller=BodyVelocityController(model, "naive"),
                    dynamics=zoe_rough.dynamics_options(model, "linear"), engine="python")
    ours = sim.run(duration, (v, 0.0), q0=q0, progress=False).q[-1]
    assert ours[4] == pytest.approx(v * duration, rel=0.04)
    assert abs(ours[5]) < 1e-3
    # ride height: ours sinks m g / (4 kp) = 2 cm by design (kp = m g / (4 · 0.02 m)), MuJoCo's stiff contact
    # a fraction of a millimetre
    assert z - ours[6] == pytest.approx(0.02, abs=0.003)


def test_rough_start_touches_the_hfield_and_mujoco_drives_on_upright(grid):
    model = zoe_rough.zoe_model()
    q0 = zoe_rough.initial_state(model, grid)
    m, d = _compile(model, grid)
    set_state(m, d, model, q0)
    lift = deepest_penetration(d)
    # our disks just touch the bilinear grid (§2.2.4); MuJoCo's 7 cm wide cylinders on its triangles dig in a
    # little where the ground slopes across the tread, and nowhere float above it
    assert 0.0 < lift < 0.03
    touching = {int(g) for c in d.contact[:d.ncon] for g in c.geom}
    for f in model.wheel_frame:  # every wheel touches
        assert mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f"{model.frames[int(f)].name}_tire") in touching
    for dt in (0.001, 0.004):
        (x, y, *_), tilt, warnings = drive_mujoco(m, model, q0, dt, 1.0, lift=lift)
        assert warnings == 0 and np.isfinite(x)
        assert tilt < np.radians(45.0)  # upright all along
        assert 0.25 < x - q0[4] < 0.55  # 0.5 m/s for 1 s from rest, over rough ground
