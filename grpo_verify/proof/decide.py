"""Deciding one link of a chain with SymPy.

Equalities: the difference of the two sides is driven to zero by a fixed list of exact
normalisations (``doit``, ``expand``, ``cancel``, ``simplify``, ...), after canonical renaming of
summation indices. Inequalities: the sign of the difference is read from SymPy's assumptions, from
a factorisation, or, for a polynomial in one bounded variable, from exact real-root isolation.
Nothing numeric can prove a link. Numbers only *refute*: when no exact procedure succeeds, the link
is evaluated at random admissible points (50 significant digits); a clear violation is a
counterexample (status REFUTED), otherwise the link is UNPROVED.
"""

from __future__ import annotations

import random
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import sympy as sp
from sympy.core.function import AppliedUndef

from grpo_verify.proof.status import Status

SECONDS_PER_ATTEMPT = 30.0  # one normalisation that runs longer is abandoned (the link stays undecided)
_DIGITS = 50
_TOLERANCE = sp.Float("1e-30", _DIGITS)


@dataclass
class Outcome:
    status: Status
    detail: str


@dataclass
class Context:
    """What a link may assume: boolean side conditions, interval domains and rewrite facts."""

    conditions: list[sp.Basic] = field(default_factory=list)
    domains: dict[sp.Symbol, sp.Interval] = field(default_factory=dict)
    facts: list[tuple[sp.Basic, sp.Basic]] = field(default_factory=list)
    positives: list[sp.Basic] = field(default_factory=list)

    @classmethod
    def from_assumptions(cls, assumptions: Sequence, facts: Sequence[tuple[sp.Basic, sp.Basic]]) -> "Context":
        ctx = cls(facts=list(facts))
        for a in assumptions:
            if a.condition is not None:
                ctx.conditions.append(a.condition)
            if a.domain is not None:
                ctx.domains[a.domain[0]] = a.domain[1]
            if a.positive is not None:
                ctx.positives.append(sp.sympify(a.positive))
        return ctx

    def with_positive_atoms(self, e: sp.Basic) -> sp.Basic:
        """Replace each expression declared positive by a positive symbol (exact decisions only)."""
        for n, positive in enumerate(self.positives):
            e = e.xreplace({positive: sp.Symbol(f"_positive{n}", positive=True)})
        return e

    def substituted(self, symbol: sp.Symbol, value: int) -> "Context":
        def sub(e: sp.Basic) -> sp.Basic:
            return _doit(e.subs(symbol, value))

        return Context([sub(c) for c in self.conditions],
                       {s: d for s, d in self.domains.items() if s != symbol},
                       [(sub(a), sub(b)) for a, b in self.facts],
                       [sub(p) for p in self.positives])


# -- preparation -------------------------------------------------------------------------------

def _doit(e: sp.Basic) -> sp.Basic:
    for _ in range(4):
        new = e.doit()
        if new == e:
            break
        e = new
    return e


def canonical_indices(e: sp.Basic) -> sp.Basic:
    """Rename bound variables of sums and products to names fixed by nesting depth.

    ``Sum(r[i], (i, 1, R))`` and ``Sum(r[j], (j, 1, R))`` then become the same object and cancel.
    """

    def depth(x: sp.Basic) -> int:
        inner = [depth(a) for a in x.args]
        own = 1 if isinstance(x, (sp.Sum, sp.Product)) else 0
        return own + max(inner, default=0)

    def rename(x: sp.Basic) -> sp.Basic:
        if not x.args or isinstance(x, (sp.MatrixBase,)):
            return x
        args = [rename(a) for a in x.args]
        x = x.func(*args) if args != list(x.args) else x
        if isinstance(x, (sp.Sum, sp.Product)):
            body, limits = x.args[0], [tuple(limit) for limit in x.args[1:]]
            level = depth(body)
            for n, (v, lo, hi) in enumerate(limits):
                fresh = sp.Symbol(f"_bound{level}_{n}", **_symbol_assumptions(v))
                body = body.xreplace({v: fresh})
                # SymPy merges nested sums: an inner limit's bounds may mention this outer variable
                limits[:n] = [(w, a.xreplace({v: fresh}), b.xreplace({v: fresh})) for w, a, b in limits[:n]]
                limits[n] = (fresh, lo, hi)
            x = x.func(body, *limits)
        return x

    return rename(e)


def _symbol_assumptions(v: sp.Symbol) -> dict:
    keys = ("integer", "positive", "nonnegative", "real")
    return {k: True for k in keys if getattr(v, f"is_{k}")}


def prepare(e: sp.Basic, ctx: Context) -> sp.Basic:
    e = canonical_indices(sp.sympify(e))
    facts = [(canonical_indices(sp.sympify(a)), canonical_indices(sp.sympify(b))) for a, b in ctx.facts]
    for a, b in facts:
        e = e.subs(a, b)
    e = canonical_indices(_doit(e))
    for a, b in facts:  # facts may only match once sums are evaluated
        e = e.subs(a, b)
    return e


def pull_constants_out_of_sums(e: sp.Basic) -> sp.Basic:
    """Split sums over additions and move factors free of the summation index outside."""
    from sympy.simplify.simplify import factor_sum

    def visit(x: sp.Basic) -> sp.Basic:
        if not x.args or isinstance(x, sp.MatrixBase):
            return x
        x = x.func(*[visit(a) for a in x.args])
        if isinstance(x, sp.Sum):
            body = sp.expand(x.function)
            if isinstance(body, sp.Add):
                return sp.Add(*[visit(sp.Sum(term, *x.limits)) for term in body.args])
            return factor_sum(sp.Sum(body, *x.limits))
        return x

    return canonical_indices(visit(e))


# -- exact decisions ---------------------------------------------------------------------------

class _Timeout(Exception):
    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum, frame):  # pragma: no cover - depends on timing
        raise _Timeout

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_NORMALISATIONS: list[tuple[str, Callable[[sp.Basic], sp.Basic]]] = [  # cheapest first
    ("direct evaluation", lambda e: e),
    ("expand", lambda e: canonical_indices(sp.expand(e))),
    ("sums split, constants pulled out", lambda e: sp.expand(pull_constants_out_of_sums(e))),
    ("cancel", lambda e: sp.cancel(sp.together(e))),
    ("sums split, constants pulled out, cancel", lambda e: sp.cancel(sp.together(pull_constants_out_of_sums(e)))),
    ("simplify", lambda e: canonical_indices(sp.simplify(e))),
    ("sums split, constants pulled out, simplify", lambda e: sp.simplify(pull_constants_out_of_sums(e))),
    ("simplify(expand)", lambda e: canonical_indices(sp.simplify(sp.expand(e)))),
    ("expand_log, simplify", lambda e: sp.simplify(sp.expand_log(e))),
    ("radsimp", lambda e: sp.simplify(sp.radsimp(e))),
    ("piecewise_fold, simplify", lambda e: sp.simplify(sp.piecewise_fold(e))),
]


def zero_by_normalisation(diff: sp.Basic) -> str | None:
    """The name of the first exact normalisation that reduces ``diff`` to 0, else None."""
    if isinstance(diff, sp.MatrixBase):
        hows = []
        for entry in diff:
            how = zero_by_normalisation(entry)
            if how is None:
                return None
            hows.append(how)
        return "entrywise " + ", ".join(sorted(set(hows)))
    for name, f in _NORMALISATIONS:
        try:
            with _time_limit(SECONDS_PER_ATTEMPT):
                value = f(diff)
        except _Timeout:
            continue
        except (NotImplementedError, TypeError, ValueError, AttributeError, RecursionError, sp.PolynomialError):
            continue
        if value == 0 or getattr(value, "is_zero", None) is True:
            return name
    return None


def sign_decision(e: sp.Basic, strict: bool, ctx: Context) -> str | None:
    """How ``e >= 0`` (or ``> 0`` when strict) was decided exactly, else None."""
    want = "is_positive" if strict else "is_nonnegative"
    candidates = [("assumptions", lambda x: x), ("simplify", sp.simplify), ("factor", sp.factor),
                  ("cancel", lambda x: sp.factor(sp.cancel(sp.together(x))))]
    for name, f in candidates:
        try:
            with _time_limit(SECONDS_PER_ATTEMPT):
                v = f(e)
        except (_Timeout, NotImplementedError, TypeError, ValueError, sp.PolynomialError):
            continue
        if getattr(v, want) is True:
            return f"sign from {name}"
        if _product_sign_ok(v, strict):
            return f"sign of each factor after {name}"
    verdict, detail = univariate_sign(e, strict, ctx)
    if verdict is True:
        return detail
    return None


def _product_sign_ok(v: sp.Basic, strict: bool) -> bool:
    if not isinstance(v, sp.Mul):
        return False
    for factor in v.args:
        base, exp = factor.as_base_exp()
        if exp.is_even and base.is_real and not strict:
            continue
        if exp.is_even and base.is_real and strict and base.is_nonzero:
            continue
        ok = factor.is_positive if strict else factor.is_nonnegative
        if ok is not True:
            return False
    return True


def univariate_sign(e: sp.Basic, strict: bool, ctx: Context) -> tuple[bool | None, str]:
    """Exact decision of ``e >= 0`` (``> 0`` if strict) for a rational function of one variable on
    its assumed interval: isolate the real roots exactly, then read the sign at each root and at a
    rational point of every gap between roots. Returns (verdict or None, detail)."""
    free = e.free_symbols
    if len(free) != 1:
        return None, ""
    (x,) = free
    interval = ctx.domains.get(x)
    if interval is None:
        return None, ""
    num, den = sp.fraction(sp.cancel(sp.together(e)))
    try:
        num_poly, den_poly = sp.Poly(num, x), sp.Poly(den, x)
    except sp.PolynomialError:
        return None, ""
    if any(interval.contains(root) is sp.true for root in _real_roots(den_poly)):
        return None, ""  # a pole inside the interval: not handled
    roots = sorted({root for root in _real_roots(num_poly) if interval.contains(root) is sp.true},
                   key=lambda z: sp.N(z, 40))
    lo, hi = interval.start, interval.end
    points = list(roots)
    fences = [lo] + roots + [hi]
    for a, b in zip(fences, fences[1:]):
        point = _rational_between(a, b)
        if point is not None:
            points.append(point)
    for end, open_ in ((lo, interval.left_open), (hi, interval.right_open)):
        if end.is_finite and not open_:
            points.append(end)
    for point in points:
        value = num_poly.eval(point) * den_poly.eval(point)  # same sign as num/den
        value = sp.nsimplify(value) if not value.is_Rational else value
        if value.is_negative or (strict and value.is_zero):
            return False, f"exact witness {x} = {sp.sstr(point)} on {sp.sstr(interval)}: value {sp.sstr(sp.N(value, 8))}"
        if value.is_negative is None or (strict and value.is_zero is None):
            return None, ""
    return True, f"exact real-root isolation on {sp.sstr(interval)}"


def _real_roots(poly: sp.Poly) -> list:
    if poly.degree() <= 0:
        return []
    return list(dict.fromkeys(sp.real_roots(poly)))


def _rational_between(a: sp.Basic, b: sp.Basic) -> sp.Rational | None:
    if a.is_infinite and b.is_infinite:
        return sp.Integer(0)
    if a.is_infinite:
        return sp.floor(sp.N(b, 30)) - 1
    if b.is_infinite:
        return sp.ceiling(sp.N(a, 30)) + 1
    if sp.N(b - a, 40) <= 0:
        return None
    for digits in (30, 60, 120):
        mid = sp.Rational(str(sp.N((a + b) / 2, digits)))
        if (mid > a) is sp.true and (mid < b) is sp.true:
            return mid
    return None


# -- counterexamples ---------------------------------------------------------------------------

def _random_value(s: sp.Basic, rng: random.Random, ctx: Context) -> sp.Basic:
    interval = ctx.domains.get(s)
    if s.is_integer:
        lo = 1 if s.is_positive else 0 if s.is_nonnegative else -6
        if interval is not None:
            lo = max(lo, int(sp.ceiling(interval.start))) if interval.start.is_finite else lo
            hi = int(sp.floor(interval.end)) if interval.end.is_finite else lo + 8
            return sp.Integer(rng.randint(lo, max(lo, hi)))
        return sp.Integer(rng.randint(lo, lo + 8))
    if interval is not None:
        lo = interval.start if interval.start.is_finite else interval.end - 5
        hi = interval.end if interval.end.is_finite else lo + 5
        return sp.Rational(lo) + (sp.Rational(hi) - sp.Rational(lo)) * sp.Rational(rng.randint(1, 999), 1000)
    magnitude = sp.Rational(rng.randint(1, 3999), 1000)
    if s.is_positive or s.is_nonnegative:
        return magnitude
    return magnitude if rng.random() < 0.5 else -magnitude


def _random_function(f: AppliedUndef, rng: random.Random) -> sp.Lambda:
    xs = sp.symbols(f"_x0:{len(f.args)}")
    coeff = lambda: sp.Rational(rng.randint(-900, 900), 1000)  # noqa: E731
    poly = coeff() + sum(coeff() * x + coeff() * x**2 for x in xs)
    if len(xs) > 1:
        poly += coeff() * xs[0] * xs[1]
    body = sp.exp(poly) if (f.is_positive or f.is_nonnegative) else poly
    return sp.Lambda(xs, body)


def _instantiate(e: sp.Basic, rng: random.Random, ctx: Context) -> tuple[sp.Basic, dict] | None:
    """Replace every free symbol, indexed atom and undefined function by random admissible values."""
    values: dict = {}
    labels = {a.base.label for a in e.atoms(sp.Indexed)}
    conditions = ctx.conditions + [p > 0 for p in ctx.positives]
    symbols = e.free_symbols | set().union(*[c.free_symbols for c in conditions] or [set()])
    symbols = sorted((s for s in symbols if isinstance(s, sp.Symbol) and s not in labels), key=str)
    for attempt in range(50):
        values = {}
        for s in symbols:
            values[s] = _random_value(s, rng, ctx)
        if all(c.subs(values) is not sp.false for c in conditions):
            break
    else:
        return None
    x = _doit(e.subs(values))
    functions = {f.func for f in x.atoms(AppliedUndef)}
    if functions:
        x = _doit(x.subs({F: _random_function(next(a for a in x.atoms(AppliedUndef) if a.func == F), rng)
                          for F in functions}))
    indexed = x.atoms(sp.Indexed)
    if indexed:
        ivalues = {a: _random_value(a, rng, ctx) for a in sorted(indexed, key=str)}
        values.update(ivalues)
        x = _doit(x.subs(ivalues))
    return x, values


def find_counterexample(lhs: sp.Basic, relation: str, rhs: sp.Basic, ctx: Context,
                        tries: int = 12, seed: int = 0) -> str | None:
    rng = random.Random(seed)
    diff = (rhs - lhs) if not isinstance(lhs, sp.MatrixBase) else (sp.Matrix(rhs) - sp.Matrix(lhs))
    for _ in range(tries):
        try:
            inst = _instantiate(diff, rng, ctx)
        except (TypeError, ValueError, ZeroDivisionError, NotImplementedError):
            continue
        if inst is None:
            continue
        x, values = inst
        entries = list(x) if isinstance(x, sp.MatrixBase) else [x]
        for entry in entries:
            try:
                v = sp.N(entry, _DIGITS)
            except (TypeError, ValueError, ZeroDivisionError):
                return None
            if not v.is_number or v.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or not v.is_real:
                continue
            broken = {"=": abs(v) > _TOLERANCE, "<=": v < -_TOLERANCE, "<": v <= _TOLERANCE,
                      ">=": v > _TOLERANCE, ">": v >= -_TOLERANCE, "!=": abs(v) <= _TOLERANCE}[relation]
            if broken:
                shown = ", ".join(f"{k} = {sp.sstr(val)}" for k, val in list(values.items())[:8])
                return f"counterexample at {shown}: right - left = {sp.N(v, 8)}"
    return None


# -- the entry points --------------------------------------------------------------------------

def decide(lhs: sp.Basic, relation: str, rhs: sp.Basic, ctx: Context) -> Outcome:
    try:
        a, b = prepare(lhs, ctx), prepare(rhs, ctx)
    except Exception as exc:  # a malformed expression is a failed step, reported, not a crash
        return Outcome(Status.UNPROVED, f"could not evaluate: {type(exc).__name__}: {exc}")
    # A wrong step is usually exposed at the first random point; looking there first spares the
    # exact normalisations (seconds each) on false links. Numbers can only refute, never prove.
    early = find_counterexample(a, relation, b, ctx, tries=2, seed=1)
    if early:
        return Outcome(Status.REFUTED, early)
    if relation == "=":
        if isinstance(a, sp.MatrixBase) != isinstance(b, sp.MatrixBase):
            return Outcome(Status.REFUTED, "one side is a matrix, the other is not")
        if isinstance(a, sp.MatrixBase) and a.shape != b.shape:
            return Outcome(Status.REFUTED, f"shapes differ: {a.shape} vs {b.shape}")
        diff = (sp.Matrix(a) - sp.Matrix(b)) if isinstance(a, sp.MatrixBase) else a - b
        how = zero_by_normalisation(ctx.with_positive_atoms(diff))
        if how:
            return Outcome(Status.PROVED, f"difference is 0 by {how}")
    elif relation == "!=":
        how = zero_by_normalisation(a - b)
        if how:
            return Outcome(Status.REFUTED, f"the two sides are equal (difference is 0 by {how})")
        value = sp.simplify(a - b)
        if value.is_zero is False:
            return Outcome(Status.PROVED, f"difference simplifies to {sp.sstr(value)}, which is nonzero")
    else:
        bigger, smaller = (b, a) if relation in ("<=", "<") else (a, b)
        difference = ctx.with_positive_atoms(bigger - smaller)
        strict = relation in ("<", ">")
        how = sign_decision(difference, strict, ctx)
        if how:
            return Outcome(Status.PROVED, how)
        verdict, detail = univariate_sign(difference, strict, ctx)
        if verdict is False:
            return Outcome(Status.REFUTED, detail)
    counter = find_counterexample(a, relation, b, ctx)
    if counter:
        return Outcome(Status.REFUTED, counter)
    return Outcome(Status.UNPROVED, "no exact procedure decided this link and no counterexample was found")


def decide_for_each(lhs: sp.Basic, relation: str, rhs: sp.Basic, ctx: Context, symbol: sp.Symbol,
                    values: Sequence[int]) -> Outcome:
    for value in values:
        sub_ctx = ctx.substituted(symbol, value)
        if any(c is sp.false for c in sub_ctx.conditions):
            continue  # the assumptions exclude this value
        outcome = decide(lhs.subs(symbol, value), relation, rhs.subs(symbol, value), sub_ctx)
        if outcome.status is not Status.PROVED:
            return Outcome(outcome.status, f"at {symbol} = {value}: {outcome.detail}")
    shown = f"{values[0]}..{values[-1]}" if len(values) > 2 else ", ".join(map(str, values))
    return Outcome(Status.PROVED, f"decided exactly for each {symbol} = {shown}")
