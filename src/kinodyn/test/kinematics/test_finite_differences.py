"""Jacobians, bias accelerations and CoM Jacobian against central finite differences along integrate()."""

from __future__ import annotations

import numpy as np
import pytest

import kinodyn as kd

from ..urdf_text import inertial_link

URDF = f"""<robot name="fd">
{inertial_link("base", 2, (0.1, 0, 0, 0.2, 0, 0.3))}
{inertial_link("a", 1, (0.01, 0, 0, 0.02, 0, 0.03), "0.1 0.02 0")}
{inertial_link("b", 0.5, (0.01, 0, 0, 0.01, 0, 0.01), "0 0 0.2")}
{inertial_link("c", 0.3, (0.01, 0, 0, 0.01, 0, 0.01), "0.05 0 0")}
<link name="tip"/>
{inertial_link("m", 0.2, (0.01, 0, 0, 0.01, 0, 0.01))}
<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
  <origin xyz="0.1 0 0.3" rpy="0.2 0 0.1"/>
  <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="j2" type="prismatic"><parent link="a"/><child link="b"/>
  <origin xyz="0.3 0 0" rpy="0 0.4 0"/>
  <axis xyz="1 0 0"/><limit lower="-0.2" upper="0.2" effort="1" velocity="1"/></joint>
<joint name="j3" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0 0.1 0.2"/>
  <axis xyz="0.3 1 0"/></joint>
<joint name="fix" type="fixed"><parent link="c"/><child link="tip"/>
  <origin xyz="0.2 0.1 -0.1" rpy="0.3 -0.2 0.5"/></joint>
<joint name="jm" type="revolute"><parent link="c"/><child link="m"/>
  <origin xyz="0 0 0.1"/><axis xyz="1 0 0"/>
  <limit lower="-2" upper="2" effort="1" velocity="1"/>
  <mimic joint="j1" multiplier="0.7" offset="0.2"/></joint>
</robot>"""
H = 1e-6
TOL = 1e-7


@pytest.fixture(params=[False, True], ids=["fixed", "floating"])
def model(request: pytest.FixtureRequest) -> kd.Model:
    return kd.Model.from_urdf(URDF, floating_base=request.param)


def twist_from_placements(
    T_minus: np.ndarray, T: np.ndarray, T_plus: np.ndarray, reference: str
) -> np.ndarray:
    """Twist [v; w] from a central difference of T(t) (t -> T(t) sampled at -H, 0, +H)."""
    dT = (T_plus - T_minus) / (2 * H)
    if reference == "local":
        X = np.linalg.inv(T) @ dT
    elif reference == "world":
        X = dT @ np.linalg.inv(T)
    else:  # local_world_aligned: origin velocity, and w from dR R^T
        W = dT[:3, :3] @ T[:3, :3].T
        return np.r_[dT[:3, 3], W[2, 1], W[0, 2], W[1, 0]]
    return np.r_[X[:3, 3], X[2, 1], X[0, 2], X[1, 0]]


def sample_states(model: kd.Model, count: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(3)
    return [(model.random_configuration(rng), rng.normal(size=model.nv)) for _ in range(count)]


@pytest.mark.parametrize("reference", ["world", "local", "local_world_aligned"])
def test_jacobian_columns_match_placement_differences(model: kd.Model, reference: str) -> None:
    for q, _ in sample_states(model):
        for frame in ("tip", "m", "b"):
            J = model.frame_jacobian(q, frame, reference)
            for k in range(model.nv):
                e = np.zeros(model.nv)
                e[k] = 1.0
                T = [model.frame_placement(model.integrate(q, e, t), frame) for t in (-H, 0.0, H)]
                np.testing.assert_allclose(J[:, k], twist_from_placements(*T, reference), atol=TOL)


@pytest.mark.parametrize("reference", ["world", "local", "local_world_aligned"])
def test_bias_acceleration_is_time_derivative_of_jacobian_times_v(model: kd.Model, reference: str) -> None:
    for q, v in sample_states(model):
        for frame in ("tip", "m"):
            J_plus = model.frame_jacobian(model.integrate(q, v, H), frame, reference)
            J_minus = model.frame_jacobian(model.integrate(q, v, -H), frame, reference)
            expected = (J_plus - J_minus) @ v / (2 * H)
            np.testing.assert_allclose(
                model.frame_bias_acceleration(q, v, frame, reference), expected, atol=TOL
            )


def test_com_jacobian_matches_com_differences(model: kd.Model) -> None:
    for q, v in sample_states(model):
        expected = (model.com(model.integrate(q, v, H)) - model.com(model.integrate(q, v, -H))) / (2 * H)
        np.testing.assert_allclose(model.com_jacobian(q) @ v, expected, atol=TOL)


def test_com_is_mass_weighted_mean_of_link_coms(model: kd.Model) -> None:
    """Independent CoM: each link's inertial origin placed with frame_placement."""
    links = {
        "a": (1.0, [0.1, 0.02, 0]),
        "b": (0.5, [0, 0, 0.2]),
        "c": (0.3, [0.05, 0, 0]),
        "m": (0.2, [0, 0, 0]),
    }
    if model.floating_base:
        links["base"] = (2.0, [0, 0, 0])
    for q, _ in sample_states(model):
        total = sum(mass for mass, _ in links.values())
        weighted = sum(
            mass * (model.frame_placement(q, name) @ np.r_[c, 1.0])[:3] for name, (mass, c) in links.items()
        )
        np.testing.assert_allclose(model.com(q), weighted / total, atol=1e-15)


def test_integrate_difference_round_trip(model: kd.Model) -> None:
    for q, v in sample_states(model):
        for dt in (1e-9, 0.3, 1.0):
            np.testing.assert_allclose(model.difference(q, model.integrate(q, v, dt)), dt * v, atol=1e-12)
