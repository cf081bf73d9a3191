"""The bridge between theorem and code: each derivation's own SymPy expression, evaluated numerically,
equals the torch computation (float64, tolerance 1e-10), so the two cannot drift apart.

The expressions are taken from the derivation modules themselves (the ``lhs``/``rhs`` of their Results
or the closed-form helpers they export) and evaluated with ``sympy.lambdify``. Where a Result is stated
for a symbolic group size R, the generated code keeps R (and the sums over it) symbolic: indexed
quantities such as r[i] are passed as 1-based dicts, so the very expression that was proved is the one
evaluated, for every R drawn.

D1  the log-softmax derivative delta_ab - pi_b (symbolic K) = SoftmaxBandit's autograd and closed-form
    scores; the K = 3 policy gradient pi_b (r_b - E[r]) = autograd of E[r] and the oracle; the sequence
    score = sum of token scores (symbolic T) = the tabular policies' scores.
D2  the first on-policy gradient of the GRPO / Dr. GRPO / DAPO surrogates (symbolic R and lengths) =
    torch autograd through per_token_loss + aggregate_loss; the clipped term = clipped_surrogate with
    slope A at ratio 1; the k3 gradient (1 - pi_ref/pi) grad log pi = autograd of k3_kl, 0 at the reference.
D3  the token advantage A_i m_it (symbolic R) = token_advantages; its rank = the number of distinct
    lengths among rollouts with A_i != 0, measured numerically; D3's exact-rank instances = the code's.
D4  d4's binary closed forms a_+, a_- (sample, population, none; any eps) = group_advantages for every
    R in 2..8 and k; the sums (0, R - 1, R, k(R - k)/R) from d4's right-hand sides.
D5  E[A_i g_i] (oracle) = d5's c_R(p) (and its tables C_SAMPLE, C_POPULATION) times grad J for binary
    rewards; with three reward levels Hypothesis finds a non-parallel case; d5's exact counterexample
    vectors = the oracle's.
D6  P(zero-advantage group) (oracle) = d6's p^R + (1-p)^R >= 2^(1-R), equality at p = 1/2; the first-order
    drift of p and z_R(p) under the no-std update = d6's closed forms (torch autograd + oracle).
D7  sum_i A_i g_i = k a_+ (gbar_C - gbar_W) (d7's rhs) on enumerated scores; measured ranks: the group
    gradient has rank <= 1, two-cluster scores (d7's constructors) give rank and effective rank <= 2,
    spread-out scores with R = 8 give effective rank > 3 for diag(A) G; d7's R = 4 instance.
D8  d8's softmax b* (symbolic K) = oracle.optimal_baseline; ||g(a)||^2, b* - E[r], V(b) from d8's
    expressions = the oracle's; V(b*) <= V(b); b* = E[r] exactly under the covariance condition.

Every family has small ``check_*`` functions used by its property tests and by
``test_planted_bug_is_caught``, which plants a bug in the code under test (monkeypatch) and shows the
same check now fails.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import assume, example, find, given
from hypothesis import strategies as st

from grpo_verify import estimators, oracle, rank, synthetic
from grpo_verify.derivations import d1_policy_gradient as d1
from grpo_verify.derivations import d2_grpo_surrogate as d2
from grpo_verify.derivations import d3_credit_collapse as d3
from grpo_verify.derivations import d4_zero_sum as d4
from grpo_verify.derivations import d5_baseline_bias as d5
from grpo_verify.derivations import d6_sparsity as d6
from grpo_verify.derivations import d7_rank_structure as d7
from grpo_verify.derivations import d8_optimal_baseline as d8
from grpo_verify.derivations.notation import R as R_SYM
from grpo_verify.derivations.notation import eps as EPS_SYM
from grpo_verify.derivations.notation import i as I_SYM
from grpo_verify.derivations.notation import r as R_BASE
from grpo_verify.derivations.notation import t as T_SYM
from grpo_verify.evaluation.points import Point
from grpo_verify.evaluation.values import value as exact_value

F64 = torch.float64
TOLERANCE = 1e-10
KIND_OF_SCALE = {"sample": "grpo", "population": "population", "none": "dr_grpo"}


# == helpers ======================================================================================


@pytest.fixture(autouse=True, scope="module")
def one_intra_op_thread():
    """The tensors here are tiny: waking a second intra-op thread per op costs far more than it saves
    (20x on two busy cores). Restored afterwards, so other test modules are unaffected."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def as_array(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def assert_close(actual, expected, what: str, tol: float = TOLERANCE) -> None:
    """max |actual - expected| <= tol * (1 + max |expected|)."""
    actual, expected = as_array(actual), as_array(expected)
    assert actual.shape == expected.shape, f"{what}: shapes {actual.shape} and {expected.shape}"
    if actual.size == 0:
        return
    gap = float(np.max(np.abs(actual - expected)))
    scale = 1.0 + float(np.max(np.abs(expected)))
    assert gap <= tol * scale, f"{what}: max gap {gap:.3g} > {tol:.0e} * {scale:.3g}"


def one_based(values) -> dict:
    """Values keyed 1..n, for the indexed symbols (r[i], pi[a], ...) of a lambdified derivation."""
    return {index + 1: value for index, value in enumerate(values)}


def lambdify(args, expr):
    """sympy.lambdify with Python's math module: sums over symbolic ranges become generator sums."""
    if isinstance(expr, sp.MatrixBase):
        expr = expr.tolist()
    return sp.lambdify(args, expr, modules="math")


def prefix_mask(lengths, width: int) -> torch.Tensor:
    return torch.tensor([[1.0] * n + [0.0] * (width - n) for n in lengths], dtype=F64)


def token_log_probs(policy: synthetic.EnumerablePolicy, sequences: torch.Tensor) -> torch.Tensor:
    """log pi(o_t | o_<t) (n, T), differentiable in the policy's parameters."""
    columns = []
    for position in range(policy.length):
        log_probs = torch.log_softmax(policy.next_token_logits(sequences[:, :position]), dim=-1)
        columns.append(log_probs.gather(-1, sequences[:, position:position + 1]).squeeze(-1))
    return torch.stack(columns, dim=1)


def flat_gradients(scalars: torch.Tensor, policy: synthetic.EnumerablePolicy) -> np.ndarray:
    """grad_theta of every entry of ``scalars``, flattened as score vectors: shape scalars.shape + (P,); the graph is kept."""
    parameters = list(policy.parameters())
    rows = []
    for value in scalars.reshape(-1):
        grads = torch.autograd.grad(value, parameters, retain_graph=True, allow_unused=True)
        rows.append(torch.cat([torch.zeros_like(p).flatten() if g is None else g.flatten()
                               for p, g in zip(parameters, grads)]))
    return torch.stack(rows).reshape(*scalars.shape, -1).numpy()


def spectrum(matrix) -> np.ndarray:
    return rank.singular_values(as_array(matrix))


# == strategies ===================================================================================

finite = functools.partial(st.floats, allow_nan=False, allow_subnormal=False)


@st.composite
def bandit_logits(draw, min_actions: int = 2, max_actions: int = 8, bound: float = 3.0) -> list[float]:
    size = draw(st.integers(min_actions, max_actions))
    return draw(st.lists(finite(-bound, bound), min_size=size, max_size=size))


@st.composite
def binary_reward_problems(draw, max_outcomes: int = 6, kinds=synthetic.POLICY_KINDS):
    """(policy, correct outcome indices): a small closed-form policy and a binary reward."""
    policy = draw(synthetic.policy_strategy(kinds, max_outcomes=max_outcomes))
    correct = draw(st.sets(st.integers(0, policy.num_outcomes - 1)))
    return policy, sorted(correct)


def binary_reward_vector(num_outcomes: int, correct) -> torch.Tensor:
    rewards = torch.zeros(num_outcomes, dtype=F64)
    rewards[list(correct)] = 1.0
    return rewards


@st.composite
def rollout_groups(draw, max_outcomes: int = 9):
    """(tabular policy, sequences (R, T), lengths, rewards): R in 2..8 rollouts with lengths 1..T."""
    policy = draw(synthetic.policy_strategy(("tabular", "shared"), max_outcomes=max_outcomes))
    size = draw(st.integers(2, 8))
    indices = draw(st.lists(st.integers(0, policy.num_outcomes - 1), min_size=size, max_size=size))
    lengths = draw(st.lists(st.integers(1, policy.length), min_size=size, max_size=size))
    pool = draw(st.lists(finite(-3, 3), min_size=1, max_size=3))
    rewards = draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
    return policy, policy.all_sequences()[indices], lengths, rewards


# == D1: the score function =======================================================================


@functools.cache
def d1_softmax_score():
    """delta_ab - pi_b of d1 (symbolic K), as f(theta (1-based), K, a, b)."""
    return lambdify([d1.logit, d1.K, d1.a, d1.b_idx], d1.softmax_log_derivative_is_delta_minus_probability.rhs)


def check_d1_softmax_scores(policy: synthetic.SoftmaxBandit) -> None:
    """d1's score expression at the bandit's logits = its autograd scores = its closed-form scores."""
    size = policy.vocab_size
    logits = one_based(policy.logits.detach().tolist())
    derived = [[d1_softmax_score()(logits, size, action, parameter) for parameter in range(1, size + 1)]
               for action in range(1, size + 1)]
    outcomes = policy.enumerate()  # outcome a is the action a
    assert_close(policy.autograd_scores(outcomes.sequences), derived, "D1 autograd score vs delta_ab - pi_b")
    assert_close(outcomes.scores, derived, "D1 closed-form score vs delta_ab - pi_b")


@functools.cache
def d1_softmax_gradient_K3():
    """d1's K = 3 policy gradient pi_b (r_b - E[r]), as f(theta_1..3, r_1..3) -> 3 x 1."""
    rewards = sp.symbols("rho_1:4", real=True)
    rhs = d1.score_function_identity_softmax_K3.rhs.xreplace({d1.rew(q + 1): rewards[q] for q in range(3)})
    return lambdify([d1.th1, d1.th2, d1.th3, *rewards], rhs)


def check_d1_policy_gradient_K3(logits, rewards) -> None:
    policy = synthetic.SoftmaxBandit(3, logits=logits)
    outcomes = policy.enumerate()
    reward_vector = torch.tensor(rewards, dtype=F64)
    derived = as_array(d1_softmax_gradient_K3()(*logits, *rewards)).reshape(-1)
    expected_reward = (policy.log_prob(outcomes.sequences).exp() * reward_vector).sum()
    assert_close(policy.flat_gradient(expected_reward), derived, "D1 autograd grad E[r] vs pi_b (r_b - E[r])")
    assert_close(oracle.policy_gradient(outcomes, reward_vector), derived, "D1 oracle E[r g] vs pi_b (r_b - E[r])")


@functools.cache
def d1_sequence_score():
    """d1's sequence score sum_t grad log pi_tok(t) (symbolic T), as f(token scores (1-based), T)."""
    token_score = sp.IndexedBase("s")
    rhs = d1.sequence_score_is_sum_of_token_scores.rhs.replace(
        lambda e: isinstance(e, sp.Derivative), lambda e: token_score[e.expr.args[0].args[0]])
    return lambdify([token_score, d1.T], rhs)


def check_d1_sequence_scores(policy: synthetic.EnumerablePolicy) -> None:
    """d1's sum of token scores, fed with per-token autograd scores = the policy's sequence scores."""
    outcomes = policy.enumerate()
    tokens = flat_gradients(token_log_probs(policy, outcomes.sequences), policy)  # (N, T, P)
    derived = [d1_sequence_score()(one_based(list(row)), policy.length) for row in tokens]
    assert_close(outcomes.scores, derived, "D1 closed-form sequence score vs sum of token scores")
    assert_close(policy.autograd_scores(outcomes.sequences), derived, "D1 autograd sequence score vs token sum")


@given(bandit_logits())
@example([math.log(2), 0.0, 0.0])
def test_d1_softmax_score_expression_equals_autograd_scores(logits):
    check_d1_softmax_scores(synthetic.SoftmaxBandit(len(logits), logits=logits))


@given(bandit_logits(3, 3), st.lists(finite(-5, 5), min_size=3, max_size=3))
def test_d1_softmax_policy_gradient_expression_equals_autograd(logits, rewards):
    check_d1_policy_gradient_K3(logits, rewards)


@given(synthetic.policy_strategy(("tabular", "shared"), max_outcomes=9))
def test_d1_sequence_score_expression_is_sum_of_token_scores(policy):
    check_d1_sequence_scores(policy)


# == D2: the surrogate's first gradient ===========================================================

_TOKEN_SCORE = sp.IndexedBase("s")  # s[i, t]: the score of token t of rollout i
_LENGTH = sp.IndexedBase("T_len")  # T_len[i] = |o_i|


def _concrete_token_scores(expr: sp.Expr) -> sp.Expr:
    """Replace d2's Subs(Derivative(log pi(i, t, theta), theta), theta, theta_old) by s[i, t] and T(i) by T_len[i]."""
    expr = expr.replace(lambda e: isinstance(e, sp.Subs) and isinstance(e.expr, sp.Derivative),
                        lambda e: _TOKEN_SCORE[e.expr.expr.args[0].args[0], e.expr.expr.args[0].args[1]])
    return expr.replace(d2.T, lambda arg: _LENGTH[arg])


@functools.cache
def d2_first_gradient(kind: str):
    """d2's first on-policy gradient (symbolic R and lengths), as a function of concrete numbers."""
    if kind == "grpo":
        rhs = d2.grpo_first_gradient_is_length_normalised_advantage_weighted_score.rhs
        return lambdify([d2.A, _TOKEN_SCORE, _LENGTH, R_SYM], _concrete_token_scores(rhs))
    if kind == "dr_grpo":
        rhs = d2.dr_grpo_first_gradient_is_unnormalised_advantage_weighted_score.rhs
        return lambdify([R_BASE, _TOKEN_SCORE, _LENGTH, R_SYM, d2.L], _concrete_token_scores(rhs))
    rhs = d2.dapo_first_gradient_is_token_mean_advantage_weighted_score.rhs
    return lambdify([d2.A, _TOKEN_SCORE, _LENGTH, R_SYM], _concrete_token_scores(rhs))


def check_d2_first_gradient(policy, sequences, lengths, rewards, kind: str, beta: float = 0.0,
                            eps_low: float = 0.2, eps_high: float | None = None) -> None:
    """Autograd of the aggregated surrogate at theta = theta_old = d2's first-gradient expression."""
    size, width = sequences.shape
    mask = prefix_mask(lengths, width)
    logps = token_log_probs(policy, sequences)
    scores = flat_gradients(logps, policy)  # (R, T, P) token scores, before the graph is freed
    old = logps.detach()
    reward_tensor = torch.tensor([rewards], dtype=F64)
    advantages = estimators.group_advantages(reward_tensor, "dr_grpo" if kind == "dr_grpo" else "grpo")
    losses = estimators.per_token_loss(logps, old, advantages, mask, eps_low, eps_high, beta=beta,
                                       ref_logps=old if beta else None)
    loss = estimators.aggregate_loss(losses, mask, kind, max_completion_length=width if kind == "dr_grpo" else None)
    autograd = -policy.flat_gradient(loss)
    token_scores = {(q + 1, position + 1): scores[q, position] for q in range(size) for position in range(width)}
    lengths_1 = one_based(lengths)
    if kind == "dr_grpo":  # the derivation's own advantage r_i - rbar, L = the padded width
        derived = d2_first_gradient(kind)(one_based(rewards), token_scores, lengths_1, size, width)
    else:
        derived = d2_first_gradient(kind)(one_based(advantages.reshape(-1).tolist()), token_scores, lengths_1, size)
    assert_close(autograd, derived, f"D2 {kind} surrogate gradient at ratio 1 vs the derivation")


@functools.cache
def d2_clipped_term():
    low, high = d2.veps_low, d2.veps_high
    return lambdify([d2.rho, d2.adv, low, high], d2.clipped_term(d2.rho, d2.adv, 1 - low, 1 + high))


def check_d2_clipped_term(ratios, advantages, eps_low: float, eps_high: float) -> None:
    """clipped_surrogate = d2's clipped_term at every ratio; its slope at ratio 1 is A (d2: clipped_term_has_slope_A)."""
    log_ratios = torch.log(torch.tensor(ratios, dtype=F64))[:, None]
    advantage_tensor = torch.tensor(advantages, dtype=F64)
    values = estimators.clipped_surrogate(log_ratios, torch.zeros_like(log_ratios), advantage_tensor, eps_low, eps_high)
    derived = [[d2_clipped_term()(ratio, advantage, eps_low, eps_high)] for ratio, advantage in zip(ratios, advantages)]
    assert_close(values, derived, "D2 clipped surrogate vs clipped_term")
    at_one = torch.zeros_like(log_ratios, requires_grad=True)
    surrogate = estimators.clipped_surrogate(at_one, torch.zeros_like(log_ratios), advantage_tensor, eps_low, eps_high)
    (slope,) = torch.autograd.grad(surrogate.sum(), at_one)  # d rho / d logp = rho = 1 at ratio 1
    slope_rhs = d2.clipped_term_has_slope_A_at_ratio_one.rhs
    assert_close(slope, [[float(slope_rhs.subs(d2.adv, a))] for a in advantages], "D2 slope at ratio 1 vs A")


@functools.cache
def d2_k3_gradient():
    """d2's (1 - pi_ref/pi) grad log pi, as f(pi_ref, pi, score)."""
    probability, score = sp.symbols("pi_theta score", positive=True)
    rhs = d2.k3_gradient_is_one_minus_ratio_times_score.rhs
    rhs = rhs.replace(lambda e: isinstance(e, sp.Derivative), lambda e: score).subs(d2.pi(d2.theta), probability)
    return lambdify([d2.pi_ref, probability, score], rhs)


def check_d2_k3_gradient(policy, sequences, shifts) -> None:
    """Per-token autograd of k3_kl = d2's (1 - pi_ref/pi) grad log pi; exactly 0 where ref = logp."""
    logps = token_log_probs(policy, sequences)
    ref_logps = logps.detach() + torch.tensor(shifts, dtype=F64)
    gradients = flat_gradients(estimators.k3_kl(logps, ref_logps), policy)
    scores = flat_gradients(logps, policy)
    size, width = sequences.shape
    derived = np.array([[d2_k3_gradient()(math.exp(ref_logps[q, p]), math.exp(logps[q, p].item()), scores[q, p])
                         for p in range(width)] for q in range(size)])
    assert_close(gradients, derived, "D2 k3 gradient vs (1 - pi_ref/pi) grad log pi")
    at_reference = policy.flat_gradient(estimators.k3_kl(logps, logps.detach()).sum())
    assert_close(at_reference, np.zeros(at_reference.shape) + float(d2.k3_gradient_vanishes_at_reference_policy.rhs),
                 "D2 k3 gradient at the reference")


@given(rollout_groups(), st.sampled_from(["grpo", "dr_grpo", "dapo"]), st.sampled_from([0.0, 0.04]))
def test_d2_surrogate_first_gradient_equals_derivation(group, kind, beta):
    policy, sequences, lengths, rewards = group
    if kind == "dapo":  # DAPO: asymmetric clip, no KL term
        check_d2_first_gradient(policy, sequences, lengths, rewards, kind, eps_low=0.2, eps_high=0.28)
    else:  # the KL term with pi_ref = pi_old (first iteration) has zero gradient
        check_d2_first_gradient(policy, sequences, lengths, rewards, kind, beta=beta)


@given(st.lists(st.tuples(finite(0.3, 2.0), finite(-3, 3)), min_size=1, max_size=8),
       st.sampled_from([(0.2, 0.2), (0.2, 0.28), (0.1, 0.5)]))
@example([(0.5, 1.0), (0.5, -1.0), (1.5, 1.0), (1.5, -1.0), (1.0, 2.0)], (0.2, 0.28))
def test_d2_clipped_surrogate_equals_clipped_term(pairs, clip):
    ratios, advantages = zip(*pairs)
    check_d2_clipped_term(list(ratios), list(advantages), *clip)


@given(rollout_groups(), st.data())
def test_d2_k3_gradient_equals_derivation_and_vanishes_at_reference(group, data):
    policy, sequences, _, _ = group
    shift = st.one_of(st.just(0.0), finite(-1, 1))
    shifts = data.draw(st.lists(st.lists(shift, min_size=policy.length, max_size=policy.length),
                                min_size=sequences.shape[0], max_size=sequences.shape[0]))
    check_d2_k3_gradient(policy, sequences, shifts)


# == D3: credit collapse ==========================================================================


@functools.cache
def d3_token_advantage():
    """d3's A_i m_it (symbolic R, sample std), as f(r (1-based), R, i, eps, t, T_i)."""
    lhs = d3.token_advantage_equals_sequence_advantage_under_outcome_reward.lhs
    return lambdify([R_BASE, R_SYM, I_SYM, EPS_SYM, T_SYM, d3.T_i], lhs)


def check_d3_token_advantages(rewards, lengths, eps: float, width: int) -> None:
    """token_advantages = d3's A_i m_it; the rank of the matrix = distinct active lengths (d3's Remark)."""
    size = len(rewards)
    mask = prefix_mask(lengths, width)
    advantages = estimators.group_advantages(torch.tensor([rewards], dtype=F64), "grpo", eps)
    tokens = estimators.token_advantages(advantages, mask)
    if max(rewards) == min(rewards):  # 0/eps = 0; for eps = 0 the convention of D4 (degenerate_group_convention)
        sequence_advantages = [0.0] * size
        derived = np.zeros((size, width))
    else:
        sequence_advantages = [d3_token_advantage()(one_based(rewards), size, q, eps, 1, 1) for q in range(1, size + 1)]
        derived = np.array([[d3_token_advantage()(one_based(rewards), size, q, eps, p, lengths[q - 1])
                             for p in range(1, width + 1)] for q in range(1, size + 1)])
    assert_close(tokens, derived, "D3 token advantages vs A_i m_it")
    for q in range(size):  # every valid token carries exactly A_i
        assert torch.all(tokens[q, :lengths[q]] == advantages.reshape(-1)[q]), f"D3 rollout {q} has unequal tokens"
    # An empty completion (length 0) has an all-zero row, like a zero advantage.
    active_lengths = {lengths[q] for q in range(size) if lengths[q] > 0 and abs(sequence_advantages[q]) > 1e-9}
    measured = rank.tolerance_rank(spectrum(tokens), 1e-8)
    assert measured == len(active_lengths), f"D3 rank {measured} != {len(active_lengths)} distinct active lengths"


def exact_rank(rank_term) -> int:
    """The exact value of a ``MatrixRank`` of an explicit matrix of closed numbers (the independent evaluator's
    elimination with exact zero tests; ``MatrixRank`` never evaluates itself)."""
    return int(exact_value(rank_term, Point()))


D3_INSTANCES = [d3.token_advantage_matrix_rank_is_three_for_three_distinct_lengths,
                d3.token_advantage_matrix_rank_ignores_zero_advantage_rollouts,
                d3.token_advantage_matrix_rank_is_one_for_equal_lengths,
                d3.token_advantage_matrix_rank_is_zero_for_equal_rewards]
D3_INSTANCE_DATA = [((1, 0, 1, 0), (3, 3, 5, 2), 0.0), ((0, 3, 1, 0), (3, 3, 5, 2), 0.0),
                    ((1, 0, 1, 0), (4, 4, 4, 4), 0.0), ((1, 1, 1, 1), (3, 3, 5, 2), 1e-4)]


@given(st.integers(2, 8), st.integers(1, 6), st.sampled_from([0.0, 1e-4, 0.5]), st.data())
@example(4, 5, 0.0, None)
def test_d3_token_advantages_and_rank_equal_derivation(size, width, eps, data):
    if data is None:  # d3's instance: rewards (0, 3, 1, 0), lengths (3, 3, 5, 2): rank 2
        rewards, lengths = [0.0, 3.0, 1.0, 0.0], [3, 3, 5, 2]
    else:  # integer rewards: an advantage is 0 or at least ~1/(R^2 (max - min)), well above round-off
        rewards = data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), min_size=size, max_size=size))
        lengths = data.draw(st.lists(st.integers(0, width), min_size=size, max_size=size))
    check_d3_token_advantages(rewards, lengths, eps, width)


@pytest.mark.parametrize("result, data", list(zip(D3_INSTANCES, D3_INSTANCE_DATA)), ids=[r.name for r in D3_INSTANCES])
def test_d3_exact_rank_instances_match_the_code(result, data):
    rewards, lengths, eps = data
    exact = exact_rank(result.lhs)
    assert exact == int(result.rhs)
    advantages = estimators.group_advantages(torch.tensor([rewards], dtype=F64), "grpo", eps)
    tokens = estimators.token_advantages(advantages, prefix_mask(lengths, max(lengths)))
    symbolic = result.lhs.args[0]  # the explicit sympy matrix with entries A_i m_it
    assert_close(tokens, np.array(exact_value(symbolic, Point()), dtype=np.float64), f"D3 {result.name} matrix")
    assert rank.tolerance_rank(spectrum(tokens), 1e-8) == exact


# == D4: zero sum =================================================================================


def check_d4_binary_group(size: int, successes: int, scale: str, eps: float, order=None) -> None:
    """group_advantages of a binary group = d4's a_+, a_-; the sums from d4's right-hand sides."""
    flags = [1.0] * successes + [0.0] * (size - successes)
    order = list(range(size)) if order is None else order
    rewards = [flags[q] for q in order]
    advantages = estimators.group_advantages(torch.tensor([rewards], dtype=F64), KIND_OF_SCALE[scale], eps)[0]
    if 0 < successes < size:
        plus, minus = (float(x) for x in d4.binary_advantages(scale, successes, size, eps))
        if eps == 0 and scale != "none":
            closed = {"sample": d4.binary_sample_std_advantages_closed_form,
                      "population": d4.binary_population_std_advantages_closed_form}[scale].rhs
            closed_plus, closed_minus = (float(x) for x in closed.subs({R_SYM: size, d4.k: successes}))
            assert_close([plus, minus], [closed_plus, closed_minus], "D4 definition vs closed form")
        balance = float(d4.binary_advantages_balance.rhs)
        assert_close(successes * plus + (size - successes) * minus, balance, "D4 balance k a_+ + (R - k) a_-")
    else:
        plus = minus = float(d4.degenerate_group_has_zero_centred_rewards.rhs)
    expected = [plus if reward == 1.0 else minus for reward in rewards]
    assert_close(advantages, expected, f"D4 {scale} advantages, R={size}, k={successes}, eps={eps}")
    assert_close(advantages.sum(), float(d4.advantages_sum_to_zero.rhs), "D4 sum of advantages")
    if eps == 0 and 0 < successes < size:
        energy = {"sample": d4.squared_sample_std_advantages_sum_to_R_minus_1.rhs,
                  "population": d4.squared_population_std_advantages_sum_to_R.rhs,
                  "none": d4.binary_sum_of_squares_is_k_times_failures_over_R.rhs}[scale]
        assert_close((advantages ** 2).sum(), float(energy.subs({R_SYM: size, d4.k: successes})),
                     f"D4 {scale} sum of squares")


def test_d4_binary_closed_forms_for_every_R_and_k():
    for size in range(2, 9):
        for successes in range(size + 1):
            for scale in ("sample", "population", "none"):
                check_d4_binary_group(size, successes, scale, 0.0)


@given(st.integers(2, 8), st.data(), st.sampled_from(["sample", "population", "none"]),
       st.sampled_from([0.0, 1e-4, 0.5]))
def test_d4_binary_advantages_equal_closed_forms(size, data, scale, eps):
    successes = data.draw(st.integers(0, size))
    order = data.draw(st.permutations(range(size)))
    check_d4_binary_group(size, successes, scale, eps, order)


# == D5: bias of the std-scaled group baseline ====================================================


@functools.cache
def d5_c_R(size: int, scale: str):
    """d5's c_R(p) for a concrete R with a symbolic stabiliser, as f(p, eps)."""
    return lambdify([d5.p, EPS_SYM], d5.c_R(d5.p, size, EPS_SYM, scale))


@functools.cache
def d5_c_R_every_R(size: int, scale: str):
    """d5's c_R(p) for symbolic R (the form proved positive for every R), at R = size, as f(p)."""
    return lambdify([d5.p], d5.c_R(d5.p, d5.R, scale=scale).subs(d5.R, size).doit())


@functools.cache
def d5_table(size: int, scale: str):
    table = d5.C_SAMPLE if scale == "sample" else d5.C_POPULATION
    return lambdify([d5.p], table[size])


def check_d5_binary_scaled_gradient(outcomes, rewards, size: int, std: str, eps: float, rollout: int = 0) -> None:
    """E[A_i g_i] and E[(1/R) sum_i A_i g_i] (oracle) = d5's c_R(p) grad J; c_R also against d5's table."""
    success = oracle.expected_reward(outcomes, rewards)
    gradient = as_array(oracle.policy_gradient(outcomes, rewards))
    factor = d5_c_R(size, std)(success, eps)
    if eps == 0 and size in d5.C_SAMPLE:
        assert_close(factor, d5_table(size, std)(success), f"D5 c_{size}(p) vs its table")
    if eps == 0:
        assert_close(d5_c_R_every_R(size, std)(success), factor, f"D5 c_R(p) for symbolic R at R = {size} ({std})")
    if size <= 4:
        term = oracle.expect_group(outcomes, rewards, size, oracle.std_scaled_term(rollout, std, eps))
        assert_close(term, factor * gradient, f"D5 E[A_{rollout + 1} g_{rollout + 1}] vs c_R(p) grad J ({std})")
    mean = oracle.expect_group(outcomes, rewards, size, oracle.group_gradient(KIND_OF_SCALE[std], eps), symmetric=True)
    assert_close(mean, factor * gradient, f"D5 E[group gradient] vs c_R(p) grad J ({std}, R={size})")


def check_d5_parallel(outcomes, rewards, size: int) -> None:
    """E[A_1 g_1] (sample std, eps = 0) is a multiple of grad J (every 2 x 2 minor vanishes)."""
    term = as_array(oracle.expect_group(outcomes, rewards, size, oracle.std_scaled_term(0, "sample", 0.0)))
    gradient = as_array(oracle.policy_gradient(outcomes, rewards))
    minors = np.outer(term, gradient) - np.outer(gradient, term)
    scale = np.linalg.norm(term) * np.linalg.norm(gradient)
    assert np.abs(minors).max(initial=0.0) <= 1e-9 * (1e-12 + scale), \
        f"D5 E[A_1 g_1] = {term} is not parallel to grad J = {gradient}"


D5_LOGITS = [math.log(3), math.log(2), 0.0]  # d5's counterexample: pi = (1/2, 1/3, 1/6)


@given(binary_reward_problems(), st.integers(2, 4), st.sampled_from(["sample", "population"]),
       st.sampled_from([0.0, 1e-4, 0.5]), st.data())
@example((synthetic.SoftmaxBandit(3, logits=D5_LOGITS), [0]), 3, "sample", 0.0, None)
def test_d5_binary_scaled_gradient_is_c_R_times_gradient(problem, size, std, eps, data):
    policy, correct = problem
    outcomes = policy.enumerate()
    rollout = 0 if data is None else data.draw(st.integers(0, size - 1))
    check_d5_binary_scaled_gradient(outcomes, binary_reward_vector(outcomes.num_outcomes, correct), size, std, eps,
                                    rollout)
    check_d5_parallel(outcomes, binary_reward_vector(outcomes.num_outcomes, correct), size)


@given(bandit_logits(2, 4, bound=2.0), st.sampled_from([4, 8]), st.data())
def test_d5_c_R_tables_for_larger_groups(logits, size, data):
    outcomes = synthetic.SoftmaxBandit(len(logits), logits=logits).enumerate()
    correct = data.draw(st.sets(st.integers(0, len(logits) - 1)))
    check_d5_binary_scaled_gradient(outcomes, binary_reward_vector(len(logits), correct), size,
                                    data.draw(st.sampled_from(["sample", "population"])), 0.0)


@st.composite
def three_level_bandits(draw):
    """(logits, rewards): a 3-action bandit with three distinct reward levels."""
    logits = draw(st.lists(finite(-2, 2), min_size=3, max_size=3))
    rewards = draw(st.lists(finite(-1, 1), min_size=3, max_size=3, unique=True))
    return logits, rewards


def is_parallel(problem, size: int = 2) -> bool:
    logits, rewards = problem
    try:
        check_d5_parallel(synthetic.SoftmaxBandit(3, logits=logits).enumerate(), torch.tensor(rewards, dtype=F64), size)
    except AssertionError:
        return False
    return True


def test_d5_three_reward_levels_break_parallelism_found_by_hypothesis():
    logits, rewards = find(three_level_bandits(), lambda problem: not is_parallel(problem))
    assert len(set(rewards)) == 3
    with pytest.raises(AssertionError, match="not parallel"):
        check_d5_parallel(synthetic.SoftmaxBandit(3, logits=logits).enumerate(), torch.tensor(rewards, dtype=F64), 2)


@pytest.mark.parametrize("size", [2, 3])
def test_d5_counterexample_vectors_equal_the_oracle(size):
    """d5's exact E[A_1 g_1] and grad J for pi = (1/2, 1/3, 1/6), r = (1, 1/2, 0) = the oracle's; not parallel."""
    outcomes = synthetic.SoftmaxBandit(3, logits=D5_LOGITS).enumerate()
    rewards = torch.tensor([float(x) for x in d5.rewards_cx], dtype=F64)
    term = oracle.expect_group(outcomes, rewards, size, oracle.std_scaled_term(0, "sample", 0.0))
    assert_close(term, np.array(d5.scaled_cx[size].evalf(), dtype=np.float64).reshape(-1), f"D5 R={size} E[A_1 g_1]")
    assert_close(oracle.policy_gradient(outcomes, rewards), np.array(d5.grad_J_cx, dtype=np.float64).reshape(-1),
                 "D5 grad J")
    minor = {2: d5.three_reward_scaled_gradient_is_not_parallel_R2,
             3: d5.three_reward_scaled_gradient_is_not_parallel_R3}[size].lhs
    gradient = oracle.policy_gradient(outcomes, rewards)
    assert_close(term[0] * gradient[1] - term[1] * gradient[0], float(minor), "D5 minor")
    assert abs(float(minor)) > 1e-3
    with pytest.raises(AssertionError, match="not parallel"):
        check_d5_parallel(outcomes, rewards, size)


# == D6: sparsity =================================================================================


@functools.cache
def d6_expressions():
    result = d6.all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R
    zero = lambdify([d6.p, R_SYM], result.rhs)
    floor = lambdify([R_SYM], d6.zero_gradient_probability_at_one_half_is_two_pow_one_minus_R.rhs)
    return zero, floor


def check_d6_zero_advantage_probability(outcomes, rewards, size: int, kind: str) -> float:
    """P(all advantages 0) (oracle) = d6's p^R + (1-p)^R >= 2^(1-R); returns the value."""
    zero, floor = d6_expressions()
    success = oracle.expected_reward(outcomes, rewards)
    measured = float(oracle.expect_group(outcomes, rewards, size, oracle.zero_advantage_indicator(kind), symmetric=True))
    assert_close(measured, zero(success, size), f"D6 P(zero-advantage group), {kind}, R={size}")
    assert_close(float(d6.all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R.lhs.subs(
        {R_SYM: size, d6.p: success}).doit()), zero(success, size), "D6 product form")
    assert measured >= floor(size) - TOLERANCE, f"D6 {measured} below 2^(1-R) = {floor(size)}"
    return measured


@given(binary_reward_problems(), st.integers(2, 8), st.sampled_from(list(oracle.GROUP_ADVANTAGE_KINDS)))
def test_d6_zero_advantage_probability_equals_derivation(problem, size, kind):
    policy, correct = problem
    outcomes = policy.enumerate()
    check_d6_zero_advantage_probability(outcomes, binary_reward_vector(outcomes.num_outcomes, correct), size, kind)


@pytest.mark.parametrize("size", range(2, 9))
def test_d6_minimum_two_pow_one_minus_R_is_attained_at_one_half(size):
    outcomes = synthetic.SoftmaxBandit(4, logits=[0.3] * 4).enumerate()  # uniform: p = 1/2 with two correct
    measured = check_d6_zero_advantage_probability(outcomes, binary_reward_vector(4, [1, 2]), size, "grpo")
    assert_close(measured, d6_expressions()[1](size), "D6 minimum at p = 1/2")


@functools.cache
def d6_drift(correct: tuple[int, ...]):
    norm = lambdify([d6.th], d6.gradient_norm_squared(correct))
    slope = lambdify([d6.p, R_SYM], d6.zero_gradient_probability_slope())
    return norm, slope


def check_d6_first_order_drift(logits, correct: tuple[int, ...], size: int) -> None:
    """||grad p||^2 (autograd) = d6's closed form; d/d eta E[p] and E[z_R(p)] at 0 = (R-1)/R ||grad p||^2 (times z')."""
    policy = synthetic.SoftmaxBandit(3, logits=logits)
    outcomes = policy.enumerate()
    rewards = binary_reward_vector(3, correct)
    success = (policy.log_prob(outcomes.sequences).exp() * rewards).sum()
    grad_p = policy.flat_gradient(success)
    norm, slope = d6_drift(correct)
    assert_close(grad_p @ grad_p, norm(logits), "D6 ||grad p||^2 vs its closed form")
    update = oracle.expect_group(outcomes, rewards, size, oracle.dr_grpo_group_gradient(), symmetric=True)
    rate = (size - 1) / size * norm(logits)
    assert_close(grad_p @ update, rate, "D6 first-order drift of p")
    success = (policy.log_prob(outcomes.sequences).exp() * rewards).sum()
    grad_z = policy.flat_gradient(success ** size + (1 - success) ** size)
    assert_close(grad_z @ update, slope(success.item(), size) * rate, "D6 first-order drift of z_R(p)")


@given(bandit_logits(3, 3), st.sampled_from(d6.CORRECT_SETS), st.integers(2, 6))
def test_d6_first_order_drift_equals_derivation(logits, correct, size):
    check_d6_first_order_drift(logits, correct, size)


# == D7: rank structure ===========================================================================


@functools.cache
def d7_class_mean_gradient():
    rhs = d7.binary_group_gradient_is_class_mean_difference.rhs
    return sp.lambdify([d7.k, R_SYM, d7.c, d7.gC, d7.gW], rhs, modules="numpy")


def group_scale(rewards: torch.Tensor, kind: str, eps: float) -> float:
    """The common scale c of A_i = (r_i - rbar)/c for one group."""
    size = rewards.numel()
    return {"grpo": rewards.std(correction=1).item() + eps, "population": rewards.std(correction=0).item() + eps,
            "dr_grpo": 1.0, "rloo": (size - 1) / size}[kind]


def check_d7_class_mean_difference(scores: torch.Tensor, rewards: torch.Tensor, kind: str, eps: float) -> None:
    """sum_i A_i g_i (code) = d7's k a_+ (gbar_C - gbar_W) for a binary group; it is one vector (rank <= 1)."""
    advantages = estimators.group_advantages(rewards[None], kind, eps)[0]
    gradient = (advantages[:, None] * scores).sum(dim=0)
    size, successes = rewards.numel(), int(rewards.sum().item())
    if 0 < successes < size:
        correct = rewards == 1
        derived = d7_class_mean_gradient()(successes, size, group_scale(rewards, kind, eps),
                                           as_array(scores[correct].mean(dim=0)), as_array(scores[~correct].mean(dim=0)))
    else:  # D6: a degenerate group contributes exactly no gradient
        derived = np.zeros(scores.shape[1]) + float(d6.degenerate_group_contributes_zero_gradient.rhs)
    assert_close(gradient, derived, f"D7 group gradient vs k a_+ (gbar_C - gbar_W), {kind}")
    metrics = rank.rank_metrics_of_matrix(as_array(gradient)[:, None])
    assert metrics.tolerance_rank <= 1 and metrics.effective_rank <= 1, "D7 the group gradient is one vector"


@given(synthetic.policy_strategy(max_outcomes=8), st.integers(2, 8), st.data(),
       st.sampled_from(list(oracle.GROUP_ADVANTAGE_KINDS)), st.sampled_from([0.0, 1e-4]))
def test_d7_binary_group_gradient_is_class_mean_difference(policy, size, data, kind, eps):
    outcomes = policy.enumerate()
    indices = data.draw(st.lists(st.integers(0, outcomes.num_outcomes - 1), min_size=size, max_size=size))
    distinct = sorted(set(indices))
    if len(distinct) >= 2:  # make the group mixed: a proper non-empty subset of its outcomes is correct
        correct = data.draw(st.sets(st.sampled_from(distinct), min_size=1, max_size=len(distinct) - 1))
    else:
        correct = data.draw(st.sets(st.sampled_from(distinct)))
    rewards = binary_reward_vector(outcomes.num_outcomes, correct)[indices]
    check_d7_class_mean_difference(outcomes.scores[indices], rewards, kind, eps)


def check_d7_two_cluster_ranks(size: int, successes: int, correct_mean, wrong_mean, kind: str) -> None:
    """d7's two-cluster scores: rank and effective rank of G and diag(A) G <= 2, centred G rank <= 1."""
    scores = np.array(d7.two_cluster_scores(size, successes, sp.Matrix(correct_mean), sp.Matrix(wrong_mean)),
                      dtype=np.float64)
    factor = np.array(d7.class_indicator(size, successes), dtype=np.float64) @ np.array([correct_mean, wrong_mean])
    assert_close(scores, factor, "D7 G = Z B")
    rewards = torch.tensor([1.0] * successes + [0.0] * (size - successes), dtype=F64)
    advantages = as_array(estimators.group_advantages(rewards[None], kind, 1e-4)[0])
    centring = np.array(d7.centring_matrix(size), dtype=np.float64)
    reference = float(spectrum(scores).max(initial=0.0))  # round-off is measured against G's scale
    for name, matrix, bound in (("G", scores, 2), ("diag(A) G", advantages[:, None] * scores, 2),
                                ("centred G", centring @ scores, 1)):
        sigma = spectrum(matrix)
        sigma = np.where(sigma > 1e-9 * reference, sigma, 0.0)  # exact zeros (e.g. gbar_C = gbar_W) stay zero
        measured = rank.rank_metrics(sigma)
        assert measured.tolerance_rank <= bound, f"D7 two-cluster {name} has rank {measured.tolerance_rank}"
        assert measured.effective_rank <= bound + 1e-9, f"D7 two-cluster {name} has erank {measured.effective_rank}"


@given(st.integers(2, 8), st.data(), st.integers(2, 6), st.sampled_from(list(oracle.GROUP_ADVANTAGE_KINDS)))
def test_d7_two_cluster_scores_have_rank_at_most_two(size, data, dim, kind):
    successes = data.draw(st.integers(1, size - 1))
    vector = st.lists(finite(-3, 3), min_size=dim, max_size=dim)
    check_d7_two_cluster_ranks(size, successes, data.draw(vector), data.draw(vector), kind)


@given(bandit_logits(8, 8, bound=1.5), st.permutations(range(8)), st.lists(finite(0, 0.5), min_size=8, max_size=8),
       st.booleans())
def test_d7_spread_out_scores_give_effective_rank_above_three(logits, order, jitter, binary):
    """Without the two-cluster assumption: R = 8 distinct actions, diag(A) G has effective rank > 3."""
    scores = synthetic.SoftmaxBandit(8, logits=logits).enumerate().scores  # rows e_a - pi, rank 7
    rewards = [float(q % 2) for q in order] if binary else [q + x for q, x in zip(order, jitter)]
    advantages = estimators.group_advantages(torch.tensor([rewards], dtype=F64), "grpo")[0]
    weighted = rank.rank_metrics(spectrum(advantages[:, None] * scores))
    assert weighted.effective_rank > 3, f"D7 diag(A) G erank {weighted.effective_rank}"
    assert weighted.tolerance_rank == 7
    centred = np.array(d7.centring_matrix(8), dtype=np.float64) @ as_array(scores)
    assert rank.tolerance_rank(spectrum(centred)) == 7  # zero-sum centring bounds by R - 1 = 7, attained


def test_d7_rank_four_instance_matches_the_code():
    advantages = estimators.group_advantages(torch.tensor([[1.0, 0.0, 0.0, 0.0]], dtype=F64), "grpo", 0.0)[0]
    assert_close(advantages, [float(a) for a in d7.A4], "D7 A4")
    weighted = advantages[:, None] * torch.tensor(np.array(d7.G4, dtype=np.float64))
    exact = exact_rank(d7.advantage_weighted_scores_have_rank_four_for_R4.lhs)
    assert rank.tolerance_rank(spectrum(weighted)) == exact == 4
    centred = np.array(d7.centring_matrix(4), dtype=np.float64) @ np.array(d7.G4, dtype=np.float64)
    assert rank.tolerance_rank(spectrum(centred)) == exact_rank(d7.centred_scores_have_rank_three_for_R4.lhs) == 3


# == D8: the optimal baseline =====================================================================


@functools.cache
def d8_expressions():
    args = [d8.pi, d8.r, d8.K]
    optimal = lambdify(args, d8.softmax_optimal_baseline_closed_form.rhs)
    gap = lambdify(args, d8.softmax_optimal_baseline_minus_mean_reward.rhs)
    norm = lambdify([d8.pi, d8.K, d8.a], d8.softmax_squared_score_norm_every_K.rhs.xreplace({d8.pi[1]: d8.pi[d8.a]}))
    variance = lambdify([d8.M0, d8.M1, d8.M2, d8.J2, d8.b], d8.total_variance_in_moments(d8.b))
    return optimal, gap, norm, variance


def check_d8_optimal_baseline(logits, rewards, baselines=()) -> float:
    """d8's softmax b*, ||g(a)||^2, b* - E[r] and V(b) = the oracle's; V(b*) <= V(b). Returns b* - E[r]."""
    policy = synthetic.SoftmaxBandit(len(logits), logits=logits)
    outcomes = policy.enumerate()
    reward_vector = torch.tensor(rewards, dtype=F64)
    probs, size = one_based(policy.probabilities().tolist()), len(logits)
    optimal, gap, norm, variance = d8_expressions()
    assert_close((outcomes.scores ** 2).sum(dim=1), [norm(probs, size, a) for a in range(1, size + 1)],
                 "D8 ||g(a)||^2 vs 1 - 2 pi_a + S")
    best = oracle.optimal_baseline(outcomes, reward_vector)
    assert_close(best, optimal(probs, one_based(rewards), size), "D8 oracle b* vs softmax closed form")
    mean = oracle.expected_reward(outcomes, reward_vector)
    assert_close(best - mean, gap(probs, one_based(rewards), size), "D8 b* - E[r] vs the covariance form")
    moments = [oracle.score_norm_moment(outcomes, reward_vector, order) for order in range(3)]
    gradient = oracle.policy_gradient(outcomes, reward_vector)
    least = oracle.baseline_total_variance(outcomes, reward_vector, best)
    for baseline in (best, mean, *baselines):
        measured = oracle.baseline_total_variance(outcomes, reward_vector, baseline)
        assert_close(measured, variance(*moments, float(gradient @ gradient), baseline), "D8 V(b) vs its moment form")
        assert least <= measured + TOLERANCE * (1 + abs(measured)), f"D8 V(b*) = {least} > V({baseline}) = {measured}"
    return best - mean


@given(bandit_logits(), st.data(), st.lists(finite(-10, 10), min_size=1, max_size=3))
@example([math.log(2), 0.0, 0.0], None, [0.5])
def test_d8_optimal_baseline_equals_closed_form_and_minimises_variance(logits, data, baselines):
    if data is None:  # d8's instance: pi = (1/2, 1/4, 1/4), r = (1, 0, 0), b* = 3/10
        rewards = [1.0, 0.0, 0.0]
    else:
        rewards = data.draw(st.lists(finite(-5, 5), min_size=len(logits), max_size=len(logits)))
    check_d8_optimal_baseline(logits, rewards, baselines)
    if data is None:
        outcomes = synthetic.SoftmaxBandit(3, logits=logits).enumerate()
        best = oracle.optimal_baseline(outcomes, torch.tensor(rewards, dtype=F64))
        assert_close(best, float(d8.softmax_example_optimal_baseline_is_three_tenths.rhs), "D8 b* = 3/10")


@given(st.integers(2, 8), finite(-3, 3), st.data(), st.sampled_from(["uniform policy", "constant reward"]))
def test_d8_mean_baseline_is_optimal_under_the_covariance_condition(size, value, data, case):
    if case == "uniform policy":
        logits = [value] * size
        rewards = data.draw(st.lists(finite(-5, 5), min_size=size, max_size=size))
    else:
        logits = data.draw(st.lists(finite(-3, 3), min_size=size, max_size=size))
        rewards = [value] * size
    assert abs(check_d8_optimal_baseline(logits, rewards)) <= TOLERANCE * (1 + max(map(abs, rewards)))


@given(bandit_logits(), st.data())
def test_d8_mean_baseline_is_not_optimal_without_the_covariance_condition(logits, data):
    rewards = data.draw(st.lists(finite(-5, 5), min_size=len(logits), max_size=len(logits)))
    probs = torch.softmax(torch.tensor(logits, dtype=F64), dim=0)
    reward_vector = torch.tensor(rewards, dtype=F64)
    condition = float((probs ** 2) @ reward_vector - (probs @ probs) * (probs @ reward_vector))
    assume(abs(condition) > 1e-4)  # Cov_{a ~ pi}(r_a, pi_a) != 0
    assert abs(check_d8_optimal_baseline(logits, rewards)) > 1e-6


# == planted bugs: every family's check fails on broken code ======================================


def _bug(monkeypatch, owner, name, replacement):
    monkeypatch.setattr(owner, name, replacement)


def plant_d1_sign_flipped_score(monkeypatch):
    original = synthetic.SoftmaxBandit.scores
    _bug(monkeypatch, synthetic.SoftmaxBandit, "scores", lambda self, sequences: -original(self, sequences))


def plant_d1_doubled_logits(monkeypatch):  # the model computes softmax(2 theta): autograd scores change
    _bug(monkeypatch, synthetic.SoftmaxBandit, "next_token_logits",
         lambda self, prefixes: 2 * self.logits.expand(prefixes.shape[0], -1))


def plant_d1_tabular_score_drops_last_token(monkeypatch):
    def scores(self, sequences):
        tokens = flat_gradients(token_log_probs(self, sequences), self)
        return torch.tensor(tokens[:, :-1].sum(axis=1))
    _bug(monkeypatch, synthetic.TabularAutoregressive, "scores", scores)


def plant_d2_grpo_divides_by_padded_width(monkeypatch):
    def aggregate(per_token_loss, completion_mask):
        masked, _ = estimators._masked_losses(per_token_loss, completion_mask)
        return (masked.sum(dim=1) / per_token_loss.shape[1]).mean()
    _bug(monkeypatch, estimators, "aggregate_grpo", aggregate)


def plant_d2_k3_arguments_swapped(monkeypatch):
    original = estimators.k3_kl
    _bug(monkeypatch, estimators, "k3_kl", lambda logps, ref_logps: original(ref_logps, logps))


def plant_d2_max_instead_of_min(monkeypatch):
    def surrogate(logps, old_logps, advantages, eps_low=0.2, eps_high=None):
        eps_high = eps_low if eps_high is None else eps_high
        ratio = torch.exp(logps - old_logps)
        advantage = advantages.reshape(-1)[:, None]
        return torch.maximum(ratio * advantage, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * advantage)
    _bug(monkeypatch, estimators, "clipped_surrogate", surrogate)


def plant_d3_mask_ignored(monkeypatch):
    _bug(monkeypatch, estimators, "token_advantages",
         lambda advantages, mask: advantages.reshape(-1)[:, None] * torch.ones(mask.shape, dtype=advantages.dtype))


def plant_grpo_population_std(monkeypatch):
    _bug(monkeypatch, estimators, "grpo_advantages", estimators.population_std_advantages)


def plant_d6_constant_test_by_std_threshold(monkeypatch):
    def zero_constant_groups(advantages, rewards):  # "constant" by a too coarse std tolerance
        return advantages.masked_fill(rewards.std(dim=1, keepdim=True) < 0.5, 0.0)
    _bug(monkeypatch, estimators, "_zero_constant_groups", zero_constant_groups)


def plant_d7_first_rollout_baseline(monkeypatch):
    _bug(monkeypatch, estimators, "_centred", lambda rewards: rewards - rewards[:, :1])


def plant_d8_mean_is_optimal(monkeypatch):
    _bug(monkeypatch, oracle, "optimal_baseline", oracle.expected_reward)


def _tabular():
    return synthetic.TabularAutoregressive(2, 3, seed=5)


def _group():
    policy = _tabular()
    return policy, policy.all_sequences()[[0, 5, 3, 6]], [3, 1, 2, 3], [1.0, 0.0, 2.0, 1.0]


def _bandit_outcomes(logits=(0.4, -0.3, 1.1)):
    return synthetic.SoftmaxBandit(len(logits), logits=list(logits)).enumerate()


PLANTED = [
    pytest.param(plant_d1_sign_flipped_score, lambda: check_d1_softmax_scores(synthetic.SoftmaxBandit(4, seed=1)),
                 id="D1-score-sign-flipped"),
    pytest.param(plant_d1_doubled_logits, lambda: check_d1_softmax_scores(synthetic.SoftmaxBandit(4, seed=1)),
                 id="D1-model-uses-2-theta"),
    pytest.param(plant_d1_tabular_score_drops_last_token, lambda: check_d1_sequence_scores(_tabular()),
                 id="D1-sequence-score-drops-last-token"),
    pytest.param(plant_d2_grpo_divides_by_padded_width, lambda: check_d2_first_gradient(*_group(), "grpo"),
                 id="D2-grpo-aggregation-divides-by-padded-width"),
    pytest.param(plant_d2_k3_arguments_swapped,
                 lambda: check_d2_k3_gradient(*_group()[:2], [[0.3, -0.2, 0.0]] * 4), id="D2-k3-arguments-swapped"),
    pytest.param(plant_d2_max_instead_of_min, lambda: check_d2_clipped_term([0.5, 1.5], [1.0, 1.0], 0.2, 0.2),
                 id="D2-clip-max-instead-of-min"),
    pytest.param(plant_d3_mask_ignored, lambda: check_d3_token_advantages([0.0, 3.0, 1.0, 0.0], [3, 3, 5, 2], 0.0, 5),
                 id="D3-mask-ignored"),
    pytest.param(plant_grpo_population_std, lambda: check_d4_binary_group(5, 2, "sample", 0.0), id="D4-population-std"),
    pytest.param(plant_grpo_population_std,
                 lambda: check_d5_binary_scaled_gradient(_bandit_outcomes(), torch.tensor([1.0, 0.0, 0.0], dtype=F64),
                                                         3, "sample", 0.0), id="D5-wrong-c_R-population-std"),
    pytest.param(plant_d6_constant_test_by_std_threshold,
                 lambda: check_d6_zero_advantage_probability(_bandit_outcomes(), torch.tensor([1.0, 0.0, 0.0],
                                                                                              dtype=F64), 5, "grpo"),
                 id="D6-constant-group-test-by-std-threshold"),
    pytest.param(plant_d7_first_rollout_baseline,
                 lambda: check_d7_class_mean_difference(_bandit_outcomes().scores[[0, 1, 2, 0]],
                                                        torch.tensor([0.0, 1.0, 1.0, 0.0], dtype=F64), "grpo", 1e-4),
                 id="D7-first-rollout-as-baseline"),
    pytest.param(plant_d8_mean_is_optimal, lambda: check_d8_optimal_baseline([math.log(2), 0.0, 0.0], [1.0, 0.0, 0.0]),
                 id="D8-mean-reward-claimed-optimal"),
]


@pytest.mark.parametrize("plant, check", PLANTED)
def test_planted_bug_is_caught(monkeypatch, plant, check):
    check()  # the correct code passes
    plant(monkeypatch)
    with pytest.raises(AssertionError):
        check()
