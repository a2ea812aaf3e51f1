"""Error-state EKF (kinodyn.estimation.eskf): Jacobians against numerical linearisation, closed forms, the
scalar KF check of Robot Dynamics Essential, §5, touchdown/lift-off/gating, and Monte-Carlo consistency."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.estimation import NoiseParameters
from kinodyn.estimation import eskf as kernels
from kinodyn.estimation.consistency import chi2_bounds
from kinodyn.estimation.eskf import ErrorStateEKF
from kinodyn.estimation.filter import FootMeasurement
from kinodyn.estimation.invariant import InvariantEKF
from kinodyn.estimation.kalman import stance_rows
from kinodyn.spatial.lie import so3_exp, so3_left_jacobian, so3_log
from scipy.spatial.transform import Rotation

G = np.array([0.0, 0.0, -9.81])
State = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # (C, p, v, b_a, b_g)
FEET = {
    "lf": [0.25, 0.15, -0.3],
    "rf": [0.25, -0.15, -0.3],
    "lh": [-0.25, 0.15, -0.3],
    "rh": [-0.25, -0.15, -0.3],
}


def _filter(
    noise: NoiseParameters | None = None, C: np.ndarray | None = None, p: np.ndarray | None = None,
    v: np.ndarray | None = None, b_a: np.ndarray | None = None, b_g: np.ndarray | None = None,
    constrained: bool = True,
) -> ErrorStateEKF:
    f = ErrorStateEKF(noise, observability_constrained=constrained)
    z = np.zeros(3)
    f.initialize(
        np.eye(3) if C is None else C,
        z if p is None else p,
        z if v is None else v,
        z if b_a is None else b_a,
        z if b_g is None else b_g,
    )
    return f


def _boxplus(state: State, dx: np.ndarray) -> State:
    """``state ⊞ dx`` in the local convention (C Exp(dθ)); state = (C, p, v, b_a, b_g)."""
    C, p, v, b_a, b_g = state
    return (C @ so3_exp(dx[6:9]), p + dx[0:3], v + dx[3:6], b_a + dx[9:12], b_g + dx[12:15])


def _boxminus(a: State, b: State) -> np.ndarray:
    """``a ⊟ b``: the local error taking b to a."""
    return np.concatenate([a[1] - b[1], a[2] - b[2], so3_log(b[0].T @ a[0]), a[3] - b[3], a[4] - b[4]])


def _step(state: State, w_m: np.ndarray, a_m: np.ndarray, dt: float) -> tuple[State, np.ndarray]:
    f = _filter(None, *state)
    f.propagate(w_m, a_m, dt)
    return (f.rotation, f.position, f.velocity, f.accelerometer_bias, f.gyroscope_bias), f.transition_matrix


def test_transition_matches_numerical_linearisation_to_second_order() -> None:
    rng = np.random.default_rng(3)
    state = (
        Rotation.random(random_state=4).as_matrix(),
        rng.normal(size=3),
        rng.normal(size=3),
        0.1 * rng.normal(size=3),
        0.05 * rng.normal(size=3),
    )
    w_m, a_m = np.array([0.8, -1.1, 0.6]), np.array([2.0, -1.0, 9.0])
    residuals = []
    for dt in (4e-3, 2e-3):
        nominal, F = _step(state, w_m, a_m, dt)
        eps = 1e-6
        J = np.empty((15, 15))
        for k in range(15):
            e = np.zeros(15)
            e[k] = eps
            plus, _ = _step(_boxplus(state, e), w_m, a_m, dt)
            minus, _ = _step(_boxplus(state, -e), w_m, a_m, dt)
            J[:, k] = (_boxminus(plus, nominal) - _boxminus(minus, nominal)) / (2 * eps)
        residuals.append(np.abs(J - F).max())
        assert residuals[-1] < 20 * dt**2
        # (111)'s couplings are O(dt): a wrong sign or block would be far above dt^2
        assert np.abs(F - np.eye(15)).max() > 5 * dt
    assert residuals[0] / residuals[1] == pytest.approx(4.0, rel=0.3)  # second order


def test_stance_jacobian_matches_central_differences() -> None:
    rng = np.random.default_rng(5)
    C = Rotation.random(random_state=6).as_matrix()
    p, d, r = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    n = 15 + 6
    H, A = np.empty((3, n)), np.empty((3, 3))
    kernels.stance_angle_block(np.ascontiguousarray(C), r, A)
    stance_rows(np.eye(n), 1, A, H)  # H P with P = I: H

    def h(dx: np.ndarray) -> np.ndarray:  # foot in slot 1: columns 18..20
        return (d + dx[18:21]) - (p + dx[0:3]) - C @ so3_exp(dx[6:9]) @ r

    eps = 1e-6
    numerical = np.column_stack([(h(eps * e) - h(-eps * e)) / (2 * eps) for e in np.eye(n)])
    np.testing.assert_allclose(H, numerical, atol=1e-9)
    assert np.abs(H[:, 6:9]).max() > 0.1


def test_scalar_kalman_filter_check() -> None:
    """Inventory §3.3: P- = 1, N = 1, innovation 2 -> K = 0.5, estimate moves by 1, P = 0.5 (per axis, on
    a foot whose prior variance 1 comes from its touchdown measurement, with the body known exactly)."""
    exact = NoiseParameters(**{name: 0.0 for name in NoiseParameters.__dataclass_fields__})
    f = _filter(exact)
    f.update_contacts([FootMeasurement("lf", np.zeros(3), np.eye(3))])
    np.testing.assert_allclose(f.covariance[15:, 15:], np.eye(3))
    report = f.update_contacts([FootMeasurement("lf", np.array([2.0, 0.0, 0.0]), np.eye(3))])
    np.testing.assert_allclose(f.foot_position("lf"), [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(f.covariance[15:, 15:], 0.5 * np.eye(3), atol=1e-15)
    np.testing.assert_allclose(f.position, np.zeros(3), atol=1e-15)
    assert report.used == ("lf",)
    assert report.nis == pytest.approx(2.0)
    assert report.dof == 3


def test_constant_rate_propagation_matches_closed_form() -> None:
    """Rotation: C(T) = C0 Exp((w_m - b_g) T) exactly; with w = 0 the translation is the exact parabola;
    with w != 0, v(T) = v0 + g T + C0 T J_l(w T) (a_m - b_a) to first order in dt (zero-order hold)."""
    C0 = Rotation.from_euler("xyz", [0.2, -0.3, 1.0]).as_matrix()
    p0, v0 = np.array([1.0, 2.0, 0.5]), np.array([0.3, -0.2, 0.1])
    b_a, b_g = np.array([0.05, -0.02, 0.1]), np.array([0.01, 0.0, -0.02])
    a_m = np.array([0.5, 0.2, 9.7])
    f = _filter(None, C0, p0, v0, b_a, b_g)
    for _ in range(1000):
        f.propagate(b_g, a_m, 1e-3)
    a = C0 @ (a_m - b_a) + G
    np.testing.assert_allclose(f.position, p0 + v0 + 0.5 * a, atol=1e-12)
    np.testing.assert_allclose(f.velocity, v0 + a, atol=1e-12)
    w = np.array([0.7, -0.4, 1.3])
    errors = []
    for steps in (500, 1000):
        f = _filter(None, C0, p0, v0, b_a, b_g)
        for _ in range(steps):
            f.propagate(w + b_g, a_m, 1.0 / steps)
        np.testing.assert_allclose(f.rotation, C0 @ so3_exp(w), atol=1e-12)
        v_exact = v0 + G + C0 @ so3_left_jacobian(w) @ (a_m - b_a)
        errors.append(np.linalg.norm(f.velocity - v_exact))
    assert errors[1] < 0.02
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.05)  # first order in dt


def _measure(C: np.ndarray, p: np.ndarray, d: np.ndarray, rng: np.random.Generator,
             sigma: float) -> np.ndarray:
    return C.T @ (d - p) + sigma * rng.standard_normal(3)


def test_static_robot_with_four_feet_keeps_its_pose() -> None:
    rng = np.random.default_rng(7)
    noise = NoiseParameters()
    C = Rotation.from_euler("xyz", [0.1, -0.05, 0.7]).as_matrix()
    p = np.array([0.3, -0.2, 0.35])
    feet_world = {name: p + C @ np.array(r) for name, r in FEET.items()}
    dt, sigma = 2e-3, 1e-3
    f = _filter(noise, C, p)
    rejected = 0
    for _ in range(2500):  # 5 s
        w_m = noise.gyroscope_noise_density / np.sqrt(dt) * rng.standard_normal(3)
        a_m = C.T @ -G + noise.accelerometer_noise_density / np.sqrt(dt) * rng.standard_normal(3)
        f.propagate(w_m, a_m, dt)
        report = f.update_contacts(
            [
                FootMeasurement(n, _measure(C, p, d, rng, sigma), sigma**2 * np.eye(3))
                for n, d in feet_world.items()
            ]
        )
        rejected += len(report.rejected)
    assert rejected <= 4  # a 0.9999 gate on 10^4 consistent innovations rejects ~1
    assert np.linalg.norm(f.position - p) < 2e-3
    assert np.linalg.norm(f.velocity) < 2e-3
    assert np.linalg.norm(so3_log(C.T @ f.rotation)) < 2e-3
    P = f.navigation_covariance()
    assert np.all(np.abs(f.position - p) < 4 * np.sqrt(np.diag(P)[0:3]))


def test_touchdown_adds_no_information_and_lift_off_marginalises() -> None:
    f = _filter()
    f.propagate([0.1, 0.0, 0.0], [0.0, 0.0, 9.81], 0.01)
    before = f.covariance
    report = f.update_contacts([FootMeasurement(n, np.array(r), 1e-4 * np.eye(3)) for n, r in FEET.items()])
    assert report.added == tuple(FEET)
    assert report.used == ()
    assert np.isnan(report.nis)
    np.testing.assert_array_equal(f.covariance[:15, :15], before)
    for name, r in FEET.items():
        np.testing.assert_allclose(f.foot_position(name), f.position + f.rotation @ np.array(r), atol=1e-15)
    full = f.covariance
    assert np.all(np.linalg.eigvalsh(full) > -1e-15)
    report = f.update_contacts(
        [FootMeasurement(n, np.array(FEET[n]), 1e-4 * np.eye(3)) for n in ("lf", "rh")]
    )
    assert report.removed == ("rf", "lh")
    assert f.feet == ("lf", "rh")
    assert report.used == ("lf", "rh")
    assert report.dof == 6
    with pytest.raises(KeyError, match="rf"):
        f.foot_position("rf")


def test_lift_off_equals_never_having_had_the_foot() -> None:
    """Touchdown adds no information, so marginalising a foot leaves exactly the filter that never had it."""
    three = ("lf", "rf", "rh")
    f, g = _filter(), _filter()
    f.update_contacts([FootMeasurement(n, np.array(r), 1e-4 * np.eye(3)) for n, r in FEET.items()])
    g.update_contacts([FootMeasurement(n, np.array(FEET[n]), 1e-4 * np.eye(3)) for n in three])
    keep = np.r_[0:21, 24 : f.covariance.shape[0]]  # lh is the third foot: rows 21..23
    np.testing.assert_array_equal(f.covariance[np.ix_(keep, keep)], g.covariance)
    for h in (f, g):
        h.propagate([0.2, -0.1, 0.3], [0.1, 0.2, 9.9], 2e-3)
    moved = [FootMeasurement(n, np.array(FEET[n]) + 1e-3, 1e-4 * np.eye(3)) for n in three]
    report = f.update_contacts(moved)
    g.update_contacts(moved)
    assert report.removed == ("lh",)
    assert report.used == three
    assert f.feet == three
    np.testing.assert_allclose(f.covariance, g.covariance, atol=1e-15)
    np.testing.assert_allclose(f.position, g.position, atol=1e-15)


def test_gate_rejects_a_slipped_foot_only() -> None:
    f = _filter()
    f.update_contacts([FootMeasurement(n, np.array(r), 1e-6 * np.eye(3)) for n, r in FEET.items()])
    ref = _filter()
    ref.update_contacts([FootMeasurement(n, np.array(r), 1e-6 * np.eye(3)) for n, r in FEET.items()])
    for g in (f, ref):
        g.propagate([0.0, 0.0, 0.0], [0.0, 0.0, 9.81], 2e-3)
    shifted = {**FEET, "rf": [0.25, -0.15 + 0.05, -0.3]}
    report = f.update_contacts(
        [FootMeasurement(n, np.array(r), 1e-6 * np.eye(3)) for n, r in shifted.items()]
    )
    assert report.rejected == ("rf",)
    assert report.used == ("lf", "lh", "rh")
    assert report.dof == 9
    ref._remove(["rf"])  # noqa: SLF001  (the marginalisation itself)
    ref.update_contacts([FootMeasurement(n, np.array(FEET[n]), 1e-6 * np.eye(3)) for n in ("lf", "lh", "rh")])
    np.testing.assert_allclose(f.position, ref.position, atol=1e-15)
    np.testing.assert_allclose(f.velocity, ref.velocity, atol=1e-15)


@pytest.mark.parametrize("constrained", [False, True])
def test_update_matches_dense_reference(constrained: bool) -> None:
    """The compiled sparse update against the textbook dense one: H built in full, K = P H^T S^-1, Joseph
    form, injection and the reset G (Robot Dynamics Essential, (113); Solà 2017 §6.3). OC-EKF: H's angle block
    projected so that H annihilates the yaw direction N at the prior (Hesch et al. 2014 eq. 40), checked as
    ``H N = 0``."""
    rng = np.random.default_rng(11)
    f = _filter(C=Rotation.random(random_state=12).as_matrix(), constrained=constrained)
    f.update_contacts([FootMeasurement(n, np.array(r), 1e-4 * np.eye(3)) for n, r in FEET.items()])
    for _ in range(20):
        f.propagate(rng.normal(size=3), np.array([0.0, 0.0, 9.81]) + rng.normal(size=3), 5e-3)
    C, p, d, P = f.rotation, f.position, np.array([f.foot_position(n) for n in FEET]), f.covariance
    v, b = f.velocity, np.concatenate([f.accelerometer_bias, f.gyroscope_bias])
    meas = [
        (n, np.array(r) + 0.01 * rng.normal(size=3), (1e-4 + 1e-5 * k) * np.eye(3))
        for k, (n, r) in enumerate(FEET.items())
    ]
    report = f.update_contacts([FootMeasurement(*m) for m in meas])
    assert report.used == tuple(FEET)
    n = P.shape[0]
    up = np.array([0.0, 0.0, 1.0])
    yaw = np.concatenate([np.cross(up, p), np.cross(up, v), C.T @ up, np.zeros(6), np.cross(up, d).ravel()])
    u = C.T @ up
    H, nu, N = np.zeros((12, n)), np.zeros(12), np.zeros((12, 12))
    for k, (_, r, cov) in enumerate(meas):
        H[3 * k : 3 * k + 3, 0:3] = -np.eye(3)
        A = C @ np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
        if constrained:  # the least change of A with A u = w: A (I - u u^T) + w u^T
            A = A @ (np.eye(3) - np.outer(u, u)) + np.outer(np.cross(up, p) - np.cross(up, d[k]), u)
        H[3 * k : 3 * k + 3, 6:9] = A
        H[3 * k : 3 * k + 3, 15 + 3 * k : 18 + 3 * k] = np.eye(3)
        nu[3 * k : 3 * k + 3] = p + C @ r - d[k]
        N[3 * k : 3 * k + 3, 3 * k : 3 * k + 3] = C @ cov @ C.T
    # the plain H sees yaw through the innovation (H N = -[e]x nu), the constrained one not at all
    assert (np.abs(H @ yaw).max() < 1e-14) == constrained
    S = H @ P @ H.T + N
    K = P @ H.T @ np.linalg.inv(S)
    dx = K @ nu
    A = np.eye(n) - K @ H
    Pj = A @ P @ A.T + K @ N @ K.T
    Gm = np.eye(n)
    Gm[6:9, 6:9] -= 0.5 * np.array([[0, -dx[8], dx[7]], [dx[8], 0, -dx[6]], [-dx[7], dx[6], 0]])
    np.testing.assert_allclose(f.covariance, Gm @ Pj @ Gm.T, atol=1e-13)
    assert report.nis == pytest.approx(nu @ np.linalg.solve(S, nu), rel=1e-10)
    np.testing.assert_allclose(f.position, p + dx[0:3], atol=1e-14)
    np.testing.assert_allclose(f.velocity, v + dx[3:6], atol=1e-14)
    np.testing.assert_allclose(f.rotation, C @ so3_exp(dx[6:9]), atol=1e-14)
    np.testing.assert_allclose(
        np.concatenate([f.accelerometer_bias, f.gyroscope_bias]), b + dx[9:15], atol=1e-14
    )
    for k, name in enumerate(FEET):
        np.testing.assert_allclose(f.foot_position(name), d[k] + dx[15 + 3 * k : 18 + 3 * k], atol=1e-14)


def test_bad_input_raises_clear_errors() -> None:
    f = ErrorStateEKF()
    with pytest.raises(RuntimeError, match="initialize"):
        f.propagate(np.zeros(3), np.zeros(3), 1e-3)
    f = _filter()
    with pytest.raises(ValueError, match="linear_acceleration"):
        f.propagate(np.zeros(3), [0.0, np.nan, 9.8], 1e-3)
    with pytest.raises(ValueError, match="dt"):
        f.propagate(np.zeros(3), np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="duplicate"):
        f.update_contacts([FootMeasurement("a", np.zeros(3), np.eye(3))] * 2)
    with pytest.raises(ValueError, match="non-finite"):
        FootMeasurement("a", [0.0, np.inf, 0.0], np.eye(3))
    with pytest.raises(ValueError, match="gravity"):
        ErrorStateEKF(gravity=-1.0)
    with pytest.raises(ValueError, match="not symmetric"):
        FootMeasurement("a", np.zeros(3), [[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for indefinite in (-np.eye(3), [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]):
        with pytest.raises(ValueError, match="positive semi-definite"):
            FootMeasurement("a", np.zeros(3), indefinite)
    FootMeasurement("a", np.zeros(3), [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])  # singular is fine
    exact = NoiseParameters(**{name: 0.0 for name in NoiseParameters.__dataclass_fields__})
    f = _filter(exact)
    f.update_contacts([FootMeasurement("a", np.zeros(3), np.zeros((3, 3)))])
    state = (f.position, f.covariance)
    with pytest.raises(ValueError, match="not positive definite"):  # S = 0: nothing is uncertain
        f.update_contacts([FootMeasurement("a", np.zeros(3), np.zeros((3, 3)))])
    np.testing.assert_array_equal(f.position, state[0])
    np.testing.assert_array_equal(f.covariance, state[1])


def test_monte_carlo_nees_and_nis_inside_chi2_bounds() -> None:
    """A swaying body on four feet that slip by the assumed random walk; the truth follows the filter's own
    process model with the noise densities it assumes (measurements by the sensor models (114), (115)).
    Mean NEES over runs at two times and the mean NIS of every update inside their 95 % chi-square bounds."""
    noise = NoiseParameters()
    runs, steps, dt, sigma = 24, 600, 2e-3, 2e-3
    checks = (300, 599)
    nees = np.zeros((runs, len(checks)))
    nis, nis_dof = [], 0
    P0 = np.diag(
        np.repeat(
            [
                noise.initial_position,
                noise.initial_velocity,
                noise.initial_orientation,
                noise.initial_accelerometer_bias,
                noise.initial_gyroscope_bias,
            ],
            3,
        )
        ** 2
    )
    for run in range(runs):
        rng = np.random.default_rng(100 + run)
        C, p, v = (
            Rotation.from_euler("xyz", [0.05, -0.02, 0.3]).as_matrix(),
            np.array([0.0, 0.0, 0.4]),
            np.zeros(3),
        )
        b_a, b_g = 0.02 * rng.standard_normal(3), 5e-4 * rng.standard_normal(3)
        feet = {n: p + C @ np.array(r) for n, r in FEET.items()}
        start = _boxplus((C, p, v, b_a, b_g), rng.multivariate_normal(np.zeros(15), P0))
        f = _filter(noise, *start)
        for k in range(steps):
            t = k * dt
            w = np.array([0.4 * np.cos(3 * t), -0.3 * np.sin(2 * t), 0.2])  # true body rate
            a = np.array([0.3 * np.sin(4 * t), 0.2 * np.cos(3 * t), 0.1 * np.sin(5 * t)])  # true world accel
            w_m = w + b_g + noise.gyroscope_noise_density / np.sqrt(dt) * rng.standard_normal(3)
            a_m = (
                C.T @ (a - G) + b_a + noise.accelerometer_noise_density / np.sqrt(dt) * rng.standard_normal(3)
            )
            f.propagate(w_m, a_m, dt)
            # truth by the same zero-order-hold model (110), with the bias and foot random walks
            p = p + v * dt + 0.5 * a * dt**2
            v = v + a * dt
            C = C @ so3_exp(w * dt)
            b_a = b_a + noise.accelerometer_random_walk * np.sqrt(dt) * rng.standard_normal(3)
            b_g = b_g + noise.gyroscope_random_walk * np.sqrt(dt) * rng.standard_normal(3)
            feet = {
                n: d + noise.foot_random_walk * np.sqrt(dt) * rng.standard_normal(3) for n, d in feet.items()
            }
            report = f.update_contacts(
                [
                    FootMeasurement(n, _measure(C, p, d, rng, sigma), sigma**2 * np.eye(3))
                    for n, d in feet.items()
                ]
            )
            if report.dof:
                nis.append(report.nis)
                nis_dof = report.dof
            if k in checks:
                nees[run, checks.index(k)] = f.nees(p, v, C)
    lower, upper = chi2_bounds(9, runs)
    for column in nees.T:
        assert lower <= column.mean() <= upper, (column.mean(), lower, upper)
    lower, upper = chi2_bounds(nis_dof, len(nis))
    assert lower <= np.mean(nis) <= upper, (np.mean(nis), lower, upper)


def _yaw_direction(f: ErrorStateEKF, touchdown: dict) -> np.ndarray:
    """The unobservable yaw direction at f's state, ``[e x p; e x v; C^T e; 0; 0; e x d_k]``, with the feet
    where they touched down (the OC-EKF keeps N's foot parts: F's foot blocks are identity)."""
    up = np.array([0.0, 0.0, 1.0])
    feet = [np.cross(up, touchdown[n]) for n in f.feet]
    return np.concatenate([np.cross(up, f.position), np.cross(up, f.velocity), f.rotation.T @ up, np.zeros(6),
                           *feet])


def _yaw_over_a_long_stance(constrained: bool) -> tuple[list[float], list[float], list[float]]:
    """A swaying, yawing body on four fixed feet for 4 s, noisy IMU and kinematics: the information about
    the yaw direction before and after each update, and the world-yaw variance after each update."""
    noise = NoiseParameters()
    dt, sigma = 2e-3, 2e-3
    rng = np.random.default_rng(7)
    C = Rotation.from_euler("xyz", [0.05, -0.02, 0.3]).as_matrix()
    p, v = np.array([0.0, 0.0, 0.4]), np.zeros(3)
    feet = {n: p + C @ np.array(r) for n, r in FEET.items()}
    f = _filter(noise, C, p, v, constrained=constrained)
    before, after, variance = [], [], []
    touchdown: dict[str, np.ndarray] = {}
    white = (noise.gyroscope_noise_density / np.sqrt(dt), noise.accelerometer_noise_density / np.sqrt(dt))
    for k in range(2000):
        t = k * dt
        w = np.array([0.4 * np.cos(3 * t), -0.3 * np.sin(2 * t), 0.2])
        a = np.array([0.3 * np.sin(4 * t), 0.2 * np.cos(3 * t), 0.1 * np.sin(5 * t)])
        w_m, a_m = w + white[0] * rng.standard_normal(3), C.T @ (a - G) + white[1] * rng.standard_normal(3)
        f.propagate(w_m, a_m, dt)
        p, v, C = p + v * dt + 0.5 * a * dt**2, v + a * dt, C @ so3_exp(w * dt)
        measured = [FootMeasurement(n, _measure(C, p, d, rng, sigma), sigma**2 * np.eye(3))
                    for n, d in feet.items()]
        if k:  # the first call appends the feet
            N = _yaw_direction(f, touchdown)
            before.append(N @ np.linalg.solve(f.covariance, N))
        f.update_contacts(measured)
        if not k:
            touchdown.update({n: f.foot_position(n) for n in f.feet})
        else:
            after.append(N @ np.linalg.solve(f.covariance, N))
            up = f.rotation.T @ np.array([0.0, 0.0, 1.0])
            variance.append(up @ f.covariance[6:9, 6:9] @ up)
    return before, after, variance


def test_observability_constraint_gives_no_yaw_information() -> None:
    """OC-EKF (Hesch et al. 2014; Bloesch et al. 2013): the stance update annihilates the yaw direction at the
    prior, so over 4 s of a swaying, yawing stance the information about it (N^T P^-1 N) stays (changed only
    by the reset's O(dtheta) rotation of P, 0.8 % measured) and the world-yaw variance does not shrink; the
    plain EKF gains yaw information at every update (2.6x in all) and its yaw variance falls 2.4x."""
    before, after, variance = _yaw_over_a_long_stance(constrained=True)
    gain = np.abs(np.array(after) / np.array(before) - 1.0)
    assert after[-1] / before[0] < 1.02
    assert variance[-1] >= variance[0]
    assert min(variance) > 0.99 * variance[0]
    before, after, plain = _yaw_over_a_long_stance(constrained=False)
    assert after[-1] / before[0] > 2.0
    assert plain[-1] < 0.5 * plain[0]
    assert np.median(gain) < 0.2 * np.median(np.abs(np.array(after) / np.array(before) - 1.0))


@pytest.mark.parametrize("kind", ["eskf", "invariant"])
def test_initialize_takes_a_covariance_in_the_eskf_convention(kind: str) -> None:
    """``initialize(..., covariance)``: both filters report it back as their navigation covariance (the
    invariant maps it to its own error and back); a non-symmetric, indefinite or mis-shaped one is refused."""
    rng = np.random.default_rng(2)
    A = rng.normal(size=(15, 15))
    P0 = A @ A.T * 1e-4
    P0[0:3, :] = P0[:, 0:3] = 0.0  # singular (a zero position variance) is allowed
    f = ErrorStateEKF() if kind == "eskf" else InvariantEKF()
    state = (Rotation.random(random_state=3).as_matrix(), rng.normal(size=3), rng.normal(size=3), np.zeros(3),
             np.zeros(3))
    f.initialize(*state, covariance=P0)
    np.testing.assert_allclose(f.navigation_covariance(), P0, atol=1e-15)
    f.initialize(*state)
    default = f.navigation_covariance()
    for bad, match in ((P0 + np.triu(np.ones((15, 15)), 1) * 1e-3, "symmetric"),
                       (-np.eye(15), "positive semi-definite"), (np.eye(9), "shape"),
                       (np.full((15, 15), np.nan), "non-finite")):
        with pytest.raises(ValueError, match=match):
            f.initialize(*state, covariance=bad)
        np.testing.assert_array_equal(f.navigation_covariance(), default)
