"""D8 Optimal baseline: the variance-minimising constant baseline, and when the mean reward is it.

Proved symbolically for the estimator $(r - b) g$ of $\\nabla J$ with score $g$, $E[g] = 0$, over a
distribution with finite support $\\{(p_n, r_n, g_n)\\}_{n \\le N}$ (only linearity of expectation is used,
so the algebra carries over to any distribution with finite moments): the mean $E[(r - b) g]$ does not
depend on $b$; the total variance (trace of the covariance) is the quadratic
$V(b) = M_2 - 2 b M_1 + b^2 M_0 - \\lVert \\nabla J \\rVert^2$ with $M_j = E[r^j \\lVert g \\rVert^2]$; if
$M_0 = E \\lVert g \\rVert^2 > 0$ then $V(b) = V(b^*) + M_0 (b - b^*)^2 \\ge V(b^*)$ with
$b^* = E[r \\lVert g \\rVert^2]/E[\\lVert g \\rVert^2]$, and coordinatewise $b^*_k = E[r g_k^2]/E[g_k^2]$. The gap is
$b^* - E[r] = \\operatorname{Cov}(r, \\lVert g \\rVert^2)/E \\lVert g \\rVert^2$, so the mean baseline is optimal iff
$\\operatorname{Cov}(r, \\lVert g \\rVert^2) = 0$. For a $K$-action softmax bandit $\\lVert g(a) \\rVert^2 = 1 - 2\\pi_a + S$,
$S = \\sum_b \\pi_b^2$ (symbolic logits for $K = 3$; every $K$ from the score $e_a - \\pi$), $E \\lVert g \\rVert^2 = 1 - S$,
$b^* = \\sum_a \\pi_a r_a (1 - 2\\pi_a + S)/(1 - S)$ and $b^* - E[r] = 2 (S \\sum_a \\pi_a r_a - \\sum_a \\pi_a^2 r_a)/(1 - S)$
for every $K$; with $1 - S = \\sum_a \\pi_a (1 - \\pi_a) > 0$ (proved for every $K$, each $\\pi_a$ in $(0, 1)$) the mean
is optimal iff $\\sum_a \\pi_a^2 r_a = S \\sum_a \\pi_a r_a$, i.e. iff $\\operatorname{Cov}_{a \\sim \\pi}(r_a, \\pi_a) = 0$:
true for uniform $\\pi$ or constant reward (proved), false for $\\pi = (1/2, 1/4, 1/4)$, $r = (1, 0, 0)$, where
$b^* = 3/10 \\ne 1/2 = E[r]$ and the mean baseline has total variance larger by exactly $1/40$.

Against the paper: its optimality conditions for GRPO's group-mean baseline should be read against this
exact criterion. The criterion concerns the population mean $E[r]$; GRPO's group mean also contains
$r_i$ itself, which shrinks the expected gradient by $(R - 1)/R$ (D5), and the std scaling changes the
estimator further, so "the group mean is optimal" is at best a statement about $E[r]$, never exact for
the group statistic. See the Remark ``group_mean_is_not_the_population_mean``.
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp

from .notation import g, r
from grpo_verify.proof import Assumption, as_written, Remark, Result, Step, rules

# == symbols ======================================================================================
N = sp.Symbol("N", integer=True, positive=True)  # support size of the finite model
n = sp.Symbol("n", integer=True, positive=True)
p = sp.IndexedBase("p", positive=True)  # p[n]: probability of outcome n
q = sp.IndexedBase("q", nonnegative=True)  # q[n] = ||g_n||^2
b = sp.Symbol("b", real=True)  # the constant baseline
M0 = sp.Symbol("M_0", real=True)  # E[||g||^2], assumed > 0 where needed
M1 = sp.Symbol("M_1", real=True)  # E[r ||g||^2]
M2 = sp.Symbol("M_2", real=True)  # E[r^2 ||g||^2]
J2 = sp.Symbol("J_2", nonnegative=True)  # ||grad J||^2 = ||E[r g]||^2
mu = sp.Symbol("mu_r", real=True)  # E[r]


def E(x: sp.Expr) -> sp.Expr:
    """$E[x] = \\sum_n p_n x_n$ on the finite model."""
    return sp.Sum(p[n] * x, (n, 1, N))


FINITE = Assumption("outcome $n$ has probability $p_n > 0$, reward $r_n$ and score $g_n$, $\\sum_n p_n = 1$; "
                    "$g[n]$ is one coordinate of $g_n$ and $q_n = \\lVert g_n \\rVert^2$", context=True)
ZERO_MEAN_SCORE = Assumption("the score has mean zero: $E[g] = \\sum_n p_n g_n = 0$", equation=(E(g[n]), sp.Integer(0)))
SECOND_MOMENT = Assumption("write $M_2 = E[r^2 \\lVert g \\rVert^2]$", equation=(E(r[n] ** 2 * q[n]), M2))
FIRST_MOMENT = Assumption("write $M_1 = E[r \\lVert g \\rVert^2]$", equation=(E(r[n] * q[n]), M1))
ZEROTH_MOMENT = Assumption("write $M_0 = E[\\lVert g \\rVert^2]$", equation=(E(q[n]), M0))
MOMENTS = (SECOND_MOMENT, FIRST_MOMENT, ZEROTH_MOMENT)
M0_POSITIVE = Assumption("$M_0 = E \\lVert g \\rVert^2 > 0$ (the score is not almost surely zero)", positive=M0)


def _mean_zero_score_model(sizes: dict) -> dict:
    """A model of the finite distribution with a mean-zero score: probabilities $p_n = 2n/(N(N+1))$ and scores
    $g_n = 2n - N - 1$ up to a constant making $\\sum_n p_n g_n = 0$ (the evaluator's random scores are not)."""
    size = int(sizes.get(N, 3))
    probs = {k: sp.Rational(2 * k, size * (size + 1)) for k in range(1, size + 1)}
    mean = sum(probs[k] * (2 * k - size - 1) for k in probs)
    return {N: size, p: probs, g: {k: 2 * k - size - 1 - mean for k in probs}}


# == general estimator ============================================================================
baselined_estimator_mean_does_not_depend_on_baseline = Result(
    name="baselined_estimator_mean_does_not_depend_on_baseline",
    doc="Since $E[g] = 0$, $E[(r - b) g] = E[r g] = \\nabla J$ for every constant $b$ (one coordinate).",
    lhs=E((r[n] - b) * g[n]),
    rhs=E(r[n] * g[n]),
    assumptions=(FINITE, ZERO_MEAN_SCORE),
    steps=(
        Step(E(r[n] * g[n]) - b * E(g[n]), "linearity of expectation", by=(rules.sum_linearity,)),
        Step(E(r[n] * g[n]) - b * 0, "zero-mean score", using=(ZERO_MEAN_SCORE,)),
        Step(E(r[n] * g[n]), "arithmetic"),
    ),
    model=_mean_zero_score_model,
)

baselined_estimator_second_moment_is_quadratic_in_baseline = Result(
    name="baselined_estimator_second_moment_is_quadratic_in_baseline",
    doc="$E[(r - b)^2 \\lVert g \\rVert^2] = M_2 - 2 b M_1 + b^2 M_0$; with the previous result the total variance "
        "$V(b) = E \\lVert (r - b) g \\rVert^2 - \\lVert E[(r - b) g] \\rVert^2$ is $M_2 - 2 b M_1 + b^2 M_0 - "
        "\\lVert \\nabla J \\rVert^2$, a quadratic in $b$.",
    lhs=E((r[n] - b) ** 2 * q[n]),
    rhs=M2 - 2 * b * M1 + b ** 2 * M0,
    assumptions=(FINITE, *MOMENTS),
    steps=(
        Step(E(r[n] ** 2 * q[n]) - 2 * b * E(r[n] * q[n]) + b ** 2 * E(q[n]), "linearity of expectation",
             "Expand $(r - b)^2$; $b$ is constant.", by=(rules.sum_linearity,)),
        Step(M2 - 2 * b * M1 + b ** 2 * M0, "definition of the moments", using=MOMENTS),
    ),
)


def total_variance_in_moments(baseline: sp.Expr) -> sp.Expr:
    """$V(b) = M_2 - 2 b M_1 + b^2 M_0 - \\lVert \\nabla J \\rVert^2$."""
    return M2 - 2 * baseline * M1 + baseline ** 2 * M0 - J2


b_star = M1 / M0
total_variance_is_minimised_by_optimal_baseline = Result(
    name="total_variance_is_minimised_by_optimal_baseline",
    doc="$V(b) = V(b^*) + E\\lVert g \\rVert^2 (b - b^*)^2 \\ge V(b^*)$ with "
        "$b^* = E[r \\lVert g \\rVert^2]/E[\\lVert g \\rVert^2] = M_1/M_0$, for every real $b$.",
    lhs=total_variance_in_moments(b),
    rhs=total_variance_in_moments(b_star),
    relation=">=",
    assumptions=(M0_POSITIVE,),
    steps=(
        Step(total_variance_in_moments(b_star) + M0 * (b - b_star) ** 2, "complete the square",
             "$M_0 b^2 - 2 M_1 b = M_0 (b - M_1/M_0)^2 - M_1^2/M_0$."),
        Step(total_variance_in_moments(b_star), "drop a nonnegative term", "$M_0 > 0$ and a square is $\\ge 0$.",
             relation=">="),
    ),
)

_b_star_k = E(r[n] * g[n] ** 2) / E(g[n] ** 2)
coordinate_variance_is_minimised_by_coordinate_optimal_baseline = Result(
    name="coordinate_variance_is_minimised_by_coordinate_optimal_baseline",
    doc="Per coordinate $k$, with the score of mean zero ($E[g_k] = 0$): $\\operatorname{Var}((r - b) g_k) = "
        "E[(r - b)^2 g_k^2] - E[(r - b) g_k]^2 = E[(r - b)^2 g_k^2] - E[r g_k]^2$ equals its value at "
        "$b^*_k = E[r g_k^2]/E[g_k^2]$ plus $E[g_k^2](b - b^*_k)^2$.",
    lhs=E((r[n] - b) ** 2 * g[n] ** 2) - E((r[n] - b) * g[n]) ** 2,
    rhs=(E((r[n] - _b_star_k) ** 2 * g[n] ** 2) - E(r[n] * g[n]) ** 2 + E(g[n] ** 2) * (b - _b_star_k) ** 2),
    assumptions=(FINITE, ZERO_MEAN_SCORE,
                 Assumption("$E[g_k^2] > 0$; $g[n]$ is the $k$-th coordinate of $g_n$", positive=E(g[n] ** 2))),
    steps=(
        Step(E((r[n] - b) ** 2 * g[n] ** 2) - (E(r[n] * g[n]) - b * E(g[n])) ** 2, "linearity of expectation",
             by=(rules.sum_linearity,)),
        Step(E((r[n] - b) ** 2 * g[n] ** 2) - E(r[n] * g[n]) ** 2, "the score has mean zero",
             "$E[g_k] = 0$, so $E[(r - b) g_k] = E[r g_k]$ for every $b$.", using=(ZERO_MEAN_SCORE,)),
        Step(E((r[n] - _b_star_k) ** 2 * g[n] ** 2) - E(r[n] * g[n]) ** 2 + E(g[n] ** 2) * (b - _b_star_k) ** 2,
             "complete the square", "Both sides are quadratics in $b$ with the same coefficients once the sums "
             "are split.", by=(rules.sum_linearity,)),
    ),
    model=_mean_zero_score_model,
)

optimal_baseline_minus_mean_reward_is_covariance_ratio = Result(
    name="optimal_baseline_minus_mean_reward_is_covariance_ratio",
    doc="$b^* - E[r] = \\operatorname{Cov}(r, \\lVert g \\rVert^2)/E\\lVert g \\rVert^2$ with "
        "$\\operatorname{Cov}(r, \\lVert g \\rVert^2) = E[r \\lVert g \\rVert^2] - E[r] E[\\lVert g \\rVert^2]$; since "
        "$E \\lVert g \\rVert^2 > 0$, the mean baseline $b = E[r]$ is optimal iff the covariance is 0.",
    lhs=E(r[n] * q[n]) / E(q[n]) - E(r[n]),
    rhs=(E(r[n] * q[n]) - E(r[n]) * E(q[n])) / E(q[n]),
    assumptions=(FINITE, Assumption("$E \\lVert g \\rVert^2 > 0$", positive=E(q[n]))),
    rule="common denominator",
)

# == the softmax bandit ===========================================================================
K = sp.Symbol("K", integer=True, positive=True)  # number of actions
a = sp.Symbol("a", integer=True, positive=True)  # action index
bb = sp.Symbol("b", integer=True, positive=True)  # second action index (printed b)
pi = sp.IndexedBase("pi", positive=True)  # pi[a]: softmax probability of action a
S = sp.Sum(pi[bb] ** 2, (bb, 1, K))  # sum_b pi_b^2
SOFTMAX = Assumption("a $K$-action softmax policy $\\pi_a = e^{\\theta_a}/\\sum_b e^{\\theta_b}$, so $\\pi_a > 0$ and "
                     "$\\sum_b \\pi_b = 1$; action $a$ has reward $r_a$", context=True)
# one assumption serves sums over a and over b: the kernel renames bound indices canonically
NORMALISED = Assumption("the policy is normalised: $\\sum_b \\pi_b = 1$",
                        equation=(sp.Sum(pi[bb], (bb, 1, K)), sp.Integer(1)))
ONE_MINUS_S_POSITIVE = Assumption("$1 - S > 0$", positive=1 - S)


def _policy_model(sizes: dict) -> dict:
    """A normalised policy for the evaluator's points: $\\pi_a = 2a/(K(K+1))$ (its random entries do not sum to 1)."""
    size = int(sizes.get(K, 3))
    return {K: size, pi: {k: sp.Rational(2 * k, size * (size + 1)) for k in range(1, size + 1)}}


def softmax_probabilities(logits: Sequence[sp.Expr]) -> list[sp.Expr]:
    """$\\pi_a = e^{\\theta_a}/\\sum_b e^{\\theta_b}$."""
    total = sum(sp.exp(t) for t in logits)
    return [sp.exp(t) / total for t in logits]


def softmax_squared_score_norm(probs: Sequence[sp.Expr], action: int) -> sp.Expr:
    """$\\lVert g(a) \\rVert^2 = 1 - 2\\pi_a + \\sum_b \\pi_b^2$ (0-based ``action``)."""
    return 1 - 2 * probs[action] + sum(x ** 2 for x in probs)


def softmax_optimal_baseline(probs: Sequence[sp.Expr], rewards: Sequence[sp.Expr]) -> sp.Expr:
    """$b^* = \\sum_a \\pi_a r_a (1 - 2\\pi_a + S)/(1 - S)$, $S = \\sum_b \\pi_b^2$ (requires $\\sum_a \\pi_a = 1$)."""
    s = sum(x ** 2 for x in probs)
    return sum(x * y * (1 - 2 * x + s) for x, y in zip(probs, rewards)) / (1 - s)


def softmax_optimal_baseline_gap(probs: Sequence[sp.Expr], rewards: Sequence[sp.Expr]) -> sp.Expr:
    """$b^* - E[r] = 2 (S \\sum_a \\pi_a r_a - \\sum_a \\pi_a^2 r_a)/(1 - S)$ (requires $\\sum_a \\pi_a = 1$)."""
    s = sum(x ** 2 for x in probs)
    mean = sum(x * y for x, y in zip(probs, rewards))
    return 2 * (s * mean - sum(x ** 2 * y for x, y in zip(probs, rewards))) / (1 - s)


def optimal_constant_baseline(probs: Sequence[sp.Expr], rewards: Sequence[sp.Expr],
                              squared_score_norms: Sequence[sp.Expr]) -> sp.Expr:
    """$b^* = E[r \\lVert g \\rVert^2]/E[\\lVert g \\rVert^2]$ on a finite model."""
    return (sum(x * y * z for x, y, z in zip(probs, rewards, squared_score_norms))
            / sum(x * z for x, z in zip(probs, squared_score_norms)))


def softmax_total_variance(probs: Sequence[sp.Expr], rewards: Sequence[sp.Expr], baseline: sp.Expr,
                           free_logits: int | None = None) -> sp.Expr:
    """$V(b) = E \\lVert (r - b) g \\rVert^2 - \\lVert E[(r - b) g] \\rVert^2$ with the scores $g(a) = e_a - \\pi$,
    written coordinate by coordinate ($\\lVert x \\rVert^2 = \\sum_c x_c^2$) over the first ``free_logits``
    coordinates (default: every logit free; $K - 1$: the last, reference logit fixed)."""
    size = len(probs)
    columns = size if free_logits is None else free_logits

    def score(act: int, col: int) -> sp.Expr:
        return sp.KroneckerDelta(act, col) - probs[col]

    second = sp.Add(*[probs[act] * (rewards[act] - baseline) ** 2
                      * sp.Add(*[score(act, col) ** 2 for col in range(columns)]) for act in range(size)])
    mean = [sp.Add(*[probs[act] * (rewards[act] - baseline) * score(act, col) for act in range(size)])
            for col in range(columns)]
    return second - sp.Add(*[m ** 2 for m in mean])


theta = sp.symbols("theta_1:4", real=True)
pi3 = softmax_probabilities(theta)
# the derivative rules, with log(e^theta_a / Z) = theta_a - log Z (both factors positive)
_SOFTMAX_RULES = (*rules.DIFFERENTIATION, rules.log_of_a_product_or_power)
# logits 0, log 2, log 3: the softmax (1/6, 1/3, 1/2) and every derivative are rational there, so the evaluator
# compares exactly (a hint for its points only: the result has no formal assumptions)
_LOGITS3_AT_LOGS = {theta[0]: sp.Integer(0), theta[1]: sp.log(2), theta[2]: sp.log(3)}
softmax_squared_score_norm_K3 = Result(
    name="softmax_squared_score_norm_K3",
    doc="For $K = 3$ with symbolic logits, $\\sum_b (\\partial \\log \\pi_a/\\partial \\theta_b)^2 = 1 - 2\\pi_a + "
        "\\sum_b \\pi_b^2$ for each action $a$.",
    lhs=sp.ImmutableMatrix([[sum(sp.Derivative(sp.log(pi3[act]), t) ** 2 for t in theta) for act in range(3)]]),
    rhs=sp.ImmutableMatrix([[softmax_squared_score_norm(pi3, act) for act in range(3)]]),
    assumptions=(SOFTMAX,),
    rule="differentiate the log-softmax", why="$\\partial \\log \\pi_a/\\partial \\theta_b = \\delta_{ab} - \\pi_b$.",
    by=_SOFTMAX_RULES,
    model=_LOGITS3_AT_LOGS,
)

softmax_squared_score_norm_every_K = Result(
    name="softmax_squared_score_norm_every_K",
    doc="For every $K$, with the score $g(a) = e_a - \\pi$ (D1), $\\lVert g(1) \\rVert^2 = \\sum_b (\\delta_{1b} - \\pi_b)^2 = "
        "1 - 2\\pi_1 + \\sum_b \\pi_b^2$; by relabelling the actions the same holds for every action $a$.",
    lhs=sp.Sum((sp.KroneckerDelta(1, bb) - pi[bb]) ** 2, (bb, 1, K)),
    rhs=1 - 2 * pi[1] + S,
    # the identity holds for every family pi; normalisation says where it is meant (a probability vector)
    assumptions=(SOFTMAX, NORMALISED.as_context()),
    steps=(
        Step((1 - pi[1]) ** 2 + sp.Sum(pi[bb] ** 2, (bb, 2, K)), "split off the term $b = 1$",
             "$\\delta_{11} = 1$ and $\\delta_{1b} = 0$ for $b \\ge 2$.",
             by=(rules.sum_split_first, rules.delta_of_equal_or_distinct_values)),
        Step(1 - 2 * pi[1] + S, "split off the term $b = 1$ of $S$",
             "$S = \\pi_1^2 + \\sum_{b \\ge 2} \\pi_b^2$; expand $(1 - \\pi_1)^2$.", by=(rules.sum_split_first,)),
    ),
    model=_policy_model,
)

softmax_expected_squared_score_norm_is_one_minus_S = Result(
    name="softmax_expected_squared_score_norm_is_one_minus_S",
    doc="$E_{a \\sim \\pi} \\lVert g(a) \\rVert^2 = \\sum_a \\pi_a (1 - 2\\pi_a + S) = 1 - S$ for every $K$.",
    lhs=sp.Sum(pi[a] * (1 - 2 * pi[a] + S), (a, 1, K)),
    rhs=1 - S,
    assumptions=(SOFTMAX, NORMALISED),
    steps=(
        Step(sp.Sum(pi[a], (a, 1, K)) * (1 + S) - 2 * sp.Sum(pi[a] ** 2, (a, 1, K)), "linearity of the sum",
             "$S$ does not depend on $a$.", by=(rules.sum_linearity,)),
        Step(1 + S - 2 * S, "normalisation", "$\\sum_a \\pi_a = 1$.", using=(NORMALISED,)),
        Step(1 - S, "arithmetic"),
    ),
    model=_policy_model,
)

one_minus_S_is_expected_complement = Result(
    name="one_minus_S_is_expected_complement",
    doc="$1 - S = \\sum_a \\pi_a (1 - \\pi_a)$ for every $K$: positive for a softmax policy, whose probabilities all "
        "lie in $(0, 1)$ when $K \\ge 2$.",
    lhs=1 - S,
    rhs=sp.Sum(pi[a] * (1 - pi[a]), (a, 1, K)),
    assumptions=(SOFTMAX, NORMALISED),
    steps=(
        Step(sp.Sum(pi[a], (a, 1, K)) - S, "normalisation", using=(NORMALISED,)),
        Step(sp.Sum(pi[a] * (1 - pi[a]), (a, 1, K)), "linearity of the sum", by=(rules.sum_linearity,)),
    ),
    model=_policy_model,
)

p1, p2, p3 = sp.symbols("pi_1:4", positive=True)
NORMALISED_K3 = Assumption("$\\pi_1, \\pi_2, \\pi_3 > 0$ with $\\pi_1 + \\pi_2 + \\pi_3 = 1$",
                           equation=(p1 + p2 + p3, sp.Integer(1)))
one_minus_S_is_positive_K3 = Result(
    name="one_minus_S_is_positive_K3",
    doc="For $K = 3$: $1 - \\sum_b \\pi_b^2 = 2(\\pi_1\\pi_2 + \\pi_1\\pi_3 + \\pi_2\\pi_3) > 0$.",
    lhs=1 - (p1 ** 2 + p2 ** 2 + p3 ** 2),
    rhs=sp.Integer(0),
    relation=">",
    assumptions=(NORMALISED_K3,),
    steps=(
        Step((p1 + p2 + p3) ** 2 - (p1 ** 2 + p2 ** 2 + p3 ** 2), "normalisation", "$1 = (\\sum_b \\pi_b)^2$.",
             using=(NORMALISED_K3,)),
        Step(2 * (p1 * p2 + p1 * p3 + p2 * p3), "expand"),
        Step(sp.Integer(0), "sign", "Every probability is positive.", relation=">"),
    ),
    model={p1: sp.Rational(1, 2), p2: sp.Rational(1, 3)},  # pi_3 = 1/6 is solved from the normalisation
)

EVERY_PROBABILITY_BELOW_ONE = Assumption(
    "every $\\pi_a < 1$: a softmax policy over $K \\ge 2$ actions puts positive mass on every other action",
    pi[a] < 1, for_all=(a, 1, K))
one_minus_S_is_positive = Result(
    name="one_minus_S_is_positive",
    doc="$1 - S = 1 - \\sum_b \\pi_b^2 > 0$ for every $K$: each term of $\\sum_a \\pi_a (1 - \\pi_a)$ is positive.",
    lhs=1 - S,
    rhs=sp.Integer(0),
    relation=">",
    assumptions=(SOFTMAX, NORMALISED, EVERY_PROBABILITY_BELOW_ONE),
    steps=(
        Step(sp.Sum(pi[a] * (1 - pi[a]), (a, 1, K)), "one_minus_S_is_expected_complement",
             using=(one_minus_S_is_expected_complement,)),
        Step(sp.Integer(0), "a sum of positive terms", "$0 < \\pi_a < 1$ for every $a$, and $K \\ge 1$.",
             relation=">", by=(rules.sum_of_signed_terms,)),
    ),
    model=_policy_model,
)

softmax_optimal_baseline_closed_form = Result(
    name="softmax_optimal_baseline_closed_form",
    doc="For the $K$-action softmax bandit $b^* = \\sum_a \\pi_a r_a \\lVert g(a) \\rVert^2 / \\sum_a \\pi_a \\lVert g(a) "
        "\\rVert^2 = \\sum_a \\pi_a r_a (1 - 2\\pi_a + S)/(1 - S)$.",
    lhs=sp.Sum(pi[a] * r[a] * (1 - 2 * pi[a] + S), (a, 1, K)) / sp.Sum(pi[a] * (1 - 2 * pi[a] + S), (a, 1, K)),
    rhs=sp.Sum(pi[a] * r[a] * (1 - 2 * pi[a] + S), (a, 1, K)) / (1 - S),
    # both denominators must be shown nonzero from the assumptions (the cited equation rewrites, but the
    # kernel discharges definedness from the assumptions alone), so both forms of E||g||^2 > 0 are stated
    assumptions=(SOFTMAX, NORMALISED,
                 Assumption("$E_{a \\sim \\pi} \\lVert g(a) \\rVert^2 = \\sum_a \\pi_a (1 - 2\\pi_a + S) > 0$ and "
                            "$1 - S > 0$ (the two are equal, by the previous result)",
                            condition=sp.Sum(pi[a] * (1 - 2 * pi[a] + S), (a, 1, K)) > 0, positive=1 - S)),
    rule="softmax_expected_squared_score_norm_is_one_minus_S",
    using=(softmax_expected_squared_score_norm_is_one_minus_S,),
    model=_policy_model,
)

mean_reward = sp.Sum(pi[a] * r[a], (a, 1, K))
softmax_optimal_baseline_minus_mean_reward = Result(
    name="softmax_optimal_baseline_minus_mean_reward",
    doc="For every $K$: $b^* - E[r] = 2 (S \\sum_a \\pi_a r_a - \\sum_a \\pi_a^2 r_a)/(1 - S)$. As $1 - S > 0$, the mean "
        "baseline is optimal iff $\\sum_a \\pi_a^2 r_a = S \\sum_a \\pi_a r_a$, i.e. iff "
        "$\\operatorname{Cov}_{a \\sim \\pi}(r_a, \\pi_a) = 0$.",
    lhs=sp.Sum(pi[a] * r[a] * (1 - 2 * pi[a] + S), (a, 1, K)) / (1 - S) - mean_reward,
    rhs=2 * (S * mean_reward - sp.Sum(pi[a] ** 2 * r[a], (a, 1, K))) / (1 - S),
    assumptions=(SOFTMAX, ONE_MINUS_S_POSITIVE),
    steps=(
        Step((mean_reward * (1 + S) - 2 * sp.Sum(pi[a] ** 2 * r[a], (a, 1, K)) - (1 - S) * mean_reward) / (1 - S),
             "linearity of the sum, common denominator", "$S$ does not depend on $a$.", by=(rules.sum_linearity,)),
        Step(2 * (S * mean_reward - sp.Sum(pi[a] ** 2 * r[a], (a, 1, K))) / (1 - S), "arithmetic"),
    ),
    model=_policy_model,  # random entries rarely give 1 - S > 0 for K >= 2
)

uniform_policy_makes_mean_baseline_optimal = Result(
    name="uniform_policy_makes_mean_baseline_optimal",
    doc="For the uniform policy $\\pi_a = 1/K$ the optimality condition holds for every reward: "
        "$\\sum_a \\pi_a^2 r_a = S \\sum_a \\pi_a r_a$.",
    lhs=sp.Sum(r[a] / K ** 2, (a, 1, K)),
    rhs=sp.Sum(sp.Integer(1) / K ** 2, (bb, 1, K)) * sp.Sum(r[a] / K, (a, 1, K)),
    assumptions=(Assumption("$\\pi_a = 1/K$ for every action (all logits equal)", context=True),),
    rule="linearity of the sum", why="$S = K \\cdot 1/K^2 = 1/K$.",
    by=(rules.sum_linearity, rules.sum_of_a_constant),
)

v = sp.Symbol("v", real=True)
constant_reward_makes_mean_baseline_optimal = Result(
    name="constant_reward_makes_mean_baseline_optimal",
    doc="For a constant reward $r_a = v$ the optimality condition holds for every policy.",
    lhs=sp.Sum(pi[a] ** 2 * v, (a, 1, K)),
    rhs=S * sp.Sum(pi[a] * v, (a, 1, K)),
    assumptions=(SOFTMAX, NORMALISED, Assumption("$r_a = v$ for every action", context=True)),
    steps=(
        Step(v * S, "linearity of the sum", by=(rules.sum_linearity,)),
        Step(S * v * sp.Sum(pi[a], (a, 1, K)), "normalisation", using=(NORMALISED,)),
        Step(S * sp.Sum(pi[a] * v, (a, 1, K)), "linearity of the sum", by=(rules.sum_linearity,)),
    ),
    model=_policy_model,
)

# A concrete instance: logits (log 2, 0, 0), so pi = (1/2, 1/4, 1/4); reward 1 on action 1 only.
PI_EXAMPLE = [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)]
R_EXAMPLE = [sp.Integer(1), sp.Integer(0), sp.Integer(0)]
example_logits_give_policy_one_half_one_quarter_one_quarter = Result(
    name="example_logits_give_policy_one_half_one_quarter_one_quarter",
    doc="The logits $(\\log 2, 0, 0)$ give the softmax policy $\\pi = (1/2, 1/4, 1/4)$.",
    lhs=as_written(lambda: sp.ImmutableMatrix([softmax_probabilities([sp.log(2), sp.Integer(0), sp.Integer(0)])])),
    rhs=sp.ImmutableMatrix([PI_EXAMPLE]),
    rule="evaluation", why="$e^{\\log 2} = 2$, $e^0 = 1$.",
)

PI_SYMBOLS = [pi[1], pi[2], pi[3]]
R_SYMBOLS = [r[1], r[2], r[3]]
EXAMPLE_POINT = (tuple(PI_SYMBOLS + R_SYMBOLS), tuple(PI_EXAMPLE + R_EXAMPLE))
EXAMPLE_ASSUMPTION = Assumption("$K = 3$, $\\pi = (1/2, 1/4, 1/4)$, $r = (1, 0, 0)$", context=True)


# real variables standing for pi_1..pi_3, r_1..r_3 in a Subs (the kernel's Subs binds real symbols, not entries)
_EXAMPLE_VARIABLES = sp.symbols("pi_1:4 r_1:4", real=True)


def at_example(expr: sp.Expr) -> sp.Subs:
    """``expr`` (in $\\pi_1..\\pi_3$, $r_1..r_3$) evaluated at the example, unevaluated until ``doit``: the
    entries are renamed to real variables, which the Subs binds and sets to the example's values."""
    names = dict(zip(EXAMPLE_POINT[0], _EXAMPLE_VARIABLES))
    return sp.Subs(sp.sympify(expr).xreplace(names), _EXAMPLE_VARIABLES, EXAMPLE_POINT[1])


def squared_score_norms_K3_example(free_logits: int) -> list[sp.Expr]:
    """$\\lVert g(a) \\rVert^2 = \\sum_b (\\delta_{ab} - \\pi_b)^2$ over the first ``free_logits`` logits (3: every
    logit free; 2: the reference logit $\\theta_3 = 0$ fixed), for each action $a$ of the example."""
    return [sum((sp.KroneckerDelta(act, col) - PI_SYMBOLS[col]) ** 2 for col in range(free_logits))
            for act in range(3)]


squared_score_norms_K3 = squared_score_norms_K3_example(3)
softmax_example_optimal_baseline_is_three_tenths = Result(
    name="softmax_example_optimal_baseline_is_three_tenths",
    doc="For $\\pi = (1/2, 1/4, 1/4)$, $r = (1, 0, 0)$: $S = 3/8$, $\\lVert g(1) \\rVert^2 = 3/8$, "
        "$b^* = (1/2)(3/8)/(5/8) = 3/10$, from the definition $E[r \\lVert g \\rVert^2]/E \\lVert g \\rVert^2$ with the "
        "scores $e_a - \\pi$.",
    lhs=at_example(optimal_constant_baseline(PI_SYMBOLS, R_SYMBOLS, squared_score_norms_K3)),
    rhs=sp.Rational(3, 10),
    assumptions=(EXAMPLE_ASSUMPTION,),
    rule="evaluation",
)

softmax_example_mean_baseline_is_not_optimal = Result(
    name="softmax_example_mean_baseline_is_not_optimal",
    doc="For $\\pi = (1/2, 1/4, 1/4)$, $r = (1, 0, 0)$ the closed form gives $b^* = 3/10 \\ne 1/2 = E[r]$: the mean "
        "baseline is not variance-optimal ($\\sum_a \\pi_a^2 r_a = 1/4 \\ne 3/16 = S \\sum_a \\pi_a r_a$).",
    lhs=at_example(softmax_optimal_baseline(PI_SYMBOLS, R_SYMBOLS)),
    rhs=at_example(sum(x * y for x, y in zip(PI_SYMBOLS, R_SYMBOLS))),
    relation="!=",
    assumptions=(EXAMPLE_ASSUMPTION,),
    rule="evaluation", why="$3/10 - 1/2 = -1/5 = 2(3/16 - 1/4)/(5/8)$.",
)

softmax_example_mean_baseline_excess_variance_is_one_fortieth = Result(
    name="softmax_example_mean_baseline_excess_variance_is_one_fortieth",
    doc="In that instance the total variance computed from its definition is larger by exactly "
        "$V(1/2) - V(3/10) = (5/8)(1/5)^2 = 1/40$ with the mean baseline than with $b^*$.",
    lhs=as_written(lambda: sp.Subs(softmax_total_variance(PI_EXAMPLE, R_EXAMPLE, b), b, sp.Rational(1, 2))
                   - sp.Subs(softmax_total_variance(PI_EXAMPLE, R_EXAMPLE, b), b, sp.Rational(3, 10))),
    rhs=sp.Rational(1, 40),
    assumptions=(EXAMPLE_ASSUMPTION,),
    rule="evaluation", why="$E \\lVert g \\rVert^2 (b - b^*)^2$ with $E \\lVert g \\rVert^2 = 1 - S = 5/8$.",
)

# The same policy with the reference logit fixed (theta_3 = 0, as D6 parametrises the bandit): the score
# has only the free coordinates b = 1, 2, so its norm and hence b* differ.
squared_score_norms_K3_reference_logit = squared_score_norms_K3_example(2)
softmax_example_optimal_baseline_with_a_reference_logit_is_five_fourteenths = Result(
    name="softmax_example_optimal_baseline_with_a_reference_logit_is_five_fourteenths",
    doc="The optimal baseline depends on the parametrisation. With the reference logit fixed ($\\theta_3 = 0$, only "
        "$\\theta_1, \\theta_2$ free, as in D6) the same policy $\\pi = (1/2, 1/4, 1/4)$ and rewards $r = (1, 0, 0)$ have "
        "scores $(\\delta_{ab} - \\pi_b)_{b \\le 2}$, $\\lVert g \\rVert^2 = (5/16, 13/16, 5/16)$, and "
        "$b^* = (5/32)/(7/16) = 5/14$, not the $3/10$ of $K$ free logits; both differ from $E[r] = 1/2$.",
    lhs=at_example(optimal_constant_baseline(PI_SYMBOLS, R_SYMBOLS, squared_score_norms_K3_reference_logit)),
    rhs=sp.Rational(5, 14),
    assumptions=(EXAMPLE_ASSUMPTION,),
    rule="evaluation",
)

softmax_example_mean_baseline_excess_variance_with_a_reference_logit_is_one_over_112 = Result(
    name="softmax_example_mean_baseline_excess_variance_with_a_reference_logit_is_one_over_112",
    doc="With the reference logit fixed ($\\theta_3 = 0$, scores $(\\delta_{ab} - \\pi_b)_{b \\le 2}$) the same instance "
        "$\\pi = (1/2, 1/4, 1/4)$, $r = (1, 0, 0)$ has total variance, computed from its definition over the two free "
        "coordinates, larger by exactly $V(1/2) - V(5/14) = (7/16)(1/7)^2 = 1/112$ with the mean baseline than with "
        "$b^* = 5/14$ (with $K$ free logits: $1/40$).",
    lhs=as_written(lambda: sp.Subs(softmax_total_variance(PI_EXAMPLE, R_EXAMPLE, b, free_logits=2), b, sp.Rational(1, 2))
                   - sp.Subs(softmax_total_variance(PI_EXAMPLE, R_EXAMPLE, b, free_logits=2), b,
                             sp.Rational(5, 14))),
    rhs=sp.Rational(1, 112),
    assumptions=(EXAMPLE_ASSUMPTION,),
    rule="evaluation", why="$E \\lVert g \\rVert^2 (b - b^*)^2$ with $E \\lVert g \\rVert^2 = 7/16$ over the free "
                           "coordinates.",
)

group_mean_is_not_the_population_mean = Remark(
    "group_mean_is_not_the_population_mean",
    "GRPO's baseline for rollout $i$ is the group mean $\\bar r = r_i/R + \\sum_{j \\ne i} r_j/R$, an estimate of "
    "$E[r]$ that contains $r_i$ itself. Even where $E[r]$ is the optimal constant baseline "
    "($\\operatorname{Cov}(r, \\lVert g \\rVert^2) = 0$) the group-mean estimator is not the estimator analysed here: "
    "its own term shrinks the expected gradient by $(R - 1)/R$ (D5, "
    "group_baseline_gradient_is_shrunk_by_R_minus_1_over_R), the leave-one-out mean removes that bias, and the "
    "std scaling multiplies the estimator by a random factor. The results above concern constant baselines; "
    "they say when the population mean would be optimal, not that the group statistic is.",
)
