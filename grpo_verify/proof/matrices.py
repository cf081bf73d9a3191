"""Exact matrix rank, part of the trusted kernel: ``MatrixRank(M)`` in a statement.

A matrix without free symbols gets its exact rank (rationals by elimination over Q; algebraic
entries with every pivot certified nonzero by its minimal polynomial); a symbolic matrix has no single
rank, so ``MatrixRank`` of it evaluates to ``Min(bound, RankAtPoint(M))``, from which only upper bounds
can be proved (SymPy's own ``rank()`` of a symbolic matrix is its *generic* rank: rank [[x, 0], [0, 1]]
would be 2, false at x = 0).
"""

from __future__ import annotations

import sympy as sp
from sympy.polys.matrices import DomainMatrix

_t = sp.Dummy("t")


def exact_zero(e: sp.Basic) -> bool | None:
    """Whether a closed real number is exactly 0: a rational by comparison, an algebraic number by its
    minimal polynomial (it is 0 exactly when that polynomial is $t$); None for anything else (a free
    symbol, a transcendental number, a minimal polynomial SymPy cannot find)."""
    e = sp.sympify(e)
    if e.is_Rational:
        return e == 0
    if e.free_symbols or not e.is_number:
        return None
    try:
        polynomial = sp.minimal_polynomial(e, _t)
    except Exception:  # noqa: BLE001 - NotAlgebraic, or SymPy cannot decide: undecided
        return None
    return sp.expand(polynomial - _t) == 0


def exact_rank(matrix: sp.MatrixBase) -> int | None:
    """The exact rank of a matrix without free symbols, or None if it cannot be decided exactly.

    Rational entries: elimination over $\\mathbb{Q}$. Otherwise Gaussian elimination in which every
    pivot is certified nonzero by ``exact_zero``; if no pivot of a column is certified nonzero while
    some candidate is undecided, the rank is undecided (None). A matrix with free symbols has no
    single rank: None (see ``rank_upper_bound``).
    """
    m = sp.Matrix(matrix)
    if m.free_symbols:
        return None
    if all(e.is_Rational for e in m):
        return m.rank(iszerofunc=lambda e: e == 0)
    rows = [list(m.row(n)) for n in range(m.rows)]
    rank = 0
    for col in range(m.cols):
        pivot, undecided = None, False
        for n in range(rank, len(rows)):
            zero = exact_zero(rows[n][col])
            if zero is False:
                pivot = n
                break
            undecided |= zero is None
        if pivot is None:
            if undecided:
                return None
            continue  # every candidate is exactly 0: no pivot in this column
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        top = rows[rank]
        for n in range(rank + 1, len(rows)):
            factor = rows[n][col] / top[col]
            rows[n] = [a - factor * b for a, b in zip(rows[n], top)]
        rank += 1
    return rank


def rank_upper_bound(matrix: sp.MatrixBase) -> int:
    """An upper bound for the rank of ``matrix`` at every value of its symbols: the number of rows or
    of columns, and, when the entries are polynomials or rational functions with integer or rational
    coefficients in some generators (symbols, or subterms such as $e^{\\theta}$ taken as
    indeterminates), the rank over the field of rational functions in those generators. A minor that
    is the zero rational function is 0 at every point where the entries are defined (whatever values,
    even dependent ones, the generators take), so that generic rank bounds every specialisation."""
    m = sp.Matrix(matrix)
    bound = min(m.shape)
    try:
        dm = DomainMatrix.from_Matrix(m)
    except Exception:  # noqa: BLE001 - no exact domain: the shape bound only
        return bound
    domain = dm.domain
    if domain.is_ZZ or domain.is_QQ or ((domain.is_PolynomialRing or domain.is_FractionField)
                                        and (domain.domain.is_ZZ or domain.domain.is_QQ)):
        bound = min(bound, dm.to_field().rank())
    return bound


class _Rank(sp.Function):
    """A rank: an unknown nonnegative integer, printed as rank(M)."""

    nargs = 1
    is_integer = True
    is_nonnegative = True

    def _matrix(self, hints: dict) -> sp.Basic:
        return self.args[0].doit(**hints) if hints.get("deep", True) else self.args[0]

    def _latex(self, printer, exp=None):
        body = r"\operatorname{rank}\left(%s\right)" % printer._print(self.args[0])
        return body if exp is None else r"%s^{%s}" % (body, exp)


class RankAtPoint(_Rank):
    """The rank of a matrix whose entries may contain symbols, left unevaluated: an unknown
    nonnegative integer. ``doit`` evaluates it only once the matrix has no free symbols and its rank
    is decided exactly (so an exact counterexample search can evaluate it at a point)."""

    def doit(self, **hints):
        arg = self._matrix(hints)
        if isinstance(arg, sp.MatrixBase):
            rank = exact_rank(arg)
            if rank is not None:
                return sp.Integer(rank)
        return self.func(arg)


class MatrixRank(_Rank):
    """$\\operatorname{rank}(M)$ of an explicit matrix.

    ``doit`` returns the exact rank of a matrix without free symbols when ``exact_rank`` decides it.
    Otherwise (symbols in the entries, or a zero test it cannot decide) it returns
    $\\min(\\text{bound}, \\operatorname{rank}(M))$ with ``rank_upper_bound``'s bound and the rank itself
    unevaluated (``RankAtPoint``): an identity, from which only bounds can be proved (a symbolic
    $\\operatorname{rank}\\begin{pmatrix} x & 0 \\\\ 0 & 1 \\end{pmatrix} = 2$ is not provable: it fails at $x = 0$).
    """

    def doit(self, **hints):
        arg = self._matrix(hints)
        if not isinstance(arg, sp.MatrixBase):
            return self.func(arg)
        rank = exact_rank(arg)
        if rank is not None:
            return sp.Integer(rank)
        return sp.Min(rank_upper_bound(arg), RankAtPoint(sp.ImmutableMatrix(arg)))


class SquareMatrix(sp.Function):
    """The $n \\times n$ matrix with entry $(i, j)$ given by ``Lambda((i, j), entry)``, for a size that
    may be symbolic. ``doit`` builds the explicit matrix once the size is a number. Of a symbolic size,
    ``MatrixRank`` stays unevaluated; the kernel's idempotent rule may replace it by the trace."""

    nargs = 2

    @property
    def size(self) -> sp.Basic:
        return self.args[0]

    @property
    def entry(self) -> sp.Lambda:
        return self.args[1]

    @classmethod
    def eval(cls, size, entry):
        if not isinstance(entry, sp.Lambda) or len(entry.variables) != 2:
            raise ValueError("SquareMatrix(size, Lambda((i, j), entry)): the entry is a Lambda of two indices")
        return None

    def doit(self, **hints):
        size = self.size.doit(**hints) if hints.get("deep", True) else self.size
        if size.is_Integer and size >= 0:
            return sp.ImmutableMatrix(int(size), int(size), lambda a, b: self.entry(a + 1, b + 1))
        return self.func(size, self.entry)

    def _latex(self, printer, exp=None):
        i, j = self.entry.variables
        body = r"\left(%s\right)_{%s, %s = 1}^{%s}" % (printer._print(self.entry.expr), printer._print(i),
                                                      printer._print(j), printer._print(self.size))
        return body if exp is None else r"{%s}^{%s}" % (body, exp)  # the body ends in a superscript
