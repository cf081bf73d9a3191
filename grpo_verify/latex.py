"""LaTeX for derivations: statements and steps through SymPy's printer, prose escaped.

Prose fields are ASCII with inline maths between ``$...$``; the maths is passed through verbatim
and everything else is escaped, so a stray ``_`` or ``%`` in a sentence cannot break the document.
"""

from __future__ import annotations

import re
from typing import Sequence

import sympy as sp

from grpo_verify import coq
from grpo_verify.proof import Assumption, Result, ResultReport, Status
from grpo_verify.proof.check import SYMBOLIC
from grpo_verify.proof.result import Instance
from grpo_verify.proof.catalog import Family
from grpo_verify.proof.base import TRUSTED_BASE, rule_table, symbol_domains, trusted_files

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
    elif report.status is Status.PROVED and report.scope != SYMBOLIC:
        text = rf"\textbf{{proved}} ({scope_latex(report.scope)})"
    return text


def scope_latex(scope: str) -> str:
    """A report's scope in print: 'symbolic', a range in maths, or an instance whose text has its own maths."""
    if scope == SYMBOLIC:
        return scope
    if scope.startswith("instance ("):
        return prose(scope)
    return f"${prose_math_scope(scope)}$"


def prose_math_scope(scope: str) -> str:
    """'R = 2..16' -> 'R = 2, \\dots, 16'."""
    return re.sub(r"(\d+)\.\.(\d+)", r"\1, \\dots, \2", scope).replace(" in ", r" \in ")


def result_section(result: Result, report: ResultReport, coq_theorems: Sequence[str] = ()) -> str:
    """``coq_theorems``: the Coq theorems that prove this result a second time (marked after its check)."""
    where = f"{result.family}.{result.name}"
    rel = RELATION_LATEX[result.relation]
    lines = [rf"\subsection*{{\texttt{{{prose(result.name)}}}}}", prose(result.doc, where), ""]
    domains = symbol_domains(result)
    if domains:
        shown = "; ".join(rf"${sp.latex(x)}$: {prose(text)}" for x, text in domains)
        lines.append(rf"\paragraph{{Domains.}} {shown}.")
    if result.assumptions:
        lines.append(r"\paragraph{Assumptions.}")
        lines.append(r"\begin{itemize}")
        for a in result.assumptions:
            lines.append(rf"\item {prose(a.text, where)}{_formal(a)}")
        lines.append(r"\end{itemize}")
    if report.consistency:
        lines.append(rf"\noindent\textit{{Consistency:}} {prose(plain(report.consistency))}.\par")
    if report.evaluation:
        lines.append(rf"\noindent\textit{{Evaluator:}} {prose(plain(report.evaluation))}.\par")
    lines += [r"\paragraph{Statement.}", r"\begin{align*}",
              rf"{expression(result.lhs)} &{rel} {expression(result.rhs)}", r"\end{align*}"]
    lines.append(r"\paragraph{Proof.}")
    links = result.links()
    if result.induction is not None:  # two checks: the base case and the step
        n, base = sp.latex(result.induction.symbol), result.induction.base
        why = f" {prose(result.why, where)}" if result.why else ""
        lines.append(rf"\emph{{By induction on ${n}$ from ${n} = {base}$}}.{why}{_cited(links[0])}")
        lines.append(r"\begin{itemize}")
        for label, step_report in zip((rf"Base case ${n} = {base}$", rf"Step ${n} \to {n} + 1$, the statement at ${n}$ "
                                       "assumed"), report.steps):
            lines.append(rf"\item {label} --- {_decided(step_report)}.")
        lines.append(r"\end{itemize}")
        return _close(lines, report, coq_theorems)
    if result.minimum_at is not None:  # two checks: the value at the point and the slope's sign
        v, c = sp.latex(result.minimum_at.symbol), expression(sp.sympify(result.minimum_at.point))
        why = f" {prose(result.why, where)}" if result.why else ""
        lines.append(rf"\emph{{By the mean value theorem about ${v} = {c}$}}.{why}{_cited(links[0])}")
        lines.append(r"\begin{itemize}")
        for label, step_report in zip((rf"The difference of the two sides at ${v} = {c}$ is $\ge 0$",
                                       rf"Its slope times $({v} - {c})$ is $\ge 0$ at every admissible ${v}$ "
                                       "(an interval)"), report.steps):
            lines.append(rf"\item {label} --- {_decided(step_report)}.")
        lines.append(r"\end{itemize}")
        return _close(lines, report, coq_theorems)
    if not result.steps:  # decided in one link: the statement need not be printed twice
        step, step_report = links[0], report.steps[0]
        why = f" {prose(step.why, where)}" if step.why else ""
        lines.append(rf"\emph{{{prose(step.rule, where)}}}.{why}{_cited(step)} --- {_decided(step_report)}.\par")
        return _close(lines, report, coq_theorems)
    lines.append(r"\begin{align*}")
    rows = [rf"& {expression(result.lhs)}"]
    for n, step in enumerate(links, start=1):
        rows.append(rf"&{RELATION_LATEX[step.relation]} {expression(step.expr)} && \text{{({n})}}")
    lines.append(" \\\\\n".join(rows))
    lines.append(r"\end{align*}")
    lines.append(r"\begin{enumerate}")
    for n, (step, step_report) in enumerate(zip(links, report.steps), start=1):
        why = f" {prose(step.why, where)}" if step.why else ""
        lines.append(rf"\item[({n})] \emph{{{prose(step.rule, where)}}}.{why}{_cited(step)} "
                     rf"--- {_decided(step_report)}.")
    lines.append(r"\end{enumerate}")
    return _close(lines, report, coq_theorems)


def _formal(a) -> str:
    """What an assumption says to the kernel, in maths (the prose may paraphrase it)."""
    parts = []
    if a.condition is not None and a.for_all is not None:
        index, lo, hi = a.for_all
        parts.append(rf"{expression(a.condition)} \text{{ for every }} {sp.latex(index)} = {expression(sp.sympify(lo))}, "
                     rf"\dots, {expression(sp.sympify(hi))}")
    elif a.condition is not None:
        parts.append(expression(a.condition))
    if a.domain is not None:
        parts.append(rf"{sp.latex(a.domain[0])} \in {sp.latex(a.domain[1])}")
    if a.positive is not None:
        parts.append(rf"{expression(a.positive)} > 0")
    if a.equation is not None:
        every = (r" \text{ for every } " + ", ".join(sp.latex(v) for v in a.for_every)) if a.for_every else ""
        parts.append(rf"{expression(a.equation[0])} = {expression(a.equation[1])}{every}")
    if not parts:
        return r" \emph{(context, prose only: the kernel uses the domains above and the formal assumptions)}"
    return f" [${'$, $'.join(parts)}$]" + (r" \emph{(context: the proof does not need it)}" if a.context else "")


def _cited(step) -> str:
    named = [rf"\texttt{{{prose(u.name)}}}" for u in step.using if isinstance(u, Result)]
    named += [rf"\texttt{{{prose(u.name)}}} at $" + ", ".join(f"{sp.latex(v)} = {expression(e)}" for v, e in u.values)
              + "$" for u in step.using if isinstance(u, Instance)]
    assumed = [u for u in step.using if isinstance(u, Assumption)]
    text = ""
    if named:
        text += " Uses " + ", ".join(named) + "."
    if assumed:
        text += " Rewrites with the assumption" + ("s " if len(assumed) > 1 else " ") + \
            ", ".join(rf"${expression(a.equation[0])} = {expression(a.equation[1])}$" for a in assumed) + "."
    return text


def _decided(step_report) -> str:
    """The status and the procedure that decided it."""
    route = f" by {prose(step_report.route)}" if step_report.route and step_report.status.passed else ""
    return f"{prose(step_report.status.value)}{route}"


def _obligations(report: ResultReport) -> str:
    if not report.obligations:
        return ""
    items = []
    for o in report.obligations:
        how = f" ({prose(o.route)})" if o.route else ""
        shown = f"${o.latex}$" if o.latex and len(o.latex) <= 400 else rf"\texttt{{{prose(o.condition[:160])}}}"
        items.append(rf"{shown}{how}: {prose(o.status.value)}")
    return r"\par\noindent\textit{Definedness obligations:} " + "; ".join(items) + "."


def second_proof_mark(coq_theorems: Sequence[str]) -> str:
    """The line that marks a result also proved in Coq ("" if none)."""
    if not coq_theorems:
        return ""
    names = ", ".join(rf"\texttt{{{prose(t)}}}" for t in coq_theorems)
    return (rf"\par\noindent\textbf{{[Coq]}} \textit{{Second proof:}} {names} (Coq/MathComp, \texttt{{derivations/coq/}}), "
            r"checked by Coq's kernel when \texttt{tests/test\_coq.py} runs, not by this document.")


def _close(lines: list[str], report: ResultReport, coq_theorems: Sequence[str] = ()) -> str:
    """The verdict, then the detail of every failing check (a link, the chain's end or its relation), then the
    mark of a Coq second proof."""
    lines.append(_obligations(report))
    if report.rules:
        lines.append(r"\par\noindent\textit{Rests on:} " + ", ".join(rf"\texttt{{{prose(r)}}}" for r in report.rules)
                     + ", the ring normal form and the arithmetic.")
    lines.append(rf"\par\noindent\textit{{Check:}} {status_latex(report)}, {report.seconds:.2f}\,s.")
    failing = [s for s in report.steps if not s.status.passed]
    for s in failing:
        lines.append(rf"\par\noindent Check {s.index} ({prose(s.rule)}): {prose(s.status.value)}, "
                     rf"{prose(plain(s.detail))}")
    if coq_theorems:
        lines.append(second_proof_mark(coq_theorems))
    return "\n".join(lines) + "\n"


def family_section(family: Family, reports: dict[str, ResultReport],
                   second_proofs: dict[str, Sequence[str]] | None = None) -> str:
    second_proofs = second_proofs or {}
    lines = [rf"\section{{{prose(family.title, family.key)}}}", prose(family.text, family.key), ""]
    for result in family.results:
        lines.append(result_section(result, reports[result.name], second_proofs.get(result.name, ())))
    for remark in family.remarks:
        lines.append(rf"\paragraph{{Remark ({prose(remark.name)}).}} {prose(remark.text, family.key)}"
                     + second_proof_mark(second_proofs.get(remark.name, ())) + "\n")
    return "\n".join(lines)


def summary_table(families: list[Family], reports: dict[str, ResultReport],
                  second_proofs: dict[str, Sequence[str]] | None = None) -> str:
    second_proofs = second_proofs or {}
    rows = []
    for family in families:
        for result in family.results:
            rep = reports[result.name]
            scope = scope_latex(rep.scope)
            mark = "Coq" if second_proofs.get(result.name) else ""
            rows.append(rf"{family.label} & \texttt{{{prose(result.name)}}} & {prose(rep.status.value)} & {scope} & "
                        rf"{mark} \\")
    return "\n".join([r"\begin{longtable}{lllll}", r"family & result & status & scope & second proof \\ \hline",
                      r"\endhead", *rows, r"\end{longtable}"])


def trusted_base_table() -> str:
    """The kernel's files with their line counts, and every rule."""
    files = trusted_files()
    rows = [rf"\texttt{{{prose(f)}}} & {code} & {total} \\" for f, code, total in files]
    rows.append(rf"total & {sum(c for _f, c, _t in files)} & {sum(t for _f, _c, t in files)} \\")
    rules = [rf"\texttt{{{prose(name)}}} & {prose(kind)} & {prose(doc)} \\" for name, kind, _m, doc in rule_table()]
    return "\n".join([r"\begin{longtable}{lrr}", r"trusted file & code lines & lines \\ \hline", *rows,
                      r"\end{longtable}", r"\begin{longtable}{llp{11cm}}", r"rule & kind & what it states \\ \hline",
                      r"\endhead", *rules, r"\end{longtable}"])


def document(families: list[Family], reports: dict[str, ResultReport], version: str,
             second_proofs: dict[str, Sequence[str]] | None = None) -> str:
    """``second_proofs``: {result or remark name: Coq theorems}, by default read from derivations/coq/."""
    second_proofs = coq.second_proofs() if second_proofs is None else second_proofs
    body = "\n".join(family_section(f, reports, second_proofs) for f in families)
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
        r"\noindent Every step below was checked by the proof kernel when this document was generated. "
        r"A step holds only by the kernel's rules: it names them, and the kernel applies exactly those (one small "
        r"function each, with its side conditions proved where it acts), rewrites with the cited equations, and "
        r"then needs both sides equal as rational functions of their atoms or the relation to follow in real "
        r"arithmetic (z3). No evaluation of sums, derivatives or matrices by SymPy decides a step. "
        r"\emph{Proved (symbolic)} holds for every admissible value of every symbol; \emph{proved (instance ...)} "
        r"is a statement about the specific values named (a single instance, or a statement with no free symbol); "
        r"\emph{proved for $R = a, \dots, b$} was checked for each listed value only; "
        r"\emph{unproved} means no rule established the step (it is never counted as passed); "
        r"\emph{refuted} means the independent evaluator found an admissible point where the statement fails. "
        rf"This run: {prose(tally)}.",
        r"\par\noindent Every expression must be \emph{defined} where it is used (denominators nonzero, "
        r"logarithms of positive numbers, roots of non-negative numbers, sums with upper limit at least the lower "
        r"minus one, derivatives only where the function is differentiable), each obligation proved from the "
        r"assumptions. The domains of the symbols are hypotheses like the stated assumptions. A result with "
        r"assumptions is proved only if they hold exactly at an explicit model (\emph{Consistency}), and each "
        r"result is first evaluated exactly at small sizes by an evaluator that shares no code with the rules "
        r"(\emph{Evaluator}).",
        r"\par\noindent \textit{Trusted base:} " + prose(TRUSTED_BASE) + ".",
        r"\par\noindent \textit{Second proofs:} a result marked \textbf{[Coq]} is also a theorem of Coq 8.16 with "
        r"MathComp (\texttt{derivations/coq/}, for every group size), whose trusted base is Coq's kernel (rechecked by "
        r"\texttt{coqchk}) and MathComp's definitions, not the kernel above; \texttt{tests/test\_coq.py} compiles "
        r"them, requires every \texttt{Print Assumptions} to be closed, and has Coq evaluate their definitions at "
        r"rationals against the Python code. " + prose(f"{sum(1 for v in second_proofs.values() if v)}")
        + r" results and remarks have one.",
        trusted_base_table(),
        r"\section*{Summary}",
        summary_table(families, reports, second_proofs),
        body,
        r"\end{document}",
        "",
    ])
