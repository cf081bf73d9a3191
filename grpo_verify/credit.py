"""Exact per-step credit on an enumerable multi-step policy: outcome-only estimators against exact Q - V credit.

A *chain task* of H steps: a ``TabularAutoregressive`` policy over the tokens {0, 1} (1 = the step is
right) and length H, with reward 1 iff every token is 1. Step h is decided by the table row of the
all-right prefix 1^(h-1) (the *path row*); its success probability is q_h = softmax(row)[1], so the
success probability of the task is p = q_1 ... q_H. The *step-h coordinate* is the logit of token 1 in
that row; its score is 1[o_1..o_(h-1) all right] (1[o_h = 1] - q_h). Rows of prefixes that already hold
a wrong token cannot change the reward (D10).

Everything is computed exactly, by enumerating the V^T outcomes (``EnumerablePolicy.enumerate``):

* ``credit_tables(policy, rewards)``: per outcome and position t, the token score g_t (its row's V
  coordinates: e_(o_t) - pi(. | o_<t)), Q_t = E[r | o_<=t], V_t = E[r | o_<t], and the per-state
  variance-optimal baseline (coordinatewise, D8 within one state);
* single-rollout estimators, one value (P,) per outcome: ``outcome_estimates`` ((r - b) g with b = 0, the
  oracle mean J, or the coordinatewise optimal b*_k = E[r g_k^2] / E[g_k^2]) and ``exact_credit_estimates``
  (sum_t (Q_t - b_t) g_t with b_t = V_t, or the per-state optimal baseline);
* ``moments(outcomes, values)``: the exact mean and per-coordinate variance over one rollout;
  ``per_step_statistics``: mean, variance and SNR = mean^2 / variance of the step coordinates for every
  estimator kind in ``ESTIMATOR_KINDS``, for a group of R i.i.d. rollouts (averaged; the no-std GRPO group
  mean through the variance of the sample covariance, checked against ``grpo_verify.oracle.expect_group``
  in the tests);
* ``group_mean_estimator`` / ``exact_credit_group_estimator`` for ``grpo_verify.oracle.expect_group``, and
  ``zero_gradient_probability`` (outcome-only: all R rewards equal) and
  ``zero_gradient_probability_by_enumeration`` (any estimator: the group's estimate is exactly the zero vector).

Everything is float64 and noise-free; nothing here proves anything (the closed forms are D10's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from grpo_verify import oracle
from grpo_verify.synthetic import DTYPE, Outcomes, TabularAutoregressive

ESTIMATOR_KINDS = ("outcome_none", "outcome_mean", "outcome_optimal", "outcome_group_mean", "exact_credit",
                   "exact_credit_optimal")
"""outcome_*: (r - b) g with b = 0 / J / coordinatewise b*; outcome_group_mean: no-std GRPO (r_i - rbar) g_i
averaged over the group; exact_credit: sum_t (Q_t - V_t) g_t; exact_credit_optimal: per-state optimal baseline."""


# == the chain task ==================================================================================


def chain_policy(step_success: Sequence[float], off_path_seed: int | None = 0) -> TabularAutoregressive:
    """A TabularAutoregressive policy over {0, 1}^H whose path row h gives P(o_h = 1 | 1^(h-1)) = step_success[h-1].

    Path rows get logits (0, log(q / (1 - q))); the other rows N(0, 1) draws seeded by ``off_path_seed``
    (zeros when it is None). They do not affect P(all right) but do receive outcome-only gradient noise.
    """
    qs = [float(q) for q in step_success]
    if not qs or any(not 0 < q < 1 for q in qs):
        raise ValueError(f"step_success must be a non-empty list of probabilities in (0, 1), got {step_success!r}")
    length = len(qs)
    policy = TabularAutoregressive(2, length, shared=False, seed=0 if off_path_seed is None else off_path_seed)
    with torch.no_grad():
        if off_path_seed is None:
            policy.table.zero_()
        for h, q in enumerate(qs, start=1):
            row = path_row(policy, h)
            policy.table[row, 0] = 0.0
            policy.table[row, 1] = math.log(q / (1 - q))
    return policy


def path_row(policy: TabularAutoregressive, h: int) -> int:
    """The table row used at step h (1-based) after the all-right prefix 1^(h-1)."""
    if not 1 <= h <= policy.length:
        raise ValueError(f"step h must lie in 1..{policy.length}, got {h}")
    prefix = torch.ones(1, h - 1, dtype=torch.int64)
    return int(policy.context_row(prefix)[0])


def step_coordinate(policy: TabularAutoregressive, h: int) -> int:
    """Index, in a flattened score vector, of the logit of token 1 in path row h."""
    return path_row(policy, h) * policy.vocab_size + 1


def step_coordinates(policy: TabularAutoregressive) -> list[int]:
    return [step_coordinate(policy, h) for h in range(1, policy.length + 1)]


def step_success_probabilities(policy: TabularAutoregressive) -> list[float]:
    """q_h = P(o_h = 1 | 1^(h-1)) for h = 1..H."""
    table = policy.table.detach()
    return [float(torch.softmax(table[path_row(policy, h)], dim=0)[1]) for h in range(1, policy.length + 1)]


def all_right_rewards(outcomes: Outcomes) -> Tensor:
    """r(o) = 1 iff every token is 1, as float64 (N,)."""
    return (outcomes.sequences == 1).all(dim=1).to(DTYPE)


# == exact per-step tables ===========================================================================


@dataclass(frozen=True, eq=False)
class CreditTables:
    """Exact per-step quantities of every outcome: N outcomes, T positions, P parameters.

    token_scores (N, T, P): the score of token t alone (the sequence score is their sum);
    q_values (N, T) = E[r | o_<=t], v_values (N, T) = E[r | o_<t] (so q_values - v_values is the exact
    advantage of token t); state_baselines (N, T, P): the per-state variance-optimal baseline of each
    coordinate of the row used at t (0 elsewhere).
    """

    outcomes: Outcomes
    rewards: Tensor
    token_scores: Tensor
    q_values: Tensor
    v_values: Tensor
    state_baselines: Tensor

    @property
    def advantages(self) -> Tensor:
        """Q_t - V_t, shape (N, T)."""
        return self.q_values - self.v_values


def _prefix_codes(sequences: Tensor, length: int, vocab: int) -> Tensor:
    """Code of each sequence's prefix of ``length`` tokens (prefix written in base ``vocab``), shape (N,)."""
    if length == 0:
        return torch.zeros(sequences.shape[0], dtype=torch.int64)
    powers = vocab ** torch.arange(length - 1, -1, -1, dtype=torch.int64)
    return (sequences[:, :length] * powers).sum(dim=1)


def _prefix_values(outcomes: Outcomes, rewards: Tensor, length: int, vocab: int) -> Tensor:
    """E[r | prefix] for every prefix code of ``length`` tokens, shape (vocab^length,) (0 where unreachable)."""
    codes = _prefix_codes(outcomes.sequences, length, vocab)
    size = vocab ** length
    mass = torch.zeros(size, dtype=DTYPE).index_add_(0, codes, outcomes.probs)
    weighted = torch.zeros(size, dtype=DTYPE).index_add_(0, codes, outcomes.probs * rewards)
    return torch.where(mass > 0, weighted / torch.where(mass > 0, mass, 1.0), 0.0)


def credit_tables(policy: TabularAutoregressive, rewards: Tensor | None = None) -> CreditTables:
    """Enumerate ``policy`` and compute token scores, Q, V and per-state optimal baselines (rewards default:
    ``all_right_rewards``)."""
    if not isinstance(policy, TabularAutoregressive):
        raise ValueError(f"credit_tables needs a TabularAutoregressive policy, got {type(policy).__name__}")
    outcomes = policy.enumerate()
    rewards = all_right_rewards(outcomes) if rewards is None else oracle.reward_vector(outcomes, rewards)
    num, length, vocab = outcomes.num_outcomes, policy.length, policy.vocab_size
    table = policy.table.detach()
    scores = torch.zeros(num, length, *table.shape, dtype=DTYPE)
    baselines = torch.zeros_like(scores)
    q_values = torch.zeros(num, length, dtype=DTYPE)
    v_values = torch.zeros(num, length, dtype=DTYPE)
    positions = torch.arange(num)
    eye = torch.eye(vocab, dtype=DTYPE)
    for t in range(length):
        rows = policy.context_row(outcomes.sequences[:, :t])
        probs = torch.softmax(table[rows], dim=-1)  # (N, V): pi(. | o_<t)
        tokens = outcomes.sequences[:, t]
        scores[positions, t, rows] = eye[tokens] - probs
        values_next = _prefix_values(outcomes, rewards, t + 1, vocab)
        prefix = _prefix_codes(outcomes.sequences, t, vocab)
        q_all = values_next[prefix[:, None] * vocab + torch.arange(vocab)]  # (N, V): Q(o_<t, a) for every a
        q_values[:, t] = q_all[positions, tokens]
        v_values[:, t] = (probs * q_all).sum(dim=1)
        # coordinate a' of the row: score of action a is delta_{a a'} - pi_a'; b*(s, a') = E_a[Q g^2] / E_a[g^2]
        squares = (eye[None, :, :] - probs[:, None, :]) ** 2  # (N, a, a')
        numerator = (probs[:, :, None] * q_all[:, :, None] * squares).sum(dim=1)
        denominator = (probs[:, :, None] * squares).sum(dim=1)
        baselines[positions, t, rows] = torch.where(denominator > 0, numerator / torch.where(denominator > 0,
                                                                                            denominator, 1.0), 0.0)
    return CreditTables(outcomes, rewards, scores.flatten(2), q_values, v_values, baselines.flatten(2))


# == single-rollout estimators =======================================================================


def outcome_estimates(tables: CreditTables, baseline: str | float | Tensor = "none") -> Tensor:
    """(r - b) g per outcome, (N, P); b = "none" (0), "mean" (J = E[r]), "optimal" (coordinatewise b*_k), or a
    number / (P,) tensor."""
    outcomes, rewards = tables.outcomes, tables.rewards
    if isinstance(baseline, str):
        if baseline == "none":
            b: Tensor | float = 0.0
        elif baseline == "mean":
            b = oracle.expected_reward(outcomes, rewards)
        elif baseline == "optimal":
            b = oracle.coordinatewise_optimal_baseline(outcomes, rewards)
        else:
            raise ValueError(f"baseline must be 'none', 'mean', 'optimal' or a number, got {baseline!r}")
    else:
        b = torch.as_tensor(baseline, dtype=DTYPE)
    return (rewards[:, None] - b) * outcomes.scores


def exact_credit_estimates(tables: CreditTables, baseline: str = "value") -> Tensor:
    """sum_t (Q_t - b_t) g_t per outcome, (N, P); b_t = V_t ("value") or the per-state optimal baseline ("optimal")."""
    if baseline == "value":
        return (tables.advantages[:, :, None] * tables.token_scores).sum(dim=1)
    if baseline == "optimal":
        return ((tables.q_values[:, :, None] - tables.state_baselines) * tables.token_scores).sum(dim=1)
    raise ValueError(f"baseline must be 'value' or 'optimal', got {baseline!r}")


def moments(outcomes: Outcomes, values: Tensor) -> tuple[Tensor, Tensor]:
    """Exact (mean (P,), variance (P,)) of a per-outcome quantity ``values`` (N, P) over one rollout."""
    mean = outcomes.probs @ values
    return mean, outcomes.probs @ values ** 2 - mean ** 2


def group_mean_variance(outcomes: Outcomes, rewards: Tensor, group_size: int) -> tuple[Tensor, Tensor]:
    """Exact (mean, variance) per coordinate of the no-std GRPO estimate (1/R) sum_i (r_i - rbar) g_i.

    It is (R-1)/R times the unbiased sample covariance of (r, g_k), whose variance is
    (mu_22 - c^2)/R + (var_r var_g + c^2)/(R (R-1)) with c = Cov(r, g_k) and mu_22 = E[(r - J)^2 g_k^2].
    """
    if not (isinstance(group_size, int) and group_size >= 2):
        raise ValueError(f"group_size must be an int >= 2, got {group_size!r}")
    size = group_size
    rewards = oracle.reward_vector(outcomes, rewards)
    mean_r = float(outcomes.probs @ rewards)
    centred = rewards - mean_r
    scores = outcomes.scores - outcomes.probs @ outcomes.scores
    c = outcomes.probs @ (centred[:, None] * scores)
    mu22 = outcomes.probs @ (centred[:, None] ** 2 * scores ** 2)
    var_r = float(outcomes.probs @ centred ** 2)
    var_g = outcomes.probs @ scores ** 2
    factor = (size - 1) / size
    variance = factor ** 2 * ((mu22 - c ** 2) / size + (var_r * var_g + c ** 2) / (size * (size - 1)))
    return factor * c, variance


def per_step_statistics(policy: TabularAutoregressive, kind: str, group_size: int = 1,
                        tables: CreditTables | None = None) -> dict[str, list[float]]:
    """Mean, variance and SNR (mean^2 / variance; inf for zero variance) of the step-h coordinates, h = 1..H, for
    an estimate averaged over a group of ``group_size`` i.i.d. rollouts. Kinds: ``ESTIMATOR_KINDS``."""
    tables = credit_tables(policy) if tables is None else tables
    if not (isinstance(group_size, int) and group_size >= 1):
        raise ValueError(f"group_size must be an int >= 1, got {group_size!r}")
    if kind == "outcome_group_mean":
        mean, variance = group_mean_variance(tables.outcomes, tables.rewards, group_size)
    else:
        if kind in ("outcome_none", "outcome_mean", "outcome_optimal"):
            values = outcome_estimates(tables, kind.split("_", 1)[1])
        elif kind in ("exact_credit", "exact_credit_optimal"):
            values = exact_credit_estimates(tables, "value" if kind == "exact_credit" else "optimal")
        else:
            raise ValueError(f"kind must be one of {ESTIMATOR_KINDS}, got {kind!r}")
        mean, variance = moments(tables.outcomes, values)
        variance = variance / group_size
    index = step_coordinates(policy)
    mean, variance = mean[index], variance[index].clamp_min(0.0)
    snr = [float(m * m / v) if v > 1e-300 else math.inf for m, v in zip(mean, variance)]
    return {"mean": mean.tolist(), "variance": variance.tolist(), "snr": snr}


# == groups ===========================================================================================


def group_mean_estimator() -> oracle.GroupEstimator:
    """f = (1/R) sum_i (r_i - rbar) g_i (no-std GRPO) for ``grpo_verify.oracle.expect_group``."""
    return oracle.dr_grpo_group_gradient()


def exact_credit_group_estimator(tables: CreditTables, baseline: str = "value") -> oracle.GroupEstimator:
    """f = (1/R) sum_i e(o_i), e the exact-credit estimate, for ``grpo_verify.oracle.expect_group``."""
    per_outcome = exact_credit_estimates(tables, baseline)

    def estimate(rewards: Tensor, scores: Tensor, indices: Tensor) -> Tensor:
        return per_outcome[indices].mean(dim=1)

    return estimate


def zero_gradient_probability(tables: CreditTables, group_size: int) -> float:
    """Outcome-only group estimators (group mean, with or without std): P(all R rewards equal) = sum_v P(r = v)^R."""
    total = 0.0
    for value in torch.unique(tables.rewards):
        mass = float(tables.outcomes.probs[tables.rewards == value].sum())
        total += mass ** group_size
    return total


def zero_gradient_probability_by_enumeration(tables: CreditTables, group_size: int,
                                             estimator: oracle.GroupEstimator) -> float:
    """P(the group's estimate is exactly the zero vector), by enumerating all groups (multisets)."""
    def indicator(rewards: Tensor, scores: Tensor, indices: Tensor) -> Tensor:
        return (estimator(rewards, scores, indices) == 0).all(dim=1).to(DTYPE)

    return float(oracle.expect_group(tables.outcomes, tables.rewards, group_size, indicator, symmetric=True))


def step_reached_by_nobody_probability(tables: CreditTables, h: int, group_size: int) -> float:
    """P(no rollout of the group has the all-right prefix 1^(h-1)): then step h gets no exact-credit signal."""
    right = (tables.outcomes.sequences[:, :h - 1] == 1).all(dim=1)
    return (1.0 - float(tables.outcomes.probs[right].sum())) ** group_size
