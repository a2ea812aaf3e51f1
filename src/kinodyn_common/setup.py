"""ament_python package kinodyn_common: ROS 2 helpers shared by the kinodyn nodes and controllers."""

from setuptools import find_packages, setup

package_name = "kinodyn_common"

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
    description="ROS 2 helpers shared by the kinodyn nodes and controllers",
    license="Apache-2.0",
)
