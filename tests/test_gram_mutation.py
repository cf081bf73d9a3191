"""Tests added for the survivors of mutation testing of ``grpo_verify/gram/`` (see
experiments/mutation/README.md and gram-annotations.json).

Each test pins one documented behaviour with an expected value worked out independently: exact
small-integer arithmetic (so no BLAS summation order or thread count matters), an explicit
per-rollout loop, closed-form cost formulas, the exact error message, or the torch operations the
code runs (logged with a TorchDispatchMode) where the behaviour is the chunking that bounds memory.
Every object is built inside its test (mutmut imports this module once, before any mutant is active).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from grpo_verify.gram import contract

F64, F32 = torch.float64, torch.float32
# float32(1 + 2^-30) == 1: a float64 factor entry k * (1 + 2^-30) becomes exactly k when cast to
# float32, and stays off k when it is not; products and sums of the small integers below are exact in
# either dtype, whatever the summation order.
NUDGE = 1.0 + 2.0 ** -30


class OpLog(TorchDispatchMode):
    """Every aten op run inside the ``with``: (name, shapes of the tensor arguments, dtype of the first)."""

    def __init__(self):
        super().__init__()
        self.ops: list[tuple[str, list[tuple], torch.dtype | None]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        self.ops.append((func.overloadpacket.__name__, [tuple(a.shape) for a in tensors],
                         tensors[0].dtype if tensors else None))
        return out

    def shapes(self, name: str, dtype: torch.dtype | None = None) -> list[list[tuple]]:
        return [shapes for op, shapes, first in self.ops if op == name and dtype in (None, first)]


def nudged(base: torch.Tensor) -> torch.Tensor:
    """base (small integers) * (1 + 2^-30) in float64: float32 rounds it back to base exactly."""
    return base.to(F64) * NUDGE


def dense_factor(a_base, b_base) -> contract.Factor:
    a_base, b_base = torch.as_tensor(a_base, dtype=F64), torch.as_tensor(b_base, dtype=F64)
    return contract.Factor(a=nudged(a_base), b=nudged(b_base), a_size=a_base.shape[2])


def index_factor(ids, b_base, d0: int) -> contract.Factor:
    return contract.Factor(a=torch.as_tensor(ids, dtype=torch.long), b=nudged(torch.as_tensor(b_base, dtype=F64)),
                           a_size=d0)


def per_rollout(f: contract.Factor, rounded: bool) -> torch.Tensor:
    """g_i = sum_t a_it (x) b_it (R, d0 * d1) by an explicit loop over rollouts and positions, in
    float64; ``rounded``: with the float64 entries rounded to float32 first (the product dtype)."""
    def value(t):
        return t.to(F32).to(F64) if rounded else t
    out = torch.zeros(f.rollouts, f.a_size, f.b_size, dtype=F64)
    for i in range(f.rollouts):
        for t in range(f.tokens):
            b = value(f.b[i, t])
            if f.index:
                out[i, int(f.a[i, t])] += b
            else:
                out[i] += torch.outer(value(f.a[i, t]), b)
    return out.reshape(f.rollouts, -1)


def small_factors():
    """u: a dense (R=2, T=3, d0=2, d1=2) use; v: a dense (T=2) and an index (T=2, d0=2) use."""
    u = dense_factor([[[1, 2], [0, 1], [2, 1]], [[1, 1], [3, 0], [1, 2]]],
                     [[[1, 0], [2, 1], [1, 1]], [[0, 2], [1, 1], [3, 1]]])
    v_dense = dense_factor([[[2, 1], [1, 3]], [[1, 0], [2, 2]]], [[[1, 2], [0, 1]], [[2, 1], [1, 3]]])
    v_index = index_factor([[1, 0], [1, 1]], [[[2, 1], [1, 0]], [[1, 1], [0, 3]]], 2)
    return u, v_dense, v_index


# -- contract.ghost_cross -----------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1 << 20, 1], ids=["cast-at-once", "a-rollout-of-v-at-a-time"])
def test_ghost_cross_products_are_in_the_product_dtype(chunk):
    """ghost_cross(u, v, float32, ..., float64) casts the float64 factors to float32 before any
    product (the docstring: "cast to the product dtype once"), on both chunk paths and for every
    pairing of dense and index factors: entries k (1 + 2^-30) are read as k, so C is the exact
    integer matrix of the rounded per-rollout gradients; an uncast factor leaves the 2^-30 in."""
    u, v_dense, v_index = small_factors()
    for a, b in [(u, v_dense), (u, v_index), (v_index, u), (v_index, v_index), (u, u)]:
        expected = per_rollout(a, rounded=True) @ per_rollout(b, rounded=True).T
        got = contract.ghost_cross(a, b, F32, chunk, F64)
        assert got.dtype == F64
        assert torch.equal(got, expected), (a.index, b.index)
        assert not torch.equal(per_rollout(a, rounded=False) @ per_rollout(b, rounded=False).T, expected)


@pytest.mark.parametrize("chunk", [1 << 20, 1], ids=["cast-at-once", "a-rollout-of-v-at-a-time"])
def test_ghost_cross_float32_products_are_summed_in_the_accumulate_dtype(chunk):
    """One rollout, d0 = d1 = 1: u has b = 4097 at one position, v has b = 4096 and 1 at two. The
    float32 products 4097 * 4096 = 2^24 + 2^12 and 4097 are exact, their sum 2^24 + 8193 is odd
    and above 2^24, so no float32 number equals it: summed in float64 (accumulate) C is exact."""
    for index in (False, True):
        a_u = torch.zeros(1, 1, dtype=torch.long) if index else torch.ones(1, 1, 1, dtype=F64)
        a_v = torch.zeros(1, 2, dtype=torch.long) if index else torch.ones(1, 2, 1, dtype=F64)
        u = contract.Factor(a=a_u, b=torch.tensor([[[4097.0]]], dtype=F64), a_size=1)
        v = contract.Factor(a=a_v, b=torch.tensor([[[4096.0], [1.0]]], dtype=F64), a_size=1)
        got = contract.ghost_cross(u, v, F32, chunk, F64)
        assert got.dtype == F64 and got.item() == 2.0 ** 24 + 8193
        assert torch.tensor(2.0 ** 24 + 8193, dtype=F32).item() != 2.0 ** 24 + 8193


def test_ghost_cross_float64_products_of_float32_factors():
    """Product dtype float64 for float32 factors: b rows (4096, 1) and (4096, 1) have the inner
    product 2^24 + 1 - not a float32 number - which float64 products give exactly."""
    b = torch.tensor([[[4096.0, 1.0]]], dtype=F32)
    for a in (torch.ones(1, 1, 1, dtype=F32), torch.zeros(1, 1, dtype=torch.long)):
        f = contract.Factor(a=a, b=b, a_size=1)
        for chunk in (1 << 20, 1):
            assert contract.ghost_cross(f, f, F64, chunk).item() == 2.0 ** 24 + 1


def _ghost_products(u, v, chunk):
    """The (rows, columns) of every u-rows x v-rows product ub @ vb^T that ghost_cross runs (d1 = 3, so
    they are the mm calls with a (.., 3) left operand), and the shapes of the float64 tensors cast."""
    with OpLog() as log:
        contract.ghost_cross(u, v, F32, chunk, F64)
    products = [(s[0][0], s[1][1]) for s in log.shapes("mm") if len(s) == 2 and s[0][1] == 3]
    casts = [s[0] for s in log.shapes("_to_copy", F64)]
    return products, casts


def _ids_factor(rollouts, tokens, d0=4, d1=3):
    g = torch.Generator().manual_seed(rollouts * 10 + tokens)
    return contract.Factor(a=torch.randint(0, d0, (rollouts, tokens), generator=g),
                           b=torch.randn(rollouts, tokens, d1, generator=g, dtype=F64), a_size=d0)


def _dense_factor(rollouts, tokens, d0=4, d1=3):
    g = torch.Generator().manual_seed(rollouts * 10 + tokens + 1)
    return contract.Factor(a=torch.randn(rollouts, tokens, d0, generator=g, dtype=F64),
                           b=torch.randn(rollouts, tokens, d1, generator=g, dtype=F64), a_size=d0)


def test_ghost_cross_blocks_of_u_rows_meet_all_of_v_when_v_fits():
    """R = 2, u: 5 positions, v: 3 (d1 = 3). v's cast copy fits, so blocks of u's R T_u = 10 rows meet
    all R T_v = 6 rows of v at once; a block has max(1, chunk // (2 R T_v)) rows: (2 products of
    (rows x 6) per block, ub @ vb^T and the score product, within the budget)."""
    u, v = _ids_factor(2, 5), _ids_factor(2, 3)
    assert _ghost_products(u, v, 36)[0] == [(3, 6), (3, 6), (3, 6), (1, 6)]   # 36 // 12 = 3
    assert _ghost_products(u, v, 24)[0] == [(2, 6)] * 5                       # 24 // 12 = 2
    assert _ghost_products(u, v, 18)[0] == [(1, 6)] * 10                      # 18 // 12 = 1
    assert _ghost_products(u, v, 1 << 20)[0] == [(10, 6)]                     # at most every row


def test_ghost_cross_goes_a_rollout_of_v_at_a_time_when_v_does_not_fit():
    """v (R = 2, T_v = 1, d1 = 3) has 6 b entries: with a budget of 5 it is not cast at once; u's rows
    of one rollout are taken in blocks of max(1, min(T_u, chunk // (2 T_v))) against one rollout of v."""
    u, v = _ids_factor(2, 5), _ids_factor(2, 1)
    # for each rollout i of u, blocks t0 = 0, 2, 4, each against rollouts j = 0, 1 of v; 5 // 2 = 2
    assert _ghost_products(u, v, 5)[0] == ([(2, 1)] * 4 + [(1, 1)] * 2) * 2
    assert _ghost_products(u, v, 3)[0] == [(1, 1)] * 20                       # 3 // 2 = 1


def test_ghost_cross_casts_v_at_once_exactly_when_it_fits_the_budget():
    """The fit test is (a entries if dense, none if index) + b entries <= chunk_elements: at the
    boundary the factor is cast at once (products against all R T_v rows), one entry below it not."""
    u = _ids_factor(2, 5)
    v_index = _ids_factor(2, 3)                  # 6 b entries, the index a not counted
    v_dense = _dense_factor(2, 3)                # 24 a entries (2, 3, 4) and 18 b (2, 3, 3)
    v_index = contract.Factor(a=v_index.a, b=v_index.b, a_size=4)
    size_index = v_index.b.numel()
    size_dense = v_dense.a.numel() + v_dense.b.numel()
    fits = {chunk: {c for _, c in _ghost_products(u, v_index, chunk)[0]} for chunk in (size_index, size_index - 1)}
    assert fits == {size_index: {6}, size_index - 1: {3}}
    fits = {chunk: {c for _, c in _ghost_products(u, v_dense, chunk)[0]}
            for chunk in (size_dense, size_dense - 1, v_dense.b.numel())}
    assert fits == {size_dense: {6}, size_dense - 1: {3}, v_dense.b.numel(): {3}}


def test_ghost_cross_casts_each_factor_once():
    """float64 factors, product dtype float32. u is v and fits: its b is cast once as a whole (an
    index a is never cast), and no block is cast again; u and v different and both fitting: each b
    once. (A dense a is cast whole once as well.)"""
    v = _ids_factor(2, 3)
    _, casts = _ghost_products(v, v, 1 << 20)
    assert casts == [(2, 3, 3)]
    u = _ids_factor(2, 5)
    _, casts = _ghost_products(u, v, 1 << 20)
    assert sorted(casts) == [(2, 3, 3), (2, 5, 3)]
    d = _dense_factor(2, 3)
    _, casts = _ghost_products(d, d, 1 << 20)
    assert sorted(casts) == [(2, 3, 3), (2, 3, 4)]


def test_contractions_stay_on_the_factors_device():
    """On the meta device (shapes and devices only): every output of ghost_cross (both chunk paths),
    materialised_rows (dense factors, in and out of their dtype), weighted_factor_sum and dense_gram
    is on the factors' device, not the default (CPU)."""
    meta = torch.device("meta")
    a = torch.empty(2, 3, 4, dtype=F64, device=meta)
    b = torch.empty(2, 3, 5, dtype=F64, device=meta)
    dense = contract.Factor(a=a, b=b, a_size=4)
    index = contract.Factor(a=torch.zeros(2, 3, dtype=torch.long, device=meta), b=b, a_size=4)
    for u, v in [(dense, dense), (index, dense), (dense, index)]:
        for chunk in (1 << 20, 1):
            assert contract.ghost_cross(u, v, F64, chunk).device == meta
    for dtype in (F64, F32):
        for r0, r1, block in contract.materialised_rows([dense], dtype, 1 << 20):
            assert block.device == meta and block.shape == (2, 4, 5)
    assert contract.weighted_factor_sum([dense], torch.ones(2, dtype=F64, device=meta), F64).device == meta
    assert contract.weighted_factor_sum([index], torch.ones(2, dtype=F64, device=meta), F64).device == meta
    assert contract.dense_gram(b.reshape(2, -1), F64, 1 << 20).device == meta


# -- contract cost model -------------------------------------------------------------------------


def _shape_factor(index: bool, rollouts: int, tokens: int, d0: int, d1: int) -> contract.Factor:
    a = torch.zeros(rollouts, tokens, dtype=torch.long) if index else torch.zeros(rollouts, tokens, d0, dtype=F64)
    return contract.Factor(a=a, b=torch.zeros(rollouts, tokens, d1, dtype=F64), a_size=d0)


def test_cost_model_closed_forms():
    """The operation counts "auto" compares, written out for R = 2, T_u = 3, T_v = 5, d0 = 7, d1 = 11:
    ghost (R T_u)(R T_v)(d0 + d1), with d0 replaced by 1 when either factor is an index; a weighted
    sum from factors R T (d0 d1), R T d1 for an index; from materialised blocks R d0 d1; materialising
    sum_u R T_u (d0 d1, or d1 for an index) + R^2 d0 d1; no factors cost 0."""
    du, dv = _shape_factor(False, 2, 3, 7, 11), _shape_factor(False, 2, 5, 7, 11)
    iu, iv = _shape_factor(True, 2, 3, 7, 11), _shape_factor(True, 2, 5, 7, 11)
    assert contract.ghost_cost(du, dv) == 6.0 * 10.0 * 18.0
    assert contract.ghost_cost(iu, dv) == 6.0 * 10.0 * 12.0
    assert contract.ghost_cost(du, iv) == 6.0 * 10.0 * 12.0
    assert contract.ghost_cost(iu, iv) == 6.0 * 10.0 * 12.0
    assert contract.weighted_sum_cost([du]) == 6.0 * 77.0
    assert contract.weighted_sum_cost([iu]) == 6.0 * 11.0
    assert contract.weighted_sum_cost([du, iv]) == 6.0 * 77.0 + 10.0 * 11.0
    assert contract.weighted_sum_cost([]) == 0.0
    assert contract.weighted_block_cost([du, iv]) == 2.0 * 7.0 * 11.0
    assert contract.weighted_block_cost([]) == 0.0
    assert contract.materialise_cost([du]) == 6.0 * 77.0 + 4.0 * 77.0
    assert contract.materialise_cost([du, iv]) == 6.0 * 77.0 + 10.0 * 11.0 + 4.0 * 77.0
    assert contract.materialise_cost([iu]) == 6.0 * 11.0 + 4.0 * 77.0
    assert contract.materialise_cost([]) == 0.0


# -- contract.materialised_rows, weighted_factor_sum, dense_gram ---------------------------------


def _mixed_factors():
    """Five uses of one (d0 = 7, d1 = 3) parameter, R = 2, T = 3: dense in the product dtype (twice),
    dense with a float32 a, dense with a float32 b, an index; small-integer entries, exact in both dtypes."""
    g = torch.Generator().manual_seed(5)

    def ints(*shape):
        return torch.randint(-3, 4, shape, generator=g).to(F64)
    same = [contract.Factor(a=ints(2, 3, 7), b=ints(2, 3, 3), a_size=7) for _ in range(2)]
    a32 = contract.Factor(a=ints(2, 3, 7).to(F32), b=ints(2, 3, 3), a_size=7)
    b32 = contract.Factor(a=ints(2, 3, 7), b=ints(2, 3, 3).to(F32), a_size=7)
    index = contract.Factor(a=torch.randint(0, 7, (2, 3), generator=g), b=ints(2, 3, 3), a_size=7)
    return same + [a32, b32, index]


def _explicit_gradients(factors) -> torch.Tensor:
    """sum over uses of g_i (R, d0, d1), by the explicit loop in float64."""
    total = 0
    for f in factors:
        f64 = contract.Factor(a=f.a if f.index else f.a.to(F64), b=f.b.to(F64), a_size=f.a_size)
        total = total + per_rollout(f64, rounded=False).reshape(f.rollouts, f.a_size, f.b_size)
    return total


@pytest.mark.parametrize("order", ["dense-first", "index-first", "cast-first"])
def test_materialised_rows_sum_every_use_in_row_blocks(order):
    """materialised_rows yields rows r0:r1 of sum_u g_i^u for every rollout, in blocks of
    max(1, min(d0, chunk // (R d1))) rows (13 // 6 = 2 here: 0:2, 2:4, 4:6, 6:7), for uses that
    are dense in the product dtype, dense in another dtype (cast a rollout at a time) or an index,
    in any order; the blocks put together are the explicit per-rollout gradients, exactly."""
    factors = _mixed_factors()
    factors = {"dense-first": factors, "index-first": factors[::-1],
               "cast-first": factors[2:4] + factors[:2] + factors[4:]}[order]
    expected = _explicit_gradients(factors)
    blocks = list(contract.materialised_rows(factors, F64, 13))
    assert [(r0, r1) for r0, r1, _ in blocks] == [(0, 2), (2, 4), (4, 6), (6, 7)]
    for r0, r1, block in blocks:
        assert block.dtype == F64 and block.shape == (2, r1 - r0, 3)
        assert torch.equal(block, expected[:, r0:r1])
    for single in factors:
        got = torch.cat([b for _, _, b in contract.materialised_rows([single], F64, 13)], dim=1)
        assert torch.equal(got, _explicit_gradients([single]))


def test_materialised_rows_block_size():
    """Rows per block: max(1, min(d0, chunk // (R d1))) for R = 2, d1 = 3, d0 = 7."""
    factors = _mixed_factors()[:1]
    for chunk, rows in [(1, 1), (6, 1), (11, 1), (12, 2), (18, 3), (42, 7), (1 << 20, 7)]:
        ranges = [(r0, r1) for r0, r1, _ in contract.materialised_rows(factors, F64, chunk)]
        assert ranges == [(r0, min(7, r0 + rows)) for r0 in range(0, 7, rows)], chunk
    # one rollout and d1 = 1 (R d1 = 1): the whole budget is rows, 3 // 1 = 3
    one = contract.Factor(a=torch.ones(1, 2, 7, dtype=F64), b=torch.ones(1, 2, 1, dtype=F64), a_size=7)
    assert [(r0, r1) for r0, r1, _ in contract.materialised_rows([one], F64, 3)] == [(0, 3), (3, 6), (6, 7)]


def test_weighted_factor_sum_without_out():
    """sum_i w_i g_i (d0, d1) in the product dtype for mixed uses, w = (3, -2): integers, exact;
    allocated when no ``out`` is given, in ``dtype``."""
    factors = _mixed_factors()
    w = torch.tensor([3.0, -2.0], dtype=F64)
    expected = torch.einsum("r,rde->de", w, _explicit_gradients(factors))
    got = contract.weighted_factor_sum(factors, w, F64)
    assert got.dtype == F64 and got.shape == (7, 3)
    assert torch.equal(got, expected)
    got32 = contract.weighted_factor_sum(factors[:1], w, F32)
    assert got32.dtype == F32 and torch.equal(got32.to(F64), torch.einsum("r,rde->de", w, _explicit_gradients(factors[:1])))


def test_weighted_factor_sum_rounds_the_weights_to_a_half_precision_product_dtype():
    """Product dtype bfloat16: the weights are cast to it like the factors, so w = 1 + 2^-8 (halfway
    between the bfloat16 numbers 1 and 1 + 2^-7) is 1 (ties to even) and 3 w = 3 exactly, for a dense
    and an index use; a float64 weight would give bfloat16(3 (1 + 2^-8)) = 3.015625."""
    w = torch.tensor([1.0 + 2.0 ** -8], dtype=F64)
    dense = contract.Factor(a=torch.ones(1, 1, 1, dtype=torch.bfloat16), b=torch.full((1, 1, 1), 3.0,
                            dtype=torch.bfloat16), a_size=1)
    index = contract.Factor(a=torch.zeros(1, 1, dtype=torch.long), b=dense.b, a_size=1)
    for f in (dense, index):
        got = contract.weighted_factor_sum([f], w, torch.bfloat16)
        assert got.dtype == torch.bfloat16 and got.item() == 3.0


def test_dense_gram_chunks_and_product_dtype():
    """dense_gram chunks the columns by max(1, chunk // R) (one rollout: the whole budget; 10 columns,
    budget 4: 4, 4, 2), and rounds to the product dtype before the products: float64 entries
    k (1 + 2^-30) with product dtype float32 give the exact integer Gram matrix of the k."""
    rows = torch.arange(1.0, 11.0, dtype=F64)[None]
    with OpLog() as log:
        out = contract.dense_gram(rows, F64, 4)
    assert [s[0] for s in log.shapes("mm")] == [(1, 4), (1, 4), (1, 2)]
    assert out.item() == float(sum(k * k for k in range(1, 11)))
    two = torch.tensor([[1.0, 2.0, 3.0], [2.0, 0.0, 1.0]], dtype=F64)
    with OpLog() as log:
        contract.dense_gram(two, F64, 3)
    assert [s[0] for s in log.shapes("mm")] == [(2, 1)] * 3
    got = contract.dense_gram(nudged(two), F32, 1 << 20, F64)
    assert got.dtype == F64 and torch.equal(got, two @ two.T)
