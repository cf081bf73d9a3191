"""What is measured for one group of R rollouts.

K = G G^T (R x R) comes from :func:`grpo_verify.gram.rollout_gram` over all trainable parameters;
row i of G is g_i = grad_theta l_i, l_i the per-rollout objective (--aggregation). Every
G-level matrix is a reweighting of K, so it costs nothing extra:

    G                 K
    centred G  (C G)  C K C,               C = I - 11^T / R
    diag(a) G         diag(a) K diag(a),   for each condition's advantage vector a

and the group gradient of the GRPO objective J = (1/R) sum_i a_i l_i ("grpo" normalisation:
mean over the group of per-rollout objectives) has norm ||grad J||^2 = a^T K a / R^2.

Per layer: the GRPO gradient of each 2-D weight W, sum_i a_i dl_i/dW (rank metrics are scale
invariant, so the 1/R is dropped), as a matrix; its singular values come from the engine
(advantages=a, singular_values=True). The controls' per-layer gradients come from the same
engine call (weightings={control: a}), no extra forward or backward; each control holds one
gradient set (float32) until the call returns.

Conditions: the GRPO advantages (--advantage) and the controls: gaussian (i.i.d. N(0,1), seeded),
gaussian_centred (those minus their mean), ones, rewards (the raw rewards), and the advantages of
the other reward (partial credit when the reward is binary, binary when it is partial).
A degenerate group (all rewards equal) has zero GRPO advantages: its GRPO gradient is zero and
recorded as such, not measured for rank. With --degenerate-groups measure, K and the controls are
measured on it as on any group; with count (the CPU default) there is no engine pass at all: the
record holds what needs no K (the advantages, the GRPO gradient's norm 0 and the zero matrix's
spectrum), equal to what the measured path writes for those keys, and "measured": false.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from grpo_verify import rank
from grpo_verify.estimators import group_advantages
from grpo_verify.gram import rollout_gram

from .sampling import Rollouts

METRICS = ("effective_rank", "stable_rank", "participation_ratio", "energy_rank_90", "energy_rank_95",
           "energy_rank_99", "tolerance_rank")
LAYER_STORED = ("effective_rank", "stable_rank", "energy_rank_90")  # per-layer arrays kept in results.jsonl


HELD_GRADIENT_SETS = 6  # GRPO and the 5 controls' weighted gradients, held together by one engine call


def layer_controls_memory_problem(parameters: int, free_bytes: int, budget: float = 0.8) -> str | None:
    """Why the per-layer control spectra would not fit in ``free_bytes`` of device memory (None
    when they fit): they hold HELD_GRADIENT_SETS float32 gradient sets at once."""
    need = HELD_GRADIENT_SETS * parameters * 4
    if need <= budget * free_bytes:
        return None
    return (f"the controls' per-layer spectra hold {HELD_GRADIENT_SETS} float32 gradient sets at once "
            f"({need / 2**30:.0f} GiB for {parameters / 1e9:.2f}B parameters) but only {free_bytes / 2**30:.0f} GiB "
            "of device memory is free: pass --no-layer-controls (the controls are then measured on the R x R "
            "matrices only)")


def centring(R: int) -> np.ndarray:
    return np.eye(R) - np.ones((R, R)) / R


def derived_grams(K: np.ndarray, a: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Gram matrices of G, of C G and (given a) of diag(a) G, from K = G G^T."""
    C = centring(K.shape[0])
    out = {"G": K, "centred": C @ K @ C}
    if a is not None:
        out["weighted"] = np.diag(a) @ K @ np.diag(a)
    return out


def group_gradient_norm(K: np.ndarray, a: np.ndarray) -> float:
    """||(1/R) sum_i a_i g_i|| = sqrt(a^T K a) / R (round-off negatives clipped to 0)."""
    return float(np.sqrt(max(float(a @ K @ a), 0.0)) / K.shape[0])


def spectrum(gram: np.ndarray, tol: float) -> dict:
    sigma = rank.singular_values_from_gram(gram)
    return {"singular_values": sigma.tolist(), "metrics": rank.rank_metrics(sigma, tol).as_dict()}


def advantage_values(rewards: list[float], kind: str, eps: float) -> np.ndarray:
    """One group's advantages (``estimators.group_advantages``), in float64."""
    return group_advantages(torch.tensor([rewards], dtype=torch.float64), kind, eps)[0].numpy()


def advantages_are_zero(advantages: np.ndarray) -> bool:
    """Whether a group's GRPO advantages are all exactly 0 (its GRPO gradient is then exactly 0): the test that
    decides a degenerate group, for the measurement and for the run's progress line alike."""
    return bool(np.all(advantages == 0))


def conditions(rewards: list[float], other_rewards: list[float], other_name: str, kind: str, eps: float,
               controls: bool, seed: int) -> dict[str, np.ndarray]:
    """Advantage vector per condition; "grpo" first."""
    out = {"grpo": advantage_values(rewards, kind, eps)}
    if controls:
        rng = np.random.default_rng(seed)
        z = rng.standard_normal(len(rewards))
        out["gaussian"] = z
        out["gaussian_centred"] = z - z.mean()
        out["ones"] = np.ones(len(rewards))
        out["rewards"] = np.asarray(rewards, dtype=np.float64)
        out[other_name] = advantage_values(other_rewards, kind, eps)
    return out


CHUNK = 1 << 24  # values converted or compared at once: a 256000 x 3072 gradient is 786M values


def _chunks(g: torch.Tensor):
    return g.detach().reshape(-1).split(CHUNK)


def squared_norm(g: torch.Tensor) -> float:
    """sum of g_k^2 accumulated in float64, CHUNK values at a time (a whole float64 copy and its square of the
    4B model's LM-head gradient took 12.6 GB, found by the CPU rehearsal's peak memory)."""
    return float(sum(float((c.to(torch.float64) ** 2).sum()) for c in _chunks(g)))


def sparsity(grads: list[torch.Tensor], thresholds) -> dict[str, float]:
    """Fraction of coordinates (over all parameters) with |g_k| <= tau * max|g|, and exactly 0.
    Counted tensor by tensor: concatenating 135M float64 values would cost a GB and seconds."""
    top = max((float(torch.linalg.vector_norm(g.detach(), float("inf"))) for g in grads if g.numel()), default=0.0)
    return sparsity_from_counts(sparsity_counts(grads, thresholds, top), thresholds, top)


def sparsity_counts(grads: list[torch.Tensor], thresholds, top: float) -> list[int]:
    """[coordinates, exact zeros, |g_k| <= tau * top for each tau]: counts that add up over disjoint pieces of the
    gradients (the shards of several processes), given the maximum ``top`` over all of them."""
    taus = [float(t) for t in thresholds]
    zero, below = 0, [0] * len(taus)
    for g in grads:
        for chunk in _chunks(g):
            a = chunk.abs()  # once per chunk: one pass for |g| = 0 and every threshold
            zero += int(torch.count_nonzero(a == 0))
            if top > 0:
                for k, tau in enumerate(taus):
                    below[k] += int(torch.count_nonzero(a <= tau * top))
    return [sum(g.numel() for g in grads), zero, *below]


def sparsity_from_counts(counts, thresholds, top: float) -> dict[str, float]:
    """The fractions of :func:`sparsity` from :func:`sparsity_counts` (summed over pieces)."""
    total, zero, *below = (int(c) for c in counts)
    if total == 0:
        raise ValueError("sparsity needs at least one coordinate")
    out = {"exact_zero": zero / total}
    for k, tau in enumerate(float(t) for t in thresholds):
        out[f"le_{tau:g}_max"] = below[k] / total if top > 0 else 1.0
    return out


def summarise(values) -> dict[str, float]:
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return {}
    q25, q50, q75 = np.quantile(v, [0.25, 0.5, 0.75])
    return {"median": float(q50), "q25": float(q25), "q75": float(q75), "mean": float(v.mean()),
            "min": float(v.min()), "max": float(v.max()), "count": int(v.size)}


def layer_record(svals: dict[str, torch.Tensor], tol: float) -> dict:
    """Rank metrics of every 2-D weight gradient: per-layer arrays of a few, summaries of all."""
    names = sorted(svals)
    metrics = [rank.rank_metrics(svals[n].detach().to(torch.float64).cpu().numpy(), tol).as_dict() for n in names]
    return {"summary": {m: summarise([x[m] for x in metrics]) for m in METRICS},
            "per_layer": {m: [round(x[m], 6) for x in metrics] for m in LAYER_STORED}}


def counted_degenerate_group(conds: dict[str, np.ndarray], tol: float) -> dict:
    """The record of a group whose GRPO advantages are all 0, without an engine pass: diag(0) K diag(0) = 0 and
    sum_i 0 g_i = 0 whatever K is, so the GRPO condition's entry is known exactly; K, G and the controls are not."""
    R = len(conds["grpo"])
    grpo = {"zero_gradient": True, "gradient_norm": 0.0, "weighted": spectrum(np.zeros((R, R)), tol)}
    return {"degenerate": True, "measured": False, "advantages": {c: a.tolist() for c, a in conds.items()},
            "conditions": {"grpo": grpo}, "seconds": {"gram_and_spectra": 0.0}}


def measure_group(model, ro: Rollouts, rewards: list[float], other_rewards: list[float], other_name: str,
                  cfg, seed: int) -> dict:
    """Every measurement of one group (see the module docstring). Returns a JSON-ready dict."""
    tol = cfg.relative_tolerance
    conds = conditions(rewards, other_rewards, other_name, cfg.advantage, cfg.advantage_eps, cfg.controls, seed)
    degenerate = advantages_are_zero(conds["grpo"])
    if degenerate and cfg.degenerate_groups == "count":
        return counted_degenerate_group(conds, tol)
    device = next(model.parameters()).device
    t0 = time.perf_counter()
    controls = ({c: a for c, a in conds.items() if c != "grpo" and np.any(a)}
                if cfg.controls and cfg.layer_controls else {})
    res = rollout_gram(model, ro.input_ids.to(device), ro.attention_mask.to(device), ro.completion_start,
                       cfg.aggregation, groups="layer", advantages=None if degenerate else conds["grpo"],
                       weightings=controls or None, singular_values=not degenerate or bool(controls),
                       accumulate_dtype=torch.float64)
    t_gram = time.perf_counter() - t0
    K = res.K.numpy()
    record: dict = {"degenerate": degenerate, "measured": True, "K": K.tolist(),
                    "advantages": {c: a.tolist() for c, a in conds.items()},
                    "G": spectrum(K, tol), "centred": spectrum(derived_grams(K)["centred"], tol),
                    "layer_gram": {m: summarise([rank.rank_metrics_from_gram(k.numpy(), tol).as_dict()[m]
                                                 for k in res.groups.values()]) for m in METRICS},
                    "conditions": {}}
    for cond, a in conds.items():
        zero = not np.any(a)
        entry = {"zero_gradient": zero, "gradient_norm": group_gradient_norm(K, a),
                 "weighted": spectrum(np.diag(a) @ K @ np.diag(a), tol)}
        record["conditions"][cond] = entry
    # per-layer: GRPO from the engine; a check that its gradient matches K (sqrt(a^T K a) = ||sum a_i g_i||)
    if not degenerate:
        grads = list(res.grpo_gradients.values())
        direct = math.sqrt(sum(squared_norm(g) for g in grads))
        via_k = float(np.sqrt(max(conds["grpo"] @ K @ conds["grpo"], 0.0)))
        grpo = record["conditions"]["grpo"]
        grpo["gram_vs_direct_rel_err"] = abs(direct - via_k) / max(via_k, 1e-300)
        grpo["sparsity"] = sparsity(grads, cfg.sparsity_thresholds)
        grpo["layers"] = layer_record(res.singular_values, tol)
        record["layer_names"] = sorted(res.singular_values)
    for cond in controls:
        entry = record["conditions"][cond]
        entry["sparsity"] = sparsity(list(res.weighted_gradients[cond].values()), cfg.sparsity_thresholds)
        entry["layers"] = layer_record(res.weighted_singular_values[cond], tol)
        record.setdefault("layer_names", sorted(res.weighted_singular_values[cond]))
    del res
    record["seconds"] = {"gram_and_spectra": round(t_gram, 3)}
    return record
