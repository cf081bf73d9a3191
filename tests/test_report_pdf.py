"""The claims ledger built through its command line as a PDF (a real pdflatex compile), with no run
and with a committed run, and its reproducibility: two builds from the same inputs give the same
bytes, and the last bits of an input float do not show. The derivation checks are replaced by a
one-result stand-in and the property tests are skipped (--skip-tests), so each build takes seconds."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest

from grpo_verify.report import __main__ as cli
from grpo_verify.report import ledger
from support import one_result_catalogue

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "experiments" / "results" / "empirical_cpu_arith"  # GGUF (sha256), plots, 3 training steps
needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None and not os.environ.get("CI"),
                                    reason="pdflatex is not installed")


@pytest.fixture(autouse=True)
def stand_in_catalogue(monkeypatch):
    monkeypatch.setattr(cli, "check_all", one_result_catalogue)


def report(out: Path, *args: str, capsys=None) -> Path:
    code = cli.main([*args, "--skip-tests", "--out", str(out)])
    err = capsys.readouterr().err if capsys else ""
    assert code == 0, err
    return out


@needs_pdflatex
def test_pdf_builds_without_any_run(tmp_path, capsys):
    out = report(tmp_path / "ledger", "--pdf", capsys=capsys)
    assert (out / "ledger.pdf").read_bytes().startswith(b"%PDF")
    # the rank table has its three columns and no empty run column
    tex = (out / "ledger.tex").read_text()
    assert r"matrix & rank & Nemotron-4B / GSM8K \\ \hline \endhead" in tex
    md = (out / "ledger.md").read_text()
    assert "| matrix | rank definition | Nemotron-4B / GSM8K |\n|---|---|---|\n" in md


@needs_pdflatex
def test_pdf_builds_with_a_committed_run(tmp_path, capsys):
    out = report(tmp_path / "ledger", "--pdf", "--empirical", str(RUN), capsys=capsys)
    assert (out / "ledger.pdf").read_bytes().startswith(b"%PDF")
    # what was compiled: the model's sha256 may wrap, every figure has a caption
    tex = (out / "ledger.tex").read_text()
    sha = json.loads((RUN / "config.json").read_text())["model"]["sha256"]
    assert sha not in tex and sha[:8] + r"\allowbreak{}" + sha[8:16] in tex
    figures = [line for line in tex.splitlines() if r"\includegraphics" in line]
    assert figures and all(r"\textbf{Figure.} " in line for line in figures)


def test_long_hashes_may_break_every_eight_characters(tmp_path):
    sha = json.loads((RUN / "config.json").read_text())["model"]["sha256"]
    assert len(sha) == 64
    out = report(tmp_path / "ledger", "--empirical", str(RUN))
    tex = (out / "ledger.tex").read_text()
    assert sha not in tex
    assert not re.search(r"[0-9a-f]{9,}", tex.replace(r"\allowbreak{}", "|"))  # no unbreakable run of hex
    assert r"\texttt{" + r"\allowbreak{}".join(sha[i:i + 8] for i in range(0, 64, 8)) + "}" in tex
    assert sha in (out / "ledger.md").read_text() and sha in (out / "ledger.json").read_text()
    assert ledger.breakable_hex("commit " + "a1" * 20 + ".") == (
        r"commit \texttt{" + r"\allowbreak{}".join(["a1a1a1a1"] * 5) + "}.")
    assert ledger.breakable_hex("1234567 and abcdef12") == "1234567 and abcdef12"  # short: untouched


def test_figures_carry_a_caption_saying_what_they_show(tmp_path):
    out = report(tmp_path / "ledger", "--empirical", str(RUN))
    tex, md = (out / "ledger.tex").read_text(), (out / "ledger.md").read_text()
    figures = [line for line in tex.splitlines() if r"\includegraphics" in line]
    assert len(figures) >= 5  # the run's rank, spectra and training plots, the synthetic ones
    for line in figures:
        assert r"\textbf{Figure.} " in line and "File: " in line, line
        stem = re.search(r"\\detokenize\{[^}]*/([^/}]+)\.(pdf|png)\}", line).group(1)
        assert ledger.tex(ledger.FIGURE_CAPTIONS[stem]) in line
    assert r"Effective rank against the group size R" in tex
    assert "![Effective rank against the group size R" in md
    assert not re.search(r"!\[[^\]]*\.(png|pdf)\]", md)  # no alt text that is only a path


def _perturbed(value):
    """Every non-zero float one ulp up: what another summation order or library version may produce."""
    if isinstance(value, float):
        return math.nextafter(value, math.inf) if value else value
    if isinstance(value, dict):
        return {k: _perturbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_perturbed(v) for v in value]
    return value


def test_the_last_bits_of_the_inputs_do_not_show_in_the_ledger(tmp_path):
    runs = []
    for name, change in (("a", lambda s: s), ("b", _perturbed)):
        run = tmp_path / name / RUN.name
        shutil.copytree(RUN, run)
        summary = json.loads((run / "summary.json").read_text())
        (run / "summary.json").write_text(json.dumps(change(summary)))
        runs.append(run)
    a = report(tmp_path / "a" / "out", "--empirical", str(runs[0]))
    b = report(tmp_path / "b" / "out", "--empirical", str(runs[1]))
    for name in ("ledger.json", "ledger.md", "ledger.tex"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@needs_pdflatex
def test_two_builds_from_the_same_inputs_are_byte_identical(tmp_path, capsys):
    a = report(tmp_path / "a" / "ledger", "--pdf", "--empirical", str(RUN), capsys=capsys)
    b = report(tmp_path / "b" / "ledger", "--pdf", "--empirical", str(RUN), capsys=capsys)
    for name in ("ledger.json", "ledger.md", "ledger.tex", "ledger.pdf"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    pdf = (a / "ledger.pdf").read_bytes()
    assert b"/CreationDate" not in pdf and b"/ID" not in pdf
