"""URDF (+ vehicle YAML) → :class:`~wmr_dynamics.model.WmrModel`.

Parsing uses ``urdf_parser_py`` (the ROS URDF parser).  The mapping, documented for users in
``docs/vehicle_yaml.md``:

- floating base = the root link, or the link below a massless root (``base_footprint``) reached through
  a single fixed/floating joint;
- fixed joints are merged into the nearest movable ancestor frame, with exact combined mass, centre of
  mass and inertia (parallel-axis theorem);
- each revolute / continuous / prismatic joint becomes one frame (thesis §2.2.1), re-expressed so that
  its axis is +x, +y or +z of the frame (joint types RX…PZ; wheels always RY, the thesis convention);
- wheels = continuous joints whose child link has a cylinder collision, or joints named in the YAML;
- tracks = joints named under the YAML's ``tracks`` (the sprocket joint; its child link's ``<collision><box>``
  bounds the belt: length along x, height along z, rounded ends of radius height/2), expanded into contact
  elements by :func:`~wmr_dynamics.model.track_elements` (Pecka et al.'s Contact Surface Motion);
- ``<mimic>`` joints become holonomic joint constraints (thesis eq. 2.25).

All input problems raise :class:`~wmr_dynamics.errors.UrdfError` naming the file and the element.
"""

from __future__ import annotations

import io
import os
import sys
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from wmr_dynamics import spatial
from wmr_dynamics.errors import ImplausibleModelError, ModelError, UrdfError, VehicleConfigError
from wmr_dynamics.model import Frame, JointConstraint, JointSpring, Track, Wheel, WmrModel, track_elements
from wmr_dynamics.vehicle_schema import validate as validate_config

YAML_KEYS = {"name", "urdf", "base_link", "description", "actuated_joints", "wheels", "tracks", "joint_constraints",
             "constraint_models", "joint_springs", "contact", "actuators", "controller", "initial_pose", "cg_offset"}
WHEEL_KEYS = {"radius", "width", "shape", "tube_radius"}
TRACK_KEYS = {"sprocket_radius", "belt_points", "upper_points", "roller_arcs", "width", "rear", "front", "rear_radius",
              "front_radius"}
_AXES = "XYZ"

#: Plausibility limits of a wheeled robot's URDF (SI units); larger magnitudes are refused as wrong units or a
#: corrupt file (a 1e30 m wheel or a 1e30 kg·m² inertia makes every force balance fail).
MAX_LINK_MASS = 1e6          # kg, per link (a 400 t mining truck's body is 4e5 kg)
MAX_INERTIA = 1e7            # kg·m², any entry of a link's inertia matrix
MAX_OFFSET = 1e3             # m, joint origins, centres of mass and collision origins
MAX_WHEEL_RADIUS = 10.0      # m, as the vehicle YAML's wheels.*.radius


# ---- locating files --------------------------------------------------------------------------------
def data_dirs() -> list[Path]:
    """Folders that may hold the bundled ``urdf/`` and ``config/`` (source tree, then installed share)."""
    dirs = [Path(__file__).resolve().parent.parent]
    for prefix in {sys.prefix, sys.base_prefix}:
        dirs.append(Path(prefix) / "share" / "wmr_dynamics")
    try:  # a colcon/ament install
        from ament_index_python.packages import get_package_share_directory

        dirs.append(Path(get_package_share_directory("wmr_dynamics")))
    except Exception:  # noqa: BLE001 - ament is optional; any failure just means "not installed"
        pass
    return [d for d in dirs if (d / "urdf").is_dir()]


def bundled_vehicles() -> list[str]:
    """Names of the vehicles shipped in ``urdf/`` (``load_model`` accepts them)."""
    names: set[str] = set()
    for d in data_dirs():
        names.update(p.stem for p in (d / "urdf").glob("*.urdf"))
    return sorted(names)


def _resolve(name_or_path: str | Path, config: str | Path | dict | None) -> tuple[Path, Path | dict | None]:
    """Find the URDF file and the vehicle YAML (path or dict) for ``load_model``'s arguments."""
    text = str(name_or_path)
    p = Path(text).expanduser()
    if p.suffix.lower() in (".yaml", ".yml"):
        if not p.is_file():
            raise UrdfError(f"{p}: vehicle YAML not found")
        cfg = _read_yaml(p)
        if "urdf" not in cfg:
            raise UrdfError(f"{p}: key 'urdf' (path of the URDF, relative to this file) is missing")
        if not isinstance(cfg["urdf"], str) or not cfg["urdf"].strip():
            raise VehicleConfigError(f"{p}: urdf: expected the path of the URDF (relative to this file), got "
                                     f"{cfg['urdf']!r}")
        urdf = (p.parent / cfg["urdf"]).resolve()
        if not urdf.is_file():
            raise UrdfError(f"{p}: urdf: {cfg['urdf']!r} ({urdf}) is not a file")
        return urdf, p
    if p.suffix == "" and "/" not in text:
        for d in data_dirs():
            if (d / "urdf" / f"{text}.urdf").is_file():
                urdf = d / "urdf" / f"{text}.urdf"
                yml = d / "config" / f"{text}.yaml"
                return urdf, config if config is not None else (yml if yml.is_file() else None)
        raise UrdfError(f"{text}: not a bundled vehicle ({', '.join(bundled_vehicles()) or 'none found'}) "
                        "and not a path to a .urdf or vehicle .yaml file")
    if config is None:
        for cand in (p.parent / "config" / f"{p.stem}.yaml", p.parent.parent / "config" / f"{p.stem}.yaml",
                     p.with_suffix(".yaml")):
            if cand.is_file():
                config = cand
                break
    return p, config


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise UrdfError(f"{path}: vehicle YAML not found") from None
    except yaml.YAMLError as e:
        raise UrdfError(f"{path}: malformed YAML: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UrdfError(f"{path}: a vehicle YAML must be a mapping of keys, got {type(data).__name__}")
    return data


# ---- parsing ------------------------------------------------------------------------------------------
def _parse_urdf(path: Path):
    """Read and parse a URDF with urdf_parser_py, after our own checks for clear messages: the bytes are
    decoded as the XML declares (UTF-8 by default, UTF-16 with its byte-order mark), and duplicate link or
    joint names (which the parser would silently merge, losing a wheel) are refused."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UrdfError(f"{path}: URDF file not found") from None
    except OSError as e:
        raise UrdfError(f"{path}: cannot read URDF: {e}") from None
    raw = data.decode("utf-8", errors="replace")  # only to find xacro leftovers, with their line
    for marker in ("$(", "${"):
        k = raw.find(marker)
        if k >= 0:
            line = raw.count("\n", 0, k) + 1
            end = raw.find("}" if marker == "${" else ")", k)
            expr = raw[k:end + 1] if 0 < end - k < 80 else raw[k:k + 30].splitlines()[0]
            raise UrdfError(f"{path}: line {line}: unexpanded xacro expression '{expr}' "
                            "— run xacro first (xacro robot.urdf.xacro > robot.urdf)")
    try:
        root = ET.fromstring(data)  # bytes: the parser honours the XML declaration's encoding and a BOM
    except ET.ParseError as e:
        raise UrdfError(f"{path}: malformed XML: {e}") from None
    text = ET.tostring(root, encoding="unicode")
    if root.tag != "robot":
        raise UrdfError(f"{path}: root element is <{root.tag}>, expected <robot>")
    for tag in ("link", "joint"):
        seen: set[str] = set()
        for e in root.findall(tag):
            name = e.get("name")
            if name in seen:
                raise UrdfError(f"{path}: two <{tag}> elements are named '{name}' (names must be unique)")
            seen.add(name)
    from urdf_parser_py.urdf import URDF

    # urdf_parser_py prints warnings for tags it does not know (e.g. <gazebo> plugins); keep them quiet.
    try:
        with redirect_stderr(io.StringIO()):
            robot = URDF.from_xml_string(text)
    except Exception as e:  # noqa: BLE001 - the parser raises many types; report all as our error
        raise UrdfError(f"{path}: invalid URDF: {e}") from None
    return robot


@dataclass
class _Owned:
    """A URDF link folded into a model frame: the frame's link name and T_owner_link (URDF coordinates)."""

    owner: str
    T: NDArray


def _origin(elem) -> NDArray:
    if elem is None or elem.origin is None:
        return np.eye(4)
    xyz = elem.origin.xyz if elem.origin.xyz is not None else [0.0, 0.0, 0.0]
    rpy = elem.origin.rpy if elem.origin.rpy is not None else [0.0, 0.0, 0.0]
    return spatial.pose_to_transform(xyz, rpy)


def _align(axis: NDArray, target: int) -> NDArray:
    """Rotation R with R·e_target = axis (minimal rotation), used to make a joint axis a frame axis."""
    e = np.zeros(3)
    e[target] = 1.0
    c = float(e @ axis)
    v = np.cross(e, axis)
    s = np.linalg.norm(v)
    if s < 1e-12:
        if c > 0:
            return np.eye(3)
        # 180°: turn about z for x/y targets (keeps z up), about x for a z target.
        return spatial.rot_axis(2 if target != 2 else 0, np.pi)
    k = v / s
    K = spatial.skew(k)
    return np.eye(3) + s * K + (1 - c) * K @ K  # Rodrigues


def _link_mass(path: Path, link) -> tuple[float, NDArray, NDArray]:
    """(mass kg, com in link frame, inertia about com in link axes) of a URDF link; zeros if no inertial."""
    inertial = link.inertial
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    where = f"{path}: link '{link.name}' <inertial>"
    try:
        mass = float(inertial.mass)
    except (TypeError, ValueError):
        raise UrdfError(f"{where}: <mass value> is missing or not a number") from None
    if not np.isfinite(mass) or mass < 0:
        raise ImplausibleModelError(f"{where}: mass must be a finite number >= 0 kg, got {mass}")
    if mass > MAX_LINK_MASS:
        raise ImplausibleModelError(f"{where}: mass {mass:g} kg is beyond the plausible {MAX_LINK_MASS:g} kg "
                                    "(wrong units?)")
    I = np.zeros((3, 3)) if inertial.inertia is None else np.array(inertial.inertia.to_matrix(), dtype=float)  # noqa: E741
    if not np.all(np.isfinite(I)):
        raise UrdfError(f"{where}: <inertia> has NaN or inf entries")
    if np.abs(I).max() > MAX_INERTIA:
        raise ImplausibleModelError(f"{where}: <inertia> entry {np.abs(I).max():g} kg·m² is beyond the plausible "
                                    f"{MAX_INERTIA:g} kg·m² (wrong units?)")
    if np.abs(I).max() > 0 and np.linalg.eigvalsh(0.5 * (I + I.T)).min() < -1e-9 * np.abs(I).max():
        raise ImplausibleModelError(f"{where}: <inertia> is not positive semi-definite (principal moments "
                                    f"{np.linalg.eigvalsh(0.5 * (I + I.T)).round(9).tolist()} kg·m²)")
    if mass == 0 and np.abs(I).max() > 0:
        raise UrdfError(f"{where}: mass is zero but the inertia is not; give the link its mass")
    T = _origin(inertial)
    if np.abs(T[:3, 3]).max() > MAX_OFFSET:
        raise ImplausibleModelError(f"{where}: <origin xyz> {T[:3, 3].tolist()} m lies beyond ±{MAX_OFFSET:g} m")
    return mass, T[:3, 3].copy(), T[:3, :3] @ I @ T[:3, :3].T


def _combine(parts: list[tuple[float, NDArray, NDArray]]) -> tuple[float, NDArray, NDArray]:
    """Exact sum of rigid bodies (m, com, I_com) given in one frame (parallel-axis theorem)."""
    m = sum(p[0] for p in parts)
    if m == 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    c = sum(p[0] * p[1] for p in parts) / m
    I = np.zeros((3, 3))  # noqa: E741
    for mk, ck, Ik in parts:
        d = ck - c
        I += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, I


class _Builder:
    """Turns a parsed URDF + YAML dict into the frame list; one instance per load."""

    def __init__(self, path: Path, robot, cfg: dict, cfg_name: str) -> None:
        self.path, self.robot, self.cfg, self.cfg_name = path, robot, cfg, cfg_name
        self.links = {link.name: link for link in robot.links}
        self.children: dict[str, list] = {name: [] for name in self.links}
        self.parent_joint: dict[str, Any] = {}

    def err(self, msg: str) -> UrdfError:
        return UrdfError(f"{self.path}: {msg}")

    def check_tree(self) -> str:
        """Check links/joints form one tree; return the root link name."""
        if not self.links:
            raise self.err("no <link> elements")
        for j in self.robot.joints:
            for role, name in (("parent", j.parent), ("child", j.child)):
                if name not in self.links:
                    raise self.err(f"joint '{j.name}': {role} link '{name}' is not defined")
            if j.child in self.parent_joint:
                raise self.err(f"link '{j.child}' is the child of two joints ('{self.parent_joint[j.child].name}' "
                               f"and '{j.name}'); a URDF must be a tree (closed loops are not allowed)")
            self.parent_joint[j.child] = j
            self.children[j.parent].append(j)
        roots = [n for n in self.links if n not in self.parent_joint]
        if len(roots) != 1:
            if not roots:
                raise self.err("no root link: the joints form a cycle")
            raise self.err(f"several root links {roots}; a URDF must be a single tree")
        reached, stack = set(), [roots[0]]
        while stack:
            n = stack.pop()
            reached.add(n)
            stack.extend(j.child for j in self.children[n])
        if len(reached) != len(self.links):
            cyc = sorted(set(self.links) - reached)
            raise self.err(f"links {cyc} are not reachable from root '{roots[0]}': the joints form a cycle")
        return roots[0]

    def choose_base(self, root: str) -> tuple[str, NDArray]:
        """Floating base link and T_root_base (to report where a dropped massless root sits)."""
        if "base_link" in self.cfg:
            base = str(self.cfg["base_link"])
            if base not in self.links:
                raise UrdfError(f"{self.cfg_name}: base_link '{base}' is not a link of {self.path}")
            return base, np.eye(4)
        base, T = root, np.eye(4)
        while _link_mass(self.path, self.links[base])[0] == 0:
            kids = self.children[base]
            if len(kids) != 1 or kids[0].type not in ("fixed", "floating"):
                break
            T = T @ _origin(kids[0])
            base = kids[0].child
        return base, T

    def build(self) -> WmrModel:
        root = self.check_tree()
        base, T_root_base = self.choose_base(root)
        if base != root:
            # Anything hanging off the dropped root chain other than the base would be lost.
            chain, n = [], base
            while n != root:
                j = self.parent_joint[n]
                chain.append(j.parent)
                n = j.parent
            for n in chain:
                extra = [j.child for j in self.children[n] if j.child not in chain + [base]]
                if extra:
                    raise self.err(f"massless root chain link '{n}' also carries {extra}; set base_link in the YAML")
        wheel_cfg = self.wheel_config()
        self.track_cfg = self.track_config(wheel_cfg)
        wheel_joints = self.find_wheels(base, wheel_cfg)
        frames: list[Frame] = []
        wheels: list[Wheel] = []
        fixed: dict[str, tuple[str, NDArray]] = {}
        self.align: dict[str, NDArray] = {base: np.eye(3)}
        self.visit(base, None, None, np.eye(4), frames, wheels, wheel_joints, wheel_cfg, fixed)
        if not wheels:
            raise self.err("no wheels found: no continuous joint has a child link with a <cylinder> collision, "
                           "and the vehicle YAML names none under 'wheels' or 'tracks'")
        joints = {f.joint_name for f in frames[1:]}
        actuated = self.actuated(joints, {w.frame for w in wheels}, frames)
        frames = [f if f.parent is None else _replace(f, actuated=f.joint_name in actuated) for f in frames]
        constraints = self.constraint_models(self.mimic_constraints(joints) + self.yaml_constraints(joints))
        self.check_constraint_limits(constraints, {f.joint_name: f.limits for f in frames[1:]})
        springs = self.yaml_springs(joints)
        T_base_root = spatial.inv_homogeneous(T_root_base)
        if base != root:
            fixed[root] = (base, T_base_root)
        name = str(self.cfg.get("name") or self.robot.name or self.path.stem)
        if self.cfg.get("cg_offset") is not None:  # a calibrated centre of mass (wmr-calibrate --cg-offset)
            dx, dy = (float(v) for v in self.cfg["cg_offset"])
            b = frames[0]
            frames[0] = _replace(b, com=(b.com[0] + dx, b.com[1] + dy, b.com[2]))
        try:
            return WmrModel(frames, wheels, constraints, springs, name=name, config=dict(self.cfg),
                            source=str(self.path), fixed_frames=fixed)
        except ModelError as e:
            raise self.err(str(e)) from None

    def wheel_config(self) -> dict[str, dict]:
        wc = self.cfg.get("wheels") or {}
        if not isinstance(wc, dict):
            raise UrdfError(f"{self.cfg_name}: 'wheels' must map joint names to {{radius, width, ...}}")
        joints = {j.name for j in self.robot.joints}
        for jn, spec in wc.items():
            if jn not in joints:
                raise UrdfError(f"{self.cfg_name}: wheels: '{jn}' is not a joint of {self.path}")
            if not isinstance(spec, dict) or set(spec) - WHEEL_KEYS:
                raise UrdfError(f"{self.cfg_name}: wheels: '{jn}' must be a mapping with keys from "
                                f"{sorted(WHEEL_KEYS)}")
        return wc

    def track_config(self, wheel_cfg: dict) -> dict[str, dict]:
        tc = self.cfg.get("tracks") or {}
        if not isinstance(tc, dict):
            raise UrdfError(f"{self.cfg_name}: 'tracks' must map sprocket joint names to {{sprocket_radius, ...}}")
        joints = {j.name: j for j in self.robot.joints}
        for jn, spec in tc.items():
            if jn not in joints:
                raise UrdfError(f"{self.cfg_name}: tracks: '{jn}' is not a joint of {self.path}")
            if jn in wheel_cfg:
                raise UrdfError(f"{self.cfg_name}: '{jn}' is listed under both wheels and tracks")
            if joints[jn].type not in ("continuous", "revolute"):
                raise self.err(f"track joint '{jn}' is {joints[jn].type}; a sprocket turns on a continuous or "
                               "revolute joint")
            if not isinstance(spec, dict) or set(spec) - TRACK_KEYS:
                raise UrdfError(f"{self.cfg_name}: tracks: '{jn}' must be a mapping with keys from "
                                f"{sorted(TRACK_KEYS)}")
        return tc

    def track(self, j, link: str, spec: dict) -> list[Wheel]:
        """The contact elements of the track on sprocket joint ``j`` (see the module notes)."""
        where = f"track joint '{j.name}' (link '{link}')"
        outline = {k: spec[k] for k in ("rear", "front", "rear_radius", "front_radius", "width") if k in spec}
        box = self.box(self.links[link])
        if len(outline) < 4 or "width" not in outline:
            if box is None:
                raise self.err(f"{where}: the link has no <collision><box> bounding the belt, and the vehicle YAML "
                               "gives no rear, front, rear_radius and front_radius under tracks")
            size, Tb = box
            R = self.align[link].T @ Tb[:3, :3]  # box axes in the hub frame
            c = self.align[link].T @ Tb[:3, 3]
            ax = [int(np.argmax(np.abs(R[:, k]))) for k in range(3)]  # hub axis along each box axis
            if sorted(ax) != [0, 1, 2] or np.min(np.abs(R[ax, [0, 1, 2]])) < 1 - 1e-6:
                raise self.err(f"{where}: the belt's <collision><box> must be aligned with the sprocket frame "
                               "(edges along its x, y = the joint axis, z)")
            dims = {ax[k]: float(size[k]) for k in range(3)}
            length, width, height = dims[0], dims[1], dims[2]
            if not length > height > 0:
                raise self.err(f"{where}: the belt's <collision><box> must be longer (x: {length:g} m) than high "
                               f"(z: {height:g} m)")
            r = height / 2
            derived = dict(rear=(c[0] - length / 2 + r, c[2]), front=(c[0] + length / 2 - r, c[2]),
                           rear_radius=r, front_radius=r, width=width)
            outline = {**derived, **outline}
        if "width" not in outline:
            outline["width"] = 0.0
        n = spec.get("belt_points", 3)
        if isinstance(n, float) and n.is_integer():
            n = int(n)
        n_up = spec.get("upper_points", 0)
        if isinstance(n_up, float) and n_up.is_integer():
            n_up = int(n_up)
        track = Track(frame=link, sprocket_radius=float(spec.get("sprocket_radius", outline["rear_radius"])),
                      rear=tuple(outline["rear"]), front=tuple(outline["front"]),
                      rear_radius=float(outline["rear_radius"]), front_radius=float(outline["front_radius"]),
                      belt_points=n, width=float(outline["width"]), name=link, upper_points=n_up,
                      roller_arcs=spec.get("roller_arcs", True))
        try:
            return track_elements(track)
        except ModelError as e:
            raise self.err(f"{where}: {e}") from None

    def box(self, link) -> tuple[NDArray, NDArray] | None:
        """(size (3,), T_link_box) of the link's first box collision, if any."""
        from urdf_parser_py.urdf import Box

        for col in getattr(link, "collisions", []) or []:
            if col is not None and isinstance(col.geometry, Box):
                size = np.asarray(col.geometry.size, dtype=float)
                if size.shape != (3,) or not np.all(np.isfinite(size)) or size.min() <= 0 or size.max() > MAX_OFFSET:
                    raise self.err(f"link '{link.name}': <box size> must be three positive lengths (m), got "
                                   f"{col.geometry.size}")
                return size, _origin(col)
        return None

    def cylinder(self, link) -> tuple[float, float, NDArray] | None:
        """(radius, length, T_link_cylinder) of the link's first cylinder collision, if any."""
        from urdf_parser_py.urdf import Cylinder

        for col in getattr(link, "collisions", []) or []:
            if col is not None and isinstance(col.geometry, Cylinder):
                return float(col.geometry.radius), float(col.geometry.length), _origin(col)
        return None

    def find_wheels(self, base: str, wheel_cfg: dict) -> dict[str, tuple[float, float]]:
        """Wheel joint name → (radius, width) read from the cylinder collision (NaN if none)."""
        found: dict[str, tuple[float, float]] = {}
        for j in self.robot.joints:
            cyl = self.cylinder(self.links[j.child])
            if j.name in self.track_cfg:
                continue
            if j.name in wheel_cfg or (j.type == "continuous" and cyl is not None):
                if j.type not in ("continuous", "revolute"):
                    raise self.err(f"joint '{j.name}' is named as a wheel but is {j.type}; wheels turn on "
                                   "continuous or revolute joints")
                if cyl is None:
                    found[j.name] = (np.nan, np.nan)
                    continue
                radius, length, Tc = cyl
                if not (np.isfinite(radius) and 0 < radius <= MAX_WHEEL_RADIUS):
                    raise ImplausibleModelError(
                        f"{self.path}: wheel link '{j.child}' (joint '{j.name}'): <cylinder radius> must be in "
                        f"(0, {MAX_WHEEL_RADIUS:g}] m, got {radius:g}")
                if not (np.isfinite(length) and 0 <= length <= MAX_WHEEL_RADIUS):
                    raise ImplausibleModelError(
                        f"{self.path}: wheel link '{j.child}' (joint '{j.name}'): <cylinder length> must be in "
                        f"[0, {MAX_WHEEL_RADIUS:g}] m, got {length:g}")
                axis = self.joint_axis(j)
                if abs(abs(axis @ Tc[:3, 2]) - 1.0) > 1e-6:
                    raise self.err(f"wheel joint '{j.name}' turns about {axis.round(4).tolist()} but the cylinder "
                                   f"collision of link '{j.child}' has its axis along {Tc[:3, 2].round(4).tolist()}")
                off = Tc[:3, 3] - (Tc[:3, 3] @ axis) * axis
                if np.linalg.norm(off) > 1e-6:
                    raise self.err(f"wheel link '{j.child}': the cylinder collision is off the joint axis by "
                                   f"{np.linalg.norm(off):.4g} m (an eccentric wheel is not supported)")
                found[j.name] = (radius, length)
        return found

    def joint_axis(self, j) -> NDArray:
        axis = np.array(j.axis if j.axis is not None else [1.0, 0.0, 0.0], dtype=float)
        n = np.linalg.norm(axis)
        if not np.isfinite(n) or n < 1e-9:
            raise self.err(f"joint '{j.name}': <axis xyz> must be a nonzero finite vector, got {axis.tolist()}")
        return axis / n

    def visit(self, link: str, parent_frame: str | None, joint, T_parent_link: NDArray, frames: list, wheels: list,
              wheel_joints: dict, wheel_cfg: dict, fixed: dict) -> None:
        """Depth-first over the tree: one frame per movable joint, fixed-joint subtrees merged into it."""
        # Collect this frame's merged links and their offsets (URDF coordinates of `link`).
        owned = [(link, np.eye(4))]
        movable: list[tuple[Any, NDArray]] = []
        k = 0
        while k < len(owned):
            name, T = owned[k]
            for cj in self.children[name]:
                if cj.type == "fixed":
                    owned.append((cj.child, T @ _origin(cj)))
                elif cj.type in ("revolute", "continuous", "prismatic"):
                    movable.append((cj, T))
                else:
                    raise self.err(f"joint '{cj.name}': type '{cj.type}' is not supported below the floating base "
                                   "(use revolute, continuous, prismatic or fixed)")
            k += 1
        if joint is not None:
            self.align[link] = self.joint_alignment(joint)
        Ra = self.align[link]  # our frame = URDF link frame rotated by Ra
        parts = []
        for name, T in owned:
            m, c, I = _link_mass(self.path, self.links[name])  # noqa: E741
            if m > 0:
                R = Ra.T @ T[:3, :3]
                parts.append((m, Ra.T @ (T[:3, :3] @ c + T[:3, 3]), R @ I @ R.T))
            if name != link:
                Th = np.eye(4)
                Th[:3, :3] = Ra.T
                fixed[name] = (link, Th @ T)
        mass, com, inertia = _combine(parts)
        if joint is None:
            frames.append(Frame(name=link, mass=mass, com=tuple(com), inertia=tuple(map(tuple, inertia)),
                                aliases=tuple(n for n, _ in owned[1:])))
        else:
            frames.append(self.joint_frame(joint, link, parent_frame, T_parent_link, mass, com, inertia,
                                           tuple(n for n, _ in owned[1:])))
            if joint.name in wheel_joints:
                if mass <= 0:
                    raise self.err(f"wheel link '{link}' has no mass; the dynamic model needs each wheel's mass "
                                   "and spin inertia (add an <inertial>)")
                wheels.append(self.wheel(joint, link, wheel_joints[joint.name], wheel_cfg.get(joint.name, {})))
            elif joint.name in self.track_cfg:
                if mass <= 0:
                    raise self.err(f"track link '{link}' has no mass; the dynamic model needs the belt's and "
                                   "sprocket's spin inertia (add an <inertial>)")
                wheels.extend(self.track(joint, link, self.track_cfg[joint.name] or {}))
        for cj, T in movable:
            Th = np.eye(4)
            Th[:3, :3] = Ra.T
            self.visit(cj.child, link, cj, Th @ T, frames, wheels, wheel_joints, wheel_cfg, fixed)

    def joint_alignment(self, j) -> NDArray:
        """Ra with Ra·e_k = joint axis: k = y for wheels (thesis convention), else the nearest axis."""
        axis = self.joint_axis(j)
        named = set(self.cfg.get("wheels") or {}) | set(self.cfg.get("tracks") or {})
        is_wheel = j.name in named or (j.type == "continuous" and self.cylinder(self.links[j.child]) is not None)
        return _align(axis, 1 if is_wheel else int(np.argmax(np.abs(axis))))

    def joint_frame(self, j, link: str, parent: str, T_parent_link: NDArray, mass: float, com: NDArray,
                    inertia: NDArray, aliases: tuple) -> Frame:
        """Frame for movable joint j (axis already aligned, see joint_alignment), limits, mass properties."""
        Ra = self.align[link]
        target = int(np.argmax(np.abs(Ra.T @ self.joint_axis(j))))
        xyz = _origin(j)[:3, 3]
        if not np.all(np.isfinite(xyz)) or np.abs(xyz).max() > MAX_OFFSET:
            raise ImplausibleModelError(f"{self.path}: joint '{j.name}': <origin xyz> {xyz.tolist()} m must be finite "
                                        f"and within ±{MAX_OFFSET:g} m")
        T0 = T_parent_link @ _origin(j)
        T0[:3, :3] = T0[:3, :3] @ Ra
        kind = "P" if j.type == "prismatic" else "R"
        lim = (-np.inf, np.inf)
        if j.type != "continuous" and j.limit is not None:
            lim = (float(j.limit.lower), float(j.limit.upper))
            if not (np.all(np.isfinite(lim)) and lim[0] <= lim[1]):
                raise self.err(f"joint '{j.name}': <limit lower upper> must be finite with lower <= upper, got {lim}")
        return Frame(name=link, parent=parent, joint_type=kind + _AXES[target], joint_name=j.name,
                     xyz=tuple(T0[:3, 3]), rpy=tuple(spatial.rot_to_rpy(T0[:3, :3])), mass=mass, com=tuple(com),
                     inertia=tuple(map(tuple, 0.5 * (inertia + inertia.T))), limits=lim,
                     velocity_limit=self.velocity_limit(j), aliases=aliases)

    def velocity_limit(self, j) -> float:
        """The joint's ``<limit velocity>`` (rad/s or m/s); inf when absent or 0 (URDFs often write 0 for
        "not specified"); an error when negative or not finite."""
        v = None if j.limit is None else j.limit.velocity
        if v is None or v == 0:
            return float("inf")
        if not (np.isfinite(v) and v > 0):
            raise self.err(f"joint '{j.name}': <limit velocity> must be a positive speed (rad/s or m/s), got {v}")
        return float(v)

    def wheel(self, j, link: str, urdf_dims: tuple[float, float], spec: dict) -> Wheel:
        radius = float(spec.get("radius", urdf_dims[0]))
        width = float(spec.get("width", urdf_dims[1] if np.isfinite(urdf_dims[1]) else 0.0))
        where = f"wheel joint '{j.name}' (link '{link}')"
        if not np.isfinite(radius):
            raise self.err(f"{where}: no radius — the link has no <cylinder> collision and the vehicle YAML gives "
                           "no 'radius' under wheels")
        if radius <= 0:
            raise self.err(f"{where}: radius must be > 0 m, got {radius}")
        shape = str(spec.get("shape", "cylinder"))
        return Wheel(frame=link, radius=radius, width=width, shape=shape,
                     tube_radius=float(spec.get("tube_radius", 0.0)))

    def actuated(self, joints: set[str], wheel_links: set[str], frames: list[Frame]) -> set[str]:
        if "actuated_joints" not in self.cfg:
            return {f.joint_name for f in frames[1:] if f.name in wheel_links}
        names = self.cfg["actuated_joints"]
        if not isinstance(names, list):
            raise UrdfError(f"{self.cfg_name}: actuated_joints must be a list of joint names")
        unknown = [n for n in names if n not in joints]
        if unknown:
            raise UrdfError(f"{self.cfg_name}: actuated_joints: {unknown} are not movable joints of {self.path}")
        return set(names)

    def mimic_constraints(self, joints: set[str]) -> list[JointConstraint]:
        """``<mimic joint=J multiplier=m offset=b>`` on K → θ_K − m θ_J = b (eq. 2.25 for m = −1)."""
        out = []
        for j in self.robot.joints:
            if j.mimic is None:
                continue
            if j.mimic.joint not in joints or j.name not in joints:
                raise self.err(f"joint '{j.name}': <mimic joint='{j.mimic.joint}'> must name a movable joint")
            m = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
            b = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
            coeffs = {j.name: 1.0}
            coeffs[j.mimic.joint] = coeffs.get(j.mimic.joint, 0.0) - m
            out.append(JointConstraint(name=f"mimic_{j.name}", coeffs=coeffs, value=b))
        return out

    def yaml_constraints(self, joints: set[str]) -> list[JointConstraint]:
        out = []
        for k, c in enumerate(self.cfg.get("joint_constraints") or []):
            where = f"{self.cfg_name}: joint_constraints[{k}]"
            if not isinstance(c, dict) or not isinstance(c.get("coeffs"), dict) or not c["coeffs"]:
                raise UrdfError(f"{where}: needs 'coeffs: {{joint: coefficient, ...}}' (and optional 'value', 'name')")
            unknown = [n for n in c["coeffs"] if n not in joints]
            if unknown:
                raise UrdfError(f"{where}: {unknown} are not movable joints of {self.path}")
            try:
                coeffs = {str(n): float(v) for n, v in c["coeffs"].items()}
                value = float(c.get("value", 0.0))
                model = {key: float(c[key]) for key in ("stiffness", "damping") if key in c}
            except (TypeError, ValueError):
                raise UrdfError(f"{where}: coefficients, value, stiffness and damping must be numbers") from None
            out.append(JointConstraint(name=str(c.get("name", f"constraint_{k}")), coeffs=coeffs, value=value,
                                       **model))
        return out

    def check_constraint_limits(self, constraints: list[JointConstraint], limits: dict[str, tuple]) -> None:
        """A constraint on one joint (c·θ = value) must hold it within its URDF ``<limit lower upper>``: a
        constraint outside them would drive the joint through its hard stop."""
        for c in constraints:
            if len(c.coeffs) != 1:
                continue
            (joint, coef), = c.coeffs.items()
            lo, hi = limits.get(joint, (-np.inf, np.inf))
            if coef == 0:
                raise ImplausibleModelError(f"{self.cfg_name}: joint constraint '{c.name}': the coefficient of "
                                            f"'{joint}' is 0")
            theta = c.value / coef
            tol = 1e-9 * max(1.0, abs(theta))
            if not lo - tol <= theta <= hi + tol:
                raise ImplausibleModelError(
                    f"{self.cfg_name}: joint constraint '{c.name}' holds joint '{joint}' at {theta:g}, outside its "
                    f"URDF limits [{lo:g}, {hi:g}] ({self.path})")

    def constraint_models(self, constraints: list[JointConstraint]) -> list[JointConstraint]:
        """Apply ``constraint_models: {name: {stiffness, damping[, model, ...]}}`` (eq. 2.74, a registered joint
        model: :mod:`wmr_dynamics.joint_models`), e.g. to mimic constraints."""
        from dataclasses import replace

        models = self.cfg.get("constraint_models") or {}
        by_name = {c.name: k for k, c in enumerate(constraints)}
        for name, spec in models.items():
            if name not in by_name:
                raise UrdfError(f"{self.cfg_name}: constraint_models: no joint constraint named '{name}' "
                                f"(constraints: {sorted(by_name)}; a <mimic> on joint J is named 'mimic_J')")
            where = f"{self.cfg_name}: constraint_models: '{name}'"
            model, base = self._joint_model(spec, where)
            if "rest" in base:
                raise UrdfError(f"{where}: a constraint has no rest (its value is in joint_constraints)")
            constraints[by_name[name]] = replace(constraints[by_name[name]], model=model, **base)
        return constraints

    @staticmethod
    def _joint_model(spec: object, where: str) -> tuple:
        from wmr_dynamics.joint_models import joint_model_from_config

        try:
            return joint_model_from_config(spec, where)  # type: ignore[arg-type]
        except ModelError as e:
            raise UrdfError(str(e)) from None

    def yaml_springs(self, joints: set[str]) -> dict[str, JointSpring]:
        springs = self.cfg.get("joint_springs") or {}
        out = {}
        for n, s in springs.items():
            if n not in joints:
                raise UrdfError(f"{self.cfg_name}: joint_springs: '{n}' is not a movable joint of {self.path}")
            model, base = self._joint_model(s, f"{self.cfg_name}: joint_springs: '{n}'")
            out[n] = JointSpring(model=model, **base)
        return out


def _replace(f: Frame, **kw) -> Frame:
    from dataclasses import replace

    return replace(f, **kw)


def load_model(name_or_path: str | Path, config: str | Path | dict | None = None) -> WmrModel:
    """Build a :class:`WmrModel` from a bundled vehicle name, a URDF path or a vehicle YAML path.

    Args:
        name_or_path: ``"rocky7"`` (see :func:`bundled_vehicles`), ``path/to/robot.urdf`` or
            ``path/to/vehicle.yaml`` (whose ``urdf:`` key names the URDF).
        config: vehicle YAML path or an already-loaded dict; by default ``config/<urdf stem>.yaml`` beside
            or one level above the URDF's folder is used if it exists.  Keys: ``docs/vehicle_yaml.md``.

    Raises:
        UrdfError: naming the file and element, for any problem with the URDF or the YAML.
    """
    if config is not None and not isinstance(config, (str, os.PathLike, dict)):
        raise UrdfError(f"config: expected a vehicle YAML path or a dict of its keys, got {type(config).__name__} "
                        f"{config!r}")
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise UrdfError(f"name_or_path: expected a vehicle name or a path, got {type(name_or_path).__name__}")
    urdf_path, cfg_src = _resolve(name_or_path, config)
    if isinstance(cfg_src, dict):
        cfg, cfg_name = dict(cfg_src), "config"
    elif cfg_src is None:
        cfg, cfg_name = {}, "config"
    else:
        cfg_path = Path(cfg_src)
        cfg, cfg_name = _read_yaml(cfg_path), str(cfg_path)
    unknown = set(cfg) - YAML_KEYS
    if unknown:
        raise UrdfError(f"{cfg_name}: unknown keys {sorted(unknown)}; allowed: {sorted(YAML_KEYS)}")
    validate_config(cfg, cfg_name)
    if isinstance(cfg.get("contact"), str):  # ``contact: coulomb``: the short form of {model: coulomb}
        cfg["contact"] = {"model": cfg["contact"]}
    robot = _parse_urdf(urdf_path)
    model = _Builder(urdf_path, robot, cfg, cfg_name).build()
    _check_models(model, cfg, cfg_name)
    return model


def _check_models(model: WmrModel, cfg: dict, cfg_name: str) -> None:
    """Build the YAML's actuator and contact models once at load time, so a missing or wrong parameter is
    reported naming the vehicle YAML (not later, when a dynamic simulation is set up)."""
    from wmr_dynamics.actuators import actuator_from_config
    from wmr_dynamics.contact_models import contact_model_from_config

    try:
        if cfg.get("actuators"):
            actuator_from_config(dict(cfg["actuators"]), len(model.actuated_joint_names))
        if cfg.get("contact"):
            contact_model_from_config(dict(cfg["contact"]), model.wheel_radii, model.wheel_widths,
                                      mass=model.total_mass, n_wheels=model.num_wheels)
    except ModelError as e:
        raise VehicleConfigError(f"{cfg_name}: {e}") from None
