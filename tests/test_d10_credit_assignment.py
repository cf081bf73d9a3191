"""D10 (credit assignment on multi-step tasks): the derivation's closed forms against grpo_verify.credit's exact
enumeration of chain policies (H = 1, 2, 4, 8), against an independent brute force over {0, 1}^H written here,
and against grpo_verify.oracle's group enumeration; the synthetic experiment's estimators against the library."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from grpo_verify import credit, oracle
from grpo_verify.derivations import d10_credit_assignment as d10
from support import load_script

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-10
Q, H, h = d10.q, d10.H, d10.h


def close(actual, expected, what: str, tol: float = TOLERANCE) -> None:
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    gap = float(np.max(np.abs(actual - expected)))
    assert gap <= tol * (1 + float(np.max(np.abs(expected)))), f"{what}: {actual} vs {expected} (gap {gap:.3g})"


def closed(expr: sp.Expr, q: float, horizon: int, step: int) -> float:
    return float(expr.subs({Q: sp.Float(q, 30), H: horizon, h: step}))


CLOSED_VARIANCES = {
    "outcome_none": d10.outcome_variance(0),
    "outcome_mean": d10.outcome_variance(Q ** H),
    "outcome_optimal": d10.outcome_variance(d10.b_star),
    "exact_credit": d10.exact_credit_variance(),
    "exact_credit_optimal": d10.exact_credit_variance_with_the_optimal_state_baseline.rhs,
}
# the derivation's own results give the same expressions (so the test checks what is proved)
assert sp.simplify(d10.outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared.rhs
                   - d10.outcome_variance(0)) == 0
assert d10.exact_credit_variance_per_step.rhs == d10.exact_credit_variance()

horizons = st.sampled_from((1, 2, 4, 8))
probabilities = st.floats(0.05, 0.95)


def sequence_probability(seq, q: float) -> float:
    """P(seq) written here (no library code): a step after the all-right prefix is right with probability q, after a
    wrong prefix with probability 0.3 (it cannot matter)."""
    weight, right = 1.0, True
    for token in seq:
        succeed = q if right else 0.3
        weight *= succeed if token else 1 - succeed
        right = right and token == 1
    return weight


def brute_force_step_moments(q: float, horizon: int, step: int, baseline: float) -> dict[str, tuple[float, float]]:
    """Mean and variance of the step-h terms by listing {0, 1}^H here (no library code): a step after the all-right
    prefix is right with probability q, after a wrong prefix with probability 0.3 (it cannot matter)."""
    sums = {"outcome": [0.0, 0.0], "exact": [0.0, 0.0]}
    for seq in itertools.product((0, 1), repeat=horizon):
        weight = sequence_probability(seq, q)
        reward = float(all(seq))
        prefix = all(seq[:step - 1])
        score = (seq[step - 1] - q) if prefix else 0.0
        later = q ** (horizon - step)
        exact = (later * seq[step - 1] - later * q) * score
        for name, value in (("outcome", (reward - baseline) * score), ("exact", exact)):
            sums[name][0] += weight * value
            sums[name][1] += weight * value ** 2
    return {name: (m, s - m * m) for name, (m, s) in sums.items()}


@given(horizon=horizons, q=probabilities, seed=st.integers(0, 3))
def test_d10_per_step_means_and_variances_equal_the_closed_forms(horizon, q, seed):
    """Every estimator's step-h mean is q^H (1-q) and its variance D10's closed form, on the tabular chain policy."""
    policy = credit.chain_policy([q] * horizon, off_path_seed=seed)
    close(credit.step_success_probabilities(policy), [q] * horizon, "path rows")
    tables = credit.credit_tables(policy)
    close(oracle.expected_reward(tables.outcomes, tables.rewards), q ** horizon, "p = q^H")
    gradient = [q ** horizon * (1 - q)] * horizon
    close(oracle.policy_gradient(tables.outcomes, tables.rewards)[credit.step_coordinates(policy)], gradient,
          "grad p = p (1 - q) per step")
    steps = range(1, horizon + 1)
    for kind, variance in CLOSED_VARIANCES.items():
        stats = credit.per_step_statistics(policy, kind, tables=tables)
        close(stats["mean"], gradient, f"{kind} mean")
        close(stats["variance"], [closed(variance, q, horizon, s) for s in steps], f"{kind} variance")


@given(horizon=st.sampled_from((1, 2, 4)), q=probabilities, baseline=st.floats(-1, 2))
def test_d10_closed_forms_equal_an_independent_brute_force(horizon, q, baseline):
    for step in range(1, horizon + 1):
        found = brute_force_step_moments(q, horizon, step, baseline)
        close(found["outcome"], [q ** horizon * (1 - q), closed(d10.outcome_variance(baseline), q, horizon, step)],
              f"outcome b={baseline} step {step}")
        close(found["exact"], [q ** horizon * (1 - q), closed(d10.exact_credit_variance(), q, horizon, step)],
              f"exact credit step {step}")


@given(horizon=horizons, q=probabilities)
def test_d10_snr_closed_forms(horizon, q):
    """SNRs: p/(1-p) for outcome-only without baseline (every step), D10's exact-credit form (free of H), and the
    two optimal-baseline estimators coincide at the last step, SNR q^(H-1)/(1-q^(H-1))."""
    policy = credit.chain_policy([q] * horizon)
    tables = credit.credit_tables(policy)
    none = credit.per_step_statistics(policy, "outcome_none", tables=tables)["snr"]
    close(none, [q ** horizon / (1 - q ** horizon)] * horizon, "outcome SNR")
    exact = credit.per_step_statistics(policy, "exact_credit", tables=tables)["snr"]
    rhs = d10.exact_credit_snr_depends_on_the_step_not_on_H.rhs
    for step in range(1, horizon + 1):
        if abs(1 - 3 * q + 3 * q * q - q ** step * (1 - q)) > 1e-6:
            close(exact[step - 1], closed(rhs, q, horizon, step), f"exact SNR step {step}", 1e-8)
    optimal_outcome = credit.per_step_statistics(policy, "outcome_optimal", tables=tables)
    optimal_exact = credit.per_step_statistics(policy, "exact_credit_optimal", tables=tables)
    close(optimal_outcome["variance"][-1], optimal_exact["variance"][-1], "last step, optimal baselines")
    if horizon >= 2:
        close(optimal_exact["snr"][-1], q ** (horizon - 1) / (1 - q ** (horizon - 1)), "last-step SNR", 1e-8)
    # the state baseline of the last path row equals the outcome b*_H = 1 - q
    b_star = oracle.coordinatewise_optimal_baseline(tables.outcomes, tables.rewards)
    close(b_star[credit.step_coordinates(policy)], [q ** (horizon - s) * (1 - q) for s in range(1, horizon + 1)],
          "b*_h = q^(H-h)(1-q)")


@pytest.mark.parametrize("horizon, size", [(1, 2), (1, 3), (2, 2), (2, 3), (3, 2)])
@given(q=probabilities)
def test_d10_group_mean_variance_equals_the_sample_covariance_formula(horizon, size, q):
    """The no-std GRPO estimate's per-step variance, by enumerating every group (oracle.expect_group), equals the
    library's sample-covariance form and D10's closed form."""
    policy = credit.chain_policy([q] * horizon, off_path_seed=1)
    tables = credit.credit_tables(policy)
    index = credit.step_coordinates(policy)
    estimator = credit.group_mean_estimator()

    def with_squares(rewards, scores, indices):
        values = estimator(rewards, scores, indices)[:, index]
        return torch.cat([values, values ** 2], dim=1)

    moments = oracle.expect_group(tables.outcomes, tables.rewards, size, with_squares)
    mean, second = moments[:horizon], moments[horizon:]
    stats = credit.per_step_statistics(policy, "outcome_group_mean", size, tables=tables)
    close(stats["mean"], mean, "group mean, mean")
    close(stats["variance"], second - mean ** 2, "group mean, variance (library)")
    close([(size - 1) / size * q ** horizon * (1 - q)] * horizon, mean, "(R-1)/R grad p")
    formula = [float(d10.group_mean_variance(horizon, s, size).subs(Q, sp.Float(q, 30))) for s in range(1, horizon + 1)]
    close(formula, second - mean ** 2, "group mean, variance (D10)")


@pytest.mark.parametrize("horizon, size", [(1, 2), (2, 2), (2, 3), (4, 2)])
def test_d10_zero_gradient_probabilities(horizon, size):
    """Outcome-only: p^R + (1-p)^R >= 1 - R p (D6 at p = q^H); exact credit: never an all-zero group estimate."""
    q = 0.6
    policy = credit.chain_policy([q] * horizon)
    tables = credit.credit_tables(policy)
    p = q ** horizon
    z = p ** size + (1 - p) ** size
    close(credit.zero_gradient_probability(tables, size), z, "outcome zero-gradient probability")
    close(credit.zero_gradient_probability_by_enumeration(tables, size, credit.group_mean_estimator()), z,
          "outcome zero-gradient probability, enumerated")
    assert z >= 1 - size * p
    assert credit.zero_gradient_probability_by_enumeration(tables, size,
                                                           credit.exact_credit_group_estimator(tables)) == 0.0
    close(credit.step_reached_by_nobody_probability(tables, horizon, size), (1 - q ** (horizon - 1)) ** size,
          "no rollout reaches the last step")


def test_d10_zero_gradient_probability_tends_to_one_with_H():
    values = [credit.zero_gradient_probability(credit.credit_tables(credit.chain_policy([0.5] * horizon)), 8)
              for horizon in (1, 2, 4, 8)]
    assert values == sorted(values) and values[-1] > 0.96, values


def _experiment():
    return load_script(ROOT / "experiments" / "credit_assignment.py", "credit_assignment_under_test")


@pytest.mark.parametrize("horizon", [1, 2, 3, 4])
def test_d10_training_estimators_match_the_library(horizon):
    """experiments/credit_assignment.py's vectorised estimators equal grpo_verify.credit's per outcome (exact credit,
    one rollout) and per group (no-std GRPO), on the path coordinates of a chain policy with unequal q_h."""
    exp = _experiment()
    qs = [0.3 + 0.15 * k for k in range(horizon)]
    policy = credit.chain_policy(qs)
    tables = credit.credit_tables(policy)
    index = credit.step_coordinates(policy)
    sequences = tables.outcomes.sequences.numpy().astype(float)
    q = np.tile(np.asarray(qs), (sequences.shape[0], 1))
    mine = exp.exact_credit_update(sequences[:, None, :], q)
    close(mine, credit.exact_credit_estimates(tables)[:, index].numpy(), "exact credit per outcome")
    close(exp.expected_update(q[:1])[0], oracle.policy_gradient(tables.outcomes, tables.rewards)[index].numpy(),
          "expected update = grad p")
    rng = np.random.default_rng(horizon)
    groups = rng.integers(0, sequences.shape[0], size=(20, 4))
    found = exp.outcome_update(sequences[groups], np.tile(np.asarray(qs), (20, 1)), scaled=False, eps=0.0)
    expected = credit.group_mean_estimator()(tables.rewards[groups], tables.outcomes.scores[groups],
                                             torch.as_tensor(groups))[:, index].numpy()
    close(found, expected, "no-std GRPO per group")


def test_d10_theory_rows_follow_the_closed_forms():
    exp = _experiment()
    rows = exp.theory_rows(horizons=(1, 4), qs=(0.5,))
    last4 = next(r for r in rows if r["H"] == 4 and r["step"] == "last")
    close(last4["rollouts_for_snr1_outcome_none"], (1 - 0.5 ** 4) / 0.5 ** 4, "S (q^-H - 1) at S = 1")
    close(last4["rollouts_for_snr1_exact_credit_optimal"], last4["rollouts_for_snr1_outcome_optimal"], "last step")
    close(last4["rollouts_for_snr1_exact_credit_optimal"], 1 / 0.5 ** 3 - 1, "q^(1-H) - 1")


def brute_force_process_reward_mean(q: float, horizon: int, step: int) -> float:
    """E[G_h u_h] by listing {0, 1}^H: r_k = 1[steps 1..k right], G_h = sum_{k >= h} r_k, u_h = P_h (x_h - q)."""
    total = 0.0
    for seq in itertools.product((0, 1), repeat=horizon):
        weight = sequence_probability(seq, q)
        score = (seq[step - 1] - q) if all(seq[:step - 1]) else 0.0
        to_go = sum(float(all(seq[:k])) for k in range(step, horizon + 1))
        total += weight * to_go * score
    return total


@given(horizon=st.sampled_from((1, 2, 3, 4)), q=probabilities)
def test_d10_new_snr_and_process_reward_closed_forms_equal_the_brute_force(horizon, q):
    optimal_snr = d10.outcome_snr_with_the_optimal_baseline_is_q_pow_H_over_one_minus_q_pow_H_minus_b_star.rhs
    first = d10.exact_credit_first_step_snr_is_q_times_one_minus_q_over_one_minus_2q_squared.rhs
    ratio = d10.outcome_over_exact_credit_first_step_snr_is_q_pow_H_minus_1_times_a_factor_free_of_H.rhs
    process = d10.process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1.rhs
    for step in range(1, horizon + 1):
        b_star = q ** (horizon - step) * (1 - q)
        mean, var = brute_force_step_moments(q, horizon, step, b_star)["outcome"]
        if var > 1e-9:
            close(mean ** 2 / var, closed(optimal_snr, q, horizon, step), f"optimal-baseline SNR step {step}", 1e-8)
        close(brute_force_process_reward_mean(q, horizon, step), closed(process, q, horizon, step),
              f"process-reward mean step {step}")
    if abs(q - 0.5) > 1e-3:
        mean, var = brute_force_step_moments(q, horizon, 1, 0.0)["exact"]
        close(mean ** 2 / var, closed(first, q, horizon, 1), "exact credit SNR step 1", 1e-8)
        outcome_mean, outcome_var = brute_force_step_moments(q, horizon, 1, 0.0)["outcome"]
        close((outcome_mean ** 2 / outcome_var) / (mean ** 2 / var), closed(ratio, q, horizon, 1), "SNR ratio", 1e-8)
