"""Plant each of the proof kernel's checks' bugs in a copy of the package and run the kernel tests.

Every plant is a plausible developer bug in the trusted base (grpo_verify/proof: terms, arith, definedness,
theorem, relations, result's cache, rules/): a side condition dropped, a binder that stops hiding its variable, a model check that
passes too easily. Each must make ``tests/test_kernel_rules.py``, ``tests/test_kernel_core.py``,
``tests/test_soundness.py`` or ``tests/test_proof_validation.py`` fail; a plant that leaves them green is a
check no test pins. Run from the repository root (two to three minutes per plant on one core):

    python experiments/kernel_planted_bugs.py            # every plant
    python experiments/kernel_planted_bugs.py 3 7        # some of them

Prints one line per plant with pytest's closing line; exits 1 if any plant survives or no longer applies.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planted_bugs import run_plant, verdict  # noqa: E402  (the runner the module plant sets share)

TESTS = ["tests/test_kernel_rules.py", "tests/test_kernel_core.py", "tests/test_soundness.py",
         "tests/test_soundness_round2.py", "tests/test_soundness_round3.py", "tests/test_proof_validation.py"]

# (file under grpo_verify/proof/, the text as it is, the planted bug)
PLANTS = [
    # -- the term language and canonical forms
    ("terms.py", "            if v.is_integer and not integer_valued(p):", "            if False:"),
    ("terms.py", "        depth = max(depth, depth_of(e))  # a canonical", "        depth = depth  # a canonical"),
    ("terms.py", "    inner = _canon(body.xreplace(dict(zip(old, fresh))), depth, ranges, local)\n    back = dict(zip(fresh, new))",
     "    inner = _canon(body.xreplace(dict(zip(old, new))), depth, ranges, local)\n    back = {}"),
    ("terms.py", "        if reach & set(bound):\n            raise KernelError", "        if False:\n            raise KernelError"),
    ("terms.py", "        if e.args[0].has(sp.Piecewise):  # SymPy's Sum constructor", "        if False:  # SymPy's Sum constructor"),
    # -- definedness
    ("definedness.py", "                need(rel.Ne(b, 0), f\"division by", "                (lambda *a: None)(rel.Ne(b, 0), f\"division by"),
    ("definedness.py", "        need(rel.Gt(e.args[0], 0), f\"the logarithm", "        (lambda *a: None)(rel.Gt(e.args[0], 0), f\"the logarithm"),
    ("definedness.py", "        need(rel.Ge(hi, lo - 1), f\"the range", "        (lambda *a: None)(rel.Ge(hi, lo - 1), f\"the range"),
    ("definedness.py", "            need(sp.Or(*[cond for _b, cond in e.args]), \"a Piecewise",
     "            (lambda *a: None)(sp.Or(*[cond for _b, cond in e.args]), \"a Piecewise"),
    ("definedness.py", "        c = c.replace(lambda x: type(x) in strict, lambda x: strict[type(x)](*x.args))", "        pass"),
    # -- arithmetic
    ("arith.py", "z3.Implies(b >= 0, z3.And(a >= 0, _power(a, e.exp.q) == b))", "z3.And(a >= 0, _power(a, e.exp.q) == b)"),
    ("arith.py", "                margin = (abs(mid) + 1) / sp.Integer(10) ** 40", "                margin = sp.Rational(1, 10 ** 30)"),
    ("arith.py", "        elif isinstance(e, sp.log):\n            u = self.term(e.args[0])\n            self.facts += [z3.Implies(u > 1, a > 0)",
     "        elif isinstance(e, sp.log):\n            u = self.term(e.args[0])\n            self.facts += [z3.Implies(u >= 1, a > 0)"),
    # -- contexts, citations, links
    ("theorem.py", "            if isinstance(f, sp.Rel):\n                self.pointwise +=", "            if True:\n                self.pointwise +="),
    ("theorem.py", "                if speaks_of(q.formula.xreplace({qd: sp.Dummy()}), hidden):", "                if False:"),
    ("theorem.py", "            elif not ctx.prove(at(h.formula)):", "            elif False:"),
    ("theorem.py", "    for g in ctx.hyps:\n        if h.every and g.every == h.every", "    return True\n    for g in ctx.hyps:\n        if h.every and g.every == h.every"),
    ("theorem.py", "    if any(not _made(c, Cited) or not c.hyps <= ctx.hyps for c in cited):",
     "    if any(not _made(c, Cited) for c in cited):"),
    ("theorem.py", "    if speaks_of(eq.lhs.xreplace({v: 0 for v in eq.pattern}), local.hidden) or \\", "    if False and \\"),
    ("theorem.py", "    if not _made(theorem, Theorem) or not theorem.hyps <= frozenset(hyps):", "    if not _made(theorem, Theorem):"),
    ("theorem.py", "    (\">=\", \">=\"): \">=\", (\">\", \">=\"): \">\", (\">=\", \">\"): \">\", (\">\", \">\"): \">\"}",
     "    (\">=\", \">=\"): \">=\", (\">\", \">=\"): \">\", (\">=\", \">\"): \">\", (\">\", \">\"): \">\", (\"<=\", \">=\"): \"<=\"}"),
    ("theorem.py", "            if not lower or subst(f, {n: sp.Integer(base)}) is not sp.true:", "            if False:"),
    ("theorem.py", "        if x in free_symbols(h.formula) and (h.index or h.every or not _constant_bound(h.formula, x)):",
     "        if False:"),
    ("theorem.py", "        if sum(p for p, _ in outcomes) != 1 or any(", "        if any("),
    ("theorem.py", "        f = canon(_at_model(f, model, every))", "        f = canon(_at_model(f, model))"),
    ("theorem.py", "    if ctx.model is not None:\n        raise Unproved", "    if False:\n        raise Unproved"),
    # -- rules
    ("rules/sums.py", "    if d in free_symbols(f) or not local.prove(rel.Ge(hi, lo - 1)) or not _may_leave(f, local, lo, hi):\n        return None\n    return (hi - lo + 1) * f",
     "    if d in free_symbols(f) or not _may_leave(f, local, lo, hi):\n        return None\n    return (hi - lo + 1) * f"),
    ("rules/sums.py", "    if not _matches(hi, upper, local) or not local.prove(rel.Ge(hi, lo)):",
     "    if not _matches(hi, upper, local):"),
    ("rules/sums.py", "        if w is None or not integer_valued(w):", "        if w is None:"),
    ("rules/sums.py", "    if local.prove(rel.Ne(u, v)):\n        return sp.Integer(0)", "    if not ring_zero(u - v):\n        return sp.Integer(0)"),
    ("rules/algebra.py", "        ok = (c > 0 and local.prove(rel.Ge(x, 0))) or local.prove(rel.Ne(b, 0))", "        ok = True"),
    ("rules/algebra.py", "    if isinstance(u, sp.Mul) and all(local.prove(rel.Gt(f, 0)) for f in u.args):",
     "    if isinstance(u, sp.Mul):"),
    ("rules/algebra.py", "        if not local.prove(sp.Not(cond)):\n            return sp.Piecewise", "        if False:\n            return sp.Piecewise"),
    ("rules/algebra.py", "        return a if local.prove(rel.Ge(a, 0)) else -a if local.prove(rel.Le(a, 0)) else None",
     "        return a"),
    ("rules/calculus.py", "    if any(isinstance(n, Expectation) for n in sp.preorder_traversal(x)):\n        return True",
     "    if False:\n        return True"),
    ("rules/calculus.py", "        if (c.is_Integer and c >= 1) or (integer_valued(c) and local.prove(rel.Ge(c, 1))) or local.prove(rel.Ne(b, 0)):",
     "        if True:"),
    ("rules/calculus.py", "                    local.equal(values[n], values[k]) and local.equal(slopes[n], slopes[k]))",
     "                    local.equal(values[n], values[k]))"),
    ("rules/expectation.py", "        const = sp.Mul(*[f for f in sp.Mul.make_args(term) if not random_in(f, bases)])",
     "        const = sp.Mul(*[f for f in sp.Mul.make_args(term) if not isinstance(f, Expectation)])"),
    ("rules/expectation.py", "            count = sp.Mul(*[size - k for k in range(len(partition))])", "            count = size ** len(partition)"),
    ("rules/expectation.py", "    if not isinstance(e, IidExpectation) or not set(e.random) <= set(e.single.random):",
     "    if not isinstance(e, IidExpectation):"),
    ("rules/matrices.py", "            if not (ring_zero(minor) or local.prove(rel.Eq(minor, 0))):\n                return None",
     "            if False:\n                return None"),
    ("rules/matrices.py", "    if not inside.equal(sp.Sum(entry(i, l) * entry(l, j), (l, 1, n)), entry(i, j)):", "    if False:"),
    ("rules/order.py", "            if nonempty and inner.prove(strict(f, 0)):", "            if inner.prove(strict(f, 0)):"),
    ("rules/order.py", "rel.Ge(a.base, b.base), rel.Ge(b.base, 0), rel.Ge(n, 0)), rel.Ge(a, b))", "rel.Ge(a.base, b.base), rel.Ge(n, 0)), rel.Ge(a, b))"),
    ("rules/__init__.py", "                                     hidden=local.hidden | set(e.variables))",
     "                                     hidden=local.hidden)"),
    ("rules/__init__.py", "_CLOSED.append(True)", "pass"),
    # -- from the second red team (tests/test_soundness_round2.py)
    ("arith.py", "        v = sp.N(e, 50, strict=True)", "        v = sp.N(e, 50)"),
    ("arith.py", "                value = sp.N(e, 60, strict=True)", "                value = sp.N(e, 60)"),
    ("arith.py", "        return self.atoms[e]\n", "        return z3.ToReal(self.atoms[e]) if self.atoms[e].sort() == z3.IntSort() else self.atoms[e]\n"),
    ("definedness.py", "_NONSMOOTH = (sp.Piecewise, sp.KroneckerDelta, sp.binomial, MatrixRank)",
     "_NONSMOOTH = (sp.Piecewise, sp.KroneckerDelta, sp.binomial)"),
    ("theorem.py", "free_symbols(rhs)) - mentioned - brought", "free_symbols(rhs)) - mentioned"),
    ("theorem.py", "    if not (_made(first, Theorem) and _made(second, Theorem)):", "    if False:"),
    ("theorem.py", "    return type(x) is cls and x in _MADE", "    return isinstance(x, cls)"),
    ("relations.py", "            if not all(a.is_real is True for a in args):", "            if False:"),
    ("terms.py", "or (v is False and k not in NEGATABLE)}", "}"),
    ("result.py", "        if refresh or cached is None or not _same(cached[0], statement):", "        if refresh or cached is None:"),
    # -- from the third red team (tests/test_soundness_round3.py)
    ("theorem.py", "        args = [sp.Dummy(real=True) for _ in lam.variables]", "        args = list(lam.variables)"),
    ("theorem.py", "        for term in (body, *[sp.Derivative(body, a) for a in args]):", "        for term in (body,):"),
    ("rules/sums.py", "    return local.prove(rel.Ge(hi, lo)) or all(", "    return True or all("),
    ("rules/sums.py", "    if d in free_symbols(f) or not local.prove(rel.Ge(hi, lo - 1)) or not _may_leave(f, local, lo, hi):\n        return None\n    return (hi - lo + 1) * f",
     "    if d in free_symbols(f) or not local.prove(rel.Ge(hi, lo - 1)):\n        return None\n    return (hi - lo + 1) * f"),
    ("rules/expectation.py", "    if random_in(e.args[0], set(e.single.random) - set(e.random)):", "    if False:"),
    ("theorem.py", "        ctx = ctx.with_hyps([Hyp(canon(rel.Eq(listed.symbol, sp.Integer(value))))])", "        pass"),
    # -- 2026-12-04: the integer translation skipped only without an integer-valued atom
    ("arith.py", "        same_query = real in (\"sat\", \"unknown\") and not real_t.integer_valued",
     "        same_query = real in (\"sat\", \"unknown\")"),
]


def main(argv: list[str]) -> int:
    chosen = [int(a) for a in argv] or range(len(PLANTS))
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for n in chosen:
            name, old, new = PLANTS[n]
            caught, closing = run_plant(Path(work), f"plant{n}", f"proof/{name}", old, new, TESTS, workers="auto")
            failures += not caught
            print(f"{n} {name}: {verdict(caught)} ({closing})", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
