"""ament_python package kinodyn_tools: the `kinodyn` graph launcher, bags, reports, scenarios, the demo, the
viewer and offline estimation.

The package metadata, data files and entry points are declared in setup.cfg."""

from setuptools import setup

setup()
