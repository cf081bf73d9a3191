r"""D10 Credit assignment on multi-step tasks: exact per-step credit lowers the variance of the early steps, not the expected gradient, and not the variance of the last step.

Model: a task of $H$ steps, reward $r = 1$ iff every step is right. Step $h$ is taken after the prefix
$o_{<h}$; after the all-right prefix it is right with probability $q_h = \sigma(\theta_h)$ (a sigmoid
logit, or the logit of the right token in the prefix's row of a tabular autoregressive policy); rows after
a wrong prefix cannot change $r$. With every $q_h = q$, $p = P(r = 1) = q^H$ and $\partial p / \partial \theta_h
= p (1 - q_h)$. The score of the step-$h$ coordinate is $u_h = P_h (x_h - q)$ with $P_h = 1[o_1..o_{h-1}$ right$]$
and $x_h = 1[o_h$ right$]$. Partitioning the outcomes into four classes (all right; prefix and step $h$ right, a
later step wrong; prefix right, step $h$ wrong; prefix wrong), every per-step moment is a sum of four terms,
and the kernel proves, for symbolic $H$, $h \le H$, $q \in (0, 1)$ and baseline $b$:
the outcome-only estimator $(r - b) u_h$ and the exact-credit estimator $(Q_h - V_h) u_h$ both have mean
$q^H (1 - q)$ (credit assignment changes no expected direction); the outcome estimator's variance is
$q^H (1-b)^2 (1-q)^2 + b^2 (1-q)(q^h - q^H (1-q)) - q^{2H} (1-q)^2$, hence $p (1-p)(1-q)^2$ without a baseline,
and its D8-optimal constant baseline is $b^*_h = q^{H-h}(1-q)$, with variance $p (1-q)^2 (1 - p - q^{H-h}(1-q))$;
the exact-credit variance is $q^{2H-h} (1-q)(1 - 3q + 3q^2 - q^h (1-q))$ with the value baseline $V_h$ and
$q^{2H-h+1}(1-q)^2 (1 - q^{h-1})$ with the per-state optimal baseline, whose value equals $b^*_h$. So the
per-rollout SNR is $p/(1-p)$ for outcome-only (every step, about $q^H$), $q^h (1-q)/(1 - 3q + 3q^2 - q^h(1-q))$
for exact credit at step $h$ (free of $H$), and at the last step $h = H$ the two estimators with optimal
baselines are the same function of the rollout, SNR $q^{H-1}/(1 - q^{H-1})$. The samples for a fixed SNR $s$
grow by at least the factor $1/q$ per added step for outcome-only at every step and for exact credit at its
last step. A group of $R$ gives outcome-only GRPO no gradient with probability $p^R + (1-p)^R \ge 1 - R p$ (D6
at $p = q^H$, and Bernoulli's inequality), while exact credit's first-step coordinate is never zero. Every
per-step mean and variance is also checked by enumerating all $2^H$ outcomes for $H = 1, 2, 3$ with symbolic $q$,
$b$ and a symbolic success probability after a wrong prefix, and the no-std group-mean estimator's variance (the variance of a
sample covariance) by enumerating all groups for $(H, R) \in \{(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (3, 2)\}$.
A process reward changes the objective and its gradient ($q^h - q^{H+1}$ at step $h$ for the expected number of
leading right steps, symbolic), and REINFORCE with the reward-to-go $G_h$ has that mean. Where the exponential in
$H$ enters: the outcome SNR with $b^*_h$ is $q^H/(1 - q^H - q^{H-h}(1-q))$ at every step; exact credit's step-1 SNR is
$q(1-q)/(1-2q)^2$, and the step-1 ratio of the two SNRs is $q^{H-1}(1-2q)^2/((1-q)(1-q^H))$, while both means are
$q^H(1-q)$ (per-rollout statements in this model, not training dynamics). Remarks state the dynamics and the reading.
"""

from __future__ import annotations

import itertools

import sympy as sp

from . import d6_sparsity as d6
from grpo_verify.proof import Assumption, Induction, Remark, Result, Step, as_written, computation, rules

# == the model ======================================================================================
q = sp.Symbol("q", positive=True)  # per-step success probability after a right prefix
s = sp.Symbol("s", positive=True)  # success probability of every row after a wrong prefix (enumerations only)
H = sp.Symbol("H", integer=True, positive=True)  # number of steps
h = sp.Symbol("h", integer=True, positive=True)  # the step whose coordinate is looked at
k = sp.Symbol("k", integer=True, positive=True)  # a step index in products and sums
b = sp.Symbol("b", real=True)  # a constant baseline
sn = sp.Symbol("S", positive=True)  # a target signal-to-noise ratio
A = sp.Symbol("A", positive=True)  # product of the other steps' success probabilities
theta = sp.Symbol("theta", real=True)
p_ = sp.Symbol("p", nonnegative=True)  # success probability, where a statement is about p alone
R = sp.Symbol("R", integer=True, positive=True)
_x = sp.Symbol("x", real=True)  # the variables of D6's tangent-line lemma
_c = sp.Symbol("c", positive=True)


def sigmoid(x: sp.Expr) -> sp.Expr:
    return 1 / (1 + sp.exp(-x))


STEP_PROBABILITY = Assumption("$q \\in (0, 1)$ is the success probability of each step after a right prefix",
                              domain=(q, sp.Interval.open(0, 1)))
STEP_PROBABILITY_SETTING = Assumption("$q \\in (0, 1)$ is the success probability of each step after a right "
                                      "prefix", domain=(q, sp.Interval.open(0, 1)), context=True)
STEP_INDEX = Assumption("$1 \\le h \\le H$: step $h$ of $H$", h <= H)
STEP_INDEX_SETTING = Assumption("$1 \\le h \\le H$: step $h$ of $H$", h <= H, context=True)
CLASSES = ("the outcomes split into four classes by (prefix $o_{<h}$ right, step $h$ right, all steps right): "
           "all right, probability $q^H$, where $r = 1$, $P_h = x_h = 1$; prefix and step $h$ right but a later step "
           "wrong, $q^h - q^H$, where $r = 0$, $P_h = x_h = 1$; prefix right and step $h$ wrong, $q^{h-1}(1-q)$, "
           "where $r = 0$, $P_h = 1$, $x_h = 0$; prefix wrong, $1 - q^{h-1}$, where $P_h = 0$, so the step-$h$ "
           "score $P_h (x_h - q)$ and every step-$h$ term vanish")
PARTITION = Assumption(CLASSES)

p = q ** H  # the success probability of the task
grad = q ** H * (1 - q)  # d p / d theta_h


def class_sum(all_right, later_wrong, step_wrong) -> sp.Expr:
    """E[f] for a step-h quantity f that vanishes when the prefix is wrong, from its values on the other classes."""
    return q ** H * all_right + (q ** h - q ** H) * later_wrong + q ** (h - 1) * (1 - q) * step_wrong


chain_success_probability_is_q_pow_H = Result(
    name="chain_success_probability_is_q_pow_H",
    doc="The task succeeds iff each of the $H$ steps is right after a right prefix: $p = \\prod_{k=1}^{H} q = q^H$.",
    lhs=sp.Product(q, (k, 1, H)),
    rhs=q ** H,
    assumptions=(STEP_PROBABILITY_SETTING,),
    rule="chain rule of probability", why="Each factor is $P(o_k \\text{ right} \\mid o_{<k} \\text{ right}) = q$.",
    by=(rules.product_of_a_constant,),
)

sigmoid_step_scores_are_one_minus_q_and_minus_q = Result(
    name="sigmoid_step_scores_are_one_minus_q_and_minus_q",
    doc="With $q = \\sigma(\\theta)$: $\\frac{d}{d\\theta} \\log q = 1 - q$ and $\\frac{d}{d\\theta} \\log (1 - q) = -q$, "
        "i.e. the score of one step is $x - q$ for $x = 1[\\text{right}]$ (for the logit of the right token in a "
        "two-token softmax row, the same).",
    lhs=sp.ImmutableMatrix([[sp.Derivative(sp.log(sigmoid(theta)), theta),
                             sp.Derivative(sp.log(1 - sigmoid(theta)), theta)]]),
    rhs=sp.ImmutableMatrix([[1 - sigmoid(theta), -sigmoid(theta)]]),
    rule="differentiate the log-sigmoid", why="$\\sigma' = \\sigma (1 - \\sigma)$.",
    by=rules.DIFFERENTIATION,
)

success_probability_gradient_per_step_is_p_times_one_minus_q = Result(
    name="success_probability_gradient_per_step_is_p_times_one_minus_q",
    doc="Writing $p = A\\, \\sigma(\\theta_h)$ with $A > 0$ the product of the other steps' probabilities (free of "
        "$\\theta_h$): $\\partial p / \\partial \\theta_h = p (1 - q_h)$; with every $q_k = q$ it is $q^H (1 - q)$.",
    lhs=sp.Derivative(A * sigmoid(theta), theta),
    rhs=A * sigmoid(theta) * (1 - sigmoid(theta)),
    assumptions=(Assumption("$A > 0$: the other steps' success probabilities, which do not depend on $\\theta_h$",
                            context=True),),
    rule="derivative of the sigmoid", why="$\\sigma' = \\sigma (1 - \\sigma)$; $A$ is a constant in $\\theta_h$.",
    by=rules.DIFFERENTIATION,
)

# == means ==========================================================================================
outcome_estimator_mean_is_the_gradient_for_every_baseline = Result(
    name="outcome_estimator_mean_is_the_gradient_for_every_baseline",
    doc="For every constant baseline $b$: $E[(r - b) u_h] = q^H (1 - q) = \\partial p / \\partial \\theta_h$ at every "
        "step $h$: outcome-only credit is unbiased, step by step.",
    lhs=class_sum((1 - b) * (1 - q), (0 - b) * (1 - q), (0 - b) * (0 - q)),
    rhs=grad,
    assumptions=(PARTITION, STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING),
    steps=(
        Step(as_written(lambda: q ** H * (1 - q)
                        - b * ((1 - q) * (q ** H + (q ** h - q ** H)) - q ** (h - 1) * (1 - q) * q)),
             "collect the baseline terms",
             "The terms in $b$ are $-b$ times $E[u_h] = (1-q)(q^H + q^h - q^H) - q^{h-1}(1-q) q$."),
        Step(grad, "the score has mean zero", "$E[u_h] = 0$: the baseline terms cancel ($q^{h-1} q = q^h$)."),
    ),
)

Q_right = sp.Product(q, (k, h + 1, H))  # Q_h(prefix right, step h right) = P(steps h+1..H right)
V_step = q * Q_right + (1 - q) * 0  # V_h(prefix right) = E_x[Q_h]
exact_credit_advantages_on_the_right_prefix = Result(
    name="exact_credit_advantages_on_the_right_prefix",
    doc="After a right prefix, $Q_h(\\text{right}) = \\prod_{k=h+1}^{H} q = q^{H-h}$, $Q_h(\\text{wrong}) = 0$ and "
        "$V_h = q\\, Q_h(\\text{right})$, so the exact advantages are $Q_h - V_h = q^{H-h}(1-q)$ and $-q^{H-h+1}$ "
        "($q^{H-h}(x_h - q)$); after a wrong prefix $Q_h = V_h = 0$.",
    lhs=as_written(lambda: sp.ImmutableMatrix([[Q_right - V_step, 0 - V_step]])),
    rhs=sp.ImmutableMatrix([[q ** (H - h) * (1 - q), -q ** (H - h + 1)]]),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX),
    rule="product of a constant", why="$\\prod_{k=h+1}^{H} q = q^{H-h}$ for $h \\le H$; $q\\, q^{H-h} = q^{H-h+1}$.",
    by=(rules.product_of_a_constant, rules.exponent_sum_splits),
)

exact_credit_mean_is_the_gradient = Result(
    name="exact_credit_mean_is_the_gradient",
    doc="The exact-credit step-$h$ term $e_h = (Q_h - V_h) u_h = P_h q^{H-h} (x_h - q)^2$ has mean $q^H (1 - q)$: "
        "the same expected gradient as every outcome-only estimator.",
    lhs=q ** (h - 1) * (q * q ** (H - h) * (1 - q) ** 2 + (1 - q) * q ** (H - h) * q ** 2),
    rhs=grad,
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING,
                 Assumption("the prefix is right with probability $q^{h-1}$, then $x_h = 1$ with probability $q$ "
                            "and $e_h = q^{H-h} (x_h - q)^2$; after a wrong prefix $e_h = 0$")),
    steps=(
        Step(as_written(lambda: q ** H * (1 - q) * ((1 - q) + q)), "collect powers of $q$",
             "$q^{h-1} q^{H-h} q = q^H$."),
        Step(grad, "arithmetic"),
    ),
)

# == variances ======================================================================================
second_moment_outcome = class_sum((1 - b) ** 2 * (1 - q) ** 2, b ** 2 * (1 - q) ** 2, b ** 2 * q ** 2)


def outcome_variance(baseline=b, step=h) -> sp.Expr:
    """Var[(r - b) u_h] = q^H (1-b)^2 (1-q)^2 + b^2 (1-q) (q^h - q^H (1-q)) - q^{2H} (1-q)^2."""
    return (q ** H * (1 - baseline) ** 2 * (1 - q) ** 2 + baseline ** 2 * (1 - q) * (q ** step - q ** H * (1 - q))
            - q ** (2 * H) * (1 - q) ** 2)


outcome_variance_for_a_constant_baseline = Result(
    name="outcome_variance_for_a_constant_baseline",
    doc="$\\mathrm{Var}[(r - b) u_h] = q^H (1-b)^2 (1-q)^2 + b^2 (1-q)(q^h - q^H (1-q)) - q^{2H} (1-q)^2$ for every "
        "constant $b$, $H$ and $h \\le H$.",
    lhs=second_moment_outcome - grad ** 2,
    rhs=outcome_variance(),
    assumptions=(PARTITION, STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING),
    steps=(
        Step(q ** H * (1 - b) ** 2 * (1 - q) ** 2 + b ** 2 * (1 - q) * ((q ** h - q ** H) * (1 - q) + q ** (h + 1))
             - grad ** 2, "collect the two $r = 0$ classes", "$q^{h-1}(1-q) q^2 = (1-q) q^{h+1}$."),
        Step(outcome_variance(), "arithmetic", "$(q^h - q^H)(1-q) + q^{h+1} = q^h - q^H (1-q)$."),
    ),
)

outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared = Result(
    name="outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared",
    doc="Without a baseline: $\\mathrm{Var}[r u_h] = p (1-p) (1-q)^2$ with $p = q^H$, the same at every step.",
    lhs=outcome_variance(0),
    rhs=p * (1 - p) * (1 - q) ** 2,
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING),
    rule="outcome_variance_for_a_constant_baseline at $b = 0$", why="The $b^2$ term vanishes.",
)

outcome_variance_with_the_mean_baseline = Result(
    name="outcome_variance_with_the_mean_baseline",
    doc="With the oracle mean baseline $b = p = q^H$: $\\mathrm{Var}[(r - p) u_h] = p (1-q) ((1-q)(1-3p) + p q^h)$.",
    lhs=outcome_variance(p),
    rhs=p * (1 - q) * ((1 - q) * (1 - 3 * p) + p * q ** h),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING),
    rule="outcome_variance_for_a_constant_baseline at $b = q^H$", why="Expand and collect.",
)

mean_baseline_minus_no_baseline_variance = Result(
    name="mean_baseline_minus_no_baseline_variance",
    doc="$\\mathrm{Var}[(r - p) u_h] - \\mathrm{Var}[r u_h] = p^2 (1-q)(q^h - 2(1-q))$: the mean baseline is "
        "worse than none at step $h$ exactly when $q^h > 2(1 - q)$ (at $h = 1$: $q > 2/3$), because $r$ and $u_h^2$ "
        "are correlated (D8).",
    lhs=outcome_variance(p) - outcome_variance(0),
    rhs=p ** 2 * (1 - q) * (q ** h - 2 * (1 - q)),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING),
    rule="outcome_variance_for_a_constant_baseline at $b = q^H$ and $b = 0$", why="Expand and collect.",
)

# the law of exponents, to cancel a common power from a quotient
_a = sp.Symbol("a", positive=True)  # the variables of the law of exponents
_m = sp.Symbol("m", integer=True, nonnegative=True)
_n = sp.Symbol("n", integer=True)
exponents_add = Result(
    name="exponents_add",
    doc="For $a > 0$, an integer $m \\ge 0$ and every integer $n$: $a^{m + n} = a^m a^n$ (the law of exponents, "
        "used to cancel a common power $q^h$ from a quotient).",
    lhs=_a ** (_m + _n),
    rhs=_a ** _m * _a ** _n,
    induction=Induction(_m, 0),
    rule="induction on $m$",
    why="At $m = 0$ both sides are $a^n$. From $m$ to $m + 1$: $a^{m + 1 + n} = a^{m + n} a = a^m a^n a = "
        "a^{m + 1} a^n$.",
    by=(rules.exponent_sum_splits,),
)

outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q = Result(
    name="outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q",
    doc="D8's variance-optimal constant baseline for the step-$h$ coordinate, $b^*_h = E[r u_h^2] / E[u_h^2]$, is "
        "$q^{H-h} (1 - q)$: it differs from step to step, so no single scalar baseline is optimal for all steps.",
    lhs=class_sum((1 - q) ** 2, 0, 0) / class_sum((1 - q) ** 2, (1 - q) ** 2, q ** 2),
    rhs=q ** (H - h) * (1 - q),
    assumptions=(PARTITION, STEP_PROBABILITY, STEP_INDEX_SETTING),
    steps=(
        Step(q ** H * (1 - q) ** 2 / (q ** h * (1 - q) ** 2 + q ** (h + 1) * (1 - q)), "collect the classes",
             "$E[u_h^2] = q^{h-1}(q (1-q)^2 + (1-q) q^2)$."),
        Step(q ** (H - h) * (1 - q), "cancel $q^h (1 - q)$",
             "$q^H = q^h q^{H-h}$, $q^{h+1} = q^h q$ and $q^h (1-q)^2 + q^{h+1} (1-q) = q^h (1-q) \\ne 0$ "
             "as $0 < q < 1$.",
             using=(exponents_add.at({_a: q, _m: h, _n: H - h}),), by=(rules.exponent_sum_splits,)),
    ),
)

b_star = q ** (H - h) * (1 - q)
outcome_variance_with_the_optimal_baseline = Result(
    name="outcome_variance_with_the_optimal_baseline",
    doc="With $b^*_h$: $\\mathrm{Var}[(r - b^*_h) u_h] = p (1-q)^2 (1 - p - q^{H-h}(1-q))$.",
    lhs=outcome_variance(b_star),
    rhs=p * (1 - q) ** 2 * (1 - p - q ** (H - h) * (1 - q)),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING),
    rule="outcome_variance_for_a_constant_baseline at $b = b^*_h$", why="Expand; $q^{H-h} q^h = q^H$.",
)

second_moment_exact = q ** (h - 1) * (q * (q ** (H - h) * (1 - q) ** 2) ** 2 + (1 - q) * (q ** (H - h) * q ** 2) ** 2)


def exact_credit_variance(step=h) -> sp.Expr:
    """Var[e_h] with the value baseline: q^{2H-h} (1-q) (1 - 3q + 3q^2 - q^h (1-q))."""
    return q ** (2 * H - step) * (1 - q) * (1 - 3 * q + 3 * q ** 2 - q ** step * (1 - q))


exact_credit_variance_per_step = Result(
    name="exact_credit_variance_per_step",
    doc="With the value baseline, $\\mathrm{Var}[e_h] = q^{2H-h} (1-q)(1 - 3q + 3q^2 - q^h (1-q))$: small at early "
        "steps (a factor $q^{2H-h}$), largest at the last.",
    lhs=second_moment_exact - grad ** 2,
    rhs=exact_credit_variance(),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING,
                 Assumption("$e_h = P_h q^{H-h} (x_h - q)^2$ (exact_credit_advantages_on_the_right_prefix): "
                            "$q^{H-h} (1-q)^2$ with probability $q^h$, $q^{H-h} q^2$ with probability "
                            "$q^{h-1} (1-q)$, else 0; its mean is $q^H (1-q)$")),
    steps=(
        Step(q ** (2 * H - h) * (1 - q) * ((1 - q) ** 3 + q ** 3) - q ** (2 * H) * (1 - q) ** 2, "collect powers of $q$",
             "$q^{h-1} q^{2(H-h)} q = q^{2H-h}$."),
        Step(exact_credit_variance(), "arithmetic", "$(1-q)^3 + q^3 = 1 - 3q + 3q^2$."),
    ),
)

exact_credit_optimal_state_baseline_equals_outcome_optimal_baseline = Result(
    name="exact_credit_optimal_state_baseline_equals_outcome_optimal_baseline",
    doc="After a right prefix the variance-optimal baseline of the step-$h$ term, $E_x[Q_h u^2] / E_x[u^2]$ over "
        "the step's own choice, is $q^{H-h} (1-q) = b^*_h$; with it the term is the constant $q^{H-h+1}(1-q)$ "
        "given a right prefix (both choices give it).",
    lhs=as_written(lambda: sp.ImmutableMatrix([[
        (q * q ** (H - h) * (1 - q) ** 2) / (q * (1 - q) ** 2 + (1 - q) * q ** 2),
        (q ** (H - h) - b_star) * (1 - q), (0 - b_star) * (0 - q)]])),
    rhs=sp.ImmutableMatrix([[b_star, q ** (H - h + 1) * (1 - q), q ** (H - h + 1) * (1 - q)]]),
    assumptions=(STEP_PROBABILITY, STEP_INDEX_SETTING),
    rule="D8 within one state", why="$E_x[u^2] = q (1-q)$; $(Q - b) u$ at $x = 1$ and at $x = 0$.",
    by=(rules.exponent_sum_splits,),
)

exact_credit_variance_with_the_optimal_state_baseline = Result(
    name="exact_credit_variance_with_the_optimal_state_baseline",
    doc="With the per-state optimal baseline the step-$h$ term is $P_h q^{H-h+1} (1-q)$, whose only randomness is "
        "whether the prefix is right: $\\mathrm{Var} = q^{2H-h+1} (1-q)^2 (1 - q^{h-1})$ (zero at $h = 1$).",
    lhs=q ** (h - 1) * (q ** (H - h + 1) * (1 - q)) ** 2 - grad ** 2,
    rhs=q ** (2 * H - h + 1) * (1 - q) ** 2 * (1 - q ** (h - 1)),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX_SETTING,
                 Assumption("the term is $q^{H-h+1}(1-q)$ with probability $q^{h-1}$ (right prefix), else 0")),
    rule="variance of a scaled Bernoulli", why="$c^2 \\pi - (c \\pi)^2 = c^2 \\pi (1 - \\pi)$ with $\\pi = q^{h-1}$.",
)

last_step_optimal_variances_coincide = Result(
    name="last_step_optimal_variances_coincide",
    doc="At the last step $h = H$ the outcome estimator with $b^*_H$ and the exact-credit estimator with the optimal "
        "state baseline have the same variance $p (1-q)^2 (q - p)$: there $Q_H = r$ and $b^*_H = 1 - q$ is the state "
        "baseline, so the two are the same function of the rollout. Exact credit cannot help the last step.",
    lhs=sp.Subs(p * (1 - q) ** 2 * (1 - p - q ** (H - h) * (1 - q)), h, H),
    rhs=sp.Subs(q ** (2 * H - h + 1) * (1 - q) ** 2 * (1 - q ** (h - 1)), h, H),
    assumptions=(STEP_PROBABILITY_SETTING,),
    rule="outcome_variance_with_the_optimal_baseline and exact_credit_variance_with_the_optimal_state_baseline "
         "at $h = H$", why="Both are $q^H (1-q)^2 (q - q^H)$.",
)

# == signal-to-noise ratios =========================================================================
outcome_snr_without_baseline_is_p_over_one_minus_p = Result(
    name="outcome_snr_without_baseline_is_p_over_one_minus_p",
    doc="Per rollout and per step, the outcome-only SNR without a baseline is $\\mathrm{mean}^2 / \\mathrm{Var} = "
        "p / (1 - p) = q^H / (1 - q^H)$: the same at every step and exponentially small in $H$.",
    lhs=as_written(lambda: (q ** H * (1 - q)) ** 2 / (q ** H * (1 - q ** H) * (1 - q) ** 2)),
    rhs=p / (1 - p),
    # the side as written divides by (1 - q)^2: q < 1 is needed (q^H < 1 gives it, but not in arithmetic)
    assumptions=(STEP_PROBABILITY, Assumption("$p = q^H < 1$", positive=1 - q ** H)),
    rule="outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared",
    why="$p^2 (1-q)^2 / (p (1-p) (1-q)^2)$; $0 < p < 1$.",
)

EXACT_VARIANCE_POSITIVE = Assumption("$1 - 3q + 3q^2 - q^h (1-q) > 0$ (it is $\\ge (1 - 2q)^2$, zero only at $h = 1$, "
                                     "$q = 1/2$, where the variance is 0)",
                                     positive=1 - 3 * q + 3 * q ** 2 - q ** h * (1 - q))
exact_credit_snr_depends_on_the_step_not_on_H = Result(
    name="exact_credit_snr_depends_on_the_step_not_on_H",
    doc="Per rollout, the exact-credit SNR at step $h$ is $q^h (1-q) / (1 - 3q + 3q^2 - q^h (1-q))$: it does not "
        "depend on $H$, is of order $q^h$, and is smallest at the last step.",
    lhs=grad ** 2 / exact_credit_variance(),
    rhs=q ** h * (1 - q) / (1 - 3 * q + 3 * q ** 2 - q ** h * (1 - q)),
    assumptions=(STEP_PROBABILITY_SETTING, EXACT_VARIANCE_POSITIVE),
    rule="exact_credit_variance_per_step", why="$q^{2H} (1-q)^2 / (q^{2H-h} (1-q) (\\dots))$; $q^{2H} q^{h-2H} = q^h$.",
)

H2 = Assumption("$H \\ge 2$", H >= 2, context=True)
optimal_snr_at_the_last_step_is_q_pow_H_minus_1_over_its_complement = Result(
    name="optimal_snr_at_the_last_step_is_q_pow_H_minus_1_over_its_complement",
    doc="At the last step, with the optimal baselines (either estimator, last_step_optimal_variances_coincide), "
        "SNR $= p / (q - p) = q^{H-1} / (1 - q^{H-1})$ per rollout ($H \\ge 2$).",
    lhs=grad ** 2 / (p * (1 - q) ** 2 * q * (1 - q ** (H - 1))),  # the variance p (1-q)^2 (q - p), factored
    rhs=q ** (H - 1) / (1 - q ** (H - 1)),
    assumptions=(STEP_PROBABILITY_SETTING, H2, Assumption("$q^{H-1} < 1$ (as $H \\ge 2$)", positive=1 - q ** (H - 1))),
    rule="divide", why="$p^2 (1-q)^2 / (p (1-q)^2 (q - p)) = p / (q - p)$; divide by $q$: $q^{H-1} = q^H / q$.",
    by=(rules.exponent_sum_splits,),
)

# == samples for a fixed SNR ========================================================================
samples_outcome = sn * (1 - p) / p  # R i.i.d. rollouts averaged: SNR_R = R SNR_1; R = S / SNR_1
averaging_R_rollouts_multiplies_the_snr_by_R = Result(
    name="averaging_R_rollouts_multiplies_the_snr_by_R",
    doc="The average of $R$ i.i.d. copies has the same mean $m$ and variance $v / R$, so its SNR is $R m^2 / v$: "
        "to reach SNR $S$ one needs $R = S v / m^2$ rollouts; for outcome-only without a baseline, "
        "$S (1 - p)/p = S (q^{-H} - 1)$.",
    lhs=as_written(lambda: sp.Symbol("m", positive=True) ** 2 / (sp.Symbol("v", positive=True) / R)),
    rhs=R * sp.Symbol("m", positive=True) ** 2 / sp.Symbol("v", positive=True),
    assumptions=(Assumption("$m$, $v > 0$: mean and variance of one rollout's estimate; i.i.d. rollouts", context=True),),
    rule="variance of a mean of independent terms", why="$\\mathrm{Var}[\\frac1R \\sum_i X_i] = v / R$.",
)

samples_for_fixed_snr_grow_by_one_over_q_per_step = Result(
    name="samples_for_fixed_snr_grow_by_one_over_q_per_step",
    doc="The rollouts outcome-only needs for SNR $S$ (no baseline), $N(H) = S (q^{-H} - 1)$, satisfy "
        "$N(H+1) \\ge N(H) / q$: every added step multiplies them by at least $1/q$.",
    lhs=sn * (q ** (-(H + 1)) - 1),
    rhs=sn * (q ** (-H) - 1) / q,
    relation=">=",
    assumptions=(STEP_PROBABILITY,),
    steps=(
        Step(sn * (q ** (-H) - 1) / q + sn * (1 / q - 1), "arithmetic", "$q^{-H-1} - 1 = (q^{-H} - 1)/q + (1/q - 1)$.",
             by=(rules.exponent_sum_splits,)),
        Step(sn * (q ** (-H) - 1) / q, "$1/q \\ge 1$ on $(0, 1)$", "$S (1/q - 1) \\ge 0$.", relation=">="),
    ),
)

last_step_samples_for_fixed_snr_grow_by_one_over_q_per_step_with_exact_credit = Result(
    name="last_step_samples_for_fixed_snr_grow_by_one_over_q_per_step_with_exact_credit",
    doc="At the last step even exact credit with the optimal state baseline needs $N(H) = S (q^{1-H} - 1)$ rollouts "
        "for SNR $S$ (optimal_snr_at_the_last_step_is_q_pow_H_minus_1_over_its_complement), and "
        "$N(H+1) \\ge N(H)/q$: exponential growth in $H$ with exact credit too.",
    lhs=sn * (q ** (-H) - 1),
    rhs=sn * (q ** (1 - H) - 1) / q,
    relation=">=",
    assumptions=(STEP_PROBABILITY,),
    steps=(
        Step(sn * (q ** (1 - H) - 1) / q + sn * (1 / q - 1), "arithmetic", "$q^{-H} - 1 = (q^{1-H} - 1)/q + (1/q - 1)$.",
             by=(rules.exponent_sum_splits,)),
        Step(sn * (q ** (1 - H) - 1) / q, "$1/q \\ge 1$ on $(0, 1)$", "$S (1/q - 1) \\ge 0$.", relation=">="),
    ),
)

# == zero-gradient groups ===========================================================================
P_UNIT = Assumption("$p \\in [0, 1]$ (here $p = q^H$)", domain=(p_, sp.Interval(0, 1)))
GROUP = Assumption("$R \\ge 2$ rollouts drawn i.i.d.", R >= 2, context=True)
outcome_zero_gradient_probability_is_at_least_one_minus_R_p = Result(
    name="outcome_zero_gradient_probability_is_at_least_one_minus_R_p",
    doc="A group of $R$ gives outcome-only GRPO (any group-relative baseline, with or without std) no gradient with "
        "probability $p^R + (1-p)^R \\ge 1 - R p$ (D6); with $p = q^H$ the chance of any gradient is at most "
        "$R q^H$, so the zero-gradient probability tends to 1 as $H$ grows at fixed $R$, and a constant chance "
        "needs $R$ of order $q^{-H}$.",
    lhs=d6.zero_gradient_probability(p_, R),
    rhs=1 - R * p_,
    relation=">=",
    assumptions=(GROUP, P_UNIT),
    steps=(
        Step((1 - p_) ** R, "$p^R \\ge 0$", "A power of a number in $[0, 1]$.", relation=">="),
        Step(1 + R * ((1 - p_) - 1), "tangent_line_lies_below_an_integer_power",
             "Bernoulli's inequality at $x = 1 - p \\ge 0$, $c = 1$, $n = R$ (D6).", relation=">=",
             using=(d6.tangent_line_lies_below_an_integer_power.at({_x: 1 - p_, _c: sp.Integer(1), d6.n: R}),)),
        Step(1 - R * p_, "arithmetic"),
    ),
)

exact_credit_first_step_terms_are_never_zero = Result(
    name="exact_credit_first_step_terms_are_never_zero",
    doc="A rollout's exact-credit step-1 term is $q^{H-1} (x_1 - q)^2$, i.e. $q^{H-1} (1-q)^2$ or $q^{H-1} q^2$; "
        "both are positive (their product is), so the group's step-1 coordinate, an average of $R$ of them, is "
        "positive for every group: exact credit never gives an all-zero gradient, whatever $H$ and $R$.",
    lhs=(q ** (H - 1) * (1 - q) ** 2) * (q ** (H - 1) * q ** 2),
    rhs=sp.Integer(0),
    relation=">",
    assumptions=(STEP_PROBABILITY,),
    rule="sign of each factor", why="$0 < q < 1$.",
)

# == a process reward changes the objective ========================================================
process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1 = Result(
    name="process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1",
    doc="A process reward (here: the number of leading right steps, $J' = \\sum_{k=1}^{H} q^k$) is another objective: "
        "$\\partial J' / \\partial \\theta_h = \\sum_{k=h}^{H} q^k (1 - q) = q^h - q^{H+1}$ (step $k \\ge h$ depends on "
        "$\\theta_h$ through one factor), of order $q^h$, not $q^H$.",
    lhs=sp.Sum(q ** k * (1 - q), (k, h, H)),
    rhs=q ** h - q ** (H + 1),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX),
    rule="telescoping sum", why="$q^k (1-q) = q^k - q^{k+1}$.",
    by=(rules.sum_telescopes(sp.Lambda(k, -q ** k)), rules.exponent_sum_splits),
)


# == SNR at step h for each estimator, and where the exponential in H enters =========================
OPTIMAL_OUTCOME_VARIANCE_POSITIVE = Assumption(
    "$1 - q^H - q^{H-h}(1-q) > 0$ (at $h = H$ it is $q - q^H$, positive for $H \\ge 2$)",
    positive=1 - q ** H - q ** (H - h) * (1 - q))
outcome_snr_with_the_optimal_baseline_is_q_pow_H_over_one_minus_q_pow_H_minus_b_star = Result(
    name="outcome_snr_with_the_optimal_baseline_is_q_pow_H_over_one_minus_q_pow_H_minus_b_star",
    doc="Per rollout, the outcome-only SNR at step $h$ with D8's optimal constant baseline $b^*_h = q^{H-h}(1-q)$ is "
        "$q^H / (1 - q^H - q^{H-h}(1-q))$ (outcome_variance_with_the_optimal_baseline): a factor $q^H$ over a "
        "denominator between $q - q^H$ and $1$, so of order $q^H$ at every step except the last, where it is "
        "$q^{H-1}/(1 - q^{H-1})$.",
    lhs=as_written(lambda: grad ** 2 / (p * (1 - q) ** 2 * (1 - p - q ** (H - h) * (1 - q)))),
    rhs=q ** H / (1 - q ** H - q ** (H - h) * (1 - q)),
    assumptions=(STEP_PROBABILITY, STEP_INDEX_SETTING, OPTIMAL_OUTCOME_VARIANCE_POSITIVE),
    rule="outcome_variance_with_the_optimal_baseline",
    why="$q^{2H} (1-q)^2 / (q^H (1-q)^2 (1 - q^H - q^{H-h}(1-q)))$; $0 < q < 1$.",
)

HALF_EXCLUDED = Assumption("$q \\ne 1/2$ (at $q = 1/2$ the first-step exact-credit term is constant, variance 0)",
                           positive=(1 - 2 * q) ** 2)
exact_credit_first_step_snr_is_q_times_one_minus_q_over_one_minus_2q_squared = Result(
    name="exact_credit_first_step_snr_is_q_times_one_minus_q_over_one_minus_2q_squared",
    doc="At the first step the exact-credit SNR (exact_credit_snr_depends_on_the_step_not_on_H at $h = 1$) is "
        "$q (1-q) / (1 - 2q)^2$: no $H$ in it, while the mean of the same coordinate is $q^H (1-q)$.",
    lhs=sp.Subs(exact_credit_snr_depends_on_the_step_not_on_H.rhs, h, 1),
    rhs=q * (1 - q) / (1 - 2 * q) ** 2,
    assumptions=(STEP_PROBABILITY_SETTING, HALF_EXCLUDED),
    rule="exact_credit_snr_depends_on_the_step_not_on_H at $h = 1$", why="$1 - 3q + 3q^2 - q(1-q) = (1-2q)^2$.",
)

outcome_over_exact_credit_first_step_snr_is_q_pow_H_minus_1_times_a_factor_free_of_H = Result(
    name="outcome_over_exact_credit_first_step_snr_is_q_pow_H_minus_1_times_a_factor_free_of_H",
    doc="At step 1, outcome-only without a baseline over exact credit: "
        "$\\frac{p/(1-p)}{q (1-q)/(1-2q)^2} = q^{H-1} \\frac{(1-2q)^2}{(1-q)(1-q^H)}$, i.e. $q^{H-1}$ times a factor "
        "between $(1-2q)^2/(1-q)$ and $(1-2q)^2/(1-q)^2$: the exponential in $H$ is in the outcome estimator's "
        "per-rollout SNR, not in exact credit's.",
    lhs=(outcome_snr_without_baseline_is_p_over_one_minus_p.rhs
         / exact_credit_first_step_snr_is_q_times_one_minus_q_over_one_minus_2q_squared.rhs),
    rhs=q ** (H - 1) * (1 - 2 * q) ** 2 / ((1 - q) * (1 - q ** H)),
    assumptions=(STEP_PROBABILITY, Assumption("$p = q^H < 1$", positive=1 - q ** H)),
    rule="divide", why="$q^H / q = q^{H-1}$.",
    by=(rules.exponent_sum_splits,),
)

j = sp.Symbol("j", integer=True, nonnegative=True)  # the number of further right steps after step h
process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1 = Result(
    name="process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1",
    doc="For the per-step reward $r_k = 1[\\text{steps } 1..k \\text{ right}]$ and the reward-to-go "
        "$G_h = \\sum_{k \\ge h} r_k$, REINFORCE's step-$h$ term $G_h u_h$ has mean $q^h - q^{H+1}$ "
        "(process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1): after a right prefix $G_h = 0$ if step "
        "$h$ is wrong, and if it is right $G_h = 1 + L$ with $P(L \\ge j) = q^j$ for $j \\le H - h$, so "
        "$E[G_h u_h] = q^{h-1} q (1-q) \\sum_{j=0}^{H-h} q^j$.",
    lhs=q ** h * sp.Sum(q ** j * (1 - q), (j, 0, H - h)),
    rhs=q ** h - q ** (H + 1),
    assumptions=(STEP_PROBABILITY_SETTING, STEP_INDEX,
                 Assumption("$E[1 + L] = \\sum_{j=0}^{H-h} P(L \\ge j)$ with $P(L \\ge j) = q^j$: the steps "
                            "$h+1..h+j$ are right; the wrong-step class contributes $G_h = 0$")),
    steps=(
        Step(q ** h * (1 - q ** (H - h + 1)), "telescoping sum", "$q^j (1-q) = q^j - q^{j+1}$.",
             by=(rules.sum_telescopes(sp.Lambda(j, -q ** j)), rules.exponent_sum_splits)),
        Step(q ** h - q ** (H + 1), "law of exponents", "$q^h q^{H-h+1} = q^{H+1}$.",
             using=(exponents_add.at({_a: q, _m: h, _n: H - h + 1}),), by=(rules.exponent_sum_splits,)),
    ),
)


# == exact checks by enumeration ====================================================================
def _sequences(length: int):
    return itertools.product((0, 1), repeat=length)


def _probability(seq) -> sp.Expr:
    """P(seq): q per step after an all-right prefix, s after a wrong one."""
    weight, right = sp.Integer(1), True
    for token in seq:
        succeed = q if right else s
        weight *= succeed if token == 1 else 1 - succeed
        right = right and token == 1
    return weight


def _step_terms(seq, length: int, step: int, baseline):
    """(outcome term (r - b) u_h, exact term e_h, exact term with the optimal state baseline) for one sequence."""
    reward = 1 if all(t == 1 for t in seq) else 0
    prefix_right = all(t == 1 for t in seq[:step - 1])
    if not prefix_right:
        return sp.Integer(0), sp.Integer(0), sp.Integer(0)
    score = seq[step - 1] - q
    q_value = q ** (length - step) if seq[step - 1] == 1 else sp.Integer(0)
    value = q ** (length - step + 1)
    optimal = q ** (length - step) * (1 - q)
    return (reward - baseline) * score, (q_value - value) * score, (q_value - optimal) * score


CASES = [(length, step) for length in (1, 2, 3) for step in range(1, length + 1)]


def _enumerated(which: str) -> sp.ImmutableMatrix:
    rows = []
    for length, step in CASES:
        terms = [(_probability(seq), _step_terms(seq, length, step, b)) for seq in _sequences(length)]
        means = [sp.Add(*[w * t[j] for w, t in terms]) for j in range(3)]
        seconds = [sp.Add(*[w * t[j] ** 2 for w, t in terms]) for j in range(3)]
        if which == "mean":
            rows.append(means)
        else:
            rows.append([seconds[j] - means[j] ** 2 for j in range(3)])
    return sp.ImmutableMatrix(rows)


def _closed(which: str) -> sp.ImmutableMatrix:
    """The closed forms at each (H, h) of CASES, written as substitutions (the kernel evaluates them)."""
    rows = []
    optimal = q ** (2 * H - h + 1) * (1 - q) ** 2 * (1 - q ** (h - 1))
    for length, step in CASES:
        at = lambda e: sp.Subs(e, (H, h), (length, step))  # noqa: E731
        if which == "mean":
            rows.append([at(grad)] * 3)
        else:
            rows.append([at(outcome_variance()), at(exact_credit_variance()), at(optimal)])
    return sp.ImmutableMatrix(rows)


ENUMERATION = Assumption("every outcome $o \\in \\{0, 1\\}^H$ of the tabular policy for $H = 1, 2, 3$: a step after "
                         "the all-right prefix is right with probability $q$, any step after a wrong prefix with "
                         "probability $s$; reward $1[o = 1^H]$; rows (H, h) in the order (1,1), (2,1), (2,2), (3,1), "
                         "(3,2), (3,3); columns: outcome-only with baseline $b$, exact credit with $V_h$, exact credit "
                         "with the optimal state baseline", context=True)
per_step_means_by_enumeration = Result(
    name="per_step_means_by_enumeration",
    instance="$H = 1, 2, 3$",
    doc="Enumerating all $2^H$ outcomes for $H = 1, 2, 3$ (symbolic $q$, $s$, $b$): every step-$h$ mean is "
        "$q^H (1 - q)$ for the three estimators.",
    lhs=computation("EnumeratedStepMeans", r"\left(E_{\mathrm{enum}}[\text{step-}h\text{ terms}]\right)_{H \le 3}",
                    lambda: _enumerated("mean"))(),
    rhs=_closed("mean"),
    assumptions=(ENUMERATION,),
    rule="enumeration of all outcomes", why="A finite expectation is a finite weighted sum.",
)

per_step_variances_by_enumeration = Result(
    name="per_step_variances_by_enumeration",
    instance="$H = 1, 2, 3$",
    doc="Enumerating all $2^H$ outcomes for $H = 1, 2, 3$ (symbolic $q$, $s$, $b$): the step-$h$ variances equal "
        "outcome_variance_for_a_constant_baseline, exact_credit_variance_per_step and "
        "exact_credit_variance_with_the_optimal_state_baseline.",
    lhs=computation("EnumeratedStepVariances", r"\left(\mathrm{Var}_{\mathrm{enum}}[\text{step-}h\text{ terms}]\right)_{H \le 3}",
                    lambda: _enumerated("variance"))(),
    rhs=_closed("variance"),
    assumptions=(ENUMERATION,),
    rule="enumeration of all outcomes", why="A finite expectation is a finite weighted sum.",
)

GROUP_CASES = ((1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (3, 2))


def group_mean_variance(length=H, step=h, size=R) -> sp.Expr:
    """Var of (1/R) sum_i (r_i - rbar) u_ih: ((R-1)/R)^2 [(mu22 - c^2)/R + (var_r var_u + c^2)/(R (R-1))]."""
    length, step, size = sp.sympify(length), sp.sympify(step), sp.sympify(size)  # never Python float division
    prob = q ** length
    c = prob * (1 - q)
    mu22 = outcome_variance(prob, step).subs(H, length) + c ** 2
    var_r, var_u = prob * (1 - prob), q ** step * (1 - q)
    return ((size - 1) / size) ** 2 * ((mu22 - c ** 2) / size + (var_r * var_u + c ** 2) / (size * (size - 1)))


def _enumerated_group_variances() -> sp.ImmutableMatrix:
    entries = []
    for length, size in GROUP_CASES:
        seqs = list(_sequences(length))
        for step in range(1, length + 1):
            mean, second = sp.Integer(0), sp.Integer(0)
            for group in itertools.product(seqs, repeat=size):
                weight = sp.Mul(*[_probability(o) for o in group])
                rewards = [1 if all(t == 1 for t in o) else 0 for o in group]
                rbar = sp.Rational(sum(rewards), size)
                scores = [(o[step - 1] - q) if all(t == 1 for t in o[:step - 1]) else 0 for o in group]
                value = sp.Add(*[(rw - rbar) * u for rw, u in zip(rewards, scores)]) / size
                mean += weight * value
                second += weight * value ** 2
            entries.append(second - mean ** 2)
    return sp.ImmutableMatrix(entries)


group_mean_variance_by_enumeration = Result(
    name="group_mean_variance_by_enumeration",
    instance="$(H, R) \\in \\{(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (3, 2)\\}$",
    doc="The no-std GRPO estimate $\\frac1R \\sum_i (r_i - \\bar r) u_{ih}$ is $\\frac{R-1}{R}$ times the sample "
        "covariance of $(r, u_h)$; enumerating every group for $(H, R) \\in \\{(1,2), (1,3), (1,4), (2,2), (2,3), "
        "(3,2)\\}$ and each step $h$ (symbolic $q$, $s$), its variance is $(\\frac{R-1}{R})^2 [(\\mu_{22} - c^2)/R + "
        "(\\sigma_r^2 \\sigma_u^2 + c^2)/(R (R-1))]$ with $c = p (1-q)$, $\\mu_{22} - c^2$ the mean-baseline variance, "
        "$\\sigma_r^2 = p (1-p)$, $\\sigma_u^2 = q^h (1-q)$.",
    lhs=computation("EnumeratedGroupMeanVariances", r"\left(\mathrm{Var}_{\mathrm{enum}}[\hat g_h]\right)_{(H, R), h}",
                    _enumerated_group_variances)(),
    rhs=sp.ImmutableMatrix([sp.Subs(group_mean_variance(), (H, h, R), (length, step, size))
                            for length, size in GROUP_CASES for step in range(1, length + 1)]),
    assumptions=(Assumption("all $(2^H)^R$ ordered groups of i.i.d. rollouts of the enumerated policy, entries in "
                            "the order of the cases and then $h$", context=True),),
    rule="enumeration of all groups", why="A finite expectation is a finite weighted sum.",
)

# == remarks ========================================================================================
group_mean_variance_for_every_R = Remark(
    "group_mean_variance_for_every_R",
    "For every $R \\ge 2$ the variance of the unbiased sample covariance of i.i.d. pairs is "
    "$(\\mu_{22} - c^2)/R + (\\sigma_x^2 \\sigma_y^2 + c^2)/(R (R-1))$ (a classical identity), which gives "
    "group_mean_variance_by_enumeration for every $R$: the group-mean estimator's per-step SNR is "
    "$R c^2 / (\\mathrm{Var}_h(p) + (p(1-p) q^h (1-q) + c^2)/(R-1))$, of order $R p$ like the oracle-mean one. "
    "The every-$R$ form is not checked by the kernel: its expectation is linear only and would need the fourth "
    "moments of a double sum over rollouts, with an independence rewrite for every pattern of equal indices; the "
    "enumerations check it for $R \\le 4$.",
)

expected_updates_are_the_same_for_both_estimators = Remark(
    "expected_updates_are_the_same_for_both_estimators",
    "Since both estimators have mean $\\partial p / \\partial \\theta_h$ at every step (the no-std group mean "
    "$\\frac{R-1}{R}$ of it, D5), the noise-free (expected) update is the same with and without exact credit, "
    "and so is every quantity of the expected-gradient flow. Starting from $q = 1/2$ at every step, the logit "
    "of each step moves by $\\eta q^H (1-q) \\le \\eta (3/4)^H$ per expected update while $q \\le 3/4$, and it must "
    "move from $0$ to $\\log 3$ before $p = q^H$ can reach $0.9 > (3/4)^1$, so at least $\\log 3\\, (4/3)^H / \\eta$ "
    "expected updates are needed: exponential in $H$ with exact credit as well. This induction over updates is "
    "not a checked result (the kernel has no recurrence in the update count); the experiment "
    "experiments/credit_assignment.py measures it.",
)

process_reward_changes_the_objective = Remark(
    "process_reward_changes_the_objective",
    "Exact credit ($Q - V$ from the true policy, the best a critic can do) keeps the outcome objective $p = q^H$ and "
    "its gradient $q^H (1-q)$ per step; it removes noise only. A per-step (process) reward changes the objective: "
    "for $J' = \\sum_k q^k$ the gradient at step $h$ is $q^h - q^{H+1}$ "
    "(process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1), about $q$ at $h = 1$ however large $H$ "
    "is, so early steps are pushed up even when the whole task almost never succeeds. Only such a change of "
    "objective (or of the starting $q$, e.g. by supervised data) removes the factor $q^H$ from the expected "
    "update; better credit assignment under the same outcome reward cannot.",
)

what_limits_learning = Remark(
    "what_limits_learning",
    "Reading of the results. (1) Credit assignment does not change the expected gradient "
    "(outcome_estimator_mean_is_the_gradient_for_every_baseline, exact_credit_mean_is_the_gradient): both are "
    "$q^H (1-q)$, exponentially small in $H$. (2) It does change the variance: per rollout the outcome-only SNR "
    "is about $q^H$ at every step, the exact-credit SNR about $q^h$ at step $h$, so early steps gain a factor "
    "of order $q^{h-H}$. (3) At the last step the two coincide (last_step_optimal_variances_coincide), so the "
    "rollouts needed for a fixed SNR of the whole gradient grow like $q^{-(H-1)}$ either way "
    "(samples_for_fixed_snr_grow_by_one_over_q_per_step, "
    "last_step_samples_for_fixed_snr_grow_by_one_over_q_per_step_with_exact_credit). (4) The all-zero group "
    "probability $p^R + (1-p)^R \\to 1$ is specific to outcome-only credit: exact credit always has a non-zero "
    "first-step coordinate. So in this model the exponentially small success probability $p = q^H$ is what "
    "limits learning, in the expected update and in the last step's noise; credit assignment is a "
    "constant-factor-at-the-last-step, exponential-at-the-early-steps variance effect. Scope: independent steps "
    "of equal difficulty, binary step outcomes, reward 1 iff all steps are right, exact $Q$ and $V$.",
)
