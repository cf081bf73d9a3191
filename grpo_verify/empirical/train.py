"""--train-steps: real on-policy GRPO steps (one AdamW update per batch of prompts).

Step s takes the next --train-prompts-per-step problems (cycling), samples --train-group-size
completions each (seeded by (seed, step, k)), scores them, and computes group advantages A. One
``rollout_gram`` call over the whole batch (B * R rollouts, right-padded) yields both K and, with
``advantages=A``, the parameter gradient sum_i A_i g_i; the update is on the loss
-(1 / (B R)) sum_i A_i l_i (the GRPO "mean over sequences" normalisation, no clipping or KL: a
single on-policy update has ratio 1). Recorded per step, before the update: fraction of
zero-advantage groups, gradient norm, fraction of near-zero coordinates, rank metrics.
"""

from __future__ import annotations

import numpy as np
import torch

from grpo_verify import rank
from grpo_verify.estimators import group_advantages
from grpo_verify.gram import rollout_gram

from . import reward as rewards_mod
from .measure import sparsity
from .sampling import concat_rollouts, derived_seed, prompt_ids, sample_group


def block_centring(B: int, R: int) -> np.ndarray:
    """Block-diagonal C: centres each group's rows separately."""
    return np.kron(np.eye(B), np.eye(R) - np.ones((R, R)) / R)


def train(model, tokenizer, problems, cfg, on_step, progress: bool = True) -> None:
    """Run cfg.train_steps steps, calling on_step(record) after each (the caller persists it)."""
    from tqdm.auto import tqdm
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    B, R, tol = cfg.train_prompts_per_step, cfg.train_group_size, cfg.relative_tolerance
    device = next(model.parameters()).device
    for step in tqdm(range(cfg.train_steps), desc="train steps", disable=not progress):
        batch = [problems[(step * B + k) % len(problems)] for k in range(B)]
        groups = [sample_group(model, tokenizer, prompt_ids(tokenizer, p, cfg.answer_format), R,
                               temperature=cfg.temperature, top_p=cfg.top_p, max_new_tokens=cfg.max_new_tokens,
                               seed=derived_seed(cfg.seed, "train", step, k)) for k, p in enumerate(batch)]
        rewards = torch.tensor([rewards_mod.score(g.texts, p.reference, cfg.reward, cfg.strict_format)
                                for g, p in zip(groups, batch)], dtype=torch.float64)
        adv = group_advantages(rewards, cfg.advantage, cfg.advantage_eps)
        ro = concat_rollouts(groups, tokenizer.pad_token_id)
        a = adv.reshape(-1)
        res = rollout_gram(model, ro.input_ids.to(device), ro.attention_mask.to(device), ro.completion_start,
                           cfg.aggregation, advantages=a, accumulate_dtype=torch.float64)
        K = res.K.numpy()
        grads = {n: g / (B * R) for n, g in res.grpo_gradients.items()}  # gradient of (1/(BR)) sum A_i l_i
        norm = float(torch.sqrt(sum((g.to(torch.float64) ** 2).sum() for g in grads.values())))
        zero_groups = int((adv == 0).all(dim=1).sum())
        an = a.numpy()
        per_group = [rank.rank_metrics_from_gram(np.diag(an[b * R:(b + 1) * R]) @ K[b * R:(b + 1) * R, b * R:(b + 1) * R]
                                                 @ np.diag(an[b * R:(b + 1) * R]), tol).effective_rank
                     for b in range(B) if bool((adv[b] != 0).any())]
        C = block_centring(B, R)
        record = {"step": step, "prompts": [p.index for p in batch], "mean_reward": float(rewards.mean()),
                  "zero_advantage_group_fraction": zero_groups / B, "gradient_norm": norm,
                  "sparsity": sparsity(list(grads.values()), cfg.sparsity_thresholds) if norm > 0 else None,
                  "rank_G": rank.rank_metrics_from_gram(K, tol).as_dict(),
                  "rank_centred": rank.rank_metrics_from_gram(C @ K @ C, tol).as_dict(),
                  "rank_weighted": rank.rank_metrics_from_gram(np.diag(an) @ K @ np.diag(an), tol).as_dict(),
                  "group_weighted_effective_rank_mean": float(np.mean(per_group)) if per_group else None,
                  "completion_tokens_mean": float(np.mean(ro.completion_tokens))}
        if norm > 0:  # all groups degenerate: nothing to learn from; skip the update (AdamW would still decay)
            for (name, p) in model.named_parameters():
                if name in grads:
                    p.grad = (-grads[name]).to(dtype=p.dtype, device=p.device)  # ascend the objective
            opt.step()
            opt.zero_grad(set_to_none=True)
        record["updated"] = norm > 0
        del res, grads
        on_step(record)
