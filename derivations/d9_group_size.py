r"""D9 Group size: the exact variance of the group gradient estimators as functions of R; RLOO is the oracle-baseline estimator up to a factor 1 + c/(R-1).

With $R$ rollouts drawn i.i.d., reward $r$, score $g$ ($E[g] = 0$), $\mu = E[r]$ and $\nabla J = E[r g]$, the oracle-baseline
estimator $O = \frac{1}{R} \sum_i (r_i - \mu) g_i$ is unbiased with total variance $V_{or}/R$,
$V_{or} = E[(r - \mu)^2 \lVert g \rVert^2] - \lVert \nabla J \rVert^2$. The RLOO estimator is
$U = \frac{1}{R(R-1)} \sum_i \sum_j h(X_i, X_j)$ with the symmetric pair kernel $h = \frac12 (r_i - r_j)(g_i - g_j)$ (a
U-statistic of order 2; $h(X_i, X_i) = 0$). On one pair of independent rollouts, by expectation algebra with every
product moment stated: $E[h] = \nabla J$, the projection $E[h(x, X)] = \frac12 ((\rho - \mu)\gamma + \nabla J)$ at a fixed
$x = (\rho, \gamma)$, $\zeta_1 = \operatorname{Var}(E[h \mid X_1]) = V_{or}/4$ and
$\zeta_2 = \operatorname{Var}(h) = \frac12 (V_{or} + \operatorname{Var}(r) E[g^2] + (\nabla J)^2)$ (one coordinate; totals
sum over coordinates). Hoeffding's formula
$\operatorname{Var}(U) = \frac{4(R-2)}{R(R-1)} \zeta_1 + \frac{2}{R(R-1)} \zeta_2$ then gives, for every $R \ge 2$ (proved
symbolically), $\operatorname{Var}(U) = \frac{V_{or}}{R} (1 + \frac{c}{R-1}) = \frac{V_{or}}{R} +
\frac{\operatorname{Var}(r) E \lVert g \rVert^2 + \lVert \nabla J \rVert^2}{R(R-1)}$ with
$c = 2\zeta_2/V_{or} - 1 = (\operatorname{Var}(r) E \lVert g \rVert^2 + \lVert \nabla J \rVert^2)/V_{or} \ge 0$: RLOO never beats the
oracle baseline, and loses only $O(1/R)$, $0 \le \operatorname{Var}(U)/(V_{or}/R) - 1 \le 2c/R$; $c$ has no upper bound. The
no-std (Dr. GRPO) estimator $\frac{R-1}{R} U$ (D5) has MSE $(\frac{R-1}{R})^2 \operatorname{Var}(U) + \lVert \nabla J \rVert^2/R^2$,
i.e. $\frac{V_{or}}{R} (1 + \frac{c + \kappa - 2}{R} + \frac{1 - c}{R^2})$ with $\kappa = \lVert \nabla J \rVert^2/V_{or}$;
it beats RLOO in MSE iff $\lVert \nabla J \rVert^2 < (2R - 1) \operatorname{Var}(U)$. The optimal constant baseline $b^*$
(D8) gives $V(b^*)/R = (V_{or} - \operatorname{Cov}(r, \lVert g \rVert^2)^2/E \lVert g \rVert^2)/R$, so RLOO's variance
ratio to it is at least $V_{or}/V(b^*)$ for every $R$. Hoeffding's pair counting (which rollouts coincide) is
proved for every $R$: the expectation $E_{\mathrm{iid}}$ of a polynomial in sums over the group counts the index
tuples of each coincidence pattern ($R (R-1) \cdots$ of them) and factorises over distinct rollouts, which gives
$\operatorname{Var}(U)$ and $\operatorname{Var}(O) = V_{or}/R$ from single-rollout moments; the full formulas are
also checked by enumerating every outcome tuple of finite models with symbolic probabilities, rewards and
scores ($R \le 4$), and against the exact oracle in property tests. The std-scaled estimators have no closed form in
general; for binary rewards and $R = 2$ the sample-std estimator is exactly $U/\sqrt{2}$.
"""

from __future__ import annotations

import itertools

import sympy as sp

from .d5_baseline_bias import Ex, enumerate_expectation, finite_model
from .notation import R, g, i, j, r
from grpo_verify.evaluation import Distribution
from grpo_verify.proof import Assumption, IidExpectation, Remark, Result, Step, computation, rules
from grpo_verify.proof.build import propose

# == symbols ======================================================================================
# one coordinate of the score throughout; a total variance is the sum of the coordinates' variances
G = sp.Symbol("G", real=True)  # E[r g], one coordinate of grad J
mu = sp.Symbol("mu", real=True)  # E[r]
S2 = sp.Symbol("S_2", real=True)  # E[r^2]
M0 = sp.Symbol("M_0", nonnegative=True)  # E[g^2]
M1 = sp.Symbol("M_1", real=True)  # E[r g^2]
M2 = sp.Symbol("M_2", real=True)  # E[r^2 g^2]
rho, gamma = sp.symbols("rho gamma", real=True)  # a fixed point x = (rho, gamma) of (reward, score)

V_OR = M2 - 2 * mu * M1 + mu ** 2 * M0 - G ** 2  # E[(r - mu)^2 g^2] - (E[(r - mu) g])^2

# single-rollout moments E[r^a g^b], by (a, b); E[r^2 g] is never needed (it always meets E[g] = 0)
_MOMENT = {(0, 0): sp.Integer(1), (1, 0): mu, (0, 1): sp.Integer(0), (1, 1): G, (2, 0): S2, (0, 2): M0,
           (1, 2): M1, (2, 2): M2}
_MOMENT_TEXT = {(1, 0): "\\mu", (0, 1): "0", (1, 1): "G", (2, 0): "S_2", (0, 2): "M_0", (1, 2): "M_1",
                (2, 2): "M_2", (2, 1): "E[r^2 g]"}


def _powers(monomial: sp.Expr, rollout: int) -> tuple[int, int]:
    powers = monomial.as_powers_dict()
    return int(powers.get(r[rollout], 0)), int(powers.get(g[rollout], 0))


def _moment_value(a_b: tuple[int, int]) -> sp.Expr:
    if a_b == (2, 1):
        raise ValueError("E[r^2 g] has no name here: it only ever multiplies E[g] = 0")
    return _MOMENT[a_b]


def product_moment(monomial: sp.Expr) -> Assumption:
    """The stated expectation of one monomial in the rewards and scores of rollouts 1 and 2.

    Rollouts 1 and 2 are independent and each is distributed as $\\pi_\\theta$, so
    $E[r_1^a g_1^b r_2^c g_2^d] = E[r^a g^b] E[r^c g^d]$, each factor a named moment.
    """
    first, second = _powers(monomial, 1), _powers(monomial, 2)
    parts = [p for p in (first, second) if p != (0, 0)]
    if any(p == (2, 1) for p in parts):
        value = sp.Integer(0)
        if len(parts) != 2 or (0, 1) not in parts:
            raise ValueError(f"{monomial}: E[r^2 g] must multiply E[g] = 0")
    else:
        value = sp.Mul(*[_moment_value(p) for p in parts])
    factors = " ".join(f"\\mathbb{{E}}[{sp.latex(r[0] ** a * g[0] ** b).replace('_{0}', '')}]" for a, b in parts)
    if len(parts) == 2:
        why = "rollouts 1 and 2 are independent, each distributed as $\\pi_\\theta$"
        text = f"${sp.latex(Ex(monomial))} = {factors} = {sp.latex(value)}$ ({why})"
    else:
        why = "the rollout is distributed as $\\pi_\\theta$" + ("; $E[g] = 0$ (D1)" if parts[0] == (0, 1) else "")
        text = f"${sp.latex(Ex(monomial))} = {sp.latex(value)}$ ({why})"
    return Assumption(text, equation=(Ex(monomial), value))


_STATED: dict[sp.Expr, Assumption] = {}


def _monomials(e: sp.Expr) -> list[sp.Expr]:
    """The bodies of the expectations ``E[...]`` that occur in ``e``, in order of appearance."""
    found = []
    for node in sp.preorder_traversal(e):
        if isinstance(node, Ex) and node.args[0] not in found:
            found.append(node.args[0])
    return found


def moments_of(*exprs: sp.Expr) -> tuple[Assumption, ...]:
    """One product-moment assumption for each monomial that linearity of E leaves in E[expr] (each stated once);
    the monomials are read off the kernel rule's proposal (``propose``), never decided by it."""
    found = []
    for expr in exprs:
        found += [m for m in _monomials(_linearity(expr)) if m not in found]
    for monomial in found:
        if monomial not in _STATED:
            _STATED[monomial] = product_moment(monomial)
    return tuple(_STATED[m] for m in found)


def _linearity(expr: sp.Expr) -> sp.Expr:
    """E[expr] after linearity only, as a chain step (products of random quantities stay inside E): the kernel
    rule's proposal, which the step that states it has checked again."""
    return propose(Ex(expr), rules.expectation_linearity)


# A model of the moment assumptions: one rollout's (reward, score) takes the values (3, 2) with probability 1/3
# and (1, -1) with probability 2/3, so E[g] = 0 exactly (the evaluator's random distributions do not have a
# mean-zero score); the named moments are this distribution's, and the rollouts are i.i.d. draws from it.
_OUTCOMES = [(sp.Rational(1, 3), {r: sp.Integer(3), g: sp.Integer(2)}),
             (sp.Rational(2, 3), {r: sp.Integer(1), g: sp.Integer(-1)})]


def _moment_of_model(a: int, b: int) -> sp.Expr:
    return sum(prob * values[r] ** a * values[g] ** b for prob, values in _OUTCOMES)


def _moments_model(sizes: dict) -> dict:
    """The moment symbols at the model above and its distribution for ``Ex`` (rollouts 1 and 2)."""
    return {mu: _moment_of_model(1, 0), G: _moment_of_model(1, 1), S2: _moment_of_model(2, 0),
            M0: _moment_of_model(0, 2), M1: _moment_of_model(1, 2), M2: _moment_of_model(2, 2),
            Ex: Distribution(_OUTCOMES, rollouts=2)}


def _group_moments_model(sizes: dict) -> dict:
    """The same for ``E_iid`` over a group of ``R`` rollouts (``Ex``, one rollout's moments, shares its
    distribution); ``R = 3`` where the evaluator leaves the size free."""
    out = {k: v for k, v in _moments_model(sizes).items() if k is not Ex}
    size = int(sizes.get(R, 3))
    out[IidE] = Distribution(_OUTCOMES, rollouts=size)
    if R not in sizes:
        out[R] = sp.Integer(size)
    return out


# == the pair kernel ==============================================================================
loo_sum = sp.Sum(r[j], (j, 1, R)) - r[i]  # sum over j != i of r_j
rloo_estimator = sp.Sum((r[i] - loo_sum / (R - 1)) * g[i], (i, 1, R)) / R
GROUP = Assumption("$R \\ge 2$ rollouts", R >= 2)

rloo_advantage_is_mean_of_pairwise_reward_differences = Result(
    name="rloo_advantage_is_mean_of_pairwise_reward_differences",
    doc="$r_i - \\frac{1}{R-1} \\sum_{j \\ne i} r_j = \\frac{1}{R-1} \\sum_{j=1}^R (r_i - r_j)$ (the $j = i$ term is 0), so "
        "the RLOO estimator is $U = \\frac{1}{R(R-1)} \\sum_i \\sum_j (r_i - r_j) g_i$, the average over ordered pairs "
        "$i \\ne j$.",
    lhs=r[i] - loo_sum / (R - 1),
    rhs=sp.Sum(r[i] - r[j], (j, 1, R)) / (R - 1),
    assumptions=(GROUP,),
    rule="sums split, constants pulled out", why="$\\sum_{j=1}^R (r_i - r_j) = R r_i - \\sum_j r_j$.",
    by=(rules.sum_linearity, rules.sum_of_a_constant),
)

pair_kernel = (r[i] - r[j]) * (g[i] - g[j]) / 2
_pairs = sp.Sum(sp.Sum(pair_kernel, (j, 1, R)), (i, 1, R))
rloo_estimator_is_u_statistic_of_pair_kernel = Result(
    name="rloo_estimator_is_u_statistic_of_pair_kernel",
    doc="$U = \\frac{1}{R(R-1)} \\sum_{i, j} h(X_i, X_j)$ with the symmetric kernel $h(X_i, X_j) = \\frac12 (r_i - r_j)"
        "(g_i - g_j)$, $h(X_i, X_i) = 0$: RLOO is the U-statistic of order 2 of $h$, "
        "$U = \\binom{R}{2}^{-1} \\sum_{i < j} h(X_i, X_j)$.",
    lhs=rloo_estimator,
    rhs=_pairs / (R * (R - 1)),
    assumptions=(GROUP,),  # R >= 2: U divides by R - 1
    steps=(
        Step((R * sp.Sum(r[i] * g[i], (i, 1, R)) - sp.Sum(r[j], (j, 1, R)) * sp.Sum(g[i], (i, 1, R)))
             / (R * (R - 1)), "sums split, constants pulled out",
             "$\\sum_i (r_i - \\frac{S_r - r_i}{R-1}) g_i = \\frac{R \\sum_i r_i g_i - S_r S_g}{R-1}$.",
             by=(rules.sum_linearity,)),
        Step(_pairs / (R * (R - 1)), "expand the kernel",
             "$\\frac12 \\sum_{i,j} (r_i g_i - r_i g_j - r_j g_i + r_j g_j) = R \\sum_i r_i g_i - S_r S_g$: the double "
             "sum is the iterated sum, and $\\sum_i \\sum_j r_i g_j = (\\sum_i r_i)(\\sum_j g_j)$.",
             by=(rules.sum_linearity, rules.sum_of_a_constant)),
    ),
)

h12 = pair_kernel.subs({i: 1, j: 2})  # h(X_1, X_2)
_h_moments = moments_of(h12)
pair_kernel_is_unbiased = Result(
    name="pair_kernel_is_unbiased",
    doc="For two independent rollouts $E[h(X_1, X_2)] = E[\\frac12 (r_1 - r_2)(g_1 - g_2)] = \\nabla J$: hence "
        "$E[U] = \\nabla J$ (D5's leave_one_out_baseline_is_unbiased, again).",
    lhs=Ex(h12),
    rhs=G,
    assumptions=_h_moments,
    steps=(
        Step(_linearity(h12), "linearity of expectation", "Expand the product.", by=(rules.expectation_linearity,)),
        Step(G, "product moments", "Independence, identical distribution, $E[g] = 0$.", using=_h_moments),
    ),
    model=_moments_model,
)

projection = ((rho - r[2]) * (gamma - g[2])) / 2  # h(x, X_2) at a fixed x = (rho, gamma)
_projection_moments = moments_of(projection)
pair_kernel_projection_is_half_oracle_term_plus_half_gradient = Result(
    name="pair_kernel_projection_is_half_oracle_term_plus_half_gradient",
    doc="At a fixed $x = (\\rho, \\gamma)$, $h_1(x) = E[h(x, X)] = \\frac12 ((\\rho - \\mu) \\gamma + \\nabla J)$: the "
        "first Hoeffding projection of $h$ is half the oracle-baseline term $(r - \\mu) g$ plus a constant.",
    lhs=Ex(projection),
    rhs=((rho - mu) * gamma + G) / 2,
    assumptions=_projection_moments,
    steps=(
        Step(_linearity(projection), "linearity of expectation", "$\\rho, \\gamma$ are constants.",
             by=(rules.expectation_linearity,)),
        Step(((rho - mu) * gamma + G) / 2, "moments of one rollout", "$E[g] = 0$, $E[r] = \\mu$, $E[r g] = \\nabla J$.",
             using=_projection_moments),
    ),
    model=_moments_model,
)

oracle_term = (r[1] - mu) * g[1]
_oracle_moments = moments_of(oracle_term ** 2, oracle_term)
oracle_baseline_term_variance_is_V_or = Result(
    name="oracle_baseline_term_variance_is_V_or",
    doc="$E[(r - \\mu) g] = \\nabla J$ and $\\operatorname{Var}((r - \\mu) g) = E[(r - \\mu)^2 g^2] - (\\nabla J)^2 = "
        "M_2 - 2 \\mu M_1 + \\mu^2 M_0 - G^2 =: V_{or}$ (one coordinate; summed over coordinates, $V_{or} = "
        "E[(r - \\mu)^2 \\lVert g \\rVert^2] - \\lVert \\nabla J \\rVert^2$, D8's $V(\\mu)$).",
    lhs=Ex(oracle_term ** 2) - Ex(oracle_term) ** 2,
    rhs=V_OR,
    assumptions=_oracle_moments,
    steps=(
        Step(_linearity(oracle_term ** 2) - _linearity(oracle_term) ** 2, "linearity of expectation",
             by=(rules.expectation_linearity,)),
        Step(V_OR, "moments of one rollout", "$E[g] = 0$ makes $E[(r - \\mu) g] = G$.", using=_oracle_moments),
    ),
    model=_moments_model,
)

h1_of_X1 = ((r[1] - mu) * g[1] + G) / 2  # h_1(X_1), by the previous result
_h1_moments = _oracle_moments
first_projection_variance_is_quarter_oracle_variance = Result(
    name="first_projection_variance_is_quarter_oracle_variance",
    doc="$\\zeta_1 = \\operatorname{Var}(h_1(X_1)) = \\operatorname{Var}(\\frac12 ((r_1 - \\mu) g_1 + \\nabla J)) = V_{or}/4$.",
    lhs=Ex(h1_of_X1 ** 2) - Ex(h1_of_X1) ** 2,
    rhs=V_OR / 4,
    assumptions=_h1_moments,
    steps=(
        Step(_linearity(h1_of_X1 ** 2) - _linearity(h1_of_X1) ** 2, "linearity of expectation",
             "$\\nabla J$ is a constant.", by=(rules.expectation_linearity,)),
        Step(V_OR / 4, "moments of one rollout", using=_h1_moments),
    ),
    model=_moments_model,
)

_h_square_moments = moments_of(h12 ** 2)
ZETA_2 = (V_OR + (S2 - mu ** 2) * M0 + G ** 2) / 2
pair_kernel_variance_closed_form = Result(
    name="pair_kernel_variance_closed_form",
    doc="$\\zeta_2 = \\operatorname{Var}(h(X_1, X_2)) = E[h^2] - (\\nabla J)^2 = \\frac12 (M_2 - 2 \\mu M_1 + S_2 M_0) = "
        "\\frac12 (V_{or} + \\operatorname{Var}(r) E[g^2] + (\\nabla J)^2)$ with $\\operatorname{Var}(r) = S_2 - \\mu^2$.",
    lhs=Ex(h12 ** 2) - G ** 2,
    rhs=ZETA_2,
    assumptions=_h_square_moments,
    steps=(
        Step(_linearity(h12 ** 2) - G ** 2, "linearity of expectation", "Expand $(r_1 - r_2)^2 (g_1 - g_2)^2$: nine "
             "monomials.", by=(rules.expectation_linearity,)),
        Step((M2 - 2 * mu * M1 + S2 * M0) / 2, "product moments",
             "Each monomial is a product of a moment of rollout 1 and one of rollout 2.", using=_h_square_moments),
        Step(ZETA_2, "arithmetic", "Regroup with $V_{or} = M_2 - 2\\mu M_1 + \\mu^2 M_0 - G^2$."),
    ),
    model=_moments_model,
)

# == Hoeffding's formula for every R ==============================================================
V = sp.Symbol("V_or", positive=True)  # the oracle-baseline variance, > 0 (the estimators are not all exact)
Z1, Z2 = sp.symbols("zeta_1 zeta_2", real=True)
sigma2 = sp.Symbol("sigma_r^2", nonnegative=True)  # Var(r)
J2 = sp.Symbol("J_2", nonnegative=True)  # ||grad J||^2 (one coordinate: G^2)
VarU = sp.Symbol("Var_U", real=True)  # Var(U), Hoeffding's expression
c = sp.Symbol("c", nonnegative=True)  # the constant of the 1/(R - 1) term

hoeffding_rloo_variance = 4 * (R - 2) / (R * (R - 1)) * Z1 + 2 / (R * (R - 1)) * Z2
ZETA_1_IS = Assumption("$\\zeta_1 = V_{or}/4$ (first_projection_variance_is_quarter_oracle_variance)",
                       equation=(Z1, V / 4))
ZETA_2_IS = Assumption("$2 \\zeta_2 = V_{or} + \\sigma_r^2 M_0 + J_2$ with $\\sigma_r^2 = \\operatorname{Var}(r)$, "
                       "$M_0 = E \\lVert g \\rVert^2$, $J_2 = \\lVert \\nabla J \\rVert^2$ (pair_kernel_variance_closed_form, "
                       "summed over coordinates)", equation=(Z2, (V + sigma2 * M0 + J2) / 2))

rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1 = Result(
    name="rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1",
    doc="Hoeffding's $\\operatorname{Var}(U) = \\frac{4(R-2)}{R(R-1)} \\zeta_1 + \\frac{2}{R(R-1)} \\zeta_2$ with "
        "$\\zeta_1 = V_{or}/4$ equals $\\frac{V_{or}}{R} (1 + \\frac{c}{R-1})$, $c = 2\\zeta_2/V_{or} - 1$, for every "
        "$R \\ge 2$: the variance ratio of RLOO to the oracle-baseline estimator is $1 + c/(R-1)$.",
    lhs=hoeffding_rloo_variance,
    rhs=V / R * (1 + (2 * Z2 / V - 1) / (R - 1)),
    assumptions=(GROUP, ZETA_1_IS),
    steps=(
        Step((R - 2) / (R * (R - 1)) * V + 2 / (R * (R - 1)) * Z2, "first projection", "$\\zeta_1 = V_{or}/4$.",
             using=(ZETA_1_IS,)),
        Step(V / R * (1 + (2 * Z2 / V - 1) / (R - 1)), "arithmetic",
             "$\\frac{R-2}{R-1} = 1 - \\frac{1}{R-1}$."),
    ),
)

rloo_variance_constant_c_is_nonnegative = Result(
    name="rloo_variance_constant_c_is_nonnegative",
    doc="$c = 2\\zeta_2/V_{or} - 1 = (\\operatorname{Var}(r) E \\lVert g \\rVert^2 + \\lVert \\nabla J \\rVert^2)/V_{or} \\ge 0$: "
        "$2\\zeta_2 \\ge V_{or}$ always (the degenerate part of $h$ has variance $\\zeta_2 - 2\\zeta_1 \\ge 0$).",
    lhs=2 * Z2 / V - 1,
    rhs=sp.Integer(0),
    relation=">=",
    assumptions=(ZETA_2_IS,),
    steps=(
        Step((sigma2 * M0 + J2) / V, "pair_kernel_variance_closed_form", using=(ZETA_2_IS,)),
        Step(sp.Integer(0), "signs", "$\\sigma_r^2, M_0, J_2 \\ge 0$ and $V_{or} > 0$.", relation=">="),
    ),
)

rloo_variance_closed_form = Result(
    name="rloo_variance_closed_form",
    doc="$\\operatorname{Var}(U) = \\frac{V_{or}}{R} + \\frac{\\operatorname{Var}(r) E \\lVert g \\rVert^2 + \\lVert \\nabla J "
        "\\rVert^2}{R(R-1)}$ for every $R \\ge 2$.",
    lhs=hoeffding_rloo_variance,
    rhs=V / R + (sigma2 * M0 + J2) / (R * (R - 1)),
    assumptions=(GROUP, ZETA_1_IS, ZETA_2_IS),
    steps=(
        Step(V / R * (1 + (2 * Z2 / V - 1) / (R - 1)),
             "rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1",
             using=(rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1,)),
        Step(V / R + (sigma2 * M0 + J2) / (R * (R - 1)), "pair_kernel_variance_closed_form", using=(ZETA_2_IS,)),
    ),
)

ratio = 1 + c / (R - 1)  # Var(U) / (V_or / R)
rloo_variance_ratio_excess_is_between_zero_and_2c_over_R = Result(
    name="rloo_variance_ratio_excess_is_between_zero_and_2c_over_R",
    doc="$\\operatorname{Var}(U)/(V_{or}/R) - 1 = c/(R-1) \\le 2c/R$ for every $R \\ge 2$ (and $\\ge 0$): RLOO's "
        "variance is the oracle baseline's times $1 + O(1/R)$, with the explicit constant $2c$.",
    lhs=ratio - 1,
    rhs=2 * c / R,
    relation="<=",
    assumptions=(GROUP,),
    steps=(
        Step(c / (R - 1), "arithmetic"),
        Step(2 * c / R, "$R \\ge 2$", "$2(R-1) \\ge R$ and $c \\ge 0$.", relation="<="),
    ),
)

rloo_variance_is_at_least_oracle_variance = Result(
    name="rloo_variance_is_at_least_oracle_variance",
    doc="$\\operatorname{Var}(U) \\ge V_{or}/R$ for every $R \\ge 2$: RLOO never beats the oracle baseline $E[r]$, and "
        "equals it only when $c = 0$, i.e. $\\operatorname{Var}(r) E \\lVert g \\rVert^2 + \\lVert \\nabla J \\rVert^2 = 0$.",
    lhs=V / R * ratio,
    rhs=V / R,
    relation=">=",
    assumptions=(GROUP,),
    rule="signs", why="$c/(R-1) \\ge 0$.",
)

# == the no-std (Dr. GRPO) estimator: (R-1)/R times RLOO ==========================================
shrink = (R - 1) / R
no_std_mse = shrink ** 2 * VarU + (G - shrink * G) ** 2  # variance + squared bias, one coordinate
VAR_U_IS = Assumption("$\\operatorname{Var}(U) = \\frac{V_{or}}{R} (1 + \\frac{c}{R-1})$ "
                      "(rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1)",
                      equation=(VarU, V / R * ratio))
J2_IS = Assumption("$J_2 = G^2$: one coordinate of $\\nabla J$ (summed over coordinates, $\\lVert \\nabla J \\rVert^2$)",
                   equation=(G ** 2, J2))

no_std_group_estimator_mse_closed_form = Result(
    name="no_std_group_estimator_mse_closed_form",
    doc="The no-std estimator $D = \\frac{R-1}{R} U$ (D5: no_std_group_estimator_is_scaled_rloo_estimator) has mean "
        "$\\frac{R-1}{R} \\nabla J$, so its MSE is $(\\frac{R-1}{R})^2 \\operatorname{Var}(U) + \\lVert \\nabla J \\rVert^2/R^2$.",
    lhs=no_std_mse,
    rhs=shrink ** 2 * VarU + J2 / R ** 2,
    assumptions=(J2_IS,),
    steps=(
        Step(shrink ** 2 * VarU + G ** 2 / R ** 2, "arithmetic", "The bias is $\\nabla J / R$."),
        Step(shrink ** 2 * VarU + J2 / R ** 2, "$J_2 = G^2$", using=(J2_IS,)),
    ),
)

kappa = sp.Symbol("kappa", nonnegative=True)  # ||grad J||^2 / V_or
KAPPA_IS = Assumption("$J_2 = \\kappa V_{or}$: write $\\kappa = \\lVert \\nabla J \\rVert^2/V_{or}$",
                      equation=(J2, kappa * V))
no_std_mse_ratio_to_oracle_variance = Result(
    name="no_std_mse_ratio_to_oracle_variance",
    doc="$\\mathrm{MSE}(D)/(V_{or}/R) = 1 + \\frac{c + \\kappa - 2}{R} + \\frac{1 - c}{R^2}$ with "
        "$\\kappa = \\lVert \\nabla J \\rVert^2/V_{or}$, for every $R \\ge 2$: $1 + O(1/R)$, and below 1 (better than the "
        "unbiased oracle) for large $R$ when $c + \\kappa < 2$.",
    lhs=(shrink ** 2 * VarU + J2 / R ** 2) / (V / R),
    rhs=1 + (c + kappa - 2) / R + (1 - c) / R ** 2,
    assumptions=(GROUP.as_context(), VAR_U_IS, KAPPA_IS),
    steps=(
        Step((shrink ** 2 * V / R * ratio + kappa * V / R ** 2) / (V / R), "substitute",
             using=(VAR_U_IS, KAPPA_IS)),
        Step(1 + (c + kappa - 2) / R + (1 - c) / R ** 2, "arithmetic",
             "$(R-1)^2 (1 + \\frac{c}{R-1}) = (R-1)^2 + c (R-1)$."),
    ),
)

no_std_mse_minus_rloo_variance = Result(
    name="no_std_mse_minus_rloo_variance",
    doc="$\\mathrm{MSE}(D) - \\operatorname{Var}(U) = (\\lVert \\nabla J \\rVert^2 - (2R-1) \\operatorname{Var}(U))/R^2$: "
        "the shrunk no-std estimator beats RLOO in MSE exactly when $\\lVert \\nabla J \\rVert^2 < (2R-1) "
        "\\operatorname{Var}(U)$.",
    lhs=shrink ** 2 * VarU + J2 / R ** 2 - VarU,
    rhs=(J2 - (2 * R - 1) * VarU) / R ** 2,
    assumptions=(GROUP.as_context(),),
    rule="arithmetic", why="$(\\frac{R-1}{R})^2 - 1 = -\\frac{2R - 1}{R^2}$.",
)

# == the optimal constant baseline b* (D8) ========================================================
# D8's moments of the total score: N_j = E[r^j ||g||^2]; N_0 > 0
N0 = sp.Symbol("N_0", positive=True)
N1, N2 = sp.symbols("N_1 N_2", real=True)


def total_variance(b: sp.Expr) -> sp.Expr:
    """D8's $V(b) = N_2 - 2 b N_1 + b^2 N_0 - J_2$, the total variance of $(r - b) g$."""
    return N2 - 2 * b * N1 + b ** 2 * N0 - J2


covariance = N1 - mu * N0  # Cov(r, ||g||^2)
optimal_baseline_variance_is_oracle_variance_minus_covariance_term = Result(
    name="optimal_baseline_variance_is_oracle_variance_minus_covariance_term",
    doc="With $b^* = N_1/N_0$ (D8, $N_j = E[r^j \\lVert g \\rVert^2]$): $V(b^*) = V(\\mu) - \\operatorname{Cov}(r, "
        "\\lVert g \\rVert^2)^2 / E \\lVert g \\rVert^2$, $V(\\mu) = V_{or}$. The $b^*$ group estimator "
        "$\\frac1R \\sum_i (r_i - b^*) g_i$ has variance $V(b^*)/R$: below the oracle baseline's by that term at every $R$.",
    lhs=total_variance(N1 / N0),
    rhs=total_variance(mu) - covariance ** 2 / N0,
    rule="complete the square", why="$V(\\mu) - V(b^*) = N_0 (\\mu - b^*)^2$ and $b^* - \\mu = \\operatorname{Cov}/N_0$ (D8).",
)

Vb = sp.Symbol("V_{b^*}", positive=True)
VB_BELOW = Assumption("$0 < V(b^*) \\le V_{or}$ (the previous result)", Vb <= V)
rloo_variance_ratio_to_optimal_baseline_is_at_least_oracle_ratio = Result(
    name="rloo_variance_ratio_to_optimal_baseline_is_at_least_oracle_ratio",
    doc="$\\operatorname{Var}(U)/(V(b^*)/R) = \\frac{V_{or}}{V(b^*)} (1 + \\frac{c}{R-1}) \\ge \\frac{V_{or}}{V(b^*)} \\ge 1$ "
        "for every $R \\ge 2$: RLOO's gap to the optimal constant baseline does not close as $R$ grows unless "
        "$\\operatorname{Cov}(r, \\lVert g \\rVert^2) = 0$.",
    lhs=(V / R * ratio) / (Vb / R),
    rhs=sp.Integer(1),
    relation=">=",
    assumptions=(GROUP, VB_BELOW),
    steps=(
        Step(V / Vb * ratio, "arithmetic"),
        Step(V / Vb, "signs", "$c/(R-1) \\ge 0$.", relation=">="),
        Step(sp.Integer(1), "$V(b^*) \\le V_{or}$", relation=">="),
    ),
)

# == GRPO's own (group-mean) baseline against b*, at finite R ======================================
ORACLE_IS_V_AT_MEAN = Assumption("$V_{or} = V(\\mu)$: the oracle baseline is the constant $b = \\mu = E[r]$",
                                 equation=(V, total_variance(mu)))
excess_over_optimal = covariance ** 2 / (N0 * R) + (sigma2 * M0 + J2) / (R * (R - 1))
group_mean_baseline_excess_variance_over_optimal_baseline = Result(
    name="group_mean_baseline_excess_variance_over_optimal_baseline",
    doc="The leave-one-out form of GRPO's group-mean baseline (RLOO; the no-std estimator is $\\frac{R-1}{R}$ times "
        "it) against the best constant baseline, for every $R \\ge 2$: $\\operatorname{Var}(U) - V(b^*)/R = "
        "\\frac{V_{or} - V(b^*)}{R} + \\frac{\\operatorname{Var}(r) E \\lVert g \\rVert^2 + \\lVert \\nabla J "
        "\\rVert^2}{R(R-1)}$, with $V_{or} - V(b^*) = \\operatorname{Cov}(r, \\lVert g \\rVert^2)^2 / "
        "E \\lVert g \\rVert^2$.",
    lhs=hoeffding_rloo_variance - total_variance(N1 / N0) / R,
    rhs=excess_over_optimal,
    assumptions=(GROUP, ZETA_1_IS, ZETA_2_IS, ORACLE_IS_V_AT_MEAN),
    steps=(
        Step(V / R + (sigma2 * M0 + J2) / (R * (R - 1)) - total_variance(N1 / N0) / R, "rloo_variance_closed_form",
             using=(rloo_variance_closed_form,)),
        Step(V / R + (sigma2 * M0 + J2) / (R * (R - 1)) - (total_variance(mu) - covariance ** 2 / N0) / R,
             "optimal_baseline_variance_is_oracle_variance_minus_covariance_term",
             using=(optimal_baseline_variance_is_oracle_variance_minus_covariance_term,)),
        Step(total_variance(mu) / R + (sigma2 * M0 + J2) / (R * (R - 1))
             - (total_variance(mu) - covariance ** 2 / N0) / R, "$V_{or} = V(\\mu)$", using=(ORACLE_IS_V_AT_MEAN,)),
        Step(excess_over_optimal, "arithmetic"),
    ),
)

REWARD_VARIES = Assumption("the reward varies and the score does not vanish: $\\operatorname{Var}(r) "
                           "E \\lVert g \\rVert^2 > 0$", positive=sigma2 * M0)
group_mean_baseline_is_never_optimal_at_finite_R = Result(
    name="group_mean_baseline_is_never_optimal_at_finite_R",
    doc="For every $R \\ge 2$, $\\operatorname{Var}(U) > V(b^*)/R$ whenever $\\operatorname{Var}(r) E \\lVert g "
        "\\rVert^2 > 0$: GRPO's group-mean baseline (in its unbiased leave-one-out form) is strictly worse than the "
        "best constant baseline at every finite $R$. The excess vanishes only when $\\operatorname{Var}(r) "
        "E \\lVert g \\rVert^2 = 0$ (constant reward or zero score, where also $\\nabla J = 0$ and the covariance "
        "is 0), and it tends to $\\operatorname{Cov}(r, \\lVert g \\rVert^2)^2/(R\\, E \\lVert g \\rVert^2)$ "
        "relative to $1/R$, not to 0, unless that covariance is 0. (The biased no-std estimator's MSE is another "
        "matter: it can fall below $V(b^*)/R$.)",
    lhs=hoeffding_rloo_variance - total_variance(N1 / N0) / R,
    rhs=sp.Integer(0),
    relation=">",
    assumptions=(GROUP, ZETA_1_IS, ZETA_2_IS, ORACLE_IS_V_AT_MEAN, REWARD_VARIES),
    steps=(
        Step(excess_over_optimal, "group_mean_baseline_excess_variance_over_optimal_baseline",
             using=(group_mean_baseline_excess_variance_over_optimal_baseline,)),
        Step(sp.Integer(0), "signs", "$\\operatorname{Cov}^2/(N_0 R) \\ge 0$, $J_2 \\ge 0$, $\\operatorname{Var}(r) "
             "E \\lVert g \\rVert^2 > 0$ and $R(R-1) > 0$.", relation=">"),
    ),
)


# == Hoeffding's counting, proved for every R: moments of sums of i.i.d. terms =====================
# E_iid[X] for X a polynomial in sums sum_{i=1}^R f(r_i, g_i) over i.i.d. rollouts; its law is the kernel rule
# iid_sum_moments (E[prod_m sum_i f_m(X_i)] = sum over the set partitions P of the factors of
# R (R-1) ... (R - |P| + 1) prod_{B in P} E[prod_{m in B} f_m(X_1)]); one rollout's moments are D5's E.
IidE = IidExpectation.over_rollouts("E_iid", Ex, r, g)
_COUNTING = (rules.iid_sum_moments, rules.expectation_linearity)  # the counting rule first: it fires before linearity


S_rg, S_r, S_g = sp.Sum(r[i] * g[i], (i, 1, R)), sp.Sum(r[i], (i, 1, R)), sp.Sum(g[i], (i, 1, R))
rloo_in_sums = (R * S_rg - S_r * S_g) / (R * (R - 1))  # rloo_estimator_is_u_statistic_of_pair_kernel, first step
oracle_estimator = sp.Sum((r[i] - mu) * g[i], (i, 1, R)) / R


def single_rollout_moments(*exprs: sp.Expr) -> tuple[Assumption, ...]:
    """The stated moments E[r_1^a g_1^b] that the counting rule and linearity leave in ``E_iid[expr]`` (read off
    the kernel rules' proposal); E[r^2 g] is not named: it only ever multiplies E[g] = 0, and a product left with
    it is not proved."""
    found = []
    for expr in exprs:
        found += [m for m in _monomials(propose(IidE(expr), *_COUNTING))
                  if m not in found and _powers(m, 1) != (2, 1)]
    for monomial in found:
        if monomial not in _STATED:
            _STATED[monomial] = product_moment(monomial)
    return tuple(_STATED[m] for m in found)


_oracle_sum_moments = single_rollout_moments(oracle_estimator ** 2, oracle_estimator)
oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R = Result(
    name="oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R",
    doc="For every $R \\ge 1$, the oracle-baseline estimator $O = \\frac1R \\sum_i (r_i - \\mu) g_i$ has "
        "$\\operatorname{Var}(O) = V_{or}/R$ (one coordinate): an average of $R$ i.i.d. terms.",
    lhs=IidE(oracle_estimator ** 2) - IidE(oracle_estimator) ** 2,
    rhs=V_OR / R,
    assumptions=_oracle_sum_moments,
    steps=(
        Step(V_OR / R, "moments of sums of i.i.d. terms",
             "$E[(\\sum_i t_i)^2] = R E[t^2] + R (R-1) E[t]^2$ and $E[\\sum_i t_i] = R E[t]$, $t = (r - \\mu) g$.",
             using=_oracle_sum_moments, by=_COUNTING),
    ),
    model=_group_moments_model,
)

_rloo_sum_moments = single_rollout_moments(rloo_in_sums ** 2, rloo_in_sums)
rloo_variance_is_hoeffding_formula_for_every_R = Result(
    name="rloo_variance_is_hoeffding_formula_for_every_R",
    doc="For every $R \\ge 2$, with $U = \\frac{R \\sum_i r_i g_i - (\\sum_i r_i)(\\sum_i g_i)}{R(R-1)}$ "
        "(rloo_estimator_is_u_statistic_of_pair_kernel, first step): $\\operatorname{Var}(U) = "
        "\\frac{4(R-2)}{R(R-1)} \\zeta_1 + \\frac{2}{R(R-1)} \\zeta_2$ with this family's $\\zeta_1 = V_{or}/4$ and "
        "$\\zeta_2 = \\frac12 (V_{or} + \\operatorname{Var}(r) E[g^2] + (\\nabla J)^2)$ (one coordinate). Hoeffding's "
        "formula is thus proved here for RLOO, by counting which rollouts coincide in $E[U^2]$, not assumed.",
    lhs=IidE(rloo_in_sums ** 2) - IidE(rloo_in_sums) ** 2,
    rhs=4 * (R - 2) / (R * (R - 1)) * V_OR / 4 + 2 / (R * (R - 1)) * ZETA_2,
    assumptions=(GROUP, *_rloo_sum_moments),
    steps=(
        Step(V_OR / R + ((S2 - mu ** 2) * M0 + G ** 2) / (R * (R - 1)), "moments of sums of i.i.d. terms",
             "Expand $U^2$ into $E[(\\sum r_i g_i)^2]$, $E[\\sum r_i g_i \\sum r_j \\sum g_k]$ and "
             "$E[(\\sum r_i)^2 (\\sum g_j)^2]$ and count the index tuples by which indices coincide; "
             "$E[g] = 0$ removes every block with a lone score.",
             using=_rloo_sum_moments, by=_COUNTING),
        Step(4 * (R - 2) / (R * (R - 1)) * V_OR / 4 + 2 / (R * (R - 1)) * ZETA_2, "arithmetic",
             "$\\frac{R-2}{R(R-1)} + \\frac{1}{R(R-1)} = \\frac{1}{R}$."),
    ),
    model=_group_moments_model,
)


# == the counting rule: what it trusts ===========================================================
hoeffding_pair_counting = Remark(
    "hoeffding_pair_counting",
    "Hoeffding's counting is proved above for every $R$ (oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R, "
    "rloo_variance_is_hoeffding_formula_for_every_R) by the kernel's counting rule for $E_{\\mathrm{iid}}$ "
    "(iid_sum_moments): "
    "$E[\\prod_{m=1}^M \\sum_{i=1}^R f_m(X_i)] = \\sum_\\pi R (R-1) \\cdots (R - |\\pi| + 1) \\prod_{B \\in \\pi} "
    "E[\\prod_{m \\in B} f_m(X)]$, the sum over the set partitions $\\pi$ of $\\{1, \\dots, M\\}$ (group the index "
    "tuples by which entries are equal; distinct rollouts are independent and identically distributed). That rule "
    "is part of the trusted base, like the linearity of $E$ (expectation_linearity); tests/test_d9_group_size.py "
    "checks it against "
    "enumeration of all $K^R$ tuples for $R \\le 4$ and products of up to four sums. The variance of the $b^*$ "
    "estimator, $V(b^*)/R$, is the same average of $R$ i.i.d. terms with $b^*$ in place of $\\mu$.",
)


# == exact check on finite models =================================================================
def _model_moments(K: int):
    ps, rhos, gammas = finite_model(K)
    expect = lambda f: sum(pa * f(ra, ga) for pa, ra, ga in zip(ps, rhos, gammas))  # noqa: E731
    mean = expect(lambda ra, ga: ra)
    grad = expect(lambda ra, ga: ra * ga)
    oracle = expect(lambda ra, ga: (ra - mean) ** 2 * ga ** 2) - grad ** 2
    spread = expect(lambda ra, ga: ra ** 2) - mean ** 2
    score_sq = expect(lambda ra, ga: ga ** 2)
    return ps, rhos, gammas, mean, grad, oracle, spread, score_sq


def _group_variance(ps, rhos, gammas, size: int, estimator) -> sp.Expr:
    """E[f^2] - E[f]^2 of a group estimator f(rewards, scores), by enumerating all K^R ordered tuples."""
    def value(o):
        return estimator([rhos[a] for a in o], [gammas[a] for a in o])
    first = enumerate_expectation(ps, size, value)
    second = enumerate_expectation(ps, size, lambda o: value(o) ** 2)
    return second - first ** 2


def _rloo(rewards, scores):
    size = len(rewards)
    return sum((rw - (sum(rewards) - rw) / (size - 1)) * sc for rw, sc in zip(rewards, scores)) / size


def _no_std(rewards, scores):
    size = len(rewards)
    return sum((rw - sum(rewards) / size) * sc for rw, sc in zip(rewards, scores)) / size


b_const = sp.Symbol("b", real=True)


def _constant_baseline(baseline):
    def estimator(rewards, scores):
        return sum((rw - baseline) * sc for rw, sc in zip(rewards, scores)) / len(rewards)
    return estimator


FINITE_SIZES = ((2, 2), (3, 2), (4, 2), (2, 3), (3, 3))  # (R, K)


def _finite_table(kind: str):
    lhs, rhs = [], []
    for size, K in FINITE_SIZES:
        ps, rhos, gammas, mean, grad, oracle, spread, score_sq = _model_moments(K)
        if kind == "rloo":
            lhs.append(_group_variance(ps, rhos, gammas, size, _rloo))
            rhs.append(oracle / size + (spread * score_sq + grad ** 2) / (size * (size - 1)))
        elif kind == "oracle":
            lhs.append(_group_variance(ps, rhos, gammas, size, _constant_baseline(mean)))
            rhs.append(oracle / size)
        elif kind == "constant":
            second = sum(pa * (ra - b_const) ** 2 * ga ** 2 for pa, ra, ga in zip(ps, rhos, gammas))
            lhs.append(_group_variance(ps, rhos, gammas, size, _constant_baseline(b_const)))
            rhs.append((second - grad ** 2) / size)
        else:  # the no-std estimator's MSE: E[(D - grad J)^2]
            def squared_error(o, size=size, grad=grad):
                return (_no_std([rhos[a] for a in o], [gammas[a] for a in o]) - grad) ** 2
            lhs.append(enumerate_expectation(ps, size, squared_error))
            var_u = oracle / size + (spread * score_sq + grad ** 2) / (size * (size - 1))
            rhs.append(sp.Rational(size - 1, size) ** 2 * var_u + grad ** 2 / size ** 2)
    return sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs)


def _enumerated(kind: str, latex: str):
    return computation(f"Enumerated{kind.title().replace('_', '')}", latex,
                       lambda: _finite_table(kind)[0])()


FINITE = Assumption("finite model: $K$ outcomes with probabilities $p_a > 0$, $p_K = 1 - \\sum_{a<K} p_a$, rewards "
                    "$\\rho_a$, scores $\\gamma_a$ (one coordinate) with $\\sum_a p_a \\gamma_a = 0$; entries for "
                    "$(R, K) = (2, 2), (3, 2), (4, 2), (2, 3), (3, 3)$, moments of the model on the right")
_p1, _p2 = sp.symbols("p_1 p_2", positive=True)  # finite_model's probability symbols (shared by K = 2, 3)
LAST_OUTCOME = Assumption("the last outcome has positive probability (its score divides by it): $1 - p_1 - p_2 > 0$ "
                          "for $K = 3$, hence also $1 - p_1 > 0$ for $K = 2$", positive=1 - _p1 - _p2)
_FINITE_MODEL = {_p1: sp.Rational(1, 3), _p2: sp.Rational(1, 4)}  # random probabilities rarely sum below 1
_SIZES_TEXT = "$(R, K) \\in \\{(2, 2), (3, 2), (4, 2), (2, 3), (3, 3)\\}$"

rloo_variance_formula_is_exact_on_finite_models = Result(
    name="rloo_variance_formula_is_exact_on_finite_models",
    instance="finite models, $(R, K) \\in \\{(2, 2), (3, 2), (4, 2), (2, 3), (3, 3)\\}$",
    doc="On finite models with " + _SIZES_TEXT + ", enumerating all $K^R$ outcome tuples gives "
        "$\\operatorname{Var}(U) = \\frac{V_{or}}{R} + \\frac{\\operatorname{Var}(r) E[g^2] + (\\nabla J)^2}{R(R-1)}$ exactly: "
        "Hoeffding's counting, checked.",
    lhs=_enumerated("rloo", r"\left(\operatorname{Var}_{\mathrm{enum}}(U)\right)_{(R, K)}"),
    rhs=_finite_table("rloo")[1],
    assumptions=(FINITE, LAST_OUTCOME),
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
    model=_FINITE_MODEL,
)

oracle_baseline_variance_is_V_or_over_R_on_finite_models = Result(
    name="oracle_baseline_variance_is_V_or_over_R_on_finite_models",
    instance="finite models, $(R, K) \\in \\{(2, 2), (3, 2), (4, 2), (2, 3), (3, 3)\\}$",
    doc="On the same finite models, $\\operatorname{Var}(\\frac1R \\sum_i (r_i - \\mu) g_i) = V_{or}/R$ exactly.",
    lhs=_enumerated("oracle", r"\left(\operatorname{Var}_{\mathrm{enum}}(O)\right)_{(R, K)}"),
    rhs=_finite_table("oracle")[1],
    assumptions=(FINITE, LAST_OUTCOME),
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
    model=_FINITE_MODEL,
)

constant_baseline_variance_is_V_b_over_R_on_finite_models = Result(
    name="constant_baseline_variance_is_V_b_over_R_on_finite_models",
    instance="finite models, $(R, K) \\in \\{(2, 2), (3, 2), (4, 2), (2, 3), (3, 3)\\}$",
    doc="On the same finite models, for every constant $b$ (so for $b^*$), $\\operatorname{Var}(\\frac1R \\sum_i "
        "(r_i - b) g_i) = V(b)/R$ with $V(b) = E[(r - b)^2 g^2] - (\\nabla J)^2$ exactly.",
    lhs=_enumerated("constant", r"\left(\operatorname{Var}_{\mathrm{enum}}(\tfrac1R \textstyle\sum_i (r_i - b) g_i)"
                                r"\right)_{(R, K)}"),
    rhs=_finite_table("constant")[1],
    assumptions=(FINITE, LAST_OUTCOME),
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
    model=_FINITE_MODEL,
)

no_std_mse_formula_is_exact_on_finite_models = Result(
    name="no_std_mse_formula_is_exact_on_finite_models",
    instance="finite models, $(R, K) \\in \\{(2, 2), (3, 2), (4, 2), (2, 3), (3, 3)\\}$",
    doc="On the same finite models, $E[(D - \\nabla J)^2] = (\\frac{R-1}{R})^2 \\operatorname{Var}(U) + (\\nabla J)^2/R^2$ "
        "exactly, with $\\operatorname{Var}(U)$ the closed form above.",
    lhs=_enumerated("no_std", r"\left(E_{\mathrm{enum}}[(D - \nabla J)^2]\right)_{(R, K)}"),
    rhs=_finite_table("no_std")[1],
    assumptions=(FINITE, LAST_OUTCOME),
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
    model=_FINITE_MODEL,
)

# == c has no upper bound =========================================================================
# four equally likely outcomes: rewards (1, -1, 0, 0), scores (0, 0, 1, -1); (r - mu) g = 0 on every outcome
_UNBOUNDED = ([sp.Rational(1, 4)] * 4, [sp.Integer(1), sp.Integer(-1), sp.Integer(0), sp.Integer(0)],
              [sp.Integer(0), sp.Integer(0), sp.Integer(1), sp.Integer(-1)])


def _unbounded_table():
    ps, rhos, gammas = _UNBOUNDED
    mean = sum(pa * ra for pa, ra in zip(ps, rhos))
    rows = []
    for size in (2, 3):
        rows.append(_group_variance(ps, rhos, gammas, size, _constant_baseline(mean)))
        rows.append(_group_variance(ps, rhos, gammas, size, _rloo))
    return sp.ImmutableMatrix(rows)


rloo_can_be_infinitely_worse_than_oracle_baseline = Result(
    name="rloo_can_be_infinitely_worse_than_oracle_baseline",
    doc="$c$ has no upper bound: with four equally likely outcomes, rewards $(1, -1, 0, 0)$ and scores $(0, 0, 1, -1)$ "
        "the oracle term $(r - \\mu) g$ is 0 on every outcome, so $V_{or} = 0$, while $\\operatorname{Var}(U) = "
        "\\operatorname{Var}(r) E[g^2]/(R(R-1)) = 1/(4R(R-1))$: entries $\\operatorname{Var}(O), \\operatorname{Var}(U)$ for "
        "$R = 2$, then $R = 3$, by enumeration.",
    lhs=computation("EnumeratedUnboundedExample", r"\left(\operatorname{Var}_{\mathrm{enum}}(O), "
                    r"\operatorname{Var}_{\mathrm{enum}}(U)\right)_{R = 2, 3}", _unbounded_table)(),
    rhs=sp.ImmutableMatrix([0, sp.Rational(1, 8), 0, sp.Rational(1, 24)]),
    assumptions=(Assumption("four outcomes, probabilities $1/4$, rewards $(1, -1, 0, 0)$, scores $(0, 0, 1, -1)$ "
                            "(mean zero)"),),
    rule="enumeration of all outcome tuples", why="A finite expectation is a finite weighted sum.",
)

# == std scaling ==================================================================================
g1, g2 = sp.symbols("g_1 g_2", real=True)


def _binary_pairs(build):
    return sp.ImmutableMatrix([build(r1, r2) for r1, r2 in itertools.product((0, 1), repeat=2)])


def _sample_std_advantages(rewards) -> list[sp.Expr]:
    """The sample-std advantages ($\\epsilon = 0$) of one concrete group, written from their definition:
    $A_i = 0$ for a constant group (D4's convention, $\\sum_j (r_j - \\bar r)^2 = 0$), $(r_i - \\bar r)/s$
    otherwise. Built by SymPy's constructors only (the kernel rebuilds every node by its constructor too): for
    numbers the Piecewise's condition is decided as it is built, and so is the arithmetic of the numbers."""
    size = len(rewards)
    mean = sp.Add(*rewards) / size
    centred = [rw - mean for rw in rewards]
    sum_of_squares = sp.Add(*[c_ ** 2 for c_ in centred])
    std = sp.sqrt(sum_of_squares / (size - 1))
    return [sp.Piecewise((0, sp.Eq(sum_of_squares, 0)), (c_ / std, True)) for c_ in centred]


def _grpo_r2(r1, r2):
    adv = _sample_std_advantages([sp.Integer(r1), sp.Integer(r2)])
    return (adv[0] * g1 + adv[1] * g2) / 2


binary_sample_std_estimator_at_R2_is_rloo_over_sqrt2 = Result(
    name="binary_sample_std_estimator_at_R2_is_rloo_over_sqrt2",
    instance="$R = 2$",
    doc="For binary rewards and $R = 2$ the sample-std GRPO estimator ($\\epsilon = 0$, zero for a constant group) is "
        "exactly $U/\\sqrt{2}$ with $U = \\frac12 (r_1 - r_2)(g_1 - g_2)$ (entries: $(r_1, r_2) = (0,0), (0,1), (1,0), "
        "(1,1)$): its variance is $\\operatorname{Var}(U)/2$ and its mean $\\nabla J/\\sqrt{2}$ (D5's $c_2$).",
    lhs=computation("GrpoEstimatorR2", r"\left(\tfrac12 (A_1 g_1 + A_2 g_2)\right)_{r \in \{0,1\}^2}",
                    lambda: _binary_pairs(_grpo_r2))(),
    rhs=_binary_pairs(lambda r1, r2: (r1 - r2) * (g1 - g2) / (2 * sp.sqrt(2))),
    assumptions=(Assumption("two rollouts with rewards $r_1, r_2 \\in \\{0, 1\\}$ and score coordinates $g_1, g_2$; "
                            "sample std, $\\epsilon = 0$"),),
    rule="evaluate the advantages of each reward pair", why="For $r_1 \\ne r_2$, $s = 1/\\sqrt{2}$ and "
                                                            "$A_i = \\pm 1/\\sqrt{2}$.",
)

std_scaled_estimators_have_no_closed_form = Remark(
    "std_scaled_estimators_have_no_closed_form",
    "With the std scaling ($A_i = (r_i - \\bar r)/(s + \\epsilon)$) the estimator is a ratio of group statistics and its "
    "variance has no closed form in $R$ in general; for binary rewards its mean is $c_R(p) \\nabla J$ (D5), and at "
    "$R = 2$ it is exactly $U/\\sqrt{2}$ (above). Its exact variance and MSE for $R = 2..8$ on enumerable policies are "
    "tabulated by experiments/group_size_variance.py, by exact enumeration with the oracle; nothing there is a "
    "kernel link.",
)
