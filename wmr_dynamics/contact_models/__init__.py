"""Wheel–ground contact models ``f_c = f(v_c, Rω, Δz)`` with their Jacobians (thesis eq. 2.71, App. C).

================  ====================================  ==================================================
name              class                                 equations
================  ====================================  ==================================================
``"linear"``      :class:`LinearContact`                thesis C.3–C.9 (ODE-like, VEHICLES.md "uniform")
``"pacejka"``     :class:`PacejkaContact`               C.10–C.18, Table C.1 (magic formula, N–C)
``"ishigami"``    :class:`IshigamiContact`              C.19–C.36, Table C.2 (stress integration / LUT)
``"ding"``        :class:`DingContact`                  Ding et al. eqs. 16–19, Toyoura sand
``"coulomb"``     :class:`CoulombContact`               C.3–C.4 normal; rigid tangential rows in the cone
================  ====================================  ==================================================

Inputs and outputs (all models; details in :class:`ContactModel`): ``v_c`` (nw, 3) contact-point slip
velocity in the contact frame, ``R_omega`` (nw,) wheel radius × angular velocity (positive drives forwards;
``V_x = v_x + Rω``, eq. C.12), ``dz`` (nw,) contact-height error (negative = penetration) →
``f`` (nw, 3) force on the wheel (``f_z > 0`` up), ``∂f/∂v_c`` (nw, 3, 3), ``∂f/∂(Rω)`` (nw, 3),
``∂f/∂Δz`` (nw, 3).  Docs: ``docs/contact_models.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from wmr_dynamics.contact_models._base import CompiledContactModel, ContactModel
from wmr_dynamics.contact_models.coulomb import CoulombContact
from wmr_dynamics.contact_models.linear import LinearContact
from wmr_dynamics.contact_models.pacejka import TABLE_C1, PacejkaContact, magic_formula
from wmr_dynamics.contact_models.registry import CONTACT_MODELS
from wmr_dynamics.contact_models.terramechanics import DING_TOYOURA, DingContact, IshigamiContact
from wmr_dynamics.errors import ModelError

__all__ = [
    "CONTACT_MODELS", "DING_TOYOURA", "TABLE_C1", "CompiledContactModel", "ContactModel", "CoulombContact",
    "DingContact",
    "IshigamiContact", "LinearContact", "MODELS", "PacejkaContact", "contact_model_for_vehicle",
    "contact_model_from_config", "magic_formula", "make_contact_model",
]

#: name → class of the bundled models (from :data:`CONTACT_MODELS`, the registry)
MODELS: dict[str, type[CompiledContactModel]] = {e.name: e.cls for e in CONTACT_MODELS.entries}
G = 9.81


def make_contact_model(name: str, **params: Any) -> ContactModel:
    """A bundled contact model by name: ``"linear"``, ``"pacejka"``, ``"ishigami"``, ``"ding"`` or ``"coulomb"``.

    ``params`` are the class's constructor arguments.  Raises :class:`ModelError` for an unknown name or
    parameter (listing the valid ones), a missing required parameter, or an invalid value.
    """
    return CONTACT_MODELS.make(name, **params)


def contact_model_from_config(cfg: dict | None, wheel_radius: ArrayLike, wheel_width: ArrayLike, *,
                              mass: float | None = None, n_wheels: int | None = None,
                              lug_height: ArrayLike | None = None) -> ContactModel:
    """The contact model of a vehicle YAML's ``contact: {model: ..., params: {...}}`` block (docs/vehicle_yaml.md).

    Args:
        cfg: the ``contact`` mapping, or None / {} for the default (VEHICLES.md's "uniform" linear model,
            which needs ``mass``), or a model name alone (``contact: coulomb``: its default parameters).
        wheel_radius, wheel_width: m, a number or one per wheel; passed to the terramechanics models unless
            ``params`` sets ``radius`` / ``width``.
        mass: total vehicle mass, kg.  With it, a linear or Pacejka block without ``kp`` gets VEHICLES.md's
            ``kp = mass·g/(n_wheels·|dz_target|)`` (and ``kd = kp/20``; a coulomb block too), an Ishigami or Ding
            block without ``kd`` the same normal damping ``mass·g/(n_wheels·0.02)/20`` (as the thesis author's
            code).  A Ding block without ``mean_wheel_load`` gets ``"actual"`` (W̄ = the wheels' mean normal
            force, Ding et al.).
        n_wheels: default: the length of ``wheel_radius``.
        lug_height: for the Ding model, unless ``params`` sets it.
    """
    radius = np.atleast_1d(np.asarray(wheel_radius, dtype=float))
    nw = int(n_wheels) if n_wheels is not None else radius.size
    if not cfg:
        if mass is None:
            raise ModelError("contact: no contact block, and no vehicle mass to build the default linear model from")
        return LinearContact.from_vehicle(mass, nw)
    if isinstance(cfg, str):  # the short form: a model name with its default parameters
        cfg = {"model": cfg}
    if not isinstance(cfg, dict):
        raise ModelError(f"contact: must be a mapping {{model: ..., params: {{...}}}}, got {cfg!r}")
    extra = sorted(set(cfg) - {"model", "params"})
    if extra:
        raise ModelError(f"contact: unknown key(s) {extra}; allowed: model, params")
    name = cfg.get("model", "linear")
    params = cfg.get("params") or {}
    if not isinstance(params, dict):
        raise ModelError(f"contact: params must be a mapping of parameter names to values, got {params!r}")
    params = dict(params)
    if name in ("ishigami", "ding"):
        params.setdefault("radius", wheel_radius)
        params.setdefault("width", wheel_width)
    if name in ("ishigami", "ding") and mass is not None:  # the thesis author's damping, Kp/20 of "uniform"
        params.setdefault("kd", mass * G / (nw * 0.02) / 20.0)
    if name == "ding":
        if lug_height is not None:
            params.setdefault("lug_height", lug_height)
        params.setdefault("mean_wheel_load", "actual")  # Ding: "the average normal force of the wheels"
    if name in ("linear", "pacejka", "coulomb") and "kp" not in params and mass is not None:
        dzt = params.get("dz_target", -0.02)
        if not (isinstance(dzt, (int, float)) and dzt < 0):
            raise ModelError(f"contact: params.dz_target must be a negative number (m), got {dzt!r}")
        params["kp"] = mass * G / (nw * -dzt)
        params.setdefault("kd", params["kp"] / 20.0)  # (the linear model's c_slip defaults to −0.1·kp itself)
    try:
        return make_contact_model(name, **params)
    except ModelError as e:
        raise ModelError(f"contact: {e}") from None


def contact_model_for_vehicle(model: Any) -> ContactModel:
    """The contact model of a :class:`~wmr_dynamics.model.WmrModel` from its vehicle YAML (``model.config``); a
    vehicle with tracks and no ``contact`` block gets ``coulomb`` (static friction: a tracked robot parks on a
    slope and stands on stairs, Pecka et al.), a wheeled one the linear model."""
    cfg = model.config.get("contact")
    if not cfg and getattr(model, "track_names", None):
        cfg = {"model": "coulomb"}
    elif isinstance(cfg, str):
        cfg = {"model": cfg}
    return contact_model_from_config(cfg, model.wheel_radii, model.wheel_widths,
                                     mass=float(np.sum(model.mass)), n_wheels=model.num_wheels)
