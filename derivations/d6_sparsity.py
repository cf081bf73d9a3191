r"""D6 Sparsity: groups with equal rewards give no gradient, and the no-std update makes them likelier once p > 1/2.

With binary rewards and success probability $p$, a group of $R$ i.i.d. rollouts has all rewards equal with
probability $z_R(p) = p^R + (1-p)^R$ (symbolic $R$; checked by enumeration for $R = 2..6$); it equals
$2^{1-R}$ at $p = 1/2$, is symmetric about $1/2$, is at least $2^{1-R}$ on $[0, 1]$ (the tangent line of
$x \mapsto x^R$ at $1/2$, itself proved by induction on the exponent) and increases with $|p - 1/2|$ (the
monotonicity of $x \mapsto x^{R-1}$ on $[0, \infty)$): all for symbolic $R$. Such a group has all advantages zero and contributes exactly zero gradient.
For the no-std update $\theta \leftarrow \theta + \eta \hat g$, $\hat g = \frac{1}{R} \sum_i (r_i - \bar r) g_i$,
D5 gives $E[\hat g] = \frac{R-1}{R} \nabla p$ (binary reward: $J = p$), so to first order in $\eta$ the
expected success probability moves by $\frac{R-1}{R} \|\nabla p\|^2 \ge 0$. For a softmax bandit
$\|\nabla p\|^2 = \sum_a \pi_a^2 (1[a \text{ correct}] - p)^2$, positive when $0 < p < 1$ (exactly for
$K = 3$ with symbolic logits), and the first-order drifts of $p$ and of $z_R(p)$ are verified exactly on that
bandit for $R = 2$ and $R = 3$ by enumerating all groups. For any smooth policy and any finitely supported
update, the chain rule gives the first-order change of $z_R(p)$ as $z_R'(p)$ times the drift $\kappa$ of $p$
(proved for a symbolic number of update values). Since $z_R'(p) > 0$ for $p > 1/2$ and $< 0$ for $p < 1/2$
(every $R \ge 2$), under a prompt's own update ($\kappa > 0$) the zero-gradient probability rises in
expectation to first order once $p > 1/2$ and falls before; finite steps are left to simulation.
The sign of $\kappa$ is that of a prompt's own update only: when prompts share parameters, another prompt's
gradient can move $p$ down. An instance with two prompts sharing one logit ($p_A = 1/2$, $p_B = 1/4$) shows,
for every $R \ge 2$, that $p_B$ falls and $z_R(p_B)$ rises to first order although $p_B < 1/2$. Finally, the
zero gradient of an all-equal group comes from the group baseline: without one, an all-success group's
REINFORCE gradient $\frac1R \sum_i r_i g_i$ is not zero (an instance).
"""

from __future__ import annotations

import itertools

import sympy as sp

from . import d4_zero_sum as d4  # module imports: importing Results by name would list them in D6 too
from . import d5_baseline_bias as d5
from .d4_zero_sum import v
from .d5_baseline_bias import Ex, G
from .notation import R, g, group_mean, i, j, r
from grpo_verify.proof import Assumption, as_written, Induction, Remark, Result, Step, rules

p = sp.Symbol("p", real=True)  # success probability
u = sp.Symbol("u", real=True)  # p = 1/2 + u


def zero_gradient_probability(prob=p, size=R) -> sp.Expr:
    """z_R(p) = P(all R binary rewards equal) = p^R + (1 - p)^R."""
    return prob ** size + (1 - prob) ** size


def zero_gradient_probability_slope(prob=p, size=R) -> sp.Expr:
    """z_R'(p) = R (p^(R-1) - (1 - p)^(R-1))."""
    return size * (prob ** (size - 1) - (1 - prob) ** (size - 1))


GROUP = Assumption("$R \\ge 2$ rollouts drawn i.i.d., binary rewards with success probability $p$", R >= 2)
# The same setting where the proof does not need it: the identities about z_R hold for every R >= 0, and as
# polynomial facts they hold for every real p.
GROUP_SETTING = Assumption("$R \\ge 2$ rollouts drawn i.i.d., binary rewards with success probability $p$", R >= 2,
                           context=True)
PROBABILITY = Assumption("$p \\in [0, 1]$", domain=(p, sp.Interval(0, 1)), context=True)

all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R = Result(
    name="all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R",
    doc="$P(r_1 = \\dots = r_R) = P(\\text{all succeed}) + P(\\text{all fail}) = p^R + (1-p)^R$.",
    lhs=sp.Product(p, (i, 1, R)) + sp.Product(1 - p, (i, 1, R)),
    rhs=zero_gradient_probability(),
    assumptions=(GROUP_SETTING, PROBABILITY),
    rule="independence of the rollouts", why="The probability of $R$ independent events is the product.",
    by=(rules.product_of_a_constant,),
)


def _all_equal_by_enumeration(size: int) -> sp.Expr:
    total = sp.Integer(0)
    for rewards in itertools.product((0, 1), repeat=size):
        if len(set(rewards)) == 1:
            total += sp.Mul(*[p if rw else 1 - p for rw in rewards])
    return total


all_rewards_equal_probability_by_enumeration = Result(
    name="all_rewards_equal_probability_by_enumeration",
    instance="$R = 2, \\dots, 6$",
    doc="Summing the probabilities of all constant binary reward vectors gives $p^R + (1-p)^R$ "
        "for $R = 2, \\dots, 6$ (entries in this order).",
    lhs=as_written(lambda: sp.ImmutableMatrix([_all_equal_by_enumeration(size) for size in range(2, 7)])),
    rhs=sp.ImmutableMatrix([zero_gradient_probability(p, size) for size in range(2, 7)]),
    assumptions=(PROBABILITY,),
    rule="enumeration of all $2^R$ reward vectors", why="Only the two constant vectors count.",
    model={p: sp.Rational(1, 3)},
)

zero_gradient_probability_at_one_half_is_two_pow_one_minus_R = Result(
    name="zero_gradient_probability_at_one_half_is_two_pow_one_minus_R",
    doc="At $p = 1/2$: $z_R(1/2) = 2^{1-R}$.",
    lhs=zero_gradient_probability(sp.Rational(1, 2)),
    rhs=2 ** (1 - R),
    assumptions=(GROUP_SETTING,),
    rule="powers of 1/2", why="$2 \\cdot 2^{-R} = 2^{1-R}$.", by=(rules.exponent_sum_splits,),
)

zero_gradient_probability_is_symmetric_about_one_half = Result(
    name="zero_gradient_probability_is_symmetric_about_one_half",
    doc="$z_R(1/2 + u) = z_R(1/2 - u)$: swapping success and failure does not change it.",
    lhs=as_written(lambda: zero_gradient_probability(sp.Rational(1, 2) + u)
                   - zero_gradient_probability(sp.Rational(1, 2) - u)),
    rhs=sp.Integer(0),
    assumptions=(GROUP_SETTING,),
    rule="commutativity", why="The two terms swap.",
)

x = sp.Symbol("x", real=True)
c = sp.Symbol("c", positive=True)
n = sp.Symbol("n", integer=True, nonnegative=True)
tangent_line_lies_below_an_integer_power = Result(
    name="tangent_line_lies_below_an_integer_power",
    doc="For $x \\ge 0$, $c > 0$ and every integer $n \\ge 0$: $c\\, x^n \\ge c^n (c + n (x - c))$, i.e. "
        "$x^n \\ge c^n + n c^{n-1} (x - c)$: on $[0, \\infty)$ the tangent of $x \\mapsto x^n$ at $c$ lies below it "
        "(Bernoulli's inequality).",
    lhs=c * x ** n,
    rhs=c ** n * (c + n * (x - c)),
    relation=">=",
    assumptions=(Assumption("$x \\ge 0$", x >= 0),),
    induction=Induction(n, 0),
    rule="induction on $n$",
    why="At $n = 0$ both sides are $c$. From $n$ to $n + 1$: $c\\, x^{n+1} = x \\cdot c\\, x^n \\ge "
        "x c^n (c + n (x - c))$ as $x \\ge 0$, and $x c^n (c + n (x - c)) - c^{n+1} (c + (n + 1)(x - c)) = "
        "n c^n (x - c)^2 \\ge 0$.",
    by=(rules.exponent_sum_splits,),
)

PROBABILITY_NEEDED = Assumption("$p \\in [0, 1]$", domain=(p, sp.Interval(0, 1)))
zero_gradient_probability_is_at_least_two_pow_one_minus_R = Result(
    name="zero_gradient_probability_is_at_least_two_pow_one_minus_R",
    doc="$p^R + (1-p)^R \\ge 2^{1-R}$ on $[0, 1]$ for every $R \\ge 1$ (the minimum is at $p = 1/2$).",
    lhs=zero_gradient_probability(),
    rhs=2 ** (1 - R),
    relation=">=",
    assumptions=(GROUP_SETTING, PROBABILITY_NEEDED),
    steps=(
        Step(2 * 2 ** (-R) * (sp.Rational(1, 2) + R * (p - sp.Rational(1, 2)))
             + 2 * 2 ** (-R) * (sp.Rational(1, 2) + R * (sp.Rational(1, 2) - p)),
             "tangent lines at $1/2$", "Both $p$ and $1 - p$ lie in $[0, 1]$: the tangent-line inequality at "
             "$c = 1/2$ bounds each term, $\\tfrac12 x^R \\ge 2^{-R} (\\tfrac12 + R (x - \\tfrac12))$.",
             relation=">=",
             using=(tangent_line_lies_below_an_integer_power.at({x: p, c: sp.Rational(1, 2), n: R}),
                    tangent_line_lies_below_an_integer_power.at({x: 1 - p, c: sp.Rational(1, 2), n: R}))),
        Step(2 * 2 ** (-R), "arithmetic", "The two tangent terms in $p$ cancel."),
        Step(2 ** (1 - R), "powers of 2", by=(rules.exponent_sum_splits,)),
    ),
)

HALF_INTERVAL = Assumption("$u \\in [0, 1/2]$, i.e. $p = 1/2 + u \\in [1/2, 1]$", domain=(u, sp.Interval(0, sp.Rational(1, 2))))
zero_gradient_probability_increases_away_from_one_half = Result(
    name="zero_gradient_probability_increases_away_from_one_half",
    doc="$\\frac{d}{du} z_R(1/2 + u) \\ge 0$ for $u \\in [0, 1/2]$ and every $R \\ge 2$; with the symmetry "
        "$z_R$ increases with $|p - 1/2|$.",
    lhs=sp.Derivative(zero_gradient_probability(sp.Rational(1, 2) + u), u),
    rhs=sp.Integer(0),
    relation=">=",
    assumptions=(GROUP_SETTING, HALF_INTERVAL),  # x -> x^(R-1) does not decrease for every R >= 1
    steps=(
        Step(R * ((sp.Rational(1, 2) + u) ** (R - 1) - (sp.Rational(1, 2) - u) ** (R - 1)), "power rule",
             "Differentiate both terms.", by=rules.DIFFERENTIATION),
        Step(sp.Integer(0), "monotonicity of $x \\mapsto x^{R-1}$ on $[0, \\infty)$",
             "$1/2 + u \\ge 1/2 - u \\ge 0$ there and $R - 1 \\ge 0$ (true for every $R \\ge 1$).", relation=">=",
             by=(rules.power_is_monotone,)),
    ),
)

SLOPE_INTERVAL = Assumption("$p \\in (1/2, 1]$", domain=(p, sp.Interval.Lopen(sp.Rational(1, 2), 1)))
zero_gradient_probability_slope_is_positive_above_half = Result(
    name="zero_gradient_probability_slope_is_positive_above_half",
    doc="$z_R'(p) = R (p^{R-1} - (1-p)^{R-1}) > 0$ for $p \\in (1/2, 1]$ and every $R \\ge 2$.",
    lhs=sp.Derivative(zero_gradient_probability(), p),
    rhs=sp.Integer(0),
    relation=">",
    assumptions=(GROUP, SLOPE_INTERVAL),
    steps=(
        Step(zero_gradient_probability_slope(), "power rule", "Differentiate both terms.", by=rules.DIFFERENTIATION),
        Step(sp.Integer(0), "strict monotonicity of $x \\mapsto x^{R-1}$ on $[0, \\infty)$",
             "$p > 1 - p \\ge 0$ on $(1/2, 1]$ and $R - 1 \\ge 1$.", relation=">", by=(rules.power_is_monotone,)),
    ),
)

c = sp.Symbol("c", positive=True)  # the group's common scale s + eps (eps > 0, or D4's convention)
degenerate_group_contributes_zero_gradient = Result(
    name="degenerate_group_contributes_zero_gradient",
    doc="If all rewards of a group equal $v$, then $\\sum_i A_i g_i = 0$: the group gives exactly no gradient.",
    lhs=sp.Sum((v - sp.Sum(v, (j, 1, R)) / R) / c * g[i], (i, 1, R)),
    rhs=sp.Integer(0),
    assumptions=(GROUP, Assumption("$r_j = v$ for every $j$; common scale $c > 0$ (with $\\epsilon = 0$ the "
                                   "advantage of a zero-variance group is 0 by convention, D4)", context=True)),
    steps=(
        Step(sp.Sum(0 / c * g[i], (i, 1, R)), "degenerate_group_has_zero_centred_rewards",
             "Every centred reward is 0 (D4).", using=(d4.degenerate_group_has_zero_centred_rewards,)),
        Step(sp.Integer(0), "sum of zeros", by=(rules.sum_of_a_constant,)),
    ),
)

# == expected update direction and first-order drift ==============================================
ghat = sp.Sum((r[i] - group_mean()) * g[i], (i, 1, R)) / R  # one coordinate of the no-std GRPO update
_term = Ex((r[i] - group_mean()) * g[i])
EXCHANGEABLE = Assumption("the rollouts are exchangeable: every term $E[(r_i - \\bar r) g_i]$, $1 \\le i \\le R$, is "
                          "the same, so their sum is $R$ times one of them",
                          equation=(sp.Sum(_term, (i, 1, R)), R * _term))


def _update_model(sizes: dict) -> dict:
    """A model hint: D5's i.i.d. rollouts (reward 1 and score 1, or reward 0 and score -1), as many as the group
    size; the rollout i is the last one when the evaluator picks R, and i = 1 when it picks n (R = i + n)."""
    if R in sizes:
        size, extra = int(sizes[R]), {i: sizes[R]}
    elif i in sizes:
        size, extra = int(sizes[i]), {d5.n: 0}
    else:
        size, extra = int(sizes.get(d5.n, 2)) + 1, {i: 1}
    return {**d5.rollout_model({R: size}), **extra}


no_std_update_direction_is_R_minus_1_over_R_times_gradient = Result(
    name="no_std_update_direction_is_R_minus_1_over_R_times_gradient",
    doc="For $\\hat g = \\frac{1}{R} \\sum_i (r_i - \\bar r) g_i$: $E[\\hat g] = \\frac{R-1}{R} \\nabla J$; for binary "
        "rewards $J = E[r] = p$, so $E[\\hat g] = \\frac{R-1}{R} \\nabla p$.",
    lhs=Ex(ghat),
    rhs=(R - 1) / R * G,
    # D5's lemma is cited, so its hypotheses (the expectation algebra of i.i.d. rollouts) are assumed here too;
    # D5's 1 <= i <= R follows from R = i + n, n >= 0
    assumptions=(GROUP, EXCHANGEABLE, d5.SIFT, d5.INDEPENDENCE, d5.MEAN_ZERO_SCORE, d5.SCORE_FUNCTION),
    steps=(
        Step(sp.Sum(_term, (i, 1, R)) / R, "linearity of expectation", "Exchange $E$ and the finite sum.",
             by=(rules.expectation_linearity, rules.sum_linearity)),
        Step(_term, "exchangeability of the rollouts",
             "The rollouts are i.i.d., so every term $E[(r_i - \\bar r) g_i]$ is the same.",
             using=(EXCHANGEABLE,)),
        Step((R - 1) / R * G, "group_baseline_gradient_is_shrunk_by_R_minus_1_over_R", "D5.",
             using=(d5.group_baseline_gradient_is_shrunk_by_R_minus_1_over_R,)),
    ),
    model=_update_model,
)

# -- the three-action softmax bandit, symbolic logits ---------------------------------------------
th = sp.symbols("theta_1:4", real=True)
eta = sp.Symbol("eta", real=True)


def softmax(logits) -> list[sp.Expr]:
    exps = [sp.exp(t_) for t_ in logits]
    return [e_ / sp.Add(*exps) for e_ in exps]


pi = softmax(th)
# the score of action a, d log pi_a / d theta_b, unevaluated: the kernel's differentiation rules compute it
score = [[sp.Derivative(sp.log(pi[a]), th[b]) for b in range(3)] for a in range(3)]
CORRECT_SETS = ((0,), (0, 1))  # action 1 correct; actions 1 and 2 correct


def success_probability(correct, logits=th) -> sp.Expr:
    probs = softmax(logits)
    return sp.Add(*[probs[a] for a in correct])


def gradient_norm_squared(correct) -> sp.Expr:
    """sum_a pi_a^2 (1[a correct] - p)^2, the closed form of ||grad p||^2 for a softmax bandit."""
    prob = success_probability(correct)
    return sp.Add(*[pi[a] ** 2 * ((1 if a in correct else 0) - prob) ** 2 for a in range(3)])


SOFTMAX = Assumption("three-action softmax bandit with real logits $\\theta_1, \\theta_2, \\theta_3$; binary reward "
                     "$1[a \\in C]$ for $C = \\{1\\}$ and $C = \\{1, 2\\}$ (entries in this order)", context=True)
SOFTMAX_X = Assumption("the same bandit after differentiating, written in $x_a = e^{\\theta_a} > 0$ with the "
                       "reference logit $\\theta_3 = 0$ (softmax is invariant to a common shift of the logits)",
                       context=True)

softmax_success_probability_gradient_norm_closed_form = Result(
    name="softmax_success_probability_gradient_norm_closed_form",
    doc="For a softmax bandit with $K = 3$, $\\|\\nabla_\\theta p\\|^2 = \\sum_a \\pi_a^2 (1[a \\in C] - p)^2$, "
        "since $\\partial p / \\partial \\theta_b = \\pi_b (1[b \\in C] - p)$.",
    lhs=sp.ImmutableMatrix([sp.Add(*[sp.Derivative(success_probability(C), t_) ** 2 for t_ in th])
                            for C in CORRECT_SETS]),
    rhs=sp.ImmutableMatrix([gradient_norm_squared(C) for C in CORRECT_SETS]),
    assumptions=(SOFTMAX,),
    rule="differentiate the softmax", why="$\\partial \\pi_a / \\partial \\theta_b = \\pi_a (\\delta_{ab} - \\pi_b)$.",
    by=rules.DIFFERENTIATION,
)

w1, w2, w3 = sp.symbols("pi_1:4", positive=True)
softmax_success_probability_gradient_norm_is_positive = Result(
    name="softmax_success_probability_gradient_norm_is_positive",
    doc="With $C = \\{1\\}$, $p = \\pi_1$ and every $\\pi_a > 0$: $\\sum_a \\pi_a^2 (1[a \\in C] - p)^2 > 0$ "
        "(the wrong actions contribute $\\pi_a^2 p^2 > 0$). For any $K$ and $C$ the same argument applies whenever "
        "$0 < p < 1$ (some action is wrong); that general form is not a separate checked result.",
    lhs=w1 ** 2 * (1 - w1) ** 2 + w2 ** 2 * w1 ** 2 + w3 ** 2 * w1 ** 2,
    rhs=sp.Integer(0),
    relation=">",
    assumptions=(Assumption("$\\pi_1, \\pi_2, \\pi_3 > 0$ (softmax probabilities), $p = \\pi_1$", context=True),),
    rule="sign of each term", why="A sum of squares with at least one positive term.",
)


def _first_order_drift(correct, size: int) -> tuple[sp.Expr, sp.Expr]:
    """d/d eta at 0 of E[p(theta + eta ghat)] and of E[z_R(p(theta + eta ghat))], by enumerating all groups."""
    drift_p, drift_z = sp.Integer(0), sp.Integer(0)
    for actions in itertools.product(range(3), repeat=size):
        weight = sp.Mul(*[pi[a] for a in actions])
        rewards = [1 if a in correct else 0 for a in actions]
        mean = sp.Rational(sum(rewards), size)
        direction = [sp.Add(*[(rw - mean) * score[a][b] for rw, a in zip(rewards, actions)]) / size
                     for b in range(3)]
        moved = success_probability(correct, [t_ + eta * d_ for t_, d_ in zip(th, direction)])
        drift_p += weight * sp.Subs(sp.Derivative(moved, eta), eta, 0)
        drift_z += weight * sp.Subs(sp.Derivative(zero_gradient_probability(moved, size), eta), eta, 0)
    return drift_p, drift_z


x = sp.symbols("x_1:4", positive=True)
# x_a = exp(theta_a) > 0 with the reference logit theta_3 = 0 (softmax is invariant to a common shift):
# a change of variables applied after differentiating in theta, so the identities are rational in x_1, x_2.
TO_X = ((sp.exp(th[0]), x[0]), (sp.exp(th[1]), x[1]), (th[2], 0))
AT_X = (sp.log(x[0]), sp.log(x[1]), sp.Integer(0))  # the logits theta_a = log x_a, theta_3 = 0


def in_x(e: sp.Expr) -> sp.Expr:
    """An explicit expression in theta written in x (exp(theta_a) = x_a, theta_3 = 0)."""
    for old, new in TO_X:
        e = e.subs(old, new)
    return e


def at_x(e: sp.Expr) -> sp.Expr:
    """``e`` (which may hold unevaluated derivatives in theta) at the logits theta_a = log x_a, theta_3 = 0: the
    substitution is written as a Subs, made by the kernel after it differentiates."""
    return sp.Subs(e, th, AT_X)


def _drift_table(size: int):
    lhs, rhs = [], []
    for C in CORRECT_SETS:
        drift_p, drift_z = _first_order_drift(C, size)
        prob = success_probability(C)
        rate = sp.Rational(size - 1, size) * gradient_norm_squared(C)
        lhs += [at_x(drift_p), at_x(drift_z)]
        rhs += [in_x(rate), in_x(zero_gradient_probability_slope(prob, size) * rate)]
    return sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs)


_drift2 = _drift_table(2)
first_order_drift_of_success_probability_R2 = Result(
    name="first_order_drift_of_success_probability_R2",
    instance="the three-action softmax bandit, $R = 2$",
    doc="On the three-action softmax bandit with $R = 2$, enumerating all groups: "
        "$\\frac{d}{d\\eta} E[p(\\theta + \\eta \\hat g)]|_{\\eta = 0} = \\frac{R-1}{R} \\|\\nabla p\\|^2$ and "
        "$\\frac{d}{d\\eta} E[z_R(p(\\theta + \\eta \\hat g))]|_{\\eta = 0} = z_R'(p) \\frac{R-1}{R} \\|\\nabla p\\|^2$ "
        "(entries: drift of $p$, drift of $z_R$, for each correct set).",
    lhs=_drift2[0], rhs=_drift2[1],
    assumptions=(SOFTMAX, SOFTMAX_X),
    rule="enumeration of all groups, chain rule", why="A finite expectation of a smooth function of $\\eta$.",
    by=rules.DIFFERENTIATION,
)

_drift3 = _drift_table(3)
first_order_drift_of_success_probability_R3 = Result(
    name="first_order_drift_of_success_probability_R3",
    instance="the three-action softmax bandit, $R = 3$",
    doc="The same with $R = 3$ (27 groups).",
    lhs=_drift3[0], rhs=_drift3[1],
    assumptions=(SOFTMAX, SOFTMAX_X),
    rule="enumeration of all groups, chain rule", why="A finite expectation of a smooth function of $\\eta$.",
    by=rules.DIFFERENTIATION,
)

# -- the chain rule for any smooth policy: the first-order change of a function of p --------------
# The update direction takes finitely many values u_m (m = 1..M) with probabilities w_m (a group estimator
# on a finite outcome space does); P(m, eta) = p(theta + eta u_m) is the success probability after a step
# eta along u_m. Writing the moved probability as p + P(m, eta) - P(m, 0) says only that it equals p at
# eta = 0 (take P = the moved probability itself), so the result holds for every smooth p and every such law.
m_dir = sp.Symbol("m", integer=True, positive=True)  # which value the update direction takes
M_dir = sp.Symbol("M", integer=True, positive=True)  # how many values it takes
w_dir = sp.IndexedBase("w", nonnegative=True)  # their probabilities
P_dir = sp.Function("P", real=True)  # P(m, eta) = p(theta + eta u_m)
z_fun = sp.Function("z", real=True)  # any smooth function of p (z_R(p) = p^R + (1 - p)^R is one)
xi = sp.Symbol("xi", real=True)
_moved = p + P_dir(m_dir, eta) - P_dir(m_dir, 0)
_slope_at_p = sp.Subs(sp.Derivative(z_fun(xi), xi), xi, p)


def _at_zero(f) -> sp.Expr:
    """d f / d eta at eta = 0, unevaluated."""
    return sp.Subs(sp.Derivative(f, eta), eta, 0)


# the derivative of the moved probability p + P(m, eta) - P(m, 0), term by term
_moved_rate = _at_zero(p) + _at_zero(P_dir(m_dir, eta)) + _at_zero(-P_dir(m_dir, 0))
# The first and last links differentiate with the sum, product and chain rules only: with the constant rule too,
# d/d eta (p + P(m, eta) - P(m, 0)) reduces to a bare Subs inside the Subs of the outer derivative, which SymPy's
# Subs constructor flattens into one simultaneous substitution that loses the point eta = 0 (notes/d5_d6.md,
# kernel bug A). The middle link, where every derivative stands alone, removes the derivatives of constants.
_TERM_BY_TERM = (rules.derivative_of_a_sum, rules.derivative_of_a_product, rules.chain_rule_for_functions)


def _first_order_change(f) -> sp.Expr:
    """d/d eta at 0 of E[f(p(theta + eta ghat))], the expectation over the update direction's law."""
    return sp.Subs(sp.Derivative(sp.Sum(w_dir[m_dir] * f(_moved), (m_dir, 1, M_dir)), eta), eta, 0)


first_order_change_of_a_function_of_p_is_its_slope_times_the_drift_of_p = Result(
    name="first_order_change_of_a_function_of_p_is_its_slope_times_the_drift_of_p",
    doc="For any smooth policy, any update direction $\\hat g$ with finitely many values $u_m$ (probabilities "
        "$w_m$, $m = 1..M$) and any smooth $z$: $\\frac{d}{d\\eta} E[z(p(\\theta + \\eta \\hat g))]|_{\\eta = 0} = "
        "z'(p)\\, \\frac{d}{d\\eta} E[p(\\theta + \\eta \\hat g)]|_{\\eta = 0}$, with $P(m, \\eta) = p(\\theta + \\eta u_m)$. "
        "With $z = z_R$ and the drift of $p$ written $\\kappa$ ($\\eta \\frac{R-1}{R} \\lVert \\nabla p \\rVert^2$ "
        "no-std, $\\eta\\, c_R(p) \\lVert \\nabla p \\rVert^2$ std-scaled, D5), the first-order change of the "
        "zero-gradient probability is $\\kappa z_R'(p)$: the chain-rule step of the sign results below, for "
        "every policy, not only the enumerated bandit.",
    lhs=_first_order_change(z_fun),
    rhs=_slope_at_p * _first_order_change(lambda moved: moved),
    steps=(
        Step(sp.Sum(w_dir[m_dir] * _slope_at_p * _moved_rate + z_fun(p) * _at_zero(w_dir[m_dir]),
                    (m_dir, 1, M_dir)),
             "derivative of a finite sum, product and chain rules",
             "Differentiate term by term; at $\\eta = 0$ the moved probability is $p$, and its derivative is taken "
             "term by term.", by=_TERM_BY_TERM),
        Step(_slope_at_p * sp.Sum(p * _at_zero(w_dir[m_dir]) + w_dir[m_dir] * _moved_rate, (m_dir, 1, M_dir)),
             "the law of $\\hat g$ and $p$ do not depend on $\\eta$",
             "$dw_m/d\\eta = dp/d\\eta = dP(m, 0)/d\\eta = 0$, so both sides are "
             "$z'(p) \\sum_m w_m \\partial_\\eta P(m, 0)$; $z'(p)$ does not depend on $m$.",
             by=(*rules.DIFFERENTIATION, rules.sum_linearity)),
        Step(_slope_at_p * _first_order_change(lambda moved: moved), "derivative of a finite sum and product rule",
             "The same rules, read backwards on the drift of $p$.", by=_TERM_BY_TERM),
    ),
)

# -- the sign of the first-order change of z_R, on both sides of 1/2 -------------------------------
kappa = sp.Symbol("kappa", positive=True)  # the first-order rate of p: the drift of p per unit step
RATE = Assumption("$\\kappa > 0$ is the first-order rate of $p$: $\\kappa = \\eta \\frac{R-1}{R} \\|\\nabla p\\|^2$ for the "
                  "no-std update (above; D5 for any differentiable policy), $\\eta\\, c_R(p) \\|\\nabla p\\|^2$ for the "
                  "std-scaled one with binary rewards (D5: $c_R(p) > 0$ for every $R$), positive for a step $\\eta > 0$ and "
                  "$\\nabla p \\ne 0$; the first-order change of $z_R(p)$ is then $\\kappa z_R'(p)$ "
                  "(first_order_change_of_a_function_of_p_is_its_slope_times_the_drift_of_p)", context=True)
BELOW_HALF = Assumption("$p \\in [0, 1/2)$", domain=(p, sp.Interval.Ropen(0, sp.Rational(1, 2))))

first_order_change_of_zero_gradient_probability_is_positive_above_half = Result(
    name="first_order_change_of_zero_gradient_probability_is_positive_above_half",
    doc="For $p \\in (1/2, 1]$ and every $R \\ge 2$: $\\kappa z_R'(p) > 0$, so to first order in the step the "
        "expected probability of a zero-gradient group rises while $p > 1/2$.",
    lhs=kappa * zero_gradient_probability_slope(),
    rhs=sp.Integer(0),
    relation=">",
    assumptions=(GROUP, SLOPE_INTERVAL, RATE),
    rule="strict monotonicity of $x \\mapsto x^{R-1}$ on $[0, \\infty)$",
    why="$\\kappa R > 0$ and $p > 1 - p \\ge 0$ with $R - 1 \\ge 1$.", by=(rules.power_is_monotone,),
)

first_order_change_of_zero_gradient_probability_is_negative_below_half = Result(
    name="first_order_change_of_zero_gradient_probability_is_negative_below_half",
    doc="For $p \\in [0, 1/2)$ and every $R \\ge 2$: $\\kappa z_R'(p) < 0$, so while $p < 1/2$ the same update "
        "makes zero-gradient groups rarer, to first order: gradient sparsity does not intensify over the whole of "
        "training, only once $p > 1/2$.",
    lhs=sp.Integer(0),
    rhs=kappa * zero_gradient_probability_slope(),
    relation=">",
    assumptions=(GROUP, BELOW_HALF, RATE),
    steps=(
        Step(kappa * R * ((1 - p) ** (R - 1) - p ** (R - 1)) + kappa * zero_gradient_probability_slope(),
             "arithmetic", "Add and subtract $\\kappa z_R'(p)$: the first term is $-\\kappa z_R'(p)$."),
        Step(kappa * zero_gradient_probability_slope(), "strict monotonicity of $x \\mapsto x^{R-1}$ on $[0, \\infty)$",
             "$\\kappa R > 0$ and $1 - p > p \\ge 0$ with $R - 1 \\ge 1$, so the first term is positive.",
             relation=">", by=(rules.power_is_monotone,)),
    ),
)

zero_gradient_probability_rises_above_one_half = Remark(
    "zero_gradient_probability_rises_above_one_half",
    "Combining the results: to first order in $\\eta$ the expected change of $z_R(p)$ under the no-std update is "
    "$\\eta z_R'(p) \\frac{R-1}{R} \\|\\nabla p\\|^2$. The factor $\\frac{R-1}{R} \\|\\nabla p\\|^2$ is positive "
    "when $0 < p < 1$ and all $\\pi_a > 0$, and $z_R'(p) > 0$ for $p > 1/2$ (every $R \\ge 2$), so once "
    "$p > 1/2$ the probability of a zero-gradient group rises in expectation, to first order. The sign of the "
    "product of the two positive factors is not a separate checked result.",
)

left_to_simulation = Remark(
    "left_to_simulation",
    "Not proved here: the finite-step dynamics. $E[p(\\theta + \\eta \\hat g)]$ for a fixed step $\\eta > 0$ has "
    "second- and higher-order terms in $\\eta$ (including the variance of $\\hat g$), the std-scaled update has a "
    "different, $p$-dependent rate $c_R(p)$ (D5), and over many steps $p$ and $\\|\\nabla p\\|$ change together. "
    "These are examined by simulation against an exact oracle in another issue; here only the first-order "
    "derivative at $\\eta = 0$ is exact.",
)

# == two prompts sharing one logit: the own-update result does not carry over ======================
# An instance: one scalar parameter theta, p_A = sigmoid(theta), p_B = sigmoid(-log 3 - theta) = 1/(1 + 3 e^theta),
# at theta = 0, so p_A = 1/2 and p_B = 1/4. The batch's expected no-std update averages the two prompts' expected
# updates, (R-1)/R dp_k/dtheta each (no_std_update_direction_is_R_minus_1_over_R_times_gradient, per prompt).
theta_s = sp.Symbol("theta", real=True)
p_A_shared = 1 / (1 + sp.exp(-theta_s))
p_B_shared = 1 / (1 + 3 * sp.exp(theta_s))
SHARED_STEP = (R - 1) / (32 * R)  # the batch's expected update at theta = 0 (the first result below)
SHARED = Assumption("two prompts share one logit $\\theta$: $p_A = \\sigma(\\theta)$, $p_B = \\sigma(-\\log 3 - \\theta)$, "
                    "at $\\theta = 0$ ($p_A = 1/2$, $p_B = 1/4$); the batch update is the average of the two prompts' "
                    "no-std updates, whose expectations are $\\frac{R-1}{R} \\partial_\\theta p_k$ "
                    "(no_std_update_direction_is_R_minus_1_over_R_times_gradient)", context=True)


def _at_zero_theta(e) -> sp.Expr:
    return sp.Subs(sp.Derivative(e, theta_s), theta_s, 0)


def _moved_shared(prob) -> sp.Expr:
    """prob at theta = eta * E[g_hat] (the step from theta = 0)."""
    return prob.subs(theta_s, eta * SHARED_STEP)


shared_logit_batch_update_direction_is_R_minus_1_over_32_R = Result(
    name="shared_logit_batch_update_direction_is_R_minus_1_over_32_R",
    instance="two prompts sharing one logit, $p_A = 1/2$, $p_B = 1/4$; every $R$",
    doc="Instance (two prompts, one shared logit, $p_A = 1/2$, $p_B = 1/4$ at $\\theta = 0$): "
        "$E[\\hat g] = \\frac{R-1}{R} \\cdot \\frac12 (\\partial_\\theta p_A + \\partial_\\theta p_B) = "
        "\\frac{R-1}{R} \\cdot \\frac12 (\\tfrac14 - \\tfrac{3}{16}) = \\frac{R-1}{32 R} > 0$: prompt $A$'s gradient "
        "dominates, so the shared logit moves up and $p_B$, which falls with $\\theta$, is pushed down.",
    lhs=(R - 1) / R * (_at_zero_theta(p_A_shared) + _at_zero_theta(p_B_shared)) / 2,
    rhs=SHARED_STEP,
    assumptions=(GROUP_SETTING, SHARED),  # an identity for every R
    rule="differentiate the sigmoid", why="$\\sigma' = \\sigma (1 - \\sigma)$: $1/4$ for $A$, $-3/16$ for $B$.",
    by=rules.DIFFERENTIATION,
)

shared_parameter_prompt_below_half_success_probability_falls_to_first_order = Result(
    name="shared_parameter_prompt_below_half_success_probability_falls_to_first_order",
    instance="two prompts sharing one logit, $p_A = 1/2$, $p_B = 1/4$; every $R$",
    doc="Instance (two prompts, one shared logit, $p_A = 1/2$, $p_B = 1/4$): for every $R \\ge 2$ the first-order "
        "drift of $p_B$ under the batch's expected no-std update is $\\partial_\\theta p_B \\cdot \\frac{R-1}{32R} = "
        "-\\frac{3(R-1)}{512 R} < 0$: with shared parameters a prompt's success probability can fall, so D6's "
        "$\\kappa > 0$ holds for a prompt's own update only.",
    lhs=sp.Subs(sp.Derivative(_moved_shared(p_B_shared), eta), eta, 0),
    rhs=sp.Integer(0),
    relation="<",
    assumptions=(GROUP, SHARED),
    steps=(
        Step(-3 * (R - 1) / (512 * R), "chain rule", "$\\partial_\\theta p_B = -p_B (1 - p_B) = -3/16$ at $0$, times "
             "the step $\\frac{R-1}{32R}$ (shared_logit_batch_update_direction_is_R_minus_1_over_32_R).",
             by=rules.DIFFERENTIATION),
        Step(sp.Integer(0), "sign", "$R - 1 > 0$.", relation="<"),
    ),
)

shared_parameter_prompt_at_half_success_probability_rises_to_first_order = Result(
    name="shared_parameter_prompt_at_half_success_probability_rises_to_first_order",
    instance="two prompts sharing one logit, $p_A = 1/2$, $p_B = 1/4$; every $R$",
    doc="The same instance, prompt $A$: its first-order drift is $\\tfrac14 \\cdot \\frac{R-1}{32R} = "
        "\\frac{R-1}{128 R} > 0$ (its own gradient wins the shared logit); at $p_A = 1/2$, $z_R'(p_A) = 0$.",
    lhs=sp.Integer(0),
    rhs=sp.Subs(sp.Derivative(_moved_shared(p_A_shared), eta), eta, 0),
    relation="<",
    assumptions=(GROUP, SHARED),
    steps=(
        Step((R - 1) / (128 * R), "sign", "$R - 1 > 0$.", relation="<"),
        Step(sp.Subs(sp.Derivative(_moved_shared(p_A_shared), eta), eta, 0), "chain rule",
             "$\\partial_\\theta p_A = p_A (1 - p_A) = 1/4$ at $0$, times the step $\\frac{R-1}{32R}$.",
             by=rules.DIFFERENTIATION),
    ),
)

_kappa_B = 3 * (R - 1) / (512 * R)  # minus the drift of p_B
shared_parameter_prompt_below_half_zero_gradient_probability_rises_to_first_order = Result(
    name="shared_parameter_prompt_below_half_zero_gradient_probability_rises_to_first_order",
    instance="two prompts sharing one logit, $p_A = 1/2$, $p_B = 1/4$; every $R$",
    doc="Instance (two prompts, one shared logit, $p_A = 1/2$, $p_B = 1/4$): for every $R \\ge 2$ the first-order "
        "change of $z_R(p_B)$ under the batch's expected no-std update is $z_R'(1/4) \\cdot (-\\frac{3(R-1)}{512R}) > 0$ "
        "although $p_B < 1/2$: the sign of $z_R'(p)$ below $1/2$ "
        "(first_order_change_of_zero_gradient_probability_is_negative_below_half) meets a negative drift. So "
        "'zero-gradient groups get rarer while $p < 1/2$' is a statement about a prompt's own update, not about "
        "a policy whose parameters other prompts share.",
    lhs=sp.Integer(0),
    rhs=sp.Subs(sp.Derivative(zero_gradient_probability(_moved_shared(p_B_shared)), eta), eta, 0),
    relation="<",
    assumptions=(GROUP, SHARED),
    steps=(
        Step(-(_kappa_B * zero_gradient_probability_slope(sp.Rational(1, 4))), "z_R'(p) < 0 below 1/2",
             "first_order_change_of_zero_gradient_probability_is_negative_below_half at $p = 1/4$, "
             "$\\kappa = \\frac{3(R-1)}{512R}$: $\\kappa z_R'(1/4) < 0$.", relation="<",
             using=(first_order_change_of_zero_gradient_probability_is_negative_below_half.at(
                 {p: sp.Rational(1, 4), kappa: _kappa_B}),)),
        Step(sp.Subs(sp.Derivative(zero_gradient_probability(_moved_shared(p_B_shared)), eta), eta, 0),
             "chain rule", "$z_R'(p_B)\\, \\partial_\\theta p_B \\cdot \\frac{R-1}{32R}$ with $p_B = 1/4$, "
             "$\\partial_\\theta p_B = -3/16$.", by=(*rules.DIFFERENTIATION, rules.exponent_sum_splits)),
    ),
)

# == the zeros come from the baseline, not from the per-token credit ================================
no_baseline_all_success_group_gradient_is_not_zero = Result(
    name="no_baseline_all_success_group_gradient_is_not_zero",
    doc="Instance: on the three-action softmax bandit at $\\theta = 0$ with $C = \\{1\\}$, a group of $R = 2$ rollouts "
        "that both pick action 1 (all succeed). The no-baseline (REINFORCE) estimator $\\frac1R \\sum_i r_i g_i$ has "
        "first coordinate $\\partial_{\\theta_1} \\log \\pi_1 = 1 - \\pi_1 = 2/3 \\ne 0$, while with the group-mean "
        "baseline every advantage is $0$ (degenerate_group_contributes_zero_gradient): the zero gradient of an "
        "all-equal group comes from the baseline.",
    lhs=sp.Subs((1 * score[0][0] + 1 * score[0][0]) / 2, th, (0, 0, 0)),
    rhs=sp.Rational(2, 3),
    assumptions=(SOFTMAX,),
    rule="differentiate the softmax", why="$\\partial_{\\theta_1} \\log \\pi_1 = 1 - \\pi_1 = 2/3$ at uniform logits.",
    by=rules.DIFFERENTIATION,
)

zero_gradient_groups_come_from_the_group_baseline = Remark(
    "zero_gradient_groups_come_from_the_group_baseline",
    "Does credit collapse (one outcome reward shared by every token) cause the sparsity, or the group baseline? "
    "The baseline. A group's gradient $\\frac1R \\sum_i (r_i - \\bar r) g_i$ is exactly zero when all $R$ binary "
    "rewards are equal because the group-mean baseline makes every advantage zero; with no (or a constant) "
    "baseline the same rollouts give $\\frac1R \\sum_i r_i g_i$, non-zero in general "
    "(no_baseline_all_success_group_gradient_is_not_zero). Whether the advantage is spread identically over the "
    "tokens decides how a live group's gradient is shared among tokens, not whether a group's gradient is zero.",
)
