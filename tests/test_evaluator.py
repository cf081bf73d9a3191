"""Unit tests of the independent evaluator (``grpo_verify.evaluation``): it refutes a false statement at an
admissible point and reports the point, never refutes a true one, refutes a statement undefined at an
admissible point, checks each link of a chain, covers every size from the lower bound to the bound + 6, and
shares no code with the kernel's rules."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest
import sympy as sp

from grpo_verify import evaluation
from grpo_verify.evaluation.points import Distribution, Point
from grpo_verify.evaluation.values import NoValue, Undefined, value
from grpo_verify.proof import (Assumption, Expectation, IidExpectation, MatrixRank, Result, SquareMatrix, Step,
                               as_written)

x, y = sp.symbols("x y", real=True)
p = sp.Symbol("p", positive=True)
n, m, k = sp.symbols("n m k", integer=True)
i, j = sp.symbols("i j", integer=True)
P = sp.Symbol("P", integer=True, positive=True)
Nn = sp.Symbol("Nn", integer=True, nonnegative=True)
r = sp.IndexedBase("r", real=True)
f = sp.Function("f", real=True)
E = Expectation.over("E", r)
E_iid = IidExpectation.over_rollouts("E_iid", E, r)

_serial = itertools.count()


def claim(lhs, rhs, relation="=", *assumptions, **kwargs) -> Result:
    return Result(name=f"claim_{next(_serial)}", doc="A statement under test.", lhs=sp.sympify(lhs),
                  rhs=sp.sympify(rhs), relation=relation, assumptions=tuple(assumptions), **kwargs)


def at_least(symbol, bound) -> Assumption:
    return Assumption(f"{symbol} >= {bound}", symbol >= bound)


def reported(text: str, symbol) -> sp.Rational:
    """The value of ``symbol`` in the point a verdict reports."""
    found = re.search(rf"(?:^|[ :;(]){re.escape(str(symbol))} = (-?[0-9]+(?:/[0-9]+)?)", text)
    assert found, text
    return sp.Rational(found.group(1))


# == refutation ===========================================================================================

def test_a_false_sum_formula_is_refuted_at_a_reported_admissible_size():
    verdict = evaluation.evaluate(claim(sp.Sum(j, (j, 1, n)), n ** 2, "=", at_least(n, 1)))
    assert verdict.refuted and verdict.text.startswith("counterexample at "), verdict.text
    size = reported(verdict.text, n)
    assert size >= 1 and size * (size + 1) / 2 != size ** 2  # the reported point is admissible and a failure


def test_a_false_inequality_is_refuted_at_a_point_where_it_fails():
    verdict = evaluation.evaluate(claim(x ** 2, x / 10, "<=", Assumption("x > 0", x > 0)))
    assert verdict.refuted, verdict.text
    at = reported(verdict.text, x)
    assert at > 0 and not at ** 2 <= at / 10
    verdict = evaluation.evaluate(claim(x * y, y * x + 1, "!=", Assumption("y < 0", y < 0)))
    assert not verdict.refuted  # true
    verdict = evaluation.evaluate(claim(x + y, y + x, "!="))
    assert verdict.refuted and "is false" in verdict.text


def test_a_false_statement_about_a_family_or_an_expectation_is_refuted():
    verdict = evaluation.evaluate(claim(sp.Sum(r[j], (j, 1, n)) ** 2, sp.Sum(r[j] ** 2, (j, 1, n)), "=",
                                        at_least(n, 1)))
    assert verdict.refuted and reported(verdict.text, n) >= 2, verdict.text
    verdict = evaluation.evaluate(claim(E(r[1]) ** 2, E(r[1] ** 2)))  # Jensen's gap is not zero
    assert verdict.refuted, verdict.text
    verdict = evaluation.evaluate(claim(E_iid(sp.Sum(r[i], (i, 1, n)) ** 2), n ** 2 * E(r[1]) ** 2, "=",
                                        at_least(n, 1)))
    assert verdict.refuted, verdict.text


def test_only_admissible_points_refute():
    # false for x < 1 only: never refuted where the assumptions exclude x < 1
    verdict = evaluation.evaluate(claim(x ** 2, x, ">=", Assumption("x >= 1", x >= 1)))
    assert not verdict.refuted and verdict.checked > 0, verdict.text
    # false at n = 0 only, excluded by the declaration
    verdict = evaluation.evaluate(claim(P ** 2, P, ">="))
    assert not verdict.refuted and verdict.checked > 0
    assert min(verdict.sizes[P]) == 1
    # a hypothesis for every index excludes points where it fails somewhere on its range
    q = sp.IndexedBase("q", real=True)
    every = Assumption("q_a > 0", q[k] > 0, for_all=(k, 1, n))
    verdict = evaluation.evaluate(claim(sp.Sum(q[j], (j, 1, n)), 0, ">=", every, at_least(n, 0)))
    assert not verdict.refuted and verdict.checked > 0, verdict.text


TRUE_STATEMENTS = [
    (sp.Sum(j, (j, 1, n)), n * (n + 1) / 2, "=", (at_least(n, 0),)),
    (sp.Sum(r[j], (j, 1, n)) ** 2, sp.Sum(sp.Sum(r[i] * r[j], (i, 1, n)), (j, 1, n)), "=", (at_least(n, 0),)),
    (sp.Sum(sp.binomial(n, j), (j, 0, n)), 2 ** n, "=", (at_least(n, 0),)),
    (sp.Product(2 * r[j], (j, 1, n)), 2 ** n * sp.Product(r[j], (j, 1, n)), "=", (at_least(n, 0),)),
    (sp.Sum(r[j] * sp.KroneckerDelta(j, k), (j, 1, n)), r[k], "=", (at_least(k, 1), Assumption("k <= n", k <= n))),
    (sp.Sum(r[j], (j, 1, n)), sp.Sum(r[j], (j, 1, m)) + sp.Sum(r[j], (j, m + 1, n)), "=",
     (at_least(m, 0), Assumption("m <= n", m <= n))),
    (sp.Derivative(x ** 3 * f(y), x), 3 * x ** 2 * f(y), "=", ()),
    (sp.Derivative(sp.exp(x * y), x, y), sp.exp(x * y) * (1 + x * y), "=", ()),
    (sp.Derivative(x ** 4 * y, (x, 2)), 12 * x ** 2 * y, "=", ()),
    (sp.Min(x, y) + sp.Max(x, y), x + y, "=", ()),
    (sp.Abs(x * y), sp.Abs(x) * sp.Abs(y), "=", ()),
    (sp.Piecewise((x, x > 0), (-x, True)), sp.Abs(x), "=", ()),
    (MatrixRank(sp.Matrix([[1, x], [x, x ** 2]])), 1, "=", ()),
    (MatrixRank(SquareMatrix(n, sp.Lambda((i, j), sp.KroneckerDelta(i, j)))), n, "=", (at_least(n, 0),)),
    (sp.Determinant(sp.Matrix([[x, y], [1, 1]])), x - y, "=", ()),
    (E(2 * r[1] + x), 2 * E(r[1]) + x, "=", ()),
    (E(r[1] ** 2), E(r[1]) ** 2, ">=", ()),
    (E_iid(sp.Sum(r[i], (i, 1, n)) ** 2), n * E(r[1] ** 2) + n * (n - 1) * E(r[1]) ** 2, "=", (at_least(n, 1),)),
    (sp.log(p ** 2), 2 * sp.log(p), "=", ()),
    (sp.exp(x) * sp.exp(-x), 1, "=", ()),
    (sp.sqrt(p) ** 2, p, "=", ()),
    ((x + y) ** 2, 4 * x * y, ">=", ()),
]


@pytest.mark.parametrize("lhs, rhs, relation, assumptions", TRUE_STATEMENTS,
                         ids=[f"true{n}" for n in range(len(TRUE_STATEMENTS))])
def test_a_true_statement_is_never_refuted(lhs, rhs, relation, assumptions):
    verdict = evaluation.evaluate(claim(lhs, rhs, relation, *assumptions))
    assert not verdict.refuted, verdict.text
    assert verdict.checked > 0, verdict.text


def test_a_statement_undefined_at_an_admissible_point_is_refuted():
    verdict = evaluation.evaluate(claim(as_written(lambda: Nn / Nn), 1))  # Nn = 0 is admissible
    assert verdict.refuted and "undefined at an admissible point" in verdict.text, verdict.text
    assert reported(verdict.text, Nn) == 0
    verdict = evaluation.evaluate(claim(sp.Sum(r[j], (j, 1, n)), sp.Sum(r[i], (i, 1, n))))  # n = -2: reversed
    assert verdict.refuted and "reversed" in verdict.text, verdict.text
    assert reported(verdict.text, n) < 0
    verdict = evaluation.evaluate(claim(sp.log(x), sp.log(x)))
    assert verdict.refuted and "logarithm" in verdict.text and reported(verdict.text, x) <= 0
    verdict = evaluation.evaluate(claim(sp.sqrt(x), sp.sqrt(x)))
    assert verdict.refuted and "undefined" in verdict.text
    verdict = evaluation.evaluate(claim(sp.binomial(x, 2), x * (x - 1) / 2))
    assert verdict.refuted and "binomial" in verdict.text
    # where the assumptions make it defined, it is not refuted
    verdict = evaluation.evaluate(claim(as_written(lambda: P / P), 1))
    assert not verdict.refuted and verdict.checked > 0


def test_each_link_is_checked_and_a_planted_false_step_is_reported_at_its_link():
    steps = (Step(x ** 2 + 2 * x + 1, "expand"),  # true
             Step(x ** 2 + 2 * x + 2, "a planted error"),  # false
             Step(x ** 2 + 2 * x + 1, "and back"))  # false
    result = claim((x + 1) ** 2, x ** 2 + 2 * x + 1, "=", steps=steps)
    verdict = evaluation.evaluate(result)
    assert not verdict.refuted  # the statement holds
    assert set(verdict.links) == {2, 3}, verdict.links
    assert verdict.links[2].startswith("link 2: counterexample at x = ") and "is false" in verdict.links[2]
    # an inequality step in the wrong direction
    steps = (Step(x ** 2 + 1, "add one", relation="<="), Step(x ** 2 + 2, "add one more", relation=">="))
    verdict = evaluation.evaluate(claim(x ** 2, x ** 2 + 2, "<=", steps=steps))
    assert set(verdict.links) == {2}, verdict.links
    # and a result without steps has one link, its statement
    verdict = evaluation.evaluate(claim(x + 1, x + 1, "="))
    assert verdict.links == {} and not verdict.refuted


def test_the_driver_reports_the_refuted_link():
    from grpo_verify.proof import Status, rules

    steps = (Step(sp.Sum(r[j], (j, 1, n - 1)) + r[n], "split", by=(rules.sum_split_last,)),
             Step(sp.Sum(r[j], (j, 1, n - 1)) - r[n], "planted"),
             Step(sp.Sum(r[j], (j, 1, n)), "back"))
    report = claim(sp.Sum(r[j], (j, 1, n)), sp.Sum(r[j], (j, 1, n)), "=", at_least(n, 1), steps=steps).check()
    assert not report.status.passed
    assert report.steps[0].status is Status.PROVED
    assert report.steps[1].status is Status.REFUTED and "counterexample" in report.steps[1].detail


@pytest.mark.parametrize("symbol, assumptions, lower", [
    (n, (at_least(n, 2),), 2),
    (n, (Assumption("n > 3", n > 3),), 4),
    (P, (), 1),
    (Nn, (), 0),
    (n, (), -2),
    (Nn, (at_least(Nn, 5),), 5),
    (n, (Assumption("-1 <= n", sp.Le(-1, n)),), -1),
])
def test_every_size_from_the_lower_bound_to_the_bound_plus_six_is_tried(symbol, assumptions, lower):
    verdict = evaluation.evaluate(claim(sp.Sum(r[j], (j, 1, symbol ** 2)), sp.Sum(r[j], (j, 1, symbol ** 2)), "=",
                                        *assumptions))
    assert not verdict.refuted, verdict.text
    sizes = set(verdict.sizes[symbol])
    assert set(range(lower, lower + evaluation.SPAN + 1)) <= sizes, sorted(sizes)
    assert min(sizes) == lower
    assert evaluation.SPAN == 6


def test_the_plans_run_each_integer_symbol_through_its_sizes():
    bounds = {m: sp.Integer(3)}
    groups = evaluation._plans([m, n, P, Nn], bounds)
    assert groups[0] == ([{}], 1)  # every symbol drawn at random
    for (plans, quota), (symbol, lower) in zip(groups[1:], ((m, 3), (n, -2), (P, 1), (Nn, 0))):
        assert [pl[symbol] for pl in plans] == list(range(lower, lower + 10)), symbol  # 3 spare sizes
        assert quota == 7 and all(len(pl) == 1 for pl in plans), symbol


def test_sizes_that_admit_no_point_are_replaced_by_larger_ones():
    """K's declared bound is 1, but K > k >= 1 admits no point at K = 1: seven sizes are still checked."""
    K = sp.Symbol("K", integer=True, positive=True)
    verdict = evaluation.evaluate(claim(sp.Sum(r[j], (j, 1, K)), sp.Sum(r[i], (i, 1, K)), "=", at_least(k, 1),
                                        Assumption("K > k", K > k)))
    assert not verdict.refuted, verdict.text
    assert verdict.planned[K][0] == 1 and 1 not in verdict.sizes[K]
    assert set(range(2, 9)) <= set(verdict.sizes[K]), verdict.sizes[K]
    # K (K - 1) > 0 sets no bound the plans read, so K = 1 is tried and admits no point; a statement false
    # only at K = 8 (the declared bound + 7) is refuted
    two_or_more = Assumption("K (K - 1) > 0", K * (K - 1) > 0)
    verdict = evaluation.evaluate(claim(sp.Sum(j, (j, 1, K)), 36, "!=", two_or_more))
    assert verdict.refuted and "K = 8" in verdict.text, verdict.text


def test_sizes_of_several_integer_symbols_and_an_upper_bound():
    verdict = evaluation.evaluate(claim(sp.Sum(r[j], (j, m, n)), sp.Sum(r[i], (i, m, n)), "=", at_least(m, 1),
                                        Assumption("n >= m - 1", n >= m - 1), Assumption("n <= 5", n <= 5)))
    assert not verdict.refuted, verdict.text
    assert set(range(1, 6)) <= set(verdict.sizes[m])
    assert set(verdict.sizes[n]) <= set(range(0, 6)) and set(range(1, 6)) <= set(verdict.sizes[n])
    # a size where the statement fails, far from the random ones, is found
    verdict = evaluation.evaluate(claim(sp.Sum(j, (j, 1, n)), 0, "!=", at_least(n, 1),
                                        Assumption("n != 7", sp.Ne(n, 7))))
    assert not verdict.refuted
    verdict = evaluation.evaluate(claim(n * (n - 7), 0, "!=", at_least(n, 1)))
    assert verdict.refuted and reported(verdict.text, n) == 7, verdict.text


def test_values_are_exact_and_written_out():
    point = Point(values={n: sp.Integer(3), x: sp.Rational(1, 2)}, families={r: {(1,): 1, (2,): 2, (3,): 3}})
    assert value(sp.Sum(r[j] * x, (j, 1, n)), point) == 3
    assert value(sp.Product(r[j], (j, 1, n)), point) == 6
    assert value(sp.Sum(r[j], (j, 2, 1)), point) == 0
    with pytest.raises(Undefined):
        value(sp.Sum(r[j], (j, 3, 1)), point)
    with pytest.raises(Undefined):
        value(1 / (x - sp.Rational(1, 2)), point)
    with pytest.raises(NoValue):
        value(r[4], point)
    dist = Distribution([(sp.Rational(1, 4), {r: 0}), (sp.Rational(3, 4), {r: 2})], 2)
    point = Point(values={}, distributions={E: dist})
    assert value(E(r[1] * r[2]), point) == sp.Rational(9, 4)
    assert value(E(r[1] ** 2), point) == 3
    assert value(sp.Subs(sp.Derivative(x ** 3, x), x, 2), point) == 12
    assert value(sp.Subs(sp.Derivative(x ** 3, (x, 2)), x, 2), point) == 12
    assert value(sp.Subs(sp.Derivative(x ** 3 * y ** 2, x, y), (x, y), (1, 3)), point) == 18


# == independence from the kernel =========================================================================

EVALUATION = Path(evaluation.__file__).resolve().parent


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = "grpo_verify.evaluation"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            for alias in node.names:  # what is imported: a module or a name of one
                yield f"{module}.{alias.name}"
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "import_module", "__import__"):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield arg.value


def test_the_evaluator_imports_nothing_from_the_kernel_but_its_operators():
    files = sorted(EVALUATION.rglob("*.py"))
    assert {p.name for p in files} >= {"__init__.py", "points.py", "values.py"}
    for path in files:
        for module in _imports(path):
            if module == "grpo_verify.proof" or module.startswith("grpo_verify.proof."):
                assert module == "grpo_verify.proof.operators" or module.startswith("grpo_verify.proof.operators."), \
                    f"{path.name} imports {module}"
            assert not module.startswith("grpo_verify.derivations"), f"{path.name} imports {module}"


def test_the_import_scan_sees_every_form_of_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import grpo_verify.proof.rules\nfrom grpo_verify.proof import terms\n"
                      "from ..proof.arith import ring_zero\nimport importlib\n"
                      "importlib.import_module('grpo_verify.proof.theorem')\n")
    found = set(_imports(sample))
    assert {"grpo_verify.proof.rules", "grpo_verify.proof.terms", "grpo_verify.proof.arith.ring_zero",
            "grpo_verify.proof.theorem"} <= found
    assert not any(name == "grpo_verify.proof.operators" or name.startswith("grpo_verify.proof.operators.")
                   for name in found)


# == the first points only (check's stop_at_failure) ==========================================================

def test_the_first_points_are_the_full_sweeps_first_points_with_their_links():
    steps = (Step(x ** 2 + 2 * x + 1, "expand"), Step(x ** 2 + 2 * x + 2, "a planted error"))
    result = claim((x + 1) ** 2, x ** 2 + 2 * x + 2, "<=", steps=steps)
    full, first = evaluation.evaluate(result), evaluation.evaluate(result, first_points=3)
    assert full.complete and not first.complete and first.checked == 3 < full.checked
    assert [q.values for q in first.points] == [q.values for q in full.points[:3]]
    assert first.links == full.links and set(first.links) == {2}
    # a statement false only at a size past the first points: the full sweep refutes it, the first points do not
    late = claim(sp.Sum(1, (j, 1, Nn)), 4, "<=")
    assert not evaluation.evaluate(late, first_points=3).refuted
    assert evaluation.evaluate(late).refuted


def test_a_pass_under_stop_at_failure_still_needs_the_full_sweep(monkeypatch):
    """check(stop_at_failure=True) looks at the evaluator's first points only before the kernel; if the kernel then
    passes the result, the full sweep runs and refutes a false one: with a kernel that (planted) accepts every
    chain, a statement false only at larger sizes is still refuted, never passed."""
    from types import SimpleNamespace

    from grpo_verify.proof import Status
    from grpo_verify.proof import check as checking
    from grpo_verify.proof import theorem as kernel

    late = claim(sp.Sum(1, (j, 1, Nn)), 4, "<=")
    accepted = SimpleNamespace(rules=frozenset(), relation="<=")
    monkeypatch.setattr(checking, "_prove", lambda *args, **kwargs: (accepted, []))
    monkeypatch.setattr(kernel, "establishes", lambda *args, **kwargs: True)
    monkeypatch.setattr(kernel, "proves", lambda *args, **kwargs: True)
    assert checking.check(late, stop_at_failure=True).status is Status.REFUTED
    assert checking.check(late).status is Status.REFUTED
    # the broken kernel does pass a statement the sweep cannot refute: the stand-ins are what decides here
    assert checking.check(claim(sp.Sum(1, (j, 1, Nn)), Nn, "<="), stop_at_failure=True).status is Status.PROVED


def test_a_link_the_evaluator_refutes_is_not_tried_by_the_kernel(monkeypatch):
    """A false link can cost z3 its whole time budget (60 s for a shifted step of D4); the evaluator's exact
    counterexample already says no sound kernel proves it, so the driver reports it refuted without the try."""
    from grpo_verify.proof import Status
    from grpo_verify.proof import check as checking
    from grpo_verify.proof import theorem as kernel

    tried = []
    real = kernel.link

    def link(ctx, previous, relation, expr, *args, **kwargs):
        tried.append(expr)
        return real(ctx, previous, relation, expr, *args, **kwargs)
    monkeypatch.setattr(kernel, "link", link)
    steps = (Step(x ** 2 + 2 * x + 2, "a planted error"), Step(x ** 2 + 2 * x + 1, "and back"))
    report = checking.check(claim((x + 1) ** 2, x ** 2 + 2 * x + 1, "=", steps=steps))
    assert report.steps[0].status is Status.REFUTED and "counterexample" in report.steps[0].detail
    assert tried == []
    steps = (Step(x ** 2 + 2 * x + 1, "expand"),)
    assert checking.check(claim((x + 1) ** 2, x ** 2 + 2 * x + 1, "=", steps=steps)).status is Status.PROVED
    assert len(tried) == 1  # a link the evaluator does not refute is tried


def test_a_failure_with_a_query_z3_gave_up_on_gets_the_full_sweep(monkeypatch):
    """Under stop_at_failure a kernel failure skips the evaluator's full sweep, unless z3 gave up on a query of
    the check: then a counterexample past the first points decides what z3 did not (an assumption-deletion test
    must not read a load-dependent z3 give-up as its answer). z3 is made to give up on every query here."""
    from grpo_verify.proof import Status, arith
    from grpo_verify.proof import check as checking

    def gives_up(*args, **kwargs):
        arith._UNDECIDED[0] += 1
        return False
    monkeypatch.setattr(arith, "entails", gives_up)
    late = claim(sp.Sum(1, (j, 1, Nn)), 4, "<=")
    assert checking.check(late, stop_at_failure=True).status is Status.REFUTED
    monkeypatch.undo()
    # without a give-up the kernel's failure stands (unproved, the sweep not run); the full check refutes it
    again = claim(sp.Sum(1, (j, 1, Nn)), 4, "<=")
    assert checking.check(again, stop_at_failure=True).status is Status.UNPROVED
    assert checking.check(again).status is Status.REFUTED
