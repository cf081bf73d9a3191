"""The Coq/MathComp second proofs (``derivations/coq/``): build them, read what they rest on, evaluate them.

The proofs are checked by Coq's kernel, not by this module: it only runs ``coqc`` on the files listed in
``derivations/coq/_CoqProject`` (in that order, in a scratch copy so that no build output lands in the source
tree), scans the sources for anything that would add an assumption (``Admitted``, ``admit``, ``Axiom``,
``Parameter``, ...), and reads the output of each file's ``Print Assumptions`` lines. ``evaluate`` asks Coq to
decide ``expr == value`` at MathComp's ``rat`` by ``vm_compute``: how a test compares a Coq definition with the
Python code on the same rational inputs.
"""

from __future__ import annotations

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
FORBIDDEN = ("Admitted", "admit", "Axiom", "Axioms", "Parameter", "Parameters", "Conjecture", "Hypothesis",
             "Hypotheses", "Variable", "Variables", "Abort")
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
    out, depth, i, in_string = [], 0, 0, False
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
            i += 1
    return "".join(out)


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
    return found


@dataclass(frozen=True)
class Build:
    files: list[str]
    outputs: dict[str, str]  # file -> coqc's stdout (the answers of its Print Assumptions lines)
    seconds: dict[str, float]
    assumptions: dict[str, str]  # "File.theorem" -> Print Assumptions' answer


_ANSWER = re.compile(r"^(Closed under the global context|Axioms:\n(?:(?!Closed under|Axioms:).+(?:\n|$))*)", re.M)


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
    done = subprocess.run([exe, "-Q", ".", LOGICAL, f], cwd=scratch, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "LC_ALL": "C"})
    if done.returncode != 0:
        raise CoqError(f"derivations/coq/{f} does not compile:\n{done.stdout}\n{done.stderr}".strip())
    return done.stdout


def _scratch_copy(coq_dir: Path, files: list[str], scratch: str) -> None:
    for f in files:
        shutil.copy(coq_dir / f, Path(scratch) / f)


def build(coq_dir: Path = COQ_DIR, timeout: float = 600) -> Build:
    """Compile every file of ``_CoqProject`` in order, in a scratch copy; raise CoqError naming the first failure."""
    exe = _coqc_or_fail()
    files = project_files(coq_dir)
    outputs, seconds = {}, {}
    with tempfile.TemporaryDirectory(prefix="grpo-coq-") as scratch:
        _scratch_copy(coq_dir, files, scratch)
        for f in files:
            start = time.perf_counter()
            outputs[f] = _compile(exe, scratch, f, timeout)
            seconds[f] = time.perf_counter() - start
    assumptions = {f"{f[:-2]}.{name}": answer for f in files
                   for name, answer in assumptions_of((coq_dir / f).read_text(), outputs[f]).items()}
    return Build(files, outputs, seconds, assumptions)


def rat(value: Fraction | int) -> str:
    """A rational as a closed MathComp ``rat`` term."""
    value = Fraction(value)
    num, den = abs(value.numerator), value.denominator
    term = f"({num}%:R)" if den == 1 else f"({num}%:R / {den}%:R)"
    return f"(- {term})" if value < 0 else term


def evaluate(requires: list[str], goals: list[tuple[str, str]], coq_dir: Path = COQ_DIR,
             timeout: float = 300) -> None:
    """Ask Coq to decide each ``expr == value`` (both ``rat`` terms) by ``vm_compute``, after building the files it
    requires; raise CoqError unless every one holds."""
    exe = _coqc_or_fail()
    files = project_files(coq_dir)
    lines = ["From mathcomp Require Import all_ssreflect all_algebra.",
             f"From {LOGICAL} Require Import {' '.join(requires)}.",
             "Local Open Scope ring_scope.", ""]
    for k, (expr, value) in enumerate(goals):
        lines += [f"Lemma fidelity_{k} : ({expr} == {value} :> rat).", "Proof. by vm_compute. Qed.", ""]
    with tempfile.TemporaryDirectory(prefix="grpo-coq-eval-") as scratch:
        _scratch_copy(coq_dir, files, scratch)
        for f in _closure(requires, files):
            _compile(exe, scratch, f, timeout)
        (Path(scratch) / "Fidelity.v").write_text("\n".join(lines))
        try:
            _compile(exe, scratch, "Fidelity.v", timeout)
        except CoqError as exc:
            raise CoqError("Coq did not decide every goal:\n" + str(exc) + "\n" + "\n".join(lines)) from None


def _closure(requires: list[str], files: list[str]) -> list[str]:
    """The project files up to the last one required (build order is dependency order)."""
    wanted = {f"{r}.v" for r in requires}
    last = max(files.index(f) for f in wanted)
    return files[:last + 1]


_MIRRORS = re.compile(r"\(\*\s*mirrors\s+(d\d+_[a-z_0-9]+)\.([A-Za-z_0-9]+)")
_THEOREM = re.compile(r"^\s*(?:Theorem|Lemma|Corollary|Proposition)\s+([\w']+)", re.M)


def second_proofs(coq_dir: Path = COQ_DIR) -> dict[str, list[str]]:
    """{Python result name: ["File.theorem", ...]}: each Coq theorem preceded by a comment that begins
    ``(* mirrors dN_family.result_name`` is a second proof of that result (read from the sources, so the table
    cannot drift from the proofs)."""
    found: dict[str, list[str]] = {}
    for f in project_files(coq_dir):
        source = (coq_dir / f).read_text()
        for m in _MIRRORS.finditer(source):
            theorem = _THEOREM.search(source, m.end())
            if theorem is not None:
                found.setdefault(m.group(2), []).append(f"{f[:-2]}.{theorem.group(1)}")
    return found
