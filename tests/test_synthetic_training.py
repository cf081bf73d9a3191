"""Tests of the synthetic GRPO training loop (grpo_verify.training, experiments/synthetic_training.py).

* The loop's gradient (autograd of per_token_loss + aggregate_loss) equals (1/K) sum_k (1/R) sum_i A_ki g_ki
  built from the policies' closed-form scores, which equal per-sequence autograd scores; one SGD step
  moves the parameters by lr * g_hat.
* D6 on short fixed-seed runs: the exact (enumerated) expected zero-gradient fraction rises when every
  prompt starts with p > 1/2 and falls while every p stays below 1/2. The margin is k = 3 standard
  errors of the change across seeds, computed here from the seeds themselves.
* The sampled zero-advantage fraction is an unbiased estimate of the exact one (the per-step
  differences are martingale increments), within 4 standard errors computed from the run; a planted
  bug (advantages without centring, A = r) leaves all-success groups with non-zero advantages and is
  caught at more than 3 standard errors, and its gradient differs from the centred formula.
* Resuming skips finished seed x R runs, reproduces a fresh run exactly, and refuses a changed config;
  the script writes every promised file.
"""

import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from grpo_verify.estimators import group_advantages
from grpo_verify.training import grpo_gradient, make_task, step_metrics, zero_gradient_probability

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "synthetic_training.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("synthetic_training", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


st = _load_script()
K_SE = 3.0  # one-sided margin in standard errors across seeds (normal tail ~0.1 %)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: on a loaded 2-core machine extra torch threads make these tests ~10x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _change_and_se(cfg, metric="exact_zero_frac"):
    """Per-seed change (end - start) of an exact metric, its mean and standard error across seeds."""
    changes = []
    for seed in cfg.seeds:
        rows = st.train_one(cfg, seed, cfg.group_sizes[0])
        changes.append(rows[-1][metric] - rows[0][metric])
    changes = np.array(changes)
    return changes, changes.mean(), changes.std(ddof=1) / np.sqrt(len(changes))


# == the gradient ====================================================================================


@pytest.mark.parametrize("policy", ["tabular", "features"])
@pytest.mark.parametrize("kind", ["grpo", "dr_grpo", "rloo"])
def test_loop_gradient_is_the_group_estimator_from_scores(policy, kind):
    task = make_task((1, 5, 13, 22), policy=policy, init_seed=3)
    generator = torch.Generator().manual_seed(0)
    sequences = task.policy.sample(4, generator)
    rewards = task.rewards(sequences)
    advantages = group_advantages(rewards, kind)
    _, g_hat = grpo_gradient(task.policy, sequences, advantages)
    scores = task.policy.scores(sequences)  # closed form, placed in the flat layout
    manual = (advantages[:, :, None] * scores).mean(dim=1).mean(dim=0)
    assert torch.allclose(g_hat, manual, rtol=0, atol=1e-13)
    # the closed-form scores equal per-sequence autograd gradients of log pi_k(o)
    for k in range(task.policy.num_prompts):
        for i in range(sequences.shape[1]):
            by_autograd = task.policy.flat_gradient(task.policy.log_probs(sequences)[k, i])
            assert torch.allclose(scores[k, i], by_autograd, rtol=0, atol=1e-13)


def test_one_sgd_step_moves_parameters_by_lr_times_g_hat():
    cfg = st.Config(steps=3, correct_counts=(4, 13, 20), lr=0.7)
    seen = []
    st.train_one(cfg, seed=1, group_size=4,
                 on_step=lambda step, task, seqs, rewards, adv, g: seen.append(
                     (task.policy.flat_parameters(), g.clone(),
                      (adv[:, :, None] * task.policy.scores(seqs)).mean(dim=(0, 1)))))
    assert len(seen) == cfg.steps + 1
    for (before, g_hat, manual), (after, _, _) in zip(seen, seen[1:]):
        assert torch.allclose(g_hat, manual, rtol=0, atol=1e-13)
        assert torch.allclose(after - before, cfg.lr * g_hat, rtol=0, atol=1e-12)
    assert any(g.abs().max() > 0 for _, g, _ in seen)  # not vacuous


def test_exact_success_probability_and_zero_gradient_probability():
    task = make_task((3, 11), init_seed=2)
    for k, prompt_policy in enumerate(task.policy.prompts):
        outcomes = prompt_policy.enumerate()
        assert torch.isclose(task.success_probabilities()[k], outcomes.probs[task.correct[k]].sum(), atol=1e-14)
    p = torch.tensor([0.0, 0.3, 0.5, 1.0], dtype=torch.float64)
    assert torch.allclose(zero_gradient_probability(p, 3), torch.tensor([1.0, 0.37, 0.25, 1.0], dtype=torch.float64))


def test_structural_zeros_are_exact_zeros_and_features_policy_is_dense():
    for policy in ("tabular", "features"):
        cfg = st.Config(steps=15, correct_counts=(2, 9, 18, 24), policy=policy)
        rows = st.train_one(cfg, seed=0, group_size=2)
        for row in rows:
            assert row["frac_zero_abs"] >= row["frac_structural_zero"] - 1e-12
            assert abs(row["frac_structural_zero"] - row["frac_untouched"] - row["frac_degenerate_only"]) < 1e-12
            if row["zero_adv_frac"] == 1.0:
                assert row["grad_norm"] == 0.0 and row["frac_zero_abs"] == 1.0
        if policy == "features":  # shared dense W: every rollout touches every coordinate
            assert all(row["frac_untouched"] == 0.0 for row in rows)
        else:  # a tabular group cannot visit all 13 rows of its prompt
            assert all(row["frac_untouched"] > 0 for row in rows)


def test_step_metrics_on_a_hand_made_batch():
    # two groups of R = 2 over P = 3 coordinates; group 1 is degenerate
    scores = torch.tensor([[[1.0, 0.0, 2.0], [2.0, 0.0, 4.0]], [[0.0, 3.0, 0.0], [0.0, 1.0, 0.0]]], dtype=torch.float64)
    rewards = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    advantages = group_advantages(rewards, "dr_grpo")
    g_hat = (advantages[:, :, None] * scores).mean(dim=(0, 1))
    metrics = step_metrics(g_hat, rewards, advantages, scores)
    assert metrics["zero_adv_frac"] == 0.5
    assert metrics["frac_untouched"] == 0.0
    assert metrics["frac_degenerate_only"] == pytest.approx(1 / 3)  # coordinate 1
    assert metrics["frac_zero_abs"] == pytest.approx(1 / 3)
    assert metrics["erank_AG"] == pytest.approx(0.5)  # rank-1 for group 0, 0 for the degenerate group


# == D6 on short runs ================================================================================


def test_exact_zero_gradient_probability_rises_when_every_prompt_starts_above_half():
    cfg = st.Config(steps=40, seeds=tuple(range(6)), group_sizes=(4,), correct_counts=(16, 19, 22))
    start_p = [st.train_one(replace(cfg, steps=0), seed, 4)[0] for seed in cfg.seeds]
    assert all(row[f"p_{k}"] > 0.5 for row in start_p for k in range(3)), "premise: every p starts above 1/2"
    changes, mean, se = _change_and_se(cfg)
    assert mean > K_SE * se, (changes, mean, se)


def test_exact_zero_gradient_probability_falls_while_every_prompt_stays_below_half():
    cfg = st.Config(steps=15, seeds=tuple(range(6)), group_sizes=(4,), correct_counts=(4, 5, 6), lr=0.5)
    for seed in cfg.seeds:
        rows = st.train_one(cfg, seed, 4)
        assert all(row[f"p_{k}"] < 0.5 for row in rows for k in range(3)), "premise: every p stays below 1/2"
    changes, mean, se = _change_and_se(cfg)
    assert mean < -K_SE * se, (changes, mean, se)


def _zero_fraction_bias(cfg, advantages=None):
    """Mean and standard error of (sampled zero-advantage fraction - exact expected fraction) over all steps."""
    diffs = np.concatenate([[row["zero_adv_frac"] - row["exact_zero_frac"]
                             for row in st.train_one(cfg, seed, cfg.group_sizes[0], advantages)]
                            for seed in cfg.seeds])
    return diffs.mean(), diffs.std(ddof=1) / np.sqrt(diffs.size)


def test_sampled_zero_advantage_fraction_is_unbiased_and_a_planted_uncentred_advantage_is_caught():
    cfg = st.Config(steps=40, seeds=(0, 1, 2), group_sizes=(2,), correct_counts=(3, 9, 14, 20, 25))
    bias, se = _zero_fraction_bias(cfg)
    assert abs(bias) < 4 * se, (bias, se)
    uncentred = lambda rewards: rewards.clone()  # noqa: E731  planted bug: A = r, no group baseline
    bug_bias, bug_se = _zero_fraction_bias(cfg, uncentred)
    assert bug_bias < -K_SE * bug_se, (bug_bias, bug_se)  # all-success groups no longer count as zero
    # and its gradient is not the centred group estimator
    task = make_task(cfg.correct_counts)
    sequences = task.policy.sample(2, torch.Generator().manual_seed(0))
    rewards = task.rewards(sequences)
    assert rewards.sum() > 0, "premise: a success in the batch (else A = r = 0 = the centred advantage)"
    _, g_bug = grpo_gradient(task.policy, sequences, uncentred(rewards))
    centred = group_advantages(rewards, "dr_grpo")
    manual = (centred[:, :, None] * task.policy.scores(sequences)).mean(dim=(0, 1))
    assert (g_bug - manual).abs().max() > 1e-3


# == files and resuming ==============================================================================


def test_resume_skips_finished_runs_reproduces_them_and_refuses_another_config(tmp_path):
    cfg = st.Config(steps=4, seeds=(0, 1), group_sizes=(2,), correct_counts=(5, 20), out=str(tmp_path / "a"))
    assert st.run_all(cfg, log=lambda _: None) == [(0, 2), (1, 2)]
    first = {seed: st.part_paths(Path(cfg.out), seed, 2)[0] for seed in (0, 1)}
    stamps = {seed: (path.stat().st_mtime_ns, path.read_bytes()) for seed, path in first.items()}
    more = replace(cfg, seeds=(0, 1, 2))
    assert st.run_all(more, log=lambda _: None) == [(2, 2)]
    assert {seed: (path.stat().st_mtime_ns, path.read_bytes()) for seed, path in first.items()} == stamps
    # a part without its .json marker is unfinished and is redone
    st.part_paths(Path(cfg.out), 1, 2)[1].unlink()
    assert st.run_all(more, log=lambda _: None) == [(1, 2)]
    # resumed results equal a fresh run
    fresh = replace(more, out=str(tmp_path / "b"))
    st.run_all(fresh, log=lambda _: None)
    for seed in more.seeds:  # byte for byte (NaN != NaN rules out comparing the parsed rows)
        assert (st.part_paths(Path(more.out), seed, 2)[0].read_bytes()
                == st.part_paths(Path(fresh.out), seed, 2)[0].read_bytes())
    with pytest.raises(SystemExit, match="fingerprint"):
        st.run_all(replace(more, lr=0.5), log=lambda _: None)
    assert not list(Path(cfg.out).rglob(".*"))  # no temporary files left behind


def test_script_writes_csv_summary_and_plots(tmp_path, capsys):
    out = tmp_path / "run"
    summary = st.main(["--steps", "6", "--seeds", "0,1", "--group-sizes", "2,4",
                       "--correct-counts", "4,20", "--out", str(out)])
    rows = st.read_csv(out / "metrics.csv")
    assert len(rows) == 2 * 2 * 7
    assert {(row["seed"], row["R"]) for row in rows} == {(s, r) for s in (0, 1) for r in (2, 4)}
    stored = json.loads((out / "summary.json").read_text())
    assert set(stored["per_R"]) == {"2", "4"} and stored["fingerprint"] == summary["fingerprint"]
    assert stored["per_R"]["2"]["exact_zero_frac"]["start"]["mean"] == pytest.approx(
        np.mean([row["exact_zero_frac"] for row in rows if row["R"] == 2 and row["step"] == 0]))
    for name in ("zero_advantage_fraction", "exact_zero_gradient_probability", "success_probability",
                 "effective_rank", "near_zero_coordinates"):
        for suffix in (".png", ".pdf"):
            assert (out / f"{name}{suffix}").stat().st_size > 1000
    assert "exact_zero_frac" in capsys.readouterr().out
    # running again does no training
    st.main(["--steps", "6", "--seeds", "0,1", "--group-sizes", "2,4", "--correct-counts", "4,20",
             "--out", str(out)])
    assert capsys.readouterr().out.count("skip") == 4


# == the course of the exact zero-gradient fraction: start, minimum, end ==============================


def test_minimum_course_of_a_series_with_a_known_minimum():
    steps = np.arange(11, dtype=float)
    # seed 0 dips to 0.1 at step 3, seed 1 to 0.3 at step 7: per-seed minima mean 0.2 at step 5;
    # the seed-mean curve has its minimum at step 5 (between the two dips), value computed by hand
    seed0 = 0.1 + 0.05 * (steps - 3) ** 2
    seed1 = 0.3 + 0.05 * (steps - 7) ** 2
    course = st.minimum_course(np.stack([seed0, seed1]))
    assert course["per_seed_min"]["mean"] == pytest.approx(0.2)
    assert course["per_seed_argmin_step"]["mean"] == pytest.approx(5.0)
    assert (course["per_seed_argmin_step"]["min"], course["per_seed_argmin_step"]["max"]) == (3.0, 7.0)
    mean_curve = (seed0 + seed1) / 2
    assert course["argmin_step_of_seed_mean"] == 5 == int(mean_curve.argmin())
    assert course["min_of_seed_mean"] == pytest.approx(0.2 + 0.05 * 4)  # (0.1 + 0.2 + 0.3 + 0.2) / 2
    assert course["start"] == pytest.approx(mean_curve[0]) and course["end"] == pytest.approx(mean_curve[-1])
    # a monotone series has its minimum at the first / last step
    assert st.minimum_course(np.stack([steps, steps]))["argmin_step_of_seed_mean"] == 0
    assert st.minimum_course(np.stack([-steps]))["argmin_step_of_seed_mean"] == 10


def test_course_table_and_readme_update(tmp_path):
    summary = st.main(["--steps", "6", "--seeds", "0,1", "--group-sizes", "2,4", "--out", str(tmp_path / "o")])
    readme = tmp_path / "o" / "README.md"
    readme.write_text(f"top\n{st.TABLE_BEGIN}\nold\n{st.TABLE_END}\nbottom\n")
    assert st.update_readme(readme, summary)
    text = readme.read_text()
    assert text.startswith("top\n") and text.endswith("bottom\n") and "old" not in text
    course = summary["per_R"]["4"]["exact_zero_frac_course"]
    assert f"{course['min_of_seed_mean']:.3f} at {course['argmin_step_of_seed_mean']}" in text
    # the course is recomputed from the rows, equal to the per-seed minima in summary
    assert course["per_seed_min"] == summary["per_R"]["4"]["exact_zero_frac_min"]
