"""Exception types of wmr_dynamics.

Every error raised for bad *input* (a URDF, a vehicle YAML, a terrain file, a command, an array given to
the API) or for a run that cannot go on is a :class:`WmrError`, so callers can catch one type.  Each
message names the input (file, element, key path, argument) and what is wrong with it.

One subclass per concern (docs/reliability.md).  The older, broader names stay the bases, so code that
catches :class:`ModelError` or :class:`TerrainError` keeps working::

    WmrError
    ├── ModelError (ValueError)          an invalid robot model or argument
    │   ├── UrdfError                    a URDF or vehicle YAML file that cannot be built
    │   │   ├── VehicleConfigError       a vehicle YAML value of the wrong type or range (names the key path)
    │   │   └── ImplausibleModelError    a URDF / YAML magnitude no wheeled robot has (names link / joint)
    │   ├── ArgumentError                an argument of a public function: type, shape, finiteness
    │   │   ├── StateError               a state, pose or velocity (length, NaN, zero quaternion)
    │   │   └── CommandError             commands (shape, ragged rows, non-numbers, NaN)
    │   ├── WorkLimitError               a run too large to hold in memory, refused up front
    │   └── SimulationError (RuntimeError)  a run that cannot go on (kernel failure)
    │       └── DivergenceError          the state went non-finite or physically absurd
    └── TerrainError (ValueError)        an invalid terrain or terrain query
        └── TerrainFileError             a terrain file's contents (names the file)

Other modules add their own: ``io.output.OutputError`` (output folders), ``io.bag.BagError`` (logs),
``ros.convert.MessageError`` (ROS messages), ``sweep.scenario.SweepError`` (sweep files),
``compiled.engine.NotCompilable``.
"""

from __future__ import annotations


class WmrError(Exception):
    """Base class of all wmr_dynamics input and run errors."""


class ModelError(WmrError, ValueError):
    """An invalid robot model (frame tree, joints, wheels, mass properties) or argument."""


class UrdfError(ModelError):
    """A URDF or vehicle YAML that cannot be turned into a :class:`~wmr_dynamics.model.WmrModel`.

    The message starts with the file path and names the offending element (link, joint, key).
    """


class VehicleConfigError(UrdfError):
    """A vehicle YAML value of the wrong type or out of range (the text names the key path)."""


class ImplausibleModelError(UrdfError):
    """A URDF or vehicle YAML magnitude outside what any wheeled robot has (a 1e30 m wheel, a negative
    mass, a 1e30 kg·m² inertia); the text names the file, the link or joint and the accepted range."""


class ArgumentError(ModelError):
    """An argument of a public function of the wrong type, shape or value (the text names the argument)."""


class StateError(ArgumentError):
    """A state q, velocity q̇' or pose of the wrong length, with NaN/inf, or with a zero quaternion."""


class CommandError(ArgumentError):
    """Commands of the wrong shape (ragged rows, wrong width), non-numeric or non-finite."""


class WorkLimitError(ModelError):
    """A run whose results would exceed the memory budget, refused before anything is allocated."""


class SimulationError(ModelError, RuntimeError):
    """A simulation that cannot go on (terrain hole under a wheel, singular constraints, ...); the text names
    the vehicle, the step and the time.  (A ModelError too: kernel failures were reported as ModelError.)"""


class DivergenceError(SimulationError):
    """The state went non-finite or physically absurd (the body faster than its wheels allow, a contact
    error larger than a wheel): names the time, the likely cause and the fix."""


class TerrainError(WmrError, ValueError):
    """An invalid terrain description or terrain file, or a query outside what a terrain defines."""


class TerrainFileError(TerrainError):
    """A terrain file whose contents are wrong (not numbers, NaN, wrong shape, absurd magnitudes); the text
    names the file and what is wrong."""
