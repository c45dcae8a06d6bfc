"""ament_python / pip setup for wmr_dynamics (see package.xml for the ROS 2 dependencies).

``setup.py install`` (what ``colcon build`` runs for an ament_python package) and ``setup.py develop``
(``colcon build --symlink-install`` with older setuptools) end by filling numba's on-disk cache with the
compiled engine — ``python -m wmr_dynamics.warmup`` run against the package just installed — so the first
``ros2 run wmr_dynamics sim_node`` or ``wmr-sim --mode dynamic`` starts in seconds instead of compiling for a
minute and a half.  ``WMR_SKIP_WARMUP=1`` skips it.  A staged install (``--root``: wheel builds, so ``pip
install .``, and distribution packaging) does not warm up: the files are not where they will run from; run
``python -m wmr_dynamics.warmup`` after such an install (``make install`` does, after ``pip install -e .``).
"""

import os
import subprocess
import sys
import time
from glob import glob

from setuptools import find_packages, setup
from setuptools.command.develop import develop
from setuptools.command.install import install

PACKAGE = "wmr_dynamics"


def _warm_up(package_root: str) -> None:
    """Run the engine warm-up in a fresh interpreter that imports the package from ``package_root``.

    A failed warm-up does not fail the install (the package is installed; its first run compiles, and says
    so); it prints one line saying what happened.
    """
    if os.environ.get("WMR_SKIP_WARMUP", "").strip() not in ("", "0"):
        print(f"{PACKAGE}: engine warm-up skipped (WMR_SKIP_WARMUP is set); the first dynamic run compiles it",
              flush=True)
        return
    env = dict(os.environ)
    # colcon puts a sitecustomize.py on PYTHONPATH that sets sys.prefix to the install space while it builds;
    # the installed nodes run without it, and the engine cache location depends on sys.prefix
    # (wmr_dynamics/_jit.py cache_dir), so the warm-up runs without it too
    override = getattr(sys.modules.get("sitecustomize"), "__file__", None) if hasattr(sys, "real_prefix") else None
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if override:
        paths = [p for p in paths if os.path.abspath(p) != os.path.dirname(os.path.abspath(override))]
    env["PYTHONPATH"] = os.pathsep.join([package_root, *paths])
    print(f"{PACKAGE}: compiling the simulation engine into numba's cache (a few minutes, once; "
          "WMR_SKIP_WARMUP=1 skips) ...", flush=True)
    start = time.perf_counter()
    vehicle = os.path.join(os.path.dirname(os.path.realpath(__file__)), "config", "rocky7.yaml")
    probe = ("import sys, wmr_dynamics.warmup as w, wmr_dynamics._jit as j; w.warm_up(True, sys.argv[1]); "
             "print(j.cache_dir(), end='')")
    r = subprocess.run([sys.executable, "-c", probe, vehicle], cwd=package_root, env=env, capture_output=True,
                       text=True)
    if r.returncode == 0:
        print(f"{PACKAGE}: engine cache ready in {r.stdout.strip()} ({time.perf_counter() - start:.0f} s)",
              flush=True)
    else:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"{PACKAGE}: engine warm-up failed ({tail}); the package is installed, its first dynamic run will "
              "compile the engine (or run: python -m wmr_dynamics.warmup)", file=sys.stderr, flush=True)


class InstallAndWarmUp(install):
    """``setup.py install`` (colcon's ament_python build), then the engine warm-up against the installed copy."""

    def run(self) -> None:
        super().run()
        if self.root:  # staged (wheel build, packaging): not where the package will run from
            return
        _warm_up(os.path.abspath(self.install_lib))


class DevelopAndWarmUp(develop):
    """``setup.py develop`` (``colcon build --symlink-install``), then the engine warm-up against the sources."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "uninstall", False):
            _warm_up(os.path.abspath(os.curdir))


setup(
    name=PACKAGE,
    version="0.1.0",
    description="Fast 3D kinematic and dynamic motion models of wheeled mobile robots from URDF",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    python_requires=">=3.10",
    install_requires=["numpy", "scipy", "numba", "urdf-parser-py", "PyYAML", "matplotlib", "rosbags"],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.rviz")),
        (f"share/{PACKAGE}/worlds", glob("worlds/*")),
    ],
    zip_safe=True,
    maintainer="wmr_dynamics developers",
    maintainer_email="wmr-dynamics@example.org",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    cmdclass={"install": InstallAndWarmUp, "develop": DevelopAndWarmUp},
    entry_points={
        "console_scripts": [
            "wmr-sim = wmr_dynamics.cli:sim_main",
            "wmr-show = wmr_dynamics.cli:show_main",
            "wmr-sweep = wmr_dynamics.sweep:main",
            "wmr-odometry = wmr_dynamics.cli:odometry_main",
            "wmr-calibrate = wmr_dynamics.calibration.cli:calibrate_main",
            "wmr-drive-log = wmr_dynamics.calibration.cli:drive_log_main",
            # ROS 2 nodes: the wmr-ros-* names for pip users, the plain names for `ros2 run wmr_dynamics ...`
            "wmr-ros-sim = wmr_dynamics.ros.sim_node:main",
            "sim_node = wmr_dynamics.ros.sim_node:main",
            "wmr-ros-odometry = wmr_dynamics.ros.odometry_node:main",
            "odometry_node = wmr_dynamics.ros.odometry_node:main",
            "wmr-bag-play = wmr_dynamics.ros.bag_play:main",
            "wmr-ros-calibrate = wmr_dynamics.ros.calibration_node:main",
            "calibration_node = wmr_dynamics.ros.calibration_node:main",
        ],
    },
)
