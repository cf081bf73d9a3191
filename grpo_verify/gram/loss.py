"""The per-rollout objective l_i whose score vectors g_i = grad_theta l_i the Gram engine contracts.

Rollout i is row i of ``input_ids`` (R x L). Its completion tokens are the positions
t >= completion_start[i] with attention_mask[i, t] = 1 (t >= 1: position 0 has no context). With
log p_it = log pi_theta(token_it | tokens_i,<t), read from the logits at position t - 1,

    l_i = sum_t w_it log p_it,   w_it = c_i [t is a completion token of rollout i],

where c_i = 1 / n_i ("mean": length-normalised, n_i completion tokens), 1 ("sum") or 1 / C
("constant": a fixed divisor such as the maximum completion length, as in Dr. GRPO). Every pad
position has weight 0, so no padded token enters any l_i.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

AGGREGATIONS = ("mean", "sum", "constant")


def as_completion_start(completion_start, rollouts: int, length: int, device=None) -> torch.Tensor:
    """Completion start per rollout (an int, or a sequence/tensor of R ints) as a long tensor (R,)."""
    start = torch.as_tensor(completion_start, dtype=torch.long, device=device)
    if start.ndim == 0:
        start = start.expand(rollouts).clone()
    if start.shape != (rollouts,):
        raise ValueError(f"completion_start must be a scalar or have shape ({rollouts},), got {tuple(start.shape)}")
    if torch.any(start < 0) or torch.any(start > length):
        raise ValueError(f"completion_start must lie in [0, {length}], got {start.tolist()}")
    return start


def default_constant(input_ids: torch.Tensor, completion_start) -> float:
    """The divisor of aggregation="constant" when none is given: the padded completion length
    L - min_i completion_start[i] (the longest completion the batch can hold)."""
    rollouts, length = input_ids.shape
    start = as_completion_start(completion_start, rollouts, length)
    return float(max(length - int(start.min()), 1))


def completion_weights(attention_mask: torch.Tensor, completion_start, aggregation: str = "mean",
                       constant: float | None = None) -> torch.Tensor:
    """Weights w (R x L) of the token log-probabilities: w[i, t] multiplies log p(token_it | <t).

    Pad positions (mask 0), prompt positions and position 0 get weight exactly 0.
    """
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    mask = attention_mask.bool()
    rollouts, length = mask.shape
    start = as_completion_start(completion_start, rollouts, length, device=mask.device)
    positions = torch.arange(length, device=mask.device)
    # the predicted token and its predecessor must both be real: with left padding the first real
    # token is "predicted" from a pad and must not count
    previous = torch.zeros_like(mask)
    previous[:, 1:] = mask[:, :-1]
    completion = mask & previous & (positions[None, :] >= start[:, None])
    counts = completion.sum(dim=1)
    if aggregation == "mean":
        if torch.any(counts == 0):
            raise ValueError(f"aggregation='mean' needs >= 1 completion token per rollout, got counts {counts.tolist()}")
        scale = 1.0 / counts.to(torch.float64)
    elif aggregation == "sum":
        scale = torch.ones(rollouts, dtype=torch.float64, device=mask.device)
    else:
        if constant is None or not constant > 0:
            raise ValueError(f"aggregation='constant' needs a positive constant, got {constant!r}")
        scale = torch.full((rollouts,), 1.0 / float(constant), dtype=torch.float64, device=mask.device)
    return completion.to(torch.float64) * scale[:, None]


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions counted over real tokens only, so a left-padded row sees the positions its
    unpadded sequence would (pads get position 0; they never reach the loss)."""
    return (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)


def token_logprobs(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """log p(token_t | <t) for t = 1..L-1 as an (R x (L-1)) tensor, from logits (R x L x V).

    Half-precision logits are promoted to float32 for the log-softmax; float64 stays float64.
    """
    shifted = logits[:, :-1, :]
    if shifted.dtype in (torch.float16, torch.bfloat16):
        shifted = shifted.float()
    targets = input_ids[:, 1:]
    nll = F.cross_entropy(shifted.reshape(-1, shifted.shape[-1]), targets.reshape(-1), reduction="none")
    return -nll.view(targets.shape)


def rollout_objectives(logits: torch.Tensor, input_ids: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """l (R,) = sum_t w[i, t] log p_it, in the dtype of the log-probabilities."""
    logp = token_logprobs(logits, input_ids)
    return (logp * weights[:, 1:].to(logp.dtype)).sum(dim=1)
