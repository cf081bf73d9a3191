"""Two prompts sharing one logit: the first-order drift of p_B and of z_R(p_B), by exact enumeration.

Independent of D6's expressions. p_A = sigmoid(theta + a), p_B = sigmoid(b - theta); each prompt draws R
Bernoulli rewards; the no-std update of a prompt is (1/R) sum_i (r_i - rbar) score_i with the score of a
Bernoulli outcome with logit u: (r - p) du/dtheta. All 2^R outcomes of each group are enumerated in
Fractions, the batch update is the average over the two prompts, and the first-order changes are
dp_B/dtheta * E[g] and z_R'(p_B) * that. The flip instance (p_A = 1/2, p_B = 1/4): p_B falls and z_R(p_B)
rises although p_B < 1/2 (D6.shared_parameter_prompt_below_half_zero_gradient_probability_rises_to_first_order).
The twin (p_A = 9/10, p_B = 1/4): B's own gradient dominates, p_B rises and z_R(p_B) falls, as for a single
prompt. A finite step (floats) confirms each sign. A planted bug (the shared sign of theta in p_B flipped,
i.e. unshared-like parameters) is caught.
"""

import itertools
import math
from fractions import Fraction

import pytest

FLIP = (Fraction(1, 2), Fraction(1, 4))
TWIN = (Fraction(9, 10), Fraction(1, 4))


def z(p, size):
    return p ** size + (1 - p) ** size


def expected_update(p, du_dtheta, size):
    """E[(1/R) sum_i (r_i - rbar) (r_i - p) du/dtheta] over all 2^R reward vectors, exactly."""
    total = Fraction(0)
    for rewards in itertools.product((0, 1), repeat=size):
        weight = Fraction(1)
        for r in rewards:
            weight *= p if r else 1 - p
        mean = Fraction(sum(rewards), size)
        total += weight * sum((r - mean) * (r - p) * du_dtheta for r in rewards) / size
    return total


def first_order(p_a, p_b, size, sign_b=-1):
    """(E[g], drift of p_B, first-order change of z_R(p_B)); u_A = theta + a, u_B = b + sign_b * theta."""
    g = (expected_update(p_a, 1, size) + expected_update(p_b, sign_b, size)) / 2
    dpb = sign_b * p_b * (1 - p_b)  # dp_B/dtheta = sigma'(u_B) du_B/dtheta
    dz = size * (p_b ** (size - 1) - (1 - p_b) ** (size - 1))
    return g, dpb * g, dz * dpb * g


def finite_step(p_a, p_b, size, eta, sign_b=-1):
    """z_R(p_B) after theta += eta * E[g] (from the logits of p_A, p_B), minus before; and p_B's change."""
    g = float(first_order(p_a, p_b, size, sign_b)[0])
    u_b = math.log(p_b / (1 - p_b))
    new_pb = 1 / (1 + math.exp(-(u_b + sign_b * eta * g)))
    return new_pb - float(p_b), z(new_pb, size) - z(float(p_b), size)


@pytest.mark.parametrize("size", range(2, 7))
def test_expected_update_is_R_minus_1_over_R_times_dp(size):
    for p in (Fraction(1, 4), Fraction(1, 2), Fraction(9, 10)):
        assert expected_update(p, 1, size) == Fraction(size - 1, size) * p * (1 - p)


@pytest.mark.parametrize("size", range(2, 7))
def test_shared_logit_flips_the_sign_for_a_prompt_below_half(size):
    p_a, p_b = FLIP
    g, drift_p, drift_z = first_order(p_a, p_b, size)
    assert g == Fraction(size - 1, 32 * size) > 0
    assert drift_p == -Fraction(3 * (size - 1), 512 * size) < 0  # p_B < 1/2 falls
    assert drift_z > 0  # and its zero-gradient probability rises
    dp, dz = finite_step(p_a, p_b, size, eta=1e-2)
    assert dp < 0 and dz > 0


@pytest.mark.parametrize("size", range(2, 7))
def test_twin_where_the_own_gradient_dominates_keeps_the_single_prompt_sign(size):
    p_a, p_b = TWIN
    g, drift_p, drift_z = first_order(p_a, p_b, size)
    assert g < 0 and drift_p > 0 and drift_z < 0
    dp, dz = finite_step(p_a, p_b, size, eta=1e-2)
    assert dp > 0 and dz < 0


def test_planted_bug_unshared_sign_is_caught():
    """With the sign of theta in p_B flipped (both prompts increase in theta), p_B rises: the flip test would fail."""
    p_a, p_b = FLIP
    _g, drift_p, drift_z = first_order(p_a, p_b, 4, sign_b=+1)
    assert drift_p > 0 and drift_z < 0
    with pytest.raises(AssertionError):
        assert drift_p < 0 and drift_z > 0
