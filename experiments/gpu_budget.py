"""How long experiments/empirical_gpu.sh will take on this machine, from timings of its pieces measured here.

The run's time is dominated by pieces whose cost does not depend on the weights: sampling (one decoding step of
the model per new token), the Gram engine's forward and backward, and the float64 singular values of every
weight-sized gradient matrix of a mixed-reward group (Nemotron-Mini-4B: 6 matrices per block, 32 blocks, and the
256000 x 3072 LM head; the embedding's gradient has only the rows of the tokens seen). This script times each distinct piece once at the model's full width on
random tensors and one random-weight block, and multiplies by how often the run needs it:

    python experiments/gpu_budget.py [--device cuda] [--blocks 32] [--prompts 4] [--group-sizes 2,4,8]
                                     [--new-tokens 128] [--prompt-tokens 200] [--train-steps 2] [--train-rows 16]

It prints each piece's measured seconds (median of --repeats) and the projected total with every group mixed (the
upper bound: a degenerate group needs no singular values) and with none mixed. Run it first on a GPU: a minute,
and the first real call then has a known budget. On a CPU it measures the CPU (the rehearsal's figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from grpo_verify.empirical.models import nemotron_mini_4b_config
from grpo_verify.svd import singular_values


def _timed(fn, repeats: int, device: torch.device) -> float:
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(device: torch.device, rows_tokens: int, repeats: int) -> dict[str, float]:
    """Seconds of each piece at the 4B width: one block's forward + backward over ``rows_tokens`` tokens, one
    decoding step of one block for 8 rows, the LM head's decoding step, and the singular values of each shape."""
    from transformers import NemotronForCausalLM

    config = nemotron_mini_4b_config()
    config.num_hidden_layers = 1
    torch.manual_seed(0)
    with torch.device(device):
        model = NemotronForCausalLM(config).to(torch.bfloat16)
    block, head = model.model.layers[0], model.lm_head
    hidden = config.hidden_size
    x = torch.randn(1, rows_tokens, hidden, device=device, dtype=torch.bfloat16, requires_grad=True)
    position_ids = torch.arange(rows_tokens, device=device)[None]
    rotary = model.model.rotary_emb(x, position_ids)

    def block_pass():
        out = block(x, position_embeddings=rotary, position_ids=position_ids)
        out = out[0] if isinstance(out, tuple) else out
        torch.autograd.grad(out.float().sum(), [x, *block.parameters()])

    step_x = torch.randn(8, 1, hidden, device=device, dtype=torch.bfloat16)
    step_rotary = model.model.rotary_emb(step_x, torch.zeros(1, 1, dtype=torch.long, device=device))
    out = {"block_forward_backward": _timed(block_pass, repeats, device),
           "block_decode_step_8_rows": _timed(lambda: block(step_x, position_embeddings=step_rotary), repeats, device),
           "head_decode_step_8_rows": _timed(lambda: head(step_x), repeats, device)}
    shapes = {"3072x3072": (hidden, hidden), "1024x3072": (1024, hidden), "9216x3072": (9216, hidden),
              "256000x3072": (config.vocab_size, hidden)}
    for name, shape in shapes.items():
        g = torch.randn(*shape, device=device, dtype=torch.float32)
        out[f"singular_values_{name}"] = _timed(lambda: singular_values(g), 1 if shape[0] > 10000 else repeats,
                                                device)
        del g
    return out


def project(t: dict[str, float], blocks: int, prompts: int, group_sizes, new_tokens: int, prompt_tokens: int,
            train_steps: int, train_rows: int) -> dict[str, float]:
    """Seconds of the run from the pieces (forward + backward cost linear in tokens, as measured at rows_tokens)."""
    per_block_svd = (2 * t["singular_values_3072x3072"] + 2 * t["singular_values_1024x3072"]
                     + 2 * t["singular_values_9216x3072"])
    # the LM head's gradient is dense; the embedding's is zero outside the rows of the tokens seen (and so is its
    # W - W_start under AdamW without weight decay): grpo_verify.svd keeps those rows only, a few hundred
    spectra = blocks * per_block_svd + t["singular_values_256000x3072"]
    decode = blocks * t["block_decode_step_8_rows"] + t["head_decode_step_8_rows"]
    per_token = t["block_forward_backward"] / t["rows_tokens"]
    groups = [R for R in group_sizes for _ in range(prompts)]
    sampling = len(groups) * new_tokens * decode  # a step at R <= 8 rows costs about one 8-row step
    engine = sum(blocks * per_token * R * (prompt_tokens + new_tokens) for R in groups)
    training = train_steps * (new_tokens * decode + 2 * blocks * per_token * train_rows * (prompt_tokens + new_tokens)
                              + 3 * spectra)  # TRL's generation, engine + TRL backward, three spectra sets
    return {"sampling": sampling, "engine": engine, "spectra_if_every_group_mixed": len(groups) * spectra,
            "training": training,
            "total_every_group_mixed": sampling + engine + len(groups) * spectra + training,
            "total_no_group_mixed": sampling + engine + training}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--blocks", type=int, default=32)
    p.add_argument("--prompts", type=int, default=4)
    p.add_argument("--group-sizes", default="2,4,8")
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--prompt-tokens", type=int, default=200)
    p.add_argument("--train-steps", type=int, default=2)
    p.add_argument("--train-rows", type=int, default=16)
    p.add_argument("--rows-tokens", type=int, default=512, help="tokens of the timed block pass")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=None, help="write the figures here")
    args = p.parse_args(argv)
    try:
        sizes = [int(v) for v in args.group_sizes.split(",")]
    except ValueError:
        p.error(f"--group-sizes: expected integers separated by commas, got {args.group_sizes!r}")
    for name in ("blocks", "prompts", "new_tokens", "prompt_tokens", "rows_tokens", "repeats"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.train_steps < 0 or args.train_rows < 1 or any(R < 2 for R in sizes):
        p.error("--train-steps must be >= 0, --train-rows >= 1 and every group size >= 2")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        p.error(f"--json {args.json}: its folder does not exist")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA device here")
    print(f"timing the pieces on {device} (one Nemotron-Mini-4B block, bfloat16; float64 singular values)...",
          flush=True)
    t = measure(device, args.rows_tokens, args.repeats)
    t["rows_tokens"] = args.rows_tokens
    for name, value in t.items():
        print(f"  {name}: {value:.3f}" + (" s" if name != "rows_tokens" else ""))
    projection = project(t, args.blocks, args.prompts, sizes, args.new_tokens, args.prompt_tokens,
                         args.train_steps, args.train_rows)
    for name, value in projection.items():
        print(f"projected {name}: {value:.0f} s ({value / 60:.1f} min)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": str(device), "pieces": t, "projection": projection, "options": vars(args)}, fh,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
