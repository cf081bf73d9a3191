"""``GRPOVerifyCallback`` on a real ``trl.GRPOTrainer`` (skipped without ``trl``).

The trainer is built offline on the cross-check's tiny float64 Llama (``tests/trl_two_process_worker.py``), trained for
a few CPU steps with real sampling, and every logged metric is recomputed directly from what a second callback
recorded (the weights at each step's start and end, the gradient the optimizer received) and what TRL logged:

* the zero-advantage fraction against TRL's own ``frac_reward_zero_std`` of the same step;
* every measured group's Gram against the naive per-rollout loop (``naive_gram``) at the step's starting weights, and
  the logged rank metrics against those of the naive Gram;
* the on-policy GRPO gradient sum_i A_i g_i (naive loop, TRL's advantages) against TRL's own gradient, scaled by the
  loss type's normaliser (so the documented weights and loss are the ones TRL differentiates), and the logged
  per-layer spectra and coordinate sparsity against direct computations on TRL's gradient;
* update sparsity against a parameter diff, and the update rank against an SVD of W - W_start.

Each comparison is shown to reject a planted error: a Gram from the next step's weights, a flipped advantage sign, a
since-start diff in place of the step's diff.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

trl = pytest.importorskip("trl")

pytestmark = pytest.mark.filterwarnings("ignore:.*gradient_checkpointing.* is deprecated:FutureWarning",
                                        "ignore::FutureWarning", "ignore::UserWarning")

import torch  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

from grpo_verify import rank  # noqa: E402
from grpo_verify.gram import naive_gram, relative_error  # noqa: E402
from grpo_verify.trl_callback import GRAM_METRICS, GRPOVerifyCallback, GRPOVerifyConfig  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from trl_two_process_worker import (OFFLINE, WeightRecorder, build_tiny_model, make_trainer,  # noqa: E402
                                     offline_tiny_model)

P = "grpo_verify/"
TOL = 1e-6  # relative tolerance of the tolerance rank (the callback's default)


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    yield from offline_tiny_model(tmp_path_factory.mktemp("trl_callback"))


def _train(offline, name, config, **trainer_kwargs):
    root, model_dir = offline
    trainer = make_trainer(model_dir, root / name, **trainer_kwargs)
    callback = GRPOVerifyCallback(trainer, config)
    recorder = WeightRecorder(trainer.accelerator.unwrap_model(trainer.model))
    trainer.add_callback(recorder)
    trainer.train()
    history = {entry["step"]: entry for entry in trainer.state.log_history if "loss" in entry}
    return trainer, callback, recorder, history


def _model_at(model_dir, state):
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64)
    model.load_state_dict(state)
    return model.eval()


def _naive(model, entry, aggregation, advantages=None):
    ids = torch.tensor(entry["input_ids"])
    mask = torch.tensor(entry["attention_mask"])
    return naive_gram(model, ids, mask, entry["completion_start"], aggregation, advantages=advantages)


def _full_k(entry, K):
    R = len(entry["advantages"])
    full = np.zeros((R, R))
    full[np.ix_(entry["kept"], entry["kept"])] = K.numpy()
    return full


def _spectra(grads):
    out = {"stable_rank": [], "effective_rank": []}
    for name in sorted(grads):
        if grads[name].ndim == 2:
            m = rank.rank_metrics(torch.linalg.svdvals(grads[name].double()).numpy(), TOL)
            out["stable_rank"].append(m.stable_rank)
            out["effective_rank"].append(m.effective_rank)
    return {k: np.quantile(v, [0.5, 0.25, 0.75]) for k, v in out.items()}


def _coordinate_sparsity(grads, thresholds):
    flat = torch.cat([g.reshape(-1).double().abs() for g in grads.values()])
    top = float(flat.max())
    out = {"exact_zero": float((flat == 0).double().mean())}
    for tau in thresholds:
        out[f"le_{tau:g}_max"] = float((flat <= tau * top).double().mean())
    return out


def _unchanged(before, after, bf16):
    same = total = 0
    for name, new in after.items():
        old = before[name]
        if bf16:
            old, new = old.to(torch.bfloat16), new.to(torch.bfloat16)
        same += int((old == new).sum())
        total += new.numel()
    return same / total


AGGREGATIONS = {"grpo": "mean", "dapo": "sum"}


@pytest.mark.parametrize("loss_type", ["grpo", "dapo"])
def test_every_logged_metric_matches_a_direct_computation(offline, loss_type):
    config = GRPOVerifyConfig(groups=None)
    trainer, callback, recorder, history = _train(offline, f"direct_{loss_type}", config, loss_type=loss_type)
    _, model_dir = offline
    aggregation = AGGREGATIONS[loss_type]
    assert callback.aggregation == aggregation
    assert "_generate_and_score_completions" not in vars(trainer)  # the wrappers are gone after training
    thresholds = config.sparsity_thresholds
    steps = sorted(callback.logged)
    assert steps == [1, 2, 3]
    seen_constant = seen_mixed = False
    for record in callback.records:
        step = record["step"]
        logged = callback.logged[step]
        # zero-advantage groups: TRL's own number of the same step (dyadic rewards: exact zeros agree too)
        assert logged[P + "zero_adv/group_fraction"] == pytest.approx(history[step]["frac_reward_zero_std"], abs=1e-12)
        assert logged[P + "zero_adv/exact_fraction"] == logged[P + "zero_adv/group_fraction"]
        assert logged[P + "groups/measured"] == record["groups_total"] == 4
        model = _model_at(model_dir, recorder.begin[step])
        later = _model_at(model_dir, recorder.end[step])
        gram_means, weighted, grads, tokens = [], [], None, 0
        for entry in record["groups"]:
            seen_constant |= not entry["mixed"]
            seen_mixed |= entry["mixed"]
            K = np.asarray(entry["K"])
            naive = _full_k(entry, _naive(model, entry, aggregation).K)
            assert relative_error(torch.tensor(K), torch.tensor(naive)) < 1e-10
            # planted: the Gram at the weights after the step (the wrong weights) is detected
            wrong = _full_k(entry, _naive(later, entry, aggregation).K)
            assert relative_error(torch.tensor(wrong), torch.tensor(naive)) > 1e-4
            m = rank.rank_metrics_from_gram(naive, TOL).as_dict()
            gram_means.append([m[k] for k in GRAM_METRICS])
            a = np.asarray(entry["advantages"])
            if entry["mixed"]:
                w = rank.rank_metrics_from_gram(np.diag(a) @ naive @ np.diag(a), TOL).as_dict()
                weighted.append([w[k] for k in GRAM_METRICS])
            mask = torch.tensor(entry["attention_mask"])
            tokens += int(mask[:, entry["completion_start"]:].sum())
            kept = torch.tensor(a[entry["kept"]])
            g = _naive(model, entry, aggregation, advantages=kept).grpo_gradients
            grads = g if grads is None else {n: grads[n] + g[n] for n in g}
        constant = sum(not entry["mixed"] for entry in record["groups"])
        assert logged.get(P + "gram_weighted/skipped", 0) == constant  # the constant groups' missing weighted Gram
        for key, values in (("gram", gram_means), ("gram_weighted", weighted)):
            for metric, value in zip(GRAM_METRICS, np.mean(values, axis=0)):
                assert logged[f"{P}{key}/{metric}"] == pytest.approx(value, rel=1e-9, abs=1e-12)
        # the documented loss: TRL's gradient is -(1/N) sum_i A_i g_i (grpo, N rollouts) or -(1/T) of the sums (dapo)
        trl_grad = recorder.grads[step]
        scale = 16 if loss_type == "grpo" else tokens
        ours = {n: -g / scale for n, g in grads.items()}
        worst = max(float((ours[n] - trl_grad[n]).abs().max() / trl_grad[n].abs().max()) for n in trl_grad)
        assert worst < 1e-6
        flipped = max(float((-ours[n] - trl_grad[n]).abs().max() / trl_grad[n].abs().max()) for n in trl_grad)
        assert flipped > 1.0  # planted: a flipped advantage sign is detected
        # spectra and sparsity: of the engine's gradient and of TRL's step gradient, against TRL's gradient
        direct = _spectra(trl_grad)
        for where in ("", "step_grad/"):
            for metric, (median, q25, q75) in direct.items():
                assert logged[f"{P}{where}layers/{metric}/median"] == pytest.approx(median, rel=1e-6)
                assert logged[f"{P}{where}layers/{metric}/q25"] == pytest.approx(q25, rel=1e-6)
                assert logged[f"{P}{where}layers/{metric}/q75"] == pytest.approx(q75, rel=1e-6)
        total = sum(g.numel() for g in trl_grad.values())
        for key, value in _coordinate_sparsity(trl_grad, thresholds).items():
            assert logged[f"{P}step_grad/sparsity/{key}"] == pytest.approx(value, abs=1e-12)
            assert logged[f"{P}sparsity/{key}"] == pytest.approx(value, abs=3 / total)  # a threshold's round-off
        # update sparsity against the parameter diff; the update rank against an SVD of W - W_start
        before, after = recorder.begin[step], recorder.end[step]
        for bf16, suffix in ((False, "model"), (True, "bf16")):
            step_value = _unchanged(before, after, bf16)
            start_value = _unchanged(recorder.initial, after, bf16)
            assert logged[f"{P}update/unchanged_step/{suffix}"] == pytest.approx(step_value, abs=1e-15)
            assert logged[f"{P}update/unchanged_since_start/{suffix}"] == pytest.approx(start_value, abs=1e-15)
            if bf16 and step > 1:  # planted: the since-start diff in place of the step's is detected
                assert abs(step_value - start_value) > 1e-3
        fractions = []
        for name, new in after.items():
            if new.ndim == 2:
                sigma = torch.linalg.svdvals((new - recorder.initial[name]).double()).numpy()
                fractions.append(rank.tolerance_rank(sigma, TOL) / min(new.shape))
        assert logged[P + "update/delta_rank_fraction/median"] == pytest.approx(np.median(fractions), abs=1e-12)
        assert logged[P + "seconds"] > 0
        params = sum(p.numel() for p in after.values())
        assert logged[P + "memory/snapshot_mib"] == pytest.approx(2 * params * 8 / 2**20)  # two float64 copies
        # and the values reached the Trainer's own log
        for key, value in logged.items():
            assert history[step][key] == pytest.approx(value)
    assert seen_constant and seen_mixed


def test_every_n_switches_and_the_stated_memory(offline):
    config = GRPOVerifyConfig(every=2, groups=1, update_model_dtype=False, delta_rank=False, layer_spectra=False,
                              step_gradient=False)
    trainer, callback, recorder, history = _train(offline, "every2", config)
    assert [r["step"] for r in callback.records] == [1, 3]  # steps whose start has global_step % 2 == 0
    assert sorted(callback.logged) == [1, 2, 3]  # the zero-advantage unit runs on every step
    # an unmeasured step logs only the every-step keys, equal to TRL's own
    every_step = {P + "zero_adv/group_fraction", P + "zero_adv/exact_fraction"}
    assert {k for k in history[2] if k.startswith(P)} == every_step
    for step in (1, 2, 3):
        assert history[step][P + "zero_adv/group_fraction"] == pytest.approx(history[step]["frac_reward_zero_std"])
    params = sum(p.numel() for p in recorder.initial.values())
    for step in (1, 3):
        logged = callback.logged[step]
        assert logged[P + "measured_step"] == step
        assert logged[P + "groups/measured"] == 1
        assert not any("/layers/" in k or k.startswith(P + "layers") or "/model" in k or "delta" in k
                       for k in logged), sorted(logged)
        assert logged[P + "memory/snapshot_mib"] == pytest.approx(2 * params * 2 / 2**20)  # two bf16 snapshots
        assert logged[P + "update/unchanged_step/bf16"] == pytest.approx(
            _unchanged(recorder.begin[step], recorder.end[step], True), abs=1e-15)
    nothing = GRPOVerifyConfig(gram=False, layer_spectra=False, sparsity=False, step_gradient=False,
                               update_step=False, update_since_start=False, delta_rank=False)
    _, callback, _, _ = _train(offline, "nothing", nothing, steps=1)
    assert set(callback.logged[1]) == {P + "zero_adv/group_fraction", P + "zero_adv/exact_fraction", P + "seconds",
                                       P + "measured_step"}


def test_spectra_every_spreads_the_singular_value_metrics_only(offline):
    """spectra_every=2 with every=1: every step measures the Grams, sparsities and update fractions; only steps 1 and
    3 (global_step 0 and 2 at their start) add the per-layer spectra, the step gradient's spectra and the update rank,
    with spectra_step naming the step."""
    config = GRPOVerifyConfig(every=1, spectra_every=2, groups=1)
    _, callback, _, _ = _train(offline, "spectra2", config)
    spectral = ("layers/", "step_grad/layers/", "update/delta_")
    for step in (1, 2, 3):
        logged = {k[len(P):]: v for k, v in callback.logged[step].items()}
        has = {prefix: any(k.startswith(prefix) for k in logged) for prefix in spectral}
        assert logged["measured_step"] == step and "gram/effective_rank" in logged
        assert "step_grad/sparsity/exact_zero" in logged and "update/unchanged_step/model" in logged
        if step == 2:
            assert not any(has.values()) and "spectra_step" not in logged, sorted(logged)
        else:
            assert all(has.values()) and logged["spectra_step"] == step, (has, sorted(logged))
    with pytest.raises(ValueError, match="spectra_every"):
        GRPOVerifyConfig(spectra_every=0)


def test_sharded_parameters_are_refused_with_a_clear_message(offline):
    root, model_dir = offline
    trainer = make_trainer(model_dir, root / "sharded", steps=1)
    callback = GRPOVerifyCallback(trainer)
    trainer.is_fsdp_enabled = True
    with pytest.raises(RuntimeError, match=r"^grpo_verify: under FSDP.*sharding_safe.*gram=False.*delta_rank=False"):
        callback.on_train_begin(trainer.args, trainer.state, trainer.control)
    trainer.callback_handler.remove_callback(callback)
    safe = GRPOVerifyCallback(trainer, GRPOVerifyConfig.sharding_safe())
    safe.on_train_begin(trainer.args, trainer.state, trainer.control)  # accepted
    safe.on_train_end(trainer.args, trainer.state, trainer.control)
    trainer.is_fsdp_enabled = False  # train for real with the sharding-safe configuration
    trainer.train()
    assert set(safe.logged[1]) == {P + "zero_adv/group_fraction", P + "zero_adv/exact_fraction", P + "seconds",
                                    P + "measured_step"}


def test_bad_configuration_and_trainer_are_refused():
    for bad in ({"every": 0}, {"groups": 0}, {"split_groups": "drop"}, {"aggregation": "constant"},
                {"sparsity_thresholds": (0.0,)}, {"relative_tolerance": 1.0},
                {"update_model_dtype": False, "update_bf16": False}):
        with pytest.raises(ValueError):
            GRPOVerifyConfig(**bad)
    with pytest.raises(TypeError, match="needs a trl.GRPOTrainer: object is not a trl.GRPOTrainer"):
        GRPOVerifyCallback(object())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_gather_and_skip_split_groups(offline):
    """Two CPU processes (gloo, torch.distributed.run), per-device batch 3 and 2 generations: of the 3 groups of a
    step, group 1 straddles the processes. "gather" measures all 3 (group 1 on rank 0, from gathered ids), "skip"
    measures 2 and says so; both ranks log the same gathered values, which match the naive Gram of every group
    measured on either rank and TRL's frac_reward_zero_std."""
    root, model_dir = offline
    out = root / "two_process"
    out.mkdir()
    build_tiny_model(out / "tiny")
    env = {**os.environ, "OMP_NUM_THREADS": "1", **{name: "1" for name in OFFLINE}}
    worker = Path(__file__).parent / "trl_two_process_worker.py"
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                           "--master_port", str(_free_port()), str(worker), str(out)],
                          env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    for mode, measured, gathered, skipped in (("gather", 3, 1, 0), ("skip", 2, 0, 1)):
        runs = [json.loads((out / f"rank{r}_{mode}.json").read_text()) for r in (0, 1)]
        assert [r["world_size"] for r in runs] == [2, 2] and [r["process_index"] for r in runs] == [0, 1]
        assert runs[0]["logged"] == runs[1]["logged"]  # gathered: every process logs the same
        history = {h["step"]: h for h in runs[0]["history"] if "loss" in h}
        for step in ("1", "2"):
            logged = runs[0]["logged"][step]
            assert logged[P + "groups/measured"] == measured
            assert logged[P + "groups/split_gathered"] == gathered
            assert logged[P + "groups/split_skipped"] == skipped
            assert logged[P + "zero_adv/group_fraction"] == pytest.approx(history[int(step)]["frac_reward_zero_std"])
            model = _model_at(model_dir, torch.load(out / f"{mode}_weights_step{step}.pt"))
            entries = [e for r in runs for rec in r["records"] if rec["step"] == int(step) for e in rec["groups"]]
            assert sorted(e["group"] for e in entries) == ([0, 1, 2] if mode == "gather" else [0, 2])
            means = []
            for entry in entries:
                naive = _full_k(entry, _naive(model, entry, "mean").K)
                assert relative_error(torch.tensor(entry["K"], dtype=torch.float64), torch.tensor(naive)) < 1e-10
                if entry["group"] == 1:
                    assert len(entry["input_ids"]) == 2  # both rows of the straddling group, gathered
                m = rank.rank_metrics_from_gram(naive, TOL).as_dict()
                means.append([m[k] for k in GRAM_METRICS])
            for metric, value in zip(GRAM_METRICS, np.mean(means, axis=0)):
                assert logged[f"{P}gram/{metric}"] == pytest.approx(value, rel=1e-9)


def test_an_all_zero_gradient_logs_no_spectrum_and_no_sparsity():
    """Every measured group degenerate: the gradient is exactly 0, which has no singular-value spectrum and no
    sparsity relative to its maximum; logging 0 ranks for it would read as a measurement."""
    from grpo_verify.trl_callback import GRPOVerifyCallback, GRPOVerifyConfig

    callback = object.__new__(GRPOVerifyCallback)  # only the metric method is under test, no trainer needed
    callback.config, callback._pending, callback._record = GRPOVerifyConfig(), {}, {}
    zero = {"w": torch.zeros(3, 4), "b": torch.zeros(3)}
    callback._gradient_metrics(zero, "")
    # no metric, only the keys that say why it is missing
    assert callback._pending == {"layers/skipped": 1.0, "sparsity/skipped": 1.0} and "layers" not in callback._record
    assert set(callback._record["skipped"]) == {"layers", "sparsity"}
    callback._pending, callback._record = {}, {}
    mixed = {"w": torch.zeros(3, 4), "v": torch.arange(6.0).reshape(2, 3), "b": torch.ones(3)}
    callback._gradient_metrics(mixed, "")
    assert callback._pending["layers/stable_rank/median"] > 0 and len(callback._record["layers"]["stable_rank"]) == 1


def test_fsdp2_on_two_processes_measures_what_the_unsharded_run_measures(offline):
    """A real FSDP2 run (two CPU processes over gloo; accelerate's device-type check patched, see the worker): the
    parameters are DTensor shards, the default configuration is accepted, and the callback logs on both processes
    what the unsharded (DDP) run logs: the zero-advantage fractions (equal to TRL's frac_reward_zero_std), every
    group's Gram matrix, the Gram and per-layer rank metrics, the engine's and the trainer's gradient sparsity and
    spectra, the update fractions and W - W_start's rank. Process 0 measures two groups and process 1 one (a split
    group gathered), so the unequal passes are also exercised under FSDP2's collectives."""
    root, _ = offline
    out = root / "fsdp2"
    out.mkdir()
    build_tiny_model(out / "tiny")
    env = {**os.environ, "OMP_NUM_THREADS": "1", **{name: "1" for name in OFFLINE}}
    worker = Path(__file__).parent / "trl_two_process_worker.py"
    for mode in ("ddp", "fsdp2"):
        done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                               "--master_port", str(_free_port()), str(worker), str(out), mode],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-4000:]
    runs = {(mode, r): json.loads((out / f"rank{r}_{mode}.json").read_text()) for mode in ("ddp", "fsdp2")
            for r in (0, 1)}
    for r in (0, 1):
        ddp, fsdp = runs["ddp", r], runs["fsdp2", r]
        assert not ddp["is_fsdp_enabled"] and not ddp["dtensor_parameters"]
        assert ddp["refusal_of_the_default_config"] is None and fsdp["refusal_of_the_default_config"] is None
        assert fsdp["is_fsdp_enabled"] and fsdp["dtensor_parameters"], fsdp["distributed_type"]
        assert fsdp["disabled"] == {} and ddp["disabled"] == {}
        for run in (ddp, fsdp):
            history = {h["step"]: h for h in run["history"] if "loss" in h}
            assert sorted(history) == [1, 2]
            for step, h in history.items():
                # TRL's flag is a float32 mean
                assert h[P + "zero_adv/group_fraction"] == pytest.approx(h["frac_reward_zero_std"], abs=1e-7)
        measured = [len(rec["groups"]) for rec in fsdp["records"]]
        assert measured == [2, 2] if r == 0 else measured == [1, 1]  # unequal passes per process
        for a, b in zip(ddp["records"], fsdp["records"]):
            assert [g["group"] for g in a["groups"]] == [g["group"] for g in b["groups"]]
            for ga, gb in zip(a["groups"], b["groups"]):
                np.testing.assert_allclose(gb["K"], ga["K"], rtol=1e-9, atol=1e-12)
        for step in ("1", "2"):
            d, f = ddp["logged"][step], fsdp["logged"][step]
            assert set(f) == set(d)
            for family in ("gram/", "gram_weighted/", "layers/", "sparsity/", "step_grad/layers/",
                           "step_grad/sparsity/", "update/unchanged", "update/delta_"):
                assert any(k.startswith(P + family) for k in d), (family, sorted(d))
            # each process snapshots its own shards: half the memory each, all of it together
            memory = P + "memory/snapshot_mib"
            assert f[memory] + runs["fsdp2", 1 - r]["logged"][step][memory] == d[memory]
            for key in d:
                if key in (P + "seconds", memory):
                    continue
                exact = "/zero_adv/" in key or "/update/unchanged" in key or "/groups/" in key or "_step" in key
                assert f[key] == (d[key] if exact else pytest.approx(d[key], rel=1e-9)), key
        for step, logged in fsdp["logged"].items():  # every process logs the same, but for its own memory
            other = runs["fsdp2", 1 - r]["logged"][step]
            assert {k: v for k, v in logged.items() if k != memory} == {k: v for k, v in other.items() if k != memory}
        for a, b in zip((h for h in ddp["history"] if "loss" in h), (h for h in fsdp["history"] if "loss" in h)):
            assert a["loss"] == pytest.approx(b["loss"], rel=1e-9)  # the same training, sharded
