"""ament_python package kinodyn_tools: the `kinodyn` graph launcher, bags, reports, scenarios, the demo, the
viewer and offline estimation."""

from setuptools import find_packages, setup

package_name = "kinodyn_tools"

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
    description="kinodyn tooling: graph launcher, bags, reports, scenarios, demo, viewer, offline estimation",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "kinodyn = kinodyn_tools.launcher.cli:main",
            "viewer = kinodyn_tools.viewer.node:main",
        ],
    },
)
