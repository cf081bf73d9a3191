"""Behaviours of the claims ledger that no other test pins down, each checked against an expectation
written out by hand here (never the code compared with itself); each test was shown to fail on a
plausible one-line bug in grpo_verify/report/ and to pass on the real code.

- the rank claim is decided at R = 2, 4, 8 exactly, not at any three group sizes;
- a test selector matches whole test names (a parameter id or a class member, never a longer name);
- a claim's evidence includes the derivation test of every result cited for its strongest form;
- the boundaries of the tolerance rule, of the trend rule and of the controls' comparisons.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpo_verify.proof import Status
from grpo_verify.report import claims, junit, ledger, rules, runs
from grpo_verify.report.rules import DerivationEvidence, Role, Standing, TestEvidence, Verdict

NEMO = {"kind": "hub", "spec": "nemotron-mini-4b", "id": "nvidia/Nemotron-Mini-4B-Instruct",
        "parameters": 4_190_000_000, "commit": "abc123"}
MATRICES = (("G", "-"), ("centred", "-"), ("weighted", "grpo"), ("weighted", "gaussian"), ("weighted", "ones"),
            ("weighted", "rewards"), ("weighted", "gaussian_centred"), ("layers", "grpo"), ("layer_gram", "-"))
METRICS = ("effective_rank", "stable_rank", "participation_ratio", "energy_rank_90", "energy_rank_99")
FAMILY_KEY = "d9_fake"


def derivation_selector(family_key: str, name: str) -> str:
    """The node id of a result's check, written out here (tests/test_derivations.py parametrises by
    "family_key.name")."""
    return f"tests/test_derivations.py::test_derivation_is_proved[{family_key}.{name}]"


def D(role=Role.SUPPORTS, status=Status.PROVED, scope="symbolic", name="r"):
    return DerivationEvidence(name, "D9", role, status, scope, "an extra assumption")


def T(outcome="passed", selector="tests/test_x.py::test_y"):
    return TestEvidence(selector, outcome, ((selector, outcome, ""),))


def row(mean, lo, hi, n=8):
    return {"mean": mean, "ci_low": lo, "ci_high": hi, "n": n}


def infos() -> dict[str, ledger.DerivationInfo]:
    names = {c.name for claim in claims.CLAIMS for c in claim.cited + claim.strongest_cited}
    return {n: ledger.DerivationInfo(n, "D9", FAMILY_KEY, Status.PROVED, "symbolic", f"Doc of {n}.", (), "x = x")
            for n in sorted(names)}


def all_passing(claim_list=claims.CLAIMS) -> dict[str, tuple[str, str]]:
    """Every test each claim names and every cited result's check, passed: built from the claims'
    own fields, not from ledger.test_selectors."""
    out = {}
    for claim in claim_list:
        for t in claim.tests:
            out[t] = ("passed", "")
        for c in claim.cited + claim.strongest_cited:
            out[derivation_selector(FAMILY_KEY, c.name)] = ("passed", "")
    out[ledger.COQ_TEST + "::test_compiles"] = ("passed", "")
    return out


def build(tmp_path, outcomes, run_dirs=()):
    loaded = [runs.load_run(d) for d in run_dirs]
    data = ledger.build(infos(), outcomes, loaded, None, tmp_path / "out", test_source="synthetic")
    return {c["key"]: c for c in data["claims"]}


def make_run(folder: Path, sizes, mean=2.0, model=NEMO) -> Path:
    """A finished run of python -m grpo_verify.empirical at group sizes ``sizes``, every row ``mean`` +- 0.1."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "options": {"task": "gsm8k", "group_sizes": list(sizes)}, "model": model, "device": "cpu", "cuda": None,
        "platform": "test", "torch_threads": 1, "command": "python -m grpo_verify.empirical ..."}))
    rows = [{"R": R, "matrix": m, "condition": c, "metric": metric, "n": 6, "mean": mean, "median": mean,
             "ci_low": mean - 0.1, "ci_high": mean + 0.1}
            for R in sizes for m, c in MATRICES for metric in METRICS]
    counts = {str(R): {"items": 6, "degenerate": 0, "all_zero_reward": 0, "all_one_reward": 0, "mean_reward": 0.5}
              for R in sizes}
    (folder / "summary.json").write_text(json.dumps({"rows": rows, "counts": counts, "train": []}))
    return folder


# -- 1. the rank claim is decided at R = 2, 4, 8 --------------------------------------------------
@pytest.mark.parametrize("sizes", [(2, 4, 16), (4, 8, 16), (2, 8, 16), (3, 5, 7), (2, 4, 6, 16)])
def test_the_rank_claim_needs_R_2_4_8_not_any_three_sizes(sizes):
    """Both readings ~2 at every measured R, but R = 2, 4, 8 were not all measured: the claim (about R = 2, 4,
    8) is not confirmed."""
    good = {R: row(2.0, 1.9, 2.1) for R in sizes}
    decision = rules.rank_claim_verdict(good, [T()], layer_rows=good)
    assert decision.verdict is Verdict.INCONCLUSIVE, (sizes, decision)


def test_the_rank_claim_is_confirmed_when_R_2_4_8_are_among_the_sizes():
    good = {R: row(2.0, 1.9, 2.1) for R in (2, 4, 8, 16)}
    assert rules.rank_claim_verdict(good, [T()], layer_rows=good).verdict is Verdict.CONFIRMED


def test_a_paper_setting_run_at_R_2_4_16_leaves_the_rank_claim_undecided(tmp_path):
    """End to end: a Nemotron-4B GSM8K run at R = 2, 4, 16, rank ~2 everywhere."""
    c3 = build(tmp_path, all_passing(), [make_run(tmp_path / "nemo_2_4_16", (2, 4, 16))])["C3"]
    assert c3["rank"]["paper_runs"] == ["nemo_2_4_16"]
    assert c3["verdict"] == Verdict.INCONCLUSIVE.value, c3["reasons"]
    ok = build(tmp_path / "b", all_passing(), [make_run(tmp_path / "nemo_2_4_8", (2, 4, 8))])["C3"]
    assert ok["verdict"] == Verdict.CONFIRMED.value, ok["reasons"]


# -- 2. a selector matches whole test names --------------------------------------------------------
SEL = "tests/test_t.py::test_a"


@pytest.mark.parametrize("nid, expected", [
    ("tests/test_t.py::test_a", True),
    ("tests/test_t.py::test_a[x]", True),          # a parametrised case of the selected function
    ("tests/test_t.py::test_a[1-2]", True),
    ("tests/test_t.py::test_ab", False),           # another function whose name starts with the selector's
    ("tests/test_t.py::test_a_b", False),
    ("tests/test_t.py::test_ab[x]", False),
    ("tests/test_t.py::test_a_b[x]", False),
    ("tests/test_t.pyx::test_a", False),
    ("tests/test_tt.py::test_a", False),
    ("other/tests/test_t.py::test_a", False),
])
def test_a_function_selector_matches_the_function_and_its_parameter_ids_only(nid, expected):
    assert junit.matches(SEL, nid) is expected


@pytest.mark.parametrize("selector, nid, expected", [
    ("tests/test_t.py::test_a[1]", "tests/test_t.py::test_a[1]", True),
    ("tests/test_t.py::test_a[1]", "tests/test_t.py::test_a[10]", False),   # another parameter id
    ("tests/test_t.py::test_a[1]", "tests/test_t.py::test_a[1-2]", False),
    ("tests/test_t.py::test_a[1]", "tests/test_t.py::test_a", False),
    ("tests/test_t.py::TestC", "tests/test_t.py::TestC::test_m", True),     # a class selects its methods
    ("tests/test_t.py::TestC", "tests/test_t.py::TestCD::test_m", False),
    ("tests/test_coq.py", "tests/test_coq.py::test_x[y]", True),            # a file selects its tests
    ("tests/test_coq.py", "tests/test_coq_extra.py::test_x", False),
])
def test_parameter_class_and_file_selectors_match_whole_names(selector, nid, expected):
    assert junit.matches(selector, nid) is expected


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
  <testcase classname="tests.test_t" name="test_ab" time="0.01"/>
  <testcase classname="tests.test_t" name="test_a_b[x]" time="0.01"/>
  <testcase classname="tests.test_t" name="test_c[1]" time="0.01"><failure message="boom">x</failure></testcase>
  <testcase classname="tests.test_t" name="test_c[10]" time="0.01"/>
  <testcase classname="tests.test_derivations" name="test_derivation_is_proved[d9_fake.r_extra]" time="0.01"/>
</testsuite></testsuites>
"""


def test_a_longer_test_name_in_the_junit_report_does_not_stand_in_for_a_missing_test(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    outcomes = junit.parse(path)
    ev = {e.selector: e for e in junit.evidence(
        ["tests/test_t.py::test_a", "tests/test_t.py::test_c[10]",
         derivation_selector(FAMILY_KEY, "r")], outcomes)}
    assert ev["tests/test_t.py::test_a"].outcome == "missing"
    assert ev["tests/test_t.py::test_a"].cases == ()
    assert ev[derivation_selector(FAMILY_KEY, "r")].outcome == "missing"
    # the passing case [10] is not the failing case [1], and [1] does not select [10]
    assert ev["tests/test_t.py::test_c[10]"].outcome == "passed"
    assert [c[0] for c in ev["tests/test_t.py::test_c[10]"].cases] == ["tests/test_t.py::test_c[10]"]


def test_a_claim_whose_test_is_missing_is_not_confirmed_by_a_test_with_a_longer_name(tmp_path):
    f1 = next(c for c in claims.CLAIMS if c.key == "F1")
    outcomes = all_passing()
    gone = f1.tests[0]
    del outcomes[gone]
    outcomes[gone + "_renamed"] = ("passed", "")  # tests/x.py::test_y_renamed is not tests/x.py::test_y
    outcomes[gone + "x[0]"] = ("passed", "")
    data = build(tmp_path, outcomes)
    assert data["F1"]["verdict"] == Verdict.INCONCLUSIVE.value
    assert any(gone in r and "missing" in r for r in data["F1"]["reasons"]), data["F1"]["reasons"]
    assert data["F1"]["strongest"]["standing"] == Standing.NOT_ESTABLISHED.value
    test = next(t for t in data["F1"]["tests"] if t["selector"] == gone)
    assert test["outcome"] == "missing" and test["cases"] == []


# -- 3. the strongest form's results are checked too ----------------------------------------------
def _strongest_only(claim):
    worded = {c.name for c in claim.cited}
    return [c.name for c in claim.strongest_cited if c.name not in worded]


@pytest.mark.parametrize("claim", [c for c in claims.CLAIMS if _strongest_only(c)], ids=lambda c: c.key)
def test_the_derivation_test_of_each_strongest_form_result_is_required(tmp_path, claim):
    """Drop the check of one result cited only for the strongest form (and let another result of the same
    family pass in its place): the strongest form is not established, and the claim is not confirmed."""
    name = _strongest_only(claim)[0]
    baseline = build(tmp_path / "base", all_passing())[claim.key]
    assert baseline["strongest"]["standing"] == Standing.PROVED.value
    for outcome in (None, "failed"):
        outcomes = all_passing()
        sel = derivation_selector(FAMILY_KEY, name)
        if outcome is None:
            del outcomes[sel]
        else:
            outcomes[sel] = (outcome, "the check failed")
        outcomes[derivation_selector(FAMILY_KEY, "some_other_result_of_the_family")] = ("passed", "")
        entry = build(tmp_path / str(outcome), outcomes)[claim.key]
        expected = "missing" if outcome is None else "failed"
        assert {t["selector"]: t["outcome"] for t in entry["tests"]}.get(sel) == expected, entry["tests"]
        assert entry["strongest"]["standing"] == Standing.NOT_ESTABLISHED.value
        assert any(sel in r for r in entry["strongest"]["reasons"]), entry["strongest"]["reasons"]
        assert entry["verdict"] not in (Verdict.CONFIRMED.value, Verdict.DEFINITIONAL.value)


def test_the_selectors_of_a_claim_are_its_tests_and_one_check_per_result_cited_at_either_level():
    info = infos()
    for claim in claims.CLAIMS:
        names = []
        for c in claim.cited + claim.strongest_cited:
            if c.name not in names:
                names.append(c.name)
        expected = list(claim.tests) + [derivation_selector(FAMILY_KEY, n) for n in names]
        assert ledger.test_selectors(claim, info) == expected, claim.key


# -- boundaries of the tolerance rule ("~ 2": |mean - 2| <= 0.5, CI overlapping [1.5, 2.5], n >= 3) ---------
@pytest.mark.parametrize("args, expected", [
    ((2.5, 2.4, 2.6, 8), rules.APPROX),        # |mean - 2| = 0.5 exactly: within the tolerance
    ((1.5, 1.4, 1.6, 8), rules.APPROX),
    ((2.6, 2.5, 2.7, 8), rules.UNDECIDED),     # CI touches 2.5: overlaps, mean outside
    ((2.6, 2.50001, 2.7, 8), rules.NOT_APPROX),
    ((1.4, 1.3, 1.5, 8), rules.UNDECIDED),     # CI touches 1.5 from below
    ((1.4, 1.3, 1.49999, 8), rules.NOT_APPROX),
    ((2.0, 1.9, 2.1, 3), rules.APPROX),        # n = MIN_GROUPS = 3 is enough
    ((2.0, 1.9, 2.1, 2), rules.TOO_FEW),
    ((float("nan"), 1.9, 2.1, 8), rules.TOO_FEW),
])
def test_approx_two_at_the_boundaries_of_the_tolerance(args, expected):
    assert rules.approx_two(*args) == expected


def test_series_status_is_approx_only_when_every_R_is_approx():
    assert rules.series_status({2: rules.APPROX, 4: rules.UNDECIDED, 8: rules.APPROX}) == rules.UNDECIDED
    assert rules.series_status({2: rules.APPROX, 4: rules.TOO_FEW}) == rules.UNDECIDED
    assert rules.series_status({2: rules.TOO_FEW, 4: rules.TOO_FEW}) == rules.TOO_FEW
    assert rules.series_status({}) == rules.TOO_FEW
    assert rules.series_status({8: rules.NOT_APPROX, 2: rules.NOT_APPROX, 4: rules.APPROX}) == "not ~2 at R = 2, 8"


def test_one_reading_too_few_at_an_R_keeps_the_rank_claim_undecided():
    good = {R: row(2.0, 1.9, 2.1) for R in (2, 4, 8)}
    few = {**good, 8: row(2.0, 1.9, 2.1, n=2)}
    assert rules.rank_claim_verdict(good, [T()], layer_rows=few).verdict is Verdict.INCONCLUSIVE
    assert rules.rank_claim_verdict(few, [T()], layer_rows=good).verdict is Verdict.INCONCLUSIVE


# -- trend: a rise is mean - 2 se > 0 (strict), a fall mean + 2 se < 0 -----------------------------------
@pytest.mark.parametrize("mean, se, expected", [
    (0.0, 0.0, "flat"),      # no change at all is not a rise
    (0.2, 0.1, "flat"),      # mean - 2 se = 0 exactly
    (-0.2, 0.1, "flat"),
    (0.2001, 0.1, "rises"),
    (-0.2001, 0.1, "falls"),
    (float("inf"), 0.1, "flat"),
])
def test_trend_boundaries(mean, se, expected):
    assert rules.trend(mean, se) == expected


def test_a_flat_simulation_leaves_a_confirmed_verdict_confirmed():
    confirmed = rules.theorem_verdict([D()], [T()])
    assert rules.with_simulation(confirmed, {"2": "flat", "4": "rises"}).verdict is Verdict.CONFIRMED
    inconclusive = rules.theorem_verdict([D(scope="R = 2..8")], [T()])
    assert rules.with_simulation(inconclusive, {"2": "falls"}).verdict is Verdict.INCONCLUSIVE


# -- controls: comparable / clearly higher at their boundaries ------------------------------------------
def test_controls_comparable_and_clearly_higher_at_the_boundaries():
    grpo = row(2.0, 1.8, 2.2)
    touching = row(2.5, 2.2, 2.8)      # its interval starts where GRPO's ends: comparable, not clearly higher
    assert rules.comparable(grpo, touching) and not rules.clearly_higher(grpo, touching)
    mean_inside = row(2.2, 2.2, 2.2)   # its mean on GRPO's upper bound
    assert rules.comparable(grpo, mean_inside)
    above = row(3.0, 2.21, 3.5)
    assert not rules.comparable(grpo, above) and rules.clearly_higher(grpo, above)
    below = row(1.0, 0.5, 1.79)
    assert not rules.comparable(grpo, below) and not rules.clearly_higher(grpo, below)


def test_attribution_needs_every_non_zero_sum_control_higher_for_a_zero_sum_effect():
    grpo = row(2.0, 1.8, 2.2)
    high, near = row(5.0, 4.5, 5.5), row(2.0, 1.9, 2.1)
    assert rules.attribution(grpo, {"gaussian": high, "ones": high, "gaussian_centred": near}) == \
        rules.ZERO_SUM_EFFECT
    # one non-zero-sum control comparable, the other higher: mixed, neither generic nor a zero-sum effect
    assert rules.attribution(grpo, {"gaussian": high, "ones": near, "gaussian_centred": near}) == rules.MIXED
    # every non-zero-sum control higher but the centred control higher too: mixed
    assert rules.attribution(grpo, {"gaussian": high, "ones": high, "gaussian_centred": high}) == rules.MIXED
    # no centred control measured: no zero-sum effect can be claimed
    assert rules.attribution(grpo, {"gaussian": high, "ones": high}) == rules.MIXED
    assert rules.attribution(grpo, {"gaussian_centred": near}) == rules.NO_CONTROLS


def test_combine_attributions_agrees_only_when_every_cell_agrees():
    z, g = rules.ZERO_SUM_EFFECT, rules.GENERIC
    assert rules.combine_attributions([z, z, rules.NO_CONTROLS]) == z
    assert rules.combine_attributions([z, g]) == rules.MIXED
    assert rules.combine_attributions([g, z, z]) == rules.MIXED
    assert rules.combine_attributions([rules.NO_CONTROLS]) == rules.NO_CONTROLS


# -- the training trend of a real run: windows of a quarter, their standard error ----------------------------
def test_training_trend_standard_error_from_both_windows():
    values = [1.0, 3.0, 0, 0, 0, 0, 5.0, 9.0]  # k = 2: first [1, 3], last [5, 9]
    t = ledger.training_trend(values)
    # variances (sample, n - 1): 2 and 8; se = sqrt((2 + 8) / 2)
    assert t["window"] == 2 and t["first"] == 2.0 and t["last"] == 7.0
    assert t["se"] == pytest.approx(5 ** 0.5, rel=1e-12) and t["change"] == 5.0
    assert t["trend"] == "rises"  # 5 - 2 sqrt(5) = 0.53 > 0


def test_a_run_with_exactly_the_minimum_steps_is_not_called_too_short(tmp_path):
    def section(n):
        steps = [{"step": s, "mean_reward": 0.5, "zero_advantage_group_fraction": 0.5, "sparsity": None}
                 for s in range(n)]
        folder = make_run(tmp_path / f"run{n}", (2, 4, 8), model={"kind": "gguf", "id": "small.gguf"})
        summary = json.loads((folder / "summary.json").read_text())
        summary["train"] = steps
        (folder / "summary.json").write_text(json.dumps(summary))
        return ledger.sparsity_section([runs.load_run(folder)], None, tmp_path)["runs"][0]
    twenty = section(20)
    assert twenty["note"] == "" and twenty["steps"] == 20
    assert section(19)["note"] == "too few steps for a trend"


# -- evidence line and the Coq gate -----------------------------------------------------------------------
def test_the_coq_proofs_count_only_when_every_coq_test_passed():
    ok = {"tests/test_coq.py::test_a": ("passed", ""), "tests/test_coq.py::test_b[x]": ("passed", "")}
    assert ledger.coq_check(ok) == (True, "tests/test_coq.py: 2 passed")
    one_skipped = {**ok, "tests/test_coq.py::test_c": ("skipped", "coqc not found")}
    checked, why = ledger.coq_check(one_skipped)
    assert checked is False and "skipped" in why and "coqc not found" in why
    assert ledger.coq_check({})[0] is False
    assert ledger.coq_check(None)[0] is False


def test_a_run_in_progress_is_summarised_over_every_finished_item(tmp_path):
    """runs.load_run on a run without summary.json counts every record of results.jsonl (n per row)."""
    from grpo_verify.empirical import store
    folder = tmp_path / "partial"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"options": {"task": "arith", "group_sizes": [2],
                                                                "bootstrap": 10, "controls": False},
                                                    "model": {"kind": "gguf", "id": "m.gguf"}}))
    for p, eff in enumerate((1.0, 2.0, 3.0)):
        metrics = {m: eff for m in ("effective_rank", "stable_rank", "participation_ratio", "energy_rank_90",
                                    "energy_rank_95", "energy_rank_99", "tolerance_rank")}
        spec = {"singular_values": [1.0, 0.5], "metrics": metrics}
        store.append_jsonl(folder / "results.jsonl", {
            "prompt": p, "R": 2, "rewards": [0.0, 1.0],
            "measure": {"degenerate": False, "G": spec, "centred": spec,
                        "layer_gram": {m: {"median": eff} for m in metrics},
                        "conditions": {"grpo": {"zero_gradient": False, "gradient_norm": 1.0, "weighted": spec}}}})
    run = runs.load_run(folder)
    assert run.partial and run.items == 3
    r = run.row(2, "weighted", "grpo", "effective_rank")
    assert r["n"] == 3 and r["mean"] == pytest.approx(2.0)
    assert run.summary["counts"]["2"]["items"] == 3


# -- no mapped test, and which run is the paper's ------------------------------------------------------
def test_a_claim_with_no_mapped_property_test_is_never_confirmed():
    decision = rules.theorem_verdict([D()], [])
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert decision.reasons == ["no property test is mapped to this claim"]
    assert rules.strongest_form_standing([D()], []).standing is Standing.NOT_ESTABLISHED


def test_the_paper_setting_column_shows_the_paper_run_not_the_first_run(tmp_path):
    """Runs given in the order: another model (rank 5 everywhere), then the paper's (rank 2 everywhere)."""
    other = make_run(tmp_path / "smol", (2, 4, 8), mean=5.0, model={"kind": "gguf", "id": "SmolLM2.gguf"})
    paper = make_run(tmp_path / "nemo", (2, 4, 8), mean=2.0)
    c3 = build(tmp_path, all_passing(), [other, paper])["C3"]
    assert c3["rank"]["paper_runs"] == ["nemo"]
    for r in c3["rank"]["rows"]:
        assert r["paper_setting"] == "~2 at R = 2, 4, 8", r
        assert [e["status"] for e in r["runs"]] == ["not ~2 at R = 2, 4, 8", "~2 at R = 2, 4, 8"]
    assert c3["verdict"] == Verdict.CONFIRMED.value
