"""Render the derivations to LaTeX (and PDF): ``python -m grpo_verify.render [--out DIR] [--pdf]``.

Every result is checked first; the document shows each step's status as checked in this run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import grpo_verify
from grpo_verify import latex
from grpo_verify.proof import ResultReport
from grpo_verify.proof.catalog import families
from grpo_verify.outputs import output_problem, write_atomically


def check_all(progress=sys.stderr) -> tuple[list, dict[str, ResultReport]]:
    fams = families()
    reports: dict[str, ResultReport] = {}
    total = sum(len(f.results) for f in fams)
    done = 0
    for family in fams:
        for result in family.results:
            done += 1
            report = result.check()
            reports[result.name] = report
            print(f"[{done}/{total}] {family.label} {result.name}: {report.status.value} "
                  f"({report.scope}, {report.seconds:.1f} s)", file=progress, flush=True)
    return fams, reports


def compile_pdf(tex: Path, engine: str) -> Path:
    """Run the LaTeX engine twice (for the longtable widths); raise with the log's errors on failure."""
    with tempfile.TemporaryDirectory() as work:
        for _ in range(2):
            proc = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", f"-output-directory={work}",
                                   str(tex)], capture_output=True, text=True)
            if proc.returncode != 0:
                log = Path(work, tex.with_suffix(".log").name)
                text = log.read_text(errors="replace") if log.exists() else proc.stdout
                errors = [line for line in text.splitlines() if line.startswith("!")] or text.splitlines()[-20:]
                raise RuntimeError(f"{engine} failed on {tex}:\n" + "\n".join(errors[:20]))
        pdf = tex.with_suffix(".pdf")
        shutil.move(str(Path(work, pdf.name)), pdf)
    return pdf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grpo_verify.render", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("build/derivations"),
                        help="output folder for derivations.tex, derivations.json (and .pdf); default %(default)s")
    parser.add_argument("--pdf", action="store_true", help="also compile derivations.pdf with pdflatex")
    parser.add_argument("--engine", default="pdflatex", help="LaTeX engine for --pdf (default %(default)s)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 if any result is not proved (unproved or refuted)")
    args = parser.parse_args(argv)

    if args.pdf and shutil.which(args.engine) is None:
        print(f"error: --pdf needs the LaTeX engine {args.engine!r} on PATH, and it is not there. Install "
              "TeX Live (Debian: apt-get install texlive-latex-base texlive-latex-recommended) or omit --pdf.",
              file=sys.stderr)
        return 2
    problem = output_problem(args.out, files=("derivations.tex", "derivations.json", "derivations.pdf"))
    if problem:  # before the minute of checking, not after it
        print(f"error: --out {args.out}: {problem}; choose another output folder with --out", file=sys.stderr)
        return 2

    fams, reports = check_all()
    tex = args.out / "derivations.tex"
    try:
        write_atomically(tex, latex.document(fams, reports, grpo_verify.__version__))
    except latex.ProseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = {name: {"status": r.status.value, "scope": r.scope, "seconds": round(r.seconds, 3),
                      "consistency": r.consistency, "evaluator": r.evaluation, "rules": list(r.rules),
                      "steps": [{"rule": s.rule, "status": s.status.value, "route": s.route, "detail": s.detail}
                                for s in r.steps],
                      "obligations": [{"condition": o.condition, "reason": o.reason, "status": o.status.value,
                                       "route": o.route} for o in r.obligations]}
               for name, r in reports.items()}
    write_atomically(args.out / "derivations.json", json.dumps(summary, indent=2) + "\n")
    print(f"wrote {tex}", file=sys.stderr)
    if args.pdf:
        try:
            pdf = compile_pdf(tex, args.engine)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {pdf}", file=sys.stderr)
    failed = [n for n, r in reports.items() if not r.status.passed]
    if failed:
        print(f"{len(failed)} result(s) not proved: {', '.join(failed)}", file=sys.stderr)
        if args.strict:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
