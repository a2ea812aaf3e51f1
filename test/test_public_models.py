"""urdf/public: public robot models nobody here wrote (urdf/README.md (d), (e)).

Unitree's A1 (``a1.urdf``) against the values of its source file (Unitree's ``a1.urdf`` in unitree_ros, typed
in below as a second source), its leg geometry against the closed form of its joint chain, kinodyn's dynamics
against Pinocchio's on the same file, MuJoCo's import of it as written (no inertia repair), and
``a1_sim.urdf`` (the same robot with a ``<ros2_control>`` block) against it. ANYbotics' ANYmal C
(``anymal_c.urdf``) against its source's mass, limits and leg segments, kinodyn's dynamics against
Pinocchio's, and its non-physical inertias: MuJoCo refuses them, ``balance_inertia`` repairs them. Unitree's
G1 humanoid (``g1_23dof.urdf``, ``g1_29dof.urdf``) and H1 (``h1.urdf``) against their source's mass, limits
and soles, kinodyn's dynamics against Pinocchio's, and MuJoCo's import of them as written. iCub as
example-robot-data ships it with Pinocchio (not in urdf/public): read as Pinocchio reads it.
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from kinodyn.sim.inertia import inertia_repairs
from kinodyn.urdf import URDFWarning, read_urdf

import kinodyn as kd
from kinodyn import sim

A1 = Path(__file__).resolve().parents[1] / "urdf" / "public" / "a1.urdf"
A1_SIM = A1.with_name("a1_sim.urdf")
ANYMAL = A1.with_name("anymal_c.urdf")
G1 = A1.with_name("g1_23dof.urdf")
G1_29 = A1.with_name("g1_29dof.urdf")
H1 = A1.with_name("h1.urdf")
# iCub as example-robot-data ships it with Pinocchio (a test-only reference): its materials' empty <texture/>
ICUB = (Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
        / "icub_description" / "robots" / "icub_reduced.urdf")
LEGS = ("FL", "FR", "RL", "RR")
SIGNS = {"FL": (1, 1), "FR": (1, -1), "RL": (-1, 1), "RR": (-1, -1)}  # (x, y): front/hind, left/right
# Unitree's a1.urdf (unitree_ros, robots/a1_description/urdf/a1.urdf at 8414c779):
LINK_MASS = {"trunk": 6.0, "imu_link": 0.001, "hip": 0.696, "thigh": 1.013, "calf": 0.166, "foot": 0.06}  # kg
HIP_X, HIP_Y, THIGH_Y, THIGH, CALF = 0.1805, 0.047, 0.0838, 0.2, 0.2  # m: hip joint, thigh joint, knee, foot
LIMITS = {  # joint: lower, upper [rad], velocity [rad/s], effort [N m]
    "hip": (-0.802851455917, 0.802851455917, 21.0, 33.5),
    "thigh": (-1.0471975512, 4.18879020479, 21.0, 33.5),
    "calf": (-2.69653369433, -0.916297857297, 21.0, 33.5),
}
DAMPING, FRICTION = 0.01, 0.2  # N m s/rad, N m: every joint's <dynamics>
STANCE = (0.0, 0.67, -1.3)  # rad: unitree_controller's stand(), every leg
FOOT_RADIUS = 0.02  # m


def model(path: Path = A1) -> kd.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)  # the file loads without a warning
        return kd.Model.from_urdf(path, floating_base=True)


def test_masses_joints_and_limits_are_the_sources() -> None:
    m = model()
    parsed = read_urdf(A1)
    masses = {link.name: link.inertial.mass for link in parsed.links if link.inertial is not None}
    expected = {"trunk": LINK_MASS["trunk"], "imu_link": LINK_MASS["imu_link"]}
    parts = ("hip", "thigh", "calf", "foot")
    expected |= {f"{leg}_{part}": LINK_MASS[part] for leg in LEGS for part in parts}
    assert masses == expected
    assert float(m.mass.sum()) == pytest.approx(13.741, abs=1e-12)
    assert m.joint_names == tuple(f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf"))
    assert [f for f in m.frame_names if f.endswith("_foot")] == [f"{leg}_foot" for leg in LEGS]
    for k, name in enumerate(m.joint_names):
        lower, upper, velocity, effort = LIMITS[name.split("_")[1]]
        assert (m.lower_limit[7 + k], m.upper_limit[7 + k]) == (lower, upper)
        assert (m.velocity_limit[6 + k], m.effort_limit[6 + k]) == (velocity, effort)
        assert (m.damping[6 + k], m.friction[6 + k]) == (DAMPING, FRICTION)
    assert [s.radius for s in sim.collision_spheres(A1)] == [FOOT_RADIUS] * 4
    # every inertia physical as published: MuJoCo takes the file without balance_inertia
    assert inertia_repairs(parsed, floating_base=True) == []


def foot_closed_form(leg: str, hip: float, thigh: float, calf: float) -> np.ndarray:
    """The foot in the base frame: hip joint about x at (sx HIP_X, sy HIP_Y, 0), thigh joint sy THIGH_Y out
    along the hip's y, knee THIGH below the thigh joint, foot CALF below the knee (both pitch about y)."""
    sx, sy = SIGNS[leg]
    pitch = np.array([-THIGH * math.sin(thigh) - CALF * math.sin(thigh + calf), sy * THIGH_Y,
                      -THIGH * math.cos(thigh) - CALF * math.cos(thigh + calf)])
    c, s = math.cos(hip), math.sin(hip)
    return np.array([sx * HIP_X, sy * HIP_Y, 0.0]) + np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) @ pitch


def test_leg_geometry_is_the_sources_joint_chain() -> None:
    m = model()
    rng = np.random.default_rng(7)
    configurations = [np.tile(STANCE, 4)] + [m.random_configuration(rng)[7:] for _ in range(5)]
    for joints in configurations:
        q = m.neutral()
        q[7:] = joints
        for k, leg in enumerate(LEGS):
            np.testing.assert_allclose(m.frame_placement(q, f"{leg}_foot")[:3, 3],
                                       foot_closed_form(leg, *joints[3 * k:3 * k + 3]), atol=1e-14)
    q = m.neutral()
    q[7:] = np.tile(STANCE, 4)
    # the nominal stance: every foot 0.318 m below the base
    feet = np.array([m.frame_placement(q, f"{leg}_foot")[:3, 3] for leg in LEGS])
    np.testing.assert_allclose(feet[:, 2], -0.2 * (math.cos(0.67) + math.cos(0.67 - 1.3)), atol=1e-14)


class PinocchioPair:
    """kinodyn's model and Pinocchio's of a file (free flyer), joints matched by name."""

    def __init__(self, path: Path, m: kd.Model | None = None) -> None:
        self.m = model(path) if m is None else m
        self.pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.pd = self.pm.createData()
        self.v_index = np.array([*range(6)] + [self.pm.joints[self.pm.getJointId(n)].idx_v
                                               for n in self.m.joint_names])
        assert self.pm.nv == self.m.nv
        assert sorted(self.v_index) == list(range(self.m.nv))

    def q(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio's configuration: (x, y, z, qx, qy, qz, qw) as kinodyn's, joints reordered."""
        qp = np.empty(self.pm.nq)
        qp[:7] = q[:7]
        qp[1 + self.v_index[6:]] = q[7:]
        return qp

    def v(self, v: np.ndarray) -> np.ndarray:
        vp = np.empty(self.pm.nv)
        vp[self.v_index] = v
        return vp


@pytest.mark.parametrize("path", [A1, ANYMAL, G1, G1_29, H1], ids=lambda path: path.stem)
def test_dynamics_agree_with_pinocchio(path: Path) -> None:
    assert_dynamics_agree(PinocchioPair(path))


def assert_dynamics_agree(pair: PinocchioPair) -> None:
    """Mass, mass matrix, RNEA and CoM at 5 random states, Pinocchio's."""
    m, pm, pd = pair.m, pair.pm, pair.pd
    assert sum(inertia.mass for inertia in pm.inertias) == pytest.approx(m.mass.sum(), abs=1e-12)
    rng = np.random.default_rng(11)
    index = pair.v_index
    for _ in range(5):
        q = m.random_configuration(rng)
        v, a = rng.uniform(-2.0, 2.0, m.nv), rng.uniform(-5.0, 5.0, m.nv)
        qp = pair.q(q)
        np.testing.assert_allclose(m.mass_matrix(q), pin.crba(pm, pd, qp)[np.ix_(index, index)], atol=1e-10)
        assert np.abs(m.mass_matrix(q)).max() > 1.0  # (the bound above is tight)
        np.testing.assert_allclose(m.rnea(q, v, a), pin.rnea(pm, pd, qp, pair.v(v), pair.v(a))[index],
                                   atol=1e-10)
        np.testing.assert_allclose(m.com(q), pin.centerOfMass(pm, pd, qp), atol=1e-12)


def test_icub_as_shipped_reads_as_pinocchio_reads_it() -> None:
    """iCub (example-robot-data): its materials' empty ``<texture/>`` read as none, as urdfdom does; its
    bodies without rotational inertia (its right leg's, its wrists') warned, named; mass matrix, RNEA and CoM
    Pinocchio's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = kd.Model.from_urdf(ICUB, floating_base=True)
    warned = sorted(str(w.message).split("'")[1] for w in caught)
    assert warned == ["l_wrist_1", "r_ankle_1", "r_hip_1", "r_hip_2", "r_lower_leg", "r_upper_leg",
                      "r_wrist_1"]
    assert all(w.category is URDFWarning for w in caught)
    assert all("singular or indefinite rotational inertia" in str(w.message) for w in caught), warned
    assert m.nv == 35
    assert_dynamics_agree(PinocchioPair(ICUB, m))


def test_mujoco_takes_the_file_as_written() -> None:
    """No repair asked, none needed: MuJoCo's import has the source's bodies and mass (the bare root ``base``
    welded to ``trunk``)."""
    m = model()
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)
        s = sim.create_backend("mujoco", A1, m, contact=sim.ContactModel(sim.collision_spheres(A1)))
    assert isinstance(s, sim.mujoco_backend.MujocoSimulator)
    assert float(s.mj.body_mass.sum()) == pytest.approx(13.741, abs=1e-12)
    assert s.mj.body("base").mass[0] == 0.0
    assert s.mj.body("trunk").mass[0] == LINK_MASS["trunk"]
    assert s.mj.nv == m.nv
    assert all(mujoco.mj_name2id(s.mj, mujoco.mjtObj.mjOBJ_BODY, f"{leg}_foot") >= 0 for leg in LEGS)


def canonical(root: ET.Element) -> bytes:
    """The document without its layout (whitespace between elements)."""
    for element in root.iter():
        element.text = (element.text or "").strip() or None
        element.tail = None
    return ET.tostring(root)


def test_sim_file_is_the_model_plus_a_ros2_control_block() -> None:
    """a1_sim.urdf (config/a1_wbc.yaml's robot) is a1.urdf with a <ros2_control> block for SimulatedSystem:
    effort commands within the URDF's effort limits, positions starting at the nominal stance, the IMU."""
    model_root, sim_root = ET.parse(A1).getroot(), ET.parse(A1_SIM).getroot()
    blocks = sim_root.findall("ros2_control")
    assert len(blocks) == 1
    assert model_root.find("ros2_control") is None
    sim_root.remove(blocks[0])
    assert canonical(sim_root) == canonical(model_root)
    block = blocks[0]
    assert block.findtext("hardware/plugin") == "kinodyn_control/SimulatedSystem"
    m = model()
    assert [j.get("name") for j in block.findall("joint")] == list(m.joint_names)
    for k, joint in enumerate(block.findall("joint")):
        command = joint.findall("command_interface")
        assert [c.get("name") for c in command] == ["effort"]
        bounds = {p.get("name"): float(p.text or "nan") for p in command[0].findall("param")}
        assert bounds == {"min": -m.effort_limit[6 + k], "max": m.effort_limit[6 + k]}
        states = joint.findall("state_interface")
        initial = {s.get("name"): float(s.findtext("param") or "nan") for s in states}
        assert initial == {"position": STANCE[k % 3], "velocity": 0.0, "effort": 0.0}
    sensor = block.find("sensor")
    assert sensor is not None
    assert sensor.get("name") == "imu_sensor"
    assert sensor.findtext("param[@name='frame_id']") == "imu_link"
    assert len(sensor.findall("state_interface")) == 10


# ANYbotics' anymal.urdf (anymal_c_simple_description, urdf/anymal.urdf at 87b68511):
ANYMAL_MASS = 52.13485  # kg, the sum of its 78 links' masses
ANYMAL_LIMITS = {"HAA": (-0.72, 0.49), "HFE": (-9.42477796077, 9.42477796077),
                 "KFE": (-9.42477796077, 9.42477796077)}  # rad, the left legs (right HAA: -0.49, 0.72)
HFE_TO_KFE = np.array([0.0, 0.1003, -0.285])  # m, <LEG>_thigh_fixed_<LEG>_KFE origin (left front)
KFE_TO_FOOT = np.array([0.08795, 0.01305, -0.33797])  # m, <LEG>_shank_fixed_<LEG>_FOOT origin
ANYMAL_REPAIRED = ["depth_camera_front_camera", "depth_camera_rear_camera", "depth_camera_left_camera",
                   "depth_camera_right_camera", "hatch"]


def test_anymal_mass_limits_and_legs_are_the_sources() -> None:
    m = model(ANYMAL)
    assert float(m.mass.sum()) == pytest.approx(ANYMAL_MASS, abs=1e-9)
    assert sorted(m.joint_names) == sorted(f"{leg}_{j}" for leg in ("LF", "LH", "RF", "RH")
                                           for j in ("HAA", "HFE", "KFE"))
    for k, name in enumerate(m.joint_names):
        leg, joint = name.split("_")
        lower, upper = ANYMAL_LIMITS[joint]
        if leg[0] == "R" and joint == "HAA":
            lower, upper = -upper, -lower
        assert (m.lower_limit[7 + k], m.upper_limit[7 + k]) == (lower, upper)
        assert (m.velocity_limit[6 + k], m.effort_limit[6 + k]) == (7.5, 80.0)
    assert [(s.link, s.radius) for s in sim.collision_spheres(ANYMAL)] == [
        (f"{leg}_FOOT", 0.03) for leg in ("LF", "RF", "LH", "RH")]
    rng = np.random.default_rng(3)
    for _ in range(5):  # the segments are rigid: joint to joint to foot distances are the source's
        q = m.random_configuration(rng)
        for leg in ("LF", "RF", "LH", "RH"):
            hfe, kfe, foot = (m.frame_placement(q, f"{leg}_{f}")[:3, 3] for f in ("HFE", "KFE", "FOOT"))
            assert np.linalg.norm(kfe - hfe) == pytest.approx(np.linalg.norm(HFE_TO_KFE), abs=1e-12)
            assert np.linalg.norm(foot - kfe) == pytest.approx(np.linalg.norm(KFE_TO_FOOT), abs=1e-12)


def test_anymal_inertias_are_repaired_on_request() -> None:
    """Four camera links and the hatch violate the triangle inequality as published: the mujoco backend
    refuses them naming ``balance_inertia``, and with it simulates the repaired robot (same total mass)."""
    parsed = read_urdf(ANYMAL)
    assert [r.link for r in inertia_repairs(parsed, floating_base=True)] == ANYMAL_REPAIRED
    m = model(ANYMAL)
    contact = sim.ContactModel(sim.collision_spheres(ANYMAL))
    with pytest.raises(ValueError, match="balance_inertia=True"):
        sim.create_backend("mujoco", ANYMAL, m, contact=contact)
    with pytest.warns(URDFWarning, match="balance_inertia") as caught:
        s = sim.create_backend("mujoco", ANYMAL, m, contact=contact, balance_inertia=True)
    assert sorted(str(w.message).split("'")[1] for w in caught) == sorted(ANYMAL_REPAIRED)
    assert float(s.mj.body_mass.sum()) == pytest.approx(ANYMAL_MASS, abs=1e-9)


# Unitree's g1_23dof.urdf and g1_29dof.urdf (unitree_ros, robots/g1_description/ at d6f13aad):
G1_MASS = {G1: 34.13385728, G1_29: 35.11514202}  # kg, the sum of its links' masses (g1_29dof.urdf: the same)
G1_LIMITS = {  # joint (each side): lower, upper [rad], effort [N m], velocity [rad/s]
    "hip_pitch": (-2.5307, 2.8798, 88.0, 32.0),
    "knee": (-0.087267, 2.8798, 139.0, 20.0),
    "ankle_roll": (-0.2618, 0.2618, 35.0, 30.0),
}
G1_SOLE = ((-0.05, 0.025), (-0.05, -0.025), (0.12, 0.03), (0.12, -0.03))  # (x, y) of the spheres, z -0.03 m


@pytest.mark.parametrize("path", [G1, G1_29], ids=lambda path: path.stem)
def test_g1_mass_limits_and_soles_are_the_sources(path: Path) -> None:
    m = model(path)
    assert float(m.mass.sum()) == pytest.approx(G1_MASS[path], abs=1e-9)
    assert len(m.joint_names) == (23 if path == G1 else 29)
    for side in ("left", "right"):
        for joint, (lower, upper, effort, velocity) in G1_LIMITS.items():
            k = m.joint_names.index(f"{side}_{joint}_joint")
            assert (m.lower_limit[7 + k], m.upper_limit[7 + k]) == (lower, upper)
            assert (m.effort_limit[6 + k], m.velocity_limit[6 + k]) == (effort, velocity)
    spheres = sim.collision_spheres(path)
    assert [(s.link, s.center, s.radius) for s in spheres] == [
        (f"{side}_ankle_roll_link", (x, y, -0.03), 0.005) for side in ("left", "right") for x, y in G1_SOLE]
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)
        s = sim.create_backend("mujoco", path, m, contact=sim.ContactModel(spheres))
    assert float(s.mj.body_mass.sum()) == pytest.approx(G1_MASS[path], abs=1e-9)
    assert s.mj.nv == m.nv


# Unitree's h1.urdf (unitree_ros, robots/h1_description/urdf/ at d6f13aad):
H1_MASS = 59.338  # kg, the sum of its links' masses
H1_LIMITS = {  # joint (each side): lower, upper [rad], effort [N m], velocity [rad/s]
    "hip_pitch": (-3.14, 2.53, 200.0, 23.0),
    "knee": (-0.26, 2.05, 300.0, 14.0),
    "ankle": (-0.87, 0.52, 40.0, 9.0),
}


def test_h1_mass_limits_and_soles_are_the_sources() -> None:
    """19 joints (legs without ankle roll), the source's mass and limits, each foot's one collision box (the
    sole; no collision spheres), and MuJoCo's import as written."""
    m = model(H1)
    assert float(m.mass.sum()) == pytest.approx(H1_MASS, abs=1e-9)
    assert len(m.joint_names) == 19
    assert not [joint for joint in m.joint_names if "roll" in joint and "ankle" in joint]
    for side in ("left", "right"):
        for joint, (lower, upper, effort, velocity) in H1_LIMITS.items():
            k = m.joint_names.index(f"{side}_{joint}_joint")
            assert (m.lower_limit[7 + k], m.upper_limit[7 + k]) == (lower, upper)
            assert (m.effort_limit[6 + k], m.velocity_limit[6 + k]) == (effort, velocity)
    assert sim.collision_spheres(H1) == ()
    root = ET.parse(H1).getroot()
    boxes = {link.get("name"): (link.find("collision/origin").get("xyz"),  # type: ignore[union-attr]
                                link.find("collision/geometry/box").get("size"))  # type: ignore[union-attr]
             for link in root.findall("link") if link.find("collision") is not None}
    sole = ("0.05 0.0 -0.05", "0.28 0.03 0.024")  # origin, size
    assert boxes == {f"{side}_ankle_link": sole for side in ("left", "right")}
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)
        s = sim.create_backend("mujoco", H1, m)
    assert float(s.mj.body_mass.sum()) == pytest.approx(H1_MASS, abs=1e-9)
    assert s.mj.nv == m.nv
