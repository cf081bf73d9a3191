(* D7 Rank structure (second proof of part of derivations/d7_rank_structure.py).
   Only the centred-scores result is proved here (time ran out before the rank results):
   when the advantages sum to zero, \sum_i A_i g_i = \sum_i A_i (g_i - gbar), gbar the mean row. *)

Set Warnings "-notation-overridden,-ambiguous-paths".
From mathcomp Require Import all_ssreflect all_algebra.

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

(* mirrors d7_rank_structure.group_gradient_depends_only_on_centred_scores
   (any advantages summing to zero, not only (r_i - rbar)/c) *)
Theorem group_gradient_depends_only_on_centred_scores R P (A : 'I_R -> F) (g : 'I_R -> 'rV[F]_P) :
  \sum_(i < R) A i = 0 ->
  \sum_(i < R) A i *: g i = \sum_(i < R) A i *: (g i - mean_row g).
Proof.
move=> H; apply/esym; rewrite (eq_bigr (fun i => A i *: g i - A i *: mean_row g)); last by move=> i _; rewrite scalerBr.
by rewrite sumrB -scaler_suml H scale0r subr0.
Qed.

End Centred.

Print Assumptions group_gradient_depends_only_on_centred_scores.
