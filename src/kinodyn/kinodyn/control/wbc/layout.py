"""Decision vector of the whole-body QP (Robot Dynamics lecture notes (ETH) §3.10, (3.108)): ``x = [qdd;
f_1; ...; f_nc; (tau)]``.

``qdd`` has ``nv`` entries, each active contact its force (3, point) or wrench (6, surface), in world axes,
the ground's action on the robot. ``tau`` (the actuated joints) is a variable only when
``torque_variables`` is set; otherwise it is recovered from the actuated rows of the equations of motion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class VariableLayout:
    """Slices of ``x``: ``qdd``, ``force(name)`` per contact, ``tau`` (empty without torque variables)."""

    nv: int
    contact_names: tuple[str, ...]
    contact_dims: tuple[int, ...]
    n_tau: int
    torque_variables: bool = False
    _forces: dict[str, slice] = field(init=False, repr=False)
    _slices: tuple[slice, slice, slice] = field(init=False, repr=False)  # qdd, all forces, tau: made once

    def __post_init__(self) -> None:
        forces, start = {}, self.nv
        for name, dim in zip(self.contact_names, self.contact_dims, strict=True):
            forces[name] = slice(start, start + dim)
            start += dim
        object.__setattr__(self, "_forces", forces)
        tau = slice(start, start + (self.n_tau if self.torque_variables else 0))
        object.__setattr__(self, "_slices", (slice(0, self.nv), slice(self.nv, start), tau))

    @classmethod
    def build(cls, nv: int, contacts: Sequence[tuple[str, int]], n_tau: int,
              torque_variables: bool = False) -> VariableLayout:
        return cls(nv, tuple(c[0] for c in contacts), tuple(c[1] for c in contacts), n_tau, torque_variables)

    @property
    def qdd(self) -> slice:
        return self._slices[0]

    @property
    def forces(self) -> slice:
        """All contact force entries."""
        return self._slices[1]

    def force(self, contact: str) -> slice:
        try:
            return self._forces[contact]
        except KeyError:
            raise KeyError(f"no active contact {contact!r}; active: {list(self.contact_names)}") from None

    @property
    def tau(self) -> slice:
        return self._slices[2]

    @property
    def size(self) -> int:
        result: int = self._slices[2].stop
        return result
