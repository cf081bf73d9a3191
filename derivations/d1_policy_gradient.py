r"""D1 Policy gradient: score-function identity, baseline invariance, autoregressive factorisation.

On a finite outcome space $\{1, \dots, K\}$ with probabilities $\pi(a, \theta) > 0$ and rewards
$r(a)$ the gradient of the expected reward is the expected reward times the score,
$\nabla_\theta \sum_a \pi(a, \theta) r(a) = \sum_a \pi(a, \theta) r(a) \nabla_\theta \log \pi(a, \theta)$
(exchanging a finite sum and a derivative needs nothing), and a baseline $b$ that does not depend
on the outcome adds nothing in expectation because $\sum_a \pi(a, \theta) = 1$ for every $\theta$
(the normalisation enters as a rewrite fact). This is proved for symbolic $K$ and undefined
probability functions, and again exactly for the softmax parametrisation: with $K = 3$ logits
explicitly, and for general $K$ the log-softmax derivative
$\partial \log \pi_a / \partial \theta_b = \delta_{ab} - \pi_b$ (for $1 \le b \le K$). For a completion
$o = (o_1, \dots, o_T)$ generated token by token, $\pi_\theta(o|q) = \prod_t \pi_\theta(o_t|q, o_{<t})$,
so its score is the sum of the token scores (symbolic $T$, token probabilities positive). The
parameter $\theta$ is one coordinate of the parameter vector, so every identity holds coordinatewise.
"""

import sympy as sp

from .notation import t
from grpo_verify.proof import Assumption, Remark, Result, Step, rules

# -- symbols local to this family -----------------------------------------------------------------
a, b_idx, c = sp.symbols("a b c", integer=True, positive=True)  # outcome indices
K = sp.Symbol("K", integer=True, positive=True)  # number of outcomes
n = sp.Symbol("n", integer=True, nonnegative=True)  # K = b + n encodes b <= K
T = sp.Symbol("T", integer=True, positive=True)  # completion length
theta = sp.Symbol("theta", real=True)  # one coordinate of the parameters
b = sp.Symbol("b", real=True)  # a baseline, constant in the outcome
pi = sp.Function("pi", positive=True)  # pi(a, theta): probability of outcome a
rew = sp.Function("r", real=True)  # r(a): reward of outcome a
pi_tok = sp.Function("pi_tok", positive=True)  # pi_tok(t, theta) = pi_theta(o_t | q, o_<t)
logit = sp.IndexedBase("theta", real=True)  # softmax logits theta_1..theta_K
th1, th2, th3 = sp.symbols("theta_1 theta_2 theta_3", real=True)

POSITIVE = Assumption("every outcome has probability $\\pi(a, \\theta) > 0$ (so its log is defined)")
normalisation = (sp.Sum(pi(a, theta), (a, 1, K)), sp.Integer(1))
NORMALISED = Assumption("the probabilities sum to one for every $\\theta$: $\\sum_{a=1}^{K} \\pi(a, \\theta) = 1$",
                        equation=normalisation, for_every=(theta,))
CONSTANT_BASELINE = Assumption("the baseline $b$ does not depend on the outcome $a$ (it may depend on $\\theta$ "
                               "and on other, independent samples)")


def expected(body: sp.Expr) -> sp.Expr:
    """E_{a ~ pi(., theta)}[body] on the finite outcome space."""
    return sp.Sum(pi(a, theta) * body, (a, 1, K))


score = sp.Derivative(sp.log(pi(a, theta)), theta)

DIFFERENTIATION = rules.DIFFERENTIATION


def _normalised_model(sizes: dict) -> dict:
    """A model of the normalisation for every theta, depending on theta: pi(a, theta) =
    (1 + s(a) theta^2 / (2 (1 + theta^2))) / K with s(a) = c / (1 + c^2), c = 2a - K - 1, is positive at every
    real a and theta (|s| <= 1/2: a model's function is defined at every real argument) and sums to 1 over
    a = 1..K for every theta (c and -c pair off, and s is odd in c)."""
    size = int(sizes.get(K, 3))
    c = 2 * a - size - 1
    wobble = c / (1 + c**2) * theta**2 / (2 * (1 + theta**2))
    return {K: size, pi: sp.Lambda((a, theta), (1 + wobble) / size)}


# -- general finite outcome space -----------------------------------------------------------------
score_function_identity = Result(
    name="score_function_identity",
    doc="The gradient of the expected reward is the expectation of reward times score: "
        "$\\nabla_\\theta E[r] = E[r \\nabla_\\theta \\log \\pi]$.",
    lhs=sp.Derivative(expected(rew(a)), theta),
    rhs=expected(rew(a) * score),
    assumptions=(POSITIVE,),
    steps=(
        Step(sp.Sum(rew(a) * sp.Derivative(pi(a, theta), theta), (a, 1, K)), "derivative of a finite sum",
             "The sum has finitely many terms and the reward does not depend on $\\theta$.", by=DIFFERENTIATION),
        Step(expected(rew(a) * score), "log-derivative trick",
             "$\\nabla \\pi = \\pi \\nabla \\log \\pi$ because $\\pi > 0$.", by=DIFFERENTIATION),
    ),
)

baseline_has_zero_expected_score = Result(
    name="baseline_has_zero_expected_score",
    doc="A baseline that does not depend on the outcome contributes nothing in expectation: "
        "$E[b \\nabla_\\theta \\log \\pi] = 0$.",
    lhs=expected(b * score),
    rhs=sp.Integer(0),
    assumptions=(POSITIVE, NORMALISED, CONSTANT_BASELINE),
    steps=(
        Step(b * sp.Sum(sp.Derivative(pi(a, theta), theta), (a, 1, K)), "log-derivative trick",
             "$\\pi \\nabla \\log \\pi = \\nabla \\pi$ and $b$ is constant in $a$.",
             by=(*DIFFERENTIATION, rules.sum_linearity)),
        Step(b * sp.Derivative(sp.Sum(pi(a, theta), (a, 1, K)), theta), "derivative of a finite sum",
             "Exchange the finite sum and the derivative.", by=DIFFERENTIATION),
        Step(sp.Integer(0), "normalisation", "The probabilities sum to the constant 1 for every $\\theta$.",
             using=(NORMALISED,), by=DIFFERENTIATION),
    ),
    model=_normalised_model,
)

baselined_policy_gradient_is_unbiased = Result(
    name="baselined_policy_gradient_is_unbiased",
    doc="Subtracting an outcome-independent baseline leaves the policy gradient unchanged: "
        "$E[(r - b) \\nabla_\\theta \\log \\pi] = \\nabla_\\theta E[r]$.",
    lhs=expected((rew(a) - b) * score),
    rhs=sp.Derivative(expected(rew(a)), theta),
    assumptions=(POSITIVE, NORMALISED, CONSTANT_BASELINE),
    steps=(
        Step(expected(rew(a) * score) - expected(b * score), "linearity of the expectation",
             by=(rules.sum_linearity,)),
        Step(expected(rew(a) * score), "baseline_has_zero_expected_score",
             "The baseline term vanishes.", using=(baseline_has_zero_expected_score,)),
        Step(sp.Derivative(expected(rew(a)), theta), "score_function_identity",
             "Read the score-function identity backwards.", using=(score_function_identity,)),
    ),
    model=_normalised_model,
)

# -- softmax with K = 3 logits, exactly ------------------------------------------------------------
_logits3 = (th1, th2, th3)
_z3 = sum(sp.exp(x) for x in _logits3)
softmax3 = [sp.exp(x) / _z3 for x in _logits3]  # pi_1, pi_2, pi_3
rew3 = [rew(1), rew(2), rew(3)]
_expected_reward3 = sum(p * f for p, f in zip(softmax3, rew3))
# logits log 1, log 2, log 3: the softmax (1/6, 1/3, 1/2) and every derivative are rational there, so the
# evaluator compares exactly (a hint for its points only; the results have no assumptions)
_LOGITS3_AT_LOGS = {th1: sp.Integer(0), th2: sp.log(2), th3: sp.log(3)}


def _delta3(p: int, q: int) -> sp.Expr:
    """delta_{p+1, q+1} for 0-based p, q, written unevaluated (the kernel's delta rule decides it)."""
    return sp.KroneckerDelta(p + 1, q + 1, evaluate=False)


def _gradient3(e: sp.Expr) -> sp.ImmutableMatrix:
    """Unevaluated gradient (d/dtheta_1, d/dtheta_2, d/dtheta_3) as a column."""
    return sp.ImmutableMatrix([sp.Derivative(e, x) for x in _logits3])


# the derivative rules, with log(e^theta_a / Z) = theta_a - log Z (both factors positive)
_SOFTMAX_RULES = (*DIFFERENTIATION, rules.log_of_a_product_or_power, rules.delta_of_equal_or_distinct_values)

softmax_log_derivative_is_delta_minus_probability_K3 = Result(
    name="softmax_log_derivative_is_delta_minus_probability_K3",
    doc="For the softmax over 3 logits, the matrix of $\\partial \\log \\pi_a / \\partial \\theta_b$ "
        "has entries $\\delta_{ab} - \\pi_b$.",
    lhs=sp.ImmutableMatrix(3, 3, lambda p, q: sp.Derivative(sp.log(softmax3[p]), _logits3[q])),
    rhs=sp.ImmutableMatrix(3, 3, lambda p, q: _delta3(p, q) - softmax3[q]),
    rule="differentiation, entrywise",
    why="$\\log \\pi_a = \\theta_a - \\log \\sum_c e^{\\theta_c}$.",
    by=_SOFTMAX_RULES,
    model=_LOGITS3_AT_LOGS,
)

score_function_identity_softmax_K3 = Result(
    name="score_function_identity_softmax_K3",
    doc="For the softmax over 3 logits the gradient of the expected reward equals $E[r \\nabla \\log \\pi]$, "
        "and its $b$-th coordinate is $\\pi_b (r(b) - E[r])$.",
    lhs=_gradient3(_expected_reward3),
    rhs=sp.ImmutableMatrix([softmax3[q] * (rew3[q] - _expected_reward3) for q in range(3)]),
    steps=(
        Step(sp.ImmutableMatrix([sum(softmax3[p] * rew3[p] * sp.Derivative(sp.log(softmax3[p]), x)
                                     for p in range(3)) for x in _logits3]),
             "score_function_identity", "The log-derivative trick, termwise, on the explicit model: both sides "
             "differentiated by the derivative rules.", by=_SOFTMAX_RULES),
        Step(sp.ImmutableMatrix([sum(softmax3[p] * rew3[p] * (_delta3(p, q) - softmax3[q])
                                     for p in range(3)) for q in range(3)]),
             "log-softmax derivative", "Insert $\\partial \\log \\pi_a / \\partial \\theta_b = \\delta_{ab} - \\pi_b$ "
             "(as in softmax_log_derivative_is_delta_minus_probability_K3, by the same rules).",
             by=_SOFTMAX_RULES),
        Step(sp.ImmutableMatrix([softmax3[q] * (rew3[q] - _expected_reward3) for q in range(3)]),
             "collect terms", "The delta picks $a = b$; the rest is $\\pi_b E[r]$.",
             by=(rules.delta_of_equal_or_distinct_values,)),
    ),
    model=_LOGITS3_AT_LOGS,
)

baseline_has_zero_expected_score_softmax_K3 = Result(
    name="baseline_has_zero_expected_score_softmax_K3",
    doc="For the softmax over 3 logits, $\\sum_a \\pi_a b \\nabla \\log \\pi_a = 0$ for any constant $b$.",
    lhs=sp.ImmutableMatrix([sum(softmax3[p] * b * sp.Derivative(sp.log(softmax3[p]), x) for p in range(3))
                            for x in _logits3]),
    rhs=sp.ZeroMatrix(3, 1).as_explicit().as_immutable(),
    assumptions=(CONSTANT_BASELINE,),
    steps=(
        Step(sp.ImmutableMatrix([b * sum(softmax3[p] * (_delta3(p, q) - softmax3[q]) for p in range(3))
                                 for q in range(3)]),
             "log-softmax derivative", "Insert $\\partial \\log \\pi_a / \\partial \\theta_b = \\delta_{ab} - \\pi_b$ "
             "(as in softmax_log_derivative_is_delta_minus_probability_K3, by the same rules).",
             by=_SOFTMAX_RULES),
        Step(sp.ImmutableMatrix([b * softmax3[q] * (1 - sum(softmax3)) for q in range(3)]),
             "collect terms", "The delta picks $a = b$.",
             by=(rules.delta_of_equal_or_distinct_values,)),
        Step(sp.ZeroMatrix(3, 1).as_explicit().as_immutable(), "normalisation",
             "The softmax probabilities sum to one."),
    ),
    model=_LOGITS3_AT_LOGS,
)

# -- softmax with K logits, symbolic K ------------------------------------------------------------
_softmax_K = lambda x: sp.exp(logit[x]) / sp.Sum(sp.exp(logit[c]), (c, 1, K))  # noqa: E731

B_IN_RANGE = Assumption("$1 \\le b \\le K$, written $K = b + n$ with $n \\ge 0$", equation=(K, b_idx + n))

softmax_log_derivative_is_delta_minus_probability = Result(
    name="softmax_log_derivative_is_delta_minus_probability",
    doc="For the softmax over $K$ logits, $\\partial \\log \\pi_a / \\partial \\theta_b = \\delta_{ab} - \\pi_b$ "
        "for every $1 \\le b \\le K$ (symbolic $K$).",
    lhs=sp.Derivative(sp.log(_softmax_K(a)), logit[b_idx]),
    rhs=sp.KroneckerDelta(a, b_idx) - _softmax_K(b_idx),
    assumptions=(B_IN_RANGE,),
    rule="differentiation",
    why="$\\log \\pi_a = \\theta_a - \\log \\sum_c e^{\\theta_c}$ and $\\partial \\theta_c / \\partial \\theta_b = "
        "\\delta_{bc}$; the index $b$ lies in the range of the sum ($K = b + n$, $n \\ge 0$), so the delta "
        "sifts out $e^{\\theta_b}$; the sum of exponentials is positive.",
    by=(*DIFFERENTIATION, rules.log_of_a_product_or_power, rules.sum_of_a_delta, rules.sum_of_signed_terms),
    # logits theta_k = log k: the softmax is k / (K (K + 1)/2), rational, for the evaluator's exact comparison
    model={logit: {k: sp.log(k) for k in range(1, 30)}},
)

# -- autoregressive factorisation -----------------------------------------------------------------
TOKENS = Assumption("$\\pi_{tok}(t, \\theta) = \\pi_\\theta(o_t | q, o_{<t}) > 0$ for the sampled completion "
                    "$o = (o_1, \\dots, o_T)$, and $\\pi_\\theta(o|q) = \\prod_{t=1}^{T} \\pi_{tok}(t, \\theta)$")
_sequence_probability = sp.Product(pi_tok(t, theta), (t, 1, T))
# token probabilities e^(t theta): their logs are t theta, so the evaluator compares exactly (a hint only)
_TOKEN_MODEL = {pi_tok: sp.Lambda((t, theta), sp.exp(t * theta))}

log_sequence_probability_is_sum_of_token_log_probabilities = Result(
    name="log_sequence_probability_is_sum_of_token_log_probabilities",
    doc="The log-probability of a completion is the sum of its token log-probabilities.",
    lhs=sp.log(_sequence_probability),
    rhs=sp.Sum(sp.log(pi_tok(t, theta)), (t, 1, T)),
    assumptions=(TOKENS,),
    rule="log of a product of positive factors",
    why="Each token probability is positive, so is their product.",
    by=(rules.log_of_product_is_sum_of_logs, rules.sum_of_signed_terms),
    model=_TOKEN_MODEL,
)

sequence_score_is_sum_of_token_scores = Result(
    name="sequence_score_is_sum_of_token_scores",
    doc="Autoregressive factorisation: $\\nabla_\\theta \\log \\pi_\\theta(o|q) = "
        "\\sum_t \\nabla_\\theta \\log \\pi_\\theta(o_t | q, o_{<t})$.",
    lhs=sp.Derivative(sp.log(_sequence_probability), theta),
    rhs=sp.Sum(sp.Derivative(sp.log(pi_tok(t, theta)), theta), (t, 1, T)),
    assumptions=(TOKENS,),
    steps=(
        Step(sp.Derivative(sp.Sum(sp.log(pi_tok(t, theta)), (t, 1, T)), theta),
             "log_sequence_probability_is_sum_of_token_log_probabilities",
             "It holds for every $\\theta$, so it rewrites inside the derivative.",
             using=(log_sequence_probability_is_sum_of_token_log_probabilities,), by=(rules.sum_of_signed_terms,)),
        Step(sp.Sum(sp.Derivative(sp.log(pi_tok(t, theta)), theta), (t, 1, T)), "derivative of a finite sum",
             by=DIFFERENTIATION),
    ),
    model=_TOKEN_MODEL,
)

sequence_policy_gradient_is_reward_times_sum_of_token_scores = Remark(
    name="sequence_policy_gradient_is_reward_times_sum_of_token_scores",
    text="Taking the outcome space to be the finite set of completions of length at most $T_{max}$, "
         "score_function_identity and sequence_score_is_sum_of_token_scores combine to "
         "$\\nabla_\\theta E[r] = E[r(o) \\sum_t \\nabla_\\theta \\log \\pi_\\theta(o_t | q, o_{<t})]$; "
         "with baselined_policy_gradient_is_unbiased the same holds with $r - b$ for any baseline $b$ "
         "independent of $o$. The group mean $\\bar r$ of GRPO is not such a baseline for rollout $i$ "
         "(it contains $r_i$), see the GRPO surrogate family.",
)
