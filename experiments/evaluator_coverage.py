"""Which small sizes the independent evaluator reached, result by result, over D1-D10.

For every result and every integer symbol of its statement, the evaluator tries each size from the
symbol's lower bound to the bound + 6 (grpo_verify/evaluation), the other symbols drawn at random. Where a size of
that range is missed, further sizes are tried so that seven are reached. A size can be missed for two reasons:
the assumptions admit no point there (a listed `for_each`, a parity, another symbol's bound), or every point
tried had no exact value (an enumeration too large). This script prints, per result, the sizes checked
and those of the range that were not, and a closing count; it exits 1 if the evaluator refutes any result.

    python experiments/evaluator_coverage.py            # every result (a few minutes)
    python experiments/evaluator_coverage.py d6_sparsity
"""

from __future__ import annotations

import sys
import time

from grpo_verify import evaluation
from grpo_verify.proof.catalog import all_results


def main(argv: list[str]) -> int:
    wanted = set(argv)
    results = [r for r in all_results() if not wanted or r.family in wanted]
    if not results:
        print(f"no results in {sorted(wanted)}", file=sys.stderr)
        return 2
    refuted, full, partial, none = 0, 0, 0, 0
    start = time.perf_counter()
    for n, result in enumerate(results, start=1):
        t0 = time.perf_counter()
        verdict = evaluation.evaluate(result)
        seconds = time.perf_counter() - t0
        ranges = []
        missed_any = False
        for symbol, values in sorted(verdict.sizes.items(), key=lambda kv: str(kv[0])):
            tried = verdict.planned.get(symbol, [])
            in_plan = [v for v in tried if v in values]
            missing = [v for v in tried if v not in values]
            short = len(in_plan) < min(len(tried), evaluation.SPAN + 1)
            missed_any = missed_any or short or not values
            ranges.append(f"{symbol}: {in_plan or 'none'}" + (f" (tried, no point checked: {missing})" if missing else "")
                          + (" SHORT of seven sizes" if short else ""))
        if verdict.refuted:
            refuted += 1
        if verdict.checked == 0:
            none += 1
        elif missed_any:
            partial += 1
        else:
            full += 1
        print(f"[{n}/{len(results)}] {result.family}.{result.name}: {'REFUTED' if verdict.refuted else 'ok'}, "
              f"{verdict.checked} points, {seconds:.1f} s; " + ("; ".join(ranges) or "no integer symbol"),
              flush=True)
    print(f"\n{len(results)} results in {time.perf_counter() - start:.0f} s: {full} with seven sizes (or every "
          f"listed one) of each integer symbol checked, {partial} short of that, {none} with no admissible point, "
          f"{refuted} refuted")
    return 1 if refuted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
