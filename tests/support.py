"""Helpers shared by several test modules (imported by name: pytest puts tests/ on the path)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import sympy as sp
import torch

from grpo_verify.proof import Assumption, Result
from grpo_verify.proof.catalog import Family


def load_script(path: Path, name: str) -> ModuleType:
    """Import a script that is not a package module (experiments/*.py) under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def listing(folder: Path) -> list[str]:
    """Every path below ``folder``, relative and sorted: to check that nothing was written."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def one_result_catalogue(progress=None, jobs=None):
    """A stand-in for ``check_all``: one family with one proved result, checked in milliseconds."""
    x = sp.Symbol("x", positive=True)
    result = Result(name="stand_in", doc="A stand-in result.", lhs=(x + 1) ** 2, rhs=x**2 + 2 * x + 1,
                    assumptions=(Assumption("$x > 0$"),))
    result.family = "d9_stand_in"
    family = Family("d9_stand_in", "D9", "D9 stand-in", "text", (result,), ())
    return [family], {"stand_in": result.check()}


def padded_rows(vocab: int, pad: int, side: str = "right", seed: int = 1, rollouts: int = 4, length: int = 11):
    """Token rows of unequal length (``length``, 8, 6, 9 real tokens), padded with ``pad`` on ``side``, and
    each rollout's completion start (after 4, 3, 2, 5 prompt tokens) as an index into its padded row."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (rollouts, length), generator=g)
    mask = torch.zeros(rollouts, length, dtype=torch.long)
    start = []
    for i, (n, p) in enumerate(zip([length, 8, 6, 9][:rollouts], [4, 3, 2, 5][:rollouts])):
        if side == "right":
            mask[i, :n] = 1
            start.append(p)
        else:
            mask[i, length - n:] = 1
            start.append(length - n + p)
    ids[mask == 0] = pad
    return ids, mask, torch.tensor(start)


def per_rollout_gram(model, entry: dict, aggregation: str = "mean"):
    """K = G G^T, row i of G = d l_i / d(the parameters requiring grad) by torch.autograd.grad, one rollout at a time,
    independent of the Gram engine and of TRL's loss code: the rollout's real tokens alone (positions 0..n-1),
    l_i = the mean ("mean") or the sum ("sum") over its completion tokens of log pi(y_t | y_<t). ``entry`` is one
    group of a ``GRPOVerifyCallback`` record (its ids, mask, completion start, advantages and kept rows)."""
    import numpy as np

    params = [p for _, p in model.named_parameters() if p.requires_grad]
    ids, mask = torch.tensor(entry["input_ids"]), torch.tensor(entry["attention_mask"])
    start = entry["completion_start"]
    rows = []
    for i in range(ids.shape[0]):
        keep = mask[i].bool()
        assert bool(keep[:start].all()), "one prompt per group: no left padding"
        tokens = ids[i][keep][None]
        logp = torch.log_softmax(model(input_ids=tokens, use_cache=False).logits[0, :-1], dim=-1)
        picked = logp.gather(1, tokens[0, 1:, None])[start - 1:, 0]
        objective = picked.sum() / picked.numel() if aggregation == "mean" else picked.sum()
        grads = torch.autograd.grad(objective, params, allow_unused=True)
        rows.append(torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1) for g, p in zip(grads, params)]))
    G = torch.stack(rows).double()
    K = np.zeros((len(entry["advantages"]),) * 2)
    K[np.ix_(entry["kept"], entry["kept"])] = (G @ G.T).numpy()
    return K
