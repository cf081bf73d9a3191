"""The Gram engine equals the naive per-rollout loop, and planted bugs are caught.

Tiny random Llama-like models (float64, hidden 16, 2 layers, GQA) with tied and untied
embeddings, unequal lengths with left and right padding. The naive reference strips each
rollout's padding and runs it alone, so it is independent of the engine's masks and positions.
"""

import math
import os

import pytest
import torch
from torch import nn

transformers = pytest.importorskip("transformers")
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

from grpo_verify.empirical.models import smollm2_gguf
from grpo_verify.gram import (func_gram, naive_gram, relative_error, rollout_gram,  # noqa: E402
                              completion_weights, position_ids_from_mask, rollout_objectives)
from grpo_verify.gram import contract, engine as gram_engine, layers, loss as gram_loss  # noqa: E402
from grpo_verify.gram.reference import per_rollout_gradients  # noqa: E402
from support import padded_rows  # noqa: E402

TOL = 1e-10
VOCAB = 40
PAD = 0


def tiny_llama(tie: bool, attn: str = "sdpa", seed: int = 0, bias: bool = False) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      tie_word_embeddings=tie, pad_token_id=PAD, attention_bias=bias, attn_implementation=attn)
    model = LlamaForCausalLM(cfg).to(torch.float64).eval()
    with torch.no_grad():  # break the init symmetry of norms (ones) so their Gram blocks are generic
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.add_(0.3 * torch.randn_like(p))
    return model


def batch(side: str = "right", seed: int = 1, rollouts: int = 4, length: int = 11):
    """Rows of unequal length (11, 8, 6, 9 real tokens), padded on ``side``; completion starts
    per rollout, as indices into the padded rows."""
    return padded_rows(VOCAB, PAD, side, seed, rollouts, length)


def rel(a, b):
    return relative_error(a, b)


# -- the engine equals the naive loop ---------------------------------------------------------

@pytest.mark.parametrize("tie", [True, False])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("aggregation", ["mean", "sum", "constant"])
def test_engine_equals_naive_loop(tie, side, aggregation):
    model = tiny_llama(tie)
    ids, mask, start = batch(side)
    naive = naive_gram(model, ids, mask, start, aggregation)
    result = rollout_gram(model, ids, mask, start, aggregation)
    assert rel(result.K, naive.K) < TOL
    assert rel(result.objectives, naive.objectives) < TOL
    for name, k in naive.per_parameter.items():
        assert rel(result.per_parameter[name], k) < TOL or float(k.abs().max()) == 0.0, name
    assert result.K.dtype == torch.float64 and torch.allclose(result.K, result.K.T)


@pytest.mark.parametrize("strategy", ["ghost", "materialise"])
@pytest.mark.parametrize("tie", [True, False])
def test_both_strategies_are_exact(strategy, tie):
    model = tiny_llama(tie, bias=True)
    ids, mask, start = batch("left")
    naive = naive_gram(model, ids, mask, start, "mean")
    result = rollout_gram(model, ids, mask, start, "mean", strategy=strategy)
    assert rel(result.K, naive.K) < TOL
    assert set(result.strategies.values()) <= {strategy, "dense"}
    if tie:
        assert result.rules["model.embed_tokens.weight"] == "embedding_rule,linear_rule"


def test_chunking_does_not_change_k():
    model = tiny_llama(True)
    ids, mask, start = batch("right")
    whole = rollout_gram(model, ids, mask, start, "sum", strategy="ghost")
    for strategy in ("ghost", "materialise"):
        tiny = rollout_gram(model, ids, mask, start, "sum", strategy=strategy, chunk_elements=7)
        assert rel(tiny.K, whole.K) < TOL


def test_naive_batched_and_torch_func_agree_with_the_loop():
    # sdpa, not eager: transformers' eager attention takes its softmax in float32 (rounding ~1e-9 between the
    # padded batch and the unpadded rows), so it cannot be held to a float64 tolerance.
    model = tiny_llama(True)
    ids, mask, start = batch("right")
    loop = naive_gram(model, ids, mask, start, "mean")
    batched = naive_gram(model, ids, mask, start, "mean", mode="batched")
    func = func_gram(model, ids, mask, start, "mean")
    assert rel(batched.K, loop.K) < TOL
    assert rel(func.K, loop.K) < TOL
    assert rel(rollout_gram(model, ids, mask, start, "mean").K, loop.K) < TOL


def test_groups_sum_to_the_total_and_match_the_naive_groups():
    model = tiny_llama(True)
    ids, mask, start = batch("left")
    naive = naive_gram(model, ids, mask, start, "mean", groups="layer")
    for spec in ("parameter", "module", "layer", "type", lambda name: name.split(".")[-2]):
        result = rollout_gram(model, ids, mask, start, "mean", groups=spec)
        total = sum(result.groups.values())
        assert rel(total, result.K) < 1e-13
        assert len(result.groups) > 1
    result = rollout_gram(model, ids, mask, start, "mean", groups="layer")
    assert set(result.groups) == {"model.embed_tokens", "model.layers.0", "model.layers.1", "model.norm"}
    for label, k in naive.groups.items():
        assert rel(result.groups[label], k) < TOL
    metrics = result.group_rank_metrics()
    assert set(metrics) == set(result.groups)
    whole = result.rank_metrics()
    assert 1.0 <= whole.effective_rank <= ids.shape[0] + 1e-9


def test_grpo_gradients_equal_autograd():
    """sum_i A_i g_i per parameter equals autograd of sum_i A_i l_i. The advantages are powers of
    two: LlamaRMSNorm computes in float32, and scaling a backward seed by 2^k rounds identically,
    so the two sides agree to float64 round-off (a generic A agrees only to float32's ~1e-7)."""
    for tie in (True, False):
        model = tiny_llama(tie)
        ids, mask, start = batch("left")
        adv = torch.tensor([1.0, -2.0, 0.5, -0.25], dtype=torch.float64)
        result = rollout_gram(model, ids, mask, start, "mean", advantages=adv, singular_values=True)
        weights = completion_weights(mask, start, "mean")
        logits = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask)).logits
        surrogate = (adv * rollout_objectives(logits, ids, weights)).sum()
        names = [n for n, _ in model.named_parameters()]
        grads = torch.autograd.grad(surrogate, [p for _, p in model.named_parameters()])
        for name, g in zip(names, grads):
            assert result.grpo_gradients[name].shape == g.shape
            assert rel(result.grpo_gradients[name], g) < TOL, name
            if g.ndim == 2:
                assert rel(result.singular_values[name], torch.linalg.svdvals(g)) < 1e-9, name


@pytest.mark.parametrize("chunk", [1 << 24, 7])
@pytest.mark.parametrize("strategy", ["auto", "ghost", "materialise"])
def test_weightings_equal_weighted_sums_of_the_naive_per_rollout_gradients(strategy, chunk):
    model = tiny_llama(True, bias=True)
    ids, mask, start = batch("left")
    store, _ = per_rollout_gradients(model, ids, mask, start, "mean")
    g = torch.Generator().manual_seed(5)
    weightings = {"gaussian": torch.randn(4, generator=g, dtype=torch.float64), "ones": torch.ones(4),
                  "one_rollout": torch.tensor([0.0, 0.0, 1.0, 0.0])}
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5], dtype=torch.float64)
    result = rollout_gram(model, ids, mask, start, "mean", strategy=strategy, weightings=weightings,
                          advantages=adv, singular_values=True, chunk_elements=chunk)
    for label, w in [("advantages", adv)] + list(weightings.items()):
        grads = result.grpo_gradients if label == "advantages" else result.weighted_gradients[label]
        for name, rows in store.items():
            got = grads[name]
            assert got.shape == dict(model.named_parameters())[name].shape
            assert got.untyped_storage().nbytes() == got.numel() * got.element_size()  # its own memory
            assert rel(got.reshape(-1), w.to(torch.float64) @ rows) < TOL, (label, name)
            if got.ndim == 2 and label != "advantages":
                assert rel(result.weighted_singular_values[label][name], torch.linalg.svdvals(got)) < 1e-12
    # products in float32 on the float64 model: the cast path, float32-close
    cast = rollout_gram(model, ids, mask, start, "mean", strategy=strategy, weightings=weightings,
                        product_dtype=torch.float32, chunk_elements=chunk)
    for name, rows in store.items():
        assert cast.weighted_gradients["gaussian"][name].dtype == torch.float32
        assert rel(cast.weighted_gradients["gaussian"][name].reshape(-1), weightings["gaussian"] @ rows) < 1e-5
    with pytest.raises(ValueError, match="weighting 'short' must have shape"):
        rollout_gram(model, ids, mask, start, "mean", weightings={"short": torch.ones(3)})


def test_results_are_freed_with_the_result_not_by_the_cycle_collector():
    """The engine's hooks put it in a reference cycle; it must not keep the (possibly GB-sized)
    weighted gradients or activations alive after the caller drops the result."""
    import gc
    import weakref
    model = tiny_llama(True)
    ids, mask, start = batch("right")
    gc.collect()
    gc.disable()
    try:
        res = rollout_gram(model, ids, mask, start, "mean", advantages=torch.tensor([1.0, -1.0, 0.5, -0.5]),
                           weightings={"ones": torch.ones(4)}, singular_values=True)
        held = [next(iter(res.weighted_gradients["ones"].values())), next(iter(res.grpo_gradients.values())),
                next(iter(res.per_parameter.values()))]
        refs = [weakref.ref(t) for t in held]
        del held, res
        assert [r() is None for r in refs] == [True, True, True]
    finally:
        gc.enable()


class Float64RMSNorm(nn.Module):
    """An RMSNorm without a registered rule (forces the exact per-rollout fallback)."""

    def __init__(self, weight: torch.Tensor, eps: float):
        super().__init__()
        self.weight = nn.Parameter(weight.detach().clone())
        self.eps = eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def with_float64_norms(model):
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if type(child).__name__ == "LlamaRMSNorm":
                setattr(module, child_name, Float64RMSNorm(child.weight, child.variance_epsilon))
    return model


def test_exact_fallback_for_an_unknown_module_and_generic_advantages():
    model = with_float64_norms(tiny_llama(True))
    ids, mask, start = batch("right")
    result = rollout_gram(model, ids, mask, start, "sum", advantages=torch.randn(4, dtype=torch.float64))
    assert result.rules["model.norm.weight"] == "exact_fallback"
    assert rel(result.K, naive_gram(model, ids, mask, start, "sum").K) < TOL
    adv = torch.randn(4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    result = rollout_gram(model, ids, mask, start, "sum", advantages=adv)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask)).logits
    surrogate = (adv * rollout_objectives(logits, ids, completion_weights(mask, start, "sum"))).sum()
    grads = torch.autograd.grad(surrogate, list(model.parameters()))
    for (name, _), g in zip(model.named_parameters(), grads):
        assert rel(result.grpo_gradients[name], g) < TOL, name
    with pytest.raises(TypeError, match="Float64RMSNorm"):
        rollout_gram(model, ids, mask, start, "sum", unknown="error")


def test_pad_content_and_pad_token_inside_completions():
    """Pad positions' tokens are irrelevant; the pad id inside a real sequence is handled
    (Embedding(padding_idx) gives that row no gradient)."""
    model = tiny_llama(True)
    ids, mask, start = batch("left")
    ids[1, -2] = PAD  # a real occurrence of the padding id
    base = rollout_gram(model, ids, mask, start, "mean")
    assert rel(base.K, naive_gram(model, ids, mask, start, "mean").K) < TOL
    other = ids.clone()
    other[mask == 0] = 7
    assert rel(rollout_gram(model, other, mask, start, "mean").K, base.K) < TOL


def test_completion_weights_exclude_pads_and_the_first_left_padded_token():
    mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
    w = completion_weights(mask, [0, 2], "sum")
    assert w.tolist() == [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0]]
    assert completion_weights(mask, [0, 2], "mean").sum(1).tolist() == [1.0, 1.0]
    assert completion_weights(mask, [0, 2], "constant", constant=4.0).sum(1).tolist() == [0.75, 0.5]
    assert position_ids_from_mask(mask).tolist() == [[0, 0, 0, 1, 2, 3], [0, 1, 2, 3, 3, 3]]
    with pytest.raises(ValueError):
        completion_weights(mask, [0, 6], "mean")


class TinyLayerNormLM(nn.Module):
    """A causal LM with nn.LayerNorm modules that the LayerNorm rule must handle: token embedding,
    LayerNorm, a causal prefix mean (the context; pads are masked out, so the padded batch and the
    unpadded row see the same context), a Linear, a LayerNorm over two trailing dimensions, an
    affine-free LayerNorm and an LM head. ``bias=False`` drops the LayerNorms' biases."""

    def __init__(self, bias: bool = True, seed: int = 0, width: int = 8):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = nn.Embedding(VOCAB, width)
        self.norm_in = nn.LayerNorm(width, bias=bias)
        self.mix = nn.Linear(2 * width, width)
        self.norm_2d = nn.LayerNorm((2, width // 2), bias=bias)
        self.norm_plain = nn.LayerNorm(width, elementwise_affine=False)
        self.head = nn.Linear(width, VOCAB, bias=False)
        self.double()
        with torch.no_grad():  # generic affine parameters (the defaults are ones and zeros)
            for module in (self.norm_in, self.norm_2d):
                module.weight.add_(0.5 * torch.randn_like(module.weight))
                if module.bias is not None:
                    module.bias.add_(0.5 * torch.randn_like(module.bias))

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=None):
        h = self.norm_in(self.embed(input_ids))
        mask = torch.ones_like(input_ids) if attention_mask is None else attention_mask
        m = mask.to(h.dtype)[..., None]
        context = (h * m).cumsum(dim=1) / m.cumsum(dim=1).clamp(min=1)
        h = torch.tanh(self.mix(torch.cat([h, context], dim=-1)))
        h = self.norm_2d(h.view(*h.shape[:-1], 2, -1)).reshape(h.shape)
        h = self.norm_plain(h)
        return type("Output", (), {"logits": self.head(h)})()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("side", ["right", "left"])
def test_layer_norm_rule_equals_naive_loop(bias, side):
    """The nn.LayerNorm rule (weight: sum over positions of delta * xhat; bias: sum of delta) against
    the naive per-rollout loop, parameter by parameter, and the GRPO gradients against autograd."""
    model = TinyLayerNormLM(bias=bias)
    ids, mask, start = batch(side)
    naive = naive_gram(model, ids, mask, start, "mean")
    adv = torch.tensor([1.0, -2.0, 0.5, -0.25], dtype=torch.float64)
    for strategy in ("ghost", "materialise"):
        result = rollout_gram(model, ids, mask, start, "mean", strategy=strategy, advantages=adv)
        norms = [n for n in result.rules if n.startswith("norm_")]
        assert sorted(norms) == sorted(["norm_in.weight", "norm_2d.weight"]
                                       + (["norm_in.bias", "norm_2d.bias"] if bias else []))
        assert all(result.rules[n] == "layer_norm_rule" for n in norms)
        for name in norms:
            assert float(naive.per_parameter[name].abs().max()) > 0, name
            assert rel(result.per_parameter[name], naive.per_parameter[name]) < TOL, (strategy, name)
        assert rel(result.K, naive.K) < TOL
        weights = completion_weights(mask, start, "mean")
        logits = model(input_ids=ids, attention_mask=mask).logits
        surrogate = (adv * rollout_objectives(logits, ids, weights)).sum()
        grads = torch.autograd.grad(surrogate, list(model.parameters()))
        for (name, _), g in zip(model.named_parameters(), grads):
            assert rel(result.grpo_gradients[name], g) < TOL, name


@pytest.mark.parametrize("side, divisor", [("right", 11 - 2), ("left", 11 - 4)])
def test_constant_aggregation_defaults_to_the_padded_completion_length(side, divisor):
    """aggregation="constant" without a constant divides by L - min_i completion_start[i], the
    longest completion the padded batch can hold. The expected divisor is written out from the
    batch (L = 11; starts 4, 3, 2, 5 with right padding; 4, 6, 7, 7 with left padding), and K is
    compared with the "sum" K divided by divisor^2, so neither side goes through default_constant
    (float64 norms: LlamaRMSNorm's float32 round trip would not scale exactly by 1/divisor)."""
    model = with_float64_norms(tiny_llama(True))
    ids, mask, start = batch(side)
    assert start.tolist() == ([4, 3, 2, 5] if side == "right" else [4, 6, 7, 7])
    assert gram_loss.default_constant(ids, start) == float(divisor)
    summed = naive_gram(model, ids, mask, start, "sum")
    result = rollout_gram(model, ids, mask, start, "constant")
    assert rel(result.K, summed.K / divisor**2) < TOL
    assert rel(result.objectives, summed.objectives / divisor) < TOL
    assert rel(naive_gram(model, ids, mask, start, "constant").K, summed.K / divisor**2) < TOL
    assert rel(result.K, naive_gram(model, ids, mask, start, "constant", constant=float(divisor)).K) < TOL
    weights = completion_weights(mask, start, "constant", constant=float(divisor))
    assert torch.equal(weights * divisor, completion_weights(mask, start, "sum"))


# -- planted bugs must be detected ---------------------------------------------------------------

def test_dropping_the_tied_cross_term_is_detected(monkeypatch):
    model = tiny_llama(True)
    ids, mask, start = batch("right")
    naive = naive_gram(model, ids, mask, start, "mean")
    assert rel(rollout_gram(model, ids, mask, start, "mean", strategy="ghost").K, naive.K) < TOL
    original = contract.ghost_cross
    monkeypatch.setattr(contract, "ghost_cross",
                        lambda u, v, *a: original(u, v, *a) if u is v else 0 * original(u, v, *a))
    planted = rollout_gram(model, ids, mask, start, "mean", strategy="ghost")
    assert rel(planted.K, naive.K) > 1e-3
    # the same bug in the materialised path: only the first use of the tied weight is summed
    monkeypatch.setattr(contract, "ghost_cross", original)
    rows = contract.materialised_rows
    monkeypatch.setattr(contract, "materialised_rows", lambda factors, *a: rows(factors[:1], *a))
    planted = rollout_gram(model, ids, mask, start, "mean", strategy="materialise")
    assert rel(planted.K, naive.K) > 1e-3


def test_a_pad_position_leaking_into_the_loss_is_detected(monkeypatch):
    model = tiny_llama(False)
    ids, mask, start = batch("right")
    naive = naive_gram(model, ids, mask, start, "sum")
    honest = gram_loss.completion_weights

    def leaky(attention_mask, *args, **kwargs):  # forgets the attention mask
        return honest(torch.ones_like(attention_mask), *args, **kwargs)

    monkeypatch.setattr(gram_engine, "completion_weights", leaky)
    assert rel(rollout_gram(model, ids, mask, start, "sum").K, naive.K) > 1e-3


def test_positions_counted_over_pads_only_shift_rope(monkeypatch):
    """Not a bug for a RoPE model: counting positions over left pads shifts every position of a
    row by the same offset, and rotary attention depends on differences only."""
    model = tiny_llama(True)
    ids, mask, start = batch("left")
    naive = naive_gram(model, ids, mask, start, "mean")
    monkeypatch.setattr(gram_engine, "position_ids_from_mask",
                        lambda m: torch.arange(m.shape[1]).expand(m.shape[0], -1))
    assert rel(rollout_gram(model, ids, mask, start, "mean").K, naive.K) < 1e-9


@pytest.mark.parametrize("side", ["right", "left"])
def test_attention_to_pad_positions_is_detected(monkeypatch, side):
    """Plant: the model is called without the attention mask (and without the position ids, from
    whose restarts transformers would otherwise rebuild the row boundaries), so real tokens
    attend to pads."""
    model = tiny_llama(True)
    ids, mask, start = batch(side)
    naive = naive_gram(model, ids, mask, start, "mean")
    forward = model.forward
    monkeypatch.setattr(model, "forward", lambda **kw: forward(**{**kw, "attention_mask": None, "position_ids": None}))
    leaked = rollout_gram(model, ids, mask, start, "mean").K
    if side == "left":  # real tokens now see the pads before them
        assert rel(leaked, naive.K) > 1e-3
    else:  # causal attention never looks right: right pads cannot leak
        assert rel(leaked, naive.K) < TOL


def test_ignoring_the_embedding_padding_idx_is_detected(monkeypatch):
    model = tiny_llama(False)
    ids, mask, start = batch("right")
    ids[0, 6] = PAD
    naive = naive_gram(model, ids, mask, start, "sum")
    assert rel(rollout_gram(model, ids, mask, start, "sum").K, naive.K) < TOL
    rule = layers.embedding_rule

    def no_padding_idx(module, inputs, grads, rollouts):
        saved, module.padding_idx = module.padding_idx, None
        try:
            return rule(module, inputs, grads, rollouts)
        finally:
            module.padding_idx = saved

    monkeypatch.setitem(layers._RULES, nn.Embedding, no_padding_idx)
    planted = rollout_gram(model, ids, mask, start, "sum")
    assert rel(planted.per_parameter["model.embed_tokens.weight"], naive.per_parameter["model.embed_tokens.weight"]) > 1e-6


# -- float32 ------------------------------------------------------------------------------------

def test_float32_model_each_precision_is_close_to_the_float64_truth():
    model = tiny_llama(True)
    ids, mask, start = batch("right")
    truth = naive_gram(model, ids, mask, start, "mean").K
    model32 = model.to(torch.float32)
    naive32 = naive_gram(model32, ids, mask, start, "mean").K
    floor = rel(naive32, truth)  # the float32 model's own rounding
    assert 0 < floor < 1e-4
    for strategy in ("ghost", "materialise"):
        for product, accumulate in ((None, torch.float64), (torch.float64, torch.float64), (None, None)):
            result = rollout_gram(model32, ids, mask, start, "mean", strategy=strategy, product_dtype=product,
                                  accumulate_dtype=accumulate)
            assert result.K.dtype == torch.float64
            assert rel(result.K, truth) < 10 * floor, (strategy, product, accumulate)


def float32_running_gram(rows: torch.Tensor, width: int = contract.GRAM_BLOCK) -> torch.Tensor:
    """rows rows^T for float32 rows, every product and partial sum in float32, in one fixed order
    written out with elementwise operations (no GEMM, no reduction kernel): block sums over
    ``width`` columns added column by column, then a running float32 sum of the block sums. The
    float32 accumulator a buggy engine would use, with the same rounding on every machine."""
    assert rows.dtype == torch.float32
    count, n = rows.shape
    blocks = -(-n // width)
    padded = torch.zeros(count, blocks * width, dtype=torch.float32)
    padded[:, :n] = rows
    columns = padded.view(count, blocks, width)
    block_sums = torch.zeros(count, count, blocks, dtype=torch.float32)
    for k in range(width):
        column = columns[:, :, k]
        block_sums += column[:, None, :] * column[None, :, :]
    total = torch.zeros(count, count, dtype=torch.float32)
    for b in range(blocks):
        total += block_sums[:, :, b]
    return total


def float32_blocks_float64_sum(rows: torch.Tensor, width: int = contract.GRAM_BLOCK) -> torch.Tensor:
    """row_gram's scheme with the least favourable order a GEMM could take inside a block: each
    block sum accumulated sequentially in float32 (written out, elementwise), the block sums added
    in float64. Shows that the bound below does not rely on the BLAS's order inside a block."""
    count, n = rows.shape
    whole = n - n % width
    columns = rows[:, :whole].reshape(count, -1, width)
    block_sums = torch.zeros(count, count, columns.shape[1], dtype=torch.float32)
    for k in range(width):
        column = columns[:, :, k]
        block_sums += column[:, None, :] * column[None, :, :]
    tail = rows[:, whole:].double()
    return block_sums.double().sum(dim=2) + tail @ tail.T


def test_float32_model_k_is_summed_in_float64_by_default(monkeypatch):
    """A 4M-parameter float32 model, every weight materialised: K's dot products are 10^5-10^6
    terms long. By default the engine asks row_gram for float64 sums and agrees with float64
    products to 1e-7; with accumulate_dtype=None it asks for float32 sums. The float32 accumulator
    is the written-out float32_running_gram (not the BLAS, whose accuracy depends on the library,
    CPU and thread count), so the contrast is the same on every machine: a float32 accumulator
    drifts past 1e-6, and an engine that dropped the float64 accumulator by default would too."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=8000, hidden_size=256, intermediate_size=1024, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      tie_word_embeddings=True)
    model = LlamaForCausalLM(cfg).eval()
    ids = torch.randint(1, 8000, (4, 48), generator=torch.Generator().manual_seed(1))
    reference = rollout_gram(model, ids, None, 24, "mean", strategy="materialise", product_dtype=torch.float64).K
    honest = contract.row_gram
    asked = []

    def row_gram(rows, accumulate):
        asked.append((rows.dtype, accumulate))
        if rows.dtype == torch.float32 and accumulate == torch.float32:
            return float32_running_gram(rows)
        return honest(rows, accumulate)

    monkeypatch.setattr(contract, "row_gram", row_gram)
    default = rollout_gram(model, ids, None, 24, "mean", strategy="materialise").K
    assert asked and set(asked) == {(torch.float32, torch.float64)}
    asked.clear()
    float32_sums = rollout_gram(model, ids, None, 24, "mean", strategy="materialise", accumulate_dtype=None).K
    assert asked and set(asked) == {(torch.float32, torch.float32)}
    assert rel(default, reference) < 1e-7
    assert rel(float32_sums, reference) > 1e-6


def test_row_gram_adds_exact_block_sums_in_float64_exactly():
    """Integer rows in [-64, 64]: every product and every partial sum inside a 128-column block is
    an integer below 2^24, so the float32 block sums are exact in any summation order (any BLAS,
    thread count or vector width); added in float64 (integers below 2^53) the result is exact, and
    row_gram must return K exactly. The diagonal of K (about 1.4e9, where float32 numbers are 128
apart; checked for these rows) is not a float32 number,
    so anything that rounds the total to float32 - block sums added in float32, a float32 GEMM -
    cannot: the written-out float32 accumulator of the same block sums misses it."""
    g = torch.Generator().manual_seed(0)
    n = (1 << 20) + 77  # not a multiple of the block: the tail is added in float64
    rows = torch.randint(-64, 65, (4, n), generator=g).to(torch.float32)
    truth = rows.double() @ rows.double().T  # exact: integers below 2^53
    assert torch.all(truth.diagonal().float().double() != truth.diagonal())  # no float32 number equals it
    blocked = contract.row_gram(rows, torch.float64)
    assert blocked.dtype == torch.float64
    assert torch.equal(blocked, truth)
    assert not torch.equal(float32_running_gram(rows).double(), truth)


def test_row_gram_sums_float32_products_in_blocks_with_float64_accuracy():
    """Heavy-tailed float32 rows of length 2^20: the products inside a block are rounded in float32
    whatever the order (a sequential order, the worst a GEMM takes, costs 3e-8 here), but across
    the 8192 blocks row_gram adds in float64, so it stays below 1e-7. A float32 accumulator over
    the blocks (written out, the same on every machine) drifts past 5e-7."""
    g = torch.Generator().manual_seed(0)
    n = (1 << 20) + 77  # not a multiple of the block
    rows = torch.randn(4, n, generator=g, dtype=torch.float64) * torch.rand(1, n, generator=g, dtype=torch.float64) ** 3
    rows = rows.to(torch.float32)
    truth = rows.double() @ rows.double().T
    blocked = contract.row_gram(rows, torch.float64)
    assert blocked.dtype == torch.float64
    assert rel(blocked, truth) < 1e-7
    assert rel(float32_blocks_float64_sum(rows), truth) < 1e-7  # the bound holds for any order inside a block
    assert rel(float32_running_gram(rows).double(), truth) > 5e-7  # what the float64 sum over blocks is for
    assert rel(contract.row_gram(rows.double(), torch.float64), truth) < 1e-13
    short = rows[:, :100]  # shorter than a block: one float64 product
    assert rel(contract.row_gram(short, torch.float64), short.double() @ short.double().T) < 1e-13


def _factor(kind: str, g: torch.Generator, rollouts: int, tokens: int, d0: int, d1: int) -> contract.Factor:
    """A random use: a dense (R, T, d0) or an index (R, T) into d0 rows, with repeated indices."""
    a = (torch.randn(rollouts, tokens, d0, generator=g, dtype=torch.float64) if kind == "dense"
         else torch.randint(0, d0, (rollouts, tokens), generator=g))
    return contract.Factor(a=a, b=torch.randn(rollouts, tokens, d1, generator=g, dtype=torch.float64), a_size=d0)


def _materialised(f: contract.Factor) -> torch.Tensor:
    """g_i = sum_t a_it (x) b_it as (R, d0 * d1), the index form through an explicit one-hot."""
    a = torch.nn.functional.one_hot(f.a, f.a_size).to(f.b.dtype) if f.index else f.a
    return torch.einsum("rtd,rte->rde", a, f.b).reshape(f.rollouts, -1)


def _size(f: contract.Factor) -> int:
    return (0 if f.index else f.a.numel()) + f.b.numel()


@pytest.mark.parametrize("u_kind, v_kind", [("index", "dense"), ("dense", "index"), ("index", "index"),
                                            ("dense", "dense")])
@pytest.mark.parametrize("budget", ["all", "between", "none"])
def test_ghost_cross_equals_materialised_inner_products(u_kind, v_kind, budget):
    """<g_i^u, g_j^v> by the ghost identity against the per-rollout gradients written out, for each
    pairing of index (an Embedding's ids) and dense (a Linear's output gradient) factors, in either
    order, and for each chunk path: both factors cast at once, only the smaller one, neither (a
    rollout of v at a time). Through the engine an index factor is only ever met after a dense one
    (the tied LM head is reached first in the backward pass), so this is where the other order is
    tested."""
    g = torch.Generator().manual_seed(11)
    rollouts, d0, d1 = 3, 6, 4
    u = _factor(u_kind, g, rollouts, 5, d0, d1)
    v = _factor(v_kind, g, rollouts, 3, d0, d1)
    small, large = sorted((_size(u), _size(v)))
    chunk = {"all": 1 << 24, "between": (small + large) // 2, "none": 1}[budget]
    expected = _materialised(u) @ _materialised(v).T
    assert rel(contract.ghost_cross(u, v, torch.float64, chunk), expected) < 1e-13
    assert rel(contract.ghost_cross(v, u, torch.float64, chunk), expected.T) < 1e-13
    self_term = _materialised(u) @ _materialised(u).T
    assert rel(contract.ghost_cross(u, u, torch.float64, chunk), self_term) < 1e-13


def test_half_precision_products_default_to_float32():
    assert contract.product_dtype_of(torch.bfloat16) == torch.float32
    assert contract.product_dtype_of(torch.float16) == torch.float32
    assert contract.product_dtype_of(torch.float32) == torch.float32
    assert contract.product_dtype_of(torch.float64) == torch.float64


def test_bfloat16_model_gives_float32_products_and_a_float64_k():
    """The GPU path: a bfloat16 model. Products and weighted gradients are float32, K float64 and
    as close to the float64 truth as bfloat16's own rounding allows."""
    model = tiny_llama(True)
    ids, mask, start = batch("right")
    truth = naive_gram(model, ids, mask, start, "mean").K
    model16 = model.to(torch.bfloat16)
    floor = rel(naive_gram(model16, ids, mask, start, "mean").K, truth)
    for strategy in ("ghost", "materialise"):
        result = rollout_gram(model16, ids, mask, start, "mean", strategy=strategy,
                              advantages=torch.tensor([1.0, -1.0, 0.5, -0.5]), weightings={"ones": torch.ones(4)})
        assert result.K.dtype == torch.float64
        assert all(g.dtype == torch.float32 for g in result.grpo_gradients.values())
        assert all(g.dtype == torch.float32 for g in result.weighted_gradients["ones"].values())
        assert rel(result.K, truth) < max(10 * floor, 1e-2), (strategy, rel(result.K, truth), floor)


def test_nan_from_the_model_is_reported():
    model = tiny_llama(True)
    with torch.no_grad():
        model.model.layers[0].mlp.up_proj.weight[0, 0] = float("nan")
    ids, mask, start = batch("right")
    with pytest.raises(FloatingPointError, match="non-finite"):
        rollout_gram(model, ids, mask, start, "mean")


# -- the real small model (only where its GGUF is installed) ---------------------------------

@pytest.mark.skipif(smollm2_gguf() is None or os.environ.get("GRPO_VERIFY_SKIP_SMOLLM2") == "1",
                    reason="SmolLM2 GGUF not installed (or GRPO_VERIFY_SKIP_SMOLLM2=1)")
def test_smollm2_engine_matches_the_naive_loop():
    pytest.importorskip("gguf")
    from transformers import AutoModelForCausalLM

    path = smollm2_gguf()
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name).eval()
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1, 1000, (2, 12), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0
    result = rollout_gram(model, ids, mask, 4, "mean")
    naive = naive_gram(model, ids, mask, 4, "mean", mode="batched")
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert rel(result.K, naive.K) < 1e-4
    assert math.isfinite(result.rank_metrics().effective_rank)


def test_nemotron_like_model_uses_the_exact_fallback_for_layer_norm_1p():
    """The 4B benchmark architecture in miniature: non-gated relu2 MLP, partial RoPE, GQA, and
    LayerNorm1P (a LayerNorm subclass with its own forward, so no rule is trusted for it)."""
    from transformers import NemotronConfig, NemotronForCausalLM

    torch.manual_seed(0)
    config = NemotronConfig(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                            num_key_value_heads=2, head_dim=4, vocab_size=VOCAB, partial_rotary_factor=0.5,
                            pad_token_id=PAD)
    model = NemotronForCausalLM(config).to(torch.float64).eval()
    ids, mask, start = batch("right")
    result = rollout_gram(model, ids, mask, start, "mean")
    assert "exact_fallback" in set(result.rules.values())
    assert rel(result.K, naive_gram(model, ids, mask, start, "mean").K) < TOL


def test_an_input_made_to_require_grad_by_another_hook_is_still_a_root():
    """Gradient checkpointing in transformers (TRL's default) installs ``make_inputs_require_grads``: a
    forward hook on the input embedding that makes its output a leaf requiring grad. The engine must
    still differentiate through it (before the fix every K came out an exact 0), and with several
    such hooks piled up too."""
    model = tiny_llama(tie=False)
    ids, mask, start = batch()
    naive = naive_gram(model, ids, mask, start, "mean")
    handles = [model.get_input_embeddings().register_forward_hook(lambda m, i, out: out.requires_grad_(True))
               for _ in range(2)]
    try:
        result = rollout_gram(model, ids, mask, start, "mean")
    finally:
        for h in handles:
            h.remove()
    assert float(result.K.abs().max()) > 0 and rel(result.K, naive.K) < TOL


def test_no_root_to_differentiate_is_refused_not_returned_as_zero(monkeypatch):
    model = tiny_llama(tie=False)
    ids, mask, start = batch()
    monkeypatch.setattr(gram_engine, "_reroot", lambda output, roots: output)  # nothing becomes a root
    with pytest.raises(RuntimeError) as caught:
        rollout_gram(model, ids, mask, start, "mean")
    assert str(caught.value) == (
        "the Gram engine found no graph root to differentiate from (no module output became a root and the "
        "objectives do not require grad): refusing to return K = 0 for parameters the forward used")


def _fake_optional_module():
    """(a module "fake_optional_pkg.modeling" holding FakeNorm, FakeNorm, a rule for it), not yet imported."""
    import types

    class FakeNorm(torch.nn.Module):
        def forward(self, x):
            return x

    def fake_rule(module, inputs, output_grads, rollouts):
        return {}

    optional = types.ModuleType("fake_optional_pkg.modeling")
    optional.FakeNorm = FakeNorm
    return optional, FakeNorm, fake_rule


def test_a_lazy_rule_registered_into_a_temporary_table_is_registered_again_in_the_real_one(monkeypatch):
    """A test that swaps layers._RULES for a copy while an optional module's rules are first registered (a model of
    that class found in it) must not take them away with the copy: the real table gets them on its next lookup.
    Before, _LAZY was crossed off at the first registration, and the Gemma 3 rules were lost for every later test
    of that worker (seen as test_gram_gemma3's fallback test failing in some parallel runs)."""
    import sys

    from grpo_verify.gram import layers

    optional, FakeNorm, fake_rule = _fake_optional_module()
    monkeypatch.setitem(sys.modules, "fake_optional_pkg.modeling", optional)
    monkeypatch.setattr(layers, "_LAZY", {"fake_optional_pkg.modeling": [("FakeNorm", fake_rule, ("forward",))]})
    real = dict(layers._RULES)
    monkeypatch.setattr(layers, "_RULES", real)
    monkeypatch.setattr(layers, "_FIXED", dict(layers._FIXED))
    with monkeypatch.context() as inner:  # a test's temporary table, restored afterwards
        inner.setattr(layers, "_RULES", dict(real))
        assert layers.find_rule(FakeNorm()) is fake_rule
    assert layers._RULES is real and layers.find_rule(FakeNorm()) is fake_rule


def test_a_lazy_rule_is_registered_only_once_its_optional_module_is_imported(monkeypatch):
    # the Gemma 3 rules wait in layers._LAZY until transformers' gemma3 module is imported; a fake table here
    import sys

    from grpo_verify.gram import layers

    optional, FakeNorm, fake_rule = _fake_optional_module()
    monkeypatch.setattr(layers, "_LAZY", {"fake_optional_pkg.modeling": [("FakeNorm", fake_rule, ("forward", "x")),
                                                                         ("Absent", fake_rule, ())]})
    monkeypatch.setattr(layers, "_RULES", dict(layers._RULES))
    monkeypatch.setattr(layers, "_FIXED", dict(layers._FIXED))
    assert layers.find_rule(FakeNorm()) is None and "fake_optional_pkg.modeling" in layers._LAZY  # not imported
    monkeypatch.setitem(sys.modules, "fake_optional_pkg.modeling", optional)
    assert layers.find_rule(FakeNorm()) is fake_rule
    assert layers._FIXED[FakeNorm] == ("forward", "x")
    assert None not in layers._RULES and None not in layers._FIXED  # "Absent": a class the module lacks
