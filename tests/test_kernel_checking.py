"""Behaviour of checking a whole result: consistency, induction, minimum, for-each, pinned case by case.

Induction and the mean-value rule are where a weakened check proves a false statement: each refusal is
pinned with its exact report (and, where it matters, the false statement a weaker check would prove),
next to a minimal true statement the rule accepts.
"""

from __future__ import annotations

import time

import sympy as sp

from grpo_verify.proof import Assumption, ForEach, Induction, MinimumAt, Result, Status, Step, kernel


def result(**kw) -> Result:
    kw.setdefault("name", "t")
    kw.setdefault("doc", "a test statement")
    return Result(**kw)


def cond(c) -> Assumption:
    return Assumption(str(c), c)


def n_():
    return sp.Symbol("n", integer=True)


def refusal(report, detail: str, consistency: str = "consistent: z3 found a model, checked exactly"):
    """The report of a refused rule: one kernel step, unproved, with this detail."""
    assert report.name == "t"
    assert report.status is Status.UNPROVED
    assert report.scope == "symbolic"
    assert report.consistency == consistency
    assert len(report.steps) == 1, report.summary()
    step = report.steps[0]
    assert (step.index, step.rule, step.status, step.detail, step.route, step.disagreement) == \
        (1, "kernel", Status.UNPROVED, detail, "", False), step
    assert 0 <= step.seconds <= since_import() and 0 <= report.seconds <= since_import()


def step_report(step, index, rule, relation, status, detail, route):
    assert (step.index, step.rule, step.relation, step.status, step.detail, step.route, step.disagreement) == \
        (index, rule, relation, status, detail, route, False), step
    assert isinstance(step.seconds, float) and 0 <= step.seconds <= since_import()


# every duration the kernel reports in this module was measured after the module was imported, so
# it is at most the time since then (a bound that holds on any machine; a clock reading added instead
# of subtracted, perf_counter() + start, exceeds it)
_IMPORTED = time.perf_counter()


def since_import() -> float:
    return time.perf_counter() - _IMPORTED

Z3_PROVED = "z3 (nlsat): proved: no such assignment over the reals (z3 nlsat)"
NO_ASSUMPTIONS = "no assumptions beyond the symbol domains"


# -- induction: refusals -------------------------------------------------------------------------

def test_an_induction_over_a_symbol_the_statement_does_not_mention_is_refused():
    x = sp.Symbol("x", real=True)
    report = result(lhs=x, rhs=sp.Integer(0), relation=">=", induction=Induction(n_(), 0)).check()  # x = -1
    refusal(report, "induction refused: the statement does not mention n", NO_ASSUMPTIONS)


def test_an_induction_over_a_symbol_not_declared_integer_is_refused_by_the_kernel_too():
    # Induction itself refuses such a symbol; the kernel re-checks (reached here by bypassing the dataclass)
    x = sp.Symbol("x", real=True)
    induction = Induction(n_(), 0)
    object.__setattr__(induction, "symbol", x)
    report = result(lhs=x, rhs=sp.Integer(0), relation=">=", induction=induction).check()  # x = -1/2
    refusal(report, "induction refused: x is not declared integer", NO_ASSUMPTIONS)


def test_an_induction_over_an_even_symbol_is_refused():
    m = sp.Symbol("m", integer=True, even=True)  # m + 1 is odd: the step leaves the domain
    report = result(lhs=m, rhs=sp.Integer(0), relation=">=", induction=Induction(m, 0)).check()
    refusal(report, "induction refused: m is declared even: a step from m to m + 1 leaves its domain", NO_ASSUMPTIONS)


def test_an_induction_over_a_symbol_with_two_declared_properties_names_both():
    m = sp.Symbol("m", even=True, prime=True)
    report = result(lhs=m, rhs=sp.Integer(0), relation=">=", induction=Induction(m, 0)).check()
    refusal(report, "induction refused: m is declared even, prime: a step from m to m + 1 leaves its domain",
            NO_ASSUMPTIONS)


def test_an_upper_bound_hypothesis_on_the_induction_variable_is_refused():
    n = n_()
    report = result(lhs=n, rhs=sp.Integer(5), relation="<=", assumptions=(cond(n >= 0), cond(n <= 10)),
                    induction=Induction(n, 0)).check()  # n = 6
    refusal(report, "induction refused: the hypothesis n <= 10 mentions n and is not a constant lower bound on it: "
                    "it need not hold at n + 1")


def test_a_hypothesis_excluding_one_value_breaks_the_induction_and_is_refused():
    # (n - 3)^2 >= 1 excludes n = 3 only: the step n <= 3 -> n + 1 <= 3 holds wherever the hypothesis does
    # (n <= 2), and n <= 3 holds at 0, but n = 4 is admissible and 4 > 3
    n = n_()
    report = result(lhs=n, rhs=sp.Integer(3), relation="<=", assumptions=(cond(n >= 0), cond(sp.Ge((n - 3)**2, 1))),
                    induction=Induction(n, 0)).check()
    refusal(report, "induction refused: the hypothesis (n - 3)**2 >= 1 mentions n and is not a constant lower bound "
                    "on it: it need not hold at n + 1")


def test_a_hypothesis_bounding_n_by_an_expression_in_n_is_refused():
    # n <= (n - 3)^2 + n - 1 is again n != 3: n <= 3 would follow by the same false induction (n = 4)
    n = n_()
    report = result(lhs=n, rhs=sp.Integer(3), relation="<=",
                    assumptions=(cond(n >= 0), cond(sp.Le(n, (n - 3)**2 + n - 1))), induction=Induction(n, 0)).check()
    refusal(report, "induction refused: the hypothesis n <= n + (n - 3)**2 - 1 mentions n and is not a constant "
                    "lower bound on it: it need not hold at n + 1")


def test_an_induction_without_a_lower_bound_hypothesis_is_refused():
    n = n_()
    report = result(lhs=n, rhs=sp.Integer(0), relation=">=", induction=Induction(n, 0)).check()  # n = -1
    refusal(report, "induction refused: the hypotheses do not give n >= 0: values below the base case would be "
                    "claimed", NO_ASSUMPTIONS)


def test_an_induction_whose_base_case_the_domain_excludes_is_refused():
    p = sp.Symbol("p", integer=True, positive=True)
    report = result(lhs=p, rhs=sp.Integer(0), relation=">=", induction=Induction(p, 0)).check()
    refusal(report, "induction refused: the hypotheses exclude the base case p = 0", NO_ASSUMPTIONS)


def test_an_induction_citing_an_assumption_it_does_not_state_is_refused():
    n, a = n_(), sp.Symbol("a", real=True)
    report = result(lhs=n, rhs=sp.Integer(0), relation=">=", assumptions=(cond(n >= 0),), induction=Induction(n, 0),
                    using=(Assumption("elsewhere", equation=(a, sp.Integer(1))),)).check()
    refusal(report, "uses the assumption 'elsewhere', which this result does not state")


def test_an_induction_citing_a_refuted_result_is_refused():
    n, a = n_(), sp.Symbol("a", real=True)
    false_lemma = result(name="false_lemma", lhs=a, rhs=sp.Integer(1), relation=">=")  # a = 0
    report = result(lhs=n, rhs=sp.Integer(0), relation=">=", assumptions=(cond(n >= 0),), induction=Induction(n, 0),
                    using=(false_lemma,)).check()
    refusal(report, "cites false_lemma, which is refuted")


def _ones(n, j):
    return sp.Sum(1, (j, 1, n)) - n  # = 0 for n >= 0


def test_an_induction_citing_an_equation_whose_left_side_mentions_n_is_refused():
    n, j = n_(), sp.Symbol("j", integer=True)
    lemma = result(name="ones", lhs=_ones(n, j), rhs=sp.Integer(0), assumptions=(cond(n >= 0),))
    assert lemma.check().status is Status.PROVED
    report = result(lhs=2**n, rhs=n + 1, relation=">=", assumptions=(cond(n >= 0),), induction=Induction(n, 0),
                    using=(lemma,)).check()
    refusal(report, "induction refused: the rewrite -n + Sum(1, (j, 1, n)) = 0 mentions n: it is established at n, "
                    "and the step needs it at n + 1")


def test_an_induction_citing_an_equation_whose_right_side_mentions_n_is_refused():
    n, j = n_(), sp.Symbol("j", integer=True)
    lemma = result(name="ones", lhs=sp.Integer(0), rhs=_ones(n, j), assumptions=(cond(n >= 0),))
    assert lemma.check().status is Status.PROVED
    report = result(lhs=2**n, rhs=n + 1, relation=">=", assumptions=(cond(n >= 0),), induction=Induction(n, 0),
                    using=(lemma,)).check()
    refusal(report, "induction refused: the rewrite 0 = -n + Sum(1, (j, 1, n)) mentions n: it is established at n, "
                    "and the step needs it at n + 1")


# -- induction: base case and step ---------------------------------------------------------------

def test_an_induction_with_a_false_base_case_is_refuted_at_the_base_case():
    n = n_()
    report = result(lhs=n, rhs=sp.Integer(1), relation=">=", assumptions=(cond(n >= 0),),
                    induction=Induction(n, 0)).check()  # n = 0
    assert report.status is Status.REFUTED
    step_report(report.steps[0], 1, "base case n = 0", ">=", Status.REFUTED,
                "counterexample at : right - left = 1.0000000", "exact evaluation")
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", ">=", Status.PROVED,
                Z3_PROVED, "z3")


def test_an_induction_from_two_lower_bounds_proves_bernoulli_for_two():
    n = n_()
    report = result(lhs=2**n, rhs=n + 1, relation=">=", assumptions=(cond(sp.And(n >= 0, sp.Le(1, n))),),
                    induction=Induction(n, 1)).check()
    assert report.status is Status.PROVED, report.summary()
    assert report.consistency == "consistent: z3 found a model, checked exactly" and report.scope == "symbolic"
    step_report(report.steps[0], 1, "base case n = 1", ">=", Status.PROVED, "sign from assumptions", "SymPy and z3")
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", ">=", Status.PROVED,
                Z3_PROVED, "z3")


def test_a_step_that_holds_only_two_values_on_is_not_an_induction():
    # (-1)^n >= 1 at n = 0, and the statement at n gives it at n + 2, not at n + 1 (n = 1: -1)
    n = n_()
    report = result(lhs=(-1)**n, rhs=sp.Integer(1), relation=">=", assumptions=(cond(n >= 0),),
                    induction=Induction(n, 0)).check()
    assert report.status is Status.UNPROVED, report.summary()
    step_report(report.steps[0], 1, "base case n = 0", ">=", Status.PROVED, "sign from assumptions", "SymPy and z3")
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", ">=", Status.UNPROVED,
                "no exact procedure decided this link and no counterexample was found", "")


def test_the_sum_of_odd_numbers_is_proved_by_splitting_the_top_term():
    n, j = n_(), sp.Symbol("j", integer=True)
    report = result(lhs=sp.Sum(2 * j - 1, (j, 1, n)), rhs=n**2, assumptions=(cond(n >= 0),),
                    induction=Induction(n, 0)).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[0], 1, "base case n = 0", "=", Status.PROVED, "difference is 0 by direct evaluation",
                "SymPy and z3")
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", "=", Status.PROVED,
                "difference is 0 by expand", "SymPy and z3")
    assert [(o.condition, o.status, o.route) for o in report.obligations] == [("n >= 0", Status.PROVED, "an assumption")]


def test_a_sum_of_squares_of_an_opaque_function_is_nonnegative_by_induction():
    n, j, f = n_(), sp.Symbol("j", integer=True), sp.Function("f", real=True)
    report = result(lhs=sp.Sum(f(j)**2, (j, 1, n)), rhs=sp.Integer(0), relation=">=", assumptions=(cond(n >= 0),),
                    induction=Induction(n, 0)).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", ">=", Status.PROVED,
                "sign from assumptions", "SymPy and z3")


def test_a_sum_whose_lower_limit_may_exceed_n_plus_one_is_not_split():
    # Sum(j, (j, 3, n)) from n = 1: the split at n + 1 needs n + 1 >= 3, which n >= 1 does not give
    n, j = n_(), sp.Symbol("j", integer=True)
    report = result(lhs=sp.Sum(j, (j, 3, n)), rhs=sp.Integer(-10), relation=">=", assumptions=(cond(n >= 1),),
                    induction=Induction(n, 1)).check()
    assert report.status is Status.UNPROVED
    assert report.steps[0].status is Status.UNPROVED
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", ">=", Status.UNPROVED,
                "a sum up to n + 1 could not be split (its lower limit is not shown to be at most n + 1)", "")


def test_a_sum_over_a_window_that_moves_with_n_needs_no_split():
    n, j = n_(), sp.Symbol("j", integer=True)
    report = result(lhs=sp.Sum(j, (j, n + 5, n + 5)), rhs=n + 5, assumptions=(cond(n >= 0),),
                    induction=Induction(n, 0)).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", "=", Status.PROVED,
                "difference is 0 by direct evaluation", "SymPy and z3")


def test_the_step_must_be_defined_at_n_plus_one():
    # 1/(n - 1) <= 1 at n = 0; at n + 1 it is 1/n, undefined at n = 0
    n = n_()
    report = result(lhs=1 / (n - 1), rhs=sp.Integer(1), relation="<=", assumptions=(cond(n >= 0),),
                    induction=Induction(n, 0)).check()
    assert report.status is Status.UNPROVED
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", "<=", Status.UNPROVED,
                "not shown to be defined: 1/n: division by n (needs Ne(n, 0))", "")


def test_a_cited_inequality_in_n_is_not_a_hypothesis_of_the_step():
    # 2^n >= n + 1 holds, but the kernel does not carry a cited fact about n into the step (it speaks of n, the
    # step of n + 1): 2^n >= n alone does not give 2^(n + 1) >= n + 1 at n = 0 without knowing 2^0 = 1
    n = n_()
    lemma = result(name="two_pow", lhs=2**n, rhs=n + 1, relation=">=", assumptions=(cond(n >= 0),),
                   induction=Induction(n, 0))
    assert lemma.check().status is Status.PROVED
    report = result(lhs=2**n, rhs=n, relation=">=", assumptions=(cond(n >= 0),), induction=Induction(n, 0),
                    using=(lemma,)).check()
    assert report.status is Status.UNPROVED, report.summary()
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", ">=", Status.UNPROVED,
                "no exact procedure decided this link and no counterexample was found", "")


def test_an_induction_citing_a_range_checked_result_is_proved_for_that_range():
    n, k = n_(), sp.Symbol("k", integer=True)
    ranged = result(name="rng", lhs=2**k, rhs=sp.Integer(1), relation=">=", for_each=ForEach.range(k, 0, 3))
    report = result(lhs=2**n, rhs=n + 1, relation=">=", assumptions=(cond(n >= 0),), induction=Induction(n, 0),
                    using=(ranged,)).check()
    assert report.status is Status.PROVED_FOR_RANGE, report.summary()
    assert report.scope == "k = 0..3"
    assert report.consistency == "consistent: z3 found a model, checked exactly"
    assert [s.status for s in report.steps] == [Status.PROVED_FOR_RANGE] * 2


def test_an_induction_uses_a_cited_equation_for_every_value_inside_a_derivative():
    # n f'(a) = 0 for every n >= 0 needs f' = 0, which only the equation f(a) = 1 for every a gives
    n, a, f = n_(), sp.Symbol("a", real=True), sp.Function("f", real=True)
    equation = Assumption("f(a) = 1 for every a", equation=(f(a), sp.Integer(1)), for_every=(a,))
    report = result(lhs=n * sp.Derivative(f(a), a), rhs=sp.Integer(0), assumptions=(cond(n >= 0), equation),
                    induction=Induction(n, 0), using=(equation,)).check()
    assert report.status is Status.PROVED, report.summary()
    without = result(lhs=n * sp.Derivative(f(a), a), rhs=sp.Integer(0), assumptions=(cond(n >= 0), equation),
                     induction=Induction(n, 0)).check()
    assert without.status is not Status.PROVED


# -- the mean-value rule -------------------------------------------------------------------------

def about(lhs, rhs, relation, symbol, point, *assumptions, **kw) -> Result:
    return result(lhs=lhs, rhs=rhs, relation=relation, assumptions=assumptions, minimum_at=MinimumAt(symbol, point),
                  **kw)


def real(name):
    return sp.Symbol(name, real=True)


SLOPE = "the slope times (x - {}) is >= 0 on the interval"
AT = "the difference is >= 0 at x = {}"


def test_the_mean_value_rule_refuses_a_matrix_on_either_side():
    x = real("x")
    refusal(about(sp.Matrix([[x]]), sp.Integer(0), ">=", x, 0).check(),
            "mean-value rule refused: the statement is about matrices", NO_ASSUMPTIONS)


def test_the_mean_value_rule_refuses_a_statement_without_its_variable():
    x, y = real("x"), real("y")
    refusal(about(y, sp.Integer(0), ">=", x, 0).check(),  # y = -1
            "mean-value rule refused: the statement does not mention x", NO_ASSUMPTIONS)


def test_the_mean_value_rule_refuses_a_bound_on_x_that_depends_on_another_symbol():
    x, a = real("x"), real("a")  # a x >= 1: x >= 1/a or x <= 1/a by the sign of a
    refusal(about(x**2, sp.Integer(0), ">=", x, 0, cond(a * x >= 1)).check(),
            "mean-value rule refused: the hypothesis a*x >= 1 is not a constant bound on x: its admissible values "
            "need not form an interval")


def test_the_mean_value_rule_refuses_a_bound_with_a_nonlinear_part_in_x():
    x = real("x")
    step = sp.Piecewise((1, x > 0), (0, True))
    refusal(about(x**2, sp.Integer(0), ">=", x, 0, cond(x + step >= 0)).check(),
            "mean-value rule refused: the hypothesis x + Piecewise((1, x > 0), (0, True)) >= 0 is not a constant "
            "bound on x: its admissible values need not form an interval",
            "consistent: every assumption holds exactly at x = 1729/500")


def test_the_mean_value_rule_refuses_a_step_function_bound_with_zero_slope():
    x = real("x")
    report = about(x**2, sp.Integer(0), ">=", x, 0, cond(sp.Piecewise((1, x > 0), (0, True)) >= 1)).check()
    assert report.status is Status.UNPROVED and report.steps[0].rule == "kernel"
    assert report.steps[0].detail == ("mean-value rule refused: the hypothesis Piecewise((1, x > 0), (0, True)) >= 1 "
                                      "is not a constant bound on x: its admissible values need not form an interval")


def test_the_mean_value_rule_accepts_a_linear_bound_with_x_on_both_sides():
    x = real("x")  # x >= 1 - x is x >= 1/2; (x - 1/2)^2 >= 0 with its minimum at 1/2
    report = about(x**2 - x + sp.Rational(1, 4), sp.Integer(0), ">=", x, sp.Rational(1, 2), cond(sp.Ge(x, 1 - x))).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[0], 1, AT.format("1/2"), ">=", Status.PROVED, "sign from assumptions", "SymPy and z3")
    step_report(report.steps[1], 2, SLOPE.format("1/2"), ">=", Status.PROVED, "sign from simplify", "SymPy and z3")


def test_the_mean_value_rule_citing_an_unstated_assumption_is_refused():
    x, a, f = real("x"), real("a"), sp.Function("f", real=True)
    equation = Assumption("f(a) = 1 for every a", equation=(f(a), sp.Integer(1)), for_every=(a,))
    refusal(about(x**2, sp.Integer(0), ">=", x, 0, using=(equation,)).check(),
            "uses the assumption 'f(a) = 1 for every a', which this result does not state", NO_ASSUMPTIONS)


def test_the_mean_value_rule_citing_a_refuted_result_is_refused():
    x, a = real("x"), real("a")
    false_lemma = result(name="false_lemma", lhs=a, rhs=sp.Integer(1), relation=">=")
    refusal(about(x**2, sp.Integer(0), ">=", x, 0, using=(false_lemma,)).check(),
            "cites false_lemma, which is refuted", NO_ASSUMPTIONS)


OPAQUE = ("not contradictory as far as the kernel can see: z3 finds the assumptions' arithmetic (sums, expectations "
          "and functions as opaque atoms) satisfiable, but no exact model was found")


def test_the_mean_value_rule_uses_a_cited_equation_at_the_point():
    # x^2 + f'(a) >= 0: at x = 0 it is f'(a), which is 0 only by the equation f(a) = 1 for every a
    x, a, f = real("x"), real("a"), sp.Function("f", real=True)
    equation = Assumption("f(a) = 1 for every a", equation=(f(a), sp.Integer(1)), for_every=(a,))
    claim = dict(lhs=x**2 + sp.Derivative(f(a), a), rhs=sp.Integer(0), relation=">=", symbol=x, point=0)
    report = about(*claim.values(), equation, using=(equation,)).check()
    assert report.status is Status.PROVED, report.summary()
    assert report.consistency == OPAQUE
    without = about(*claim.values(), equation).check()
    assert without.status is Status.UNPROVED
    step_report(without.steps[0], 1, AT.format(0), ">=", Status.UNPROVED,
                "no exact procedure decided this link and no counterexample was found", "")


def test_the_point_must_have_the_declared_sign_of_the_variable():
    xp = sp.Symbol("xp", positive=True)
    refusal(about(xp, sp.Integer(0), ">=", xp, 0).check(),
            "mean-value rule refused: the point 0 is not shown to be positive like xp", NO_ASSUMPTIONS)


def test_a_point_outside_a_symbolic_interval_is_refused_though_part_of_its_bounds_hold():
    # x in [a, b] with a >= 1: the point 0 meets 0 <= b but not a <= 0. (x - 1)^2 - 1/2 has its value 1/2 at 0
    # and a slope 2 (y - 1) y >= 0 on [a, b], yet it is -1/2 at x = 1 = a
    x, a, b = real("x"), real("a"), real("b")
    report = about((x - 1)**2 - sp.Rational(1, 2), sp.Integer(0), ">=", x, 0, cond(a >= 1), cond(b >= a),
                   Assumption("x in [a, b]", domain=(x, sp.Interval(a, b)))).check()
    refusal(report, "mean-value rule refused: the point x = 0 is not shown to be admissible")


def test_the_value_at_the_point_uses_the_hypotheses_on_the_other_symbols():
    x, a = real("x"), real("a")
    report = about(x**2 + a, sp.Integer(0), ">=", x, 0, cond(a >= 0)).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[0], 1, AT.format(0), ">=", Status.PROVED, Z3_PROVED, "z3")
    step_report(report.steps[1], 2, SLOPE.format(0), ">=", Status.PROVED, "sign from assumptions", "SymPy and z3")


def test_a_negative_value_at_the_point_refutes_the_statement():
    x = real("x")
    report = about(x**2 - 1, sp.Integer(0), ">=", x, 0).check()  # x = 0
    assert report.status is Status.REFUTED
    step_report(report.steps[0], 1, AT.format(0), ">=", Status.REFUTED,
                "counterexample at : right - left = 1.0000000", "exact evaluation")
    step_report(report.steps[1], 2, SLOPE.format(0), ">=", Status.PROVED, "sign from assumptions", "SymPy and z3")


def test_a_slope_of_the_wrong_sign_leaves_the_statement_unproved_not_refuted():
    x = real("x")  # x^3 >= 0 is false (x = -1), but a bad slope only means the rule does not apply
    report = about(x**3, sp.Integer(0), ">=", x, 0).check()
    assert report.status is Status.UNPROVED
    assert len(report.steps) == 2
    step_report(report.steps[0], 1, AT.format(0), ">=", Status.PROVED, "sign from assumptions", "SymPy and z3")
    step_report(report.steps[1], 2, SLOPE.format(0), ">=", Status.REFUTED,
                "counterexample at _y = -11/20: right - left = 0.49912500", "exact evaluation")


def test_the_log_lies_below_its_tangent_with_the_obligations_of_both_steps():
    xp = sp.Symbol("xp", positive=True)
    report = about(sp.log(xp), xp - 1, "<=", xp, 1).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[0], 1, "the difference is >= 0 at xp = 1", ">=", Status.PROVED,
                "sign from assumptions", "SymPy and z3")
    step_report(report.steps[1], 2, "the slope times (xp - 1) is >= 0 on the interval", ">=", Status.PROVED,
                "sign from simplify", "SymPy and z3")
    assert report.obligations == ()


def test_the_slope_on_a_closed_interval_is_decided_on_that_interval():
    x = real("x")
    report = about(x**3 - 3 * x, sp.Integer(-2), ">=", x, 1, Assumption("x in [0, 3]", domain=(x, sp.Interval(0, 3)))
                   ).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[1], 2, SLOPE.format(1), ">=", Status.PROVED,
                "exact real-root isolation on Interval(0, 3)", "SymPy and z3")


def test_the_mean_value_rule_checks_a_cited_results_hypotheses():
    x, a = real("x"), real("a")
    lemma = result(name="apos", lhs=a, rhs=sp.Integer(0), relation=">=", assumptions=(cond(a > 0),))
    report = about(x**2 - 2 * x + 1, sp.Integer(0), ">=", x, 1, cond(a > 0), using=(lemma,)).check()
    assert report.status is Status.PROVED, report.summary()
    unsupported = about(x**2 - 2 * x + 1, sp.Integer(0), ">=", x, 1, using=(lemma,)).check()
    refusal(unsupported, "cites apos, whose hypothesis a > 0 is not shown to hold here", NO_ASSUMPTIONS)


# -- the variable of a rule ----------------------------------------------------------------------

def test_an_induction_over_a_symbol_bound_in_the_statement_is_refused():
    n = n_()  # the statement speaks of the bound n of the sum: 6 >= 7 is false
    refusal(result(lhs=sp.Sum(n, (n, 1, 3)), rhs=sp.Integer(7), relation=">=", induction=Induction(n, 0)).check(),
            "induction refused: n is bound inside the statement", NO_ASSUMPTIONS)


def test_an_induction_over_the_end_of_a_range_of_a_hypothesis_for_every_index_is_refused():
    n, i, r = n_(), sp.Symbol("i", integer=True), sp.IndexedBase("r", real=True)
    report = result(lhs=sp.Sum(r[i], (i, 1, n)), rhs=sp.Integer(0), relation=">=",
                    assumptions=(cond(n >= 0), Assumption("every", r[i] >= 0, for_all=(i, 1, n - 1))),
                    induction=Induction(n, 0)).check()  # n = 1, r_1 = -1
    refusal(report, "induction refused: a hypothesis for every index mentions n", OPAQUE)


def test_an_induction_beside_a_hypothesis_for_every_index_of_another_range_is_accepted():
    n, i, r = n_(), sp.Symbol("i", integer=True), sp.IndexedBase("r", real=True)
    big = sp.Symbol("R", integer=True, positive=True)
    report = result(lhs=sp.Sum(r[i]**2, (i, 1, n)), rhs=sp.Integer(0), relation=">=",
                    assumptions=(cond(n >= 0), Assumption("every", r[i] >= 0, for_all=(i, 1, big))),
                    induction=Induction(n, 0)).check()
    assert report.status is Status.PROVED, report.summary()


def test_the_mean_value_rule_beside_a_hypothesis_for_every_index_mentioning_x_is_refused():
    x, i, r = real("x"), sp.Symbol("i", integer=True), sp.IndexedBase("r", real=True)
    big = sp.Symbol("R", integer=True, positive=True)
    report = result(lhs=x**2 + r[i], rhs=sp.Integer(0), relation=">=",
                    assumptions=(Assumption("every", r[i] >= x, for_all=(i, 1, big)),),
                    minimum_at=MinimumAt(x, 0)).check()
    refusal(report, "mean-value rule refused: a hypothesis for every index mentions x", OPAQUE)


# -- chains: the closing step and the relation they establish ---------------------------------------

CLOSING = "chain ends at the statement's right-hand side"


def test_a_chain_is_closed_by_a_link_to_the_right_hand_side():
    x = real("x")
    report = result(lhs=(x + 1)**2, rhs=x**2 + 2 * x + 1, steps=(Step(x**2 + 2 * x + 2, "expand wrongly"),)).check()
    assert report.status is Status.REFUTED
    step_report(report.steps[1], 2, CLOSING, "=", Status.REFUTED, "counterexample at : right - left = -1.0000000",
                "exact evaluation")


def test_an_equality_chain_proves_an_inequality_statement():
    x = real("x")
    report = result(lhs=(x + 1)**2, rhs=x**2 + 2 * x + 1, relation="<=", steps=(Step(x**2 + 2 * x + 1, "expand"),)
                    ).check()
    assert report.status is Status.PROVED, report.summary()
    assert [s.rule for s in report.steps] == ["expand", CLOSING]


def test_a_chain_in_the_other_direction_does_not_prove_the_statement():
    x = real("x")
    report = result(lhs=x**2 + 1, rhs=x**2, relation=">=", steps=(Step(x**2, "drop one", relation="<="),)).check()
    assert report.status is Status.REFUTED
    step_report(report.steps[2], 3, "chain relation", "=", Status.REFUTED,
                "the steps establish '<=', not the stated '>='", "")
    assert report.steps[2].seconds == 0.0


def test_a_chain_mixing_directions_establishes_nothing():
    x = real("x")
    report = result(lhs=x**2 + 1, rhs=x**2 + 1, relation=">=",
                    steps=(Step(x**2, "drop", relation=">="), Step(x**2 + 1, "add", relation="<="))).check()
    assert report.status is Status.REFUTED
    assert [s.status for s in report.steps[:3]] == [Status.PROVED] * 3
    step_report(report.steps[3], 4, "chain relation", "=", Status.REFUTED,
                "the steps establish None, not the stated '>='", "")


def test_which_established_relation_implies_which_stated_one():
    # _implies directly: '!=' statements have no chain, so ("<", "!=") is reached only here
    implied = {(e, s) for e in ("=", "<=", ">=", "<", ">", "!=") for s in ("=", "<=", ">=", "<", ">", "!=")
               if kernel._implies(e, s)}
    assert implied == {("=", "="), ("<=", "<="), (">=", ">="), ("<", "<"), (">", ">"), ("!=", "!="),
                       ("=", "<="), ("=", ">="), ("<", "<="), (">", ">="), ("<", "!="), (">", "!=")}
    assert not any(kernel._implies(None, s) for s in ("=", "<=", ">=", "<", ">", "!="))


# -- for-each values: the substituted context ------------------------------------------------------

def test_a_for_each_skips_the_values_outside_the_symbols_declared_domain():
    big = sp.Symbol("R", integer=True, positive=True)
    report = result(lhs=2**big, rhs=big, relation=">", for_each=ForEach.range(big, 0, 3)).check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "R in {1, 2, 3}"
    step_report(report.steps[0], 1, "direct computation", ">", Status.PROVED_FOR_RANGE,
                "decided exactly for each R in {1, 2, 3}", "")


def test_a_for_each_over_an_even_symbol_checks_the_even_values_only():
    m = sp.Symbol("m", integer=True, even=True)  # m^2 != 2 m + ... : m^2 >= 2 m holds at even m, fails at m = 1
    report = result(lhs=m**2, rhs=2 * m, relation=">=", for_each=ForEach.range(m, 0, 3)).check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "m in {0, 2}", report.summary()


def test_a_for_each_skips_the_values_the_hypotheses_exclude():
    n = n_()
    report = result(lhs=2**n, rhs=n, relation=">", assumptions=(cond(n >= 2),), for_each=ForEach.range(n, 0, 4)).check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "n in {2, 3, 4}"
    none = result(lhs=2**n, rhs=n, relation=">", assumptions=(cond(n >= 9),), for_each=ForEach.range(n, 0, 4)).check()
    assert none.status is Status.UNPROVED
    step_report(none.steps[0], 1, "direct computation", ">", Status.UNPROVED,
                "no value of n = 0..4 satisfies the assumptions: nothing was checked", "")



# -- the obligations of both parts of a rule are reported ------------------------------------------

def test_an_induction_reports_the_obligations_of_its_base_case_and_of_its_step():
    n, a = n_(), real("a")
    report = result(lhs=sp.sqrt(n + a), rhs=sp.Integer(0), relation=">=", assumptions=(cond(n >= 0), cond(a >= 0)),
                    induction=Induction(n, 0)).check()
    assert report.status is Status.PROVED, report.summary()
    conditions = [o.condition for o in report.obligations]
    assert "a >= 0" in conditions  # the base case's sqrt(a)
    assert any("n" in c for c in conditions), conditions  # the step's sqrt(a + n + 1)


def test_the_mean_value_rule_reports_the_obligations_at_the_point_and_along_the_interval():
    x, a = real("x"), real("a")
    report = about(x**2 + sp.sqrt(x + a), sp.Integer(0), ">=", x, 0, cond(a > 0), cond(x >= 0)).check()
    assert report.status is Status.PROVED, report.summary()
    assert [(o.condition, o.status) for o in report.obligations] == [
        ("a >= 0", Status.PROVED), ("_y + a > 0", Status.PROVED), ("_y + a >= 0", Status.PROVED)]


def test_an_induction_uses_a_cited_inequality_that_does_not_mention_n():
    # n (x - 1 - log x) >= 0: the step at n = 0 needs x - 1 - log x >= 0, the cited tangent bound
    n, xp = n_(), sp.Symbol("xp", positive=True)
    tangent = result(name="log_below_tangent", lhs=sp.log(xp), rhs=xp - 1, relation="<=", minimum_at=MinimumAt(xp, 1))
    claim = dict(lhs=n * (xp - 1 - sp.log(xp)), rhs=sp.Integer(0), relation=">=", assumptions=(cond(n >= 0),),
                 induction=Induction(n, 0))
    report = result(**claim, using=(tangent,)).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[1], 2, "inductive step n -> n + 1 (the statement at n assumed)", ">=", Status.PROVED,
                Z3_PROVED, "z3")
    assert result(**claim).check().status is Status.UNPROVED


def test_the_slope_is_decided_on_the_variables_own_interval_beside_another_domain():
    x, a = real("x"), real("a")
    report = about(x**3 - 3 * x + a, a - 2, ">=", x, 1, Assumption("x in [0, 3]", domain=(x, sp.Interval(0, 3))),
                   Assumption("a in [5, 6]", domain=(a, sp.Interval(5, 6)))).check()
    assert report.status is Status.PROVED, report.summary()
    step_report(report.steps[1], 2, SLOPE.format(1), ">=", Status.PROVED,
                "exact real-root isolation on Interval(0, 3)", "SymPy and z3")


def test_the_mean_value_rule_uses_a_cited_inequality_at_the_point():
    x, xp = real("x"), sp.Symbol("xp", positive=True)
    tangent = result(name="log_below_tangent", lhs=sp.log(xp), rhs=xp - 1, relation="<=", minimum_at=MinimumAt(xp, 1))
    claim = (x**2 + xp - 1 - sp.log(xp), sp.Integer(0), ">=", x, 0)
    report = about(*claim, using=(tangent,)).check()
    assert report.status is Status.PROVED, report.summary()
    assert about(*claim).check().status is Status.UNPROVED


def test_the_mean_value_rule_citing_a_range_checked_result_is_proved_for_that_range():
    x, k = real("x"), sp.Symbol("k", integer=True)
    ranged = result(name="rng", lhs=2**k, rhs=sp.Integer(1), relation=">=", for_each=ForEach.range(k, 0, 3))
    report = about(x**2, sp.Integer(0), ">=", x, 0, using=(ranged,)).check()
    assert report.status is Status.PROVED_FOR_RANGE, report.summary()
    assert report.scope == "k = 0..3" and report.consistency == NO_ASSUMPTIONS


def test_a_false_value_at_the_point_is_refuted_at_the_other_symbols_only():
    # x^2 + a >= 0 with a <= 0 and x >= a: at x = 0 the value is a, negative for a = -1
    x, a = real("x"), real("a")
    report = about(x**2 + a, sp.Integer(0), ">=", x, 0, cond(a <= 0), cond(x >= a)).check()
    assert report.status is Status.REFUTED, report.summary()
    step_report(report.steps[0], 1, AT.format(0), ">=", Status.REFUTED,
                "counterexample at a = -11/20: right - left = 0.55000000", "exact evaluation")


def test_a_symbolic_point_of_a_positive_variable_must_be_shown_positive():
    xp, b = sp.Symbol("xp", positive=True), real("b")
    report = about((xp - b)**2, sp.Integer(0), ">=", xp, b, cond(b > 0)).check()
    assert report.status is Status.PROVED, report.summary()
    refusal(about((xp - b)**2, sp.Integer(0), ">=", xp, b).check(),
            "mean-value rule refused: the point b is not shown to be positive like xp", NO_ASSUMPTIONS)


def test_a_rule_reports_its_name_symbolic_scope_time_and_obligations():
    n, j = n_(), sp.Symbol("j", integer=True)
    report = result(lhs=sp.Sum(2 * j - 1, (j, 1, n)), rhs=n**2, assumptions=(cond(n >= 0),),
                    induction=Induction(n, 0)).check()
    assert (report.name, report.status, report.scope) == ("t", Status.PROVED, "symbolic")
    assert isinstance(report.obligations, tuple) and len(report.obligations) == 1
    assert 0 <= report.seconds <= since_import()


def test_a_rule_citing_two_range_checked_results_names_both_ranges():
    x, k, m = real("x"), sp.Symbol("k", integer=True), sp.Symbol("m", integer=True)
    first = result(name="rng", lhs=2**k, rhs=sp.Integer(1), relation=">=", for_each=ForEach.range(k, 0, 3))
    second = result(name="rng2", lhs=3**m, rhs=sp.Integer(1), relation=">=", for_each=ForEach.range(m, 1, 4))
    report = about(x**2, sp.Integer(0), ">=", x, 0, using=(first, second)).check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "k = 0..3; m = 1..4", report.summary()
