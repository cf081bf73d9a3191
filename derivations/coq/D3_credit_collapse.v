(* D3 Credit collapse (second proof of derivations/d3_credit_collapse.py).

   Under an outcome-only reward (the per-token reward of rollout i is r_i at its final position
   T_i and 0 elsewhere) every valid token of a rollout gets the same advantage:
   - GRPO's token advantage A_{i,t} = A_i m_{i,t} (broadcast with the completion mask) equals the
     sequence advantage A_i at every valid position t < |o_i| (0-based), for every advantage
     vector A (in particular the GRPO advantages, for every eps), and is 0 at padding positions;
   - the undiscounted return-to-go \sum_{u=t}^{T_i} r delta_{u T_i} is r at every t <= T_i, and the
     same sum of the group-normalised rewards is the sequence advantage A_i;
   - contrast: with discount gamma the return-to-go is gamma^(T_i - t) r, which for gamma = 1/2,
     T_i = 3 and r != 0 differs between t = 1 and t = 3;
   - GAE(gamma, lambda) on a completion of length 3 with terminal value V_4 = 0 satisfies
     A_t = delta_t + gamma lambda A_{t+1}, with gamma = lambda = 1 telescopes to
     \sum_{u >= t} r_u - V_t, and its token advantages differ along the completion on the two
     Python examples (outcome-only reward with a constant critic; per-step rewards);
   - the completion masks of lengths 1..T (rows of the lower-triangular all-ones P_T) have rank T
     for every T; the token-advantage matrix (A_i m_{i,t}) has rank 1 when all lengths are equal
     and some A_i != 0 (any A), in particular for the GRPO advantages of a group with some
     r_{i0} - rbar != 0 and eps >= 0 (then R >= 2 and s > 0), and rank 0 when all rewards are
     equal (any eps, lengths, width).
   Positions in the sums are natural numbers; the Python file writes them 1-based (t..T_i), the
   sums have the same shape.  Mirrors derivations/d3_credit_collapse.py; uses GroupCommon. *)

From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp Require Import ring zify.
From GRPO Require Import GroupCommon.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(* ---------------------------------------------------------------------- *)
(* Token advantages under the completion mask                             *)
(* ---------------------------------------------------------------------- *)

(* mirrors d3_credit_collapse.token_advantage_equals_sequence_advantage_under_outcome_reward
   (for every sequence advantage A; no hypothesis on the scale is needed) *)
Theorem token_advantage_equals_sequence_advantage_under_outcome_reward (F : fieldType)
  (N T : nat) (A : 'I_N -> F) (len : 'I_N -> nat) (i : 'I_N) (t : 'I_T) :
  (t < len i)%N -> token_advantages A (completion_mask len) i t = A i.
Proof. by move=> ht; rewrite /token_advantages /completion_mask ht mulr1. Qed.
Print Assumptions token_advantage_equals_sequence_advantage_under_outcome_reward.

(* the same for the GRPO sequence advantage A_i = (r_i - rbar)/(s + eps), every eps *)
Lemma grpo_token_advantage_equals_sequence_advantage (F : rcfType) (N T : nat) (eps : F)
  (r : 'I_N -> F) (len : 'I_N -> nat) (i : 'I_N) (t : 'I_T) :
  (t < len i)%N -> token_advantages (grpo_advantages eps r) (completion_mask len) i t
                   = grpo_advantages eps r i.
Proof. exact: token_advantage_equals_sequence_advantage_under_outcome_reward. Qed.

(* padding positions t >= |o_i| get token advantage 0 *)
Lemma token_advantage_is_zero_at_padding (F : fieldType) (N T : nat) (A : 'I_N -> F)
  (len : 'I_N -> nat) (i : 'I_N) (t : 'I_T) :
  (len i <= t)%N -> token_advantages A (completion_mask len) i t = 0.
Proof. by move=> ht; rewrite /token_advantages /completion_mask ltnNge ht mulr0. Qed.

(* ---------------------------------------------------------------------- *)
(* Returns-to-go of an outcome-only reward                                *)
(* ---------------------------------------------------------------------- *)

(* a sum of f u * delta_{u Ti} over t <= u <= Ti picks the term u = Ti *)
Lemma sum_delta_final (F : ringType) (t Ti : nat) (f : nat -> F) : (t <= Ti)%N ->
  \sum_(t <= u < Ti.+1) f u * (u == Ti)%:R = f Ti.
Proof.
move=> ht; rewrite big_nat_recr //= eqxx mulr1 big_nat big1 ?add0r // => u /andP [_ hu].
by rewrite (ltn_eqF hu) mulr0.
Qed.

(* mirrors d3_credit_collapse.undiscounted_return_to_go_of_outcome_reward_is_final_reward *)
Theorem undiscounted_return_to_go_of_outcome_reward_is_final_reward (F : ringType)
  (r : F) (t Ti : nat) :
  (t <= Ti)%N -> \sum_(t <= u < Ti.+1) r * (u == Ti)%:R = r.
Proof. exact: (sum_delta_final (fun _ => r)). Qed.
Print Assumptions undiscounted_return_to_go_of_outcome_reward_is_final_reward.

(* mirrors d3_credit_collapse.normalised_return_to_go_equals_sequence_advantage_under_outcome_reward
   (for every R and every eps; the Python hypotheses R >= 2 and s + eps > 0 are not needed) *)
Theorem normalised_return_to_go_equals_sequence_advantage_under_outcome_reward (F : rcfType)
  (R : nat) (eps : F) (r : 'I_R -> F) (i : 'I_R) (t Ti : nat) :
  (t <= Ti)%N ->
  \sum_(t <= u < Ti.+1) grpo_advantages eps r i * (u == Ti)%:R = grpo_advantages eps r i.
Proof. exact: undiscounted_return_to_go_of_outcome_reward_is_final_reward. Qed.
Print Assumptions normalised_return_to_go_equals_sequence_advantage_under_outcome_reward.

(* mirrors d3_credit_collapse.discounted_return_to_go_of_outcome_reward_is_gamma_power *)
Theorem discounted_return_to_go_of_outcome_reward_is_gamma_power (F : ringType)
  (gamma r : F) (t Ti : nat) :
  (t <= Ti)%N ->
  \sum_(t <= u < Ti.+1) gamma ^+ (u - t) * r * (u == Ti)%:R = gamma ^+ (Ti - t) * r.
Proof. exact: (sum_delta_final (fun u => gamma ^+ (u - t) * r)). Qed.
Print Assumptions discounted_return_to_go_of_outcome_reward_is_gamma_power.

(* mirrors d3_credit_collapse.discounted_return_to_go_differs_along_completion:
   gamma = 1/2, T_i = 3: gamma^(3-1) r != gamma^(3-3) r for every r != 0 *)
Theorem discounted_return_to_go_differs_along_completion (F : numFieldType) (r : F) :
  r != 0 -> (2%:R^-1 : F) ^+ (3 - 1) * r != (2%:R^-1 : F) ^+ (3 - 3) * r.
Proof.
move=> hr; have h2 : (2%:R : F) != 0 by rewrite pnatr_eq0.
rewrite -subr_eq0 -mulrBl mulf_eq0 negb_or hr andbT.
have -> : (2%:R^-1 : F) ^+ (3 - 1) - (2%:R^-1) ^+ (3 - 3) = - (3%:R / 4%:R).
  by rewrite /= expr0 expr2; field.
by rewrite oppr_eq0 mulf_neq0 ?invr_eq0 ?pnatr_eq0.
Qed.
Print Assumptions discounted_return_to_go_differs_along_completion.

(* ---------------------------------------------------------------------- *)
(* GAE on a completion of length T (positions 1..T, terminal value V_{T+1}) *)
(* ---------------------------------------------------------------------- *)

(* delta_u = r_u + gamma V_{u+1} - V_u *)
Definition td_error {F : ringType} (gamma : F) (rw V : nat -> F) (u : nat) : F :=
  rw u + gamma * V u.+1 - V u.

(* A_pos = \sum_{l=0}^{T-pos} (gamma lambda)^l delta_{pos+l} *)
Definition gae {F : ringType} (T : nat) (gamma lam : F) (rw V : nat -> F) (pos : nat) : F :=
  \sum_(l < (T - pos).+1) (gamma * lam) ^+ l * td_error gamma rw V (pos + l).

(* mirrors d3_credit_collapse.gae_satisfies_backward_recursion (T = 3) *)
Theorem gae_satisfies_backward_recursion (F : comRingType) (gamma lam : F) (rw V : nat -> F) :
  V 4%N = 0 ->
  [/\ gae 3%N gamma lam rw V 1%N = td_error gamma rw V 1%N + gamma * lam * gae 3%N gamma lam rw V 2%N,
      gae 3%N gamma lam rw V 2%N = td_error gamma rw V 2%N + gamma * lam * gae 3%N gamma lam rw V 3%N
    & gae 3%N gamma lam rw V 3%N = td_error gamma rw V 3%N].
Proof.
move=> hV; rewrite /gae /td_error /=.
rewrite !big_ord_recr !big_ord0 /= /addn /subn /= ?hV.
split; ring.
Qed.
Print Assumptions gae_satisfies_backward_recursion.

(* mirrors d3_credit_collapse.gae_with_unit_gamma_lambda_is_return_to_go_minus_value (T = 3) *)
Theorem gae_with_unit_gamma_lambda_is_return_to_go_minus_value (F : comRingType)
  (rw V : nat -> F) :
  V 4%N = 0 ->
  [/\ gae 3%N 1 1 rw V 1%N = rw 1%N + rw 2%N + rw 3%N - V 1%N,
      gae 3%N 1 1 rw V 2%N = rw 2%N + rw 3%N - V 2%N
    & gae 3%N 1 1 rw V 3%N = rw 3%N - V 3%N].
Proof.
move=> hV; rewrite /gae /td_error /=.
rewrite !big_ord_recr !big_ord0 /= /addn /subn /= ?hV.
split; ring.
Qed.
Print Assumptions gae_with_unit_gamma_lambda_is_return_to_go_minus_value.

(* mirrors d3_credit_collapse.gae_token_advantages_differ_under_outcome_reward: outcome-only reward
   (r_1 = r_2 = 0, r_3 = 1), constant critic V_1 = V_2 = V_3 = 1/2, V_4 = 0, gamma = 1, lambda = 1/2:
   A_1 = 1/8 != A_2 = 1/4 *)
Theorem gae_token_advantages_differ_under_outcome_reward (F : numFieldType) (rw V : nat -> F) :
  rw 1%N = 0 -> rw 2%N = 0 -> rw 3%N = 1 ->
  V 1%N = 2%:R^-1 -> V 2%N = 2%:R^-1 -> V 3%N = 2%:R^-1 -> V 4%N = 0 ->
  gae 3%N 1 (2%:R^-1) rw V 1%N != gae 3%N 1 (2%:R^-1) rw V 2%N.
Proof.
move=> r1 r2 r3 v1 v2 v3 v4.
have e1 : gae 3%N 1 (2%:R^-1) rw V 1%N = 8%:R^-1.
  rewrite /gae /td_error !big_ord_recr !big_ord0 /= /addn /subn /= r1 r2 r3 v1 v2 v3 v4.
  by field.
have e2 : gae 3%N 1 (2%:R^-1) rw V 2%N = 4%:R^-1.
  rewrite /gae /td_error !big_ord_recr !big_ord0 /= /addn /subn /= r2 r3 v2 v3 v4.
  by field.
by rewrite e1 e2 (can_eq invrK) eqr_nat.
Qed.
Print Assumptions gae_token_advantages_differ_under_outcome_reward.

(* mirrors d3_credit_collapse.gae_token_advantages_differ_under_per_step_rewards: per-step rewards
   (1, 0, 0), no critic (V = 0), gamma = lambda = 1: A_1 = 1 != A_2 = 0 *)
Theorem gae_token_advantages_differ_under_per_step_rewards (F : numFieldType) (rw V : nat -> F) :
  rw 1%N = 1 -> rw 2%N = 0 -> rw 3%N = 0 ->
  V 1%N = 0 -> V 2%N = 0 -> V 3%N = 0 -> V 4%N = 0 ->
  gae 3%N 1 1 rw V 1%N != gae 3%N 1 1 rw V 2%N.
Proof.
move=> r1 r2 r3 v1 v2 v3 v4.
have [-> -> _] := gae_with_unit_gamma_lambda_is_return_to_go_minus_value rw v4.
by rewrite r1 r2 r3 v1 v2 !addr0 !subr0 oner_neq0.
Qed.
Print Assumptions gae_token_advantages_differ_under_per_step_rewards.

(* ---------------------------------------------------------------------- *)
(* Completion masks of distinct lengths are independent                   *)
(* ---------------------------------------------------------------------- *)

(* P_T: row l is the completion mask of a rollout of length l + 1 (0-based: ones at u <= l) *)
Definition prefix_indicators {F : ringType} (T : nat) : 'M[F]_T :=
  \matrix_(l < T, u < T) ((u <= l)%N%:R).

(* mirrors d3_credit_collapse.prefix_indicator_rows_of_distinct_lengths_are_independent:
   rank P_T = T for every T (P_T is lower triangular with unit diagonal) *)
Theorem prefix_indicator_rows_of_distinct_lengths_are_independent (F : fieldType) (T : nat) :
  \rank (prefix_indicators T : 'M[F]_T) = T.
Proof.
apply: mxrank_unit; rewrite unitmxE det_trig.
  rewrite (eq_bigr (fun _ => 1)) => [|i _]; last by rewrite mxE leqnn.
  by rewrite big1_eq unitr1.
by apply/is_trig_mxP => i j hij; rewrite mxE leqNgt hij.
Qed.
Print Assumptions prefix_indicator_rows_of_distinct_lengths_are_independent.

(* the R x T token-advantage matrix with entries A_i m_{i,t} *)
Definition token_advantage_matrix {F : fieldType} {R : nat} (T : nat) (A : 'I_R -> F)
  (len : 'I_R -> nat) : 'M[F]_(R, T) :=
  \matrix_(i < R, t < T) token_advantages A (completion_mask len) i t.

(* mirrors d3_credit_collapse.token_advantage_matrix_rank_is_zero_for_equal_rewards, for every
   group whose rewards all equal v, every eps, every lengths and every width T (the Python
   instance: rewards (1, 1, 1, 1), eps = 1/10000, lengths (3, 3, 5, 2)) *)
Theorem token_advantage_matrix_rank_is_zero_for_equal_rewards (F : rcfType) (R T : nat)
  (eps v : F) (r : 'I_R -> F) (len : 'I_R -> nat) :
  (forall j, r j = v) -> \rank (token_advantage_matrix T (grpo_advantages eps r) len) = 0%N.
Proof.
move=> hv; rewrite (_ : token_advantage_matrix _ _ _ = 0) ?mxrank0 //.
apply/matrixP => i t; rewrite !mxE /token_advantages /grpo_advantages /scaled_advantages.
have h0 : (R%:R : F) != 0 by apply: natr_neq0; case: i => /= i; lia.
rewrite /centred_rewards /group_mean (eq_bigr (fun _ => v)) => [|j _]; last exact: hv.
rewrite sumr_const card_ord -(mulr_natl v) hv.
have -> : R%:R * v / R%:R = v by field.
by rewrite subrr !mul0r.
Qed.
Print Assumptions token_advantage_matrix_rank_is_zero_for_equal_rewards.

(* the general version behind d3_credit_collapse.token_advantage_matrix_rank_is_one_for_equal_lengths:
   for every advantage vector A with some A_{i0} != 0, every common length L > 0 and every width
   T > 0 *)
Theorem token_advantage_matrix_rank_is_one_for_equal_lengths_for_any_advantages (F : fieldType)
  (R T L : nat) (A : 'I_R -> F) (len : 'I_R -> nat) (i0 : 'I_R) :
  (forall i, len i = L) -> (0 < L)%N -> (0 < T)%N -> A i0 != 0 ->
  \rank (token_advantage_matrix T A len) = 1%N.
Proof.
move=> hlen hL hT hA.
have -> : token_advantage_matrix T A len = (\col_i A i) *m (\row_(t < T) ((t < L)%N%:R : F)).
  apply/matrixP => i t; rewrite !mxE big_ord1 !mxE /token_advantages /completion_mask hlen.
  by [].
apply/eqP; rewrite eqn_leq; apply/andP; split.
  by rewrite (leq_trans (mxrankM_maxl _ _)) // rank_leq_col.
rewrite lt0n mxrank_eq0; apply/negP => /eqP /matrixP /(_ i0 (Ordinal hT)).
by rewrite !mxE big_ord1 !mxE /= hL mulr1 => /eqP; rewrite (negbTE hA).
Qed.
Print Assumptions token_advantage_matrix_rank_is_one_for_equal_lengths_for_any_advantages.

(* a group with some centred reward r_{i0} - rbar != 0 has R >= 2 (for R = 1 the centred reward
   is 0) and sample std s > 0 *)
Lemma centred_reward_neq0_group_size (F : numFieldType) (R : nat) (r : 'I_R -> F) (i0 : 'I_R) :
  centred_rewards r i0 != 0 -> (1 < R)%N.
Proof.
case: R r i0 => [|[|R]] r i0; first by case: i0.
  by rewrite /centred_rewards /group_mean big_ord1 divr1 (ord1 i0) subrr eqxx.
by [].
Qed.

Lemma centred_reward_neq0_sample_std_gt0 (F : rcfType) (R : nat) (r : 'I_R -> F) (i0 : 'I_R) :
  centred_rewards r i0 != 0 -> 0 < sample_std r.
Proof.
move=> hi; have hR := centred_reward_neq0_group_size hi.
have hS : 0 < centred_sum_of_squares r.
  rewrite /centred_sum_of_squares (bigD1 i0) //=.
  rewrite -[X in X < _](addr0 0) ltr_le_add //; first by rewrite lt_def sqrf_eq0 hi sqr_ge0.
  by apply: sumr_ge0 => j _; exact: sqr_ge0.
rewrite /sample_std sqrtr_gt0 divr_gt0 //.
by rewrite -(natrB F (ltnW hR)) ltr0n subn_gt0.
Qed.

(* mirrors d3_credit_collapse.token_advantage_matrix_rank_is_one_for_equal_lengths, for the GRPO
   advantages (r_i - rbar)/(s + eps) of every group with some r_{i0} - rbar != 0 (so R >= 2 and
   s > 0), every eps >= 0, every common length L > 0 and every width T > 0 (the Python instance:
   rewards (1, 0, 1, 0), eps = 0, lengths (4, 4, 4, 4)) *)
Theorem token_advantage_matrix_rank_is_one_for_equal_lengths (F : rcfType) (R T L : nat)
  (eps : F) (r : 'I_R -> F) (len : 'I_R -> nat) (i0 : 'I_R) :
  0 <= eps -> centred_rewards r i0 != 0 ->
  (forall i, len i = L) -> (0 < L)%N -> (0 < T)%N ->
  \rank (token_advantage_matrix T (grpo_advantages eps r) len) = 1%N.
Proof.
move=> heps hi hlen hL hT.
apply: (token_advantage_matrix_rank_is_one_for_equal_lengths_for_any_advantages hlen hL hT (i0 := i0)).
have hc : sample_std r + eps != 0.
  by rewrite lt0r_neq0 // -(addr0 0) ltr_le_add // (centred_reward_neq0_sample_std_gt0 hi).
by rewrite /grpo_advantages /scaled_advantages mulf_neq0 ?invr_neq0.
Qed.
Print Assumptions token_advantage_matrix_rank_is_one_for_equal_lengths.
