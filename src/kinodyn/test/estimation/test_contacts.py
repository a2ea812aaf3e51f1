"""ContactDetector: ground reactions from joint efforts against RNEA with external forces (exact, any leg
layout) and against the simulator's contact forces (quadruped standing, then with one foot lifted)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kinodyn.estimation.contacts import ContactDetector

import kinodyn as kd
from kinodyn import sim

from .robots import QUADRUPED_FEET
from .robots import QUADRUPED_STANDING_JOINTS as STANDING_JOINTS
from .robots import QUADRUPED_URDF as QUADRUPED

HERE = Path(__file__).resolve().parent
HEXAPOD = HERE / "hexapod.urdf"
ROBOTS = {
    "quadruped": (QUADRUPED, list(QUADRUPED_FEET)),
    "hexapod": (HEXAPOD, [f"{leg}_foot" for leg in ("LF", "LM", "LH", "RF", "RM", "RH")]),
}
STANDING_HEIGHT = 0.5252  # m, base above the ground in the nominal stance (urdf/README.md)


@pytest.mark.parametrize("robot", ROBOTS)
def test_forces_equal_those_rnea_was_given(robot: str) -> None:
    """tau = RNEA(q, v, 0, f_ext) with world forces at the feet: the detector returns those forces."""
    path, feet = ROBOTS[robot]
    model = kd.Model.from_urdf(path, floating_base=True)
    detector = ContactDetector(model, feet, on_threshold=20.0, off_threshold=10.0)
    rng = np.random.default_rng(4)
    expected = dict.fromkeys(feet, False)
    for _ in range(10):
        q = model.random_configuration(rng)
        v = rng.normal(size=model.nv)
        forces = {foot: rng.normal(size=3) * [20.0, 20.0, 60.0] + [0.0, 0.0, 40.0] for foot in feet}
        f_ext = {}
        for foot, f in forces.items():
            C_WF = model.frame_placement(q, foot)[:3, :3]
            f_ext[foot] = np.concatenate([C_WF.T @ f, np.zeros(3)])
        tau = model.rnea(q, v, np.zeros(model.nv), f_ext)
        state = detector.update(q, v, tau[6:])
        for foot in feet:
            np.testing.assert_allclose(detector.forces[foot], forces[foot], rtol=1e-7, atol=1e-6)
            expected[foot] = forces[foot][2] >= (10.0 if expected[foot] else 20.0)
        assert state == expected


def test_hysteresis_holds_between_the_thresholds() -> None:
    model = kd.Model.from_urdf(QUADRUPED, floating_base=True)
    detector = ContactDetector(model, ["LF_FOOT"], on_threshold=30.0, off_threshold=10.0)
    q = model.neutral()
    q[7:] = STANDING_JOINTS
    v = np.zeros(model.nv)
    C_WF = model.frame_placement(q, "LF_FOOT")[:3, :3]
    states = []
    for fz in [0.0, 20.0, 31.0, 20.0, 11.0, 9.0, 20.0, 31.0]:
        f_ext = {"LF_FOOT": np.concatenate([C_WF.T @ [0.0, 0.0, fz], np.zeros(3)])}
        states.append(detector.update(q, v, model.rnea(q, v, np.zeros(model.nv), f_ext)[6:])["LF_FOOT"])
    assert states == [False, False, True, True, True, False, False, True]


def test_a_nan_on_a_leg_holds_that_foot_only() -> None:
    model = kd.Model.from_urdf(QUADRUPED, floating_base=True)
    feet = ROBOTS["quadruped"][1]
    detector = ContactDetector(model, feet, on_threshold=30.0, off_threshold=10.0)
    q = model.neutral()
    q[7:] = STANDING_JOINTS
    v = np.zeros(model.nv)
    f_ext = {}
    for foot in feet:
        C_WF = model.frame_placement(q, foot)[:3, :3]
        f_ext[foot] = np.concatenate([C_WF.T @ [0.0, 0.0, 80.0], np.zeros(3)])
    tau = model.rnea(q, v, np.zeros(model.nv), f_ext)[6:]
    assert all(detector.update(q, v, tau).values())
    tau_off = model.rnea(q, v, np.zeros(model.nv))[6:]  # every foot unloaded ...
    tau_off[model.joint_id("RH_KFE")] = np.nan  # ... but RH's effort is unknown
    state = detector.update(q, v, tau_off)
    assert state == {"LF_FOOT": False, "LH_FOOT": False, "RF_FOOT": False, "RH_FOOT": True}
    assert np.isnan(detector.forces["RH_FOOT"]).all()
    with pytest.raises(ValueError, match="base part"):
        detector.update(np.full(model.nq, np.nan), v, tau)
    with pytest.raises(ValueError, match="on_threshold > off_threshold"):
        ContactDetector(model, feet, on_threshold=10.0, off_threshold=10.0)


def simulate(model: kd.Model, steps: int, lift: bool) -> sim.Simulator:
    """The quadruped standing under joint PD at 1 kHz; with ``lift``, the base's LF corner is held up by an
    external force and the LF leg folds, so its foot leaves the ground."""
    contact = sim.ContactModel(sim.collision_spheres(QUADRUPED))
    s = sim.Simulator(model, dt=1e-3, contact=contact)
    q0 = model.neutral()
    q0[2] = STANDING_HEIGHT
    q0[7:] = STANDING_JOINTS
    s.reset(q0)
    target = STANDING_JOINTS.copy()
    if lift:
        target[1:3] = [1.0, -2.0]  # LF hip flexed, knee folded
        corner = np.array([0.25, 0.1, 0.0])  # the LF hip, in the base frame (= world axes at rest)
        force = np.array([0.0, 0.0, 0.3 * 9.81 * model.mass.sum()])
        s.apply_wrench("base_link", np.concatenate([force, np.cross(corner, force)]), duration=steps * 1e-3)
    for _ in range(steps):
        s.step(800.0 * (target - s.q[7:]) - 20.0 * s.v[6:])
    return s


@pytest.mark.parametrize("lift", [False, True])
def test_forces_match_the_simulator(lift: bool) -> None:
    model = kd.Model.from_urdf(QUADRUPED, floating_base=True)
    feet = ROBOTS["quadruped"][1]
    s = simulate(model, 3000, lift)
    detector = ContactDetector(model, feet, on_threshold=40.0, off_threshold=20.0)
    state = detector.update(s.q, s.v, s.applied_torque[6:])
    spheres = [sphere.link for sphere in s.contact.spheres]
    simulated = {foot: s.contact_forces[spheres.index(foot)] for foot in feet}
    assert state == {foot: bool(simulated[foot][2] > 0.0) for foot in feet}
    assert state["LF_FOOT"] is not lift
    weight = 9.81 * model.mass.sum()
    for foot in feet:
        print(f"{foot}: detected {detector.forces[foot].round(2)} N, simulated {simulated[foot].round(2)} N")
        np.testing.assert_allclose(detector.forces[foot], simulated[foot], atol=0.01 * weight)
