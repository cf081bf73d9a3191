"""The Gram engine against the naive per-rollout loop at the Nemotron-Mini-4B width, on a CPU (CI runs it after
the tests): the nemotron-mini-4b-random architecture (hidden 3072, MLP 9216, GQA 24/8 heads, head dim 128, partial
rotary 0.5, NemotronLayerNorm1P, vocabulary 256000) with 2 blocks, random weights, bfloat16, R = 2 rollouts of a
few tokens.

The reference is plain autograd, one rollout at a time: g_i = d l_i / d theta for every parameter (TRL's and the
engine's per-rollout objective, the mean completion log-probability), K_ij = sum over parameters of <g_i, g_j>
accumulated in float64. Checked: K (entrywise, relative to sqrt(K_ii K_jj)), each norm weight's and bias's own K
(NemotronLayerNorm1P's), and the GRPO gradient sum_i a_i g_i: the LM head's times a random vector, the embedding's
rows of the tokens seen (zero elsewhere), a query and an MLP down projection entrywise, and the singular values
(grpo_verify.svd) of the last three against the reference's. The tolerance is bfloat16's: autograd rounds each
weight gradient to bfloat16, the engine multiplies the same bfloat16 activations and output gradients in float32.

    python experiments/gram_at_4b_width.py [--layers 2] [--json OUT]

Exit 0 when every check holds, 1 with the failing check named; prints each figure and the peak memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import torch

from grpo_verify.empirical.models import nemotron_mini_4b_config
from grpo_verify.gram import rollout_gram
from grpo_verify.gram.loss import completion_weights, position_ids_from_mask, rollout_objectives
from grpo_verify.svd import singular_values

TOLERANCE = 2e-2  # bfloat16 has 8 significant bits: 2^-8 = 0.4 % per rounded value
HEAD, EMBEDDING = "lm_head.weight", "model.embed_tokens.weight"
WHOLE = ("model.layers.0.self_attn.q_proj.weight", "model.layers.1.mlp.down_proj.weight")  # compared entrywise


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def build(layers: int) -> torch.nn.Module:
    from transformers import NemotronForCausalLM

    config = nemotron_mini_4b_config()
    config.num_hidden_layers = layers
    torch.manual_seed(0)
    model = NemotronForCausalLM(config).to(torch.bfloat16).eval()
    with torch.no_grad():  # LayerNorm1P's weights start at 0 (it adds 1): move them so their gradients are generic
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.add_(0.05 * torch.randn_like(p))
    return model


def _dot(a: torch.Tensor, b: torch.Tensor, chunk: int = 1 << 24) -> float:
    """<a, b> accumulated in float64, a chunk at a time (whole float64 copies of the LM head's gradient are 6 GB)."""
    return float(sum(float((x.double() * y.double()).sum())
                     for x, y in zip(a.reshape(-1).split(chunk), b.reshape(-1).split(chunk))))


def views(grads: dict[str, torch.Tensor], rows: torch.Tensor, probe: torch.Tensor) -> dict[str, torch.Tensor]:
    """What is compared, small enough to keep (the 256000 x 3072 matrices are 3 GB each in float32): the LM head's
    gradient times a fixed random vector, the embedding gradient's rows of the tokens seen (the others must be 0),
    and the WHOLE matrices in float32."""
    embedding = grads[EMBEDDING]
    if int(torch.count_nonzero(embedding)) != int(torch.count_nonzero(embedding[rows])):
        raise AssertionError("the embedding gradient is nonzero outside the rows of the tokens seen")
    out = {HEAD: grads[HEAD].float() @ probe, EMBEDDING: embedding[rows].float()}
    out.update({name: grads[name].float() for name in WHOLE})
    return out


def naive(model, ids, mask, start, advantages, rows, probe):
    """K from per-rollout autograd (float64 sums parameter by parameter), each 1-D parameter's own K (a norm's
    share of K is too small for a wrong norm rule to show in K) and the views of sum_i a_i g_i; one
    rollout's full gradient is kept at a time, besides the one before it for the cross terms (R = 2)."""
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    weights = completion_weights(mask, start, "mean", None)
    R = ids.shape[0]
    K = torch.zeros(R, R, dtype=torch.float64)
    small = [k for k, (_, p) in enumerate(params) if p.ndim == 1]  # the norms' weights and biases, one K each
    K_small = {params[k][0]: torch.zeros(R, R, dtype=torch.float64) for k in small}
    before: list[list[torch.Tensor]] = []
    combined: dict[str, torch.Tensor] = {}
    for i in range(R):
        out = model(input_ids=ids[i:i + 1], attention_mask=mask[i:i + 1],
                    position_ids=position_ids_from_mask(mask[i:i + 1]), use_cache=False)
        objective = rollout_objectives(out.logits, ids[i:i + 1], weights[i:i + 1])[0]
        g = torch.autograd.grad(objective, [p for _, p in params])
        for j, h in enumerate(before):
            K[i, j] = K[j, i] = sum(_dot(a, b) for a, b in zip(g, h))
        K[i, i] = sum(_dot(a, a) for a in g)
        for k in small:
            for j, h in enumerate(before + [list(g)]):
                K_small[params[k][0]][i, j] = K_small[params[k][0]][j, i] = _dot(g[k], h[k])
        for name, view in views(dict(zip((n for n, _ in params), g)), rows, probe).items():
            combined[name] = combined.get(name, 0) + float(advantages[i]) * view
        before = [list(g)] if i + 1 < R else []
    return K, K_small, combined


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)
    if args.layers < 1:
        parser.error(f"--layers must be >= 1, got {args.layers}")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        parser.error(f"--json {args.json}: its folder does not exist")
    t0 = time.perf_counter()
    model = build(args.layers)
    print(f"model: {sum(p.numel() for p in model.parameters()) / 1e9:.3f}B parameters, {args.layers} blocks, "
          f"bfloat16, built in {time.perf_counter() - t0:.0f} s", flush=True)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 256000, (2, 8), generator=g)  # 5 prompt + 3 completion tokens, row 1 left-padded by 1
    mask = torch.ones_like(ids)
    mask[1, 0] = 0
    ids[1, 0] = 0
    start = 5
    advantages = torch.tensor([0.75, -1.25], dtype=torch.float64)
    rows = torch.unique(ids[mask.bool()])
    probe = torch.randn(3072, generator=g)
    t0 = time.perf_counter()
    res = rollout_gram(model, ids, mask, start, "mean", advantages=advantages, accumulate_dtype=torch.float64)
    t_engine = time.perf_counter() - t0
    engine_views = views(res.grpo_gradients, rows, probe)
    K_engine, K_engine_small = res.K, {n: k for n, k in res.per_parameter.items()}
    del res  # the engine's float32 GRPO gradient (7 GB at this size) before the naive loop's gradients
    t0 = time.perf_counter()
    K_ref, K_ref_small, naive_views = naive(model, ids, mask, start, advantages, rows, probe)
    t_naive = time.perf_counter() - t0
    scale = torch.sqrt(torch.outer(K_ref.diagonal(), K_ref.diagonal()))
    figures = {"K_engine": K_engine.tolist(), "K_naive": K_ref.tolist(),
               "K_max_relative_error": float(((K_engine - K_ref).abs() / scale).max()),
               "seconds_engine": t_engine, "seconds_naive": t_naive}
    failures = []
    if not figures["K_max_relative_error"] <= TOLERANCE:
        failures.append(f"K differs from the naive loop by {figures['K_max_relative_error']:.2e} (relative)")
    worst = max(((name, float(((K_engine_small[name] - k).abs() / torch.sqrt(torch.outer(k.diagonal(),
                                                                                     k.diagonal()))).max()))
                 for name, k in K_ref_small.items()), key=lambda item: item[1])
    figures["one_dimensional_parameters"] = {"count": len(K_ref_small), "worst": worst[0],
                                             "K_max_relative_error": worst[1]}
    if not worst[1] <= TOLERANCE:
        failures.append(f"{worst[0]}: its own K differs from the naive loop's by {worst[1]:.2e} (relative)")
    for name, got in engine_views.items():
        ref = naive_views[name]
        err = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
        entry = {"compared": "G v (v a fixed random vector)" if name == HEAD else
                 "the rows of the tokens seen" if name == EMBEDDING else "every entry",
                 "gradient_relative_error": err}
        if got.ndim == 2:
            t0 = time.perf_counter()
            s_got, s_ref = singular_values(got), singular_values(ref)
            entry.update(singular_values_max_error=float((s_got - s_ref).abs().max() / s_ref.max()),
                         top_singular_values=s_got[:3].tolist(), seconds_singular_values=time.perf_counter() - t0)
        figures[name] = entry
        if not (err <= TOLERANCE and entry.get("singular_values_max_error", 0.0) <= TOLERANCE):
            failures.append(f"{name}: {entry}")
    figures["peak_rss_gib"] = _peak_gib()
    print(json.dumps(figures, indent=1), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)
    if failures:
        for line in failures:
            print(f"FAILED: {line}", file=sys.stderr)
        return 1
    print(f"the Gram engine equals the naive loop at the 4B width (K to {figures['K_max_relative_error']:.1e}); "
          f"engine {t_engine:.1f} s, naive {t_naive:.1f} s, peak RSS {figures['peak_rss_gib']:.1f} GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
