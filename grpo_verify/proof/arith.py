"""Arithmetic in opaque atoms, the one place the kernel trusts SymPy's and z3's algebra. Trusted.

* ``ring_zero``: is a term 0 as a rational function of its atoms? Every subterm that is not +, x, an
  integer power or a rational number is replaced by a fresh indeterminate (equal terms by the same one);
  ``b**(p/q)`` becomes ``a**p`` with ``a = b**(1/q)`` and ``a**q`` is reduced to ``b`` (true wherever the
  term is defined, which needs ``b >= 0``). Then SymPy's ``cancel`` decides, a normal form of rational
  functions over Q.
* ``entails``: do the hypotheses imply a formula in real arithmetic? Atoms become z3 variables (integer
  ones first relaxed to reals, then as integers), with facts true of every value of them: ``exp(u) > 0``,
  ``a >= 0`` and ``a**q = b`` for ``a = b**(1/q)`` when ``b >= 0``, the sign of ``log u`` from ``u``'s, a
  binomial coefficient ``>= 1`` on its range, ``b**e > 0`` for ``b > 0``, declared signs of symbols,
  indexed families and functions, and rational bounds for closed numbers from a 40-digit evaluation.
  ``Min``, ``Max``, ``Abs``, ``Piecewise`` and Kronecker deltas are translated exactly. z3's nlsat is
  complete for real arithmetic; a timeout or an untranslatable term is "not entailed".
* ``closed_sign``: the sign of a closed real number, exactly for rationals, by minimal polynomial for
  algebraic zeros, otherwise from a 50-digit evaluation with a margin (or undecided).
"""

from __future__ import annotations

import sympy as sp
import z3
from sympy.core.function import AppliedUndef

from grpo_verify.proof.operators import MatrixRank
from grpo_verify.proof.terms import integer_valued, subs_points

# z3 gives up at a resource limit or a wall-clock timeout. Neither makes a hard nonlinear query deterministic:
# the QF_NRA strategy runs nlsat under fixed wall-clock limits of its own (try_for 5 s, 10 s; nlsat counts no
# resource units), so whether a hard query is decided can depend on the machine's load. Any outcome is sound
# (unsat is only ever reported for an unsatisfiable query); what varies is only whether a true statement is
# proved. Such queries are counted (``undecided_count``) so that a caller never reads "not entailed" as "false".
# Every entailment of the derivations is decided within 0.1 s except the ones counted.
RESOURCE_LIMIT = 3_000_000
TIMEOUT_MS = 60_000


def _atomize(e, table: dict, roots: dict):
    """``e`` with its atoms replaced by indeterminates (``table``: atom -> Dummy); ``roots`` records
    indeterminate -> (base, q) for the rational powers."""
    if e.is_Rational:
        return e
    if isinstance(e, (sp.Add, sp.Mul)):
        return e.func(*[_atomize(a, table, roots) for a in e.args])
    if isinstance(e, sp.Pow) and e.exp.is_Rational:
        base = _atomize(e.base, table, roots)
        if e.exp.is_Integer:
            return base ** e.exp
        p, q = e.exp.p, e.exp.q
        key = sp.Pow(e.base, sp.Rational(1, q), evaluate=False)
        if key not in table:
            table[key] = sp.Dummy("a")
            roots[table[key]] = (base, q)
        return table[key] ** p
    factored = _exponential(e)
    if factored is not None:
        return sp.Mul(*[_atomize(base, table, roots) ** k for base, k in factored])
    if e not in table:
        table[e] = sp.Dummy("a")
    return table[e]


def _exponential(e):
    """exp(sum k_i t_i) as [(exp(t_i), k_i)], and b**(sum k_i t_i + c) for a rational b > 0 or a symbol declared
    positive as [(b**t_i, k_i), (b**c, 1)], for integers k_i (exp(a + b) = exp(a) exp(b), exp(k a) = exp(a)**k;
    the same for a positive base); None when there is nothing to split."""
    if isinstance(e, sp.exp):
        base, exponent = None, e.args[0]
    elif isinstance(e, sp.Pow) and not e.exp.is_number and ((e.base.is_Rational and e.base > 0) or (
            isinstance(e.base, sp.Symbol) and e.base.is_positive)):
        base, exponent = e.base, e.exp
    else:
        return None
    out = []
    for term in sp.Add.make_args(exponent):
        k, t = term.as_coeff_Mul()
        if not k.is_Integer:
            k, t = sp.Integer(1), term
        power = sp.exp(t, evaluate=False) if base is None else sp.Pow(base, t, evaluate=False)
        out.append((power, k))
    if len(out) == 1 and out[0][1] == 1:
        return None
    return out


def ring_zero(e) -> bool:
    """Whether ``e`` is 0 as a rational function of its atoms (see the module docstring)."""
    table, roots = {}, {}
    x = _atomize(sp.sympify(e), table, roots)
    if x.is_Rational:
        return x == 0
    if not roots:  # SymPy's sparse rational-function field over Q: exact, and much faster than cancel
        field, *_gens = sp.polys.fields.field(sorted(x.free_symbols, key=str), sp.QQ)
        return field.from_expr(x) == 0
    numerator, _ = sp.fraction(sp.cancel(sp.together(x)))
    numerator = sp.expand(numerator)
    for a, (base, q) in roots.items():  # a**q = base
        if numerator.has(a):
            numerator = sp.expand(sp.Poly(numerator, a).rem(sp.Poly(a ** q - base, a)).as_expr())
    if numerator != 0 and roots:
        numerator = sp.expand(sp.fraction(sp.cancel(numerator))[0])
    return numerator == 0


def closed_sign(e) -> int | None:
    """-1, 0 or 1 for a closed real number, None if undecided."""
    e = sp.sympify(e)
    if e.is_Rational:
        return int(bool(e > 0)) - int(bool(e < 0))
    if e.free_symbols or not e.is_number:
        return None
    if ring_zero(e):
        return 0
    try:  # strict: an evaluation that lost its digits (cancellation, or an exact 0) raises, never reads as a sign
        v = sp.N(e, 50, strict=True)
    except Exception:  # noqa: BLE001
        v = None
    if v is not None and v.is_real and v.is_Number and abs(v) > sp.Rational(1, 10 ** 30):
        return 1 if v > 0 else -1
    try:
        t = sp.Dummy("t")
        if sp.expand(sp.minimal_polynomial(e, t) - t) == 0:
            return 0
    except Exception:  # noqa: BLE001 - not algebraic, or SymPy cannot tell: undecided
        pass
    return None


class Untranslatable(Exception):
    pass


class _Z3:
    def __init__(self, integers: bool):
        self.integers = integers
        self.atoms: dict = {}
        self.facts: list = []
        self.integer_valued = False  # whether an atom is integer-valued (Int-sorted in the integer translation)

    def var(self, e, integer: bool):
        self.integer_valued |= integer
        if e not in self.atoms:
            name = f"v{len(self.atoms)}"
            self.atoms[e] = z3.Int(name) if (integer and self.integers) else z3.Real(name)
            self._declared(e, self.atoms[e])
        # An integer atom stays Int-sorted (z3 5.4 times out on to_real(a) < to_real(b) < to_real(a) + 1); every
        # division below has a Real numerator, so no integer division arises.
        return self.atoms[e]

    def _declared(self, e, v):
        x = v  # Int-sorted for an integer atom, as in ``var``
        if isinstance(e, (sp.Symbol, sp.Indexed, AppliedUndef)):
            for key, rel in (("positive", x > 0), ("negative", x < 0), ("nonnegative", x >= 0),
                             ("nonpositive", x <= 0), ("nonzero", x != 0)):
                if getattr(e, f"is_{key}") is True:
                    self.facts.append(rel)
        elif isinstance(e, MatrixRank):
            self.facts.append(x >= 0)
        elif not sp.sympify(e).free_symbols and e.is_number:
            try:
                value = sp.N(e, 60, strict=True)
            except Exception:  # noqa: BLE001 - no bounds where the evaluation lost its digits
                return
            # bounds only for a moderate magnitude: exp(exp(600)) has ~10^260 digits as a rational
            if value.is_real and value.is_Number and sp.Rational(1, 10 ** 300) < abs(value) < 10 ** 300:
                mid = sp.Rational(str(value))
                margin = (abs(mid) + 1) / sp.Integer(10) ** 40  # relative: 60 digits, 20 of them to spare
                self.facts += [x > _q(mid - margin), x < _q(mid + margin)]

    def term(self, e):
        e = sp.sympify(e)
        if e.is_Rational:
            return z3.IntVal(int(e)) if (e.is_Integer and self.integers) else z3.RealVal(str(e))
        if isinstance(e, sp.Add):
            return z3.Sum([self.term(a) for a in e.args])
        if isinstance(e, sp.Mul):
            out = self.term(e.args[0])
            for a in e.args[1:]:
                out = out * self.term(a)
            return out
        if isinstance(e, sp.Pow) and e.exp.is_Integer:
            base, n = self.term(e.base), int(e.exp)
            power = z3.RealVal(1)
            for _ in range(abs(n)):
                power = power * base
            return power if n >= 0 else 1 / power
        if isinstance(e, sp.Pow) and e.exp.is_Rational:
            key = sp.Pow(e.base, sp.Rational(1, e.exp.q), evaluate=False)
            fresh = key not in self.atoms
            a = self.var(key, False)
            if fresh:
                b = self.term(e.base)
                self.facts.append(z3.Implies(b >= 0, z3.And(a >= 0, _power(a, e.exp.q) == b)))
            return _power(a, e.exp.p) if e.exp.p >= 0 else 1 / _power(a, -e.exp.p)
        if isinstance(e, sp.Abs):
            x = self.term(e.args[0])
            return z3.If(x >= 0, x, -x)
        if isinstance(e, (sp.Min, sp.Max)):
            args = [self.term(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = z3.If(a < out, a, out) if isinstance(e, sp.Min) else z3.If(a > out, a, out)
            return out
        if isinstance(e, sp.Piecewise):
            out = None
            for branch, cond in reversed(e.args):
                value = self.term(branch)
                out = value if out is None and cond is sp.true else z3.If(self.formula(cond), value,
                                                                          out if out is not None else value)
            if e.args[-1][1] is not sp.true:
                raise Untranslatable("a Piecewise without a final True branch")
            return out
        if isinstance(e, sp.KroneckerDelta):
            return z3.If(self.term(e.args[0]) == self.term(e.args[1]), z3.RealVal(1), z3.RealVal(0))
        factored = _exponential(e)
        if factored is not None:
            out = z3.RealVal(1)
            for base, k in factored:
                t = self.term(base)
                out = out * (_power(t, int(k)) if k >= 0 else 1 / _power(t, -int(k)))
            return out
        fresh = e not in self.atoms
        a = self.var(e, integer_valued(e))
        if fresh:
            self._atom_facts(e, a)
        return a

    def _atom_facts(self, e, a):
        if isinstance(e, sp.exp):
            self.facts.append(a > 0)
        elif isinstance(e, sp.log):
            u = self.term(e.args[0])
            self.facts += [z3.Implies(u > 1, a > 0), z3.Implies(u == 1, a == 0),
                           z3.Implies(z3.And(u > 0, u < 1), a < 0)]
        elif isinstance(e, sp.binomial) and all(integer_valued(x) for x in e.args):
            n, k = (self.term(x) for x in e.args)
            self.facts.append(z3.Implies(z3.And(k >= 0, k <= n), a >= 1))
        elif isinstance(e, sp.Pow):  # a symbolic exponent
            b, x = self.term(e.base), self.term(e.exp)
            self.facts.append(z3.Implies(b > 0, a > 0))
            if integer_valued(e.exp):
                self.facts += [z3.Implies(z3.And(b >= 0, x >= 0), a >= 0), z3.Implies(x == 0, a == 1)]

    def formula(self, f):
        f = sp.sympify(f)
        if f is sp.true:
            return z3.BoolVal(True)
        if f is sp.false:
            return z3.BoolVal(False)
        if isinstance(f, sp.And):
            return z3.And(*[self.formula(a) for a in f.args])
        if isinstance(f, sp.Or):
            return z3.Or(*[self.formula(a) for a in f.args])
        if isinstance(f, sp.Not):
            return z3.Not(self.formula(f.args[0]))
        if isinstance(f, sp.Implies):
            return z3.Implies(self.formula(f.args[0]), self.formula(f.args[1]))
        ops = {sp.Eq: lambda a, b: a == b, sp.Ne: lambda a, b: a != b, sp.Lt: lambda a, b: a < b,
               sp.Le: lambda a, b: a <= b, sp.Gt: lambda a, b: a > b, sp.Ge: lambda a, b: a >= b}
        for cls, op in ops.items():
            if isinstance(f, cls):
                return op(self.term(f.lhs), self.term(f.rhs))
        raise Untranslatable(f"{type(f).__name__} is not a formula of real arithmetic")


def _q(x: sp.Rational):
    return z3.RealVal(str(x))


def _power(a, n: int):
    out = z3.RealVal(1)
    for _ in range(n):
        out = out * a
    return out


_CACHE: dict = {}
_UNDECIDED = [0]


def undecided_count() -> int:
    """How many ``entails`` calls so far (cached answers included) were "not entailed" only because z3 gave up
    (resource limit, timeout) on every translation, without a counter-model for any: their answer may differ on
    a less loaded machine. A caller that reads "not entailed" as evidence compares this before and after."""
    return _UNDECIDED[0]


def entails(hypotheses, goal, extra_facts=(), timeout_ms: int = TIMEOUT_MS) -> bool:
    """Whether the hypotheses (with ``extra_facts``, proved formulas about the atoms) imply ``goal``."""
    key = (tuple(hypotheses), goal, tuple(extra_facts), timeout_ms,
           subs_points(tuple(hypotheses), goal, tuple(extra_facts)))  # see terms.subs_points
    if key not in _CACHE:
        query = (hypotheses, goal, extra_facts, timeout_ms)
        real, real_t, real_solver = _solve(*query, integers=False)
        outcomes = [_ANSWERS[real]]
        # without an integer-valued atom the integer translation is the same query (its integer constants coerced
        # to reals): asked again, z3 would only repeat its answer or its give-up (26 s for c_8 > 0 on the line)
        same_query = real in ("sat", "unknown") and not real_t.integer_valued
        if real != "unsat" and not same_query:
            integer, _t, _solver = _solve(*query, integers=True)
            if integer == "unknown" and real == "sat":
                # z3 gave up on the integer translation: if the real relaxation's counter-model is one of it too
                # (its values pinned, the integer query is satisfiable), the query is not entailed, decided; the
                # model is read only in this rare case
                pins = _model_values(real_t, real_solver)
                if pins is not None and _solve(*query, integers=True, pins=pins)[0] == "sat":
                    integer = "sat"
            outcomes.append(_ANSWERS[integer])
        # undecided: not proved, and z3 gave up on a translation (a counter-model of the real relaxation says
        # nothing of the integer one by itself, so one give-up is enough)
        _CACHE[key] = True if outcomes[-1] is True else (None if None in outcomes else False)
    if _CACHE[key] is None:
        _UNDECIDED[0] += 1
    return _CACHE[key] is True


# what a query's outcome says of the entailment: unsat entails; a counter-model, or a query that does not
# translate, does not; z3 giving up (or raising) says nothing
_ANSWERS = {"unsat": True, "sat": False, "untranslatable": False, "unknown": None}


def _solve(hypotheses, goal, extra_facts, timeout_ms: int, integers: bool, pins: dict | None = None):
    """(outcome, translation, solver) of the query hypotheses & not goal: "unsat", "sat", "unknown" (z3 gave up
    or raised) or "untranslatable". ``pins`` (atom -> (numerator, denominator)) fixes every atom's value; an atom
    it lacks, or a fractional value for an integer atom, makes the pinned query "unknown" (nothing shown)."""
    t = _Z3(integers)
    try:
        hyps = [t.formula(h) for h in list(hypotheses) + list(extra_facts)]
        negated = z3.Not(t.formula(goal))
    except (Untranslatable, z3.Z3Exception, TypeError, ValueError):
        return "untranslatable", t, None
    pinned = []
    for e, v in t.atoms.items() if pins is not None else ():
        if e not in pins or (v.is_int() and pins[e][1] != 1):
            return "unknown", t, None
        num, den = pins[e]
        pinned.append(v == (z3.IntVal(num) if v.is_int() else z3.Q(num, den)))
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.set("rlimit", RESOURCE_LIMIT)
    solver.add(*hyps, *t.facts, negated, *pinned)  # the order z3 has always been given (its search depends on it)
    try:
        answer = solver.check()
    except z3.Z3Exception:
        return "unknown", t, solver
    return ("unsat" if answer == z3.unsat else "sat" if answer == z3.sat else "unknown"), t, solver


def _model_values(t, solver) -> dict | None:
    """Every atom's value in the solver's model as (numerator, denominator), or None if one is not rational (an
    algebraic number cannot be pinned)."""
    model = solver.model()
    values = {}
    for e, v in t.atoms.items():
        value = model.eval(v, model_completion=True)
        if z3.is_int_value(value):
            values[e] = (value.as_long(), 1)
        elif z3.is_rational_value(value):
            values[e] = (value.numerator_as_long(), value.denominator_as_long())
        else:
            return None
    return values


def expand_in_atoms(e):
    """``e`` multiplied out as a polynomial (with negative powers) in its atoms, the atoms untouched."""
    table, _roots = {}, {}
    x = _atomize(sp.sympify(e), table, _roots)
    back = {v: k for k, v in table.items()}
    return sp.expand(x).xreplace(back)


def together_in_atoms(e):
    """``e`` as one fraction ``p/q`` of polynomials in its atoms (``cancel``), the atoms untouched."""
    table, _roots = {}, {}
    x = _atomize(sp.sympify(e), table, _roots)
    back = {v: k for k, v in table.items()}
    return sp.cancel(sp.together(x)).xreplace(back)
