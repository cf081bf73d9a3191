"""Behaviour of citing a proved result: instantiation and hypotheses, pinned case by case.

``kernel.instantiate`` is called directly where the clearest statement of a rule is the instance it
returns (or the refusal text); ``kernel.cite`` and whole results are checked where the rule is
about what a citing step may use. ``ForEach`` links (``kernel._for_each``) are checked through
``Result.check``. Every expected instance and message is worked out by hand.
"""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import Assumption, ForEach, Result, Status, Step, kernel

x = sp.Symbol("x", real=True)
y = sp.Symbol("y", real=True)
w = sp.Symbol("w", positive=True)
n = sp.Symbol("n", integer=True)
j = sp.Symbol("j", integer=True)
R = sp.Symbol("R", integer=True, positive=True)


def result(**kw) -> Result:
    kw.setdefault("name", "t")
    kw.setdefault("doc", "a test statement")
    return Result(**kw)


def ctx_with(*conditions):
    """The context of a citing result that assumes ``conditions`` (and states nothing else)."""
    assumptions = tuple(Assumption(sp.sstr(c), condition=c) for c in conditions)
    return kernel.context_of(result(name="citing", lhs=x, rhs=y, assumptions=assumptions))


# -- instantiate: what a value may replace ----------------------------------------------------------

def test_instantiate_substitutes_a_value_for_a_free_symbol():
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {x: sp.Integer(3)}, ctx_with()) == (9, 0, "")


def test_instantiate_refuses_a_symbol_the_lemma_does_not_mention():
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {y: sp.Integer(1)}, ctx_with()) == \
        (0, 0, "y is not a free symbol of square_nonnegative")


def test_instantiate_refuses_a_value_for_the_label_of_an_indexed_family():
    a = sp.IndexedBase("a", real=True)
    lemma = result(name="entry_square_nonnegative", lhs=a[n] ** 2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {a.label: sp.Integer(1)}, ctx_with()) == \
        (0, 0, "a names an indexed family of entry_square_nonnegative; instances give values to symbols")


def test_instantiate_refuses_a_variable_the_lemma_differentiates_in():
    lemma = result(name="cube_slope", lhs=sp.Derivative(x**3, x), rhs=3 * x**2)
    assert kernel.instantiate(lemma, {x: sp.Integer(2)}, ctx_with()) == \
        (0, 0, "cube_slope binds or differentiates in x: it cannot be instantiated there")


def test_instantiate_refuses_a_value_a_binder_of_the_lemma_would_capture():
    lemma = result(name="sum_scaled", lhs=sp.Sum(j * y, (j, 1, 3)), rhs=6 * y)
    assert kernel.instantiate(lemma, {y: j}, ctx_with()) == \
        (0, 0, "the value j of y mentions a variable that sum_scaled binds (it would be captured)")


def test_instantiate_substitutes_all_values_simultaneously():
    # x -> y and y -> x at once: x - 2y becomes y - 2x (one after the other would give -x)
    lemma = result(name="difference", lhs=x - 2 * y, rhs=sp.Integer(0))
    assert kernel.instantiate(lemma, {x: y, y: x}, ctx_with()) == (y - 2 * x, 0, "")


# -- instantiate: the declared domain of each symbol ------------------------------------------------

def test_instantiate_refuses_a_non_integer_value_for_an_integer_symbol():
    lemma = result(name="square_nonnegative", lhs=n**2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {n: x}, ctx_with()) == \
        (0, 0, "n is an integer in square_nonnegative, and x is not known to be one")
    assert kernel.instantiate(lemma, {n: sp.Rational(1, 2)}, ctx_with()) == \
        (0, 0, "n is an integer in square_nonnegative, and 1/2 is not known to be one")
    assert kernel.instantiate(lemma, {n: j + 1}, ctx_with()) == ((j + 1) ** 2, 0, "")


def test_instantiate_refuses_a_value_not_shown_to_be_defined():
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {x: sp.sqrt(y)}, ctx_with()) == \
        (0, 0, "sqrt(y) is not shown to be a defined real number here: not shown to be defined: "
               "sqrt(y): a real power needs a non-negative base (needs y >= 0)")


def test_instantiate_accepts_a_value_defined_under_the_citing_hypotheses():
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {x: sp.sqrt(y)}, ctx_with(y >= 0)) == (y, 0, "")


def test_instantiate_refuses_an_imaginary_value():
    # Result.at refuses I when the instance is built; instantiate refuses it on its own too
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {x: sp.I}, ctx_with()) == \
        (0, 0, "I is not shown to be a defined real number here: ")


def test_instantiate_refuses_a_value_not_shown_to_have_the_declared_sign():
    lemma = result(name="positive_is_positive", lhs=w, rhs=sp.Integer(0), relation=">")
    assert kernel.instantiate(lemma, {w: y}, ctx_with()) == \
        (0, 0, "w is declared positive in positive_is_positive, and y is not shown to be")
    assert kernel.instantiate(lemma, {w: y}, ctx_with(y >= 0)) == \
        (0, 0, "w is declared positive in positive_is_positive, and y is not shown to be")
    assert kernel.instantiate(lemma, {w: y}, ctx_with(y > 0)) == (y, 0, "")


def test_instantiate_refuses_a_value_without_a_declared_parity():
    e = sp.Symbol("e", even=True)
    lemma = result(name="even_square_nonnegative", lhs=e**2, rhs=sp.Integer(0), relation=">=")
    assert kernel.instantiate(lemma, {e: sp.Integer(3)}, ctx_with()) == \
        (0, 0, "e is declared even in even_square_nonnegative, and 3 is not known to be")
    assert kernel.instantiate(lemma, {e: n}, ctx_with()) == \
        (0, 0, "e is declared even in even_square_nonnegative, and n is not known to be")
    assert kernel.instantiate(lemma, {e: 2 * n}, ctx_with()) == (4 * n**2, 0, "")


# -- instantiate: the lemma's hypotheses at the values ----------------------------------------------

def test_instantiate_refuses_when_a_hypothesis_is_not_shown_at_the_values():
    lemma = result(name="positive_is_positive", lhs=x, rhs=sp.Integer(0), relation=">",
                   assumptions=(Assumption("x > 0", condition=x > 0),))
    assert kernel.instantiate(lemma, {x: y}, ctx_with()) == \
        (0, 0, "the hypothesis x > 0 of positive_is_positive is not shown to hold at {x: y}")
    assert kernel.instantiate(lemma, {x: y}, ctx_with(y > 0)) == (y, 0, "")


def test_instantiate_refuses_a_conjunction_hypothesis_only_half_shown():
    # y > 0 is an assumption of the citing result, y < 1 is not: the conjunction does not follow
    lemma = result(name="inside_unit", lhs=x, rhs=sp.Integer(1), relation="<",
                   assumptions=(Assumption("0 < x < 1", condition=sp.And(x > 0, x < 1)),))
    assert kernel.instantiate(lemma, {x: y}, ctx_with(y > 0)) == \
        (0, 0, "the hypothesis (x > 0) & (x < 1) of inside_unit is not shown to hold at {x: y}")
    assert kernel.instantiate(lemma, {x: y}, ctx_with(y > 0, y < 1)) == (y, 1, "")


# -- ForEach links ------------------------------------------------------------------------------------

def test_for_each_proves_every_value_and_names_the_whole_range():
    report = result(lhs=(R + 1) ** 2, rhs=R**2 + 2 * R + 1, for_each=ForEach.range(R, 1, 3)).check()
    assert report.status is Status.PROVED_FOR_RANGE
    assert report.scope == "R = 1..3"
    assert [s.detail for s in report.steps] == ["decided exactly for each R = 1..3"]


def test_for_each_skips_excluded_values_and_names_the_values_checked():
    # R = 1 is excluded by R >= 2; the scope lists only the values that were checked
    report = result(lhs=(R + 1) ** 2, rhs=R**2 + 2 * R + 1, assumptions=(Assumption("R >= 2", condition=R >= 2),),
                    for_each=ForEach.range(R, 1, 4)).check()
    assert report.status is Status.PROVED_FOR_RANGE
    assert report.scope == "R in {2, 3, 4}"
    assert [s.detail for s in report.steps] == ["decided exactly for each R in {2, 3, 4}"]


def test_for_each_reports_the_first_value_where_the_link_fails():
    report = result(lhs=R**2, rhs=sp.Integer(5), relation="<", for_each=ForEach.range(R, 1, 3)).check()
    assert report.status is Status.REFUTED  # R = 3: 9 < 5 is false
    assert report.steps[0].detail.startswith("at R = 3: ")


def test_for_each_links_with_definedness_obligations_are_decided():
    # R/x >= 1/x for R >= 1 and x > 0; each value leaves the obligation x != 0 to discharge
    report = result(lhs=R / x, rhs=1 / x, relation=">=", assumptions=(Assumption("x > 0", condition=x > 0),),
                    for_each=ForEach.range(R, 1, 3)).check()
    assert report.status is Status.PROVED_FOR_RANGE
    assert report.scope == "R = 1..3"


# -- cite: what a step may use (kernel.cite, called directly to read every field it returns) ------------

u = sp.Symbol("u", real=True)
i = sp.Symbol("i", integer=True)


def fields(c) -> tuple:
    return (c.rewrites, c.status, c.scopes, c.failure, c.facts)


def test_cite_refuses_an_assumption_the_citing_result_does_not_state():
    elsewhere = Assumption("x = y", equation=(x, y))
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (elsewhere,), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, [], "uses the assumption 'x = y', which this result does not state", [])


def test_cite_turns_a_stated_equation_assumption_into_a_rewrite_and_goes_on():
    stated = Assumption("x = y for every y", equation=(x, y), for_every=(y,))
    lemma = result(name="positive_is_positive", lhs=u, rhs=sp.Integer(0), relation=">",
                   assumptions=(Assumption("u > 0", condition=u > 0),))
    citing = result(lhs=x, rhs=y, assumptions=(stated, Assumption("u > 0", condition=u > 0)))
    assert fields(kernel.cite(citing, (stated, lemma), kernel.context_of(citing))) == \
        ([(x, y, frozenset({y}), frozenset({y}))], Status.PROVED, [], "", [u > 0])


def test_cite_refuses_what_is_neither_a_result_nor_an_assumption():
    # Step and Result refuse such a using= when built; cite refuses it on its own too
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (3,), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, [], "cannot use 3: cite a Result, an instance of one or an Assumption", [])


def test_cite_refuses_a_result_citing_itself():
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (citing,), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, [], "a result cannot cite itself", [])


def test_cite_refuses_a_lemma_that_did_not_pass():
    lemma = result(name="bigger_than_successor", lhs=x, rhs=x + 1, relation=">=")  # false for every x
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (lemma,), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, [], "cites bigger_than_successor, which is refuted", [])


def test_cite_refuses_a_lemma_hypothesis_not_shown_here_and_uses_it_as_a_fact_when_shown():
    lemma = result(name="positive_is_positive", lhs=u, rhs=sp.Integer(0), relation=">",
                   assumptions=(Assumption("u > 0", condition=u > 0),))
    bare = result(lhs=x, rhs=y)
    assert fields(kernel.cite(bare, (lemma,), kernel.context_of(bare))) == \
        ([], Status.UNPROVED, [], "cites positive_is_positive, whose hypothesis u > 0 is not shown to hold here", [])
    citing = result(lhs=x, rhs=y, assumptions=(Assumption("u > 0", condition=u > 0),))
    assert fields(kernel.cite(citing, (lemma,), kernel.context_of(citing))) == \
        ([], Status.PROVED, [], "", [u > 0])


def test_cite_of_an_equation_rewrites_around_the_point_where_its_hypotheses_are_strict():
    # |u| - u = 0 needs u > 0: not identically in u (a hypothesis mentions it), but the citing result's
    # admissible u form an open set, so the rewrite holds around the current point
    lemma = result(name="abs_minus_self", lhs=sp.Abs(u) - u, rhs=sp.Integer(0),
                   assumptions=(Assumption("u > 0", condition=u > 0),))
    citing = result(lhs=x, rhs=y, assumptions=(Assumption("u > 0", condition=u > 0),))
    assert fields(kernel.cite(citing, (lemma,), kernel.context_of(citing))) == \
        ([(sp.Abs(u) - u, 0, frozenset({u}), frozenset())], Status.PROVED, [], "", [])


def test_cite_of_an_equation_does_not_rewrite_around_a_point_a_hypothesis_for_every_index_restricts():
    # the citing result's hypothesis for every i in u..3 mentions u (as the condition and the range start)
    lemma = result(name="abs_minus_self", lhs=sp.Abs(u) - u, rhs=sp.Integer(0),
                   assumptions=(Assumption("u > 0", condition=u > 0),))
    citing = result(lhs=x, rhs=y, assumptions=(
        Assumption("u > 0", condition=u > 0),
        Assumption("i + u > 0 for i in u..3", condition=i + u > 0, for_all=(i, u, sp.Integer(3)))))
    assert fields(kernel.cite(citing, (lemma,), kernel.context_of(citing))) == \
        ([(sp.Abs(u) - u, 0, frozenset(), frozenset())], Status.PROVED, [], "", [])


def test_cite_of_an_instance_of_an_equation_rewrites_at_this_point_only():
    lemma = result(name="square_of_successor", lhs=(x + 1) ** 2, rhs=x**2 + 2 * x + 1)
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (lemma.at({x: y}),), kernel.context_of(citing))) == \
        ([((y + 1) ** 2, y**2 + 2 * y + 1, frozenset(), frozenset())], Status.PROVED, [], "", [])


def test_cite_of_an_instance_of_an_inequality_is_a_fact_with_its_definedness_shown():
    lemma = result(name="reciprocal_positive", lhs=1 / w, rhs=sp.Integer(0), relation=">")
    citing = result(lhs=x, rhs=y, assumptions=(Assumption("y > 0", condition=y > 0),))
    assert fields(kernel.cite(citing, (lemma.at({w: y}),), kernel.context_of(citing))) == \
        ([], Status.PROVED, [], "", [1 / y > 0])


def test_cite_refuses_an_instance_whose_statement_is_not_shown_to_be_defined():
    # SymPy calls the sum real, so instantiate lets it through; the instance's definedness refuses it
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=")
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (lemma.at({x: sp.Sum(1, (j, 1, n))}),), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, [], "cites an instance of square_nonnegative: not shown to be defined: Sum over "
         "j = 1..n needs hi >= lo - 1 (SymPy would reverse it by Karr's convention) (needs n >= 0)", [])


def test_cite_refuses_an_instance_that_instantiate_refuses():
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=")
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (lemma.at({y: 1}),), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, [], "cites an instance of square_nonnegative: y is not a free symbol of "
         "square_nonnegative", [])


def test_cite_of_a_range_lemma_carries_its_scope_and_refuses_an_instance_of_it():
    lemma = result(name="square_below_ten", lhs=R**2, rhs=sp.Integer(10), relation="<",
                   for_each=ForEach.range(R, 1, 3))
    citing = result(lhs=x, rhs=y)
    assert fields(kernel.cite(citing, (lemma,), kernel.context_of(citing))) == \
        ([], Status.PROVED_FOR_RANGE, ["R = 1..3"], "", [R**2 < 10])
    assert fields(kernel.cite(citing, (lemma.at({R: 2}),), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, ["R = 1..3"], "cites an instance of square_below_ten, which is proved only for "
         "R = 1..3: an instance could lie outside it", [])


def test_cite_of_a_lemma_with_a_hypothesis_for_every_index():
    a = sp.IndexedBase("a", real=True)
    every = Assumption("a_i > 0 for i in 1..3", condition=a[i] > 0, for_all=(i, sp.Integer(1), sp.Integer(3)))
    lemma = result(name="square_nonnegative", lhs=x**2, rhs=sp.Integer(0), relation=">=", assumptions=(every,))
    bare = result(lhs=x, rhs=y)
    assert fields(kernel.cite(bare, (lemma.at({x: 1}),), kernel.context_of(bare))) == \
        ([], Status.UNPROVED, [], "cites an instance of square_nonnegative, which has hypotheses for every index: "
         "cite it without values", [])
    assert fields(kernel.cite(bare, (lemma,), kernel.context_of(bare))) == \
        ([], Status.UNPROVED, [], "cites square_nonnegative, whose hypothesis a[_q] > 0 for every index in 1..3 "
         "is not one of this result's", [])
    same = result(lhs=x, rhs=y, assumptions=(
        Assumption("a_i > 0 for i in 1..3", condition=a[i] > 0, for_all=(i, sp.Integer(1), sp.Integer(3))),))
    assert fields(kernel.cite(same, (lemma,), kernel.context_of(same))) == \
        ([], Status.PROVED, [], "", [x**2 >= 0])


# -- identically_in --------------------------------------------------------------------------------------

def test_identically_in_keeps_the_unmentioned_symbols_with_an_open_domain():
    # z is mentioned by a hypothesis, c by a hypothesis for every index, p and q by its range; n is an
    # integer and k is declared nonnegative (closed); x (left side only) and y (right side only) remain
    z, c, p, q = (sp.Symbol(s, real=True) for s in "zcpq")
    k = sp.Symbol("k", nonnegative=True)
    lemma = result(name="l", lhs=x + z + c + p + n + k, rhs=y + q, assumptions=(
        Assumption("z > 0", condition=z > 0),
        Assumption("c + i > 0 for i in p..q", condition=c + i > 0, for_all=(i, p, q))))
    assert kernel.identically_in(lemma, kernel.hypotheses_of(lemma)) == frozenset({x, y})


def test_identically_in_skips_entries_of_indexed_families():
    # a[n] is no symbol and n is an integer; the label a is a real symbol no hypothesis mentions
    a = sp.IndexedBase("a", real=True)
    lemma = result(name="l", lhs=a[n] + x, rhs=x + a[n])
    assert kernel.identically_in(lemma, []) == frozenset({a.label, x})


def test_cite_accepts_the_only_assumption_of_the_citing_result():
    stated = Assumption("x = y", equation=(x, y))
    citing = result(lhs=x, rhs=y, assumptions=(stated,))
    assert fields(kernel.cite(citing, (stated,), kernel.context_of(citing))) == \
        ([(x, y, frozenset(), frozenset())], Status.PROVED, [], "", [])


def test_cite_refusal_keeps_the_facts_gathered_before_it():
    lemma = result(name="positive_is_positive", lhs=u, rhs=sp.Integer(0), relation=">",
                   assumptions=(Assumption("u > 0", condition=u > 0),))
    citing = result(lhs=x, rhs=y, assumptions=(Assumption("u > 0", condition=u > 0),))
    assert fields(kernel.cite(citing, (lemma, citing), kernel.context_of(citing))) == \
        ([], Status.UNPROVED, [], "a result cannot cite itself", [u > 0])


# -- _bound_symbols (private; instantiate only asks whether a symbol is among them) ------------------------

def test_bound_symbols_collects_the_variables_of_every_binder():
    p, q, z = (sp.Symbol(s, real=True) for s in "pqz")
    e = sp.Tuple(sp.Sum(j, (j, 1, 2)), sp.Sum(i * y, (i, 1, 2)), sp.Derivative(x**3, x), sp.Subs(z**2, z, 1),
                 sp.Derivative(u**3, u), sp.Lambda(p, p + 1), sp.Lambda(q, q**2))
    assert kernel._bound_symbols(e) == {j, i, x, z, u, p, q}


def test_bound_symbols_reads_every_entry_of_a_matrix():
    assert kernel._bound_symbols(sp.Matrix([[sp.Sum(j, (j, 1, 2)), sp.Derivative(x**3, x)]])) == {j, x}
