"""Exact values of terms at a point, written independently of the kernel's rules.

A point gives numbers to symbols, entries to indexed families, Lambdas to functions and finite
distributions to expectation operators. A sign is decided exactly for rationals, by a 60-digit evaluation
when the number is not within 1e-40 of 0, by its minimal polynomial for an algebraic 0, and by SymPy's zero
test for a transcendental number within 1e-40 of 0 (only a value certainly nonzero can refute). Sums and products are added and multiplied out term by term,
matrices entry by entry, expectations by enumerating the distribution's outcomes, a derivative by
differentiating the instantiated function (SymPy's ``diff`` on an explicit expression) and evaluating it at
the point; nothing goes through a closed form of a sum. Raises ``NoValue`` where a term has no value there
(a division by zero, a log of a non-positive number, a reversed range, a missing entry).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import AppliedUndef

from grpo_verify.proof.operators import Expectation, MatrixRank, SquareMatrix


class NoValue(Exception):
    """No value could be computed here (a missing value, an undecidable sign)."""


class Undefined(NoValue):
    """The term has no value at the point: a division by zero, a log of a non-positive number, ..."""


def _number(x):
    x = sp.sympify(x)
    if x.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I) or x.free_symbols:
        if x.free_symbols:
            raise NoValue(f"{x} is not a number")
        raise Undefined(f"{x} is not a real number")
    return x


def symbols_of(e) -> set:
    """The free symbols of a term that need values (not indexed families' labels, not bound variables)."""
    if isinstance(e, sp.MatrixBase):
        return set().union(*[symbols_of(x) for x in e])
    e = sp.sympify(e)
    labels = {x.label for x in sp.preorder_traversal(e) if isinstance(x, sp.IndexedBase)}
    return {x for x in e.free_symbols if isinstance(x, sp.Symbol) and x not in labels}


def value(e, point, bound: dict | None = None):
    """The exact value of ``e`` at ``point`` (a ``Point``); ``bound`` maps bound variables to values."""
    bound = bound or {}
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.rows, e.cols, [value(x, point, bound) for x in e])
    if isinstance(e, (int,)):
        return sp.Integer(e)
    if e.is_Number or e in (sp.pi, sp.E):
        return e
    if e in (sp.true, sp.false):
        return e
    if isinstance(e, (sp.Symbol, sp.Dummy)):
        if e in bound:
            return bound[e]
        if e in point.values:
            return point.values[e]
        if point.fill is not None:
            return point.fill("symbol", e)
        raise NoValue(f"no value for {e}")
    if isinstance(e, sp.Indexed):
        index = tuple(int(value(i, point, bound)) for i in e.indices)
        table = point.random.get(e.base) if e.base in point.random else point.families.get(e.base)
        if (table is None or index not in table) and point.fill is not None and e.base not in point.random:
            return point.fill("entry", e, index)
        if table is None or index not in table:
            raise NoValue(f"no value for {e.base}{list(index)}")
        return table[index]
    if isinstance(e, sp.Add):
        return _number(sp.Add(*[value(a, point, bound) for a in e.args]))
    if isinstance(e, sp.Mul):
        return _number(sp.Mul(*[value(a, point, bound) for a in e.args]))
    if isinstance(e, sp.Pow):
        b, x = value(e.base, point, bound), value(e.exp, point, bound)
        if b == 0 and x.is_negative:
            raise Undefined("division by zero")
        if not x.is_Integer and b.is_negative:
            raise Undefined("a real power of a negative number")
        return _number(b ** x)
    if isinstance(e, sp.log):
        u = value(e.args[0], point, bound)
        if not u.is_positive:
            raise Undefined("a logarithm of a non-positive number")
        return sp.log(u)
    if isinstance(e, sp.exp):
        return sp.exp(value(e.args[0], point, bound))
    if isinstance(e, (sp.Sum, sp.Product, Expectation, sp.Derivative, sp.Subs)):
        # the same subterm recurs (a score in every outcome's term): its value at this point, once; a point
        # only gains values as it is filled, so a value once computed stays right
        memo = point.__dict__.setdefault("_memo", {})
        key = (e, tuple(sorted(bound.items(), key=str)))
        if key not in memo:
            memo[key] = _loop(e, point, bound) if isinstance(e, (sp.Sum, sp.Product)) else \
                _expectation(e, point, bound) if isinstance(e, Expectation) else _derivative(e, point, bound)
        return memo[key]
    if isinstance(e, sp.KroneckerDelta):
        a, b = (value(x, point, bound) for x in e.args)
        return sp.Integer(1) if sign(a - b) == 0 else sp.Integer(0)
    if isinstance(e, (sp.Min, sp.Max)):
        vals = [value(a, point, bound) for a in e.args]
        return (min if isinstance(e, sp.Min) else max)(vals, key=lambda v: sp.N(v, 60))
    if isinstance(e, sp.Abs):
        v = value(e.args[0], point, bound)
        return -v if sp.N(v, 60) < 0 else v
    if isinstance(e, sp.Piecewise):
        for branch, cond in e.args:
            if truth(cond, point, bound):
                return value(branch, point, bound)
        raise NoValue("no branch of a Piecewise applies")
    if isinstance(e, sp.binomial):
        n, k = (value(x, point, bound) for x in e.args)
        if not (n.is_Integer and k.is_Integer):
            raise Undefined("a binomial of non-integers")
        return sp.binomial(n, k)
    if isinstance(e, AppliedUndef):
        f = point.functions.get(e.func)
        if f is None and point.fill is not None:
            f = point.fill("function", e)
        if f is None:
            raise NoValue(f"no value for the function {e.func}")
        return value(f(*[value(a, point, bound) for a in e.args]), point)
    if isinstance(e, MatrixRank):
        m = e.args[0]
        if isinstance(m, SquareMatrix):
            n = int(value(m.args[0], point, bound))
            lam = m.args[1]
            m = sp.ImmutableMatrix(n, n, lambda a, b: lam(a + 1, b + 1))
        return sp.Integer(rank(value(m, point, bound)))
    if isinstance(e, sp.Determinant):
        return _number(sp.Matrix(value(e.args[0], point, bound)).det(method="berkowitz"))
    if hasattr(e, "computation"):
        return value(e.built(), point, bound)
    raise NoValue(f"the evaluator has no value for {type(e).__name__}")


def truth(f, point, bound=None) -> bool:
    """The truth of a formula at the point (exactly, or NoValue where it cannot be decided)."""
    bound = bound or {}
    if f in (sp.true, True):
        return True
    if f in (sp.false, False):
        return False
    if isinstance(f, sp.And):
        return all(truth(a, point, bound) for a in f.args)
    if isinstance(f, sp.Or):
        return any(truth(a, point, bound) for a in f.args)
    if isinstance(f, sp.Not):
        return not truth(f.args[0], point, bound)
    if isinstance(f, sp.Implies):
        return (not truth(f.args[0], point, bound)) or truth(f.args[1], point, bound)
    if isinstance(f, sp.Rel):
        d = sign(value(f.lhs, point, bound) - value(f.rhs, point, bound))
        return {sp.Eq: d == 0, sp.Ne: d != 0, sp.Lt: d < 0, sp.Le: d <= 0, sp.Gt: d > 0, sp.Ge: d >= 0}[type(f)]
    raise NoValue(f"not a formula: {f}")


def sign(x) -> int:
    """The exact sign of a closed number (NoValue if it cannot be decided)."""
    x = _number(x)
    if x.is_Rational:
        return int(bool(x > 0)) - int(bool(x < 0))
    v = sp.N(x, 60)
    if abs(v) > sp.Rational(1, 10 ** 40):
        return 1 if v > 0 else -1
    try:
        t = sp.Dummy("t")
        if sp.minimal_polynomial(x, t) == t:
            return 0
    except Exception:  # noqa: BLE001
        pass
    try:  # a transcendental zero (log 8 - 3 log 2): SymPy's zero test, after the 40-digit check above
        if sp.expand_log(x, force=True).equals(0) is True:
            return 0
    except Exception:  # noqa: BLE001
        pass
    raise NoValue(f"the sign of {x} could not be decided")


def _loop(e, point, bound):
    *inner, (v, lo, hi) = e.limits  # the last limit is the outermost
    body = type(e)(e.function, *inner) if inner else e.function
    lo, hi = int(value(lo, point, bound)), int(value(hi, point, bound))
    if hi < lo - 1:
        raise Undefined("a reversed range")
    if hi - lo > 5000:
        raise NoValue("a range too long to write out")
    total = sp.Integer(0) if isinstance(e, sp.Sum) else sp.Integer(1)
    for k in range(lo, hi + 1):
        x = value(body, point, {**bound, v: sp.Integer(k)})
        total = total + x if isinstance(e, sp.Sum) else total * x
    return _number(total)


def _expectation(e, point, bound):
    outcomes = point.distributions.get(type(e))
    if outcomes is None and getattr(type(e), "single", None) is None:
        # one rollout's operator shares the distribution of an i.i.d. operator over the same families
        outcomes = next((d for op, d in point.distributions.items() if getattr(op, "single", None) is type(e)), None)
    if outcomes is None and point.fill is not None:
        outcomes = point.fill("distribution", e)
    if outcomes is None:
        raise NoValue(f"no distribution for {type(e).__name__}")
    if hasattr(outcomes, "joint"):
        outcomes = _marginal(e, outcomes, point, bound)
    total = sp.Integer(0)
    for probability, values in outcomes:
        here = point.with_random(values)
        total += probability * value(e.args[0], here, bound)
    return _number(total)


def _marginal(e, dist, point, bound):
    """The outcomes of the rollouts the body reaches (i.i.d. draws: the others integrate out); all of them
    when an index is bound inside the body."""
    bases = set(e.random)
    indices = set()
    for node in sp.preorder_traversal(e.args[0]):
        if isinstance(node, (sp.Sum, sp.Product)) and any(isinstance(n, sp.Indexed) and n.base in bases
                                                          for n in sp.preorder_traversal(node)):
            return dist.joint(e.random)
        if isinstance(node, sp.Indexed) and node.base in bases:
            try:
                indices.add(tuple(int(value(i, point, bound)) for i in node.indices))
            except NoValue:
                return dist.joint(e.random)
    import itertools

    rollouts = sorted(indices)
    out = []
    for combo in itertools.product(range(len(dist.outcomes)), repeat=len(rollouts)):
        p = sp.Mul(*[dist.outcomes[o][0] for o in combo])
        tables = {b: {k: dist.outcomes[o][1][b] for k, o in zip(rollouts, combo)} for b in e.random}
        out.append((p, tables))
    return out


def _explicit(e, point, bound, keep: set):
    """``e`` with everything but the variables in ``keep`` given its value (sums written out), for
    differentiation in ``keep``."""
    if isinstance(e, (sp.Symbol, sp.Dummy)) and e in keep:
        return e
    if not (set(getattr(e, "free_symbols", set())) & keep) and not any(
            isinstance(n, sp.Indexed) and n.base in point.varying for n in sp.preorder_traversal(e)):
        return value(e, point, bound)
    if isinstance(e, sp.Indexed) and e.base in point.varying:
        index = tuple(int(value(i, point, bound)) for i in e.indices)
        return point.varying[e.base][index]
    if isinstance(e, (sp.Sum, sp.Product)):
        *inner, (v, lo, hi) = e.limits
        body = type(e)(e.function, *inner) if inner else e.function
        lo, hi = int(value(lo, point, bound)), int(value(hi, point, bound))
        terms = [_explicit(body, point, {**bound, v: sp.Integer(k)}, keep) for k in range(lo, hi + 1)]
        return sp.Add(*terms) if isinstance(e, sp.Sum) else sp.Mul(*terms)
    if isinstance(e, AppliedUndef):
        f = point.functions.get(e.func)
        if f is None and point.fill is not None:
            f = point.fill("function", e)
        if f is None:
            raise NoValue(f"no value for the function {e.func}")
        return f(*[_explicit(a, point, bound, keep) for a in e.args])
    if isinstance(e, (sp.Symbol, sp.Dummy)):
        return value(e, point, bound)
    if isinstance(e, (sp.Derivative, sp.Subs)):
        raise NoValue("a nested derivative")
    args = [_explicit(a, point, bound, keep) for a in e.args]
    return e.func(*args)


def _derivative(e, point, bound):
    if isinstance(e, sp.Subs):
        inner = dict(bound)
        for v, p in zip(e.variables, e.point):
            inner[v] = value(p, point, bound)
        expr = e.expr
        if not isinstance(expr, sp.Derivative):
            return value(expr, point, inner)
        return _derivative_at(expr, point, inner)
    return _derivative_at(e, point, bound)


def _derivative_at(e, point, bound):
    variables = [v for v, _ in e.variable_count]
    if isinstance(variables[0], sp.Indexed):
        base = variables[0].base
        index = tuple(int(value(i, point, bound)) for i in variables[0].indices)
        try:  # evaluating once fills the entries the function reads
            value(e.expr, point, bound)
        except NoValue:
            pass
        table = point.families.get(base)
        if not isinstance(table, dict) or not table:
            raise NoValue(f"no entries of {base} to differentiate in")
        table = dict(table)
        xs = {k: sp.Dummy(f"x{k}") for k in table}
        here = point.with_varying(base, xs)
        f = _explicit(e.expr, here, bound, set(xs.values()))
        if index not in xs:
            raise NoValue(f"no entry {index} of {base}")
        x = xs[index]
        try:
            df = sp.diff(f, *[(x, n) for _v, n in e.variable_count])
        except Exception as exc:  # noqa: BLE001 - SymPy cannot differentiate it (a kink)
            raise NoValue(f"no derivative: {exc}") from exc
        return _number(df.xreplace({xs[k]: table[k] for k in xs}))
    keep = {v: sp.Dummy(str(v)) for v in dict.fromkeys(variables)}
    at = {v: value(v, point, bound) for v in keep}
    inner = {k: w for k, w in bound.items() if k not in keep}
    f = _explicit(e.expr.xreplace(keep), point, inner, set(keep.values()))
    try:
        df = sp.diff(f, *[(keep[v], n) for v, n in e.variable_count])
    except Exception as exc:  # noqa: BLE001 - SymPy cannot differentiate it (a kink)
        raise NoValue(f"no derivative: {exc}") from exc
    at_point = {keep[v]: at[v] for v in keep}
    if df.has(sp.Derivative, sp.Subs):
        raise NoValue("no derivative in closed form here")
    for kink in df.atoms(sp.Heaviside, sp.sign):  # a kink hit exactly: no derivative there
        if sign(kink.args[0].xreplace(at_point)) == 0:
            raise NoValue("a derivative at a kink")
    return _number(df.xreplace(at_point))


def rank(m) -> int:
    """Exact rank of a matrix of closed numbers, by elimination with exact zero tests."""
    rows = [list(m.row(n)) for n in range(m.rows)]
    r = 0
    for col in range(m.cols):
        pivot = next((n for n in range(r, len(rows)) if sign(rows[n][col]) != 0), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        for n in range(r + 1, len(rows)):
            factor = rows[n][col] / rows[r][col]
            rows[n] = [sp.expand(a - factor * b) for a, b in zip(rows[n], rows[r])]
        r += 1
    return r
