"""Compiled event loop of the legged estimator (``kinodyn.estimation.estimator.LeggedEstimator.process``; the
sequencing its module doc states: IMU gating, trapezoid propagation with gap noise, kinematic updates), for
any registered filter: it works on the filter's compiled state through ``registry.propagate``,
``registry.correct`` and ``registry.navigation_covariance`` (kinodyn.estimation.registry), and numba compiles
it once per filter.

``run`` processes events in order until one needs the Python side (``ESCAPE_*``): initialising (the standing
window, a restart after a gap), a non-finite state (reset), or a joint state whose contact set differs from
the feet in the filter (touchdown, lift-off, unmeasured legs) or whose contacts come from detection. It
returns the index of that event and why; the caller finishes that event and calls ``run`` again from the next.

State arrays (owned by LeggedEstimator, read and written in place): ``clock`` = [filter time, stamp of the
held sample, last IMU interval, nominal period, NIS of the last update, a jump waiting for confirmation
(0/1), since when no foot is in the filter (-inf: feet in it)], ``held`` = [w, a] of the held sample,
``jump`` = the specific force of that jump, ``flags`` = contact
per foot (-1: no contact message yet), ``counters`` in the order of ``estimator.COUNTERS``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.estimation import registry
from kinodyn.estimation.layout import NAV
from kinodyn.estimation.legs import base_output, feet_in_imu, roll_back

if TYPE_CHECKING:
    from kinodyn.estimation.filter import KernelState

IMU, CONTACTS, JOINTS = 0, 1, 2
"""Event kinds."""
NO_RESULT, ESTIMATED, UPDATED = 0, 1, 2
"""``status`` of an event: nothing, an estimate (IMU sample), a kinematic update (joint state)."""
TIME, IMU_STAMP, INTERVAL, PERIOD, NIS, JUMP, IMU_ONLY = 0, 1, 2, 3, 4, 5, 6
"""Slots of ``clock`` (IMU_ONLY: since when the filter has no foot, -inf while it has one)."""
(ACCEL_LIMIT, GYRO_LIMIT, JUMP_LIMIT, MAX_GAP, GAP_ACCEL, GAP_RATE, ENCODER_VARIANCE, GYRO_DENSITY,
 IMU_ONLY_ACCEL) = range(9)
"""Slots of ``settings`` (GAP_*: the gap noise standard deviations; ENCODER_VARIANCE and GYRO_DENSITY: the
squares of the encoder noise and of the gyro noise density; IMU_ONLY_ACCEL: the standard deviation of the
acceleration error while no foot is in contact)."""
(IMU_SAMPLES, IMU_REJECTED, IMU_OUT_OF_ORDER, JOINT_STATES, JOINT_STATES_OUT_OF_ORDER,
 JOINT_STATES_WITHOUT_IMU, UPDATES, UPDATES_FAILED, FEET_REJECTED, FEET_WITHOUT_JOINTS,
 CONTACTS_IGNORED) = range(11)
"""Slots of ``counters`` (estimator.COUNTERS order)."""
NO_PROBLEM, NON_FINITE, ACCEL, GYRO, IMU_ORDER, JUMPED, JOINT_ORDER, NO_IMU, GATED, FAILED = range(10)
"""``problem`` codes of an event (the estimator words them; ``value`` carries the figure they quote)."""
DONE, ESCAPE_IMU, ESCAPE_NON_FINITE, ESCAPE_JOINTS = range(4)
"""``run``'s second result: every event done; the IMU sample at the returned index passed the gates and
needs the initialisation (or a restart after a gap); the state became non-finite after that IMU sample's
propagation; the joint state there is propagated to and needs its contact update in Python."""


@njit(cache=True)
def _norm3(x0: float, x1: float, x2: float) -> float:
    return math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)


@njit(cache=True)
def propagate_to(state: KernelState, clock: np.ndarray, held: np.ndarray, settings: np.ndarray, stamp: float,
                 sample: np.ndarray, with_sample: bool) -> None:
    """Step the filter to ``stamp``: with the held sample, or, ``with_sample``, with the line between the held
    sample and ``sample`` ([w, a] at ``stamp``) at the middle of the step (trapezoid); plus the gap noise of
    the part of the step beyond the nominal period (estimator module doc)."""
    start = clock[TIME]
    if stamp <= start:
        return
    w = held[:3].copy()
    a = held[3:].copy()
    if with_sample:
        weight = (0.5 * (start + stamp) - clock[IMU_STAMP]) / (stamp - clock[IMU_STAMP])
        for i in range(3):
            w[i] = w[i] + weight * (sample[i] - w[i])
            a[i] = a[i] + weight * (sample[3 + i] - a[i])
    s0 = max(start - clock[IMU_STAMP] - clock[PERIOD], 0.0)
    s1 = max(stamp - clock[IMU_STAMP] - clock[PERIOD], 0.0)
    accelerometer = gyroscope = 0.0
    dt = stamp - start
    if s1 > 0.0:
        growth = (s1 * s1 - s0 * s0) / (dt * dt)
        accelerometer = settings[GAP_ACCEL] ** 2 * growth
        gyroscope = settings[GAP_RATE] ** 2 * growth
    registry.propagate(state, w, a, dt, accelerometer, gyroscope)
    P = state.core.P
    since = clock[IMU_ONLY]
    if settings[IMU_ONLY_ACCEL] > 0.0 and since > -math.inf and P.shape[0] == NAV:
        _grow_imu_only(P, settings[IMU_ONLY_ACCEL] ** 2, max(start - since, 0.0), max(stamp - since, 0.0))
    clock[TIME] = stamp


@njit(cache=True)
def _grow_imu_only(P: np.ndarray, variance: float, s0: float, s1: float) -> None:
    """Add to the position and velocity blocks (both filters: rows 0-2 and 3-5, world axes) what an unknown
    acceleration error ``e`` ~ N(0, variance I), constant since the last foot left, adds from ``s0`` to ``s1``
    s after that: its error ``[s^2/2, s] e`` at ``s1`` minus the one at ``s0`` carried by the step's
    transition (``p += v dt``), so that the sum over any cut of the interval is ``variance`` times
    ``[[s^4/4, s^3/2], [s^3/2, s^2]]`` at its end."""
    dt = s1 - s0
    carried_p = 0.5 * s0 * s0 + s0 * dt
    pp = variance * (0.25 * s1 ** 4 - carried_p * carried_p)
    pv = variance * (0.5 * s1 ** 3 - carried_p * s0)
    vv = variance * (s1 * s1 - s0 * s0)
    for i in range(3):
        P[i, i] += pp
        P[i, 3 + i] += pv
        P[3 + i, i] += pv
        P[3 + i, 3 + i] += vv


@njit(cache=True)
def estimate_row(state: KernelState, clock: np.ndarray, held: np.ndarray, settings: np.ndarray,
                 C_BI: np.ndarray,
                 lever: np.ndarray, out: np.ndarray) -> bool:
    """The published base state of the filter's state into ``out`` (85, ``legs.base_output``) from its 15x15
    navigation covariance in the ESKF convention (``registry.navigation_covariance``); False, and ``out``
    untouched, when the state is not finite."""
    C, p, v, biases = state.core.C, state.core.p, state.core.v, state.core.biases
    nav = np.empty((NAV, NAV))
    registry.navigation_covariance(state, nav)
    total = 0.0  # one sum: a NaN or inf anywhere (or an overflow) makes it non-finite
    for i in range(NAV):
        for j in range(NAV):
            total += nav[i, j]
    for i in range(3):
        total += C[i, 0] + C[i, 1] + C[i, 2] + p[i] + v[i] + biases[3 + i]
    if not math.isfinite(total):
        return False
    w = held[:3] - biases[3:]
    base_output(C, p, v, w, nav, C_BI, lever, settings[GYRO_DENSITY] / clock[INTERVAL], out)
    return True


@njit(cache=True)
def _imu_event(state: KernelState, clock: np.ndarray, held: np.ndarray, jump: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
               counters: np.ndarray, settings: np.ndarray, initialized: bool, stamp: float,
               sample: np.ndarray, C_BI: np.ndarray, lever: np.ndarray, out: np.ndarray, status: np.ndarray,
               problem: np.ndarray, value: np.ndarray, i: int) -> int:
    """One IMU sample (estimator module doc: gating, order, jump, then propagation and the estimate); returns
    DONE or the escape it needs; ``out[i]`` holds the estimate when ``status[i]`` is 1."""
    counters[IMU_SAMPLES] += 1
    finite = math.isfinite(stamp)
    for k in range(6):
        finite = finite and math.isfinite(sample[k])
    if not finite:
        counters[IMU_REJECTED] += 1
        problem[i] = NON_FINITE
        return DONE
    accel = _norm3(sample[3], sample[4], sample[5])
    if accel > settings[ACCEL_LIMIT]:
        counters[IMU_REJECTED] += 1
        problem[i], value[i] = ACCEL, accel
        return DONE
    gyro = _norm3(sample[0], sample[1], sample[2])
    if gyro > settings[GYRO_LIMIT]:
        counters[IMU_REJECTED] += 1
        problem[i], value[i] = GYRO, gyro
        return DONE
    if stamp <= clock[IMU_STAMP] or stamp < clock[TIME]:
        counters[IMU_OUT_OF_ORDER] += 1
        problem[i], value[i] = IMU_ORDER, max(clock[IMU_STAMP], clock[TIME])
        return DONE
    # a one-sample spike: a jump from the held sample that does not confirm a previous jump
    size = _norm3(sample[3] - held[3], sample[4] - held[4], sample[5] - held[5])
    if clock[IMU_STAMP] == -math.inf or size <= settings[JUMP_LIMIT]:
        clock[JUMP] = 0.0
    else:
        confirmed = clock[JUMP] != 0.0 and _norm3(sample[3] - jump[0], sample[4] - jump[1],
                                                  sample[5] - jump[2]) <= settings[JUMP_LIMIT]
        if confirmed:
            clock[JUMP] = 0.0
        else:
            clock[JUMP] = 1.0
            jump[:] = sample[3:]
            counters[IMU_REJECTED] += 1
            problem[i], value[i] = JUMPED, size
            return DONE
    if not initialized or (stamp - clock[IMU_STAMP] > settings[MAX_GAP] and clock[IMU_STAMP] > -math.inf):
        return ESCAPE_IMU
    propagate_to(state, clock, held, settings, stamp, sample, True)
    clock[INTERVAL] = stamp - clock[IMU_STAMP]
    clock[IMU_STAMP] = stamp
    held[:] = sample
    if not estimate_row(state, clock, held, settings, C_BI, lever, out[i]):
        return ESCAPE_NON_FINITE
    status[i] = ESTIMATED
    return DONE


@njit(cache=True)
def _update(state: KernelState, fk: np.ndarray, slots: np.ndarray, accepted: np.ndarray) -> float:
    """The filter's kinematic correction of the feet in its state (slot order), measured by ``fk`` rows."""
    K = slots.shape[0]
    positions = np.empty((K, 3))
    covariances = np.empty((K, 3, 3))
    for k in range(K):
        row = fk[slots[k]]
        positions[k] = row[:3]
        for a in range(3):
            for b in range(3):
                covariances[k, a, b] = row[3 + 3 * a + b]
    return registry.correct(state, positions, covariances, accepted, np.empty(K))


@njit(cache=True)
def _feet_to_update(nfeet: int, flags: np.ndarray, positions: np.ndarray, members: np.ndarray,
                    slots: np.ndarray) -> int:
    """The number of feet in contact when they are exactly the filter's (``slots``) and each has its leg's
    joints measured; -1 otherwise (the update is worded in Python)."""
    count = 0
    for f in range(nfeet):
        if flags[f] != 1:
            continue
        for j in range(positions.shape[0]):
            if members[f, j] and not math.isfinite(positions[j]):
                return -1  # a foot in contact without its leg's joints
        count += 1
        found = False
        for k in range(slots.shape[0]):
            found = found or slots[k] == f
        if not found:
            return -1
    return count if count == slots.shape[0] else -1


@njit(cache=True)
def _joint_event(state: KernelState, clock: np.ndarray, held: np.ndarray, flags: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                 counters: np.ndarray, settings: np.ndarray, legs: tuple[np.ndarray, ...], slots: np.ndarray,
                 detection: bool, initialized: bool, stamp: float, positions: np.ndarray, status: np.ndarray,
                 nis_out: np.ndarray, dof_out: np.ndarray, problem: np.ndarray, value: np.ndarray,
                 mask: np.ndarray, i: int) -> int:
    """One joint state: order and IMU checks, propagation to its stamp with the held sample, then the
    kinematic update (rolling feet measured at their fixed point, ``roll_back``) when the feet in contact with
    measured legs are exactly the filter's (else ESCAPE_JOINTS:
    touchdown and lift-off change the state's size, unmeasured feet and detection are worded in Python)."""
    counters[JOINT_STATES] += 1
    if not initialized:
        return DONE
    if stamp < clock[TIME]:
        counters[JOINT_STATES_OUT_OF_ORDER] += 1
        problem[i], value[i] = JOINT_ORDER, clock[TIME]
        return DONE
    if stamp - clock[IMU_STAMP] > settings[MAX_GAP]:
        counters[JOINT_STATES_WITHOUT_IMU] += 1
        problem[i], value[i] = NO_IMU, stamp - clock[IMU_STAMP]
        return DONE
    propagate_to(state, clock, held, settings, stamp, held, False)
    if detection:
        return ESCAPE_JOINTS
    if flags[0] < 0:  # no contact message yet
        return DONE
    ki, kf, q, frames, C_IB, r_BI, J, members, fk, radii, touchdown = legs
    count = _feet_to_update(frames.shape[0], flags, positions, members, slots)
    if count < 0:
        return ESCAPE_JOINTS
    counters[UPDATES] += 1
    status[i] = UPDATED
    if count == 0:
        clock[NIS] = math.nan
        nis_out[i], dof_out[i] = math.nan, 0
        return DONE
    first = q.shape[0] - positions.shape[0]
    for j in range(positions.shape[0]):  # a leg not in contact may be unmeasured (LegKinematics.measure)
        q[first + j] = positions[j] if math.isfinite(positions[j]) else 0.0
    feet_in_imu(ki, kf, q, frames, C_IB, r_BI, J.shape[1] - positions.shape[0], settings[ENCODER_VARIANCE], J,
                fk)
    roll_back(state.core.C, fk, slots, radii, touchdown)  # rolling feet (LegKinematics.measure's stance feet)
    _apply_update(state, fk, slots, count, clock, counters, status, nis_out, dof_out, problem, mask, i)
    return DONE


@njit(cache=True)
def _apply_update(state: KernelState, fk: np.ndarray, slots: np.ndarray, count: int, clock: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                  counters: np.ndarray, status: np.ndarray, nis_out: np.ndarray, dof_out: np.ndarray,
                  problem: np.ndarray, mask: np.ndarray, i: int) -> None:
    """The kinematic update of the ``count`` feet in ``slots``, measured by ``fk``: its NIS and degrees of
    freedom into row ``i``, the rejected feet into ``mask[i]``; a failed update is counted, not applied."""
    accepted = np.zeros(count, dtype=np.bool_)
    try:
        nis = _update(state, fk, slots, accepted)
    except Exception:  # noqa: BLE001  (compiled code catches only Exception; the failure is counted and worded)
        counters[UPDATES] -= 1
        status[i] = NO_RESULT
        counters[UPDATES_FAILED] += 1
        problem[i] = FAILED
        return
    used = 0
    for k in range(count):
        if accepted[k]:
            used += 1
        else:
            mask[i] |= 1 << slots[k]
    if used < count:
        counters[FEET_REJECTED] += count - used
        problem[i] = GATED
    clock[NIS] = nis
    nis_out[i], dof_out[i] = nis, 3 * used


@njit(cache=True)
def run(state: KernelState, clock: np.ndarray, held: np.ndarray, jump: np.ndarray, flags: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
        counters: np.ndarray, settings: np.ndarray, legs: tuple[np.ndarray, ...], C_BI: np.ndarray,
        lever: np.ndarray, slots: np.ndarray, detection: bool, initialized: bool, kinds: np.ndarray,
        stamps: np.ndarray, imu: np.ndarray, contacts: np.ndarray, joints: np.ndarray, out: np.ndarray,
        status: np.ndarray, nis_out: np.ndarray, dof_out: np.ndarray, problem: np.ndarray, value: np.ndarray,
        mask: np.ndarray, start: int) -> tuple[int, int]:
    """Events ``start..`` (``kinds``, ``stamps`` in s, ``imu`` rows [w, a], ``contacts`` rows of -1/0/1 per
    foot, ``joints`` rows of the joint positions) until one needs Python: ``(index, ESCAPE_*)``, or
    ``(len, DONE)``. Per event: ``status`` 1 with the estimate in ``out`` (IMU), 2 with ``nis_out`` and
    ``dof_out`` of a kinematic update (joint state); ``problem``, ``value`` and ``mask`` (rejected feet, bits
    by foot index) what went wrong."""
    for i in range(start, kinds.shape[0]):
        kind_i = kinds[i]
        if kind_i == IMU:
            escape = _imu_event(state, clock, held, jump, counters, settings, initialized, stamps[i], imu[i],
                                C_BI, lever, out, status, problem, value, i)
        elif kind_i == CONTACTS:
            escape = DONE
            if detection:
                counters[CONTACTS_IGNORED] += 1
            else:
                row = contacts[i]
                if flags[0] < 0:
                    flags[:] = 0
                for f in range(flags.shape[0]):
                    if row[f] >= 0:
                        flags[f] = row[f]
        else:
            escape = _joint_event(state, clock, held, flags, counters, settings, legs, slots, detection,
                                  initialized, stamps[i], joints[i], status, nis_out, dof_out, problem, value,
                                  mask, i)
        if escape != DONE:
            return i, escape
    return kinds.shape[0], DONE
