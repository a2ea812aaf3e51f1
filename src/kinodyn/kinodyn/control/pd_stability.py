"""Joint PD gains that an explicit, sampled PD keeps stable: ``sampled_pd_gains``.

A joint PD ``tau = kp (q* - q) - kd v`` evaluated once per control period ``T`` and held over it (as the
``JointPDCommand`` controllers and drives apply it) acts on a joint of inertia ``I`` as the map
``x+ = x + T v + T^2 a / 2``, ``v+ = v + T a``, ``a = -(kp x + kd v) / I``. Its eigenvalues lie inside
the unit circle (Jury's test on the characteristic polynomial ``z^2 - (2 - alpha/2 - beta) z + 1 - beta +
alpha/2``, ``alpha = kp T^2 / I``, ``beta = kd T / I``) exactly when

    0 < kp T < 2 kd   and   kd T / I < 2,

so a fixed gain that holds a heavy joint makes a light one (a small robot's calf) oscillate and diverge.
With several joints, ``I^-1`` is the joint block of the inverse mass matrix (floating base: the body free,
the lightest case, as a leg in the air) and the bound applies to the eigenvalues ``mu`` of
``T (M^-1)_JJ Kd``. ``sampled_pd_gains`` gives each joint the gains of a critically damped joint of its own
inertia ``1 / (M^-1)_jj`` at one common frequency ``omega``: ``kd_j = 2 omega / (M^-1)_jj``,
``kp_j = omega^2 / (M^-1)_jj`` (so ``Kp = (omega / 2) Kd``: the joint-space modes decouple), with
``omega`` the largest for which the fastest mode's ``T mu`` is ``stability_fraction`` of its limit 2; then
``kp T = (omega T / 2) kd < 2 kd`` holds too. The gains scale with the robot's inertia and the period.

Not in the texts: discrete-time stability of a sampled PD, standard material (Jury's criterion).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kinodyn.model import Model


def sampled_pd_gains(model: Model, q: np.ndarray, period: float,
                     stability_fraction: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """``(kp, kd)`` per actuated joint of ``model`` at ``q`` for a PD sampled every ``period`` [s] (module
    doc); ``stability_fraction`` in (0, 1) of the largest stable damping. ``ValueError`` for a period or
    fraction out of range."""
    if not (math.isfinite(period) and period > 0.0):
        raise ValueError(f"the PD's control period must be finite and > 0 s, got {period}")
    if not (math.isfinite(stability_fraction) and 0.0 < stability_fraction < 1.0):
        raise ValueError(f"stability_fraction must be in (0, 1), got {stability_fraction}")
    first = 6 if model.floating_base else 0
    mobility = np.linalg.inv(model.mass_matrix(q))[first:, first:]  # (M^-1)_JJ
    diagonal = np.diag(mobility).copy()
    scale = 1.0 / np.sqrt(diagonal)
    # eigenvalues of (M^-1)_JJ diag(1 / (M^-1)_jj): those of the symmetric S (M^-1)_JJ S, S = diag(scale)
    largest = float(np.linalg.eigvalsh(scale[:, None] * mobility * scale[None, :]).max())
    omega = stability_fraction * 2.0 / (2.0 * period * largest)  # T mu_max = T 2 omega largest
    inertia = 1.0 / diagonal
    return omega * omega * inertia, 2.0 * omega * inertia
