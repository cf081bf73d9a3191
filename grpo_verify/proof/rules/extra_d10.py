"""Rules added for the D10 (credit assignment) family. Trusted once reviewed."""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import relations as rel
from grpo_verify.proof.arith import expand_in_atoms
from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import integer_valued


def _base_exp(f):
    """(base, exponent) of a factor of a monomial: ``b**x`` for a power, ``f**1`` for anything else."""
    if isinstance(f, sp.Pow):
        return f.base, f.exp
    return f, sp.Integer(1)


@rule("normal")
def powers_of_a_common_base_multiply(e, local):
    """b**u b**v = b**(u + v): a term with a power of symbolic exponent, multiplied out in its atoms, with the
    powers of a common base b in each monomial combined into one power whose exponent is the sum of theirs
    (b itself counts as b**1), when b > 0 (any real exponents) or b != 0 and every exponent combined is an
    integer.

    Why it is needed: SymPy writes (b**x)**n as b**(n x) and b**x b**x as b**(2 x) as soon as it builds them,
    while the ring normal form sees b**x, b**(2 x), b**(x + 1), b**(-x) as unrelated atoms, so no identity that
    needs b**x b**y = b**(x + y) (or that squares a sum containing b**x) can be decided otherwise. Multiplying
    out first makes the normal form independent of how a side groups its factors: a side becomes a sum of
    monomials, each with at most one power of each base so combined.

    Side conditions, proved before a base is combined: b > 0 (then b**u b**v = b**(u+v) for all real u, v), or
    b != 0 with every exponent integer-valued (the law of exponents over the integers). Multiplying out is a
    ring identity in the atoms (``expand_in_atoms``)."""
    if not isinstance(e, (sp.Add, sp.Mul, sp.Pow)):
        return None
    expanded = expand_in_atoms(e)
    symbolic = [n for n in sp.Add.make_args(expanded) for f in sp.Mul.make_args(n)
                if isinstance(f, sp.Pow) and not f.exp.is_number]
    if not symbolic:
        return None
    monomials = []
    for m in sp.Add.make_args(expanded):
        groups: dict = {}
        order = []
        for f in sp.Mul.make_args(m):
            if f.is_number:
                groups.setdefault(None, []).append(f)
                continue
            base, x = _base_exp(f)
            if base not in groups:
                order.append(base)
            groups.setdefault(base, []).append(x)
        factors = list(groups.get(None, []))
        for base in order:
            exps = groups[base]
            if len(exps) > 1 and any(not x.is_number for x in exps) and (
                    local.prove(rel.Gt(base, 0)) or (all(integer_valued(x) for x in exps)
                                                    and local.prove(rel.Ne(base, 0)))):
                factors.append(sp.Pow(base, sp.expand(sp.Add(*exps))))
            else:
                factors += [sp.Pow(base, x) for x in exps]
        monomials.append(sp.Mul(*factors))
    out = sp.Add(*monomials)
    if out == e:
        return None
    return out
