"""MuJoCo as a peer benchmark (benchmarks/mujoco_peer.py): the generated MJCF is the same vehicle and ground.

MuJoCo is an independent oracle here (DESIGN.md: a test oracle, never a runtime dependency):

- the MJCF generated from our ``WmrModel`` loads; MuJoCo's forward kinematics puts every body where ours puts
  the frame (random body pose and joint angles), and its composite mass, centre of mass and the free joint's
  6×6 block of the joint-space inertia matrix (CRBA) equal ours (``composite_inertia``) — to 1e-7, the
  1e-9 kg given to the massless moving frames (MuJoCo needs mass on them) being the only difference;
- the ``hfield`` built from a benchmark terrain has our grid's heights at the nodes (mj_ray straight down;
  float32 storage → 1e-6 m) and, inside a cell, MuJoCo's triangle (split along (i, j)–(i+1, j+1)), which
  differs from our bilinear height by at most |h11 − h10 − h01 + h00| / 4;
- on flat ground both engines, commanded 0.5 m/s for 2 s, travel v·t within 4 % (observed: MuJoCo 0.983 m
  at Δt = 0.001 s and 0.989 m at 0.004 s, ours 0.987 m at 0.04 s — the start-up slip of the step command),
  straight, and MuJoCo rides 2 cm higher (its contact sinks ≈ 0.3 mm, ours 2 cm by design);
- ``_report.update_section`` replaces only its own marked section.

No wall-clock times are asserted.  Our engine runs on its Python path here (engine="python"): the compiled
path is tested to match it (test_compiled_dynamics.py), and this keeps the test independent of its build.
"""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import mujoco_peer as peer  # noqa: E402
import zoe_rough as bench  # noqa: E402
from _report import update_section  # noqa: E402
from shared_paths import TERRAINS  # noqa: E402

import wmr_dynamics as wmr  # noqa: E402
from wmr_dynamics.kinematics import forward_kinematics  # noqa: E402
from wmr_dynamics.kinematics.enhanced import composite_inertia  # noqa: E402
from wmr_dynamics.terrain import Plane  # noqa: E402

TERRAIN_1 = TERRAINS / "zoe_rough_1.txt"
needs_terrain = pytest.mark.skipif(not TERRAIN_1.is_file(), reason=f"benchmark terrain not found: {TERRAIN_1}")


def _compile(model, grid=None, **kw):
    m = mujoco.MjModel.from_xml_string(peer.mjcf_from_model(model, grid, **kw))
    return m, mujoco.MjData(m)


def _body(m, name):
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)


@pytest.fixture(scope="module")
def zoe():
    return wmr.load_model("zoe")


@pytest.fixture(scope="module")
def grid():
    return bench.load_terrain(1, TERRAINS)


def test_mjcf_loads_with_the_same_tree_joints_and_actuators(zoe):
    m, _ = _compile(zoe)
    assert m.nbody == zoe.num_frames + 1  # + world
    assert m.njnt == 1 + zoe.num_joints and m.nu == zoe.num_wheels
    for i, f in enumerate(zoe.frames[1:], start=1):
        b = _body(m, f.name)
        assert b >= 1 and m.body_parentid[b] == _body(m, zoe.frames[zoe.parent[i]].name)
    # the benchmark model (steering held straight by rigid θ = 0 constraints) welds the two steer joints
    locked, _ = _compile(bench.zoe_model())
    names = {mujoco.mj_id2name(locked, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(locked.njnt)}
    assert names == {"root", "FL_joint", "FR_joint", "r2_joint", "BL_joint", "BR_joint"}
    assert locked.nbody == m.nbody and locked.nu == 4
    # explicit locks do the same; the package itself never imports MuJoCo
    assert _compile(zoe, locked=peer.STEER)[0].njnt == locked.njnt
    pkg = Path(wmr.__file__).parent
    assert not [p for p in pkg.rglob("*.py") if re.search(r"^\s*(import|from)\s+mujoco\b", p.read_text(), re.M)]


def test_forward_kinematics_matches_ours(zoe):
    m, d = _compile(zoe)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = zoe.state(xyz=rng.normal(size=3), rpy=rng.uniform(-0.5, 0.5, 3) * (1, 1, 4),
                      joints=rng.uniform(-0.6, 0.6, zoe.num_joints))
        peer.set_state(m, d, zoe, q)
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
    peer.set_state(m, d, zoe, q)
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


@needs_terrain
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
    model = bench.zoe_model()
    plane = Plane()
    q0 = bench.initial_state(model, plane)
    m, _ = _compile(model)
    duration, v = 2.0, peer.SPEED
    for dt in (0.001, 0.004):
        r = peer.run_mujoco(m, model, q0, dt, duration=duration)
        assert r.finite and r.bad_warnings == 0 and r.lift_m == 0.0
        x, y, z, roll, pitch, yaw = r.final
        assert x == pytest.approx(v * duration, rel=0.04)
        assert abs(y) < 1e-3 and abs(yaw) < 1e-3 and abs(roll) < 1e-3 and abs(pitch) < 1e-3
        assert r.steps == round(duration / dt) and r.t[-1] == pytest.approx(duration)
    ours = peer.run_ours(model, plane, q0, bench.DT_REF * 4, duration=duration, engine="python")
    x, y, z_ours, *_ = ours.final
    assert x == pytest.approx(v * duration, rel=0.04)
    assert abs(y) < 1e-3
    # ride height: MuJoCo's contact sinks ≈ 0.3 mm, ours 2 cm (kp = m g / (4 · 0.02 m))
    assert z - z_ours == pytest.approx(0.02, abs=0.003)


@needs_terrain
def test_rough_start_is_lifted_and_stability_check_flags(grid):
    model = bench.zoe_model()
    q0 = bench.initial_state(model, grid)
    m, _ = _compile(model, grid)
    ref = peer.run_mujoco(m, model, q0, 0.001, duration=1.0)
    assert 0.0 < ref.lift_m < 0.03  # the 7 cm wide cylinders penetrate where our disks touch
    assert ref.pose[0, 2] == pytest.approx(q0[6] + ref.lift_m, abs=1e-12)
    assert peer.check_stable(ref, ref).stable
    coarse = peer.run_mujoco(m, model, q0, 0.004, duration=1.0)
    assert peer.check_stable(coarse, ref).stable, coarse.reason
    bad = peer.MjRun(0.01, ref.t, ref.pose.copy(), 1.0, {}, 1)
    bad.pose[-1, 0] += 0.2
    assert not peer.check_stable(bad, ref).stable and "m off" in bad.reason
    bad.pose[-1, 0] -= 0.2
    bad.pose[5, 3] = 1.0  # rolled past 45°
    assert not peer.check_stable(bad, ref).stable and bad.reason == "tipped over"


def test_update_section_replaces_only_its_own_section(tmp_path):
    doc = tmp_path / "docs" / "benchmarks.md"
    update_section(doc, "a", "## A\n\nfirst")  # creates file and folder
    assert doc.read_text() == "<!-- BEGIN a -->\n## A\n\nfirst\n<!-- END a -->\n"
    head = "# Speed benchmarks\n\nintro text\n\n"
    doc.write_text(head + "<!-- BEGIN a -->\nold a\n<!-- END a -->\n\nmiddle\n\n<!-- BEGIN b -->\nold b\n"
                   "<!-- END b -->\ntail\n")
    update_section(doc, "b", "new b\nline 2\n")
    text = doc.read_text()
    assert text == (head + "<!-- BEGIN a -->\nold a\n<!-- END a -->\n\nmiddle\n\n<!-- BEGIN b -->\nnew b\nline 2\n"
                    "<!-- END b -->\ntail\n")
    update_section(doc, "b", "newer b")
    assert text.replace("new b\nline 2", "newer b") == doc.read_text()
    update_section(doc, "c", "c body")  # absent: appended at the end
    assert doc.read_text().endswith("tail\n\n<!-- BEGIN c -->\nc body\n<!-- END c -->\n")
    assert doc.read_text().startswith(head + "<!-- BEGIN a -->\nold a\n")
    doc.write_text("<!-- BEGIN d -->\nno end marker\n")
    with pytest.raises(ValueError, match="END d"):
        update_section(doc, "d", "x")
    assert doc.read_text() == "<!-- BEGIN d -->\nno end marker\n"
    with pytest.raises(ValueError):
        update_section(doc, "bad--name", "x")
