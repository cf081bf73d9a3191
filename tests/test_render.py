"""The LaTeX rendering: prose escaping, the whole document, the command line, and a real compile."""

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
import sympy as sp

from grpo_verify import coq, latex, render
from grpo_verify.proof import Assumption, Result, Step
from grpo_verify.proof.catalog import families

PDFLATEX = shutil.which("pdflatex")


def test_prose_escapes_text_and_keeps_maths():
    assert latex.prose("a_b 50% & $\\hat A_i$") == r"a\_\allowbreak{}b 50\% \& $\hat A_i$"


@pytest.mark.parametrize("bad, message", [("caf\u00e9", "non-ASCII"), ("$x", "unbalanced"),
                                          ("$\x0barepsilon$", "control characters")])
def test_prose_rejects_what_latex_cannot_typeset(bad, message):
    with pytest.raises(latex.ProseError, match=message):
        latex.prose(bad, "here")


def test_every_derivation_typesets():
    fams = families()
    reports = {r.name: r.check() for f in fams for r in f.results}
    text = latex.document(fams, reports, "test")
    assert text.startswith(r"\documentclass") and text.rstrip().endswith(r"\end{document}")
    for f in fams:
        for r in f.results:
            assert latex.prose(r.name) in text
    # every Coq second proof (of a result or a remark) is marked, once
    assert coq.second_proofs() and text.count(r"\textit{Second proof:}") == len(coq.second_proofs())


def test_a_result_with_a_coq_proof_is_marked_and_one_without_is_not():
    p = sp.Symbol("p", positive=True)
    result = Result(name="planted", doc="A planted identity.", lhs=(p + 1) ** 2, rhs=p**2 + 2 * p + 1,
                    rule="expand")
    report = result.check()
    marked = latex.result_section(result, report, ("D4_zero_sum.planted",))
    assert r"\textbf{[Coq]}" in marked and latex.prose("D4_zero_sum.planted") in marked
    assert "[Coq]" not in latex.result_section(result, report)
    fams = [f for f in families() if f.key == "d4_zero_sum"]
    reports = {r.name: r.check() for r in fams[0].results}
    table = latex.summary_table(fams, reports, {"advantages_sum_to_zero": ["D4_zero_sum.advantages_sum_to_zero"]})
    marked_rows = [line for line in table.splitlines() if line.rstrip(" \\").endswith("& Coq")]
    assert len(marked_rows) == 1 and latex.prose("advantages_sum_to_zero") + "}" in marked_rows[0]
    assert "centred" not in marked_rows[0]


def test_a_refuted_step_is_shown_as_refuted():
    p = sp.Symbol("p", positive=True)
    wrong = Result(name="planted", doc="A planted error.", lhs=(p + 1) ** 2, rhs=p**2 + 1,
                   assumptions=(Assumption("$p > 0$"),), steps=(Step(p**2 + 1, "forgot the cross term"),))
    section = latex.result_section(wrong, wrong.check())
    assert r"\textbf{REFUTED}" in section and "counterexample" in section


def test_help_works(capsys):
    with pytest.raises(SystemExit) as exit_info:
        render.main(["--help"])
    assert exit_info.value.code == 0
    assert "--pdf" in capsys.readouterr().out


def test_pdf_without_an_engine_is_a_clear_error(tmp_path, capsys):
    code = render.main(["--out", str(tmp_path / "out"), "--pdf", "--engine", "no-such-latex-engine"])
    assert code == 2
    assert "no-such-latex-engine" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_out_must_be_a_folder(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert render.main(["--out", str(target)]) == 2
    assert "not a folder" in capsys.readouterr().err


@pytest.mark.skipif(PDFLATEX is None and not os.environ.get("CI"), reason="pdflatex is not installed")
def test_document_compiles_to_pdf(tmp_path):
    code = render.main(["--out", str(tmp_path), "--pdf", "--strict"])
    assert code == 0
    pdf = Path(tmp_path, "derivations.pdf")
    assert pdf.read_bytes().startswith(b"%PDF")
    assert Path(tmp_path, "derivations.json").exists()


def test_an_unwritable_out_is_refused_before_any_checking(tmp_path, capsys, monkeypatch):
    if os.geteuid() == 0:  # root writes through permission bits: make the folder a file's child instead
        blocker = tmp_path / "file"
        blocker.write_text("x")
        out = blocker / "sub"
    else:
        out = tmp_path / "locked"
        out.mkdir()
        out.chmod(0o500)
    monkeypatch.setattr(render, "check_all", lambda *a, **k: pytest.fail("checked before refusing the output folder"))
    assert render.main(["--out", str(out)]) == 2
    assert f"--out {out}" in capsys.readouterr().err
    assert not (tmp_path / "file" / "sub").exists()


def _first_family_only(monkeypatch, results: int | None = None):
    """check_all over D1 alone, or its first ``results`` results (its worker processes import the same catalogue,
    whose first family is D1, and find each result at the same position), with no report reused from this
    process."""
    first = families()[:1]
    if results is not None:
        first = [dataclasses.replace(first[0], results=first[0].results[:results])]
    monkeypatch.setattr(render, "families", lambda: first)
    monkeypatch.setattr(Result, "cached_report", lambda self: None)
    monkeypatch.setattr(render, "_FROM_WORKERS", render.weakref.WeakKeyDictionary())
    return first


def test_worker_processes_report_what_this_process_checks(monkeypatch):
    first = _first_family_only(monkeypatch)
    fams, reports = render.check_all(progress=open(os.devnull, "w"), jobs=2)
    assert [r.name for r in first[0].results] == list(reports) and len(reports) > 1
    for result in first[0].results:
        here, there = result.check(), reports[result.name]
        assert there.theorems == () and here.theorems  # the workers' theorem objects stay in the workers
        assert (there.status, there.scope, [(s.status, s.detail) for s in there.steps]) == \
            (here.status, here.scope, [(s.status, s.detail) for s in here.steps]), result.name


def test_a_worker_that_checked_another_statement_is_refused(monkeypatch):
    _first_family_only(monkeypatch, results=2)  # two, so that check_all hands them to worker processes
    monkeypatch.setattr(render, "statement_digest", lambda result: "not what the worker saw")
    with pytest.raises(render.CatalogueChanged, match="changed on disk"):
        render.check_all(progress=open(os.devnull, "w"), jobs=2)
