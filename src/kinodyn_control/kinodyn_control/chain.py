"""Chained controllers (ros2_control's chaining): exported state interfaces and the update order.

A chainable controller exports state interfaces named ``<controller>/<name>`` (kinodyn_control's
``ChainableController``); another controller reads them by naming them in its state interface configuration,
as it names a hardware state interface. Such a reading is an edge of the chain: the exporter updates before
its readers in every cycle (``chain_order``), is activated before them and, when it stops, takes them with
it. A reader may declare an input as read from the previous cycle (``InterfaceConfiguration.previous_cycle``):
that edge imposes no order, its exporter need not be active (the value is NaN while it is not), and it closes
a loop such as estimator -> controller -> estimator without a cycle in the order. ``ChainedStates`` is the
loan of a reader whose state interfaces come from several tables (hardware and exporters). No ROS import here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from kinodyn_control.hardware.types import InterfaceTable


class ChainNode(Protocol):
    name: str
    chained: list[str]  # state interfaces exported by controllers, read in the same cycle


def exporter_of(interface: str) -> str:
    """The controller that exports ``<controller>/<name>``."""
    return interface.split("/", 1)[0]


NodeT = TypeVar("NodeT", bound=ChainNode)

def chain_order(entries: Sequence[NodeT]) -> list[NodeT]:
    """``entries`` with every exporter before its readers (same-cycle edges among ``entries``), otherwise in
    the given order; ValueError naming the controllers of a loop."""
    names = {e.name for e in entries}
    needs = {e.name: {exporter_of(n) for n in e.chained} & names for e in entries}
    ordered: list[NodeT] = []
    done: set[str] = set()
    remaining = list(entries)
    while remaining:
        ready = next((e for e in remaining if needs[e.name] <= done), None)
        if ready is None:
            loop = ", ".join(e.name for e in remaining)
            raise ValueError(
                f"the chain of controllers {loop} loops (each reads a state interface another of them "
                "exports in the same cycle); declare one of the inputs as read from the previous cycle"
            )
        ordered.append(ready)
        done.add(ready.name)
        remaining.remove(ready)
    return ordered


class ChainedStates:
    """The state interfaces ``names`` of a controller, read from several tables, in the order asked for.

    ``tables`` maps a name's table: the hardware state table, or an exporter's table for
    ``<controller>/<name>``. Read only (``get``), like a state loan (``LoanedInterfaces``)."""

    def __init__(self, names: Sequence[str], hardware: InterfaceTable, exported: Mapping[str, InterfaceTable]
                 ) -> None:
        self.names = tuple(names)
        groups: dict[int, tuple[InterfaceTable, list[int], list[int]]] = {}
        for position, name in enumerate(self.names):
            table = hardware if name in hardware.index else exported[exporter_of(name)]
            _, indices, positions = groups.setdefault(id(table), (table, [], []))
            indices.append(table.index[name])
            positions.append(position)
        self._parts = [(table.values, np.array(i, np.intp), np.array(p, np.intp))
                       for table, i, p in groups.values()]

    def __len__(self) -> int:
        return len(self.names)

    def get(self) -> np.ndarray:
        out = np.empty(len(self.names))
        for values, indices, positions in self._parts:
            out[positions] = values[indices]
        return out

    def subset(self, names: Sequence[str]) -> np.ndarray:
        """Positions of ``names`` within this loan."""
        position = {name: i for i, name in enumerate(self.names)}
        return np.array([position[n] for n in names], dtype=np.intp)
