"""Points at which a result is evaluated, and the proposal of points that satisfy its assumptions.

Not trusted: a proposal is only a candidate. The evaluator checks each against the assumptions with its
own exact evaluation (``values``); the kernel checks a model with its own rules (``theorem.has_model``).

A point is filled lazily: a symbol, an entry of an indexed family or a function that an evaluation needs
and the point lacks gets a random value of its declared type (a rational; a constant function); an
expectation operator gets an i.i.d. distribution of two outcomes per rollout. Equations of the form
``symbol = expression`` or ``entry = expression`` define their left side; a derivation can give a hint
(``Result(model=...)``): a dict, or a function of the chosen sizes returning one, with values for symbols,
``{index: value}`` tables (or functions of the index) for indexed families, Lambdas for functions, and
``Distribution`` objects for expectation operators.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

import sympy as sp
from sympy.core.function import AppliedUndef, UndefinedFunction

from grpo_verify.evaluation.values import NoValue, symbols_of, truth, value
from grpo_verify.proof.operators import Expectation, IidExpectation


@dataclass
class Distribution:
    """Rollouts drawn i.i.d. from ``outcomes``: ``[(probability, {family: value}), ...]`` for one rollout;
    ``rollouts`` of them (the joint distribution is the product)."""

    outcomes: list
    rollouts: int

    def joint(self, bases) -> list:
        key = tuple(bases)
        cache = self.__dict__.setdefault("_joint_cache", {})
        if key not in cache:
            cache[key] = self._joint(bases)
        return cache[key]

    def _joint(self, bases) -> list:
        out = []
        for combo in itertools.product(range(len(self.outcomes)), repeat=self.rollouts):
            p = sp.Mul(*[self.outcomes[o][0] for o in combo])
            tables = {b: {(k + 1,): self.outcomes[o][1][b] for k, o in enumerate(combo)} for b in bases}
            out.append((p, tables))
        return out


@dataclass
class Point:
    values: dict = field(default_factory=dict)
    families: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)
    distributions: dict = field(default_factory=dict)  # operator class -> [(p, {base: {index: value}})]
    random: dict = field(default_factory=dict)
    varying: dict = field(default_factory=dict)
    fill: object = None  # called for a missing value (the proposer fills points lazily)

    def with_random(self, tables) -> "Point":
        return Point(self.values, self.families, self.functions, self.distributions, tables, self.varying, self.fill)

    def with_varying(self, base, table) -> "Point":
        return Point(self.values, self.families, self.functions, self.distributions, self.random,
                     {**self.varying, base: table}, self.fill)


def _random_value(x, rng: random.Random, scale: int = 4, bounds: dict | None = None, attempt: int | None = None):
    """A random rational of ``x``'s declared type (integers up to ``scale``, reals inside the constant bounds
    the assumptions give, when there are some: the first attempts take their ends and middle in turn)."""
    lo, hi = (bounds or {}).get(x, (None, None))
    if (lo is not None or hi is not None) and not x.is_integer:
        if lo is None and (x.is_positive or x.is_nonnegative):
            lo = sp.Integer(0)
        if hi is None and (x.is_negative or x.is_nonpositive):
            hi = sp.Integer(0)
        lo = lo if lo is not None else hi - 5
        hi = hi if hi is not None else lo + 5
        special = [v for v in (lo, hi, (lo + hi) / 2, sp.Rational(1, 2), 0, 1, -1) if lo <= v <= hi and _fits(x, v)]
        special = list(dict.fromkeys(special))
        if special and attempt is not None and attempt < len(special):
            return sp.Integer(1) * special[attempt]
        if special and rng.random() < 0.4:  # the ends, the middle and small numbers: where equalities and kinks sit
            return sp.Integer(1) * rng.choice(special)
        return lo + (hi - lo) * sp.Rational(rng.randint(1, 98), 99)
    if not x.is_integer and rng.random() < 0.25:
        special = [v for v in (0, 1, -1, sp.Rational(1, 2), 2) if _fits(x, v)]
        if special:
            return sp.Integer(1) * rng.choice(special)
    v = _random_integer_like(x, rng, scale)
    if x.is_even and v.is_odd or x.is_odd and v.is_even:
        v += 1
    return v


def _fits(x, v) -> bool:
    return not ((x.is_positive and v <= 0) or (x.is_negative and v >= 0) or (x.is_nonnegative and v < 0)
                or (x.is_nonpositive and v > 0) or (x.is_nonzero and v == 0))


def _random_integer_like(x, rng: random.Random, scale: int):
    integer = x.is_integer
    v = sp.Integer(rng.randint(1, scale)) if integer else sp.Rational(rng.randint(1, 40), rng.randint(1, 12))
    if x.is_positive:
        return v
    if x.is_nonnegative:
        return v - 1 if integer else v
    if x.is_negative:
        return -v
    if x.is_nonpositive:
        return 1 - v if integer else -v
    if x.is_nonzero:
        return v if rng.random() < 0.5 else -v
    return v * rng.choice((1, -1)) - (1 if integer and rng.random() < 0.3 else 0)


def real_bounds(formulas) -> dict:
    """Constant bounds (lo, hi) of real symbols, from the assumptions (to draw points inside them)."""
    out: dict = {}
    for f in formulas:
        for g in sp.And.make_args(f):
            if not isinstance(g, (sp.Ge, sp.Gt, sp.Le, sp.Lt)):
                continue
            big, small = (g.lhs, g.rhs) if isinstance(g, (sp.Ge, sp.Gt)) else (g.rhs, g.lhs)
            if isinstance(big, sp.Symbol) and small.is_Rational and not big.is_integer:
                lo, hi = out.get(big, (None, None))
                out[big] = (small if lo is None else max(lo, small), hi)
            elif isinstance(small, sp.Symbol) and big.is_Rational and not small.is_integer:
                lo, hi = out.get(small, (None, None))
                out[small] = (lo, big if hi is None else min(hi, big))
    return {s: b for s, b in out.items() if b[0] is None or b[1] is None or b[0] < b[1]}


def lower_bounds(formulas) -> dict:
    """Constant lower bounds ``s >= c`` (``s > c``) on integer symbols, from the assumptions."""
    out: dict = {}
    for f in formulas:
        for g in sp.And.make_args(f):
            s = c = None
            if isinstance(g, (sp.Ge, sp.Gt)) and isinstance(g.lhs, sp.Symbol) and g.rhs.is_number:
                s, c = g.lhs, g.rhs + (1 if isinstance(g, sp.Gt) and g.lhs.is_integer else 0)
            elif isinstance(g, (sp.Le, sp.Lt)) and isinstance(g.rhs, sp.Symbol) and g.lhs.is_number:
                s, c = g.rhs, g.lhs + (1 if isinstance(g, sp.Lt) and g.rhs.is_integer else 0)
            if s is not None and s.is_integer:
                out[s] = max(out.get(s, -sp.oo), sp.ceiling(c))
    return out


def declared_lower_bound(s) -> int | None:
    if s.is_positive:
        return 1
    if s.is_nonnegative:
        return 0
    return None


class Filler:
    """Builds a point lazily from a hint and random choices, resolving defining equations."""

    def __init__(self, hint: dict, rng: random.Random, equations, sizes: dict, identities=(), scale: int = 4,
                 bounds: dict | None = None, attempt: int | None = None):
        self.rng = rng
        self.attempt = attempt
        self.scale = scale
        self.bounds = bounds or {}
        self.point = Point()
        self.fixed = set()
        for key, v in {**hint, **sizes}.items():
            self._set(key, v)
            self.fixed.add(key)
        self.point.fill = self._provide
        self.equations = [eq for eq in equations if isinstance(eq, sp.Eq)]
        self.equations += [eq for eq in identities if isinstance(eq, sp.Eq)]

    def _set(self, key, v):
        if isinstance(key, sp.IndexedBase):
            self.point.families[key] = _table(v)
        elif isinstance(key, UndefinedFunction):
            self.point.functions[key] = v
        elif isinstance(key, type) and issubclass(key, Expectation):
            self.point.distributions[key] = v
        else:
            self.point.values[key] = sp.sympify(v)

    def resolve(self, passes: int = 4):
        """Apply the defining equations until nothing changes."""
        for eq in self.equations:  # f(x, y) = expression: f is that expression
            for target, source in ((eq.lhs, eq.rhs), (eq.rhs, eq.lhs)):
                if isinstance(target, AppliedUndef) and target.func not in self.fixed and all(
                        isinstance(a, sp.Symbol) for a in target.args) and len(set(target.args)) == len(target.args):
                    self.point.functions[target.func] = sp.Lambda(target.args, source)
                    self.fixed.add(target.func)
                    break
        for _ in range(passes):
            changed = False
            for eq in self.equations:
                changed |= self._solve(eq)
                for target, source in ((eq.lhs, eq.rhs), (eq.rhs, eq.lhs)):
                    key = self._key(target)
                    if key is None or key in self.fixed:
                        continue
                    try:
                        v = self.value(source)
                        current = self.value(target) if self._known(target) else None
                    except NoValue:
                        continue
                    if current is None or current != v:
                        self._assign(target, v)
                        changed = True
                    break
            if not changed:
                return

    def _solve(self, eq) -> bool:
        """An equation in one free unknown of integer or rational value, solved for it (a proposal only)."""
        unknowns = sorted((x for x in symbols_of(eq) if x not in self.fixed and x not in self.point.values),
                          key=str)
        if len(unknowns) != 1 or any(isinstance(n, (sp.Sum, sp.Product, AppliedUndef, sp.Indexed, Expectation,
                                                    sp.Derivative, sp.Subs)) for n in sp.preorder_traversal(eq)):
            return False
        x = unknowns[0]
        others = {y: self.value(y) for y in symbols_of(eq) if y != x}
        try:
            solutions = sp.solve(sp.Eq(eq.lhs, eq.rhs).xreplace(others), x)
        except Exception:  # noqa: BLE001
            return False
        for v in solutions:
            if v.is_Rational and (not x.is_integer or v.is_Integer):
                self.point.values[x] = v
                return True
        return False

    def _key(self, target):
        if isinstance(target, sp.Symbol):
            return target
        if isinstance(target, sp.Indexed) and all(i.is_Integer for i in target.indices):
            return target
        return None

    def _known(self, target) -> bool:
        if isinstance(target, sp.Symbol):
            return target in self.point.values
        return target.base in self.point.families and target.indices in self.point.families[target.base]

    def _assign(self, target, v):
        if isinstance(target, sp.Symbol):
            self.point.values[target] = v
        else:
            self.point.families.setdefault(target.base, {})[target.indices] = v

    def value(self, e, bound=None):
        return value(e, self.point, bound)

    def truth(self, f):
        return truth(f, self.point)

    def _provide(self, kind, e, index=None):
        """A missing value, drawn at random (the point is filled lazily)."""
        if kind == "symbol":
            self.point.values[e] = _random_value(e, self.rng, self.scale, self.bounds, self.attempt)
            return self.point.values[e]
        if kind == "entry":
            v = _random_value(e, self.rng, self.scale)
            table = self.point.families.setdefault(e.base, {})
            if not isinstance(table, dict):
                raise NoValue(f"no value for {e.base}{list(index)}")
            table[index] = v
            return v
        if kind == "function":
            xs = [sp.Dummy() for _ in e.args]
            self.point.functions[e.func] = sp.Lambda(tuple(xs), _random_value(e, self.rng))
            return self.point.functions[e.func]
        operator = type(e)
        # an i.i.d. operator and its one-rollout operator share one distribution
        shared = self.point.distributions.get(getattr(operator, "single", None)) or next(
            (d for op, d in self.point.distributions.items() if getattr(op, "single", None) is operator), None)
        self.point.distributions[operator] = shared if isinstance(shared, Distribution) else \
            self._distribution(operator, e)
        single = getattr(operator, "single", None)
        if single is not None and single not in self.point.distributions:
            self.point.distributions[single] = self.point.distributions[operator]
        return self.point.distributions[operator]

    def _distribution(self, operator, e):
        sizes = [int(v) for v in self.point.values.values() if v.is_Integer and 0 < v <= 12]
        rollouts = max([2] + sizes)
        p = sp.Rational(self.rng.randint(1, 9), 10)
        outcomes = [(p, {}), (1 - p, {})]
        for _prob, values in outcomes:
            for base in operator.random:
                values[base] = _random_value(base[1], self.rng)
        return Distribution(outcomes, rollouts)


def _table(v):
    if isinstance(v, dict):
        return {(k if isinstance(k, tuple) else (k,)): sp.sympify(x) for k, x in v.items()}
    return v


def hint_of(result, sizes: dict) -> dict:
    hint = result.model
    if hint is None:
        return {}
    if callable(hint):
        hint = hint(dict(sizes))
    out = {}
    for key, v in dict(hint).items():
        out[key] = v
    return out


_ = IidExpectation
