"""Periodic gaits and their scheduler: which foot is in stance or swing at time ``t``, and for how long.

A gait of ``period`` T and ``duty`` d (the stance fraction of a cycle) gives each foot a phase offset
``o_i``: with the gait clock ``c = (t - t0) / T``, foot ``i`` lifts off when ``c + o_i = d`` (mod 1) and
touches down when ``c + o_i = 0`` (mod 1). The gaits (Robot Dynamics Essential §2.8: stance/swing alternation,
static stability with the CoM over the support polygon; Alexander 1984, "The gaits of bipedal and
quadrupedal animals", Int. J. Robotics Research 3(2), for their footfall patterns):

- ``stand``: every foot in stance for ever (duty 1);
- ``walk``: a four-beat (n-beat) gait: the feet touch down one at a time, ``1/n`` of a cycle apart, in
  the order of ``footfall_sequence`` (a quadruped's lateral-sequence walk LH, LF, RH, RF; a hexapod's
  wave gait), so with ``d > 1 - 1/n`` at least ``n - 1`` feet are down at any time;
- ``trot``, ``pace``, ``bound``: two groups of feet half a cycle apart (``two_beat``): the diagonal pairs
  (a hexapod's two tripods, ``alternating_groups``), the left and right feet (``lateral_groups``), the
  front and hind feet (``fore_aft_groups``); with ``d > 1/2`` both groups are down while the load changes
  hands.

``Gait.handover`` is the shortest time from a touchdown to the next lift-off of any foot: the time a foot
has to unload onto the one that just landed (the controller's contact ramp fits in it).

``support_distance`` is how far a gait's support leaves the centre of its feet's pattern: over its cycle,
the largest distance from the centroid to the convex hull of the feet in stance (0 when every support,
down to a diagonal pair's segment, contains it: a trot's diagonals cross there; a pace's or a bound's
pairs stand half a track or a body length away). A controller that holds the CoM over the centre, static
stability's rule (Robot Dynamics Essential §2.8), can use only the gaits with a small one.

``pendulum_period`` is the default period law: dynamic similarity (Alexander and Jayes 1983, "A dynamic
similarity hypothesis for the gaits of quadrupedal mammals", J. Zoology 201) says animals of different size
moving at the same Froude number ``v^2 / (g l)`` use the same gait with the same duty factor and relative
stride length, so their times scale with the leg's pendulum time: ``T = k 2 pi sqrt(l / g)``, ``l`` the
leg's length (hip to foot in the nominal stance; the hip height of an upright leg), ``k`` a dimensionless
ratio.

``GaitScheduler`` keeps each foot's current stance or swing (its start and end times) and switches gait
at once, keeping every foot's phase continuous: a swing in progress ends as planned; a stance in progress
ends at the new gait's first lift-off for that foot no earlier than planned (and no earlier than ``lead``
after the switch, the time to unload it); a stance that starts later lasts at least the new gait's stance.
The new gait's clock is chosen so that the longest of these waits is shortest. Stances only ever get
longer, so a switch never lifts a foot early, and there is no need for a moment with every foot down (a
walk has none). Switching to ``stand``: every stance lasts for ever and the feet in swing land as planned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

TIME_EPS = 1e-9  # s: times within this of a segment's end count as its end (floating-point clock)
_PAIR = 2  # a two-beat gait's groups; the fewest feet of a walk or a grouping
_SEGMENT = 2  # points of a hull without area (a point or a segment) at most; more make a polygon


@dataclass(frozen=True)
class Gait:
    """``name``, ``period`` [s] (> 0), ``duty`` (stance fraction, in (0, 1]) and per-foot ``offsets``
    (cycle phase at the gait's start, in [0, 1); module doc). ``duty == 1``: the feet never swing."""

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

    @property
    def handover(self) -> float:
        """The shortest time [s] from a touchdown (of any foot) to the next lift-off (of any foot); 0 when a
        foot lifts off as another lands, ``inf`` when no foot swings (module doc)."""
        if not self.moves:
            return math.inf
        touchdowns = np.sort([(-o) % 1.0 for o in self.offsets.values()])
        gap = 1.0
        for o in self.offsets.values():
            since = ((self.duty - o) - touchdowns) % 1.0  # cycles from each touchdown to this lift-off
            since[since > 1.0 - 1e-12] = 0.0  # (a touchdown at the lift-off itself, rounded below it)
            gap = min(gap, float(since.min()))
        return gap * self.period


def stand(feet: Iterable[str]) -> Gait:
    """All ``feet`` in stance for ever (period 1 s, duty 1: the clock does not matter)."""
    return Gait("stand", 1.0, 1.0, dict.fromkeys(feet, 0.0))


def two_beat(name: str, groups: Sequence[Sequence[str]], period: float, duty: float) -> Gait:
    """Two groups of feet alternating half a period apart: ``groups[0]`` at phase 0 (starting its stance),
    ``groups[1]`` at 1/2 (module doc: trot, pace, bound)."""
    if len(groups) != _PAIR or not all(groups):
        raise ValueError(f"a {name} needs two non-empty groups of feet, got {groups!r}")
    offsets = {foot: 0.0 for foot in groups[0]}
    for foot in groups[1]:
        if foot in offsets:
            raise ValueError(f"foot {foot!r} is in both {name} groups {groups!r}")
        offsets[foot] = 0.5
    return Gait(name, period, duty, offsets)


def trot(groups: Sequence[Sequence[str]], period: float, duty: float) -> Gait:
    """The diagonal pairs (``alternating_groups``; a hexapod's two tripods) alternating (``two_beat``)."""
    return two_beat("trot", groups, period, duty)


def pace(groups: Sequence[Sequence[str]], period: float, duty: float) -> Gait:
    """The left and the right feet alternating (``lateral_groups``, ``two_beat``)."""
    return two_beat("pace", groups, period, duty)


def bound(groups: Sequence[Sequence[str]], period: float, duty: float) -> Gait:
    """The front and the hind feet alternating (``fore_aft_groups``, ``two_beat``)."""
    return two_beat("bound", groups, period, duty)


def walk(sequence: Sequence[str], period: float, duty: float) -> Gait:
    """The feet touching down one at a time in the order of ``sequence``, ``1/n`` of a cycle apart
    (``footfall_sequence``; module doc)."""
    n = len(sequence)
    if n < _PAIR or len(set(sequence)) != n:
        raise ValueError(f"a walk needs two distinct feet or more in its footfall sequence, got "
                         f"{sequence!r}")
    return Gait("walk", period, duty, {foot: (-k / n) % 1.0 for k, foot in enumerate(sequence)})


def _hull(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2-D ``points``, counter-clockwise, without collinear points (monotone chain)."""
    pts = sorted(set(map(tuple, np.round(points, 12).tolist())))
    if len(pts) <= _SEGMENT:
        return np.array(pts)

    def half(sequence: list[tuple[float, ...]]) -> list[tuple[float, ...]]:
        chain: list[tuple[float, ...]] = []
        for p in sequence:
            while len(chain) >= _SEGMENT and ((chain[-1][0] - chain[-2][0]) * (p[1] - chain[-2][1])
                                       - (chain[-1][1] - chain[-2][1]) * (p[0] - chain[-2][0])) <= 0.0:
                chain.pop()
            chain.append(p)
        return chain[:-1]

    return np.array(half(pts) + half(pts[::-1]))


def _distance_to_hull(points: np.ndarray) -> float:
    """The distance from the origin to the convex hull of 2-D ``points`` (0 inside or on it)."""
    hull = _hull(points)
    if len(hull) == 1:
        return float(np.linalg.norm(hull[0]))
    edges = [(hull[k], hull[(k + 1) % len(hull)]) for k in range(len(hull) if len(hull) > _SEGMENT else 1)]
    if len(hull) > _SEGMENT and all(a[0] * b[1] - a[1] * b[0] >= 0.0 for a, b in edges):  # left of every edge
        return 0.0
    distance = math.inf
    for a, b in edges:
        d = b - a
        u = min(max(float(-a @ d) / float(d @ d), 0.0), 1.0)
        distance = min(distance, float(np.linalg.norm(a + u * d)))
    return distance


def support_distance(gait: Gait, positions: Mapping[str, np.ndarray]) -> float:
    """Over ``gait``'s cycle, the largest distance [m] from the centroid of the feet's horizontal
    ``positions`` (foot -> (x, y)) to the convex hull of the feet in stance (module doc); 0 for ``stand``."""
    xy = {f: np.asarray(positions[f], dtype=float) for f in gait.offsets}
    centre = np.mean(list(xy.values()), axis=0)
    if not gait.moves:
        return 0.0
    events = sorted({(-o) % 1.0 for o in gait.offsets.values()} | {(gait.duty - o) % 1.0
                                                                     for o in gait.offsets.values()})
    worst = 0.0
    for k, phase in enumerate(events):  # the middle of every interval between two events
        c = 0.5 * (phase + (events[k + 1] if k + 1 < len(events) else events[0] + 1.0))
        stance = [xy[f] - centre for f, o in gait.offsets.items() if (c + o) % 1.0 < gait.duty]
        worst = max(worst, _distance_to_hull(np.array(stance)) if stance else math.inf)
    return worst


def pendulum_period(leg_length: float, gravity: float, ratio: float) -> float:
    """``ratio 2 pi sqrt(leg_length / gravity)`` [s]: the period law of dynamic similarity (module doc)."""
    for name, value in (("leg_length", leg_length), ("gravity", gravity), ("ratio", ratio)):
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"pendulum_period: {name} must be finite and > 0, got {value}")
    return ratio * 2.0 * math.pi * math.sqrt(leg_length / gravity)


def _centred(feet: Sequence[str], positions: np.ndarray) -> np.ndarray:
    xy = np.asarray(positions, dtype=float)
    if len(feet) < _PAIR or xy.shape != (len(feet), 2) or not np.isfinite(xy).all():
        raise ValueError(f"give two feet or more with finite (n, 2) positions, got {len(feet)} feet and "
                         f"positions of shape {xy.shape}")
    centred: np.ndarray = xy - xy.mean(axis=0)
    return centred


def alternating_groups(feet: Sequence[str], positions: np.ndarray) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two groups of a trot from the feet's nominal horizontal ``positions`` (n x 2, base frame): the
    feet sorted by their angle about the centroid, every other one in each group. Four feet give the
    diagonal pairs, six the two tripods. An odd number of feet has no alternation: ``ValueError``."""
    if len(feet) % 2:
        raise ValueError(f"alternating groups need an even number of feet, got {len(feet)}")
    d = _centred(feet, positions)
    order = np.argsort(np.arctan2(d[:, 1], d[:, 0]))
    return tuple(feet[k] for k in order[0::2]), tuple(feet[k] for k in order[1::2])


def _sides(feet: Sequence[str], coordinate: np.ndarray, axis: str, tolerance: float) -> tuple[list[int], ...]:
    """Indices of the feet on the positive and the negative side of ``coordinate``; ``ValueError`` when a
    foot is within ``tolerance`` of the centroid or a side is empty."""
    middle = [feet[int(k)] for k in np.flatnonzero(np.abs(coordinate) <= tolerance)]
    positive = [int(k) for k in np.flatnonzero(coordinate > tolerance)]
    negative = [int(k) for k in np.flatnonzero(coordinate < -tolerance)]
    if middle or not positive or not negative:
        raise ValueError(f"the feet do not split into two sides along {axis} about their centroid (feet "
                         f"within {tolerance:.3g} m of it: {middle}; sides of {len(positive)} and "
                         f"{len(negative)} feet)")
    return positive, negative


def _tolerance(d: np.ndarray) -> float:
    return 1e-3 * float(np.abs(d).max())


def lateral_groups(feet: Sequence[str], positions: np.ndarray) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The left (+y) and the right (-y) feet about their centroid (a pace's groups); ``ValueError`` when a
    foot is on the centre line."""
    d = _centred(feet, positions)
    left, right = _sides(feet, d[:, 1], "y", _tolerance(d))
    return tuple(feet[k] for k in left), tuple(feet[k] for k in right)


def fore_aft_groups(feet: Sequence[str], positions: np.ndarray) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The front (+x) and the hind (-x) feet about their centroid (a bound's groups); ``ValueError`` when a
    foot is level with the centroid (a hexapod's middle legs)."""
    d = _centred(feet, positions)
    front, hind = _sides(feet, d[:, 0], "x", _tolerance(d))
    return tuple(feet[k] for k in front), tuple(feet[k] for k in hind)


def footfall_sequence(feet: Sequence[str], positions: np.ndarray) -> tuple[str, ...]:
    """A walk's footfall order: the left feet from the hindmost to the foremost, then the right feet the
    same way (a quadruped's lateral-sequence walk LH, LF, RH, RF; a hexapod's wave gait)."""
    d = _centred(feet, positions)
    left, right = _sides(feet, d[:, 1], "y", _tolerance(d))
    return tuple(feet[k] for side in (left, right) for k in sorted(side, key=lambda k: d[k, 0]))


@dataclass
class FootPhase:
    """One foot at one instant: ``in_stance``, ``phase`` in [0, 1] of its current stance or swing, the
    ``time_left`` in it [s], whether a swing follows this stance (``lifts_next``: False while standing),
    ``swing_duration`` [s] (of this swing, or of the next one) and ``stance_duration`` [s] (of this stance,
    or in swing of the next one as planned; a last stance before standing counts as the swing's gait's)."""

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


@dataclass
class _Segment:
    """A foot's current stance or swing: ``start`` and ``end`` times [s] (``end`` inf: a stance for ever),
    and the durations of its next swing and (in swing) of the stance after it."""

    in_stance: bool = True
    start: float = 0.0
    end: float = math.inf
    next_swing: float = 0.0
    next_stance: float = math.inf


class GaitScheduler:
    """Phases of ``feet`` under a gait (module doc); starts standing."""

    def __init__(self, feet: Sequence[str]) -> None:
        self.feet = tuple(feet)
        if not self.feet or len(set(self.feet)) != len(self.feet):
            raise ValueError(f"the scheduler needs distinct foot names, got {list(feet)}")
        self._gait = stand(self.feet)
        self._t0 = 0.0  # the gait clock's origin: c = (t - t0) / period
        self._lead = 0.0
        self._switch_at_start = False  # set_gait before the first update
        self._segments = {f: _Segment() for f in self.feet}
        self._state = GaitState(0.0, self._gait, {f: FootPhase() for f in self.feet})
        # each foot's answer and its segment (both objects kept for the scheduler's life: _fill's loop)
        self._pairs = tuple((self._state.feet[f], self._segments[f]) for f in self.feet)
        self._t: float | None = None

    @property
    def gait(self) -> Gait:
        return self._gait

    @property
    def all_in_stance(self) -> bool:
        """Whether every foot was in stance at the last ``update`` (or ``set_gait``)."""
        return all(s.in_stance for s in self._segments.values())

    def set_gait(self, gait: Gait, lead: float = 0.0) -> None:
        """Switch to ``gait`` now (at the last ``update``'s time, or at the first ``update``), every foot's
        phase continuous (module doc); no stance foot lifts off within ``lead`` [s] of the switch. It must
        phase exactly these feet."""
        if set(gait.offsets) != set(self.feet):
            raise ValueError(f"gait {gait.name!r} phases feet {sorted(gait.offsets)}, the scheduler's are "
                             f"{sorted(self.feet)}")
        if not (math.isfinite(lead) and lead >= 0.0):
            raise ValueError(f"lead must be finite and >= 0 s, got {lead}")
        self._gait = gait
        self._lead = lead
        if self._t is not None:
            self._switch(self._t)
            self._fill(self._t)
        else:
            self._switch_at_start = True

    def update(self, t: float) -> GaitState:
        """Every foot's phase at ``t`` (non-decreasing between calls)."""
        if not math.isfinite(t):
            raise ValueError(f"t must be finite, got {t}")
        if self._t is None:
            for segment in self._segments.values():
                segment.start = t
            if self._switch_at_start:
                self._switch(t)
        elif t < self._t:
            raise ValueError(f"time went backwards: {t} after {self._t}")
        self._t = t
        self._advance(t)
        self._fill(t)
        return self._state

    # ----- timing ----------------------------------------------------------------------------------

    def _next_lift(self, foot: str, earliest: float) -> float:
        """The gait's first lift-off time of ``foot`` at or after ``earliest`` (inf when standing)."""
        g = self._gait
        if not g.moves:
            return math.inf
        first = self._t0 + g.period * (g.duty - g.offsets[foot])  # one lift-off time; the others k T apart
        k = math.ceil((earliest - first - TIME_EPS) / g.period)
        return first + k * g.period

    def _switch(self, t: float) -> None:
        """Retime every foot for the new gait at ``t`` (module doc)."""
        g = self._gait
        self._switch_at_start = False
        if not g.moves:
            for segment in self._segments.values():
                if segment.in_stance:
                    segment.end, segment.next_swing = math.inf, 0.0
            return
        earliest = {}
        for foot, s in self._segments.items():
            if s.in_stance:
                earliest[foot] = max(s.end if math.isfinite(s.end) else t, t + self._lead)
            else:
                earliest[foot] = s.end + g.stance_duration
        # the clock phase c0 at t minimising the longest wait: foot i waits wrap(y_i - c0) cycles (rounded to
        # 1e-9 cycles, so that ties are ties: then the smallest c0)
        y = {f: round(-((e - t) / g.period + g.offsets[f] - g.duty) % 1.0, 9) % 1.0
             for f, e in earliest.items()}
        candidates = sorted(set(y.values()))
        c0 = min(candidates, key=lambda c: round(max((v - c) % 1.0 for v in y.values()), 9))
        self._t0 = t - c0 * g.period
        for foot, s in self._segments.items():
            if s.in_stance:
                if math.isinf(s.end):  # a standing stance: its phase counts from now
                    s.start = t
                s.end = self._next_lift(foot, earliest[foot])
                s.next_swing = g.swing_duration
            else:
                s.next_stance = self._next_lift(foot, earliest[foot]) - s.end

    def _advance(self, t: float) -> None:
        """Step every foot through the stance and swing ends passed by ``t``."""
        g = self._gait
        for foot, s in self._segments.items():
            while t >= s.end - TIME_EPS:
                if s.in_stance:  # lift-off (only while the gait moves: a standing stance has no end)
                    s.in_stance, s.start, s.end = False, s.end, s.end + s.next_swing
                    s.next_stance = self._next_lift(foot, s.end + g.stance_duration) - s.end
                else:  # touchdown
                    lift = self._next_lift(foot, s.end + g.stance_duration)
                    s.in_stance, s.start, s.end = True, s.end, lift
                    s.next_swing = g.swing_duration if g.moves else 0.0

    def _fill(self, t: float) -> None:
        state = self._state
        state.t, state.gait = t, self._gait
        for p, s in self._pairs:
            end, start = s.end, s.start
            p.in_stance = s.in_stance
            p.time_left = max(end - t, 0.0)
            length = end - start
            p.phase = min(max((t - start) / length, 0.0), 1.0) if math.isfinite(length) and length > 0.0 \
                else 0.0
            if s.in_stance:
                p.stance_duration, p.swing_duration = length, s.next_swing
                p.lifts_next = math.isfinite(end)
            else:
                p.stance_duration, p.swing_duration = s.next_stance, length
                p.lifts_next = True
