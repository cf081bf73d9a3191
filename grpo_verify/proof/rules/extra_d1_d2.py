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
