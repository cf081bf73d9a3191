"""Rank and determinant rules. Trusted.

The rank of an explicit matrix is ``r`` exactly when some ``r x r`` minor is nonzero and every
``(r + 1) x (r + 1)`` minor containing it vanishes (the bordering theorem). The minor to try is proposed
from a generic elimination (untrusted); the kernel proves the minor nonzero in the step's context and the
bordering minors zero, each determinant by the division-free Berkowitz expansion (ring arithmetic).
"""

from __future__ import annotations

import itertools
import random

import sympy as sp

from grpo_verify.proof import relations as rel

from grpo_verify.proof.arith import ring_zero
from grpo_verify.proof.operators import MatrixRank, SquareMatrix
from grpo_verify.proof.rules import normalize, rule


def _det(m: sp.Matrix):
    return sp.Matrix(m).det(method="berkowitz") if m.rows else sp.Integer(1)


def _entries(m, local) -> sp.Matrix:
    return sp.Matrix(m.rows, m.cols, [normalize(x, local) for x in m])


def _proposal(m: sp.Matrix):
    """Rows and columns of a maximal nonzero minor at a random rational point (untrusted: only a proposal)."""
    rng = random.Random(0)
    point = {s: sp.Rational(rng.randint(1, 97), rng.randint(1, 13)) for s in m.free_symbols}
    try:
        numeric = m.xreplace(point)
        numeric = sp.Matrix(numeric.rows, numeric.cols, [sp.nsimplify(x) if not x.is_Rational else x
                                                          for x in numeric])
        _, cols = numeric.rref()
        _, rows = numeric.T.rref()
    except Exception:  # noqa: BLE001
        return None
    return list(rows), list(cols)


@rule("normal")
def rank_of_an_explicit_matrix(e, local):
    """rank(M) = r when an r x r minor is proved nonzero and every (r + 1) x (r + 1) minor containing it is 0."""
    if not isinstance(e, MatrixRank) or not isinstance(e.args[0], sp.MatrixBase):
        return None
    m = _entries(e.args[0], local)
    proposal = _proposal(m)
    if proposal is None:
        return None
    rows, cols = proposal
    if len(rows) != len(cols):
        return None
    if rows and not local.prove(rel.Ne(_det(m.extract(rows, cols)), 0)):
        return None
    for extra_row in (x for x in range(m.rows) if x not in rows):
        for extra_col in (x for x in range(m.cols) if x not in cols):
            minor = _det(m.extract(rows + [extra_row], cols + [extra_col]))
            if not (ring_zero(minor) or local.prove(rel.Eq(minor, 0))):
                return None
    return sp.Integer(len(rows))


@rule("normal")
def determinant_of_an_explicit_matrix(e, local):
    """det(M) of an explicit matrix is its Berkowitz expansion (sums of products of entries)."""
    if not isinstance(e, sp.Determinant) or not isinstance(e.args[0], sp.MatrixBase):
        return None
    return _det(_entries(e.args[0], local))


@rule("fact")
def rank_is_at_most_a_vanishing_minor_size(atoms, local):
    """rank(M) <= min(rows, cols); rank(M) <= r when every (r + 1) x (r + 1) minor of M is 0."""
    out = []
    for a in atoms:
        if not isinstance(a, MatrixRank) or not isinstance(a.args[0], sp.MatrixBase):
            continue
        m = _entries(a.args[0], local)
        out.append(rel.Le(a, min(m.shape)))
        proposal = _proposal(m)
        if proposal is None:
            continue
        r = len(proposal[1])
        minors = [(rs, cs) for rs in itertools.combinations(range(m.rows), r + 1)
                  for cs in itertools.combinations(range(m.cols), r + 1)]
        if r < min(m.shape) and len(minors) <= 5000 and all(ring_zero(_det(m.extract(list(rs), list(cs))))
                                                             for rs, cs in minors):
            out.append(rel.Le(a, r))
    return out


def _generic_entry(matrix: SquareMatrix, local):
    n, entry = matrix.args
    i, j, l = (sp.Dummy(x, integer=True) for x in "ijl")
    inside = local.under(ranges=local.ranges + ((i, 1, n), (j, 1, n)))
    return n, entry, i, j, l, inside


@rule("normal")
def rank_of_an_idempotent_is_its_trace(e, local):
    """rank(P) = trace(P) for an n x n matrix with P^2 = P, shown entry by entry for 1 <= i, j <= n (its
    eigenvalues are 0 and 1 and it is diagonalisable)."""
    if not isinstance(e, MatrixRank) or not isinstance(e.args[0], SquareMatrix):
        return None
    n, entry, i, j, l, inside = _generic_entry(e.args[0], local)
    if not inside.equal(sp.Sum(entry(i, l) * entry(l, j), (l, 1, n)), entry(i, j)):
        return None
    t = sp.Dummy("t", integer=True)
    return sp.Sum(entry(t, t), (t, 1, n))


@rule("normal")
def rank_of_a_triangular_matrix(e, local):
    """rank(T) = n for an n x n matrix whose entries above (or below) the diagonal are 0 and whose diagonal
    entries are nonzero (its determinant is the product of the diagonal)."""
    if not isinstance(e, MatrixRank) or not isinstance(e.args[0], SquareMatrix):
        return None
    n, entry, i, j, _l, inside = _generic_entry(e.args[0], local)
    diagonal = local.under(ranges=local.ranges + ((i, 1, n),))
    if not diagonal.prove(rel.Ne(entry(i, i), 0)):
        return None
    for side in (rel.Lt(i, j), rel.Gt(i, j)):
        zero = entry(i, j)
        here = inside.under(ranges=inside.ranges)
        if here.ctx.prove(sp.Implies(side, rel.Eq(zero, 0)), here.ranges, here.hidden) or ring_zero(zero):
            return n
    return None

