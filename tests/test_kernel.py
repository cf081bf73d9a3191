"""The proof kernel's own rules: each is shown to accept a correct use and to reject a misuse.

The adversarial catalogue of false statements is ``test_soundness.py``; this file pins the
mechanisms: definedness obligations, the kink rules for derivatives, citations and their
hypotheses, equation assumptions, scopes, consistency, the two routes and their agreement.
"""

from __future__ import annotations

import pytest
import sympy as sp

from grpo_verify.proof import Assumption, ForEach, KernelError, Result, Status, Step, kernel, smt

x = sp.Symbol("x", real=True)
y = sp.Symbol("y", real=True)
w = sp.Symbol("w", positive=True)
n = sp.Symbol("n", integer=True)
R = sp.Symbol("R", integer=True, positive=True)
j = sp.Symbol("j", integer=True)


def result(**kw) -> Result:
    kw.setdefault("name", "t")
    kw.setdefault("doc", "a test statement")
    return Result(**kw)


def status(**kw) -> Status:
    return result(**kw).check().status


# -- construction --------------------------------------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda: result(lhs=x * sp.Float("1.5"), rhs=x),
    lambda: result(lhs=sp.Symbol("z"), rhs=sp.Integer(0)),
    lambda: result(lhs=x, rhs=sp.Integer(0), using=((x, 0),)),
    lambda: Step(x, "s", using=((x, 0),)),
    lambda: Assumption("a float", condition=x > 0.5),
    lambda: result(lhs=sp.Function("f")(x), rhs=sp.Integer(0)),
    lambda: result(lhs=x, rhs=0.5),
], ids=["float", "complex symbol", "rewrite pair", "rewrite pair in a step", "float in an assumption",
        "complex function", "python float"])
def test_construction_refuses_inexact_or_unchecked_input(build):
    with pytest.raises(KernelError):
        build()


# -- definedness ---------------------------------------------------------------------------------

def test_division_needs_a_nonzero_denominator_from_the_assumptions():
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    assert status(lhs=quotient, rhs=sp.Integer(1)) is Status.UNPROVED
    assert status(lhs=quotient, rhs=sp.Integer(1), assumptions=(Assumption("x != 0", sp.Ne(x, 0)),)) \
        is Status.PROVED


def test_a_sum_needs_its_upper_limit_at_least_the_lower_minus_one():
    claim = dict(lhs=sp.Sum(1, (j, 1, n)), rhs=n)
    assert status(**claim) is Status.UNPROVED  # Karr's convention would make it "true" for n < 0
    assert status(**claim, assumptions=(Assumption("n >= 0", n >= 0),)) is Status.PROVED


def test_a_log_needs_a_positive_argument():
    claim = dict(lhs=sp.exp(sp.log(x), evaluate=False), rhs=x)
    assert status(**claim) is Status.UNPROVED
    assert status(**claim, assumptions=(Assumption("x > 0", x > 0),)) is Status.PROVED


def test_a_statement_decided_while_it_was_built_is_vacuous():
    report = result(lhs=x / x, rhs=sp.Integer(1)).check()  # SymPy made x/x into 1 at construction
    assert report.status is Status.UNPROVED and "vacuous" in report.steps[0].detail


def test_a_piecewise_takes_a_branch_only_when_every_earlier_condition_is_refuted():
    step = sp.Piecewise((0, x > 0), (1, True))
    assert status(lhs=step, rhs=sp.Integer(1)) is not Status.PROVED  # x = 1 gives 0
    assert status(lhs=step, rhs=sp.Integer(1), assumptions=(Assumption("x < 0", x < 0),)) is Status.PROVED


# -- kinks ---------------------------------------------------------------------------------------

def test_derivative_of_min_at_a_tie_with_unequal_slopes_is_refused():
    # d/dx min(2x, x) at 0 does not exist; SymPy's Heaviside(0) = 1/2 would give 3/2
    assert status(lhs=sp.Subs(sp.Derivative(sp.Min(2 * x, x), x), x, 0), rhs=sp.Rational(3, 2)) \
        is Status.UNPROVED


def test_derivative_of_min_at_a_tie_with_equal_slopes_is_accepted():
    # min(x, x + x**2) near 0: both branches have slope 1 at 0, so the derivative there is 1
    assert status(lhs=sp.Subs(sp.Derivative(sp.Min(x, x + x**2), x), x, 0), rhs=sp.Integer(1)) \
        is Status.PROVED


def test_derivative_of_abs_at_its_kink_needs_a_zero_slope():
    assert status(lhs=sp.Subs(sp.Derivative(sp.Abs(x), x), x, 0), rhs=sp.Integer(0)) is Status.UNPROVED
    assert status(lhs=sp.Subs(sp.Derivative(sp.Abs(x**2), x), x, 0), rhs=sp.Integer(0)) is Status.PROVED


def test_derivative_of_a_kinked_function_everywhere_is_refused_without_a_smoothing_equation():
    assert status(lhs=sp.Derivative(sp.Max(x, 0), x), rhs=sp.Heaviside(x)) is Status.UNPROVED


def _derivative_of_max_via_lemma(condition: sp.Basic) -> Status:
    """d/dx max(x, -x) = 1 where ``condition`` holds, by the lemma max(x, -x) = x there."""
    where = Assumption("where x is", condition)
    lemma = result(name="max_is_identity", lhs=sp.Max(x, -x, evaluate=False), rhs=x, assumptions=(where,))
    assert lemma.check().status is Status.PROVED, lemma.check().summary()
    claim = result(lhs=sp.Derivative(sp.Max(x, -x, evaluate=False), x), rhs=sp.Integer(1), assumptions=(where,),
                   steps=(Step(sp.Derivative(x, x), "max_is_identity", using=(lemma,)),))
    return claim.check().status


def test_a_smoothing_equation_on_an_open_set_makes_the_derivative_legal():
    assert _derivative_of_max_via_lemma(x > 0) is Status.PROVED


def test_a_smoothing_equation_on_a_closed_set_does_not():
    # on x >= 0 the function is max(x, -x) = |x|, not differentiable at 0
    assert _derivative_of_max_via_lemma(x >= 0) is Status.UNPROVED


# -- citations and equation assumptions ------------------------------------------------------------

def test_a_cited_result_must_have_its_hypotheses_here():
    lemma = result(name="sqrt_of_square", lhs=sp.sqrt(y**2), rhs=y, assumptions=(Assumption("y > 0", y > 0),))
    assert lemma.check().status is Status.PROVED
    unsupported = result(lhs=sp.sqrt(y**2) + 1, rhs=y + 1, steps=(Step(y + 1, "lemma", using=(lemma,)),))
    assert unsupported.check().status is Status.UNPROVED
    assert "hypothesis" in unsupported.check().steps[0].detail
    supported = result(lhs=sp.sqrt(y**2) + 1, rhs=y + 1, assumptions=(Assumption("y > 1", y > 1),),
                       steps=(Step(y + 1, "lemma", using=(lemma,)),))
    assert supported.check().status is Status.PROVED


def test_an_equation_assumption_rewrites_only_where_it_is_stated():
    zero = Assumption("x = 0", equation=(x, sp.Integer(0)))
    stated = result(lhs=x + 1, rhs=sp.Integer(1), assumptions=(zero,), steps=(Step(sp.Integer(1), "x = 0",
                                                                                     using=(zero,)),))
    assert stated.check().status is Status.PROVED
    unstated = result(lhs=x + 1, rhs=sp.Integer(1), steps=(Step(sp.Integer(1), "x = 0", using=(zero,)),))
    assert unstated.check().status is not Status.PROVED
    # the lemma proved with x = 0 cannot be reused where x = 0 is not assumed
    reuse = result(lhs=x + 2, rhs=sp.Integer(2), steps=(Step(sp.Integer(1) + 1, "lemma", using=(stated,)),))
    assert reuse.check().status is not Status.PROVED


def test_a_range_checked_lemma_gives_its_range_to_the_citing_result():
    eq_lemma = result(name="sum_of_ones", lhs=sp.Sum(1, (j, 1, R)), rhs=R, for_each=ForEach.range(R, 1, 4))
    assert eq_lemma.check().status is Status.PROVED_FOR_RANGE
    citing = result(lhs=sp.Sum(1, (j, 1, R)) + 1, rhs=R + 1, steps=(Step(R + 1, "sum_of_ones", using=(eq_lemma,)),))
    report = citing.check()
    assert report.status is Status.PROVED_FOR_RANGE and "1..4" in report.scope, report.summary()


def test_a_for_each_whose_assumptions_exclude_every_value_checks_nothing():
    report = result(lhs=R, rhs=sp.Integer(100), relation=">", assumptions=(Assumption("R > 50", R > 50),),
                    for_each=ForEach.range(R, 2, 6)).check()
    assert report.status is Status.UNPROVED and "nothing was checked" in report.steps[0].detail


def test_a_for_each_with_one_failing_value_is_not_proved():
    report = result(lhs=2**R, rhs=R**2, relation=">=", for_each=ForEach.range(R, 1, 6)).check()
    assert report.status is Status.REFUTED  # 2**3 = 8 < 9


# -- consistency and the two routes ----------------------------------------------------------------

def test_contradictory_assumptions_are_refused():
    report = result(lhs=x, rhs=x + 1, relation=">",
                    assumptions=(Assumption("x > 1", x > 1), Assumption("x < 0", x < 0))).check()
    assert report.status is Status.UNPROVED and "contradictory" in report.steps[0].detail


def test_z3_proves_what_needs_the_conditions():
    # SymPy's assumptions cannot use k < R; z3 can
    k = sp.Symbol("k", integer=True, positive=True)
    report = result(lhs=R - k, rhs=sp.Integer(1), relation=">=", assumptions=(Assumption("k < R", k < R),)).check()
    assert report.status is Status.PROVED and report.steps[0].route == "z3", report.summary()


def test_a_disagreement_between_the_routes_is_reported_and_fails(monkeypatch):
    real_entails = smt.entails

    def lying(hypotheses, goal, timeout_ms=5000):
        outcome = real_entails(hypotheses, goal, timeout_ms)
        if outcome.verdict is smt.Verdict.HOLDS and isinstance(goal, sp.Equality):
            return smt.SmtOutcome(smt.Verdict.FAILS, "planted wrong answer", {}, True)
        return outcome

    monkeypatch.setattr(smt, "entails", lying)
    report = result(lhs=(x + 1) ** 2, rhs=x**2 + 2 * x + 1).check()
    assert report.status is Status.UNPROVED and report.disagreements, report.summary()


def test_an_exception_inside_the_kernel_is_a_status(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("planted crash")

    monkeypatch.setattr(kernel, "decide_link", broken)
    report = result(lhs=x + 1, rhs=1 + x, steps=(Step(1 + x, "commutativity"),)).check()
    assert report.status is Status.UNPROVED and "planted crash" in report.steps[0].detail


def test_symbol_domains_are_listed_as_hypotheses():
    p = sp.Symbol("p", positive=True)
    r = result(lhs=p, rhs=sp.Integer(0), relation=">",
               assumptions=(Assumption("p in [0, 1]", domain=(p, sp.Interval(0, 1))),))
    assert r.check().status is Status.PROVED
    assert (p, "real > 0") in kernel.symbol_domains(r)  # the rendering shows the hidden "p > 0"


# -- the sum rule ----------------------------------------------------------------------------------

def test_a_sum_of_non_negative_terms_is_non_negative():
    xs = sp.IndexedBase("x", real=True)
    n0 = sp.Symbol("n", integer=True, nonnegative=True)
    report = result(lhs=sp.Sum(xs[j] ** 2, (j, 1, n0)), rhs=sp.Integer(0), relation=">=").check()
    assert report.status is Status.PROVED and report.steps[0].route == "sum rule", report.summary()


def test_the_sum_rule_sets_aside_hypotheses_about_a_free_symbol_named_like_the_index():
    from grpo_verify.proof import decide

    ctx = decide.Context(hypotheses=[sp.Ge(j, 3)])  # about a free j, not the summation index
    assert kernel.sum_sign(sp.Sum(j - 2, (j, 1, n)), False, ctx) == ""
    assert kernel.sum_sign(sp.Sum(j, (j, 1, n)), False, ctx) != ""  # j >= 1 in the range itself


def test_the_sum_rule_needs_a_non_empty_range_for_a_strict_claim():
    from grpo_verify.proof import decide

    f = sp.Function("f", positive=True)
    n0 = sp.Symbol("n", integer=True, nonnegative=True)
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, n0)), True, decide.Context()) == ""  # n = 0: the sum is 0
    assert kernel.sum_sign(sp.Sum(f(j), (j, 1, R)), True, decide.Context()) != ""  # R >= 1
    assert kernel.sum_sign(-sp.Sum(f(j), (j, 1, R)), False, decide.Context()) == ""  # a negative coefficient


# -- the product rule ------------------------------------------------------------------------------

def _within(index, lo, hi):
    return (sp.Ge(index, lo), sp.Le(index, hi))


def test_a_binomial_coefficient_is_positive_only_inside_its_range():
    from grpo_verify.proof import decide

    jn = sp.Symbol("j", integer=True, nonnegative=True)
    p = sp.Symbol("p", real=True)
    ctx = decide.Context(hypotheses=[sp.Gt(p, 0), sp.Ge(R, 2)])
    weight = sp.binomial(R - 1, jn) * p ** jn
    assert kernel.product_sign(weight, True, ctx, _within(jn, 0, R - 1)) == "a product of positive factors"
    assert kernel.product_sign(weight, True, ctx, _within(jn, 0, R)) == ""  # binomial(R - 1, R) = 0
    assert kernel.product_sign(sp.binomial(R - 1, x) * p ** jn, True, ctx, _within(x, 0, R - 1)) == ""  # x real


def test_a_power_with_a_symbolic_exponent_needs_a_positive_base():
    from grpo_verify.proof import decide

    jn = sp.Symbol("j", integer=True, nonnegative=True)
    p = sp.Symbol("p", real=True)
    inside = decide.Context(hypotheses=[sp.Gt(p, 0), sp.Lt(p, 1)])
    local = _within(jn, 0, R)
    assert kernel.product_sign(2 * p ** jn * (1 - p) ** (R - jn), True, inside, local) != ""
    assert kernel.product_sign(2 * (p - sp.Rational(1, 2)) ** jn, True, inside, local) == ""  # the base may be < 0
    closed = decide.Context(hypotheses=[sp.Ge(p, 0), sp.Le(p, 1)])
    assert kernel.product_sign(2 * p ** jn, True, closed, local) == ""  # 0**j = 0 for j >= 1
    assert kernel.product_sign(2 * p ** jn, False, closed, local) == "a product of non-negative factors"
    assert kernel.product_sign(2 * p ** (jn - 1), False, closed, local) == ""  # 0**(-1) is not a number
    assert kernel.product_sign(2 * p ** x, False, closed, local) == ""  # a real exponent: 0**x undefined for x < 0
    assert kernel.product_sign(-2 * p ** jn, False, inside, local) == ""  # a negative factor


def test_the_sum_rule_moves_a_negative_coefficient_into_the_body():
    from grpo_verify.proof import decide

    f = sp.Function("f", positive=True)
    assert kernel.sum_sign(-sp.Sum(-f(j), (j, 1, R)), True, decide.Context()) != ""
    assert kernel.sum_sign(-2 * sp.Sum(f(j), (j, 1, R)), False, decide.Context()) == ""
    assert kernel.sum_sign(x * sp.Sum(f(j), (j, 1, R)), False, decide.Context()) == ""  # sign of x unknown
    assert kernel.sum_sign(x * sp.Sum(-f(j), (j, 1, R)), False, decide.Context()) == ""  # either way


def test_sums_of_binomial_weights_are_decided_term_by_term_and_a_wrong_sign_is_not_proved():
    jn = sp.Symbol("j", integer=True, nonnegative=True)
    p = sp.Symbol("p", real=True)
    inside = Assumption("0 < p < 1", domain=(p, sp.Interval.open(0, 1)))
    group = Assumption("R >= 2", R >= 2)
    weight = sp.binomial(R - 1, jn) * p ** jn * (1 - p) ** (R - 1 - jn)
    plus = sp.Sum(weight * sp.sqrt((R - jn - 1) / (jn + 1)), (jn, 0, R - 2))
    minus = sp.Sum(weight * -sp.sqrt(jn / (R - jn)), (jn, 1, R - 1))
    proved = result(lhs=plus - minus, rhs=sp.Integer(0), relation=">", assumptions=(group, inside)).check()
    assert proved.status is Status.PROVED and proved.steps[0].route == "sum rule", proved.summary()
    assert status(lhs=plus + minus, rhs=sp.Integer(0), relation=">", assumptions=(group, inside)) is not Status.PROVED
    assert status(lhs=minus, rhs=sp.Integer(0), relation=">=", assumptions=(group, inside)) is not Status.PROVED
    # R >= 1 only: for R = 1 both ranges are empty and the sum is 0
    one = Assumption("R >= 1", R >= 1)
    assert status(lhs=plus - minus, rhs=sp.Integer(0), relation=">", assumptions=(one, inside)) is not Status.PROVED


def test_a_product_of_positive_factors_is_a_rule_of_its_own():
    p = sp.Symbol("p", real=True)
    jn = sp.Symbol("j", integer=True, nonnegative=True)
    inside = Assumption("0 < p < 1", domain=(p, sp.Interval.open(0, 1)))
    report = result(lhs=sp.binomial(R + jn, jn) * p ** (R + jn), rhs=sp.Integer(0), relation=">",
                    assumptions=(inside,)).check()
    assert report.status is Status.PROVED and report.steps[0].route == "product rule", report.summary()
    assert status(lhs=sp.binomial(R - 2, jn) * p ** R, rhs=sp.Integer(0), relation=">",
                  assumptions=(inside,)) is not Status.PROVED  # binomial(R - 2, j) = 0 for j > R - 2


# -- the power rule ----------------------------------------------------------------------------------

def test_powers_are_monotone_on_the_non_negative_half_line_for_every_integer_exponent():
    p = sp.Symbol("p", real=True)
    half_open = Assumption("p in (1/2, 1]", domain=(p, sp.Interval.Lopen(sp.Rational(1, 2), 1)))
    report = result(lhs=R * (p ** (R - 1) - (1 - p) ** (R - 1)), rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("R >= 2", R >= 2), half_open)).check()
    assert report.status is Status.PROVED and report.steps[0].route == "power rule", report.summary()


@pytest.mark.parametrize("a, b, strict, hypotheses", [
    (x + 1, -x - 5, False, [sp.Ge(x, 0)]),  # b < 0: at x = 0, 1**2 < (-5)**2
    (x, x + 1, False, []),  # a < b
    (x + 1, x, True, [sp.Ge(x, 0)]),  # n may be 0: a**0 = b**0, not strictly larger
], ids=["negative smaller base", "bases in the wrong order", "strict with n = 0 allowed"])
def test_the_power_rule_refuses_what_its_side_conditions_exclude(a, b, strict, hypotheses):
    from grpo_verify.proof import decide

    n0 = sp.Symbol("n", integer=True, nonnegative=True)
    assert kernel.power_monotonicity(a**n0 - b**n0, strict, decide.Context(hypotheses=hypotheses)) == ""


def test_the_power_rule_accepts_its_side_conditions():
    from grpo_verify.proof import decide

    n0 = sp.Symbol("n", integer=True, nonnegative=True)
    ctx = decide.Context(hypotheses=[sp.Ge(x, 0)])
    assert kernel.power_monotonicity((x + 1) ** n0 - x**n0, False, ctx) != ""
    assert kernel.power_monotonicity((x + 1) ** R - x**R, True, ctx) != ""  # R >= 1


def test_an_equation_rewrites_inside_a_derivative_only_if_it_holds_for_every_value_of_the_variable():
    f = sp.Function("f", real=True)
    for_every = Assumption("f(x) = 1 for every x", equation=(f(x), sp.Integer(1)), for_every=(x,))
    at_this_x = Assumption("f(x) = 1 at this x", equation=(f(x), sp.Integer(1)))

    def derivative_is_zero(equation: Assumption) -> Status:
        return status(lhs=sp.Derivative(f(x), x), rhs=sp.Integer(0), assumptions=(equation,),
                      steps=(Step(sp.Derivative(sp.Integer(1), x, evaluate=False), "f = 1", using=(equation,)),
                             Step(sp.Integer(0), "the derivative of a constant")))

    assert derivative_is_zero(for_every) is Status.PROVED
    assert derivative_is_zero(at_this_x) is not Status.PROVED  # f(x) = 1 at one point says nothing of f'


# -- the obligations themselves (definedness.obligations: condition, reason, local, kink, bound) ----

def _obligation(e: sp.Basic, *words: str):
    """The one obligation of ``e`` whose reason contains every word."""
    from grpo_verify.proof.definedness import obligations

    found = [o for o in obligations(e) if all(word in o.reason for word in words)]
    assert len(found) == 1, obligations(e)
    return found[0]


f = sp.Function("f", real=True)
m = sp.Symbol("m", integer=True)
i = sp.Symbol("i", integer=True)
in_range = (sp.Ge(j, 1), sp.Le(j, n))  # the local hypotheses of a Sum over j = 1..n


def test_a_simultaneous_substitution_whose_points_mention_its_variables_is_refused_where_it_stands():
    o = _obligation(sp.Sum(sp.Subs(x - y + j, (x, y), (y, x)), (j, 1, n)), "simultaneous substitution")
    assert (o.condition, o.local, o.bound, o.kink) == (sp.false, in_range, (j,), None)
    assert o.reason.endswith("whose points mention its variables")


def test_a_substituted_point_must_lie_in_the_domain_of_the_bound_variable():
    e = sp.Sum(sp.Subs(f(w), w, y + j), (j, 1, n))
    o = _obligation(e, "must satisfy", "domain (positive)")
    assert (o.condition, o.local, o.bound) == (sp.Gt(y + j, 0), in_range, (j,))
    assert o.reason.startswith(f"{e.function}: the point w = j + y")
    o = _obligation(sp.Sum(sp.Subs(f(n), n, y), (j, 1, n)), "the integer n is substituted by y")
    assert (o.condition, o.local, o.bound) == (sp.false, in_range, (j,))
    from grpo_verify.proof.definedness import obligations

    assert obligations(sp.Subs(f(x), x, y)) == [] and obligations(sp.Subs(f(n), n, 2)) == []


def test_a_kink_at_a_point_carries_its_condition_scope_and_function():
    at_y = sp.Subs(sp.Derivative(sp.Sum(sp.Abs(x - j), (j, 1, 3)), x), x, y)
    o = _obligation(at_y, "differentiable only if")
    h = j - x  # SymPy writes Abs(x - j) as Abs(j - x)
    slope = sp.Subs(sp.Derivative(h, x), x, y)
    assert o.condition == sp.Or(sp.Ne(j - y, 0), sp.And(sp.Eq(j - y, 0), sp.Eq(slope, 0)))
    assert o.local == (sp.Ge(j, 1), sp.Le(j, 3)) and o.bound == (j, x)
    assert o.kink == (at_y.expr.expr, x, y, 1)
    assert o.reason.startswith("d/dx at x = y of Abs(j - x): ")
    assert "its kink is not there or both sides" in o.reason and o.reason.endswith("have the same slope there")
    inside = _obligation(sp.Sum(sp.Subs(sp.Derivative(sp.Abs(x - j), x), x, y), (j, 1, n)), "differentiable only if")
    assert (inside.local, inside.bound, inside.kink) == (in_range, (x, j), (sp.Abs(x - j), x, y, 1))


def test_a_kink_in_one_of_several_substituted_variables_takes_the_others_at_their_values():
    e = sp.Subs(sp.Derivative(sp.Sum(sp.Max(x, j * y), (j, 1, 2)), x), (x, y), (2, 3))
    o = _obligation(e, "differentiable only if")
    slope = sp.Subs(sp.Derivative(x - 3 * j, x), x, 2)
    assert o.condition == sp.Or(sp.Ne(2 - 3 * j, 0), sp.And(sp.Eq(2 - 3 * j, 0), sp.Eq(slope, 0)))
    assert (o.local, o.bound, o.kink) == ((sp.Ge(j, 1), sp.Le(j, 2)), (j, x, y), (e.expr.expr, x, 2, 1))


def test_a_kink_everywhere_is_refused_with_its_reason_and_kept_for_the_smoothing_rule():
    o = _obligation(sp.Sum(sp.Derivative(sp.Abs(x), x), (j, 1, n)), "not differentiable everywhere")
    assert (o.condition, o.local, o.bound, o.kink) == (sp.false, in_range, (j,), (sp.Abs(x), x, None, 1))
    assert o.reason.startswith("d/dx of Abs(x): Abs is not differentiable everywhere (the rule at a point")
    assert o.reason.endswith("cite an equation that makes it smooth on an open set")
    o = _obligation(sp.Subs(sp.Derivative(sp.Abs(y), y) + x, x, 1), "not differentiable everywhere")
    assert (o.local, o.bound, o.kink) == ((), (), (sp.Abs(y), y, None, 1))


def test_a_derivative_of_a_real_power_needs_a_positive_base_where_it_stands():
    o = _obligation(sp.Sum(sp.Derivative(sp.sqrt(x + j), x), (j, 1, n)), "needs a positive base")
    assert (o.condition, o.local, o.bound, o.kink) == (sp.Gt(x + j, 0), in_range, (j,), None)
    assert o.reason == f"d/dx of {sp.sqrt(x + j)} needs a positive base"
    # a derivative in a variable that is not substituted is not taken at the point: nothing is bound
    o = _obligation(sp.Subs(x + sp.Derivative(sp.sqrt(y), y), x, 1), "needs a positive base")
    assert (o.condition, o.bound) == (sp.Gt(y, 0), ())


def test_what_a_substitution_needs_is_taken_at_its_point_with_its_local_hypotheses():
    o = _obligation(sp.Subs(sp.Sum(1 / (j - 5), (j, 1, m)), m, 3), "division by")
    assert (o.condition, o.local, o.bound, o.kink) == (sp.Ne(j - 5, 0), (sp.Ge(j, 1), sp.Le(j, 3)), (j,), None)
    assert o.reason == f"{1 / (j - 5)}: division by {j - 5}"
    o = _obligation(sp.Sum(sp.Subs(1 / (x - j), x, y), (j, 1, n)), "division by")
    assert (o.condition, o.local, o.bound) == (sp.Ne(y - j, 0), in_range, (j,))
    o = _obligation(sp.Sum(sp.Subs(sp.Derivative(1 / (x - j), x), x, y), (j, 1, n)), "division by")
    assert (o.condition, o.local, o.bound) == (sp.Ne(x - j, 0), in_range, (x, j))  # for every x near the point
    o = _obligation(sp.Sum(sp.Subs(x**2, x, 1 / (y - j)), (j, 1, n)), "division by")
    assert (o.condition, o.local, o.bound) == (sp.Ne(y - j, 0), in_range, (j,))


def test_a_derivative_placeholder_is_real():
    # sqrt(d**2) of a real derivative d is |d|, defined everywhere: no obligation
    from grpo_verify.proof.definedness import obligations

    assert obligations(sp.Subs(sp.sqrt(sp.Derivative(f(x), x)**2), x, 0)) == []


def test_the_kink_condition_of_each_kinked_function():
    from grpo_verify.proof.definedness import kink_condition

    assert kink_condition(sp.Abs(x**3 + x), x, y) == sp.Or(
        sp.Ne(y**3 + y, 0), sp.And(sp.Eq(y**3 + y, 0), sp.Eq(sp.Subs(sp.Derivative(x**3 + x, x), x, y), 0)))
    low = sp.Min(x, 2 * y)
    h = low.args[0] - low.args[1]
    assert kink_condition(low, x, 1) == sp.Or(
        sp.Ne(h.subs(x, 1), 0), sp.And(sp.Eq(h.subs(x, 1), 0), sp.Eq(sp.Subs(sp.Derivative(h, x), x, 1), 0)))
    assert kink_condition(sp.Max(x, y, 2 * y), x, 1) is sp.false  # three arguments: not covered
    assert kink_condition(sp.sign(x), x, 1) is sp.false
    assert kink_condition(sp.Heaviside(x), x, 1) is sp.false  # two arguments (x, H(0)), but no Min or Max


def test_a_direct_result_uses_what_it_cites():
    # 2**R >= 2 R is checked for R = 2..6 only; cited, it bounds the status of the citing result
    lemma = result(name="two_pow_beats_twice", lhs=2**R, rhs=2 * R, relation=">=", for_each=ForEach.range(R, 2, 6))
    assert status(lhs=2**R + 1, rhs=2 * R + 1, relation=">=", using=(lemma,)) is Status.PROVED_FOR_RANGE
    assert status(lhs=2**R + 1, rhs=2 * R + 1, relation=">=") is Status.UNPROVED


def test_each_kind_of_power_needs_its_own_condition_on_the_base_where_it_stands():
    cases = [
        (1 / (x - j), sp.Ne(x - j, 0), ": division by -j + x"),
        ((x + j)**sp.Rational(-1, 2), sp.Gt(x + j, 0), ": a negative real power needs a positive base"),
        (sp.sqrt(x + j), sp.Ge(x + j, 0), ": a real power needs a non-negative base"),
        ((x + j)**y, sp.Gt(x + j, 0), ": a real power of unknown sign needs a positive base"),
    ]
    for power, condition, reason in cases:
        o = _obligation(sp.Sum(power, (j, 1, n)), reason)
        assert (o.condition, o.local, o.bound, o.kink) == (condition, in_range, (j,), None)
        assert o.reason == f"{power}{reason}"


def test_every_entry_of_a_matrix_must_be_defined():
    from grpo_verify.proof.definedness import Obligation, obligations

    assert obligations(sp.ImmutableMatrix([[1 / x, 0], [0, 1]])) == [Obligation(sp.Ne(x, 0), "1/x: division by x")]
    o = _obligation(sp.Sum(sp.ImmutableMatrix([[1 / (x - j)]]), (j, 1, n)), "division by")
    assert (o.local, o.bound) == (in_range, (j,))


def test_each_obligation_is_listed_once_and_an_immediate_one_not_at_all():
    from grpo_verify.proof.definedness import obligations

    assert [o.condition for o in obligations(1 / x + sp.sin(1 / x))] == [sp.Ne(x, 0)]
    assert obligations(sp.Subs(1 / x, x, 2)) == []  # Ne(2, 0) is simply true
    assert len(obligations(1 / x + 1 / y)) == 2


def test_a_sum_needs_finite_explicit_limits():
    from grpo_verify.proof.definedness import obligations

    for infinite in [sp.Sum(1 / j**2, (j, 1, sp.oo)), sp.Sum(2**j, (j, -sp.oo, 0)), sp.Product(x, (j, 1, sp.oo))]:
        with pytest.raises(KernelError) as caught:
            obligations(infinite)
        message = str(caught.value)
        assert message.startswith(f"{infinite}: infinite sums and products are not supported"), message
        assert message.endswith("(convergence is not decided by the kernel)"), message


def test_the_limits_and_the_index_of_a_sum_are_checked_where_they_stand():
    from grpo_verify.proof.definedness import obligations

    o = _obligation(sp.Sum(x, (i, 1, sp.floor(1 / y))), "division by")
    assert (o.condition, o.local, o.bound) == (sp.Ne(y, 0), (), ())
    # y + ...: a body that is itself a Sum would be merged into one Sum of two limits (see the next test)
    o = _obligation(sp.Sum(y + sp.Sum(x, (i, 1, sp.floor(1 / (y - j)))), (j, 1, n)), "division by")
    assert (o.condition, o.local, o.bound) == (sp.Ne(y - j, 0), in_range, (j,))
    o = _obligation(sp.Sum(y + sp.Sum(x, (i, 1, y)), (j, 1, n)), "the limit y of Sum")
    assert (o.condition, o.local, o.bound) == (sp.false, in_range, (j,))
    assert o.reason == "the limit y of Sum is not known to be an integer"
    o = _obligation(sp.Sum(y + sp.Product(x, (y, 1, n)), (j, 1, n)), "the index y of Product")
    assert (o.condition, o.local, o.bound) == (sp.false, in_range, (j,))
    assert o.reason == "the index y of Product is not an integer symbol"
    assert [o.condition for o in obligations(sp.Sum(x, (i, 1, n)))] == [sp.Ge(n, 0)]


def test_an_inner_limit_that_depends_on_an_outer_index_is_checked_in_the_outer_range():
    """SymPy lists the innermost limit first; the kernel enters them from the last, so the inner limit is checked
    with the outer index bound and in its range (it was checked with the index free before)."""
    merged = sp.Sum(x, (i, 1, sp.floor(1 / (y - j))), (j, 1, n))  # what Sum(Sum(x, (i, ...)), (j, 1, n)) becomes
    o = _obligation(merged, "division by")
    assert (o.condition, o.local, o.bound) == (sp.Ne(y - j, 0), in_range, (j,))


def test_the_obligations_of_a_two_limit_sum_and_of_a_derivative_say_what_they_need():
    """The inner limit's obligation of a merged Sum names its range, carries the outer index's range and is
    bound by it; a derivative keeps the definedness of what it differentiates; Integral and Limit are refused
    by name."""
    from grpo_verify.proof.definedness import obligations
    from grpo_verify.proof import KernelError

    j, m = sp.Symbol("j", integer=True), sp.Symbol("m", integer=True)
    outer, inner = obligations(sp.Sum(x, (i, 1, m), (j, 1, m)))
    assert (outer.condition, outer.local, outer.bound) == (sp.Ge(m, 0), (), ())
    assert outer.reason == "Sum over j = 1..m needs hi >= lo - 1 (SymPy would reverse it by Karr's convention)"
    assert (inner.condition, inner.local, inner.bound) == (sp.Ge(m, 0), (sp.Ge(j, 1), sp.Le(j, m)), (j,))
    assert inner.reason == "Sum over i = 1..m needs hi >= lo - 1 (SymPy would reverse it by Karr's convention)"
    assert [(o.condition, o.reason) for o in obligations(sp.Derivative(sp.log(x), x))] == [
        (sp.Gt(x, 0), "log needs a positive argument: log(x)")]
    for unsupported in (sp.Integral(x, (x, 0, 1)), sp.Limit(1 / x, x, 0)):
        with pytest.raises(KernelError, match=f"^{type(unsupported).__name__} is not supported by the kernel$"):
            obligations(unsupported)


@pytest.mark.parametrize("build, condition, reason", [
    (lambda a: sp.log(a), lambda a: sp.Gt(a, 0), "log needs a positive argument: log({a})"),
    (lambda a: sp.tan(a), lambda a: sp.Ne(sp.cos(a), 0), "tan({a}) has poles where cos = 0"),
    (lambda a: sp.sec(a), lambda a: sp.Ne(sp.cos(a), 0), "sec({a}) has poles where cos = 0"),
    (lambda a: sp.cot(a), lambda a: sp.Ne(sp.sin(a), 0), "cot({a}) has poles where sin = 0"),
    (lambda a: sp.csc(a), lambda a: sp.Ne(sp.sin(a), 0), "csc({a}) has poles where sin = 0"),
    (lambda a: sp.asin(a), lambda a: sp.And(sp.Ge(a, -1), sp.Le(a, 1)), "asin({a}) needs -1 <= argument <= 1"),
    (lambda a: sp.acos(a), lambda a: sp.And(sp.Ge(a, -1), sp.Le(a, 1)), "acos({a}) needs -1 <= argument <= 1"),
], ids=["log", "tan", "sec", "cot", "csc", "asin", "acos"])
def test_each_partial_function_asks_for_its_own_domain(build, condition, reason):
    """The obligation of each partial elementary function, on its own argument (2x + 1, so that the argument,
    not the symbol, is what is checked), with its reason; the false soundness cases for these functions can
    also be caught another way, so the obligations are pinned here directly."""
    from grpo_verify.proof.definedness import obligations

    a = 2 * x + 1
    (o,) = obligations(build(a))
    assert (o.condition, o.reason, o.local) == (condition(a), reason.format(a=a), ())


# -- iterated sums ---------------------------------------------------------------------------------

def test_a_double_sum_is_the_iterated_sum_and_splits_into_a_product_of_sums():
    rs, gs = sp.IndexedBase("r", real=True), sp.IndexedBase("g", real=True)
    i = sp.Symbol("i", integer=True)
    group = Assumption("R >= 2", R >= 2)
    double = sp.Sum(rs[i] * gs[j], (j, 1, R), (i, 1, R))
    product = sp.Sum(rs[i], (i, 1, R)) * sp.Sum(gs[j], (j, 1, R))
    assert status(lhs=double, rhs=product, assumptions=(group,)) is Status.PROVED
    diagonal = sp.Sum(rs[i] * gs[i], (j, 1, R), (i, 1, R))  # the inner index does not occur: R copies
    assert status(lhs=diagonal, rhs=R * sp.Sum(rs[i] * gs[i], (i, 1, R)), assumptions=(group,)) is Status.PROVED
    assert status(lhs=diagonal, rhs=sp.Sum(rs[i] * gs[i], (i, 1, R)), assumptions=(group,)) is not Status.PROVED
    assert status(lhs=double, rhs=sp.Sum(rs[i] * gs[i], (i, 1, R)), assumptions=(group,)) is not Status.PROVED
    # an inner range that depends on the outer index is not a product of sums
    triangle = sp.Sum(rs[i] * gs[j], (j, 1, i), (i, 1, R))
    assert status(lhs=triangle, rhs=product, assumptions=(group,)) is not Status.PROVED
    counted = sp.Sum(1, (j, 1, i), (i, 1, R))
    assert status(lhs=counted, rhs=R * (R + 1) / 2, assumptions=(group,)) is Status.PROVED
    assert status(lhs=counted, rhs=R ** 2, assumptions=(group,)) is not Status.PROVED


def test_pulling_constants_out_of_sums_keeps_the_order_of_the_limits():
    from grpo_verify.proof import decide

    rs = sp.IndexedBase("r", real=True)
    i = sp.Symbol("i", integer=True)
    out = decide.pull_constants_out_of_sums(sp.Sum(rs[i] * j, (j, 1, i), (i, 1, R)))
    # sum_{i<=R} r_i sum_{j<=i} j = sum_i r_i i (i + 1)/2: evaluated at R = 3 with r = (1, 10, 100)
    value = decide.doit(out.subs(R, 3)).subs({rs[1]: 1, rs[2]: 10, rs[3]: 100})
    assert value == 1 * 1 + 10 * 3 + 100 * 6
    # an inner index that the body does not mention counts the terms: sum_{i<=3} sum_{j<=3} r_i = 3 (r_1 + r_2 + r_3)
    repeated = decide.pull_constants_out_of_sums(sp.Sum(rs[i], (j, 1, R), (i, 1, R)))
    assert not repeated.has(j)
    assert decide.doit(repeated.subs(R, 3)).subs({rs[1]: 1, rs[2]: 10, rs[3]: 100}) == 3 * 111


# -- the consistency witness with expectations as free atoms ---------------------------------------

def test_a_witness_assigns_expectations_from_their_equations_and_checks_every_assumption():
    """Expectations whose only laws are stated equations are given the values those equations define;
    the point must still satisfy every assumption exactly, so a contradiction hidden behind a sum is not
    called consistent."""
    from grpo_verify.derivations.d5_baseline_bias import Ex
    from grpo_verify.derivations.notation import g, r

    jn = sp.Symbol("j", integer=True, positive=True)
    squares = sp.Sum(1 / jn ** 2, (jn, 1, R))  # a sum z3 sees only as an opaque number
    defined = (Assumption("E[r_1] is the sum", equation=(Ex(r[1]), squares)),
               Assumption("E[r_1 g_1] = 2 E[r_1]", equation=(Ex(r[1] * g[1]), 2 * Ex(r[1]))))
    ok = result(lhs=Ex(r[1] * g[1]), rhs=2 * squares, assumptions=defined,
                steps=(Step(2 * Ex(r[1]), "definition", using=defined[1:]),
                       Step(2 * squares, "definition", using=defined[:1]))).check()
    assert ok.status is Status.PROVED and "consistent: every assumption holds exactly" in ok.consistency, ok.summary()
    contradictory = (*defined, Assumption("E[r_1] = -1", equation=(Ex(r[1]), sp.Integer(-1))))
    bad = result(lhs=Ex(r[1]), rhs=sp.Integer(-1), assumptions=contradictory,
                 steps=(Step(sp.Integer(-1), "definition", using=contradictory[2:]),)).check()
    assert bad.status is not Status.PROVED, bad.summary()
    cyclic = (Assumption("E[r_1] = E[g_1] + 1", equation=(Ex(r[1]), Ex(g[1]) + squares)),
              Assumption("E[g_1] = E[r_1] + 1", equation=(Ex(g[1]), Ex(r[1]) + squares)))
    looped = result(lhs=Ex(r[1]), rhs=Ex(g[1]) + squares, assumptions=cyclic,
                    steps=(Step(Ex(g[1]) + squares, "definition", using=cyclic[:1]),)).check()
    assert looped.status is not Status.PROVED, looped.summary()  # E[r] = E[r] + 2 s with s > 0: contradictory
