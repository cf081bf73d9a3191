"""Rules for expectations: linearity, Hoeffding's counting for sums over i.i.d. rollouts, and the
evaluation of an expectation under the explicit finite distribution of a model. Trusted."""

from __future__ import annotations

import sympy as sp
from sympy.utilities.iterables import multiset_partitions

from grpo_verify.proof.arith import expand_in_atoms
from grpo_verify.proof.operators import Expectation, IidExpectation
from grpo_verify.proof.rules import rule
from grpo_verify.proof.terms import free_symbols, outermost, subst


def speaks_of(x, hidden) -> bool:
    """Whether ``x`` mentions something bound where it would be used: a random family of an expectation
    (outside a nested expectation of it) or a bound variable (a symbol in ``hidden``)."""
    symbols = {h for h in hidden if isinstance(h, sp.Symbol)}
    return bool(symbols and free_symbols(x) & symbols) or random_in(x, hidden)


def random_in(x, bases) -> bool:
    """Whether ``x`` mentions one of the random families outside a nested expectation of them."""
    if isinstance(x, sp.Indexed):
        return x.base in bases or any(random_in(i, bases) for i in x.indices)
    if isinstance(x, Expectation):
        return random_in(x.args[0], set(bases) - set(x.random))
    return any(random_in(a, bases) for a in getattr(x, "args", ()))


@rule("normal")
def expectation_linearity(e, local):
    """E[a X + b Y] = a E[X] + b E[Y] for a, b free of the random families; E[c] = c;
    E[X Sum_j Y_j] = Sum_j E[X Y_j] over a range free of them."""
    if not isinstance(e, Expectation):
        return None
    bases = set(e.random)
    terms = sp.Add.make_args(expand_in_atoms(e.args[0]))
    out = []
    for term in terms:
        const = sp.Mul(*[f for f in sp.Mul.make_args(term) if not random_in(f, bases)])
        rand = [f for f in sp.Mul.make_args(term) if random_in(f, bases)]
        sums = [f for f in rand if isinstance(f, sp.Sum) and not random_in(sp.Tuple(*f.limits[-1][1:]), bases)]
        if sums:
            s = sums[0]
            body, d, lo, hi = outermost(s)
            j = sp.Dummy("j", integer=True)
            rest = sp.Mul(*[f for f in rand if f is not s])
            out.append(const * sp.Sum(e.func(rest * subst(body, {d: j})), (j, lo, hi)))
        else:
            out.append(const * (e.func(sp.Mul(*rand)) if rand else 1))
    new = sp.Add(*out)
    return None if new == e else new


def _rollout_body(total, bases):
    """f(r_1, g_1) for Sum(f(r_v, g_v), (v, 1, n)), or None if the body reaches another rollout or v."""
    if not isinstance(total, sp.Sum) or len(total.limits) != 1:
        return None
    (v, lo, _hi), = total.limits
    quantities = [a for a in sp.preorder_traversal(total.function) if isinstance(a, sp.Indexed) and a.base in bases]
    if lo != 1 or any(a.indices != (v,) for a in quantities):
        return None
    if v in free_symbols(total.function.xreplace({a: sp.Dummy() for a in quantities})):
        return None
    return subst(total.function, {v: sp.Integer(1)})


@rule("normal")
def iid_sum_moments(e, local):
    """For rollouts 1..n drawn i.i.d.: E[prod_m Sum_i f_m(X_i)] = sum over the set partitions P of the
    factors of n (n - 1) ... (n - |P| + 1) prod_{B in P} E_1[prod_{m in B} f_m(X_1)] (the index tuples whose
    equal entries form the blocks of P number n (n-1)...(n-|P|+1); distinct rollouts are independent and
    each is distributed as rollout 1)."""
    if not isinstance(e, IidExpectation) or not set(e.random) <= set(e.single.random):
        return None  # one rollout's operator must bind every family the i.i.d. one does
    if random_in(e.args[0], set(e.single.random) - set(e.random)):
        return None  # and no other: a family fixed here (w_1) would become random inside the one-rollout moment
    bases = set(e.random)
    out = []
    for term in sp.Add.make_args(expand_in_atoms(e.args[0])):
        constant, bodies, size = sp.Integer(1), [], None
        for factor in sp.Mul.make_args(term):
            base, power = factor.as_base_exp()
            if isinstance(base, sp.Sum) and power.is_Integer and power > 0:
                body = _rollout_body(base, bases)
                if body is None or (size is not None and base.limits[0][2] != size):
                    return None
                size = base.limits[0][2]
                bodies += [body] * int(power)
            elif random_in(factor, bases):
                return None
            else:
                constant *= factor
        moment = sp.Integer(0) if bodies else sp.Integer(1)
        for partition in (multiset_partitions(list(range(len(bodies)))) if bodies else ()):
            count = sp.Mul(*[size - k for k in range(len(partition))])
            moment += count * sp.Mul(*[e.single(sp.Mul(*[bodies[m] for m in block])) for block in partition])
        out.append(constant * moment)
    return sp.Add(*out)


@rule("normal")
def expectation_under_the_model(e, local):
    """E[X] = sum_o p_o X(o) under the model's finite distribution (outcomes o with probabilities p_o and
    values of the random families); used to check a model, never in a derivation's step."""
    model = getattr(local.ctx, "model", None)
    if not isinstance(e, Expectation) or model is None or type(e) not in model.distributions:
        return None
    outcomes = model.distributions[type(e)]
    body = e.args[0]
    quantities = {a for a in sp.preorder_traversal(body) if isinstance(a, sp.Indexed) and a.base in set(e.random)}
    if any(not all(i.is_Integer for i in a.indices) for a in quantities) or random_in(
            body.xreplace({a: sp.Integer(0) for a in quantities}), set(e.random)):
        return None
    total = sp.Integer(0)
    for probability, values in outcomes:
        try:
            total += probability * body.xreplace({a: values[a] for a in quantities})
        except KeyError:
            return None
    return total
