"""Rules added for the D1 (policy gradient) and D2 (GRPO surrogate) families. Trusted once reviewed."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import subst


@rule("normal")
def higher_derivative_is_the_derivative_of_the_lower_one(e, local):
    """d^n F/dx^n at p = d/dx [d^(n-1) F/dy^(n-1) at y = x] at p, for n >= 2 and one real variable: the n-th
    derivative is the first derivative of the (n-1)-th derivative function (the definition).

    Written on the canonical form Subs(Derivative(F(d), (d, n)), d, p); the inner derivative is kept apart
    by a Subs of its own, since SymPy's constructor merges Derivative(Derivative(F, d), d) back into
    Derivative(F, (d, 2)). Added while derivative_of_higher_order made no progress on a derivative in a
    symbol; since the kernel's rule keeps the inner derivative apart the same way (9acc72f) no derivation
    uses this one, and it can be removed together with its tests in tests/test_kernel_rules.py.
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
