"""Helpers shared by the entry-point and report tests (imported by name: pytest puts tests/ on the path)."""

from __future__ import annotations

from pathlib import Path

import sympy as sp

from grpo_verify.proof import Assumption, Result
from grpo_verify.proof.catalog import Family


def listing(folder: Path) -> list[str]:
    """Every path below ``folder``, relative and sorted: to check that nothing was written."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def one_result_catalogue(progress=None):
    """A stand-in for ``check_all``: one family with one proved result, checked in milliseconds."""
    x = sp.Symbol("x", positive=True)
    result = Result(name="stand_in", doc="A stand-in result.", lhs=(x + 1) ** 2, rhs=x**2 + 2 * x + 1,
                    assumptions=(Assumption("$x > 0$"),))
    result.family = "d9_stand_in"
    family = Family("d9_stand_in", "D9", "D9 stand-in", "text", (result,), ())
    return [family], {"stand_in": result.check()}
