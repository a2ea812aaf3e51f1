"""The managed lifecycle shared by hardware components and controllers (ros2_control).

UNKNOWN -(initialise)-> UNCONFIGURED -(configure)-> INACTIVE -(activate)-> ACTIVE, back with
``deactivate`` (ACTIVE -> INACTIVE) and ``cleanup`` (INACTIVE -> UNCONFIGURED); ``shutdown`` -> FINALIZED from
any of the three. A hook returning FAILURE leaves the state unchanged; ERROR calls ``on_error``, whose SUCCESS
gives UNCONFIGURED and anything else FINALIZED (the object must be created again). A transition asked for in
a state that does not allow it raises ``LifecycleError``.
"""

from __future__ import annotations

import logging
from typing import Any

from kinodyn_control.hardware.types import CallbackReturn, LifecycleState

# transition -> (states it may start from, state it reaches on SUCCESS, hook)
TRANSITIONS = {
    "configure": ((LifecycleState.UNCONFIGURED,), LifecycleState.INACTIVE, "on_configure"),
    "activate": ((LifecycleState.INACTIVE,), LifecycleState.ACTIVE, "on_activate"),
    "deactivate": ((LifecycleState.ACTIVE,), LifecycleState.INACTIVE, "on_deactivate"),
    "cleanup": ((LifecycleState.INACTIVE,), LifecycleState.UNCONFIGURED, "on_cleanup"),
    "shutdown": (
        (LifecycleState.UNCONFIGURED, LifecycleState.INACTIVE, LifecycleState.ACTIVE),
        LifecycleState.FINALIZED,
        "on_shutdown",
    ),
}


class LifecycleError(RuntimeError):
    """A transition asked for in a state that does not allow it."""


class Lifecycle:
    """State machine and hooks; subclasses override the ``on_*`` hooks and set ``last_error`` on failure."""

    what = "object"  # "component" or "controller", for messages

    def __init__(self) -> None:
        self.lifecycle_state = LifecycleState.UNKNOWN
        self.last_error = ""
        self.logger: Any = logging.getLogger("kinodyn_control")

    @property
    def name(self) -> str:
        return type(self).__name__

    def on_configure(self) -> CallbackReturn:
        return CallbackReturn.SUCCESS

    def on_activate(self) -> CallbackReturn:
        return CallbackReturn.SUCCESS

    def on_deactivate(self) -> CallbackReturn:
        return CallbackReturn.SUCCESS

    def release(self) -> None:
        """Free what ``on_configure`` acquired (a port, a node); the default on_cleanup and on_shutdown call
        it."""

    def on_cleanup(self) -> CallbackReturn:
        self.release()
        return CallbackReturn.SUCCESS

    def on_shutdown(self) -> CallbackReturn:
        self.release()
        return CallbackReturn.SUCCESS

    def on_error(self) -> CallbackReturn:
        """Called after ERROR; SUCCESS means recovered (-> UNCONFIGURED), anything else FINALIZED."""
        return CallbackReturn.SUCCESS

    def _finish_init(self, result: CallbackReturn) -> LifecycleState:
        if result is CallbackReturn.SUCCESS:
            self.lifecycle_state = LifecycleState.UNCONFIGURED
        else:
            self.lifecycle_state = LifecycleState.FINALIZED
            self.last_error = self.last_error or f"on_init returned {result.name}"
        return self.lifecycle_state

    def _transition(self, name: str) -> LifecycleState:
        sources, target, hook = TRANSITIONS[name]
        if self.lifecycle_state not in sources:
            allowed = " or ".join(s.value for s in sources)
            raise LifecycleError(
                f"cannot {name} {self.what} '{self.name}' in state '{self.lifecycle_state.value}'; "
                f"{name} needs state {allowed}"
            )
        result = getattr(self, hook)()
        if result is CallbackReturn.SUCCESS:
            self.lifecycle_state = target
        else:
            self.last_error = self.last_error or f"{hook} returned {result.name}"
            if result is CallbackReturn.ERROR:
                self.handle_error()
        return self.lifecycle_state

    def configure(self) -> LifecycleState:
        return self._transition("configure")

    def activate(self) -> LifecycleState:
        return self._transition("activate")

    def deactivate(self) -> LifecycleState:
        return self._transition("deactivate")

    def cleanup(self) -> LifecycleState:
        return self._transition("cleanup")

    def shutdown(self) -> LifecycleState:
        return self._transition("shutdown")

    def handle_error(self) -> LifecycleState:
        """``on_error``: SUCCESS -> UNCONFIGURED, FAILURE or ERROR -> FINALIZED."""
        recovered = self.on_error() is CallbackReturn.SUCCESS
        self.lifecycle_state = LifecycleState.UNCONFIGURED if recovered else LifecycleState.FINALIZED
        return self.lifecycle_state
