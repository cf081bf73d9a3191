"""Reference per-rollout gradients, for validation and as benchmark baselines.

* :func:`naive_gram` with ``mode="loop"``: for each rollout, strip its padding, run the model on
  that sequence alone (batch 1, no mask, positions 0..n-1), compute l_i from the logits with its
  own code (not :mod:`grpo_verify.gram.loss`), backpropagate, flatten. Independent of the
  engine's batching, masking and position handling, so it catches pad leaks.
* ``mode="batched"``: one batched forward, then R backward passes of l_i (retain_graph).
* :func:`func_gram`: torch.func ``vmap(grad(l_i))`` over the rollouts of the padded batch.

All return per-parameter Gram matrices in float64; they hold R x (number of parameters) values.
"""

from __future__ import annotations

import torch
from torch import nn

from .engine import GramResult, group_of
from .loss import (as_completion_start, completion_weights, default_constant, position_ids_from_mask,
                   rollout_objectives)


def _trainable(model: nn.Module):
    return [(n, p) for n, p in model.named_parameters() if p.requires_grad]


def _unpadded_objective(model: nn.Module, row: torch.Tensor, mask: torch.Tensor, start: int, aggregation: str,
                        constant: float | None) -> torch.Tensor:
    keep = mask.bool()
    idx = torch.nonzero(keep).flatten()
    if idx.numel() == 0 or idx[-1] - idx[0] + 1 != idx.numel():
        raise ValueError("each row's real tokens must be one contiguous run (left or right padding)")
    first = int(idx[0])
    tokens = row[keep][None, :]
    start_local = max(start - first, 1)
    logits = model(input_ids=tokens, use_cache=False).logits[0]
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    logp = torch.log_softmax(logits[:-1], dim=-1).gather(1, tokens[0, 1:, None])[:, 0]
    picked = logp[start_local - 1:]
    n = picked.numel()
    if aggregation == "mean":
        if n == 0:
            raise ValueError("aggregation='mean' needs >= 1 completion token per rollout")
        return picked.sum() / n
    if aggregation == "sum":
        return picked.sum()
    if aggregation == "constant":
        return picked.sum() / constant
    raise ValueError(f"unknown aggregation {aggregation!r}")


def per_rollout_gradients(model, input_ids, attention_mask=None, completion_start=0, aggregation="mean",
                          constant=None, mode="loop", store_dtype=None):
    """{parameter name: (R x numel) per-rollout gradients} and the objectives l (R,)."""
    rollouts, length = input_ids.shape
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    if aggregation == "constant" and constant is None:
        constant = default_constant(input_ids, completion_start)
    starts = as_completion_start(completion_start, rollouts, length)
    params = _trainable(model)
    store = {n: torch.zeros(rollouts, p.numel(), dtype=store_dtype or p.dtype, device=p.device) for n, p in params}
    objectives = torch.zeros(rollouts, dtype=torch.float64)
    if mode == "loop":
        for i in range(rollouts):
            with torch.enable_grad():
                l_i = _unpadded_objective(model, input_ids[i], attention_mask[i], int(starts[i]), aggregation, constant)
                grads = torch.autograd.grad(l_i, [p for _, p in params], allow_unused=True)
            objectives[i] = float(l_i.detach())
            for (n, _), g in zip(params, grads):
                if g is not None:
                    store[n][i] = g.reshape(-1).to(store[n].dtype)
            del grads
    elif mode == "batched":
        weights = completion_weights(attention_mask, completion_start, aggregation, constant)
        with torch.enable_grad():
            logits = model(input_ids=input_ids, attention_mask=attention_mask,
                           position_ids=position_ids_from_mask(attention_mask), use_cache=False).logits
            l = rollout_objectives(logits, input_ids, weights)
            for i in range(rollouts):
                grads = torch.autograd.grad(l[i], [p for _, p in params], retain_graph=i < rollouts - 1,
                                            allow_unused=True)
                for (n, _), g in zip(params, grads):
                    if g is not None:
                        store[n][i] = g.reshape(-1).to(store[n].dtype)
                del grads
        objectives = l.detach().to(torch.float64)
    else:
        raise ValueError(f"mode must be 'loop' or 'batched', got {mode!r}")
    return store, objectives


def gram_from_gradients(store: dict, objectives, groups=None, advantages=None) -> GramResult:
    per_parameter = {n: (g.to(torch.float64) @ g.to(torch.float64).T).cpu() for n, g in store.items()}
    rollouts = objectives.shape[0]
    K = torch.zeros(rollouts, rollouts, dtype=torch.float64)
    for k in per_parameter.values():
        K += k
    result = GramResult(K=K, per_parameter=per_parameter, objectives=objectives)
    if groups is not None:
        result.groups = result.grouped(groups)
    if advantages is not None:
        a = torch.as_tensor(advantages, dtype=torch.float64)
        result.grpo_gradients = {n: a @ g.to(torch.float64) for n, g in store.items()}
    return result


def naive_gram(model, input_ids, attention_mask=None, completion_start=0, aggregation="mean", groups=None, *,
               constant=None, mode="loop", advantages=None, store_dtype=None) -> GramResult:
    """The naive loop: per-rollout backward, flatten, Gram (see the module docstring)."""
    store, objectives = per_rollout_gradients(model, input_ids, attention_mask, completion_start, aggregation,
                                              constant, mode, store_dtype)
    result = gram_from_gradients(store, objectives, groups, advantages)
    if advantages is not None:
        shapes = dict(_trainable(model))
        result.grpo_gradients = {n: g.reshape(shapes[n].shape) for n, g in result.grpo_gradients.items()}
    return result


def func_gram(model, input_ids, attention_mask=None, completion_start=0, aggregation="mean", groups=None, *,
              constant=None, chunk_size=None) -> GramResult:
    """torch.func per-sample gradients: vmap over rollouts of grad of l_i on the padded row
    (batch of 1 with a prepared 4-D additive mask), then the Gram. Raises whatever torch.func
    raises where the model does not fit vmap (data-dependent control flow; fits Llama-like
    models with attn_implementation="eager")."""
    from torch.func import functional_call, grad, vmap

    rollouts, _ = input_ids.shape
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    if aggregation == "constant" and constant is None:
        constant = default_constant(input_ids, completion_start)
    weights = completion_weights(attention_mask, completion_start, aggregation, constant)
    positions = position_ids_from_mask(attention_mask)
    names = [n for n, _ in _trainable(model)]
    params = {n: p.detach() for n, p in _trainable(model)}

    dtype = next(model.parameters()).dtype
    length = input_ids.shape[1]
    causal = torch.tril(torch.ones(length, length, dtype=torch.bool, device=input_ids.device))

    def objective(theta, ids, mask, pos, w):
        # a prepared 4-D additive mask: transformers' own mask construction branches on data
        allowed = causal & mask.bool()[None, :]
        additive = (~allowed).to(dtype)[None, None] * torch.finfo(dtype).min
        logits = functional_call(model, theta, (), {"input_ids": ids[None], "attention_mask": additive,
                                                    "position_ids": pos[None], "use_cache": False}).logits
        return rollout_objectives(logits, ids[None], w[None])[0]

    per_sample = vmap(grad(objective), in_dims=(None, 0, 0, 0, 0), chunk_size=chunk_size)(
        params, input_ids, attention_mask, positions, weights)
    store = {n: per_sample[n].reshape(rollouts, -1) for n in names}
    return gram_from_gradients(store, torch.zeros(rollouts, dtype=torch.float64), groups)


__all__ = ["naive_gram", "func_gram", "per_rollout_gradients", "gram_from_gradients", "group_of"]
