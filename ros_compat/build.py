"""Build the ROS 2 interface packages that PyPI lacks into a virtual environment, only where they are missing.

    python ros_compat/build.py [--prefix VENV] [--force]

`tf2_msgs` (for /tf) and `grid_map_msgs` (terrain maps) are not published as wheels; the `ros-*` wheels
from PyPI carry everything needed to generate them (rosidl generators, ament_cmake).  Each package here is
configured with CMake against the venv, built and installed into the venv prefix, where `import tf2_msgs`
then works with no environment set.  A package that already imports (a real ROS 2 install sourced, or an
earlier build) is left alone.  The folder carries a COLCON_IGNORE marker so a colcon workspace that holds
this repository never builds these next to a ROS distribution's own packages.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGES = ("tf2_msgs", "grid_map_msgs")


def importable(python: Path, package: str) -> bool:
    """True when ``python`` can import ``package.msg`` (the generated message module)."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")  # nothing starts DDS, but be safe
    r = subprocess.run([str(python), "-c", f"import {package}.msg"], capture_output=True, env=env)
    return r.returncode == 0


def build(package: str, prefix: Path) -> None:
    """Configure, build and install ``package`` into ``prefix`` (raises CalledProcessError with the log)."""
    python = prefix / "bin" / "python"
    env = dict(os.environ, AMENT_PREFIX_PATH=str(prefix), PATH=f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}")
    with tempfile.TemporaryDirectory(prefix=f"wmr-{package}-") as work:
        steps = (["cmake", str(HERE / package), f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_INSTALL_PREFIX={prefix}",
                  f"-DPython3_EXECUTABLE={python}", "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release"],
                 ["cmake", "--build", ".", "--parallel", str(os.cpu_count() or 1)],
                 ["cmake", "--install", "."])
        for cmd in steps:
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
                raise subprocess.CalledProcessError(r.returncode, cmd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", type=Path, default=Path(sys.prefix), help="the virtual environment (default: this one)")
    ap.add_argument("--force", action="store_true", help="rebuild even when the package already imports")
    args = ap.parse_args(argv)
    prefix = args.prefix.resolve()
    python = prefix / "bin" / "python"
    if not python.exists():
        ap.error(f"--prefix {prefix}: no bin/python there (not a virtual environment)")
    if shutil.which("cmake") is None:
        print("error: cmake is needed to build the ROS interface packages tf2_msgs and grid_map_msgs "
              "(Debian/Ubuntu: apt-get install cmake g++)", file=sys.stderr)
        return 1
    for package in PACKAGES:
        if not args.force and importable(python, package):
            continue
        start = time.perf_counter()
        print(f"building the ROS interface package {package} into {prefix} ...", flush=True)
        try:
            build(package, prefix)
        except subprocess.CalledProcessError as e:
            print(f"error: building {package} failed at: {' '.join(e.cmd)}", file=sys.stderr)
            return 1
        if not importable(python, package):
            print(f"error: {package} was built and installed but `import {package}.msg` still fails", file=sys.stderr)
            return 1
        print(f"built {package} in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
