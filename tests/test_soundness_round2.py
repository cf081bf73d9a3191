"""Soundness red team, round 2: false statements in classes ``tests/test_soundness.py`` does not cover.

Each case in ``FALSE_CASES`` states something false; the comment next to it gives the witness (values at which
the claim fails, or at which a side is undefined). Each is checked twice, like the first suite:

* by the whole checker (``result.check()``): refuted, unproved or refused with a ``ValueError`` pass; proved (or
  proved for a range) fails, and so does any other exception (a statement must get a status, not a crash);
* by the trusted base alone (``kernel_alone``: the checker's path without the evaluator's refutation).

``KERNEL_CASES`` ask ``grpo_verify/proof/theorem.py`` directly (``link``, ``cite``, ``has_model``, ``proves``) with
crafted inputs; each returns True when the kernel accepted something false.

The first run of this file found seven holes and one crash, all fixed since (each case now passes as written):
a closed number whose 50-digit evaluation lost every digit read as a sign and as z3 bounds (``arith``: strict
evaluation, undecided otherwise); a derivative of a matrix rank counted as defined (``definedness``: a rank is not
smooth); a cited instance used for every value of a symbol its instantiated hypothesis pins (``theorem.cite``: the
pattern from the instance); a model accepted where a hypothesis the context presupposes defined is undefined, and
SymPy deciding ``Eq(I, I)`` there (``theorem.has_model``, ``relations.rebuilt``); declarations given as False
(``even=False``) that SymPy builds with (``terms``: refused); a result's cached report and statement changed after
checking (``result``: the report cached outside the result with the statement it was made for); and theorems and
citations made around the token (``theorem``: only the objects the rules made are accepted).

``TRUE_CASES`` are true twins of a few false cases: they must be proved (when the kernel proves them; the
completeness gaps found are listed in the notes instead of asserted).
"""

from __future__ import annotations

import copy
import pickle
from typing import Callable

import pytest
import sympy as sp

from grpo_verify.proof import (Assumption, Expectation, ForEach, IidExpectation, Induction, MatrixRank, MinimumAt,
                               Result, SquareMatrix, Status, Step, as_written, rules)
from grpo_verify.proof import relations as rel
from grpo_verify.proof import theorem as kernel
from grpo_verify.proof.check import hypotheses as _hypotheses

from test_soundness import (ABS, DIFF, _ctx, _kernel_link, assert_not_proved, assert_proved, claim, cond, kernel_alone,
                            lemma, on, pos)

Build = Callable[[], Result]

# == symbols =======================================================================================

x, y, a, b, c = sp.symbols("x y a b c", real=True)
xp, yp = sp.symbols("x y", positive=True)
n, m = sp.symbols("n m", integer=True)
nn = sp.Symbol("n", integer=True, nonnegative=True)
j, i, l = sp.symbols("j i l", integer=True)
k, R = sp.symbols("k R", integer=True, positive=True)
t = sp.Symbol("t", real=True)
f = sp.Function("f", real=True)
g_int = sp.Function("g", integer=True)
r = sp.IndexedBase("r", real=True)
w = sp.IndexedBase("w", real=True)
S = sp.Sum
HALF = sp.Rational(1, 2)

E_r = Expectation.over("E_r", r)
E_r_other = Expectation.over("E_r", r)  # the same name and family, another distribution
E_rw = Expectation.over("E_rw", r, w)
E_iid = IidExpectation.over_rollouts("E_iid", E_rw, r, w)

# closed numbers that are exactly 0 (or tiny) but lose every digit to cancellation in a 50-digit evaluation
LOG_ZERO = sp.log(4) - 2 * sp.log(2)  # = 0 exactly: log 4 = 2 log 2 (SymPy leaves log(4) as it is)
HUGE_ZERO = LOG_ZERO * sp.exp(1000)  # = 0; sp.N(., 50) gives "0.e+268", read as a number of size 1e268
E300 = sp.exp(300)
TINY = (E300 + 1)**2 - sp.exp(600) - 2 * E300 - 1  # = 0 exactly; sp.N(., 50) gives "-0.e+102"

# declarations the kernel says it does not know, given as False (SymPy infers the complement)
n_odd = sp.Symbol("n", integer=True, even=False)  # SymPy: odd, so (-1)**n is built as -1
n_even = sp.Symbol("n", integer=True, odd=False)  # SymPy: even, so (-1)**n is built as 1


def deriv_rank(v=x):
    return sp.Derivative(MatrixRank(sp.ImmutableMatrix([[v]])), v)


def _subclassed_result_with_a_forged_theorem() -> Result:
    # a Result subclass whose check() hands back a Theorem made without the token (object.__new__ and
    # object.__setattr__, no monkeypatching): it states x = 0 for every x and is cited: x + y = y (x = 1)
    forged = object.__new__(kernel.Theorem)
    for key, value in (("hyps", frozenset()), ("lhs", x), ("relation", "="), ("rhs", sp.Integer(0)), ("rules", frozenset())):
        object.__setattr__(forged, key, value)
    from grpo_verify.proof.check import ResultReport

    class Liar(Result):
        def check(self, *, refresh: bool = False):  # noqa: ARG002
            return ResultReport(self.name, Status.PROVED, (), 0.0, "symbolic", theorems=(forged,))

    liar = Liar(name="liar", doc="x = 0", lhs=x, rhs=sp.Integer(0))
    return claim(y + x, y, steps=(Step(y, "the forged lemma", using=(liar,)),))


def _report_planted_with_object_setattr() -> Result:
    # Result.__setattr__ refuses ``_report``; object.__setattr__ does not ask it (x = x + 1: every x)
    from grpo_verify.proof.check import ResultReport

    statement = claim(x, x + 1)
    object.__setattr__(statement, "_report", ResultReport(statement.name, Status.PROVED, (), 0.0, "symbolic"))
    return statement


def _statement_changed_through_the_dict() -> Result:
    # a true statement checked, then its right-hand side replaced through __dict__: the cached report stays
    statement = claim(x + 1, x, ">")
    statement.check()
    statement.__dict__["rhs"] = x + 2  # now x + 1 > x + 2: false for every x
    return statement


def _pattern_after_instantiation() -> Result:
    # lemma: x^2 e^y = x e^y when x = 1 (true); at x := y its hypothesis y = 1 is a fact about the free y, yet the
    # instance y^2 e^y = y e^y is cited as if it held for every y (rewriting inside d/dy).
    # Witness y = 1: d/dy (y^2 e^y) = (2y + y^2) e^y = 3e, not (1 + y) e^y = 2e
    base = lemma(x**2 * sp.exp(y), x * sp.exp(y), cond(rel.Eq(x, 1)))
    return claim(sp.Derivative(y**2 * sp.exp(y), y), (1 + y) * sp.exp(y), "=", cond(rel.Eq(y, 1)), steps=(
        Step(sp.Derivative(y * sp.exp(y), y), "the lemma at x = y", using=(base.at({x: y}),)),
        Step((1 + y) * sp.exp(y), "product rule", by=DIFF)))


def _pattern_after_instantiation_polynomial() -> Result:
    # the same with a polynomial: x^2 y^3 = x y^3 for x = 1; at x := y: y^5 = y^4 "for every y"
    # Witness y = 1: d/dy y^5 = 5, not d/dy y^4 = 4
    base = lemma(x**2 * y**3 + y, x * y**3 + y, cond(rel.Eq(x, 1)))
    return claim(sp.Derivative(y**5 + y, y), 4 * y**3 + 1, "=", cond(rel.Eq(y, 1)), steps=(
        Step(sp.Derivative(y**4 + y, y), "the lemma at x = y", using=(base.at({x: y}),)),
        Step(4 * y**3 + 1, "power rule", by=DIFF)))


def _induction_with_an_unrelated_hypothesis() -> Result:
    # P(n): n <= 3 "for every n >= 0" by induction: the base holds, the step n <= 3 => n + 1 <= 3 does not;
    # witness n = 4
    return claim(nn, 3, "<=", induction=Induction(nn, 0))


def _sum_over_dependent_range_swapped() -> Result:
    # sum_{i=1}^{n} sum_{j=i}^{n} 1 = n(n+1)/2, not n^2 (swap with a dependent inner range); witness n = 2: 3 != 4
    inner = S(1, (j, i, n))
    return claim(S(inner, (i, 1, n)), n**2, "=", cond(n >= 1), steps=(
        Step(S(S(1, (i, 1, n)), (j, 1, n)), "swap", by=(rules.sums_swap,)),
        Step(n**2, "constant sums", by=(rules.sum_of_a_constant,))))


def _split_at_a_half() -> Result:
    # split at k = n/2 (not an integer for odd n); witness n = 1: the split point 1/2 is no index
    return claim(S(j, (j, 1, n)), S(j, (j, 1, n / 2)) + S(j, (j, n / 2 + 1, n)) + 1, "=", cond(n >= 1))


def _telescoping_with_a_partial_g() -> Result:
    # g(j) = 1/(j - 2) is undefined at j = 2 inside 1..3: sum_{j=1}^{2} (g(j+1) - g(j)) "= g(3) - g(1)" = 2;
    # the left side's term at j = 1 is 1/(-1)... the term j = 2 has g(2) = 1/0: undefined. Witness: the sum itself.
    g = sp.Lambda(t, 1 / (t - 2))
    return claim(S(1 / (j - 1) - 1 / (j - 2), (j, 1, 2)), 2, "=", by=(rules.sum_telescopes(g),))


def _delta_sift_non_integer_witness() -> Result:
    # sum_{j=1}^{3} delta(j, x) f(j) = f(x) for x = 3/2 is false: the left side is 0 (no j equals 3/2)
    return claim(S(sp.KroneckerDelta(j, x) * j, (j, 1, 3)), x, "=", on(x, 1, 3), by=(rules.sum_of_a_delta,))


def _iid_product_of_two_rollouts_as_a_square() -> Result:
    # under i.i.d. rollouts E[r_1 r_1] = E[r_1^2], not E[r_1]^2; witness r = +-1 w.p. 1/2: 1 != 0
    return claim(E_iid(S(r[j], (j, 1, R))**2), R * E_rw(r[1])**2 + R * (R - 1) * E_rw(r[1])**2, "=",
                 by=(rules.iid_sum_moments, rules.expectation_linearity))


def _min_of_kinks_resolved_by_a_weak_hypothesis() -> Result:
    # d/dx |x| at x = c with c >= 0 only: at c = 0 there is no derivative
    return claim(sp.Subs(sp.Derivative(sp.Abs(x), x), x, c), 1, "=", cond(c >= 0), by=DIFF + ABS)


FALSE_CASES: list = [
    # -- closed numbers whose 50-digit evaluation loses every digit -----------------------------------
    ("closed-zero_times_huge_claimed_positive", lambda: claim(HUGE_ZERO, 0, ">")),  # it is 0
    ("closed-zero_times_huge_claimed_nonzero", lambda: claim(HUGE_ZERO, 0, "!=")),  # it is 0
    ("closed-zero_times_huge_claimed_above_one", lambda: claim(HUGE_ZERO, 1, ">")),  # 0 > 1
    ("closed-equal_products_claimed_ordered", lambda: claim(E300 * sp.log(4), 2 * E300 * sp.log(2), ">")),
    # ^ equal: log 4 = 2 log 2
    ("closed-cancelling_squares_claimed_below", lambda: claim(
        (E300 + 1)**2 + sp.Rational(1, 10**10), sp.exp(600) + 2 * E300 + 1, "<")),  # lhs - rhs = 1e-10 > 0
    ("closed-log_of_one_in_disguise_with_a_free_symbol", lambda: claim(sp.log(1 + HUGE_ZERO) + x**2, 1, ">")),
    # ^ log(1 + 0) + x^2 = x^2: x = 0
    ("closed-root_of_zero_in_disguise_with_a_free_symbol", lambda: claim(sp.sqrt(HUGE_ZERO + x**2), 1, ">")),
    # ^ sqrt(0 + x^2) = |x|: x = 0
    ("closed-cancelling_squares_claimed_negative_with_a_free_symbol", lambda: claim(TINY + x**2, 0, "<")),
    ("closed-exponential_of_a_cancelled_zero_claimed_below_one", lambda: claim(sp.exp(TINY) + x**2, 1, "<")),
    # ^ exp(0) + x^2 = 1 + x^2: x = 0 (this one ran past 60 s before the strict evaluation)
    # ^ TINY = 0: x^2 < 0 is false at every x
    # -- definedness: operators that are not differentiable -------------------------------------------
    ("smooth-derivative_of_a_rank_times_a_factor", lambda: claim(deriv_rank() * (x + 1), deriv_rank() * x + deriv_rank())),
    # ^ x = 0: rank([[x]]) jumps from 1 to 0 to 1, no derivative there: both sides undefined
    ("smooth-derivative_of_a_rank_at_its_jump", lambda: claim(
        sp.Subs(deriv_rank(), x, 0) * (y + 1), sp.Subs(deriv_rank(), x, 0) * y + sp.Subs(deriv_rank(), x, 0))),
    # ^ every y: d/dx rank([[x]]) at 0 does not exist
    ("smooth-derivative_of_a_square_matrix_rank", lambda: claim(
        sp.Derivative(MatrixRank(SquareMatrix(2, sp.Lambda((i, j), x * sp.KroneckerDelta(i, j)))), x) * (y + 1),
        sp.Derivative(MatrixRank(SquareMatrix(2, sp.Lambda((i, j), x * sp.KroneckerDelta(i, j)))), x) * y
        + sp.Derivative(MatrixRank(SquareMatrix(2, sp.Lambda((i, j), x * sp.KroneckerDelta(i, j)))), x))),
    # ^ x = 0: rank(x I_2) jumps
    ("smooth-derivative_of_abs_under_a_weak_hypothesis", _min_of_kinks_resolved_by_a_weak_hypothesis),  # c = 0
    # -- citations: the pattern of an instance --------------------------------------------------------
    ("pattern-instance_value_mentions_a_pattern_variable", _pattern_after_instantiation),  # y = 1: 3e != 2e
    ("pattern-instance_value_mentions_a_pattern_variable_polynomial", _pattern_after_instantiation_polynomial),
    # ^ y = 1: 5 + 1 != 4 + 1
    # -- declarations given as False ------------------------------------------------------------------
    ("declare-even_false_makes_minus_one_power_negative", lambda: claim((-1)**n_odd + n_odd, n_odd, "<")),
    # ^ read as an integer (the kernel's declarations): n = 2: 1 + 2 < 2 is false
    ("declare-odd_false_makes_minus_one_power_positive", lambda: claim((-1)**n_even + n_even, n_even, ">")),
    # ^ n = 1: -1 + 1 > 1 is false
    ("declare-zero_by_two_false_signs", lambda: claim(
        sp.Symbol("z", real=True, positive=False, negative=False) + x, x, "=")),
    # ^ read as a real: z = 1. (SymPy infers zero; the kernel's z3 facts make z = 0)
    ("declare-rational_false", lambda: claim(sp.Symbol("q", real=True, rational=False)**2, 2, "!=")),
    # ^ read as a real: q = sqrt 2 ... (an irrational declaration the kernel does not know)
    # -- sums with symbolic, reversed and dependent limits --------------------------------------------
    ("sums-count_over_a_symbolic_possibly_reversed_range", lambda: claim(S(1, (j, n, m)), m - n + 1, "=",
                                                                        by=(rules.sum_of_a_constant,))),
    # ^ n = 3, m = 0: the empty sum is 0, not -2
    ("sums-karr_value_of_a_reversed_numeric_range", lambda: claim(as_written(lambda: S(j, (j, 3, 1))), -2)),
    # ^ textbook: empty, 0 != -2 (SymPy's Karr convention gives -2)
    ("sums-swap_with_a_dependent_inner_range", _sum_over_dependent_range_swapped),  # n = 2: 3 != 4
    ("sums-split_at_a_non_integer_point", _split_at_a_half),  # n = 1
    ("sums-telescoping_through_a_pole", _telescoping_with_a_partial_g),  # j = 2: 1/0
    ("sums-delta_sifted_at_a_real_witness", _delta_sift_non_integer_witness),  # x = 3/2: 0 != 3/2
    ("sums-nested_dependent_upper_limit_counted_as_square", lambda: claim(
        S(S(1, (j, 1, i)), (i, 1, n)), n**2, "=", cond(n >= 0), by=(rules.sum_of_a_constant, rules.sum_linearity))),
    # ^ n = 2: 1 + 2 = 3 != 4
    ("sums-indexed_upper_limit_may_be_negative", lambda: claim(
        S(1, (j, 1, g_int(x))), g_int(x), "=", by=(rules.sum_of_a_constant,))),
    # ^ g(x) = -2: the sum is empty (0) (and its range reversed by more than one)
    ("sums-product_over_a_range_claimed_above_its_top", lambda: claim(
        sp.Product(j, (j, 1, n)), n + 1, ">=", cond(n >= 0), by=(rules.sum_of_signed_terms,))),  # n = 1: 1 >= 2
    # -- powers: 0**0, symbolic and negative exponents ------------------------------------------------
    ("powers-zero_to_a_real_power", lambda: claim(x**y, 1, "=", cond(rel.Eq(x, 0)), cond(rel.Eq(y, 0)))),
    # ^ x = y = 0: 0^0 with a real exponent is undefined in the kernel's reading (and 0^y = 0 for y > 0)
    ("powers-sum_of_exponents_at_a_zero_base", lambda: claim(x**n * x**m, x**(n + m), "=")),
    # ^ x = 0, n = -1, m = 1: the left side is undefined
    ("powers-negative_base_integer_power_claimed_positive", lambda: claim((-2)**n, 0, ">")),  # n = 1
    ("powers-half_power_of_a_square_is_the_base", lambda: claim((x**2)**sp.Rational(3, 2), x**3)),  # x = -1
    ("powers-exp_of_a_half_squared_claimed_below", lambda: claim(sp.exp(x / 2)**2, sp.exp(x), "<")),  # equal
    ("powers-symbolic_integer_exponent_of_zero", lambda: claim(0**nn, 0, "=", by=(rules.exponent_sum_splits,))),
    # ^ n = 0: 0^0 = 1
    # -- Piecewise, Min, Max, Abs ----------------------------------------------------------------------
    ("piecewise-first_branch_at_a_point_of_the_second", lambda: claim(
        sp.Piecewise((0, x > 0), (1, x > -1), (2, True)), 1, "=", cond(x > -1), by=(rules.piecewise_branch,))),
    # ^ x = 1: 0 != 1
    ("piecewise-equality_condition_on_a_real", lambda: claim(
        sp.Piecewise((1, rel.Eq(x, 0)), (1 / x, True)) * x, 1, "=", by=(rules.piecewise_branch,))),  # x = 0: 0
    ("piecewise-condition_on_an_integer_symbol", lambda: claim(
        sp.Piecewise((n, n > 0), (-n, True)), n, "=", cond(n >= -1), by=(rules.piecewise_branch,))),  # n = -1
    ("minmax-abs_over_itself_on_a_closed_half_line", lambda: claim(sp.Abs(x) / x, 1, "=", cond(x >= 0), by=ABS)),
    # ^ x = 0: undefined
    ("minmax-reverse_triangle_inequality_wrong_way", lambda: claim(sp.Abs(x - y), sp.Abs(x) - sp.Abs(y), "<=",
                                                                  by=ABS)),  # x = 0, y = 1: 1 <= -1
    ("minmax-min_with_a_rational_on_a_too_large_interval", lambda: claim(
        sp.Min(x, HALF), x, "=", on(x, 0, 1), by=ABS)),  # x = 3/4
    ("minmax-max_of_three_partially_ordered", lambda: claim(
        sp.Max(x, y, c), x, "=", cond(x >= y), by=ABS)),  # c = 1, x = y = 0
    # -- strict versus non-strict relations -----------------------------------------------------------
    ("strict-am_gm_claimed_strict", lambda: claim(x**2 + y**2, 2 * x * y, ">")),  # x = y
    ("strict-exp_above_its_tangent_strictly", lambda: claim(sp.exp(x), 1 + x, ">")),  # x = 0
    ("strict-log_below_its_tangent_strictly", lambda: claim(sp.log(xp), xp - 1, "<")),  # x = 1
    ("strict-two_weak_links_claimed_strict", lambda: claim(x**2 + 1, 1, ">", steps=(
        Step(x**2 + 1, "same", relation=">="), Step(sp.Integer(1), "square", relation=">=")))),  # x = 0
    # -- assumptions: contradictory only in combination, or about symbols not in the statement ---------
    ("assume-three_way_contradiction", lambda: claim(x, x + 1, "=", cond(y > 0), cond(y < x), cond(x < 0))),
    ("assume-integer_strictly_between_consecutive", lambda: claim(n, n + 1, "=", cond(n > 0), cond(n < 1))),
    # ^ no integer: inconsistent, proves nothing (and n = n + 1 is false everywhere)
    ("assume-about_a_same_named_symbol", lambda: claim(x, 0, ">", cond(xp > 0))),  # the real x = -1
    ("assume-about_a_symbol_not_in_the_statement", lambda: claim(x**2, 1, ">=", cond(y**2 >= 1))),  # x = 0, y = 1
    ("assume-quantified_over_an_empty_range_and_cited", lambda: claim(
        S(r[j], (j, 1, R)), 0, ">", Assumption("r_j > 0", condition=r[j] > 0, for_all=(j, 2, R)),
        by=(rules.sum_of_signed_terms,))),  # R = 1, r_1 = -1
    # -- expectations ----------------------------------------------------------------------------------
    ("expect-two_operators_with_one_name_are_equal", lambda: claim(E_r(r[1]), E_r_other(r[1]), "=")),
    # ^ E_r: r = 1; the other: r = 0
    ("expect-product_of_two_samples_splits_without_independence", lambda: claim(
        E_r(r[1] * r[2]), E_r(r[1]) * E_r(r[2]), "=", by=(rules.expectation_linearity,))),  # r_1 = r_2 = +-1
    ("expect-ratio_of_a_sample_to_itself", lambda: claim(as_written(lambda: E_r(r[1] / r[1])), 1, "=",
                                                         by=(rules.expectation_linearity,))),
    # ^ r_1 = 0 with positive probability: undefined
    ("expect-jensen_claimed_strict", lambda: claim(E_r(r[1]**2), E_r(r[1])**2, ">")),  # r_1 = 1 surely
    ("expect-iid_square_of_a_sum_with_the_diagonal_as_a_square", _iid_product_of_two_rollouts_as_a_square),
    # ^ R = 1, r = +-1: 1 != 0
    # -- matrices ----------------------------------------------------------------------------------------
    ("matrix-rank_of_a_reciprocal_entry", lambda: claim(MatrixRank(sp.ImmutableMatrix([[1 / x]])), 1, "=",
                                                        by=(rules.rank_of_an_explicit_matrix,))),  # x = 0
    ("matrix-rank_two_of_a_symmetric_matrix_on_a_half_line", lambda: claim(
        MatrixRank(sp.ImmutableMatrix([[x, 1], [1, x]])), 2, "=", cond(x > 0),
        by=(rules.rank_of_an_explicit_matrix,))),  # x = 1: rank 1
    ("matrix-scaled_identity_rank_n", lambda: claim(
        MatrixRank(SquareMatrix(n, sp.Lambda((i, j), x * sp.KroneckerDelta(i, j)))), n, "=", cond(n >= 1),
        by=(rules.rank_of_a_triangular_matrix,))),  # x = 0: rank 0
    ("matrix-determinant_claimed_positive", lambda: claim(
        sp.Determinant(sp.ImmutableMatrix([[x, y], [y, x]])), 0, ">", cond(x > 0),
        by=(rules.determinant_of_an_explicit_matrix,))),  # x = y = 1
    # -- derivatives of what is not smooth, at a point the hypotheses leave open ------------------------
    ("calculus-second_derivative_of_x_times_abs_at_zero", lambda: claim(
        sp.Subs(sp.Derivative(x * sp.Abs(x), (x, 2)), x, 0), 0, "=", by=DIFF + ABS)),  # f'' jumps -2 to 2 at 0
    ("calculus-derivative_of_max_of_a_cube_claimed_at_a_tie", lambda: claim(
        sp.Subs(sp.Derivative(sp.Max(x, x**3), x), x, 1), 1, "=", by=DIFF + ABS)),  # tie at 1 with slopes 1, 3
    # -- integers and the integer relaxation ---------------------------------------------------------
    ("integer-function_value_between_claimed_two", lambda: claim(g_int(x), 2, ">=", cond(g_int(x) > HALF))),
    # ^ g = 1
    ("integer-rank_is_not_an_integer_claim", lambda: claim(
        MatrixRank(sp.ImmutableMatrix([[x, y]])), 1, "=", cond(x**2 + y**2 >= 0))),  # x = y = 0: rank 0
    # -- forged objects --------------------------------------------------------------------------------
    ("forge-subclassed_result_with_a_forged_theorem", _subclassed_result_with_a_forged_theorem),  # x = x + 1
    ("forge-report_planted_with_object_setattr", _report_planted_with_object_setattr),  # every x
    ("forge-statement_changed_through_the_dict", _statement_changed_through_the_dict),  # every x
    # -- induction ---------------------------------------------------------------------------------------
    ("induction-upper_bound_by_induction", _induction_with_an_unrelated_hypothesis),  # n = 4
    ("induction-sum_of_j_at_most_n", lambda: claim(
        S(j, (j, 1, nn)), nn, "<=", induction=Induction(nn, 0), by=(rules.sum_split_last,))),  # n = 2: 3 <= 2
    # -- mean value ------------------------------------------------------------------------------------
    ("mvt-cube_about_zero", lambda: claim(x**3, 0, ">=", minimum_at=MinimumAt(x, 0), by=DIFF)),  # x = -1
    ("mvt-abs_about_a_nonzero_point", lambda: claim(
        sp.Abs(x - 1), 0, ">", minimum_at=MinimumAt(x, 1), by=DIFF + ABS)),
    # ^ '>' is refused by the scheme; x = 1: 0 > 0
]

def _params(cases):
    return [pytest.param(build, id=name) for name, build in cases]


@pytest.mark.parametrize("build", _params(FALSE_CASES))
def test_false_statement_is_not_proved(build: Build):
    assert_not_proved(build)


@pytest.mark.parametrize("build", _params(FALSE_CASES))
def test_false_statement_is_not_proved_by_the_kernel_alone(build: Build):
    assert not kernel_alone(build), "the trusted base proves this FALSE statement; only the evaluator refutes it"


# == the trusted base asked directly ================================================================
# Each returns True when the kernel accepted something false (a Theorem of a false link, a model that is
# none, a wrong sign); False when it refused. A crash other than ValueError fails the case.

def _model_hole(*assumptions: Assumption, model: dict, lhs=None, rhs=None) -> bool:
    """has_model accepts ``model`` for ``assumptions``, link proves lhs = rhs under them, and proves() accepts the
    whole: a false statement proved from the kernel's functions alone."""
    lhs = x if lhs is None else lhs
    rhs = x + 1 if rhs is None else rhs
    result = claim(lhs, rhs, "=", *assumptions)
    ctx = kernel.Context(_hypotheses(result))
    candidate = kernel.Model(model, {}, {}, {})
    if not kernel.has_model(ctx, candidate):
        return False
    try:
        theorem = kernel.link(ctx, lhs, "=", rhs)
    except (kernel.Unproved, ValueError):
        return False
    return kernel.proves(result, theorem, candidate)


def _closed_sign_of_a_cancelled_zero() -> bool:
    from grpo_verify.proof import arith

    return arith.closed_sign(HUGE_ZERO) is not None and arith.closed_sign(HUGE_ZERO) != 0  # it is 0


def _entails_from_bounds_of_a_cancelled_zero() -> bool:
    from grpo_verify.proof import arith

    return arith.entails([], rel.Gt(sp.log(1 + HUGE_ZERO) + x**2, 1))  # log(1 + 0) + x^2 > 1: false at x = 0


def _cited_instance_pattern() -> bool:
    # cite(lemma x^2 y^3 = x y^3 under x = 1, at x := y) under y = 1: its pattern must not contain y
    base = lemma(x**2 * y**3, x * y**3, cond(rel.Eq(x, 1)))
    report = base.check()
    if not report.status.passed:
        return False
    ctx = _ctx(cond(rel.Eq(y, 1)))
    try:
        cited = kernel.cite(ctx, report.theorems[0], {x: y})
    except (kernel.Unproved, ValueError):
        return False
    return y in cited.pattern  # the instance y^5 = y^4 holds at y = 1 only, not for every y


def _forged_theorem_is_established() -> bool:
    forged = object.__new__(kernel.Theorem)
    for key, value in (("hyps", frozenset()), ("lhs", x), ("relation", "="), ("rhs", x + 1), ("rules", frozenset())):
        object.__setattr__(forged, key, value)
    return kernel.establishes(forged, frozenset(), x, "=", x + 1)  # x = x + 1: every x


def _copied_theorem(how) -> Callable[[], bool]:
    def run() -> bool:
        genuine = _kernel_link(x + 1, ">", x)
        try:
            clone = how(genuine)
        except (AttributeError, TypeError, pickle.PicklingError):
            return False  # refused: nothing forged
        # a copy is as true as the original; what must not happen is a copy with another statement
        try:
            object.__getattribute__(clone, "rhs")
        except AttributeError:
            return False
        return clone.rhs != genuine.rhs
    return run


def _link_in_a_model_context() -> bool:
    # a step is never proved in a model's context (where expectations are evaluated by the model)
    ctx = kernel.Context((), kernel.Model({}, {}, {}, {}))
    try:
        kernel.link(ctx, x, "=", x + 1)
    except (kernel.Unproved, ValueError):
        return False
    return True


def _chain_across_hypotheses() -> bool:
    first = _kernel_link(x, "<=", x**2 + 1)
    second = _kernel_link(x**2 + 1, "<=", 1, cond(rel.Eq(x, 0)))  # under x = 0
    try:
        kernel.chain(first, second)
    except (kernel.Unproved, ValueError):
        return False
    return True  # x <= 1 for every x: x = 2


def _rule_with_a_forged_argument() -> bool:
    # sum_split_at with a split point given as a Python float: sympified to a Float (no integer)
    theorem = _kernel_link(S(j, (j, 1, 3)), "=", S(j, (j, 1, 1)) + S(j, (j, 2, 3)) + 1,
                           by=(rules.sum_split_at(1.5), rules.sum_with_numeric_limits_is_written_out))
    return theorem is not None  # 6 != 7


def _has_model_with_a_free_value() -> bool:
    # a model value that mentions another symbol is no value
    ctx = _ctx(cond(x > y))
    return kernel.has_model(ctx, kernel.Model({x: y + 1}, {}, {}, {}))  # x = y + 1 is no number


def _has_model_missing_entry_of_a_contradiction() -> bool:
    # two hypotheses on an entry the model leaves out: r_5 > 0 and r_5 < 0 (r real)
    ctx = _ctx(cond(r[5] > 0), cond(r[5] < 0))
    return kernel.has_model(ctx, kernel.Model({}, {}, {}, {}))


def _induction_with_a_step_under_other_hypotheses() -> bool:
    # base P(0): 0 <= 0; step proved under an extra hypothesis n <= -5 (not the step context): refused
    ctx = _ctx()
    base_ctx, step_ctx = kernel.induction_contexts(ctx, nn, 0, nn, "<=", 0)
    base_thm = kernel.link(base_ctx, sp.Integer(0), "<=", sp.Integer(0) + 0 * x)  # noqa: F841 - see below
    try:
        bad_ctx = step_ctx.with_hyps(kernel.hyps_of(cond(nn <= -5)))
        step = kernel.link(bad_ctx, nn + 1, "<=", sp.Integer(0))
        kernel.by_induction(ctx, nn, 0, nn, "<=", 0, base_thm, step)
    except (kernel.Unproved, ValueError):
        return False
    return True  # n <= 0 for every n >= 0: n = 1


KERNEL_CASES: list = [
    ("kmodel-undefined_square_root_hypothesis_at_the_model", lambda: _model_hole(
        cond(rel.Eq(sp.sqrt(x), sp.sqrt(x))), cond(x < 0), model={x: sp.Integer(-1)})),
    # ^ x = -1: sqrt(-1) = sqrt(-1) is not a real statement, yet SymPy builds Eq(I, I) as True; the context
    #   presupposes x >= 0 from it: x >= 0 and x < 0, and x = x + 1 follows
    ("kmodel-undefined_reciprocal_hypothesis_at_the_model", lambda: _model_hole(
        cond(rel.Eq(1 / x, 1 / x)), cond(rel.Eq(x, 0)), model={x: sp.Integer(0)})),  # zoo = zoo at x = 0
    ("kmodel-undefined_logarithm_hypothesis_at_the_model", lambda: _model_hole(
        cond(rel.Eq(sp.log(x), sp.log(x))), cond(x < 0), model={x: sp.Integer(-1)})),  # I pi = I pi at x = -1
    ("kmodel-undefined_logarithm_inequality_at_the_model", lambda: _model_hole(
        cond(rel.Ge(sp.log(x), sp.log(x))), cond(x < 0), model={x: sp.Integer(-1)})),  # has_model raises TypeError
    ("kmodel-value_that_mentions_a_symbol", _has_model_with_a_free_value),
    ("kmodel-contradiction_on_an_entry_the_model_leaves_out", _has_model_missing_entry_of_a_contradiction),
    ("karith-closed_sign_of_a_cancelled_zero", _closed_sign_of_a_cancelled_zero),
    ("karith-entails_from_the_bounds_of_a_cancelled_zero", _entails_from_bounds_of_a_cancelled_zero),
    ("kcite-instance_pattern_keeps_a_symbol_its_hypothesis_pins", _cited_instance_pattern),
    ("kforge-theorem_made_without_the_token", _forged_theorem_is_established),
    ("kforge-theorem_copied", _copied_theorem(copy.copy)),
    ("kforge-theorem_deep_copied", _copied_theorem(copy.deepcopy)),
    ("kforge-theorem_pickled", _copied_theorem(lambda t: pickle.loads(pickle.dumps(t)))),
    ("klink-step_in_a_model_context", _link_in_a_model_context),
    ("klink-chain_across_different_hypotheses", _chain_across_hypotheses),
    ("klink-rule_argument_given_as_a_float", _rule_with_a_forged_argument),
    ("kinduction-step_under_an_extra_hypothesis", _induction_with_a_step_under_other_hypotheses),
]

@pytest.mark.parametrize("run", _params(KERNEL_CASES))
def test_the_kernel_accepts_nothing_false_when_asked_directly(run):
    try:
        accepted = run()
    except ValueError:
        return  # refused
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"the kernel crashed with {type(exc).__name__}: {exc}", pytrace=False)
    assert not accepted, "the trusted base accepted something false"


# == true twins =====================================================================================

TRUE_CASES: list = [
    ("closed-huge_exponential_positive", lambda: claim(sp.exp(1000), 0, ">")),
    ("smooth-derivative_of_a_rank_away_from_its_jump", lambda: claim(
        sp.Subs(deriv_rank(xp), xp, 1), 0, "=", by=DIFF + (rules.rank_of_an_explicit_matrix,))),
    ("pattern-product_rule_without_the_lemma", lambda: claim(
        sp.Derivative(y**2 * sp.exp(y), y), (2 * y + y**2) * sp.exp(y), "=", by=DIFF)),
    ("sums-count_over_a_range_that_is_not_reversed", lambda: claim(
        S(1, (j, n, m)), m - n + 1, "=", cond(m >= n - 1), by=(rules.sum_of_a_constant,))),
    ("minmax-min_with_a_rational_on_its_interval", lambda: claim(sp.Min(x, HALF), x, "=", on(x, 0, HALF), by=ABS)),
    ("strict-chain_of_a_weak_and_a_strict_link", lambda: claim(x**2, -1, ">", steps=(
        Step(sp.Integer(0), "square", relation=">="), Step(sp.Integer(-1), "number", relation=">")))),
    ("expect-linearity_with_a_constant", lambda: claim(E_r(r[1] + 1), E_r(r[1]) + 1, "=",
                                                       by=(rules.expectation_linearity,))),
    ("integer-function_value_above_a_half_is_at_least_one", lambda: claim(g_int(x), 1, ">=", cond(g_int(x) > HALF))),
    ("sums-product_of_positive_factors_is_positive", lambda: claim(
        sp.Product(j + 1, (j, 1, n)), 0, ">", cond(n >= 0), by=(rules.sum_of_signed_terms,))),
]

TRUE_GAPS: dict[str, str] = {  # id -> why the kernel does not prove it (strict: a gap closed shows up)
    "smooth-derivative_of_a_rank_away_from_its_jump":
        "completeness gap: a rank is not differentiated (it jumps), even where it is locally constant",
}


@pytest.mark.parametrize("build", [pytest.param(b, id=name, marks=[pytest.mark.xfail(strict=True, reason=TRUE_GAPS[name])]
                                                if name in TRUE_GAPS else []) for name, b in TRUE_CASES])
def test_true_twin_is_proved(build: Build):
    assert_proved(build)


def test_a_model_with_defined_hypotheses_is_accepted():
    """The twin of the kmodel holes: where the hypotheses are defined at the model, has_model accepts it."""
    ctx = _ctx(cond(rel.Eq(sp.sqrt(x), sp.sqrt(x))), cond(x < 2))
    assert kernel.has_model(ctx, kernel.Model({x: sp.Integer(1)}, {}, {}, {}))
