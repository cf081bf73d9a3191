(* D7 Rank structure (second proof of part of derivations/d7_rank_structure.py).

   For every group size R and every R x P score matrix G (rows = the rollouts' score vectors), with
   C = 1 - (1/R) 11^T the centring matrix (over a numFieldType, so R%:R != 0 for R > 0; the fieldType
   lemmas take R%:R != 0 as a hypothesis):
   - when the advantages sum to zero, \sum_i A_i g_i = \sum_i A_i (g_i - gbar), gbar the mean row, and a
     score component c0 shared by the whole group cancels: \sum_i A_i (c0 + h_i) = \sum_i A_i h_i;
     in particular both hold for A_i = (r_i - rbar)/c, every group r and every scale c (the zero sum
     is D4_zero_sum.advantages_sum_to_zero), over a numFieldType;
   - C is idempotent, has trace R - 1, is symmetric, its left kernel is span 1, and its rank is R - 1;
   - rank (C G) = rank G - dim (col G cap span 1) (with G^T's row space standing for col G), and hence
     rank (C G) <= R - 1;
   - for binary rewards with 0 < k < R (successes listed first) and advantage values a_+, a_- with
     k a_+ + (R - k) a_- = 0, \sum_i A_i g_i = k a_+ (gbar_C - gbar_W), gbar_C, gbar_W the class means;
     in particular for A_i = (r_i - rbar)/c, every scale c: a_+ = (1 - k/R)/c, a_- = -(k/R)/c;
   - the group gradient G^T A (A any column) has rank at most 1. *)

Set Warnings "-notation-overridden,-ambiguous-paths".
From mathcomp Require Import all_ssreflect all_algebra.
From GRPO Require Import GroupCommon D4_zero_sum.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Centred.
Variable F : fieldType.

(* the centring matrix C = 1 - (1/R) * const_mx 1 (d7: centring_matrix) *)
Definition centring_matrix (R : nat) : 'M[F]_R := 1%:M - (R%:R)^-1 *: const_mx 1.

(* the mean score row gbar = (1/R) \sum_j g_j *)
Definition mean_row (R P : nat) (g : 'I_R -> 'rV[F]_P) : 'rV[F]_P := (R%:R)^-1 *: \sum_(j < R) g j.

(* the general version behind d7_rank_structure.group_gradient_depends_only_on_centred_scores:
   any advantages summing to zero, not only (r_i - rbar)/c *)
Theorem group_gradient_depends_only_on_centred_scores_for_any_advantages R P (A : 'I_R -> F) (g : 'I_R -> 'rV[F]_P) :
  \sum_(i < R) A i = 0 ->
  \sum_(i < R) A i *: g i = \sum_(i < R) A i *: (g i - mean_row g).
Proof.
move=> H; apply/esym; rewrite (eq_bigr (fun i => A i *: g i - A i *: mean_row g)); last by move=> i _; rewrite scalerBr.
by rewrite sumrB -scaler_suml H scale0r subr0.
Qed.

Lemma const_mx_mul_const m n p :
  (const_mx 1 : 'M[F]_(m, n)) *m (const_mx 1 : 'M[F]_(n, p)) = n%:R *: const_mx 1.
Proof.
apply/matrixP => i j; rewrite !mxE mulr1.
by under eq_bigr do rewrite !mxE mulr1; rewrite sumr_const card_ord.
Qed.

Lemma row_mul_const n p (x : 'rV[F]_n) :
  x *m (const_mx 1 : 'M[F]_(n, p)) = (\sum_(j < n) x 0 j) *: const_mx 1.
Proof.
apply/matrixP => i j; rewrite !mxE mulr1 (ord1 i).
by apply: eq_bigr => l _; rewrite mxE mulr1.
Qed.

Lemma centring_matrixM_const R p (HR : R%:R != 0 :> F) :
  centring_matrix R *m (const_mx 1 : 'M[F]_(R, p)) = 0.
Proof.
rewrite /centring_matrix mulmxBl mul1mx -scalemxAl const_mx_mul_const scalerA mulVf //.
by rewrite scale1r subrr.
Qed.

Lemma centring_matrix_idem R (HR : R%:R != 0 :> F) :
  centring_matrix R *m centring_matrix R = centring_matrix R.
Proof.
rewrite {2}/centring_matrix mulmxBr mulmx1 -scalemxAr centring_matrixM_const //.
by rewrite scaler0 subr0.
Qed.

Lemma centring_matrix_trace R (HR : R%:R != 0 :> F) :
  \tr (centring_matrix R) = R%:R - 1.
Proof.
rewrite /centring_matrix mxtraceD mxtrace1 raddfN /= mxtraceZ.
have -> : \tr (const_mx 1 : 'M[F]_R) = R%:R.
  by rewrite /mxtrace; under eq_bigr do rewrite mxE; rewrite sumr_const card_ord.
by rewrite mulVf.
Qed.

Lemma centring_matrix_tr R : (centring_matrix R)^T = centring_matrix R.
Proof. by rewrite /centring_matrix linearB /= trmx1 linearZ /= trmx_const. Qed.

Lemma row_centring R (x : 'rV[F]_R) :
  x *m centring_matrix R = x - ((R%:R)^-1 * \sum_(j < R) x 0 j) *: const_mx 1.
Proof. by rewrite /centring_matrix mulmxBr mulmx1 -scalemxAr row_mul_const scalerA. Qed.

Lemma kermx_centring R (HR : R%:R != 0 :> F) :
  (kermx (centring_matrix R) :=: (const_mx 1 : 'rV[F]_R))%MS.
Proof.
apply/eqmxP/andP; split.
  apply/row_subP => i; have /eqP := row_centring (row i (kermx (centring_matrix R))).
  rewrite -row_mul mulmx_ker row0 eq_sym subr_eq0 => /eqP ->.
  by rewrite scalemx_sub.
apply/sub_kermxP; rewrite row_centring.
under eq_bigr do rewrite mxE; rewrite sumr_const card_ord mulVf //.
by rewrite scale1r subrr.
Qed.

(* mirrors d7_rank_structure.group_gradient_has_rank_at_most_one
   (for every R, P and every advantage column A, not only R = 4, P = 3) *)
Theorem group_gradient_has_rank_at_most_one R P (G : 'M[F]_(R, P)) (A : 'cV[F]_R) :
  (\rank (G^T *m A) <= 1)%N.
Proof. exact: rank_leq_col. Qed.

(* the general version behind d7_rank_structure.common_score_component_cancels_from_group_gradient:
   any advantages summing to zero, not only (r_i - rbar)/c *)
Theorem common_score_component_cancels_from_group_gradient_for_any_advantages R P (A : 'I_R -> F) (c0 : 'rV[F]_P)
    (h : 'I_R -> 'rV[F]_P) :
  \sum_(i < R) A i = 0 ->
  \sum_(i < R) A i *: (c0 + h i) = \sum_(i < R) A i *: h i.
Proof.
move=> H; rewrite (eq_bigr (fun i => A i *: c0 + A i *: h i)); last by move=> i _; rewrite scalerDr.
by rewrite big_split /= -scaler_suml H scale0r add0r.
Qed.

(* rank (C G) + dim (col G cap span 1) = rank G, for R%:R != 0 *)
Lemma centred_rank_add R P (HR : R%:R != 0 :> F) (G : 'M[F]_(R, P)) :
  (\rank (centring_matrix R *m G) + \rank (G^T :&: (const_mx 1%R : 'rV[F]_R))%MS)%N = \rank G.
Proof.
rewrite -mxrank_tr trmx_mul centring_matrix_tr -(mxrank_tr G).
rewrite -(mxrank_mul_ker G^T (centring_matrix R)).
by rewrite (cap_eqmx (eqmx_refl G^T) (kermx_centring HR)).
Qed.

Lemma centring_matrix_rank R (HR0 : (0 < R)%N) (HR : R%:R != 0 :> F) :
  \rank (centring_matrix R) = R.-1.
Proof.
have Hk := mxrank_ker (centring_matrix R); rewrite (kermx_centring HR) rank_rV in Hk.
have H1 : (const_mx 1 : 'rV[F]_R) != 0.
  apply/eqP => /matrixP /(_ 0 (Ordinal HR0)); rewrite !mxE => /eqP; by rewrite oner_eq0.
rewrite H1 /= in Hk.
by rewrite -subn1 Hk subKn // rank_leq_row.
Qed.

End Centred.

Arguments centring_matrix {F} R.

Print Assumptions group_gradient_depends_only_on_centred_scores_for_any_advantages.

Section Rank.
Variable F : numFieldType.

Lemma natr_pos_neq0 (n : nat) : (0 < n)%N -> (n%:R : F) != 0.
Proof. by rewrite pnatr_eq0 -lt0n. Qed.

(* mirrors d7_rank_structure.centring_matrix_is_idempotent *)
Theorem centring_matrix_is_idempotent R : (0 < R)%N ->
  centring_matrix R *m centring_matrix R = centring_matrix R :> 'M[F]_R.
Proof. by move=> HR; apply: centring_matrix_idem; apply: natr_pos_neq0. Qed.

(* mirrors d7_rank_structure.centring_matrix_has_trace_R_minus_1 *)
Theorem centring_matrix_has_trace_R_minus_1 R : (0 < R)%N ->
  \tr (centring_matrix R : 'M[F]_R) = R%:R - 1.
Proof. by move=> HR; apply: centring_matrix_trace; apply: natr_pos_neq0. Qed.

(* the left kernel of C is span 1: x C = x - (sum of x / R) 1 *)
Lemma centring_matrix_left_kernel_is_span_ones R : (0 < R)%N ->
  (kermx (centring_matrix R : 'M[F]_R) :=: (const_mx 1 : 'rV[F]_R))%MS.
Proof. by move=> HR; apply: kermx_centring; apply: natr_pos_neq0. Qed.

(* mirrors d7_rank_structure.centring_matrix_has_rank_R_minus_1 *)
Theorem centring_matrix_has_rank_R_minus_1 R : (0 < R)%N ->
  \rank (centring_matrix R : 'M[F]_R) = R.-1.
Proof. by move=> HR; apply: centring_matrix_rank => //; apply: natr_pos_neq0. Qed.

(* the additive form, for every R (for R = 0 both sides are 0) *)
Lemma centred_rank_plus_intersection_with_ones R P (G : 'M[F]_(R, P)) :
  (\rank (centring_matrix R *m G) + \rank (G^T :&: (const_mx 1%R : 'rV[F]_R))%MS)%N = \rank G.
Proof.
case: R G => [|R] G.
  have a : \rank (centring_matrix 0 *m G) = 0%N by apply/eqP; rewrite -leqn0 rank_leq_row.
  have b : \rank G = 0%N by apply/eqP; rewrite -leqn0 rank_leq_row.
  have c : \rank (G^T :&: (const_mx 1%R : 'rV[F]_0))%MS = 0%N by apply/eqP; rewrite -leqn0 rank_leq_col.
  by rewrite a b c.
by apply: centred_rank_add; apply: natr_pos_neq0.
Qed.

(* mirrors d7_rank_structure.centred_rank_is_rank_minus_intersection_with_ones
   (a Remark in the Python file; here for every R, P: G^T's row space is col(G), const_mx 1 spans 1) *)
Theorem centred_rank_is_rank_minus_intersection_with_ones R P (G : 'M[F]_(R, P)) :
  \rank (centring_matrix R *m G) = (\rank G - \rank (G^T :&: (const_mx 1%R : 'rV[F]_R))%MS)%N.
Proof. by rewrite -(centred_rank_plus_intersection_with_ones G) addnK. Qed.

(* the bound rank (C G) <= R - 1, for every R, P *)
Theorem centred_score_rank_is_at_most_R_minus_1 R P (G : 'M[F]_(R, P)) :
  (\rank (centring_matrix R *m G) <= R.-1)%N.
Proof.
case: R G => [|R] G; first by rewrite leqn0 -leqn0 rank_leq_row.
by rewrite -(centring_matrix_has_rank_R_minus_1 (ltn0Sn R)) mxrankM_maxl.
Qed.

(* the general version behind d7_rank_structure.binary_group_gradient_is_class_mean_difference:
   any a_+, a_- with k a_+ + (R - k) a_- = 0 *)
Theorem binary_group_gradient_is_class_mean_difference_for_any_advantages R P k (a_plus a_minus : F)
    (g : 'I_R -> 'rV[F]_P) :
  (0 < k)%N -> (k < R)%N ->
  k%:R * a_plus + (R - k)%:R * a_minus = 0 ->
  let A := fun i : 'I_R => if (i < k)%N then a_plus else a_minus in
  let gC := (k%:R)^-1 *: \sum_(i < R | (i < k)%N) g i in
  let gW := ((R - k)%:R)^-1 *: \sum_(i < R | (k <= i)%N) g i in
  \sum_(i < R) A i *: g i = (k%:R * a_plus) *: (gC - gW).
Proof.
move=> Hk HkR Hbal A gC gW.
have Hk0 : (k%:R : F) != 0 by apply: natr_pos_neq0.
have HRk0 : ((R - k)%:R : F) != 0 by apply: natr_pos_neq0; rewrite subn_gt0.
have E1 : \sum_(i < R | (i < k)%N) A i *: g i = a_plus *: \sum_(i < R | (i < k)%N) g i.
  by rewrite scaler_sumr; apply: eq_bigr => i Hi; rewrite /A Hi.
have E2 : \sum_(i < R | ~~ (i < k)%N) A i *: g i = a_minus *: \sum_(i < R | (k <= i)%N) g i.
  rewrite scaler_sumr; apply: eq_big => [i | i Hi]; first by rewrite -leqNgt.
  by rewrite /A (negbTE Hi).
rewrite (bigID (fun i : 'I_R => (i < k)%N)) /= E1 E2.
rewrite /gC /gW scalerBr !scalerA.
have -> : k%:R * a_plus * (k%:R)^-1 = a_plus by rewrite mulrAC mulfV // mul1r.
have -> : k%:R * a_plus * ((R - k)%:R)^-1 = - a_minus.
  move/eqP: Hbal; rewrite addr_eq0 => /eqP ->.
  by rewrite mulNr mulrAC mulfV // mul1r.
by rewrite scaleNr opprK.
Qed.

End Rank.

Print Assumptions centring_matrix_is_idempotent.
Print Assumptions centring_matrix_has_trace_R_minus_1.
Print Assumptions centring_matrix_has_rank_R_minus_1.
Print Assumptions centred_rank_is_rank_minus_intersection_with_ones.
Print Assumptions centred_score_rank_is_at_most_R_minus_1.
Print Assumptions binary_group_gradient_is_class_mean_difference_for_any_advantages.
Print Assumptions common_score_component_cancels_from_group_gradient_for_any_advantages.
Print Assumptions group_gradient_has_rank_at_most_one.

(* ---------------------------------------------------------------------- *)
(* The same three results for GRPO's advantages A_i = (r_i - rbar)/c       *)
(* ---------------------------------------------------------------------- *)

(* mirrors d7_rank_structure.group_gradient_depends_only_on_centred_scores
   (A_i = (r_i - rbar)/c for every group r and every common scale c, also c = 0; the zero sum is
   d4_zero_sum.advantages_sum_to_zero) *)
Theorem group_gradient_depends_only_on_centred_scores (F : numFieldType) R P (c : F)
    (r : 'I_R -> F) (g : 'I_R -> 'rV[F]_P) :
  \sum_(i < R) scaled_advantages c r i *: g i
    = \sum_(i < R) scaled_advantages c r i *: (g i - mean_row g).
Proof.
exact: (group_gradient_depends_only_on_centred_scores_for_any_advantages g (advantages_sum_to_zero c r)).
Qed.
Print Assumptions group_gradient_depends_only_on_centred_scores.

(* mirrors d7_rank_structure.common_score_component_cancels_from_group_gradient
   (A_i = (r_i - rbar)/c for every group r and every common scale c, also c = 0) *)
Theorem common_score_component_cancels_from_group_gradient (F : numFieldType) R P (c : F)
    (r : 'I_R -> F) (c0 : 'rV[F]_P) (h : 'I_R -> 'rV[F]_P) :
  \sum_(i < R) scaled_advantages c r i *: (c0 + h i) = \sum_(i < R) scaled_advantages c r i *: h i.
Proof.
exact: (common_score_component_cancels_from_group_gradient_for_any_advantages c0 h
          (advantages_sum_to_zero c r)).
Qed.
Print Assumptions common_score_component_cancels_from_group_gradient.

(* mirrors d7_rank_structure.binary_group_gradient_is_class_mean_difference
   (binary rewards with the k successes first, 0 < k < R, A_i = (r_i - rbar)/c for every common
   scale c, also c = 0: a_+ = (1 - k/R)/c, a_- = -(k/R)/c, and the balance
   k a_+ + (R - k) a_- = 0 is d4_zero_sum.binary_advantages_balance) *)
Theorem binary_group_gradient_is_class_mean_difference (F : numFieldType) R P k (c : F)
    (g : 'I_R -> 'rV[F]_P) :
  (0 < k)%N -> (k < R)%N ->
  let A := scaled_advantages c (binary_rewards k : 'I_R -> F) in
  let gC := (k%:R)^-1 *: \sum_(i < R | (i < k)%N) g i in
  let gW := ((R - k)%:R)^-1 *: \sum_(i < R | (k <= i)%N) g i in
  \sum_(i < R) A i *: g i = (k%:R * ((1 - k%:R / R%:R) / c)) *: (gC - gW).
Proof.
move=> Hk HkR A gC gW.
have HkR' : (k <= R)%N by exact: ltnW.
have HA : forall i : 'I_R,
    A i = if (i < k)%N then (1 - k%:R / R%:R) / c else - (k%:R / R%:R) / c.
  move=> i; rewrite /A /scaled_advantages; case: (ltnP i k) => hi.
    by rewrite binary_centred_reward_success.
  by rewrite binary_centred_reward_failure.
have Hbal : k%:R * ((1 - k%:R / R%:R) / c) + (R - k)%:R * (- (k%:R / R%:R) / c) = 0 :> F.
  rewrite natrB // !mulrA; apply: binary_advantages_balance_closed_form.
  exact: (leq_ltn_trans (leq0n k) HkR).
rewrite (eq_bigr (fun i : 'I_R => (if (i < k)%N then (1 - k%:R / R%:R) / c
                                   else - (k%:R / R%:R) / c) *: g i)) => [|i _]; last by rewrite HA.
exact: (binary_group_gradient_is_class_mean_difference_for_any_advantages g Hk HkR Hbal).
Qed.
Print Assumptions binary_group_gradient_is_class_mean_difference.
