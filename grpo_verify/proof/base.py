"""What the kernel is, in print: its files with their line counts, its rules, and the domains a result
reads off its symbols. Not trusted (it describes the trusted base; it decides nothing)."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import sympy as sp

PROOF = Path(__file__).resolve().parent
TRUSTED_FILES = ("terms.py", "relations.py", "operators.py", "arith.py", "definedness.py", "theorem.py",
                 "rules/__init__.py", "rules/algebra.py", "rules/sums.py", "rules/calculus.py",
                 "rules/expectation.py", "rules/matrices.py", "rules/order.py")
TRUSTED_BASE = ("the kernel files listed below (the term language and its canonical forms, the arithmetic in opaque "
                "atoms, definedness, theorems and the rules that alone make them); SymPy's construction of terms "
                "(its automatic evaluation when a term is built), its normal forms of rational functions in opaque "
                "atoms (cancel, expand) and its exact evaluation of closed numbers; z3's nlsat procedure for "
                "real arithmetic; and the mathematics each rule's docstring states")


def code_lines(path: Path) -> int:
    """Lines holding code: not blank, not only a comment, not a docstring."""
    lines, previous = set(), None
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        if tok.type == tokenize.STRING and (previous is None or previous.type in (
                tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL)):
            previous = tok
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
        previous = tok
    return len(lines)


def trusted_files() -> list[tuple[str, int, int]]:
    """(file relative to the repository, code lines, all lines) of every trusted file, including any extra
    rule module."""
    names = list(TRUSTED_FILES) + sorted(f"rules/{p.name}" for p in (PROOF / "rules").glob("*.py")
                                         if f"rules/{p.name}" not in TRUSTED_FILES)
    out = []
    for name in names:
        path = PROOF / name
        out.append((f"grpo_verify/proof/{name}", code_lines(path), len(path.read_text(encoding="utf-8").splitlines())))
    return out


def rule_table() -> list[tuple[str, str, str, str]]:
    """(name, kind, module, first paragraph of its docstring) of every registered rule."""
    from grpo_verify.proof.rules import RULES

    return [(name, r.kind, r.fn.__module__.rsplit(".", 1)[-1], " ".join(r.doc.split()))
            for name, r in sorted(RULES.items(), key=lambda kv: (kv[1].fn.__module__, kv[0]))]


def main() -> None:
    files = trusted_files()
    width = max(len(f) for f, _c, _a in files)
    for f, code, total in files:
        print(f"{f:<{width}}  {code:5d} code lines  {total:5d} lines")
    print(f"{'total':<{width}}  {sum(c for _f, c, _a in files):5d} code lines  {sum(a for _f, _c, a in files):5d} lines")
    print(f"{len(rule_table())} rules")


def symbol_domains(result: "Result") -> list[tuple[sp.Basic, str]]:
    """Every symbol, indexed family and function the result mentions, with the domain the kernel
    uses for it (SymPy's assumptions on it): these are hypotheses as much as the stated ones."""
    from sympy.core.function import AppliedUndef

    exprs = [result.lhs, result.rhs, *(s.expr for s in result.steps)]
    for a in result.assumptions:
        if a.for_all is not None:  # its index is bound: written as a sum over the range, for the scan
            exprs.append(sp.Sum(sp.Piecewise((1, a.condition), (0, True)), tuple(a.for_all)))
            continue
        exprs += [e for e in (a.condition, a.positive, *(a.equation or ())) if e is not None]
        if a.domain is not None:
            exprs.append(a.domain[0])
    found: dict[sp.Basic, str] = {}
    for e in exprs:
        e = sp.sympify(e)
        atoms = e.atoms(sp.Symbol, sp.Indexed, AppliedUndef) if not isinstance(e, sp.MatrixBase) else \
            set().union(*[x.atoms(sp.Symbol, sp.Indexed, AppliedUndef) for x in e])
        bound = {v for node in sp.preorder_traversal(e) if isinstance(node, (sp.Sum, sp.Product, sp.Lambda))
                 for v in node.variables} if not isinstance(e, sp.MatrixBase) else set()
        labels = {a.base.label for a in atoms if isinstance(a, sp.Indexed)}
        for atom in atoms:
            key = atom.base if isinstance(atom, sp.Indexed) else atom.func if isinstance(atom, AppliedUndef) else atom
            if key in found or (isinstance(atom, sp.Symbol) and (atom in bound or atom in labels)):
                continue
            found[key] = _domain_text(atom)
    return sorted(found.items(), key=lambda kv: str(kv[0]))


def _domain_text(atom: sp.Basic) -> str:
    from sympy.core.function import AppliedUndef

    kind = "integer" if atom.is_integer else "real"
    sign = next((text for key, text in (("positive", "> 0"), ("nonnegative", ">= 0"), ("negative", "< 0"),
                                        ("nonpositive", "<= 0"), ("nonzero", "!= 0")) if getattr(atom, f"is_{key}")),
                "")
    if isinstance(atom, AppliedUndef):
        return f"a smooth {kind} function{(' with values ' + sign) if sign else ''}"
    if isinstance(atom, sp.Indexed):
        return f"{kind}{(' ' + sign) if sign else ''}, every entry"
    return f"{kind}{(' ' + sign) if sign else ''}"


if __name__ == "__main__":
    main()
