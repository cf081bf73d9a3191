"""D4 Zero-sum: group-relative advantages sum to zero and have fixed energy.

For every reward vector the advantages of a group sum to zero, whatever the scale (sample std,
population std, none) and whatever the stabiliser eps, because the scale is common to the group.
With a positive std and eps = 0 their squares sum to R - 1 (sample std) or R (population std).
For binary rewards with k successes the advantages take two values in closed form, balanced as
k a_plus + (R - k) a_minus = 0; a group with k in {0, R} has all advantages zero.
"""

import sympy as sp

from .notation import R, centred_sum_of_squares, group_mean, i, j, r
from grpo_verify.proof import Assumption, Remark, Result, Step, rules

c = sp.Symbol("c", positive=True)  # the group's common scale s + eps (or 1 for Dr. GRPO)
S2 = sp.Symbol("S_2", positive=True)  # sum_j (r_j - rbar)^2, positive when the rewards are not all equal
n_plus = sp.Symbol("k", positive=True, integer=True)  # successes, 0 < k < R
n_minus = sp.Symbol("m", positive=True, integer=True)  # failures m = R - k > 0

GROUP = Assumption("R >= 2 rollouts per group", R >= 2)
GROUP_SETTING = GROUP.as_context()  # where the identity holds for every R >= 1
S2_DEFINED = Assumption("the rewards are not all equal; write $S_2 = \\sum_j (r_j - \\bar r)^2 > 0$",
                        equation=(centred_sum_of_squares(), S2))
MIXED = Assumption("the group has k successes and m = R - k failures, k >= 1 and m >= 1")

centred_advantages_sum_to_zero = Result(
    name="centred_advantages_sum_to_zero",
    doc="The centred rewards r_i - rbar of any group sum to zero.",
    lhs=sp.Sum(r[i] - group_mean(), (i, 1, R)),
    rhs=sp.Integer(0),
    assumptions=(GROUP_SETTING,),
    steps=(
        Step(sp.Sum(r[i], (i, 1, R)) - R * group_mean(), "linearity of the sum",
             "The mean is constant in i, so summing it R times gives R times the mean.",
             by=(rules.sum_linearity, rules.sum_of_a_constant)),
        Step(sp.Sum(r[i], (i, 1, R)) - sp.Sum(r[j], (j, 1, R)), "definition of the group mean",
             "R times (1/R) sum_j r_j is sum_j r_j."),
        Step(sp.Integer(0), "renaming the summation index", "Both sums run over the same rewards."),
    ),
)

advantages_sum_to_zero = Result(
    name="advantages_sum_to_zero",
    doc="Scaled advantages sum to zero for every reward vector, every common scale c = s + eps > 0.",
    lhs=sp.Sum((r[i] - group_mean()) / c, (i, 1, R)),
    rhs=sp.Integer(0),
    assumptions=(GROUP, Assumption("the scale c = s + eps is the same for every rollout of the group and c > 0")),
    steps=(
        Step(sp.Sum(r[i] - group_mean(), (i, 1, R)) / c, "linearity of the sum",
             "The scale does not depend on i.", by=(rules.sum_linearity,)),
        Step(sp.Integer(0) / c, "centred_advantages_sum_to_zero", "The centred rewards sum to zero.",
             using=(centred_advantages_sum_to_zero,)),
        Step(sp.Integer(0), "arithmetic"),
    ),
)

squared_sample_std_advantages_sum_to_R_minus_1 = Result(
    name="squared_sample_std_advantages_sum_to_R_minus_1",
    doc="With the sample (Bessel) std s > 0 and eps = 0 the squared advantages sum to R - 1.",
    lhs=sp.Sum(((r[i] - group_mean()) / sp.sqrt(centred_sum_of_squares() / (R - 1))) ** 2, (i, 1, R)),
    rhs=R - 1,
    assumptions=(GROUP_SETTING, S2_DEFINED),
    steps=(
        Step(sp.Sum((r[i] - group_mean()) ** 2, (i, 1, R)) * (R - 1) / centred_sum_of_squares(),
             "linearity of the sum", "s^2 = S_2/(R - 1) is common to the group.", by=(rules.sum_linearity,)),
        Step(S2 * (R - 1) / S2, "definition of S_2", using=(S2_DEFINED,)),
        Step(R - 1, "cancellation", "S_2 > 0."),
    ),
)

squared_population_std_advantages_sum_to_R = Result(
    name="squared_population_std_advantages_sum_to_R",
    doc="With the population std sigma > 0 and eps = 0 the squared advantages sum to R.",
    lhs=sp.Sum(((r[i] - group_mean()) / sp.sqrt(centred_sum_of_squares() / R)) ** 2, (i, 1, R)),
    rhs=R,
    assumptions=(GROUP_SETTING, S2_DEFINED),
    steps=(
        Step(sp.Sum((r[i] - group_mean()) ** 2, (i, 1, R)) * R / centred_sum_of_squares(),
             "linearity of the sum", "sigma^2 = S_2/R is common to the group.", by=(rules.sum_linearity,)),
        Step(S2 * R / S2, "definition of S_2", using=(S2_DEFINED,)),
        Step(R, "cancellation", "S_2 > 0."),
    ),
)


# -- binary rewards ---------------------------------------------------------------------------
# Order the group so that the k successes come first: r_i = 1 for i <= k, r_i = 0 for i > k.
k = n_plus
m = n_minus
BINARY = Assumption("binary rewards, $k$ successes among $R$ rollouts, $0 < k < R$; write $m = R - k$", k < R,
                    positive=k + m - 1)
R_IS_K_PLUS_M = Assumption("$R = k + m$", equation=(R, k + m))
BINARY_SETTING = BINARY.as_context()  # where R = k + m with k, m >= 1 already gives 0 < k < R


def binary_centred_rewards(successes: sp.Basic = k, size: sp.Basic = R) -> tuple[sp.Expr, sp.Expr]:
    """The centred rewards of a success (1 - k/R) and of a failure (-k/R)."""
    successes, size = sp.sympify(successes), sp.sympify(size)  # exact even for Python ints
    return 1 - successes / size, -successes / size


def binary_advantages(scale: str, successes: sp.Basic = k, size: sp.Basic = R,
                      stabiliser: sp.Basic = 0) -> tuple[sp.Expr, sp.Expr]:
    """(a_plus, a_minus) for ``scale`` in {"sample", "population", "none"} by their definition."""
    successes, size, stabiliser = sp.sympify(successes), sp.sympify(size), sp.sympify(stabiliser)
    plus, minus = binary_centred_rewards(successes, size)
    sum_of_squares = successes * (size - successes) / size
    denominator = {"sample": sp.sqrt(sum_of_squares / (size - 1)) + stabiliser,
                   "population": sp.sqrt(sum_of_squares / size) + stabiliser,
                   "none": sp.Integer(1)}[scale]
    return plus / denominator, minus / denominator


binary_group_mean_is_success_fraction = Result(
    name="binary_group_mean_is_success_fraction",
    doc="A group with $k$ successes has mean reward $k/R$.",
    lhs=(sp.Sum(1, (i, 1, k)) + sp.Sum(0, (i, k + 1, R))) / R,
    rhs=k / R,
    assumptions=(GROUP_SETTING, BINARY),
    rule="sum of the rewards, split at k", why="The first k rewards are 1, the remaining R - k are 0.",
    by=(rules.sum_of_a_constant,),
)

binary_sum_of_squares_is_k_times_failures_over_R = Result(
    name="binary_sum_of_squares_is_k_times_failures_over_R",
    doc="A group with $k$ successes has $S_2 = \\sum_j (r_j - \\bar r)^2 = k (R - k)/R$.",
    lhs=sp.Sum(binary_centred_rewards()[0] ** 2, (i, 1, k)) + sp.Sum(binary_centred_rewards()[1] ** 2, (i, k + 1, R)),
    rhs=k * (R - k) / R,
    assumptions=(GROUP_SETTING, BINARY),
    rule="sum split at k", why="Successes contribute $(1 - k/R)^2$ each, failures $(k/R)^2$ each.",
    by=(rules.sum_of_a_constant,),
)

binary_sample_std_advantages_closed_form = Result(
    name="binary_sample_std_advantages_closed_form",
    doc="With the sample std and $\\epsilon = 0$: $a_+ = \\sqrt{(R-1)(R-k)/(Rk)}$ and "
        "$a_- = -\\sqrt{(R-1)k/(R(R-k))}$, written as the pair $(a_+, a_-)$.",
    lhs=sp.ImmutableMatrix([binary_advantages("sample")]),
    rhs=sp.ImmutableMatrix([[sp.sqrt((R - 1) * (R - k) / (R * k)), -sp.sqrt((R - 1) * k / (R * (R - k)))]]),
    assumptions=(GROUP_SETTING, BINARY_SETTING, R_IS_K_PLUS_M),
    rule="definition with $s^2 = S_2/(R-1)$", why="Divide the centred rewards by $s = \\sqrt{k(R-k)/(R(R-1))}$.",
    using=(R_IS_K_PLUS_M,),
)

binary_population_std_advantages_closed_form = Result(
    name="binary_population_std_advantages_closed_form",
    doc="With the population std and $\\epsilon = 0$: $a_+ = \\sqrt{(R-k)/k}$ and $a_- = -\\sqrt{k/(R-k)}$.",
    lhs=sp.ImmutableMatrix([binary_advantages("population")]),
    rhs=sp.ImmutableMatrix([[sp.sqrt((R - k) / k), -sp.sqrt(k / (R - k))]]),
    assumptions=(GROUP_SETTING, BINARY_SETTING, R_IS_K_PLUS_M),
    rule="definition with $\\sigma^2 = S_2/R$", why="Divide the centred rewards by $\\sigma = \\sqrt{k(R-k)}/R$.",
    using=(R_IS_K_PLUS_M,),
)

binary_advantages_balance = Result(
    name="binary_advantages_balance",
    doc="For every scale convention and every $\\epsilon \\ge 0$: $k a_+ + (R - k) a_- = 0$.",
    lhs=k * binary_centred_rewards()[0] / c + (R - k) * binary_centred_rewards()[1] / c,
    rhs=sp.Integer(0),
    assumptions=(GROUP_SETTING, BINARY_SETTING, Assumption("the group's common scale $c = s + \\epsilon$ (or 1) is positive")),
    steps=(
        Step((k * (1 - k / R) - (R - k) * k / R) / c, "common denominator", "The scale is shared by the group."),
        Step(sp.Integer(0) / c, "arithmetic", "$k - k^2/R - k + k^2/R = 0$."),
        Step(sp.Integer(0), "arithmetic"),
    ),
)

v = sp.Symbol("v", real=True)  # the common reward of a degenerate group
degenerate_group_has_zero_centred_rewards = Result(
    name="degenerate_group_has_zero_centred_rewards",
    doc="If all rewards equal $v$ (binary: $k \\in \\{0, R\\}$) every centred reward is 0, so with "
        "$\\epsilon > 0$ every advantage is exactly 0 and the group contributes no gradient.",
    lhs=v - sp.Sum(v, (j, 1, R)) / R,
    rhs=sp.Integer(0),
    assumptions=(GROUP_SETTING, Assumption("$r_j = v$ for every $j$")),
    rule="the mean of a constant", why="$\\sum_j v = R v$.", by=(rules.sum_of_a_constant,),
)

degenerate_group_convention = Remark(
    "degenerate_group_convention",
    "With $\\epsilon = 0$ a degenerate group gives $0/0$. TRL adds $\\epsilon = 10^{-4}$ and so returns exact "
    "zeros; grpo_verify's estimators define the advantage of a zero-variance group as 0 for every $\\epsilon$.",
)
