r"""D3 Credit collapse: under outcome-only reward every token of a rollout gets the same advantage.

With an outcome-only reward (per-token reward zero except at the final token $T_i = |o_i|$, which
carries $r_i$) the token advantage $A_{i,t}$ equals the sequence advantage $A_i$ at every valid
position $t \le T_i$: as GRPO defines it (broadcast $A_i m_{i,t}$ with the completion mask $m$), and as
a return-to-go with $\gamma = 1$ of the group-normalised rewards (GRPO's process-supervision formula
applied to an outcome reward); the undiscounted return-to-go of the raw reward is $r_i$ at every $t$.
All of this is symbolic in $t$ and $T_i$ (valid positions encoded as $T_i = t + n$, $n \ge 0$) and in
the group size. Contrast: with $\gamma < 1$ the return-to-go is $\gamma^{T_i - t} r_i$, which varies
along the completion, and GAE($\gamma$, $\lambda$) token advantages satisfy
$A_t = \delta_t + \gamma\lambda A_{t+1}$ and differ along $t$, shown exactly for $T = 3$ (with per-step
rewards, and even with an outcome-only reward and a constant critic when $\lambda < 1$). Finally the
$R \times T_{max}$ token-advantage matrix with entries $A_i m_{i,t}$ is not rank one once completions
have different lengths: its rank is the number of distinct lengths among rollouts with nonzero
advantage (1 when those lengths are equal, 0 when every advantage vanishes). The prefix-indicator
rows of distinct lengths are independent for every $T$ (a triangular matrix with unit diagonal), and
exact ranks are computed for $R = 4$ instances; the general rank statement is proved
in a Remark from these two facts.
"""

import sympy as sp

from .notation import R, advantage, eps, i, r, sample_std, t
from grpo_verify.proof import Assumption, MatrixRank, Remark, Result, SquareMatrix, as_written, computation, rules

# -- symbols local to this family -----------------------------------------------------------------
u = sp.Symbol("u", integer=True, positive=True)  # position summed over in a return-to-go
ell = sp.Symbol("l", integer=True, nonnegative=True)  # GAE lookahead
n = sp.Symbol("n", integer=True, nonnegative=True)  # T_i = t + n encodes t <= T_i
T_i = sp.Symbol("T_i", integer=True, positive=True)  # |o_i|
T = sp.Symbol("T", integer=True, positive=True)  # a matrix size
gamma = sp.Symbol("gamma", positive=True)  # discount
lam = sp.Symbol("lambda", nonnegative=True)  # GAE parameter
reward_nonzero = sp.Symbol("r_i", real=True, nonzero=True)  # a nonzero outcome reward
step_reward = sp.IndexedBase("r", real=True)  # step_reward[u]: per-step reward of one rollout (GAE example)
V = sp.IndexedBase("V", real=True)  # V[u]: critic value before token u; V[T + 1] = 0
sequence_advantage = advantage(i, sample_std())  # A_i = (r_i - rbar)/(s + eps)


_row, _col = sp.symbols("l u", integer=True, positive=True)
# P_T: row l is the completion mask of a rollout of length l (ones in positions u <= l)
PREFIX_INDICATORS = SquareMatrix(T, sp.Lambda((_row, _col), sp.Piecewise((1, _col <= _row), (0, True))))


VALID = Assumption("$t$ is a valid position, $1 \\le t \\le T_i = |o_i|$, written $T_i = t + n$ with $n \\ge 0$",
                   equation=(T_i, t + n))
OUTCOME_ONLY = Assumption("outcome-only reward: the per-token reward of rollout $i$ at position $u$ is "
                          "$r_i \\delta_{u T_i}$")
mask = sp.Piecewise((1, t <= T_i), (0, True))  # m_{i,t}
SCALE_POSITIVE = Assumption("the group's scale is positive, $s + \\epsilon > 0$ (a positive stabiliser $\\epsilon$, "
                            "or rewards that are not all equal)",
                            condition=sp.Gt(sample_std() + eps, 0))

# -- outcome-only reward: every valid token gets A_i ------------------------------------------------
token_advantage_equals_sequence_advantage_under_outcome_reward = Result(
    name="token_advantage_equals_sequence_advantage_under_outcome_reward",
    doc="GRPO's token advantage $A_{i,t} = A_i m_{i,t}$ (broadcast, masked) equals $A_i$ at every valid "
        "position $t \\le |o_i|$.",
    lhs=sequence_advantage * mask,
    rhs=sequence_advantage,
    assumptions=(VALID, SCALE_POSITIVE),
    rule="the mask is 1 at valid positions",
    using=(VALID,),
)

undiscounted_return_to_go_of_outcome_reward_is_final_reward = Result(
    name="undiscounted_return_to_go_of_outcome_reward_is_final_reward",
    doc="With $\\gamma = 1$ the return-to-go $\\sum_{u=t}^{T_i} r_i \\delta_{u T_i}$ of an outcome-only reward is "
        "$r_i$ at every valid position.",
    lhs=sp.Sum(r[i] * sp.KroneckerDelta(u, T_i), (u, t, T_i)),
    rhs=r[i],
    assumptions=(VALID, OUTCOME_ONLY),
    rule="the delta picks $u = T_i$, which lies in $[t, T_i]$",
    using=(VALID,), by=(rules.sum_of_a_delta,),
)

normalised_return_to_go_equals_sequence_advantage_under_outcome_reward = Result(
    name="normalised_return_to_go_equals_sequence_advantage_under_outcome_reward",
    doc="GRPO's process-supervision advantage (sum of the group-normalised rewards from position $t$ on) "
        "equals the sequence advantage $A_i$ at every valid position under an outcome-only reward.",
    lhs=sp.Sum(sequence_advantage * sp.KroneckerDelta(u, T_i), (u, t, T_i)),
    rhs=sequence_advantage,
    assumptions=(VALID, OUTCOME_ONLY, Assumption("$R \\ge 2$", R >= 2, context=True), SCALE_POSITIVE),
    rule="the delta picks $u = T_i$, which lies in $[t, T_i]$",
    why="The only nonzero normalised reward of rollout $i$ is $(r_i - \\bar r)/(s + \\epsilon) = A_i$, at $u = T_i$.",
    using=(VALID,), by=(rules.sum_of_a_delta,),
)

# -- contrast 1: discounting --------------------------------------------------------------------------
discounted_return_to_go_of_outcome_reward_is_gamma_power = Result(
    name="discounted_return_to_go_of_outcome_reward_is_gamma_power",
    doc="With discount $\\gamma$ the return-to-go of an outcome-only reward is $\\gamma^{T_i - t} r_i$.",
    lhs=sp.Sum(gamma ** (u - t) * r[i] * sp.KroneckerDelta(u, T_i), (u, t, T_i)),
    rhs=gamma ** (T_i - t) * r[i],
    assumptions=(VALID, OUTCOME_ONLY),
    rule="the delta picks $u = T_i$",
    using=(VALID,), by=(rules.sum_of_a_delta,),
)

discounted_return_to_go_differs_along_completion = Result(
    name="discounted_return_to_go_differs_along_completion",
    doc="For $\\gamma = 1/2$, $T_i = 3$ and any nonzero $r_i$ the discounted return-to-go at $t = 1$ "
        "($\\gamma^2 r_i$) differs from the one at $t = 3$ ($r_i$).",
    lhs=sp.Subs(gamma ** (T_i - t) * reward_nonzero, (gamma, T_i, t), (sp.Rational(1, 2), 3, 1)),
    rhs=sp.Subs(gamma ** (T_i - t) * reward_nonzero, (gamma, T_i, t), (sp.Rational(1, 2), 3, 3)),
    relation="!=",
    assumptions=(Assumption("$r_i \\ne 0$", context=True),),
    rule="exact evaluation", why="$r_i/4 - r_i = -3 r_i/4 \\ne 0$.",
)

# -- contrast 2: GAE with T = 3 ------------------------------------------------------------------------
GAE_T = 3
TERMINAL_VALUE = Assumption("the terminal value is $V_4 = 0$", equation=(V[GAE_T + 1], sp.Integer(0)))


def _setting(values: dict, text: str) -> tuple[Assumption, ...]:
    """One equation assumption per fixed value of a concrete example."""
    return tuple(Assumption(f"{text}: ${sp.latex(key)} = {sp.latex(value)}$", equation=(key, sp.sympify(value)))
                 for key, value in values.items())


def _td_error(pos: sp.Expr) -> sp.Expr:
    """delta_u = r_u + gamma V_{u+1} - V_u."""
    return step_reward[pos] + gamma * V[pos + 1] - V[pos]


def gae(pos: int) -> sp.Expr:
    """GAE(gamma, lambda) advantage at position pos of a completion of length 3 (unevaluated sum)."""
    return sp.Sum((gamma * lam) ** ell * _td_error(pos + ell), (ell, 0, GAE_T - pos))


def gae_at(pos: int, discount: sp.Basic, trace: sp.Basic) -> sp.Expr:
    """gae(pos) at $\\gamma$ = discount, $\\lambda$ = trace, the substitution left to the kernel (a ``Subs``)."""
    return sp.Subs(gae(pos), (gamma, lam), (discount, trace))


GAE_SETTING = Assumption("a completion of length $T = 3$ with per-step rewards $r_u$ and critic values $V_u$",
                         context=True)

gae_satisfies_backward_recursion = Result(
    name="gae_satisfies_backward_recursion",
    doc="GAE advantages satisfy $A_t = \\delta_t + \\gamma\\lambda A_{t+1}$ for $t = 1, 2$ and $A_3 = \\delta_3$ "
        "($T = 3$, symbolic $\\gamma$, $\\lambda$, rewards, values).",
    lhs=sp.ImmutableMatrix([gae(1), gae(2), gae(3)]),
    rhs=sp.ImmutableMatrix([_td_error(1) + gamma * lam * gae(2), _td_error(2) + gamma * lam * gae(3),
                            _td_error(3)]),
    assumptions=(GAE_SETTING, TERMINAL_VALUE),
    rule="split off the $l = 0$ term and shift the index",
    why="Both sides written out: three, two and one terms.",
    using=(TERMINAL_VALUE,), by=(rules.sum_with_numeric_limits_is_written_out,),
)

gae_with_unit_gamma_lambda_is_return_to_go_minus_value = Result(
    name="gae_with_unit_gamma_lambda_is_return_to_go_minus_value",
    doc="With $\\gamma = \\lambda = 1$ the GAE advantage telescopes to $\\sum_{u \\ge t} r_u - V_t$ ($T = 3$).",
    lhs=sp.ImmutableMatrix([gae_at(1, 1, 1), gae_at(2, 1, 1), gae_at(3, 1, 1)]),
    rhs=sp.ImmutableMatrix([sum(step_reward[v] for v in range(p, GAE_T + 1)) - V[p] for p in (1, 2, 3)]),
    assumptions=(GAE_SETTING, TERMINAL_VALUE),
    rule="telescoping sum", why="Written out, the values $V_{u+1} - V_u$ telescope to $-V_t$ ($V_4 = 0$).",
    using=(TERMINAL_VALUE,), by=(rules.sum_with_numeric_limits_is_written_out,),
)

_outcome_only_constant_critic = {step_reward[1]: 0, step_reward[2]: 0, step_reward[3]: 1,
                                 V[1]: sp.Rational(1, 2), V[2]: sp.Rational(1, 2), V[3]: sp.Rational(1, 2),
                                 V[4]: 0}
_outcome_only_parameters = (sp.Integer(1), sp.Rational(1, 2))  # (gamma, lambda)
OUTCOME_ONLY_CONSTANT_CRITIC = _setting(_outcome_only_constant_critic, "outcome-only reward, constant critic")

gae_token_advantages_differ_under_outcome_reward = Result(
    name="gae_token_advantages_differ_under_outcome_reward",
    doc="Even with an outcome-only reward ($r_1 = r_2 = 0$, $r_3 = 1$) and a constant critic $V_t = 1/2$, "
        "GAE with $\\gamma = 1$, $\\lambda = 1/2$ gives $A_1 = 1/8 \\ne A_2 = 1/4$ ($A_3 = 1/2$).",
    lhs=gae_at(1, *_outcome_only_parameters),
    rhs=gae_at(2, *_outcome_only_parameters),
    relation="!=",
    assumptions=(GAE_SETTING, *OUTCOME_ONLY_CONSTANT_CRITIC),
    rule="exact evaluation", why="$\\delta_1 = \\delta_2 = 0$, $\\delta_3 = 1/2$, so $A_t = \\lambda^{3-t}/2$.",
    using=OUTCOME_ONLY_CONSTANT_CRITIC, by=(rules.sum_with_numeric_limits_is_written_out,),
)

_per_step_rewards_no_critic = {step_reward[1]: 1, step_reward[2]: 0, step_reward[3]: 0,
                               V[1]: 0, V[2]: 0, V[3]: 0, V[4]: 0}
PER_STEP_REWARDS_NO_CRITIC = _setting(_per_step_rewards_no_critic, "per-step rewards, no critic")

gae_token_advantages_differ_under_per_step_rewards = Result(
    name="gae_token_advantages_differ_under_per_step_rewards",
    doc="With per-step rewards $(1, 0, 0)$, no critic and $\\gamma = \\lambda = 1$, GAE gives $A_1 = 1 \\ne A_2 = 0$: "
        "the token credit follows where the reward was earned.",
    lhs=gae_at(1, 1, 1),
    rhs=gae_at(2, 1, 1),
    relation="!=",
    assumptions=(GAE_SETTING, *PER_STEP_REWARDS_NO_CRITIC),
    rule="exact evaluation", why="$A_t = \\sum_{u \\ge t} r_u$.",
    using=PER_STEP_REWARDS_NO_CRITIC, by=(rules.sum_with_numeric_limits_is_written_out,),
)

# -- the rank of the token-advantage matrix -------------------------------------------------------------
prefix_indicator_rows_of_distinct_lengths_are_independent = Result(
    name="prefix_indicator_rows_of_distinct_lengths_are_independent",
    doc="The completion masks of lengths $1, \\dots, T$ (rows of the lower-triangular all-ones matrix $P_T$) "
        "are linearly independent: $\\operatorname{rank}(P_T) = T$ for every $T$.",
    lhs=MatrixRank(PREFIX_INDICATORS),
    rhs=T,
    rule="the rank of a triangular matrix with a nonzero diagonal",
    why="$P_T$ is lower triangular (entry $(l, u)$ is 0 for $u > l$) with unit diagonal, so $\\det P_T = 1$.",
    by=(rules.rank_of_a_triangular_matrix,),
)


def _token_advantage_entries(rewards: sp.Tuple, lengths: sp.Tuple, stabiliser: sp.Basic) -> sp.ImmutableMatrix:
    """The R x max(lengths) matrix with entries A_i m_{i,t}: A_i the sample-std GRPO advantage of the explicit
    rewards, $(r_i - \\bar r)/(s + \\epsilon)$ with the group sums written out, unevaluated (the kernel does the
    arithmetic), where $t \\le |o_i|$ (the mask $m_{i,t} = 1$), and 0 elsewhere."""
    size, width = len(rewards), int(max(lengths))

    def build():
        mean = sp.Add(*rewards) / size
        std = sp.sqrt(sp.Add(*[(v - mean) ** 2 for v in rewards]) / (size - 1))
        adv = [(v - mean) / (std + stabiliser) for v in rewards]
        return sp.ImmutableMatrix(size, width, lambda row, col: adv[row] if col < lengths[row] else 0)
    return as_written(build)


TOKEN_ADVANTAGE_MATRIX = computation(
    "TokenAdvantageMatrix", r"\left(A_i m_{i,t}\right)_{r = #1,\ |o| = #2,\ \epsilon = #3}", _token_advantage_entries)


def token_advantage_matrix(rewards: tuple, lengths: tuple, stabiliser: sp.Expr = sp.Integer(0)) -> sp.Basic:
    """The R x max(lengths) matrix with entries A_i m_{i,t}, A_i the sample-std GRPO advantage (a computation
    the checker writes out, ``_token_advantage_entries``)."""
    return TOKEN_ADVANTAGE_MATRIX(sp.Tuple(*[sp.nsimplify(v) for v in rewards]), sp.Tuple(*lengths),
                                  sp.sympify(stabiliser))


RANK_RULES = (rules.rank_of_an_explicit_matrix,)
RANK_SETTING = Assumption("$R = 4$ rollouts, sample-std advantages, entries $A_i m_{i,t}$ of the "
                          "token-advantage matrix")

token_advantage_matrix_rank_is_three_for_three_distinct_lengths = Result(
    name="token_advantage_matrix_rank_is_three_for_three_distinct_lengths",
    instance="$R = 4$",
    doc="Rewards $(1, 0, 1, 0)$ (all advantages $\\pm\\sqrt{3}/2$ nonzero, $\\epsilon = 0$) and lengths "
        "$(3, 3, 5, 2)$: the token-advantage matrix has rank 3, the number of distinct lengths, not 1.",
    lhs=MatrixRank(token_advantage_matrix((1, 0, 1, 0), (3, 3, 5, 2))),
    rhs=sp.Integer(3),
    assumptions=(RANK_SETTING,),
    rule="exact rank", by=RANK_RULES,
)

token_advantage_matrix_rank_ignores_zero_advantage_rollouts = Result(
    name="token_advantage_matrix_rank_ignores_zero_advantage_rollouts",
    instance="$R = 4$",
    doc="Rewards $(0, 3, 1, 0)$ (advantages $(-\\sqrt{2}/2, \\sqrt{2}, 0, -\\sqrt{2}/2)$, $\\epsilon = 0$) and "
        "lengths $(3, 3, 5, 2)$: rank 2, the number of distinct lengths $\\{2, 3\\}$ among rollouts with "
        "nonzero advantage; the only rollout of length 5 has advantage 0 and drops out.",
    lhs=MatrixRank(token_advantage_matrix((0, 3, 1, 0), (3, 3, 5, 2))),
    rhs=sp.Integer(2),
    assumptions=(RANK_SETTING,),
    rule="exact rank", by=RANK_RULES,
)

token_advantage_matrix_rank_is_one_for_equal_lengths = Result(
    name="token_advantage_matrix_rank_is_one_for_equal_lengths",
    instance="$R = 4$",
    doc="Rewards $(1, 0, 1, 0)$ and equal lengths $(4, 4, 4, 4)$: rank 1 (every row is $A_i$ times the same mask).",
    lhs=MatrixRank(token_advantage_matrix((1, 0, 1, 0), (4, 4, 4, 4))),
    rhs=sp.Integer(1),
    assumptions=(RANK_SETTING,),
    rule="exact rank", by=RANK_RULES,
)

token_advantage_matrix_rank_is_zero_for_equal_rewards = Result(
    name="token_advantage_matrix_rank_is_zero_for_equal_rewards",
    instance="$R = 4$",
    doc="Rewards $(1, 1, 1, 1)$ with $\\epsilon = 10^{-4}$ (TRL's value) and lengths $(3, 3, 5, 2)$: every "
        "advantage is $0/\\epsilon = 0$ and the matrix has rank 0.",
    lhs=MatrixRank(token_advantage_matrix((1, 1, 1, 1), (3, 3, 5, 2), sp.Rational(1, 10000))),
    rhs=sp.Integer(0),
    assumptions=(RANK_SETTING,),
    rule="exact rank", by=RANK_RULES,
)

token_advantage_matrix_rank_is_number_of_distinct_active_lengths = Remark(
    name="token_advantage_matrix_rank_is_number_of_distinct_active_lengths",
    text="For any group, the $R \\times T_{max}$ matrix with entries $A_i m_{i,t}$ has rank equal to the number of "
         "distinct lengths $|o_i|$ among rollouts with $A_i \\ne 0$. Proof: row $i$ is $A_i p_{|o_i|}$ with "
         "$p_T$ the completion mask of length $T$. Rows with $A_i = 0$ vanish; the other rows span the span "
         "of $\\{p_T : T \\in \\mathcal{T}\\}$, $\\mathcal{T}$ the set of their lengths, since every such row is a "
         "nonzero multiple of one $p_T$ and every $p_T$ occurs. Distinct masks are linearly independent "
         "(prefix_indicator_rows_of_distinct_lengths_are_independent: they are rows of the triangular "
         "$P_{T_{max}}$), so the rank is $|\\mathcal{T}|$. It is 1 exactly when all active rollouts have the "
         "same length and 0 when all advantages vanish; the 'rank one' picture of outcome-reward credit "
         "assignment holds only for equal lengths. The four $R = 4$ results above check the statement "
         "exactly on instances.",
)
