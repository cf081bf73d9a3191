"""Rules for finite sums, products and Kronecker deltas. Trusted.

Ranges are ``lo..hi`` with ``hi >= lo - 1`` (an empty range when ``hi = lo - 1``); every rule that
changes a range proves its side condition first. New sums get a plain integer index (a declared sign
belonged to the old index and its range).
"""

from __future__ import annotations

import sympy as sp

from grpo_verify.proof import relations as rel

from grpo_verify.proof.arith import expand_in_atoms, ring_zero
from grpo_verify.proof.definedness import obligations
from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import free_symbols, integer_valued, outermost, subst


def _index():
    return sp.Dummy("j", integer=True)


def _parts(e):
    return outermost(e)


def _split(term, d):
    """(the factors of ``term`` free of ``d``, the others)."""
    const, dep = [], []
    for f in sp.Mul.make_args(term):
        (dep if d in free_symbols(f) else const).append(f)
    return sp.Mul(*const), sp.Mul(*dep)


def _inside(local, d, lo, hi):
    return local.under(ranges=local.ranges + ((d, lo, hi),), depth=local.depth + 1)


def _may_leave(c, local, lo, hi) -> bool:
    """Whether a factor free of the index may be taken out of a sum or product over lo..hi: it is defined
    here, or the range is not empty (inside an empty range it need not be defined: Sum(1/n, (j, 1, n)) at n = 0)."""
    return local.prove(rel.Ge(hi, lo)) or all(
        o.condition is not None and local.ctx.prove(o.condition, local.ranges + o.ranges, local.hidden | o.hidden,
                                                    local.facts) for o in obligations(c))


@rule("normal")
def sum_linearity(e, local):
    """Sum(a f + b g) = a Sum(f) + b Sum(g) for a, b free of the index (the body multiplied out in its atoms)."""
    if not isinstance(e, sp.Sum):
        return None
    f, d, lo, hi = _parts(e)
    terms = sp.Add.make_args(expand_in_atoms(f))
    out = []
    for term in terms:
        const, dep = _split(term, d)
        out.append(const * sp.Sum(dep, (d, lo, hi)) if _may_leave(const, local, lo, hi) else sp.Sum(term, (d, lo, hi)))
    if len(terms) == 1 and out[0] == e:
        return None
    return sp.Add(*out)


@rule("normal")
def sum_of_a_constant(e, local):
    """Sum(c, (j, lo, hi)) = (hi - lo + 1) c for c free of j, when hi >= lo - 1."""
    if not isinstance(e, sp.Sum):
        return None
    f, d, lo, hi = _parts(e)
    if d in free_symbols(f) or not local.prove(rel.Ge(hi, lo - 1)) or not _may_leave(f, local, lo, hi):
        return None
    return (hi - lo + 1) * f


@rule("normal")
def empty_sum_is_zero(e, local):
    """Sum(f, (j, lo, lo - 1)) = 0 and Product(f, (j, lo, lo - 1)) = 1."""
    if not isinstance(e, (sp.Sum, sp.Product)):
        return None
    _f, _d, lo, hi = _parts(e)
    if ring_zero(hi - lo + 1):
        return sp.Integer(0) if isinstance(e, sp.Sum) else sp.Integer(1)
    return None


@rule("normal")
def sum_with_numeric_limits_is_written_out(e, local):
    """A sum or product over lo..hi with integer numbers lo, hi (hi >= lo - 1, at most 2000 terms) is its
    terms written out."""
    if not isinstance(e, (sp.Sum, sp.Product)):
        return None
    f, d, lo, hi = _parts(e)
    if not (lo.is_Integer and hi.is_Integer) or hi < lo - 1 or hi - lo >= 2000:
        return None
    terms = [subst(f, {d: sp.Integer(k)}) for k in range(int(lo), int(hi) + 1)]
    return sp.Add(*terms) if isinstance(e, sp.Sum) else sp.Mul(*terms)


def _matches(value, given, local) -> bool:
    return given is None or ring_zero(value - given)


@rule("directed")
def sum_split_last(e, local, upper=None):
    """Sum(f, (j, lo, hi)) = Sum(f, (j, lo, hi - 1)) + f(hi) when hi >= lo (for sums up to ``upper``)."""
    if not isinstance(e, sp.Sum):
        return None
    f, d, lo, hi = _parts(e)
    if not _matches(hi, upper, local) or not local.prove(rel.Ge(hi, lo)):
        return None
    return sp.Sum(f, (d, lo, hi - 1)) + subst(f, {d: hi})


@rule("directed")
def sum_split_first(e, local, lower=None):
    """Sum(f, (j, lo, hi)) = f(lo) + Sum(f, (j, lo + 1, hi)) when hi >= lo (for sums from ``lower``)."""
    if not isinstance(e, sp.Sum):
        return None
    f, d, lo, hi = _parts(e)
    if not _matches(lo, lower, local) or not local.prove(rel.Ge(hi, lo)):
        return None
    j = _index()
    return subst(f, {d: lo}) + sp.Sum(subst(f, {d: j}), (j, lo + 1, hi))


@rule("directed")
def sum_split_at(e, local, k):
    """Sum(f, (j, lo, hi)) = Sum(f, (j, lo, k)) + Sum(f, (j, k + 1, hi)) for an integer k with
    lo - 1 <= k <= hi."""
    if not isinstance(e, sp.Sum) or not integer_valued(k):
        return None
    f, d, lo, hi = _parts(e)
    if not (local.prove(rel.Ge(k, lo - 1)) and local.prove(rel.Le(k, hi))):
        return None
    j = _index()
    return sp.Sum(subst(f, {d: j}), (j, lo, k)) + sp.Sum(subst(f, {d: j}), (j, k + 1, hi))


@rule("directed")
def sum_shift_index(e, local, shift, lower=None):
    """Sum(f(j), (j, lo, hi)) = Sum(f(j + s), (j, lo - s, hi - s)) for an integer s (sums from ``lower``)."""
    if not isinstance(e, (sp.Sum, sp.Product)) or not integer_valued(shift):
        return None
    f, d, lo, hi = _parts(e)
    if not _matches(lo, lower, local):
        return None
    j = _index()
    return type(e)(subst(f, {d: j + shift}), (j, lo - shift, hi - shift))


@rule("directed")
def sum_telescopes(e, local, g):
    """Sum(g(j + 1) - g(j), (j, lo, hi)) = g(hi + 1) - g(lo), for ``g`` a Lambda of one variable defined on
    lo..hi + 1, when hi >= lo - 1."""
    if not isinstance(e, sp.Sum) or not isinstance(g, sp.Lambda) or len(g.variables) != 1:
        return None
    f, d, lo, hi = _parts(e)
    if not local.prove(rel.Ge(hi, lo - 1)) or not _inside(local, d, lo, hi).equal(f, g(d + 1) - g(d)):
        return None
    k = _index()
    for o in obligations(g(k)):  # g at lo..hi + 1 must be defined
        if o.condition is None or not local.ctx.prove(o.condition, local.ranges + ((k, lo, hi + 1),) + o.ranges,
                                                      local.hidden | o.hidden, local.facts):
            return None
    return g(hi + 1) - g(lo)


@rule("directed")
def sums_swap(e, local):
    """Sum(Sum(f, (i, a, b)), (j, c, d)) = Sum(Sum(f, (j, c, d)), (i, a, b)) when a, b are free of j."""
    if not isinstance(e, sp.Sum) or not isinstance(_parts(e)[0], sp.Sum):
        return None
    inner, j, c, dd = _parts(e)
    f, i, a, b = _parts(inner)
    if j in free_symbols(a) | free_symbols(b):
        return None
    u, w = _index(), _index()
    body = subst(f, {i: u, j: w})
    return sp.Sum(sp.Sum(body, (w, c, dd)), (u, a, b))


def _delta_witness(delta, d):
    """w with delta = KroneckerDelta(d, w), w free of d, or None."""
    u, v = delta.args
    diff = expand_in_atoms(u - v)
    coeff = diff.coeff(d)
    rest = expand_in_atoms(diff - coeff * d)
    if coeff not in (1, -1) or d in free_symbols(rest):
        return None
    return expand_in_atoms(-rest / coeff)


@rule("normal")
def sum_of_a_delta(e, local):
    """Sum(f(j) delta(j, w), (j, lo, hi)) = f(w) if lo <= w <= hi, and 0 if w < lo or w > hi, for an
    integer w free of j (terms without a delta stay in the sum)."""
    if not isinstance(e, sp.Sum):
        return None
    f, d, lo, hi = _parts(e)
    kept, out, changed = [], [], False
    for term in sp.Add.make_args(expand_in_atoms(f)):
        deltas = [x for x in sp.Mul.make_args(term) if isinstance(x, sp.KroneckerDelta) and d in free_symbols(x)]
        w = _delta_witness(deltas[0], d) if deltas else None
        if w is None or not integer_valued(w):
            kept.append(term)
            continue
        rest = sp.Mul(*[x for x in sp.Mul.make_args(term) if x is not deltas[0]])
        if local.prove(sp.And(rel.Ge(w, lo), rel.Le(w, hi))):
            out.append(subst(rest, {d: w}))
        elif not (local.prove(rel.Lt(w, lo)) or local.prove(rel.Gt(w, hi))):
            return None
        changed = True
    if not changed:
        return None
    return sp.Add(*out) + (sp.Sum(sp.Add(*kept), (d, lo, hi)) if kept else 0)


@rule("normal")
def delta_of_equal_or_distinct_values(e, local):
    """delta(u, v) = 1 if u = v (as terms), and 0 if u != v is proved."""
    if not isinstance(e, sp.KroneckerDelta):
        return None
    u, v = e.args
    if ring_zero(u - v):
        return sp.Integer(1)
    if local.prove(rel.Ne(u, v)):
        return sp.Integer(0)
    return None


@rule("normal")
def product_of_a_constant(e, local):
    """Product(c, (j, lo, hi)) = c**(hi - lo + 1) for c free of j, when hi >= lo - 1."""
    if not isinstance(e, sp.Product):
        return None
    f, d, lo, hi = _parts(e)
    if d in free_symbols(f) or not local.prove(rel.Ge(hi, lo - 1)) or not _may_leave(f, local, lo, hi):
        return None
    return f ** (hi - lo + 1)


@rule("normal")
def product_of_factors(e, local):
    """Product(f g) = Product(f) Product(g)."""
    if not isinstance(e, sp.Product) or not isinstance(e.function, sp.Mul):
        return None
    f, d, lo, hi = _parts(e)
    return sp.Mul(*[sp.Product(x, (d, lo, hi)) for x in f.args])


@rule("normal")
def log_of_product_is_sum_of_logs(e, local):
    """log(Product(f, (j, lo, hi))) = Sum(log f, (j, lo, hi)) when f > 0 for every j in lo..hi."""
    if not (isinstance(e, sp.log) and isinstance(e.args[0], sp.Product)):
        return None
    f, d, lo, hi = _parts(e.args[0])
    if not _inside(local, d, lo, hi).prove(rel.Gt(f, 0)):
        return None
    return sp.Sum(sp.log(f), (d, lo, hi))
