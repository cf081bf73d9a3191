"""Behaviours of python -m grpo_verify.empirical that no other test pins down, each checked against an
expectation written out by hand here; each test was shown to fail on a plausible one-line bug in
grpo_verify/empirical/ and to pass on the real code.

- a negative answer keeps its sign (the model's answer, GSM8K's "#### -3", the arith task's a - b);
- the bootstrap interval splits 1 - confidence between its two tails (exact cases);
- --train-group-size 1 is refused in one line, before the model loads;
- --plots / --no-plots (and the other runtime options) are not part of a run's identity on --resume;
- the problem window (--prompt-offset, --num-prompts), the operand range of the arith task, the
  reward counts of summary.json, the torn-line repair and the option boundaries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("math_verify")

from grpo_verify.empirical import __main__ as cli  # noqa: E402
from grpo_verify.empirical import data, models, report, reward, store  # noqa: E402
from grpo_verify.empirical.config import Config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "gsm8k_small.jsonl"
TINY = ["--model", "tiny-random", "--device", "cpu", "--no-progress", "--bootstrap", "20", "--max-new-tokens", "4",
        "--group-sizes", "2", "--task", "arith", "--arith-digits", "1", "--threads", "1"]


@pytest.fixture
def no_model(monkeypatch):
    """Fail the test if the model is loaded: the refusal must come first."""
    def fail(*args, **kwargs):
        pytest.fail("the model was loaded before the bad input was refused")
    monkeypatch.setattr(models, "load", fail)


# -- 4. a negative answer keeps its sign ---------------------------------------------------------------
@pytest.mark.parametrize("completion, answer", [
    ("The answer is -3", "-3"),
    ("The answer is: -3.", "-3"),
    ("The answer is $-3", "-3"),
    ("The answer is -1,000", "-1,000"),
    ("The answer is -0.5", "-0.5"),
    ("\\boxed{-3}", "-3"),
    ("5 - 8 gives -3", "-3"),               # no statement: the last number, with its sign
    ("so the result is -12.", "-12"),
    ("we get -.5", "-.5"),
])
def test_a_negative_answer_keeps_its_minus_sign(completion, answer):
    assert reward.extract_answer(completion) == answer


@pytest.mark.parametrize("completion", ["The answer is -3", "The answer is: -3.", "The answer is $-3",
                                        "The answer is -3, not 4 or 5.", "\\boxed{-3} since 2 - 5 < 1"])
def test_a_negative_stated_answer_is_the_statement_not_the_fallback(completion):
    """The statement itself must carry the sign: strict scoring reads nothing else, and a later number
    must not stand in for it."""
    assert reward.extract_answer(completion, strict=True) == "-3"
    assert reward.extract_answer(completion) == "-3"
    assert reward.binary_reward(completion, "-3", strict=True) == 1.0


@pytest.mark.parametrize("completion", ["The answer is -3", "so x = -3", "\\boxed{-3}"])
def test_a_negative_answer_is_graded_against_its_sign(completion):
    assert reward.binary_reward(completion, "-3") == 1.0
    assert reward.binary_reward(completion, "3") == 0.0
    assert reward.partial_reward(completion, "3") == 0.0                       # 1 - min(1, 6 / 3)
    assert reward.partial_reward(completion.replace("-3", "-2"), "-3") == pytest.approx(2 / 3, rel=1e-12)


def test_a_gsm8k_negative_reference_keeps_its_sign(tmp_path):
    assert data.reference_from_answer("He owes 3.\n#### -3") == "-3"
    assert data.reference_from_answer("#### -1,250") == "-1250"
    path = tmp_path / "neg.jsonl"
    path.write_text(json.dumps({"question": "2 - 5?", "answer": "2 - 5 = -3\n#### -3"}) + "\n")
    [problem] = data.load_gsm8k_file(path)
    assert problem.reference == "-3"
    assert reward.binary_reward("The answer is -3.", problem.reference) == 1.0
    assert reward.binary_reward("The answer is 3.", problem.reference) == 0.0


def test_one_digit_subtraction_has_negative_answers_graded_correctly():
    problems = data.make_arith(40, 1, "-", seed=0)
    negative = 0
    for p in problems:
        a, op, b = p.question.removeprefix("What is ").removesuffix("?").split()
        assert op == "-"
        value = int(a) - int(b)
        assert p.reference == str(value)
        assert reward.binary_reward(f"The answer is {value}.", p.reference) == 1.0
        assert reward.binary_reward(f"{a} - {b} = {value}", p.reference) == 1.0    # the last number, signed
        if value < 0:
            negative += 1
            assert reward.binary_reward(f"The answer is {-value}.", p.reference) == 0.0
            assert reward.binary_reward(f"{a} - {b} = {-value}", p.reference) == 0.0
    assert negative >= 5  # 1-digit a - b is negative for 45 of the 100 pairs


# -- 5. the bootstrap interval: (1 - confidence) / 2 in each tail -------------------------------------------
def test_bootstrap_interval_puts_half_of_one_minus_confidence_in_each_tail():
    """Values (0, 0, 1): a resampled mean is 0, 1/3, 2/3 or 1 with probabilities 8/27, 12/27, 6/27, 1/27.
    95 %: the 97.5 % quantile lies in the top atom (P(mean < 1) = 26/27 = 0.963 < 0.975), so the interval
    is [0, 1]; with 5 % in each tail it would end at 2/3 (0.95 < 0.963)."""
    lo, hi = report.bootstrap_ci([0.0, 0.0, 1.0], 20000, 0.95, seed=1)
    assert (lo, hi) == (0.0, 1.0)


def test_bootstrap_interval_at_sixty_percent_confidence():
    """Values (0, 1): a resampled mean is 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4. At 60 % the 20 % and
    80 % quantiles fall in the outer atoms: [0, 1]; the 40 % and 60 % quantiles would both be 1/2."""
    assert report.bootstrap_ci([0.0, 1.0], 20000, 0.6, seed=3) == (0.0, 1.0)
    assert report.bootstrap_ci([0.0, 1.0], 20000, 0.4, seed=3) == (0.5, 0.5)  # 30 % / 70 %: the middle atom


def test_bootstrap_interval_is_ordered_and_holds_the_mean():
    values = np.linspace(1.0, 4.0, 7) ** 2
    lo, hi = report.bootstrap_ci(values, 500, 0.9, seed=0)
    assert lo < values.mean() < hi
    assert report.bootstrap_ci([2.5], 100, 0.95, seed=0) == (2.5, 2.5)
    assert report.bootstrap_ci([1.0, 3.0], 0, 0.95, seed=0) == (2.0, 2.0)
    assert all(np.isnan(report.bootstrap_ci([], 100, 0.95, seed=0)))


# -- 6. --train-group-size 1 --------------------------------------------------------------------------------
def test_train_group_size_one_is_refused_in_one_line_before_the_model_loads(tmp_path, capsys, no_model):
    out = tmp_path / "run"
    code = cli.main(TINY + ["--num-prompts", "1", "--train-steps", "1", "--train-group-size", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err == "error: --train-group-size must be >= 2, got 1\n"
    assert not out.exists()


def test_train_group_size_two_is_accepted():
    Config(train_group_size=2).validate()
    with pytest.raises(ValueError, match="--train-group-size must be >= 2, got 0"):
        Config(train_group_size=0).validate()


def test_train_group_size_one_from_the_command_line_exits_2_without_a_traceback(tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "grpo_verify.empirical", *TINY, "--train-steps", "1",
                           "--train-group-size", "1", "--out", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr == "error: --train-group-size must be >= 2, got 1\n"
    assert not out.exists()


# -- 7. runtime options are not part of a run's identity --------------------------------------------------------
RUNTIME = {"out", "resume", "threads", "progress", "plots"}


def test_the_resume_identity_is_every_option_but_the_runtime_ones():
    every = {f.name for f in fields(Config)}
    assert set(Config().compared()) == every - RUNTIME
    a = Config(plots=True, progress=True, threads=None, out="a", resume=False)
    b = Config(plots=False, progress=False, threads=3, out="b", resume=True)
    assert a.compared() == b.compared()
    assert Config(temperature=0.5).compared() != Config().compared()


@pytest.mark.parametrize("first, second", [([], ["--no-plots"]), (["--no-plots"], [])])
def test_a_run_resumed_with_the_other_plots_flag_resumes(tmp_path, capsys, first, second):
    out = tmp_path / "run"
    args = TINY + ["--num-prompts", "2", "--no-controls", "--out", str(out)]
    with pytest.raises(cli.Interrupted):
        cli.main(args + first, stop_after_items=1)
    done = (out / "results.jsonl").read_bytes()
    assert done.count(b"\n") == 1
    capsys.readouterr()
    assert cli.main(args + second + ["--resume"]) == 0
    printed = capsys.readouterr().out
    assert "--resume: 1 items already done" in printed
    assert "done: 2 items (1 this run)" in printed
    after = (out / "results.jsonl").read_bytes()
    assert after.startswith(done) and after.count(b"\n") == 2  # the first item kept, not measured again
    assert (out / "effective_rank_vs_R.png").exists() == ("--no-plots" not in second)


# -- the problem window: --prompt-offset and --num-prompts ------------------------------------------------------
def _fixture_rows():
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def test_the_problem_window_skips_offset_problems_and_renumbers_from_zero(capsys):
    rows = _fixture_rows()
    got = data.load_gsm8k_file(FIXTURE, limit=2, offset=1)
    assert [p.question for p in got] == [rows[1]["question"], rows[2]["question"]]
    assert [p.index for p in got] == [0, 1]
    assert [p.source for p in got] == ["gsm8k_small.jsonl:2", "gsm8k_small.jsonl:3"]
    assert capsys.readouterr().out == ""  # exactly as many as asked for: nothing to say
    rest = data.load_gsm8k_file(FIXTURE, limit=len(rows) - 2, offset=2)
    assert [p.question for p in rest] == [r["question"] for r in rows[2:]]
    assert capsys.readouterr().out == ""
    with pytest.raises(data.DataError, match="no problems left after --prompt-offset"):
        data.load_gsm8k_file(FIXTURE, limit=1, offset=len(rows))


def test_a_blank_line_does_not_shift_the_problem_numbers(tmp_path):
    rows = _fixture_rows()[:2]
    path = tmp_path / "blank.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n")
    got = data.load_gsm8k_file(path)
    assert [p.index for p in got] == [0, 1]
    assert [p.source for p in got] == ["blank.jsonl:1", "blank.jsonl:3"]


def test_the_arith_problems_after_an_offset_are_numbered_from_zero():
    """Problem.index is "the position in the task's problem list (after --prompt-offset)", as for GSM8K."""
    cfg = Config(task="arith", num_prompts=3, prompt_offset=2, arith_digits=1)
    got = cli.load_problems(cfg)
    expected = data.make_arith(5, 1, "+-*", 0)[2:]
    assert [p.question for p in got] == [p.question for p in expected]
    assert [p.index for p in got] == [0, 1, 2]


def test_the_reference_is_the_number_after_the_last_marker():
    assert data.reference_from_answer("first #### 3 then\n#### 5") == "5"


@pytest.mark.parametrize("digits, lo, hi", [(1, 0, 9), (2, 10, 99), (3, 100, 999)])
def test_arith_operands_have_exactly_the_asked_digits(digits, lo, hi):
    seen = set()
    for p in data.make_arith(400, digits, "+", seed=5):
        a, _, b = p.question.removeprefix("What is ").removesuffix("?").split()
        seen.update((int(a), int(b)))
    assert min(seen) >= lo and max(seen) <= hi
    if digits == 1:
        assert seen == set(range(10))  # 800 draws reach both ends of 0..9


# -- summary.json's reward counts -----------------------------------------------------------------------------
def _record(prompt, R, rewards, degenerate):
    spec = {"metrics": {m: 1.0 for m in report.METRICS}}
    return {"prompt": prompt, "R": R, "rewards": rewards,
            "measure": {"degenerate": degenerate, "G": spec, "centred": spec,
                        "layer_gram": {m: {"median": 1.0} for m in report.METRICS},
                        "conditions": {"grpo": {"zero_gradient": degenerate, "gradient_norm": 0.0, "weighted": spec}}}}


def test_the_reward_counts_of_a_summary():
    records = [_record(0, 2, [0.0, 0.0], True), _record(1, 2, [0.0, 1.0], False), _record(2, 2, [1.0, 1.0], True),
               _record(3, 2, [1.0, 0.0], False)]
    summary = report.summarise(records, Config(group_sizes=(2, 4), bootstrap=10))
    assert summary["counts"]["2"] == {"items": 4, "degenerate": 2, "all_zero_reward": 1, "all_one_reward": 1,
                                      "mean_reward": 0.5, "counted_without_k": 0}
    assert summary["counts"]["4"] == {"items": 0, "degenerate": 0, "all_zero_reward": 0, "all_one_reward": 0,
                                      "mean_reward": None, "counted_without_k": 0}
    grpo = next(r for r in summary["rows"] if (r["R"], r["matrix"], r["condition"], r["metric"]) ==
                (2, "weighted", "grpo", "effective_rank"))
    assert grpo["n"] == 2  # the two mixed groups only


# -- the store: a torn line that ends in a newline ----------------------------------------------------------
def test_a_newline_terminated_undecodable_last_line_is_dropped_and_counted(tmp_path):
    """store.read_jsonl's own comment: "a newline-terminated but undecodable final line (e.g. a torn
    multi-byte write): drop it too". Bytes that are not UTF-8 are undecodable as well."""
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n{"a": \xff\n')
    records, torn = store.read_jsonl(path, repair=True)
    assert records == [{"a": 1}, {"a": 2}]
    assert torn == len(b'{"a": \xff') + 1
    assert path.read_bytes() == b'{"a":1}\n{"a":2}\n'
    store.append_jsonl(path, {"a": 3})
    assert store.read_jsonl(path) == ([{"a": 1}, {"a": 2}, {"a": 3}], 0)
    path.write_bytes(b'{"a":1}\n\xff\n{"a":2}\n')  # before the end: corruption, named by its line
    with pytest.raises(ValueError, match=":2: corrupt record"):
        store.read_jsonl(path)


def test_a_torn_line_without_a_newline_is_truncated_to_the_last_whole_record(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":22}\n{"a"')
    records, torn = store.read_jsonl(path, repair=False)
    assert (records, torn) == ([{"a": 1}, {"a": 22}], 4)
    assert path.read_bytes().endswith(b'{"a"')  # not repaired unless asked
    store.read_jsonl(path, repair=True)
    assert path.read_bytes() == b'{"a":1}\n{"a":22}\n'
    path.write_bytes(b'{"a":1}\n{"a": 2\n')  # newline-terminated but not JSON: dropped, newline counted
    assert store.read_jsonl(path, repair=True) == ([{"a": 1}], len(b'{"a": 2') + 1)
    assert path.read_bytes() == b'{"a":1}\n'


# -- option boundaries ---------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [dict(bootstrap=0), dict(train_steps=0), dict(prompt_offset=0), dict(num_prompts=1),
                                     dict(threads=1), dict(train_spectra_every=1), dict(top_p=1.0),
                                     dict(confidence=0.5), dict(group_sizes=(2,)), dict(train_prompts_per_step=1),
                                     dict(beta=0.0, max_grad_norm=0.0), dict(sparsity_thresholds=(0.5,))])
def test_option_values_at_their_lower_or_upper_bound_are_accepted(options):
    Config(**options).validate()


@pytest.mark.parametrize("options, named", [
    (dict(confidence=1.0), "--confidence"), (dict(confidence=0.0), "--confidence"), (dict(top_p=0.0), "--top-p"),
    (dict(group_sizes=(2, 4, 2)), "duplicate"), (dict(num_prompts=0), "--num-prompts"),
    (dict(bootstrap=-1), "--bootstrap"), (dict(train_prompts_per_step=0), "--train-prompts-per-step"),
    (dict(sparsity_thresholds=(1.0,)), "--sparsity-thresholds"), (dict(temperature=0.0), "--temperature"),
    (dict(arith_ops="+/"), "--arith-ops"), (dict(beta=-0.1), "--beta"),
])
def test_option_values_past_their_bound_are_refused(options, named):
    with pytest.raises(ValueError, match=named):
        Config(**options).validate()
