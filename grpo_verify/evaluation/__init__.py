"""The independent evaluator: every result checked exactly at small sizes, with no code shared with the
kernel's rules.

For each integer symbol of a result (a group size, an index, a count) every value from its lower bound
(from the assumptions or its declared sign) up to the bound + 6 is tried, and further values (up to
``EXTRA``) where some of those admit no point (a bound the assumptions set through another symbol), so
that seven admissible sizes are reached; the other symbols are drawn at
random (rationals of their declared types, indexed entries, constant functions, two-outcome i.i.d.
distributions, or a derivation's hint), the defining equations resolved. A point is *admissible* when
every assumption holds there exactly (an assumption for every index at each index of its range, an
equation for every value of a variable as an identity in it). At an admissible point both sides are
evaluated exactly (``values``: sums term by term, matrices entry by entry with an exact rank,
expectations by enumeration, no closed form of a sum) and compared; a statement that fails, or is
undefined, at an admissible point is refuted, and the point is reported.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import sympy as sp

from grpo_verify.evaluation.points import (Distribution, Filler, Point, declared_lower_bound, hint_of, lower_bounds,
                                           real_bounds)
from grpo_verify.evaluation.values import NoValue, Undefined, sign, symbols_of, value

SPAN = 6  # sizes from the lower bound to the bound + SPAN
EXTRA = 3  # sizes beyond the bound + SPAN tried in place of sizes that admitted no point
TRIES = 3  # random points per size


@dataclass
class Verdict:
    refuted: bool
    text: str
    checked: int = 0
    sizes: dict = field(default_factory=dict)  # symbol -> sorted values at which an admissible point was found
    points: list = field(default_factory=list)  # admissible points (for the kernel's model check)
    links: dict = field(default_factory=dict)  # step number -> where that link fails (the statement may hold)
    planned: dict = field(default_factory=dict)  # symbol -> the sizes tried (lower bound .. bound + SPAN, or more)
    complete: bool = True  # False: stopped after its first points (``first_points``); not a sweep of the sizes


def _formulas(result):
    """(pointwise conditions, defining equations, for-every equations, for-every-index conditions)."""
    conditions, equations, identities, quantified = [], [], [], []
    for a in result.assumptions:
        if a.for_all is not None:
            quantified.append((a.for_all, sp.sympify(a.condition)))
            continue
        if a.condition is not None:
            conditions.append(sp.sympify(a.condition))
        if a.domain is not None:
            x, domain = a.domain
            conditions.append(domain.as_relational(x))
        if a.positive is not None:
            conditions.append(sp.Gt(a.positive, 0))
        if a.equation is not None:
            eq = sp.Eq(*a.equation, evaluate=False)
            (identities if a.for_every else equations).append((eq, tuple(a.for_every)))
    return conditions, equations, identities, quantified


def _statement_symbols(result, formulas):
    exprs = [result.lhs, result.rhs] + list(formulas)
    found = set()
    for e in exprs:
        found |= symbols_of(e)
    return sorted((s for s in found if s.is_integer), key=str)


def _admissible(filler: Filler, conditions, equations, identities, quantified) -> bool:
    try:
        for f in conditions:
            if f is sp.true:
                continue
            if not filler.truth(f):
                return False
        for eq, _ in equations:
            if not filler.truth(eq):
                return False
        for (v, lo, hi), f in quantified:
            lo, hi = int(filler.value(lo)), int(filler.value(hi))
            for k in range(lo, hi + 1):
                if not filler.truth(f.xreplace({v: sp.Integer(k)})):
                    return False
        for eq, variables in identities:
            if not _identity(filler, eq, variables):
                return False
        return all(_declared(x, v) for x, v in filler.point.values.items())
    except NoValue:
        return False


def _declared(x, v) -> bool:
    """Whether the value ``v`` has ``x``'s declared type (checked again after the equations are solved)."""
    if not isinstance(x, sp.Symbol) or not v.is_number:
        return True
    if x.is_integer and not v.is_integer:
        return False
    return not ((x.is_positive and sign(v) <= 0) or (x.is_negative and sign(v) >= 0) or (x.is_nonnegative and sign(v) < 0)
                or (x.is_nonpositive and sign(v) > 0) or (x.is_nonzero and sign(v) == 0)
                or (x.is_even and not v.is_even) or (x.is_odd and not v.is_odd))


def _identity(filler: Filler, eq, variables) -> bool:
    """An equation for every value of ``variables``, checked at five values of them."""
    rng = random.Random(7)
    for _ in range(5):
        saved = {v: filler.point.values.get(v) for v in variables}
        for v in variables:
            filler.point.values[v] = sp.Rational(rng.randint(-30, 30), rng.randint(1, 7))
        filler.point.__dict__.pop("_memo", None)  # values computed at other values of the variables
        try:
            ok = filler.truth(eq)
        finally:
            filler.point.__dict__.pop("_memo", None)
            for v, x in saved.items():
                if x is None:
                    filler.point.values.pop(v, None)
                else:
                    filler.point.values[v] = x
        if not ok:
            return False
    return True


def _plans(symbols, bounds, listed=None):
    """Groups of size assignments: for each integer symbol, its lower bound .. bound + SPAN + EXTRA (the others
    free), of the declared parity, of which the first SPAN + 1 that admit a point are checked; a result checked
    value by value only at its listed values (every one)."""
    if listed is not None:
        return [([{listed.symbol: sp.Integer(v)} for v in listed.values], len(listed.values))]
    groups = [([{}], 1)]
    for s in symbols:
        b = bounds.get(s, declared_lower_bound(s))
        b = int(b) if b is not None and b != -sp.oo else -2
        sizes = [v for v in range(b, b + SPAN + EXTRA + 1)
                 if not (s.is_even and v % 2) and not (s.is_odd and not v % 2)]
        groups.append(([{s: sp.Integer(v)} for v in sizes], len([v for v in sizes if v <= b + SPAN])))
    return groups


def _compare(lhs, relation, rhs) -> bool:
    if isinstance(lhs, sp.MatrixBase) or isinstance(rhs, sp.MatrixBase):
        if not (isinstance(lhs, sp.MatrixBase) and isinstance(rhs, sp.MatrixBase)) or lhs.shape != rhs.shape:
            return False
        return all(sign(a - b) == 0 for a, b in zip(lhs, rhs)) if relation == "=" else False
    d = sign(lhs - rhs)
    return {"=": d == 0, "!=": d != 0, "<": d < 0, "<=": d <= 0, ">": d > 0, ">=": d >= 0}[relation]


def _describe(point: Point) -> str:
    parts = [f"{k} = {sp.sstr(v)}" for k, v in sorted(point.values.items(), key=lambda kv: str(kv[0]))
             if not str(k).startswith("_")]
    for base, table in point.families.items():
        if isinstance(table, dict) and len(table) <= 8:
            parts.append(f"{base} = " + ", ".join(f"{list(k)}: {sp.sstr(v)}" for k, v in sorted(table.items())))
    return "; ".join(parts)[:400]


_CACHE: dict = {}


def evaluate(result, seed: int = 0, first_points: int | None = None) -> Verdict:
    """Check ``result`` at small sizes (see the module docstring). With ``first_points``, stop once that many
    admissible points held (the same points, in the same order, that the full sweep starts with, the links
    checked at them included): ``complete`` is then False and nothing is said of the other sizes."""
    key = (id(result), seed, first_points)
    if key in _CACHE and _CACHE[key][0] is result:
        return _CACHE[key][1]
    verdict = _evaluate(result, seed, first_points)
    _CACHE[key] = (result, verdict)
    return verdict


def _evaluate(result, seed: int, first_points: int | None = None) -> Verdict:
    conditions, equations, identities, quantified = _formulas(result)
    all_formulas = conditions + [e for e, _ in equations + identities] + [f for _, f in quantified]
    symbols = _statement_symbols(result, all_formulas)
    bounds = lower_bounds(conditions)
    intervals = real_bounds(conditions)
    rng = random.Random(seed)
    checked, sizes, points, links = 0, {s: set() for s in symbols}, [], {}
    groups = _plans(symbols, bounds, result.for_each or result.fallback)
    plans = [(plan, quota, n) for group, quota in groups for n, plan in enumerate(group)]
    wanted = TRIES if len(plans) > 1 else 3 * TRIES  # without sizes to vary, more points of the real symbols
    reached, tried = 0, []
    for plan, quota, n in plans:
        reached = 0 if n == 0 else reached
        if reached >= quota:
            continue  # this symbol's sizes are done
        tried.append(plan)
        found = checked_here = 0
        for attempt in range(wanted * 4):
            if found >= wanted:
                break
            scale = max([4] + [int(v) + 3 for v in plan.values()])
            filler = Filler(hint_of(result, plan), random.Random(rng.random()),
                            [e for e, _ in equations] + [c for c in conditions if isinstance(c, sp.Eq)], plan,
                            [e for e, _ in identities], scale, intervals, attempt)
            filler.resolve()
            if not _admissible(filler, conditions, equations, identities, quantified):
                continue
            found += 1
            try:
                lhs, rhs = filler.value(result.lhs), filler.value(result.rhs)
                holds = _compare(lhs, result.relation, rhs)
            except Undefined as exc:
                return Verdict(True, f"counterexample: undefined at an admissible point ({exc}): "
                                     f"{_describe(filler.point)}", checked,
                               sizes, points)
            except NoValue:
                continue
            if not holds:
                return Verdict(True, f"counterexample at {_describe(filler.point)}: {sp.sstr(lhs)[:120]} "
                                     f"{result.relation} {sp.sstr(rhs)[:120]} is false", checked, sizes, points)
            checked += 1
            checked_here += 1
            if len(points) < 3:
                _check_links(result, filler, links)
            for s in symbols:
                if s in filler.point.values:
                    sizes[s].add(int(filler.point.values[s]))
            if len(points) < 4:
                points.append(filler.point)
            if first_points is not None and checked >= first_points:
                return Verdict(False, f"holds at the first {checked} admissible points (not a sweep of the sizes)",
                               checked, {s: sorted(v) for s, v in sizes.items()}, points, links, {}, complete=False)
        reached += checked_here > 0
    covered = ", ".join(f"{s} in {_span(sorted(v))}" for s, v in sizes.items() if v)
    text = (f"holds at {checked} admissible points" + (f" ({covered})" if covered else "")) if checked else \
        "no admissible point was found to evaluate at"
    planned = {s: sorted({int(plan[s]) for plan in tried if s in plan}) for s in symbols}
    return Verdict(False, text, checked, {s: sorted(v) for s, v in sizes.items()}, points, links, planned)


def _check_links(result, filler: Filler, failures: dict) -> None:
    """Each link of the chain at an admissible point: a planted false step fails there."""
    previous = filler.value(result.lhs)
    for n, step in enumerate(result.links(), start=1):
        try:
            value_ = filler.value(step.expr)
            if n not in failures and not _compare(previous, step.relation, value_):
                failures[n] = (f"link {n}: counterexample at {_describe(filler.point)}: {sp.sstr(previous)[:80]} "
                               f"{step.relation} {sp.sstr(value_)[:80]} is false")
        except NoValue:
            return
        previous = value_


def _span(values) -> str:
    if values and values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}..{values[-1]}"
    return "{" + ", ".join(map(str, values)) + "}"


_ = (value, Distribution)
