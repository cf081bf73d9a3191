"""The paper's claims, quoted, and what checks each: derivation results (with their role) and tests.

Text fields are ASCII with inline maths between ``$...$`` (typeset by ``latex.prose`` and shown as
GitHub maths in Markdown); quotations keep the abstract's own characters and are converted for LaTeX.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rules import Nature, Role

ARXIV = "2606.29238"
PAPER = ("Mishra, Chakraborty, Kapusuzoglu (2026), \"On the Policy Gradient Foundations of Group Relative "
         "Policy Optimization: Credit Assignment, Gradient Sparsity, and Rank Collapse\"")

PROPS = "tests/test_properties.py::"
ORACLE = "tests/test_oracle.py::"
TRAIN = "tests/test_synthetic_training.py::"
EST = "tests/test_estimators.py::"
RANK = "tests/test_rank.py::"
GRAM = "tests/test_gram.py::"
EMP = "tests/test_empirical.py::"
TRL = "tests/test_trl_crosscheck.py::"
D9 = "tests/test_d9_group_size.py::"
D10 = "tests/test_d10_credit_assignment.py::"
SHARED = "tests/test_shared_parameter_sparsity.py::"
REVIEW = "tests/test_review_closed_forms.py::"
DERIVATION_TEST = "tests/test_derivations.py::test_derivation_is_proved[{family}.{name}]"


@dataclass(frozen=True)
class Cited:
    name: str
    role: Role
    condition: str = ""
    setting: str = ""  # a counterexample's model and assumptions, when it is not the claim's own setting

    def __post_init__(self) -> None:
        if self.role in (Role.REFUTES, Role.WITNESS) and not self.condition.strip():
            raise ValueError(f"{self.name}: a cited {self.role.value} states what it shows (condition=)")


@dataclass(frozen=True)
class Claim:
    """One claim, with the evidence for its two verdicts (``grpo_verify.report.rules``): ``cited`` decides
    the claim as worded (roles SUPPORTS, REFUTES, CONTEXT), ``strongest_cited`` the statement
    ``strongest`` that we prove in its place, its conditions written into it (roles SUPPORTS, CONTEXT).
    The tests serve both levels."""

    key: str  # "C0" ... "C7", "F1"
    title: str
    quote: str  # the abstract's fragment ("" for our own findings)
    kind: str  # "theorem", "empirical" or "finding"
    statement: str  # the reading: what is proved or measured around the claim, in words
    cited: tuple[Cited, ...]
    tests: tuple[str, ...]  # pytest node ids (function level); derivation tests are added per cited result
    strongest: str  # the strongest statement proved in the claim's place, with its conditions
    strongest_cited: tuple[Cited, ...]
    empirical: str = ""  # "sparsity", "rank", "attribution" or ""
    nature: Nature = Nature.THEOREM  # what the wording is about (rules.Nature)


S, X, K, W = Role.SUPPORTS, Role.REFUTES, Role.CONTEXT, Role.WITNESS

NOT_PARALLEL = ("with std scaling and three reward levels GRPO's expected update is not parallel to $\\nabla J$ "
                "(an exact three-action bandit, $R = 2$)")

# The setting of D10's counterexamples to C7: a model, not the claim's own (multi-step reasoning at large).
D10_MODEL = ("D10's model: an $H$-step chain of independent steps of equal difficulty $q$, binary step outcomes, exact "
             "$Q$ and $V$, judged by the SNR of one gradient sample at the last step, i.e. for a small-step update at a "
             "fixed learning rate (plain SGD); it says nothing of an adaptive optimizer, a tuned learning rate or the "
             "order in which training learns the steps")
# The same model trained (experiments/results/credit_assignment/arms_table.md), where the claim is borne out.
D10_TRAINED = ("D10's model trained with sampled updates (experiments/results/credit_assignment/arms_table.md: $R = 8$, "
               "5 seeds, $q_0 = 1/2$ per step, each arm at its best learning rate on a grid extended until it brackets "
               "it): at $H = 24$ exact per-step credit reaches $p = 0.9$ in a median of 5 updates with Adam or per-step "
               "normalisation, a process reward in tens, and outcome-only GRPO (SGD or Adam) at none of the 21 "
               "learning rates tried, $4^{-10}$ to $4^{10}$, within 20000 updates; the SNR of an early step is free of $H$ with exact credit and "
               "$p/(1-p) \\approx q^H$ outcome-only")

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "C0", "A derivation of GRPO from the policy gradient theorem",
        "a rigorous derivation of GRPO from first principles of the policy gradient theorem",
        "theorem",
        "The score-function identity $\\nabla J = E[r \\nabla \\log \\pi]$, its invariance to a baseline and the "
        "autoregressive factorisation of the score (D1) give the policy gradient of a completion; at "
        "$\\theta = \\theta_{old}$ the gradient of GRPO's clipped surrogate is the advantage-weighted score, and the "
        "first on-policy gradients of GRPO, Dr. GRPO and DAPO differ only in their token weights (D2). The form of the "
        "update follows, but not GRPO as a policy-gradient method in general: its group baseline shrinks the expected "
        "gradient by $(R-1)/R$, and its std scaling rescales it (binary rewards) or turns it (three reward levels) "
        "(D5). The regime rule applies as to every claim: the derivation holds up to a positive factor for binary "
        "rewards only, and the three-level counterexample, outside that regime, refutes the wording.",
        (Cited("score_function_identity", S),
         Cited("baselined_policy_gradient_is_unbiased", S),
         Cited("sequence_score_is_sum_of_token_scores", S),
         Cited("clipped_term_gradient_at_old_policy_is_advantage_times_score", S),
         Cited("k3_gradient_is_one_minus_ratio_times_score", S),
         Cited("grpo_first_gradient_is_length_normalised_advantage_weighted_score", S),
         Cited("dr_grpo_first_gradient_is_unnormalised_advantage_weighted_score", S),
         Cited("dapo_first_gradient_is_token_mean_advantage_weighted_score", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R2", X,
               "with std scaling and three reward levels GRPO's expected update is not parallel to $\\nabla J$ "
               "($R = 2$): GRPO follows from the policy gradient theorem only up to a positive factor, and only for "
               "binary rewards")),
        (PROPS + "test_d1_softmax_score_expression_equals_autograd_scores",
         PROPS + "test_d1_softmax_policy_gradient_expression_equals_autograd",
         PROPS + "test_d1_sequence_score_expression_is_sum_of_token_scores",
         PROPS + "test_d2_surrogate_first_gradient_equals_derivation",
         PROPS + "test_d2_k3_gradient_equals_derivation_and_vanishes_at_reference",
         TRL + "test_loss_and_gradient_match_trl"),
        "At $\\theta = \\theta_{old}$ (the first on-policy step) the GRPO update is $\\frac{1}{R} \\sum_i A_i w_{i,t} "
        "\\nabla \\log \\pi(o_{i,t})$ summed over tokens, with the loss type's token weights $w_{i,t}$; with the "
        "group-mean baseline and no std its expectation is $\\frac{R-1}{R} \\nabla J$ -- exactly $\\frac{R-1}{R}$ "
        "times the unbiased leave-one-out (RLOO) estimator; with std scaling and binary rewards it is "
        "$c_R(p) \\nabla J$, $c_R(p) > 0$; with three reward levels it is not parallel to $\\nabla J$. So GRPO is a "
        "policy-gradient method up to a positive factor for binary rewards, and not in direction for graded rewards "
        "with std scaling.",
        (Cited("clipped_term_gradient_at_old_policy_is_advantage_times_score", S),
         Cited("grpo_first_gradient_is_length_normalised_advantage_weighted_score", S),
         Cited("group_baseline_gradient_is_shrunk_by_R_minus_1_over_R", S),
         Cited("no_std_group_estimator_is_scaled_rloo_estimator", S),
         Cited("leave_one_out_baseline_is_unbiased", S),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R2", W, NOT_PARALLEL),
         Cited("c_R_sample_std_is_positive_for_every_R", K),
         Cited("c_R_population_std_is_positive_for_every_R", K)),
    ),
    Claim(
        "C1", "Credit collapse under outcome-only reward",
        "under output-only reward, every token in a rollout receives identical advantage, collapsing "
        "token-level credit to a single scalar",
        "theorem",
        "For outcome-only reward, the token advantage $A_{i,t}$ of GRPO equals the sequence advantage $A_i$ for "
        "every token $t$ of rollout $i$ (and equals the $\\gamma = 1$ return-to-go of the normalised reward). "
        "Per rollout, credit is one scalar. Across a group the $R \\times T$ token-advantage matrix has rank equal "
        "to the number of distinct completion lengths among rollouts with $A_i \\ne 0$, not 1; with $\\gamma < 1$ "
        "or GAE the advantages differ along the completion.",
        (Cited("token_advantage_equals_sequence_advantage_under_outcome_reward", S),
         Cited("undiscounted_return_to_go_of_outcome_reward_is_final_reward", S),
         Cited("normalised_return_to_go_equals_sequence_advantage_under_outcome_reward", S),
         Cited("discounted_return_to_go_differs_along_completion", K),
         Cited("gae_token_advantages_differ_under_outcome_reward", K),
         Cited("token_advantage_matrix_rank_is_three_for_three_distinct_lengths", K),
         Cited("token_advantage_matrix_rank_is_one_for_equal_lengths", K)),
        (PROPS + "test_d3_token_advantages_and_rank_equal_derivation",
         PROPS + "test_d3_exact_rank_instances_match_the_code",
         EST + "test_token_advantages_broadcast_times_mask",
         TRL + "test_advantages_match_trl"),
        "For outcome-only reward and every $R$, $T_i$, $t$: $A_{i,t} = A_i$ (GRPO's estimator, equal to the "
        "$\\gamma = 1$ return-to-go of the normalised reward); the completion masks of distinct lengths are "
        "linearly independent (every $T$), and with $\\gamma < 1$ or GAE the credit varies along the completion. "
        "That the group's token-advantage matrix has rank = the number of distinct completion lengths among "
        "rollouts with $A_i \\ne 0$ follows (D3's remark) and is checked exactly on $R = 4$ instances, not proved "
        "by the kernel for every $R$.",
        (Cited("token_advantage_equals_sequence_advantage_under_outcome_reward", S),
         Cited("normalised_return_to_go_equals_sequence_advantage_under_outcome_reward", S),
         Cited("prefix_indicator_rows_of_distinct_lengths_are_independent", S),
         Cited("token_advantage_matrix_rank_ignores_zero_advantage_rollouts", K),
         Cited("discounted_return_to_go_differs_along_completion", S),
         Cited("gae_token_advantages_differ_under_outcome_reward", S)),
        nature=Nature.DEFINITIONAL,
    ),
    Claim(
        "C2", "Gradient sparsity that intensifies over training",
        "We prove this induces gradient sparsity that intensifies over training",
        "theorem",
        "A group whose $R$ binary rewards are all equal has zero advantages and contributes exactly zero gradient; "
        "this happens with probability $z_R(p) = p^R + (1-p)^R \\ge 2^{1-R}$, minimal at $p = 1/2$ and increasing "
        "in $|p - 1/2|$. Under the no-std update $\\theta \\leftarrow \\theta + \\eta \\hat g$ the expected drift of "
        "$p$ is $\\eta \\frac{R-1}{R}\\|\\nabla p\\|^2 \\ge 0$ to first order in the step size $\\eta$ (for a prompt's "
        "own update and any differentiable policy: $E[\\hat g] = \\frac{R-1}{R} \\nabla p$ coordinatewise); the std-scaled (real GRPO) "
        "update drifts the same way, at the rate $\\eta c_R(p)\\|\\nabla p\\|^2$ with $c_R(p) > 0$ (proved for "
        "every $R \\ge 2$, $0 < p < 1$). So the first-order change of $z_R(p)$ is $\\kappa z_R'(p)$ with a rate $\\kappa > 0$: "
        "positive once $p > 1/2$, negative while $p < 1/2$. Sparsity intensifies only in the second regime of "
        "training; finite-step dynamics are left to simulation, which shows the fall, then the rise. With parameters "
        "shared across prompts the sign is not a prompt's own: two prompts sharing one logit ($p_A = 1/2$, "
        "$p_B = 1/4$) see $p_B$ fall and $z_R(p_B)$ rise to first order although $p_B < 1/2$ (every $R$). On 'this "
        "induces': the zero-gradient groups come from the group baseline under binary reward (all advantages of an "
        "all-equal group are zero), not from every token getting the same advantage -- with no baseline an "
        "all-success group's gradient is not zero. Three meanings "
        "of sparsity are measured below: zero-gradient groups (the one the maths speaks of), near-zero coordinates "
        "of the step's gradient, and parameters whose stored value an update leaves unchanged (in the model's "
        "dtype and in bf16, the definition of Mukherjee et al. 2025, arXiv 2505.11711), with the rank of the "
        "accumulated update, from real runs through TRL's GRPOTrainer with GRPOVerifyCallback.",
        (Cited("degenerate_group_contributes_zero_gradient", S),
         Cited("first_order_change_of_zero_gradient_probability_is_negative_below_half", X,
               "while $p < 1/2$ the first-order change $\\kappa z_R'(p)$ of the zero-gradient probability is negative "
               "(every $R \\ge 2$): sparsity falls in that part of training"),
         Cited("first_order_change_of_zero_gradient_probability_is_positive_above_half", K),
         Cited("no_std_update_direction_is_R_minus_1_over_R_times_gradient", K),
         Cited("shared_parameter_prompt_below_half_zero_gradient_probability_rises_to_first_order", K),
         Cited("no_baseline_all_success_group_gradient_is_not_zero", K)),
        (PROPS + "test_d6_zero_advantage_probability_equals_derivation",
         PROPS + "test_d6_minimum_two_pow_one_minus_R_is_attained_at_one_half",
         PROPS + "test_d6_first_order_drift_equals_derivation",
         ORACLE + "test_zero_advantage_probability_is_p_pow_R_plus_q_pow_R",
         EST + "test_degenerate_groups_give_exact_zeros_never_nan",
         TRAIN + "test_exact_success_probability_and_zero_gradient_probability",
         TRAIN + "test_exact_zero_gradient_probability_rises_when_every_prompt_starts_above_half",
         TRAIN + "test_exact_zero_gradient_probability_falls_while_every_prompt_stays_below_half",
         TRAIN + "test_structural_zeros_are_exact_zeros_and_features_policy_is_dense",
         SHARED + "test_shared_logit_flips_the_sign_for_a_prompt_below_half",
         SHARED + "test_twin_where_the_own_gradient_dominates_keeps_the_single_prompt_sign"),
        "Every group with equal binary rewards contributes exactly zero gradient, with probability "
        "$z_R(p) = p^R + (1-p)^R \\ge 2^{1-R}$ (every $R$). To first order in the step size $\\eta$, the expected "
        "change of $z_R(p)$ under the no-std update is $\\kappa z_R'(p)$ with $\\kappa = \\eta \\frac{R-1}{R} "
        "\\|\\nabla p\\|^2$ (a prompt's own update, any differentiable policy; $\\eta c_R(p)\\|\\nabla p\\|^2$ for the "
        "std-scaled update): it is positive for $p \\in (1/2, 1]$ and negative for $p \\in [0, 1/2)$, for every "
        "$R \\ge 2$. Sparsity intensifies once the success probability is past $1/2$, to first order, for a "
        "prompt's own update; with a logit shared by two prompts a prompt below $1/2$ can see its zero-gradient "
        "probability rise (an exact instance, every $R$). The zeros come from the group baseline: without one an "
        "all-success group's gradient is not zero.",
        (Cited("degenerate_group_contributes_zero_gradient", S),
         Cited("all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R", S),
         Cited("zero_gradient_probability_is_at_least_two_pow_one_minus_R", S),
         Cited("no_std_update_direction_is_R_minus_1_over_R_times_gradient", S),
         Cited("first_order_change_of_zero_gradient_probability_is_positive_above_half", S),
         Cited("first_order_change_of_zero_gradient_probability_is_negative_below_half", S),
         Cited("first_order_change_of_a_function_of_p_is_its_slope_times_the_drift_of_p", S),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", S),
         Cited("shared_parameter_prompt_below_half_zero_gradient_probability_rises_to_first_order", W,
               "two prompts sharing one logit ($p_A = 1/2$, $p_B = 1/4$): $z_R(p_B)$ rises to first order although "
               "$p_B < 1/2$, every $R$"),
         Cited("no_baseline_all_success_group_gradient_is_not_zero", W,
               "with no baseline an all-success group's gradient is $2/3 \\ne 0$ in its first coordinate: the zero "
               "comes from the group baseline"),
         Cited("first_order_drift_of_success_probability_R2", K),
         Cited("first_order_drift_of_success_probability_R3", K),
         Cited("c_R_sample_std_is_positive_for_every_R", K),
         Cited("c_R_population_std_is_positive_for_every_R", K)),
        empirical="sparsity",
    ),
    Claim(
        "C3", "Effective rank about 2 on Nemotron-4B/GSM8K, for every group size",
        "demonstrate empirically via SVD analysis of GRPO gradients on Nemotron-4B/GSM8K that the gradient "
        "matrix has effective rank \u2248 2 regardless of group size R \u2208 {2, 4, 8}",
        "empirical",
        "An empirical claim about one model. The mathematics does not imply it (D7): $\\operatorname{rank}"
        "(\\operatorname{diag}(A) G)$ is the rank of the rows of $G$ with $A_i \\ne 0$ -- equal to "
        "$\\operatorname{rank}(G)$, generically $\\min(R, P)$, when every $A_i \\ne 0$ (binary rewards, $0 < k < R$), "
        "0 for a degenerate group, and with three or more reward levels a mixed group can have an exactly-zero "
        "$A_i$; even a rank-2 matrix has effective rank 2 only for equal singular values. For $R = 2$ every "
        "$R$-row matrix has rank at most 2, so $R = 2$ cannot discriminate. 'The gradient matrix' admits two "
        "readings, both registered here before any run of the paper's model and both deciding the verdict: (1) the "
        "effective rank of the $R \\times R$ Gram of $\\operatorname{diag}(A) G$, $G$ the whole-model per-rollout "
        "gradients; (2) the stable rank of each layer's weight gradient $\\sum_i A_i \\partial l_i / \\partial W$, "
        "median over the 2-D weights. Confirmed only if both are about 2 at $R = 2, 4, 8$, refuted only if both are "
        "clearly not at some $R$. Measured per rank definition and per matrix below.",
        (Cited("group_gradient_has_rank_at_most_one", K),
         Cited("advantage_weighted_scores_have_rank_four_for_R4", K),
         Cited("equal_singular_values_give_effective_rank_two", K),
         Cited("unequal_singular_values_give_effective_rank_below_two", K),
         Cited("two_cluster_example_singular_value_share_is_not_one_half", K)),
        (RANK + "test_known_values",
         RANK + "test_k_equal_singular_values",
         RANK + "test_gram_route_equals_svd_route",
         RANK + "test_stable_rank_le_participation_ratio_le_effective_rank",
         GRAM + "test_engine_equals_naive_loop",
         GRAM + "test_grpo_gradients_equal_autograd",
         GRAM + "test_nemotron_like_model_uses_the_exact_fallback_for_layer_norm_1p",
         EMP + "test_gram_derived_matrices_match_explicit_G",
         PROPS + "test_d7_two_cluster_scores_have_rank_at_most_two",
         PROPS + "test_d7_spread_out_scores_give_effective_rank_above_three"),
        "No mathematical reason for effective rank about 2 at every $R$: for binary rewards with $0 < k < R$ both "
        "advantage values are nonzero, so $\\operatorname{diag}(A)$ is invertible and "
        "$\\operatorname{rank}(\\operatorname{diag}(A) G) = \\operatorname{rank}(G)$ (rank 4 in an $R = 4$ instance); "
        "rank at most 2 holds under the extra two-cluster assumption on the score vectors (proved at $R = 4$ and "
        "$R = 8$ only), and a rank-2 matrix has effective rank at most 2, exactly 2 only for equal singular values "
        "(an exact two-cluster instance has about 1.80). What was measured "
        "instead is below.",
        (Cited("binary_advantage_product_is_negative", S),
         Cited("advantage_weighted_scores_have_rank_four_for_R4", W,
               "zero-sum binary advantages with $\\operatorname{rank}(\\operatorname{diag}(A) G) = 4$ at $R = 4$"),
         Cited("two_cluster_advantage_weighted_scores_have_rank_at_most_two_R4", S),
         Cited("two_cluster_advantage_weighted_scores_have_rank_at_most_two_R8", S),
         Cited("two_point_entropy_is_at_most_log_two", S),
         Cited("equal_singular_values_give_effective_rank_two", W,
               "equal singular values give effective rank exactly 2"),
         Cited("unequal_singular_values_give_effective_rank_below_two", W,
               "singular values in ratio 3 : 1 give effective rank below 2"),
         Cited("two_cluster_example_singular_value_share_is_not_one_half", W,
               "an exact two-cluster instance whose effective rank is about 1.80, not 2")),
        empirical="rank",
    ),
    Claim(
        "C4", "Rank 2 from the zero-sum constraint",
        "We formalize this as an intrinsic rank-2 structure arising from the zero-sum constraint on advantages",
        "theorem",
        "Zero-sum holds: $\\sum_i A_i = 0$ for every convention, with $\\sum_i A_i^2 = R - 1$ (sample std). "
        "It does not give rank 2: centring ($C = I - \\mathbf{1}\\mathbf{1}^T/R$, the zero-sum projection) bounds the "
        "centred score matrix by rank $R - 1$ and the bound is attained; $\\operatorname{diag}(A) G$ keeps the rank "
        "of the rows of $G$ with $A_i \\ne 0$; a layer's weight gradient sums one outer product per token. What "
        "zero-sum does give is stronger in one direction and weaker in another: the update depends on $G$ only "
        "through the centred scores, and for binary rewards it is one vector for every $R$.",
        (Cited("advantages_sum_to_zero", S),
         Cited("centred_scores_have_rank_three_for_R4", X,
               "with zero-sum (centred) weights the $R = 4$ score matrix keeps rank 3 = $R - 1$, not 2"),
         Cited("advantage_weighted_scores_have_rank_four_for_R4", X,
               "$\\operatorname{diag}(A) G$ with zero-sum advantages $A = (3/2, -1/2, -1/2, -1/2)$ has rank 4 at $R = 4$"),
         Cited("layer_weight_gradient_has_rank_five_with_two_rollouts", X,
               "a linear layer's GRPO weight gradient has rank 5 with $R = 2$, $A = (1, -1)$"),
         Cited("centring_matrix_has_rank_R_minus_1", K)),
        (PROPS + "test_d4_binary_closed_forms_for_every_R_and_k",
         PROPS + "test_d4_binary_advantages_equal_closed_forms",
         PROPS + "test_d7_binary_group_gradient_is_class_mean_difference",
         PROPS + "test_d7_two_cluster_scores_have_rank_at_most_two",
         PROPS + "test_d7_spread_out_scores_give_effective_rank_above_three",
         PROPS + "test_d7_rank_four_instance_matches_the_code",
         EST + "test_advantages_sum_to_zero_per_group",
         EST + "test_sum_of_squares_is_r_minus_one_for_sample_std_and_r_for_population",
         EMP + "test_gram_derived_matrices_match_explicit_G"),
        "For any rewards and every $R$: $\\sum_i A_i = 0$, so the group update $G^T A = (C G)^T A$ depends on the "
        "score vectors only through the centred scores, whose rank is at most $R - 1$ (the centring matrix has rank "
        "exactly $R - 1$; centring removes a dimension only when $\\mathbf{1} \\in \\operatorname{col}(G)$: "
        "$\\operatorname{rank}(C G) = \\operatorname{rank}(G) - \\dim(\\operatorname{col}(G) \\cap \\operatorname{span} "
        "\\mathbf{1})$ by rank-nullity -- D7's remark, checked exactly on two $R = 4$ instances, not proved by the "
        "kernel for every $R$); for binary rewards with "
        "$0 < k < R$ the update is $k a_+ (\\bar g_C - \\bar g_W)$ -- one "
        "direction built from the two class means, every $R$; a batch of groups spans at most as many directions "
        "as it has non-degenerate groups. Rank at most 2 of the per-rollout matrices needs the extra two-cluster "
        "assumption. The 'rank-2 structure' that zero-sum does give is this: two class means, one direction.",
        (Cited("advantages_sum_to_zero", S),
         Cited("centred_advantages_sum_to_zero", S),
         Cited("squared_sample_std_advantages_sum_to_R_minus_1", S),
         Cited("group_gradient_depends_only_on_centred_scores", S),
         Cited("centring_matrix_has_rank_R_minus_1", S),
         Cited("binary_group_gradient_is_class_mean_difference", S),
         Cited("common_score_component_cancels_from_group_gradient", S),
         Cited("two_cluster_centred_rows_are_multiples_of_class_mean_difference", S),
         Cited("score_matrices_of_the_centring_instances_have_rank_three", K),
         Cited("centring_removes_a_dimension_only_when_ones_is_in_the_column_space", K),
         Cited("two_cluster_advantage_weighted_scores_have_rank_at_most_two_R4", K),
         Cited("two_cluster_advantage_weighted_scores_have_rank_at_most_two_R8", K)),
        empirical="attribution",
    ),
    Claim(
        "C5", "Conditions for GRPO's baseline to be optimal",
        "derive conditions under which GRPO's baseline is optimal",
        "theorem",
        "The variance-minimising constant baseline is $b^* = E[r\\|g\\|^2]/E\\|g\\|^2$; the mean reward is optimal "
        "iff $\\operatorname{Cov}(r, \\|g\\|^2) = 0$ (softmax bandit: iff $\\operatorname{Cov}_{a \\sim \\pi}(r_a, "
        "\\pi_a) = 0$, e.g. a uniform policy or constant reward). Counterexample to unconditional optimality: "
        "$\\pi = (1/2, 1/4, 1/4)$, $r = (1, 0, 0)$ gives $b^* = 3/10 \\ne 1/2$ with $K$ free logits ($5/14$ with a "
        "fixed reference logit, where the mean baseline's excess variance is $1/112$ instead of $1/40$: $b^*$ and the "
        "criterion depend on the parametrisation). GRPO's own baseline is not a constant: the no-std estimator is "
        "exactly $\\frac{R-1}{R}$ times the leave-one-out (RLOO) estimator, and that baseline is never exactly optimal "
        "at a finite $R$ outside degenerate cases: $\\operatorname{Var}(U) - V(b^*)/R = \\frac{V_{or} - V(b^*)}{R} + "
        "\\frac{\\operatorname{Var}(r) E\\|g\\|^2 + \\|\\nabla J\\|^2}{R(R-1)} > 0$ whenever $\\operatorname{Var}(r) "
        "E\\|g\\|^2 > 0$ (D9, every $R \\ge 2$; it vanishes only for a constant reward or a zero score). Only the "
        "abstract is public; the paper's own conditions are not, so its wording is compared, not its derivation.",
        (Cited("total_variance_is_minimised_by_optimal_baseline", S),
         Cited("optimal_baseline_minus_mean_reward_is_covariance_ratio", S),
         Cited("softmax_optimal_baseline_minus_mean_reward", S),
         Cited("uniform_policy_makes_mean_baseline_optimal", S),
         Cited("constant_reward_makes_mean_baseline_optimal", S),
         Cited("softmax_example_mean_baseline_is_not_optimal", K),
         Cited("group_mean_baseline_is_never_optimal_at_finite_R", K)),
        (PROPS + "test_d8_optimal_baseline_equals_closed_form_and_minimises_variance",
         PROPS + "test_d8_mean_baseline_is_optimal_under_the_covariance_condition",
         PROPS + "test_d8_mean_baseline_is_not_optimal_without_the_covariance_condition",
         ORACLE + "test_optimal_baseline_minimises_the_total_variance",
         ORACLE + "test_coordinatewise_optimal_baseline_minimises_each_coordinate",
         ORACLE + "test_optimal_baseline_counterexample_of_D8",
         REVIEW + "test_softmax_example_optimal_baseline_and_mean_baseline_excess",
         REVIEW + "test_group_mean_baseline_excess_over_optimal_baseline_by_enumeration",
         REVIEW + "test_group_mean_baseline_excess_vanishes_for_a_constant_reward"),
        "Among constant baselines the total variance is minimised by $b^* = E[r\\|g\\|^2]/E\\|g\\|^2$, and the "
        "population mean $E[r]$ is optimal iff $\\operatorname{Cov}(r, \\|g\\|^2) = 0$; for a softmax bandit with $K$ "
        "free logits iff $\\operatorname{Cov}_{a \\sim \\pi}(r_a, \\pi_a) = 0$ ($b^* = 3/10$ on the example; with a fixed "
        "reference logit $b^* = 5/14$: the criterion depends on the parametrisation). GRPO's baseline is the group "
        "mean, not a constant: $r_i - \\bar r = \\frac{R-1}{R}(r_i - \\bar r_{-i})$, so the no-std estimator is "
        "$\\frac{R-1}{R}$ times RLOO, whose leave-one-out baseline is independent of $o_i$. It is never better than "
        "the best constant baseline: $\\operatorname{Var}(U) - V(b^*)/R = \\frac{V_{or} - V(b^*)}{R} + "
        "\\frac{\\operatorname{Var}(r) E\\|g\\|^2 + \\|\\nabla J\\|^2}{R(R-1)}$, strictly positive when "
        "$\\operatorname{Var}(r) E\\|g\\|^2 > 0$ and 0 only when the reward is constant or the score zero; as a "
        "ratio, $\\operatorname{Var}(U) \\ge V(b^*)/R$ for every $R$, by the factor "
        "$\\ge (1 + \\frac{c}{R-1}) V_{or}/V(b^*)$ with $c = (\\operatorname{Var}(r) E\\|g\\|^2 + \\|\\nabla J\\|^2)/V_{or}$, "
        "which is 0 only when $\\operatorname{Var}(r) E\\|g\\|^2 = 0$ and $\\nabla J = 0$ (D9, from Hoeffding's "
        "formula, proved there for every $R$).",
        (Cited("total_variance_is_minimised_by_optimal_baseline", S),
         Cited("optimal_baseline_minus_mean_reward_is_covariance_ratio", S),
         Cited("softmax_optimal_baseline_minus_mean_reward", S),
         Cited("softmax_example_optimal_baseline_is_three_tenths", W,
               "$\\pi = (1/2, 1/4, 1/4)$, $r = (1, 0, 0)$, $K$ free logits: $b^* = 3/10 \\ne E[r] = 1/2$"),
         Cited("softmax_example_optimal_baseline_with_a_reference_logit_is_five_fourteenths", W,
               "the same bandit with a fixed reference logit: $b^* = 5/14$, so $b^*$ depends on the parametrisation"),
         Cited("softmax_example_mean_baseline_excess_variance_is_one_fortieth", W,
               "the mean baseline's excess variance over $b^*$ is $1/40$ with $K$ free logits"),
         Cited("softmax_example_mean_baseline_excess_variance_with_a_reference_logit_is_one_over_112", W,
               "and $1/112$ with a fixed reference logit"),
         Cited("group_mean_baseline_excess_variance_over_optimal_baseline", S),
         Cited("group_mean_baseline_is_never_optimal_at_finite_R", S),
         Cited("group_centred_reward_is_scaled_leave_one_out_reward", S),
         Cited("no_std_group_estimator_is_scaled_rloo_estimator", S),
         Cited("rloo_variance_ratio_to_optimal_baseline_is_at_least_oracle_ratio", S),
         Cited("rloo_variance_constant_c_is_nonnegative", S)),
        nature=Nature.ABOUT_THE_PAPER,
    ),
    Claim(
        "C6", "When GRPO's simplicity is justified",
        "our results characterize when GRPO's simplicity is theoretically justified",
        "theorem",
        "GRPO's simplifications are a group-mean baseline instead of a learned critic and the std scaling. Only "
        "the abstract is public, so verdict (a) asks whether such a characterisation holds, not whether the "
        "paper's does. It does, exactly (D9, D5): the no-std estimator is $\\frac{R-1}{R}$ times RLOO, a "
        "U-statistic of order 2 with kernel $h = \\frac{1}{2}(r_i - r_j)(g_i - g_j)$ (anchor: arXiv 2603.01162); "
        "its variance is $\\frac{V_{or}}{R}(1 + \\frac{c}{R-1})$ against $\\frac{V_{or}}{R}$ for the oracle baseline "
        "$E[r]$, with $c = (\\operatorname{Var}(r) E\\|g\\|^2 + \\|\\nabla J\\|^2)/V_{or} \\ge 0$ -- a price of "
        "$1 + O(1/R)$ with an explicit constant that has no upper bound (an exact model where the oracle baseline "
        "has zero variance and RLOO does not). For binary rewards std scaling only rescales the expected update; "
        "with three reward levels it turns it. Exact tables of every estimator's variance against $R$ are in "
        "experiments/results/group_size_variance.",
        (Cited("rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1", S),
         Cited("rloo_variance_constant_c_is_nonnegative", S),
         Cited("no_std_mse_ratio_to_oracle_variance", S),
         Cited("no_std_group_estimator_is_scaled_rloo_estimator", S),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R2", W, NOT_PARALLEL),
         Cited("rloo_can_be_infinitely_worse_than_oracle_baseline", K)),
        (D9 + "test_oracle_baseline_estimator_variance_is_V_or_over_R",
         D9 + "test_rloo_variance_closed_form",
         D9 + "test_rloo_variance_ratio_to_oracle_is_one_plus_c_over_R_minus_1",
         D9 + "test_hoeffding_zetas_by_enumerating_pairs",
         D9 + "test_rloo_variance_is_hoeffdings_formula",
         D9 + "test_moments_of_iid_sums_count_index_coincidences_exactly",
         D9 + "test_no_std_mse_closed_form",
         D9 + "test_optimal_baseline_group_variance_is_V_b_star_over_R",
         D9 + "test_binary_sample_std_estimator_at_R2_is_rloo_over_sqrt2",
         D9 + "test_rloo_can_be_infinitely_worse_than_the_oracle_baseline",
         PROPS + "test_d5_binary_scaled_gradient_is_c_R_times_gradient",
         PROPS + "test_d5_three_reward_levels_break_parallelism_found_by_hypothesis"),
        "Direction: the no-std (Dr. GRPO) estimator is $\\frac{R-1}{R}$ times RLOO, whose expectation is "
        "$\\nabla J$; with binary rewards the std-scaled estimator's is $c_R(p) \\nabla J$ with $c_R(p) > 0$ for "
        "every $R$ (a step size; D5, every $R$); with three reward levels it is not parallel to $\\nabla J$. Variance, for every "
        "$R \\ge 2$: $\\operatorname{Var}(U) = \\frac{V_{or}}{R} + \\frac{\\operatorname{Var}(r) E\\|g\\|^2 + "
        "\\|\\nabla J\\|^2}{R(R-1)}$, i.e. $\\frac{V_{or}}{R}(1 + \\frac{c}{R-1})$, $0 \\le c/(R-1) \\le 2c/R$; the "
        "no-std MSE over $V_{or}/R$ is $1 + \\frac{c + \\kappa - 2}{R} + \\frac{1 - c}{R^2}$ with $\\kappa = "
        "\\|\\nabla J\\|^2/V_{or}$ (below 1 for large $R$ when $c + \\kappa < 2$); against the best constant baseline, "
        "$\\operatorname{Var}(U)/(V(b^*)/R) \\ge V_{or}/V(b^*) \\ge 1$. These follow from Hoeffding's variance "
        "formula for a U-statistic, proved here for RLOO and every $R$ by counting which rollouts coincide in "
        "$E[U^2]$, and also checked by exact enumeration on finite models ($R \\le 4$) and by the property tests "
        "($R \\le 6$); the U-statistic form itself is proved for every $R$.",
        (Cited("rloo_estimator_is_u_statistic_of_pair_kernel", S),
         Cited("rloo_variance_is_hoeffding_formula_for_every_R", S),
         Cited("oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R", S),
         Cited("c_R_sample_std_is_positive_for_every_R", S),
         Cited("pair_kernel_is_unbiased", S),
         Cited("first_projection_variance_is_quarter_oracle_variance", S),
         Cited("pair_kernel_variance_closed_form", S),
         Cited("rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1", S),
         Cited("rloo_variance_constant_c_is_nonnegative", S),
         Cited("rloo_variance_closed_form", S),
         Cited("rloo_variance_ratio_excess_is_between_zero_and_2c_over_R", S),
         Cited("no_std_group_estimator_mse_closed_form", S),
         Cited("no_std_mse_ratio_to_oracle_variance", S),
         Cited("optimal_baseline_variance_is_oracle_variance_minus_covariance_term", S),
         Cited("rloo_variance_ratio_to_optimal_baseline_is_at_least_oracle_ratio", S),
         Cited("rloo_variance_formula_is_exact_on_finite_models", K),
         Cited("no_std_mse_formula_is_exact_on_finite_models", K),
         Cited("no_std_group_estimator_is_scaled_rloo_estimator", S),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R2", W, NOT_PARALLEL),
         Cited("rloo_can_be_infinitely_worse_than_oracle_baseline", W,
               "an exact model where the oracle baseline has zero variance and RLOO does not: the constant $c$ "
               "has no upper bound")),
        nature=Nature.ABOUT_THE_PAPER,
    ),
    Claim(
        "C7", "Credit assignment as the key limit for multi-step reasoning",
        "identify the credit assignment bottleneck as the key limitation for multi-step reasoning",
        "theorem",
        "Made precise (D10): a task of $H$ steps, outcome reward 1 iff every step is right, step $h$ right with "
        "probability $q$ after a right prefix, so $p = q^H$; outcome-only estimators against exact per-step credit "
        "$Q - V$ from the enumerable policy (the best a critic or process reward model could give under the same "
        "objective). Both have the same expectation, $q^H (1 - q)$ per step: credit assignment changes variance, not "
        "direction or size. Exact credit raises the SNR of early steps (step $h$: a function of $q$ and $h$, not $H$) "
        "and removes all-zero groups, but at the last step, with optimal baselines, the two estimators are the same "
        "function of the rollout, so the rollouts needed for a fixed SNR grow by $1/q$ per added step with either. "
        "Where the exponential in $H$ enters: the size of the expected gradient ($q^H (1-q)$ at every step, for "
        "every estimator) and the SNR of outcome-only credit ($p/(1-p)$ at every step), but not the SNR of exact "
        "credit at an early step. So the answer depends on the update: judged by one sample's SNR at the last step "
        "(a small-step update at a fixed learning rate) exact credit still needs $1/q$ times more rollouts per added "
        "step; trained with Adam or per-step normalisation, where an early step's signal is its SNR, exact credit "
        "learns the steps in order in a few updates at every $H$ measured while outcome-only GRPO stalls. A per-step "
        "reward changes the objective ($\\partial J' / \\partial \\theta_h = q^h - q^{H+1}$). Scope: independent steps "
        "of equal difficulty, binary step outcomes, exact $Q$ and $V$. Measured: sampled training on exact chains "
        "(experiments/results/credit_assignment/arms_table.md: nine estimator x optimizer arms, $H$ up to 24, each at "
        "its bracketed best learning rate) and SmolLM2-135M on 1- to 4-digit addition (experiments/results/credit_assignment_real: reward and the fraction of "
        "zero-advantage groups against digits, every zero-advantage group all-wrong).",
        (Cited("last_step_samples_for_fixed_snr_grow_by_one_over_q_per_step_with_exact_credit", X,
               "with exact per-step credit ($Q - V$, the best a critic can give) the rollouts needed for a fixed SNR at "
               "the last step still grow by $1/q$ per added step, as for outcome-only: judged by that SNR, removing "
               "the credit-assignment problem leaves the exponential in $H$", setting=D10_MODEL),
         Cited("exact_credit_snr_depends_on_the_step_not_on_H", S, setting=D10_TRAINED),
         Cited("outcome_snr_without_baseline_is_p_over_one_minus_p", S, setting=D10_TRAINED),
         Cited("last_step_optimal_variances_coincide", X,
               "with optimal baselines, outcome-only and exact credit have the same variance at the last step",
               setting=D10_MODEL),
         Cited("exact_credit_mean_is_the_gradient", K),
         Cited("outcome_estimator_mean_is_the_gradient_for_every_baseline", K)),
        (D10 + "test_d10_per_step_means_and_variances_equal_the_closed_forms",
         D10 + "test_d10_closed_forms_equal_an_independent_brute_force",
         D10 + "test_d10_snr_closed_forms",
         D10 + "test_d10_group_mean_variance_equals_the_sample_covariance_formula",
         D10 + "test_d10_zero_gradient_probabilities",
         D10 + "test_d10_zero_gradient_probability_tends_to_one_with_H",
         D10 + "test_d10_training_estimators_match_the_library",
         D10 + "test_d10_theory_rows_follow_the_closed_forms"),
        "On an $H$-step chain with per-step success $q \\in (0, 1)$ and outcome reward ($p = q^H$), for every $H$ and "
        "step $h \\le H$: outcome-only (any constant baseline) and exact per-step credit both have mean "
        "$\\partial p / \\partial \\theta_h = q^H (1 - q)$; outcome-only without a baseline has SNR $p/(1-p)$ at every "
        "step, exact credit $q^h (1 - q)/(1 - 3q + 3q^2 - q^h (1 - q))$, independent of $H$; at $h = H$ with optimal "
        "baselines both have SNR $q^{H-1}/(1 - q^{H-1})$, and $R$ rollouts multiply an SNR by $R$, so the rollouts "
        "for a fixed SNR grow by at least $1/q$ per step for outcome-only and, at the last step, for exact credit "
        "too. An outcome-only group gives no gradient with probability at least $1 - Rp$; exact credit's first-step "
        "term is never zero. A per-step reward changes the objective and its gradient to $q^h - q^{H+1}$.",
        (Cited("chain_success_probability_is_q_pow_H", S),
         Cited("success_probability_gradient_per_step_is_p_times_one_minus_q", S),
         Cited("outcome_estimator_mean_is_the_gradient_for_every_baseline", S),
         Cited("exact_credit_mean_is_the_gradient", S),
         Cited("outcome_variance_for_a_constant_baseline", S),
         Cited("outcome_variance_with_the_optimal_baseline", S),
         Cited("exact_credit_variance_per_step", S),
         Cited("exact_credit_variance_with_the_optimal_state_baseline", S),
         Cited("last_step_optimal_variances_coincide", S),
         Cited("outcome_snr_without_baseline_is_p_over_one_minus_p", S),
         Cited("exact_credit_snr_depends_on_the_step_not_on_H", S),
         Cited("optimal_snr_at_the_last_step_is_q_pow_H_minus_1_over_its_complement", S),
         Cited("averaging_R_rollouts_multiplies_the_snr_by_R", S),
         Cited("samples_for_fixed_snr_grow_by_one_over_q_per_step", S),
         Cited("last_step_samples_for_fixed_snr_grow_by_one_over_q_per_step_with_exact_credit", S),
         Cited("outcome_zero_gradient_probability_is_at_least_one_minus_R_p", S),
         Cited("exact_credit_first_step_terms_are_never_zero", S),
         Cited("process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1", S),
         Cited("per_step_means_by_enumeration", K),
         Cited("per_step_variances_by_enumeration", K),
         Cited("group_mean_variance_by_enumeration", K)),
    ),
    Claim(
        "F1", "Additional finding: bias of the group baseline (D5)",
        "",
        "finding",
        "The group-mean baseline biases the policy gradient: $E[(r_i - \\bar r) g_i] = \\frac{R-1}{R}\\nabla J$; "
        "the leave-one-out mean is unbiased. With std scaling and binary rewards $E[A_i g_i] = c_R(p) \\nabla J$ "
        "(a closed form in $p$); with three reward values the expectation is not parallel to $\\nabla J$ (exact "
        "3-action counterexample; none exists with two actions). The std-scaled part conditions on one rollout: "
        "proved for every $R$ with the independence of rollout 1 from the others and the binomial law of their "
        "successes stated (the kernel has no rule for conditional expectations), and checked by enumerating every "
        "outcome tuple of a three-outcome model (sample std $R = 2, 3, 4$, population std $R = 2, 3$).",
        (Cited("group_baseline_gradient_is_shrunk_by_R_minus_1_over_R", S),
         Cited("leave_one_out_baseline_is_unbiased", S),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", S),
         Cited("sample_std_scaled_gradient_is_c_R_times_gradient_on_finite_model", K),
         Cited("population_std_scaled_gradient_is_c_R_times_gradient_on_finite_model", K),
         Cited("sample_std_scaled_gradient_is_c_R_times_gradient_for_every_R", S),
         Cited("population_std_scaled_gradient_is_c_R_times_gradient_for_every_R", S),
         Cited("c_R_sample_std_closed_forms", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R2", W, NOT_PARALLEL),
         Cited("three_reward_scaled_gradient_is_not_parallel_R3", W,
               "the same at $R = 3$: with std scaling and three reward levels the expected update is not parallel "
               "to $\\nabla J$"),
         Cited("two_action_expectations_are_multiples_of_one_vector", S)),
        (PROPS + "test_d5_binary_scaled_gradient_is_c_R_times_gradient",
         PROPS + "test_d5_three_reward_levels_break_parallelism_found_by_hypothesis",
         PROPS + "test_d5_counterexample_vectors_equal_the_oracle",
         ORACLE + "test_group_mean_baseline_shrinks_gradient_by_R_minus_1_over_R",
         ORACLE + "test_leave_one_out_baseline_is_unbiased",
         ORACLE + "test_std_scaled_gradient_with_binary_rewards_is_c_R_times_gradient",
         ORACLE + "test_std_scaled_gradient_with_three_reward_values_is_not_parallel",
         ORACLE + "test_group_baseline_bias_on_a_transformer"),
        "As worded (a finding of this suite). For every $R \\ge 2$: $E[(r_i - \\bar r) g_i] = \\frac{R-1}{R}\\nabla J$ "
        "and $E[(r_i - \\bar r_{-i}) g_i] = \\nabla J$. With binary rewards, $E[g_i h(r_i)] = (h(1) - h(0)) \\nabla J$ "
        "for any $h$, and $E[A_1 g_1] = c_R(p) \\nabla J$ with $c_R(p) > 0$ (sample and population std, every $R$, "
        "conditioning on rollout 1 made explicit by stated independence and the binomial law of the others' "
        "successes; also by enumeration for $R \\le 4$).",
        (Cited("group_baseline_gradient_is_shrunk_by_R_minus_1_over_R", S),
         Cited("leave_one_out_baseline_is_unbiased", S),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", S),
         Cited("sample_std_scaled_gradient_is_c_R_times_gradient_on_finite_model", K),
         Cited("sample_std_scaled_gradient_is_c_R_times_gradient_for_every_R", S),
         Cited("population_std_scaled_gradient_is_c_R_times_gradient_for_every_R", S),
         Cited("c_R_sample_std_is_positive_for_every_R", S),
         Cited("c_R_population_std_is_positive_for_every_R", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R2", W, NOT_PARALLEL)),
    ),
)


def claims_citing() -> dict[str, list[str]]:
    """{result name: the keys of the claims citing it, at either level, in ledger order}."""
    found: dict[str, list[str]] = {}
    for claim in CLAIMS:
        for cited in claim.cited + claim.strongest_cited:
            keys = found.setdefault(cited.name, [])
            if claim.key not in keys:
                keys.append(claim.key)
    return found
