"""A controller that exports state interfaces other controllers read (ros2_control's chainable controller).

``exported_state_interfaces()`` (after ``configure``) names them without the prefix; the manager makes them
``<controller>/<name>``, NaN until written, and hands the controller their values as ``exported`` (a float64
array in that order) before ``activate``. The controller writes ``exported[...]`` in ``update``; the manager
sets them to NaN when it deactivates the controller, so a reader never takes a stale value for a fresh one.
chain.py has the rules (order, activation, failures).
"""

from __future__ import annotations

import numpy as np

from kinodyn_control.controllers.base import Controller


class ChainableController(Controller):
    def __init__(self) -> None:
        super().__init__()
        self.exported = np.zeros(0)

    def exported_state_interfaces(self) -> tuple[str, ...]:
        return ()
