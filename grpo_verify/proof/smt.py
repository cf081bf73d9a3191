"""The kernel's second, independent decision procedure: SymPy formulas decided by z3.

``entails(hypotheses, goal)``: does every real assignment satisfying the symbols' domains and
the hypotheses satisfy the goal?  ``satisfiable(formulas)``: does some assignment satisfy them?
Formulas: Eq, Ne, <, <=, >, >=, And, Or, Not, Implies, true, false over rationals, real symbols,
``Indexed`` entries, +, *, rational powers, Abs, Min, Max.  The question "is there an
assignment?" goes to z3, whose nlsat decides real arithmetic completely (given time).

Relaxations.  The translation is exact except where it *widens* the set of assignments:
  * a subterm outside the fragment (Sum, exp, log, f(x), pi, CRootOf, ...) is *abstracted*: each
    distinct one is a fresh real variable, with the sign facts SymPy proves of it (exp(x) > 0); a
    subterm SymPy does not know to be real is abstracted only if all its symbols are real (it is
    then real wherever it is defined, under the kernel's definedness rules);
  * ``r[i]`` and ``r[j]`` with symbolic indices are distinct variables, though i may equal j;
  * assumptions other than real, integer and signs (even, prime, rational) are dropped;
  * in the first pass, integer symbols are reals.
A widened problem with no assignment has none unwidened, so unsat is sound with relaxations:
HOLDS of ``entails``, FAILS of ``satisfiable``.  An assignment found by z3 (FAILS of ``entails``,
HOLDS of ``satisfiable``) is reported only from an exact translation, and only once substituted
into the ORIGINAL SymPy formulas and checked exactly (domains included); otherwise UNKNOWN.

Integers (nonlinear integer arithmetic is undecidable).  Pass 1: integer symbols as reals with
their sign facts, by nlsat; unsat proves the claim for integers too.  Else pass 2: integer
symbols of z3's Int sort, by z3's default solver (incomplete: may say unknown); its unsat is a
proof, its assignment is checked exactly like any other.

Partial operations.  ``b**-n`` uses a fresh q with ``q*b == 1``; ``t**(p/q)`` (q > 1) a fresh
``s >= 0`` with ``s**q == t`` and ``t >= 0`` (SymPy's roots of negative numbers are not real).
These join the hypotheses: ``entails`` proves the goal *wherever every subterm is defined*
(``x/x == 1`` HOLDS).  ``definedness(expr)`` lists the conditions (``Ne(b, 0)``, ``t >= 0``)
that the caller must discharge for an unconditional claim.

Trusted: z3's unsat answers; SymPy's exact rational arithmetic and assumption system (is_real,
is_integer, is_positive, ... of symbols and abstracted subterms); for irrational algebraic
assignments, SymPy's real roots, minimal polynomials and evalf signs.  UNKNOWN: floats, oo, zoo,
nan, I, AccumBounds, symbols not known real, other logic, z3 timeouts and unknowns.
"""

from __future__ import annotations

import operator as op
import time
from dataclasses import dataclass
from enum import Enum
from functools import reduce
from typing import Sequence

import sympy as sp
import z3
from sympy.core.assumptions import _assume_defined


class Verdict(str, Enum):
    HOLDS = "holds"
    FAILS = "fails"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class SmtOutcome:
    """``exact``: decided on an exact translation (no abstraction or relaxation)."""

    verdict: Verdict
    detail: str
    model: dict[sp.Symbol | sp.Basic, sp.Rational | sp.Basic] | None = None
    exact: bool = False


class _Unsupported(Exception):
    """Outside what can be translated soundly: the verdict is UNKNOWN."""


# How each relation is translated (SymPy class -> z3 operator).
_RELATIONS = {sp.Equality: op.eq, sp.Unequality: op.ne, sp.StrictLessThan: op.lt,
              sp.LessThan: op.le, sp.StrictGreaterThan: op.gt, sp.GreaterThan: op.ge}
# The sign facts read from SymPy's assumptions: (assumption, relation to 0).
_SIGN_FACTS = (("positive", op.gt), ("nonnegative", op.ge), ("negative", op.lt),
               ("nonpositive", op.le), ("nonzero", op.ne))
_LOGIC = {sp.And: z3.And, sp.Or: z3.Or, sp.Not: z3.Not, sp.Implies: z3.Implies}
_UNDEFINED = (sp.oo, sp.S.NegativeInfinity, sp.zoo, sp.nan, sp.I, sp.AccumBounds)
_MAX_DEGREE = 1000  # larger exponents or root degrees: UNKNOWN


def _excluded(f: sp.Basic) -> str | None:
    """Why f is refused outright, even inside subterms that would be abstracted."""
    if f.atoms(sp.Float):
        return f"floats are not exact: {f}"
    return f"oo, zoo, nan, I, AccumBounds are not translated: {f}" if f.has(*_UNDEFINED) else None


def _described_by_signs(e: sp.Basic) -> bool:
    """Whether real, integer and the signs are all SymPy knows of e (no assumption dropped)."""
    facts = {n: True for n in ("integer", *(n for n, _ in _SIGN_FACTS)) if getattr(e, "is_" + n)}
    canon = sp.Dummy(real=True, **facts)
    return all(getattr(e, "is_" + k) == getattr(canon, "is_" + k) for k in _assume_defined)


class _Translation:
    """SymPy to z3, one variable per atom; ``integers``: integer atoms of z3's Int sort."""

    def __init__(self, integers: bool, lenient: bool = False):
        self.integers, self.lenient = integers, lenient
        self.atoms: dict[sp.Basic, z3.ArithRef] = {}  # symbols and Indexed: the model's variables
        self.fresh: dict[tuple, z3.ArithRef] = {}  # abstractions, inverses, roots
        self.side: list[z3.BoolRef] = []  # domains, definitions of fresh variables, sign facts
        self.relaxed: list[str] = []  # why an assignment found would not be exact
        self.conditions: list[sp.Basic] = []  # definedness conditions of the encoding
        self.has_integers, self.count = False, 0

    def _unsupported(self, why: str) -> z3.ArithRef:
        if self.lenient:  # definedness(): an opaque leaf
            return self._variable(False)
        raise _Unsupported(why)

    def _variable(self, integer: bool) -> z3.ArithRef:
        self.count += 1  # a new name for each variable
        return (z3.Int if integer else z3.Real)(f"v{self.count}")

    def _new_atom(self, e: sp.Basic) -> z3.ArithRef:
        """A variable for e with the integrality and sign facts SymPy proves of e."""
        integer = e.is_integer is True
        self.has_integers |= integer
        v = self._variable(integer and self.integers)
        self.side += [rel(v, 0) for name, rel in _SIGN_FACTS if getattr(e, "is_" + name) is True]
        if integer and not self.integers:
            self.relaxed.append(f"integer {e} relaxed to a real")
        return v

    def formula(self, f: sp.Basic) -> z3.BoolRef:
        if f is sp.true or f is sp.false or isinstance(f, bool):
            return z3.BoolVal(bool(f))
        if type(f) in _RELATIONS:
            return _RELATIONS[type(f)](self.term(f.lhs), self.term(f.rhs))
        if type(f) in _LOGIC:
            return _LOGIC[type(f)](*(self.formula(a) for a in f.args))
        if not self.lenient:
            raise _Unsupported(f"unsupported logical construct {type(f).__name__}: {f}")
        for a in f.args:  # definedness(): still visit the arguments
            self.term(a) if isinstance(a, sp.Expr) else self.formula(a)
        return z3.BoolVal(True)

    def term(self, e: sp.Basic) -> z3.ArithRef:
        if isinstance(e, sp.Float):
            return self._unsupported(f"floats are not exact: {e}")
        if isinstance(e, sp.Rational):
            return z3.IntVal(e.p) if e.q == 1 and self.integers else z3.RealVal(f"{e.p}/{e.q}")
        if e.is_number and e.is_real is not True:
            return self._unsupported(f"{e} is not known to be real")
        if isinstance(e, (sp.Symbol, sp.Indexed)):
            if e.is_real is not True:
                return self._unsupported(f"symbol {e} is not known to be real (declare real=True)")
            if e not in self.atoms:
                self.atoms[e] = self._new_atom(e)
                if not _described_by_signs(e):
                    self.relaxed.append(f"assumptions of {e} beyond real, integer, sign dropped")
                if isinstance(e, sp.Indexed) and not all(i.is_Integer for i in e.indices):
                    self.relaxed.append(f"{e}: entries at symbolic indices taken as independent")
            return self.atoms[e]
        if isinstance(e, (sp.Add, sp.Mul)):
            return reduce(op.add if isinstance(e, sp.Add) else op.mul, map(self.term, e.args))
        if isinstance(e, sp.Pow) and e.exp.is_Rational:
            p, q = e.exp.p, e.exp.q
            if max(abs(p), q) > _MAX_DEGREE:
                return self._unsupported(f"exponent too large: {e}")
            if p == 0:
                return self.term(sp.S.One)
            if p == 1 and q > 1:
                return self._root(e.base, q)
            base = e.base if q == 1 else sp.Pow(e.base, sp.Rational(1, q), evaluate=False)
            return reduce(op.mul, [self.term(base) if p > 0 else self._inverse(base)] * abs(p))
        if isinstance(e, sp.Abs):
            t = self.term(e.args[0])
            return z3.If(t >= 0, t, -t)
        if isinstance(e, (sp.Min, sp.Max)):
            keep = op.le if isinstance(e, sp.Min) else op.ge
            return reduce(lambda a, b: z3.If(keep(a, b), a, b), map(self.term, e.args))
        return self._abstract(e)

    def congruence(self) -> list[z3.BoolRef]:
        """Functional consistency of the opaque atoms (true of every function): ``f(x) = f(y)`` and
        ``r[i] = r[j]`` wherever the arguments are equal. It only removes assignments no real
        functions have, so every relaxation stays sound and contradictions such as
        ``x = y, f(x) > f(y)`` become visible."""
        from sympy.core.function import AppliedUndef

        heads: dict = {}
        for e, v in list(self.atoms.items()) + [(k[1], v) for k, v in list(self.fresh.items()) if k[0] == "abstract"]:
            if isinstance(e, sp.Indexed):
                heads.setdefault((e.base, len(e.indices)), []).append((e.indices, v))
            elif isinstance(e, AppliedUndef):
                heads.setdefault((e.func, len(e.args)), []).append((e.args, v))
        constraints = []
        for entries in heads.values():
            for n, (args_a, va) in enumerate(entries):
                for args_b, vb in entries[n + 1:]:
                    try:
                        same = [self.term(x) == self.term(y) for x, y in zip(args_a, args_b)]
                    except (_Unsupported, z3.Z3Exception):
                        continue  # arguments outside the fragment: no constraint (still a relaxation)
                    constraints.append(z3.Implies(z3.And(*same), va == vb))
        return constraints

    def _inverse(self, b: sp.Basic) -> z3.ArithRef:
        """1/b: a fresh q with q*b == 1 (assumes b != 0, a definedness condition)."""
        if ("inv", b) not in self.fresh:
            t = self.term(b)
            self.fresh["inv", b] = q = self._variable(False)
            self.side.append(q * t == 1)
            self.conditions.append(sp.Ne(b, 0))
        return self.fresh["inv", b]

    def _root(self, t: sp.Basic, q: int) -> z3.ArithRef:
        """t**(1/q): a fresh s >= 0 with s**q == t (assumes t >= 0, a definedness condition)."""
        if ("root", t, q) not in self.fresh:
            z = self.term(t)
            self.fresh["root", t, q] = s = self._variable(False)
            self.side += [s >= 0, z >= 0, reduce(op.mul, [s] * q) == z]
            self.conditions.append(sp.Ge(t, 0))
        return self.fresh["root", t, q]

    def _abstract(self, e: sp.Basic) -> z3.ArithRef:
        """A subterm outside the fragment: a fresh variable (a relaxation). Its value must be real:
        known so to SymPy, or built from real symbols only (``log(1 - y)`` with real ``y``), which the
        kernel's definedness rules make real wherever the subterm is defined -- and ``entails`` speaks
        only of points where every subterm is defined."""
        if not isinstance(e, sp.Expr) or getattr(e, "is_Matrix", False) or e.is_real is False:
            return self._unsupported(f"{e} is not known to be a real number")
        if e.is_real is None and not _real_where_defined(e):
            return self._unsupported(f"{e} is not known to be a real number")
        if ("abstract", e) not in self.fresh:
            self.fresh["abstract", e] = self._new_atom(e)
            self.relaxed.append(f"abstracted {e}")
        return self.fresh["abstract", e]


def _real_where_defined(e: sp.Basic) -> bool:
    """Whether ``e`` is a real number at every point where it is defined as one: real symbols and
    numbers combined by +, *, powers, logarithms, sums and products (``log(1 - y)`` for real ``y``;
    not ``f(x)`` for a function not declared real, nor a closed ``(-1)**(1/3)``)."""
    if e.is_real is True:
        return True
    if isinstance(e, (sp.Add, sp.Mul, sp.Pow, sp.log)):
        return all(_real_where_defined(a) for a in e.args) and bool(e.free_symbols)
    if isinstance(e, (sp.Sum, sp.Product)):
        return _real_where_defined(e.function) and all(_real_where_defined(b) for limit in e.limits
                                                         for b in limit)
    return False


# --- The exact check, in SymPy, of an assignment found by z3 -----------------------------------
_X = sp.Dummy("X")
_SIGN_TEST = {sp.Equality: lambda s: s == 0, sp.Unequality: lambda s: s != 0,
              sp.StrictLessThan: lambda s: s < 0, sp.LessThan: lambda s: s <= 0,
              sp.StrictGreaterThan: lambda s: s > 0, sp.GreaterThan: lambda s: s >= 0}
_TRUTH = {sp.And: all, sp.Or: any, sp.Not: lambda v: not v[0],
          sp.Implies: lambda v: not v[0] or v[1]}


def _value(v: z3.ExprRef) -> sp.Basic | None:
    """A z3 model value as an exact SymPy number (None if it cannot be converted exactly)."""
    if z3.is_int_value(v):
        return sp.Integer(v.as_long())
    if z3.is_rational_value(v):
        return sp.Rational(v.numerator_as_long(), v.denominator_as_long())
    if not z3.is_algebraic_value(v):
        return None
    try:  # z3 names the index-th real root of a polynomial; the only one near z3's approximation
        poly = sp.Poly([_value(c) for c in reversed(v.poly())], _X)
        roots = list(dict.fromkeys(poly.real_roots()))
        mid, eps = _value(v.approx(40)), sp.Rational(1, 10**39)
        near = [r for r in roots if bool(mid - eps <= r) and bool(r <= mid + eps)]
        return near[0] if near == [roots[v.index() - 1]] else None
    except Exception:  # noqa: BLE001 -- any failure only means "not confirmed"
        return None


def _sign(d: sp.Basic) -> int | None:
    """The sign of a closed real number; None when it cannot be established."""
    if isinstance(d, sp.Rational):
        return (d.p > 0) - (d.p < 0)
    try:
        if d.free_symbols or d.has(*_UNDEFINED) or d.is_real is not True:
            return None
        if sp.minimal_polynomial(d, _X) == _X:  # exact zero test (d algebraic)
            return 0
        return 1 if d.is_positive else -1 if d.is_negative else None
    except Exception:  # noqa: BLE001 -- not algebraic, or undecided: not confirmed
        return None


def _truth(f: sp.Basic, model: dict) -> bool | None:
    """The truth of a formula at an exact assignment; None if undefined there or undecided."""
    if f is sp.true or f is sp.false or isinstance(f, bool):
        return bool(f)
    if type(f) in _SIGN_TEST:
        sides = [side.xreplace(model) for side in (f.lhs, f.rhs)]
        if any(not isinstance(side, sp.Expr) or side.free_symbols or side.has(*_UNDEFINED)
               for side in sides):
            return None  # a symbol left, or a subterm undefined (1/0, sqrt(-1)) at the assignment
        s = _sign(sides[0] - sides[1])
        return None if s is None else _SIGN_TEST[type(f)](s)
    parts = [_truth(a, model) for a in f.args] if type(f) in _TRUTH else [None]
    return None if None in parts else _TRUTH[type(f)](parts)


def _in_domain(atom: sp.Basic, v: sp.Basic) -> bool:
    s = _sign(v)
    return (s is not None and (v.is_Integer or atom.is_integer is not True)
            and all(rel(s, 0) for name, rel in _SIGN_FACTS if getattr(atom, "is_" + name) is True))


# --- Search ------------------------------------------------------------------------------------
def _search(hold: Sequence[sp.Basic], fail: Sequence[sp.Basic], timeout_ms: int) -> tuple:
    """An assignment making each of ``hold`` true and each of ``fail`` false: returns
    ("unsat", None, detail, exact): none exists (sound under relaxations); ("sat", model, detail,
    True): the model, checked exactly; ("unknown", None, detail, False)."""
    hold, fail = [sp.sympify(f) for f in hold], [sp.sympify(f) for f in fail]
    refused = next(filter(None, map(_excluded, (*hold, *fail))), None)
    if refused:
        return "unknown", None, refused, False
    deadline, notes, has_integers = time.monotonic() + timeout_ms / 1000, [], None
    for integers in (False, True):
        if integers and not has_integers:
            break
        tr = _Translation(integers)
        try:
            query = [tr.formula(f) for f in hold] + [z3.Not(tr.formula(f)) for f in fail]
        except (_Unsupported, z3.Z3Exception) as exc:
            return "unknown", None, str(exc), False
        has_integers, left = tr.has_integers, int((deadline - time.monotonic()) * 1000)
        if left < 1:
            notes.append("out of time")
            break
        solver = z3.Solver() if integers else z3.Tactic("qfnra-nlsat").solver()
        solver.set("random_seed" if integers else "seed", 0)
        solver.set("timeout", left)
        solver.add(*tr.side, *query, *tr.congruence())
        how = "with integer symbols as integers (z3)" if integers else "over the reals (z3 nlsat)"
        try:
            result = solver.check()
        except z3.Z3Exception as exc:
            notes.append(f"{how}: z3 error {exc}")
            continue
        if result == z3.unsat:
            conditions = [c for c in dict.fromkeys(tr.conditions) if c is not sp.true]
            where = f", wherever {conditions} hold" if conditions else ""
            return "unsat", None, f"no such assignment {how}{where}", not tr.relaxed
        if result != z3.sat:
            notes.append(f"{how}: z3 unknown ({solver.reason_unknown()})")
            continue
        if tr.relaxed:
            notes.append(f"{how}: an assignment exists, but the translation is relaxed: "
                         + "; ".join(tr.relaxed))
            continue
        m = solver.model()
        model = {a: _value(m.eval(v, model_completion=True)) for a, v in tr.atoms.items()}
        if (None not in model.values() and all(_in_domain(a, v) for a, v in model.items())
                and all(_truth(f, model) is True for f in hold)
                and all(_truth(f, model) is False for f in fail)):
            return "sat", model, f"{model} {how}, checked exactly in SymPy", True
        notes.append(f"{how}: z3's assignment could not be confirmed exactly")
    return "unknown", None, "; ".join(notes), False


def entails(hypotheses: Sequence[sp.Basic], goal: sp.Basic, timeout_ms: int = 5000) -> SmtOutcome:
    """Does every real assignment satisfying the domains and hypotheses satisfy the goal?

    HOLDS: proved (hypotheses and not-goal unsat) wherever every subterm is defined (see
    ``definedness``).  FAILS: a counterexample (``model``), only from an exact translation and
    checked exactly in SymPy.  UNKNOWN otherwise (timeout, relaxation, unsupported construct).
    """
    kind, model, detail, exact = _search(hypotheses, [goal], timeout_ms)
    if kind == "unsat":
        return SmtOutcome(Verdict.HOLDS, f"proved: {detail}", None, exact)
    if kind == "sat":
        return SmtOutcome(Verdict.FAILS, f"counterexample: {detail}", model, True)
    return SmtOutcome(Verdict.UNKNOWN, detail)


def satisfiable(formulas: Sequence[sp.Basic], timeout_ms: int = 5000) -> SmtOutcome:
    """HOLDS: a satisfying assignment (``model``), only from an exact translation and checked
    exactly in SymPy.  FAILS: unsatisfiable (sound even with abstraction).  UNKNOWN otherwise."""
    kind, model, detail, exact = _search(formulas, [], timeout_ms)
    if kind == "unsat":
        return SmtOutcome(Verdict.FAILS, f"unsatisfiable: {detail}", None, exact)
    if kind == "sat":
        return SmtOutcome(Verdict.HOLDS, f"satisfied by {detail}", model, True)
    return SmtOutcome(Verdict.UNKNOWN, detail)


def translatable(expr: sp.Basic) -> bool:
    """Whether ``expr`` (a formula or a term) lies in the exactly translated fragment."""
    expr, tr = sp.sympify(expr), _Translation(integers=True)
    if _excluded(expr):
        return False
    try:
        tr.term(expr) if isinstance(expr, sp.Expr) else tr.formula(expr)
    except (_Unsupported, z3.Z3Exception):
        return False
    return not tr.relaxed


def definedness(expr: sp.Basic) -> list[sp.Basic]:
    """The conditions under which ``expr`` (a formula or a term) is defined in this encoding:
    ``Ne(b, 0)`` for each denominator b, ``t >= 0`` for each radicand t.  Abstracted subterms
    (log, Sum, ...) are opaque: conditions inside them are not listed."""
    expr, tr = sp.sympify(expr), _Translation(integers=True, lenient=True)
    tr.term(expr) if isinstance(expr, sp.Expr) else tr.formula(expr)
    return [c for c in dict.fromkeys(tr.conditions) if c is not sp.true]
