(* D4 Zero-sum (second proof of derivations/d4_zero_sum.py).

   For every group size R and every reward vector r : 'I_R -> F:
   - the centred rewards r_i - rbar sum to zero, hence so do the advantages (r_i - rbar) / c for
     EVERY common scale c (c = s + eps, sigma + eps, or 1), whatever eps;  this includes c = 0,
     because MathComp's x / 0 = 0 (the Python results assume c > 0, a hypothesis not needed here);
   - with eps = 0 and S_2 = \sum_j (r_j - rbar)^2 != 0 the squared sample-std advantages sum to
     R - 1 (R >= 2) and the squared population-std advantages sum to R (R >= 1);
   - binary rewards with k successes (the first k rollouts): mean k/R, S_2 = k (R - k)/R, centred
     rewards 1 - k/R and -k/R, the balance k a_+ + (R - k) a_- = 0 for every scale, and the closed
     forms a_+ = sqrt((R-1)(R-k)/(R k)), a_- = -sqrt((R-1) k/(R (R-k))) (sample std) and
     a_+ = sqrt((R-k)/k), a_- = -sqrt(k/(R-k)) (population std) for 0 < k < R;
   - a group whose rewards all equal v has all centred rewards 0.
   Mirrors derivations/d4_zero_sum.py; uses the definitions of GroupCommon. *)

From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp Require Import ring zify.
From GRPO Require Import GroupCommon.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(* binary rewards with k successes, ordered so that the first k rollouts succeed:
   r_i = 1 for i < k (0-based), r_i = 0 otherwise *)
Definition binary_rewards {F : fieldType} {R : nat} (k : nat) : 'I_R -> F :=
  fun i => (i < k)%:R.

(* ---------------------------------------------------------------------- *)
(* Zero sum                                                               *)
(* ---------------------------------------------------------------------- *)

(* mirrors d4_zero_sum.centred_advantages_sum_to_zero *)
Theorem centred_advantages_sum_to_zero (F : numFieldType) (R : nat) (r : 'I_R -> F) :
  \sum_(i < R) centred_rewards r i = 0.
Proof. exact: sum_centred_rewards. Qed.
Print Assumptions centred_advantages_sum_to_zero.

(* mirrors d4_zero_sum.advantages_sum_to_zero, for EVERY scale c (also c = 0, where x / 0 = 0) *)
Theorem advantages_sum_to_zero (F : numFieldType) (R : nat) (c : F) (r : 'I_R -> F) :
  \sum_(i < R) scaled_advantages c r i = 0.
Proof.
by rewrite /scaled_advantages -mulr_suml centred_advantages_sum_to_zero mul0r.
Qed.
Print Assumptions advantages_sum_to_zero.

(* corollary: the GRPO (sample std) advantages sum to zero, for every eps *)
Lemma grpo_advantages_sum_to_zero (F : rcfType) (R : nat) (eps : F) (r : 'I_R -> F) :
  \sum_(i < R) grpo_advantages eps r i = 0.
Proof. exact: advantages_sum_to_zero. Qed.

(* corollary: the population-std advantages sum to zero, for every eps *)
Lemma population_std_advantages_sum_to_zero (F : rcfType) (R : nat) (eps : F) (r : 'I_R -> F) :
  \sum_(i < R) population_std_advantages eps r i = 0.
Proof. exact: advantages_sum_to_zero. Qed.

(* corollary: the Dr. GRPO advantages sum to zero *)
Lemma dr_grpo_advantages_sum_to_zero (F : numFieldType) (R : nat) (r : 'I_R -> F) :
  \sum_(i < R) dr_grpo_advantages r i = 0.
Proof. exact: centred_advantages_sum_to_zero. Qed.

(* ---------------------------------------------------------------------- *)
(* Fixed energy                                                           *)
(* ---------------------------------------------------------------------- *)

(* \sum_i (c_i / c)^2 = S_2 / c^2 *)
Lemma sum_sqr_scaled_advantages (F : fieldType) (R : nat) (c : F) (r : 'I_R -> F) :
  \sum_(i < R) scaled_advantages c r i ^+ 2 = centred_sum_of_squares r / c ^+ 2.
Proof.
rewrite /centred_sum_of_squares mulr_suml; apply: eq_bigr => i _.
by rewrite /scaled_advantages expr_div_n.
Qed.

(* mirrors d4_zero_sum.squared_sample_std_advantages_sum_to_R_minus_1 *)
Theorem squared_sample_std_advantages_sum_to_R_minus_1 (F : rcfType) (R : nat) (r : 'I_R -> F) :
  (1 < R)%N -> centred_sum_of_squares r != 0 ->
  \sum_(i < R) grpo_advantages 0 r i ^+ 2 = R%:R - 1.
Proof.
move=> hR hS; have h1 : (R%:R - 1 : F) != 0 by exact: natr_sub1_neq0.
have h1p : (0 : F) < R%:R - 1 by rewrite -(natrB F (ltnW hR)) ltr0n subn_gt0.
rewrite /grpo_advantages sum_sqr_scaled_advantages addr0 /sample_std sqr_sqrtr; last first.
  by apply: divr_ge0; [exact: centred_sum_of_squares_ge0 | exact: ltW].
by field; rewrite hS h1.
Qed.
Print Assumptions squared_sample_std_advantages_sum_to_R_minus_1.

(* mirrors d4_zero_sum.squared_population_std_advantages_sum_to_R *)
Theorem squared_population_std_advantages_sum_to_R (F : rcfType) (R : nat) (r : 'I_R -> F) :
  (0 < R)%N -> centred_sum_of_squares r != 0 ->
  \sum_(i < R) population_std_advantages 0 r i ^+ 2 = R%:R.
Proof.
move=> hR hS; have h0 : (R%:R : F) != 0 by exact: natr_neq0.
rewrite /population_std_advantages sum_sqr_scaled_advantages addr0 /population_std sqr_sqrtr.
  by field; rewrite hS h0.
by apply: divr_ge0; [exact: centred_sum_of_squares_ge0 | exact: ler0n].
Qed.
Print Assumptions squared_population_std_advantages_sum_to_R.

(* ---------------------------------------------------------------------- *)
(* Binary rewards                                                         *)
(* ---------------------------------------------------------------------- *)

Section Binary.
Variable F : numFieldType.

(* split a sum over 'I_R at k <= R *)
Lemma sum_ord_split (R k : nat) (f : nat -> F) : (k <= R)%N ->
  \sum_(i < R) f i = \sum_(i < k) f i + \sum_(k <= i < R) f i.
Proof.
by move=> hk; rewrite -(big_mkord xpredT f) (big_cat_nat _ _ _ (leq0n k) hk) big_mkord.
Qed.

Lemma sum_binary_rewards (R k : nat) : (k <= R)%N ->
  \sum_(i < R) (binary_rewards k i : F) = k%:R.
Proof.
move=> hk; rewrite /binary_rewards (sum_ord_split (fun i => ((i < k)%N%:R : F)) hk) /=.
rewrite (eq_bigr (fun _ => 1)) => [|i _]; last by rewrite ltn_ord.
rewrite sumr_const card_ord big_nat_cond big1 ?addr0 // => i /andP [/andP [hki _] _].
by rewrite ltnNge hki.
Qed.

End Binary.

(* mirrors d4_zero_sum.binary_group_mean_is_success_fraction *)
Theorem binary_group_mean_is_success_fraction (F : numFieldType) (R k : nat) :
  (k <= R)%N -> group_mean (binary_rewards k : 'I_R -> F) = k%:R / R%:R.
Proof. by move=> hk; rewrite /group_mean sum_binary_rewards. Qed.
Print Assumptions binary_group_mean_is_success_fraction.

(* the centred reward of a success: 1 - k/R *)
Lemma binary_centred_reward_success (F : numFieldType) (R k : nat) (i : 'I_R) :
  (k <= R)%N -> (i < k)%N -> centred_rewards (binary_rewards k : 'I_R -> F) i = 1 - k%:R / R%:R.
Proof.
by move=> hk hi; rewrite /centred_rewards binary_group_mean_is_success_fraction // /binary_rewards hi.
Qed.

(* the centred reward of a failure: -k/R *)
Lemma binary_centred_reward_failure (F : numFieldType) (R k : nat) (i : 'I_R) :
  (k <= i)%N -> centred_rewards (binary_rewards k : 'I_R -> F) i = - (k%:R / R%:R).
Proof.
move=> hi; have hk : (k <= R)%N by apply: (leq_trans hi); exact: ltnW.
rewrite /centred_rewards binary_group_mean_is_success_fraction // /binary_rewards.
by rewrite ltnNge hi sub0r.
Qed.

(* mirrors d4_zero_sum.binary_sum_of_squares_is_k_times_failures_over_R *)
Theorem binary_sum_of_squares_is_k_times_failures_over_R (F : numFieldType) (R k : nat) :
  (k <= R)%N ->
  centred_sum_of_squares (binary_rewards k : 'I_R -> F) = k%:R * (R - k)%:R / R%:R.
Proof.
move=> hk; have [hR0|hR] := posnP R.
  by subst R; rewrite /centred_sum_of_squares big_ord0 invr0 mulr0.
have h0 : (R%:R : F) != 0 by exact: natr_neq0.
pose a : F := (1 - k%:R / R%:R) ^+ 2; pose b : F := (k%:R / R%:R) ^+ 2.
pose h := fun n : nat => if (n < k)%N then a else b.
rewrite /centred_sum_of_squares (eq_bigr (fun i : 'I_R => h i)) => [|i _]; last first.
  rewrite /h; case: (ltnP i k) => hi.
    by rewrite binary_centred_reward_success.
  by rewrite binary_centred_reward_failure // sqrrN.
rewrite (sum_ord_split h hk) (eq_bigr (fun _ => a)) => [|i _]; last by rewrite /h ltn_ord.
rewrite sumr_const card_ord big_nat_cond (eq_bigr (fun _ => b)) => [|i /andP [/andP [hki _] _]]; last first.
  by rewrite /h ltnNge hki.
rewrite -big_nat_cond sumr_const_nat -(mulr_natl a) -(mulr_natl b) natrB // /a /b.
by field.
Qed.
Print Assumptions binary_sum_of_squares_is_k_times_failures_over_R.

(* the Python lhs of d4_zero_sum.binary_advantages_balance:
   k (1 - k/R)/c + (R - k)(-k/R)/c = 0, for every c (also c = 0) and every R > 0 *)
Lemma binary_advantages_balance_closed_form (F : numFieldType) (R k : nat) (c : F) :
  (0 < R)%N ->
  k%:R * (1 - k%:R / R%:R) / c + (R%:R - k%:R) * (- (k%:R / R%:R)) / c = 0.
Proof.
move=> hR; have h0 : (R%:R : F) != 0 by exact: natr_neq0.
rewrite -mulrDl.
have -> : k%:R * (1 - k%:R / R%:R) + (R%:R - k%:R) * (- (k%:R / R%:R)) = 0 :> F by field.
by rewrite mul0r.
Qed.

(* mirrors d4_zero_sum.binary_advantages_balance: k a_+ + (R - k) a_- = 0 for a success i and a
   failure j (so 0 < k < R), for EVERY common scale c (also c = 0, where x / 0 = 0) *)
Theorem binary_advantages_balance (F : numFieldType) (R k : nat) (c : F) (i j : 'I_R) :
  (i < k)%N -> (k <= j)%N ->
  k%:R * scaled_advantages c (binary_rewards k) i
    + (R - k)%:R * scaled_advantages c (binary_rewards k) j = 0.
Proof.
move=> hi hj; have hk : (k <= R)%N by apply: (leq_trans hj); exact: ltnW.
rewrite /scaled_advantages binary_centred_reward_success // binary_centred_reward_failure //.
rewrite natrB // !mulrA; apply: binary_advantages_balance_closed_form.
by case: i hi => /= i; lia.
Qed.
Print Assumptions binary_advantages_balance.

(* ---------------------------------------------------------------------- *)
(* Binary closed forms (real closed fields, for Num.sqrt)                 *)
(* ---------------------------------------------------------------------- *)

Section ClosedForms.
Variable F : rcfType.

Lemma eq_sqrt_of_sqr (x y : F) : 0 <= x -> y = x ^+ 2 -> x = Num.sqrt y.
Proof. by move=> hx ->; rewrite sqrtr_sqr ger0_norm. Qed.

Lemma eq_opp_sqrt_of_sqr (x y : F) : x <= 0 -> y = x ^+ 2 -> x = - Num.sqrt y.
Proof. by move=> hx ->; rewrite sqrtr_sqr ler0_norm ?opprK. Qed.

Variables (R k : nat).
Hypotheses (hk0 : (0 < k)%N) (hkR : (k < R)%N).

Let hR0 : (0 : F) < R%:R. Proof. by rewrite ltr0n; lia. Qed.
Let hk : (0 : F) < k%:R. Proof. by rewrite ltr0n. Qed.
Let hRk : (0 : F) < R%:R - k%:R. Proof. by rewrite subr_gt0 ltr_nat. Qed.
Let hR1 : (0 : F) < R%:R - 1. Proof. by rewrite -(natrB F (_ : (1 <= R)%N)) ?ltr0n; lia. Qed.
Let hsucc : (0 : F) < 1 - k%:R / R%:R.
Proof. by rewrite subr_gt0 ltr_pdivr_mulr // mul1r ltr_nat. Qed.
Let hS2 : centred_sum_of_squares (binary_rewards k : 'I_R -> F) = k%:R * (R%:R - k%:R) / R%:R.
Proof. by rewrite binary_sum_of_squares_is_k_times_failures_over_R ?natrB //; exact: ltnW. Qed.

Lemma binary_sample_std_advantage_success (i : 'I_R) : (i < k)%N ->
  grpo_advantages 0 (binary_rewards k) i = Num.sqrt ((R%:R - 1) * (R%:R - k%:R) / (R%:R * k%:R) : F).
Proof.
move=> hi; rewrite /grpo_advantages /scaled_advantages addr0 /sample_std hS2.
rewrite binary_centred_reward_success //; last exact: ltnW.
have hpos : (0 : F) < k%:R * (R%:R - k%:R) / R%:R / (R%:R - 1).
  by apply: divr_gt0 => //; apply: divr_gt0 => //; exact: mulr_gt0.
apply: eq_sqrt_of_sqr; first by apply: divr_ge0; [exact: ltW | exact: sqrtr_ge0].
rewrite expr_div_n sqr_sqrtr; last exact: ltW.
by field; rewrite ?lt0r_neq0.
Qed.

Lemma binary_sample_std_advantage_failure (j : 'I_R) : (k <= j)%N ->
  grpo_advantages 0 (binary_rewards k) j = - Num.sqrt ((R%:R - 1) * k%:R / (R%:R * (R%:R - k%:R)) : F).
Proof.
move=> hj; rewrite /grpo_advantages /scaled_advantages addr0 /sample_std hS2.
rewrite binary_centred_reward_failure //.
have hpos : (0 : F) < k%:R * (R%:R - k%:R) / R%:R / (R%:R - 1).
  by apply: divr_gt0 => //; apply: divr_gt0 => //; exact: mulr_gt0.
apply: eq_opp_sqrt_of_sqr.
  by rewrite mulNr oppr_le0; apply: divr_ge0; [apply: divr_ge0; exact: ltW | exact: sqrtr_ge0].
rewrite expr_div_n sqr_sqrtr; last exact: ltW.
by field; rewrite ?lt0r_neq0.
Qed.

Lemma binary_population_std_advantage_success (i : 'I_R) : (i < k)%N ->
  population_std_advantages 0 (binary_rewards k) i = Num.sqrt ((R%:R - k%:R) / k%:R : F).
Proof.
move=> hi; rewrite /population_std_advantages /scaled_advantages addr0 /population_std hS2.
rewrite binary_centred_reward_success //; last exact: ltnW.
have hpos : (0 : F) < k%:R * (R%:R - k%:R) / R%:R / R%:R.
  by apply: divr_gt0 => //; apply: divr_gt0 => //; exact: mulr_gt0.
apply: eq_sqrt_of_sqr; first by apply: divr_ge0; [exact: ltW | exact: sqrtr_ge0].
rewrite expr_div_n sqr_sqrtr; last exact: ltW.
by field; rewrite ?lt0r_neq0.
Qed.

Lemma binary_population_std_advantage_failure (j : 'I_R) : (k <= j)%N ->
  population_std_advantages 0 (binary_rewards k) j = - Num.sqrt (k%:R / (R%:R - k%:R) : F).
Proof.
move=> hj; rewrite /population_std_advantages /scaled_advantages addr0 /population_std hS2.
rewrite binary_centred_reward_failure //.
have hpos : (0 : F) < k%:R * (R%:R - k%:R) / R%:R / R%:R.
  by apply: divr_gt0 => //; apply: divr_gt0 => //; exact: mulr_gt0.
apply: eq_opp_sqrt_of_sqr.
  by rewrite mulNr oppr_le0; apply: divr_ge0; [apply: divr_ge0; exact: ltW | exact: sqrtr_ge0].
rewrite expr_div_n sqr_sqrtr; last exact: ltW.
by field; rewrite ?lt0r_neq0.
Qed.

End ClosedForms.

(* mirrors d4_zero_sum.binary_sample_std_advantages_closed_form: with eps = 0 and 0 < k < R,
   a_+ = sqrt((R-1)(R-k)/(R k)) at every success, a_- = -sqrt((R-1) k/(R (R-k))) at every failure *)
Theorem binary_sample_std_advantages_closed_form (F : rcfType) (R k : nat) :
  (0 < k)%N -> (k < R)%N ->
  (forall i : 'I_R, (i < k)%N ->
     grpo_advantages 0 (binary_rewards k) i = Num.sqrt ((R%:R - 1) * (R%:R - k%:R) / (R%:R * k%:R) : F))
  /\ (forall j : 'I_R, (k <= j)%N ->
     grpo_advantages 0 (binary_rewards k) j = - Num.sqrt ((R%:R - 1) * k%:R / (R%:R * (R%:R - k%:R)) : F)).
Proof.
move=> hk0 hkR; split.
  by move=> i; exact: binary_sample_std_advantage_success.
by move=> j; exact: binary_sample_std_advantage_failure.
Qed.
Print Assumptions binary_sample_std_advantages_closed_form.

(* mirrors d4_zero_sum.binary_population_std_advantages_closed_form: with eps = 0 and 0 < k < R,
   a_+ = sqrt((R-k)/k) at every success, a_- = -sqrt(k/(R-k)) at every failure *)
Theorem binary_population_std_advantages_closed_form (F : rcfType) (R k : nat) :
  (0 < k)%N -> (k < R)%N ->
  (forall i : 'I_R, (i < k)%N ->
     population_std_advantages 0 (binary_rewards k) i = Num.sqrt ((R%:R - k%:R) / k%:R : F))
  /\ (forall j : 'I_R, (k <= j)%N ->
     population_std_advantages 0 (binary_rewards k) j = - Num.sqrt (k%:R / (R%:R - k%:R) : F)).
Proof.
move=> hk0 hkR; split.
  by move=> i; exact: binary_population_std_advantage_success.
by move=> j; exact: binary_population_std_advantage_failure.
Qed.
Print Assumptions binary_population_std_advantages_closed_form.

(* mirrors d4_zero_sum.degenerate_group_has_zero_centred_rewards (any index i exists only when
   R > 0, so no hypothesis on R is needed) *)
Theorem degenerate_group_has_zero_centred_rewards (F : numFieldType) (R : nat) (r : 'I_R -> F)
  (v : F) (i : 'I_R) :
  (forall j, r j = v) -> centred_rewards r i = 0.
Proof.
move=> hv; have h0 : (R%:R : F) != 0 by apply: natr_neq0; case: i => /= i; lia.
rewrite /centred_rewards /group_mean (eq_bigr (fun _ => v)) => [|j _]; last exact: hv.
by rewrite sumr_const card_ord -mulr_natl hv; field.
Qed.
Print Assumptions degenerate_group_has_zero_centred_rewards.
