"""Theorems, and the only code that makes them. Trusted.

A ``Theorem`` says: for every value of its free symbols (of their declared types) at which its hypotheses
hold, both sides are defined real numbers (or explicit matrices of them) in the stated relation. Only
the functions of this module construct one (a module-private token guards the constructor):

* ``link``: one step, ``a R b``, by the step's named rules, cited equations and facts, and the ring
  normal form or the arithmetic decision (``arith``); every definedness obligation of both sides proved;
* ``chain``: transitivity of two links with the same hypotheses;
* ``by_induction``, ``by_mean_value``: the two proof schemes, each with its side conditions;
* ``cite``: a theorem at values of its free symbols, every hypothesis discharged in the citing context.

``has_model`` checks that the hypotheses of a context hold exactly at a model (values, indexed families,
functions, finite distributions), ``establishes`` that a theorem states a result's statement under (a
subset of) its hypotheses. Nothing is decided by evaluating sums, derivatives or matrices with SymPy.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import sympy as sp
from sympy.core.function import AppliedUndef

from grpo_verify.proof import relations as rel

from grpo_verify.proof import arith, definedness, rules as R
from grpo_verify.proof.operators import IidExpectation
from grpo_verify.proof.rules.calculus import resolve_kinks
from grpo_verify.proof.rules.expectation import expectation_under_the_model, random_in, speaks_of
from grpo_verify.proof.terms import (KernelError, canon, canon_written, canonical_dummy, check, depth_of,
                                     expand_computations, free_symbols, integer_valued, subs_points, subst)

_TOKEN = object()
# Every Theorem and Cited the rules made: an object built around the token (object.__new__ and
# object.__setattr__) is not among them, and no rule accepts it.
_MADE: "weakref.WeakSet" = weakref.WeakSet()


def _made(x, cls) -> bool:
    return type(x) is cls and x in _MADE


class Unproved(Exception):
    """A kernel rule's side condition failed; the message says which."""


@dataclass(frozen=True)
class Hyp:
    """A hypothesis: ``formula``; for every integer ``index[0]`` in ``index[1]..index[2]`` when ``index`` is
    given; for every value of the variables ``every`` when given (an identity in them)."""

    formula: sp.Basic
    index: tuple = ()
    every: tuple = ()


def hyps_of(assumption) -> list[Hyp]:
    """The hypotheses an ``Assumption`` states, exactly as written."""
    out = []
    a = assumption
    if a.for_all is not None:
        v, lo, hi = a.for_all
        d = canonical_dummy("int", 0)
        check(a.condition, a.text)
        return [Hyp(canon(sp.sympify(a.condition).xreplace({v: d}), 1), (d, canon(lo), canon(hi)))]
    formulas = []
    if a.condition is not None:
        formulas += list(sp.And.make_args(sp.sympify(a.condition)))
    if a.domain is not None:
        x, domain = a.domain
        formulas += _domain(x, domain)
    if a.positive is not None:
        formulas.append(rel.Gt(a.positive, 0))
    for f in formulas:
        check(f, a.text)
        out.append(Hyp(canon(f)))
    if a.equation is not None:
        lhs, rhs = a.equation
        check(lhs, a.text), check(rhs, a.text)
        every = tuple(a.for_every)
        if any(not isinstance(v, sp.Symbol) or v.is_real is not True or v.is_integer for v in every):
            raise KernelError(f"{a.text}: an equation holds for every value of real symbols only")
        out.append(Hyp(canon(rel.Eq(lhs, rhs)), (), every))
    return out


def _domain(x, domain) -> list:
    if isinstance(domain, sp.Interval):
        out = []
        if domain.start != -sp.oo:
            out.append((rel.Gt if domain.left_open else rel.Ge)(x, domain.start))
        if domain.end != sp.oo:
            out.append((rel.Lt if domain.right_open else rel.Le)(x, domain.end))
        return out
    if isinstance(domain, sp.FiniteSet):
        return [sp.Or(*[rel.Eq(x, v) for v in domain.args])]
    raise KernelError(f"a domain is an Interval or a FiniteSet, not {domain}")


class Context:
    """Hypotheses, and the proving of side conditions from them."""

    def __init__(self, hyps, model=None):
        self.hyps = frozenset(hyps)
        self.model = model
        self.pointwise = [h.formula for h in self.hyps if not h.index]
        # a relation presupposes that what it mentions is defined (1/x > 0 gives x != 0); a disjunction
        # does not (its other disjunct may hold where this one is undefined)
        for f in list(self.pointwise):
            if isinstance(f, sp.Rel):
                self.pointwise += [o.condition for o in definedness.obligations(f)
                                   if o.condition is not None and not o.ranges and not o.hidden]
        self.quantified = [h for h in self.hyps if h.index]
        self._cache: dict = {}

    def with_hyps(self, extra) -> "Context":
        return Context(self.hyps | frozenset(extra), self.model)

    def prove(self, cond, ranges=(), hidden=frozenset(), facts=()) -> bool:
        cond = canon(sp.sympify(cond))
        key = (cond, ranges, hidden, tuple(facts), subs_points(cond, facts))  # see terms.subs_points
        if key not in self._cache:
            self._cache[key] = False  # a recursive call on the same condition fails rather than loops
            self._cache[key] = self._prove(cond, ranges, hidden, tuple(facts))
        return self._cache[key]

    def _prove(self, cond, ranges, hidden, facts) -> bool:
        if cond is sp.true:
            return True
        if cond is sp.false:
            return False
        if isinstance(cond, sp.And):
            return all(self.prove(c, ranges, hidden, facts) for c in cond.args)
        usable = [h for h in self.pointwise if not speaks_of(h, hidden)]
        if cond in usable:
            return True
        if isinstance(cond, sp.Eq) and arith.ring_zero(cond.lhs - cond.rhs):
            return True
        if isinstance(cond, sp.Rel) and not free_symbols(cond) and not _has_operator(cond):
            sign = arith.closed_sign(cond.lhs - cond.rhs)
            if sign is not None:
                return {sp.Eq: sign == 0, sp.Ne: sign != 0, sp.Lt: sign < 0, sp.Le: sign <= 0,
                        sp.Gt: sign > 0, sp.Ge: sign >= 0}[type(cond)]
        local = []
        for n, (d, lo, hi) in enumerate(ranges):
            local += [rel.Ge(d, lo), rel.Le(d, hi)]
            for q in self.quantified:
                qd, qlo, qhi = q.index
                if speaks_of(q.formula.xreplace({qd: sp.Dummy()}), hidden):
                    continue  # about the sampled values, or a bound variable's name: says nothing here
                if self.prove(rel.Ge(lo, qlo), ranges[:n], hidden) and self.prove(rel.Le(hi, qhi), ranges[:n], hidden):
                    local.append(subst(q.formula, {qd: d}))
        return arith.entails(usable + local, cond, facts)


def _has_operator(e) -> bool:
    return any(isinstance(n, (sp.Sum, sp.Product, sp.Derivative, sp.Subs, AppliedUndef, sp.Indexed))
               or (getattr(type(n), "__module__", None) or "").startswith("grpo_verify")
               for n in sp.preorder_traversal(e))


class Theorem:
    """See the module docstring. Built only by this module's rules."""

    __slots__ = ("hyps", "lhs", "relation", "rhs", "rules", "__weakref__")

    def __init__(self, token, hyps, lhs, relation, rhs, rules):
        if token is not _TOKEN:
            raise KernelError("a Theorem is made only by the kernel's rules (grpo_verify.proof.theorem)")
        for name, value in (("hyps", frozenset(hyps)), ("lhs", lhs), ("relation", relation), ("rhs", rhs),
                            ("rules", frozenset(rules))):
            object.__setattr__(self, name, value)
        _MADE.add(self)

    def __setattr__(self, key, value):
        raise AttributeError("a Theorem is immutable")

    def __repr__(self) -> str:
        return f"Theorem({sp.sstr(self.lhs)} {self.relation} {sp.sstr(self.rhs)}; {len(self.hyps)} hypotheses)"


# -- citations -----------------------------------------------------------------------------------

class Cited:
    """A statement usable in a step under the hypotheses it was discharged from (made only by ``cite``): an
    equation rewrites, any other relation is a fact. ``pattern``: variables the statement holds for every
    value of (of their declared type), so that it may rewrite where they are bound (inside a derivative)."""

    __slots__ = ("lhs", "relation", "rhs", "pattern", "name", "hyps", "__weakref__")

    def __init__(self, token, lhs, relation, rhs, pattern, name, hyps):
        if token is not _TOKEN:
            raise KernelError("a citation is made only by theorem.cite")
        for key, value in (("lhs", lhs), ("relation", relation), ("rhs", rhs), ("pattern", tuple(pattern)),
                           ("name", name), ("hyps", frozenset(hyps))):
            object.__setattr__(self, key, value)
        _MADE.add(self)

    def __setattr__(self, key, value):
        raise AttributeError("a citation is immutable")


_RELATIONS = rel.BY_NAME
_CLASSES = {"=": sp.Eq, "!=": sp.Ne, "<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge}
_SIGN_TESTS = (("positive", rel.Gt), ("negative", rel.Lt), ("nonnegative", rel.Ge), ("nonpositive", rel.Le),
               ("nonzero", rel.Ne))


def _value_fits(v, value, ctx: Context, ranges=(), hidden=frozenset()) -> bool:
    if v.is_integer and not integer_valued(value):
        return False
    return all(ctx.prove(test(value, 0), ranges, hidden) for key, test in _SIGN_TESTS if getattr(v, f"is_{key}"))


def cite(ctx: Context, source, values: dict | None = None, name: str = "") -> Cited:
    """A hypothesis of ``ctx`` or a theorem at ``values``, usable in a link under ``ctx``."""
    if isinstance(source, Hyp):
        if source not in ctx.hyps or source.index or values:
            raise Unproved(f"{name}: cites a hypothesis that is not one of this result's (or one for every index)")
        f = source.formula
        relation = {sp.Eq: "=", sp.Ne: "!=", sp.Lt: "<", sp.Le: "<=", sp.Gt: ">", sp.Ge: ">="}.get(type(f))
        if relation is None:
            raise Unproved(f"{name}: only a relation can be cited")
        return Cited(_TOKEN, f.lhs, relation, f.rhs, tuple(source.every), name, ctx.hyps)
    if not _made(source, Theorem):
        raise Unproved(f"{name}: only theorems the kernel made and hypotheses can be cited")
    values = {canon(k): canon(sp.sympify(v)) for k, v in (values or {}).items()}
    free = free_symbols(source.lhs) | free_symbols(source.rhs)
    for h in source.hyps:
        free |= free_symbols(h.formula) | (free_symbols(sp.Tuple(*h.index[1:])) if h.index else set())
    for v, value in values.items():
        if not isinstance(v, sp.Symbol) or v not in free:
            raise Unproved(f"{name}: {v} is not a free symbol of the cited theorem")
        if not _value_fits(v, value, ctx):
            raise Unproved(f"{name}: the value {sp.sstr(value)} of {v} is not shown to fit its declaration")
        for o in definedness.obligations(value):
            if o.condition is None or not ctx.prove(o.condition, o.ranges, o.hidden):
                raise Unproved(f"{name}: the value {sp.sstr(value)} is not shown to be defined")
    try:
        at = lambda e: canon(subst(e, values))  # noqa: E731
        for h in source.hyps:
            if h.every and set(h.every) & set(values):
                raise Unproved(f"{name}: a hypothesis for every value of {h.every} cannot be instantiated in them")
            if h.every or h.index:
                instance = Hyp(at(h.formula), (h.index[0], at(h.index[1]), at(h.index[2])) if h.index else (),
                               h.every)
                if not _covered(ctx, instance):
                    raise Unproved(f"{name}: its hypothesis {sp.sstr(h.formula)} for every "
                                   f"{'index' if h.index else 'value'} is not one of this result's")
            elif not ctx.prove(at(h.formula)):
                raise Unproved(f"{name}: its hypothesis {sp.sstr(at(h.formula))} is not shown to hold here")
        lhs, rhs = at(source.lhs), at(source.rhs)
    except KernelError as exc:
        raise Unproved(f"{name}: {exc}") from exc
    # The instance holds for every value of a variable that its hypotheses do not mention and that no value
    # brought in (a value was shown to fit, and to be defined, at this context's point only).
    mentioned = set().union(*[free_symbols(h.formula) | (free_symbols(sp.Tuple(*h.index[1:])) if h.index else set())
                              for h in source.hyps] or [set()])
    brought = set().union(*[free_symbols(value) for value in values.values()] or [set()])
    pattern = tuple(sorted((v for v in (free_symbols(lhs) | free_symbols(rhs)) - mentioned - brought
                            if v.is_integer is not True and (v.is_positive or v.is_negative or not (
                                v.is_nonnegative or v.is_nonpositive))), key=str))
    return Cited(_TOKEN, lhs, source.relation, rhs, pattern, name, ctx.hyps)


def _covered(ctx: Context, h: Hyp) -> bool:
    """A hypothesis for every index (value) implied by one of the context's: the same statement over a range
    that contains this one's (the same variables)."""
    for g in ctx.hyps:
        if h.every and g.every == h.every and g.formula == h.formula and not g.index:
            return True
        if h.index and g.index and subst(g.formula, {g.index[0]: h.index[0]}) == h.formula and \
                ctx.prove(rel.Ge(h.index[1], g.index[1])) and ctx.prove(rel.Le(h.index[2], g.index[2])):
            return True
    return False


# -- rewriting with cited equations ------------------------------------------------------------------

def _rewrite(e, eq: Cited, local: R.Local):
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.rows, e.cols, [_rewrite(x, eq, local) for x in e])
    if not isinstance(e, sp.Basic) or isinstance(e, sp.IndexedBase):
        return e
    if speaks_of(eq.lhs.xreplace({v: 0 for v in eq.pattern}), local.hidden) or \
            speaks_of(eq.rhs.xreplace({v: 0 for v in eq.pattern}), local.hidden):
        return e  # below a binder of what the equation speaks of (an expectation's families, a bound name)
    new = _rewrite_here(e, eq, local)
    if new is not None:
        return new
    changed = {}
    for n, a, inner in R.children(e, local):
        b = _rewrite(a, eq, inner)
        if b is not a:
            changed[n] = b
    return R.rebuild(e, changed) if changed else e


_AT_DEPTH: dict = {}


def _at_depth(term, depth: int):
    key = (term, depth, subs_points(term))  # not lru_cache: its key would be the term alone (terms.subs_points)
    if key not in _AT_DEPTH:
        if len(_AT_DEPTH) > 4096:
            _AT_DEPTH.clear()
        _AT_DEPTH[key] = canon(term, depth)
    return _AT_DEPTH[key]


def _rewrite_here(e, eq: Cited, local):
    lhs = _at_depth(eq.lhs, local.depth)  # binders named for this depth: no clash with the free outer ones
    if not eq.pattern:
        if e == lhs:
            return _at_depth(eq.rhs, local.depth)
        if type(e) is type(lhs) and isinstance(e, (sp.Add, sp.Mul)) and all(p in e.args for p in lhs.args):
            rest = list(e.args)
            for p in lhs.args:
                rest.remove(p)
            return e.func(*rest, _at_depth(eq.rhs, local.depth))
        return None
    wild = {v: sp.Wild(f"w{n}") for n, v in enumerate(eq.pattern)}
    try:
        match = e.match(lhs.xreplace(wild))
    except Exception:  # noqa: BLE001 - SymPy's matcher only proposes
        return None
    if not match or set(match) != set(wild.values()):
        return None
    values = {v: match[w] for v, w in wild.items()}
    try:
        if canon(subst(lhs, values), local.depth) != e:
            return None
        if not all(_value_fits(v, x, local.ctx, local.ranges, local.hidden) for v, x in values.items()):
            return None
        return canon(subst(canon(eq.rhs, local.depth), values), local.depth)
    except KernelError:
        return None


# -- the link rule -----------------------------------------------------------------------------------

def atoms_of(e) -> set:
    """The maximal subterms the arithmetic sees as numbers."""
    if isinstance(e, sp.MatrixBase):
        return set().union(*[atoms_of(x) for x in e])
    e = sp.sympify(e)
    if e.is_Rational or e in (sp.true, sp.false):
        return set()
    if isinstance(e, (sp.Add, sp.Mul, sp.Min, sp.Max, sp.Abs, sp.KroneckerDelta, sp.Rel, sp.And, sp.Or, sp.Not,
                      sp.Implies)):
        return set().union(*[atoms_of(a) for a in e.args])
    if isinstance(e, sp.Piecewise):
        return set().union(*[atoms_of(b) | atoms_of(c) for b, c in e.args])
    if isinstance(e, sp.Pow) and e.exp.is_Rational:
        return atoms_of(e.base) | ({sp.Pow(e.base, sp.Rational(1, e.exp.q), evaluate=False)}
                                   if not e.exp.is_Integer else set())
    return {e}


def discharge_definedness(e, ctx: Context, rules, eqs=()) -> None:
    """Every definedness obligation of ``e``, proved where it sits, with the step's rules: its normal rules
    and cited equations may rewrite the condition, its fact rules add what they prove about the atoms."""
    for o in definedness.obligations(e):
        local = R.Local(ctx, o.ranges, o.hidden, depth_of(o.condition if o.kink is None else o.kink[0]),
                        rules=tuple(rules))
        if o.kink is not None:
            f, variables, point = o.kink
            if point is not None and len(point) == 1:  # the step's rules may write out what hides a kink
                f = R.normalize(canon(f, local.depth), local)
            if point is None or len(point) != 1 or resolve_kinks(f, point[0][0], point[0][1], local) is None:
                raise Unproved(f"not shown to be differentiable: {o.reason} in {sp.sstr(f)[:80]}")
            continue
        if ctx.prove(o.condition, o.ranges, o.hidden):
            continue
        condition = _transform(canon(o.condition, local.depth), local, eqs, [])
        facts = R.facts(atoms_of(condition) | atoms_of(canon(o.condition, local.depth)), local, rules)
        if not (ctx.prove(condition, o.ranges, o.hidden, tuple(facts))
                or ctx.prove(o.condition, o.ranges, o.hidden, tuple(facts))):
            raise Unproved(f"not shown to be defined: {o.reason} (needs {sp.sstr(o.condition)[:120]})")


def _transform(x, local, eqs, directed):
    if isinstance(x, sp.MatrixBase):
        return sp.ImmutableMatrix(x.rows, x.cols, [_transform(y, local, eqs, directed) for y in x])
    for eq in eqs:
        x = _rewrite(x, eq, local)
    for r in directed:
        x = R.directed(x, r, local)
    for _ in range(2):
        x = R.normalize(x, local)
        for eq in eqs:
            x = _rewrite(x, eq, local)
    return R.normalize(x, local)


def _decide(ctx, a, relation, b, facts) -> bool:
    if isinstance(a, sp.MatrixBase) or isinstance(b, sp.MatrixBase):
        if not (isinstance(a, sp.MatrixBase) and isinstance(b, sp.MatrixBase)) or a.shape != b.shape:
            return False
        if relation != "=":
            return False
        return all(_decide(ctx, x, "=", y, facts) for x, y in zip(a, b))
    if relation == "=" and arith.ring_zero(a - b):
        return True
    return ctx.prove(_RELATIONS[relation](a, b), facts=tuple(facts))


def link(ctx: Context, previous, relation: str, nxt, rules=(), cited=()) -> Theorem:
    """``previous relation nxt`` under ``ctx`` by ``rules`` and the ``cited`` statements."""
    if relation not in _RELATIONS:
        raise Unproved(f"unknown relation {relation!r}")
    rules = tuple(rules)
    if any(not isinstance(r, R.Rule) or R.RULES.get(r.name) is None or R.RULES[r.name].fn is not r.fn
           for r in rules):
        raise Unproved("a step names something that is not a registered kernel rule")
    if ctx.model is not None:
        raise Unproved("a step is proved from hypotheses, never in a model")
    if any(not _made(c, Cited) or not c.hyps <= ctx.hyps for c in cited):
        raise Unproved("a citation was not discharged under this step's hypotheses")
    check(previous, "a step"), check(nxt, "a step")
    declared: list = []
    written = [canon_written(previous, declared), canon_written(nxt, declared)]
    a0, b0 = canon(previous), canon(nxt)
    for side in (a0, b0):
        if any(isinstance(x, sp.Basic) and x.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I)
               for x in (side if isinstance(side, sp.MatrixBase) else [side])):
            raise Unproved(f"a side is not a real number once built: {sp.sstr(side)[:80]}")
    for condition, ranges in declared:
        if not ctx.prove(condition, ranges):
            raise Unproved(f"a bound variable's declaration is not met: needs {sp.sstr(condition)}")
    normal = tuple(r for r in rules if r.kind == "normal")
    eqs = [c for c in cited if c.relation == "="]
    for side in (*written, a0, b0):  # what was written, and what SymPy built of it
        discharge_definedness(side, ctx, rules, eqs)
    local = R.Local(ctx, rules=rules)
    given = [_RELATIONS[c.relation](c.lhs, c.rhs) for c in cited if c.relation != "="]
    directed = [r for r in rules if r.kind == "directed"]
    attempts = [(directed, []), ([], directed)] if directed else [([], [])]
    for da, db in attempts:
        try:
            a, b = _transform(a0, local, eqs, da), _transform(b0, local, eqs, db)
        except (KernelError, RecursionError) as exc:
            raise Unproved(f"a rule could not be applied: {exc}") from exc
        facts = list(given)
        if relation != "=" or not (isinstance(a, sp.Basic) and arith.ring_zero(a - b)):
            hyps = [_transform(h, local, eqs, []) for h in ctx.pointwise if not isinstance(h, sp.MatrixBase)]
            facts += [h for h in hyps if h not in ctx.pointwise]
            facts += R.facts(atoms_of(a) | atoms_of(b) | set().union(*[atoms_of(h) for h in facts] or [set()]),
                             local, rules)
        if _decide(ctx, a, relation, b, facts):
            return Theorem(_TOKEN, ctx.hyps, a0, relation, b0, {r.name for r in rules})
    raise Unproved("the named rules and the arithmetic do not establish this step")


_CHAIN = {("=", r): r for r in _RELATIONS} | {(r, "="): r for r in _RELATIONS} | {
    ("<=", "<="): "<=", ("<", "<="): "<", ("<=", "<"): "<", ("<", "<"): "<",
    (">=", ">="): ">=", (">", ">="): ">", (">=", ">"): ">", (">", ">"): ">"}
_CHAIN[("!=", "=")] = _CHAIN[("=", "!=")] = "!="


def chain(first: Theorem, second: Theorem) -> Theorem:
    """a R b and b S c give a (R;S) c, under the same hypotheses."""
    if not (_made(first, Theorem) and _made(second, Theorem)):
        raise Unproved("only theorems the kernel made can be chained")
    if first.rhs != second.lhs or first.hyps != second.hyps:
        raise Unproved("the two links do not meet (or stand under different hypotheses)")
    relation = _CHAIN.get((first.relation, second.relation))
    if relation is None:
        raise Unproved(f"{first.relation} then {second.relation} gives no relation")
    return Theorem(_TOKEN, first.hyps, first.lhs, relation, second.rhs, first.rules | second.rules)


_IMPLIED = {("=", "<="), ("=", ">="), ("<", "<="), (">", ">="), ("<", "!="), (">", "!=")}


def establishes(theorem: Theorem, hyps, lhs, relation: str, rhs) -> bool:
    """Whether ``theorem`` states ``lhs relation rhs`` under hypotheses among ``hyps``."""
    if not _made(theorem, Theorem) or not theorem.hyps <= frozenset(hyps):
        return False
    if canon(lhs) != theorem.lhs or canon(rhs) != theorem.rhs:
        return False
    return theorem.relation == relation or (theorem.relation, relation) in _IMPLIED


def proves(result, theorem: Theorem, model, value=None) -> bool:
    """The last check before a result is reported proved: ``theorem`` states the result's statement (its
    computations written out) under hypotheses among the result's assumptions (and ``symbol = value`` for a
    value the result lists, when it is checked value by value), and ``model`` satisfies those assumptions
    (``None`` only when there are none)."""
    ctx = Context([h for a in result.assumptions for h in hyps_of(a)])
    if value is not None:  # proved at a value only where the assumptions hold with it: the model satisfies both
        listed = result.for_each or result.fallback
        if listed is None or value not in listed.values:
            return False
        ctx = ctx.with_hyps([Hyp(canon(rel.Eq(listed.symbol, sp.Integer(value))))])
    if (model is None and ctx.hyps) or (model is not None and not has_model(ctx, model)):
        return False
    allowed = set(ctx.hyps)
    return establishes(theorem, allowed, expand_computations(result.lhs), result.relation,
                       expand_computations(result.rhs))


# -- proof schemes -----------------------------------------------------------------------------------

def _statement(theorem: Theorem, lhs, relation, rhs) -> bool:
    return _made(theorem, Theorem) and theorem.lhs == canon(lhs) and theorem.rhs == canon(rhs) and \
        theorem.relation == relation


def induction_contexts(ctx: Context, n, base: int, lhs, relation, rhs) -> tuple[Context, Context]:
    """The contexts of the base case and of the step, after the side conditions: ``n`` an integer whose
    declaration admits every integer >= base, every hypothesis mentioning it a constant lower bound that
    holds at the base, and ``n >= base`` proved."""
    if not isinstance(n, sp.Symbol) or n.is_integer is not True or (n.is_negative or n.is_nonpositive):
        raise Unproved(f"induction runs over an integer symbol that may take every value >= the base, not {n}")
    if (n.is_positive and base < 1) or (n.is_nonnegative and base < 0):
        raise Unproved(f"{n}'s declared sign excludes the base case {n} = {base}")
    for h in ctx.hyps:
        if n in free_symbols(h.formula) or (h.index and n in free_symbols(sp.Tuple(*h.index[1:]))):
            f = h.formula
            lower = not h.index and not h.every and (
                (isinstance(f, (sp.Ge, sp.Gt)) and f.lhs == n and not free_symbols(f.rhs))
                or (isinstance(f, (sp.Le, sp.Lt)) and f.rhs == n and not free_symbols(f.lhs)))
            if not lower or subst(f, {n: sp.Integer(base)}) is not sp.true:
                raise Unproved(f"the hypothesis {sp.sstr(f)} mentions {n} and is not a lower bound holding at {base}")
    if not ctx.prove(rel.Ge(n, base)):
        raise Unproved(f"the hypotheses do not give {n} >= {base}")
    base_ctx = Context([Hyp(canon(subst(h.formula, {n: sp.Integer(base)}))) if n in free_symbols(h.formula) else h
                        for h in ctx.hyps], ctx.model)
    if isinstance(lhs, sp.MatrixBase) or isinstance(rhs, sp.MatrixBase):
        raise Unproved("induction proves a relation between numbers, not matrices")
    formula = canon(_RELATIONS[relation](lhs, rhs))
    if not isinstance(formula, _CLASSES[relation]) or formula.lhs != canon(lhs) or formula.rhs != canon(rhs):
        raise Unproved("the statement at n does not stay a relation between its two sides (SymPy decided it)")
    return base_ctx, ctx.with_hyps([Hyp(formula), Hyp(canon(rel.Ge(n, base)))])


def by_induction(ctx: Context, n, base: int, lhs, relation, rhs, base_case: Theorem, step: Theorem) -> Theorem:
    """P(n) for every n >= base from P(base) and P(n) => P(n + 1)."""
    base_ctx, step_ctx = induction_contexts(ctx, n, base, lhs, relation, rhs)
    if not (_statement(base_case, subst(lhs, {n: base}), relation, subst(rhs, {n: base}))
            and base_case.hyps <= base_ctx.hyps):
        raise Unproved("the base case does not state the statement at the base")
    if not (_statement(step, subst(lhs, {n: n + 1}), relation, subst(rhs, {n: n + 1})) and step.hyps <= step_ctx.hyps):
        raise Unproved("the inductive step does not state the statement at n + 1")
    return Theorem(_TOKEN, ctx.hyps, canon(lhs), relation, canon(rhs), base_case.rules | step.rules | {"induction"})


def _constant_bound(f, x) -> bool:
    if not isinstance(f, (sp.Ge, sp.Gt, sp.Le, sp.Lt)):
        return False
    d = arith.expand_in_atoms(f.lhs - f.rhs)
    slope = d.coeff(x)
    return slope.is_Rational and slope != 0 and x not in free_symbols(arith.expand_in_atoms(d - slope * x))


def mean_value_contexts(ctx: Context, x, point, lhs, relation, rhs):
    """(difference D, context at the point, the slope statement) after the side conditions: ``x`` real with
    an open declared domain, every hypothesis mentioning it a constant bound (the admissible values form an
    interval), the point admissible."""
    if relation not in (">=", "<="):
        raise Unproved("the mean-value rule proves >= or <=")
    if not isinstance(x, sp.Symbol) or x.is_real is not True or x.is_integer or (
            (x.is_nonnegative or x.is_nonpositive or x.is_nonzero) and not (x.is_positive or x.is_negative)):
        raise Unproved(f"the mean-value rule runs over a real variable with an open declared domain, not {x}")
    point = canon(sp.sympify(point))
    if x in free_symbols(point):
        raise Unproved("the point must not depend on the variable")
    for h in ctx.hyps:
        if x in free_symbols(h.formula) and (h.index or h.every or not _constant_bound(h.formula, x)):
            raise Unproved(f"the hypothesis {sp.sstr(h.formula)} is not a constant bound on {x}")
    if not _value_fits(x, point, ctx) or not all(ctx.prove(subst(h.formula, {x: point})) for h in ctx.hyps
                                                    if x in free_symbols(h.formula)):
        raise Unproved(f"the point {x} = {sp.sstr(point)} is not shown to be admissible")
    difference = canon(lhs - rhs if relation == ">=" else rhs - lhs)
    at_point = Context([Hyp(canon(subst(h.formula, {x: point}))) if x in free_symbols(h.formula) else h
                        for h in ctx.hyps], ctx.model)
    slope = canon(sp.Derivative(difference, x) * (x - point))
    return difference, point, at_point, slope


def by_mean_value(ctx: Context, x, point, lhs, relation, rhs, at_point: Theorem, slope: Theorem) -> Theorem:
    """D(x) >= 0 on an interval from D(c) >= 0 and D'(y) (y - c) >= 0 at every admissible y (and D
    differentiable there, the slope theorem's definedness): D(x) - D(c) = D'(xi) (x - c), xi between."""
    difference, point, point_ctx, slope_term = mean_value_contexts(ctx, x, point, lhs, relation, rhs)
    if not (_statement(at_point, subst(difference, {x: point}), ">=", 0) and at_point.hyps <= point_ctx.hyps):
        raise Unproved("the first theorem does not state D(c) >= 0")
    if not (_statement(slope, slope_term, ">=", 0) and slope.hyps <= ctx.hyps):
        raise Unproved("the second theorem does not state D'(x) (x - c) >= 0")
    return Theorem(_TOKEN, ctx.hyps, canon(lhs), relation, canon(rhs), at_point.rules | slope.rules | {"mean value"})


# -- models ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Iid:
    """``rollouts`` i.i.d. draws from ``outcomes`` = ``[(probability, {family: value}), ...]``; the kernel
    builds the product distribution of rollouts 1..n."""

    outcomes: tuple
    rollouts: int

    def joint(self, bases) -> list:
        import itertools

        out = []
        for combo in itertools.product(range(len(self.outcomes)), repeat=self.rollouts):
            p = sp.Mul(*[self.outcomes[o][0] for o in combo])
            out.append((p, {b[k + 1]: self.outcomes[o][1][b] for b in bases for k, o in enumerate(combo)}))
        return out


@dataclass
class Model:
    """Exact values for every free symbol, indexed family and function of a context, and the finite
    distribution of each expectation operator: ``distributions[E] = [(probability, {r[1]: value, ...}), ...]``,
    or ``Iid(...)`` (required for an i.i.d. expectation, and shared with its one-rollout operator)."""

    values: dict
    families: dict
    functions: dict
    distributions: dict


_MODEL_RULES = (R.RULES["sum_with_numeric_limits_is_written_out"], R.RULES["delta_of_equal_or_distinct_values"],
                R.RULES["piecewise_branch"], R.RULES["min_max_abs_of_ordered_arguments"],
                R.RULES["expectation_under_the_model"], *[R.RULES[r.name] for r in
                                                          R.calculus.DIFFERENTIATION])


def _at_model(e, model: Model, keep=()):
    """``e`` at the model; the variables ``keep`` (those an equation holds for every value of) stay."""
    e = subst(e, {k: v for k, v in model.values.items() if k not in keep})
    for f, lam in model.functions.items():
        e = e.replace(f, lam)
    return _entries(e, model, frozenset())


def _entries(e, model: Model, bound: frozenset):
    """Indexed entries replaced by the model's values, except families an expectation binds."""
    if isinstance(e, sp.Indexed):
        table = model.families.get(e.base)
        if e.base not in bound and table is not None and e.indices in table:
            return table[e.indices]
        return e
    if not isinstance(e, sp.Basic) or not e.args:
        return e
    inner = bound | frozenset(e.random) if isinstance(e, R.Expectation) else bound
    args = [_entries(a, model, inner) for a in e.args]
    return e.func(*args) if args != list(e.args) else e


def has_model(ctx: Context, model: Model) -> bool:
    """Whether every hypothesis of ``ctx`` (and every declaration) holds exactly at ``model``."""
    if not ctx.hyps:
        return True
    joint: dict = {}
    plain = Context(())
    for v, value in model.values.items():
        if not isinstance(v, sp.Symbol) or free_symbols(value) or not _value_fits(v, value, plain):
            return False
    for base, table in model.families.items():
        for value in table.values():
            if free_symbols(value) or not _value_fits(_probe(base), value, plain):
                return False
    for f, lam in model.functions.items():
        # at every real argument (not only on the Lambda's declared domain) a function is defined and, as the
        # kernel presumes of a declared function, differentiable; and of its declared type and sign
        args = [sp.Dummy(real=True) for _ in lam.variables]
        body = lam.expr.xreplace(dict(zip(lam.variables, args)))
        if f(*args).is_integer and not integer_valued(body):
            return False
        for term in (body, *[sp.Derivative(body, a) for a in args]):
            for o in definedness.obligations(term):
                if o.condition is None or not plain.prove(o.condition, o.ranges, o.hidden):
                    return False
        for key, test in _SIGN_TESTS:
            if getattr(f(*args), f"is_{key}") and not plain.prove(test(body, 0)):
                return False
    for e_class, outcomes in list(model.distributions.items()):
        if isinstance(outcomes, Iid):
            outcomes = outcomes.joint(e_class.random)
        elif issubclass(e_class, IidExpectation):
            return False  # an i.i.d. expectation is realised by a product distribution only
        if sum(p for p, _ in outcomes) != 1 or any(arith.closed_sign(p) != 1 for p, _ in outcomes) or any(
                free_symbols(x) or not _value_fits(_probe(a.base), x, plain) for _, v in outcomes for a, x in v.items()):
            return False
        joint[e_class] = outcomes
    for e_class, spec in model.distributions.items():
        if issubclass(e_class, IidExpectation) and e_class.single in model.distributions and \
                model.distributions[e_class.single] is not spec:
            return False  # one rollout's moments are taken under the same distribution
    model = Model(model.values, model.families, model.functions, joint)
    here = Context((), model)
    local = R.Local(here, rules=_MODEL_RULES)
    for h in ctx.hyps:
        formula = h.formula
        if h.index:
            d, lo, hi = h.index
            lo, hi = _at_model(lo, model), _at_model(hi, model)
            if not (lo.is_Integer and hi.is_Integer):
                return False
            instances = [subst(formula, {d: sp.Integer(k)}) for k in range(int(lo), int(hi) + 1)]
        else:
            instances = [formula]
        try:
            for f in instances:
                if not _holds_at_model(f, h.every, model, here, local):
                    return False
                # a Context presupposes that what a relation mentions is defined: so must the model (every case
                # found is also caught where the instance is evaluated: a non-real number or a rule refusing)
                presupposed = [o.condition for o in definedness.obligations(f) if o.condition is not None
                               and not o.ranges and not o.hidden] if isinstance(f, sp.Rel) else []
                if not all(_holds_at_model(c, (), model, here, local) for c in presupposed):
                    return False
        except (ValueError, TypeError):  # something at the model the kernel (or SymPy: Min(zoo, 0)) refuses
            return False
    return True


def _holds_at_model(f, every, model: Model, here: Context, local) -> bool:
    for _ in range(3):  # written-out sums reveal entries to fill in
        f = canon(_at_model(f, model, every))
        f = rel.rebuilt(f, [R.normalize(canon(a), local) for a in f.args]) if isinstance(f, sp.Rel) else f
    if every:
        return f is sp.true or (isinstance(f, sp.Eq) and arith.ring_zero(f.lhs - f.rhs))
    return not free_symbols(f) and here.prove(f)


def _probe(base):
    """A stand-in entry of an indexed family, carrying the family's declared type."""
    return sp.Dummy(str(base.label), real=True, **{k: True for k in ("integer", "positive", "negative", "nonnegative",
                                                                   "nonpositive") if base.assumptions0.get(k)})
