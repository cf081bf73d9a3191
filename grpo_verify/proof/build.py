"""Building sides of a statement so that the checker, not the import, does the computation."""

from __future__ import annotations

from typing import Callable

import sympy as sp

from grpo_verify.proof.terms import expand_computations  # noqa: F401 - re-exported


def as_written(build: Callable[[], sp.Basic]) -> sp.Basic:
    """Build an expression with SymPy's automatic evaluation off.

    ``Result(lhs=sp.exp(H(1/2)), rhs=2)`` would be decided by SymPy while the module is imported
    (both sides arrive as ``2``) and read "2 = 2" in print; ``lhs=as_written(lambda: sp.exp(H(1/2)))``
    keeps the defining expression, so the checker does the computation and the rendering shows it.
    """
    with sp.evaluate(False):
        return build()


def computation(name: str, latex: str, compute: Callable[..., sp.Basic]) -> type:
    """A named computation kept unbuilt until the checker asks for it.

    For a side that is a long exact computation (an enumeration over all outcome tuples, say):
    ``F = computation("EnumeratedGradient", r"E_{\\mathrm{enum}}[A_1 g_1]", build)`` then
    ``lhs=F()`` prints as the given LaTeX and the checker, not the import, runs ``build(*args)``: the
    explicit expression it returns is the statement the kernel checks (with its own rules: a finite sum
    written out, say), so ``build`` must only *write* the expression, never simplify it.
    In ``latex``, ``#1``, ``#2``, ... stand for the printed arguments (as in a TeX macro).
    """

    def built(self):
        return compute(*self.args)

    def _latex(self, printer, exp=None):
        text = latex
        for n, arg in enumerate(self.args, start=1):
            text = text.replace(f"#{n}", printer._print(arg))
        return text

    return type(name, (sp.Function,), {"built": built, "computation": True, "_latex": _latex,
                                       "eval": classmethod(lambda cls, *args: None)})


def propose(e, *rules):
    """``e`` with the given kernel rules applied everywhere (no hypotheses): a proposal for the next expression
    of a step, to write it without retyping; the kernel still checks the step that states it."""
    from grpo_verify.proof import rules as R
    from grpo_verify.proof.terms import canon
    from grpo_verify.proof.theorem import Context

    flat = []
    for r in rules:
        flat += list(r) if isinstance(r, tuple) else [r]
    local = R.Local(Context(()), rules=tuple(flat))
    out = canon(e)
    for r in flat:
        if r.kind == "directed":
            out = R.directed(out, r, local)
    return R.normalize(out, local)
