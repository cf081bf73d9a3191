"""Rank metrics of a matrix, computed from its singular values or from its Gram matrix.

Every metric is a function of the singular values sigma_1 >= ... >= sigma_n >= 0 alone, so it
is invariant under orthogonal transforms on either side and under scaling by c > 0.

Conventions shared by every metric:

* All sigma zero (the zero matrix, or no singular values at all): every metric is 0.
* Exactly one non-zero sigma: every metric is 1.

Bounds that hold for every non-zero input with r non-zero singular values and energy
threshold t (tested in ``tests/test_rank.py``)::

    1 <= stable_rank <= participation_ratio <= effective_rank <= r
    t * stable_rank <= energy_rank(t) <= r,    t**2 * participation_ratio <= energy_rank(t)

The energy rank is not ordered against the other three: sigma = (1, 0.05) gives
energy_rank(0.99) = 1 < stable_rank, and sigma = (2, 1) gives energy_rank(0.9) = 2 > effective_rank.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

ENERGY_THRESHOLDS = (0.90, 0.95, 0.99)
DEFAULT_RELATIVE_TOLERANCE = 1e-6

_FLOAT64_EPS = np.finfo(np.float64).eps
# Cumulative energies are sums of rounded squares; a threshold met exactly in exact arithmetic
# (9 of 10 equal singular values carry exactly 90 %) must not be missed by one ulp.
_ENERGY_SLACK = 1e-12


def _round_off_bound(count: int, largest: float) -> float:
    """Size below which a value computed next to ``largest`` is indistinguishable from 0."""
    return 16.0 * max(count, 1) * _FLOAT64_EPS * largest


def _require_finite(array: np.ndarray, what: str) -> None:
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} must be finite, got NaN or inf")


def _as_singular_values(singular_values: ArrayLike) -> np.ndarray:
    """Validate a 1-D array of singular values; round-off negatives become 0."""
    sigma = np.asarray(singular_values, dtype=np.float64)
    if sigma.ndim != 1:
        raise ValueError(f"singular values must be a 1-D array, got shape {sigma.shape}")
    _require_finite(sigma, "singular values")
    if sigma.size == 0:
        return sigma
    tolerance = _round_off_bound(sigma.size, float(np.max(np.abs(sigma))))
    if np.any(sigma < -tolerance):
        raise ValueError(f"singular values must be non-negative, got minimum {float(sigma.min())!r}")
    return np.clip(sigma, 0.0, None)


def _is_zero(sigma: np.ndarray) -> bool:
    return sigma.size == 0 or not np.any(sigma > 0)


def effective_rank(singular_values: ArrayLike) -> float:
    """Effective rank (Roy & Vetterli 2007): exp(H(p)), p_i = sigma_i / sum_j sigma_j.

    H(p) = -sum_i p_i ln p_i is the Shannon entropy in nats, with 0 ln 0 = 0.
    """
    sigma = _as_singular_values(singular_values)
    if _is_zero(sigma):
        return 0.0
    p = sigma / sigma.sum()
    # Filter after dividing: a sigma that underflows to p = 0 would give 0 * ln 0 = NaN.
    p = p[p > 0]
    entropy = -np.sum(p * np.log(p))
    return float(np.exp(entropy))


def stable_rank(singular_values: ArrayLike) -> float:
    """Stable rank: sum_i sigma_i^2 / sigma_max^2 = ||A||_F^2 / ||A||_2^2."""
    sigma = _as_singular_values(singular_values)
    if _is_zero(sigma):
        return 0.0
    # Dividing first keeps the squares in range for very large or very small sigma.
    relative = sigma / sigma.max()
    return float(np.sum(relative**2))


def participation_ratio(singular_values: ArrayLike) -> float:
    """Participation ratio: (sum_i sigma_i^2)^2 / sum_i sigma_i^4 = 1 / sum_i q_i^2, q_i = sigma_i^2 / sum_j sigma_j^2."""
    sigma = _as_singular_values(singular_values)
    if _is_zero(sigma):
        return 0.0
    relative = sigma / sigma.max()
    energies = relative**2
    return float(energies.sum() ** 2 / np.sum(energies**2))


def energy_rank(singular_values: ArrayLike, threshold: float = 0.99) -> int:
    """Numerical rank at an energy threshold: min { k : sum_{i<=k} sigma_(i)^2 >= threshold * sum_i sigma_i^2 }.

    sigma_(1) >= sigma_(2) >= ... are the singular values in decreasing order; threshold is in (0, 1].
    The comparison allows a relative slack of 1e-12 so that exact ties with the threshold are met.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"energy threshold must be in (0, 1], got {threshold!r}")
    sigma = _as_singular_values(singular_values)
    if _is_zero(sigma):
        return 0
    relative = np.sort(sigma)[::-1] / sigma.max()
    cumulative_fraction = np.cumsum(relative**2) / np.sum(relative**2)
    reached = cumulative_fraction >= threshold - _ENERGY_SLACK
    return int(np.argmax(reached)) + 1


def tolerance_rank(singular_values: ArrayLike, relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE) -> int:
    """Number of singular values above a relative tolerance: #{ i : sigma_i > tol * sigma_max }.

    The default tol = 1e-6 sits well above sqrt(eps) ~ 1.5e-8, the resolution of singular values
    recovered from a Gram matrix, so both routes agree.
    """
    if not 0.0 <= relative_tolerance < 1.0:
        raise ValueError(f"relative tolerance must be in [0, 1), got {relative_tolerance!r}")
    sigma = _as_singular_values(singular_values)
    if _is_zero(sigma):
        return 0
    return int(np.count_nonzero(sigma > relative_tolerance * sigma.max()))


def singular_values(matrix: ArrayLike) -> np.ndarray:
    """Singular values of a 2-D matrix, in decreasing order (LAPACK SVD)."""
    array = np.asarray(matrix, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {array.shape}")
    _require_finite(array, "matrix")
    if array.size == 0:
        return np.zeros(0)
    return np.linalg.svd(array, compute_uv=False)


def singular_values_from_gram(gram: ArrayLike) -> np.ndarray:
    """Singular values of A from its Gram matrix K = A A^T (or A^T A): sigma_i = sqrt(lambda_i(K)), decreasing.

    Eigenvalues within round-off of zero, |lambda| <= 16 n eps max|lambda|, are set to 0: their sign
    and size are noise, and a slightly negative one would have no square root. A more negative
    eigenvalue means K is not positive semi-definite and raises ValueError. Because of the square
    root, singular values below about sqrt(eps) * sigma_max ~ 1.5e-8 sigma_max are not resolved.
    """
    matrix = np.asarray(gram, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"Gram matrix must be square, got shape {matrix.shape}")
    _require_finite(matrix, "Gram matrix")
    if matrix.size == 0:
        return np.zeros(0)
    scale = float(np.max(np.abs(matrix)))
    asymmetry = float(np.max(np.abs(matrix - matrix.T)))
    if asymmetry > 1e-10 * scale:
        raise ValueError(f"Gram matrix must be symmetric, got max |K - K^T| = {asymmetry:.3g}")
    # Averaging with the transpose removes the round-off asymmetry the check above allowed.
    eigenvalues = np.linalg.eigvalsh((matrix + matrix.T) / 2)[::-1]
    tolerance = _round_off_bound(eigenvalues.size, float(np.max(np.abs(eigenvalues))))
    if np.any(eigenvalues < -tolerance):
        raise ValueError(
            f"Gram matrix must be positive semi-definite, got eigenvalue {eigenvalues.min():.3g}"
        )
    eigenvalues[np.abs(eigenvalues) <= tolerance] = 0.0
    return np.sqrt(eigenvalues)


@dataclass(frozen=True)
class RankMetrics:
    """All rank metrics of one spectrum; see the module docstring for the conventions."""

    effective_rank: float
    stable_rank: float
    participation_ratio: float
    energy_rank_90: int
    energy_rank_95: int
    energy_rank_99: int
    tolerance_rank: int

    def as_dict(self) -> dict[str, float | int]:
        """The metrics as a plain {name: value} dict."""
        return asdict(self)


def rank_metrics(singular_values: ArrayLike, relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE) -> RankMetrics:
    """Every rank metric of a 1-D array of singular values."""
    sigma = _as_singular_values(singular_values)
    energy_90, energy_95, energy_99 = (energy_rank(sigma, threshold) for threshold in ENERGY_THRESHOLDS)
    return RankMetrics(
        effective_rank=effective_rank(sigma),
        stable_rank=stable_rank(sigma),
        participation_ratio=participation_ratio(sigma),
        energy_rank_90=energy_90,
        energy_rank_95=energy_95,
        energy_rank_99=energy_99,
        tolerance_rank=tolerance_rank(sigma, relative_tolerance),
    )


def rank_metrics_from_gram(gram: ArrayLike, relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE) -> RankMetrics:
    """Every rank metric of A, given its Gram matrix K = A A^T (eigenvalues of K = sigma^2)."""
    return rank_metrics(singular_values_from_gram(gram), relative_tolerance)


def rank_metrics_of_matrix(matrix: ArrayLike, relative_tolerance: float = DEFAULT_RELATIVE_TOLERANCE) -> RankMetrics:
    """Every rank metric of a 2-D matrix, from its SVD."""
    return rank_metrics(singular_values(matrix), relative_tolerance)
