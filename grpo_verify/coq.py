"""The Coq/MathComp second proofs (``derivations/coq/``): build them, read what they rest on, evaluate them.

The proofs are checked by Coq's kernel, not by this module: it only runs ``coqc`` on the files listed in
``derivations/coq/_CoqProject`` (in that order, in a scratch copy so that no build output lands in the source
tree), scans the sources for anything that would add an assumption (``Admitted``, ``admit``, ``Axiom``,
``Parameter``, ...), and reads the answer of each file's ``Print Assumptions`` lines (asked of all of them at once
where that answer is closed: ``printed_as_definitions``). ``evaluate`` asks Coq to
decide ``expr == value`` at MathComp's ``rat`` by ``vm_compute``: how a test compares a Coq definition with the
Python code on the same rational inputs.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

COQ_DIR = Path(__file__).resolve().parents[1] / "derivations" / "coq"
LOGICAL = "GRPO"  # the logical path of the files: From GRPO Require Import D4_zero_sum.
# vernacular that adds an assumption or leaves a proof open; Coq's own kernel would accept a file using them
FORBIDDEN = ("Admitted", "admit", "Admit", "Axiom", "Axioms", "Parameter", "Parameters", "Conjecture", "Hypothesis",
             "Hypotheses", "Variable", "Variables", "Abort",
             "Declare")  # Declare ML Module would load a plugin, code outside the kernel's control
CLOSED = "Closed under the global context"


class CoqError(RuntimeError):
    """A file that does not compile, or a statement Coq did not decide as asked."""


def coqc() -> str | None:
    return shutil.which("coqc")


def project_files(coq_dir: Path = COQ_DIR) -> list[str]:
    """The .v files of ``_CoqProject``, in build order."""
    project = coq_dir / "_CoqProject"
    if not project.is_file():
        raise CoqError(f"{project}: missing (it lists the Coq files in build order)")
    files = [t for line in project.read_text().splitlines() for t in line.split() if t.endswith(".v")]
    missing = [f for f in files if not (coq_dir / f).is_file()]
    if missing:
        raise CoqError(f"{project}: lists {missing[0]}, which does not exist")
    return files


def strip_comments(source: str) -> str:
    """Coq source without its (nested) comments and string literals: what the scan for assumptions reads."""
    return _code(source)[0]


def _code(source: str) -> tuple[str, list[int]]:
    """(the source without comments and string literals, the position in ``source`` of each character kept)."""
    out, where, depth, i, in_string = [], [], 0, 0, False
    while i < len(source):
        if in_string:
            if source[i] == '"':
                in_string = False
            i += 1
        elif source.startswith("(*", i):
            depth, i = depth + 1, i + 2
        elif depth and source.startswith("*)", i):
            depth, i = depth - 1, i + 2
        elif depth:
            i += 1
        elif source[i] == '"':
            in_string, i = True, i + 1
        else:
            out.append(source[i])
            where.append(i)
            i += 1
    return "".join(out), where


def forbidden_uses(source: str) -> list[str]:
    """Each use, outside comments, of a command or tactic that adds an assumption or leaves a proof open.
    Section ``Variable``/``Hypothesis`` are discharged when the section closes, but a top-level one is an axiom:
    they are allowed only inside a Section."""
    found, depth = [], 0
    for number, line in enumerate(strip_comments(source).splitlines(), 1):
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_']*", line):
            if word == "Section":
                depth += 1
            elif word == "End" and depth:
                depth -= 1
            elif word in FORBIDDEN:
                if word in ("Variable", "Variables", "Hypothesis", "Hypotheses") and depth:
                    continue
                found.append(f"line {number}: {word}")
        for flag in _UNSAFE.findall(line):
            found.append(f"line {number}: {flag}")
    return found


# switching off one of the kernel's checks (guard, positivity, universes) is an assumption too
_UNSAFE = re.compile(r"\bbypass_check\b|\bUnset\s+(?:Guard|Positivity|Universe)\s+Checking\b")


@dataclass(frozen=True)
class Build:
    files: list[str]
    outputs: dict[str, str]  # file -> coqc's stdout (with the answers of its Print Assumptions lines, if asked there)
    seconds: dict[str, float]
    assumptions: dict[str, str]  # "File.theorem" -> Print Assumptions' answer
    recheck: str  # coqchk's report on the compiled files ("" if coqchk is not installed)
    scratch: str  # the folder holding the compiled files (kept for the process, for evaluate)


_ANSWER = re.compile(r"^(Closed under the global context|Axioms:\n(?:(?!Closed under|Axioms:).+(?:\n|$))*)", re.M)
# what coqchk must report as empty: a compiled file that cheats the kernel this way is rejected
RECHECK_NONE = ("relying on type-in-type: <none>", "relying on unsafe (co)fixpoints: <none>",
                "whose positivity is assumed: <none>")


_PRINT = re.compile(r"^[ \t]*(Print\s+Assumptions\s+([\w.']+)\s*\.)", re.M)
_PRINTED = "grpo_verify_printed_"  # the prefix of the definitions that stand for the Print Assumptions lines


def printed_as_definitions(source: str) -> tuple[str, list[str]] | None:
    """``source`` with its k-th ``Print Assumptions X.`` (outside comments) replaced by ``Definition
    grpo_verify_printed_k := @X.``, and the names X; None if a Print Assumptions line stands inside a Section or
    Module (a definition there would be generalised over the section's variables, which the command reports).

    Why: each Print Assumptions walks every constant its theorem rests on, MathComp's included; the 112 lines took
    37 of the 58 s of a build. One Print Assumptions of a tuple of the definitions walks them once, and its answer
    is the union of theirs: closed exactly when every one is (``build`` asks each one only when it is not)."""
    code, where = _code(source)
    out, names, last = [], [], 0
    for m in _PRINT.finditer(code):
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_']*", code[:m.start(1)])
        opened = sum(w in ("Section", "Module") for w in words)
        if opened != sum(w == "End" for w in words):
            return None
        start, end = where[m.start(1)], where[m.end(1) - 1] + 1
        out += [source[last:start], f"Definition {_PRINTED}{len(names)} := @{m.group(2)}."]
        names.append(m.group(2))
        last = end
    return "".join(out) + source[last:], names


def assumptions_of(source: str, output: str) -> dict[str, str]:
    """{theorem: Print Assumptions' answer}, pairing the source's ``Print Assumptions X.`` lines (in order) with
    the answers in coqc's output; raise CoqError if they do not pair up."""
    names = re.findall(r"^\s*Print\s+Assumptions\s+([\w.']+)\s*\.", strip_comments(source), re.M)
    answers = [m.group(1).strip() for m in _ANSWER.finditer(output)]
    if len(names) != len(answers):
        raise CoqError(f"{len(names)} Print Assumptions lines but {len(answers)} answers in coqc's output")
    return dict(zip(names, answers))


def _coqc_or_fail() -> str:
    exe = coqc()
    if exe is None:
        raise CoqError("coqc not found (apt-get install coq libcoq-mathcomp-algebra libcoq-mathcomp-algebra-tactics "
                       "libcoq-mathcomp-zify)")
    return exe


def _compile(exe: str, scratch: str, f: str, timeout: float) -> str:
    """coqc on one file of the scratch copy; its stdout, or CoqError naming the file."""
    try:
        done = subprocess.run([exe, "-w", "-notation-overridden,-ambiguous-paths", "-Q", ".", LOGICAL, f],
                              cwd=scratch, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LC_ALL": "C"})
    except subprocess.TimeoutExpired:
        raise CoqError(f"derivations/coq/{f}: coqc ran past {timeout:.0f} s") from None
    if done.returncode != 0:
        raise CoqError(f"derivations/coq/{f} does not compile:\n{done.stdout}\n{done.stderr}".strip())
    return done.stdout


def recheck(scratch: str, files: list[str], timeout: float = 600) -> str:
    """coqchk, Coq's stand-alone checker, on the compiled files (MathComp's own files taken as checked): its
    report, or CoqError if it rejects a file or finds type-in-type, unsafe fixpoints or assumed positivity."""
    exe = shutil.which("coqchk")
    if exe is None:
        return ""
    modules = [arg for f in files for arg in ("-norec", f"{LOGICAL}.{f[:-2]}")]
    try:
        done = subprocess.run([exe, "-o", "-Q", ".", LOGICAL, *modules], cwd=scratch, capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, "LC_ALL": "C"})
    except subprocess.TimeoutExpired:
        raise CoqError(f"coqchk ran past {timeout:.0f} s") from None
    report = done.stdout + done.stderr
    if done.returncode != 0 or not all(line in report for line in RECHECK_NONE):
        raise CoqError("coqchk rejects the compiled proofs:\n" + "\n".join(report.splitlines()[-20:]))
    return report


_BUILDS: dict[tuple[str, str], Build] = {}  # (folder, hash of its sources) -> its build, once per process


def _sources_key(coq_dir: Path, files: list[str]) -> tuple[str, str]:
    digest = hashlib.sha256()
    for f in ["_CoqProject", *files]:
        digest.update(f.encode() + b"\0" + (coq_dir / f).read_bytes())
    return str(coq_dir.resolve()), digest.hexdigest()


def build(coq_dir: Path = COQ_DIR, timeout: float = 600) -> Build:
    """Compile every file of ``_CoqProject`` in order, in a scratch copy, and recheck them with coqchk; raise
    CoqError naming the first failure. Built once per process for the same sources."""
    exe = _coqc_or_fail()
    files = project_files(coq_dir)
    key = _sources_key(coq_dir, files)
    if key in _BUILDS:
        return _BUILDS[key]
    sources = {f: (coq_dir / f).read_text() for f in files}
    rewritten = {f: printed_as_definitions(text) for f, text in sources.items()}
    built = None
    if all(r is not None for r in rewritten.values()):
        try:
            built = _build(exe, files, {f: r[0] for f, r in rewritten.items()}, timeout,
                           lambda scratch, outputs: _assumptions_at_once(exe, scratch, files, rewritten, timeout))
        except CoqError:
            built = None  # the error is reported by the build of the files as written, below
    if built is None:
        built = _build(exe, files, sources, timeout, lambda scratch, outputs: _assumptions_as_printed(
            files, sources, outputs))
    _BUILDS[key] = built
    return built


def _build(exe: str, files: list[str], sources: dict[str, str], timeout: float, read_assumptions) -> Build:
    scratch = tempfile.mkdtemp(prefix="grpo-coq-")
    atexit.register(shutil.rmtree, scratch, True)
    for f in files:
        (Path(scratch) / f).write_text(sources[f])
    outputs, seconds = {}, {}
    for f in files:
        start = time.perf_counter()
        outputs[f] = _compile(exe, scratch, f, timeout)
        seconds[f] = time.perf_counter() - start
    assumptions = read_assumptions(scratch, outputs)
    return Build(files, outputs, seconds, assumptions, recheck(scratch, files), scratch)


def _assumptions_as_printed(files: list[str], sources: dict[str, str], outputs: dict[str, str]) -> dict[str, str]:
    assumptions = {}
    for f in files:
        try:
            pairs = assumptions_of(sources[f], outputs[f])
        except CoqError as exc:
            raise CoqError(f"derivations/coq/{f}: {exc}") from None
        assumptions.update({f"{f[:-2]}.{name}": answer for name, answer in pairs.items()})
    return assumptions


def _assumptions_at_once(exe: str, scratch: str, files: list[str], rewritten: dict, timeout: float) -> dict[str, str]:
    """Each printed theorem's Print Assumptions answer, from one Print Assumptions of the tuple of them all when it
    is closed, else from one per theorem."""
    printed = [(f"{f[:-2]}.{name}", f"{LOGICAL}.{f[:-2]}.{_PRINTED}{k}")
               for f in files for k, name in enumerate(rewritten[f][1])]
    if not printed:
        return {}
    head = [f"From {LOGICAL} Require {' '.join(f[:-2] for f in files)}."]

    def answers(lines: list[str], count: int) -> list[str]:
        name = f"GrpoVerifyAssumptions{next(_FIDELITY)}.v"
        (Path(scratch) / name).write_text("\n".join(head + lines) + "\n")
        found = [m.group(1).strip() for m in _ANSWER.finditer(_compile(exe, scratch, name, timeout))]
        if len(found) != count:
            raise CoqError(f"{count} Print Assumptions commands but {len(found)} answers in coqc's output")
        return found

    union = answers([f"Definition grpo_verify_every_printed_theorem := ({', '.join(d for _n, d in printed)}, tt).",
                     "Print Assumptions grpo_verify_every_printed_theorem."], 1)
    if union == [CLOSED]:
        return {name: CLOSED for name, _d in printed}
    each = answers([f"Print Assumptions {d}." for _n, d in printed], len(printed))
    return {name: answer for (name, _d), answer in zip(printed, each)}


def rat(value: Fraction | int) -> str:
    """A rational as a closed MathComp ``rat`` term."""
    value = Fraction(value)
    num, den = abs(value.numerator), value.denominator
    term = f"({num}%:R)" if den == 1 else f"({num}%:R / {den}%:R)"
    return f"(- {term})" if value < 0 else term


def evaluate(requires: list[str], goals: list[tuple[str, str]], unfold: tuple[str, ...] = (),
             coq_dir: Path = COQ_DIR, timeout: float = 120) -> None:
    """Ask Coq to decide each ``expr == value`` (both ``rat`` terms) by ``vm_compute``, in the build of
    ``coq_dir`` (made once per process); raise CoqError unless every one holds. ``unfold``: the definitions to
    unfold first, so that their finite sums over ordinals can be written out term by term (MathComp locks its big
    operators, which ``vm_compute`` alone would not reduce)."""
    built = build(coq_dir, timeout)
    # unfolded in any order, as often as they occur (a definition can appear only once another is unfolded)
    tactic = ("repeat (first [" + " | ".join(f"progress unfold {name}" for name in unfold) + "]); ") if unfold else ""
    lines = ["From mathcomp Require Import all_ssreflect all_algebra.",
             f"From {LOGICAL} Require Import {' '.join(requires)}.",
             "Local Open Scope ring_scope.", ""]
    for k, (expr, value) in enumerate(goals):
        lines += [f"Lemma fidelity_{k} : ({expr} == {value} :> rat).",
                  f"Proof. {tactic}repeat (rewrite /= ?mxE big_ord_recr); rewrite /= ?mxE ?big_ord0 /=. "
                  f"timeout {GOAL_SECONDS} (vm_compute; reflexivity). Qed.", ""]
    name = f"Fidelity{next(_FIDELITY)}.v"
    (Path(built.scratch) / name).write_text("\n".join(lines))
    try:
        _compile(_coqc_or_fail(), built.scratch, name, timeout)
    except CoqError as exc:
        raise CoqError("Coq did not decide every goal:\n" + str(exc) + "\n" + "\n".join(lines)) from None


_FIDELITY = itertools.count()
# a sum left locked (a definition not unfolded) makes vm_compute normalise MathComp's structures instead of
# failing: each goal gets this many seconds
GOAL_SECONDS = 20


_MIRRORS = re.compile(r"\(\*\s*mirrors\s+(d\d+_[a-z_0-9]+)\.([A-Za-z_0-9]+)")
_THEOREM = re.compile(r"^\s*(?:Theorem|Lemma|Corollary|Proposition)\s+([\w']+)", re.M)


def mirrors(coq_dir: Path = COQ_DIR) -> list[tuple[str, str, str]]:
    """(family key, Python result name, "File.theorem") for each Coq theorem preceded by a comment that begins
    ``(* mirrors dN_family.result_name``."""
    found = []
    for f in project_files(coq_dir):
        source = (coq_dir / f).read_text()
        for m in _MIRRORS.finditer(source):
            theorem = _THEOREM.search(source, m.end())
            if theorem is not None:
                found.append((m.group(1), m.group(2), f"{f[:-2]}.{theorem.group(1)}"))
    return found


def second_proofs(coq_dir: Path = COQ_DIR) -> dict[str, list[str]]:
    """{Python result name: ["File.theorem", ...]}: the Coq second proofs, read from the sources (so no table can
    drift from the proofs); tests/test_coq.py checks that each names a result of its own family."""
    found: dict[str, list[str]] = {}
    for _family, name, theorem in mirrors(coq_dir):
        found.setdefault(name, []).append(theorem)
    return found


TABLE_START, TABLE_END = "<!-- second-proofs table: generated by grpo_verify.coq.readme_table -->", "<!-- end -->"


def readme_table(claims_of: dict[str, list[str]], coq_dir: Path = COQ_DIR) -> str:
    """The table of derivations/coq/README.md: each Coq theorem, the kernel result (or remark) it proves again,
    and the claims of the ledger that cite that result (``claims_of``: {result name: claim keys})."""
    rows = ["| Coq theorem | kernel result it proves again | cited for claims |", "|---|---|---|"]
    for family, name, theorem in mirrors(coq_dir):
        claims = ", ".join(claims_of.get(name, [])) or "-"
        rows.append(f"| `{theorem}` | `{family}.{name}` | {claims} |")
    return "\n".join([TABLE_START, *rows, TABLE_END])


def main(argv: list[str] | None = None) -> int:
    """``python -m grpo_verify.coq [--write-readme]``: build and recheck the Coq proofs, print what each file
    took and what each headline theorem rests on; --write-readme rewrites the table of derivations/coq/README.md."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m grpo_verify.coq", description=main.__doc__)
    parser.add_argument("--write-readme", action="store_true",
                        help="rewrite the second-proofs table of derivations/coq/README.md (no build)")
    args = parser.parse_args(argv)
    if args.write_readme:
        from grpo_verify.outputs import write_atomically
        from grpo_verify.report.claims import claims_citing

        readme = COQ_DIR / "README.md"
        text = readme.read_text()
        if TABLE_START not in text or TABLE_END not in text:
            print(f"error: {readme}: no table markers ({TABLE_START} ... {TABLE_END})", file=sys.stderr)
            return 2
        head, rest = text.split(TABLE_START, 1)
        tail = rest.split(TABLE_END, 1)[1]
        write_atomically(readme, head + readme_table(claims_citing()) + tail)
        print(f"wrote {readme}", file=sys.stderr)
        return 0
    try:
        print("building derivations/coq/ (coqc, then coqchk) ...", file=sys.stderr, flush=True)
        built = build()
    except CoqError as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        print("\n".join(str(exc).splitlines()[1:]), file=sys.stderr)
        return 1
    for f in built.files:
        print(f"{f}: compiled in {built.seconds[f]:.1f} s")
    open_ = {n: a for n, a in built.assumptions.items() if a != CLOSED}
    print(f"{len(built.assumptions)} theorems printed by Print Assumptions, {len(open_)} resting on an axiom"
          + ("" if built.recheck else "; coqchk not installed, not rechecked") + ".")
    for name, answer in open_.items():
        print(f"  {name}: {answer}")
    forbidden = {f: uses for f in built.files if (uses := forbidden_uses((COQ_DIR / f).read_text()))}
    for f, uses in forbidden.items():
        print(f"  {f}: {', '.join(uses)}")
    return 1 if open_ or forbidden else 0


if __name__ == "__main__":
    raise SystemExit(main())
