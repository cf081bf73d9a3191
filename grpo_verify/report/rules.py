"""The verdict rules, in code: from derivation statuses, property-test outcomes and measurements to verdicts.

Every claim gets two verdicts, decided by the same rules for every claim:

(a) **as worded** -- confirmed, refuted, not yet measured or inconclusive -- on the claim exactly as the
    abstract words it, from the results cited for it (role SUPPORTS: proves the claim as worded;
    REFUTES: a proved counterexample to it; WITNESS: a proved instance exhibiting what the claim says can
    happen; CONTEXT: shown, not used);
(b) **the strongest proved form** -- proved, proved for the listed values only, or not established -- on
    the statement we prove in the claim's place, with its conditions written into it, from the results
    cited for that statement.

A claim true only in a regime (only for $p > 1/2$, only to first order, only under an extra
assumption) is therefore refuted as worded *if a counterexample outside the regime is proved*, and
its restricted form is proved; without such a counterexample the wording is inconclusive, never
"confirmed under conditions": there is no conditional verdict at level (a).

Each rule is a small pure function on plain data, so each verdict can be reached (and tested) from
synthetic inputs. Level (a), in the order the rules apply:

1. Evidence incomplete -> INCONCLUSIVE. Any property test that failed, errored, was skipped, is
   missing from the run, or was not run at all (``--skip-tests``), or any cited derivation result
   that is not proved (unproved or refuted by the engine), makes the verdict INCONCLUSIVE with the
   reason named. In particular a failing or missing property test can never yield CONFIRMED.
0. A claim about the paper's own (unpublished) derivations or characterisations -> NOT ASSESSABLE AS
   WORDED, before anything else: our theorems do not confirm the paper's; level (b) is our reconstruction.
2. Theorem claims (and findings):
   a. a proved result cited as a counterexample to the claim as worded, in the claim's own setting ->
      REFUTED, naming it (the regime rule: a claim true only in a regime is refuted by a counterexample
      outside it, whatever the claim);
   b. else counterexamples that hold only in a model (a toy chain under one optimizer, say) -> NOT
      SUPPORTED IN A MODEL, naming the model and its assumptions: a toy model does not refute a
      qualitative claim; if results cited as supporting in a model (a setting named) bear the claim out
      under other assumptions of a model, the claim is INCONCLUSIVE, both named;
   b'. support that holds only in a model never confirms: with no other support -> INCONCLUSIVE;
   c. else no supporting result -> INCONCLUSIVE (neither proved nor refuted);
   c'. else only examples (WITNESS) support it -> INCONCLUSIVE: an instance shows that something can
      happen, not that it holds for every value;
   d. else a supporting result proved only for a range of values or only for an instance (scope
      "instance (R = 4)", a statement with no free symbol) -> INCONCLUSIVE (the claim speaks of every
      value; the range goes to level (b)); an example's instance scope is what it is for, and counts;
   e. else every supporting result proved for every value (symbolically) -> CONFIRMED, or CONFIRMED
      (DEFINITIONAL) for a claim true by the estimator's definition.
   A simulation that contradicts the claim's trend (:func:`trend` = "falls" for some R) downgrades a
   confirmed verdict to INCONCLUSIVE.
3. Empirical claims (the rank claim): no run in the paper's setting (the paper's model, real
   weights, the paper's task) -> NOT YET MEASURED, whatever was measured elsewhere; with such a run, both
   pre-registered readings (``READINGS``: the R x R effective rank of diag(A) G, and the per-layer stable
   rank of the weight gradients) ~ 2 at every R in {2, 4, 8} -> CONFIRMED; both clearly not ~ 2 at some R
   -> REFUTED (those R named); a reading missing or the two disagreeing -> INCONCLUSIVE, both named.

Level (b): any test not passed or any cited result not proved -> NOT ESTABLISHED (reasons named); no
supporting result, or only examples -> NOT ESTABLISHED; some supporting result proved only for a range of
values or an instance -> PROVED FOR THE LISTED VALUES ONLY (the ranges and instances named); else PROVED.

"~ 2" (:func:`approx_two`): |mean - 2| <= ``APPROX_TOLERANCE`` and the confidence interval overlaps
[2 - tol, 2 + tol]; "not ~ 2": the interval lies entirely outside [2 - tol, 2 + tol]; otherwise
undecided; fewer than ``MIN_GROUPS`` groups: too few to say.

Controls (:func:`attribution`): a control condition is *comparable* to GRPO when its mean lies in
GRPO's confidence interval or the two intervals overlap. If every non-zero-sum control (i.i.d.
N(0,1), all-ones) is comparable to GRPO, the rank is generic to these gradients, not caused by the
zero-sum advantages; if every non-zero-sum control is clearly higher (its interval above GRPO's)
while the centred random control is comparable, the low rank is consistent with a zero-sum effect;
otherwise mixed. The raw-reward weighting is shown but not used: binary rewards zero the row of
every failed rollout, so diag(r) G has rank at most the number of successes - it measures the
weighting's support, not the absence of a zero-sum constraint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence

from grpo_verify.proof import Status
from grpo_verify.proof.check import SYMBOLIC  # the scope of a result proved for every value of its free symbols


class Verdict(str, Enum):
    """Level (a): the claim as worded."""

    CONFIRMED = "confirmed"
    DEFINITIONAL = "confirmed (definitional)"
    REFUTED = "refuted"
    NOT_SUPPORTED_IN_MODEL = "not supported in a model"
    NOT_ASSESSABLE = "not assessable as worded"
    NOT_MEASURED = "not yet measured"
    INCONCLUSIVE = "inconclusive"


class Nature(str, Enum):
    """What a theorem claim is about, which decides what its wording can be checked against."""

    THEOREM = "theorem"  # a mathematical statement we can prove or refute
    DEFINITIONAL = "definitional"  # true by the definition of the estimator: confirmed, and said so
    ABOUT_THE_PAPER = "about the paper's own derivations"  # unpublished: not assessable; level (b) is ours


class Standing(str, Enum):
    """Level (b): the strongest statement proved in the claim's place."""

    PROVED = "proved"
    PROVED_FOR_VALUES = "proved for the listed values only"
    NOT_ESTABLISHED = "not established"


class Role(str, Enum):
    """What a cited derivation result does for a claim as worded (level a) or for its strongest form (b)."""

    SUPPORTS = "supports"  # proves (part of) the claim as worded, or of the strongest form
    REFUTES = "counterexample"  # a proved counterexample to the claim as worded (level a only)
    # a proved instance exhibiting what a statement says can happen ("rank 4 at R = 4", "b* depends on the
    # parametrisation"): one instance proves an existence statement, so its instance scope does not make the
    # verdict "for the listed values only"; it never stands alone for a statement about every value
    WITNESS = "example"
    CONTEXT = "context"  # related fact shown for reading; must still be proved


# -- tolerances, stated in the document ---------------------------------------------------------
TARGET_RANK = 2.0
APPROX_TOLERANCE = 0.5
MIN_GROUPS = 3
TREND_SE = 2.0  # a change counts as a rise (fall) when mean -/+ 2 standard errors stays above (below) 0
PRIMARY = ("weighted", "grpo", "effective_rank")  # diag(A) G with GRPO advantages, effective rank
LAYER_READING = ("layers", "grpo", "stable_rank")  # each 2-D weight's GRPO gradient, stable rank (median over layers)
# The two readings of "the gradient matrix has effective rank ~2", registered before any run of the paper's model
# (Nemotron-4B on GSM8K): neither can be chosen after seeing the numbers, and both must agree to decide the claim.
READINGS = ((PRIMARY, "effective rank of the R x R Gram of diag(A) G (whole-model per-rollout gradients)"),
            (LAYER_READING, "stable rank of each layer's weight gradient sum_i A_i dl_i/dW (median over 2-D weights)"))
ZERO_SUM_CONTROLS = ("gaussian_centred",)
NON_ZERO_SUM_CONTROLS = ("gaussian", "ones")
SHOWN_CONTROLS = NON_ZERO_SUM_CONTROLS + ("rewards",) + ZERO_SUM_CONTROLS  # "rewards": shown, not used

PASSED = "passed"
TEST_OUTCOMES = ("passed", "failed", "error", "skipped", "missing", "not run")


@dataclass(frozen=True)
class DerivationEvidence:
    name: str
    family: str  # "D7"
    role: Role
    status: Status
    scope: str  # "symbolic", a range such as "R = 2..16", or "instance (R = 4)"
    condition: str = ""  # what the counterexample shows (REFUTES)
    setting: str = ""  # "" in the claim's own setting; else the model (and assumptions) it holds in


@dataclass(frozen=True)
class TestEvidence:
    __test__ = False  # not a pytest test class

    selector: str  # a pytest node id (function level, or with a parameter id)
    outcome: str  # one of TEST_OUTCOMES (the worst over the selector's cases)
    cases: tuple[tuple[str, str, str], ...] = ()  # (node id, outcome, message)


@dataclass
class Decision:
    """Level (a)."""

    verdict: Verdict
    reasons: list[str] = field(default_factory=list)
    counterexamples: list[str] = field(default_factory=list)


@dataclass
class FormDecision:
    """Level (b)."""

    standing: Standing
    reasons: list[str] = field(default_factory=list)


# -- rule 1: incomplete evidence ------------------------------------------------------------------
def evidence_gaps(derivations: Sequence[DerivationEvidence], tests: Sequence[TestEvidence] | None) -> list[str]:
    """Reasons the evidence is incomplete; empty when every cited result is proved and every test passed."""
    gaps = []
    if tests is None:
        gaps.append("property tests not run in this build (--skip-tests)")
    else:
        if not tests:
            gaps.append("no property test is mapped to this claim")
        for t in tests:
            if t.outcome != PASSED:
                gaps.append(f"property test {t.selector}: {t.outcome}")
    for d in derivations:
        if not d.status.passed:
            gaps.append(f"derivation {d.family} {d.name}: {d.status.value}")
    return gaps


# -- rule 2: theorem claims, as worded -------------------------------------------------------------
_ONLY_EXAMPLES = ("only examples are cited: an instance shows that something can happen, not that it holds for "
                  "every value")


def _finite_scopes(derivations: Sequence[DerivationEvidence]) -> list[str]:
    """Supporting results proved for a range of values or for an instance only (an example's instance scope is
    its point, and is not listed)."""
    return [f"{d.family} {d.name} is proved for {d.scope} only" for d in derivations
            if d.role is Role.SUPPORTS and d.scope != SYMBOLIC]


def theorem_verdict(derivations: Sequence[DerivationEvidence], tests: Sequence[TestEvidence] | None,
                    nature: Nature = Nature.THEOREM) -> Decision:
    """Level (a) for a theorem claim, from the results cited for the claim as worded."""
    if nature is Nature.ABOUT_THE_PAPER:
        return Decision(Verdict.NOT_ASSESSABLE, ["the claim is about the paper's own derivations, which are not "
                                                 "public: our theorems neither confirm nor refute them; level (b) "
                                                 "is our reconstruction, not the paper's"])
    gaps = evidence_gaps(derivations, tests)
    if gaps:
        return Decision(Verdict.INCONCLUSIVE, gaps)
    refuting = [d for d in derivations if d.role is Role.REFUTES]
    own = [d for d in refuting if not d.setting]
    if own:
        return Decision(Verdict.REFUTED, [f"{len(own)} proved counterexample(s) to the claim as worded, in its own "
                                          "setting"],
                        counterexamples=[f"{d.family} {d.name}: {d.condition}" for d in own])
    in_model = [d for d in derivations if d.role is Role.SUPPORTS and d.setting]
    if refuting and in_model:  # one model, two answers under different assumptions: the claim is not decided
        against = "; ".join(dict.fromkeys(d.setting for d in refuting))
        for_it = "; ".join(dict.fromkeys(d.setting for d in in_model))
        return Decision(Verdict.INCONCLUSIVE,
                        [f"one model, two answers: it contradicts the claim under some assumptions ({against}) and "
                         f"bears it out under others ({for_it})"],
                        counterexamples=[f"{d.family} {d.name}: {d.condition} (holds in {d.setting})"
                                         for d in refuting])
    if refuting:  # a qualitative claim one model contradicts: not refuted, and the model is named
        return Decision(Verdict.NOT_SUPPORTED_IN_MODEL,
                        [f"contradicted only in a model, not in the claim's own setting: {d.setting}"
                         for d in dict((d.setting, d) for d in refuting).values()],
                        counterexamples=[f"{d.family} {d.name}: {d.condition} (holds in {d.setting})"
                                         for d in refuting])
    supporting = [d for d in derivations if d.role in (Role.SUPPORTS, Role.WITNESS) and not d.setting]
    if not supporting and in_model:  # a model bears a qualitative claim out: it does not prove it
        return Decision(Verdict.INCONCLUSIVE, [f"borne out only in a model ({d.setting})" for d in
                                               dict((d.setting, d) for d in in_model).values()])
    if not supporting:
        return Decision(Verdict.INCONCLUSIVE, ["no proved result decides the claim as worded: none proves it and "
                                               "no counterexample is proved"])
    if all(d.role is Role.WITNESS for d in supporting):
        return Decision(Verdict.INCONCLUSIVE, [_ONLY_EXAMPLES])
    finite = _finite_scopes(supporting)
    if finite:
        return Decision(Verdict.INCONCLUSIVE, ["the claim speaks of every value; " + "; ".join(finite)])
    done = "every supporting result proved for every value" + _examples_note(supporting) + \
        " and every property test passed"
    if nature is Nature.DEFINITIONAL:
        return Decision(Verdict.DEFINITIONAL, ["true by the definition of the estimator: " + done])
    return Decision(Verdict.CONFIRMED, [done])


def _examples_note(derivations: Sequence[DerivationEvidence]) -> str:
    examples = [d for d in derivations if d.role is Role.WITNESS]
    return f" ({len(examples)} example(s) proved at their instances)" if examples else ""


# -- level (b): the strongest proved form ---------------------------------------------------------
def strongest_form_standing(derivations: Sequence[DerivationEvidence],
                            tests: Sequence[TestEvidence] | None) -> FormDecision:
    """Level (b), from the results cited for the strongest statement (roles SUPPORTS, WITNESS or CONTEXT)."""
    if any(d.role is Role.REFUTES for d in derivations):
        raise ValueError("a counterexample belongs to the claim as worded, not to the statement proved instead")
    gaps = evidence_gaps(derivations, tests)
    if gaps:
        return FormDecision(Standing.NOT_ESTABLISHED, gaps)
    supporting = [d for d in derivations if d.role is Role.SUPPORTS]
    examples = [d for d in derivations if d.role is Role.WITNESS]
    if not supporting:
        return FormDecision(Standing.NOT_ESTABLISHED, [_ONLY_EXAMPLES if examples else "no result is cited for it"])
    finite = _finite_scopes(supporting)
    if finite:
        return FormDecision(Standing.PROVED_FOR_VALUES, finite)
    return FormDecision(Standing.PROVED, [f"{len(supporting)} cited result(s) proved for every value"
                                          + _examples_note(examples) + "; every property test passed"])


def with_simulation(decision: Decision, trends: dict[str, str]) -> Decision:
    """A simulated trend that contradicts a "rises" claim makes a positive verdict inconclusive."""
    falling = [R for R, t in trends.items() if t == "falls"]
    if falling and decision.verdict is Verdict.CONFIRMED:
        return Decision(Verdict.INCONCLUSIVE, decision.reasons + [f"the simulation shows a fall at R = "
                                                                  f"{', '.join(falling)}"])
    return decision


def trend(change_mean: float, change_se: float) -> str:
    """"rises" / "falls" / "flat" from a start-to-end change and its standard error."""
    if not (math.isfinite(change_mean) and math.isfinite(change_se)):
        return "flat"
    if change_mean - TREND_SE * change_se > 0:
        return "rises"
    if change_mean + TREND_SE * change_se < 0:
        return "falls"
    return "flat"


# -- rule 3: the empirical rank claim -------------------------------------------------------------
APPROX = "~2"
NOT_APPROX = "not ~2"
UNDECIDED = "undecided"
TOO_FEW = "too few groups"


def approx_two(mean: float, ci_low: float, ci_high: float, n: int) -> str:
    lo_band, hi_band = TARGET_RANK - APPROX_TOLERANCE, TARGET_RANK + APPROX_TOLERANCE
    if n < MIN_GROUPS or not all(math.isfinite(x) for x in (mean, ci_low, ci_high)):
        return TOO_FEW
    overlaps = ci_low <= hi_band and ci_high >= lo_band
    if abs(mean - TARGET_RANK) <= APPROX_TOLERANCE and overlaps:
        return APPROX
    if not overlaps:
        return NOT_APPROX
    return UNDECIDED


def series_status(per_R: dict[int, str]) -> str:
    """Combine approx_two over R: "~2 at R = 2, 4, 8" (every R measured, named: a run of R = 2
    alone must not read as "every R"), "not ~2 at R = ...", or undecided."""
    if not per_R:
        return TOO_FEW
    bad = [R for R, s in sorted(per_R.items()) if s == NOT_APPROX]
    if bad:
        return f"{NOT_APPROX} at R = {', '.join(map(str, bad))}"
    if all(s == APPROX for s in per_R.values()):
        return f"{APPROX} at R = {', '.join(map(str, sorted(per_R)))}"
    if all(s == TOO_FEW for s in per_R.values()):
        return TOO_FEW
    return UNDECIDED


def rank_claim_verdict(paper_setting_rows: dict[int, dict] | None, tests: Sequence[TestEvidence] | None,
                       derivations: Sequence[DerivationEvidence] = (), measured_instead: str = "",
                       layer_rows: dict[int, dict] | None = None) -> Decision:
    """The rank claim on a run in the paper's setting, read by the two readings registered before any such run
    (``READINGS``): ``paper_setting_rows`` = {R: summary row of PRIMARY}, ``layer_rows`` = {R: row of
    LAYER_READING}. Confirmed only when both are ~2 at R = 2, 4, 8; refuted only when both are clearly not ~2
    at some R (each named); a missing reading or readings that disagree leave it inconclusive, both named."""
    if paper_setting_rows is None:
        reasons = ["not yet measured on Nemotron-4B (no run of the paper's model with real weights on GSM8K)"]
        if measured_instead:
            reasons.append(f"measured instead: {measured_instead}")
        return Decision(Verdict.NOT_MEASURED, reasons)
    gaps = evidence_gaps(derivations, tests)
    if gaps:
        return Decision(Verdict.INCONCLUSIVE, gaps)
    readings = [(READINGS[0][1], paper_setting_rows), (READINGS[1][1], layer_rows)]
    measured = [(label, rows) for label, rows in readings if rows]
    per_R = {label: {R: approx_two(r["mean"], r["ci_low"], r["ci_high"], r["n"]) for R, r in rows.items()}
             for label, rows in measured}
    statuses = {label: series_status(per_R[label]) for label, _rows in measured}
    named = "; ".join(f"{label}: {status}" for label, status in statuses.items())
    missing = [label for label, rows in readings if not rows]
    if missing:
        return Decision(Verdict.INCONCLUSIVE, [f"pre-registered reading not measured: {', '.join(missing)}"
                                               + (f" ({named})" if named else "")])
    bad = {label: [f"{label}, R = {R}: {_fmt_row(rows[R])}" for R in sorted(rows) if per_R[label][R] == NOT_APPROX]
           for label, rows in measured}
    if all(bad.values()):
        return Decision(Verdict.REFUTED, [named], counterexamples=[b for label in bad for b in bad[label]])
    every_R = all(set(rows) >= {2, 4, 8} for _label, rows in measured)
    if every_R and all(status.startswith(APPROX) for status in statuses.values()):
        return Decision(Verdict.CONFIRMED, [named])
    return Decision(Verdict.INCONCLUSIVE, [("the two pre-registered readings disagree: " if any(bad.values())
                                            else "") + named])


def _fmt_row(r: dict) -> str:
    return f"{r['mean']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}] (n = {r['n']})"


# -- controls -------------------------------------------------------------------------------------
def comparable(grpo: dict, control: dict) -> bool:
    lo, hi = grpo["ci_low"], grpo["ci_high"]
    return lo <= control["mean"] <= hi or (control["ci_low"] <= hi and control["ci_high"] >= lo)


def clearly_higher(grpo: dict, control: dict) -> bool:
    return control["ci_low"] > grpo["ci_high"]


GENERIC = "generic: the controls' rank is comparable, so low rank is not caused by zero-sum advantages"
ZERO_SUM_EFFECT = "consistent with a zero-sum effect: non-zero-sum controls are clearly higher"
MIXED = "mixed"
NO_CONTROLS = "no controls measured"


def attribution(grpo: dict | None, controls: dict[str, dict]) -> str:
    if grpo is None:
        return NO_CONTROLS
    others = [controls[c] for c in NON_ZERO_SUM_CONTROLS if c in controls]
    if not others:
        return NO_CONTROLS
    if all(comparable(grpo, c) for c in others):
        return GENERIC
    centred = [controls[c] for c in ZERO_SUM_CONTROLS if c in controls]
    if all(clearly_higher(grpo, c) for c in others) and centred and all(comparable(grpo, c) for c in centred):
        return ZERO_SUM_EFFECT
    return MIXED


def combine_attributions(values: Iterable[str]) -> str:
    values = [v for v in values if v != NO_CONTROLS]
    if not values:
        return NO_CONTROLS
    if all(v == GENERIC for v in values):
        return GENERIC
    if all(v == ZERO_SUM_EFFECT for v in values):
        return ZERO_SUM_EFFECT
    return MIXED


# -- which checker proved a cited result ------------------------------------------------------------
class Checker(str, Enum):
    OURS = "our kernel"
    BOTH = "our kernel and Coq"  # checked twice
    COQ = "Coq"  # our kernel proves it only for a range, or not at all; Coq for every value
    DISAGREE = "disagreement"  # our kernel refutes what a Coq theorem mirroring it proves: a bug in one of them


@dataclass(frozen=True)
class Checked:
    status: Status  # what the verdict rules read
    scope: str
    checker: Checker
    note: str  # one line: which Coq theorems, and whether this build checked them


def checked_by(status: Status, scope: str, coq_theorems: Sequence[str], coq_checked: bool,
               coq_state: str) -> Checked:
    """Combine our kernel's status of a result with its Coq second proofs (``coq_theorems``, mirrored by name)
    and whether this build checked them (``coq_checked``: every test of tests/test_coq.py passed;
    ``coq_state`` says what happened otherwise). A Coq proof counts only when checked in this build; then it
    makes a result proved (for every value) where our kernel proves it only for a range or cannot decide it.
    It never outweighs a refutation: that is reported as a disagreement and stays refuted."""
    names = ", ".join(coq_theorems)
    if not coq_theorems:
        return Checked(status, scope, Checker.OURS, "no Coq proof")
    if not coq_checked:
        return Checked(status, scope, Checker.OURS, f"its Coq proof ({names}) was not checked in this build: {coq_state}")
    if status is Status.PROVED:
        return Checked(status, scope, Checker.BOTH, f"checked twice: our kernel and Coq ({names})")
    if status is Status.REFUTED:
        return Checked(status, scope, Checker.DISAGREE,
                       f"our kernel refutes it but Coq proves {names}: a bug in one of the two, or a Coq theorem "
                       "about another statement")
    return Checked(Status.PROVED, SYMBOLIC, Checker.COQ,
                   f"proved by Coq ({names}); our kernel: {status.value} ({scope})")
