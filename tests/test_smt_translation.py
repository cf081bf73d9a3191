"""The z3 route's translation, exact checks and search loop (grpo_verify.proof.smt), pinned exactly.

Each test states one behaviour with an expected value worked out by hand: a verdict on a formula
whose truth is known, an exact model or detail message, the conditions ``definedness`` lists.
Every object is built inside its test (mutation testing imports this module before a mutant is on).
"""

import math

import pytest
import sympy as sp
import z3

from grpo_verify.proof import smt
from grpo_verify.proof.smt import Verdict, definedness, entails, satisfiable, translatable


def _reals(names):
    return sp.symbols(names, real=True)


def gt(lhs, rhs):
    """lhs > rhs as written."""
    return sp.StrictGreaterThan(lhs, rhs, evaluate=False)


class _Clock:
    """A stand-in for the time module: monotonic() returns the given readings, then the last."""

    def __init__(self, *readings):
        self.readings = list(readings)

    def monotonic(self):
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]


# --- Integers: the second pass runs whenever any atom is an integer ------------------------------
def test_integer_pass_runs_when_an_integer_atom_precedes_a_real_one():
    """0 < k < 1 has no integer k: the integer pass must run even though the last atom, x, is real."""
    x = sp.Symbol("x", real=True)
    k = sp.Symbol("k", integer=True)
    out = satisfiable([gt(k, 0), k < 1, gt(x, 0)])
    assert out.verdict is Verdict.FAILS
    assert out.detail == "unsatisfiable: no such assignment with integer symbols as integers (z3)"


def test_integer_constants_are_int_sorted_only_in_the_integer_pass():
    """3 is z3's Int 3 when integers are Int-sorted, the real 3 otherwise."""
    as_int = smt._Translation(integers=True).term(sp.Integer(3))
    as_real = smt._Translation(integers=False).term(sp.Integer(3))
    assert z3.is_int(as_int) and as_int.as_long() == 3
    assert z3.is_real(as_real) and z3.simplify(as_real == 3)


# --- Refusals carry their reason ------------------------------------------------------------------
def test_float_term_is_refused_with_its_reason():
    """A float reaching the translation is refused, naming the float."""
    with pytest.raises(smt._Unsupported) as err:
        smt._Translation(integers=False).term(sp.Float(0.5))
    assert str(err.value) == f"floats are not exact: {sp.Float(0.5)}"


def test_non_real_number_is_unknown_with_its_reason():
    """(-1)**(1/3) is SymPy's complex principal root: refused, and the detail names it."""
    x, y = _reals("x y")
    out = entails([], sp.Eq(x * sp.Pow(-1, sp.Rational(1, 3)), y))
    assert out.verdict is Verdict.UNKNOWN and out.detail == "(-1)**(1/3) is not known to be real"


def test_exponent_limit_is_a_thousand_inclusive():
    """x**1000 is translated; x**1001 is refused with the reason."""
    x = sp.Symbol("x", real=True)
    assert translatable(x**1000)
    assert not translatable(x**1001)
    out = entails([], x**1001 >= 0)
    assert out.verdict is Verdict.UNKNOWN and out.detail == "exponent too large: x**1001"


def test_unknown_detail_names_the_non_real_function_value():
    """g(x) for g declared real=False is refused, not abstracted: a trivial entailment stays unknown."""
    x, y = _reals("x y")
    g = sp.Function("g", real=False)
    out = entails([sp.Eq(g(x), g(y))], sp.Eq(g(x), g(y)))
    assert out.verdict is Verdict.UNKNOWN and out.detail == "g(x) is not known to be a real number"


def test_unknown_detail_names_the_undeclared_function_value():
    """h(x) for h with no assumptions may be complex: refused, and the detail names it."""
    x, y = _reals("x y")
    h = sp.Function("h")
    out = entails([sp.Eq(h(x), h(y))], sp.Eq(h(x), h(y)))
    assert out.verdict is Verdict.UNKNOWN and out.detail == "h(x) is not known to be a real number"


def test_search_reports_a_refused_float_as_unknown_and_inexact():
    """_search's refusal tuple: kind 'unknown', no model, the reason, not exact."""
    x = sp.Symbol("x", real=True)
    assert smt._search([gt(x, sp.Float(0.5))], [], 1000) == (
        "unknown", None, "floats are not exact: x > 0.5", False)


def test_search_reports_an_untranslatable_term_as_unknown_and_inexact():
    """_search's tuple for a term outside the fragment: 'unknown', no model, the reason, not exact."""
    x, y = _reals("x y")
    h = sp.Function("h")
    assert smt._search([sp.Eq(h(x), y)], [], 1000) == (
        "unknown", None, "h(x) is not known to be a real number", False)


# --- Powers -----------------------------------------------------------------------------------------
def test_zeroth_power_is_one():
    """An unevaluated x**0 translates to 1: x**0 == 1 is proved exactly."""
    x = sp.Symbol("x", real=True)
    zeroth = sp.Pow(x, 0, evaluate=False)
    assert translatable(zeroth)
    out = entails([], sp.Eq(zeroth, 1))
    assert out.verdict is Verdict.HOLDS and out.exact


def test_first_power_is_the_base_with_no_condition():
    """An unevaluated x**1 is x: no radicand or denominator condition, and x**1 == x holds outright."""
    x = sp.Symbol("x", real=True)
    first = sp.Pow(x, 1, evaluate=False)
    assert definedness(first) == []
    out = entails([], sp.Eq(first, x))
    assert out.verdict is Verdict.HOLDS and out.detail == "proved: no such assignment over the reals (z3 nlsat)"


def test_three_halves_power_is_the_cube_of_the_square_root():
    """4**(3/2) = 8: x**(3/2) is (sqrt x)**3, not sqrt x."""
    x = sp.Symbol("x", real=True)
    out = entails([sp.Eq(x, 4)], sp.Eq(x ** sp.Rational(3, 2), 8))
    assert out.verdict is Verdict.HOLDS
    assert definedness(x ** sp.Rational(3, 2)) == [x >= 0]


def test_radicand_condition_is_stated_on_the_radicand_as_written():
    """(4x)**(3/2) needs 4x >= 0, stated of 4x itself (the root is not re-evaluated into 2 sqrt(x))."""
    x = sp.Symbol("x", real=True)
    assert definedness(sp.Pow(4 * x, sp.Rational(3, 2), evaluate=False)) == [4 * x >= 0]


def test_reciprocal_may_take_non_integer_values():
    """1/x = 2/3 at x = 3/2: the inverse is a real, not an integer, variable."""
    x = sp.Symbol("x", real=True)
    out = satisfiable([sp.Eq(1 / x, sp.Rational(2, 3))])
    assert out.verdict is Verdict.HOLDS and out.model == {x: sp.Rational(3, 2)}


def test_square_root_of_zero_is_zero():
    """sqrt(x) = 0 at x = 0: neither the root nor the radicand is forced positive or >= 1."""
    x = sp.Symbol("x", real=True)
    out = satisfiable([sp.Eq(sp.sqrt(x), 0)])
    assert out.verdict is Verdict.HOLDS and out.model == {x: 0}


def test_a_repeated_denominator_gets_one_inverse_variable():
    """1/x twice: the same z3 variable and one defining equation q*x == 1."""
    x = sp.Symbol("x", real=True)
    tr = smt._Translation(integers=False)
    first, second = tr.term(1 / x), tr.term(1 / x)
    assert first.eq(second) and len(tr.side) == 1 and tr.conditions == [sp.Ne(x, 0)]


def test_a_repeated_radicand_gets_one_root_variable():
    """sqrt(x) twice: the same z3 variable and one set of defining constraints (s >= 0, x >= 0, s*s == x)."""
    x = sp.Symbol("x", real=True)
    tr = smt._Translation(integers=False)
    first, second = tr.term(sp.sqrt(x)), tr.term(sp.sqrt(x))
    assert first.eq(second) and len(tr.side) == 3 and tr.conditions == [x >= 0]


# --- Congruence of opaque atoms -----------------------------------------------------------------------
def test_equal_arguments_give_equal_function_values():
    """x = y entails f(x) = f(y) for an abstracted real function f (functional consistency)."""
    x, y = _reals("x y")
    f = sp.Function("f", real=True)
    assert entails([sp.Eq(x, y)], sp.Eq(f(x), f(y))).verdict is Verdict.HOLDS


def test_congruence_skips_only_the_pair_with_untranslatable_arguments():
    """f(u) (u not real) between f(x) and f(y): the pair f(x), f(y) still gets its constraint."""
    x, y = _reals("x y")
    u = sp.Symbol("u")
    f = sp.Function("f", real=True)
    out = entails([sp.Eq(x, y), gt(f(x), 0), gt(f(u), 0)], sp.Eq(f(x), f(y)))
    assert out.verdict is Verdict.HOLDS


def test_congruence_pairs_the_first_atom_with_the_third_of_four():
    """x = z entails f(x) = f(z) with f(y), f(w) also present: every pair of atoms is constrained."""
    x, y, z, w = _reals("x y z w")
    f = sp.Function("f", real=True)
    hypotheses = [sp.Eq(x, z), gt(f(x), 0), gt(f(y), 0), gt(f(z), 0), gt(f(w), 0)]
    assert entails(hypotheses, sp.Eq(f(x), f(z))).verdict is Verdict.HOLDS


def test_different_functions_are_not_identified():
    """f(x) = g(x) for two unrelated real functions is not proved."""
    x = sp.Symbol("x", real=True)
    f, g = sp.Function("f", real=True), sp.Function("g", real=True)
    assert entails([], sp.Eq(f(x), g(x))).verdict is Verdict.UNKNOWN


def test_entries_of_different_indexed_bases_are_not_identified():
    """r[1] != s[1] is satisfiable exactly: r and s are different sequences."""
    r, s = sp.IndexedBase("r", real=True), sp.IndexedBase("s", real=True)
    out = satisfiable([sp.Ne(r[1], s[1])])
    assert out.verdict is Verdict.HOLDS and out.model[r[1]] != out.model[s[1]]


# --- Abstraction of subterms real wherever defined ------------------------------------------------------
def test_a_real_object_that_is_not_an_expression_is_refused():
    """SymPy's AssumptionsWrapper is real but not an Expr: refused as a term, never abstracted."""
    from sympy.assumptions.wrapper import AssumptionsWrapper

    x, y = _reals("x y")
    wrapped = AssumptionsWrapper(x, sp.Q.positive(x))
    out = entails([sp.Eq(wrapped, y)], sp.Eq(wrapped, y))
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == "AssumptionsWrapper(x, Q.positive(x)) is not known to be a real number"


def test_logarithm_of_a_real_symbol_is_abstracted():
    """log(x) > 0 entails itself: log(x) is real where defined, so it is abstracted, not refused."""
    x = sp.Symbol("x", real=True)
    out = entails([gt(sp.log(x), 0)], gt(sp.log(x), 0))
    assert out.verdict is Verdict.HOLDS and not out.exact


def test_logarithm_of_an_undeclared_function_value_is_refused():
    """log(h(x)) with h possibly complex is refused, not abstracted."""
    x, y = _reals("x y")
    h = sp.Function("h")
    out = entails([sp.Eq(sp.log(h(x)), y)], sp.Eq(sp.log(h(x)), y))
    assert out.verdict is Verdict.UNKNOWN and out.detail == "log(h(x)) is not known to be a real number"


def test_sum_of_undeclared_function_values_is_refused():
    """Sum(h(j)) with h possibly complex is refused even though its limits are real."""
    y = sp.Symbol("y", real=True)
    j, n = sp.Symbol("j", integer=True), sp.Symbol("n", integer=True, positive=True)
    h = sp.Function("h")
    total = sp.Sum(h(j), (j, 1, n))
    out = entails([sp.Eq(total, y)], sp.Eq(total, y))
    assert out.verdict is Verdict.UNKNOWN and out.detail == f"{total} is not known to be a real number"


def test_sum_of_logarithms_over_an_integer_range_is_abstracted():
    """Sum(log(j), (j, 1, n)) is real where defined: abstracted, so S > 0 entails S > 0."""
    j, n = sp.Symbol("j", integer=True), sp.Symbol("n", integer=True, positive=True)
    total = sp.Sum(sp.log(j), (j, 1, n))
    assert entails([gt(total, 0)], gt(total, 0)).verdict is Verdict.HOLDS


# --- Exact conversion of z3's algebraic values --------------------------------------------------------------
def test_irrational_model_with_roots_a_little_apart_is_confirmed():
    """x**2 = 2/10**10: roots +-sqrt(2)/10**5 are far apart at 10**-39, so the model is exact."""
    x = sp.Symbol("x", real=True)
    c = sp.Rational(2, 10**10)
    out = satisfiable([sp.Eq(x**2, c)])
    assert out.verdict is Verdict.HOLDS and out.model[x] ** 2 == c and out.model[x].is_irrational


def test_irrational_model_with_roots_1_5e_39_apart_is_confirmed():
    """x**2 = 57/10**80: the roots are 1.5e-39 apart, more than the 1e-39 window: exact model."""
    x = sp.Symbol("x", real=True)
    c = sp.Rational(57, 10**80)
    out = satisfiable([sp.Eq(x**2, c)])
    assert out.verdict is Verdict.HOLDS and out.model[x] ** 2 == c


def test_irrational_model_with_roots_within_the_window_is_not_confirmed():
    """x**2 = 2/10**80: both roots lie within 1e-39 of z3's approximation, so which one is unclear."""
    x = sp.Symbol("x", real=True)
    out = satisfiable([sp.Eq(x**2, sp.Rational(2, 10**80))])
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == "over the reals (z3 nlsat): z3's assignment could not be confirmed exactly"


def test_irrational_model_with_roots_just_inside_the_window_is_not_confirmed():
    """x**2 = 25/10**80 + 10**-89: roots 1e-39 + ~1e-49 apart, still both within 1e-39 of the 40-digit
    approximation: not confirmed."""
    x = sp.Symbol("x", real=True)
    out = satisfiable([sp.Eq(x**2, sp.Rational(25, 10**80) + sp.Rational(10, 10**90)), x < 0])
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == "over the reals (z3 nlsat): z3's assignment could not be confirmed exactly"


# --- Exact signs and truth at an assignment ---------------------------------------------------------------
def test_sign_of_irrational_numbers_is_plus_or_minus_one():
    """sqrt(2) has sign 1, 1 - sqrt(2) sign -1 (the sign, not a magnitude)."""
    assert smt._sign(sp.sqrt(2)) == 1
    assert smt._sign(1 - sp.sqrt(2)) == -1
    assert smt._sign(-sp.sqrt(3)) == -1


def test_sign_is_unknown_where_sympy_cannot_separate_from_zero():
    """sqrt(2) minus its 200-digit truncation is positive, but SymPy cannot tell: no sign, not -1."""
    a = sp.Rational(math.isqrt(2 * 10**400), 10**200)
    assert smt._sign(sp.sqrt(2) - a) is None


def test_sign_is_unknown_for_a_number_not_known_real():
    """(-1)**(1/3) - (-1)**(2/3) - 1 is zero, but SymPy does not know it is real: no sign."""
    d = sp.Pow(-1, sp.Rational(1, 3)) - sp.Pow(-1, sp.Rational(2, 3)) - 1
    assert smt._sign(d) is None


def test_sign_is_unknown_for_an_expression_with_free_symbols():
    """x**2 + 1 is positive, but _sign decides closed numbers only."""
    x = sp.Symbol("x", real=True)
    assert smt._sign(x**2 + 1) is None


def test_truth_of_the_boolean_constants():
    """true is true and false is false at any assignment."""
    assert smt._truth(sp.true, {}) is True
    assert smt._truth(sp.false, {}) is False


def test_false_goal_has_a_confirmed_counterexample():
    """x > 0 does not entail false: every assignment with x > 0 is a checked counterexample."""
    x = sp.Symbol("x", real=True)
    out = entails([gt(x, 0)], sp.false)
    assert out.verdict is Verdict.FAILS and out.model[x] > 0


def test_true_is_satisfied_by_the_empty_assignment():
    """{true} is satisfiable, by the empty assignment."""
    out = satisfiable([sp.true])
    assert out.verdict is Verdict.HOLDS and out.model == {}


def test_truth_is_undecided_with_a_symbol_left_unassigned():
    """x = x with x unassigned: undecided, even though the difference of the sides is 0."""
    x = sp.Symbol("x", real=True)
    assert smt._truth(sp.Eq(x, x, evaluate=False), {}) is None


def test_unevaluated_tautology_about_an_untranslated_symbol_is_not_confirmed():
    """x**0 = x**0 leaves x out of the translation, so the model cannot be checked exactly."""
    x = sp.Symbol("x", real=True)
    zeroth = sp.Pow(x, 0, evaluate=False)
    out = satisfiable([sp.Eq(zeroth, zeroth, evaluate=False)])
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == "over the reals (z3 nlsat): z3's assignment could not be confirmed exactly"


def test_truth_is_undecided_when_a_sign_is_undecided():
    """1 != pi: _sign cannot decide a transcendental difference, so the relation is undecided."""
    x = sp.Symbol("x", real=True)
    assert smt._truth(sp.Ne(x, sp.pi), {x: sp.Integer(1)}) is None


def test_truth_of_a_connective_with_an_undecided_part_is_undecided():
    """Or(1 != pi, 1 > 0): one part undecided makes the whole undecided, not true."""
    x = sp.Symbol("x", real=True)
    assert smt._truth(sp.Or(sp.Ne(x, sp.pi), gt(x, 0)), {x: sp.Integer(1)}) is None


def test_truth_of_an_unknown_connective_is_undecided():
    """Xor is outside the logic: undecided, even with both parts decided."""
    x, y = _reals("x y")
    assert smt._truth(sp.Xor(gt(x, 0), gt(y, 0)), {x: sp.Integer(1), y: sp.Integer(1)}) is None


# --- Time budget, with a fake clock ---------------------------------------------------------------------
def test_no_time_left_is_reported_as_out_of_time(monkeypatch):
    """Past the deadline before z3 starts: UNKNOWN, detail 'out of time'."""
    x = sp.Symbol("x", real=True)
    monkeypatch.setattr(smt, "time", _Clock(0.0, 10.0))
    out = entails([], gt(x, 0), timeout_ms=1000)
    assert out.verdict is Verdict.UNKNOWN and out.detail == "out of time"


def test_under_one_millisecond_left_is_out_of_time(monkeypatch):
    """0.9995 ms left rounds down to 0 ms: out of time (milliseconds, not 1/1001 s)."""
    x = sp.Symbol("x", real=True)
    monkeypatch.setattr(smt, "time", _Clock(0.0, 1.0 - 0.0009995))
    assert entails([], gt(x, 0), timeout_ms=1000).detail == "out of time"


def test_one_millisecond_left_still_runs_z3(monkeypatch):
    """1.5 ms left of a 1000 ms budget: z3 is still called (with 1 ms), so not 'out of time'."""
    x = sp.Symbol("x", real=True)
    monkeypatch.setattr(smt, "time", _Clock(0.0, 0.9985))
    assert "out of time" not in entails([], gt(x, 0), timeout_ms=1000).detail


def test_entails_default_budget_is_five_seconds(monkeypatch):
    """At 4.9995 s only 0.5 ms of the default 5000 ms is left: out of time."""
    x = sp.Symbol("x", real=True)
    monkeypatch.setattr(smt, "time", _Clock(0.0, 4.9995))
    assert entails([], gt(x, 0)).detail == "out of time"


def test_satisfiable_default_budget_is_five_seconds(monkeypatch):
    """At 4.9995 s only 0.5 ms of the default 5000 ms is left: out of time."""
    x = sp.Symbol("x", real=True)
    monkeypatch.setattr(smt, "time", _Clock(0.0, 4.9995))
    assert satisfiable([gt(x, 0)]).detail == "out of time"


def test_nlsat_seed_is_zero():
    """x**3 - 2x > 1: nlsat with seed 0 answers x = -3/4 (seed 1 answers 2): the run is reproducible."""
    x = sp.Symbol("x", real=True)
    assert satisfiable([x**3 - 2 * x > 1]).model == {x: sp.Rational(-3, 4)}


# --- Outcomes: exact details and fields --------------------------------------------------------------------
def test_counterexample_detail_names_the_model():
    """x > 1 fails at a checked model, and the detail says so exactly."""
    x = sp.Symbol("x", real=True)
    out = entails([], gt(x, 1))
    assert out.verdict is Verdict.FAILS
    assert out.detail == f"counterexample: {out.model} over the reals (z3 nlsat), checked exactly in SymPy"


def test_unsatisfiable_outcome_fields():
    """x > 1 and x < 0: FAILS, exact, no model, and the exact detail."""
    x = sp.Symbol("x", real=True)
    out = satisfiable([gt(x, 1), x < 0])
    assert out.verdict is Verdict.FAILS and out.model is None and out.exact is True
    assert out.detail == "unsatisfiable: no such assignment over the reals (z3 nlsat)"


def test_satisfied_detail_names_the_model():
    """x = 2 is satisfied by {x: 2}, and the detail says so exactly."""
    x = sp.Symbol("x", real=True)
    out = satisfiable([sp.Eq(x, 2)])
    assert out.model == {x: 2}
    assert out.detail == "satisfied by {x: 2} over the reals (z3 nlsat), checked exactly in SymPy"


def test_translatable_accepts_terms():
    """A polynomial term (not a formula) is in the fragment."""
    x = sp.Symbol("x", real=True)
    assert translatable(x**2 + 1)


def test_definedness_looks_inside_untranslatable_terms():
    """1/u for u not known real: definedness still lists Ne(u, 0) rather than refusing."""
    u = sp.Symbol("u")
    assert definedness(1 / u) == [sp.Ne(u, 0)]


# --- Refusals and the lenient walk of definedness -------------------------------------------------------------
def test_infinity_inside_an_abstractable_function_value_is_refused():
    """f(oo) for a real f would be abstracted, but oo anywhere refuses the formula outright: a trivial
    entailment stays unknown, and the detail names the refused formula."""
    f = sp.Function("f", real=True)
    out = entails([gt(f(sp.oo), 0)], gt(f(sp.oo), 0))
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == "oo, zoo, nan, I, AccumBounds are not translated: f(oo) > 0"


def test_unsupported_logical_construct_is_unknown_naming_its_class_and_formula():
    """Xor is outside the logic: UNKNOWN, and the detail names the class and the formula."""
    x, y = _reals("x y")
    out = entails([], sp.Xor(gt(x, 0), gt(y, 0)))
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == "unsupported logical construct Xor: (x > 0) ^ (y > 0)"


def test_definedness_looks_inside_the_relations_of_an_unsupported_connective():
    """Xor(1/x > 0, sqrt(y) > 0): its relations are still visited, so 1/x and sqrt(y) give their conditions."""
    x, y = _reals("x y")
    assert definedness(sp.Xor(gt(1 / x, 0), gt(sp.sqrt(y), 0))) == [sp.Ne(x, 0), y >= 0]


def test_definedness_looks_inside_the_terms_of_an_unsupported_formula():
    """Contains(1/x, [0, 1]): its term argument 1/x is visited as a term, so Ne(x, 0) is listed."""
    x = sp.Symbol("x", real=True)
    assert definedness(sp.Contains(1 / x, sp.Interval(0, 1), evaluate=False)) == [sp.Ne(x, 0)]


# --- The search loop: z3 errors, unknowns, relaxations, models ---------------------------------------------------
class _FailingNlsat:
    """A stand-in for z3.Tactic whose solver takes settings and assertions, then fails in check() as z3
    does on an internal error (no formula in the fragment is known to make nlsat raise)."""

    def __init__(self, name):
        self.name = name

    def solver(self):
        return self

    def set(self, *args):
        pass

    def add(self, *args):
        pass

    def check(self):
        raise z3.Z3Exception("max. memory exceeded")


def _katsura():
    """Katsura-4 with a positive product: nlsat does not decide it within seconds."""
    x, y, z, w = _reals("x y z w")
    return [sp.Eq(x**2 + 2 * y**2 + 2 * z**2 + 2 * w**2 - x, 0), sp.Eq(2 * x * y + 2 * y * z + 2 * z * w - y, 0),
            sp.Eq(y**2 + 2 * x * z + 2 * y * w - z, 0), sp.Eq(x + 2 * y + 2 * z + 2 * w - 1, 0),
            gt(x * y * z * w, sp.Rational(1, 1000))]


def test_z3_error_is_reported_as_unknown_with_its_message(monkeypatch):
    """nlsat raising on x > 0 (stand-in solver): UNKNOWN, and the detail names the pass and z3's message."""
    x = sp.Symbol("x", real=True)
    monkeypatch.setattr(z3, "Tactic", _FailingNlsat)
    out = satisfiable([gt(x, 0)])
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == "over the reals (z3 nlsat): z3 error max. memory exceeded"


def test_z3_error_in_the_real_pass_still_lets_the_integer_pass_decide(monkeypatch):
    """0 < k < 1 with nlsat raising (stand-in solver): the integer pass still runs and finds no integer k."""
    k = sp.Symbol("k", integer=True)
    monkeypatch.setattr(z3, "Tactic", _FailingNlsat)
    out = satisfiable([gt(k, 0), k < 1])
    assert out.verdict is Verdict.FAILS
    assert out.detail == "unsatisfiable: no such assignment with integer symbols as integers (z3)"


def test_timeout_in_the_real_pass_still_lets_the_integer_pass_decide(monkeypatch):
    """Katsura-4 and 0 < k < 1: nlsat times out in its 100 ms (fake clock), the integer pass gets the whole
    second back and finds no integer k."""
    k = sp.Symbol("k", integer=True)
    monkeypatch.setattr(smt, "time", _Clock(0.0, 0.9, 0.0))
    out = satisfiable([*_katsura(), gt(k, 0), k < 1], timeout_ms=1000)
    assert out.verdict is Verdict.FAILS
    assert out.detail == "unsatisfiable: no such assignment with integer symbols as integers (z3)"


def test_relaxed_detail_lists_every_relaxation_separated_by_semicolons():
    """log(x) > 0 and exp(y) > 2: both abstracted, so an assignment is not confirmed; the detail lists both."""
    x, y = _reals("x y")
    out = satisfiable([gt(sp.log(x), 0), gt(sp.exp(y), 2)])
    assert out.verdict is Verdict.UNKNOWN
    assert out.detail == ("over the reals (z3 nlsat): an assignment exists, but the translation is relaxed: "
                          "abstracted log(x); abstracted exp(y)")


def test_unknown_detail_joins_the_notes_of_both_passes_by_semicolons():
    """k > 0 and log(x) > 0: each pass finds an assignment of a relaxed translation; both notes, in order."""
    x, k = sp.Symbol("x", real=True), sp.Symbol("k", integer=True)
    out = satisfiable([gt(k, 0), gt(sp.log(x), 0)])
    assert out.verdict is Verdict.UNKNOWN and out.exact is False
    assert out.detail == ("over the reals (z3 nlsat): an assignment exists, but the translation is relaxed: "
                          "integer k relaxed to a real; abstracted log(x); "
                          "with integer symbols as integers (z3): an assignment exists, but the translation is "
                          "relaxed: abstracted log(x)")


def test_symbol_that_z3_simplifies_away_still_gets_a_value():
    """x = x (unevaluated) leaves x out of z3's model: model completion gives it 0, which checks exactly."""
    x = sp.Symbol("x", real=True)
    out = satisfiable([sp.Eq(x, x, evaluate=False)])
    assert out.verdict is Verdict.HOLDS and out.model == {x: 0}


def test_search_reports_a_confirmed_assignment_as_sat_and_exact():
    """_search's tuple for x = 2: 'sat', the model {x: 2}, the detail, exact."""
    x = sp.Symbol("x", real=True)
    assert smt._search([sp.Eq(x, 2)], [], 1000) == (
        "sat", {x: 2}, "{x: 2} over the reals (z3 nlsat), checked exactly in SymPy", True)


def test_search_reports_unconfirmed_passes_as_unknown_and_inexact():
    """_search's tuple when neither pass confirms an assignment: 'unknown', no model, the notes, not exact."""
    x, k = sp.Symbol("x", real=True), sp.Symbol("k", integer=True)
    assert smt._search([gt(k, 0), gt(sp.log(x), 0)], [], 5000) == (
        "unknown", None,
        "over the reals (z3 nlsat): an assignment exists, but the translation is relaxed: "
        "integer k relaxed to a real; abstracted log(x); "
        "with integer symbols as integers (z3): an assignment exists, but the translation is relaxed: "
        "abstracted log(x)", False)
