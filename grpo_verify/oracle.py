"""The exact oracle: expectations over an enumerated policy, computed as finite weighted sums.

Given all N outcomes of a policy (``grpo_verify.synthetic.Outcomes``: probabilities p_n, score vectors
g_n) and a reward r_n per outcome, every expectation below is a finite sum, exact up to float64
round-off (about 1e-15 relative), so a property test can demand agreement to ~1e-10 and a wrong factor
such as (R-1)/R cannot hide in Monte-Carlo noise.

Single-rollout quantities (o ~ pi_theta):

    J = E[r] = sum_n p_n r_n                          ``expected_reward``
    grad J = E[r g] = sum_n p_n r_n g_n (D1)          ``policy_gradient``
    E[g] = sum_n p_n g_n = 0 (D1)                     ``expected_score``
    M_j = E[r^j ||g||^2]                              ``score_norm_moment``
    b* = E[r ||g||^2] / E[||g||^2] (D8)               ``optimal_baseline``
    b*_k = E[r g_k^2] / E[g_k^2] (D8)                 ``coordinatewise_optimal_baseline``
    tr Cov[(r - b) g] (D8)                            ``baseline_total_variance``

(each takes ``(outcomes, rewards)``; ``score_norm_moment`` also ``order``, ``baseline_total_variance``
also ``baseline``; ``reward_vector(outcomes, rewards)`` validates a reward vector.)

Group quantities (o_1, ..., o_R i.i.d. ~ pi_theta):
``expect_group(outcomes, rewards, group_size, estimator, symmetric=False, max_tuples=DEFAULT_MAX_TUPLES)``
is E[f(o_1, ..., o_R)] for any group estimator f, by enumerating every group:

* ``symmetric=False``: all N^R ordered tuples, weight p_{o_1} ... p_{o_R}. Always correct.
* ``symmetric=True``: all C(N+R-1, R) multisets (sorted tuples), weight
  R! / (m_1! ... m_N!) * p_{o_1} ... p_{o_R} with m_n the multiplicity of outcome n. Correct only
  when f does not depend on the order of the rollouts; f is checked for that on the first chunk
  (under a transposition and an R-cycle, which generate all permutations) and a ValueError is raised
  otherwise. A per-rollout term A_i g_i is not symmetric, but by exchangeability
  E[A_i g_i] = E[(1/R) sum_j A_j g_j], so its group average (``group_gradient``) is.

f is vectorised over a chunk of C groups, in the (B, R) convention of ``grpo_verify.estimators``:
f(rewards (C, R), scores (C, R, P), indices (C, R)) -> (C,) or (C, ...). More than ``max_tuples``
(default 2e6) groups raise ``EnumerationTooLarge`` before any work.

Ready-made group estimators, built on ``grpo_verify.estimators.group_advantages`` so that the code
under test and the theory meet (kinds grpo, population, dr_grpo, rloo; not batch, whose scale
couples groups):

    ``rollout_term(kind, rollout, eps)``        A_i g_i for one rollout i (not symmetric)
    ``group_mean_baseline_term(rollout)``       (r_i - rbar) g_i; E = (R-1)/R grad J (D5)
    ``leave_one_out_term(rollout)``             (r_i - mean_{j != i} r_j) g_i; E = grad J (D5)
    ``std_scaled_term(rollout, std, eps)``      (r_i - rbar)/(std + eps) g_i, sample or population std
    ``group_gradient(kind, eps)``               (1/R) sum_i A_i g_i (symmetric)
    ``dr_grpo_group_gradient()``                (1/R) sum_i (r_i - rbar) g_i (symmetric)
    ``zero_advantage_indicator(kind, eps)``     1 if every A_i = 0, else 0 (symmetric); D6
    ``constant_baseline_group_gradient(b)``     (1/R) sum_i (r_i - b) g_i (symmetric); b = E[r]: the
                                                oracle-baseline estimator, Var = V_or/R; b = b*: V(b*)/R (D9)

and ``group_total_variance(outcomes, rewards, group_size, estimator, symmetric=False, max_tuples=...)``
= E||f||^2 - ||E f||^2; ``group_mean_squared_error(outcomes, rewards, group_size, estimator, symmetric=False,
max_tuples=...)`` = E||f - grad J||^2 (D9); ``num_group_tuples(num_outcomes, group_size, symmetric=False)``;
``GroupEstimator`` (the type of f), ``DEFAULT_MAX_TUPLES = 2_000_000``, ``GROUP_ADVANTAGE_KINDS``.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable, Iterator

import torch
from torch import Tensor

from grpo_verify.estimators import DEFAULT_EPS, group_advantages
from grpo_verify.synthetic import DTYPE, EnumerationTooLarge, Outcomes

GroupEstimator = Callable[[Tensor, Tensor, Tensor], Tensor]
"""f(rewards (C, R), scores (C, R, P), indices (C, R)) -> values (C,) or (C, ...)."""

DEFAULT_MAX_TUPLES = 2_000_000
GROUP_ADVANTAGE_KINDS = ("grpo", "population", "dr_grpo", "rloo")
_CHUNK_ELEMENTS = 2 ** 22  # gathered score entries per chunk (C * R * P), 32 MiB in float64
_MAX_CHUNK = 65_536
_SYMMETRY_TOLERANCE = 1e-9


# == rewards ======================================================================================


def reward_vector(outcomes: Outcomes, rewards: Tensor | list[float]) -> Tensor:
    """The rewards as a finite float64 (N,) tensor, one per outcome (ValueError otherwise)."""
    if not isinstance(outcomes, Outcomes):
        raise ValueError(f"outcomes must be grpo_verify.synthetic.Outcomes, got {type(outcomes).__name__}")
    values = torch.as_tensor(rewards, dtype=DTYPE)
    if values.shape != (outcomes.num_outcomes,):
        raise ValueError(f"need one reward per outcome, shape ({outcomes.num_outcomes},); "
                         f"got shape {tuple(values.shape)}")
    if not torch.isfinite(values).all():
        raise ValueError("rewards must be finite")
    return values


# == single-rollout expectations ==================================================================


def expected_reward(outcomes: Outcomes, rewards: Tensor) -> float:
    """J = E[r] = sum_n p_n r_n."""
    return float(outcomes.probs @ reward_vector(outcomes, rewards))


def policy_gradient(outcomes: Outcomes, rewards: Tensor) -> Tensor:
    """grad J = E[r g] = sum_n p_n r_n g_n (the score-function identity, D1), shape (P,)."""
    weights = outcomes.probs * reward_vector(outcomes, rewards)
    return weights @ outcomes.scores


def expected_score(outcomes: Outcomes) -> Tensor:
    """E[g] = sum_n p_n g_n, shape (P,); zero for every normalised policy (D1)."""
    return outcomes.probs @ outcomes.scores


def score_norm_moment(outcomes: Outcomes, rewards: Tensor, order: int) -> float:
    """M_order = E[r^order ||g||^2] (D8's M_0, M_1, M_2)."""
    if not (isinstance(order, int) and order >= 0):
        raise ValueError(f"order must be an int >= 0, got {order!r}")
    squared_norms = (outcomes.scores ** 2).sum(dim=1)
    return float(outcomes.probs @ (reward_vector(outcomes, rewards) ** order * squared_norms))


def optimal_baseline(outcomes: Outcomes, rewards: Tensor) -> float:
    """b* = E[r ||g||^2] / E[||g||^2]: the constant baseline minimising tr Cov[(r - b) g] (D8).

    ValueError when E[||g||^2] = 0 (every baseline is then optimal).
    """
    second_moment = score_norm_moment(outcomes, rewards, 0)
    if second_moment == 0:
        raise ValueError("E[||g||^2] = 0: the score vanishes on every outcome, so every baseline is optimal")
    return score_norm_moment(outcomes, rewards, 1) / second_moment


def coordinatewise_optimal_baseline(outcomes: Outcomes, rewards: Tensor) -> Tensor:
    """b*_k = E[r g_k^2] / E[g_k^2] per parameter (D8), shape (P,); 0 where E[g_k^2] = 0 (any b is optimal)."""
    squares = outcomes.scores ** 2
    denominator = outcomes.probs @ squares
    numerator = (outcomes.probs * reward_vector(outcomes, rewards)) @ squares
    nonzero = denominator != 0
    return torch.where(nonzero, numerator / torch.where(nonzero, denominator, 1.0), 0.0)


def baseline_total_variance(outcomes: Outcomes, rewards: Tensor, baseline: float) -> float:
    """tr Cov[(r - b) g] = E[(r - b)^2 ||g||^2] - ||grad J||^2 for a constant baseline b (D8)."""
    centred = reward_vector(outcomes, rewards) - baseline
    second_moment = float(outcomes.probs @ (centred ** 2 * (outcomes.scores ** 2).sum(dim=1)))
    mean = policy_gradient(outcomes, rewards)
    return second_moment - float(mean @ mean)


# == group expectations ===========================================================================


def num_group_tuples(num_outcomes: int, group_size: int, symmetric: bool = False) -> int:
    """Groups ``expect_group`` enumerates: N^R ordered tuples, or C(N+R-1, R) multisets when symmetric."""
    if symmetric:
        return math.comb(num_outcomes + group_size - 1, group_size)
    return num_outcomes ** group_size


def _ordered_chunks(num_outcomes: int, group_size: int, probs: Tensor, chunk: int) -> Iterator[tuple[Tensor, Tensor]]:
    """(indices (C, R), weights (C,)) over all N^R ordered tuples; tuple number m is m written in base N."""
    total = num_outcomes ** group_size
    powers = num_outcomes ** torch.arange(group_size - 1, -1, -1, dtype=torch.int64)
    for start in range(0, total, chunk):
        codes = torch.arange(start, min(start + chunk, total), dtype=torch.int64)
        indices = (codes[:, None] // powers) % num_outcomes
        yield indices, probs[indices].prod(dim=1)


def _multiset_chunks(num_outcomes: int, group_size: int, probs: Tensor, chunk: int) -> Iterator[tuple[Tensor, Tensor]]:
    """(indices (C, R), weights (C,)) over all sorted tuples; weight = R!/(prod_n m_n!) prod_k p_{o_k}."""
    tuples = itertools.combinations_with_replacement(range(num_outcomes), group_size)
    while True:
        block = list(itertools.islice(tuples, chunk))
        if not block:
            return
        indices = torch.tensor(block, dtype=torch.int64)
        # The tuple is sorted, so equal outcomes are adjacent. The weight is prod_k (k / c_k) p_{o_k}
        # (k = 1..R) with c_k the number of copies of o_k among o_1..o_k, since prod_k c_k = prod_n m_n!.
        # Each partial product is the probability of the multiset o_1..o_k, at most 1, so nothing
        # overflows for any R (R! itself leaves int64 at R = 21).
        weights = probs[indices[:, 0]]
        copies = torch.ones(indices.shape[0], dtype=DTYPE)
        for k in range(1, group_size):
            copies = torch.where(indices[:, k] == indices[:, k - 1], copies + 1, torch.ones_like(copies))
            weights = weights * ((k + 1) / copies) * probs[indices[:, k]]
        yield indices, weights


def _evaluate(estimator: GroupEstimator, rewards: Tensor, scores: Tensor, indices: Tensor) -> Tensor:
    values = estimator(rewards[indices], scores[indices], indices)
    if not isinstance(values, Tensor) or values.ndim < 1 or values.shape[0] != indices.shape[0]:
        raise ValueError(f"the estimator must return a tensor with one row per group, shape ({indices.shape[0]}, ...); "
                         f"got {getattr(values, 'shape', type(values).__name__)}")
    values = values.to(DTYPE)
    if not torch.isfinite(values).all():
        raise ValueError("the estimator returned NaN or inf for some group")
    return values


def _check_symmetric(estimator: GroupEstimator, rewards: Tensor, scores: Tensor, indices: Tensor,
                     values: Tensor) -> None:
    """Raise unless f is unchanged under swapping rollouts 0, 1 and under the cycle 0 -> 1 -> ... -> R-1 -> 0."""
    group_size = indices.shape[1]
    if group_size < 2:
        return
    swap = [1, 0] + list(range(2, group_size))
    cycle = list(range(1, group_size)) + [0]
    scale = 1.0 + float(values.abs().max())
    for order in (swap, cycle):
        permuted = _evaluate(estimator, rewards, scores, indices[:, order])
        gap = float((permuted - values).abs().max())
        if gap > _SYMMETRY_TOLERANCE * scale:
            raise ValueError(f"symmetric=True but the estimator depends on the order of the rollouts (permuting "
                             f"them as {order} changes it by {gap:.3g}); use symmetric=False, or average a "
                             f"per-rollout term over the rollouts")


def expect_group(outcomes: Outcomes, rewards: Tensor, group_size: int, estimator: GroupEstimator,
                 symmetric: bool = False, max_tuples: int = DEFAULT_MAX_TUPLES) -> Tensor:
    """E[f(o_1, ..., o_R)] exactly, for R = ``group_size`` rollouts drawn i.i.d. from the enumerated policy.

    f = ``estimator`` receives a chunk of C groups: rewards (C, R), scores (C, R, P) and outcome
    indices (C, R), and returns (C,) or (C, ...); the result has f's shape without the first axis.
    symmetric=False sums over all N^R ordered tuples; symmetric=True over the C(N+R-1, R) multisets
    with multinomial weights (only for f invariant under permuting the rollouts; checked on the first
    chunk). Raises EnumerationTooLarge when the count exceeds ``max_tuples``.
    """
    rewards = reward_vector(outcomes, rewards)
    if not (isinstance(group_size, int) and group_size >= 1):
        raise ValueError(f"group_size must be an int >= 1, got {group_size!r}")
    if not callable(estimator):
        raise ValueError("estimator must be callable: f(rewards (C, R), scores (C, R, P), indices (C, R))")
    num_outcomes = outcomes.num_outcomes
    count = num_group_tuples(num_outcomes, group_size, symmetric)
    if count > max_tuples:
        hint = ""
        if not symmetric and num_group_tuples(num_outcomes, group_size, True) <= max_tuples:
            hint = " (a symmetric estimator could use symmetric=True: multisets are fewer)"
        raise EnumerationTooLarge(
            f"{'multisets' if symmetric else 'ordered tuples'} of R = {group_size} rollouts over N = {num_outcomes} "
            f"outcomes: {count} groups, more than max_tuples = {max_tuples}{hint}")

    chunk = max(1, min(_MAX_CHUNK, _CHUNK_ELEMENTS // (group_size * max(1, outcomes.num_parameters))))
    make_chunks = _multiset_chunks if symmetric else _ordered_chunks
    total = None
    for indices, weights in make_chunks(num_outcomes, group_size, outcomes.probs, chunk):
        values = _evaluate(estimator, rewards, outcomes.scores, indices)
        if symmetric and total is None:
            _check_symmetric(estimator, rewards, outcomes.scores, indices, values)
        contribution = weights @ values.reshape(values.shape[0], -1)
        total = contribution if total is None else total + contribution
        value_shape = values.shape[1:]
    return total.reshape(value_shape)


def group_total_variance(outcomes: Outcomes, rewards: Tensor, group_size: int, estimator: GroupEstimator,
                         symmetric: bool = False, max_tuples: int = DEFAULT_MAX_TUPLES) -> float:
    """tr Cov[f] = E[||f||^2] - ||E[f]||^2 over groups of R i.i.d. rollouts (one enumeration for both)."""

    def value_and_square(rewards_: Tensor, scores_: Tensor, indices_: Tensor) -> Tensor:
        values = estimator(rewards_, scores_, indices_).to(DTYPE)
        values = values.reshape(values.shape[0], -1)
        return torch.cat([values, (values ** 2).sum(dim=1, keepdim=True)], dim=1)

    moments = expect_group(outcomes, rewards, group_size, value_and_square, symmetric, max_tuples)
    mean, second_moment = moments[:-1], moments[-1]
    return float(second_moment - mean @ mean)


# == ready-made group estimators ==================================================================


def _check_advantage_kind(kind: str, eps: float) -> None:
    if kind not in GROUP_ADVANTAGE_KINDS:
        raise ValueError(f"kind must be one of {GROUP_ADVANTAGE_KINDS}, got {kind!r} (batch scaling divides by "
                         f"the std of a whole batch of groups, so it is not a function of one group)")
    if not (eps >= 0 and eps < float("inf")):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")


def _advantages(rewards: Tensor, kind: str, eps: float) -> Tensor:
    """Advantages (C, R) of C groups, by grpo_verify.estimators.group_advantages."""
    return group_advantages(rewards, kind, eps)


def rollout_term(kind: str = "dr_grpo", rollout: int = 0, eps: float = DEFAULT_EPS) -> GroupEstimator:
    """f = A_i g_i for rollout i, with A from ``group_advantages(rewards, kind, eps)``; values (C, P). Not symmetric."""
    _check_advantage_kind(kind, eps)
    if not (isinstance(rollout, int) and rollout >= 0):
        raise ValueError(f"rollout must be an int >= 0, got {rollout!r}")

    def term(rewards: Tensor, scores: Tensor, indices: Tensor) -> Tensor:
        if rollout >= rewards.shape[1]:
            raise ValueError(f"rollout {rollout} does not exist in a group of R = {rewards.shape[1]}")
        return _advantages(rewards, kind, eps)[:, rollout, None] * scores[:, rollout]

    return term


def group_mean_baseline_term(rollout: int = 0) -> GroupEstimator:
    """f = (r_i - rbar) g_i with rbar the group mean including r_i; E[f] = (R-1)/R grad J (D5)."""
    return rollout_term("dr_grpo", rollout)


def leave_one_out_term(rollout: int = 0) -> GroupEstimator:
    """f = (r_i - (1/(R-1)) sum_{j != i} r_j) g_i (RLOO); E[f] = grad J (D5)."""
    return rollout_term("rloo", rollout)


def std_scaled_term(rollout: int = 0, std: str = "sample", eps: float = DEFAULT_EPS) -> GroupEstimator:
    """f = (r_i - rbar) / (std + eps) g_i, GRPO's advantage; std is "sample" (Bessel, TRL) or "population".

    For binary rewards E[f] = c_R(p) grad J (D5); constant groups give 0.
    """
    kinds = {"sample": "grpo", "population": "population"}
    if std not in kinds:
        raise ValueError(f"std must be 'sample' or 'population', got {std!r}")
    return rollout_term(kinds[std], rollout, eps)


def group_gradient(kind: str = "dr_grpo", eps: float = DEFAULT_EPS) -> GroupEstimator:
    """f = (1/R) sum_i A_i g_i, the group's gradient estimate; values (C, P). Symmetric.

    By exchangeability E[f] = E[A_i g_i] for every i.
    """
    _check_advantage_kind(kind, eps)

    def gradient(rewards: Tensor, scores: Tensor, indices: Tensor) -> Tensor:
        advantages = _advantages(rewards, kind, eps)
        return (advantages[:, :, None] * scores).mean(dim=1)

    return gradient


def dr_grpo_group_gradient() -> GroupEstimator:
    """f = (1/R) sum_i (r_i - rbar) g_i (Dr. GRPO, no std); E[f] = (R-1)/R grad J (D5, D6)."""
    return group_gradient("dr_grpo")


def zero_advantage_indicator(kind: str = "dr_grpo", eps: float = DEFAULT_EPS) -> GroupEstimator:
    """f = 1 if every advantage of the group is 0 (the group gives no gradient), else 0; values (C,). Symmetric.

    The advantages are zero exactly for groups with all rewards equal, so for binary rewards with
    success probability p, E[f] = p^R + (1-p)^R (D6).
    """
    _check_advantage_kind(kind, eps)

    def indicator(rewards: Tensor, scores: Tensor, indices: Tensor) -> Tensor:
        return (_advantages(rewards, kind, eps) == 0).all(dim=1).to(DTYPE)

    return indicator


def constant_baseline_group_gradient(baseline: float) -> GroupEstimator:
    """f = (1/R) sum_i (r_i - b) g_i for a constant baseline b; values (C, P). Symmetric; E[f] = grad J.

    With b = E[r] (``expected_reward``) it is the oracle-baseline estimator, total variance V_or/R with
    V_or = ``baseline_total_variance(outcomes, rewards, E[r])``; with b = b* (``optimal_baseline``) its
    variance is V(b*)/R, the least of any constant baseline (D8, D9).
    """
    if isinstance(baseline, bool) or not isinstance(baseline, (int, float)) or not math.isfinite(baseline):
        raise ValueError(f"baseline must be a finite number, got {baseline!r}")
    value = float(baseline)

    def gradient(rewards: Tensor, scores: Tensor, indices: Tensor) -> Tensor:
        return ((rewards - value)[:, :, None] * scores).mean(dim=1)

    return gradient


def group_mean_squared_error(outcomes: Outcomes, rewards: Tensor, group_size: int, estimator: GroupEstimator,
                             symmetric: bool = False, max_tuples: int = DEFAULT_MAX_TUPLES) -> float:
    """E||f - grad J||^2 = tr Cov[f] + ||E f - grad J||^2 over groups of R i.i.d. rollouts (D9)."""
    target = policy_gradient(outcomes, rewards)

    def value_and_square(rewards_: Tensor, scores_: Tensor, indices_: Tensor) -> Tensor:
        values = estimator(rewards_, scores_, indices_).to(DTYPE)
        values = values.reshape(values.shape[0], -1)
        if values.shape[1] != target.shape[0]:
            raise ValueError(f"the estimator must return one value per parameter, shape (C, {target.shape[0]}); "
                             f"got {tuple(values.shape)}")
        return ((values - target) ** 2).sum(dim=1, keepdim=True)

    return float(expect_group(outcomes, rewards, group_size, value_and_square, symmetric, max_tuples)[0])
