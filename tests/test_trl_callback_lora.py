"""``GRPOVerifyCallback`` on a real ``trl.GRPOTrainer`` training LoRA adapters (skipped without ``trl`` or ``peft``).

The tiny offline float64 Llama of ``tests/trl_two_process_worker.py`` is trained for 2 CPU steps with a peft
``LoraConfig`` passed as ``peft_config``, with TRL's gradient checkpointing on (TRL 1.16's default; TRL then calls
PEFT's ``enable_input_require_grads``, which makes the frozen input embedding's output a leaf requiring grad) and off.
Training must finish with no measurement disabled, and for every measured group of both steps:

* the callback's Gram equals G G^T of the per-rollout gradients g_i = d l_i / d(adapter parameters), computed here
  with ``torch.autograd.grad`` one rollout at a time (the rollout alone, no padding, l_i = the mean completion-token
  log-probability written out below, not the engine's loss code) on a freshly built PEFT model holding the weights
  the step started from; the logged rank metrics equal those of that Gram;
* the frozen base parameters get no entries: the engine's per-parameter Grams are exactly the adapter parameters,
  the per-layer spectra count the adapter matrices only, the snapshots hold only them.

Planted against: a Gram that also counts one frozen base weight, and one at the weights after the step, are both
detected (relative difference > 1e-4); with the engine's differentiation to foreign leaves removed, the
checkpointing run has its gram unit disabled ("found no graph root") and this test fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

trl = pytest.importorskip("trl")
peft = pytest.importorskip("peft")

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from grpo_verify import rank  # noqa: E402
from grpo_verify.gram import relative_error, rollout_gram  # noqa: E402
from grpo_verify.trl_callback import (GRAM_METRICS, GRPOVerifyCallback, GRPOVerifyConfig,  # noqa: E402
                                      UnsupportedSetting, refusal)

sys.path.insert(0, str(Path(__file__).parent))
from support import per_rollout_gram  # noqa: E402
from trl_two_process_worker import PROMPTS, WeightRecorder, offline_tiny_model, reward  # noqa: E402

P = "grpo_verify/"
TOL = 1e-6  # the callback's default relative tolerance of the tolerance rank
ADAPTED = ("q_proj", "v_proj", "down_proj")


def lora_config():
    return peft.LoraConfig(r=2, lora_alpha=4, target_modules=list(ADAPTED), lora_dropout=0.0, bias="none",
                           task_type="CAUSAL_LM")


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    yield from offline_tiny_model(tmp_path_factory.mktemp("trl_lora"))


def _lora_trainer(offline, name, gradient_checkpointing, steps=2):
    root, model_dir = offline
    args = trl.GRPOConfig(
        output_dir=str(root / name), report_to=[], use_cpu=True, bf16=False, fp16=False,
        per_device_train_batch_size=16, num_generations=4, max_completion_length=6, learning_rate=5e-2,
        max_steps=steps, logging_steps=1, save_strategy="no", loss_type="grpo",
        model_init_kwargs={"dtype": torch.float64}, seed=0, disable_dropout=True, max_grad_norm=0.0,
        dataloader_num_workers=0, gradient_checkpointing=gradient_checkpointing)
    return trl.GRPOTrainer(model=str(model_dir), reward_funcs=reward, args=args,
                           train_dataset=Dataset.from_dict({"prompt": PROMPTS * 8}),
                           processing_class=AutoTokenizer.from_pretrained(model_dir), peft_config=lora_config())


def _fresh_peft_model(model_dir, state):
    """A PEFT model built here (not the trainer's), holding ``state``'s weights; only the adapters are trainable."""
    model = peft.get_peft_model(AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64), lora_config())
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(state[name])
    return model.eval()


def _full_k(entry, K):
    full = np.zeros((len(entry["advantages"]),) * 2)
    full[np.ix_(entry["kept"], entry["kept"])] = K.numpy()
    return full


def _rel(a, b):
    return relative_error(torch.as_tensor(a), torch.as_tensor(b))


@pytest.mark.parametrize("gradient_checkpointing", [True, False], ids=["checkpointing", "no_checkpointing"])
def test_lora_gram_matches_per_rollout_autograd_over_the_adapters(offline, gradient_checkpointing):
    _, model_dir = offline
    trainer = _lora_trainer(offline, f"lora_gc{int(gradient_checkpointing)}", gradient_checkpointing)
    model = trainer.accelerator.unwrap_model(trainer.model)
    assert isinstance(model, peft.PeftModel)
    assert trainer.args.gradient_checkpointing == gradient_checkpointing
    assert refusal(trainer, GRPOVerifyConfig()) is None  # LoRA is accepted, with and without checkpointing
    adapters = sorted(n for n, p in model.named_parameters() if p.requires_grad)
    assert adapters and all(".lora_A." in n or ".lora_B." in n for n in adapters)
    assert len(adapters) == 2 * len(ADAPTED)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(groups=None))
    recorder = WeightRecorder(model)
    trainer.add_callback(recorder)
    trainer.train()
    assert trainer.state.global_step == 2
    assert callback.disabled == {}, callback.disabled  # no unit failed ("found no graph root" before the fix)
    assert [r["step"] for r in callback.records] == [1, 2]
    for frozen in ("base_model.model.lm_head.weight",
                   "base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight"):
        assert not model.get_parameter(frozen).requires_grad
    adapter_values = sum(p.numel() for n, p in model.named_parameters() if p.requires_grad)
    for record in callback.records:
        step, logged = record["step"], record["logged"]
        assert logged[P + "groups/measured"] == len(record["groups"]) == 4
        at_start = _fresh_peft_model(model_dir, recorder.begin[step])
        at_end = _fresh_peft_model(model_dir, recorder.end[step])
        frozen_copy = at_start.get_parameter("base_model.model.lm_head.weight")
        means = []
        for entry in record["groups"]:
            K = np.asarray(entry["K"])
            direct = per_rollout_gram(at_start, entry)
            assert np.abs(direct).max() > 0
            assert _rel(K, direct) < 1e-6, (step, entry["group"], _rel(K, direct))
            # planted: a frozen base weight counted in theta, and the weights after the step, are both detected
            frozen_copy.requires_grad_(True)
            try:
                with_frozen = per_rollout_gram(at_start, entry)  # the adapters and one frozen base weight
            finally:
                frozen_copy.requires_grad_(False)
            assert _rel(with_frozen, direct) > 1e-4
            assert _rel(per_rollout_gram(at_end, entry), direct) > 1e-4
            m = rank.rank_metrics_from_gram(direct, TOL).as_dict()
            for metric in GRAM_METRICS:
                assert entry["gram"][metric] == pytest.approx(m[metric], rel=1e-6, abs=1e-9)
            means.append([m[k] for k in GRAM_METRICS])
        for metric, value in zip(GRAM_METRICS, np.mean(means, axis=0)):
            assert logged[f"{P}gram/{metric}"] == pytest.approx(value, rel=1e-6, abs=1e-9)
        # the frozen base has no entries: per-layer spectra over the adapter matrices only (at step 1 lora_B = 0, so
        # every lora_A gradient is exactly 0 and has no spectrum), snapshots of the adapters only (two float64 copies)
        expected = len(ADAPTED) if step == 1 else len(adapters)
        assert len(record["layers"]["stable_rank"]) == len(record["step_grad/layers"]["stable_rank"]) == expected
        assert logged[P + "memory/snapshot_mib"] == pytest.approx(2 * adapter_values * 8 / 2**20)
    # the engine itself, on the trainer's model (enable_input_require_grads still installed under checkpointing):
    # one Gram per adapter parameter, none for a frozen one
    entry = callback.records[-1]["groups"][0]
    ids, mask = torch.tensor(entry["input_ids"]), torch.tensor(entry["attention_mask"])
    with torch.enable_grad():  # PEFT's enable_input_require_grads is installed exactly when TRL checkpoints
        assert model.get_input_embeddings()(ids).requires_grad == gradient_checkpointing
    model.eval()
    result = rollout_gram(model, ids, mask, entry["completion_start"], "mean")
    model.train()
    assert sorted(result.per_parameter) == adapters
    final = {n: p.detach().clone() for n, p in model.named_parameters()}
    assert _rel(_full_k(entry, result.K), per_rollout_gram(_fresh_peft_model(model_dir, final), entry)) < 1e-6
    assert all(p.requires_grad for n, p in model.named_parameters() if n in adapters)  # restored after the pass


def test_a_lora_variant_is_refused_before_any_step(offline):
    """DoRA (``use_dora=True``) wraps the adapters in its own forward (magnitude and a detached weight norm), which
    the Gram engine was not checked on: refused at on_train_begin, one line, no step taken; accepted with the engine
    metrics off."""
    root, model_dir = offline
    args = trl.GRPOConfig(
        output_dir=str(root / "dora"), report_to=[], use_cpu=True, bf16=False, fp16=False,
        per_device_train_batch_size=16, num_generations=4, max_completion_length=6, max_steps=1, save_strategy="no",
        loss_type="grpo", model_init_kwargs={"dtype": torch.float64}, seed=0, dataloader_num_workers=0)
    dora = peft.LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj"], lora_dropout=0.0, use_dora=True,
                           task_type="CAUSAL_LM")
    trainer = trl.GRPOTrainer(model=str(model_dir), reward_funcs=reward, args=args,
                              train_dataset=Dataset.from_dict({"prompt": PROMPTS * 8}),
                              processing_class=AutoTokenizer.from_pretrained(model_dir), peft_config=dora)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig())
    with pytest.raises(UnsupportedSetting, match=r"^grpo_verify: a PEFT LoRA layer .*q_proj with a LoRA variant "
                                                 r"\(DoraLinearVariant.*not modelled; set gram=False") as info:
        trainer.train()
    assert "\n" not in str(info.value) and trainer.state.global_step == 0 and not callback.records
    off = GRPOVerifyConfig(gram=False, layer_spectra=False, sparsity=False)
    assert refusal(trainer, off) is None
