"""The contact models the engine knows (thesis eq. 2.71, App. C): one :class:`~wmr_dynamics.registry.ModelKind`
each.  To add a compiled contact model, write its class (a
:class:`~wmr_dynamics.contact_models.CompiledContactModel` whose ``kernel`` has the signature
``kernel(v_c, R_omega, dz, P, aux, f, df_dv, df_dRw, df_ddz)``) and add its entry here; the engine's
dispatch, the vehicle YAML's ``contact: {model: ...}`` and :func:`~wmr_dynamics.contact_models.make_contact_model`
follow from this table.
"""

from __future__ import annotations

from wmr_dynamics.contact_models._terra import lut_kernel, terra_kernel
from wmr_dynamics.contact_models.coulomb import CoulombContact, _coulomb_kernel
from wmr_dynamics.contact_models.linear import LinearContact, _linear_kernel
from wmr_dynamics.contact_models.pacejka import PacejkaContact, _pacejka_kernel
from wmr_dynamics.contact_models.terramechanics import DingContact, IshigamiContact
from wmr_dynamics.registry import ModelKind, Registry

CONTACT_MODELS = Registry("contact model", (
    ModelKind("linear", LinearContact, (_linear_kernel,), "thesis C.3–C.9 (ODE-like, VEHICLES.md 'uniform')"),
    ModelKind("pacejka", PacejkaContact, (_pacejka_kernel,), "thesis C.10–C.18, Table C.1 (magic formula, N–C)"),
    ModelKind("ishigami", IshigamiContact, (terra_kernel, lut_kernel), "thesis C.19–C.36, Table C.2"),
    ModelKind("ding", DingContact, (terra_kernel, lut_kernel), "Ding et al. eqs. 16–19, Toyoura sand"),
    # last: its code is the engine's COULOMB switch (compiled.dynamics.CONTACT_COULOMB); the others keep theirs
    ModelKind("coulomb", CoulombContact, (_coulomb_kernel,), "C.3–C.4 normal; Coulomb cone with stiction"),
))
