"""What the proof's data classes refuse when they are built, and the little they compute themselves.

``Result``, ``Step``, ``Assumption``, ``Induction``, ``MinimumAt`` and ``ForEach``
(``grpo_verify/proof/result.py``) are plain data, validated when built: a malformed one must be
refused at once with a message that says what is wrong and where, never reach the kernel. Each
refusal is checked on the start of its message (which names the object at fault) and on its key
words (its end where the message is one fixed sentence), not on the whole sentence.
"""

from __future__ import annotations

import os

import pytest
import sympy as sp

from grpo_verify.proof import Assumption, ForEach, Induction, KernelError, MinimumAt, Result, Status, Step

x, y = sp.symbols("x y", real=True)
z = sp.Symbol("z")  # complex (SymPy's default)
n = sp.Symbol("n", integer=True, nonnegative=True)
i = sp.Symbol("i", integer=True)
R = sp.Symbol("R", integer=True, positive=True)
r = sp.IndexedBase("r", real=True)
f = sp.Function("f", real=True)


def refused(build, start: str, *words: str, end: str = "", error: type = ValueError) -> str:
    """Building raises ``error`` whose message starts with ``start``, contains ``words`` and ends with ``end``."""
    with pytest.raises(error) as caught:
        build()
    message = str(caught.value)
    assert message.startswith(start), message
    for word in words:
        assert word in message, message
    assert message.endswith(end), message
    return message


def result(**kw) -> Result:
    kw.setdefault("name", "t")
    kw.setdefault("doc", "A statement under test.")
    kw.setdefault("lhs", x)
    kw.setdefault("rhs", x)
    return Result(**kw)


# -- ForEach -------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, text", [
    ((2, 3, 4), "R = 2..4"),
    ((2, 3), "R in {2, 3}"),
    ((7,), "R in {7}"),
    ((1, 3, 5), "R in {1, 3, 5}"),
    ((4, 3, 2), "R in {4, 3, 2}"),
])
def test_a_range_of_values_is_described_as_a_range_only_when_it_is_one(values, text):
    assert ForEach(R, values).describe() == text


# -- Induction and MinimumAt ---------------------------------------------------------------------

def test_an_induction_runs_over_an_integer_symbol_from_a_python_int():
    refused(lambda: Induction(x, 0), "induction runs over a symbol declared integer", error=KernelError)
    refused(lambda: Induction(n + 1, 0), "induction runs over a symbol declared integer", error=KernelError)
    refused(lambda: Induction(n, True), "the base case of an induction is a Python int", "True", error=KernelError)
    refused(lambda: Induction(n, sp.Integer(1)), "the base case of an induction is a Python int", error=KernelError)
    assert Induction(n, 2).describe() == "induction on n from n = 2"


@pytest.mark.parametrize("symbol", [sp.Symbol("m", integer=True), z, x + 1], ids=["integer", "complex", "not a symbol"])
def test_the_mean_value_rule_runs_over_a_real_non_integer_symbol(symbol):
    refused(lambda: MinimumAt(symbol, 0), "the mean-value rule runs over a real, non-integer symbol",
            error=KernelError)


def test_the_point_of_the_mean_value_rule_is_exact_and_does_not_depend_on_its_variable():
    refused(lambda: MinimumAt(x, sp.Float(0.5)), "the point of a MinimumAt: the float", error=KernelError)
    refused(lambda: MinimumAt(x, x + 1), "the point of a MinimumAt must not depend", end="on its variable",
            error=KernelError)
    MinimumAt(x, y + 1)  # another symbol is fine


# -- Assumption ----------------------------------------------------------------------------------

@pytest.mark.parametrize("build, start, end", [
    (lambda: Assumption("a", condition=x > 0, for_all=(x, 1, R)), "assumption 'a': for_all is (index, lo, hi)",
     "an index symbol declared integer"),
    (lambda: Assumption("a", condition=r[i] > 0, for_all=(r[i], 1, R)), "assumption 'a': for_all is (index, lo, hi)",
     "an index symbol declared integer"),
    (lambda: Assumption("a", condition=r[i] > 0, for_all=(i, 1)), "assumption 'a': for_all is (index, lo, hi)",
     "an index symbol declared integer"),
    (lambda: Assumption("a", for_all=(i, 1, R)), "assumption 'a': a for_all assumption states one condition",
     "nothing else"),
    (lambda: Assumption("a", condition=r[i] > 0, positive=x, for_all=(i, 1, R)),
     "assumption 'a': a for_all assumption states one condition", "nothing else"),
    (lambda: Assumption("a", condition=r[i] > 0, for_all=(i, sp.Float(1.5), R)), "assumption 'a': the float", ""),
    (lambda: Assumption("a", condition=r[i] > 0, for_all=(i, 1, sp.Float(1.5))), "assumption 'a': the float", ""),
    (lambda: Assumption("a", condition=r[i] > 0, for_all=(i, i - 1, R)),
     "assumption 'a': the range of a for_all must not mention its index", ""),
    (lambda: Assumption("a", condition=r[i] > 0, for_all=(i, 1, i + 1)),
     "assumption 'a': the range of a for_all must not mention its index", ""),
    (lambda: Assumption("a", condition=x > sp.Float(0.5)), "assumption 'a': the float", ""),
    (lambda: Assumption("a", positive=z), "assumption 'a': the symbol z may be complex", ""),
    (lambda: Assumption("a", equation=(x, sp.Float(0.5))), "assumption 'a': the float", ""),
    (lambda: Assumption("a", domain=(z, sp.Interval(0, 1))), "assumption 'a': the symbol z may be complex", ""),
    (lambda: Assumption("a", domain=(x, (0, 1))), "assumption 'a': a domain is a SymPy set such as Interval(0, 1)",
     "(0, 1)"),
    (lambda: Assumption("a", domain=(x, sp.Interval(0, sp.Float(0.5)))), "assumption 'a': the float", ""),
    (lambda: Assumption("a", equation=(x,)), "assumption 'a': an equation is a pair (a, b)", "meaning a = b"),
    (lambda: Assumption("a", equation=(x, y, 1)), "assumption 'a': an equation is a pair (a, b)", "meaning a = b"),
], ids=["for_all over a real symbol", "for_all over an entry", "for_all without hi", "for_all without condition",
        "for_all with more", "for_all float lo", "for_all float hi", "for_all lo mentions index",
        "for_all hi mentions index", "float condition", "complex positive atom", "float equation",
        "complex domain symbol", "domain not a set", "float interval end", "equation of one side",
        "equation of three sides"])
def test_a_malformed_assumption_is_refused_naming_it(build, start, end):
    refused(build, start, end=end, error=KernelError)


@pytest.mark.parametrize("domain", [
    sp.FiniteSet(sp.Float(0.1)),
    sp.Union(sp.Interval(0, sp.Float(0.1)), sp.Interval(2, 3)),
], ids=["finite set", "union"])
def test_a_float_anywhere_in_a_domain_is_refused(domain):
    refused(lambda: Assumption("a", domain=(x, domain)), "assumption 'a': the float", error=KernelError)
    with pytest.raises(KernelError, match="in the domain is not exact .*write it as a Rational$"):
        Assumption("a", domain=(x, domain))


@pytest.mark.parametrize("domain", [
    lambda z: sp.Interval(0, z),
    lambda z: sp.FiniteSet(z),
    lambda z: sp.Union(sp.Interval(0, 1), sp.Interval(2, z)),
], ids=["interval end", "finite set", "union"])
def test_a_symbol_that_may_be_complex_anywhere_in_a_domain_is_refused(domain):
    z = sp.Symbol("z")  # SymPy's default: may be complex
    with pytest.raises(KernelError, match="z .*may be complex"):
        Assumption("a", domain=(x, domain(z)))
    Assumption("a", domain=(x, domain(sp.Symbol("z", real=True))))  # the same, with z real, is accepted


def test_an_assumption_is_equal_only_to_itself():
    a = Assumption("a", condition=x > 0)
    twin = Assumption("a", condition=x > 0)
    assert a == a and not a != a
    assert a != twin and not a == twin
    assert len({a, twin, a}) == 2


def test_an_assumption_as_context_keeps_everything_but_marks_it_context():
    a = Assumption("a", condition=x > 0, domain=(y, sp.Interval(0, 1)), positive=x + 1, equation=(f(x), x),
                   for_every=(x,))
    b = Assumption("b", condition=r[i] > 0, for_all=(i, 1, R))
    for original in (a, b):
        copy = original.as_context()
        assert copy is not original
        assert copy.context is True and copy.is_context and not original.is_context
        for field in ("text", "condition", "domain", "positive", "equation", "for_every", "for_all"):
            assert getattr(copy, field) == getattr(original, field), field


# -- Step, citations ------------------------------------------------------------------------------

def test_a_malformed_step_is_refused_naming_it():
    refused(lambda: Step(x, "s", relation="=>"), "step relation '=>' is not one of", "'<='")
    refused(lambda: Step(sp.Float(0.5) * x, "s"), "step 's': the float", error=KernelError)
    refused(lambda: Step(x, "s", using=((x, 0),)), "step 's': the rewrite pair (x, 0) would be an unchecked axiom",
            "; state it as an Assumption(..., equation=(a, b)) of the result", end="or cite a proved Result",
            error=KernelError)
    refused(lambda: Step(x, "s", using=(5,)), "step 's': using= takes Results, their instances and Assumptions",
            end="not 5", error=KernelError)


# -- Result ---------------------------------------------------------------------------------------

def test_a_malformed_result_is_refused_naming_it():
    step = Step(x, "s")
    refused(lambda: result(relation="~"), "t: relation '~' is not one of")
    refused(lambda: result(name="not an identifier"), "result name 'not an identifier' must be an identifier")
    refused(lambda: result(doc="  "), "t: every result needs a docstring")
    refused(lambda: result(relation="!=", steps=(step,)), "t: a '!=' statement is decided directly", "without steps")
    refused(lambda: result(lhs=sp.Float(0.5)), "t: left-hand side: the float", error=KernelError)
    refused(lambda: result(rhs=sp.Float(0.5)), "t: right-hand side: the float", error=KernelError)
    refused(lambda: result(using=((x, 0),)), "t: the rewrite pair (x, 0)", error=KernelError)
    refused(lambda: result(steps=(step,), using=(result(name="u"),)), "t: with steps, list what each step uses")
    refused(lambda: result(assumptions=(x > 0,)), "t: assumptions must be Assumption objects", error=KernelError)


@pytest.mark.parametrize("extra", [
    dict(steps=(Step(x, "s"),)),
    dict(for_each=ForEach(n, (1, 2))),
    dict(fallback=ForEach(n, (1, 2))),
], ids=["steps", "for_each", "fallback"])
def test_a_result_by_induction_or_by_the_mean_value_rule_is_decided_directly(extra):
    refused(lambda: result(relation=">=", induction=Induction(n, 0), **extra),
            "t: a result by induction is decided directly (base case and step)",
            end="without steps, for_each or fallback")
    refused(lambda: result(relation=">=", minimum_at=MinimumAt(x, 0), **extra),
            "t: a result by the mean-value rule is decided directly", end="for_each, fallback or induction")


def test_the_relations_of_induction_and_of_the_mean_value_rule():
    refused(lambda: result(relation="!=", induction=Induction(n, 0)),
            "t: a '!=' statement cannot be proved by induction")
    refused(lambda: result(relation=">=", minimum_at=MinimumAt(x, 0), induction=Induction(n, 0)),
            "t: a result by the mean-value rule is decided directly", end="for_each, fallback or induction")
    refused(lambda: result(minimum_at=MinimumAt(x, 0)), "t: the mean-value rule proves '>=' or '<=', not '='")
    result(relation="<=", minimum_at=MinimumAt(x, 0))
    result(relation=">=", induction=Induction(n, 0))


@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ,
                    reason="mutmut's trampoline adds frames between the caller and __post_init__, which reads the "
                           "caller's frame")
def test_a_result_records_the_module_whose_code_built_it():
    assert result.__module__ == __name__
    assert Result("t", "A statement.", x, x).defined_in == __name__  # built here, not in a helper
    namespace = {"Result": Result, "x": x}
    exec("built = Result('t', 'A statement.', x, x)", namespace)  # code without a module name
    assert namespace["built"].defined_in == ""


def test_a_direct_result_is_one_implicit_step_carrying_its_rule_why_relation_and_citations():
    eq = Assumption("f is the identity", equation=(f(x), x))
    direct = result(lhs=f(x), rhs=x, relation="<=", rule="the definition", why="f is the identity",
                    assumptions=(eq,), using=(eq,))
    assert direct.links() == [Step(x, "the definition", "f is the identity", "<=", (eq,))]


def test_a_report_is_computed_once_unless_refreshed():
    r_ = result(lhs=(x + 1)**2, rhs=x**2 + 2 * x + 1)
    first = r_.check()
    assert first.status is Status.PROVED
    assert r_.check() is first
    assert r_.check(refresh=True) is not first


def test_an_instance_gives_exact_values_to_symbols():
    lemma = result(lhs=x + y, rhs=y + x)
    refused(lambda: lemma.at({1: 2}), "t: an instance gives values to symbols, not to 1", error=KernelError)
    refused(lambda: lemma.at({x: sp.Float(0.5)}), "t: the value of x: the float", error=KernelError)
    refused(lambda: lemma.at({}), "t: an instance needs at least one value", error=KernelError)
    instance = lemma.at({x: y + 1, y: 2})
    assert instance.result is lemma and instance.name == "t"
    assert instance.values == ((x, y + 1), (y, sp.Integer(2)))
    assert instance.describe() == "x = y + 1, y = 2"


def test_a_result_without_one_assumption_is_checked_afresh_and_leaves_the_original_alone():
    nonnegative = Assumption("x >= 0", condition=x >= 0)
    label = Assumption("a prose-only remark")
    absolute = result(lhs=sp.Abs(x), rhs=x, assumptions=(nonnegative, label))
    assert absolute.check().status is Status.PROVED
    without = absolute.without(nonnegative)
    assert without.name == absolute.name and without.lhs == absolute.lhs
    assert without.assumptions == (label,)
    assert without.check().status is Status.REFUTED  # x = -1
    assert absolute.assumptions == (nonnegative, label)
    assert absolute.check().status is Status.PROVED


def test_an_interval_domain_end_is_validated_like_any_expression():
    """An indexed end that may be complex is refused through the end's own check (the scan of the domain
    for floats and symbols does not look at Indexed objects)."""
    c = sp.IndexedBase("c")
    with pytest.raises(KernelError, match=r"c\[1\] may be complex"):
        Assumption("a", domain=(x, sp.Interval(0, c[1])))
    Assumption("a", domain=(x, sp.Interval(0, sp.IndexedBase("c", real=True)[1])))
