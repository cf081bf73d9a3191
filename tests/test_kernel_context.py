"""Behaviour of the context the kernel builds from a result (hypotheses, domains, quantified assumptions), pinned case by case.

The symbol domains are hypotheses shown to the reader (reports, LaTeX); ``_open_in`` licenses rewriting inside a
derivative, so it must say "open" only for a real, non-integer variable with no closed condition on it.
"""

from __future__ import annotations

import pytest
import sympy as sp

from grpo_verify.proof import Assumption, Result, Status, kernel
from grpo_verify.proof.kernel import ResultReport, StepReport


def result(**kw) -> Result:
    kw.setdefault("name", "t")
    kw.setdefault("doc", "a test statement")
    return Result(**kw)


# -- the text of one declaration (tested directly: it is what every listed domain reads) --------------

@pytest.mark.parametrize("assumptions, expected", [
    ({"real": True}, "real"),
    ({"positive": True}, "real > 0"),
    ({"real": True, "nonnegative": True}, "real >= 0"),
    ({"negative": True}, "real < 0"),
    ({"real": True, "nonpositive": True}, "real <= 0"),
    ({"real": True, "nonzero": True}, "real != 0"),
    ({"integer": True}, "integer"),
    ({"integer": True, "positive": True}, "integer > 0"),
    ({"integer": True, "nonnegative": True}, "integer >= 0"),
    ({"integer": True, "negative": True}, "integer < 0"),
    ({"even": True}, "integer"),  # 0 is even: no sign
    ({"odd": True}, "integer != 0"),  # 0 is not odd
])
def test_a_symbol_declaration_reads_as_its_kind_then_its_sign(assumptions, expected):
    assert kernel._domain_text(sp.Symbol("s", **assumptions)) == expected


def test_an_indexed_entry_reads_as_every_entry():
    j = sp.Symbol("j", integer=True)
    assert kernel._domain_text(sp.IndexedBase("a", real=True)[j]) == "real, every entry"
    assert kernel._domain_text(sp.IndexedBase("a", real=True, nonnegative=True)[j]) == "real >= 0, every entry"
    assert kernel._domain_text(sp.IndexedBase("b", integer=True, positive=True)[j]) == "integer > 0, every entry"


def test_a_function_reads_as_a_smooth_function_with_its_values():
    x = sp.Symbol("x", real=True)
    assert kernel._domain_text(sp.Function("f", real=True)(x)) == "a smooth real function"
    assert kernel._domain_text(sp.Function("f", real=True, negative=True)(x)) == \
        "a smooth real function with values < 0"
    assert kernel._domain_text(sp.Function("g", integer=True, nonnegative=True)(x)) == \
        "a smooth integer function with values >= 0"


# -- the list of symbol domains of a result ---------------------------------------------------------

def test_symbol_domains_lists_every_free_symbol_family_and_function_sorted_by_name():
    x = sp.Symbol("x", real=True)
    p = sp.Symbol("p", positive=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    j = sp.Symbol("j", integer=True)
    a = sp.IndexedBase("a", real=True, positive=True)
    f = sp.Function("f", real=True)
    # written in the reverse of name order, so that the order of appearance is not the sorted one
    r = result(lhs=x + f(p), rhs=sp.Sum(a[j], (j, 1, k)))
    assert kernel.symbol_domains(r) == [(a, "real > 0, every entry"), (f, "a smooth real function"),
                                        (k, "integer >= 0"), (p, "real > 0"), (x, "real")]


def test_symbol_domains_sorts_by_name_not_by_appearance_or_text():
    b = sp.Symbol("b", real=True)
    a = sp.Symbol("a", integer=True)
    c = sp.Symbol("c", positive=True)
    r = result(lhs=c, rhs=b + a)
    assert kernel.symbol_domains(r) == [(a, "integer"), (b, "real"), (c, "real > 0")]


def test_symbol_domains_reads_every_kind_of_assumption():
    x = sp.Symbol("x", real=True)
    u = sp.Symbol("u", real=True)  # only in a condition
    v = sp.Symbol("v", positive=True)  # only in a positive= expression
    w = sp.Symbol("w", negative=True)  # only in an equation
    t = sp.Symbol("t", real=True)  # only as a domain's symbol
    c = sp.Symbol("c", integer=True)  # a bound of the domain: not a symbol the scan reads
    r = result(lhs=x, rhs=x, assumptions=(
        Assumption("u > 0", condition=u > 0),
        Assumption("v - 1 > 0", positive=v - 1),
        Assumption("w = -1", equation=(w, sp.Integer(-1))),
        Assumption("t in [0, c]", domain=(t, sp.Interval(0, c))),
    ))
    assert kernel.symbol_domains(r) == [(t, "real"), (u, "real"), (v, "real > 0"), (w, "real < 0"),
                                        (x, "real")]


def test_symbol_domains_lists_a_for_all_family_and_range_but_not_its_index_and_reads_on_after_it():
    x = sp.Symbol("x", real=True)
    j = sp.Symbol("j", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    y = sp.Symbol("y", real=True, nonzero=True)
    a = sp.IndexedBase("a", real=True)
    r = result(lhs=x, rhs=x, assumptions=(
        Assumption("a_j > 0 for j = 1..n", condition=a[j] > 0, for_all=(j, 1, n)),
        Assumption("y > 1", condition=y > 1),
    ))
    assert kernel.symbol_domains(r) == [(a, "real, every entry"), (n, "integer > 0"), (x, "real"),
                                        (y, "real != 0")]


def test_symbol_domains_omits_bound_indices_and_indexed_labels():
    j = sp.Symbol("j", integer=True)
    i = sp.Symbol("i", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    a = sp.IndexedBase("a", real=True)
    r = result(lhs=sp.Sum(a[j], (j, 1, n)), rhs=sp.Product(a[i] ** 2 + 1, (i, 1, n)))
    assert kernel.symbol_domains(r) == [(a, "real, every entry"), (n, "integer > 0")]


def test_symbol_domains_reads_every_symbol_of_every_expression():
    # each condition repeats x (already found) beside a new symbol: none of the new ones may be skipped
    x = sp.Symbol("x", real=True)
    ys = [sp.Symbol(f"y{i}", positive=True) for i in range(10)]
    r = result(lhs=x, rhs=x, assumptions=tuple(Assumption(f"x + y{i} > 0", condition=x + y > 0)
                                               for i, y in enumerate(ys)))
    assert kernel.symbol_domains(r) == [(x, "real"), *[(y, "real > 0") for y in ys]]


def test_symbol_domains_reads_the_entries_of_a_matrix():
    x = sp.Symbol("x", real=True)
    k = sp.Symbol("k", integer=True)
    a = sp.IndexedBase("a", real=True, positive=True)
    f = sp.Function("f", real=True, positive=True)
    m = sp.ImmutableMatrix([[x, a[k]], [f(x), 0]])
    r = result(lhs=m, rhs=m)
    assert kernel.symbol_domains(r) == [(a, "real > 0, every entry"), (f, "a smooth real function with values > 0"),
                                        (k, "integer"), (x, "real")]


# -- the one-line report ---------------------------------------------------------------------------

def test_summary_lists_the_assumptions_and_each_step_with_its_route_if_any():
    report = ResultReport(
        name="t", status=Status.UNPROVED, seconds=1.234, scope="symbolic", consistency="z3 finds a model",
        steps=(StepReport(1, "algebra", "=", Status.PROVED, 0.5, detail="equal", route="SymPy and z3"),
               StepReport(2, "bound", "<=", Status.UNPROVED, 0.25, detail="undecided", route="")))
    assert report.summary() == ("t: unproved (symbolic; 1.23 s)\n"
                                "  assumptions: z3 finds a model\n"
                                "  step 1 [algebra] proved via SymPy and z3: equal (0.50 s)\n"
                                "  step 2 [bound] unproved: undecided (0.25 s)")


# -- whether a variable ranges over an open set (licenses rewriting inside a derivative) ------------

def test_open_in_holds_for_a_real_variable_under_strict_hypotheses_only():
    x = sp.Symbol("x", real=True)
    y = sp.Symbol("y", real=True)
    assert kernel._open_in(x, [], {}) is True
    assert kernel._open_in(x, [sp.And(x > 0, x < 1), sp.Ne(x, sp.Rational(1, 2)), y >= 0], {}) is True
    assert kernel._open_in(x, [x >= 0], {}) is False
    assert kernel._open_in(x, [sp.And(x > 0, x <= 1)], {}) is False


@pytest.mark.parametrize("assumptions", [{}, {"integer": True}, {"integer": True, "positive": True}],
                         ids=["complex", "integer", "positive integer"])
def test_open_in_fails_for_a_complex_or_integer_variable(assumptions):
    assert kernel._open_in(sp.Symbol("v", **assumptions), [], {}) is False


@pytest.mark.parametrize("assumptions, expected", [
    ({"positive": True}, True), ({"negative": True}, True), ({"real": True, "nonzero": True}, True),
    ({"real": True, "nonnegative": True}, False), ({"real": True, "nonpositive": True}, False),
])
def test_open_in_fails_for_a_closed_sign_declaration_only(assumptions, expected):
    assert kernel._open_in(sp.Symbol("v", **assumptions), [], {}) is expected


@pytest.mark.parametrize("which, expected", [
    ("open", True), ("closed", False), ("left-open", False), ("right-open", False),
    ("open ray", True), ("closed ray", False), ("finite set", False), ("union", False),
])
def test_open_in_holds_for_an_open_interval_domain_only(which, expected):
    x = sp.Symbol("x", real=True)
    domain = {"open": sp.Interval.open(0, 1), "closed": sp.Interval(0, 1), "left-open": sp.Interval.Lopen(0, 1),
              "right-open": sp.Interval.Ropen(0, 1), "open ray": sp.Interval.open(0, sp.oo),
              "closed ray": sp.Interval(0, sp.oo), "finite set": sp.FiniteSet(0, 1),
              "union": sp.Union(sp.Interval.open(0, 1), sp.Interval.open(2, 3))}[which]
    assert kernel._open_in(x, [], {x: domain}) is expected
    assert kernel._open_in(sp.Symbol("y", real=True), [], {x: domain}) is True  # another variable's domain


# -- the formulas of the assumptions, the hypotheses and the quantified hypotheses ------------------

def test_assumption_formulas_gives_each_part_in_order_and_keeps_an_equation_unevaluated():
    x = sp.Symbol("x", real=True)
    y = sp.Symbol("y", real=True)
    a = Assumption("all parts", condition=x > 0, domain=(y, sp.Interval(0, 1)), positive=x - 1, equation=(2 * x, 2 * x))
    formulas = kernel.assumption_formulas(a)
    assert formulas == [sp.Gt(x, 0), sp.And(sp.Le(0, y), sp.Le(y, 1)), sp.Gt(x - 1, 0), sp.Eq(2 * x, 2 * x, evaluate=False)]
    assert isinstance(formulas[3], sp.Equality)  # not evaluated to True


def test_assumption_formulas_gives_each_part_alone_and_nothing_for_a_for_all():
    x = sp.Symbol("x", real=True)
    j = sp.Symbol("j", integer=True)
    a = sp.IndexedBase("a", real=True)
    assert kernel.assumption_formulas(Assumption("c", condition=x < 2)) == [sp.Lt(x, 2)]
    assert kernel.assumption_formulas(Assumption("d", domain=(x, sp.Interval.open(0, 1)))) == \
        [sp.And(sp.Lt(0, x), sp.Lt(x, 1))]
    assert kernel.assumption_formulas(Assumption("p", positive=x + 3)) == [sp.Gt(x + 3, 0)]
    assert kernel.assumption_formulas(Assumption("e", equation=(x, sp.Integer(1)))) == [sp.Eq(x, 1)]
    assert kernel.assumption_formulas(Assumption("q", condition=a[j] > 0, for_all=(j, 1, 3))) == []


def test_hypotheses_of_adds_the_definedness_of_each_assumption_before_it_once():
    x = sp.Symbol("x", real=True)
    r = result(lhs=x, rhs=x, assumptions=(Assumption("1/x > 0", condition=1 / x > 0),
                                          Assumption("again", condition=1 / x > 0)))
    assert kernel.hypotheses_of(r) == [sp.Ne(x, 0), 1 / x > 0]


def test_hypotheses_of_skips_a_true_formula_but_reads_the_rest_of_its_assumption():
    x = sp.Symbol("x", real=True)
    r = result(lhs=x, rhs=x, assumptions=(Assumption("trivial", condition=sp.true, positive=x),))
    assert kernel.hypotheses_of(r) == [sp.Gt(x, 0)]


def test_quantified_of_gives_the_definedness_and_the_condition_over_a_canonical_index_once():
    x = sp.Symbol("x", real=True)
    j = sp.Symbol("j", integer=True)
    i = sp.Symbol("i", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    a = sp.IndexedBase("a", real=True)
    q = kernel._QUANTIFIED_INDEX
    r = result(lhs=x, rhs=x, assumptions=(
        Assumption("1/a_j > 0", condition=1 / a[j] > 0, for_all=(j, 1, n)),
        Assumption("the same over i", condition=1 / a[i] > 0, for_all=(i, 1, n)),
        Assumption("x > 0", condition=x > 0),
    ))
    assert kernel.quantified_of(r) == [(q, sp.Integer(1), n, sp.Ne(a[q], 0)), (q, sp.Integer(1), n, 1 / a[q] > 0)]


def test_quantified_of_evaluates_sums_in_the_condition():
    x = sp.Symbol("x", real=True)
    j = sp.Symbol("j", integer=True)
    k = sp.Symbol("k", integer=True)
    a = sp.IndexedBase("a", real=True)
    q = kernel._QUANTIFIED_INDEX
    r = result(lhs=x, rhs=x, assumptions=(
        Assumption("a_j > 1 + 2 + 3", condition=a[j] > sp.Sum(k, (k, 1, 3)), for_all=(j, 0, 2)),))
    assert kernel.quantified_of(r) == [(q, sp.Integer(0), sp.Integer(2), a[q] > 6)]


# -- the context -------------------------------------------------------------------------------------

def test_context_of_holds_the_prepared_hypotheses_domains_and_quantified_hypotheses():
    x = sp.Symbol("x", real=True)
    y = sp.Symbol("y", real=True)
    t = sp.Symbol("t", real=True)
    j = sp.Symbol("j", integer=True)
    k = sp.Symbol("k", integer=True)
    a = sp.IndexedBase("a", real=True)
    q = kernel._QUANTIFIED_INDEX
    r = result(lhs=x, rhs=x, assumptions=(
        Assumption("1 + 2 + 3 > y", condition=sp.Sum(k, (k, 1, 3)) > y),
        Assumption("t in (0, 1)", domain=(t, sp.Interval.open(0, 1))),
        Assumption("a_j > 0", condition=a[j] > 0, for_all=(j, 1, 2)),
    ))
    ctx = kernel.context_of(r)
    assert ctx.hypotheses == [sp.Gt(6, y), sp.And(sp.Lt(0, t), sp.Lt(t, 1))]
    assert ctx.domains == {t: sp.Interval.open(0, 1)}
    assert ctx.rewrites == []
    assert ctx.quantified == [(q, sp.Integer(1), sp.Integer(2), a[q] > 0)]
    assert ctx.universal is False


def test_context_of_is_universal_only_for_an_equation_holding_for_every_value():
    x = sp.Symbol("x", real=True)
    w = sp.Symbol("w", real=True)

    def universal(*assumptions):
        return kernel.context_of(result(lhs=x, rhs=x, assumptions=assumptions)).universal

    assert universal(Assumption("w = 1 for every x", equation=(w, sp.Integer(1)), for_every=(x,))) is True
    assert universal(Assumption("w = 1", equation=(w, sp.Integer(1)))) is False
    assert universal(Assumption("w > 0 for every x", condition=w > 0, for_every=(x,))) is False


def test_quantified_instances_apply_only_where_the_range_lies_inside_the_quantified_one():
    x = sp.Symbol("x", real=True)
    j = sp.Symbol("j", integer=True)
    i = sp.Symbol("i", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    a = sp.IndexedBase("a", real=True)
    r = result(lhs=x, rhs=x, assumptions=(Assumption("a_j > 0", condition=a[j] > 0, for_all=(j, 1, n)),))
    ctx = kernel.context_of(r)
    assert kernel._quantified_instances(ctx, i, sp.Integer(2), n) == [a[i] > 0]
    assert kernel._quantified_instances(ctx, i, sp.Integer(1), n - 1) == [a[i] > 0]
    assert kernel._quantified_instances(ctx, i, sp.Integer(0), n) == []  # 0 is outside 1..n
    assert kernel._quantified_instances(ctx, i, sp.Integer(1), n + 1) == []  # n + 1 is outside 1..n


def test_quantified_instances_use_the_hypotheses_to_compare_the_ranges():
    x = sp.Symbol("x", real=True)
    j = sp.Symbol("j", integer=True)
    i = sp.Symbol("i", integer=True)
    m = sp.Symbol("m", integer=True)  # no sign declared: only the hypothesis m >= 3 places it
    a = sp.IndexedBase("a", real=True)
    r = result(lhs=x, rhs=x, assumptions=(Assumption("m >= 3", condition=m >= 3),
                                          Assumption("a_j > 0 for j = 2..m", condition=a[j] > 0, for_all=(j, 2, m))))
    ctx = kernel.context_of(r)
    assert kernel._quantified_instances(ctx, i, m, m) == [a[i] > 0]  # m >= 2 from m >= 3
    assert kernel._quantified_instances(ctx, i, sp.Integer(2), sp.Integer(3)) == [a[i] > 0]  # 3 <= m from m >= 3
    assert kernel._quantified_instances(ctx, i, sp.Integer(2), sp.Integer(4)) == []  # m = 3 is admissible


# -- the subterms z3 would read as free numbers -------------------------------------------------------

class _Operator(sp.Function):
    """An operator of a derivation (defined outside SymPy): free by construction."""


def test_interpreted_atoms_are_sympy_functions_and_sums_of_fixed_terms():
    x = sp.Symbol("x", real=True)
    y = sp.Symbol("y", real=True)
    j = sp.Symbol("j", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    assert kernel._interpreted_atoms([sp.sin(x) > 1]) == [sp.sin(x)]
    assert kernel._interpreted_atoms([sp.Sum(j ** 2, (j, 1, n)) > x]) == [sp.Sum(j ** 2, (j, 1, n))]
    assert kernel._interpreted_atoms([sp.Product(sp.sin(j), (j, 1, n)) > x]) == \
        [sp.Product(sp.sin(j), (j, 1, n)), sp.sin(j)]
    assert kernel._interpreted_atoms([x > 0, sp.cos(y) > 0]) == [sp.cos(y)]


def test_interpreted_atoms_skip_exact_and_free_terms_but_look_inside_them():
    x = sp.Symbol("x", real=True)
    y = sp.Symbol("y", real=True)
    j = sp.Symbol("j", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    a = sp.IndexedBase("a", real=True)
    g = sp.Function("g", real=True)
    assert kernel._interpreted_atoms([sp.Abs(x) > 1, sp.Max(x, y) < 2, sp.Min(x, y) < 2, g(x) > 0,
                                      _Operator(x) > 0, sp.Piecewise((x, y > 0), (y, True)) > 0]) == []
    assert kernel._interpreted_atoms([sp.Abs(sp.sin(x)) < 2]) == [sp.sin(x)]
    assert kernel._interpreted_atoms([sp.Max(x, sp.cos(y)) < 2]) == [sp.cos(y)]
    assert kernel._interpreted_atoms([sp.Sum(a[j], (j, 1, n)) > 0, sp.Sum(g(j), (j, 1, n)) > 0,
                                      sp.Sum(_Operator(j), (j, 1, n)) > 0]) == []


# -- the context at one value of a variable (the for-each and base-case contexts) --------------------

def test_substituted_puts_the_value_into_every_part_of_the_context_and_clears_the_obligations():
    # k = 3 in each hypothesis, rewrite and quantified hypothesis; k's own domain goes, the others stay;
    # a rewrite's extra fields (the variables it holds for) are kept as they are
    k, n = sp.Symbol("k", integer=True, positive=True), sp.Symbol("n", integer=True)
    x, j = sp.Symbol("x", real=True), sp.Symbol("j", integer=True)
    f = sp.Function("f")
    ctx = kernel.decide.Context(
        hypotheses=[sp.Ge(x, k), sp.Le(k, 5), sp.Gt(n, k)],
        domains={k: sp.Interval(1, 9), x: sp.Interval(0, 1)},
        rewrites=[(f(k), x * k, (k,), (x,))],
        obligations=[sp.Ne(x, 0)],
        quantified=[(j, k, n + k, sp.Gt(f(j), k))],
        universal=True)
    got = kernel._substituted(ctx, k, 3)
    assert got == kernel.decide.Context(
        hypotheses=[sp.Ge(x, 3), sp.Gt(n, 3)],  # 3 <= 5 is true, so it is dropped
        domains={x: sp.Interval(0, 1)},
        rewrites=[(f(3), 3 * x, (k,), (x,))],
        obligations=[],
        quantified=[(j, 3, n + 3, sp.Gt(f(j), 3))],
        universal=True)


def test_substituted_is_none_at_a_value_a_hypothesis_or_the_declaration_excludes():
    k = sp.Symbol("k", integer=True, positive=True)
    ctx = kernel.decide.Context(hypotheses=[sp.Le(k, 5)])
    assert kernel._substituted(ctx, k, 6) is None  # 6 <= 5 is false
    assert kernel._substituted(ctx, k, 0) is None  # k > 0 by its declaration
    assert kernel._substituted(ctx, k, 5) == kernel.decide.Context()


@pytest.mark.parametrize("which", [1, 2, 3])
def test_a_rule_variable_in_any_part_of_a_hypothesis_for_every_index_is_a_problem(which):
    # (index, lo, hi, condition): n in the lower limit, the upper limit or the condition stops the rule
    n, j, R = sp.Symbol("n", integer=True), sp.Symbol("j", integer=True), sp.Symbol("R", integer=True)
    f = sp.Function("f")
    parts = [j, sp.Integer(1), R, sp.Gt(f(j), 0)]
    parts[which] = {1: n, 2: n + R, 3: sp.Gt(f(j), n)}[which]
    ctx = kernel.decide.Context(quantified=[tuple(parts)])
    assert kernel._rule_variable_problem([f(n)], n, ctx) == "a hypothesis for every index mentions n"
    assert kernel._rule_variable_problem([f(n)], n, kernel.decide.Context(
        quantified=[(j, sp.Integer(1), R, sp.Gt(f(j), 0))])) == ""
