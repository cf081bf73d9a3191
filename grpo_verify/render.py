"""Render the derivations to LaTeX (and PDF): ``python -m grpo_verify.render [--out DIR] [--pdf]``.

Every result is checked first; the document shows each step's status as checked in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import grpo_verify
from grpo_verify import latex
from grpo_verify.proof import ResultReport
from grpo_verify.proof.catalog import families


def write_atomically(path: Path, content: str | Callable[[Path], None]) -> None:
    """Write ``content`` (text, or ``content(tmp)`` writing a file at ``tmp``) via a temporary file in the
    same folder, then rename it over ``path``: an interrupted run leaves no half file. The file gets the
    usual permissions (0666 less the umask), not mkstemp's private 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o666 & ~umask)
            if not callable(content):
                f.write(content)
        if callable(content):
            content(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def output_problem(path: Path, kind: str = "folder", files: tuple[str, ...] = ()) -> str:
    """Why ``path`` cannot receive the output ("" if it can), found without creating anything.

    ``kind`` is "folder" (the output folder, whose ``files`` will be written in it) or "file" (one output
    file, written atomically: a temporary file in its folder renamed over it). A missing path is fine
    if its nearest existing ancestor is a folder in which files can be created (tried with a
    temporary file, so read-only mounts and root's view of permissions are both right).
    """
    path = Path(path)
    if path.exists():
        if kind == "folder":
            if not path.is_dir():
                return "it exists and is not a folder"
            for name in files:
                if (path / name).is_dir():
                    return f"{path / name} is a folder, where the output file {name} should go"
            return _cannot_create_in(path)
        if path.is_dir():
            return "it is a folder, not a file"
        if not path.is_file():
            return "it exists and is not a regular file"
        return _cannot_create_in(path.parent)
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is a file, not a folder, so it cannot be created"
    return _cannot_create_in(ancestor)


def _cannot_create_in(folder: Path) -> str:
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe."):
            pass
    except OSError as exc:
        return f"cannot create files in {folder} ({exc.strerror or exc})"
    return ""


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
                      "consistency": r.consistency,
                      "steps": [{"rule": s.rule, "status": s.status.value, "route": s.route, "detail": s.detail,
                                 "disagreement": s.disagreement} for s in r.steps],
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
