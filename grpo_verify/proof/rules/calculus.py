"""Differentiation rules, in real variables only. Trusted.

A derivative in a symbol is canonically ``Subs(Derivative(F(d), d), d, p)``: the rules below act on the
inner ``Derivative(F(d), d)``, whose variable ``d`` is bound and ranges over a neighbourhood of ``p``; a
derivative in an indexed variable ``theta_b`` is taken at the current point. Functions declared with
``Function(...)`` are smooth; a derivative of one in its own argument stays as it is (an atom).
"""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import relations as rel
from grpo_verify.proof.operators import Expectation
from sympy.core.function import AppliedUndef

from grpo_verify.proof.rules import normalize, rule
from grpo_verify.proof.terms import canon, free_symbols, integer_valued, outermost, subst


def _variable(e):
    """The variable of a first-order derivative in one variable, or None."""
    if not isinstance(e, sp.Derivative) or len(e.variable_count) != 1:
        return None
    v, n = e.variable_count[0]
    return v if n == 1 else None


def depends(x, v) -> bool:
    """Whether ``x`` may vary with ``v``: an expectation always may (its distribution can depend on it)."""
    if any(isinstance(n, Expectation) for n in sp.preorder_traversal(x)):
        return True
    if isinstance(v, sp.Indexed):
        return any(isinstance(n, sp.Indexed) and n.base == v.base for n in sp.preorder_traversal(x))
    return v in free_symbols(x)


def _d(x, v):
    return sp.Derivative(x, v)


@rule("normal")
def derivative_of_higher_order(e, local):
    """d^n f / dx^n = d/dx (d^(n-1) f / dx^(n-1)); a derivative in several variables, one at a time (the inner
    derivative as a value at the point, so that it is not merged back)."""
    if not isinstance(e, sp.Derivative) or _variable(e) is not None:
        return None
    pairs = list(e.variable_count)
    if not all(isinstance(v, sp.Symbol) for v, _ in pairs):
        return None
    *rest, (v, n) = pairs
    counts = rest + ([(v, n - 1)] if n > 1 else [])
    variables = list(dict.fromkeys(x for x, _ in counts))
    fresh = {x: sp.Dummy(real=True) for x in variables}
    inner = sp.Subs(sp.Derivative(e.expr.xreplace(fresh), *[(fresh[x], c) for x, c in counts]),
                    tuple(fresh[x] for x in variables), tuple(variables))
    return sp.Derivative(inner, v)


@rule("normal")
def derivative_of_a_constant(e, local):
    """d c / dx = 0 for c free of x."""
    v = _variable(e)
    return sp.Integer(0) if v is not None and not depends(e.expr, v) else None


@rule("normal")
def derivative_of_the_variable(e, local):
    """dx/dx = 1; d theta_c / d theta_b = delta(c, b)."""
    v = _variable(e)
    if v is None:
        return None
    if e.expr == v:
        return sp.Integer(1)
    if isinstance(v, sp.Indexed) and isinstance(e.expr, sp.Indexed) and e.expr.base == v.base:
        return sp.Mul(*[sp.KroneckerDelta(a, b) for a, b in zip(e.expr.indices, v.indices)])
    return None


@rule("normal")
def derivative_of_a_sum(e, local):
    """(f + g)' = f' + g'; (Sum_j f_j)' = Sum_j f_j' over a range free of the variable."""
    v = _variable(e)
    if v is None:
        return None
    f = e.expr
    if isinstance(f, sp.Add):
        return sp.Add(*[_d(a, v) for a in f.args])
    if isinstance(f, sp.Sum):
        body, j, lo, hi = outermost(f)
        if not (depends(lo, v) or depends(hi, v)):
            return sp.Sum(_d(body, v), (j, lo, hi))
    return None


@rule("normal")
def derivative_of_a_product(e, local):
    """(f g)' = f' g + f g'."""
    v = _variable(e)
    if v is None or not isinstance(e.expr, sp.Mul):
        return None
    args = e.expr.args
    return sp.Add(*[sp.Mul(*args[:n], _d(a, v), *args[n + 1:]) for n, a in enumerate(args)])


@rule("normal")
def derivative_of_a_power(e, local):
    """(b**c)' = c b**(c - 1) b' for c free of x, when b != 0 or c is an integer >= 1; (c**u)' = c**u log(c) u'
    for c free of x and c > 0; (b**u)' = b**u (u' log b + u b'/b) otherwise, for b > 0."""
    v = _variable(e)
    if v is None or not isinstance(e.expr, sp.Pow):
        return None
    b, c = e.expr.args
    if not depends(c, v):
        if (c.is_Integer and c >= 1) or (integer_valued(c) and local.prove(rel.Ge(c, 1))) or local.prove(rel.Ne(b, 0)):
            return c * b ** (c - 1) * _d(b, v)
        return None
    if not local.prove(rel.Gt(b, 0)):
        return None
    if not depends(b, v):
        return e.expr * sp.log(b) * _d(c, v)
    return e.expr * (_d(c, v) * sp.log(b) + c * _d(b, v) / b)


@rule("normal")
def derivative_of_exp_and_log(e, local):
    """exp(u)' = exp(u) u'; log(u)' = u'/u."""
    v = _variable(e)
    if v is None:
        return None
    if isinstance(e.expr, sp.exp):
        return e.expr * _d(e.expr.args[0], v)
    if isinstance(e.expr, sp.log):
        return _d(e.expr.args[0], v) / e.expr.args[0]
    return None


@rule("normal")
def chain_rule_for_functions(e, local):
    """d f(u_1, .., u_k)/dx = sum_k (d f/d y_k at y = u) u_k' for a declared function f; nothing to do
    when every argument that moves is the variable itself."""
    v = _variable(e)
    if v is None or not isinstance(e.expr, AppliedUndef) or isinstance(v, sp.Indexed):
        return None
    f = e.expr
    moving = [n for n, a in enumerate(f.args) if depends(a, v)]
    if all(f.args[n] == v for n in moving) and len(moving) <= 1:
        return None
    out = []
    for n in moving:
        y = sp.Dummy("y", real=True)
        args = list(f.args)
        args[n] = y
        out.append(sp.Subs(sp.Derivative(f.func(*args), y), y, f.args[n]) * _d(f.args[n], v))
    return sp.Add(*out)


def resolve_kinks(f, d, p, local):
    """``f`` with each Min/Max (and Abs, as Max(u, -u)) moving with ``d`` replaced by the argument that is its
    minimum (maximum) near ``d = p``: one whose value at ``p`` is below every other's, or equal to it with an
    equal slope at ``p`` (then the two agree to first order, and so does the Min); None if some kink is not
    resolved."""
    for _ in range(20):
        kinks = [n for n in sp.postorder_traversal(f) if isinstance(n, (sp.Min, sp.Max, sp.Abs)) and depends(n, d)]
        if not kinks:
            return f
        m = kinks[0]
        if any(isinstance(x, (sp.Min, sp.Max, sp.Abs)) and depends(x, d) for a in m.args
               for x in sp.preorder_traversal(a)):
            return None
        args = (m.args[0], -m.args[0]) if isinstance(m, sp.Abs) else m.args  # |u| = Max(u, -u)
        better = rel.Lt if isinstance(m, sp.Min) else rel.Gt
        values = [subst(a, {d: p}) for a in args]
        slopes = [normalize(canon(sp.Subs(sp.Derivative(a, d), d, p), local.depth), local) for a in args]
        chosen = None
        for n, a in enumerate(args):
            if all(k == n or local.prove(better(values[n], values[k])) or (
                    local.equal(values[n], values[k]) and local.equal(slopes[n], slopes[k]))
                    for k in range(len(args))):
                chosen = a
                break
        if chosen is None:
            return None
        f = f.xreplace({m: chosen})
    return None


@rule("normal")
def derivative_at_a_kink(e, local):
    """At a point p where each Min/Max of f(x) has one argument strictly smallest (largest), or tied ones with
    equal slopes, f is differentiable at p and f'(p) is the derivative with that argument in its place."""
    if not (isinstance(e, sp.Subs) and isinstance(e.expr, sp.Derivative) and len(e.variables) == 1):
        return None
    inner = e.expr
    d, p = e.variables[0], e.point[0]
    if _variable(inner) != d or not any(isinstance(n, (sp.Min, sp.Max, sp.Abs))
                                        for n in sp.preorder_traversal(inner.expr)):
        return None
    resolved = resolve_kinks(inner.expr, d, p, local.under(depth=local.depth))
    if resolved is None or resolved == inner.expr:
        return None
    return sp.Subs(sp.Derivative(resolved, d), d, p)


DIFFERENTIATION = (derivative_of_higher_order, derivative_of_a_constant, derivative_of_the_variable,
                   derivative_of_a_sum, derivative_of_a_product, derivative_of_a_power, derivative_of_exp_and_log,
                   chain_rule_for_functions)
