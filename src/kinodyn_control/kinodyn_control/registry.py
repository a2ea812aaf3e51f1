"""Plugins found by name through Python entry points, so another package can add hardware or controllers.

A package declares, in its setup.py::

    entry_points={
        "kinodyn_control.hardware": ["my_pkg/MyRobot = my_pkg.hardware:MyRobot"],
        "kinodyn_control.controllers": ["my_pkg/MyController = my_pkg.controllers:MyController"],
    }

and the URDF's ``<plugin>my_pkg/MyRobot</plugin>`` (or a controller's ``type``) names it. The entry point
name is the plugin name, ``<package>/<Class>`` as in ros2_control's pluginlib names.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from kinodyn_control.controllers.base import Controller
    from kinodyn_control.hardware.component import HardwareComponent

HARDWARE_GROUP = "kinodyn_control.hardware"
CONTROLLER_GROUP = "kinodyn_control.controllers"
PluginT = TypeVar("PluginT")


class PluginError(LookupError):
    """An unknown plugin name, or a plugin that cannot be loaded; the message lists the known names."""


class PluginRegistry(Generic[PluginT]):
    """The plugins of one entry-point group, looked up when asked (so packages installed later are seen)."""

    def __init__(self, group: str, base: type[PluginT]) -> None:
        self.group = group
        self.base = base

    def names(self) -> list[str]:
        return sorted({ep.name for ep in entry_points(group=self.group)})

    def load(self, name: str) -> type[PluginT]:
        """The class registered as ``name``; raises PluginError saying what is known."""
        matches = [ep for ep in entry_points(group=self.group) if ep.name == name]
        if not matches:
            known = ", ".join(self.names()) or "none"
            raise PluginError(
                f"no plugin '{name}' in entry point group '{self.group}'; known plugins: {known}. "
                f"A package adds one with entry_points={{'{self.group}': ['{name} = module:Class']}}"
            )
        try:
            cls = matches[0].load()
        except Exception as exc:  # any import failure of a third-party module is reported the same way
            raise PluginError(f"plugin '{name}' ({matches[0].value}) cannot be imported: {exc}") from exc
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise PluginError(
                f"plugin '{name}' ({matches[0].value}) is not a subclass of {self.base.__module__}."
                f"{self.base.__qualname__}"
            )
        plugin: type[PluginT] = cls
        return plugin

    def create(self, name: str) -> PluginT:
        return self.load(name)()


def hardware_registry() -> PluginRegistry[HardwareComponent]:
    from kinodyn_control.hardware.component import HardwareComponent  # noqa: PLC0415  (it imports this module)

    return PluginRegistry(HARDWARE_GROUP, HardwareComponent)


def controller_registry() -> PluginRegistry[Controller]:
    from kinodyn_control.controllers.base import Controller  # noqa: PLC0415  (its plugins import this module)

    return PluginRegistry(CONTROLLER_GROUP, Controller)
