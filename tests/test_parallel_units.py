"""The work units of a parallel run (tests/conftest.py): a module whose tests share a module- or session-scoped
fixture must be one unit, or each xdist worker builds the fixture again (the Coq tree twice: 55 s each)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import SHARED_FIXTURE_MODULES, work_unit

TESTS = Path(__file__).resolve().parent


def _has_shared_fixture(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "fixture":
            for kw in node.keywords:
                if kw.arg == "scope" and isinstance(kw.value, ast.Constant) and kw.value.value != "function":
                    return True
    return False


def test_every_module_with_a_shared_fixture_is_listed_and_no_other():
    found = {p.name for p in TESTS.glob("test_*.py") if _has_shared_fixture(p)}
    assert found == set(SHARED_FIXTURE_MODULES), (sorted(found - set(SHARED_FIXTURE_MODULES)),
                                                   sorted(set(SHARED_FIXTURE_MODULES) - found))


def test_a_shared_module_is_one_unit_and_the_others_are_cut():
    assert len({work_unit(f"tests/test_coq.py::test_{k}") for k in range(40)}) == 1
    units = {work_unit(f"tests/test_soundness.py::test_false[{k}]") for k in range(40)}
    assert 1 < len(units) and all(u.startswith("tests/test_soundness.py@") for u in units)
    catalogue = work_unit("tests/test_derivations.py::test_derivation_is_proved[d4.x]")
    assert work_unit("tests/test_render.py::test_every_derivation_typesets") == catalogue
    assert work_unit("tests/test_render.py::test_document_compiles_to_pdf") == catalogue
    # the worker-process test compares the workers' reports with this process's, which the catalogue unit has
    assert work_unit("tests/test_render.py::test_worker_processes_report_what_this_process_checks") == catalogue
    assert work_unit("tests/test_render.py::test_a_worker_that_checked_another_statement_is_refused") != catalogue
    # the evaluator's test reads the verdicts the checks computed (evaluation.evaluate caches them per process)
    assert work_unit("tests/test_derivations.py::test_the_evaluator_finds_every_result_true_at_small_sizes[d4.x]") \
        == catalogue


def test_the_longest_units_are_real_units_and_are_handed_out_first():
    from conftest import LONGEST_UNITS, _LongestFirst

    assert LONGEST_UNITS[0] == work_unit("tests/test_derivations.py::test_derivation_is_proved[d4.x]")
    for unit in LONGEST_UNITS[1:]:  # whole-module units (a cut module's units are named module@n)
        assert (TESTS.parent / unit).is_file() and work_unit(f"{unit}::test_x") == unit, unit
    queue = _LongestFirst()
    for unit in ("tests/test_a.py@0", LONGEST_UNITS[2], "tests/test_b.py@1", LONGEST_UNITS[0]):
        queue[unit] = {}
    taken = [queue.popitem(last=False)[0] for _ in range(4)]
    assert taken == [LONGEST_UNITS[0], LONGEST_UNITS[2], "tests/test_a.py@0", "tests/test_b.py@1"] and not queue
