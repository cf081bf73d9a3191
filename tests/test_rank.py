"""Property tests for grpo_verify.rank, each shown to catch a planted bug (see the end of the file).

Every property test has an @example that the matching planted bug breaks, so the bug is caught
in Hypothesis' explicit phase, under every profile.
"""

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import grpo_verify.rank as rank

# Relative slack for inequalities between computed floats: they may tie exactly (equal sigma).
SLACK = 1e-12

FLOAT_METRICS = ("effective_rank", "stable_rank", "participation_ratio")
COUNT_METRICS = ("energy_rank_90", "energy_rank_95", "energy_rank_99", "tolerance_rank")


# --- strategies ----------------------------------------------------------------------------

singular_value = st.one_of(st.just(0.0), st.floats(1e-6, 1e3))


@st.composite
def spectra(draw, nonzero=True, max_size=12):
    """1-D arrays of singular values; with nonzero=True at least one is positive."""
    values = draw(st.lists(singular_value, min_size=1, max_size=max_size))
    if nonzero and not any(values):
        values[draw(st.integers(0, len(values) - 1))] = draw(st.floats(1e-6, 1e3))
    return np.array(values)


@st.composite
def integer_matrices(draw, max_side=5, bound=2):
    """Small integer matrices, often rank-deficient; their non-zero sigma are >= 1e-5 sigma_max."""
    rows = draw(st.integers(1, max_side))
    columns = draw(st.integers(1, max_side))
    entries = draw(st.lists(st.integers(-bound, bound), min_size=rows * columns, max_size=rows * columns))
    return np.array(entries, dtype=np.float64).reshape(rows, columns)


def orthogonal(size, seed):
    """A Haar-random orthogonal matrix, from the QR of a Gaussian matrix with a sign fix."""
    gaussian = np.random.default_rng(seed).standard_normal((size, size))
    q, r = np.linalg.qr(gaussian)
    return q * np.sign(np.diag(r))


seeds = st.integers(0, 2**32 - 1)


def nonzero_count(sigma):
    return int(np.count_nonzero(sigma))


def assert_same_metrics(first, second, rtol=1e-9):
    for name in FLOAT_METRICS:
        assert math.isclose(getattr(first, name), getattr(second, name), rel_tol=rtol), name
    for name in COUNT_METRICS:
        assert getattr(first, name) == getattr(second, name), name


# --- invariances ---------------------------------------------------------------------------


@given(spectra(nonzero=False), st.floats(1e-3, 1e3))
@example(np.array([1.0, 0.5]), 3.0)
def test_invariant_under_scaling(sigma, scale):
    assert_same_metrics(rank.rank_metrics(sigma), rank.rank_metrics(scale * sigma), rtol=1e-12)


@given(integer_matrices(), seeds)
@example(np.array([[2.0, 0.0], [0.0, 1.0]]), 0)
def test_invariant_under_left_orthogonal_transform(matrix, seed):
    rotated = orthogonal(matrix.shape[0], seed) @ matrix
    assert_same_metrics(rank.rank_metrics_of_matrix(matrix), rank.rank_metrics_of_matrix(rotated))


@given(integer_matrices(), seeds)
@example(np.array([[2.0, 0.0], [0.0, 1.0]]), 0)
def test_invariant_under_right_orthogonal_transform(matrix, seed):
    rotated = matrix @ orthogonal(matrix.shape[1], seed)
    assert_same_metrics(rank.rank_metrics_of_matrix(matrix), rank.rank_metrics_of_matrix(rotated))


@given(integer_matrices(), st.booleans())
@example(np.array([[2.0, 0.0], [0.0, 1.0]]), False)
def test_gram_route_equals_svd_route(matrix, left_gram):
    gram = matrix @ matrix.T if left_gram else matrix.T @ matrix
    from_svd = rank.rank_metrics_of_matrix(matrix)
    from_gram = rank.rank_metrics_from_gram(gram)
    # sqrt of eigenvalues carries error ~ sqrt(eps) on sigma near 0; 1e-6 leaves room for it.
    assert_same_metrics(from_svd, from_gram, rtol=1e-6)


GRAM_SCALES = (1e-16, 1e-8, 1.0, 1e8)


def check_gram_route_is_scale_invariant():
    """Rank-3 matrices A = U diag(2, 1, 0.5, 0) V^T (5 x 4, random orthogonal U, V): the Gram matrix
    c A A^T has two eigenvalues that are 0 up to round-off (about c * 1e-16, of either sign). For
    every scale c from 1e-16 to 1e8 the Gram route must zero them and give A's own metrics (from
    the SVD, unscaled): the round-off floor is relative to the largest eigenvalue. An absolute floor
    zeroes the whole spectrum of a tiny Gram matrix, and at 1e8 keeps the round-off eigenvalues
    (a spurious rank, or a 'not positive semi-definite' error)."""
    for seed in range(3):
        u, v = orthogonal(5, seed), orthogonal(4, seed + 100)
        matrix = u[:, :4] @ np.diag([2.0, 1.0, 0.5, 0.0]) @ v.T
        expected = rank.rank_metrics_of_matrix(matrix)
        assert expected.tolerance_rank == 3 and expected.effective_rank > 2
        for scale in GRAM_SCALES:
            gram = scale * (matrix @ matrix.T)
            assert_same_metrics(rank.rank_metrics_from_gram(gram), expected, rtol=1e-9)
            sigma = rank.singular_values_from_gram(gram)
            np.testing.assert_array_equal(sigma[3:], [0.0, 0.0])
            np.testing.assert_allclose(sigma[:3], np.sqrt(scale) * np.array([2.0, 1.0, 0.5]), rtol=1e-12)
            assert_same_metrics(rank.rank_metrics_of_matrix(np.sqrt(scale) * matrix), expected, rtol=1e-9)


def test_gram_route_is_scale_invariant():
    check_gram_route_is_scale_invariant()


# --- special spectra -----------------------------------------------------------------------


@given(st.integers(1, 150), st.floats(1e-3, 1e3))
@example(2, 3.0)
# Commonly assumed "k equal sigma give k for every rank", false for the energy rank at threshold
# t once k >= 1/(1 - t): 9 of 10 equal sigma already carry 90 % of the energy.
@example(10, 1.0)
@example(100, 1.0)
def test_k_equal_singular_values(k, value):
    metrics = rank.rank_metrics(np.full(k, value))
    for name in FLOAT_METRICS:
        assert math.isclose(getattr(metrics, name), k, rel_tol=1e-12), name
    assert metrics.tolerance_rank == k
    for threshold, count in zip(rank.ENERGY_THRESHOLDS, (metrics.energy_rank_90, metrics.energy_rank_95, metrics.energy_rank_99)):
        assert count == math.ceil(round(threshold * k, 9))


def test_equal_singular_values_counterexample_for_energy_rank():
    metrics = rank.rank_metrics(np.ones(10))
    assert metrics.energy_rank_90 == 9 and metrics.effective_rank == pytest.approx(10)


@given(st.integers(1, 12), st.data())
@example(1, None)
def test_zero_spectrum_gives_zero_and_single_nonzero_gives_one(length, data):
    zeros = np.zeros(length)
    assert all(value == 0 for value in rank.rank_metrics(zeros).as_dict().values())
    assert all(value == 0 for value in rank.rank_metrics_of_matrix(np.zeros((length, 3))).as_dict().values())
    single = zeros.copy()
    if data is None:
        single[0] = 2.0
    else:
        single[data.draw(st.integers(0, length - 1))] = data.draw(st.floats(1e-6, 1e3))
    for name, value in rank.rank_metrics(single).as_dict().items():
        assert math.isclose(value, 1.0, rel_tol=1e-12), name


def test_empty_spectrum_is_the_zero_case():
    assert all(value == 0 for value in rank.rank_metrics(np.zeros(0)).as_dict().values())
    assert all(value == 0 for value in rank.rank_metrics_of_matrix(np.zeros((0, 3))).as_dict().values())


def test_known_values():
    sigma = np.array([2.0, 1.0])
    p = np.array([2 / 3, 1 / 3])
    metrics = rank.rank_metrics(sigma)
    assert metrics.effective_rank == pytest.approx(np.exp(-np.sum(p * np.log(p))), rel=1e-14)
    assert metrics.stable_rank == pytest.approx(5 / 4, rel=1e-14)
    assert metrics.participation_ratio == pytest.approx(25 / 17, rel=1e-14)
    assert (metrics.energy_rank_90, metrics.energy_rank_95, metrics.energy_rank_99) == (2, 2, 2)
    assert metrics.as_dict()["stable_rank"] == metrics.stable_rank
    assert rank.tolerance_rank([1.0, 0.5, 1e-7]) == 2 and rank.tolerance_rank([1.0, 0.5, 1e-7], 1e-8) == 3


# --- inequalities --------------------------------------------------------------------------


@given(spectra())
@example(np.array([1.0, 1.0]))
def test_effective_rank_between_one_and_rank(sigma):
    erank = rank.effective_rank(sigma)
    assert 1 - SLACK <= erank <= nonzero_count(sigma) * (1 + SLACK)


@given(spectra())
@example(np.array([1.0, 0.5]))
@example(np.array([1.0, 1.0]))
def test_stable_rank_le_participation_ratio_le_effective_rank(sigma):
    # stable <= PR: sum sigma^4 <= sigma_max^2 sum sigma^2.  PR <= erank: with p = sigma / sum sigma,
    # Hoelder gives (sum p^2)^3 <= sum p^4, so PR = (sum p^2)^2 / sum p^4 <= 1 / sum p^2
    # = exp(H_2(p)) <= exp(H_1(p)) = erank (Renyi entropies decrease in their order).
    stable = rank.stable_rank(sigma)
    ratio = rank.participation_ratio(sigma)
    erank = rank.effective_rank(sigma)
    assert 1 - SLACK <= stable <= ratio * (1 + SLACK)
    assert ratio <= erank * (1 + SLACK)
    assert erank <= nonzero_count(sigma) * (1 + SLACK)
    # erank >= sum sigma / sigma_max, the nuclear-to-spectral ratio (H_1 >= H_inf).
    assert sigma.sum() / sigma.max() <= erank * (1 + SLACK)


@given(spectra(), st.sampled_from(rank.ENERGY_THRESHOLDS))
@example(np.array([1.0]), 0.9)
# Commonly assumed "energy rank >= stable rank (hence >= PR, erank)": false, (1, 0.05) has
# energy_rank(0.99) = 1 < 1.0025 = stable rank. Only t * stable rank is a lower bound.
@example(np.array([1.0, 0.05]), 0.99)
# "energy rank >= t * PR" is false too: (2, 2, 2, 1) has energy_rank(0.9) = 3 < 0.9 * 169/49;
# Cauchy-Schwarz only gives t^2 * PR.
@example(np.array([2.0, 2.0, 2.0, 1.0]), 0.9)
def test_energy_rank_bounds(sigma, threshold):
    count = rank.energy_rank(sigma, threshold)
    assert threshold * rank.stable_rank(sigma) <= count * (1 + SLACK)
    assert threshold**2 * rank.participation_ratio(sigma) <= count * (1 + SLACK)
    assert 1 <= count <= nonzero_count(sigma)
    counts = [rank.energy_rank(sigma, t) for t in rank.ENERGY_THRESHOLDS]
    assert counts == sorted(counts)


def test_false_inequalities_have_counterexamples():
    low_tail = np.array([1.0, 0.05])
    assert rank.energy_rank(low_tail, 0.99) < rank.stable_rank(low_tail)
    assert rank.energy_rank(low_tail, 0.99) < rank.effective_rank(low_tail)
    steps = np.array([2.0, 2.0, 2.0, 1.0])
    assert rank.energy_rank(steps, 0.9) < 0.9 * rank.participation_ratio(steps)
    # The other way round fails too: the energy rank can exceed the effective rank.
    two = np.array([2.0, 1.0])
    assert rank.energy_rank(two, 0.9) > rank.effective_rank(two)


@given(spectra(), st.floats(0.0, 0.99))
@example(np.array([1.0, 0.0]), 0.0)
def test_tolerance_rank_between_one_and_rank_and_non_increasing(sigma, tolerance):
    count = rank.tolerance_rank(sigma, tolerance)
    assert 1 <= count <= nonzero_count(sigma)
    assert rank.tolerance_rank(sigma, min(0.999, 2 * tolerance)) <= count


# --- bad input -----------------------------------------------------------------------------

BAD_SPECTRA = [
    np.array([1.0, np.nan]),
    np.array([np.inf, 1.0]),
    np.array([1.0, -0.1]),
    np.ones((2, 2)),
]


def check_bad_input_rejected():
    for sigma in BAD_SPECTRA:
        with pytest.raises(ValueError):
            rank.rank_metrics(sigma)
    for gram in (np.ones((2, 3)), np.array([[1.0, 0.5], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, -1.0]]),
                 np.array([[np.nan, 0.0], [0.0, 1.0]])):
        with pytest.raises(ValueError):
            rank.rank_metrics_from_gram(gram)
    with pytest.raises(ValueError):
        rank.rank_metrics_of_matrix(np.array([[1.0, np.inf]]))
    with pytest.raises(ValueError):
        rank.energy_rank(np.ones(2), 1.5)


def test_bad_input_raises_value_error():
    check_bad_input_rejected()


def test_round_off_negatives_are_clipped():
    assert rank.stable_rank([1.0, -1e-17]) == 1.0
    gram = np.array([[1.0, 1.0], [1.0, 1.0]])  # rank 1: the second eigenvalue is 0 up to round-off
    np.testing.assert_array_equal(rank.singular_values_from_gram(gram)[1:], [0.0])


# --- planted bugs: every property above must catch one -------------------------------------


def _entropy(sigma, log):
    sigma = np.asarray(sigma, dtype=np.float64)
    p = sigma / sigma.sum()
    p = p[p > 0]
    return -np.sum(p * log(p))


def erank_with_log2(sigma):
    return float(np.exp(_entropy(sigma, np.log2)))


def erank_with_log10(sigma):
    return float(np.exp(_entropy(sigma, np.log10)))


def erank_without_zero_case(sigma):
    with np.errstate(invalid="ignore"):  # 0 / 0 for the zero spectrum is the planted bug
        return float(np.exp(_entropy(sigma, np.log)))


def stable_rank_sigma_max_not_squared(sigma):
    sigma = np.asarray(sigma, dtype=np.float64)
    return float(np.sum(sigma**2) / sigma.max()) if sigma.max() > 0 else 0.0


def stable_rank_with_sigma_not_sigma_squared(sigma):
    sigma = np.asarray(sigma, dtype=np.float64)
    return float(sigma.sum() / sigma.max()) if sigma.max() > 0 else 0.0


def singular_values_as_row_norms(matrix):
    return np.sort(np.linalg.norm(np.asarray(matrix, dtype=np.float64), axis=1))[::-1]


def singular_values_as_column_norms(matrix):
    return np.sort(np.linalg.norm(np.asarray(matrix, dtype=np.float64), axis=0))[::-1]


_real_singular_values_from_gram = rank.singular_values_from_gram


def gram_eigenvalues_without_sqrt(gram):
    return _real_singular_values_from_gram(gram) ** 2


def gram_floor_not_relative(gram):
    """singular_values_from_gram with its round-off floor 16 n eps, not 16 n eps max|lambda|."""
    matrix = np.asarray(gram, dtype=np.float64)
    eigenvalues = np.linalg.eigvalsh((matrix + matrix.T) / 2)[::-1]
    tolerance = 16.0 * eigenvalues.size * np.finfo(np.float64).eps
    if np.any(eigenvalues < -tolerance):
        raise ValueError("Gram matrix must be positive semi-definite")
    eigenvalues[np.abs(eigenvalues) <= tolerance] = 0.0
    return np.sqrt(eigenvalues)


def energy_rank_off_by_one(sigma, threshold=0.99):
    sigma = np.sort(np.asarray(sigma, dtype=np.float64))[::-1]
    if not sigma.any():
        return 0
    fractions = np.cumsum(sigma**2) / np.sum(sigma**2)
    return int(np.argmax(fractions >= threshold - 1e-12))


def tolerance_rank_counting_ties(sigma, relative_tolerance=rank.DEFAULT_RELATIVE_TOLERANCE):
    sigma = np.asarray(sigma, dtype=np.float64)
    return int(np.count_nonzero(sigma >= relative_tolerance * sigma.max())) if sigma.any() else 0


def no_validation(singular_values):
    return np.asarray(singular_values, dtype=np.float64)


PLANTED_BUGS = [
    pytest.param(test_invariant_under_scaling, "stable_rank", stable_rank_sigma_max_not_squared, id="scaling"),
    pytest.param(test_invariant_under_left_orthogonal_transform, "singular_values", singular_values_as_row_norms,
                 id="left-orthogonal"),
    pytest.param(test_invariant_under_right_orthogonal_transform, "singular_values", singular_values_as_column_norms,
                 id="right-orthogonal"),
    pytest.param(test_gram_route_equals_svd_route, "singular_values_from_gram", gram_eigenvalues_without_sqrt,
                 id="gram-route"),
    pytest.param(check_gram_route_is_scale_invariant, "singular_values_from_gram", gram_floor_not_relative,
                 id="gram-scale"),
    pytest.param(test_k_equal_singular_values, "stable_rank", stable_rank_sigma_max_not_squared, id="k-equal"),
    pytest.param(test_zero_spectrum_gives_zero_and_single_nonzero_gives_one, "effective_rank",
                 erank_without_zero_case, id="zero-spectrum"),
    pytest.param(test_effective_rank_between_one_and_rank, "effective_rank", erank_with_log2, id="erank-log2"),
    pytest.param(test_stable_rank_le_participation_ratio_le_effective_rank, "stable_rank",
                 stable_rank_with_sigma_not_sigma_squared, id="stable-le-pr"),
    pytest.param(test_stable_rank_le_participation_ratio_le_effective_rank, "effective_rank", erank_with_log10,
                 id="pr-le-erank"),
    pytest.param(test_energy_rank_bounds, "energy_rank", energy_rank_off_by_one, id="energy-rank"),
    pytest.param(test_tolerance_rank_between_one_and_rank_and_non_increasing, "tolerance_rank",
                 tolerance_rank_counting_ties, id="tolerance-rank"),
    pytest.param(check_bad_input_rejected, "_as_singular_values", no_validation, id="bad-input"),
]


@pytest.mark.parametrize("property_check, name, buggy", PLANTED_BUGS)
def test_planted_bug_is_detected(monkeypatch, property_check, name, buggy):
    monkeypatch.setattr(rank, name, buggy)
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        property_check()


# --- exact messages, defaults, dtypes and boundaries (found by mutation testing, experiments/mutation) ---

EPS = np.finfo(np.float64).eps

RANK_ERROR_MESSAGES = [
    pytest.param(lambda: rank.rank_metrics(np.ones((2, 2))),
                 "singular values must be a 1-D array, got shape (2, 2)", id="sigma-2d"),
    pytest.param(lambda: rank.rank_metrics([1.0, math.nan]),
                 "singular values must be finite, got NaN or inf", id="sigma-nan"),
    pytest.param(lambda: rank.rank_metrics([1.0, -0.5]),
                 "singular values must be non-negative, got minimum -0.5", id="sigma-negative"),
    pytest.param(lambda: rank.energy_rank(np.ones(2), 1.5),
                 "energy threshold must be in (0, 1], got 1.5", id="threshold"),
    pytest.param(lambda: rank.tolerance_rank(np.ones(2), 1.0),
                 "relative tolerance must be in [0, 1), got 1.0", id="tolerance"),
    pytest.param(lambda: rank.singular_values(np.ones(3)),
                 "matrix must be 2-D, got shape (3,)", id="matrix-1d"),
    pytest.param(lambda: rank.singular_values(np.array([[1.0, np.inf]])),
                 "matrix must be finite, got NaN or inf", id="matrix-inf"),
    pytest.param(lambda: rank.singular_values_from_gram(np.ones((2, 3))),
                 "Gram matrix must be square, got shape (2, 3)", id="gram-not-square"),
    pytest.param(lambda: rank.singular_values_from_gram(np.ones(3)),
                 "Gram matrix must be square, got shape (3,)", id="gram-1d"),
    pytest.param(lambda: rank.singular_values_from_gram(np.array([[np.nan, 0.0], [0.0, 1.0]])),
                 "Gram matrix must be finite, got NaN or inf", id="gram-nan"),
    pytest.param(lambda: rank.singular_values_from_gram(np.array([[1.0, 0.5], [0.0, 1.0]])),
                 "Gram matrix must be symmetric, got max |K - K^T| = 0.5", id="gram-asymmetric"),
    pytest.param(lambda: rank.singular_values_from_gram(np.array([[1.0, 0.0], [0.0, -1.0]])),
                 "Gram matrix must be positive semi-definite, got eigenvalue -1", id="gram-indefinite"),
]


@pytest.mark.parametrize("call, message", RANK_ERROR_MESSAGES)
def test_bad_input_raises_value_error_with_the_exact_message(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == message


def test_threshold_and_tolerance_ranges():
    sigma = np.array([2.0, 1.0])  # energies 4/5 and 1/5
    assert rank.energy_rank(sigma, 1.0) == 2  # threshold 1 is allowed: all the energy
    assert rank.energy_rank(sigma) == rank.energy_rank(sigma, 0.99) == 2  # the default is 0.99
    assert rank.energy_rank(sigma, 0.8) == 1
    with pytest.raises(ValueError, match="energy threshold"):
        rank.energy_rank(sigma, 0.0)
    assert rank.tolerance_rank(sigma, 0.0) == 2
    for tolerance in (1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="relative tolerance"):
            rank.tolerance_rank(sigma, tolerance)


def test_energy_slack_is_inclusive():
    """A cumulative fraction c is enough for threshold t when c >= t - 1e-12, equality included."""
    sigma = np.array([2.0, 1.0])  # the first energy fraction is 4 / 5, computed as 1 / 1.25
    fraction = 1 / 1.25
    threshold = fraction + 1e-12
    while threshold - 1e-12 < fraction:
        threshold = np.nextafter(threshold, 1.0)
    while threshold - 1e-12 > fraction:
        threshold = np.nextafter(threshold, 0.0)
    assert threshold - 1e-12 == fraction
    assert rank.energy_rank(sigma, threshold) == 1
    assert rank.energy_rank(sigma, np.nextafter(threshold + 1e-15, 1.0)) == 2


def test_relative_tolerance_reaches_every_route():
    sigma = np.array([1.0, 1e-7])
    assert rank.rank_metrics(sigma).tolerance_rank == 1  # default 1e-6
    assert rank.rank_metrics(sigma, relative_tolerance=1e-8).tolerance_rank == 2
    assert rank.rank_metrics_of_matrix(np.diag(sigma), relative_tolerance=1e-8).tolerance_rank == 2
    assert rank.rank_metrics_from_gram(np.diag(sigma ** 2), relative_tolerance=1e-8).tolerance_rank == 2


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_metrics_at_extreme_scales(scale):
    """Dividing by sigma_max first keeps squares in range: the metrics of c (2, 1) are those of (2, 1)."""
    metrics = rank.rank_metrics(scale * np.array([2.0, 1.0]))
    assert metrics.stable_rank == pytest.approx(5 / 4, rel=1e-14)
    assert metrics.participation_ratio == pytest.approx(25 / 17, rel=1e-14)
    assert (metrics.energy_rank_90, metrics.energy_rank_95, metrics.energy_rank_99, metrics.tolerance_rank) == (2,) * 4
    assert rank.energy_rank(scale * np.array([2.0, 1.0]), 0.8) == 1


def test_inputs_are_computed_in_float64():
    sigma32 = np.array([1.0, 0.1], dtype=np.float32)
    assert rank.stable_rank(sigma32) == rank.stable_rank(sigma32.astype(np.float64))
    matrix32 = np.array([[1.0, 0.1], [0.3, 0.7]], dtype=np.float32)
    values = rank.singular_values(matrix32)
    assert values.dtype == np.float64
    np.testing.assert_array_equal(values, np.linalg.svd(matrix32.astype(np.float64), compute_uv=False))
    gram32 = (matrix32 @ matrix32.T).astype(np.float32)
    from_gram = rank.singular_values_from_gram(gram32)
    assert from_gram.dtype == np.float64
    np.testing.assert_array_equal(from_gram, rank.singular_values_from_gram(gram32.astype(np.float64)))


def test_small_and_empty_matrices():
    np.testing.assert_array_equal(rank.singular_values(np.array([[3.0]])), [3.0])
    np.testing.assert_array_equal(rank.singular_values(np.array([[-3.0]])), [3.0])
    assert rank.singular_values(np.zeros((0, 3))).shape == (0,)  # min(0, 3) = 0 singular values
    assert rank.singular_values_from_gram(np.zeros((0, 0))).shape == (0,)
    assert all(value == 0 for value in rank.rank_metrics_from_gram(np.zeros((0, 0))).as_dict().values())


def test_a_round_off_negative_sigma_counts_as_zero():
    # -1e-16 is within 16 * 2 * eps of 0 (relative to sigma_max = 1): the spectrum is (1, 0), every metric 1.
    for name, value in rank.rank_metrics([1.0, -1e-16]).as_dict().items():
        assert value == 1, name
    # Just beyond the bound, 16 * n * eps * sigma_max, a negative sigma is an error.
    with pytest.raises(ValueError, match="non-negative"):
        rank.rank_metrics([1.0, -7.2e-15])
    assert rank.rank_metrics([1.0, -7e-15]).effective_rank == 1.0


def test_gram_eigenvalues_at_the_round_off_bound_are_zeroed():
    """|lambda| <= 16 n eps max|lambda| is round-off: for n = 2 and max 1 the bound is 32 eps = 2^-47."""
    bound = 16 * 2 * EPS
    assert bound == 2.0 ** -47
    np.testing.assert_array_equal(rank.singular_values_from_gram(np.diag([1.0, bound])), [1.0, 0.0])
    np.testing.assert_array_equal(rank.singular_values_from_gram(np.diag([1.0, -bound])), [1.0, 0.0])
    above = 1.03 * bound
    np.testing.assert_array_equal(rank.singular_values_from_gram(np.diag([1.0, above])), [1.0, math.sqrt(above)])
    with pytest.raises(ValueError, match="positive semi-definite"):
        rank.singular_values_from_gram(np.diag([1.0, -above]))
