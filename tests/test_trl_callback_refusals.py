"""``GRPOVerifyCallback``: what it refuses (``REFUSALS``), how it fails soft, and the keys explaining a missing metric.

Every check here is planted against: each refusal test builds a real ``trl.GRPOTrainer`` with the setting (or, where
this machine cannot build one, sets the trainer attribute TRL reads) and fails if the rule is deleted; each fail-soft
test makes one measurement raise inside a real training run and fails if the guard is deleted (the exception then
stops training).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

trl = pytest.importorskip("trl")

pytestmark = pytest.mark.filterwarnings("ignore:.*gradient_checkpointing.* is deprecated:FutureWarning",
                                        "ignore::FutureWarning", "ignore::UserWarning")

import torch  # noqa: E402
from transformers import TrainerCallback  # noqa: E402

import grpo_verify.trl_callback as tc  # noqa: E402
from grpo_verify.trl_callback import (REFUSALS, TRL_CHECKED, GRPOVerifyCallback, GRPOVerifyConfig,  # noqa: E402
                                      UnsupportedSetting, refusal)

sys.path.insert(0, str(Path(__file__).parent))
import trl_two_process_worker as worker  # noqa: E402
from trl_two_process_worker import make_trainer, offline_tiny_model  # noqa: E402

P = "grpo_verify/"
WRAPPED = ("_generate_and_score_completions", "_calculate_rewards")
NO_ENGINE = {"gram": False, "layer_spectra": False, "sparsity": False}


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    yield from offline_tiny_model(tmp_path_factory.mktemp("trl_refusals"))


def _trainer(offline, name, **kwargs):
    root, model_dir = offline
    return make_trainer(model_dir, root / name, **kwargs)


def _unwrapped(trainer) -> bool:
    """TRL's own methods are back: no instance attribute shadows the class's."""
    return not any(name in vars(trainer) for name in WRAPPED) and all(
        getattr(trainer, name).__func__ is getattr(trl.GRPOTrainer, name) for name in WRAPPED)


def _refused_at_train(trainer, config, match):
    """train() raises the one-line refusal at on_train_begin: no step, no wrapper left."""
    callback = GRPOVerifyCallback(trainer, config)
    with pytest.raises(UnsupportedSetting, match=match) as info:
        trainer.train()
    message = str(info.value)
    assert message.startswith("grpo_verify: ") and "\n" not in message
    assert trainer.state.global_step == 0 and _unwrapped(trainer) and not callback.records
    return callback


# -- refusals -----------------------------------------------------------------------------------------------------
# (trainer kwargs, the rule, what the message must say); each a setting TRL 1.16 accepts
REAL = [
    (dict(steps_per_generation=2), "generation_spans_steps",
     r"steps_per_generation=2 > gradient_accumulation_steps=1: a generation batch spans 2 optimizer steps"),
    (dict(batch_size=8, gradient_accumulation_steps=2, steps_per_generation=1), "step_spans_generations",
     r"steps_per_generation=1 < gradient_accumulation_steps=2"),
    (dict(num_iterations=2), "num_iterations", r"num_iterations=2 > 1"),
    (dict(batch_size=8, gradient_accumulation_steps=2, loss_type="bnpo"), "bnpo_divisor",
     r"loss_type='bnpo' with gradient_accumulation_steps=2.*own token count"),
    (dict(top_entropy_quantile=0.5), "entropy_mask", r"top_entropy_quantile=0.5 < 1"),
    (dict(multi_objective_aggregation="normalize_then_sum"), "multi_objective_aggregation",
     r"multi_objective_aggregation='normalize_then_sum'"),
    (dict(loss_type="vespo"), "loss_type", r"loss_type='vespo': no on-policy token weighting"),
    (dict(off_policy_mask_threshold=-0.1), "off_policy_mask", r"off_policy_mask_threshold=-0.1 \(a negative"),
    (dict(delta=0.5), "two_sided_delta", r"delta=0.5 < 1"),
]


@pytest.mark.parametrize("kwargs,rule,match", REAL, ids=[r[1] for r in REAL])
def test_a_setting_not_modelled_is_refused_before_any_step(offline, kwargs, rule, match):
    trainer = _trainer(offline, f"refuse_{rule}", steps=1, **kwargs)
    _refused_at_train(trainer, GRPOVerifyConfig(), match)
    names = {r.name: r for r in REFUSALS}
    assert names[rule].check(trainer, GRPOVerifyConfig()) is not None  # this rule, not another, fires
    if names[rule].metrics:  # an engine-only setting: accepted once the engine metrics are off
        assert refusal(trainer, GRPOVerifyConfig(**NO_ENGINE)) is None
        assert "; set gram=False, layer_spectra=False, sparsity=False in GRPOVerifyConfig" in str(
            refusal(trainer, GRPOVerifyConfig()))


def test_settings_set_on_the_trainer_are_refused(offline, monkeypatch):
    """What this machine cannot build (vLLM, PEFT, several processes, DeepSpeed) is set where TRL reads it."""
    trainer = _trainer(offline, "refuse_attributes", steps=1)
    config = GRPOVerifyConfig()
    assert refusal(trainer, config) is None  # the plain trainer is accepted
    cases = [
        ({"use_vllm": True, "vllm_importance_sampling_correction": True}, r"vllm_importance_sampling_correction"),
        ({"use_vllm": True, "off_policy_mask_threshold": 0.5, "vllm_importance_sampling_correction": False},
         r"off_policy_mask_threshold=0.5 \(with use_vllm"),
        ({"loss_type": "cispo", "epsilon_high": 0.5}, r"cispo.*epsilon_high=0.5 < 1"),
    ]
    for attributes, match in cases:
        saved = {k: getattr(trainer, k) for k in attributes}
        for k, v in attributes.items():
            setattr(trainer, k, v)
        try:
            with pytest.raises(UnsupportedSetting, match=match):
                raise refusal(trainer, config)
            assert refusal(trainer, GRPOVerifyConfig(**NO_ENGINE)) is None
        finally:
            for k, v in saved.items():
                setattr(trainer, k, v)
    # a PEFT tuner other than LoRA (here IA3, set where the rule reads it): refused, then train(); LoRA on Linear
    # layers, with and without gradient checkpointing, is measured (tests/test_trl_callback_lora.py, which also
    # builds a real DoRA trainer and checks it is refused)
    model = trainer.accelerator.unwrap_model(trainer.model)
    assert trainer.args.gradient_checkpointing
    model.peft_config = {"default": SimpleNamespace(peft_type="IA3")}
    try:
        _refused_at_train(trainer, config, r"PEFT model with peft_type=IA3 \(adapter 'default'\): only LoRA on "
                          r"Linear layers")
        assert refusal(trainer, GRPOVerifyConfig(**NO_ENGINE)) is None
    finally:
        del model.peft_config
    # bnpo across processes (each divides by its own token count), DeepSpeed ZeRO-2 (p.grad is not the step's)
    fake = SimpleNamespace(loss_type="bnpo", accelerator=SimpleNamespace(num_processes=2),
                           args=SimpleNamespace(steps_per_generation=1, gradient_accumulation_steps=1))
    assert "2 process(es)" in tc._rule_bnpo_divisor(fake, config)
    fake.accelerator.num_processes = 1
    assert tc._rule_bnpo_divisor(fake, config) is None  # one process, one micro-batch: one divisor, exact
    monkeypatch.setattr(trainer, "is_deepspeed_enabled", True, raising=False)
    monkeypatch.setattr(type(trainer.accelerator.state), "deepspeed_plugin",
                        property(lambda self: SimpleNamespace(zero_stage=2)))
    with pytest.raises(RuntimeError, match=r"under DeepSpeed ZeRO-2 p.grad.*set step_gradient=False"):
        raise refusal(trainer, config)
    assert refusal(trainer, GRPOVerifyConfig(step_gradient=False)) is None  # ZeRO-1/2: full parameters


def test_the_trl_version_is_pinned(offline, monkeypatch):
    trainer = _trainer(offline, "version", steps=1)
    real = trl.__version__
    lo, hi = TRL_CHECKED
    from packaging.version import Version

    assert Version(lo) <= Version(real) < Version(hi)
    assert refusal(trainer, GRPOVerifyConfig()) is None  # the version the hooks were checked on
    for version in ("1.17.0", "1.15.2", "2.0.0.dev0"):
        monkeypatch.setattr(trl, "__version__", version)
        assert str(refusal(trainer, GRPOVerifyConfig())).startswith(f"grpo_verify: TRL {version} is outside")
    monkeypatch.setattr(trl, "__version__", "1.17.0")
    _refused_at_train(trainer, GRPOVerifyConfig(), r"TRL 1.17.0 is outside the checked range >=1.16.0,<1.17.0")


def test_a_trainer_that_is_not_grpo_is_refused(offline):
    """RLOOTrainer has the same private methods and attributes (the old duck-typed check accepted it)."""
    root, model_dir = offline
    from datasets import Dataset
    from transformers import AutoTokenizer

    args = trl.RLOOConfig(output_dir=str(root / "rloo"), report_to=[], use_cpu=True, per_device_train_batch_size=4,
                          num_generations=2, max_completion_length=4, max_steps=1,
                          model_init_kwargs={"dtype": torch.float64})
    rloo = trl.RLOOTrainer(model=str(model_dir), reward_funcs=worker.reward, args=args,
                           train_dataset=Dataset.from_dict({"prompt": worker.PROMPTS}),
                           processing_class=AutoTokenizer.from_pretrained(model_dir))
    assert all(hasattr(rloo, a) for a in (*WRAPPED, "_metrics", "num_generations"))
    with pytest.raises(UnsupportedSetting, match=r"^grpo_verify: .*RLOOTrainer is not a trl.GRPOTrainer") as info:
        GRPOVerifyCallback(rloo)
    assert isinstance(info.value, TypeError) and "\n" not in str(info.value)


def test_scale_rewards_batch_is_exact_not_refused(offline):
    """TRL's frac_reward_zero_std is batch-wide under scale_rewards="batch"; the advantages are still zero exactly on
    the groups with constant rewards, which is what zero_adv/group_fraction counts, so it is accepted."""
    trainer = _trainer(offline, "scale_batch", steps=1, scale_rewards="batch")
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(**NO_ENGINE, step_gradient=False, delta_rank=False))
    trainer.train()
    logged = callback.logged[1]
    assert logged[P + "zero_adv/group_fraction"] == logged[P + "zero_adv/exact_fraction"]
    assert len(callback.records[0]["constant_groups"]) / 4 == logged[P + "zero_adv/group_fraction"]


# -- fail soft ----------------------------------------------------------------------------------------------------
def _raise(*args, **kwargs):
    raise RuntimeError("planted")


# unit -> (what is patched to raise, the key prefixes the unit owns)
PLANTS = {
    "gram": ((tc, "rollout_gram"), ("gram/", "gram_weighted/", "layers/", "sparsity/", "groups/")),
    "zero_adv": ((GRPOVerifyCallback, "_zero_advantage"), ("zero_adv/",)),
    "step_grad": ((GRPOVerifyCallback, "_step_gradient"), ("step_grad/",)),
    "update": ((GRPOVerifyCallback, "_update_metrics"), ("update/",)),
    "update_snapshot": ((GRPOVerifyCallback, "_snapshot"), ("update/",)),  # fails in on_train_begin already
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_failing_measurement_warns_once_disables_it_and_training_completes(offline, monkeypatch, plant):
    (owner, attribute), prefixes = PLANTS[plant]
    unit = plant.split("_snapshot")[0]
    monkeypatch.setattr(owner, attribute, _raise)
    trainer = _trainer(offline, f"fail_{plant}", steps=2)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.train()
    ours = [str(w.message) for w in caught if str(w.message).startswith("grpo_verify:")]
    assert len(ours) == 1 and f"the {unit} measurement failed" in ours[0] and "planted" in ours[0], ours
    assert trainer.state.global_step == 2 and _unwrapped(trainer)
    assert callback.disabled == {unit: "RuntimeError: planted"}
    history = {h["step"]: h for h in trainer.state.log_history if "loss" in h}
    for step in (1, 2):
        logged = callback.logged[step]
        assert logged[P + f"{unit}/disabled"] == 1.0 and history[step][P + f"{unit}/disabled"] == 1.0
        own = [k for k in logged if k[len(P):].startswith(prefixes) and not k.endswith("/disabled")]
        assert not own, own  # nothing half-written survives
        # the other units still measure
        for other in ("zero_adv/exact_fraction", "gram/effective_rank", "step_grad/sparsity/exact_zero",
                      "update/unchanged_step/bf16"):
            if not other.startswith(prefixes):
                assert P + other in logged, (other, sorted(logged))


class _Crash(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        raise RuntimeError("planted crash")


def test_the_wrappers_are_removed_when_training_raises(offline):
    """transformers does not call on_train_end when training raises; the train() wrapper's finally does the work."""
    trainer = _trainer(offline, "crash", steps=2)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(**NO_ENGINE))
    trainer.add_callback(_Crash())
    with pytest.raises(RuntimeError, match="planted crash"):
        trainer.train()
    assert trainer.state.global_step == 1 and callback.logged[1]  # the wrappers were in and measured
    assert _unwrapped(trainer)
    callback.detach()
    assert "train" not in vars(trainer) and callback not in trainer.callback_handler.callbacks


def test_a_second_train_does_not_stack_wrappers(offline):
    trainer = _trainer(offline, "twice", steps=1)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(**NO_ENGINE, step_gradient=False))
    # planted: on_train_begin twice without on_train_end between (the wrappers would wrap the wrappers)
    callback.on_train_begin(trainer.args, trainer.state, trainer.control)
    callback.on_train_begin(trainer.args, trainer.state, trainer.control)
    callback.on_train_end(trainer.args, trainer.state, trainer.control)
    assert _unwrapped(trainer)
    trainer.train()
    trainer.args.max_steps = 2
    trainer.train()
    assert sorted(callback.logged) == [1, 2] and _unwrapped(trainer)


def test_half_written_keys_of_a_failed_unit_are_dropped(offline, monkeypatch):
    """_quantile_keys fails after the engine's sparsity/* and step_grad/sparsity/* keys were written: those go too,
    each unit that used it (engine, step gradient, update rank) is disabled with its own single warning."""
    monkeypatch.setattr(tc, "_quantile_keys", _raise)
    trainer = _trainer(offline, "half_written", steps=1)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.train()
    ours = sorted(str(w.message).split(" measurement")[0] for w in caught
                  if str(w.message).startswith("grpo_verify:"))
    assert ours == ["grpo_verify: the gram", "grpo_verify: the step_grad", "grpo_verify: the update"]
    logged = callback.logged[1]
    for prefix in ("sparsity/", "step_grad/sparsity/", "gram/", "update/unchanged"):
        assert not any(k.startswith(P + prefix) and not k.endswith("/disabled") for k in logged), prefix
    assert logged[P + "gram/disabled"] == logged[P + "step_grad/disabled"] == logged[P + "update/disabled"] == 1
    assert logged[P + "zero_adv/exact_fraction"] >= 0


def test_the_other_skip_reasons(offline):
    """No reward matrix captured, no completion token in any measured group, no .grad: each missing metric is
    explained by its <metric>/skipped key (called on a real, untrained trainer)."""
    trainer = _trainer(offline, "skips", steps=1)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(groups=None))
    callback.aggregation = "mean"
    rows, R = 8, trainer.num_generations
    output = {"advantages": torch.tensor([1.0, -1.0] * (rows // 2)), "prompt_ids": torch.full((rows, 2), 3),
              "prompt_mask": torch.ones(rows, 2, dtype=torch.long), "completion_ids": torch.zeros(rows, 3,
                                                                                               dtype=torch.long),
              "completion_mask": torch.zeros(rows, 3, dtype=torch.long)}
    callback._pending, callback._record, callback._rewards = {}, {}, None
    callback._spectral = True  # a measured step with the spectra (on_step_begin sets it)
    callback._measure_batch(output)
    assert callback._pending["zero_adv/group_fraction/skipped"] == 1.0
    assert "zero_adv/group_fraction" not in callback._pending
    assert callback._pending["gram/skipped"] == 1.0 and not any(k.startswith("gram/e") for k in callback._pending)
    assert callback._pending["layers/skipped"] == callback._pending["sparsity/skipped"] == 1.0
    assert callback._record["groups_total"] == rows // R and not callback.disabled
    callback._pending, callback._record = {}, {}
    with pytest.warns(RuntimeWarning, match="no parameter has .grad"):
        callback._step_gradient()  # before any backward: no parameter has .grad
    assert callback._pending == {"step_grad/layers/skipped": 1.0, "step_grad/sparsity/skipped": 1.0}


# -- missing metrics explain themselves ---------------------------------------------------------------------------
def test_constant_rewards_log_skipped_keys(offline, monkeypatch):
    """Every group constant (all advantages 0): the weighted Gram, the GRPO gradient's spectra and sparsity and the
    step gradient's are absent, each with a <metric>/skipped key, and the reason in the step's record."""
    monkeypatch.setattr(worker, "reward", lambda prompts, completions, completion_ids, **kw: [1.0] * len(prompts))
    trainer = _trainer(offline, "constant", steps=1)
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(groups=2))
    trainer.train()
    logged = callback.logged[1]
    assert logged[P + "zero_adv/group_fraction"] == 1.0
    assert logged[P + "gram/effective_rank"] > 0  # the Gram itself needs no advantage
    assert logged[P + "gram_weighted/skipped"] == 2  # both measured groups
    for metric in ("layers", "sparsity", "step_grad/layers", "step_grad/sparsity"):
        assert logged[P + f"{metric}/skipped"] == 1.0, metric
        assert not any(k.startswith(P + metric + "/") and not k.endswith("/skipped") for k in logged), metric
        assert "advantages" in callback.records[0]["skipped"][metric]
    assert not any(k.startswith(P + "gram_weighted/") and not k.endswith("/skipped") for k in logged)
    assert "constant rewards" in callback.records[0]["skipped"]["gram_weighted"]
