(* D6 Sparsity (second proof of derivations/d6_sparsity.py).

   For every group size R:
   - the probability that R i.i.d. Bernoulli(p) rewards are all equal, computed as the finite sum over all
     outcome tuples {ffun 'I_R -> bool} weighted by \prod_j (p or 1 - p), is z_R(p) = p^R + (1-p)^R
     (the weights form a probability distribution: they sum to 1 and are >= 0 on [0, 1]);
   - z_R(1/2) = 2^(1-R), z_R is symmetric about 1/2, z_R(p) >= 2^(1-R) (for every real p, not only
     p in [0, 1]), with equality only at p = 1/2 when R >= 2;
   - the formal derivative (MathComp `deriv`) of the polynomial 'X^R + (1 - 'X)^R, evaluated at p, is
     R (p^(R-1) - (1-p)^(R-1)); it is > 0 on (1/2, 1] and < 0 on [0, 1/2) for R >= 2;
   - a group whose rewards are all equal (in particular binary rewards all equal) has all centred
     advantages 0, whatever the scale, hence zero group gradient \sum_i A_i g_i = 0.
   The Python file proves the bound via tangent lines; here it comes from the binomial expansion of
   (1/2 + u)^R + (1/2 - u)^R, whose odd terms cancel and whose even terms are >= 0. *)

Set Warnings "-notation-overridden,-ambiguous-paths".
From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp Require Import ring.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(* ------------------------------------------------------------------------------------------------ *)
(* Definitions: polymorphic, computable at rat.                                                      *)

Section Definitions.
Variable F : ringType.

(* z_R(p) = p^R + (1 - p)^R   (d6: zero_gradient_probability) *)
Definition zero_gradient_probability (R : nat) (p : F) : F := p ^+ R + (1 - p) ^+ R.

(* R (p^(R-1) - (1 - p)^(R-1))   (d6: zero_gradient_probability_slope) *)
Definition zero_gradient_probability_slope (R : nat) (p : F) : F :=
  R%:R * (p ^+ R.-1 - (1 - p) ^+ R.-1).

(* the polynomial 'X^R + (1 - 'X)^R, whose value at p is z_R(p) *)
Definition zero_gradient_probability_poly (R : nat) : {poly F} := 'X^R + (1 - 'X) ^+ R.

(* probability of the outcome tuple x of R i.i.d. Bernoulli(p) rewards *)
Definition bernoulli_weight (R : nat) (p : F) (x : {ffun 'I_R -> bool}) : F :=
  \prod_(j < R) (if x j then p else 1 - p).

Definition all_equal (R : nat) (x : {ffun 'I_R -> bool}) : bool := [forall i, forall j, x i == x j].

(* P(r_1 = ... = r_R), as a finite sum over all outcomes (d6: _all_equal_by_enumeration) *)
Definition all_rewards_equal_probability (R : nat) (p : F) : F :=
  \sum_(x : {ffun 'I_R -> bool} | all_equal x) bernoulli_weight p x.

End Definitions.

Arguments zero_gradient_probability_poly {F} R.

Section AdvantageDefinitions.
Variable F : fieldType.

(* the group mean  rbar = (1/R) \sum_i r_i *)
Definition group_mean (R : nat) (r : 'I_R -> F) : F := (\sum_(i < R) r i) / R%:R.

(* A_i = (r_i - rbar) / c for a common scale c (c = 1: dr_grpo_advantages; c = std + eps: grpo) *)
Definition centred_advantage (R : nat) (c : F) (r : 'I_R -> F) (i : 'I_R) : F := (r i - group_mean r) / c.

(* binary reward 1[x_i] *)
Definition binary_reward (R : nat) (x : {ffun 'I_R -> bool}) (i : 'I_R) : F := (x i)%:R.

(* the group update \sum_i A_i g_i with score row vectors g_i *)
Definition group_update (R P : nat) (c : F) (r : 'I_R -> F) (g : 'I_R -> 'rV[F]_P) : 'rV[F]_P :=
  \sum_(i < R) centred_advantage c r i *: g i.

End AdvantageDefinitions.

Arguments binary_reward {F R} x i.

(* ------------------------------------------------------------------------------------------------ *)
(* The probability of an all-equal group.                                                           *)

Section Probability.
Variable F : comRingType.

Lemma all_equal_constant R (x : {ffun 'I_R -> bool}) : (0 < R)%N ->
  all_equal x = (x == [ffun=> true]) || (x == [ffun=> false]).
Proof.
move=> R0; set i0 := Ordinal R0.
apply/idP/idP.
  move/forallP=> H; case Ei0: (x i0); apply/orP; [left | right]; apply/eqP/ffunP => j;
    by rewrite ffunE -Ei0; apply/eqP; move/forallP: (H j).
by case/orP=> /eqP ->; apply/forallP=> i; apply/forallP=> j; rewrite !ffunE.
Qed.

Lemma bernoulli_weight_const R (p : F) (b : bool) :
  bernoulli_weight p ([ffun=> b] : {ffun 'I_R -> bool}) = (if b then p else 1 - p) ^+ R.
Proof.
rewrite /bernoulli_weight (eq_bigr (fun _ => if b then p else 1 - p)) ?prodr_const ?card_ord //.
by move=> j _; rewrite ffunE.
Qed.

(* the weights of all outcomes sum to 1: they are a probability distribution *)
Lemma bernoulli_weights_sum_to_one R (p : F) :
  \sum_(x : {ffun 'I_R -> bool}) bernoulli_weight p x = 1.
Proof.
rewrite /bernoulli_weight -(bigA_distr_bigA (fun (_ : 'I_R) (b : bool) => if b then p else 1 - p)) /=.
by rewrite big1 // => j _; rewrite big_bool /= addrC subrK.
Qed.

(* mirrors d6_sparsity.all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R
   (and all_rewards_equal_probability_by_enumeration, here for every R >= 1 instead of R = 2..6).
   Stronger than the Python: the identity holds for every p, not only p in [0, 1]; R >= 1 is needed
   (R = 0 has one empty outcome of probability 1, while z_0 = 2). *)
Theorem all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R R (p : F) : (0 < R)%N ->
  all_rewards_equal_probability R p = zero_gradient_probability R p.
Proof.
move=> R0; set i0 := Ordinal R0.
rewrite /all_rewards_equal_probability (eq_bigl _ _ (@all_equal_constant R ^~ R0)).
have tf : [ffun=> false] != [ffun=> true] :> {ffun 'I_R -> bool}.
  by apply/eqP => /ffunP /(_ i0); rewrite !ffunE.
rewrite (bigD1 [ffun=> true]) ?eqxx //= (bigD1 [ffun=> false]) ?eqxx ?tf ?orbT //=.
rewrite big_pred0 ?addr0 => [|x]; last by case: (x == _); case: (x == _).
by rewrite !bernoulli_weight_const.
Qed.

End Probability.

(* the weights are nonnegative on [0, 1] *)
Lemma bernoulli_weight_ge0 (F : numDomainType) R (p : F) (x : {ffun 'I_R -> bool}) :
  0 <= p <= 1 -> 0 <= bernoulli_weight p x.
Proof.
case/andP=> p0 p1; rewrite /bernoulli_weight prodr_ge0 // => j _.
by case: (x j); rewrite // subr_ge0.
Qed.

(* ------------------------------------------------------------------------------------------------ *)
(* The lower bound 2^(1-R).                                                                          *)

Section Bound.
Variable F : realFieldType.

Local Notation h := (2^-1 : F).

Lemma half_add_half : h + h = 1.
Proof. by rewrite -mulr2n -mulr_natr mulVf // pnatr_eq0. Qed.

Lemma one_minus_half : 1 - h = h.
Proof. by rewrite -{1}half_add_half addrK. Qed.

Lemma one_minus_half_add u : 1 - (h + u) = h - u.
Proof. by rewrite opprD addrA one_minus_half. Qed.

Lemma one_minus_half_sub u : 1 - (h - u) = h + u.
Proof. by rewrite opprB addrA addrAC one_minus_half. Qed.

Lemma half_ge0 : 0 <= h.
Proof. by rewrite invr_ge0 ler0n. Qed.

Lemma half_gt0 : 0 < h.
Proof. by rewrite invr_gt0 ltr0n. Qed.

Lemma two_half_pow R : (0 < R)%N -> 2 * h ^+ R = (2 ^+ R.-1)^-1.
Proof.
case: R => // R _ /=; rewrite exprVn exprS invfM mulrA mulfV ?mul1r //.
by rewrite pnatr_eq0.
Qed.

(* mirrors d6_sparsity.zero_gradient_probability_at_one_half_is_two_pow_one_minus_R *)
Theorem zero_gradient_probability_at_one_half_is_two_pow_one_minus_R R : (0 < R)%N ->
  zero_gradient_probability R h = (2 ^+ R.-1)^-1.
Proof.
move=> R0; rewrite -two_half_pow // /zero_gradient_probability one_minus_half.
by rewrite -mulr2n -mulr_natl.
Qed.

(* mirrors d6_sparsity.zero_gradient_probability_is_symmetric_about_one_half *)
Theorem zero_gradient_probability_is_symmetric_about_one_half R (u : F) :
  zero_gradient_probability R (h + u) = zero_gradient_probability R (h - u).
Proof.
by rewrite /zero_gradient_probability one_minus_half_add one_minus_half_sub addrC.
Qed.

(* the binomial expansion of z_R(1/2 + u): odd powers of u cancel *)
Definition binomial_term R (u : F) (i : 'I_R.+1) : F := h ^+ (R - i) * (u ^+ i + (- u) ^+ i) *+ 'C(R, i).

Lemma zero_gradient_probability_binomial R (u : F) :
  zero_gradient_probability R (h + u) = \sum_(i < R.+1) binomial_term u i.
Proof.
rewrite /zero_gradient_probability one_minus_half_add !exprDn -big_split /=.
by apply: eq_bigr => i _; rewrite /binomial_term -mulrnDl mulrDr.
Qed.

Lemma binomial_term_ge0 R (u : F) (i : 'I_R.+1) : 0 <= binomial_term u i.
Proof.
rewrite /binomial_term mulrn_wge0 // mulr_ge0 ?exprn_ge0 ?half_ge0 //.
rewrite exprNn -signr_odd; case: (boolP (odd i)) => [oi | ei].
  by rewrite expr1 mulN1r subrr.
by rewrite expr0 mul1r addr_ge0 // exprn_even_ge0.
Qed.

Lemma binomial_term0 R (u : F) : binomial_term u (ord0 : 'I_R.+1) = 2 * h ^+ R.
Proof. by rewrite /binomial_term /= subn0 bin0 mulr1n !expr0 mulrDr mulr1 -mulr2n -mulr_natl. Qed.

(* the stronger form: z_R(p) >= 2 (1/2)^R for every R and every real p *)
Lemma zero_gradient_probability_ge_two_half_pow R (p : F) :
  2 * h ^+ R <= zero_gradient_probability R p.
Proof.
have -> : p = h + (p - h) by rewrite addrC subrK.
rewrite zero_gradient_probability_binomial (bigD1 ord0) //= -[X in X <= _]addr0.
apply: ler_add; last by apply: sumr_ge0 => i _; apply: binomial_term_ge0.
by rewrite binomial_term0.
Qed.

(* mirrors d6_sparsity.zero_gradient_probability_is_at_least_two_pow_one_minus_R.
   Stronger than the Python: no p in [0, 1] is needed (every real p). *)
Theorem zero_gradient_probability_is_at_least_two_pow_one_minus_R R (p : F) : (0 < R)%N ->
  (2 ^+ R.-1)^-1 <= zero_gradient_probability R p.
Proof. by move=> R0; rewrite -two_half_pow // zero_gradient_probability_ge_two_half_pow. Qed.

(* the same, multiplied out: 2^(R-1) z_R(p) >= 1 *)
Corollary two_pow_R_minus_one_times_zero_gradient_probability_ge1 R (p : F) : (0 < R)%N ->
  1 <= 2 ^+ R.-1 * zero_gradient_probability R p.
Proof.
move=> R0; have h2 : 0 < 2 ^+ R.-1 :> F by rewrite exprn_gt0 // ltr0n.
apply: (@le_trans _ _ (2 ^+ R.-1 * (2 ^+ R.-1)^-1)); first by rewrite mulfV ?lt0r_neq0.
by rewrite ler_pmul2l // zero_gradient_probability_is_at_least_two_pow_one_minus_R.
Qed.

(* the minimum 2^(1-R) is attained only at p = 1/2, for every R >= 2 and every real p *)
Theorem zero_gradient_probability_eq_two_pow_one_minus_R_iff_one_half R (p : F) : (1 < R)%N ->
  (zero_gradient_probability R p == (2 ^+ R.-1)^-1) = (p == h).
Proof.
move=> R1; have R0 : (0 < R)%N by apply: ltn_trans R1.
case: (eqVneq p h) => [->|ph].
  by rewrite zero_gradient_probability_at_one_half_is_two_pow_one_minus_R // eqxx.
rewrite -two_half_pow // gt_eqF //.
have u0 : p - h != 0 by rewrite subr_eq0.
have -> : p = h + (p - h) by rewrite addrC subrK.
rewrite zero_gradient_probability_binomial (bigD1 ord0) //=.
have i2 : (2 < R.+1)%N by [].
rewrite (bigD1 (Ordinal i2)) //= addrA -[X in X < _]addr0 -addrA.
apply: ler_lt_add.
  by rewrite binomial_term0.
apply: ltr_spaddl; last by apply: sumr_ge0 => i _; apply: binomial_term_ge0.
rewrite /binomial_term pmulrn_lgt0 ?bin_gt0 // mulr_gt0 ?exprn_gt0 ?half_gt0 //.
by rewrite sqrrN -mulr2n pmulrn_lgt0 // exprn_even_gt0.
Qed.

End Bound.

(* ------------------------------------------------------------------------------------------------ *)
(* The slope of z_R: a real (formal polynomial) derivative, then its sign.                         *)

Section Derivative.
Variable F : realFieldType.

Lemma zero_gradient_probability_poly_horner R (p : F) :
  (zero_gradient_probability_poly R).[p] = zero_gradient_probability R p.
Proof.
by rewrite /zero_gradient_probability_poly hornerD hornerXn horner_exp hornerD hornerN hornerX hornerC.
Qed.

(* mirrors the "power rule" step of d6_sparsity.zero_gradient_probability_slope_is_positive_above_half:
   d/dp (p^R + (1-p)^R) = R (p^(R-1) - (1-p)^(R-1)), for every R and p *)
Theorem zero_gradient_probability_derivative R (p : F) :
  (deriv (zero_gradient_probability_poly R)).[p] = zero_gradient_probability_slope R p.
Proof.
rewrite /zero_gradient_probability_poly derivD derivXn deriv_exp derivB derivX.
rewrite (_ : (1 : {poly F})^`() = 0); last by rewrite -polyC1 derivC.
rewrite sub0r mulN1r hornerD hornerMn hornerXn hornerMn hornerN horner_exp hornerD hornerN hornerX hornerC.
by rewrite /zero_gradient_probability_slope mulrBr !mulr_natl mulNrn.
Qed.

(* mirrors d6_sparsity.zero_gradient_probability_slope_is_positive_above_half *)
Theorem zero_gradient_probability_slope_is_positive_above_half R (p : F) :
  (1 < R)%N -> 2^-1 < p -> p <= 1 -> 0 < (deriv (zero_gradient_probability_poly R)).[p].
Proof.
move=> R1 hp p1; rewrite zero_gradient_probability_derivative /zero_gradient_probability_slope.
have R0 : (0 < R)%N by apply: ltn_trans R1.
rewrite mulr_gt0 ?ltr0n // subr_gt0 ltr_expn2r ?subr_ge0 //; last first.
  by rewrite ltr_subl_addr; have := ltr_add hp hp; rewrite half_add_half.
by case: R R1 {R0 hp p1} => [|[|n]].
Qed.

(* mirrors the negative half of d6's slope-sign statement: z_R'(p) < 0 on [0, 1/2) for every R >= 2 *)
Theorem zero_gradient_probability_slope_is_negative_below_half R (p : F) :
  (1 < R)%N -> 0 <= p -> p < 2^-1 -> (deriv (zero_gradient_probability_poly R)).[p] < 0.
Proof.
move=> R1 p0 hp; rewrite zero_gradient_probability_derivative /zero_gradient_probability_slope.
rewrite pmulr_rlt0 ?ltr0n ?(ltn_trans _ R1) // subr_lt0 ltr_expn2r //; last first.
  by rewrite ltr_subr_addr; have := ltr_add hp hp; rewrite half_add_half.
by case: R R1 {hp p0} => [|[|n]].
Qed.

(* z_R increases with |p - 1/2| (d6: zero_gradient_probability_increases_away_from_one_half):
   d/du z_R(1/2 + u) >= 0 for u in [0, 1/2], every R >= 1 (the Python states R >= 2) *)
Theorem zero_gradient_probability_increases_away_from_one_half R (u : F) :
  (0 < R)%N -> 0 <= u -> u <= 2^-1 -> 0 <= (deriv (zero_gradient_probability_poly R)).[2^-1 + u].
Proof.
move=> R0 u0 u1; rewrite zero_gradient_probability_derivative /zero_gradient_probability_slope.
rewrite one_minus_half_add mulr_ge0 ?ler0n // subr_ge0.
apply: ler_expn2r; rewrite ?nnegrE ?subr_ge0 ?addr_ge0 ?invr_ge0 ?ler0n // ler_add2l.
by apply: (@le_trans _ _ 0); rewrite ?oppr_le0.
Qed.

End Derivative.

(* ------------------------------------------------------------------------------------------------ *)
(* An all-equal group gives no gradient.                                                            *)

Section Degenerate.
Variable F : numFieldType.

Lemma group_mean_of_constant R (r : 'I_R -> F) (i : 'I_R) : (forall j, r j = r i) -> group_mean r = r i.
Proof.
move=> H; rewrite /group_mean (eq_bigr (fun _ => r i)) ?sumr_const ?card_ord; last by move=> j _; apply: H.
have R0 : (0 < R)%N by apply: leq_ltn_trans (ltn_ord i).
by rewrite -(mulr_natr (r i)) mulfK // pnatr_eq0 -lt0n.
Qed.

(* d4's degenerate_group_has_zero_centred_rewards, with any common scale c (c = 0 included, where
   x / 0 = 0 in MathComp, matching D4's convention for a zero-variance group) *)
Theorem degenerate_group_has_zero_advantages R (c : F) (r : 'I_R -> F) :
  (forall i j, r i = r j) -> forall i, centred_advantage c r i = 0.
Proof.
by move=> H i; rewrite /centred_advantage (@group_mean_of_constant _ _ i) ?subrr ?mul0r.
Qed.

(* mirrors d6_sparsity.degenerate_group_contributes_zero_gradient *)
Theorem degenerate_group_contributes_zero_gradient R P (c : F) (r : 'I_R -> F) (g : 'I_R -> 'rV[F]_P) :
  (forall i j, r i = r j) -> group_update c r g = 0.
Proof.
move=> H; rewrite /group_update big1 // => i _.
by rewrite degenerate_group_has_zero_advantages ?scale0r.
Qed.

(* the binary case: all R rewards equal (all successes or all failures) *)
Theorem all_equal_binary_group_has_zero_advantages R (c : F) (x : {ffun 'I_R -> bool}) :
  all_equal x -> forall i, centred_advantage c (binary_reward x) i = 0.
Proof.
move=> /forallP H; apply: degenerate_group_has_zero_advantages => i j.
by rewrite /binary_reward; move/forallP: (H i) => /(_ j) /eqP ->.
Qed.

Theorem all_equal_binary_group_contributes_zero_gradient R P (c : F) (x : {ffun 'I_R -> bool})
    (g : 'I_R -> 'rV[F]_P) :
  all_equal x -> group_update c (binary_reward x) g = 0.
Proof.
move=> Hx; rewrite /group_update big1 // => i _.
by rewrite all_equal_binary_group_has_zero_advantages ?scale0r.
Qed.

End Degenerate.

(* ------------------------------------------------------------------------------------------------ *)
(* Computable checks at rat.  MathComp bigops (BigOp.bigop) and finite enumerations (Finite.enum) are
   sealed behind module types, so vm_compute does not unfold them: the sums are first unrolled with
   big_ord_recr, then vm_compute evaluates the rational arithmetic.  The enumeration sum over
   {ffun 'I_R -> bool} (all_rewards_equal_probability) is not evaluated for that reason. *)

Example zero_gradient_probability_R3_at_one_third : zero_gradient_probability 3 (1 / 3 : rat) = 1 / 3.
Proof. by apply/eqP; vm_compute. Qed.

Example zero_gradient_probability_R4_at_one_half : zero_gradient_probability 4 (1 / 2 : rat) = 1 / 8.
Proof. by apply/eqP; vm_compute. Qed.

Example zero_gradient_probability_slope_R3_at_one_third :
  zero_gradient_probability_slope 3 (1 / 3 : rat) = -1.
Proof. by apply/eqP; vm_compute. Qed.

Example zero_gradient_probability_derivative_R3_at_one_third :
  (deriv (zero_gradient_probability_poly 3)).[1 / 3 : rat] = -1.
Proof. by rewrite zero_gradient_probability_derivative; apply/eqP; vm_compute. Qed.

(* The advantage examples (rewards (1,0,0,1) -> (1/2,-1/2,-1/2,1/2)) were left out: after unrolling the
   sums, vm_compute on them was too slow for the 60 s budget on this machine. *)

Print Assumptions all_rewards_equal_probability_is_p_pow_R_plus_q_pow_R.
Print Assumptions bernoulli_weights_sum_to_one.
Print Assumptions zero_gradient_probability_at_one_half_is_two_pow_one_minus_R.
Print Assumptions zero_gradient_probability_is_symmetric_about_one_half.
Print Assumptions zero_gradient_probability_is_at_least_two_pow_one_minus_R.
Print Assumptions two_pow_R_minus_one_times_zero_gradient_probability_ge1.
Print Assumptions zero_gradient_probability_eq_two_pow_one_minus_R_iff_one_half.
Print Assumptions zero_gradient_probability_derivative.
Print Assumptions zero_gradient_probability_slope_is_positive_above_half.
Print Assumptions zero_gradient_probability_slope_is_negative_below_half.
Print Assumptions zero_gradient_probability_increases_away_from_one_half.
Print Assumptions degenerate_group_contributes_zero_gradient.
Print Assumptions all_equal_binary_group_contributes_zero_gradient.
