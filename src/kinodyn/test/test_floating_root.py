"""A URDF whose root is a ``floating`` joint from a massless link (``<link name="world"/>`` -> the base, as
URDFs written for MuJoCo or Isaac carry): read as the floating base (``urdf.detach_floating_root``).

The project's quadruped with such a root is, body for body, the plain file loaded with ``floating_base=True``
(exactly, at random states), as Pinocchio reads it (its URDF parser turns the floating joint into a free
flyer: the same mass matrix and inverse dynamics); MuJoCo simulates it as the plain file; read with a fixed
base, its base is fixed with a warning; every floating joint that is not such a root is refused.
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.urdf import URDFError, URDFWarning, read_urdf

import kinodyn as kd
from kinodyn import sim

QUADRUPED = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"
ROOT_JOINT = "floating_base_joint"


def with_floating_root(text: str, world: str = "world", world_mass: float | None = None,
                       base: str = "base_link") -> str:
    """``text`` with a ``floating`` joint from a new root link ``world`` (with ``world_mass``, if given) to
    ``base``."""
    root = ElementTree.fromstring(text)
    link = ElementTree.Element("link", name=world)
    if world_mass is not None:
        inertial = ElementTree.SubElement(link, "inertial")
        ElementTree.SubElement(inertial, "mass", value=repr(world_mass))
        ElementTree.SubElement(inertial, "inertia", ixx="1", iyy="1", izz="1", ixy="0", ixz="0", iyz="0")
    joint = ElementTree.Element("joint", name=ROOT_JOINT, type="floating")
    ElementTree.SubElement(joint, "parent", link=world)
    ElementTree.SubElement(joint, "child", link=base)
    root.insert(0, joint)
    root.insert(0, link)
    return ElementTree.tostring(root, encoding="unicode")


@pytest.fixture(scope="module")
def floating_text() -> str:
    return with_floating_root(QUADRUPED.read_text())


def test_the_floating_root_is_the_floating_base(floating_text: str) -> None:
    parsed = read_urdf(floating_text)
    assert parsed.floating_joint == ROOT_JOINT
    assert parsed.root_link == "base_link"
    assert "world" not in [link.name for link in parsed.links]
    assert read_urdf(QUADRUPED).floating_joint == ""
    m = kd.Model.from_urdf(floating_text, floating_base=True)
    plain = kd.Model.from_urdf(QUADRUPED, floating_base=True)
    assert m.body_names == plain.body_names
    assert m.joint_names == plain.joint_names
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = plain.random_configuration(rng)
        v, a = rng.uniform(-2.0, 2.0, plain.nv), rng.uniform(-5.0, 5.0, plain.nv)
        np.testing.assert_array_equal(m.mass_matrix(q), plain.mass_matrix(q))
        np.testing.assert_array_equal(m.rnea(q, v, a), plain.rnea(q, v, a))


def test_pinocchio_reads_it_as_a_free_flyer_of_the_same_dynamics(floating_text: str, tmp_path: Path) -> None:
    path = tmp_path / "floating_root.urdf"
    path.write_text(floating_text)
    pm = pin.buildModelFromUrdf(str(path))  # no root joint given: the file's floating joint is the free flyer
    pd = pm.createData()
    assert pm.joints[1].shortname() == "JointModelFreeFlyer"
    m = kd.Model.from_urdf(path, floating_base=True)
    assert (pm.nq, pm.nv) == (m.nq, m.nv)
    order = [pm.joints[pm.getJointId(name)].idx_v for name in m.joint_names]  # in Pinocchio's v
    index = np.r_[0:6, order]
    rng = np.random.default_rng(9)
    for _ in range(5):
        q = m.random_configuration(rng)
        v, a = rng.uniform(-2.0, 2.0, m.nv), rng.uniform(-5.0, 5.0, m.nv)
        qp, vp, ap = np.empty(pm.nq), np.empty(pm.nv), np.empty(pm.nv)
        qp[:7] = q[:7]
        qp[np.array(order) + 1] = q[7:]
        vp[index], ap[index] = v, a
        np.testing.assert_allclose(m.mass_matrix(q), pin.crba(pm, pd, qp)[np.ix_(index, index)], atol=1e-10)
        np.testing.assert_allclose(m.rnea(q, v, a), pin.rnea(pm, pd, qp, vp, ap)[index], atol=1e-10)


def test_mujoco_simulates_it_as_the_plain_file(floating_text: str) -> None:
    states = []
    for text in (floating_text, QUADRUPED.read_text()):
        m = kd.Model.from_urdf(text, floating_base=True)
        s = sim.create_backend("mujoco", text, m, contact=sim.ContactModel(sim.collision_spheres(text)))
        q0 = m.neutral()
        q0[2] = 0.6
        s.reset(q0)
        for _ in range(200):
            s.step(np.zeros(m.nv - 6))
        states.append((s.q.copy(), s.v.copy()))
    np.testing.assert_array_equal(states[0][0], states[1][0])
    np.testing.assert_array_equal(states[0][1], states[1][1])


def test_with_a_fixed_base_its_base_is_fixed_with_a_warning(floating_text: str) -> None:
    """As robot_state_publisher leaves a floating joint out (the state publisher's and pose printer's use)."""
    with pytest.warns(URDFWarning, match=r"joint 'floating_base_joint' is floating; .* floating_base=True"):
        m = kd.Model.from_urdf(floating_text)
    plain = kd.Model.from_urdf(QUADRUPED)
    q = plain.random_configuration(np.random.default_rng(2))
    np.testing.assert_array_equal(m.mass_matrix(q), plain.mass_matrix(q))


@pytest.mark.parametrize("case", ["massive root", "not from the root", "two floating joints",
                                  "root with another joint"])
def test_other_floating_joints_are_refused(case: str) -> None:
    text = QUADRUPED.read_text()
    if case == "massive root":
        text = with_floating_root(text, world_mass=1.0)
    elif case == "not from the root":
        root = ElementTree.fromstring(text)
        next(j for j in root.findall("joint") if j.get("type") == "revolute").set("type", "floating")
        text = ElementTree.tostring(root, encoding="unicode")
    else:
        text = with_floating_root(text)
        root = ElementTree.fromstring(text)
        extra = ElementTree.SubElement(root, "joint", name="extra", type="floating" if case.startswith("two")
                                       else "fixed")
        ElementTree.SubElement(extra, "parent", link="world")
        ElementTree.SubElement(root, "link", name="marker")
        ElementTree.SubElement(extra, "child", link="marker")
        text = ElementTree.tostring(root, encoding="unicode")
    with pytest.raises(URDFError, match="has type 'floating'; only a floating root is read"):
        read_urdf(text)
