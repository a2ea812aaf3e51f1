"""Kinetic and potential energy (Robot Dynamics lecture notes (ETH), §3.4.2-3.4.3, (3.28)-(3.34); Modern
Robotics, §8.4, (8.55))."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy import ndarray

from kinodyn.dynamics.bodies import velocities, world_bodies
from kinodyn.inputs import F64, vector
from kinodyn.kernel import IN1, KF, KI, Kernel
from kinodyn.kernel_data import unpack
from kinodyn.spatial.compiled import dot6, inertia_times

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.model import Model


@njit(cache=True)
def kinetic_energy_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray) -> float:
    """``T = 1/2 sum_i V_i^T I_i V_i`` over the moving bodies (Modern Robotics, (8.55); Robot Dynamics lecture
    notes (ETH), (3.28))."""
    md = unpack(ki, kf)
    W = world_bodies(md, q, np.empty(0))
    V = np.empty((md.nbodies, 6))
    velocities(md, W, v, V)
    momentum = np.empty(6)
    T = 0.0
    for i in range(1, md.nbodies):
        inertia_times(md.mass[i], W.h[i], W.inertia[i], V[i], momentum)
        T += 0.5 * dot6(V[i], momentum)
    return T


@njit(cache=True)
def potential_energy_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray) -> float:
    """``U = -sum_i m_i g^T c_i`` over the moving bodies (Robot Dynamics lecture notes (ETH),
    (3.32)-(3.33))."""
    md = unpack(ki, kf)
    W = world_bodies(md, q, np.empty(0))
    U = 0.0
    for i in range(1, md.nbodies):
        for k in range(3):
            U -= md.gravity[k] * W.h[i, k]
    return U


_KINETIC_ENERGY = Kernel(kinetic_energy_kernel, KI, KF, IN1, IN1)
_POTENTIAL_ENERGY = Kernel(potential_energy_kernel, KI, KF, IN1)


def kinetic_energy(model: Model, q: ArrayLike, v: ArrayLike) -> float:
    """``T = 1/2 v^T M(q) v`` [J], summed body by body (Robot Dynamics lecture notes (ETH), (3.28)-(3.31))."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != model.v_shape:
        v = vector(v, model.nv, "v")
    ki, kf = model.kernel_data
    energy: float = _KINETIC_ENERGY.call(ki, kf, q, v)
    return energy


def potential_energy(model: Model, q: ArrayLike) -> float:
    """``U = -sum_i m_i g^T c_i`` [J] over the moving bodies, zero at the world origin
    (Robot Dynamics lecture notes (ETH), (3.32)-(3.33))."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    ki, kf = model.kernel_data
    energy: float = _POTENTIAL_ENERGY.call(ki, kf, q)
    return energy
