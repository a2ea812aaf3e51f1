"""Chi-square consistency checks of a Kalman filter: NEES, NIS bounds and innovation gates.

Bar-Shalom, Li, Kirubarajan, "Estimation with Applications to Tracking and Navigation" (2001) §5.4: for a
consistent filter the normalised estimation error squared ``e^T P^-1 e`` of an n-dof error is chi-square with
n dof, and the mean of N independent samples times N is chi-square with N n dof. The same holds for the
normalised innovation squared ``nu^T S^-1 nu``. docs/estimation.md, "Consistency".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.stats import chi2

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def _check_probability(probability: float) -> None:
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability!r}")


def chi2_bounds(dof: int, samples: int, probability: float = 0.95) -> tuple[float, float]:
    """Two-sided ``probability`` bounds of the mean of ``samples`` independent chi-square(``dof``) values:
    ``chi2.ppf((1 -+ probability)/2, samples*dof) / samples`` (Bar-Shalom 2001 §5.4.2)."""
    if dof < 1 or samples < 1:
        raise ValueError(f"dof and samples must be >= 1, got dof={dof}, samples={samples}")
    _check_probability(probability)
    total = samples * dof
    lower = float(chi2.ppf((1.0 - probability) / 2.0, total)) / samples
    upper = float(chi2.ppf((1.0 + probability) / 2.0, total)) / samples
    return lower, upper


def gate(dof: int, probability: float) -> float:
    """Chi-square gate: the ``probability`` quantile of chi-square(``dof``); a consistent innovation's NIS
    exceeds it with probability ``1 - probability``."""
    if dof < 1:
        raise ValueError(f"dof must be >= 1, got {dof}")
    _check_probability(probability)
    return float(chi2.ppf(probability, dof))


def nees(error: ArrayLike, covariance: ArrayLike) -> float:
    """Normalised estimation error squared ``e^T P^-1 e`` (by Cholesky; P must be symmetric positive
    definite, else ValueError)."""
    e = np.asarray(error, dtype=np.float64)
    P = np.asarray(covariance, dtype=np.float64)
    if e.ndim != 1 or P.shape != (e.size, e.size):
        raise ValueError(f"error {e.shape} and covariance {P.shape} do not match")
    if not (np.all(np.isfinite(e)) and np.all(np.isfinite(P))):
        raise ValueError("error and covariance must be finite")
    try:
        factor = cho_factor(P)
    except LinAlgError as exc:
        raise ValueError("covariance is not positive definite") from exc
    return float(e @ cho_solve(factor, e))
