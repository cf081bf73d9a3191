"""What an expression needs in order to mean something: exactness, real symbols, definedness.

Part of the trusted kernel. SymPy reads ``x/x`` as 1 and ``Sum(1, (j, 1, n))`` as ``n`` for every
``n`` (Karr's convention); a checker that inherits those readings proves statements that are false
where an expression is undefined. Here every expression of a statement, a step or an assumption is
first *validated* (exact numbers only, every symbol real, no infinities) and then yields its
*definedness obligations*: the conditions under which every subexpression is defined. The kernel
discharges each obligation from the result's assumptions or leaves the step unproved.

Obligations are generated from the expression as built (before any ``doit``), one per
subexpression that can be undefined:

- ``b**e``: ``b != 0`` for a negative integer ``e``; ``b >= 0`` (``b > 0`` when ``e < 0``) for any
  other exponent that is not a non-negative integer -- real powers of negative bases are excluded;
- ``log(a)``: ``a > 0``; ``tan``/``cot``, ``asin``/``acos`` and the like: their poles and domains;
- ``Sum``/``Product`` over ``j = lo..hi``: integer limits, ``hi >= lo - 1`` (no Karr reversal), the
  body's obligations under ``lo <= j <= hi``; an infinite limit is refused (convergence is not decided);
- ``Derivative(f, x)``: ``f`` must be built from functions that are differentiable wherever defined
  (``Min``, ``Max``, ``Abs``, ``sign``, ``Heaviside``, ``Piecewise``, ``floor``... are refused), and for
  ``b**e`` with a non-integer exponent, ``b > 0``;
- ``Heaviside(a)``: ``a != 0`` (its value at 0 is a convention, not mathematics).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.core.function import AppliedUndef

from grpo_verify.proof.matrices import SquareMatrix


class KernelError(ValueError):
    """An input the kernel refuses to reason about (a float, a complex symbol, an unchecked axiom...)."""


@dataclass(frozen=True)
class Obligation:
    """``condition`` must hold wherever the expression is used; ``local`` are the hypotheses that hold
    where the subexpression lives (a summation index's range)."""

    condition: sp.Basic
    reason: str
    local: tuple[sp.Basic, ...] = ()
    # a derivative of a kinked function: (function, variable, point or None); the kernel may still
    # discharge it by rewriting the function with an equation that holds on an open set (see kernel)
    kink: tuple | None = None
    # symbols bound where the subexpression lives (a summation index, a variable substituted by
    # Subs): hypotheses about the free symbols of the same names say nothing about them
    bound: tuple[sp.Symbol, ...] = ()


# Functions defined and differentiable on the whole real line (compositions of them are smooth).
_SMOOTH = (sp.exp, sp.sin, sp.cos, sp.sinh, sp.cosh, sp.tanh, sp.atan)
# Defined everywhere but not differentiable everywhere.
_KINKED = (sp.Min, sp.Max, sp.Abs, sp.sign, sp.Heaviside, sp.Piecewise, sp.floor, sp.ceiling, sp.frac, sp.Mod,
           sp.KroneckerDelta)
_NOT_REAL = (sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I)


def validate(e: sp.Basic, where: str) -> None:
    """Refuse floats, non-real symbols and infinities, naming ``where`` the expression occurs."""
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


def obligations(e: sp.Basic) -> list[Obligation]:
    """The definedness obligations of ``e`` (see the module docstring); raises KernelError for an
    expression that is never admissible (an infinite sum, a derivative of a kinked function)."""
    out: list[Obligation] = []
    _collect(sp.sympify(e), (), out)
    unique, seen = [], set()
    for o in out:
        key = (o.condition, o.local, o.bound)
        if key not in seen and o.condition is not sp.true:
            seen.add(key)
            unique.append(o)
    return unique


def is_free_atom(node: sp.Basic) -> bool:
    """An application of an operator that declares ``free_atom = True`` (a derivation's expectation): its only
    laws are its own evaluation rule and the stated assumptions."""
    return getattr(type(node), "free_atom", False) is True


def _indices_without_declared_sign(e: sp.Basic) -> sp.Basic:
    """``e`` (a Sum or Product) with each index declared positive or non-negative renamed to one whose sign
    comes from its lower limit instead: the index runs over lo, lo + 1, ... (hi >= lo - 1 is an obligation),
    whatever its declaration says (Sum(log(j), (j, 0, R)) reaches log(0) with j declared positive). The new
    index keeps its integrality and reality and prints like the old one; a Dummy is used where a free symbol
    already has that name and domain."""
    renamed = {}
    for v, lo, _hi in (limit for limit in e.limits if len(limit) == 3):
        if not isinstance(v, sp.Symbol) or not any(getattr(v, f"is_{k}") for k in ("positive", "nonnegative")):
            continue
        kept = {k: True for k in ("integer", "real") if getattr(v, f"is_{k}")}
        if lo.is_positive is True:
            kept["positive"] = True
        elif lo.is_nonnegative is True:
            kept["nonnegative"] = True
        plain = sp.Symbol(v.name, **kept)
        if plain != v:
            renamed[v] = plain if plain not in e.free_symbols else sp.Dummy(v.name, **kept)
    return e.xreplace(renamed) if renamed else e


def _collect(e: sp.Basic, local: tuple, out: list[Obligation]) -> None:
    if isinstance(e, sp.MatrixBase):
        for entry in e:
            _collect(entry, local, out)
        return
    if not isinstance(e, sp.Basic) or not e.args:
        return
    if isinstance(e, (sp.Sum, sp.Product)):
        e = _indices_without_declared_sign(e)
        # SymPy lists the innermost limit first (Sum(Sum(f, (i, ..)), (j, ..)) is Sum(f, (i, ..), (j, ..))), so
        # the limits are entered from the last: an inner limit may mention an outer index, which is then bound
        # there and ranges over its own limits
        inner, entered = local, ()
        for limit in reversed(e.limits):
            if len(limit) != 3:
                raise KernelError(f"{e}: a sum or product needs explicit limits (j, lo, hi)")
            v, lo, hi = limit
            here: list[Obligation] = []
            for bound in (lo, hi):
                if bound.has(sp.oo, -sp.oo):
                    raise KernelError(f"{e}: infinite sums and products are not supported (convergence is not "
                                      "decided by the kernel)")
                _collect(bound, inner, here)
                if bound.is_integer is not True:
                    here.append(Obligation(sp.false, f"the limit {bound} of {type(e).__name__} is not known to be an "
                                           "integer", inner))
            if v.is_integer is not True:
                here.append(Obligation(sp.false, f"the index {v} of {type(e).__name__} is not an integer symbol", inner))
            here.append(Obligation(sp.Ge(hi, lo - 1), f"{type(e).__name__} over {v} = {lo}..{hi} needs hi >= lo - 1 "
                                   "(SymPy would reverse it by Karr's convention)", inner))
            out.extend(_with_bound(o, entered) for o in here)
            inner = inner + (sp.Ge(v, lo), sp.Le(v, hi))
            entered = entered + (v,)
        _collect_bound(e.function, inner, out, tuple(e.variables))
        return
    if isinstance(e, sp.Derivative):
        order = sum(count for _v, count in e.variable_count)
        for v, _count in e.variable_count:
            _differentiable(e.expr, v, local, out, None, order)
        _collect(e.expr, local, out)
        return
    if isinstance(e, sp.Subs):
        _subs(e, local, out)
        return
    if isinstance(e, (sp.Integral, sp.Limit)):
        raise KernelError(f"{type(e).__name__} is not supported by the kernel")
    if isinstance(e, SquareMatrix):
        # an n x n matrix needs a natural number n: the rank rules read its trace as a sum over 1..n
        if e.size.is_integer is not True:
            out.append(Obligation(sp.false, f"{e}: the size {e.size} of a square matrix is not known to be an integer",
                                  local))
        out.append(Obligation(sp.Ge(e.size, 0), f"{e}: a square matrix needs a size >= 0", local))
    if isinstance(e, sp.Pow):
        _power(e, local, out)
    elif isinstance(e, sp.log):
        out.append(Obligation(sp.Gt(e.args[0], 0), f"log needs a positive argument: {e}", local))
    elif isinstance(e, (sp.tan, sp.sec)):
        out.append(Obligation(sp.Ne(sp.cos(e.args[0]), 0), f"{e} has poles where cos = 0", local))
    elif isinstance(e, (sp.cot, sp.csc)):
        out.append(Obligation(sp.Ne(sp.sin(e.args[0]), 0), f"{e} has poles where sin = 0", local))
    elif isinstance(e, (sp.asin, sp.acos)):
        a = e.args[0]
        out.append(Obligation(sp.And(sp.Ge(a, -1), sp.Le(a, 1)), f"{e} needs -1 <= argument <= 1", local))
    elif isinstance(e, sp.Heaviside):
        out.append(Obligation(sp.Ne(e.args[0], 0), f"{e}: Heaviside(0) is a convention, not a value", local))
    elif isinstance(e, sp.Piecewise):
        if e.args[-1].cond is not sp.true:
            out.append(Obligation(sp.Or(*[c for _, c in e.args]), f"{e} is undefined where no branch applies",
                                  local))
    elif isinstance(e, sp.factorial):
        n = e.args[0]
        out.append(Obligation(sp.Ge(n, 0) if n.is_integer else sp.false,
                              f"{e} needs a non-negative integer argument", local))
    elif isinstance(e, sp.binomial):
        # the combinatorial binomial: SymPy's simplifier uses identities (symmetry) that fail for n < 0
        n, k = e.args
        out.append(Obligation(sp.Ge(n, 0) if (n.is_integer and k.is_integer) else sp.false,
                              f"{e} needs integer arguments with n >= 0", local))
    elif isinstance(e, sp.Function) and not isinstance(e, (AppliedUndef, *_SMOOTH, *_KINKED)) \
            and type(e).__module__.startswith("sympy."):
        # a SymPy function whose domain the kernel does not know (gamma, zeta, ...): refuse
        out.append(Obligation(sp.false, f"the kernel does not know the domain of {type(e).__name__}", local))
    for a in e.args:
        _collect(a, local, out)


def _subs(e: sp.Subs, local: tuple, out: list[Obligation]) -> None:
    """``Subs(expr, v, p)``: every derivative in ``v`` inside is taken at ``p`` (its function must be
    defined near ``p``, its obligations are required for every ``v``, which is bound there), the
    rest of ``expr`` must be defined at ``p``."""
    mapping = dict(zip(e.variables, e.point))
    if len(mapping) > 1 and any(p.free_symbols & set(mapping) for p in mapping.values()):
        # SymPy substitutes one variable after the other, not simultaneously
        out.append(Obligation(sp.false, f"{e}: a simultaneous substitution whose points mention its variables",
                              local))
        return
    for v, p in mapping.items():  # the point must lie in the bound variable's domain
        for key, rel in (("positive", sp.Gt), ("nonnegative", sp.Ge), ("negative", sp.Lt), ("nonpositive", sp.Le)):
            if getattr(v, f"is_{key}"):
                out.append(Obligation(rel(p, 0), f"{e}: the point {v} = {p} must satisfy {v}'s domain ({key})", local))
        if v.is_integer and p.is_integer is not True:
            out.append(Obligation(sp.false, f"{e}: the integer {v} is substituted by {p}", local))
    taken = sorted((d for d in e.expr.atoms(sp.Derivative) if set(d.variables) & set(mapping)), key=sp.default_sort_key)
    derivatives = {d: sp.Dummy(f"derivative{n}", real=True) for n, d in enumerate(taken)}
    for d in derivatives:
        inner: list[Obligation] = []
        order = sum(count for _v, count in d.variable_count)
        for v, _count in d.variable_count:
            _differentiable(d.expr, v, local, inner, mapping.get(v), order)
        _collect(d.expr, local, inner)
        # a kink condition is about the whole point: the other substituted variables take their values
        out.extend(_with_bound(_at_other_variables(o, mapping) if o.kink else o, tuple(mapping)) for o in inner)
    rest: list[Obligation] = []
    _collect(e.expr.xreplace(derivatives), local, rest)
    back = {dummy: sp.Subs(d, tuple(mapping), tuple(mapping.values())) for d, dummy in derivatives.items()}

    def at_point(x: sp.Basic) -> sp.Basic:
        return x.xreplace(mapping).xreplace(back)

    def reason_at_point(text: str) -> str:  # the reason was written with the placeholders: name the derivatives
        for dummy in sorted(back, key=lambda d: -len(str(d))):  # _derivative10 before _derivative1
            text = text.replace(str(dummy), sp.sstr(back[dummy]))
        return text

    out.extend(Obligation(at_point(o.condition), reason_at_point(o.reason), tuple(at_point(h) for h in o.local),
                          o.kink, o.bound) for o in rest)
    for p in e.point:
        _collect(p, local, out)


def _at_other_variables(o: Obligation, mapping: dict) -> Obligation:
    """A kink condition at the whole point: its own variable is already taken at the point (inside
    its own Subs), the other substituted variables take their values here."""
    others = {v: p for v, p in mapping.items() if v != o.kink[1]}
    return Obligation(o.condition.subs(others), o.reason, o.local, o.kink, o.bound) if others else o


def _with_bound(o: Obligation, variables: tuple) -> Obligation:
    return Obligation(o.condition, o.reason, o.local, o.kink, tuple(dict.fromkeys(o.bound + variables)))


def _collect_bound(e: sp.Basic, local: tuple, out: list[Obligation], variables: tuple) -> None:
    inner: list[Obligation] = []
    _collect(e, local, inner)
    out.extend(_with_bound(o, variables) for o in inner)


def _power(e: sp.Pow, local: tuple, out: list[Obligation]) -> None:
    base, exp = e.args
    if exp.is_integer and exp.is_nonnegative:
        return
    if base.is_number and base.is_positive:
        return
    if exp.is_integer:
        out.append(Obligation(sp.Ne(base, 0), f"{e}: division by {base}", local))
    elif exp.is_negative:
        out.append(Obligation(sp.Gt(base, 0), f"{e}: a negative real power needs a positive base", local))
    elif exp.is_nonnegative:
        out.append(Obligation(sp.Ge(base, 0), f"{e}: a real power needs a non-negative base", local))
    else:
        out.append(Obligation(sp.Gt(base, 0), f"{e}: a real power of unknown sign needs a positive base", local))


def kinks(f: sp.Basic, v: sp.Symbol) -> list[sp.Basic]:
    """The subexpressions of ``f`` that depend on ``v`` through a function with kinks."""
    return [node for node in sp.preorder_traversal(f) if isinstance(node, _KINKED) and node.has(v)]


def kink_condition(node: sp.Basic, v: sp.Symbol, point: sp.Basic) -> sp.Basic:
    """When ``node`` (a Min, Max or Abs) is differentiable in ``v`` at ``point``.

    ``|h|`` is differentiable at ``p`` if ``h(p) != 0``, or if ``h(p) = 0`` and ``h'(p) = 0`` (then
    ``|h| = o(|v - p|)``, derivative 0); ``min(a, b) = (a + b - |a - b|)/2`` and ``max`` likewise, with
    ``h = a - b``. Under this condition SymPy's derivative formulas give the true value at ``p``:
    ``sign(h) h'`` is ``0`` there, and ``a' H(b - a) + b' H(a - b)`` is ``a'`` at a tie with
    ``a' = b'`` whatever ``H(0)``'s value ``c`` is, provided ``2c = 1`` (SymPy's ``H(0) = 1/2``).
    """
    if isinstance(node, sp.Abs):
        h = node.args[0]
    elif isinstance(node, (sp.Min, sp.Max)) and len(node.args) == 2:
        h = node.args[0] - node.args[1]
    else:
        return sp.false
    value = h.subs(v, point)
    slope = sp.Subs(sp.Derivative(h, v), v, point)
    return sp.Or(sp.Ne(value, 0), sp.And(sp.Eq(value, 0), sp.Eq(slope, 0)))


def _kinks_in_scope(f: sp.Basic, v: sp.Symbol, local: tuple, bound: tuple = ()):
    """The kinked subexpressions of ``f`` depending on ``v``, each with the hypotheses and the bound
    variables of the sums and products around it."""
    if not isinstance(f, sp.Basic) or not f.has(v):
        return
    if isinstance(f, _KINKED):
        yield f, local, bound
    if isinstance(f, (sp.Sum, sp.Product)):
        inner_local, inner_bound = local, bound
        for limit in f.limits:
            if len(limit) == 3:
                j, lo, hi = limit
                inner_local = inner_local + (sp.Ge(j, lo), sp.Le(j, hi))
                inner_bound = inner_bound + (j,)
        yield from _kinks_in_scope(f.function, v, inner_local, inner_bound)
        return
    for a in f.args:
        yield from _kinks_in_scope(a, v, local, bound)


def _differentiable(f: sp.Basic, v: sp.Symbol, local: tuple, out: list[Obligation], point,
                    order: int = 1) -> None:
    """Differentiability of ``f`` in ``v`` wherever ``f`` is defined (at ``point`` for a first
    derivative evaluated there), by structure."""
    for node in sp.preorder_traversal(f):
        if is_free_atom(node):
            # an expectation's dependence on v is through the distribution, which its argument does not show:
            # SymPy would differentiate the argument (or call the derivative 0), never the distribution
            out.append(Obligation(sp.false, f"d/d{v} of {node}: the kernel does not differentiate an expectation",
                                  local))
            return
    for node, node_local, node_bound in _kinks_in_scope(f, v, local):
        if point is not None and order == 1 and sp.Heaviside(0) == sp.Rational(1, 2):
            condition = kink_condition(node, v, point)
            reason = (f"d/d{v} at {v} = {point} of {node}: differentiable only if its kink is not there or "
                      "both sides have the same slope there")
        else:
            condition = sp.false
            reason = (f"d/d{v} of {node}: {type(node).__name__} is not differentiable everywhere (the rule at a "
                      "point covers first derivatives only); cite an equation that makes it smooth on an open set")
        out.append(Obligation(condition, reason, node_local, kink=(f, v, point, order), bound=node_bound))
    for node in sp.preorder_traversal(f):
        if not isinstance(node, sp.Basic) or not node.has(v):
            continue
        if isinstance(node, sp.Pow):
            base, exp = node.args
            if not (exp.is_integer and exp.is_nonnegative) and not exp.is_integer and base.has(v):
                out.append(Obligation(sp.Gt(base, 0), f"d/d{v} of {node} needs a positive base", local))
