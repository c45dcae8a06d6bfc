"""Packaging: ament_python metadata, the wheel's contents, launch files, and the ROS-free core."""

import ast
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_package_xml_is_format3_ament_python_with_the_runtime_dependencies():
    root = ET.parse(ROOT / "package.xml").getroot()
    assert root.get("format") == "3" and root.findtext("name") == "wmr_dynamics"
    assert root.find("export").findtext("build_type") == "ament_python"
    assert root.findtext("buildtool_depend") == "ament_python"
    deps = {e.text for e in root.findall("exec_depend")}
    assert {"rclpy", "geometry_msgs", "nav_msgs", "sensor_msgs", "std_msgs", "tf2_msgs", "visualization_msgs",
            "python3-numpy", "python3-scipy", "python3-yaml", "urdfdom_py"} <= deps
    assert (ROOT / "resource" / "wmr_dynamics").is_file()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                        str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("wmr_dynamics-*.whl")
    return zipfile.ZipFile(whl)


def test_wheel_ships_vehicles_launch_files_and_ament_index(wheel):
    names = wheel.namelist()
    data = [n.split(".data/data/", 1)[1] for n in names if ".data/data/" in n]
    for vehicle in ("rocky7", "zoe", "landtamer", "crusher", "recbot", "eldorado2", "pvc_tricycle"):
        assert f"share/wmr_dynamics/urdf/{vehicle}.urdf" in data
        assert f"share/wmr_dynamics/config/{vehicle}.yaml" in data
    assert "share/wmr_dynamics/package.xml" in data
    assert "share/ament_index/resource_index/packages/wmr_dynamics" in data
    assert "share/wmr_dynamics/launch/view_vehicle.launch.py" in data
    assert "wmr_dynamics/urdf.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = wheel.read(entry_points).decode()
    assert "wmr-show = wmr_dynamics.cli:show_main" in text and "wmr-sim = wmr_dynamics.cli:sim_main" in text
    assert "wmr-ros-sim = wmr_dynamics.ros.sim_node:main" in text
    assert "sim_node = wmr_dynamics.ros.sim_node:main" in text
    assert "share/wmr_dynamics/launch/sim.launch.py" in data and "share/wmr_dynamics/config/sim.yaml" in data
    assert "share/wmr_dynamics/config/sim.rviz" in data and "share/wmr_dynamics/launch/odometry.launch.py" in data
    assert "share/wmr_dynamics/launch/calibration.launch.py" in data
    for script in ("wmr-ros-odometry = wmr_dynamics.ros.odometry_node:main",
                   "odometry_node = wmr_dynamics.ros.odometry_node:main",
                   "wmr-bag-play = wmr_dynamics.ros.bag_play:main", "wmr-odometry = wmr_dynamics.cli:odometry_main"):
        assert script in text


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


def test_core_library_never_imports_ros():
    ros = {"rclpy", "launch", "launch_ros", "rosidl_runtime_py", "geometry_msgs", "nav_msgs", "sensor_msgs",
           "tf2_msgs", "std_msgs", "visualization_msgs"}
    for path in (ROOT / "wmr_dynamics").rglob("*.py"):
        if "ros" in path.relative_to(ROOT / "wmr_dynamics").parts[:1]:
            continue  # wmr_dynamics/ros is the only place allowed to import rclpy
        assert not ros & set(_imports(path)), path
    probe = ("import sys, wmr_dynamics, wmr_dynamics.cli, wmr_dynamics.collision; "
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(ros)!r}))")
    r = subprocess.run([sys.executable, "-c", probe],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


@pytest.mark.parametrize("launch_file", sorted((ROOT / "launch").glob("*.launch.py")), ids=lambda p: p.name)
def test_launch_files_parse_and_name_existing_files_and_declared_packages(launch_file):
    tree = ast.parse(launch_file.read_text())
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "generate_launch_description" in funcs
    declared = {e.text for e in ET.parse(ROOT / "package.xml").getroot().findall("exec_depend")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Node":
            kw = {k.arg: k.value for k in node.keywords}
            pkg = kw["package"].value if isinstance(kw["package"], ast.Constant) else "wmr_dynamics"  # PACKAGE
            assert pkg in declared | {"wmr_dynamics"}, f"{launch_file.name}: package {pkg} missing from package.xml"
            if pkg == "wmr_dynamics":  # our own executables: console scripts that setup.py installs
                exe = kw["executable"].value
                assert f'"{exe} = wmr_dynamics.' in (ROOT / "setup.py").read_text(), f"{launch_file.name}: {exe}"
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "join":
            parts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if parts and parts[0] in ("urdf", "config", "worlds"):
                target = ROOT.joinpath(*parts)
                assert target.exists() or parts[0] == "urdf", f"{launch_file.name} names missing {target}"
    assert (ROOT / "urdf" / "rocky7.urdf").is_file()  # the default vehicle of the launch files


def test_makefile_keeps_dds_on_loopback():
    text = (ROOT / "Makefile").read_text()
    assert "export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST" in text
    assert "export ROS_DOMAIN_ID" in text
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("make test")


def test_compatibility_interface_packages_are_colcon_ignored_and_match_upstream_type_hashes():
    """tf2_msgs / grid_map_msgs built by ros_compat/ (make install) carry the upstream type hash, so they talk to
    a real ROS 2 (TFMessage's RIHS01 hash as ROS_NOTES.md records it for upstream), and a colcon workspace never
    builds them next to a distribution's own."""
    import json
    import os

    assert (ROOT / "ros_compat" / "COLCON_IGNORE").is_file()
    from tf2_msgs.msg import TFMessage  # noqa: F401 - importable in the test venv

    prefixes = [Path(sys.prefix)] + [Path(p) for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    found = [p / "share/tf2_msgs/msg/TFMessage.json" for p in prefixes]
    found = [f for f in found if f.is_file()]
    assert found, "no tf2_msgs type description installed"
    hashes = {h["type_name"]: h["hash_string"] for h in json.loads(found[0].read_text())["type_hashes"]}
    assert hashes["tf2_msgs/msg/TFMessage"].startswith("RIHS01_e369d0f0")
    r = subprocess.run([sys.executable, str(ROOT / "ros_compat" / "build.py")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "building" not in r.stdout, r.stdout + r.stderr  # already there: nothing built


def _colcon_workspace(tmp_path: Path) -> str:
    """A ROS user's workspace in ``tmp_path``: a copy of the repository (file times kept, as a checkout's) in
    src/; returns the colcon executable of the test venv."""
    import shutil

    src = tmp_path / "src" / "wmr_dynamics"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "install", "log", "out",
                                                             "__pycache__", "*.egg-info", ".pytest_cache"))
    return str(Path(sys.executable).parent / "colcon")


def test_colcon_builds_the_package_and_never_the_compatibility_interfaces(tmp_path):
    """A ROS user's workspace: the repository in src/, `colcon build` (the real tool) installs the executables
    where `ros2 run` looks and the launch / config / URDF files where the launch files look; the
    compatibility interface packages in ros_compat/ are not packages of the workspace.  The build ends by
    warming the engine cache that the installed package will use (setup.py; here the venv's cache, already
    warm from `make install`, so the warm-up only loads it): the first node start does not compile."""
    import os

    from wmr_dynamics import _jit

    colcon = _colcon_workspace(tmp_path)
    listed = subprocess.run([colcon, "list", "--names-only"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0 and listed.stdout.split() == ["wmr_dynamics"], listed.stdout + listed.stderr
    env = {k: v for k, v in os.environ.items() if k != "WMR_SKIP_WARMUP"}
    r = subprocess.run([colcon, "build"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    prefix = tmp_path / "install" / "wmr_dynamics"
    # the warm-up ran against the installed copy and filled the cache the installed package finds at run time
    # (not colcon's build-time prefix, which colcon's sitecustomize swaps in while it builds)
    log = (tmp_path / "log" / "latest_build" / "wmr_dynamics" / "stdout.log").read_text()
    assert "wmr_dynamics: compiling the simulation engine into numba's cache" in log, log
    assert f"wmr_dynamics: engine cache ready in {_jit.cache_dir()} (" in log, log
    site = next(prefix.glob("lib/python3*/site-packages"))
    probe = ("import wmr_dynamics, wmr_dynamics._jit as j; from wmr_dynamics.compiled import cache; "
             "print(wmr_dynamics.__file__); print(j.cache_dir()); "
             "print(all(cache.is_warm(p) for p in ('kinematic', 'dynamic', 'dynamic-batch')))")
    installed = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                               timeout=120, env={**env, "PYTHONPATH": str(site)})
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.split() == [str(site / "wmr_dynamics" / "__init__.py"), str(_jit.cache_dir()), "True"]
    for exe in ("sim_node", "odometry_node", "wmr-ros-sim", "wmr-bag-play", "wmr-odometry", "wmr-sim"):
        assert (prefix / "lib" / "wmr_dynamics" / exe).is_file(), exe
    for f in ("launch/sim.launch.py", "launch/odometry.launch.py", "config/sim.yaml", "config/sim.rviz",
              "urdf/rocky7.urdf", "package.xml"):
        assert (prefix / "share" / "wmr_dynamics" / f).is_file(), f


def test_colcon_build_skips_the_engine_warm_up_with_wmr_skip_warmup(tmp_path):
    """WMR_SKIP_WARMUP=1: the build says in one line that it skipped the warm-up, and runs no engine code (a
    cache folder of its own stays absent)."""
    import os

    colcon = _colcon_workspace(tmp_path)
    env = {**os.environ, "WMR_SKIP_WARMUP": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    r = subprocess.run([colcon, "build"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    log = (tmp_path / "log" / "latest_build" / "wmr_dynamics" / "stdout.log").read_text()
    assert "wmr_dynamics: engine warm-up skipped (WMR_SKIP_WARMUP is set)" in log, log
    assert "compiling the simulation engine" not in log
    assert not (tmp_path / "numba").exists()
    assert (tmp_path / "install" / "wmr_dynamics" / "lib" / "wmr_dynamics" / "sim_node").is_file()
