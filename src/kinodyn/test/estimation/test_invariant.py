"""The right-invariant EKF (kinodyn.estimation.invariant; Hartley et al. IJRR 2020).

Second sources: scipy's matrix exponential (SE_K(3) Exp/Log), the closed-form log-linear error of Hartley
§3.2 for a finite error, numerical differentiation of the discrete step and of the measurement, sampling
(navigation covariance map, process noise, Monte-Carlo NEES/NIS), and the ESKF on the same data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.linalg
from kinodyn.estimation import FootMeasurement, InvariantEKF, LeggedFilter, NoiseParameters
from kinodyn.estimation.consistency import chi2_bounds
from kinodyn.estimation.eskf import ErrorStateEKF
from kinodyn.estimation.invariant import sek3_exp, sek3_log
from kinodyn.spatial.lie import so3_log
from kinodyn.spatial.rotations import rotvec_to_matrix, skew

G = np.array([0.0, 0.0, -9.81])
FEET = {
    "lf": (0.3, 0.2, -0.45),
    "rf": (0.3, -0.2, -0.45),
    "lh": (-0.3, 0.2, -0.45),
    "rh": (-0.3, -0.2, -0.45),
}
UP = np.array([0.0, 0.0, 9.81])
I3 = np.eye(3)
QUIET = NoiseParameters(
    accelerometer_noise_density=0.0,
    gyroscope_noise_density=0.0,
    accelerometer_random_walk=0.0,
    gyroscope_random_walk=0.0,
    foot_random_walk=0.0,
)


@dataclass
class Truth:
    """A true state in the filter's layout: C, p, v, biases [b_a, b_g], feet (K, 3) in the filter's order."""

    C: np.ndarray
    p: np.ndarray
    v: np.ndarray
    biases: np.ndarray
    feet: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))

    def step(self, omega: np.ndarray, specific_force: np.ndarray, dt: float) -> None:
        """The exact motion the filter's discrete model describes (Robot Dynamics Essential, (110)) with true
        inputs."""
        a = self.C @ specific_force + G
        self.p = self.p + self.v * dt + 0.5 * a * dt * dt
        self.v = self.v + a * dt
        self.C = self.C @ rotvec_to_matrix(omega * dt)

    def measure(self, index: int) -> np.ndarray:
        """Noise-free foot position in the IMU frame."""
        return self.C.T @ (self.feet[index] - self.p)


def perturbed(ekf: InvariantEKF, xi: np.ndarray) -> Truth:
    """``X_true = Exp(xi_nav) X``, ``b_true = b + db`` for an error ``xi`` in the filter's layout."""
    columns = np.vstack([xi[3:6], xi[0:3], xi[15:].reshape(-1, 3)])
    R, translations = sek3_exp(xi[6:9], columns)
    feet = np.array([ekf.foot_position(name) for name in ekf.feet]).reshape(-1, 3)
    return Truth(
        C=R @ ekf.rotation,
        p=R @ ekf.position + translations[1],
        v=R @ ekf.velocity + translations[0],
        biases=np.concatenate([ekf.accelerometer_bias, ekf.gyroscope_bias]) + xi[9:15],
        feet=feet @ R.T + translations[2:],
    )


def invariant_error(truth: Truth, ekf: InvariantEKF) -> np.ndarray:
    """``Log(X_true X^-1)`` and the bias errors, in the filter's layout."""
    R_eta = truth.C @ ekf.rotation.T
    feet = np.array([ekf.foot_position(name) for name in ekf.feet]).reshape(-1, 3)
    columns = np.vstack(
        [truth.p - R_eta @ ekf.position, truth.v - R_eta @ ekf.velocity, truth.feet - feet @ R_eta.T]
    )
    theta, cols = sek3_log(R_eta, columns)
    biases = truth.biases - np.concatenate([ekf.accelerometer_bias, ekf.gyroscope_bias])
    return np.concatenate([cols[0], cols[1], theta, biases, cols[2:].ravel()])


def filter_at(rng: np.random.Generator, noise: NoiseParameters = QUIET, feet: int = 4) -> InvariantEKF:
    """A filter at a random state (far from the origin, moving, biased) with ``feet`` feet appended."""
    ekf = InvariantEKF(noise)
    ekf.initialize(
        rotvec_to_matrix(rng.normal(size=3)),
        rng.normal(scale=3.0, size=3),
        rng.normal(size=3),
        rng.normal(scale=0.1, size=3),
        rng.normal(scale=0.01, size=3),
    )
    names = list(FEET)[:feet]
    ekf.update_contacts([FootMeasurement(name, np.array(FEET[name]), 1e-6 * np.eye(3)) for name in names])
    return ekf


def twin(truth: Truth, names: list[str], noise: NoiseParameters = QUIET) -> InvariantEKF:
    """A filter whose nominal state is ``truth`` (used as an exact integrator of the nominal model)."""
    ekf = InvariantEKF(noise)
    ekf.initialize(truth.C, truth.p, truth.v, truth.biases[:3], truth.biases[3:])
    ekf.update_contacts([FootMeasurement(name, truth.measure(i), np.eye(3)) for i, name in enumerate(names)])
    return ekf


def test_sek3_exp_and_log_match_the_matrix_exponential() -> None:
    rng = np.random.default_rng(1)
    for angle in (1e-9, 1e-3, 0.7, 2.5):
        theta = angle * rng.normal(size=3) / np.sqrt(3.0)
        columns = rng.normal(size=(4, 3))
        algebra = np.zeros((7, 7))
        algebra[:3, :3] = skew(theta)
        algebra[:3, 3:] = columns.T
        group = scipy.linalg.expm(algebra)
        R, translations = sek3_exp(theta, columns)
        np.testing.assert_allclose(R, group[:3, :3], atol=1e-13)
        np.testing.assert_allclose(translations, group[:3, 3:].T, atol=1e-12)
        theta_back, columns_back = sek3_log(R, translations)
        np.testing.assert_allclose(theta_back, theta, atol=1e-12)
        np.testing.assert_allclose(columns_back, columns, atol=1e-11)


def test_error_is_log_linear_for_a_finite_error() -> None:
    """Hartley §3.2, Theorem 2: with exact biases and no noise the error obeys ``xi(t) = expm(A t) xi(0)``
    exactly, for any size of error and any IMU input; here A = [[0, I, 1/2 g^ t], ...] in closed form."""
    rng = np.random.default_rng(2)
    ekf = filter_at(rng)
    xi0 = np.concatenate([rng.normal(scale=2.0, size=3), rng.normal(size=3), [0.5, -0.4, 0.9], np.zeros(6)])
    xi0 = np.concatenate([xi0, rng.normal(scale=0.5, size=12)])
    truth = perturbed(ekf, xi0)
    true_filter = twin(truth, list(ekf.feet))
    dt, steps = 0.004, 500
    for _ in range(steps):
        omega_m, accel_m = rng.normal(scale=2.0, size=3), rng.normal(scale=5.0, size=3) + UP
        ekf.propagate(omega_m, accel_m, dt)
        true_filter.propagate(omega_m, accel_m, dt)
    t = dt * steps
    truth = Truth(true_filter.rotation, true_filter.position, true_filter.velocity, xi0[9:15], np.array(
        [true_filter.foot_position(name) for name in true_filter.feet]))
    truth.biases = np.concatenate([ekf.accelerometer_bias, ekf.gyroscope_bias])
    xi = invariant_error(truth, ekf)
    theta, v0, p0 = xi0[6:9], xi0[3:6], xi0[0:3]
    expected = xi0.copy()
    expected[3:6] = v0 + t * skew(G) @ theta
    expected[0:3] = p0 + t * v0 + 0.5 * t * t * skew(G) @ theta
    np.testing.assert_allclose(xi, expected, atol=1e-9)
    # the error of a linearised (non-invariant) parametrisation is not preserved: the test can fail
    assert np.linalg.norm(truth.p - ekf.position - expected[0:3]) > 0.1


def _numerical_transition(ekf: InvariantEKF, omega_m: np.ndarray, accel_m: np.ndarray, dt: float,
                          eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``xi+`` with respect to ``xi`` (biases included) through one discrete step."""
    n = ekf.covariance.shape[0]
    names = list(ekf.feet)
    reference = twin(perturbed(ekf, np.zeros(n)), names)
    reference.propagate(omega_m, accel_m, dt)
    columns = []
    for i in range(n):
        outputs = []
        for sign in (1.0, -1.0):
            xi = np.zeros(n)
            xi[i] = sign * eps
            true_filter = twin(perturbed(ekf, xi), names)
            true_filter.propagate(omega_m, accel_m, dt)
            truth = Truth(
                true_filter.rotation, true_filter.position, true_filter.velocity,
                np.concatenate([true_filter.accelerometer_bias, true_filter.gyroscope_bias]),
                np.array([true_filter.foot_position(name) for name in names]),
            )
            outputs.append(invariant_error(truth, reference))
        columns.append((outputs[0] - outputs[1]) / (2.0 * eps))
    return np.array(columns).T


def test_covariance_transition_is_the_jacobian_of_the_discrete_step() -> None:
    rng = np.random.default_rng(3)
    ekf = filter_at(rng)
    for _ in range(3):  # correlations in P
        ekf.propagate(rng.normal(size=3), rng.normal(size=3) + UP, 0.01)
    omega_m, accel_m, dt = np.array([1.5, -2.0, 0.7]), np.array([3.0, -1.0, 12.0]), 0.02
    Phi = _numerical_transition(ekf, omega_m, accel_m, dt)
    P0 = ekf.covariance
    ekf.propagate(omega_m, accel_m, dt)
    np.testing.assert_allclose(ekf.covariance, Phi @ P0 @ Phi.T, atol=1e-8 * np.abs(P0).max())


def test_process_noise_matches_sampled_imu_noise() -> None:
    """Q (white IMU noise held over the step, random walks) against the sampled spread of one step."""
    rng = np.random.default_rng(4)
    noise = NoiseParameters(
        accelerometer_noise_density=0.05, gyroscope_noise_density=0.02, accelerometer_random_walk=0.0,
        gyroscope_random_walk=0.0, foot_random_walk=0.0,
    )
    ekf = filter_at(rng, noise, feet=2)
    omega_m, accel_m, dt = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 9.0]), 0.01
    P0 = ekf.covariance
    names = list(ekf.feet)
    truth0 = perturbed(ekf, np.zeros(P0.shape[0]))
    Phi = _numerical_transition(ekf, omega_m, accel_m, dt)
    ekf.propagate(omega_m, accel_m, dt)
    Q = ekf.covariance - Phi @ P0 @ Phi.T
    samples = []
    for _ in range(20000):
        true_filter = twin(truth0, names)
        n_g = rng.normal(scale=noise.gyroscope_noise_density / np.sqrt(dt), size=3)
        n_a = rng.normal(scale=noise.accelerometer_noise_density / np.sqrt(dt), size=3)
        true_filter.propagate(omega_m - n_g, accel_m - n_a, dt)
        truth = Truth(
            true_filter.rotation, true_filter.position, true_filter.velocity, truth0.biases,
            np.array([true_filter.foot_position(name) for name in names]),
        )
        samples.append(invariant_error(truth, ekf))
    sampled = np.cov(np.array(samples).T)
    # white IMU noise does not move the biases
    np.testing.assert_allclose(Q[9:15], 0.0, atol=1e-10)  # (finite-difference Phi) vs Q's v block 2.5e-5
    # Q is rank 6 (six noise channels): compare as correlations scaled by the predicted deviations
    moved = np.r_[0:9, 15:Q.shape[0]]
    scale = np.sqrt(np.outer(np.diag(Q)[moved], np.diag(Q)[moved]))
    block = np.ix_(moved, moved)
    np.testing.assert_allclose(sampled[block] / scale, Q[block] / scale, atol=0.04)
    assert np.abs(Q[3:6, 6:9]).max() > 0.3 * np.sqrt(Q[3, 3] * Q[6, 6])  # gyro noise couples v and theta


def test_measurement_jacobian_against_numerical_differentiation() -> None:
    """The update applies ``K = P H^T S^-1`` with H = d(nu)/d(xi): H from central differences of the
    innovation, the filter's NIS, state and covariance after the update recomputed with it."""
    rng = np.random.default_rng(5)
    ekf = filter_at(rng, NoiseParameters())
    for _ in range(5):
        ekf.propagate(rng.normal(scale=0.3, size=3), rng.normal(scale=0.3, size=3) + UP, 0.01)
    names = list(ekf.feet)
    n = ekf.covariance.shape[0]
    truth = perturbed(ekf, rng.multivariate_normal(np.zeros(n), ekf.covariance))
    measurements = [truth.measure(i) for i in range(len(names))]
    covariance = 4e-6 * np.eye(3)

    estimate = perturbed(ekf, np.zeros(n))

    def innovation(state: Truth) -> np.ndarray:
        # nu = C y + p - d at the estimate for the noise-free measurements of the true ``state``
        return np.concatenate(
            [estimate.C @ state.measure(i) + estimate.p - estimate.feet[i] for i in range(len(names))]
        )

    eps = 1e-6
    H = np.zeros((3 * len(names), n))
    for i in range(n):
        xi = np.zeros(n)
        xi[i] = eps
        H[:, i] = (innovation(perturbed(ekf, xi)) - innovation(perturbed(ekf, -xi))) / (2.0 * eps)
    nu = innovation(truth)
    P = ekf.covariance
    C = ekf.rotation
    N = np.kron(np.eye(len(names)), C @ covariance @ C.T)
    S = H @ P @ H.T + N
    K = P @ H.T @ np.linalg.inv(S)
    delta = K @ nu
    expected_state = perturbed(ekf, delta)
    report = ekf.update_contacts(
        [FootMeasurement(name, y, covariance) for name, y in zip(names, measurements, strict=True)]
    )
    assert report.used == tuple(names)
    assert report.dof == 12
    assert report.nis == pytest.approx(nu @ np.linalg.solve(S, nu), rel=1e-9)
    np.testing.assert_allclose(ekf.rotation, expected_state.C, atol=1e-12)
    np.testing.assert_allclose(ekf.position, expected_state.p, atol=1e-12)
    np.testing.assert_allclose(ekf.velocity, expected_state.v, atol=1e-12)
    np.testing.assert_allclose(ekf.gyroscope_bias, expected_state.biases[3:], atol=1e-12)
    np.testing.assert_allclose(ekf.covariance, (np.eye(n) - K @ H) @ P, atol=1e-9 * np.abs(P).max())
    # the innovation does not depend on the rotation error: H's rotation columns are zero
    np.testing.assert_allclose(H[:, 6:9], 0.0, atol=1e-8)


def test_navigation_covariance_matches_sampled_eskf_errors() -> None:
    """First-order map to the ESKF convention vs sampling: draw invariant errors from P, convert them to
    ``[dp, dv, dtheta(local), db]`` exactly, compare the sample covariance with navigation_covariance()."""
    rng = np.random.default_rng(6)
    initial = NoiseParameters(initial_orientation=2e-3, initial_position=1e-2, initial_velocity=2e-2)
    ekf = filter_at(rng, initial)
    for _ in range(20):
        ekf.propagate(rng.normal(scale=0.3, size=3), rng.normal(scale=0.3, size=3) + UP, 0.01)
    assert np.linalg.norm(ekf.position) > 2.0  # the [p]x xi_theta term matters
    P = ekf.covariance
    samples = []
    for xi in rng.multivariate_normal(np.zeros(P.shape[0]), P, size=40000):
        truth = perturbed(ekf, xi)
        samples.append(np.concatenate([
            truth.p - ekf.position,
            truth.v - ekf.velocity,
            so3_log(ekf.rotation.T @ truth.C),
            truth.biases - np.concatenate([ekf.accelerometer_bias, ekf.gyroscope_bias]),
        ]))
    sampled = np.cov(np.array(samples).T)
    mapped = ekf.navigation_covariance()
    L = np.linalg.cholesky(mapped)
    whitened = np.linalg.solve(L, np.linalg.solve(L, sampled).T)
    np.testing.assert_allclose(whitened, np.eye(15), atol=0.04)
    # the untransformed block would not pass: the map is needed
    L_raw = np.linalg.cholesky(P[:15, :15])
    raw = np.linalg.solve(L_raw, np.linalg.solve(L_raw, sampled).T)
    assert np.abs(raw - np.eye(15)).max() > 0.5


def test_initial_covariance_is_the_eskf_one() -> None:
    ekf = filter_at(np.random.default_rng(7), NoiseParameters(), feet=0)
    assert isinstance(ekf, LeggedFilter)
    n = ekf.noise
    std = np.repeat([n.initial_position, n.initial_velocity, n.initial_orientation,
                     n.initial_accelerometer_bias, n.initial_gyroscope_bias], 3)
    np.testing.assert_allclose(ekf.navigation_covariance(), np.diag(std**2), atol=1e-15)


def test_touchdown_adds_no_information_and_lift_off_marginalises() -> None:
    rng = np.random.default_rng(8)
    ekf = filter_at(rng, NoiseParameters(), feet=2)
    ekf.propagate(np.zeros(3), np.array([0.0, 0.0, 9.81]), 0.01)
    before = ekf.covariance
    state = (ekf.position, ekf.velocity, ekf.rotation)
    lf, rf = ekf.foot_position("lf"), ekf.foot_position("rf")
    y = {name: ekf.rotation.T @ (ekf.foot_position(name) - ekf.position) for name in ekf.feet}
    # lf lifts off, rf is measured exactly where it is (zero innovation), lh touches down
    report = ekf.update_contacts([
        FootMeasurement("rf", y["rf"], 1e-6 * np.eye(3)),
        FootMeasurement("lh", np.array(FEET["lh"]), 1e-6 * np.eye(3)),
    ])
    assert report.removed == ("lf",)
    assert report.added == ("lh",)
    assert report.used == ("rf",)
    assert ekf.feet == ("rf", "lh")
    np.testing.assert_allclose(ekf.foot_position("rf"), rf, atol=1e-12)
    assert not np.allclose(lf, ekf.foot_position("rf"))
    for value, expected in zip((ekf.position, ekf.velocity, ekf.rotation), state, strict=True):
        np.testing.assert_allclose(value, expected, atol=1e-12)
    np.testing.assert_allclose(ekf.foot_position("lh"), ekf.position + ekf.rotation @ FEET["lh"], atol=1e-12)
    assert np.trace(ekf.covariance[:15, :15]) < np.trace(before[:15, :15])  # rf's correction informed
    # lift-off of all: the navigation block is kept as it is (marginalisation)
    navigation = ekf.covariance[:15, :15]
    report = ekf.update_contacts([])
    assert report.removed == ("rf", "lh")
    assert ekf.feet == ()
    assert np.isnan(report.nis)
    np.testing.assert_array_equal(ekf.covariance, navigation)
    # touchdown alone: the navigation block is unchanged, the foot's error is xi_p plus the measurement's
    sigma = np.diag([1e-4, 2e-4, 3e-4])
    report = ekf.update_contacts([FootMeasurement("lh", np.array(FEET["lh"]), sigma)])
    assert report.added == ("lh",)
    assert report.used == ()
    assert report.dof == 0
    P = ekf.covariance
    np.testing.assert_array_equal(P[:15, :15], navigation)
    np.testing.assert_allclose(P[15:, :15], navigation[0:3, :], atol=0.0)
    C = ekf.rotation
    np.testing.assert_allclose(P[15:, 15:], navigation[0:3, 0:3] + C @ sigma @ C.T, atol=1e-18)


def test_an_outlier_foot_is_gated_and_the_others_used() -> None:
    rng = np.random.default_rng(9)
    ekf = filter_at(rng, NoiseParameters())
    y = {name: ekf.rotation.T @ (ekf.foot_position(name) - ekf.position) for name in ekf.feet}
    y["lh"] = y["lh"] + [0.0, 0.0, 0.5]
    report = ekf.update_contacts([FootMeasurement(name, y[name], 1e-6 * np.eye(3)) for name in ekf.feet])
    assert report.rejected == ("lh",)
    assert report.used == ("lf", "rf", "rh")
    assert report.dof == 9
    assert report.nis == pytest.approx(0.0, abs=1e-12)


def test_bad_inputs_raise_with_a_message() -> None:
    ekf = InvariantEKF()
    with pytest.raises(RuntimeError, match="initialize"):
        ekf.propagate(np.zeros(3), np.zeros(3), 0.01)
    ekf.initialize(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="angular_velocity"):
        ekf.propagate([np.nan, 0.0, 0.0], np.zeros(3), 0.01)
    with pytest.raises(ValueError, match="dt"):
        ekf.propagate(np.zeros(3), np.zeros(3), 0.0)
    foot = FootMeasurement("lf", np.array(FEET["lf"]), np.eye(3))
    with pytest.raises(ValueError, match="duplicate"):
        ekf.update_contacts([foot, foot])
    with pytest.raises(KeyError, match="lf"):
        ekf.foot_position("lf")
    # an exact foot (zero covariance, no slip) gives a singular innovation covariance: refused, state kept
    exact = FootMeasurement("lf", np.array(FEET["lf"]), np.zeros((3, 3)))
    quiet = InvariantEKF(QUIET)
    quiet.initialize(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    quiet.update_contacts([exact])
    state = (quiet.position, quiet.covariance)
    with pytest.raises(ValueError, match="not positive definite"):
        quiet.update_contacts([exact])
    np.testing.assert_array_equal(quiet.position, state[0])
    np.testing.assert_array_equal(quiet.covariance, state[1])


def _standing_imu(rng: np.random.Generator, noise: NoiseParameters, truth: Truth,
                  dt: float) -> tuple[np.ndarray, np.ndarray]:
    n_g = rng.normal(scale=noise.gyroscope_noise_density / np.sqrt(dt), size=3)
    n_a = rng.normal(scale=noise.accelerometer_noise_density / np.sqrt(dt), size=3)
    return truth.biases[3:] + n_g, truth.C.T @ -G + truth.biases[:3] + n_a


def test_a_standing_robot_keeps_its_pose() -> None:
    rng = np.random.default_rng(10)
    noise = NoiseParameters()
    C = rotvec_to_matrix([0.05, -0.03, 0.0])
    biases = np.array([0.02, -0.01, 0.03, 1e-3, -2e-3, 5e-4])
    truth = Truth(C, np.array([0.0, 0.0, 0.45]), np.zeros(3), biases)
    truth.feet = np.array([truth.p + C @ np.array(xyz) for xyz in FEET.values()])
    ekf = InvariantEKF(noise)
    ekf.initialize(C, truth.p, np.zeros(3), np.zeros(3), truth.biases[3:])
    dt, encoder = 0.0025, 1e-3 * 0.3
    for _ in range(int(10.0 / dt)):
        ekf.propagate(*_standing_imu(rng, noise, truth, dt), dt)
        ekf.update_contacts([
            FootMeasurement(name, truth.measure(i) + rng.normal(scale=encoder, size=3), encoder**2 * I3)
            for i, name in enumerate(FEET)
        ])
    assert np.linalg.norm(ekf.position - truth.p) < 2e-3
    assert np.linalg.norm(ekf.velocity) < 2e-3
    # standing, a horizontal accelerometer bias is indistinguishable from tilt (|b_a,xy| / g = 2.3 mrad)
    assert np.linalg.norm(so3_log(ekf.rotation.T @ truth.C)) < 3e-3
    assert ekf.nees(truth.p, truth.v, truth.C) < 30.0


def _walk_inputs(t: float) -> tuple[np.ndarray, np.ndarray]:
    """A gentle sway: body rates and world acceleration (sinusoids), true inputs of the motion."""
    omega = np.array([0.3 * np.sin(2.0 * t), 0.2 * np.cos(3.0 * t), 0.4 * np.sin(1.3 * t)])
    accel_world = np.array([0.8 * np.sin(2.5 * t), 0.5 * np.cos(1.7 * t), 0.6 * np.sin(4.0 * t)])
    return omega, accel_world


def _trot(rng: np.random.Generator, noise: NoiseParameters, filter_class: type[InvariantEKF | ErrorStateEKF],
          dt: float = 0.005, duration: float = 3.0, encoder: float = 2e-3,
          ) -> tuple[np.ndarray, np.ndarray, InvariantEKF | ErrorStateEKF, Truth]:
    """One Monte-Carlo run: truth from the discrete model with the sampled initial error, noisy IMU, feet
    in diagonal pairs (0.25 s each) slipping by the foot random walk; returns per-step NEES, (NIS, dof) of
    the updates, the filter and the truth."""
    C0 = rotvec_to_matrix([0.02, -0.04, 0.3])
    truth = Truth(C0, np.array([0.0, 0.0, 0.45]), np.array([0.2, 0.0, 0.0]), np.zeros(6))
    ekf = filter_class(noise)
    ekf.initialize(C0, truth.p, truth.v, np.zeros(3), np.zeros(3))
    # the truth starts at a draw of the initial distribution (ESKF convention, as both filters start)
    e = np.linalg.cholesky(ekf.navigation_covariance()) @ rng.normal(size=15)
    truth = Truth(C0 @ rotvec_to_matrix(e[6:9]), truth.p + e[0:3], truth.v + e[3:6], e[9:15])
    gyro_std = noise.gyroscope_noise_density / np.sqrt(dt)
    accel_std = noise.accelerometer_noise_density / np.sqrt(dt)
    walk_std = np.repeat([noise.accelerometer_random_walk, noise.gyroscope_random_walk], 3) * np.sqrt(dt)
    slip_std = noise.foot_random_walk * np.sqrt(dt)
    world_feet: dict[str, np.ndarray] = {}
    nees, nis = [], []
    for k in range(int(duration / dt)):
        t = k * dt
        omega, accel_world = _walk_inputs(t)
        specific_force = truth.C.T @ (accel_world - G)
        omega_m = omega + truth.biases[3:] + rng.normal(scale=gyro_std, size=3)
        accel_m = specific_force + truth.biases[:3] + rng.normal(scale=accel_std, size=3)
        truth.step(omega, specific_force, dt)
        truth.biases = truth.biases + walk_std * rng.normal(size=6)
        ekf.propagate(omega_m, accel_m, dt)
        for name, foot in world_feet.items():  # stance feet slip by the random walk the filter assumes
            world_feet[name] = foot + slip_std * rng.normal(size=3)
        pair = ("lf", "rh") if int(t / 0.25) % 2 == 0 else ("rf", "lh")
        for name, xyz in FEET.items():
            if name not in pair:
                world_feet.pop(name, None)
            elif name not in world_feet:
                world_feet[name] = truth.p + truth.C @ np.array(xyz)
        measurements = [
            FootMeasurement(
                name,
                truth.C.T @ (world_feet[name] - truth.p) + rng.normal(scale=encoder, size=3),
                encoder**2 * np.eye(3),
            )
            for name in pair
        ]
        report = ekf.update_contacts(measurements)
        if report.dof:
            nis.append((report.nis, report.dof))
        nees.append(ekf.nees(truth.p, truth.v, truth.C))
    return np.array(nees), np.array(nis), ekf, truth


def test_monte_carlo_nees_and_nis_are_consistent() -> None:
    """Independent runs: the mean NEES over runs at 1, 2 and 3 s is chi-square(9 runs)/runs (99 % bounds
    each, as the three are checked together); the NIS of a consistent filter is white, so the mean over
    every update is checked against its 95 % bounds."""
    noise = NoiseParameters(accelerometer_noise_density=0.02, gyroscope_noise_density=2e-3,
                            accelerometer_random_walk=1e-3, gyroscope_random_walk=1e-4)
    runs = 25
    rng = np.random.default_rng(11)
    results = [_trot(rng, noise, InvariantEKF) for _ in range(runs)]
    nees = np.array([r[0] for r in results])  # runs x steps (200 Hz)
    low, high = chi2_bounds(9, runs, probability=0.99)
    for step in (199, 399, 599):
        assert low < nees[:, step].mean() < high, (step, nees[:, step].mean(), low, high)
    nis = np.concatenate([r[1] for r in results])
    # the sum of independent chi-square(dof_i) is chi-square(sum dof_i): bounds of the NIS per dof
    dof = int(nis[:, 1].sum())
    low, high = chi2_bounds(1, dof)
    assert low < nis[:, 0].sum() / dof < high


def test_agrees_with_the_eskf_on_a_gentle_walk() -> None:
    noise = NoiseParameters(accelerometer_noise_density=0.02, gyroscope_noise_density=2e-3)
    invariant = _trot(np.random.default_rng(12), noise, InvariantEKF, duration=4.0)
    eskf = _trot(np.random.default_rng(12), noise, ErrorStateEKF, duration=4.0)
    ekf_i, ekf_e, truth = invariant[2], eskf[2], invariant[3]
    sigma = np.sqrt(np.diag(ekf_e.navigation_covariance()))
    assert np.all(np.abs(ekf_i.position - ekf_e.position) < 0.1 * sigma[0:3])
    assert np.all(np.abs(ekf_i.velocity - ekf_e.velocity) < 0.1 * sigma[3:6])
    assert np.all(np.abs(so3_log(ekf_e.rotation.T @ ekf_i.rotation)) < 0.1 * sigma[6:9])
    # the same uncertainty to within 20 % (they linearise differently: the invariant one does not depend
    # on the estimate for its bias-free part, so its unobservable yaw and x-y grow a little more)
    np.testing.assert_allclose(np.sqrt(np.diag(ekf_i.navigation_covariance()))[:9], sigma[:9], rtol=0.2)
    # both track the truth
    assert np.linalg.norm(ekf_i.position - truth.p) < 0.05
