"""Rules added for the D3 (credit collapse) and D7 (rank structure) families. Trusted once reviewed."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof.arith import _atomize, ring_zero
from grpo_verify.proof.rules import rule


def _factored_in_atoms(e):
    """``e`` as one factored fraction of polynomials in its atoms (SymPy's ``factor``; a proposal only), the
    atoms untouched, or None where ``e`` has a rational power (whose atom is tied to its base)."""
    table, roots = {}, {}
    x = _atomize(sp.sympify(e), table, roots)
    if roots:
        return None
    back = {v: k for k, v in table.items()}
    return sp.factor(sp.together(x)).xreplace(back)


@rule("normal")
def logarithm_of_a_sum_as_one_fraction(e, local):
    """log(u) = log(v) for a sum u and v = p_1^a_1 ... p_n^a_n (integer a_k) its factored form as one fraction
    with a denominator that is not a number, when u - v is 0 as a rational function of the atoms (checked by
    the ring normal form): equal arguments have equal logarithms.

    Why it is needed: the ring normal form sees log(u) as an atom, so log(1 - 1/(1 + y)) and log(y/(1 + y))
    are unrelated for it, and no rule rewrites the argument of a logarithm that is a sum (the logarithm laws
    act on products and powers). Written as a product, the argument is then split by
    ``log_of_a_product_or_power`` where its factors are proved positive.

    Side conditions: u - v is 0 in the ring normal form (SymPy's ``factor`` only proposes v); v is not itself
    a sum and has a denominator that is not a number (the rule makes progress and terminates: v is a product
    or a power, which it never rewrites again; a sum without denominators, log(1 - x), is left alone).
    Definedness: written as A/B with the product B of its denominators, u is defined exactly where its
    denominators are nonzero, so B != 0 there; v = p/q in lowest terms with p B = q A, so q divides B and
    q != 0 wherever u is defined: v is defined and equal to u > 0 wherever log(u) is."""
    if not isinstance(e, sp.log) or not isinstance(e.args[0], sp.Add):
        return None
    u = e.args[0]
    v = _factored_in_atoms(u)
    if v is None or isinstance(v, sp.Add) or v == u or sp.fraction(v)[1].is_number or not ring_zero(u - v):
        return None
    return sp.log(v)
