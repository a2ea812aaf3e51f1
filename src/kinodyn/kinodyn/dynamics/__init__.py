"""Rigid-body dynamics of a ``kinodyn.Model``: inverse and forward dynamics, mass and Coriolis
matrices, centroidal momentum matrix and energies, fixed or floating base.

Every function takes the model first and returns numpy arrays. Each module holds its algorithm's compiled
kernel beside the function that calls it (``rnea``, ``aba``, ``crba``, ``centroidal``, ``coriolis``,
``energy``), written with the spatial algebra of ``kinodyn.spatial.compiled``; ``bodies`` holds the body
placements, inertias and twists they share, ``parallel`` the chunking of batch kernels over threads.
Conventions (docs/conventions.md): ``tau = M a + C v + g``, with the floating-base
``v = [v_base, w_base (base frame), qdot]``; external wrenches act on the robot.
"""

from kinodyn.dynamics.aba import aba, aba_batch
from kinodyn.dynamics.centroidal import centroidal_momentum_matrix
from kinodyn.dynamics.coriolis import coriolis_matrix
from kinodyn.dynamics.crba import mass_matrix
from kinodyn.dynamics.energy import kinetic_energy, potential_energy
from kinodyn.dynamics.rnea import gravity_torques, nonlinear_effects, rnea, rnea_batch

__all__ = [
    "aba",
    "aba_batch",
    "centroidal_momentum_matrix",
    "coriolis_matrix",
    "gravity_torques",
    "kinetic_energy",
    "mass_matrix",
    "nonlinear_effects",
    "potential_energy",
    "rnea",
    "rnea_batch",
]
