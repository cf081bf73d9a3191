r"""The paper's quantities, logged from a running ``trl.GRPOTrainer``: add one object to the trainer.

.. code-block:: python

    from trl import GRPOConfig, GRPOTrainer
    from grpo_verify.trl_callback import GRPOVerifyCallback, GRPOVerifyConfig

    trainer = GRPOTrainer(model=..., reward_funcs=..., args=GRPOConfig(..., logging_steps=1), train_dataset=...)
    GRPOVerifyCallback(trainer, GRPOVerifyConfig(every=10, groups=2))   # registers itself
    trainer.train()    # grpo_verify/* keys appear in wandb / tensorboard / trainer_state.json

Every ``every`` optimizer steps (``every=1`` measures every step) the callback appends its scalars to TRL's own
per-step metric store (``trainer._metrics["train"]``); ``GRPOTrainer.log`` averages that store over the logging
window and hands it to every reporter with TRL's own metrics (``reward``, ``frac_reward_zero_std``, ...), so the keys
land wherever the Trainer logs. With ``logging_steps`` a multiple of ``every`` each logged value is the mean over the
measured steps of the window. Nothing is logged outside the Trainer's logging.

Why a callback that wraps two bound methods
-------------------------------------------
A ``transformers.TrainerCallback`` sees the model and the optimizer but not the batch, and its events do not carry
the trainer. So the callback is constructed with the trainer (``GRPOVerifyCallback(trainer, config)`` calls
``trainer.add_callback(self)``) and, from ``on_train_begin`` to ``on_train_end``, replaces two bound methods on that
one trainer instance by thin wrappers that call TRL's originals unchanged:

* ``_calculate_rewards`` -> keeps the returned (all-process) reward matrix, for the zero-advantage fraction;
* ``_generate_and_score_completions`` -> after TRL returns, reads the step's prompt/completion ids, masks and TRL's
  own advantages from the returned dict, and measures (below) before TRL uses the batch.

A subclass would need the user to change the trainer class they run; wrapping the instance keeps their trainer, and
reading TRL's returned dict (not re-deriving it) means the advantages measured are exactly the ones TRL trains with.
The wrappers are removed at ``on_train_end``.

What is measured, at which weights, for which loss
---------------------------------------------------
Batch metrics are taken right after the first generation of a measured step: the weights are those that sampled the
completions (theta_old, the weights TRL's loss differentiates on its first pass: ratio = 1). On-policy, with the
clipped surrogate at ratio 1, the policy-gradient part of the loss of rollout i is -A_i l_i with
l_i = sum_t w_t log pi(y_t | x, y_<t); the token weights w_t follow ``loss_type`` (``AGGREGATION``): per-sequence mean
for grpo and sapo, a sum for bnpo, dr_grpo, dapo, cispo (epsilon_high >= 1) and luspo (their constant divisors are
uniform and change no rank metric). Logits are divided by TRL's ``temperature`` as TRL does. Excluded (documented,
not modelled): the KL term (beta > 0), entropy masks, the off-policy mask, vLLM importance weights, tool masks, and
dropout (the measurement runs in ``eval()``, which also switches gradient checkpointing off for the pass).

* **zero-advantage groups** (``zero_adv/group_fraction``): the fraction of the step's groups (over all processes)
  whose total rewards have zero std, TRL's ``isclose(nanstd, 0)`` test per group. With
  ``multi_objective_aggregation="sum_then_normalize"`` and ``scale_rewards`` "group" or "none" this is the quantity
  TRL logs as ``frac_reward_zero_std`` (the tests check equality); with "batch" TRL's flag is batch-wide.
  ``zero_adv/exact_fraction``: groups whose TRL advantages are all exactly 0.0 (TRL's float32 (r - mean)/(std + 1e-4)
  leaves round-off/1e-4 in a constant group of non-dyadic rewards, so this can be smaller).
* **Gram** (``gram/*``, ``gram_weighted/*``): for ``groups`` of the groups each process owns (mixed-reward groups
  first), the exact R x R Gram K = G G^T of the per-rollout score vectors g_i = grad l_i over all trainable
  parameters (:func:`grpo_verify.gram.rollout_gram`, one forward + backward per group), and its rank metrics
  (effective, stable, participation ratio, tolerance rank); the same for diag(A) K diag(A), the Gram of the
  advantage-weighted rows (mixed groups only). Logged: the mean over the measured groups of all processes. The full
  matrices are kept in ``callback.records``. A group is re-padded on its own (no left padding: one prompt), so
  positions count real tokens, as in generation; TRL's batched loss forward counts left padding in the positions of
  prompts shorter than the batch's longest (a TRL convention, not modelled).
* **per-layer spectra** (``layers/*``) and **coordinate sparsity** (``sparsity/*``) of the GRPO gradient
  sum_i A_i g_i summed over the measured groups of all processes (all-reduced): stable and effective rank of every
  2-D weight gradient, median and quartiles over those weights; fraction of coordinates with
  |g_k| <= tau max|g| (``sparsity_thresholds``, as the CLI measures) and exactly 0. With ``groups=None`` every group
  is measured and this is the step's whole on-policy policy gradient (up to TRL's positive scale factors).
* **the trainer's step gradient** (``step_grad/*``): the same spectra and sparsity of the gradient the optimizer is
  about to apply (``p.grad`` at ``on_pre_optimizer_step``: accumulated, all-reduced, clipped, KL included). For
  beta = 0, ``groups=None``, one accumulation step and one process it equals -(engine gradient)/N (grpo; the tests
  check it), and both spectra agree.
* **update sparsity** (``update/*``, Mukherjee et al. 2025, arXiv 2505.11711): the fraction of trainable parameter
  values whose stored value did not change, over the step (``unchanged_step``) and since ``on_train_begin``
  (``unchanged_since_start``), compared in the model's dtype (``/model``) and after rounding both to bfloat16
  (``/bf16``, their definition); and the rank of the accumulated update Delta W = W - W_start of every 2-D weight
  (``update/delta_rank_fraction`` = tolerance rank / min(m, n), ``delta_stable_rank``, ``delta_effective_rank``:
  median and quartiles over the weights).
* ``groups/*`` counts; ``seconds``: the callback's own time in the step (the slowest process's);
  ``memory/snapshot_mib``: what the parameter snapshots hold (per process).

Memory it adds (each switchable, ``GRPOVerifyConfig``): the start snapshot, one copy of the trainable parameters in
the model's dtype (needed by ``update_model_dtype`` and ``delta_rank``) or, with both off, in bfloat16 (2 bytes a
value); the per-step snapshot taken at the start of each measured step, the same; the engine's summed GRPO gradient
and one group's gradient (2 x parameters in the product dtype: the model's, float32 for half precision) plus one
group's activations during the measurement. Snapshots live on the parameters' device unless ``snapshot_device`` says
otherwise.

Cost (``experiments/bench_trl_callback.py``, results in ``experiments/results/bench_trl_callback/``): the wall time
of a measured step as a ratio to a plain TRL step, side by side in one run on a shared 2-core CPU, one thread, 2
groups of 4 rollouts a step, up to 24 new tokens: SmolLM2-135M (float32) 4.6x with every metric, 1.4x without the
SVD-based ones (``layer_spectra``, ``step_gradient``, ``delta_rank``: the singular values of every weight matrix,
the 49152 x 576 embedding included, three times over, are most of the cost); the tests' tiny model 1.7x. Measure
every N steps (``every``) to spread it out.

Several processes (accelerate / torchrun, DDP)
----------------------------------------------
The callback runs in every process; each measures the groups it owns and the scalars are gathered with
``accelerator.gather`` (sums and counts, so logged means are over all measured groups), the engine gradients are
summed with ``torch.distributed.all_reduce``; every process logs the same values. TRL 1.16 does split groups across
processes: its ``RepeatSampler`` puts the R copies of a prompt in consecutive rows of the global generation batch and
accelerate hands process p the rows [p n, (p + 1) n) (n = per_device_train_batch_size x steps_per_generation); only
the global batch must be a multiple of R, so with n % R != 0 a group straddles two processes (TRL gathers the
rewards, so its advantages are right). ``split_groups="gather"`` (default) gathers the ids of the split groups
(``gather_object``) and the process holding a group's first row measures it (``groups/split_gathered``);
``"skip"`` leaves them out (``groups/split_skipped``).

DeepSpeed ZeRO-3 / FSDP
-----------------------
Parameters are sharded: a process holds a flat shard, not the weight matrices, so the Gram engine, the per-layer
spectra and the update rank cannot be computed, and under any DeepSpeed stage ``p.grad`` is not the step's gradient.
``on_train_begin`` refuses (``RuntimeError`` naming the config fields to switch off) when ``gram``,
``layer_spectra``, ``sparsity``, ``step_gradient``, ``update_step``, ``update_since_start`` or ``delta_rank`` is on
under ZeRO-3 or FSDP (``step_gradient`` also under ZeRO-1/2). The zero-advantage fraction needs no parameters and
works everywhere: ``GRPOVerifyConfig.sharding_safe()`` is the configuration that keeps only it. Gathering the
parameters (``deepspeed.zero.GatheredParameters``, FSDP ``summon_full_params``) would make the rest possible at the
cost of full copies; it is not done.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch
from torch import nn
from transformers import TrainerCallback

from grpo_verify import rank
from grpo_verify.empirical.measure import sparsity, summarise
from grpo_verify.gram import rollout_gram

__all__ = ["AGGREGATION", "GRAM_METRICS", "GRPOVerifyCallback", "GRPOVerifyConfig"]

# token weights of l_i under each TRL loss type, on-policy (ratio = 1); "sum" also for uniformly scaled sums
AGGREGATION = {"grpo": "mean", "sapo": "mean", "bnpo": "sum", "dr_grpo": "sum", "dapo": "sum", "cispo": "sum",
               "luspo": "sum"}
GRAM_METRICS = ("effective_rank", "stable_rank", "participation_ratio", "tolerance_rank")
LAYER_METRICS = ("stable_rank", "effective_rank")
QUANTILES = ("median", "q25", "q75")
_PARAMETER_METRICS = ("gram", "layer_spectra", "sparsity", "step_gradient", "update_step", "update_since_start",
                      "delta_rank")


@dataclass
class GRPOVerifyConfig:
    """Every knob of :class:`GRPOVerifyCallback`.

    every: measure every ``every``-th optimizer step (global_step % every == 0 at the step's start; 1 = all).
    groups: groups each process measures with the Gram engine per measured step (None: all it owns).
    prefer_mixed: pick mixed-reward groups before constant ones.
    split_groups: "gather" or "skip" groups that straddle two processes.
    gram / layer_spectra / sparsity: the engine's Gram metrics / per-layer spectra / coordinate sparsity.
    step_gradient: spectra and sparsity of the trainer's own gradient at on_pre_optimizer_step.
    update_step / update_since_start: fractions of unchanged parameter values over the step / since train begin.
    update_model_dtype / update_bf16: compare in the model's dtype / after rounding to bfloat16.
    delta_rank: rank metrics of W - W_start per 2-D weight (needs the model-dtype start snapshot).
    relative_tolerance: of the tolerance rank. sparsity_thresholds: |g_k| <= tau max|g|.
    aggregation: token weights of l_i ("mean", "sum"); None: from TRL's loss_type (``AGGREGATION``).
    snapshot_device: where parameter snapshots live (None: with the parameters).
    prefix: of every logged key. max_records: measured steps kept in ``callback.records``.
    """

    every: int = 1
    groups: int | None = 2
    prefer_mixed: bool = True
    split_groups: str = "gather"
    gram: bool = True
    layer_spectra: bool = True
    sparsity: bool = True
    step_gradient: bool = True
    update_step: bool = True
    update_since_start: bool = True
    update_model_dtype: bool = True
    update_bf16: bool = True
    delta_rank: bool = True
    relative_tolerance: float = rank.DEFAULT_RELATIVE_TOLERANCE
    sparsity_thresholds: tuple[float, ...] = (1e-6, 1e-4, 1e-2)
    aggregation: str | None = None
    snapshot_device: str | None = None
    prefix: str = "grpo_verify/"
    max_records: int = 10_000

    def __post_init__(self):
        if not isinstance(self.every, int) or self.every < 1:
            raise ValueError(f"every must be a positive integer, got {self.every!r}")
        if self.groups is not None and (not isinstance(self.groups, int) or self.groups < 1):
            raise ValueError(f"groups must be a positive integer or None, got {self.groups!r}")
        if self.split_groups not in ("gather", "skip"):
            raise ValueError(f"split_groups must be 'gather' or 'skip', got {self.split_groups!r}")
        if self.aggregation not in (None, "mean", "sum"):
            raise ValueError(f"aggregation must be None, 'mean' or 'sum', got {self.aggregation!r}")
        if not 0.0 <= self.relative_tolerance < 1.0:
            raise ValueError(f"relative_tolerance must lie in [0, 1), got {self.relative_tolerance!r}")
        self.sparsity_thresholds = tuple(float(t) for t in self.sparsity_thresholds)
        if any(not 0 < t < 1 for t in self.sparsity_thresholds):
            raise ValueError(f"sparsity_thresholds must lie in (0, 1), got {list(self.sparsity_thresholds)}")
        if (self.update_step or self.update_since_start) and not (self.update_model_dtype or self.update_bf16):
            raise ValueError("update sparsity needs update_model_dtype or update_bf16 (or switch update_step and "
                             "update_since_start off)")

    @classmethod
    def sharding_safe(cls, **overrides) -> "GRPOVerifyConfig":
        """Only what works with sharded parameters (ZeRO-3, FSDP): the zero-advantage fraction."""
        off = {name: False for name in _PARAMETER_METRICS}
        return cls(**{**off, **overrides})

    @property
    def needs_model_snapshot(self) -> bool:
        return self.update_model_dtype or self.delta_rank


def _bf16(t: torch.Tensor) -> torch.Tensor:
    return t if t.dtype == torch.bfloat16 else t.to(torch.bfloat16)


def _quantile_keys(values: list[float]) -> dict[str, float]:
    s = summarise(values)
    return {q: s[q] for q in QUANTILES} if s else {}


class _Tempered(nn.Module):
    """The policy with its logits divided by TRL's sampling temperature (as TRL's loss does)."""

    def __init__(self, model: nn.Module, temperature: float):
        super().__init__()
        self.model = model
        self.temperature = float(temperature)

    def forward(self, **kwargs):
        out = self.model(**kwargs)
        out.logits = out.logits / self.temperature
        return out


class GRPOVerifyCallback(TrainerCallback):
    """Log the paper's quantities from a running ``trl.GRPOTrainer`` (see the module docstring).

    ``GRPOVerifyCallback(trainer, config)`` registers itself with ``trainer.add_callback``. ``records`` holds one
    dict per measured step (the Gram matrices, advantages and everything logged); ``logged`` the flat dicts that were
    appended to TRL's metric store, by step.
    """

    def __init__(self, trainer, config: GRPOVerifyConfig | None = None):
        for attribute in ("_generate_and_score_completions", "_calculate_rewards", "_metrics", "num_generations"):
            if not hasattr(trainer, attribute):
                raise TypeError(f"GRPOVerifyCallback needs a trl.GRPOTrainer (TRL >= 1.0); {type(trainer).__name__} "
                                f"has no {attribute}")
        self.trainer = trainer
        self.config = config or GRPOVerifyConfig()
        self.records: list[dict] = []
        self.logged: dict[int, dict[str, float]] = {}
        self._originals: dict[str, Any] = {}
        self._start: dict[str, torch.Tensor] = {}
        self._previous: dict[str, torch.Tensor] = {}
        self._measuring = False
        self._captured = False
        self._rewards: torch.Tensor | None = None
        self._pending: dict[str, float] = {}
        self._record: dict = {}
        self._seconds = 0.0
        self._warned: set[str] = set()
        self.aggregation: str | None = None
        trainer.add_callback(self)

    # -- helpers --------------------------------------------------------------------------------------------------
    @property
    def model(self) -> nn.Module:
        return self.trainer.accelerator.unwrap_model(self.trainer.model)

    def _key(self, name: str) -> str:
        return self.config.prefix + name

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def _trainable(self) -> list[tuple[str, torch.Tensor]]:
        return [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]

    def _snapshot(self) -> dict[str, torch.Tensor]:
        device = self.config.snapshot_device
        model_dtype = self.config.needs_model_snapshot
        out = {}
        with torch.no_grad():
            for name, p in self._trainable():
                copy = p.detach() if model_dtype else _bf16(p.detach())
                out[name] = copy.to(device=device or p.device, copy=True)
        return out

    def snapshot_bytes(self) -> int:
        """Bytes held by the parameter snapshots now."""
        return sum(t.numel() * t.element_size() for t in (*self._start.values(), *self._previous.values()))

    @staticmethod
    def sharding(trainer) -> str | None:
        """"FSDP", "DeepSpeed ZeRO-<stage>" or None (replicated parameters)."""
        if getattr(trainer, "is_fsdp_enabled", False):
            return "FSDP"
        if getattr(trainer, "is_deepspeed_enabled", False):
            plugin = getattr(trainer.accelerator.state, "deepspeed_plugin", None)
            return f"DeepSpeed ZeRO-{getattr(plugin, 'zero_stage', '?')}"
        return None

    def _refuse_sharded(self) -> None:
        sharding = self.sharding(self.trainer)
        if sharding is None:
            return
        cfg = self.config
        refused = [name for name in _PARAMETER_METRICS if getattr(cfg, name)]
        if sharding.startswith("DeepSpeed") and not sharding.endswith("3"):
            refused = ["step_gradient"] if cfg.step_gradient else []  # ZeRO-1/2: full parameters, gradients its own
        if refused:
            raise RuntimeError(
                f"GRPOVerifyCallback: under {sharding} the parameters (or, with DeepSpeed, the gradients) are "
                f"sharded, so {', '.join(refused)} cannot be measured; set "
                f"{', '.join(f'{n}=False' for n in refused)} in GRPOVerifyConfig (GRPOVerifyConfig.sharding_safe() "
                "keeps only the zero-advantage fraction, which works under any sharding)")

    def _resolve_aggregation(self) -> str:
        cfg, trainer = self.config, self.trainer
        if cfg.aggregation is not None:
            return cfg.aggregation
        loss_type = getattr(trainer, "loss_type", "grpo")
        if loss_type not in AGGREGATION:
            raise ValueError(f"GRPOVerifyCallback: no on-policy token weighting known for loss_type={loss_type!r}; "
                             "pass GRPOVerifyConfig(aggregation='mean' or 'sum') or switch gram, layer_spectra and "
                             "sparsity off")
        if loss_type == "cispo" and getattr(trainer, "epsilon_high", 1.0) < 1.0:
            raise ValueError("GRPOVerifyCallback: cispo with epsilon_high < 1 clamps the on-policy ratio below 1; "
                             "pass GRPOVerifyConfig(aggregation=...) explicitly")
        return AGGREGATION[loss_type]

    # -- events ---------------------------------------------------------------------------------------------------
    def on_train_begin(self, args, state, control, **kwargs):
        cfg = self.config
        self._refuse_sharded()
        if cfg.gram or cfg.layer_spectra or cfg.sparsity:
            self.aggregation = self._resolve_aggregation()
        trainer = self.trainer
        for name, wrapper in (("_generate_and_score_completions", self._wrapped_generate),
                              ("_calculate_rewards", self._wrapped_rewards)):
            original = getattr(trainer, name)
            self._originals[name] = original
            setattr(trainer, name, wrapper(original))
        if cfg.update_since_start:
            self._start = self._snapshot()
        return control

    def on_train_end(self, args, state, control, **kwargs):
        for name in self._originals:
            try:
                delattr(self.trainer, name)  # the instance attribute; the class's method shows again
            except AttributeError:
                pass
        self._originals = {}
        self._start, self._previous = {}, {}
        return control

    def on_step_begin(self, args, state, control, **kwargs):
        self._measuring = state.global_step % self.config.every == 0
        self._captured = False
        self._pending, self._seconds = {}, 0.0
        self._record = {"step": state.global_step + 1}
        if self._measuring and self.config.update_step:
            t0 = time.perf_counter()
            self._previous = self._snapshot()
            self._seconds += time.perf_counter() - t0
        return control

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        if self._measuring and self.config.step_gradient:
            t0 = time.perf_counter()
            grads = {n: p.grad for n, p in self._trainable() if p.grad is not None}
            if grads:
                self._gradient_metrics(grads, "step_grad/")
            else:
                self._warn_once("no_grad", "GRPOVerifyCallback: no parameter has .grad at on_pre_optimizer_step; "
                                "step_grad/* is not logged")
            self._seconds += time.perf_counter() - t0
        return control

    def on_step_end(self, args, state, control, **kwargs):
        if not self._measuring:
            return control
        t0 = time.perf_counter()
        self._update_metrics()
        self._seconds += time.perf_counter() - t0
        self._pending["seconds"] = float(self._gather(torch.tensor([self._seconds], dtype=torch.float64)).max())
        if self._start or self._previous:
            self._pending["memory/snapshot_mib"] = self.snapshot_bytes() / 2**20
        self._previous = {}
        store = self.trainer._metrics["train"]
        flat = {self._key(k): float(v) for k, v in self._pending.items() if v is not None and math.isfinite(v)}
        for key, value in flat.items():
            store[key].append(value)
        self.logged[state.global_step] = flat
        self._record["logged"] = flat
        if len(self.records) < self.config.max_records:
            self.records.append(self._record)
        self._measuring = False
        return control

    # -- the batch ------------------------------------------------------------------------------------------------
    def _wrapped_rewards(self, original):
        def _calculate_rewards(*args, **kwargs):
            rewards = original(*args, **kwargs)
            if self._measuring and not self._captured:
                self._rewards = rewards.detach().clone()
            return rewards
        return _calculate_rewards

    def _wrapped_generate(self, original):
        def _generate_and_score_completions(inputs):
            output = original(inputs)
            if self._measuring and not self._captured and self.trainer.model.training:
                self._captured = True
                t0 = time.perf_counter()
                try:
                    self._measure_batch(output)
                finally:
                    self._rewards = None
                    self._seconds += time.perf_counter() - t0
            return output
        return _generate_and_score_completions

    def _gather(self, values: torch.Tensor) -> torch.Tensor:
        """(processes x k) from each process's (k,) vector."""
        accelerator = self.trainer.accelerator
        if accelerator.num_processes == 1:
            return values[None]
        return accelerator.gather(values.to(accelerator.device)[None]).cpu()

    def _measure_batch(self, output: dict) -> None:
        cfg, trainer = self.config, self.trainer
        accelerator = trainer.accelerator
        R = trainer.num_generations
        P, me = accelerator.num_processes, accelerator.process_index
        advantages = output["advantages"].detach().to(torch.float64).cpu()
        n = advantages.shape[0]
        all_adv = self._gather(advantages).reshape(-1)
        N = all_adv.numel()
        groups_total = N // R
        # zero-advantage fractions over the whole (all-process) generation batch
        constant = None
        if self._rewards is not None and self._rewards.shape[0] == N:
            from trl.trainer.utils import nanstd
            rpf = self._rewards.to(torch.float32)
            weights = trainer.reward_weights.to(rpf.device, rpf.dtype)
            total = (rpf * weights.unsqueeze(0)).nansum(dim=1)
            total[torch.isnan(rpf).all(dim=1)] = torch.nan
            std = nanstd(total.view(-1, R), dim=1)
            constant = torch.isclose(std, torch.zeros_like(std)).cpu()
            self._pending["zero_adv/group_fraction"] = float(constant.double().mean())
        exact = (all_adv.view(-1, R) == 0).all(dim=1)
        self._pending["zero_adv/exact_fraction"] = float(exact.double().mean())
        mixed = ~constant if constant is not None else ~exact
        self._record.update(groups_total=groups_total, constant_groups=(~mixed).nonzero().flatten().tolist())
        if not (cfg.gram or cfg.layer_spectra or cfg.sparsity):
            return
        tool_mask = output.get("tool_mask")
        if tool_mask is not None and bool((tool_mask == 0).any()):
            self._warn_once("tool_mask", "GRPOVerifyCallback: tool masks are not modelled; the Gram and gradient "
                            "metrics are not logged on steps that have them")
            return
        # which groups this process measures
        first, last = me * n, (me + 1) * n  # this process's global rows
        split = (n % R != 0) and P > 1  # identical on every process (n is)
        rows = self._rows(output)
        if split and cfg.split_groups == "gather":
            from accelerate.utils import gather_object
            everything = gather_object(rows)
            def group_rows(g):
                return everything[g * R:(g + 1) * R]
        else:
            def group_rows(g):
                return rows[g * R - first:(g + 1) * R - first]
        owned, split_gathered, split_skipped = [], 0, 0
        for g in range(groups_total):
            lo, hi = g * R, (g + 1) * R
            if not first <= lo < last:  # the process holding a group's first row accounts for it
                continue
            if hi <= last:
                owned.append(g)
            elif cfg.split_groups == "gather":
                owned.append(g)
                split_gathered += 1
            else:
                split_skipped += 1
        if cfg.prefer_mixed:
            owned.sort(key=lambda g: (not bool(mixed[g]), g))
        chosen = owned if cfg.groups is None else owned[:cfg.groups]
        self._engine_metrics(chosen, group_rows, all_adv, mixed, split_gathered, split_skipped)

    @staticmethod
    def _rows(output: dict) -> list[tuple[list[int], list[int]]]:
        """(prompt tokens, completion tokens) of each local row, padding removed."""
        out = []
        pmask, cmask = output["prompt_mask"].bool().cpu(), output["completion_mask"].bool().cpu()
        pids, cids = output["prompt_ids"].cpu(), output["completion_ids"].cpu()
        for i in range(pids.shape[0]):
            count = int(cmask[i].sum())
            if count and not bool(cmask[i, :count].all()):
                raise ValueError("GRPOVerifyCallback: a completion mask with holes (ones after a zero) is not "
                                 "supported")
            out.append((pids[i][pmask[i]].tolist(), cids[i, :count].tolist()))
        return out

    def _group_batch(self, rows, device, pad_id: int):
        """One group alone: prompts left-padded to the group's longest (none when they are equal), completions
        right-padded; rollouts without a completion token are dropped (their score vector is 0 in TRL's loss)."""
        keep = [i for i, (_, c) in enumerate(rows) if c]
        width_p = max(len(rows[i][0]) for i in keep)
        width_c = max(len(rows[i][1]) for i in keep)
        ids = torch.full((len(keep), width_p + width_c), pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for k, i in enumerate(keep):
            p, c = rows[i]
            ids[k, width_p - len(p):width_p] = torch.tensor(p, dtype=torch.long)
            ids[k, width_p:width_p + len(c)] = torch.tensor(c, dtype=torch.long)
            mask[k, width_p - len(p):width_p + len(c)] = 1
        return ids.to(device), mask.to(device), width_p, keep

    def _engine_metrics(self, chosen, group_rows, all_adv, mixed, split_gathered, split_skipped) -> None:
        cfg, trainer = self.config, self.trainer
        R = trainer.num_generations
        tol = cfg.relative_tolerance
        model = self.model
        device = next(model.parameters()).device
        temperature = float(getattr(trainer, "temperature", 1.0) or 1.0)
        policy = model if temperature == 1.0 else _Tempered(model, temperature)
        strip = "" if policy is model else "model."
        pad_id = getattr(getattr(trainer, "processing_class", None), "pad_token_id", None)
        pad_id = 0 if pad_id is None else int(pad_id)
        names = [n for n, _ in self._trainable()]
        want_grad = cfg.layer_spectra or cfg.sparsity
        summed: dict[str, torch.Tensor] | None = None
        gram_sums, weighted_sums = np.zeros(len(GRAM_METRICS)), np.zeros(len(GRAM_METRICS))
        gram_count = weighted_count = 0
        groups_record = []
        was_training = model.training
        model.eval()
        try:
            for g in chosen:
                rows = group_rows(g)
                a_full = all_adv[g * R:(g + 1) * R]
                if not any(c for _, c in rows):
                    continue
                ids, mask, start, keep = self._group_batch(rows, device, pad_id)
                a = a_full[keep]
                use_adv = want_grad and bool((a != 0).any())
                res = rollout_gram(policy, ids, mask, start, self.aggregation,
                                   advantages=a if use_adv else None, accumulate_dtype=torch.float64)
                K = np.zeros((R, R))
                K[np.ix_(keep, keep)] = res.K.numpy()
                entry = {"group": g, "advantages": a_full.tolist(), "K": K.tolist(), "mixed": bool(mixed[g]),
                         "input_ids": ids.tolist(), "attention_mask": mask.tolist(), "completion_start": start,
                         "kept": keep}
                if cfg.gram:
                    m = rank.rank_metrics_from_gram(K, tol).as_dict()
                    gram_sums += [m[k] for k in GRAM_METRICS]
                    gram_count += 1
                    entry["gram"] = {k: m[k] for k in GRAM_METRICS}
                    an = a_full.numpy()
                    if np.any(an != 0) and bool(mixed[g]):
                        w = rank.rank_metrics_from_gram(np.diag(an) @ K @ np.diag(an), tol).as_dict()
                        weighted_sums += [w[k] for k in GRAM_METRICS]
                        weighted_count += 1
                        entry["gram_weighted"] = {k: w[k] for k in GRAM_METRICS}
                if use_adv:
                    grads = {name[len(strip):]: t for name, t in res.grpo_gradients.items()}
                    if summed is None:
                        summed = grads
                    else:
                        for name, t in grads.items():
                            summed[name] += t
                del res
                groups_record.append(entry)
        finally:
            model.train(was_training)
        self._record["groups"] = groups_record
        counts = torch.tensor([*gram_sums, gram_count, *weighted_sums, weighted_count, len(groups_record),
                               split_gathered, split_skipped], dtype=torch.float64)
        total = self._gather(counts).sum(dim=0)
        k = len(GRAM_METRICS)
        g_sum, g_n = total[:k], float(total[k])
        w_sum, w_n = total[k + 1:2 * k + 1], float(total[2 * k + 1])
        measured, gathered, skipped = (float(x) for x in total[2 * k + 2:])
        self._pending.update({"groups/measured": measured, "groups/split_gathered": gathered,
                              "groups/split_skipped": skipped})
        if cfg.gram and g_n:
            self._pending.update({f"gram/{m}": float(s) / g_n for m, s in zip(GRAM_METRICS, g_sum)})
        if cfg.gram and w_n:
            self._pending.update({f"gram_weighted/{m}": float(s) / w_n for m, s in zip(GRAM_METRICS, w_sum)})
        if want_grad:
            summed = self._all_reduce(summed, names)
            if summed is not None:
                self._gradient_metrics(summed, "", spectra=cfg.layer_spectra, coordinates=cfg.sparsity)

    def _all_reduce(self, summed, names) -> dict[str, torch.Tensor] | None:
        """Sum the engine gradients over processes (zeros where a process measured nothing); None when all zero."""
        P = self.trainer.accelerator.num_processes
        if P > 1:
            params = dict(self._trainable())
            if summed is None:
                dtype = next(iter(params.values())).dtype
                dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
                summed = {n: torch.zeros(params[n].shape, dtype=dtype, device=params[n].device) for n in names}
            flat = torch.cat([summed[n].reshape(-1) for n in names])
            torch.distributed.all_reduce(flat)
            out, offset = {}, 0
            for n in names:
                size = summed[n].numel()
                out[n] = flat[offset:offset + size].view(summed[n].shape)
                offset += size
            summed = out
        if summed is None or not any(bool((t != 0).any()) for t in summed.values()):
            return None
        return summed

    def _gradient_metrics(self, grads: dict[str, torch.Tensor], where: str, *, spectra: bool = True,
                          coordinates: bool = True) -> None:
        cfg = self.config
        tol = cfg.relative_tolerance
        if not any(bool(g.any()) for g in grads.values()):
            return  # an all-zero gradient (every measured group degenerate) has no spectrum and no relative sparsity
        if coordinates:
            for key, value in sparsity(list(grads.values()), cfg.sparsity_thresholds).items():
                self._pending[f"{where}sparsity/{key}"] = value
        if spectra:
            per_layer = {m: [] for m in LAYER_METRICS}
            for name in sorted(grads):
                g = grads[name]
                if g.ndim != 2 or not bool(g.any()):  # a zero matrix has no spectrum to rank
                    continue
                m = rank.rank_metrics(torch.linalg.svdvals(g.detach().to(torch.float64)).cpu().numpy(),
                                      tol).as_dict()
                for metric in LAYER_METRICS:
                    per_layer[metric].append(m[metric])
            self._record[f"{where}layers"] = per_layer
            for metric, values in per_layer.items():
                for q, v in _quantile_keys(values).items():
                    self._pending[f"{where}layers/{metric}/{q}"] = v

    # -- parameter updates ----------------------------------------------------------------------------------------
    def _update_metrics(self) -> None:
        cfg = self.config
        tol = cfg.relative_tolerance
        params = self._trainable()
        total = sum(p.numel() for _, p in params)
        if not total:
            return
        comparisons = [("unchanged_step", self._previous), ("unchanged_since_start", self._start)]
        delta = {"delta_rank_fraction": [], "delta_stable_rank": [], "delta_effective_rank": []}
        with torch.no_grad():
            for label, snapshot in comparisons:
                if not snapshot:
                    continue
                same_model = same_bf16 = 0
                for name, p in params:
                    old = snapshot[name].to(p.device)
                    new = p.detach()
                    if cfg.update_model_dtype and old.dtype == new.dtype:
                        same_model += int((new == old).sum())
                    if cfg.update_bf16:
                        same_bf16 += int((_bf16(new) == _bf16(old)).sum())
                if cfg.update_model_dtype and cfg.needs_model_snapshot:
                    self._pending[f"update/{label}/model"] = same_model / total
                if cfg.update_bf16:
                    self._pending[f"update/{label}/bf16"] = same_bf16 / total
            if cfg.delta_rank and self._start:
                for name, p in params:
                    if p.ndim != 2:
                        continue
                    d = p.detach().to(torch.float64) - self._start[name].to(p.device, torch.float64)
                    sigma = torch.linalg.svdvals(d).cpu().numpy()
                    m = rank.rank_metrics(sigma, tol)
                    delta["delta_rank_fraction"].append(m.tolerance_rank / min(d.shape))
                    delta["delta_stable_rank"].append(m.stable_rank)
                    delta["delta_effective_rank"].append(m.effective_rank)
                self._record["update_layers"] = delta
                for metric, values in delta.items():
                    for q, v in _quantile_keys(values).items():
                        self._pending[f"update/{metric}/{q}"] = v


def config_fields() -> list[str]:
    """The names of every knob (for documentation and CLIs)."""
    return [f.name for f in fields(GRPOVerifyConfig)]
