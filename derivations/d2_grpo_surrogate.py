r"""D2 GRPO surrogate: the clipped, KL-regularised objective and its first on-policy gradient.

Per token, GRPO maximises $\min(\rho A, \mathrm{clip}(\rho, 1 - \varepsilon, 1 + \varepsilon) A) - \beta k_3$ with
the ratio $\rho = \pi_\theta / \pi_{\theta_{old}}$ and the k3 estimator $k_3 = \pi_{ref}/\pi_\theta -
\log(\pi_{ref}/\pi_\theta) - 1$. For a clip width $\varepsilon > 0$ the clipped term equals $\rho A$ on the
whole open interval $(1 - \varepsilon, 1 + \varepsilon)$ (proved through the parametrisation
$\rho = 1 - \varepsilon + 2 \varepsilon/(1 + w)$, $w > 0$, which is onto that interval), so its slope at
$\rho = 1$ is $A$; at $\theta = \theta_{old}$ the ratio has gradient $\nabla \log \pi_\theta$; the k3
term has gradient $(1 - \pi_{ref}/\pi_\theta) \nabla \log \pi_\theta$, zero at $\pi_\theta = \pi_{ref}$, and is
convex in $x = \pi_{ref}/\pi_\theta$ with minimum 0 at $x = 1$. Hence at $\theta = \theta_{old}$ (the first
gradient step of an iteration; the KL term drops out when also $\theta_{ref} = \theta_{old}$, as in the first
iteration, or when $\beta = 0$) the GRPO gradient is
$\frac{1}{R} \sum_i \frac{A_i}{|o_i|} \sum_t \nabla \log \pi_\theta(o_{i,t} | q, o_{i,<t})$, proved for symbolic
group size $R$ and symbolic lengths $|o_i| = T(i)$, the advantages being constants (computed from
the sampled rewards, no gradient through them). The same is proved for the Dr. GRPO aggregation
(advantage $r_i - \bar r$ without std, token sum divided by the constant $R L$, $L$ the maximum
completion length) and the DAPO aggregation (token sum over the whole group divided by
$\sum_j |o_j|$, asymmetric clip $(1 - \varepsilon_{low}, 1 + \varepsilon_{high})$, no KL term). The
derivative of the clipped term at $\theta = \theta_{old}$ is admitted by the kernel's rule for kinks:
each $\min$ and $\max$ either has no tie at that point or both of its arguments have the same slope
there (the inner $\max$ and $\min$ of the clip are not tied at ratio 1; the outer $\min$ is, with equal
slopes), so the function is differentiable there and the derivative of the chosen argument is its value.
"""

import sympy as sp

from .notation import R, advantage, i, j, t
from grpo_verify.proof import Assumption, MinimumAt, Remark, Result, Step, rules

# -- symbols local to this family -----------------------------------------------------------------
veps = sp.Symbol("varepsilon", positive=True)  # clip width (not the std stabiliser epsilon)
veps_low = sp.Symbol("varepsilon_low", positive=True)  # DAPO lower clip width
veps_high = sp.Symbol("varepsilon_high", positive=True)  # DAPO upper clip width
w = sp.Symbol("w", positive=True)  # parameter of the open clip interval
rho = sp.Symbol("rho", positive=True)  # a probability ratio
adv = sp.Symbol("A", real=True)  # one advantage
x = sp.Symbol("x", positive=True)  # pi_ref / pi_theta
beta = sp.Symbol("beta", nonnegative=True)  # KL coefficient
L = sp.Symbol("L", positive=True)  # Dr. GRPO's constant normaliser (maximum completion length)
theta = sp.Symbol("theta", real=True)  # one coordinate of the parameters
theta_old = sp.Symbol("theta_old", real=True)  # the sampling parameters (also theta_ref at the first iteration)
pi_ref = sp.Symbol("pi_ref", positive=True)  # reference probability of one token
pi = sp.Function("pi", positive=True)  # pi(theta): probability of one token; pi(i, t, theta) for token t of o_i
T = sp.Function("T", integer=True, positive=True)  # T(i) = |o_i|
A = sp.IndexedBase("A", real=True)  # A[i]: the (detached) advantage of rollout i


def clip(value: sp.Expr, low: sp.Expr, high: sp.Expr, evaluate: bool = True) -> sp.Expr:
    """clip(value, low, high) = min(max(value, low), high)."""
    return sp.Min(sp.Max(value, low, evaluate=evaluate), high, evaluate=evaluate)


def clipped_term(ratio: sp.Expr, a: sp.Expr, low: sp.Expr = 1 - veps, high: sp.Expr = 1 + veps,
                 evaluate: bool = True) -> sp.Expr:
    """min(ratio a, clip(ratio, low, high) a): PPO's pessimistic clipped term."""
    return sp.Min(ratio * a, clip(ratio, low, high, evaluate) * a, evaluate=evaluate)


def k3(ratio: sp.Expr) -> sp.Expr:
    """Schulman's k3 estimator of KL(pi_theta || pi_ref) at ratio = pi_ref / pi_theta."""
    return ratio - sp.log(ratio) - 1


def at_old(e: sp.Expr) -> sp.Expr:
    """The gradient of e at theta = theta_old (unevaluated)."""
    return sp.Subs(sp.Derivative(e, theta), theta, theta_old)


CLIP = Assumption("the clip width is positive, $\\varepsilon > 0$")
DIFFERENTIATION = rules.DIFFERENTIATION
KINK = (rules.derivative_at_a_kink,)  # a Min/Max differentiated at a point where it is resolved
inside = 1 - veps + 2 * veps / (1 + w)  # runs over (1 - eps, 1 + eps) as w runs over (0, oo)

# -- the clipped term near rho = 1 -----------------------------------------------------------------
clip_interval_parametrisation_stays_above_lower_end = Result(
    name="clip_interval_parametrisation_stays_above_lower_end",
    doc="$\\rho(w) = 1 - \\varepsilon + 2\\varepsilon/(1 + w)$ exceeds $1 - \\varepsilon$ for every $w > 0$.",
    lhs=inside, rhs=1 - veps, relation=">",
    assumptions=(CLIP,),
    rule="sign", why="The difference $2\\varepsilon/(1 + w)$ is positive.",
)

clip_interval_parametrisation_stays_below_upper_end = Result(
    name="clip_interval_parametrisation_stays_below_upper_end",
    doc="$\\rho(w) = 1 - \\varepsilon + 2\\varepsilon/(1 + w)$ is below $1 + \\varepsilon$ for every $w > 0$.",
    lhs=inside, rhs=1 + veps, relation="<",
    assumptions=(CLIP,),
    rule="sign", why="The difference $2\\varepsilon w/(1 + w)$ is positive.",
)

clip_interval_parametrisation_is_onto = Result(
    name="clip_interval_parametrisation_is_onto",
    doc="Every $\\rho \\in (1 - \\varepsilon, 1 + \\varepsilon)$ is $\\rho(w)$ for "
        "$w = (1 + \\varepsilon - \\rho)/(\\rho - 1 + \\varepsilon) > 0$; in particular $\\rho(1) = 1$.",
    lhs=sp.Subs(inside, w, (1 + veps - rho) / (rho - 1 + veps)),  # rho(w) at w(rho), substituted by the kernel
    rhs=rho,
    assumptions=(CLIP, Assumption("$1 - \\varepsilon < \\rho < 1 + \\varepsilon$",
                                  sp.And(1 - veps < rho, rho < 1 + veps))),
    rule="cancel", why="Solve $\\rho = 1 - \\varepsilon + 2\\varepsilon/(1 + w)$ for $w$.",
)

clip_is_identity_inside_clip_interval = Result(
    name="clip_is_identity_inside_clip_interval",
    doc="On the open interval $(1 - \\varepsilon, 1 + \\varepsilon)$, "
        "$\\mathrm{clip}(\\rho, 1 - \\varepsilon, 1 + \\varepsilon) = \\rho$.",
    lhs=clip(inside, 1 - veps, 1 + veps, evaluate=False),
    rhs=inside,
    assumptions=(CLIP, Assumption("$w > 0$, so $\\rho(w)$ runs over the open clip interval")),
    rule="min and max of comparable arguments",
    why="clip_interval_parametrisation_stays_above_lower_end and ..._below_upper_end decide both comparisons.",
    using=(clip_interval_parametrisation_stays_above_lower_end, clip_interval_parametrisation_stays_below_upper_end),
    by=(rules.min_max_abs_of_ordered_arguments,),
)

clipped_term_equals_ratio_term_inside_clip_interval = Result(
    name="clipped_term_equals_ratio_term_inside_clip_interval",
    doc="On the open interval $(1 - \\varepsilon, 1 + \\varepsilon)$ the clipped term "
        "$\\min(\\rho A, \\mathrm{clip}(\\rho) A)$ equals $\\rho A$, for either sign of $A$.",
    lhs=clipped_term(inside, adv, evaluate=False),
    rhs=inside * adv,
    assumptions=(CLIP, Assumption("$w > 0$, so $\\rho(w)$ runs over the open clip interval")),
    steps=(
        Step(sp.Min(inside * adv, inside * adv, evaluate=False), "clip_is_identity_inside_clip_interval",
             using=(clip_is_identity_inside_clip_interval,)),
        Step(inside * adv, "min of equal arguments", by=(rules.min_max_abs_of_ordered_arguments,)),
    ),
)

clipped_term_has_slope_A_at_ratio_one = Result(
    name="clipped_term_has_slope_A_at_ratio_one",
    doc="The clipped term has derivative $A$ with respect to $\\rho$ at $\\rho = 1$: in the coordinate $w$ "
        "(a smooth bijection onto the open clip interval with $\\rho(1) = 1$, $\\rho'(1) = -\\varepsilon/2 \\ne 0$) "
        "its derivative divided by $d\\rho/dw$ is $A$ at $w = 1$.",
    lhs=sp.Subs(sp.Derivative(clipped_term(inside, adv, evaluate=False), w) / sp.Derivative(inside, w), w, 1),
    rhs=adv,
    assumptions=(CLIP,),
    steps=(
        Step(sp.Subs(sp.Derivative(inside * adv, w) / sp.Derivative(inside, w), w, 1),
             "derivative at a resolved kink",
             "At $w = 1$ the ratio is $\\rho(1) = 1$, strictly inside $(1 - \\varepsilon, 1 + \\varepsilon)$: the clip's "
             "max and min are not tied there and pick $\\rho$, and the outer min is tied between $\\rho A$ and "
             "$\\rho A$, equal slopes; so the clipped term is differentiable at $w = 1$ with the derivative of "
             "$\\rho A$ (as clipped_term_equals_ratio_term_inside_clip_interval says on all of $w > 0$). The "
             "slope $d\\rho/dw = -\\varepsilon/2$ there is not 0.", by=(*KINK, *DIFFERENTIATION)),
        Step(adv, "differentiation", "The factor $A$ is constant.", by=DIFFERENTIATION),
    ),
)

# -- the ratio and the k3 term at theta_old ---------------------------------------------------------
ratio_gradient_at_old_policy_is_score = Result(
    name="ratio_gradient_at_old_policy_is_score",
    doc="At $\\theta = \\theta_{old}$ the gradient of $\\rho = \\pi_\\theta/\\pi_{\\theta_{old}}$ is the score "
        "$\\nabla_\\theta \\log \\pi_\\theta$.",
    lhs=at_old(pi(theta) / pi(theta_old)),
    rhs=at_old(sp.log(pi(theta))),
    assumptions=(Assumption("the token probability $\\pi(\\theta)$ is positive and differentiable"),),
    rule="differentiation",
    why="$\\nabla (\\pi_\\theta/c) = \\nabla \\pi_\\theta / c$ and $c = \\pi_{\\theta_{old}}$ is the value of "
        "$\\pi_\\theta$ at $\\theta_{old}$.",
    by=DIFFERENTIATION,
)

clipped_term_gradient_at_old_policy_is_advantage_times_score = Result(
    name="clipped_term_gradient_at_old_policy_is_advantage_times_score",
    doc="At $\\theta = \\theta_{old}$ the gradient of one token's clipped term is $A \\nabla \\log \\pi_\\theta$.",
    lhs=at_old(clipped_term(pi(theta) / pi(theta_old), adv)),
    rhs=adv * at_old(sp.log(pi(theta))),
    assumptions=(CLIP,),
    steps=(
        Step(adv * at_old(pi(theta) / pi(theta_old)), "derivative at a resolved kink",
             "The ratio is 1 at $\\theta_{old}$, strictly inside the clip interval: the clip picks the ratio and the "
             "outer min is tied with equal slopes, so the clipped term has the derivative of $\\rho A$ there (the "
             "slope $A$ of clipped_term_has_slope_A_at_ratio_one, times the ratio's gradient).",
             by=(*KINK, *DIFFERENTIATION)),
        Step(adv * at_old(sp.log(pi(theta))), "ratio_gradient_at_old_policy_is_score",
             using=(ratio_gradient_at_old_policy_is_score,)),
    ),
)

k3_vanishes_at_ratio_one = Result(
    name="k3_vanishes_at_ratio_one",
    doc="The k3 estimator $x - \\log x - 1$ is 0 at $x = \\pi_{ref}/\\pi_\\theta = 1$.",
    lhs=sp.Subs(k3(x), x, 1), rhs=sp.Integer(0),
    rule="evaluation",
)

k3_slope_in_ratio_is_one_minus_reciprocal = Result(
    name="k3_slope_in_ratio_is_one_minus_reciprocal",
    doc="$d(x - \\log x - 1)/dx = (x - 1)/x$: negative for $x < 1$, zero at $x = 1$, positive for $x > 1$.",
    lhs=sp.Derivative(k3(x), x), rhs=(x - 1) / x,
    rule="differentiation",
    by=DIFFERENTIATION,
)

k3_is_strictly_convex_in_ratio = Result(
    name="k3_is_strictly_convex_in_ratio",
    doc="$d^2(x - \\log x - 1)/dx^2 = 1/x^2 > 0$ for $x > 0$.",
    lhs=sp.Derivative(k3(x), (x, 2)), rhs=sp.Integer(0), relation=">",
    assumptions=(Assumption("$x = \\pi_{ref}/\\pi_\\theta > 0$"),),
    steps=(Step(1 / x**2, "differentiation", by=DIFFERENTIATION),
           Step(sp.Integer(0), "sign", "$x > 0$.", relation=">"),),
)

k3_is_nonnegative = Result(
    name="k3_is_nonnegative",
    doc="$k_3 = x - \\log x - 1 \\ge 0$ for every $x > 0$ (equivalently $\\log x \\le x - 1$): the k3 estimator "
        "of the KL divergence is never negative.",
    lhs=k3(x), rhs=sp.Integer(0), relation=">=",
    minimum_at=MinimumAt(x, 1),
    rule="mean value theorem about $x = 1$",
    why="At $x = 1$ it is 0 (k3_vanishes_at_ratio_one); its slope $(x - 1)/x$ "
        "(k3_slope_in_ratio_is_one_minus_reciprocal) has the sign of $x - 1$, so it falls on $(0, 1]$ and rises "
        "on $[1, \\infty)$.",
    by=DIFFERENTIATION,
)

k3_gradient_is_one_minus_ratio_times_score = Result(
    name="k3_gradient_is_one_minus_ratio_times_score",
    doc="$\\nabla_\\theta k_3 = (1 - \\pi_{ref}/\\pi_\\theta) \\nabla_\\theta \\log \\pi_\\theta$.",
    lhs=sp.Derivative(k3(pi_ref / pi(theta)), theta),
    rhs=(1 - pi_ref / pi(theta)) * sp.Derivative(sp.log(pi(theta)), theta),
    assumptions=(Assumption("$\\pi_{ref} > 0$ does not depend on $\\theta$"),),
    rule="differentiation, chain rule",
    by=DIFFERENTIATION,
)

k3_gradient_vanishes_at_reference_policy = Result(
    name="k3_gradient_vanishes_at_reference_policy",
    doc="When $\\theta_{ref} = \\theta_{old}$ (first iteration), the k3 term has zero gradient at "
        "$\\theta = \\theta_{old}$.",
    lhs=at_old(k3(pi(theta_old) / pi(theta))),
    rhs=sp.Integer(0),
    assumptions=(Assumption("$\\pi_{ref} = \\pi_{\\theta_{old}}$"),),
    steps=(
        Step(sp.Subs((1 - pi(theta_old) / pi(theta)) * sp.Derivative(sp.log(pi(theta)), theta), theta, theta_old),
             "k3_gradient_is_one_minus_ratio_times_score", "At $\\pi_{ref} = \\pi_{\\theta_{old}}$ (a positive value).",
             using=(k3_gradient_is_one_minus_ratio_times_score.at({pi_ref: pi(theta_old)}),)),
        Step(sp.Integer(0), "evaluation", "$1 - \\pi_{\\theta_{old}}/\\pi_{\\theta_{old}} = 0$."),
    ),
)

# -- the three aggregations ---------------------------------------------------------------------------
_ratio = pi(i, t, theta) / pi(i, t, theta_old)
_token_score = at_old(sp.log(pi(i, t, theta)))
ON_POLICY = Assumption("first gradient step: $\\theta = \\theta_{old}$; $\\pi(i, t, \\theta) = "
                       "\\pi_\\theta(o_{i,t} | q, o_{i,<t}) > 0$, $T(i) = |o_i|$")
DETACHED = Assumption("the advantages are computed from the sampled rewards and carry no gradient")
FIRST_ITERATION = Assumption("$\\pi_{ref} = \\pi_{\\theta_{old}}$ (first iteration; otherwise take $\\beta = 0$)")


def _grpo_token(a: sp.Expr) -> sp.Expr:
    return clipped_term(_ratio, a) - beta * k3(pi(i, t, theta_old) / pi(i, t, theta))


_grpo_objective = sp.Sum(sp.Sum(_grpo_token(A[i]), (t, 1, T(i))) / T(i), (i, 1, R)) / R

grpo_first_gradient_is_length_normalised_advantage_weighted_score = Result(
    name="grpo_first_gradient_is_length_normalised_advantage_weighted_score",
    doc="GRPO (sequence-mean then group-mean aggregation): at $\\theta = \\theta_{old}$ the gradient of the "
        "clipped, KL-regularised surrogate is $\\frac{1}{R} \\sum_i \\frac{A_i}{|o_i|} \\sum_t "
        "\\nabla \\log \\pi_\\theta(o_{i,t} | q, o_{i,<t})$ (symbolic $R$ and lengths).",
    lhs=at_old(_grpo_objective),
    rhs=sp.Sum(A[i] / T(i) * sp.Sum(_token_score, (t, 1, T(i))), (i, 1, R)) / R,
    assumptions=(CLIP, ON_POLICY, DETACHED, FIRST_ITERATION),
    steps=(
        Step(at_old(sp.Sum(sp.Sum(_ratio * A[i] - beta * k3(pi(i, t, theta_old) / pi(i, t, theta)),
                                  (t, 1, T(i))) / T(i), (i, 1, R)) / R),
             "clipped_term_gradient_at_old_policy_is_advantage_times_score",
             "Each ratio is 1 at $\\theta_{old}$, strictly inside the clip interval, where the clipped term has "
             "the gradient of $\\rho A$ (the kink rule, in every term of the sums).", by=KINK),
        Step(at_old(sp.Sum(sp.Sum(_ratio * A[i], (t, 1, T(i))) / T(i), (i, 1, R)) / R),
             "k3_gradient_vanishes_at_reference_policy",
             "The KL term has zero gradient at $\\theta_{old}$: termwise, its gradient "
             "$(1 - \\pi_{\\theta_{old}}/\\pi_\\theta) \\nabla \\log \\pi_\\theta$ vanishes there (both sides "
             "differentiated termwise, the constants taken out of the sums).", by=(*DIFFERENTIATION, rules.sum_linearity)),
        Step(sp.Sum(A[i] / T(i) * sp.Sum(_token_score, (t, 1, T(i))), (i, 1, R)) / R,
             "ratio_gradient_at_old_policy_is_score", "Differentiate termwise; each ratio gives its score.",
             by=(*DIFFERENTIATION, rules.sum_linearity)),
    ),
)

_dr_advantage = advantage(i, None)  # r_i - rbar, no std
# The per-rollout constant sits inside the outer sum: SymPy would otherwise flatten the nested sums into one
# Sum with a limit T(i) that depends on the outer index.
_dr_grpo_objective = sp.Sum(sp.Sum(_grpo_token(_dr_advantage), (t, 1, T(i))) / (R * L), (i, 1, R))

dr_grpo_first_gradient_is_unnormalised_advantage_weighted_score = Result(
    name="dr_grpo_first_gradient_is_unnormalised_advantage_weighted_score",
    doc="Dr. GRPO (advantage $r_i - \\bar r$ without std; token sum divided by the constant $R L$): at "
        "$\\theta = \\theta_{old}$ the gradient is $\\frac{1}{R L} \\sum_i (r_i - \\bar r) \\sum_t "
        "\\nabla \\log \\pi_\\theta(o_{i,t} | q, o_{i,<t})$ (symbolic $R$ and lengths).",
    lhs=at_old(_dr_grpo_objective),
    rhs=sp.Sum(sp.Sum(_dr_advantage * _token_score, (t, 1, T(i))) / (R * L), (i, 1, R)),
    assumptions=(CLIP, ON_POLICY, DETACHED, FIRST_ITERATION,
                 Assumption("$L > 0$ is a constant, e.g. the maximum completion length")),
    steps=(
        Step(at_old(sp.Sum(sp.Sum(_ratio * _dr_advantage - beta * k3(pi(i, t, theta_old) / pi(i, t, theta)),
                                  (t, 1, T(i))) / (R * L), (i, 1, R))),
             "clipped_term_gradient_at_old_policy_is_advantage_times_score",
             "As for GRPO: the clipped term is differentiated as the ratio term at $\\theta_{old}$.", by=KINK),
        Step(at_old(sp.Sum(sp.Sum(_ratio * _dr_advantage, (t, 1, T(i))) / (R * L), (i, 1, R))),
             "k3_gradient_vanishes_at_reference_policy", "As for GRPO: the KL term has zero gradient at "
             "$\\theta_{old}$; the advantage does not depend on $\\theta$.",
             by=(*DIFFERENTIATION, rules.sum_linearity)),
        Step(sp.Sum(sp.Sum(_dr_advantage * _token_score, (t, 1, T(i))) / (R * L), (i, 1, R)),
             "ratio_gradient_at_old_policy_is_score", "Differentiate termwise; each ratio gives its score.",
             by=(*DIFFERENTIATION, rules.sum_linearity)),
    ),
)

_total_tokens = sp.Sum(T(j), (j, 1, R))
_dapo_objective = sp.Sum(sp.Sum(clipped_term(_ratio, A[i], 1 - veps_low, 1 + veps_high), (t, 1, T(i)))
                         / _total_tokens, (i, 1, R))

dapo_first_gradient_is_token_mean_advantage_weighted_score = Result(
    name="dapo_first_gradient_is_token_mean_advantage_weighted_score",
    doc="DAPO (token sum over the whole group divided by $\\sum_j |o_j|$, clip range "
        "$(1 - \\varepsilon_{low}, 1 + \\varepsilon_{high})$, no KL): at $\\theta = \\theta_{old}$ the gradient is "
        "$\\frac{1}{\\sum_j |o_j|} \\sum_i A_i \\sum_t \\nabla \\log \\pi_\\theta(o_{i,t} | q, o_{i,<t})$ "
        "(symbolic $R$ and lengths).",
    lhs=at_old(_dapo_objective),
    rhs=sp.Sum(A[i] * sp.Sum(_token_score, (t, 1, T(i))), (i, 1, R)) / _total_tokens,
    assumptions=(Assumption("$\\varepsilon_{low} > 0$ and $\\varepsilon_{high} > 0$"), ON_POLICY, DETACHED),
    steps=(
        Step(at_old(sp.Sum(sp.Sum(_ratio * A[i], (t, 1, T(i))) / _total_tokens, (i, 1, R))),
             "clipped_term_gradient_at_old_policy_is_advantage_times_score",
             "The argument is the same with an asymmetric clip interval containing 1 in its interior; the "
             "total token count is a sum of positive lengths, so it is positive.",
             by=(*KINK, rules.sum_of_signed_terms)),
        Step(sp.Sum(A[i] * sp.Sum(_token_score, (t, 1, T(i))), (i, 1, R)) / _total_tokens,
             "ratio_gradient_at_old_policy_is_score", "Differentiate termwise; the constants leave the sums.",
             by=(*DIFFERENTIATION, rules.sum_linearity, rules.sum_of_signed_terms)),
    ),
)

aggregations_differ_only_in_token_weights = Remark(
    name="aggregations_differ_only_in_token_weights",
    text="At $\\theta = \\theta_{old}$ the three aggregations give the same direction per token up to its weight: "
         "token $t$ of rollout $i$ gets weight $A_i/(R |o_i|)$ in GRPO, $(r_i - \\bar r)/(R L)$ in Dr. GRPO and "
         "$A_i/\\sum_j |o_j|$ in DAPO. Only GRPO's weight depends on the rollout's own length, which is the "
         "length bias Dr. GRPO removes. The clip and the KL term only matter after the first step, when "
         "$\\theta \\ne \\theta_{old}$.",
)
