"""Rewards: the model's final answer against the reference, judged by math-verify.

The prompt asks for "The answer is N" (or \\boxed{N}); that span is extracted. Without it the last
number of the completion is used unless ``strict``. Binary reward: 1 if
``math_verify.verify(parse(reference), parse(prediction))``. Partial credit (a continuous control):
1 - min(1, |pred - ref| / max(|ref|, 1)), 0 when no number is found.
"""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"answer\s+is[:\s]*\$?\s*(-?[\d,]*\.?\d+)", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")  # one level of nested braces: \boxed{\frac{1}{2}}
_NUMBER = re.compile(r"-?\d[\d,]*\.?\d*|-?\.\d+")


def extract_answer(completion: str, strict: bool = False) -> str | None:
    """The final-answer text of a completion: the last statement "answer is N" or \\boxed{...},
    whichever form comes later in the text (a model that corrects itself states its final answer
    last); else (not strict) the last number; None if there is none."""
    stated = [m for pattern in (_BOXED, _SENTENCE) for m in pattern.finditer(completion)]
    if stated:
        return max(stated, key=lambda m: m.start()).group(1).strip()
    if strict:
        return None
    numbers = _NUMBER.findall(completion)
    return numbers[-1].rstrip(".,") if numbers else None


def _to_float(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("$", "").strip())
    except ValueError:
        return None


def is_equivalent(reference: str, prediction: str) -> bool:
    """math-verify equivalence of two answer strings ("18" ~ "18.0" ~ "$18"; "1,000" ~ "1000")."""
    from math_verify import parse, verify
    gold, pred = parse(reference), parse(prediction)
    if not gold or not pred:
        return False
    return bool(verify(gold, pred))


def binary_reward(completion: str, reference: str, strict: bool = False) -> float:
    answer = extract_answer(completion, strict)
    return 1.0 if answer is not None and is_equivalent(reference, answer) else 0.0


def partial_reward(completion: str, reference: str, strict: bool = False) -> float:
    """1 for an equivalent answer; else 1 - min(1, |pred - ref| / max(|ref|, 1)) (the max keeps ref = 0 finite)."""
    answer = extract_answer(completion, strict)
    if answer is None:
        return 0.0
    if is_equivalent(reference, answer):
        return 1.0
    pred, ref = _to_float(answer), _to_float(reference)
    if pred is None or ref is None:
        return 0.0
    return 1.0 - min(1.0, abs(pred - ref) / max(abs(ref), 1.0))


def score(completions: list[str], reference: str, kind: str = "binary", strict: bool = False) -> list[float]:
    fn = binary_reward if kind == "binary" else partial_reward
    return [fn(c, reference, strict) for c in completions]
