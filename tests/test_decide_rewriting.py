"""Rewriting, normalising, equality and disequality in ``grpo_verify.proof.decide``.

Every expected value is worked out by hand (or is a literal SymPy object built independently of the
function under test). Private helpers (``_rewrite``, ``_count``, ``_is_exact_zero``)
are called directly only where the public route cannot reach the branch in isolation.
"""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import decide
from grpo_verify.proof.decide import Context, Outcome


def _reals():
    return sp.symbols("x y", real=True)


# == _rewrite =====================================================================================

def test_rewrite_reaches_every_entry_of_a_matrix():
    x, _ = _reals()
    f = sp.Function("f")
    m = sp.Matrix([[sp.Derivative(f(x), x) + f(x), sp.Subs(f(x), x, 1)], [x, f(x)]])
    got = decide._rewrite(m, f(x), x**2, frozenset({x}), frozenset())
    # into_derivatives = {x}: the derivative in x is rewritten; the Subs in x is protected
    assert got == sp.Matrix([[sp.Derivative(x**2, x) + x**2, sp.Subs(f(x), x, 1)], [x, x**2]])


def test_rewrite_inside_matrix_into_subs_only():
    x, _ = _reals()
    f = sp.Function("f")
    m = sp.Matrix([[sp.Derivative(f(x), x), sp.Subs(f(x), x, 1)]])
    got = decide._rewrite(m, f(x), x**2, frozenset(), frozenset({x}))
    assert got == sp.Matrix([[sp.Derivative(f(x), x), sp.Subs(x**2, x, 1)]])


def test_rewrite_protects_derivative_in_a_pattern_variable():
    x, _ = _reals()
    f = sp.Function("f")
    got = decide._rewrite(sp.Derivative(f(x), x) + f(x), f(x), x**2, frozenset(), frozenset())
    assert got == sp.Derivative(f(x), x) + x**2


def test_rewrite_enters_derivative_when_its_variable_is_allowed():
    x, _ = _reals()
    f = sp.Function("f")
    got = decide._rewrite(sp.Derivative(f(x), x) + f(x), f(x), x**2, frozenset({x}), frozenset())
    assert got == sp.Derivative(x**2, x) + x**2


def test_rewrite_into_subs_does_not_open_derivatives():
    x, _ = _reals()
    f = sp.Function("f")
    got = decide._rewrite(sp.Derivative(f(x), x) + f(x), f(x), x**2, frozenset(), frozenset({x}))
    assert got == sp.Derivative(f(x), x) + x**2


def test_rewrite_protects_subs_unless_allowed_for_subs():
    x, _ = _reals()
    f = sp.Function("f")
    e = sp.Subs(f(x), x, 1) + f(x)
    assert decide._rewrite(e, f(x), x**2, frozenset(), frozenset()) == sp.Subs(f(x), x, 1) + x**2
    assert decide._rewrite(e, f(x), x**2, frozenset({x}), frozenset()) == sp.Subs(f(x), x, 1) + x**2
    assert decide._rewrite(e, f(x), x**2, frozenset(), frozenset({x})) == sp.Subs(x**2, x, 1) + x**2


def test_rewrite_replaces_a_derivative_that_is_the_pattern_itself():
    x, y = _reals()
    f = sp.Function("f")
    d = sp.Derivative(f(x), x)
    assert decide._rewrite(d + 1, d, y, frozenset(), frozenset()) == y + 1


def test_rewrite_protects_two_derivatives_and_restores_both():
    x, y = _reals()
    f, g = sp.Function("f"), sp.Function("g")
    e = sp.Derivative(f(x), x) * sp.Derivative(g(x), x) + f(x)
    got = decide._rewrite(e, f(x), y, frozenset(), frozenset())
    assert got == sp.Derivative(f(x), x) * sp.Derivative(g(x), x) + y


def test_rewrite_with_a_plain_number_pattern():
    # private: a non-Basic pattern (prepare always sympifies, so only a direct call reaches this)
    x, y = _reals()
    assert decide._rewrite(x + 2, 2, y, frozenset(), frozenset()) == x + y


# == _count and pull_constants_out_of_sums =======================================================

def test_count_sum_of_constant_is_constant_times_length():
    c, a, b = sp.symbols("c a b", integer=True)
    j = sp.Symbol("j", integer=True)
    assert sp.expand(decide._count(sp.Sum(c, (j, a, b))) - c * (b - a + 1)) == 0
    # the lower limit mentions c, the body does not mention j: still counted
    assert sp.expand(decide._count(sp.Sum(c, (j, c, b))) - c * (b - c + 1)) == 0


def test_count_leaves_sum_whose_body_mentions_the_index():
    j, n = sp.symbols("j n", integer=True)
    s = sp.Sum(j, (j, 1, n))
    assert decide._count(s) == s
    s0 = sp.Sum(j, (j, 0, n))
    assert decide._count(s0) == s0


def test_count_leaves_multi_limit_sums_alone():
    c, n, m = sp.symbols("c n m", integer=True)
    i, j = sp.symbols("i j", integer=True)
    s = sp.Sum(c, (i, 1, n), (j, 1, m))
    assert decide._count(s) == s


def test_count_inside_a_larger_expression():
    c, n, y = sp.symbols("c n y", integer=True)
    j = sp.Symbol("j", integer=True)
    assert sp.expand(decide._count(y + sp.Sum(c, (j, 1, n))) - (y + c * n)) == 0


def test_pull_constants_splits_product_of_sums():
    i, j, n = sp.symbols("i j n", integer=True, positive=True)
    r, g = sp.IndexedBase("r"), sp.IndexedBase("g")
    got = decide.pull_constants_out_of_sums(sp.Sum(r[i] * g[j], (j, 1, n), (i, 1, n)))
    want = decide.canonical_indices(sp.Sum(r[i], (i, 1, n)) * sp.Sum(g[j], (j, 1, n)))
    assert sp.expand(got - want) == 0


def test_pull_constants_counts_a_constant_sum():
    c = sp.Symbol("c", real=True)
    j, n = sp.symbols("j n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    got = decide.pull_constants_out_of_sums(sp.Sum(c + c * r[j], (j, 1, n)))
    want = c * n + c * decide.canonical_indices(sp.Sum(r[j], (j, 1, n)))
    assert sp.expand(got - want) == 0


# == doit, canonical_indices, _bound_assumptions ===================================================

def test_doit_evaluates_until_stable():
    j = sp.Symbol("j", integer=True)
    assert decide.doit(sp.Sum(j, (j, 1, 3))) == 6
    x, _ = _reals()
    assert decide.doit(x + 1) == x + 1


def test_canonical_indices_names_bound_index_by_depth():
    j, n = sp.symbols("j n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    got = decide.canonical_indices(sp.Sum(r[j], (j, 1, n)))
    (v, lo, hi), = got.limits
    assert isinstance(v, sp.Dummy) and v.name == "b0_0" and v.dummy_index == 2_000_000_000
    assert (lo, hi) == (1, n)
    assert got.function == r[v]


def test_canonical_indices_makes_renamed_sums_equal():
    i, j, n = sp.symbols("i j n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    a = decide.canonical_indices(sp.Sum(r[i], (i, 1, n)))
    b = decide.canonical_indices(sp.Sum(r[j], (j, 1, n)))
    assert a == b
    assert sp.expand(a - b) == 0


def test_canonical_indices_nested_sums_levels():
    i, j, n = sp.symbols("i j n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    got = decide.canonical_indices(sp.Sum(i * sp.Sum(r[j], (j, 1, i)), (i, 1, n)))
    (outer, lo, hi), = got.limits
    assert outer.name == "b1_0" and outer.dummy_index == 2_000_000_100
    inner_sum = [a for a in sp.preorder_traversal(got.function) if isinstance(a, sp.Sum)][0]
    (inner, ilo, ihi), = inner_sum.limits
    assert inner.name == "b0_0" and inner.dummy_index == 2_000_000_000
    assert ihi == outer and (ilo, lo, hi) == (1, 1, n)
    assert got.function == outer * sp.Sum(r[inner], (inner, 1, outer))


def test_canonical_indices_triple_nesting_levels():
    i, j, k, n = sp.symbols("i j k n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    got = decide.canonical_indices(sp.Sum(i * sp.Sum(j * sp.Sum(r[k], (k, 1, n)), (j, 1, n)), (i, 1, n)))
    names = [s.limits[0][0].name for s in sp.preorder_traversal(got) if isinstance(s, sp.Sum)]
    assert names == ["b2_0", "b1_0", "b0_0"]


def test_canonical_indices_multi_limit_renames_dependent_bounds():
    i, j, n = sp.symbols("i j n", integer=True, positive=True)
    f = sp.Function("f")
    got = decide.canonical_indices(sp.Sum(f(i, j), (i, 1, j), (j, 1, n)))
    (v0, lo0, hi0), (v1, lo1, hi1) = got.limits
    assert (v0.name, v1.name) == ("b0_0", "b0_1")
    assert (v0.dummy_index, v1.dummy_index) == (2_000_000_000, 2_000_000_001)
    assert (lo0, hi0, lo1, hi1) == (1, v1, 1, n)
    assert got.function == f(v0, v1)


def test_canonical_indices_products_too():
    j, n = sp.symbols("j n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    got = decide.canonical_indices(sp.Product(r[j], (j, 1, n)))
    assert isinstance(got, sp.Product) and got.limits[0][0].name == "b0_0"


def test_canonical_indices_leaves_sum_free_expressions_as_built():
    x, _ = _reals()
    e = sp.Add(x, x, evaluate=False)
    assert decide.canonical_indices(e) == e  # not rebuilt into 2*x


def test_canonical_indices_enters_matrices():
    i, j, n = sp.symbols("i j n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    m = decide.canonical_indices(sp.Matrix([[sp.Sum(r[i], (i, 1, n)), sp.Sum(r[j], (j, 1, n))]]))
    assert m[0, 0] == m[0, 1]
    assert m[0, 0].limits[0][0].name == "b0_0"


def test_bound_index_sign_comes_from_lower_limit():
    n = sp.Symbol("n", integer=True, positive=True)
    j = sp.Symbol("j", integer=True, positive=True)
    r = sp.IndexedBase("r")
    v_neg = decide.canonical_indices(sp.Sum(r[j], (j, -3, n))).limits[0][0]
    assert v_neg.is_integer is True and v_neg.is_positive is None and v_neg.is_nonnegative is None
    v_zero = decide.canonical_indices(sp.Sum(r[j], (j, 0, n))).limits[0][0]
    assert v_zero.is_nonnegative is True and v_zero.is_positive is None and v_zero.is_integer is True
    v_one = decide.canonical_indices(sp.Sum(r[j], (j, 1, n))).limits[0][0]
    assert v_one.is_positive is True and v_one.is_integer is True
    k = sp.Symbol("k")  # no assumptions
    v_plain = decide.canonical_indices(sp.Sum(r[k], (k, -3, n))).limits[0][0]
    assert v_plain.is_integer is None and v_plain.is_real is None


def test_bound_index_keeps_reality_without_integrality():
    n = sp.Symbol("n", integer=True, positive=True)
    t = sp.Symbol("t", real=True)
    f = sp.Function("f")
    v = decide.canonical_indices(sp.Sum(f(t), (t, -3, n))).limits[0][0]
    assert v.is_real is True and v.is_integer is None


# == prepare =======================================================================================

def test_prepare_applies_a_two_element_rewrite():
    x, _ = _reals()
    f = sp.Function("f")
    assert decide.prepare(f(x) + 1, [(f(x), x**2)]) == x**2 + 1


def test_prepare_three_element_rewrite_enters_derivatives():
    x, _ = _reals()
    f = sp.Function("f")
    assert decide.prepare(sp.Derivative(f(x), x), [(f(x), x**2, [x])]) == 2 * x
    assert decide.prepare(sp.Derivative(f(x), x), [(f(x), x**2)]) == sp.Derivative(f(x), x)


def test_prepare_four_element_rewrite_enters_subs():
    x, _ = _reals()
    f = sp.Function("f")
    assert decide.prepare(sp.Subs(f(x), x, 2), [(f(x), x**2, [], [x])]) == 4
    assert decide.prepare(sp.Subs(f(x), x, 2), [(f(x), x**2, [x])]) == f(2)


def test_prepare_rewrites_again_after_sums_are_evaluated():
    y, w = sp.symbols("y w", real=True)
    j = sp.Symbol("j", integer=True)
    assert decide.prepare(sp.Sum(y, (j, 1, 3)), [(3 * y, w)]) == w


def test_prepare_without_rewrites_evaluates_and_renames():
    j, n = sp.symbols("j n", integer=True, positive=True)
    r = sp.IndexedBase("r")
    got = decide.prepare(sp.Sum(r[j], (j, 1, n)) + sp.Sum(j, (j, 1, 2)), [])
    v = got.atoms(sp.Sum).pop().limits[0][0]
    assert got == 3 + sp.Sum(r[v], (v, 1, n)) and v.name == "b0_0"


# == _is_exact_zero, zero_by_normalisation ========================================================

def test_is_exact_zero_refuses_infinite_content():
    # private: an expression SymPy calls zero that holds an infinity cannot come from a public side
    z = sp.Symbol("z", zero=True)
    j = sp.Symbol("j", integer=True)
    assert decide._is_exact_zero(z) is True
    assert decide._is_exact_zero(sp.Integer(0)) is True
    assert decide._is_exact_zero(None) is False
    assert decide._is_exact_zero(sp.Integer(1)) is False
    assert decide._is_exact_zero(sp.Sum(z, (j, 1, sp.oo))) is False
    assert decide._is_exact_zero(sp.Sum(z, (j, -sp.oo, 1))) is False
    assert decide._is_exact_zero(sp.Sum(z, (j, 1, sp.zoo))) is False
    assert decide._is_exact_zero(sp.Sum(z, (j, 1, sp.nan))) is False


def test_zero_by_normalisation_names_first_method():
    x, _ = _reals()
    assert decide.zero_by_normalisation(x - x) == "direct evaluation"
    assert decide.zero_by_normalisation(0) == "direct evaluation"
    assert decide.zero_by_normalisation((x + 1) ** 2 - x**2 - 2 * x - 1) == "expand"
    assert decide.zero_by_normalisation(x + 1) is None


def test_zero_by_normalisation_matrix_entrywise():
    x, y = _reals()
    got = decide.zero_by_normalisation(sp.Matrix([0, 0, (x + 1) ** 2 - x**2 - 2 * x - 1]))
    assert got == "entrywise direct evaluation, expand"
    assert decide.zero_by_normalisation(sp.Matrix([0, x - y])) is None
    assert decide.zero_by_normalisation(sp.Matrix([x - y, 0])) is None


# == equality ======================================================================================

def test_equality_matrix_against_scalar_fails():
    x, _ = _reals()
    assert decide.equality(sp.Matrix([[x]]), x, Context()) == Outcome(False, "one side is a matrix, the other is not")
    assert decide.equality(x, sp.Matrix([[x]]), Context()) == Outcome(False, "one side is a matrix, the other is not")


def test_equality_shapes_differ():
    got = decide.equality(sp.Matrix([[1, 2]]), sp.Matrix([[1], [2]]), Context())
    assert got == Outcome(False, "shapes differ: (1, 2) vs (2, 1)")


def test_equality_matrices_entrywise():
    x, y = _reals()
    got = decide.equality(sp.Matrix([[x + 1, 2]]), sp.Matrix([[1 + x, 2]]), Context())
    assert got == Outcome(True, "difference is 0 by entrywise direct evaluation")
    assert decide.equality(sp.Matrix([[x, 2]]), sp.Matrix([[x, 3]]), Context()) == Outcome(None, "")
    assert decide.equality(sp.Matrix([[x, y]]), sp.Matrix([[-x, -y]]), Context()) == Outcome(None, "")


def test_equality_scalars():
    x, y = _reals()
    assert decide.equality(x + 1, 1 + x, Context()) == Outcome(True, "difference is 0 by direct evaluation")
    assert decide.equality((x + 1) ** 2, x**2 + 2 * x + 1, Context()) == Outcome(True, "difference is 0 by expand")
    assert decide.equality(x, -x, Context()) == Outcome(None, "")
    assert decide.equality(x, y, Context()) == Outcome(None, "")
    assert decide.equality(x + 1, x, Context()) == Outcome(None, "")


def test_equality_uses_positive_atoms_only_when_needed():
    x, y = _reals()
    ctx = Context(hypotheses=[x + y > 0])
    got = decide.equality(sp.Abs(x + y) / (x + y), sp.Integer(1), ctx)
    assert got == Outcome(True, "difference is 0 by direct evaluation, with the expressions assumed positive "
                                "as positive atoms")
    assert decide.equality(sp.Abs(x + y) / (x + y), sp.Integer(1), Context()) == Outcome(None, "")
    assert decide.equality(x + 1, 1 + x, ctx) == Outcome(True, "difference is 0 by direct evaluation")
    assert decide.equality(x, y, ctx) == Outcome(None, "")


# == disequality ===================================================================================

def test_disequality_two_ne_three():
    got = decide.disequality(sp.Integer(2), sp.Integer(3), Context())
    assert got == Outcome(True, "difference simplifies to -1, which is nonzero by SymPy's assumptions")


def test_disequality_x_plus_one_ne_x():
    x, _ = _reals()
    got = decide.disequality(x + 1, x, Context())
    assert got == Outcome(True, "difference simplifies to 1, which is nonzero by SymPy's assumptions")


def test_disequality_undecidable_stays_open():
    x, y = _reals()
    assert decide.disequality(x, y, Context()) == Outcome(None, "")


def test_disequality_equal_sides_fail():
    x, _ = _reals()
    got = decide.disequality(x + 1, 1 + x, Context())
    assert got == Outcome(False, "the two sides are equal (difference is 0 by direct evaluation)")
    got = decide.disequality(x, x, Context(hypotheses=[x + 1 > 0]))
    assert got == Outcome(False, "the two sides are equal (difference is 0 by direct evaluation)")


def test_disequality_with_matrices_undecided():
    assert decide.disequality(sp.Matrix([1]), sp.Integer(1), Context()) == Outcome(None, "")
    assert decide.disequality(sp.Integer(1), sp.Matrix([1]), Context()) == Outcome(None, "")
    assert decide.disequality(sp.Matrix([1]), sp.Matrix([2]), Context()) == Outcome(None, "")


def test_disequality_infinities_are_not_nonzero_numbers():
    one = sp.Integer(1)
    assert decide.disequality(sp.oo, one, Context()) == Outcome(None, "")
    assert decide.disequality(-sp.oo, one, Context()) == Outcome(None, "")
    assert decide.disequality(sp.zoo, one, Context()) == Outcome(None, "")


def test_disequality_uses_positive_atoms():
    x, y = _reals()
    got = decide.disequality(x + y, sp.Integer(0), Context(hypotheses=[x + y > 0]))
    assert got == Outcome(True, "difference simplifies to _pos0, which is nonzero by SymPy's assumptions")
    got = decide.disequality(x * y, sp.Integer(0), Context(hypotheses=[x > 0, x * y > 0]))
    assert got == Outcome(True, "difference simplifies to _pos1, which is nonzero by SymPy's assumptions")
    assert decide.disequality(x + y, sp.Integer(0), Context()) == Outcome(None, "")
    assert decide.disequality(x + y, sp.Integer(0), Context(hypotheses=[x + y >= 0])) == Outcome(None, "")


# == inequality ====================================================================================

def test_inequality_of_matrices_is_not_defined():
    assert decide.inequality(sp.Matrix([1]), True, Context()) == Outcome(
        None, "an inequality between matrices is not defined")


def test_inequality_sign_from_assumptions():
    x, y = _reals()
    assert decide.inequality(x**2 + 1, True, Context()) == Outcome(True, "sign from assumptions")
    assert decide.inequality(x**2, False, Context()) == Outcome(True, "sign from assumptions")
    assert decide.inequality(x + y, True, Context(hypotheses=[x + y > 0])) == Outcome(True, "sign from assumptions")
    assert decide.inequality(x + y, False, Context(hypotheses=[x + y >= 0])) == Outcome(True, "sign from assumptions")
    assert decide.inequality(x + y, True, Context(hypotheses=[x + y >= 0])) == Outcome(None, "")


def test_inequality_strict_square_not_proved():
    x, _ = _reals()
    assert decide.inequality(x**2, True, Context()).verdict is not True


def test_inequality_sign_from_simplify():
    x, _ = _reals()
    got = decide.inequality(sp.sin(x) ** 2 + sp.cos(x) ** 2, True, Context())
    assert got == Outcome(True, "sign from simplify")


def test_inequality_sign_from_factor():
    x, y = _reals()
    got = decide.inequality((y**2 + 1) * (x**2 - 2 * x + 1), False, Context())
    assert got == Outcome(True, "sign from factor")


def test_inequality_infinities_are_not_signs():
    assert decide.inequality(sp.oo, True, Context()) == Outcome(None, "")
    assert decide.inequality(sp.oo, False, Context()) == Outcome(None, "")


def test_inequality_falls_back_to_univariate_sign():
    x, _ = _reals()
    ctx = Context(domains={x: sp.Interval(2, sp.oo)})
    assert decide.inequality(x - 2, False, ctx) == Outcome(True, "exact real-root isolation on Interval(2, oo)")
    got = decide.inequality(x - 2, True, ctx)
    assert got == Outcome(False, "exact witness x = 2 on Interval(2, oo): the value is 0")


# == Context.positive_atoms / with_positive_atoms ==================================================

def test_positive_atoms_reads_compound_positive_hypotheses():
    x, y = _reals()
    ctx = Context(hypotheses=[x > 0, x + y > 0, x * y >= 0, 0 < x - y, x**2 + 1 > 1, x + y >= 0, 0 >= x + 2 * y,
                              sp.Eq(x**3 + y, 0)])
    atoms = ctx.positive_atoms()
    assert set(atoms) == {x + y, x * y, x - y}
    assert str(atoms[x + y]) == "_pos1" and atoms[x + y].is_positive is True
    assert str(atoms[x * y]) == "_nonneg2" and atoms[x * y].is_nonnegative is True
    assert atoms[x * y].is_positive is None
    assert str(atoms[x - y]) == "_pos3" and atoms[x - y].is_positive is True


def test_positive_atoms_less_than_forms():
    x, y = _reals()
    atoms = Context(hypotheses=[0 <= x - y, 0 > x * y]).positive_atoms()
    assert set(atoms) == {x - y}
    assert str(atoms[x - y]) == "_nonneg0" and atoms[x - y].is_nonnegative is True


def test_with_positive_atoms_replaces_outside_derivatives():
    x, y = _reals()
    f = sp.Function("f")
    ctx = Context(hypotheses=[x + y > 0])
    pos = ctx.positive_atoms()[x + y]
    e = sp.Derivative(f(x + y), x) + f(x + y)
    got = ctx.with_positive_atoms(e)
    assert got.has(sp.Derivative(f(x + y), x))
    assert got - sp.Derivative(f(x + y), x) == f(pos) or got == sp.Derivative(f(x + y), x) + f(got.atoms(sp.Dummy).pop())
    assert got.free_symbols - {x, y} and not (got - sp.Derivative(f(x + y), x)).has(x)


def test_with_positive_atoms_unrelated_derivative_is_entered():
    x, y = _reals()
    z = sp.Symbol("z", real=True)
    f = sp.Function("f")
    ctx = Context(hypotheses=[x + y > 0])
    got = ctx.with_positive_atoms(sp.Derivative(f(z, x + y), z))
    assert isinstance(got, sp.Derivative) and not got.has(x) and got.variables == (z,)


def test_with_positive_atoms_protects_whole_subs_around_derivative():
    x, y = _reals()
    f, g = sp.Function("f"), sp.Function("g")
    ctx = Context(hypotheses=[x + y > 0])
    e = sp.Subs(sp.Derivative(f(x + y), x) + g(x + y), x, 1)
    assert ctx.with_positive_atoms(e) == e


def test_with_positive_atoms_without_atoms_or_basic():
    x, y = _reals()
    assert Context().with_positive_atoms(x + y) == x + y
    ctx = Context(hypotheses=[x + y > 0])
    assert ctx.with_positive_atoms(3) == 3
    got = ctx.with_positive_atoms(sp.sqrt(x + y))
    assert not got.has(x) and got.is_positive is True
