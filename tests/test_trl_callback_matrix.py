"""The configuration matrix of ``GRPOVerifyCallback``: every setting TRL 1.16 offers is measured correctly or refused.

Each cell is a real tiny ``trl.GRPOTrainer`` (the offline float64 Llama of ``tests/trl_two_process_worker.py``, 8 rows
a micro-batch, 4 generations, 2 optimizer steps). A cell is one of:

* **measured**: the callback accepts it (``refusal`` is None), training runs with no unit disabled, and for every
  group of every measured step the logged Gram equals G G^T of the per-rollout gradients computed here with
  ``torch.autograd.grad`` one rollout at a time (``support.per_rollout_gram``: the rollout alone, its log-probability
  written out, not the engine's or TRL's code) at the weights the step started from, with the loss type's token
  weights (mean for grpo, sum for the others); the zero-advantage fraction equals TRL's ``frac_reward_zero_std``
  where TRL's flag is per group (``scale_rewards`` "group" / "none"), and counts the groups with constant rewards
  otherwise;
* **refused: <rule>**: ``refusal`` names that rule of ``REFUSALS`` in one line starting "grpo_verify: " (training
  would raise it at ``on_train_begin``; ``test_trl_callback_refusals.py`` checks that no step is taken).

The other cells of the matrix live next to their own checks: LoRA with and without gradient checkpointing in
``test_trl_callback_lora.py`` (against per-rollout autograd over the adapters, the same ``per_rollout_gram``),
RLOOTrainer and the settings only a GPU or several processes can build (vLLM, DeepSpeed) in
``test_trl_callback_refusals.py``, two processes in ``test_trl_callback.py``.

The Gram is of the exact score vectors at the step's weights: with bf16 autocast it is computed without autocast
(the callback's pass runs outside TRL's loss), so it is the full-precision Gram, not one rounded like TRL's bf16
matmuls. The KL term (beta > 0) is outside the policy-gradient Gram by definition.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

trl = pytest.importorskip("trl")

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")

import torch  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

from grpo_verify.gram import relative_error  # noqa: E402
from grpo_verify.trl_callback import REFUSALS, GRPOVerifyCallback, GRPOVerifyConfig, refusal  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from support import per_rollout_gram  # noqa: E402
from trl_two_process_worker import WeightRecorder, make_trainer, offline_tiny_model  # noqa: E402

P = "grpo_verify/"
MEAN_LOSSES = {"grpo", "sapo"}

# (cell id, make_trainer kwargs, expected: "measured" or the refusing rule's name)
CELLS = [
    ("grpo", {}, "measured"),
    ("dr_grpo", dict(loss_type="dr_grpo"), "measured"),
    ("dapo", dict(loss_type="dapo"), "measured"),
    ("bnpo_one_micro_batch", dict(loss_type="bnpo"), "measured"),
    ("bnpo_accumulation", dict(loss_type="bnpo", batch_size=8, gradient_accumulation_steps=2), "bnpo_divisor"),
    ("scale_rewards_batch", dict(scale_rewards="batch"), "measured"),
    ("scale_rewards_none", dict(scale_rewards="none"), "measured"),
    ("accumulation_2", dict(batch_size=8, gradient_accumulation_steps=2), "measured"),
    ("accumulation_2_dapo_batch_scale", dict(batch_size=8, gradient_accumulation_steps=2, loss_type="dapo",
                                             scale_rewards="batch"), "measured"),
    ("steps_per_generation_2", dict(steps_per_generation=2), "generation_spans_steps"),
    ("steps_per_generation_below_accumulation", dict(batch_size=8, gradient_accumulation_steps=2,
                                                     steps_per_generation=1), "step_spans_generations"),
    ("num_iterations_2", dict(num_iterations=2), "num_iterations"),
    ("beta_0.1", dict(beta=0.1), "measured"),
    ("beta_0.1_dr_grpo", dict(beta=0.1, loss_type="dr_grpo"), "measured"),
    ("top_entropy_quantile_0.5", dict(top_entropy_quantile=0.5), "entropy_mask"),
    ("multi_objective_sum_then_normalize", dict(multi_objective_aggregation="sum_then_normalize"), "measured"),
    ("multi_objective_normalize_then_sum", dict(multi_objective_aggregation="normalize_then_sum"),
     "multi_objective_aggregation"),
    ("bf16_autocast", dict(bf16=True), "measured"),
]
RULES = {rule.name for rule in REFUSALS}


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    yield from offline_tiny_model(tmp_path_factory.mktemp("trl_matrix"))


def test_every_cell_names_a_known_outcome():
    assert all(expected == "measured" or expected in RULES for _, _, expected in CELLS)
    assert len({cell for cell, _, _ in CELLS}) == len(CELLS)


def _model_at(model_dir, state):
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64)
    model.load_state_dict(state)
    return model.eval()


@pytest.mark.parametrize("kwargs,expected", [c[1:] for c in CELLS], ids=[c[0] for c in CELLS])
def test_each_configuration_is_measured_exactly_or_refused(offline, kwargs, expected):
    root, model_dir = offline
    name = "_".join(f"{k}{v}" for k, v in kwargs.items()) or "default"
    trainer = make_trainer(model_dir, root / name, steps=2, **{"batch_size": 8, **kwargs})
    config = GRPOVerifyConfig(groups=None, layer_spectra=False, delta_rank=False)
    error = refusal(trainer, config)
    if expected != "measured":
        fired = {rule.name for rule in REFUSALS if rule.check(trainer, config) is not None}
        assert error is not None and expected in fired, (error, fired)
        assert str(error).startswith("grpo_verify: ") and "\n" not in str(error)
        return
    assert error is None, str(error)
    if kwargs.get("bf16"):
        assert trainer.accelerator.mixed_precision == "bf16"  # TRL's loss really runs under bf16 autocast (CPU)
    callback = GRPOVerifyCallback(trainer, config)
    recorder = WeightRecorder(trainer.accelerator.unwrap_model(trainer.model))
    trainer.add_callback(recorder)
    trainer.train()
    assert trainer.state.global_step == 2 and callback.disabled == {}, callback.disabled
    history = {h["step"]: h for h in trainer.state.log_history if "loss" in h}
    aggregation = "mean" if trainer.loss_type in MEAN_LOSSES else "sum"
    assert callback.aggregation == aggregation
    rows = trainer.args.per_device_train_batch_size * trainer.args.steps_per_generation
    assert [r["step"] for r in callback.records] == [1, 2]
    for record in callback.records:
        step, logged = record["step"], record["logged"]
        assert len(record["groups"]) == rows // trainer.num_generations  # every group of the generation batch
        at_start, at_end = _model_at(model_dir, recorder.begin[step]), _model_at(model_dir, recorder.end[step])
        constant = 0
        for entry in record["groups"]:
            direct = per_rollout_gram(at_start, entry, aggregation)
            K = np.asarray(entry["K"])
            assert np.abs(direct).max() > 0
            assert relative_error(torch.tensor(K), torch.tensor(direct)) < 1e-9, (step, entry["group"])
            # planted: the Gram at the step's end weights, and with the other token weighting, are both detected
            assert relative_error(torch.tensor(per_rollout_gram(at_end, entry, aggregation)),
                                  torch.tensor(direct)) > 1e-4
            other = "sum" if aggregation == "mean" else "mean"
            assert relative_error(torch.tensor(per_rollout_gram(at_start, entry, other)), torch.tensor(direct)) > 1e-2
            constant += not entry["mixed"]
        fraction = logged[P + "zero_adv/group_fraction"]
        assert fraction == pytest.approx(constant / len(record["groups"]), abs=1e-12)
        if trainer.args.scale_rewards in ("group", "none", True, False):
            assert fraction == pytest.approx(history[step]["frac_reward_zero_std"], abs=1e-12)
