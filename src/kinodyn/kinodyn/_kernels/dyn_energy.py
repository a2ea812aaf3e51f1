"""Kinetic and potential energy (Robot Dynamics lecture notes (ETH), §3.4.2-3.4.3, (3.28)-(3.34); Modern
Robotics, §8.4, (8.55))."""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn._kernels.common import unpack
from kinodyn._kernels.dyn_crba import dot6
from kinodyn._kernels.dyn_rnea import velocities
from kinodyn._kernels.dyn_world import inertia_times, world_bodies


@njit(cache=True)
def kinetic_energy(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray) -> float:
    """``T = 1/2 sum_i V_i^T I_i V_i`` over the moving bodies (Modern Robotics, (8.55); Robot Dynamics lecture
    notes (ETH), (3.28))."""
    md = unpack(ki, kf)
    W = world_bodies(md, q)
    V = np.empty((md.nbodies, 6))
    velocities(md, W, v, V)
    momentum = np.empty(6)
    T = 0.0
    for i in range(1, md.nbodies):
        inertia_times(md.mass[i], W.h[i], W.inertia[i], V[i], momentum)
        T += 0.5 * dot6(V[i], momentum)
    return T


@njit(cache=True)
def potential_energy(ki: np.ndarray, kf: np.ndarray, q: np.ndarray) -> float:
    """``U = -sum_i m_i g^T c_i`` over the moving bodies (Robot Dynamics lecture notes (ETH),
    (3.32)-(3.33))."""
    md = unpack(ki, kf)
    W = world_bodies(md, q)
    U = 0.0
    for i in range(1, md.nbodies):
        for k in range(3):
            U -= md.gravity[k] * W.h[i, k]
    return U
