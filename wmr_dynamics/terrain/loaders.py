"""Terrain file loaders: wmrde height grids, heightmap images / .npy with a YAML header, Gazebo SDF worlds,
and the :func:`load_terrain` dispatcher used by the command-line tools.  See ``docs/terrain.md``."""

from __future__ import annotations

import functools
import math
import os
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from wmr_dynamics.errors import TerrainError, TerrainFileError
from wmr_dynamics.terrain.surfaces import (
    Box,
    Composite,
    HeightGrid,
    OrientedBox,
    Plane,
    Ramp,
    Steps,
    Terrain,
    _num,
    _vec,
    gaussian_rough_terrain,
)

#: SDF numbers (poses, sizes, m) beyond this magnitude are refused as implausible
SDF_MAX_ABS = 1e7


def _file_errors(load: Callable[..., T]) -> Callable[..., T]:
    """Report every TerrainError of a file loader as a TerrainFileError (the messages already name the file)."""
    @functools.wraps(load)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return load(*args, **kwargs)
        except TerrainFileError:
            raise
        except TerrainError as e:
            raise TerrainFileError(str(e)) from None
    return wrapper


# ------------------------------------------------------------------------------------------------ loaders
def _read_text(path: Path, what: str) -> str:
    if not path.is_file():
        raise TerrainError(f"{path}: {what} file not found")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TerrainError(f"{path}: cannot read {what} file: {e}") from None


def _numbers(tokens: list[str], where: str) -> np.ndarray:
    try:
        return np.array(tokens, dtype=float)
    except ValueError:
        k, t = next((k, t) for k, t in enumerate(tokens) if not _is_float(t))  # error path only
        raise TerrainError(f"{where}: value #{k + 1} {t[:40]!r} is not a number") from None


def _is_float(t: str) -> bool:
    try:
        float(t)
        return True
    except ValueError:
        return False


@_file_errors
def load_wmrde_grid(path: str | os.PathLike[str], *, fill_holes: bool = False) -> HeightGrid:
    """Load a wmrde height grid (the thesis's benchmark terrains, ``data/rough_terrains/``).

    Format: comma-separated numbers ``xmin,xmax,nx,ymin,ymax,ny,`` then nx·ny heights (m), x index
    fastest (node (i, j) at position i + j·nx, x_i = xmin + i·(xmax−xmin)/(nx−1)); world frame, metres.
    """
    p = Path(path)
    tokens = [t for t in (s.strip() for s in _read_text(p, "wmrde grid").replace("\n", ",").split(",")) if t]
    if len(tokens) < 6:
        raise TerrainError(f"{p}: bad header: expected 'xmin,xmax,nx,ymin,ymax,ny,' then heights, "
                           f"found only {len(tokens)} value(s)")
    head = _numbers(tokens[:6], f"{p}: header")
    xmin, xmax, nxf, ymin, ymax, nyf = (float(v) for v in head)
    if not (np.isfinite(head).all() and nxf == int(nxf) >= 2 and nyf == int(nyf) >= 2 and xmax > xmin
            and ymax > ymin):
        raise TerrainError(f"{p}: bad header {tokens[:6]}: need xmin < xmax, ymin < ymax and integer "
                           "nx, ny >= 2")
    nx, ny = int(nxf), int(nyf)
    if len(tokens) - 6 != nx * ny:
        raise TerrainError(f"{p}: wrong count of heights: header says nx*ny = {nx}*{ny} = {nx * ny}, "
                           f"file has {len(tokens) - 6}")
    h = _numbers(tokens[6:], f"{p}: heights").reshape(ny, nx)
    return HeightGrid(xmin, ymin, (xmax - xmin) / (nx - 1), (ymax - ymin) / (ny - 1), h,
                      fill_holes=fill_holes, source=str(p))


def _read_image(img: Path, where: str, z_min: float | None, z_max: float | None, scale: float) -> np.ndarray:
    """Heights (m) of a .png (0 → z_min, full scale → z_max) or .npy (metres × scale), rows as in the file."""
    suffix = img.suffix.lower()
    if suffix not in (".png", ".npy"):
        raise TerrainError(f"{where}: unknown image format {img.suffix!r} of {img} (accepted: .png, .npy)")
    if not img.is_file():
        raise TerrainError(f"{where}: image file {img} not found")
    if suffix == ".npy":
        try:
            a = np.load(img, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise TerrainError(f"{where}: cannot read {img}: {e}") from None
        if a.ndim != 2 or a.dtype.kind not in "biuf":
            raise TerrainError(f"{where}: {img} must hold a 2-D array of real numbers, got {a.dtype} shape {a.shape}")
        return a.astype(float) * scale
    if z_min is None or z_max is None:
        raise TerrainError(f"{where}: a PNG heightmap ({img.name}) needs z_min and z_max (m)")
    if z_max < z_min:
        raise TerrainError(f"{where}: z_max ({z_max:g} m) is below z_min ({z_min:g} m)")
    import matplotlib.image as mpimg

    try:
        a = np.asarray(mpimg.imread(img), dtype=float)
    except (OSError, ValueError, SyntaxError) as e:  # what Pillow raises for unreadable files
        raise TerrainError(f"{where}: cannot read PNG {img}: {e}") from None
    if a.ndim == 3:
        a = a[..., :3].mean(axis=-1) if a.shape[-1] >= 3 else a[..., 0]
    return z_min + a * (z_max - z_min)


_HEIGHTMAP_KEYS = ("image", "resolution", "origin", "z_min", "z_max", "height_scale", "row0")


@_file_errors
def load_heightmap(path: str | os.PathLike[str], *, resolution: float | None = None,
                   origin: ArrayLike | None = None, z_min: float | None = None, z_max: float | None = None,
                   height_scale: float | None = None, row0: str | None = None,
                   fill_holes: bool = False) -> HeightGrid:
    """Load a heightmap image: a YAML header (``.yaml``/``.yml``) or a bare ``.npy``/``.png`` path.

    Header keys: ``image`` (a .png or .npy, relative to the YAML), ``resolution`` (m per pixel, both
    axes), ``origin`` ([x, y] m, world position of node (0, 0) = the image's **bottom-left** pixel), for
    PNG ``z_min``/``z_max`` (m: pixel value 0 → z_min, full scale (255, 65535) → z_max; RGB(A) → mean of
    RGB), for .npy optional ``height_scale`` (heights in metres × scale, default 1), optional ``row0``:
    ``top`` (default: image row 0 is the largest y, as in images and ROS maps, so rows are flipped) or
    ``bottom`` (row 0 is the smallest y, as `HeightGrid.heights`).  Keyword arguments override header
    values; for a bare image path they are the only source (``origin`` defaults to (0, 0)).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    given = {k: v for k, v in (("resolution", resolution), ("origin", origin), ("z_min", z_min),
                               ("z_max", z_max), ("height_scale", height_scale), ("row0", row0))
             if v is not None}
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            head = yaml.safe_load(_read_text(p, "heightmap YAML"))
        except yaml.YAMLError as e:
            raise TerrainError(f"{p}: invalid YAML: {e}") from None
        if not isinstance(head, dict):
            raise TerrainError(f"{p}: heightmap header must be a mapping of {', '.join(_HEIGHTMAP_KEYS)}")
        unknown = sorted(str(k) for k in head if k not in _HEIGHTMAP_KEYS)
        if unknown:
            raise TerrainError(f"{p}: unknown key(s) {unknown}; accepted: {', '.join(_HEIGHTMAP_KEYS)}")
        cfg = {**head, **given}
        for key in ("image", "resolution", "origin"):
            if cfg.get(key) is None:
                raise TerrainError(f"{p}: missing key '{key}'")
        if not isinstance(cfg["image"], str) or not cfg["image"].strip():
            raise TerrainError(f"{p}: 'image' must be a file name (.png or .npy), got {cfg['image']!r}")
        img = p.parent / str(cfg["image"])
    elif suffix in (".npy", ".png"):
        img, cfg = p, {"origin": (0.0, 0.0), **given}
        if cfg.get("resolution") is None:
            raise TerrainError(f"{p}: a bare {suffix} heightmap needs resolution= (m per pixel)")
    else:
        raise TerrainError(f"{p}: unknown heightmap file type {p.suffix!r} (accepted: .yaml, .yml, .npy, "
                           ".png)")
    w = str(p)
    res = _num(f"{w}: resolution", cfg["resolution"], positive=True)
    org = _vec(f"{w}: origin", cfg["origin"], 2)
    zlo, zhi = (None if cfg.get(k) is None else _num(f"{w}: {k}", cfg[k]) for k in ("z_min", "z_max"))
    order = cfg.get("row0", "top")
    if order not in ("top", "bottom"):
        raise TerrainError(f"{w}: row0 must be 'top' or 'bottom', got {order!r}")
    h = _read_image(img, w, zlo, zhi, _num(f"{w}: height_scale", cfg.get("height_scale", 1.0)))
    return HeightGrid(org[0], org[1], res, res, h[::-1] if order == "top" else h, fill_holes=fill_holes,
                      source=f"{w} ({img.name})")


T = TypeVar("T")
_Pose = tuple[float, float, float, float | None, Any]
"""x, y, z (m, world); yaw (rad) if the rotation is about z only, else None; the rotation matrix (world from the
element's frame; None while the rotation is about z only, when Rz(yaw) is implied)."""

def _sdf_floats(elem: ET.Element | None, n: int, default: tuple[float, ...], where: str) -> tuple[float, ...]:
    if elem is None or not (elem.text or "").strip():
        return default
    vals = tuple(float(v) for v in (elem.text or "").split() if _is_float(v))
    if len(vals) != n or len((elem.text or "").split()) != n or not all(map(math.isfinite, vals)):
        raise TerrainError(f"{where}: <{elem.tag}> must hold {n} numbers, got {elem.text!r}")
    if any(abs(v) > SDF_MAX_ABS for v in vals):
        raise TerrainError(f"{where}: <{elem.tag}> {elem.text.strip()!r}: values beyond ±{SDF_MAX_ABS:g} m are not "
                           "plausible (wrong units?)")
    return vals


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll): SDF's fixed-axis roll–pitch–yaw (as URDF's and thesis App. A)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _pose_matrix(pose: _Pose) -> np.ndarray:
    """The rotation matrix of a pose."""
    if pose[4] is not None:
        return pose[4]
    return _rpy_matrix(0.0, 0.0, pose[3])


def _sdf_pose(elem: ET.Element, parent: _Pose, where: str) -> _Pose:
    """Compose the parent pose with ``elem``'s <pose> (x y z roll pitch yaw, any rotation): position
    p_parent + R_parent p, rotation R_parent R.  Rotations about z alone are composed as yaw sums (exact)."""
    pe = elem.find("pose")
    if pe is not None and pe.get("relative_to"):
        raise TerrainError(f"{where}: <pose relative_to=...> is not supported")
    x, y, z, roll, pitch, yaw = _sdf_floats(pe, 6, (0.0,) * 6, where)
    if pe is not None and pe.get("degrees", "false").strip().lower() in ("true", "1"):
        roll, pitch, yaw = (math.radians(v) for v in (roll, pitch, yaw))
    px, py, pz, pyaw, _ = parent
    upright = abs(roll) <= 1e-9 and abs(pitch) <= 1e-9
    if upright and pyaw is not None:
        c, s = math.cos(pyaw), math.sin(pyaw)
        return px + c * x - s * y, py + s * x + c * y, pz + z, pyaw + yaw, None
    Rp = _pose_matrix(parent)
    t = Rp @ np.array([x, y, z])
    return px + float(t[0]), py + float(t[1]), pz + float(t[2]), None, Rp @ _rpy_matrix(roll, pitch, yaw)


def _sdf_uri(uri: str, world: Path, where: str) -> Path:
    uri = uri.strip()
    if uri.startswith("model://"):
        raise TerrainError(f"{where}: model URIs are not resolvable here ({uri}); use a path relative to the "
                           "world file or file://")
    if "://" in uri and not uri.startswith("file://"):
        raise TerrainError(f"{where}: unsupported URI scheme in {uri!r}")
    p = Path(uri.removeprefix("file://"))
    return p if p.is_absolute() else world.parent / p


def _sdf_geometry(geom: ET.Element, pose: _Pose, world: Path, where: str, out: dict[str, list]) -> None:
    for g in geom:
        w = f"{where} <{g.tag}>"
        try:
            _sdf_shape(g, pose, world, w, where, out)
        except TerrainError as e:
            msg = str(e)
            raise TerrainError(msg if msg.startswith(str(world)) else f"{w}: {msg}") from None


def _sdf_shape(g: ET.Element, pose: _Pose, world: Path, w: str, where: str, out: dict[str, list]) -> None:
    """One <geometry> child ``g`` → the terrain pieces of ``out`` (its constructors' errors are prefixed by the
    caller with ``w``, the file and element)."""
    x, y, z, yaw, _ = pose
    if g.tag == "plane":
        n = _sdf_floats(g.find("normal"), 3, (0.0, 0.0, 1.0), w)
        if yaw is not None:
            c, s = math.cos(yaw), math.sin(yaw)
            out["plane"].append(Plane((c * n[0] - s * n[1], s * n[0] + c * n[1], n[2]), (x, y, z)))
        else:
            out["plane"].append(Plane(_pose_matrix(pose) @ np.array(n), (x, y, z)))
    elif g.tag == "box":
        size = _sdf_floats(g.find("size"), 3, (1.0, 1.0, 1.0), w)
        if yaw is not None:  # upright: its top at z + lz/2
            out["box"].append(Box((x, y), size[:2], z + 0.5 * size[2], yaw, base=-math.inf))
        else:  # tilted (roll or pitch): the solid box's top surface
            out["box"].append(OrientedBox((x, y, z), size, rotation=_pose_matrix(pose), base=-math.inf))
    elif g.tag == "heightmap":
        if not (g.findtext("uri") or "").strip():
            raise TerrainError(f"{w}: missing <uri>")
        img = _sdf_uri(g.findtext("uri") or "", world, w)
        sx, sy, sz = _sdf_floats(g.find("size"), 3, (1.0, 1.0, 1.0), w)
        ox, oy, oz = _sdf_floats(g.find("pos"), 3, (0.0, 0.0, 0.0), w)
        if yaw is None:
            raise TerrainError(f"{w}: a tilted heightmap (a pose with roll or pitch) is not supported")
        if abs(yaw) > 1e-9:
            raise TerrainError(f"{w}: a rotated heightmap (yaw={yaw:g} rad) is not supported")
        h = _read_image(img, w, 0.0, sz, 1.0)[::-1] + z + oz    # PNG: 0..size z; .npy: metres
        dx, dy = sx / max(h.shape[1] - 1, 1), sy / max(h.shape[0] - 1, 1)
        out["heightmap"].append(HeightGrid(x + ox - 0.5 * sx, y + oy - 0.5 * sy, dx, dy, h,
                                           source=f"{w} ({img.name})"))
    elif g.tag != "empty":
        warnings.warn(f"{where}: ignoring <{g.tag}> geometry (not terrain)", stacklevel=5)


def _sdf_walk(elem: ET.Element, pose: _Pose, world: Path, out: dict[str, list]) -> None:
    """Collect the terrain of the models and includes directly under ``elem`` (a world or a model)."""
    for m in elem.findall("model"):
        where = f"{world}: model '{m.get('name', '?')}'"
        mp = _sdf_pose(m, pose, where)
        for link in m.findall("link"):
            lw = f"{where} link '{link.get('name', '?')}'"
            lp = _sdf_pose(link, mp, lw)
            for col in link.findall("collision"):
                cw = f"{lw} collision '{col.get('name', '?')}'"
                if (geom := col.find("geometry")) is not None:
                    _sdf_geometry(geom, _sdf_pose(col, lp, cw), world, cw, out)
        _sdf_walk(m, mp, world, out)                              # nested models
    for inc in elem.findall("include"):
        uri = (inc.findtext("uri") or "").strip().rstrip("/")
        where = f"{world}: <include> {uri!r}"
        if uri == "model://ground_plane":      # Gazebo's stock ground: the plane z = 0 of its pose
            ip = _sdf_pose(inc, pose, where)
            n = (0.0, 0.0, 1.0) if ip[3] is not None else _pose_matrix(ip)[:, 2]
            out["plane"].append(Plane(n, ip[:3]))
        elif uri != "model://sun":             # the stock light is no terrain
            warnings.warn(f"{where}: ignored: model URIs are not resolvable here (only model://ground_plane "
                          "is known); inline the model if it holds terrain", stacklevel=3)


@_file_errors
def load_sdf_world(path: str | os.PathLike[str]) -> Terrain:
    """Load the terrain of a Gazebo SDF world as a :class:`Composite` (world frame, metres).

    Reads every ``<model>`` (nested ones too) → ``<link>`` → ``<collision>`` → ``<geometry>``, composing
    model, link and collision ``<pose>`` (x y z roll pitch yaw, any rotation): ``<plane>`` (``<normal>`` in the
    collision frame, through the pose position), ``<box>`` (``<size>``; upright: a :class:`Box` whose top is at
    pose z + size z / 2, taken to reach down to the ground; tilted by roll or pitch — a ramp — an
    :class:`OrientedBox`, the top surface of the rotated solid), ``<heightmap>`` (not rotated)
    (``<uri>`` = a .png or .npy, a plain path or ``file://``, relative to the world file; ``<size>`` x y z
    spans the image centred at ``<pos>``, PNG values 0..full scale → pos z .. pos z + size z, .npy values
    are metres added to pos z; image row 0 is the largest y).  ``<include>`` of ``model://ground_plane``
    is the plane z = 0 (of the include's pose); other includes are ignored with a warning (model URIs are
    not resolvable here).  Other geometry (meshes, cylinders, …) is ignored with a warning.  If there is
    no plane and no heightmap, the plane z = 0 is the base.
    """
    p = Path(path)
    if not p.is_file():
        raise TerrainError(f"{p}: SDF world file not found")
    try:
        root = ET.fromstring(p.read_bytes())  # bytes: the parser honours the XML declaration's encoding and a BOM
    except OSError as e:
        raise TerrainError(f"{p}: cannot read SDF world file: {e}") from None
    except ET.ParseError as e:
        raise TerrainError(f"{p}: invalid XML: {e}") from None
    world = root if root.tag == "world" else root.find("world")
    if world is None:
        raise TerrainError(f"{p}: no <world> element (root is <{root.tag}>)")
    out: dict[str, list] = {"plane": [], "box": [], "heightmap": []}
    _sdf_walk(world, (0.0, 0.0, 0.0, 0.0, None), p, out)
    if not any(out.values()):
        raise TerrainError(f"{p}: no terrain geometry (<plane>, <box> or <heightmap> in a model's "
                           "link/collision/geometry) found")
    base: list[Terrain] = [] if out["plane"] or out["heightmap"] else [Plane()]
    return Composite(base + out["plane"] + out["heightmap"] + out["box"])


_PRESETS = ("flat", "rough", "ramp", "steps")
_STEPS_DEFAULT = {"x_start": 1.0, "step_length": 0.5, "step_height": 0.1, "n_steps": 5}


def terrain_presets() -> list[str]:
    """Names accepted by :func:`load_terrain` as presets."""
    return list(_PRESETS)


def load_terrain(spec: Terrain | str | os.PathLike[str], **kwargs: Any) -> Terrain:
    """Turn a terrain spec into a :class:`Terrain` (world frame, metres).

    ``spec`` is a Terrain (returned as is); a preset: ``"flat"`` (:class:`Plane`, kwargs to it),
    ``"rough"`` (:func:`gaussian_rough_terrain`, RMS 0.05 m, corr. length 0.2 m as in thesis §2.5.1;
    kwargs e.g. ``seed``, ``bounds``), ``"ramp"`` (:class:`Ramp`, the thesis's 1.5 m, 20° ramp),
    ``"steps"`` (:class:`Steps`, five 0.1 m × 0.5 m steps from x = 1 m); or a file path by suffix:
    ``.txt`` → :func:`load_wmrde_grid`, ``.yaml``/``.yml`` → :func:`load_heightmap`, ``.npy`` → bare
    heightmap (``resolution`` kwarg, default 0.05 m), ``.png`` → bare heightmap (needs ``z_min``,
    ``z_max``; ``resolution`` default 0.05 m), ``.sdf``/``.world`` → :func:`load_sdf_world`.
    """
    if isinstance(spec, Terrain):
        return spec
    if not isinstance(spec, (str, os.PathLike)):
        raise TerrainError(f"terrain spec must be a Terrain, a preset or a path, got {type(spec).__name__}")
    name = os.fspath(spec)
    p = Path(name)
    suffix = p.suffix.lower()
    try:
        if name in _PRESETS:
            make = {"flat": Plane, "ramp": Ramp, "steps": lambda **k: Steps(**{**_STEPS_DEFAULT, **k}),
                    "rough": lambda **k: gaussian_rough_terrain(**{"rms": 0.05, "corr_len": 0.2, **k})}[name]
            return make(**kwargs)
        if suffix == ".txt":
            return load_wmrde_grid(p, **kwargs)
        if suffix in (".yaml", ".yml"):
            return load_heightmap(p, **kwargs)
        if suffix == ".png" and (kwargs.get("z_min") is None or kwargs.get("z_max") is None):
            raise TerrainError(f"{p}: a PNG terrain needs z_min= and z_max= (m) (or use a YAML header)")
        if suffix in (".npy", ".png"):
            return load_heightmap(p, **{"resolution": 0.05, **kwargs})
        if suffix in (".sdf", ".world"):
            return load_sdf_world(p, **kwargs)
    except TypeError as e:
        raise TerrainError(f"terrain {name!r}: bad keyword argument(s): {e}") from None
    raise TerrainError(f"unknown terrain {name!r}: accepted are a Terrain, a preset ({', '.join(_PRESETS)}) "
                       "or a file ending in .txt (wmrde grid), .yaml/.yml (heightmap header), .npy, .png, "
                       ".sdf/.world (Gazebo world)")
