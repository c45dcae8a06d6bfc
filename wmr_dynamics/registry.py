"""Registries of the force models the compiled engine evaluates: one declaration per model.

Each family — contact models (eq. 2.71, :data:`wmr_dynamics.contact_models.registry.CONTACT_MODELS`),
actuator models (eq. 2.73, :data:`wmr_dynamics.actuators.ACTUATOR_MODELS`) and joint-constraint models
(eq. 2.74, :data:`wmr_dynamics.joint_models.JOINT_MODELS`) — is one :class:`Registry` of :class:`ModelKind`
entries.  An entry names the model (the vehicle YAML's ``model:`` key), its Python class (whose constructor
arguments are the model's parameters, checked here) and its compiled kernel(s).  From the entries the
registry derives:

* the kernels' dispatch table :attr:`Registry.kernels`, a tuple of ``(code, kernel)`` pairs that the engine
  unrolls (``numba.literal_unroll``) into direct calls — no if-chain to edit;
* :meth:`Registry.code`, a model instance's kernel code (by the kernel its instance uses), or
  :data:`PYTHON` for a model written in Python (called back from the compiled step,
  :mod:`wmr_dynamics.compiled.callbacks`);
* :meth:`Registry.make`, construction by name with clear errors for unknown or missing parameters.

Adding a compiled model therefore touches one place: write its class and kernel (with the family's kernel
signature) and add one :class:`ModelKind` to its family's registry.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wmr_dynamics.errors import ModelError

#: kernel code of a model written in Python (called back from the compiled step)
PYTHON = -1
#: kernel code of a model without a force law: ideal actuators, rigid joint constraints (hard rows)
RIGID = -2


@dataclass(frozen=True)
class ModelKind:
    """One model of a family: its YAML ``name``, Python class, compiled kernel(s) and the equations it
    implements (for docs and error messages).  A class whose instances pick one of several kernels (the
    terramechanics models: quadrature or lookup table) lists them all; ``kernels=()`` is a model without a
    force law (:data:`RIGID`)."""

    name: str
    cls: type
    kernels: tuple[Callable[..., Any], ...]
    equations: str = ""


def _same(a: object, b: object) -> bool:
    """``a`` and ``b`` are the same kernel (also under NUMBA_DISABLE_JIT, where kernels are plain functions)."""
    return a is b or getattr(a, "py_func", a) is getattr(b, "py_func", b)


class Registry:
    """The models of one family (see the module docstring)."""

    def __init__(self, family: str, entries: tuple[ModelKind, ...]) -> None:
        names = [e.name for e in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"{family} registry: duplicate model names {names}")
        self.family = family
        self.entries = entries
        unique: list[Callable[..., Any]] = []
        for e in entries:
            for k in e.kernels:
                if not any(_same(k, u) for u in unique):
                    unique.append(k)
        #: ``((code, kernel), ...)``: the engine's dispatch table (codes 0, 1, ... in declaration order)
        self.kernels: tuple[tuple[int, Callable[..., Any]], ...] = tuple(enumerate(unique))

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def entry(self, name: str) -> ModelKind:
        """The entry called ``name``; ModelError listing the valid names otherwise."""
        for e in self.entries:
            if e.name == name:
                return e
        raise ModelError(f"unknown {self.family} {name!r}; valid models: {', '.join(self.names)}")

    def parameters(self, name: str) -> tuple[list[str], list[str]]:
        """(all, required) constructor parameters of model ``name``."""
        sig = inspect.signature(self.entry(name).cls.__init__)
        params = [p for n, p in sig.parameters.items()
                  if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        return [p.name for p in params], [p.name for p in params if p.default is inspect.Parameter.empty]

    def make(self, name: str, **params: Any) -> Any:
        """An instance of model ``name`` from its constructor parameters.  Raises ModelError for an unknown
        name or parameter (listing the valid ones), a missing required parameter, or an invalid value."""
        cls = self.entry(name).cls
        names, required = self.parameters(name)
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise ModelError(f"{name} {self.family}: unknown parameter(s) {unknown}; valid parameters: "
                             f"{', '.join(names) or 'none'}")
        missing = [n for n in required if n not in params]
        if missing:
            raise ModelError(f"{name} {self.family}: missing required parameter(s) {missing}")
        try:
            return cls(**params)
        except TypeError as e:
            raise ModelError(f"{name} {self.family}: {e}") from None

    def code(self, model: object) -> int:
        """The kernel code of ``model``: its kernel's position in :attr:`kernels`, :data:`RIGID` for a model
        whose ``kernel`` is None and is registered without kernels, else :data:`PYTHON`.  A ``kernel`` that
        is not registered raises ModelError: the engine cannot call it (register it, or leave ``kernel`` as
        None so that its Python ``evaluate`` is called back)."""
        kernel = getattr(model, "kernel", None)
        if kernel is None:
            if any(isinstance(model, e.cls) and not e.kernels for e in self.entries):
                return RIGID
            return PYTHON
        for code, k in self.kernels:
            if _same(kernel, k):
                return code
        raise ModelError(f"{self.family} {type(model).__name__}: its compiled kernel is not in the registry, so "
                         f"the engine cannot call it; add a ModelKind for it to the {self.family} registry, or "
                         "leave `kernel` as None and implement evaluate() (it is called back from the compiled "
                         "step)")
