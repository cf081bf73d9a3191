"""The claims ledger: verdict rules on synthetic inputs, the JUnit parser, run loading, the document
(and a real pdflatex compile), and the command line. No test here runs the suite or checks the
derivations catalogue (the CLI's checks are replaced by a one-result stand-in)."""

from __future__ import annotations

import dataclasses

import itertools
import json
import os
import re
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from grpo_verify.proof import Status
from grpo_verify.report import __main__ as cli
from grpo_verify.report import claims, junit, ledger, rules, runs
from grpo_verify.report.rules import DerivationEvidence, Nature, Role, Standing, TestEvidence, Verdict
from grpo_verify.render import compile_pdf
from support import one_result_catalogue

PDFLATEX = shutil.which("pdflatex")
METRICS = ("effective_rank", "stable_rank", "participation_ratio", "energy_rank_90", "energy_rank_95",
           "energy_rank_99", "tolerance_rank")


def D(role=Role.SUPPORTS, status=Status.PROVED, scope="symbolic", name="r", condition="an extra assumption",
      setting=""):
    return DerivationEvidence(name, "D9", role, status, scope, condition, setting)


def T(outcome="passed", selector="tests/test_x.py::test_y"):
    return TestEvidence(selector, outcome, ((selector, outcome, ""),))


# -- the rules -------------------------------------------------------------------------------------
def test_every_theorem_verdict_is_reachable():
    ok = [T()]
    assert rules.theorem_verdict([D()], ok).verdict is Verdict.CONFIRMED
    finite = rules.theorem_verdict([D(scope="R = 2..16")], ok)  # the claim speaks of every R
    assert finite.verdict is Verdict.INCONCLUSIVE and "R = 2..16" in finite.reasons[0]
    refuted = rules.theorem_verdict([D(), D(Role.REFUTES, name="rank_four", condition="rank 4 at R = 4")], ok)
    assert refuted.verdict is Verdict.REFUTED
    assert refuted.counterexamples == ["D9 rank_four: rank 4 at R = 4"]
    assert rules.theorem_verdict([D()], None).verdict is Verdict.INCONCLUSIVE
    assert rules.theorem_verdict([D(Role.CONTEXT)], ok).verdict is Verdict.INCONCLUSIVE  # nothing supports it
    assert rules.theorem_verdict([D()], ok, Nature.DEFINITIONAL).verdict is Verdict.DEFINITIONAL
    assert rules.theorem_verdict([D()], ok, Nature.ABOUT_THE_PAPER).verdict is Verdict.NOT_ASSESSABLE
    toy = rules.theorem_verdict([D(), D(Role.REFUTES, name="toy", condition="slow", setting="a toy chain, SGD")], ok)
    assert toy.verdict is Verdict.NOT_SUPPORTED_IN_MODEL and "a toy chain, SGD" in toy.reasons[0]
    assert toy.counterexamples == ["D9 toy: slow (holds in a toy chain, SGD)"]
    assert {v.value for v in Verdict} == {"confirmed", "confirmed (definitional)", "refuted", "not supported in a model",
                                          "not assessable as worded", "not yet measured", "inconclusive"}


def test_a_claim_about_the_papers_own_derivations_is_never_confirmed_or_refuted_by_ours():
    ok = [T()]
    for evidence in ([D()], [D(), D(Role.REFUTES, name="x")], [D(Role.CONTEXT)], [D(status=Status.UNPROVED)]):
        for tests in (ok, None, [T("failed")]):
            assert rules.theorem_verdict(evidence, tests, Nature.ABOUT_THE_PAPER).verdict is Verdict.NOT_ASSESSABLE


def test_a_model_never_refutes_and_a_counterexample_in_the_claims_setting_always_does():
    ok = [T()]
    toy = D(Role.REFUTES, name="toy", setting="a toy chain under plain SGD")
    own = D(Role.REFUTES, name="own", condition="fails at R = 2")
    for nature in (Nature.THEOREM, Nature.DEFINITIONAL):
        assert rules.theorem_verdict([D(), toy], ok, nature).verdict is Verdict.NOT_SUPPORTED_IN_MODEL
        both = rules.theorem_verdict([D(), toy, own], ok, nature)
        assert both.verdict is Verdict.REFUTED and both.counterexamples == ["D9 own: fails at R = 2"]
        assert rules.theorem_verdict([D(), toy], [T("failed")], nature).verdict is Verdict.INCONCLUSIVE
        assert rules.theorem_verdict([D(scope="R = 2..4")], ok, nature).verdict is Verdict.INCONCLUSIVE


def test_a_model_that_bears_a_claim_out_under_other_assumptions_leaves_it_undecided():
    ok = [T()]
    sgd = D(Role.REFUTES, name="sgd", condition="slow", setting="a toy chain under plain SGD")
    adam = D(name="adam", setting="the same chain under Adam")
    mixed = rules.theorem_verdict([D(), sgd, adam], ok)
    assert mixed.verdict is Verdict.INCONCLUSIVE
    assert "plain SGD" in mixed.reasons[0] and "under Adam" in mixed.reasons[0]
    assert mixed.counterexamples == ["D9 sgd: slow (holds in a toy chain under plain SGD)"]
    only_model = rules.theorem_verdict([adam], ok)  # a model's support never confirms
    assert only_model.verdict is Verdict.INCONCLUSIVE and "only in a model" in only_model.reasons[0]
    assert rules.theorem_verdict([D(), adam], ok).verdict is Verdict.CONFIRMED  # other support decides
    own = D(Role.REFUTES, name="own", condition="fails at R = 2")
    assert rules.theorem_verdict([D(), sgd, adam, own], ok).verdict is Verdict.REFUTED


def test_every_strongest_form_standing_is_reachable():
    ok = [T()]
    assert rules.strongest_form_standing([D(), D(Role.CONTEXT, name="c")], ok).standing is Standing.PROVED
    finite = rules.strongest_form_standing([D(), D(scope="R = 2..16", name="f")], ok)
    assert finite.standing is Standing.PROVED_FOR_VALUES and "R = 2..16" in finite.reasons[0]
    assert rules.strongest_form_standing([D(Role.CONTEXT)], ok).standing is Standing.NOT_ESTABLISHED
    assert rules.strongest_form_standing([D()], None).standing is Standing.NOT_ESTABLISHED
    assert rules.strongest_form_standing([D()], [T("failed")]).standing is Standing.NOT_ESTABLISHED
    for status in (Status.UNPROVED, Status.REFUTED):
        assert rules.strongest_form_standing([D(), D(status=status, name="x")], ok).standing is Standing.NOT_ESTABLISHED
    with pytest.raises(ValueError, match="counterexample"):
        rules.strongest_form_standing([D(Role.REFUTES)], ok)


def test_a_claim_true_only_in_a_regime_is_decided_alike_whatever_its_kind():
    """C2-style (true only for p > 1/2) and C4-style (true only in a weaker, rank-one form): once a
    counterexample outside the regime is proved, both are refuted as worded and their restricted form is
    proved; with only the restricted proof and no counterexample, both are inconclusive as worded."""
    ok = [T()]
    regime = [D(name="rises_above_half"), D(Role.REFUTES, name="falls_below_half", condition="p < 1/2")]
    weaker = [D(name="zero_sum"), D(Role.REFUTES, name="rank_three_at_R4", condition="rank 3")]
    for as_worded, restricted in ((regime, [D(name="rises_above_half")]), (weaker, [D(name="one_direction")])):
        assert rules.theorem_verdict(as_worded, ok).verdict is Verdict.REFUTED
        assert rules.strongest_form_standing(restricted, ok).standing is Standing.PROVED
        without_counterexample = [d for d in as_worded if d.role is not Role.REFUTES]
        assert rules.theorem_verdict([D(Role.CONTEXT, name=d.name) for d in without_counterexample],
                                     ok).verdict is Verdict.INCONCLUSIVE


ROLES = list(Role)
STATUSES = list(Status)
BAD_OUTCOMES = ("failed", "error", "skipped", "missing", "not run")


@pytest.mark.parametrize("bad", BAD_OUTCOMES)
def test_a_failing_or_missing_test_never_yields_confirmed(bad):
    for roles in itertools.product(ROLES, repeat=2):
        for statuses in itertools.product(STATUSES, repeat=2):
            derivs = [D(r, s, name=f"r{k}") for k, (r, s) in enumerate(zip(roles, statuses))]
            for tests in ([T(bad)], [T(), T(bad)]):
                decision = rules.theorem_verdict(derivs, tests)
                assert decision.verdict is Verdict.INCONCLUSIVE, (roles, statuses, bad)
                assert any(bad in reason for reason in decision.reasons)
    paper_rows = {R: {"mean": 2.0, "ci_low": 1.9, "ci_high": 2.1, "n": 10} for R in (2, 4, 8)}
    assert rules.rank_claim_verdict(paper_rows, [T(bad)], layer_rows=paper_rows).verdict is Verdict.INCONCLUSIVE
    assert rules.rank_claim_verdict(paper_rows, None, layer_rows=paper_rows).verdict is Verdict.INCONCLUSIVE
    assert rules.rank_claim_verdict(paper_rows, [T()], layer_rows=paper_rows).verdict is Verdict.CONFIRMED


def test_an_unproved_derivation_never_yields_confirmed():
    for status in (Status.UNPROVED, Status.REFUTED):
        for role in ROLES:
            assert rules.theorem_verdict([D(), D(role, status, name="x")], [T()]).verdict is Verdict.INCONCLUSIVE
            if role is not Role.REFUTES:
                assert rules.strongest_form_standing([D(), D(role, status, name="x")],
                                                     [T()]).standing is Standing.NOT_ESTABLISHED


def test_approx_two_tolerance_and_rank_verdicts():
    assert rules.approx_two(2.3, 2.1, 2.5, 5) == rules.APPROX
    assert rules.approx_two(2.6, 2.45, 2.8, 5) == rules.UNDECIDED  # mean off by > 0.5, CI still overlaps
    assert rules.approx_two(3.2, 2.9, 3.5, 5) == rules.NOT_APPROX
    assert rules.approx_two(1.0, 1.0, 1.0, 5) == rules.NOT_APPROX
    assert rules.approx_two(2.0, 2.0, 2.0, 2) == rules.TOO_FEW
    row = lambda m, lo, hi: {"mean": m, "ci_low": lo, "ci_high": hi, "n": 8}  # noqa: E731
    good = {2: row(2, 1.9, 2), 4: row(2.2, 2, 2.4), 8: row(2, 1.8, 2.2)}
    off = {2: row(2, 1.9, 2), 4: row(2.2, 2, 2.4), 8: row(5, 4.6, 5.3)}
    refuted = rules.rank_claim_verdict(off, [T()], layer_rows={**good, 4: row(3.5, 3.2, 3.8)})
    assert refuted.verdict is Verdict.REFUTED
    assert any("R = 8" in c for c in refuted.counterexamples) and any("R = 4" in c for c in refuted.counterexamples)
    assert rules.rank_claim_verdict({2: row(2, 1.9, 2), 4: row(2.7, 2.4, 3.0), 8: row(2, 1.8, 2.2)},
                                    [T()], layer_rows=good).verdict is Verdict.INCONCLUSIVE


def test_the_rank_claim_needs_both_pre_registered_readings():
    """Neither reading alone decides: one missing, or the two disagreeing, leaves the claim inconclusive."""
    row = lambda m, lo, hi: {"mean": m, "ci_low": lo, "ci_high": hi, "n": 8}  # noqa: E731
    good = {R: row(2, 1.9, 2.1) for R in (2, 4, 8)}
    off = {**good, 8: row(5, 4.6, 5.3)}
    for primary, layers in ((good, None), (off, None), (good, off), (off, good)):
        decision = rules.rank_claim_verdict(primary, [T()], layer_rows=layers)
        assert decision.verdict is Verdict.INCONCLUSIVE, (primary, layers)
    assert "not measured" in rules.rank_claim_verdict(good, [T()]).reasons[0]
    assert "disagree" in rules.rank_claim_verdict(off, [T()], layer_rows=good).reasons[0]
    assert rules.rank_claim_verdict(good, [T()], layer_rows=good).verdict is Verdict.CONFIRMED
    assert rules.rank_claim_verdict(off, [T()], layer_rows=off).verdict is Verdict.REFUTED
    assert rules.rank_claim_verdict(None, [T()], measured_instead="SmolLM2").verdict is Verdict.NOT_MEASURED


def test_series_status_names_the_group_sizes_it_covers():
    assert rules.series_status({2: rules.APPROX}) == "~2 at R = 2"
    assert rules.series_status({2: rules.APPROX, 4: rules.APPROX, 8: rules.APPROX}) == "~2 at R = 2, 4, 8"
    assert rules.series_status({2: rules.APPROX, 4: rules.NOT_APPROX}) == "not ~2 at R = 4"


def test_controls_decide_generic_versus_zero_sum():
    grpo = {"mean": 2.0, "ci_low": 1.8, "ci_high": 2.2, "n": 6}
    near = {"mean": 2.1, "ci_low": 1.9, "ci_high": 2.3, "n": 6}
    high = {"mean": 5.0, "ci_low": 4.5, "ci_high": 5.5, "n": 6}
    assert rules.attribution(grpo, {"gaussian": near, "ones": near, "rewards": near}) == rules.GENERIC
    assert rules.attribution(grpo, {"gaussian": high, "ones": high, "rewards": high,
                                    "gaussian_centred": near}) == rules.ZERO_SUM_EFFECT
    assert rules.attribution(grpo, {"gaussian": high, "ones": near}) == rules.MIXED
    # raw binary rewards zero failed rollouts' rows: shown, never part of the decision
    low = {"mean": 1.1, "ci_low": 1.0, "ci_high": 1.2, "n": 6}
    assert rules.attribution(grpo, {"gaussian": near, "ones": near, "rewards": low}) == rules.GENERIC
    assert "rewards" in rules.SHOWN_CONTROLS and "rewards" not in rules.NON_ZERO_SUM_CONTROLS
    assert rules.attribution(grpo, {}) == rules.NO_CONTROLS
    assert rules.combine_attributions([rules.GENERIC, rules.GENERIC]) == rules.GENERIC
    assert rules.combine_attributions([rules.GENERIC, rules.MIXED]) == rules.MIXED


def test_simulated_fall_makes_a_positive_verdict_inconclusive():
    assert rules.trend(0.1, 0.02) == "rises" and rules.trend(-0.1, 0.02) == "falls" and rules.trend(0.01, 0.02) == "flat"
    confirmed = rules.theorem_verdict([D()], [T()])
    assert rules.with_simulation(confirmed, {"2": "rises", "4": "falls"}).verdict is Verdict.INCONCLUSIVE
    assert rules.with_simulation(rules.theorem_verdict([D()], [T()]), {"2": "rises"}).verdict is Verdict.CONFIRMED


def test_training_trend_compares_the_first_and_last_quarter_of_a_real_run():
    rising = [0.0, 0.25, 0.0, 0.25, 0.25, 0.5, 0.25, 0.5, 0.75, 0.5, 0.75, 1.0, 0.75, 1.0, 0.75, 1.0]
    t = ledger.training_trend(rising)
    assert t["window"] == 4 and t["first"] == pytest.approx(0.125) and t["last"] == pytest.approx(0.875)
    assert t["change"] == pytest.approx(0.75) and t["trend"] == "rises"
    assert ledger.training_trend(rising[::-1])["trend"] == "falls"
    assert ledger.training_trend([0.5, 0.25, 0.5, 0.25] * 4)["trend"] == "flat"
    # steps without a value (every group degenerate: no sparsity) are skipped, not read as 0
    assert ledger.training_trend([None, 0.2, None, 0.2, 0.2, 0.2])["first"] == pytest.approx(0.2)
    assert ledger.training_trend([None, None])["first"] is None
    assert ledger.training_trend([0.1, 0.9])["trend"] == "flat"  # one step per window: no standard error


def test_a_training_run_is_summarised_by_its_trends(tmp_path):
    steps = [{"step": s, "mean_reward": 0.1 + 0.01 * s, "zero_advantage_group_fraction": 0.5,
              "sparsity": None if s == 0 else {"exact_zero": 0.0, "le_1e-06_max": 0.01 * s}} for s in range(20)]
    run = make_run(tmp_path / "trained", SMOL, task="arith", train=steps)
    data = build(tmp_path, [run])
    entry = by_key(data)["C2"]["sparsity"]["runs"][0]
    assert entry["steps"] == 20 and entry["note"] == ""
    assert entry["series"]["mean reward"]["trend"] == "rises"
    assert entry["series"]["coordinates le_1e-06_max"]["trend"] == "rises"
    assert entry["series"]["zero-advantage group fraction"]["trend"] == "flat"
    md = ledger.markdown(data)
    assert "Run trained: 20 GRPO training steps; mean of the first and of the last quarter" in md
    assert "mean reward 0.12 -> 0.27 (first/last 5; " in md
    assert "coordinates le_1e-06_max 0.025 -> 0.175 (first/last 4; " in md  # step 0 has no sparsity: 19 values
    assert ledger.TRAINING_RUNS_NOTE in md
    short = build(tmp_path / "short", [make_run(tmp_path / "short_run", SMOL, task="arith", train=steps[:3])])
    assert by_key(short)["C2"]["sparsity"]["runs"][0]["note"] == "too few steps for a trend"


def test_update_sparsity_of_a_trl_run_is_the_third_meaning_of_sparsity(tmp_path):
    """Parameters unchanged since the start (model dtype and bf16) and the rank of W - W_start, as the TRL
    callback records them; absent from a run that did not measure them (the hand-written loop's records)."""
    steps = [{"step": s, "mean_reward": 0.5, "zero_advantage_group_fraction": 0.5, "sparsity": None,
              "update_unchanged": {"step": {"model": 0.1, "bf16": 0.99},
                                   "since_start": {"model": 1.0 - 0.05 * s, "bf16": 1.0 - 0.01 * s}},
              "delta_rank_fraction": {"median": 1.0, "q25": 1.0, "q75": 1.0} if s % 5 == 0 else None}
             for s in range(20)]
    data = build(tmp_path, [make_run(tmp_path / "trl", SMOL, task="arith", train=steps)])
    series = by_key(data)["C2"]["sparsity"]["runs"][0]["series"]
    bf16 = series["parameters unchanged since the start (bf16)"]
    assert bf16["first"] == pytest.approx(0.98) and bf16["last"] == pytest.approx(0.83) and bf16["trend"] == "falls"
    assert series["parameters unchanged since the start (model dtype)"]["trend"] == "falls"
    assert series["rank of W - W_start over full rank (median over layers)"]["first"] == 1.0
    plain = build(tmp_path / "plain", [make_run(tmp_path / "loop", SMOL, task="arith", train=[
        {k: v for k, v in r.items() if k not in ("update_unchanged", "delta_rank_fraction")} for r in steps])])
    assert not any(name.startswith(("parameters", "rank of")) for name in
                   by_key(plain)["C2"]["sparsity"]["runs"][0]["series"])


# -- JUnit -----------------------------------------------------------------------------------------
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="6">
<testcase classname="tests.test_properties" name="test_d1_a" time="0.1"/>
<testcase classname="tests.test_properties" name="test_d1_b[2]" time="0.1"/>
<testcase classname="tests.test_properties" name="test_d1_b[4]" time="0.1"><failure message="assert 1 == 2">trace</failure></testcase>
<testcase classname="tests.test_oracle" name="test_c" time="0.1"><skipped type="pytest.skip" message="no trl">skip</skipped></testcase>
<testcase classname="tests.test_oracle" name="test_e" time="0.1"/>
<testcase classname="tests.test_oracle" name="test_e" time="0.1"><error message="teardown boom">x</error></testcase>
<testcase classname="tests.sub.test_k.TestGroup" name="test_m" time="0.1"/>
<testcase classname="tests.test_derivations" name="test_derivation_is_proved[d4_zero_sum.advantages_sum_to_zero]" time="1"/>
</testsuite></testsuites>
"""


def test_junit_parser_on_a_crafted_report(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    out = junit.parse(path)
    assert out["tests/test_properties.py::test_d1_a"] == ("passed", "")
    assert out["tests/test_properties.py::test_d1_b[4]"] == ("failed", "assert 1 == 2")
    assert out["tests/test_oracle.py::test_c"][0] == "skipped"
    assert out["tests/test_oracle.py::test_e"] == ("error", "teardown boom")  # the worst of two reports
    assert out["tests/sub/test_k.py::TestGroup::test_m"] == ("passed", "")
    ev = {e.selector: e for e in junit.evidence(
        ["tests/test_properties.py::test_d1_a", "tests/test_properties.py::test_d1_b", "tests/test_oracle.py::test_c",
         "tests/test_oracle.py::test_gone", "tests/test_derivations.py::test_derivation_is_proved[d4_zero_sum."
         "advantages_sum_to_zero]", "tests/sub/test_k.py::TestGroup"], out)}
    assert ev["tests/test_properties.py::test_d1_a"].outcome == "passed"
    assert ev["tests/test_properties.py::test_d1_b"].outcome == "failed"
    assert len(ev["tests/test_properties.py::test_d1_b"].cases) == 2
    assert ev["tests/test_oracle.py::test_c"].outcome == "skipped"
    assert ev["tests/test_oracle.py::test_gone"].outcome == "missing"
    assert ev["tests/sub/test_k.py::TestGroup"].outcome == "passed"
    assert ev["tests/test_derivations.py::test_derivation_is_proved[d4_zero_sum.advantages_sum_to_zero]"].outcome \
        == "passed"


def test_junit_parser_rejects_garbage(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<testsuites><testcase")
    with pytest.raises(junit.JUnitError, match="bad.xml"):
        junit.parse(bad)


def test_mapped_tests_exist_in_the_suite():
    """Every test a claim cites exists (a renamed test would otherwise only show as "missing")."""
    root = Path(__file__).resolve().parents[1]
    selectors = sorted({s for c in claims.CLAIMS for s in c.tests})
    present, absent = junit.existing(selectors, root)
    assert not absent, absent


# -- synthetic inputs ------------------------------------------------------------------------------
def infos_for_all_claims(status=Status.PROVED) -> dict[str, ledger.DerivationInfo]:
    names = {c.name for claim in claims.CLAIMS for c in claim.cited + claim.strongest_cited}
    return {n: ledger.DerivationInfo(n, "D9", "d9_fake", status, "symbolic", f"Doc of {n} with $x_1$.",
                                     ("$x > 0$",), "x = x") for n in sorted(names)}


def passing_outcomes(infos) -> dict[str, tuple[str, str]]:
    return {s: ("passed", "") for s in ledger.all_selectors(infos)}


def write_png(path: Path) -> None:
    """A valid 1x1 grey PNG, written without matplotlib."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"\x00\x80"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def make_run(folder: Path, model: dict, task="gsm8k", values=None, plot=False, train=None) -> Path:
    """config.json and summary.json in the formats of grpo_verify.empirical (values: {R: mean};
    train: the per-step training records)."""
    values = values or {2: 1.99, 4: 3.4, 8: 6.1}
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "options": {"task": task, "group_sizes": [2, 4, 8], "arith_digits": 1, "arith_ops": "+-*"},
        "model": model, "device": "cpu", "cuda": None, "platform": "test-os", "torch_threads": 1,
        "command": "python -m grpo_verify.empirical ..."}))
    rows = []
    for R, mean in values.items():
        for matrix, cond in (("G", "-"), ("centred", "-"), ("weighted", "grpo"), ("weighted", "gaussian"),
                             ("weighted", "ones"), ("weighted", "rewards"), ("weighted", "gaussian_centred"),
                             ("layers", "grpo"), ("layer_gram", "-")):
            for metric in METRICS:
                rows.append({"R": R, "matrix": matrix, "condition": cond, "metric": metric, "n": 6, "mean": mean,
                             "median": mean, "ci_low": mean - 0.1, "ci_high": mean + 0.1})
    counts = {str(R): {"items": 6, "degenerate": 1, "all_zero_reward": 1, "all_one_reward": 0, "mean_reward": 0.4}
              for R in values}
    (folder / "summary.json").write_text(json.dumps({"rows": rows, "counts": counts, "train": train or [],
                                                     "notes": {"ci": "95% percentile bootstrap over prompts"}}))
    if plot:
        write_png(folder / "effective_rank_vs_R.png")
    return folder


SMOL = {"kind": "gguf", "id": "SmolLM2-135M-Instruct.Q4_1.gguf", "parameters": 134515008, "sha256": "ab" * 32}
NEMO_RANDOM = {"kind": "random-weights", "spec": "nemotron-mini-4b-random", "parameters": 4_190_000_000,
               "id": "Nemotron-Mini-4B architecture, RANDOM WEIGHTS (not the checkpoint)"}
NEMO = {"kind": "hub", "spec": "nemotron-mini-4b", "id": "nvidia/Nemotron-Mini-4B-Instruct",
        "parameters": 4_190_000_000, "commit": "abc123"}


def build(tmp_path, run_dirs=(), outcomes="pass", status=Status.PROVED):
    infos = infos_for_all_claims(status)
    out = passing_outcomes(infos) if outcomes == "pass" else outcomes
    loaded = [runs.load_run(d) for d in run_dirs]
    return ledger.build(infos, out, loaded, None, tmp_path / "out", test_source="synthetic")


def by_key(data):
    return {c["key"]: c for c in data["claims"]}


def test_verdicts_from_synthetic_evidence(tmp_path):
    data = by_key(build(tmp_path))
    # the regime rule for C0 too: GRPO is a policy-gradient method up to a positive factor for binary rewards only
    assert data["C0"]["verdict"] == Verdict.REFUTED.value
    assert any("three_reward" in x for x in data["C0"]["counterexamples"])
    assert data["C1"]["verdict"] == Verdict.DEFINITIONAL.value  # true by the estimator's definition
    # true only once p > 1/2: refuted as worded by the proved fall below 1/2, its restricted form proved
    assert data["C2"]["verdict"] == Verdict.REFUTED.value
    assert any("below_half" in x for x in data["C2"]["counterexamples"])
    assert data["C4"]["verdict"] == Verdict.REFUTED.value
    # about the paper's unpublished derivations: our theorems neither confirm nor refute them
    for key in ("C5", "C6"):
        assert data[key]["verdict"] == Verdict.NOT_ASSESSABLE.value
        assert data[key]["strongest"]["reasons"][0].startswith("our reconstruction")
    # D10's chain is a model, not the claim's setting: it contradicts the claim judged by one sample's SNR at a fixed
    # learning rate (plain SGD) and bears it out trained with Adam or per-step normalisation: undecided, never refuted
    assert data["C7"]["verdict"] == Verdict.INCONCLUSIVE.value
    assert "plain SGD" in data["C7"]["reasons"][0] and "Adam" in data["C7"]["reasons"][0]
    assert next(r for r in ledger.summary_rows({"claims": list(data.values())}) if r[0] == "C7")[3] == \
        data["C7"]["reasons"][0]  # the summary explains an undecided claim by both sides, not by one counterexample
    assert [c for c in data] == ["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "F1"]
    assert all(c["strongest"]["standing"] == Standing.PROVED.value for c in data.values())
    assert all(c["evidence"].startswith("proved: ") for c in data.values())
    assert any("rank_four" in x for x in data["C4"]["counterexamples"])
    assert data["C3"]["verdict"] == Verdict.NOT_MEASURED.value  # no empirical run at all
    assert data["C4"]["attribution"]["runs"] == []
    assert data["F1"]["verdict"] == Verdict.CONFIRMED.value


def test_one_failing_test_in_the_run_blocks_confirmation(tmp_path):
    infos = infos_for_all_claims()
    outcomes = passing_outcomes(infos)
    c1 = next(c for c in claims.CLAIMS if c.key == "C1")
    outcomes[c1.tests[0]] = ("failed", "boom")
    data = by_key(ledger.build(infos, outcomes, [], None, tmp_path, test_source="synthetic"))
    assert data["C1"]["verdict"] == Verdict.INCONCLUSIVE.value
    assert any("failed" in r for r in data["C1"]["reasons"])
    assert data["C1"]["strongest"]["standing"] == Standing.NOT_ESTABLISHED.value
    assert data["F1"]["verdict"] == Verdict.CONFIRMED.value  # the failing test is not one of F1's
    skipped = by_key(ledger.build(infos, None, [], None, tmp_path, test_source="not run"))
    assert all(c["verdict"] not in (Verdict.CONFIRMED.value, Verdict.DEFINITIONAL.value) for c in skipped.values())
    assert all(c["tests"] == "not run" for c in skipped.values())
    missing = by_key(ledger.build(infos, {}, [], None, tmp_path, test_source="empty"))
    assert all(c["verdict"] in (Verdict.INCONCLUSIVE.value, Verdict.NOT_MEASURED.value) for k, c in missing.items()
               if k not in ("C5", "C6"))
    assert all(missing[k]["verdict"] == Verdict.NOT_ASSESSABLE.value for k in ("C5", "C6"))  # whatever the evidence


def test_rows_never_claim_nemotron_for_another_model(tmp_path):
    dirs = [make_run(tmp_path / "smol_gsm8k", SMOL, values={2: 2.0, 4: 2.0, 8: 2.0}),
            make_run(tmp_path / "nemo_random", NEMO_RANDOM, values={2: 2.0, 4: 2.0, 8: 2.0}),
            make_run(tmp_path / "nemo_arith", NEMO, task="arith", values={2: 2.0, 4: 2.0, 8: 2.0})]
    data = build(tmp_path, dirs)
    c3 = by_key(data)["C3"]
    assert c3["verdict"] == Verdict.NOT_MEASURED.value  # even though every run shows ~2
    assert c3["rank"]["paper_runs"] == []
    assert all(row["paper_setting"] == ledger.NOT_ON_PAPER_MODEL for row in c3["rank"]["rows"])
    assert "SmolLM2-135M" in c3["rank"]["measured_instead"] and "RANDOM WEIGHTS" in c3["rank"]["measured_instead"]
    assert all(not r["paper_setting"] for r in data["runs"])
    md = ledger.markdown(data)
    assert "not yet measured on Nemotron-4B" in md


def test_a_real_nemotron_gsm8k_run_decides_the_rank_claim(tmp_path):
    confirm = by_key(build(tmp_path / "a", [make_run(tmp_path / "n1", NEMO, values={2: 2.0, 4: 2.1, 8: 1.9})]))
    assert confirm["C3"]["verdict"] == Verdict.CONFIRMED.value
    refute = by_key(build(tmp_path / "b", [make_run(tmp_path / "n2", NEMO, values={2: 2.0, 4: 3.2, 8: 5.0})]))
    assert refute["C3"]["verdict"] == Verdict.REFUTED.value
    assert "R = 4" in refute["C3"]["counterexamples"][0]
    # identical values under every condition: the controls say the rank is generic
    assert refute["C4"]["attribution"]["runs"][0]["overall"] == rules.GENERIC


def test_bad_run_inputs_name_the_file(tmp_path):
    with pytest.raises(runs.InputError, match="no such run directory"):
        runs.load_run(tmp_path / "nope")
    run = make_run(tmp_path / "r", SMOL)
    (run / "summary.json").write_text('{"rows": [{"R": 2}], "counts": {}}')
    with pytest.raises(runs.InputError, match=r"summary\.json: malformed summary row 0"):
        runs.load_run(run)
    (run / "summary.json").write_text("{not json")
    with pytest.raises(runs.InputError, match=r"summary\.json: malformed JSON"):
        runs.load_run(run)
    (run / "summary.json").unlink()
    with pytest.raises(runs.InputError, match="neither summary.json nor results.jsonl"):
        runs.load_run(run)
    bad = tmp_path / "syn.json"
    bad.write_text('{"per_R": {"2": {}}}')
    with pytest.raises(runs.InputError, match="syn.json: malformed synthetic"):
        runs.load_synthetic(bad)


def test_a_run_in_progress_is_summarised_from_results_jsonl_and_marked_partial(tmp_path):
    run = make_run(tmp_path / "r", SMOL)
    (run / "summary.json").unlink()
    cfg = json.loads((run / "config.json").read_text())
    cfg["options"].update(bootstrap=10, confidence=0.95, seed=0)
    (run / "config.json").write_text(json.dumps(cfg))
    spectrum = {"metrics": {m: 1.5 for m in METRICS}}
    cond = {"zero_gradient": False, "gradient_norm": 1.0, "weighted": spectrum}
    rec = {"prompt": 0, "R": 2, "rewards": [1.0, 0.0], "measure": {
        "degenerate": False, "G": spectrum, "centred": spectrum, "layer_gram": {m: {"median": 1.5} for m in METRICS},
        "conditions": {"grpo": cond, "gaussian": cond}}}
    (run / "results.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps({**rec, "prompt": 1}) + "\n")
    loaded = runs.load_run(run)
    assert loaded.partial and loaded.items == 2
    assert loaded.row(2, "weighted", "grpo", "effective_rank")["mean"] == pytest.approx(1.5)


# -- the document ----------------------------------------------------------------------------------
def test_markdown_and_latex_contain_every_claim_quoted(tmp_path):
    data = build(tmp_path, [make_run(tmp_path / "smol", SMOL, plot=True)])
    md, tex = ledger.markdown(data), ledger.latex_document(data)
    for claim in claims.CLAIMS:
        if claim.quote:
            assert claim.quote in md
            assert ledger.tex(claim.quote) in tex
    assert "arXiv:2606.29238" in md and "2606.29238" in tex
    assert f"![{ledger.figure_caption('../smol/effective_rank_vs_R.png')}](../smol/effective_rank_vs_R.png)" in md
    assert r"\includegraphics" in tex and "effective_rank_vs_R.png" in tex
    assert "|mean - 2| <= 0.5" in md


@pytest.mark.skipif(PDFLATEX is None and not os.environ.get("CI"), reason="pdflatex is not installed")
def test_document_compiles_with_pdflatex(tmp_path):
    data = build(tmp_path, [make_run(tmp_path / "smol", SMOL, plot=True),
                            make_run(tmp_path / "nemo_random", NEMO_RANDOM)])
    out = tmp_path / "out"
    out.mkdir()
    (out / "ledger.tex").write_text(ledger.latex_document(data))
    with cli._cwd(out):
        compile_pdf(Path("ledger.tex"), "pdflatex")
    assert (out / "ledger.pdf").read_bytes().startswith(b"%PDF")


# -- reproducibility of the committed ledger --------------------------------------------------------
REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "docs" / "ledger"


def _floats(value):
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _floats(v)
    elif isinstance(value, list):
        for v in value:
            yield from _floats(v)


def test_numbers_are_rounded_to_fixed_significant_digits():
    assert ledger.rounded(0.70361236569231) == ledger.rounded(0.7036123656923099) == 0.703612
    assert ledger.rounded(4.7017469755767026e-09) == ledger.rounded(4.701746975576702e-09) == 4.70175e-09
    assert ledger.rounded(0.0) == 0.0 and ledger.rounded(-2.5) == -2.5
    assert ledger.rounded_numbers({"a": [1, True, 0.1 + 0.2, (2.0000001234,)], "b": "0.30000000000000004"}) == \
        {"a": [1, True, 0.3, [2.0]], "b": "0.30000000000000004"}


def test_the_readme_claims_table_matches_the_committed_ledger():
    root = Path(__file__).resolve().parents[1]
    committed = json.loads((root / "docs" / "ledger" / "ledger.json").read_text())
    readme = [line for line in (root / "README.md").read_text().splitlines()
              if re.match(r"^\| (C[0-7]|F1) \| ", line)]
    expected = ledger.readme_rows(committed)
    assert readme[:len(expected)] == expected  # the summary table comes first, then the table of what is proved


def test_the_committed_ledger_numbers_are_regenerated_from_the_committed_runs():
    """The numeric parts of docs/ledger/ledger.json (runs, rank table, controls, sparsity), rebuilt from
    the committed runs it names, are the committed strings; every float in it is already rounded."""
    committed = json.loads((COMMITTED / "ledger.json").read_text())
    assert all(x == ledger.rounded(x) for x in _floats(committed))
    loaded = [runs.load_run(COMMITTED / r["path"]) for r in committed["runs"]]
    sparsity = next(c["sparsity"] for c in committed["claims"] if "sparsity" in c)
    synthetic = runs.load_synthetic(COMMITTED / sparsity["synthetic"]["path"]) if sparsity["synthetic"] else None
    data = ledger.build(infos_for_all_claims(), None, loaded, synthetic, COMMITTED, test_source="not run")
    dump = lambda x: json.dumps(x, indent=2)  # noqa: E731
    assert dump(data["runs"]) == dump(committed["runs"])
    for mine, theirs in zip(data["claims"], committed["claims"]):
        for part in ("rank", "attribution", "sparsity"):
            assert dump(mine.get(part)) == dump(theirs.get(part)), (theirs["key"], part)


# -- the command line ------------------------------------------------------------------------------


def test_help(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--empirical", "--out", "--pdf", "--skip-tests", "--junit"):
        assert option in out


def test_cli_errors_name_the_input_and_write_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["--empirical", str(tmp_path / "missing"), "--out", str(out), "--skip-tests"]) == 2
    assert "missing: no such run directory" in capsys.readouterr().err
    run = make_run(tmp_path / "r", SMOL)
    (run / "summary.json").write_text("[1, 2]")
    assert cli.main(["--empirical", str(run), "--out", str(out), "--skip-tests"]) == 2
    assert "summary.json" in capsys.readouterr().err
    bad_junit = tmp_path / "j.xml"
    bad_junit.write_text("garbage")
    assert cli.main(["--junit", str(bad_junit), "--out", str(out)]) == 2
    assert "j.xml" in capsys.readouterr().err
    assert cli.main(["--pdf", "--engine", "no-such-latex-engine", "--out", str(out)]) == 2
    assert "no-such-latex-engine" in capsys.readouterr().err
    assert not out.exists()
    afile = tmp_path / "file"
    afile.write_text("x")
    assert cli.main(["--out", str(afile), "--skip-tests"]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_skip_tests_and_junit_are_exclusive(tmp_path):
    with pytest.raises(SystemExit) as info:
        cli.main(["--skip-tests", "--junit", str(tmp_path / "j.xml")])
    assert info.value.code == 2


def test_cli_end_to_end_with_a_junit_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "check_all", one_result_catalogue)
    junit_file = tmp_path / "junit.xml"
    junit_file.write_text(JUNIT)
    syn = tmp_path / "syn" / "summary.json"
    syn.parent.mkdir()
    part = lambda m: {"mean": m, "se": 0.01}  # noqa: E731
    syn.write_text(json.dumps({"config": {"policy": "tabular", "steps": 5}, "per_R": {
        "2": {"exact_zero_frac": {"start": part(0.7), "end": part(0.8), "change": part(0.1)}}}}))
    out = tmp_path / "ledger"
    code = cli.main(["--empirical", str(make_run(tmp_path / "smol", SMOL)), "--synthetic", str(syn),
                     "--junit", str(junit_file), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["ledger.json", "ledger.md", "ledger.tex"]
    data = json.loads((out / "ledger.json").read_text())
    verdicts = {c["key"]: c["verdict"] for c in data["claims"]}
    # the crafted report holds almost none of the mapped tests: nothing may be confirmed
    assert Verdict.CONFIRMED.value not in verdicts.values()
    assert all(c["strongest"]["standing"] == Standing.NOT_ESTABLISHED.value for c in data["claims"])
    assert verdicts["C3"] == Verdict.NOT_MEASURED.value
    err = capsys.readouterr().err
    assert "C1: inconclusive" in err and "wrote" in err


def test_the_evidence_line_counts_results_proved_for_a_range_apart():
    entry = {"derivations": [{"name": "a", "family": "D9", "status": "proved"}],
             "strongest": {"derivations": [{"name": "a", "family": "D9", "status": "proved"},
                                           {"name": "b", "family": "D9", "status": "proved for a range"},
                                           {"name": "c", "family": "D5", "status": "unproved"}]},
             "tests": [{"outcome": "passed"}, {"outcome": "failed"}], "measured": ""}
    assert ledger.evidence_summary(entry) == ("proved: 1/3 cited results, 1 for a range (D9), 0 of them checked twice "
                                              "(our kernel and Coq); tests: 1/2 passed; measured: -")


# -- the checker of each result: our kernel, Coq, or both -------------------------------------------
def test_a_coq_proof_counts_only_when_this_build_checked_it():
    from grpo_verify.report.rules import Checker, checked_by

    assert checked_by(Status.PROVED, "symbolic", (), True, "").checker is Checker.OURS
    unchecked = checked_by(Status.PROVED, "symbolic", ("D4.t",), False, "tests/test_coq.py: skipped")
    assert unchecked.checker is Checker.OURS and "not checked" in unchecked.note and "skipped" in unchecked.note
    assert checked_by(Status.PROVED, "symbolic", ("D4.t",), True, "").checker is Checker.BOTH
    # Coq's proof for every R is the one that counts where our kernel has a range, but only when checked
    ranged = checked_by(Status.PROVED_FOR_RANGE, "R = 2..16", ("D5.c",), True, "")
    assert (ranged.status, ranged.scope, ranged.checker) == (Status.PROVED, "symbolic", Checker.COQ)
    assert checked_by(Status.PROVED_FOR_RANGE, "R = 2..16", ("D5.c",), False, "x").status is Status.PROVED_FOR_RANGE
    # a refutation is never outweighed: the two checkers disagree, and the result stays refuted
    clash = checked_by(Status.REFUTED, "symbolic", ("D4.t",), True, "")
    assert (clash.status, clash.checker) == (Status.REFUTED, Checker.DISAGREE)


def test_the_ledger_names_the_checker_of_each_cited_result(tmp_path):
    infos = infos_for_all_claims()
    first = sorted(infos)[0]
    infos[first] = dataclasses.replace(infos[first], coq=("D9_fake.first",))
    outcomes = passing_outcomes(infos)
    assert ledger.COQ_TEST in outcomes  # a result with a Coq proof puts the Coq checks among the selected tests
    data = ledger.build(infos, outcomes, [], None, tmp_path, test_source="synthetic")
    entries = [d for c in data["claims"] for d in c["derivations"] + c["strongest"]["derivations"]]
    assert {d["checker"] for d in entries if d["name"] == first} == {"our kernel and Coq"}
    assert {d["checker"] for d in entries if d["name"] != first} == {"our kernel"}
    citing = [c for c in data["claims"] if any(d["name"] == first for d in c["strongest"]["derivations"])]
    assert citing and all("1 of" in c["strongest"]["checkers"] for c in citing)
    assert "checked twice" in ledger.markdown(data) and "checker: our kernel and Coq" in ledger.markdown(data)
    # the Coq checks failed in this build: the result is not called checked twice, and is not downgraded
    outcomes[ledger.COQ_TEST] = ("failed", "D4_zero_sum.v does not compile")
    failed = ledger.build(infos, outcomes, [], None, tmp_path, test_source="synthetic")
    entries = [d for c in failed["claims"] for d in c["derivations"] + c["strongest"]["derivations"]]
    assert {d["checker"] for d in entries} == {"our kernel"} and {d["status"] for d in entries} == {"proved"}
    assert "does not compile" in failed["coq"]
    assert [c["verdict"] for c in failed["claims"]] == [c["verdict"] for c in data["claims"]]


def test_an_instance_result_never_supports_a_statement_about_every_value():
    """A supporting result with the scope 'instance (R = 4)' makes the wording inconclusive and the strongest form
    'proved for the listed values only'; cited as an example (WITNESS) it counts at its instance."""
    general, instance = D(name="general"), D(scope="instance (R = 4)", name="at_R4")
    decision = rules.theorem_verdict([general, instance], [T()])
    assert decision.verdict is Verdict.INCONCLUSIVE and "instance (R = 4)" in decision.reasons[0]
    form = rules.strongest_form_standing([general, instance], [T()])
    assert form.standing is Standing.PROVED_FOR_VALUES and "at_R4" in form.reasons[0]
    example = D(Role.WITNESS, scope="instance (R = 4)", name="at_R4")
    assert rules.theorem_verdict([general, example], [T()]).verdict is Verdict.CONFIRMED
    assert rules.strongest_form_standing([general, example], [T()]).standing is Standing.PROVED
    assert "1 example(s)" in rules.strongest_form_standing([general, example], [T()]).reasons[0]


def test_examples_alone_prove_nothing_about_every_value():
    example = D(Role.WITNESS, scope="instance (R = 4)", name="at_R4")
    assert rules.theorem_verdict([example], [T()]).verdict is Verdict.INCONCLUSIVE
    assert rules.strongest_form_standing([example, D(Role.CONTEXT, name="c")],
                                         [T()]).standing is Standing.NOT_ESTABLISHED
    assert rules.theorem_verdict([D(Role.WITNESS, Status.UNPROVED, name="x"), D()],
                                 [T()]).verdict is Verdict.INCONCLUSIVE  # an example must be proved too


def test_an_example_or_counterexample_states_what_it_shows():
    from grpo_verify.report.claims import Cited

    for role in (Role.WITNESS, Role.REFUTES):
        with pytest.raises(ValueError, match="states what it shows"):
            Cited("r", role)
    Cited("r", Role.WITNESS, "rank 4 at R = 4")
