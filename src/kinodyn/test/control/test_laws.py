"""Joint-space and task-space control laws on their closed forms (Robot Dynamics lecture notes (ETH),
§3.8-§3.9; Robot Dynamics Essential, (34), §3.6).

Second sources: the 2-link arm's closed-form g(q) (urdf/README.md (a)), the ODE's closed-form
solution, forward dynamics by ABA (``J qdd + Jdot v`` with ``qdd = aba(q, v, tau)``), RNEA, and the simulator.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.joint_space import computed_torque, gains_from_frequency, pd, pd_gravity
from kinodyn.control.task_space import (
    dynamically_consistent_pinv,
    jacobian_transpose_control,
    operational_space_control,
    pose_error,
    task_acceleration,
)
from kinodyn.control.trajectories import Figure8, rms
from kinodyn.evaluation import Evaluator
from kinodyn.spatial import rotvec_to_matrix
from scipy.optimize import fsolve

import kinodyn as kd

from .conftest import ROOT, project_model

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from kinodyn.evaluation import Evaluation

PLANAR = project_model("planar_2link")
ARM7 = project_model("arm7")
QUADRUPED = project_model("quadruped")
M1, M2, L1, LC1, LC2, G = 1.0, 2.0, 1.0, 0.5, 0.4, 9.81  # urdf/README.md (a)
POSITION_XZ = (True, False, True, False, False, False)


def planar_gravity(q: np.ndarray) -> np.ndarray:
    """g(q) of the 2-link arm in closed form (urdf/README.md (a))."""
    s1, s12 = math.sin(q[0]), math.sin(q[0] + q[1])
    return np.array([-M1 * G * LC1 * s1 - M2 * G * (L1 * s1 + LC2 * s12), -M2 * G * LC2 * s12])


def simulate(model: kd.Model, frames: list[str], q0: np.ndarray, v0: np.ndarray,
             law: Callable[[Evaluation, float], np.ndarray], seconds: float,
             dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Run ``law(ev, t)`` zero-order held over ``dt`` in the RK4 simulator; (q, v) at the end."""
    evaluator = Evaluator(model, frames)
    sim = kd.sim.Simulator(model, dt=dt, integrator="rk4")
    sim.reset(q0, v0)
    for _ in range(round(seconds / dt)):
        sim.step(law(evaluator.evaluate(sim.q, sim.v), sim.t))
    return sim.q, sim.v


# ---- joint space -------------------------------------------------------------------------------------------

def test_gain_design_matches_seed_example_e12_and_inverts_378_379() -> None:
    # Robot Dynamics lecture notes (ETH), §3.8: 3 Hz, critical damping
    kp, kd_ = gains_from_frequency(2 * math.pi * 3.0)
    assert kp == pytest.approx(355.3, abs=0.05)
    assert kd_ == pytest.approx(37.70, abs=0.005)
    kp, kd_ = gains_from_frequency(7.0, 0.3)
    assert math.sqrt(kp) == pytest.approx(7.0)
    assert kd_ / (2 * math.sqrt(kp)) == pytest.approx(0.3)
    for bad in ((0.0, 1.0), (math.nan, 1.0), (5.0, -0.1), (5.0, math.inf)):
        with pytest.raises(ValueError, match="must be finite"):
            gains_from_frequency(*bad)


def test_computed_torque_error_follows_the_linear_ode_closed_form() -> None:
    """Robot Dynamics Essential, (84)-(85): with a sinusoidal reference and its feed-forward, ``e = q* - q``
    obeys ``e'' + kd e' + kp e = 0``, whose underdamped solution is closed form.

    The simulator holds each torque over ``dt`` while ``M(q)`` and ``h(q, v)`` change within the step, so the
    measured error is ``e_ODE(t) + c(t) dt + O(dt^2)``: first order in ``dt`` (asserted: halving ``dt`` halves
    the gap). Richardson's extrapolation ``2 e(dt/2) - e(dt)`` of two runs removes the first-order term;
    what remains must match the closed form to 1e-6.
    """
    kp, kd_ = gains_from_frequency(5.0, 0.7)
    amplitude, w, offset = np.array([0.3, 0.4]), 2 * math.pi * 0.5, np.array([0.3, -0.5])
    e0, ed0 = np.array([0.1, -0.15]), np.array([0.2, 0.3])

    def reference(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, c = np.sin(w * t), np.cos(w * t)
        return offset + amplitude * s, amplitude * w * c, -amplitude * w * w * s

    def errors(dt: float, seconds: float = 1.0) -> np.ndarray:
        evaluator = Evaluator(PLANAR, ["tool"])
        sim = kd.sim.Simulator(PLANAR, dt=dt, integrator="rk4")
        q_ref, v_ref, _ = reference(0.0)
        sim.reset(q_ref - e0, v_ref - ed0)
        out = []
        for _ in range(round(seconds / dt)):
            q_ref, v_ref, a_ref = reference(sim.t)
            out.append(q_ref - sim.q)
            tau = computed_torque(evaluator.evaluate(sim.q, sim.v), q_ref, kp, kd_, v_ref=v_ref, a_ref=a_ref)
            assert np.all(np.abs(tau) < PLANAR.effort_limit)  # never saturated
            sim.step(tau)
        out.append(reference(sim.t)[0] - sim.q)
        return np.array(out)

    dt = 4e-4
    coarse, fine = errors(dt), errors(dt / 2)[::2]
    t = np.arange(coarse.shape[0])[:, None] * dt
    omega, zeta = math.sqrt(kp), kd_ / (2 * math.sqrt(kp))
    omega_d = omega * math.sqrt(1 - zeta**2)
    exact = np.exp(-zeta * omega * t) * (e0 * np.cos(omega_d * t) + (ed0 + zeta * omega * e0) / omega_d
                                         * np.sin(omega_d * t))
    gap_coarse, gap_fine = np.abs(coarse - exact).max(), np.abs(fine - exact).max()
    assert 1e-6 < gap_fine < gap_coarse < 1e-3
    assert gap_coarse / gap_fine == pytest.approx(2.0, abs=0.05)
    assert np.abs(2 * fine - coarse - exact).max() < 1e-6
    assert np.abs(exact).max() > 0.1  # the error is not trivially small


@pytest.mark.parametrize("compensate", [True, False])
def test_pd_steady_state_with_and_without_gravity_compensation(compensate: bool) -> None:
    """(3.74) reaches q* exactly; plain PD (3.72) settles where ``kp (q* - q) = g(q)`` (3.73)."""
    q_star, kp, kd_ = np.array([0.4, -0.6]), np.array([60.0, 30.0]), np.array([15.0, 6.0])
    law = pd_gravity if compensate else pd
    q, v = simulate(PLANAR, ["tool"], [0.1, -0.2], [0.0, 0.0], lambda ev, t: law(ev, q_star, kp, kd_),
                    12.0, 1e-3)
    q_rest = q_star
    if not compensate:
        q_rest = fsolve(lambda x: kp * (q_star - x) - planar_gravity(x), q_star)
        assert np.abs(kp * (q_star - q_rest) - planar_gravity(q_rest)).max() < 1e-9
    assert np.abs(q - q_rest).max() < 1e-6
    assert np.abs(v).max() < 1e-5
    if not compensate:
        assert np.abs(q_rest - q_star).max() > 0.05  # the steady-state error (3.73) predicts, of this size


def test_joint_laws_on_a_floating_base_use_the_joint_rows_at_zero_base_acceleration() -> None:
    rng = np.random.default_rng(3)
    q, v = QUADRUPED.random_configuration(rng), rng.normal(size=QUADRUPED.nv)
    ev = Evaluator(QUADRUPED, []).evaluate(q, v)
    q_ref, v_ref, a_ref = rng.normal(size=12), rng.normal(size=12), rng.normal(size=12)
    kp, kd_ = rng.uniform(10, 100, 12), rng.uniform(1, 10, 12)
    qdd_star = a_ref + kp * (q_ref - q[7:]) + kd_ * (v_ref - v[6:])
    expected = QUADRUPED.rnea(q, v, np.concatenate([np.zeros(6), qdd_star]))[6:]
    tau = computed_torque(ev, q_ref, kp, kd_, v_ref=v_ref, a_ref=a_ref)
    np.testing.assert_allclose(tau, expected, rtol=1e-10, atol=1e-9)
    gravity = QUADRUPED.rnea(q, np.zeros(18), np.zeros(18))[6:]
    pd_expected = kp * (q_ref - q[7:]) + kd_ * (v_ref - v[6:])
    np.testing.assert_allclose(pd(ev, q_ref, kp, kd_, v_ref), pd_expected, rtol=1e-12)
    np.testing.assert_allclose(pd_gravity(ev, q_ref, kp, kd_, v_ref), pd_expected + gravity,
                               rtol=1e-10, atol=1e-9)


def test_joint_laws_refuse_bad_inputs_with_a_message() -> None:
    ev = Evaluator(PLANAR, []).evaluate([0.1, 0.2], [0.0, 0.0])
    with pytest.raises(ValueError, match="q_ref"):
        pd(ev, [0.0, 0.0, 0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="q_ref"):
        pd_gravity(ev, [0.0, math.nan], 1.0, 1.0)
    with pytest.raises(ValueError, match="kp"):
        computed_torque(ev, [0.0, 0.0], -1.0, 1.0)
    with pytest.raises(ValueError, match="a_ref"):
        computed_torque(ev, [0.0, 0.0], 1.0, 1.0, a_ref=[math.inf, 0.0])


# ---- task space --------------------------------------------------------------------------------------------

def test_pose_error_is_the_world_rotation_vector_and_the_position_difference() -> None:
    T = ARM7.frame_placement(ARM7.random_configuration(5), "ee_link")
    phi, dp = np.array([0.3, -0.2, 0.5]), np.array([0.01, -0.02, 0.03])
    T_ref = T.copy()
    T_ref[:3, :3] = rotvec_to_matrix(phi) @ T[:3, :3]
    T_ref[:3, 3] += dp
    np.testing.assert_allclose(pose_error(T_ref, T), np.concatenate([dp, phi]), atol=1e-12)
    with pytest.raises(ValueError, match="4x4 homogeneous transform"):
        pose_error(np.eye(3), T)


@pytest.mark.parametrize("seed", range(5))
def test_osc_achieves_the_task_acceleration_and_the_null_space_adds_none(seed: int) -> None:
    """Operational space control (Robot Dynamics lecture notes (ETH), (3.87)-(3.89); arm7: 7 joints, 6-D
    task): ``J qdd + Jdot v = wdot*`` with ``qdd`` from ABA, for any null-space torque; ``J M^-1 (I - J^T
    Jbar^T) = 0``; position-only mask: its three rows hold."""
    rng = np.random.default_rng(seed)
    q, v = ARM7.random_configuration(rng), rng.normal(size=7)
    ev = Evaluator(ARM7, ["ee_link"]).evaluate(q, v)
    J, bias, M = ev.jacobian("ee_link"), ev.bias_acceleration("ee_link"), ev.mass_matrix
    wdot = rng.normal(size=6) * 3.0
    for tau0 in (None, rng.normal(size=7) * 20.0):
        tau = operational_space_control(ev, "ee_link", wdot, tau0=tau0)
        achieved = J @ ARM7.aba(q, v, tau) + bias
        np.testing.assert_allclose(achieved, wdot, rtol=0, atol=1e-8 * (1 + np.abs(wdot).max()))
    Jbar, Lam = dynamically_consistent_pinv(M, J)
    np.testing.assert_allclose(J @ np.linalg.solve(M, np.eye(7) - J.T @ Jbar.T), 0.0, atol=1e-9)
    np.testing.assert_allclose(J @ Jbar, np.eye(6), atol=1e-9)  # a (generalized) right inverse
    np.testing.assert_allclose(Lam, np.linalg.inv(J @ np.linalg.solve(M, J.T)), rtol=1e-8)
    position_only = [True] * 3 + [False] * 3
    tau = operational_space_control(ev, "ee_link", wdot, mask=position_only, tau0=rng.normal(size=7))
    achieved = J @ ARM7.aba(q, v, tau) + bias
    np.testing.assert_allclose(achieved[:3], wdot[:3], rtol=0, atol=1e-9 * (1 + np.abs(wdot).max()))


def test_osc_with_square_jacobian_equals_the_alternative_notation_395() -> None:
    """The 2-link arm's x-z position task has a square invertible J: (3.89) equals (3.95),
    ``tau = J^T Lambda wdot* + b_tilde + g``, ``Lambda = J^-T M J^-1``,
    ``b_tilde = b - J^T Lambda Jdot v``."""
    q, v = np.array([0.4, -0.9]), np.array([0.7, -1.1])
    ev = Evaluator(PLANAR, ["tool"]).evaluate(q, v)
    rows = np.array(POSITION_XZ)
    J, Jdv = ev.jacobian("tool")[rows], ev.bias_acceleration("tool")[rows]
    wdot = np.array([1.5, 0.0, -2.0, 0.0, 0.0, 0.0])
    J_inv = np.linalg.inv(J)
    Lam = J_inv.T @ ev.mass_matrix @ J_inv
    b = ev.nonlinear_effects - ev.gravity_torques
    expected = J.T @ Lam @ wdot[rows] + (b - J.T @ Lam @ Jdv) + planar_gravity(q)
    tau = operational_space_control(ev, "tool", wdot, mask=POSITION_XZ)
    np.testing.assert_allclose(tau, expected, rtol=1e-10)


def test_osc_at_a_singularity_is_finite_and_exact_in_the_directions_it_keeps() -> None:
    """Stretched arm (q2 = 0): the x-z task has rank 1. Directions of ``J M^-1 J^T`` above ``rcond``
    are inverted exactly, the lost one gets no force: the torque is finite and bounded."""
    q, v = np.array([0.3, 0.0]), np.array([0.2, -0.1])
    ev = Evaluator(PLANAR, ["tool"]).evaluate(q, v)
    rows = np.array(POSITION_XZ)
    J, Jdv, M = ev.jacobian("tool")[rows], ev.bias_acceleration("tool")[rows], ev.mass_matrix
    s, U = np.linalg.eigh(J @ np.linalg.solve(M, J.T))
    assert s[0] < 1e-12 * s[1]
    wdot = np.array([1.0, 0.0, 2.0, 0.0, 0.0, 0.0])
    tau = operational_space_control(ev, "tool", wdot, mask=POSITION_XZ)
    assert np.all(np.isfinite(tau))
    assert np.abs(tau).max() < 100.0
    kept = U[:, 1]
    assert kept @ (J @ PLANAR.aba(q, v, tau) + Jdv) == pytest.approx(kept @ wdot[rows], abs=1e-10)


def test_jacobian_transpose_control_converges_to_the_target() -> None:
    """Robot Dynamics Essential, (34) with gravity compensation: the tool settles on a reachable x-z target
    (free rotation)."""
    target = PLANAR.frame_placement(np.array([0.5, -1.0]), "tool")
    kp, kd_ = [400.0, 0, 400.0, 0, 0, 0], [40.0, 0, 40.0, 0, 0, 0]
    q, v = simulate(PLANAR, ["tool"], [0.1, -0.4], [0.0, 0.0],
                    lambda ev, t: jacobian_transpose_control(ev, "tool", target, kp, kd_), 4.0, 1e-3)
    np.testing.assert_allclose(PLANAR.frame_placement(q, "tool")[:3, 3], target[:3, 3], atol=1e-8)
    assert np.abs(v).max() < 1e-6


def test_task_space_laws_refuse_a_floating_base_and_bad_inputs() -> None:
    ev = Evaluator(QUADRUPED, ["LF_FOOT"]).evaluate(QUADRUPED.neutral(), np.zeros(QUADRUPED.nv))
    with pytest.raises(ValueError, match="whole-body QP"):
        operational_space_control(ev, "LF_FOOT", np.zeros(6))
    with pytest.raises(ValueError, match="whole-body QP"):
        jacobian_transpose_control(ev, "LF_FOOT", np.eye(4), 1.0, 1.0)
    arm = Evaluator(ARM7, ["ee_link"]).evaluate(ARM7.neutral(), np.zeros(7))
    with pytest.raises(ValueError, match="mask"):
        operational_space_control(arm, "ee_link", np.zeros(6), mask=[False] * 6)
    with pytest.raises(ValueError, match="wdot_star"):
        operational_space_control(arm, "ee_link", [math.nan] * 6)
    with pytest.raises(ValueError, match="tau0"):
        operational_space_control(arm, "ee_link", np.zeros(6), tau0=np.zeros(6))
    with pytest.raises(ValueError, match="M must be"):
        dynamically_consistent_pinv(np.eye(7), np.zeros((6, 6)))
    with pytest.raises(ValueError, match="finite"):
        dynamically_consistent_pinv(np.full((2, 2), math.nan), np.ones((1, 2)))
    with pytest.raises(ValueError, match="rcond"):
        operational_space_control(arm, "ee_link", np.zeros(6), rcond=0.0)
    with pytest.raises(KeyError, match="not evaluated"):
        task_acceleration(arm, "link3", np.eye(4), 1.0, 1.0)


# ---- figure-8 ----------------------------------------------------------------------------------------------

def test_figure8_derivatives_are_exact() -> None:
    f8 = Figure8(center=[0.3, 0.0, 0.5], amplitude=0.1, frequency=0.5, u=(0, 1, 0), w=(0, 0, 1))
    h = 1e-5
    for t in (0.0, 0.37, 1.3):
        r, before, after = f8.sample(t), f8.sample(t - h), f8.sample(t + h)
        np.testing.assert_allclose(r.velocity, (after.position - before.position) / (2 * h), atol=1e-8)
        np.testing.assert_allclose(r.acceleration, (after.velocity - before.velocity) / (2 * h), atol=1e-7)
    positions = np.array([f8.sample(t).position for t in np.linspace(0, 2, 2001)])
    np.testing.assert_allclose(positions.max(axis=0) - positions.min(axis=0), [0.0, 0.2, 0.1], atol=1e-9)
    np.testing.assert_allclose(f8.sample(1.0).position, f8.center, atol=1e-15)  # the crossing, half a period
    assert rms([[3.0, 4.0], [0.0, 0.0]]) == pytest.approx(math.sqrt(12.5))
    with pytest.raises(ValueError, match="orthonormal"):
        Figure8(center=[0, 0, 0], u=(1, 0, 0), w=(1, 0, 0))


def _example() -> ModuleType:
    path = ROOT / "examples" / "arm_figure8_osc.py"
    spec = importlib.util.spec_from_file_location("arm_figure8_osc", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("compensate", "position_bound", "orientation_bound"),
                         [(True, 1e-5, 1.5e-4), (False, 1.2e-3, 0.04)])
def test_arm7_figure8_with_operational_space_control(compensate: bool, position_bound: float,
                                                      orientation_bound: float) -> None:
    """examples/arm_figure8_osc.py, one period (2 s) at 1 kHz, with and without the joint friction
    feed-forward (without it the URDF's friction is unmodelled and the errors are two orders larger)."""
    r = _example().run(2.0, compensate_friction=compensate)
    assert r.position_rms < position_bound
    assert r.orientation_rms < orientation_bound
    assert r.position_rms > position_bound / 4  # a bound near the measurement, not a blanket one
    assert r.torque_max < 87.0
