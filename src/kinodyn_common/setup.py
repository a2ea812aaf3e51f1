"""ament_python package kinodyn_common: ROS 2 helpers shared by the kinodyn nodes and controllers.

The package metadata, data files and entry points are declared in setup.cfg."""

from setuptools import setup

setup()
