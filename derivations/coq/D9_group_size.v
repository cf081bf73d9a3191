(* D9 Group size (second proof of derivations/d9_group_size.py).

   One coordinate of the score throughout (scalar scores g : 'I_K -> F); a total variance is the
   sum of the coordinates' variances.  For every group size R and every number K of outcomes:
   - r_i - rbar_{-i} = 1/(R-1) \sum_j (r_i - r_j) (R >= 2), and the RLOO estimator
     U = (1/R) \sum_i (r_i - rbar_{-i}) g_i equals 1/(R(R-1)) \sum_i \sum_j h(i, j) with the pair
     kernel h(i, j) = (r_i - r_j)(g_i - g_j)/2 (a U-statistic of order 2; h(i, i) = 0);
   - with R i.i.d. draws x_1..x_R from a finite distribution p on K outcomes (GroupCommon's
     `expectation`, a sum over all K^R outcome tuples; only \sum_k p k = 1 is used, not p >= 0),
     reward rho(x_j) and score g(x_j) with E[g] = 0: E[h(x_i, x_j)] = E[rho g] for draws i != j, the
     projection E[h(x, X)] = ((rho0 - mu) gamma0 + G)/2 (mu = E[r]), Var((r - m) g) = V_or(m) and
     Var(G/2 + (r - m) g/2) = V_or(m)/4 for every constant m (V_or = V_or(E[r]), so zeta_1 = V_or/4), and
     zeta_2 = Var(h) = (V_or + Var(r) E[g^2] + G^2)/2, every moment from D5's product-form
     expectation (independence is proved, not assumed);
   - Hoeffding's formula for RLOO for every R >= 2, proved by counting which draws coincide in
     E[U^2]: Var(U) = 4(R-2)/(R(R-1)) V_or/4 + 2/(R(R-1)) zeta_2, and Var(O) = V_or(m)/R for the
     oracle-baseline estimator O = (1/R) \sum_i (r_i - m) g_i with any constant m (R >= 1);
   - the algebra in the symbols V_or, zeta_1, zeta_2, c, kappa, N_j that the Python derives from it:
     the 1 + c/(R-1) form, c >= 0, Var(U) >= V_or/R, 0 <= ratio - 1 <= 2c/R, the no-std estimator's
     MSE, and the comparison with D8's optimal constant baseline b* = N_1/N_0. *)

Set Warnings "-notation-overridden,-ambiguous-paths".
From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp Require Import ring zify.
From GRPO Require Import GroupCommon D5_baseline_bias.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(* ------------------------------------------------------------------------------------------------ *)
(* Definitions                                                                                       *)

(* the RLOO estimator (1/R) \sum_i (r_i - rbar_{-i}) g_i, one score coordinate *)
Definition rloo_estimator {F : numFieldType} {R : nat} (r g : 'I_R -> F) : F :=
  (R%:R)^-1 * \sum_(i < R) rloo_advantages r i * g i.

(* the symmetric pair kernel h = (r_i - r_j)(g_i - g_j)/2 *)
Definition pair_kernel {F : numFieldType} (ri rj gi gj : F) : F := (ri - rj) * (gi - gj) / 2.

(* V_or(mu) = M_2 - 2 mu M_1 + mu^2 M_0 - G^2, M_a = E[r^a g^2], G = E[r g], for any constant mu:
   Var((r - mu) g) when E[g] = 0 *)
Definition oracle_variance_at {F : numFieldType} {K : nat} (p rho g : 'I_K -> F) (mu : F) : F :=
  expectation1 p (fun k => rho k ^+ 2 * g k ^+ 2)
  - 2 * mu * expectation1 p (fun k => rho k * g k ^+ 2)
  + mu ^+ 2 * expectation1 p (fun k => g k ^+ 2)
  - expectation1 p (fun k => rho k * g k) ^+ 2.

(* V_or = V_or(mu) at mu = E[r] (oracle_variance_at_mean) *)
Definition oracle_variance {F : numFieldType} {K : nat} (p rho g : 'I_K -> F) : F :=
  expectation1 p (fun k => rho k ^+ 2 * g k ^+ 2)
  - 2 * expectation1 p rho * expectation1 p (fun k => rho k * g k ^+ 2)
  + expectation1 p rho ^+ 2 * expectation1 p (fun k => g k ^+ 2)
  - expectation1 p (fun k => rho k * g k) ^+ 2.

Lemma oracle_variance_at_mean {F : numFieldType} {K : nat} (p rho g : 'I_K -> F) :
  oracle_variance_at p rho g (expectation1 p rho) = oracle_variance p rho g.
Proof. by []. Qed.

(* zeta_2 = (V_or + (S_2 - mu^2) M_0 + G^2)/2, S_2 = E[r^2] *)
Definition pair_kernel_variance {F : numFieldType} {K : nat} (p rho g : 'I_K -> F) : F :=
  (oracle_variance p rho g
   + (expectation1 p (fun k => rho k ^+ 2) - expectation1 p rho ^+ 2) * expectation1 p (fun k => g k ^+ 2)
   + expectation1 p (fun k => rho k * g k) ^+ 2) / 2.

(* ------------------------------------------------------------------------------------------------ *)
(* The pair kernel: pure algebra                                                                     *)

Section PairKernel.
Variable F : numFieldType.

(* mirrors d9_group_size.rloo_advantage_is_mean_of_pairwise_reward_differences
   (the sum runs over every j: the j = i term is 0) *)
Theorem rloo_advantage_is_mean_of_pairwise_reward_differences (R : nat) (r : 'I_R -> F) (i : 'I_R) :
  (1 < R)%N -> rloo_advantages r i = (R%:R - 1)^-1 * \sum_(j < R) (r i - r j).
Proof.
move=> hR; have h1 : (R%:R - 1 : F) != 0 by exact: natr_sub1_neq0.
have -> : \sum_(j < R) (r i - r j) = R%:R * r i - \sum_(j < R) r j.
  by rewrite sumrB sumr_const card_ord mulr_natl.
rewrite /rloo_advantages /leave_one_out_mean; set S := \sum_(j < R) r j.
by field.
Qed.

Lemma sum_pair_kernel (R : nat) (r g : 'I_R -> F) :
  \sum_(i < R) \sum_(j < R) (r i - r j) * (g i - g j) / 2
  = R%:R * (\sum_(i < R) r i * g i) - (\sum_(i < R) r i) * (\sum_(i < R) g i).
Proof.
transitivity (\sum_(i < R) (R%:R * (r i * g i) + (\sum_(j < R) r j * g j) - r i * (\sum_(j < R) g j)
    - (\sum_(j < R) r j) * g i) / 2).
  apply: eq_bigr => i _.
  transitivity (\sum_(j < R) (r i * g i + r j * g j - r i * g j - r j * g i) / 2).
    by apply: eq_bigr => j _; ring.
  by rewrite -mulr_suml !sumrB big_split /= sumr_const card_ord -mulr_sumr -mulr_suml mulr_natl.
rewrite -mulr_suml !sumrB big_split /= -mulr_suml -!mulr_sumr sumr_const card_ord.
rewrite -[(\sum_(j < R) r j * g j) *+ R]mulr_natl.
set A := \sum_(i < R) r i * g i; set Sr := \sum_(i < R) r i; set Sg := \sum_(i < R) g i.
by field.
Qed.

(* mirrors d9_group_size.rloo_estimator_is_u_statistic_of_pair_kernel
   (ordered pairs: h(i, i) = 0, so this is (R choose 2)^-1 \sum_(i < j) h(i, j)) *)
Theorem rloo_estimator_is_u_statistic_of_pair_kernel (R : nat) (r g : 'I_R -> F) :
  (1 < R)%N ->
  rloo_estimator r g
  = (R%:R * (R%:R - 1))^-1 * \sum_(i < R) \sum_(j < R) pair_kernel (r i) (r j) (g i) (g j).
Proof.
move=> hR; have h0 : (R%:R : F) != 0 by apply: natr_neq0; lia.
have h1 : (R%:R - 1 : F) != 0 by exact: natr_sub1_neq0.
rewrite /pair_kernel sum_pair_kernel /rloo_estimator.
transitivity ((R%:R)^-1 * \sum_(i < R) (r i * g i
    - (R%:R - 1)^-1 * ((\sum_(j < R) r j) * g i - r i * g i))).
  congr (_ * _); apply: eq_bigr => i _; rewrite /rloo_advantages /leave_one_out_mean.
  set S := \sum_(j < R) r j; set n := (R%:R : F) in h1 *; by field.
rewrite sumrB -mulr_sumr sumrB -mulr_sumr.
set A := \sum_(i < R) r i * g i; set Sr := \sum_(i < R) r i; set Sg := \sum_(i < R) g i.
by field; rewrite h0 h1.
Qed.

End PairKernel.

Print Assumptions rloo_advantage_is_mean_of_pairwise_reward_differences.
Print Assumptions rloo_estimator_is_u_statistic_of_pair_kernel.

(* ------------------------------------------------------------------------------------------------ *)
(* Expectation algebra for one draw and for products over several draws                              *)

Section Draws.
Variable F : numFieldType.
Variables R K : nat.
Variable p : 'I_K -> F.

Lemma eq_expectation (f h : {ffun 'I_R -> 'I_K} -> F) :
  (forall x, f x = h x) -> expectation p f = expectation p h.
Proof. by move=> e; apply: eq_bigr => x _; rewrite e. Qed.

Lemma expectation_bigsum (I : Type) (s : seq I) (P : pred I) (f : I -> {ffun 'I_R -> 'I_K} -> F) :
  expectation p (fun x => \sum_(j <- s | P j) f j x) = \sum_(j <- s | P j) expectation p (f j).
Proof.
rewrite /expectation (eq_bigr (fun x : {ffun 'I_R -> 'I_K} => \sum_(j <- s | P j) (\prod_(l < R) p (x l)) * f j x)).
  exact: exchange_big.
by move=> x _; rewrite mulr_sumr.
Qed.

Lemma eq_expectation1 (f h : 'I_K -> F) :
  (forall k, f k = h k) -> expectation1 p f = expectation1 p h.
Proof. by move=> e; apply: eq_bigr => k _; rewrite e. Qed.

Lemma expectation1_add (f h : 'I_K -> F) :
  expectation1 p (fun k => f k + h k) = expectation1 p f + expectation1 p h.
Proof. by rewrite /expectation1 -big_split; apply: eq_bigr => k _; rewrite mulrDr. Qed.

Lemma expectation1_sub (f h : 'I_K -> F) :
  expectation1 p (fun k => f k - h k) = expectation1 p f - expectation1 p h.
Proof. by rewrite /expectation1 -sumrB; apply: eq_bigr => k _; rewrite mulrBr. Qed.

Lemma expectation1_scale (c : F) (f : 'I_K -> F) :
  expectation1 p (fun k => c * f k) = c * expectation1 p f.
Proof. by rewrite /expectation1 mulr_sumr; apply: eq_bigr => k _; rewrite mulrCA. Qed.

Lemma prod_if1 (i : 'I_R) (f : 'I_R -> F) : \prod_(m < R) (if m == i then f m else 1) = f i.
Proof. by rewrite -big_mkcond big_pred1_eq. Qed.

(* a factor of one draw that no other factor shares, with mean zero, kills the product *)
Lemma lone_factor_zero (a b c d : 'I_K -> F) (i j k l : 'I_R) :
  expectation1 p a = 0 -> j != i -> k != i -> l != i ->
  expectation p (fun x => a (x i) * b (x j) * (c (x k) * d (x l))) = 0.
Proof.
move=> ha hj hk hl.
pose cc (m : 'I_R) (y : 'I_K) := (if m == i then a y else 1) * (if m == j then b y else 1)
  * ((if m == k then c y else 1) * (if m == l then d y else 1)).
transitivity (expectation p (fun x => \prod_(m < R) cc m (x m))).
  apply: eq_expectation => x; rewrite /cc !big_split /=.
  by rewrite (prod_if1 i (fun m => a (x m))) (prod_if1 j (fun m => b (x m)))
    (prod_if1 k (fun m => c (x m))) (prod_if1 l (fun m => d (x m))).
rewrite expectation_prod (bigD1 i) //= /cc eqxx.
rewrite [i == j]eq_sym [i == k]eq_sym [i == l]eq_sym (negbTE hj) (negbTE hk) (negbTE hl).
rewrite (eq_expectation1 (h := a)) ?ha ?mul0r // => y.
by rewrite !mulr1.
Qed.

Lemma sum_neq_const (i : 'I_R) (c : F) : \sum_(k < R | k != i) c = (R%:R - 1) * c.
Proof.
have e : \sum_(k < R) c = c + \sum_(k < R | k != i) c by rewrite (bigD1 i).
by apply: (addrI c); rewrite -e sumr_const card_ord mulrBl mul1r mulr_natl addrC subrK.
Qed.

End Draws.

(* ------------------------------------------------------------------------------------------------ *)
(* Moments of the pair kernel on two independent draws                                              *)

Section PairMoments.
Variable F : numFieldType.
Variables R K : nat.
Variables (p rho g : 'I_K -> F).
Hypothesis p_sum1 : \sum_(k < K) p k = 1.
Hypothesis g_mean0 : expectation1 p g = 0.

Let Er := expectation1 p rho.
Let G := expectation1 p (fun k => rho k * g k).

(* mirrors d9_group_size.pair_kernel_is_unbiased
   (draws i != j of the R i.i.d. draws; R = 2, i = 1, j = 2 is the Python's h(X_1, X_2)) *)
Theorem pair_kernel_is_unbiased (i j : 'I_R) :
  i != j ->
  expectation p (fun x : {ffun 'I_R -> 'I_K} => pair_kernel (rho (x i)) (rho (x j)) (g (x i)) (g (x j)))
  = expectation1 p (fun k => rho k * g k).
Proof.
move=> hij; have hji : j != i by rewrite eq_sym.
pose t k := rho k * g k.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} =>
    2^-1 * (t (x i) - rho (x i) * g (x j) - rho (x j) * g (x i) + t (x j)))).
  by apply: eq_expectation => x; rewrite /pair_kernel /t; field.
rewrite expectation_scale expectation_add !expectation_sub.
rewrite !(expectation_one_draw p_sum1) !expectation_two_draws // g_mean0 !mulr0.
by rewrite /t; field.
Qed.

(* mirrors d9_group_size.pair_kernel_projection_is_half_oracle_term_plus_half_gradient *)
Theorem pair_kernel_projection_is_half_oracle_term_plus_half_gradient (rho0 gamma0 : F) :
  expectation1 p (fun k => pair_kernel rho0 (rho k) gamma0 (g k))
  = ((rho0 - expectation1 p rho) * gamma0 + expectation1 p (fun k => rho k * g k)) / 2.
Proof.
transitivity (expectation1 p (fun k => 2^-1 * ((rho0 * gamma0) * 1 - rho0 * g k - gamma0 * rho k
    + rho k * g k))).
  by apply: eq_expectation1 => k; rewrite /pair_kernel; field.
rewrite expectation1_scale expectation1_add !expectation1_sub !expectation1_scale.
by rewrite expectation1_const1 // g_mean0; field.
Qed.

(* E[(r - m) g] = G and E[((r - m) g)^2] = V_or(m) + G^2 for every constant m (E[g] = 0) *)
Lemma oracle_term_mean_at (m : F) :
  expectation1 p (fun k => (rho k - m) * g k) = G.
Proof.
transitivity (expectation1 p (fun k => rho k * g k - m * g k)).
  by apply: eq_expectation1 => k; rewrite mulrBl.
by rewrite expectation1_sub expectation1_scale g_mean0 mulr0 subr0.
Qed.

Lemma oracle_term_second_moment_at (m : F) :
  expectation1 p (fun k => ((rho k - m) * g k) ^+ 2) = oracle_variance_at p rho g m + G ^+ 2.
Proof.
transitivity (expectation1 p (fun k => rho k ^+ 2 * g k ^+ 2 - (2 * m) * (rho k * g k ^+ 2)
    + m ^+ 2 * g k ^+ 2)).
  by apply: eq_expectation1 => k; ring.
rewrite expectation1_add expectation1_sub !expectation1_scale /oracle_variance_at -/G.
ring.
Qed.

Lemma oracle_term_mean :
  expectation1 p (fun k => (rho k - Er) * g k) = G.
Proof. exact: oracle_term_mean_at. Qed.

Lemma oracle_term_second_moment :
  expectation1 p (fun k => ((rho k - Er) * g k) ^+ 2) = oracle_variance p rho g + G ^+ 2.
Proof. by rewrite oracle_term_second_moment_at oracle_variance_at_mean. Qed.

(* mirrors d9_group_size.oracle_baseline_term_variance_is_V_or
   (for every constant baseline mu, as in the Python; V_or(mu) = oracle_variance_at) *)
Theorem oracle_baseline_term_variance_is_V_or (mu : F) :
  expectation1 p (fun k => ((rho k - mu) * g k) ^+ 2)
  - expectation1 p (fun k => (rho k - mu) * g k) ^+ 2
  = oracle_variance_at p rho g mu.
Proof. by rewrite oracle_term_second_moment_at oracle_term_mean_at addrK. Qed.

(* the same at mu = E[r] *)
Theorem oracle_baseline_term_variance_is_V_or_at_the_mean :
  expectation1 p (fun k => ((rho k - expectation1 p rho) * g k) ^+ 2)
  - expectation1 p (fun k => (rho k - expectation1 p rho) * g k) ^+ 2
  = oracle_variance p rho g.
Proof. by rewrite oracle_baseline_term_variance_is_V_or oracle_variance_at_mean. Qed.

(* mirrors d9_group_size.first_projection_variance_is_quarter_oracle_variance
   (h_1 = G/2 + (r - mu) g/2 for every constant mu, as in the Python; at mu = E[r] it is the
   projection of pair_kernel_projection_is_half_oracle_term_plus_half_gradient) *)
Theorem first_projection_variance_is_quarter_oracle_variance (mu : F) :
  let h1 k := expectation1 p (fun k => rho k * g k) / 2 + (rho k - mu) * g k / 2 in
  expectation1 p (fun k => h1 k ^+ 2) - expectation1 p h1 ^+ 2 = oracle_variance_at p rho g mu / 4.
Proof.
move=> h1; rewrite -/G in h1 *.
pose t k := (rho k - mu) * g k.
have e1 : expectation1 p h1 = G.
  transitivity (expectation1 p (fun k => 2^-1 * t k + (2^-1 * G) * 1)).
    by apply: eq_expectation1 => k; rewrite /h1 /t; field.
  rewrite expectation1_add !expectation1_scale expectation1_const1 // oracle_term_mean_at.
  by field.
have e2 : expectation1 p (fun k => h1 k ^+ 2)
    = 4^-1 * expectation1 p (fun k => t k ^+ 2) + (2^-1 * G) * G + (4^-1 * G ^+ 2) * 1.
  transitivity (expectation1 p (fun k => 4^-1 * t k ^+ 2 + (2^-1 * G) * t k + (4^-1 * G ^+ 2) * 1)).
    by apply: eq_expectation1 => k; rewrite /h1 /t; field.
  by rewrite !expectation1_add !expectation1_scale expectation1_const1 // oracle_term_mean_at.
by rewrite e1 e2 oracle_term_second_moment_at; field.
Qed.

(* the same at mu = E[r], in the projection's form ((r - E[r]) g + G)/2 *)
Theorem first_projection_variance_is_quarter_oracle_variance_at_the_mean :
  let h1 k := ((rho k - expectation1 p rho) * g k + expectation1 p (fun k => rho k * g k)) / 2 in
  expectation1 p (fun k => h1 k ^+ 2) - expectation1 p h1 ^+ 2 = oracle_variance p rho g / 4.
Proof.
move=> h1; rewrite -oracle_variance_at_mean.
rewrite -(first_projection_variance_is_quarter_oracle_variance (expectation1 p rho)) /=.
have e : h1 =1 (fun k => G / 2 + (rho k - expectation1 p rho) * g k / 2).
  by move=> k; rewrite /h1 -/G; field.
rewrite -/G; congr (_ - _ ^+ 2); apply: eq_expectation1 => k; by rewrite e.
Qed.

(* mirrors d9_group_size.pair_kernel_variance_closed_form
   (draws i != j; zeta_2 = Var(h) = E[h^2] - (grad J)^2, one coordinate) *)
Theorem pair_kernel_variance_closed_form (i j : 'I_R) :
  i != j ->
  expectation p (fun x : {ffun 'I_R -> 'I_K} =>
    pair_kernel (rho (x i)) (rho (x j)) (g (x i)) (g (x j)) ^+ 2)
  - expectation1 p (fun k => rho k * g k) ^+ 2
  = pair_kernel_variance p rho g.
Proof.
move=> hij; have hji : j != i by rewrite eq_sym.
pose A k := rho k ^+ 2 * g k ^+ 2.
pose B k := rho k ^+ 2.
pose C k := g k ^+ 2.
pose D k := rho k ^+ 2 * g k.
pose E k := rho k * g k ^+ 2.
pose T k := rho k * g k.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => 4^-1 * (
    (A (x i) + A (x j)) + (B (x i) * C (x j) + B (x j) * C (x i))
    - 2 * (D (x i) * g (x j) + D (x j) * g (x i)) - 2 * (E (x i) * rho (x j) + E (x j) * rho (x i))
    + 4 * (T (x i) * T (x j)))) - G ^+ 2).
  congr (_ - _); apply: eq_expectation => x.
  by rewrite /pair_kernel /A /B /C /D /E /T; field.
rewrite !(expectation_sub, expectation_scale, expectation_add).
rewrite !(expectation_one_draw p_sum1) !expectation_two_draws // g_mean0 !mulr0 !addr0.
rewrite /pair_kernel_variance /oracle_variance -/Er -/G /A /B /C /E /T.
by field.
Qed.

End PairMoments.

Print Assumptions pair_kernel_is_unbiased.
Print Assumptions pair_kernel_projection_is_half_oracle_term_plus_half_gradient.
Print Assumptions oracle_baseline_term_variance_is_V_or.
Print Assumptions oracle_baseline_term_variance_is_V_or_at_the_mean.
Print Assumptions first_projection_variance_is_quarter_oracle_variance.
Print Assumptions first_projection_variance_is_quarter_oracle_variance_at_the_mean.
Print Assumptions pair_kernel_variance_closed_form.

(* ------------------------------------------------------------------------------------------------ *)
(* The oracle-baseline estimator for every constant baseline mu                                      *)

Section OracleBaseline.
Variable F : numFieldType.
Variables R K : nat.
Variables (p rho g : 'I_K -> F).
Hypothesis p_sum1 : \sum_(k < K) p k = 1.
Hypothesis g_mean0 : expectation1 p g = 0.
Variable mu : F.

Let G := expectation1 p (fun k => rho k * g k).
Let t k := (rho k - mu) * g k.
Let O (x : {ffun 'I_R -> 'I_K}) := (R%:R)^-1 * \sum_(i < R) t (x i).

Lemma mean_oracle_at : (0 < R)%N -> expectation p O = G.
Proof.
move=> hR; have h0 : (R%:R : F) != 0 by apply: natr_neq0.
rewrite /O expectation_scale expectation_sum.
rewrite (eq_bigr (fun _ => G)); last first.
  by move=> i _; rewrite (expectation_one_draw p_sum1 t) /t oracle_term_mean_at.
by rewrite sumr_const card_ord -[G *+ R]mulr_natl mulKf.
Qed.

Lemma second_moment_oracle_at :
  expectation p (fun x => O x * O x)
  = (R%:R)^-1 * (R%:R)^-1 * (R%:R * (oracle_variance_at p rho g mu + G ^+ 2 + (R%:R - 1) * G ^+ 2)).
Proof.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} =>
    (R%:R)^-1 * (R%:R)^-1 * \sum_(i < R) \sum_(k < R) t (x i) * t (x k))).
  apply: eq_expectation => x; rewrite /O mulrACA mulr_suml; congr (_ * _).
  by apply: eq_bigr => i _; rewrite mulr_sumr.
rewrite expectation_scale expectation_sum; congr (_ * _).
rewrite (eq_bigr (fun _ => oracle_variance_at p rho g mu + G ^+ 2 + (R%:R - 1) * G ^+ 2)).
  by rewrite sumr_const card_ord mulr_natl.
move=> i _; rewrite expectation_sum (bigD1 i) //=.
rewrite (expectation_one_draw p_sum1 (fun k => t k * t k)); congr (_ + _).
  rewrite -(oracle_term_second_moment_at p rho g mu); apply: eq_expectation1 => k.
  by rewrite /t expr2.
rewrite -(sum_neq_const i); apply: eq_bigr => k hki.
have hik : i != k by rewrite eq_sym.
by rewrite (expectation_two_draws p_sum1 t t hik) /t oracle_term_mean_at // expr2.
Qed.

(* mirrors d9_group_size.oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R
   (one coordinate; R >= 1; every constant baseline mu, as in the Python) *)
Theorem oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R :
  (0 < R)%N ->
  let Or := fun x : {ffun 'I_R -> 'I_K} =>
    (R%:R)^-1 * \sum_(i < R) (rho (x i) - mu) * g (x i) in
  expectation p (fun x => Or x ^+ 2) - expectation p Or ^+ 2 = oracle_variance_at p rho g mu / R%:R.
Proof.
move=> hR Or; have h0 : (R%:R : F) != 0 by apply: natr_neq0.
have -> : expectation p Or = expectation p O by [].
transitivity (expectation p (fun x => O x * O x) - expectation p O ^+ 2).
  by congr (_ - _); apply: eq_expectation => x; rewrite expr2.
rewrite second_moment_oracle_at mean_oracle_at //.
by field.
Qed.

End OracleBaseline.

Print Assumptions oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R.

(* ------------------------------------------------------------------------------------------------ *)
(* Hoeffding's counting for every R: which draws coincide in E[O^2], E[O D], E[D^2]                 *)

Section Hoeffding.
Variable F : numFieldType.
Variables R K : nat.
Variables (p rho g : 'I_K -> F).
Hypothesis p_sum1 : \sum_(k < K) p k = 1.
Hypothesis g_mean0 : expectation1 p g = 0.

Let mu := expectation1 p rho.
Let G := expectation1 p (fun k => rho k * g k).
Let s k := rho k - mu.
Let t k := s k * g k.

(* the oracle-baseline estimator O and the degenerate part D: U = O - D *)
Let O (x : {ffun 'I_R -> 'I_K}) := (R%:R)^-1 * \sum_(i < R) t (x i).
Let D (x : {ffun 'I_R -> 'I_K}) :=
  (R%:R * (R%:R - 1))^-1 * \sum_(i < R) \sum_(j < R | j != i) s (x j) * g (x i).

Lemma s_mean0 : expectation1 p s = 0.
Proof.
transitivity (expectation1 p (fun k => rho k - mu * 1)).
  by apply: eq_expectation1 => k; rewrite /s mulr1.
by rewrite expectation1_sub expectation1_scale expectation1_const1 // mulr1 subrr.
Qed.

Lemma t_mean : expectation1 p t = G.
Proof. exact: oracle_term_mean. Qed.

Lemma t_second_moment : expectation1 p (fun k => t k * t k) = oracle_variance p rho g + G ^+ 2.
Proof.
rewrite -(oracle_term_second_moment p rho g); apply: eq_expectation1 => k.
by rewrite /t /s expr2.
Qed.

Lemma s_second_moment :
  expectation1 p (fun k => s k * s k) = expectation1 p (fun k => rho k ^+ 2) - mu ^+ 2.
Proof.
transitivity (expectation1 p (fun k => rho k ^+ 2 - (2 * mu) * rho k + mu ^+ 2 * 1)).
  by apply: eq_expectation1 => k; rewrite /s; ring.
rewrite expectation1_add expectation1_sub !expectation1_scale expectation1_const1 // -/mu.
by ring.
Qed.

Lemma g_second_moment : expectation1 p (fun k => g k * g k) = expectation1 p (fun k => g k ^+ 2).
Proof. by apply: eq_expectation1 => k; rewrite expr2. Qed.

Lemma rloo_is_oracle_minus_degenerate (x : {ffun 'I_R -> 'I_K}) :
  (1 < R)%N -> rloo_estimator (fun j => rho (x j)) (fun j => g (x j)) = O x - D x.
Proof.
move=> hR; have h0 : (R%:R : F) != 0 by apply: natr_neq0; lia.
have h1 : (R%:R - 1 : F) != 0 by exact: natr_sub1_neq0.
rewrite /rloo_estimator /O /D.
transitivity ((R%:R)^-1 * \sum_(i < R) (t (x i)
    - (R%:R - 1)^-1 * \sum_(j < R | j != i) s (x j) * g (x i))).
  congr (_ * _); apply: eq_bigr => i _; rewrite -mulr_suml.
  have e : \sum_(j < R) s (x j) = s (x i) + \sum_(j < R | j != i) s (x j) by rewrite (bigD1 i).
  have e2 : \sum_(j < R) s (x j) = \sum_(j < R) rho (x j) - R%:R * mu.
    by rewrite /s sumrB sumr_const card_ord mulr_natl.
  move: e; rewrite e2 => e.
  have -> : \sum_(j < R | j != i) s (x j) = \sum_(j < R) rho (x j) - R%:R * mu - s (x i).
    by rewrite e addrC addKr.
  rewrite /rloo_advantages /leave_one_out_mean /t /s.
  set S := \sum_(j < R) rho (x j); set n := (R%:R : F) in h1 *.
  by field.
rewrite sumrB -mulr_sumr.
set A := \sum_(i < R) t (x i); set B := \sum_(i < R) \sum_(j < R | j != i) s (x j) * g (x i).
by field; rewrite h0 h1.
Qed.

Lemma mean_O : (0 < R)%N -> expectation p O = G.
Proof.
move=> hR; have h0 : (R%:R : F) != 0 by apply: natr_neq0.
rewrite /O expectation_scale expectation_sum.
rewrite (eq_bigr (fun _ => G)); last by move=> i _; rewrite (expectation_one_draw p_sum1 t) t_mean.
by rewrite sumr_const card_ord -[G *+ R]mulr_natl mulKf.
Qed.

Lemma mean_D : expectation p D = 0.
Proof.
rewrite /D expectation_scale expectation_sum big1 ?mulr0 // => i _.
rewrite expectation_bigsum big1 // => j hji.
by rewrite (expectation_two_draws p_sum1 s g hji) s_mean0 mul0r.
Qed.

Lemma second_moment_O :
  expectation p (fun x => O x * O x)
  = (R%:R)^-1 * (R%:R)^-1 * (R%:R * (oracle_variance p rho g + G ^+ 2 + (R%:R - 1) * G ^+ 2)).
Proof.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} =>
    (R%:R)^-1 * (R%:R)^-1 * \sum_(i < R) \sum_(k < R) t (x i) * t (x k))).
  apply: eq_expectation => x; rewrite /O mulrACA mulr_suml; congr (_ * _).
  by apply: eq_bigr => i _; rewrite mulr_sumr.
rewrite expectation_scale expectation_sum; congr (_ * _).
rewrite (eq_bigr (fun _ => oracle_variance p rho g + G ^+ 2 + (R%:R - 1) * G ^+ 2)).
  by rewrite sumr_const card_ord mulr_natl.
move=> i _; rewrite expectation_sum (bigD1 i) //=.
rewrite (expectation_one_draw p_sum1 (fun k => t k * t k)) t_second_moment; congr (_ + _).
rewrite -(sum_neq_const i); apply: eq_bigr => k hki.
have hik : i != k by rewrite eq_sym.
by rewrite (expectation_two_draws p_sum1 t t hik) t_mean expr2.
Qed.

Lemma cross_moment_OD : expectation p (fun x => O x * D x) = 0.
Proof.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} =>
    ((R%:R)^-1 * (R%:R * (R%:R - 1))^-1) * \sum_(k < R) \sum_(i < R) \sum_(j < R | j != i)
      (s (x k) * g (x k)) * (s (x j) * g (x i)))).
  apply: eq_expectation => x; rewrite /O /D mulrACA mulr_suml; congr (_ * _).
  apply: eq_bigr => k _; rewrite mulr_sumr; apply: eq_bigr => i _; rewrite mulr_sumr.
  by apply: eq_bigr => j _.
rewrite expectation_scale expectation_sum big1 ?mulr0 // => k _.
rewrite expectation_sum big1 // => i _.
rewrite expectation_bigsum big1 // => j hji.
case: (eqVneq k j) => [->|hkj].
  transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => g (x i) * s (x j) * (g (x j) * s (x j)))).
    by apply: eq_expectation => x; ring.
  exact: lone_factor_zero.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => s (x j) * g (x k) * (s (x k) * g (x i)))).
  by apply: eq_expectation => x; ring.
apply: lone_factor_zero => //; first exact: s_mean0.
by rewrite eq_sym.
Qed.

Lemma degenerate_far (i j k : 'I_R) :
  j != i -> k != i -> k != j ->
  \sum_(l < R | l != k)
     expectation p (fun x : {ffun 'I_R -> 'I_K} => s (x j) * g (x i) * (s (x l) * g (x k))) = 0.
Proof.
move=> hji hki hkj; apply: big1 => l hlk.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => g (x k) * s (x j) * (g (x i) * s (x l)))).
  by apply: eq_expectation => x; ring.
by apply: lone_factor_zero; rewrite // eq_sym.
Qed.

Lemma degenerate_at_i (i j : 'I_R) :
  j != i ->
  \sum_(l < R | l != i)
     expectation p (fun x : {ffun 'I_R -> 'I_K} => s (x j) * g (x i) * (s (x l) * g (x i)))
  = (expectation1 p (fun k => rho k ^+ 2) - mu ^+ 2) * expectation1 p (fun k => g k ^+ 2).
Proof.
move=> hji; have hij : i != j by rewrite eq_sym.
rewrite (bigD1 j) //= big1 ?addr0 => [|l /andP [hli hlj]]; last first.
  by apply: lone_factor_zero => //; exact: s_mean0.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} =>
    (fun k => s k * s k) (x j) * (fun k => g k * g k) (x i))).
  by apply: eq_expectation => x /=; ring.
by rewrite (expectation_two_draws p_sum1 (fun k => s k * s k) (fun k => g k * g k) hji) s_second_moment g_second_moment.
Qed.

Lemma degenerate_at_j (i j : 'I_R) :
  j != i ->
  \sum_(l < R | l != j)
     expectation p (fun x : {ffun 'I_R -> 'I_K} => s (x j) * g (x i) * (s (x l) * g (x j)))
  = G ^+ 2.
Proof.
move=> hji; have hij : i != j by rewrite eq_sym.
rewrite (bigD1 i) //= big1 ?addr0 => [|l /andP [hlj hli]]; last first.
  transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => s (x l) * g (x i) * (s (x j) * g (x j)))).
    by apply: eq_expectation => x; ring.
  by apply: lone_factor_zero; rewrite ?s_mean0 // eq_sym.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} => t (x j) * t (x i))).
  by apply: eq_expectation => x; rewrite /t; ring.
by rewrite (expectation_two_draws p_sum1 t t hji) t_mean expr2.
Qed.

(* for fixed draws i != j: only (k, l) = (i, j) and (j, i) survive *)
Lemma degenerate_pair_sum (i j : 'I_R) :
  j != i ->
  \sum_(k < R) \sum_(l < R | l != k)
     expectation p (fun x : {ffun 'I_R -> 'I_K} => s (x j) * g (x i) * (s (x l) * g (x k)))
  = (expectation1 p (fun k => rho k ^+ 2) - mu ^+ 2) * expectation1 p (fun k => g k ^+ 2) + G ^+ 2.
Proof.
move=> hji; have hij : i != j by rewrite eq_sym.
rewrite (bigD1 i) //= degenerate_at_i //; congr (_ + _).
rewrite (bigD1 j) //= degenerate_at_j // big1 ?addr0 // => k /andP [hki hkj].
exact: degenerate_far.
Qed.

Lemma second_moment_D :
  expectation p (fun x => D x * D x)
  = (R%:R * (R%:R - 1))^-1 * (R%:R * (R%:R - 1))^-1 * (R%:R * ((R%:R - 1) *
    ((expectation1 p (fun k => rho k ^+ 2) - mu ^+ 2) * expectation1 p (fun k => g k ^+ 2) + G ^+ 2))).
Proof.
transitivity (expectation p (fun x : {ffun 'I_R -> 'I_K} =>
    (R%:R * (R%:R - 1))^-1 * (R%:R * (R%:R - 1))^-1 * \sum_(i < R) \sum_(j < R | j != i)
      \sum_(k < R) \sum_(l < R | l != k) (s (x j) * g (x i)) * (s (x l) * g (x k)))).
  apply: eq_expectation => x; rewrite /D mulrACA mulr_suml; congr (_ * _).
  apply: eq_bigr => i _; rewrite mulr_suml; apply: eq_bigr => j _; rewrite mulr_sumr.
  by apply: eq_bigr => k _; rewrite mulr_sumr.
rewrite expectation_scale expectation_sum; congr (_ * _).
set C := (_ * _ + G ^+ 2).
rewrite (eq_bigr (fun _ => (R%:R - 1) * C)); first by rewrite sumr_const card_ord mulr_natl.
move=> i _; rewrite expectation_bigsum -(sum_neq_const i); apply: eq_bigr => j hji.
rewrite expectation_sum /C -(degenerate_pair_sum hji); apply: eq_bigr => k _.
by rewrite expectation_bigsum.
Qed.

(* the oracle-baseline estimator at mu = E[r], the O of U = O - D (one coordinate; R >= 1) *)
Theorem oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R_at_the_mean :
  (0 < R)%N ->
  let Or := fun x : {ffun 'I_R -> 'I_K} =>
    (R%:R)^-1 * \sum_(i < R) (rho (x i) - expectation1 p rho) * g (x i) in
  expectation p (fun x => Or x ^+ 2) - expectation p Or ^+ 2 = oracle_variance p rho g / R%:R.
Proof.
move=> hR; rewrite -oracle_variance_at_mean.
exact: (oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R rho p_sum1 g_mean0
  (expectation1 p rho) hR).
Qed.

(* mirrors d9_group_size.rloo_variance_is_hoeffding_formula_for_every_R
   (one coordinate; U is the RLOO estimator itself, (1/R) \sum_i (r_i - rbar_{-i}) g_i, equal to the
   Python's (R \sum_i r_i g_i - (\sum_i r_i)(\sum_i g_i))/(R(R-1)) by
   rloo_estimator_is_u_statistic_of_pair_kernel; zeta_1 = V_or/4, zeta_2 = pair_kernel_variance).
   Proved by counting which of the R i.i.d. draws coincide in E[U^2]: U = O - D with O the oracle
   estimator and D = 1/(R(R-1)) \sum_(i != j) (r_j - mu) g_i; E[O D] = 0 and in E[D^2] only the
   pairs of pairs sharing both indices survive (a draw that occurs once, with (r - mu) or g, has
   mean zero). *)
Theorem rloo_variance_is_hoeffding_formula_for_every_R :
  (1 < R)%N ->
  let U := fun x : {ffun 'I_R -> 'I_K} => rloo_estimator (fun j => rho (x j)) (fun j => g (x j)) in
  expectation p (fun x => U x ^+ 2) - expectation p U ^+ 2
  = 4 * (R%:R - 2) / (R%:R * (R%:R - 1)) * (oracle_variance p rho g / 4)
    + 2 / (R%:R * (R%:R - 1)) * pair_kernel_variance p rho g.
Proof.
move=> hR U; have h0 : (R%:R : F) != 0 by apply: natr_neq0; lia.
have h1 : (R%:R - 1 : F) != 0 by exact: natr_sub1_neq0.
have eU : expectation p U = expectation p O - expectation p D.
  rewrite -expectation_sub; apply: eq_expectation => x.
  exact: rloo_is_oracle_minus_degenerate.
have eU2 : expectation p (fun x => U x ^+ 2)
    = expectation p (fun x => O x * O x) - 2 * expectation p (fun x => O x * D x)
      + expectation p (fun x => D x * D x).
  transitivity (expectation p (fun x => O x * O x - 2 * (O x * D x) + D x * D x)).
    by apply: eq_expectation => x; rewrite /U rloo_is_oracle_minus_degenerate //; ring.
  by rewrite expectation_add expectation_sub expectation_scale.
rewrite eU2 eU mean_O; last by lia.
rewrite mean_D cross_moment_OD second_moment_O second_moment_D.
rewrite /pair_kernel_variance -/mu -/G.
by field; rewrite h0 h1.
Qed.

End Hoeffding.

Print Assumptions oracle_baseline_estimator_variance_is_V_or_over_R_for_every_R_at_the_mean.
Print Assumptions rloo_variance_is_hoeffding_formula_for_every_R.

(* ------------------------------------------------------------------------------------------------ *)
(* Consequences: pure algebra in the symbols V_or, zeta_1, zeta_2, c                                 *)

Section Consequences.
Variable F : realFieldType.

Lemma natr_gt0_of_gt1 (R : nat) : (1 < R)%N -> 0 < (R%:R : F).
Proof. by move=> hR; rewrite ltr0n; lia. Qed.

Lemma natr_sub1_gt0 (R : nat) : (1 < R)%N -> 0 < (R%:R - 1 : F).
Proof. by move=> hR; rewrite subr_gt0 ltr1n. Qed.

(* mirrors d9_group_size.rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1
   (V_or != 0: the Python's V_or is a positive symbol) *)
Theorem rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1 (R : nat) (V Z1 Z2 : F) :
  (1 < R)%N -> V != 0 -> Z1 = V / 4 ->
  4 * (R%:R - 2) / (R%:R * (R%:R - 1)) * Z1 + 2 / (R%:R * (R%:R - 1)) * Z2
  = V / R%:R * (1 + (2 * Z2 / V - 1) / (R%:R - 1)).
Proof.
move=> hR hV ->; have h0 : (R%:R : F) != 0 by rewrite gt_eqF // natr_gt0_of_gt1.
have h1 : (R%:R - 1 : F) != 0 by rewrite gt_eqF // natr_sub1_gt0.
by field; rewrite hV h0 h1.
Qed.

(* mirrors d9_group_size.rloo_variance_constant_c_is_nonnegative
   (sigma2 = Var(r), M0 = E||g||^2, J2 = ||grad J||^2, 2 zeta_2 = V_or + sigma2 M0 + J2) *)
Theorem rloo_variance_constant_c_is_nonnegative (V sigma2 M0 J2 Z2 : F) :
  0 < V -> 0 <= sigma2 -> 0 <= M0 -> 0 <= J2 -> Z2 = (V + sigma2 * M0 + J2) / 2 ->
  0 <= 2 * Z2 / V - 1.
Proof.
move=> hV hs hM hJ ->.
have -> : 2 * ((V + sigma2 * M0 + J2) / 2) / V - 1 = (sigma2 * M0 + J2) / V.
  by field; rewrite gt_eqF.
by apply: divr_ge0; [apply: addr_ge0; [exact: mulr_ge0 | done] | exact: ltW].
Qed.

(* mirrors d9_group_size.rloo_variance_closed_form *)
Theorem rloo_variance_closed_form (R : nat) (V Z1 Z2 sigma2 M0 J2 : F) :
  (1 < R)%N -> Z1 = V / 4 -> Z2 = (V + sigma2 * M0 + J2) / 2 ->
  4 * (R%:R - 2) / (R%:R * (R%:R - 1)) * Z1 + 2 / (R%:R * (R%:R - 1)) * Z2
  = V / R%:R + (sigma2 * M0 + J2) / (R%:R * (R%:R - 1)).
Proof.
move=> hR -> ->; have h0 : (R%:R : F) != 0 by rewrite gt_eqF // natr_gt0_of_gt1.
have h1 : (R%:R - 1 : F) != 0 by rewrite gt_eqF // natr_sub1_gt0.
by field; rewrite h0 h1.
Qed.

(* mirrors d9_group_size.rloo_variance_ratio_excess_is_between_zero_and_2c_over_R
   (both bounds: 0 <= ratio - 1 <= 2c/R) *)
Theorem rloo_variance_ratio_excess_is_between_zero_and_2c_over_R (R : nat) (c : F) :
  (1 < R)%N -> 0 <= c ->
  0 <= (1 + c / (R%:R - 1)) - 1 /\ (1 + c / (R%:R - 1)) - 1 <= 2 * c / R%:R.
Proof.
move=> hR hc; have h0 := natr_gt0_of_gt1 hR; have h1 := natr_sub1_gt0 hR.
rewrite addrC addKr; split; first by apply: divr_ge0; [done | exact: ltW].
rewrite -subr_ge0.
have -> : 2 * c / R%:R - c / (R%:R - 1) = c * (R%:R - 2) / (R%:R * (R%:R - 1)).
  by field; rewrite !gt_eqF.
apply: divr_ge0; last by apply: mulr_ge0; exact: ltW.
apply: mulr_ge0 => //; rewrite subr_ge0 (_ : 2 = 2%:R) // ler_nat; lia.
Qed.

(* mirrors d9_group_size.rloo_variance_is_at_least_oracle_variance *)
Theorem rloo_variance_is_at_least_oracle_variance (R : nat) (V c : F) :
  (1 < R)%N -> 0 < V -> 0 <= c -> V / R%:R <= V / R%:R * (1 + c / (R%:R - 1)).
Proof.
move=> hR hV hc; have h0 := natr_gt0_of_gt1 hR; have h1 := natr_sub1_gt0 hR.
rewrite mulrDr mulr1 ler_addl; apply: mulr_ge0; apply: divr_ge0 => //; exact: ltW.
Qed.

End Consequences.

Print Assumptions rloo_variance_is_oracle_variance_times_one_plus_c_over_R_minus_1.
Print Assumptions rloo_variance_constant_c_is_nonnegative.
Print Assumptions rloo_variance_closed_form.
Print Assumptions rloo_variance_ratio_excess_is_between_zero_and_2c_over_R.
Print Assumptions rloo_variance_is_at_least_oracle_variance.

(* ------------------------------------------------------------------------------------------------ *)
(* The no-std (Dr. GRPO) estimator (R-1)/R U and the optimal constant baseline b* (D8): algebra     *)

(* D8's V(b) = N_2 - 2 b N_1 + b^2 N_0 - J_2, N_j = E[r^j ||g||^2], J_2 = ||grad J||^2 *)
Definition constant_baseline_variance {F : numFieldType} (N0 N1 N2 J2 b : F) : F :=
  N2 - 2 * b * N1 + b ^+ 2 * N0 - J2.

Section NoStdAndOptimal.
Variable F : realFieldType.

(* mirrors d9_group_size.no_std_group_estimator_mse_closed_form
   (VarU = Var(U), G = one coordinate of grad J, J2 = G^2; R >= 1) *)
Theorem no_std_group_estimator_mse_closed_form (R : nat) (VarU G J2 : F) :
  (0 < R)%N -> G ^+ 2 = J2 ->
  ((R%:R - 1) / R%:R) ^+ 2 * VarU + (G - (R%:R - 1) / R%:R * G) ^+ 2
  = ((R%:R - 1) / R%:R) ^+ 2 * VarU + J2 / R%:R ^+ 2.
Proof.
move=> hR <-; have h0 : (R%:R : F) != 0 by rewrite pnatr_eq0 -lt0n.
by field.
Qed.

(* mirrors d9_group_size.no_std_mse_ratio_to_oracle_variance *)
Theorem no_std_mse_ratio_to_oracle_variance (R : nat) (VarU V J2 c kappa : F) :
  (1 < R)%N -> V != 0 ->
  VarU = V / R%:R * (1 + c / (R%:R - 1)) -> J2 = kappa * V ->
  (((R%:R - 1) / R%:R) ^+ 2 * VarU + J2 / R%:R ^+ 2) / (V / R%:R)
  = 1 + (c + kappa - 2) / R%:R + (1 - c) / R%:R ^+ 2.
Proof.
move=> hR hV -> ->; have h0 : (R%:R : F) != 0 by rewrite gt_eqF // natr_gt0_of_gt1.
have h1 : (R%:R - 1 : F) != 0 by rewrite gt_eqF // natr_sub1_gt0.
by field; rewrite hV h0 h1.
Qed.

(* mirrors d9_group_size.no_std_mse_minus_rloo_variance *)
Theorem no_std_mse_minus_rloo_variance (R : nat) (VarU J2 : F) :
  (0 < R)%N ->
  ((R%:R - 1) / R%:R) ^+ 2 * VarU + J2 / R%:R ^+ 2 - VarU
  = (J2 - (2 * R%:R - 1) * VarU) / R%:R ^+ 2.
Proof.
move=> hR; have h0 : (R%:R : F) != 0 by rewrite pnatr_eq0 -lt0n.
by field.
Qed.

(* mirrors d9_group_size.optimal_baseline_variance_is_oracle_variance_minus_covariance_term
   (b* = N_1/N_0, Cov(r, ||g||^2) = N_1 - mu N_0) *)
Theorem optimal_baseline_variance_is_oracle_variance_minus_covariance_term (N0 N1 N2 J2 mu : F) :
  N0 != 0 ->
  constant_baseline_variance N0 N1 N2 J2 (N1 / N0)
  = constant_baseline_variance N0 N1 N2 J2 mu - (N1 - mu * N0) ^+ 2 / N0.
Proof. by move=> hN; rewrite /constant_baseline_variance; field. Qed.

(* mirrors d9_group_size.rloo_variance_ratio_to_optimal_baseline_is_at_least_oracle_ratio *)
Theorem rloo_variance_ratio_to_optimal_baseline_is_at_least_oracle_ratio (R : nat) (V Vb c : F) :
  (1 < R)%N -> 0 < Vb -> Vb <= V -> 0 <= c ->
  1 <= (V / R%:R * (1 + c / (R%:R - 1))) / (Vb / R%:R).
Proof.
move=> hR hVb hle hc; have h0 := natr_gt0_of_gt1 F hR; have h1 := natr_sub1_gt0 F hR.
have -> : (V / R%:R * (1 + c / (R%:R - 1))) / (Vb / R%:R) = V / Vb * (1 + c / (R%:R - 1)).
  by field; rewrite !gt_eqF.
have hV1 : 1 <= V / Vb by rewrite ler_pdivl_mulr // mul1r.
have hc1 : 1 <= 1 + c / (R%:R - 1) by rewrite ler_addl divr_ge0 // ltW.
by have := ler_pmul ler01 ler01 hV1 hc1; rewrite mulr1.
Qed.

(* mirrors d9_group_size.group_mean_baseline_excess_variance_over_optimal_baseline
   (zeta_1 = V_or/4, 2 zeta_2 = V_or + sigma2 M0 + J2, V_or = V(mu)) *)
Theorem group_mean_baseline_excess_variance_over_optimal_baseline
    (R : nat) (V Z1 Z2 sigma2 M0 J2 N0 N1 N2 mu : F) :
  (1 < R)%N -> N0 != 0 -> Z1 = V / 4 -> Z2 = (V + sigma2 * M0 + J2) / 2 ->
  V = constant_baseline_variance N0 N1 N2 J2 mu ->
  4 * (R%:R - 2) / (R%:R * (R%:R - 1)) * Z1 + 2 / (R%:R * (R%:R - 1)) * Z2
    - constant_baseline_variance N0 N1 N2 J2 (N1 / N0) / R%:R
  = (N1 - mu * N0) ^+ 2 / (N0 * R%:R) + (sigma2 * M0 + J2) / (R%:R * (R%:R - 1)).
Proof.
move=> hR hN -> -> ->; have h0 : (R%:R : F) != 0 by rewrite gt_eqF // natr_gt0_of_gt1.
have h1 : (R%:R - 1 : F) != 0 by rewrite gt_eqF // natr_sub1_gt0.
by rewrite /constant_baseline_variance; field; rewrite hN h0 h1.
Qed.

(* mirrors d9_group_size.group_mean_baseline_is_never_optimal_at_finite_R *)
Theorem group_mean_baseline_is_never_optimal_at_finite_R
    (R : nat) (V Z1 Z2 sigma2 M0 J2 N0 N1 N2 mu : F) :
  (1 < R)%N -> 0 < N0 -> 0 <= J2 -> 0 < sigma2 * M0 ->
  Z1 = V / 4 -> Z2 = (V + sigma2 * M0 + J2) / 2 ->
  V = constant_baseline_variance N0 N1 N2 J2 mu ->
  0 < 4 * (R%:R - 2) / (R%:R * (R%:R - 1)) * Z1 + 2 / (R%:R * (R%:R - 1)) * Z2
      - constant_baseline_variance N0 N1 N2 J2 (N1 / N0) / R%:R.
Proof.
move=> hR hN hJ hsM e1 e2 e3.
rewrite (group_mean_baseline_excess_variance_over_optimal_baseline hR _ e1 e2 e3); last first.
  by rewrite gt_eqF.
have h0 := natr_gt0_of_gt1 F hR; have h1 := natr_sub1_gt0 F hR.
apply: ltr_paddl.
  by apply: divr_ge0; [exact: sqr_ge0 | apply: mulr_ge0; exact: ltW].
apply: divr_gt0; first exact: (ltr_paddr hJ hsM).
exact: mulr_gt0.
Qed.

End NoStdAndOptimal.

Print Assumptions no_std_group_estimator_mse_closed_form.
Print Assumptions no_std_mse_ratio_to_oracle_variance.
Print Assumptions no_std_mse_minus_rloo_variance.
Print Assumptions optimal_baseline_variance_is_oracle_variance_minus_covariance_term.
Print Assumptions rloo_variance_ratio_to_optimal_baseline_is_at_least_oracle_ratio.
Print Assumptions group_mean_baseline_excess_variance_over_optimal_baseline.
Print Assumptions group_mean_baseline_is_never_optimal_at_finite_R.
