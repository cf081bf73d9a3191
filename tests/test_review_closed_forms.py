"""The referee's checks on claim C5, by an independent route: exact enumeration with ``fractions.Fraction``.

Nothing here imports a derivation's closed form for the value it checks. The total variance is D8's definition,
$V(b) = E \\lVert (r - b) g \\rVert^2 - \\lVert E[(r - b) g] \\rVert^2$ (trace of the covariance of $(r - b) g$).
Only item (i) of the review (the 3-armed softmax bandit) is covered so far.
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
