"""Behaviour of the kernel's sign rules and condition proofs, pinned case by case.

The sum, product and power rules (``kernel.sum_sign``, ``product_sign``, ``power_monotonicity``) are
soundness-critical: each is shown to prove a minimal true statement, with its exact returned text, and to
refuse the false statements its side conditions exclude. Also pinned: the routes and texts of
``prove_condition``, the direction and strictness of ``sympy_route``, the rank rules of
``symbolic_ranks`` and the branch selection of ``resolve_piecewise``. The rules are called directly
(with a ``decide.Context``): through ``kernel.check`` the SymPy and z3 routes would decide most of these
cases before a rule is tried, so a rule's own checks could not be seen.
"""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import decide, kernel
from grpo_verify.proof.matrices import MatrixRank, SquareMatrix

x = sp.Symbol("x", real=True)
y = sp.Symbol("y", real=True)
p = sp.Symbol("p", real=True)
w = sp.Symbol("w", positive=True)
j = sp.Symbol("j", integer=True)
n = sp.Symbol("n", integer=True)
R = sp.Symbol("R", integer=True, positive=True)
n0 = sp.Symbol("n", integer=True, nonnegative=True)
jn = sp.Symbol("j", integer=True, nonnegative=True)
i_ = sp.Symbol("i", integer=True)


def ctx(*hypotheses, **kw) -> decide.Context:
    return decide.Context(hypotheses=list(hypotheses), **kw)


SUM_NONNEG = "a sum of non-negative terms"
SUM_POS = "a sum of positive terms over a non-empty range"
PRODUCT_NONNEG = "a product of non-negative factors"
PRODUCT_POS = "a product of positive factors"


# -- prove_condition -------------------------------------------------------------------------------

def test_a_condition_that_evaluates_to_true_is_immediate_and_to_false_is_refused():
    assert kernel.prove_condition(sp.Eq(x, x), ctx()) == (True, "immediate")
    assert kernel.prove_condition(sp.Lt(1, 0), ctx()) == (False, "")


def test_an_unproved_condition_is_refused_with_an_empty_route():
    assert kernel.prove_condition(x > 0, ctx()) == (False, "")
    assert kernel.prove_condition(x > 0, ctx(y > 0)) == (False, "")


def test_a_condition_among_the_local_hypotheses_is_an_assumption():
    assert kernel.prove_condition(x > 0, ctx(), [x > 0]) == (True, "an assumption")
    assert kernel.prove_condition(x > 0, ctx(x > 0)) == (True, "an assumption")


def test_a_conjunction_needs_every_conjunct_and_names_the_routes_of_the_proved_ones():
    both = sp.And(x > 0, sp.Ge(y**2 - 2 * y + 1, 0))
    assert kernel.prove_condition(both, ctx(x > 0)) == (True, "SymPy, an assumption")
    # y > 0 does not follow: the conjunction is refused though x > 0 is an assumption
    assert kernel.prove_condition(sp.And(x > 0, y > 0), ctx(x > 0)) == (False, "an assumption")
    assert kernel.prove_condition(sp.And(x > 0, y > 0), ctx(), [x > 0, y > 0]) == (True, "an assumption")


def test_a_relation_the_sympy_route_decides_is_proved_by_sympy():
    assert kernel.prove_condition(sp.Ge(x**2 - 2 * x + 1, 0), ctx()) == (True, "SymPy")  # (x - 1)**2
    assert kernel.prove_condition(sp.Le(2 * x - 1 - x**2, 0), ctx()) == (True, "SymPy")  # read as 0 >= lhs
    assert kernel.prove_condition(sp.Eq((x + 1) ** 2, x**2 + 2 * x + 1), ctx()) == (True, "SymPy")


def test_the_sympy_route_reads_the_local_hypotheses():
    # x - 1 > 0 makes x - 1 a positive atom for SymPy; z3 sees exp(x) as an opaque number
    assert kernel.prove_condition(sp.Gt(sp.exp(x) * (x - 1), 0), ctx(), [sp.Gt(x - 1, 0)]) == (True, "SymPy")
    assert kernel.prove_condition(sp.Gt(sp.exp(x) * (x - 1), 0), ctx()) == (False, "")


def test_a_condition_only_z3_decides_is_proved_by_z3():
    assert kernel.prove_condition(sp.Or(x > 0, x < 1), ctx()) == (True, "z3")  # not a relation
    assert kernel.prove_condition(sp.Gt(x - 1, 0), ctx(), [sp.Gt(x, 2)]) == (True, "z3")


# -- sympy_route -----------------------------------------------------------------------------------

def test_the_sympy_route_reads_each_relation_in_its_own_direction_and_strictness():
    route = kernel.sympy_route
    assert route(x + 1, "=", 1 + x, ctx()).verdict is True
    assert route(x + 1, "=", x, ctx()).verdict is None  # not an inequality 1 >= 0
    assert route(x + 1, "!=", x, ctx()).verdict is True
    assert route(x, "!=", x, ctx()).verdict is False
    assert route(x, "!=", x + 1, ctx()).verdict is True
    assert route(x, "<", x + 1, ctx()).verdict is True
    assert route(x + 1, "<", x, ctx()).verdict is None
    assert route(x, "<=", x + 1, ctx()).verdict is True
    assert route(x + 1, "<=", x, ctx()).verdict is None
    assert route(x + 1, ">", x, ctx()).verdict is True
    assert route(x, ">", x + 1, ctx()).verdict is None
    assert route(x, ">=", x, ctx()).verdict is True
    assert route(x, ">", x, ctx()).verdict is None  # 0 > 0 fails
    assert route(x, "<", x, ctx()).verdict is None


# -- the sum rule ----------------------------------------------------------------------------------

def test_a_sum_of_positive_terms_over_a_non_empty_range_is_positive():
    f = sp.Function("f", positive=True)
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, R)), True, ctx()) == SUM_POS
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, R)), False, ctx()) == SUM_NONNEG


def test_a_sum_over_a_possibly_empty_range_is_not_positive():
    f = sp.Function("f", positive=True)
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, n0)), True, ctx()) == ""  # n = 0: the sum is 0
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, n0)), False, ctx()) == SUM_NONNEG


def test_the_sum_rule_reads_the_range_of_the_index_as_hypotheses():
    assert kernel.sum_sign(sp.Sum(j, (j, 1, n)), False, ctx()) == SUM_NONNEG  # j >= 1
    assert kernel.sum_sign(sp.Sum(j, (j, 1, R)), True, ctx()) == SUM_POS  # j >= 1 > 0
    assert kernel.sum_sign(sp.Sum(n - j, (j, 1, n)), False, ctx()) == SUM_NONNEG  # j <= n
    # sum_{j=-3}^{R} j f(j) with f > 0: the terms j = -3, -2, -1 are negative (R = 1: -6 f... < 0)
    f = sp.Function("f", positive=True)
    assert kernel.sum_sign(sp.Sum(j * f(j), (j, -3, R)), True, ctx()) == ""
    assert kernel.sum_sign(sp.Sum(j * f(j), (j, -3, R)), False, ctx()) == ""


def test_a_strict_sum_needs_positive_terms_not_only_non_negative_ones():
    # sum_{j=1}^{R} (j - 1) = 0 at R = 1
    assert kernel.sum_sign(sp.Sum(j - 1, (j, 1, R)), True, ctx()) == ""
    assert kernel.sum_sign(sp.Sum(j - 1, (j, 1, R)), False, ctx()) == SUM_NONNEG


def test_the_sum_rule_sets_aside_hypotheses_about_a_free_symbol_named_like_the_index():
    assert kernel.sum_sign(sp.Sum(j - 2, (j, 1, n)), False, ctx(sp.Ge(j, 3))) == ""  # j = 1 gives -1
    assert kernel.sum_sign(sp.Sum(j, (j, 1, n)), False, ctx(sp.Ge(j, 3))) == SUM_NONNEG


def test_the_sum_rule_moves_a_negative_coefficient_into_the_body():
    f = sp.Function("f", positive=True)
    assert kernel.sum_sign(-sp.Sum(-f(j), (j, 1, R)), True, ctx()) == SUM_POS
    assert kernel.sum_sign(-2 * sp.Sum(-f(j), (j, 1, R)), False, ctx()) == SUM_NONNEG
    assert kernel.sum_sign(-sp.Sum(f(j), (j, 1, R)), False, ctx()) == ""  # -sum f < 0
    # the coefficient is the product of every factor: -w < 0, not w > 0
    assert kernel.sum_sign(-w * sp.Sum(f(j), (j, 1, R)), False, ctx()) == ""
    assert kernel.sum_sign(-w * sp.Sum(-f(j), (j, 1, R)), True, ctx()) == SUM_POS


def test_a_coefficient_of_unknown_sign_is_refused_whichever_the_sign_of_the_body():
    f = sp.Function("f", positive=True)
    assert kernel.sum_sign(x * sp.Sum(f(j), (j, 1, R)), False, ctx()) == ""
    assert kernel.sum_sign(x * sp.Sum(-f(j), (j, 1, R)), False, ctx()) == ""
    # x < 1 does not make x negative: x (sum of -f) > 0 fails at x = 1/2
    assert kernel.sum_sign(x * sp.Sum(-f(j), (j, 1, R)), False, ctx(x < 1)) == ""
    assert kernel.sum_sign(x * sp.Sum(-f(j), (j, 1, R)), True, ctx(x < 0)) == SUM_POS


def test_the_sum_rule_refuses_a_term_without_exactly_one_simple_sum():
    f = sp.Function("f", positive=True)
    k = sp.Symbol("k", integer=True)
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, R)) + 1, False, ctx()) == ""  # the term 1 is no sum
    assert kernel.sum_sign(sp.Sum(f(j) * f(k), (j, 1, R), (k, 1, R)), False, ctx()) == ""  # two limits
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, R)) * sp.Sum(f(k), (k, 1, R)), False, ctx()) == ""


def test_a_sum_of_several_terms_is_decided_term_by_term():
    f = sp.Function("f", positive=True)
    k = sp.Symbol("k", integer=True)
    two = sp.Sum(f(j), (j, 1, n0)) + 3 * sp.Sum(f(k), (k, 1, R))
    assert kernel.sum_sign(two, True, ctx()) == SUM_POS  # the second range is non-empty
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, n0)) - sp.Sum(f(k), (k, 1, R)), False, ctx()) == ""
    # read as written it is no sum of sums; expanded, w (sum f + sum f) is
    assert kernel.sum_sign(w * (sp.Sum(f(j), (j, 1, R)) + sp.Sum(f(k), (k, 1, n0))), True, ctx()) == SUM_POS
    assert kernel.sum_sign(w * (sp.Sum(f(j), (j, 1, R)) + sp.Sum(f(k), (k, 1, n0))), False, ctx()) == SUM_NONNEG
    assert kernel.sum_sign(w * (sp.Sum(f(j), (j, 1, n0)) + sp.Sum(f(k), (k, 1, n0))), True, ctx()) == ""


def test_the_sum_rule_uses_the_product_rule_for_the_body():
    bodies = sp.binomial(R - 1, jn) * p**jn
    inside = ctx(p > 0)
    assert kernel.sum_sign(sp.Sum(bodies, (jn, 0, R - 1)), True, inside) == SUM_POS
    assert kernel.sum_sign(sp.Sum(bodies, (jn, 0, R - 1)), False, inside) == SUM_NONNEG
    # with p >= 0 only, the terms 2 p^j (j >= 1) are 0 at p = 0: not positive
    assert kernel.sum_sign(sp.Sum(2 * p**j, (j, 1, R)), True, ctx(p >= 0)) == ""
    assert kernel.sum_sign(sp.Sum(2 * p**j, (j, 1, R)), False, ctx(p >= 0)) == SUM_NONNEG


def test_the_sum_rule_reads_a_hypothesis_for_every_index_of_a_range_containing_the_sums():
    xs = sp.IndexedBase("x", real=True)
    q = sp.Dummy("q", integer=True)
    every = ctx(quantified=[(q, 1, R, xs[q] > 0)])
    assert kernel.sum_sign(sp.Sum(xs[j], (j, 1, R)), True, every) == SUM_POS
    assert kernel.sum_sign(sp.Sum(xs[j], (j, 2, R)), False, every) == SUM_NONNEG
    # x_0 is not covered: the hypothesis is for 1..R only
    assert kernel.sum_sign(sp.Sum(xs[j], (j, 0, R)), False, every) == ""


# -- the product rule ------------------------------------------------------------------------------

def _within(index, lo, hi):
    return (sp.Ge(index, lo), sp.Le(index, hi))


def test_a_product_of_non_negative_factors_is_non_negative_and_of_positive_ones_positive():
    assert kernel.product_sign(2 * x, False, ctx(x >= 0)) == PRODUCT_NONNEG
    assert kernel.product_sign(2 * x, True, ctx(x > 0)) == PRODUCT_POS
    assert kernel.product_sign(x * y, True, ctx(x > 0, y > 0)) == PRODUCT_POS
    # positive factors below 1 are positive all the same
    assert kernel.product_sign(x * y, True, ctx(x > 0, y > 0, x < 1, y < 1)) == PRODUCT_POS
    assert kernel.product_sign(x * y, False, ctx(x >= 0, y >= 0, x < 1, y < 1)) == PRODUCT_NONNEG


def test_a_product_with_a_factor_of_unknown_sign_is_refused():
    assert kernel.product_sign(2 * x, False, ctx()) == ""
    assert kernel.product_sign(2 * x, True, ctx(x >= 0)) == ""  # x = 0: not positive
    assert kernel.product_sign(x * y, False, ctx(x >= 0)) == ""


def test_a_single_factor_is_no_product():
    assert kernel.product_sign(x, False, ctx(x >= 0)) == ""
    assert kernel.product_sign(x + 1, True, ctx(x >= 0)) == ""


def test_a_binomial_coefficient_is_positive_only_inside_its_range():
    inside = ctx(p > 0, sp.Ge(R, 2))
    weight = sp.binomial(R - 1, jn) * p**jn
    assert kernel.product_sign(weight, True, inside, _within(jn, 0, R - 1)) == PRODUCT_POS
    assert kernel.product_sign(weight, True, inside, _within(jn, 0, R)) == ""  # binomial(R - 1, R) = 0
    # a real lower entry: binomial(R - 1, 1/2) is no count of subsets
    assert kernel.product_sign(sp.binomial(R - 1, x) * p**jn, True, inside, _within(x, 0, R - 1)) == ""
    k = sp.Symbol("k", integer=True)
    assert kernel.product_sign(sp.binomial(R - 1, k) * p**jn, True, inside, _within(k, 0, R - 1)) == PRODUCT_POS
    # binomial(R - 1, -1) = 0: the lower entry must be >= 0
    assert kernel.product_sign(sp.binomial(R - 1, k) * p**jn, True, inside, _within(k, -1, R - 1)) == ""
    # a real upper entry
    assert kernel.product_sign(sp.binomial(x, k) * p**jn, True, inside, (sp.Ge(k, 0), sp.Le(k, 0), x >= 3)) == ""
    assert kernel.product_sign(sp.binomial(n, k) * p**jn, True, inside, (sp.Ge(k, 0), sp.Le(k, n))) == PRODUCT_POS


def test_a_binomial_coefficient_does_not_vouch_for_the_other_factors():
    g = sp.Function("g", real=True)
    weight = sp.binomial(R, jn) * g(x)  # the binomial comes first among the factors
    assert kernel.product_sign(weight, False, ctx(), _within(jn, 0, R)) == ""
    assert kernel.product_sign(weight, False, ctx(g(x) >= 0), _within(jn, 0, R)) == PRODUCT_NONNEG
    k = sp.Symbol("k", integer=True)  # of unknown sign: binomial(R - 1, k) > 0 needs the binomial rule
    counted = sp.binomial(R - 1, k) * g(x)
    assert kernel.product_sign(counted, True, ctx(), _within(k, 0, R - 1)) == ""
    assert kernel.product_sign(counted, True, ctx(g(x) > 0), _within(k, 0, R - 1)) == PRODUCT_POS


def test_a_power_with_a_symbolic_exponent_needs_a_positive_base():
    inside = ctx(p > 0, p < 1)
    local = _within(jn, 0, R)
    assert kernel.product_sign(2 * p**jn * (1 - p) ** (R - jn), True, inside, local) == PRODUCT_POS
    assert kernel.product_sign(2 * (p - sp.Rational(1, 2)) ** jn, True, inside, local) == ""  # the base may be < 0
    assert kernel.product_sign(2 * (p - sp.Rational(1, 2)) ** jn, False, inside, local) == ""
    closed = ctx(p >= 0, p <= 1)
    assert kernel.product_sign(2 * p**jn, True, closed, local) == ""  # 0**j = 0 for j >= 1
    assert kernel.product_sign(2 * p**jn, False, closed, local) == PRODUCT_NONNEG
    assert kernel.product_sign(2 * p ** (jn - 1), False, closed, local) == ""  # 0**(-1) is not a number
    assert kernel.product_sign(2 * p**x, False, closed, local) == ""  # a real exponent: 0**x undefined for x < 0
    assert kernel.product_sign(2 * p**x, True, inside, local) == PRODUCT_POS  # p > 0: p**x > 0 for real x
    assert kernel.product_sign(-2 * p**jn, False, inside, local) == ""  # a negative factor


def test_a_power_does_not_vouch_for_the_other_factors():
    g = sp.Function("g", real=True)
    assert kernel.product_sign(p**jn * g(x), True, ctx(p > 0)) == ""  # the power comes first
    assert kernel.product_sign(p**jn * g(x), False, ctx(p >= 0)) == ""
    assert kernel.product_sign(p**jn * g(x), False, ctx(p >= 0, g(x) >= 0)) == PRODUCT_NONNEG


def test_a_power_with_a_complex_exponent_is_refused():
    z = sp.Symbol("z")  # complex: p**z need not be real
    assert kernel.product_sign(2 * p**z, True, ctx(p > 0)) == ""


# -- the power rule --------------------------------------------------------------------------------

def _power_text(strict: bool, exponent: str, a: str, b: str) -> str:
    if strict:
        return f"x -> x^n increases on [0, oo) for the integer n = {exponent} >= 1: {a} > {b} >= 0"
    return f"x -> x^n does not decrease on [0, oo) for the integer n = {exponent} >= 0: {a} >= {b} >= 0"


def test_powers_are_monotone_with_the_side_conditions_stated():
    at0 = ctx(x >= 0)
    assert kernel.power_monotonicity((x + 1) ** n0 - x**n0, False, at0) == _power_text(False, "n", "x + 1", "x")
    assert kernel.power_monotonicity((x + 1) ** R - x**R, True, at0) == _power_text(True, "R", "x + 1", "x")


def test_the_power_rule_reads_a_negative_leading_term_by_swapping_the_bases():
    at0 = ctx(x >= 0)
    # the terms come as -2 x^n, 2 (x + 1)^n
    assert kernel.power_monotonicity(2 * (x + 1) ** n0 - 2 * x**n0, False, at0) == \
        _power_text(False, "n", "x + 1", "x")
    assert kernel.power_monotonicity(2 * (x + 1) ** R - 2 * x**R, True, at0) == _power_text(True, "R", "x + 1", "x")
    assert kernel.power_monotonicity(x**n0 - (x + 1) ** n0, False, at0) == ""  # the wrong order
    # the terms come as -2/3 x^n, 2/3 (x + 1)^n: a coefficient below 1 is positive all the same
    third = sp.Rational(2, 3) * ((x + 1) ** n0 - x**n0)
    assert kernel.power_monotonicity(third, False, at0) == _power_text(False, "n", "x + 1", "x")


def test_the_power_rule_distributes_a_common_coefficient():
    at0 = ctx(x >= 0)
    assert kernel.power_monotonicity(3 * ((x + 1) ** n0 - x**n0), False, at0) == _power_text(False, "n", "x + 1", "x")
    # a squared coefficient is not multiplied out into several terms
    assert kernel.power_monotonicity((w + 1) ** 2 * ((w + 2) ** n0 - w**n0), False, ctx()) == \
        _power_text(False, "n", "w + 2", "w")
    # a power of a product is not split: (2x)^n - x^n, 2x >= x >= 0
    assert kernel.power_monotonicity((2 * x) ** n0 - x**n0, False, at0) == _power_text(False, "n", "2*x", "x")
    # an exponent n + 1 is not split either
    assert kernel.power_monotonicity((x + 1) ** (n0 + 1) - x ** (n0 + 1), True, at0) == \
        _power_text(True, "n + 1", "x + 1", "x")


def test_the_power_rule_needs_a_positive_coefficient():
    assert kernel.power_monotonicity(y * ((x + 1) ** n0 - x**n0), False, ctx(x >= 0)) == ""  # y may be < 0
    assert kernel.power_monotonicity(y * ((x + 1) ** n0 - x**n0), False, ctx(x >= 0, y > 0)) == \
        _power_text(False, "n", "x + 1", "x")


def test_the_power_rule_needs_equal_coefficients_and_equal_exponents():
    at0 = ctx(x >= 0)
    # (x + 1)^n - 2 x^n: at x = 10, n = 1 it is -9
    assert kernel.power_monotonicity((x + 1) ** n0 - 2 * x**n0, False, at0) == ""
    m0 = sp.Symbol("m", integer=True, nonnegative=True)
    # (x + 1)^n - x^m: at x = 2, n = 0, m = 5 it is -31
    assert kernel.power_monotonicity((x + 1) ** n0 - x**m0, False, at0) == ""


def test_the_power_rule_needs_an_integer_exponent_and_exactly_two_power_terms():
    at0 = ctx(x >= 0)
    assert kernel.power_monotonicity((x + 1) ** y - x**y, False, ctx(x >= 0, y >= 0)) == ""  # y real
    assert kernel.power_monotonicity((x + 1) ** n0 - x**n0 - 1, False, at0) == ""  # three terms
    assert kernel.power_monotonicity((x + 1) ** n0 - 1, False, at0) == ""  # 1 is no power
    assert kernel.power_monotonicity((x + 1) ** n0 * (x + 2) ** n0 - x**n0, False, at0) == ""  # two powers
    assert kernel.power_monotonicity((x + 1) ** 2 - x**2, False, at0) == ""  # a numeric exponent


def test_the_power_rule_refuses_what_its_side_conditions_exclude():
    assert kernel.power_monotonicity((x + 1) ** n0 - (-x - 5) ** n0, False, ctx(x >= 0)) == ""  # b < 0
    assert kernel.power_monotonicity(x**n0 - (x + 1) ** n0, False, ctx()) == ""  # a < b
    assert kernel.power_monotonicity((x + 1) ** n0 - x**n0, True, ctx(x >= 0)) == ""  # n = 0: a^0 = b^0
    assert kernel.power_monotonicity((x + 1) ** n - x**n, False, ctx(x >= 0)) == ""  # n may be < 0
    # y >= x only: y^n - x^n > 0 fails at y = x
    assert kernel.power_monotonicity(y**R - x**R, True, ctx(x >= 0, y >= x)) == ""
    assert kernel.power_monotonicity(y**R - x**R, False, ctx(x >= 0, y >= x)) == _power_text(False, "R", "y", "x")
    assert kernel.power_monotonicity(y**R - x**R, True, ctx(x >= 0, y > x)) == _power_text(True, "R", "y", "x")


def test_the_power_rule_takes_a_base_of_zero_and_an_exponent_of_one():
    one = sp.Symbol("m", integer=True, positive=True)  # m >= 1, not >= 2
    assert kernel.power_monotonicity((x + 1) ** one - x**one, True, ctx(x >= 0, x <= 0)) == \
        _power_text(True, "m", "x + 1", "x")


# -- the rank rules --------------------------------------------------------------------------------

def _square(entry) -> SquareMatrix:
    i, k = sp.symbols("i j", integer=True)
    return SquareMatrix(R, sp.Lambda((i, k), entry(i, k)))


def test_the_rank_of_an_idempotent_matrix_of_symbolic_size_is_its_trace():
    centring = _square(lambda i, k: sp.KroneckerDelta(i, k) - 1 / R)
    value, how = kernel.symbolic_ranks(MatrixRank(centring) + 1, ctx(), {})
    assert sp.simplify(value - R) == 0  # (R - 1) + 1
    assert how == "rank = trace of the idempotent SquareMatrix(R, Lambda((i, j), KroneckerDelta(i, j) - 1/R))"


def test_the_idempotent_rule_discharges_the_definedness_of_its_entries():
    i, k = sp.symbols("i j", integer=True)
    centring = SquareMatrix(n, sp.Lambda((i, k), sp.KroneckerDelta(i, k) - 1 / n))  # 1/n needs n != 0
    value, how = kernel.symbolic_ranks(MatrixRank(centring), ctx(n >= 1), {})
    assert sp.simplify(value - (n - 1)) == 0
    assert how == "rank = trace of the idempotent SquareMatrix(n, Lambda((i, j), KroneckerDelta(i, j) - 1/n))"


def test_the_rank_rules_name_every_matrix_they_rewrote():
    centring = _square(lambda i, k: sp.KroneckerDelta(i, k) - 1 / R)
    identity = _square(lambda i, k: sp.KroneckerDelta(i, k))
    value, how = kernel.symbolic_ranks(MatrixRank(centring) + MatrixRank(identity), ctx(), {})
    assert sp.simplify(value - (2 * R - 1)) == 0
    assert sorted(how.split("; ")) == sorted(f"rank = trace of the idempotent {sp.sstr(m)}" for m in (centring, identity))


def test_a_rank_no_rule_decides_is_left_as_it_is():
    ones = MatrixRank(_square(lambda i, k: sp.Integer(1)))  # rank 1, nonzero diagonal, not triangular
    assert kernel.symbolic_ranks(ones + 1, ctx(), {}) == (ones + 1, "")
    doubled = MatrixRank(_square(lambda i, k: 2 * sp.KroneckerDelta(i, k)))  # rank R, trace 2 R
    assert kernel.symbolic_ranks(doubled, ctx(), {}) == (doubled, "")


def test_only_ranks_of_symbolic_size_are_rewritten():
    i, k = sp.symbols("i j", integer=True)
    fixed = MatrixRank(SquareMatrix(3, sp.Lambda((i, k), sp.KroneckerDelta(i, k))))
    assert kernel.symbolic_ranks(fixed + 1, ctx(), {}) == (fixed + 1, "")
    explicit = MatrixRank(sp.ImmutableMatrix([[x, 0], [0, 1]]))
    assert kernel.symbolic_ranks(explicit, ctx(), {}) == (explicit, "")
    assert kernel.symbolic_ranks(3, ctx(), {}) == (3, "")  # not a SymPy expression


def test_a_matrix_of_ranks_is_left_as_it_is():
    centring = MatrixRank(_square(lambda i, k: sp.KroneckerDelta(i, k) - 1 / R))
    matrix = sp.ImmutableMatrix([[centring]])
    assert kernel.symbolic_ranks(matrix, ctx(), {}) == (matrix, "")


def test_each_matrix_gets_its_own_rank_decision():
    centring = _square(lambda i, k: sp.KroneckerDelta(i, k) - 1 / R)
    ones = MatrixRank(_square(lambda i, k: sp.Integer(1)))
    value, how = kernel.symbolic_ranks(MatrixRank(centring) + ones, ctx(), {})
    assert value.has(ones) and sp.simplify(value - ones - (R - 1)) == 0
    assert how == f"rank = trace of the idempotent {sp.sstr(centring)}"


def test_a_symbolic_rank_is_rewritten_beside_ranks_of_fixed_size():
    # atoms come as a set: over several fixed ranks, one of them is met before the symbolic one
    centring = _square(lambda i, k: sp.KroneckerDelta(i, k) - 1 / R)
    cache: dict = {}
    for number in range(8):
        fixed = MatrixRank(sp.ImmutableMatrix([[sp.Symbol(f"u{number}", real=True)]]))
        value, how = kernel.symbolic_ranks(MatrixRank(centring) + fixed, ctx(), cache)
        assert not value.has(MatrixRank(centring)), number  # the fixed one is evaluated, the symbolic one replaced
        assert how == f"rank = trace of the idempotent {sp.sstr(centring)}"


def test_a_rank_decision_is_kept_in_the_cache_by_its_matrix():
    # the cache is shared with the definedness obligations of decide_link; a decision made once is reused
    ones = _square(lambda i, k: sp.Integer(1))
    cache = {("symbolic rank", ones): (sp.Integer(1), "a recorded rule")}
    assert kernel.symbolic_ranks(MatrixRank(ones) + 1, ctx(), cache) == (2, "a recorded rule " + sp.sstr(ones))
    undecided = {("symbolic rank", ones): None}
    assert kernel.symbolic_ranks(MatrixRank(ones), ctx(), undecided) == (MatrixRank(ones), "")


def test_a_lower_triangular_matrix_with_a_nonzero_diagonal_has_full_rank():
    lower = _square(lambda i, k: sp.Max(0, i - k + 1) ** 2)  # 0 above the diagonal, 1 on it
    value, how = kernel.symbolic_ranks(MatrixRank(lower), ctx(), {})
    assert value == R
    assert how == f"rank = size of the triangular matrix with a nonzero diagonal {sp.sstr(lower)}"


def test_an_upper_triangular_matrix_with_a_nonzero_diagonal_has_full_rank():
    upper = _square(lambda i, k: sp.Max(0, k - i + 1) ** 2)
    value, how = kernel.symbolic_ranks(MatrixRank(upper), ctx(), {})
    assert value == R
    assert how == f"rank = size of the triangular matrix with a nonzero diagonal {sp.sstr(upper)}"


def test_a_strictly_triangular_matrix_is_not_of_full_rank():
    strictly = MatrixRank(_square(lambda i, k: sp.Max(0, i - k) ** 2))  # zero diagonal: rank R - 1
    assert kernel.symbolic_ranks(strictly, ctx(), {}) == (strictly, "")



def test_a_lower_triangular_matrix_whose_first_row_vanishes_is_not_of_full_rank():
    # diagonal i - 1 is 0 at i = 1 (row 1 is zero: rank R - 1); a check of the diagonal that skipped
    # i = 1 would call it full rank
    first_row_zero = MatrixRank(_square(lambda i, k: sp.Piecewise((i - 1, k <= i), (0, True))))
    assert kernel.symbolic_ranks(first_row_zero, ctx(), {}) == (first_row_zero, "")
    full = _square(lambda i, k: sp.Piecewise((i, k <= i), (0, True)))  # diagonal i != 0: rank R
    value, how = kernel.symbolic_ranks(MatrixRank(full), ctx(), {})
    assert value == R
    assert how == f"rank = size of the triangular matrix with a nonzero diagonal {sp.sstr(full)}"


def test_an_upper_triangular_matrix_with_a_nonzero_first_column_is_not_of_full_rank():
    # ones on and above the diagonal and in column 1: rows 1 and 2 are both all ones (rank < R);
    # a check below the diagonal that skipped column 1 would call it triangular
    first_column = MatrixRank(_square(lambda i, k: sp.Piecewise((1, i <= k), (1, sp.Eq(k, 1)), (0, True))))
    assert kernel.symbolic_ranks(first_column, ctx(), {}) == (first_column, "")

# -- resolve_piecewise -----------------------------------------------------------------------------

def test_a_piecewise_takes_the_first_branch_whose_condition_is_proved():
    step = sp.Piecewise((0, x > 0), (1, True))
    assert kernel.resolve_piecewise(step, ctx(x > 0)) == 0
    assert kernel.resolve_piecewise(step, ctx(x < 0)) == 1  # the first condition is refuted
    assert kernel.resolve_piecewise(step + y, ctx(x > 0)) == y
    three = sp.Piecewise((0, x > 1), (2, x > 0), (1, True))
    assert kernel.resolve_piecewise(three, ctx(x > 0, x < 1)) == 2


def test_an_undecided_piecewise_is_left_as_it_is():
    step = sp.Piecewise((0, x > 0), (1, True))
    assert kernel.resolve_piecewise(step, ctx()) == step
    three = sp.Piecewise((0, x > 1), (2, x > 0), (1, True))
    assert kernel.resolve_piecewise(three, ctx(x > 0)) == three  # x > 1 undecided: the rest is not read


def test_a_piecewise_condition_proved_only_in_part_decides_nothing():
    both = sp.Piecewise((0, sp.And(x > 0, y > 0)), (1, True))
    assert kernel.resolve_piecewise(both, ctx(x > 0)) == both
    either = sp.Piecewise((0, sp.Not(sp.And(x > 0, y > 0))), (1, True))  # its negation is x > 0 and y > 0
    assert kernel.resolve_piecewise(either, ctx(x > 0)) == either
    assert kernel.resolve_piecewise(either, ctx(x > 0, y > 0)) == 1


def test_a_piecewise_inside_a_lambda_is_set_aside():
    pw = sp.Piecewise((1, i_ > 0), (0, True))
    assert kernel.resolve_piecewise(sp.Lambda(i_, pw), ctx(i_ > 0)) == sp.Lambda(i_, pw)
    k = sp.Symbol("j", integer=True)
    rank = MatrixRank(SquareMatrix(R, sp.Lambda((i_, k), pw)))
    outside = sp.Piecewise((1, x > 0), (0, True))
    assert kernel.resolve_piecewise(rank + outside, ctx(x > 0, i_ > 0)) == rank + 1


def test_an_expression_without_a_piecewise_is_returned_as_it_is():
    assert kernel.resolve_piecewise(x + 1, ctx(x > 0)) == x + 1
    assert kernel.resolve_piecewise(5, ctx()) == 5
