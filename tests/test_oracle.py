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


# --- exact messages, defaults, tolerances and chunking (found by mutation testing, experiments/mutation) --


def uniform_outcomes(num_outcomes: int, num_parameters: int = 1):
    """Outcomes 0..N-1 with probability 1/N each and zero scores (only the enumeration matters)."""
    from grpo_verify.synthetic import Outcomes
    return Outcomes(torch.arange(num_outcomes)[:, None], torch.full((num_outcomes,), 1.0 / num_outcomes, dtype=F64),
                    torch.zeros(num_outcomes, num_parameters, dtype=F64))


ORACLE_ERROR_MESSAGES = [
    pytest.param(lambda o, r: expect_group(o, r[:3], 2, group_gradient()),
                 "need one reward per outcome, shape (4,); got shape (3,)", id="reward-length"),
    pytest.param(lambda o, r: expect_group(o, torch.tensor([1.0, math.nan, 0.0, 0.0], dtype=F64), 2,
                                           group_gradient()),
                 "rewards must be finite", id="reward-nan"),
    pytest.param(lambda o, r: expect_group(o.sequences, r, 2, group_gradient()),
                 "outcomes must be grpo_verify.synthetic.Outcomes, got Tensor", id="not-outcomes"),
    pytest.param(lambda o, r: expect_group(o, r, 0, group_gradient()),
                 "group_size must be an int >= 1, got 0", id="group-size-0"),
    pytest.param(lambda o, r: expect_group(o, r, 2, "not callable"),
                 "estimator must be callable: f(rewards (C, R), scores (C, R, P), indices (C, R))",
                 id="not-callable"),
    # 4^2 = 16 ordered pairs, one chunk of C = 16 groups (not R = 2).
    pytest.param(lambda o, r: expect_group(o, r, 2, lambda rw, sc, ix: torch.ones(3)),
                 "the estimator must return a tensor with one row per group, shape (16, ...); got torch.Size([3])",
                 id="output-rows"),
    pytest.param(lambda o, r: expect_group(o, r, 2, lambda rw, sc, ix: 1.0),
                 "the estimator must return a tensor with one row per group, shape (16, ...); got float",
                 id="output-not-a-tensor"),
    pytest.param(lambda o, r: expect_group(o, r, 2, lambda rw, sc, ix: rw[:, 0] / 0.0),
                 "the estimator returned NaN or inf for some group", id="output-inf"),
    pytest.param(lambda o, r: expect_group(o, r, 2, rollout_term("dr_grpo", rollout=2)),
                 "rollout 2 does not exist in a group of R = 2", id="rollout-index"),
    pytest.param(lambda o, r: rollout_term("dr_grpo", rollout=-1),
                 "rollout must be an int >= 0, got -1", id="negative-rollout"),
    pytest.param(lambda o, r: rollout_term("batch"),
                 "kind must be one of ('grpo', 'population', 'dr_grpo', 'rloo'), got 'batch' (batch scaling "
                 "divides by the std of a whole batch of groups, so it is not a function of one group)",
                 id="batch-kind"),
    pytest.param(lambda o, r: group_gradient("grpo", eps=math.inf),
                 "eps must be finite and >= 0, got inf", id="infinite-eps"),
    pytest.param(lambda o, r: zero_advantage_indicator("grpo", eps=-1.0),
                 "eps must be finite and >= 0, got -1.0", id="negative-eps"),
    pytest.param(lambda o, r: std_scaled_term(0, std="mad"),
                 "std must be 'sample' or 'population', got 'mad'", id="std-kind"),
    pytest.param(lambda o, r: score_norm_moment(o, r, -1),
                 "order must be an int >= 0, got -1", id="order"),
    pytest.param(lambda o, r: expect_group(o, r, 11, group_gradient()),
                 "ordered tuples of R = 11 rollouts over N = 4 outcomes: 4194304 groups, more than max_tuples = "
                 "2000000 (a symmetric estimator could use symmetric=True: multisets are fewer)", id="hint"),
    # C(7, 4) = 35 multisets: the hint is given when they fit, also exactly.
    pytest.param(lambda o, r: expect_group(o, r, 4, group_gradient(), max_tuples=35),
                 "ordered tuples of R = 4 rollouts over N = 4 outcomes: 256 groups, more than max_tuples = 35 "
                 "(a symmetric estimator could use symmetric=True: multisets are fewer)", id="hint-at-the-limit"),
    pytest.param(lambda o, r: expect_group(o, r, 4, group_gradient(), max_tuples=34),
                 "ordered tuples of R = 4 rollouts over N = 4 outcomes: 256 groups, more than max_tuples = 34",
                 id="no-hint"),
    pytest.param(lambda o, r: expect_group(o, r, 4, group_gradient(), symmetric=True, max_tuples=34),
                 "multisets of R = 4 rollouts over N = 4 outcomes: 35 groups, more than max_tuples = 34",
                 id="multisets"),
]


@pytest.mark.parametrize("call, message", ORACLE_ERROR_MESSAGES)
def test_bad_input_raises_value_error_with_the_exact_message(small, call, message):
    outcomes, rewards = small
    with pytest.raises(ValueError) as raised:
        call(outcomes, rewards)
    assert str(raised.value) == message


def test_optimal_baseline_message():
    outcomes = LinearSoftmax(torch.zeros(3, 1, dtype=F64)).enumerate()
    with pytest.raises(ValueError) as raised:
        optimal_baseline(outcomes, torch.tensor([1.0, 0.0, 0.0], dtype=F64))
    assert str(raised.value) == "E[||g||^2] = 0: the score vanishes on every outcome, so every baseline is optimal"


def test_enumeration_of_exactly_max_tuples_groups_is_allowed(small):
    outcomes, rewards = small
    one = lambda rw, sc, ix: torch.ones(ix.shape[0], dtype=F64)  # noqa: E731
    assert_close(expect_group(outcomes, rewards, 4, one, symmetric=True, max_tuples=35), 1.0)
    assert_close(expect_group(outcomes, rewards, 4, one, max_tuples=256), 1.0)


def test_rewards_become_float64_whatever_their_input_type(small):
    outcomes, _ = small
    # 0.1 as a float64 (as float32 it would be 0.1 + 1.5e-9).
    for rewards in ([0.1, 0.0, 0.0, 0.0], torch.tensor([0.1, 0.0, 0.0, 0.0], dtype=F64)):
        assert expected_reward(outcomes, rewards) == float(outcomes.probs[0].item() * 0.1)


# A group of R = 3 with rewards (1, 0, 1/2) and one-parameter scores (1, 2, 4): dr_grpo advantages
# (1/2, -1/2, 0); leave-one-out (3/4, -3/4, 0); sample std 1/2, population std sqrt(1/6).
GROUP_REWARDS = torch.tensor([[1.0, 0.0, 0.5]], dtype=F64)
GROUP_SCORES = torch.tensor([[[1.0], [2.0], [4.0]]], dtype=F64)
GROUP_INDICES = torch.tensor([[0, 1, 2]])


# Each estimator is built inside the test (lambda), so the test exercises the defaults it is called with.
@pytest.mark.parametrize("make_estimator, expected", [
    (lambda: rollout_term(), 0.5),  # defaults: dr_grpo, rollout 0
    (lambda: rollout_term("dr_grpo", 1), -1.0),
    (lambda: group_mean_baseline_term(), 0.5),
    (lambda: group_mean_baseline_term(1), -1.0),
    (lambda: leave_one_out_term(), 0.75),
    (lambda: leave_one_out_term(1), -1.5),
    (lambda: std_scaled_term(), 0.5 / (0.5 + 1e-4)),  # defaults: rollout 0, sample std, eps 1e-4
    (lambda: std_scaled_term(1, "population", eps=0.0), -math.sqrt(6)),
    (lambda: group_gradient(), (0.5 * 1 - 0.5 * 2 + 0) / 3),
], ids=["rollout-default", "rollout-1", "group-mean-default", "group-mean-1", "loo-default", "loo-1",
        "std-default", "std-population-1", "group-gradient-default"])
def test_ready_made_estimators_on_one_group(make_estimator, expected):
    value = make_estimator()(GROUP_REWARDS, GROUP_SCORES, GROUP_INDICES)
    assert value.shape == (1, 1)
    assert math.isclose(value.item(), expected, rel_tol=1e-14)


def test_zero_advantage_indicator_default_is_float64_one_for_constant_groups():
    rewards = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.5]], dtype=F64)
    value = zero_advantage_indicator()(rewards, torch.zeros(2, 3, 1, dtype=F64), torch.zeros(2, 3, dtype=torch.int64))
    assert value.dtype == F64 and torch.equal(value, torch.tensor([1.0, 0.0], dtype=F64))


def test_bool_and_float32_estimators_are_evaluated_in_float64():
    outcomes = SoftmaxBandit(2, logits=[0.3, -0.2]).enumerate()
    rewards = torch.tensor([0.0, 1.0], dtype=F64)
    p = outcomes.probs[1].item()
    all_succeed = lambda rw, sc, ix: (rw == 1).all(dim=1)  # noqa: E731  (a bool estimator)
    assert_close(expect_group(outcomes, rewards, 3, all_succeed), p ** 3)
    assert math.isclose(group_total_variance(outcomes, rewards, 3, all_succeed), p ** 3 * (1 - p ** 3),
                        rel_tol=1e-12)
    # A constant float32 estimator has variance 0; squared in float32 first, it would be off by 4e-10.
    tenth = lambda rw, sc, ix: torch.full((ix.shape[0],), 0.1, dtype=torch.float32)  # noqa: E731
    assert abs(group_total_variance(outcomes, rewards, 2, tenth)) < 1e-15


def test_group_total_variance_of_an_order_dependent_estimator():
    """Var[1{o_1 = 0}] = p_0 (1 - p_0): the estimator reads the indices and is not symmetric (the default)."""
    outcomes, rewards = SoftmaxBandit(3, seed=2).enumerate(), torch.tensor([1.0, 0.0, 0.0], dtype=F64)
    p0 = outcomes.probs[0].item()
    first_is_zero = lambda rw, sc, ix: (ix[:, 0] == 0).to(F64)  # noqa: E731
    assert math.isclose(group_total_variance(outcomes, rewards, 2, first_is_zero), p0 * (1 - p0), rel_tol=1e-12)
    with pytest.raises(EnumerationTooLarge):
        group_total_variance(outcomes, rewards, 2, first_is_zero, max_tuples=8)  # 3^2 = 9 ordered pairs
    # symmetric=True enumerates the C(4, 2) = 6 multisets, within max_tuples = 6 where the 9 pairs are not.
    variance = group_total_variance(outcomes, rewards, 2, group_gradient(), symmetric=True, max_tuples=6)
    assert math.isclose(variance, group_total_variance(outcomes, rewards, 2, group_gradient()), rel_tol=1e-10)


def test_symmetric_enumeration_visits_each_multiset_once():
    outcomes, rewards = uniform_outcomes(4), torch.zeros(4, dtype=F64)
    seen = []
    def record(rw, sc, ix):
        seen.append(ix.clone())
        return torch.ones(ix.shape[0], dtype=F64)
    expect_group(outcomes, rewards, 3, record, symmetric=True)
    rows = torch.cat(seen[:1] + seen[3:])  # calls 2 and 3 are the symmetry check's permutations
    assert rows.shape[0] == math.comb(6, 3)
    assert torch.all(rows[:, 1:] >= rows[:, :-1])


def test_large_groups_have_exact_multinomial_weights():
    """Binary rewards, R = 30 (30! overflows int64): E[#successes] = R p and P(zero advantages) = p^R + q^R (D6)."""
    outcomes = SoftmaxBandit(2, logits=[0.3, -0.2]).enumerate()
    rewards = torch.tensor([0.0, 1.0], dtype=F64)
    p = outcomes.probs[1].item()
    successes = lambda rw, sc, ix: rw.sum(dim=1)  # noqa: E731
    for group_size in (14, 21, 30):
        assert math.isclose(expect_group(outcomes, rewards, group_size, successes, symmetric=True).item(),
                            group_size * p, rel_tol=1e-13)
        assert math.isclose(expect_group(outcomes, rewards, group_size, zero_advantage_indicator(),
                                         symmetric=True).item(),
                            p ** group_size + (1 - p) ** group_size, rel_tol=1e-12)


def test_symmetry_check_on_groups_of_two():
    bandit = SoftmaxBandit(2, seed=0).enumerate()
    with pytest.raises(ValueError, match="depends on the order"):
        expect_group(bandit, torch.tensor([0.0, 1.0], dtype=F64), 2, group_mean_baseline_term(0), symmetric=True)
    outcomes, rewards = uniform_outcomes(2), torch.zeros(2, dtype=F64)
    first = lambda c: (lambda rw, sc, ix: c * ix[:, 0].to(F64))  # noqa: E731  order dependence of size c
    with pytest.raises(ValueError, match="depends on the order"):
        expect_group(outcomes, rewards, 2, first(1.5e-9), symmetric=True)


def test_symmetry_tolerance_is_1e_9_relative_to_one_plus_the_largest_value():
    outcomes, rewards = uniform_outcomes(2), torch.zeros(2, dtype=F64)
    # f = offset + c * o_1 on the sorted pairs (0, 0), (0, 1), (1, 1) (weights 1/4, 1/2, 1/4): offset + c / 4.
    first = lambda c, offset=0.0: (lambda rw, sc, ix: offset + c * ix[:, 0].to(F64))  # noqa: E731
    assert_close(expect_group(outcomes, rewards, 2, first(0.5e-9), symmetric=True), 0.5e-9 / 4, tol=1e-20)
    # 1e-7 on values of 1000 is round-off: 1e-9 * (1 + 1000) allows 1e-6.
    assert_close(expect_group(outcomes, rewards, 2, first(1e-7, 1000.0), symmetric=True), 1000.0 + 1e-7 / 4)
    # A gap exactly at the tolerance, c = 1e-9 * (1 + c) in float64 arithmetic, is accepted.
    c = 1e-9 * (1.0 + 1e-9 / (1 - 1e-9))
    assert c == 1e-9 * (1.0 + c)
    expect_group(outcomes, rewards, 2, first(c), symmetric=True)


@pytest.mark.parametrize("symmetric", [False, True])
def test_chunks_gather_at_most_2_pow_22_score_entries(symmetric):
    """expect_group calls f on chunks of C groups with C * R * P <= 2^22 (32 MiB of float64 scores)."""
    num_parameters = 2 ** 16
    outcomes, rewards = uniform_outcomes(8, num_parameters), torch.zeros(8, dtype=F64)
    rows = []
    def record(rw, sc, ix):
        rows.append(sc.shape[0])
        assert sc.shape[1:] == (2, num_parameters)
        return torch.ones(ix.shape[0], dtype=F64)
    assert_close(expect_group(outcomes, rewards, 2, record, symmetric=symmetric), 1.0)
    if symmetric:
        rows = rows[:1] + rows[3:]  # without the symmetry check's two calls
    assert sum(rows) == (36 if symmetric else 64)
    assert max(rows) * 2 * num_parameters <= 2 ** 22


def test_a_group_larger_than_the_chunk_budget_is_evaluated_alone():
    num_parameters = 2 ** 21 + 1  # R * P > 2^22 for R = 2: one group per chunk
    outcomes, rewards = uniform_outcomes(2, num_parameters), torch.zeros(2, dtype=F64)
    rows = []
    def record(rw, sc, ix):
        rows.append(ix.shape[0])
        return torch.ones(ix.shape[0], dtype=F64)
    assert_close(expect_group(outcomes, rewards, 2, record), 1.0)
    assert rows == [1, 1, 1, 1]
