"""Quadrupeds nobody tuned for: urdf/generate.py's variants (mass, leg length, knee directions, trunk CoM
offset) checked against Pinocchio (a second reader of the same URDF), and a subset of
``examples/acceptance_matrix.py`` in closed loop on kinodyn.sim with default parameters, asserting the
acceptance's bounds (no fall, no failed or fallback QP solve, velocity RMSE <= 0.05 m/s and 0.05 rad/s after
the transient). Simulated time only."""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pinocchio as pin
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import acceptance_matrix as matrix
import generate  # urdf/generate.py (acceptance_matrix puts urdf/ on the path)
from kinodyn.control.locomotion.mpc_locomotion import (
    REFERENCE_LEG_LENGTH,
    MpcLocomotion,
    MpcLocomotionParameters,
)

BASE = generate.QuadrupedVariant("reference", generate.robot_mass(generate.quadruped()),
                                 generate.THIGH_LENGTH + generate.SHANK_LENGTH)


def pinocchio_model(variant: generate.QuadrupedVariant) -> tuple[pin.Model, np.ndarray]:
    """The variant's URDF read by Pinocchio (free-flyer root) and its nominal stance ``q``."""
    robot = generate.quadruped_variant(variant)
    model = pin.buildModelFromXML(generate.render(robot), pin.JointModelFreeFlyer())
    q = pin.neutral(model)
    for c in robot.controlled:
        q[model.joints[model.getJointId(c.name)].idx_q] = c.nominal
    return model, q


@pytest.mark.parametrize("variant", matrix.VARIANTS, ids=lambda v: v.name)
def test_variant_mass_inertia_and_limits_scale_with_mass_and_leg_length(variant: generate.QuadrupedVariant
                                                                        ) -> None:
    """Total mass as asked; the composite inertia at the nominal stance (CRBA, base block) is the reference
    robot's times mass x length^2 once the CoM offset and knees are taken out; effort limits scale with
    m g l and velocity limits with sqrt(g / l)."""
    mass, length = variant.mass / BASE.mass, variant.leg_length / BASE.leg_length
    model, _ = pinocchio_model(variant)
    assert sum(i.mass for i in model.inertias) == pytest.approx(variant.mass, rel=1e-12)
    plain = generate.QuadrupedVariant("plain", variant.mass, variant.leg_length)
    reference, q_ref = pinocchio_model(BASE)
    scaled, q_scaled = pinocchio_model(plain)
    crba_ref = pin.crba(reference, reference.createData(), q_ref)[:6, :6]
    crba = pin.crba(scaled, scaled.createData(), q_scaled)[:6, :6]
    np.testing.assert_allclose(crba[3:, 3:], mass * length**2 * crba_ref[3:, 3:], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(model.effortLimit[6:], mass * length * reference.effortLimit[6:], rtol=1e-12)
    np.testing.assert_allclose(model.velocityLimit[6:], reference.velocityLimit[6:] / length,
                               rtol=1e-12)


@pytest.mark.parametrize("variant", matrix.VARIANTS, ids=lambda v: v.name)
def test_variant_knees_point_as_asked_feet_under_hips_and_trunk_com_offset(variant: generate.QuadrupedVariant
                                                                            ) -> None:
    """At the nominal stance each knee lies ahead ("forward") or behind ("backward") of its hip-foot line,
    each foot is under its hip, and the robot's CoM moves by the trunk's share of ``com_offset``."""
    model, q = pinocchio_model(variant)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)

    def origin(frame: str) -> np.ndarray:
        return np.asarray(data.oMf[model.getFrameId(frame)].translation, dtype=float)

    for name, fore, _ in generate.LEGS:
        hip, knee, foot = origin(f"{name}_THIGH"), origin(f"{name}_SHANK"), origin(f"{name}_FOOT")
        expected = variant.front_knee if fore > 0 else variant.hind_knee
        ahead = knee[0] - (hip[0] + foot[0]) / 2
        assert abs(ahead) > 0.1 * variant.leg_length, name
        assert (ahead > 0) == (expected == "forward"), name
        assert abs(foot[0] - hip[0]) < 1e-9, name
        assert foot[2] < hip[2] - 0.5 * variant.leg_length, name
    centred, q_centred = pinocchio_model(generate.QuadrupedVariant(
        "centred", variant.mass, variant.leg_length, variant.front_knee, variant.hind_knee))
    trunk_share = model.inertias[1].mass / variant.mass
    shift = pin.centerOfMass(model, data, q) - pin.centerOfMass(centred, centred.createData(), q_centred)
    np.testing.assert_allclose(shift, [*(trunk_share * np.array(variant.com_offset)), 0.0], atol=1e-12)


# Rows of the matrix asserted here: the lightest variant on kinodyn.sim, the heaviest on MuJoCo, the 40 kg
# variant's forward row on MuJoCo, and the 6 kg variant's 30 s of random commands on MuJoCo (every tick solved
# by DAQP: the QP ridge qp_regularization), with the default parameters. Open (left out because the stack does
# not meet the bounds there today, not weakened; docs/locomotion.md lists the rows and their causes):
#   "forward 0.5 m/s" of the 2 kg variant on MuJoCo: the CoM's lateral sway on the trot's diagonal supports,
#   larger where the feet slide at touchdown; the 2 and 80 kg variants' forward rows pass at the bound;
#   some of the trotting pushes on the 2 kg variant (the robot falls on the relaxed QP's answers);
#   test_push_recovery.py asserts some that hold.
CI_ROWS = (
    ("light_short", "kinodyn", "trot in place"),
    ("light_short", "kinodyn", "turn 0.6 rad/s"),
    ("light_short", "kinodyn", "stand push 0.25 mg"),
    ("heavy_long", "mujoco", "sideways 0.2 m/s"),
    ("heavy_long", "mujoco", "trot push 0.5 mg @0.5T"),
    ("dense_short", "mujoco", "forward 0.5 m/s"),
    ("small_fwd_knees", "mujoco", "random 30 s"),
)
FORMER_TROT_TIMING = {"period_ratio": 0.35, "duty": 0.6}  # the trot's own timing before it was shortened


@pytest.mark.parametrize(("robot", "engine", "scenario"), CI_ROWS)
def test_generated_robot_meets_the_acceptance_bounds(robot: str, engine: str, scenario: str) -> None:
    """The row's criteria (``acceptance_matrix.Row.passed``) one by one: every tick solved by the first
    solver, no fall (and the base above 90 % of its height), the velocity RMSE within the bounds."""
    row = matrix.evaluate(matrix.VARIANT[robot], engine, scenario)
    assert not row.infeasible, row.figure()
    assert row.fallbacks == 0, row.figure()
    assert row.relaxed == 0, row.figure()  # every hard constraint held
    assert not row.fell, row.figure()
    assert row.min_height_ratio > 0.9, row.figure()
    if "push" not in scenario:  # a velocity row
        assert row.rmse_linear is not None
        assert row.rmse_yaw_rate is not None
        assert row.rmse_linear <= matrix.LINEAR_BOUND, row.figure()
        assert row.rmse_yaw_rate <= matrix.YAW_BOUND, row.figure()
    else:
        assert row.rmse_linear is None
        assert row.rmse_yaw_rate is None
    assert row.passed


def test_the_trots_own_timing_keeps_the_forward_row_within_the_bound() -> None:
    """The 80 kg variant's 0.5 m/s forward row on MuJoCo, within the bound with the defaults
    (``test_generated_robot_meets_the_acceptance_bounds``), is beyond it with the trot's former timing
    (``period_ratio`` 0.35, duty 0.6): a longer stance lets the CoM fall farther off each diagonal and a
    longer handover lets the legs' momentum swing the base more (docs/locomotion.md)."""
    row = matrix.evaluate(matrix.VARIANT["heavy_long"], "mujoco", "forward 0.5 m/s",
                          overrides=FORMER_TROT_TIMING)
    assert not row.fell, row.figure()
    assert row.rmse_linear is not None
    assert row.rmse_linear > matrix.LINEAR_BOUND, row.figure()


def test_on_a_ground_scaled_to_its_legs_the_2_kg_variant_trots_forward_within_the_bound() -> None:
    """The 2 kg variant (legs of 0.126 m) at 0.5 m/s forward on MuJoCo: within the bound on the matrix's
    ground, scaled to its legs (``sim.ContactModel.length``); beyond it on the quadruped's ground (per-kg
    gains alone: about 9 Hz standing, the rate of this robot's handovers), where its CoM keeps its sideways
    speed through each stance (docs/locomotion.md)."""
    scenario = "forward 0.5 m/s"
    scaled = matrix.evaluate(matrix.VARIANT["light_short"], "mujoco", scenario)
    assert scaled.passed, scaled.figure()
    with tempfile.TemporaryDirectory() as directory:
        robot = matrix.build(matrix.VARIANT["light_short"], "mujoco", Path(directory), scaled_ground=False)
    unscaled = matrix.Row("light_short", "mujoco", scenario, *matrix.SCENARIOS[scenario](robot))
    assert not unscaled.fell, unscaled.figure()
    assert not unscaled.infeasible, unscaled.figure()
    assert unscaled.rmse_linear is not None
    assert unscaled.rmse_linear > matrix.LINEAR_BOUND, unscaled.figure()


def test_the_coms_damping_stops_the_sideways_beat() -> None:
    """The 80 kg variant walking sideways at 0.2 m/s on kinodyn.sim: with the CoM task damped at twice
    critical (``com_damping_ratio``) its lateral speed stays within 0.015 m/s (RMS) of its mean; critically
    damped, the CoM's position feedback and the footholds' cycle-averaged velocity feedback beat slowly and
    the lateral speed swings about twice as much, more than 1.6 times (docs/locomotion.md)."""
    damped = matrix.evaluate(matrix.VARIANT["heavy_long"], "kinodyn", "sideways 0.2 m/s")
    critical = matrix.evaluate(matrix.VARIANT["heavy_long"], "kinodyn", "sideways 0.2 m/s",
                               overrides={"com_damping_ratio": 1.0})
    assert damped.oscillation is not None
    assert critical.oscillation is not None
    assert damped.passed, damped.figure()
    assert damped.oscillation[1] < 0.015, damped.figure()
    assert critical.oscillation[1] > 1.6 * damped.oscillation[1], (damped.figure(), critical.figure())


def test_the_mpc_row_counts_the_plan_and_carries_the_heavy_variant_within_the_bound() -> None:
    """heavy_long (80 kg, legs of 0.6 m) trotting at 0.5 m/s on kinodyn.sim with the centroidal MPC plugged
    in on its defaults (``acceptance_matrix --mpc``): every MPC solve done and in time, and the row within the
    acceptance's bounds, which the controller alone misses (its base oscillates against the swing legs:
    docs/locomotion.md). A row also fails on a failed or late MPC solve."""
    row = matrix.evaluate(matrix.VARIANT["heavy_long"], "kinodyn", "forward 0.5 m/s", mpc=True)
    assert (row.mpc_failures, row.mpc_late) == (0, 0), row.figure()
    assert row.passed, row.figure()
    assert row.rmse_linear is not None, row.figure()
    assert row.rmse_linear <= matrix.LINEAR_BOUND, row.figure()
    late = replace(row, mpc_late=1)
    assert not late.passed
    assert "MPC: 0 failed, 1 late" in late.figure()


def test_the_mpc_settings_follow_the_leg_and_a_small_robot_walks_sideways_with_them(tmp_path: Path) -> None:
    """The MPC plugged into light_short's controller (2 kg, legs of 0.15 m) takes its step and state weights
    scaled to the leg (``MpcParameters.scaled`` by ``leg_length / REFERENCE_LEG_LENGTH``; as given with
    ``scale_to_leg`` False), and with them its 0.2 m/s sideways row passes. Given in SI units as for the
    project quadruped, the plan let the small body sag through each diagonal stance and caught it at the
    handovers, and the robot did not follow a sideways command."""
    base = MpcLocomotionParameters().mpc
    robot = matrix.build(matrix.VARIANT["light_short"], "kinodyn", tmp_path)
    ratio = robot.controller.leg_length / REFERENCE_LEG_LENGTH
    assert ratio < 0.5
    unscaled = MpcLocomotion(robot.controller, MpcLocomotionParameters(scale_to_leg=False))
    assert unscaled.mpc.params.dt == base.dt
    assert unscaled.mpc.params.position_weight == base.position_weight
    scaled = MpcLocomotion(matrix.build(matrix.VARIANT["light_short"], "kinodyn", tmp_path).controller)
    expected = replace(base.scaled(ratio), friction=robot.controller.params.friction)  # (the controller's)
    assert replace(scaled.mpc.params, orientation_weight=base.orientation_weight) == expected
    row = matrix.evaluate(matrix.VARIANT["light_short"], "kinodyn", "sideways 0.2 m/s", mpc=True)
    assert row.passed, row.figure()


def test_the_matrix_runs_any_urdf_given_its_feet_and_stance(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    """``acceptance_matrix.py --urdf FILE --feet ... --stance ...`` runs that robot alone, named after its
    file; a stance of the wrong length or outside the joint limits, an unknown foot, a file that is no URDF or
    feet without a collision sphere (meshes: ``--foot-radius`` gives them one) are refused with the parser's
    error (exit 2) naming it."""
    urdf = Path(generate.__file__).with_name("quadruped.urdf")
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot")
    meshes = tmp_path / "meshes.urdf"  # the feet's collision spheres as meshes, as many a published URDF's
    tree = ElementTree.parse(urdf)
    for geometry in tree.getroot().iterfind("link/collision/geometry"):
        for sphere in geometry.findall("sphere"):
            geometry.remove(sphere)
            ElementTree.SubElement(geometry, "mesh", filename="foot.stl")
    tree.write(meshes)
    stance = [str(c.nominal) for c in generate.quadruped().controlled]
    base = ["acceptance_matrix.py", "--urdf", str(urdf), "--engines", "kinodyn", "--scenarios", "stand",
            "--feet", *generate.QUADRUPED_FEET]
    monkeypatch.setattr(sys, "argv", [*base, "--stance", *stance])
    matrix.main()
    out = capsys.readouterr().out
    assert "\nquadruped        kinodyn  stand                    pass" in out, out
    assert "1 of 1 rows pass" in out, out
    for extra, message in ((["--stance", *stance[:3]], "12 movable joints; --stance gave 3 angles"),
                           (["--leg-stance", *stance], "--stance gave 48 angles"),
                           (["--feet", "LF_TOE", "--stance", *stance], "--feet LF_TOE: unknown frame"),
                           (["--urdf", str(broken), "--stance", *stance], "not well-formed XML"),
                           (["--urdf", str(meshes), "--stance", *stance],
                            "feet LF_FOOT, LH_FOOT, RF_FOOT, RH_FOOT have no collision sphere"),
                           (["--urdf", str(meshes), "--stance", *stance, "--foot-radius", "-0.03"],
                            "--foot-radius must be a finite number >= 0"),
                           (["--stance", "1.2", *stance[1:]],
                            "quadruped.urdf: the stance is outside the URDF's joint limits: LF_HAA 1.2 not "
                            "in [-0.8, 0.8]")):
        monkeypatch.setattr(sys, "argv", [*base, *extra])
        with pytest.raises(SystemExit) as exit_:
            matrix.main()
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", [*base, "--urdf", str(meshes), "--stance", *stance, "--foot-radius",
                                      str(generate.FOOT_RADIUS)])
    matrix.main()
    out = capsys.readouterr().out
    assert "\nmeshes           kinodyn  stand                    pass" in out, out


def test_a_row_whose_simulation_diverges_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator's divergence (``FloatingPointError``, its message) in a scenario is that row's failure,
    shown in its figure; the matrix goes on."""
    message = "simulation diverged at t = 0.013000 s (the contact and joint-limit impulses failed: ...)"

    def diverging(_robot: object) -> tuple:
        raise FloatingPointError(message)

    monkeypatch.setitem(matrix.SCENARIOS, "stand", diverging)
    for mpc in (False, True):
        row = matrix.evaluate(matrix.VARIANT["light_short"], "kinodyn", "stand", mpc=mpc)
        assert not row.passed
        assert row.diverged == message
        assert message in row.figure()


def test_the_matrix_takes_the_stance_from_an_srdf_state(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    """``--srdf FILE [--state NAME]``: the nominal angles of an SRDF's group_state (a floating root's pose in
    it left out, and a joint the URDF does not move, named in one line), ``--joint NAME=RAD`` giving one it
    lacks; an unknown state (the file's are listed), a state missing a joint, a value that is no finite
    number, a ``--joint`` that is no movable joint, not NAME=RAD or without ``--srdf`` are refused naming
    it."""
    urdf = Path(generate.__file__).with_name("quadruped.urdf")
    nominal = {c.name: c.nominal for c in generate.quadruped().controlled}

    def srdf(name: str, angles: dict[str, str]) -> Path:
        path = tmp_path / f"{name}.srdf"
        joints = "".join(f'<joint name="{joint}" value="{value}"/>' for joint, value in angles.items())
        path.write_text(f'<robot name="quadruped"><group_state name="standing" group="all">'
                        f'<joint name="root_joint" value="0 0 0.5 0 0 0 1"/>{joints}</group_state></robot>')
        return path

    full = srdf("full", {**{joint: repr(angle) for joint, angle in nominal.items()}, "tail_joint": "0.3"})
    assert matrix.srdf_states.group_state(full, "standing") == {**nominal, "tail_joint": 0.3}
    assert matrix.srdf_states.for_model(full, "standing", nominal) == nominal
    base = ["acceptance_matrix.py", "--urdf", str(urdf), "--engines", "kinodyn", "--scenarios", "stand",
            "--feet", *generate.QUADRUPED_FEET]
    monkeypatch.setattr(sys, "argv", [*base, "--srdf", str(full)])
    matrix.main()
    out = capsys.readouterr().out
    assert f"--srdf {full} state 'standing': left out tail_joint (not movable joints of the URDF)\n" in out, \
        out
    assert "\nquadruped        kinodyn  stand                    pass" in out, out
    first = next(iter(nominal))
    short = srdf("short", {joint: repr(angle) for joint, angle in nominal.items() if joint != first})
    bad = srdf("bad", {**{joint: repr(angle) for joint, angle in nominal.items()}, first: "nan"})
    monkeypatch.setattr(sys, "argv", [*base, "--srdf", str(short), "--joint", f"{first}={nominal[first]!r}"])
    matrix.main()
    assert "\nquadruped        kinodyn  stand                    pass" in capsys.readouterr().out
    for extra, message in ((["--srdf", str(full), "--state", "sitting"], "has no group_state 'sitting'; its "
                            "states: standing"),
                           (["--srdf", str(short)], f"the URDF's movable joints: missing: {first} (give them "
                            "with --joint NAME=RAD)"),
                           (["--srdf", str(short), "--joint", "tail_joint=0.1"], "--joint tail_joint: not "
                            "movable joints of quadruped.urdf"),
                           (["--leg-stance", "0", "0.6", "-1.2", "--joint", f"{first}=0"],
                            "--joint goes with --srdf"),
                           (["--srdf", str(short), "--joint", f"{first}=fast"], f"--joint takes NAME=RAD (a "
                            f"finite angle), got '{first}=fast'"),
                           (["--srdf", str(bad)], f"joint {first!r} value 'nan' is not a finite number")):
        monkeypatch.setattr(sys, "argv", [*base, *extra])
        with pytest.raises(SystemExit) as exit_:
            matrix.main()
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err


def test_a_legged_manipulator_with_stiff_arm_dampers_trots_on_kinodyn_sim(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """example-robot-data's B1 with a Z1 arm (``b1-z1.urdf``, its SRDF's ``standing_with_arm_home``, the
    gripper given by ``--joint``): the arm's joints carry damping 1 and friction 1, far too stiff for the
    explicit 1 ms step on the wrist's and gripper's inertias (the simulation diverged within 13 ms); with
    those dampers implicit, named in one warning each, it trots in place within the bounds."""
    robots = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
    robots /= "b1_description"
    monkeypatch.setattr(sys, "argv", [
        "acceptance_matrix.py", "--engines", "kinodyn", "--scenarios", "trot in place",
        "--urdf", str(robots / "urdf" / "b1-z1.urdf"), "--feet", "FL_foot", "FR_foot", "RL_foot", "RR_foot",
        "--srdf", str(robots / "srdf" / "b1-z1.srdf"), "--state", "standing_with_arm_home",
        "--joint", "jointGripper=0", "--balance-inertia"])
    with pytest.warns(RuntimeWarning) as record:
        matrix.main()
    implicit = [str(w.message) for w in record if "integrated implicitly" in str(w.message)]
    assert {m.split("'")[1] for m in implicit} >= {"joint6", "jointGripper"}, implicit
    assert "kinodyn  trot in place            pass" in capsys.readouterr().out
