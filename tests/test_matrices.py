"""The exact-rank primitives of the proof kernel (grpo_verify/proof/matrices.py), value by value:
explicit matrices built from a SquareMatrix, the refusals of malformed ones, ranks at points, and
their LaTeX (each expected value written out by hand)."""

from __future__ import annotations

import pytest
import sympy as sp

from grpo_verify.proof.matrices import MatrixRank, RankAtPoint, SquareMatrix, exact_rank, exact_zero, rank_upper_bound

R = sp.Symbol("R", integer=True, positive=True)
i, j = sp.symbols("i j", integer=True, positive=True)
x = sp.Symbol("x", real=True)


@pytest.fixture(autouse=True)
def fresh_sympy_cache():
    """SymPy caches Function objects by their arguments: a SquareMatrix built before (by another test, or
    by mutmut's unmutated pass) would be returned without its eval running again."""
    sp.core.cache.clear_cache()
    yield


def test_a_square_matrix_of_numeric_size_is_built_entry_by_entry_from_one():
    built = SquareMatrix(3, sp.Lambda((i, j), i + 10 * j)).doit()
    assert built == sp.ImmutableMatrix([[11, 21, 31], [12, 22, 32], [13, 23, 33]])
    assert isinstance(built, sp.ImmutableMatrix)


def test_a_square_matrix_of_size_zero_is_empty_and_a_negative_size_stays_unbuilt():
    assert SquareMatrix(0, sp.Lambda((i, j), i)).doit().shape == (0, 0)
    negative = SquareMatrix(-1, sp.Lambda((i, j), i))
    assert negative.doit() == negative


def test_a_square_matrix_of_symbolic_size_stays_as_it_is():
    matrix = SquareMatrix(R, sp.Lambda((i, j), sp.KroneckerDelta(i, j)))
    assert matrix.doit() == matrix and matrix.size == R and matrix.entry == sp.Lambda((i, j), sp.KroneckerDelta(i, j))


def test_the_size_is_evaluated_first_only_when_deep():
    k = sp.Symbol("k", integer=True)
    size = sp.Sum(1, (k, 1, 2))  # 2 once evaluated
    matrix = SquareMatrix(size, sp.Lambda((i, j), i * j))
    assert matrix.doit() == sp.ImmutableMatrix([[1, 2], [2, 4]])
    assert matrix.doit(deep=False) == matrix


@pytest.mark.parametrize("entry", [i + j, sp.Lambda(i, i), sp.Lambda((i, j, R), i)])
def test_the_entry_must_be_a_lambda_of_two_indices(entry):
    with pytest.raises(ValueError, match=r"^SquareMatrix\(size, Lambda\(\(i, j\), entry\)\): the entry is a Lambda "
                                         r"of two indices$"):
        SquareMatrix(R, entry)


def test_latex_of_a_square_matrix_and_of_its_power():
    matrix = SquareMatrix(R, sp.Lambda((i, j), sp.KroneckerDelta(i, j)))
    assert sp.latex(matrix) == r"\left(\delta_{i j}\right)_{i, j = 1}^{R}"
    assert sp.latex(matrix ** 2) == r"{\left(\delta_{i j}\right)_{i, j = 1}^{R}}^{2}"  # no double superscript


def test_latex_of_a_rank_and_of_its_power():
    matrix = SquareMatrix(R, sp.Lambda((i, j), sp.KroneckerDelta(i, j)))
    assert sp.latex(MatrixRank(matrix)) == r"\operatorname{rank}\left(\left(\delta_{i j}\right)_{i, j = 1}^{R}\right)"
    assert sp.latex(MatrixRank(matrix) ** 2) == \
        r"\operatorname{rank}\left(\left(\delta_{i j}\right)_{i, j = 1}^{R}\right)^{2}"
    assert sp.latex(RankAtPoint(sp.ImmutableMatrix([[1]]))) == \
        r"\operatorname{rank}\left(\left[\begin{matrix}1\end{matrix}\right]\right)"


def test_rank_of_a_square_matrix_of_numeric_size_is_exact():
    assert MatrixRank(SquareMatrix(4, sp.Lambda((i, j), sp.KroneckerDelta(i, j) - sp.Rational(1, 4)))).doit() == 3
    assert MatrixRank(SquareMatrix(R, sp.Lambda((i, j), 1))).doit() == MatrixRank(SquareMatrix(R, sp.Lambda((i, j), 1)))


def test_the_matrix_inside_a_rank_is_evaluated_only_when_deep():
    k = sp.Symbol("k", integer=True)
    inner = SquareMatrix(sp.Sum(1, (k, 1, 2)), sp.Lambda((i, j), i * j))  # [[1, 2], [2, 4]]: rank 1
    assert MatrixRank(inner).doit() == 1
    assert MatrixRank(inner).doit(deep=False) == MatrixRank(inner)


def test_rank_at_a_point_is_the_exact_rank_once_the_entries_are_numbers():
    at_one = RankAtPoint(sp.ImmutableMatrix([[1, 0], [0, 1]]))
    assert at_one.doit() == 2 and isinstance(at_one.doit(), sp.Integer)
    symbolic = RankAtPoint(sp.ImmutableMatrix([[x, 0], [0, 1]]))
    assert symbolic.doit() == symbolic


def test_exact_zero_decides_numbers_and_refuses_everything_else():
    assert exact_zero(sp.Integer(0)) is True and exact_zero(sp.Rational(1, 3)) is False
    assert exact_zero(sp.sqrt(3 + 2 * sp.sqrt(2)) - 1 - sp.sqrt(2)) is True
    assert exact_zero(sp.sqrt(2) - 1) is False
    assert exact_zero(x) is None and exact_zero(sp.pi - 3) is None
    assert exact_zero(sp.Function("f", real=True)(1)) is None  # closed, but not a number


def test_exact_rank_of_rational_algebraic_and_undecided_matrices():
    assert exact_rank(sp.ImmutableMatrix([[1, 2], [2, 4]])) == 1
    assert exact_rank(sp.ImmutableMatrix([[sp.sqrt(2), 1], [2, sp.sqrt(2)]])) == 1  # row 2 = sqrt 2 row 1
    assert exact_rank(sp.ImmutableMatrix([[sp.sqrt(2), 1], [1, sp.sqrt(2)]])) == 2
    assert exact_rank(sp.ImmutableMatrix([[sp.pi - 3], [0]])) is None  # an undecided entry is not a zero
    assert exact_rank(sp.ImmutableMatrix([[0], [sp.pi - 3]])) is None
    assert exact_rank(sp.ImmutableMatrix([[0, sp.sqrt(2)], [0, 1]])) == 1  # an all-zero column has no pivot
    assert exact_rank(sp.ImmutableMatrix([[x]])) is None


def test_rank_upper_bound_uses_the_rank_over_rational_functions_and_the_shape():
    assert rank_upper_bound(sp.Matrix([[x, x ** 2], [1, x]])) == 1
    assert rank_upper_bound(sp.Matrix([[x, 0], [0, 1]])) == 2
    assert rank_upper_bound(sp.Matrix([[1, 2], [2, 4]])) == 1
    assert rank_upper_bound(sp.Matrix([[sp.sin(x), 1, 0]])) == 1  # the shape
    assert rank_upper_bound(sp.Matrix([[sp.sin(x), sp.sin(x)], [1, 1]])) == 1  # sin(x) as an indeterminate
