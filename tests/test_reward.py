"""The answer extraction and the rewards of grpo_verify.empirical.reward on the cases where a
convention decides the score: two final-answer statements, both forms in one completion, and
partial credit near a reference of 0."""

from __future__ import annotations

import pytest

pytest.importorskip("math_verify")

from grpo_verify.empirical import reward  # noqa: E402


# -- which statement is the final answer --------------------------------------------------------
@pytest.mark.parametrize("completion, answer", [
    ("The answer is 18. Checking again: the answer is 19.", "19"),
    ("\\boxed{18} ... no, \\boxed{19}", "19"),
    ("\\boxed{18}. Checking again, the answer is 19.", "19"),
    ("The answer is 18. So \\boxed{19}", "19"),
    ("The answer is \\boxed{19}", "19"),
])
def test_the_last_final_answer_statement_counts(completion, answer):
    """Convention: of all final-answer statements ("answer is N" and \\boxed{N}, either form, the
    prompt asks for one of them), the one that comes last in the text is the answer. Why: a model
    that corrects itself states its final answer last, and the two forms are equally explicit; a
    fixed preference for \\boxed would, under the "The answer is N" instruction, score a boxed
    intermediate result instead of the answer the completion ends with. The docstring of
    extract_answer says "the last"; the code used to prefer any \\boxed{} over a later sentence."""
    assert reward.extract_answer(completion) == answer
    assert reward.extract_answer(completion, strict=True) == answer
    assert reward.binary_reward(completion, "19") == 1.0
    assert reward.binary_reward(completion, "18") == 0.0


def test_a_statement_beats_a_later_stray_number_and_strict_needs_a_statement():
    assert reward.extract_answer("\\boxed{18}, since 3 * 6 = 18 and 20 - 2 = 18 with 4 left") == "18"
    assert reward.extract_answer("3 * 6 = 18 and 4 left") == "4"
    assert reward.extract_answer("3 * 6 = 18 and 4 left", strict=True) is None
    assert reward.binary_reward("3 * 6 = 18 and 4 left", "18", strict=True) == 0.0


# -- partial credit: 1 - min(1, |pred - ref| / max(|ref|, 1)) ---------------------------------------
@pytest.mark.parametrize("completion, reference, credit", [
    ("The answer is 0.5", "0", 0.5),        # ref = 0: the distance itself, not a division by 0
    ("The answer is -0.25", "0", 0.75),
    ("The answer is 3", "0", 0.0),
    ("The answer is 0.0", "0", 1.0),        # equivalent
    ("The answer is 0.25", "0.5", 0.75),    # |ref| < 1: divided by 1, not by 0.5 (that would give 0.5)
    ("The answer is 0.75", "0.25", 0.5),    # not 1 - 0.5 / 0.25 < 0 clipped to 0
    ("The answer is 0.5", "-0.5", 0.0),
    ("The answer is -900", "-1000", 0.9),   # |ref| > 1: relative to |ref| (a negative ref too)
    ("The answer is 1100", "1000", 0.9),
    ("no number at all", "0", 0.0),
])
def test_partial_credit_near_zero_and_below_one(completion, reference, credit):
    assert reward.partial_reward(completion, reference) == pytest.approx(credit, abs=1e-12)
    assert reward.score([completion], reference, kind="partial") == [pytest.approx(credit, abs=1e-12)]
    assert reward.binary_reward(completion, reference) == (1.0 if credit == 1.0 else 0.0)


# -- strictness, number formats, non-numeric answers and score() (found by mutation testing) ---
def test_strict_applies_to_both_rewards_and_to_score():
    """Without a stated answer, strict scoring finds none (0); otherwise the last number counts."""
    completion = "I computed 12 in the end"
    assert reward.binary_reward(completion, "12") == 1.0
    assert reward.binary_reward(completion, "12", strict=True) == 0.0
    assert reward.partial_reward(completion, "12") == 1.0  # not strict by default
    assert reward.partial_reward(completion, "12", strict=True) == 0.0
    assert reward.score([completion], "12") == [1.0]  # binary and not strict by default
    assert reward.score([completion], "12", strict=True) == [0.0]
    assert reward.score([completion], "12", kind="partial", strict=True) == [0.0]


def test_score_kind_selects_binary_or_partial_credit():
    completions = ["The answer is 11", "The answer is 12"]
    assert reward.score(completions, "10") == [0.0, 0.0]  # binary by default
    assert reward.score(completions, "10", kind="binary") == [0.0, 0.0]
    assert reward.score(completions, "10", kind="partial") == pytest.approx([0.9, 0.8], rel=1e-12)


def test_last_number_loses_trailing_punctuation_only():
    assert reward.extract_answer("so the total is 12.") == "12"
    assert reward.extract_answer("so the total is 1,200,") == "1,200"
    assert reward.extract_answer("the value is .5") == ".5"


def test_partial_credit_reads_thousands_separators_and_dollar_signs():
    # 1 - |1100 - 1000| / 1000 and 1 - |12 - 10| / 10.
    assert reward.partial_reward("The answer is 1,100", "1,000") == pytest.approx(0.9, rel=1e-12)
    assert reward.partial_reward("The answer is 12", "$10") == pytest.approx(0.8, rel=1e-12)


def test_equivalent_non_numeric_answers_get_full_credit():
    """math-verify decides equivalence: 1/2 ~ 0.5 ~ \\frac{1}{2}, which float() alone could not."""
    assert reward.partial_reward("The answer is 0.5", "1/2") == 1.0
    assert reward.partial_reward("\\boxed{\\frac{1}{2}}", "0.5") == 1.0
    assert reward.binary_reward("\\boxed{\\frac{1}{2}}", "0.5") == 1.0


def test_an_answer_that_is_not_a_number_gets_no_partial_credit():
    assert reward.partial_reward("\\boxed{x}", "3") == 0.0
    assert reward.partial_reward("The answer is 3", "three") == 0.0
    assert reward.is_equivalent("no number", "12") is False
    assert reward.is_equivalent("12", "no number") is False


def test_a_boxed_answer_may_contain_one_level_of_braces():
    assert reward.extract_answer("so \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert reward.extract_answer("\\boxed{\\frac{1}{2}} then the answer is 3") == "3"
