"""A tiny local Llama, its tokenizer and a real ``trl.GRPOTrainer`` with :class:`GRPOVerifyCallback`, for
``tests/test_trl_callback.py``; run as a script under ``torch.distributed.run`` it is the two-process (gloo, CPU)
worker of ``test_two_processes_gather_and_skip_split_groups``.

The model is the cross-check's (``tests/test_trl_crosscheck.py``): hidden 16, one layer, vocabulary 32, float64,
LM head scaled by 10, saved to a folder and loaded by TRL from that path; nothing is downloaded. Prompts are two
tokens each (no left padding, so TRL's positions and the Gram engine's agree). The reward is dyadic: 1 for every
completion of the prompt "w3 w4" (a constant group) and, for the others, the parity of the first completion token.

As a worker (``python -m torch.distributed.run --nproc_per_node 2 tests/trl_two_process_worker.py OUT``), each process
runs two trainings of 2 steps on the same batch geometry, per-device batch 3 and 2 generations (so the middle group
of the 6 global rows straddles the two processes): one with ``split_groups="gather"``, one with ``"skip"``, and
writes ``OUT/rank{r}_{mode}.json`` (what the callback logged, its records, TRL's log history) and, on rank 0,
``OUT/{mode}_weights_step{s}.pt`` (the weights at the start of each step).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

VOCAB_SIZE = 32
PAD_ID, EOS_ID = 0, 1
PROMPTS = ["w3 w4", "w5 w6", "w7 w8", "w9 w10", "w11 w12", "w13 w14"]
OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def offline_tiny_model(root: Path):
    """A generator for a module-scoped pytest fixture: the hub switched off (environment and huggingface_hub's
    constant) while the tests run, and (root, path of the tiny model built under root)."""
    import huggingface_hub.constants
    import pytest

    with pytest.MonkeyPatch.context() as patch:
        for name in OFFLINE:
            patch.setenv(name, "1")
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        yield root, build_tiny_model(root / "tiny")


def build_tiny_model(folder: Path) -> Path:
    """Save the tiny float64 Llama and its word-level tokenizer to ``folder`` (once)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    if (folder / "config.json").exists():
        return folder
    vocab = {"[PAD]": PAD_ID, "[EOS]": EOS_ID, "[UNK]": 2, **{f"w{i}": i for i in range(3, VOCAB_SIZE)}}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", eos_token="[EOS]",
                                        unk_token="[UNK]")
    config = LlamaConfig(vocab_size=VOCAB_SIZE, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                         pad_token_id=PAD_ID, eos_token_id=EOS_ID, bos_token_id=EOS_ID, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.float64)
    with torch.no_grad():
        model.lm_head.weight.mul_(10.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def reward(prompts, completions, completion_ids, **kwargs):
    """1 for the prompt "w3 w4" (a constant group), else the parity of the first completion token."""
    return [1.0 if p.startswith("w3 ") else float(c[0] % 2) if c else 0.0 for p, c in zip(prompts, completion_ids)]


def make_trainer(model_dir: Path, out_dir: Path, *, steps: int = 3, batch_size: int = 16, num_generations: int = 4,
                 loss_type: str = "grpo", learning_rate: float = 1e-3, seed: int = 0, before_trainer=None, **extra):
    import trl
    from datasets import Dataset
    from transformers import AutoTokenizer

    args = trl.GRPOConfig(
        output_dir=str(out_dir), report_to=[], use_cpu=True,
        per_device_train_batch_size=batch_size, num_generations=num_generations, max_completion_length=6,
        learning_rate=learning_rate, max_steps=steps, logging_steps=1, save_strategy="no", loss_type=loss_type,
        model_init_kwargs={"dtype": torch.float64}, seed=seed, disable_dropout=True, max_grad_norm=0.0,
        dataloader_num_workers=0, **{"bf16": False, "fp16": False, **extra})
    dataset = Dataset.from_dict({"prompt": PROMPTS * 8})
    if before_trainer is not None:  # after the config (which sets accelerate's state up), before the trainer
        before_trainer()
    return trl.GRPOTrainer(model=str(model_dir), reward_funcs=reward, args=args, train_dataset=dataset,
                           processing_class=AutoTokenizer.from_pretrained(model_dir))


class WeightRecorder:
    """A TrainerCallback recording the weights at each step's start and end and the gradient the optimizer gets."""

    def __new__(cls, *args, **kwargs):
        from transformers import TrainerCallback

        class _Recorder(TrainerCallback):
            def __init__(self, model):
                self.model = model
                self.begin, self.end, self.grads = {}, {}, {}

            def _state(self):
                return {n: p.detach().clone() for n, p in self.model.named_parameters()}

            def on_train_begin(self, args, state, control, **kw):
                self.initial = self._state()

            def on_step_begin(self, args, state, control, **kw):
                self.begin[state.global_step + 1] = self._state()

            def on_pre_optimizer_step(self, args, state, control, **kw):
                self.grads[state.global_step + 1] = {n: p.grad.detach().clone()
                                                     for n, p in self.model.named_parameters() if p.grad is not None}

            def on_step_end(self, args, state, control, **kw):
                self.end[state.global_step] = self._state()

        return _Recorder(*args, **kwargs)


def _worker(out: Path) -> None:
    from grpo_verify.trl_callback import GRPOVerifyCallback, GRPOVerifyConfig

    rank = int(os.environ["RANK"])
    model_dir = build_tiny_model(out / "tiny")  # rank 0 wrote it before launch (the test does)
    for mode in ("gather", "skip"):
        trainer = make_trainer(model_dir, out / f"trainer_{mode}", steps=2, batch_size=3, num_generations=2)
        callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(groups=None, split_groups=mode))
        recorder = WeightRecorder(trainer.accelerator.unwrap_model(trainer.model))
        trainer.add_callback(recorder)
        trainer.train()
        if rank == 0:
            for step, state in recorder.begin.items():
                torch.save(state, out / f"{mode}_weights_step{step}.pt")
        history = [{k: v for k, v in entry.items() if isinstance(v, (int, float))}
                   for entry in trainer.state.log_history]
        payload = {"logged": {str(k): v for k, v in callback.logged.items()}, "records": callback.records,
                   "history": history, "world_size": trainer.accelerator.num_processes,
                   "process_index": trainer.accelerator.process_index}
        (out / f"rank{rank}_{mode}.json").write_text(json.dumps(payload))


def _sharding_worker(out: Path, mode: str) -> None:
    """One tiny run, unsharded ("ddp") or under FSDP2 ("fsdp2"; one launch each: accelerate's state is a process-wide
    singleton), the callback measuring everything (its default configuration); per device 3 rows of 2 generations, so the middle group straddles the processes and, gathered, process 0 measures
    two groups and process 1 one (FSDP2's collectives need the extra passes). Its logged values and records, TRL's
    log and what the run really was go to a JSON per rank."""
    from torch.distributed.tensor import DTensor

    from grpo_verify.trl_callback import GRPOVerifyCallback, GRPOVerifyConfig, refusal

    rank = int(os.environ["RANK"])
    model_dir = build_tiny_model(out / "tiny")
    fsdp = dict(fsdp="full_shard", fsdp_config={"fsdp_version": 2, "cpu_ram_efficient_loading": False,
                                                "transformer_layer_cls_to_wrap": ["LlamaDecoderLayer"]})

    def as_multi_gpu():
        # accelerate 1.16 turns FSDP on only for accelerator device types (AcceleratorState); on CPU it silently
        # trains DDP. Declaring the state a multi-GPU one (after the config set it up) lets FSDP2 run on gloo.
        from accelerate.state import PartialState
        from accelerate.utils import DistributedType

        PartialState._shared_state["distributed_type"] = DistributedType.MULTI_GPU

    trainer = make_trainer(model_dir, out / f"trainer_{mode}", steps=2, batch_size=3, num_generations=2,
                           gradient_checkpointing=False, before_trainer=as_multi_gpu if mode == "fsdp2" else None,
                           **(fsdp if mode == "fsdp2" else {}))
    refused = refusal(trainer, GRPOVerifyConfig())
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig())
    trainer.train()
    history = [{k: v for k, v in entry.items() if isinstance(v, (int, float))}
               for entry in trainer.state.log_history]
    records = [{"step": r["step"], "groups": [{k: g[k] for k in ("group", "K", "kept")} for g in r["groups"]]}
               for r in callback.records]
    payload = {"logged": {str(k): v for k, v in callback.logged.items()}, "history": history, "records": records,
               "is_fsdp_enabled": bool(getattr(trainer, "is_fsdp_enabled", False)),
               "distributed_type": str(trainer.accelerator.distributed_type),
               "dtensor_parameters": all(isinstance(q, DTensor) for q in trainer.model_wrapped.parameters()),
               "refusal_of_the_default_config": None if refused is None else str(refused),
               "disabled": callback.disabled}
    (out / f"rank{rank}_{mode}.json").write_text(json.dumps(payload))


if __name__ == "__main__":
    for name in OFFLINE:
        os.environ[name] = "1"
    if sys.argv[2:]:
        _sharding_worker(Path(sys.argv[1]), sys.argv[2])
    else:
        _worker(Path(sys.argv[1]))
    # tear the process group down, then leave without the interpreter's finalisation: a gloo thread still alive
    # then can abort the process ("terminate called without an active exception", exit -6) after the results are
    # written, seen in loaded full runs even after destroy_process_group. A failure above still exits non-zero.
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
