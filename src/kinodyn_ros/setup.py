"""ament_python package kinodyn_ros: the ROS 2 nodes of kinodyn.

The package metadata, data files and entry points are declared in setup.cfg."""

from setuptools import setup

setup()
