"""Building sides of a statement so that the checker, not the import, does the computation."""

from __future__ import annotations

from typing import Callable

import sympy as sp


def as_written(build: Callable[[], sp.Basic]) -> sp.Basic:
    """Build an expression with SymPy's automatic evaluation off.

    ``Result(lhs=sp.exp(H(1/2)), rhs=2)`` would be decided by SymPy while the module is imported
    (both sides arrive as ``2``) and read "2 = 2" in print; ``lhs=as_written(lambda: sp.exp(H(1/2)))``
    keeps the defining expression, so the checker does the computation and the rendering shows it.
    """
    with sp.evaluate(False):
        return build()


def computation(name: str, latex: str, compute: Callable[..., sp.Basic]) -> type:
    """A named computation kept unevaluated until the checker calls ``doit``.

    For a side that is a long exact computation (an enumeration over all outcome tuples, say):
    ``F = computation("EnumeratedGradient", r"E_{\\mathrm{enum}}[A_1 g_1]", build)`` then
    ``lhs=F()`` prints as the given LaTeX and the checker, not the import, runs ``build(*args)``.
    In ``latex``, ``#1``, ``#2``, ... stand for the printed arguments (as in a TeX macro).
    """

    def doit(self, **hints):
        return compute(*self.args)

    def _latex(self, printer, exp=None):
        text = latex
        for n, arg in enumerate(self.args, start=1):
            text = text.replace(f"#{n}", printer._print(arg))
        return text

    return type(name, (sp.Function,), {"doit": doit, "_latex": _latex, "eval": classmethod(lambda cls, *args: None)})
