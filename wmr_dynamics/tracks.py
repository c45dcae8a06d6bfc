"""Tracked vehicles: what a model's tracks are, and the wheel approximations Pecka et al. compare them with.

A track (:class:`~wmr_dynamics.model.Track`) is a sprocket joint plus a belt outline; the model holds it as
contact elements (:func:`~wmr_dynamics.model.track_elements`) whose contact points move at the belt speed
r_s·θ̇ along the outline — Pecka, Zimmermann & Svoboda's Contact Surface Motion (CSM, §IV-C), here inside
the thesis's force balance, so every contact model and the large stable steps carry over.

:func:`wheel_approximation` builds the baselines of the paper's Table I ("4wheels", "8wheels"): each track
replaced by n wheels between its rollers, all driven at the belt speed (skid-steer with synchronized wheels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wmr_dynamics import spatial
from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import Frame, Wheel, WmrModel


@dataclass(frozen=True)
class TrackInfo:
    """One track of a model: its sprocket ``frame`` index, element numbers ``elements`` (rear arc, belt points,
    upper points, front arc; without ``roller_arcs``, the belt points from end to end, then the upper points),
    ``sprocket_radius`` (m) and the roller centres and radii in the hub frame (m)."""

    name: str
    frame: int
    elements: tuple[int, ...]
    sprocket_radius: float
    rear: tuple[float, float]
    front: tuple[float, float]
    rear_radius: float
    front_radius: float
    roller_arcs: bool = True


def tracks(model: WmrModel) -> list[TrackInfo]:
    """The model's tracks, in order of appearance (empty for a wheeled vehicle)."""
    out = []
    for name in model.track_names:
        idx = tuple(w for w, e in enumerate(model.wheels) if e.track == name)
        # the ends of the lower run: the arcs, or (without roller arcs) the first and last belt points, whose
        # circles are the rollers
        ends = [model.wheels[w] for w in idx if model.wheels[w].kind in ("arc", "belt")]
        rear, front = ends[0], ends[-1]
        out.append(TrackInfo(name, int(model.wheel_frame[idx[0]]), idx, rear.rolling, tuple(rear.centre),
                             tuple(front.centre), rear.radius, front.radius, rear.kind == "arc"))
    return out


def wheel_approximation(model: WmrModel, wheels_per_track: int) -> WmrModel:
    """``model`` with each track replaced by ``wheels_per_track`` wheels (Pecka et al.'s "4wheels"/"8wheels").

    The wheels are spaced evenly from the rear roller's centre to the front roller's, radii interpolated, each
    on its own actuated RY joint under the sprocket's parent at the hub pose; the track link's mass and spin
    inertia are shared equally among them (the total mass is unchanged).  A wheel's rate is the belt speed
    divided by its radius, so the vehicle's controller drives a side's wheels in sync, as in the paper.
    """
    if not (isinstance(wheels_per_track, (int, np.integer)) and wheels_per_track >= 2):
        raise ModelError(f"wheels_per_track must be an integer >= 2, got {wheels_per_track!r}")
    info = tracks(model)
    if not info:
        raise ModelError(f"model '{model.name}' has no tracks to approximate by wheels")
    sprockets = {t.frame: t for t in info}
    frames: list[Frame] = []
    wheels = [w for w in model.wheels if w.track is None]
    for i, f in enumerate(model.frames):
        t = sprockets.get(i)
        if t is None:
            frames.append(f)
            continue
        if any(int(model.parent[j]) == i for j in range(model.num_frames)):
            raise ModelError(f"model '{model.name}': track '{t.name}' carries other joints (flippers); "
                             "its wheel approximation is not supported")
        n = int(wheels_per_track)
        T_hub = spatial.pose_to_transform(f.xyz, f.rpy)
        inertia = np.asarray(f.inertia, dtype=float) / n
        for k in range(n):
            s = k / (n - 1)
            x = (1 - s) * t.rear[0] + s * t.front[0]
            z = (1 - s) * t.rear[1] + s * t.front[1]
            r = (1 - s) * t.rear_radius + s * t.front_radius
            xyz = T_hub[:3, :3] @ np.array([x, 0.0, z]) + T_hub[:3, 3]
            name = f"{t.name}_wheel{k}"
            frames.append(Frame(name=name, parent=f.parent, joint_type="RY", joint_name=f"{name}_joint",
                                actuated=True, xyz=tuple(xyz), rpy=f.rpy, mass=f.mass / n,
                                inertia=tuple(map(tuple, inertia)), velocity_limit=f.velocity_limit))
            width = model.wheels[t.elements[0]].width
            wheels.append(Wheel(frame=name, radius=float(r), width=width))
    sprocket_joints = {model.joint_names[t.frame - 1] for t in info} | {t.name for t in info}
    constraints = tuple(c for c in model.joint_constraints if not set(c.coeffs) & sprocket_joints)
    springs = {j: s for j, s in model.joint_springs.items() if j not in sprocket_joints}
    config = {k: v for k, v in model.config.items() if k not in ("tracks", "actuated_joints")}
    return WmrModel(frames=frames, wheels=wheels, joint_constraints=constraints, joint_springs=springs,
                    name=f"{model.name}_{wheels_per_track}wheels", config=config, source=model.source)
