"""What a canonical term needs in order to denote a real number: its definedness obligations. Trusted.

One obligation per subterm that can be undefined, with the local facts of the binders it sits under:
``b**n`` with ``n < 0`` an integer needs ``b != 0``; a non-integer rational power needs ``b >= 0`` (``> 0``
for a negative one); a symbolic exponent needs ``b > 0``, or ``b != 0`` or ``e >= 0`` for an integer one;
``log u`` needs ``u > 0``; ``binomial`` takes integers; a sum or product over ``lo..hi`` needs
``hi >= lo - 1`` (no Karr reversal);
its body's obligations hold for ``lo <= j <= hi``; a ``SquareMatrix`` of size ``n`` needs ``n >= 0``;
``Piecewise`` branches are needed only under their conditions; inside an expectation, nothing said of the
sampled values of its random families applies. Under ``Subs(Derivative(F(d), d), d, p)`` the function must
be differentiable near ``p``: ``F`` may not contain ``Min``, ``Max``, ``Abs``, ``Piecewise``, a Kronecker delta
or a binomial in ``d`` (a ``Min``/``Max`` becomes a kink obligation, which the calculus rule
``derivative_at_a_kink`` may discharge), and every obligation of ``F`` mentioning ``d`` must hold strictly
at ``p`` (``>`` for ``>=``), so that it holds on a neighbourhood. (What a bound variable's declaration
requires, a range from 1 for a positive index, a positive point for a positive variable, comes from
``terms.canon``.)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from grpo_verify.proof import relations as rel

from grpo_verify.proof.operators import Expectation, MatrixRank, SquareMatrix
from grpo_verify.proof.terms import free_symbols, integer_valued, outermost


@dataclass(frozen=True)
class Obligation:
    condition: sp.Basic  # a formula, or None for a kink obligation
    reason: str
    ranges: tuple = ()  # ((index, lo, hi), ...): the binders' ranges over the subterm
    hidden: frozenset = frozenset()  # random families whose sampled values are bound here
    kink: tuple | None = None  # (F, d, p): F must be differentiable in d at p


_NONSMOOTH = (sp.Piecewise, sp.KroneckerDelta, sp.binomial, MatrixRank)  # MatrixRank: integer-valued, it jumps
_KINKED = (sp.Min, sp.Max, sp.Abs)  # differentiable where no kink is hit: a kink obligation


def obligations(e) -> list[Obligation]:
    out: list[Obligation] = []
    if isinstance(e, sp.MatrixBase):
        for x in e:
            _collect(x, (), frozenset(), out)
    else:
        _collect(sp.sympify(e), (), frozenset(), out)
    return list(dict.fromkeys(o for o in out if o.condition is not sp.true))


def _collect(e, ranges: tuple, hidden: frozenset, out: list) -> None:
    def need(condition, reason: str) -> None:
        out.append(Obligation(sp.sympify(condition), reason, ranges, hidden))

    if not isinstance(e, sp.Basic) or not e.args or isinstance(e, sp.IndexedBase):
        return
    if isinstance(e, (sp.Sum, sp.Product)):
        body, d, lo, hi = outermost(e)
        _collect(lo, ranges, hidden, out)
        _collect(hi, ranges, hidden, out)
        need(rel.Ge(hi, lo - 1), f"the range of {sp.sstr(e)[:50]} is not reversed (hi >= lo - 1)")
        _collect(body, ranges + ((d, lo, hi),), hidden | {d}, out)
        return
    if isinstance(e, SquareMatrix):
        n, entry = e.args
        need(rel.Ge(n, 0), "a matrix size is >= 0")
        i, j = entry.variables
        _collect(entry.expr, ranges + ((i, 1, n), (j, 1, n)), hidden | {i, j}, out)
        return
    if isinstance(e, Expectation):
        _collect(e.args[0], ranges, hidden | frozenset(e.random), out)
        return
    if isinstance(e, sp.Subs) and isinstance(e.expr, sp.Derivative):
        _derivative(e, ranges, hidden, out)
        return
    if isinstance(e, sp.Subs):  # a value at a point (canon evaluates these; a raw one binds its variables)
        for p in e.point:
            _collect(p, ranges, hidden, out)
        _collect(e.expr, ranges, hidden | set(e.variables), out)
        return
    if isinstance(e, sp.Derivative):  # in indexed variables: taken at the current point
        _smooth(e.expr, [v for v, _ in e.variable_count], None, ranges, hidden, out)
        return
    if isinstance(e, sp.Piecewise):
        if e.args[-1][1] is not sp.true:  # some branch must apply
            need(sp.Or(*[cond for _b, cond in e.args]), "a Piecewise defined only where one of its conditions holds")
        earlier = []
        for branch, cond in e.args:
            _collect(cond, ranges, hidden, out)
            here = sp.And(cond, *[sp.Not(c) for c in earlier])
            inner: list[Obligation] = []
            _collect(branch, ranges, hidden, inner)
            out += [Obligation(sp.Or(sp.Not(here), o.condition), o.reason, o.ranges, o.hidden, o.kink)
                    if o.condition is not None else o for o in inner]
            earlier.append(cond)
        return
    for a in e.args:
        _collect(a, ranges, hidden, out)
    if isinstance(e, sp.Pow):
        b, x = e.args
        if x.is_Integer:
            if x < 0:
                need(rel.Ne(b, 0), f"division by {sp.sstr(b)[:60]}")
        elif x.is_Rational:
            need(rel.Gt(b, 0) if x < 0 else rel.Ge(b, 0), f"a real power of {sp.sstr(b)[:60]} needs a non-negative base")
        elif integer_valued(x):
            need(sp.Or(rel.Ne(b, 0), rel.Ge(x, 0)), f"{sp.sstr(e)[:60]} needs a nonzero base or a non-negative exponent")
        else:
            need(sp.Or(rel.Gt(b, 0), sp.And(rel.Ge(b, 0), rel.Gt(x, 0))), f"{sp.sstr(e)[:60]} needs a positive base")
    elif isinstance(e, sp.log):
        need(rel.Gt(e.args[0], 0), f"the logarithm of {sp.sstr(e.args[0])[:60]} needs a positive argument")
    elif isinstance(e, sp.binomial):
        if not all(integer_valued(a) for a in e.args):
            need(sp.false, "a binomial coefficient of non-integers")


def _derivative(e: sp.Subs, ranges, hidden, out) -> None:
    inner = e.expr
    variables = [v for v, _ in inner.variable_count]
    for p in e.point:
        _collect(p, ranges, hidden, out)
    _smooth(inner.expr, variables, dict(zip(e.variables, e.point)), ranges, hidden, out)


def _smooth(f, variables, point: dict | None, ranges, hidden, out) -> None:
    """Differentiability of ``f`` in ``variables`` (symbols taken at ``point``, or indexed variables at the
    current point): its obligations that mention them hold strictly there, and no kink."""
    bases = {v.base for v in variables if isinstance(v, sp.Indexed)}

    def moves(x) -> bool:
        if bases:
            return any(isinstance(n, sp.Indexed) and n.base in bases for n in sp.preorder_traversal(x))
        return bool(free_symbols(x) & set(variables))

    for node in sp.preorder_traversal(f):
        if isinstance(node, _NONSMOOTH) and moves(node):
            out.append(Obligation(sp.false, f"{type(node).__name__} is not differentiable everywhere in "
                                  f"{', '.join(map(str, variables))}", ranges, hidden))
        if isinstance(node, _KINKED) and moves(node):
            out.append(Obligation(None, "a kink of Min, Max or Abs", ranges, hidden,
                                  (f, tuple(variables), tuple(point.items()) if point else None)))
    inner: list[Obligation] = []
    _collect(f, ranges, hidden, inner)
    strict = {sp.Ge: rel.Gt, sp.Le: rel.Lt}
    for o in inner:
        if o.condition is None or not moves(o.condition):
            out.append(o)
            continue
        c = o.condition
        c = c.replace(lambda x: type(x) in strict, lambda x: strict[type(x)](*x.args))
        if point:
            from grpo_verify.proof.terms import subst

            c = subst(c, point)
        out.append(Obligation(c, o.reason + " (strictly, on a neighbourhood of the point)", o.ranges, o.hidden))
