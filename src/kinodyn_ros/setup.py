"""ament_python package kinodyn_ros: the ROS 2 nodes of kinodyn."""

from setuptools import find_packages, setup

package_name = "kinodyn_ros"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="ROS 2 nodes of kinodyn",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "state_publisher = kinodyn_ros.nodes.state_publisher:main",
            "joint_motion = kinodyn_ros.nodes.joint_motion:main",
            "ee_pose_printer = kinodyn_ros.nodes.ee_pose_printer:main",
            "kinematics = kinodyn_ros.nodes.kinematics:main",
            "dynamics = kinodyn_ros.nodes.dynamics:main",
            "state_estimator = kinodyn_ros.nodes.state_estimator:main",
            "wbc = kinodyn_ros.nodes.wbc:main",
        ],
    },
)
