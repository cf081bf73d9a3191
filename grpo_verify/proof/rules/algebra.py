"""Rules for powers, logarithms, Piecewise, Min, Max and Abs. Trusted."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import relations as rel

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
