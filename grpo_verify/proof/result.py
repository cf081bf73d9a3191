"""Named results: a statement, its assumptions and a chain of justified steps.

A result reads like a line of a proof: ``lhs = e1 = e2 <= e3 = rhs``. Each link of the chain is a
``Step`` carrying the expression it arrives at, the relation to the previous expression, the rule it
applies and a sentence saying why. These classes are plain data, validated when built (exact numbers,
real symbols, no unchecked rewrite pairs); ``check.check`` asks the kernel's rules for a theorem of each
and returns a ``ResultReport``; a link no rule establishes is *unproved*, never passed.
"""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Union

import sympy as sp
from sympy.core.function import AppliedUndef

from grpo_verify.proof.terms import KernelError

_NOT_REAL = (sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I)


def validate(e, where: str) -> None:
    """The checks made when a statement is built: exact numbers, real symbols, no infinities (the kernel's
    ``check`` later refuses any operator it has no rules for)."""
    if isinstance(e, (bool, int)):
        return
    if isinstance(e, float):
        raise KernelError(f"{where}: the float {e!r} is not exact; write it as a Rational")
    if isinstance(e, sp.MatrixBase):
        for entry in e:
            validate(entry, where)
        return
    if not isinstance(e, sp.Basic):
        raise KernelError(f"{where}: {e!r} is not a SymPy expression")
    for node in sp.preorder_traversal(e):
        if isinstance(node, sp.Float):
            raise KernelError(f"{where}: the float {node} is not exact (it is rounded); write it as a Rational")
        if node in _NOT_REAL or (isinstance(node, sp.Number) and not node.is_real):
            raise KernelError(f"{where}: {node} is not a real number")
        if isinstance(node, sp.Symbol) and node.is_real is not True and not node.is_Boolean:
            raise KernelError(f"{where}: the symbol {node} may be complex (SymPy's default); declare its domain, "
                              f"e.g. Symbol({node.name!r}, real=True)")
        if isinstance(node, sp.Indexed) and node.is_real is not True:
            raise KernelError(f"{where}: {node} may be complex; declare IndexedBase({node.base}, real=True)")
        if isinstance(node, AppliedUndef) and node.is_real is not True:
            raise KernelError(f"{where}: the function {node.func} may be complex-valued; declare "
                              f"Function({str(node.func)!r}, real=True)")


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
class Induction:
    """Prove a statement about an integer symbol for every value ``>= base`` by induction: the kernel
    decides the base case (the statement at ``symbol = base``) and the step (the statement at
    ``symbol + 1``, with the statement at ``symbol`` as a hypothesis). Every other hypothesis that
    mentions the symbol must be a constant lower bound on it, and the hypotheses must give
    ``symbol >= base``; otherwise the kernel refuses the induction."""

    symbol: sp.Symbol
    base: int

    def __post_init__(self) -> None:
        if not isinstance(self.symbol, sp.Symbol) or self.symbol.is_integer is not True:
            raise KernelError(f"induction runs over a symbol declared integer, not {self.symbol!r}")
        if not isinstance(self.base, int) or isinstance(self.base, bool):
            raise KernelError(f"the base case of an induction is a Python int, not {self.base!r}")

    def describe(self) -> str:
        return f"induction on {self.symbol} from {self.symbol} = {self.base}"


@dataclass(frozen=True)
class MinimumAt:
    """Prove ``lhs >= rhs`` (or ``<=``) in one real variable by the mean value theorem: the difference
    ``D`` (larger side minus smaller) is ``>= 0`` at ``point``, and ``D'(y) (y - point) >= 0`` at every
    admissible ``y`` (``D`` falls up to the point and rises after it). The kernel refuses unless the
    admissible values of the variable form an interval (every hypothesis mentioning it is a constant
    bound), the point is admissible, and ``D`` is differentiable at every admissible value."""

    symbol: sp.Symbol
    point: sp.Basic

    def __post_init__(self) -> None:
        if not isinstance(self.symbol, sp.Symbol) or self.symbol.is_real is not True or self.symbol.is_integer:
            raise KernelError(f"the mean-value rule runs over a real, non-integer symbol, not {self.symbol!r}")
        validate(sp.sympify(self.point), "the point of a MinimumAt")
        if sp.sympify(self.point).has(self.symbol):
            raise KernelError("the point of a MinimumAt must not depend on its variable")


@dataclass(frozen=True)
class Assumption:
    """A hypothesis of a result; everything in it is rendered and used by the kernel.

    ``condition`` (a SymPy boolean such as ``k < R``); ``domain`` bounds a symbol to a set (an
    interval, used also by the exact univariate sign decision); ``positive`` names an expression
    assumed > 0 (e.g. ``k + m - 1``); ``equation`` ``(a, b)`` assumes ``a = b`` and lets a step that
    lists this assumption in ``using`` rewrite ``a`` to ``b`` -- the only way to rewrite with an
    equation that is not a proved result. ``context=True`` marks an assumption that the proof does
    not need (it says where the result is meant to apply); the assumption-deletion test checks
    that every other assumption is needed. Symbol-level assumptions (``positive=True``,
    ``integer=True``) are part of the hypotheses too: the rendering lists them as domains.
    """

    text: str
    condition: sp.Basic | None = None
    domain: tuple[sp.Symbol, sp.Set] | None = None
    positive: sp.Basic | None = None
    equation: tuple[sp.Basic, sp.Basic] | None = None
    context: bool = False
    # the equation holds for every value of these variables (an identity in them, e.g. a
    # normalisation for every theta): only then may it rewrite inside a derivative in them
    for_every: tuple[sp.Symbol, ...] = ()
    # the condition holds for every integer value of the index in lo..hi: (index, lo, hi)
    for_all: tuple[sp.Symbol, sp.Basic, sp.Basic] | None = None

    def __post_init__(self) -> None:
        where = f"assumption {self.text!r}"
        if self.for_all is not None:
            if len(self.for_all) != 3 or not isinstance(self.for_all[0], sp.Symbol) \
                    or self.for_all[0].is_integer is not True:
                raise KernelError(f"{where}: for_all is (index, lo, hi) with an index symbol declared integer")
            if self.condition is None or any(x is not None for x in (self.domain, self.positive, self.equation)):
                raise KernelError(f"{where}: a for_all assumption states one condition in its index, nothing else")
            for end in self.for_all[1:]:
                validate(sp.sympify(end), where)
                if sp.sympify(end).has(self.for_all[0]):
                    raise KernelError(f"{where}: the range of a for_all must not mention its index")
        for e in (self.condition, self.positive, *(self.equation or ())):
            if e is not None:
                validate(e, where)
        if self.domain is not None:
            symbol, domain = self.domain
            validate(symbol, where)
            if not isinstance(domain, sp.Set):
                raise KernelError(f"{where}: a domain is a SymPy set such as Interval(0, 1), not {domain!r}")
            for end in domain.boundary if isinstance(domain, sp.Interval) else ():
                validate(end, where)
            for node in sp.preorder_traversal(domain):  # a FiniteSet or Union has no boundary to check
                if isinstance(node, sp.Float):
                    raise KernelError(f"{where}: the float {node} in the domain is not exact (it is rounded); "
                                      "write it as a Rational")
                if isinstance(node, sp.Symbol) and node.is_real is not True:
                    raise KernelError(f"{where}: the symbol {node} in the domain may be complex; declare it real")
        if self.equation is not None and len(self.equation) != 2:
            raise KernelError(f"{where}: an equation is a pair (a, b) meaning a = b")

    @property
    def formal(self) -> bool:
        """Whether the kernel sees anything of it (a prose-only assumption describes the setting; the
        kernel uses the symbol domains and the formal assumptions instead)."""
        return any(x is not None for x in (self.condition, self.domain, self.positive, self.equation))

    @property
    def is_context(self) -> bool:
        """Not needed by the proof: marked so, or prose only."""
        return self.context or not self.formal

    def as_context(self) -> "Assumption":
        """The same assumption marked as context, for a result whose proof does not need it."""
        return Assumption(self.text, self.condition, self.domain, self.positive, self.equation, context=True,
                          for_every=self.for_every, for_all=self.for_all)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


def _validate_by(by: tuple, where: str) -> None:
    from grpo_verify.proof.rules import Rule

    if not isinstance(by, tuple) or any(not isinstance(r, Rule) for r in by):
        raise KernelError(f"{where}: by= takes a tuple of kernel rules (grpo_verify.proof.rules), not {by!r}")


def _validate_using(using: tuple, where: str) -> None:
    for fact in using:
        if isinstance(fact, tuple):
            raise KernelError(f"{where}: the rewrite pair {fact!r} would be an unchecked axiom; state it as an "
                              "Assumption(..., equation=(a, b)) of the result, or cite a proved Result")
        if not isinstance(fact, (Assumption, Result, Instance)):
            raise KernelError(f"{where}: using= takes Results, their instances and Assumptions, not {fact!r}")


@dataclass(frozen=True, eq=False)
class Instance:
    """A result at given values of some of its free symbols, built by ``result.at({x: e, ...})``.

    Cited in ``using=``, the kernel checks that the result is proved, that each value lies in its
    symbol's declared domain and that the result's hypotheses hold at the values; the instance of
    its statement then holds at the current point (an equation rewrites there, an inequality is a
    hypothesis of the step), never inside a derivative."""

    result: "Result"
    values: tuple[tuple[sp.Symbol, sp.Basic], ...]

    @property
    def name(self) -> str:
        return self.result.name

    def describe(self) -> str:
        return ", ".join(f"{sp.sstr(v)} = {sp.sstr(e)}" for v, e in self.values)


@dataclass(frozen=True)
class Step:
    """One link of a chain: ``previous <relation> expr`` by ``rule``.

    ``using`` lists earlier ``Result`` objects (their statement rewrites, their hypotheses must hold
    here and their status bounds this step's) or equation ``Assumption`` objects of this result.
    """

    expr: sp.Basic
    rule: str = ""  # the step's name in print (the kernel reads ``by``)
    why: str = ""
    relation: Relation = "="
    using: tuple[Union["Assumption", "Result"], ...] = ()
    for_each: ForEach | None = None
    by: tuple = ()  # the kernel rules (grpo_verify.proof.rules) the step applies

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"step relation {self.relation!r} is not one of {RELATIONS}")
        validate(self.expr, f"step {self.rule!r}")
        _validate_using(self.using, f"step {self.rule!r}")
        _validate_by(self.by, f"step {self.rule!r}")


@dataclass(eq=False)
class Result:
    """A named result: ``lhs <relation> rhs`` under ``assumptions``, proved by ``steps``.

    With no steps the statement is decided directly (for a computation that SymPy does in one go,
    e.g. an exact evaluation on a concrete model); ``rule``/``why`` then justify that single link.
    ``for_each`` checks every link for each listed value instead of symbolically; ``fallback``
    does so only for links that fail symbolically (the report says which scope was reached).
    Only the kernel's rules (``grpo_verify.proof.theorem``) make the theorem behind a status.
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
    using: tuple[Union[Assumption, "Result"], ...] = ()
    for_each: ForEach | None = None
    fallback: ForEach | None = None
    induction: Induction | None = None
    minimum_at: MinimumAt | None = None
    by: tuple = ()  # the kernel rules of the one link of a result without steps (and of induction's links)
    model: object = None  # a model of the assumptions, or a hint for one: see grpo_verify.proof.models
    # the specific values a result is about ("R = 4", "the softmax example"): its scope is then
    # "instance (...)", never "symbolic" (a statement with no free symbol is an instance without it)
    instance: str = ""
    family: str = ""  # set by the catalogue from the derivation module
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
        validate(self.lhs, f"{self.name}: left-hand side")
        validate(self.rhs, f"{self.name}: right-hand side")
        _validate_using(self.using, self.name)
        _validate_by(self.by, self.name)
        if self.steps and (self.using or self.by):
            raise ValueError(f"{self.name}: with steps, list what each step uses in that step's using= and by=")
        if self.induction is not None:
            if self.steps or self.for_each is not None or self.fallback is not None:
                raise ValueError(f"{self.name}: a result by induction is decided directly (base case and step), "
                                 "without steps, for_each or fallback")
            if self.relation == "!=":
                raise ValueError(f"{self.name}: a '!=' statement cannot be proved by induction")
        if self.minimum_at is not None:
            if self.steps or self.for_each is not None or self.fallback is not None or self.induction is not None:
                raise ValueError(f"{self.name}: a result by the mean-value rule is decided directly, without steps, "
                                 "for_each, fallback or induction")
            if self.relation not in (">=", "<="):
                raise ValueError(f"{self.name}: the mean-value rule proves '>=' or '<=', not {self.relation!r}")
        if not isinstance(self.instance, str):
            raise ValueError(f"{self.name}: instance= names the values the result is about, as text, not "
                             f"{self.instance!r}")
        for a in self.assumptions:
            if not isinstance(a, Assumption):
                raise KernelError(f"{self.name}: assumptions must be Assumption objects, not {a!r}")

        self.__dict__["_frozen"] = True

    _STATEMENT = ("name", "doc", "lhs", "rhs", "relation", "assumptions", "steps", "rule", "why", "using", "for_each",
                  "fallback", "induction", "minimum_at", "by", "model", "instance")

    def __setattr__(self, key: str, value) -> None:
        # the kernel caches its report: a statement changed after checking would keep a stale verdict
        if key in self._STATEMENT and self.__dict__.get("_frozen"):
            raise AttributeError(f"{self.name}: a Result is immutable once built ({key} cannot change)")
        super().__setattr__(key, value)

    # -- the chain ---------------------------------------------------------------------------
    def links(self) -> list[Step]:
        """The steps, or one implicit step when the statement is decided directly."""
        if self.steps:
            return list(self.steps)
        return [Step(self.rhs, self.rule, self.why, self.relation, self.using, by=self.by)]

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

    def check(self, *, refresh: bool = False) -> "ResultReport":
        """The kernel's report, cached for the statement it was made for (checked again if that changed)."""
        statement = _fingerprint(tuple(self.__dict__.get(k) for k in self._STATEMENT))
        cached = _REPORTS.get(self)
        if refresh or cached is None or not _same(cached[0], statement):
            _REPORTS[self] = (statement, checking.check(self))
        return _REPORTS[self][1]

    def cached_report(self) -> "ResultReport | None":
        """The report this process's kernel made for this statement, if it made one (nothing is checked)."""
        statement = _fingerprint(tuple(self.__dict__.get(k) for k in self._STATEMENT))
        cached = _REPORTS.get(self)
        return cached[1] if cached is not None and _same(cached[0], statement) else None

    def at(self, values: dict) -> Instance:
        """This result at ``values`` of some of its free symbols, to cite in ``using=``."""
        pairs = []
        for symbol, value in values.items():
            if not isinstance(symbol, sp.Symbol):
                raise KernelError(f"{self.name}: an instance gives values to symbols, not to {symbol!r}")
            value = sp.sympify(value)
            validate(value, f"{self.name}: the value of {symbol}")
            pairs.append((symbol, value))
        if not pairs:
            raise KernelError(f"{self.name}: an instance needs at least one value; cite the result itself")
        return Instance(self, tuple(pairs))

    def without(self, assumption: Assumption) -> "Result":
        """The same result with one assumption deleted (for the assumption-deletion test)."""
        clone = Result.__new__(Result)
        clone.__dict__.update(self.__dict__)
        clone.__dict__["assumptions"] = tuple(a for a in self.assumptions if a is not assumption)
        return clone


# The kernel's reports, kept outside the results with the statement each was made for: a statement changed
# after checking (through __dict__ or object.__setattr__, on the result or inside its frozen parts) is checked
# again, and no attribute of a result holds a verdict one could overwrite.
_REPORTS: "weakref.WeakKeyDictionary[Result, tuple]" = weakref.WeakKeyDictionary()


def _fingerprint(x):
    """``x`` with its tuples and frozen dataclasses (not other results) opened up, to compare leaf by leaf."""
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_fingerprint(a) for a in x))
    if is_dataclass(x) and not isinstance(x, (type, Result)):
        return (type(x), tuple(_fingerprint(getattr(x, f.name, None)) for f in fields(x)))
    return x


def _same(a, b) -> bool:
    """The same fingerprint: leaves identical (SymPy terms are immutable: a change is a new object)."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a is b


from grpo_verify.proof import check as checking  # noqa: E402 - the checker reads these classes
from grpo_verify.proof.check import ResultReport, StepReport  # noqa: E402,F401 - re-exported
