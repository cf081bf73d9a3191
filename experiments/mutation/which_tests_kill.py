"""Which of the given tests fail on each given mutant (run from the repository root, after ``mutmut run``).

    python experiments/mutation/which_tests_kill.py --tests tests/test_oracle.py::test_a tests/test_oracle.py \\
        --mutants grpo_verify.oracle.x_expect_group__mutmut_26 'grpo_verify.oracle.x_rollout_term__*'

mutmut records that a mutant was killed, not by which test. This runs the tests once on the
unmutated code and then once per mutant, in mutmut's working copy ``mutants/`` (mutated code
first on sys.path, the mutant chosen by the ``MUTANT_UNDER_TEST`` variable that mutmut's
trampolines read at every call), all in this one process, and writes JSON to ``--out``:
{mutant: [tests that fail on it but pass on the unmutated code]}. ``--mutants`` takes mutmut's
names or shell-style patterns over the names in ``mutants/**/*.py.meta``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from pathlib import Path


class FailedTests:
    def __init__(self) -> None:
        self.failed: set[str] = set()

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed:
            self.failed.add(report.nodeid)


def run(tests: list[str], mutant: str) -> set[str]:
    import pytest

    os.environ["MUTANT_UNDER_TEST"] = mutant
    collector = FailedTests()
    pytest.main(["-q", "--no-header", "--tb=no", "-p", "no:randomly", "-p", "no:cacheprovider", *tests],
                plugins=[collector])
    return collector.failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", nargs="+", required=True, help="pytest node ids or files, relative to the root")
    parser.add_argument("--mutants", nargs="+", required=True, help="mutant names or patterns")
    parser.add_argument("--out", type=Path, required=True, help="write the JSON here (pytest prints to stdout)")
    args = parser.parse_args(argv)

    known = [key for meta in Path("mutants").rglob("*.py.meta")
             for key in json.loads(meta.read_text())["exit_code_by_key"]]
    mutants = [key for key in known if any(fnmatch.fnmatchcase(key, pattern) for pattern in args.mutants)]
    if not mutants:
        print("no mutant matches; run mutmut first, from the repository root", file=sys.stderr)
        return 1
    out = args.out.resolve()
    os.chdir("mutants")
    sys.path.insert(0, os.getcwd())
    failing_unmutated = run(args.tests, "")
    result = {"failing_without_mutation": sorted(failing_unmutated)}
    for mutant in mutants:
        result[mutant] = sorted(run(args.tests, mutant) - failing_unmutated)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
