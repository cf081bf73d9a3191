"""--train-steps: GRPO training with TRL's ``GRPOTrainer``, measured by :class:`GRPOVerifyCallback`.

The training phase is TRL's own loop (sampling, rewards, advantages, loss, AdamW step); nothing of the update is
re-implemented here. This module only

* maps the CLI's options onto a ``trl.GRPOConfig`` (:func:`grpo_config_kwargs`) and refuses, in one line, every
  combination TRL cannot express (:func:`check_options`, run before the model is loaded);
* builds the dataset from the CLI's problems with the CLI's own prompt (chat template and all: the model sees the
  prompts the measurements used) and a reward function that is the CLI's :func:`reward.score`;
* adds :class:`GRPOVerifyCallback` (every step: zero-advantage groups, update sparsity in the model's dtype and in
  bfloat16, over the step and since the start; every ``--train-spectra-every`` steps and at the last step also the
  SVD-based metrics: the Gram engine's ranks and per-layer gradient spectra, the step gradient's spectra and the rank
  of Delta W = W - W_start) and a small recorder that turns each logged step into one ``train.jsonl`` record.

Nothing is checkpointed (``save_strategy="no"``): an interrupted training phase restarts from step 0 on --resume.
"""

from __future__ import annotations

import copy
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import torch

from . import reward as rewards_mod
from .measure import sparsity
from .sampling import _eos_ids, prompt_ids, prompt_text

# --aggregation -> the TRL loss whose on-policy gradient weights the tokens the same way (up to a uniform factor:
# dr_grpo divides by max_completion_length, dapo by the step's token count)
LOSS_TYPES = {"mean": "grpo", "sum": "dapo", "constant": "dr_grpo"}
LOSS_AGGREGATION = {"grpo": "mean", "bnpo": "sum", "dapo": "sum", "dr_grpo": "sum"}
# --advantage -> GRPOConfig.scale_rewards; None: TRL has no equivalent
SCALE_REWARDS = {"grpo": "group", "dr_grpo": "none", "population": None, "rloo": None}
TRL_EPS = 1e-4  # TRL's fixed (r - mean) / (std + 1e-4)
HEAVY = ("gram", "layer_spectra", "sparsity", "step_gradient", "delta_rank")


def loss_type(cfg) -> str:
    return cfg.loss_type or LOSS_TYPES[cfg.aggregation]


def check_options(cfg, device: torch.device) -> None:
    """Raise ValueError (one line) for a training option TRL's GRPOTrainer cannot express."""
    if not cfg.train_steps:
        return
    try:
        import trl  # noqa: F401
    except ImportError:
        raise ValueError("--train-steps runs TRL's GRPOTrainer, which is not installed: pip install trl (it is in "
                         "the dev extra)") from None
    if SCALE_REWARDS[cfg.advantage] is None:
        why = ("TRL scales by the sample std (scale_rewards='group'); it has no population std" if
               cfg.advantage == "population" else "GRPOTrainer has no leave-one-out baseline (TRL's RLOOTrainer "
               "is another trainer)")
        raise ValueError(f"--train-steps with --advantage {cfg.advantage}: {why}; use --advantage grpo or dr_grpo")
    if cfg.advantage == "grpo" and cfg.advantage_eps != TRL_EPS:
        raise ValueError(f"--train-steps with --advantage grpo needs --advantage-eps {TRL_EPS:g} (TRL divides by "
                         f"std + {TRL_EPS:g}, fixed), got {cfg.advantage_eps:g}")
    lt = loss_type(cfg)
    if lt not in LOSS_AGGREGATION:
        raise ValueError(f"--loss-type must be one of {tuple(LOSS_AGGREGATION)}, got {lt!r}")
    if LOSS_AGGREGATION[lt] != ("mean" if cfg.aggregation == "mean" else "sum"):
        raise ValueError(f"--loss-type {lt} weights the tokens of a completion by a "
                         f"{'per-sequence mean' if LOSS_AGGREGATION[lt] == 'mean' else 'sum'}, --aggregation "
                         f"{cfg.aggregation} does not; pass --aggregation "
                         f"{'mean' if LOSS_AGGREGATION[lt] == 'mean' else 'sum (or constant)'} with it")
    if device.type == "cuda" and device.index not in (None, 0):
        raise ValueError(f"--train-steps with --device {device}: TRL's trainer uses the first visible GPU; choose "
                         f"the GPU with CUDA_VISIBLE_DEVICES={device.index} and --device cuda instead")


def grpo_config_kwargs(cfg, out_dir: Path, cpu: bool, suppress: list[int] | None = None) -> dict:
    """The GRPOConfig of a --train-steps run (one generation batch = one optimizer step, on-policy)."""
    R, B = cfg.train_group_size, cfg.train_prompts_per_step
    kwargs = dict(
        output_dir=str(out_dir), report_to=[], use_cpu=cpu, bf16=False, fp16=False, seed=cfg.seed,
        max_steps=cfg.train_steps, logging_steps=1, save_strategy="no", disable_tqdm=True,
        learning_rate=cfg.lr, weight_decay=cfg.weight_decay, lr_scheduler_type="constant", warmup_steps=0,
        optim="adamw_torch", max_grad_norm=cfg.max_grad_norm,
        num_generations=R, per_device_train_batch_size=B * R, gradient_accumulation_steps=1, steps_per_generation=1,
        num_iterations=1, shuffle_dataset=False, dataloader_num_workers=0,
        loss_type=loss_type(cfg), scale_rewards=SCALE_REWARDS[cfg.advantage], beta=cfg.beta,
        temperature=cfg.temperature, top_p=cfg.top_p, top_k=0, max_completion_length=cfg.max_new_tokens,
        gradient_checkpointing=False, disable_dropout=True, log_completions=False)
    if suppress:
        kwargs["generation_kwargs"] = {"suppress_tokens": suppress}
    return kwargs


def build_dataset(problems, tokenizer, answer_format: str):
    """One row per problem: the CLI's prompt (chat messages when the tokenizer has a chat template, which TRL renders
    with add_generation_prompt as prompt_ids does; else the plain text and 'Answer:'), the reference, the index."""
    from datasets import Dataset
    chat = bool(getattr(tokenizer, "chat_template", None))
    prompts = [[{"role": "user", "content": prompt_text(p, answer_format)}] if chat else
               f"{prompt_text(p, answer_format)}\nAnswer:" for p in problems]
    return Dataset.from_dict({"prompt": prompts, "reference": [p.reference for p in problems],
                              "problem": [p.index for p in problems]})


def make_reward(cfg, seen: list):
    """The CLI's reward (kind, strict format) as a TRL reward function; each call's rows are kept in ``seen``."""
    def reward(prompts, completions, reference, problem, **kwargs):
        texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
        scores = [rewards_mod.score([t], ref, cfg.reward, cfg.strict_format)[0] for t, ref in zip(texts, reference)]
        seen.append((list(problem), scores))
        return scores
    reward.__name__ = cfg.reward
    return reward


def _make_callback_class():
    from grpo_verify.trl_callback import GRPOVerifyCallback

    class CadencedCallback(GRPOVerifyCallback):
        """GRPOVerifyCallback measuring every step, its SVD-based metrics (and the Gram engine pass) only every
        ``heavy_every`` steps and at the last step."""

        def __init__(self, trainer, config, heavy_every: int):
            self.heavy_every = heavy_every
            super().__init__(trainer, config)

        def on_step_begin(self, args, state, control, **kwargs):
            heavy = state.global_step % self.heavy_every == 0 or state.global_step + 1 >= args.max_steps
            for name in HEAVY:
                setattr(self.config, name, heavy)
            return super().on_step_begin(args, state, control, **kwargs)

    return CadencedCallback


@contextmanager
def _reference_from(model, beta: float):
    """TRL builds its KL reference by reloading the policy from ``config._name_or_path``, which a GGUF or in-memory
    model does not have: hand it a copy of the (still untrained) policy instead."""
    if not beta:
        yield
        return
    import trl.trainer.grpo_trainer as grpo_trainer
    original = grpo_trainer.create_model_from_path
    grpo_trainer.create_model_from_path = lambda *args, **kwargs: copy.deepcopy(model).eval()
    try:
        yield
    finally:
        grpo_trainer.create_model_from_path = original


def train(model, tokenizer, problems, cfg, on_step, progress: bool = True, out_dir: Path | None = None) -> None:
    """Run cfg.train_steps steps of trl.GRPOTrainer, calling on_step(record) after each (the caller persists it)."""
    with warnings.catch_warnings():
        # transformers 5 renames gradient checkpointing; TRL's GRPOConfig still sets the old name (to False here)
        warnings.filterwarnings("ignore", message=".*gradient_checkpointing.* is deprecated", category=FutureWarning)
        _train(model, tokenizer, problems, cfg, on_step, progress, out_dir)


def _train(model, tokenizer, problems, cfg, on_step, progress, out_dir) -> None:
    import trl
    from tqdm.auto import tqdm
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from grpo_verify.trl_callback import GRPOVerifyConfig

    device = next(model.parameters()).device
    quantizer = getattr(model, "hf_quantizer", None)
    if type(quantizer).__name__ == "GgufHfQuantizer" and all(p.is_floating_point() for p in model.parameters()):
        # a .gguf checkpoint is de-quantized on load (plain float weights), but transformers keeps its quantizer on
        # the model and the Trainer then refuses to train a "purely quantized" model
        quantizer.remove_quantization_config(model)
    # TRL stops a completion at the tokenizer's EOS and the generation config's; the CLI's sampler also at the model
    # config's: make them the same set
    eos = sorted(_eos_ids(tokenizer, model))
    if eos:
        model.generation_config.eos_token_id = eos
    vocab = getattr(model.config, "vocab_size", None) or len(tokenizer)
    suppress = list(range(len(tokenizer), vocab)) if vocab > len(tokenizer) else None
    args = trl.GRPOConfig(**grpo_config_kwargs(cfg, Path(out_dir or cfg.out) / "trl", device.type == "cpu",
                                               suppress))
    seen: list = []
    model.train()
    with _reference_from(model, cfg.beta):
        trainer = trl.GRPOTrainer(model=model, reward_funcs=make_reward(cfg, seen), args=args,
                                  train_dataset=build_dataset(problems, tokenizer, cfg.answer_format),
                                  processing_class=tokenizer)
    for cls in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(cls)
    P = "grpo_verify/"
    verify = _make_callback_class()(trainer, GRPOVerifyConfig(every=1, groups=None, prefix=P,
                                                              relative_tolerance=cfg.relative_tolerance,
                                                              sparsity_thresholds=cfg.sparsity_thresholds),
                                    cfg.train_spectra_every)
    R = cfg.train_group_size
    by_index = {p.index: p for p in problems}

    class Recorder(TrainerCallback):
        def __init__(self):
            self.bar = tqdm(total=cfg.train_steps, desc="train steps", disable=not progress, dynamic_ncols=True)
            self.t0 = time.perf_counter()
            self.grad: dict | None = None

        def on_step_begin(self, args, state, control, **kwargs):
            self.t0, self.grad = time.perf_counter(), None
            seen.clear()

        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            grads = [p.grad for p in verify.model.parameters() if p.requires_grad and p.grad is not None]
            if grads and any(bool((g != 0).any()) for g in grads):
                self.grad = sparsity(grads, cfg.sparsity_thresholds)

        def on_log(self, args, state, control, logs=None, **kwargs):
            logs = logs or {}
            if "loss" not in logs:  # the end-of-training summary log
                return
            step = state.global_step
            mine = verify.logged.get(step, {})
            trl_logs = {k: v for k, v in logs.items() if not k.startswith(P)}
            cb = {k[len(P):]: v for k, v in mine.items()}
            prompts = [p for rows, _ in seen for p in rows[::R]]
            rewards = [scores[i:i + R] for _, scores in seen for i in range(0, len(scores), R)]
            unchanged = {label: {dt: cb.get(f"update/unchanged_{label}/{dt}") for dt in ("model", "bf16")}
                         for label in ("step", "since_start")}
            quantiles = ("median", "q25", "q75")

            def grouped(name):
                values = {q: cb[f"{name}/{q}"] for q in quantiles if f"{name}/{q}" in cb}
                return values or None

            record = {
                "step": step - 1, "trainer": "trl.GRPOTrainer", "prompts": prompts, "rewards": rewards,
                "mean_reward": logs.get("reward"),
                "zero_advantage_group_fraction": cb.get("zero_adv/group_fraction", logs.get("frac_reward_zero_std")),
                "frac_reward_zero_std": logs.get("frac_reward_zero_std"),
                "zero_advantage_exact_fraction": cb.get("zero_adv/exact_fraction"),
                "gradient_norm": logs.get("grad_norm"),
                "sparsity": self.grad,
                "completion_tokens_mean": logs.get("completions/mean_length"),
                "update_unchanged": unchanged,
                "updated": unchanged["step"]["model"] is not None and unchanged["step"]["model"] < 1,
                "spectra_measured": "groups/measured" in cb,
                "delta_rank_fraction": grouped("update/delta_rank_fraction"),
                "delta_stable_rank": grouped("update/delta_stable_rank"),
                "delta_effective_rank": grouped("update/delta_effective_rank"),
                "gram": {k[len("gram/"):]: v for k, v in cb.items() if k.startswith("gram/")} or None,
                "gram_weighted": {k[len("gram_weighted/"):]: v for k, v in cb.items()
                                  if k.startswith("gram_weighted/")} or None,
                "step_gradient_layers": {m: grouped(f"step_grad/layers/{m}") for m in ("stable_rank", "effective_rank")}
                if "step_grad/layers/stable_rank/median" in cb else None,
                "seconds": round(time.perf_counter() - self.t0, 3), "callback_seconds": cb.get("seconds"),
                "trl": trl_logs, "callback": cb}
            record["prompt_ids_match"] = self.prompts_match(step, prompts)
            on_step(record)
            self.bar.update()

        def prompts_match(self, step, prompts):
            """Whether the prompt tokens TRL generated from (the callback's measured groups) are the CLI's
            prompt_ids of the same problems; None on a step without them."""
            last = verify.records[-1] if verify.records else {}
            if last.get("step") != step or not last.get("groups"):
                return None
            for entry in last["groups"]:
                start, ids, mask = entry["completion_start"], entry["input_ids"][0], entry["attention_mask"][0]
                got = [t for t, m in zip(ids[:start], mask[:start]) if m]
                if got != prompt_ids(tokenizer, by_index[prompts[entry["group"]]], cfg.answer_format):
                    return False
            return True

        def on_train_end(self, args, state, control, **kwargs):
            self.bar.close()

    recorder = Recorder()
    trainer.add_callback(recorder)
    try:
        trainer.train()
    finally:
        recorder.bar.close()
        model.eval()
