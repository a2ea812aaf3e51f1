"""ament_python package kinodyn_control."""

from setuptools import find_packages, setup

package_name = "kinodyn_control"

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
    description="ros2_control-style hardware components and controller manager for kinodyn",
    license="Apache-2.0",
    entry_points={"console_scripts": []},
)
