"""python -m grpo_verify.empirical as a careful user meets it: the defaults it takes on a CPU and on a
GPU, bad input refused before any work with a message naming the problem (exit 2, no traceback,
nothing written), and Ctrl-C ending with one line that says how to resume."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from grpo_verify.empirical import __main__ as cli
from grpo_verify.empirical import models
from grpo_verify.empirical.config import Config, build_parser
from support import listing

FIXTURE = Path(__file__).parent / "fixtures" / "gsm8k_small.jsonl"
TINY = ["--model", "tiny-random", "--device", "cpu", "--no-progress", "--no-plots", "--bootstrap", "20",
        "--max-new-tokens", "4", "--group-sizes", "2", "--num-prompts", "1"]


@pytest.fixture
def no_model(monkeypatch):
    """Fail the test if the model is loaded: every check below must come first."""
    def fail(*args, **kwargs):
        pytest.fail("the model was loaded before the bad input was refused")
    monkeypatch.setattr(models, "load", fail)


def refused(code: int, err: str, *phrases: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("error: ") and err.count("\n") == 1, err  # one line
    for phrase in phrases:
        assert phrase in err, (phrase, err)


# -- the defaults -----------------------------------------------------------------------------------
def test_cpu_defaults_are_the_fast_offline_run_and_say_why():
    cfg, notes = Config().resolved(cuda=False)
    assert (cfg.task, cfg.num_prompts, cfg.arith_digits, cfg.max_new_tokens, cfg.layer_controls, cfg.threads,
            cfg.degenerate_groups) == ("arith", 10, 1, 64, False, 1, "count")
    assert cfg.group_sizes == (2, 4, 8) and cfg.controls and cfg.temperature == 1.0
    text = "\n".join(notes)
    for option in ("--task arith", "--num-prompts 10", "--arith-digits 1", "--max-new-tokens 64",
                   "--no-layer-controls", "--threads 1", "--degenerate-groups count"):
        assert option in text, option
    assert all("no CUDA device" in note for note in notes)


def test_gpu_defaults_are_the_papers_setting():
    cfg, notes = Config().resolved(cuda=True)
    assert (cfg.task, cfg.num_prompts, cfg.max_new_tokens, cfg.layer_controls, cfg.threads, cfg.degenerate_groups) == \
        ("gsm8k", 20, 128, True, None, "measure")
    assert "the paper's setting" in notes[0]


def test_explicit_options_are_kept_and_a_dataset_file_means_gsm8k():
    given = Config(task="arith", num_prompts=3, arith_digits=2, max_new_tokens=9, layer_controls=True, threads=2,
                   degenerate_groups="measure")
    cfg, notes = given.resolved(cuda=False)
    assert (cfg.task, cfg.num_prompts, cfg.arith_digits, cfg.max_new_tokens, cfg.layer_controls, cfg.threads,
            cfg.degenerate_groups) == ("arith", 3, 2, 9, True, 2, "measure")
    assert notes == []
    assert Config(dataset_file="x.jsonl").resolved(cuda=False)[0].task == "gsm8k"


def test_help_says_what_needs_the_network_what_costs_time_and_what_is_written():
    text = build_parser().format_help()
    for phrase in ("what needs the network", "what dominates the CPU time", "files a run writes", "results.jsonl",
                   "--resume", "default 1 on a CPU", "default on with CUDA, off on a CPU"):
        assert phrase in text, phrase


# -- --out --------------------------------------------------------------------------------------------
def test_out_that_is_a_file_is_refused_before_the_model_loads(tmp_path, capsys, no_model):
    out = tmp_path / "taken"
    out.write_text("x")
    code = cli.main(TINY + ["--task", "arith", "--out", str(out)])
    refused(code, capsys.readouterr().err, f"--out {out}", "it exists and is not a folder")
    assert listing(tmp_path) == ["taken"] and out.read_text() == "x"


def test_out_below_a_file_is_refused(tmp_path, capsys, no_model):
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "run"
    code = cli.main(TINY + ["--task", "arith", "--out", str(out)])
    refused(code, capsys.readouterr().err, f"--out {out}", "is a file, not a folder")
    assert listing(tmp_path) == ["file"]


def test_read_only_out_is_refused(tmp_path, capsys, no_model, locked_folder):
    code = cli.main(TINY + ["--task", "arith", "--out", str(locked_folder / "run")])
    refused(code, capsys.readouterr().err, f"cannot create files in {locked_folder}")
    assert listing(tmp_path) == ["locked"] and listing(locked_folder) == []


# -- --model ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["./no/such/model", "runs/x/model", "missing.gguf", "/nonexistent/m.gguf"])
def test_missing_model_path_says_no_such_file(tmp_path, capsys, no_model, spec):
    out = tmp_path / "run"
    code = cli.main(["--model", spec, "--device", "cpu", "--task", "arith", "--out", str(out), "--no-progress"])
    refused(code, capsys.readouterr().err, f"--model {spec}: no such file or directory")
    assert not out.exists()


def test_empty_model_folder_says_what_it_lacks(tmp_path, capsys, no_model):
    folder = tmp_path / "model"
    folder.mkdir()
    code = cli.main(["--model", str(folder), "--device", "cpu", "--task", "arith", "--out", str(tmp_path / "run")])
    refused(code, capsys.readouterr().err, "the folder lacks config.json, weights (*.safetensors or *.bin)")
    assert listing(tmp_path) == ["model"]


def test_folder_with_only_a_gguf_points_at_the_file(tmp_path, capsys, no_model):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "m.gguf").write_bytes(b"GGUF")
    code = cli.main(["--model", str(folder), "--device", "cpu", "--task", "arith", "--out", str(tmp_path / "run")])
    refused(code, capsys.readouterr().err, "lacks config.json", f"--model {folder / 'm.gguf'}")


# -- data ---------------------------------------------------------------------------------------------
def test_jsonl_syntax_error_gives_one_line_number(tmp_path, capsys, no_model):
    bad = tmp_path / "bad.jsonl"
    lines = FIXTURE.read_text().splitlines()
    bad.write_text("\n".join(lines[:2] + ['{"question": "x", "answer": '] + lines[2:]) + "\n")
    code = cli.main(["--dataset-file", str(bad), "--device", "cpu", "--model", "tiny-random", "--out",
                     str(tmp_path / "run")])
    err = capsys.readouterr().err
    refused(code, err, f"{bad}:3: malformed GSM8K line: not JSON", "column")
    assert "line 1" not in err and "line 3" not in err  # the number appears once, as file:line
    assert listing(tmp_path) == ["bad.jsonl"]


def test_more_prompts_than_the_file_has_says_how_many_are_used(tmp_path, capsys, monkeypatch):
    total = sum(1 for line in FIXTURE.read_text().splitlines() if line.strip())
    monkeypatch.setattr(cli, "measure_group", _stop_at_measurement)
    with pytest.raises(_Stopped):
        cli.run(Config(model="tiny-random", device="cpu", dataset_file=str(FIXTURE), num_prompts=total + 7,
                       group_sizes=(2,), max_new_tokens=2, progress=False, plots=False, out=str(tmp_path / "run")))
    assert f"--num-prompts {total + 7}: {FIXTURE} has {total} problems; using all {total}" in capsys.readouterr().out


class _Stopped(Exception):
    pass


def _stop_at_measurement(*args, **kwargs):
    raise _Stopped


# -- --resume -------------------------------------------------------------------------------------
@pytest.mark.parametrize("content, detail", [("{not json", "line 1, column 2"), ("[1, 2]", "an 'options' object"),
                                             ("\xff\xfe", "")])
def test_corrupt_config_on_resume_names_the_file(tmp_path, capsys, no_model, content, detail):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_bytes(content.encode("latin-1"))
    before = listing(tmp_path)
    code = cli.main(TINY + ["--task", "arith", "--out", str(out), "--resume"])
    refused(code, capsys.readouterr().err, f"--resume: {out / 'config.json'} is not a readable config", detail)
    assert listing(tmp_path) == before


# -- Ctrl-C ---------------------------------------------------------------------------------------
def test_ctrl_c_ends_with_one_line_naming_what_is_saved_and_the_resume_command(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    calls = {"n": 0}
    real = cli.measure_group

    def interrupt_second(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "measure_group", interrupt_second)
    argv = TINY + ["--task", "arith", "--num-prompts", "2", "--threads", "1", "--out", str(out)]
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 130 and "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line == (f"interrupted: 1 finished groups are saved in {out}/results.jsonl; continue with: "
                    "python -m grpo_verify.empirical " + " ".join(argv) + " --resume"), line
    assert len(json.loads((out / "config.json").read_text())["options"]) > 10
    # the command it prints continues the run
    monkeypatch.setattr(cli, "measure_group", real)
    assert cli.main(argv + ["--resume"]) == 0
    assert sum(1 for _ in open(out / "results.jsonl")) == 2


def test_ctrl_c_before_anything_is_saved_says_so(tmp_path, capsys, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(models, "load", interrupt)
    code = cli.main(TINY + ["--task", "arith", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 130 and err.strip().splitlines()[-1] == "interrupted before anything was saved; nothing to resume"
    assert not (tmp_path / "run").exists()


def test_an_in_process_run_leaves_torch_threads_as_they_were(tmp_path, capsys, no_model):
    import torch
    before = torch.get_num_threads()
    (tmp_path / "taken").write_text("x")  # refused after the thread count is set from --threads 1
    cli.main(TINY + ["--task", "arith", "--threads", str(before + 1), "--out", str(tmp_path / "taken")])
    assert torch.get_num_threads() == before


def test_run_files_have_the_usual_permissions(tmp_path, capsys, monkeypatch):
    import stat
    old = os.umask(0o022)
    try:
        out = tmp_path / "run"
        assert cli.main(TINY + ["--task", "arith", "--threads", "1", "--out", str(out)]) == 0, capsys.readouterr().err
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert modes and all(mode == 0o644 for mode in modes.values()), modes
