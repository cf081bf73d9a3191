"""Rules added for the D1 (policy gradient) and D2 (GRPO surrogate) families. Trusted once reviewed."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import subst


@rule("normal")
def product_distributes_over_a_sum(e, local):
    """a (b + c) = a b + a c: a product with a sum among its factors is the sum of the products of the other
    factors with each term (distributivity; no side condition).

    Rebuilding each product lets SymPy's construction merge equal exponentials, exp(u) exp(u) = exp(2 u) and
    exp(u) exp(-u) = 1, which the ring normal form cannot see once exp(u) and exp(2 u) are separate atoms."""
    if not isinstance(e, sp.Mul):
        return None
    for n, f in enumerate(e.args):
        if isinstance(f, sp.Add):
            rest = e.args[:n] + e.args[n + 1:]
            return sp.Add(*[sp.Mul(*rest, term) for term in f.args])
    return None


@rule("normal")
def higher_derivative_is_the_derivative_of_the_lower_one(e, local):
    """d^n F/dx^n at p = d/dx [d^(n-1) F/dy^(n-1) at y = x] at p, for n >= 2 and one real variable: the n-th
    derivative is the first derivative of the (n-1)-th derivative function (the definition).

    Written on the canonical form Subs(Derivative(F(d), (d, n)), d, p); the inner derivative is kept apart
    by a Subs of its own, since SymPy's constructor merges Derivative(Derivative(F, d), d) back into
    Derivative(F, (d, 2)) (so derivative_of_higher_order cannot make progress on a derivative in a symbol).
    No side condition: differentiability of order n near p is the definedness obligation of the input."""
    if not (isinstance(e, sp.Subs) and isinstance(e.expr, sp.Derivative) and len(e.variables) == 1):
        return None
    inner = e.expr
    d, p = e.variables[0], e.point[0]
    if len(inner.variable_count) != 1:
        return None
    v, n = inner.variable_count[0]
    if v != d or not (n.is_Integer and n >= 2):
        return None
    y = sp.Dummy("y", real=True)
    lower = sp.Subs(sp.Derivative(subst(inner.expr, {d: y}), (y, n - 1)), y, d)
    return sp.Subs(sp.Derivative(lower, d), d, p)
