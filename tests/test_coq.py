"""The Coq/MathComp second proofs (derivations/coq/): every file of _CoqProject compiles, nothing is admitted or
assumed, every headline theorem's Print Assumptions is closed, and the Coq definitions compute what the Python
statements say on rational inputs (decided by Coq's vm_compute; a wrong value must fail).

Without ``coqc`` these tests skip with one line on a developer's machine and fail under CI
(``GRPO_VERIFY_REQUIRE_COQ=1``, set by .ci/run, or ``CI=true``).
"""

from __future__ import annotations

import itertools
import os
from fractions import Fraction as F
from pathlib import Path

import pytest
import sympy as sp

from grpo_verify import coq

REQUIRED = os.environ.get("GRPO_VERIFY_REQUIRE_COQ") == "1" or os.environ.get("CI", "").lower() in ("1", "true")


def need_coq() -> None:
    if coq.coqc() is None:
        if REQUIRED:
            pytest.fail("coqc is not installed, and this run requires the Coq proofs (GRPO_VERIFY_REQUIRE_COQ=1 or "
                        "CI): apt-get install coq libcoq-mathcomp-algebra libcoq-mathcomp-algebra-tactics "
                        "libcoq-mathcomp-zify")
        pytest.skip("coqc not installed: the Coq second proofs are not checked here")


@pytest.fixture(scope="module")
def build() -> coq.Build:
    need_coq()
    return coq.build()


def test_every_coq_file_compiles(build):
    assert build.files == coq.project_files() and build.files


def test_no_coq_file_admits_a_proof_or_adds_an_axiom():
    for f in coq.project_files():
        assert coq.forbidden_uses((coq.COQ_DIR / f).read_text()) == [], f


def test_every_headline_theorem_rests_on_no_axiom(build):
    mirrored = {t for ts in coq.second_proofs().values() for t in ts}
    assert mirrored and mirrored <= set(build.assumptions), sorted(mirrored - set(build.assumptions))
    open_ = {name: answer for name, answer in build.assumptions.items() if answer != coq.CLOSED}
    assert open_ == {}, open_


def test_every_second_proof_names_a_result_or_remark_of_the_catalogue():
    """A Coq theorem mirrors a kernel result, or a remark (a statement our kernel cannot check, proved in Coq)."""
    from grpo_verify.proof.catalog import families

    family_of = {x.name: f.key for f in families() for x in (*f.results, *f.remarks)}
    wrong = [(family, name, theorem) for family, name, theorem in coq.mirrors() if family_of.get(name) != family]
    assert coq.mirrors() and wrong == [], wrong
    # a theorem named as the result it mirrors (mathlib's discipline: the name states the conclusion)
    assert all(theorem.split(".", 1)[1] == name for _f, name, theorem in coq.mirrors())


# -- the checks reject what they must -------------------------------------------------------------
def test_the_scan_finds_admits_and_axioms_but_not_comments_or_section_variables():
    assert coq.forbidden_uses("Lemma l : True. Proof. admit. Qed.") == ["line 1: admit"]
    assert coq.forbidden_uses("Lemma l : 1 = 2. Admitted.") == ["line 1: Admitted"]
    assert coq.forbidden_uses("Axiom ax : False.\nParameter x : nat.") == ["line 1: Axiom", "line 2: Parameter"]
    assert coq.forbidden_uses("Variable v : nat.") == ["line 1: Variable"]  # top level: an axiom
    assert coq.forbidden_uses("(* Admitted (* nested *) Axiom *)\nSection S. Variable v : nat. End S.") == []
    assert coq.forbidden_uses("Unset Guard Checking.\n#[bypass_check(positivity)] Inductive t := .") == [
        "line 1: Unset Guard Checking", "line 2: bypass_check"]
    assert coq.forbidden_uses("Admit Obligations.\nDeclare ML Module \"cheat\".") == ["line 1: Admit", "line 2: Declare"]


def test_coqchk_rechecks_the_compiled_files(build):
    if not build.recheck:
        if REQUIRED:
            pytest.fail("coqchk is not installed (it comes with Debian's coq package), and this run requires it")
        pytest.skip("coqchk not installed")
    assert all(line in build.recheck for line in coq.RECHECK_NONE)
    assert all(f"{coq.LOGICAL}.{f[:-2]}" in build.recheck for f in build.files)


def test_coqchk_rejects_a_file_that_switches_off_a_kernel_check(tmp_path):
    need_coq()
    planted = ("Unset Guard Checking.\nFixpoint loop (n : nat) : False := loop n.\nLemma l : False. "
               "Proof. exact (loop 0). Qed.\n")
    with pytest.raises(coq.CoqError, match="coqchk rejects"):
        coq.build(_project(tmp_path, planted))


def _project(tmp_path: Path, source: str) -> Path:
    (tmp_path / "_CoqProject").write_text("-Q . GRPO\nPlanted.v\n")
    (tmp_path / "Planted.v").write_text(source)
    return tmp_path


def test_a_file_that_does_not_compile_fails_the_build(tmp_path):
    need_coq()
    with pytest.raises(coq.CoqError, match="does not compile"):
        coq.build(_project(tmp_path, "Lemma wrong : 1 = 2. Proof. reflexivity. Qed.\n"))


def test_an_axiom_shows_in_print_assumptions(tmp_path):
    need_coq()
    built = coq.build(_project(tmp_path, "Axiom ax : False.\nLemma l : False. Proof. exact ax. Qed.\n"
                                         "Print Assumptions l.\n"))
    assert built.assumptions["Planted.l"] != coq.CLOSED and "ax" in built.assumptions["Planted.l"]


def test_each_theorem_gets_its_own_answer_when_one_rests_on_an_axiom(tmp_path):
    """The build asks Print Assumptions once of all printed theorems together; that answer is not closed here, so
    each theorem is asked on its own, and only the one that uses the axiom lists it."""
    need_coq()
    built = coq.build(_project(tmp_path, "Axiom ax : False.\nLemma m : True. Proof. exact I. Qed.\n"
                                         "Lemma l : False. Proof. exact ax. Qed.\nLemma n : 0 = 0. Proof. reflexivity. Qed.\n"
                                         "Print Assumptions l.\nPrint Assumptions m.\nPrint Assumptions n.\n"))
    assert built.assumptions["Planted.m"] == built.assumptions["Planted.n"] == coq.CLOSED
    assert "ax" in built.assumptions["Planted.l"], built.assumptions


def test_a_missing_answer_in_the_one_pass_falls_back_to_the_files_as_written(tmp_path, monkeypatch):
    """If the generated file's output lacks an answer (coqc printed something this module does not read), the
    answers are not paired up by position: the build falls back to each file's own Print Assumptions lines."""
    need_coq()
    real = coq._compile

    def losing_the_last_answer(exe, scratch, f, timeout):
        out = real(exe, scratch, f, timeout)
        return out.rsplit(coq.CLOSED, 1)[0] if f.startswith("GrpoVerifyAssumptions") else out
    monkeypatch.setattr(coq, "_compile", losing_the_last_answer)
    built = coq.build(_project(tmp_path, "Axiom ax : False.\nLemma l : False. Proof. exact ax. Qed.\n"
                                         "Lemma m : True. Proof. exact I. Qed.\nPrint Assumptions l.\nPrint Assumptions m.\n"))
    assert "ax" in built.assumptions["Planted.l"] and built.assumptions["Planted.m"] == coq.CLOSED, built.assumptions


def test_a_print_inside_a_section_is_asked_there_not_after_the_section_closes(tmp_path):
    """Inside a Section, Print Assumptions lists the section variables the theorem uses (an answer the build does
    not accept); a definition standing for that line would be generalised over them at End, and closed."""
    need_coq()
    source = "Section S.\nVariable v : False.\nLemma l : False. Proof. exact v. Qed.\nPrint Assumptions l.\nEnd S.\n"
    assert coq.printed_as_definitions(source) is None
    with pytest.raises(coq.CoqError, match="Print Assumptions"):
        coq.build(_project(tmp_path, source))


def test_print_lines_become_definitions_outside_comments_only():
    source = ('(* Print Assumptions c. *)\nLemma a : True. Proof. exact I. Qed.\nPrint Assumptions a.\n'
              'Section S. End S.\n  Print   Assumptions GRPO.X.b .\n')
    text, names = coq.printed_as_definitions(source)
    assert names == ["a", "GRPO.X.b"]
    assert text == ('(* Print Assumptions c. *)\nLemma a : True. Proof. exact I. Qed.\n'
                    'Definition grpo_verify_printed_0 := @a.\nSection S. End S.\n  '
                    'Definition grpo_verify_printed_1 := @GRPO.X.b.\n')


# -- the statements say what the Python says --------------------------------------------------------
def all_equal_probability(p: F, size: int) -> F:
    """P(all R binary rewards equal) by enumerating {0, 1}^R: independent of both the Coq and the Python form."""
    total = F(0)
    for outcome in itertools.product((0, 1), repeat=size):
        weight = F(1)
        for bit in outcome:
            weight *= p if bit else 1 - p
        total += weight if len(set(outcome)) == 1 else 0
    return total


# small numbers: MathComp's rat literals are built from unary naturals, so a numerator of 5^8 would not compute
POINTS = [(size, p) for size in (1, 2, 3) for p in (F(0), F(1, 3), F(1, 2), F(1))]


def test_coq_zero_gradient_probability_is_the_python_statement_and_the_enumeration():
    """D6: Coq's z_R(p) and z_R'(p) at rat equal the enumeration and d6's SymPy expressions at the same points."""
    need_coq()
    from grpo_verify.derivations import d6_sparsity as d6

    goals = []
    for size, p in POINTS:
        value = all_equal_probability(p, size)
        assert sp.Rational(value.numerator, value.denominator) == d6.zero_gradient_probability(
            sp.Rational(p.numerator, p.denominator), size)
        goals.append((f"zero_gradient_probability {size} {coq.rat(p)}", coq.rat(value)))
        q = sp.Symbol("q")
        slope = sp.diff(d6.zero_gradient_probability(q, size), q).subs(q, sp.Rational(p.numerator, p.denominator))
        assert slope == d6.zero_gradient_probability_slope(sp.Rational(p.numerator, p.denominator), size)
        goals.append((f"zero_gradient_probability_slope {size} {coq.rat(p)}", coq.rat(F(int(slope.p), int(slope.q)))))
    coq.evaluate(["D6_sparsity"], goals)


def test_a_wrong_value_is_not_decided_true():
    """The fidelity check rejects a Coq definition that computes another quantity (here: off by 1/1000)."""
    need_coq()
    value = all_equal_probability(F(1, 3), 3)
    with pytest.raises(coq.CoqError, match="did not decide"):
        coq.evaluate(["D6_sparsity"], [(f"zero_gradient_probability 3 {coq.rat(F(1, 3))}",
                                        coq.rat(value + F(1, 1000)))])


# -- the shared definitions, D3, D5, D7, D8 at rational points --------------------------------------------
# Python values are float64; the inputs are chosen so that every Python value is a small rational (floats exact
# or within 1e-12 of a fraction with denominator <= 1000, which `exact` reconstructs and then checks)
def exact(x: float) -> F:
    value = F(x).limit_denominator(1000)
    assert abs(float(value) - x) < 1e-12, x
    return value


def vec(values) -> str:
    """A Coq function 'I_R -> rat taking the given values."""
    return f"(fun i : 'I_{len(values)} => nth 0 [:: {'; '.join(coq.rat(F(v)) for v in values)}] i)"


def mat(rows) -> str:
    """A Coq matrix 'M[rat]_(m, n) with the given rows."""
    cols = len(rows[0])
    body = "[:: " + "; ".join("[:: " + "; ".join(coq.rat(F(v)) for v in row) + "]" for row in rows) + "]"
    return f"(\\matrix_(i < {len(rows)}, j < {cols}) nth 0 (nth [::] {body} i) j)"


def ord_(i: int, n: int) -> str:
    return f"(@Ordinal {n} {i} isT)"


def tensor(rows):
    import torch

    return torch.tensor(rows, dtype=torch.float64)


GROUPS = [[0, 1, 2], [0, 0, 2, 2], [0, 0, 1, 1, 3], [1, 1, 1]]  # group means 1, 1, 1, 1: float-exact
COMMON = ("centred_rewards", "group_mean", "rloo_advantages", "leave_one_out_mean", "scaled_advantages",
          "centred_sum_of_squares", "dr_grpo_advantages")


def test_coq_group_definitions_are_the_estimators():
    """GroupCommon: the group mean, the centred (Dr. GRPO) and RLOO advantages equal grpo_verify.estimators'; the
    GRPO and population-std advantages are the centred rewards over Num.sqrt(S_2/(R-1)) + eps, resp.
    Num.sqrt(S_2/R) + eps: Coq computes S_2/(R-1) and S_2/R, equal to the squares of torch's two stds, and
    scaled_advantages at (std + eps) equals estimators.grpo_advantages / population_std_advantages (at rat
    Num.sqrt does not exist: rat is not real closed)."""
    need_coq()
    from grpo_verify import estimators as est

    goals = []
    for rewards in GROUPS:
        size, r = len(rewards), vec(rewards)
        t = tensor([rewards])
        goals.append((f"group_mean {r}", coq.rat(exact(float(t.mean())))))
        dr, rloo = est.dr_grpo_advantages(t)[0], est.rloo_advantages(t)[0]
        sample, population = float(t.std(correction=1)), float(t.std(correction=0))
        goals.append((f"centred_sum_of_squares {r} / ({size}%:R - 1)", coq.rat(exact(sample ** 2))))
        goals.append((f"centred_sum_of_squares {r} / {size}%:R", coq.rat(exact(population ** 2))))
        for i in range(size):
            goals.append((f"centred_rewards {r} {ord_(i, size)}", coq.rat(exact(float(dr[i])))))
            goals.append((f"dr_grpo_advantages {r} {ord_(i, size)}", coq.rat(exact(float(dr[i])))))
            goals.append((f"rloo_advantages {r} {ord_(i, size)}", coq.rat(exact(float(rloo[i])))))
        for scale, std, eps in (("grpo", sample, 1.0), ("population", population, 1.0)):
            if F(std) ** 2 != exact(std ** 2) or len(set(rewards)) == 1:
                continue  # an irrational std (or a constant group, set to 0 by convention) is not tested at rat
            adv = est.group_advantages(t, scale, eps)[0]
            for i in range(size):
                goals.append((f"scaled_advantages {coq.rat(exact(std + eps))} {r} {ord_(i, size)}",
                              coq.rat(exact(float(adv[i])))))
    assert len(goals) > 40
    coq.evaluate(["GroupCommon"], goals, unfold=COMMON)


def test_coq_token_advantages_are_the_estimators():
    """D3's objects: token_advantages A (completion_mask len) = estimators.token_advantages(A, mask)."""
    need_coq()
    import torch

    from grpo_verify import estimators as est

    A, lengths, width = [F(3, 2), F(-1, 2), F(1, 4)], [2, 4, 0], 4
    mask = torch.tensor([[1.0 if t < n else 0.0 for t in range(width)] for n in lengths], dtype=torch.float64)
    py = est.token_advantages(tensor([float(a) for a in A]), mask)
    lens = f"(fun i : 'I_3 => nth 0%N [:: {'; '.join(f'{n}%N' for n in lengths)}] i)"
    goals = [(f"token_advantages (T := {width}) {vec(A)} (completion_mask {lens}) {ord_(i, 3)} {ord_(t, width)}",
              coq.rat(exact(float(py[i, t])))) for i in range(3) for t in range(width)]
    coq.evaluate(["GroupCommon"], goals, unfold=("token_advantages", "completion_mask"))


def test_coq_centring_matrix_is_d7s_and_centres_the_scores():
    """D7: Coq's centring matrix (C = I - 1 1^T / R) and C G equal d7.centring_matrix and its product at R = 3."""
    need_coq()
    from grpo_verify.derivations import d7_rank_structure as d7

    C = d7.centring_matrix(3)
    G = [[1, 0], [2, 1], [0, 3]]
    CG = C * sp.Matrix(G)
    goals = [(f"(centring_matrix 3 : 'M[rat]_3) {ord_(i, 3)} {ord_(j, 3)}", coq.rat(F(str(C[i, j]))))
             for i in range(3) for j in range(3)]
    goals += [(f"(centring_matrix 3 *m {mat(G)}) {ord_(i, 3)} {ord_(j, 2)}", coq.rat(F(str(CG[i, j]))))
              for i in range(3) for j in range(2)]
    coq.evaluate(["D7_rank_structure"], goals, unfold=("centring_matrix", "mulmx", "scalar_mx", "const_mx"))


def test_coq_optimal_baselines_are_the_oracles():
    """D8: b* = M_1/M_0, the per-coordinate b*_c, the covariance and the softmax closed form equal
    grpo_verify.oracle and d8 on the softmax bandit pi = (1/2, 1/4, 1/4), r = (1, 0, 0) (b* = 3/10; with the
    last logit fixed, 5/14)."""
    need_coq()
    import torch

    from grpo_verify import oracle
    from grpo_verify.derivations import d8_optimal_baseline as d8
    from grpo_verify.synthetic import Outcomes

    pi, r = [F(1, 2), F(1, 4), F(1, 4)], [1, 0, 0]
    free = [[(1 if a == c else 0) - pi[c] for c in range(3)] for a in range(3)]
    ref = [row[:2] for row in free]
    goals = []
    for name, scores in (("g_free", free), ("g_ref", ref)):
        out = Outcomes(torch.arange(3).reshape(3, 1), tensor([float(x) for x in pi]),
                       tensor([[float(x) for x in row] for row in scores]))
        goals.append((f"optimal_baseline pi_ex r_ex {name}", coq.rat(exact(oracle.optimal_baseline(out, tensor(r))))))
        per = oracle.coordinatewise_optimal_baseline(out, tensor(r))
        goals += [(f"coordinate_optimal_baseline pi_ex r_ex {name} {ord_(c, len(scores[0]))}",
                   coq.rat(exact(float(per[c])))) for c in range(len(scores[0]))]
    closed = d8.softmax_optimal_baseline([sp.Rational(str(x)) for x in pi], r)
    goals.append(("softmax_optimal_baseline pi_ex r_ex", coq.rat(F(str(closed)))))
    goals.append(("expect pi_ex r_ex", coq.rat(F(1, 2))))
    goals.append(("covariance pi_ex r_ex (squared_score_norms g_free)",
                  coq.rat(F(str(sum(p * x * sum(v * v for v in g) for p, x, g in zip(pi, r, free))
                                - sum(p * x for p, x in zip(pi, r)) * sum(p * sum(v * v for v in g)
                                                                           for p, g in zip(pi, free)))))))
    coq.evaluate(["D8_optimal_baseline"], goals,
                 unfold=("optimal_baseline", "coordinate_optimal_baseline", "score_norm_moment", "sqnorm",
                         "softmax_optimal_baseline", "sum_sq", "covariance", "expect", "squared_score_norms",
                         "g_free", "g_ref", "softmax_score", "reference_logit_score", "pi_ex", "r_ex"))


def test_coq_single_draw_expectation_is_the_oracles_policy_gradient():
    """D5: expectation1 p (rho * g) = oracle.policy_gradient (one coordinate); the R-draw `expectation` sums over
    {ffun 'I_R -> 'I_K}, which vm_compute cannot enumerate at any useful size, and is tied to expectation1 by
    the theorems expectation_one_draw and expectation_two_draws of D5_baseline_bias.v."""
    need_coq()
    import torch

    from grpo_verify import oracle
    from grpo_verify.synthetic import Outcomes

    p, rho, g = [F(1, 2), F(1, 4), F(1, 4)], [1, 0, 2], [1, -1, -1]
    out = Outcomes(torch.arange(3).reshape(3, 1), tensor([float(x) for x in p]), tensor([[float(x)] for x in g]))
    value = float(oracle.policy_gradient(out, tensor(rho))[0])
    coq.evaluate(["GroupCommon"], [(f"expectation1 {vec(p)} (fun k => {vec(rho)} k * {vec(g)} k)",
                                    coq.rat(exact(value)))], unfold=("expectation1",))


def test_the_readme_table_is_the_mirrors():
    from grpo_verify.report.claims import claims_citing

    table = coq.readme_table(claims_citing())
    assert table in (coq.COQ_DIR / "README.md").read_text(), (
        "derivations/coq/README.md's table is stale: python -m grpo_verify.coq --write-readme")


def test_the_command_says_in_one_line_when_coqc_is_missing(monkeypatch, capsys):
    monkeypatch.setattr(coq, "coqc", lambda: None)
    assert coq.main([]) == 1
    err = capsys.readouterr().err
    assert "error: coqc not found" in err and "Traceback" not in err


def test_the_command_reports_the_build(capsys):
    need_coq()
    assert coq.main([]) == 0
    out = capsys.readouterr().out
    assert all(f"{f}: compiled" in out for f in coq.project_files()) and "0 resting on an axiom" in out


WITH_BASELINE = {"outcome_estimator_mean_is_the_gradient_for_every_baseline", "outcome_variance_for_a_constant_baseline"}


def test_coq_chain_closed_forms_are_d10s():
    """D10: each mirrored theorem's right-hand side (a `_closed_form` definition of D10_credit_assignment.v, the
    step 0-based) equals the Python result's right-hand side (the step h 1-based) at H = 1, 2, every step, q = 1/3,
    b = 1/2. The left-hand sides are expectations over {ffun 'I_H -> bool}, which vm_compute cannot enumerate;
    the theorems tie them to these closed forms."""
    need_coq()
    from grpo_verify.derivations import d10_credit_assignment as d10

    mirrored = {name for family, name, _t in coq.mirrors() if family == "d10_credit_assignment"}
    results = {name: getattr(d10, name) for name in mirrored}
    q, b = F(1, 3), F(1, 2)
    goals, covered = [], set()
    for name in sorted(mirrored):
        rhs = results[name].rhs
        symbols = {str(s): s for s in rhs.free_symbols}
        for H in (1, 2):
            steps = [1] if name == "chain_success_probability_is_q_pow_H" else range(1, H + 1)
            for h in steps:
                values = {"q": sp.Rational(1, 3), "H": H, "h": h, "b": sp.Rational(1, 2)}
                at = rhs.subs({s: values[n] for n, s in symbols.items() if n in values}).doit()
                args = f"{H} {coq.rat(q)}"
                if name == "chain_success_probability_is_q_pow_H":
                    pass
                elif name == "process_reward_gradient_at_step_h_is_q_pow_h_minus_q_pow_H_plus_1":
                    args += f" {h}"  # this one keeps the Python's 1-based h
                else:
                    args += f" {h - 1}"
                if name in WITH_BASELINE:
                    args += f" {coq.rat(b)}"
                if isinstance(at, sp.MatrixBase):  # (success, failure) at step h
                    pairs = [(f"{name}_closed_form {args} true", at[0]), (f"{name}_closed_form {args} false", at[1])]
                else:
                    pairs = [(f"{name}_closed_form {args}", at)]
                for expr, value in pairs:
                    value = sp.nsimplify(value)
                    assert value.is_Rational, (name, value)
                    goals.append((expr, coq.rat(F(int(value.p), int(value.q)))))
                covered.add(name)
    assert covered == mirrored
    coq.evaluate(["D10_credit_assignment"], goals, unfold=tuple(f"{n}_closed_form" for n in sorted(mirrored)))


def test_coq_rloo_variance_quantities_are_an_enumerations():
    """D9: Coq's RLOO estimator equals the mean of estimators.rloo_advantages times the scores; V_or (the
    oracle-baseline term's variance) and zeta_2 (the pair kernel's variance) equal a direct enumeration, over one
    draw and over ordered pairs of two i.i.d. draws, of the quantities they name."""
    need_coq()
    from grpo_verify import estimators as est

    p, rho, g = [F(1, 2), F(1, 4), F(1, 4)], [F(1), F(0), F(2)], [F(1), F(-1), F(-1)]  # E[g] = 0
    mu = sum(pk * rk for pk, rk in zip(p, rho))
    grad = sum(pk * rk * gk for pk, rk, gk in zip(p, rho, g))
    terms = [(rk - mu) * gk for rk, gk in zip(rho, g)]
    oracle_var = sum(pk * t * t for pk, t in zip(p, terms)) - sum(pk * t for pk, t in zip(p, terms)) ** 2
    kernel = [[(rho[a] - rho[c]) * (g[a] - g[c]) / 2 for c in range(3)] for a in range(3)]
    zeta2 = sum(p[a] * p[c] * kernel[a][c] ** 2 for a in range(3) for c in range(3)) - grad ** 2
    group_r, group_g = [0, 1, 2, 2], [1, -1, 2, 0]
    adv = est.rloo_advantages(tensor([group_r]))[0]
    estimate = sum(exact(float(a)) * s for a, s in zip(adv, group_g)) / len(group_r)
    goals = [(f"oracle_variance {vec(p)} {vec(rho)} {vec(g)}", coq.rat(oracle_var)),
             (f"pair_kernel_variance {vec(p)} {vec(rho)} {vec(g)}", coq.rat(zeta2)),
             (f"rloo_estimator {vec(group_r)} {vec(group_g)}", coq.rat(estimate)),
             (f"pair_kernel {coq.rat(rho[0])} {coq.rat(rho[2])} {coq.rat(g[0])} {coq.rat(g[2])}", coq.rat(kernel[0][2]))]
    coq.evaluate(["GroupCommon", "D9_group_size"], goals, unfold=("oracle_variance", "pair_kernel_variance", "expectation1",
                                                   "rloo_estimator", "rloo_advantages", "leave_one_out_mean",
                                                   "pair_kernel"))
