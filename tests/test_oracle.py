"""Exact tests of the derivations' claims with grpo_verify.oracle (float64, tolerance 1e-10).

D1: grad J by autograd equals E[r g]; E[g] = 0. D5: the group-mean baseline gives (R-1)/R grad J, RLOO
is unbiased, std scaling with binary rewards gives c_R(p) grad J. D6: P(zero-advantage group) =
p^R + (1-p)^R. D8: the optimal baseline and its variance gap. Plus: multiset enumeration equals
ordered-tuple enumeration for symmetric estimators, errors for oversized enumerations and bad inputs,
and planted bugs (a leave-one-out baseline with the wrong divisor, a group baseline claimed unbiased)
that the checks catch.
"""

import math

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from grpo_verify.estimators import group_advantages
from grpo_verify.oracle import (
    DEFAULT_MAX_TUPLES,
    baseline_total_variance,
    coordinatewise_optimal_baseline,
    dr_grpo_group_gradient,
    expect_group,
    expected_reward,
    expected_score,
    group_gradient,
    group_mean_baseline_term,
    group_total_variance,
    leave_one_out_term,
    num_group_tuples,
    optimal_baseline,
    policy_gradient,
    rollout_term,
    score_norm_moment,
    std_scaled_term,
    zero_advantage_indicator,
)
from grpo_verify.synthetic import (
    EnumerationTooLarge,
    LinearSoftmax,
    SoftmaxBandit,
    TabularAutoregressive,
    TinyCausalTransformer,
    binary_rewards,
    policy_strategy,
    reward_strategy,
)

TOLERANCE = 1e-10
F64 = torch.float64


def assert_close(actual, expected, tol: float = TOLERANCE) -> None:
    """max |actual - expected| <= tol * (1 + max |expected|)."""
    actual, expected = torch.as_tensor(actual, dtype=F64), torch.as_tensor(expected, dtype=F64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    gap = (actual - expected).abs().max().item()
    scale = 1.0 + expected.abs().max().item()
    assert gap <= tol * scale, f"max gap {gap:.3g} > {tol:.1g} * {scale:.3g}"


@st.composite
def problems(draw, max_outcomes: int = 8, styles=("binary", "continuous", "ties")):
    """(policy, outcomes, rewards) for a small closed-form policy."""
    policy = draw(policy_strategy(max_outcomes=max_outcomes))
    outcomes = policy.enumerate()
    rewards = draw(reward_strategy(outcomes.num_outcomes, styles))
    return policy, outcomes, rewards


group_sizes = st.integers(2, 4)  # with N <= 8 outcomes, at most 8^4 = 4096 ordered tuples


# --- D1 ------------------------------------------------------------------------------------


def autograd_policy_gradient(policy, outcomes, rewards) -> torch.Tensor:
    """grad_theta sum_n pi_theta(o_n) r_n by torch.autograd, with no score in sight."""
    expected = (policy.log_prob(outcomes.sequences).exp() * rewards).sum()
    return policy.flat_gradient(expected)


@given(problems())
def test_score_function_identity(problem):
    policy, outcomes, rewards = problem
    assert_close(policy_gradient(outcomes, rewards), autograd_policy_gradient(policy, outcomes, rewards))
    assert math.isclose(expected_reward(outcomes, rewards), float(outcomes.probs @ rewards), abs_tol=1e-12)


@given(problems())
def test_expected_score_is_zero(problem):
    _, outcomes, _ = problem
    assert_close(expected_score(outcomes), torch.zeros(outcomes.num_parameters))


def test_score_function_identity_on_a_transformer():
    policy = TinyCausalTransformer(vocab_size=3, length=2, num_layers=2, seed=3)
    outcomes = policy.enumerate()
    rewards = torch.linspace(-1, 2, outcomes.num_outcomes, dtype=F64)
    assert_close(policy_gradient(outcomes, rewards), autograd_policy_gradient(policy, outcomes, rewards))
    assert_close(expected_score(outcomes), torch.zeros(outcomes.num_parameters))


# --- D5 ------------------------------------------------------------------------------------


def check_expectation(outcomes, rewards, group_size, estimator, factor: float, symmetric: bool = False) -> None:
    """Assert E[estimator] = factor * grad J exactly (by enumeration)."""
    assert_close(expect_group(outcomes, rewards, group_size, estimator, symmetric),
                 factor * policy_gradient(outcomes, rewards))


@given(problems(), group_sizes, st.data())
def test_group_mean_baseline_shrinks_gradient_by_R_minus_1_over_R(problem, group_size, data):
    _, outcomes, rewards = problem
    rollout = data.draw(st.integers(0, group_size - 1))
    check_expectation(outcomes, rewards, group_size, group_mean_baseline_term(rollout), (group_size - 1) / group_size)
    check_expectation(outcomes, rewards, group_size, dr_grpo_group_gradient(), (group_size - 1) / group_size,
                      symmetric=True)


@given(problems(), group_sizes, st.data())
def test_leave_one_out_baseline_is_unbiased(problem, group_size, data):
    _, outcomes, rewards = problem
    rollout = data.draw(st.integers(0, group_size - 1))
    check_expectation(outcomes, rewards, group_size, leave_one_out_term(rollout), 1.0)
    check_expectation(outcomes, rewards, group_size, group_gradient("rloo"), 1.0, symmetric=True)


def c_R(success_probability: float, group_size: int, kind: str, eps: float) -> float:
    """h(1) - h(0) of D5: the binomial average of the advantage of a success minus that of a failure.

    Computed from grpo_verify.estimators on explicit binary groups, independently of the oracle.
    """
    total = 0.0
    for successes_among_others in range(group_size):
        weight = math.comb(group_size - 1, successes_among_others) * success_probability ** successes_among_others \
            * (1 - success_probability) ** (group_size - 1 - successes_among_others)
        others = [1.0] * successes_among_others + [0.0] * (group_size - 1 - successes_among_others)
        success = group_advantages(torch.tensor([[1.0] + others], dtype=F64), kind, eps)[0, 0].item()
        failure = group_advantages(torch.tensor([[0.0] + others], dtype=F64), kind, eps)[0, 0].item()
        total += weight * (success - failure)
    return total


@given(problems(styles=("binary",)), group_sizes, st.sampled_from(["sample", "population"]),
       st.sampled_from([0.0, 1e-4, 0.5]))
def test_std_scaled_gradient_with_binary_rewards_is_c_R_times_gradient(problem, group_size, std, eps):
    _, outcomes, rewards = problem
    p = expected_reward(outcomes, rewards)
    kind = {"sample": "grpo", "population": "population"}[std]
    check_expectation(outcomes, rewards, group_size, std_scaled_term(0, std, eps), c_R(p, group_size, kind, eps))
    check_expectation(outcomes, rewards, group_size, group_gradient(kind, eps), c_R(p, group_size, kind, eps),
                      symmetric=True)


def test_std_scaled_gradient_with_three_reward_values_is_not_parallel():
    """D5's counterexample: pi = (1/2, 1/3, 1/6), r = (1, 1/2, 0), R = 2: E[A_1 g_1] is not parallel to grad J."""
    policy = SoftmaxBandit(3, logits=[math.log(3), math.log(2), 0.0])
    outcomes = policy.enumerate()
    rewards = torch.tensor([1.0, 0.5, 0.0], dtype=F64)
    scaled = expect_group(outcomes, rewards, 2, std_scaled_term(0, "sample", eps=0.0))
    gradient = policy_gradient(outcomes, rewards)
    minor = scaled[0] * gradient[1] - scaled[1] * gradient[0]
    assert abs(minor.item()) > 1e-3


def test_group_baseline_bias_on_a_transformer():
    policy = TinyCausalTransformer(vocab_size=3, length=2, seed=4)
    outcomes = policy.enumerate()
    rewards = binary_rewards(outcomes, lambda seq: seq[0] == seq[1])
    check_expectation(outcomes, rewards, 3, group_mean_baseline_term(2), 2 / 3)
    check_expectation(outcomes, rewards, 3, leave_one_out_term(1), 1.0)


# --- D6 ------------------------------------------------------------------------------------


@given(st.integers(2, 6), st.lists(st.floats(-3, 3), min_size=2, max_size=6), st.data(),
       st.sampled_from(["grpo", "population", "dr_grpo", "rloo"]))
def test_zero_advantage_probability_is_p_pow_R_plus_q_pow_R(group_size, logits, data, kind):
    outcomes = SoftmaxBandit(len(logits), logits=logits).enumerate()
    correct = data.draw(st.sets(st.integers(0, len(logits) - 1)))
    rewards = binary_rewards(outcomes, [(a,) for a in correct])
    p = expected_reward(outcomes, rewards)
    zero = expect_group(outcomes, rewards, group_size, zero_advantage_indicator(kind), symmetric=True)
    assert_close(zero, p ** group_size + (1 - p) ** group_size)


# --- D8 ------------------------------------------------------------------------------------


@given(problems(), st.floats(-10, 10))
def test_optimal_baseline_minimises_the_total_variance(problem, baseline):
    _, outcomes, rewards = problem
    m0 = score_norm_moment(outcomes, rewards, 0)
    assume(m0 > 1e-6)  # identical feature rows make every score 0 (tested below)
    best = optimal_baseline(outcomes, rewards)
    # V(b) = V(b*) + M_0 (b - b*)^2 exactly
    assert_close(baseline_total_variance(outcomes, rewards, baseline),
                 baseline_total_variance(outcomes, rewards, best) + m0 * (baseline - best) ** 2)
    # ... and the total variance is what the group oracle computes for R = 1, f = (r - b) g
    def centred(rewards_, scores_, indices_):
        return (rewards_[:, 0, None] - baseline) * scores_[:, 0]
    assert_close(group_total_variance(outcomes, rewards, 1, centred),
                 baseline_total_variance(outcomes, rewards, baseline))


@given(problems())
def test_coordinatewise_optimal_baseline_minimises_each_coordinate(problem):
    _, outcomes, rewards = problem
    best = coordinatewise_optimal_baseline(outcomes, rewards)
    for shift in (-0.5, 0.5):
        for k in range(outcomes.num_parameters):
            def variance(b):
                weighted = (rewards - b) * outcomes.scores[:, k]
                return float(outcomes.probs @ weighted ** 2 - (outcomes.probs @ weighted) ** 2)
            assert variance(best[k].item()) <= variance(best[k].item() + shift) + 1e-12


def test_optimal_baseline_counterexample_of_D8():
    """pi = (1/2, 1/4, 1/4), r = (1, 0, 0): b* = 3/10, E[r] = 1/2, and the mean baseline costs exactly 1/40 more."""
    outcomes = SoftmaxBandit(3, logits=[math.log(2), 0.0, 0.0]).enumerate()
    rewards = torch.tensor([1.0, 0.0, 0.0], dtype=F64)
    assert math.isclose(optimal_baseline(outcomes, rewards), 3 / 10, rel_tol=1e-12)
    assert math.isclose(expected_reward(outcomes, rewards), 1 / 2, rel_tol=1e-12)
    gap = baseline_total_variance(outcomes, rewards, 0.5) - baseline_total_variance(outcomes, rewards, 0.3)
    assert math.isclose(gap, 1 / 40, rel_tol=1e-10)


# --- enumeration: multisets against ordered tuples -----------------------------------------


@given(problems(max_outcomes=6), group_sizes, st.sampled_from(["grpo", "population", "dr_grpo", "rloo"]))
def test_multiset_enumeration_equals_ordered_enumeration_for_symmetric_estimators(problem, group_size, kind):
    _, outcomes, rewards = problem
    for estimator in (group_gradient(kind), zero_advantage_indicator(kind)):
        assert_close(expect_group(outcomes, rewards, group_size, estimator, symmetric=True),
                     expect_group(outcomes, rewards, group_size, estimator))
    assert math.isclose(group_total_variance(outcomes, rewards, group_size, group_gradient(kind), symmetric=True),
                        group_total_variance(outcomes, rewards, group_size, group_gradient(kind)),
                        rel_tol=1e-10, abs_tol=1e-10)


@given(problems(max_outcomes=6), group_sizes)
def test_constant_estimator_has_expectation_one(problem, group_size):
    _, outcomes, rewards = problem
    def one(rewards_, scores_, indices_):
        return torch.ones(indices_.shape[0], dtype=F64)
    for symmetric in (False, True):
        assert_close(expect_group(outcomes, rewards, group_size, one, symmetric), 1.0)


def test_expectation_of_one_rollout_function_is_its_weighted_sum():
    outcomes = TabularAutoregressive(2, 2, seed=1).enumerate()
    rewards = torch.tensor([0.5, 1.0, -2.0, 3.0], dtype=F64)
    def first_index(rewards_, scores_, indices_):
        return indices_[:, 0].to(F64) ** 2
    assert_close(expect_group(outcomes, rewards, 3, first_index), outcomes.probs @ torch.arange(4, dtype=F64) ** 2)


def test_group_counts():
    assert num_group_tuples(5, 3) == 125
    assert num_group_tuples(5, 3, symmetric=True) == math.comb(7, 3)
    assert DEFAULT_MAX_TUPLES == 2_000_000


# --- errors --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small():
    outcomes = SoftmaxBandit(4, seed=0).enumerate()
    return outcomes, torch.tensor([1.0, 0.0, 0.5, 0.0], dtype=F64)


def test_oversized_group_enumeration_raises_before_work(small):
    outcomes, rewards = small
    with pytest.raises(EnumerationTooLarge, match="symmetric=True"):
        expect_group(outcomes, rewards, 11, group_gradient())  # 4^11 > 2e6, multisets are 364
    with pytest.raises(EnumerationTooLarge, match="max_tuples = 100"):
        expect_group(outcomes, rewards, 4, group_gradient(), max_tuples=100)  # 4^4 = 256 tuples
    with pytest.raises(EnumerationTooLarge, match="multisets"):
        expect_group(outcomes, rewards, 4, group_gradient(), symmetric=True, max_tuples=10)  # C(7, 4) = 35
    assert expect_group(outcomes, rewards, 11, group_gradient(), symmetric=True).shape == (4,)


def test_symmetric_flag_with_an_order_dependent_estimator_raises(small):
    outcomes, rewards = small
    with pytest.raises(ValueError, match="depends on the order"):
        expect_group(outcomes, rewards, 3, group_mean_baseline_term(0), symmetric=True)


@pytest.mark.parametrize("call", [
    lambda o, r: expect_group(o, r[:3], 2, group_gradient()),
    lambda o, r: expect_group(o, torch.tensor([1.0, float("nan"), 0.0, 0.0], dtype=F64), 2, group_gradient()),
    lambda o, r: expect_group(o, r, 0, group_gradient()),
    lambda o, r: expect_group(o, r, 2, "not callable"),
    lambda o, r: expect_group(o, r, 2, lambda rw, sc, ix: torch.ones(3)),
    lambda o, r: expect_group(o, r, 2, lambda rw, sc, ix: rw[:, 0] / 0.0),
    lambda o, r: expect_group(o, r, 2, rollout_term("dr_grpo", rollout=2)),
    lambda o, r: expect_group(o.sequences, r, 2, group_gradient()),
    lambda o, r: rollout_term("batch"),
    lambda o, r: rollout_term("dr_grpo", rollout=-1),
    lambda o, r: group_gradient("grpo", eps=-1.0),
    lambda o, r: std_scaled_term(0, std="mad"),
    lambda o, r: score_norm_moment(o, r, -1),
], ids=["reward-length", "reward-nan", "group-size-0", "not-callable", "output-rows", "output-inf",
        "rollout-index", "not-outcomes", "batch-kind", "negative-rollout", "negative-eps", "std-kind", "order"])
def test_bad_inputs_raise(small, call):
    outcomes, rewards = small
    with pytest.raises(ValueError):
        call(outcomes, rewards)


def test_optimal_baseline_needs_a_nonzero_score():
    features = torch.zeros(3, 1, dtype=F64)  # a constant feature: pi is uniform and every score is 0
    outcomes = LinearSoftmax(features).enumerate()
    rewards = torch.tensor([1.0, 0.0, 0.0], dtype=F64)
    with pytest.raises(ValueError, match="every baseline is optimal"):
        optimal_baseline(outcomes, rewards)
    assert torch.equal(coordinatewise_optimal_baseline(outcomes, rewards), torch.zeros(1, dtype=F64))


# --- planted bugs --------------------------------------------------------------------------


def leave_one_out_with_wrong_divisor(rollout: int = 0):
    """A planted bug: r_i - (1/(R-1)) sum_j r_j, the sum including r_i itself."""
    def term(rewards, scores, indices):
        group_size = rewards.shape[1]
        baseline = rewards.sum(dim=1) / (group_size - 1)
        return (rewards[:, rollout] - baseline)[:, None] * scores[:, rollout]
    return term


def test_unbiasedness_check_catches_a_wrong_leave_one_out_divisor():
    outcomes = TabularAutoregressive(2, 2, seed=6).enumerate()
    rewards = torch.tensor([1.0, 0.0, 0.25, 0.0], dtype=F64)
    check_expectation(outcomes, rewards, 3, leave_one_out_term(0), 1.0)
    with pytest.raises(AssertionError):
        check_expectation(outcomes, rewards, 3, leave_one_out_with_wrong_divisor(0), 1.0)


@pytest.mark.parametrize("group_size", [2, 8])
def test_group_baseline_claimed_unbiased_is_caught_even_for_large_R(group_size):
    """The factor (R-1)/R is 7/8 for R = 8: still 12.5 % off, far beyond 1e-10."""
    outcomes = SoftmaxBandit(3, seed=7).enumerate()
    rewards = torch.tensor([1.0, 0.0, 0.0], dtype=F64)
    check_expectation(outcomes, rewards, group_size, dr_grpo_group_gradient(), (group_size - 1) / group_size,
                      symmetric=True)
    with pytest.raises(AssertionError):
        check_expectation(outcomes, rewards, group_size, dr_grpo_group_gradient(), 1.0, symmetric=True)
