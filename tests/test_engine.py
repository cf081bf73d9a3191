"""The derivation engine must reject wrong steps and never pass what it cannot decide.

A false statement is refuted (the independent evaluator finds an admissible point where it fails); a
false step of a proof is refuted at its link (the statement may still be true) and the result is not
passed; a true step no rule establishes is unproved."""

import dataclasses

import pytest
import sympy as sp

from grpo_verify.proof import Assumption, ForEach, Result, Status, Step, as_written, check as checking, rules
from grpo_verify.proof.catalog import all_results, result as named_result
from grpo_verify.derivations.notation import R, group_mean, i, r

p = sp.Symbol("p", positive=True)
UNIT = Assumption("$p \\in [0, 1]$", domain=(p, sp.Interval(0, 1)))


def planted(result: Result, step_index: int, wrong: sp.Basic) -> Result:
    """A copy of ``result`` with one step's expression replaced."""
    steps = list(result.steps)
    steps[step_index] = dataclasses.replace(steps[step_index], expr=wrong)
    return dataclasses.replace(result, name=result.name + "_planted", steps=tuple(steps))


def refuted_at_link(report, n: int) -> bool:
    """The result is not passed and its n-th link carries the evaluator's counterexample."""
    step = report.steps[n - 1]
    return not report.status.passed and step.status is Status.REFUTED and "counterexample" in step.detail


def test_sign_error_in_a_real_derivation_is_refuted():
    original = named_result("centred_advantages_sum_to_zero")
    wrong = sp.Sum(r[i], (i, 1, R)) + R * group_mean()  # + instead of -
    report = planted(original, 0, wrong).check()
    assert refuted_at_link(report, 1), report.summary()


def test_dropped_factor_in_a_real_derivation_is_refuted():
    original = named_result("squared_sample_std_advantages_sum_to_R_minus_1")
    first = original.steps[0].expr
    report = planted(original, 0, first / (R - 1)).check()  # the (R - 1) factor dropped
    assert refuted_at_link(report, 1), report.summary()


def test_wrong_exponent_is_refuted():
    wrong = Result(name="wrong_exponent", doc="A planted error.", lhs=(p + 1) ** 2, rhs=p**2 + 2 * p + 1,
                   steps=(Step(p**3 + 2 * p + 1, "expand"),))
    assert refuted_at_link(wrong.check(), 1)


def test_chain_must_end_at_the_statement():
    stops_short = Result(name="stops_short", doc="A planted error.", lhs=(p + 1) ** 2, rhs=p**2 + 2 * p + 1,
                         steps=(Step((p + 1) * (p + 1), "square"),))
    assert stops_short.check().status is Status.PROVED
    wrong_end = dataclasses.replace(stops_short, rhs=p**2 + 1)
    assert wrong_end.check().status is Status.REFUTED


def test_chain_relation_must_imply_the_statement():
    upward = Result(name="upward", doc="A planted error.", lhs=p, rhs=p + 1, relation="=",
                    steps=(Step(p + 1, "add one", relation="<="),))
    report = upward.check()
    assert report.status is Status.REFUTED  # p = p + 1 fails everywhere
    assert dataclasses.replace(upward, relation="<=").check().status is Status.PROVED
    # a true statement whose chain establishes a weaker relation than stated: not passed, and why
    weaker = Result(name="weaker", doc="True, but the chain only gives <=.", lhs=p, rhs=p, relation="=",
                    steps=(Step(p + 1, "add one", relation="<="), Step(p, "take one", relation=">=")))
    report = weaker.check()
    assert not report.status.passed and "no relation" in report.summary(), report.summary()


def test_true_but_undecidable_step_is_unproved_never_passed():
    # a geometric series: no rule sums it (it needs an induction), and no counterexample exists
    geometric = Result(name="geometric", doc="True, but beyond the rules named.",
                       lhs=sp.Sum(p**i, (i, 0, R - 1)), rhs=(1 - p**R) / (1 - p),
                       assumptions=(Assumption("$p < 1$", p < 1),))
    assert dataclasses.replace(geometric, name="geometric_at_one", assumptions=()).check().status is \
        Status.REFUTED  # undefined at p = 1
    report = geometric.check()
    assert report.status is Status.UNPROVED
    assert not report.status.passed


def test_inequality_decided_exactly_on_an_interval_and_false_ones_refuted():
    minimum = Result(name="minimum", doc="The all-equal probability is at least 2^(1-R).",
                     lhs=p**R + (1 - p) ** R, rhs=2 ** (1 - R), relation=">=", assumptions=(UNIT,),
                     for_each=ForEach.range(R, 2, 8))
    report = minimum.check()
    assert report.status is Status.PROVED_FOR_RANGE and report.scope == "R = 2..8"
    too_strong = dataclasses.replace(minimum, name="too_strong", rhs=2 ** (2 - R))
    assert too_strong.check().status is Status.REFUTED
    strict_at_the_minimum = dataclasses.replace(minimum, name="strict", relation=">")
    assert strict_at_the_minimum.check().status is Status.REFUTED  # equality at p = 1/2


def test_fallback_reports_the_range_not_a_symbolic_proof():
    minimum = Result(name="minimum", doc="The all-equal probability is at least 2^(1-R).",
                     lhs=p**R + (1 - p) ** R, rhs=2 ** (1 - R), relation=">=", assumptions=(UNIT,),
                     fallback=ForEach.range(R, 2, 6))
    report = minimum.check()
    assert report.status is Status.PROVED_FOR_RANGE
    assert report.scope == "R = 2..6"


def test_using_a_refuted_result_taints_the_step():
    false_fact = Result(name="false_fact", doc="A planted false lemma.", lhs=p**2, rhs=p)
    assert false_fact.check().status is Status.REFUTED
    user = Result(name="user", doc="Uses the false lemma.", lhs=p**2 + 1, rhs=p + 1,
                  steps=(Step(p + 1, "false_fact", using=(false_fact,)),))
    report = user.check()
    assert not report.status.passed and "refuted" in report.summary(), report.summary()


def test_conditions_restrict_the_counterexample_search():
    # (R - 2) * p >= 0 holds only under R >= 2; the condition must be honoured, and dropping it refutes
    n = sp.Symbol("n", integer=True)
    guarded = Result(name="guarded", doc="Needs n >= 2.", lhs=(n - 2) * p, rhs=sp.Integer(0), relation=">=",
                     assumptions=(Assumption("n >= 2", n >= 2),))
    assert guarded.check().status is not Status.REFUTED
    unguarded = dataclasses.replace(guarded, name="unguarded", assumptions=())
    assert unguarded.check().status is Status.REFUTED


def test_inequality_not_equal_is_decided_directly():
    ne = Result(name="ne", doc="sqrt(2) is not 7/5.", lhs=sp.sqrt(2), rhs=sp.Rational(7, 5), relation="!=")
    assert ne.check().status is Status.PROVED
    eq = dataclasses.replace(ne, name="eq", rhs=as_written(lambda: sp.sqrt(8) / 2))
    assert eq.check().status is Status.REFUTED


def test_matrix_sides_are_compared_entrywise():
    a = sp.ImmutableMatrix([[p, 1], [0, p**2]])
    same = Result(name="same", doc="Entrywise.", lhs=a, rhs=as_written(lambda: sp.ImmutableMatrix([[p, 1], [0, p * p]])))
    assert same.check().status is Status.PROVED
    off = Result(name="off", doc="One entry wrong.", lhs=a, rhs=sp.ImmutableMatrix([[p, 1], [0, p**3]]))
    assert off.check().status is Status.REFUTED
    shape = Result(name="shape", doc="Different shapes.", lhs=a, rhs=sp.ImmutableMatrix([[p, 1, 0], [0, p**2, 0]]))
    assert not shape.check().status.passed


def test_result_names_and_docs_are_required():
    with pytest.raises(ValueError, match="identifier"):
        Result(name="not a name", doc="x", lhs=p, rhs=p)
    with pytest.raises(ValueError, match="docstring"):
        Result(name="undocumented", doc=" ", lhs=p, rhs=p)
    with pytest.raises(ValueError, match="relation"):
        Step(p, "rule", relation="=<")


MUTATED = [r for r in all_results() if any(s.relation == "=" for s in r.steps)]


def _first_equality(result: Result) -> int:
    return next(n for n, s in enumerate(result.steps) if s.relation == "=")


def shifted(result: Result) -> Result:
    """``result`` with 1 (a matrix of ones) added to its first equality step."""
    index = _first_equality(result)
    expr = result.steps[index].expr
    wrong = sp.ImmutableMatrix(expr + sp.ones(*expr.shape)) if isinstance(expr, sp.MatrixBase) else expr + 1
    return planted(result, index, wrong)


@pytest.mark.parametrize("result", MUTATED, ids=[f"{r.family}.{r.name}" for r in MUTATED])
def test_every_derivation_rejects_a_shifted_step(result):
    """A stray term added to the first equality step must break the chain (the engine sees it). Asked as a question
    of pass or fail (``stop_at_failure``: the check stops at the broken link instead of proving the links after it,
    5-11 s each for the larger results); the full check's report of a shifted step is the test below."""
    report = checking.check(shifted(result), stop_at_failure=True)
    index = _first_equality(result)
    assert not report.status.passed, report.summary()
    assert report.steps[index].status is Status.REFUTED, report.summary()  # the evaluator names the link


# two cheap results of MUTATED with links after the shifted one (the full check goes on trying those)
FULL_CHECK = [r for r in MUTATED if r.name in ("centred_advantages_sum_to_zero",
                                               "group_baseline_gradient_is_shrunk_by_R_minus_1_over_R")]


@pytest.mark.parametrize("result", FULL_CHECK, ids=[r.name for r in FULL_CHECK])
def test_the_full_check_of_a_shifted_step_refutes_that_link_and_goes_on(result):
    report = shifted(result).check()
    index = _first_equality(result)
    assert not report.status.passed, report.summary()
    assert report.steps[index].status is Status.REFUTED, report.summary()
    assert len(FULL_CHECK) == 2 and len(report.steps) == len(result.steps), report.summary()  # every link reported
