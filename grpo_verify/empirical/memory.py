"""The memory preflight: an estimate of the run's peak memory from the model's parameter shapes and the options,
checked against what the device has free before the first group, and the measured peak printed next to it at the
end (``experiments/rehearse_4b_cpu.sh`` records both at the Nemotron-Mini-4B width).

The estimate adds up what each stage holds at once (bytes):
* engine forward (one group of the largest R, prompt + completion tokens T): the weights, the logits R x T x V
  three times (the model's, the float32 log-softmax and its gradient) and each weight's kept input and output
  gradient (R x T x (in + out), the model's dtype), all held when the backward starts;
* engine gradients and spectra: the weights, the engine's float32 GRPO gradient (with ``--layer-controls`` also the
  5 controls', ``measure.HELD_GRADIENT_SETS``; they fill up as the backward frees the activations) and the largest
  singular-value workspace (``grpo_verify.svd``);
* training (TRL, ``--train-steps``): the weights, their gradients, AdamW's two moments (the parameters' dtype), the
  callback's two snapshots (model dtype), its engine's float32 GRPO gradient, the logits of the step's B x R rows,
  the SVD workspace and the float64 W - W_start of the largest matrix (``delta_rank``).
Activations that autograd itself saves are not itemised: the margin of :func:`problem` (80 % of the free memory)
is for them and for the allocator. An estimate, not a bound: the rehearsal prints the measured peak beside it.
"""

from __future__ import annotations

import re
import resource
from dataclasses import dataclass, field
from pathlib import Path

import torch

from grpo_verify.svd import BLOCK_ELEMENTS

from .measure import HELD_GRADIENT_SETS

GiB = 2**30
_BLOCK = re.compile(r"(^|\.)layers\.(\d+)\.")


@dataclass
class Estimate:
    stages: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> component -> bytes

    def peak(self) -> tuple[str, int]:
        stage = max(self.stages, key=lambda s: sum(self.stages[s].values()))
        return stage, sum(self.stages[stage].values())

    def describe(self) -> str:
        stage, total = self.peak()
        parts = ", ".join(f"{k} {size(v)}" for k, v in sorted(self.stages[stage].items(), key=lambda kv: -kv[1]))
        return f"{size(total)} in the {stage} stage ({parts})"


def size(n: int) -> str:
    return f"{n / GiB:.1f} GiB" if n >= GiB / 10 else f"{n / 2**20:.1f} MiB"


def parameter_shapes(model: torch.nn.Module) -> list[tuple[str, tuple[int, ...]]]:
    return [(n, tuple(p.shape)) for n, p in model.named_parameters()]


def with_blocks(shapes: list[tuple[str, tuple[int, ...]]], blocks: int) -> list[tuple[str, tuple[int, ...]]]:
    """The shapes of the same model with ``blocks`` transformer blocks: block 0's parameters repeated (every block
    of these architectures has the same shapes), the rest (embeddings, final norm, head) kept."""
    outside = [(n, s) for n, s in shapes if not _BLOCK.search(n)]
    first = [(n, s) for n, s in shapes if (m := _BLOCK.search(n)) and m.group(2) == "0"]
    if not first:
        raise ValueError("no parameter named ...layers.0...: cannot scale the model to another depth")
    return outside + [(_BLOCK.sub(lambda m: f"{m.group(1)}layers.{b}.", n, count=1), s)
                      for b in range(blocks) for n, s in first]


def _svd_workspace(shapes) -> int:
    """Bytes of the largest singular-value computation (grpo_verify.svd: a float64 copy and LAPACK's workspace for a
    matrix within a block or at most twice as long as wide, else one float64 block and the triangle)."""
    most = 0
    for _, s in shapes:
        if len(s) != 2:
            continue
        r, c = max(s), min(s)
        most = max(most, 2 * r * c * 8 if r * c <= BLOCK_ELEMENTS or r <= 2 * c else (BLOCK_ELEMENTS + 3 * c * c) * 8)
    return most


def estimate(shapes, dtype: torch.dtype, cfg, vocab: int, prompt_tokens: int) -> Estimate:
    """The peak of each stage (see the module docstring) for parameters of these shapes in ``dtype``."""
    size = torch.empty((), dtype=dtype).element_size()
    P = sum(_numel(s) for _, s in shapes)
    T = prompt_tokens + cfg.max_new_tokens
    R = max(cfg.group_sizes)
    # the embedding keeps token ids and the head's output gradient is the logits' (counted below)
    io = sum(s[0] + s[1] for _, s in shapes if len(s) == 2 and vocab not in s)
    svd = _svd_workspace(shapes)
    largest = max((s[0] * s[1] for _, s in shapes if len(s) == 2), default=0)
    sets = 1 + (HELD_GRADIENT_SETS - 1 if cfg.controls and cfg.layer_controls else 0)
    out = Estimate()
    # forward and the start of the backward: the activations are held; they go as the gradient sets fill up
    out.stages["engine forward"] = {"weights": P * size, "logits": R * T * vocab * (size + 8),
                                    "kept inputs and output gradients": R * T * io * size}
    out.stages["engine gradients and spectra"] = {"weights": P * size, "gradient sets (float32)": sets * P * 4,
                                                  "SVD": svd}
    if cfg.train_steps:
        rows = cfg.train_group_size * cfg.train_prompts_per_step
        out.stages["training"] = {"weights": P * size, "gradients": P * size, "AdamW moments": 2 * P * size,
                                  "callback snapshots": 2 * P * size, "callback GRPO gradient (float32)": P * 4,
                                  "logits": rows * T * vocab * (size + 8), "SVD": svd,
                                  "W - W_start (float64, largest matrix)": largest * 8}
    return out


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def available_bytes(device: torch.device) -> int | None:
    """Free memory on the device now: CUDA's free bytes, or the CPU's MemAvailable (None where unknown)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def measured_peak_bytes(device: torch.device) -> int:
    """The peak so far: CUDA's max_memory_allocated, or this process's peak resident set (Linux: KiB)."""
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def problem(est: Estimate, free: int | None, already_held: int = 0, budget: float = 0.8) -> str | None:
    """Why the run would not fit (None when it does, or when the free memory is unknown). ``already_held``: bytes
    of the estimate already allocated (the loaded weights), which the free memory no longer includes."""
    if free is None:
        return None
    stage, total = est.peak()
    if total - already_held <= budget * free:
        return None
    return (f"the memory preflight estimates a peak of {size(total)} in the {stage} stage (printed above by part), "
            f"but {size(free)} are free beyond the loaded weights ({budget:.0%} planned for): fewer --group-sizes "
            "or --max-new-tokens, --no-layer-controls, fewer --train-prompts-per-step, or a smaller model")
