"""wmr_dynamics: fast 3D kinematic and dynamic motion models of wheeled mobile robots.

After N. Seegmiller, *Dynamic Model Formulation and Calibration for Wheeled Mobile Robots* (CMU 2014).
Importable without ROS; ROS 2 nodes live in :mod:`wmr_dynamics.ros`.
"""

import warnings

from numba.core.errors import NumbaExperimentalFeatureWarning

from wmr_dynamics.errors import (
    ArgumentError,
    CommandError,
    DivergenceError,
    ImplausibleModelError,
    ModelError,
    SimulationError,
    StateError,
    TerrainError,
    TerrainFileError,
    UrdfError,
    VehicleConfigError,
    WmrError,
    WorkLimitError,
)
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.model import Frame, JointConstraint, JointSpring, Wheel, WmrModel
from wmr_dynamics.urdf import bundled_vehicles, load_model

__version__ = "0.1.0"

# The model registries' dispatch tables (wmr_dynamics.registry) are tuples of kernels that the engine unrolls
# into direct calls; numba types them with its "first-class function" feature and warns once per compile.
warnings.filterwarnings("ignore", message="First-class function type feature is experimental",
                        category=NumbaExperimentalFeatureWarning)

__all__ = [
    "ArgumentError", "BatchResult", "CommandError", "DivergenceError", "Frame", "ImplausibleModelError",
    "JointConstraint", "JointSpring", "ModelError", "SimResult", "SimulationError", "Simulator", "StateError",
    "TerrainError", "TerrainFileError", "UrdfError", "VehicleConfigError", "Wheel", "WmrError", "WmrModel",
    "WorkLimitError", "bundled_vehicles", "forward_kinematics", "load_model", "__version__",
]

_LAZY = {"Simulator", "SimResult", "BatchResult"}  # wmr_dynamics.simulate: imported on first use


def __getattr__(name: str):  # noqa: ANN202 (PEP 562: keeps `import wmr_dynamics` light)
    if name in _LAZY:
        from wmr_dynamics import simulate

        return getattr(simulate, name)
    raise AttributeError(f"module 'wmr_dynamics' has no attribute {name!r}")
