"""The operators a derivation may write that SymPy does not have: a matrix rank, a square matrix of
symbolic size, an expectation. They are inert terms: none evaluates itself (no ``doit``); what they mean
is fixed by the kernel's rules (``grpo_verify.proof.rules``) and by the models that realise them.
"""

from __future__ import annotations

import sympy as sp


class MatrixRank(sp.Function):
    """$\\operatorname{rank}(M)$ of an explicit matrix or of a ``SquareMatrix``: an unknown non-negative
    integer until a rank rule decides it."""

    nargs = 1
    is_integer = True
    is_nonnegative = True

    def doit(self, **hints):
        return self

    def _latex(self, printer, exp=None):
        body = r"\operatorname{rank}\left(%s\right)" % printer._print(self.args[0])
        return body if exp is None else r"%s^{%s}" % (body, exp)


class SquareMatrix(sp.Function):
    """The $n \\times n$ matrix with entry $(i, j)$ given by ``Lambda((i, j), entry)``, for a size that may
    be symbolic."""

    nargs = 2

    @property
    def size(self) -> sp.Basic:
        return self.args[0]

    @property
    def entry(self) -> sp.Lambda:
        return self.args[1]

    @classmethod
    def eval(cls, size, entry):
        if not isinstance(entry, sp.Lambda) or len(entry.variables) != 2:
            raise ValueError("SquareMatrix(size, Lambda((i, j), entry)): the entry is a Lambda of two indices")
        return None

    def doit(self, **hints):
        return self

    def _latex(self, printer, exp=None):
        i, j = self.entry.variables
        body = r"\left(%s\right)_{%s, %s = 1}^{%s}" % (printer._print(self.entry.expr), printer._print(i),
                                                      printer._print(j), printer._print(self.size))
        return body if exp is None else r"{%s}^{%s}" % (body, exp)


class Expectation(sp.Function):
    """$E[X]$ under the distribution of the random families ``random`` (``IndexedBase`` objects): the
    expectation binds them, so nothing said of a sampled value ``r_i`` outside reaches ``r_i`` inside.
    Build the operator of a derivation with ``Expectation.over("E", r, g)``. Its laws are the kernel's
    rule ``expectation_linearity`` and the stated assumptions; a model realises it by a finite
    distribution. The distribution may depend on the parameters (the policy's theta), so the kernel
    refuses an expectation under a derivative or at a point (``Subs``): nothing is said of how it moves."""

    nargs = 1
    is_real = True
    random: tuple = ()
    latex_name = r"\mathbb{E}"

    @classmethod
    def over(cls, name: str, *families: sp.IndexedBase, latex: str = r"\mathbb{E}") -> type:
        return type(name, (cls,), {"random": tuple(families), "latex_name": latex})

    def doit(self, **hints):
        return self

    def _eval_derivative(self, s):
        return None  # never SymPy's chain rule: the distribution itself depends on the parameters

    def _latex(self, printer, exp=None):
        body = r"%s\left[%s\right]" % (self.latex_name, printer._print(self.args[0]))
        return body if exp is None else r"%s^{%s}" % (body, exp)


class IidExpectation(Expectation):
    """$E[X]$ for ``X`` a polynomial in sums $\\sum_{i=1}^R f(r_i, g_i)$ over rollouts that are i.i.d.
    draws from one distribution: the kernel's rule ``iid_sum_moments`` counts the index tuples of each
    coincidence pattern. ``single`` is the operator of one rollout's moments (D5's ``E``), under the
    same distribution. Build with ``IidExpectation.over_rollouts("E_iid", E, r, g)``."""

    single: type = Expectation

    @classmethod
    def over_rollouts(cls, name: str, single: type, *families: sp.IndexedBase,
                      latex: str = r"\mathbb{E}_{\mathrm{iid}}") -> type:
        if not set(families) <= set(single.random):
            raise ValueError(f"{name}: one rollout's operator {single.__name__} must bind every family of it")
        return type(name, (cls,), {"random": tuple(families), "single": single, "latex_name": latex})
