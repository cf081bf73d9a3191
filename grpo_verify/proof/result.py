"""Named results: a statement, its assumptions and a chain of justified steps.

A result reads like a line of a proof: ``lhs = e1 = e2 <= e3 = rhs``. Each link of the chain is a
``Step`` carrying the expression it arrives at, the relation to the previous expression, the rule it
applies and a sentence saying why. ``check()`` decides every link with SymPy (see ``decide``) and
returns a ``ResultReport``; a link SymPy cannot decide is *unproved*, never passed.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Sequence, Union

import sympy as sp

from grpo_verify.proof import decide
from grpo_verify.proof.status import Status, weakest

Relation = str  # one of RELATIONS
RELATIONS = ("=", "<=", ">=", "<", ">", "!=")


@dataclass(frozen=True)
class ForEach:
    """Check a result (or a step) once for each concrete value of an integer symbol.

    Used where SymPy cannot handle the symbol symbolically; the report then says
    "proved for R = 2..16", never "proved".
    """

    symbol: sp.Symbol
    values: tuple[int, ...]

    @classmethod
    def range(cls, symbol: sp.Symbol, first: int, last: int) -> "ForEach":
        return cls(symbol, tuple(range(first, last + 1)))

    def describe(self) -> str:
        v = self.values
        if v == tuple(range(v[0], v[-1] + 1)) and len(v) > 2:
            return f"{self.symbol} = {v[0]}..{v[-1]}"
        return f"{self.symbol} in {{{', '.join(map(str, v))}}}"


@dataclass(frozen=True)
class Assumption:
    """A hypothesis of a result.

    ``condition`` (a SymPy boolean such as ``k < R``) is enforced when the checker searches for
    counterexamples and is rendered; ``domain`` bounds a real symbol to an interval (used by the
    exact univariate sign decision and by the counterexample search). Symbol-level assumptions
    (``positive=True``, ``integer=True``) live on the symbols themselves. ``positive`` names a compound
    expression known to be positive (e.g. ``k + m - 1``); exact normalisation may then treat it as a
    positive atom (so that ``sqrt(x) * sqrt(1/x) = 1``).
    """

    text: str
    condition: sp.Basic | None = None
    domain: tuple[sp.Symbol, sp.Interval] | None = None
    positive: sp.Basic | None = None  # an expression known to be > 0 (e.g. R - 1), beyond symbol assumptions


@dataclass(frozen=True)
class Step:
    """One link of a chain: ``previous <relation> expr`` by ``rule``.

    ``using`` lists equations ``(a, b)`` rewritten as ``a -> b`` in both sides before deciding, or
    earlier ``Result`` objects whose statement is used that way (their status then bounds this step's).
    """

    expr: sp.Basic
    rule: str
    why: str = ""
    relation: Relation = "="
    using: tuple[Union[tuple[sp.Basic, sp.Basic], "Result"], ...] = ()
    for_each: ForEach | None = None

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"step relation {self.relation!r} is not one of {RELATIONS}")


@dataclass(frozen=True)
class StepReport:
    index: int
    rule: str
    relation: Relation
    status: Status
    seconds: float
    detail: str = ""  # how it was decided, or the counterexample


@dataclass(frozen=True)
class ResultReport:
    name: str
    status: Status
    steps: tuple[StepReport, ...]
    seconds: float
    scope: str  # "symbolic" or e.g. "R = 2..16"

    def summary(self) -> str:
        lines = [f"{self.name}: {self.status.value} ({self.scope}; {self.seconds:.2f} s)"]
        for s in self.steps:
            lines.append(f"  step {s.index} [{s.rule}] {s.status.value}: {s.detail} ({s.seconds:.2f} s)")
        return "\n".join(lines)


@dataclass(eq=False)
class Result:
    """A named result: ``lhs <relation> rhs`` under ``assumptions``, proved by ``steps``.

    With no steps the statement is decided directly (for a computation that SymPy does in one go,
    e.g. an exact evaluation on a concrete model); ``rule``/``why`` then justify that single link.
    ``for_each`` checks every link for each listed value instead of symbolically; ``fallback``
    does so only for links that fail symbolically (the report says which scope was reached).
    """

    name: str
    doc: str
    lhs: sp.Basic
    rhs: sp.Basic
    relation: Relation = "="
    assumptions: tuple[Assumption, ...] = ()
    steps: tuple[Step, ...] = ()
    rule: str = "direct computation"
    why: str = ""
    using: tuple[Union[tuple[sp.Basic, sp.Basic], "Result"], ...] = ()
    for_each: ForEach | None = None
    fallback: ForEach | None = None
    family: str = ""  # set by the catalogue from the derivation module
    _report: ResultReport | None = field(default=None, init=False, repr=False)
    defined_in: str = field(default="", init=False, repr=False)  # the module whose code built it

    def __post_init__(self) -> None:
        # frame 0 is this method, 1 the generated __init__, 2 the code that wrote ``Result(...)``
        self.defined_in = sys._getframe(2).f_globals.get("__name__", "")
        if self.relation not in RELATIONS:
            raise ValueError(f"{self.name}: relation {self.relation!r} is not one of {RELATIONS}")
        if not self.name.isidentifier():
            raise ValueError(f"result name {self.name!r} must be an identifier stating the conclusion")
        if not self.doc.strip():
            raise ValueError(f"{self.name}: every result needs a docstring")
        if self.relation == "!=" and self.steps:
            raise ValueError(f"{self.name}: a '!=' statement is decided directly, without steps")

    # -- the chain ---------------------------------------------------------------------------
    def links(self) -> list[Step]:
        """The steps, or one implicit step when the statement is decided directly."""
        if self.steps:
            return list(self.steps)
        return [Step(self.rhs, self.rule, self.why, self.relation, self.using)]

    def chain_relation(self) -> Relation | None:
        """The relation the chain establishes between lhs and rhs, or None if it mixes directions."""
        rels = {s.relation for s in self.links()} - {"="}
        if not rels:
            return "="
        if rels <= {"<=", "<"}:
            return "<" if "<" in rels else "<="
        if rels <= {">=", ">"}:
            return ">" if ">" in rels else ">="
        if rels == {"!="} and len(self.links()) == 1:
            return "!="
        return None

    def check(self, *, refresh: bool = False) -> ResultReport:
        """Decide every link; cached, since results are immutable once defined."""
        if self._report is not None and not refresh:
            return self._report
        start = time.perf_counter()
        reports: list[StepReport] = []
        previous = self.lhs
        links = self.links()
        for index, step in enumerate(links, start=1):
            reports.append(self._check_link(index, previous, step))
            previous = step.expr
        # The chain must end where the statement does.
        if self.steps:
            reports.append(self._check_link(len(links) + 1, previous,
                                            Step(self.rhs, "chain ends at the statement's right-hand side")))
        implied = self.chain_relation()
        if not _implies(implied, self.relation):
            reports.append(StepReport(len(reports) + 1, "chain relation", "=", Status.REFUTED, 0.0,
                                      f"the steps establish {implied!r}, not the stated {self.relation!r}"))
        status = weakest(r.status for r in reports)
        scope = "symbolic"
        if self.for_each is not None:
            scope = self.for_each.describe()
        elif status is Status.PROVED_FOR_RANGE:
            scope = self.fallback.describe() if self.fallback else "a range"
        self._report = ResultReport(self.name, status, tuple(reports), time.perf_counter() - start, scope)
        return self._report

    def _check_link(self, index: int, previous: sp.Basic, step: Step) -> StepReport:
        start = time.perf_counter()
        facts, fact_status = _facts(step.using)
        context = decide.Context.from_assumptions(self.assumptions, facts)
        for_each = step.for_each or self.for_each
        if for_each is not None:
            outcome = decide.decide_for_each(previous, step.relation, step.expr, context, for_each.symbol,
                                             for_each.values)
            status = _range_status(outcome.status)
        else:
            outcome = decide.decide(previous, step.relation, step.expr, context)
            status = outcome.status
            if status is Status.UNPROVED and self.fallback is not None:
                ranged = decide.decide_for_each(previous, step.relation, step.expr, context,
                                                self.fallback.symbol, self.fallback.values)
                if ranged.status is Status.PROVED or ranged.status is Status.REFUTED:
                    outcome = ranged
                    status = _range_status(ranged.status)
        status = weakest([status, fact_status])
        return StepReport(index, step.rule, step.relation, status, time.perf_counter() - start, outcome.detail)


def _range_status(status: Status) -> Status:
    return Status.PROVED_FOR_RANGE if status is Status.PROVED else status


def _facts(using: Sequence) -> tuple[list[tuple[sp.Basic, sp.Basic]], Status]:
    facts: list[tuple[sp.Basic, sp.Basic]] = []
    statuses: list[Status] = []
    for fact in using:
        if isinstance(fact, Result):
            if fact.relation != "=":
                raise ValueError(f"only equations can be used as rewrites; {fact.name} states {fact.relation!r}")
            statuses.append(fact.check().status)
            facts.append((fact.lhs, fact.rhs))
        else:
            a, b = fact
            facts.append((sp.sympify(a), sp.sympify(b)))
    return facts, weakest(statuses)


def _implies(established: Relation | None, stated: Relation) -> bool:
    if established is None:
        return False
    if established == stated:
        return True
    return (established, stated) in {("=", "<="), ("=", ">="), ("<", "<="), (">", ">="), ("<", "!="), (">", "!=")}
