"""Relations built unevaluated: SymPy would otherwise decide ``R >= 0`` from declarations while building
it, and the kernel decides every relation itself (ring normal form, closed numbers, z3). Trusted."""

from __future__ import annotations

import sympy as sp


def Eq(a, b):  # noqa: N802 - named after the relation
    return sp.Eq(a, b, evaluate=False)


def Ne(a, b):  # noqa: N802
    return sp.Ne(a, b, evaluate=False)


def Lt(a, b):  # noqa: N802
    return sp.Lt(a, b, evaluate=False)


def Le(a, b):  # noqa: N802
    return sp.Le(a, b, evaluate=False)


def Gt(a, b):  # noqa: N802
    return sp.Gt(a, b, evaluate=False)


def Ge(a, b):  # noqa: N802
    return sp.Ge(a, b, evaluate=False)


BY_NAME = {"=": Eq, "!=": Ne, "<": Lt, "<=": Le, ">": Gt, ">=": Ge}
BY_CLASS = {sp.Eq: Eq, sp.Ne: Ne, sp.Lt: Lt, sp.Le: Le, sp.Gt: Gt, sp.Ge: Ge}


def rebuilt(e, args):
    """``e.func(*args)``, a relation left unevaluated unless it compares two closed numbers (SymPy's exact
    evaluation of closed numbers decides it; SymPy's Piecewise refuses an unevaluated numeric condition)."""
    if isinstance(e, sp.Rel):
        if all(getattr(a, "is_number", False) and not a.free_symbols for a in args):
            if not all(a.is_real is True for a in args):  # SymPy decides Eq(I, I) and Eq(zoo, zoo): True
                from grpo_verify.proof.terms import KernelError
                raise KernelError(f"{sp.sstr(e.func(*args, evaluate=False))} compares a number that is not real")
            return type(e)(*args)
        return BY_CLASS[type(e)](*args)
    return e.func(*args)
