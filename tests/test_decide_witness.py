"""Exact counterexamples and consistency witnesses (``decide.find_counterexample``, ``decide.find_witness``).

Numbers only ever refute, and only exactly: a point is reported only where every hypothesis, obligation and
domain holds exactly and the relation fails with an exact sign. The random points are deterministic (a seeded
``random.Random``); the expected points below are worked out by drawing from a fresh ``random.Random`` with the
same seed in the documented order (symbols sorted by name, then function coefficients, then indexed values),
never by calling the function under test. Private helpers are tested directly where the public route swallows
their failures (``_attempt``) or cannot reach a branch.
"""

from __future__ import annotations

import random

import pytest
import sympy as sp

from grpo_verify.proof import decide
from grpo_verify.proof.decide import Context, find_counterexample, find_witness


def _expectation(evaluates: bool):
    """An operator declaring ``free_atom`` (like a derivation's E[.]); optionally E[c] = c for a number c."""

    class E(sp.Function):
        nargs = 1
        is_real = True
        free_atom = True

        @classmethod
        def eval(cls, arg):
            if evaluates and arg.is_number:
                return arg
            return None

    return E


def _pos_real(r: random.Random) -> sp.Rational:
    return sp.Rational(r.randint(1, 3999), 1000)


def _n8(v) -> str:
    return sp.sstr(sp.N(v, 8))


# -- find_counterexample ---------------------------------------------------------------------------

@pytest.mark.parametrize("relation, offset, broken", [
    ("=", 1, True), ("=", -1, True), ("=", 0, False),
    ("!=", 0, True), ("!=", 1, False),
    ("<=", -1, True), ("<=", 0, False), ("<=", 1, False),
    ("<", 0, True), ("<", -1, True), ("<", 1, False),
    (">=", 1, True), (">=", 0, False), (">=", -1, False),
    (">", 0, True), (">", 1, True), (">", -1, False),
])
def test_counterexample_is_reported_exactly_where_the_sign_of_right_minus_left_breaks_the_relation(
        relation, offset, broken):
    w = sp.Symbol("w", positive=True)
    got = find_counterexample(w, relation, w + offset, Context(hypotheses=[w < 10]))
    if not broken:
        assert got is None
        return
    v = _pos_real(random.Random(0))  # the first point drawn with the default seed 0
    assert got == f"counterexample at w = {sp.sstr(v)}: right - left = {_n8(sp.Integer(offset))}"


def test_counterexample_shows_the_point_and_the_difference_to_eight_digits():
    w = sp.Symbol("w", positive=True)
    got = find_counterexample(w, "=", 2 * w, Context())
    v = _pos_real(random.Random(0))
    assert got == f"counterexample at w = {sp.sstr(v)}: right - left = {sp.sstr(sp.N(v, 8))}"
    assert got.endswith(": right - left = " + str(sp.Float(v, 8)))


def test_counterexample_with_a_nonzero_seed_draws_from_that_seed():
    w = sp.Symbol("w", positive=True)
    v = _pos_real(random.Random(5))
    assert find_counterexample(w, "=", w + 1, Context(hypotheses=[w < 10]), seed=5) == f"counterexample at w = {sp.sstr(v)}: right - left = 1.0000000"


def test_counterexample_search_stops_after_the_given_number_of_tries():
    k = sp.Symbol("k", integer=True)
    ctx = Context(domains={k: sp.Interval(0, 1000)})
    r = random.Random(0)
    draws = [r.randint(0, 1000) for _ in range(13)]
    assert draws[12] not in draws[:12]
    # "k != c" fails only at k = c, first drawn at the 13th try
    assert find_counterexample(k, "!=", sp.Integer(draws[12]), ctx) is None
    assert find_counterexample(k, "!=", sp.Integer(draws[12]), ctx, tries=13) == \
        f"counterexample at k = {draws[12]}: right - left = 0"


def test_counterexample_shows_at_most_eight_values():
    a = sp.symbols("a1:10", positive=True)
    r = random.Random(0)
    values = [_pos_real(r) for _ in a]
    got = find_counterexample(a[0], "=", a[0] + 1, Context(hypotheses=[sp.Add(*a) < 100]))
    shown = ", ".join(f"a{i + 1} = {sp.sstr(values[i])}" for i in range(8))
    assert got == f"counterexample at {shown}: right - left = 1.0000000"


def test_counterexample_respects_the_hypotheses_exactly():
    x = sp.Symbol("x", real=True)
    # x = x + 1 fails everywhere; the hypothesis x < 0 rejects the first two draws (positive)
    r = random.Random(0)
    points = []
    for _ in range(3):
        m = sp.Rational(r.randint(0, 3999), 1000)
        points.append(m if r.random() < 0.5 else -m)
    assert points[0] > 0 and points[1] > 0 and points[2] < 0
    got = find_counterexample(x, "=", x + 1, Context(hypotheses=[x < 0]))
    assert got == f"counterexample at x = {sp.sstr(points[2])}: right - left = 1.0000000"
    # a hypothesis that never holds at a drawn point: no counterexample
    assert find_counterexample(x, "=", x + 1, Context(hypotheses=[x > 100])) is None
    # a claim that holds wherever the hypothesis holds
    assert find_counterexample(x, "<=", sp.Integer(0), Context(hypotheses=[x <= 0])) is None


def test_counterexample_respects_the_definedness_obligations():
    x = sp.Symbol("x", real=True)
    assert find_counterexample(x, "=", x + 1, Context(obligations=[x > 100])) is None
    r = random.Random(0)
    m = sp.Rational(r.randint(0, 3999), 1000)
    first = m if r.random() < 0.5 else -m
    assert first > 0
    assert find_counterexample(x, "=", x + 1, Context(obligations=[x > 0])) == \
        f"counterexample at x = {sp.sstr(first)}: right - left = 1.0000000"


def test_counterexample_for_a_symbol_declared_even_is_drawn_only_at_even_values():
    n = sp.Symbol("n", even=True)
    # (-1)**n = 1 holds for every even n; odd draws must not refute it
    assert find_counterexample((-1) ** n, "=", sp.Integer(1), Context()) is None
    r = random.Random(0)
    draws = [r.randint(-6, -3) for _ in range(3)]  # small integer draws, no sign declared
    assert draws[0] % 2 and draws[1] % 2 and draws[2] % 2 == 0
    assert find_counterexample(n, "=", n + 1, Context(hypotheses=[n < 100])) == f"counterexample at n = {draws[2]}: right - left = 1.0000000"


def test_counterexample_is_not_searched_where_an_expectation_appears():
    E = _expectation(evaluates=True)
    y = sp.Symbol("y", positive=True)
    # with E[c] = c a number put in for y would make E[y] = y: one sample is no counterexample
    assert find_counterexample(E(y), "=", sp.Integer(100), Context()) is None
    assert find_counterexample(y, "=", y + 1, Context(hypotheses=[E(y) > 0])) is None
    assert find_counterexample(y, "=", y + 1, Context(obligations=[E(y) > 0])) is None
    assert find_counterexample(y, "=", y + 1, Context(hypotheses=[y > 0])) is not None


def test_counterexample_assigns_defined_symbols_their_definitions():
    k = sp.Symbol("k", integer=True, positive=True)
    S = sp.Symbol("S", integer=True, positive=True)
    v = random.Random(0).randint(1, 4)
    got = find_counterexample(S, "=", k, Context(hypotheses=[sp.Eq(S, k + 1)]))
    assert got == f"counterexample at k = {v}, S = {v + 1}: right - left = -1.0000000"


def test_counterexample_skips_points_where_a_definition_leaves_its_symbol_domain():
    k = sp.Symbol("k", integer=True, positive=True)
    S = sp.Symbol("S", integer=True, positive=True)
    r = random.Random(0)
    draws = [r.randint(1, 4) for _ in range(3)]
    assert draws == [4, 4, 1]  # S = 3 - k is not positive at k = 4
    got = find_counterexample(S, "=", S + 1, Context(hypotheses=[sp.Eq(S, 3 - k)]))
    assert got == "counterexample at k = 1, S = 2: right - left = 1.0000000"


def test_counterexample_between_matrices_names_the_whole_difference():
    w = sp.Symbol("w", positive=True)
    v = _pos_real(random.Random(0))
    ctx = Context(hypotheses=[w < 10])
    got = find_counterexample(sp.Matrix([[w, 0]]), "=", sp.Matrix([[w, 1]]), ctx)
    assert got == f"counterexample at w = {sp.sstr(v)}: right - left = {sp.sstr(sp.N(sp.Matrix([[0, 1]]), 8))}"
    one = find_counterexample(sp.Matrix([[w]]), "=", sp.Matrix([[w + 1]]), ctx)
    assert one == f"counterexample at w = {sp.sstr(v)}: right - left = 1.0000000"  # a single entry shows as a number
    assert find_counterexample(sp.Matrix([[w, 1]]), "=", sp.Matrix([[w, 1]]), ctx) is None


def test_counterexample_between_matrices_needs_two_matrices_of_one_shape_and_an_equation():
    w = sp.Symbol("w", positive=True)
    ctx = Context(hypotheses=[w < 10])
    assert find_counterexample(sp.Matrix([[w]]), "<=", sp.Matrix([[w - 1]]), ctx) is None
    assert find_counterexample(sp.Matrix([[w]]), "!=", sp.Matrix([[w]]), ctx) is None
    assert find_counterexample(sp.Matrix([[w]]), "=", sp.Matrix([[w, 1]]), ctx) is None
    assert find_counterexample(sp.Matrix([[w]]), "=", w + 1, ctx) is None
    assert find_counterexample(w + 1, "=", sp.Matrix([[w]]), ctx) is None


def test_counterexample_is_not_searched_where_a_value_cannot_be_assigned():
    r = sp.IndexedBase("r")
    # the label r alone is not a value that can be drawn
    assert find_counterexample(r[1], "=", r[1] + 1, Context(hypotheses=[r[1] + r > 0])) is None
    assert find_counterexample(r[1], "=", r[1] + 1, Context(hypotheses=[r[1] < 10])) is not None


# -- find_witness ------------------------------------------------------------------------------------

def test_witness_of_no_conditions_is_the_empty_point():
    assert find_witness([], Context()) == "no conditions"


def test_witness_assigns_a_defined_symbol_its_definition():
    k = sp.Symbol("k", integer=True, positive=True)
    S = sp.Symbol("S", integer=True, positive=True)
    v = random.Random(0).randint(1, 4)  # small group sizes: 1 ..., 4
    assert find_witness([sp.Eq(S, k + 1)], Context()) == f"k = {v}, S = {v + 1}"
    assert find_witness((sp.Eq(S, k + 1),), Context(), seed=3) == \
        f"k = {random.Random(3).randint(1, 4)}, S = {random.Random(3).randint(1, 4) + 1}"


def test_witness_shows_at_most_eight_values():
    a = sp.symbols("a1:10", positive=True)
    r = random.Random(0)
    values = [_pos_real(r) for _ in a]
    got = find_witness([sp.Add(*a) < 100], Context())
    assert got == ", ".join(f"a{i + 1} = {sp.sstr(values[i])}" for i in range(8))


def test_witness_skips_points_where_a_definition_leaves_its_symbol_domain():
    k = sp.Symbol("k", integer=True, positive=True)
    S = sp.Symbol("S", integer=True, positive=True)
    assert find_witness([sp.Eq(S, 3 - k)], Context()) == "k = 1, S = 2"  # draws 4, 4, 1 as above


def test_witness_for_a_symbol_declared_even_is_an_even_value():
    n = sp.Symbol("n", even=True)
    assert find_witness([n < 0], Context()) == "n = -6"  # draws -3, -3, -6


def test_witness_is_none_where_the_conditions_never_hold():
    w = sp.Symbol("w", positive=True)
    assert find_witness([w < 0], Context()) is None
    assert find_witness([w > 0, w > 5], Context()) is None  # draws lie in (0, 4)


def test_witness_search_stops_after_the_given_number_of_tries():
    k = sp.Symbol("k", integer=True)
    ctx = Context(domains={k: sp.Interval(0, 1000)})
    r = random.Random(0)
    draws = [r.randint(0, 1000) for _ in range(13)]
    condition = sp.Eq(2 * k, 2 * draws[12])
    assert find_witness([condition], ctx) is None
    assert find_witness([condition], ctx, tries=13) == f"k = {draws[12]}"


def test_witness_gives_an_expectation_the_value_of_its_definition():
    E = _expectation(evaluates=False)
    y = sp.Symbol("y", positive=True)
    v = _pos_real(random.Random(0))
    assert find_witness([sp.Eq(E(y), sp.Rational(1, 2)), y < 10], Context()) == f"y = {sp.sstr(v)}, E(y) = 1/2"


def test_witness_is_not_searched_where_a_value_cannot_be_assigned():
    r = sp.IndexedBase("r")
    assert find_witness([r[1] + r > 0], Context()) is None


# -- the random point ------------------------------------------------------------------------------

def _expected_value(kind: str, r: random.Random, small: bool):
    wide = 3 if small else 8
    if kind == "integer":
        return sp.Integer(r.randint(-6, -6 + wide))
    if kind == "positive integer":
        return sp.Integer(r.randint(1, 1 + wide))
    if kind == "nonnegative integer":
        return sp.Integer(r.randint(0, wide))
    if kind == "integer in [2, 5]":
        return sp.Integer(r.randint(2, 5))
    if kind == "integer in [3/2, oo)":
        return sp.Integer(r.randint(2, 2 + wide))
    if kind == "integer in (-oo, 3]":
        return sp.Integer(r.randint(-6, 3))
    if kind == "positive integer in (-oo, 0]":
        return sp.Integer(r.randint(1, 1))
    if kind == "integer in [0, sqrt(2)]":
        return sp.Integer(r.randint(-6, -6 + wide))
    if kind == "real in [1, 3]":
        return 1 + 2 * sp.Rational(r.randint(0, 1000), 1000)
    if kind == "real in (-oo, 2]":
        return -3 + 5 * sp.Rational(r.randint(0, 1000), 1000)
    if kind == "real in [1, oo)":
        return 1 + 5 * sp.Rational(r.randint(0, 1000), 1000)
    if kind == "positive":
        return sp.Rational(r.randint(1, 3999), 1000)
    if kind == "nonnegative":
        return sp.Rational(r.randint(0, 3999), 1000)
    m = sp.Rational(r.randint(0, 3999), 1000)  # real, and real with a domain that is no rational interval
    return m if r.random() < 0.5 else -m


def _symbol_and_context(kind: str):
    if "integer" in kind:
        s = sp.Symbol("s", integer=True, positive=kind.startswith("positive") or None,
                      nonnegative=kind.startswith("nonnegative") or None)
    else:
        s = sp.Symbol("s", real=True, positive=(kind == "positive") or None,
                      nonnegative=(kind == "nonnegative") or None)
    domains = {"integer in [2, 5]": sp.Interval(2, 5), "integer in [3/2, oo)": sp.Interval(sp.Rational(3, 2), sp.oo),
               "integer in (-oo, 3]": sp.Interval(-sp.oo, 3), "positive integer in (-oo, 0]": sp.Interval(-sp.oo, 0),
               "integer in [0, sqrt(2)]": sp.Interval(0, sp.sqrt(2)), "real in [1, 3]": sp.Interval(1, 3),
               "real in (-oo, 2]": sp.Interval(-sp.oo, 2), "real in [1, oo)": sp.Interval(1, sp.oo),
               "real in [sqrt(2), 3]": sp.Interval(sp.sqrt(2), 3), "real in [0, sqrt(2)]": sp.Interval(0, sp.sqrt(2)),
               "real in {1, 2}": sp.FiniteSet(1, 2)}
    return s, Context(domains={s: domains[kind]} if kind in domains else {})


@pytest.mark.parametrize("kind", [
    "integer", "positive integer", "nonnegative integer", "integer in [2, 5]", "integer in [3/2, oo)",
    "integer in (-oo, 3]", "positive integer in (-oo, 0]", "integer in [0, sqrt(2)]", "real in [1, 3]",
    "real in (-oo, 2]", "real in [1, oo)", "real in [sqrt(2), 3]", "real in [0, sqrt(2)]", "real in {1, 2}",
    "positive", "nonnegative", "real"])
def test_random_value_draws_from_the_declared_domain_in_the_documented_way(kind):
    # private: the public searches swallow a failing draw (``_attempt``) and show only the first point
    s, ctx = _symbol_and_context(kind)
    for small in (False, True):
        for seed in range(8):
            want = _expected_value(kind, random.Random(seed), small)
            if small:
                got = decide._random_value(s, random.Random(seed), ctx, small=True)
            else:
                got = decide._random_value(s, random.Random(seed), ctx)
            assert got == want and type(got) is type(want), (kind, small, seed)


def test_random_value_reaches_the_top_of_its_ranges():
    # seeds whose first draw of so many random bits is the top value of the range, rejected beyond it
    assert random.Random(3106).getrandbits(12) == 3999 and random.Random(52).getrandbits(10) == 1001
    w = sp.Symbol("w", positive=True)
    assert decide._random_value(w, random.Random(3106), Context()) == _pos_real(random.Random(3106))
    t = sp.Symbol("t", real=True)
    ctx = Context(domains={t: sp.Interval(0, 1)})
    assert decide._random_value(t, random.Random(52), ctx) == sp.Rational(random.Random(52).randint(0, 1000), 1000)


def _coefficients(r: random.Random, count: int) -> list:
    return [sp.Rational(r.randint(-900, 900), 1000) for _ in range(count)]


def test_random_function_is_a_real_quadratic_with_a_cross_term_in_its_first_two_arguments():
    # private: a wrong Lambda only changes which points are drawn
    x, y = sp.symbols("x y", real=True)
    f = sp.Function("f", real=True)
    for seed in (0, 1, 5838):  # 5838: the first 11 random bits are 1801, just beyond the range
        lam = decide._random_function(f(x, y), random.Random(seed))
        c = _coefficients(random.Random(seed), 6)
        assert all(v.is_real for v in lam.variables) and len(lam.variables) == 2
        assert lam(3, 5) == c[0] + 3 * c[1] + 9 * c[2] + 5 * c[3] + 25 * c[4] + 15 * c[5]
        assert lam(-2, 7) == c[0] - 2 * c[1] + 4 * c[2] + 7 * c[3] + 49 * c[4] - 14 * c[5]
    three = decide._random_function(f(x, y, x), random.Random(0))
    c = _coefficients(random.Random(0), 8)
    assert three(1, 2, 3) == c[0] + c[1] + c[2] + 2 * c[3] + 4 * c[4] + 3 * c[5] + 9 * c[6] + 2 * c[7]


@pytest.mark.parametrize("sign", ["positive", "nonnegative", "real"])
def test_random_function_of_a_function_declared_nonnegative_is_an_exponential(sign):
    x = sp.Symbol("x", real=True)
    f = sp.Function("f", **{sign: True})
    lam = decide._random_function(f(x), random.Random(0))
    c = _coefficients(random.Random(0), 3)
    poly = c[0] + 3 * c[1] + 9 * c[2]
    assert lam(3) == (sp.exp(poly) if sign != "real" else poly)


def test_instantiate_replaces_symbols_then_functions_then_indexed_atoms():
    # private: _instantiate's failures are swallowed by the searches
    n = sp.Symbol("n", integer=True)
    w = sp.Symbol("w", positive=True)
    f = sp.Function("f", real=True)
    r = sp.IndexedBase("r")
    exprs = [n + w, f(w), f(n), r[2], r[1]]
    for small in (False, True):
        rng = random.Random(0)
        want = random.Random(0)
        nv = sp.Integer(want.randint(-6, -3 if small else 2))
        wv = _pos_real(want)
        c = _coefficients(want, 3)
        r1m = sp.Rational(want.randint(0, 3999), 1000)
        r1 = r1m if want.random() < 0.5 else -r1m
        r2m = sp.Rational(want.randint(0, 3999), 1000)
        r2 = r2m if want.random() < 0.5 else -r2m
        got = decide._instantiate(exprs, rng, Context(), small=True) if small else \
            decide._instantiate(exprs, rng, Context())
        xs, values = got
        assert xs == [nv + wv, c[0] + c[1] * wv + c[2] * wv**2, c[0] + c[1] * nv + c[2] * nv**2, r2, r1]
        assert values == {n: nv, w: wv, r[1]: r1, r[2]: r2}
        assert list(values) == [n, w, r[1], r[2]]


def test_instantiate_defined_assigns_definitions_after_the_drawn_symbols():
    # private: reached through the searches only inside _attempt
    k = sp.Symbol("k", integer=True, positive=True)
    S = sp.Symbol("S", integer=True, positive=True)
    conditions = [sp.Eq(S, k + 1), S > 1]
    v = random.Random(0).randint(1, 4)
    closed, values = decide._instantiate_defined(conditions, {S: k + 1}, random.Random(0), Context())
    assert closed == [sp.true, sp.true] and values == {k: v, S: v + 1} and list(values) == [k, S]
    assert decide._instantiate_defined([S > 0], {S: k - 5}, random.Random(0), Context()) is None
    E = _expectation(evaluates=True)
    y = sp.Symbol("y", positive=True)
    # E[y] = 5 cannot hold once y is a number y0 != 5 and E[y0] = y0
    assert decide._instantiate_defined([sp.Eq(E(y), 5), y < 10], {E(y): sp.Integer(5)}, random.Random(0),
                                       Context()) is None


# -- checks at the point ---------------------------------------------------------------------------

def test_atoms_agree_at_point_compares_evaluated_and_coinciding_expectations():
    # private: the witness search only shows the accepted point
    E = _expectation(evaluates=True)
    y = sp.Symbol("y", real=True)
    S = sp.Symbol("S")
    i, j = sp.symbols("i j", integer=True)
    r = sp.IndexedBase("r")
    agree = decide._atoms_agree_at_point
    assert agree([E(y)], [sp.Integer(3)], {y: sp.Integer(3)}) is True
    assert agree([E(y)], [sp.Integer(2)], {y: sp.Integer(3)}) is False
    assert agree([S, E(y)], [sp.Integer(5), sp.Integer(2)], {y: sp.Integer(3), S: sp.Integer(5)}) is False
    half, third = sp.Rational(1, 2), sp.Rational(1, 3)
    same, other = {i: sp.Integer(1), j: sp.Integer(1)}, {i: sp.Integer(1), j: sp.Integer(2)}
    assert agree([E(r[i]), E(r[j])], [half, half], same) is True
    assert agree([E(r[i]), E(r[j])], [half, third], same) is False
    assert agree([E(r[i]), E(r[j])], [half, third], other) is True
    assert agree([E(y), E(r[i]), E(r[j])], [sp.Integer(3), half, third], {**same, y: sp.Integer(3)}) is False
    assert agree([], [], {}) is True


@pytest.mark.parametrize("declared, value, ok", [
    ("positive", 1, True), ("positive", 0, False), ("nonnegative", 0, True), ("nonnegative", -1, False),
    ("negative", -1, True), ("negative", 0, False), ("nonpositive", 0, True), ("nonpositive", 1, False),
    ("nonpositive", -1, True), ("nonzero", 1, True), ("nonzero", -1, True), ("nonzero", 0, False),
    ("integer", 2, True), ("integer", "1/2", False), ("real", "1/2", True), ("positive", "sqrt(2) - 1", True),
])
def test_in_domain_checks_integrality_and_sign_exactly(declared, value, ok):
    # private: a definition's value outside its symbol's domain only makes the searches draw again
    s = sp.Symbol("s", **{declared: True})
    assert decide._in_domain(s, sp.sympify(value)) is ok


def test_in_domain_refuses_a_value_whose_sign_is_not_exact():
    x = sp.Symbol("x", real=True)
    assert decide._in_domain(sp.Symbol("s", real=True), x) is False
    assert decide._in_domain(sp.Symbol("s", positive=True), x) is False


def test_truth_is_exact_or_none():
    x = sp.Symbol("x", real=True)
    truth = decide._truth
    assert truth(sp.true) is True and truth(True) is True
    assert truth(sp.false) is False and truth(False) is False
    assert truth(sp.Lt(1, 2, evaluate=False)) is True
    assert truth(sp.Lt(2, 1, evaluate=False)) is False
    assert truth(x > 0) is None


def test_declared_properties_of_symbols_must_hold_of_their_values():
    n = sp.Symbol("n", even=True)
    p = sp.Symbol("p", prime=True)
    r = sp.IndexedBase("r")
    has = decide._has_declared_properties
    assert has({n: sp.Integer(2), p: sp.Integer(3)}) is True
    assert has({n: sp.Integer(3)}) is False
    assert has({p: sp.Integer(4)}) is False
    assert has({n: sp.Symbol("y")}) is False  # unknown is not enough
    assert has({sp.Symbol("z"): sp.Integer(3), r[1]: sp.Integer(3)}) is True
    assert has({}) is True


def test_free_atom_is_found_inside_expressions_and_matrices():
    E = _expectation(evaluates=False)
    y = sp.Symbol("y", real=True)
    assert decide._has_free_atom(1 + E(y) ** 2) is True
    assert decide._has_free_atom(sp.Matrix([[1, E(y)]])) is True
    assert decide._has_free_atom(sp.Matrix([[1, y]])) is False
    assert decide._has_free_atom(y + 1) is False
    assert decide._has_free_atom(3) is False


def test_unassignable_means_a_symbol_or_indexed_atom_is_left():
    y = sp.Symbol("y")
    r = sp.IndexedBase("r")
    un = decide._has_unassignable
    assert un([sp.Integer(1), sp.true]) is False
    assert un([sp.Integer(1), y + 1]) is True
    assert un([sp.Integer(1), r[1]]) is True
    assert un([sp.Matrix([[y]]), sp.ImmutableMatrix([[y]]), 3]) is False
    assert un([]) is False


def test_definitions_solve_equations_with_a_lone_symbol_on_either_side():
    a, b, k, m, S = sp.symbols("a b k m S")
    E = _expectation(evaluates=False)
    d = decide._definitions
    assert d([sp.Eq(S, k + m)]) == {S: k + m}
    assert d([sp.Eq(k + m, S)]) == {S: k + m}
    assert d([sp.Eq(a, b)]) == {a: b}
    assert d([sp.Eq(S, S ** 2 + 1)]) == {}
    assert d([sp.Eq(a, b + 1), sp.Eq(b, a)]) == {a: b + 1}
    assert d([sp.Eq(a, b + 1), sp.Eq(b, 2 * k), S > 0]) == {a: b + 1, b: 2 * k}
    assert d([sp.Eq(a, b + 1), sp.Eq(a, 2 * k)]) == {a: b + 1}
    assert d([sp.Eq(E(k), sp.Rational(1, 2))]) == {}
    assert d([sp.Eq(E(k), sp.Rational(1, 2))], free_atoms=True) == {E(k): sp.Rational(1, 2)}
    assert d([sp.Eq(k + 1, m + 2)], free_atoms=True) == {}
    assert d([sp.Eq(a + 1, b)], free_atoms=True) == {b: a + 1}


def test_resolved_replaces_chained_definitions_a_bounded_number_of_times():
    a, b, c = sp.symbols("a b c")
    assert decide._resolved(a + 1, {a: b + 1, b: 2 * c}) == 2 * c + 2
    assert decide._resolved(a, {}) == a
    assert decide._resolved(a, {a: b, b: a}) == b  # three replacements of a cycle: a -> b -> a -> b


# -- exact signs -------------------------------------------------------------------------------------

class _Two(sp.Function):
    """A number SymPy can evaluate (2) but whose sign its assumptions do not know."""
    nargs = 1

    def _eval_evalf(self, prec):
        return sp.Float(2 * self.args[0], prec)


class _Unevaluable(sp.Function):
    nargs = 1
    is_positive = True

    def _eval_evalf(self, prec):
        raise ValueError("no value")


@pytest.mark.parametrize("value, sign", [
    ("3/2", 1), ("-3/2", -1), ("0", 0), ("sqrt(2) - 1", 1), ("1 - sqrt(2)", -1), ("sqrt(2)", 1), ("-sqrt(2)", -1),
    ("pi - 3", 1), ("3 - pi", -1),
])
def test_exact_sign_of_a_closed_number(value, sign):
    # private: a wrong sign shows only as a wrong or missing counterexample
    assert decide._exact_sign(sp.sympify(value)) == sign


def test_exact_sign_is_none_unless_certain():
    es = decide._exact_sign
    x = sp.Symbol("x", real=True)
    assert es(sp.Add(sp.sqrt(2), -sp.sqrt(2), evaluate=False)) == 0
    assert es(x) is None
    assert es(sp.true) is None
    assert es(sp.oo) is None and es(-sp.oo) is None and es(sp.zoo) is None and es(sp.nan) is None
    assert es(1 + sp.I) is None
    assert es(sp.Add(2, sp.Mul(sp.I, sp.I, evaluate=False), evaluate=False)) is None  # holds I
    assert es(sp.Add(2, sp.atan(sp.oo, evaluate=False), evaluate=False)) is None  # holds oo
    assert es(sp.Add(1, sp.exp(-sp.oo, evaluate=False), evaluate=False)) is None  # holds -oo
    assert es(_Two(1)) is None and es(-_Two(1)) is None  # the assumptions do not know the sign
    assert es(_Unevaluable(1)) is None
    tiny = sp.pi - sp.Rational(str(sp.N(sp.pi, 45)))
    assert abs(sp.N(tiny, 60)) < sp.Rational(1, 10**30)
    assert es(tiny) is None
