"""Contact force task: regularise one contact's force towards ``f_ref`` (default 0) or track it.

Robot Dynamics lecture notes (ETH) §3.10 (3.111), corrected: ``A = [0, S_Fi, 0]`` (``S_Fi`` selects contact
i's
block of the forces; the notes' ``J_i^T`` does not match the dimensions), ``b = F_i*``. Forces are the
ground's action on the robot, world axes: 3 values for a point contact, 6 (``[f; tau]``) for a surface.
A contact absent from the layout (not active this tick) contributes no rows: ``A`` is ``(0, size)``.
``error`` stays zero: the force is known only after the solve (its residual is ``A x - b`` then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.wbc.tasks._motion import optional_vector
from kinodyn.control.wbc.tasks.base import SCALED_IDENTITY, Task, TaskRows

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.control.wbc.layout import VariableLayout
    from kinodyn.evaluation import Evaluation


class ContactForceTask(Task):
    """Rows on the force of ``contact`` (``dim`` 3: point, 6: surface). ``weight``: scalar or ``dim``."""

    def __init__(self, contact: str, dim: int = 3, f_ref: ArrayLike | None = None, weight: ArrayLike = 1.0,
                 name: str | None = None) -> None:
        if not isinstance(dim, int) or dim not in (3, 6):
            raise ValueError(f"contact force task dim must be 3 (point) or 6 (surface), got {dim!r}")
        self.contact = str(contact)
        super().__init__(name if name is not None else f"{self.contact}_force", dim, weight)
        self._layout: VariableLayout | None = None  # the last layout written to, and this force's column
        self._start = -1
        self.set_reference(f_ref)

    def set_reference(self, f_ref: ArrayLike | None = None) -> None:
        """Target force (world axes, on the robot); ``None``: zero, pure regularisation."""
        self.f_ref = optional_vector(f_ref, self.dim, f"task {self.name!r} reference force")

    def row_count(self, layout: VariableLayout) -> int:
        return self.dim if self.contact in layout.contact_names else 0

    def _columns(self, layout: VariableLayout) -> slice:
        cols = layout.force(self.contact)
        if cols.stop - cols.start != self.dim:
            raise ValueError(f"task {self.name!r} has dim {self.dim} but contact {self.contact!r} has "
                             f"{cols.stop - cols.start} force entries in the layout; build it with that dim")
        return cols

    def rows(self, ev: Evaluation, layout: VariableLayout) -> TaskRows:
        if self.contact not in layout.contact_names:
            return TaskRows(np.zeros((0, layout.size)), np.zeros(0))
        A = np.zeros((self.dim, layout.size))
        A[:, self._columns(layout)] = np.eye(self.dim)
        return TaskRows(A, self.f_ref.copy())

    def write_rows(self, ev: Evaluation, layout: VariableLayout, A: np.ndarray, b: np.ndarray) -> None:
        """``diag(sqrt(weight))`` on the contact's force columns, ``f_ref sqrt(weight)``; no rows when the
        contact is not in ``layout``."""
        if b.size:
            if layout is not self._layout:  # (the controller keeps one layout per set of contacts)
                self._layout, self._start = layout, self._columns(layout).start
            if b.shape != (self.dim,) or A.shape[1] < self._start + self.dim:
                raise ValueError(f"task {self.name!r}: rows of shape {A.shape} for dim {self.dim}: give "
                                 "row_count rows of layout.size columns")
            SCALED_IDENTITY.call(self.weight, self.f_ref, self._start, A, b)
