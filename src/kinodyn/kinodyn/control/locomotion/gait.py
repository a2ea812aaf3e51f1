"""Periodic gaits and their scheduler: which foot is in stance or swing at time ``t``, and for how long.

A gait of ``period`` T and ``duty`` d (the stance fraction of a cycle) gives each foot a phase offset
``o_i``; its cycle phase is ``phi_i = ((t - t0) / T + o_i) mod 1`` (``t0``: when the gait started), in
stance for ``phi_i < d`` and in swing after. A trot alternates two groups of feet half a period apart
(the diagonal pairs of a quadruped; the two tripods of a hexapod: the same construction), so with
``d > 1/2`` every foot is on the ground for ``(d - 1/2) T`` twice per cycle, when the load is handed
over. Standing is the gait whose feet never swing. Seed 003 inventory §2.8 (stance/swing alternation).

``GaitScheduler.set_gait`` switches at a safe moment: at once when every foot is in stance under the
current gait, else at the first ``update`` where that holds; the new gait's clock starts there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

STANCE_EPS = 1e-9  # phases within this of the stance end count as its end (floating-point clock)


@dataclass(frozen=True)
class Gait:
    """``name``, ``period`` [s] (> 0), ``duty`` (stance fraction, in (0, 1]) and per-foot ``offsets``
    (cycle phase at the gait's start, in [0, 1)). ``duty == 1``: the feet never swing (standing)."""

    name: str
    period: float
    duty: float
    offsets: Mapping[str, float]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.period) and self.period > 0.0):
            raise ValueError(f"gait {self.name!r}: period must be finite and > 0 s, got {self.period}")
        if not (math.isfinite(self.duty) and 0.0 < self.duty <= 1.0):
            raise ValueError(f"gait {self.name!r}: duty (stance fraction) must be in (0, 1], got {self.duty}")
        if not self.offsets:
            raise ValueError(f"gait {self.name!r}: give at least one foot's phase offset")
        for foot, offset in self.offsets.items():
            if not (math.isfinite(offset) and 0.0 <= offset < 1.0):
                raise ValueError(f"gait {self.name!r}: the phase offset of {foot!r} must be in [0, 1), "
                                 f"got {offset}")
        object.__setattr__(self, "offsets", dict(self.offsets))

    @property
    def stance_duration(self) -> float:
        return self.duty * self.period

    @property
    def swing_duration(self) -> float:
        return (1.0 - self.duty) * self.period

    @property
    def moves(self) -> bool:
        """Whether any foot ever swings."""
        return self.duty < 1.0


def stand(feet: Iterable[str]) -> Gait:
    """All ``feet`` in stance for ever (period 1 s, duty 1: the clock does not matter)."""
    return Gait("stand", 1.0, 1.0, dict.fromkeys(feet, 0.0))


def trot(groups: Sequence[Sequence[str]], period: float, duty: float) -> Gait:
    """Two groups of feet alternating half a period apart: ``groups[0]`` at phase 0 (starting its stance),
    ``groups[1]`` at 1/2 (in stance for ``(duty - 1/2) period`` more when ``duty > 1/2``). A quadruped's
    diagonal pairs make a trot, a hexapod's two tripods a tripod gait."""
    if len(groups) != 2 or not all(groups):
        raise ValueError(f"a trot needs two non-empty groups of feet, got {groups!r}")
    offsets = {foot: 0.0 for foot in groups[0]}
    for foot in groups[1]:
        if foot in offsets:
            raise ValueError(f"foot {foot!r} is in both trot groups {groups!r}")
        offsets[foot] = 0.5
    return Gait("trot", period, duty, offsets)


def alternating_groups(feet: Sequence[str], positions: np.ndarray) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two groups of a trot from the feet's nominal horizontal ``positions`` (n x 2, base frame): the
    feet sorted by their angle about the centroid, every other one in each group. Four feet give the
    diagonal pairs, six the two tripods. An odd number of feet has no alternation: ``ValueError``."""
    xy = np.asarray(positions, dtype=float)
    if len(feet) % 2 or len(feet) < 2 or xy.shape != (len(feet), 2):
        raise ValueError(f"alternating groups need an even number of feet with (n, 2) positions, got "
                         f"{len(feet)} feet and positions of shape {xy.shape}")
    d = xy - xy.mean(axis=0)
    order = np.argsort(np.arctan2(d[:, 1], d[:, 0]))
    return tuple(feet[k] for k in order[0::2]), tuple(feet[k] for k in order[1::2])


@dataclass
class FootPhase:
    """One foot at one instant: ``in_stance``, ``phase`` in [0, 1] of its current stance or swing, the
    ``time_left`` in it [s], the gait's ``swing_duration`` and ``stance_duration`` [s], and whether a
    swing follows this stance (``lifts_next``: False while standing)."""

    in_stance: bool = True
    phase: float = 0.0
    time_left: float = math.inf
    swing_duration: float = 0.0
    stance_duration: float = math.inf
    lifts_next: bool = False


@dataclass
class GaitState:
    """The scheduler's answer at ``t``: the gait in force and each foot's ``FootPhase`` (objects reused
    from one update to the next: read them, do not keep them)."""

    t: float
    gait: Gait
    feet: dict[str, FootPhase] = field(default_factory=dict)

    @property
    def stance(self) -> tuple[str, ...]:
        return tuple(f for f, p in self.feet.items() if p.in_stance)


class GaitScheduler:
    """Phases of ``feet`` under a gait (module doc); starts standing."""

    def __init__(self, feet: Sequence[str]) -> None:
        self.feet = tuple(feet)
        if not self.feet or len(set(self.feet)) != len(self.feet):
            raise ValueError(f"the scheduler needs distinct foot names, got {list(feet)}")
        self._gait = stand(self.feet)
        self._start = 0.0
        self._pending: Gait | None = None
        self._state = GaitState(0.0, self._gait, {f: FootPhase() for f in self.feet})
        self._t: float | None = None

    @property
    def gait(self) -> Gait:
        return self._gait

    @property
    def pending(self) -> Gait | None:
        """The gait waiting for a safe moment, if any."""
        return self._pending

    def set_gait(self, gait: Gait) -> None:
        """Switch to ``gait`` at the next safe moment (module doc); it must phase exactly these feet."""
        if set(gait.offsets) != set(self.feet):
            raise ValueError(f"gait {gait.name!r} phases feet {sorted(gait.offsets)}, the scheduler's are "
                             f"{sorted(self.feet)}")
        self._pending = gait
        if self._t is not None and self._all_in_stance():
            self._switch(self._t)

    def update(self, t: float) -> GaitState:
        """Every foot's phase at ``t`` (non-decreasing between calls), switching gait when it is safe."""
        if not math.isfinite(t):
            raise ValueError(f"t must be finite, got {t}")
        if self._t is None:
            self._start = t
        elif t < self._t:
            raise ValueError(f"time went backwards: {t} after {self._t}")
        self._t = t
        self._fill(t)
        if self._pending is not None and self._all_in_stance():
            self._switch(t)
        return self._state

    def _all_in_stance(self) -> bool:
        return all(p.in_stance for p in self._state.feet.values())

    def _switch(self, t: float) -> None:
        assert self._pending is not None
        self._gait, self._pending, self._start = self._pending, None, t
        self._fill(t)

    def _fill(self, t: float) -> None:
        gait, state = self._gait, self._state
        state.t, state.gait = t, gait
        T, d = gait.period, gait.duty
        cycle = (t - self._start) / T
        for foot, p in state.feet.items():
            p.swing_duration, p.stance_duration = gait.swing_duration, gait.stance_duration
            p.lifts_next = gait.moves
            if not gait.moves:
                p.in_stance, p.phase, p.time_left = True, 0.0, math.inf
                continue
            phi = (cycle + gait.offsets[foot]) % 1.0
            if phi < d - STANCE_EPS:
                p.in_stance, p.phase, p.time_left = True, phi / d, (d - phi) * T
            else:
                swing = max(phi - d, 0.0)
                p.in_stance, p.phase, p.time_left = False, swing / (1.0 - d), (1.0 - d - swing) * T
