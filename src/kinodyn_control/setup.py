"""ament_python package kinodyn_control.

The package metadata, data files and entry points are declared in setup.cfg."""

from setuptools import setup

setup()
