"""Rules added for the D1 (policy gradient) and D2 (GRPO surrogate) families. Trusted once reviewed."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import subst


@rule("normal")
def value_of_a_computed_derivative_at_its_point(e, local):
    """Subs(F(d), d, p) = F(p) when F is no longer a derivative in d (the derivative rules have computed it):
    the value of a function at a point is the function with the point substituted for its variable.

    Side conditions: none beyond the substitution being capture-free (``subst`` refuses otherwise). The
    derivatives of ``F`` in further variables (Subs forms of their own, bound at a deeper level) keep
    their own variables and receive ``p`` only as a value."""
    if not isinstance(e, sp.Subs) or isinstance(e.expr, sp.Derivative):
        return None
    return subst(e.expr, dict(zip(e.variables, e.point)))


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
