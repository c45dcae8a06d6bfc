"""Figures of a vehicle on a terrain (matplotlib, headless-safe: call with the Agg backend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.collision import Contacts
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain


def _wheel_circle(T: NDArray, radius: float, n: int = 48) -> NDArray:
    """(n, 3) points of the wheel's rim circle (wheel x–z plane) in world coordinates."""
    d = np.linspace(0, 2 * np.pi, n)
    return T[:3, 3] - radius * (np.sin(d)[:, None] * T[:3, 0] + np.cos(d)[:, None] * T[:3, 2])


def plot_vehicle_on_terrain(model: WmrModel, T_world: NDArray, terrain: Terrain, contacts: Contacts,
                            path: str | Path, title: str = "", margin: float | None = None) -> Path:
    """Write a two-panel PNG: 3D view (terrain, frame tree, wheel rims, contact frames) and a top view.

    Args:
        model: the WMR model.  T_world: (nf, 4, 4) frame transforms (forward kinematics).
        terrain: ground surface.  contacts: wheel contacts for ``T_world``.
        path: output PNG path.  margin: terrain shown around the vehicle, m (default: vehicle size).
    Returns:
        The written path.
    """
    import matplotlib.pyplot as plt

    origins = T_world[:, :3, 3]
    lo, hi = origins[:, :2].min(0), origins[:, :2].max(0)
    size = float(max(hi - lo)) + 2 * float(model.wheel_radii.max())
    margin = size * 0.6 if margin is None else margin
    xs = np.linspace(lo[0] - margin, hi[0] + margin, 90)
    ys = np.linspace(lo[1] - margin, hi[1] + margin, 90)
    X, Y = np.meshgrid(xs, ys)
    Z = terrain.height(X, Y)

    fig = plt.figure(figsize=(13, 6))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    ax.plot_surface(X, Y, Z, cmap="terrain", alpha=0.55, linewidth=0, antialiased=True)
    for i in range(1, model.num_frames):
        p = origins[model.parent[i]]
        ax.plot(*np.c_[p, origins[i]], color="k", lw=1.5)
    ax.scatter(*origins.T, color="k", s=8)
    for w in range(model.num_wheels):
        rim = _wheel_circle(T_world[model.wheel_frame[w]], model.wheel_radii[w])
        ax.plot(*rim.T, color="tab:blue", lw=1.5)
        touching = contacts.dz[w] <= 1e-3
        ax.scatter(*contacts.points[w], color="tab:red" if touching else "tab:orange", s=25)
        ax.quiver(*contacts.points[w], *(0.3 * size * 0.3 * contacts.normals[w]), color="tab:red", lw=1)
    span = max(xs[-1] - xs[0], ys[-1] - ys[0]) / 2
    cx, cy = origins[0, :2]
    zc = float(origins[:, 2].mean())
    ax.set(xlim=(cx - span, cx + span), ylim=(cy - span, cy + span), zlim=(zc - span, zc + span),
           xlabel="x (m)", ylabel="y (m)", zlabel="z (m)")
    ax.set_title("frames (black), wheel rims (blue), contact points and normals (red)", fontsize=9)

    ax2 = fig.add_subplot(1, 2, 2)
    im = ax2.pcolormesh(X, Y, Z, cmap="terrain", shading="auto")
    fig.colorbar(im, ax=ax2, label="terrain height (m)")
    for i in range(1, model.num_frames):
        p = origins[model.parent[i]]
        ax2.plot([p[0], origins[i, 0]], [p[1], origins[i, 1]], color="k", lw=1)
    for w in range(model.num_wheels):
        rim = _wheel_circle(T_world[model.wheel_frame[w]], model.wheel_radii[w])
        ax2.plot(rim[:, 0], rim[:, 1], color="tab:blue", lw=2)
        ax2.annotate(f"{model.wheel_names[w]}\nΔz={contacts.dz[w] * 1000:+.1f} mm", contacts.points[w, :2],
                     fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax2.scatter(contacts.points[:, 0], contacts.points[:, 1], color="tab:red", s=15, zorder=3)
    body = T_world[0]
    ax2.arrow(body[0, 3], body[1, 3], 0.3 * size * body[0, 0], 0.3 * size * body[1, 0], color="k",
              width=0.01 * size, length_includes_head=True)
    ax2.set(aspect="equal", xlabel="x (m)", ylabel="y (m)", title="top view (arrow: body x axis)")
    fig.suptitle(title or f"{model.name} on terrain")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_run_overhead(result, terrain: Terrain, path: str | Path, title: str = "") -> Path:
    """Overhead view of a run: terrain heights, body path and each wheel's contact-point track."""
    import matplotlib.pyplot as plt

    pts = result.contact_points.reshape(-1, 3)
    lo = np.minimum(pts[:, :2].min(0), result.q[:, 4:6].min(0)) - 0.5
    hi = np.maximum(pts[:, :2].max(0), result.q[:, 4:6].max(0)) + 0.5
    X, Y = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 120))
    fig, ax = plt.subplots(figsize=(11, 5.5))
    im = ax.pcolormesh(X, Y, terrain.height(X, Y), cmap="terrain", shading="auto")
    fig.colorbar(im, ax=ax, label="terrain height (m)")
    for w, name in enumerate(result.wheel_names):
        ax.plot(result.contact_points[:, w, 0], result.contact_points[:, w, 1], lw=0.8, label=f"contact {name}")
    ax.plot(result.q[:, 4], result.q[:, 5], "k-", lw=2, label="body origin")
    ax.plot(*result.q[0, 4:6], "ko")
    ax.set(aspect="equal", xlabel="x (m)", ylabel="y (m)", title=title or f"{result.model_name}: overhead path")
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_run_contacts(result, path: str | Path, title: str = "") -> Path:
    """Contact height error Δz and contact-point speed ‖v_c‖ of every wheel vs time."""
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for w, name in enumerate(result.wheel_names):
        a1.plot(result.t, 1000 * result.dz[:, w], lw=0.8, label=name)
        a2.plot(result.t[:-1], result.contact_speed[:-1, w], lw=0.8, label=name)
    a1.set(ylabel="Δz (mm)", title=title or f"{result.model_name}: contact height error and contact speed")
    a2.set(ylabel="‖v_c‖ (m/s)", xlabel="time (s)")
    a1.legend(fontsize=7, ncol=6)
    a1.grid(alpha=0.3)
    a2.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
