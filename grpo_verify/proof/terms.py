"""The kernel's term language: what it accepts, where variables are bound, canonical forms and
capture-avoiding substitution. Trusted (part of the kernel).

A term is a SymPy expression built from exact numbers, real symbols (declared real, integer or with a
sign), indexed families and functions declared real, and the operators below; anything else (a float,
a complex symbol, ``sin``, ``Mod``, a matrix expression other than an explicit matrix) is refused on entry.
Binders: ``Sum`` and ``Product`` bind their index over an integer range, ``Lambda`` (the entry of a
``SquareMatrix``) its indices over ``1..n``, ``Subs`` its variables, ``Derivative`` its variables (and is
taken at their current values), an expectation binds its random families. ``canon`` renames every bound
variable to a canonical dummy (by binder kind and depth), writes ``Derivative(f, x)`` in a symbol ``x`` as
``Subs(Derivative(f[x:=d], d), d, x)`` and evaluates every other ``Subs`` by substitution, so two terms that
differ only in bound names are equal, and no hypothesis about a free symbol can reach a bound one.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.functions.elementary.piecewise import ExprCondPair

from grpo_verify.proof.operators import Expectation, IidExpectation, MatrixRank, SquareMatrix


class KernelError(ValueError):
    """An input the kernel refuses to reason about (a float, a complex symbol, an unknown operator...)."""


# the declarations a symbol may carry; anything else (even, prime, rational, zero...) is refused, since
# SymPy's constructors would use it and the kernel would not
DECLARATIONS = {"real", "integer", "positive", "negative", "nonnegative", "nonpositive", "nonzero", "commutative",
                "finite", "extended_real", "complex", "hermitian", "imaginary", "infinite"}
NEGATABLE = {"imaginary", "infinite"}  # False for every real symbol already
SIGNS = ("positive", "negative", "nonnegative", "nonpositive", "nonzero")
FUNCTIONS = (sp.exp, sp.log, sp.KroneckerDelta, sp.binomial, sp.Min, sp.Max, sp.Abs, sp.Piecewise)
BINDERS = (sp.Sum, sp.Product, sp.Lambda, sp.Subs, sp.Derivative)


def _declared(x) -> dict:
    orig = getattr(x, "_assumptions_orig", None)
    return dict(orig) if orig is not None else {k: v for k, v in x.assumptions0.items()}


def check(e, where: str) -> None:
    """Refuse anything outside the term language, naming ``where`` it occurs."""
    if isinstance(e, sp.MatrixBase):
        for x in e:
            check(x, where)
        return
    if isinstance(e, (int, bool)) and not isinstance(e, float):
        return
    if not isinstance(e, sp.Basic):
        raise KernelError(f"{where}: {e!r} is not a SymPy expression")
    if free_symbols(e) & set(_CANON.values()):  # they name bound variables: free, one would be captured
        raise KernelError(f"{where}: a free canonical dummy (the kernel's name for a bound variable)")
    _check(e, where)


def _check(e: sp.Basic, where: str) -> None:
    if isinstance(e, sp.Float):
        raise KernelError(f"{where}: the float {e} is not exact (it is rounded); write it as a Rational")
    if isinstance(e, sp.Number):
        if not e.is_Rational:
            raise KernelError(f"{where}: {e} is not a real number")
        return
    if e in (sp.pi, sp.E):
        return
    if isinstance(e, (sp.Symbol, sp.Dummy)):
        # A declaration given as False (even=False, positive=False, ...) makes SymPy build with what it implies,
        # which neither the kernel nor the evaluator reads: refused, like an unknown one.
        bad = {k if v else f"{k}=False" for k, v in _declared(e).items()
               if (v is True and k not in DECLARATIONS) or (v is False and k not in NEGATABLE)}
        if e.is_real is not True:
            raise KernelError(f"{where}: the symbol {e} may be complex (SymPy's default); declare its domain, e.g. "
                              f"Symbol({e.name!r}, real=True)")
        if bad:
            raise KernelError(f"{where}: {e} is declared {', '.join(sorted(bad))}; the kernel knows only real, "
                              "integer and sign declarations")
        return
    if isinstance(e, sp.Indexed):
        if e.is_real is not True:
            raise KernelError(f"{where}: {e} may be complex; declare IndexedBase({e.base}, real=True)")
        for index in e.indices:
            if not integer_valued(index):
                raise KernelError(f"{where}: the index {index} of {e} is not an integer")
            _check(index, where)
        return
    if isinstance(e, AppliedUndef):
        if e.is_real is not True:
            raise KernelError(f"{where}: the function {e.func} may be complex-valued; declare Function("
                              f"{str(e.func)!r}, real=True)")
    elif isinstance(e, (sp.Sum, sp.Product)):
        for limit in e.limits:
            if len(limit) != 3:
                raise KernelError(f"{where}: {e} needs explicit limits (index, lower, upper)")
            v, lo, hi = limit
            if not isinstance(v, sp.Symbol) or v.is_integer is not True:
                raise KernelError(f"{where}: the index {v} of {type(e).__name__} must be a symbol declared integer")
            if v.is_nonzero and not (v.is_positive or v.is_negative):
                raise KernelError(f"{where}: an index declared nonzero (without a sign) cannot run over a range")
            for end in (lo, hi):
                if not integer_valued(end):
                    raise KernelError(f"{where}: the limit {end} of {type(e).__name__} is not an integer")
    elif isinstance(e, (sp.Derivative, sp.Subs)) and any(isinstance(n, (Expectation, IidExpectation))
                                                          for n in sp.preorder_traversal(e.args[0])):
        raise KernelError(f"{where}: an expectation under a derivative or at a point: its distribution may depend on "
                          "the variable, which the kernel does not model")
    elif isinstance(e, sp.Derivative):
        if len({isinstance(v, sp.Indexed) for v, _ in e.variable_count}) > 1:
            raise KernelError(f"{where}: a derivative in both symbols and indexed variables; take them one by one")
        for v, count in e.variable_count:
            if isinstance(v, sp.Indexed):
                ok = v.is_real is True and not (v.base.label.assumptions0.get("integer") or False)
            else:
                ok = isinstance(v, sp.Symbol) and v.is_real is True and v.is_integer is not True and not any(
                    getattr(v, f"is_{k}") for k in ("nonnegative", "nonpositive") if not (
                        getattr(v, "is_positive") or getattr(v, "is_negative")))
            if not ok:
                raise KernelError(f"{where}: a derivative is taken in a real variable with an open domain (real, "
                                  f"positive or negative), not in {v}")
            if not (count.is_Integer and count >= 1):
                raise KernelError(f"{where}: the order of a derivative must be a positive integer")
    elif isinstance(e, sp.Subs):
        for v, p in zip(e.variables, e.point):
            if not isinstance(v, sp.Symbol) or v.is_real is not True:
                raise KernelError(f"{where}: Subs binds real symbols, not {v}")
            if v.is_integer and not integer_valued(p):
                raise KernelError(f"{where}: Subs gives the integer {v} the value {p}, not an integer")
    elif isinstance(e, sp.Lambda):
        pass  # only inside a SquareMatrix (checked there)
    elif isinstance(e, SquareMatrix):
        entry = e.args[1]
        if not isinstance(entry, sp.Lambda) or len(entry.variables) != 2 or not all(
                isinstance(v, sp.Symbol) and v.is_integer for v in entry.variables):
            raise KernelError(f"{where}: SquareMatrix(n, Lambda((i, j), entry)) with integer indices")
        if not integer_valued(e.args[0]):
            raise KernelError(f"{where}: the size of a SquareMatrix must be an integer")
    elif isinstance(e, MatrixRank):
        if not isinstance(e.args[0], (sp.MatrixBase, SquareMatrix)):
            raise KernelError(f"{where}: MatrixRank of an explicit matrix or a SquareMatrix, not {e.args[0]}")
        if isinstance(e.args[0], sp.MatrixBase):
            check(e.args[0], where)
            return
    elif isinstance(e, sp.Determinant):
        if not isinstance(e.args[0], sp.MatrixBase):
            raise KernelError(f"{where}: a determinant of an explicit matrix only")
        check(e.args[0], where)
        return
    elif isinstance(e, (Expectation, IidExpectation)):
        if e.args[0].has(sp.Piecewise):  # SymPy's Sum constructor folds a Piecewise out through E
            raise KernelError(f"{where}: a Piecewise inside an expectation: its condition is on the random values, "
                              "and SymPy moves it outside")
    elif isinstance(e, sp.Pow):
        if e.base is sp.E:
            raise KernelError(f"{where}: write exp(x), not E**x")
    elif isinstance(e, FUNCTIONS) or isinstance(e, (sp.Add, sp.Mul, sp.Tuple, ExprCondPair)):
        pass
    elif isinstance(e, (sp.Rel, sp.And, sp.Or, sp.Not)) or e in (sp.true, sp.false):
        pass
    else:
        raise KernelError(f"{where}: the kernel has no rules for {type(e).__name__} ({sp.sstr(e)[:60]})")
    for a in e.args:
        _check(a, where)


def integer_valued(e) -> bool:
    """Whether ``e`` is an integer by its construction: integers and integer-declared symbols, indexed
    entries and functions, closed under +, - and x, and non-negative integer powers."""
    e = sp.sympify(e)
    if e.is_Integer:
        return True
    if isinstance(e, (sp.Symbol, sp.Indexed, AppliedUndef)):
        return e.is_integer is True
    if isinstance(e, (sp.Add, sp.Mul)):
        return all(integer_valued(a) for a in e.args)
    if isinstance(e, sp.Pow):
        return integer_valued(e.base) and e.exp.is_Integer and e.exp >= 0
    if isinstance(e, MatrixRank):
        return True
    return False


# -- canonical forms ---------------------------------------------------------------------------

_CANON: dict = {}


def canonical_dummy(kind: str, depth: int) -> sp.Dummy:
    """One dummy per (kind, depth): an integer index ("int") or a real variable ("real")."""
    key = (kind, depth)
    if key not in _CANON:
        _CANON[key] = sp.Dummy(f"b{depth}", **({"integer": True} if kind == "int" else {"real": True}))
    return _CANON[key]


def depth_of(e) -> int:
    """One more than the deepest canonical dummy free in ``e`` (the depth at which ``e`` sits)."""
    depths = [k + 1 for (kind, k), d in _CANON.items() if d in free_symbols(e)]
    return max(depths, default=0)


def sign_conditions(v, value) -> list:
    """What ``value`` must satisfy to stand for ``v`` given ``v``'s declared sign."""
    out = []
    from grpo_verify.proof import relations as rel

    for key, relation in (("positive", rel.Gt), ("negative", rel.Lt), ("nonnegative", rel.Ge),
                          ("nonpositive", rel.Le), ("nonzero", rel.Ne)):
        if getattr(v, f"is_{key}"):
            out.append(relation(value, 0))
    return out


def canon(e, depth: int = 0, sink: list | None = None):
    """The canonical form of a term (see the module docstring). Every node is rebuilt by its constructor
    (a term written unevaluated gets SymPy's construction, relations stay unevaluated); a bound variable
    becomes a plain integer (index) or real (variable) dummy named by its depth, renamed through a fresh
    dummy so that no bound variable below is captured; what its declaration said becomes an obligation
    appended to ``sink`` as (condition, ranges): a summation index declared positive needs a range from 1
    on, the point of a derivative in a positive variable must be positive (SymPy built the body with the
    declaration)."""
    key = (e, depth, _writing(), subs_points(e))
    if key not in _MEMO:
        if len(_MEMO) > 50000:
            _MEMO.clear()
        found: list = []
        _MEMO[key] = (_canon(e, depth, (), found), tuple(found))
    out, found = _MEMO[key]
    if sink is not None:
        sink += list(found)
    return out


_MEMO: dict = {}  # canonical forms of whole terms (statements and sides are canonicalised again and again)


def subs_points(*terms) -> tuple:
    """The variables and points of every ``Subs`` in ``terms`` (SymPy terms, or tuples and sets of them), for a
    memo's key next to the terms: SymPy's ``Subs.__eq__`` (and hash) ignores the point where the variable occurs
    in the body, up to its printed name, so ``Subs(x/x, x, 0)`` (as written) equals ``Subs(x/x, x, 2)`` and
    ``Subs(sqrt(x**2), x, y)`` equals it at a positive ``y``: keyed by the term alone, one would get the other's
    canonical form, proof or normal form. Empty (and cheap) when no term has a ``Subs``."""
    out = []
    for t in terms:
        if isinstance(t, (tuple, list, frozenset, set)):
            inner = subs_points(*(sorted(t, key=sp.default_sort_key) if isinstance(t, (frozenset, set)) else t))
            if inner:
                out.append(inner)
        elif isinstance(t, sp.Basic) and t.has(sp.Subs):
            out.append(tuple((tuple(n.variables), tuple(n.point)) for n in sp.preorder_traversal(t)
                             if isinstance(n, sp.Subs)))
    return tuple(out)


def canon_written(e, sink: list | None = None):
    """The term with its bound variables renamed as in ``canon`` but every node kept as written (SymPy's
    evaluation off): its definedness obligations are those of what was written, before a constructor turns
    x/x into 1; a point substituted for a variable that does not occur is kept as ``0 * point``."""
    with sp.evaluate(False):
        return canon(e, 0, sink)


def _writing() -> bool:
    return not sp.core.parameters.global_parameters.evaluate


def outermost(e):
    """(body, index, lo, hi) of a sum or product: its last limit is the outermost; the body keeps the others."""
    *inner, (v, lo, hi) = e.limits
    return (type(e)(e.function, *inner) if inner else e.function), v, lo, hi


def _renamed(body, old, new, depth, ranges, sink):
    """``body`` canonical at ``depth`` with the bound variables ``old`` renamed to ``new``, through fresh
    dummies (never capturing a variable bound inside)."""
    fresh = [sp.Dummy(integer=True) if v.is_integer else sp.Dummy(real=True) for v in old]
    local: list = []
    inner = _canon(body.xreplace(dict(zip(old, fresh))), depth, ranges, local)
    back = dict(zip(fresh, new))
    sink += [(c.xreplace(back), tuple((d.xreplace(back), lo.xreplace(back), hi.xreplace(back)) for d, lo, hi in r))
             for c, r in local]
    return inner.xreplace(back)


def _canon(e, depth: int, ranges: tuple, sink: list):
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.rows, e.cols, [_canon(x, depth, ranges, sink) for x in e])
    e = sp.sympify(e)
    if not e.args:
        return e
    if isinstance(e, (sp.Sum, sp.Product, SquareMatrix, sp.Lambda, sp.Derivative, sp.Subs)):
        depth = max(depth, depth_of(e))  # a canonical dummy free here is never the name of a binder below
    if isinstance(e, (sp.Sum, sp.Product)):
        body, v, lo, hi = outermost(e)
        lo, hi = _canon(lo, depth, ranges, sink), _canon(hi, depth, ranges, sink)
        d = canonical_dummy("int", depth)
        sink += [(c, ranges) for c in sign_conditions(v, lo if (v.is_positive or v.is_nonnegative) else hi)]
        inner = _renamed(body, [v], [d], depth + 1, ranges + ((d, lo, hi),), sink)
        return type(e)(inner, (d, lo, hi))
    if isinstance(e, SquareMatrix):
        n = _canon(e.args[0], depth, ranges, sink)
        entry = e.args[1]
        new = [canonical_dummy("int", depth + k) for k in range(len(entry.variables))]
        for v in entry.variables:
            sink += [(c, ranges) for c in sign_conditions(v, sp.Integer(1) if (v.is_positive or v.is_nonnegative)
                                                          else n)]
        body = _renamed(entry.expr, list(entry.variables), new, depth + len(new),
                        ranges + tuple((d, 1, n) for d in new), sink)
        return SquareMatrix(n, sp.Lambda(tuple(new), body))
    if isinstance(e, sp.Lambda):
        new = [canonical_dummy("int" if v.is_integer else "real", depth + k) for k, v in enumerate(e.variables)]
        return sp.Lambda(tuple(new), _renamed(e.expr, list(e.variables), new, depth + len(new), ranges, sink))
    if isinstance(e, sp.Derivative):
        pairs = list(e.variable_count)
        if all(isinstance(v, sp.Symbol) for v, _ in pairs):  # d f/dx at x: Subs(Derivative(f(d), d), d, x)
            vs = list(dict.fromkeys(v for v, _ in pairs))
            return _canon(sp.Subs(e, tuple(vs), tuple(vs)), depth, ranges, sink)
        return sp.Derivative(_canon(e.expr, depth, ranges, sink), *[(_canon(v, depth, ranges, sink), c) for v, c in pairs])
    if isinstance(e, sp.Subs):
        point = [_canon(p, depth, ranges, sink) for p in e.point]
        inner = e.expr
        sink += [(c, ranges) for v, p in zip(e.variables, point) for c in sign_conditions(v, p)]
        if isinstance(inner, sp.Derivative) and set(v for v, _ in inner.variable_count) == set(e.variables) and \
                len(set(e.variables)) == len(e.variables):
            # a derivative at a point: its variables renamed to this depth's
            new = [canonical_dummy("real", depth + k) for k in range(len(e.variables))]
            body = _renamed(inner.expr, list(e.variables), new, depth + len(new), ranges, sink)
            rename = dict(zip(e.variables, new))
            return sp.Subs(sp.Derivative(body, *[(rename[v], c) for v, c in inner.variable_count]), tuple(new),
                           tuple(point))
        # a value at a point: the substitution itself (the derivatives inside bind their own variables)
        fresh = [sp.Dummy(real=True) for _ in e.variables]
        local: list = []
        body = _canon(inner.xreplace(dict(zip(e.variables, fresh))), depth, ranges, local)
        at = dict(zip(fresh, point))
        sink += [(subst(c, at), tuple((d, subst(lo, at), subst(hi, at)) for d, lo, hi in r)) for c, r in local]
        value = _canon(subst(body, at), depth, ranges, [])
        if _writing():  # the points must be defined even where the variable does not occur
            return sp.Add(value, *[sp.Mul(0, p) for p in point])
        return value
    return _rebuilt(e, [_canon(a, depth, ranges, sink) for a in e.args])


def expand_computations(e):
    """``e`` with every ``computation`` node replaced by the expression it builds: the statement the kernel
    checks (the print shows the node's LaTeX)."""
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.rows, e.cols, [expand_computations(x) for x in e])
    if not isinstance(e, sp.Basic) or not any(getattr(n, "computation", False) for n in sp.preorder_traversal(e)):
        return e
    return e.replace(lambda n: getattr(n, "computation", False), lambda n: n.built())


# -- free variables and substitution ---------------------------------------------------------------

def bound_of(e) -> tuple:
    """The variables a binder node binds in its body."""
    if isinstance(e, (sp.Sum, sp.Product)):
        return (e.limits[-1][0],)
    if isinstance(e, (sp.Lambda, sp.Subs)):
        return tuple(e.variables)
    return ()


def free_symbols(e) -> set:
    """The free symbols of a term (SymPy's own ``free_symbols`` counts ``r[j]`` under ``Sum(.., j)``)."""
    if isinstance(e, sp.MatrixBase):
        return set().union(*[free_symbols(x) for x in e])
    e = sp.sympify(e)
    if isinstance(e, sp.Symbol):
        return {e}
    if isinstance(e, sp.IndexedBase):
        return set()
    if isinstance(e, (sp.Sum, sp.Product)):
        inner, v, lo, hi = outermost(e)
        return (free_symbols(inner) - {v}) | free_symbols(lo) | free_symbols(hi)
    if isinstance(e, sp.Lambda):
        return free_symbols(e.expr) - set(e.variables)
    if isinstance(e, sp.Subs):
        return (free_symbols(e.expr) - set(e.variables)) | set().union(*[free_symbols(p) for p in e.point])
    out = set()
    for a in e.args:
        out |= free_symbols(a)
    return out


def subst(e, mapping: dict):
    """``e`` with every free occurrence of the keys (symbols) replaced by their values, never capturing a
    free variable of a value (a binder that would capture one raises; callers then give up), and
    ``Derivative(f, x)`` at a replaced ``x`` turned into ``Subs(Derivative(f, x), x, value)``."""
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.rows, e.cols, [subst(x, mapping) for x in e])
    e = sp.sympify(e)
    mapping = {k: sp.sympify(v) for k, v in mapping.items() if k != v}
    if not mapping:
        return e
    if isinstance(e, sp.Symbol):
        return mapping.get(e, e)
    if not e.args:
        return e
    if isinstance(e, sp.Derivative):
        symbols = [v for v, _ in e.variable_count if isinstance(v, sp.Symbol)]
        if any(v in mapping for v in symbols) or any(free_symbols(val) & set(symbols) for val in mapping.values()):
            return subst(canon(e), mapping)  # the Subs form, where the variables are bound
    bound = bound_of(e)
    if bound:
        inner = {k: v for k, v in mapping.items() if k not in bound}
        reach = set().union(*[free_symbols(v) for v in inner.values()]) if inner else set()
        if reach & set(bound):
            raise KernelError(f"substitution would capture {sorted(map(str, reach & set(bound)))} in {e}")
        if isinstance(e, (sp.Sum, sp.Product)):
            body, v, lo, hi = outermost(e)
            return type(e)(subst(body, inner), (v, subst(lo, mapping), subst(hi, mapping)))
        if isinstance(e, sp.Lambda):
            return sp.Lambda(e.variables, subst(e.expr, inner))
        if isinstance(e, sp.Subs):
            return sp.Subs(subst(e.expr, inner), e.variables, tuple(subst(p, mapping) for p in e.point))
    args = [subst(a, mapping) for a in e.args]
    return _rebuilt(e, args) if any(a is not b for a, b in zip(args, e.args)) else e


def _rebuilt(e, args):
    from grpo_verify.proof.relations import rebuilt

    return rebuilt(e, args)
