"""Tests for grpo_verify.synthetic: exact enumeration, closed-form scores against autograd, sampling, errors.

The closed-form scores are checked against two independent autograd paths (vmapped per-sequence
gradients and a plain loop of torch.autograd.grad); a planted sign error at the end shows the check
catches a wrong score.
"""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grpo_verify.synthetic import (
    DEFAULT_MAX_OUTCOMES,
    EnumerablePolicy,
    EnumerationTooLarge,
    LinearSoftmax,
    Outcomes,
    SoftmaxBandit,
    TabularAutoregressive,
    TinyCausalTransformer,
    binary_rewards,
    policy_strategy,
    reward_strategy,
    tabulated_rewards,
)

TOLERANCE = 1e-12


def assert_close(actual: torch.Tensor, expected: torch.Tensor, tol: float = TOLERANCE) -> None:
    """max |actual - expected| <= tol * (1 + max |expected|)."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    gap = (actual - expected).abs().max().item() if actual.numel() else 0.0
    scale = 1.0 + (expected.abs().max().item() if expected.numel() else 0.0)
    assert gap <= tol * scale, f"max gap {gap:.3g} > {tol:.1g} * {scale:.3g}"


def scores_by_loop(policy: EnumerablePolicy, sequences: torch.Tensor) -> torch.Tensor:
    """Score vectors by one torch.autograd.grad call per sequence (no vmap, no closed form)."""
    parameters = list(policy.parameters())
    rows = []
    for sequence in sequences:
        gradients = torch.autograd.grad(policy.log_prob(sequence[None]).sum(), parameters, allow_unused=True)
        rows.append(torch.cat([torch.zeros_like(p).flatten() if g is None else g.flatten()
                               for p, g in zip(parameters, gradients)]))
    return torch.stack(rows)


def assert_scores_match_autograd(policy: EnumerablePolicy) -> None:
    """The policy's scores (closed form where it has one) equal both autograd paths on every outcome."""
    outcomes = policy.enumerate()
    assert_close(outcomes.scores, policy.autograd_scores(outcomes.sequences))
    assert_close(outcomes.scores, scores_by_loop(policy, outcomes.sequences))


@pytest.fixture(scope="module")
def transformer() -> TinyCausalTransformer:
    return TinyCausalTransformer(vocab_size=3, length=2, prompt=(0, 1), num_layers=2, seed=1)


# --- enumeration and scores ----------------------------------------------------------------


@given(policy_strategy())
def test_probabilities_are_exact_and_sum_to_one(policy):
    outcomes = policy.enumerate()
    assert outcomes.num_outcomes == policy.vocab_size ** policy.length
    assert outcomes.num_parameters == policy.num_parameters
    assert len(set(outcomes.as_tuples())) == outcomes.num_outcomes
    assert abs(outcomes.probs.sum().item() - 1) < TOLERANCE
    assert (outcomes.probs > 0).all()
    assert_close(policy.log_prob(outcomes.sequences).detach().exp(), outcomes.probs)


@given(policy_strategy())
def test_closed_form_scores_match_autograd(policy):
    assert_scores_match_autograd(policy)


@given(policy_strategy(kinds=("bandit",)))
def test_bandit_score_is_one_hot_minus_probabilities(policy):
    outcomes = policy.enumerate()
    expected = torch.eye(policy.vocab_size, dtype=torch.float64) - policy.probabilities()
    assert_close(outcomes.scores, expected)


@given(policy_strategy(kinds=("tabular", "shared")))
def test_tabular_sequence_probability_is_product_of_token_probabilities(policy):
    outcomes = policy.enumerate()
    table = torch.softmax(policy.table.detach(), dim=-1)
    for sequence, prob in zip(outcomes.sequences, outcomes.probs):
        product = 1.0
        for t in range(policy.length):
            row = policy.context_row(sequence[None, :t])[0]
            product *= table[row, sequence[t]].item()
        assert math.isclose(product, prob.item(), rel_tol=1e-12)


def test_shared_table_rows_are_reused_across_positions():
    policy = TabularAutoregressive(2, 3, shared=True, seed=3)
    assert policy.num_parameters == (2 + 1) * 2
    outcomes = policy.enumerate()
    # (1, 1, 1) uses the start row once and row 1 twice: its row-1 score is 2 (e_1 - pi(.|1)).
    index = outcomes.as_tuples().index((1, 1, 1))
    row_one = outcomes.scores[index].reshape(3, 2)[1]
    expected = 2 * (torch.tensor([0.0, 1.0], dtype=torch.float64) - torch.softmax(policy.table.detach()[1], 0))
    assert_close(row_one, expected)


def test_shared_table_conditions_on_the_previous_token():
    """shared=True: pi(o_t | o_<t) = p[o_{t-1}] (p[start] for t = 1), with the rows given as
    probabilities (logits log p, so softmax gives p back). Sequences of length 4 whose previous
    token differs from their first: each probability and score is written out by hand."""
    p = {"start": [0.5, 0.3, 0.2], 0: [0.1, 0.6, 0.3], 1: [0.25, 0.25, 0.5], 2: [0.7, 0.2, 0.1]}
    rows = [p[0], p[1], p[2], p["start"]]  # table rows 0..V-1 are the previous tokens, row V the start
    policy = TabularAutoregressive(3, 4, shared=True, logits=torch.tensor(rows, dtype=torch.float64).log())
    outcomes = policy.enumerate()
    by_sequence = dict(zip(outcomes.as_tuples(), outcomes.probs.tolist()))
    # (0, 2, 1, 1): start -> 0, then after 0 -> 2, after 2 -> 1, after 1 -> 1
    assert math.isclose(by_sequence[(0, 2, 1, 1)], 0.5 * 0.3 * 0.2 * 0.25, rel_tol=1e-12)
    # (1, 0, 2, 0): start -> 1, after 1 -> 0, after 0 -> 2, after 2 -> 0
    assert math.isclose(by_sequence[(1, 0, 2, 0)], 0.3 * 0.25 * 0.3 * 0.7, rel_tol=1e-12)
    # (2, 2, 0, 1): start -> 2, after 2 -> 2, after 2 -> 0, after 0 -> 1
    assert math.isclose(by_sequence[(2, 2, 0, 1)], 0.2 * 0.1 * 0.7 * 0.6, rel_tol=1e-12)
    for sequence, prob in by_sequence.items():  # every outcome, by the rule itself
        previous = ["start", *sequence[:-1]]
        assert math.isclose(prob, math.prod(p[c][o] for c, o in zip(previous, sequence)), rel_tol=1e-12)
    # the score of (0, 2, 1, 1): each position adds e_{o_t} - p[o_{t-1}] to the row o_{t-1}
    e = torch.eye(3, dtype=torch.float64)
    expected = torch.zeros(4, 3, dtype=torch.float64)
    expected[3] = e[0] - torch.tensor(p["start"], dtype=torch.float64)
    expected[0] = e[2] - torch.tensor(p[0], dtype=torch.float64)
    expected[2] = e[1] - torch.tensor(p[2], dtype=torch.float64)
    expected[1] = e[1] - torch.tensor(p[1], dtype=torch.float64)
    index = outcomes.as_tuples().index((0, 2, 1, 1))
    assert_close(outcomes.scores[index].reshape(4, 3), expected)
    logits = policy.next_token_logits(torch.tensor([[1, 0, 2]]))  # after (1, 0, 2): the row of 2
    assert_close(torch.softmax(logits, -1)[0], torch.tensor(p[2], dtype=torch.float64))


def test_unshared_table_has_one_row_per_prefix():
    policy = TabularAutoregressive(3, 3)
    assert policy.table.shape == (1 + 3 + 9, 3)
    rows = policy.context_row(policy.all_sequences()[:, :2])
    assert sorted(set(rows.tolist())) == list(range(4, 13))


def test_linear_softmax_score_is_feature_minus_mean_feature():
    features = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    policy = LinearSoftmax(features, weights=[0.3, -0.7])
    outcomes = policy.enumerate()
    assert_close(outcomes.probs, torch.softmax(features @ torch.tensor([0.3, -0.7], dtype=torch.float64), 0))
    assert_close(outcomes.scores, features - outcomes.probs @ features)


# --- the transformer -----------------------------------------------------------------------


def test_transformer_scores_are_exact(transformer):
    outcomes = transformer.enumerate()
    assert outcomes.num_outcomes == 9 and outcomes.num_parameters == transformer.num_parameters
    assert abs(outcomes.probs.sum().item() - 1) < TOLERANCE
    assert_close(outcomes.scores, scores_by_loop(transformer, outcomes.sequences))
    assert_close(outcomes.probs @ outcomes.scores, torch.zeros(outcomes.num_parameters), 1e-13)


def test_transformer_one_pass_log_prob_equals_token_by_token(transformer):
    sequences = transformer.all_sequences()
    one_pass = transformer.log_prob(sequences)
    token_by_token = EnumerablePolicy.forward(transformer, sequences)
    assert_close(one_pass.detach(), token_by_token.detach())


def test_transformer_float64_path_agrees_with_transformers_eager():
    exact = TinyCausalTransformer(vocab_size=4, length=3, prompt=(2, 0, 1), num_layers=2, num_heads=4, seed=5)
    eager = TinyCausalTransformer(vocab_size=4, length=3, prompt=(2, 0, 1), num_layers=2, num_heads=4, seed=5,
                                  exact=False)
    sequences = exact.all_sequences()
    # Same weights; transformers' float32 norm and softmax leave ~1e-8 differences, a wrong mask O(1).
    assert_close(exact.log_prob(sequences).detach(), eager.log_prob(sequences).detach(), 1e-6)
    assert (exact.log_prob(sequences) != eager.log_prob(sequences)).any()


def test_autograd_scores_do_not_depend_on_batch_size():
    policy = TinyCausalTransformer(vocab_size=3, length=3, seed=2)  # 27 sequences, batches of 7 and 256
    sequences = policy.all_sequences()
    assert_close(policy.autograd_scores(sequences, batch_size=7), policy.autograd_scores(sequences))


# --- sampling ------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [TabularAutoregressive(2, 3, seed=4), TinyCausalTransformer(3, 2, seed=4)],
                         ids=["tabular", "transformer"])
def test_sample_frequencies_match_enumerated_probabilities(policy):
    outcomes = policy.enumerate()
    num_samples = 4000
    samples = policy.sample(num_samples, torch.Generator().manual_seed(0))
    assert samples.shape == (num_samples, policy.length) and samples.dtype == torch.int64
    codes = (samples * policy.vocab_size ** torch.arange(policy.length - 1, -1, -1)).sum(1)
    frequencies = torch.bincount(codes, minlength=outcomes.num_outcomes).to(torch.float64) / num_samples
    sigma = (outcomes.probs * (1 - outcomes.probs) / num_samples).sqrt()
    assert ((frequencies - outcomes.probs).abs() <= 5 * sigma + 1e-12).all()


def test_sample_is_reproducible_with_a_generator():
    policy = SoftmaxBandit(5, seed=1)
    first = policy.sample(50, torch.Generator().manual_seed(7))
    assert torch.equal(first, policy.sample(50, torch.Generator().manual_seed(7)))
    assert policy.sample(0).shape == (0, 1)


# --- rewards -------------------------------------------------------------------------------


def test_binary_rewards_from_predicate_and_from_set_agree():
    outcomes = TabularAutoregressive(2, 3).enumerate()
    by_predicate = binary_rewards(outcomes, lambda seq: sum(seq) == 2)
    by_set = binary_rewards(outcomes, [(0, 1, 1), (1, 0, 1), (1, 1, 0)])
    assert torch.equal(by_predicate, by_set)
    assert by_set.dtype == torch.float64 and by_set.sum() == 3
    assert torch.equal(binary_rewards(outcomes.sequences, [(0, 1, 1)]), binary_rewards(outcomes, [(0, 1, 1)]))


def test_tabulated_rewards_with_default_and_function():
    outcomes = SoftmaxBandit(4).enumerate()
    assert tabulated_rewards(outcomes, {(0,): 0.5, (2,): -1.0}, default=0.25).tolist() == [0.5, 0.25, -1.0, 0.25]
    assert tabulated_rewards(outcomes, lambda seq: seq[0] % 2).tolist() == [0.0, 1.0, 0.0, 1.0]


@given(st.data())
def test_reward_strategy_gives_one_finite_reward_per_outcome(data):
    num = data.draw(st.integers(1, 9))
    rewards = data.draw(reward_strategy(num))
    assert rewards.shape == (num,) and rewards.dtype == torch.float64 and torch.isfinite(rewards).all()


# --- errors --------------------------------------------------------------------------------


def test_enumeration_beyond_the_limit_raises_before_work():
    with pytest.raises(EnumerationTooLarge, match="59049 outcomes, more than the limit 20000"):
        TabularAutoregressive(3, 10, shared=True).enumerate()
    assert DEFAULT_MAX_OUTCOMES == 20_000
    small_limit = TabularAutoregressive(2, 3, max_outcomes=4)
    with pytest.raises(EnumerationTooLarge):
        small_limit.enumerate()
    assert small_limit.enumerate(max_outcomes=8).num_outcomes == 8


@pytest.mark.parametrize("make", [
    lambda: SoftmaxBandit(1),
    lambda: SoftmaxBandit(3, logits=[0.0, 1.0]),
    lambda: SoftmaxBandit(3, logits=[0.0, float("nan"), 1.0]),
    lambda: TabularAutoregressive(2, 0),
    lambda: TabularAutoregressive(2, 2, logits=torch.zeros(2, 2)),
    lambda: LinearSoftmax(torch.zeros(3)),
    lambda: TinyCausalTransformer(3, 2, prompt=()),
    lambda: TinyCausalTransformer(3, 2, prompt=(0, 3)),
    lambda: SoftmaxBandit(3, max_outcomes=0),
], ids=["one-action", "logit-shape", "nan-logit", "length-0", "table-shape", "features-1d", "empty-prompt",
        "prompt-token", "max-outcomes"])
def test_bad_constructor_arguments_raise(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("sequences", [
    torch.tensor([[0, 1]], dtype=torch.int64),          # wrong length
    torch.tensor([[0, 1, 2]], dtype=torch.float64),     # not integer
    torch.tensor([[0, 1, 2]], dtype=torch.int64),       # token out of range
    torch.tensor([0, 1, 1], dtype=torch.int64),         # not 2-D
], ids=["length", "dtype", "range", "ndim"])
def test_bad_sequences_raise(sequences):
    policy = TabularAutoregressive(2, 3)
    with pytest.raises(ValueError):
        policy.log_prob(sequences)
    with pytest.raises(ValueError):
        policy.scores(sequences)


def test_outcomes_validate_their_fields():
    sequences = torch.tensor([[0], [1]])
    scores = torch.zeros(2, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="sum to 1"):
        Outcomes(sequences, torch.tensor([0.5, 0.4], dtype=torch.float64), scores)
    with pytest.raises(ValueError, match=">= 0"):
        Outcomes(sequences, torch.tensor([1.5, -0.5], dtype=torch.float64), scores)
    with pytest.raises(ValueError, match="float64"):
        Outcomes(sequences, torch.tensor([0.5, 0.5]), scores)
    with pytest.raises(ValueError, match="scores"):
        Outcomes(sequences, torch.tensor([0.5, 0.5], dtype=torch.float64), torch.zeros(3, 1, dtype=torch.float64))


def test_reward_helpers_reject_bad_tables():
    outcomes = SoftmaxBandit(3).enumerate()
    with pytest.raises(ValueError, match="not outcomes"):
        binary_rewards(outcomes, [(5,)])
    with pytest.raises(ValueError, match="no reward"):
        tabulated_rewards(outcomes, {(0,): 1.0})
    with pytest.raises(ValueError, match="finite"):
        tabulated_rewards(outcomes, lambda seq: float("inf"))
    with pytest.raises(ValueError):
        binary_rewards(torch.zeros(3), [(0,)])


def test_strategies_reject_unknown_kinds():
    with pytest.raises(ValueError):
        policy_strategy(kinds=("transformer",))
    with pytest.raises(ValueError):
        reward_strategy(3, styles=("gaussian",))


# --- planted bug ---------------------------------------------------------------------------


class SignFlippedBandit(SoftmaxBandit):
    """A planted bug: the closed-form score with its sign flipped, pi - e_a."""

    def scores(self, sequences):
        return -super().scores(sequences)


class OffByOneTabular(TabularAutoregressive):
    """A planted bug: the closed form credits the token score to the next row of the table."""

    def scores(self, sequences):
        flat = super().scores(sequences).reshape(sequences.shape[0], *self.table.shape)
        return flat.roll(1, dims=1).flatten(1)


@pytest.mark.parametrize("buggy", [SignFlippedBandit(3, seed=2), OffByOneTabular(2, 2, seed=2)],
                         ids=["sign", "row"])
def test_score_check_catches_planted_bugs(buggy):
    with pytest.raises(AssertionError):
        assert_scores_match_autograd(buggy)
