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


def test_every_second_proof_names_a_result_of_the_catalogue():
    from grpo_verify.proof.catalog import all_results

    names = {r.name for r in all_results()}
    assert set(coq.second_proofs()) <= names, sorted(set(coq.second_proofs()) - names)


# -- the checks reject what they must -------------------------------------------------------------
def test_the_scan_finds_admits_and_axioms_but_not_comments_or_section_variables():
    assert coq.forbidden_uses("Lemma l : True. Proof. admit. Qed.") == ["line 1: admit"]
    assert coq.forbidden_uses("Lemma l : 1 = 2. Admitted.") == ["line 1: Admitted"]
    assert coq.forbidden_uses("Axiom ax : False.\nParameter x : nat.") == ["line 1: Axiom", "line 2: Parameter"]
    assert coq.forbidden_uses("Variable v : nat.") == ["line 1: Variable"]  # top level: an axiom
    assert coq.forbidden_uses("(* Admitted (* nested *) Axiom *)\nSection S. Variable v : nat. End S.") == []


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
