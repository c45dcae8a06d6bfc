"""MJCF (MuJoCo's XML) of a :class:`~wmr_dynamics.model.WmrModel` on a height grid — for MuJoCo as a peer and
test oracle.

This module writes text only; the package never imports MuJoCo (a test oracle and peer benchmark, never a
runtime dependency: DESIGN.md).  Load the result with ``mujoco.MjModel.from_xml_string``.  The choices
(benchmarks/mujoco_peer.py explains why):

- one body per frame with the same parent tree, pose ``T0[i]`` in the parent, the frame's mass, centre of mass
  and inertia about the centre of mass (``fullinertia``; ``inertiafromgeom="false"``, so geoms add no mass); a
  free joint ``root`` for the body frame; hinge / slide joints along the joint-frame axis of our joint types
  RX…PZ (our joint frame is the child frame at θ = 0, ``T_i^p = T0 · J(θ)``, as MuJoCo's joint in the child
  body).  Joints held by a single-joint constraint θ = 0 of the model or named in ``locked`` are left out: the
  child body is welded to its parent, which holds them exactly.  Other one- and two-joint linear constraints
  become joint equalities.  Joint limits are left out by default (our dynamic model does not enforce them).
  Massless moving frames get ``TINY_MASS`` / ``TINY_INERTIA`` (MuJoCo rejects massless moving bodies).
- wheels: cylinder geoms (radius, width of the model) about the wheel frame's y axis; the only colliding
  geoms, with the terrain only.  (Our "cylinder" wheel contacts the ground along its mid-plane circle, thesis
  §2.2.1 — MuJoCo's has a width, so on a side slope its edge touches first.)
- terrain: an ``hfield`` on the grid's nodes (:func:`hfield_xml`); flat ground (no grid) is a plane at z = 0.
- contact: friction μ (default 1, the linear model's), ``condim 3`` and the pyramidal friction cone;
  ``solref`` / ``solimp`` MuJoCo's defaults unless given (:func:`solref_from_linear`: matched to our linear
  contact's vertical mode).
- actuators: one ``velocity`` actuator ``<joint>_vel`` per wheel joint with gain ``kv`` (N·m·s/rad), no torque
  limit; ``integrator="implicitfast"`` by default.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics import spatial
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import HeightGrid

KV = 2000.0  # N·m·s/rad: velocity-actuator gain (VEHICLES.md: Zoë PI Kp = 2000)
MU = 1.0
SOLREF = (0.02, 1.0)  # MuJoCo's default (timeconst s, dampratio)
SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)  # MuJoCo's default
TINY_MASS, TINY_INERTIA = 1e-9, 1e-12  # kg, kg·m²: given to massless frames with a joint (MuJoCo needs mass)


def _f(x: float) -> str:
    return f"{float(x):.10g}"


def _v(a: Sequence[float]) -> str:
    return " ".join(_f(x) for x in a)


def _wxyz(R: NDArray) -> NDArray:
    """MuJoCo's (w, x, y, z) quaternion of a rotation matrix (ours are (x, y, z, w))."""
    x, y, z, w = spatial.rot_to_quat(R)
    return np.array([w, x, y, z])


def solref_from_linear(model: WmrModel) -> tuple[float, float]:
    """MuJoCo ``solref = (timeconst, dampratio)`` matching the vertical mode of our linear contact on one wheel.

    kp (N/m), kd (N·s/m) from the model's ``contact.params`` (config/zoe.yaml), m = total mass / wheels:
    ω = √(kp/m), ζ = kd / (2√(kp·m)); MuJoCo at full impedance: ω = 1/(timeconst·dampratio), ζ = dampratio.
    """
    p = (model.config.get("contact") or {}).get("params") or {}
    m = model.total_mass / model.num_wheels
    kp = float(p.get("kp", m * 9.81 / 0.02))
    kd = float(p.get("kd", kp / 20.0))
    omega, zeta = np.sqrt(kp / m), kd / (2.0 * np.sqrt(kp * m))
    return float(1.0 / (omega * zeta)), float(zeta)


def hfield_xml(grid: HeightGrid, base: float = 0.5, name: str = "terrain") -> tuple[str, str]:
    """(asset, geom) MJCF elements of an ``hfield`` with its vertices on ``grid``'s nodes.

    MuJoCo's hfield of ``size = (rx, ry, sz, base)`` spans [−rx, rx] × [−ry, ry] around its geom's position,
    ``ncol`` vertices along x and ``nrow`` along y, with vertex height ``pos_z + sz·data`` for data in
    [0, 1].  So rx = (x_max − x_min)/2, ry = (y_max − y_min)/2, the geom at the grid's centre and at
    z = min height, sz = height range, data = (h − h_min)/sz.  The ``elevation`` attribute lists rows from
    +y to −y (image order), so our rows (j = 0 at y_min) go in reversed.  Between the nodes MuJoCo's surface
    is two triangles per cell, split along the diagonal from node (i, j) to (i+1, j+1), where our grid is
    bilinear: they agree on the nodes and on the cell edges and differ inside a cell by up to
    |h11 − h10 − h01 + h00| / 4 (at the cell centre).  Outside the grid MuJoCo has no ground (ours continues
    the edge heights); the benchmark stays well inside.
    """
    h = np.asarray(grid.heights, dtype=float)
    lo, hi = float(h.min()), float(h.max())
    sz = max(hi - lo, 1e-6)
    data = (h - lo) / sz
    rx, ry = (grid.x_max - grid.x_min) / 2.0, (grid.y_max - grid.y_min) / 2.0
    cx, cy = (grid.x_max + grid.x_min) / 2.0, (grid.y_max + grid.y_min) / 2.0
    elev = " ".join(f"{v:.8g}" for v in data[::-1].ravel())
    asset = (f'<hfield name="{name}" nrow="{grid.ny}" ncol="{grid.nx}" size="{_v((rx, ry, sz, base))}" '
             f'elevation="{elev}"/>')
    geom = (f'<geom name="{name}" type="hfield" hfield="{name}" pos="{_v((cx, cy, lo))}" contype="0" '
            f'conaffinity="1"/>')
    return asset, geom


def _locks_and_equalities(model: WmrModel, locked: Sequence[str]) -> tuple[set[str], list[str]]:
    """Joints to leave out (welded at 0) and MJCF ``<joint>`` equalities for the model's joint constraints."""
    names = model.joint_names
    out = {names[model.joint_index(j)] for j in locked}
    eqs = []
    for c in model.joint_constraints:
        terms = [(names[model.joint_index(j)], float(k)) for j, k in c.coeffs.items() if k != 0.0]
        if len(terms) == 1 and c.value == 0.0:
            out.add(terms[0][0])
        elif len(terms) == 1:
            (a, ka), = terms
            eqs.append(f'<joint name="{c.name}" joint1="{a}" polycoef="{_v((c.value / ka, 0, 0, 0, 0))}"/>')
        elif len(terms) == 2:  # ka·θa + kb·θb = v  →  θa = v/ka − (kb/ka)·θb
            (a, ka), (b, kb) = terms
            eqs.append(f'<joint name="{c.name}" joint1="{a}" joint2="{b}" '
                       f'polycoef="{_v((c.value / ka, -kb / ka, 0, 0, 0))}"/>')
        else:
            raise ValueError(f"joint constraint '{c.name}' couples {len(terms)} joints; MJCF joint equalities "
                             "take at most two")
    bad = [e for e in eqs if any(f'"{j}"' in e for j in out)]
    if bad:
        raise ValueError(f"a joint equality refers to a locked joint: {bad}")
    return out, eqs


def mjcf_from_model(model: WmrModel, terrain_grid: HeightGrid | None = None, *, dt: float = 0.004,
                    locked: Sequence[str] = (), kv: float = KV, mu: float = MU,
                    solref: tuple[float, float] = SOLREF, solimp: Sequence[float] = SOLIMP,
                    limits: bool = False, integrator: str = "implicitfast") -> str:
    """MJCF XML of ``model`` on ``terrain_grid`` (flat plane at z = 0 if None); choices: the module docstring.

    ``dt`` (s) is the compiled ``timestep`` (it can be changed later through ``MjModel.opt.timestep``).
    ``locked``: joint names welded at θ = 0 (as are joints of single-joint constraints θ = 0 of the model).
    ``solref``: (timeconst s, dampratio), default MuJoCo's (0.02, 1); :func:`solref_from_linear` gives the
    setting matched to our linear contact (benchmarks/mujoco_peer.py: why it is not the default).  Bodies, joints and
    actuators take the frame, joint and ``<joint>_vel`` names; the body frame is MuJoCo body 1, its free joint
    ``root``.
    """
    out, eqs = _locks_and_equalities(model, locked)
    tc, dr = solref
    names = model.joint_names
    wheel_of = {int(f): k for k, f in enumerate(model.wheel_frame)}
    children: dict[int, list[int]] = {i: [] for i in range(model.num_frames)}
    for i in range(1, model.num_frames):
        children[int(model.parent[i])].append(i)

    def body(i: int, indent: str) -> list[str]:
        T = model.T0[i]
        pos = (0.0, 0.0, 0.0) if i == 0 else T[:3, 3]
        quat = (1.0, 0.0, 0.0, 0.0) if i == 0 else _wxyz(T[:3, :3])
        lines = [f'{indent}<body name="{model.frames[i].name}" pos="{_v(pos)}" quat="{_v(quat)}">']
        ind = indent + "  "
        if i == 0:
            lines.append(f'{ind}<freejoint name="root"/>')
        elif names[i - 1] not in out:
            jt = int(model.joint_type[i])
            kind = "hinge" if jt < 3 else "slide"
            axis = np.eye(3)[jt % 3]
            extra = ""
            lo, hi = model.joint_lower[i], model.joint_upper[i]
            if limits and np.isfinite(lo) and np.isfinite(hi):
                extra += f' range="{_f(lo)} {_f(hi)}"'
            s = model.joint_springs.get(names[i - 1]) or model.joint_springs.get(model.frames[i].name)
            if s is not None:
                extra += f' stiffness="{_f(s.stiffness)}" damping="{_f(s.damping)}" springref="{_f(s.rest)}"'
            lines.append(f'{ind}<joint name="{names[i - 1]}" type="{kind}" axis="{_v(axis)}"{extra}/>')
        if model.mass[i] > 0:
            I = model.inertia[i]  # noqa: E741
            full = (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2])
            lines.append(f'{ind}<inertial pos="{_v(model.com[i])}" mass="{_f(model.mass[i])}" '
                         f'fullinertia="{_v(full)}"/>')
        elif i == 0 or names[i - 1] not in out:  # MuJoCo rejects massless bodies that move
            lines.append(f'{ind}<inertial pos="0 0 0" mass="{_f(TINY_MASS)}" diaginertia="{_v([TINY_INERTIA] * 3)}"/>')
        if i in wheel_of:
            k = wheel_of[i]
            half = max(float(model.wheel_widths[k]) / 2.0, 1e-3)
            lines.append(f'{ind}<geom name="{model.frames[i].name}_tire" type="cylinder" '
                         f'size="{_f(model.wheel_radii[k])} {_f(half)}" quat="0.7071067811865476 '
                         f'0.7071067811865476 0 0" contype="1" conaffinity="0"/>')
        for c in children[i]:
            lines += body(c, ind)
        lines.append(f"{indent}</body>")
        return lines

    if terrain_grid is None:
        asset, ground = "", '<geom name="terrain" type="plane" size="0 0 1" contype="0" conaffinity="1"/>'
    else:
        asset, ground = hfield_xml(terrain_grid)
    acts = [f'<velocity name="{names[int(f) - 1]}_vel" joint="{names[int(f) - 1]}" kv="{_f(kv)}"/>'
            for f in model.wheel_frame if names[int(f) - 1] not in out]
    xml = [f'<mujoco model="{model.name}">',
           '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
           f'  <option timestep="{_f(dt)}" integrator="{integrator}" gravity="0 0 -9.81" cone="pyramidal"/>',
           "  <default>",
           f'    <geom condim="3" friction="{_f(mu)} 0.005 0.0001" solref="{_f(tc)} {_f(dr)}" '
           f'solimp="{_v(solimp)}"/>',
           "  </default>",
           f"  <asset>{asset}</asset>" if asset else "",
           "  <worldbody>",
           f"    {ground}",
           *body(0, "    "),
           "  </worldbody>",
           "  <actuator>", *(f"    {a}" for a in acts), "  </actuator>",
           *(["  <equality>", *(f"    {e}" for e in eqs), "  </equality>"] if eqs else []),
           "</mujoco>"]
    return "\n".join(x for x in xml if x) + "\n"


def qpos_from_state(mjm: object, model: WmrModel, q: NDArray) -> NDArray:
    """MuJoCo's ``qpos`` for our state ``q = [quat xyzw; position; θ]`` on an ``MjModel`` ``mjm`` compiled from
    :func:`mjcf_from_model`: the free joint ``root`` gets the position and the quaternion (w, x, y, z), each
    joint its θ by name; joints welded in the export (absent from ``mjm``) are skipped.  Uses only ``mjm``'s
    attributes, so the package still never imports MuJoCo."""
    qpos = np.array(mjm.qpos0, dtype=float)
    adr = int(mjm.joint("root").qposadr[0])
    qpos[adr:adr + 3] = q[4:7]
    qpos[adr + 3:adr + 7] = (q[3], q[0], q[1], q[2])
    for k, name in enumerate(model.joint_names):
        try:
            qpos[int(mjm.joint(name).qposadr[0])] = q[7 + k]
        except KeyError:
            continue  # welded joint
    return qpos
