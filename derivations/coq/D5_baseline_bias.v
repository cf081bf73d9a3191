(* D5 Bias of the group baseline (second proof of derivations/d5_baseline_bias.py).

   For every group size R, every number K of outcomes and every dimension P:
   - r_i - rbar = (R-1)/R (r_i - rbar_{-i}) (R >= 2), and summed against score vectors
     g_i : 'rV_P, the no-std GRPO estimator (1/R) \sum_i (r_i - rbar) g_i is exactly (R-1)/R times
     the RLOO estimator (1/R) \sum_i (r_i - rbar_{-i}) g_i;
   - with R i.i.d. draws x_1..x_R from a finite distribution p on K outcomes (GroupCommon's
     `expectation`, a finite sum over all K^R outcome tuples), reward rho(x_j) and one score coordinate
     g(x_j) of mean zero (expectation1 p g = 0):
     E[(r_i - rbar) g_i] = (R-1)/R E[rho g] and E[(r_i - rbar_{-i}) g_i] = E[rho g];
     independence of different draws is not assumed but proved from the product form of the weights
     (bigA_distr_bigA: the expectation of \prod_l c_l(x_l) is \prod_l E[c_l]);
   - binary rewards with success probability 0 < p < 1 (realClosedFieldType, epsilon = 0):
     c_R(p) = \sum_(j < R) P(j) a_+(j+1) - \sum_(j < R) P(j) a_-(j), P(j) = 'C(R-1, j) p^j (1-p)^(R-1-j),
     with a_+(k) / a_-(k) the advantage of a success / failure in the binary group with k successes,
     taken from the DEFINITION of the advantages (grpo_advantages 0, resp. population_std_advantages 0,
     of the reward vector (i < k)), degenerate groups contributing 0 (a_+(R) = 0, a_-(0) = 0) as in
     d5.c_R; c_R(p) > 0 for every R >= 2, for the sample std and for the population std. *)

From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp Require Import ring zify.
From GRPO Require Import GroupCommon.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(* ------------------------------------------------------------------------------------------------ *)
(* Pointwise and estimator-level identities                                                          *)

Section Identities.
Variable F : numFieldType.

(* mirrors d5_baseline_bias.group_centred_reward_is_scaled_leave_one_out_reward *)
Theorem group_centred_reward_is_scaled_leave_one_out_reward (R : nat) (r : 'I_R -> F) (i : 'I_R) :
  (1 < R)%N -> centred_rewards r i = (R%:R - 1) / R%:R * rloo_advantages r i.
Proof. exact: centred_rewards_scaled_rloo. Qed.

(* mirrors d5_baseline_bias.no_std_group_estimator_is_scaled_rloo_estimator *)
Theorem no_std_group_estimator_is_scaled_rloo_estimator (R P : nat) (r : 'I_R -> F)
    (g : 'I_R -> 'rV[F]_P) :
  (1 < R)%N ->
  (R%:R)^-1 *: (\sum_(i < R) centred_rewards r i *: g i)
  = (R%:R - 1) / R%:R *: ((R%:R)^-1 *: (\sum_(i < R) rloo_advantages r i *: g i)).
Proof.
move=> hR; rewrite scalerA mulrC -scalerA; congr (_ *: _).
rewrite scaler_sumr; apply: eq_bigr => i _.
by rewrite scalerA -centred_rewards_scaled_rloo.
Qed.

End Identities.

Print Assumptions group_centred_reward_is_scaled_leave_one_out_reward.
Print Assumptions no_std_group_estimator_is_scaled_rloo_estimator.

(* ------------------------------------------------------------------------------------------------ *)
(* Expectation algebra over R i.i.d. draws                                                           *)

Section Expectations.
Variable F : numFieldType.
Variables R K : nat.
Variable p : 'I_K -> F.

Lemma expectation_add (f h : {ffun 'I_R -> 'I_K} -> F) :
  expectation p (fun x => f x + h x) = expectation p f + expectation p h.
Proof. by rewrite /expectation -big_split; apply: eq_bigr => x _; rewrite mulrDr. Qed.

Lemma expectation_sub (f h : {ffun 'I_R -> 'I_K} -> F) :
  expectation p (fun x => f x - h x) = expectation p f - expectation p h.
Proof. by rewrite /expectation -sumrB; apply: eq_bigr => x _; rewrite mulrBr. Qed.

Lemma expectation_scale (c : F) (f : {ffun 'I_R -> 'I_K} -> F) :
  expectation p (fun x => c * f x) = c * expectation p f.
Proof. by rewrite /expectation mulr_sumr; apply: eq_bigr => x _; rewrite mulrCA. Qed.

Lemma expectation_sum (f : 'I_R -> {ffun 'I_R -> 'I_K} -> F) :
  expectation p (fun x => \sum_(j < R) f j x) = \sum_(j < R) expectation p (f j).
Proof.
rewrite /expectation.
transitivity (\sum_(x : {ffun 'I_R -> 'I_K}) \sum_(j < R) \prod_(l < R) p (x l) * f j x).
  by apply: eq_bigr => x _; rewrite mulr_sumr.
exact: exchange_big.
Qed.

(* independence: E[\prod_l c_l(x_l)] = \prod_l E[c_l] *)
Lemma expectation_prod (c : 'I_R -> 'I_K -> F) :
  expectation p (fun x => \prod_(l < R) c l (x l)) = \prod_(l < R) expectation1 p (c l).
Proof.
rewrite /expectation /expectation1 bigA_distr_bigA /=.
by apply: eq_bigr => x _; rewrite -big_split.
Qed.

Hypothesis p_sum1 : \sum_(k < K) p k = 1.

Lemma expectation1_const1 : expectation1 p (fun _ => 1) = 1.
Proof. by rewrite /expectation1 -[RHS]p_sum1; apply: eq_bigr => k _; rewrite mulr1. Qed.

(* a function of one draw *)
Lemma expectation_one_draw (f : 'I_K -> F) (i : 'I_R) :
  expectation p (fun x => f (x i)) = expectation1 p f.
Proof.
transitivity (expectation p (fun x => \prod_(l < R) (if l == i then f else fun _ => 1) (x l))).
  rewrite /expectation; apply: eq_bigr => x _; congr (_ * _).
  rewrite (bigD1 i) //= eqxx big1 ?mulr1 // => l /negbTE ->; done.
rewrite (expectation_prod (fun l => if l == i then f else fun _ => 1)) (bigD1 i) //= eqxx.
rewrite big1 ?mulr1 //.
by move=> l /negbTE ->; exact: expectation1_const1.
Qed.

(* a product of functions of two different draws *)
Lemma expectation_two_draws (f h : 'I_K -> F) (j i : 'I_R) :
  j != i -> expectation p (fun x => f (x j) * h (x i)) = expectation1 p f * expectation1 p h.
Proof.
move=> hji.
pose c l := if l == j then f else if l == i then h else fun _ : 'I_K => 1.
transitivity (expectation p (fun x => \prod_(l < R) c l (x l))).
  rewrite /expectation; apply: eq_bigr => x _; congr (_ * _).
  rewrite (bigD1 j) //= (bigD1 i) /=; last by rewrite eq_sym.
  rewrite /c eqxx eq_sym (negbTE hji) eqxx big1 ?mulr1 // => l /andP [hlj hli].
  by rewrite (negbTE hlj) (negbTE hli).
rewrite (expectation_prod c) (bigD1 j) //= (bigD1 i) /=; last by rewrite eq_sym.
rewrite /c eqxx eq_sym (negbTE hji) eqxx big1 ?mulr1 // => l /andP [hlj hli].
by rewrite (negbTE hlj) (negbTE hli); exact: expectation1_const1.
Qed.

End Expectations.

Section Baselines.
Variable F : numFieldType.
Variables R K : nat.
Variables (p rho g : 'I_K -> F).
Hypothesis p_sum1 : \sum_(k < K) p k = 1.
Hypothesis g_mean0 : expectation1 p g = 0.

(* \sum_j E[rho(x_j) g(x_i)] = E[rho g]: only the diagonal term survives *)
Lemma sum_cross_expectations (i : 'I_R) :
  \sum_(j < R) expectation p (fun x : {ffun 'I_R -> 'I_K} => rho (x j) * g (x i))
  = expectation1 p (fun k => rho k * g k).
Proof.
rewrite (bigD1 i) //= big1 ?addr0.
  by rewrite (expectation_one_draw p_sum1 (fun k => rho k * g k)).
by move=> j hji; rewrite expectation_two_draws // g_mean0 mulr0.
Qed.

(* mirrors d5_baseline_bias.group_baseline_gradient_is_shrunk_by_R_minus_1_over_R *)
Theorem group_baseline_gradient_is_shrunk_by_R_minus_1_over_R (i : 'I_R) :
  expectation p (fun x : {ffun 'I_R -> 'I_K} => centred_rewards (fun j => rho (x j)) i * g (x i))
  = (R%:R - 1) / R%:R * expectation1 p (fun k => rho k * g k).
Proof.
have hR : (R%:R : F) != 0 by apply: natr_neq0; case: i => /= m; lia.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => rho (x i) * g (x i)
    - (R%:R)^-1 * \sum_(j < R) rho (x j) * g (x i))).
  apply: eq_bigr => x _; congr (_ * _).
  by rewrite /centred_rewards /group_mean mulrBl -mulr_suml mulrAC mulrC.
rewrite expectation_sub expectation_scale expectation_sum sum_cross_expectations.
rewrite (expectation_one_draw p_sum1 (fun k => rho k * g k)).
by field.
Qed.

(* mirrors d5_baseline_bias.leave_one_out_baseline_is_unbiased *)
Theorem leave_one_out_baseline_is_unbiased (i : 'I_R) :
  (1 < R)%N ->
  expectation p (fun x : {ffun 'I_R -> 'I_K} => rloo_advantages (fun j => rho (x j)) i * g (x i))
  = expectation1 p (fun k => rho k * g k).
Proof.
move=> hR1.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => rho (x i) * g (x i)
    - (R%:R - 1)^-1 * (\sum_(j < R) rho (x j) * g (x i) - rho (x i) * g (x i)))).
  apply: eq_bigr => x _; congr (_ * _).
  rewrite /rloo_advantages /leave_one_out_mean /= -mulr_suml mulrBl; congr (_ - _).
  by rewrite mulrAC mulrC mulrBl.
rewrite expectation_sub expectation_scale expectation_sub expectation_sum sum_cross_expectations.
rewrite (expectation_one_draw p_sum1 (fun k => rho k * g k)).
by rewrite subrr mulr0 subr0.
Qed.

End Baselines.

Print Assumptions group_baseline_gradient_is_shrunk_by_R_minus_1_over_R.
Print Assumptions leave_one_out_baseline_is_unbiased.

(* ------------------------------------------------------------------------------------------------ *)
(* Std scaling with binary rewards: c_R(p) > 0 for every R >= 2                                       *)

Section BinaryRewards.
Variable F : rcfType.

(* the binary group with k successes: r_i = 1 for i < k, 0 otherwise *)
Definition binary_group (R k : nat) : 'I_R -> F := fun i => ((i : nat) < k)%N%:R.
Arguments binary_group : clear implicits.

(* an advantage estimator, for every group size: A n r i *)
Definition advantage_estimator := forall n : nat, ('I_n -> F) -> 'I_n -> F.

(* GRPO with the sample std and eps = 0;  with the population std and eps = 0 *)
Definition sample_std_estimator : advantage_estimator := fun n => @grpo_advantages F n 0.
Definition population_std_estimator : advantage_estimator :=
  fun n => @population_std_advantages F n 0.

(* advantage of the first rollout (a success when k > 0) / of the last one (a failure when k < R)
   of the binary group with k successes *)
Definition first_rollout_advantage (A : advantage_estimator) (R k : nat) : F :=
  match R with 0 => 0 | n.+1 => A n.+1 (binary_group n.+1 k) ord0 end.
Definition last_rollout_advantage (A : advantage_estimator) (R k : nat) : F :=
  match R with 0 => 0 | n.+1 => A n.+1 (binary_group n.+1 k) ord_max end.

(* d5.a_plus / d5.a_minus: degenerate groups (k = R, resp. k = 0) contribute 0 *)
Definition a_plus (A : advantage_estimator) (R k : nat) : F :=
  if k == R then 0 else first_rollout_advantage A R k.
Definition a_minus (A : advantage_estimator) (R k : nat) : F :=
  if k == 0%N then 0 else last_rollout_advantage A R k.

(* d5.binomial_weight: P(j successes among the other R - 1 rollouts) *)
Definition binomial_weight (R : nat) (p : F) (j : nat) : F :=
  'C(R.-1, j)%:R * p ^+ j * (1 - p) ^+ (R.-1 - j).

(* d5.c_R (integer size): h(1) - h(0) *)
Definition c_R (A : advantage_estimator) (R : nat) (p : F) : F :=
  \sum_(j < R) binomial_weight R p j * a_plus A R j.+1
  - \sum_(j < R) binomial_weight R p j * a_minus A R j.

Definition c_R_sample (R : nat) (p : F) : F := c_R sample_std_estimator R p.
Definition c_R_population (R : nat) (p : F) : F := c_R population_std_estimator R p.

(* -- signs of the advantages of a mixed binary group -- *)

Lemma binary_group_sum (n k : nat) : (k <= n)%N -> \sum_(i < n) binary_group n k i = k%:R.
Proof.
move=> hk; transitivity (\sum_(i < n | (i < k)%N) (1 : F)).
  by rewrite [RHS]big_mkcond; apply: eq_bigr => i _; rewrite /binary_group; case: (i < k)%N.
by rewrite -(big_ord_widen n (fun _ => (1 : F)) hk) sumr_const card_ord.
Qed.

Lemma binary_group_mean (n k : nat) : (k <= n)%N -> group_mean (binary_group n k) = k%:R / n%:R.
Proof. by move=> hk; rewrite /group_mean binary_group_sum. Qed.

Lemma binary_centred_first (n k : nat) : (0 < k <= n)%N ->
  0 < centred_rewards (binary_group n.+1 k) ord0.
Proof.
case/andP=> hk0 hkn; rewrite /centred_rewards binary_group_mean; last by lia.
rewrite /binary_group /= hk0.
have hR : (0 : F) < n.+1%:R by rewrite ltr0n.
rewrite subr_gt0 ltr_pdivr_mulr // mul1r ltr_nat; lia.
Qed.

Lemma binary_centred_last (n k : nat) : (0 < k <= n)%N ->
  centred_rewards (binary_group n.+1 k) ord_max < 0.
Proof.
case/andP=> hk0 hkn; rewrite /centred_rewards binary_group_mean; last by lia.
have -> : binary_group n.+1 k ord_max = 0 by rewrite /binary_group /= ltnNge hkn.
have hR : (0 : F) < n.+1%:R by rewrite ltr0n.
by rewrite sub0r oppr_lt0 divr_gt0 // ltr0n.
Qed.

Lemma centred_sum_of_squares_gt0 (n : nat) (r : 'I_n -> F) (i : 'I_n) :
  centred_rewards r i != 0 -> 0 < centred_sum_of_squares r.
Proof.
move=> hi; rewrite /centred_sum_of_squares (bigD1 i) //=.
apply: ltr_paddr; first by apply: sumr_ge0 => j _; exact: sqr_ge0.
by rewrite lt0r sqr_ge0 andbT expf_neq0.
Qed.

Lemma sample_std_gt0 (n : nat) (r : 'I_n -> F) (i : 'I_n) :
  (1 < n)%N -> centred_rewards r i != 0 -> 0 < sample_std r.
Proof.
move=> hn hi; rewrite /sample_std sqrtr_gt0 divr_gt0 //; first exact: centred_sum_of_squares_gt0 hi.
by rewrite -(natrB F (ltnW hn)) ltr0n subn_gt0.
Qed.

Lemma population_std_gt0 (n : nat) (r : 'I_n -> F) (i : 'I_n) :
  centred_rewards r i != 0 -> 0 < population_std r.
Proof.
move=> hi; rewrite /population_std sqrtr_gt0 divr_gt0 //; first exact: centred_sum_of_squares_gt0 hi.
by rewrite ltr0n; case: i {hi} => m /=; lia.
Qed.

Lemma scaled_advantages_gt0 (n : nat) (c : F) (r : 'I_n -> F) (i : 'I_n) :
  0 < c -> 0 < centred_rewards r i -> 0 < scaled_advantages c r i.
Proof. by move=> hc hi; rewrite /scaled_advantages divr_gt0. Qed.

Lemma scaled_advantages_lt0 (n : nat) (c : F) (r : 'I_n -> F) (i : 'I_n) :
  0 < c -> centred_rewards r i < 0 -> scaled_advantages c r i < 0.
Proof.
move=> hc hi; rewrite /scaled_advantages -oppr_gt0 -mulNr divr_gt0 //.
by rewrite oppr_gt0.
Qed.

(* a positive-scale estimator: A n r i = (r_i - rbar) / c(r) with c(r) > 0 for a mixed group *)
Definition positively_scaled (A : advantage_estimator) : Prop :=
  forall (n : nat) (r : 'I_n -> F) (i : 'I_n), (1 < n)%N -> centred_rewards r i != 0 ->
  exists2 c : F, 0 < c & A n r i = scaled_advantages c r i.

Lemma sample_std_estimator_positively_scaled : positively_scaled sample_std_estimator.
Proof.
move=> n r i hn hi; exists (sample_std r + 0); last by [].
by rewrite addr0; exact: sample_std_gt0 hi.
Qed.

Lemma population_std_estimator_positively_scaled : positively_scaled population_std_estimator.
Proof.
move=> n r i hn hi; exists (population_std r + 0); last by [].
by rewrite addr0; exact: population_std_gt0 hi.
Qed.

Lemma a_plus_gt0 (A : advantage_estimator) (R k : nat) :
  positively_scaled A -> (0 < k < R)%N -> 0 < a_plus A R k.
Proof.
move=> hA /andP [hk0 hkR]; rewrite /a_plus (ltn_eqF hkR).
case: R hkR => [|n] hkR //=.
have hc := binary_centred_first (n := n) (k := k); rewrite hk0 /= -ltnS hkR in hc.
have [|c hc0 ->] := hA _ (binary_group n.+1 k) ord0 _ (lt0r_neq0 (hc isT)); first by lia.
exact: scaled_advantages_gt0 (hc isT).
Qed.

Lemma a_minus_lt0 (A : advantage_estimator) (R k : nat) :
  positively_scaled A -> (0 < k < R)%N -> a_minus A R k < 0.
Proof.
move=> hA /andP [hk0 hkR]; rewrite /a_minus eqn0Ngt hk0 /=.
case: R hkR => [|n] hkR //=.
have hc := binary_centred_last (n := n) (k := k); rewrite hk0 /= -ltnS hkR in hc.
have [|c hc0 ->] := hA _ (binary_group n.+1 k) ord_max _ (ltr0_neq0 (hc isT)); first by lia.
exact: scaled_advantages_lt0 (hc isT).
Qed.

Lemma binomial_weight_ge0 (R : nat) (p : F) (j : nat) :
  0 <= p <= 1 -> 0 <= binomial_weight R p j.
Proof.
case/andP=> hp0 hp1; rewrite /binomial_weight.
by rewrite !mulr_ge0 ?ler0n ?exprn_ge0 // subr_ge0.
Qed.

Lemma a_plus_ge0 (A : advantage_estimator) (R k : nat) :
  positively_scaled A -> (0 < k <= R)%N -> 0 <= a_plus A R k.
Proof.
move=> hA /andP [hk0 hkR]; case: (ltngtP k R) hkR => // [hlt|->] _; last by rewrite /a_plus eqxx.
by rewrite ltW // a_plus_gt0 // hk0 hlt.
Qed.

Lemma c_R_gt0 (A : advantage_estimator) (R : nat) (p : F) :
  positively_scaled A -> (1 < R)%N -> 0 < p < 1 -> 0 < c_R A R p.
Proof.
move=> hA hR /andP [hp0 hp1].
have hp : 0 <= p <= 1 by rewrite !ltW.
rewrite /c_R subr_gt0; apply: (@le_lt_trans _ _ 0).
  rewrite -oppr_ge0 -sumrN; apply: sumr_ge0 => j _; rewrite -mulrN.
  apply: mulr_ge0; first exact: binomial_weight_ge0.
  have [->|hj] := eqVneq (j : nat) 0%N; first by rewrite /a_minus eqxx oppr0.
  by rewrite oppr_ge0 ltW // a_minus_lt0 // lt0n hj ltn_ord.
case: R hR => [|n] // hn; rewrite big_ord_recl /=.
apply: ltr_paddr.
  apply: sumr_ge0 => j _; apply: mulr_ge0; first exact: binomial_weight_ge0.
  by apply: a_plus_ge0 => //; rewrite /= /bump /=; case: j => m /=; lia.
apply: mulr_gt0; last by apply: a_plus_gt0.
by rewrite /binomial_weight bin0 expr0 mulr1 mul1r subn0 exprn_gt0 // subr_gt0.
Qed.

End BinaryRewards.

(* mirrors d5_baseline_bias.c_R_sample_std_is_positive_for_every_R *)
Theorem c_R_sample_std_is_positive_for_every_R (F : rcfType) (R : nat) (p : F) :
  (1 < R)%N -> 0 < p < 1 -> 0 < c_R_sample R p.
Proof. exact/c_R_gt0/sample_std_estimator_positively_scaled. Qed.

Print Assumptions c_R_sample_std_is_positive_for_every_R.

(* mirrors d5_baseline_bias.c_R_population_std_is_positive_for_every_R *)
Theorem c_R_population_std_is_positive_for_every_R (F : rcfType) (R : nat) (p : F) :
  (1 < R)%N -> 0 < p < 1 -> 0 < c_R_population R p.
Proof. exact/c_R_gt0/population_std_estimator_positively_scaled. Qed.

Print Assumptions c_R_population_std_is_positive_for_every_R.
