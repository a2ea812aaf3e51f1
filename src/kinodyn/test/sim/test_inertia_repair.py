"""Non-physical URDF inertias: the mujoco backend refuses them naming the link and ``balance_inertia``;
with the option both backends simulate the repaired robot (one warning per link), and the repair equals
MuJoCo's own ``balanceinertia`` and ``boundmass`` / ``boundinertia``."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from kinodyn.sim.inertia import MIN_INERTIA, MIN_MASS, inertia_repairs
from kinodyn.sim.mujoco_backend import urdf_for_mujoco
from kinodyn.urdf import URDFWarning, read_urdf

import kinodyn as kd
from kinodyn import sim

from .conftest import QUADRUPED_STANDING_JOINTS, QUADRUPED_URDF

# LF_SHANK: principal moments (1e-3, 2e-3, 5e-3), 1e-3 + 2e-3 < 5e-3, about axes rotated by rpy
# (0.3, -0.2, 0.5)
SHANK_MOMENTS = np.array([1e-3, 2e-3, 5e-3])
SHANK_ROTATION = kd.urdf.rpy_to_rotation((0.3, -0.2, 0.5))
SHANK_INERTIA = SHANK_ROTATION @ np.diag(SHANK_MOMENTS) @ SHANK_ROTATION.T


def broken_quadruped() -> str:
    """urdf/quadruped.urdf with LF_SHANK's inertia violating the triangle inequality (with products of
    inertia) and RH_HIP massless (a moving link with zero mass and inertia, as URDFs' dummy links)."""
    root = ET.fromstring(QUADRUPED_URDF.read_text())
    for link in root.findall("link"):
        inertia = link.find("inertial/inertia")
        if link.get("name") == "LF_SHANK" and inertia is not None:
            for name, (r, c) in {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2),
                                 "izz": (2, 2)}.items():
                inertia.set(name, repr(float(SHANK_INERTIA[r, c])))
        if link.get("name") == "RH_HIP" and inertia is not None:
            link.find("inertial/mass").set("value", "0")  # type: ignore[union-attr]
            for name in inertia.attrib:
                inertia.set(name, "0")
    return ET.tostring(root, encoding="unicode")


BROKEN = broken_quadruped()


def model() -> kd.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return kd.Model.from_urdf(BROKEN, floating_base=True)


def test_the_broken_links_are_found_and_mujoco_itself_refuses_them() -> None:
    repairs = inertia_repairs(read_urdf(BROKEN), floating_base=True)
    assert [r.link for r in repairs] == ["LF_SHANK", "RH_HIP"]
    assert "violate A + B >= C" in repairs[0].what
    assert "mass 0 kg on a moving link" in repairs[1].what
    assert inertia_repairs(read_urdf(QUADRUPED_URDF), floating_base=True) == []
    with pytest.raises(ValueError, match=r"A \+ B >= C"):  # MuJoCo's own check on the URDF as given
        mujoco.MjSpec.from_string(urdf_for_mujoco(read_urdf(BROKEN))).compile()


def test_mujoco_backend_refuses_naming_the_links_and_the_option() -> None:
    spheres = sim.ContactModel(sim.collision_spheres(BROKEN))
    with pytest.raises(ValueError, match=r"link 'LF_SHANK' .*violate A \+ B >= C.*link 'RH_HIP' .*"
                                         r"pass balance_inertia=True"):
        sim.create_backend("mujoco", BROKEN, model(), contact=spheres)


def test_balance_inertia_warns_once_per_link_and_equals_mujocos_own_repair() -> None:
    m = model()
    with pytest.warns(URDFWarning) as caught:
        s = sim.create_backend("mujoco", BROKEN, m, contact=sim.ContactModel(sim.collision_spheres(BROKEN)),
                               balance_inertia=True)
    messages = [str(w.message) for w in caught if "balance_inertia" in str(w.message)]
    assert len(messages) == 2
    assert messages[0].startswith("link 'LF_SHANK'")
    assert messages[1].startswith("link 'RH_HIP'")
    assert isinstance(s, sim.mujoco_backend.MujocoSimulator)
    # MuJoCo's own repair of the URDF as given: balanceinertia, boundmass, boundinertia
    root = ET.fromstring(urdf_for_mujoco(read_urdf(BROKEN)))
    compiler = root.find("mujoco/compiler")
    assert compiler is not None
    assert compiler.get("balanceinertia") == "false"
    compiler.attrib.update(balanceinertia="true", boundmass=repr(MIN_MASS), boundinertia=repr(MIN_INERTIA))
    own = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode")).compile()
    for link in ("LF_SHANK", "RH_HIP", "LF_THIGH"):
        ours, theirs = s.mj.body(link), own.body(link)
        np.testing.assert_allclose(np.sort(ours.inertia), np.sort(theirs.inertia), rtol=1e-12, atol=1e-18)
        assert ours.mass[0] == pytest.approx(theirs.mass[0], rel=1e-12)
    np.testing.assert_allclose(s.mj.body("LF_SHANK").inertia, SHANK_MOMENTS.mean(), rtol=1e-12)
    assert s.mj.body("RH_HIP").mass[0] == MIN_MASS
    # the backend's model is the repaired robot, the caller's is left alone
    assert s.model is not m
    assert s.model.mass.sum() == pytest.approx(m.mass.sum() + MIN_MASS, abs=1e-12)


def test_both_backends_simulate_the_same_repaired_robot() -> None:
    """In the air under zero torque for 0.3 s, kinodyn's and MuJoCo's trajectories of the repaired quadruped
    agree as closely as the project quadruped's do (test_backends.py)."""
    q0 = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True).neutral()
    q0[2], q0[7:] = 2.0, QUADRUPED_STANDING_JOINTS
    v0 = np.random.default_rng(5).uniform(-1.0, 1.0, q0.size - 1)
    runs = []
    for backend in ("kinodyn", "mujoco"):
        with pytest.warns(URDFWarning, match="balance_inertia"):
            s = sim.create_backend(backend, BROKEN, model(), balance_inertia=True)
        s.reset(q0, v0)
        for _ in range(300):
            s.step(np.zeros(12))
        runs.append(np.concatenate([s.q, s.v]))
    assert np.abs(runs[0] - runs[1]).max() < 2e-12


def test_without_non_physical_inertias_the_option_changes_nothing() -> None:
    m = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", URDFWarning)
        for backend in sim.backend_names():
            assert sim.create_backend(backend, QUADRUPED_URDF, m, balance_inertia=True).model is m


def welded_trunk(trunk_moments: str) -> str:
    """urdf/quadruped.urdf with a massless root link: base_link's inertial moved to a link ``trunk`` fixed to
    it, with diagonal inertia ``trunk_moments`` (as many robots' URDFs: a bare root, the trunk welded on)."""
    root = ET.fromstring(QUADRUPED_URDF.read_text())
    base = next(link for link in root.findall("link") if link.get("name") == "base_link")
    inertial = base.find("inertial")
    assert inertial is not None
    base.remove(inertial)
    inertia = inertial.find("inertia")
    assert inertia is not None
    inertia.attrib.update(dict(zip(("ixx", "iyy", "izz"), trunk_moments.split(), strict=True)),
                          ixy="0", ixz="0", iyz="0")
    ET.SubElement(root, "link", name="trunk").append(inertial)
    joint = ET.SubElement(root, "joint", name="trunk_fixed", type="fixed")
    ET.SubElement(joint, "parent", link="base_link")
    ET.SubElement(joint, "child", link="trunk")
    return ET.tostring(root, encoding="unicode")


def test_a_massless_root_welded_to_a_trunk_is_accepted_as_mujoco_accepts_it() -> None:
    """MuJoCo checks a moving body with the bodies welded to it: a bare floating-base root fixed to a trunk
    with mass and inertia compiles as written (no repair), one fixed to a trunk without inertia does not
    (the root is repaired)."""
    def compile_floating(urdf: str) -> mujoco.MjModel:  # MuJoCo's own check, the root on a free joint
        spec = mujoco.MjSpec.from_string(urdf_for_mujoco(read_urdf(urdf)))
        spec.body("base_link").add_freejoint()
        return spec.compile()

    carried = welded_trunk("0.3 0.7 0.8")
    assert inertia_repairs(read_urdf(carried), floating_base=True) == []
    compiled = compile_floating(carried)
    assert compiled.body("base_link").mass[0] == 0.0
    assert compiled.body("trunk").mass[0] == 20.0
    m = kd.Model.from_urdf(carried, floating_base=True)
    assert isinstance(sim.create_backend("mujoco", carried, m), sim.mujoco_backend.MujocoSimulator)
    bare = welded_trunk("0 0 0")
    assert [r.link for r in inertia_repairs(read_urdf(bare), floating_base=True)] == ["base_link"]
    with pytest.raises(ValueError, match="mass and inertia of moving bodies"):
        compile_floating(bare)


def test_kinodyn_refuses_a_singular_mass_matrix_naming_the_bodies_and_the_option() -> None:
    """A massless leg end on a movable joint (RH_SHANK and the foot welded to it: no mass, no inertia)
    leaves the mass matrix singular: kinodyn's simulator refuses it at construction (no step could follow),
    naming the body and the repair; repaired, it simulates."""
    root = ET.fromstring(QUADRUPED_URDF.read_text())
    for link in root.findall("link"):
        if link.get("name") in {"RH_SHANK", "RH_FOOT"}:
            link.find("inertial/mass").set("value", "0")  # type: ignore[union-attr]
            for name in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
                link.find("inertial/inertia").set(name, "0")  # type: ignore[union-attr]
    urdf = ET.tostring(root, encoding="unicode")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        singular = kd.Model.from_urdf(urdf, floating_base=True)
    message = (r"the mass matrix at this configuration is singular \(moving bodies without rotational "
               r"inertia: RH_SHANK\): give those links an <inertial> with a rotational inertia, or simulate "
               r"them repaired \(create_backend\(\.\.\., balance_inertia=True\)\)")
    with pytest.raises(ValueError, match=message):
        sim.create_backend("kinodyn", urdf, singular)
    with pytest.warns(URDFWarning, match="link 'RH_SHANK'"):
        s = sim.create_backend("kinodyn", urdf, singular, balance_inertia=True)
    for _ in range(100):
        s.step(np.zeros(12))
    assert np.all(np.isfinite(s.v))
