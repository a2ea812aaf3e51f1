"""Gaits and the gait scheduler: phases against hand-computed values, the footfall patterns of the gaits,
the phase-continuous switch between any two of them at any phase, the period law, validation."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control import locomotion
from kinodyn.control.locomotion.gait import _distance_to_hull
from scipy.spatial import ConvexHull

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

FEET = ("LF", "LH", "RF", "RH")
PAIRS = (("LF", "RH"), ("LH", "RF"))
QUAD = np.array([[0.25, 0.2], [-0.25, 0.2], [0.25, -0.2], [-0.25, -0.2]])
LEGS = ("LF", "LM", "LH", "RF", "RM", "RH")
HEXA = np.array([[0.2, 0.35], [0.0, 0.4], [-0.2, 0.35], [0.2, -0.35], [0.0, -0.4], [-0.2, -0.35]])


def test_trot_phases_match_hand_computed_values() -> None:
    """From standing at t = 1 with a lead of 0.05 s: the feet would wait wrap(y - c0) cycles for y = 0.5
    (LF, RH) and 0 (LH, RF); c0 = 0 (the tie's first) makes LH, RF lift at 1.05 s and LF, RH at the clock's
    next lift-off for offset 0, 1 + 0.6 * 0.5 = 1.3 s."""
    scheduler = locomotion.GaitScheduler(FEET)
    scheduler.update(1.0)
    scheduler.set_gait(locomotion.trot(PAIRS, period=0.5, duty=0.6), lead=0.05)
    assert scheduler.gait.name == "trot"
    state = scheduler.update(1.0)
    lf, lh = state.feet["LF"], state.feet["LH"]
    assert lf.in_stance
    assert lf.phase == 0.0
    assert math.isclose(lf.time_left, 0.3)
    assert lh.in_stance
    assert lh.phase == 0.0
    assert math.isclose(lh.time_left, 0.05)
    assert lh.lifts_next
    # t = 1.2: LF in stance (0.1 s left of 0.3), LH in swing since 1.05 (3/4 of its 0.2 s done)
    state = scheduler.update(1.2)
    lf, lh, rf = state.feet["LF"], state.feet["LH"], state.feet["RF"]
    assert lf.in_stance
    assert math.isclose(lf.phase, 0.2 / 0.3)
    assert math.isclose(lf.time_left, 0.1)
    assert not lh.in_stance
    assert math.isclose(lh.phase, 0.75)
    assert math.isclose(lh.time_left, 0.05)
    # its next stance: from 1.25 to the clock's lift-off 1 + 0.5 (0.6 - 0.5 + 1) = 1.55
    assert math.isclose(lh.swing_duration, 0.2)
    assert math.isclose(lh.stance_duration, 0.3)
    assert (rf.in_stance, rf.phase) == (lh.in_stance, lh.phase)  # the pair moves together
    assert state.stance == ("LF", "RH")
    # t = 1.45: LF in swing since 1.3 (3/4), LH in stance since 1.25
    state = scheduler.update(1.45)
    assert not state.feet["LF"].in_stance
    assert math.isclose(state.feet["LF"].phase, 0.75)
    assert state.feet["LH"].in_stance
    assert state.feet["LH"].lifts_next
    assert math.isclose(state.feet["LH"].time_left, 0.1)


def test_standing_never_swings() -> None:
    scheduler = locomotion.GaitScheduler(FEET)
    for t in np.linspace(0.0, 10.0, 7):
        state = scheduler.update(float(t))
        assert all(p.in_stance and p.time_left == math.inf and not p.lifts_next for p in state.feet.values())


def test_switch_to_stand_lets_the_swinging_feet_land_as_planned() -> None:
    scheduler = locomotion.GaitScheduler(FEET)
    scheduler.update(0.0)
    scheduler.set_gait(locomotion.trot(PAIRS, 0.5, 0.6), lead=0.04)  # LH, RF lift at 0.04 s, land at 0.24 s
    state = scheduler.update(0.1)
    assert state.stance == ("LF", "RH")
    scheduler.set_gait(locomotion.stand(FEET))
    assert scheduler.gait.name == "stand"
    assert not scheduler.all_in_stance
    state = scheduler.update(0.1)
    assert all(state.feet[f].time_left == math.inf and not state.feet[f].lifts_next for f in ("LF", "RH"))
    assert math.isclose(state.feet["LH"].time_left, 0.14)
    assert math.isclose(state.feet["LH"].phase, 0.3)
    assert math.isclose(state.feet["LH"].stance_duration, 0.3)  # (the swing's gait's, for its foothold)
    state = scheduler.update(0.2398)
    assert state.stance == ("LF", "RH")
    state = scheduler.update(0.2402)
    assert scheduler.all_in_stance
    assert all(p.time_left == math.inf for p in state.feet.values())
    for t in (1.0, 5.0):
        assert scheduler.update(t).stance == FEET


def test_groups_and_footfall_sequences() -> None:
    a, b = locomotion.alternating_groups(FEET, QUAD)
    assert {frozenset(a), frozenset(b)} == {frozenset(PAIRS[0]), frozenset(PAIRS[1])}
    assert locomotion.lateral_groups(FEET, QUAD) == (("LF", "LH"), ("RF", "RH"))
    assert locomotion.fore_aft_groups(FEET, QUAD) == (("LF", "RF"), ("LH", "RH"))
    assert locomotion.footfall_sequence(FEET, QUAD) == ("LH", "LF", "RH", "RF")  # the lateral-sequence walk
    a, b = locomotion.alternating_groups(LEGS, HEXA)
    assert {frozenset(a), frozenset(b)} == {frozenset(("LF", "LH", "RM")), frozenset(("LM", "RF", "RH"))}
    assert locomotion.footfall_sequence(LEGS, HEXA) == ("LH", "LM", "LF", "RH", "RM", "RF")  # the wave gait
    assert locomotion.lateral_groups(LEGS, HEXA) == (("LF", "LM", "LH"), ("RF", "RM", "RH"))
    with pytest.raises(ValueError, match="along x"):  # the middle legs are level with the centroid
        locomotion.fore_aft_groups(LEGS, HEXA)
    with pytest.raises(ValueError, match="even number"):
        locomotion.alternating_groups(LEGS[:5], HEXA[:5])


def _swing_times(gait: locomotion.Gait, t_end: float, dt: float = 0.001) -> dict[str, np.ndarray]:
    """Per foot, whether it is in swing at each tick of ``dt`` until ``t_end`` (the gait from t = 0)."""
    scheduler = locomotion.GaitScheduler(tuple(gait.offsets))
    scheduler.update(0.0)
    scheduler.set_gait(gait, lead=0.01)
    times = np.arange(0.0, t_end, dt)
    swing = {f: np.zeros(times.size, bool) for f in gait.offsets}
    for k, t in enumerate(times):
        for foot, p in scheduler.update(float(t)).feet.items():
            swing[foot][k] = not p.in_stance
    return swing


def test_walk_lifts_one_foot_at_a_time_in_its_footfall_order() -> None:
    """A four-beat walk, period 1 s, duty 0.8: each foot swings 0.2 s per cycle, at most one at a time, in
    the order LH, LF, RH, RF a quarter cycle apart; the handover (all four down) is (0.8 - 3/4) T."""
    gait = locomotion.walk(("LH", "LF", "RH", "RF"), period=1.0, duty=0.8)
    assert gait.offsets == {"LH": 0.0, "LF": 0.75, "RH": 0.5, "RF": 0.25}
    assert math.isclose(gait.handover, 0.05, abs_tol=1e-12)
    swing = _swing_times(gait, 6.0)
    in_air = sum(s.astype(int) for s in swing.values())
    assert in_air.max() == 1
    assert (in_air[2000:] == 0).mean() == pytest.approx(0.2, abs=0.003)
    lifts = {f: np.flatnonzero(np.diff(s.astype(int)) == 1)[-3:] * 0.001 for f, s in swing.items()}
    for foot, times in lifts.items():
        np.testing.assert_allclose(np.diff(times), 1.0, atol=0.0011)
        assert swing[foot][2000:].mean() == pytest.approx(0.2, abs=0.003)
    order = sorted(FEET, key=lambda f: lifts[f][-1] % 1.0)
    start = order.index("LH")
    assert (order[start:] + order[:start]) == ["LH", "LF", "RH", "RF"]
    gaps = np.diff(sorted(lifts[f][-1] % 1.0 for f in FEET))
    np.testing.assert_allclose(gaps, 0.25, atol=0.0011)


@pytest.mark.parametrize(("make", "groups"), [(locomotion.trot, PAIRS),
                                               (locomotion.pace, locomotion.lateral_groups(FEET, QUAD)),
                                               (locomotion.bound, locomotion.fore_aft_groups(FEET, QUAD))])
def test_two_beat_gaits_move_their_pairs_together(
        make: Callable[[Sequence[Sequence[str]], float, float], locomotion.Gait],
        groups: tuple[tuple[str, ...], ...]) -> None:
    gait = make(groups, 0.4, 0.6)
    assert math.isclose(gait.handover, 0.1 * 0.4)
    swing = _swing_times(gait, 3.0)
    for a, b in groups:
        np.testing.assert_array_equal(swing[a], swing[b])
    first, second = swing[groups[0][0]], swing[groups[1][0]]
    assert not (first & second).any()  # the two groups never swing together
    assert first[1000:].mean() == pytest.approx(0.4, abs=0.005)


def test_hexapod_wave_gait_handover() -> None:
    """Six feet touching down 1/6 cycle apart, duty 0.8: lift-offs at 0.8 + k/6, touchdowns at k/6; the
    shortest gap from a touchdown to a lift-off is 0.8 - 4/6 = 0.1333 cycles."""
    gait = locomotion.walk(locomotion.footfall_sequence(LEGS, HEXA), period=0.6, duty=0.8)
    assert math.isclose(gait.handover, (0.8 - 4 / 6) * 0.6, abs_tol=1e-12)
    assert locomotion.stand(LEGS).handover == math.inf
    assert locomotion.trot(PAIRS, 0.5, 0.5).handover == 0.0  # a lift-off as the other pair lands


def _gaits(period: float) -> dict[str, locomotion.Gait]:
    """The quadruped's gaits: the walk (duty 0.8) at twice ``period``, the two-beat gaits at duty 0.6."""
    return {"walk": locomotion.walk(locomotion.footfall_sequence(FEET, QUAD), 2.0 * period, 0.8),
            "trot": locomotion.trot(PAIRS, period, 0.6),
            "pace": locomotion.pace(locomotion.lateral_groups(FEET, QUAD), period, 0.6),
            "bound": locomotion.bound(locomotion.fore_aft_groups(FEET, QUAD), period, 0.6),
            "stand": locomotion.stand(FEET)}


@pytest.mark.parametrize("sequence", [("trot", "walk", "pace", "bound", "trot", "stand"),
                                      ("walk", "bound", "walk", "trot", "pace", "stand"),
                                      ("pace", "trot", "bound", "pace", "walk", "stand")])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_switching_keeps_every_foot_phase_continuous(sequence: tuple[str, ...], seed: int) -> None:
    """Switches at random instants (any phase), 1 ms ticks. Every foot's stance or swing changes only when
    its time left runs out; every swing lasts its gait's swing time (none cut short or stretched); a stance
    lasts at least the lead (0.03 s) after a switch and at least the new gait's stance when it starts after
    one; the time left never jumps except up at a switch (a stance lengthened); two feet or more are always
    down (every gait here has two down); from a cycle, a swing and 1 s after the switch on, each foot lifts
    off once per period, at the gait's phase offsets (its footfall pattern reached)."""
    rng = np.random.default_rng(seed)
    gaits, dt, lead = _gaits(0.5), 0.001, 0.03
    scheduler = locomotion.GaitScheduler(FEET)
    scheduler.update(0.0)
    switch_times = np.cumsum(rng.uniform(1.3, 2.2, len(sequence)))
    prev = {f: (True, math.inf, 0.0) for f in FEET}  # in stance, time left, segment start
    lifts: dict[str, list[float]] = {f: [] for f in FEET}
    stage, current, switched = 0, gaits["stand"], -1.0
    swing_of: dict[str, float] = {}
    for k in range(int(switch_times[-1] / dt) + 1500):
        t = k * dt
        state = scheduler.update(t)
        assert len(state.stance) >= 2, (t, sequence)
        for f, p in state.feet.items():
            was_stance, left, start = prev[f]
            if p.in_stance == was_stance:
                assert abs(p.time_left - (left - dt)) < 1e-9 or left == math.inf, (f, t)
            else:
                assert left <= dt + 1e-9, (f, t, left)  # only when its time ran out
                end = t - dt + left
                if not p.in_stance:  # lift-off
                    lifts[f].append(end)
                    swing_of[f] = current.swing_duration
                    assert end - start >= min(lead, current.stance_duration) - 1e-9
                    assert math.isclose(p.swing_duration, current.swing_duration)
                else:  # touchdown: the swing lasted its gait's time
                    assert abs(end - start - swing_of[f]) < 1e-9
                start = end
            prev[f] = (p.in_stance, p.time_left, start)
        if stage < len(sequence) and t >= switch_times[stage]:
            current = gaits[sequence[stage]]
            scheduler.set_gait(current, lead=lead)
            for f, p in scheduler.update(t).feet.items():
                was_stance, left, start = prev[f]
                assert p.in_stance == was_stance
                assert p.time_left >= left - 1e-9 or left == math.inf  # (from standing: any)
                assert p.in_stance or abs(p.time_left - left) < 1e-9
                prev[f] = (p.in_stance, p.time_left, t if left == math.inf else start)
            stage, switched = stage + 1, t
        if stage > 0 and current.moves and t > switched + current.period + current.swing_duration + 1.0:
            for f in FEET:  # the last lift-offs keep the gait's period and relative phases
                assert abs(lifts[f][-1] - lifts[f][-2] - current.period) < 1e-6
                phase = (lifts[f][-1] - lifts[FEET[0]][-1]) / current.period
                offset = current.offsets[FEET[0]] - current.offsets[f]
                assert abs((phase - offset + 0.5) % 1.0 - 0.5) < 1e-6, (f, sequence[stage - 1])
    assert scheduler.all_in_stance
    assert scheduler.gait.name == "stand"


def test_support_distance_of_the_gaits() -> None:
    """Hand values: the trot's diagonals and a walk above duty 3/4 keep the centre in every support; a
    walk at 0.7 has two lateral feet alone (0.2 m); a pace's pairs 0.2 m (half the track), a bound's 0.25 m
    (half the length) away; the hexapod's tripods and wave gait contain it, its pace's line is 0.35 m off."""
    quad, hexa = dict(zip(FEET, QUAD, strict=True)), dict(zip(LEGS, HEXA, strict=True))
    gaits = _gaits(0.5)  # (the walk at 1 s, duty 0.8)
    for name, expected in (("trot", 0.0), ("walk", 0.0), ("pace", 0.2), ("bound", 0.25), ("stand", 0.0)):
        assert locomotion.support_distance(gaits[name], quad) == pytest.approx(expected, abs=1e-12), name
    slow_walk = locomotion.walk(locomotion.footfall_sequence(FEET, QUAD), 1.0, 0.7)
    assert locomotion.support_distance(slow_walk, quad) == pytest.approx(0.2, abs=1e-12)
    hexapod = (locomotion.trot(locomotion.alternating_groups(LEGS, HEXA), 0.5, 0.6),
               locomotion.walk(locomotion.footfall_sequence(LEGS, HEXA), 1.0, 0.8),
               locomotion.pace(locomotion.lateral_groups(LEGS, HEXA), 0.5, 0.6))
    assert [locomotion.support_distance(gait, hexa) for gait in hexapod] == [0.0, 0.0, pytest.approx(0.35)]


def test_distance_to_hull_matches_qhull() -> None:
    """Against scipy's ConvexHull (Qhull): inside when every facet's equation is <= 0 at the origin, else
    the nearest point of the facets' segments."""
    rng = np.random.default_rng(3)
    inside = 0
    for _ in range(300):
        points = rng.normal(size=(int(rng.integers(3, 8)), 2)) + rng.normal(scale=1.5, size=2)
        hull = ConvexHull(points)
        if (hull.equations[:, 2] <= 0.0).all():
            expected, inside = 0.0, inside + 1
        else:
            expected = math.inf
            for i, j in hull.simplices:
                a, d = points[i], points[j] - points[i]
                u = min(max(float(-a @ d / (d @ d)), 0.0), 1.0)
                expected = min(expected, float(np.linalg.norm(a + u * d)))
        assert _distance_to_hull(points) == pytest.approx(expected, abs=1e-12)
    assert 20 < inside < 280  # both cases seen
    assert _distance_to_hull(np.array([[1.0, 1.0], [3.0, 3.0]])) == pytest.approx(math.sqrt(2.0))  # a segment
    assert _distance_to_hull(np.array([[0.0, -2.0]])) == 2.0


def test_pendulum_period_law() -> None:
    """k 2 pi sqrt(l / g); a leg four times longer steps half as often."""
    period = locomotion.pendulum_period
    assert math.isclose(period(0.5, 9.81, 0.35), 0.35 * 2 * math.pi * math.sqrt(0.5 / 9.81))
    assert math.isclose(period(0.6, 9.81, 0.35), 2.0 * period(0.15, 9.81, 0.35))
    with pytest.raises(ValueError, match="leg_length"):
        locomotion.pendulum_period(0.0, 9.81, 0.35)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"period": 0.0}, "period"), ({"period": math.nan}, "period"), ({"duty": 0.0}, "duty"),
    ({"duty": 1.2}, "duty"), ({"offsets": {"LF": 1.0}}, "offset"), ({"offsets": {}}, "at least one"),
])
def test_gait_validation(kwargs: dict, match: str) -> None:
    args = {"name": "g", "period": 0.5, "duty": 0.6, "offsets": {"LF": 0.0}} | kwargs
    with pytest.raises(ValueError, match=match):
        locomotion.Gait(**args)


def test_scheduler_refusals() -> None:
    with pytest.raises(ValueError, match="distinct"):
        locomotion.GaitScheduler(("LF", "LF"))
    scheduler = locomotion.GaitScheduler(FEET)
    with pytest.raises(ValueError, match="phases feet"):
        scheduler.set_gait(locomotion.stand(FEET[:3]))
    with pytest.raises(ValueError, match="both trot groups"):
        locomotion.trot((("LF", "RH"), ("LF", "RF")), 0.5, 0.6)
    with pytest.raises(ValueError, match="lead"):
        scheduler.set_gait(locomotion.trot(PAIRS, 0.5, 0.6), lead=-0.1)
    with pytest.raises(ValueError, match="distinct feet"):
        locomotion.walk(("LF", "LF"), 1.0, 0.8)
    scheduler.update(1.0)
    with pytest.raises(ValueError, match="backwards"):
        scheduler.update(0.5)
    with pytest.raises(ValueError, match="finite"):
        scheduler.update(math.nan)
