"""The closed loop's acceptance scenario as data (docs/closed-loop.md, "The acceptance scenario").

Stand up (the wbc controls from the estimator's first odometry), a 60 N lateral push standing, trot in place,
follow 0.5 m/s forward, 0.2 m/s sideways and 0.6 rad/s yaw (each tracked after its transient), random
cmd_vel changes, a 120 N lateral push while trotting, and stand again. ``full`` is the bench's (60 s of random
commands); ``short`` the system test's, with a few simulated seconds per step.
"""

from __future__ import annotations

from kinodyn_tools.scenario.steps import Step, random_steps

PUSH_DURATION = 0.2  # s
STANDING_PUSH = 60.0  # N, lateral (+y)
TROTTING_PUSH = 120.0  # N, lateral (+y)


def acceptance_steps(track: float, random: float, seed: int = 12, stand: float = 2.0,
                     recover: float = 2.0) -> list[Step]:
    """Each tracked command lasts ``track`` s (judged after 1 s); the random phase ``random`` s (0: none)."""
    steps = [
        Step("stand up", stand, mode="stand"),
        Step("push standing", recover, push=(0.0, STANDING_PUSH, 0.0), push_duration=PUSH_DURATION),
        Step("trot in place", stand, mode="trot"),
        Step("forward 0.5", track, cmd_vel=(0.5, 0.0, 0.0), track=True),
        Step("sideways 0.2", track, cmd_vel=(0.0, 0.2, 0.0), track=True),
        Step("yaw 0.6", track, cmd_vel=(0.0, 0.0, 0.6), track=True),
    ]
    if random > 0.0:
        steps += random_steps(random, seed)
    steps += [
        Step("push trotting", recover, push=(0.0, TROTTING_PUSH, 0.0), push_duration=PUSH_DURATION),
        Step("stand again", stand, mode="stand"),
    ]
    return steps


def full() -> list[Step]:
    """The bench's scenario: 6 s per tracked command, 60 s of random commands."""
    return acceptance_steps(track=6.0, random=60.0)


def short() -> list[Step]:
    """The system test's: 2 s per tracked command (judged over the last 1 s), 1 s per other step, no random
    phase (11 s of simulated time)."""
    return acceptance_steps(track=2.0, random=0.0, stand=1.0, recover=1.0)
