"""Rules added for the D8 (optimal baseline) and D9 (group size) families. Trusted once reviewed."""

from __future__ import annotations

import itertools

import sympy as sp

from grpo_verify.proof import relations as rel
from grpo_verify.proof.rules import rule


@rule("normal")
def exp_of_a_logarithm(e, local):
    """exp(log u) = u for u > 0, and exp(0) = 1.

    Why it is needed: a side written unevaluated (``as_written``), such as the softmax of the logits
    (log 2, 0, 0), keeps exp(log 2) and exp(0) as they are; the ring normal form sees them as opaque atoms
    and the closed-number sign test cannot decide an equation between them and rationals (SymPy's
    minimal polynomial refuses exp(log 2)). Side condition: u > 0, proved where the node sits (it is the
    definedness condition of log u, so the input is defined exactly where the output is)."""
    if not isinstance(e, sp.exp):
        return None
    x = e.args[0]
    if x.is_Number and x == 0:
        return sp.Integer(1)
    if isinstance(x, sp.log) and local.prove(rel.Gt(x.args[0], 0)):
        return x.args[0]
    return None


_MAX_PRODUCTS = 4096


@rule("normal")
def power_of_a_sum_is_multiplied_out(e, local):
    """(a_1 + ... + a_k)**n = sum over (i_1, ..., i_n) of a_(i_1) ... a_(i_n) for an integer n >= 2 (repeated
    distributivity; no side condition). At most 4096 products (otherwise the rule does not apply).

    Why it is needed: each product is built by SymPy, which merges equal exponentials as it builds it
    (exp(u) exp(u) = exp(2 u)), while the ring normal form sees exp(u) and exp(2 u) as unrelated atoms. So
    (1 - e^theta/Z)**2 cannot be compared with a side that SymPy wrote as 1 - 2 e^theta/Z + e^(2 theta)/Z**2
    (the squared norm of a softmax score) unless the square is multiplied out first. It is the integer-power
    companion of D1's product_distributes_over_a_sum."""
    if not (isinstance(e, sp.Pow) and isinstance(e.base, sp.Add) and e.exp.is_Integer and e.exp >= 2):
        return None
    terms, n = e.base.args, int(e.exp)
    if len(terms) ** n > _MAX_PRODUCTS:
        return None
    return sp.Add(*[sp.Mul(*combo) for combo in itertools.product(terms, repeat=n)])
