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
    boundary the factor is cast at once (products against all R T_v = 6 rows), one entry below it
    not (products against one rollout's T_v = 3 rows)."""
    u = _ids_factor(2, 5)
    v_index = _ids_factor(2, 3)                  # 18 b entries (2, 3, 3), the index a not counted
    v_dense = _dense_factor(2, 3)                # 24 a entries (2, 3, 4) and 18 b (2, 3, 3)
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


# -- layers ---------------------------------------------------------------------------------------


def test_first_input_is_the_first_positional_or_a_known_keyword():
    """A rule reads the module's input from args[0], else the keyword input, hidden_states or x (in
    that order); anything else is the exact error."""
    from grpo_verify.gram import layers
    a, b, c = torch.zeros(1), torch.ones(1), torch.full((1,), 2.0)
    assert layers._first_input(((a,), {"input": b})) is a
    assert layers._first_input(((), {"input": a, "hidden_states": b, "x": c})) is a
    assert layers._first_input(((), {"hidden_states": b, "x": c})) is b
    assert layers._first_input(((), {"x": c})) is c
    assert layers._first_input(((), {"other": a, "x": c})) is c
    with pytest.raises(ValueError) as err:
        layers._first_input(((), {"X": a, "inputs": b}))
    assert str(err.value) == "could not find the module's input tensor"


def test_linear_rule_reads_keyword_inputs_and_checks_the_rollout_dimension():
    """nn.Linear called as linear(input=x): the rule finds x; its weight factor is (delta, x). A
    tensor whose first dimension is not R gets the exact error."""
    from grpo_verify.gram import layers
    linear = nn.Linear(3, 2).to(F64)
    x = torch.arange(12.0, dtype=F64).reshape(2, 2, 3)
    delta = torch.ones(2, 2, 2, dtype=F64)
    out = layers.linear_rule(linear, ((), {"input": x}), [delta], 2)
    assert torch.equal(out["weight"].b, x) and torch.equal(out["bias"], torch.full((2, 2), 2.0, dtype=F64))
    with pytest.raises(ValueError) as err:
        layers.linear_rule(linear, ((x,), {}), [delta], 3)
    assert str(err.value) == "expected the rollout dimension 3 first, got shape (2, 2, 3)"


def test_register_and_find_rule_for_subclasses(monkeypatch):
    """register(T)(rule) makes find_rule return rule for T and for a subclass that keeps T.forward
    (its nearest registered base is the first in its MRO), None for a subclass with its own forward."""
    from grpo_verify.gram import layers
    monkeypatch.setattr(layers, "_RULES", dict(layers._RULES))

    class Base(nn.Module):
        def forward(self, x):
            return x

    class Keeps(Base):
        pass

    class Overrides(Base):
        def forward(self, x):
            return 2 * x

    def rule(module, inputs, output_grads, rollouts):
        return {}

    assert layers.register(Base)(rule) is rule
    assert layers.find_rule(Base()) is rule
    assert layers.find_rule(Keeps()) is rule
    assert layers.find_rule(Overrides()) is None

    class MyLinear(nn.Linear):
        pass

    class Deeper(MyLinear):
        pass

    assert layers.find_rule(MyLinear(2, 2)) is layers.linear_rule
    assert layers.rule_name(Deeper(2, 2)) == "linear_rule"


def _fresh_rms_lookup(monkeypatch):
    """find_rule caches RMSNorm classes it recognised: start from the registered rules only, and
    no cached LlamaRMSNorm source, so the recognition runs here."""
    from grpo_verify.gram import layers
    monkeypatch.setattr(layers, "_RULES", {t: r for t, r in layers._RULES.items() if not t.__name__.endswith("RMSNorm")})
    monkeypatch.setattr(layers, "_LLAMA_RMS_SOURCE", None)
    return layers


def test_llama_rms_norm_and_its_copies_are_recognised_by_their_forward(monkeypatch):
    """LlamaRMSNorm and classes whose forward is character for character Llama's (Qwen2RMSNorm)
    get llama_rms_norm_rule, found again from the cache on the next lookup; an RMSNorm with another
    forward, a class not named *RMSNorm, and one whose source cannot be read get none."""
    layers = _fresh_rms_lookup(monkeypatch)
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    from transformers.models.qwen2.modeling_qwen2 import Qwen2RMSNorm
    for cls in (LlamaRMSNorm, Qwen2RMSNorm, LlamaRMSNorm):
        assert layers.find_rule(cls(4)) is layers.llama_rms_norm_rule, cls
        assert layers.rule_name(cls(4)) == "llama_rms_norm_rule"

    class OtherRMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(4))

        def forward(self, hidden_states):
            return self.weight * hidden_states

    class Scale(OtherRMSNorm):
        pass

    Scale.__name__ = "Scale"
    namespace = {}
    exec("def forward(self, hidden_states):\n    return hidden_states\n", namespace)
    NoSource = type("NoSourceRMSNorm", (nn.Module,), {"forward": namespace["forward"]})
    for module in (OtherRMSNorm(), Scale(), NoSource()):
        assert layers.find_rule(module) is None, type(module).__name__
        assert layers.rule_name(module) == "exact_fallback"


def test_llama_rms_norm_rule_casts_xhat_back_to_the_input_dtype():
    """bfloat16 input, one position per rollout: dl/dw = delta * xhat with xhat cast back to bfloat16
    (as LlamaRMSNorm's forward does), so the rule equals autograd through LlamaRMSNorm itself,
    rollout by rollout, exactly and in bfloat16."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    from grpo_verify.gram import layers
    norm = LlamaRMSNorm(4, eps=1e-6).to(torch.bfloat16)
    x = torch.tensor([[[3.0, 1.0, -2.0, 0.5]], [[1.0, 7.0, 2.0, -1.0]]], dtype=torch.bfloat16)
    delta = torch.tensor([[[1.0, -1.0, 0.5, 2.0]], [[3.0, 1.0, 1.0, -0.5]]], dtype=torch.bfloat16)
    expected = []
    for i in range(2):
        (g,) = torch.autograd.grad(norm(x[i:i + 1]), norm.weight, delta[i:i + 1])
        expected.append(g)
    got = layers.llama_rms_norm_rule(norm, ((x,), {}), [delta], 2)["weight"]
    assert got.dtype == torch.bfloat16
    assert torch.equal(got, torch.stack(expected))
    assert not torch.equal(got.float(), (delta.float() * (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True)
                                                                                  + 1e-6))).sum(1))


def test_tensor_outputs_flattens_nested_containers_in_order():
    from grpo_verify.gram import layers
    a, b, c, d = (torch.full((1,), float(k)) for k in range(4))
    got = layers.tensor_outputs((a, [b, {"k": c, "n": None}], 3, {"z": (d,)}))
    assert len(got) == 4 and all(x is y for x, y in zip(got, (a, b, c, d)))
    assert layers.tensor_outputs({"k": [a]})[0] is a
    assert layers.tensor_outputs(None) == []


class _Mix(nn.Module):
    """A module without a rule: out (R, T) = 2 s_i sum_d (x * w * extras[0] * extras[1]) with per-rollout
    scales s (R,) in a dict keyword; ``unused`` is a parameter its forward never reads; ``child``
    has parameters of its own (not the module's)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor([1.0, -2.0, 3.0], dtype=F64))
        self.unused = nn.Parameter(torch.ones(2, dtype=F64))
        self.child = nn.Linear(3, 3).to(F64)

    def forward(self, x, extras=None, scales=None):
        return (x * self.weight * extras[0] * extras[1]).sum(-1) * scales["s"][:, None] * 2


def test_exact_fallback_slices_every_batched_input_and_keyword():
    """exact_fallback re-runs the module on rollout i's slice of the positional input and of the
    tensors inside keyword lists and dicts (a 1-D (R,) tensor too), keeps non-tensors, returns only
    the module's own parameters (the unused one with a zero gradient). Expected by hand:
    dl_i/dw = 2 s_i sum_t g_it x_it e_it * 3 (extras[1] = 3)."""
    from grpo_verify.gram import layers
    module = _Mix()
    g = torch.Generator().manual_seed(2)
    x, e = (torch.randint(-3, 4, (2, 4, 3), generator=g).to(F64) for _ in range(2))
    s = torch.tensor([2.0, -1.0], dtype=F64)
    grad_out = torch.randint(-2, 3, (2, 4), generator=g).to(F64)
    result = layers.exact_fallback(module, ((x,), {"extras": [e, 3.0], "scales": {"s": s}}), [grad_out], 2)
    assert set(result) == {"weight", "unused"}
    expected = torch.stack([2 * s[i] * 3 * (grad_out[i, :, None] * x[i] * e[i]).sum(0) for i in range(2)])
    assert torch.equal(result["weight"], expected)
    assert torch.equal(result["unused"], torch.zeros(2, 2, dtype=F64))


def test_exact_fallback_skips_outputs_without_gradient_and_rollouts_without_any():
    """Outputs that do not require grad are not differentiated (even with an output gradient); a
    rollout whose outputs have none contributes 0 and the next rollouts are still done. Here the
    module returns (w x, x.detach()) and, for an all-zero rollout, a constant."""
    from grpo_verify.gram import layers

    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.tensor([2.0, 3.0], dtype=F64))

        def forward(self, x):
            if not bool(x.abs().sum() > 0):
                return torch.zeros_like(x), x.detach()
            return x * self.weight, x.detach()

    x = torch.tensor([[[0.0, 0.0]], [[1.0, 2.0]], [[3.0, -1.0]]], dtype=F64)
    grads = [torch.ones(3, 1, 2, dtype=F64), torch.ones(3, 1, 2, dtype=F64)]
    result = layers.exact_fallback(Gate(), ((x,), {}), grads, 3)
    assert torch.equal(result["weight"], torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, -1.0]], dtype=F64))


def test_exact_fallback_gradients_are_on_the_parameters_device():
    from grpo_verify.gram import layers

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(3))

        def forward(self, x):
            return x * self.weight

    module = Scale().to("meta")
    x = torch.empty(2, 4, 3, device="meta")
    result = layers.exact_fallback(module, ((x,), {}), [torch.empty(2, 4, 3, device="meta")], 2)
    assert result["weight"].device == torch.device("meta") and result["weight"].shape == (2, 3)


# -- reference ------------------------------------------------------------------------------------


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    """||a - b|| / ||b||. Tolerances below: LlamaRMSNorm normalises in float32, so gradients that pass
    through a norm carry float32 round-off (about 1e-8 relative here) that depends on how the backward
    is grouped; 1e-6 leaves room for that and is far below what a wrong mask, position or constant
    changes (order 1e-2 to 1)."""
    return float(torch.linalg.norm((a - b).to(F64)) / torch.linalg.norm(b.to(F64)))


def _tiny(dtype=F64, extra: bool = False):
    from test_gram import tiny_llama
    model = tiny_llama(False).to(dtype)  # sdpa: eager attention in float64 turns left-padded pad rows into NaN
    if extra:  # a trainable parameter the forward never reads
        model.extra = nn.Parameter(torch.ones(3, dtype=dtype))
    return model


def _left_padded():
    """Rows of 11, 8, 6, 9 real tokens, left-padded; completion starts 4 (= local 4), 2 (first real
    token at 3, so local 1 after the clamp), 6 (local 1), 3 (local 1)."""
    from test_gram import batch
    ids, mask, _ = batch("left")
    return ids, mask, torch.tensor([4, 2, 6, 3])


def _hand_objectives(model, ids, mask, start, aggregation, constant=None):
    """l_i written out: strip the row's padding, run it alone, log-softmax of the logits at t - 1
    picked at token t, for the local positions t >= max(start_i - first_i, 1); mean, sum or / constant.
    The forward is the loop's own (one unpadded row); only the final sum is grouped differently, so
    the objectives agree to float64 round-off (rtol 1e-9 below; a term more or less changes them by
    about 1/n)."""
    out = []
    for i in range(ids.shape[0]):
        real = [t for t in range(ids.shape[1]) if int(mask[i, t]) == 1]
        tokens = ids[i, real]
        logits = model(input_ids=tokens[None]).logits[0].to(F64)
        first_local = max(int(start[i]) - real[0], 1)
        terms = [torch.log_softmax(logits[t - 1], dim=0)[tokens[t]] for t in range(first_local, len(real))]
        total = sum(terms) if terms else torch.zeros((), dtype=F64)
        out.append({"mean": total / max(len(terms), 1), "sum": total, "constant": total / (constant or 1.0)}[aggregation])
    return torch.stack(out)


def test_naive_loop_objectives_are_the_hand_written_ones():
    """per_rollout_gradients (loop) on left-padded rows with starts at or before the first real
    token: each rollout's completion is every real token from local position 1; mean, sum, a given
    constant; and its defaults: no mask (every token real), start 0 and aggregation "mean"; the
    default constant of "constant" is the padded length L - min start (= L with the default start)."""
    from grpo_verify.gram.reference import per_rollout_gradients
    model = _tiny()
    ids, mask, start = _left_padded()
    for aggregation, constant in [("mean", None), ("sum", None), ("constant", 2.5)]:
        _, objectives = per_rollout_gradients(model, ids, mask, start, aggregation, constant)
        expected = _hand_objectives(model, ids, mask, start, aggregation, constant)
        assert objectives.dtype == F64
        assert torch.allclose(objectives, expected, rtol=1e-9, atol=0), aggregation
    full = ids[:2].clone()
    ones = torch.ones_like(full)
    zero = torch.zeros(2, dtype=torch.long)
    _, objectives = per_rollout_gradients(model, full)
    assert torch.allclose(objectives, _hand_objectives(model, full, ones, zero, "mean"), rtol=1e-9, atol=0)
    _, objectives = per_rollout_gradients(model, full, aggregation="constant")
    assert torch.allclose(objectives, _hand_objectives(model, full, ones, zero, "constant", 11.0), rtol=1e-9, atol=0)
    _, objectives = per_rollout_gradients(model, ids, mask, start, "constant")
    assert torch.allclose(objectives, _hand_objectives(model, ids, mask, start, "constant", 11.0 - 2), rtol=1e-9,
                          atol=0)


def test_naive_loop_error_messages_and_single_token_rows():
    """The loop's own checks, verbatim: a row whose real tokens are not one run, a row without real
    tokens, a mean over no completion token, an unknown aggregation or mode. A row of one real token is
    fine under "sum" (l = 0), and a completion of one token under "mean"."""
    from grpo_verify.gram.reference import per_rollout_gradients
    model = _tiny()
    ids = torch.randint(1, 40, (2, 6), generator=torch.Generator().manual_seed(4))
    contiguous = "each row's real tokens must be one contiguous run (left or right padding)"
    cases = [
        (dict(attention_mask=torch.tensor([[1, 1, 0, 1, 1, 1], [1] * 6]), aggregation="sum"), contiguous),
        (dict(attention_mask=torch.tensor([[0] * 6, [1] * 6]), aggregation="sum"), contiguous),
        (dict(completion_start=torch.tensor([6, 2]), aggregation="mean"),
         "aggregation='mean' needs >= 1 completion token per rollout"),
        (dict(aggregation="median"), "unknown aggregation 'median'"),
        (dict(mode="both"), "mode must be 'loop' or 'batched', got 'both'"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as err:
            per_rollout_gradients(model, ids, **kwargs)
        assert str(err.value) == message, kwargs
    single = torch.tensor([[0, 0, 0, 0, 0, 1], [1] * 6])
    store, objectives = per_rollout_gradients(model, ids, single, 0, "sum")
    assert objectives[0].item() == 0.0 and all(bool((g[0] == 0).all()) for g in store.values())
    _, objectives = per_rollout_gradients(model, ids, None, torch.tensor([5, 5]), "mean")
    assert torch.allclose(objectives, _hand_objectives(model, ids, torch.ones_like(ids), torch.tensor([5, 5]), "mean"),
                          rtol=1e-9, atol=0)


def test_batched_reference_equals_the_loop_with_left_padding():
    """mode="batched" (one padded forward with the mask and real-token positions) gives the loop's
    per-rollout gradients on left-padded rows, for "constant" with a given constant too; its
    objectives are float64 for a float32 model, as the loop's."""
    from grpo_verify.gram.reference import per_rollout_gradients
    model = _tiny()
    ids, mask, start = _left_padded()
    for aggregation, constant in [("mean", None), ("constant", 2.5)]:
        loop, l_loop = per_rollout_gradients(model, ids, mask, start, aggregation, constant)
        batched, l_batched = per_rollout_gradients(model, ids, mask, start, aggregation, constant, mode="batched")
        assert _rel(l_batched, l_loop) < 1e-6
        for name in loop:
            assert _rel(batched[name], loop[name]) < 1e-6, name
    model32 = _tiny(F32)
    for mode in ("loop", "batched"):
        _, objectives = per_rollout_gradients(model32, ids, mask, start, "mean", mode=mode)
        assert objectives.dtype == F64, mode


def test_reference_gradients_of_an_unused_parameter_are_zero():
    """A trainable parameter the forward never reads has a zero per-rollout gradient in both modes
    (autograd is asked with allow_unused)."""
    from grpo_verify.gram.reference import per_rollout_gradients
    model = _tiny(extra=True)
    ids, mask, start = _left_padded()
    for mode in ("loop", "batched"):
        store, _ = per_rollout_gradients(model, ids, mask, start, "sum", mode=mode)
        assert torch.equal(store["extra"], torch.zeros(4, 3, dtype=F64)), mode
        assert bool((store["lm_head.weight"] != 0).any())


def test_gram_from_gradients_with_advantages_from_a_list():
    """K = G G^T summed over parameters, and sum_i A_i g_i in float64 for advantages given as a Python
    list and gradients stored in float32 (small integers: exact)."""
    from grpo_verify.gram.reference import gram_from_gradients
    store = {"a": torch.tensor([[1.0, 2.0], [0.0, -1.0]], dtype=F32), "b": torch.tensor([[3.0], [1.0]], dtype=F64)}
    result = gram_from_gradients(store, torch.zeros(2, dtype=F64), advantages=[2, -1])
    assert torch.equal(result.K, torch.tensor([[14.0, 1.0], [1.0, 2.0]], dtype=F64))
    assert set(result.grpo_gradients) == {"a", "b"}
    assert result.grpo_gradients["a"].dtype == F64
    assert torch.equal(result.grpo_gradients["a"], torch.tensor([2.0, 5.0], dtype=F64))
    assert torch.equal(result.grpo_gradients["b"], torch.tensor([5.0], dtype=F64))


def test_naive_gram_passes_its_options_through():
    """naive_gram: the GRPO gradient sum_i A_i g_i in each parameter's shape, equal to autograd of
    sum_i A_i l_i with the hand-written l_i; a given constant; store_dtype=float32 rounds the stored
    gradients (K changes by float32 round-off, about 1e-8, not more); its defaults (start 0, "mean")."""
    from grpo_verify.gram import naive_gram
    model = _tiny()
    ids, mask, start = _left_padded()
    adv = [1.5, -1.0, 0.5, -2.0]
    result = naive_gram(model, ids, mask, start, "sum", advantages=adv)
    surrogate = (torch.tensor(adv, dtype=F64) * _hand_objectives(model, ids, mask, start, "sum")).sum()
    names = [n for n, p in model.named_parameters()]
    grads = torch.autograd.grad(surrogate, [p for _, p in model.named_parameters()])
    assert set(result.grpo_gradients) == set(names)
    for name, g in zip(names, grads):
        assert result.grpo_gradients[name].shape == g.shape
        assert _rel(result.grpo_gradients[name], g) < 1e-6, name
    const = naive_gram(model, ids, mask, start, "constant", constant=2.5)
    assert torch.allclose(const.objectives, _hand_objectives(model, ids, mask, start, "constant", 2.5),
                          rtol=1e-9, atol=0)
    k64 = naive_gram(model, ids, mask, start, "sum").K
    k32 = naive_gram(model, ids, mask, start, "sum", store_dtype=F32).K
    assert not torch.equal(k32, k64) and float((k32 - k64).abs().max() / k64.abs().max()) < 1e-6
    full = ids[:2]
    default = naive_gram(model, full)
    assert torch.allclose(default.objectives, _hand_objectives(model, full, torch.ones_like(full),
                                                                torch.zeros(2, dtype=torch.long), "mean"),
                          rtol=1e-9, atol=0)
    default_constant = naive_gram(model, full, aggregation="constant")
    assert torch.allclose(default_constant.objectives,
                          _hand_objectives(model, full, torch.ones_like(full), torch.zeros(2, dtype=torch.long),
                                           "constant", 11.0), rtol=1e-9, atol=0)


def test_func_gram_equals_the_naive_loop_with_its_options():
    """torch.func's per-sample gradients on left-padded rows (real-token positions, the mask) equal
    the naive loop's; with groups; "constant" with the default constant L - min start, and with a
    given one; the defaults (no mask, start 0, "mean"); objectives are float64 zeros (not computed)."""
    from grpo_verify.gram import func_gram, naive_gram
    model = _tiny()
    ids, mask, start = _left_padded()

    def close(a, b):
        return _rel(a, b) < 1e-6  # see _rel

    func = func_gram(model, ids, mask, start, "constant", groups="layer")
    loop = naive_gram(model, ids, mask, start, "constant", constant=11.0 - 2, groups="layer")
    assert close(func.K, loop.K)
    assert func.groups is not None and set(func.groups) == set(loop.groups)
    assert all(close(func.groups[k], loop.groups[k]) for k in loop.groups)
    assert func.objectives.dtype == F64 and torch.equal(func.objectives, torch.zeros(4, dtype=F64))
    assert close(func_gram(model, ids, mask, start, "constant", constant=2.5).K,
                 naive_gram(model, ids, mask, start, "constant", constant=2.5).K)
    full = ids[:2]
    assert close(func_gram(model, full).K, naive_gram(model, full, None, 0, "mean").K)
    assert close(func_gram(model, full, aggregation="constant").K,
                 naive_gram(model, full, None, 0, "constant", constant=11.0).K)


class _AbsolutePositionLM(nn.Module):
    """A causal LM with absolute position embeddings and one attention layer, so that both the mask
    and the positions change its logits on left-padded rows (RoPE in the Llama models here only sees
    position differences, and transformers masks pads itself from packed-sequence positions).
    Accepts a 2-D mask or func_gram's 4-D additive mask; masked scores get finfo.min (no NaN rows)."""

    def __init__(self, vocab: int = 40, width: int = 8, length: int = 16):
        super().__init__()
        torch.manual_seed(3)
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(length, width)
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width, bias=False)  # a key bias has a zero gradient (softmax shift)
        self.head = nn.Linear(width, vocab)
        self.double()

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=None):
        n, length = input_ids.shape
        if position_ids is None:
            position_ids = torch.arange(length)[None].expand(n, length)
        h = self.embed(input_ids) + self.pos(position_ids)
        scores = self.q(h) @ self.k(h).transpose(1, 2) / 8 ** 0.5
        if attention_mask is not None and attention_mask.ndim == 4:
            scores = scores + attention_mask[:, 0]
        else:
            allowed = torch.tril(torch.ones(length, length, dtype=torch.bool))
            if attention_mask is not None:
                allowed = allowed & attention_mask.bool()[:, None, :]
            scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
        h = h + torch.softmax(scores, dim=-1) @ h
        return type("Output", (), {"logits": self.head(torch.tanh(h))})()


def test_batched_and_func_references_use_the_mask_and_real_token_positions():
    """On left-padded rows, a model with absolute positions: the batched reference and torch.func
    pass the attention mask and the real-token positions (0 at the first real token), so they equal
    the loop, which runs each unpadded row alone at positions 0..n-1."""
    from grpo_verify.gram import func_gram, naive_gram
    from grpo_verify.gram.reference import per_rollout_gradients
    model = _AbsolutePositionLM()
    ids, mask, start = _left_padded()
    loop, l_loop = per_rollout_gradients(model, ids, mask, start, "mean")
    batched, l_batched = per_rollout_gradients(model, ids, mask, start, "mean", mode="batched")
    assert _rel(l_batched, l_loop) < 1e-10  # float64 throughout: only summation order differs
    for name in loop:
        assert _rel(batched[name], loop[name]) < 1e-10, name
    assert _rel(func_gram(model, ids, mask, start, "mean").K, naive_gram(model, ids, mask, start, "mean").K) < 1e-10


# -- engine ---------------------------------------------------------------------------------------


class _Pair(tuple):
    """A namedtuple-like output (has _fields), read by attribute downstream."""
    _fields = ("h", "g")

    def __new__(cls, h, g):
        return super().__new__(cls, (h, g))

    h = property(lambda self: self[0])
    g = property(lambda self: self[1])


class _TupleEmbed(nn.Module):
    """A root (its input is token ids) without a rule that returns a tuple."""

    def __init__(self, vocab, width):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(vocab, width, dtype=F64))

    def forward(self, ids):
        e = self.weight[ids]
        return e, 0.5 * e


class _ListPositions(nn.Module):
    """A root without a rule that returns a list."""

    def __init__(self, length, width):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(length, width, dtype=F64))

    def forward(self, positions):
        return [self.weight[positions]]


class _TwoOutputs(nn.Module):
    """Two outputs that both reach the loss, in a namedtuple-like container."""

    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.3 * torch.randn(width, dtype=F64))

    def forward(self, h):
        return _Pair(h * self.weight, torch.tanh(h) * self.weight)


class _KeywordMix(nn.Module):
    """Called with keyword arguments: a list (a batched tensor and a number) and a dict of an (R,) tensor."""

    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.3 * torch.randn(width, dtype=F64))

    def forward(self, h, extras=None, scales=None):
        return h + torch.tanh(h * self.weight * extras[0] * extras[1]) * scales["s"][:, None, None]


class _SharedGate(nn.Module):
    """No rule; reads another module's Linear weight (so that weight has a factor and a dense block)."""

    def __init__(self, linear):
        super().__init__()
        self.weight = linear.weight

    def forward(self, h):
        return h + 0.1 * torch.tanh(h @ self.weight.T)


class _EngineLM(nn.Module):
    """Vocabulary 5, width 3 (odd sizes). Every kind of use the engine must handle: root modules
    returning a tuple and a list, a namedtuple-like output of two used tensors, keyword inputs
    (list, dict), a LayerNorm used twice (two dense uses), a Linear whose weight is also read by a
    module without a rule (a factor and a dense block), a Linear with a frozen bias, a Linear whose
    output never reaches the loss, a module that is never called, and an odd-sized LM head."""

    def __init__(self, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = _TupleEmbed(5, 3)
        self.pos = _ListPositions(8, 3)
        self.norm = nn.LayerNorm(3).to(F64)
        self.two = _TwoOutputs(3)
        self.mix = _KeywordMix(3)
        self.proj = nn.Linear(3, 3).to(F64)
        self.proj.bias.requires_grad_(False)
        self.gate = _SharedGate(self.proj)
        self.dead = nn.Linear(3, 3).to(F64)
        self.spare = nn.Linear(2, 2).to(F64)
        self.head = nn.Linear(3, 5).to(F64)
        with torch.no_grad():
            self.norm.weight.add_(0.3 * torch.randn(3, dtype=F64))
            self.norm.bias.add_(0.3 * torch.randn(3, dtype=F64))

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=None):
        rollouts, length = input_ids.shape
        if position_ids is None:
            position_ids = torch.arange(length)[None].expand(rollouts, length)
        real = attention_mask.sum(1) if attention_mask is not None else torch.full((rollouts,), length)
        e, e2 = self.embed(input_ids)
        (p,) = self.pos(position_ids)
        h = self.norm(e + p)
        pair = self.two(h)
        h = self.mix(pair.h + pair.g, extras=[e2, 3.0], scales={"s": real.to(F64) / 10})
        h = self.gate(self.proj(h))
        self.dead(h)
        h = self.norm(h)
        return type("Output", (), {"logits": self.head(torch.tanh(h))})()


def _engine_batch():
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(0, 5, (3, 6), generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1]])
    return ids, mask, torch.tensor([2, 3, 2])


def test_engine_equals_the_naive_loop_on_every_kind_of_use():
    """K, every per-parameter Gram matrix, the GRPO and weighted gradients and the bookkeeping
    (strategies, rules, dtypes) of rollout_gram equal the naive per-rollout loop on _EngineLM, for
    each strategy. Unused parameters (spare) get K = 0, strategy "unused", rule "none" and zero
    weighted gradients in the product dtype; the frozen bias is not a parameter of theta."""
    from grpo_verify.gram import naive_gram, rollout_gram
    model = _EngineLM()
    ids, mask, start = _engine_batch()
    adv = torch.tensor([1.0, -2.0, 0.5], dtype=F64)
    naive = naive_gram(model, ids, mask, start, "sum", advantages=adv)
    ones = naive_gram(model, ids, mask, start, "sum", advantages=torch.ones(3, dtype=F64)).grpo_gradients
    for strategy in ("auto", "ghost", "materialise"):
        result = rollout_gram(model, ids, mask, start, "sum", advantages=adv, weightings={"ones": torch.ones(3)},
                              strategy=strategy)
        assert _rel(result.K, naive.K) < 1e-10, strategy
        assert set(result.per_parameter) == set(naive.per_parameter) and "proj.bias" not in result.per_parameter
        for name, k in naive.per_parameter.items():
            if float(k.abs().max()) == 0:
                assert float(result.per_parameter[name].abs().max()) == 0, (strategy, name)
            else:
                assert _rel(result.per_parameter[name], k) < 1e-10, (strategy, name)
            for got, want in ((result.grpo_gradients[name], naive.grpo_gradients[name]),
                              (result.weighted_gradients["ones"][name], ones[name])):
                assert got.dtype == F64 and got.shape == want.shape, (strategy, name)
                assert float((got - want).abs().max()) <= 1e-10 * max(float(want.abs().max()), 1.0), (strategy, name)
        assert result.strategies["spare.weight"] == "unused" and result.rules["spare.weight"] == "none"
        assert result.rules["head.weight"] == "linear_rule" and result.rules["embed.weight"] == "exact_fallback"
        assert result.rules["proj.weight"] == "exact_fallback,linear_rule"
        assert result.strategies["proj.weight"] == "materialise"  # a dense block: never the ghost form
        assert result.strategies["norm.weight"] == "dense"
        assert result.singular_values is None
    assert float(naive.per_parameter["dead.weight"].abs().max()) == 0  # the dead branch really is dead


def test_engine_contracts_each_use_during_the_backward():
    """A use is contracted as soon as all its outputs have their gradients (so activations are
    dropped early): when flush() starts after the backward, the only pending use is the one whose
    output never got a gradient (dead), and the only accumulators not finalised are dead's and the
    never-called spare's."""
    from grpo_verify.gram import engine as gram_engine, rollout_gram
    seen = {}
    honest = gram_engine._GramEngine.flush

    def flush(self):
        seen["pending"] = [(type(u.module).__name__, u.module is model.dead) for u in self.uses]
        seen["open"] = sorted(self.names[pid] for pid, acc in self.acc.items() if acc.open_uses >= 0)
        return honest(self)

    model = _EngineLM()
    ids, mask, start = _engine_batch()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gram_engine._GramEngine, "flush", flush)
        rollout_gram(model, ids, mask, start, "sum")
    assert seen == {"pending": [("Linear", True)], "open": ["dead.bias", "dead.weight", "spare.bias", "spare.weight"]}


class _DimLM(nn.Module):
    """Embedding (V = 5, d) -> Linear mid (d -> d0, no bias) -> tanh -> Linear head (d0 -> 5, no bias)."""

    def __init__(self, d: int, d0: int):
        super().__init__()
        torch.manual_seed(1)
        self.embed = nn.Embedding(5, d).to(F64)
        self.mid = nn.Linear(d, d0, bias=False).to(F64)
        self.head = nn.Linear(d0, 5, bias=False).to(F64)

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=None):
        return type("Output", (), {"logits": self.head(torch.tanh(self.mid(self.embed(input_ids))))})()


def test_auto_strategy_compares_the_closed_form_costs_with_the_weightings():
    """One rollout of T = 2 positions (R T = 2). mid = Linear(4 -> 2): ghost (R T)^2 (d0 + d1) = 24,
    materialise R T d0 d1 + R^2 d0 d1 = 24, a tie, which "auto" resolves to materialise; one
    weighting adds R T d0 d1 = 16 to ghost and R d0 d1 = 8 to materialise (40 > 32: materialise).
    mid = Linear(16 -> 16) with two weightings: ghost 4 * 32 + 2 * 512 = 1152 < materialise
    768 + 2 * 256 = 1280: ghost; without weightings 128 < 768: ghost."""
    from grpo_verify.gram import naive_gram, rollout_gram
    ids = torch.tensor([[1, 3]])
    tie = _DimLM(4, 2)
    assert rollout_gram(tie, ids, None, 0, "sum").strategies["mid.weight"] == "materialise"
    assert rollout_gram(tie, ids, None, 0, "sum", advantages=[1.0]).strategies["mid.weight"] == "materialise"
    wide = _DimLM(16, 16)
    for weightings in (None, {"a": [1.0], "b": [2.0]}):
        result = rollout_gram(wide, ids, None, 0, "sum", weightings=weightings)
        assert result.strategies["mid.weight"] == "ghost", weightings
        assert _rel(result.K, naive_gram(wide, ids, None, 0, "sum").K) < 1e-10


def test_engine_asks_for_the_product_and_accumulate_dtypes(monkeypatch):
    """A float64 model with product_dtype=float32: every ghost contraction (self and tied cross
    terms) and every dense Gram is asked for float32 products summed in float64."""
    from test_gram import batch, tiny_llama
    from grpo_verify.gram import rollout_gram
    asked = []
    ghost, dense = contract.ghost_cross, contract.dense_gram

    def ghost_cross(u, v, dtype, chunk_elements, accumulate=None):
        asked.append(("ghost", u is v, dtype, accumulate))
        return ghost(u, v, dtype, chunk_elements, accumulate)

    def dense_gram(block, dtype, chunk_elements, accumulate=None):
        asked.append(("dense", True, dtype, accumulate))
        return dense(block, dtype, chunk_elements, accumulate)

    monkeypatch.setattr(contract, "ghost_cross", ghost_cross)
    monkeypatch.setattr(contract, "dense_gram", dense_gram)
    ids, mask, start = batch("right")
    rollout_gram(tiny_llama(True), ids, mask, start, "mean", strategy="ghost", product_dtype=F32)
    assert {kind for kind, *_ in asked} == {"ghost", "dense"} and ("ghost", False, F32, F64) in asked
    assert {(dtype, accumulate) for _, _, dtype, accumulate in asked} == {(F32, F64)}


def test_rollout_gram_messages_verbatim():
    """The errors a user sees: a bad strategy or unknown, a module without a rule under
    unknown='error', advantages or a weighting of the wrong length, a model producing NaN."""
    from grpo_verify.gram import rollout_gram
    model = _EngineLM()
    ids, mask, start = _engine_batch()
    cases = [
        (dict(strategy="fast"), ValueError, "strategy must be 'auto', 'ghost' or 'materialise', got 'fast'"),
        (dict(unknown="skip"), ValueError, "unknown must be 'exact' or 'error', got 'skip'"),
        (dict(unknown="error"), TypeError, "no Gram rule for _TupleEmbed (owns ['weight']); register one in "
                                           "grpo_verify.gram.layers or pass unknown='exact'"),
        (dict(advantages=[1.0, 2.0]), ValueError, "advantages must have shape (3,), got (2,)"),
        (dict(weightings={"w": torch.ones(4)}), ValueError, "weighting 'w' must have shape (3,), got (4,)"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error) as err:
            rollout_gram(model, ids, mask, start, "sum", **kwargs)
        assert str(err.value) == message, kwargs
    broken = _DimLM(2, 2)
    with torch.no_grad():
        broken.head.weight.fill_(float("nan"))
    with pytest.raises(FloatingPointError) as err:
        rollout_gram(broken, torch.tensor([[1, 2], [3, 4]]), None, 0, "sum")
    assert str(err.value) == (
        "non-finite rollout objectives [nan, nan]: the model's forward produced NaN/inf (e.g. transformers' eager "
        "attention in float64 with left padding turns fully masked pad rows into NaN, which then leaks through 0 * NaN)")


def test_rollout_gram_defaults_and_options():
    """Defaults: no mask (every token real), start 0, aggregation "mean", no singular values, the
    parameters frozen during the pass (skip_weight_grads); "constant" defaults to the padded length
    and takes a given constant; skip_weight_grads=False gives the same K; Python-float advantages are
    taken in float64; a float32 model's objectives are returned in float64."""
    from grpo_verify.gram import naive_gram, rollout_gram
    model = _DimLM(3, 3)
    ids = torch.tensor([[1, 3, 2, 4], [0, 2, 2, 1]])
    frozen = []
    handle = model.head.register_forward_hook(lambda m, i, o: frozen.append(m.weight.requires_grad))
    default = rollout_gram(model, ids)
    handle.remove()
    assert frozen == [False] and model.head.weight.requires_grad
    assert _rel(default.K, naive_gram(model, ids, None, 0, "mean").K) < 1e-10
    assert _rel(rollout_gram(model, ids, aggregation="constant").K,
                naive_gram(model, ids, None, 0, "constant", constant=4.0).K) < 1e-10
    assert _rel(rollout_gram(model, ids, None, 1, "constant", constant=2.5).K,
                naive_gram(model, ids, None, 1, "constant", constant=2.5).K) < 1e-10
    unfrozen = rollout_gram(model, ids, None, 1, "sum", skip_weight_grads=False)
    assert _rel(unfrozen.K, naive_gram(model, ids, None, 1, "sum").K) < 1e-10
    adv = [0.1, -0.7]  # not float32 numbers
    result = rollout_gram(model, ids, None, 1, "sum", advantages=adv)
    assert result.singular_values is None
    want = naive_gram(model, ids, None, 1, "sum", advantages=adv).grpo_gradients
    for name, g in want.items():
        assert _rel(result.grpo_gradients[name], g) < 1e-13, name
    model32 = _DimLM(3, 3).to(F32)
    assert rollout_gram(model32, ids).objectives.dtype == F64


def test_rollout_gram_with_an_unused_trainable_parameter_and_no_batch_gradients():
    """skip_weight_grads=False differentiates every trainable parameter, one of which the forward
    never reads (allow_unused); if that is the only trainable one, the objectives do not require
    grad and no backward is run: K = 0, strategy "unused"."""
    from grpo_verify.gram import naive_gram, rollout_gram
    model = _DimLM(3, 3)
    model.spare = nn.Linear(2, 2).to(F64)
    ids = torch.tensor([[1, 3, 2, 4], [0, 2, 2, 1]])
    result = rollout_gram(model, ids, None, 1, "sum", skip_weight_grads=False)
    assert _rel(result.K, naive_gram(model, ids, None, 1, "sum").K) < 1e-10
    for p in model.parameters():
        p.requires_grad_(False)
    model.spare.weight.requires_grad_(True)
    only = rollout_gram(model, ids, None, 1, "sum", skip_weight_grads=False)
    assert torch.equal(only.K, torch.zeros(2, 2, dtype=F64)) and only.strategies == {"spare.weight": "unused"}


# -- engine helpers and loss ------------------------------------------------------------------------


def test_group_of_labels():
    from grpo_verify.gram.engine import group_of
    name = "model.layers.3.self_attn.q_proj.weight"
    assert group_of(name, "parameter") == name
    assert group_of(name, "module") == "model.layers.3.self_attn.q_proj"
    assert group_of("lm head.weight", "module") == "lm head"
    assert group_of("bias", "module") == "bias"
    assert group_of(name, "layer") == "model.layers.3"
    assert group_of("model.norm.weight", "layer") == "model.norm"
    assert group_of("scale", "layer") == "scale"
    assert group_of(name, "type") == "self_attn.q_proj.weight"
    assert group_of("model.norm.weight", "type") == "model.norm.weight"
    assert group_of(name, lambda n: n[:5]) == "model"
    with pytest.raises(ValueError) as err:
        group_of(name, "block")
    assert str(err.value) == "groups must be None, 'parameter', 'module', 'layer', 'type' or a callable, got 'block'"


def _gram_result():
    """K = diag(1, 1e-5, 0): layer 0 holds both (singular values 1 and 3.2e-3), lm_head none."""
    from grpo_verify.gram.engine import GramResult
    parts = {"model.layers.0.a.weight": torch.diag(torch.tensor([1.0, 0.0, 0.0], dtype=F64)),
             "model.layers.0.b.weight": torch.diag(torch.tensor([0.0, 1e-5, 0.0], dtype=F64)),
             "lm_head.weight": torch.zeros(3, 3, dtype=F64)}
    return GramResult(K=sum(parts.values()), per_parameter=parts, objectives=torch.zeros(3, dtype=F64))


def test_rank_metrics_use_the_relative_tolerance():
    """Singular values 1 and 3.2e-3: both count at the default tolerance, only 1 at relative 1e-2,
    for K and for the layer-0 group."""
    result = _gram_result()
    assert result.rank_metrics().tolerance_rank == 2
    assert result.rank_metrics(relative_tolerance=1e-2).tolerance_rank == 1
    assert {k: m.tolerance_rank for k, m in result.group_rank_metrics().items()} == {"model.layers.0": 2,
                                                                                   "lm_head": 0}
    groups = result.group_rank_metrics(relative_tolerance=1e-2)
    assert {k: m.tolerance_rank for k, m in groups.items()} == {"model.layers.0": 1, "lm_head": 0}


def test_group_rank_metrics_default_grouping():
    """No spec: the result's own groups if it has them, else by layer; a spec regroups."""
    result = _gram_result()
    assert set(result.group_rank_metrics()) == {"model.layers.0", "lm_head"}
    result.groups = {"all": result.K.clone()}
    assert set(result.group_rank_metrics()) == {"all"}
    assert result.group_rank_metrics()["all"].tolerance_rank == 2
    assert set(result.group_rank_metrics("type")) == {"a.weight", "b.weight", "lm_head.weight"}
    assert set(result.group_rank_metrics("parameter")) == set(result.per_parameter)


def test_relative_error_and_matrix_singular_values():
    from grpo_verify.gram.engine import matrix_singular_values, relative_error
    assert relative_error([3, 4], [0, 0]) == 5.0
    assert relative_error([0.0, 0.0], [0.0, 0.0]) == 0.0
    assert relative_error([1, 1], [1, 0]) == 1.0
    assert relative_error(torch.tensor([0.0, 0.1]), torch.tensor([0.0, 0.5])) == pytest.approx(0.8, rel=1e-7)
    assert relative_error(torch.tensor([True, False]), torch.tensor([1.0, 1.0])) == pytest.approx(2 ** -0.5, rel=1e-15)
    sv = matrix_singular_values({"m": torch.tensor([[3.0, 0.0], [0.0, 4.0]], dtype=F32), "v": torch.ones(3)})
    assert set(sv) == {"m"} and sv["m"].dtype == F64 and sv["m"].tolist() == [4.0, 3.0]


def test_completion_start_and_weights():
    """as_completion_start: a long tensor (R,), from an int or R ints; the exact errors for a wrong
    shape or a start outside [0, L] (L itself allowed: an empty completion). completion_weights:
    mean by default; the exact errors; sum weights 1; constant weights 1 / C for C > 0 only."""
    from grpo_verify.gram import loss
    assert loss.as_completion_start(torch.tensor([1, 2], dtype=torch.int32), 2, 4).dtype == torch.long
    assert loss.as_completion_start([1.0, 3.0], 2, 4).tolist() == [1, 3]
    assert loss.as_completion_start(4, 2, 4).tolist() == [4, 4]
    for args, message in [(([1, 2, 3], 2, 4), "completion_start must be a scalar or have shape (2,), got (3,)"),
                          (([-1, 2], 2, 4), "completion_start must lie in [0, 4], got [-1, 2]"),
                          (([1, 5], 2, 4), "completion_start must lie in [0, 4], got [1, 5]")]:
        with pytest.raises(ValueError) as err:
            loss.as_completion_start(*args)
        assert str(err.value) == message
    ids = torch.zeros(2, 5, dtype=torch.long)
    assert loss.default_constant(ids, 4) == 1.0 and loss.default_constant(ids, 5) == 1.0
    mask = torch.tensor([[1, 1, 1, 1], [0, 1, 1, 1]])
    assert torch.equal(loss.completion_weights(mask, 1), torch.tensor([[0, 1 / 3, 1 / 3, 1 / 3], [0, 0, 0.5, 0.5]],
                                                                      dtype=F64))
    assert torch.equal(loss.completion_weights(mask, 2, "sum"), torch.tensor([[0, 0, 1, 1], [0, 0, 1, 1.0]], dtype=F64))
    assert torch.equal(loss.completion_weights(mask, 3, "constant", 0.5), torch.tensor([[0, 0, 0, 2], [0, 0, 0, 2.0]],
                                                                                        dtype=F64))
    for args, message in [((mask, 0, "median"),
                           "aggregation must be one of ('mean', 'sum', 'constant'), got 'median'"),
                          ((mask, 4, "mean"), "aggregation='mean' needs >= 1 completion token per rollout, got counts "
                                              "[0, 0]"),
                          ((mask, 0, "constant"), "aggregation='constant' needs a positive constant, got None"),
                          ((mask, 0, "constant", 0.0), "aggregation='constant' needs a positive constant, got 0.0"),
                          ((mask, 0, "constant", -1.0), "aggregation='constant' needs a positive constant, got -1.0")]:
        with pytest.raises(ValueError) as err:
            loss.completion_weights(*args)
        assert str(err.value) == message


def test_rollout_objectives_are_in_the_dtype_of_the_log_probabilities():
    """float32 logits, float64 weights 1/3: l = sum_t w log p comes back in float32, the dtype of the
    log-probabilities (uniform logits over 2 tokens: log p = -log 2, l = -log 2)."""
    from grpo_verify.gram import loss
    logits = torch.zeros(1, 4, 2, dtype=F32)
    ids = torch.tensor([[0, 1, 0, 1]])
    weights = torch.tensor([[0.0, 1 / 3, 1 / 3, 1 / 3]], dtype=F64)
    got = loss.rollout_objectives(logits, ids, weights)
    assert got.dtype == F32
    assert abs(got.item() + 0.6931471805599453) < 1e-6  # -log 2, to float32 round-off


class _NamedEmbed(nn.Module):
    """A root module (its input is token ids) that returns a namedtuple, or a dict."""

    def __init__(self, as_dict: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(5, 3, dtype=F64))
        self.as_dict = as_dict

    def forward(self, ids):
        from collections import namedtuple
        e = self.weight[ids]
        return {"h": e} if self.as_dict else namedtuple("Embedded", "h")(e)


class _NamedRootLM(nn.Module):
    def __init__(self, as_dict: bool):
        super().__init__()
        torch.manual_seed(0)
        self.embed = _NamedEmbed(as_dict)
        self.head = nn.Linear(3, 5).to(F64)

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=None):
        out = self.embed(input_ids)
        h = out["h"] if isinstance(out, dict) else out.h
        return type("Output", (), {"logits": self.head(torch.tanh(h))})()


@pytest.mark.parametrize("as_dict", [False, True], ids=["namedtuple", "dict"])
def test_a_root_module_returning_a_namedtuple_or_dict_is_differentiated(as_dict):
    """Bug found by the _reroot survivors: with the parameters frozen for the pass, a root module's
    outputs are made graph roots - but a namedtuple (or dict) output was returned as it was, so no
    gradient reached it and its parameters' Gram block was silently 0 (K too small). Now the
    namedtuple is rebuilt with its type and a dict updated in place, and K equals the naive loop."""
    from grpo_verify.gram import naive_gram, rollout_gram
    model = _NamedRootLM(as_dict)
    ids = torch.tensor([[1, 2, 3], [4, 0, 2]])
    result = rollout_gram(model, ids, None, 0, "sum")
    naive = naive_gram(model, ids, None, 0, "sum")
    assert float(naive.per_parameter["embed.weight"].abs().max()) > 0.1
    assert _rel(result.per_parameter["embed.weight"], naive.per_parameter["embed.weight"]) < 1e-10
    assert _rel(result.K, naive.K) < 1e-10


# -- contract.row_gram and _cast --------------------------------------------------------------------


def _row_gram_ops(rows, accumulate):
    with OpLog() as log:
        out = contract.row_gram(rows, accumulate)
    copies = [shapes[0] for shapes in log.shapes("_to_copy", rows.dtype)]
    return out, copies, bool(log.shapes("bmm"))


def test_row_gram_blocks_only_rows_of_lower_precision_with_a_whole_block():
    """float32 rows, float64 sums: blocks of 128 columns are multiplied in float32 (one bmm) and only
    the tail past the last whole block is cast to float64 (300 = 2 * 128 + 44; at exactly 128 columns
    there is no tail); rows of the accumulate dtype, of higher precision or of another format with
    as many bits (bfloat16 rows, float16 sums) are cast once and multiplied in one GEMM. The tail
    product is exact in float64: a tail entry 4097 gives 4097^2 = 2^24 + 8193, not a float32 number."""
    ones = torch.ones(2, 300, dtype=F32)
    out, copies, blocked = _row_gram_ops(ones, F64)
    assert blocked and copies == [(2, 44)] and torch.equal(out, torch.full((2, 2), 300.0, dtype=F64))
    out, copies, blocked = _row_gram_ops(ones[:, :128], F64)
    assert blocked and copies == [] and torch.equal(out, torch.full((2, 2), 128.0, dtype=F64))
    for rows, accumulate in [(torch.ones(2, 256, dtype=F64), F32), (torch.ones(2, 256, dtype=torch.bfloat16),
                                                                    torch.float16)]:
        out, copies, blocked = _row_gram_ops(rows, accumulate)
        assert not blocked and copies == [(2, 256)] and out.dtype == accumulate and float(out[0, 1]) == 256.0
    tail = torch.zeros(1, 129, dtype=F32)
    tail[0, 128] = 4097.0
    assert contract.row_gram(tail, F64).item() == 4097.0 ** 2


def test_cast_leaves_index_tensors_and_matching_dtypes_alone():
    ids = torch.tensor([1, 2])
    assert contract._cast(ids, F32) is ids
    x = torch.ones(2, dtype=F32)
    assert contract._cast(x, None) is x and contract._cast(x, F32) is x
    assert contract._cast(x, F64).dtype == F64


# -- tensors are made on the mask's device, not the default one --------------------------------------
# On a CPU-only machine the mask's device and the default device are both the CPU, so a factory call
# that forgets device= is invisible. With the default device switched to "meta" (shapes, no data) and
# the mask on the CPU, every such call makes a meta tensor, which then fails or leaks into the result.
@pytest.mark.parametrize("aggregation, extra", [("mean", {}), ("sum", {}), ("constant", {"constant": 3.0})])
def test_completion_weights_do_not_depend_on_the_default_device(aggregation, extra):
    from grpo_verify.gram.loss import completion_weights
    mask = torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
    expected = completion_weights(mask, [1, 2], aggregation, **extra)
    with torch.device("meta"):
        got = completion_weights(mask, [1, 2], aggregation, **extra)
        scalar_start = completion_weights(mask, 2, aggregation, **extra)
    assert got.device.type == "cpu" and torch.equal(got, expected)
    assert scalar_start.device.type == "cpu"
    assert torch.equal(scalar_start, completion_weights(mask, 2, aggregation, **extra))


def test_completion_start_is_made_on_the_requested_device():
    from grpo_verify.gram.loss import as_completion_start
    with torch.device("meta"):
        start = as_completion_start([0, 3], 2, 5, device=torch.device("cpu"))
    assert start.device.type == "cpu" and start.tolist() == [0, 3]
