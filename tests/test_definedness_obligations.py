"""What ``grpo_verify/proof/definedness.py`` tells the user: each refusal's message and each obligation's
condition, reason, local hypotheses and bound symbols, pinned exactly.

These close the gaps left by ``test_kernel.py`` and ``test_proof_validation.py`` (found by mutmut's run on
definedness.py): the obligations of Heaviside, Piecewise, factorial, binomial and of SymPy functions of
unknown domain, the local hypotheses of every partial function inside a Sum, the order recorded for a kink,
and the refusals of inexact, complex or non-SymPy input. Every object is built inside its test (mutmut
imports test modules before the mutant under test is active).
"""

from __future__ import annotations

import pytest
import sympy as sp

from grpo_verify.proof import KernelError, Result


def _symbols():
    """x real, j and n integer, and the local hypotheses of a Sum over j = 1..n."""
    x = sp.Symbol("x", real=True)
    j = sp.Symbol("j", integer=True)
    n = sp.Symbol("n", integer=True)
    return x, j, n, (sp.Ge(j, 1), sp.Le(j, n))


def _refused(build, message: str) -> None:
    """Building raises KernelError with exactly ``message``."""
    with pytest.raises(KernelError) as caught:
        build()
    assert str(caught.value) == message


def _inside_sum(body, *words: str):
    """The one obligation of Sum(body, (j, 1, n)) whose reason contains every word (the range's own
    obligation, n >= 0, is not it)."""
    from grpo_verify.proof.definedness import obligations

    x, j, n, _ = _symbols()
    found = [o for o in obligations(sp.Sum(body, (j, 1, n))) if all(word in o.reason for word in words)]
    assert len(found) == 1, found
    return found[0]


# -- validate: what is refused, with a message that names where ------------------------------------

def test_a_python_float_is_refused_with_where_it_stands_and_what_to_write_instead():
    # the message tells the user the side and the fix (validate's first check, before any SymPy traversal)
    x, *_ = _symbols()
    _refused(lambda: Result(name="t", doc="d", lhs=x, rhs=0.5),
             "t: right-hand side: the float 0.5 is not exact; write it as a Rational")


def test_a_matrix_is_validated_entry_by_entry_under_the_name_of_its_side():
    # a real matrix is accepted; a complex entry is refused with the side's name, not "None"
    x, *_ = _symbols()
    z = sp.Symbol("z")
    Result(name="t", doc="d", lhs=sp.ImmutableMatrix([[x, 1]]), rhs=sp.ImmutableMatrix([[x, 1]]))
    _refused(lambda: Result(name="t", doc="d", lhs=sp.ImmutableMatrix([[x, z]]), rhs=sp.ImmutableMatrix([[x, x]])),
             "t: left-hand side: the symbol z may be complex (SymPy's default); declare its domain, "
             "e.g. Symbol('z', real=True)")


def test_something_that_is_not_a_sympy_expression_is_refused_by_name():
    from grpo_verify.proof.definedness import validate

    x, *_ = _symbols()
    _refused(lambda: validate([x], "here"), "here: [x] is not a SymPy expression")


def test_the_imaginary_unit_is_refused_as_not_real():
    # I is not a SymPy Number: only its membership in the non-real constants catches it
    x, *_ = _symbols()
    _refused(lambda: Result(name="t", doc="d", lhs=x + sp.I, rhs=x), "t: left-hand side: I is not a real number")


def test_an_undeclared_function_is_refused_with_the_declaration_to_write():
    x, *_ = _symbols()
    _refused(lambda: Result(name="t", doc="d", lhs=sp.Function("g")(x), rhs=x),
             "t: left-hand side: the function g may be complex-valued; declare Function('g', real=True)")


# -- _collect: sums, derivatives ---------------------------------------------------------------------

def test_a_sum_whose_limit_is_a_bare_index_is_refused_by_name():
    # SymPy's constructor refuses such a Sum; one built around it (Basic.__new__) must not reach the kernel
    from grpo_verify.proof.definedness import obligations

    x, j, _, _ = _symbols()
    _refused(lambda: obligations(sp.Basic.__new__(sp.Sum, x, sp.Tuple(j))),
             "Sum(x, j): a sum or product needs explicit limits (j, lo, hi)")


def test_a_kink_of_a_higher_derivative_records_the_derivative_s_order():
    # the smoothing rule reads the order from the kink; a second derivative of |x| is not a first one
    from grpo_verify.proof.definedness import obligations

    x, *_ = _symbols()
    (o,) = obligations(sp.Derivative(sp.Abs(x), (x, 2)))
    assert (o.condition, o.kink, o.local, o.bound) == (sp.false, (sp.Abs(x), x, None, 2), (), ())


@pytest.mark.parametrize("name", ["log", "tan", "cot", "asin"])
def test_a_partial_function_inside_a_sum_is_required_only_in_the_sum_s_range(name):
    """log, tan, cot and asin of x + j inside a Sum over j = 1..n: the obligation holds for j in 1..n only
    (local) and j is bound there."""
    x, j, n, in_range = _symbols()
    a = x + j
    expected = {
        "log": (sp.log(a), sp.Gt(a, 0), "log needs a positive argument: log(j + x)"),
        "tan": (sp.tan(a), sp.Ne(sp.cos(a), 0), "tan(j + x) has poles where cos = 0"),
        "cot": (sp.cot(a), sp.Ne(sp.sin(a), 0), "cot(j + x) has poles where sin = 0"),
        "asin": (sp.asin(a), sp.And(sp.Ge(a, -1), sp.Le(a, 1)), "asin(j + x) needs -1 <= argument <= 1"),
    }[name]
    body, condition, reason = expected
    o = _inside_sum(body, reason)
    assert (o.condition, o.reason, o.local, o.bound) == (condition, reason, in_range, (j,))


# -- Heaviside ----------------------------------------------------------------------------------------

def test_heaviside_needs_a_nonzero_argument_where_it_stands():
    """Heaviside(0) is SymPy's convention 1/2, not mathematics: Heaviside(x - j) in a Sum needs x != j for
    j in 1..n (its second argument, the value 1/2, is not what is checked)."""
    x, j, n, in_range = _symbols()
    o = _inside_sum(sp.Heaviside(x - j), "Heaviside(0)")
    assert (o.condition, o.reason, o.local, o.bound, o.kink) == (
        sp.Ne(x - j, 0), "Heaviside(-j + x): Heaviside(0) is a convention, not a value", in_range, (j,), None)


def test_heaviside_alone_has_exactly_its_own_obligation():
    from grpo_verify.proof.definedness import Obligation, obligations

    x, *_ = _symbols()
    assert obligations(sp.Heaviside(x + 1)) == [
        Obligation(sp.Ne(x + 1, 0), "Heaviside(x + 1): Heaviside(0) is a convention, not a value")]


def test_heaviside_of_a_variable_that_may_be_zero_is_not_shown_to_be_defined():
    # H(x) for x >= 0 is undefined at x = 0 (SymPy's 1/2 is a convention): the user is told so, by its reason;
    # for x > 0 the obligation is discharged
    from grpo_verify.proof import Assumption, Status

    x, *_ = _symbols()
    claim = dict(name="t", doc="d", lhs=sp.Heaviside(x), rhs=sp.Integer(1))
    report = Result(**claim, assumptions=(Assumption("x >= 0", x >= 0),)).check()
    assert report.status is Status.UNPROVED
    assert report.steps[0].detail == ("not shown to be defined: Heaviside(x): Heaviside(0) is a convention, "
                                      "not a value (needs Ne(x, 0))")
    report = Result(**claim, assumptions=(Assumption("x > 0", x > 0),)).check()
    assert "not shown to be defined" not in report.steps[0].detail


# -- Piecewise ----------------------------------------------------------------------------------------

def test_a_piecewise_with_one_conditional_branch_is_defined_only_where_it_applies():
    # a single branch: the last branch is also the first (no other index exists)
    from grpo_verify.proof.definedness import Obligation, obligations

    x, *_ = _symbols()
    assert obligations(sp.Piecewise((1 / x, x > 0))) == [
        Obligation(sp.Gt(x, 0), "Piecewise((1/x, x > 0)) is undefined where no branch applies"),
        Obligation(sp.Ne(x, 0), "1/x: division by x")]


def test_a_piecewise_without_an_otherwise_branch_needs_one_of_its_conditions_where_it_stands():
    x, j, n, in_range = _symbols()
    o = _inside_sum(sp.Piecewise((0, x > j), (1, x < j)), "no branch applies")
    assert (o.condition, o.reason, o.local, o.bound) == (
        sp.Or(sp.Lt(j, x), sp.Gt(j, x)), "Piecewise((0, j < x), (1, j > x)) is undefined where no branch applies", in_range,
        (j,))


def test_a_piecewise_with_an_otherwise_branch_is_defined_everywhere():
    from grpo_verify.proof.definedness import obligations

    x, *_ = _symbols()
    assert obligations(sp.Piecewise((0, x > 0), (1, x < -1), (2, True))) == []


# -- factorial and binomial ---------------------------------------------------------------------------

def test_a_factorial_needs_a_non_negative_argument_where_it_stands():
    x, j, n, in_range = _symbols()
    o = _inside_sum(sp.factorial(n - j), "factorial")
    assert (o.condition, o.reason, o.local, o.bound) == (
        sp.Ge(n - j, 0), "factorial(-j + n) needs a non-negative integer argument", in_range, (j,))


def test_a_factorial_of_a_real_variable_is_refused():
    # x! for real x is the Gamma function, not the combinatorial factorial the kernel knows
    from grpo_verify.proof.definedness import Obligation, obligations

    x, *_ = _symbols()
    assert obligations(sp.factorial(x)) == [
        Obligation(sp.false, "factorial(x) needs a non-negative integer argument")]


def test_a_binomial_needs_integer_arguments_and_a_non_negative_top_where_it_stands():
    x, j, n, in_range = _symbols()
    o = _inside_sum(sp.binomial(n, j), "binomial")
    assert (o.condition, o.reason, o.local, o.bound) == (
        sp.Ge(n, 0), "binomial(n, j) needs integer arguments with n >= 0", in_range, (j,))


def test_a_binomial_with_a_real_argument_on_either_side_is_refused():
    from grpo_verify.proof.definedness import Obligation, obligations

    x, _, n, _ = _symbols()
    assert obligations(sp.binomial(x, 2)) == [
        Obligation(sp.false, "binomial(x, 2) needs integer arguments with n >= 0")]
    assert obligations(sp.binomial(n, x)) == [
        Obligation(sp.false, "binomial(n, x) needs integer arguments with n >= 0")]


# -- functions of unknown domain ----------------------------------------------------------------------

def test_a_sympy_function_of_unknown_domain_is_refused_by_name_where_it_stands():
    x, j, n, in_range = _symbols()
    o = _inside_sum(sp.gamma(x + j), "does not know")
    assert (o.condition, o.reason, o.local, o.bound) == (
        sp.false, "the kernel does not know the domain of gamma", in_range, (j,))


# -- Subs ---------------------------------------------------------------------------------------------

def test_an_obligation_on_a_derivative_at_a_point_names_the_derivative_at_the_point():
    """1/f'(0) needs f'(0) != 0: the condition and the reason (built while the derivative stood for a
    placeholder) both name the derivative at the point, never the placeholder."""
    from grpo_verify.proof.definedness import Obligation, obligations

    x, *_ = _symbols()
    f = sp.Function("f", real=True)
    at_zero = sp.Subs(sp.Derivative(f(x), x), x, 0)
    assert obligations(sp.Subs(1 / sp.Derivative(f(x), x), x, 0)) == [
        Obligation(sp.Ne(at_zero, 0), f"1/{at_zero}: division by {at_zero}")]
    two = obligations(sp.Subs(1 / (sp.Derivative(f(x), x) * sp.Derivative(f(x), (x, 2))), x, 0))
    assert [o.reason for o in two] == [f"1/{d}: division by {d}" for d in
                                       (at_zero, sp.Subs(sp.Derivative(f(x), (x, 2)), x, 0))]


def test_eleven_derivatives_at_a_point_are_each_named_in_their_own_reason():
    """With ten or more placeholders one name is a prefix of another (_derivative1, _derivative10): each
    reason still names its own derivative."""
    from grpo_verify.proof.definedness import obligations

    x, *_ = _symbols()
    f = sp.Function("f", real=True)
    derivatives = [sp.Derivative(f(x), (x, order)) for order in range(1, 12)]
    found = obligations(sp.Subs(1 / sp.Mul(*derivatives), x, 0))
    expected = {f"1/{sp.Subs(d, x, 0)}: division by {sp.Subs(d, x, 0)}" for d in derivatives}
    assert {o.reason for o in found} == expected


# -- a summation index declared positive: its sign comes from the lower limit ----------------------

def _declared_positive_index():
    jp = sp.Symbol("j", integer=True, positive=True)
    return jp, sp.Symbol("i", integer=True), sp.Symbol("R", integer=True, positive=True)


def _obligation_fields(e) -> list:
    from grpo_verify.proof import definedness

    return [(o.condition, o.reason, o.local, o.kink, o.bound) for o in definedness.obligations(e)]


def _obligation_texts(e) -> list:
    return [(sp.sstr(condition), reason, [sp.sstr(h) for h in local])
            for condition, reason, local, _kink, _bound in _obligation_fields(e)]


def test_an_index_declared_positive_from_0_keeps_only_non_negativity():
    # j from 0: j >= 0 by its range (sqrt(j) needs nothing, the range's own j >= 0 is already true), but not
    # j > 0 (1/sqrt(j) needs it, with only j <= R to go on)
    jp, _i, R = _declared_positive_index()
    assert _obligation_texts(sp.Sum(sp.sqrt(jp), (jp, 0, R))) == []
    assert _obligation_texts(sp.Sum(1 / sp.sqrt(jp), (jp, 0, R))) == [
        ("j > 0", "1/sqrt(j): a negative real power needs a positive base", ["True", "j <= R"])]


def test_an_index_declared_positive_is_renamed_in_every_limit_not_only_up_to_the_first_plain_one():
    # Sum over i = 1..2 (a plain index, listed first) and j = 0..R: log(0) is reached, so log(j) needs j > 0
    jp, i, R = _declared_positive_index()
    assert _obligation_texts(sp.Sum(sp.log(jp) * i, (i, 1, 2), (jp, 0, R))) == [
        ("j > 0", "log needs a positive argument: log(j)", ["True", "j <= R", "i >= 1", "i <= 2"])]


def test_a_renamed_index_does_not_capture_a_free_symbol_of_the_same_name_and_domain():
    # the free j (integer, >= 0) stays free: the index becomes a Dummy printing as _j, not that symbol
    jp, _i, R = _declared_positive_index()
    free = sp.Symbol("j", integer=True, nonnegative=True)
    from grpo_verify.proof import definedness

    (o,) = definedness.obligations(sp.Sum(sp.log(jp) * free, (jp, 0, R)))
    (index,) = o.condition.free_symbols - {free}
    assert isinstance(index, sp.Dummy) and index.is_nonnegative and index.is_integer and sp.sstr(index) == "_j"
    assert o.condition == sp.Gt(index, 0) and o.reason == f"log needs a positive argument: log({index})"


def test_a_derivative_of_an_expectation_is_an_obligation_that_never_holds_with_its_reason_and_scope():
    class Ex(sp.Function):  # a derivation's expectation: an operator declaring free_atom
        free_atom = True

    x, j, n, _in_range = _symbols()
    assert _obligation_fields(sp.Derivative(Ex(x), x)) == [
        (sp.false, "d/dx of Ex(x): the kernel does not differentiate an expectation", (), None, ())]
    assert _obligation_fields(sp.Sum(sp.Derivative(Ex(x * j), x), (j, 1, n)))[1:] == [
        (sp.false, "d/dx of Ex(j*x): the kernel does not differentiate an expectation",
         (sp.Ge(j, 1), sp.Le(j, n)), None, (j,))]


def test_a_square_matrix_of_a_size_not_known_to_be_an_integer_is_an_obligation_that_never_holds():
    from grpo_verify.proof.matrices import MatrixRank, SquareMatrix

    x, j, n, _in_range = _symbols()
    i, l = sp.symbols("i l", integer=True)
    inside = sp.Sum(MatrixRank(SquareMatrix(x * j, sp.Lambda((i, l), 1))), (j, 1, n))
    assert _obligation_fields(inside)[1:] == [
        (sp.false, "SquareMatrix(j*x, Lambda((i, l), 1)): the size j*x of a square matrix is not known to be an integer",
         (sp.Ge(j, 1), sp.Le(j, n)), None, (j,)),
        (sp.Ge(j * x, 0), "SquareMatrix(j*x, Lambda((i, l), 1)): a square matrix needs a size >= 0",
         (sp.Ge(j, 1), sp.Le(j, n)), None, (j,))]
