r"""The paper's quantities, logged from a running ``trl.GRPOTrainer``: add one object to the trainer.

.. code-block:: python

    from trl import GRPOConfig, GRPOTrainer
    from grpo_verify.trl_callback import GRPOVerifyCallback, GRPOVerifyConfig

    trainer = GRPOTrainer(model=..., reward_funcs=..., args=GRPOConfig(..., logging_steps=1), train_dataset=...)
    GRPOVerifyCallback(trainer, GRPOVerifyConfig(every=10, groups=2))   # registers itself
    trainer.train()    # grpo_verify/* keys appear in wandb / tensorboard / trainer_state.json

At the end of each optimizer step the callback appends its scalars to TRL's own per-step metric store
(``trainer._metrics["train"]``), which TRL fills once per step too (one generation a step: other schedules are
refused); ``GRPOTrainer.log`` averages every list of that store over the logging window (the mean of the values
appended since the last log line, NaN dropped) and hands it to every reporter with TRL's own metrics (``reward``,
``frac_reward_zero_std``, ...), so the keys land wherever the Trainer logs. Nothing is logged outside the Trainer's
logging. Two schedules:

* every step: the zero-advantage unit (``zero_adv/*``, cheap), so a logged ``zero_adv/group_fraction`` is the mean
  over the same steps as TRL's ``frac_reward_zero_std`` on that line (the tests check equality with
  ``logging_steps`` > 1 and ``every`` > 1);
* every ``every`` optimizer steps (the steps starting at ``global_step % every == 0``: 1, every + 1, ...; ``every=1``
  is every step): everything else, with ``measured_step`` (the step's number), ``seconds`` and
  ``memory/snapshot_mib``. A log line carries the mean over the measured steps of its window and
  ``measured_step`` the mean of their numbers: with ``every >= logging_steps`` at most one measured step falls in a
  window and ``measured_step`` is the step the values were measured on (e.g. ``every=logging_steps=10``: the line of
  step 10 holds step 1's measurement); a window without a measured step has none of these keys.

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
The wrappers are removed at ``on_train_end`` and, because transformers does not call ``on_train_end`` when training
raises, also by a thin wrapper around ``trainer.train`` (``try/finally``); ``callback.detach()`` removes everything.

Refused, failing soft, skipped
------------------------------
``on_train_begin`` checks the trainer against ``REFUSALS`` (one small function per rule, in one table) before any
step and raises ``UnsupportedSetting`` (a ValueError) with one line, "grpo_verify: <setting>=<value>: <why>; ...", for
a setting the callback does not model exactly: a TRL outside ``TRL_CHECKED`` (the private hooks were checked on
1.16.x), a trainer that is not a ``trl.GRPOTrainer`` (RLOOTrainer has same-named methods), sharding (below),
``steps_per_generation != gradient_accumulation_steps``, ``num_iterations > 1``, ``multi_objective_aggregation=
"normalize_then_sum"``, and, while an engine metric (gram, layer_spectra, sparsity) is on: a loss type without a
known on-policy weighting, bnpo with several micro-batches or processes, ``top_entropy_quantile < 1``, vLLM importance
sampling, an off-policy mask that can drop sequences on-policy, ``delta < 1``, a PEFT model other than LoRA on
Linear layers (DoRA and other LoRA variants, embedding / convolution LoRA, ``target_parameters``, other tuners). The
rule comments say why the settings not listed (scale_rewards, sequence-level importance sampling,
the other loss types, ...) are exact.

A measurement that raises (units ``zero_adv``, ``gram`` (the engine pass), ``step_grad``, ``update``) does not stop
training: one RuntimeWarning with the reason, the unit's half-written keys dropped, ``<unit>/disabled`` = 1 logged on
every measured step after (every step for ``zero_adv``), the unit off for the rest of the run
(``callback.disabled``). With several processes a unit failing on one process only, before a collective, would leave
the others waiting in it: not handled.

A metric missing because of the data says why: ``<metric>/skipped`` (a count; the reason string is in the step's
record under ``skipped``): ``gram_weighted/skipped`` counts the measured groups with constant rewards (all advantages
0, no weighted Gram); ``layers``, ``sparsity``, ``step_grad/layers``, ``step_grad/sparsity`` when the gradient is 0
(every measured group constant); ``gram`` when no measured group had a completion token;
``zero_adv/group_fraction`` when TRL's reward matrix was not captured.

What is measured, at which weights, for which loss
---------------------------------------------------
Batch metrics are taken right after the first generation of a measured step: the weights are those that sampled the
completions (theta_old, the weights TRL's loss differentiates on its first pass: ratio = 1). On-policy, with the
clipped surrogate at ratio 1, the policy-gradient part of the loss of rollout i is -A_i l_i with
l_i = sum_t w_t log pi(y_t | x, y_<t); the token weights w_t follow ``loss_type`` (``AGGREGATION``): per-sequence mean
for grpo and sapo, a sum for bnpo, dr_grpo, dapo, cispo (epsilon_high >= 1) and luspo (their constant divisors are
uniform and change no rank metric). Logits are divided by TRL's ``temperature`` as TRL does. Outside the engine's
policy-gradient part by definition (``step_grad/*`` includes them): the KL term (beta > 0), the entropy bonus
(``entropy_coef``), a MoE aux loss. Not modelled: tool masks (those steps are skipped with a warning), dropout (the
measurement runs in ``eval()``, which also switches gradient checkpointing off for the pass); entropy masks, the
off-policy mask and vLLM importance weights are refused (above).

* **zero-advantage groups** (``zero_adv/group_fraction``): the fraction of the step's groups (over all processes)
  whose total rewards have zero std, TRL's ``isclose(nanstd, 0)`` test per group. With
  ``multi_objective_aggregation="sum_then_normalize"`` and ``scale_rewards`` "group" or "none" this is the quantity
  TRL logs as ``frac_reward_zero_std`` (the tests check equality); with "batch" TRL's flag is batch-wide.
  ``zero_adv/exact_fraction``: groups whose TRL advantages are all exactly 0.0 (TRL's float32 (r - mean)/(std + 1e-4)
  leaves round-off/1e-4 in a constant group of non-dyadic rewards, so this can be smaller).
* **Gram** (``gram/*``, ``gram_weighted/*``): for ``groups`` of the groups each process owns (mixed-reward groups
  first), the exact R x R Gram K = G G^T of the per-rollout score vectors g_i = grad l_i over all trainable
  parameters (:func:`grpo_verify.gram.rollout_gram`, one forward + backward per group; with a LoRA ``peft_config``
  the adapter parameters only, frozen base weights have no entries, with or without gradient checkpointing), and
  its rank metrics
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
of a step as a ratio to a plain TRL step, side by side in one run on a 2-core CPU, one thread, 2 groups of 4 rollouts
a step, up to 24 new tokens, SmolLM2-135M (float32), median over 10 steps (2026-12-04): 1.07x for the cheap set
(zero-advantage fractions and update sparsity), 1.80x for every metric but the singular-value ones, 7.0x for every
metric on every step, 2.08x (mean 2.16x) with ``spectra_every=20``. The singular values of every weight matrix (the
49152 x 576 tied head included, 12.3 s a set on one thread), up to three sets a step, are most of the cost: spread
them with ``spectra_every``, measure every N steps with ``every``, or switch off what is not needed.

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
FSDP2 (``fully_shard``): every metric is measured. The Gram engine needs no weights, only each module's inputs and
output gradients, which FSDP2's forward computes with the unsharded parameters; the engine attributes a use to the
parameter its module slot held when it started (FSDP2 swaps an unsharded copy in for the forward; matched by tensor
identity, every block was dropped from K: found by the two-process test, fixed). Every process must run as many
engine passes (FSDP2's all-gathers are collectives): the count is gathered first and a process with fewer groups
runs discarded one-token passes. ``p.grad`` and the weights are DTensors sharded on dimension 0 (anything else is
refused at run time): the update fractions and the sparsities count each process's rows (``to_local``) and sum the
counts (the sparsity threshold from the all-process maximum); each process snapshots only its rows; the spectra
gather one matrix at a time (``full_tensor``, W - W_start taken on the local rows first), so the extra memory is
one weight matrix.

DeepSpeed ZeRO-3 and FSDP1: parameters are flat shards (a process holds a flat shard, not the weight matrices), so
the Gram engine, the per-layer spectra and the update rank cannot be computed, and under any DeepSpeed stage
``p.grad`` is not the step's gradient. ``on_train_begin`` refuses (``UnsupportedSharding``, a RuntimeError and an
``UnsupportedSetting``, naming the config fields to switch off) when ``gram``, ``layer_spectra``, ``sparsity``,
``step_gradient``, ``update_step``, ``update_since_start`` or ``delta_rank`` is on under ZeRO-3 or FSDP1
(``step_gradient`` also under ZeRO-1/2). The zero-advantage fraction needs no parameters and works everywhere:
``GRPOVerifyConfig.sharding_safe()`` is the configuration that keeps only it.

What was measured on this project's CPU machines (torch 2.13, accelerate 1.16, TRL 1.16, 2 processes over gloo): FSDP2
(``fully_shard``) itself runs on CPU, and one sharded step equals the unsharded one exactly (gradients and weights,
float64); but ``GRPOConfig(fsdp="full_shard", use_cpu=True)`` trains *unsharded* (DDP) without a word, because
accelerate's ``AcceleratorState`` switches to FSDP only for accelerator distributed types, not MULTI_CPU. With that
check patched, TRL trains under FSDP2 (parameters and ``p.grad`` are DTensors) and FSDP1 fails ("sync_module_states=True
is not supported on cpu", then "Inconsistent compute device"). DeepSpeed is not installed here.
``tests/test_trl_callback.py`` runs FSDP2 for real on two CPU processes (that check patched): the parameters are
DTensors, the default configuration is accepted, and every logged value (zero-advantage fractions, each group's K,
Gram and per-layer rank metrics, the engine's and the trainer's gradient sparsity and spectra, update fractions and
W - W_start's rank) equals the unsharded run's, with unequal engine passes per process.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from dataclasses import dataclass, fields
from typing import Any, Callable

import numpy as np
import torch
from torch import nn
from transformers import TrainerCallback

from grpo_verify import rank
from grpo_verify.empirical.measure import sparsity, sparsity_counts, sparsity_from_counts, summarise
from grpo_verify.gram import rollout_gram
from grpo_verify.svd import singular_values

__all__ = ["AGGREGATION", "GRAM_METRICS", "REFUSALS", "TRL_CHECKED", "GRPOVerifyCallback", "GRPOVerifyConfig", "Rule",
           "UnsupportedSetting", "UnsupportedSharding", "UnsupportedTrainer", "refusal"]

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
    spectra_every: on every ``spectra_every``-th measured step only (global_step % (every * spectra_every) == 0),
        the singular-value metrics (``layer_spectra``, the spectra of ``step_gradient``, ``delta_rank``): most of the
        cost (the SVD of every weight matrix), so they can be spread out while the rest is measured more often.
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
    spectra_every: int = 1
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
        if not isinstance(self.spectra_every, int) or self.spectra_every < 1:
            raise ValueError(f"spectra_every must be a positive integer, got {self.spectra_every!r}")
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


def _local_values(params: list[tuple[str, torch.Tensor]]) -> tuple[list[tuple[str, torch.Tensor]], bool]:
    """Each parameter's values held by this process and whether they are shards: under FSDP2 a DTensor's local
    rows (sharded on dimension 0 alone, so the processes' values partition the parameter exactly once), else the
    tensor itself. A mix, or any other placement, would count values twice or not at all: refused."""
    try:
        from torch.distributed.tensor import DTensor, Shard
    except ImportError:
        return params, False
    sharded = [isinstance(p, DTensor) for _, p in params]
    if not any(sharded):
        return params, False
    for (name, p), is_shard in zip(params, sharded):
        if not is_shard or p.device_mesh.ndim != 1 or tuple(p.placements) != (Shard(0),):
            raise RuntimeError(f"{name} is not sharded on dimension 0 alone like the other DTensor parameters "
                               f"({'not a DTensor' if not is_shard else tuple(p.placements)}); its values would be "
                               "miscounted")
    return [(name, p.to_local()) for name, p in params], True


def _full(t: torch.Tensor, minus: torch.Tensor | None = None) -> torch.Tensor:
    """The whole matrix ``t`` (minus this process's rows ``minus`` of another), float64 where ``minus`` is given. A
    DTensor is gathered (``full_tensor``, a collective): the difference is taken on the local rows first."""
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:
        DTensor = ()
    if isinstance(t, DTensor):
        if minus is None:
            return t.full_tensor()
        local = t.to_local().to(torch.float64) - minus.to(t.device, torch.float64)
        return DTensor.from_local(local, t.device_mesh, t.placements, shape=t.shape,
                                  stride=t.stride()).full_tensor()
    if minus is None:
        return t
    return t.to(torch.float64) - minus.to(t.device, torch.float64)


def _bf16(t: torch.Tensor) -> torch.Tensor:
    return t if t.dtype == torch.bfloat16 else t.to(torch.bfloat16)


def _quantile_keys(values: list[float]) -> dict[str, float]:
    s = summarise(values)
    return {q: s[q] for q in QUANTILES} if s else {}


# -- refusals -----------------------------------------------------------------------------------------------------
# The TRL versions whose GRPOTrainer internals (the two wrapped private methods, the returned dict's keys, the
# loss's divisors and the generation/optimizer-step schedule) the callback and REFUSALS were checked against:
# lower bound inclusive, upper exclusive. Outside it on_train_begin refuses rather than compute wrong numbers.
TRL_CHECKED = ("1.16.0", "1.17.0")
ENGINE_METRICS = ("gram", "layer_spectra", "sparsity")  # what the Gram engine pass (the loss's PG part) feeds


class UnsupportedSetting(ValueError):
    """A trainer setting the callback does not model exactly; the message is one line naming it and why."""


class UnsupportedTrainer(UnsupportedSetting, TypeError):
    """Not a ``trl.GRPOTrainer`` (a TypeError too, as before)."""


class UnsupportedSharding(UnsupportedSetting, RuntimeError):
    """Sharded parameters or gradients (a RuntimeError too, as before)."""


@dataclass(frozen=True)
class Rule:
    """One refusal: ``check(trainer, config)`` returns the reason (one line, naming the setting) or None when the
    setting is modelled. ``metrics``: the GRPOVerifyConfig switches the setting makes inexact; the rule refuses only
    while one of them is on (the message says which to switch off). Empty: it breaks every metric, refused always."""

    name: str
    check: Callable[[Any, "GRPOVerifyConfig"], "str | None"]
    metrics: tuple[str, ...] = ()
    error: type[UnsupportedSetting] = UnsupportedSetting


def _version_tuple(version: str) -> tuple:
    from packaging.version import Version
    return Version(version).release


def _rule_trl_version(trainer, cfg) -> str | None:
    import trl
    version = getattr(trl, "__version__", "0")
    lo, hi = TRL_CHECKED
    try:
        inside = _version_tuple(lo) <= _version_tuple(version) < _version_tuple(hi)
    except Exception:  # an unparsable version string is not a checked one
        inside = False
    if inside:
        return None
    return (f"TRL {version} is outside the checked range >={lo},<{hi} (TRL_CHECKED): the callback wraps private "
            "GRPOTrainer methods and relies on their returned keys and loss divisors, which change between "
            "versions; not checked")


def _rule_trainer_class(trainer, cfg) -> str | None:
    import trl
    if isinstance(trainer, trl.GRPOTrainer):
        return None
    return (f"{type(trainer).__name__} is not a trl.GRPOTrainer: the wrapped methods, advantages and loss are "
            "GRPOTrainer's (RLOOTrainer has same-named methods with another baseline and loss); not modelled")


def _rule_sharded_parameters(trainer, cfg) -> str | None:
    sharding = GRPOVerifyCallback.sharding(trainer)
    if sharding is None or (sharding.startswith("DeepSpeed") and not sharding.endswith("3")) or sharding == "FSDP2":
        return None
    return (f"under {sharding} the parameters are sharded (a process holds a flat shard, not the weight matrices); "
            "GRPOVerifyConfig.sharding_safe() keeps only the zero-advantage fraction, which works under any sharding")


def _rule_sharded_gradients(trainer, cfg) -> str | None:
    sharding = GRPOVerifyCallback.sharding(trainer)
    if sharding is None or not sharding.startswith("DeepSpeed"):
        return None
    return f"under {sharding} p.grad is not the step's gradient (DeepSpeed keeps its own, partitioned)"


def _schedule(trainer) -> tuple[int, int]:
    args = trainer.args
    return int(args.steps_per_generation or args.gradient_accumulation_steps), int(args.gradient_accumulation_steps)


def _rule_generation_spans_steps(trainer, cfg) -> str | None:
    # GRPOTrainer._prepare_inputs generates when _step % (steps_per_generation * num_iterations) == 0, _step counting
    # micro-batches: with steps_per_generation > GA one generation feeds several optimizer steps, the later ones at
    # moved weights (TRL then computes old_per_token_logps: ratio != 1) and with no generation to measure
    spg, ga = _schedule(trainer)
    if spg <= ga:
        return None
    return (f"steps_per_generation={spg} > gradient_accumulation_steps={ga}: a generation batch spans "
            f"{math.ceil(spg / ga)} optimizer steps, so the batch metrics would cover several steps and the later "
            "steps are off-policy (ratio != 1); not modelled")


def _rule_step_spans_generations(trainer, cfg) -> str | None:
    # the reverse: several generations inside one optimizer step; the callback measures the step's first only (and
    # with GA % steps_per_generation != 0 a generation straddles two steps, off-policy)
    spg, ga = _schedule(trainer)
    if spg >= ga:
        return None
    return (f"steps_per_generation={spg} < gradient_accumulation_steps={ga}: an optimizer step trains on several "
            "generation batches and only its first would be measured; not modelled")


def _rule_num_iterations(trainer, cfg) -> str | None:
    # TRL reuses each generation batch for num_iterations passes; after the first optimizer step the weights moved,
    # so those passes are clipped off-policy updates (ratio != 1) with no generation for the callback to measure
    mu = int(getattr(trainer, "num_iterations", 1) or 1)
    if mu <= 1:
        return None
    return (f"num_iterations={mu} > 1: each generation batch is trained on for {mu} passes, the later ones at moved "
            "weights (ratio != 1, clipped), so those steps are off-policy and have no batch to measure; not modelled")


def _rule_loss_type(trainer, cfg) -> str | None:
    if cfg.aggregation is not None:  # the user states the token weighting
        return None
    loss_type = getattr(trainer, "loss_type", "grpo")
    if loss_type not in AGGREGATION:
        return (f"loss_type={loss_type!r}: no on-policy token weighting known (AGGREGATION); pass "
                "GRPOVerifyConfig(aggregation='mean' or 'sum') if you know it")
    if loss_type == "cispo" and getattr(trainer, "epsilon_high", 1.0) < 1.0:
        return (f"loss_type='cispo' with epsilon_high={trainer.epsilon_high} < 1 clamps the on-policy ratio below 1; "
                "pass GRPOVerifyConfig(aggregation=...) explicitly")
    return None


def _rule_bnpo_divisor(trainer, cfg) -> str | None:
    # bnpo divides each micro-batch's token sum by that micro-batch's own token count (and each process by its own,
    # before DDP averages): with GA > 1 or several processes the rollouts' weights differ by micro-batch (TRL shuffles
    # rows into micro-batches), not one uniform divisor. dr_grpo (B x max_completion_length), dapo / cispo (the
    # generation batch's global token count, rescaled uniformly), luspo and grpo / sapo (per-row, then mean over equal
    # micro-batches) keep one divisor for the whole step: exact, not refused.
    if getattr(trainer, "loss_type", None) != "bnpo":
        return None
    _, ga = _schedule(trainer)
    processes = int(trainer.accelerator.num_processes)
    if ga <= 1 and processes <= 1:
        return None
    return (f"loss_type='bnpo' with gradient_accumulation_steps={ga} and {processes} process(es): each micro-batch "
            "is divided by its own token count, so the token weights are not uniform over the step; not modelled")


def _rule_entropy_mask(trainer, cfg) -> str | None:
    q = float(getattr(trainer, "top_entropy_quantile", 1.0))
    if q >= 1.0:
        return None
    return (f"top_entropy_quantile={q} < 1: TRL masks the policy loss to each micro-batch's high-entropy tokens, "
            "which the per-rollout score vectors do not model; not modelled")


def _rule_multi_objective(trainer, cfg) -> str | None:
    # normalize_then_sum normalises each reward function per group, sums, then normalises over the whole batch: a
    # group's advantages are not zero iff its weighted total reward is non-constant, which is what the callback's
    # zero-advantage test (and the mixed/constant choice of groups) assumes. scale_rewards is NOT refused: with
    # "group" / "none" the callback's fraction equals TRL's frac_reward_zero_std; with "batch" TRL's flag is the
    # batch-wide std, but advantages are still (r - group mean) / (batch std + 1e-4), zero exactly on the groups the
    # callback counts, so its number is the zero-advantage fraction and TRL's flag is the one that differs.
    aggregation = getattr(trainer, "multi_objective_aggregation", "sum_then_normalize")
    if aggregation == "sum_then_normalize":
        return None
    return (f"multi_objective_aggregation={aggregation!r}: advantages are normalised per reward function and then "
            "over the batch, so a group's advantages vanish on another criterion than its total reward being "
            "constant; not modelled")


def _rule_vllm_importance(trainer, cfg) -> str | None:
    if not (getattr(trainer, "use_vllm", False) and getattr(trainer, "vllm_importance_sampling_correction", False)):
        return None
    return ("use_vllm with vllm_importance_sampling_correction: the loss is reweighted by vLLM/trainer probability "
            "ratios, which the score vectors do not model; not modelled (or set "
            "vllm_importance_sampling_correction=False)")


def _rule_off_policy_mask(trainer, cfg) -> str | None:
    # on-policy without vLLM the sequence KL TRL tests is exactly 0, so a threshold >= 0 keeps every sequence: exact
    threshold = getattr(trainer, "off_policy_mask_threshold", None)
    if threshold is None or (threshold >= 0 and not getattr(trainer, "use_vllm", False)):
        return None
    why = "with use_vllm the KL to the sampler is not 0" if threshold >= 0 else "a negative threshold"
    return (f"off_policy_mask_threshold={threshold} ({why}): TRL drops negative-advantage sequences, which the score "
            "vectors do not model; not modelled")


def _rule_two_sided_delta(trainer, cfg) -> str | None:
    # delta clamps the ratio from above; at the on-policy ratio 1 a delta >= 1 passes the gradient (clamp's gradient
    # is 1 on its boundary), a delta < 1 replaces it by a constant
    delta = getattr(trainer.args, "delta", None)
    if delta is None or delta >= 1.0:
        return None
    return (f"delta={delta} < 1: the two-sided clip holds the on-policy ratio 1 at a constant, cutting the positive-"
            "advantage gradient; not modelled")


def _is_peft(model) -> bool:
    try:
        from accelerate.utils import is_peft_model
        if is_peft_model(model):
            return True
    except ImportError:
        pass
    return bool(getattr(model, "peft_config", None)) or bool(getattr(model, "_hf_peft_config_loaded", False))


def _rule_peft_unverified(trainer, cfg) -> str | None:
    # LoRA (peft LoraConfig) on Linear layers is measured, with and without gradient checkpointing
    # (tests/test_trl_callback_lora.py): the adapters' lora_A / lora_B are nn.Linear modules called as modules, so the
    # engine's hooks see every use, and the Gram is over the trainable (adapter) parameters only. Gradient
    # checkpointing is off for the measuring pass (eval()); the leaf PEFT's enable_input_require_grads makes of the
    # frozen embedding's output is differentiated to (grpo_verify.gram.engine._foreign_leaves). Refused: adapters that
    # read a trainable tensor outside a module call, a use the engine's hooks would miss (a silently wrong K):
    # embedding LoRA (F.embedding on lora_embedding_A), target_parameters (parametrized weights), trainable tokens;
    # and what is not checked: LoRA variants (DoRA & co. wrap the adapters in their own forward, which only the
    # engine's per-rollout exact fallback would cover), convolution / quantized LoRA layers, the other PEFT tuners.
    # modules_to_save copies are ordinary modules called as modules: accepted
    model = trainer.accelerator.unwrap_model(trainer.model)
    if not _is_peft(model):
        return None
    configs = getattr(model, "peft_config", None)
    configs = configs if isinstance(configs, dict) else {}
    for adapter, config in configs.items():
        kind = str(getattr(getattr(config, "peft_type", None), "value", getattr(config, "peft_type", "?")))
        if kind != "LORA":
            return (f"a PEFT model with peft_type={kind} (adapter {adapter!r}): only LoRA on Linear layers is "
                    "measured and checked; not modelled")
        if getattr(config, "target_parameters", None):
            return (f"a PEFT LoRA model with target_parameters={list(config.target_parameters)}: the adapters act "
                    "on parameters directly, not through module calls the Gram engine hooks; not modelled")
    try:
        from peft.tuners.lora import Linear as LoraLinear
        from peft.tuners.tuners_utils import BaseTunerLayer
        from peft.utils.other import AuxiliaryTrainingWrapper, ModulesToSaveWrapper
    except ImportError:  # a PEFT model without peft importable: nothing known to be safe
        return "a PEFT model but peft cannot be imported to check its layers; not modelled"
    for name, module in model.named_modules():
        if isinstance(module, AuxiliaryTrainingWrapper) and not isinstance(module, ModulesToSaveWrapper):
            # e.g. trainable_token_indices: F.embedding on a delta tensor, a use outside a module call
            return (f"a PEFT model with {type(module).__name__} at {name}: it reads trainable tensors outside module "
                    "calls the Gram engine hooks; not modelled")
        if not isinstance(module, BaseTunerLayer):
            continue
        if type(module) is not LoraLinear:
            return (f"a PEFT layer {name} of type {type(module).__name__}: only LoRA on Linear layers is measured "
                    "and checked (embedding LoRA reads its weights outside module calls; the other layer types and "
                    "tuners are not checked); not modelled")
        variants = getattr(module, "lora_variant", None) or {}
        if variants:
            kinds = sorted({type(v).__name__ for v in variants.values()})
            return (f"a PEFT LoRA layer {name} with a LoRA variant ({', '.join(kinds)}, e.g. use_dora=True): the "
                    "variant wraps the adapters in its own forward, which the Gram engine was not checked on; not "
                    "modelled")
    return None


# The refusal table: every setting the callback does not model exactly, checked in this order at on_train_begin
# (before any training step); the first that fires raises its one-line error. Settings deliberately NOT here, each
# exact by TRL 1.16's code (see the rule comments): scale_rewards (any), importance_sampling_level="sequence" (its
# on-policy gradient weights the tokens as the loss type's AGGREGATION), loss types other than bnpo with GA > 1,
# off_policy_mask_threshold >= 0 without vLLM, delta >= 1, mask_truncated_completions (a zeroed completion mask:
# the row is dropped, its score vector is 0 in TRL's loss too). Extra loss terms (beta > 0, entropy_coef,
# MoE aux loss) are outside the engine metrics by definition (they measure the policy-gradient part) and inside
# step_grad/*, which measures p.grad as it is.
REFUSALS: tuple[Rule, ...] = (
    Rule("trl_version", _rule_trl_version),
    Rule("trainer_class", _rule_trainer_class, error=UnsupportedTrainer),
    Rule("sharded_parameters", _rule_sharded_parameters, _PARAMETER_METRICS, UnsupportedSharding),
    Rule("sharded_gradients", _rule_sharded_gradients, ("step_gradient",), UnsupportedSharding),
    Rule("generation_spans_steps", _rule_generation_spans_steps),
    Rule("step_spans_generations", _rule_step_spans_generations),
    Rule("num_iterations", _rule_num_iterations),
    Rule("multi_objective_aggregation", _rule_multi_objective),
    Rule("loss_type", _rule_loss_type, ENGINE_METRICS),
    Rule("bnpo_divisor", _rule_bnpo_divisor, ENGINE_METRICS),
    Rule("entropy_mask", _rule_entropy_mask, ENGINE_METRICS),
    Rule("vllm_importance_sampling", _rule_vllm_importance, ENGINE_METRICS),
    Rule("off_policy_mask", _rule_off_policy_mask, ENGINE_METRICS),
    Rule("two_sided_delta", _rule_two_sided_delta, ENGINE_METRICS),
    Rule("peft_unverified", _rule_peft_unverified, ENGINE_METRICS),
)


def refusal(trainer, config: "GRPOVerifyConfig", rules: tuple[Rule, ...] = REFUSALS) -> UnsupportedSetting | None:
    """The error the first firing rule raises (one line, "grpo_verify: ..."), or None when every setting is modelled."""
    for rule in rules:
        reason = rule.check(trainer, config)
        if reason is None:
            continue
        on = [name for name in rule.metrics if getattr(config, name)]
        if rule.metrics and not on:
            continue  # the metrics it would break are switched off
        switch = f"; set {', '.join(f'{n}=False' for n in on)} in GRPOVerifyConfig" if rule.metrics else ""
        return rule.error(f"grpo_verify: {reason}{switch}")
    return None


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
        # an isinstance check, not duck typing: RLOOTrainer has the same private methods with another loss
        reason = _rule_trainer_class(trainer, config)
        if reason is not None:
            raise UnsupportedTrainer(f"grpo_verify: GRPOVerifyCallback needs a trl.GRPOTrainer: {reason}")
        self.trainer = trainer
        self.config = config or GRPOVerifyConfig()
        self.records: list[dict] = []
        self.logged: dict[int, dict[str, float]] = {}
        self._originals: dict[str, Any] = {}
        self._start: dict[str, torch.Tensor] = {}
        self._previous: dict[str, torch.Tensor] = {}
        self._measuring = False  # this step runs the every-k units
        self._spectral = False  # ... and the singular-value metrics (every spectra_every-th measured step)
        self._in_step = False  # between on_step_begin and on_step_end
        self._captured = False
        self._rewards: torch.Tensor | None = None
        self._pending: dict[str, float] = {}
        self._record: dict = {}
        self._seconds = 0.0
        self._warned: set[str] = set()
        self.aggregation: str | None = None
        # measurement units switched off after a failure (unit -> reason); see _guard
        self.disabled: dict[str, str] = {}
        self._installed: dict[str, tuple[Any, bool]] = {}  # name -> (wrapper, the name was an instance attribute)
        trainer.add_callback(self)
        self._wrap_train()

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
            for name, p in _local_values(self._trainable())[0]:
                copy = p.detach() if model_dtype else _bf16(p.detach())
                out[name] = copy.to(device=device or p.device, copy=True)
        return out

    def snapshot_bytes(self) -> int:
        """Bytes held by the parameter snapshots now."""
        return sum(t.numel() * t.element_size() for t in (*self._start.values(), *self._previous.values()))

    @staticmethod
    def sharding(trainer) -> str | None:
        """"FSDP2", "FSDP" (version 1), "DeepSpeed ZeRO-<stage>" or None (replicated parameters)."""
        if getattr(trainer, "is_fsdp_enabled", False):
            return "FSDP2" if getattr(trainer.accelerator, "is_fsdp2", False) else "FSDP"
        if getattr(trainer, "is_deepspeed_enabled", False):
            plugin = getattr(trainer.accelerator.state, "deepspeed_plugin", None)
            return f"DeepSpeed ZeRO-{getattr(plugin, 'zero_stage', '?')}"
        return None

    def _resolve_aggregation(self) -> str:
        """The token weighting of l_i; a loss type without one was refused (rule ``loss_type``) before this runs."""
        if self.config.aggregation is not None:
            return self.config.aggregation
        return AGGREGATION[getattr(self.trainer, "loss_type", "grpo")]

    # -- installing and removing the wrappers ---------------------------------------------------------------------
    def _wrap_train(self) -> None:
        """Wrap ``trainer.train`` so the batch wrappers are removed on every exit: transformers (5.x) calls
        ``on_train_end`` only when training returns, not when it raises."""
        original = self.trainer.train

        @functools.wraps(original)
        def train(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            finally:
                self._uninstall()
        self._train = (train, original, "train" in vars(self.trainer))
        self.trainer.train = train

    def _install(self) -> None:
        self._uninstall()  # never wrap a wrapper (a second train() on the same trainer)
        trainer = self.trainer
        for name, wrapper in (("_generate_and_score_completions", self._wrapped_generate),
                              ("_calculate_rewards", self._wrapped_rewards)):
            original = getattr(trainer, name)
            self._originals[name] = original
            wrapped = wrapper(original)
            self._installed[name] = (wrapped, name in vars(trainer))
            setattr(trainer, name, wrapped)

    def _uninstall(self) -> None:
        """Put TRL's methods back (idempotent); only our own wrappers are touched."""
        for name, (wrapped, was_instance) in list(self._installed.items()):
            self._restore(name, wrapped, self._originals[name], was_instance)
        self._installed, self._originals = {}, {}
        self._measuring = self._in_step = False

    def detach(self) -> None:
        """Remove the callback, its wrappers and its ``train`` wrapper from the trainer."""
        self._uninstall()
        self._restore("train", *self._train)
        self.trainer.callback_handler.remove_callback(self)

    def _restore(self, name: str, wrapped, original, was_instance: bool) -> None:
        """Undo one wrapper if it is still ours: the original instance attribute back, or the instance attribute
        removed so that the class's method shows again."""
        if vars(self.trainer).get(name) is wrapped:
            if was_instance:
                setattr(self.trainer, name, original)
            else:
                delattr(self.trainer, name)

    # -- fail soft ------------------------------------------------------------------------------------------------
    def _guard(self, unit: str, fn: Callable, *args):
        """Run one measurement; an exception disables its unit for the rest of the run (one warning, a
        ``<unit>/disabled`` key) instead of stopping training. Keys it left half-written are dropped."""
        if unit in self.disabled:
            return None
        pending, record = dict(self._pending), dict(self._record)
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - any failure of a measurement must not stop training
            self._pending, self._record = pending, record
            self._disable(unit, exc)
            return None

    def _disable(self, unit: str, exc: BaseException) -> None:
        reason = (f"{type(exc).__name__}: {exc}".splitlines() or [type(exc).__name__])[0]
        self.disabled[unit] = reason
        self._pending[f"{unit}/disabled"] = 1.0
        step = self._record.get("step", self.trainer.state.global_step)
        warnings.warn(f"grpo_verify: the {unit} measurement failed at step {step} ({reason}); {unit} metrics are "
                      "disabled for the rest of the run, training continues", RuntimeWarning, stacklevel=2)

    def _skip(self, metric: str, reason: str, count: float = 1.0) -> None:
        """A metric not logged this step: ``<metric>/skipped`` (a count) explains the missing key, the reason
        string goes to the step's record."""
        self._pending[f"{metric}/skipped"] = float(count)
        self._record.setdefault("skipped", {})[metric] = reason

    # -- events ---------------------------------------------------------------------------------------------------
    def on_train_begin(self, args, state, control, **kwargs):
        cfg = self.config
        error = refusal(self.trainer, cfg)  # before any wrapper is installed and before any step
        if error is not None:
            raise error
        if cfg.gram or cfg.layer_spectra or cfg.sparsity:
            self.aggregation = self._resolve_aggregation()
        self.disabled = {}
        self._install()
        if cfg.update_since_start:
            self._start = self._guard("update", self._snapshot) or {}
        return control

    def on_train_end(self, args, state, control, **kwargs):
        self._uninstall()
        self._start, self._previous = {}, {}
        return control

    def on_step_begin(self, args, state, control, **kwargs):
        self._in_step = True  # the batch wrappers capture only inside a training step (not in evaluation)
        self._measuring = state.global_step % self.config.every == 0  # the every-k units; zero_adv: every step
        self._spectral = self._measuring and state.global_step % (self.config.every * self.config.spectra_every) == 0
        self._captured = False
        self._pending, self._seconds = {}, 0.0
        self._record = {"step": state.global_step + 1}
        if self._measuring and self.config.update_step:
            t0 = time.perf_counter()
            self._previous = self._guard("update", self._snapshot) or {}
            self._seconds += time.perf_counter() - t0
        return control

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        if self._measuring and self.config.step_gradient:
            t0 = time.perf_counter()
            self._guard("step_grad", self._step_gradient)
            self._seconds += time.perf_counter() - t0
        return control

    def _step_gradient(self) -> None:
        grads = {n: p.grad for n, p in self._trainable() if p.grad is not None}
        if grads:
            self._gradient_metrics(grads, "step_grad/", spectra=self._spectral)
        else:
            self._warn_once("no_grad", "GRPOVerifyCallback: no parameter has .grad at on_pre_optimizer_step; "
                            "step_grad/* is not logged")
            for metric in ("step_grad/layers", "step_grad/sparsity"):
                self._skip(metric, "no parameter has .grad at on_pre_optimizer_step")

    def on_step_end(self, args, state, control, **kwargs):
        """Append the step's scalars to TRL's per-step store, as TRL appends its own (once per step): TRL's ``log``
        then averages both over the same logging window. The zero-advantage unit is in every step's scalars, the
        others only in those of measured steps, with ``measured_step`` (that step's number)."""
        if not self._in_step:
            return control
        self._in_step = False
        if "zero_adv" in self.disabled:  # every step says why the every-step keys are missing
            self._pending["zero_adv/disabled"] = 1.0
        if self._measuring:
            t0 = time.perf_counter()
            if self.config.update_step or self.config.update_since_start or self.config.delta_rank:
                self._guard("update", self._update_metrics)
            self._seconds += time.perf_counter() - t0
            for unit in self.disabled:  # every measured step says why the unit's keys are missing
                self._pending[f"{unit}/disabled"] = 1.0
            self._pending["measured_step"] = float(state.global_step)
            if self._spectral and (self.config.layer_spectra or self.config.step_gradient or self.config.delta_rank):
                self._pending["spectra_step"] = float(state.global_step)  # the singular-value metrics' step
            self._pending["seconds"] = float(self._gather(torch.tensor([self._seconds], dtype=torch.float64)).max())
            if self._start or self._previous:
                self._pending["memory/snapshot_mib"] = self.snapshot_bytes() / 2**20
            self._previous = {}
        store = self.trainer._metrics["train"]
        flat = {self._key(k): float(v) for k, v in self._pending.items() if v is not None and math.isfinite(v)}
        for key, value in flat.items():
            store[key].append(value)
        self.logged[state.global_step] = flat
        if self._measuring:
            self._record["logged"] = flat
            if len(self.records) < self.config.max_records:
                self.records.append(self._record)
        self._measuring = self._spectral = False
        return control

    # -- the batch ------------------------------------------------------------------------------------------------
    def _wrapped_rewards(self, original):
        def _calculate_rewards(*args, **kwargs):
            rewards = original(*args, **kwargs)
            if self._in_step and not self._captured:
                self._rewards = self._guard("zero_adv", lambda: rewards.detach().clone())
            return rewards
        return _calculate_rewards

    def _wrapped_generate(self, original):
        def _generate_and_score_completions(inputs):
            output = original(inputs)
            if self._in_step and not self._captured and self.trainer.model.training:
                self._captured = True
                t0 = time.perf_counter()
                try:
                    self._measure_batch(output, engine=self._measuring)
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

    def _measure_batch(self, output: dict, engine: bool = True) -> None:
        """The zero-advantage fractions (every step), then, with ``engine`` (the measured steps), the Gram engine
        pass: two units, each failing soft on its own."""
        cfg = self.config
        batch = self._guard("zero_adv", self._zero_advantage, output)
        if not engine or not (cfg.gram or (cfg.layer_spectra and self._spectral) or cfg.sparsity):
            return
        self._guard("gram", self._engine_batch, output, batch)

    def _advantages(self, output: dict) -> tuple[torch.Tensor, int]:
        """All processes' advantages (float64, global row order) and this process's row count."""
        advantages = output["advantages"].detach().to(torch.float64).cpu()
        return self._gather(advantages).reshape(-1), advantages.shape[0]

    def _zero_advantage(self, output: dict) -> tuple[torch.Tensor, int, torch.Tensor]:
        """Log the zero-advantage fractions of the whole (all-process) generation batch; (advantages, local rows,
        mixed-group flags) for the engine."""
        trainer = self.trainer
        R = trainer.num_generations
        all_adv, n = self._advantages(output)
        N = all_adv.numel()
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
        else:
            self._skip("zero_adv/group_fraction", "TRL's reward matrix of the step was not captured")
        exact = (all_adv.view(-1, R) == 0).all(dim=1)
        self._pending["zero_adv/exact_fraction"] = float(exact.double().mean())
        mixed = ~constant if constant is not None else ~exact
        self._record.update(groups_total=N // R, constant_groups=(~mixed).nonzero().flatten().tolist())
        return all_adv, n, mixed

    def _engine_batch(self, output: dict, batch: tuple | None) -> None:
        """Choose the groups this process measures and run the Gram engine on them."""
        cfg, trainer = self.config, self.trainer
        accelerator = trainer.accelerator
        R = trainer.num_generations
        P, me = accelerator.num_processes, accelerator.process_index
        if batch is None:  # the zero-advantage unit failed or is disabled: mixed = not all advantages exactly 0
            all_adv, n = self._advantages(output)
            batch = all_adv, n, ~(all_adv.view(-1, R) == 0).all(dim=1)
        all_adv, n, mixed = batch
        groups_total = all_adv.numel() // R
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
        want_grad = (cfg.layer_spectra and self._spectral) or cfg.sparsity
        summed: dict[str, torch.Tensor] | None = None
        gram_sums, weighted_sums = np.zeros(len(GRAM_METRICS)), np.zeros(len(GRAM_METRICS))
        gram_count = weighted_count = constant_count = 0
        groups_record = []
        was_training = model.training
        model.eval()
        runnable = [g for g in chosen if any(c for _, c in group_rows(g))]
        # under FSDP2 every forward and backward all-gathers each block's parameters, a collective: every process
        # must run as many passes (the count is gathered before any pass, a collective of its own)
        passes = (int(self._gather(torch.tensor([len(runnable)], dtype=torch.float64)).max())
                  if self.sharding(trainer) == "FSDP2" else len(runnable))
        try:
            for g in runnable:
                rows = group_rows(g)
                a_full = all_adv[g * R:(g + 1) * R]
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
                    else:  # constant rewards: diag(A) K diag(A) is (numerically) 0, no spectrum to rank
                        constant_count += 1
                if use_adv:
                    grads = {name[len(strip):]: t for name, t in res.grpo_gradients.items()}
                    if summed is None:
                        summed = grads
                    else:
                        for name, t in grads.items():
                            summed[name] += t
                del res
                groups_record.append(entry)
            self._discarded_passes(policy, passes - len(runnable), device, pad_id)
        finally:
            model.train(was_training)
        self._record["groups"] = groups_record
        counts = torch.tensor([*gram_sums, gram_count, *weighted_sums, weighted_count, len(groups_record),
                               split_gathered, split_skipped, constant_count], dtype=torch.float64)
        total = self._gather(counts).sum(dim=0)
        k = len(GRAM_METRICS)
        g_sum, g_n = total[:k], float(total[k])
        w_sum, w_n = total[k + 1:2 * k + 1], float(total[2 * k + 1])
        measured, gathered, skipped, constant_n = (float(x) for x in total[2 * k + 2:])
        self._pending.update({"groups/measured": measured, "groups/split_gathered": gathered,
                              "groups/split_skipped": skipped})
        if cfg.gram and g_n:
            self._pending.update({f"gram/{m}": float(s) / g_n for m, s in zip(GRAM_METRICS, g_sum)})
        if cfg.gram and w_n:
            self._pending.update({f"gram_weighted/{m}": float(s) / w_n for m, s in zip(GRAM_METRICS, w_sum)})
        if cfg.gram and not g_n:
            self._skip("gram", "no measured group had a completion token")
        if cfg.gram and constant_n:  # the count of measured groups without a gram_weighted/* entry
            self._skip("gram_weighted", "measured groups with constant rewards (all advantages 0) have no "
                       "weighted Gram", constant_n)
        if want_grad:
            summed = self._all_reduce(summed, names)
            if summed is not None:
                self._gradient_metrics(summed, "", spectra=cfg.layer_spectra and self._spectral,
                                       coordinates=cfg.sparsity)
            else:
                reason = "every measured group has constant rewards (all advantages 0): the GRPO gradient is 0"
                for metric, on in (("layers", cfg.layer_spectra and self._spectral), ("sparsity", cfg.sparsity)):
                    if on:
                        self._skip(metric, reason)

    def _discarded_passes(self, policy, count: int, device, pad_id: int) -> None:
        """Engine passes on a one-token batch whose results are dropped: under FSDP2 a process that measured fewer
        groups than another runs these so that every process takes part in as many parameter all-gathers."""
        ids = torch.full((1, 2), pad_id, dtype=torch.long, device=device)
        for _ in range(count):
            rollout_gram(policy, ids, torch.ones_like(ids), 1, self.aggregation, accumulate_dtype=torch.float64)

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
        """Sparsity and per-layer spectra of full gradients, or of DTensor shards (FSDP2's ``p.grad``): then the
        counts are summed over the processes and each matrix is gathered whole, one at a time, for its SVD."""
        cfg = self.config
        tol = cfg.relative_tolerance
        local, sharded = _local_values(sorted(grads.items()))
        nonzero = float(any(bool(g.any()) for _, g in local))
        if sharded:
            nonzero = float(self._gather(torch.tensor([nonzero], dtype=torch.float64)).max())
        if not nonzero:
            # an all-zero gradient (every measured group degenerate) has no spectrum and no relative sparsity
            reason = "the gradient is exactly 0 (every group's advantages are 0)"
            for metric, on in ((f"{where}layers", spectra), (f"{where}sparsity", coordinates)):
                if on:
                    self._skip(metric, reason)
            return
        if coordinates:
            if sharded:
                pieces = [g for _, g in local]
                top = max((float(torch.linalg.vector_norm(g, float("inf"))) for g in pieces if g.numel()),
                          default=0.0)
                top = float(self._gather(torch.tensor([top], dtype=torch.float64)).max())
                counts = torch.tensor(sparsity_counts(pieces, cfg.sparsity_thresholds, top), dtype=torch.float64)
                values = sparsity_from_counts(self._gather(counts).sum(dim=0).tolist(), cfg.sparsity_thresholds, top)
            else:
                values = sparsity(list(grads.values()), cfg.sparsity_thresholds)
            for key, value in values.items():
                self._pending[f"{where}sparsity/{key}"] = value
        if spectra:
            per_layer = {m: [] for m in LAYER_METRICS}
            for name in sorted(grads):
                g = grads[name]
                if g.ndim != 2:
                    continue
                g = _full(g.detach())  # a collective under FSDP2: every process, every matrix, the same order
                if not bool(g.any()):  # a zero matrix has no spectrum to rank
                    continue
                m = rank.rank_metrics(singular_values(g).cpu().numpy(), tol).as_dict()
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
        local, sharded = _local_values(params)
        total = sum(p.numel() for _, p in params)
        if not total:
            return
        comparisons = [("unchanged_step", self._previous), ("unchanged_since_start", self._start)]
        delta = {"delta_rank_fraction": [], "delta_stable_rank": [], "delta_effective_rank": []}
        with torch.no_grad():
            comparisons = [(label, snapshot) for label, snapshot in comparisons if snapshot]
            same_model = {label: 0 for label, _ in comparisons}
            same_bf16 = dict(same_model)
            for name, p in local:  # one pass over the parameters: each is rounded to bfloat16 once
                new = p.detach()
                new_bf16 = _bf16(new) if cfg.update_bf16 else None
                for label, snapshot in comparisons:
                    old = snapshot[name].to(p.device)
                    if cfg.update_model_dtype and old.dtype == new.dtype:
                        same_model[label] += int(torch.count_nonzero(new == old))
                    if cfg.update_bf16:
                        same_bf16[label] += int(torch.count_nonzero(new_bf16 == _bf16(old)))
            if sharded:  # each process counted its own rows: sum the counts (and the values, which must be all)
                labels = [label for label, _ in comparisons]
                counts = torch.tensor([sum(p.numel() for _, p in local), *(same_model[x] for x in labels),
                                       *(same_bf16[x] for x in labels)], dtype=torch.float64)
                counts = self._gather(counts).sum(dim=0)
                if int(counts[0]) != total:
                    raise RuntimeError(f"the processes' shards hold {int(counts[0])} values, the parameters {total}")
                same_model = {x: int(counts[1 + i]) for i, x in enumerate(labels)}
                same_bf16 = {x: int(counts[1 + len(labels) + i]) for i, x in enumerate(labels)}
            for label, _ in comparisons:
                if cfg.update_model_dtype and cfg.needs_model_snapshot:
                    self._pending[f"update/{label}/model"] = same_model[label] / total
                if cfg.update_bf16:
                    self._pending[f"update/{label}/bf16"] = same_bf16[label] / total
            if cfg.delta_rank and self._start and self._spectral:
                for name, p in params:
                    if p.ndim != 2:
                        continue
                    d = _full(p.detach(), self._start[name])
                    sigma = singular_values(d).cpu().numpy()
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
