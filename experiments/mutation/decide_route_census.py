"""Which route of the SymPy side of the kernel decides each inequality of the derivations.

A route that decides nothing is trusted code with no use: it can only add a way to be wrong. This
script checks every derivation (as ``pytest tests/test_derivations.py`` does) with
``decide.inequality`` wrapped to count how each call ended: proved (by which candidate, or by exact
root isolation), refuted, or undecided. It only reads the outcomes; the kernel is not changed.

    OMP_NUM_THREADS=1 python experiments/mutation/decide_route_census.py

It is how the cancelled-form and factor-by-factor candidates were found to decide nothing (see
``README.md``, ``decide.py``); the proof tests (``tests/test_kernel*.py``, ``tests/test_decide_*.py``)
were counted the same way, with the wrapper in place for a pytest run.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from typing import Sequence

from grpo_verify.proof import decide
from grpo_verify.proof.catalog import all_results
from grpo_verify.proof.result import Result


def route_of(outcome: decide.Outcome) -> str:
    """The route named by an inequality outcome's detail ("sign from factor" -> "factor")."""
    if outcome.verdict is None:
        return "undecided"
    if outcome.verdict is False:
        return "refuted"
    found = re.match(r"sign from (\w+)", outcome.detail)
    if found:
        return found.group(1)
    if outcome.detail.startswith("exact real-root isolation"):
        return "root isolation"
    return f"other: {outcome.detail}"


def census(results: Sequence[Result] | None = None) -> tuple[Counter, list[str]]:
    """Check ``results`` (every derivation by default) and count the route of every inequality the
    SymPy side was asked; also return the names of the results not proved."""
    counts: Counter = Counter()
    original = decide.inequality

    def counted(e, strict, ctx):
        outcome = original(e, strict, ctx)
        counts[route_of(outcome)] += 1
        return outcome

    unproved = []
    decide.inequality = counted
    try:
        results = all_results() if results is None else list(results)
        for number, result in enumerate(results, 1):
            print(f"[{number}/{len(results)}] {result.family}.{result.name}", file=sys.stderr, flush=True)
            if not result.check(refresh=True).status.passed:
                unproved.append(f"{result.family}.{result.name}")
    finally:
        decide.inequality = original
    return counts, unproved


def main(argv: Sequence[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)  # no options: refuses any
    counts, unproved = census()
    print("route of each inequality the SymPy side decided or left open:")
    for route, n in counts.most_common():
        print(f"  {route:20} {n}")
    if unproved:
        print("not proved: " + ", ".join(unproved))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
