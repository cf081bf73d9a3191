"""LaTeX for derivations: statements and steps through SymPy's printer, prose escaped.

Prose fields are ASCII with inline maths between ``$...$``; the maths is passed through verbatim
and everything else is escaped, so a stray ``_`` or ``%`` in a sentence cannot break the document.
"""

from __future__ import annotations

import re

import sympy as sp

from grpo_verify.proof import Result, ResultReport, Status
from grpo_verify.proof.catalog import Family

RELATION_LATEX = {"=": "=", "<=": r"\le", ">=": r"\ge", "<": "<", ">": ">", "!=": r"\ne"}
LONGEST_EXPRESSION = 1800  # characters of LaTeX; longer ones are elided in print (not in checking)

_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_\allowbreak{}", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
            ">": r"\textgreater{}"}


class ProseError(ValueError):
    """A prose field that cannot be typeset (non-ASCII outside maths, unbalanced $)."""


def prose(text: str, where: str = "") -> str:
    """Escape prose, keeping ``$...$`` maths verbatim."""
    controls = sorted({f"U+{ord(ch):04X}" for ch in text if ord(ch) < 32 and ch != "\n"})
    if controls:
        raise ProseError(f"{where}: control characters {controls} in {text!r} (a backslash escape such as "
                         "\\v or \\r in a non-raw string? write r'...' or double the backslash)")
    parts = text.split("$")
    if len(parts) % 2 == 0:
        raise ProseError(f"{where}: unbalanced $ in {text!r}")
    out = []
    for n, part in enumerate(parts):
        if n % 2 == 1:
            out.append(f"${part}$")
            continue
        bad = sorted({ch for ch in part if ord(ch) > 127})
        if bad:
            raise ProseError(f"{where}: non-ASCII characters {bad} outside $...$ in {text!r}")
        out.append("".join(_ESCAPES.get(ch, ch) for ch in part))
    return "".join(out)


def plain(text: str) -> str:
    """Prose for a terminal: the maths markers dropped."""
    return text.replace("$", "")


def expression(e: sp.Basic) -> str:
    code = sp.latex(e)
    if len(code) > LONGEST_EXPRESSION:
        return (r"\text{[an expression of %d characters, elided in print; it is checked in full]}"
                % len(code))
    return code


STATUS_LATEX = {
    Status.PROVED: r"\textbf{proved} (symbolic)",
    Status.PROVED_FOR_RANGE: r"\textbf{proved for %s only}",
    Status.UNPROVED: r"\textbf{UNPROVED}",
    Status.REFUTED: r"\textbf{REFUTED}",
}


def status_latex(report: ResultReport) -> str:
    text = STATUS_LATEX[report.status]
    if report.status is Status.PROVED_FOR_RANGE:
        text = text % f"${prose_math_scope(report.scope)}$"
    return text


def prose_math_scope(scope: str) -> str:
    """'R = 2..16' -> 'R = 2, \\dots, 16'."""
    return re.sub(r"(\d+)\.\.(\d+)", r"\1, \\dots, \2", scope).replace(" in ", r" \in ")


def result_section(result: Result, report: ResultReport) -> str:
    where = f"{result.family}.{result.name}"
    rel = RELATION_LATEX[result.relation]
    lines = [rf"\subsection*{{\texttt{{{prose(result.name)}}}}}", prose(result.doc, where), ""]
    if result.assumptions:
        lines.append(r"\paragraph{Assumptions.}")
        lines.append(r"\begin{itemize}")
        for a in result.assumptions:
            lines.append(rf"\item {prose(a.text, where)}")
        lines.append(r"\end{itemize}")
    lines += [r"\paragraph{Statement.}", r"\begin{align*}",
              rf"{expression(result.lhs)} &{rel} {expression(result.rhs)}", r"\end{align*}"]
    lines.append(r"\paragraph{Proof.}")
    links = result.links()
    if not result.steps:  # decided in one link: the statement need not be printed twice
        step, step_report = links[0], report.steps[0]
        why = f" {prose(step.why, where)}" if step.why else ""
        lines.append(rf"\emph{{{prose(step.rule, where)}}}.{why} --- {prose(step_report.status.value)}.\par")
        return _close(lines, report)
    lines.append(r"\begin{align*}")
    rows = [rf"& {expression(result.lhs)}"]
    for n, step in enumerate(links, start=1):
        rows.append(rf"&{RELATION_LATEX[step.relation]} {expression(step.expr)} && \text{{({n})}}")
    lines.append(" \\\\\n".join(rows))
    lines.append(r"\end{align*}")
    lines.append(r"\begin{enumerate}")
    for n, (step, step_report) in enumerate(zip(links, report.steps), start=1):
        why = f" {prose(step.why, where)}" if step.why else ""
        cited = ""
        named = [u.name for u in step.using if isinstance(u, Result)]
        if named:
            cited = " Uses " + ", ".join(rf"\texttt{{{prose(x)}}}" for x in named) + "."
        lines.append(rf"\item[({n})] \emph{{{prose(step.rule, where)}}}.{why}{cited} "
                     rf"--- {prose(step_report.status.value)}.")
    lines.append(r"\end{enumerate}")
    return _close(lines, report)


def _close(lines: list[str], report: ResultReport) -> str:
    """The verdict, then the detail of every failing check (a link, the chain's end or its relation)."""
    lines.append(rf"\noindent\textit{{Check:}} {status_latex(report)}, {report.seconds:.2f}\,s.")
    failing = [s for s in report.steps if not s.status.passed]
    for s in failing:
        lines.append(rf"\par\noindent Check {s.index} ({prose(s.rule)}): {prose(s.status.value)}, "
                     rf"{prose(plain(s.detail))}")
    return "\n".join(lines) + "\n"


def family_section(family: Family, reports: dict[str, ResultReport]) -> str:
    lines = [rf"\section{{{prose(family.title, family.key)}}}", prose(family.text, family.key), ""]
    for result in family.results:
        lines.append(result_section(result, reports[result.name]))
    for remark in family.remarks:
        lines.append(rf"\paragraph{{Remark ({prose(remark.name)}).}} {prose(remark.text, family.key)}" + "\n")
    return "\n".join(lines)


def summary_table(families: list[Family], reports: dict[str, ResultReport]) -> str:
    rows = []
    for family in families:
        for result in family.results:
            rep = reports[result.name]
            scope = "symbolic" if rep.scope == "symbolic" else f"${prose_math_scope(rep.scope)}$"
            rows.append(rf"{family.label} & \texttt{{{prose(result.name)}}} & {prose(rep.status.value)} & {scope} \\")
    return "\n".join([r"\begin{longtable}{llll}", r"family & result & status & scope \\ \hline", r"\endhead",
                      *rows, r"\end{longtable}"])


def document(families: list[Family], reports: dict[str, ResultReport], version: str) -> str:
    body = "\n".join(family_section(f, reports) for f in families)
    counts = {s: sum(1 for r in reports.values() if r.status is s) for s in Status}
    tally = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    return "\n".join([
        r"\documentclass[10pt]{article}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\usepackage{amsmath,amssymb,longtable}",
        r"\allowdisplaybreaks",
        r"\title{grpo-verify: the derivations, checked step by step}",
        rf"\author{{grpo-verify {prose(version)}}}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
        r"\noindent Every step below was decided by SymPy when this document was generated. "
        r"\emph{Proved (symbolic)} holds for every admissible value of every symbol; "
        r"\emph{proved for $R = a, \dots, b$} was decided exactly for each listed value only; "
        r"\emph{unproved} means no exact procedure decided the step (it is never counted as passed); "
        r"\emph{refuted} means a counterexample satisfying the assumptions was found. "
        rf"This run: {prose(tally)}.",
        r"\section*{Summary}",
        summary_table(families, reports),
        body,
        r"\end{document}",
        "",
    ])
