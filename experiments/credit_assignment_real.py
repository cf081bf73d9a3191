"""Outcome-only reward on a real model as the number of steps grows: SmolLM2-135M on 1- to 4-digit arithmetic.

D10 (derivations/d10_credit_assignment.py) models a task of H steps whose reward is 1 iff every step is
right: the success probability is p = q^H and a group of R rollouts gives no gradient at all with
probability p^R + (1-p)^R, which tends to 1 as H grows. Adding digits to the operands of the built-in
``arith`` task (grpo_verify.empirical.data.make_arith) adds steps (one digit of the answer, one carry,
per operand digit). This script measures, per digit count, on the same model and sampler as
``python -m grpo_verify.empirical`` (its loading, prompt, sampling and math-verify reward code):

* the mean binary reward (success rate), with a 95 % bootstrap interval over prompts (rollouts of one
  prompt are not independent of each other);
* the fraction of groups whose R rewards are all equal (every GRPO advantage 0, exactly zero gradient),
  split into all-wrong and all-right, with 95 % Wilson intervals over groups;
* the i.i.d. reference z_R(pbar) = pbar^R + (1 - pbar)^R at the pooled success rate (Jensen: prompts of
  unequal difficulty make the observed fraction larger, since z_R is convex).

    python experiments/credit_assignment_real.py                  # defaults below, into runs/credit_assignment_real
    python experiments/credit_assignment_real.py --num-prompts 2 --group-size 2 --max-new-tokens 8 \\
        --model tiny-random --out /tmp/car                        # a seconds-long smoke run

Outputs in --out: groups.jsonl (one record per digit count x prompt: completions, predictions,
rewards; a rerun with the same options skips the groups already there and refuses other options),
config.json, summary.json, summary.csv, and reward_and_zero_advantage_vs_digits.png / .pdf. Every file
is written atomically.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from grpo_verify.empirical.config import _DefaultsHelpFormatter as DefaultsHelpFormatter
from grpo_verify.empirical.config import _int_list as comma_ints
from grpo_verify.empirical.config import positive_int
from grpo_verify.outputs import csv_text, output_problem, save_figure, write_atomically

OPTION_FIELDS = ("digits", "num_prompts", "group_size", "max_new_tokens", "ops", "temperature", "top_p",
                 "seed", "model", "answer_format")
FILES = ("groups.jsonl", "config.json", "summary.json", "summary.csv")


# == statistics ======================================================================================


def wilson_interval(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95 % Wilson score interval of a binomial proportion ((nan, nan) for no trials)."""
    if trials == 0:
        return (float("nan"), float("nan"))
    phat = successes / trials
    denominator = 1 + z * z / trials
    centre = (phat + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(phat * (1 - phat) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean_interval(per_prompt: list[list[float]], resamples: int = 4000, seed: int = 0) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the pooled mean, resampling prompts (clusters) with replacement."""
    if not per_prompt:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    sums = np.array([sum(rows) for rows in per_prompt], dtype=float)
    counts = np.array([len(rows) for rows in per_prompt], dtype=float)
    picks = rng.integers(0, len(per_prompt), size=(resamples, len(per_prompt)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return (float(low), float(high))


def summarise(records: list[dict], digits: tuple[int, ...], group_size: int, seed: int = 0) -> list[dict]:
    """One row per digit count: reward mean (bootstrap CI over prompts) and zero-advantage fractions (Wilson CIs)."""
    rows = []
    for d in digits:
        groups = [rec["rewards"] for rec in records if rec["digits"] == d]
        if not groups:
            continue
        flat = [x for g in groups for x in g]
        pbar = sum(flat) / len(flat)
        all_wrong = sum(1 for g in groups if max(g) == 0)
        all_right = sum(1 for g in groups if min(g) == 1)
        zero = sum(1 for g in groups if len(set(g)) == 1)
        low, high = bootstrap_mean_interval(groups, seed=seed + d)
        zl, zh = wilson_interval(zero, len(groups))
        wl, wh = wilson_interval(all_wrong, len(groups))
        rows.append({
            "digits": d, "groups": len(groups), "rollouts": len(flat),
            "reward_mean": pbar, "reward_ci_low": low, "reward_ci_high": high,
            "zero_adv_frac": zero / len(groups), "zero_adv_ci_low": zl, "zero_adv_ci_high": zh,
            "all_wrong_frac": all_wrong / len(groups), "all_wrong_ci_low": wl, "all_wrong_ci_high": wh,
            "all_right_frac": all_right / len(groups),
            "iid_zero_adv_at_pbar": pbar ** group_size + (1 - pbar) ** group_size,
            "prompts_with_any_success": sum(1 for g in groups if max(g) > 0),
            "no_answer_frac": sum(1 for rec in records if rec["digits"] == d for a in rec["predictions"] if a is None)
            / len(flat),
        })
    return rows


# == running ========================================================================================


def read_records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_records(path: Path, records: list[dict]) -> None:
    write_atomically(path, "".join(json.dumps(rec, sort_keys=True) + "\n" for rec in records))


def run(args: argparse.Namespace, log=print) -> list[dict]:
    """Sample and score every (digit count, prompt) group not yet in --out; returns all records."""
    import torch

    from grpo_verify.empirical import data, models, reward
    from grpo_verify.empirical.sampling import derived_seed, prompt_ids, sample_group

    out = Path(args.out)
    options = {name: getattr(args, name) for name in OPTION_FIELDS}
    options["digits"] = list(options["digits"])
    config_path = out / "config.json"
    if config_path.exists():
        saved = json.loads(config_path.read_text(encoding="utf-8")).get("options")
        if saved != options:
            raise SystemExit(f"{config_path} was written with other options ({saved}); use another --out")
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    loaded = models.load(args.model, torch.device("cpu"))
    log(f"loaded {loaded.info.get('id')} in {time.perf_counter() - start:.1f} s ({args.threads} torch thread(s))")
    write_atomically(config_path, json.dumps({"options": options, "model": loaded.info,
                                              "seeds": {"arith": "arith:{seed}:{digits}:{ops}",
                                                        "sampling": "derived_seed(seed, 'credit', digits, prompt)"}},
                                             indent=1, sort_keys=True, default=str) + "\n")
    records = read_records(out / "groups.jsonl")
    done = {(rec["digits"], rec["prompt"]) for rec in records}
    total = len(args.digits) * args.num_prompts
    for d in args.digits:
        for problem in data.make_arith(args.num_prompts, d, args.ops, args.seed):
            if (d, problem.index) in done:
                continue
            t0 = time.perf_counter()
            rollouts = sample_group(loaded.model, loaded.tokenizer,
                                    prompt_ids(loaded.tokenizer, problem, args.answer_format), args.group_size,
                                    temperature=args.temperature, top_p=args.top_p,
                                    max_new_tokens=args.max_new_tokens,
                                    seed=derived_seed(args.seed, "credit", d, problem.index))
            rewards = reward.score(rollouts.texts, problem.reference, "binary")
            records.append({"digits": d, "prompt": problem.index, "question": problem.question,
                            "reference": problem.reference, "completions": rollouts.texts,
                            "predictions": [reward.extract_answer(t) for t in rollouts.texts],
                            "completion_tokens": rollouts.completion_tokens, "rewards": rewards,
                            "seconds": round(time.perf_counter() - t0, 2)})
            write_records(out / "groups.jsonl", records)
            log(f"[{len(records)}/{total}] digits={d} prompt={problem.index} {problem.question!r} = "
                f"{problem.reference}: rewards {''.join(str(int(x)) for x in rewards)} "
                f"({time.perf_counter() - t0:.1f} s)")
    return records


def write_outputs(out: Path, rows: list[dict], args: argparse.Namespace, seconds: float) -> list[Path]:
    write_atomically(out / "summary.json", json.dumps({"rows": rows, "group_size": args.group_size,
                                                       "wall_seconds": round(seconds, 1)}, indent=1) + "\n")
    write_atomically(out / "summary.csv", csv_text(rows))
    return plot(out, rows, args.group_size)


def plot(out: Path, rows: list[dict], group_size: int) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    digits = [row["digits"] for row in rows]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    mean = np.array([row["reward_mean"] for row in rows])
    axes[0].errorbar(digits, mean, yerr=[mean - [r["reward_ci_low"] for r in rows],
                                         [r["reward_ci_high"] for r in rows] - mean], fmt="o-", capsize=3)
    axes[0].set(xlabel="digits per operand", ylabel="mean binary reward", title="success rate (95 % bootstrap CI "
                "over prompts)", xticks=digits)
    zero = np.array([row["zero_adv_frac"] for row in rows])
    axes[1].errorbar(digits, zero, yerr=[zero - [r["zero_adv_ci_low"] for r in rows],
                                         [r["zero_adv_ci_high"] for r in rows] - zero], fmt="o-", capsize=3,
                     label="all rewards equal (observed)")
    axes[1].plot(digits, [row["all_wrong_frac"] for row in rows], "s--", label="all wrong")
    axes[1].plot(digits, [row["iid_zero_adv_at_pbar"] for row in rows], "k:", label=r"$\bar p^R + (1-\bar p)^R$")
    axes[1].set(xlabel="digits per operand", ylabel="fraction of groups", ylim=(-0.02, 1.02), xticks=digits,
                title=f"zero-advantage groups, R = {group_size} (95 % Wilson CI)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    written = save_figure(fig, out / "reward_and_zero_advantage_vs_digits")
    plt.close(fig)
    return written


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=DefaultsHelpFormatter)
    ap.add_argument("--digits", type=comma_ints, default=(1, 2, 3, 4), help="digit counts per operand, e.g. 1,2,3,4")
    ap.add_argument("--num-prompts", type=positive_int, default=8, help="problems per digit count")
    ap.add_argument("--group-size", type=positive_int, default=8, help="R, completions per problem")
    ap.add_argument("--max-new-tokens", type=positive_int, default=64)
    ap.add_argument("--ops", default="+", help="operators of the arith task, a subset of '+-*'")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--answer-format", default="sentence", choices=("sentence", "boxed"))
    ap.add_argument("--seed", type=int, default=0, help="problems and sampling")
    ap.add_argument("--model", default="smollm2-135m", help="a preset of grpo_verify.empirical.models, a hub id, a "
                    "folder or a .gguf")
    ap.add_argument("--threads", type=positive_int, default=1, help="torch threads")
    ap.add_argument("--out", default="runs/credit_assignment_real",
                    help="output folder (the committed results: experiments/results/credit_assignment_real)")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if any(d < 1 for d in args.digits) or len(set(args.digits)) != len(args.digits):
        ap.error(f"--digits must be distinct whole numbers >= 1, got {','.join(map(str, args.digits))}")
    if args.group_size < 2:
        ap.error("--group-size must be at least 2 (a group of one has no advantage)")
    if not args.ops or set(args.ops) - set("+-*"):
        ap.error(f"--ops must be a non-empty subset of '+-*', got {args.ops!r}")
    if not args.temperature > 0 or not 0 < args.top_p <= 1:
        ap.error("--temperature must be > 0 and --top-p in (0, 1]")
    problem = output_problem(Path(args.out), "folder", FILES)
    if problem:
        ap.error(f"--out {args.out}: {problem}")
    start = time.perf_counter()
    records = run(args)
    rows = summarise(records, tuple(args.digits), args.group_size, args.seed)
    written = write_outputs(Path(args.out), rows, args, time.perf_counter() - start)
    for row in rows:
        print(f"digits={row['digits']}: reward {row['reward_mean']:.3f} [{row['reward_ci_low']:.3f}, "
              f"{row['reward_ci_high']:.3f}]  zero-advantage groups {row['zero_adv_frac']:.3f} "
              f"[{row['zero_adv_ci_low']:.3f}, {row['zero_adv_ci_high']:.3f}] (all wrong {row['all_wrong_frac']:.3f}, "
              f"iid reference {row['iid_zero_adv_at_pbar']:.3f})")
    print(f"wrote {len(written) + len(FILES)} files to {args.out} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
