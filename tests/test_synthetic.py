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


# --- exact messages, defaults, devices and strategies (found by mutation testing, experiments/mutation) ---

F64 = torch.float64


def _outcomes(sequences, probs, scores):
    return Outcomes(torch.as_tensor(sequences), torch.as_tensor(probs, dtype=F64), torch.as_tensor(scores, dtype=F64))


SYNTHETIC_ERROR_MESSAGES = [
    pytest.param(lambda: SoftmaxBandit(1), "vocab_size must be an int >= 2, got 1", id="vocab"),
    pytest.param(lambda: TabularAutoregressive(2, 0), "length must be an int >= 1, got 0", id="length"),
    pytest.param(lambda: SoftmaxBandit(2, max_outcomes=0), "max_outcomes must be an int >= 1, got 0", id="max-outcomes"),
    pytest.param(lambda: SoftmaxBandit(2, max_outcomes=1).enumerate(),
                 "SoftmaxBandit has V^T = 2^1 = 2 outcomes, more than the limit 1; pass a larger max_outcomes or "
                 "use a smaller policy", id="enumeration-limit"),
    pytest.param(lambda: SoftmaxBandit(3).log_prob([[0]]), "sequences must be an int64 tensor, got list",
                 id="sequences-list"),
    pytest.param(lambda: SoftmaxBandit(3).log_prob(torch.zeros(1, 1)),
                 "sequences must be an int64 tensor, got torch.float32", id="sequences-float"),
    pytest.param(lambda: SoftmaxBandit(3).log_prob(torch.zeros(2, 2, dtype=torch.int64)),
                 "sequences must have shape (n, 1), got (2, 2)", id="sequences-shape"),
    pytest.param(lambda: SoftmaxBandit(3).log_prob(torch.tensor([[3], [-1]])),
                 "tokens must lie in 0..2, got range -1..3", id="tokens"),
    pytest.param(lambda: SoftmaxBandit(3, logits=[1.0, 2.0]), "expected initial values of shape (3,), got (2,)",
                 id="logit-shape"),
    pytest.param(lambda: SoftmaxBandit(3, logits=[math.nan, 0.0, 0.0]), "initial parameter values must be finite",
                 id="logit-nan"),
    pytest.param(lambda: LinearSoftmax(torch.zeros(3)), "features must be a (K, d) matrix with d >= 1, got shape (3,)",
                 id="features-1d"),
    pytest.param(lambda: LinearSoftmax([[math.nan], [0.0]]), "features must be finite", id="features-nan"),
    pytest.param(lambda: _outcomes(torch.tensor([0, 1]), [0.5, 0.5], [[0.0], [0.0]]),
                 "sequences must be an int64 (N, T) tensor, got torch.int64 shape (2,)", id="outcomes-1d"),
    pytest.param(lambda: _outcomes(torch.zeros(0, 1, dtype=torch.int64), [], torch.zeros(0, 1)),
                 "outcomes must hold at least one sequence", id="outcomes-empty"),
    pytest.param(lambda: _outcomes([[0], [1]], [0.5, 0.5], [[0.0], [math.nan]]), "probs and scores must be finite",
                 id="outcomes-nan-score"),
    pytest.param(lambda: TinyCausalTransformer(3, 2, prompt=()),
                 "prompt must be a non-empty 1-D sequence of token ids (the first completion token is predicted "
                 "from its last position)", id="empty-prompt"),
    pytest.param(lambda: TinyCausalTransformer(3, 2, prompt=(0, 3)), "prompt tokens must lie in 0..2, got [0, 3]",
                 id="prompt-token"),
    pytest.param(lambda: TinyCausalTransformer(3, 2, config=_llama_config(vocab_size=4)),
                 "config.vocab_size = 4 differs from vocab_size = 3", id="config-vocab"),
    pytest.param(lambda: binary_rewards(torch.tensor([0, 1]), [(0,)]),
                 "pass Outcomes or an int64 (N, T) tensor of sequences", id="rewards-1d"),
    pytest.param(lambda: binary_rewards(SoftmaxBandit(3).enumerate(), [(k,) for k in range(5, 11)]),
                 "correct sequences that are not outcomes: [(5,), (6,), (7,), (8,), (9,)]", id="unknown-correct"),
    pytest.param(lambda: tabulated_rewards(SoftmaxBandit(5).enumerate(), {(0,): 1.0}),
                 "4 outcomes have no reward, e.g. [(1,), (2,), (3,)]; pass default=", id="missing-rewards"),
    pytest.param(lambda: tabulated_rewards(SoftmaxBandit(2).enumerate(), {(0,): 1.0, (1,): math.inf}),
                 "rewards must be finite", id="infinite-reward"),
    pytest.param(lambda: policy_strategy(kinds=("tree",)),
                 "kinds must be a non-empty subset of ('bandit', 'linear', 'tabular', 'shared'), got ('tree',)",
                 id="policy-kinds"),
    pytest.param(lambda: policy_strategy(max_outcomes=1), "max_outcomes must be >= 2, got 1", id="policy-size"),
    pytest.param(lambda: reward_strategy(3, styles=()),
                 "styles must be a non-empty subset of ('binary', 'continuous', 'ties'), got ()", id="reward-styles"),
]


def _llama_config(vocab_size=3, num_key_value_heads=2):
    from transformers import LlamaConfig
    return LlamaConfig(vocab_size=vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                       num_attention_heads=2, num_key_value_heads=num_key_value_heads, max_position_embeddings=4,
                       initializer_range=0.2, tie_word_embeddings=False)


@pytest.mark.parametrize("call, message", SYNTHETIC_ERROR_MESSAGES)
def test_bad_input_raises_value_error_with_the_exact_message(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == message


def test_boundary_inputs_are_accepted():
    assert SoftmaxBandit(2, max_outcomes=1).max_outcomes == 1
    assert LinearSoftmax([[1.0], [0.0]], max_outcomes=1).max_outcomes == 1
    assert TinyCausalTransformer(max_outcomes=5).max_outcomes == 5
    one = _outcomes([[0]], [1.0], [[0.0]])  # a single outcome
    assert one.num_outcomes == 1
    assert _outcomes([[0], [1]], [1.0, 0.0], [[0.0], [0.0]]).probs[1] == 0  # a zero probability
    assert TinyCausalTransformer(prompt=(2,)).prompt.tolist() == [2]  # a one-token prompt
    assert TinyCausalTransformer(prompt=torch.tensor([0.0, 1.0])).prompt.dtype == torch.int64
    assert policy_strategy(max_outcomes=2) is not None


def test_initial_values_are_seeded_normal_draws_without_touching_the_global_rng():
    state = torch.get_rng_state()
    first, again, other = (SoftmaxBandit(4, seed=s).logits.detach() for s in (3, 3, 4))
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(first, again) and not torch.equal(first, other)
    # The default seed is 0, for every policy.
    assert torch.equal(SoftmaxBandit(4).logits, SoftmaxBandit(4, seed=0).logits)
    assert torch.equal(LinearSoftmax(torch.eye(3)).weights, LinearSoftmax(torch.eye(3), seed=0).weights)
    assert torch.equal(TabularAutoregressive(2, 2).table, TabularAutoregressive(2, 2, seed=0).table)
    default, seeded = TinyCausalTransformer(), TinyCausalTransformer(seed=0)
    assert all(torch.equal(a, b) for a, b in zip(default.parameters(), seeded.parameters()))
    # N(0, 1): 20000 draws have mean within 0.05 of 0 and std within 0.05 of 1.
    for draws in (SoftmaxBandit(20000).logits, LinearSoftmax(torch.zeros(2, 20000)).weights,
                  TabularAutoregressive(140, 2).table):
        draws = draws.detach().flatten()
        assert draws.numel() >= 19600
        assert abs(draws.mean().item()) < 0.05 and abs(draws.std().item() - 1) < 0.05


def test_transformer_defaults_and_weights():
    policy = TinyCausalTransformer()
    assert (policy.vocab_size, policy.length, policy.num_outcomes) == (3, 2, 9)
    # Llama, V = 3, hidden 16, MLP 32, one layer, two heads, untied: embedding 48, attention 4 * 16 * 16,
    # MLP 3 * 16 * 32, two layer norms and the final one 3 * 16, head 48.
    assert policy.num_parameters == 48 + 1024 + 1536 + 48 + 48
    weights = torch.cat([m.weight.flatten() for m in policy.model.modules() if isinstance(m, torch.nn.Linear)])
    assert 0.15 < weights.std().item() < 0.25  # init_std = 0.2
    assert policy.model.config._attn_implementation == "grpo_verify_float64_causal"
    assert TinyCausalTransformer(exact=False).model.config._attn_implementation == "eager"


def test_transformer_with_a_given_config_leaves_it_unchanged_and_supports_grouped_heads():
    config = _llama_config(num_key_value_heads=1)  # two query heads share one key/value head
    before = config.to_dict()
    exact = TinyCausalTransformer(3, 2, config=config)
    assert config.to_dict() == before
    eager = TinyCausalTransformer(3, 2, config=config, exact=False)
    sequences = exact.all_sequences()
    # transformers' eager attention (softmax in float32) agrees to ~1e-7.
    assert_close(exact.log_prob(sequences), eager.log_prob(sequences).detach(), tol=1e-5)


def test_transformer_registers_its_attention_itself():
    from transformers import AttentionInterface
    registry = AttentionInterface._global_mapping
    saved = registry.pop("grpo_verify_float64_causal", None)
    try:
        policy = TinyCausalTransformer()
        assert torch.isfinite(policy.log_prob(policy.all_sequences())).all()
    finally:
        if saved is not None:
            registry["grpo_verify_float64_causal"] = saved


@pytest.mark.parametrize("make", [lambda: TabularAutoregressive(2, 3), lambda: TabularAutoregressive(2, 3, shared=True),
                                  lambda: TinyCausalTransformer()], ids=["tabular", "shared", "transformer"])
def test_log_probs_are_computed_on_the_device_of_the_policy(make):
    """On the meta device (shapes only), any tensor made on the CPU instead would raise."""
    policy = make().to("meta")
    log_probs = policy(torch.zeros(3, policy.length, dtype=torch.int64, device="meta"))
    assert log_probs.device.type == "meta" and log_probs.shape == (3,)


def test_flat_gradient_fills_unused_parameters_with_zeros():
    policy = TinyCausalTransformer()
    gradient = policy.flat_gradient(policy.model.lm_head.weight.sum())
    assert gradient.shape == (policy.num_parameters,)
    assert gradient.sum().item() == 48 and torch.count_nonzero(gradient).item() == 48


def test_scores_of_some_sequences_and_of_none():
    bandit = SoftmaxBandit(3, logits=[0.0, 1.0, 2.0])
    pi = torch.softmax(torch.tensor([0.0, 1.0, 2.0], dtype=F64), dim=0)
    assert_close(bandit.scores(torch.tensor([[0]])), (torch.tensor([1.0, 0.0, 0.0], dtype=F64) - pi)[None])
    tabular = TabularAutoregressive(3, 1, logits=torch.zeros(1, 3))
    assert_close(tabular.scores(torch.tensor([[0]])), torch.tensor([[2 / 3, -1 / 3, -1 / 3]], dtype=F64))
    empty = bandit.autograd_scores(torch.zeros(0, 1, dtype=torch.int64))
    assert empty.shape == (0, 3) and empty.dtype == F64


def test_enumeration_batch_size_does_not_matter():
    policy = TabularAutoregressive(3, 2, seed=4)
    reference, batched = policy.enumerate(), policy.enumerate(batch_size=2)
    assert torch.equal(reference.sequences, batched.sequences)
    assert_close(batched.probs, reference.probs, tol=1e-15)


def test_tabulated_rewards_from_a_complete_table_are_float64():
    outcomes = SoftmaxBandit(2).enumerate()
    rewards = tabulated_rewards(outcomes, {(0,): 0.1, (1,): 2.0})
    assert rewards.dtype == F64 and rewards.tolist() == [0.1, 2.0]


def _no_example(strategy, condition):
    from hypothesis import find, settings
    from hypothesis.errors import NoSuchExample
    try:
        find(strategy, condition, settings=settings(max_examples=300, database=None))
    except NoSuchExample:
        return True
    return False


def _some_example(strategy, condition):
    from hypothesis import find, settings
    return find(strategy, condition, settings=settings(max_examples=2000, database=None)) is not None


def _logits(policy):
    return policy.logits.detach() if isinstance(policy, SoftmaxBandit) else policy.table.detach()


def test_policy_strategy_covers_its_documented_range_and_no_more():
    bandits = policy_strategy(("bandit",))
    tables = policy_strategy(("tabular",))
    # At most max_outcomes = 9 outcomes, logits in [-3, 3] and never subnormal.
    assert _no_example(bandits, lambda p: p.num_outcomes > 9)
    assert _no_example(tables, lambda p: p.num_outcomes > 9)
    assert _no_example(bandits, lambda p: _logits(p).abs().max() > 3)
    assert _no_example(bandits, lambda p: bool(((_logits(p) != 0) & (_logits(p).abs() < torch.finfo(F64).tiny)).any()))
    # ... and those limits are reached: V^T = 9 by (3, 2) and (9, 1), V = 2, negative and positive logits.
    assert _some_example(tables, lambda p: (p.vocab_size, p.length) == (3, 2))
    assert _some_example(tables, lambda p: (p.vocab_size, p.length) == (9, 1))
    assert _some_example(tables, lambda p: p.vocab_size == 2)
    assert _some_example(bandits, lambda p: _logits(p).min() < -2)
    assert _some_example(bandits, lambda p: _logits(p).max() > 2)
