"""Gaits and the gait scheduler: phases against hand-computed values, the safe switch, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kinodyn.control.locomotion import Gait, GaitScheduler, alternating_groups, stand, trot

FEET = ("LF", "LH", "RF", "RH")
PAIRS = (("LF", "RH"), ("LH", "RF"))


def test_trot_phases_match_hand_computed_values() -> None:
    scheduler = GaitScheduler(FEET)
    scheduler.update(1.0)
    scheduler.set_gait(trot(PAIRS, period=0.5, duty=0.6))  # standing: switches at once, clock from t = 1
    assert scheduler.gait.name == "trot"
    state = scheduler.update(1.0)
    lf, lh = state.feet["LF"], state.feet["LH"]
    assert lf.in_stance and lf.phase == 0.0 and math.isclose(lf.time_left, 0.3)
    assert lh.in_stance and math.isclose(lh.phase, 0.5 / 0.6) and math.isclose(lh.time_left, 0.05)
    # t = 1.2: cycle phase 0.4 for LF (stance, 0.1 s left), 0.9 for LH (swing, 3/4 of its 0.2 s done)
    state = scheduler.update(1.2)
    lf, lh, rf = state.feet["LF"], state.feet["LH"], state.feet["RF"]
    assert lf.in_stance and math.isclose(lf.phase, 0.4 / 0.6) and math.isclose(lf.time_left, 0.1)
    assert not lh.in_stance and math.isclose(lh.phase, 0.75) and math.isclose(lh.time_left, 0.05)
    assert math.isclose(lh.swing_duration, 0.2) and math.isclose(lh.stance_duration, 0.3)
    assert (rf.in_stance, rf.phase) == (lh.in_stance, lh.phase)  # the pair moves together
    assert state.stance == ("LF", "RH")
    # t = 1.45: LF at cycle phase 0.9 (swing), LH at 0.4 (stance)
    state = scheduler.update(1.45)
    assert not state.feet["LF"].in_stance and math.isclose(state.feet["LF"].phase, 0.75)
    assert state.feet["LH"].in_stance and state.feet["LH"].lifts_next


def test_standing_never_swings() -> None:
    scheduler = GaitScheduler(FEET)
    for t in np.linspace(0.0, 10.0, 7):
        state = scheduler.update(float(t))
        assert all(p.in_stance and p.time_left == math.inf and not p.lifts_next for p in state.feet.values())


def test_switch_to_stand_waits_until_every_foot_is_down() -> None:
    scheduler = GaitScheduler(FEET)
    scheduler.update(0.0)
    scheduler.set_gait(trot(PAIRS, 0.5, 0.6))
    scheduler.update(0.1)  # LH, RF in swing (cycle phase 0.7)
    scheduler.set_gait(stand(FEET))
    assert scheduler.gait.name == "trot" and scheduler.pending is not None
    times = np.arange(0.1, 0.5, 0.002)
    switched_at = None
    for t in times:
        before = [p.in_stance for p in scheduler.update(float(t)).feet.values()]
        if scheduler.gait.name == "stand":
            switched_at = float(t)
            assert all(before)
            break
    # LH and RF touch down at t = 0.25 (cycle phase 1.0): the first moment with every foot down
    assert switched_at is not None and abs(switched_at - 0.25) < 0.0021
    assert scheduler.pending is None


def test_alternating_groups_make_diagonals_and_tripods() -> None:
    quad = np.array([[0.25, 0.2], [-0.25, 0.2], [0.25, -0.2], [-0.25, -0.2]])
    a, b = alternating_groups(FEET, quad)
    assert {frozenset(a), frozenset(b)} == {frozenset(PAIRS[0]), frozenset(PAIRS[1])}
    legs = ("LF", "LM", "LH", "RF", "RM", "RH")
    hexa = np.array([[0.2, 0.35], [0.0, 0.4], [-0.2, 0.35], [0.2, -0.35], [0.0, -0.4], [-0.2, -0.35]])
    a, b = alternating_groups(legs, hexa)
    assert {frozenset(a), frozenset(b)} == {frozenset(("LF", "LH", "RM")), frozenset(("LM", "RF", "RH"))}
    with pytest.raises(ValueError, match="even number"):
        alternating_groups(legs[:5], hexa[:5])


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"period": 0.0}, "period"), ({"period": math.nan}, "period"), ({"duty": 0.0}, "duty"),
    ({"duty": 1.2}, "duty"), ({"offsets": {"LF": 1.0}}, "offset"), ({"offsets": {}}, "at least one"),
])
def test_gait_validation(kwargs: dict, match: str) -> None:
    args = {"name": "g", "period": 0.5, "duty": 0.6, "offsets": {"LF": 0.0}} | kwargs
    with pytest.raises(ValueError, match=match):
        Gait(**args)


def test_scheduler_refusals() -> None:
    with pytest.raises(ValueError, match="distinct"):
        GaitScheduler(("LF", "LF"))
    scheduler = GaitScheduler(FEET)
    with pytest.raises(ValueError, match="phases feet"):
        scheduler.set_gait(stand(FEET[:3]))
    with pytest.raises(ValueError, match="both trot groups"):
        trot((("LF", "RH"), ("LF", "RF")), 0.5, 0.6)
    scheduler.update(1.0)
    with pytest.raises(ValueError, match="backwards"):
        scheduler.update(0.5)
    with pytest.raises(ValueError, match="finite"):
        scheduler.update(math.nan)
