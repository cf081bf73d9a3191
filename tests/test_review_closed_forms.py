"""The referee's checks on claim C5, by an independent route: exact enumeration with ``fractions.Fraction``.

Nothing here imports a derivation's closed form for the value it checks. The total variance is D8's definition,
$V(b) = E \\lVert (r - b) g \\rVert^2 - \\lVert E[(r - b) g] \\rVert^2$ (trace of the covariance of $(r - b) g$).
Covered here: (i) b* and the mean baseline's excess on the 3-armed softmax bandit, both parametrisations; (ii)
the group-mean (RLOO) baseline's excess over b* at R = 2, 3, 4 by enumerating every group, and its degenerate
case. The other closed forms the review recomputed have their enumeration tests beside their code: D10's SNRs
(tests/test_d10_credit_assignment.py, the brute force over {0, 1}^H), z_R (tests/test_oracle.py), c_R
(tests/test_properties.py, tests/test_oracle.py), the shared-logit case (tests/test_shared_parameter_sparsity.py).
"""

from fractions import Fraction as F

import pytest

PI = (F(1, 2), F(1, 4), F(1, 4))
REWARD = (F(1), F(0), F(0))


def scores(free):
    """Scores of log pi in the logits: d log pi_a / d theta_c = delta_ac - pi_c, for the free logits c.
    ``free = (0, 1, 2)``: every logit free; ``(0, 1)``: the last logit theta_3 = 0 fixed (D8's reference logit)."""
    return [[(1 if a == c else 0) - PI[c] for c in free] for a in range(3)]


def total_variance(g, baseline):
    second = sum(p * (r - baseline) ** 2 * sum(x * x for x in ga) for p, r, ga in zip(PI, REWARD, g))
    mean = [sum(p * (r - baseline) * ga[c] for p, r, ga in zip(PI, REWARD, g)) for c in range(len(g[0]))]
    return second - sum(m * m for m in mean)


def optimal_baseline(g):
    norms = [sum(x * x for x in ga) for ga in g]
    return sum(p * r * n for p, r, n in zip(PI, REWARD, norms)) / sum(p * n for p, n in zip(PI, norms))


@pytest.mark.parametrize("free, best, excess", [((0, 1, 2), F(3, 10), F(1, 40)), ((0, 1), F(5, 14), F(1, 112))],
                         ids=["K_free_logits", "reference_logit_fixed"])
def test_softmax_example_optimal_baseline_and_mean_baseline_excess(free, best, excess):
    g = scores(free)
    assert all(sum(p * ga[c] for p, ga in zip(PI, g)) == 0 for c in range(len(free)))  # E[g] = 0
    b_star = optimal_baseline(g)
    assert b_star == best
    # b* minimises V over a grid of rationals, and the mean baseline E[r] = 1/2 loses exactly `excess`
    assert all(total_variance(g, F(k, 40)) >= total_variance(g, b_star) for k in range(-40, 81))
    mean = sum(p * r for p, r in zip(PI, REWARD))
    assert total_variance(g, mean) - total_variance(g, b_star) == excess


def test_the_kernel_values_match_this_enumeration():
    """The D8 results state the numbers this file enumerates (only their right-hand sides are read)."""
    from grpo_verify.derivations import d8_optimal_baseline as d8

    assert str(d8.softmax_example_optimal_baseline_is_three_tenths.rhs) == "3/10"
    assert str(d8.softmax_example_optimal_baseline_with_a_reference_logit_is_five_fourteenths.rhs) == "5/14"
    assert str(d8.softmax_example_mean_baseline_excess_variance_is_one_fortieth.rhs) == "1/40"
    assert str(d8.softmax_example_mean_baseline_excess_variance_with_a_reference_logit_is_one_over_112.rhs) == "1/112"


# == C5 (ii): GRPO's own baseline against b* at finite R, by enumerating every group ==============
def rloo_group_variance(g, size):
    """Var(U) of U = (1/R) sum_i (r_i - mean_{j != i} r_j) g_i over all K^R ordered groups (trace of its covariance)."""
    from itertools import product

    dims = len(g[0])
    second, mean = F(0), [F(0)] * dims
    for group in product(range(3), repeat=size):
        weight = F(1)
        for a in group:
            weight *= PI[a]
        total = sum(REWARD[a] for a in group)
        u = [sum((REWARD[a] - (total - REWARD[a]) / (size - 1)) * g[a][c] for a in group) / size for c in range(dims)]
        second += weight * sum(x * x for x in u)
        mean = [m + weight * x for m, x in zip(mean, u)]
    return second - sum(m * m for m in mean)


@pytest.mark.parametrize("free, excesses", [((0, 1, 2), (F(11, 80), F(1, 20), F(13, 480))),
                                            ((0, 1), (F(11, 112), F(23, 672), F(1, 56)))],
                         ids=["K_free_logits", "reference_logit_fixed"])
def test_group_mean_baseline_excess_over_optimal_baseline_by_enumeration(free, excesses):
    """Var(U) - V(b*)/R on the softmax example for R = 2, 3, 4: the enumerated value, the numbers the review
    computed, and D9's closed form (V_or - V(b*))/R + (Var(r) E||g||^2 + ||grad J||^2)/(R(R-1)) evaluated from the
    bandit's moments; all strictly positive (the group-mean baseline is never optimal here)."""
    g = scores(free)
    b_star = optimal_baseline(g)
    mean_reward = sum(p * r for p, r in zip(PI, REWARD))
    norm2 = [sum(x * x for x in ga) for ga in g]
    var_r = sum(p * (r - mean_reward) ** 2 for p, r in zip(PI, REWARD))
    score_moment = sum(p * n for p, n in zip(PI, norm2))
    grad = [sum(p * r * ga[c] for p, r, ga in zip(PI, REWARD, g)) for c in range(len(free))]
    for size, expected in zip((2, 3, 4), excesses):
        enumerated = rloo_group_variance(g, size) - total_variance(g, b_star) / size
        closed = ((total_variance(g, mean_reward) - total_variance(g, b_star)) / size
                  + (var_r * score_moment + sum(x * x for x in grad)) / (size * (size - 1)))
        assert enumerated == expected == closed
        assert enumerated > 0


def test_group_mean_baseline_excess_vanishes_for_a_constant_reward():
    """The degenerate case: with a constant reward RLOO's terms are all zero, and so is b*'s variance."""
    global REWARD
    saved, REWARD = REWARD, (F(1), F(1), F(1))
    try:
        g = scores((0, 1, 2))
        assert rloo_group_variance(g, 3) == 0 == total_variance(g, optimal_baseline(g))
    finally:
        REWARD = saved


def test_planted_wrong_leave_one_out_mean_is_caught():
    """A planted bug (dividing the others' sum by R instead of R - 1) changes the enumerated excess."""
    from itertools import product

    g, size = scores((0, 1, 2)), 3
    second, mean = F(0), [F(0)] * 3
    for group in product(range(3), repeat=size):
        weight = PI[group[0]] * PI[group[1]] * PI[group[2]]
        total = sum(REWARD[a] for a in group)
        u = [sum((REWARD[a] - (total - REWARD[a]) / size) * g[a][c] for a in group) / size for c in range(3)]
        second += weight * sum(x * x for x in u)
        mean = [m + weight * x for m, x in zip(mean, u)]
    assert second - sum(m * m for m in mean) - total_variance(g, optimal_baseline(g)) / size != F(1, 20)
