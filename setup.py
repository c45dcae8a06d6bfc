"""ament_python / pip setup for wmr_dynamics (see package.xml for the ROS 2 dependencies)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "wmr_dynamics"

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
