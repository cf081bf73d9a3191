"""``GRPOVerifyCallback`` behaviours no other test pins down, each against an independent reference.

* the sampling temperature divides the logits of the measured policy (per-rollout autograd with logits / T);
* ``relative_tolerance`` reaches the Gram's and the update's tolerance ranks (``grpo_verify.rank`` on the recorded
  matrices, SVD of W - W_start);
* ``prefer_mixed`` measures the mixed-reward groups first, and "mixed" is TRL's reward-std criterion (weighted total,
  unscorable rows excluded), not exact-zero advantages;
* ``seconds`` is the slowest process's; the schedule of ``every`` / ``spectra_every``; ``prefix``; ``max_records``;
  ``sparsity_thresholds``; the Gram of a group with a rollout without completion tokens; the rows of a process's groups
  with several processes (a fake two-process accelerator).

Every test was checked to fail on a planted one-line bug in ``grpo_verify/trl_callback.py`` (named in its docstring).
Runs are one or two steps of the offline float64 tiny Llama of ``tests/trl_two_process_worker.py``; the constructed
batches are fed to ``_measure_batch`` of a callback on a real, untrained trainer.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

trl = pytest.importorskip("trl")

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")

import torch  # noqa: E402
from torch import nn  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

from grpo_verify import rank  # noqa: E402
from grpo_verify.gram import relative_error  # noqa: E402
from grpo_verify.trl_callback import GRAM_METRICS, GRPOVerifyCallback, GRPOVerifyConfig  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import trl_two_process_worker as worker  # noqa: E402
from support import per_rollout_gram  # noqa: E402
from trl_two_process_worker import WeightRecorder, make_trainer, offline_tiny_model  # noqa: E402

P = "grpo_verify/"
CHEAP = dict(layer_spectra=False, sparsity=False, step_gradient=False, update_step=False, update_since_start=False,
             delta_rank=False)


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    yield from offline_tiny_model(tmp_path_factory.mktemp("trl_behaviours"))


def _model_at(model_dir, state):
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64)
    model.load_state_dict(state)
    return model.eval()


def _train(offline, name, config, **kwargs):
    root, model_dir = offline
    trainer = make_trainer(model_dir, root / name, **{"steps": 1, "batch_size": 8, **kwargs})
    callback = GRPOVerifyCallback(trainer, config)
    recorder = WeightRecorder(trainer.accelerator.unwrap_model(trainer.model))
    trainer.add_callback(recorder)
    trainer.train()
    assert callback.disabled == {}, callback.disabled
    history = {h["step"]: h for h in trainer.state.log_history if "loss" in h}
    return trainer, callback, recorder, history


class _Divided(nn.Module):
    """The test's own tempered policy: logits / T (not the callback's wrapper)."""

    def __init__(self, model, temperature):
        super().__init__()
        self.inner, self.temperature = model, temperature

    def forward(self, **kwargs):
        return SimpleNamespace(logits=self.inner(**kwargs).logits / self.temperature)


def _spectra(grads, tol=1e-6):
    out = {"stable_rank": [], "effective_rank": []}
    for name in sorted(grads):
        if grads[name].ndim == 2:
            m = rank.rank_metrics(torch.linalg.svdvals(grads[name].double()).numpy(), tol)
            out["stable_rank"].append(m.stable_rank)
            out["effective_rank"].append(m.effective_rank)
    return {k: np.quantile(v, [0.5, 0.25, 0.75]) for k, v in out.items()}


def _coordinate_sparsity(flat, thresholds):
    flat = flat.reshape(-1).double().abs()
    top = float(flat.max())
    out = {"exact_zero": float((flat == 0).double().mean())}
    for tau in thresholds:
        out[f"le_{tau:g}_max"] = float((flat <= tau * top).double().mean())
    return out


# -- 1. temperature ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tempered(offline):
    config = GRPOVerifyConfig(groups=None, sparsity_thresholds=(0.5, 1e-3), update_step=False,
                              update_since_start=False, delta_rank=False)
    return _train(offline, "tempered", config, temperature=0.7)


def test_the_sampling_temperature_divides_the_logits_of_the_measured_gram(offline, tempered):
    """Planted: ``out.logits = out.logits`` in ``_Tempered.forward`` (or ``policy = model``): the recorded K is then
    the temperature-1 Gram and differs from per-rollout autograd of log_softmax(logits / 0.7)."""
    trainer, callback, recorder, history = tempered
    _, model_dir = offline
    assert trainer.temperature == 0.7
    model = _model_at(model_dir, recorder.begin[1])
    record = callback.records[0]
    means = []
    assert len(record["groups"]) == 2
    for entry in record["groups"]:
        K = np.asarray(entry["K"])
        direct = per_rollout_gram(_Divided(model, 0.7), entry, "mean")
        untempered = per_rollout_gram(model, entry, "mean")
        assert relative_error(torch.tensor(untempered), torch.tensor(direct)) > 1e-2  # the check can tell
        assert relative_error(torch.tensor(K), torch.tensor(direct)) < 1e-9, entry["group"]
        m = rank.rank_metrics_from_gram(direct).as_dict()
        means.append([m[k] for k in GRAM_METRICS])
    for metric, value in zip(GRAM_METRICS, np.mean(means, axis=0)):
        assert record["logged"][P + f"gram/{metric}"] == pytest.approx(value, rel=1e-9)


def test_the_tempered_engine_gradient_is_trls_gradient(tempered):
    """The engine's GRPO gradient (groups=None, beta=0, one process) is TRL's, which divides by the temperature: the
    engine's per-layer spectra equal those of TRL's own step gradient. Planted: the division dropped (as above)."""
    _, callback, recorder, _ = tempered
    logged = callback.records[0]["logged"]
    for metric, (median, q25, q75) in _spectra(recorder.grads[1]).items():
        for q, v in (("median", median), ("q25", q25), ("q75", q75)):
            assert logged[P + f"layers/{metric}/{q}"] == pytest.approx(v, rel=1e-6), (metric, q)


def test_sparsity_thresholds_reach_both_sparsity_metrics(tempered):
    """``sparsity_thresholds=(0.5, 1e-3)``: exactly those keys, with TRL's step gradient's fractions. Planted:
    ``sparsity(list(grads.values()), (1e-6, 1e-4, 1e-2))`` in ``_gradient_metrics``."""
    _, callback, recorder, _ = tempered
    logged = callback.records[0]["logged"]
    grads = recorder.grads[1]
    flat = torch.cat([g.reshape(-1) for g in grads.values()])
    direct = _coordinate_sparsity(flat, (0.5, 1e-3))
    for where in ("step_grad/sparsity/", "sparsity/"):
        keys = {k[len(P + where):] for k in logged if k.startswith(P + where)}
        assert keys == set(direct), (where, keys)
        for key, value in direct.items():
            assert logged[P + where + key] == pytest.approx(value, abs=3 / flat.numel()), (where, key)


# -- 2. relative tolerance, prefix, max_records -------------------------------------------------------------------
TOL = 0.9


@pytest.fixture(scope="module")
def tolerant(offline):
    config = GRPOVerifyConfig(groups=None, relative_tolerance=TOL, layer_spectra=False, sparsity=False,
                              step_gradient=False, prefix="rl/", max_records=1)
    return _train(offline, "tolerant", config, steps=2)


def test_relative_tolerance_reaches_the_gram_tolerance_rank(tolerant):
    """gram/tolerance_rank (and gram_weighted/) with relative_tolerance=0.9 is rank_metrics_from_gram(K, 0.9) of the
    recorded matrices, which differs from the default tolerance's. Planted: ``rank.DEFAULT_RELATIVE_TOLERANCE`` in
    place of ``tol`` in ``_engine_metrics``."""
    _, callback, _, _ = tolerant
    record = callback.records[0]
    ranks, default_ranks, weighted = [], [], []
    for entry in record["groups"]:
        K = np.asarray(entry["K"])
        ranks.append(rank.rank_metrics_from_gram(K, TOL).tolerance_rank)
        default_ranks.append(rank.rank_metrics_from_gram(K).tolerance_rank)
        if entry["mixed"]:
            a = np.asarray(entry["advantages"])
            weighted.append(rank.rank_metrics_from_gram(np.diag(a) @ K @ np.diag(a), TOL).tolerance_rank)
    assert ranks != default_ranks  # the tolerance matters on this batch
    assert record["logged"]["rl/gram/tolerance_rank"] == pytest.approx(np.mean(ranks), abs=1e-12)
    assert [e["gram"]["tolerance_rank"] for e in record["groups"]] == ranks
    assert weighted and record["logged"]["rl/gram_weighted/tolerance_rank"] == pytest.approx(np.mean(weighted))


def test_relative_tolerance_reaches_the_update_rank(offline, tolerant):
    """update/delta_rank_fraction with relative_tolerance=0.9: tolerance rank / min(m, n) of SVD(W_end - W_start) at
    0.9. Planted: ``rank.rank_metrics(sigma)`` (default tolerance) in ``_update_metrics``."""
    _, callback, recorder, _ = tolerant
    logged = callback.records[0]["logged"]
    fractions, default = [], []
    for name, new in recorder.end[1].items():
        if new.ndim == 2:
            sigma = torch.linalg.svdvals((new - recorder.initial[name]).double()).numpy()
            fractions.append(rank.tolerance_rank(sigma, TOL) / min(new.shape))
            default.append(rank.tolerance_rank(sigma) / min(new.shape))
    assert np.quantile(fractions, [0.25, 0.5, 0.75]).tolist() != np.quantile(default, [0.25, 0.5, 0.75]).tolist()
    for q, v in zip(("q25", "median", "q75"), np.quantile(fractions, [0.25, 0.5, 0.75])):
        assert logged[f"rl/update/delta_rank_fraction/{q}"] == pytest.approx(v, abs=1e-12), q


def test_the_prefix_names_every_key_in_the_trainers_log(tolerant):
    """prefix="rl/": the Trainer's own log holds the callback's keys under rl/ and none under grpo_verify/. Planted:
    ``"grpo_verify/" + k`` in place of ``self._key(k)`` in ``on_step_end``."""
    _, callback, _, history = tolerant
    for step in (1, 2):
        ours = {k for k in history[step] if k.startswith("rl/")}
        assert {"rl/zero_adv/group_fraction", "rl/gram/effective_rank", "rl/seconds"} <= ours
        assert not any(k.startswith(P) for k in history[step])
        assert set(callback.logged[step]) == ours


def test_max_records_caps_the_records_not_the_logging(tolerant):
    """max_records=1 over two measured steps: one record (step 1), both steps logged. Planted: ``<=`` for ``<``."""
    _, callback, _, history = tolerant
    assert [r["step"] for r in callback.records] == [1]
    assert sorted(callback.logged) == [1, 2] and "rl/gram/effective_rank" in history[2]


# -- constructed batches on a real, untrained trainer -------------------------------------------------------------
@pytest.fixture
def bare(offline):
    """A callback on an untrained trainer (R = 4), ready for ``_measure_batch`` with a constructed output."""
    root, model_dir = offline

    def build(config, name="bare"):
        trainer = make_trainer(model_dir, root / name, steps=1, batch_size=8)
        callback = GRPOVerifyCallback(trainer, config)
        callback.aggregation = "mean"
        callback._pending, callback._record, callback._rewards = {}, {}, None
        callback._spectral = True
        return trainer, callback
    return build


PROMPT = [5, 6]


def _completions(rows, seed=0, empty=()):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 5, (rows,), generator=g).tolist()
    return [[] if i in empty else torch.randint(3, worker.VOCAB_SIZE, (n,), generator=g).tolist()
            for i, n in enumerate(lengths)]


def _output(completions, advantages, prompt=PROMPT):
    rows, width = len(completions), max(len(c) for c in completions)
    cids = torch.full((rows, width), worker.PAD_ID)
    cmask = torch.zeros(rows, width, dtype=torch.long)
    for i, c in enumerate(completions):
        cids[i, :len(c)] = torch.tensor(c, dtype=torch.long)
        cmask[i, :len(c)] = 1
    return {"advantages": torch.tensor(advantages, dtype=torch.float32),
            "prompt_ids": torch.tensor([prompt] * rows), "prompt_mask": torch.ones(rows, len(prompt), dtype=torch.long),
            "completion_ids": cids, "completion_mask": cmask}


def _direct_rows(model, completions, prompt=PROMPT):
    """G (one row per rollout, 0 for a rollout without completion tokens): d/dθ of the mean completion-token
    log-probability, by autograd on the raw tokens, one rollout at a time."""
    params = [p for p in model.parameters() if p.requires_grad]
    rows = []
    for c in completions:
        if not c:
            rows.append(torch.zeros(sum(p.numel() for p in params), dtype=torch.float64))
            continue
        tokens = torch.tensor([prompt + c])
        logp = torch.log_softmax(model(input_ids=tokens, use_cache=False).logits[0, :-1], dim=-1)
        picked = logp.gather(1, tokens[0, 1:, None])[len(prompt) - 1:, 0]
        grads = torch.autograd.grad(picked.mean(), params, allow_unused=True)
        rows.append(torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1) for g, p in zip(grads, params)]))
    return torch.stack(rows).double()


def _measured_groups(callback):
    return [e["group"] for e in callback._record["groups"]]


# -- 3. prefer_mixed ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("constant_group", [0, 1])
def test_prefer_mixed_measures_the_mixed_group_first(bare, constant_group):
    """Two groups, one with constant rewards (advantages 0), groups=1: prefer_mixed=True measures the mixed one,
    prefer_mixed=False group 0; the measured group's K is the raw-token per-rollout Gram. Planted: the sort removed,
    or its key inverted (``(bool(mixed[g]), g)``)."""
    completions = _completions(8)
    mixed_group = 1 - constant_group
    advantages = [0.0] * 8
    rewards = torch.ones(8, 1)
    for i, (r, a) in enumerate(zip([0.0, 1.0, 0.0, 1.0], [-1.0, 1.0, -1.0, 1.0])):
        rewards[4 * mixed_group + i, 0], advantages[4 * mixed_group + i] = r, a
    for prefer, expected in ((True, mixed_group), (False, 0)):
        trainer, callback = bare(GRPOVerifyConfig(groups=1, prefer_mixed=prefer, **CHEAP))
        callback._rewards = rewards.clone()
        callback._measure_batch(_output(completions, advantages))
        assert callback._record["constant_groups"] == [constant_group]
        assert _measured_groups(callback) == [expected], (prefer, _measured_groups(callback))
        entry = callback._record["groups"][0]
        assert entry["mixed"] == (expected == mixed_group)
        G = _direct_rows(callback.model, completions[4 * expected:4 * expected + 4])
        assert relative_error(torch.tensor(entry["K"], dtype=torch.float64), G @ G.T) < 1e-9


# -- 4. mixed = TRL's reward-std criterion ------------------------------------------------------------------------
def test_mixed_groups_follow_the_reward_std_not_exact_zero_advantages(bare):
    """Group 0: rewards (0, 1e-9, 0, 0), std ~ 5e-10, TRL's isclose(std, 0) calls it constant, but its advantages
    (as scale_rewards="none" leaves them) are tiny and non-zero; group 1 mixed, group 2 constant with zero advantages.
    constant_groups, the mixed flags, the measured order (prefer_mixed) and the weighted Gram (none for a constant
    group) follow the std. Planted: ``mixed = ~exact`` in ``_zero_advantage``; also ``if np.any(an != 0):`` without
    ``and bool(mixed[g])`` in ``_engine_metrics``."""
    trainer, callback = bare(GRPOVerifyConfig(groups=2, **CHEAP))
    rewards = torch.tensor([[0.0], [1e-9], [0.0], [0.0], [0.0], [1.0], [1.0], [0.0], [2.0], [2.0], [2.0], [2.0]])
    advantages = [-2.5e-10, 7.5e-10, -2.5e-10, -2.5e-10, -0.5, 0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0]
    # the reference: TRL's own criterion on the rewards (float32 weighted totals, nanstd per group, isclose to 0)
    from trl.trainer.utils import nanstd
    std = nanstd(rewards.view(-1, 4), dim=1)
    assert torch.isclose(std, torch.zeros_like(std)).tolist() == [True, False, True]
    assert any(a != 0 for a in advantages[:4])  # ... while exact-zero advantages would call group 0 mixed
    callback._rewards = rewards
    callback._measure_batch(_output(_completions(12), advantages))
    record, pending = callback._record, callback._pending
    assert record["constant_groups"] == [0, 2]
    assert pending["zero_adv/group_fraction"] == pytest.approx(2 / 3)
    assert pending["zero_adv/exact_fraction"] == pytest.approx(1 / 3)
    assert _measured_groups(callback) == [1, 0]  # the mixed group first, then the lowest-numbered constant one
    assert [e["mixed"] for e in record["groups"]] == [True, False]
    assert "gram_weighted" in record["groups"][0] and "gram_weighted" not in record["groups"][1]
    assert pending["gram_weighted/skipped"] == 1.0


def _trainer_with(offline, name, reward_funcs, **extra):
    """make_trainer's geometry with our own reward functions."""
    from datasets import Dataset
    from transformers import AutoTokenizer

    root, model_dir = offline
    args = trl.GRPOConfig(
        output_dir=str(root / name), report_to=[], use_cpu=True, per_device_train_batch_size=16, num_generations=4,
        max_completion_length=6, learning_rate=1e-3, max_steps=1, logging_steps=1, save_strategy="no",
        model_init_kwargs={"dtype": torch.float64}, seed=0, disable_dropout=True, max_grad_norm=0.0,
        dataloader_num_workers=0, bf16=False, fp16=False, **extra)
    return trl.GRPOTrainer(model=str(model_dir), reward_funcs=reward_funcs, args=args,
                           train_dataset=Dataset.from_dict({"prompt": worker.PROMPTS * 8}),
                           processing_class=AutoTokenizer.from_pretrained(model_dir))


def test_tiny_reward_differences_are_constant_groups_in_a_real_run(offline):
    """A real run with scale_rewards="none" and rewards 1e-9 x parity: TRL calls every group constant
    (frac_reward_zero_std = 1) though some groups' advantages are non-zero; the callback's constant_groups and mixed
    flags agree with TRL. Planted: ``mixed = ~exact`` in ``_zero_advantage``."""

    def tiny(prompts, completions, completion_ids, **kwargs):
        return [1e-9 * float(c[0] % 2) if c else 0.0 for c in completion_ids]

    trainer = _trainer_with(offline, "tiny_rewards", [tiny], scale_rewards="none")
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(groups=None, **CHEAP))
    trainer.train()
    history = {h["step"]: h for h in trainer.state.log_history if "loss" in h}
    record, logged = callback.records[0], callback.logged[1]
    assert history[1]["frac_reward_zero_std"] == 1.0 == logged[P + "zero_adv/group_fraction"]
    assert logged[P + "zero_adv/exact_fraction"] < 1.0  # some group has non-zero advantages: the cases differ
    assert record["constant_groups"] == list(range(record["groups_total"]))
    assert not any(e["mixed"] for e in record["groups"])


def test_the_constant_test_uses_the_weighted_total_without_unscorable_rows(offline):
    """Two reward functions, weights (0, 1): the first (parity) does not count, the second is 1 or None (unscorable
    with the first's None too). TRL's total is constant in every group (unscorable rows are NaN, left out), so TRL
    logs frac_reward_zero_std = 1, and so must zero_adv/group_fraction. Planted: the reward weights dropped
    (``total = rpf.nansum(dim=1)``) or ``total[torch.isnan(rpf).all(dim=1)] = torch.nan`` removed."""
    unscorable = []

    def parity(prompts, completions, completion_ids, **kwargs):
        return [None if c and c[0] % 3 == 0 else float(c[0] % 2) if c else 0.0 for c in completion_ids]

    def one(prompts, completions, completion_ids, **kwargs):
        out = [None if c and c[0] % 3 == 0 else 1.0 for c in completion_ids]
        unscorable.append(sum(v is None for v in out))
        return out

    trainer = _trainer_with(offline, "weighted_rewards", [parity, one], reward_weights=[0.0, 1.0])
    callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(groups=None, **CHEAP))
    trainer.train()
    history = {h["step"]: h for h in trainer.state.log_history if "loss" in h}
    assert unscorable[0] > 0  # the batch has an unscorable row
    assert history[1]["frac_reward_zero_std"] == 1.0
    assert callback.logged[1][P + "zero_adv/group_fraction"] == 1.0
    assert callback.records[0]["constant_groups"] == [0, 1, 2, 3]


# -- 5. seconds: the slowest process ------------------------------------------------------------------------------
def test_logged_seconds_are_the_slowest_process(monkeypatch):
    """Three processes (a fake accelerator whose gather stacks this process's time with 2.0 s and 0.1 s): the logged
    seconds are 2.0, the max. Planted: ``.mean()`` for ``.max()`` in ``on_step_end``."""
    store = defaultdict(list)
    others = torch.tensor([[2.0], [0.1]], dtype=torch.float64)
    accelerator = SimpleNamespace(num_processes=3, process_index=0, device=torch.device("cpu"),
                                  gather=lambda t: torch.cat([t, others]))
    callback = object.__new__(GRPOVerifyCallback)
    callback.config = GRPOVerifyConfig(**CHEAP, gram=False)
    callback.trainer = SimpleNamespace(accelerator=accelerator, _metrics={"train": store})
    callback.records, callback.logged, callback.disabled = [], {}, {}
    callback._start, callback._previous = {}, {}
    for own, expected in ((0.25, 2.0), (3.5, 3.5)):
        callback._in_step = callback._measuring = True
        callback._spectral = False
        callback._pending, callback._record, callback._seconds = {}, {"step": 1}, own
        callback.on_step_end(None, SimpleNamespace(global_step=1), None)
        assert callback.logged[1][P + "seconds"] == pytest.approx(expected, abs=0.05)  # + on_step_end's own time
    assert store[P + "seconds"] == pytest.approx([2.0, 3.5], abs=0.05)


# -- the schedule of every / spectra_every ------------------------------------------------------------------------
@pytest.mark.parametrize("every,spectra_every", [(1, 2), (2, 2), (3, 2), (2, 3)])
def test_every_and_spectra_every_schedule(every, spectra_every):
    """A step starting at global_step s is measured when s % every == 0 and adds the singular-value metrics when
    s % (every * spectra_every) == 0 (the docstring's schedule). Planted: ``% self.config.spectra_every`` (without
    ``every *``) or ``(state.global_step + 1) % ...``."""
    callback = object.__new__(GRPOVerifyCallback)
    callback.config = GRPOVerifyConfig(every=every, spectra_every=spectra_every, update_step=False)
    measured, spectral = [], []
    for s in range(13):
        callback.on_step_begin(None, SimpleNamespace(global_step=s), None)
        measured += [s] if callback._measuring else []
        spectral += [s] if callback._spectral else []
        assert callback._record == {"step": s + 1}
    assert measured == list(range(0, 13, every))
    assert spectral == list(range(0, 13, every * spectra_every))


# -- dropped rollouts ---------------------------------------------------------------------------------------------
def test_a_rollout_without_completion_tokens_has_a_zero_row_and_the_others_their_own(bare):
    """Rollout 1 of the group has no completion token (e.g. a masked truncated completion): its row and column of K
    are 0 and every other entry is the raw-token per-rollout Gram at its own index; the GRPO gradient
    sum_i A_i g_i uses each kept rollout's own advantage. Planted: ``K[:len(keep), :len(keep)] = ...`` for
    ``K[np.ix_(keep, keep)]``, or ``a = a_full[:len(keep)]`` for ``a_full[keep]``."""
    trainer, callback = bare(GRPOVerifyConfig(groups=None, layer_spectra=False, step_gradient=False,
                                              update_step=False, update_since_start=False, delta_rank=False,
                                              sparsity_thresholds=(0.5, 0.05)))
    completions = _completions(4, seed=3, empty=(1,))
    advantages = [1.5, -0.5, 0.25, -1.25]
    callback._measure_batch(_output(completions, advantages))
    entry = callback._record["groups"][0]
    assert entry["kept"] == [0, 2, 3]
    G = _direct_rows(callback.model, completions)
    K = np.asarray(entry["K"])
    assert not K[1].any() and not K[:, 1].any()
    assert relative_error(torch.tensor(K), G @ G.T) < 1e-9
    grad = torch.tensor(advantages, dtype=torch.float64) @ G
    direct = _coordinate_sparsity(grad, (0.5, 0.05))
    for key, value in direct.items():
        assert callback._pending[f"sparsity/{key}"] == pytest.approx(value, abs=3 / grad.numel()), key


# -- several processes: a process's own rows ----------------------------------------------------------------------
class _SecondOfTwo:
    """The trainer seen from process 1 of 2: gather stacks an identical process 0 before this one's values."""

    def __init__(self, trainer):
        self._trainer = trainer
        self.accelerator = SimpleNamespace(num_processes=2, process_index=1, device=torch.device("cpu"),
                                           gather=lambda t: torch.cat([t, t]),
                                           unwrap_model=trainer.accelerator.unwrap_model)

    def __getattr__(self, name):
        return getattr(self._trainer, name)


def test_the_second_process_measures_its_own_groups_from_its_local_rows(bare):
    """Process 1 of 2, 8 local rows (R = 4): it owns global groups 2 and 3, whose rows are its local rows 0-3 and
    4-7; their K are the raw-token Grams of those rows, and the counts are summed over both processes. Planted:
    ``rows[g * R:(g + 1) * R]`` (no ``- first``) in ``_engine_batch``, or ``.mean(dim=0)`` for ``.sum(dim=0)``."""
    trainer, callback = bare(GRPOVerifyConfig(groups=None, **CHEAP))
    callback.trainer = _SecondOfTwo(trainer)
    completions = _completions(8, seed=5)
    callback._measure_batch(_output(completions, [1.0, -1.0, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0]))
    assert _measured_groups(callback) == [2, 3]
    means = []
    for entry, local in zip(callback._record["groups"], (slice(0, 4), slice(4, 8))):
        G = _direct_rows(callback.model, completions[local])
        assert relative_error(torch.tensor(entry["K"], dtype=torch.float64), G @ G.T) < 1e-9, entry["group"]
        m = rank.rank_metrics_from_gram((G @ G.T).numpy()).as_dict()
        means.append([m[k] for k in GRAM_METRICS])
    pending = callback._pending
    assert pending["groups/measured"] == 4.0  # 2 here + 2 on the (identical) other process
    for metric, value in zip(GRAM_METRICS, np.mean(means, axis=0)):
        assert pending[f"gram/{metric}"] == pytest.approx(value, rel=1e-9)
    assert pending["gram_weighted/skipped"] == 2.0  # group 3 here and its copy on process 0


class _OneOfTwo:
    """The trainer seen from process ``index`` of 2: ``gather`` puts the other process's advantages (a vector of the
    same length as this one's) or zeros (its counts: it measured nothing) on the other side of this one's values;
    ``gather_object`` (patched by the test) the other process's rows likewise."""

    def __init__(self, trainer, index, other_advantages):
        self._trainer = trainer
        other = torch.tensor(other_advantages, dtype=torch.float64)[None]

        def gather(t):
            theirs = other if t.shape[1] == other.shape[1] else torch.zeros_like(t)
            return torch.cat([t, theirs] if index == 0 else [theirs, t])

        self.accelerator = SimpleNamespace(num_processes=2, process_index=index, device=torch.device("cpu"),
                                           gather=gather, unwrap_model=trainer.accelerator.unwrap_model)

    def __getattr__(self, name):
        return getattr(self._trainer, name)


def test_a_process_does_not_own_the_next_processs_first_group(bare):
    """Process 0 of 2, 8 rows each (R = 4), groups=1, its own groups constant and the other process's mixed: it
    measures its own group 0, not the mixed group 2 that starts at its last row + 1. Planted: ``first <= lo <= last``
    for ``first <= lo < last`` in ``_engine_batch`` (group 2 is then chosen, has no local rows, and nothing is
    measured)."""
    trainer, callback = bare(GRPOVerifyConfig(groups=1, **CHEAP))
    callback.trainer = _OneOfTwo(trainer, 0, [1.0, -1.0] * 4)
    completions = _completions(8, seed=7)
    callback._measure_batch(_output(completions, [0.0] * 8))
    assert callback._record["groups_total"] == 4 and callback._record["constant_groups"] == [0, 1]
    assert _measured_groups(callback) == [0]
    assert callback._pending["groups/measured"] == 1.0
    G = _direct_rows(callback.model, completions[:4])
    assert relative_error(torch.tensor(callback._record["groups"][0]["K"], dtype=torch.float64), G @ G.T) < 1e-9


@pytest.mark.parametrize("index", [0, 1])
def test_split_groups_gather_measures_the_right_rows_on_either_process(bare, monkeypatch, index):
    """Two processes of 6 rows, R = 4: group 0 = process 0's rows 0-3, group 1 = its rows 4-5 + process 1's rows 0-1
    (split: process 0 measures it from gathered rows), group 2 = process 1's rows 2-5 (its own, read from the
    gathered list too). Each measured group's K is the raw-token Gram of exactly those rollouts. Planted:
    ``everything[g * R - first:(g + 1) * R - first]`` for ``everything[g * R:(g + 1) * R]`` in ``_engine_batch``
    (process 1 then reads rows 2-5 of the gathered list for group 2)."""
    import accelerate.utils

    trainer, callback = bare(GRPOVerifyConfig(groups=None, **CHEAP))
    completions = _completions(12, seed=11)  # global rows: process 0 holds 0-5, process 1 holds 6-11
    advantages = [1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1.0, -1.0, 0.25, -0.25, 0.75, -0.75]
    mine, theirs = (slice(0, 6), slice(6, 12)) if index == 0 else (slice(6, 12), slice(0, 6))
    callback.trainer = _OneOfTwo(trainer, index, advantages[theirs])
    local = _output(completions[mine], advantages[mine])
    other_rows = GRPOVerifyCallback._rows(_output(completions[theirs], advantages[theirs]))
    monkeypatch.setattr(accelerate.utils, "gather_object",
                        lambda rows: rows + other_rows if index == 0 else other_rows + rows)
    callback._measure_batch(local)
    expected = {0: [0, 1], 1: [2]}[index]
    assert _measured_groups(callback) == expected
    for entry in callback._record["groups"]:
        g = entry["group"]
        G = _direct_rows(callback.model, completions[4 * g:4 * g + 4])
        assert relative_error(torch.tensor(entry["K"], dtype=torch.float64), G @ G.T) < 1e-9, g
        assert entry["advantages"] == advantages[4 * g:4 * g + 4]
    assert callback._pending["groups/split_gathered"] == (1.0 if index == 0 else 0.0)
