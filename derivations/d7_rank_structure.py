"""D7 Rank structure: what is rank 2 in a GRPO group, and what is not.

Proved symbolically, for every group size $R$ and every common advantage scale $c > 0$ (sample std,
population std or none, any $\\epsilon$): for binary rewards with $k$ successes, $0 < k < R$, the group
gradient $\\sum_i A_i g_i$ equals $k a_+ (\\bar g_C - \\bar g_W)$, so it depends on the $R$ score vectors
only through the two class means (citing the D4 balance $k a_+ + (R - k) a_- = 0$); for any rewards a
component $c_0$ common to all score vectors cancels from the group gradient, because the advantages
sum to zero. In general $\\operatorname{diag}(A) G$ keeps the rows of $G$ with $A_i \\ne 0$ (scaled) and zeroes
the others, so its rank is the rank of those rows; for binary rewards both advantage values are
nonzero, so $\\operatorname{diag}(A)$ is invertible and
$\\operatorname{rank}(\\operatorname{diag}(A) G) = \\operatorname{rank}(G)$. The centring matrix
$I - \\mathbf{1}\\mathbf{1}^T/R$ is idempotent with trace $R - 1$, hence of rank exactly $R - 1$ (the kernel's
rule: the rank of an idempotent matrix is its trace), all for symbolic $R$.
Exact ranks of matrices without symbols, and upper bounds only for matrices with symbolic entries
(the number of rows or columns, and the rank over the field of rational functions in the entries,
which bounds the rank at every value of the symbols; see ``MatrixRank``) show: the group
gradient has rank at most 1; $\\operatorname{diag}(A) G$ has rank 4 in an $R = 4$ instance and the
centred $G$ has rank $3 = R - 1$ there, not 2; a linear layer's weight gradient reaches rank 5 with
$R = 2$ rollouts. Under the explicit extra assumption of two-cluster score vectors ($g_i = \\bar g_C$
for every correct and $\\bar g_W$ for every wrong rollout) $G = Z B$ with the $R \\times 2$ class
indicator $Z$, so $\\operatorname{rank}(G) \\le 2$, $\\operatorname{rank}(\\operatorname{diag}(A) G) \\le 2$,
and the centred $G$ has rank at most 1 (each centred row is a multiple of $\\bar g_C - \\bar g_W$, proved
symbolically in $k$ and $R$; the factorisations are checked exactly for $R = 4$ and $R = 8$). The
Roy-Vetterli effective rank of a rank-2 matrix lies in $[1, 2]$: $0 \\le H \\le \\log 2$ is proved (the upper
end from $\\log t \\le t - 1$ of D2 at $t = 1/(2x)$ and $t = 1/(2(1 - x))$; the slope of $H$,
$\\log(1 - x) - \\log x$, is bounded by $(1 - 2x)/x$ and $(1 - 2x)/(1 - x)$, from the same inequality); it equals
2 only for equal singular values, and a concrete two-cluster instance with
distinct class directions has unequal singular values. $R = 2$ is trivially rank $\\le 2$.

Against the paper: its "intrinsic rank-2 structure from the zero-sum constraint" is stronger than
what zero-sum gives (rank $\\le R - 1$ of the centred matrix, attained), and the two-direction
structure that does hold unconditionally for binary rewards is a statement about one vector, the
group gradient. Rank about 2 of per-rollout matrices needs the two-cluster assumption; see the
Remark ``paper_rank_two_claim_scope``.
"""

from __future__ import annotations

import sympy as sp
from . import d2_grpo_surrogate as d2  # modules, not their results: a family lists only the results it defines
from . import d4_zero_sum as d4
from .notation import R, advantage, i, j
from grpo_verify.proof import Assumption, MatrixRank, Remark, Result, SquareMatrix, Step, as_written, rules


# == helpers ======================================================================================
def centring_matrix(size: int) -> sp.ImmutableMatrix:
    """$I - \\mathbf{1}\\mathbf{1}^T / R$ for a concrete $R$."""
    return sp.ImmutableMatrix(sp.eye(size) - sp.ones(size, size) / size)


def diag(*entries: sp.Basic) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix(sp.diag(*entries))


def class_indicator(size: int, successes: int) -> sp.ImmutableMatrix:
    """The $R \\times 2$ matrix $Z$: row $i$ is $(1, 0)$ for a correct and $(0, 1)$ for a wrong rollout."""
    return sp.ImmutableMatrix([[1, 0] if row < successes else [0, 1] for row in range(size)])


def two_cluster_scores(size: int, successes: int, correct: sp.MatrixBase, wrong: sp.MatrixBase) -> sp.ImmutableMatrix:
    """$G$ with rows $\\bar g_C$ (first ``successes`` rows) and $\\bar g_W$ (the rest)."""
    return sp.ImmutableMatrix([list(correct) if row < successes else list(wrong) for row in range(size)])


def binary_advantage_vector(size: int, successes: int, scale: str = "sample") -> list[sp.Expr]:
    """The $R$ advantages of a binary group with the successes first (D4's closed form)."""
    plus, minus = d4.binary_advantages(scale, sp.Integer(successes), sp.Integer(size))
    return [plus if row < successes else minus for row in range(size)]


def layer_weight_gradient(advantages, deltas, inputs) -> sp.ImmutableMatrix:
    """$\\sum_i A_i \\sum_t \\delta_{i,t} x_{i,t}^T$ for explicit per-token vectors."""
    total = sp.zeros(len(deltas[0][0]), len(inputs[0][0]))
    for a, ds, xs in zip(advantages, deltas, inputs):
        for d, x in zip(ds, xs):
            total += a * sp.Matrix(d) * sp.Matrix(x).T
    return sp.ImmutableMatrix(total)


def two_point_entropy(x: sp.Expr) -> sp.Expr:
    """$H(x, 1 - x) = -x \\log x - (1 - x) \\log(1 - x)$."""
    return -x * sp.log(x) - (1 - x) * sp.log(1 - x)


# == symbols ======================================================================================
k = sp.Symbol("k", positive=True, integer=True)  # successes, 0 < k < R (as in D4)
m = sp.Symbol("m", positive=True, integer=True)  # failures R - k
c = sp.Symbol("c", positive=True)  # the group's common scale s + eps (or 1), as in D4
c0 = sp.Symbol("c_0", real=True)  # one coordinate of a component common to all score vectors
h = sp.IndexedBase("h", real=True)  # h[i]: one coordinate of g_i - c_0
gC = sp.Symbol("gbar_C", real=True)  # one coordinate of the mean score of the correct rollouts
gW = sp.Symbol("gbar_W", real=True)  # one coordinate of the mean score of the wrong rollouts
g = sp.IndexedBase("g", real=True)

a_plus = d4.binary_advantages("none", k, R)[0] / c  # (1 - k/R)/c
a_minus = d4.binary_advantages("none", k, R)[1] / c  # -(k/R)/c

GROUP = Assumption("$R \\ge 2$ rollouts per group", R >= 2)
# where R >= 2 follows from the other assumptions (0 < k < R, or R = n + 2) or is not used
GROUP_SETTING = Assumption("$R \\ge 2$ rollouts per group", R >= 2, context=True)
BINARY = Assumption("binary rewards with $k$ successes, $0 < k < R$, the successes listed first "
                    "($r_i = 1$ for $i \\le k$)", k < R)
# the same setting where a result does not need it (a concrete instance, or a statement in k and m only)
BINARY_SETTING = Assumption("binary rewards with $k$ successes, $0 < k < R$, the successes listed first "
                            "($r_i = 1$ for $i \\le k$)", k < R, context=True)
SCALE = Assumption("the advantages share a scale $c > 0$: $A_i = (r_i - \\bar r)/c$; for binary rewards "
                   "$a_+ = (1 - k/R)/c$, $a_- = -(k/R)/c$", context=True)  # c > 0 is the symbol's domain
CORRECT_MEAN = Assumption("write $\\bar g_C$ for the mean score of the correct rollouts: "
                          "$\\sum_{i \\le k} g_i = k \\bar g_C$ (coordinatewise)",
                          equation=(sp.Sum(g[i], (i, 1, k)), k * gC))
WRONG_MEAN = Assumption("write $\\bar g_W$ for the mean score of the wrong rollouts: "
                        "$\\sum_{i > k} g_i = (R - k) \\bar g_W$ (coordinatewise)",
                        equation=(sp.Sum(g[i], (i, k + 1, R)), (R - k) * gW))
CLASS_MEANS = (CORRECT_MEAN, WRONG_MEAN)


def class_means_model(sizes: dict) -> dict:
    """A model of the class-mean equations (a hint for the evaluator, which does not solve equations in sums):
    varied scores $g_i$ and their two class means, at the group size and success count being tried."""
    size = int(sizes.get(R, sizes[k] + 2 if k in sizes else 5))
    successes = int(sizes.get(k, max(1, size // 2)))
    scores = {q: sp.Rational((3 * q * q) % 11 - 4, 1 + q % 3) for q in range(1, size + 1)}
    correct = [scores[q] for q in range(1, successes + 1)]
    wrong = [scores[q] for q in range(successes + 1, size + 1)]
    return {R: size, k: successes, g: scores, gC: sum(correct) / max(len(correct), 1),
            gW: sum(wrong) / max(len(wrong), 1)}


# == the group gradient depends on two vectors ====================================================
binary_group_gradient_is_class_mean_difference = Result(
    name="binary_group_gradient_is_class_mean_difference",
    doc="For binary rewards with $0 < k < R$ and any common scale, $\\sum_i A_i g_i = k a_+ (\\bar g_C - \\bar g_W)$: "
        "the group gradient depends on the $R$ score vectors only through the two class means.",
    lhs=sp.Sum(a_plus * g[i], (i, 1, k)) + sp.Sum(a_minus * g[i], (i, k + 1, R)),
    rhs=k * a_plus * (gC - gW),
    assumptions=(GROUP_SETTING, BINARY, SCALE, *CLASS_MEANS),
    model=class_means_model,
    steps=(
        Step(a_plus * sp.Sum(g[i], (i, 1, k)) + a_minus * sp.Sum(g[i], (i, k + 1, R)), "linearity of the sum",
             "The advantage is constant on each class.", by=(rules.sum_linearity,)),
        Step(k * a_plus * gC + (R - k) * a_minus * gW, "definition of the class means", using=CLASS_MEANS),
        Step(k * a_plus * (gC - gW) + gW * d4.binary_advantages_balance.lhs, "add and subtract $k a_+ \\bar g_W$",
             "Regroup around the balance $k a_+ + (R - k) a_-$."),
        Step(k * a_plus * (gC - gW), "binary_advantages_balance (D4)", "$k a_+ + (R - k) a_- = 0$ (D4).",
             using=(d4.binary_advantages_balance,)),
    ),
)

A_c = advantage(i, c, stabiliser=0)  # (r_i - rbar)/c
common_score_component_cancels_from_group_gradient = Result(
    name="common_score_component_cancels_from_group_gradient",
    doc="For any rewards, if $g_i = c_0 + h_i$ then $\\sum_i A_i g_i = \\sum_i A_i h_i$: a score component "
        "shared by the whole group does not reach the group gradient.",
    lhs=sp.Sum(A_c * (c0 + h[i]), (i, 1, R)),
    rhs=sp.Sum(A_c * h[i], (i, 1, R)),
    assumptions=(GROUP, Assumption("$A_i = (r_i - \\bar r)/c$ with a common scale $c > 0$", context=True)),
    steps=(
        Step(c0 * d4.advantages_sum_to_zero.lhs + sp.Sum(A_c * h[i], (i, 1, R)), "linearity of the sum",
             "$c_0$ does not depend on $i$.", by=(rules.sum_linearity,)),
        Step(c0 * 0 + sp.Sum(A_c * h[i], (i, 1, R)), "advantages_sum_to_zero (D4)", "$\\sum_i A_i = 0$ (D4).",
             using=(d4.advantages_sum_to_zero,)),
        Step(sp.Sum(A_c * h[i], (i, 1, R)), "arithmetic"),
    ),
)

group_gradient_depends_only_on_centred_scores = Result(
    name="group_gradient_depends_only_on_centred_scores",
    doc="For any rewards, $\\sum_i A_i g_i = \\sum_i A_i (g_i - \\bar g)$ with $\\bar g = \\frac{1}{R} \\sum_j g_j$: "
        "$G^T A = (C G)^T A$, $C = I - \\mathbf{1}\\mathbf{1}^T/R$. The GRPO update sees the score vectors only "
        "through the centred scores, whose rank is at most $R - 1$.",
    lhs=sp.Sum(A_c * g[i], (i, 1, R)),
    rhs=sp.Sum(A_c * (g[i] - sp.Sum(g[j], (j, 1, R)) / R), (i, 1, R)),
    assumptions=(GROUP, Assumption("$A_i = (r_i - \\bar r)/c$ with a common scale $c > 0$", context=True)),
    steps=(
        Step(sp.Sum(A_c * g[i], (i, 1, R)) - sp.Sum(g[j], (j, 1, R)) / R * d4.advantages_sum_to_zero.lhs,
             "advantages_sum_to_zero (D4)", "Subtract $\\bar g \\sum_i A_i$, which is $0$ (D4).",
             using=(d4.advantages_sum_to_zero,)),
        Step(sp.Sum(A_c * (g[i] - sp.Sum(g[j], (j, 1, R)) / R), (i, 1, R)), "linearity of the sum",
             "$\\bar g$ does not depend on $i$.", by=(rules.sum_linearity,)),
    ),
)

a_batch_spans_at_most_its_non_degenerate_groups = Remark(
    "a_batch_spans_at_most_its_non_degenerate_groups",
    "A batch of $B$ groups gives the update $\\sum_b G_b^T A_b$: one vector per group (above), and the zero vector "
    "for a degenerate group (all advantages 0, D4). So the per-group updates span at most as many directions as "
    "the batch has non-degenerate groups, whatever $R$; for binary rewards each is $k a_+ (\\bar g_C - \\bar g_W)$ "
    "of its group. Rank statements about more than one direction concern the per-rollout matrices $G$, $C G$ "
    "and $\\operatorname{diag}(A) G$, not the update.",
)

# == which matrices have rank <= 2 ================================================================
P3 = 3
x_syms = sp.ImmutableMatrix(4, P3, lambda row, col: sp.Symbol(f"g_{{{row + 1}{col + 1}}}", real=True))
A_syms = sp.ImmutableMatrix(4, 1, lambda row, col: sp.Symbol(f"A_{row + 1}", real=True))
group_gradient_has_rank_at_most_one = Result(
    name="group_gradient_has_rank_at_most_one",
    doc="The group gradient $G^T A$ is one vector: for $R = 4$, $P = 3$ with symbolic scores and advantages its "
        "rank is at most 1 (as it is for every $R$, $P$: a $P \\times 1$ matrix).",
    lhs=MatrixRank(x_syms.T * A_syms),
    rhs=sp.Integer(1),
    relation="<=",
    rule="a rank is at most the number of columns", by=(rules.rank_is_at_most_a_vanishing_minor_size,),
    why="One column. A symbolic rank is only bounded: by the shape and by the rank over the rational functions "
        "in the entries (here both 1).",
)

binary_advantage_product_is_negative = Result(
    name="binary_advantage_product_is_negative",
    doc="For binary rewards with $0 < k < R$ the two advantage values have $a_+ a_- < 0$, so both are nonzero "
        "and $\\operatorname{diag}(A)$ is invertible: $\\operatorname{rank}(\\operatorname{diag}(A) G) = "
        "\\operatorname{rank}(G)$ for every $R$.",
    lhs=(d4.binary_advantages("none", k, k + m)[0] / c) * (d4.binary_advantages("none", k, k + m)[1] / c),
    rhs=sp.Integer(0),
    relation="<",
    assumptions=(BINARY_SETTING, SCALE, Assumption("$m = R - k \\ge 1$ failures, so $R = k + m$", context=True)),
    steps=(
        Step(-k * m / ((k + m) ** 2 * c ** 2), "arithmetic", "$(1 - k/R)(-k/R) = -k m / R^2$ with $R = k + m$."),
        Step(sp.Integer(0), "sign", "$k, m, c > 0$.", relation="<"),
    ),
)

# A concrete R = 4 group: k = 1 success, sample std, so A = (3/2, -1/2, -1/2, -1/2).
A4 = binary_advantage_vector(4, 1, "sample")
G4 = sp.ImmutableMatrix([[1, 0, 2, -1, 3], [0, 1, 1, 2, -1], [2, 1, 0, 1, 1], [1, -1, 1, 0, 2]])
binary_sample_std_advantages_R4_k1_are_three_halves_and_minus_one_half = Result(
    name="binary_sample_std_advantages_R4_k1_are_three_halves_and_minus_one_half",
    instance="$R = 4$, $k = 1$",
    doc="With $R = 4$, $k = 1$ and the sample std, $a_+ = 3/2$ and $a_- = -1/2$ (D4's closed form).",
    lhs=as_written(lambda: sp.ImmutableMatrix([d4.binary_advantages("sample", sp.Integer(1), sp.Integer(4))])),
    rhs=sp.ImmutableMatrix([[sp.Rational(3, 2), sp.Rational(-1, 2)]]),
    rule="evaluation", why="$s = \\sqrt{(1 \\cdot 3/4)/3} = 1/2$.",
)

advantage_weighted_scores_have_rank_four_for_R4 = Result(
    name="advantage_weighted_scores_have_rank_four_for_R4",
    instance="$R = 4$",
    doc="Not rank 2: for $R = 4$, $k = 1$, $A = (3/2, -1/2, -1/2, -1/2)$ and a $4 \\times 5$ score matrix $G$ of "
        "rank 4, $\\operatorname{rank}(\\operatorname{diag}(A) G) = 4 = \\min(R, P)$.",
    lhs=MatrixRank(diag(*A4) * G4),
    rhs=sp.Integer(4),
    assumptions=(Assumption("$G$ = the explicit rational $4 \\times 5$ matrix shown", context=True),),
    rule="exact rank over $\\mathbb{Q}$", why="A nonzero $4 \\times 4$ minor; no $5 \\times 5$ minor exists.",
    by=(rules.rank_of_an_explicit_matrix,),
)

l = sp.Symbol("l", integer=True, positive=True)
j = sp.Symbol("j", integer=True, positive=True)
INDICES = Assumption("$1 \\le i, j \\le R$", sp.And(i <= R, j <= R))


def centring_entry(row: sp.Basic, col: sp.Basic) -> sp.Expr:
    """Entry (row, col) of the centring matrix $I - \\mathbf{1}\\mathbf{1}^T/R$: $\\delta_{row,col} - 1/R$."""
    return sp.KroneckerDelta(row, col) - 1 / R


# the square of the centring matrix entry by entry: multiply out, sum the Kronecker deltas and the constants
CENTRING_RULES = (rules.sum_linearity, rules.sum_of_a_delta, rules.sum_of_a_constant)
CENTRING = SquareMatrix(R, sp.Lambda((i, j), centring_entry(i, j)))

centring_matrix_is_idempotent = Result(
    name="centring_matrix_is_idempotent",
    doc="$(I - \\mathbf{1}\\mathbf{1}^T/R)^2 = I - \\mathbf{1}\\mathbf{1}^T/R$ for every $R$: entry $(i, j)$ of the "
        "square, $\\sum_l (\\delta_{il} - 1/R)(\\delta_{lj} - 1/R)$, is $\\delta_{ij} - 1/R$ for all $1 \\le i, j \\le R$. "
        "The centring matrix is a projection.",
    lhs=sp.Sum(centring_entry(i, l) * centring_entry(l, j), (l, 1, R)),
    rhs=centring_entry(i, j),
    assumptions=(GROUP_SETTING, INDICES),
    rule="matrix product entrywise, Kronecker deltas summed", by=CENTRING_RULES,
    why="$\\sum_l \\delta_{il} \\delta_{lj} = \\delta_{ij}$ and $\\sum_l \\delta_{il} = 1$ as $i$ lies in $1..R$; the "
        "constant terms give $-2/R + R/R^2$.",
)

centring_matrix_has_trace_R_minus_1 = Result(
    name="centring_matrix_has_trace_R_minus_1",
    doc="$\\operatorname{tr}(I - \\mathbf{1}\\mathbf{1}^T/R) = R - 1$.",
    lhs=sp.Sum(centring_entry(i, i), (i, 1, R)),
    rhs=R - 1,
    assumptions=(GROUP_SETTING,),
    rule="sum of the diagonal", why="$R$ diagonal entries $1 - 1/R$.", by=(rules.sum_of_a_constant,),
)

centring_matrix_has_rank_R_minus_1 = Result(
    name="centring_matrix_has_rank_R_minus_1",
    doc="$\\operatorname{rank}(I - \\mathbf{1}\\mathbf{1}^T/R) = R - 1$ for every $R$: zero-sum centring removes one "
        "direction, not $R - 2$.",
    lhs=MatrixRank(CENTRING),
    rhs=R - 1,
    assumptions=(GROUP_SETTING,),
    rule="the rank of an idempotent matrix is its trace",
    by=(rules.rank_of_an_idempotent_is_its_trace, *CENTRING_RULES),
    why="The kernel checks that the matrix is idempotent (every entry of its square, as in the first result above) "
        "and takes its trace (as in the second).",
)

centred_scores_have_rank_three_for_R4 = Result(
    name="centred_scores_have_rank_three_for_R4",
    instance="$R = 4$",
    doc="The bound $\\operatorname{rank}((I - \\mathbf{1}\\mathbf{1}^T/R) G) \\le R - 1$ is attained: for the $R = 4$ "
        "instance above the centred score matrix has rank 3, not 2.",
    lhs=MatrixRank(centring_matrix(4) * G4),
    rhs=sp.Integer(3),
    assumptions=(Assumption("$G$ = the explicit rational $4 \\times 5$ matrix above", context=True),),
    rule="exact rank over $\\mathbb{Q}$", by=(rules.rank_of_an_explicit_matrix,),
)

# rank(C G) = rank(G) - dim(col(G) cap span 1): two R = 4 instances of rank 3, with and without 1 in col(G)
G_WITH_ONES = sp.ImmutableMatrix([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])  # first column is 1
G_WITHOUT_ONES = sp.ImmutableMatrix([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])  # 1 is not a column combination
INSTANCE = Assumption("$G$ = the explicit $4 \\times 3$ matrix of rank 3 named in the result", context=True)

score_matrices_of_the_centring_instances_have_rank_three = Result(
    name="score_matrices_of_the_centring_instances_have_rank_three",
    instance="$R = 4$, two $4 \\times 3$ matrices",
    doc="Both $4 \\times 3$ instances below have rank 3: $G_1$ with first column $\\mathbf{1}$ and $G_2 = "
        "(e_1, e_2, e_3)$, whose column space does not contain $\\mathbf{1}$ (entries: $G_1$, $G_2$).",
    lhs=sp.ImmutableMatrix([[MatrixRank(G_WITH_ONES), MatrixRank(G_WITHOUT_ONES)]]),
    rhs=sp.ImmutableMatrix([[3, 3]]),
    assumptions=(INSTANCE,),
    rule="exact rank over $\\mathbb{Q}$", by=(rules.rank_of_an_explicit_matrix,),
)

centring_removes_a_dimension_only_when_ones_is_in_the_column_space = Result(
    name="centring_removes_a_dimension_only_when_ones_is_in_the_column_space",
    instance="$R = 4$, two $4 \\times 3$ matrices",
    doc="$\\operatorname{rank}(C G) = \\operatorname{rank}(G) - \\dim(\\operatorname{col}(G) \\cap "
        "\\operatorname{span} \\mathbf{1})$ on both instances: centring $G_1$ (which contains $\\mathbf{1}$) gives "
        "rank 2, centring $G_2$ keeps rank 3 (entries: $C G_1$, $C G_2$; $C = I - \\mathbf{1}\\mathbf{1}^T/4$).",
    lhs=sp.ImmutableMatrix([[MatrixRank(centring_matrix(4) * G_WITH_ONES),
                             MatrixRank(centring_matrix(4) * G_WITHOUT_ONES)]]),
    rhs=sp.ImmutableMatrix([[2, 3]]),
    assumptions=(INSTANCE,),
    rule="exact rank over $\\mathbb{Q}$", by=(rules.rank_of_an_explicit_matrix,),
)

centred_rank_is_rank_minus_intersection_with_ones = Remark(
    "centred_rank_is_rank_minus_intersection_with_ones",
    "For every $R$ and $P$: $C$ maps $\\operatorname{col}(G)$ onto $\\operatorname{col}(C G)$ and its kernel is "
    "$\\operatorname{span} \\mathbf{1}$, so by rank-nullity on $\\operatorname{col}(G)$, "
    "$\\operatorname{rank}(C G) = \\operatorname{rank}(G) - \\dim(\\operatorname{col}(G) \\cap \\operatorname{span} "
    "\\mathbf{1})$: centring removes one dimension exactly when some combination of the parameters' score "
    "coordinates is the same for every rollout, else none. The kernel has no rule for ranks of symbolic "
    "$R \\times P$ products, so this is a remark; the two instances above are checked exactly.",
)

# A linear layer: R = 2 rollouts (k = 1, population std: A = (1, -1)), 3 tokens each, d_out = d_in = 5.
LAYER_A = [sp.Integer(1), sp.Integer(-1)]
LAYER_DELTAS = [
    [[1, 0, 0, 0, 0], [0, 1, 0, 0, 1], [0, 0, 1, 0, 0]],
    [[0, 0, 0, 1, 0], [1, 0, 0, 0, 1], [0, 1, 1, 0, 0]],
]
LAYER_INPUTS = [
    [[1, 0, 0, 1, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 1]],
    [[0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [1, 1, 0, 0, 0]],
]
binary_population_std_advantages_R2_are_plus_minus_one = Result(
    name="binary_population_std_advantages_R2_are_plus_minus_one",
    instance="$R = 2$",
    doc="With $R = 2$, $k = 1$ and the population std the advantages are $(1, -1)$.",
    lhs=as_written(lambda: sp.ImmutableMatrix([d4.binary_advantages("population", sp.Integer(1), sp.Integer(2))])),
    rhs=sp.ImmutableMatrix([LAYER_A]),
    rule="evaluation", why="$\\sigma = 1/2$.",
)

layer_weight_gradient_has_rank_five_with_two_rollouts = Result(
    name="layer_weight_gradient_has_rank_five_with_two_rollouts",
    instance="$R = 2$",
    doc="A linear layer's weight gradient $\\sum_i A_i \\sum_t \\delta_{i,t} x_{i,t}^T$ sums one outer product per "
        "token, so its rank can reach $\\min(d_{out}, d_{in}, \\text{total tokens})$: with $R = 2$, $A = (1, -1)$, "
        "3 tokens each and $d_{out} = d_{in} = 5$ it has rank 5.",
    lhs=MatrixRank(layer_weight_gradient(LAYER_A, LAYER_DELTAS, LAYER_INPUTS)),
    rhs=sp.Integer(5),
    assumptions=(Assumption("the explicit per-token back-propagated errors $\\delta_{i,t}$ and inputs $x_{i,t}$ "
                            "listed in the module", context=True),),
    rule="exact rank over $\\mathbb{Q}$", by=(rules.rank_of_an_explicit_matrix,),
)

# == two-cluster scores: rank <= 2 for any R ======================================================
gC_vec = sp.ImmutableMatrix([sp.Symbol(f"gbar_C{col}", real=True) for col in range(1, 4)])
gW_vec = sp.ImmutableMatrix([sp.Symbol(f"gbar_W{col}", real=True) for col in range(1, 4)])
B = sp.ImmutableMatrix([list(gC_vec), list(gW_vec)])  # 2 x 3: the class means as rows
TWO_CLUSTER = Assumption("two-cluster scores: $g_i = \\bar g_C$ for every correct and $g_i = \\bar g_W$ for "
                         "every wrong rollout (symbolic vectors in $\\mathbb{R}^3$)", context=True)
a_plus_sym = sp.Symbol("a_+", real=True)  # any advantage values: the rank bounds need no sign
a_minus_sym = sp.Symbol("a_-", real=True)


def _two_cluster_results(size: int, successes: int) -> tuple[Result, ...]:
    G = two_cluster_scores(size, successes, gC_vec, gW_vec)
    Z = class_indicator(size, successes)
    ap, am = a_plus_sym, a_minus_sym
    A = [ap] * successes + [am] * (size - successes)
    tag = f"R{size}"
    factorised = Result(
        name=f"two_cluster_scores_factor_through_class_indicator_{tag}",
        instance=f"$R = {size}$, $k = {successes}$",
        doc=f"With $R = {size}$, $k = {successes}$: $G = Z B$ and $\\operatorname{{diag}}(A) G = Z \\operatorname{{diag}}"
            f"(a_+, a_-) B$ with $Z$ the $R \\times 2$ class indicator and $B$ the class means as rows.",
        lhs=sp.ImmutableMatrix(sp.Matrix.vstack(sp.Matrix(G), diag(*A) * G)),
        rhs=as_written(lambda: sp.ImmutableMatrix(sp.Matrix.vstack(Z * B, Z * diag(ap, am) * B))),
        assumptions=(TWO_CLUSTER, BINARY_SETTING),
        rule="matrix product", why="Row $i$ of $Z$ selects the class mean of rollout $i$.",
    )
    indicator_rank = Result(
        name=f"class_indicator_has_rank_two_{tag}",
        instance=f"$R = {size}$, $k = {successes}$",
        doc=f"With $R = {size}$, $k = {successes}$ the class indicator $Z$ has rank 2, so $G = Z B$ and "
            f"$\\operatorname{{diag}}(A) G$ have rank at most 2.",
        lhs=MatrixRank(Z), rhs=sp.Integer(2),
        assumptions=(BINARY_SETTING,), rule="exact rank over $\\mathbb{Q}$", by=(rules.rank_of_an_explicit_matrix,),
    )
    scores_rank = Result(
        name=f"two_cluster_advantage_weighted_scores_have_rank_at_most_two_{tag}",
        instance=f"$R = {size}$, $k = {successes}$",
        doc=f"With $R = {size}$, $k = {successes}$ and two-cluster scores, "
            f"$\\operatorname{{rank}}(\\operatorname{{diag}}(A) G) \\le 2$ for all class means.",
        lhs=MatrixRank(diag(*A) * G), rhs=sp.Integer(2), relation="<=",
        assumptions=(TWO_CLUSTER, BINARY_SETTING),
        rule="exact rank over the rational functions in the class means",
        why="Every $3 \\times 3$ (centred: $2 \\times 2$) minor is 0 as a polynomial in the class means.",
        by=(rules.rank_is_at_most_a_vanishing_minor_size,),
    )
    centred_rank = Result(
        name=f"two_cluster_centred_scores_have_rank_at_most_one_{tag}",
        instance=f"$R = {size}$, $k = {successes}$",
        doc=f"With $R = {size}$, $k = {successes}$ and two-cluster scores the centred score matrix has rank at most 1.",
        lhs=MatrixRank(centring_matrix(size) * G), rhs=sp.Integer(1), relation="<=",
        assumptions=(TWO_CLUSTER, BINARY_SETTING),
        rule="exact rank over the rational functions in the class means",
        why="Every $3 \\times 3$ (centred: $2 \\times 2$) minor is 0 as a polynomial in the class means.",
        by=(rules.rank_is_at_most_a_vanishing_minor_size,),
    )
    return factorised, indicator_rank, scores_rank, centred_rank


(two_cluster_scores_factor_through_class_indicator_R4, class_indicator_has_rank_two_R4,
 two_cluster_advantage_weighted_scores_have_rank_at_most_two_R4,
 two_cluster_centred_scores_have_rank_at_most_one_R4) = _two_cluster_results(4, 1)
(two_cluster_scores_factor_through_class_indicator_R8, class_indicator_has_rank_two_R8,
 two_cluster_advantage_weighted_scores_have_rank_at_most_two_R8,
 two_cluster_centred_scores_have_rank_at_most_one_R8) = _two_cluster_results(8, 3)

two_cluster_mean_score = (k * gC + (R - k) * gW) / R
two_cluster_centred_rows_are_multiples_of_class_mean_difference = Result(
    name="two_cluster_centred_rows_are_multiples_of_class_mean_difference",
    doc="For every $R$ and $0 < k < R$, two-cluster scores centred by the group mean are "
        "$(1 - k/R)(\\bar g_C - \\bar g_W)$ (correct) and $-(k/R)(\\bar g_C - \\bar g_W)$ (wrong): the centred $G$ "
        "is an outer product, of rank at most 1.",
    lhs=sp.ImmutableMatrix([[gC - two_cluster_mean_score, gW - two_cluster_mean_score]]),
    rhs=sp.ImmutableMatrix([[(1 - k / R) * (gC - gW), -(k / R) * (gC - gW)]]),
    assumptions=(GROUP_SETTING, BINARY_SETTING, Assumption("two-cluster scores (coordinatewise)", context=True)),
    rule="arithmetic", why="The group mean of the scores is $(k \\bar g_C + (R - k) \\bar g_W)/R$.",
)

# == effective rank of a rank-2 matrix ============================================================
x = sp.Symbol("x", positive=True)  # the weight sigma_1/(sigma_1 + sigma_2)
y = sp.Symbol("y", positive=True)  # x = 1/(1 + y)
UNIT = Assumption("$x \\in (0, 1)$", domain=(x, sp.Interval.open(0, 1)))
INTERIOR_POINT = {x: sp.Rational(1, 3)}  # a model of x in (0, 1) (a random positive rational is rarely below 1)

# a logarithm of a sum written as one fraction, then split into logarithms of its positive factors
LOG_LAWS = (rules.logarithm_of_a_sum_as_one_fraction, rules.log_of_a_product_or_power)

two_point_entropy_is_nonnegative = Result(
    name="two_point_entropy_is_nonnegative",
    doc="$H(x, 1 - x) \\ge 0$ on $(0, 1)$, so the effective rank $e^{H}$ of a rank-2 matrix is at least 1 "
        "(with $x = 1/(1 + y)$, $y > 0$).",
    lhs=two_point_entropy(1 / (1 + y)),
    rhs=sp.Integer(0),
    relation=">=",
    assumptions=(Assumption("$y = (1 - x)/x > 0$", context=True),),
    steps=(
        Step(sp.log(1 + y) / (1 + y) + y / (1 + y) * sp.log(1 + 1 / y), "logarithm laws",
             "$-\\log(1/(1 + y)) = \\log(1 + y)$ and $-\\log(y/(1 + y)) = \\log(1 + 1/y)$.", by=LOG_LAWS),
        Step(sp.Integer(0), "sign", "Both logarithms have arguments above 1.", relation=">="),
    ),
)

two_point_entropy_is_strictly_concave = Result(
    name="two_point_entropy_is_strictly_concave",
    doc="$H''(x) = -1/(x(1 - x)) < 0$ on $(0, 1)$: the two-point entropy is strictly concave.",
    lhs=sp.Derivative(two_point_entropy(x), x, 2),
    rhs=sp.Integer(0),
    relation="<",
    assumptions=(UNIT,),
    model=INTERIOR_POINT,
    steps=(
        Step(-1 / (x * (1 - x)), "differentiate twice", "$H'(x) = \\log(1 - x) - \\log x$.",
             by=rules.DIFFERENTIATION),
        Step(sp.Integer(0), "exact sign on $(0, 1)$", relation="<"),
    ),
)

two_point_entropy_is_stationary_at_one_half = Result(
    name="two_point_entropy_is_stationary_at_one_half",
    doc="$H'(1/2) = 0$.",
    lhs=sp.Subs(sp.Derivative(two_point_entropy(x), x), x, sp.Rational(1, 2)),
    rhs=sp.Integer(0),
    assumptions=(UNIT.as_context(),),  # H is defined on (0, 1); the derivative at 1/2 needs nothing of x
    model=INTERIOR_POINT,
    rule="differentiate and evaluate", why="$H'(x) = \\log(1 - x) - \\log x$.", by=rules.DIFFERENTIATION,
)

equal_singular_values_give_effective_rank_two = Result(
    name="equal_singular_values_give_effective_rank_two",
    doc="Equal singular values ($x = 1/2$) give effective rank $e^{H(1/2)} = 2$.",
    lhs=as_written(lambda: sp.exp(two_point_entropy(sp.Rational(1, 2)))),
    rhs=sp.Integer(2),
    rule="evaluation",
)

unequal_singular_values_give_effective_rank_below_two = Result(
    name="unequal_singular_values_give_effective_rank_below_two",
    doc="Singular values in ratio $3 : 1$ ($x = 3/4$) give effective rank $4/3^{3/4} < 2$: its fourth power is "
        "$256/27 < 16$.",
    lhs=as_written(lambda: sp.exp(4 * two_point_entropy(sp.Rational(3, 4)))),
    rhs=sp.Integer(16),
    relation="<",
    steps=(
        Step(sp.Rational(256, 27), "evaluation", "$(4/3)^3 \\cdot 4 = 256/27$."),
        Step(sp.Integer(16), "arithmetic", relation="<"),
    ),
)

BELOW_ONE = Assumption("$x < 1$", positive=1 - x)  # with x > 0 (its domain): x in (0, 1)
HALF_OVER_X, HALF_OVER_ONE_MINUS_X = sp.Rational(1, 2) / x, sp.Rational(1, 2) / (1 - x)  # where log t <= t - 1

log_odds_is_at_least_two_x_minus_one_over_x = Result(
    name="log_odds_is_at_least_two_x_minus_one_over_x",
    doc="$\\log x - \\log(1 - x) \\ge (2x - 1)/x$ on $(0, 1)$: $\\log t \\le t - 1$ at $t = (1 - x)/x$.",
    lhs=sp.log(x) - sp.log(1 - x),
    rhs=(2 * x - 1) / x,
    relation=">=",
    assumptions=(BELOW_ONE,),
    model=INTERIOR_POINT,
    steps=(
        Step(-sp.log((1 - x) / x), "logarithm law", "Both arguments are positive.",
             by=(rules.log_of_a_product_or_power,)),
        Step(1 - (1 - x) / x, "k3_is_nonnegative at $(1 - x)/x$", "$\\log t \\le t - 1$ for $t > 0$ (D2).",
             relation=">=", using=(d2.k3_is_nonnegative.at({d2.x: (1 - x) / x}),)),
        Step((2 * x - 1) / x, "arithmetic"),
    ),
)

log_odds_is_at_most_two_x_minus_one_over_one_minus_x = Result(
    name="log_odds_is_at_most_two_x_minus_one_over_one_minus_x",
    doc="$\\log x - \\log(1 - x) \\le (2x - 1)/(1 - x)$ on $(0, 1)$: $\\log t \\le t - 1$ at $t = x/(1 - x)$.",
    lhs=sp.log(x) - sp.log(1 - x),
    rhs=(2 * x - 1) / (1 - x),
    relation="<=",
    assumptions=(BELOW_ONE,),
    model=INTERIOR_POINT,
    steps=(
        Step(sp.log(x / (1 - x)), "logarithm law", "Both arguments are positive.",
             by=(rules.log_of_a_product_or_power,)),
        Step(x / (1 - x) - 1, "k3_is_nonnegative at $x/(1 - x)$", "$\\log t \\le t - 1$ for $t > 0$ (D2).",
             relation="<=", using=(d2.k3_is_nonnegative.at({d2.x: x / (1 - x)}),)),
        Step((2 * x - 1) / (1 - x), "arithmetic"),
    ),
)

two_point_entropy_is_at_most_log_two = Result(
    name="two_point_entropy_is_at_most_log_two",
    doc="$H(x, 1 - x) \\le \\log 2$ on $(0, 1)$, with the maximum at $x = 1/2$: the effective rank $e^{H}$ of a "
        "rank-2 matrix is at most 2.",
    lhs=two_point_entropy(x),
    rhs=sp.log(2),
    relation="<=",
    assumptions=(BELOW_ONE,),
    model=INTERIOR_POINT,
    steps=(
        Step(x * sp.log(HALF_OVER_X) + (1 - x) * sp.log(HALF_OVER_ONE_MINUS_X) + sp.log(2), "logarithm laws",
             "$\\log(1/(2x)) = -\\log 2 - \\log x$ and $\\log(1/(2(1 - x))) = -\\log 2 - \\log(1 - x)$.",
             by=(rules.log_of_a_product_or_power,)),
        Step(x * (HALF_OVER_X - 1) + (1 - x) * (HALF_OVER_ONE_MINUS_X - 1) + sp.log(2),
             "k3_is_nonnegative at $1/(2x)$ and $1/(2(1 - x))$",
             "$\\log t \\le t - 1$ for $t > 0$ (D2), weighted by $x > 0$ and $1 - x > 0$.", relation="<=",
             using=(d2.k3_is_nonnegative.at({d2.x: HALF_OVER_X}),
                    d2.k3_is_nonnegative.at({d2.x: HALF_OVER_ONE_MINUS_X}))),
        Step(sp.log(2), "arithmetic", "$x (1/(2x) - 1) + (1 - x) (1/(2(1 - x)) - 1) = 0$."),
    ),
)

effective_rank_of_rank_two_matrix_at_most_two = Remark(
    "effective_rank_of_rank_two_matrix_at_most_two",
    "With $0 \\le H(x, 1 - x) \\le \\log 2$ (both proved above) and $\\exp$ increasing, the effective rank "
    "$e^{H}$ of a rank-2 matrix lies in $[1, 2]$, with $e^{H} = 2$ at equal singular values ($x = 1/2$). The "
    "monotonicity of $\\exp$ is the one step not put to the kernel.",
)

# A two-cluster instance: R = 4, k = 2, gbar_C = (1, 0, 0), gbar_W = (1, 1, 0).
G_example = two_cluster_scores(4, 2, sp.ImmutableMatrix([1, 0, 0]), sp.ImmutableMatrix([1, 1, 0]))
lam = sp.Symbol("lambda", real=True)
two_cluster_example_gram_has_eigenvalues_three_plus_minus_sqrt5 = Result(
    name="two_cluster_example_gram_has_eigenvalues_three_plus_minus_sqrt5",
    instance="$R = 4$, $k = 2$, the two-cluster example",
    doc="For $R = 4$, $k = 2$, $\\bar g_C = (1, 0, 0)$, $\\bar g_W = (1, 1, 0)$: "
        "$\\det(G^T G - \\lambda I) = -\\lambda(\\lambda - 3 - \\sqrt 5)(\\lambda - 3 + \\sqrt 5)$, so the singular "
        "values of $G$ are $\\sqrt{3 \\pm \\sqrt 5}$ and 0.",
    lhs=sp.Determinant(sp.ImmutableMatrix(G_example.T * G_example - lam * sp.eye(3))),
    rhs=-lam * (lam - 3 - sp.sqrt(5)) * (lam - 3 + sp.sqrt(5)),
    rule="characteristic polynomial", why="$G^T G = 2(\\bar g_C \\bar g_C^T + \\bar g_W \\bar g_W^T)$.",
    by=(rules.determinant_of_an_explicit_matrix,),
)

two_cluster_example_singular_value_share_is_not_one_half = Result(
    name="two_cluster_example_singular_value_share_is_not_one_half",
    instance="$R = 4$, $k = 2$, the two-cluster example",
    doc="In that instance $\\sigma_1/(\\sigma_1 + \\sigma_2) = (5 + \\sqrt 5)/10 \\ne 1/2$, so its effective rank is "
        "strictly below 2 (about 1.80): rank 2 alone does not give effective rank 2.",
    lhs=sp.sqrt(3 + sp.sqrt(5)) / (sp.sqrt(3 + sp.sqrt(5)) + sp.sqrt(3 - sp.sqrt(5))),
    rhs=sp.Rational(1, 2),
    relation="!=",
    rule="exact simplification", why="Denest: $\\sqrt{3 \\pm \\sqrt 5} = (\\sqrt 5 \\pm 1)/\\sqrt 2$.",
)

group_of_two_has_rank_at_most_two = Remark(
    "group_of_two_has_rank_at_most_two",
    "For $R = 2$ every matrix with $R$ rows has rank at most 2, so an observed rank of about 2 at $R = 2$ says "
    "nothing about structure; with the zero-sum constraint the centred matrix has rank at most $R - 1 = 1$.",
)

paper_rank_two_claim_scope = Remark(
    "paper_rank_two_claim_scope",
    "The paper attributes an intrinsic rank-2 structure to the zero-sum constraint. What is proved here: "
    "(1) zero-sum alone (centring by $I - \\mathbf{1}\\mathbf{1}^T/R$, rank exactly $R - 1$) bounds the centred "
    "score matrix by rank $R - 1$, and the bound is attained (rank 3 at $R = 4$), so zero-sum does not give "
    "rank 2 except for $R \\le 3$, where $R - 1 \\le 2$ anyway. (2) For binary rewards the group "
    "gradient $k a_+ (\\bar g_C - \\bar g_W)$ is unconditionally built from two directions, but it is one vector "
    "(rank at most 1); this is stronger than the paper's wording in that it holds for every $R$ exactly, and "
    "weaker in that it says nothing about a matrix of rank 2. (3) The per-rollout matrices $G$ and "
    "$\\operatorname{diag}(A) G$ have rank $\\operatorname{rank}(G)$, generically $\\min(R, P)$ (rank 4 at $R = 4$); "
    "rank at most 2 needs the extra two-cluster assumption, under which it holds for every $R$. (4) Layer "
    "weight gradients sum one outer product per token and can reach rank $\\min(d_{out}, d_{in}, \\text{tokens})$. "
    "(5) With continuous rewards the advantages take up to $R$ distinct values, the group gradient "
    "$\\sum_i A_i g_i$ no longer reduces to a difference of two class means, and the two-value structure is gone. "
    "(6) Even at rank 2 the effective rank is 2 only for equal singular values, so an observed effective rank "
    "near 2 additionally needs class-mean directions of comparable size that are far from parallel.",
)
