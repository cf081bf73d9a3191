"""The proof kernel: the only code that turns a ``Result`` into a ``ResultReport`` with a status.

Trusted base, named plainly (everything else in ``grpo_verify.proof`` is convenience):
  this module, ``definedness`` (validation and definedness obligations), ``decide`` (the SymPy
  route), ``smt`` (the z3 route), ``matrices`` (exact rank); SymPy's exact arithmetic,
  normalisations, assumption system, derivative formulas and root isolation; z3's nlsat procedure;
  and the ``doit`` of the operators a derivation defines (``Ex`` linearity in D5 and D8, ``IidE``'s
  count of coinciding rollouts in D9, ``computation`` enumerations), which are listed in the rendering;
  and the textbook facts behind the kernel's sign rules (``TRUSTED_BASE`` lists them).

A link ``previous <relation> next`` of a chain is proved only if
  1. the assumptions are consistent (z3 finds them satisfiable, or an exact witness point is found)
     -- a contradictory or undetermined set proves nothing;
  2. every definedness obligation of both sides follows from the assumptions;
  3. every cited result is proved and each of its hypotheses follows from the current assumptions
     (its scope, symbolic or a range, bounds this link's);
  4. the SymPy route or the z3 route decides the relation. Where both decide they must agree; a
     disagreement is reported and the link is unproved.
Anything the kernel cannot decide exactly is unproved; an exception anywhere is a status, not a crash.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Sequence

import sympy as sp

from grpo_verify.proof import decide, definedness
from grpo_verify.proof.definedness import KernelError
from grpo_verify.proof.status import Status, weakest

if TYPE_CHECKING:  # pragma: no cover
    from grpo_verify.proof.result import Assumption, Result, Step

try:  # the second route; without z3 every link rests on SymPy alone (and the report says so)
    from grpo_verify.proof import smt
except ImportError:  # pragma: no cover - z3-solver is a dependency
    smt = None

SMT_TIMEOUT_MS = 4000

TRUSTED_BASE = ("the kernel (grpo_verify.proof: kernel, definedness, decide, smt), SymPy's exact arithmetic, "
                "normalisations, assumption system, derivative formulas and real-root isolation, z3's nlsat "
                "procedure, the exact matrix rank (matrices.py: minimal polynomials as the zero test, the rank over "
                "a field of rational functions as an upper bound), and the evaluation rules of the operators the "
                "derivations define (the expectation E in D5 and D8 applies linearity only; D9's E_iid counts "
                "the index tuples of each coincidence pattern of a product of sums over i.i.d. rollouts; "
                "computation() enumerations); and the textbook facts behind the kernel's rules: induction over the integers, "
                "the monotonicity of x^n on [0, oo), a sum of non-negative terms is non-negative, a product of "
                "positive (non-negative) factors is positive (non-negative), binomial(n, k) > 0 for integers "
                "0 <= k <= n, b^x > 0 for b > 0 (b^x >= 0 for b >= 0 and an integer x >= 0), the rank of an "
                "idempotent matrix is its trace, a triangular matrix with a nonzero diagonal has full rank")

__all__ = ["KernelError", "check", "ObligationReport", "StepReport", "ResultReport"]


# -- reports -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ObligationReport:
    condition: str  # printed condition
    reason: str
    status: Status
    route: str
    latex: str = ""  # the condition in LaTeX


@dataclass(frozen=True)
class StepReport:
    index: int
    rule: str
    relation: str
    status: Status
    seconds: float
    detail: str = ""  # how it was decided, or the counterexample
    route: str = ""  # "SymPy", "z3", "SymPy and z3", "" when undecided
    disagreement: bool = False


@dataclass(frozen=True)
class ResultReport:
    name: str
    status: Status
    steps: tuple[StepReport, ...]
    seconds: float
    scope: str  # "symbolic" or e.g. "R = 2..16"
    consistency: str = ""  # how the assumptions were shown consistent
    obligations: tuple[ObligationReport, ...] = ()

    def summary(self) -> str:
        lines = [f"{self.name}: {self.status.value} ({self.scope}; {self.seconds:.2f} s)"]
        if self.consistency:
            lines.append(f"  assumptions: {self.consistency}")
        for s in self.steps:
            route = f" via {s.route}" if s.route else ""
            lines.append(f"  step {s.index} [{s.rule}] {s.status.value}{route}: {s.detail} ({s.seconds:.2f} s)")
        return "\n".join(lines)

    @property
    def disagreements(self) -> list[StepReport]:
        return [s for s in self.steps if s.disagreement]


# -- the context of a result -------------------------------------------------------------------

def assumption_formulas(a: "Assumption") -> list[sp.Basic]:
    """The booleans an assumption contributes (none for a ``for_all`` one: see ``quantified_of``)."""
    out = []
    if a.for_all is not None:
        return out
    if a.condition is not None:
        out.append(sp.sympify(a.condition))
    if a.domain is not None:
        symbol, domain = a.domain
        out.append(domain.as_relational(symbol))
    if a.positive is not None:
        out.append(sp.Gt(sp.sympify(a.positive), 0))
    if a.equation is not None:
        out.append(sp.Eq(*a.equation, evaluate=False))
    return out


def hypotheses_of(result: "Result") -> list[sp.Basic]:
    """Every boolean the result assumes, with the definedness of what its assumptions mention."""
    hyps: list[sp.Basic] = []
    for a in result.assumptions:
        for h in assumption_formulas(a):
            if h is sp.true:
                continue
            for o in definedness.obligations(h):
                if not o.local:  # an assumption about 1/x presupposes x != 0
                    hyps.append(o.condition)
            hyps.append(h)
    return list(dict.fromkeys(hyps))


def quantified_of(result: "Result") -> list[tuple[sp.Symbol, sp.Basic, sp.Basic, sp.Basic]]:
    """The result's hypotheses for every integer of a range, as (index, lo, hi, condition), each with
    the index renamed to one canonical dummy (so that equal hypotheses compare equal)."""
    out = []
    for a in result.assumptions:
        if a.for_all is not None:
            index, lo, hi = a.for_all
            condition = sp.sympify(a.condition)
            for o in definedness.obligations(condition):  # a hypothesis about 1/x_a presupposes x_a != 0
                if not o.local:
                    out.append(_canonical_quantified(index, sp.sympify(lo), sp.sympify(hi), o.condition))
            out.append(_canonical_quantified(index, sp.sympify(lo), sp.sympify(hi), condition))
    return list(dict.fromkeys(out))


_QUANTIFIED_INDEX = sp.Dummy("q", integer=True)


def _canonical_quantified(index, lo, hi, condition) -> tuple:
    return (_QUANTIFIED_INDEX, lo, hi, _prepared(condition.xreplace({index: _QUANTIFIED_INDEX})))


def _quantified_instances(ctx: decide.Context, j: sp.Symbol, lo: sp.Basic, hi: sp.Basic) -> list[sp.Basic]:
    """The quantified hypotheses at the integer ``j`` of ``lo..hi``, for those whose range is shown to
    contain ``lo..hi``."""
    out = []
    for index, qlo, qhi, condition in ctx.quantified:
        if prove_condition(sp.Ge(lo, qlo), ctx)[0] and prove_condition(sp.Le(hi, qhi), ctx)[0]:
            out.append(condition.xreplace({index: j}))
    return out


def symbol_domains(result: "Result") -> list[tuple[sp.Basic, str]]:
    """Every symbol, indexed family and function the result mentions, with the domain the kernel
    uses for it (SymPy's assumptions on it): these are hypotheses as much as the stated ones."""
    from sympy.core.function import AppliedUndef

    exprs = [result.lhs, result.rhs, *(s.expr for s in result.steps)]
    for a in result.assumptions:
        if a.for_all is not None:  # its index is bound: written as a sum over the range, for the scan
            exprs.append(sp.Sum(sp.Piecewise((1, a.condition), (0, True)), tuple(a.for_all)))
            continue
        exprs += [e for e in (a.condition, a.positive, *(a.equation or ())) if e is not None]
        if a.domain is not None:
            exprs.append(a.domain[0])
    found: dict[sp.Basic, str] = {}
    for e in exprs:
        e = sp.sympify(e)
        atoms = e.atoms(sp.Symbol, sp.Indexed, AppliedUndef) if not isinstance(e, sp.MatrixBase) else \
            set().union(*[x.atoms(sp.Symbol, sp.Indexed, AppliedUndef) for x in e])
        bound = {v for node in sp.preorder_traversal(e) if isinstance(node, (sp.Sum, sp.Product, sp.Lambda))
                 for v in node.variables} if not isinstance(e, sp.MatrixBase) else set()
        labels = {a.base.label for a in atoms if isinstance(a, sp.Indexed)}
        for atom in atoms:
            key = atom.base if isinstance(atom, sp.Indexed) else atom.func if isinstance(atom, AppliedUndef) else atom
            if key in found or (isinstance(atom, sp.Symbol) and (atom in bound or atom in labels)):
                continue
            found[key] = _domain_text(atom)
    return sorted(found.items(), key=lambda kv: str(kv[0]))


def _domain_text(atom: sp.Basic) -> str:
    from sympy.core.function import AppliedUndef

    kind = "integer" if atom.is_integer else "real"
    sign = next((text for key, text in (("positive", "> 0"), ("nonnegative", ">= 0"), ("negative", "< 0"),
                                        ("nonpositive", "<= 0"), ("nonzero", "!= 0")) if getattr(atom, f"is_{key}")),
                "")
    if isinstance(atom, AppliedUndef):
        return f"a smooth {kind} function{(' with values ' + sign) if sign else ''}"
    if isinstance(atom, sp.Indexed):
        return f"{kind}{(' ' + sign) if sign else ''}, every entry"
    return f"{kind}{(' ' + sign) if sign else ''}"


def context_of(result: "Result") -> decide.Context:
    hyps = hypotheses_of(result)
    domains = {a.domain[0]: a.domain[1] for a in result.assumptions if a.domain is not None}
    # equation assumptions are hypotheses everywhere, but rewrite only in the steps that cite them
    return decide.Context(hypotheses=[_prepared(h) for h in hyps], domains=domains, rewrites=[],
                          quantified=quantified_of(result),
                          universal=any(a.equation is not None and a.for_every for a in result.assumptions))


def _prepared(h: sp.Basic) -> sp.Basic:
    """A hypothesis with bound indices canonical and sums evaluated, to match prepared link sides."""
    try:
        return decide.canonical_indices(decide.doit(h))
    except Exception:  # noqa: BLE001
        return h


# -- deciding conditions (obligations, cited hypotheses) ------------------------------------------

_RELATIONAL = {sp.Eq: "=", sp.Ne: "!=", sp.Lt: "<", sp.Le: "<=", sp.Gt: ">", sp.Ge: ">="}


def prove_condition(cond: sp.Basic, ctx: decide.Context, local: Sequence[sp.Basic] = ()) -> tuple[bool, str]:
    """Does ``cond`` follow from the context (and the local hypotheses)? Returns (proved, route)."""
    cond = _prepared(sp.sympify(cond))
    if cond is sp.true:
        return True, "immediate"
    if cond is sp.false:
        return False, ""
    hyps = list(ctx.hypotheses) + [_prepared(h) for h in local]
    if cond in hyps:
        return True, "an assumption"
    if isinstance(cond, sp.And):
        results = [prove_condition(c, ctx, local) for c in cond.args]
        return all(ok for ok, _ in results), ", ".join(sorted({r for ok, r in results if ok}))
    rel = _RELATIONAL.get(type(cond))
    if rel is not None and sympy_route(cond.lhs, rel, cond.rhs, replace(ctx, hypotheses=hyps)).verdict is True:
        return True, "SymPy"
    if smt is not None:
        outcome = smt.entails(hyps, cond, timeout_ms=SMT_TIMEOUT_MS)
        if outcome.verdict is smt.Verdict.HOLDS:
            return True, "z3"
    return False, ""


_CONSISTENCY: dict = {}  # assumption sets recur across results (and in the deletion test)


def sympy_route(a: sp.Basic, relation: str, b: sp.Basic, ctx: decide.Context) -> decide.Outcome:
    """``a <relation> b`` by the SymPy route."""
    if relation == "=":
        return decide.equality(a, b, ctx)
    if relation == "!=":
        return decide.disequality(a, b, ctx)
    bigger, smaller = (b, a) if relation in ("<=", "<") else (a, b)
    return decide.inequality(bigger - smaller, relation in ("<", ">"), ctx)


def consistency(hypotheses: Sequence[sp.Basic], ctx: decide.Context) -> tuple[bool | None, str]:
    """True: shown consistent; False: contradictory; None: not contradictory as far as z3 sees."""
    key = (tuple(hypotheses), tuple(sorted(ctx.domains.items(), key=str)))
    if key not in _CONSISTENCY:
        _CONSISTENCY[key] = _consistency(hypotheses, ctx)
    return _CONSISTENCY[key]


def _consistency(hypotheses: Sequence[sp.Basic], ctx: decide.Context) -> tuple[bool | None, str]:
    hyps = [h for h in hypotheses if h is not sp.true]
    if any(h is sp.false for h in hyps):
        return False, "an assumption is false"
    if not hyps:
        return True, "no assumptions beyond the symbol domains"
    interpreted = _interpreted_atoms(hyps)
    abstraction_satisfiable = False
    if smt is not None:
        outcome = smt.satisfiable(hyps, timeout_ms=SMT_TIMEOUT_MS)
        if outcome.verdict is smt.Verdict.FAILS:
            return False, f"the assumptions are contradictory (z3: unsatisfiable; {outcome.detail})"
        if outcome.verdict is smt.Verdict.HOLDS:
            return True, "consistent: z3 found a model, checked exactly"
        abstraction_satisfiable = "an assignment exists" in outcome.detail  # z3: sat, but only relaxed
    witness = decide.find_witness(hyps, ctx)
    if witness is not None:
        return True, f"consistent: every assumption holds exactly at {witness}"
    if not abstraction_satisfiable:
        return False, ("refused: the consistency of the assumptions could not be established (z3 undecided, "
                       "no exact witness)")
    if interpreted:
        return False, ("refused: the consistency of the assumptions could not be established: z3 sees "
                       f"{sp.sstr(interpreted[0])} only as an opaque number, and no exact witness was found")
    return None, ("not contradictory as far as the kernel can see: z3 finds the assumptions' arithmetic "
                  "(sums, expectations and functions as opaque atoms) satisfiable, but no exact model was found")


def sum_sign(e: sp.Basic, strict: bool, ctx: decide.Context) -> str:
    """``e >= 0`` (``> 0`` if strict) for ``e`` a sum of terms ``c * Sum(f, (j, lo, hi))`` with constant
    ``c > 0``: each ``f`` must be ``>= 0`` (``> 0``) wherever ``lo <= j <= hi``, hypotheses about a free
    ``j`` being set aside, and, for a strict claim, one of the ranges must be non-empty. A sum of
    non-negative terms is non-negative; of positive terms over a non-empty range, positive. The terms are
    read as written and, failing that, after expanding (which also splits the sums' bodies)."""
    if isinstance(e, sp.Sum):
        return _terms_sign((e,), strict, ctx)
    return _terms_sign(sp.Add.make_args(e), strict, ctx) or _terms_sign(sp.Add.make_args(sp.expand(e)), strict, ctx)


def _terms_sign(terms: Sequence[sp.Basic], strict: bool, ctx: decide.Context) -> str:
    nonempty = False
    for term in terms:
        coefficient, sums = sp.S.One, []
        for factor in sp.Mul.make_args(term):
            if isinstance(factor, sp.Sum):
                sums.append(factor)
            else:
                coefficient *= factor
        if len(sums) != 1 or len(sums[0].limits) != 1:
            return ""
        if not prove_condition(sp.Gt(coefficient, 0), ctx)[0]:
            # c * Sum(f) = (-c) * Sum(-f): a negative coefficient moves into the body
            if not prove_condition(sp.Lt(coefficient, 0), ctx)[0]:
                return ""
            sums[0] = sp.Sum(-sums[0].function, *sums[0].limits)
        (total,) = sums
        j, lo, hi = total.limits[0]
        here = replace(ctx, hypotheses=[h for h in ctx.hypotheses if j not in h.free_symbols])
        body = total.function
        local = (sp.Ge(j, lo), sp.Le(j, hi), *_quantified_instances(here, j, lo, hi))
        if not (prove_condition(sp.Gt(body, 0) if strict else sp.Ge(body, 0), here, local)[0]
                or product_sign(body, strict, here, local)):
            return ""
        nonempty = nonempty or (strict and prove_condition(sp.Ge(hi, lo), ctx)[0])
    if strict and not nonempty:
        return ""
    return "a sum of " + ("positive terms over a non-empty range" if strict else "non-negative terms")


def product_sign(e: sp.Basic, strict: bool, ctx: decide.Context, local: Sequence[sp.Basic] = ()) -> str:
    """``e >= 0`` (``> 0`` if strict) for ``e`` a product whose every factor is proved ``>= 0`` (``> 0``):
    by the routes of ``prove_condition``, or by one of two textbook facts the routes do not know:
    ``binomial(n, k) > 0`` for integers ``0 <= k <= n``, and ``b**x > 0`` for real ``x`` and ``b > 0``
    (``b**x >= 0`` for ``b >= 0`` and an integer ``x >= 0``, since ``0**0 = 1``). A product of positive
    (non-negative) numbers is positive (non-negative)."""
    factors = sp.Mul.make_args(e)
    if len(factors) < 2:
        return ""

    def proved(condition: sp.Basic) -> bool:
        return prove_condition(condition, ctx, local)[0]

    for factor in factors:
        if proved(sp.Gt(factor, 0) if strict else sp.Ge(factor, 0)):
            continue
        if isinstance(factor, sp.binomial):
            n, k = factor.args
            if n.is_integer is True and k.is_integer is True and proved(sp.Ge(k, 0)) and proved(sp.Ge(n, k)):
                continue
            return ""
        if isinstance(factor, sp.Pow) and not factor.exp.is_number:
            base, x = factor.args
            if x.is_real is True and proved(sp.Gt(base, 0)):
                continue
            if not strict and x.is_integer is True and proved(sp.Ge(x, 0)) and proved(sp.Ge(base, 0)):
                continue
        return ""
    return "a product of " + ("positive" if strict else "non-negative") + " factors"


def power_monotonicity(e: sp.Basic, strict: bool, ctx: decide.Context) -> str:
    """``c (a^n - b^n) >= 0`` (``> 0`` if strict) for a symbolic integer exponent ``n``: ``x -> x^n`` is
    non-decreasing on ``[0, oo)`` for an integer ``n >= 0`` and increasing for ``n >= 1``, since
    ``a^n - b^n = (a - b) sum_{j<n} a^j b^(n-1-j)`` with every term ``>= 0``. Side conditions, each
    proved from the assumptions: ``c > 0``, ``b >= 0``, ``a >= b`` and ``n >= 0`` (strict: ``a > b``,
    ``n >= 1``). ``e`` must be exactly two terms ``c a^n`` and ``-c b^n``."""
    terms = sp.Add.make_args(sp.expand(e, power_base=False, power_exp=False, mul=True, multinomial=False))
    if len(terms) != 2:
        return ""
    parts = []
    for term in terms:
        powers = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.Pow) and not f.exp.is_number]
        if len(powers) != 1:
            return ""
        (power,) = powers
        parts.append((power.base, power.exp, sp.Mul(*[f for f in sp.Mul.make_args(term) if f is not power])))
    (a, n, c), (b, m, minus_c) = parts
    if n != m or n.is_integer is not True or sp.simplify(c + minus_c) != 0:
        return ""
    if not prove_condition(sp.Gt(c, 0), ctx)[0]:
        (a, _, c), (b, _, minus_c) = (b, n, minus_c), (a, n, c)
        if not prove_condition(sp.Gt(c, 0), ctx)[0]:
            return ""
    conditions = [sp.Ge(b, 0), sp.Gt(a, b) if strict else sp.Ge(a, b), sp.Ge(n, 1) if strict else sp.Ge(n, 0)]
    if all(prove_condition(cond, ctx)[0] for cond in conditions):
        return (f"x -> x^n {'increases' if strict else 'does not decrease'} on [0, oo) for the integer "
                f"n = {sp.sstr(n)} {'>= 1' if strict else '>= 0'}: {sp.sstr(a)} {'>' if strict else '>='} "
                f"{sp.sstr(b)} >= 0")
    return ""


def symbolic_ranks(e: sp.Basic, ctx: decide.Context, cache: dict) -> tuple[sp.Basic, str]:
    """Each ``MatrixRank(SquareMatrix(n, entry))`` of symbolic size replaced by what one of two rules
    proves, the entries being decided by the kernel for integers ``i, j`` in ``1..n``:
      * idempotent: ``Sum(entry(i, l) entry(l, j), (l, 1, n)) = entry(i, j)``; the rank of an
        idempotent matrix is its trace, ``Sum(entry(i, i), (i, 1, n))`` (its eigenvalues are 0 and 1
        and it is diagonalisable);
      * triangular: ``entry(i, j) = 0`` for every ``i < j`` (or for every ``i > j``) and
        ``entry(i, i) != 0``: the determinant is the product of the diagonal, so the rank is ``n``.
    A rank neither rule decides is left as it is."""
    from grpo_verify.proof.matrices import MatrixRank, SquareMatrix

    if not isinstance(e, sp.Basic) or isinstance(e, sp.MatrixBase):
        return e, ""
    replacements, how = {}, []
    for node in e.atoms(MatrixRank):
        matrix = node.args[0]
        if not isinstance(matrix, SquareMatrix) or matrix.size.is_Integer:
            continue
        size, entry = matrix.size, matrix.entry
        key = ("symbolic rank", matrix)
        if key not in cache:
            a, b, l = (sp.Dummy(name, integer=True) for name in "ijl")
            inside = [sp.Ge(a, 1), sp.Le(a, size), sp.Ge(b, 1), sp.Le(b, size)]

            def holds(lhs, relation, rhs, local) -> bool:
                here = replace(ctx, hypotheses=list(ctx.hypotheses) + local)
                return decide_link(lhs, relation, rhs, here, {}).status is Status.PROVED

            square = sp.Sum(entry(a, l) * entry(l, b), (l, 1, size))
            if holds(square, "=", entry(a, b), inside):
                t = sp.Dummy("i", integer=True)
                cache[key] = (sp.Sum(entry(t, t), (t, 1, size)), "rank = trace of the idempotent")
            elif holds(entry(a, a), "!=", sp.Integer(0), inside[:2]) and (
                    holds(entry(a, b), "=", sp.Integer(0), inside + [sp.Lt(a, b)])
                    or holds(entry(a, b), "=", sp.Integer(0), inside + [sp.Gt(a, b)])):
                cache[key] = (size, "rank = size of the triangular matrix with a nonzero diagonal")
            else:
                cache[key] = None
        if cache[key] is not None:
            replacements[node], rule = cache[key]
            how.append(f"{rule} {sp.sstr(matrix)}")
    if not replacements:
        return e, ""
    return decide.doit(e.xreplace(replacements)), "; ".join(how)


def resolve_piecewise(e: sp.Basic, ctx: decide.Context) -> sp.Basic:
    """Each ``Piecewise`` replaced by the branch the assumptions select (the first branch whose
    condition is proved, every earlier condition being refuted by proof); left as it is if any
    condition is undecided."""
    if not isinstance(e, sp.Basic) or not e.has(sp.Piecewise):
        return e
    # a Lambda's variables are bound: hypotheses about free symbols of the same names say nothing of them,
    # so whatever holds a Lambda (a SquareMatrix's entry) is set aside whole
    holders = [node for node in sp.preorder_traversal(e) if isinstance(node, sp.Lambda)
               or any(isinstance(a, sp.Lambda) for a in getattr(node, "args", ()))]
    outermost = {node: sp.Dummy("lambda") for node in holders if not any(o != node and o.has(node) for o in holders)}
    if outermost:
        return resolve_piecewise(e.xreplace(outermost), ctx).xreplace({d: node for node, d in outermost.items()})
    replacements = {}
    for node in sp.postorder_traversal(e):
        if isinstance(node, sp.Piecewise) and node not in replacements:
            for branch, cond in node.args:
                if cond is sp.true or prove_condition(cond, ctx)[0]:
                    replacements[node] = branch
                    break
                if not prove_condition(sp.Not(cond), ctx)[0]:
                    break
    return e.xreplace(replacements) if replacements else e


def _interpreted_atoms(hypotheses: Sequence[sp.Basic]) -> list[sp.Basic]:
    """Subterms the z3 abstraction reads as free numbers although they are not: SymPy's own
    functions (sin, exp, floor, ...) and sums or products of fixed terms. An abstraction that is
    satisfiable proves nothing about them (sin(x) > 1 is satisfiable with sin(x) opaque), whereas
    undefined functions, the derivations' own operators and sums over indexed families are free
    by construction (their only laws are the stated assumptions)."""
    from sympy.core.function import AppliedUndef

    found = []
    for h in hypotheses:
        for node in sp.preorder_traversal(h):
            if isinstance(node, (sp.Abs, sp.Min, sp.Max, sp.Piecewise)):
                continue  # z3 translates the first three exactly; a Piecewise is free if its branches are
            if isinstance(node, sp.Function) and not isinstance(node, AppliedUndef) \
                    and type(node).__module__.startswith("sympy"):
                found.append(node)
            elif isinstance(node, (sp.Sum, sp.Product)) and not node.function.atoms(sp.Indexed, AppliedUndef) \
                    and not any(type(f).__module__.split(".")[0] != "sympy" for f in node.function.atoms(sp.Function)):
                found.append(node)
    return found


# -- deciding one link -------------------------------------------------------------------------

@dataclass
class _Link:
    status: Status
    detail: str
    route: str = ""
    disagreement: bool = False
    obligations: list[ObligationReport] = field(default_factory=list)


def _relation(a: sp.Basic, rel: str, b: sp.Basic) -> sp.Basic:
    if isinstance(a, sp.MatrixBase) or isinstance(b, sp.MatrixBase):
        if rel != "=" or not (isinstance(a, sp.MatrixBase) and isinstance(b, sp.MatrixBase)) or a.shape != b.shape:
            return None
        return sp.And(*[sp.Eq(x, y) for x, y in zip(a, b)])
    return {name: cls for cls, name in _RELATIONAL.items()}[rel](a, b, evaluate=False)


def discharge(expressions: Sequence[sp.Basic], ctx: decide.Context, cache: dict) -> tuple[list[ObligationReport], str]:
    """Definedness of every expression; returns the reports and the first failure ("" if none)."""
    reports, failure = [], ""
    for e in expressions:
        try:
            obligations = definedness.obligations(e)
        except KernelError as exc:
            return reports, str(exc)
        for o in obligations:
            key = (o.condition, o.local, o.kink, o.bound)
            if key not in cache:
                # hypotheses about a free symbol say nothing of a bound symbol of the same name
                here = replace(ctx, hypotheses=[h for h in ctx.hypotheses if not (h.free_symbols & set(o.bound))]) \
                    if o.bound else ctx
                cache[key] = prove_condition(o.condition, here, o.local)
                if o.kink and not cache[key][0]:
                    cache[key] = smooth_by_rewriting(o, here)
            ok, route = cache[key]
            reports.append(ObligationReport(sp.sstr(o.condition), o.reason,
                                            Status.PROVED if ok else Status.UNPROVED, route, sp.latex(o.condition)))
            if not ok and not failure:
                failure = f"not shown to be defined: {o.reason} (needs {sp.sstr(o.condition)})"
    return reports, failure


def _open_in(v: sp.Symbol, hypotheses: Sequence[sp.Basic], domains: dict) -> bool:
    """Whether the admissible values of ``v`` (the others fixed) form an open set: ``v`` is a real,
    non-integer symbol without a closed sign condition, and every hypothesis mentioning it is strict."""
    if v.is_integer or v.is_real is not True:
        return False
    if (v.is_nonnegative and not v.is_positive) or (v.is_nonpositive and not v.is_negative):
        return False
    domain = domains.get(v)
    if domain is not None and not (isinstance(domain, sp.Interval) and domain.left_open and domain.right_open):
        return False

    def strict(h: sp.Basic) -> bool:
        if not h.has(v):
            return True
        if isinstance(h, sp.And):
            return all(strict(a) for a in h.args)
        return isinstance(h, (sp.StrictLessThan, sp.StrictGreaterThan, sp.Unequality))

    return all(strict(h) for h in hypotheses)


def smooth_by_rewriting(o: definedness.Obligation, ctx: decide.Context) -> tuple[bool, str]:
    """A derivative of a kinked function, discharged if an equation that holds here (an equation
    assumption or a cited result, valid at every admissible point) rewrites the function into a
    smooth one and the admissible values of the variable form an open set: two functions equal on
    an open set have equal derivatives there. At a point (``Subs``) the point must be admissible."""
    f, v, point, _order = o.kink
    g = f
    for rewrite in ctx.rewrites:  # only equations that hold on an open set around where the derivative is taken
        if len(rewrite) > 3 and v in (rewrite[3] if point is not None else rewrite[2]):
            g = g.subs(rewrite[0], rewrite[1])
    if definedness.kinks(g, v) or not _open_in(v, ctx.hypotheses, ctx.domains):
        return False, ""
    if point is not None:
        for key in ("positive", "negative", "nonzero"):
            if getattr(v, f"is_{key}") and getattr(point, f"is_{key}") is not True:
                return False, ""
        for h in ctx.hypotheses:
            if h.has(v) and not prove_condition(h.subs(v, point), ctx)[0]:
                return False, ""
    return True, "smooth after rewriting, on an open set"


def decide_link(previous: sp.Basic, relation: str, expr: sp.Basic, ctx: decide.Context,
                cache: dict) -> _Link:
    """``previous <relation> expr`` decided under ``ctx``: proved, refuted (an exact counterexample) or
    unproved."""
    obligations, failure = discharge([previous, expr], ctx, cache)
    if failure:
        return _Link(Status.UNPROVED, failure, obligations=obligations)
    a, b = decide.prepare(previous, ctx.rewrites), decide.prepare(expr, ctx.rewrites)
    (a, how_a), (b, how_b) = symbolic_ranks(a, ctx, cache), symbolic_ranks(b, ctx, cache)
    ranks = "; ".join(x for x in (how_a, how_b) if x)
    if ranks:
        link = decide_link(a, relation, b, ctx, cache)
        return replace(link, detail=f"{ranks}; then {link.detail}", route=link.route and f"symbolic rank rule, "
                       f"{link.route}")
    for side in (a, b):
        if isinstance(side, sp.Basic) and side.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I):
            return _Link(Status.UNPROVED, f"a side evaluates to {sp.sstr(side)}, which is not a real number",
                         obligations=obligations)
    conditions = [o.condition for e in (previous, expr) for o in definedness.obligations(e) if not o.local]
    ctx = replace(ctx, obligations=conditions)
    a, b = resolve_piecewise(a, ctx), resolve_piecewise(b, ctx)
    # the searches for counterexamples check the hypotheses at one point, which cannot show a hypothesis
    # for every index or an equation for every value of a variable: with either, nothing is refuted here
    # and the rules are still tried
    refutable = not ctx.quantified and not ctx.universal
    early = decide.find_counterexample(a, relation, b, ctx, tries=2, seed=1) if refutable else None
    if early:
        return _Link(Status.REFUTED, early, "exact evaluation", obligations=obligations)
    # a sum over a symbolic range: z3 sees it as an opaque number and SymPy's normalisations of it can run
    # to their time limit, so the sum rule, which decides it from its terms, goes first
    if relation in ("<", "<=", ">", ">=") and any(not all(end.is_number for end in limit[1:])
                                                   for total in (a - b).atoms(sp.Sum) for limit in total.limits):
        rule = _sign_rule(a, relation, b, ctx)
        if rule is not None:
            return replace(rule, obligations=obligations)

    sym = sympy_route(a, relation, b, ctx)
    if sym.verdict is False and not refutable:
        sym = decide.Outcome(None, sym.detail)

    z3_verdict, z3_detail = None, ""
    goal = _relation(a, relation, b)
    if smt is not None and goal is not None:
        outcome = smt.entails(list(ctx.hypotheses) + conditions, goal, timeout_ms=SMT_TIMEOUT_MS)
        z3_verdict = {smt.Verdict.HOLDS: True, smt.Verdict.FAILS: False if refutable else None}.get(outcome.verdict)
        z3_detail = outcome.detail

    if sym.verdict is not None and z3_verdict is not None and sym.verdict != z3_verdict:
        return _Link(Status.UNPROVED, f"the two procedures DISAGREE: SymPy says {sym.verdict} ({sym.detail}); "
                     f"z3 says {z3_verdict} ({z3_detail})", "", True, obligations)
    if sym.verdict is True:
        route = "SymPy and z3" if z3_verdict is True else "SymPy"
        return _Link(Status.PROVED, sym.detail, route, obligations=obligations)
    if z3_verdict is True:
        return _Link(Status.PROVED, f"z3 (nlsat): {z3_detail}", "z3", obligations=obligations)
    if sym.verdict is None and relation not in ("=", "!="):
        rule = _sign_rule(a, relation, b, ctx)
        if rule is not None:
            return replace(rule, obligations=obligations)
    if sym.verdict is False:
        return _Link(Status.REFUTED, sym.detail, "SymPy", obligations=obligations)
    if z3_verdict is False:
        return _Link(Status.REFUTED, f"z3 counterexample, checked exactly: {z3_detail}", "z3",
                     obligations=obligations)
    counter = decide.find_counterexample(a, relation, b, ctx) if refutable else None
    if counter:
        return _Link(Status.REFUTED, counter, "exact evaluation", obligations=obligations)
    return _Link(Status.UNPROVED, "no exact procedure decided this link and no counterexample was found",
                 obligations=obligations)


def _sign_rule(a: sp.Basic, relation: str, b: sp.Basic, ctx: decide.Context) -> _Link | None:
    """``a <relation> b`` proved by the sum, product or power rule, or None."""
    bigger, smaller = (b, a) if relation in ("<=", "<") else (a, b)
    strict = relation in ("<", ">")
    for rule, name in ((sum_sign, "sum rule"), (product_sign, "product rule"), (power_monotonicity, "power rule")):
        how = rule(bigger - smaller, strict, ctx)
        if how:
            return _Link(Status.PROVED, how, name)
    return None


# -- citations ---------------------------------------------------------------------------------

@dataclass
class _Citations:
    rewrites: list[tuple[sp.Basic, sp.Basic]]
    status: Status
    scopes: list[str]
    failure: str
    facts: list[sp.Basic] = field(default_factory=list)  # cited inequalities: hypotheses of the step


_SIGN_CONDITIONS = (("positive", sp.Gt), ("nonnegative", sp.Ge), ("negative", sp.Lt), ("nonpositive", sp.Le),
                    ("nonzero", sp.Ne))
_OTHER_PROPERTIES = decide.DECLARED_PROPERTIES  # parity, primality, ...: a value must have them exactly
# every declared property a number put in for a symbol must have
_DECLARED_KEYS = ("integer", *(key for key, _ in _SIGN_CONDITIONS), *_OTHER_PROPERTIES)


def _bound_symbols(e: sp.Basic) -> set:
    """The variables some binder in ``e`` binds (sums, products, derivatives, Subs, lambdas)."""
    exprs = list(e) if isinstance(e, sp.MatrixBase) else [e]
    out: set = set()
    for x in exprs:
        for node in sp.preorder_traversal(sp.sympify(x)):
            if isinstance(node, (sp.Sum, sp.Product)):
                out |= set(node.variables)
            elif isinstance(node, (sp.Derivative, sp.Subs)):
                out |= set(node.variables)
            elif isinstance(node, sp.Lambda):
                out |= set(node.variables)
    return out


def instantiate(lemma: "Result", values: dict, ctx: decide.Context) -> tuple[sp.Basic, sp.Basic, str]:
    """The statement of a proved ``lemma`` at ``values`` of its free symbols, or a failure: each value
    lies in its symbol's declared domain, the lemma's hypotheses hold at the values (proved here), no
    value is captured by a binder and no value replaces a variable something is differentiated in."""
    statement = [lemma.lhs, lemma.rhs]
    hypotheses = hypotheses_of(lemma)
    free: set = set()
    for e in statement + hypotheses:
        e = sp.sympify(e)
        free |= set().union(*[x.free_symbols for x in e]) if isinstance(e, sp.MatrixBase) else e.free_symbols
    bound = set().union(*[_bound_symbols(e) for e in statement + hypotheses])
    labels = set().union(*[{a.base.label for a in sp.sympify(e).atoms(sp.Indexed)}
                           for e in statement + hypotheses if not isinstance(e, sp.MatrixBase)])
    for v, value in values.items():
        if v in labels:
            return 0, 0, f"{sp.sstr(v)} names an indexed family of {lemma.name}; instances give values to symbols"
        if v not in free:
            return 0, 0, f"{sp.sstr(v)} is not a free symbol of {lemma.name}"
        if v in bound:
            return 0, 0, f"{lemma.name} binds or differentiates in {sp.sstr(v)}: it cannot be instantiated there"
        if value.free_symbols & bound:
            return 0, 0, (f"the value {sp.sstr(value)} of {sp.sstr(v)} mentions a variable that {lemma.name} binds "
                          "(it would be captured)")
        if v.is_integer and value.is_integer is not True:
            return 0, 0, f"{sp.sstr(v)} is an integer in {lemma.name}, and {sp.sstr(value)} is not known to be one"
        if value.is_real is not True:
            # built from real symbols, a value is real wherever it is defined (validate refuses I)
            _reports, undefined = discharge([value], ctx, {})
            if undefined or value.has(sp.I):
                return 0, 0, f"{sp.sstr(value)} is not shown to be a defined real number here: {undefined}"
        for key, relation in _SIGN_CONDITIONS:
            if getattr(v, f"is_{key}") and not prove_condition(relation(value, 0), ctx)[0]:
                return 0, 0, (f"{sp.sstr(v)} is declared {key} in {lemma.name}, and {sp.sstr(value)} is not shown "
                              "to be")
        for key in _OTHER_PROPERTIES:
            if getattr(v, f"is_{key}") and getattr(value, f"is_{key}") is not True:
                return 0, 0, f"{sp.sstr(v)} is declared {key} in {lemma.name}, and {sp.sstr(value)} is not known to be"
    at = lambda e: sp.sympify(e).subs(values, simultaneous=True)  # noqa: E731
    for h in hypotheses:
        if not prove_condition(at(h), ctx)[0]:
            return 0, 0, f"the hypothesis {sp.sstr(h)} of {lemma.name} is not shown to hold at {sp.sstr(values)}"
    return at(lemma.lhs), at(lemma.rhs), ""


def cite(result: "Result", using: Sequence, ctx: decide.Context) -> _Citations:
    """Rewrites and facts from cited results, their instances and assumptions; a cited result's
    hypotheses must follow here. A cited equation rewrites; a cited inequality (or an instance of one)
    is a hypothesis of the step at the current point."""
    from grpo_verify.proof.result import Assumption, Instance, Result

    rewrites: list[tuple[sp.Basic, sp.Basic]] = []
    facts: list[sp.Basic] = []
    statuses: list[Status] = []
    scopes: list[str] = []

    def refuse(text: str) -> _Citations:
        return _Citations(rewrites, Status.UNPROVED, scopes, text, facts)

    for fact in using:
        if isinstance(fact, Assumption):
            if not any(fact is a for a in result.assumptions):
                return refuse(f"uses the assumption {fact.text!r}, which this result does not state")
            # pointwise, unless it states that it holds for every value of some variables
            rewrites.append((*fact.equation, frozenset(fact.for_every), frozenset(fact.for_every)))
            continue
        values: dict = {}
        if isinstance(fact, Instance):
            fact, values = fact.result, dict(fact.values)
        if not isinstance(fact, Result):
            return refuse(f"cannot use {fact!r}: cite a Result, an instance of one or an Assumption")
        if fact is result:
            return refuse("a result cannot cite itself")
        report = fact.check()
        if not report.status.passed:
            return refuse(f"cites {fact.name}, which is {report.status.value}")
        statuses.append(report.status)
        if report.status is Status.PROVED_FOR_RANGE:
            scopes.append(report.scope)
        if values and quantified_of(fact):
            return refuse(f"cites an instance of {fact.name}, which has hypotheses for every index: cite it "
                          "without values")
        if values and report.status is Status.PROVED_FOR_RANGE:
            return refuse(f"cites an instance of {fact.name}, which is proved only for {report.scope}: an instance "
                          "could lie outside it")
        if values:
            lhs, rhs, failure = instantiate(fact, values, ctx)
            if failure:
                return refuse(f"cites an instance of {fact.name}: {failure}")
            _obligations, failure = discharge([lhs, rhs], ctx, {})
            if failure:
                return refuse(f"cites an instance of {fact.name}: {failure}")
        else:
            lhs, rhs = fact.lhs, fact.rhs
            lemma_hypotheses = hypotheses_of(fact)
            for q in quantified_of(fact):
                if q not in ctx.quantified:
                    return refuse(f"cites {fact.name}, whose hypothesis {sp.sstr(q[3])} for every index in "
                                  f"{sp.sstr(q[1])}..{sp.sstr(q[2])} is not one of this result's")
            for h in lemma_hypotheses:
                ok, _route = prove_condition(h, ctx)
                if not ok:
                    return refuse(f"cites {fact.name}, whose hypothesis {sp.sstr(h)} is not shown to hold here")
        if fact.relation != "=":
            goal = _relation(lhs, fact.relation, rhs)
            if goal is None:
                return refuse(f"cites {fact.name}, whose statement is not a relation between numbers")
            facts.append(_prepared(goal))
        elif values:
            rewrites.append((lhs, rhs, frozenset(), frozenset()))  # at this point only
        else:
            identically = identically_in(fact, lemma_hypotheses)
            # a free Derivative is taken at the current point: the lemma holds around it if the current
            # admissible values of the variable form an open set (its hypotheses were shown to hold there)
            restricted = set().union(*[(q[3].free_symbols - {q[0]}) for q in ctx.quantified] or [set()])
            around_here = frozenset(v for v in sp.sympify(lhs).free_symbols | sp.sympify(rhs).free_symbols
                                    if isinstance(v, sp.Symbol) and v not in restricted
                                    and _open_in(v, ctx.hypotheses, ctx.domains))
            rewrites.append((lhs, rhs, identically | around_here, identically))
    return _Citations(rewrites, weakest(statuses), scopes, "", facts)


def identically_in(lemma: "Result", hypotheses: Sequence[sp.Basic]) -> frozenset:
    """The variables in which a proved lemma holds identically on an open set: no formal hypothesis
    mentions them and their declared domain is open (real, positive or negative, not integer). Only
    in these may its equation rewrite inside a Derivative or a Subs: two functions equal on an open
    set have equal derivatives there."""
    mentioned = set().union(*[h.free_symbols for h in hypotheses] or [set()])
    for index, lo, hi, condition in quantified_of(lemma):  # a hypothesis for every index restricts them too
        mentioned |= (condition.free_symbols - {index}) | sp.sympify(lo).free_symbols | sp.sympify(hi).free_symbols
    symbols = set(sp.sympify(lemma.lhs).free_symbols) | set(sp.sympify(lemma.rhs).free_symbols)
    return frozenset(v for v in symbols if isinstance(v, sp.Symbol) and v not in mentioned
                     and _open_in(v, [], {}))


# -- checking a result -------------------------------------------------------------------------

def check(result: "Result", *, stop_at_failure: bool = False) -> ResultReport:
    """Decide every link of ``result`` (or only up to the first link that does not pass); never raises."""
    start = time.perf_counter()
    try:
        return _check(result, start, stop_at_failure)
    except Exception as exc:  # noqa: BLE001 - a crash is a status, never a pass
        return ResultReport(result.name, Status.UNPROVED,
                            (StepReport(1, "kernel", result.relation, Status.UNPROVED, time.perf_counter() - start,
                                        f"the kernel could not check this result: {type(exc).__name__}: {exc}"),),
                            time.perf_counter() - start, "symbolic")


def _failed(result: "Result", start: float, detail: str, consistency_text: str = "") -> ResultReport:
    return ResultReport(result.name, Status.UNPROVED,
                        (StepReport(1, "kernel", result.relation, Status.UNPROVED, time.perf_counter() - start,
                                    detail),),
                        time.perf_counter() - start, "symbolic", consistency_text)


def _derived_facts(hypotheses: list[sp.Basic], ctx: decide.Context) -> list[sp.Basic]:
    """Consequences of the hypotheses that z3, which sees sums and expectations as opaque numbers, would
    miss: the hypotheses with every symbol an equation pins (n = 1, i = 1, R = k + m) put in and evaluated
    (Sum(r_j, (j, 1, n)) is r_1 once n = 1; E[r_1^n] is 1 once n = 0), and the sign the sum rule gives each
    sum over a symbolic range (a hypothesis for every index makes its terms positive). All are implied by
    the hypotheses, so adding them can only reveal a contradiction, never make one."""
    out: list[sp.Basic] = []
    pinned = decide._definitions([h for h in hypotheses if isinstance(h, sp.Equality)])
    for v, e in pinned.items():  # m declared even and pinned to 1: contradictory, though z3 drops parity
        value = decide._resolved(e, pinned)
        if isinstance(v, sp.Symbol) and value.is_number and any(
                getattr(v, f"is_{key}") and getattr(value, f"is_{key}") is False
                for key in _DECLARED_KEYS):
            return [sp.false]
    if pinned:
        for h in hypotheses:
            try:
                new = _prepared(decide._resolved(h, pinned))
            except Exception:  # noqa: BLE001 - a hypothesis that cannot be evaluated there adds nothing
                continue
            if new is sp.false:
                return [sp.false]
            if new is not sp.true and new not in hypotheses:
                out.append(new)
    sums = {total for h in hypotheses + out for total in h.atoms(sp.Sum)
            if not all(end.is_number for limit in total.limits for end in limit[1:])}
    for total in sums:
        for strict, above, below in ((True, sp.Gt, sp.Lt), (False, sp.Ge, sp.Le)):
            if sum_sign(total, strict, ctx):
                out.append(above(total, 0))
                break
            if sum_sign(-total, strict, ctx):
                out.append(below(total, 0))
                break
    return out


def _universal_instances(result: "Result", ctx: decide.Context) -> list[sp.Basic]:
    """Each equation that holds for every value of some variables, at every place where the other
    assumptions or the statement apply it (f(m) = m for every m meets f(0) = 1 as f(0) = 0): implied by the
    assumption, so adding them lets the consistency check see contradictions a single free m hides."""
    where = list(ctx.hypotheses)
    for x in (result.lhs, result.rhs, *(step.expr for step in result.steps)):
        try:
            where.append(decide.prepare(x, []))
        except Exception:  # noqa: BLE001 - a side that cannot be prepared contributes no instance
            continue
    out = []
    for a in result.assumptions:
        if a.equation is None or not a.for_every:
            continue
        lhs, rhs = (sp.sympify(side) for side in a.equation)
        wild = {v: sp.Wild(f"w_{v.name}") for v in a.for_every}
        pattern = lhs.xreplace(wild)
        for x in where:
            if not isinstance(x, sp.Basic) or isinstance(x, sp.MatrixBase):
                continue
            for node in x.find(pattern):
                match = node.match(pattern)
                if match and set(match) >= set(wild.values()):
                    out.append(sp.Eq(node, rhs.xreplace({v: match[w] for v, w in wild.items()})))
    return out


def _check(result: "Result", start: float, stop_at_failure: bool = False) -> ResultReport:
    if not result.steps and result.lhs == result.rhs:
        return _failed(result, start, "vacuous: both sides were identical as built (SymPy decided the claim "
                                      "while it was written); build them with as_written")
    ctx = context_of(result)
    # a quantified hypothesis joins the consistency check at one fresh index of its range (a necessary
    # condition: the check can only miss a contradiction, which then leaves the set undetermined)
    instances, at = [], {}
    for index, lo, hi, condition in ctx.quantified:  # one index per range, shared by its hypotheses
        if (lo, hi) not in at:
            at[lo, hi] = t = sp.Dummy("t", integer=True)
            instances += [sp.Ge(t, lo), sp.Le(t, hi)]
        instances.append(condition.xreplace({index: at[lo, hi]}))
    universal = _universal_instances(result, ctx)
    derived = _derived_facts(list(ctx.hypotheses) + universal, ctx)
    consistent, consistency_text = consistency(list(ctx.hypotheses) + instances + universal + derived, ctx)
    if consistent is True and ctx.universal:
        consistent, consistency_text = None, ("not contradictory as far as the kernel can see: z3 finds the "
                                              "assumptions satisfiable with each equation for every value taken "
                                              "where the statement and the other assumptions apply it")
    if consistent is True and instances:
        consistent, consistency_text = None, ("not contradictory as far as the kernel can see: z3 finds the "
                                              "assumptions satisfiable with each hypothesis for every index taken "
                                              "at one index")
    if consistent is False:
        detail = consistency_text if consistency_text.startswith("refused") else f"refused: {consistency_text}"
        return _failed(result, start, detail, consistency_text)

    if result.induction is not None:
        return _by_induction(result, ctx, start, consistency_text)
    if result.minimum_at is not None:
        return _by_minimum(result, ctx, start, consistency_text)
    reports: list[StepReport] = []
    obligations: list[ObligationReport] = []
    scopes: list[str] = []
    cache: dict = {}
    previous = result.lhs
    links = result.links()
    closing = [] if not result.steps else [_closing_step(result)]
    for index, step in enumerate(links + closing, start=1):
        t0 = time.perf_counter()
        citations = cite(result, step.using, ctx)
        if citations.failure:
            reports.append(StepReport(index, step.rule, step.relation, Status.UNPROVED, time.perf_counter() - t0,
                                      citations.failure))
            previous = step.expr
            if stop_at_failure:
                break
            continue
        scopes += citations.scopes
        link_ctx = replace(ctx, rewrites=list(ctx.rewrites) + citations.rewrites,
                           hypotheses=list(ctx.hypotheses) + citations.facts)
        for_each = step.for_each or result.for_each
        if for_each is not None:
            link, scope = _for_each(previous, step, link_ctx, for_each, cache)
            if link.status is Status.PROVED:
                link = replace(link, status=Status.PROVED_FOR_RANGE)
                scopes.append(scope)
        else:
            link = decide_link(previous, step.relation, step.expr, link_ctx, cache)
            if link.status is Status.UNPROVED and result.fallback is not None:
                ranged, scope = _for_each(previous, step, link_ctx, result.fallback, cache)
                if ranged.status in (Status.PROVED, Status.REFUTED):
                    link = ranged
                    if ranged.status is Status.PROVED:
                        link = replace(link, status=Status.PROVED_FOR_RANGE)
                        scopes.append(scope)
        status = weakest([link.status, citations.status])
        obligations += link.obligations
        reports.append(StepReport(index, step.rule, step.relation, status, time.perf_counter() - t0, link.detail,
                                  link.route, link.disagreement))
        previous = step.expr
        if stop_at_failure and not status.passed:
            break
    implied = result.chain_relation()
    if not _implies(implied, result.relation):
        reports.append(StepReport(len(reports) + 1, "chain relation", "=", Status.REFUTED, 0.0,
                                  f"the steps establish {implied!r}, not the stated {result.relation!r}"))
    status = weakest(r.status for r in reports)
    scope = "symbolic"
    if status is Status.PROVED_FOR_RANGE:
        scope = "; ".join(dict.fromkeys(scopes)) or "a range"
    unique = list({(o.condition, o.reason): o for o in obligations}.values())
    return ResultReport(result.name, status, tuple(reports), time.perf_counter() - start, scope, consistency_text,
                        tuple(unique))


def _rule_variable_problem(exprs: Sequence[sp.Basic], v: sp.Symbol, ctx: decide.Context) -> str:
    """Why a rule over the variable ``v`` (induction, the mean-value rule) cannot take a statement made of
    ``exprs`` ("" if it can): the statement must mention ``v`` freely, and no hypothesis for every index
    may mention it."""
    if not any(sp.sympify(e).has(v) for e in exprs):
        return f"the statement does not mention {v}"
    if v in set().union(*[_bound_symbols(e) for e in exprs]):
        return f"{v} is bound inside the statement"
    if any(q[1].has(v) or q[2].has(v) or q[3].has(v) for q in ctx.quantified):
        return f"a hypothesis for every index mentions {v}"
    return ""


def _rule_report(result: "Result", status: Status, reports: list, obligations: list, scopes: Sequence[str],
                 start: float, consistency_text: str) -> ResultReport:
    """The report of a result decided by a rule's checks (its scope: symbolic, or the cited ranges)."""
    scope = ("; ".join(dict.fromkeys(scopes)) or "a range") if status is Status.PROVED_FOR_RANGE else "symbolic"
    unique = list({(o.condition, o.reason): o for o in obligations}.values())
    return ResultReport(result.name, status, tuple(reports), time.perf_counter() - start, scope, consistency_text,
                        tuple(unique))


def _lower_bound(h: sp.Basic, n: sp.Symbol) -> bool:
    """Whether ``h`` is ``n >= c`` or ``n > c`` (either way round) for a constant ``c``: such a
    hypothesis holds at ``n + 1`` whenever it holds at ``n``."""
    if isinstance(h, sp.And):
        return all(_lower_bound(a, n) for a in h.args)
    if isinstance(h, (sp.GreaterThan, sp.StrictGreaterThan)):
        big, small = h.lhs, h.rhs
    elif isinstance(h, (sp.LessThan, sp.StrictLessThan)):
        big, small = h.rhs, h.lhs
    else:
        return False
    if small == n and big is sp.oo:  # n < oo, from an interval domain: true of every integer
        return True
    return big == n and not small.free_symbols


def _next_value(e: sp.Basic, n: sp.Symbol) -> sp.Basic:
    """``e`` at ``n + 1``, with ``x**(a + 1)`` written ``x**a * x`` for exponents containing ``n`` and
    ``Sum(f, (j, lo, n + 1))`` split into ``Sum(f, (j, lo, n)) + f(n + 1)``, so that the statement at
    ``n`` (the induction hypothesis) speaks of the same terms. Both rewrites are identities wherever
    the terms are defined (the caller discharges the definedness of the result and of ``e`` at
    ``n + 1``, and the split needs ``n >= lo - 1``, which the caller proves)."""
    e = sp.sympify(e).subs(n, n + 1)
    e = e.replace(lambda x: isinstance(x, sp.Pow) and x.exp.has(n), lambda x: sp.expand_power_exp(x))

    def split(x: sp.Basic) -> sp.Basic:
        (j, lo, hi), = x.limits
        return sp.Sum(x.function, (j, lo, hi - 1)) + x.function.subs(j, hi)

    return e.replace(lambda x: isinstance(x, sp.Sum) and len(x.limits) == 1 and x.limits[0][2] == n + 1
                     and not x.limits[0][1].has(n), split)


def _by_induction(result: "Result", ctx: decide.Context, start: float, consistency_text: str) -> ResultReport:
    """Base case and step of an induction on ``result.induction.symbol`` (see ``Induction``)."""
    n, base = result.induction.symbol, result.induction.base
    t0 = time.perf_counter()

    def refused(text: str) -> ResultReport:
        return _failed(result, start, f"induction refused: {text}", consistency_text)

    statement = [sp.sympify(result.lhs), sp.sympify(result.rhs)]
    problem = _rule_variable_problem(statement, n, ctx)
    if problem:
        return refused(problem)
    if n.is_integer is not True:
        return refused(f"{n} is not declared integer")
    declared = [key for key in ("even", "odd", "prime", "composite") if getattr(n, f"is_{key}")]
    if declared:
        return refused(f"{n} is declared {', '.join(declared)}: a step from {n} to {n} + 1 leaves its domain")
    for h in ctx.hypotheses:
        if h.has(n) and not _lower_bound(h, n):
            return refused(f"the hypothesis {sp.sstr(h)} mentions {n} and is not a constant lower bound on it: "
                           f"it need not hold at {n} + 1")
    if not prove_condition(sp.Ge(n, base), ctx)[0]:
        return refused(f"the hypotheses do not give {n} >= {base}: values below the base case would be claimed")
    citations = cite(result, result.using, ctx)
    if citations.failure:
        return _failed(result, start, citations.failure, consistency_text)
    for rewrite in citations.rewrites:
        if rewrite[0].has(n) or rewrite[1].has(n):
            return refused(f"the rewrite {sp.sstr(rewrite[0])} = {sp.sstr(rewrite[1])} mentions {n}: it is "
                           "established at n, and the step needs it at n + 1")
    link_ctx = replace(ctx, rewrites=list(ctx.rewrites) + citations.rewrites,
                       hypotheses=list(ctx.hypotheses) + [f for f in citations.facts if not f.has(n)])
    reports, obligations, scopes = [], [], list(citations.scopes)

    base_ctx = _substituted(link_ctx, n, base)
    if base_ctx is None:
        return refused(f"the hypotheses exclude the base case {n} = {base}")
    link = decide_link(statement[0].subs(n, base), result.relation, statement[1].subs(n, base), base_ctx, {})
    obligations += link.obligations
    reports.append(StepReport(1, f"base case {n} = {base}", result.relation, weakest([link.status, citations.status]),
                              time.perf_counter() - t0, link.detail, link.route, link.disagreement))

    t0 = time.perf_counter()
    hypothesis = _relation(statement[0], result.relation, statement[1])
    step_ctx = replace(link_ctx, hypotheses=list(link_ctx.hypotheses) + [sp.Ge(n, base), _prepared(hypothesis)])
    at_next = [e.subs(n, n + 1) for e in statement]
    _reports, failure = discharge(at_next, step_ctx, {})
    sums_split = all(prove_condition(sp.Ge(n + 1, s.limits[0][1]), step_ctx)[0]
                     for e in statement for s in sp.sympify(e).subs(n, n + 1).atoms(sp.Sum)
                     if len(s.limits) == 1 and s.limits[0][2] == n + 1)
    if failure:
        link = _Link(Status.UNPROVED, failure)
    elif not sums_split:
        link = _Link(Status.UNPROVED, f"a sum up to {n} + 1 could not be split (its lower limit is not shown to be "
                                      f"at most {n} + 1)")
    else:
        link = decide_link(_next_value(statement[0], n), result.relation, _next_value(statement[1], n), step_ctx, {})
    obligations += link.obligations
    reports.append(StepReport(2, f"inductive step {n} -> {n} + 1 (the statement at {n} assumed)", result.relation,
                              weakest([link.status, citations.status]), time.perf_counter() - t0, link.detail,
                              link.route, link.disagreement))
    return _rule_report(result, weakest(r.status for r in reports), reports, obligations, scopes, start,
                        consistency_text)


def _constant_bound(h: sp.Basic, x: sp.Symbol) -> bool:
    """Whether ``h`` bounds ``x`` by constants only (``a x + b >= 0``, ``<``, ... with a nonzero number
    ``a`` and ``b`` free of ``x``, or a conjunction of such; ``x < oo``): the values it admits form an
    interval."""
    if isinstance(h, sp.And):
        return all(_constant_bound(a, x) for a in h.args)
    if not isinstance(h, (sp.GreaterThan, sp.StrictGreaterThan, sp.LessThan, sp.StrictLessThan)):
        return False
    if sp.oo in (h.lhs, h.rhs) or -sp.oo in (h.lhs, h.rhs):
        return (h.rhs if h.lhs == x else h.lhs if h.rhs == x else None) in (sp.oo, -sp.oo)
    difference = sp.expand(h.lhs - h.rhs)
    slope = difference.diff(x)
    return (not slope.free_symbols and slope.is_number and slope != 0
            and not sp.expand(difference - slope * x).has(x))


def _by_minimum(result: "Result", ctx: decide.Context, start: float, consistency_text: str) -> ResultReport:
    """The mean-value rule (see ``MinimumAt``): D(c) >= 0 and D'(y) (y - c) >= 0 on an interval give
    D >= 0 there, since D(x) - D(c) = D'(xi) (x - c) with xi strictly between c and x."""
    x, c = result.minimum_at.symbol, sp.sympify(result.minimum_at.point)

    def refused(text: str) -> ResultReport:
        return _failed(result, start, f"mean-value rule refused: {text}", consistency_text)

    lhs, rhs = sp.sympify(result.lhs), sp.sympify(result.rhs)
    if isinstance(lhs, sp.MatrixBase) or isinstance(rhs, sp.MatrixBase):
        return refused("the statement is about matrices")
    difference = lhs - rhs if result.relation == ">=" else rhs - lhs
    problem = _rule_variable_problem([difference], x, ctx)
    if problem:
        return refused(problem)
    for h in ctx.hypotheses:
        if h.has(x) and not _constant_bound(h, x):
            return refused(f"the hypothesis {sp.sstr(h)} is not a constant bound on {x}: its admissible values need "
                           "not form an interval")
    # cited facts hold at every admissible value, so at the point and along the interval (they join
    # the hypotheses, which are taken at c and at y); cited equations are not moved to c or y
    citations = cite(result, result.using, ctx)
    if citations.failure:
        return _failed(result, start, citations.failure, consistency_text)
    link_ctx = replace(ctx, rewrites=list(ctx.rewrites) + citations.rewrites,
                       hypotheses=list(ctx.hypotheses) + citations.facts)
    reports, obligations = [], []

    t0 = time.perf_counter()
    for key, relation in _SIGN_CONDITIONS:
        if getattr(x, f"is_{key}") and not prove_condition(relation(c, 0), link_ctx)[0]:
            return refused(f"the point {sp.sstr(c)} is not shown to be {key} like {x}")
    at_point = [h.subs(x, c) for h in link_ctx.hypotheses if h.has(x)]
    if not all(prove_condition(h, link_ctx)[0] for h in at_point):
        return refused(f"the point {x} = {sp.sstr(c)} is not shown to be admissible")
    point_ctx = replace(link_ctx, hypotheses=[h for h in link_ctx.hypotheses if not h.has(x)] + at_point)
    link = decide_link(difference.subs(x, c), ">=", sp.Integer(0), point_ctx, {})
    obligations += link.obligations
    reports.append(StepReport(1, f"the difference is >= 0 at {x} = {sp.sstr(c)}", ">=",
                              weakest([link.status, citations.status]), time.perf_counter() - t0, link.detail,
                              link.route, link.disagreement))

    t0 = time.perf_counter()
    y = sp.Dummy("y", **{k: True for k in ("real", "positive", "nonnegative", "negative", "nonpositive")
                          if getattr(x, f"is_{k}")})
    along = replace(link_ctx, hypotheses=[h.subs(x, y) for h in link_ctx.hypotheses],
                    domains={(y if s == x else s): d for s, d in link_ctx.domains.items()})
    # the slope's definedness obligations (differentiability at every admissible y) are discharged here
    link = decide_link(sp.Derivative(difference.subs(x, y), y) * (y - c), ">=", sp.Integer(0), along, {})
    obligations += link.obligations
    reports.append(StepReport(2, f"the slope times ({x} - {sp.sstr(c)}) is >= 0 on the interval", ">=",
                              weakest([link.status, citations.status]), time.perf_counter() - t0, link.detail,
                              link.route, link.disagreement))
    status = weakest(r.status for r in reports)
    if status is Status.REFUTED and reports[1].status is Status.REFUTED and reports[0].status.passed:
        status = Status.UNPROVED  # a slope of the wrong sign somewhere does not make the statement false
    return _rule_report(result, status, reports, obligations, citations.scopes, start, consistency_text)


def _closing_step(result: "Result") -> "Step":
    from grpo_verify.proof.result import Step

    return Step(result.rhs, "chain ends at the statement's right-hand side")


def _for_each(previous: sp.Basic, step: "Step", ctx: decide.Context, for_each, cache: dict) -> tuple[_Link, str]:
    """The link decided for each value of ``for_each.symbol``; the scope names the values checked."""
    symbol, checked = for_each.symbol, []
    for value in for_each.values:
        sub = _substituted(ctx, symbol, value)
        if sub is None:
            continue  # the assumptions (or the symbol's domain) exclude this value
        checked.append(value)
        link = decide_link(previous.subs(symbol, value), step.relation, step.expr.subs(symbol, value), sub, {})
        if link.status is not Status.PROVED:
            return replace(link, detail=f"at {symbol} = {value}: {link.detail}"), ""
    if not checked:
        return _Link(Status.UNPROVED, f"no value of {for_each.describe()} satisfies the assumptions: nothing was "
                     "checked"), ""
    scope = for_each.describe() if checked == list(for_each.values) else \
        f"{symbol} in {{{', '.join(map(str, checked))}}}"
    return _Link(Status.PROVED, f"decided exactly for each {scope}"), scope


def _substituted(ctx: decide.Context, symbol: sp.Symbol, value: int) -> decide.Context | None:
    v = sp.Integer(value)
    for key in _DECLARED_KEYS:
        if getattr(symbol, f"is_{key}") and getattr(v, f"is_{key}") is not True:
            return None
    hyps = []
    for h in ctx.hypotheses:
        new = decide.doit(h.subs(symbol, v))
        if new is sp.false:
            return None
        if new is not sp.true:
            hyps.append(new)
    return replace(ctx, hypotheses=hyps, domains={s: d for s, d in ctx.domains.items() if s != symbol},
                   rewrites=[(r[0].subs(symbol, v), r[1].subs(symbol, v), *r[2:]) for r in ctx.rewrites],
                   quantified=[(q[0], q[1].subs(symbol, v), q[2].subs(symbol, v), q[3].subs(symbol, v))
                               for q in ctx.quantified], obligations=[])


def _implies(established: str | None, stated: str) -> bool:
    if established is None:
        return False
    if established == stated:
        return True
    return (established, stated) in {("=", "<="), ("=", ">="), ("<", "<="), (">", ">="), ("<", "!="), (">", "!=")}
