r"""D5 Bias of the group baseline: the group mean shrinks the policy gradient by (R-1)/R; std scaling rescales it only for binary rewards.

With rollouts $o_1, \dots, o_R$ drawn i.i.d. from $\pi_\theta$, rewards $r_i$, scores $g_i$ (one coordinate)
and $\nabla J = E[r g]$ (the score-function identity of D1), the group-mean baseline gives
$E[(r_i - \bar r) g_i] = \frac{R-1}{R} \nabla J$ and the leave-one-out baseline
$r_i - \frac{1}{R-1} \sum_{j \ne i} r_j$ is exactly unbiased; since
$r_i - \bar r = \frac{R-1}{R}(r_i - \bar r_{-i})$, the no-std GRPO estimator is exactly $\frac{R-1}{R}$ times
the RLOO estimator (symbolic $R$). Both expectations are proved twice: by expectation algebra
(linearity, independence of different rollouts, $E[g] = 0$, identical distribution; $R \ge 2$ symbolic) and
by brute-force enumeration of all $K^R$ outcome tuples of a finite model with symbolic probabilities, rewards
and mean-zero scores ($R, K \in \{2, 3\}$). With std scaling and binary rewards, conditioning on rollout $i$
gives $E[A_i g_i] = E[g_i h(r_i)]$ with $h$ a function on $\{0, 1\}$, hence affine, so
$E[A_i g_i] = c_R(p) \nabla J$ with $c_R(p) = h(1) - h(0)$ an explicit binomial average of the advantages
(degenerate groups contribute 0); $c_R(p) > 0$ for every $R \ge 2$ and $0 < p < 1$ (each term is a positive binomial
weight times a positive advantage magnitude); $c_R$ is tabulated for $R \in \{2, 4, 8\}$ and checked exactly against
enumeration with a symbolic stabiliser $\epsilon$ (sample std $R \in \{2, 3, 4\}$, population std
$R \in \{2, 3\}$). The conditioning step is proved for every $R$ with the independence of rollout 1 from the others and the
binomial law of their successes stated. With three reward values the
rescaling fails: an exact softmax bandit with rewards $1, 1/2, 0$ has $E[A_1 g_1]$ not parallel to
$\nabla J$ (a nonzero $2 \times 2$ minor), while with two actions every $E[f(a) g(a)]$ is a multiple of one
vector, so no two-action counterexample exists.
"""

from __future__ import annotations

import functools
import itertools

import sympy as sp

from .d4_zero_sum import (binary_advantages, binary_population_std_advantages_closed_form,
                          binary_sample_std_advantages_closed_form, k)
from .notation import R, eps, g, group_mean, i, j, r
from grpo_verify.evaluation import Distribution
from grpo_verify.proof import Assumption, Expectation, Remark, Result, Step, as_written, computation, rules

# == expectation algebra ==========================================================================
RANDOM = (r, g)  # the random quantities: rewards and scores of the rollouts


# E[.] binds the rewards and scores: its laws are the kernel's linearity rule and the stated assumptions
Ex = Expectation.over("E", r, g)


G = sp.Symbol("G", real=True)  # one coordinate of grad J = E[r g]
n = sp.Symbol("n", integer=True, nonnegative=True)  # R = i + n encodes i <= R
delta = sp.KroneckerDelta(i, j)
E_diag = Ex(r[i] * g[i])
others = sp.Sum(Ex(r[j] * g[i]) * (1 - delta), (j, 1, R))  # sum over j != i of E[r_j g_i]
others_factored = sp.Sum(Ex(r[j]) * Ex(g[i]) * (1 - delta), (j, 1, R))

GROUP = Assumption("$R \\ge 2$ rollouts drawn i.i.d. from $\\pi_\\theta$", R >= 2)
INDEX = Assumption("$1 \\le i \\le R$", i <= R)
SIFT = Assumption("write $R = i + n$ with $n \\ge 0$ (so $1 \\le i \\le R$)", equation=(R, i + n))
INDEPENDENCE = Assumption("different rollouts are independent: $\\sum_{j \\ne i} E[r_j g_i] = "
                          "\\sum_{j \\ne i} E[r_j] E[g_i]$", equation=(others, others_factored))
MEAN_ZERO_SCORE = Assumption("the score has mean zero, $E[g_i] = 0$ (D1)", equation=(Ex(g[i]), sp.Integer(0)))
SCORE_FUNCTION = Assumption("each rollout is distributed as $\\pi_\\theta$, so $E[r_i g_i] = E[r g] = \\nabla J$ (D1)",
                            equation=(E_diag, G))
# R >= 2 and i <= R say where the identities are meant; R = i + n with n >= 0 already gives i <= R
EXPECTATION_ALGEBRA = (GROUP.as_context(), INDEX.as_context(), SIFT, INDEPENDENCE, MEAN_ZERO_SCORE, SCORE_FUNCTION)


def rollout_model(sizes: dict) -> dict:
    """A model hint: i.i.d. rollouts, each with reward 1 and score 1 or reward 0 and score -1 (probability 1/2
    each, so the score has mean zero), as many as the group size the evaluator picked (3 by default)."""
    return {Ex: Distribution([(sp.Rational(1, 2), {r: 1, g: 1}), (sp.Rational(1, 2), {r: 0, g: -1})],
                             rollouts=int(sizes.get(R, 3)))}

group_baseline_gradient_is_shrunk_by_R_minus_1_over_R = Result(
    name="group_baseline_gradient_is_shrunk_by_R_minus_1_over_R",
    doc="With the group-mean baseline $E[(r_i - \\bar r) g_i] = \\frac{R-1}{R} \\nabla J$ for every rollout $i$.",
    lhs=Ex((r[i] - group_mean()) * g[i]),
    rhs=(R - 1) / R * G,
    assumptions=EXPECTATION_ALGEBRA,
    steps=(
        Step(E_diag - sp.Sum(Ex(r[j] * g[i]), (j, 1, R)) / R, "linearity of expectation",
             "Expand the product and exchange $E$ with the finite sum over $j$.",
             by=(rules.expectation_linearity, rules.sum_linearity)),
        Step(E_diag - (sp.Sum(Ex(r[j] * g[i]) * delta, (j, 1, R)) + others) / R, "split the sum at $j = i$",
             "$1 = \\delta_{ij} + (1 - \\delta_{ij})$ inside the sum.", by=(rules.sum_linearity,)),
        Step(E_diag - (E_diag + others) / R, "sifting property of $\\delta_{ij}$",
             "$1 \\le i \\le R$, so exactly one term survives.", using=(SIFT,),
             by=(rules.sum_of_a_delta, rules.sum_linearity)),
        Step(E_diag - (E_diag + others_factored) / R, "independence of different rollouts",
             "For $j \\ne i$ the rollouts $o_j$ and $o_i$ are independent: $E[r_j g_i] = E[r_j] E[g_i]$.",
             using=(INDEPENDENCE,)),
        Step(E_diag - E_diag / R, "the score has mean zero", "$E[g_i] = 0$ (D1).", using=(MEAN_ZERO_SCORE,),
             by=(rules.sum_linearity,)),
        Step((R - 1) / R * G, "score-function identity",
             "$E[r_i g_i] = E[r g] = \\nabla J$ since each rollout is distributed as $\\pi_\\theta$ (D1).",
             using=(SCORE_FUNCTION,)),
    ),
    model=rollout_model,
)

leave_one_out_sum = sp.Sum(r[j], (j, 1, R)) - r[i]  # sum over j != i of r_j
leave_one_out_baseline_is_unbiased = Result(
    name="leave_one_out_baseline_is_unbiased",
    doc="With the leave-one-out baseline $\\frac{1}{R-1} \\sum_{j \\ne i} r_j$ the estimate is unbiased: "
        "$E[(r_i - \\frac{1}{R-1} \\sum_{j \\ne i} r_j) g_i] = \\nabla J$.",
    lhs=Ex((r[i] - leave_one_out_sum / (R - 1)) * g[i]),
    rhs=G,
    assumptions=(GROUP, *EXPECTATION_ALGEBRA[1:]),  # R >= 2: the leave-one-out mean divides by R - 1
    steps=(
        Step(E_diag - (sp.Sum(Ex(r[j] * g[i]), (j, 1, R)) - E_diag) / (R - 1), "linearity of expectation",
             "Expand the product and exchange $E$ with the finite sum over $j$.",
             by=(rules.expectation_linearity, rules.sum_linearity)),
        Step(E_diag - (sp.Sum(Ex(r[j] * g[i]) * delta, (j, 1, R)) + others - E_diag) / (R - 1),
             "split the sum at $j = i$", "$1 = \\delta_{ij} + (1 - \\delta_{ij})$ inside the sum.",
             by=(rules.sum_linearity,)),
        Step(E_diag - others / (R - 1), "sifting property of $\\delta_{ij}$",
             "$1 \\le i \\le R$, so the $j = i$ term cancels the subtracted $E[r_i g_i]$.", using=(SIFT,),
             by=(rules.sum_of_a_delta, rules.sum_linearity)),
        Step(E_diag - others_factored / (R - 1), "independence of different rollouts",
             "$E[r_j g_i] = E[r_j] E[g_i]$ for $j \\ne i$.", using=(INDEPENDENCE,)),
        Step(E_diag, "the score has mean zero", "$E[g_i] = 0$ (D1).", using=(MEAN_ZERO_SCORE,),
             by=(rules.sum_linearity,)),
        Step(G, "score-function identity", "$E[r_i g_i] = \\nabla J$ (D1).", using=(SCORE_FUNCTION,)),
    ),
    model=rollout_model,
)

group_centred_reward_is_scaled_leave_one_out_reward = Result(
    name="group_centred_reward_is_scaled_leave_one_out_reward",
    doc="$r_i - \\bar r = \\frac{R-1}{R} (r_i - \\bar r_{-i})$ with $\\bar r_{-i} = \\frac{1}{R-1} \\sum_{j \\ne i} r_j$: "
        "the no-std GRPO advantage is $(R-1)/R$ times the RLOO (leave-one-out) advantage, whose baseline does not "
        "depend on $o_i$.",
    lhs=r[i] - group_mean(),
    rhs=(R - 1) / R * (r[i] - leave_one_out_sum / (R - 1)),
    assumptions=(GROUP,),  # R >= 2: the leave-one-out mean divides by R - 1
    rule="arithmetic", why="$\\bar r = (r_i + \\sum_{j \\ne i} r_j)/R$.",
)

no_std_group_estimator_is_scaled_rloo_estimator = Result(
    name="no_std_group_estimator_is_scaled_rloo_estimator",
    doc="Summed over the group: $\\frac{1}{R} \\sum_i (r_i - \\bar r) g_i = \\frac{R-1}{R} \\cdot \\frac{1}{R} \\sum_i "
        "(r_i - \\bar r_{-i}) g_i$. The no-std GRPO estimator is exactly $(R-1)/R$ times the RLOO estimator (unbiased, "
        "above), so its only bias is that factor: $E = \\frac{R-1}{R} \\nabla J$.",
    lhs=sp.Sum((r[i] - group_mean()) * g[i], (i, 1, R)) / R,
    rhs=(R - 1) / R * sp.Sum((r[i] - leave_one_out_sum / (R - 1)) * g[i], (i, 1, R)) / R,
    assumptions=(GROUP,),
    rule="sums split, constants pulled out",
    why="Both sides are $\\frac{1}{R} \\sum_i r_i g_i - \\frac{1}{R^2} (\\sum_j r_j)(\\sum_i g_i)$: the previous result, "
        "term by term.",
    by=(rules.sum_linearity,),
)

# == exact verification on a finite model =========================================================
# K outcomes with probabilities p_1..p_K (p_K = 1 - sum of the others), rewards rho_a and score
# coordinates gamma_a with sum_a p_a gamma_a = 0 (gamma_K solved from it). R draws enumerated.


def finite_model(K: int):
    """(probabilities, rewards, scores) of a K-outcome model; the last entries are solved from the constraints."""
    ps = list(sp.symbols(f"p_1:{K}", positive=True))
    ps.append(1 - sum(ps))
    rhos = list(sp.symbols(f"rho_1:{K + 1}", real=True))
    gammas = list(sp.symbols(f"gamma_1:{K}", real=True))
    gammas.append(-sum(pa * ga for pa, ga in zip(ps, gammas)) / ps[-1])
    return ps, rhos, gammas


def enumerate_expectation(probs, size: int, body) -> sp.Expr:
    """E[body(outcomes)] for ``size`` i.i.d. draws, by summing over all tuples of outcomes."""
    total = sp.Integer(0)
    for outcomes in itertools.product(range(len(probs)), repeat=size):
        weight = sp.Mul(*[probs[a] for a in outcomes])
        total += weight * body(outcomes)
    return total


def _finite_baseline_table(baseline: str):
    lhs, rhs = [], []
    for size in (2, 3):
        for K in (2, 3):
            ps, rhos, gammas = finite_model(K)
            grad_J = sum(pa * ra * ga for pa, ra, ga in zip(ps, rhos, gammas))
            for idx in range(size):
                def body(o, idx=idx, size=size):
                    rewards = [rhos[a] for a in o]
                    if baseline == "group":
                        base = sum(rewards) / size
                    else:
                        base = (sum(rewards) - rewards[idx]) / (size - 1)
                    return (rewards[idx] - base) * gammas[o[idx]]
                lhs.append(enumerate_expectation(ps, size, body))
                rhs.append(sp.Rational(size - 1, size) * grad_J if baseline == "group" else grad_J)
    return sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs)


FINITE = Assumption("finite model: $K$ outcomes with probabilities $p_a > 0$, $p_K = 1 - \\sum_{a<K} p_a$, "
                    "rewards $\\rho_a$, scores $\\gamma_a$ with $\\sum_a p_a \\gamma_a = 0$; every "
                    "$(R, K) \\in \\{2, 3\\}^2$ and every rollout $i$ is an entry")
_group_lhs, _group_rhs = _finite_baseline_table("group")
group_baseline_bias_is_exact_on_finite_models = Result(
    name="group_baseline_bias_is_exact_on_finite_models",
    instance="finite models, $R, K \\in \\{2, 3\\}$",
    doc="On finite models with $R, K \\in \\{2, 3\\}$, enumerating all $K^R$ outcome tuples gives "
        "$E[(r_i - \\bar r) g_i] = \\frac{R-1}{R} \\sum_a p_a \\rho_a \\gamma_a$ exactly, for every $i$.",
    lhs=_group_lhs, rhs=_group_rhs,
    assumptions=(FINITE,),
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
)

_loo_lhs, _loo_rhs = _finite_baseline_table("leave_one_out")
leave_one_out_baseline_is_unbiased_on_finite_models = Result(
    name="leave_one_out_baseline_is_unbiased_on_finite_models",
    instance="finite models, $R, K \\in \\{2, 3\\}$",
    doc="On finite models with $R, K \\in \\{2, 3\\}$, enumerating all outcome tuples gives "
        "$E[(r_i - \\frac{1}{R-1} \\sum_{j \\ne i} r_j) g_i] = \\sum_a p_a \\rho_a \\gamma_a$ exactly.",
    lhs=_loo_lhs, rhs=_loo_rhs,
    assumptions=(FINITE,),
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
)

# == std scaling with binary rewards: a pure rescaling ============================================
h = sp.Function("h", real=True)  # h(x): expected advantage of a rollout with reward x, given x
x = sp.Symbol("x", real=True)

function_on_zero_one_is_affine = Result(
    name="function_on_zero_one_is_affine",
    doc="Every function $h$ on $\\{0, 1\\}$ is affine: $h(x) = h(0) + (h(1) - h(0)) x$ for $x = 0$ and $x = 1$.",
    lhs=as_written(lambda: sp.ImmutableMatrix([[h(0) + (h(1) - h(0)) * 0, h(0) + (h(1) - h(0)) * 1]])),
    rhs=sp.ImmutableMatrix([[h(0), h(1)]]),
    rule="evaluate at both points", why="Both sides agree at $x = 0$ and at $x = 1$.",
)

# The reward is binary in every outcome, so h(r_i) = h(0) + (h(1) - h(0)) r_i holds inside the expectation (the
# kernel's expectation binds r_i: an equation about the sampled value outside it does not reach the outcomes).
BINARY_REWARD = Assumption("$r_i \\in \\{0, 1\\}$ in every outcome, so $h(r_i) = h(0) + (h(1) - h(0)) r_i$ there "
                           "(function_on_zero_one_is_affine) and $E[g_i h(r_i)] = E[g_i (h(0) + (h(1) - h(0)) r_i)]$",
                           equation=(Ex(g[i] * h(r[i])), Ex(g[i] * (h(0) + (h(1) - h(0)) * r[i]))))

binary_reward_scaled_gradient_is_rescaled_policy_gradient = Result(
    name="binary_reward_scaled_gradient_is_rescaled_policy_gradient",
    doc="For binary rewards, $E[g_i h(r_i)] = (h(1) - h(0)) \\nabla J$ for any $h$; with "
        "$h(x) = E[A_i \\mid r_i = x]$ (the other $R-1$ rollouts averaged out, independent of $g_i$ given "
        "$r_i$ only through $r_i$) this is $E[A_i g_i] = c_R(p) \\nabla J$.",
    lhs=Ex(g[i] * h(r[i])),
    rhs=(h(1) - h(0)) * G,
    assumptions=(BINARY_REWARD, MEAN_ZERO_SCORE, SCORE_FUNCTION),
    steps=(
        Step(Ex(g[i] * (h(0) + (h(1) - h(0)) * r[i])), "function_on_zero_one_is_affine",
             "$r_i$ takes only the values 0 and 1.", using=(BINARY_REWARD,)),
        Step(h(0) * Ex(g[i]) + (h(1) - h(0)) * E_diag, "linearity of expectation",
             "$h(0)$ and $h(1)$ are numbers.", by=(rules.expectation_linearity,)),
        Step((h(1) - h(0)) * E_diag, "the score has mean zero", "$E[g_i] = 0$ (D1).", using=(MEAN_ZERO_SCORE,)),
        Step((h(1) - h(0)) * G, "score-function identity", "$E[r_i g_i] = \\nabla J$ (D1).",
             using=(SCORE_FUNCTION,)),
    ),
    model=lambda sizes: rollout_model({R: max(3, int(sizes.get(i, 1)))}),
)

p = sp.Symbol("p", real=True)  # success probability
jj = sp.Symbol("j", integer=True, nonnegative=True)  # successes among the other R - 1 rollouts


def a_plus(successes, size, scale: str = "sample", stabiliser=0) -> sp.Expr:
    """Advantage of a success in a group with ``successes`` successes; 0 for the degenerate group k = R."""
    successes, size = sp.sympify(successes), sp.sympify(size)  # never Python float division
    if successes == size:
        return sp.Integer(0)
    return binary_advantages(scale, successes, size, stabiliser)[0]


def a_minus(successes, size, scale: str = "sample", stabiliser=0) -> sp.Expr:
    """Advantage of a failure in a group with ``successes`` successes; 0 for the degenerate group k = 0."""
    successes, size = sp.sympify(successes), sp.sympify(size)
    if successes == 0:
        return sp.Integer(0)
    return binary_advantages(scale, successes, size, stabiliser)[1]


def binomial_weight(successes, size, prob=p) -> sp.Expr:
    """P(j successes among the other size - 1 rollouts), j ~ Binomial(size - 1, prob)."""
    return sp.binomial(size - 1, successes) * prob ** successes * (1 - prob) ** (size - 1 - successes)


# (a_+, a_-) of a group with k successes in closed form (D4, proved for 0 < k < R, eps = 0)
CLOSED_FORM_ADVANTAGES = {"sample": binary_sample_std_advantages_closed_form,
                          "population": binary_population_std_advantages_closed_form}


def c_R(prob=p, size=R, stabiliser=0, scale: str = "sample") -> sp.Expr:
    """c_R(p) = h(1) - h(0): E[A_i g_i] = c_R(p) grad J for binary rewards with success probability p.

    For an integer ``size`` the explicit polynomial/radical expression, from the advantages' definition;
    for symbolic ``size`` the sums over j (degenerate terms, which are 0, left out: j <= R - 2 for h(1),
    j >= 1 for h(0)) with D4's proved closed forms of the advantages (``stabiliser`` must be 0: the closed
    forms are those of eps = 0; SymPy's summation also stalls on the definition's nested radicals).
    """
    if isinstance(size, int) or (isinstance(size, sp.Integer)):
        size = int(size)
        h1 = sum(binomial_weight(s, size, prob) * a_plus(s + 1, size, scale, stabiliser) for s in range(size))
        h0 = sum(binomial_weight(s, size, prob) * a_minus(s, size, scale, stabiliser) for s in range(size))
        return h1 - h0
    if stabiliser != 0 or scale not in CLOSED_FORM_ADVANTAGES:
        raise ValueError(f"c_R for a symbolic group size needs eps = 0 and a std scale (sample or population); "
                         f"got eps = {stabiliser}, scale = {scale!r}")
    plus, minus = CLOSED_FORM_ADVANTAGES[scale].rhs
    at = lambda e, successes: e.subs({k: successes, R: size}, simultaneous=True)  # noqa: E731
    h1 = sp.Sum(binomial_weight(jj, size, prob) * at(plus, jj + 1), (jj, 0, size - 2))
    h0 = sp.Sum(binomial_weight(jj, size, prob) * at(minus, jj), (jj, 1, size - 1))
    return h1 - h0


def _tidy(e: sp.Expr) -> sp.Expr:
    poly = sp.Poly(sp.expand(e), p)
    return sp.Add(*[sp.radsimp(cf) * p ** m[0] for m, cf in zip(poly.monoms(), poly.coeffs())])


# The table for R in {2, 4, 8}: explicit polynomials in p with radical coefficients (sample std, eps = 0).
C_SAMPLE = {size: _tidy(c_R(p, size)) for size in (2, 4, 8)}
C_POPULATION = {size: _tidy(c_R(p, size, scale="population")) for size in (2, 4, 8)}
C_SAMPLE_AT_HALF = {size: sp.nsimplify(sp.radsimp(C_SAMPLE[size].subs(p, sp.Rational(1, 2))))
                    for size in (2, 4, 8)}
PROBABILITY = Assumption("$p \\in [0, 1]$ is the success probability", domain=(p, sp.Interval(0, 1)), context=True)

c_R_sample_std_closed_forms = Result(
    name="c_R_sample_std_closed_forms",
    doc="With the sample std and $\\epsilon = 0$, $c_R(p) = h(1) - h(0)$ is, for $R = 2, 4, 8$ (entries in "
        "this order), the polynomial on the right; $c_2 = 1/\\sqrt{2}$ does not depend on $p$.",
    lhs=sp.ImmutableMatrix([[c_R(p, size) for size in (2, 4, 8)]]),
    rhs=sp.ImmutableMatrix([[C_SAMPLE[size] for size in (2, 4, 8)]]),
    assumptions=(PROBABILITY,),
    rule="binomial average of $a_+(j+1) - a_-(j)$",
    why="$h(1) = \\sum_j P(j) a_+(j+1)$ and $h(0) = \\sum_j P(j) a_-(j)$, $j \\sim \\mathrm{Bin}(R-1, p)$, "
        "degenerate groups contributing 0.",
    model={p: sp.Rational(1, 3)},
)

UNIT_PROBABILITY = Assumption("$p \\in [0, 1]$ is the success probability", domain=(p, sp.Interval(0, 1)))


def _c_R_positive(size: int) -> Result:
    """The polynomial is positive on the whole line (R = 2, 4, 8), so [0, 1] is context."""
    return Result(
        name=f"c_R_sample_std_is_positive_for_R{size}",
        instance=f"$R = {size}$",
        doc=f"$c_{{{size}}}(p) > 0$ on $[0, 1]$ (sample std, $\\epsilon = 0$): with binary rewards the std-scaled "
            "estimator's expectation $c_R(p) \\nabla J$ points along $\\nabla J = \\nabla p$, so to first order in the "
            "step size $\\eta$ the std-scaled update raises $p$ at the rate $\\eta\\, c_R(p) \\lVert \\nabla p \\rVert^2 "
            "\\ge 0$, like the no-std update.",
        lhs=C_SAMPLE[size],
        rhs=sp.Integer(0),
        relation=">",
        assumptions=(UNIT_PROBABILITY.as_context(),),
        rule="sign of a polynomial on [0, 1]", why="The closed form above, a polynomial in $p$"
        + " (positive for every real $p$).",
        model={p: sp.Rational(1, 3)},
    )


c_R_sample_std_is_positive_for_R2 = _c_R_positive(2)
c_R_sample_std_is_positive_for_R4 = _c_R_positive(4)
# c_8 > 0 on the whole line too (degree 6, no real root, minimum about 1.736 at p = 1/2), but z3 proves that
# only on some runs (a hard nonlinear query under z3's wall-clock limits): [0, 1] is context without a kernel proof
c_R_sample_std_is_positive_for_R8 = _c_R_positive(8)

SUCCESS_PROBABILITY_INSIDE = Assumption("$0 < p < 1$: both outcomes have positive probability",
                                        domain=(p, sp.Interval.open(0, 1)))
GROUP_OF_AT_LEAST_TWO = Assumption("$R \\ge 2$ rollouts per group", R >= 2)


def _c_R_positive_for_every_R(scale: str) -> Result:
    d4 = CLOSED_FORM_ADVANTAGES[scale].name
    return Result(
        name=f"c_R_{scale}_std_is_positive_for_every_R",
        doc=f"For every group size $R \\ge 2$ and $0 < p < 1$, $c_R(p) > 0$ ({scale} std, $\\epsilon = 0$): "
            "$c_R(p) = \\sum_{j=0}^{R-2} P(j)\\, a_+(j+1) - \\sum_{j=1}^{R-1} P(j)\\, a_-(j)$ with "
            "$P(j) = \\binom{R-1}{j} p^j (1-p)^{R-1-j}$ and the closed-form advantages of D4 "
            f"({d4}, $a_+ > 0 > a_-$ in every mixed group). "
            "So for every $R$ the std-scaled expectation $c_R(p) \\nabla J$ points along $\\nabla J$ and, to first "
            "order in the step size $\\eta$, the std-scaled update raises $p$ at the rate "
            "$\\eta\\, c_R(p) \\lVert \\nabla p \\rVert^2 > 0$ wherever $\\nabla p \\ne 0$.",
        lhs=c_R(p, R, scale=scale),
        rhs=sp.Integer(0),
        relation=">",
        assumptions=(GROUP_OF_AT_LEAST_TWO, SUCCESS_PROBABILITY_INSIDE),
        rule="sign of each term",
        why="Every term is a product of a positive binomial weight and a positive advantage magnitude, "
            "and the range $0 \\le j \\le R - 2$ is not empty for $R \\ge 2$.",
        by=(rules.sum_of_signed_terms,),
    )


c_R_sample_std_is_positive_for_every_R = _c_R_positive_for_every_R("sample")
c_R_population_std_is_positive_for_every_R = _c_R_positive_for_every_R("population")

c_R_population_std_closed_forms = Result(
    name="c_R_population_std_closed_forms",
    doc="With the population std and $\\epsilon = 0$, $c_R(p)$ for $R = 2, 4, 8$ (entries in this order).",
    lhs=sp.ImmutableMatrix([[c_R(p, size, scale="population") for size in (2, 4, 8)]]),
    rhs=sp.ImmutableMatrix([[C_POPULATION[size] for size in (2, 4, 8)]]),
    assumptions=(PROBABILITY,),
    rule="binomial average of $a_+(j+1) - a_-(j)$", why="As for the sample std, with $\\sigma$ in place of $s$.",
    model={p: sp.Rational(1, 3)},
)

c_R_sample_std_at_one_half = Result(
    name="c_R_sample_std_at_one_half",
    doc="At $p = 1/2$ the sample-std factors $c_2, c_4, c_8$ are the numbers on the right.",
    lhs=sp.ImmutableMatrix([[sp.Subs(C_SAMPLE[size], p, sp.Rational(1, 2)) for size in (2, 4, 8)]]),
    rhs=sp.ImmutableMatrix([[C_SAMPLE_AT_HALF[size] for size in (2, 4, 8)]]),
    rule="evaluation", why="Substitute $p = 1/2$.",
)


def group_advantages(rewards, scale: str = "sample", stabiliser=0) -> list[sp.Expr]:
    """The advantages of one concrete group; a zero-variance group gets all zeros (D4's convention)."""
    size = len(rewards)
    mean = sp.Add(*rewards) / size
    centred = [sp.nsimplify(rw - mean) for rw in rewards]
    if all(c_ == 0 for c_ in centred):
        return [sp.Integer(0)] * size
    sum_sq = sp.Add(*[c_ ** 2 for c_ in centred])
    denominator = {"sample": sp.sqrt(sum_sq / (size - 1)) + stabiliser,
                   "population": sp.sqrt(sum_sq / size) + stabiliser,
                   "none": sp.Integer(1)}[scale]
    return [c_ / denominator for c_ in centred]


q1, q2 = sp.symbols("q_1 q_2", positive=True)
b1, b2 = sp.symbols("gamma_1 gamma_2", real=True)
# three outcomes: two correct (probabilities q1, q2), one wrong; scores mean zero
_binary_probs = [q1, q2, 1 - q1 - q2]
_binary_rewards = [1, 1, 0]
_binary_scores = [b1, b2, -(q1 * b1 + q2 * b2) / (1 - q1 - q2)]


def _scaled_gradient_table(scale: str, sizes=(2, 3, 4)):
    lhs, rhs = [], []
    grad_J = q1 * b1 + q2 * b2
    for size in sizes:
        def body(o, size=size):
            adv = group_advantages([_binary_rewards[a] for a in o], scale, eps)
            return adv[0] * _binary_scores[o[0]]
        lhs.append(enumerate_expectation(_binary_probs, size, body))
        rhs.append(c_R(q1 + q2, size, eps, scale) * grad_J)
    return sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs)


BINARY_MODEL = Assumption("three outcomes, two correct (probabilities $q_1, q_2$) and one wrong, "
                          "$p = q_1 + q_2$, scores $\\gamma_a$ with mean zero; $\\epsilon \\ge 0$ symbolic")
# the model needs it (the wrong outcome's score divides by its probability), but the enumerated sums
# never divide by it: each score is multiplied by its probability, which SymPy cancels as it builds them
WRONG_OUTCOME_POSSIBLE = Assumption("the wrong outcome has probability $1 - q_1 - q_2 > 0$ (its score "
                                    "$\\gamma_3 = -(q_1 \\gamma_1 + q_2 \\gamma_2)/(1 - q_1 - q_2)$ divides by it)",
                                    positive=1 - q1 - q2, context=True)
_sample_lhs, _sample_rhs = _scaled_gradient_table("sample")
sample_std_scaled_gradient_is_c_R_times_gradient_on_finite_model = Result(
    name="sample_std_scaled_gradient_is_c_R_times_gradient_on_finite_model",
    instance="a three-outcome model, $R = 2, 3, 4$",
    doc="On a three-outcome binary-reward model, enumerating all tuples gives $E[A_1 g_1] = c_R(p) \\nabla J$ "
        "exactly for $R = 2, 3, 4$ (sample std, symbolic $\\epsilon$).",
    lhs=_sample_lhs, rhs=_sample_rhs,
    assumptions=(BINARY_MODEL, WRONG_OUTCOME_POSSIBLE), model={q1: sp.Rational(1, 4), q2: sp.Rational(1, 3)},
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
)

_pop_lhs, _pop_rhs = _scaled_gradient_table("population", sizes=(2, 3))
population_std_scaled_gradient_is_c_R_times_gradient_on_finite_model = Result(
    name="population_std_scaled_gradient_is_c_R_times_gradient_on_finite_model",
    instance="a three-outcome model, $R = 2, 3$",
    doc="The same with the population std: $E[A_1 g_1] = c_R(p) \\nabla J$ exactly for $R = 2, 3$.",
    lhs=_pop_lhs, rhs=_pop_rhs,
    assumptions=(BINARY_MODEL, WRONG_OUTCOME_POSSIBLE), model={q1: sp.Rational(1, 4), q2: sp.Rational(1, 3)},
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
)

conditioning_on_rollout_i = Remark(
    "conditioning_on_rollout_i",
    "The step $E[A_i g_i] = E[g_i h(r_i)]$ is the tower property: given $o_i$, the other $R - 1$ rollouts are "
    "independent of $o_i$, so $E[A_i \\mid o_i]$ depends on $o_i$ only through $r_i$; it is $h(r_i)$ with "
    "$h(x)$ the average of the advantage of a rollout with reward $x$ over $j \\sim \\mathrm{Bin}(R-1, p)$ "
    "successes among the others. The kernel's expectation has no rule for conditioning, so the step is made "
    "explicit below for every $R$: the advantage of rollout 1 written through the others' successes $S$, with "
    "the independence of rollout 1 and $S$ and the binomial law of $S$ stated as assumptions; the finite-model "
    "results above check the same consequence by enumeration for $R \\le 4$.",
)

# == conditioning on rollout 1, for every R: the tower property made explicit =====================
others_successes = sp.Sum(r[i], (i, 2, R))  # S: successes among rollouts 2..R, independent of rollout 1
U = sp.Function("U", real=True)  # U(s) = a_+(s + 1): the advantage of a success when the others have s
W = sp.Function("W", real=True)  # W(s) = a_-(s): the advantage of a failure when the others have s
advantage_of_rollout_1 = r[1] * U(others_successes) + (1 - r[1]) * W(others_successes)


def _law_of_others(f, advantage, lo, hi, scale: str) -> Assumption:
    name = {U: "U(S) = a_+(S + 1)", W: "W(S) = a_-(S)"}[f]
    return Assumption(
        f"${name}$ ({scale} std) with $S = \\sum_{{i \\ge 2}} r_i \\sim \\mathrm{{Bin}}(R-1, p)$: "
        f"$E[{sp.latex(f(sp.Symbol('S')))}] = \\sum_{{j={sp.latex(lo)}}}^{{{sp.latex(hi)}}} \\binom{{R-1}}{{j}} p^j "
        f"(1-p)^{{R-1-j}} {sp.latex(advantage)}$ (the omitted count is a degenerate group, whose advantage is 0)",
        equation=(Ex(f(others_successes)), sp.Sum(binomial_weight(jj, R) * advantage, (jj, lo, hi))))


ROLLOUT_1_INDEPENDENT_OF_OTHERS = tuple(
    Assumption(f"rollout 1 is independent of rollouts $2..R$: $E[{sp.latex(x * f(sp.Symbol('S')))}] = "
               f"E[{sp.latex(x)}]\\, E[{sp.latex(f(sp.Symbol('S')))}]$",
               equation=(Ex(x * f(others_successes)), Ex(x) * Ex(f(others_successes))))
    for x in (g[1] * r[1], g[1]) for f in (U, W))
SCORE_OF_ROLLOUT_1 = (Assumption("$E[g_1] = 0$ (D1)", equation=(Ex(g[1]), sp.Integer(0))),
                      Assumption("$E[r_1 g_1] = \\nabla J$ (D1)", equation=(Ex(r[1] * g[1]), G)))


def _binary_rollouts_model(scale: str):
    """A model hint: R i.i.d. rollouts, a success (reward 1, score 2) with probability 1/3 and a failure (reward 0,
    score -1) otherwise, so the score has mean zero; U and W the polynomials through the closed-form advantages at
    that R at the counts S = 0..R-1 the other rollouts can have (a model's function is defined, and differentiable,
    at every real argument)."""
    plus, minus = CLOSED_FORM_ADVANTAGES[scale].rhs
    s_ = sp.Dummy("s", real=True)

    def table(advantage, size: int) -> sp.Lambda:
        return sp.Lambda(s_, sp.interpolate([(count, advantage(count, size)) for count in range(size)], s_))

    @functools.cache
    def at_size(size: int) -> dict:
        third = sp.Rational(1, 3)
        return {p: third,
                U: table(lambda count, n_: plus.subs({k: count + 1, R: n_}, simultaneous=True), size),
                W: table(lambda count, n_: minus.subs({k: count, R: n_}, simultaneous=True), size),
                Ex: Distribution([(third, {r: 1, g: 2}), (1 - third, {r: 0, g: -1})], rollouts=size)}

    return lambda sizes: dict(at_size(int(sizes.get(R, 3))))


def _std_scaled_gradient_for_every_R(scale: str) -> Result:
    plus, minus = CLOSED_FORM_ADVANTAGES[scale].rhs
    law_u = _law_of_others(U, plus.subs(k, jj + 1), 0, R - 2, scale)
    law_w = _law_of_others(W, minus.subs(k, jj), 1, R - 1, scale)
    return Result(
        name=f"{scale}_std_scaled_gradient_is_c_R_times_gradient_for_every_R",
        doc=f"For every $R \\ge 2$, binary rewards and the {scale} std ($\\epsilon = 0$): $E[A_1 g_1] = c_R(p) \\nabla J$. "
            "Rollout 1's advantage is $A_1 = r_1 a_+(S + 1) + (1 - r_1) a_-(S)$, $S$ the successes among the other "
            "rollouts (D4's closed forms, which are 0 at the degenerate counts); conditioning on rollout 1 is made "
            "explicit: rollout 1 is independent of $S$, and $S \\sim \\mathrm{Bin}(R-1, p)$.",
        lhs=Ex(advantage_of_rollout_1 * g[1]),
        rhs=c_R(p, R, scale=scale) * G,
        # 0 < p < 1 says where the law of S is meant; the proof only uses the stated law
        assumptions=(GROUP.as_context(), SUCCESS_PROBABILITY_INSIDE.as_context(), law_u, law_w,
                     *ROLLOUT_1_INDEPENDENT_OF_OTHERS, *SCORE_OF_ROLLOUT_1),
        steps=(
            Step(Ex(g[1] * r[1] * U(others_successes)) + Ex(g[1] * W(others_successes))
                 - Ex(g[1] * r[1] * W(others_successes)), "linearity of expectation",
                 by=(rules.expectation_linearity,)),
            Step(Ex(g[1] * r[1]) * Ex(U(others_successes)) + Ex(g[1]) * Ex(W(others_successes))
                 - Ex(g[1] * r[1]) * Ex(W(others_successes)), "independence of rollout 1 and the others",
                 using=ROLLOUT_1_INDEPENDENT_OF_OTHERS),
            Step(G * (Ex(U(others_successes)) - Ex(W(others_successes))), "the score of rollout 1",
                 "$E[g_1] = 0$, $E[r_1 g_1] = \\nabla J$.", using=SCORE_OF_ROLLOUT_1),
            Step(c_R(p, R, scale=scale) * G, "the law of $S$", "$h(1) = E[a_+(S + 1)]$ and $h(0) = E[a_-(S)]$.",
                 using=(law_u, law_w)),
        ),
        model=_binary_rollouts_model(scale),
    )


sample_std_scaled_gradient_is_c_R_times_gradient_for_every_R = _std_scaled_gradient_for_every_R("sample")
population_std_scaled_gradient_is_c_R_times_gradient_for_every_R = _std_scaled_gradient_for_every_R("population")


# == three reward values: no rescaling ============================================================
th = sp.symbols("theta_1:4", real=True)
_exp = [sp.exp(t_) for t_ in th]
softmax3 = [e_ / sum(_exp) for e_ in _exp]
LOGITS = {th[0]: sp.log(3), th[1]: sp.log(2), th[2]: sp.Integer(0)}  # pi = (1/2, 1/3, 1/6)
# the probabilities at the logits, 1/2, 1/3, 1/6: closed numbers (exp(log 3) = 3, ...), evaluated exactly on
# construction as the kernel would
pi_cx = [pa.subs(LOGITS) for pa in softmax3]
rewards_cx = [sp.Integer(1), sp.Rational(1, 2), sp.Integer(0)]


LOGIT_VALUES = tuple(LOGITS[t_] for t_ in th)
# the score d log pi_a / d theta_b at a general theta, unevaluated: the statements below take it at the logits
# (at_logits) and hand it to the kernel's differentiation rules
SCORE = [[sp.Derivative(sp.log(softmax3[a]), th[b]) for b in range(3)] for a in range(3)]


def at_logits(e):
    """``e`` (an expression in theta, or a matrix of them) at theta = (log 3, log 2, 0), written as a Subs: the
    kernel substitutes after it differentiates (and SymPy's evalf of it differentiates first)."""
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.rows, e.cols, [at_logits(x_) for x_ in e])
    return sp.Subs(e, th, LOGIT_VALUES)


# the same scores evaluated (SymPy differentiates), for the tests' numerical comparisons only
score_cx = [[sp.simplify(sp.diff(sp.log(softmax3[a]), th[b]).subs(LOGITS)) for b in range(3)] for a in range(3)]


def _enumerated_scaled_gradient(size: int, scores=None, probs=None) -> sp.ImmutableMatrix:
    """$E[A_1 g_1]$ as the raw sum over all $3^R$ outcome tuples (not simplified); ``scores`` (default: the
    unevaluated derivatives, at a general theta) gives each action's score vector, ``probs`` its probability."""
    scores = SCORE if scores is None else scores
    probs = pi_cx if probs is None else probs

    def body(o):
        return sp.Matrix(scores[o[0]]) * group_advantages([rewards_cx[a] for a in o], "sample")[0]
    total = sp.zeros(3, 1)
    for o in itertools.product(range(3), repeat=size):
        total += sp.Mul(*[probs[a] for a in o]) * body(o)
    return sp.ImmutableMatrix(total)


def _policy_gradient(scores, probs=pi_cx) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix([sum(probs[a] * rewards_cx[a] * scores[a][b] for a in range(3)) for b in range(3)])


def _scaled_gradient_vector(size: int) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix(_enumerated_scaled_gradient(size, score_cx, pi_cx).applyfunc(sp.radsimp))


# exact vectors for the tests (SymPy's evaluation, not a checked statement)
grad_J_cx = _policy_gradient(score_cx, pi_cx)
scaled_cx = {size: _scaled_gradient_vector(size) for size in (2, 3)}
CX = Assumption("softmax bandit with logits $\\theta = (\\log 3, \\log 2, 0)$, so $\\pi = (1/2, 1/3, 1/6)$, "
                "rewards $(1, 1/2, 0)$, score $\\nabla_\\theta \\log \\pi_a$ (which is $e_a - \\pi$), sample std, "
                "$\\epsilon = 0$")

three_action_policy_gradient_is_explicit = Result(
    name="three_action_policy_gradient_is_explicit",
    doc="In the three-action bandit, $\\nabla J = (1/6, -1/18, -1/9)$.",
    lhs=at_logits(as_written(lambda: sp.ImmutableMatrix([sum(pi_cx[a] * rewards_cx[a] * SCORE[a][b]
                                                             for a in range(3)) for b in range(3)]))),
    rhs=sp.ImmutableMatrix([sp.Rational(1, 6), -sp.Rational(1, 18), -sp.Rational(1, 9)]),
    assumptions=(CX,), rule="$\\nabla J = \\sum_a \\pi_a r_a \\nabla_\\theta \\log \\pi_a$",
    why="Differentiate the log-softmax at the logits; an exact sum over three actions.", by=rules.DIFFERENTIATION,
)

three_reward_scaled_gradient_is_explicit = Result(
    name="three_reward_scaled_gradient_is_explicit",
    doc="In the three-action bandit, $E[A_1 g_1] = \\sqrt{2} (1/8, -1/18, -5/72)$ for $R = 2$ (first column) "
        "and $(1/18 + 7\\sqrt{3}/54, -2\\sqrt{3}/27, -1/18 - \\sqrt{3}/18)$ for $R = 3$ (second column), by "
        "enumerating all $3^R$ tuples.",
    # the enumeration runs when the result is checked, not when the module is imported
    lhs=computation("EnumeratedScaledGradient", r"\left(E_{\mathrm{enum}}[A_1 g_1]\right)_{R = 2, 3}",
                    lambda: at_logits(sp.ImmutableMatrix.hstack(_enumerated_scaled_gradient(2),
                                                                _enumerated_scaled_gradient(3))))(),
    rhs=sp.ImmutableMatrix([[sp.sqrt(2) / 8, sp.Rational(1, 18) + 7 * sp.sqrt(3) / 54],
                            [-sp.sqrt(2) / 18, -2 * sp.sqrt(3) / 27],
                            [-5 * sp.sqrt(2) / 72, -sp.sqrt(3) / 18 - sp.Rational(1, 18)]]),
    assumptions=(CX,), rule="enumeration of all outcome tuples",
    why="A finite expectation is a finite weighted sum; the scores are the derivatives of the log-softmax.",
    by=rules.DIFFERENTIATION,
)


def _minor(u, w) -> sp.Expr:
    return u[0] * w[1] - u[1] * w[0]


three_reward_scaled_gradient_is_not_parallel_R2 = Result(
    name="three_reward_scaled_gradient_is_not_parallel_R2",
    instance="a three-action bandit, $R = 2$",
    doc="With rewards $(1, 1/2, 0)$ and $R = 2$, $E[A_1 g_1]$ is not a multiple of $\\nabla J$: the minor "
        "$u_1 v_2 - u_2 v_1$ of the two vectors is nonzero.",
    lhs=at_logits(_minor(_enumerated_scaled_gradient(2), _policy_gradient(SCORE))), rhs=sp.Integer(0), relation="!=",
    assumptions=(CX,), rule="exact evaluation of the minor",
    why="Both vectors are exact algebraic numbers once the scores are differentiated.", by=rules.DIFFERENTIATION,
)

three_reward_scaled_gradient_is_not_parallel_R3 = Result(
    name="three_reward_scaled_gradient_is_not_parallel_R3",
    instance="a three-action bandit, $R = 3$",
    doc="The same for $R = 3$: the minor $u_1 v_2 - u_2 v_1$ is nonzero.",
    lhs=at_logits(_minor(_enumerated_scaled_gradient(3), _policy_gradient(SCORE))), rhs=sp.Integer(0), relation="!=",
    assumptions=(CX,), rule="exact evaluation of the minor",
    why="Both vectors are exact algebraic numbers once the scores are differentiated.", by=rules.DIFFERENTIATION,
)

# == two actions: always parallel =================================================================
s1, s2 = sp.symbols("theta_1 theta_2", real=True)
_pi2 = [sp.exp(s1) / (sp.exp(s1) + sp.exp(s2)), sp.exp(s2) / (sp.exp(s1) + sp.exp(s2))]
# the score vectors, as unevaluated derivatives of the log-softmax (the kernel's rules differentiate)
_score2 = [sp.ImmutableMatrix([sp.Derivative(sp.log(pa), s_) for s_ in (s1, s2)]) for pa in _pi2]
f1, f2 = sp.symbols("f_1 f_2", real=True)

two_action_scores_are_dependent = Result(
    name="two_action_scores_are_dependent",
    doc="With two softmax actions, $\\pi_1 g_1 + \\pi_2 g_2 = 0$ (score vectors in $\\mathbb{R}^2$).",
    lhs=_pi2[0] * _score2[0] + _pi2[1] * _score2[1], rhs=sp.ImmutableMatrix([0, 0]),
    assumptions=(Assumption("logits $\\theta_1, \\theta_2$ real, $\\pi = \\mathrm{softmax}(\\theta)$"),),
    rule="differentiate the log-softmax", why="The score has mean zero.", by=rules.DIFFERENTIATION,
)

two_action_expectations_are_multiples_of_one_vector = Result(
    name="two_action_expectations_are_multiples_of_one_vector",
    doc="With two actions every $E[f(a) g(a)] = \\pi_1 f_1 g_1 + \\pi_2 f_2 g_2$ equals $\\pi_1 (f_1 - f_2) g_1$, "
        "so $E[A_1 g_1]$ and $\\nabla J$ are always parallel.",
    lhs=_pi2[0] * f1 * _score2[0] + _pi2[1] * f2 * _score2[1], rhs=_pi2[0] * (f1 - f2) * _score2[0],
    assumptions=(Assumption("logits $\\theta_1, \\theta_2$ real, $f$ any function of the action"),),
    rule="two_action_scores_are_dependent", why="Substitute $\\pi_2 g_2 = -\\pi_1 g_1$ (differentiate both scores).",
    by=rules.DIFFERENTIATION,
)

why_three_reward_values = Remark(
    "why_three_reward_values",
    "For a softmax bandit $\\sum_a \\pi_a f_a (e_a - \\pi) = (\\pi_a (f_a - \\bar f))_a$, so $E[A_1 g_1] = E[h(r) g]$ is "
    "parallel to $\\nabla J = E[r g]$ exactly when $h$ is affine in $r$ on the rewards that occur. With two reward "
    "values (binary, or any two values among any number of actions) $h$ is affine, as for $\\{0, 1\\}$; with two "
    "actions the score space is one-dimensional (results above). With three reward values $h$ is in general not "
    "affine: for $R = 2$ the advantage is $\\mathrm{sign}(r_1 - r_2)/\\sqrt{2}$, so here $h(1) = \\sqrt{2}/4$, "
    "$h(1/2) = -\\sqrt{2}/6$, $h(0) = -5\\sqrt{2}/12$, and $h(1/2) \\ne (h(0) + h(1))/2$.",
)
