"""Analytical Jacobian J_A = [J_P; E_R^-1 J_R] (Robot Dynamics lecture notes (ETH), §2.8.4-2.8.6, Examples
2.8.5 and 2.8.6)."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from kinodyn.kinematics.analytical import analytical_jacobian, frame_pose_parameters
from kinodyn.spatial import rates
from kinodyn.spatial.rotations import PARAMETERIZATIONS, matrix_to_parameters

import kinodyn as kd

assert_close = partial(np.testing.assert_allclose, rtol=0.0)
ROBOTS = Path(np.__file__).parents[1] / "cmeel.prefix/share/example-robot-data/robots"
H = 1e-6
MARGIN = 0.05  # distance kept from singularities and branch cuts of the parameterization

# Robot Dynamics lecture notes (ETH), Ex. 2.8.5: planar 3-link arm in the x-z plane, joints about +y, links
# along +z, base offset l0.
PLANAR_3LINK = """<robot name="planar_3link">
  <link name="base"/>
  {links}
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/><limit lower="-6" upper="6" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/><limit lower="-6" upper="6" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="link2"/><child link="link3"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/><limit lower="-6" upper="6" effort="1" velocity="1"/></joint>
  <joint name="tip" type="fixed"><parent link="link3"/><child link="ee"/><origin xyz="0 0 1"/></joint>
</robot>""".format(
    links="\n  ".join(
        f'<link name="{name}"><inertial><mass value="1"/><origin xyz="0 0 0.5"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        for name in ("link1", "link2", "link3", "ee")
    )
)


@pytest.fixture(scope="module")
def panda() -> kd.Model:
    return kd.Model.from_urdf(ROBOTS / "panda_description/urdf/panda.urdf")


@pytest.fixture(scope="module")
def solo12() -> kd.Model:
    return kd.Model.from_urdf(ROBOTS / "solo_description/robots/solo12.urdf", floating_base=True)


@pytest.fixture(scope="module")
def planar() -> kd.Model:
    return kd.Model.from_urdf(PLANAR_3LINK)


def clear_of_singularities_and_cuts(parameterization: str, chi: np.ndarray) -> bool:
    if parameterization.startswith("euler_"):
        sequence = parameterization.removeprefix("euler_")
        radius = abs(math.cos(chi[1])) if sequence[0] != sequence[2] else abs(math.sin(chi[1]))
        return radius > MARGIN and max(abs(chi[0]), abs(chi[2])) < math.pi - MARGIN
    if parameterization == "quaternion":
        return chi[3] > MARGIN
    if parameterization == "angle_axis":
        return MARGIN < chi[0] < math.pi - MARGIN
    return np.linalg.norm(chi) < math.pi - MARGIN


def pose_rate_by_finite_differences(model: kd.Model, q: np.ndarray, v: np.ndarray, frame: str,
                                    parameterization: str) -> np.ndarray:
    """(chi_e(q (+) H v) - chi_e(q (+) -H v)) / 2H along the configuration integrator."""
    plus = frame_pose_parameters(model, model.integrate(q, v, H), frame, parameterization)
    minus = frame_pose_parameters(model, model.integrate(q, v, -H), frame, parameterization)
    return (plus - minus) / (2 * H)


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
@pytest.mark.parametrize(("robot", "frame"), [("panda", "panda_hand_tcp"), ("solo12", "HR_FOOT")])
def test_analytical_jacobian_matches_finite_differences(
    robot: str, frame: str, parameterization: str, request: pytest.FixtureRequest
) -> None:
    model = request.getfixturevalue(robot)
    rng = np.random.default_rng(5)
    checked = 0
    while checked < 5:
        q = model.random_configuration(rng)
        chi = frame_pose_parameters(model, q, frame, parameterization)
        if not clear_of_singularities_and_cuts(parameterization, chi[3:]):
            continue
        J_A = analytical_jacobian(model, q, frame, parameterization)
        assert J_A.shape == (chi.size, model.nv)
        v = rng.normal(size=model.nv)
        assert_close(
            J_A @ v, pose_rate_by_finite_differences(model, q, v, frame, parameterization), atol=1e-7
        )
        # Robot Dynamics lecture notes (ETH), (2.192): the geometric Jacobian is E_e J_A.
        J = model.frame_jacobian(q, frame, "local_world_aligned")
        E_R = rates.rate_matrix(parameterization, chi[3:], "world")
        assert_close(np.vstack([J_A[:3], E_R @ J_A[3:]]), J, atol=1e-12)
        checked += 1


def test_example_2_8_5_forward_kinematics_of_the_planar_arm(planar: kd.Model) -> None:
    """Ex. 2.8.5: unit links and q = (pi/6, pi/3, pi/3) give x = 2, z = 1 and the angle 5 pi / 6 about y."""
    chi = frame_pose_parameters(planar, [math.pi / 6, math.pi / 3, math.pi / 3], "ee", "rotvec")
    assert_close(chi, [2.0, 0.0, 1.0, 0.0, 5 * math.pi / 6, 0.0], atol=1e-14)


@pytest.mark.parametrize("q", [(math.pi / 6, math.pi / 3, math.pi / 3), (0.3, -0.8, 0.4), (-1.0, 0.2, 2.1)])
def test_example_2_8_6_analytical_jacobian_of_the_planar_arm(planar: kd.Model, q: tuple[float, ...]) -> None:
    """Ex. 2.8.6 (with the notes' c213/s213 read as c123/s123): J_AP rows x and z; J_AR = [1 1 1] for the
    angle."""
    q1, q12, q123 = q[0], q[0] + q[1], sum(q)
    J_x = [math.cos(q1) + math.cos(q12) + math.cos(q123), math.cos(q12) + math.cos(q123), math.cos(q123)]
    J_z = [-math.sin(q1) - math.sin(q12) - math.sin(q123), -math.sin(q12) - math.sin(q123), -math.sin(q123)]
    expected = np.array([J_x, [0.0, 0.0, 0.0], J_z, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    # About y by |angle| < pi: rotation vector (0, angle, 0); ZYX angles (0, angle, 0) when |angle| < pi/2.
    assert_close(analytical_jacobian(planar, q, "ee", "rotvec"), expected, atol=1e-14)
    if abs(q123) < math.pi / 2:  # ZYX angles (0, angle, 0) on the extraction branch
        assert_close(analytical_jacobian(planar, q, "ee", "euler_zyx"), expected, atol=1e-14)
        chi_R = matrix_to_parameters("euler_zyx", planar.frame_placement(q, "ee")[:3, :3])
        assert_close(chi_R, [0.0, q123, 0.0], atol=1e-15)


def test_analytical_jacobian_raises_at_gimbal_lock(planar: kd.Model) -> None:
    """Total angle pi/2 about y is the ZYX singularity (middle angle pi/2); the rotation vector is fine."""
    q = [math.pi / 4, math.pi / 8, math.pi / 8]
    with pytest.raises(ValueError, match="gimbal lock"):
        analytical_jacobian(planar, q, "ee", "euler_zyx")
    assert np.all(np.isfinite(analytical_jacobian(planar, q, "ee", "rotvec")))
