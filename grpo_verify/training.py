"""A small on-policy GRPO training loop on an enumerable multi-prompt task with binary rewards.

The task has K prompts; prompt k has its own enumerable policy pi_k over the V^T sequences of T tokens
(``grpo_verify.synthetic``) and a set C_k of correct sequences, reward r = 1[o in C_k]. Each step draws
a group of R rollouts per prompt, computes group advantages (``grpo_verify.estimators.group_advantages``)
and the sequence-level on-policy surrogate

    L(theta) = -(1/(K R)) sum_k sum_i rho_ki A_ki,   rho_ki = pi(o_ki) / stopgrad(pi(o_ki)) = 1,

through ``per_token_loss`` and ``aggregate_loss("grpo")`` with one "token" per sequence (the sequence
log-probability). Its gradient is exactly

    -grad L = g_hat = (1/K) sum_k (1/R) sum_i A_ki g_ki,   g_ki = grad_theta log pi_k(o_ki),

the D5/D6 group estimator averaged over prompts. (Token-level ``grpo`` aggregation of equal-length
sequences gives g_hat / T: a constant rescaling of the learning rate.)

Policies (``make_task``):

* ``tabular``:  one ``TabularAutoregressive`` (unshared: one logit row per prefix) per prompt, so prompt k
  owns a block of (V^T - 1)/(V - 1) * V parameters and a rollout's score is non-zero only in the rows
  of the prefixes it visited. Coordinate sparsity is therefore partly structural.
* ``features``: ``FeatureAutoregressive`` policies that share one weight matrix W (d, V):
  logits(o_<t) = phi_k(o_<t) @ W with fixed random features phi per (prompt, prefix). Every rollout's
  score is dense in W, so a coordinate of g_hat can only vanish by cancellation or when every group
  of the batch is degenerate.

Everything exact is computed by enumerating the V^T sequences of each prompt: the success
probability p_k = sum_{o in C_k} pi_k(o) and the probability z_k = p_k^R + (1 - p_k)^R that the
group of prompt k has all rewards equal, hence all advantages 0 and no gradient (D6).

API: ``FeatureAutoregressive``, ``MultiPromptPolicy``, ``MultiPromptTask``, ``make_task``,
``sequence_codes``, ``grpo_gradient``, ``step_metrics``, ``zero_gradient_probability``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from grpo_verify.estimators import aggregate_loss, group_advantages, per_token_loss
from grpo_verify.rank import effective_rank, singular_values, stable_rank
from grpo_verify.synthetic import DTYPE, EnumerablePolicy, TabularAutoregressive

POLICY_KINDS = ("tabular", "features")
AdvantageFn = Callable[[Tensor], Tensor]  # rewards (K, R) -> advantages (K, R)


def _prefix_rows(prefixes: Tensor, vocab_size: int) -> Tensor:
    """Row (n,) of prefix o_<t among all prefixes of length 0..T-1, shorter prefixes first (as the unshared table)."""
    num, t = prefixes.shape
    offset = sum(vocab_size ** s for s in range(t))
    powers = vocab_size ** torch.arange(t - 1, -1, -1, dtype=torch.int64, device=prefixes.device)
    return offset + (prefixes * powers).sum(dim=1)


class FeatureAutoregressive(EnumerablePolicy):
    """pi(o_t | o_<t) = softmax(features[row(o_<t)] @ weights); ``weights`` (d, V) may be shared between policies.

    ``features`` is a fixed (rows, d) buffer with rows = (V^T - 1)/(V - 1), one per prefix.
    Score (closed form): g(o) = sum_t features[row_t] outer (e_{o_t} - pi(. | o_<t)), flattened (d * V).
    """

    def __init__(self, vocab_size: int, length: int, features: Tensor, weights: nn.Parameter) -> None:
        super().__init__(vocab_size, length)
        num_rows = sum(vocab_size ** t for t in range(length))
        if features.shape[0] != num_rows or features.ndim != 2:
            raise ValueError(f"features must be ({num_rows}, d), got {tuple(features.shape)}")
        if weights.shape != (features.shape[1], vocab_size):
            raise ValueError(f"weights must be ({features.shape[1]}, {vocab_size}), got {tuple(weights.shape)}")
        self.register_buffer("features", features.to(DTYPE).clone())
        self.weights = weights

    def next_token_logits(self, prefixes: Tensor) -> Tensor:
        return self.features[_prefix_rows(prefixes, self.vocab_size)] @ self.weights

    def scores(self, sequences: Tensor) -> Tensor:
        sequences = self._checked(sequences)
        weights = self.weights.detach()
        total = torch.zeros(sequences.shape[0], *weights.shape, dtype=DTYPE)
        for t in range(self.length):
            phi = self.features[_prefix_rows(sequences[:, :t], self.vocab_size)]
            token = nn.functional.one_hot(sequences[:, t], self.vocab_size).to(DTYPE)
            token = token - torch.softmax(phi @ weights, dim=-1)
            total += phi[:, :, None] * token[:, None, :]
        return total.flatten(1)


def sequence_codes(sequences: Tensor, vocab_size: int) -> Tensor:
    """Index of each sequence (..., T) in the lexicographic enumeration (``all_sequences`` order)."""
    length = sequences.shape[-1]
    powers = vocab_size ** torch.arange(length - 1, -1, -1, dtype=torch.int64)
    return (sequences * powers).sum(dim=-1)


class MultiPromptPolicy(nn.Module):
    """K enumerable policies (one per prompt, same V and T) whose parameters may be shared.

    The flat parameter vector is ``self.parameters()`` (each shared tensor once) concatenated;
    ``columns[k]`` maps the flat score columns of prompt k's own policy into it.
    """

    def __init__(self, prompt_policies: Sequence[EnumerablePolicy]) -> None:
        super().__init__()
        if not prompt_policies:
            raise ValueError("need at least one prompt policy")
        shapes = {(pol.vocab_size, pol.length) for pol in prompt_policies}
        if len(shapes) != 1:
            raise ValueError(f"all prompt policies need the same (V, T), got {sorted(shapes)}")
        self.prompts = nn.ModuleList(prompt_policies)
        (self.vocab_size, self.length), = shapes
        offsets, start = {}, 0
        for param in self.parameters():
            offsets[id(param)] = start
            start += param.numel()
        self.num_parameters = start
        self.columns = [torch.cat([torch.arange(offsets[id(param)], offsets[id(param)] + param.numel())
                                   for param in pol.parameters()]) for pol in prompt_policies]

    @property
    def num_prompts(self) -> int:
        return len(self.prompts)

    @torch.no_grad()
    def sample(self, group_size: int, generator: torch.Generator) -> Tensor:
        """A group of ``group_size`` i.i.d. sequences per prompt: (K, R, T)."""
        return torch.stack([pol.sample(group_size, generator) for pol in self.prompts])

    def log_probs(self, sequences: Tensor) -> Tensor:
        """log pi_k(o_ki) (K, R), differentiable."""
        return torch.stack([pol.log_prob(sequences[k]) for k, pol in enumerate(self.prompts)])

    @torch.no_grad()
    def scores(self, sequences: Tensor) -> Tensor:
        """Score vectors g_ki = grad_theta log pi_k(o_ki) in the flat parameter space: (K, R, P)."""
        out = torch.zeros(*sequences.shape[:2], self.num_parameters, dtype=DTYPE)
        for k, pol in enumerate(self.prompts):
            out[k].index_add_(1, self.columns[k], pol.scores(sequences[k]))
        return out

    @torch.no_grad()
    def outcome_probabilities(self) -> Tensor:
        """pi_k(o) for every prompt and every sequence in lexicographic order: (K, V^T), exact."""
        sequences = self.prompts[0].all_sequences()
        return torch.stack([torch.exp(pol(sequences)) for pol in self.prompts])

    def flat_gradient(self, scalar: Tensor) -> Tensor:
        parameters = list(self.parameters())
        grads = torch.autograd.grad(scalar, parameters, allow_unused=True)
        return torch.cat([torch.zeros_like(p).flatten() if g is None else g.flatten()
                          for p, g in zip(parameters, grads)])

    def flat_parameters(self) -> Tensor:
        return torch.cat([p.detach().flatten() for p in self.parameters()])


@dataclass
class MultiPromptTask:
    """A policy and the correct sequences of each prompt: ``correct`` (K, V^T) bool, lexicographic order."""

    policy: MultiPromptPolicy
    correct: Tensor

    def rewards(self, sequences: Tensor) -> Tensor:
        """Binary rewards (K, R) float64 of sampled sequences (K, R, T)."""
        codes = sequence_codes(sequences, self.policy.vocab_size)
        return torch.gather(self.correct, 1, codes).to(DTYPE)

    def success_probabilities(self) -> Tensor:
        """Exact p_k = P_{o ~ pi_k}(o correct), (K,), by enumeration."""
        return (self.policy.outcome_probabilities() * self.correct.to(DTYPE)).sum(dim=1)


def zero_gradient_probability(p: Tensor, group_size: int) -> Tensor:
    """z_R(p) = p^R + (1 - p)^R: the probability that a group has all binary rewards equal (D6)."""
    return p ** group_size + (1 - p) ** group_size


def make_task(correct_counts: Sequence[int], vocab_size: int = 3, length: int = 3, policy: str = "tabular",
              init_scale: float = 0.5, feature_dim: int = 8, task_seed: int = 0, init_seed: int = 0) -> MultiPromptTask:
    """K = len(correct_counts) prompts; prompt k has ``correct_counts[k]`` correct sequences drawn at random.

    The correct sets (and, for ``features``, the feature vectors) depend on ``task_seed`` only; the
    initial parameters, N(0, init_scale^2), on ``init_seed`` only. With small logits p_k starts near
    correct_counts[k] / V^T, so the counts set the prompts' difficulties.
    """
    num_outcomes = vocab_size ** length
    if any(not 1 <= c < num_outcomes for c in correct_counts):
        raise ValueError(f"correct counts must lie in 1..{num_outcomes - 1} (else p is 0 or 1), got {list(correct_counts)}")
    if policy not in POLICY_KINDS:
        raise ValueError(f"policy must be one of {POLICY_KINDS}, got {policy!r}")
    task_gen = torch.Generator().manual_seed(task_seed)
    init_gen = torch.Generator().manual_seed(10_007 * init_seed + 1)
    correct = torch.zeros(len(correct_counts), num_outcomes, dtype=torch.bool)
    for k, count in enumerate(correct_counts):
        correct[k, torch.randperm(num_outcomes, generator=task_gen)[:count]] = True
    num_rows = sum(vocab_size ** t for t in range(length))
    if policy == "tabular":
        prompt_policies = [TabularAutoregressive(vocab_size, length, logits=init_scale * torch.randn(
            num_rows, vocab_size, generator=init_gen, dtype=DTYPE)) for _ in correct_counts]
    else:
        weights = nn.Parameter(init_scale * torch.randn(feature_dim, vocab_size, generator=init_gen, dtype=DTYPE))
        prompt_policies = [FeatureAutoregressive(vocab_size, length, torch.randn(
            num_rows, feature_dim, generator=task_gen, dtype=DTYPE) / feature_dim ** 0.5, weights)
            for _ in correct_counts]
    return MultiPromptTask(MultiPromptPolicy(prompt_policies), correct)


def advantage_function(kind: str, eps: float = 1e-4) -> AdvantageFn:
    """rewards (K, R) -> ``group_advantages(rewards, kind, eps)``."""
    return lambda rewards: group_advantages(rewards, kind, eps)


def grpo_gradient(policy: MultiPromptPolicy, sequences: Tensor, advantages: Tensor) -> tuple[Tensor, Tensor]:
    """(loss, g_hat) of the sampled on-policy surrogate: loss from ``per_token_loss`` + ``aggregate_loss``,
    g_hat = -grad loss by autograd, flat (P,). Leaves the parameters' ``.grad`` untouched."""
    logps = policy.log_probs(sequences).reshape(-1, 1)  # one "token" per sequence: its log-probability
    mask = torch.ones_like(logps)
    losses = per_token_loss(logps, logps.detach(), advantages.reshape(-1), mask)
    loss = aggregate_loss(losses, mask, "grpo")
    return loss.detach(), -policy.flat_gradient(loss)


def _mean_ranks(matrices: Sequence[Tensor]) -> tuple[float, float]:
    """Mean effective rank and mean stable rank over matrices (NaN for none)."""
    if not matrices:
        return float("nan"), float("nan")
    spectra = [singular_values(m.numpy()) for m in matrices]
    return float(np.mean([effective_rank(s) for s in spectra])), float(np.mean([stable_rank(s) for s in spectra]))


def step_metrics(gradient: Tensor, rewards: Tensor, advantages: Tensor, scores: Tensor,
                 abs_threshold: float = 1e-8, rel_threshold: float = 1e-3) -> dict[str, float]:
    """Sparsity and rank metrics of one sampled batch.

    gradient (P,) = g_hat; rewards, advantages (K, R); scores (K, R, P). Coordinate fractions:
    ``frac_zero_abs`` |g_j| <= abs_threshold; ``frac_zero_rel`` |g_j| <= rel_threshold * max|g| (1 when
    g = 0); ``frac_untouched`` every rollout's score is exactly 0 at j; ``frac_degenerate_only`` some
    score is non-zero at j but only in groups with all advantages 0; ``frac_structural_zero`` (the sum
    of the two) no group with a non-zero advantage touches j, so g_j = 0 whatever the values.
    Ranks, averaged over the K groups: G (R, P) the scores, diag(A) G, and G - mean of its rows;
    ``*_AG_live`` averages diag(A) G over the groups whose advantages are not all 0 (NaN if none).
    """
    zero_groups = (advantages == 0).all(dim=1)
    degenerate = rewards.amax(dim=1) == rewards.amin(dim=1)
    magnitude = gradient.abs()
    largest = float(magnitude.max())
    touched = (scores != 0).any(dim=1)  # (K, P)
    live_touched = touched[~zero_groups].any(dim=0) if (~zero_groups).any() else torch.zeros_like(touched[0])
    any_touched = touched.any(dim=0)
    weighted = advantages[:, :, None] * scores
    centred = scores - scores.mean(dim=1, keepdim=True)
    erank_g, srank_g = _mean_ranks(list(scores))
    erank_ag, srank_ag = _mean_ranks(list(weighted))
    erank_ag_live, srank_ag_live = _mean_ranks([weighted[k] for k in range(len(weighted)) if not zero_groups[k]])
    erank_gc, srank_gc = _mean_ranks(list(centred))
    return {
        "zero_adv_frac": float(zero_groups.to(DTYPE).mean()),
        "degenerate_frac": float(degenerate.to(DTYPE).mean()),
        "sample_reward": float(rewards.mean()),
        "grad_norm": float(gradient.norm()),
        "grad_max_abs": largest,
        "frac_zero_abs": float((magnitude <= abs_threshold).to(DTYPE).mean()),
        "frac_zero_rel": 1.0 if largest == 0 else float((magnitude <= rel_threshold * largest).to(DTYPE).mean()),
        "frac_untouched": float((~any_touched).to(DTYPE).mean()),
        "frac_degenerate_only": float((any_touched & ~live_touched).to(DTYPE).mean()),
        "frac_structural_zero": float((~live_touched).to(DTYPE).mean()),
        "erank_G": erank_g, "srank_G": srank_g,
        "erank_AG": erank_ag, "srank_AG": srank_ag,
        "erank_AG_live": erank_ag_live, "srank_AG_live": srank_ag_live,
        "erank_Gc": erank_gc, "srank_Gc": srank_gc,
    }
