"""Render the derivations to LaTeX (and PDF): ``python -m grpo_verify.render [--out DIR] [--pdf]``.

Every result is checked first; the document shows each step's status as checked in this run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path

import grpo_verify
from grpo_verify import latex
from grpo_verify.proof import ResultReport
from grpo_verify.proof.catalog import families
from grpo_verify.outputs import output_problem, positive_int, write_atomically


def default_jobs() -> int:
    """Processes for checking the catalogue: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class CatalogueChanged(RuntimeError):
    """A worker's import of the derivations differs from this process's (a file changed during the run)."""


def statement_digest(result) -> str:
    """A digest of what a result states and how its proof goes (sides, relation, assumptions, steps), in SymPy's
    structural form: a worker's result with the same digest is this process's result."""
    import hashlib

    import sympy as sp

    parts = [result.name, sp.srepr(result.lhs), sp.srepr(result.rhs), result.relation,
             *(repr((a.text, a.context)) for a in result.assumptions),
             *(sp.srepr(step.expr) + step.relation for step in result.steps)]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _check_in_a_worker(index: tuple[int, int]) -> tuple[str, ResultReport]:
    """One catalogue result checked by the kernel of a worker process (its own import of the package). The report
    comes back without its theorems: they are the worker's kernel objects, and the rendering reads only the
    statuses, steps and texts."""
    family, position = index
    result = families()[family].results[position]
    return statement_digest(result), dataclasses.replace(result.check(), theorems=())


# reports this process's workers made (a Result is immutable once built, so its report cannot go stale)
_FROM_WORKERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def check_all(progress=sys.stderr, jobs: int | None = None) -> tuple[list, dict[str, ResultReport]]:
    """Every result's report, in catalogue order. Results this process has already checked keep their report; the
    rest are checked by ``jobs`` worker processes (default: one per core), each result by one worker's kernel, or
    here when ``jobs`` is 1."""
    fams = families()
    indices = [(f, k) for f, family in enumerate(fams) for k in range(len(family.results))]
    total, done = len(indices), 0
    reports: dict[str, ResultReport] = {}

    def show(family, result, report):
        nonlocal done
        done += 1
        print(f"[{done}/{total}] {family.label} {result.name}: {report.status.value} "
              f"({report.scope}, {report.seconds:.1f} s)", file=progress, flush=True)

    pending = []
    for f, k in indices:
        result = fams[f].results[k]
        cached = result.cached_report() or _FROM_WORKERS.get(result)
        if cached is None:
            pending.append((f, k))
        else:
            reports[result.name] = cached
            show(fams[f], result, cached)
    jobs = default_jobs() if jobs is None else jobs
    if jobs > 1 and len(pending) > 1:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        from concurrent.futures.process import BrokenProcessPool

        # spawn, not fork: a forked copy of a process with torch's or z3's threads running can deadlock
        try:
            with ProcessPoolExecutor(min(jobs, len(pending)), mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = {pool.submit(_check_in_a_worker, index): index for index in pending}
                for future in as_completed(futures):
                    f, k = futures[future]
                    result = fams[f].results[k]
                    digest, report = future.result()
                    if digest != statement_digest(result):  # the worker's catalogue must be this one
                        raise CatalogueChanged(f"{result.name}: the derivations changed on disk while they were "
                                               "being checked; run the command again")
                    reports[result.name] = _FROM_WORKERS[result] = report
                    show(fams[f], result, report)
        except BrokenProcessPool as exc:  # a worker died (killed, out of memory): check the rest here
            print(f"a checking worker stopped ({exc}); checking the remaining results in this process",
                  file=progress, flush=True)
    for f, k in pending:
        result = fams[f].results[k]
        if result.name not in reports:
            reports[result.name] = result.check()
            show(fams[f], result, reports[result.name])
    order = [fams[f].results[k].name for f, k in indices]
    return fams, {name: reports[name] for name in order}


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
    parser.add_argument("--jobs", type=positive_int, default=None,
                        help="processes that check the results (default: one per core)")
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

    try:
        fams, reports = check_all(jobs=args.jobs)
    except CatalogueChanged as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
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
