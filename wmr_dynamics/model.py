"""The WMR model: an ordered frame tree with 1-DOF joints, wheels and joint constraints (thesis §2.2.1).

A :class:`WmrModel` is an immutable description, compiled once into flat NumPy arrays (as Pinocchio's
``Model`` / MuJoCo's ``mjModel``).  Per-step code reads only those arrays:

================  ==============  =========================================================================
array             shape           meaning
================  ==============  =========================================================================
``parent``        (nf,)           parent frame index, ``parent[i] < i``; ``-1`` for the body (frame 0)
``joint_type``    (nf,)           0..5 = RX, RY, RZ, PX, PY, PZ (axis = type % 3); ``-1`` for the body
``actuated``      (nf,)           joint driven by an actuator (Table 2.2, col. 5)
``T0``            (nf, 4, 4)      pose w.r.t. parent at zero joint displacement, ``T_i^{p(i)} | θ=0``
``mass``          (nf,)           kg
``com``           (nf, 3)         centre of mass in the frame, m
``inertia``       (nf, 3, 3)      rotational inertia about the centre of mass, frame axes, kg·m²
``I_spatial``     (nf, 6, 6)      spatial inertia about the frame origin (eq. B.13)
``joint_lower``   (nf,)           joint limits (rad or m); ±inf if none
``wheel_frame``   (nw,)           frame index of each wheel (revolute about its own y axis)
``wheel_radii``   (nw,)           m, rolling radius: contact speed per rad/s of the joint (a wheel's outer
                                  radius; a track element's sprocket radius, belt speed = r_s·θ̇)
``wheel_kind``    (nw,)           0 wheel, 1 track arc, 2 lower-run point, 3 upper-run point (:class:`Wheel`)
``wheel_centre``  (nw, 3)         centre of the element's circle in the hub frame, m (0 for a wheel)
``wheel_circle``  (nw,)           radius of the element's circle for collision, m (a wheel's outer radius)
``wheel_run``     (nw, 3)         a run point's half spacing along its run in the hub frame, m (0: a wheel, an arc)
``wheel_slides``  (nw,)           True for a run point whose contact slides within ±``wheel_run`` on terrains
                                  with edges (False: a wheel, an arc, the ends of a run without roller arcs)
``wheel_widths``  (nw,)           m
``wheel_torus``   (nw,)           True for torus wheels (Auchter et al.)
``wheel_tube_radii`` (nw,)        tread crown (tube) radius of a torus wheel, m; 0 for a 3D circle
``A_joint``       (nc, ndof)      holonomic joint constraint rows, ``A_joint θ = b_joint`` (eqs. 2.25–2.26)
``b_joint``       (nc,)
================  ==============  =========================================================================

State layout (DESIGN.md, thesis eq. 2.10): ``q = [quat_xyzw(4); position(3); θ(nj)]``, joint-space
velocity (eq. 2.13) ``q̇' = [ω_b(3); v_b(3); θ̇(nj)]`` in body coordinates.  The joint of frame
``i >= 1`` has displacement ``θ[i-1]`` and joint-space index ``i + 5`` (thesis: "i + 5" with 1-based i).

Contact frames (one per wheel, §2.2.1) depend on the terrain, so they are not stored here: collision
detection (:mod:`wmr_dynamics.collision`) computes them each step and algorithms append them after the
``nf`` model frames.

Tracks (Contact Surface Motion, Pecka et al. §IV-C) are contact *elements* in the same arrays: a
:class:`Track` expands (:func:`track_elements`) into a rear arc, belt points along the lower run and a front
arc, all belonging to the track's sprocket frame.  Every algorithm that loops over "wheels" loops over
these elements too; only collision (where the element's circle is) and the Jacobian column of the sprocket
joint (the belt moves at r_s·θ̇ along the outline) tell them apart.  "Wheel" in array names means
"contact element".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics import spatial
from wmr_dynamics.errors import ModelError

JOINT_TYPES: tuple[str, ...] = ("RX", "RY", "RZ", "PX", "PY", "PZ")
G = 9.81  # m/s², the gravity used throughout the thesis's examples
MAX_CONTACTS = 62  # wheels + track elements (the compiled dynamic step's contact-set bit mask)


def is_revolute(joint_type: int) -> bool:
    """True for RX, RY, RZ codes."""
    return 0 <= joint_type < 3


@dataclass(frozen=True)
class Frame:
    """One frame of the tree (a row of thesis Table 2.2, plus mass properties).

    Attributes:
        name: frame name (for URDF models, the link name).
        parent: parent frame name; ``None`` for the body frame.
        joint_type: ``"RX"``…``"PZ"``: revolute about / prismatic along an axis of this frame;
            ``None`` for the body frame.
        joint_name: name of the joint (URDF joint name); defaults to the frame name.
        actuated: joint driven by an actuator.
        xyz, rpy: pose w.r.t. the parent frame at zero joint displacement, m and rad (R = Rz·Ry·Rx).
        mass: kg.  com: centre of mass in this frame, m.  inertia: 3×3 about the centre of mass, kg·m².
        limits: (lower, upper) joint displacement limits, rad or m.
        velocity_limit: largest joint speed, rad/s or m/s (URDF ``<limit velocity>``; inf when not given).
        aliases: other names that refer to this frame (e.g. URDF links merged into it by fixed joints).
    """

    name: str
    parent: str | None = None
    joint_type: str | None = None
    joint_name: str | None = None
    actuated: bool = False
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    mass: float = 0.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia: tuple[tuple[float, ...], ...] = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    limits: tuple[float, float] = (-np.inf, np.inf)
    velocity_limit: float = np.inf
    aliases: tuple[str, ...] = ()


ELEMENT_KINDS: tuple[str, ...] = ("wheel", "arc", "belt", "upper")  # Wheel.kind; index = the compiled wheel_kind code


@dataclass(frozen=True)
class Wheel:
    """A wheel attached to a frame that turns about its own y axis (thesis §2.2.1 convention), or one
    contact element of a track (``kind`` ``"arc"``, ``"belt"`` or ``"upper"``, made by :func:`track_elements`).

    ``radius`` is the outer radius (m).  A ``shape="cylinder"`` wheel is the thesis's thin 3D circle
    in the wheel's x–z plane; ``shape="torus"`` (Auchter et al.) has a tread of crown radius
    ``tube_radius`` whose centre line is a circle of radius ``radius - tube_radius``.

    Track elements (Pecka et al., Contact Surface Motion): the circle of radius ``radius`` lies in the
    x–z plane of the *hub* frame (the joint frame at zero displacement, which does not turn with the
    sprocket), centred at ``centre`` = (x, z) in it.  An ``"arc"`` element touches the ground wherever its
    circle does (searched like a wheel's rim: the belt wrapped around an end roller); a ``"belt"`` element
    is the circle's lowest point in the hub frame, a fixed point of the lower run; an ``"upper"`` element its
    highest point, a fixed point of the upper run (it touches when the track is turned over).  Each moves with
    the belt: its contact-point velocity along the outline is ``rolling_radius``·θ̇ (the sprocket radius r_s).
    A run point's ``run`` = (x, z) (m, hub frame) is half its spacing along the run: its direction is the belt's
    there, and on terrains with edges a point that ``slides`` (the default) moves its contact within ±run of the
    fixed point to the terrain's highest point under the belt
    (``compiled/collision.py``, :func:`~wmr_dynamics.compiled.collision._run_contact`); one that does not
    (the two ends of a run without roller arcs) stays at its fixed point.
    ``name`` identifies the element (default: the frame name); ``track`` names its track.
    """

    frame: str
    radius: float
    width: float = 0.0
    shape: str = "cylinder"
    tube_radius: float = 0.0
    kind: str = "wheel"
    centre: tuple[float, float] = (0.0, 0.0)
    rolling_radius: float | None = None
    name: str | None = None
    track: str | None = None
    run: tuple[float, float] = (0.0, 0.0)
    slides: bool = True

    @property
    def label(self) -> str:
        """The element's name: ``name`` or, for a wheel, its frame name."""
        return self.name or self.frame

    @property
    def rolling(self) -> float:
        """Contact speed per rad/s of the joint, m: ``rolling_radius`` or ``radius``."""
        return self.radius if self.rolling_radius is None else float(self.rolling_radius)


@dataclass(frozen=True)
class Track:
    """A non-deformable track (Pecka et al.): a sprocket joint (RY, in ``frame``) and a belt outline.

    The outline lies in the x–z plane of the sprocket's hub frame: a rear and a front end roller, circles
    of radii ``rear_radius`` / ``front_radius`` centred at ``rear`` / ``front`` = (x, z) m, joined by the
    lower and upper runs (their common tangents).  The belt moves at ``sprocket_radius``·θ̇ (m/s).
    ``belt_points`` fixed contact points sample the lower run between the rollers (each end roller is an
    arc element, so a flat lower run is sampled at belt_points + 2 evenly spaced points when the rollers
    have equal radii and heights); ``upper_points`` (default 0) sample the upper run the same way, for a
    track that may be turned over (a flipper raised over an obstacle, a vehicle on its back).  ``width`` (m)
    is the belt width (for the terramechanics models).

    ``roller_arcs`` False leaves the end rollers' arcs out: the ``belt_points`` (at least 2) then sample the
    lower run from the rear roller's lowest point to the front's, both ends included — the thesis author's
    C++ Talon's track (wmrde's ``npflat`` points).  Each contact is then one fixed point, so the track costs
    what the C++'s does (docs/tracks.md, "Speed").  The rollers' fronts do not touch: a step is met only once
    the front end point is inside it, and the penalty of that penetration lifts the track — mounted, not
    climbed by the belt.  The two end points do not slide (on terrains with edges a stretch of half a spacing
    about them would reach past the rollers, ahead of the belt, and feel an obstacle there); the points between
    them slide within their stretches as with the arcs.
    """

    frame: str
    sprocket_radius: float
    rear: tuple[float, float]
    front: tuple[float, float]
    rear_radius: float
    front_radius: float
    belt_points: int = 3
    width: float = 0.0
    name: str | None = None
    upper_points: int = 0
    roller_arcs: bool = True


def track_elements(track: Track) -> list[Wheel]:
    """The contact elements of a track: rear arc, ``belt_points`` lower-run points (rear to front),
    ``upper_points`` upper-run points (rear to front), front arc — without ``roller_arcs``: the lower-run points
    from the rear roller's lowest point to the front's, then the upper-run points.

    A belt point is the lowest point (in the hub frame) of a circle whose centre and radius interpolate the
    rollers', so the points lie on the line through the rollers' lowest points; an upper point is such a
    circle's highest point.  Raises :class:`ModelError` for a bad
    description (non-positive radii, a front roller not ahead of the rear one, a negative point count).
    """
    name = track.name or track.frame
    where = f"track '{name}'"
    (xr, zr), (xf, zf) = _finite2(track.rear, f"{where}: rear"), _finite2(track.front, f"{where}: front")
    for key in ("sprocket_radius", "rear_radius", "front_radius"):
        v = getattr(track, key)
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
            raise ModelError(f"{where}: {key} must be a positive number of metres, got {v!r}")
    if not xf - xr > track.rear_radius * 1e-6:
        raise ModelError(f"{where}: the front roller (x = {xf:g} m) must be ahead of the rear one (x = {xr:g} m)")
    for key in ("belt_points", "upper_points"):
        v = getattr(track, key)
        if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v <= 60):
            raise ModelError(f"{where}: {key} must be an integer in [0, 60], got {v!r}")
    arcs = track.roller_arcs
    if not isinstance(arcs, (bool, np.bool_)):
        raise ModelError(f"{where}: roller_arcs must be true or false, got {arcs!r}")
    if not arcs and track.belt_points < 2:
        raise ModelError(f"{where}: without roller_arcs the belt_points sample the lower run from end to end and "
                         f"must be at least 2 (its two ends), got {track.belt_points}")
    common = dict(frame=track.frame, width=float(track.width), rolling_radius=float(track.sprocket_radius),
                  track=name)
    out = [Wheel(radius=float(track.rear_radius), kind="arc", centre=(xr, zr), name=f"{name}/rear", **common)] \
        if arcs else []
    for kind, n, side in (("belt", int(track.belt_points), -1.0), ("upper", int(track.upper_points), 1.0)):
        # the points at s = k/(n+1) between the arcs, or (lower run without arcs) at s = k/(n-1) from end to end
        ends = kind == "belt" and not arcs
        gaps = n - 1 if ends else n + 1
        # each point's stretch: half the spacing along the line through the rollers' lowest (highest) points
        run = (0.5 * (xf - xr) / gaps, 0.5 * ((zf + side * track.front_radius) - (zr + side * track.rear_radius))
               / gaps)
        for k in range(n):
            s = k / gaps if ends else (k + 1) / gaps
            r = (1 - s) * track.rear_radius + s * track.front_radius
            out.append(Wheel(radius=float(r), kind=kind, centre=((1 - s) * xr + s * xf, (1 - s) * zr + s * zf),
                             name=f"{name}/{kind}{k}", run=run, slides=not (ends and k in (0, n - 1)),
                             **common))
    if arcs:
        out.append(Wheel(radius=float(track.front_radius), kind="arc", centre=(xf, zf), name=f"{name}/front",
                         **common))
    return out


def _finite2(v: object, what: str) -> tuple[float, float]:
    a = np.asarray(v, dtype=float) if isinstance(v, (tuple, list, np.ndarray)) else np.array([np.nan])
    if a.shape != (2,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what}: expected (x, z), two finite numbers of metres, got {v!r}")
    return float(a[0]), float(a[1])


@dataclass(frozen=True)
class JointConstraint:
    """Holonomic joint constraint ``c = Σ_j coeffs[j]·θ_j − value = 0`` (thesis eqs. 2.25, E.1).

    Keys of ``coeffs`` are joint names.  Kinematics enforces c = 0 exactly; dynamics enforces it through
    the joint-constraint model of eq. 2.74, a spring–damper on the residual, f = −(stiffness·c +
    damping·ċ) (N or N·m per unit of c), or ``model`` (a :class:`~wmr_dynamics.joint_models.JointModel`, any
    f(c, ċ); stiffness and damping are then its small-deflection linearization).  Without stiffness and
    model the constraint is rigid in dynamics too.
    """

    name: str
    coeffs: dict[str, float]
    value: float = 0.0
    stiffness: float | None = None
    damping: float | None = None
    model: Any = None


@dataclass(frozen=True)
class JointSpring:
    """Spring–damper joint model ``τ = −k(θ − rest) − c·θ̇`` (thesis eq. 2.74), SI units.

    ``model``: a :class:`~wmr_dynamics.joint_models.JointModel` of ``c = θ − rest`` replacing the linear law
    (e.g. :class:`~wmr_dynamics.joint_models.BumpStop`); stiffness and damping are then its small-deflection
    linearization (used by the stiff-ODE baseline and the MJCF export).
    """

    stiffness: float
    damping: float
    rest: float = 0.0
    model: Any = None


@dataclass(frozen=True, eq=False)
class WmrModel:
    """Immutable WMR model; build it with ``WmrModel(frames, wheels, ...)`` or :func:`wmr_dynamics.load_model`.

    ``frames[0]`` is the body frame; each later frame's parent must come earlier (``p(i) < i``).
    """

    frames: tuple[Frame, ...]
    wheels: tuple[Wheel, ...]
    joint_constraints: tuple[JointConstraint, ...] = ()
    joint_springs: dict[str, JointSpring] = field(default_factory=dict)
    name: str = "wmr"
    config: dict = field(default_factory=dict)
    source: str = ""
    fixed_frames: dict[str, tuple[str, NDArray]] = field(default_factory=dict)
    """Links merged or dropped by fixed joints: name → (model frame, 4×4 pose of the link in that frame)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "frames", tuple(self.frames))
        object.__setattr__(self, "wheels", tuple(self.wheels))
        object.__setattr__(self, "joint_constraints", tuple(self.joint_constraints))
        _validate(self)
        _compile(self)

    # ---- names and sizes ---------------------------------------------------------------------
    @property
    def frame_names(self) -> list[str]:
        return [f.name for f in self.frames]

    @property
    def joint_names(self) -> list[str]:
        """Names of the 1-DOF joints, in state order (``θ[k]`` is the joint of frame ``k + 1``)."""
        return [f.joint_name or f.name for f in self.frames[1:]]

    @property
    def actuated_joint_names(self) -> list[str]:
        return [f.joint_name or f.name for f in self.frames[1:] if f.actuated]

    @property
    def actuated_velocity_limits(self) -> NDArray:
        """(na,) speed limits of the actuated joints (URDF ``<limit velocity>``), rad/s or m/s; inf where none."""
        return np.array([f.velocity_limit for f in self.frames[1:] if f.actuated], dtype=float)

    @property
    def wheel_names(self) -> list[str]:
        """Wheel names in wheel order: a wheel's frame (URDF link) name, a track element's name."""
        return [w.label for w in self.wheels]

    @property
    def track_names(self) -> list[str]:
        """Names of the tracks (their elements' ``track``), in order of appearance."""
        return list(dict.fromkeys(w.track for w in self.wheels if w.track is not None))

    @property
    def wheel_joint_names(self) -> list[str]:
        return [self.joint_names[self.frame_index(w.frame) - 1] for w in self.wheels]

    @property
    def num_frames(self) -> int:
        return len(self.frames)

    @property
    def num_joints(self) -> int:
        return len(self.frames) - 1

    @property
    def num_dof(self) -> int:
        """Joint-space dimension: 6 (floating body) + number of joints."""
        return 6 + self.num_joints

    @property
    def num_states(self) -> int:
        """State-vector length: quaternion (4) + position (3) + joints."""
        return 7 + self.num_joints

    @property
    def num_wheels(self) -> int:
        return len(self.wheels)

    @property
    def num_joint_constraints(self) -> int:
        return len(self.joint_constraints)

    @property
    def total_mass(self) -> float:
        """kg."""
        return float(self.mass.sum())

    # ---- lookups -------------------------------------------------------------------------------
    def frame_index(self, name: str) -> int:
        """Index of a frame by frame name, merged-link alias or joint name."""
        try:
            return self._index[name]
        except KeyError:
            raise ModelError(f"model '{self.name}': no frame, link or joint named '{name}' "
                             f"(frames: {', '.join(self.frame_names)})") from None

    def joint_index(self, name: str) -> int:
        """Index into ``θ`` of a joint (by joint or frame name)."""
        i = self.frame_index(name)
        if i == 0:
            raise ModelError(f"model '{self.name}': '{name}' is the body frame, which has no 1-DOF joint")
        return i - 1

    def wheel_index(self, name: str) -> int:
        """Wheel number of a wheel given by frame (link) or joint name, or of a track element by its name
        (a track's frame or joint name gives its first element)."""
        names = self.wheel_names
        if name in names and name not in self._index:
            return names.index(name)
        fi = self.frame_index(name)
        hits = np.flatnonzero(self.wheel_frame == fi)
        if hits.size == 0:
            raise ModelError(f"model '{self.name}': '{name}' is not a wheel (wheels: {', '.join(self.wheel_names)})")
        return int(hits[0])

    def wheel_radius(self, name: str) -> float:
        """Outer radius (m) of a wheel given by frame (link) or joint name; a track element's rolling radius."""
        return float(self.wheel_radii[self.wheel_index(name)])

    # ---- states ----------------------------------------------------------------------------------
    def state(self, xyz: ArrayLike = (0.0, 0.0, 0.0), rpy: ArrayLike = (0.0, 0.0, 0.0),
              joints: dict[str, float] | ArrayLike | None = None) -> NDArray:
        """State vector ``q`` from a body pose (world frame, m and rad) and joint displacements.

        ``joints`` is a dict name → value (others 0) or a full array of ``num_joints`` values.
        """
        q = np.zeros(self.num_states)
        q[:4] = spatial.rpy_to_quat(_finite3(rpy, "rpy"))
        q[4:7] = _finite3(xyz, "xyz")
        if isinstance(joints, dict):
            for name, value in joints.items():
                q[7 + self.joint_index(name)] = float(value)
        elif joints is not None:
            theta = np.asarray(joints, dtype=float)
            if theta.shape != (self.num_joints,):
                raise ModelError(f"joints: expected {self.num_joints} values, got shape {theta.shape}")
            q[7:] = theta
        if not np.all(np.isfinite(q)):
            raise ModelError(f"model '{self.name}': state has non-finite joint values: {joints}")
        return q

    def neutral_state(self) -> NDArray:
        """Body at the world origin, level, all joints at zero."""
        return self.state()

    def summary(self) -> str:
        """Multi-line human-readable description (frames, joints, wheels, mass)."""
        lines = [f"WMR model '{self.name}'  ({self.source or 'built in code'})",
                 f"  frames {self.num_frames}, joints {self.num_joints}, DOF {self.num_dof}, "
                 f"wheels {self.num_wheels}, joint constraints {self.num_joint_constraints}, "
                 f"total mass {self.total_mass:.3f} kg"]
        lines.append(f"  {'i':>2} {'frame':<14}{'parent':<14}{'type':<5}{'act':<4}{'mass kg':>9}  xyz (m)")
        for i, f in enumerate(self.frames):
            wheel = ""
            if i in self.wheel_frame:
                own = np.flatnonzero(self.wheel_frame == i)
                w = self.wheels[int(own[0])]
                wheel = (f"  wheel r={w.radius:.4f} m w={w.width:.3f} m {w.shape}" if w.kind == "wheel" else
                         f"  track '{w.track}': {own.size} contact elements, sprocket r={w.rolling:.4f} m")
            lines.append(f"  {i:>2} {f.name:<14}{(f.parent or 'world'):<14}{(f.joint_type or '6DOF'):<5}"
                         f"{('Y' if f.actuated else 'N'):<4}{f.mass:>9.3f}  "
                         f"({f.xyz[0]:+.3f}, {f.xyz[1]:+.3f}, {f.xyz[2]:+.3f}){wheel}")
        for c in self.joint_constraints:
            terms = " + ".join(f"{v:g}·{k}" for k, v in c.coeffs.items())
            lines.append(f"  constraint {c.name}: {terms} = {c.value:g}")
        return "\n".join(lines)


def _finite3(v: ArrayLike, what: str) -> NDArray:
    a = np.asarray(v, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what}: expected 3 finite numbers, got {v!r}")
    return a


def _validate(m: WmrModel) -> None:
    if not m.frames:
        raise ModelError(f"model '{m.name}': no frames")
    seen: dict[str, int] = {}
    for i, f in enumerate(m.frames):
        where = f"model '{m.name}', frame '{f.name}'"
        if f.name in seen:
            raise ModelError(f"{where}: duplicate frame name")
        if i == 0:
            if f.parent is not None or f.joint_type is not None:
                raise ModelError(f"{where}: the first frame is the floating body; it has no parent or joint")
        else:
            if f.parent not in seen:
                raise ModelError(f"{where}: parent '{f.parent}' must be a frame listed before it (p(i) < i)")
            if f.joint_type not in JOINT_TYPES:
                raise ModelError(f"{where}: joint type {f.joint_type!r} is not one of {', '.join(JOINT_TYPES)}")
        for key, val in (("xyz", f.xyz), ("rpy", f.rpy), ("com", f.com)):
            if np.shape(val) != (3,) or not np.all(np.isfinite(val)):
                raise ModelError(f"{where}: {key} must be 3 finite numbers, got {val!r}")
        if not np.isfinite(f.mass) or f.mass < 0:
            raise ModelError(f"{where}: mass must be finite and >= 0 kg, got {f.mass!r}")
        _validate_inertia(np.asarray(f.inertia, dtype=float), where)
        seen[f.name] = i
    if sum(f.mass for f in m.frames) <= 0:
        raise ModelError(f"model '{m.name}': total mass is zero; a floating-base vehicle needs mass")
    if not m.wheels:
        raise ModelError(f"model '{m.name}': no wheels")
    for w in m.wheels:
        where = f"model '{m.name}', wheel '{w.frame}'"
        if w.frame not in seen:
            raise ModelError(f"{where}: no such frame")
        fr = m.frames[seen[w.frame]]
        if fr.joint_type != "RY":
            raise ModelError(f"{where}: a wheel frame must turn about its own y axis (RY), got {fr.joint_type}")
        if not (np.isfinite(w.radius) and w.radius > 0):
            raise ModelError(f"{where}: radius must be a positive number of metres, got {w.radius!r}")
        if not (np.isfinite(w.width) and w.width >= 0):
            raise ModelError(f"{where}: width must be >= 0 m, got {w.width!r}")
        if w.shape not in ("cylinder", "torus"):
            raise ModelError(f"{where}: shape must be 'cylinder' or 'torus', got {w.shape!r}")
        if w.shape == "torus" and not (0 < w.tube_radius < w.radius):
            raise ModelError(f"{where}: a torus wheel needs 0 < tube_radius < radius, got {w.tube_radius!r}")
        _validate_element(w, where)
    wheel_frames = [w.frame for w in m.wheels if w.kind == "wheel"]
    if len(set(wheel_frames)) != len(wheel_frames):
        raise ModelError(f"model '{m.name}': a frame is listed as a wheel twice")
    tracks_of = {}
    for w in m.wheels:
        if w.kind != "wheel":
            tracks_of.setdefault(w.frame, set()).add(w.track)
    for frame, names in tracks_of.items():
        if frame in wheel_frames or len(names) > 1:
            raise ModelError(f"model '{m.name}': frame '{frame}' carries a track and another track or wheel")
    labels = [w.label for w in m.wheels]
    if len(set(labels)) != len(labels):
        raise ModelError(f"model '{m.name}': two wheels or track elements share a name ({labels})")
    if len(m.wheels) > MAX_CONTACTS:
        raise ModelError(f"model '{m.name}': {len(m.wheels)} wheels and track elements; at most {MAX_CONTACTS} "
                         "(the dynamic step keeps the contact set in one 64-bit mask); use fewer belt_points")
    joint_names = {f.joint_name or f.name for f in m.frames[1:]} | set(seen)
    for c in m.joint_constraints:
        for j, coef in c.coeffs.items():
            if j not in joint_names or j == m.frames[0].name:
                raise ModelError(f"model '{m.name}', joint constraint '{c.name}': unknown joint '{j}'")
            if not np.isfinite(coef):
                raise ModelError(f"model '{m.name}', joint constraint '{c.name}': non-finite coefficient")
        if not c.coeffs or not np.isfinite(c.value):
            raise ModelError(f"model '{m.name}', joint constraint '{c.name}': needs joints and a finite value")
        for key in ("stiffness", "damping"):
            v = getattr(c, key)
            if v is not None and not (np.isfinite(v) and v >= 0):
                raise ModelError(f"model '{m.name}', joint constraint '{c.name}': {key} must be >= 0, got {v!r}")
    for j, s in m.joint_springs.items():
        if j not in joint_names:
            raise ModelError(f"model '{m.name}', joint spring: unknown joint '{j}'")
        if not all(np.isfinite([s.stiffness, s.damping, s.rest])) or s.stiffness < 0 or s.damping < 0:
            raise ModelError(f"model '{m.name}', joint spring '{j}': stiffness and damping must be >= 0")
    for where, row in [*((f"joint constraint '{c.name}'", c) for c in m.joint_constraints),
                       *((f"joint spring '{j}'", s) for j, s in m.joint_springs.items())]:
        if row.model is not None and not callable(getattr(row.model, "evaluate", None)):
            raise ModelError(f"model '{m.name}', {where}: model must be a joint model with evaluate(c, c_dot) "
                             f"(wmr_dynamics.joint_models), got {type(row.model).__name__}")


def _validate_element(w: Wheel, where: str) -> None:
    """The track-element fields of a :class:`Wheel`."""
    if w.kind not in ELEMENT_KINDS:
        raise ModelError(f"{where}: kind must be one of {', '.join(ELEMENT_KINDS)}, got {w.kind!r}")
    _finite2(w.centre, f"{where}: centre")
    _finite2(w.run, f"{where}: run")
    if w.kind in ("wheel", "arc") and tuple(w.run) != (0.0, 0.0):
        raise ModelError(f"{where}: only a run point ('belt', 'upper') has a stretch of run, got run={w.run!r}")
    if not isinstance(w.slides, (bool, np.bool_)):
        raise ModelError(f"{where}: slides must be true or false, got {w.slides!r}")
    if not (np.isfinite(w.rolling) and w.rolling > 0):
        raise ModelError(f"{where}: rolling_radius must be a positive number of metres, got {w.rolling_radius!r}")
    if w.kind == "wheel" and (tuple(w.centre) != (0.0, 0.0) or w.track is not None):
        raise ModelError(f"{where}: a wheel turns about its own axis (centre (0, 0), no track); "
                         "a track's elements have kind 'arc', 'belt' or 'upper'")
    if w.kind != "wheel" and w.shape != "cylinder":
        raise ModelError(f"{where}: a track element's outline is a thin circle (shape 'cylinder')")


def _validate_inertia(I: NDArray, where: str) -> None:  # noqa: E741
    if I.shape != (3, 3) or not np.all(np.isfinite(I)):
        raise ModelError(f"{where}: inertia must be a finite 3×3 matrix")
    if not np.allclose(I, I.T, atol=1e-12, rtol=1e-9):
        raise ModelError(f"{where}: inertia matrix is not symmetric")
    ev = np.linalg.eigvalsh(I)
    tol = 1e-9 * max(1.0, float(np.abs(ev).max()))
    if ev.min() < -tol:
        raise ModelError(f"{where}: inertia is not positive semi-definite (eigenvalues {ev})")
    # Physical principal moments satisfy the triangle inequality (a rigid body's moments).
    if ev[0] + ev[1] < ev[2] - tol:
        raise ModelError(f"{where}: principal moments {ev} violate the triangle inequality I1 + I2 >= I3")


def _compile(m: WmrModel) -> None:
    """Flatten the frame list into the arrays of the module docstring (done once)."""
    nf = len(m.frames)
    index = {f.name: i for i, f in enumerate(m.frames)}
    parent = np.full(nf, -1, dtype=np.int64)
    jtype = np.full(nf, -1, dtype=np.int64)
    actuated = np.zeros(nf, dtype=bool)
    T0 = np.zeros((nf, 4, 4))
    mass = np.zeros(nf)
    com = np.zeros((nf, 3))
    inertia = np.zeros((nf, 3, 3))
    I_sp = np.zeros((nf, 6, 6))
    lower = np.full(nf, -np.inf)
    upper = np.full(nf, np.inf)
    aliases = dict(index)
    for i, f in enumerate(m.frames):
        if i > 0:
            parent[i] = index[f.parent]
            jtype[i] = JOINT_TYPES.index(f.joint_type)
            actuated[i] = f.actuated
            lower[i], upper[i] = f.limits
            aliases.setdefault(f.joint_name or f.name, i)
        for a in f.aliases:
            aliases.setdefault(a, i)
        T0[i] = spatial.pose_to_transform(f.xyz, f.rpy)
        mass[i] = f.mass
        com[i] = f.com
        inertia[i] = f.inertia
        I_sp[i] = spatial.spatial_inertia(f.mass, f.com, f.inertia)
    wheel_frame = np.array([index[w.frame] for w in m.wheels], dtype=np.int64)
    wheel_radius = np.array([w.rolling for w in m.wheels], dtype=float)
    wheel_kind = np.array([ELEMENT_KINDS.index(w.kind) for w in m.wheels], dtype=np.int64)
    wheel_centre = np.array([(w.centre[0], 0.0, w.centre[1]) for w in m.wheels], dtype=float).reshape(-1, 3)
    wheel_circle = np.array([w.radius for w in m.wheels], dtype=float)
    wheel_run = np.array([(w.run[0], 0.0, w.run[1]) for w in m.wheels], dtype=float).reshape(-1, 3)
    wheel_slides = np.array([w.kind in ("belt", "upper") and bool(w.slides) for w in m.wheels], dtype=bool)
    wheel_width = np.array([w.width for w in m.wheels], dtype=float)
    wheel_torus = np.array([w.shape == "torus" for w in m.wheels], dtype=bool)
    wheel_tube = np.array([w.tube_radius if w.shape == "torus" else 0.0 for w in m.wheels], dtype=float)
    A_joint = np.zeros((len(m.joint_constraints), 6 + nf - 1))
    b_joint = np.zeros(len(m.joint_constraints))
    for r, c in enumerate(m.joint_constraints):
        for j, coef in c.coeffs.items():
            A_joint[r, 5 + aliases[j]] += coef  # joint of frame i has joint-space index i + 5
        b_joint[r] = c.value
    arrays = dict(parent=parent, joint_type=jtype, actuated=actuated, T0=T0, mass=mass, com=com,
                  inertia=inertia, I_spatial=I_sp, joint_lower=lower, joint_upper=upper,
                  wheel_frame=wheel_frame, wheel_radii=wheel_radius, wheel_widths=wheel_width,
                  wheel_kind=wheel_kind, wheel_centre=wheel_centre, wheel_circle=wheel_circle, wheel_run=wheel_run,
                  wheel_slides=wheel_slides,
                  wheel_torus=wheel_torus, wheel_tube_radii=wheel_tube, A_joint=A_joint, b_joint=b_joint)
    for key, arr in arrays.items():
        arr.setflags(write=False)
        object.__setattr__(m, key, arr)
    object.__setattr__(m, "_index", aliases)
