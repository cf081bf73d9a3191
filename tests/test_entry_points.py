"""Bad input at the package's command lines: ``python -m grpo_verify.render``, ``python -m grpo_verify.report``
and ``python -m grpo_verify`` (the overview and dispatcher).

Each bad --out (an existing file, a path below a file, a read-only folder, a folder where an output
file should go) and each bad --empirical folder is refused with a message naming it, exit status 2,
no traceback, and nothing written; and it is refused before the work starts: the derivations check
and the property tests are replaced here by stand-ins that fail the test if they are reached.
Outputs get the usual permissions (0666 less the umask), not mkstemp's private 0600.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import grpo_verify.__main__ as top
from grpo_verify import render
from grpo_verify.report import __main__ as report
from grpo_verify.report import junit
from support import listing, one_result_catalogue

ROOT = Path(__file__).resolve().parents[1]


def refused(code: int, err: str, *phrases: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err, err
    for phrase in phrases:
        assert phrase in err, err


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the derivations are checked or the property tests run."""
    def fail(*args, **kwargs):
        pytest.fail("the work started before the bad input was refused")
    monkeypatch.setattr(render, "check_all", fail)
    monkeypatch.setattr(report, "check_all", fail)
    monkeypatch.setattr(junit, "run_tests", fail)


# (name, build(tmp_path) -> (out, phrase of the message)); each also fails for root
def _out_is_a_file(tmp_path):
    out = tmp_path / "taken"
    out.write_text("not a folder")
    return out, "it exists and is not a folder"


def _out_below_a_file(tmp_path):
    (tmp_path / "blocker").write_text("a file")
    return tmp_path / "blocker" / "sub" / "out", f"{tmp_path / 'blocker'} is a file, not a folder"


BAD_OUTS = {"out is a file": _out_is_a_file, "parent is a file": _out_below_a_file}


# -- python -m grpo_verify.render ----------------------------------------------------------------------
@pytest.mark.parametrize("case", BAD_OUTS)
def test_render_refuses_a_bad_out_before_checking(tmp_path, capsys, no_work, case):
    out, phrase = BAD_OUTS[case](tmp_path)
    before = listing(tmp_path)
    code = render.main(["--out", str(out)])
    refused(code, capsys.readouterr().err, f"--out {out}", phrase)
    assert listing(tmp_path) == before


def test_render_refuses_a_read_only_out_before_checking(tmp_path, capsys, no_work, locked_folder):
    locked = locked_folder
    for out in (locked, locked / "new"):  # the folder itself, and a folder to be created in it
        code = render.main(["--out", str(out)])
        refused(code, capsys.readouterr().err, f"--out {out}", f"cannot create files in {locked}")
        assert listing(locked) == []


def test_render_refuses_a_location_without_write_access_also_for_root(tmp_path, capsys, no_work, monkeypatch):
    """Root passes permission bits, so the read-only case is simulated where the probe creates its file."""
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", denied)
    out = tmp_path / "new" / "out"
    code = render.main(["--out", str(out)])
    refused(code, capsys.readouterr().err, f"--out {out}", f"cannot create files in {tmp_path}",
            "Permission denied")
    assert listing(tmp_path) == []


def test_render_refuses_an_out_where_an_output_file_is_a_folder(tmp_path, capsys, no_work):
    (tmp_path / "derivations.tex").mkdir()
    code = render.main(["--out", str(tmp_path)])
    refused(code, capsys.readouterr().err, f"{tmp_path / 'derivations.tex'} is a folder")
    assert listing(tmp_path) == ["derivations.tex"]


def test_render_refusal_as_a_command_has_no_traceback(tmp_path):
    out, phrase = _out_below_a_file(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "grpo_verify.render", "--out", str(out)], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=120)
    refused(proc.returncode, proc.stderr, f"--out {out}", phrase)
    assert proc.stdout == ""
    assert listing(tmp_path) == ["blocker"]


# -- python -m grpo_verify.report ----------------------------------------------------------------------
@pytest.mark.parametrize("case", BAD_OUTS)
def test_report_refuses_a_bad_out_before_any_work(tmp_path, capsys, no_work, case):
    out, phrase = BAD_OUTS[case](tmp_path)
    before = listing(tmp_path)
    code = report.main(["--out", str(out)])  # without --skip-tests: the property tests would run
    refused(code, capsys.readouterr().err, f"--out {out}", phrase)
    assert listing(tmp_path) == before


def test_report_refuses_a_read_only_out_before_any_work(tmp_path, capsys, no_work, locked_folder):
    locked = locked_folder
    for out in (locked, locked / "ledger"):
        code = report.main(["--out", str(out)])
        refused(code, capsys.readouterr().err, f"--out {out}", f"cannot create files in {locked}")
        assert listing(locked) == []


def test_report_refuses_an_unwritable_location_also_for_root(tmp_path, capsys, no_work, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", denied)
    code = report.main(["--out", str(tmp_path / "ledger")])
    refused(code, capsys.readouterr().err, f"cannot create files in {tmp_path}", "Permission denied")
    assert listing(tmp_path) == []


def test_report_refuses_an_out_where_an_output_file_is_a_folder(tmp_path, capsys, no_work):
    (tmp_path / "ledger.md").mkdir()
    code = report.main(["--out", str(tmp_path)])
    refused(code, capsys.readouterr().err, f"{tmp_path / 'ledger.md'} is a folder")


@pytest.mark.parametrize("case", ["missing", "a file", "empty folder", "other files"])
def test_report_refuses_an_empirical_folder_that_is_not_a_run_before_any_work(tmp_path, capsys, no_work, case):
    run = tmp_path / "run"
    phrase = {"missing": "no such run directory", "a file": "a file, not a run directory",
              "empty folder": "not a run directory", "other files": "not a run directory"}[case]
    if case == "a file":
        run.write_text("x")
    elif case != "missing":
        run.mkdir()
        if case == "other files":
            (run / "notes.txt").write_text("not a run")
    out = tmp_path / "ledger"
    before = listing(tmp_path)
    code = report.main(["--empirical", str(run), "--out", str(out)])
    refused(code, capsys.readouterr().err, f"--empirical: {run}", phrase)
    assert listing(tmp_path) == before


def test_report_refusal_as_a_command_has_no_traceback(tmp_path):
    taken = _out_is_a_file(tmp_path)[0]
    for args, phrase in ((["--out", str(taken)], "it exists and is not a folder"),
                         (["--empirical", str(tmp_path / "nope"), "--out", str(tmp_path / "o")],
                          "no such run directory")):
        proc = subprocess.run([sys.executable, "-m", "grpo_verify.report", *args], capture_output=True, text=True,
                              cwd=tmp_path, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=120)
        refused(proc.returncode, proc.stderr, phrase)
    assert listing(tmp_path) == ["taken"]


# -- the files written ---------------------------------------------------------------------------------
@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_write_atomically_gives_the_usual_permissions_for_text_and_for_a_writer(tmp_path, umask_022):
    render.write_atomically(tmp_path / "a" / "x.txt", "text\n")
    render.write_atomically(tmp_path / "b.csv", lambda tmp: tmp.write_text("1,2\n"))
    for path, text in ((tmp_path / "a" / "x.txt", "text\n"), (tmp_path / "b.csv", "1,2\n")):
        assert path.read_text() == text
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b.csv", "x.txt"]  # no temporary left


def test_write_atomically_leaves_nothing_when_the_writer_fails(tmp_path):
    def broken(tmp):
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    with pytest.raises(RuntimeError):
        render.write_atomically(tmp_path / "x.csv", broken)
    assert listing(tmp_path) == []


def test_report_files_have_the_usual_permissions(tmp_path, monkeypatch, capsys, umask_022):
    monkeypatch.setattr(report, "check_all", one_result_catalogue)
    out = tmp_path / "ledger"
    assert report.main(["--skip-tests", "--out", str(out)]) == 0, capsys.readouterr().err
    files = sorted(out.iterdir())
    assert [p.name for p in files] == ["ledger.json", "ledger.md", "ledger.tex"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in files)


# -- python -m grpo_verify -----------------------------------------------------------------------------
def test_the_overview_names_every_command_and_exits_0():
    proc = subprocess.run([sys.executable, "-m", "grpo_verify"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    for command in ("python -m grpo_verify.render", "python -m grpo_verify.report", "python -m grpo_verify.empirical",
                    "python experiments/synthetic_training.py", "python experiments/bench_gram.py"):
        line = next(line for line in proc.stdout.splitlines() if command in line)
        assert len(line.split(command, 1)[1].strip()) > 10  # with a line saying what it does
    for script in top.SCRIPTS:
        assert (ROOT / script).is_file()


def test_every_dispatched_command_has_a_main_taking_argv():
    for name, (module, _) in top.COMMANDS.items():
        main = importlib.import_module(module).main
        assert callable(main), name
        assert "argv" in main.__code__.co_varnames[:main.__code__.co_argcount], name


def test_the_dispatcher_runs_the_command_with_its_options(tmp_path, capsys, no_work):
    out = _out_is_a_file(tmp_path)[0]
    code = top.main(["render", "--out", str(out)])
    refused(code, capsys.readouterr().err, f"--out {out}", "not a folder")
    with pytest.raises(SystemExit) as info:
        top.main(["report", "--help"])
    assert info.value.code == 0 and "--empirical" in capsys.readouterr().out


def test_the_dispatcher_refuses_an_unknown_command():
    proc = subprocess.run([sys.executable, "-m", "grpo_verify", "renderr"], capture_output=True, text=True,
                          timeout=60)
    refused(proc.returncode, proc.stderr, "unknown command 'renderr'", "render, report, empirical")


def test_the_console_script_points_at_the_dispatcher():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["grpo-verify"].partition(":")
    assert getattr(importlib.import_module(module), function) is top.main


def test_outputs_of_the_readme_commands_are_ignored_by_git():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for path in ("runs/synthetic_training/summary.json", "runs/bench_gram.csv", "build/derivations/derivations.tex",
                 "build/ledger/ledger.md"):
        proc = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT)
        assert proc.returncode == 0, f"{path} is not ignored by git"
    # ... while new files next to the committed results are not hidden
    proc = subprocess.run(["git", "check-ignore", "-q", "experiments/results/synthetic_training/runs/seed9_R2.csv"],
                          cwd=ROOT)
    assert proc.returncode == 1
