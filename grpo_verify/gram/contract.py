"""Contractions of per-rollout gradients that are never materialised for all rollouts at once.

A *use* of a parameter (one call of a module that reads it) contributes to rollout i's gradient
either

* as a :class:`Factor`: g_i = sum_t a_it (x) b_it (outer product, reshaped to the parameter's
  shape), with a_it dense (a Linear's output gradient delta_it) or a one-hot index (an
  Embedding's token id, a_it = e_{token_it}) and b_it dense (the Linear's input x_it, or the
  Embedding's output gradient); or
* as a dense block (R x numel): the per-rollout gradients themselves (biases, norm weights, the
  exact per-rollout fallback).

For factors u, v of the same parameter the "ghost" identity gives

    <g_i^u, g_j^v> = sum_{t,s} <a^u_it, a^v_js> <b^u_it, b^v_js>,

costing (R T)^2 (d0 + d1) instead of the R T d0 d1 + R^2 d0 d1 of materialising every g_i.
A parameter used several times (a tied embedding and LM head) has g_i = sum_u g_i^u, so its
Gram matrix sums over *all* pairs (u, v), cross terms included.

Everything is chunked so that no intermediate exceeds ``chunk_elements`` entries (plus the inputs).

Two dtypes: the *product* dtype of the per-rollout gradient products (Delta_i^T X_i, the ghost
inner products), by default the model's (float32 for half precision), i.e. the precision autograd
itself computes a weight gradient in; and the *accumulate* dtype in which the length-P dot products
of K are summed (float64 by default). A float32 GEMM of a few long rows sums each dot product
almost sequentially (relative error 4e-4 at length 2^21 in a test), so :func:`row_gram` sums
products in blocks of :data:`GRAM_BLOCK` in the product dtype and adds the block sums in the
accumulate dtype: at float32 speed with float64-like accumulation error. The ghost form's inner
products <x_it, x_js> and <delta_it, delta_js> are single product-dtype contractions over d1 and d0
(for an LM head d0 is the vocabulary); only their sum over positions is in the accumulate dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

Tensor = torch.Tensor


@dataclass
class Factor:
    """One use as a sum of outer products: a (R, T, d0) dense or (R, T) long index into d0 rows;
    b (R, T, d1) dense. ``a_size`` is d0 (the vocabulary size for an index factor)."""

    a: Tensor
    b: Tensor
    a_size: int

    @property
    def index(self) -> bool:
        return self.a.dtype == torch.long

    @property
    def rollouts(self) -> int:
        return self.b.shape[0]

    @property
    def tokens(self) -> int:
        return self.b.shape[1]

    @property
    def b_size(self) -> int:
        return self.b.shape[2]


GRAM_BLOCK = 128


def _cast(tensor: Tensor, dtype: torch.dtype | None) -> Tensor:
    if tensor.dtype == torch.long or dtype is None or tensor.dtype == dtype:
        return tensor
    return tensor.to(dtype)


def product_dtype_of(dtype: torch.dtype) -> torch.dtype:
    """The default product dtype for tensors of ``dtype``: itself, float32 for half precision."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def row_gram(rows: Tensor, accumulate: torch.dtype) -> Tensor:
    """rows rows^T (R x R, in ``accumulate``) for rows (R x n).

    Rows of a lower precision than ``accumulate`` are multiplied in their own dtype in blocks of
    GRAM_BLOCK columns (R columns when R is larger; one batched GEMM) and the block sums added in
    ``accumulate``."""
    rollouts, n = rows.shape
    width = max(GRAM_BLOCK, rollouts)  # so the (blocks, R, R) output is no larger than the input
    if rows.dtype == accumulate or n < width or torch.finfo(rows.dtype).bits >= torch.finfo(accumulate).bits:
        wide = _cast(rows, accumulate)
        return wide @ wide.T
    whole = n - n % width
    blocks = rows[:, :whole].reshape(rollouts, -1, width).transpose(0, 1)
    out = torch.bmm(blocks, blocks.transpose(1, 2)).sum(dim=0, dtype=accumulate)
    if whole < n:
        tail = _cast(rows[:, whole:], accumulate)
        out += tail @ tail.T
    return out


def _a_inner(u: Factor, ui: Tensor, v: Factor, vj: Tensor, dtype: torch.dtype) -> Tensor:
    """<a^u_t, a^v_s> for the rows ui (tu,[d0]) of u and vj (tv,[d0]) of v: a (tu, tv) matrix."""
    if u.index and v.index:
        return (ui[:, None] == vj[None, :]).to(dtype)
    if u.index:  # <e_{k_t}, a_s> = a_s[k_t]
        return _cast(vj[:, ui], dtype).T
    if v.index:
        return _cast(ui[:, vj], dtype)
    return _cast(ui, dtype) @ _cast(vj, dtype).T


def ghost_cross(u: Factor, v: Factor, dtype: torch.dtype, chunk_elements: int,
                accumulate: torch.dtype | None = None) -> Tensor:
    """C (R x R, in ``accumulate``, default ``dtype``) with C_ij = <g_i^u, g_j^v> by the ghost identity.

    The factors are cast to the product dtype ``dtype`` once (a rollout at a time when a cast copy
    would exceed the budget); blocks of u's (rollout, position) rows meet all of v's rows in one
    product each, whose (position, position) terms are summed in ``accumulate``.
    """
    rollouts = u.rollouts
    accumulate = accumulate or dtype
    out = torch.zeros(rollouts, rollouts, dtype=accumulate, device=u.b.device)
    tu, tv = u.tokens, v.tokens

    def flat(f: Factor):
        fits = (f.a.numel() if not f.index else 0) + f.b.numel() <= chunk_elements
        if not fits:
            return None
        a = f.a.reshape(-1) if f.index else _cast(f.a, dtype).reshape(-1, f.a_size)
        return a, _cast(f.b, dtype).reshape(-1, f.b_size)

    v_flat = flat(v)
    if v_flat is None:  # too large to cast at once: one rollout of v at a time
        block = max(1, min(tu, chunk_elements // max(1, 2 * tv)))
        for i in range(rollouts):
            for t0 in range(0, tu, block):
                ua = u.a[i, t0:t0 + block]
                ub = _cast(u.b[i, t0:t0 + block], dtype)
                for j in range(rollouts):
                    ga = _a_inner(u, ua, v, v.a[j], dtype)
                    out[i, j] += (ga * (ub @ _cast(v.b[j], dtype).T)).sum(dtype=accumulate)
        return out
    va, vb = v_flat
    u_flat = v_flat if u is v else flat(u)
    rows_total = rollouts * tu
    block = max(1, min(rows_total, chunk_elements // max(1, 2 * rollouts * tv)))
    owner = torch.arange(rollouts, device=out.device).repeat_interleave(tu)
    for r0 in range(0, rows_total, block):
        r1 = min(rows_total, r0 + block)
        if u_flat is not None:
            ua, ub = u_flat[0][r0:r1], u_flat[1][r0:r1]
        else:
            ua = u.a.reshape(-1)[r0:r1] if u.index else _cast(u.a.reshape(-1, u.a_size)[r0:r1], dtype)
            ub = _cast(u.b.reshape(-1, u.b_size)[r0:r1], dtype)
        product = _a_inner(u, ua, v, va, dtype) * (ub @ vb.T)
        out.index_add_(0, owner[r0:r1], product.view(r1 - r0, rollouts, tv).sum(dim=2, dtype=accumulate))
    return out


def ghost_cost(u: Factor, v: Factor) -> float:
    a_cost = 1 if (u.index or v.index) else u.a_size
    return float(u.rollouts * u.tokens) * float(v.rollouts * v.tokens) * float(a_cost + u.b_size)


def weighted_sum_cost(factors: list[Factor]) -> float:
    """Cost of one weighted sum sum_i w_i g_i from the factors (:func:`weighted_factor_sum`)."""
    return sum(float(f.rollouts * f.tokens) * (f.b_size if f.index else f.a_size * f.b_size) for f in factors)


def weighted_block_cost(factors: list[Factor]) -> float:
    """Cost of one weighted sum from the materialised per-rollout gradients."""
    return float(factors[0].rollouts) * factors[0].a_size * factors[0].b_size if factors else 0.0


def materialise_cost(factors: list[Factor]) -> float:
    if not factors:
        return 0.0
    d0, d1, rollouts = factors[0].a_size, factors[0].b_size, factors[0].rollouts
    build = sum(float(f.rollouts * f.tokens) * (d1 if f.index else d0 * d1) for f in factors)
    return build + float(rollouts * rollouts) * d0 * d1


def materialised_rows(factors: list[Factor], dtype: torch.dtype, chunk_elements: int):
    """Yield (r0, r1, M) with M (R, r1 - r0, d1) = rows r0:r1 of every rollout's gradient
    sum_u A_i^u^T B_i^u in ``dtype``, so that R x d0 x d1 is never held at once."""
    d0, d1, rollouts = factors[0].a_size, factors[0].b_size, factors[0].rollouts
    device = factors[0].b.device
    rows = max(1, min(d0, chunk_elements // max(1, rollouts * d1)))
    for r0 in range(0, d0, rows):
        r1 = min(d0, r0 + rows)
        block = None
        for f in factors:
            if f.index:
                if block is None:
                    block = torch.zeros(rollouts, r1 - r0, d1, dtype=dtype, device=device)
                sel = (f.a >= r0) & (f.a < r1)
                if bool(sel.any()):
                    roll = torch.arange(rollouts, device=device)[:, None].expand_as(f.a)[sel]
                    block.index_put_((roll, f.a[sel] - r0), _cast(f.b[sel], dtype), accumulate=True)
            elif f.a.dtype == dtype and f.b.dtype == dtype:
                product = torch.bmm(f.a[:, :, r0:r1].transpose(1, 2), f.b)
                block = product if block is None else block.add_(product)
            else:  # a rollout at a time, to bound the cast copies
                if block is None:
                    block = torch.zeros(rollouts, r1 - r0, d1, dtype=dtype, device=device)
                for i in range(rollouts):
                    block[i] += _cast(f.a[i, :, r0:r1], dtype).T @ _cast(f.b[i], dtype)
        yield r0, r1, block


def weighted_factor_sum(factors: list[Factor], weights: Tensor, dtype: torch.dtype,
                        out: Tensor | None = None) -> Tensor:
    """sum_i w_i g_i (d0 x d1) from factors, e.g. the GRPO gradient sum_i A_i Delta_i^T X_i
    (one GEMM per rollout and factor), written into ``out`` when given."""
    d0, d1 = factors[0].a_size, factors[0].b_size
    if out is None:
        out = torch.zeros(d0, d1, dtype=dtype, device=factors[0].b.device)
    else:
        out.zero_()
    w = weights.to(dtype=dtype, device=out.device)
    for f in factors:
        for i in range(f.rollouts):
            b = _cast(f.b[i], dtype) * w[i]
            if f.index:
                out.index_add_(0, f.a[i], b)
            else:
                out += _cast(f.a[i], dtype).T @ b
    return out


def dense_gram(dense: Tensor, dtype: torch.dtype, chunk_elements: int,
               accumulate: torch.dtype | None = None) -> Tensor:
    """M M^T for M (R x n), chunked over n, products in ``dtype``, sums in ``accumulate`` (default ``dtype``)."""
    rollouts, n = dense.shape
    accumulate = accumulate or dtype
    out = torch.zeros(rollouts, rollouts, dtype=accumulate, device=dense.device)
    step = max(1, chunk_elements // max(1, rollouts))
    for c0 in range(0, n, step):
        out += row_gram(_cast(dense[:, c0:c0 + step], dtype), accumulate)
    return out
