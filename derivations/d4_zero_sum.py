"""D4 Zero-sum: group-relative advantages sum to zero and have fixed energy.

For every reward vector the advantages of a group sum to zero, whatever the scale (sample std,
population std, none) and whatever the stabiliser eps, because the scale is common to the group.
With a positive std and eps = 0 their squares sum to R - 1 (sample std) or R (population std).
For binary rewards with k successes the advantages take two values in closed form, balanced as
k a_plus + (R - k) a_minus = 0; a group with k in {0, R} has all advantages zero.
"""

import sympy as sp

from .notation import R, centred_sum_of_squares, eps, group_mean, i, j, r
from grpo_verify.proof import Assumption, Result, Step

c = sp.Symbol("c", positive=True)  # the group's common scale s + eps (or 1 for Dr. GRPO)
S2 = sp.Symbol("S_2", positive=True)  # sum_j (r_j - rbar)^2, positive when the rewards are not all equal
n_plus = sp.Symbol("k", positive=True, integer=True)  # successes, 0 < k < R
n_minus = sp.Symbol("m", positive=True, integer=True)  # failures m = R - k > 0

GROUP = Assumption("R >= 2 rollouts per group", R >= 2)
MIXED = Assumption("the group has k successes and m = R - k failures, k >= 1 and m >= 1")

centred_advantages_sum_to_zero = Result(
    name="centred_advantages_sum_to_zero",
    doc="The centred rewards r_i - rbar of any group sum to zero.",
    lhs=sp.Sum(r[i] - group_mean(), (i, 1, R)),
    rhs=sp.Integer(0),
    assumptions=(GROUP,),
    steps=(
        Step(sp.Sum(r[i], (i, 1, R)) - R * group_mean(), "linearity of the sum",
             "The mean is constant in i, so summing it R times gives R times the mean."),
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
             "The scale does not depend on i."),
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
    assumptions=(GROUP, Assumption("the rewards are not all equal, so S_2 = sum_j (r_j - rbar)^2 > 0")),
    steps=(
        Step(sp.Sum((r[i] - group_mean()) ** 2, (i, 1, R)) * (R - 1) / centred_sum_of_squares(),
             "linearity of the sum", "s^2 = S_2/(R - 1) is common to the group."),
        Step(S2 * (R - 1) / S2, "definition of S_2", using=((centred_sum_of_squares(), S2),)),
        Step(R - 1, "cancellation", "S_2 > 0."),
    ),
)

squared_population_std_advantages_sum_to_R = Result(
    name="squared_population_std_advantages_sum_to_R",
    doc="With the population std sigma > 0 and eps = 0 the squared advantages sum to R.",
    lhs=sp.Sum(((r[i] - group_mean()) / sp.sqrt(centred_sum_of_squares() / R)) ** 2, (i, 1, R)),
    rhs=R,
    assumptions=(GROUP, Assumption("the rewards are not all equal, so S_2 > 0")),
    steps=(
        Step(sp.Sum((r[i] - group_mean()) ** 2, (i, 1, R)) * R / centred_sum_of_squares(),
             "linearity of the sum", "sigma^2 = S_2/R is common to the group."),
        Step(S2 * R / S2, "definition of S_2", using=((centred_sum_of_squares(), S2),)),
        Step(R, "cancellation", "S_2 > 0."),
    ),
)
