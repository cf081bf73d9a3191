"""Soundness red team, round 3: false statements in classes neither ``tests/test_soundness.py`` nor
``tests/test_soundness_round2.py`` covers.

Structured like round 2: every case in ``FALSE_CASES`` states something false (the comment gives the witness) and is
checked by the whole checker (``result.check()``) and by the trusted base alone (``kernel_alone``); refuted, unproved
or refused with a ``ValueError`` pass, proved fails, any other exception fails. ``KERNEL_CASES`` ask the kernel's
functions directly and return True when it accepted something false.

The first run of this file found four holes, all fixed since (each case now passes as written): a model's function
checked only on its Lambda variables' declared domain (``theorem.has_model``: every real argument now) and never
checked smooth, though the kernel reads every declared function as differentiable (its first derivatives must now be
defined everywhere); ``rules.sum_of_a_constant`` (and ``product_of_a_constant``, ``sum_linearity``) taking a factor
defined only inside a possibly empty range out of it (SymPy then built n * (1/n) as 1); and ``rules.iid_sum_moments``
making a family the i.i.d. operator leaves fixed random inside the one-rollout moment.
"""

from __future__ import annotations

import pytest
import sympy as sp

from grpo_verify.proof import (Assumption, Expectation, ForEach, IidExpectation, Induction, MatrixRank, MinimumAt,
                               Result, SquareMatrix, Step, as_written, rules)
from grpo_verify.proof import relations as rel
from grpo_verify.proof import theorem as kernel
from grpo_verify.proof.check import hypotheses as _hypotheses

from test_soundness import DIFF, _ctx, assert_not_proved, claim, cond, kernel_alone, lemma, on

# == symbols =======================================================================================

x, y, a, b, c = sp.symbols("x y a b c", real=True)
xp = sp.Symbol("x", positive=True)
x_nz = sp.Symbol("x", real=True, nonzero=True)
n, m = sp.symbols("n m", integer=True)
nn = sp.Symbol("n", integer=True, nonnegative=True)
j, i = sp.symbols("j i", integer=True)
k, R = sp.symbols("k R", integer=True, positive=True)
f = sp.Function("f", real=True)
h = sp.Function("h", real=True)
g_int = sp.Function("g", integer=True)
r = sp.IndexedBase("r", real=True)
w = sp.IndexedBase("w", real=True)
S = sp.Sum
HALF = sp.Rational(1, 2)

E_rw = Expectation.over("E_rw3", r, w)
E_iid_r = IidExpectation.over_rollouts("E_iid_r3", E_rw, r)  # binds r only; its one-rollout operator binds r and w
E_iid = IidExpectation.over_rollouts("E_iid3", E_rw, r, w)

# == builders ======================================================================================


def _every(lhs, rhs, v=y, text="an identity"):
    return Assumption(text, equation=(lhs, rhs), for_every=(v,))


def _nested_subs_derivative() -> Result:
    # F(y) = d/dx (x^2 y^2) at x = y = 2 y^3; dF/dy at 1 = 6 (the inner point mentions the outer variable).
    # Claimed 4, the partial derivative d/dy (2 x y^2) at x = y = 1
    inner = sp.Subs(sp.Derivative(x**2 * y**2, x), x, y)
    return claim(sp.Subs(sp.Derivative(inner, y), y, 1), 4, "=", by=DIFF)


def _nested_subs_derivative_value_claimed_partial() -> Result:
    # d/dy [ (d/dx x y)(x = y) ] = d/dy y = 1, claimed 0 (treating the inner value as free of y); every y
    inner = sp.Subs(sp.Derivative(x * y, x), x, y)
    return claim(sp.Derivative(inner * 1, y), 0, "=", by=DIFF)


def _induction_citing_a_true_lemma() -> Result:
    # n^2 <= 2n + 3 for every n >= 0 "by induction" citing the true lemma n^2 >= n (n >= 0); witness n = 4: 16 > 11
    helper = lemma(nn**2, nn, relation=">=")
    return claim(nn**2, 2 * nn + 3, "<=", induction=Induction(nn, 0), using=(helper,))


def _induction_citing_its_own_step() -> Result:
    # P(n): 2^n >= n^2 + 1; a lemma "P(n + 1) under P(n)" stated separately is false itself (n = 2: 8 >= 10)
    step = lemma(2**(nn + 1), (nn + 1)**2 + 1, cond(2**nn >= nn**2 + 1), relation=">=")
    return claim(2**nn, nn**2 + 1, ">=", induction=Induction(nn, 0), using=(step,))  # n = 2: 4 >= 5 is false


def _lemma_instance_at_the_boundary_of_for_each() -> Result:
    # lemma: R^2 >= 2R for R >= 2 (true); cited at R := k - 1 for k in {1, 2, 3}: at k = 1, 2 the instance's
    # hypothesis k - 1 >= 2 fails; the claim (k-1)^2 >= 2(k-1) + 1 is false at k = 3 (4 >= 5) and k = 1 (0 >= 1)
    base = lemma(R**2, 2 * R, cond(R >= 2), relation=">=")
    return claim((k - 1)**2, 2 * (k - 1) + 1, ">=", for_each=ForEach(k, (1, 2, 3)), steps=(
        Step(2 * (k - 1) + 1, "the lemma", relation=">=", using=(base.at({R: k - 1}),)),))


FALSE_CASES: list = [
    # -- models of functions: the Lambda variable's declaration ---------------------------------------------
    ("modelfn-integer_lambda_variable_hides_a_pole", lambda: claim(2 * y + 1, 0, "!=", _every(h(y), 1 / (2 * y + 1)),
                               model={h: sp.Lambda(n, 1 / (2 * n + 1)), y: 0})),
    # ^ y = -1/2: 2y + 1 = 0. (No real function is 1/(2y + 1) at y = -1/2: the hypotheses have no model, and the
    #   one accepted, n -> 1/(2n + 1) over the integers, is undefined at -1/2)
    ("modelfn-positive_lambda_variable_hides_a_pole", lambda: claim(y, 0, "!=", _every(h(y), 1 / y), model={h: sp.Lambda(xp, 1 / xp), y: 1})),  # y = 0
    ("modelfn-nonzero_lambda_variable_hides_a_pole", lambda: claim(y, 0, "!=", _every(h(y), 1 / y), model={h: sp.Lambda(x_nz, 1 / x_nz), y: 1})),  # y = 0
    ("modelfn-positive_lambda_variable_hides_a_log", lambda: claim(y, 0, ">", _every(h(y), sp.log(y)), model={h: sp.Lambda(xp, sp.log(xp)), y: 1})),  # y = -1
    ("modelfn-real_lambda_variable_with_a_pole", lambda: claim(
        y, 0, "!=", _every(h(y), 1 / y), model={h: sp.Lambda(x, 1 / x), y: 1})),  # y = 0; the model is refused
    ("modelfn-user_model_that_breaks_a_hypothesis", lambda: claim(
        x, 2, ">", cond(x > 1), model={x: sp.Integer(0)})),  # x = 3/2; the hint violates x > 1
    ("modelfn-user_model_integer_value_for_a_real_fraction", lambda: claim(
        g_int(x), 1, ">", cond(rel.Eq(2 * g_int(x), 3)), model={g_int: sp.Lambda(y, HALF * 3)})),
    # ^ 2 g = 3 has no integer solution: no model; a non-integer function hint must be refused
    # -- models of functions: smoothness -------------------------------------------------------------------
    ("smoothfn-relu_model_then_derivative_everywhere", lambda: claim(sp.Derivative(f(x), x)**2, 0, ">=", _every(f(y), sp.Max(y, 0)))),
    # ^ f = max(., 0) satisfies the hypothesis; x = 0: f'(0) does not exist
    ("smoothfn-abs_model_then_derivative_everywhere", lambda: claim(sp.Derivative(f(x), x)**2, 0, ">=", _every(f(y), sp.Abs(y)))),  # x = 0
    ("smoothfn-min_model_derivative_at_the_kink", lambda: claim(sp.Subs(sp.Derivative(f(x), x), x, 0)**2, 0, ">=", _every(f(y), sp.Min(y, 2 * y)))),
    # ^ f = min(y, 2y): one-sided slopes 2 and 1 at 0
    ("smoothfn-abs_model_product_with_zero", lambda: claim(sp.Derivative(f(x), x) * 0 + 1, 1, "=", _every(f(y), sp.Abs(y - 1)))),
    # ^ SymPy builds 0 * D as 0: both sides are 1 as built (refused as vacuous); f'(1) does not exist
    # -- sums of a constant that is defined only inside the range ---------------------------------------------
    ("constsum-reciprocal_of_an_integer_function", lambda: claim(S(1 / g_int(x)**2, (j, 1, g_int(x)**2)), 1, "=", by=(rules.sum_of_a_constant,))),
    # ^ g(x) = 0: the sum is empty (0), not 1
    ("constsum-reciprocal_of_the_upper_limit", lambda: claim(S(1 / nn, (j, 1, nn)), 1, "=", by=(rules.sum_of_a_constant,))),  # n = 0: 0 != 1
    ("constsum-quotient_by_the_upper_limit", lambda: claim(S(x / (x * nn), (j, 1, nn)), 1, "=", by=(rules.sum_of_a_constant,))),  # n = 0
    ("constsum-reciprocal_of_a_square_range", lambda: claim(S(1 / (m - n)**2, (j, 1, (m - n)**2)), 1, "=", by=(rules.sum_of_a_constant,))),  # m = n: 0 != 1
    ("constsum-rank_of_the_averaging_matrix_of_size_zero", lambda: claim(MatrixRank(SquareMatrix(nn, sp.Lambda((i, j), 1 / nn))), 1, "=",
                               by=(rules.rank_of_an_idempotent_is_its_trace, rules.sum_of_a_constant))),
    # ^ n = 0: the 0 x 0 matrix has rank 0
    # -- i.i.d. moments with a family only the one-rollout operator binds ------------------------------------
    ("iidfam-fixed_entry_of_an_unbound_family_made_random", lambda: claim(E_iid_r(S(r[i] * w[1], (i, 1, R))), R * E_rw(r[1] * w[1]), "=",
                               by=(rules.iid_sum_moments,))),
    # ^ (r, w) = +-(1, 1) w.p. 1/2, w_1 = 1 as a value: lhs = w_1 R E[r] = 0, rhs = R E[r w] = R (R = 1: 0 != 1)
    ("iidfam-unbound_entry_in_a_product_of_sums", lambda: claim(E_iid_r(S(r[i], (i, 1, R)) * S(r[i] * w[2], (i, 1, R))),
                               R * E_rw(r[1]**2 * w[2]) + R * (R - 1) * E_rw(r[1]) * E_rw(r[1] * w[2]), "=",
                               by=(rules.iid_sum_moments,))),
    # ^ (r, w) = (1, 1) w.p. 1/2 and (0, -1) w.p. 1/2, w_2 = 0 as a value: lhs = w_2 (...) = 0,
    #   rhs = R/2 + R (R - 1)/4 != 0
    ("iid-rollouts_zero_claimed_one_moment", lambda: claim(
        E_iid(S(r[i], (i, 1, nn))), E_rw(r[1]), "=", by=(rules.iid_sum_moments,))),  # n = 0: 0 != E[r] (r = 1)
    ("iid-square_over_one_rollout_claimed_the_square_of_the_mean", lambda: claim(
        E_iid(S(r[i], (i, 1, nn))**2), nn**2 * E_rw(r[1])**2, "=", by=(rules.iid_sum_moments,))),
    # ^ n = 1, r = +-1: 1 != 0
    ("iid-double_sum_at_equal_indices_as_independent", lambda: claim(
        E_iid(S(S(r[i] * r[j], (i, 1, R)), (j, 1, R))), R**2 * E_rw(r[1])**2, "=",
        by=(rules.iid_sum_moments, rules.expectation_linearity, rules.sum_linearity))),
    # ^ the terms i = j give E[r^2]: R = 1, r = +-1: 1 != 0
    # -- nested points and derivatives ------------------------------------------------------------------
    ("subschain-derivative_of_a_value_at_a_point_in_the_outer_variable", _nested_subs_derivative),  # 6 != 4
    ("subschain-inner_point_treated_as_constant", _nested_subs_derivative_value_claimed_partial),  # 1 != 0
    ("subschain-sequential_points_claimed_simultaneous", lambda: claim(
        sp.Subs(sp.Subs(x**2 + y, x, x + y), y, x), x**2 + x + 2 * x**2, "=")),
    # ^ inner: (x + y)^2 + y; at y = x: 4x^2 + x, not 3x^2 + x (x = 1: 5 != 4)
    # -- induction together with citations ---------------------------------------------------------------
    ("inductcite-false_step_with_a_true_lemma", _induction_citing_a_true_lemma),  # n = 4: 16 > 11
    ("inductcite-step_stated_as_a_false_lemma", _induction_citing_its_own_step),  # n = 2: 4 < 5
    ("inductcite-lemma_instance_at_the_boundary_of_for_each", _lemma_instance_at_the_boundary_of_for_each),
    # ^ k = 1: 0 >= 1 is false
    # -- sums whose limits are not plain integers -------------------------------------------------------
    ("limits-min_as_an_upper_limit", lambda: claim(S(1, (j, 1, sp.Min(nn, 3))), nn, "=")),  # n = 5: 3 != 5
    ("limits-sum_as_an_upper_limit", lambda: claim(S(1, (j, 1, S(1, (i, 1, nn)))), nn + 1, "=")),  # n != n + 1
    ("limits-max_of_integers_as_a_lower_limit", lambda: claim(S(1, (j, sp.Max(n, 1), 3)), 3, "=")),  # n = 1: 3 ok;
    # ^ n = 2: 2 != 3
    ("limits-piecewise_on_the_bound_index", lambda: claim(
        S(sp.Piecewise((1, j <= 1), (0, True)), (j, 1, nn)), 1, "=", by=(rules.piecewise_branch,))),  # n = 0: 0
    ("limits-piecewise_on_the_bound_index_decided_by_a_free_hypothesis", lambda: claim(
        S(sp.Piecewise((1, j <= 1), (0, True)), (j, 1, nn)), nn, "=", cond(j <= 1), by=(rules.piecewise_branch,))),
    # ^ the hypothesis is about a free j, not the index: n = 3: 1 != 3
    # -- Kronecker deltas of values that need not be integers -----------------------------------------------
    ("delta-half_integer_witness_in_range", lambda: claim(
        S(sp.KroneckerDelta(j, n + HALF), (j, 1, 3)), 1, "=", on(n, 0, 2), by=(rules.sum_of_a_delta,))),  # 0 != 1
    ("delta-of_a_real_and_its_double", lambda: claim(sp.KroneckerDelta(x, 2 * x), 0, "=",
                                                     by=(rules.delta_of_equal_or_distinct_values,))),  # x = 0: 1
    ("delta-sifted_with_an_integer_function_outside_the_range", lambda: claim(
        S(sp.KroneckerDelta(j, g_int(x)) * j, (j, 1, 3)), g_int(x), "=", cond(g_int(x) >= 1),
        by=(rules.sum_of_a_delta,))),  # g = 4: 0 != 4
    # -- binomial coefficients off the usual range ----------------------------------------------------------
    ("binomial-nonnegative_for_a_negative_top", lambda: claim(sp.binomial(n, m), 0, ">=", cond(m >= 0))),
    # ^ n = -1, m = 1: binomial(-1, 1) = -1
    ("binomial-of_a_real_top", lambda: claim(sp.binomial(x, 2), x * (x - 1) / 2, "=")),  # not an integer binomial
    ("binomial-at_least_one_on_a_wider_range", lambda: claim(sp.binomial(n, m), 1, ">=", cond(m >= 0),
                                                             cond(m <= n + 1))),  # m = n + 1 = 1: binomial(0, 1) = 0
    # -- powers of negative bases and huge exponents -------------------------------------------------------
    ("negroot-cube_root_of_minus_eight", lambda: claim(as_written(lambda: sp.Pow(-8, sp.Rational(1, 3))), -2, "=")),
    # ^ a non-integer power of a negative number is undefined in the kernel's reading (SymPy: 1 + sqrt(3) i)
    ("negroot-two_thirds_power_of_minus_eight", lambda: claim(
        as_written(lambda: sp.Pow(-8, sp.Rational(2, 3))), 4, "=")),  # principal value -2 + 2 sqrt(3) i
    ("negroot-cube_root_of_a_cube", lambda: claim((x**3)**sp.Rational(1, 3), x, "=")),  # x = -1: undefined (or -1)
    ("huge-odd_power_of_minus_one_claimed_one", lambda: claim((-1)**(10**30 + 1), 1, "=")),  # it is -1
    ("huge-two_to_the_ten_thousand_below_its_magnitude", lambda: claim(
        sp.Integer(2)**10000, sp.Integer(10)**3010, "<")),  # 2^10000 = 1.99e3010 > 1e3010
    ("huge-exponential_of_a_large_integer_below_its_power", lambda: claim(
        sp.exp(sp.Integer(10)**4), sp.Integer(10)**4342, "<")),  # e^10000 = 8.8e4342 > 1e4342
    # -- exp and log off their domains ------------------------------------------------------------------
    ("explog-log_of_a_quotient_of_reals", lambda: claim(sp.log(x / y), sp.log(x) - sp.log(y), "=",
                                                        by=(rules.log_of_a_product_or_power,))),  # x = y = -1
    ("explog-log_of_a_reciprocal_of_a_real", lambda: claim(sp.log(1 / x), -sp.log(x), "=",
                                                           by=(rules.log_of_a_product_or_power,))),  # x = -1
    ("explog-power_as_exp_of_log", lambda: claim(sp.exp(y * sp.log(x)), x**y, "=",
                                                 by=(rules.log_of_a_product_or_power,))),
    # ^ x = -1, y = 2: the left side is undefined (log(-1)), the right side 1
    ("explog-log_of_exp_times_a_real", lambda: claim(sp.log(sp.exp(x) * y), x + sp.log(y), "=", cond(sp.Ne(y, 0)),
                                                     by=(rules.log_of_a_product_or_power,))),  # y = -1
    ("explog-power_of_a_product_splits", lambda: claim((x * y)**HALF, x**HALF * y**HALF, "=")),  # x = y = -1
    ("explog-exponent_sum_at_a_zero_base_negative_part", lambda: claim(
        x**(n - 1), x**n / x, "=", cond(n >= 1), by=(rules.exponent_sum_splits,))),  # x = 0, n = 1: 1 vs 0/0
    # -- integer-valued functions under equations -------------------------------------------------------
    ("intfn-half_of_an_integer_value_claimed_zero", lambda: claim(x, 0, "=", cond(rel.Eq(2 * g_int(x), x)))),
    # ^ x = 2, g(2) = 1
    ("intfn-two_values_in_ratio_two", lambda: claim(g_int(y), 0, "=", cond(rel.Eq(g_int(x), HALF * g_int(y))))),
    # ^ g(y) = 2, g(x) = 1
    ("intfn-value_squared_equal_two_thirds_of_something", lambda: claim(
        g_int(x)**2, 1, "=", cond(rel.Eq(3 * g_int(x)**2, 3 * y)), cond(y > 0))),  # y = 4, g = 2
    # -- hypotheses that speak of indexed entries only -----------------------------------------------------
    ("indexed-hypothesis_on_one_entry_claimed_for_a_free_index", lambda: claim(r[j], 0, ">", cond(r[1] > 0))),
    # ^ j = 2, r_2 = -1
    ("indexed-equal_entries_claimed_for_a_free_index", lambda: claim(
        r[1], r[j], "=", cond(rel.Eq(r[1], r[2])))),  # j = 3, r_3 = 5
    ("indexed-entry_at_a_computed_index", lambda: claim(r[2 * j], r[j + j + 1], "=")),  # r_2 = 0, r_3 = 1 at j = 1
    # -- the mean-value rule at an end of the interval ---------------------------------------------------
    ("mvtend-point_at_an_open_end", lambda: claim(
        sp.log(x), x - 1, ">=", on(x, 0, 1, left_open=True), minimum_at=MinimumAt(x, 0), by=DIFF)),
    # ^ log x < x - 1 on (0, 1); the point 0 is not admissible (log 0)
    ("mvtend-point_at_the_closed_right_end", lambda: claim(
        -x**2, -1, ">=", on(x, 0, 2), minimum_at=MinimumAt(x, 2), by=DIFF)),  # x = 2: -4 < -1
    ("mvtend-point_at_the_left_end_with_a_wrong_slope", lambda: claim(
        x**2, x, ">=", on(x, 0, 1), minimum_at=MinimumAt(x, 0), by=DIFF)),  # x = 1/2: 1/4 < 1/2
    # -- ranks of size 0 ------------------------------------------------------------------------------
    ("rank0-identity_of_size_zero_has_rank_at_least_one", lambda: claim(
        MatrixRank(SquareMatrix(nn, sp.Lambda((i, j), sp.KroneckerDelta(i, j)))), 1, ">=",
        by=(rules.rank_of_a_triangular_matrix,))),  # n = 0: rank 0
    ("rank0-all_ones_of_symbolic_size_has_rank_one", lambda: claim(
        MatrixRank(SquareMatrix(nn, sp.Lambda((i, j), sp.Integer(1)))), 1, "=",
        by=(rules.rank_of_an_idempotent_is_its_trace, rules.sum_of_a_constant))),  # n = 0: 0; n = 2: J^2 != J
    # -- for_each values excluded only by the assumptions together ----------------------------------------
    ("foreach-value_excluded_only_jointly", lambda: claim(
        R, R + 1, "=", cond(R < y), cond(y < 3), for_each=ForEach(R, (1, 5)))),  # R = 1, y = 2: 1 != 2
    ("foreach-vacuous_at_a_value_excluded_only_jointly", lambda: claim(
        R * y, y, "=", cond(R < y), cond(y < 3), for_each=ForEach(R, (1, 5)))),
    # ^ true at R = 1; at R = 5 no y has 5 < y < 3: "proved for R in {1, 5}" would be vacuous at 5
    ("foreach-fallback_value_at_the_boundary", lambda: claim(
        2**R, R**2 + 1, ">", cond(R >= 1), fallback=ForEach.range(R, 1, 4))),  # R = 1: 2 > 2 fails
]


def _params(cases):
    return [pytest.param(build, id=name) for name, build in cases]


@pytest.mark.parametrize("build", _params(FALSE_CASES))
def test_false_statement_is_not_proved(build):
    assert_not_proved(build)


@pytest.mark.parametrize("build", _params(FALSE_CASES))
def test_false_statement_is_not_proved_by_the_kernel_alone(build):
    assert not kernel_alone(build), "the trusted base proves this FALSE statement; only the evaluator refutes it"


# == the trusted base asked directly ================================================================
# Each returns True when the kernel accepted something false.

def _has_model_with_an_integer_lambda() -> bool:
    # h(y) = 1/(2y + 1) for every real y has no model (y = -1/2); has_model must refuse n -> 1/(2n + 1)
    ctx = _ctx(_every(h(y), 1 / (2 * y + 1)))
    return kernel.has_model(ctx, kernel.Model({y: sp.Integer(0)}, {}, {h: sp.Lambda(n, 1 / (2 * n + 1))}, {}))


def _has_model_with_a_kink() -> bool:
    # a declared function is smooth for the kernel; f = |.| is no model of anything it then concludes
    ctx = _ctx(_every(f(y), sp.Abs(y)))
    return kernel.has_model(ctx, kernel.Model({}, {}, {f: sp.Lambda(y, sp.Abs(y))}, {}))


def _constant_sum_rule_over_an_empty_range() -> bool:
    # sum_of_a_constant on Sum(1/n, (j, 1, n)) must not give 1 (the sum is 0 at n = 0)
    from grpo_verify.proof.rules import Local
    from grpo_verify.proof.terms import canon

    out = rules.sum_of_a_constant.fn(canon(S(1 / nn, (j, 1, nn))), Local(kernel.Context(())))
    return out is not None and canon(out) == 1


KERNEL_CASES: list = [
    pytest.param(_has_model_with_an_integer_lambda, id="kmodel-function_over_the_integers_only"),
    pytest.param(_has_model_with_a_kink, id="kmodel-function_with_a_kink"),
    pytest.param(_constant_sum_rule_over_an_empty_range, id="krule-constant_sum_over_a_possibly_empty_range"),
]


@pytest.mark.parametrize("run", KERNEL_CASES)
def test_the_kernel_accepts_nothing_false_when_asked_directly(run):
    try:
        accepted = run()
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"the kernel crashed with {type(exc).__name__}: {exc}", pytrace=False)
    assert not accepted, "the trusted base accepted something false"
