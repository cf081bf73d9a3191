"""The kernel's rule registry and the engine that applies rules to terms. Trusted.

A rule is one small function with its side conditions, in one of three kinds:

* ``normal``: ``node -> equal node`` (or None), applied bottom-up everywhere and again to its own
  result; it must terminate (each use removes an operator or moves one inward);
* ``directed``: the same, applied once to each matching node of one side of a step (splitting a sum's
  last term, say, which could go on forever);
* ``fact``: ``atom -> formulas true of it`` (a sum of non-negative terms is ``>= 0``), handed to the
  arithmetic decision.

Every side condition is proved by ``Local.prove`` in the context where the node sits (the ranges of the
binders above it; nothing about an expectation's random families from outside it) before the rule
fires; a condition that is not proved means the rule does not apply. A rule's result is defined
wherever its input is (a side condition says so where that needs proof: the power rule's ``b != 0``). A step names its rules
(``Step(..., by=(rules.sum_linearity, ...))``); nothing else changes a sum, a product, a delta, a
derivative, an expectation or a matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable

import sympy as sp

from grpo_verify.proof import relations as rel

from grpo_verify.proof.operators import Expectation, SquareMatrix  # noqa: F401 - re-exported
from grpo_verify.proof.terms import canon, outermost, subs_points, subst

RULES: dict[str, "Rule"] = {}


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str  # "normal", "directed" or "fact"
    fn: Callable = field(repr=False, compare=False)
    args: tuple = ()

    def __call__(self, *args) -> "Rule":
        """The rule with arguments (a split point, an index shift, ...)."""
        return replace(self, args=tuple(sp.sympify(a) for a in args))

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip().split("\n\n")[0]

    def label(self) -> str:
        return self.name + (f"({', '.join(sp.sstr(a) for a in self.args)})" if self.args else "")


_CLOSED = []  # set once every rule module is loaded: no rule can be registered afterwards


def rule(kind: str) -> Callable:
    def register(fn: Callable) -> Rule:
        if _CLOSED or not fn.__module__.startswith(__name__ + "."):
            raise ValueError(f"{fn.__name__}: kernel rules are registered only by the modules of {__name__}")
        if fn.__name__ in RULES:
            raise ValueError(f"two kernel rules named {fn.__name__}")
        RULES[fn.__name__] = Rule(fn.__name__, kind, fn)
        return RULES[fn.__name__]
    return register


@dataclass
class Local:
    """Where a node sits: the context, the binders' ranges above it, the random families bound there,
    the canonical depth, and the normal rules of the step (for rules that prove a sub-identity)."""

    ctx: object
    ranges: tuple = ()
    hidden: frozenset = frozenset()
    depth: int = 0
    rules: tuple = ()
    facts: tuple = ()  # near the point of a derivative: the variable's sign there

    def prove(self, condition) -> bool:
        """``condition`` where the node sits; the step's fact rules may add what they prove of its atoms."""
        condition = sp.sympify(condition)
        if self.ctx.prove(condition, self.ranges, self.hidden, self.facts):
            return True
        if not any(r.kind == "fact" for r in self.rules):
            return False
        from grpo_verify.proof.theorem import atoms_of

        extra = facts(atoms_of(canon(condition, self.depth)), self, self.rules)
        return bool(extra) and self.ctx.prove(condition, self.ranges, self.hidden, self.facts + tuple(extra))

    def equal(self, a, b) -> bool:
        """``a = b`` here, by the step's normal rules and the ring normal form."""
        from grpo_verify.proof.arith import ring_zero

        a, b = normalize(canon(a, self.depth), self), normalize(canon(b, self.depth), self)
        return ring_zero(a - b) or self.prove(rel.Eq(a, b))

    def under(self, **changes) -> "Local":
        return replace(self, **changes)


def children(e, local: Local):
    """(argument position, argument, its Local) for each argument of ``e``."""
    # every binder hides its variables: nothing said of a free symbol of the same name applies below it
    if isinstance(e, (sp.Sum, sp.Product)):
        body, d, lo, hi = outermost(e)
        yield 0, body, local.under(ranges=local.ranges + ((d, lo, hi),), depth=local.depth + 1,
                                   hidden=local.hidden | {d})
        return
    if isinstance(e, SquareMatrix):
        n, entry = e.args
        yield 0, n, local
        i, j = entry.variables
        yield 1, entry, local.under(ranges=local.ranges + ((i, 1, n), (j, 1, n)), depth=local.depth + 2,
                                    hidden=local.hidden | {i, j})
        return
    if isinstance(e, sp.Lambda):
        yield 1, e.expr, local.under(hidden=local.hidden | set(e.variables))
        return
    if isinstance(e, sp.Subs):
        # a strict sign of the point holds on a neighbourhood of it, where the derivative is decided
        near = tuple(sign(v, 0) for v, p in zip(e.variables, e.point) for sign in (rel.Gt, rel.Lt, rel.Ne)
                     if local.prove(sign(p, 0)))
        yield 0, e.expr, local.under(depth=local.depth + len(e.variables), facts=local.facts + near,
                                     hidden=local.hidden | set(e.variables))
        for n, p in enumerate(e.point):
            yield 2 + n, p, local
        return
    if isinstance(e, sp.Derivative) and isinstance(e.variables[0], sp.Indexed):
        yield 0, e.expr, local.under(hidden=local.hidden | {v.base for v in e.variables})
        return
    if isinstance(e, sp.Derivative):
        yield 0, e.expr, local.under(hidden=local.hidden | {v for v, _ in e.variable_count})
        return
    if isinstance(e, Expectation):
        yield 0, e.args[0], local.under(hidden=local.hidden | frozenset(e.random))
        return
    for n, a in enumerate(e.args):
        yield n, a, local


def rebuild(e, new: dict):
    """``e`` with its arguments at the positions in ``new`` replaced."""
    if not new:
        return e
    if isinstance(e, (sp.Sum, sp.Product)):
        body, d, lo, hi = outermost(e)
        return type(e)(new.get(0, body), (d, lo, hi))
    if isinstance(e, SquareMatrix):
        return SquareMatrix(new.get(0, e.args[0]), new.get(1, e.args[1]))
    if isinstance(e, sp.Lambda):
        return sp.Lambda(e.variables, new.get(1, e.expr))
    if isinstance(e, sp.Subs):
        body, point = new.get(0, e.expr), tuple(new.get(2 + n, p) for n, p in enumerate(e.point))
        if not isinstance(body, sp.Derivative):  # a value at the point: the substitution itself (SymPy would
            return subst(body, dict(zip(e.variables, point)))  # flatten Subs(Subs(..)) into a simultaneous one)
        return sp.Subs(body, e.variables, point)
    if isinstance(e, sp.Derivative):
        return sp.Derivative(new.get(0, e.expr), *e.variable_count)
    return rel.rebuilt(e, [new.get(n, a) for n, a in enumerate(e.args)])


_LIMIT = 60


def normalize(e, local: Local, rules=None, _depth: int = 0):
    """Apply the normal rules bottom-up, each node until none applies."""
    rules = [r for r in (local.rules if rules is None else rules) if r.kind == "normal"]
    if not rules or not isinstance(e, sp.Basic) or isinstance(e, sp.MatrixBase):
        return e
    if _depth > _LIMIT:
        raise RecursionError("a normal rule did not terminate")
    memo = local.ctx.__dict__.setdefault("_normal", {})  # per context: side conditions depend on it
    key = (e, tuple(rules), local.ranges, local.hidden, local.depth, local.facts, subs_points(e, local.facts))
    if key not in memo:
        memo[key] = _normalized(e, local, rules, _depth)
    return memo[key]


def _normalized(e, local: Local, rules, _depth: int):
    new = {}
    for n, a, inner in children(e, local):
        b = normalize(a, inner, rules, _depth + 1) if isinstance(a, sp.Basic) else a
        if b is not a:
            new[n] = b
    e = rebuild(e, new)
    if isinstance(e, sp.Subs) and not isinstance(e.expr, sp.Derivative):
        e = canon(e, local.depth)  # a computed derivative's value at its point: the substitution itself
        if not isinstance(e, sp.Basic) or not e.args:
            return e
    for r in rules:
        out = r.fn(e, local, *r.args)
        if out is not None and out != e:
            return normalize(canon(out, local.depth), local, rules, _depth + 1)
    return e


def directed(e, r: Rule, local: Local):
    """Apply a directed rule once to every node it matches, outermost first (not to its own results)."""
    if not isinstance(e, sp.Basic) or isinstance(e, sp.MatrixBase) or not e.args:
        return e
    out = r.fn(e, local, *r.args)
    if out is not None and out != e:
        return canon(out, local.depth)
    new = {}
    for n, a, inner in children(e, local):
        if isinstance(a, sp.Basic):
            b = directed(a, r, inner)
            if b is not a:
                new[n] = b
    return rebuild(e, new)


def facts(atoms, local: Local, rules) -> list:
    """The formulas the fact rules prove about ``atoms``."""
    out = []
    for r in rules:
        if r.kind == "fact":
            out += r.fn(list(atoms), local, *r.args) or []
    return out


from grpo_verify.proof.rules import algebra, calculus, expectation, matrices, order, sums  # noqa: E402,F401


def _load_all() -> None:
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


_load_all()
_CLOSED.append(True)
RULES = MappingProxyType(RULES)  # read-only from here on

globals().update(RULES)  # rules.sum_linearity, ... for the derivations' steps
DIFFERENTIATION = calculus.DIFFERENTIATION  # the derivative rules, as one bundle
