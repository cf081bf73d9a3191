"""Behaviour of the kernel's decision of one link of a chain and its obligations, pinned case by case,
and the whole-result checks around it (the consistency of the assumptions, the chain relation, the
reports a result gets).

``kernel.decide_link`` is called directly where one link is the subject (the routes, their agreement,
the definedness obligations, the sign rules); whole ``Result`` objects are checked where the subject is
what ``kernel.check`` does around the links. Expected texts are the kernel's user-visible details; the
expected verdicts are worked out by hand (noted at each case)."""

from __future__ import annotations

import time

import sympy as sp

from grpo_verify.proof import Assumption, ForEach, Result, Status, Step, decide, definedness, kernel, smt
from grpo_verify.proof.kernel import ObligationReport, _Link

# symbols are plain data (building them touches no kernel code)
x = sp.Symbol("x", real=True)
m = sp.Symbol("m", real=True)
R = sp.Symbol("R", integer=True, positive=True)
k = sp.Symbol("k", integer=True, positive=True)
j = sp.Symbol("j", integer=True)

NO_PROCEDURE = "no exact procedure decided this link and no counterexample was found"

# every duration the kernel reports in this module was measured after the module was imported, so
# it is at most the time since then (a bound that holds on any machine; a clock reading added instead
# of subtracted, perf_counter() + start, exceeds it)
_IMPORTED = time.perf_counter()


def since_import() -> float:
    return time.perf_counter() - _IMPORTED


def link(previous, relation, expr, *hypotheses, **context) -> _Link:
    """``previous relation expr`` decided by the kernel under the given hypotheses (a fresh cache)."""
    return kernel.decide_link(sp.sympify(previous), relation, sp.sympify(expr),
                              decide.Context(hypotheses=list(hypotheses), **context), {})


def result(**kw) -> Result:
    kw.setdefault("name", "t")
    kw.setdefault("doc", "a test statement")
    return Result(**kw)


def _lying_entails(verdict):
    """smt.entails, except that a goal z3 decides is answered with ``verdict`` ("planted")."""
    real = smt.entails

    def lying(hypotheses, goal, timeout_ms=5000):
        outcome = real(hypotheses, goal, timeout_ms)
        if outcome.verdict is not smt.Verdict.UNKNOWN:
            return smt.SmtOutcome(verdict, "planted", {}, True)
        return outcome

    return lying


# -- one link: the routes -----------------------------------------------------------------------------

def test_an_identity_is_proved_by_both_routes():
    # (x + 1)^2 - (x^2 + 2x + 1) expands to 0
    assert link((x + 1) ** 2, "=", x**2 + 2 * x + 1) == \
        _Link(Status.PROVED, "difference is 0 by expand", "SymPy and z3", False, [])


def test_a_square_is_at_least_zero_by_both_routes():
    assert link(0, "<=", x**2) == _Link(Status.PROVED, "sign from assumptions", "SymPy and z3", False, [])


def test_a_square_is_not_strictly_positive_z3_refutes_it_at_zero():
    # 0 < x^2 fails at x = 0 only, which the two random early tries miss and z3 finds
    assert link(0, "<", x**2) == _Link(
        Status.REFUTED, "z3 counterexample, checked exactly: counterexample: {x: 0} over the reals (z3 nlsat), "
        "checked exactly in SymPy", "z3", False, [])


def test_abs_x_equals_x_is_refuted_by_an_exact_evaluation_at_a_negative_point():
    # |x| = x fails for every x < 0; the early seeded search tries x = -11/20: x - |x| = -11/10
    assert link(sp.Abs(x), "=", x) == _Link(
        Status.REFUTED, "counterexample at x = -11/20: right - left = -1.1000000", "exact evaluation", False, [])


def test_a_false_comparison_of_numbers_is_refuted_by_exact_evaluation():
    assert link(1, "=", 2) == _Link(Status.REFUTED, "counterexample at : right - left = 1.0000000",
                                    "exact evaluation", False, [])


def test_z3_alone_proves_what_needs_the_integer_hypothesis():
    # R - k >= 1 needs k < R and integrality (k <= R - 1); SymPy's assumptions cannot use k < R
    assert link(R - k, ">=", 1, k < R) == _Link(
        Status.PROVED, "z3 (nlsat): proved: no such assignment with integer symbols as integers (z3)", "z3", False,
        [])


def test_sympy_refutes_a_strict_sign_by_an_exact_root_in_a_narrow_interval():
    # (x - 1)^2 vanishes at x = 1, inside [999/1000, 1001/1000]; z3 agrees that 0 < (x - 1)^2 fails there
    lo, hi = sp.Rational(999, 1000), sp.Rational(1001, 1000)
    got = link(0, "<", (x - 1) ** 2, x >= lo, x <= hi, domains={x: sp.Interval(lo, hi)})
    assert got == _Link(Status.REFUTED, "exact witness x = 1 on Interval(999/1000, 1001/1000): the value is 0", "SymPy",
                        False, [])


def test_a_matrix_equals_no_number():
    assert link(sp.Matrix([[x]]), "=", x) == _Link(Status.REFUTED, "one side is a matrix, the other is not", "SymPy",
                                                   False, [])


def test_matrices_of_different_shapes_are_not_equal():
    assert link(sp.Matrix([[x, 1]]), "=", sp.Matrix([[x], [1]])) == \
        _Link(Status.REFUTED, "shapes differ: (1, 2) vs (2, 1)", "SymPy", False, [])


def test_equal_matrices_are_proved_entrywise_by_both_routes():
    # z3 gets the conjunction of the entrywise equations
    assert link(sp.Matrix([[x + x, 1]]), "=", sp.Matrix([[2 * x, 1]])) == \
        _Link(Status.PROVED, "difference is 0 by entrywise direct evaluation", "SymPy and z3", False, [])


def test_a_side_that_is_not_a_real_number_is_not_decided():
    assert link(sp.zoo, "=", 1) == _Link(Status.UNPROVED, "a side evaluates to zoo, which is not a real number")
    assert link(1, "<", sp.oo) == _Link(Status.UNPROVED, "a side evaluates to oo, which is not a real number")
    assert link(1, "<", -sp.oo).detail == "a side evaluates to -oo, which is not a real number"
    assert link(sp.nan, "=", 1).detail == "a side evaluates to nan, which is not a real number"
    assert link(sp.I, "=", 1).detail == "a side evaluates to I, which is not a real number"


# -- one link: definedness ---------------------------------------------------------------------------

def test_one_over_x_without_x_nonzero_is_not_shown_defined():
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    assert link(quotient, "=", 1) == _Link(
        Status.UNPROVED, "not shown to be defined: 1/x: division by x (needs Ne(x, 0))", "", False,
        [ObligationReport("Ne(x, 0)", "1/x: division by x", Status.UNPROVED, "", "x \\neq 0")])


def test_one_over_x_with_x_nonzero_is_defined_and_x_times_it_is_one():
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    assert link(quotient, "=", 1, sp.Ne(x, 0)) == _Link(
        Status.PROVED, "difference is 0 by direct evaluation", "SymPy and z3", False,
        [ObligationReport("Ne(x, 0)", "1/x: division by x", Status.PROVED, "an assumption", "x \\neq 0")])


def test_the_obligation_of_the_right_side_is_discharged_too():
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    got = link(1, "=", quotient)
    assert got.status is Status.UNPROVED and got.detail == "not shown to be defined: 1/x: division by x (needs Ne(x, 0))"


def test_a_definedness_condition_is_a_hypothesis_of_the_z3_route():
    # x * (1/x) >= 1 holds wherever 1/x is defined; given x**2 > 0 (equivalent to x != 0 but not the same
    # formula), the obligation is proved by z3 and the link needs x != 0 in z3's hypotheses
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    got = link(quotient, ">=", 1, x**2 > 0)
    assert got.status is Status.PROVED, got


# -- one link: a disagreement of the routes ------------------------------------------------------------

def test_a_disagreement_on_a_true_identity_is_reported_and_fails(monkeypatch):
    monkeypatch.setattr(smt, "entails", _lying_entails(smt.Verdict.FAILS))
    assert link((x + 1) ** 2, "=", x**2 + 2 * x + 1) == _Link(
        Status.UNPROVED, "the two procedures DISAGREE: SymPy says True (difference is 0 by expand); z3 says False "
        "(planted)", "", True, [])


def test_a_disagreement_on_a_refuted_sign_is_reported_and_fails(monkeypatch):
    monkeypatch.setattr(smt, "entails", _lying_entails(smt.Verdict.HOLDS))
    lo, hi = sp.Rational(999, 1000), sp.Rational(1001, 1000)
    got = link(0, "<", (x - 1) ** 2, x >= lo, x <= hi, domains={x: sp.Interval(lo, hi)})
    assert got == _Link(Status.UNPROVED, "the two procedures DISAGREE: SymPy says False (exact witness x = 1 on "
                        "Interval(999/1000, 1001/1000): the value is 0); z3 says True (planted)", "", True, [])


def test_z3_alone_refuting_a_true_sign_is_a_disagreement(monkeypatch):
    monkeypatch.setattr(smt, "entails", _lying_entails(smt.Verdict.FAILS))
    got = link(0, "<=", x**2)
    assert got.status is Status.UNPROVED and got.disagreement is True and got.route == ""


def test_z3_alone_proving_a_link_sympy_cannot_decide_is_not_a_disagreement(monkeypatch):
    # SymPy cannot use k < R, so only z3 speaks: its (planted) proof stands alone
    monkeypatch.setattr(smt, "entails", _lying_entails(smt.Verdict.HOLDS))
    assert link(R - k, ">=", 1, k < R) == _Link(Status.PROVED, "z3 (nlsat): planted", "z3", False, [])


# -- one link: hypotheses for every index and for every value -------------------------------------------

def test_with_a_hypothesis_for_every_index_nothing_is_refuted():
    f = sp.Function("f", real=True)
    got = link(0, "<", (x - 1) ** 2, quantified=[(j, 1, R, sp.Gt(f(j), 0))])
    assert got == _Link(Status.UNPROVED, NO_PROCEDURE)


def test_with_a_hypothesis_for_every_index_a_sympy_refutation_is_not_reported():
    f = sp.Function("f", real=True)
    got = link(sp.Matrix([[x]]), "=", x, quantified=[(j, 1, R, sp.Gt(f(j), 0))])
    assert got == _Link(Status.UNPROVED, NO_PROCEDURE)


def test_the_sum_rule_never_proves_a_disequality():
    # g >= 0 on 1..n gives Sum(g) >= 0, which says nothing of Sum(g) != 0 (n = 0 makes it 0)
    g = sp.Function("g", real=True)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    got = link(sp.Sum(g(j), (j, 1, n)), "!=", 0, quantified=[(j, 1, n, g(j) >= 0)])
    assert got == _Link(Status.UNPROVED, NO_PROCEDURE)


def test_a_link_no_route_decides_is_refuted_by_the_later_counterexample_search(monkeypatch):
    # the early search (two tries) finds nothing here by construction; the later, longer one does
    def search(lhs, relation, rhs, ctx, tries=None, seed=None):
        return None if tries == 2 else "planted counterexample"

    monkeypatch.setattr(decide, "find_counterexample", search)
    g = sp.Function("g", real=True)
    assert link(g(x), ">", 0) == _Link(Status.REFUTED, "planted counterexample", "exact evaluation", False, [])
    # with a hypothesis for every index, no counterexample is searched for at all
    assert link(g(x), ">", 0, quantified=[(j, 1, R, g(j) > 0)]) == _Link(Status.UNPROVED, NO_PROCEDURE)


def test_the_early_counterexample_search_is_tried_first(monkeypatch):
    seen = []

    def search(lhs, relation, rhs, ctx, tries=None, seed=None):
        seen.append((lhs, relation, rhs, tries, seed, list(ctx.obligations)))
        return "planted early counterexample"

    monkeypatch.setattr(decide, "find_counterexample", search)
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    got = link(quotient, "<", x + 1, sp.Ne(x, 0))
    assert (got.status, got.detail, got.route) == (Status.REFUTED, "planted early counterexample", "exact evaluation")
    assert [o.condition for o in got.obligations] == ["Ne(x, 0)"]
    # the searches see the prepared sides and the sides' definedness conditions
    assert seen == [(sp.Integer(1), "<", x + 1, 2, 1, [sp.Ne(x, 0)])]


def test_with_an_equation_for_every_value_nothing_is_refuted():
    assert link(0, "<", (x - 1) ** 2, universal=True) == _Link(Status.UNPROVED, NO_PROCEDURE)


def test_with_an_equation_for_every_value_a_true_link_is_still_proved():
    assert link(0, "<=", (x - 1) ** 2, universal=True) == \
        _Link(Status.PROVED, "sign from assumptions", "SymPy and z3", False, [])


def test_the_sum_rule_never_proves_an_equation():
    # Sum(f(j), j = 1..R) > 0 for f > 0, so "= 0" is false; under a hypothesis for every index nothing is
    # refuted, and the sum rule, which gives a sign, must not be read as proving the equation
    f = sp.Function("f", positive=True)
    got = link(sp.Sum(f(j), (j, 1, R)), "=", 0, quantified=[(j, 1, R, sp.Gt(f(j), 0))])
    assert got == _Link(Status.UNPROVED, NO_PROCEDURE)


def test_a_false_equation_is_refuted_without_such_hypotheses():
    f = sp.Function("f", positive=True)
    assert link(sp.Sum(f(j), (j, 1, R)), "=", 0).status is Status.REFUTED


# -- one link: the sign rules and the other rewritings --------------------------------------------------

def test_a_sum_of_positive_terms_over_a_symbolic_range_is_positive_by_the_sum_rule():
    f = sp.Function("f", positive=True)
    assert link(sp.Sum(f(j), (j, 1, R)), ">", 0) == \
        _Link(Status.PROVED, "a sum of positive terms over a non-empty range", "sum rule", False, [])
    assert link(0, "<", sp.Sum(f(j), (j, 1, R))) == \
        _Link(Status.PROVED, "a sum of positive terms over a non-empty range", "sum rule", False, [])


def test_a_sum_whose_lower_limit_alone_is_symbolic_goes_to_the_sum_rule_first():
    # the sum rule is tried before SymPy and z3 when any limit is symbolic, not only the upper one
    # (SymPy's assumptions would prove this one too, under another route name)
    f = sp.Function("f", positive=True)
    assert link(sp.Sum(f(j), (j, -R, 0)), ">", 0) == \
        _Link(Status.PROVED, "a sum of positive terms over a non-empty range", "sum rule", False, [])


def test_a_link_proved_by_the_sum_rule_keeps_its_obligations():
    f = sp.Function("f", positive=True)
    assert link(sp.Sum(f(j) / x, (j, 1, R)), ">", 0, x > 0) == _Link(
        Status.PROVED, "a sum of positive terms over a non-empty range", "sum rule", False,
        [ObligationReport("Ne(x, 0)", "1/x: division by x", Status.PROVED, "z3", "x \\neq 0")])


def test_the_sum_rule_states_a_non_strict_sign_for_a_non_strict_link():
    f = sp.Function("f", positive=True)
    assert link(0, "<=", sp.Sum(f(j), (j, 1, R))) == \
        _Link(Status.PROVED, "a sum of non-negative terms", "sum rule", False, [])


def test_the_sum_rule_does_not_prove_the_reversed_inequality():
    # Sum(f) > 0, so Sum(f) < 0 is false: no rule may prove it
    f = sp.Function("f", positive=True)
    assert link(sp.Sum(f(j), (j, 1, R)), "<", 0).status is not Status.PROVED
    assert link(sp.Sum(f(j), (j, 1, R)), "<=", -1).status is not Status.PROVED


def test_a_product_of_positive_factors_is_positive_by_the_product_rule():
    # binomial(R, k) > 0 for 0 <= k <= R, and p^R > 0 for p > 0
    p = sp.Symbol("p", positive=True)
    assert link(sp.binomial(R, k) * p**R, ">", 0, k <= R) == \
        _Link(Status.PROVED, "a product of positive factors", "product rule", False, [])


def test_the_product_rule_needs_the_binomial_in_range():
    p = sp.Symbol("p", positive=True)
    assert link(sp.binomial(R, k) * p**R, ">", 0).status is not Status.PROVED  # k > R gives 0


def test_a_power_of_the_larger_base_is_larger_by_the_power_rule():
    n = sp.Symbol("n", integer=True, nonnegative=True)
    a, b = sp.symbols("a b", positive=True)
    assert link(a**n, ">=", b**n, a >= b) == _Link(
        Status.PROVED, "x -> x^n does not decrease on [0, oo) for the integer n = n >= 0: a >= b >= 0", "power rule",
        False, [])
    assert link(b**n, "<=", a**n, a >= b).route == "power rule"


def test_a_piecewise_takes_the_branch_its_condition_selects():
    step = sp.Piecewise((1, x > 0), (0, True))
    assert link(step, "=", 1, x > 0) == _Link(Status.PROVED, "difference is 0 by direct evaluation", "SymPy and z3",
                                              False, [])
    assert link(step, "=", 1).status is not Status.PROVED  # x = -1 gives 0


def test_the_rank_of_the_identity_of_symbolic_size_is_its_trace():
    from grpo_verify.proof.matrices import MatrixRank, SquareMatrix

    i, l = sp.symbols("i l", integer=True)
    identity = MatrixRank(SquareMatrix(R, sp.Lambda((i, l), sp.KroneckerDelta(i, l))))
    assert link(identity, "=", R) == _Link(
        Status.PROVED, "rank = trace of the idempotent SquareMatrix(R, Lambda((i, l), KroneckerDelta(i, l))); then "
        "difference is 0 by direct evaluation", "symbolic rank rule, SymPy and z3", False, [])
    assert link(R, "=", identity).status is Status.PROVED
    both = link(identity, "=", identity + 0 * R + MatrixRank(SquareMatrix(R, sp.Lambda((i, l), 1))) * 0)
    assert both.status is Status.PROVED
    twice = link(identity, "<=", MatrixRank(SquareMatrix(R, sp.Lambda((i, l), 2 * sp.KroneckerDelta(i, l)
                                                                       - sp.KroneckerDelta(i, l)))))
    assert twice.detail.startswith(
        "rank = trace of the idempotent SquareMatrix(R, Lambda((i, l), KroneckerDelta(i, l))); rank = trace of the "
        "idempotent SquareMatrix(R, Lambda((i, l), KroneckerDelta(i, l))); then "), twice
    refuted = link(identity, "=", R + 1)
    assert refuted.status is Status.REFUTED and refuted.detail.startswith(
        "rank = trace of the idempotent SquareMatrix(R, Lambda((i, l), KroneckerDelta(i, l))); then ")


def test_sign_rule_names_the_rule_that_decided():
    f = sp.Function("f", positive=True)
    ctx = decide.Context()
    total = sp.Sum(f(j), (j, 1, R))
    assert kernel._sign_rule(total, ">", sp.Integer(0), ctx) == \
        _Link(Status.PROVED, "a sum of positive terms over a non-empty range", "sum rule")
    assert kernel._sign_rule(sp.Integer(0), "<", total, ctx) == \
        _Link(Status.PROVED, "a sum of positive terms over a non-empty range", "sum rule")
    assert kernel._sign_rule(sp.Integer(0), "<=", total, ctx) == \
        _Link(Status.PROVED, "a sum of non-negative terms", "sum rule")
    assert kernel._sign_rule(total, ">=", sp.Integer(0), ctx) == \
        _Link(Status.PROVED, "a sum of non-negative terms", "sum rule")
    assert kernel._sign_rule(total, "<", sp.Integer(0), ctx) is None
    assert kernel._sign_rule(total, ">", total, ctx) is None  # false: the difference is 0
    n = sp.Symbol("n", integer=True, nonnegative=True)
    a, b = sp.symbols("a b", positive=True)
    assert kernel._sign_rule(a**n, ">=", b**n, decide.Context(hypotheses=[a >= b])).route == "power rule"
    p = sp.Symbol("p", positive=True)
    assert kernel._sign_rule(sp.binomial(R, k) * p**R, ">", sp.Integer(0), decide.Context(hypotheses=[k <= R])) == \
        _Link(Status.PROVED, "a product of positive factors", "product rule")


def test_relation_builds_the_unevaluated_relation_and_matrix_equations_entrywise():
    built = kernel._relation(sp.Integer(1), "<", sp.Integer(2))
    assert isinstance(built, sp.StrictLessThan) and built.args == (1, 2)  # not evaluated to True
    assert kernel._relation(x, ">=", m) == sp.Ge(x, m)
    assert kernel._relation(sp.Matrix([[x, 1]]), "=", sp.Matrix([[m, 2]])) is sp.false  # the entries 1 = 2
    assert kernel._relation(sp.Matrix([[x, 1]]), "=", sp.Matrix([[m, 1]])) == sp.Eq(x, m)
    assert kernel._relation(sp.Matrix([[x, 1]]), "=", sp.Matrix([[1, m]])) == sp.And(sp.Eq(x, 1), sp.Eq(1, m))
    assert kernel._relation(sp.Matrix([[x, 1]]), "=", sp.Matrix([[m, 1]])) == sp.Eq(x, m)
    assert kernel._relation(sp.Matrix([[x]]), "<=", sp.Matrix([[m]])) is None
    assert kernel._relation(sp.Matrix([[x]]), "=", x) is None
    assert kernel._relation(x, "=", sp.Matrix([[x]])) is None
    assert kernel._relation(sp.Matrix([[x, 1]]), "=", sp.Matrix([[x], [1]])) is None


# -- the consistency of the assumptions -------------------------------------------------------------------

def test_no_assumptions_are_consistent():
    assert kernel._consistency([], decide.Context()) == (True, "no assumptions beyond the symbol domains")
    assert kernel._consistency([sp.true], decide.Context()) == (True, "no assumptions beyond the symbol domains")


def test_a_false_assumption_is_contradictory():
    assert kernel._consistency([x > 0, sp.false], decide.Context()) == (False, "an assumption is false")


def test_contradictory_assumptions_are_found_by_z3():
    assert kernel._consistency([x > 1, x < 0], decide.Context()) == (
        False, "the assumptions are contradictory (z3: unsatisfiable; unsatisfiable: no such assignment over the "
        "reals (z3 nlsat))")


def test_satisfiable_assumptions_have_an_exact_model():
    assert kernel._consistency([x > 1], decide.Context()) == (True, "consistent: z3 found a model, checked exactly")


def test_assumptions_with_an_interpreted_function_are_consistent_by_an_exact_witness():
    # sin(199/100) > 1/2 (199/100 < 5 pi / 6 ~ 2.618)
    assert sp.sin(sp.Rational(199, 100)) > sp.Rational(1, 2)
    assert kernel._consistency([sp.sin(x) > sp.Rational(1, 2)], decide.Context()) == \
        (True, "consistent: every assumption holds exactly at x = 199/100")


def test_assumptions_z3_sees_only_through_an_opaque_interpreted_function_are_refused():
    # sin(x) > 1 and cos(x) > 1 are both impossible; z3 sees sin(x) (the first) as a free number
    assert kernel._consistency([sp.sin(x) > 1, sp.cos(x) > 1], decide.Context()) == (
        False, "refused: the consistency of the assumptions could not be established: z3 sees sin(x) only as an "
        "opaque number, and no exact witness was found")


def test_assumptions_z3_cannot_decide_and_no_witness_meets_are_refused(monkeypatch):
    monkeypatch.setattr(smt, "satisfiable", lambda formulas, timeout_ms=5000: smt.SmtOutcome(smt.Verdict.UNKNOWN,
                                                                                              "timeout"))
    monkeypatch.setattr(decide, "find_witness", lambda conditions, ctx, tries=12, seed=0: None)
    assert kernel._consistency([x > 1], decide.Context()) == (
        False, "refused: the consistency of the assumptions could not be established (z3 undecided, no exact witness)")


def test_assumptions_whose_abstraction_is_satisfiable_are_not_contradictory_as_far_as_seen(monkeypatch):
    monkeypatch.setattr(smt, "satisfiable", lambda formulas, timeout_ms=5000: smt.SmtOutcome(
        smt.Verdict.UNKNOWN, "relaxed: an assignment exists"))
    monkeypatch.setattr(decide, "find_witness", lambda conditions, ctx, tries=12, seed=0: None)
    assert kernel._consistency([x > 1], decide.Context()) == (
        None, "not contradictory as far as the kernel can see: z3 finds the assumptions' arithmetic (sums, "
        "expectations and functions as opaque atoms) satisfiable, but no exact model was found")


def test_a_witness_is_searched_when_z3_is_undecided(monkeypatch):
    monkeypatch.setattr(smt, "satisfiable", lambda formulas, timeout_ms=5000: smt.SmtOutcome(smt.Verdict.UNKNOWN,
                                                                                              "timeout"))
    got = kernel._consistency([x > 1], decide.Context())
    assert got[0] is True and got[1].startswith("consistent: every assumption holds exactly at x = ")


def test_consistency_is_cached_per_assumption_set_and_domains(monkeypatch):
    calls = []
    real = kernel._consistency

    def counting(hypotheses, ctx):
        calls.append(tuple(hypotheses))
        return real(hypotheses, ctx)

    monkeypatch.setattr(kernel, "_consistency", counting)
    monkeypatch.setattr(kernel, "_CONSISTENCY", {})
    hyps = [x > 7]
    first = kernel.consistency(hyps, decide.Context())
    assert kernel.consistency(list(hyps), decide.Context()) == first == (True, "consistent: z3 found a model, checked "
                                                                         "exactly")
    assert len(calls) == 1
    narrow = decide.Context(domains={x: sp.Interval(0, 1)})
    kernel.consistency(hyps, narrow)
    assert len(calls) == 2  # another domain is another set
    assert kernel.consistency(hyps, decide.Context(domains={x: sp.Interval(0, 1)})) == kernel.consistency(hyps, narrow)
    assert len(calls) == 2
    two = {x: sp.Interval(0, 1), m: sp.Interval(2, 3)}  # several domains are put in a canonical order
    assert kernel.consistency(hyps, decide.Context(domains=two)) == (True, "consistent: z3 found a model, checked "
                                                                     "exactly")
    assert kernel.consistency(hyps, decide.Context(domains=dict(reversed(list(two.items()))))) == \
        kernel.consistency(hyps, decide.Context(domains=two))
    assert len(calls) == 3
    # the context reaches the witness search
    assert kernel.consistency([sp.sin(x) > sp.Rational(1, 2)], decide.Context()) == \
        (True, "consistent: every assumption holds exactly at x = 199/100")


# -- a whole result: refusals before the links ---------------------------------------------------------

def test_a_statement_decided_while_it_was_built_is_refused_as_vacuous():
    report = result(lhs=x, rhs=x, relation="<=").check()
    assert report.status is Status.UNPROVED and report.scope == "symbolic" and report.consistency == ""
    (step,) = report.steps
    assert (step.index, step.rule, step.relation, step.status) == (1, "kernel", "<=", Status.UNPROVED)
    assert step.detail == ("vacuous: both sides were identical as built (SymPy decided the claim while it was "
                           "written); build them with as_written")
    assert report.name == "t" and 0 <= report.seconds <= since_import() and 0 <= step.seconds <= since_import()


def test_identical_sides_with_steps_are_decided_by_the_steps():
    report = result(lhs=x, rhs=x, steps=(Step(x + 0 * m, "nothing changes"),)).check()
    assert report.status is Status.PROVED, report.summary()


def test_contradictory_assumptions_refuse_the_result():
    report = result(lhs=x, rhs=x + 1, relation=">",
                    assumptions=(Assumption("x > 1", x > 1), Assumption("x < 0", x < 0))).check()
    text = ("the assumptions are contradictory (z3: unsatisfiable; unsatisfiable: no such assignment over the reals "
            "(z3 nlsat))")
    assert report.status is Status.UNPROVED and report.consistency == text
    (step,) = report.steps
    assert (step.index, step.rule, step.relation, step.status) == (1, "kernel", ">", Status.UNPROVED)
    assert step.detail == f"refused: {text}"
    assert 0 <= step.seconds <= since_import() and 0 <= report.seconds <= since_import() and report.obligations == ()


def test_a_refusal_of_the_consistency_is_not_prefixed_twice():
    report = result(lhs=x, rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("sin x > 1", sp.sin(x) > 1),)).check()
    text = ("refused: the consistency of the assumptions could not be established: z3 sees sin(x) only as an opaque "
            "number, and no exact witness was found")
    assert report.status is Status.UNPROVED and report.consistency == text and report.steps[0].detail == text


def test_a_hypothesis_for_every_index_that_no_integer_meets_is_contradictory():
    # 2 j = 3 has no integer solution, and the range 1..R (R >= 1) is not empty; a real j = 3/2 would meet it
    report = result(lhs=R, rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("2 j = 3 for every j", sp.Eq(2 * j, 3), for_all=(j, 1, R)),)).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail == "refused: an assumption is false"


def test_a_hypothesis_for_every_index_is_tried_inside_its_range():
    # j > R for every j in 1..R is contradictory since the range is not empty (1 <= t <= R < t)
    report = result(lhs=R, rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("j > R for every j", j > R, for_all=(j, 1, R)),)).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail.startswith(
        "refused: the assumptions are contradictory"), report.summary()
    # j < 1 for every j in 1..R is contradictory by the lower end alone
    report = result(lhs=R, rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("j < 1 for every j", j < 1, for_all=(j, 1, R)),)).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail.startswith(
        "refused: the assumptions are contradictory"), report.summary()


def test_two_ranges_each_keep_their_bounds_in_the_consistency_check():
    # the second range 1..R is not empty either: j > R for every j in it is contradictory, even after a
    # hypothesis over another range 2..R + 5 has been put in
    report = result(lhs=R, rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("j > R for every j in 1..R", j > R, for_all=(j, 1, R)),
                                 Assumption("j >= 2 for every j in 2..R + 5", j >= 2, for_all=(j, 2, R + 5)))).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail.startswith(
        "refused: the assumptions are contradictory"), report.summary()


def test_a_consistent_hypothesis_for_every_index_is_only_not_contradictory():
    report = result(lhs=R, rhs=sp.Integer(1), relation=">=",
                    assumptions=(Assumption("j >= 1 for every j", j >= 1, for_all=(j, 1, R)),)).check()
    assert report.status is Status.PROVED
    assert report.consistency == ("not contradictory as far as the kernel can see: z3 finds the assumptions "
                                  "satisfiable with each hypothesis for every index taken at one index")


def test_an_equation_for_every_value_meets_a_pinned_value_and_is_contradictory():
    # f(m) = m for every m gives f(0) = 0, against f(0) = 1
    f = sp.Function("f", real=True)
    report = result(lhs=f(0), rhs=sp.Integer(0),
                    assumptions=(Assumption("f(m) = m", equation=(f(m), m), for_every=(m,)),
                                 Assumption("f(0) = 1", sp.Eq(f(0), 1)))).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail.startswith(
        "refused: the assumptions are contradictory"), report.summary()


def test_an_equation_for_every_value_met_in_the_statement_only_is_contradictory_there():
    # f(m) = m for every m, applied where the statement mentions f(0), meets f(0) = 1 -- written with the
    # pinned value on the statement's side only through the assumption f(0) > 1/2
    f = sp.Function("f", real=True)
    report = result(lhs=f(0), rhs=sp.Integer(1),
                    assumptions=(Assumption("f(m) = m", equation=(f(m), m), for_every=(m,)),
                                 Assumption("f(0) > 1/2", f(0) > sp.Rational(1, 2)))).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail.startswith(
        "refused: the assumptions are contradictory"), report.summary()


def test_a_consistent_equation_for_every_value_is_only_not_contradictory():
    report = result(lhs=sp.Abs(x), rhs=sp.Max(x, -x),
                    assumptions=(Assumption("|m| = max(m, -m)", equation=(sp.Abs(m), sp.Max(m, -m)),
                                            for_every=(m,)),)).check()
    assert report.status is Status.PROVED
    assert report.consistency == ("not contradictory as far as the kernel can see: z3 finds the assumptions "
                                  "satisfiable with each equation for every value taken where the statement and the "
                                  "other assumptions apply it")


def test_a_symbol_declared_even_pinned_to_an_odd_value_is_contradictory():
    even = sp.Symbol("m", integer=True, even=True)
    report = result(lhs=even, rhs=sp.Integer(1), assumptions=(Assumption("m = 1", sp.Eq(even, 1)),)).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail == "refused: an assumption is false"


# -- a whole result: the chain ---------------------------------------------------------------------

def test_a_strict_chain_proves_a_strict_statement():
    report = result(lhs=sp.Integer(0), rhs=x**2 + 1, relation="<",
                    steps=(Step(x**2, "a square", relation="<="), Step(x**2 + 1, "plus one", relation="<"))).check()
    assert report.status is Status.PROVED and report.scope == "symbolic"
    assert [(s.index, s.rule, s.relation, s.status, s.route) for s in report.steps] == [
        (1, "a square", "<=", Status.PROVED, "SymPy and z3"), (2, "plus one", "<", Status.PROVED, "SymPy and z3"),
        (3, "chain ends at the statement's right-hand side", "=", Status.PROVED, "SymPy and z3")]
    assert report.consistency == "no assumptions beyond the symbol domains"
    assert 0 <= report.seconds <= since_import() and all(0 <= s.seconds <= since_import() for s in report.steps)
    assert all(s.disagreement is False for s in report.steps)


def test_a_statement_that_does_not_follow_from_the_chain_is_refuted():
    # every link holds, but 0 <= x^2 <= x^2 + 1 gives only 0 <= x^2 + 1, not the stated 0 < x^2 + 1
    report = result(lhs=sp.Integer(0), rhs=x**2 + 1, relation="<",
                    steps=(Step(x**2, "a square", relation="<="), Step(x**2 + 1, "plus one", relation="<="))).check()
    assert report.status is Status.REFUTED
    assert [s.status for s in report.steps[:3]] == [Status.PROVED] * 3
    last = report.steps[3]
    assert (last.index, last.rule, last.relation, last.status, last.seconds) == (4, "chain relation", "=",
                                                                                 Status.REFUTED, 0.0)
    assert last.detail == "the steps establish '<=', not the stated '<'"


def test_a_chain_that_mixes_directions_establishes_nothing():
    report = result(lhs=sp.Integer(0), rhs=sp.Integer(0), relation="<=",
                    steps=(Step(x**2, "a square", relation="<="), Step(sp.Integer(0), "back", relation=">="))).check()
    assert report.status is Status.REFUTED
    assert report.steps[-1].detail == "the steps establish None, not the stated '<='"


def test_each_link_starts_from_the_previous_step():
    # x^2 + 1 = (x^2 + 1) is proved only if the second link starts from the first step's expression
    report = result(lhs=x**2 + 2 * x + 1, rhs=x**2 + 2 * x + 2, relation="<",
                    steps=(Step((x + 1) ** 2, "factor"), Step((x + 1) ** 2 + 1, "plus one", relation="<"),
                           Step(x**2 + 2 * x + 2, "expand"))).check()
    assert report.status is Status.PROVED, report.summary()
    assert [s.detail for s in report.steps] == ["difference is 0 by expand", "sign from assumptions",
                                                "difference is 0 by expand", "difference is 0 by direct evaluation"]


def test_a_false_link_makes_the_result_refuted_and_later_links_are_still_decided():
    report = result(lhs=sp.Abs(x), rhs=x + 1, relation="<",
                    steps=(Step(x, "drop the absolute value"), Step(x + 1, "plus one", relation="<"))).check()
    assert report.status is Status.REFUTED
    assert [s.status for s in report.steps] == [Status.REFUTED, Status.PROVED, Status.PROVED]
    assert report.steps[0].detail == "counterexample at x = -11/20: right - left = -1.1000000"
    assert report.steps[0].route == "exact evaluation"


def test_checking_can_stop_at_the_first_failing_link():
    claim = result(lhs=sp.Abs(x), rhs=x + 1, relation="<",
                   steps=(Step(x, "drop the absolute value"), Step(x + 1, "plus one", relation="<")))
    report = kernel.check(claim, stop_at_failure=True)
    assert report.status is Status.REFUTED and len(report.steps) == 1
    assert len(kernel.check(claim).steps) == 3


def test_checking_that_stops_at_failure_goes_on_past_passing_links():
    claim = result(lhs=x, rhs=sp.Abs(x) + 1, relation="<",
                   steps=(Step(x + 1, "plus one", relation="<"), Step(sp.Abs(x) + 1, "an absolute value")))
    report = kernel.check(claim, stop_at_failure=True)
    assert [s.status for s in report.steps] == [Status.PROVED, Status.REFUTED], report.summary()


def test_a_step_citing_an_assumption_the_result_does_not_state_is_unproved_and_the_chain_goes_on():
    other = Assumption("elsewhere", equation=(x, m))
    claim = result(lhs=x, rhs=m + 1, relation="<",
                   steps=(Step(m, "rewrite", using=(other,)), Step(m + 1, "plus one", relation="<")))
    report = claim.check()
    assert report.status is Status.UNPROVED
    first = report.steps[0]
    assert (first.index, first.rule, first.relation, first.status) == (1, "rewrite", "=", Status.UNPROVED)
    assert first.detail == "uses the assumption 'elsewhere', which this result does not state"
    assert 0 <= first.seconds <= since_import()
    assert report.steps[1].status is Status.PROVED  # decided from m, the first step's expression
    stopped = kernel.check(claim, stop_at_failure=True).steps
    assert [(s.index, s.detail) for s in stopped] == [(1, first.detail)]


def test_a_cited_equation_assumption_rewrites_in_its_step():
    pinned = Assumption("x = m", equation=(x, m))
    report = result(lhs=x + 1, rhs=m + 1, assumptions=(pinned,), steps=(Step(m + 1, "x is m", using=(pinned,)),)).check()
    assert report.status is Status.PROVED, report.summary()


def test_a_cited_inequality_is_a_hypothesis_of_its_step():
    lemma = result(name="x_below_m", lhs=x, rhs=m, relation="<", assumptions=(Assumption("x < m", x < m),))
    assert lemma.check().status is Status.PROVED
    report = result(lhs=x, rhs=m, relation="<", assumptions=(Assumption("x < m", x < m),),
                    steps=(Step(m, "the lemma", relation="<", using=(lemma,)),)).check()
    assert report.status is Status.PROVED, report.summary()


def test_the_obligations_of_every_link_are_reported_once():
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    report = result(lhs=quotient, rhs=sp.Integer(2), relation="<", assumptions=(Assumption("x != 0", sp.Ne(x, 0)),),
                    steps=(Step(sp.Integer(1), "cancel"), Step(sp.Integer(2), "one is less", relation="<"))).check()
    assert report.status is Status.PROVED
    assert report.obligations == (ObligationReport("Ne(x, 0)", "1/x: division by x", Status.PROVED, "an assumption",
                                                   "x \\neq 0"),)


def test_obligations_from_two_links_are_all_reported():
    quotient = sp.Mul(x, 1 / x, evaluate=False)
    other = sp.Mul(m, 1 / m, evaluate=False)
    report = result(lhs=quotient, rhs=other,
                    assumptions=(Assumption("x != 0", sp.Ne(x, 0)), Assumption("m != 0", sp.Ne(m, 0))),
                    steps=(Step(sp.Integer(1), "cancel"), Step(other, "uncancel"))).check()
    assert report.status is Status.PROVED
    assert [o.condition for o in report.obligations] == ["Ne(x, 0)", "Ne(m, 0)"]


def test_a_link_undecided_symbolically_falls_back_to_each_value():
    # 2^R >= R + 1 for R = 1..4: 2 >= 2, 4 >= 3, 8 >= 4, 16 >= 5
    report = result(lhs=2**R, rhs=R + 1, relation=">=", fallback=ForEach.range(R, 1, 4)).check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "R = 1..4"
    assert report.steps[0].detail == "decided exactly for each R = 1..4"
    assert report.steps[0].status is Status.PROVED_FOR_RANGE and len(report.steps) == 1  # no closing step


def test_a_fallback_is_not_used_for_a_link_proved_symbolically():
    report = result(lhs=R + 1, rhs=R, relation=">", fallback=ForEach.range(R, 1, 4)).check()
    assert report.status is Status.PROVED and report.scope == "symbolic"


def test_a_result_for_each_value_is_proved_for_that_range():
    report = result(lhs=2**R, rhs=R + 1, relation=">=", for_each=ForEach.range(R, 1, 3)).check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "R = 1..3"
    assert report.steps[0].status is Status.PROVED_FOR_RANGE


def test_a_step_for_each_value_is_proved_for_that_range():
    report = result(lhs=2**R, rhs=R + 1, relation=">=",
                    steps=(Step(R + 1, "each value", relation=">=", for_each=ForEach(R, (1, 2, 5))),)).check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "R in {1, 2, 5}"
    two = result(lhs=2**R, rhs=R, relation=">=",
                 steps=(Step(R + 1, "each value", relation=">=", for_each=ForEach(R, (1, 2, 5))),
                        Step(R, "minus one", relation=">", for_each=ForEach.range(R, 1, 3)))).check()
    assert two.status is Status.PROVED_FOR_RANGE and two.scope == "R in {1, 2, 5}; R = 1..3", two.summary()


def test_the_summary_lists_the_steps_with_their_routes():
    report = result(lhs=(x + 1) ** 2, rhs=x**2 + 2 * x + 1).check()
    lines = report.summary().splitlines()
    assert lines[0].startswith("t: proved (symbolic; ")
    assert lines[1] == "  assumptions: no assumptions beyond the symbol domains"
    assert lines[2].startswith("  step 1 [direct computation] proved via SymPy and z3: difference is 0 by expand (")


# -- a whole result: the kernel never raises --------------------------------------------------------

def test_an_exception_while_checking_is_an_unproved_status(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("planted crash")

    monkeypatch.setattr(kernel, "decide_link", broken)
    report = kernel.check(result(lhs=x + 1, rhs=1 + x, relation=">=", steps=(Step(1 + x, "commutativity",
                                                                                  relation=">="),)))
    assert report.status is Status.UNPROVED and report.name == "t" and report.scope == "symbolic"
    (step,) = report.steps
    assert (step.index, step.rule, step.relation, step.status) == (1, "kernel", ">=", Status.UNPROVED)
    assert step.detail == "the kernel could not check this result: RuntimeError: planted crash"
    assert 0 <= step.seconds <= since_import() and 0 <= report.seconds <= since_import()
    assert report.consistency == "" and report.obligations == ()


# -- the derived facts and the instances of an equation for every value (direct: their output is what the
#    consistency check is given, and a missing fact shows only as a contradiction not found) ------------

def test_a_pinned_symbol_is_put_into_the_other_hypotheses():
    # n = 1 makes Sum(r_j, j = 1..n) the single term r_1
    n = sp.Symbol("n", integer=True, nonnegative=True)
    r = sp.IndexedBase("r", real=True)
    assert kernel._derived_facts([sp.Eq(n, 1), sp.Sum(r[j], (j, 1, n)) > 0], decide.Context()) == [r[1] > 0]


def test_a_hypothesis_false_at_the_pinned_value_is_derived_false():
    n = sp.Symbol("n", integer=True, nonnegative=True)
    assert kernel._derived_facts([sp.Eq(n, 1), n > 1], decide.Context()) == [sp.false]


def test_a_hypothesis_true_at_the_pinned_value_adds_nothing():
    n = sp.Symbol("n", integer=True, nonnegative=True)
    assert kernel._derived_facts([sp.Eq(n, 1), n >= 1], decide.Context()) == []
    assert kernel._derived_facts([x > 0], decide.Context()) == []


def test_a_derived_fact_already_assumed_is_not_repeated():
    n = sp.Symbol("n", integer=True, nonnegative=True)
    # at n = 1, x > n becomes x > 1, which is assumed already
    assert kernel._derived_facts([sp.Eq(n, 1), x > n, x > 1], decide.Context()) == []


def test_a_pinned_value_outside_the_declared_domain_is_contradictory():
    k0 = sp.Symbol("k", integer=True)
    even = sp.Symbol("e", integer=True, even=True)
    p = sp.Symbol("p", positive=True)
    assert kernel._derived_facts([sp.Eq(even, k0 + 1), sp.Eq(k0, 0)], decide.Context()) == [sp.false]  # e = 1
    assert kernel._derived_facts([sp.Eq(p, k0 - 1), sp.Eq(k0, 0)], decide.Context()) == [sp.false]  # p = -1
    assert kernel._derived_facts([sp.Eq(even, k0 + 2), sp.Eq(k0, 0)], decide.Context()) == []  # e = 2 is even
    assert kernel._derived_facts([sp.Eq(p, k0 + 1), sp.Eq(k0, 0)], decide.Context()) == []  # p = 1 > 0


def test_a_sum_over_a_symbolic_range_gets_the_sign_of_its_terms():
    f = sp.Function("f", real=True)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    positive_r = decide.Context(quantified=[(j, 1, R, f(j) > 0)])
    assert kernel._derived_facts([sp.Sum(f(j), (j, 1, R)) < 1], positive_r) == [sp.Sum(f(j), (j, 1, R)) > 0]
    # 1..n may be empty: only >= 0
    positive_n = decide.Context(quantified=[(j, 1, n, f(j) > 0)])
    assert kernel._derived_facts([sp.Sum(f(j), (j, 1, n)) < 1], positive_n) == [sp.Sum(f(j), (j, 1, n)) >= 0]
    negative_r = decide.Context(quantified=[(j, 1, R, f(j) < 0)])
    assert kernel._derived_facts([sp.Sum(f(j), (j, 1, R)) < 1], negative_r) == [sp.Sum(f(j), (j, 1, R)) < 0]
    negative_n = decide.Context(quantified=[(j, 1, n, f(j) < 0)])
    assert kernel._derived_facts([sp.Sum(f(j), (j, 1, n)) < 1], negative_n) == [sp.Sum(f(j), (j, 1, n)) <= 0]


def test_a_sum_over_a_fixed_range_gets_no_derived_sign():
    f = sp.Function("f", real=True)
    assert kernel._derived_facts([sp.Sum(f(j), (j, 1, 3)) < 1], decide.Context(quantified=[(j, 1, 3, f(j) > 0)])) \
        == []


def test_pinned_values_and_sum_signs_are_derived_together():
    f = sp.Function("f", real=True)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    got = kernel._derived_facts([sp.Eq(n, 1), sp.Sum(f(j), (j, 1, n)) < 1], decide.Context(quantified=[(j, 1, n,
                                                                                                      f(j) > 0)]))
    assert got == [f(1) < 1, sp.Sum(f(j), (j, 1, n)) >= 0]


def test_an_equation_for_every_value_is_instantiated_where_it_applies():
    h = sp.Function("h", real=True)
    claim = result(lhs=h(2), rhs=sp.Integer(2),
                   assumptions=(Assumption("plain", x > 0), Assumption("x = m", equation=(x, m)),
                                Assumption("h(m) = m", equation=(h(m), m), for_every=(m,)),
                                Assumption("h(0) > 1/2", h(0) > sp.Rational(1, 2))))
    got = kernel._universal_instances(claim, kernel.context_of(claim))
    # h(m) itself (in the hypotheses), h(0) in an assumption and h(2) in the statement; the plain equation
    # x = m is not instantiated
    assert got == [sp.Eq(h(m), m), sp.Eq(h(0), 0), sp.Eq(h(2), 2)]


def test_an_equation_for_every_value_is_instantiated_in_the_steps():
    h = sp.Function("h", real=True)
    claim = result(lhs=x, rhs=x, assumptions=(Assumption("h(m) = m", equation=(h(m), m), for_every=(m,)),),
                   steps=(Step(h(3) - 3 + x, "h is the identity"),))
    got = kernel._universal_instances(claim, decide.Context())
    assert got == [sp.Eq(h(3), 3)]


def test_an_equation_for_every_value_needs_every_variable_matched():
    h = sp.Function("h", real=True)
    claim = result(lhs=h(1, x), rhs=sp.Integer(1),
                   assumptions=(Assumption("h(m, y) = m", equation=(h(m, x), m), for_every=(m, x)),))
    assert kernel._universal_instances(claim, decide.Context()) == [sp.Eq(h(1, x), 1)]
    plain = result(lhs=h(1, x), rhs=sp.Integer(1), assumptions=(Assumption("h(m, x) = m", equation=(h(m, x), m)),))
    assert kernel._universal_instances(plain, decide.Context()) == []


# -- definedness obligations and the smoothing rule (direct) --------------------------------------------

def test_a_hypothesis_about_a_free_symbol_says_nothing_of_a_bound_one():
    # Sum(1/j, j = -1..1) divides by 0 at j = 0; j > 0 speaks of a free j
    reports, failure = kernel.discharge([sp.Sum(1 / j, (j, -1, 1))], decide.Context(hypotheses=[j > 0]), {})
    assert failure == "not shown to be defined: 1/j: division by j (needs Ne(j, 0))"
    assert reports == [ObligationReport("Ne(j, 0)", "1/j: division by j", Status.UNPROVED, "", "j \\neq 0")]


def test_hypotheses_about_other_symbols_still_serve_a_bound_obligation():
    # j + m != 0 for j in 1..3 needs m > 0
    reports, failure = kernel.discharge([sp.Sum(1 / (j + m), (j, 1, 3))], decide.Context(hypotheses=[m > 0]), {})
    assert failure == ""
    assert reports == [ObligationReport("Ne(j + m, 0)", "1/(j + m): division by j + m", Status.PROVED, "z3",
                                        "j + m \\neq 0")]


def test_discharge_reports_the_first_failure_and_every_obligation():
    reports, failure = kernel.discharge([1 / x, 1 / m], decide.Context(), {})
    assert failure == "not shown to be defined: 1/x: division by x (needs Ne(x, 0))"
    assert [r.condition for r in reports] == ["Ne(x, 0)", "Ne(m, 0)"]
    reports, failure = kernel.discharge([1 / x, 1 / m], decide.Context(hypotheses=[sp.Ne(x, 0)]), {})
    assert failure == "not shown to be defined: 1/m: division by m (needs Ne(m, 0))"
    assert [r.status for r in reports] == [Status.PROVED, Status.UNPROVED]


def test_discharge_reuses_its_cache():
    cache: dict = {}
    first = kernel.discharge([1 / x], decide.Context(hypotheses=[sp.Ne(x, 0)]), cache)
    assert first == ([ObligationReport("Ne(x, 0)", "1/x: division by x", Status.PROVED, "an assumption",
                                       "x \\neq 0")], "")
    # the cached answer stands for the same obligation (the cache belongs to one result's context)
    assert kernel.discharge([1 / x], decide.Context(), cache) == first


def test_an_unsupported_construct_is_a_definedness_failure():
    reports, failure = kernel.discharge([sp.Sum(1 / j, (j, 1, sp.oo))], decide.Context(), {})
    assert reports == [] and failure.startswith("Sum(1/j, (j, 1, oo)): infinite sums and products are not supported")


def test_a_kinked_derivative_is_discharged_by_a_smoothing_equation_on_an_open_set():
    derivative = sp.Derivative(sp.Max(x, -x), x)
    around = [(sp.Max(x, -x), x, frozenset({x}), frozenset())]
    reports, failure = kernel.discharge([derivative], decide.Context(hypotheses=[x > 0], rewrites=around), {})
    assert failure == "" and [(r.status, r.route) for r in reports] == [
        (Status.PROVED, "smooth after rewriting, on an open set")]
    reports, failure = kernel.discharge([derivative], decide.Context(hypotheses=[x > 0]), {})
    assert failure.startswith("not shown to be defined: d/dx of Max(-x, x): Max is not differentiable everywhere")


def _kink(point=None, variable=x, function=None):
    function = sp.Max(variable, -variable) if function is None else function
    point = None if point is None else sp.Integer(point)
    return definedness.Obligation(sp.false, "kinked", kink=(function, variable, point, 1))


def test_smoothing_needs_an_equation_valid_where_the_derivative_is_taken():
    here = (sp.Max(x, -x), x, frozenset({x}), frozenset())  # holds around the current point
    everywhere = (sp.Max(x, -x), x, frozenset(), frozenset({x}))  # holds identically, for Subs at a point
    smooth = (True, "smooth after rewriting, on an open set")
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(hypotheses=[x > 0], rewrites=[here])) == smooth
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(hypotheses=[x > 0], rewrites=[everywhere])) == \
        (False, "")
    assert kernel.smooth_by_rewriting(_kink(1), decide.Context(hypotheses=[x > 0], rewrites=[everywhere])) == smooth
    assert kernel.smooth_by_rewriting(_kink(1), decide.Context(hypotheses=[x > 0], rewrites=[here])) == (False, "")
    # a rewrite pair without the validity sets is not used
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(hypotheses=[x > 0], rewrites=[(sp.Max(x, -x), x)])) == \
        (False, "")
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(
        hypotheses=[x > 0], rewrites=[(sp.Max(x, -x), x, frozenset({x}))])) == (False, "")


def test_smoothing_needs_the_rewritten_function_smooth():
    other = (sp.Max(x, 2 * x), 2 * x, frozenset({x}), frozenset())  # does not touch Max(x, -x)
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(hypotheses=[x > 0], rewrites=[other])) == (False, "")
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(hypotheses=[x > 0])) == (False, "")
    still_kinked = (sp.Max(x, -x), sp.Abs(x), frozenset({x}), frozenset())  # |x| kinks at 0 as well
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(hypotheses=[x > 0], rewrites=[still_kinked])) == \
        (False, "")


def test_smoothing_needs_an_open_set():
    here = (sp.Max(x, -x), x, frozenset({x}), frozenset())
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(hypotheses=[x >= 0], rewrites=[here])) == (False, "")
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(
        hypotheses=[x > 0], rewrites=[here], domains={x: sp.Interval(0, 1)})) == (False, "")
    assert kernel.smooth_by_rewriting(_kink(), decide.Context(
        hypotheses=[x > 0], rewrites=[here], domains={x: sp.Interval.open(0, 1)})) == \
        (True, "smooth after rewriting, on an open set")


def test_smoothing_at_a_point_needs_the_point_admissible():
    everywhere = (sp.Max(x, -x), x, frozenset(), frozenset({x}))
    assert kernel.smooth_by_rewriting(_kink(-1), decide.Context(hypotheses=[x > 0], rewrites=[everywhere])) == \
        (False, "")
    # x > m at the point 1 needs m < 1 from the context
    assert kernel.smooth_by_rewriting(_kink(1), decide.Context(hypotheses=[x > m, m < 1], rewrites=[everywhere])) == \
        (True, "smooth after rewriting, on an open set")
    assert kernel.smooth_by_rewriting(_kink(1), decide.Context(hypotheses=[x > m], rewrites=[everywhere])) == \
        (False, "")
    # a conjunction must hold at the point as a whole: m < 1 gives 1 > m, nothing gives 1 < k
    k_ = sp.Symbol("k_", real=True)
    both = sp.And(x > m, x < k_)
    assert kernel.smooth_by_rewriting(_kink(1), decide.Context(hypotheses=[both, m < 1], rewrites=[everywhere])) == \
        (False, "")
    assert kernel.smooth_by_rewriting(_kink(1), decide.Context(hypotheses=[both, m < 1, k_ > 1],
                                                               rewrites=[everywhere])) == \
        (True, "smooth after rewriting, on an open set")
    # no hypothesis on x: every point is admissible, 0 included
    assert kernel.smooth_by_rewriting(_kink(0), decide.Context(rewrites=[everywhere])) == \
        (True, "smooth after rewriting, on an open set")


def test_smoothing_at_a_point_needs_the_point_in_the_declared_sign():
    p = sp.Symbol("p", positive=True)
    q = sp.Symbol("q", negative=True)
    nz = sp.Symbol("z", real=True, nonzero=True)
    smooth = (True, "smooth after rewriting, on an open set")
    for v, good, bad in ((p, 2, -1), (q, -2, 1), (nz, 3, 0)):
        f = sp.Abs(v - 7)
        rewrite = (f, 7 - v, frozenset(), frozenset({v}))
        assert kernel.smooth_by_rewriting(_kink(good, v, f), decide.Context(rewrites=[rewrite])) == smooth, v
        assert kernel.smooth_by_rewriting(_kink(bad, v, f), decide.Context(rewrites=[rewrite])) == (False, ""), v


def test_a_result_by_induction_is_decided_by_its_base_case_and_step():
    from grpo_verify.proof import Induction

    n = sp.Symbol("n", integer=True)
    claim = result(lhs=2**n, rhs=n + 1, relation=">=", assumptions=(Assumption("n >= 0", n >= 0),),
                   induction=Induction(n, 0))
    report = claim.check()
    assert report.status is Status.PROVED, report.summary()
    assert [s.rule for s in report.steps] == ["base case n = 0", "inductive step n -> n + 1 (the statement at n assumed)"]
    assert report.consistency == "consistent: z3 found a model, checked exactly"


def test_a_result_by_the_mean_value_rule_is_decided_by_its_point_and_slope():
    from grpo_verify.proof.result import MinimumAt

    claim = result(lhs=x**2 - 2 * x + 1, rhs=sp.Integer(0), relation=">=", minimum_at=MinimumAt(x, sp.Integer(1)))
    report = claim.check()
    assert report.status is Status.PROVED, report.summary()
    assert [s.rule for s in report.steps] == ["the difference is >= 0 at x = 1",
                                              "the slope times (x - 1) is >= 0 on the interval"]
    assert report.consistency == "no assumptions beyond the symbol domains"


def test_a_disagreement_in_a_rule_step_is_flagged_in_its_report(monkeypatch):
    # z3 (planted) refutes every goal it decides, SymPy proves each step: each step of an induction and of the
    # mean-value rule must carry the disagreement to the result's report, not read as a plain failure
    from grpo_verify.proof.result import Induction, MinimumAt

    monkeypatch.setattr(smt, "entails", _lying_entails(smt.Verdict.FAILS))
    n = sp.Symbol("n", integer=True, nonnegative=True)
    by_induction = result(lhs=(n + 1) ** 2, rhs=n**2 + 2 * n + 1, induction=Induction(n, 0)).check()
    by_minimum = result(lhs=x**2 - 2 * x + 1, rhs=sp.Integer(0), relation=">=",
                        minimum_at=MinimumAt(x, sp.Integer(1))).check()
    for report in (by_induction, by_minimum):
        assert report.status is Status.UNPROVED, report.summary()
        assert [(s.index, s.disagreement) for s in report.steps] == [(1, True), (2, True)], report.summary()
        assert [s.index for s in report.disagreements] == [1, 2]


def test_a_hypothesis_for_every_index_is_checked_at_a_fresh_integer_named_t():
    # sin(j) > 1 for every j in 1..R: impossible, and z3 sees sin at the fresh index t only as a number
    report = result(lhs=R, rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("sin j > 1 for every j", sp.sin(j) > 1, for_all=(j, 1, R)),)).check()
    text = ("refused: the consistency of the assumptions could not be established: z3 sees sin(_t) only as an opaque "
            "number, and no exact witness was found")
    assert report.status is Status.UNPROVED and report.consistency == text and report.steps[0].detail == text


def test_a_rank_rule_link_discharges_the_obligations_of_the_rewritten_sides():
    from grpo_verify.proof.matrices import MatrixRank, SquareMatrix

    i, l = sp.symbols("i l", integer=True)
    identity = MatrixRank(SquareMatrix(R, sp.Lambda((i, l), sp.KroneckerDelta(i, l))))
    got = link(identity / x, "=", R / x, sp.Ne(x, 0))
    assert got.status is Status.PROVED and got.route == "symbolic rank rule, SymPy and z3", got


def test_the_later_counterexample_and_the_undecided_link_keep_their_obligations(monkeypatch):
    def search(lhs, relation, rhs, ctx, tries=None, seed=None):
        return None if tries == 2 else "planted counterexample"

    monkeypatch.setattr(decide, "find_counterexample", search)
    g = sp.Function("g", real=True)
    defined = [ObligationReport("Ne(x, 0)", "1/x: division by x", Status.PROVED, "an assumption", "x \\neq 0")]
    assert link(g(x) / x, ">", 0, sp.Ne(x, 0)) == _Link(Status.REFUTED, "planted counterexample", "exact evaluation",
                                                        False, defined)
    assert link(g(x) / x, ">", 0, sp.Ne(x, 0), quantified=[(j, 1, R, g(j) > 0)]) == \
        _Link(Status.UNPROVED, NO_PROCEDURE, "", False, defined)


def test_a_side_not_a_real_number_and_a_z3_refutation_keep_the_obligations():
    defined = [ObligationReport("Ne(x, 0)", "1/x: division by x", Status.PROVED, "an assumption", "x \\neq 0")]
    assert link(1 / x, "=", sp.zoo, sp.Ne(x, 0)) == \
        _Link(Status.UNPROVED, "a side evaluates to zoo, which is not a real number", "", False, defined)
    # m (1/m) - 1 is 0 where defined, and 0 < x^2 fails at x = 0
    got = link(sp.Mul(m, 1 / m, evaluate=False) - 1, "<", x**2, sp.Ne(m, 0))
    assert (got.status, got.route) == (Status.REFUTED, "z3"), got
    assert got.obligations == [ObligationReport("Ne(m, 0)", "1/m: division by m", Status.PROVED, "an assumption",
                                                "m \\neq 0")]


def test_a_piecewise_on_the_right_side_takes_its_branch_too():
    step = sp.Piecewise((1, x > 0), (0, True))
    assert link(1, "=", step, x > 0) == _Link(Status.PROVED, "difference is 0 by direct evaluation", "SymPy and z3",
                                              False, [])


def test_a_sympy_refutation_keeps_the_obligations():
    lo, hi = sp.Rational(999, 1000), sp.Rational(1001, 1000)
    got = link(sp.Mul(m, 1 / m, evaluate=False) - 1, "<", (x - 1) ** 2, x >= lo, x <= hi, sp.Ne(m, 0),
               domains={x: sp.Interval(lo, hi)})
    assert (got.status, got.route) == (Status.REFUTED, "SymPy"), got
    assert got.obligations == [ObligationReport("Ne(m, 0)", "1/m: division by m", Status.PROVED, "an assumption",
                                                "m \\neq 0")]


def test_sympy_alone_proves_a_trigonometric_identity():
    # z3 sees sin(x) and cos(x) as free numbers
    got = link(sp.sin(x) ** 2 + sp.cos(x) ** 2, "=", 1)
    assert (got.status, got.route) == (Status.PROVED, "SymPy"), got


def test_a_z3_proof_and_a_power_rule_proof_keep_the_obligations():
    defined = [ObligationReport("Ne(m, 0)", "1/m: division by m", Status.PROVED, "an assumption", "m \\neq 0")]
    one = sp.Mul(m, 1 / m, evaluate=False)  # 1 where defined
    got = link(one + R - k, ">=", 2, k < R, sp.Ne(m, 0))
    assert (got.status, got.route, got.obligations) == (Status.PROVED, "z3", defined), got
    n = sp.Symbol("n", integer=True, nonnegative=True)
    a, b = sp.symbols("a b", positive=True)
    got = link(sp.Mul(m, 1 / m, a**n, evaluate=False), ">=", b**n, a >= b, sp.Ne(m, 0))
    assert (got.status, got.route, got.obligations) == (Status.PROVED, "power rule", defined), got


def test_a_sum_over_a_symbolic_range_goes_to_the_sum_rule_first():
    f = sp.Function("f", positive=True)
    assert link(sp.Sum(f(j), (j, 1, R)), ">=", 0) == \
        _Link(Status.PROVED, "a sum of non-negative terms", "sum rule", False, [])
    assert link(sp.Sum(f(j), (j, k, 3)), ">=", 0, k <= 3).route == "sum rule"  # a symbolic lower limit


def test_sums_that_cancel_leave_the_link_to_the_routes():
    f = sp.Function("f", positive=True)
    p, q = sp.symbols("p q", positive=True)
    total = sp.Sum(f(j), (j, 1, R))
    assert link(total + p * q, ">", total) == _Link(Status.PROVED, "sign from assumptions", "SymPy and z3", False, [])


def test_a_disagreement_is_listed_in_the_result_report(monkeypatch):
    monkeypatch.setattr(smt, "entails", _lying_entails(smt.Verdict.FAILS))
    report = result(lhs=(x + 1) ** 2, rhs=x**2 + 2 * x + 1).check()
    assert report.status is Status.UNPROVED
    assert [(s.index, s.disagreement, s.route) for s in report.disagreements] == [(1, True, "")]


def test_a_disagreement_keeps_the_obligations(monkeypatch):
    monkeypatch.setattr(smt, "entails", _lying_entails(smt.Verdict.FAILS))
    got = link(sp.Mul(m, 1 / m, evaluate=False) + (x + 1) ** 2 - 1, "=", x**2 + 2 * x + 1, sp.Ne(m, 0))
    assert got.disagreement is True and got.status is Status.UNPROVED
    assert got.obligations == [ObligationReport("Ne(m, 0)", "1/m: division by m", Status.PROVED, "an assumption",
                                                "m \\neq 0")]


def test_a_hypothesis_against_the_sign_the_sum_rule_gives_is_contradictory():
    # f(j) > 0 for every j in 1..R makes Sum(f(j), j = 1..R) > 0, against the assumed Sum < 0
    f = sp.Function("f", real=True)
    report = result(lhs=R, rhs=sp.Integer(0), relation=">",
                    assumptions=(Assumption("f > 0", f(j) > 0, for_all=(j, 1, R)),
                                 Assumption("Sum f < 0", sp.Sum(f(j), (j, 1, R)) < 0))).check()
    assert report.status is Status.UNPROVED and report.steps[0].detail.startswith(
        "refused: the assumptions are contradictory"), report.summary()


def test_a_sum_with_a_symbolic_lower_limit_gets_a_derived_sign():
    f = sp.Function("f", real=True)
    k0 = sp.Symbol("k", integer=True)
    ctx = decide.Context(quantified=[(j, k0, 3, f(j) > 0)])
    assert kernel._derived_facts([sp.Sum(f(j), (j, k0, 3)) < 1], ctx) == [sp.Sum(f(j), (j, k0, 3)) >= 0]


def test_a_condition_marked_for_every_value_without_an_equation_gives_no_instances():
    claim = result(lhs=x + 1, rhs=x, relation=">", assumptions=(Assumption("x > 0", x > 0, for_every=(m,)),))
    assert kernel._universal_instances(claim, decide.Context()) == []
    assert claim.check().status is Status.PROVED


def test_z3_is_given_the_kernels_time_limit(monkeypatch):
    # every z3 call of a link (the link itself and its obligations) runs under SMT_TIMEOUT_MS, not smt's default
    seen = []
    real = smt.entails

    def spy(hypotheses, goal, timeout_ms=5000):
        seen.append(timeout_ms)
        return real(hypotheses, goal, timeout_ms)

    monkeypatch.setattr(smt, "entails", spy)
    monkeypatch.setattr(kernel, "SMT_TIMEOUT_MS", 1234)
    assert link(1 / x, ">", 0, x > 0).status is Status.PROVED  # z3 on the link and on its obligation x != 0
    assert len(seen) >= 2 and set(seen) == {1234}, seen


def test_the_consistency_check_gives_z3_the_kernels_time_limit(monkeypatch):
    seen = []
    real = smt.satisfiable

    def spy(formulas, timeout_ms=5000):
        seen.append(timeout_ms)
        return real(formulas, timeout_ms)

    monkeypatch.setattr(smt, "satisfiable", spy)
    monkeypatch.setattr(kernel, "SMT_TIMEOUT_MS", 1234)
    # _consistency itself: kernel.consistency keeps its answers for the session, so an earlier test's
    # check of the same assumptions would leave z3 uncalled
    assert kernel._consistency([x > 0], decide.Context()) == (True, "consistent: z3 found a model, checked exactly")
    assert seen == [1234]
