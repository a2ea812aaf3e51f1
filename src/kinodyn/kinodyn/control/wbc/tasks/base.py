"""A whole-body task: its error, Jacobian, ``Jdot v``, gains and weight (Robot Dynamics lecture notes (ETH)
§3.10, (3.110)).

A task contributes rows ``A x ≈ b`` over the decision vector ``x`` (``layout.VariableLayout``). Motion
tasks (``MotionTask``) set ``A[:, layout.qdd] = J`` and ``b = a_ref + kp e + kd (v_ref - J v) - Jdot v``:
the desired task acceleration of the PD law of §3.9 (3.89) minus the bias of (3.80); they give the
controller ``(J, b)`` directly (``qdd_rows``), which it writes into one stacked matrix per tick. A new task
is one file with one subclass implementing ``rows`` (or ``qdd_rows`` for a motion task).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.control._inputs import gain, selection
from kinodyn.control.wbc.tasks._motion import row_selection
from kinodyn.kernel import IN1, IN2, INT, OUT1, OUT2, Kernel

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.control.wbc.layout import VariableLayout
    from kinodyn.evaluation import Evaluation


@dataclass(frozen=True, slots=True)
class TaskRows:
    """``A x ≈ b``; ``A`` is (m, layout.size)."""

    A: np.ndarray
    b: np.ndarray


class Task(ABC):
    """Base of the whole-body tasks. ``weight`` (scalar or per row) scales the squared residual."""

    frames: tuple[str, ...] = ()

    def __init__(self, name: str, dim: int, weight: ArrayLike = 1.0) -> None:
        self.name = name
        self.dim = dim
        self.weight = gain(weight, dim, f"task {name!r} weight")
        self.error = np.zeros(dim)

    @abstractmethod
    def rows(self, ev: Evaluation, layout: VariableLayout) -> TaskRows:
        """The task's rows at this evaluation; also updates ``self.error``."""

    def row_count(self, layout: VariableLayout) -> int:
        """How many rows ``rows`` gives with ``layout`` (a function of the layout: the controller asks once
        per set of active contacts)."""
        return self.dim

    def write_rows(self, ev: Evaluation, layout: VariableLayout, A: np.ndarray, b: np.ndarray) -> None:
        """``rows`` scaled by ``sqrt(weight)`` into ``A`` (``row_count`` x ``layout.size``, zero on entry)
        and ``b``: the controller's stacked matrix."""
        rows = self.rows(ev, layout)
        if rows.A.shape != A.shape:
            raise ValueError(f"task {self.name!r} gave rows of shape {rows.A.shape}, its row_count "
                             f"{A.shape[0]} says {A.shape}: make row_count match rows")
        scale = np.sqrt(self.weight)
        np.multiply(rows.A, scale[:, None], out=A)
        np.multiply(rows.b, scale, out=b)


class MotionTask(Task):
    """A task on the accelerations only: ``A = [J, 0, 0]`` (Robot Dynamics lecture notes (ETH) (3.110))."""

    @abstractmethod
    def qdd_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        """``(J, b)``: the rows' ``qdd`` block (``dim x nv``) and right side; also updates ``self.error``."""

    def update_error(self, ev: Evaluation) -> None:
        """Only ``self.error`` at this evaluation: the controller's call for a task weighted 0, whose rows
        are zero (a task may compute it without the rows)."""
        self.qdd_rows(ev)

    def write_rows(self, ev: Evaluation, layout: VariableLayout, A: np.ndarray, b: np.ndarray) -> None:
        """``J sqrt(weight)`` into ``A``'s ``qdd`` columns, ``b sqrt(weight)``; weighted 0: zero rows (``A``
        is zero on entry) and only the error (``update_error``)."""
        if b.shape != (self.dim,) or A.shape[1] < ev.v.size:
            raise ValueError(f"task {self.name!r}: rows of shape {A.shape} for dim {self.dim} and "
                             f"{ev.v.size} velocities: give row_count rows of layout.size columns")
        self.write_weighted_rows(ev, A, b)

    def write_weighted_rows(self, ev: Evaluation, A: np.ndarray, b: np.ndarray) -> None:
        """``write_rows`` after its shape check (``A``: ``dim`` rows, ``b``: ``dim``), from ``qdd_rows``; a
        task may give the same numbers in one pass (``_motion.motion_rows``, weight 0 included)."""
        if not self.weight.any():
            self.update_error(ev)
            b[:] = 0.0
            return
        J, d = self.qdd_rows(ev)
        J, d = np.asarray(J, dtype=float), np.asarray(d, dtype=float)  # (the kernel takes float64 only)
        if J.shape != (b.size, ev.v.size) or d.shape != b.shape or self.weight.shape != b.shape:
            raise ValueError(f"task {self.name!r}: qdd_rows gave J {J.shape} and b {d.shape} with weight "
                             f"{self.weight.shape}; expected ({b.size}, {ev.v.size}), ({b.size},) and "
                             f"({b.size},) (dim = {self.dim})")
        _SCALED.call(J, d, np.asarray(self.weight, dtype=float), A, b)

    def rows(self, ev: Evaluation, layout: VariableLayout) -> TaskRows:
        J, b = self.qdd_rows(ev)
        A = np.zeros((J.shape[0], layout.size))
        A[:, layout.qdd] = J
        return TaskRows(A, b)


class MaskedMotionTask(MotionTask):
    """A motion task on ``size`` axes (the CoM's 3, a frame's 6) of which ``mask`` (``size`` booleans, one
    True at least) selects the rows. ``kp``, ``kd``, ``weight``: a scalar or ``size`` values over the axes
    (the selected weights weigh the rows); ``_select``, ``_axes``: the selected axes as a slice or indices
    (``_motion.row_selection``) and as indices."""

    def __init__(self, name: str, size: int, mask: ArrayLike, kp: ArrayLike, kd: ArrayLike,
                 weight: ArrayLike) -> None:
        self.mask = selection(mask, size, f"task {name!r} mask")
        self._select = row_selection(self.mask)
        self._axes = np.flatnonzero(self.mask)
        super().__init__(name, int(self.mask.sum()), gain(weight, size, f"task {name!r} weight")[self.mask])
        self.kp = gain(kp, size, f"task {name!r} kp")
        self.kd = gain(kd, size, f"task {name!r} kd")


@njit(cache=True)
def scaled_rows(J: np.ndarray, d: np.ndarray, weight: np.ndarray, A: np.ndarray, b: np.ndarray) -> None:
    """``A[:, :cols(J)] = J sqrt(weight)`` row by row and ``b = d sqrt(weight)`` (numpy's products: the same
    bits as ``J * np.sqrt(weight)[:, None]``)."""
    for i in range(d.size):
        scale = math.sqrt(weight[i])
        for j in range(J.shape[1]):
            A[i, j] = J[i, j] * scale
        b[i] = d[i] * scale


@njit(cache=True)
def scaled_identity(weight: np.ndarray, d: np.ndarray, column: int, A: np.ndarray, b: np.ndarray) -> None:
    """``sqrt(weight)`` on the diagonal of ``A[:, column:]`` and ``b = d sqrt(weight)``: identity rows
    (on one block of the decision vector) scaled."""
    for i in range(d.size):
        scale = math.sqrt(weight[i])
        A[i, column + i] = scale
        b[i] = d[i] * scale


_SCALED = Kernel(scaled_rows, IN2, IN1, IN1, OUT2, OUT1)
SCALED_IDENTITY = Kernel(scaled_identity, IN1, IN1, INT, OUT2, OUT1)
