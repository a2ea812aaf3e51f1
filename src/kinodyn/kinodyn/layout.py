"""``Layout``: named slots of one flat float64 block, the block a ``kinodyn.data.Data`` or an evaluation owns.

Compiled kernels receive ``layout.offsets`` (int64: where each slot starts, then the block's size) and
read their slots by index, so no offset is computed twice or by hand; Python reads the same slots as named
array views (``layout.views(block)``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence


class Layout:
    """Slots ``(name, shape)`` laid out in order, without gaps, in one float64 block of ``size`` entries."""

    __slots__ = ("names", "offsets", "shapes", "size")

    def __init__(self, slots: Sequence[tuple[str, tuple[int, ...]]]) -> None:
        names = [name for name, _ in slots]
        if len(set(names)) != len(names):
            raise ValueError(f"slot names must be distinct, got {names}")
        starts = [0]
        for _, shape in slots:
            starts.append(starts[-1] + math.prod(shape))
        self.names: tuple[str, ...] = tuple(names)
        self.shapes: tuple[tuple[int, ...], ...] = tuple(shape for _, shape in slots)
        self.offsets = np.array(starts, dtype=np.int64)
        self.offsets.flags.writeable = False
        self.size = starts[-1]

    def views(self, block: np.ndarray) -> dict[str, np.ndarray]:
        """``{name: view of the slot in block}``; ``block`` holds ``size`` float64 entries."""
        if block.shape != (self.size,):
            raise ValueError(f"block must have shape ({self.size},), got {block.shape}")
        o = self.offsets
        return {name: block[o[k]:o[k + 1]].reshape(shape)
                for k, (name, shape) in enumerate(zip(self.names, self.shapes, strict=True))}
