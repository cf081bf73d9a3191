(* D8 Optimal baseline (second proof of derivations/d8_optimal_baseline.py).

   A finite distribution over K outcomes: probability p k, reward rho k, score g k : 'I_P -> F (P
   coordinates); expectations are finite sums \sum_(k < K) p k * _.  For every K and P, over a
   realFieldType:
   - E[(r - b) g] = E[r g] for every b when E[g] = 0;
   - E[(r - b)^2 ||g||^2] = M_2 - 2 b M_1 + b^2 M_0 with M_j = E[r^j ||g||^2];
   - the total variance V(b) = E||(r - b) g||^2 - ||grad J||^2 (oracle.baseline_total_variance) and the
     trace of the covariance E||(r - b) g||^2 - ||E[(r - b) g]||^2 (equal to it when E[g] = 0) satisfy
     V(b) = V(b* ) + M_0 (b - b* )^2 >= V(b* ) with b* = M_1 / M_0 when M_0 > 0;
   - per coordinate the same with b*_c = E[r g_c^2] / E[g_c^2];
   - b* - E[r] = Cov(r, ||g||^2) / M_0, and E[r] minimises V iff Cov(r, ||g||^2) = 0;
   - the softmax bandit: ||e_a - pi||^2 = 1 - 2 pi_a + S, E||g||^2 = 1 - S > 0, the closed forms of b*
     and of b* - E[r], for every K;
   - the example pi = (1/2, 1/4, 1/4), r = (1, 0, 0) is defined at rat, but its values (b* = 3/10, 5/14;
     excess 1/40, 1/112) are NOT checked here: vm_compute does not reduce the locked big sums, and the
     example statements are kept in a comment block at the end.
   Hypotheses differ from the Python only by being weaker: \sum_k p k = 1 and p k > 0 are never needed
   for the quadratic/minimisation results (only linearity of the finite sum is used). *)

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
Variable F : fieldType.
Variables K P : nat.
Implicit Types (p rho : 'I_K -> F) (g : 'I_K -> 'I_P -> F) (b : F).

(* E[f] = \sum_k p_k f_k *)
Definition expect p (f : 'I_K -> F) : F := \sum_(k < K) p k * f k.

(* ||v||^2 = \sum_c v_c^2 *)
Definition sqnorm (v : 'I_P -> F) : F := \sum_(c < P) v c ^+ 2.

(* grad J = E[r g]   (oracle.policy_gradient) *)
Definition policy_gradient p rho g : 'I_P -> F := fun c => \sum_(k < K) p k * rho k * g k c.

(* E[(r - b) g], coordinate by coordinate *)
Definition estimator_mean p rho g b : 'I_P -> F := fun c => \sum_(k < K) p k * ((rho k - b) * g k c).

(* M_j = E[r^j ||g||^2]   (oracle.score_norm_moment) *)
Definition score_norm_moment p rho g (j : nat) : F := \sum_(k < K) p k * (rho k ^+ j * sqnorm (g k)).

(* b* = M_1 / M_0   (oracle.optimal_baseline; d8.optimal_constant_baseline) *)
Definition optimal_baseline p rho g : F := score_norm_moment p rho g 1 / score_norm_moment p rho g 0.

(* V(b) = E[(r - b)^2 ||g||^2] - ||grad J||^2   (oracle.baseline_total_variance) *)
Definition baseline_total_variance p rho g b : F :=
  \sum_(k < K) p k * ((rho k - b) ^+ 2 * sqnorm (g k)) - sqnorm (policy_gradient p rho g).

(* tr Cov[(r - b) g] = E||(r - b) g||^2 - ||E[(r - b) g]||^2   (d8.softmax_total_variance, general g) *)
Definition total_variance p rho g b : F :=
  \sum_(k < K) p k * sqnorm (fun c => (rho k - b) * g k c) - sqnorm (estimator_mean p rho g b).

(* Var((r - b) g_c) = E[(r - b)^2 g_c^2] - E[(r - b) g_c]^2 *)
Definition coordinate_variance p rho g (c : 'I_P) b : F :=
  \sum_(k < K) p k * ((rho k - b) * g k c) ^+ 2 - (\sum_(k < K) p k * ((rho k - b) * g k c)) ^+ 2.

(* b*_c = E[r g_c^2] / E[g_c^2]   (oracle.coordinatewise_optimal_baseline, where E[g_c^2] <> 0) *)
Definition coordinate_optimal_baseline p rho g (c : 'I_P) : F :=
  (\sum_(k < K) p k * (rho k * g k c ^+ 2)) / (\sum_(k < K) p k * g k c ^+ 2).

(* Cov(f1, f2) = E[f1 f2] - E[f1] E[f2] *)
Definition covariance p (f1 f2 : 'I_K -> F) : F :=
  expect p (fun k => f1 k * f2 k) - expect p f1 * expect p f2.

(* ||g_k||^2 as a function of the outcome *)
Definition squared_score_norms g : 'I_K -> F := fun k => sqnorm (g k).

End Definitions.

Section SoftmaxDefinitions.
Variable F : fieldType.

(* the softmax score g(a) = e_a - pi, every logit free   (d8.softmax_total_variance, free_logits=None) *)
Definition softmax_score (K : nat) (pi : 'I_K -> F) (a c : 'I_K) : F := (a == c)%:R - pi c.

(* the score over the first K of K+1 logits, the last (reference) logit fixed (free_logits = K) *)
Definition reference_logit_score (K : nat) (pi : 'I_K.+1 -> F) (a : 'I_K.+1) (c : 'I_K) : F :=
  (a == widen_ord (leqnSn K) c)%:R - pi (widen_ord (leqnSn K) c).

(* S = \sum_b pi_b^2 *)
Definition sum_sq (K : nat) (pi : 'I_K -> F) : F := \sum_(a < K) pi a ^+ 2.

(* b* = \sum_a pi_a r_a (1 - 2 pi_a + S) / (1 - S)   (d8.softmax_optimal_baseline) *)
Definition softmax_optimal_baseline (K : nat) (pi r : 'I_K -> F) : F :=
  (\sum_(a < K) pi a * r a * (1 - 2 * pi a + sum_sq pi)) / (1 - sum_sq pi).

(* b* - E[r] = 2 (S \sum pi_a r_a - \sum pi_a^2 r_a) / (1 - S)   (d8.softmax_optimal_baseline_gap) *)
Definition softmax_optimal_baseline_gap (K : nat) (pi r : 'I_K -> F) : F :=
  2 * (sum_sq pi * (\sum_(a < K) pi a * r a) - \sum_(a < K) pi a ^+ 2 * r a) / (1 - sum_sq pi).

End SoftmaxDefinitions.

(* ------------------------------------------------------------------------------------------------ *)
(* The general estimator.                                                                           *)

Section General.
Variable F : realFieldType.
Variables K P : nat.
Variables (p rho : 'I_K -> F) (g : 'I_K -> 'I_P -> F).

Local Notation M j := (score_norm_moment p rho g j).
Local Notation bstar := (optimal_baseline p rho g).
Local Notation V := (baseline_total_variance p rho g).
Local Notation TV := (total_variance p rho g).

(* E[g] = 0, coordinate by coordinate (D1) *)
Definition zero_mean_score := forall c : 'I_P, \sum_(k < K) p k * g k c = 0.

(* mirrors d8_optimal_baseline.baselined_estimator_mean_does_not_depend_on_baseline *)
Theorem baselined_estimator_mean_does_not_depend_on_baseline (b : F) :
  zero_mean_score -> estimator_mean p rho g b =1 policy_gradient p rho g.
Proof.
move=> g0 c; rewrite /estimator_mean /policy_gradient.
transitivity (\sum_(k < K) p k * rho k * g k c - b * \sum_(k < K) p k * g k c).
  by rewrite mulr_sumr -sumrB; apply: eq_bigr => k _; ring.
by rewrite g0 mulr0 subr0.
Qed.

(* mirrors d8_optimal_baseline.baselined_estimator_second_moment_is_quadratic_in_baseline *)
Theorem baselined_estimator_second_moment_is_quadratic_in_baseline (b : F) :
  \sum_(k < K) p k * ((rho k - b) ^+ 2 * sqnorm (g k)) = M 2 - 2 * b * M 1 + b ^+ 2 * M 0.
Proof.
rewrite /score_norm_moment !mulr_sumr -sumrB -big_split /=.
by apply: eq_bigr => k _; rewrite !expr0 !expr1; ring.
Qed.

Lemma sqnorm_scale (a : F) (v : 'I_P -> F) : sqnorm (fun c => a * v c) = a ^+ 2 * sqnorm v.
Proof. by rewrite /sqnorm mulr_sumr; apply: eq_bigr => c _; rewrite exprMn. Qed.

(* the trace of the covariance is the oracle's total variance when the score has mean zero *)
Theorem total_variance_is_baseline_total_variance (b : F) : zero_mean_score -> TV b = V b.
Proof.
move=> g0; rewrite /total_variance /baseline_total_variance.
congr (_ - _); last first.
  by rewrite /sqnorm; apply: eq_bigr => c _; rewrite (baselined_estimator_mean_does_not_depend_on_baseline b g0).
by apply: eq_bigr => k _; rewrite sqnorm_scale.
Qed.

Lemma baseline_total_variance_in_moments (b : F) :
  V b = M 2 - 2 * b * M 1 + b ^+ 2 * M 0 - sqnorm (policy_gradient p rho g).
Proof. by rewrite /baseline_total_variance baselined_estimator_second_moment_is_quadratic_in_baseline. Qed.

(* V(b) - V(b* ) = M_0 (b - b* )^2: completing the square (needs only M_0 <> 0) *)
Theorem baseline_total_variance_completes_the_square (b : F) :
  M 0 != 0 -> V b = V bstar + M 0 * (b - bstar) ^+ 2.
Proof.
move=> M0n; rewrite !baseline_total_variance_in_moments /optimal_baseline.
by field.
Qed.

(* mirrors d8_optimal_baseline.total_variance_is_minimised_by_optimal_baseline *)
Theorem total_variance_is_minimised_by_optimal_baseline (b : F) : 0 < M 0 -> V bstar <= V b.
Proof.
move=> M0p; rewrite (baseline_total_variance_completes_the_square b (lt0r_neq0 M0p)).
by rewrite ler_addl; apply: mulr_ge0; [exact: ltW | exact: sqr_ge0].
Qed.

(* the same for the trace of the covariance, with E[g] = 0 as in the Python *)
Theorem covariance_trace_is_minimised_by_optimal_baseline (b : F) :
  zero_mean_score -> 0 < M 0 ->
  TV b = TV bstar + M 0 * (b - bstar) ^+ 2 /\ TV bstar <= TV b.
Proof.
move=> g0 M0p; rewrite !total_variance_is_baseline_total_variance //.
split; first exact: baseline_total_variance_completes_the_square (lt0r_neq0 M0p).
exact: total_variance_is_minimised_by_optimal_baseline.
Qed.

(* mirrors d8_optimal_baseline.coordinate_variance_is_minimised_by_coordinate_optimal_baseline *)
Theorem coordinate_variance_is_minimised_by_coordinate_optimal_baseline (c : 'I_P) (b : F) :
  \sum_(k < K) p k * g k c = 0 -> 0 < \sum_(k < K) p k * g k c ^+ 2 ->
  coordinate_variance p rho g c b
  = coordinate_variance p rho g c (coordinate_optimal_baseline p rho g c)
    + (\sum_(k < K) p k * g k c ^+ 2) * (b - coordinate_optimal_baseline p rho g c) ^+ 2
  /\ coordinate_variance p rho g c (coordinate_optimal_baseline p rho g c) <= coordinate_variance p rho g c b.
Proof.
move=> g0 Dp.
set D := \sum_(k < K) p k * g k c ^+ 2.
set N1 := \sum_(k < K) p k * (rho k * g k c ^+ 2).
set N2 := \sum_(k < K) p k * (rho k ^+ 2 * g k c ^+ 2).
set G1 := \sum_(k < K) p k * rho k * g k c.
have sec x : \sum_(k < K) p k * ((rho k - x) * g k c) ^+ 2 = N2 - 2 * x * N1 + x ^+ 2 * D.
  rewrite /N2 /N1 /D !mulr_sumr -sumrB -big_split /=.
  by apply: eq_bigr => k _; ring.
have mean x : \sum_(k < K) p k * ((rho k - x) * g k c) = G1.
  transitivity (G1 - x * \sum_(k < K) p k * g k c); last by rewrite g0 mulr0 subr0.
  by rewrite /G1 mulr_sumr -sumrB; apply: eq_bigr => k _; ring.
have eq x : coordinate_variance p rho g c x = N2 - 2 * x * N1 + x ^+ 2 * D - G1 ^+ 2.
  by rewrite /coordinate_variance sec mean.
have Dn : D != 0 by rewrite lt0r_neq0.
have sq : coordinate_variance p rho g c b
          = coordinate_variance p rho g c (coordinate_optimal_baseline p rho g c)
            + D * (b - coordinate_optimal_baseline p rho g c) ^+ 2.
  by rewrite !eq /coordinate_optimal_baseline -/N1 -/D; field.
split=> //; rewrite sq ler_addl; apply: mulr_ge0; [exact: ltW | exact: sqr_ge0].
Qed.

Local Notation mean_reward := (expect p rho).
Local Notation cov := (covariance p rho (squared_score_norms g)).

Lemma moment0E : M 0 = expect p (squared_score_norms g).
Proof. by apply: eq_bigr => k _; rewrite expr0 mul1r. Qed.

Lemma moment1E : M 1 = expect p (fun k => rho k * squared_score_norms g k).
Proof. by apply: eq_bigr => k _; rewrite expr1. Qed.

(* mirrors d8_optimal_baseline.optimal_baseline_minus_mean_reward_is_covariance_ratio *)
Theorem optimal_baseline_minus_mean_reward_is_covariance_ratio :
  M 0 != 0 -> bstar - mean_reward = cov / M 0.
Proof.
move=> M0n; rewrite /optimal_baseline /covariance -moment1E -moment0E.
by field.
Qed.

(* the mean baseline E[r] is variance-optimal iff Cov(r, ||g||^2) = 0 (the doc of the previous result) *)
Theorem mean_reward_is_optimal_baseline_iff_covariance_is_zero :
  0 < M 0 -> (forall b, V mean_reward <= V b) <-> cov = 0.
Proof.
move=> M0p; have M0n := lt0r_neq0 M0p.
have gap : mean_reward = bstar - cov / M 0.
  by rewrite -optimal_baseline_minus_mean_reward_is_covariance_ratio // opprB addrC subrK.
split=> [opt|c0 b]; last first.
  by rewrite gap c0 mul0r subr0 total_variance_is_minimised_by_optimal_baseline.
have := opt bstar; rewrite (baseline_total_variance_completes_the_square mean_reward M0n).
rewrite ger_addl pmulr_rle0 // => sq0.
have : mean_reward - bstar = 0 by apply/eqP; rewrite -sqrf_eq0 eq_le sq0 sqr_ge0.
rewrite gap addrAC subrr add0r => /eqP; rewrite oppr_eq0 mulf_eq0 invr_eq0 (negPf M0n) orbF.
by move/eqP.
Qed.

End General.

(* ------------------------------------------------------------------------------------------------ *)
(* The softmax bandit, every K.                                                                      *)

Section Softmax.
Variable F : realFieldType.
Variable K : nat.
Variables (pi r : 'I_K -> F).

Local Notation S := (sum_sq pi).
Local Notation g := (softmax_score pi).

(* mirrors d8_optimal_baseline.softmax_squared_score_norm_every_K (every action a, any family pi) *)
Theorem softmax_squared_score_norm_every_K (a : 'I_K) : sqnorm (g a) = 1 - 2 * pi a + S.
Proof.
rewrite /sqnorm /softmax_score /sum_sq.
transitivity (\sum_(c < K) ((a == c)%:R - 2 * (a == c)%:R * pi c + pi c ^+ 2) : F).
  by apply: eq_bigr => c _; case: (a == c) => /=; ring.
have e1 : \sum_(c < K) ((a == c)%:R : F) = 1.
  by rewrite (bigD1 a) //= eqxx big1 ?addr0 // => c; rewrite eq_sym => /negPf ->.
have e2 : \sum_(c < K) (2 * (a == c)%:R * pi c : F) = 2 * pi a.
  rewrite (bigD1 a) //= eqxx mulr1 big1 ?addr0 // => c.
  by rewrite eq_sym => /negPf ->; rewrite mulr0 mul0r.
by rewrite big_split /= sumrB e1 e2.
Qed.

Hypothesis normalised : \sum_(a < K) pi a = 1.

(* mirrors d8_optimal_baseline.softmax_expected_squared_score_norm_is_one_minus_S *)
Theorem softmax_expected_squared_score_norm_is_one_minus_S :
  score_norm_moment pi r g 0 = 1 - S.
Proof.
rewrite /score_norm_moment.
under eq_bigr => a _ do rewrite expr0 mul1r softmax_squared_score_norm_every_K.
transitivity ((\sum_(a < K) pi a) - 2 * (\sum_(a < K) pi a ^+ 2) + S * (\sum_(a < K) pi a)).
  have -> : (\sum_(a < K) pi a) - 2 * (\sum_(a < K) pi a ^+ 2) = \sum_(a < K) (pi a - 2 * pi a ^+ 2).
    by rewrite sumrB mulr_sumr.
  by rewrite mulr_sumr -big_split /=; apply: eq_bigr => a _; ring.
by rewrite normalised mulr1 -/(sum_sq pi); ring.
Qed.

(* mirrors d8_optimal_baseline.one_minus_S_is_positive (each pi_a in (0, 1), K >= 1 implied) *)
Theorem one_minus_S_is_positive :
  (forall a, 0 < pi a) -> (forall a, pi a < 1) -> (0 < K)%N -> 0 < 1 - S.
Proof.
move=> pos lt1 K0.
have -> : 1 - S = \sum_(a < K) pi a * (1 - pi a).
  rewrite -{1}normalised /sum_sq -sumrB; apply: eq_bigr => a _; ring.
rewrite (bigD1 (Ordinal K0)) //=; apply: ltr_spaddl; first by rewrite mulr_gt0 ?subr_gt0.
by rewrite sumr_ge0 // => a _; rewrite mulr_ge0 ?ltW ?subr_gt0.
Qed.

(* mirrors d8_optimal_baseline.softmax_optimal_baseline_closed_form *)
Theorem softmax_optimal_baseline_closed_form :
  optimal_baseline pi r g = softmax_optimal_baseline pi r.
Proof.
rewrite /optimal_baseline softmax_expected_squared_score_norm_is_one_minus_S /softmax_optimal_baseline.
congr (_ / _); apply: eq_bigr => a _.
by rewrite expr1 softmax_squared_score_norm_every_K mulrA.
Qed.

(* mirrors d8_optimal_baseline.softmax_optimal_baseline_minus_mean_reward *)
Theorem softmax_optimal_baseline_minus_mean_reward :
  1 - S != 0 -> softmax_optimal_baseline pi r - expect pi r = softmax_optimal_baseline_gap pi r.
Proof.
move=> Sn; rewrite /softmax_optimal_baseline /softmax_optimal_baseline_gap /expect.
set T := \sum_(a < K) pi a ^+ 2 * r a; set E := \sum_(a < K) pi a * r a.
move: Sn; set S' := sum_sq pi => Sn.
have -> : \sum_(a < K) pi a * r a * (1 - 2 * pi a + S') = (1 + S') * E - 2 * T.
  by rewrite /E /T !mulr_sumr -sumrB; apply: eq_bigr => a _; ring.
by field.
Qed.

(* mirrors d8 (doc of softmax_optimal_baseline_minus_mean_reward): E[r] is optimal iff
   \sum pi_a^2 r_a = S \sum pi_a r_a *)
Theorem softmax_mean_baseline_is_optimal_iff :
  0 < 1 - S ->
  (forall b, baseline_total_variance pi r g (expect pi r) <= baseline_total_variance pi r g b)
  <-> \sum_(a < K) pi a ^+ 2 * r a = S * \sum_(a < K) pi a * r a.
Proof.
move=> Sp; have Sn := lt0r_neq0 Sp.
have M0 : 0 < score_norm_moment pi r g 0 by rewrite softmax_expected_squared_score_norm_is_one_minus_S.
rewrite mean_reward_is_optimal_baseline_iff_covariance_is_zero //.
have := optimal_baseline_minus_mean_reward_is_covariance_ratio (lt0r_neq0 M0).
rewrite softmax_optimal_baseline_closed_form softmax_optimal_baseline_minus_mean_reward //.
rewrite softmax_expected_squared_score_norm_is_one_minus_S /softmax_optimal_baseline_gap => eq.
have -> : covariance pi r (squared_score_norms g)
          = 2 * (S * (\sum_(a < K) pi a * r a) - \sum_(a < K) pi a ^+ 2 * r a).
  by apply: (mulIf (invr_neq0 Sn)); symmetry; exact: eq.
split=> [/eqP|->]; last by rewrite subrr mulr0.
by rewrite mulf_eq0 pnatr_eq0 /= subr_eq0 => /eqP ->.
Qed.

End Softmax.

(* mirrors d8_optimal_baseline.uniform_policy_makes_mean_baseline_optimal *)
(* (a numFieldType, so that K%:R <> 0 for K > 0; for K = 0 both sides are empty sums) *)
Theorem uniform_policy_makes_mean_baseline_optimal (F : numFieldType) (K : nat) (r : 'I_K -> F) :
  \sum_(a < K) (K%:R^-1) ^+ 2 * r a = sum_sq (fun _ : 'I_K => K%:R^-1) * \sum_(a < K) K%:R^-1 * r a.
Proof.
case: K r => [|n] r; first by rewrite !big_ord0 mulr0.
rewrite /sum_sq sumr_const card_ord -mulr_sumr -[in RHS]mulr_sumr mulrA.
have hn : (n.+1%:R : F) != 0 by rewrite pnatr_eq0.
by rewrite -mulr_natr; field; rewrite addrC -mulrSr pnatr_eq0.
Qed.

(* mirrors d8_optimal_baseline.constant_reward_makes_mean_baseline_optimal *)
Theorem constant_reward_makes_mean_baseline_optimal (F : fieldType) (K : nat) (pi : 'I_K -> F) (v : F) :
  \sum_(a < K) pi a = 1 ->
  \sum_(a < K) pi a ^+ 2 * v = sum_sq pi * \sum_(a < K) pi a * v.
Proof. by move=> n1; rewrite -!mulr_suml n1 mul1r. Qed.

(* ------------------------------------------------------------------------------------------------ *)
(* Computable checks at rat: pi = (1/2, 1/4, 1/4), r = (1, 0, 0).                                   *)

Definition pi_ex : 'I_3 -> rat := fun a => nth 0 [:: 1 / 2; 1 / 4; 1 / 4] a.
Definition r_ex : 'I_3 -> rat := fun a => nth 0 [:: 1; 0; 0] a.
Definition g_free : 'I_3 -> 'I_3 -> rat := softmax_score pi_ex.
Definition g_ref : 'I_3 -> 'I_2 -> rat := reference_logit_score pi_ex.

(* NOT CHECKED: the rat examples below were attempted with vm_compute; the first one ran for about 15
   minutes on this machine and then failed ("No applicable tactic"), so they are kept here as text only.
   The definitions pi_ex, r_ex, g_free, g_ref above do compile.
(- mirrors d8_optimal_baseline.softmax_example_optimal_baseline_is_three_tenths -)
Example softmax_example_optimal_baseline_is_three_tenths : optimal_baseline pi_ex r_ex g_free = 3 / 10.
Proof. by apply/eqP; vm_compute. Qed.

(- mirrors d8_optimal_baseline.softmax_example_mean_baseline_is_not_optimal -)
Example softmax_example_mean_baseline_is_not_optimal :
  softmax_optimal_baseline pi_ex r_ex = 3 / 10 /\ expect pi_ex r_ex = 1 / 2.
Proof. by split; apply/eqP; vm_compute. Qed.

(- mirrors d8_optimal_baseline.softmax_example_mean_baseline_excess_variance_is_one_fortieth -)
Example softmax_example_mean_baseline_excess_variance_is_one_fortieth :
  total_variance pi_ex r_ex g_free (1 / 2) - total_variance pi_ex r_ex g_free (3 / 10) = 1 / 40.
Proof. by apply/eqP; vm_compute. Qed.

(- mirrors d8_optimal_baseline.softmax_example_optimal_baseline_with_a_reference_logit_is_five_fourteenths -)
Example softmax_example_optimal_baseline_with_a_reference_logit_is_five_fourteenths :
  optimal_baseline pi_ex r_ex g_ref = 5 / 14.
Proof. by apply/eqP; vm_compute. Qed.

(- mirrors d8_optimal_baseline.softmax_example_mean_baseline_excess_variance_with_a_reference_logit_is_one_over_112 -)
Example softmax_example_mean_baseline_excess_variance_with_a_reference_logit_is_one_over_112 :
  total_variance pi_ex r_ex g_ref (1 / 2) - total_variance pi_ex r_ex g_ref (5 / 14) = 1 / 112.
Proof. by apply/eqP; vm_compute. Qed.

(- the oracle form agrees on the example (E[g] = 0 there) -)
Example softmax_example_baseline_total_variance_gap :
  baseline_total_variance pi_ex r_ex g_free (1 / 2) - baseline_total_variance pi_ex r_ex g_free (3 / 10) = 1 / 40.
Proof. by apply/eqP; vm_compute. Qed.

*)

Print Assumptions baselined_estimator_mean_does_not_depend_on_baseline.
Print Assumptions baselined_estimator_second_moment_is_quadratic_in_baseline.
Print Assumptions total_variance_is_baseline_total_variance.
Print Assumptions baseline_total_variance_completes_the_square.
Print Assumptions total_variance_is_minimised_by_optimal_baseline.
Print Assumptions covariance_trace_is_minimised_by_optimal_baseline.
Print Assumptions coordinate_variance_is_minimised_by_coordinate_optimal_baseline.
Print Assumptions optimal_baseline_minus_mean_reward_is_covariance_ratio.
Print Assumptions mean_reward_is_optimal_baseline_iff_covariance_is_zero.
Print Assumptions softmax_squared_score_norm_every_K.
Print Assumptions softmax_expected_squared_score_norm_is_one_minus_S.
Print Assumptions one_minus_S_is_positive.
Print Assumptions softmax_optimal_baseline_closed_form.
Print Assumptions softmax_optimal_baseline_minus_mean_reward.
Print Assumptions softmax_mean_baseline_is_optimal_iff.
Print Assumptions uniform_policy_makes_mean_baseline_optimal.
Print Assumptions constant_reward_makes_mean_baseline_optimal.
