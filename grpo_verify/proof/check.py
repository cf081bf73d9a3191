"""Checking a ``Result``: ask the kernel's rules for a theorem of it and report what they said.

Not trusted: this module only calls the kernel (``grpo_verify.proof.theorem``). A result is *proved* when
``theorem.establishes`` accepts a theorem for its statement under its hypotheses and those hypotheses have a
model (``theorem.has_model``); *proved for a range* when that holds for each listed value of a symbol;
*refuted* when the independent evaluator (``grpo_verify.evaluation``) finds an admissible point where the
statement fails exactly; otherwise *unproved*, with the reason. Nothing here can make a theorem.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import sympy as sp


from grpo_verify.proof import arith, relations as rel
from grpo_verify.proof import theorem as K
from grpo_verify.proof.build import expand_computations as built
from grpo_verify.proof.status import Status, weakest
from grpo_verify.proof.terms import KernelError, canon, subst

SYMBOLIC = "symbolic"  # the scope of a statement about every admissible value of its free symbols

__all__ = ["check", "ObligationReport", "StepReport", "ResultReport"]


@dataclass(frozen=True)
class ObligationReport:
    condition: str
    reason: str
    status: Status
    route: str
    latex: str = ""


@dataclass(frozen=True)
class StepReport:
    index: int
    rule: str
    relation: str
    status: Status
    seconds: float
    detail: str = ""
    route: str = ""


@dataclass(frozen=True)
class ResultReport:
    name: str
    status: Status
    steps: tuple[StepReport, ...]
    seconds: float
    scope: str
    consistency: str = ""
    obligations: tuple[ObligationReport, ...] = ()
    theorems: tuple = field(default=(), compare=False, repr=False)
    rules: tuple[str, ...] = ()
    evaluation: str = ""

    def summary(self) -> str:
        lines = [f"{self.name}: {self.status.value} ({self.scope}; {self.seconds:.2f} s)"]
        if self.consistency:
            lines.append(f"  assumptions: {self.consistency}")
        if self.evaluation:
            lines.append(f"  evaluator: {self.evaluation}")
        for s in self.steps:
            route = f" by {s.route}" if s.route else ""
            lines.append(f"  step {s.index} [{s.rule}] {s.status.value}{route}: {s.detail} ({s.seconds:.2f} s)")
        return "\n".join(lines)


def rules_of(by) -> tuple:
    """A step's rules, bundles (tuples of rules) flattened."""
    out = []
    for r in by:
        out += rules_of(r) if isinstance(r, tuple) else [r]
    return tuple(out)


def hypotheses(result) -> list:
    return [h for a in result.assumptions for h in K.hyps_of(a)]


def _fail(result, start, detail, consistency="", evaluation="") -> ResultReport:
    return ResultReport(result.name, Status.UNPROVED,
                        (StepReport(1, "kernel", result.relation, Status.UNPROVED, time.perf_counter() - start,
                                    detail),), time.perf_counter() - start, statement_scope(result), consistency,
                        (), (), (), evaluation)


def check(result, *, stop_at_failure: bool = False) -> ResultReport:
    """The report of ``result``; never raises."""
    start = time.perf_counter()
    try:
        return _check(result, start, stop_at_failure)
    except Exception as exc:  # noqa: BLE001 - a crash is a status, never a pass
        return _fail(result, start, f"the kernel could not check this result: {type(exc).__name__}: {exc}")


def _check(result, start, stop_at_failure) -> ResultReport:
    if not result.steps and result.lhs == result.rhs:
        return _fail(result, start, "vacuous: both sides were identical as built (SymPy decided the claim while it "
                                    "was written); build them with as_written")
    from grpo_verify import evaluation

    try:
        ctx = K.Context(hypotheses(result))
    except KernelError as exc:
        return _fail(result, start, f"refused: {exc}")

    def refuted(verdict):
        return ResultReport(result.name, Status.REFUTED,
                            (StepReport(1, "independent evaluator", result.relation, Status.REFUTED,
                                        time.perf_counter() - start, verdict.text, "exact evaluation"),),
                            time.perf_counter() - start, statement_scope(result), "", (), (), (), verdict.text)

    # stop_at_failure (a question of pass or fail, as when an assumption is deleted): the evaluator looks at its
    # first points only (their links included) before the kernel, and sweeps every size only if the kernel then
    # proves the result, or fails it with a query z3 gave up on (a counterexample then decides what z3 did not);
    # any other failure needs no sweep, and a pass still gets it, so the answer is the full check's
    gave_up_before = arith.undecided_count()
    verdict = evaluation.evaluate(result, first_points=3 if stop_at_failure else None)
    if verdict.refuted:
        return refuted(verdict)
    model = None
    if ctx.hyps:
        model = find_model(result, ctx, verdict)
        if model is None:
            return _fail(result, start, "refused: no exact model of the assumptions was found (an inconsistent set "
                                        "would prove anything)", "no model found", verdict.text)
        consistency = f"consistent: every assumption holds exactly at {describe(model)}"
    else:
        consistency = "no assumptions beyond the declared domains of the symbols"

    def finished(status, reports, theorems, scope, values):
        nonlocal verdict
        if not verdict.complete and (status.passed or arith.undecided_count() > gave_up_before):
            verdict = evaluation.evaluate(result)  # a pass is never reported without the evaluator's full sweep
            if verdict.refuted:
                return refuted(verdict)
        # the kernel's last word: each theorem states the result under its assumptions, which have the model
        models = [_model_at(result, ctx, model, v) for v in values] if status.passed else []
        excluded = [v for v, m in zip(values, models) if m is None and v is not None]
        if excluded:
            symbol = (result.for_each or result.fallback).symbol
            reports = reports + [StepReport(len(reports) + 1, "model", result.relation, Status.UNPROVED, 0.0,
                                            f"no exact model of the assumptions with {symbol} = {excluded[0]}: a value "
                                            "they exclude together proves nothing")]
            status, theorems = Status.UNPROVED, []
        elif status.passed and not all(K.proves(result, t, m, v) for t, m, v in zip(theorems, models, values)):
            reports = reports + [StepReport(len(reports) + 1, "statement", result.relation, Status.UNPROVED, 0.0,
                                            "the theorem does not state this result under its assumptions")]
            status, theorems = Status.UNPROVED, []
        used = set().union(*[t.rules for t in theorems]) if theorems else set()
        return _report(result, start, status, reports, theorems, scope, consistency, used, verdict.text)

    if result.for_each is not None:
        contexts = _instances(ctx, result.for_each)
        if not contexts:
            return _fail(result, start, f"no value of {result.for_each.describe()} satisfies the assumptions",
                         consistency, verdict.text)
        reports, theorems = [], []
        for here, _scope, extra, value in contexts:
            thm, step_reports = _prove(result, here, extra, stop_at_failure, verdict.links)
            reports += step_reports
            if thm is None:
                return finished(Status.UNPROVED, reports, [], f"{result.for_each.symbol} = {value}", [])
            theorems.append((thm, value))
        return finished(Status.PROVED_FOR_RANGE, reports, [t for t, _v in theorems], result.for_each.describe(),
                        [v for _t, v in theorems])
    thm, reports = _prove(result, ctx, [], stop_at_failure, verdict.links)
    if thm is None and result.fallback is not None:
        fall = [(_prove(result, c, e, stop_at_failure), v) for c, _s, e, v in _instances(ctx, result.fallback)]
        if fall and all(t is not None for (t, _r), _v in fall):
            reports = [StepReport(1, "for each value", result.relation, Status.PROVED_FOR_RANGE, 0.0,
                                  f"decided for each {result.fallback.describe()}")]
            return finished(Status.PROVED_FOR_RANGE, reports, [t for (t, _r), _v in fall], result.fallback.describe(),
                            [v for _f, v in fall])
    if thm is None:
        return finished(Status.UNPROVED, reports, [], statement_scope(result), [])
    if not K.establishes(thm, ctx.hyps, built(result.lhs), result.relation, built(result.rhs)):
        reports.append(StepReport(len(reports) + 1, "chain relation", result.relation, Status.UNPROVED, 0.0,
                                  f"the steps establish {thm.relation!r}, not the stated {result.relation!r}"))
        return finished(Status.UNPROVED, reports, [], statement_scope(result), [])
    return finished(Status.PROVED, reports, [thm], statement_scope(result), [None])


def statement_scope(result) -> str:
    """"symbolic" for a statement about every admissible value of its free symbols; "instance (...)" for one
    about specific values: the result names them (``instance=``), or its two sides have no free symbol."""
    if result.instance:
        return f"instance ({result.instance})"
    try:
        free = set().union(*(sp.sympify(built(side)).free_symbols for side in (result.lhs, result.rhs)))
    except Exception:  # noqa: BLE001 - a side that cannot be built is reported by the check; never "symbolic"
        return "scope undetermined"
    return SYMBOLIC if free else "instance (closed statement)"


def _report(result, start, status, reports, theorems, scope, consistency, used, evaluation) -> ResultReport:
    return ResultReport(result.name, status, tuple(reports), time.perf_counter() - start, scope, consistency, (),
                        tuple(theorems), tuple(sorted(used)), evaluation)


def _model_at(result, ctx, model, value):
    """The model for the theorem at ``value`` of a for-each symbol (one of the assumptions with the value pinned:
    a value they exclude only jointly proves nothing), or the result's model."""
    if value is None:
        return model
    listed = result.for_each or result.fallback
    pinned = ctx.with_hyps([K.Hyp(canon(rel.Eq(listed.symbol, sp.Integer(value))))])
    base = model or K.Model({}, {}, {}, {})
    moved = K.Model({**base.values, listed.symbol: sp.Integer(value)}, base.families, base.functions,
                    base.distributions)
    return moved if K.has_model(pinned, moved) else find_model(result, pinned)


def _instances(ctx, for_each):
    out = []
    for value in for_each.values:
        v = sp.Integer(value)
        symbol = for_each.symbol
        if symbol.is_integer and not v.is_integer or any(
                getattr(symbol, f"is_{k}") and not getattr(v, f"is_{k}") for k in ("positive", "nonnegative",
                                                                                   "negative", "nonpositive")):
            continue
        if any(_evaluated(subst(h.formula, {symbol: v})) is sp.false for h in ctx.hyps if not h.index):
            continue  # the assumptions exclude this value
        pin = K.Hyp(canon(rel.Eq(symbol, v)))
        here = ctx.with_hyps([pin])
        out.append((here, f"{symbol} = {value}", [K.cite(here, pin, name=f"{symbol} = {value}")], value))
    return out


def _evaluated(f):
    """A formula with its relations evaluated (to skip the values the assumptions exclude)."""
    if isinstance(f, sp.Rel):
        return type(f)(*f.args)
    if isinstance(f, (sp.And, sp.Or, sp.Not)):
        return f.func(*[_evaluated(a) for a in f.args])
    return f


def _prove(result, ctx, extra, stop_at_failure, links=None):
    """(theorem or None, step reports) for one context; ``links``: the evaluator's failing links."""
    links = links or {}
    if result.induction is not None:
        return _by_induction(result, ctx, extra)
    if result.minimum_at is not None:
        return _by_mean_value(result, ctx, extra)
    previous, thm, reports = built(result.lhs), None, []
    for n, step in enumerate(result.links(), start=1):
        t0 = time.perf_counter()
        rules = rules_of(step.by)
        refuted = links.get(n)
        if refuted:
            # the evaluator holds an exact counterexample to this link: no sound kernel proves it, so it is not
            # tried (a false link can cost z3 its whole time budget); this only ever withholds a proof
            status, detail, thm = Status.UNPROVED, "not tried by the kernel: the link is false at that point", None
        else:
            try:
                cited = extra + _cited(result, step.using, ctx)
                t = K.link(ctx, previous, step.relation, built(step.expr), rules, cited)
                thm = t if thm is None else K.chain(thm, t)
                status, detail = Status.PROVED, "established"
            except (K.Unproved, KernelError) as exc:
                status, detail, thm = Status.UNPROVED, str(exc), None
        reports.append(StepReport(n, step.rule or ", ".join(r.label() for r in rules) or "arithmetic",
                                  step.relation, Status.REFUTED if refuted else status, time.perf_counter() - t0,
                                  f"{refuted} (the evaluator's counterexample); {detail}" if refuted else detail,
                                  _route(rules)))
        if thm is None:
            if stop_at_failure:
                break
            return None, reports + _unchecked(result, n)
        previous = built(step.expr)
    if result.steps and canon(previous) != canon(built(result.rhs)):
        t0 = time.perf_counter()
        try:  # the chain ends at an expression equal to the statement's right-hand side
            thm = K.chain(thm, K.link(ctx, previous, "=", built(result.rhs), (), extra))
            status, detail = Status.PROVED, "established"
        except (K.Unproved, KernelError) as exc:
            status, detail, thm = Status.UNPROVED, str(exc), None
        reports.append(StepReport(len(reports) + 1, "the chain ends at the right-hand side", "=", status,
                                  time.perf_counter() - t0, detail, _route(())))
    return thm, reports


def _unchecked(result, failed: int) -> list:
    return [StepReport(k, s.rule or "step", s.relation, Status.UNPROVED, 0.0, "not checked: an earlier link failed")
            for k, s in enumerate(result.links(), start=1) if k > failed]


def _route(rules) -> str:
    return "kernel rules: " + (", ".join(r.label() for r in rules) if rules else "ring normal form and arithmetic")


def _cited(result, using, ctx, optional: bool = False) -> list:
    """The citations of ``using`` discharged in ``ctx``; with ``optional``, those that cannot be are left out
    (the mean-value rule's link at the point, where the variable's own hypotheses are gone)."""
    if optional:
        out = []
        for fact in using:
            try:
                out += _cited(result, (fact,), ctx)
            except K.Unproved:
                continue
        return out
    return _cited_all(result, using, ctx)


def _cited_all(result, using, ctx) -> list:
    from grpo_verify.proof.result import Assumption, Instance, Result

    out = []
    for fact in using:
        if isinstance(fact, Assumption):
            if not any(fact is a for a in result.assumptions):
                raise K.Unproved(f"uses the assumption {fact.text!r}, which this result does not state")
            for h in K.hyps_of(fact):
                if not h.index:
                    out.append(K.cite(ctx, h, name=fact.text))
            continue
        values = {}
        if isinstance(fact, Instance):
            fact, values = fact.result, dict(fact.values)
        if not isinstance(fact, Result):
            raise K.Unproved(f"cannot use {fact!r}")
        if fact is result:
            raise K.Unproved("a result cannot cite itself")
        report = fact.check()
        if not report.status.passed:
            raise K.Unproved(f"cites {fact.name}, which is {report.status.value}")
        failures = []
        for thm in report.theorems:
            try:
                out.append(K.cite(ctx, thm, values, name=fact.name))
                break
            except K.Unproved as exc:
                failures.append(str(exc))
        else:
            raise K.Unproved(f"cites {fact.name}: " + "; ".join(dict.fromkeys(failures)))
    return out


def _by_induction(result, ctx, extra):
    n, base = result.induction.symbol, result.induction.base
    rules = rules_of(result.by)
    reports = []
    t0 = time.perf_counter()
    try:
        lhs, rhs = built(result.lhs), built(result.rhs)
        base_ctx, step_ctx = K.induction_contexts(ctx, n, base, lhs, result.relation, rhs)
        at = lambda e, v: subst(e, {n: v})  # noqa: E731
        base_thm = K.link(base_ctx, at(lhs, base), result.relation, at(rhs, base), rules,
                          _cited(result, result.using, base_ctx))
        reports.append(StepReport(1, f"base case {n} = {base}", result.relation, Status.PROVED,
                                  time.perf_counter() - t0, "established", _route(rules)))
        t0 = time.perf_counter()
        hypothesis = [h for h in step_ctx.hyps if h not in ctx.hyps and h.formula != canon(rel.Ge(n, base))]
        ih = [K.cite(step_ctx, h, name="the induction hypothesis") for h in hypothesis]
        step_thm = K.link(step_ctx, at(lhs, n + 1), result.relation, at(rhs, n + 1), rules,
                          ih + _cited(result, result.using, step_ctx))
        reports.append(StepReport(2, f"inductive step {n} -> {n} + 1 (the statement at {n} assumed)",
                                  result.relation, Status.PROVED, time.perf_counter() - t0, "established",
                                  _route(rules)))
        return K.by_induction(ctx, n, base, lhs, result.relation, rhs, base_thm, step_thm), reports
    except (K.Unproved, KernelError) as exc:
        reports.append(StepReport(len(reports) + 1, "induction", result.relation, Status.UNPROVED,
                                  time.perf_counter() - t0, f"induction: {exc}", _route(rules)))
        return None, reports


def _by_mean_value(result, ctx, extra):
    x, c = result.minimum_at.symbol, result.minimum_at.point
    rules = rules_of(result.by)
    reports = []
    t0 = time.perf_counter()
    try:
        lhs, rhs = built(result.lhs), built(result.rhs)
        difference, point, point_ctx, slope = K.mean_value_contexts(ctx, x, c, lhs, result.relation, rhs)
        first = K.link(point_ctx, subst(difference, {x: point}), ">=", sp.Integer(0), rules,
                       _cited(result, result.using, point_ctx, optional=True))
        reports.append(StepReport(1, f"the difference is >= 0 at {x} = {sp.sstr(point)}", ">=", Status.PROVED,
                                  time.perf_counter() - t0, "established", _route(rules)))
        t0 = time.perf_counter()
        second = K.link(ctx, slope, ">=", sp.Integer(0), rules, _cited(result, result.using, ctx))
        reports.append(StepReport(2, f"the slope times ({x} - {sp.sstr(point)}) is >= 0 on the interval", ">=",
                                  Status.PROVED, time.perf_counter() - t0, "established", _route(rules)))
        return K.by_mean_value(ctx, x, c, lhs, result.relation, rhs, first, second), reports
    except (K.Unproved, KernelError) as exc:
        reports.append(StepReport(len(reports) + 1, "mean-value rule", result.relation, Status.UNPROVED,
                                  time.perf_counter() - t0, f"mean-value rule: {exc}", _route(rules)))
        return None, reports


_ = weakest


def model_of(point):
    """The kernel's ``Model`` of an admissible point."""
    distributions = {}
    for operator, outcomes in point.distributions.items():
        if hasattr(outcomes, "joint"):
            distributions[operator] = K.Iid(tuple((p, dict(v)) for p, v in outcomes.outcomes), outcomes.rollouts)
            single = getattr(operator, "single", None)
            if single is not None:
                distributions[single] = distributions[operator]
        else:
            distributions[operator] = [(p, {base[index]: v for base, table in tables.items()
                                            for index, v in table.items()}) for p, tables in outcomes]
    families = {b: t for b, t in point.families.items() if isinstance(t, dict)}
    return K.Model(dict(point.values), families, dict(point.functions), distributions)


def find_model(result, ctx, verdict=None):
    """A model of ``ctx`` the kernel accepts, from the evaluator's admissible points (those of ``verdict``, then,
    if it stopped early and none was a model, those of the full sweep), or None."""
    from grpo_verify import evaluation

    verdicts = [verdict] if verdict is not None else []
    if verdict is None or not verdict.complete:
        verdicts.append(None)  # the full sweep, evaluated only when it is reached
    for v in verdicts:
        for point in (v if v is not None else evaluation.evaluate(result)).points:
            model = model_of(point)
            if K.has_model(ctx, model):
                return model
    return None


def describe(model) -> str:
    parts = [f"{k} = {sp.sstr(v)}" for k, v in sorted(model.values.items(), key=lambda kv: str(kv[0]))]
    parts += [f"{b}: {len(t)} entries" for b, t in model.families.items()]
    parts += [f"{f} = {sp.sstr(lam)}" for f, lam in model.functions.items()]
    for operator, o in model.distributions.items():
        count = len(o.outcomes) if hasattr(o, "outcomes") else len(o)
        parts.append(f"{operator.__name__} over {count} outcomes")
    return "; ".join(parts)[:300] or "any values of the declared types"


