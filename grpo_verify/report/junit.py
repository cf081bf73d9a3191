"""Property-test outcomes: parse a pytest JUnit XML report, or run the selected tests and parse theirs."""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

from .rules import TestEvidence

_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


class JUnitError(ValueError):
    """A JUnit file that cannot be read."""


def node_id(classname: str, name: str) -> str:
    """pytest's JUnit ``classname`` ("tests.test_x" or "tests.test_x.TestC") and ``name`` -> node id."""
    parts = classname.split(".") if classname else []
    module_end = next((i for i, p in enumerate(parts) if p.startswith("test_") or p.endswith("_test")),
                      len(parts) - 1)
    path = "/".join(parts[:module_end + 1]) + ".py" if parts else ""
    classes = parts[module_end + 1:]
    return "::".join([path, *classes, name]) if path else name


def parse(path: Path) -> dict[str, tuple[str, str]]:
    """{node id: (outcome, message)} with outcome passed / failed / error / skipped.

    A test reported twice (e.g. a call failure and a teardown error) keeps its worst outcome."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise JUnitError(f"{path}: not a readable JUnit XML report ({exc})") from None
    cases = root.iter("testcase")
    out: dict[str, tuple[str, str]] = {}
    found = False
    for case in cases:
        found = True
        nid = node_id(case.get("classname", ""), case.get("name", ""))
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = (child.get("message") or (child.text or "")).strip().splitlines()[0:1]
                message = message[0][:300] if message else ""
                break
        old = out.get(nid)
        if old is None or _SEVERITY[outcome] > _SEVERITY[old[0]]:
            out[nid] = (outcome, message)
    if not found and root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"{path}: no <testsuite> or <testcase> elements; not a JUnit report")
    return out


def matches(selector: str, nid: str) -> bool:
    return nid == selector or nid.startswith(selector + "[") or (
        "[" not in selector and nid.startswith(selector + "::"))


def evidence(selectors: Sequence[str], outcomes: dict[str, tuple[str, str]]) -> list[TestEvidence]:
    """One TestEvidence per selector: the worst outcome of the cases it selects, "missing" if none."""
    result = []
    for sel in selectors:
        cases = tuple((nid, o, m) for nid, (o, m) in sorted(outcomes.items()) if matches(sel, nid))
        if not cases:
            result.append(TestEvidence(sel, "missing"))
            continue
        worst = max((c[1] for c in cases), key=_SEVERITY.__getitem__)
        result.append(TestEvidence(sel, worst, cases))
    return result


def existing(selectors: Sequence[str], root: Path) -> tuple[list[str], list[str]]:
    """Split selectors into those whose file and test function exist (read with ast) and the rest,
    so a renamed test shows as "missing" instead of aborting the whole pytest run."""
    functions: dict[str, set[str]] = {}
    present, absent = [], []
    for sel in selectors:
        file, _, rest = sel.partition("::")
        if not rest:  # a whole file
            (present if (root / file).is_file() else absent).append(sel)
            continue
        func = rest.split("[", 1)[0].split("::")[-1]
        if file not in functions:
            path = root / file
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
                functions[file] = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            except (OSError, SyntaxError):
                functions[file] = set()
        (present if func in functions[file] else absent).append(sel)
    return present, absent


def run_tests(selectors: Sequence[str], root: Path, progress=sys.stderr, timeout: float = 3600) -> dict[str, tuple[str, str]]:
    """Run the selected tests with pytest in a subprocess (cwd ``root``) and return the parsed outcomes."""
    present, absent = existing(sorted(set(selectors)), root)
    if absent:
        print(f"tests: {len(absent)} selected test(s) not found: {', '.join(absent)}", file=progress, flush=True)
    if not present:
        return {}
    with tempfile.TemporaryDirectory() as work:
        xml = Path(work, "junit.xml")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               f"--junitxml={xml}", *present]
        print(f"tests: running {len(present)} selected property tests (pytest, cwd {root}) ...", file=progress, flush=True)
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout)
        tail = (proc.stdout.strip().splitlines() or [""])[-1]
        print(f"tests: pytest exit status {proc.returncode}: {tail}", file=progress, flush=True)
        if not xml.exists():
            raise JUnitError(f"pytest wrote no JUnit report (exit status {proc.returncode}):\n"
                             + "\n".join((proc.stdout + proc.stderr).splitlines()[-20:]))
        return parse(xml)
