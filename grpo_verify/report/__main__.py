"""Build the claims ledger of arXiv 2606.29238: one section per claim with the quotation, what is proved,
the property tests and their outcome in this run, the empirical figures, and two verdicts by the rules
in grpo_verify/report/rules.py: on the claim as worded, and on the strongest statement proved in its place.

  python -m grpo_verify.report [--empirical DIR ...] [--synthetic FILE] [--out DIR] [--pdf]
                               [--skip-tests | --junit FILE]

Writes DIR/ledger.tex, ledger.md, ledger.json (and ledger.pdf with --pdf). Inputs are all read and
checked before any work starts (the derivations, the property tests) and before anything is
written; each file is written atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grpo_verify
from grpo_verify import latex
from grpo_verify.outputs import output_problem, write_atomically
from grpo_verify.render import CatalogueChanged, check_all, compile_pdf

from . import junit, ledger
from .runs import InputError, load_run, load_synthetic

REPO_ROOT = Path(grpo_verify.__file__).resolve().parents[1]
DEFAULT_SYNTHETIC = REPO_ROOT / "experiments" / "results" / "synthetic_training" / "summary.json"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m grpo_verify.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--empirical", nargs="+", type=Path, default=[], metavar="DIR",
                   help="run folders of python -m grpo_verify.empirical (config.json + summary.json; a run in "
                        "progress without summary.json is summarised from results.jsonl and marked partial)")
    p.add_argument("--synthetic", type=Path, default=None, metavar="FILE",
                   help="summary.json of experiments/synthetic_training.py (default: the committed "
                        "experiments/results/synthetic_training/summary.json when present)")
    p.add_argument("--out", type=Path, default=Path("build/ledger"), help="output folder (default %(default)s)")
    p.add_argument("--pdf", action="store_true", help="also compile ledger.pdf (needs the LaTeX engine)")
    p.add_argument("--engine", default="pdflatex", help="LaTeX engine for --pdf (default %(default)s)")
    tests = p.add_mutually_exclusive_group()
    tests.add_argument("--skip-tests", action="store_true",
                       help="do not run the property tests (quick); no claim can then be confirmed")
    tests.add_argument("--junit", type=Path, metavar="FILE",
                       help="read test outcomes from this pytest JUnit XML report instead of running them")
    return p


def graphicx_available() -> bool:
    if shutil.which("kpsewhich") is None:
        return False
    proc = subprocess.run(["kpsewhich", "graphicx.sty"], capture_output=True, text=True)
    return proc.returncode == 0 and bool(proc.stdout.strip())


@contextlib.contextmanager
def _cwd(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    progress = sys.stderr

    def fail(message: str, code: int = 2) -> int:
        print(f"error: {message}", file=sys.stderr)
        return code

    # 1. every input is checked before anything is written
    if args.pdf and shutil.which(args.engine) is None:
        return fail(f"--pdf needs the LaTeX engine {args.engine!r} on PATH, and it is not there; omit --pdf or "
                    "install TeX Live (texlive-latex-base)")
    problem = output_problem(args.out, files=("ledger.json", "ledger.md", "ledger.tex", "ledger.pdf"))
    if problem:
        return fail(f"--out {args.out}: {problem}; choose another output folder with --out")
    try:
        runs = []
        for d in args.empirical:
            try:
                run = load_run(d)
            except InputError as exc:
                return fail(f"--empirical: {exc}")
            runs.append(run)
            print(f"run {d}: {run.model_label} on {run.task_label}, {run.items} items"
                  + (" (partial: no summary.json yet)" if run.partial else ""), file=progress, flush=True)
        names = [r.path.name for r in runs]
        if len(set(names)) != len(names):
            return fail(f"--empirical: two run folders share a name ({names}); the ledger labels runs by folder name")
        synthetic_path = args.synthetic or (DEFAULT_SYNTHETIC if DEFAULT_SYNTHETIC.exists() else None)
        synthetic = load_synthetic(synthetic_path) if synthetic_path else None
        if synthetic:
            print(f"synthetic training: {synthetic_path}", file=progress, flush=True)
        outcomes_file = junit.parse(args.junit) if args.junit else None
    except (InputError, junit.JUnitError) as exc:
        return fail(str(exc))

    # 2. derivations, then the property tests
    print("derivations: checking every result ...", file=progress, flush=True)
    try:
        fams, reports = check_all(progress)
    except CatalogueChanged as exc:
        return fail(str(exc))
    infos = ledger.derivation_infos(fams, reports)
    if args.skip_tests:
        outcomes, source = None, "not run (--skip-tests)"
    elif args.junit:
        outcomes, source = outcomes_file, f"read from the JUnit report {args.junit}"
    else:
        if not (REPO_ROOT / "tests").is_dir():
            return fail(f"no tests/ folder next to the package ({REPO_ROOT}); pass --junit FILE or --skip-tests")
        try:
            outcomes = junit.run_tests(ledger.all_selectors(infos), REPO_ROOT, progress)
        except (junit.JUnitError, subprocess.TimeoutExpired) as exc:
            return fail(f"running the property tests: {exc}", 1)
        counts = {}
        for o, _ in outcomes.values():
            counts[o] = counts.get(o, 0) + 1
        source = "run by this build (pytest, " + ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) + ")"

    # 3. build and write
    out = args.out
    data = ledger.build(infos, outcomes, runs, synthetic, out, test_source=source, source_root=REPO_ROOT,
                        version=grpo_verify.__version__)
    try:
        tex_text = ledger.latex_document(data, graphics=graphicx_available())
        md_text = ledger.markdown(data)
    except latex.ProseError as exc:
        return fail(str(exc))
    write_atomically(out / "ledger.json", json.dumps(data, indent=2) + "\n")
    write_atomically(out / "ledger.md", md_text)
    write_atomically(out / "ledger.tex", tex_text)
    print(f"wrote {out / 'ledger.json'}, {out / 'ledger.md'}, {out / 'ledger.tex'}", file=progress, flush=True)
    if args.pdf:
        try:
            with _cwd(out):  # figures are referenced relative to the ledger
                compile_pdf(Path("ledger.tex"), args.engine)
        except RuntimeError as exc:
            return fail(str(exc), 1)
        print(f"wrote {out / 'ledger.pdf'}", file=progress, flush=True)
    for c in data["claims"]:
        worded = c["verdict"] if c["verdict"].endswith("as worded") else f"{c['verdict']} as worded"
        print(f"{c['key']}: {worded}; strongest proved form {c['strongest']['standing']}",
              file=progress, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
