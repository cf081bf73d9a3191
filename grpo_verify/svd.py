"""Singular values of the weight-sized gradient matrices, in float64, without the weight-sized float64 copy.

A gradient's singular values equal those of the matrix with its all-zero rows and columns removed (an
embedding's gradient is zero outside the rows of the tokens seen: 256000 rows become a few hundred), and those of
the triangular factor R of a QR factorisation (orthogonal factors do not change them). A tall matrix is reduced to
R block of rows by block in float64: R of [R_prev; next block] is R of everything so far, each step an orthogonal
transformation, as backward stable as LAPACK's own QR. The peak extra memory is one block and R, instead of a
float64 copy of the whole matrix plus LAPACK's workspace (12.6 GB for the 4B model's 256000 x 3072 LM head).
"""

from __future__ import annotations

import torch

BLOCK_ELEMENTS = 1 << 25  # float64 values per row block (256 MiB)


def singular_values(matrix: torch.Tensor, block_elements: int = BLOCK_ELEMENTS) -> torch.Tensor:
    """The min(m, n) singular values of a 2-D tensor in float64, descending (zero ones included)."""
    if matrix.ndim != 2:
        raise ValueError(f"singular values need a 2-D tensor, got shape {tuple(matrix.shape)}")
    if block_elements < 1:
        raise ValueError(f"block_elements must be positive, got {block_elements}")
    m, n = matrix.shape
    out = torch.zeros(min(m, n), dtype=torch.float64, device=matrix.device)
    nonzero = matrix != 0
    rows, cols = nonzero.any(dim=1), nonzero.any(dim=0)
    del nonzero
    kept_rows, kept_cols = int(rows.sum()), int(cols.sum())
    if not kept_rows or not kept_cols:
        return out
    sub = matrix
    if kept_rows < m:  # index only when something is dropped: indexing copies
        sub = sub[rows]
    if kept_cols < n:
        sub = sub[:, cols]
    if sub.shape[0] < sub.shape[1]:
        sub = sub.T  # the same singular values; the long side runs down the rows
    r, c = sub.shape
    if r * c <= block_elements or r <= 2 * c:
        sigma = torch.linalg.svdvals(sub.to(torch.float64))
    else:
        step = max(c, block_elements // c)
        triangle = None
        for start in range(0, r, step):
            block = sub[start:start + step].to(torch.float64)
            stacked = block if triangle is None else torch.cat([triangle, block])
            triangle = torch.linalg.qr(stacked, mode="r")[1]
        sigma = torch.linalg.svdvals(triangle)
    out[:sigma.numel()] = sigma
    return out
