"""GRPO estimators in torch: group advantages, token advantages, the clipped surrogate and loss aggregation.

Shapes: a batch holds B prompts with R completions each (a group). Rewards are (B, R); sequence
tensors flatten them group-major to N = B * R (sequence b * R + j is completion j of prompt b,
TRL's ``repeat_interleave`` order); token tensors are (N, T) with a completion mask m of 0/1.
Every function works for any floating dtype and device; results keep the dtype and device.

Conventions that differ from TRL's ``GRPOTrainer`` (``_generate_and_score_completions`` and
``_compute_loss``):

* A group whose rewards are all equal gets exactly zero advantages, for every kind and every eps.
  TRL computes (r - mean) / (std + eps), which is round-off / eps (about 1e-13 for three rewards
  of 0.1) and 0/0 = NaN for eps = 0.
* ``dapo`` here divides by the number of valid tokens of the batch given, which is TRL's ``bnpo``.
  TRL's ``dapo`` divides by ``num_items_in_batch``, the valid-token count over all processes and
  gradient-accumulation steps; the two agree on one process with one accumulation step.
* No division by the number of gradient-accumulation steps (TRL does so for grpo, bnpo, dr_grpo).
* ``dr_grpo`` takes ``max_completion_length`` as an argument (default T, the padded width);
  TRL uses the configured ``max_completion_length``.
* Not covered: TRL's two-sided clipping ``delta``, sequence-level importance sampling (GSPO),
  and the cispo/sapo loss types.
"""

from __future__ import annotations

import torch
from torch import Tensor

ADVANTAGE_KINDS = ("grpo", "population", "dr_grpo", "batch", "rloo")
AGGREGATION_KINDS = ("grpo", "dr_grpo", "dapo", "bnpo")
DEFAULT_EPS = 1e-4


def _validate_rewards(rewards: Tensor) -> None:
    if not isinstance(rewards, Tensor):
        raise ValueError(f"rewards must be a torch.Tensor, got {type(rewards).__name__}")
    if rewards.ndim != 2:
        raise ValueError(f"rewards must have shape (B, R), got shape {tuple(rewards.shape)}")
    if not rewards.is_floating_point():
        raise ValueError(f"rewards must be floating point, got {rewards.dtype}; convert with rewards.float()")
    batch_size, group_size = rewards.shape
    if group_size < 2:
        raise ValueError(f"each group needs at least R = 2 completions to compare, got R = {group_size}")
    if batch_size < 1:
        raise ValueError("rewards must hold at least one group, got B = 0")
    bad_groups = (~torch.isfinite(rewards)).any(dim=1).nonzero().flatten().tolist()
    if bad_groups:
        raise ValueError(f"rewards must be finite; NaN or inf in group index(es) {bad_groups}")


def _validate_eps(eps: float) -> None:
    if not (eps >= 0 and eps < float("inf")):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")


def _centred(rewards: Tensor) -> Tensor:
    """r_ij - mean_j r_ij, per group."""
    return rewards - rewards.mean(dim=1, keepdim=True)


def _divide_or_zero(numerator: Tensor, denominator: Tensor) -> Tensor:
    """numerator / denominator, and 0 where the denominator is 0 (never NaN or inf)."""
    nonzero = denominator != 0
    safe_denominator = torch.where(nonzero, denominator, torch.ones_like(denominator))
    return torch.where(nonzero, numerator / safe_denominator, torch.zeros_like(numerator))


def _zero_constant_groups(advantages: Tensor, rewards: Tensor) -> Tensor:
    """Set the advantages of groups whose rewards are all equal to exactly 0."""
    # The rounded group mean can differ from the common reward by an ulp; zeroing by the
    # rewards themselves, not by std == 0, makes the convention exact.
    constant = rewards.amax(dim=1, keepdim=True) == rewards.amin(dim=1, keepdim=True)
    return advantages.masked_fill(constant, 0.0)


def grpo_advantages(rewards: Tensor, eps: float = DEFAULT_EPS) -> Tensor:
    """GRPO advantages with the sample std (as TRL): A_ij = (r_ij - mean_j r_ij) / (std_j r_ij + eps).

    std is the unbiased sample std, sqrt(sum_j (r_ij - mean)^2 / (R - 1)). Constant groups give 0.
    """
    _validate_rewards(rewards)
    _validate_eps(eps)
    scale = rewards.std(dim=1, correction=1, keepdim=True) + eps
    return _zero_constant_groups(_divide_or_zero(_centred(rewards), scale), rewards)


def population_std_advantages(rewards: Tensor, eps: float = DEFAULT_EPS) -> Tensor:
    """Advantages with the population std: A_ij = (r_ij - mean) / (sqrt(sum_j (r_ij - mean)^2 / R) + eps).

    Constant groups give 0.
    """
    _validate_rewards(rewards)
    _validate_eps(eps)
    scale = rewards.std(dim=1, correction=0, keepdim=True) + eps
    return _zero_constant_groups(_divide_or_zero(_centred(rewards), scale), rewards)


def dr_grpo_advantages(rewards: Tensor) -> Tensor:
    """Dr. GRPO advantages, centred but not scaled: A_ij = r_ij - mean_j r_ij. Constant groups give 0."""
    _validate_rewards(rewards)
    return _zero_constant_groups(_centred(rewards), rewards)


def batch_std_advantages(rewards: Tensor, eps: float = DEFAULT_EPS) -> Tensor:
    """Group-centred, batch-scaled advantages (TRL scale_rewards="batch"): A_ij = (r_ij - mean_j r_ij) / (std(r) + eps).

    std(r) is the unbiased std of all B * R rewards around the batch mean (not of the centred
    rewards), as ``rewards.std()`` in TRL. Constant groups give 0.
    """
    _validate_rewards(rewards)
    _validate_eps(eps)
    scale = rewards.std(correction=1) + eps
    return _zero_constant_groups(_divide_or_zero(_centred(rewards), scale), rewards)


def rloo_advantages(rewards: Tensor) -> Tensor:
    """Leave-one-out (RLOO) advantages: A_ij = r_ij - (sum_k r_ik - r_ij) / (R - 1) = R / (R - 1) * (r_ij - mean_j r_ij).

    Constant groups give 0.
    """
    _validate_rewards(rewards)
    group_size = rewards.shape[1]
    mean_of_others = (rewards.sum(dim=1, keepdim=True) - rewards) / (group_size - 1)
    return _zero_constant_groups(rewards - mean_of_others, rewards)


def group_advantages(rewards: Tensor, kind: str = "grpo", eps: float = DEFAULT_EPS) -> Tensor:
    """Group-relative advantages of a (B, R) reward tensor; kind is one of grpo, population, dr_grpo, batch, rloo.

    eps is used by the kinds that divide by a std (grpo, population, batch) and ignored otherwise.
    Raises ValueError for R < 2, non-finite rewards (naming the groups) and unknown kinds.
    """
    if kind == "grpo":
        return grpo_advantages(rewards, eps)
    if kind == "population":
        return population_std_advantages(rewards, eps)
    if kind == "dr_grpo":
        return dr_grpo_advantages(rewards)
    if kind == "batch":
        return batch_std_advantages(rewards, eps)
    if kind == "rloo":
        return rloo_advantages(rewards)
    raise ValueError(f"unknown advantage kind {kind!r}; choose one of {ADVANTAGE_KINDS}")


def _as_sequence_vector(sequence_advantages: Tensor) -> Tensor:
    if sequence_advantages.ndim not in (1, 2):
        raise ValueError(
            f"sequence advantages must have shape (N,) or (B, R), got {tuple(sequence_advantages.shape)}"
        )
    return sequence_advantages.reshape(-1)


def _validate_mask(completion_mask: Tensor, num_sequences: int) -> Tensor:
    """Check a (N, T) mask of zeros and ones and return it as bool."""
    if completion_mask.ndim != 2 or completion_mask.shape[0] != num_sequences:
        raise ValueError(
            f"completion mask must have shape ({num_sequences}, T), got {tuple(completion_mask.shape)}"
        )
    if not ((completion_mask == 0) | (completion_mask == 1)).all():
        raise ValueError("completion mask must hold only 0 and 1")
    return completion_mask.bool()


def token_advantages(sequence_advantages: Tensor, completion_mask: Tensor) -> Tensor:
    """Per-token advantages: A_it = A_i * m_it, for sequence advantages of shape (N,) or (B, R) (flattened group-major)."""
    advantages = _as_sequence_vector(sequence_advantages)
    mask = _validate_mask(completion_mask, advantages.shape[0])
    return advantages[:, None] * mask.to(advantages.dtype)


def k3_kl(logps: Tensor, ref_logps: Tensor) -> Tensor:
    """The k3 per-token estimator of KL(pi || pi_ref): exp(ref - logp) - (ref - logp) - 1 >= 0, zero iff logp = ref."""
    log_ratio = ref_logps - logps
    return torch.exp(log_ratio) - log_ratio - 1


def clipped_surrogate(
    logps: Tensor, old_logps: Tensor, advantages: Tensor, eps_low: float = 0.2, eps_high: float | None = None
) -> Tensor:
    """PPO/GRPO clipped surrogate per token: min(rho A_i, clip(rho, 1 - eps_low, 1 + eps_high) A_i), rho = exp(logp - old_logp).

    eps_high defaults to eps_low (symmetric clipping, TRL's epsilon_high=None).
    """
    eps_high = eps_low if eps_high is None else eps_high
    ratio = torch.exp(logps - old_logps)
    advantage = _as_sequence_vector(advantages)[:, None]
    clipped_ratio = torch.clamp(ratio, 1 - eps_low, 1 + eps_high)
    return torch.minimum(ratio * advantage, clipped_ratio * advantage)


def per_token_loss(
    logps: Tensor,
    old_logps: Tensor,
    advantages: Tensor,
    completion_mask: Tensor,
    eps_low: float = 0.2,
    eps_high: float | None = None,
    beta: float = 0.0,
    ref_logps: Tensor | None = None,
) -> Tensor:
    """GRPO per-token loss: l_it = -(min(rho A_i, clip(rho, 1 - eps_low, 1 + eps_high) A_i) - beta * KL3_it), 0 where m_it = 0.

    logps, old_logps, ref_logps and the mask are (N, T); advantages (N,) or (B, R). The KL term is
    skipped when beta = 0, so ref_logps may then be None. Padding positions are 0 whatever the
    logps hold there.
    """
    if logps.ndim != 2 or old_logps.shape != logps.shape:
        raise ValueError(
            f"logps and old_logps must share one (N, T) shape, got {tuple(logps.shape)} and {tuple(old_logps.shape)}"
        )
    advantage_vector = _as_sequence_vector(advantages)
    if advantage_vector.shape[0] != logps.shape[0]:
        raise ValueError(f"need one advantage per sequence: {advantage_vector.shape[0]} vs N = {logps.shape[0]}")
    mask = _validate_mask(completion_mask, logps.shape[0])
    if mask.shape != logps.shape:
        raise ValueError(f"completion mask shape {tuple(mask.shape)} differs from logps shape {tuple(logps.shape)}")
    if not 0 <= eps_low < 1 or (eps_high is not None and eps_high < 0):
        raise ValueError(f"need 0 <= eps_low < 1 and eps_high >= 0, got {eps_low!r}, {eps_high!r}")
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta!r}")

    objective = clipped_surrogate(logps, old_logps, advantage_vector, eps_low, eps_high)
    if beta != 0:
        if ref_logps is None or ref_logps.shape != logps.shape:
            raise ValueError("beta != 0 needs ref_logps of the same (N, T) shape as logps")
        objective = objective - beta * k3_kl(logps, ref_logps)
    return torch.where(mask, -objective, torch.zeros_like(objective))


def _masked_losses(per_token_loss: Tensor, completion_mask: Tensor) -> tuple[Tensor, Tensor]:
    """The losses with padding set to 0 (where, not multiply: NaN * 0 is NaN) and the mask as the loss dtype."""
    if per_token_loss.ndim != 2:
        raise ValueError(f"per-token loss must have shape (N, T), got {tuple(per_token_loss.shape)}")
    mask = _validate_mask(completion_mask, per_token_loss.shape[0])
    if mask.shape != per_token_loss.shape:
        raise ValueError(f"completion mask shape {tuple(mask.shape)} differs from loss shape {tuple(per_token_loss.shape)}")
    masked = torch.where(mask, per_token_loss, torch.zeros_like(per_token_loss))
    return masked, mask.to(per_token_loss.dtype)


def aggregate_grpo(per_token_loss: Tensor, completion_mask: Tensor) -> Tensor:
    """GRPO aggregation: (1/N) sum_i [ sum_t m_it l_it / max(1, sum_t m_it) ].

    As TRL, a sequence with no valid token contributes 0 but still counts in the 1/N.
    """
    masked, mask = _masked_losses(per_token_loss, completion_mask)
    per_sequence = masked.sum(dim=1) / mask.sum(dim=1).clamp(min=1)
    return per_sequence.mean()


def aggregate_dr_grpo(per_token_loss: Tensor, completion_mask: Tensor, max_completion_length: int | None = None) -> Tensor:
    """Dr. GRPO aggregation: sum_{i,t} m_it l_it / (N * L), with the constant L = max_completion_length (default T).

    L must be at least 1 and at least the longest completion, else ValueError.
    """
    masked, mask = _masked_losses(per_token_loss, completion_mask)
    length = per_token_loss.shape[1] if max_completion_length is None else max_completion_length
    if length < 1:
        raise ValueError(f"max_completion_length must be >= 1, got {length}")
    longest = int(mask.sum(dim=1).max().item()) if mask.numel() else 0
    if length < longest:
        raise ValueError(f"max_completion_length = {length} is below the longest completion ({longest} tokens)")
    return masked.sum() / (per_token_loss.shape[0] * length)


def aggregate_token_mean(per_token_loss: Tensor, completion_mask: Tensor) -> Tensor:
    """DAPO / BNPO aggregation, the mean over all valid tokens of the batch: sum_{i,t} m_it l_it / max(1, sum_{i,t} m_it)."""
    masked, mask = _masked_losses(per_token_loss, completion_mask)
    return masked.sum() / mask.sum().clamp(min=1)


def aggregate_loss(
    per_token_loss: Tensor, completion_mask: Tensor, kind: str = "grpo", max_completion_length: int | None = None
) -> Tensor:
    """Aggregate a (N, T) per-token loss with its mask; kind is one of grpo, dr_grpo, dapo, bnpo.

    dapo and bnpo are the same here (see the module docstring for how TRL's dapo differs).
    """
    if kind == "grpo":
        return aggregate_grpo(per_token_loss, completion_mask)
    if kind == "dr_grpo":
        return aggregate_dr_grpo(per_token_loss, completion_mask, max_completion_length)
    if kind in ("dapo", "bnpo"):
        return aggregate_token_mean(per_token_loss, completion_mask)
    raise ValueError(f"unknown aggregation kind {kind!r}; choose one of {AGGREGATION_KINDS}")
