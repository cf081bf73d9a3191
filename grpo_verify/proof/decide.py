"""The SymPy route: deciding one relation between two exact, defined expressions.

Part of the trusted kernel; the caller (``kernel``) has already validated both sides and
discharged their definedness obligations, so an identity that SymPy's normalisations reach holds at
every admissible point, not only generically. What this module trusts: SymPy's exact arithmetic,
its normalisations (``expand``, ``cancel``, ``simplify``, ...), its assumption system (``is_positive``
on symbols declared positive) and its real-root isolation of univariate polynomials.

- Equalities: the difference of the two sides is driven to exactly 0 by a fixed list of
  normalisations, after canonical renaming of bound indices to fresh dummies.
- Inequalities: the sign of the difference is read from SymPy's assumptions (expressions the
  assumptions declare positive become positive atoms), from a factorisation, or, for a rational
  function of one variable on an interval with rational end points, from exact real-root
  isolation with rational separating points. Whatever cannot be placed exactly leaves the link
  undecided (fail closed).
- Numbers only refute, and only exactly: a candidate point is drawn at random, every hypothesis and
  every definedness obligation is checked exactly at it, and the relation must fail exactly there.
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

from grpo_verify.proof.definedness import is_free_atom

SECONDS_PER_ATTEMPT = 30.0  # one normalisation that runs longer is abandoned (the link stays undecided)
_DIGITS = 50
_TOLERANCE = sp.Rational(1, 10**30)


@dataclass
class Context:
    """What a link may assume: every hypothesis as a SymPy boolean, interval domains, rewrites."""

    hypotheses: list[sp.Basic] = field(default_factory=list)
    domains: dict[sp.Symbol, sp.Set] = field(default_factory=dict)
    rewrites: list[tuple[sp.Basic, sp.Basic]] = field(default_factory=list)
    obligations: list[sp.Basic] = field(default_factory=list)  # definedness conditions of the link's sides
    # hypotheses for every integer in a range: (index, lo, hi, formula in the index), used only by the
    # sum rule at a sum's bound index whose range lies inside (never as plain hypotheses)
    quantified: list[tuple[sp.Symbol, sp.Basic, sp.Basic, sp.Basic]] = field(default_factory=list)
    # some equation assumption holds for every value of a variable (``for_every``): a counterexample
    # checked at one value of it could break the equation at another, so none is reported
    universal: bool = False

    def positive_atoms(self) -> dict[sp.Basic, sp.Dummy]:
        """Compound expressions the hypotheses declare > 0 (or >= 0), as atoms for SymPy's assumptions."""
        atoms: dict[sp.Basic, sp.Dummy] = {}
        for n, h in enumerate(self.hypotheses):
            if isinstance(h, (sp.StrictGreaterThan, sp.GreaterThan, sp.StrictLessThan, sp.LessThan)):
                big, small = (h.lhs, h.rhs) if isinstance(h, (sp.StrictGreaterThan, sp.GreaterThan)) else (h.rhs, h.lhs)
                if small == 0 and not big.is_Atom and big not in atoms:
                    strict = isinstance(h, (sp.StrictGreaterThan, sp.StrictLessThan))
                    atoms[big] = sp.Dummy(f"pos{n}", positive=True) if strict else sp.Dummy(f"nonneg{n}",
                                                                                             nonnegative=True)
        return atoms

    def with_positive_atoms(self, e: sp.Basic) -> sp.Basic:
        atoms = self.positive_atoms()
        if not atoms or not isinstance(e, sp.Basic):
            return e
        # inside Derivative(., x) or Subs(., x, p) an atom in x is not the hypothesis' value at this point
        variables = set().union(*[a.free_symbols for a in atoms])
        protected = {node: sp.Dummy("protected") for node in sp.preorder_traversal(e)
                     if isinstance(node, (sp.Derivative, sp.Subs)) and set(node.variables) & variables}
        if not protected:
            return e.xreplace(atoms)
        outermost = {k: v for k, v in protected.items() if not any(k != o and o.has(k) for o in protected)}
        return e.xreplace(outermost).xreplace(atoms).xreplace({v: k for k, v in outermost.items()})


@dataclass(frozen=True)
class Outcome:
    verdict: bool | None  # True: holds; False: fails (exact witness); None: undecided
    detail: str


# -- preparation -------------------------------------------------------------------------------

def doit(e: sp.Basic) -> sp.Basic:
    for _ in range(4):
        new = e.doit()
        if new == e:
            break
        e = new
    return e


_BOUND_INDEX = 2_000_000_000  # dummy indices of canonical bound variables (never equal to a user symbol)


def canonical_indices(e: sp.Basic) -> sp.Basic:
    """Rename bound variables of sums and products to dummies fixed by nesting depth.

    ``Sum(r[i], (i, 1, R))`` and ``Sum(r[j], (j, 1, R))`` then become the same object and cancel.
    The new names are ``Dummy`` objects, which never equal a free ``Symbol`` of the same name, so
    renaming cannot capture a free variable.
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
                fresh = sp.Dummy(f"b{level}_{n}", dummy_index=_BOUND_INDEX + 100 * level + n,
                                 **_bound_assumptions(v, lo))
                body = body.xreplace({v: fresh})
                # SymPy merges nested sums: an inner limit's bounds may mention this outer variable
                limits[:n] = [(w, a.xreplace({v: fresh}), b.xreplace({v: fresh})) for w, a, b in limits[:n]]
                limits[n] = (fresh, lo, hi)
            x = x.func(body, *limits)
        return x

    if isinstance(e, sp.MatrixBase):
        return e.applyfunc(rename)
    return rename(e)


def _bound_assumptions(v: sp.Symbol, lo: sp.Basic) -> dict:
    """A bound index takes the values lo, lo + 1, ... (definedness refuses Karr's reversed ranges), so its
    sign comes from its lower limit, never from the index's declared sign: Sum(f(j), (j, -3, R)) with j
    declared positive still runs over -3, -2, ... The index keeps its declared integrality and reality."""
    out = {k: True for k in ("integer", "real") if getattr(v, f"is_{k}")}
    if lo.is_positive is True:
        out["positive"] = True
    elif lo.is_nonnegative is True:
        out["nonnegative"] = True
    return out


def prepare(e: sp.Basic, rewrites: Sequence[tuple]) -> sp.Basic:
    """Apply the rewrites (equations that hold here), evaluate, canonicalise bound indices.

    A rewrite is ``(a, b)`` or ``(a, b, into_derivatives, into_subs)``. An equation that holds at the
    admissible points says nothing of a function of a variable that a ``Derivative`` or a ``Subs``
    varies: such nodes are protected from a rewrite whose pattern mentions their variables, except
    the variables listed (for which the equation holds on an open set around where the derivative
    is taken: see ``kernel.cite``). Summation indices are renamed to fresh dummies first, so no pattern reaches them.
    """
    e = canonical_indices(sp.sympify(e))
    facts = [(canonical_indices(sp.sympify(r[0])), canonical_indices(sp.sympify(r[1])),
              frozenset(r[2]) if len(r) > 2 else frozenset(), frozenset(r[3]) if len(r) > 3 else frozenset())
             for r in rewrites]
    for fact in facts:
        e = _rewrite(e, *fact)
    e = canonical_indices(doit(e))
    for fact in facts:  # facts may only match once sums are evaluated
        e = _rewrite(e, *fact)
    return e


def _rewrite(e: sp.Basic, a: sp.Basic, b: sp.Basic, into_derivatives: frozenset, into_subs: frozenset) -> sp.Basic:
    if isinstance(e, sp.MatrixBase):
        return e.applyfunc(lambda entry: _rewrite(entry, a, b, into_derivatives, into_subs))
    pattern = a.free_symbols if isinstance(a, sp.Basic) else set()
    part_of_pattern = set(sp.preorder_traversal(a)) if isinstance(a, sp.Basic) else set()
    protected = {}
    if pattern and isinstance(e, sp.Basic):
        for node in sp.preorder_traversal(e):
            allowed = into_subs if isinstance(node, sp.Subs) else into_derivatives
            # a node that is part of the pattern is replaced with the whole occurrence, at this point
            if isinstance(node, (sp.Derivative, sp.Subs)) and node not in part_of_pattern \
                    and set(node.variables) & (pattern - allowed) and not any(node.has(p) for p in protected):
                protected[node] = sp.Dummy("protected")
    if not protected:
        return e.subs(a, b)
    return e.xreplace(protected).subs(a, b).xreplace({v: k for k, v in protected.items()})


def _count(e: sp.Basic) -> sp.Basic:
    """Each sum whose body does not mention its index, ``Sum(c, (j, a, b))``, as ``c (b - a + 1)``."""
    return e.replace(lambda s: isinstance(s, sp.Sum) and len(s.limits) == 1 and not s.function.has(s.limits[0][0]),
                     lambda s: s.doit())


def pull_constants_out_of_sums(e: sp.Basic) -> sp.Basic:
    """Split sums over additions and move factors free of the summation index outside; a sum over
    several indices is taken as the iterated sum it denotes, innermost index first, so a factor that
    depends only on an outer index leaves the inner sum (sum_i sum_j r_i g_j = (sum_i r_i)(sum_j g_j))."""
    from sympy.simplify.simplify import factor_sum

    def visit(x: sp.Basic) -> sp.Basic:
        if not x.args or isinstance(x, sp.MatrixBase):
            return x
        x = x.func(*[visit(a) for a in x.args])
        if isinstance(x, sp.Sum):
            body = x.function
            for limit in x.limits:
                body = sp.Add(*[_count(factor_sum(sp.Sum(term, limit))) for term in sp.Add.make_args(sp.expand(body))])
            return body
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


def _attempt(f: Callable[[], sp.Basic]) -> sp.Basic | None:
    """``f()``, or None if it failed or ran out of time (a failure never decides anything)."""
    try:
        with _time_limit(SECONDS_PER_ATTEMPT):
            return f()
    except Exception:  # noqa: BLE001 - any failure of a normalisation leaves the link undecided
        return None


_NORMALISATIONS: list[tuple[str, Callable[[sp.Basic], sp.Basic]]] = [  # cheapest first
    ("direct evaluation", lambda e: e),
    ("expand", lambda e: canonical_indices(sp.expand(e))),
    ("sums split, constants pulled out", lambda e: sp.expand(pull_constants_out_of_sums(e))),
    ("cancel", lambda e: sp.cancel(sp.together(e))),
    ("sums split, constants pulled out, cancel", lambda e: sp.cancel(sp.together(pull_constants_out_of_sums(e)))),
    ("simplify", lambda e: canonical_indices(sp.simplify(e))),
    ("sums split, constants pulled out, simplify", lambda e: sp.simplify(pull_constants_out_of_sums(e))),
    ("simplify(expand)", lambda e: canonical_indices(sp.simplify(sp.expand(e)))),
    ("radsimp", lambda e: sp.simplify(sp.radsimp(e))),
    # x**n / x -> x**(n - 1): SymPy's derivative of x**n is n*x**n/x, undefined at x = 0 although the
    # derivative (the statement's side, whose definedness was checked) is not; powsimp merges only
    # what SymPy's assumptions allow (integer exponents, positive bases)
    ("powsimp, cancel", lambda e: sp.cancel(sp.powsimp(sp.expand(e)))),
]


def _is_exact_zero(value: sp.Basic | None) -> bool:
    return value is not None and (value == 0 or (isinstance(value, sp.Expr) and value.is_zero is True
                                                 and not value.has(sp.zoo, sp.nan, sp.oo, -sp.oo)))


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
        if _is_exact_zero(_attempt(lambda: f(diff))):
            return name
    return None


def equality(a: sp.Basic, b: sp.Basic, ctx: Context) -> Outcome:
    if isinstance(a, sp.MatrixBase) != isinstance(b, sp.MatrixBase):
        return Outcome(False, "one side is a matrix, the other is not")
    if isinstance(a, sp.MatrixBase) and a.shape != b.shape:
        return Outcome(False, f"shapes differ: {a.shape} vs {b.shape}")
    diff = (sp.Matrix(a) - sp.Matrix(b)) if isinstance(a, sp.MatrixBase) else a - b
    how = zero_by_normalisation(diff)
    if how is None and ctx.positive_atoms():
        how = zero_by_normalisation(ctx.with_positive_atoms(diff))
        how = how and f"{how}, with the expressions assumed positive as positive atoms"
    return Outcome(True, f"difference is 0 by {how}") if how else Outcome(None, "")


def inequality(e: sp.Basic, strict: bool, ctx: Context) -> Outcome:
    """``e >= 0`` (``e > 0`` when strict)."""
    if isinstance(e, sp.MatrixBase):
        return Outcome(None, "an inequality between matrices is not defined")
    e_pos = ctx.with_positive_atoms(e)
    want = "is_positive" if strict else "is_nonnegative"
    # no further candidate (a cancelled form, a factor-by-factor sign) decided any inequality of the
    # derivations or the tests: trusted code that decides nothing is left out
    candidates = [("assumptions", lambda x: x), ("simplify", sp.simplify), ("factor", sp.factor)]
    for name, f in candidates:
        v = _attempt(lambda: f(e_pos))
        if v is None or v.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            continue
        if getattr(v, want) is True:
            return Outcome(True, f"sign from {name}")
    return univariate_sign(e, strict, ctx)


def disequality(a: sp.Basic, b: sp.Basic, ctx: Context) -> Outcome:
    if isinstance(a, sp.MatrixBase) or isinstance(b, sp.MatrixBase):
        return Outcome(None, "")
    how = zero_by_normalisation(ctx.with_positive_atoms(a - b))
    if how:
        return Outcome(False, f"the two sides are equal (difference is 0 by {how})")
    value = _attempt(lambda: sp.simplify(ctx.with_positive_atoms(a - b)))
    if value is not None and not value.has(sp.zoo, sp.nan, sp.oo, -sp.oo) and value.is_zero is False:
        return Outcome(True, f"difference simplifies to {sp.sstr(value)}, which is nonzero by SymPy's assumptions")
    return Outcome(None, "")


# -- exact univariate sign ---------------------------------------------------------------------

_REFINEMENTS = 400  # refinement rounds (each a few bisection steps) before giving up, undecided


def univariate_sign(e: sp.Basic, strict: bool, ctx: Context) -> Outcome:
    """Exact decision of ``e >= 0`` (``> 0`` if strict) for a rational function of one variable on
    an interval with rational (or infinite) end points.

    The real roots of numerator and denominator are isolated in disjoint intervals with rational
    end points and refined until they are separated from each other and from the domain's end
    points; the sign is then read exactly at a rational point of every gap and at each root. If any
    of this cannot be done exactly (an irrational end point, a root that cannot be separated, a pole
    in the domain) the link stays undecided.
    """
    free = e.free_symbols
    if len(free) != 1:
        return Outcome(None, "")
    (x,) = free
    interval = ctx.domains.get(x)
    if not isinstance(interval, sp.Interval):
        return Outcome(None, "")
    lo, hi = interval.start, interval.end
    if not all(end.is_infinite or end.is_Rational for end in (lo, hi)):
        return Outcome(None, "")
    together = _attempt(lambda: sp.fraction(sp.cancel(sp.together(e))))
    if together is None:
        return Outcome(None, "")
    num, den = together
    try:
        num_poly, den_poly = sp.Poly(num, x, domain="QQ"), sp.Poly(den, x, domain="QQ")
    except (sp.PolynomialError, sp.polys.polyerrors.CoercionFailed, ValueError, TypeError):
        return Outcome(None, "")
    if num_poly.is_zero:
        return Outcome(not strict, f"identically 0 on {sp.sstr(interval)}")
    product = (num_poly * den_poly).sqf_part() if (num_poly * den_poly).degree() > 0 else num_poly * den_poly
    roots = _separated_roots(product, lo, hi, interval)
    if roots is None:
        return Outcome(None, "")
    # roots: sorted disjoint rational isolating intervals (a, b) of the roots inside the domain
    # a witness is a point of the domain; the other hypotheses on x (log x > 0) must hold there too,
    # conjunct by conjunct (the kernel states a bounded domain as one And of its two bounds)
    domain = set(sp.And.make_args(interval.as_relational(x)))
    others = [c for h in list(ctx.hypotheses) + list(ctx.obligations) for c in sp.And.make_args(h)
              if x in getattr(c, "free_symbols", set()) and c not in domain]

    def admissible(point) -> bool:
        if point is None:
            return not others
        return all(_truth(doit(h.subs(x, point))) is True for h in others)

    for a, b in roots:
        if den_poly.degree() > 0 and _has_root_in(den_poly, a, b):
            return Outcome(None, "")  # a pole inside the domain (the definedness check should have caught it)
        if strict:
            point = a if a == b else None
            if not admissible(point):
                return Outcome(None, "")
            shown = sp.sstr(point) if point is not None else f"the root in [{sp.sstr(a)}, {sp.sstr(b)}]"
            return Outcome(False, f"exact witness {x} = {shown} on {sp.sstr(interval)}: the value is 0")
    points = _gap_points(roots, lo, hi)
    for point in points:
        value = num_poly.eval(point) * den_poly.eval(point)  # same sign as num/den
        if (value < 0 or (strict and value == 0)) and admissible(point):
            return Outcome(False, f"exact witness {x} = {sp.sstr(point)} on {sp.sstr(interval)}: "
                                  f"value {sp.sstr(num_poly.eval(point) / den_poly.eval(point))}")
        if value < 0 or (strict and value == 0):
            return Outcome(None, "")  # fails at a point the other hypotheses may exclude: undecided
    return Outcome(True, f"exact real-root isolation on {sp.sstr(interval)}")


def _separated_roots(poly: sp.Poly, lo: sp.Basic, hi: sp.Basic, interval: sp.Interval) -> list | None:
    """Isolating intervals of the roots of ``poly`` in the domain, sorted and strictly separated
    (``b_i < a_{i+1}``); an exact rational root is the interval ``(r, r)``. None if that cannot be
    established exactly within the refinement budget.

    Rational roots come from the linear factors over Q and are exact; the other factors have no
    rational root, so no end of their isolating intervals (rational numbers) is a root, and refining
    separates every irrational root from the rational points it must be compared with.
    """
    if poly.degree() <= 0:
        return []
    x = poly.gen
    rational: list[sp.Rational] = []
    irrational = sp.Poly(1, x, domain="QQ")
    for factor, _mult in poly.factor_list()[1]:
        if factor.degree() == 1:
            c1, c0 = factor.all_coeffs()
            rational.append(sp.Rational(-c0, c1))
        elif factor.degree() > 1:
            irrational = irrational * factor
    marks = [end for end in (lo, hi) if end.is_finite] + rational  # points no irrational interval may contain
    inside: list[tuple[sp.Rational, sp.Rational]] = [(q, q) for q in rational if interval.contains(q) is sp.true]
    if irrational.degree() > 0:
        try:
            found = [(sp.Rational(a), sp.Rational(b)) for (a, b), _mult in irrational.intervals()]
        except Exception:  # noqa: BLE001
            return None
        for a, b in found:
            for _ in range(_REFINEMENTS):
                if not any(a <= m <= b for m in marks):
                    break
                a, b = (sp.Rational(v) for v in irrational.refine_root(a, b, steps=4))
            else:
                return None
            # the root lies in the open (a, b) and no end of the domain lies in [a, b]
            if (lo.is_infinite or lo < a) and (hi.is_infinite or b < hi):
                inside.append((a, b))
    inside.sort()
    for _ in range(_REFINEMENTS):  # separate neighbours strictly
        touching = [n for n in range(len(inside) - 1) if inside[n][1] >= inside[n + 1][0]]
        if not touching:
            return inside
        for n in touching:
            for m in (n, n + 1):
                a, b = inside[m]
                if a != b:
                    inside[m] = tuple(sp.Rational(v) for v in irrational.refine_root(a, b, steps=4))
    return None


def _has_root_in(poly: sp.Poly, a: sp.Rational, b: sp.Rational) -> bool:
    if poly.eval(a) == 0 or poly.eval(b) == 0:
        return True
    return poly.count_roots(a, b) > 0


def _gap_points(roots: list, lo: sp.Basic, hi: sp.Basic) -> list[sp.Rational]:
    """A rational point strictly inside every gap between consecutive roots and the domain's ends."""
    fences_lo = [lo] + [b for _, b in roots]
    fences_hi = [a for a, _ in roots] + [hi]
    points = []
    for left, right in zip(fences_lo, fences_hi):
        if left.is_infinite and right.is_infinite:
            points.append(sp.Integer(0))
        elif left.is_infinite:
            points.append(right - 1)
        elif right.is_infinite:
            points.append(left + 1)
        elif left < right:
            points.append((left + right) / 2)
    return points


# -- exact counterexamples ---------------------------------------------------------------------

def _random_value(s: sp.Basic, rng: random.Random, ctx: Context, small: bool = False) -> sp.Basic:
    domain = ctx.domains.get(s)
    interval = domain if isinstance(domain, sp.Interval) else None
    if interval is not None and not (interval.start.is_Rational or interval.start.is_infinite):
        interval = None
    if interval is not None and not (interval.end.is_Rational or interval.end.is_infinite):
        interval = None
    if s.is_integer:
        lo = 1 if s.is_positive else 0 if s.is_nonnegative else -6
        if interval is not None:
            lo = max(lo, int(sp.ceiling(interval.start))) if interval.start.is_finite else lo
            hi = int(sp.floor(interval.end)) if interval.end.is_finite else lo + (3 if small else 8)
            return sp.Integer(rng.randint(lo, max(lo, hi)))
        return sp.Integer(rng.randint(lo, lo + (3 if small else 8)))
    if interval is not None:
        lo = interval.start if interval.start.is_finite else interval.end - 5
        hi = interval.end if interval.end.is_finite else lo + 5
        return sp.Rational(lo) + (sp.Rational(hi) - sp.Rational(lo)) * sp.Rational(rng.randint(0, 1000), 1000)
    magnitude = sp.Rational(rng.randint(0 if not s.is_positive else 1, 3999), 1000)
    if s.is_positive or s.is_nonnegative:
        return magnitude
    return magnitude if rng.random() < 0.5 else -magnitude


def _random_function(f: AppliedUndef, rng: random.Random) -> sp.Lambda:
    xs = sp.symbols(f"_x0:{len(f.args)}", real=True)
    coeff = lambda: sp.Rational(rng.randint(-900, 900), 1000)  # noqa: E731
    poly = coeff() + sum(coeff() * x + coeff() * x**2 for x in xs)
    if len(xs) > 1:
        poly += coeff() * xs[0] * xs[1]
    body = sp.exp(poly) if (f.is_positive or f.is_nonnegative) else poly
    return sp.Lambda(xs, body)


def _truth(condition: sp.Basic) -> bool | None:
    """The exact truth value of a closed boolean (None if SymPy cannot tell)."""
    if condition is sp.true or condition is True:
        return True
    if condition is sp.false or condition is False:
        return False
    value = _attempt(lambda: doit(condition))
    if value is sp.true or value is sp.false:
        return value is sp.true
    return None


def _exact_sign(v: sp.Basic) -> int | None:
    """-1, 0 or 1 for a closed real number, only when certain."""
    if not isinstance(v, sp.Expr) or not v.is_number or v.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I):
        return None
    if v.is_Rational:
        return int(bool(v > 0)) - int(bool(v < 0))
    if v.is_zero is True:
        return 0
    approx = _attempt(lambda: sp.N(v, _DIGITS))
    if approx is None or not approx.is_real or abs(approx) <= _TOLERANCE:
        return None  # too close to 0 to place without an exact zero test
    if v.is_positive is True and approx > 0:
        return 1
    if v.is_negative is True and approx < 0:
        return -1
    return None


def _instantiate(exprs: Sequence[sp.Basic], rng: random.Random, ctx: Context,
                 small: bool = False) -> tuple[list, dict] | None:
    """Replace every free symbol, undefined function and indexed atom by random admissible values."""
    labels = {a.base.label for e in exprs for a in sp.sympify(e).atoms(sp.Indexed)}
    symbols = set().union(*[sp.sympify(e).free_symbols for e in exprs])
    symbols = sorted((s for s in symbols if isinstance(s, sp.Symbol) and s not in labels), key=str)
    values = {s: _random_value(s, rng, ctx, small) for s in symbols}
    xs = [doit(sp.sympify(e).subs(values)) for e in exprs]
    functions = {}
    for x in xs:
        for a in x.atoms(AppliedUndef):
            if a.func not in functions:
                functions[a.func] = _random_function(a, rng)
    if functions:
        xs = [doit(x.subs(functions)) for x in xs]
    indexed = sorted(set().union(*[x.atoms(sp.Indexed) for x in xs]), key=str)
    if indexed:
        ivalues = {a: _random_value(a, rng, ctx) for a in indexed}
        values.update(ivalues)
        xs = [doit(x.subs(ivalues)) for x in xs]
    return xs, values


# declared properties a value must have (SymPy's own facts about it), beyond integrality and sign
DECLARED_PROPERTIES = ("even", "odd", "prime", "composite", "rational", "irrational", "algebraic", "transcendental")


def _has_declared_properties(values: dict) -> bool:
    """Whether every symbol's value has each property the symbol is declared to have (even, prime, ...)."""
    return all(getattr(value, f"is_{key}") is True for s, value in values.items() if isinstance(s, sp.Symbol)
               for key in DECLARED_PROPERTIES if getattr(s, f"is_{key}"))


_BROKEN = {"=": lambda s: s != 0, "<=": lambda s: s < 0, "<": lambda s: s <= 0,
           ">=": lambda s: s > 0, ">": lambda s: s >= 0, "!=": lambda s: s == 0}


def find_counterexample(lhs: sp.Basic, relation: str, rhs: sp.Basic, ctx: Context,
                        tries: int = 12, seed: int = 0) -> str | None:
    """An exact counterexample: a point where every hypothesis and obligation holds exactly and the
    relation fails exactly (``rhs - lhs`` has the wrong exact sign)."""
    rng = random.Random(seed)
    is_matrix = isinstance(lhs, sp.MatrixBase) or isinstance(rhs, sp.MatrixBase)
    if is_matrix and (not isinstance(lhs, sp.MatrixBase) or not isinstance(rhs, sp.MatrixBase)
                      or lhs.shape != rhs.shape or relation != "="):
        return None
    diff = (sp.Matrix(rhs) - sp.Matrix(lhs)) if is_matrix else (rhs - lhs)
    conditions = list(ctx.hypotheses) + list(ctx.obligations)
    if any(_has_free_atom(x) for x in (diff, *conditions)):
        return None  # numbers put in for r_1, g_1 inside E[...] would evaluate E[X] as one sample of X
    defined = _definitions(conditions)
    for _ in range(tries):
        inst = _attempt(lambda: _instantiate_defined([diff, *conditions], defined, rng, ctx))
        if inst is None:
            continue
        (x, *closed), values = inst
        if _has_unassignable([x, *closed]):
            return None
        if not _has_declared_properties(values):
            continue  # n = 1 is no counterexample for an n declared even
        if not all(_truth(c) is True for c in closed):
            continue
        entries = list(x) if isinstance(x, sp.MatrixBase) else [x]
        signs = [_exact_sign(entry) for entry in entries]
        if relation == "=":
            broken = any(s is not None and s != 0 for s in signs)
        elif relation == "!=":
            broken = all(s == 0 for s in signs)
        else:
            broken = signs[0] is not None and _BROKEN[relation](signs[0])
        if broken:
            shown = ", ".join(f"{k} = {sp.sstr(val)}" for k, val in list(values.items())[:8])
            value = entries[0] if len(entries) == 1 else x
            return f"counterexample at {shown}: right - left = {sp.sstr(sp.N(value, 8))}"
    return None


def find_witness(conditions: Sequence[sp.Basic], ctx: Context, tries: int = 12, seed: int = 0) -> str | None:
    """A point where every condition holds exactly (the assumptions are then consistent).

    Equations whose one side is a lone symbol (``S_2 = sum ...``, ``R = k + m``) are solved by
    assigning that symbol the value of the other side, so definitions do not defeat the search.
    """
    rng = random.Random(seed)
    conditions = list(conditions)
    if not conditions:
        return "no conditions"
    defined = _definitions(conditions, free_atoms=True)
    for _ in range(tries):
        inst = _attempt(lambda: _instantiate_defined(conditions, defined, rng, ctx))
        if inst is None:
            continue
        closed, values = inst
        if _has_unassignable(closed):
            return None  # an operator no random value can instantiate (an expectation): no witness this way
        if not _has_declared_properties(values):
            continue
        if all(_truth(c) is True for c in closed):
            return ", ".join(f"{k} = {sp.sstr(val)}" for k, val in list(values.items())[:8])
    return None


def _has_free_atom(e: sp.Basic) -> bool:
    """Whether ``e`` holds an application of an operator that declares ``free_atom`` (an expectation)."""
    if isinstance(e, sp.MatrixBase):
        return any(_has_free_atom(entry) for entry in e)
    return isinstance(e, sp.Basic) and any(is_free_atom(node) for node in sp.preorder_traversal(e))


def _has_unassignable(closed: Sequence[sp.Basic]) -> bool:
    """Whether an instantiated expression still holds something that is not a number."""
    return any(isinstance(c, sp.Basic) and not isinstance(c, sp.MatrixBase)
               and (c.free_symbols or c.atoms(sp.Indexed)) for c in closed)


def _definitions(conditions: Sequence[sp.Basic], free_atoms: bool = False) -> dict:
    """Equations with a lone symbol on one side, as symbol -> the other side (solved by assignment).

    With ``free_atoms`` (the consistency witness only), a lone application of an operator that declares
    ``free_atom = True`` (a derivation's expectation, whose only laws are its linearity and the stated
    assumptions) is defined the same way. A definition may mention other defined atoms but never, through
    them, itself. The point found is checked against every condition exactly, so this only guides the search."""
    defined: dict = {}

    def definable(x: sp.Basic) -> bool:
        return isinstance(x, sp.Symbol) or (free_atoms and is_free_atom(x))

    for c in conditions:
        if isinstance(c, sp.Equality):
            for lone, other in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
                if definable(lone) and lone not in defined and not _resolved(other, defined).has(lone):
                    defined[lone] = other
                    break
    return defined


def _resolved(e: sp.Basic, defined: dict) -> sp.Basic:
    """``e`` with the defined atoms replaced until none is left (definitions may mention later ones)."""
    for _ in range(len(defined) + 1):
        new = e.xreplace(defined)
        if new == e:
            return e
        e = new
    return e


def _instantiate_defined(conditions: list, defined: dict, rng: random.Random, ctx: Context):
    """``_instantiate`` with the defined symbols replaced by their definitions first (small values:
    a witness is cheaper to check for small group sizes)."""
    names = list(defined)
    exprs = [_resolved(c, defined) for c in conditions] + [_resolved(defined[s], defined) for s in names]
    inst = _instantiate(exprs, rng, ctx, small=True)
    if inst is None:
        return None
    closed, values = inst
    closed, assigned = closed[:len(conditions)], closed[len(conditions):]
    for symbol, value in zip(names, assigned):
        if isinstance(symbol, sp.Symbol) and not _in_domain(symbol, value):
            return None
        values[symbol] = value
    if not _atoms_agree_at_point(names, assigned, values):
        return None
    return closed, values


def _atoms_agree_at_point(names: list, assigned: list, values: dict) -> bool:
    """The values given to expectations must be values of those expectations at the point: E[r_i] and E[r_1]
    are one number once i = 1, and E[r_1^n] is E[1] = 1 once n = 0. Each atom is taken at the point's
    symbol values; one that then evaluates must get that value, and two that become the same atom one value."""
    at_point = {k: v for k, v in values.items() if isinstance(k, sp.Symbol)}
    seen: dict = {}
    for atom, value in zip(names, assigned):
        if isinstance(atom, sp.Symbol):
            continue
        here = doit(atom.xreplace(at_point))
        if not is_free_atom(here):
            if _exact_sign(sp.sympify(here) - value) != 0:
                return False
            continue
        if here in seen and _exact_sign(seen[here] - value) != 0:
            return False
        seen[here] = value
    return True


def _in_domain(symbol: sp.Symbol, value: sp.Basic) -> bool:
    """Whether a closed value satisfies the symbol's declared domain (integer, sign), exactly."""
    sign = _exact_sign(value)
    if sign is None or (symbol.is_integer and not value.is_Integer):
        return False
    checks = {"positive": sign > 0, "nonnegative": sign >= 0, "negative": sign < 0, "nonpositive": sign <= 0,
              "nonzero": sign != 0}
    return all(ok for key, ok in checks.items() if getattr(symbol, f"is_{key}"))


