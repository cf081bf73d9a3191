"""``grpo_verify.svd.singular_values`` against LAPACK's ``torch.linalg.svdvals`` of the whole float64 matrix: the
zero rows and columns removed, the blocked QR of a tall matrix, a wide one, an all-zero one, low rank."""

from __future__ import annotations

import pytest
import torch

from grpo_verify.svd import singular_values

F64 = torch.float64


def _reference(matrix: torch.Tensor) -> torch.Tensor:
    return torch.linalg.svdvals(matrix.to(F64))


def _close(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == F64 and got.shape == want.shape
    scale = float(want.max()) if want.numel() and float(want.max()) > 0 else 1.0
    assert float((got - want).abs().max()) <= 1e-12 * scale, (got[:5], want[:5])


def _matrices():
    g = torch.Generator().manual_seed(0)
    dense_tall = torch.randn(700, 9, generator=g, dtype=F64)
    low_rank = torch.randn(500, 3, generator=g, dtype=F64) @ torch.randn(3, 40, generator=g, dtype=F64)
    embedding = torch.zeros(1000, 16, dtype=torch.float32)  # rows of the tokens seen only
    embedding[[3, 77, 500, 999]] = torch.randn(4, 16, generator=g)
    columns = torch.randn(30, 50, generator=g, dtype=F64)
    columns[:, ::3] = 0
    wide = torch.randn(6, 900, generator=g, dtype=torch.float32)
    return {"dense_tall": dense_tall, "low_rank": low_rank, "embedding": embedding, "zero_columns": columns,
            "wide": wide, "zero": torch.zeros(5, 7), "one_entry": torch.zeros(40, 4).index_put_(
                (torch.tensor([7]), torch.tensor([2])), torch.tensor(3.0))}


@pytest.mark.parametrize("name", list(_matrices()))
@pytest.mark.parametrize("block", [1 << 25, 64, 1])
def test_singular_values_equal_lapacks_of_the_whole_matrix(name, block):
    """block 64 and 1 force the blocked QR (a block of at least as many rows as columns). Planted bugs seen to fail
    here: stacking the new block without the previous R (0.99 of the energy lost), dropping rows that are not all
    zero (``any`` -> ``all``), and returning the kept values without the zero padding (a shape mismatch)."""
    matrix = _matrices()[name]
    _close(singular_values(matrix, block_elements=block), _reference(matrix))


def test_a_tensor_that_is_not_a_matrix_is_refused():
    with pytest.raises(ValueError, match="2-D"):
        singular_values(torch.ones(3))
    with pytest.raises(ValueError, match="block_elements"):
        singular_values(torch.ones(3, 3), block_elements=0)
