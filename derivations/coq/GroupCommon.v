(* GroupCommon: shared definitions for D3_credit_collapse.v, D4_zero_sum.v and
   D5_baseline_bias.v (group mean, centred rewards, the GRPO / Dr. GRPO / RLOO
   advantages, token advantages, and the expectation over R i.i.d. draws from a
   finite distribution), with the few algebraic facts they all use.

   Mirrors grpo_verify/estimators.py and derivations/notation.py.  A group is a
   reward vector r : 'I_R -> F (one group of the Python (B, R) tensor).

   Conventions versus estimators.py: the Python code sets the advantages of a
   constant group to 0 and x / 0 to 0.  Over a field with MathComp's x / 0 = 0
   both hold for the centred and scaled advantages: a constant group has
   centred rewards exactly 0, whatever the scale.  RLOO is the exception: at
   R = 1 it divides by R - 1 = 0 and gives r_i - 0 = r_i, where the Python
   gives 0 (a one-rollout group is constant); every theorem about RLOO assumes
   R >= 2. *)

From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp Require Import ring zify.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(* ---------------------------------------------------------------------- *)
(* Definitions (computable at rat except those using Num.sqrt)            *)
(* ---------------------------------------------------------------------- *)

(* (1/R) sum_j r_j *)
Definition group_mean {F : fieldType} {R : nat} (r : 'I_R -> F) : F :=
  (\sum_(j < R) r j) / R%:R.

(* r_i - rbar;  estimators._centred *)
Definition centred_rewards {F : fieldType} {R : nat} (r : 'I_R -> F) (i : 'I_R) : F :=
  r i - group_mean r.

(* S_2 = sum_j (r_j - rbar)^2;  notation.centred_sum_of_squares *)
Definition centred_sum_of_squares {F : fieldType} {R : nat} (r : 'I_R -> F) : F :=
  \sum_(j < R) centred_rewards r j ^+ 2.

(* (r_i - rbar) / c for a scale c common to the group (c = s + eps, or 1) *)
Definition scaled_advantages {F : fieldType} {R : nat} (c : F) (r : 'I_R -> F) (i : 'I_R) : F :=
  centred_rewards r i / c.

(* Dr. GRPO: centred, not scaled;  estimators.dr_grpo_advantages *)
Definition dr_grpo_advantages {F : fieldType} {R : nat} (r : 'I_R -> F) (i : 'I_R) : F :=
  centred_rewards r i.

(* mean of the others, (sum_j r_j - r_i) / (R - 1), as estimators.rloo_advantages *)
Definition leave_one_out_mean {F : fieldType} {R : nat} (r : 'I_R -> F) (i : 'I_R) : F :=
  (\sum_(j < R) r j - r i) / (R%:R - 1).

(* RLOO: r_i - mean of the others;  estimators.rloo_advantages *)
Definition rloo_advantages {F : fieldType} {R : nat} (r : 'I_R -> F) (i : 'I_R) : F :=
  r i - leave_one_out_mean r i.

(* Bessel sample std sqrt(S_2 / (R - 1));  torch std(correction=1) *)
Definition sample_std {F : rcfType} {R : nat} (r : 'I_R -> F) : F :=
  Num.sqrt (centred_sum_of_squares r / (R%:R - 1)).

(* population std sqrt(S_2 / R);  torch std(correction=0) *)
Definition population_std {F : rcfType} {R : nat} (r : 'I_R -> F) : F :=
  Num.sqrt (centred_sum_of_squares r / R%:R).

(* estimators.grpo_advantages: (r_i - rbar) / (s + eps) *)
Definition grpo_advantages {F : rcfType} {R : nat} (eps : F) (r : 'I_R -> F) (i : 'I_R) : F :=
  scaled_advantages (sample_std r + eps) r i.

(* estimators.population_std_advantages: (r_i - rbar) / (sigma + eps) *)
Definition population_std_advantages {F : rcfType} {R : nat} (eps : F) (r : 'I_R -> F)
  (i : 'I_R) : F :=
  scaled_advantages (population_std r + eps) r i.

(* estimators.token_advantages: A_{i,t} = A_i * m_{i,t}, for N sequences of
   padded width T and a 0/1 mask m. *)
Definition token_advantages {F : fieldType} {N T : nat} (A : 'I_N -> F)
  (m : 'I_N -> 'I_T -> F) (i : 'I_N) (t : 'I_T) : F :=
  A i * m i t.

(* The completion mask of completions of lengths len: m_{i,t} = 1 iff t < |o_i|
   (positions are 0-based, as in the (N, T) token tensors). *)
Definition completion_mask {F : fieldType} {N T : nat} (len : 'I_N -> nat)
  (i : 'I_N) (t : 'I_T) : F :=
  (t < len i)%:R.

(* E[f] for R i.i.d. draws x_1..x_R from p on K outcomes:
   sum over all outcome tuples x of (prod_j p(x_j)) * f(x). *)
Definition expectation {F : fieldType} {R K : nat} (p : 'I_K -> F)
  (f : {ffun 'I_R -> 'I_K} -> F) : F :=
  \sum_(x : {ffun 'I_R -> 'I_K}) (\prod_(j < R) p (x j)) * f x.

(* E[f(o)] for a single draw o ~ p *)
Definition expectation1 {F : fieldType} {K : nat} (p : 'I_K -> F) (f : 'I_K -> F) : F :=
  \sum_(k < K) p k * f k.

(* ---------------------------------------------------------------------- *)
(* Shared facts                                                           *)
(* ---------------------------------------------------------------------- *)

Section Facts.
Variable F : numFieldType.

Lemma natr_neq0 (n : nat) : (0 < n)%N -> (n%:R : F) != 0.
Proof. by rewrite pnatr_eq0 -lt0n. Qed.

Lemma natr_sub1_neq0 (n : nat) : (1 < n)%N -> (n%:R - 1 : F) != 0.
Proof.
by move=> h; rewrite -(natrB F (ltnW h)) pnatr_eq0 subn_eq0 -ltnNge.
Qed.

(* R * rbar = sum_j r_j (also for R = 0, where both sides are 0) *)
Lemma natr_mul_group_mean (R : nat) (r : 'I_R -> F) :
  R%:R * group_mean r = \sum_(j < R) r j.
Proof.
rewrite /group_mean; case: R r => [|R] r; first by rewrite big_ord0 mul0r.
by rewrite mulrC -mulrA mulVf ?mulr1 // natr_neq0.
Qed.

(* The centred rewards of any group sum to zero. *)
Lemma sum_centred_rewards (R : nat) (r : 'I_R -> F) :
  \sum_(i < R) centred_rewards r i = 0.
Proof.
rewrite /centred_rewards sumrB sumr_const card_ord -mulr_natl natr_mul_group_mean.
by rewrite subrr.
Qed.


(* r_i - rbar = (R-1)/R (r_i - mean of the others), R >= 2 *)
Lemma centred_rewards_scaled_rloo (R : nat) (r : 'I_R -> F) (i : 'I_R) :
  (1 < R)%N -> centred_rewards r i = (R%:R - 1) / R%:R * rloo_advantages r i.
Proof.
move=> hR; have h0 : (R%:R : F) != 0 by apply: natr_neq0; lia.
have h1 : (R%:R - 1 : F) != 0 by apply: natr_sub1_neq0.
rewrite /centred_rewards /rloo_advantages /leave_one_out_mean /group_mean.
by field; rewrite h0 h1.
Qed.

End Facts.

Lemma centred_sum_of_squares_ge0 (F : realFieldType) (R : nat) (r : 'I_R -> F) :
  0 <= centred_sum_of_squares r.
Proof. by apply: sumr_ge0 => i _; exact: sqr_ge0. Qed.
