"""The legs' reach under a push: each leg's full extension (``footholds.leg_extension``, checked in closed
form on generated legs, straight and stopped short by a knee limit), the hip height that keeps a foot within
reach (``footholds.reach_height``), and the controller lowering its base while pushed
(``stance_reach_ratio``): not at all on command, and a 2 kg robot with short legs and its CoM 3 cm off
both axes that falls sideways-pushed at the full height stays up crouched (simulated time)."""

from __future__ import annotations

import dataclasses
import math
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.locomotion.footholds import leg_chain, leg_extension, reach_height

import kinodyn as kd

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import acceptance_matrix as matrix
import generate  # urdf/generate.py (acceptance_matrix puts urdf/ on the path)

if TYPE_CHECKING:
    import locomotion_scenarios as scenarios

# 2 kg, legs of 0.2 m, front knees backward, hind knees forward, the trunk's CoM 3 cm back and 3 cm right
OFF_CENTRE = generate.QuadrupedVariant("off_centre", 2.0, 0.2, "backward", "forward", (-0.03, -0.03))


def _model(variant: generate.QuadrupedVariant) -> tuple[kd.Model, np.ndarray]:
    robot = generate.quadruped_variant(variant)
    with tempfile.TemporaryDirectory() as directory:
        urdf = Path(directory) / "robot.urdf"
        urdf.write_text(generate.render(robot))
        model = kd.Model.from_urdf(urdf, floating_base=True)
    q = model.neutral()
    q[7:] = [c.nominal for c in robot.controlled]
    return model, q


@pytest.fixture(scope="module")
def off_centre() -> tuple[kd.Model, np.ndarray]:
    return _model(OFF_CENTRE)


def test_a_legs_extension_is_its_straight_length_beside_the_hips_offset(
        off_centre: tuple[kd.Model, np.ndarray]) -> None:
    """Thigh and shank in line, the thigh's joint the hip's sideways offset from the leg's first joint:
    ``hypot(l_thigh + l_shank, offset)``, below the sum of the segments (the footholds' measure)."""
    model, q = off_centre
    scale = OFF_CENTRE.leg_length / (generate.THIGH_LENGTH + generate.SHANK_LENGTH)
    straight = math.hypot(OFF_CENTRE.leg_length, generate.HIP_OFFSET * scale)
    for foot in generate.QUADRUPED_FEET:  # front knees bending backward, hind ones forward
        assert leg_extension(model, q, foot) == pytest.approx(straight, rel=1e-7)
    chain, indices = leg_chain(model, q, generate.QUADRUPED_FEET[0])
    assert len(indices) == 3
    assert np.linalg.norm(np.diff(chain, axis=0), axis=1).sum() == pytest.approx(
        OFF_CENTRE.leg_length + generate.HIP_OFFSET * scale, rel=1e-12)


def test_a_knee_limit_short_of_straight_bounds_the_extension(off_centre: tuple[kd.Model, np.ndarray]) -> None:
    """A knee that cannot straighten past 0.5 rad: the law of cosines at its limit; the other legs keep
    theirs."""
    model, q = off_centre
    foot = generate.QUADRUPED_FEET[0]
    knee = leg_chain(model, q, foot)[1][0]  # the joint nearest the foot
    lower, upper = model.lower_limit.copy(), model.upper_limit.copy()
    bent = -0.5 if upper[knee] <= 0.0 else 0.5  # the limit on the straight side of its range
    if bent < 0.0:
        upper[knee] = bent
    else:
        lower[knee] = bent
    stiff = dataclasses.replace(model, lower_limit=lower, upper_limit=upper)
    q[knee] = 2.0 * bent
    segment = OFF_CENTRE.leg_length / 2.0
    scale = OFF_CENTRE.leg_length / (generate.THIGH_LENGTH + generate.SHANK_LENGTH)
    reach = math.sqrt(2.0 * segment**2 * (1.0 + math.cos(0.5)))
    assert leg_extension(stiff, q, foot) == pytest.approx(math.hypot(reach, generate.HIP_OFFSET * scale),
                                                          rel=1e-7)
    assert leg_extension(stiff, q, generate.QUADRUPED_FEET[1]) == pytest.approx(
        math.hypot(OFF_CENTRE.leg_length, generate.HIP_OFFSET * scale), rel=1e-7)


def test_reach_height_keeps_the_farthest_predicted_distance_within_the_limit() -> None:
    # the hip 0.1 m behind the foot moving 1 m/s towards it: 0.1 m now, 0.1 m past it after 0.2 s
    assert reach_height((0.1, 0.0), (0.0, 0.0), (1.0, 0.0), (0.0, 0.2), 0.2) == pytest.approx(
        math.sqrt(0.2**2 - 0.1**2), rel=1e-15)
    # 0.3 m past it after 0.4 s: the farthest
    assert reach_height((0.1, 0.0), (0.0, 0.0), (1.0, 0.0), (0.0, 0.4), 0.5) == pytest.approx(0.4, rel=1e-15)
    # sideways and diagonal, the hip standing
    assert reach_height((0.03, 0.04), (0.0, 0.0), (0.0, 0.0), (0.0,), 0.13) == pytest.approx(0.12, rel=1e-15)
    assert reach_height((0.3, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0,), 0.2) == 0.0  # out of reach


def _trot(robot: scenarios.Legged, until: float, command: tuple[float, float, float]) -> float:
    """Trot on ``command`` until ``until`` s (simulated); the controller's largest crouch [m]."""
    deepest = 0.0
    robot.controller.request_mode("trot")
    while robot.sim.t < until:
        out = robot.controller.update(robot.sim.q, robot.sim.v, robot.sim.t, command)
        assert out.ok, out.message
        assert out.tau is not None
        for _ in range(robot.steps_per_tick):
            robot.sim.step(out.tau)
        deepest = max(deepest, robot.controller.crouch)
    return deepest


def test_on_command_the_base_keeps_its_height() -> None:
    """Trotting at the command limits' 0.5 m/s on the 2 kg robot (its velocity error within the gait's own
    sway): never lowered."""
    with tempfile.TemporaryDirectory() as directory:
        robot = matrix.build(OFF_CENTRE, "kinodyn", Path(directory))
    assert _trot(robot, 3.0, (0.5, 0.0, 0.0)) == 0.0


@pytest.mark.parametrize("phase", [0.0, 0.5])
def test_a_pushed_robot_with_short_legs_and_its_com_off_centre_stays_up_crouching(phase: float) -> None:
    """The acceptance's trotting push (0.5 x weight sideways for 0.2 s) on the 2 kg robot: at the full height
    (``stance_reach_ratio`` 0) its stance legs straighten as the body vaults over them, their knees at
    their limits leave the QP no answer (relaxed) and it falls; crouching it stays up."""
    scenario = f"trot push 0.5 mg @{phase:g}T"
    assert matrix.evaluate(OFF_CENTRE, "kinodyn", scenario, overrides={"stance_reach_ratio": 0.0}).fell
    row = matrix.evaluate(OFF_CENTRE, "kinodyn", scenario)
    assert row.passed, row.figure()
    assert row.min_height_ratio > 0.8, row.figure()
