"""python -m grpo_verify.empirical end to end on the tiny-random preset with a 5-problem fixture,
plus unit tests of the reward, the Gram-derived matrices, the store and the inputs it refuses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from grpo_verify.empirical import data, measure, models, reward, store
from grpo_verify.empirical.__main__ import Interrupted, main
from grpo_verify.gram import rollout_gram
from grpo_verify.gram.reference import per_rollout_gradients

FIXTURE = Path(__file__).parent / "fixtures" / "gsm8k_small.jsonl"
BASE = ["--model", "tiny-random", "--dataset-file", str(FIXTURE), "--num-prompts", "2", "--group-sizes", "2,4",
        "--max-new-tokens", "6", "--bootstrap", "50", "--no-progress", "--device", "cpu", "--threads", "1",
        "--layer-controls", "--degenerate-groups", "measure"]


def _args(out: Path, *extra: str, plots: bool = False) -> list[str]:
    return BASE + ["--out", str(out)] + ([] if plots else ["--no-plots"]) + list(extra)


def _results(out: Path) -> list[dict]:
    records, torn = store.read_jsonl(out / "results.jsonl")
    assert torn == 0
    for r in records:
        r["measure"].pop("seconds")  # timings are the only thing allowed to differ
    return sorted(records, key=lambda r: (r["prompt"], r["R"]))


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("emp") / "full"
    assert main(_args(out, plots=True)) == 0
    return out


# -- end to end ----------------------------------------------------------------------------------
def test_end_to_end_writes_every_output(full_run):
    for name in ("config.json", "results.jsonl", "summary.json", "table.md", "table.tex", "spectra.png",
                 "spectra.pdf", "effective_rank_vs_R.png", "effective_rank_vs_R.pdf"):
        assert (full_run / name).is_file(), name
    config = json.loads((full_run / "config.json").read_text())
    assert config["options"]["group_sizes"] == [2, 4] and config["model"]["kind"] == "tiny-random"
    assert config["packages"]["torch"] and config["packages"]["math-verify"]
    records = _results(full_run)
    assert [(r["prompt"], r["R"]) for r in records] == [(0, 2), (0, 4), (1, 2), (1, 4)]
    for r in records:
        m, R = r["measure"], r["R"]
        assert np.asarray(m["K"]).shape == (R, R)
        assert set(m["conditions"]) == {"grpo", "gaussian", "gaussian_centred", "ones", "rewards", "partial_credit"}
        # the centred Gram has rank <= R - 1 (the constraint every centred estimator inherits)
        assert m["centred"]["metrics"]["tolerance_rank"] <= R - 1
        assert m["degenerate"] == (len(set(r["rewards"])) == 1)
        if m["degenerate"]:
            assert m["conditions"]["grpo"]["zero_gradient"] and m["conditions"]["grpo"]["gradient_norm"] == 0
        else:
            # float32 model: the GRPO gradients are float32 (the engine's product dtype), K's sums float64
            assert m["conditions"]["grpo"]["gram_vs_direct_rel_err"] < 1e-6
        for cond in ("gaussian", "ones"):  # controls are measured on degenerate groups too
            assert "layers" in m["conditions"][cond] and m["conditions"][cond]["gradient_norm"] > 0
    summary = json.loads((full_run / "summary.json").read_text())
    assert summary["counts"]["2"]["items"] == 2
    assert any(row["matrix"] == "layers" and row["condition"] == "gaussian" for row in summary["rows"])
    assert "effective_rank" in (full_run / "table.md").read_text() and r"\toprule" in (full_run / "table.tex").read_text()


def test_a_run_that_counts_degenerate_groups_equals_the_measured_run_where_it_records_anything(full_run, tmp_path):
    """--degenerate-groups count end to end: the mixed groups' records are the measured run's, and a degenerate
    group's record holds a subset of the measured record's keys, with the same values (no engine pass)."""
    out = tmp_path / "counted"
    assert main(_args(out, "--degenerate-groups", "count")) == 0
    measured, counted = _results(full_run), _results(out)
    assert [(r["prompt"], r["R"]) for r in counted] == [(r["prompt"], r["R"]) for r in measured]
    kinds = set()
    for a, b in zip(measured, counted):
        ma, mb = a.pop("measure"), b.pop("measure")
        assert a == b  # completions, rewards, seeds
        if not ma["degenerate"]:
            assert mb == ma
            kinds.add("mixed")
            continue
        kinds.add("degenerate")
        assert mb["measured"] is False and "K" not in mb
        assert mb["advantages"] == ma["advantages"]
        assert mb["conditions"] == {"grpo": {k: ma["conditions"]["grpo"][k] for k in mb["conditions"]["grpo"]}}
    assert kinds == {"mixed", "degenerate"}  # the fixture run has both, or this test says nothing


def test_rerun_with_same_seed_is_identical(full_run, tmp_path):
    assert main(_args(tmp_path / "again")) == 0
    assert _results(tmp_path / "again") == _results(full_run)


def test_resume_after_interruption_does_not_duplicate(full_run, tmp_path):
    out = tmp_path / "killed"
    with pytest.raises(Interrupted):
        main(_args(out), stop_after_items=1)
    assert len(store.read_jsonl(out / "results.jsonl")[0]) == 1
    # also tear the last line as a kill mid-write would
    with open(out / "results.jsonl", "ab") as fh:
        fh.write(b'{"prompt": 0, "R": 4, "meas')
    assert main(_args(out, "--resume")) == 0
    assert _results(out) == _results(full_run)


def test_resume_refuses_a_different_config(full_run, tmp_path, capsys):
    out = tmp_path / "copy"
    shutil.copytree(full_run, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(_args(out, "--resume", "--temperature", "0.7")) == 2
    assert "--temperature" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert main(_args(out)) == 2  # and no silent overwrite without --resume
    assert "--resume" in capsys.readouterr().err


# -- bad input: non-zero exit, a clear message, nothing written ---------------------------------------
@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash")
def test_the_prepared_gpu_script_runs_end_to_end_with_the_tiny_model(tmp_path):
    """experiments/empirical_gpu.sh with DEVICE=cpu and tiny-random appended (later options win):
    every option it passes is valid, it measures, trains and reports, and a rerun resumes."""
    import os
    import subprocess
    import sys
    script = Path(__file__).resolve().parents[1] / "experiments" / "empirical_gpu.sh"
    out = tmp_path / "gpu_run"
    env = dict(os.environ, DEVICE="cpu", GSM8K_FILE=str(FIXTURE), PYTHON=sys.executable)
    extra = ["--model", "tiny-random", "--dtype", "float32", "--max-new-tokens", "6", "--bootstrap", "20",
             "--no-progress", "--no-plots", "--threads", "1"]
    proc = subprocess.run(["bash", str(script), str(out), *extra], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "finished in" in proc.stdout
    records, _ = store.read_jsonl(out / "results.jsonl")
    assert len(records) == 4 * 3  # 4 prompts x R = 2, 4, 8
    assert len(store.read_jsonl(out / "train.jsonl")[0]) == 2
    assert json.loads((out / "config.json").read_text())["options"]["task"] == "gsm8k"
    again = subprocess.run(["bash", str(script), str(out), *extra], env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0 and "12 items already done" in again.stdout, again.stdout + again.stderr


def test_layer_controls_memory_check_names_the_need_and_the_way_out():
    assert measure.layer_controls_memory_problem(134_515_008, 24 * 2**30) is None  # SmolLM2 on 24 GiB
    problem = measure.layer_controls_memory_problem(4_190_000_000, 80 * 2**30)   # 4B on an 80 GB GPU
    assert "94 GiB" in problem and "4.19B" in problem and "--no-layer-controls" in problem


def test_malformed_line_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    lines = FIXTURE.read_text().splitlines()
    bad.write_text("\n".join(lines[:2] + ['{"question": "no answer marker", "answer": "42"}'] + lines[2:]) + "\n")
    out = tmp_path / "out"
    args = [a if a != str(FIXTURE) else str(bad) for a in _args(out)]
    assert main(args) == 2
    assert f"{bad}:3" in capsys.readouterr().err
    assert not out.exists()
    bad.write_text(lines[0] + "\n{not json\n")
    assert main(args) == 2
    assert f"{bad}:2" in capsys.readouterr().err and not out.exists()


def test_missing_file_gpu_preset_and_bad_group_sizes(tmp_path, capsys):
    out = tmp_path / "out"
    args = [a if a != str(FIXTURE) else str(tmp_path / "nope.jsonl") for a in _args(out)]
    assert main(args) == 2
    assert "not found" in capsys.readouterr().err
    gpu = _args(out) + ["--model", "nemotron-mini-4b"]
    assert main(gpu) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
    assert main(_args(out) + ["--group-sizes", "1,4"]) == 2
    assert "--group-sizes" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(_args(out) + ["--group-sizes", "two"])
    assert exc.value.code == 2
    assert not out.exists()


# -- reward ------------------------------------------------------------------------------------
@pytest.mark.parametrize("prediction", ["18", "18.0", "$18", "The answer is 18.", "so 3*6 = 18 in total",
                                        "\\boxed{18}", "The answer is $18.00"])
def test_reward_accepts_equivalent_answers(prediction):
    assert reward.binary_reward(prediction, "18") == 1.0


@pytest.mark.parametrize("prediction", ["17", "The answer is 180", "no number here", "The answer is 19, not 18",
                                        "18 eggs? No: 19"])
def test_reward_rejects_wrong_answers(prediction):
    # the stated answer counts, else the last number: "The answer is 19, not 18" states 19
    assert reward.binary_reward(prediction, "18") == 0.0


def test_reward_thousands_separator_and_partial_credit():
    ref = data.reference_from_answer("250 * 4 = 1000\n#### 1,000")
    assert ref == "1000"
    assert reward.binary_reward("The answer is 1,000", ref) == 1.0
    assert reward.binary_reward("1000", "1,000") == 1.0
    assert reward.partial_reward("The answer is 900", "1000") == pytest.approx(0.9)
    assert reward.partial_reward("The answer is 5000", "1000") == 0.0
    assert reward.partial_reward("nothing", "1000") == 0.0
    assert reward.extract_answer("I think 7", strict=True) is None
    assert reward.extract_answer("The answer is 18. Wait, 19") == "18"  # an explicit statement beats a stray number


def test_arith_is_deterministic_and_correct():
    a, b = data.make_arith(20, 2, "+-*", seed=3), data.make_arith(20, 2, "+-*", seed=3)
    assert a == b and a != data.make_arith(20, 2, "+-*", seed=4)
    for p in a:
        x, op, y = p.question.removeprefix("What is ").removesuffix("?").split()
        assert eval(f"{x}{op}{y}") == int(p.reference)  # noqa: S307 - our own generated digits


# -- Gram-derived matrices against an explicit G ---------------------------------------------------
def test_gram_derived_matrices_match_explicit_G():
    tok = models.tiny_tokenizer()
    model = models.tiny_random_model(tok, seed=1).double()
    R, L, start = 4, 12, 5
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(4, len(tok), (R, L), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0  # ragged completions, right-padded as the sampler makes them
    mask[3, 7:] = 0
    a = np.array([1.0, -0.5, 2.0, -2.5])
    store_g, _ = per_rollout_gradients(model, ids, mask, start, "mean")
    G = torch.cat([store_g[n] for n in sorted(store_g)], dim=1).numpy()
    res = rollout_gram(model, ids, mask, start, "mean", advantages=a, singular_values=True)
    K = res.K.numpy()
    np.testing.assert_allclose(K, G @ G.T, rtol=1e-9, atol=1e-12)
    grams = measure.derived_grams(K, a)
    C = measure.centring(R)
    np.testing.assert_allclose(grams["centred"], (C @ G) @ (C @ G).T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grams["weighted"], (np.diag(a) @ G) @ (np.diag(a) @ G).T, rtol=1e-9, atol=1e-12)
    assert measure.group_gradient_norm(K, a) == pytest.approx(np.linalg.norm(a @ G) / R, rel=1e-9)
    # the controls' per-layer gradients come from the same engine call as weightings
    controls = {"ones": np.ones(R), "gaussian": np.array([0.3, -1.2, 0.7, 2.0])}
    both = rollout_gram(model, ids, mask, start, "mean", advantages=a, weightings=controls, singular_values=True)
    assert set(both.weighted_gradients) == set(controls) == set(both.weighted_singular_values)
    for name, w in res.grpo_gradients.items():
        reference = a @ store_g[name].numpy()
        np.testing.assert_allclose(w.numpy().reshape(-1), reference, rtol=0, atol=1e-12 * np.abs(reference).max())
        np.testing.assert_allclose(both.grpo_gradients[name].numpy(), w.numpy(), rtol=0,
                                   atol=1e-13 * np.abs(reference).max())
        for label, vector in controls.items():
            expected = vector @ store_g[name].numpy()
            got = both.weighted_gradients[label][name].numpy().reshape(-1)
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(np.abs(expected).max(), 1e-300))
            if w.ndim == 2:
                np.testing.assert_allclose(both.weighted_singular_values[label][name].numpy(),
                                           np.linalg.svd(expected.reshape(w.shape), compute_uv=False),
                                           rtol=1e-9, atol=1e-12 * np.abs(expected).max())


# -- store -------------------------------------------------------------------------------------
def test_read_jsonl_drops_only_a_torn_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    store.append_jsonl(path, {"a": 1})
    store.append_jsonl(path, {"a": 2})
    with open(path, "ab") as fh:
        fh.write(b'{"a": 3')
    records, torn = store.read_jsonl(path, repair=True)
    assert records == [{"a": 1}, {"a": 2}] and torn == 7
    assert path.read_bytes().endswith(b'{"a":2}\n')
    path.write_bytes(b'{"a": 1}\n{bad\n{"a": 2}\n')
    with pytest.raises(ValueError, match=":2: corrupt"):
        store.read_jsonl(path)


def test_default_model_and_vocab_mask():
    assert models.default_model(cuda=True)[0] == "nemotron-mini-4b"
    assert models.default_model(cuda=False)[0] == "smollm2-135m"
    from grpo_verify.empirical.sampling import _VocabMask, derived_seed
    scores = _VocabMask(3)(None, torch.zeros(2, 5))
    assert torch.isinf(scores[:, 3:]).all() and (scores[:, :3] == 0).all()
    assert derived_seed(0, 1, 2) == derived_seed(0, 1, 2) != derived_seed(0, 2, 1)


def test_local_model_directory(tmp_path):
    """--model DIR loads a saved (safetensors) model and tokenizer, trust_remote_code off."""
    tok = models.tiny_tokenizer()
    models.tiny_random_model(tok, seed=0).save_pretrained(tmp_path / "model")
    tok.save_pretrained(tmp_path / "model")
    args = [a if a != "tiny-random" else str(tmp_path / "model") for a in _args(tmp_path / "out")]
    assert main(args + ["--num-prompts", "1", "--group-sizes", "2", "--no-controls"]) == 0
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["model"]["kind"] == "local"
    (record,) = store.read_jsonl(tmp_path / "out" / "results.jsonl")[0]
    assert set(record["measure"]["conditions"]) == {"grpo"}


# -- training: TRL's GRPOTrainer with GRPOVerifyCallback ----------------------------------------------
TRAIN = ["--num-prompts", "2", "--group-sizes", "2", "--no-controls", "--reward", "partial", "--train-steps", "3",
         "--train-prompts-per-step", "2", "--train-group-size", "4", "--lr", "1e-2", "--train-spectra-every", "2"]


@pytest.fixture(scope="module")
def train_run(tmp_path_factory) -> Path:
    pytest.importorskip("trl")
    out = tmp_path_factory.mktemp("emp_train") / "train"
    assert main(_args(out, *TRAIN, plots=True)) == 0
    return out


def test_train_steps_run_trls_trainer_and_write_a_record_per_step(train_run):
    """--train-steps 3 goes through trl.GRPOTrainer: one train.jsonl line per step with the keys the report and
    the ledger read, the zero-advantage fraction equal to TRL's frac_reward_zero_std of the same step, update
    sparsity every step and the SVD-based metrics on the --train-spectra-every steps and the last."""
    records, torn = store.read_jsonl(train_run / "train.jsonl")
    assert torn == 0 and [r["step"] for r in records] == [0, 1, 2]
    for r in records:
        assert r["trainer"] == "trl.GRPOTrainer"
        for key in ("mean_reward", "zero_advantage_group_fraction", "sparsity", "frac_reward_zero_std",
                    "gradient_norm", "update_unchanged", "trl", "callback"):
            assert key in r, key
        assert r["zero_advantage_group_fraction"] == r["frac_reward_zero_std"] == r["trl"]["frac_reward_zero_std"]
        assert r["callback"]["zero_adv/group_fraction"] == r["zero_advantage_group_fraction"]
        assert r["prompts"] == [0, 1] and [len(g) for g in r["rewards"]] == [4, 4]  # the problems, in order
        assert r["mean_reward"] == pytest.approx(np.mean(r["rewards"]), abs=1e-6)
        constant = np.mean([len(set(g)) == 1 for g in r["rewards"]])
        assert r["zero_advantage_group_fraction"] == pytest.approx(constant)
        for label in ("step", "since_start"):
            for dtype in ("model", "bf16"):
                assert 0 <= r["update_unchanged"][label][dtype] <= 1
        if r["gradient_norm"]:
            assert set(r["sparsity"]) == {"exact_zero", "le_1e-06_max", "le_0.0001_max", "le_0.01_max"}
            assert r["updated"] and r["update_unchanged"]["step"]["model"] < 1
        else:
            assert r["sparsity"] is None
    assert [r["spectra_measured"] for r in records] == [True, False, True]
    for r in records:
        assert (r["delta_rank_fraction"] is not None) == r["spectra_measured"]
        assert (r["gram"] is not None) == r["spectra_measured"]
        assert r["prompt_ids_match"] is (True if r["spectra_measured"] else None)  # TRL saw the CLI's prompts
    summary = json.loads((train_run / "summary.json").read_text())
    assert [t["step"] for t in summary["train"]] == [0, 1, 2]
    for name in ("train_sparsity.png", "train_sparsity.pdf", "train_updates.png", "train_updates.pdf"):
        assert (train_run / name).is_file(), name
    options = json.loads((train_run / "config.json").read_text())["options"]
    assert options["beta"] == 0 and options["train_spectra_every"] == 2


def test_train_options_map_onto_grpo_config():
    from grpo_verify.empirical.config import config_from_args
    from grpo_verify.empirical.train import grpo_config_kwargs
    cfg = config_from_args(["--train-steps", "5", "--lr", "3e-6", "--train-group-size", "4",
                            "--train-prompts-per-step", "2", "--advantage", "dr_grpo", "--aggregation", "constant",
                            "--beta", "0.04", "--temperature", "0.7", "--top-p", "0.9", "--max-new-tokens", "48",
                            "--seed", "3"])
    k = grpo_config_kwargs(cfg, Path("x"), cpu=True)
    assert (k["learning_rate"], k["num_generations"], k["per_device_train_batch_size"], k["loss_type"],
            k["scale_rewards"], k["beta"], k["temperature"], k["top_p"], k["max_completion_length"], k["seed"],
            k["max_steps"], k["logging_steps"], k["report_to"], k["use_cpu"], k["save_strategy"]) == \
        (3e-6, 4, 8, "dr_grpo", "none", 0.04, 0.7, 0.9, 48, 3, 5, 1, [], True, "no")
    assert grpo_config_kwargs(config_from_args([]), Path("x"), cpu=False)["scale_rewards"] == "group"


@pytest.mark.parametrize("extra, named", [
    (["--advantage", "population"], "--advantage population"),
    (["--advantage", "rloo"], "--advantage rloo"),
    (["--advantage-eps", "1e-6"], "--advantage-eps"),
    (["--loss-type", "dapo"], "--loss-type dapo"),
    (["--loss-type", "grpo", "--aggregation", "sum"], "--loss-type grpo"),
])
def test_train_option_combinations_trl_cannot_express_are_refused(tmp_path, capsys, extra, named):
    pytest.importorskip("trl")
    out = tmp_path / "out"
    assert main(_args(out, *TRAIN, *extra)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and named in err and err.count("\n") == 1, err
    assert not out.exists()


def test_interrupted_training_says_so_and_resume_restarts_it(tmp_path, capsys, monkeypatch):
    """Ctrl-C during training: one line naming the saved steps, exit 130; --resume keeps the measurements and
    reruns the training phase from step 0 (no optimizer state is saved)."""
    pytest.importorskip("trl")
    from grpo_verify.empirical import train as train_mod
    real = train_mod.train

    def one_step_then_ctrl_c(model, tokenizer, problems, cfg, on_step, **kwargs):
        on_step({"step": 0, "mean_reward": 0.0, "zero_advantage_group_fraction": 1.0, "sparsity": None})
        raise KeyboardInterrupt

    out = tmp_path / "ctrl_c"
    monkeypatch.setattr(train_mod, "train", one_step_then_ctrl_c)
    assert main(_args(out, *TRAIN)) == 130
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "1 training steps" in err and "--resume" in err and "step 0" in err, err
    monkeypatch.setattr(train_mod, "train", real)
    assert main(_args(out, *TRAIN, "--resume")) == 0
    assert "training restarts from step 0" in capsys.readouterr().out
    assert [r["step"] for r in store.read_jsonl(out / "train.jsonl")[0]] == [0, 1, 2]


def test_grpo_and_its_controls_are_summarised_over_the_same_groups():
    """C4's comparison is paired: every weighting's rows use exactly the groups where GRPO's gradient is not zero
    (checked on a committed run with degenerate groups, and its committed summary is the paired one)."""
    import json
    from pathlib import Path

    from grpo_verify.empirical import report as empirical_report
    from grpo_verify.empirical.store import read_jsonl

    run = Path(__file__).resolve().parents[1] / "experiments" / "results" / "empirical_cpu_arith16"
    records, _torn = read_jsonl(run / "results.jsonl")
    rows = empirical_report.rows_of(records)
    summary = json.loads((run / "summary.json").read_text())
    committed = {(r["R"], r["matrix"], r["condition"], r["metric"]): r["n"] for r in summary["rows"]}
    for R in (2, 4, 8):
        mixed = sum(not r["measure"]["degenerate"] for r in records if r["R"] == R)
        assert 0 < mixed < sum(r["R"] == R for r in records)  # the run has degenerate groups to skip
        for cond in ("grpo", "gaussian", "gaussian_centred", "ones"):
            assert len(rows[(R, "weighted", cond, "effective_rank")]) == mixed, (R, cond)
            assert committed[(R, "weighted", cond, "effective_rank")] == mixed, (R, cond)


def test_counted_degenerate_groups_leave_the_paired_rows_as_they_were_and_drop_only_their_own_k_rows():
    """A committed run re-read with each degenerate group replaced by its counted record (what --degenerate-groups
    count writes, no K): the weighted, per-layer and gradient-norm rows are value for value the measured run's
    (they already skipped degenerate groups), and the G, centred and layer_gram rows are the measured run's values
    of its mixed groups only. The markdown says so."""
    from pathlib import Path

    import numpy as np

    from grpo_verify.empirical import measure
    from grpo_verify.empirical import report as empirical_report
    from grpo_verify.empirical.store import read_jsonl

    run = Path(__file__).resolve().parents[1] / "experiments" / "results" / "empirical_cpu_arith16"
    records, _torn = read_jsonl(run / "results.jsonl")
    counted = []
    for rec in records:
        m = rec["measure"]
        if m["degenerate"]:
            conds = {c: np.asarray(a) for c, a in m["advantages"].items()}
            m = measure.counted_degenerate_group(conds, 1e-6)
        counted.append({**rec, "measure": m})
    assert sum(not r["measure"].get("measured", True) for r in counted) > 0
    before, after = empirical_report.rows_of(records), empirical_report.rows_of(counted)
    mixed_only = empirical_report.rows_of([r for r in records if not r["measure"]["degenerate"]])
    for key in set(before) | set(after):
        expected = mixed_only[key] if key[1] in ("G", "centred", "layer_gram") else before[key]
        assert after.get(key) == expected, key
    for R in (2, 4, 8):  # a measured degenerate group keeps its K rows
        assert len(before[(R, "G", "-", "effective_rank")]) == sum(r["R"] == R for r in records)
    assert any(len(before[k]) > len(after[k]) for k in before if k[1] == "G")

    class Cfg:
        group_sizes, bootstrap, confidence, seed = (2, 4, 8), 10, 0.95, 0
    summary = empirical_report.summarise(counted, Cfg)
    assert "counted without an engine pass" in empirical_report.markdown(summary, Cfg, "t")
    assert "counted without" not in empirical_report.markdown(empirical_report.summarise(records, Cfg), Cfg, "t")
