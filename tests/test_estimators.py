"""Property tests for grpo_verify.estimators, each family shown to catch a planted bug (end of file).

Every property test has an @example that the matching planted bug breaks, so the bug is caught
in Hypothesis' explicit phase, under every profile.
"""

import math

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

import grpo_verify.estimators as estimators

KINDS = estimators.ADVANTAGE_KINDS
STD_KINDS = ("grpo", "population", "batch")


# --- strategies ----------------------------------------------------------------------------


@st.composite
def reward_tensors(draw, min_groups=1, max_groups=4):
    """(B, R) float64 rewards, R in 2..8: binary, continuous, or ties among a few values; some groups constant."""
    groups = draw(st.integers(min_groups, max_groups))
    group_size = draw(st.integers(2, 8))
    style = draw(st.sampled_from(["binary", "continuous", "ties"]))
    if style == "binary":
        value = st.sampled_from([0.0, 1.0])
    elif style == "continuous":
        value = st.floats(-100, 100, allow_subnormal=False)
    else:
        value = st.sampled_from(draw(st.lists(st.floats(-10, 10, allow_subnormal=False), min_size=1, max_size=3)))
    rows = []
    for _ in range(groups):
        if draw(st.integers(0, 4)) == 0:
            rows.append([draw(value)] * group_size)
        else:
            rows.append(draw(st.lists(value, min_size=group_size, max_size=group_size)))
    return torch.tensor(rows, dtype=torch.float64)


@st.composite
def completion_masks(draw, num_sequences, max_length=6):
    """(N, T) right-padded 0/1 masks; lengths vary and may be 0."""
    width = draw(st.integers(1, max_length))
    lengths = draw(st.lists(st.integers(0, width), min_size=num_sequences, max_size=num_sequences))
    return torch.tensor([[1] * n + [0] * (width - n) for n in lengths], dtype=torch.int64)


@st.composite
def token_batches(draw):
    """Per-token log-probabilities with advantages and a mask: (logps, advantages, mask), float64."""
    num_sequences = draw(st.integers(1, 6))
    mask = draw(completion_masks(num_sequences))
    log_probability = st.floats(-5, 0)
    logps = torch.tensor(
        draw(st.lists(st.lists(log_probability, min_size=mask.shape[1], max_size=mask.shape[1]),
                      min_size=num_sequences, max_size=num_sequences)),
        dtype=torch.float64,
    )
    advantages = torch.tensor(draw(st.lists(st.floats(-3, 3), min_size=num_sequences, max_size=num_sequences)),
                              dtype=torch.float64)
    return logps, advantages, mask


def constant_groups(rewards):
    return rewards.amax(dim=1) == rewards.amin(dim=1)


def well_conditioned_groups(rewards):
    """Non-constant groups whose spread is not lost to round-off in r - mean."""
    spread = rewards.amax(dim=1) - rewards.amin(dim=1)
    return spread >= 1e-6 * rewards.abs().amax(dim=1).clamp(min=1)


# --- group advantages ----------------------------------------------------------------------


@given(reward_tensors(), st.sampled_from(KINDS), st.sampled_from([0.0, 1e-4]))
@example(torch.tensor([[0.0, 1.0]], dtype=torch.float64), "rloo", 0.0)
def test_advantages_sum_to_zero_per_group(rewards, kind, eps):
    advantages = estimators.group_advantages(rewards, kind, eps)
    checked = well_conditioned_groups(rewards)
    sums = advantages.sum(dim=1)[checked]
    sizes = advantages.abs().sum(dim=1)[checked]
    assert torch.all(sums.abs() <= 1e-9 * sizes + 1e-12)


@given(reward_tensors())
@example(torch.tensor([[0.0, 1.0, 1.0]], dtype=torch.float64))
def test_sum_of_squares_is_r_minus_one_for_sample_std_and_r_for_population(rewards):
    group_size = rewards.shape[1]
    checked = well_conditioned_groups(rewards)
    sample = (estimators.group_advantages(rewards, "grpo", eps=0.0) ** 2).sum(dim=1)
    population = (estimators.group_advantages(rewards, "population", eps=0.0) ** 2).sum(dim=1)
    assert torch.allclose(sample[checked], torch.full_like(sample[checked], group_size - 1), rtol=1e-8)
    assert torch.allclose(population[checked], torch.full_like(population[checked], group_size), rtol=1e-8)


@given(reward_tensors())
@example(torch.tensor([[0.0, 1.0]], dtype=torch.float64))
def test_rloo_is_r_over_r_minus_one_times_dr_grpo(rewards):
    group_size = rewards.shape[1]
    scaled = group_size / (group_size - 1) * estimators.group_advantages(rewards, "dr_grpo")
    tolerance = 1e-12 * (1 + rewards.abs().max().item())
    assert torch.allclose(estimators.group_advantages(rewards, "rloo"), scaled, rtol=0, atol=tolerance)


@given(reward_tensors(min_groups=2), st.sampled_from([0.0, 1e-4]))
@example(torch.tensor([[0.0, 1.0], [0.0, 4.0]], dtype=torch.float64), 1e-4)
def test_batch_advantages_share_one_scale(rewards, eps):
    shared_scale = rewards.std() + eps
    centred = estimators.group_advantages(rewards, "dr_grpo")
    expected = centred / shared_scale if shared_scale > 0 else torch.zeros_like(centred)
    assert torch.allclose(estimators.group_advantages(rewards, "batch", eps), expected, rtol=1e-12, atol=1e-12)


@given(reward_tensors(), st.sampled_from(KINDS), st.sampled_from([0.0, 1e-4]))
@example(torch.full((1, 3), 0.1, dtype=torch.float64), "grpo", 0.0)
@example(torch.full((1, 3), 0.1, dtype=torch.float64), "grpo", 1e-4)
def test_degenerate_groups_give_exact_zeros_never_nan(rewards, kind, eps):
    advantages = estimators.group_advantages(rewards, kind, eps)
    assert torch.isfinite(advantages).all()
    assert torch.all(advantages[constant_groups(rewards)] == 0)


def test_float32_keeps_dtype():
    rewards = torch.tensor([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0]], dtype=torch.float32)
    for kind in KINDS:
        advantages = estimators.group_advantages(rewards, kind)
        assert advantages.dtype == torch.float32 and advantages.shape == rewards.shape
        assert torch.all(advantages[1] == 0)


def test_known_grpo_advantages_match_trl_formula():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0]], dtype=torch.float64)
    centred = rewards - 0.5
    expected = centred / (rewards.std(dim=1, keepdim=True) + 1e-4)
    assert torch.allclose(estimators.group_advantages(rewards), expected, rtol=1e-15)


def check_bad_rewards_rejected():
    with pytest.raises(ValueError, match=r"\[1, 3\]"):
        estimators.group_advantages(torch.tensor([[0.0, 1.0], [math.nan, 1.0], [0.0, 0.0], [0.0, math.inf]]))
    with pytest.raises(ValueError, match="R = 1"):
        estimators.group_advantages(torch.zeros(3, 1))
    with pytest.raises(ValueError, match="shape"):
        estimators.group_advantages(torch.zeros(4))
    with pytest.raises(ValueError, match="floating"):
        estimators.group_advantages(torch.zeros(2, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="kind"):
        estimators.group_advantages(torch.zeros(2, 2), kind="ppo")
    with pytest.raises(ValueError, match="eps"):
        estimators.group_advantages(torch.tensor([[0.0, 1.0]]), eps=-1.0)


def test_bad_rewards_raise_value_error():
    for kind in KINDS:
        with pytest.raises(ValueError, match=r"\[0\]"):
            estimators.group_advantages(torch.tensor([[math.nan, 1.0]]), kind)
    check_bad_rewards_rejected()


# --- token advantages, surrogate and KL ----------------------------------------------------


@given(reward_tensors(), st.data())
@example(torch.tensor([[1.0, 0.0]], dtype=torch.float64), None)
def test_token_advantages_broadcast_times_mask(rewards, data):
    advantages = estimators.group_advantages(rewards)
    num_sequences = advantages.numel()
    mask = torch.tensor([[1, 0]] * num_sequences) if data is None else data.draw(completion_masks(num_sequences))
    tokens = estimators.token_advantages(advantages, mask)
    for flat_input in (advantages, advantages.reshape(-1)):
        assert torch.equal(estimators.token_advantages(flat_input, mask), tokens)
    for i in range(num_sequences):
        for t in range(mask.shape[1]):
            assert tokens[i, t] == advantages.reshape(-1)[i] * mask[i, t]


def tiny_policy_logps(parameters, tokens):
    """log pi(token) under softmax(parameters); parameters (N, T, V), tokens (N, T)."""
    return torch.log_softmax(parameters, dim=-1).gather(-1, tokens[..., None]).squeeze(-1)


@given(token_batches(), st.integers(2, 5), st.integers(0, 2**31 - 1))
@example((torch.zeros(1, 2, dtype=torch.float64), torch.tensor([1.0], dtype=torch.float64), torch.ones(1, 2)), 3, 0)
def test_surrogate_gradient_at_ratio_one_is_policy_gradient(batch, vocabulary, seed):
    _, advantages, mask = batch
    generator = torch.Generator().manual_seed(seed)
    parameters = torch.randn(*mask.shape, vocabulary, generator=generator, dtype=torch.float64, requires_grad=True)
    tokens = torch.randint(vocabulary, mask.shape, generator=generator)
    logps = tiny_policy_logps(parameters, tokens)
    loss = estimators.per_token_loss(logps, logps.detach(), advantages, mask).sum()
    (surrogate_gradient,) = torch.autograd.grad(loss, parameters)
    policy_gradient_loss = -(advantages[:, None] * mask * tiny_policy_logps(parameters, tokens)).sum()
    (expected,) = torch.autograd.grad(policy_gradient_loss, parameters)
    assert torch.allclose(surrogate_gradient, expected, rtol=1e-10, atol=1e-12)


@given(token_batches(), st.lists(st.floats(-1, 1), min_size=36, max_size=36), st.sampled_from([(0.2, 0.2), (0.2, 0.28)]))
@example((torch.zeros(1, 1, dtype=torch.float64), torch.tensor([1.0], dtype=torch.float64), torch.ones(1, 1)),
         [math.log(1.5)] * 36, (0.2, 0.28))
def test_surrogate_value_and_clipped_gradient(batch, log_ratio_values, clip):
    old_logps, advantages, mask = batch
    eps_low, eps_high = clip
    log_ratio = torch.tensor(log_ratio_values[: old_logps.numel()], dtype=torch.float64).reshape(old_logps.shape)
    logps = (old_logps + log_ratio).requires_grad_(True)
    losses = estimators.per_token_loss(logps, old_logps, advantages, mask, eps_low, eps_high)
    (gradient,) = torch.autograd.grad(losses.sum(), logps)
    for i in range(mask.shape[0]):
        advantage = advantages[i].item()
        for t in range(mask.shape[1]):
            ratio = math.exp(logps[i, t].item() - old_logps[i, t].item())
            clipped = min(max(ratio, 1 - eps_low), 1 + eps_high)
            expected = -min(ratio * advantage, clipped * advantage) if mask[i, t] else 0.0
            assert math.isclose(losses[i, t].item(), expected, rel_tol=1e-12, abs_tol=1e-12)
            clipped_away = (advantage > 0 and ratio > 1 + eps_high) or (advantage < 0 and ratio < 1 - eps_low)
            expected_gradient = 0.0 if (clipped_away or not mask[i, t]) else -advantage * ratio
            assert math.isclose(gradient[i, t].item(), expected_gradient, rel_tol=1e-12, abs_tol=1e-12)


@given(token_batches(), st.floats(0.01, 1.0))
@example((torch.full((1, 1), -1.0, dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64), torch.ones(1, 1)),
         0.5)
def test_k3_kl_is_nonnegative_with_zero_value_and_gradient_at_the_reference(batch, beta):
    ref_logps, _, mask = batch
    logps = ref_logps.clone().requires_grad_(True)
    zero_advantages = torch.zeros(mask.shape[0], dtype=torch.float64)
    losses = estimators.per_token_loss(logps, logps.detach(), zero_advantages, mask, beta=beta, ref_logps=ref_logps)
    (gradient,) = torch.autograd.grad(losses.sum(), logps)
    assert torch.all(losses == 0) and torch.all(gradient == 0)
    shifted = ref_logps + torch.linspace(-3, 3, ref_logps.numel(), dtype=torch.float64).reshape(ref_logps.shape)
    assert torch.all(estimators.k3_kl(shifted, ref_logps) >= 0)


def test_surrogate_rejects_bad_input():
    logps = torch.zeros(2, 3)
    mask = torch.ones(2, 3)
    with pytest.raises(ValueError, match="ref_logps"):
        estimators.per_token_loss(logps, logps, torch.zeros(2), mask, beta=0.1)
    with pytest.raises(ValueError, match="one advantage per sequence"):
        estimators.per_token_loss(logps, logps, torch.zeros(3), mask)
    with pytest.raises(ValueError, match="0 and 1"):
        estimators.per_token_loss(logps, logps, torch.zeros(2), 2 * mask)
    with pytest.raises(ValueError, match="shape"):
        estimators.token_advantages(torch.zeros(2), torch.ones(3, 3))


# --- aggregations --------------------------------------------------------------------------


def loop_aggregate(losses, mask, kind, max_completion_length):
    rows = [[(losses[i, t].item(), bool(mask[i, t])) for t in range(mask.shape[1])] for i in range(mask.shape[0])]
    valid = [[loss for loss, keep in row if keep] for row in rows]
    if kind == "grpo":
        return sum(sum(row) / max(1, len(row)) for row in valid) / len(valid)
    if kind == "dr_grpo":
        return sum(sum(row) for row in valid) / (len(valid) * max_completion_length)
    return sum(sum(row) for row in valid) / max(1, sum(len(row) for row in valid))


@given(token_batches(), st.sampled_from(estimators.AGGREGATION_KINDS), st.integers(0, 4))
@example((torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64), torch.zeros(1, dtype=torch.float64),
          torch.tensor([[1, 0, 0]])), "grpo", 0)
def test_aggregations_match_loops(batch, kind, extra_length):
    losses, _, mask = batch
    max_completion_length = mask.shape[1] + extra_length
    # Padding holds garbage (NaN) that must not leak into the result.
    losses = torch.where(mask.bool(), losses, torch.full_like(losses, math.nan))
    result = estimators.aggregate_loss(losses, mask, kind, max_completion_length)
    assert math.isclose(result.item(), loop_aggregate(losses, mask, kind, max_completion_length),
                        rel_tol=1e-12, abs_tol=1e-12)


def test_dr_grpo_rejects_a_length_below_the_longest_completion():
    with pytest.raises(ValueError, match="max_completion_length"):
        estimators.aggregate_loss(torch.zeros(1, 3), torch.ones(1, 3), "dr_grpo", max_completion_length=2)
    with pytest.raises(ValueError, match="kind"):
        estimators.aggregate_loss(torch.zeros(1, 3), torch.ones(1, 3), "sum")


# --- planted bugs: every property family above must catch one ------------------------------

_real_population_std_advantages = estimators.population_std_advantages
_real_grpo_advantages = estimators.grpo_advantages


def rloo_dividing_the_full_sum(rewards):
    return rewards - rewards.sum(dim=1, keepdim=True) / (rewards.shape[1] - 1)


def grpo_with_biased_std(rewards, eps=estimators.DEFAULT_EPS):
    return _real_population_std_advantages(rewards, eps)


def rloo_without_factor(rewards):
    return rewards - rewards.mean(dim=1, keepdim=True)


def batch_with_group_std(rewards, eps=estimators.DEFAULT_EPS):
    return _real_grpo_advantages(rewards, eps)


def keep_constant_groups_as_computed(advantages, rewards):
    return advantages


def no_reward_validation(rewards):
    return None


def token_advantages_without_mask(sequence_advantages, completion_mask):
    return sequence_advantages.reshape(-1, 1).expand(-1, completion_mask.shape[1])


def surrogate_with_inverted_ratio(logps, old_logps, advantages, eps_low=0.2, eps_high=None):
    eps_high = eps_low if eps_high is None else eps_high
    ratio = torch.exp(old_logps - logps)
    advantage = advantages.reshape(-1)[:, None]
    return torch.minimum(ratio * advantage, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * advantage)


def surrogate_with_max(logps, old_logps, advantages, eps_low=0.2, eps_high=None):
    eps_high = eps_low if eps_high is None else eps_high
    ratio = torch.exp(logps - old_logps)
    advantage = advantages.reshape(-1)[:, None]
    return torch.maximum(ratio * advantage, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * advantage)


def k1_kl(logps, ref_logps):
    return logps - ref_logps


def grpo_aggregate_over_padded_width(per_token_loss, completion_mask):
    masked = torch.where(completion_mask.bool(), per_token_loss, torch.zeros_like(per_token_loss))
    return (masked.sum(dim=1) / per_token_loss.shape[1]).mean()


PLANTED_BUGS = [
    pytest.param(test_advantages_sum_to_zero_per_group, "rloo_advantages", rloo_dividing_the_full_sum,
                 id="zero-sum"),
    pytest.param(test_sum_of_squares_is_r_minus_one_for_sample_std_and_r_for_population, "grpo_advantages",
                 grpo_with_biased_std, id="sum-of-squares"),
    pytest.param(test_rloo_is_r_over_r_minus_one_times_dr_grpo, "rloo_advantages", rloo_without_factor,
                 id="rloo-factor"),
    pytest.param(test_batch_advantages_share_one_scale, "batch_std_advantages", batch_with_group_std,
                 id="batch-scale"),
    pytest.param(test_degenerate_groups_give_exact_zeros_never_nan, "_zero_constant_groups",
                 keep_constant_groups_as_computed, id="degenerate"),
    pytest.param(check_bad_rewards_rejected, "_validate_rewards", no_reward_validation, id="bad-input"),
    pytest.param(test_token_advantages_broadcast_times_mask, "token_advantages", token_advantages_without_mask,
                 id="token-advantages"),
    pytest.param(test_surrogate_gradient_at_ratio_one_is_policy_gradient, "clipped_surrogate",
                 surrogate_with_inverted_ratio, id="policy-gradient"),
    pytest.param(test_surrogate_value_and_clipped_gradient, "clipped_surrogate", surrogate_with_max, id="clipping"),
    pytest.param(test_k3_kl_is_nonnegative_with_zero_value_and_gradient_at_the_reference, "k3_kl", k1_kl,
                 id="k3-kl"),
    pytest.param(test_aggregations_match_loops, "aggregate_grpo", grpo_aggregate_over_padded_width,
                 id="aggregation"),
]


@pytest.mark.parametrize("property_check, name, buggy", PLANTED_BUGS)
def test_planted_bug_is_detected(monkeypatch, property_check, name, buggy):
    monkeypatch.setattr(estimators, name, buggy)
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        property_check()


# --- exact messages, defaults and boundaries (found by mutation testing, experiments/mutation) ---


ERROR_MESSAGES = [
    pytest.param(lambda: estimators.group_advantages([[0.0, 1.0]]),
                 "rewards must be a torch.Tensor, got list", id="rewards-not-a-tensor"),
    pytest.param(lambda: estimators.group_advantages(torch.zeros(4)),
                 "rewards must have shape (B, R), got shape (4,)", id="rewards-1d"),
    pytest.param(lambda: estimators.group_advantages(torch.zeros(2, 2, dtype=torch.int64)),
                 "rewards must be floating point, got torch.int64; convert with rewards.float()", id="rewards-int"),
    pytest.param(lambda: estimators.group_advantages(torch.zeros(3, 1)),
                 "each group needs at least R = 2 completions to compare, got R = 1", id="group-of-one"),
    pytest.param(lambda: estimators.group_advantages(torch.zeros(0, 3)),
                 "rewards must hold at least one group, got B = 0", id="no-groups"),
    pytest.param(lambda: estimators.group_advantages(torch.tensor([[0.0, 1.0], [math.nan, 1.0], [0.0, math.inf]])),
                 "rewards must be finite; NaN or inf in group index(es) [1, 2]", id="non-finite-rewards"),
    pytest.param(lambda: estimators.group_advantages(torch.tensor([[0.0, 1.0]]), eps=math.inf),
                 "eps must be finite and >= 0, got inf", id="eps-inf"),
    pytest.param(lambda: estimators.group_advantages(torch.tensor([[0.0, 1.0]]), kind="ppo"),
                 "unknown advantage kind 'ppo'; choose one of ('grpo', 'population', 'dr_grpo', 'batch', 'rloo')",
                 id="advantage-kind"),
    pytest.param(lambda: estimators.token_advantages(torch.zeros(2, 1, 1), torch.ones(2, 3)),
                 "sequence advantages must have shape (N,) or (B, R), got (2, 1, 1)", id="advantages-3d"),
    pytest.param(lambda: estimators.token_advantages(torch.zeros(2), torch.ones(3, 3)),
                 "completion mask must have shape (2, T), got (3, 3)", id="mask-rows"),
    pytest.param(lambda: estimators.token_advantages(torch.zeros(2), torch.full((2, 3), 2)),
                 "completion mask must hold only 0 and 1", id="mask-values"),
    pytest.param(lambda: estimators.per_token_loss(torch.zeros(2, 3), torch.zeros(2, 2), torch.zeros(2),
                                                   torch.ones(2, 3)),
                 "logps and old_logps must share one (N, T) shape, got (2, 3) and (2, 2)", id="old-logps-shape"),
    pytest.param(lambda: estimators.per_token_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(3),
                                                   torch.ones(2, 3)),
                 "need one advantage per sequence: 3 vs N = 2", id="advantage-count"),
    pytest.param(lambda: estimators.per_token_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2),
                                                   torch.ones(2, 4)),
                 "completion mask shape (2, 4) differs from logps shape (2, 3)", id="mask-width"),
    pytest.param(lambda: estimators.per_token_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2),
                                                   torch.ones(2, 3), eps_low=1.0),
                 "need 0 <= eps_low < 1 and eps_high >= 0, got 1.0, None", id="eps-low-one"),
    pytest.param(lambda: estimators.per_token_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2),
                                                   torch.ones(2, 3), beta=-0.5),
                 "beta must be >= 0, got -0.5", id="negative-beta"),
    pytest.param(lambda: estimators.per_token_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2),
                                                   torch.ones(2, 3), beta=0.1),
                 "beta != 0 needs ref_logps of the same (N, T) shape as logps", id="beta-without-reference"),
    pytest.param(lambda: estimators.aggregate_loss(torch.zeros(3), torch.ones(3)),
                 "per-token loss must have shape (N, T), got (3,)", id="loss-1d"),
    pytest.param(lambda: estimators.aggregate_loss(torch.zeros(2, 3), torch.ones(2, 4)),
                 "completion mask shape (2, 4) differs from loss shape (2, 3)", id="loss-mask-width"),
    pytest.param(lambda: estimators.aggregate_loss(torch.zeros(1, 3), torch.ones(1, 3), "dr_grpo", 2),
                 "max_completion_length = 2 is below the longest completion (3 tokens)", id="dr-grpo-length"),
    pytest.param(lambda: estimators.aggregate_loss(torch.zeros(2, 0), torch.ones(2, 0), "dr_grpo"),
                 "max_completion_length must be >= 1, got 0", id="dr-grpo-zero-width"),
    pytest.param(lambda: estimators.aggregate_loss(torch.zeros(1, 3), torch.ones(1, 3), "sum"),
                 "unknown aggregation kind 'sum'; choose one of ('grpo', 'dr_grpo', 'dapo', 'bnpo')",
                 id="aggregation-kind"),
]


@pytest.mark.parametrize("call, message", ERROR_MESSAGES)
def test_bad_input_raises_value_error_with_the_exact_message(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == message


def test_clipping_defaults_to_a_symmetric_0_2():
    # ratio 1.5 with A = +1 is clipped to 1 + 0.2; ratio 0.5 with A = -1 to 1 - 0.2 (min picks the clipped term).
    old_logps = torch.zeros(2, 1, dtype=torch.float64)
    logps = torch.log(torch.tensor([[1.5], [0.5]], dtype=torch.float64))
    advantages = torch.tensor([1.0, -1.0], dtype=torch.float64)
    expected_objective = torch.tensor([[1.2], [-0.8]], dtype=torch.float64)
    assert torch.allclose(estimators.clipped_surrogate(logps, old_logps, advantages), expected_objective,
                          rtol=0, atol=1e-15)
    losses = estimators.per_token_loss(logps, old_logps, advantages, torch.ones(2, 1))
    assert torch.allclose(losses, -expected_objective, rtol=0, atol=1e-15)


def test_clipping_range_boundaries():
    old_logps = torch.zeros(2, 1, dtype=torch.float64)
    logps = torch.log(torch.tensor([[1.5], [0.5]], dtype=torch.float64))
    advantages = torch.tensor([1.0, -1.0], dtype=torch.float64)
    mask = torch.ones(2, 1)
    # eps = 0 on both sides is allowed: the ratio is clipped to exactly 1, min(rho A, A).
    losses = estimators.per_token_loss(logps, old_logps, advantages, mask, eps_low=0.0, eps_high=0.0)
    assert torch.allclose(losses, torch.tensor([[-1.0], [1.0]], dtype=torch.float64), rtol=0, atol=1e-15)
    for eps_low, eps_high in ((1.0, None), (1.5, None), (-0.1, None), (0.2, -0.1)):
        with pytest.raises(ValueError, match="eps_low"):
            estimators.per_token_loss(logps, old_logps, advantages, mask, eps_low=eps_low, eps_high=eps_high)


def test_kl_penalty_is_added_to_the_loss():
    # l = -(rho A - beta * k3) at rho = 1; k3 at logp = log 1/2, ref = log 1/4 is 1/2 - log(1/2) - 1 = log 2 - 1/2.
    logps = torch.full((1, 1), math.log(0.5), dtype=torch.float64)
    ref_logps = torch.full((1, 1), math.log(0.25), dtype=torch.float64)
    loss = estimators.per_token_loss(logps, logps, torch.tensor([2.0], dtype=torch.float64), torch.ones(1, 1),
                                     beta=0.5, ref_logps=ref_logps)
    assert math.isclose(loss.item(), -2.0 + 0.5 * (math.log(2) - 0.5), rel_tol=1e-14)


def test_aggregation_defaults_grpo_kind_and_padded_width():
    losses = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 0]])
    # grpo: mean over sequences of the per-sequence token mean, ((1 + 2) / 2 + (5 + 6 + 7) / 3) / 2.
    assert estimators.aggregate_loss(losses, mask).item() == 3.75
    # dr_grpo: the 21 of valid loss over N * L, with L = T = 4 by default.
    assert estimators.aggregate_loss(losses, mask, "dr_grpo").item() == 21 / 8
    assert estimators.aggregate_loss(losses, mask, "dr_grpo", 5).item() == 21 / 10
    assert estimators.aggregate_loss(losses, mask, "dapo").item() == 21 / 5


def test_empty_batch_aggregates_without_error():
    # N = 0: the 1/N of grpo and dr_grpo is 0/0 = NaN, the token mean's max(1, count) guard gives 0.
    losses, mask = torch.zeros(0, 3), torch.zeros(0, 3)
    assert math.isnan(estimators.aggregate_loss(losses, mask, "grpo").item())
    assert math.isnan(estimators.aggregate_loss(losses, mask, "dr_grpo").item())
    assert estimators.aggregate_loss(losses, mask, "dapo").item() == 0.0
