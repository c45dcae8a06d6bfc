"""Exception types of wmr_dynamics.

Every error raised for bad *input* (a URDF, a vehicle YAML, a terrain file, a command) is a
:class:`WmrError`, so callers can catch one type.  Each message names the input (file, element,
argument) and what is wrong with it.
"""

from __future__ import annotations


class WmrError(Exception):
    """Base class of all wmr_dynamics input errors."""


class ModelError(WmrError, ValueError):
    """An invalid robot model: frame tree, joints, wheels or mass properties."""


class UrdfError(ModelError):
    """A URDF or vehicle YAML that cannot be turned into a :class:`~wmr_dynamics.model.WmrModel`.

    The message starts with the file path and names the offending element (link, joint, key).
    """


class TerrainError(WmrError, ValueError):
    """An invalid terrain description or terrain file, or a query outside what a terrain defines."""
