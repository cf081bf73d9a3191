"""Rules for powers, logarithms, Piecewise, Min, Max and Abs. Trusted."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import relations as rel

from grpo_verify.proof.arith import _atomize, ring_zero
from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import integer_valued


@rule("normal")
def exponent_sum_splits(e, local):
    """b**(x + c) = b**x b**c for a number c: when x and c are integers with x, c >= 0 or b != 0; for real
    exponents when b > 0."""
    if not isinstance(e, sp.Pow) or not isinstance(e.exp, sp.Add):
        return None
    b = e.base
    c, x = e.exp.as_coeff_Add()
    if c == 0 or not x.free_symbols:
        return None
    if integer_valued(x) and c.is_Integer:
        ok = (c > 0 and local.prove(rel.Ge(x, 0))) or local.prove(rel.Ne(b, 0))
    else:
        ok = local.prove(rel.Gt(b, 0))
    return b ** x * b ** c if ok else None


@rule("normal")
def log_of_a_product_or_power(e, local):
    """log(a b) = log a + log b for a, b > 0; log(a**x) = x log a for a > 0 and real x."""
    if not isinstance(e, sp.log):
        return None
    u = e.args[0]
    if isinstance(u, sp.Mul) and all(local.prove(rel.Gt(f, 0)) for f in u.args):
        return sp.Add(*[sp.log(f) for f in u.args])
    if isinstance(u, sp.Pow) and local.prove(rel.Gt(u.base, 0)):
        return u.exp * sp.log(u.base)
    return None


@rule("normal")
def piecewise_branch(e, local):
    """Piecewise((a, c1), (b, c2), ...) = a if c1 is proved; = the later branches if c1 is refuted."""
    if not isinstance(e, sp.Piecewise):
        return None
    for n, (branch, cond) in enumerate(e.args):
        if cond is sp.true or local.prove(cond):
            return branch
        if not local.prove(sp.Not(cond)):
            return sp.Piecewise(*e.args[n:]) if n else None
    return None


@rule("normal")
def min_max_abs_of_ordered_arguments(e, local):
    """Min(a, b, ...) = a if a <= every other argument (Max: >=); Abs(a) = a if a >= 0, -a if a <= 0."""
    if isinstance(e, sp.Abs):
        a = e.args[0]
        return a if local.prove(rel.Ge(a, 0)) else -a if local.prove(rel.Le(a, 0)) else None
    if not isinstance(e, (sp.Min, sp.Max)):
        return None
    order = rel.Le if isinstance(e, sp.Min) else rel.Ge
    for a in e.args:
        if all(b is a or local.prove(order(a, b)) for b in e.args):
            return a
    return None


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
