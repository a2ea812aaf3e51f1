"""ament_python entry point; the package metadata lives in pyproject.toml (pip installs it alone)."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["kinodyn", "kinodyn.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/kinodyn"]),
        ("share/kinodyn", ["package.xml"]),
    ],
)
