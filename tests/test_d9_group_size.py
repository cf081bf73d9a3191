"""D9: the exact variance of the group gradient estimators as functions of the group size R, against the oracle.

Every expectation on the left is an exact enumeration of all groups (``grpo_verify.oracle``); every closed form
on the right is built from single-rollout moments only (E[r], Var(r), E||g||^2, grad J, V_or = tr Cov[(r - E r) g]),
so a wrong factor of R in a closed form of derivations/d9_group_size.py fails here. Group sizes go up to 6.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from grpo_verify.oracle import (
    baseline_total_variance,
    constant_baseline_group_gradient,
    dr_grpo_group_gradient,
    expect_group,
    expected_reward,
    group_gradient,
    group_mean_squared_error,
    group_total_variance,
    optimal_baseline,
    policy_gradient,
    score_norm_moment,
)
from grpo_verify.synthetic import DTYPE, Outcomes, policy_strategy, reward_strategy

TOLERANCE = 1e-9
group_sizes = st.integers(2, 6)  # multisets of <= 6 rollouts over <= 7 outcomes: at most 924 groups


@st.composite
def problems(draw, max_outcomes: int = 7, styles=("binary", "continuous", "ties")):
    policy = draw(policy_strategy(max_outcomes=max_outcomes))
    outcomes = policy.enumerate()
    return outcomes, draw(reward_strategy(outcomes.num_outcomes, styles))


def close(actual: float, expected: float, scale: float = 0.0) -> bool:
    return abs(actual - expected) <= TOLERANCE * (1.0 + abs(expected) + scale)


def moments(outcomes, rewards) -> dict:
    """The single-rollout constants of the closed forms."""
    mean = expected_reward(outcomes, rewards)
    grad = policy_gradient(outcomes, rewards)
    spread = float(outcomes.probs @ (rewards - mean) ** 2)
    score_sq = score_norm_moment(outcomes, rewards, 0)
    v_or = baseline_total_variance(outcomes, rewards, mean)
    return {"mu": mean, "J2": float(grad @ grad), "var_r": spread, "M0": score_sq, "V_or": v_or,
            "excess": spread * score_sq + float(grad @ grad)}


def rloo_variance_closed_form(m: dict, size: int) -> float:
    """Var(U) = V_or/R + (Var(r) E||g||^2 + ||grad J||^2)/(R(R-1)) (rloo_variance_closed_form)."""
    return m["V_or"] / size + m["excess"] / (size * (size - 1))


def variance(outcomes, rewards, size, estimator) -> float:
    return group_total_variance(outcomes, rewards, size, estimator, symmetric=True)


def pair_kernel(rewards, scores, indices):
    """h(X_1, X_2) = (1/2)(r_1 - r_2)(g_1 - g_2) on groups of two."""
    return 0.5 * (rewards[:, 0] - rewards[:, 1])[:, None] * (scores[:, 0] - scores[:, 1])


# == the oracle baseline and RLOO ==================================================================


@given(problems(), group_sizes)
def test_oracle_baseline_estimator_variance_is_V_or_over_R(problem, size):
    outcomes, rewards = problem
    m = moments(outcomes, rewards)
    estimator = constant_baseline_group_gradient(m["mu"])
    assert close(variance(outcomes, rewards, size, estimator), m["V_or"] / size)
    assert torch.allclose(expect_group(outcomes, rewards, size, estimator, symmetric=True),
                          policy_gradient(outcomes, rewards), atol=1e-10, rtol=1e-10)


@given(problems(), group_sizes)
def test_rloo_variance_closed_form(problem, size):
    outcomes, rewards = problem
    m = moments(outcomes, rewards)
    assert close(variance(outcomes, rewards, size, group_gradient("rloo")), rloo_variance_closed_form(m, size))


@given(problems(), group_sizes)
def test_rloo_variance_ratio_to_oracle_is_one_plus_c_over_R_minus_1(problem, size):
    outcomes, rewards = problem
    m = moments(outcomes, rewards)
    assume(m["V_or"] > 1e-6)
    c = m["excess"] / m["V_or"]
    ratio = variance(outcomes, rewards, size, group_gradient("rloo")) / (m["V_or"] / size)
    assert abs(ratio - (1 + c / (size - 1))) <= 1e-7 * (1 + c)
    assert c >= 0 and ratio >= 1 - 1e-9 and ratio - 1 <= 2 * c / size + 1e-7 * (1 + c)


@given(problems(max_outcomes=6))
def test_hoeffding_zetas_by_enumerating_pairs(problem):
    """zeta_1 = V_or/4 (first projection), zeta_2 = (V_or + Var(r) E||g||^2 + ||grad J||^2)/2, 2 zeta_2 >= V_or."""
    outcomes, rewards = problem
    m = moments(outcomes, rewards)
    grad = policy_gradient(outcomes, rewards)
    zeta_2 = group_total_variance(outcomes, rewards, 2, pair_kernel)  # ordered pairs: h is symmetric anyway
    assert close(zeta_2, (m["V_or"] + m["excess"]) / 2)
    assert 2 * zeta_2 >= m["V_or"] - TOLERANCE * (1 + m["V_or"])
    # h_1(x) = E[h(x, X)] = ((r_x - mu) g_x + grad J)/2, checked outcome by outcome, then zeta_1 = Var(h_1(X))
    for n in range(outcomes.num_outcomes):
        h1 = sum(outcomes.probs[k] * 0.5 * (rewards[n] - rewards[k]) * (outcomes.scores[n] - outcomes.scores[k])
                 for k in range(outcomes.num_outcomes))
        assert torch.allclose(h1, 0.5 * ((rewards[n] - m["mu"]) * outcomes.scores[n] + grad), atol=1e-10, rtol=1e-10)
    projections = 0.5 * ((rewards - m["mu"])[:, None] * outcomes.scores + grad)
    mean = outcomes.probs @ projections
    zeta_1 = float(outcomes.probs @ (projections ** 2).sum(dim=1) - mean @ mean)
    assert close(zeta_1, m["V_or"] / 4)


@given(problems(max_outcomes=6), group_sizes)
def test_rloo_variance_is_hoeffdings_formula(problem, size):
    """Var(U) = 4(R-2)/(R(R-1)) zeta_1 + 2/(R(R-1)) zeta_2 with both zetas enumerated, not from closed forms."""
    outcomes, rewards = problem
    m = moments(outcomes, rewards)
    zeta_1 = m["V_or"] / 4
    zeta_2 = group_total_variance(outcomes, rewards, 2, pair_kernel)
    hoeffding = 4 * (size - 2) / (size * (size - 1)) * zeta_1 + 2 / (size * (size - 1)) * zeta_2
    assert close(variance(outcomes, rewards, size, group_gradient("rloo")), hoeffding)


# == the no-std (Dr. GRPO) estimator ===============================================================


@given(problems(), group_sizes)
def test_no_std_mse_closed_form(problem, size):
    outcomes, rewards = problem
    m = moments(outcomes, rewards)
    mse = group_mean_squared_error(outcomes, rewards, size, dr_grpo_group_gradient(), symmetric=True)
    var_u = rloo_variance_closed_form(m, size)
    assert close(mse, ((size - 1) / size) ** 2 * var_u + m["J2"] / size ** 2)
    assert close(mse - var_u, (m["J2"] - (2 * size - 1) * var_u) / size ** 2, scale=var_u)
    if m["V_or"] > 1e-6:
        c, kappa = m["excess"] / m["V_or"], m["J2"] / m["V_or"]
        ratio = mse / (m["V_or"] / size)
        assert abs(ratio - (1 + (c + kappa - 2) / size + (1 - c) / size ** 2)) <= 1e-7 * (1 + c + kappa)


# == the optimal constant baseline ================================================================


@given(problems(), group_sizes)
def test_optimal_baseline_group_variance_is_V_b_star_over_R(problem, size):
    outcomes, rewards = problem
    m = moments(outcomes, rewards)
    assume(m["M0"] > 1e-9)
    b_star = optimal_baseline(outcomes, rewards)
    v_b = variance(outcomes, rewards, size, constant_baseline_group_gradient(b_star))
    covariance = score_norm_moment(outcomes, rewards, 1) - m["mu"] * m["M0"]
    assert close(v_b, (m["V_or"] - covariance ** 2 / m["M0"]) / size, scale=m["V_or"])
    assert close(v_b * size, baseline_total_variance(outcomes, rewards, b_star))
    assert v_b <= m["V_or"] / size + TOLERANCE * (1 + m["V_or"])
    assert variance(outcomes, rewards, size, group_gradient("rloo")) >= v_b - TOLERANCE * (1 + m["V_or"])


# == std scaling ==================================================================================


@given(problems(styles=("binary",)))
def test_binary_sample_std_estimator_at_R2_is_rloo_over_sqrt2(problem):
    outcomes, rewards = problem
    grpo, rloo = group_gradient("grpo", eps=0.0), group_gradient("rloo")

    def gap(rewards_, scores_, indices_):
        return grpo(rewards_, scores_, indices_) - rloo(rewards_, scores_, indices_) / math.sqrt(2)

    assert group_total_variance(outcomes, rewards, 2, gap) <= 1e-20
    assert float(expect_group(outcomes, rewards, 2, gap).abs().max()) <= 1e-12
    m = moments(outcomes, rewards)
    assert close(variance(outcomes, rewards, 2, grpo), rloo_variance_closed_form(m, 2) / 2)


# == c has no upper bound =========================================================================


def test_rloo_can_be_infinitely_worse_than_the_oracle_baseline():
    """rloo_can_be_infinitely_worse_than_oracle_baseline: (r - mu) g = 0 on every outcome, Var(U) = 1/(4R(R-1))."""
    outcomes = Outcomes(torch.arange(4)[:, None], torch.full((4,), 0.25, dtype=DTYPE),
                        torch.tensor([[0.0], [0.0], [1.0], [-1.0]], dtype=DTYPE))
    rewards = torch.tensor([1.0, -1.0, 0.0, 0.0], dtype=DTYPE)
    for size in range(2, 7):
        assert abs(variance(outcomes, rewards, size, constant_baseline_group_gradient(0.0))) <= 1e-15
        assert close(variance(outcomes, rewards, size, group_gradient("rloo")), 1 / (4 * size * (size - 1)))


# == the oracle's new helpers =====================================================================


@given(problems(), group_sizes, st.floats(-5, 5))
def test_group_mean_squared_error_is_variance_plus_squared_bias(problem, size, baseline):
    outcomes, rewards = problem
    for estimator in (group_gradient("grpo"), constant_baseline_group_gradient(baseline)):
        bias = expect_group(outcomes, rewards, size, estimator, symmetric=True) - policy_gradient(outcomes, rewards)
        expected = variance(outcomes, rewards, size, estimator) + float(bias @ bias)
        assert close(group_mean_squared_error(outcomes, rewards, size, estimator, symmetric=True), expected)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5", None, True])
def test_constant_baseline_refuses_a_non_number(bad):
    with pytest.raises(ValueError, match="baseline must be a finite number"):
        constant_baseline_group_gradient(bad)


# == the counting rule of E_iid (kernel rule iid_sum_moments), against enumeration =================

def _exact_model_expectation(expr, probabilities, rewards, scores):
    """Replace each E[f(r_1, g_1)] in ``expr`` by the model's exact expectation."""
    import sympy as sp

    from grpo_verify.derivations.d5_baseline_bias import Ex
    from grpo_verify.derivations.notation import g, r

    values = {}
    for atom in expr.atoms(Ex):
        body = atom.args[0]
        values[atom] = sum(pa * body.subs({r[1]: ra, g[1]: ga}) for pa, ra, ga in zip(probabilities, rewards, scores))
    return sp.expand(expr.xreplace(values))


def _counted(expr):
    """``expr`` after the kernel's counting rule for i.i.d. sums (``iid_sum_moments``) alone, applied everywhere:
    an ``E_iid`` it does not apply to stays as it is."""
    from grpo_verify.proof import rules
    from grpo_verify.proof.build import propose

    return propose(expr, rules.iid_sum_moments)


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_moments_of_iid_sums_count_index_coincidences_exactly(size):
    """E[prod_m sum_i f_m(X_i)] by the set-partition count equals brute-force enumeration of all K^R tuples."""
    import itertools

    import sympy as sp

    from grpo_verify.derivations import d9_group_size as d9
    from grpo_verify.derivations.notation import R, g, i, r

    probabilities = [sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6)]
    rewards = [sp.Integer(1), sp.Integer(0), sp.Integer(2)]
    scores = [sp.Integer(3), sp.Integer(-1), sp.Rational(5, 2)]  # not mean zero: the rule needs no E[g] = 0
    s_rg, s_r, s_g = (sp.Sum(f, (i, 1, R)) for f in (r[i] * g[i], r[i], g[i]))
    s_r2 = sp.Sum(r[i] ** 2 - 3 * g[i], (i, 1, R))
    products = [s_r, s_r * s_g, s_rg ** 2, s_rg * s_r * s_g, s_r ** 2 * s_g ** 2, s_r ** 3 * s_g, 2 * s_r2 * s_g - 5,
                d9.rloo_in_sums ** 2]
    for product in products:
        counted = _counted(d9.IidE(product))
        assert not counted.has(d9.IidE), product
        counted = _exact_model_expectation(counted.subs(R, size), probabilities, rewards, scores)
        enumerated = sp.Integer(0)
        if size == 1 and product.has(R - 1):
            continue  # U divides by R - 1
        for outcome in itertools.product(range(3), repeat=size):
            weight = sp.Mul(*[probabilities[a] for a in outcome])
            values = {r[k + 1]: rewards[a] for k, a in enumerate(outcome)} | {g[k + 1]: scores[a] for k, a in enumerate(outcome)}
            enumerated += weight * product.subs(R, size).doit().subs(values)
        assert sp.simplify(counted - enumerated) == 0, (product, size, counted, enumerated)


def test_moments_of_iid_sums_leave_other_expressions_unevaluated():
    import sympy as sp

    from grpo_verify.derivations import d9_group_size as d9
    from grpo_verify.derivations.notation import R, g, i, j, r

    n = sp.Symbol("n", integer=True, positive=True)
    for expr in (r[1] * sp.Sum(g[i], (i, 1, R)),  # a random quantity outside the sums
                 sp.Sum(r[i] * g[j], (i, 1, R)),  # a body reaching another rollout
                 sp.Sum(r[i], (i, 1, R)) * sp.Sum(g[i], (i, 1, n)),  # two group sizes
                 sp.Sum(r[i], (i, 0, R)),  # not the rollouts 1..R
                 sp.Sum(i * r[i], (i, 1, R)),  # terms not identically distributed (the index outside r_i)
                 sp.Sum(sp.Function("f", real=True)(i), (i, 1, R)),  # no rollout at all, a function of i
                 sp.Sum(sp.IndexedBase("w", real=True)[i] * r[i], (i, 1, R)),  # w_i is not a rollout quantity
                 sp.Sum(r[i], (i, 1, R)) ** -1):  # not a polynomial in the sums
        assert isinstance(_counted(d9.IidE(expr)), d9.IidE), expr
    assert _counted(d9.IidE(sp.Integer(3))) == 3


@settings(max_examples=10)
@given(problems(styles=("continuous",)))
def test_group_mean_squared_error_takes_every_ordered_group_unless_told_the_estimator_is_symmetric(problem):
    # the first rollout's r_1 g_1 alone: unbiased, but not symmetric, so the multiset shortcut (one sorted
    # representative per group) would be wrong for it: the default must enumerate ordered tuples
    outcomes, rewards = problem

    def first_only(rewards_, scores_, indices_):
        return rewards_[:, :1, None].mul(scores_[:, :1, :]).sum(dim=1)

    ordered = group_mean_squared_error(outcomes, rewards, 2, first_only, symmetric=False)
    assert group_mean_squared_error(outcomes, rewards, 2, first_only) == ordered
    grad = policy_gradient(outcomes, rewards)
    single = float(outcomes.probs @ (rewards[:, None] * outcomes.scores - grad).pow(2).sum(dim=1))
    assert close(ordered, single)  # E||r g - grad J||^2 of one rollout


def test_group_mean_squared_error_refuses_an_estimator_of_the_wrong_shape():
    # two outcomes, three parameters: an estimator giving two values per group is refused by name
    outcomes = Outcomes(torch.tensor([[0], [1]]), torch.tensor([0.25, 0.75], dtype=DTYPE),
                        torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]], dtype=DTYPE))
    rewards = torch.tensor([0.0, 1.0], dtype=DTYPE)

    def two_values(rewards_, scores_, indices_):
        return scores_[:, 0, :2]

    with pytest.raises(ValueError) as caught:
        group_mean_squared_error(outcomes, rewards, 2, two_values)
    assert str(caught.value) == "the estimator must return one value per parameter, shape (C, 3); got (4, 2)"
