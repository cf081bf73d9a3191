(* D10 Credit assignment on multi-step tasks (second proof of derivations/d10_credit_assignment.py).

   Model, for every number of steps H and every q in a numFieldType: an outcome is
   x : {ffun 'I_H -> bool} (x k = step k right; steps are 0-based here, so the Python's step h is the
   ordinal i with h = i + 1, and q^h is q ^+ i.+1), of probability \prod_k (q or 1 - q); an expectation
   is the finite sum over all 2^H outcomes (the weights sum to 1: chain_weights_sum_to_one).  The reward
   is r = 1[all steps right]; the step-i score is u_i = P_i (x_i - q) with P_i = 1[steps < i right] (the
   sigmoid score 1 - q / -q of the row after the right prefix).  Independence of the steps is proved
   from the product form (bigA_distr_bigA: E[\prod_k f_k(x_k)] = \prod_k E[f_k], expect_prod).  The
   exact-credit values are conditional expectations, not postulated:
   Q_i(x) = E_y[r(x_0..x_i, y_(i+1)..)], V_i(x) = E_y[r(x_0..x_(i-1), y_i..)].

   Proved for every H, every step i < H and every q (no range needed unless stated; 0 < q < 1 only
   where a quotient is taken), every constant baseline b:
   - P(all steps right) = q^H; E[r u_i] = q^H (1 - q); E[u_i] = 0; E[(r - b) u_i] = q^H (1 - q);
   - after a right prefix Q_i - V_i = q^(H-h) (1-q) or -q^(H-h+1); after a wrong one Q_i = V_i = 0;
     E[(Q_i - V_i) u_i] = q^H (1 - q);
   - Var[(r - b) u_i] (the Python's formula), p (1-p) (1-q)^2 at b = 0, the mean baseline, the optimal
     constant baseline E[r u_i^2] / E[u_i^2] = q^(H-h) (1-q) and the variance with it, the exact-credit
     variance q^(2H-h) (1-q) (1 - 3q + 3q^2 - q^h (1-q)), and the per-rollout SNRs mean^2 / Var;
   - for the per-step process reward r_k = 1[steps 0..k right] and the reward-to-go G_i = \sum_(k >= i) r_k:
     E[G_i u_i] = q^h - q^(H+1), and the Python's sum \sum_(k=h..H) q^k (1-q) = q^h - q^(H+1).
   Not mirrored: the sigmoid derivative itself (sigmoid_step_scores_are_one_minus_q_and_minus_q; the
   gradient appears in its score-function form E[r u_i]), the exact-credit optimal state baseline results,
   the sample-count, group and enumeration results. *)

From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp Require Import ring zify.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(* ------------------------------------------------------------------------------------------------ *)
(* Closed forms: the right-hand side of each mirrored theorem, with F, H, the 0-based step i (a nat) *)
(* and the baseline b as explicit arguments, so that they can be evaluated at rat.                  *)

(* the right-hand side of chain_success_probability_is_q_pow_H *)
Definition chain_success_probability_is_q_pow_H_closed_form {F : numFieldType} (H : nat) (q : F) : F :=
  q ^+ H.

(* the right-hand side of expected_reward_times_step_score_is_p_times_one_minus_q *)
Definition expected_reward_times_step_score_is_p_times_one_minus_q_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ H * (1 - q).

(* the right-hand side of outcome_estimator_mean_is_the_gradient_for_every_baseline *)
Definition outcome_estimator_mean_is_the_gradient_for_every_baseline_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) (b : F) : F :=
  q ^+ H * (1 - q).

(* the right-hand side of exact_credit_advantages_on_the_right_prefix *)
Definition exact_credit_advantages_on_the_right_prefix_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) (o : bool) : F :=
  if o then q ^+ (H - i.+1) * (1 - q) else - q ^+ (H - i).

(* the right-hand side of exact_credit_mean_is_the_gradient *)
Definition exact_credit_mean_is_the_gradient_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ H * (1 - q).

(* the right-hand side of outcome_variance_for_a_constant_baseline *)
Definition outcome_variance_for_a_constant_baseline_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) (b : F) : F :=
  q ^+ H * (1 - b) ^+ 2 * (1 - q) ^+ 2 + b ^+ 2 * (1 - q) * (q ^+ i.+1 - q ^+ H * (1 - q))
    - q ^+ (2 * H) * (1 - q) ^+ 2.

(* the right-hand side of outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared *)
Definition outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ H * (1 - q ^+ H) * (1 - q) ^+ 2.

(* the right-hand side of process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1 *)
Definition process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ i.+1 - q ^+ H.+1.

(* the right-hand side of process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1 *)
Definition process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1_closed_form {F : numFieldType} (H : nat) (q : F) (h : nat) : F :=
  q ^+ h - q ^+ H.+1.

(* the right-hand side of outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q *)
Definition outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ (H - i.+1) * (1 - q).

(* the right-hand side of outcome_variance_with_the_optimal_baseline *)
Definition outcome_variance_with_the_optimal_baseline_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ H * (1 - q) ^+ 2 * (1 - q ^+ H - q ^+ (H - i.+1) * (1 - q)).

(* the right-hand side of exact_credit_variance_per_step *)
Definition exact_credit_variance_per_step_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ (2 * H - i.+1) * (1 - q) * (1 - 3 * q + 3 * q ^+ 2 - q ^+ i.+1 * (1 - q)).

(* the right-hand side of outcome_snr_without_baseline_is_p_over_one_minus_p *)
Definition outcome_snr_without_baseline_is_p_over_one_minus_p_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ H / (1 - q ^+ H).

(* the right-hand side of exact_credit_snr_depends_on_the_step_not_on_H *)
Definition exact_credit_snr_depends_on_the_step_not_on_H_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ i.+1 * (1 - q) / (1 - 3 * q + 3 * q ^+ 2 - q ^+ i.+1 * (1 - q)).

(* the right-hand side of outcome_variance_with_the_mean_baseline *)
Definition outcome_variance_with_the_mean_baseline_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ H * (1 - q) * ((1 - q) * (1 - 3 * q ^+ H) + q ^+ H * q ^+ i.+1).

(* the right-hand side of mean_baseline_minus_no_baseline_variance *)
Definition mean_baseline_minus_no_baseline_variance_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  (q ^+ H) ^+ 2 * (1 - q) * (q ^+ i.+1 - 2 * (1 - q)).

(* the right-hand side of last_step_optimal_variances_coincide *)
Definition last_step_optimal_variances_coincide_closed_form {F : numFieldType} (H : nat) (q : F) (i : nat) : F :=
  q ^+ (2 * H - H + 1) * (1 - q) ^+ 2 * (1 - q ^+ (H - 1)).

(* ------------------------------------------------------------------------------------------------ *)
(* Definitions.                                                                                     *)

Section Model.
Context {F : numFieldType} {H : nat}.
Implicit Types (q b : F) (x y : {ffun 'I_H -> bool}).

(* probability of one step's outcome after a right prefix *)
Definition step_weight q (o : bool) : F := if o then q else 1 - q.

(* probability of the outcome x *)
Definition chain_weight q x : F := \prod_(k < H) step_weight q (x k).

(* E[f] as a finite sum over the 2^H outcomes *)
Definition expect q (f : {ffun 'I_H -> bool} -> F) : F :=
  \sum_(x : {ffun 'I_H -> bool}) chain_weight q x * f x.

(* P(all H steps right) *)
Definition chain_success_probability q : F :=
  \sum_(x : {ffun 'I_H -> bool} | [forall k, x k]) chain_weight q x.

(* the outcome reward r = 1[all steps right] *)
Definition outcome_reward x : F := \prod_(k < H) (x k)%:R.

(* P_i = 1[steps 0..i-1 right] *)
Definition prefix_right (i : 'I_H) x : F := \prod_(k < H | (k < i)%N) (x k)%:R.

(* the step-i score u_i = P_i (x_i - q) *)
Definition step_score q (i : 'I_H) x : F := prefix_right i x * ((x i)%:R - q).

End Model.

Arguments chain_success_probability {F} H q.

(* ------------------------------------------------------------------------------------------------ *)
(* Products over the steps.                                                                         *)

Section Products.
Context {F : numFieldType}.
Implicit Types (q a c : F).

Lemma prod_phases_nat n m a (c0 : F) c : (m < n)%N ->
  \prod_(k < n) (if (k < m)%N then a else if (k == m :> nat) then c0 else c)
  = a ^+ m * c0 * c ^+ (n - m.+1).
Proof.
elim: n => // n IH; rewrite ltnS leq_eqVlt => /orP [/eqP -> | lt].
  rewrite big_ord_recr /= ltnn eqxx subnn expr0 mulr1; congr (_ * _).
  by rewrite (eq_bigr (fun _ => a)) ?prodr_const ?card_ord // => k _; rewrite ltn_ord.
rewrite big_ord_recr /= IH // ltnNge (ltnW lt) /= (gtn_eqF lt).
by rewrite subSS -(subnSK lt) exprSr mulrA.
Qed.

Lemma prod_phases H (i : 'I_H) a (c0 : F) c :
  \prod_(k < H) (if (k < i)%N then a else if k == i then c0 else c) = a ^+ i * c0 * c ^+ (H - i.+1).
Proof. exact: (prod_phases_nat a c0 c (ltn_ord i)). Qed.

Lemma prod_at H (i : 'I_H) c : \prod_(k < H) (if k == i then c else 1) = c.
Proof.
rewrite (bigD1 i) //= eqxx big1 ?mulr1 // => k /negbTE ->; done.
Qed.

(* multiplying a product over the steps by c at step i *)
Lemma prod_times_at H (i : 'I_H) (f : 'I_H -> F) c :
  (\prod_(k < H) f k) * c = \prod_(k < H) (if k == i then f k * c else f k).
Proof.
rewrite -{1}(prod_at i c) -big_split /=; apply: eq_bigr => k _.
by case: (k == i); rewrite ?mulr1.
Qed.

Lemma pow_split H (i : 'I_H) q : q ^+ i * q * q ^+ (H - i.+1) = q ^+ H.
Proof. by rewrite -exprSr -exprD subnKC // ltn_ord. Qed.

Lemma pow_succ_split H (i : 'I_H) q : q * q ^+ (H - i.+1) = q ^+ (H - i).
Proof. by rewrite -exprS subnSK // ltn_ord. Qed.

End Products.

(* ------------------------------------------------------------------------------------------------ *)
(* Expectations of products of per-step factors.                                                    *)

Section Expectations.
Variable F : numFieldType.
Variable H : nat.
Implicit Types (q b : F) (x y : {ffun 'I_H -> bool}).

(* E[\prod_k f_k(x_k)] = \prod_k E[f_k(x_k)]: the steps are independent *)
Lemma expect_prod q (f : 'I_H -> bool -> F) :
  expect q (fun x => \prod_(k < H) f k (x k)) = \prod_(k < H) (q * f k true + (1 - q) * f k false).
Proof.
rewrite /expect /chain_weight.
rewrite (eq_bigr (fun x : {ffun 'I_H -> bool} => \prod_(k < H) (step_weight q (x k) * f k (x k))));
  last by move=> x _; rewrite big_split.
rewrite -(bigA_distr_bigA (fun k o => step_weight q o * f k o)) /=.
by apply: eq_bigr => k _; rewrite big_bool.
Qed.

(* the weights sum to 1 *)
Lemma chain_weights_sum_to_one q : \sum_(x : {ffun 'I_H -> bool}) chain_weight q x = 1.
Proof.
transitivity (expect q (fun x => \prod_(k < H) (fun (_ : 'I_H) (_ : bool) => 1 : F) k (x k))).
  by rewrite /expect; apply: eq_bigr => x _; rewrite big1_eq mulr1.
by rewrite (expect_prod q (fun _ _ => 1)) big1 // => k _; rewrite !mulr1 addrC subrK.
Qed.

Lemma expect_linear q (f g : {ffun 'I_H -> bool} -> F) b :
  expect q (fun x => f x - b * g x) = expect q f - b * expect q g.
Proof.
rewrite /expect mulr_sumr -sumrB; apply: eq_bigr => x _; ring.
Qed.

Lemma expect_phases q (i : 'I_H) (f1 g f2 : bool -> F) :
  expect q (fun x => \prod_(k < H) (if (k < i)%N then f1 (x k) else if k == i then g (x k) else f2 (x k)))
  = (q * f1 true + (1 - q) * f1 false) ^+ i * (q * g true + (1 - q) * g false)
    * (q * f2 true + (1 - q) * f2 false) ^+ (H - i.+1).
Proof.
rewrite (expect_prod q (fun k o => if (k < i)%N then f1 o else if k == i then g o else f2 o)).
rewrite -prod_phases; apply: eq_bigr => k _.
by case: (k < i)%N; case: (k == i).
Qed.

(* P_i g(x_i) in phase form *)
Lemma prefix_times_phases (i : 'I_H) x (g : bool -> F) :
  prefix_right i x * g (x i)
  = \prod_(k < H) (if (k < i)%N then (x k)%:R else if k == i then g (x k) else 1).
Proof.
rewrite /prefix_right big_mkcond /= (prod_times_at i); apply: eq_bigr => k _.
case: eqP => [-> | _]; first by rewrite ltnn mul1r.
by case: (k < i)%N.
Qed.

Lemma expect_prefix_times q (i : 'I_H) (g : bool -> F) :
  expect q (fun x => prefix_right i x * g (x i)) = q ^+ i * (q * g true + (1 - q) * g false).
Proof.
transitivity (expect q (fun x => \prod_(k < H)
   (if (k < i)%N then (fun o : bool => o%:R) (x k) else if k == i then g (x k) else (fun=> 1) (x k)))).
  by rewrite /expect; apply: eq_bigr => x _; rewrite prefix_times_phases.
rewrite (expect_phases q i (fun o : bool => o%:R) g (fun=> 1)) /=.
rewrite mulr1 mulr0 addr0.
have -> : q + (1 - q) * 1 = 1 by ring.
by rewrite expr1n mulr1.
Qed.

End Expectations.

(* ------------------------------------------------------------------------------------------------ *)
(* Exact credit: the values as conditional expectations.                                            *)

Section ExactCredit.
Context {F : numFieldType} {H : nat}.
Implicit Types (q b : F) (x y : {ffun 'I_H -> bool}).

(* steps 0..i from x, the later steps from y *)
Definition splice_upto (i : 'I_H) x y : {ffun 'I_H -> bool} := [ffun k : 'I_H => if (k <= i)%N then x k else y k].

(* steps 0..i-1 from x, step i and the later steps from y *)
Definition splice_before (i : 'I_H) x y : {ffun 'I_H -> bool} := [ffun k : 'I_H => if (k < i)%N then x k else y k].

(* Q_i(x) = E[r | o_0..o_i = x_0..x_i] *)
Definition state_action_value q (i : 'I_H) x : F := expect q (fun y => outcome_reward (splice_upto i x y)).

(* V_i(x) = E[r | o_0..o_{i-1} = x_0..x_{i-1}] *)
Definition state_value q (i : 'I_H) x : F := expect q (fun y => outcome_reward (splice_before i x y)).

(* the exact-credit step-i term e_i = (Q_i - V_i) u_i *)
Definition exact_credit_term q (i : 'I_H) x : F :=
  (state_action_value q i x - state_value q i x) * step_score q i x.

End ExactCredit.

(* ------------------------------------------------------------------------------------------------ *)
(* The theorems.                                                                                    *)

Section Theorems.
Variable F : numFieldType.
Variable H : nat.
Implicit Types (q b : F) (x y : {ffun 'I_H -> bool}).

Lemma eq_expect q (f g : {ffun 'I_H -> bool} -> F) : (forall x, f x = g x) -> expect q f = expect q g.
Proof. by move=> e; apply: eq_bigr => x _; rewrite e. Qed.

Lemma mix_const q (c : F) : q * c + (1 - q) * c = c.
Proof. by ring. Qed.

(* mirrors d10_credit_assignment.chain_success_probability_is_q_pow_H
   (P(all H steps right) as the sum of the weights of the outcomes with every step right) *)
Theorem chain_success_probability_is_q_pow_H q : chain_success_probability H q = chain_success_probability_is_q_pow_H_closed_form H q.
Proof.
rewrite /chain_success_probability_is_q_pow_H_closed_form.

rewrite /chain_success_probability (eq_bigl (pred1 [ffun=> true])) => [|x]; last first.
  apply/forallP/eqP => [Hx | ->]; last by move=> k; rewrite ffunE.
  by apply/ffunP => k; rewrite ffunE; exact: Hx.
rewrite big_pred1_eq /chain_weight (eq_bigr (fun _ => q)) ?prodr_const ?card_ord // => k _.
by rewrite ffunE.
Qed.

(* the same as E[r] *)
Lemma outcome_reward_mean q : expect q (@outcome_reward F H) = q ^+ H.
Proof.
rewrite (eq_expect q (g := fun x => \prod_(k < H) (fun (_ : 'I_H) (o : bool) => o%:R : F) k (x k))) //.
rewrite (expect_prod q (fun (_ : 'I_H) (o : bool) => o%:R : F)) /= prodr_const card_ord.
by rewrite mulr1n mulr0n mulr1 mulr0 addr0.
Qed.

Lemma prefix_idem (i : 'I_H) x : prefix_right i x * prefix_right i x = prefix_right i x :> F.
Proof.
rewrite /prefix_right -big_split; apply: eq_bigr => k _.
by case: (x k); rewrite /= ?mulr1n ?mulr0n ?mulr1 ?mulr0.
Qed.

Lemma reward_times_prefix (i : 'I_H) x : outcome_reward x * prefix_right i x = outcome_reward x :> F.
Proof.
rewrite /outcome_reward /prefix_right [X in _ * X = _]big_mkcond -big_split; apply: eq_bigr => k _.
by case: (x k); case: (k < i)%N; rewrite /= ?mulr1n ?mulr0n ?mulr1 ?mulr0.
Qed.

(* E[u_i] = 0 *)
Lemma step_score_mean_is_zero q (i : 'I_H) : expect q (step_score q i) = 0.
Proof.
rewrite (eq_expect q (g := fun x => prefix_right i x * (fun o : bool => o%:R - q) (x i))) //.
rewrite (expect_prefix_times q i (fun o : bool => o%:R - q)) /= mulr1n mulr0n.
by rewrite (_ : q * (1 - q) + (1 - q) * (0 - q) = 0) ?mulr0 //; ring.
Qed.

(* r u_i in phase form: steps < i contribute x_k, step i x_i (x_i - q), later steps x_k *)
Lemma reward_score_phases q (i : 'I_H) x :
  outcome_reward x * step_score q i x
  = \prod_(k < H) (if (k < i)%N then (x k)%:R
                   else if k == i then (x k)%:R * ((x k)%:R - q) else (x k)%:R).
Proof.
rewrite /step_score mulrA reward_times_prefix /outcome_reward (prod_times_at i).
apply: eq_bigr => k _; case: eqP => [-> | _]; first by rewrite ltnn.
by case: (k < i)%N.
Qed.

(* the score-function form of d10_credit_assignment.success_probability_gradient_per_step_is_p_times_one_minus_q (which states the sigmoid
   derivative d(A sigma)/d theta = A (1 - sigma) sigma); not mirrored: the two sides of D1's identity
   (the gradient in its score-function form E[r u_i], u_i the sigmoid score of step i: the Python's
   d(A sigma(theta))/d theta = A sigma (1 - sigma) with every q_k = q, i.e. q^H (1 - q)) *)
Theorem expected_reward_times_step_score_is_p_times_one_minus_q q (i : 'I_H) :
  expect q (fun x => outcome_reward x * step_score q i x) = expected_reward_times_step_score_is_p_times_one_minus_q_closed_form H q i.
Proof.
rewrite /expected_reward_times_step_score_is_p_times_one_minus_q_closed_form.

rewrite (eq_expect q (g := fun x => \prod_(k < H)
   (if (k < i)%N then (fun o : bool => o%:R) (x k)
    else if k == i then (fun o : bool => o%:R * (o%:R - q)) (x k) else (fun o : bool => o%:R) (x k))));
  last by move=> x; rewrite reward_score_phases.
rewrite (expect_phases q i (fun o : bool => o%:R) (fun o : bool => o%:R * (o%:R - q)) (fun o : bool => o%:R)).
rewrite /= mulr1n mulr0n !mulr0 !mul0r !addr0 mulr1 mul1r -[q ^+ H](pow_split i q).
by ring.
Qed.

(* mirrors d10_credit_assignment.outcome_estimator_mean_is_the_gradient_for_every_baseline *)
Theorem outcome_estimator_mean_is_the_gradient_for_every_baseline q b (i : 'I_H) :
  expect q (fun x => (outcome_reward x - b) * step_score q i x) = outcome_estimator_mean_is_the_gradient_for_every_baseline_closed_form H q i b.
Proof.
rewrite /outcome_estimator_mean_is_the_gradient_for_every_baseline_closed_form.

rewrite (eq_expect q (g := fun x => outcome_reward x * step_score q i x - b * step_score q i x));
  last by move=> x; ring.
rewrite expect_linear expected_reward_times_step_score_is_p_times_one_minus_q /expected_reward_times_step_score_is_p_times_one_minus_q_closed_form.
by rewrite (step_score_mean_is_zero q i) mulr0 subr0.
Qed.

(* Q_i(x) = P_i x_i q^(H - i - 1) *)
Lemma state_action_value_eq q (i : 'I_H) x :
  state_action_value q i x = prefix_right i x * ((x i)%:R * q ^+ (H - i.+1)).
Proof.
rewrite /state_action_value (eq_expect q (g := fun y => \prod_(k < H)
   (fun (k : 'I_H) (o : bool) => if (k <= i)%N then (x k)%:R else o%:R : F) k (y k))); last first.
  by move=> y; apply: eq_bigr => k _; rewrite ffunE; case: (k <= i)%N.
rewrite (expect_prod q (fun (k : 'I_H) (o : bool) => if (k <= i)%N then (x k)%:R else o%:R : F)).
have -> : (x i)%:R * q ^+ (H - i.+1) = 1 ^+ i * (x i)%:R * q ^+ (H - i.+1) by rewrite expr1n mul1r.
rewrite -(prod_phases i 1 _ q).
rewrite /prefix_right [in RHS]big_mkcond -big_split /=; apply: eq_bigr => k _.
case: (ltngtP k i) => [ki | ik | /val_inj ki].
- by rewrite mix_const mulr1.
- rewrite (_ : (k == i) = false); last by apply/negbTE; rewrite -val_eqE /= gtn_eqF.
  by rewrite mul1r; ring.
- by rewrite ki eqxx mix_const mul1r.
Qed.

(* V_i(x) = P_i q^(H - i) *)
Lemma state_value_eq q (i : 'I_H) x : state_value q i x = prefix_right i x * q ^+ (H - i).
Proof.
rewrite /state_value (eq_expect q (g := fun y => \prod_(k < H)
   (fun (k : 'I_H) (o : bool) => if (k < i)%N then (x k)%:R else o%:R : F) k (y k))); last first.
  by move=> y; apply: eq_bigr => k _; rewrite ffunE; case: (k < i)%N.
rewrite (expect_prod q (fun (k : 'I_H) (o : bool) => if (k < i)%N then (x k)%:R else o%:R : F)).
have -> : q ^+ (H - i) = 1 ^+ i * q * q ^+ (H - i.+1) by rewrite expr1n mul1r pow_succ_split.
rewrite -(prod_phases i 1 q q).
rewrite /prefix_right [in RHS]big_mkcond -big_split /=; apply: eq_bigr => k _.
case: (k < i)%N; first by rewrite mix_const mulr1.
by rewrite if_same mulr1n mulr0n mul1r; ring.
Qed.

(* mirrors d10_credit_assignment.exact_credit_advantages_on_the_right_prefix
   (after a right prefix: Q_i - V_i = q^(H-h) (1-q) if step h = i + 1 is right, - q^(H-h+1) if wrong;
   Q_i and V_i are the conditional expectations of r, not postulated values) *)
Theorem exact_credit_advantages_on_the_right_prefix q (i : 'I_H) x :
  (forall k : 'I_H, (k < i)%N -> x k) ->
  state_action_value q i x - state_value q i x
  = exact_credit_advantages_on_the_right_prefix_closed_form H q i (x i).
Proof.
rewrite /exact_credit_advantages_on_the_right_prefix_closed_form.

move=> pre; have P1 : prefix_right i x = 1 :> F.
  by rewrite /prefix_right big1 // => k /pre ->.
rewrite state_action_value_eq state_value_eq P1 !mul1r -pow_succ_split.
by case: (x i); rewrite /= ?mulr1n ?mulr0n; ring.
Qed.

(* after a wrong prefix Q_i = V_i = 0 *)
Lemma exact_credit_values_after_a_wrong_prefix q (i : 'I_H) x (k : 'I_H) :
  (k < i)%N -> ~~ x k -> state_action_value q i x = 0 /\ state_value q i x = 0.
Proof.
move=> ki xk; have P0 : prefix_right i x = 0 :> F.
  by rewrite /prefix_right (bigD1 k) //= (negbTE xk) mulr0n mul0r.
by rewrite state_action_value_eq state_value_eq P0 !mul0r.
Qed.

(* e_i = P_i q^(H-i-1) (x_i - q)^2 *)
Lemma exact_credit_term_eq q (i : 'I_H) x :
  exact_credit_term q i x = prefix_right i x * (q ^+ (H - i.+1) * ((x i)%:R - q) ^+ 2).
Proof.
rewrite /exact_credit_term state_action_value_eq state_value_eq /step_score -pow_succ_split.
rewrite -[in RHS]prefix_idem; ring.
Qed.

(* mirrors d10_credit_assignment.exact_credit_mean_is_the_gradient *)
Theorem exact_credit_mean_is_the_gradient q (i : 'I_H) :
  expect q (exact_credit_term q i) = exact_credit_mean_is_the_gradient_closed_form H q i.
Proof.
rewrite /exact_credit_mean_is_the_gradient_closed_form.

rewrite (eq_expect q (g := fun x => prefix_right i x *
   (fun o : bool => q ^+ (H - i.+1) * (o%:R - q) ^+ 2) (x i))); last by move=> x; rewrite exact_credit_term_eq.
rewrite (expect_prefix_times q i (fun o : bool => q ^+ (H - i.+1) * (o%:R - q) ^+ 2)) /= mulr1n mulr0n.
by rewrite -[q ^+ H](pow_split i q); ring.
Qed.

(* ------------------------------------------------------------------------------------------------ *)
(* Variances of the outcome estimator.                                                              *)

(* Var[f] = E[f^2] - E[f]^2 *)
Definition variance q (f : {ffun 'I_H -> bool} -> F) : F := expect q (fun x => f x ^+ 2) - expect q f ^+ 2.

Lemma expect_lin2 q (a c : F) (f g : {ffun 'I_H -> bool} -> F) :
  expect q (fun x => a * f x + c * g x) = a * expect q f + c * expect q g.
Proof.
rewrite /expect !mulr_sumr -big_split; apply: eq_bigr => x _. rewrite /=; ring.
Qed.

Lemma reward_idem x : outcome_reward x ^+ 2 = outcome_reward x :> F.
Proof.
rewrite expr2 /outcome_reward -big_split; apply: eq_bigr => k _.
by case: (x k); rewrite /= ?mulr1n ?mulr0n ?mulr1 ?mulr0.
Qed.

Lemma reward_score_sq_phases q (i : 'I_H) x :
  outcome_reward x * step_score q i x ^+ 2
  = \prod_(k < H) (if (k < i)%N then (x k)%:R
                   else if k == i then (x k)%:R * ((x k)%:R - q) ^+ 2 else (x k)%:R).
Proof.
rewrite /step_score exprMn mulrA [prefix_right i x ^+ 2]expr2 mulrA !reward_times_prefix /outcome_reward (prod_times_at i).
apply: eq_bigr => k _; case: eqP => [-> | _]; first by rewrite ltnn.
by case: (k < i)%N.
Qed.

Lemma reward_score_sq_mean q (i : 'I_H) :
  expect q (fun x => outcome_reward x * step_score q i x ^+ 2) = q ^+ H * (1 - q) ^+ 2.
Proof.
rewrite (eq_expect q (g := fun x => \prod_(k < H)
   (if (k < i)%N then (fun o : bool => o%:R) (x k)
    else if k == i then (fun o : bool => o%:R * (o%:R - q) ^+ 2) (x k) else (fun o : bool => o%:R) (x k))));
  last by move=> x; rewrite reward_score_sq_phases.
rewrite (expect_phases q i (fun o : bool => o%:R) (fun o : bool => o%:R * (o%:R - q) ^+ 2)
  (fun o : bool => o%:R)).
rewrite /= mulr1n mulr0n !mulr0 !mul0r !addr0 mulr1 mul1r -[q ^+ H](pow_split i q).
by ring.
Qed.

Lemma score_sq_mean q (i : 'I_H) : expect q (fun x => step_score q i x ^+ 2) = q ^+ i.+1 * (1 - q).
Proof.
rewrite (eq_expect q (g := fun x => prefix_right i x * (fun o : bool => (o%:R - q) ^+ 2) (x i))); last first.
  by move=> x; rewrite /step_score exprMn [prefix_right i x ^+ 2]expr2 prefix_idem.
rewrite (expect_prefix_times q i (fun o : bool => (o%:R - q) ^+ 2)) /= mulr1n mulr0n [q ^+ i.+1]exprSr.
by ring.
Qed.

(* mirrors d10_credit_assignment.outcome_variance_for_a_constant_baseline
   (Python step h = i + 1, so q^h is q ^+ i.+1) *)
Theorem outcome_variance_for_a_constant_baseline q b (i : 'I_H) :
  variance q (fun x => (outcome_reward x - b) * step_score q i x)
  = outcome_variance_for_a_constant_baseline_closed_form H q i b.
Proof.
rewrite /outcome_variance_for_a_constant_baseline_closed_form.

rewrite /variance outcome_estimator_mean_is_the_gradient_for_every_baseline /outcome_estimator_mean_is_the_gradient_for_every_baseline_closed_form.
rewrite (eq_expect q (g := fun x => (1 - 2 * b) * (outcome_reward x * step_score q i x ^+ 2)
                                    + b ^+ 2 * step_score q i x ^+ 2)); last first.
  move=> x; transitivity (outcome_reward x ^+ 2 * step_score q i x ^+ 2
    - 2 * b * (outcome_reward x * step_score q i x ^+ 2) + b ^+ 2 * step_score q i x ^+ 2); first by ring.
  by rewrite reward_idem; ring.
rewrite (expect_lin2 q (1 - 2 * b) (b ^+ 2) (fun x => outcome_reward x * step_score q i x ^+ 2)
  (fun x => step_score q i x ^+ 2)).
by rewrite reward_score_sq_mean score_sq_mean (mulnC 2%N H) exprM; ring.
Qed.

(* mirrors d10_credit_assignment.outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared
   (Var[r u_i] = p (1 - p) (1 - q)^2 with p = q^H, at every step) *)
Theorem outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared q (i : 'I_H) :
  variance q (fun x => outcome_reward x * step_score q i x) = outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared_closed_form H q i.
Proof.
rewrite /outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared_closed_form.

rewrite /variance expected_reward_times_step_score_is_p_times_one_minus_q /expected_reward_times_step_score_is_p_times_one_minus_q_closed_form.
rewrite (eq_expect q (g := fun x => outcome_reward x * step_score q i x ^+ 2)); last first.
  by move=> x; rewrite exprMn reward_idem.
by rewrite reward_score_sq_mean; ring.
Qed.

(* ------------------------------------------------------------------------------------------------ *)
(* A process reward.                                                                                *)

(* the per-step reward r_k = 1[steps 0..k right] *)
Definition process_reward (k : 'I_H) x : F := \prod_(j < H | (j <= k)%N) (x j)%:R.

(* the reward-to-go G_i = \sum_(k >= i) r_k *)
Definition reward_to_go (i : 'I_H) x : F := \sum_(k < H | (i <= k)%N) process_reward k x.

Lemma process_reward_times_prefix (i k : 'I_H) x : (i <= k)%N ->
  process_reward k x * prefix_right i x = process_reward k x.
Proof.
move=> ik; rewrite /process_reward /prefix_right [in RHS]big_mkcond [X in X * _]big_mkcond.
rewrite [X in _ * X]big_mkcond -big_split; apply: eq_bigr => j _ /=.
case: (ltnP j i) => [ji | ij]; last by rewrite mulr1.
rewrite (leq_trans (ltnW ji) ik).
by case: (x j); rewrite /= ?mulr1n ?mulr0n ?mulr1 ?mulr0.
Qed.

Lemma process_reward_score_mean q (i k : 'I_H) : (i <= k)%N ->
  expect q (fun x => process_reward k x * step_score q i x) = q ^+ k.+1 * (1 - q).
Proof.
move=> ik.
pose f := fun (j : 'I_H) (o : bool) =>
  if j == i then (if (j <= k)%N then o%:R else 1) * (o%:R - q) else if (j <= k)%N then o%:R else 1 : F.
rewrite (eq_expect q (g := fun x => \prod_(j < H) f j (x j))); last first.
  move=> x; rewrite /step_score mulrA process_reward_times_prefix // /process_reward big_mkcond /=.
  rewrite (prod_times_at i) /f; apply: eq_bigr => j _; by case: eqP => // ->.
rewrite (expect_prod q f) /f.
rewrite (eq_bigr (fun j : 'I_H => (if (j < k)%N then q else if j == k then q else 1)
                           * (if j == i then 1 - q else 1))); last first.
  move=> j _; have [-> | ji] := eqVneq j i.
    rewrite ik.
    have -> : (if (i < k)%N then q else if i == k then q else 1) = q.
      case: (ltnP i k) => // ki; rewrite (_ : i == k) //.
      by apply/eqP/val_inj/anti_leq; rewrite ik ki.
    by rewrite mulr1n mulr0n; ring.
  rewrite mulr1.
  case: (ltngtP j k) => [jk | kj | /val_inj ->]; rewrite ?eqxx.
  - by rewrite mulr1n mulr0n; ring.
  - rewrite (_ : (j == k) = false); last by apply/negbTE; rewrite -val_eqE /= gtn_eqF.
    by ring.
  - by rewrite mulr1n mulr0n; ring.
rewrite big_split /= prod_at prod_phases expr1n mulr1; congr (_ * _).
by rewrite exprSr.
Qed.

(* mirrors d10_credit_assignment.process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1
   (REINFORCE with the reward-to-go: E[G_i u_i] = q^h - q^(H+1) with h = i + 1) *)
Theorem process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1 q (i : 'I_H) :
  expect q (fun x => reward_to_go i x * step_score q i x) = process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1_closed_form H q i.
Proof.
rewrite /process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1_closed_form.

rewrite /expect /reward_to_go.
rewrite (eq_bigr (fun x => \sum_(k < H | (i <= k)%N) (chain_weight q x * (process_reward k x * step_score q i x))));
  last by move=> x _; rewrite mulr_suml mulr_sumr; apply: eq_bigr => k _; ring.
rewrite exchange_big /=.
rewrite (eq_bigr (fun k : 'I_H => q ^+ k.+1 * (1 - q))) => [|k ik]; last first.
  by rewrite -(process_reward_score_mean q ik).
rewrite -(big_geq_mkord i H xpredT (fun k => q ^+ k.+1 * (1 - q))).
rewrite (eq_bigr (fun k => (- q ^+ k.+2) - (- q ^+ k.+1))) => [|k _]; last by rewrite [q ^+ k.+2]exprS; ring.
by rewrite telescope_sumr ?(ltnW (ltn_ord i)) //; ring.
Qed.

(* mirrors d10_credit_assignment.process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1
   (the Python's sum \sum_(k = h..H) q^k (1 - q), for every h <= H, 1-based as in the Python) *)
Theorem process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1 q (h : nat) :
  (h <= H)%N -> \sum_(h <= k < H.+1) q ^+ k * (1 - q) = process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1_closed_form H q h.
Proof.
rewrite /process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1_closed_form.

move=> hH; rewrite (eq_bigr (fun k => (- q ^+ k.+1) - (- q ^+ k))) => [|k _]; last by rewrite [q ^+ k.+1]exprS; ring.
rewrite telescope_sumr; last exact: leqW.
by ring.
Qed.

(* ------------------------------------------------------------------------------------------------ *)
(* Optimal constant baseline and exact-credit variance.                                             *)

(* mirrors d10_credit_assignment.outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q
   (D8's optimal constant baseline E[r u_i^2] / E[u_i^2], with H - h = H - i.+1) *)
Theorem outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q q (i : 'I_H) :
  0 < q < 1 ->
  expect q (fun x => outcome_reward x * step_score q i x ^+ 2) / expect q (fun x => step_score q i x ^+ 2)
  = outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q_closed_form H q i.
Proof.
rewrite /outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q_closed_form.

case/andP=> q0 q1; rewrite reward_score_sq_mean score_sq_mean.
have nz : q ^+ i.+1 * (1 - q) != 0.
  by rewrite mulf_neq0 ?expf_neq0 // lt0r_neq0 // subr_gt0.
rewrite -[RHS](mulfK nz); congr (_ / _).
by rewrite [q ^+ i.+1]exprS -(pow_split i q); ring.
Qed.

(* mirrors d10_credit_assignment.outcome_variance_with_the_optimal_baseline *)
Theorem outcome_variance_with_the_optimal_baseline q (i : 'I_H) :
  variance q (fun x => (outcome_reward x - q ^+ (H - i.+1) * (1 - q)) * step_score q i x)
  = outcome_variance_with_the_optimal_baseline_closed_form H q i.
Proof.
rewrite /outcome_variance_with_the_optimal_baseline_closed_form.

rewrite outcome_variance_for_a_constant_baseline /outcome_variance_for_a_constant_baseline_closed_form (mulnC 2%N H) exprM [q ^+ i.+1]exprS -(pow_split i q).
by ring.
Qed.

(* mirrors d10_credit_assignment.exact_credit_variance_per_step
   (Var[e_i] = q^(2H-h) (1-q) (1 - 3q + 3q^2 - q^h (1-q)) with h = i + 1) *)
Theorem exact_credit_variance_per_step q (i : 'I_H) :
  variance q (exact_credit_term q i)
  = exact_credit_variance_per_step_closed_form H q i.
Proof.
rewrite /exact_credit_variance_per_step_closed_form.

rewrite /variance exact_credit_mean_is_the_gradient /exact_credit_mean_is_the_gradient_closed_form.
rewrite (eq_expect q (g := fun x => prefix_right i x *
   (fun o : bool => (q ^+ (H - i.+1) * (o%:R - q) ^+ 2) ^+ 2) (x i))); last first.
  by move=> x; rewrite exact_credit_term_eq exprMn [prefix_right i x ^+ 2]expr2 prefix_idem.
rewrite (expect_prefix_times q i (fun o : bool => (q ^+ (H - i.+1) * (o%:R - q) ^+ 2) ^+ 2)) /= mulr1n mulr0n.
have -> : (2 * H - i.+1 = H + (H - i.+1))%N by rewrite mul2n -addnn addnBA // ltn_ord.
by rewrite exprD [q ^+ i.+1]exprS -(pow_split i q); ring.
Qed.

(* ------------------------------------------------------------------------------------------------ *)
(* Per-rollout signal-to-noise ratios mean^2 / Var.                                                 *)

(* mirrors d10_credit_assignment.outcome_snr_without_baseline_is_p_over_one_minus_p *)
Theorem outcome_snr_without_baseline_is_p_over_one_minus_p q (i : 'I_H) :
  0 < q < 1 ->
  expect q (fun x => outcome_reward x * step_score q i x) ^+ 2
    / variance q (fun x => outcome_reward x * step_score q i x)
  = outcome_snr_without_baseline_is_p_over_one_minus_p_closed_form H q i.
Proof.
rewrite /outcome_snr_without_baseline_is_p_over_one_minus_p_closed_form.

case/andP=> q0 q1.
rewrite outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared /outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared_closed_form.
rewrite expected_reward_times_step_score_is_p_times_one_minus_q /expected_reward_times_step_score_is_p_times_one_minus_q_closed_form.
have nz : q ^+ H * (1 - q) ^+ 2 != 0.
  by rewrite mulf_neq0 ?expf_neq0 // lt0r_neq0 // subr_gt0.
rewrite (_ : (q ^+ H * (1 - q)) ^+ 2 = (q ^+ H * (1 - q) ^+ 2) * q ^+ H); last by ring.
rewrite (_ : q ^+ H * (1 - q ^+ H) * (1 - q) ^+ 2 = (q ^+ H * (1 - q) ^+ 2) * (1 - q ^+ H)); last by ring.
by rewrite invfM mulrACA mulfV // mul1r.
Qed.

(* mirrors d10_credit_assignment.exact_credit_snr_depends_on_the_step_not_on_H
   (no positivity assumption on the variance is needed: x / 0 = 0 on both sides) *)
Theorem exact_credit_snr_depends_on_the_step_not_on_H q (i : 'I_H) :
  0 < q < 1 ->
  expect q (exact_credit_term q i) ^+ 2 / variance q (exact_credit_term q i)
  = exact_credit_snr_depends_on_the_step_not_on_H_closed_form H q i.
Proof.
rewrite /exact_credit_snr_depends_on_the_step_not_on_H_closed_form.

case/andP=> q0 q1; rewrite exact_credit_variance_per_step /exact_credit_variance_per_step_closed_form exact_credit_mean_is_the_gradient /exact_credit_mean_is_the_gradient_closed_form.
have -> : (2 * H - i.+1 = H + (H - i.+1))%N by rewrite mul2n -addnn addnBA // ltn_ord.
set c := q ^+ (H - i.+1); set d := 1 - 3 * q + 3 * q ^+ 2 - q ^+ i.+1 * (1 - q).
have nz : q ^+ H * c * (1 - q) != 0.
  by rewrite !mulf_neq0 ?expf_neq0 // ?lt0r_neq0 // ?subr_gt0.
rewrite exprD (_ : (q ^+ H * (1 - q)) ^+ 2 = (q ^+ H * c * (1 - q)) * (q ^+ i.+1 * (1 - q))); last first.
  by rewrite [q ^+ i.+1]exprS -(pow_split i q) /c; ring.
rewrite (_ : q ^+ H * c * (1 - q) * d = (q ^+ H * c * (1 - q)) * d); last by ring.
by rewrite invfM mulrACA mulfV // mul1r.
Qed.

(* mirrors d10_credit_assignment.outcome_variance_with_the_mean_baseline *)
Theorem outcome_variance_with_the_mean_baseline q (i : 'I_H) :
  variance q (fun x => (outcome_reward x - q ^+ H) * step_score q i x)
  = outcome_variance_with_the_mean_baseline_closed_form H q i.
Proof.
rewrite /outcome_variance_with_the_mean_baseline_closed_form.
by rewrite outcome_variance_for_a_constant_baseline /outcome_variance_for_a_constant_baseline_closed_form (mulnC 2%N H) exprM; ring. Qed.

(* mirrors d10_credit_assignment.mean_baseline_minus_no_baseline_variance *)
Theorem mean_baseline_minus_no_baseline_variance q (i : 'I_H) :
  variance q (fun x => (outcome_reward x - q ^+ H) * step_score q i x)
    - variance q (fun x => outcome_reward x * step_score q i x)
  = mean_baseline_minus_no_baseline_variance_closed_form H q i.
Proof.
rewrite /mean_baseline_minus_no_baseline_variance_closed_form.

rewrite outcome_variance_with_the_mean_baseline /outcome_variance_with_the_mean_baseline_closed_form.
rewrite outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared /outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared_closed_form.
by ring.
Qed.

(* mirrors d10_credit_assignment.last_step_optimal_variances_coincide
   (at the last step i + 1 = H the outcome estimator with b*_H = 1 - q, a variance computed here from the
   model, equals the exact-credit optimal-state-baseline formula q^(2H-h+1) (1-q)^2 (1 - q^(h-1)) at h = H,
   i.e. q^(H+1) (1-q)^2 (1 - q^(H-1)); the exact-credit side is the Python's formula, not re-derived) *)
Theorem last_step_optimal_variances_coincide q (i : 'I_H) : i.+1 = H ->
  variance q (fun x => (outcome_reward x - q ^+ (H - i.+1) * (1 - q)) * step_score q i x)
  = last_step_optimal_variances_coincide_closed_form H q i.
Proof.
rewrite /last_step_optimal_variances_coincide_closed_form.

move=> last; rewrite outcome_variance_with_the_optimal_baseline /outcome_variance_with_the_optimal_baseline_closed_form.
have -> : (2 * H - H + 1 = H.+1)%N by rewrite mul2n -addnn addnK addn1.
have h0 : (H - i.+1 = 0)%N by rewrite last subnn.
have h1 : (H - 1 = i)%N by rewrite -[in LHS]last subn1.
have h2 : q ^+ H = q ^+ i * q by rewrite -exprSr last.
by rewrite h0 h1 [q ^+ H.+1]exprSr h2 expr0 mul1r; ring.
Qed.

End Theorems.

Print Assumptions chain_success_probability_is_q_pow_H.
Print Assumptions expected_reward_times_step_score_is_p_times_one_minus_q.
Print Assumptions outcome_estimator_mean_is_the_gradient_for_every_baseline.
Print Assumptions exact_credit_advantages_on_the_right_prefix.
Print Assumptions exact_credit_mean_is_the_gradient.
Print Assumptions outcome_variance_for_a_constant_baseline.
Print Assumptions outcome_variance_without_baseline_is_p_times_one_minus_p_times_one_minus_q_squared.
Print Assumptions outcome_optimal_baseline_per_step_is_q_pow_H_minus_h_times_one_minus_q.
Print Assumptions outcome_variance_with_the_optimal_baseline.
Print Assumptions exact_credit_variance_per_step.
Print Assumptions outcome_snr_without_baseline_is_p_over_one_minus_p.
Print Assumptions exact_credit_snr_depends_on_the_step_not_on_H.
Print Assumptions process_reward_estimator_mean_is_q_pow_h_minus_q_pow_H_plus_1.
Print Assumptions process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1.
Print Assumptions outcome_variance_with_the_mean_baseline.
Print Assumptions mean_baseline_minus_no_baseline_variance.
Print Assumptions last_step_optimal_variances_coincide.
