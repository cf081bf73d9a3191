"""Assemble the ledger (a JSON-ready dict: evidence and verdicts per claim) and render it.

``build`` takes plain inputs (derivation infos, test outcomes, runs), so tests can feed synthetic ones;
``markdown`` and ``latex_document`` only format what ``build`` decided.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from grpo_verify import coq, latex
from grpo_verify.proof import Status

from . import junit, rules
from .claims import ARXIV, CLAIMS, DERIVATION_TEST, PAPER, Cited, Claim
from .rules import DerivationEvidence, Role, Verdict
from .runs import PAPER_MODEL, Run, Synthetic

RANK_MATRICES = (("G", "-", "$G$ (per-rollout gradients $g_i$ as rows)"),
                 ("centred", "-", "centred $G$, $(I - \\mathbf{1}\\mathbf{1}^T/R) G$"),
                 ("weighted", "grpo", "$\\operatorname{diag}(A) G$, GRPO advantages"),
                 ("layers", "grpo", "per-layer weight gradients $\\sum_i A_i \\partial l_i/\\partial W$ (median over 2-D weights)"),
                 ("layer_gram", "-", "$G$ restricted to one transformer block (median over blocks)"))
RANK_METRICS = (("effective_rank", "effective rank"), ("stable_rank", "stable rank"),
                ("participation_ratio", "participation ratio"), ("energy_rank_90", "energy rank (90%)"),
                ("energy_rank_99", "energy rank (99%)"))
ATTRIBUTION_METRICS = ("effective_rank", "stable_rank", "participation_ratio", "energy_rank_90")
CONTROL_LABELS = {"grpo": "GRPO", "gaussian": "N(0,1)", "gaussian_centred": "centred N(0,1)", "ones": "all-ones",
                  "rewards": "raw rewards"}
NOT_ON_PAPER_MODEL = f"not yet measured on {PAPER_MODEL}"


@dataclass(frozen=True)
class DerivationInfo:
    """What the ledger shows of one derivation result (from the catalogue and its check)."""

    name: str
    family: str  # "D7"
    family_key: str  # "d7_rank_structure"
    status: Status
    scope: str
    doc: str
    assumptions: tuple[str, ...] = ()
    statement: str = ""  # LaTeX of lhs relation rhs
    coq: tuple[str, ...] = ()  # the Coq theorems that prove it a second time ("D4_zero_sum.advantages_sum_to_zero")


def derivation_infos(families, reports, second_proofs: dict[str, list[str]] | None = None
                     ) -> dict[str, DerivationInfo]:
    """``second_proofs``: {result name: Coq theorems}, by default read from derivations/coq/ (the sources only;
    whether they compile is the business of tests/test_coq.py, whose outcome the ledger reads)."""
    second_proofs = coq.second_proofs() if second_proofs is None else second_proofs
    out = {}
    for f in families:
        for r in f.results:
            rep = reports[r.name]
            statement = (f"{latex.expression(r.lhs)} {latex.RELATION_LATEX[r.relation]} "
                         f"{latex.expression(r.rhs)}")
            out[r.name] = DerivationInfo(r.name, f.label, f.key, rep.status, rep.scope, r.doc,
                                         tuple(a.text for a in r.assumptions), statement,
                                         tuple(second_proofs.get(r.name, ())))
    return out


COQ_TEST = "tests/test_coq.py"  # the Coq build, its axiom checks and its statement-fidelity tests


def coq_check(outcomes: dict[str, tuple[str, str]] | None) -> tuple[bool, str]:
    """(checked, what happened): the Coq proofs count as checked in this build only if every test of
    tests/test_coq.py ran and passed."""
    if outcomes is None:
        return False, "tests not run (--skip-tests)"
    [t] = junit.evidence([COQ_TEST], outcomes)
    if t.outcome == "passed":
        return True, f"{COQ_TEST}: {len(t.cases)} passed"
    reason = next((m for _, o, m in t.cases if o != "passed" and m), "")
    return False, f"{COQ_TEST}: {t.outcome}" + (f" ({reason.splitlines()[0][:160]})" if reason else "")


def test_selectors(claim: Claim, infos: dict[str, DerivationInfo]) -> list[str]:
    """The claim's property tests and the check of every result cited at either level, once each."""
    names = dict.fromkeys(c.name for c in claim.cited + claim.strongest_cited if c.name in infos)
    return list(claim.tests) + [DERIVATION_TEST.format(family=infos[n].family_key, name=n) for n in names]


def cited_evidence(cited: Sequence[Cited], infos: dict[str, DerivationInfo], out_dir: Path,
                   source_root: Path | None, coq_checked: tuple[bool, str] = (False, "not run")
                   ) -> tuple[list[DerivationEvidence], list[dict]]:
    """The rules' evidence and the ledger's entries for results cited at one level; a name missing from
    the catalogue is evidence too: unproved. Each entry names its checker (rules.checked_by)."""
    evidence, entries = [], []
    for c in cited:
        info = infos.get(c.name)
        checked = rules.checked_by(info.status if info else Status.UNPROVED,
                                   info.scope if info else "not in the catalogue",
                                   info.coq if info else (), *coq_checked)
        status = checked.status
        ev = DerivationEvidence(c.name, info.family if info else "?", c.role, status, checked.scope, c.condition,
                                c.setting)
        evidence.append(ev)
        src = (_rel(source_root / "derivations" / f"{info.family_key}.py", out_dir)
               if info and source_root else "")
        entries.append({"name": c.name, "family": ev.family, "role": c.role.value, "status": status.value,
                        "scope": ev.scope, "condition": c.condition, "setting": c.setting,
                        "doc": info.doc if info else
                        "(no result of this name in the derivation catalogue)",
                        "assumptions": list(info.assumptions) if info else [],
                        "statement": info.statement if info else "", "source": src,
                        "checker": checked.checker.value, "checker_note": checked.note,
                        "coq": list(info.coq) if info else []})
    return evidence, entries


def measured_text(entry: dict, runs: Sequence[Run] = ()) -> str:
    """The measurements shown with a claim, named by what they ran on ("" if none)."""
    if "rank" in entry:
        sec = entry["rank"]
        if sec["paper_runs"]:
            return "paper setting: " + ", ".join(sec["paper_runs"])
        return "not on the paper's model; instead " + (_runs_by_model(runs) or "nothing")
    if "sparsity" in entry:
        sec = entry["sparsity"]
        parts = ([f"exact synthetic training ({sec['synthetic']['setting']})"] if sec["synthetic"] else [])
        parts += [f"{r['steps']} real GRPO steps ({r['id']})" for r in sec["runs"]]
        return "; ".join(parts)
    if "attribution" in entry:
        return "; ".join(f"controls on {r['id']}" for r in entry["attribution"]["runs"])
    return ""


def _runs_by_model(runs: Sequence[Run]) -> str:
    """"model on task (ids), ..." with the runs of one model and task named once."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for run in runs:
        if not run.is_paper_setting:
            grouped.setdefault((run.model_label, run.task_label), []).append(run.path.name)
    return "; ".join(f"{model} on {task} ({', '.join(ids)})" for (model, task), ids in grouped.items())


def evidence_summary(entry: dict) -> str:
    """What a claim's verdicts rest on, in one line: proved results (by family), tests, measurements."""
    cited = {d["name"]: d for d in entry["derivations"] + entry["strongest"]["derivations"]}
    proved = [d for d in cited.values() if d["status"] == Status.PROVED.value]
    ranged = [d for d in cited.values() if d["status"] == Status.PROVED_FOR_RANGE.value]
    families = ", ".join(sorted({d["family"] for d in proved + ranged}, key=lambda f: (len(f), f)))
    twice, coq_only = _checker_counts(cited.values())
    parts = [f"proved: {len(proved)}/{len(cited)} cited results" + (f", {len(ranged)} for a range" if ranged else "")
             + (f" ({families})" if families else "")
             + f", {twice} of them checked twice (our kernel and Coq)" + (f", {coq_only} by Coq only" if coq_only else "")]
    if entry["tests"] == "not run":
        parts.append("tests: not run")
    else:
        passed = sum(t["outcome"] == "passed" for t in entry["tests"])
        parts.append(f"tests: {passed}/{len(entry['tests'])} passed")
    measured = entry.get("measured", "")
    parts.append(f"measured: {measured}" if measured else "measured: -")
    return "; ".join(parts)


def _checker_counts(derivations) -> tuple[int, int]:
    """(checked twice by our kernel and Coq, checked by Coq only) among ledger entries of cited results."""
    checkers = [d.get("checker") for d in derivations]
    return checkers.count(rules.Checker.BOTH.value), checkers.count(rules.Checker.COQ.value)


def checker_summary(derivations: Sequence[dict]) -> str:
    """How many of the results cited for a statement were checked twice (our kernel and Coq), or by Coq only."""
    if not derivations:
        return ""
    twice, coq_only = _checker_counts(derivations)
    text = f"{twice} of {len(derivations)} results checked twice, by our kernel and Coq"
    return text + (f", {coq_only} by Coq only" if coq_only else "")


def all_selectors(infos: dict[str, DerivationInfo], claims: Sequence[Claim] = CLAIMS) -> list[str]:
    """Every claim's tests, and the Coq checks when some result has a Coq proof (they decide its checker)."""
    coq_tests = [COQ_TEST] if any(i.coq for i in infos.values()) else []
    return sorted({s for c in claims for s in test_selectors(c, infos)} | set(coq_tests))


# -- numbers -------------------------------------------------------------------------------------
SIGNIFICANT_DIGITS = 6


def rounded(x: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """``x`` to ``digits`` significant digits, so that the ledger's numbers do not depend on the last
    bits of a computation (summation order, library version): ``repr`` of the result is at most that long."""
    if not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits}g}")


def rounded_numbers(obj):
    """Every float in a JSON-ready structure (dicts, lists, tuples) through :func:`rounded`; ints, bools
    and strings unchanged."""
    if isinstance(obj, float):
        return rounded(obj)
    if isinstance(obj, dict):
        return {k: rounded_numbers(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded_numbers(v) for v in obj]
    return obj


# -- building ------------------------------------------------------------------------------------
def _row(r: dict | None) -> dict | None:
    if r is None:
        return None
    return {k: r[k] for k in ("mean", "ci_low", "ci_high", "n")}


def run_label(run: Run) -> str:
    return f"{run.model_label} on {run.task_label}"


def run_entry(run: Run, out_dir: Path) -> dict:
    s = run.summary
    return {"id": run.path.name, "path": _rel(run.path, out_dir), "model": run.model_label,
            "model_kind": run.model.get("kind"), "revision": run.revision, "task": run.task_label,
            "hardware": run.hardware, "group_sizes": run.group_sizes, "items": run.items,
            "partial": run.partial, "paper_setting": run.is_paper_setting,
            "ci": (s.get("notes") or {}).get("ci", "see summary.json"),
            "counts": s.get("counts", {}), "command": run.config.get("command", "")}


def rank_section(runs: Sequence[Run], out_dir: Path) -> dict:
    paper_runs = [r for r in runs if r.is_paper_setting]
    rows = []
    for matrix, cond, mlabel in RANK_MATRICES:
        for metric, label in RANK_METRICS:
            entry = {"matrix": matrix, "condition": cond, "matrix_label": mlabel, "metric": metric,
                     "metric_label": label, "runs": []}
            for run in runs:
                per_R = {}
                for R in run.group_sizes:
                    r = _row(run.row(R, matrix, cond, metric))
                    if r is not None:
                        r["status"] = rules.approx_two(r["mean"], r["ci_low"], r["ci_high"], r["n"])
                        per_R[str(R)] = r
                status = rules.series_status({int(R): r["status"] for R, r in per_R.items()})
                entry["runs"].append({"id": run.path.name, "per_R": per_R, "status": status})
            paper = [e for e, run in zip(entry["runs"], runs) if run.is_paper_setting]
            entry["paper_setting"] = paper[0]["status"] if paper else NOT_ON_PAPER_MODEL
            rows.append(entry)
    plots = [_rel(p, out_dir) for run in runs for p in run.plots
             if p.stem in ("effective_rank_vs_R", "spectra")]
    instead = "; ".join(f"{run_label(r)} ({r.path.name})" for r in runs if not r.is_paper_setting)
    return {"paper_runs": [r.path.name for r in paper_runs], "rows": rows, "plots": plots,
            "measured_instead": instead or "nothing"}


def attribution_section(runs: Sequence[Run]) -> dict:
    out = []
    for run in runs:
        cells, verdicts = [], []
        for matrix in ("weighted", "layers"):
            for metric in ATTRIBUTION_METRICS:
                for R in run.group_sizes:
                    grpo = _row(run.row(R, matrix, "grpo", metric))
                    controls = {c: _row(run.row(R, matrix, c, metric)) for c in rules.SHOWN_CONTROLS}
                    controls = {c: v for c, v in controls.items() if v is not None}
                    if grpo is None or not controls:
                        continue
                    verdict = rules.attribution(grpo, controls)
                    verdicts.append(verdict)
                    cells.append({"matrix": matrix, "metric": metric, "R": R, "grpo": grpo, "controls": controls,
                                  "attribution": verdict})
        out.append({"id": run.path.name, "cells": cells, "overall": rules.combine_attributions(verdicts)})
    return {"runs": out}


def sparsity_section(runs: Sequence[Run], synthetic: Synthetic | None, out_dir: Path) -> dict:
    section: dict = {"synthetic": None, "runs": [], "plots": []}
    if synthetic is not None:
        per_R = {}
        for R in sorted(synthetic.summary["per_R"], key=int):
            e = synthetic.change(R)
            per_R[R] = {"start": e["start"]["mean"], "end": e["end"]["mean"], "change": e["change"]["mean"],
                        "se": e["change"]["se"], "trend": rules.trend(e["change"]["mean"], e["change"]["se"])}
            z = synthetic.summary["per_R"][R].get("zero_adv_frac")
            if z:
                per_R[R]["sampled_zero_advantage"] = [z["start"]["mean"], z["end"]["mean"]]
        cfg = synthetic.summary.get("config", {})
        section["synthetic"] = {"path": _rel(synthetic.path, out_dir), "per_R": per_R,
                                "setting": f"{cfg.get('policy', '?')} policy, {cfg.get('steps', '?')} SGD steps, "
                                           f"seeds {cfg.get('seeds', '?')}, advantage {cfg.get('advantage', '?')}"}
        section["plots"] += [_rel(p, out_dir) for p in synthetic.plots
                             if p.stem in ("exact_zero_gradient_probability", "zero_advantage_fraction")]
    for run in runs:
        train = run.summary.get("train") or []
        if not train:
            continue
        keys = sorted({k for r in train for k in (r.get("sparsity") or {})})
        series = {"mean reward": [r.get("mean_reward") for r in train],
                  "zero-advantage group fraction": [r.get("zero_advantage_group_fraction") for r in train]}
        series.update({f"coordinates {k}": [(r.get("sparsity") or {}).get(k) for r in train] for k in keys})
        # the third meaning of sparsity (runs through TRL with the callback): parameters whose stored value did
        # not change since the start, in the model's dtype and in bf16, and the rank of the accumulated update
        for dtype in ("model", "bf16"):
            values = [_nested(r, "update_unchanged", "since_start", dtype) for r in train]
            if any(v is not None for v in values):
                series[f"parameters unchanged since the start ({'model dtype' if dtype == 'model' else dtype})"] = values
        ranks = [_nested(r, "delta_rank_fraction", "median") for r in train]
        if any(v is not None for v in ranks):
            series["rank of W - W_start over full rank (median over layers)"] = ranks
        section["runs"].append({"id": run.path.name, "steps": len(train),
                                "series": {name: training_trend(values) for name, values in series.items()},
                                "note": "too few steps for a trend" if len(train) < MIN_TRAIN_STEPS else ""})
        section["plots"] += [_rel(p, out_dir) for p in run.plots if p.stem == "train_sparsity"]
    return section


MIN_TRAIN_STEPS = 20


def _nested(record: dict, *keys: str):
    """record[k1][k2]...; None where a level is missing or null."""
    for key in keys:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


def training_trend(values: Sequence[float | None]) -> dict:
    """Mean of the first and of the last quarter of a per-step series (steps without a value, e.g.
    no sparsity when every group was degenerate, skipped), their change +- standard error, and
    the trend by :func:`rules.trend`."""
    v = [float(x) for x in values if x is not None]
    if not v:
        return {"first": None, "last": None, "window": 0, "change": None, "se": None, "trend": "flat"}
    k = max(1, len(v) // 4)
    first, last = v[:k], v[-k:]
    start, end = statistics.fmean(first), statistics.fmean(last)
    se = ((statistics.variance(first) + statistics.variance(last)) / k) ** 0.5 if k > 1 else 0.0
    return {"first": start, "last": end, "window": k, "change": end - start, "se": se,
            "trend": rules.trend(end - start, se) if k > 1 else "flat"}


def _trend_text(name: str, t: dict, arrow: str) -> str:
    if t["first"] is None:
        return f"{name} not measured"
    return (f"{name} {t['first']:.4g} {arrow} {t['last']:.4g} (first/last {t['window']}; "
            f"{t['change']:+.3g} +- {t['se']:.2g}, {t['trend']})")


TRAINING_RUNS_NOTE = ("Real-model training runs are shown for information; the verdict uses the exact simulation "
                      "(rule 5).")


def _run_training_text(r: dict, arrow: str) -> str:
    return (f"Run {r['id']}: {r['steps']} GRPO training steps"
            + (f" ({r['note']})" if r["note"] else "")
            + "; mean of the first and of the last quarter of the steps with a value (window, change +- se, "
            "trend): "
            + "; ".join(_trend_text(name, t, arrow) for name, t in r["series"].items()) + ".")


def build(infos: dict[str, DerivationInfo], outcomes: dict[str, tuple[str, str]] | None, runs: Sequence[Run],
          synthetic: Synthetic | None, out_dir: Path, *, test_source: str, source_root: Path | None = None,
          version: str = "", claims: Sequence[Claim] = CLAIMS) -> dict:
    """``outcomes`` None means the tests were not run (--skip-tests). The verdicts are decided on the
    numbers as read or computed; the returned ledger holds every float to :data:`SIGNIFICANT_DIGITS`
    significant digits (:func:`rounded_numbers`), which the Markdown and LaTeX then format."""
    out_dir = Path(out_dir)
    ledger_claims = []
    coq_checked = coq_check(outcomes)
    for claim in claims:
        evidence, derivs = cited_evidence(claim.cited, infos, out_dir, source_root, coq_checked)
        strongest_evidence, strongest_derivs = cited_evidence(claim.strongest_cited, infos, out_dir, source_root,
                                                              coq_checked)
        selectors = test_selectors(claim, infos)
        tests = None if outcomes is None else junit.evidence(selectors, outcomes)
        entry = {"key": claim.key, "title": claim.title, "quote": claim.quote, "arxiv": ARXIV,
                 "kind": claim.kind, "nature": claim.nature.value, "statement": claim.statement,
                 "derivations": derivs,
                 "strongest": {"statement": claim.strongest, "derivations": strongest_derivs},
                 "tests": ("not run" if tests is None else
                           [{"selector": t.selector, "outcome": t.outcome,
                             "cases": [{"id": i, "outcome": o, "message": m} for i, o, m in t.cases]} for t in tests])}
        if claim.empirical == "rank":
            section = rank_section(runs, out_dir)
            entry["rank"] = section
            paper = [r for r in runs if r.is_paper_setting]
            primary = layers = None
            if paper:
                primary, layers = ({R: r for R in paper[0].group_sizes if (r := _row(paper[0].row(R, *reading)))}
                                   for reading, _label in rules.READINGS)
            decision = rules.rank_claim_verdict(primary, tests, evidence, section["measured_instead"], layers)
        else:
            decision = rules.theorem_verdict(evidence, tests, claim.nature)
        if claim.empirical == "sparsity":
            entry["sparsity"] = sparsity_section(runs, synthetic, out_dir)
            syn = entry["sparsity"]["synthetic"]
            if syn is not None:
                decision = rules.with_simulation(decision, {R: v["trend"] for R, v in syn["per_R"].items()})
            else:
                decision.reasons.append("simulation of training not measured")
        if claim.empirical == "attribution":
            entry["attribution"] = attribution_section(runs)
        form = rules.strongest_form_standing(strongest_evidence, tests)
        if claim.nature is rules.Nature.ABOUT_THE_PAPER:
            form.reasons.insert(0, "our reconstruction, not the paper's (unpublished) derivation")
        entry["strongest"].update(standing=form.standing.value, reasons=form.reasons,
                                  checkers=checker_summary(strongest_derivs))
        entry["measured"] = measured_text(entry, runs)
        entry.update(verdict=decision.verdict.value, reasons=decision.reasons,
                     counterexamples=decision.counterexamples)
        entry["evidence"] = evidence_summary(entry)
        ledger_claims.append(entry)
    return rounded_numbers({
        "paper": PAPER, "arxiv": ARXIV, "generator": f"python -m grpo_verify.report (grpo-verify {version})",
        "tests": test_source, "coq": coq_checked[1] if coq_checked[0] else f"not checked: {coq_checked[1]}",
        "runs": [run_entry(r, out_dir) for r in runs],
        "tolerance": {"target": rules.TARGET_RANK, "absolute": rules.APPROX_TOLERANCE,
                      "min_groups": rules.MIN_GROUPS, "primary": list(rules.PRIMARY),
                      "readings": [f"{label} ({', '.join(reading)})" for reading, label in rules.READINGS],
                      "rule": f"|mean - 2| <= {rules.APPROX_TOLERANCE} and CI overlapping "
                              f"[{rules.TARGET_RANK - rules.APPROX_TOLERANCE}, "
                              f"{rules.TARGET_RANK + rules.APPROX_TOLERANCE}], n >= {rules.MIN_GROUPS}"},
        "rules": rules_text(), "claims": ledger_claims,
    })


def rules_text() -> list[str]:
    t = rules.APPROX_TOLERANCE
    return [
        "Two verdicts per claim, by the same rules for every claim: (a) on the claim as worded -- confirmed, "
        "confirmed (definitional), refuted, not supported in a model, not assessable as worded, not yet measured "
        "or inconclusive; (b) on the strongest statement proved in its place, its "
        "conditions written into it -- proved, proved for the listed values only, or not established.",
        "(a) and (b): any property test failed, errored, skipped, missing or not run, or any cited derivation "
        "result not proved -> inconclusive / not established (never confirmed, never proved).",
        "(a) A claim about the paper's own unpublished derivations or characterisations -> not assessable as "
        "worded: our theorems do not confirm the paper's; its level (b) is our reconstruction.",
        "(a) A proved counterexample to the claim as worded, in the claim's own setting -> refuted, naming it. A "
        "claim true only in a regime is refuted as worded once a counterexample outside the regime is proved, and "
        "its restricted form is proved at level (b); there is no conditional verdict at level (a). This applies to "
        "every claim alike.",
        "(a) A counterexample that holds only in a model (a toy chain, one optimizer) -> not supported in that "
        "model, naming it and its assumptions; never refuted: a toy model does not refute a qualitative claim.",
        "(a) A claim true by the estimator's definition -> confirmed (definitional).",
        "(a) No proved result decides the wording (none proves it, no counterexample), only examples support it, "
        "or a supporting result is proved only for a range of values or an instance (scope 'instance (R = 4)') "
        "-> inconclusive. An example (a proved instance exhibiting what the claim says can happen) is proved by "
        "its instance and is not a range.",
        "(a) Every supporting result proved for every value and every test passed -> confirmed.",
        "(a) A simulation in which the claimed rise is a fall (change + 2 se < 0) -> inconclusive.",
        f"(a) Empirical claim with no run in the paper's setting ({PAPER_MODEL} with real weights, GSM8K) -> not yet "
        "measured, whatever else was measured. With such a run, both pre-registered readings (the R x R "
        "effective rank of diag(A) G; the per-layer stable rank of the weight gradients) about 2 at R = 2, 4, 8 "
        "-> confirmed; both clearly not about 2 at some R -> refuted; a reading missing or disagreeing -> "
        "inconclusive.",
        "(b) Every supporting result proved for every value and every test passed -> proved; some supporting "
        "result proved only for a range of values or an instance -> proved for the listed values only; only "
        "examples -> not established.",
        f"Effective rank about 2: |mean - 2| <= {t} and the confidence interval overlaps [{2 - t}, {2 + t}], "
        f"with at least {rules.MIN_GROUPS} groups; not about 2: the interval lies outside [{2 - t}, {2 + t}].",
        "Controls: comparable when the control's mean lies in GRPO's interval or the intervals overlap; every "
        "non-zero-sum control (N(0,1), all-ones) comparable -> the rank is generic, not caused by zero-sum "
        "advantages. Raw binary rewards are shown, not used: they zero every failed rollout's row, so their "
        "rank counts successes.",
    ]


def _rel(path: Path, out_dir: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), Path(out_dir).resolve())).as_posix()


# -- Markdown ------------------------------------------------------------------------------------
def _fmt(r: dict | None, digits: int = 2) -> str:
    if r is None:
        return "-"
    return f"{r['mean']:.{digits}f} [{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]"


def _md_cell(run_entry_: dict) -> str:
    parts = [f"R={R}: {_fmt(r)} (n={r['n']})" for R, r in run_entry_["per_R"].items()]
    return ("; ".join(parts) or "-") + f" -> **{run_entry_['status']}**"


def readme_rows(ledger: dict) -> list[str]:
    """The README's claims table rows (Markdown): key, title, verdict as worded with its main reason, the
    strongest form's standing, the evidence line."""
    return [f"| {key} | {title} | **{verdict}** — {why} | **{strongest.split(':', 1)[0]}** | {evidence} |"
            for key, title, verdict, why, strongest, evidence in summary_rows(ledger)]


def _checkers_suffix(strongest: dict) -> str:
    """" (n of m results checked twice, ...)" after the strongest form's standing ("" when nothing is cited)."""
    return f" ({strongest['checkers']})" if strongest.get("checkers") else ""


def summary_rows(ledger: dict) -> list[tuple[str, str, str, str, str, str]]:
    """Per claim: key, title, verdict as worded, its main reason, the strongest proved form (standing:
    statement) and the evidence line."""
    rows = []
    for c in ledger["claims"]:
        # a refutation is explained by its counterexample; an undecided claim by its reason, which names both sides
        first = c["counterexamples"] and c["verdict"] != Verdict.INCONCLUSIVE.value
        why = c["counterexamples"][0] if first else (c["reasons"][0] if c["reasons"] else "")
        strongest = c["strongest"]
        checkers = _checkers_suffix(strongest)
        rows.append((c["key"], c["title"], c["verdict"], why,
                     f"{strongest['standing']}{checkers}: {strongest['statement']}", c["evidence"]))
    return rows


def _table_cell(text: str) -> str:
    """A Markdown table cell: a bar would end the cell, so the maths' norms and absolute values are
    written with \\Vert and \\vert (the only bars in the claims' text are inside $...$)."""
    return text.replace("\\|", "\\Vert ").replace("|", "\\vert ")


def summary_markdown(ledger: dict) -> str:
    lines = ["| # | Claim | As worded | Strongest proved form | Evidence |", "|---|---|---|---|---|"]
    for key, title, verdict, why, strongest, evidence in summary_rows(ledger):
        standing, _, statement = strongest.partition(": ")
        cells = [key, title, f"**{verdict}**: {why}", f"**{standing}**: {statement}", evidence]
        lines.append("| " + " | ".join(_table_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def markdown(ledger: dict) -> str:
    L = ["# Claims ledger: arXiv " + ledger["arxiv"], "",
         f"{ledger['paper']}, [arXiv:{ledger['arxiv']}](https://arxiv.org/abs/{ledger['arxiv']}).", "",
         f"Generated by `{ledger['generator']}`. Property tests: {ledger['tests']}. Coq second proofs "
         f"(`derivations/coq/`): {ledger['coq']}.", "",
         "## Summary", "", summary_markdown(ledger), "", "## Verdict rules (grpo_verify/report/rules.py)", ""]
    L += [f"{n}. {r}" for n, r in enumerate(ledger["rules"], 1)]
    L += ["", "## Empirical runs", ""]
    if not ledger["runs"]:
        L.append("None given (`--empirical DIR`).")
    for r in ledger["runs"]:
        L += [f"- **{r['id']}** (`{r['path']}`): {r['model']} (kind {r['model_kind']}, {r['revision']}); task {r['task']}; "
              f"R = {r['group_sizes']}; {r['items']} items{' (PARTIAL: run in progress, summarised from results.jsonl)' if r['partial'] else ''}; "
              f"hardware {r['hardware']}; CI: {r['ci']}; paper setting: {'yes' if r['paper_setting'] else 'no'}."]
    for c in ledger["claims"]:
        L += ["", f"## {c['key']}. {c['title']}", ""]
        if c["quote"]:
            L += [f"> \"{c['quote']}\" — Mishra, Chakraborty, Kapusuzoglu, arXiv:{c['arxiv']} (abstract)", ""]
        else:
            L += ["(Not a claim of the paper: a finding of this suite.)", ""]
        L += [f"**As worded: {c['verdict']}.**", ""]
        for label, key in (("Why", "reasons"), ("Counterexamples", "counterexamples")):
            if c[key]:
                L += [f"{label}:", ""] + [f"- {x}" for x in c[key]] + [""]
        L += ["Results cited for the claim as worded:", ""] + _md_derivations(c["derivations"])
        strongest = c["strongest"]
        checkers = _checkers_suffix(strongest)
        L += ["", f"**Strongest proved form: {strongest['standing']}{checkers}.** {strongest['statement']}", ""]
        L += [f"- {x}" for x in strongest["reasons"]] + ["", "Results cited for it:", ""]
        L += _md_derivations(strongest["derivations"])
        L += ["", f"Evidence: {c['evidence']}.", "", "### Reading", "", c["statement"], ""]
        L += ["", "Rendered step by step in `derivations.pdf` (`python -m grpo_verify.render --pdf`), section of "
              "the family named.", "", "### Property tests (this run)", ""]
        if c["tests"] == "not run":
            L.append("tests not run (`--skip-tests`).")
        else:
            passed = sum(t["outcome"] == "passed" for t in c["tests"])
            L.append(f"{passed}/{len(c['tests'])} passed.")
            L.append("")
            for t in c["tests"]:
                msg = next((f": {x['message']}" for x in t["cases"] if x["outcome"] != "passed" and x["message"]), "")
                L.append(f"- `{t['selector']}`: {t['outcome']} ({len(t['cases'])} case(s)){msg}")
        if "rank" in c:
            L += _md_rank(c["rank"], ledger)
        if "attribution" in c:
            L += _md_attribution(c["attribution"])
        if "sparsity" in c:
            L += _md_sparsity(c["sparsity"])
    return "\n".join(L) + "\n"


def _md_derivations(derivations: Sequence[dict]) -> list[str]:
    L = []
    for d in derivations:
        link = f"[{d['family']}]({d['source']})" if d["source"] else d["family"]
        extra = f" — {d['condition']}" if d["condition"] else ""
        L.append(f"- {link} `{d['name']}` ({d['role']}{extra}): **{d['status']}** ({d['scope']}; checker: "
                 f"{d.get('checker', rules.Checker.OURS.value)}). {d['doc']}")
        if d.get("coq"):
            L.append(f"  Coq: {d['checker_note']}.")
        if d["assumptions"]:
            L.append("  Assumptions: " + "; ".join(d["assumptions"]) + ".")
    return L or ["- (none)"]


def _md_rank(sec: dict, ledger: dict) -> list[str]:
    ids = [r["id"] for r in ledger["runs"]]
    tol = ledger["tolerance"]
    L = ["", "### Measurements", "",
         f"Tolerance: \"effective rank ~ 2\" means {tol['rule']}. Pre-registered readings, both deciding: "
         f"{'; '.join(tol['readings'])}. "
         f"Paper setting runs: {', '.join(sec['paper_runs']) or 'none'}; measured instead: {sec['measured_instead']}.",
         "", "| " + " | ".join(["matrix", "rank definition", "Nemotron-4B / GSM8K"] + ids) + " |",
         "|---|---|---|" + "---|" * len(ids)]
    for row in sec["rows"]:
        L.append("| " + " | ".join([row["matrix_label"], row["metric_label"], row["paper_setting"]]
                                   + [_md_cell(e) for e in row["runs"]]) + " |")
    L += [""] + _md_figures(sec["plots"])
    return L


def _md_attribution(sec: dict) -> list[str]:
    L = ["", "### Controls: is low rank caused by zero-sum advantages?", ""]
    if not sec["runs"]:
        return L + ["No empirical run given: not yet measured."]
    for run in sec["runs"]:
        L += [f"**{run['id']}**: {run['overall']}.", "", "| matrix | metric | R | GRPO | " +
              " | ".join(CONTROL_LABELS[c] for c in rules.SHOWN_CONTROLS)
              + " | attribution |", "|---|---|---|---|---|---|---|---|---|"]
        for cell in run["cells"]:
            ctl = [_fmt(cell["controls"].get(c)) for c in rules.SHOWN_CONTROLS]
            L.append(f"| {cell['matrix']} | {cell['metric']} | {cell['R']} | {_fmt(cell['grpo'])} | "
                     + " | ".join(ctl) + f" | {cell['attribution'].split(':')[0]} |")
        L.append("")
    return L


def _md_sparsity(sec: dict) -> list[str]:
    L = ["", "### Measurements", ""]
    syn = sec["synthetic"]
    if syn is None:
        L.append("Simulation of training: not measured.")
    else:
        L += [f"Synthetic training (`{syn['path']}`; {syn['setting']}): exact expected fraction of zero-gradient "
              "groups, start -> end (mean over seeds; change +- se).", "",
              "| R | start | end | change | trend |", "|---|---|---|---|---|"]
        for R, v in syn["per_R"].items():
            L.append(f"| {R} | {v['start']:.3f} | {v['end']:.3f} | {v['change']:+.3f} +- {v['se']:.3f} | {v['trend']} |")
    for r in sec["runs"]:
        L += ["", _run_training_text(r, "->")]
    if sec["runs"]:
        L += ["", TRAINING_RUNS_NOTE]
    L += [""] + _md_figures(sec["plots"])
    return L


# -- LaTeX ---------------------------------------------------------------------------------------
_UNICODE_TEX = {"\u2248": "$\\approx$", "\u2208": "$\\in$", "\u2264": "$\\le$", "\u2265": "$\\ge$",
                "\u2014": "---", "\u2013": "--", "\u00d7": "$\\times$", "\u2192": "$\\to$"}


_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
HEX_GROUP = 8


def breakable_hex(code: str) -> str:
    """Long hexadecimal strings (32 digits or more: sha256, commits) in escaped LaTeX: typewriter type with
    a line-break point every 8 characters, so that a 64-character hash wraps instead of running off the page."""
    def split(m: re.Match) -> str:
        h = m.group(0)
        return r"\texttt{" + r"\allowbreak{}".join(h[i:i + HEX_GROUP] for i in range(0, len(h), HEX_GROUP)) + "}"
    return _HEX_RUN.sub(split, code)


def tex(text: str, where: str = "ledger") -> str:
    """Prose to LaTeX: the few non-ASCII characters of quotations become maths, the rest via latex.prose;
    long hexadecimal strings may break every 8 characters."""
    for ch, rep in _UNICODE_TEX.items():
        text = text.replace(ch, rep)
    return breakable_hex(latex.prose(text, where))


def _tex_fmt_cell(e: dict) -> str:
    parts = [f"$R={R}$: {r['mean']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]" for R, r in e["per_R"].items()]
    return r"\newline ".join(parts or ["--"]) + r"\newline \textbf{" + tex(e["status"].replace("~", "about ")) + "}"


FIGURE_CAPTIONS = {  # plain ASCII prose: the Markdown alt text and, escaped, the LaTeX caption
    "effective_rank_vs_R": "Effective rank against the group size R (mean over prompts with its bootstrap CI; "
                           "dashed: R, full rank; dash-dotted: 2, the paper's claim). Left: the R x R matrices G, "
                           "centred G and diag(a) G for each weighting a; right: the per-layer weight gradients "
                           "(median over the 2-D weights).",
    "spectra": "The k-th singular value of each R x R matrix over its largest (mean over prompts), one panel "
               "per group size R.",
    "train_sparsity": "Real GRPO training, per step: coordinate sparsity of the step's gradient at each threshold "
                      "(left); the fraction of zero-advantage groups and the mean reward (right).",
    "exact_zero_gradient_probability": "Synthetic training, per step and group size R: the exact expected "
                                       "fraction of zero-gradient groups.",
    "zero_advantage_fraction": "Synthetic training, per step and group size R: the sampled fraction of groups "
                               "whose advantages are all 0.",
}


def figure_caption(path: str) -> str:
    """What a plot shows, by its file stem, and the run (folder) it belongs to."""
    p = Path(path)
    what = FIGURE_CAPTIONS.get(p.stem, f"Plot {p.stem.replace('_', ' ')}.")
    return f"{what} From {p.parent.name}."


def _md_figures(paths: Sequence[str]) -> list[str]:
    return [f"![{figure_caption(p)}]({p})" for p in paths if p.endswith(".png")]


def _tex_path(path: str) -> str:
    """A relative path in typewriter type that may break after each slash."""
    return r"\texttt{" + r"/\allowbreak{}".join(tex(part) for part in path.split("/")) + "}"


def _figures(paths: Sequence[str], graphics: bool, width: str = r"0.8\linewidth") -> list[str]:
    """One figure per plot stem: the PDF version when the run wrote one, else the PNG; under it a caption
    saying what it shows and, in small type, the file."""
    out = []
    for path in paths:
        if not path.endswith(".png"):
            continue
        pdf = path[:-4] + ".pdf"
        use = pdf if pdf in paths else path
        caption = r"\textbf{Figure.} " + tex(figure_caption(use)) + r"\\{}{\footnotesize File: " + _tex_path(use) + "}"
        if not graphics:
            out.append(r"\noindent " + caption + r"\par")
            continue
        out.append(r"\begin{center}\includegraphics[width=" + width + r"]{\detokenize{" + use + r"}}\par"
                   + r"\parbox{0.9\linewidth}{\small " + caption + r"}\end{center}")
    return out


def latex_document(ledger: dict, graphics: bool = True) -> str:
    B = [r"\documentclass[10pt]{article}",
         # a reproducible PDF under pdfTeX: no creation date, no trailer /ID, no PTEX.* entries
         r"\ifdefined\pdftrailerid \pdfinfoomitdate=1 \pdftrailerid{} \pdfsuppressptexinfo=-1 \fi",
         r"\usepackage[T1]{fontenc}", r"\usepackage[margin=1.8cm]{geometry}",
         r"\usepackage{amsmath,amssymb,longtable,array}",
         r"\setlength{\emergencystretch}{3em}"]  # a loose line rather than a hash or path run into the margin
    if graphics:
        B.append(r"\usepackage{graphicx}")
    B += [r"\title{Claims ledger: arXiv " + ledger["arxiv"] + "}",
          r"\author{" + tex(ledger["generator"]) + "}", r"\date{}", r"\begin{document}", r"\maketitle",
          r"\noindent " + tex(ledger["paper"]) + rf", arXiv:{ledger['arxiv']}. Property tests: "
          + tex(ledger["tests"]) + ". Coq second proofs (\\texttt{derivations/coq/}): " + tex(ledger["coq"]) + ".",
          r"\section*{Summary}",
          # ragged columns: long result names must wrap at their underscores, not run into the margin
          r"\begin{longtable}{" + "".join(rf">{{\raggedright\arraybackslash}}p{{{w}\linewidth}}"
                                          for w in (0.04, 0.13, 0.25, 0.33, 0.17)) + "}",
          r"\# & claim & as worded & strongest proved form & evidence \\ \hline \endhead"]
    for key, title, verdict, why, strongest, evidence in summary_rows(ledger):
        standing, _, statement = strongest.partition(": ")
        B.append(f"{key} & {tex(title)} & \\textbf{{{tex(verdict)}}}: {tex(why)} & \\textbf{{{tex(standing)}}}: "
                 f"{tex(statement)} & {tex(evidence)} \\\\ \\hline")
    B += [r"\end{longtable}", r"\section*{Verdict rules}", r"\begin{enumerate}"]
    B += [rf"\item {tex(r)}" for r in ledger["rules"]]
    B += [r"\end{enumerate}", r"\section*{Empirical runs}"]
    if not ledger["runs"]:
        B.append(r"None given.")
    else:
        B.append(r"\begin{itemize}")
        for r in ledger["runs"]:
            partial = " (PARTIAL: run in progress, summarised from results.jsonl)" if r["partial"] else ""
            B.append(rf"\item \textbf{{{tex(r['id'])}}}: {tex(r['model'])} (kind {tex(str(r['model_kind']))}, "
                     rf"{tex(r['revision'])}); task {tex(r['task'])}; $R \in \{{{', '.join(map(str, r['group_sizes']))}\}}$; "
                     rf"{r['items']} items{tex(partial)}; hardware {tex(r['hardware'])}; CI: {tex(r['ci'])}; "
                     rf"paper setting: {'yes' if r['paper_setting'] else 'no'}.")
        B.append(r"\end{itemize}")
    for c in ledger["claims"]:
        B.append(rf"\section{{{c['key']}. {tex(c['title'])}}}")
        if c["quote"]:
            B.append(r"\begin{quote}``" + tex(c["quote"]) + r"'' --- Mishra, Chakraborty, Kapusuzoglu, "
                     rf"arXiv:{c['arxiv']} (abstract).\end{{quote}}")
        else:
            B.append(r"\noindent(Not a claim of the paper: a finding of this suite.)\par")
        B.append(rf"\noindent\textbf{{As worded: {tex(c['verdict'])}.}}")
        for label, key in (("Why", "reasons"), ("Counterexamples", "counterexamples")):
            if c[key]:
                B += [rf"\paragraph{{{label}.}}", r"\begin{itemize}"] + [rf"\item {tex(x)}" for x in c[key]] + [r"\end{itemize}"]
        B += [r"\paragraph{Results cited for the claim as worded.}"] + _tex_derivations(c["derivations"])
        strongest = c["strongest"]
        checkers = _checkers_suffix(strongest)
        B += [r"\subsection*{Strongest proved form: " + tex(strongest["standing"] + checkers) + "}",
              tex(strongest["statement"]),
              r"\begin{itemize}"] + [rf"\item {tex(x)}" for x in strongest["reasons"]] + [r"\end{itemize}"]
        B += [r"\paragraph{Results cited for it.}"] + _tex_derivations(strongest["derivations"])
        B += [r"\noindent\textbf{Evidence:} " + tex(c["evidence"]) + r".\par",
              r"\subsection*{Reading}", tex(c["statement"])]
        B += [r"\par\noindent Each result is rendered step by step in \texttt{derivations.pdf} "
              r"(\texttt{python -m grpo\_verify.render --pdf}), in the section of its family; source: "
              r"\texttt{derivations/}.\par", r"\subsection*{Property tests (this run)}"]
        if c["tests"] == "not run":
            B.append(r"\noindent tests not run (\texttt{--skip-tests}).\par")
        else:
            passed = sum(t["outcome"] == "passed" for t in c["tests"])
            B += [rf"\noindent {passed}/{len(c['tests'])} passed.", r"\begin{itemize}"]
            for t in c["tests"]:
                B.append(rf"\item \texttt{{{tex(t['selector'])}}}: {tex(t['outcome'])} ({len(t['cases'])} case(s))")
            B.append(r"\end{itemize}")
        if "rank" in c:
            B += _tex_rank(c["rank"], ledger, graphics)
        if "attribution" in c:
            B += _tex_attribution(c["attribution"])
        if "sparsity" in c:
            B += _tex_sparsity(c["sparsity"], graphics)
    B += [r"\end{document}", ""]
    return "\n".join(B)


def _tex_derivations(derivations: Sequence[dict]) -> list[str]:
    if not derivations:
        return [r"\noindent (none)\par"]
    B = [r"\begin{itemize}"]
    for d in derivations:
        cond = f" --- {tex(d['condition'])}" if d["condition"] else ""
        B.append(rf"\item {d['family']} \texttt{{{tex(d['name'])}}} ({tex(d['role'])}{cond}): "
                 rf"\textbf{{{tex(d['status'])}}} ({tex(d['scope'])}; checker: {tex(d.get('checker', rules.Checker.OURS.value))}). {tex(d['doc'])}")
        if d.get("coq"):
            B.append(r"\emph{Coq:} " + tex(d["checker_note"]) + ".")
        if d["assumptions"]:
            B.append(r"\emph{Assumptions:} " + "; ".join(tex(a) for a in d["assumptions"]) + ".")
        if d["statement"] and d["role"] != Role.CONTEXT.value:
            B.append(r"\begin{align*}" + d["statement"] + r"\end{align*}")
    return B + [r"\end{itemize}"]


def _tex_rank(sec: dict, ledger: dict, graphics: bool) -> list[str]:
    ids = [r["id"] for r in ledger["runs"]]
    n = len(ids)
    width = 0.62 / max(n, 1)
    B = [r"\subsection*{Measurements}", r"\noindent " + tex(f"Tolerance: \"effective rank about 2\" means "
                                                            f"{ledger['tolerance']['rule']}. Paper-setting runs: "
                                                            f"{', '.join(sec['paper_runs']) or 'none'}; measured "
                                                            f"instead: {sec['measured_instead']}.") + r"\par",
         r"{\footnotesize\begin{longtable}{p{0.14\linewidth}p{0.1\linewidth}p{0.1\linewidth}"
         + "".join(rf"p{{{width:.3f}\linewidth}}" for _ in ids) + "}",
         " & ".join(["matrix", "rank", "Nemotron-4B / GSM8K"] + [rf"\texttt{{{tex(i)}}}" for i in ids])
         + r" \\ \hline \endhead"]
    for row in sec["rows"]:  # one cell per column: no run, no run columns
        cells = [tex(row["matrix_label"]), tex(row["metric_label"]), tex(row["paper_setting"])]
        B.append(" & ".join(cells + [_tex_fmt_cell(e) for e in row["runs"]]) + r" \\ \hline")
    B.append(r"\end{longtable}}")
    B += _figures(sec["plots"], graphics)
    return B


def _tex_attribution(sec: dict) -> list[str]:
    B = [r"\subsection*{Controls: is low rank caused by zero-sum advantages?}"]
    if not sec["runs"]:
        return B + [r"\noindent No empirical run given: not yet measured.\par"]
    names = rules.SHOWN_CONTROLS
    for run in sec["runs"]:
        B += [rf"\noindent\textbf{{{tex(run['id'])}}}: {tex(run['overall'])}.\par",
              r"{\footnotesize\begin{longtable}{llr" + "l" * (len(names) + 2) + "}",
              "matrix & metric & $R$ & GRPO & " + " & ".join(tex(CONTROL_LABELS[c]) for c in names)
              + r" & attribution \\ \hline \endhead"]
        for cell in run["cells"]:
            ctl = [_fmt(cell["controls"].get(c)) for c in names]
            B.append(f"{tex(cell['matrix'])} & {tex(cell['metric'])} & {cell['R']} & {_fmt(cell['grpo'])} & "
                     + " & ".join(ctl) + f" & {tex(cell['attribution'].split(':')[0])}" + r" \\")
        B.append(r"\end{longtable}}")
    return B


def _tex_sparsity(sec: dict, graphics: bool) -> list[str]:
    B = [r"\subsection*{Measurements}"]
    syn = sec["synthetic"]
    if syn is None:
        B.append(r"\noindent Simulation of training: not measured.\par")
    else:
        B += [r"\noindent " + tex(f"Synthetic training ({syn['path']}; {syn['setting']}): exact expected fraction "
                                  "of zero-gradient groups, start to end (mean over seeds; change +- se).") + r"\par",
              r"\begin{tabular}{rrrll}", r"$R$ & start & end & change & trend \\ \hline"]
        for R, v in syn["per_R"].items():
            B.append(rf"{R} & {v['start']:.3f} & {v['end']:.3f} & ${v['change']:+.3f} \pm {v['se']:.3f}$ & {v['trend']} \\")
        B.append(r"\end{tabular}\par")
    for r in sec["runs"]:
        B.append(r"\noindent " + tex(_run_training_text(r, "to")) + r"\par")
    if sec["runs"]:
        B.append(r"\noindent " + tex(TRAINING_RUNS_NOTE) + r"\par")
    B += _figures(sec["plots"], graphics, r"0.48\linewidth")
    return B
