"""The paper's claims, quoted, and what checks each: derivation results (with their role) and tests.

Text fields are ASCII with inline maths between ``$...$`` (typeset by ``latex.prose`` and shown as
GitHub maths in Markdown); quotations keep the abstract's own characters and are converted for LaTeX.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rules import Role

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
DERIVATION_TEST = "tests/test_derivations.py::test_derivation_is_proved[{family}.{name}]"


@dataclass(frozen=True)
class Cited:
    name: str
    role: Role
    condition: str = ""


@dataclass(frozen=True)
class Claim:
    key: str  # "C1" ... "C5", "F1"
    title: str
    quote: str  # the abstract's fragment ("" for our own findings)
    kind: str  # "theorem", "empirical" or "finding"
    statement: str  # what we prove / measure, in words
    cited: tuple[Cited, ...]
    tests: tuple[str, ...]  # pytest node ids (function level); derivation tests are added per cited result
    empirical: str = ""  # "sparsity", "rank", "attribution" or ""


S, C, X, K = Role.SUPPORTS, Role.UNDER_CONDITION, Role.REFUTES, Role.CONTEXT

CLAIMS: tuple[Claim, ...] = (
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
    ),
    Claim(
        "C2", "Gradient sparsity that intensifies over training",
        "We prove this induces gradient sparsity that intensifies over training",
        "theorem",
        "A group whose $R$ binary rewards are all equal has zero advantages and contributes exactly zero gradient; "
        "this happens with probability $z_R(p) = p^R + (1-p)^R \\ge 2^{1-R}$, minimal at $p = 1/2$ and increasing "
        "in $|p - 1/2|$. Under the no-std update the expected drift of $p$ is $\\frac{R-1}{R}\\|\\nabla p\\|^2 \\ge 0$ "
        "to first order in the step size, so once $p > 1/2$ zero-gradient groups become likelier. The std-scaled "
        "(real GRPO) update drifts the same way, at the rate $c_R(p)\\|\\nabla p\\|^2$ with $c_R(p) > 0$ (proved for "
        "$R = 2, 4, 8$). Below $1/2$ they become rarer; finite-step dynamics are left to simulation.",
        (Cited("degenerate_group_contributes_zero_gradient", S),
         Cited("all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R", S),
         Cited("zero_gradient_probability_at_one_half_is_two_pow_one_minus_R", S),
         Cited("no_std_update_direction_is_R_minus_1_over_R_times_gradient", S),
         Cited("zero_gradient_probability_increases_away_from_one_half", C,
               "the zero-gradient probability grows as the success probability $p$ moves away from $1/2$"),
         Cited("zero_gradient_probability_slope_is_positive_above_half", C,
               "it rises over training only while $p > 1/2$"),
         Cited("first_order_drift_of_success_probability_R2", C,
               "to first order in the step size, for the no-std update, on a three-action softmax bandit ($R = 2$)"),
         Cited("first_order_drift_of_success_probability_R3", C,
               "to first order in the step size, for the no-std update, on a three-action softmax bandit ($R = 3$)"),
         Cited("zero_gradient_probability_is_at_least_two_pow_one_minus_R", K),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", K),
         Cited("c_R_sample_std_is_positive_for_R2", K),
         Cited("c_R_sample_std_is_positive_for_R4", K),
         Cited("c_R_sample_std_is_positive_for_R8", K)),
        (PROPS + "test_d6_zero_advantage_probability_equals_derivation",
         PROPS + "test_d6_minimum_two_pow_one_minus_R_is_attained_at_one_half",
         PROPS + "test_d6_first_order_drift_equals_derivation",
         ORACLE + "test_zero_advantage_probability_is_p_pow_R_plus_q_pow_R",
         EST + "test_degenerate_groups_give_exact_zeros_never_nan",
         TRAIN + "test_exact_success_probability_and_zero_gradient_probability",
         TRAIN + "test_exact_zero_gradient_probability_rises_when_every_prompt_starts_above_half",
         TRAIN + "test_exact_zero_gradient_probability_falls_while_every_prompt_stays_below_half",
         TRAIN + "test_structural_zeros_are_exact_zeros_and_features_policy_is_dense"),
        empirical="sparsity",
    ),
    Claim(
        "C3", "Effective rank about 2 on Nemotron-4B/GSM8K, for every group size",
        "demonstrate empirically via SVD analysis of GRPO gradients on Nemotron-4B/GSM8K that the gradient "
        "matrix has effective rank \u2248 2 regardless of group size R \u2208 {2, 4, 8}",
        "empirical",
        "An empirical claim about one model. The mathematics does not imply it (D7): the per-rollout matrices "
        "$G$ and $\\operatorname{diag}(A) G$ have rank $\\operatorname{rank}(G)$, generically $\\min(R, P)$; "
        "and even a rank-2 matrix has effective rank 2 only for equal singular values. For $R = 2$ every "
        "$R$-row matrix has rank at most 2, so $R = 2$ cannot discriminate. Measured per rank definition and "
        "per matrix below.",
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
        empirical="rank",
    ),
    Claim(
        "C4", "Rank 2 from the zero-sum constraint",
        "We formalize this as an intrinsic rank-2 structure arising from the zero-sum constraint on advantages",
        "theorem",
        "Zero-sum holds: $\\sum_i A_i = 0$ for every convention, with $\\sum_i A_i^2 = R - 1$ (sample std). "
        "It does not give rank 2: centring ($I - \\mathbf{1}\\mathbf{1}^T/R$, the zero-sum projection) bounds the "
        "centred score matrix by rank $R - 1$ and the bound is attained; $\\operatorname{diag}(A) G$ keeps the rank "
        "of $G$; a layer's weight gradient sums one outer product per token. Rank at most 2 follows only under an "
        "extra two-cluster assumption on the score vectors.",
        (Cited("advantages_sum_to_zero", S),
         Cited("centred_advantages_sum_to_zero", S),
         Cited("squared_sample_std_advantages_sum_to_R_minus_1", S),
         Cited("centred_scores_have_rank_three_for_R4", X,
               "with zero-sum (centred) weights the $R = 4$ score matrix keeps rank 3 = $R - 1$, not 2"),
         Cited("advantage_weighted_scores_have_rank_four_for_R4", X,
               "$\\operatorname{diag}(A) G$ with zero-sum advantages $A = (3/2, -1/2, -1/2, -1/2)$ has rank 4 at $R = 4$"),
         Cited("layer_weight_gradient_has_rank_five_with_two_rollouts", X,
               "a linear layer's GRPO weight gradient has rank 5 with $R = 2$, $A = (1, -1)$"),
         Cited("two_cluster_advantage_weighted_scores_have_rank_at_most_two_R4", C,
               "rank at most 2 holds if the score vectors form two clusters (one per reward class)"),
         Cited("two_cluster_advantage_weighted_scores_have_rank_at_most_two_R8", C,
               "the same two-cluster assumption, $R = 8$"),
         Cited("centring_matrix_has_rank_R_minus_1", K),
         Cited("binary_group_gradient_is_class_mean_difference", K)),
        (PROPS + "test_d4_binary_closed_forms_for_every_R_and_k",
         PROPS + "test_d4_binary_advantages_equal_closed_forms",
         PROPS + "test_d7_binary_group_gradient_is_class_mean_difference",
         PROPS + "test_d7_two_cluster_scores_have_rank_at_most_two",
         PROPS + "test_d7_spread_out_scores_give_effective_rank_above_three",
         PROPS + "test_d7_rank_four_instance_matches_the_code",
         EST + "test_advantages_sum_to_zero_per_group",
         EST + "test_sum_of_squares_is_r_minus_one_for_sample_std_and_r_for_population",
         EMP + "test_gram_derived_matrices_match_explicit_G"),
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
        "fixed reference logit: $b^*$ depends on the parametrisation). GRPO's own baseline is not a constant: the "
        "no-std estimator is exactly $\\frac{R-1}{R}$ times the leave-one-out (RLOO) estimator.",
        (Cited("total_variance_is_minimised_by_optimal_baseline", S),
         Cited("optimal_baseline_minus_mean_reward_is_covariance_ratio", C,
               "the condition concerns the population mean $E[r]$ as a constant baseline; GRPO's group mean "
               "contains $r_i$ and shrinks the expected gradient by $(R-1)/R$ (D5, remark "
               "group_mean_is_not_the_population_mean)"),
         Cited("softmax_optimal_baseline_minus_mean_reward", S),
         Cited("uniform_policy_makes_mean_baseline_optimal", S),
         Cited("constant_reward_makes_mean_baseline_optimal", S),
         Cited("softmax_example_mean_baseline_is_not_optimal", K),
         Cited("softmax_example_mean_baseline_excess_variance_is_one_fortieth", K),
         Cited("softmax_example_optimal_baseline_with_a_reference_logit_is_five_fourteenths", K),
         Cited("group_centred_reward_is_scaled_leave_one_out_reward", K),
         Cited("no_std_group_estimator_is_scaled_rloo_estimator", K)),
        (PROPS + "test_d8_optimal_baseline_equals_closed_form_and_minimises_variance",
         PROPS + "test_d8_mean_baseline_is_optimal_under_the_covariance_condition",
         PROPS + "test_d8_mean_baseline_is_not_optimal_without_the_covariance_condition",
         ORACLE + "test_optimal_baseline_minimises_the_total_variance",
         ORACLE + "test_coordinatewise_optimal_baseline_minimises_each_coordinate",
         ORACLE + "test_optimal_baseline_counterexample_of_D8"),
    ),
    Claim(
        "F1", "Additional finding: bias of the group baseline (D5)",
        "",
        "finding",
        "The group-mean baseline biases the policy gradient: $E[(r_i - \\bar r) g_i] = \\frac{R-1}{R}\\nabla J$; "
        "the leave-one-out mean is unbiased. With std scaling and binary rewards $E[A_i g_i] = c_R(p) \\nabla J$ "
        "(a closed form in $p$); with three reward values the expectation is not parallel to $\\nabla J$ (exact "
        "3-action counterexample; none exists with two actions). The std-scaled part rests on conditioning on one "
        "rollout, a step stated as a remark (the kernel has no rule for conditional expectations); what is checked "
        "of it: the affine step for any $h$ on $\\{0, 1\\}$, and $E[A_1 g_1] = c_R(p) \\nabla J$ exactly by enumerating "
        "every outcome tuple of a three-outcome model (sample std $R = 2, 3, 4$, population std $R = 2, 3$).",
        (Cited("group_baseline_gradient_is_shrunk_by_R_minus_1_over_R", S),
         Cited("leave_one_out_baseline_is_unbiased", S),
         Cited("binary_reward_scaled_gradient_is_rescaled_policy_gradient", S),
         Cited("sample_std_scaled_gradient_is_c_R_times_gradient_on_finite_model", S),
         Cited("population_std_scaled_gradient_is_c_R_times_gradient_on_finite_model", S),
         Cited("c_R_sample_std_closed_forms", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R2", S),
         Cited("three_reward_scaled_gradient_is_not_parallel_R3", S),
         Cited("two_action_expectations_are_multiples_of_one_vector", S)),
        (PROPS + "test_d5_binary_scaled_gradient_is_c_R_times_gradient",
         PROPS + "test_d5_three_reward_levels_break_parallelism_found_by_hypothesis",
         PROPS + "test_d5_counterexample_vectors_equal_the_oracle",
         ORACLE + "test_group_mean_baseline_shrinks_gradient_by_R_minus_1_over_R",
         ORACLE + "test_leave_one_out_baseline_is_unbiased",
         ORACLE + "test_std_scaled_gradient_with_binary_rewards_is_c_R_times_gradient",
         ORACLE + "test_std_scaled_gradient_with_three_reward_values_is_not_parallel",
         ORACLE + "test_group_baseline_bias_on_a_transformer"),
    ),
)
