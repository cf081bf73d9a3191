"""Problems: GSM8K (a local jsonl or the hub copy) and a generated arithmetic task.

A GSM8K answer ends with ``#### N``; the reference is N with thousands separators removed.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

HUB_DATASET = ("openai/gsm8k", "main")


@dataclass(frozen=True)
class Problem:
    index: int        # position in the task's problem list (after --prompt-offset)
    question: str
    reference: str    # the final answer, e.g. "1000" or "-3"
    source: str       # "file:line", "hub:split[i]" or "arith"


class DataError(ValueError):
    """Bad input data; the message names the file and line."""


def reference_from_answer(answer: str) -> str:
    """The number after the last '####', commas removed ("1,000" -> "1000")."""
    if "####" not in answer:
        raise ValueError("answer has no '#### N' final-answer marker")
    ref = answer.rsplit("####", 1)[1].strip().replace(",", "")
    if not ref:
        raise ValueError("empty final answer after '####'")
    return ref


def load_gsm8k_file(path: str | Path, limit: int | None = None, offset: int = 0) -> list[Problem]:
    """Read a GSM8K-format jsonl; every problem is validated, and a bad one raises DataError naming file:line."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"dataset file not found: {path}")
    problems: list[Problem] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict) or not isinstance(row.get("question"), str) \
                        or not isinstance(row.get("answer"), str):
                    raise ValueError("expected an object with string fields 'question' and 'answer'")
                ref = reference_from_answer(row["answer"])
            except json.JSONDecodeError as err:  # its message repeats "line 1": give the column only
                raise DataError(f"{path}:{lineno}: malformed GSM8K line: not JSON ({err.msg} at column "
                                f"{err.colno})") from None
            except ValueError as err:
                raise DataError(f"{path}:{lineno}: malformed GSM8K line: {err}") from None
            problems.append(Problem(len(problems), row["question"], ref, f"{path.name}:{lineno}"))
    return problem_window(problems, limit, offset, str(path))


def load_gsm8k_hub(split: str = "test", limit: int | None = None, offset: int = 0) -> list[Problem]:
    """GSM8K from the hub (openai/gsm8k, config main) through ``datasets``."""
    try:
        import datasets
        rows = datasets.load_dataset(*HUB_DATASET, split=split)
    except Exception as err:  # noqa: BLE001 - offline, missing package, bad split: one clear message
        raise DataError(f"could not load {HUB_DATASET[0]} ({HUB_DATASET[1]}, split {split!r}) from the hub "
                        f"({type(err).__name__}: {str(err)[:200]}); offline? pass --dataset-file PATH.jsonl (a GSM8K jsonl), or "
                        "--task arith (generated problems, no network)") from None
    problems = [Problem(i, r["question"], reference_from_answer(r["answer"]), f"hub:{split}[{i}]")
                for i, r in enumerate(rows)]
    return problem_window(problems, limit, offset, HUB_DATASET[0])


def make_arith(count: int, digits: int = 2, ops: str = "+-*", seed: int = 0) -> list[Problem]:
    """``count`` problems 'a op b' with operands of ``digits`` digits; the same seed gives the same list.

    More digits and '*' make them harder, so a weak model gets mixed groups at some difficulty."""
    rng = random.Random(f"arith:{seed}:{digits}:{ops}")  # str seeds are hashed stably (not by PYTHONHASHSEED)
    lo, hi = (0 if digits == 1 else 10 ** (digits - 1)), 10 ** digits - 1
    out = []
    for i in range(count):
        a, b, op = rng.randint(lo, hi), rng.randint(lo, hi), rng.choice(ops)
        value = a + b if op == "+" else a - b if op == "-" else a * b
        out.append(Problem(i, f"What is {a} {op} {b}?", str(value), "arith"))
    return out


def problem_window(problems: list[Problem], limit: int | None, offset: int, where: str) -> list[Problem]:
    chosen = problems[offset:offset + limit if limit is not None else None]
    if not chosen:
        raise DataError(f"{where}: no problems left after --prompt-offset {offset} ({len(problems)} in total)")
    if limit is not None and len(chosen) < limit:
        print(f"--num-prompts {limit}: {where} has {len(problems)} problems"
              + (f" ({len(problems) - offset} after --prompt-offset {offset})" if offset else "")
              + f"; using all {len(chosen)}", flush=True)
    return [Problem(i, p.question, p.reference, p.source) for i, p in enumerate(chosen)]
