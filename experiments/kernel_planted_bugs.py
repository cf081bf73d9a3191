"""Plant each of the proof kernel's checks' bugs in a copy of the package and run the kernel tests.

Every planted bug must make ``tests/test_kernel.py``, ``tests/test_soundness.py``, ``tests/test_smt.py``,
``tests/test_proof_validation.py``, ``tests/test_smt_translation.py`` or ``tests/test_definedness_obligations.py``
fail; a plant that leaves them green is a check no test pins. Run from the
repository root (about a minute per plant):

    python experiments/kernel_planted_bugs.py            # every plant
    python experiments/kernel_planted_bugs.py 3 7        # some of them

Prints one line per plant with pytest's closing line; exits 1 if any plant survives or no longer applies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (file under grpo_verify/proof/, the line(s) as they are, the planted bug)
PLANTS = [
 ("definedness.py", "    if exp.is_integer:\n        out.append(Obligation(sp.Ne(base, 0)", "    if exp.is_integer and False:\n        out.append(Obligation(sp.Ne(base, 0)"),
 ("kernel.py", "                ok, _route = prove_condition(h, ctx)\n                if not ok:", "                ok, _route = True, ''\n                if not ok:"),
 ("kernel.py", "    return all(strict(h) for h in hypotheses)", "    return True"),
 ("definedness.py", "    return sp.Or(sp.Ne(value, 0), sp.And(sp.Eq(value, 0), sp.Eq(slope, 0)))", "    return sp.Or(sp.Ne(value, 0), sp.Eq(value, 0))"),
 ("kernel.py", "    if consistent is False:\n        detail = ", "    if consistent is None:\n        detail = "),
 ("kernel.py", "    if not checked:\n        return _Link(Status.UNPROVED", "    if False:\n        return _Link(Status.UNPROVED"),
 ("decide.py", "    points = _gap_points(roots, lo, hi)", "    points = []"),
 ("result.py", "        if key in self._STATEMENT and self.__dict__.get(\"_frozen\"):", "        if False:"),
 ("kernel.py", "    found = []\n    for h in hypotheses:", "    found = []\n    for h in []:"),
 ("kernel.py", "hypotheses=[h for h in ctx.hypotheses if not (h.free_symbols & set(o.bound))]", "hypotheses=list(ctx.hypotheses)"),
 ("kernel.py", "                if not prove_condition(sp.Not(cond), ctx)[0]:\n                    break", "                if False:\n                    break"),
 ("definedness.py", "        raise KernelError(f\"{where}: the float {e!r} is not exact; write it as a Rational\")", "        return"),
 ("definedness.py", "            raise KernelError(f\"{where}: the float {node} is not exact (it is rounded); write it as a Rational\")", "            pass"),
 ("kernel.py", "    if sym.verdict is not None and z3_verdict is not None and sym.verdict != z3_verdict:", "    if False:"),
 ("decide.py", "        if strict:\n            point = a if a == b else None", "        if False:\n            point = a if a == b else None"),
 ("definedness.py", "            here.append(Obligation(sp.Ge(hi, lo - 1),", "            (lambda *a: None)(Obligation(sp.Ge(hi, lo - 1),"),
 ("kernel.py", "        here = replace(ctx, hypotheses=[h for h in ctx.hypotheses if j not in h.free_symbols])", "        here = ctx"),
 ("kernel.py", "    if strict and not nonempty:\n        return \"\"", "    if False:\n        return \"\""),
 ("kernel.py", "        if not prove_condition(sp.Gt(coefficient, 0), ctx)[0]:\n            # c * Sum", "        if False:\n            # c * Sum"),
 ("kernel.py", "    conditions = [sp.Ge(b, 0), sp.Gt(a, b)", "    conditions = [sp.Gt(a, b)"),
 ("kernel.py", "sp.Ge(n, 1) if strict else sp.Ge(n, 0)]", "sp.Ge(n, 0)]"),
 ("smt.py", "        solver.add(*tr.side, *query, *tr.congruence())", "        solver.add(*tr.side, *query)"),
 ("decide.py", "    if not protected:\n        return e.subs(a, b)", "    if True:\n        return e.subs(a, b)"),
 ("definedness.py", "        if point is not None and order == 1 and", "        if point is not None and"),
 ("definedness.py", "    if len(mapping) > 1 and any(p.free_symbols & set(mapping) for p in mapping.values()):", "    if False:"),
 ("kernel.py", "        if h.has(n) and not _lower_bound(h, n):", "        if False:"),
 ("kernel.py", "    if not prove_condition(sp.Ge(n, base), ctx)[0]:", "    if False:"),
 ("kernel.py", "            if getattr(v, f\"is_{key}\") and not prove_condition(relation(value, 0), ctx)[0]:", "            if False:"),
 ("kernel.py", "        if not prove_condition(at(h), ctx)[0]:", "        if False:"),
 ("kernel.py", "        if value.free_symbols & bound:", "        if False:"),
 ("kernel.py", "        if v.is_integer and value.is_integer is not True:", "        if False:"),
 ("kernel.py", "        if h.has(x) and not _constant_bound(h, x):", "        if False:"),
 ("kernel.py", "    if not all(prove_condition(h, link_ctx)[0] for h in at_point):", "    if False:"),
 ("smt.py", "                                                         for b in limit)\n    return False", "                                                         for b in limit)\n    return True"),
 ("kernel.py", "    refutable = not ctx.quantified and not ctx.universal", "    refutable = not ctx.universal"),
 ("kernel.py", "    refutable = not ctx.quantified and not ctx.universal", "    refutable = not ctx.quantified"),
 ("kernel.py", "        instances.append(condition.xreplace({index: at[lo, hi]}))", "        pass"),
 ("kernel.py", "                if q not in ctx.quantified:", "                if False:"),
 ("kernel.py", "        if prove_condition(sp.Ge(lo, qlo), ctx)[0] and prove_condition(sp.Le(hi, qhi), ctx)[0]:", "        if True:"),
 ("kernel.py", "            if holds(square, \"=\", entry(a, b), inside):", "            if True:"),
 ("kernel.py", "            inside = [sp.Ge(a, 1), sp.Le(a, size), sp.Ge(b, 1), sp.Le(b, size)]", "            inside = [sp.Ge(a, 1), sp.Ge(b, 1), sp.Ge(a, 1), sp.Ge(b, 1)]"),
 ("kernel.py", "            elif holds(entry(a, a), \"!=\", sp.Integer(0), inside[:2]) and (", "            elif True and ("),
 ("kernel.py", "                    holds(entry(a, b), \"=\", sp.Integer(0), inside + [sp.Lt(a, b)])", "                    holds(entry(a, b), \"=\", sp.Integer(0), inside)"),
 ("result.py", "            return \">\" if \">\" in rels else \">=\"", "            return \">\""),
 ("result.py", "            return \"<\" if \"<\" in rels else \"<=\"", "            return \"<\""),
 ("definedness.py", "        for limit in reversed(e.limits):", "        for limit in e.limits:"),
 ("result.py", "                if isinstance(node, sp.Float):\n                    raise KernelError(f\"{where}: the float {node} in the domain",
  "                if False:\n                    raise KernelError(f\"{where}: the float {node} in the domain"),
 ("kernel.py", " and proved(sp.Ge(k, 0)) and proved(sp.Ge(n, k)):", ":"),
 ("kernel.py", "            if x.is_real is True and proved(sp.Gt(base, 0)):", "            if x.is_real is True:"),
 ("kernel.py", "            if not strict and x.is_integer is True and proved(sp.Ge(x, 0)) and proved(sp.Ge(base, 0)):", "            if not strict and proved(sp.Ge(base, 0)):"),
 ("kernel.py", "            if not prove_condition(sp.Lt(coefficient, 0), ctx)[0]:\n                return \"\"", "            if False:\n                return \"\""),
 ("kernel.py", "            sums[0] = sp.Sum(-sums[0].function, *sums[0].limits)", "            pass"),
 ("kernel.py", "        if proved(sp.Gt(factor, 0) if strict else sp.Ge(factor, 0)):", "        if proved(sp.Ge(factor, 0)):"),
 ("decide.py", "            for limit in x.limits:\n                body = sp.Add(*[_count(", "            for limit in reversed(x.limits):\n                body = sp.Add(*[_count("),
 ("decide.py", "                     lambda s: s.doit())", "                     lambda s: s.function * (s.limits[0][2] - s.limits[0][1]))"),
 ("decide.py", "        if all(_truth(c) is True for c in closed):\n            return \", \".join(", "        if True:\n            return \", \".join("),
 ("decide.py", "    defined = _definitions(conditions, free_atoms=True)", "    defined = _definitions(conditions)"),
 ("decide.py", "    if lo.is_positive is True:\n        out[\"positive\"] = True", "    if v.is_positive is True:\n        out[\"positive\"] = True"),
 ("definedness.py", "        e = _indices_without_declared_sign(e)\n", "\n"),
 ("decide.py", "    if any(_has_free_atom(x) for x in (diff, *conditions)):\n        return None", "    if False:\n        return None"),
 ("definedness.py", "        if is_free_atom(node):\n            # an expectation", "        if False:\n            # an expectation"),
 ("kernel.py", "    universal = _universal_instances(result, ctx)", "    universal = []"),
 ("kernel.py", "    if consistent is True and ctx.universal:", "    if False:"),
 ("kernel.py", "    derived = _derived_facts(list(ctx.hypotheses) + universal, ctx)", "    derived = []"),
 ("decide.py", "    at_point = {k: v for k, v in values.items() if isinstance(k, sp.Symbol)}\n    seen: dict = {}", "    return True\n    seen: dict = {}"),
 ("kernel.py", "    for index, lo, hi, condition in quantified_of(lemma):  # a hypothesis", "    for index, lo, hi, condition in []:  # a hypothesis"),
 ("kernel.py", "            restricted = set().union(*[(q[3].free_symbols - {q[0]}) for q in ctx.quantified] or [set()])", "            restricted = set()"),
 ("definedness.py", "        out.append(Obligation(sp.Ge(e.size, 0), f\"{e}: a square matrix needs a size >= 0\", local))", "        pass"),
 ("kernel.py", "    if outermost:\n        return resolve_piecewise(", "    if False:\n        return resolve_piecewise("),
 ("kernel.py", "        for key in _OTHER_PROPERTIES:\n            if getattr(v, f\"is_{key}\") and getattr(value,", "        for key in ():\n            if getattr(v, f\"is_{key}\") and getattr(value,"),
 ("kernel.py", "    for key in _DECLARED_KEYS:\n        if getattr(symbol,", "    for key in (\"integer\", \"positive\", \"nonnegative\", \"negative\", \"nonpositive\"):\n        if getattr(symbol,"),
 ("kernel.py", "    return replace(ctx, hypotheses=hyps, domains=", "    return decide.Context(hypotheses=hyps, domains="),
 ("decide.py", "        if not protected:\n            return e.xreplace(atoms)\n        outermost", "        if True:\n            return e.xreplace(atoms)\n        outermost"),
 ("kernel.py", "        if values and report.status is Status.PROVED_FOR_RANGE:", "        if False:"),
 ("kernel.py", "    if declared:\n        return refused(", "    if False:\n        return refused("),
 ("decide.py", "        if not _has_declared_properties(values):\n            continue  # n = 1", "        if False:\n            continue  # n = 1"),
 ("kernel.py", "            return [sp.false]\n    if pinned:", "            pass\n    if pinned:"),
 ("decide.py", "        if point is None:\n            return not others\n        return all(", "        if point is None:\n            return True\n        return True or all("),
]


def main(argv: list[str]) -> int:
    chosen = [int(a) for a in argv] or range(len(PLANTS))
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for n in chosen:
            name, old, new = PLANTS[n]
            tree = Path(work, f"plant{n}")
            shutil.copytree(ROOT / "grpo_verify", tree / "grpo_verify", ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copytree(ROOT / "tests", tree / "tests", ignore=shutil.ignore_patterns("__pycache__"))
            path = tree / "grpo_verify" / "proof" / name
            text = path.read_text()
            if old not in text:
                print(f"{n} {name}: the planted line is no longer in the code; update this script")
                failures += 1
                continue
            path.write_text(text.replace(old, new, 1))
            env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                                  "tests/test_kernel.py", "tests/test_soundness.py", "tests/test_smt.py",
                                  "tests/test_proof_validation.py", "tests/test_smt_translation.py",
                                  "tests/test_definedness_obligations.py"], cwd=tree, env=env,
                                 capture_output=True, text=True)
            closing = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr.strip()[-200:]
            caught = run.returncode != 0
            failures += not caught
            print(f"{n} {name}: {'caught' if caught else 'SURVIVED'} ({closing})", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
