"""Behaviours of the Gram engine and of the synthetic float64 transformer that other tests leave open.

Each test compares with an independent reference - plain autograd one rollout at a time, written
here, or transformers' own modules - never the engine with itself, and each was seen to fail on a
planted one-line bug (named in its docstring) and to pass on the real code.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

transformers = pytest.importorskip("transformers")
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

from grpo_verify.gram import completion_weights, position_ids_from_mask, rollout_gram  # noqa: E402
from grpo_verify.synthetic import TinyCausalTransformer, float64_causal_attention  # noqa: E402
from support import padded_rows  # noqa: E402

F64 = torch.float64
VOCAB = 40
PAD = 0
TOL = 1e-10


def rel(a, b) -> float:
    a, b = torch.as_tensor(a, dtype=F64), torch.as_tensor(b, dtype=F64)
    return float(torch.linalg.norm(a - b) / torch.linalg.norm(b))


def batch(side: str = "right", seed: int = 1):
    """4 rows of 11, 8, 6, 9 real tokens padded on ``side``, completion starts as padded indices."""
    return padded_rows(VOCAB, PAD, side, seed, 4, 11)


def generic(model: nn.Module, scale: float = 0.3, seed: int = 0) -> nn.Module:
    """Break the init symmetry of 1-D parameters (norm weights start at ones, biases at zeros)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 1:
                p.add_(scale * torch.randn(p.shape, generator=g, dtype=F64).to(p.dtype))
    return model


def tiny_llama(layers: int = 2, heads: int = 4, kv_heads: int = 2, hidden: int = 16, eps: float = 1e-6,
               bias: bool = False, tie: bool = False, seed: int = 0, attn: str = "sdpa") -> LlamaForCausalLM:
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=hidden, intermediate_size=24, num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=kv_heads, max_position_embeddings=64,
                      tie_word_embeddings=tie, pad_token_id=PAD, rms_norm_eps=eps, attention_bias=bias,
                      mlp_bias=bias, attn_implementation=attn)
    return generic(LlamaForCausalLM(cfg).to(F64).eval())


def _trainable(model):
    return [(n, p) for n, p in model.named_parameters() if p.requires_grad]


def autograd_per_rollout(model, ids, mask, start, aggregation="mean", constant=None, promote=True):
    """{name: (R x numel) float64 gradients} and l (R,), by plain autograd, one rollout at a time on its
    real tokens alone (positions 0..n-1, no mask). The completion tokens of row i are its real tokens at
    padded index >= start[i] with a real predecessor; l_i = sum over them of log p, divided by their count
    ("mean"), by 1 ("sum") or by ``constant``. Written independently of grpo_verify.gram."""
    params = _trainable(model)
    rows, objectives = {n: [] for n, _ in params}, []
    for i in range(ids.shape[0]):
        real = torch.nonzero(mask[i]).flatten()
        first = int(real[0])
        tokens = ids[i, real][None]
        with torch.enable_grad():
            logits = model(input_ids=tokens, use_cache=False).logits[0]
            if promote:
                logits = logits.to(F64)
            logp = torch.log_softmax(logits[:-1], dim=-1).gather(1, tokens[0, 1:, None])[:, 0]
            # logp[k] is log p(token at local index k + 1), padded index first + k + 1
            picked = logp[max(int(start[i]) - first - 1, 0):]
            total = picked.sum()
            if aggregation == "mean":
                total = total / picked.numel()
            elif aggregation == "constant":
                total = total / constant
            grads = torch.autograd.grad(total, [p for _, p in params], allow_unused=True)
        objectives.append(float(total.detach()))
        for (n, p), g in zip(params, grads):
            rows[n].append(torch.zeros(p.numel(), dtype=F64) if g is None else g.reshape(-1).to(F64))
    return {n: torch.stack(r) for n, r in rows.items()}, torch.tensor(objectives, dtype=F64)


def grams(per_rollout: dict) -> dict:
    return {n: g @ g.T for n, g in per_rollout.items()}


def assert_engine_equals_autograd(model, ids, mask, start, aggregation="mean", tol=TOL, strategies=("ghost",
                                  "materialise"), **kwargs):
    per_rollout, objectives = autograd_per_rollout(model, ids, mask, start, aggregation, kwargs.get("constant"))
    want = grams(per_rollout)
    total = sum(want.values())
    for strategy in strategies:
        result = rollout_gram(model, ids, mask, start, aggregation, strategy=strategy, **kwargs)
        assert rel(result.objectives, objectives) < tol, (strategy, result.objectives, objectives)
        for name, k in want.items():
            assert float(k.abs().max()) > 0, name  # every parameter is exercised
            assert rel(result.per_parameter[name], k) < tol, (strategy, name, rel(result.per_parameter[name], k))
        assert rel(result.K, total) < tol, strategy
    return per_rollout


# == 1. half-precision logits are promoted before the log-softmax =================================

@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_logits_are_promoted_before_the_log_softmax(dtype):
    """A bfloat16 / float16 Llama whose logits are large (LM head scaled by 40: completion log-probs of mean size > 4,
    where a half-precision log-softmax rounds to 2^-4 .. 2^-6). The engine's objectives equal the
    log-probabilities of the very same logits taken in float64, to 1e-6 relative (measured 6e-8); a
    log-softmax in the logits' own dtype is off by 1e-4 (float16) to 1e-3 (bfloat16).
    Planted bug (gram/loss.py, token_logprobs): drop ``shifted = shifted.float()``."""
    model = tiny_llama(seed=3).to(dtype)
    with torch.no_grad():
        model.lm_head.weight.mul_(40)
    ids, mask, start = batch("left")
    weights = completion_weights(mask, start, "sum")
    with torch.enable_grad():  # the engine's forward, outside the engine
        logits = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask),
                       use_cache=False).logits
    assert logits.dtype == dtype
    logp = torch.log_softmax(logits.detach().to(F64)[:, :-1], dim=-1).gather(2, ids[:, 1:, None])[..., 0]
    want = (logp * weights[:, 1:]).sum(dim=1)
    assert float(logp[weights[:, 1:] > 0].abs().mean()) > 4  # large log-probs: half precision cannot hold them
    own = torch.log_softmax(logits.detach()[:, :-1], dim=-1).gather(2, ids[:, 1:, None])[..., 0].to(F64)
    assert rel((own * weights[:, 1:]).sum(dim=1), want) > 1e-5  # the bug: a log-softmax in `dtype` (1e-4 .. 1e-3)
    result = rollout_gram(model, ids, mask, start, "sum")
    assert rel(result.objectives, want) < 1e-6, (result.objectives, want)  # measured: 6e-8


# == 2. norm rules use the module's own eps ===========================================================

class NormLM(nn.Module):
    """Embedding -> LayerNorm(eps) -> tanh(Linear) -> LayerNorm over two trailing dims (eps2) -> head,
    with a causal prefix mean so positions interact. Tiny activations (embedding std 0.05) so that an eps
    of 0.1 dominates the variance."""

    def __init__(self, eps: float, eps2: float, width: int = 8, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = nn.Embedding(VOCAB, width)
        self.norm_in = nn.LayerNorm(width, eps=eps)
        self.mix = nn.Linear(2 * width, width)
        self.norm_2d = nn.LayerNorm((2, width // 2), eps=eps2)
        self.head = nn.Linear(width, VOCAB, bias=False)
        self.double()
        with torch.no_grad():
            self.embed.weight.mul_(0.05)
            self.mix.weight.mul_(0.1)
        generic(self, 0.5)

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=None):
        h = self.norm_in(self.embed(input_ids))
        m = (torch.ones_like(input_ids) if attention_mask is None else attention_mask).to(h.dtype)[..., None]
        context = (h * m).cumsum(dim=1) / m.cumsum(dim=1).clamp(min=1)
        h = torch.tanh(self.mix(torch.cat([h, context], dim=-1)))
        h = self.norm_2d(h.view(*h.shape[:-1], 2, -1)).reshape(h.shape)
        return type("Output", (), {"logits": self.head(h)})()


def test_layer_norm_rule_uses_the_modules_own_eps():
    """nn.LayerNorm with eps 0.1 and 0.3 (not the default 1e-5) on activations of variance ~1e-3:
    the norms' per-parameter Gram matrices equal autograd's per rollout.
    Planted bug (gram/layers.py, layer_norm_rule): ``..., None, None, 1e-5)`` instead of ``module.eps``."""
    model = NormLM(eps=0.1, eps2=0.3)
    ids, mask, start = batch("left")
    result = rollout_gram(model, ids, mask, start, "mean")
    assert {result.rules[n] for n in result.rules if n.startswith("norm_")} == {"layer_norm_rule"}
    assert_engine_equals_autograd(model, ids, mask, start, "mean")


def test_llama_rms_norm_rule_uses_the_modules_own_eps():
    """A Llama with rms_norm_eps = 0.1 (default 1e-6; hidden states of variance ~1e-3): the RMSNorm
    weights' Gram matrices (llama_rms_norm_rule) equal autograd's per rollout.
    Planted bug (gram/layers.py, llama_rms_norm_rule): ``+ 1e-6`` instead of ``+ module.variance_epsilon``."""
    model = tiny_llama(eps=0.1)
    ids, mask, start = batch("right")
    result = rollout_gram(model, ids, mask, start, "mean")
    assert result.rules["model.norm.weight"] == "llama_rms_norm_rule"
    assert_engine_equals_autograd(model, ids, mask, start, "mean")


def test_gemma3_rms_norm_rule_uses_the_modules_own_eps():
    """A tiny Gemma 3 with rms_norm_eps = 0.1 (default 1e-6): every Gemma3RMSNorm weight (layer norms and
    the per-head q/k norms) has autograd's Gram matrix (to 1e-6: the norm computes in float32).
    Planted bug (gram/layers.py, gemma3_rms_norm_rule): ``+ 1e-6`` instead of ``+ module.eps``."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig
    torch.manual_seed(0)
    cfg = Gemma3TextConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                           num_attention_heads=2, num_key_value_heads=1, head_dim=8, sliding_window=6,
                           layer_types=["full_attention"], max_position_embeddings=64, tie_word_embeddings=True,
                           pad_token_id=PAD, query_pre_attn_scalar=8, rms_norm_eps=0.1, attn_implementation="sdpa")
    model = generic(Gemma3ForCausalLM(cfg).to(F64).eval())
    with torch.no_grad():
        model.model.embed_tokens.weight.mul_(0.05)
    ids, mask, start = batch("right")
    result = rollout_gram(model, ids, mask, start, "mean", strategy="ghost")
    assert result.rules["model.norm.weight"] == "gemma3_rms_norm_rule"
    per_rollout, _ = autograd_per_rollout(model, ids, mask, start, "mean")
    for name, k in grams(per_rollout).items():
        if "norm" in name:
            assert rel(result.per_parameter[name], k) < 1e-6, (name, rel(result.per_parameter[name], k))


# == 3. per-block grouping with multi-digit block numbers ==========================================

def test_layer_and_type_groups_with_eleven_or_more_blocks():
    """A 12-block Llama: groups="layer" gives one group per block model.layers.0 .. model.layers.11
    (layers.1 and layers.10/11 kept apart) plus model.embed_tokens, model.norm, lm_head, each equal to
    the sum of autograd's per-parameter Gram matrices of that block; groups="type" strips every block
    number, giving one group per kind of parameter summed over all 12 blocks; grouping does not alter
    result.per_parameter.
    Planted bugs (gram/engine.py): ``layers\\.\\d`` instead of ``layers\\.\\d+`` in _LAYER or in the "type"
    pattern; in GramResult.grouped ``out[label].add_(k) if label in out else k`` (adds into the first
    member's own matrix)."""
    model = tiny_llama(layers=12, heads=2, kv_heads=1, hidden=8)
    ids, mask, start = batch("right")
    per_rollout, _ = autograd_per_rollout(model, ids, mask, start, "mean")
    want = grams(per_rollout)

    def block(name: str) -> str:
        parts = name.split(".")
        if parts[:2] == ["model", "layers"]:
            return ".".join(parts[:3])
        return ".".join(parts[:-1])

    def kind(name: str) -> str:
        parts = name.split(".")
        return ".".join(parts[3:]) if parts[:2] == ["model", "layers"] else name

    for spec, label in (("layer", block), ("type", kind)):
        expected: dict[str, torch.Tensor] = {}
        for name, k in want.items():
            expected[label(name)] = expected.get(label(name), 0) + k
        result = rollout_gram(model, ids, mask, start, "mean", groups=spec)
        assert sorted(result.groups) == sorted(expected), spec
        for key, k in expected.items():
            assert rel(result.groups[key], k) < TOL, (spec, key)
        for name, k in want.items():  # grouping leaves the per-parameter matrices as they were
            assert rel(result.per_parameter[name], k) < TOL, (spec, name)
        assert rel(sum(result.per_parameter.values()), sum(want.values())) < TOL
    assert {f"model.layers.{b}" for b in range(12)} <= set(rollout_gram(model, ids, mask, start, groups="layer").groups)


# == 4. the synthetic float64 transformer pairs GQA heads as transformers does =====================

def test_float64_attention_pairs_query_heads_with_kv_heads_as_transformers_repeat_kv():
    """4 query heads, 2 key/value heads: float64_causal_attention equals softmax(q k^T s + causal) v with
    k, v expanded by transformers' own repeat_kv (query head h reads kv head h // 2), to 1e-12.
    Planted bug (synthetic.py): ``key.repeat(1, groups, 1, 1)`` (tiled: h % 2) instead of repeat_interleave."""
    from transformers.models.llama.modeling_llama import repeat_kv
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 5, 3, generator=g, dtype=F64)
    k = torch.randn(2, 2, 5, 3, generator=g, dtype=F64)
    v = torch.randn(2, 2, 5, 3, generator=g, dtype=F64)
    got, weights = float64_causal_attention(None, q, k, v, None, scaling=0.7)
    k4, v4 = repeat_kv(k, 2), repeat_kv(v, 2)
    want = F.scaled_dot_product_attention(q, k4, v4, is_causal=True, scale=0.7).transpose(1, 2)
    assert got.shape == (2, 5, 4, 3)
    assert float((got - want).abs().max()) < 1e-12
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4, 5, dtype=F64))


class _F64Norm(nn.Module):
    def __init__(self, weight, eps):
        super().__init__()
        self.weight, self.eps = weight, eps

    def forward(self, x):
        return self.weight * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_tiny_causal_transformer_with_gqa_equals_transformers_in_float64(arch):
    """TinyCausalTransformer with 4 query and 2 key/value heads (a Llama config, and a Qwen2 one: q/k/v biases,
    Qwen2RMSNorm) against transformers' own model class with the same weights, sdpa attention (which expands
    kv heads with repeat_kv) and float64 RMSNorms with the config's eps (0.1, not the default 1e-6): logits
    equal to 1e-10, and log pi(o) of every outcome too.
    Planted bugs (synthetic.py): ``.repeat(1, groups, 1, 1)`` instead of ``.repeat_interleave(groups, dim=1)``;
    Float64RMSNorm with ``self.variance_epsilon = 1e-6`` instead of the replaced norm's; _make_float64_exact
    matching ``endswith("LlamaRMSNorm")`` instead of ``endswith("RMSNorm")`` (Qwen2's norms stay float32)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM
    config_class, model_class = {"llama": (LlamaConfig, LlamaForCausalLM),
                                 "qwen2": (Qwen2Config, Qwen2ForCausalLM)}[arch]
    config = config_class(vocab_size=4, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8,
                          initializer_range=0.3, rms_norm_eps=0.1, tie_word_embeddings=False)
    policy = TinyCausalTransformer(vocab_size=4, length=2, prompt=(1, 3, 0), config=config, seed=2)
    assert type(policy.model).__name__ == model_class.__name__
    assert not any(type(m).__name__.endswith("RMSNorm") and type(m).__name__ != "Float64RMSNorm"
                   for m in policy.model.modules())
    generic(policy.model, 0.5)  # generic biases and norm weights
    reference = model_class(config_class(**{**config.to_dict(), "attn_implementation": "sdpa"})).to(F64).eval()
    missing = reference.load_state_dict(policy.model.state_dict(), strict=True)
    assert not missing.missing_keys and not missing.unexpected_keys
    for name, module in list(reference.named_modules()):
        if type(module).__name__.endswith("RMSNorm"):
            parent, _, attribute = name.rpartition(".")
            setattr(reference.get_submodule(parent), attribute, _F64Norm(module.weight, module.variance_epsilon))
    sequences = policy.all_sequences()
    inputs = torch.cat([policy.prompt.expand(sequences.shape[0], -1), sequences], dim=1)
    with torch.no_grad():
        got = policy.model(input_ids=inputs, use_cache=False).logits
        want = reference(input_ids=inputs, use_cache=False).logits
        assert float((got - want).abs().max()) < 1e-10, float((got - want).abs().max())
        logp = torch.log_softmax(want[:, 2:-1], dim=-1).gather(2, sequences[..., None])[..., 0].sum(1)
        assert float((policy.log_prob(sequences) - logp).abs().max()) < 1e-10


# == further behaviours (mutants that survived the existing tests) ==================================

class _ReadsWeight(nn.Module):
    """No rule: reads another module's Linear weight, so that weight gets a factor (the Linear's rule)
    and a dense block (the exact fallback for this module)."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.weight = linear.weight

    def forward(self, h):
        return h + 0.3 * torch.tanh(h @ self.weight.T)


class SharedWideLM(nn.Module):
    """Embedding -> Linear(width) -> a ruleless module reading that Linear's weight -> head. Wide (96) and
    short rows, so that the ghost form of the shared weight is cheaper than materialising it."""

    def __init__(self, width: int = 96, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = nn.Embedding(VOCAB, width)
        self.proj = nn.Linear(width, width)
        self.gate = _ReadsWeight(self.proj)
        self.head = nn.Linear(width, VOCAB, bias=False)
        self.double()

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=None):
        h = self.gate(torch.tanh(self.proj(self.embed(input_ids))))
        return type("Output", (), {"logits": self.head(h)})()


def _short_batch():
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(1, VOCAB, (3, 6), generator=g)
    return ids, torch.ones_like(ids), torch.tensor([2, 3, 1])


def test_a_weight_with_a_factor_and_a_dense_block_is_never_contracted_in_the_ghost_form():
    """proj.weight has a Linear factor and a dense fallback block. strategy="auto" must materialise it
    (the ghost form has no place for the dense block) even though the ghost form is cheaper here.
    Planted bug (gram/engine.py, _finalise): ``use_ghost = ghost < materialise`` (dropping ``dense is None``)."""
    from grpo_verify.gram import contract
    from grpo_verify.gram.contract import Factor
    model = SharedWideLM()
    ids, mask, start = _short_batch()
    x = Factor(a=torch.zeros(3, 6, 96, dtype=F64), b=torch.zeros(3, 6, 96, dtype=F64), a_size=96)
    assert contract.ghost_cost(x, x) < contract.materialise_cost([x])  # auto would pick the ghost form
    result = rollout_gram(model, ids, mask, start, "mean")
    assert result.rules["proj.weight"] == "exact_fallback,linear_rule"
    assert result.strategies["proj.weight"] == "materialise"
    assert_engine_equals_autograd(model, ids, mask, start, "mean", strategies=("auto",))


def test_a_dense_block_is_added_to_the_matching_rows_of_a_chunked_materialisation():
    """The same shared weight, materialised in blocks of 7 rows (chunk_elements): each block of the dense
    fallback gradient must be added to the same rows of the Linear's factor, for K and the GRPO gradient.
    Planted bug (gram/engine.py, _finalise): ``extra[:, :r1 - r0]`` instead of ``extra[:, r0:r1]``."""
    model = SharedWideLM()
    ids, mask, start = _short_batch()
    adv = torch.tensor([1.0, -0.5, 2.0], dtype=F64)
    per_rollout = assert_engine_equals_autograd(model, ids, mask, start, "sum", strategies=("materialise",),
                                                chunk_elements=3 * 96 * 7, advantages=adv)
    result = rollout_gram(model, ids, mask, start, "sum", strategy="materialise", chunk_elements=3 * 96 * 7,
                          advantages=adv)
    want = (adv @ per_rollout["proj.weight"]).reshape(96, 96)
    assert float((result.grpo_gradients["proj.weight"] - want).abs().max()) < 1e-10 * float(want.abs().max())


def test_the_embedding_rule_masks_the_modules_own_padding_idx_not_token_zero():
    """A Llama whose pad token (the Embedding's padding_idx) is 3, with token 0 an ordinary token in the
    prompts and completions and token 3 also inside completions: autograd gives the padding row no
    gradient and row 0 its full gradient; the engine must agree, row by row.
    Planted bug (gram/layers.py, embedding_rule): ``ids != 0`` instead of ``ids != module.padding_idx``."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      tie_word_embeddings=False, pad_token_id=3, attn_implementation="sdpa")
    model = generic(LlamaForCausalLM(cfg).to(F64).eval())
    assert model.model.embed_tokens.padding_idx == 3
    ids, mask, start = padded_rows(VOCAB, 3, "right", 2, 4, 11)
    ids[0, [1, 5, 7]] = 0
    ids[1, [0, 4]] = 0
    ids[2, 3] = 0
    ids[0, 8], ids[3, 6] = 3, 3  # the pad token inside completions: a real token whose row gets no gradient
    per_rollout = assert_engine_equals_autograd(model, ids, mask, start, "sum")
    rows = per_rollout["model.embed_tokens.weight"].reshape(4, VOCAB, 16)
    assert float(rows[:, 3].abs().max()) == 0 and float(rows[:, 0].abs().max()) > 0


def test_a_frozen_input_embedding_made_to_require_grad_by_transformers_is_differentiated_through():
    """PEFT / gradient-checkpointing set-up: the input embedding is frozen (not part of theta, so the
    engine does not hook it) and transformers' ``enable_input_require_grads`` makes its output a leaf that
    requires grad. The backward must start from that leaf; K then equals autograd's over the trainable
    parameters.
    Planted bug (gram/engine.py, rollout_gram): ``targets = ([*engine.roots] if skip_weight_grads`` (dropping
    the foreign leaves)."""
    model = tiny_llama(seed=4)
    model.model.embed_tokens.weight.requires_grad_(False)
    model.enable_input_require_grads()
    ids, mask, start = batch("right")
    per_rollout = assert_engine_equals_autograd(model, ids, mask, start, "mean")
    assert "model.embed_tokens.weight" not in per_rollout


def test_a_parameter_slot_holding_another_tensor_at_the_backward_is_refused_not_dropped():
    """FSDP2 puts an unsharded copy into each module's parameter slot for the forward and its backward. The engine
    attributes a use to the parameter its slot held when the engine started; a plain tensor of another identity
    there (not the unsharded twin of a DTensor shard) is refused. Planted bug: keying contributions by the tensor
    in the slot at backward time (as before) dropped the use without a word."""
    model = tiny_llama(layers=1)
    ids, mask, start = batch()
    target = model.model.layers[0].mlp.down_proj
    original = target.weight

    def swap_in_a_copy(module, args):
        module._parameters["weight"] = nn.Parameter(original.detach().clone())

    handle = target.register_forward_pre_hook(swap_in_a_copy)
    try:
        with pytest.raises(RuntimeError, match=r"mlp.down_proj.weight\) holds another tensor"):
            rollout_gram(model, ids, mask, start, "mean")
    finally:
        handle.remove()
        target._parameters["weight"] = original
    rollout_gram(model, ids, mask, start, "mean")  # the same model without the swap is measured
