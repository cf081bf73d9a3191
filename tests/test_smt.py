"""The kernel's z3 decision procedure (grpo_verify.proof.smt): verdicts, soundness guards."""

import operator
import time

import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from grpo_verify.proof import smt
from grpo_verify.proof.smt import Verdict, definedness, entails, satisfiable, translatable

x, y, p = sp.symbols("x y p", real=True)
a, b, c = sp.symbols("a b c", nonnegative=True)
k, R = sp.symbols("k R", integer=True)
i, j = sp.symbols("i j", integer=True)
n = sp.Symbol("n", integer=True, positive=True)
r = sp.IndexedBase("r", real=True)
Q = sp.Rational
HALF = Q(1, 2)


def gt(lhs, rhs):
    """lhs > rhs as written (SymPy would itself evaluate x**2 + 1 > 0 to True)."""
    return sp.StrictGreaterThan(lhs, rhs, evaluate=False)


def ge(lhs, rhs):
    return sp.GreaterThan(lhs, rhs, evaluate=False)


def unevaluated_x_over_x():
    return sp.Mul(x, sp.Pow(x, -1, evaluate=False), evaluate=False)


# --- Real polynomial arithmetic: truths hold, near-truths fail with an exact counterexample ------
def test_square_plus_one_is_positive():
    out = entails([], gt(x**2 + 1, 0))
    assert out.verdict is Verdict.HOLDS and out.exact and out.model is None


def test_square_of_difference_is_nonnegative():
    assert entails([], ge((x - 1) ** 2, 0)).verdict is Verdict.HOLDS
    assert entails([], x**2 - 2 * x + 1 >= 0).verdict is Verdict.HOLDS


def test_tiny_positive_margin_fails_at_the_exact_root():
    out = entails([], x**2 - 2 * x + 1 >= Q(1, 10**90))
    assert out.verdict is Verdict.FAILS and out.exact
    assert out.model == {x: 1}
    assert (x**2 - 2 * x + 1).subs(out.model) < Q(1, 10**90)


def test_tiny_gap_between_roots_on_an_interval_fails():
    eps = Q(1, 10**150)
    out = entails([x >= 0, x <= 2], (x - 1) * (x - 1 - eps) >= 0)
    assert out.verdict is Verdict.FAILS
    value = out.model[x]
    assert isinstance(value, sp.Rational) and 1 < value < 1 + eps  # strictly between the roots


def test_am_gm_two_and_three_variables():
    assert entails([], x**2 + y**2 >= 2 * x * y).verdict is Verdict.HOLDS
    assert entails([], (a + b) / 2 >= sp.sqrt(a * b)).verdict is Verdict.HOLDS
    assert entails([], a**3 + b**3 + c**3 >= 3 * a * b * c).verdict is Verdict.HOLDS
    assert entails([], (a + b + c) / 3 >= sp.cbrt(a * b * c)).verdict is Verdict.HOLDS
    # ... and the reverse inequality is refuted
    assert entails([], (a + b) / 2 <= sp.sqrt(a * b)).verdict is Verdict.FAILS


def test_strict_bound_on_bernoulli_collision_fails_at_one_half():
    out = entails([p >= 0, p <= 1], p**2 + (1 - p) ** 2 > HALF)
    assert out.verdict is Verdict.FAILS and out.model == {p: HALF}


def test_nonstrict_bound_on_bernoulli_collision_holds():
    assert entails([p >= 0, p <= 1], p**2 + (1 - p) ** 2 >= HALF).verdict is Verdict.HOLDS


def test_tight_bounds_are_not_vacuous():
    # x >= 1 and x <= 1 leave x = 1; a translation making either strict would "prove" anything.
    out = entails([x >= 1, x <= 1], sp.Eq(x, 2))
    assert out.verdict is Verdict.FAILS and out.model == {x: 1}


def test_abs_min_max_are_exact():
    assert entails([], sp.Abs(x) >= x).verdict is Verdict.HOLDS
    assert entails([], sp.Max(x, y) >= sp.Min(x, y)).verdict is Verdict.HOLDS
    assert entails([], sp.And(sp.Min(x, y) <= x, sp.Max(x, y) >= y)).verdict is Verdict.HOLDS
    out = entails([], sp.Max(x, y) > sp.Min(x, y))
    assert out.verdict is Verdict.FAILS and out.model[x] == out.model[y]


# --- Partial operations: proved wherever defined; definedness lists the conditions --------------
def test_x_over_x_holds_where_defined_and_the_condition_is_reported():
    goal = sp.Eq(unevaluated_x_over_x(), 1)
    out = entails([], goal)
    # The encoding's q*x == 1 excludes x = 0: the claim is "x/x == 1 wherever x/x is defined".
    assert out.verdict is Verdict.HOLDS and "Ne(x, 0)" in out.detail
    assert definedness(goal) == [sp.Ne(x, 0)]
    assert definedness(unevaluated_x_over_x()) == [sp.Ne(x, 0)]
    # The condition is not free: for an unconditional claim the caller must discharge it, and can't.
    undefined_somewhere = entails([], definedness(goal)[0])
    assert undefined_somewhere.verdict is Verdict.FAILS and undefined_somewhere.model == {x: 0}
    assert entails(definedness(goal), goal).verdict is Verdict.HOLDS


def test_definedness_lists_denominators_and_radicands():
    assert definedness(sp.sqrt(x) + 1 / (y - 1)) == [x >= 0, sp.Ne(y - 1, 0)]
    assert definedness(x**2 + y) == []
    pos = sp.Symbol("pos", positive=True)
    assert definedness(1 / pos + sp.sqrt(pos)) == []  # SymPy proves them: nothing to discharge
    assert definedness(sp.log(1 / x)) == []  # abstracted subterms are opaque


def test_sqrt_of_square_is_not_the_identity_for_real_y():
    for lhs in (sp.sqrt(y**2), sp.Pow(y**2, HALF, evaluate=False)):  # Abs(y), and the raw power
        out = entails([], sp.Eq(lhs, y))
        assert out.verdict is Verdict.FAILS and out.model[y] < 0


def test_sqrt_of_square_is_the_identity_for_positive_y():
    yp = sp.Symbol("y", positive=True)
    assert entails([], sp.Eq(sp.Pow(yp**2, HALF, evaluate=False), yp)).verdict is Verdict.HOLDS


def test_sqrt_is_the_nonnegative_root():
    assert entails([x >= 0], sp.sqrt(x) >= 0).verdict is Verdict.HOLDS
    assert satisfiable([sp.Eq(sp.sqrt(x), -1)]).verdict is Verdict.FAILS
    assert satisfiable([sp.Eq(sp.sqrt(x), 3)]).model == {x: 9}


def test_rational_powers():
    assert entails([x >= 0], x ** Q(2, 3) >= 0).verdict is Verdict.HOLDS
    out = entails([x >= 0], x ** Q(2, 3) >= x)
    assert out.verdict is Verdict.FAILS and out.model[x] > 1
    assert entails([x > 0], x**-2 > 0).verdict is Verdict.HOLDS


# --- Integers -----------------------------------------------------------------------------------
def test_integer_gap_is_proved_by_the_integer_pass():
    kr, Rr = sp.symbols("k R", real=True)
    assert entails([kr > 0, kr < Rr], Rr - kr >= 1).verdict is Verdict.FAILS  # false over reals
    out = entails([k > 0, k < R], R - k >= 1)
    assert out.verdict is Verdict.HOLDS and "integer" in out.detail


def test_nonlinear_integer_facts():
    assert entails([k > 1], k**2 >= k + 2).verdict is Verdict.HOLDS
    assert entails([k > 0, R > 0, sp.Eq(k * R, 6)], k + R >= 5).verdict is Verdict.HOLDS


def test_integer_counterexample_is_integral():
    out = entails([k > 0], k >= 2)
    assert out.verdict is Verdict.FAILS and out.model == {k: 1}
    assert isinstance(out.model[k], sp.Integer)


def test_unencoded_assumptions_never_give_a_counterexample():
    m = sp.Symbol("m", even=True)  # m > 0 implies m >= 2, but only "integer" is encoded
    assert entails([m > 0], m >= 2).verdict is Verdict.UNKNOWN
    assert entails([m > 0], m >= 1).verdict is Verdict.HOLDS  # what is encoded still proves


# --- satisfiable ----------------------------------------------------------------------------------
def test_satisfiable_contradiction_fails():
    assert satisfiable([x > 1, x < 0]).verdict is Verdict.FAILS


def test_satisfiable_returns_a_checked_model():
    out = satisfiable([x > 1])
    assert out.verdict is Verdict.HOLDS and out.exact and out.model[x] > 1


def test_satisfiable_with_an_irrational_algebraic_model():
    out = satisfiable([sp.Eq(x**3 - x - 1, 0)])
    assert out.verdict is Verdict.HOLDS
    root = out.model[x]
    t = sp.Dummy()
    assert sp.minimal_polynomial(root**3 - root - 1, t) == t  # exactly a root
    assert satisfiable([sp.Eq(x**2, 2), x < 0]).model == {x: -sp.sqrt(2)}


# --- Abstraction: sound for proofs and for unsatisfiability, never gives a counterexample -------
def test_contradiction_about_an_abstracted_sum_is_unsatisfiable():
    s = sp.Sum(r[i], (i, 1, n))
    out = satisfiable([s > 0, s < 0])
    assert out.verdict is Verdict.FAILS and not out.exact
    assert satisfiable([s > 0]).verdict is Verdict.UNKNOWN  # a model of the abstraction: no proof


def test_abstraction_never_fails_entails():
    out = entails([], sp.exp(x) >= 2)
    assert out.verdict is Verdict.UNKNOWN and "abstracted exp(x)" in out.detail
    assert entails([], sp.Function("f", real=True)(x) > 0).verdict is Verdict.UNKNOWN


def test_abstracted_atoms_keep_sympy_sign_facts():
    assert entails([sp.exp(x) <= y], y > 0).verdict is Verdict.HOLDS  # exp(x) > 0, strictly
    out = entails([x > 0], sp.pi * x > 0)
    assert out.verdict is Verdict.HOLDS and not out.exact


# --- Outside the fragment: UNKNOWN, never an exception --------------------------------------------
def test_complex_symbol_is_unknown():
    z = sp.Symbol("z")
    out = entails([], z**2 >= 0)
    assert out.verdict is Verdict.UNKNOWN and "z" in out.detail
    f = sp.Function("f")  # complex-valued: f(x)**2 == -1 is satisfiable (f(x) = I)
    assert satisfiable([sp.Eq(f(x) ** 2, -1)]).verdict is Verdict.UNKNOWN
    root = sp.Eq((-1) ** Q(1, 3), x, evaluate=False)  # (-1)**(1/3) is not real: never "undefined"
    assert entails([], root).verdict is Verdict.UNKNOWN


def test_float_is_unknown():
    out = entails([], x >= sp.Float(0.5))
    assert out.verdict is Verdict.UNKNOWN and "float" in out.detail
    assert satisfiable([x > sp.Float(1) / 3]).verdict is Verdict.UNKNOWN
    # even inside an abstracted subterm (where the abstraction alone would be unsatisfiable)
    assert satisfiable([sp.exp(sp.Float(0.5) * x) < y, y < 0]).verdict is Verdict.UNKNOWN


def test_infinity_and_imaginary_unit_are_unknown():
    assert entails([], y * sp.oo > 0).verdict is Verdict.UNKNOWN
    assert entails([], sp.Eq(sp.I * x, y)).verdict is Verdict.UNKNOWN
    series = sp.Sum(y**i, (i, 0, sp.oo))  # even inside an abstracted subterm
    assert entails([series > x], series > x - 1).verdict is Verdict.UNKNOWN


def test_unsupported_logic_is_unknown():
    assert entails([], sp.Xor(x > 0, y > 0)).verdict is Verdict.UNKNOWN


def test_timeout_is_respected():
    a_, b_, c_, d_, e_ = sp.symbols("a_ b_ c_ d_ e_", real=True)
    hard = [a_**3 * b_ + c_**5 - d_ * e_ * a_**2 + 7 > 0, sp.Eq(a_ * b_ * c_ * d_ * e_, 3),
            a_**4 + b_**4 + c_**4 + d_**4 + e_**4 < 5,
            sp.Eq(a_ * a_ * b_ - c_ * c_ * d_ + e_**3, 1)]
    assert satisfiable(hard, timeout_ms=1).verdict is Verdict.UNKNOWN
    start = time.monotonic()
    out = satisfiable(hard, timeout_ms=200)
    assert out.verdict is Verdict.UNKNOWN and time.monotonic() - start < 2


# --- Indexed entries and logic ------------------------------------------------------------------
def test_indexed_symbolic_indices_are_a_relaxation():
    assert entails([r[i] > 0], r[j] > 0).verdict is Verdict.UNKNOWN  # i may or may not equal j
    out = entails([r[i] > 0], r[i] >= 0)
    assert out.verdict is Verdict.HOLDS and not out.exact


def test_indexed_concrete_indices_are_exact():
    out = entails([r[1] > 0], r[2] > 0)
    assert out.verdict is Verdict.FAILS and out.model[r[1]] > 0 and out.model[r[2]] <= 0
    assert entails([r[1] > 0, sp.Eq(r[2], r[1])], r[2] > 0).verdict is Verdict.HOLDS


def test_nested_and_or_not_implies():
    assert entails([sp.Or(x > 1, x < -1)], sp.Not(sp.And(x >= -1, x <= 1))).verdict is Verdict.HOLDS
    out = entails([sp.Or(x >= 1, x < -1)], sp.Not(sp.And(x >= -1, x <= 1)))
    assert out.verdict is Verdict.FAILS and out.model == {x: 1}
    assert entails([sp.Implies(x > 0, y > 0), x > 0], y > 0).verdict is Verdict.HOLDS
    assert entails([sp.Implies(x > 0, y > 0)], y > 0).verdict is Verdict.FAILS
    assert entails([sp.false], x > 0).verdict is Verdict.HOLDS  # vacuous
    assert entails([], True).verdict is Verdict.HOLDS


def test_translatable():
    assert translatable(x**2 + sp.sqrt(y) / (x - 1) > sp.Abs(y))
    assert translatable(k * R >= 1)
    assert not translatable(sp.exp(x) > 1)
    assert not translatable(r[i] > 0)
    assert not translatable(sp.Symbol("z") > 0)
    assert not translatable(x > sp.Float(1))


def test_deterministic():
    goal = p**2 + (1 - p) ** 2 > Q(5, 8)
    assert entails([p >= 0, p <= 1], goal) == entails([p >= 0, p <= 1], goal)


# --- The exact re-check of assignments (the guard on every FAILS of entails) ---------------------
def test_exact_check_of_formulas_at_an_assignment():
    truth, zero, one, two = smt._truth, sp.Integer(0), sp.Integer(1), sp.Integer(2)
    assert truth(x < 0, {x: zero}) is False and truth(x <= 0, {x: zero}) is True
    assert truth(x > 0, {x: zero}) is False and truth(x >= 0, {x: zero}) is True
    assert truth(sp.Eq(x, y), {x: one, y: one}) is True
    assert truth(sp.Ne(x, y), {x: one, y: one}) is False
    assert truth(sp.Eq(x**2, 2), {x: sp.sqrt(2)}) is True
    assert truth(x**2 < 2, {x: -sp.sqrt(2)}) is False
    assert truth(sp.Or(x < 0, sp.Not(x > 1)), {x: two}) is False
    assert truth(sp.Implies(x > 0, x > 1), {x: HALF}) is False
    assert truth(sp.Eq(unevaluated_x_over_x(), 1), {x: zero}) is None  # undefined there
    assert truth(sp.Eq(sp.Pow(x, HALF, evaluate=False), 1), {x: -one}) is None  # not real there
    # sqrt(-1) + 1 >= sqrt(-1): the difference is 1, but the sides are not real numbers
    assert truth(sp.GreaterThan(sp.sqrt(x) + 1, sp.sqrt(x), evaluate=False), {x: -one}) is None
    assert truth(x > 0, {}) is None  # a symbol left unassigned


def test_exact_check_of_domains():
    assert not smt._in_domain(k, HALF) and smt._in_domain(k, sp.Integer(-3))
    assert not smt._in_domain(n, sp.Integer(0)) and smt._in_domain(n, sp.Integer(1))
    assert not smt._in_domain(a, -sp.sqrt(2)) and smt._in_domain(a, sp.sqrt(2))
    nonzero = sp.Symbol("nonzero", real=True, nonzero=True)
    assert not smt._in_domain(nonzero, sp.Integer(0)) and smt._in_domain(nonzero, -sp.Integer(1))
    assert satisfiable([nonzero < 0]).verdict is Verdict.HOLDS
    assert satisfiable([nonzero <= 0, nonzero >= 0]).verdict is Verdict.FAILS
    positive = sp.Symbol("positive", positive=True)
    assert entails([positive <= y], y > 0).verdict is Verdict.HOLDS  # positive > 0, strictly


# --- Differential check against sampling ---------------------------------------------------------
GRID = [Q(n_, 2) for n_ in range(-4, 5)]


@given(st.lists(st.integers(-3, 3), min_size=6, max_size=6), st.sampled_from([">", ">="]),
       st.integers(-2, 2))
def test_verdicts_agree_with_exact_sampling(coeffs, relation, lower):
    """A random quadratic in x, y on x >= lower: a HOLDS must survive every grid point; a FAILS
    comes with a model at which the goal is exactly false."""
    poly = sum(cf * m for cf, m in zip(coeffs, [1, x, y, x * y, x**2, y**2]))
    goal = sp.Rel(poly, 0, relation)
    if goal in (sp.true, sp.false):
        return
    out = entails([x >= lower], goal)
    if out.verdict is Verdict.HOLDS:
        for u in GRID:
            for v in GRID:
                if u >= lower:
                    assert goal.subs({x: u, y: v}) is sp.true, (goal, u, v)
    elif out.verdict is Verdict.FAILS:
        assert out.model[x] >= lower and goal.subs(out.model) is sp.false
    sampled = [goal.subs({x: u, y: v}) for u in GRID for v in GRID if u >= lower]
    if sp.false in sampled:  # a rational counterexample exists: the procedure must find one
        assert out.verdict is Verdict.FAILS


# --- Planted bugs: the tests above notice them ----------------------------------------------------
def test_planted_bug_nonstrict_as_strict_is_caught(monkeypatch):
    """Translating >= as > makes x >= 1, x <= 1 contradictory: a false claim would be "proved".
    test_tight_bounds_are_not_vacuous (and the nonstrict Bernoulli bound) fail under this bug."""
    monkeypatch.setitem(smt._RELATIONS, sp.GreaterThan, operator.gt)
    assert entails([x >= 1, x <= 1], sp.Eq(x, 2)).verdict is Verdict.HOLDS  # the wrong verdict
    assert entails([p >= 0, p <= 1], p**2 + (1 - p) ** 2 >= HALF).verdict is not Verdict.HOLDS


def test_planted_bug_in_translation_cannot_fake_a_model(monkeypatch):
    """Translating > as >= lets z3 return x = 0 for x > 0 and x <= 0; the exact re-check in
    SymPy rejects it, so the bug turns the correct FAILS into UNKNOWN, never into a wrong HOLDS."""
    assert satisfiable([x > 0, x <= 0]).verdict is Verdict.FAILS
    monkeypatch.setitem(smt._RELATIONS, sp.StrictGreaterThan, operator.ge)
    out = satisfiable([x > 0, x <= 0])
    assert out.verdict is Verdict.UNKNOWN and "could not be confirmed" in out.detail


def test_planted_bug_in_goal_translation_cannot_fake_a_counterexample(monkeypatch):
    """Translating >= as > makes z3 "refute" (x-1)**2 >= 0 at x = 1; the goal is true there, so
    the re-check withholds the FAILS."""
    monkeypatch.setitem(smt._RELATIONS, sp.GreaterThan, operator.gt)
    out = entails([], ge((x - 1) ** 2, 0))
    assert out.verdict is Verdict.UNKNOWN and "could not be confirmed" in out.detail
