"""Fact rules: formulas about the atoms of a step that the arithmetic decision cannot see. Trusted."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import relations as rel

from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import integer_valued, outermost


@rule("fact")
def sum_of_signed_terms(atoms, local):
    """A sum of non-negative (non-positive) terms is >= 0 (<= 0); of positive (negative) terms over a
    non-empty range, > 0 (< 0); a product of positive (non-negative) factors is > 0 (>= 0)."""
    out = []
    for a in atoms:
        if not isinstance(a, (sp.Sum, sp.Product)):
            continue
        f, d, lo, hi = outermost(a)
        inner = local.under(ranges=local.ranges + ((d, lo, hi),), depth=local.depth + 1)
        if isinstance(a, sp.Product):
            if inner.prove(rel.Gt(f, 0)):
                out.append(rel.Gt(a, 0))
            elif inner.prove(rel.Ge(f, 0)):
                out.append(rel.Ge(a, 0))
            continue
        nonempty = local.prove(rel.Ge(hi, lo))
        for strict, weak, rel_s, rel_w in ((rel.Gt, rel.Ge, rel.Gt, rel.Ge), (rel.Lt, rel.Le, rel.Lt, rel.Le)):
            if nonempty and inner.prove(strict(f, 0)):
                out.append(rel_s(a, 0))
                break
            if inner.prove(weak(f, 0)):
                out.append(rel_w(a, 0))
                break
    return out


@rule("fact")
def power_is_monotone(atoms, local):
    """x -> x**n does not decrease on [0, oo) for an integer n >= 0 and increases for n >= 1:
    a >= b >= 0 gives a**n >= b**n, and a > b >= 0 with n >= 1 gives a**n > b**n."""
    powers = [a for a in atoms if isinstance(a, sp.Pow) and not a.exp.is_number and integer_valued(a.exp)]
    out = []
    for a in powers:
        for b in powers:
            if a is not b and a.exp == b.exp:
                n = a.exp
                out.append(sp.Implies(sp.And(rel.Ge(a.base, b.base), rel.Ge(b.base, 0), rel.Ge(n, 0)), rel.Ge(a, b)))
                out.append(sp.Implies(sp.And(rel.Gt(a.base, b.base), rel.Ge(b.base, 0), rel.Ge(n, 1)), rel.Gt(a, b)))
    return out
