"""Does outcome-only reward make the GRPO gradient sparse, "more so as training goes on"?

A small on-policy GRPO run (exact gradients of the sampled surrogate, ``grpo_verify.training``) on K
prompts of varied difficulty with binary rewards, for several group sizes R and seeds. Per step it
logs, before the update:

* sampled: the fraction of groups with all advantages 0, ||g_hat||, the fraction of near-zero gradient
  coordinates (|g_j| <= abs_threshold and |g_j| <= rel_threshold * max|g|) and of structurally zero
  ones (no group with a non-zero advantage touches them), mean effective / stable rank of the
  per-group matrices G, diag(A) G and centred G (``grpo_verify.rank``);
* exact, by enumeration: p_k per prompt and the expected fraction of zero-gradient groups
  (1/K) sum_k p_k^R + (1 - p_k)^R (D6), i.e. the expected number divided by K.

D6 proves, to first order in the step size and for the no-std update, that p drifts up, so that
p^R + (1-p)^R falls while p < 1/2 and rises once p > 1/2; finite steps are what this run measures.

    python experiments/synthetic_training.py                    # the defaults below, into runs/synthetic_training
    python experiments/synthetic_training.py --quick --out /tmp/st
    python experiments/synthetic_training.py --steps 400 --seeds 0,1,2 --group-sizes 4 --lr 1 --advantage dr_grpo

The committed results (experiments/results/synthetic_training/README.md) are the defaults with
``--out experiments/results/synthetic_training`` (and ``--policy features --out
experiments/results/synthetic_training/features``). Bad options and an --out that cannot be written
(or holds parts of another config) are refused before any training.

Outputs in --out: runs/seed{S}_R{R}.csv + .json (one finished seed x R each; a rerun skips those
whose config fingerprint matches and refuses a different config), metrics.csv (one row per
seed x R x step), summary.json, and figures (PNG and PDF). Every file is written atomically.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from grpo_verify.empirical.config import _DefaultsHelpFormatter as DefaultsHelpFormatter
from grpo_verify.empirical.config import _int_list as comma_ints
from grpo_verify.empirical.config import positive_int
from grpo_verify.estimators import ADVANTAGE_KINDS
from grpo_verify.outputs import csv_text, output_problem, save_figure, write_atomically
from grpo_verify.training import (
    AdvantageFn,
    advantage_function,
    grpo_gradient,
    make_task,
    step_metrics,
    zero_gradient_probability,
)


@dataclass(frozen=True)
class Config:
    # -- what to run ------------------------------------------------------------------------------
    steps: int = 200                     # updates per run; steps + 1 rows (step 0 = the initial policy)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)   # seed -> initial parameters and sampling
    group_sizes: tuple[int, ...] = (2, 4, 8)   # R, rollouts per prompt per step
    out: str = "runs/synthetic_training"   # the committed results: --out experiments/results/synthetic_training
    # -- the task: K prompts, each a policy over V^T sequences with some correct ones ------------
    vocab_size: int = 3                  # V
    length: int = 3                      # T; V^T = 27 sequences per prompt
    correct_counts: tuple[int, ...] = (1, 2, 4, 7, 11, 16, 21, 25)  # |C_k|: initial p_k ~ |C_k| / V^T
    policy: str = "tabular"              # "tabular" (one table per prompt) or "features" (shared dense W)
    init_scale: float = 0.5              # initial parameters ~ N(0, init_scale^2)
    feature_dim: int = 8                 # d, for policy="features"
    task_seed: int = 0                   # the correct sets (and features); the same for every seed
    # -- the GRPO update --------------------------------------------------------------------------
    advantage: str = "grpo"              # grpo_verify.estimators.group_advantages kind
    eps: float = 1e-4                    # std epsilon of the grpo/population/batch kinds
    optimizer: str = "sgd"               # "sgd": theta += lr * g_hat; or "adam"
    lr: float = 2.0
    # -- metrics and reporting --------------------------------------------------------------------
    abs_threshold: float = 1e-8          # coordinate j is near zero if |g_j| <= abs_threshold
    rel_threshold: float = 1e-3          # ... or (second count) |g_j| <= rel_threshold * max_j |g_j|
    window: int = 20                     # sampled metrics: start/end = mean over the first/last `window` steps
    smooth: int = 10                     # moving-average width for noisy sampled curves in the plots
    quick: bool = False                  # 30 steps, seeds 0 1, R 2 4 (unless given explicitly)

    # Fields that change a run's numbers; a resumed output dir must agree on all of them.
    RESULT_FIELDS = ("steps", "vocab_size", "length", "correct_counts", "policy", "init_scale", "feature_dim",
                     "task_seed", "advantage", "eps", "optimizer", "lr", "abs_threshold", "rel_threshold")

    def fingerprint(self) -> str:
        payload = json.dumps({name: getattr(self, name) for name in self.RESULT_FIELDS}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


EXACT_METRICS = ("exact_zero_frac", "prob_all_groups_zero", "p_mean")
SAMPLED_METRICS = ("zero_adv_frac", "grad_norm", "frac_zero_abs", "frac_zero_rel", "frac_structural_zero",
                   "frac_untouched", "frac_degenerate_only", "erank_G", "srank_G", "erank_AG", "srank_AG",
                   "erank_AG_live", "erank_Gc", "srank_Gc")


# == one run: a seed and a group size ===============================================================


def train_one(cfg: Config, seed: int, group_size: int, advantages: AdvantageFn | None = None,
              on_step: Callable | None = None) -> list[dict]:
    """One GRPO run; rows for steps 0..cfg.steps, each measured on the policy before that step's update.

    ``advantages`` replaces the configured advantage function (for planted-bug tests); ``on_step(step,
    task, sequences, rewards, advantages, g_hat)`` is called before each update (for tests).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: extra threads only contend (10x slower on a loaded 2-core box)
    try:
        return _train(cfg, seed, group_size, advantages, on_step)
    finally:
        torch.set_num_threads(threads)


def _train(cfg: Config, seed: int, group_size: int, advantages: AdvantageFn | None, on_step: Callable | None) -> list[dict]:
    task = make_task(cfg.correct_counts, cfg.vocab_size, cfg.length, cfg.policy, cfg.init_scale,
                     cfg.feature_dim, cfg.task_seed, init_seed=seed)
    policy = task.policy
    params = list(policy.parameters())
    if cfg.optimizer == "sgd":
        optimizer = torch.optim.SGD(params, lr=cfg.lr)
    elif cfg.optimizer == "adam":
        optimizer = torch.optim.Adam(params, lr=cfg.lr)
    else:
        raise ValueError(f"optimizer must be sgd or adam, got {cfg.optimizer!r}")
    advantages = advantages or advantage_function(cfg.advantage, cfg.eps)
    generator = torch.Generator().manual_seed(1_000_003 * seed + group_size)
    rows = []
    for step in range(cfg.steps + 1):
        p = task.success_probabilities()
        z = zero_gradient_probability(p, group_size)
        sequences = policy.sample(group_size, generator)
        rewards = task.rewards(sequences)
        adv = advantages(rewards)
        loss, g_hat = grpo_gradient(policy, sequences, adv)
        row = {"seed": seed, "R": group_size, "step": step,
               "exact_zero_frac": float(z.mean()), "prob_all_groups_zero": float(z.prod()), "p_mean": float(p.mean())}
        row.update(step_metrics(g_hat, rewards, adv, policy.scores(sequences), cfg.abs_threshold, cfg.rel_threshold))
        row.update({f"p_{k}": float(value) for k, value in enumerate(p)})
        rows.append(row)
        if on_step is not None:
            on_step(step, task, sequences, rewards, adv, g_hat)
        if step < cfg.steps:
            optimizer.zero_grad(set_to_none=True)
            for param, piece in zip(params, torch.split(-g_hat, [q.numel() for q in params])):
                param.grad = piece.view_as(param).clone()  # the loss gradient, so the step ascends g_hat
            optimizer.step()
    return rows


# == files ===========================================================================================


def write_text(path: Path, text: str) -> None:
    write_atomically(path, text)


def write_csv(path: Path, rows: list[dict]) -> None:
    write_atomically(path, csv_text(rows))


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return [{key: (int(value) if key in ("seed", "R", "step") else float(value)) for key, value in row.items()}
                for row in csv.DictReader(handle)]


def part_paths(out: Path, seed: int, group_size: int) -> tuple[Path, Path]:
    stem = out / "runs" / f"seed{seed}_R{group_size}"
    return stem.with_suffix(".csv"), stem.with_suffix(".json")


def finished(cfg: Config, out: Path, seed: int, group_size: int) -> bool:
    """True if this seed x R is done in ``out`` with the same config; SystemExit if done with another."""
    data, meta = part_paths(out, seed, group_size)
    if not (data.exists() and meta.exists()):
        return False
    found = json.loads(meta.read_text())["fingerprint"]
    if found != cfg.fingerprint():
        raise SystemExit(f"{meta} was written with config fingerprint {found}, this run has {cfg.fingerprint()}; "
                         f"use another --out or delete {out / 'runs'}")
    return True


def run_all(cfg: Config, log=print) -> list[tuple[int, int]]:
    """Run every unfinished seed x R into cfg.out/runs; returns the (seed, R) pairs run now."""
    out = Path(cfg.out)
    done_now = []
    for group_size in cfg.group_sizes:
        for seed in cfg.seeds:
            if finished(cfg, out, seed, group_size):
                log(f"skip   seed={seed} R={group_size} (found in {out / 'runs'})")
                continue
            start = time.perf_counter()
            rows = train_one(cfg, seed, group_size)
            seconds = time.perf_counter() - start
            data, meta = part_paths(out, seed, group_size)
            write_csv(data, rows)  # data first: a part counts as finished only once its .json exists
            write_text(meta, json.dumps({"fingerprint": cfg.fingerprint(), "seed": seed, "R": group_size,
                                         "steps": cfg.steps, "seconds": round(seconds, 3)}, indent=1) + "\n")
            log(f"ran    seed={seed} R={group_size} in {seconds:.1f} s")
            done_now.append((seed, group_size))
    return done_now


# == summary =========================================================================================


def series(rows: list[dict], metric: str, cfg: Config) -> dict[int, np.ndarray]:
    """{R: array (seeds, steps + 1)} of one metric."""
    table = {}
    for group_size in cfg.group_sizes:
        table[group_size] = np.array([[row[metric] for row in rows if row["R"] == group_size and row["seed"] == seed]
                                      for seed in cfg.seeds])
    return table


def spread(values: np.ndarray) -> dict:
    values = np.asarray(values, dtype=float)
    sd = float(np.std(values, ddof=1)) if values.size > 1 else float("nan")
    return {"mean": float(np.mean(values)), "sd": sd, "se": sd / math.sqrt(values.size),
            "min": float(np.min(values)), "max": float(np.max(values))}


def minimum_course(values: np.ndarray) -> dict:
    """The course of a (seeds, steps + 1) series: start, minimum and end. The minimum two ways: the mean over
    seeds of each seed's minimum (and of the step where it falls; first step on ties), and the minimum of the
    seed-mean curve with its step."""
    values = np.asarray(values, dtype=float)
    curve = values.mean(axis=0)
    step = int(curve.argmin())
    return {"start": float(curve[0]), "end": float(curve[-1]),
            "per_seed_min": spread(values.min(axis=1)), "per_seed_argmin_step": spread(values.argmin(axis=1)),
            "min_of_seed_mean": float(curve[step]), "argmin_step_of_seed_mean": step}


def course_table(summary: dict) -> str:
    """Markdown table of the exact expected zero-gradient fraction's course per R (written into the README)."""
    sizes = list(summary["per_R"])
    lines = ["| exact E[zero-gradient fraction] | " + " | ".join(f"R = {r}" for r in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    rows = (("start (step 0)", lambda c: f"{c['start']:.3f}"),
            ("minimum of the seed-mean curve, at step", lambda c: f"{c['min_of_seed_mean']:.3f} at "
                                                                  f"{c['argmin_step_of_seed_mean']}"),
            ("mean of the per-seed minima (sd), at step (mean, range)",
             lambda c: f"{c['per_seed_min']['mean']:.3f} ({c['per_seed_min']['sd']:.3f}) at "
                       f"{c['per_seed_argmin_step']['mean']:.0f} ({c['per_seed_argmin_step']['min']:.0f}.."
                       f"{c['per_seed_argmin_step']['max']:.0f})"),
            (f"end (step {summary['config']['steps']})", lambda c: f"{c['end']:.3f}"))
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(cell(summary["per_R"][r]["exact_zero_frac_course"])
                                               for r in sizes) + " |")
    return "\n".join(lines)


TABLE_BEGIN, TABLE_END = "<!-- course table: generated by synthetic_training.py -->", "<!-- end of course table -->"


def update_readme(path: Path, summary: dict) -> bool:
    """Replace the generated course table between the markers of an existing README; False if none."""
    if not path.exists():
        return False
    text = path.read_text()
    if TABLE_BEGIN not in text or TABLE_END not in text:
        return False
    head, rest = text.split(TABLE_BEGIN, 1)
    tail = rest.split(TABLE_END, 1)[1]
    write_text(path, f"{head}{TABLE_BEGIN}\n{course_table(summary)}\n{TABLE_END}{tail}")
    return True


def summarise(cfg: Config, rows: list[dict]) -> dict:
    """Start vs end per R: exact metrics at step 0 and at the last step, sampled ones over the first/last
    ``window`` steps (nan-means: erank_AG_live is NaN when every group is degenerate); then over seeds."""
    window = max(1, min(cfg.window, cfg.steps + 1))
    per_r = {}
    for group_size in cfg.group_sizes:
        entry = {}
        for metric in EXACT_METRICS:
            values = series(rows, metric, cfg)[group_size]
            entry[metric] = {"start": spread(values[:, 0]), "end": spread(values[:, -1]),
                             "change": spread(values[:, -1] - values[:, 0])}
        for metric in SAMPLED_METRICS:
            values = series(rows, metric, cfg)[group_size]
            with np.errstate(all="ignore"):
                start, end = np.nanmean(values[:, :window], axis=1), np.nanmean(values[:, -window:], axis=1)
            entry[metric] = {"start": spread(start), "end": spread(end), "change": spread(end - start)}
        # The minimum of the exact expected zero-gradient fraction: D6 predicts a dip while prompts with
        # p < 1/2 climb towards 1/2, then a rise.
        exact = series(rows, "exact_zero_frac", cfg)[group_size]
        entry["exact_zero_frac_argmin_step"] = spread(exact.argmin(axis=1))
        entry["exact_zero_frac_min"] = spread(exact.min(axis=1))
        entry["exact_zero_frac_course"] = minimum_course(exact)
        # Per prompt: p and z at start and end, and how p moved. With one table per prompt a degenerate
        # group leaves p_k exactly unchanged; z_k = z_R(p_k) falls while p_k < 1/2 rises, rises after (D6).
        prompts = []
        for k, count in enumerate(cfg.correct_counts):
            p = series(rows, f"p_{k}", cfg)[group_size]
            z = zero_gradient_probability(torch.as_tensor(p), group_size).numpy()
            moves = np.diff(p, axis=1)
            prompts.append({
                "prompt": k, "correct": count,
                "p_start": spread(p[:, 0]), "p_end": spread(p[:, -1]),
                "z_start": spread(z[:, 0]), "z_end": spread(z[:, -1]),
                "frac_steps_p_rose": float((moves > 0).mean()), "frac_steps_p_fell": float((moves < 0).mean()),
                "frac_steps_p_unchanged": float((moves == 0).mean()),
                "seeds_crossing_half_upward": int(((p[:, 0] < 0.5) & (p[:, -1] > 0.5)).sum()),
            })
        entry["prompts"] = prompts
        per_r[str(group_size)] = entry
    return {"config": {f.name: getattr(cfg, f.name) for f in fields(cfg)}, "fingerprint": cfg.fingerprint(),
            "window": window, "per_R": per_r}


def format_summary(summary: dict) -> str:
    lines = [f"start -> end, mean over {len(summary['config']['seeds'])} seeds (sd); exact metrics at step 0 and "
             f"the last step, sampled ones averaged over the first/last {summary['window']} steps"]
    for group_size, entry in summary["per_R"].items():
        lines.append(f"R = {group_size}")
        for metric in EXACT_METRICS + SAMPLED_METRICS:
            s, e, c = entry[metric]["start"], entry[metric]["end"], entry[metric]["change"]
            lines.append(f"  {metric:22s} {s['mean']:9.4f} ({s['sd']:.4f}) -> {e['mean']:9.4f} ({e['sd']:.4f})"
                         f"   change {c['mean']:+.4f} +- {c['se']:.4f} se")
        m, course = entry["exact_zero_frac_argmin_step"], entry["exact_zero_frac_course"]
        lines.append(f"  exact_zero_frac {course['start']:.4f} falls to {course['min_of_seed_mean']:.4f} (seed-mean "
                     f"curve) at step {course['argmin_step_of_seed_mean']}, then -> {course['end']:.4f}; per-seed "
                     f"minima {entry['exact_zero_frac_min']['mean']:.4f} at step {m['mean']:.0f} "
                     f"(range {m['min']:.0f}..{m['max']:.0f})")
        lines.append("  prompt |C|   p start -> end    z start -> end   steps p rose/fell/same   seeds crossing 1/2 up")
        for prompt in entry["prompts"]:
            lines.append(f"  {prompt['prompt']:6d} {prompt['correct']:3d}   {prompt['p_start']['mean']:.3f} -> "
                         f"{prompt['p_end']['mean']:.3f}     {prompt['z_start']['mean']:.3f} -> "
                         f"{prompt['z_end']['mean']:.3f}    {prompt['frac_steps_p_rose']:.2f} / "
                         f"{prompt['frac_steps_p_fell']:.2f} / {prompt['frac_steps_p_unchanged']:.2f}"
                         f"       {prompt['seeds_crossing_half_upward']}")
    return "\n".join(lines)


# == plots ===========================================================================================


def moving_average(values: np.ndarray, width: int) -> np.ndarray:
    """Trailing moving average along the last axis (shorter windows at the start)."""
    if width <= 1:
        return values
    cumulative = np.cumsum(np.insert(values, 0, 0.0, axis=-1), axis=-1)
    index = np.arange(values.shape[-1])
    lower = np.maximum(0, index + 1 - width)
    return (cumulative[..., index + 1] - cumulative[..., lower]) / (index + 1 - lower)


def plot_all(cfg: Config, rows: list[dict], out: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {group_size: plt.cm.viridis(i / max(1, len(cfg.group_sizes) - 1) * 0.85)
               for i, group_size in enumerate(cfg.group_sizes)}
    steps = np.arange(cfg.steps + 1)
    written = []

    def band(ax, values, colour, label, style="-"):
        ax.plot(steps, values.mean(axis=0), style, color=colour, label=label, lw=1.5)
        ax.fill_between(steps, values.min(axis=0), values.max(axis=0), color=colour, alpha=0.15, lw=0)

    def save(fig, name):
        written.extend(save_figure(fig, out / name, bbox_inches="tight"))
        plt.close(fig)

    note = f"mean over {len(cfg.seeds)} seeds, band = min..max over seeds"
    # 1. zero-advantage fraction (sampled, smoothed) with the exact expectation
    fig, ax = plt.subplots(figsize=(6.4, 4))
    sampled, exact = series(rows, "zero_adv_frac", cfg), series(rows, "exact_zero_frac", cfg)
    for group_size in cfg.group_sizes:
        band(ax, moving_average(sampled[group_size], cfg.smooth), colours[group_size], f"R = {group_size} sampled")
        ax.plot(steps, exact[group_size].mean(axis=0), "--", color=colours[group_size], lw=1,
                label=f"R = {group_size} exact E")
    ax.set(xlabel="step", ylabel="fraction of groups with all advantages 0",
           title=f"Zero-advantage groups (sampled: {cfg.smooth}-step moving average)\n{note}")
    ax.legend(fontsize=7, ncol=2)
    save(fig, "zero_advantage_fraction")
    # 2. exact expected zero-gradient probability
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for group_size in cfg.group_sizes:
        band(ax, exact[group_size], colours[group_size], f"R = {group_size}")
        course = minimum_course(exact[group_size])  # mark the minimum of the seed-mean curve
        ax.plot([course["argmin_step_of_seed_mean"]], [course["min_of_seed_mean"]], "v", color=colours[group_size],
                ms=7, mec="black", mew=0.6)
        ax.annotate(f"min {course['min_of_seed_mean']:.3f} @ {course['argmin_step_of_seed_mean']}",
                    (course["argmin_step_of_seed_mean"], course["min_of_seed_mean"]), textcoords="offset points",
                    xytext=(4, -12), fontsize=7, color=colours[group_size])
    ax.set(xlabel="step", ylabel=r"$\frac{1}{K}\sum_k p_k^R + (1-p_k)^R$",
           title=f"Exact expected fraction of zero-gradient groups (enumeration)\n{note}")
    ax.legend(fontsize=8)
    save(fig, "exact_zero_gradient_probability")
    # 3. success probability per prompt, one panel per R
    fig, axes = plt.subplots(1, len(cfg.group_sizes), figsize=(4.2 * len(cfg.group_sizes), 3.8), sharey=True,
                             squeeze=False)
    prompt_colours = plt.cm.plasma(np.linspace(0, 0.9, len(cfg.correct_counts)))
    for ax, group_size in zip(axes[0], cfg.group_sizes):
        for k, count in enumerate(cfg.correct_counts):
            band(ax, series(rows, f"p_{k}", cfg)[group_size], prompt_colours[k], f"|C| = {count}")
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        ax.set(xlabel="step", title=f"R = {group_size}")
    axes[0][0].set_ylabel("exact success probability $p_k$")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Success probability per prompt ({note})", fontsize=9)
    save(fig, "success_probability")
    # 4. effective rank of the per-group matrices
    matrices = (("erank_G", "G (scores)"), ("erank_AG", "diag(A) G (0 for degenerate groups)"),
                ("erank_AG_live", "diag(A) G, non-degenerate groups"), ("erank_Gc", "centred G"))
    fig, axes = plt.subplots(1, len(matrices), figsize=(4 * len(matrices), 3.6), squeeze=False)
    for ax, (metric, title) in zip(axes[0], matrices):
        values = series(rows, metric, cfg)
        for group_size in cfg.group_sizes:
            smoothed = np.stack([moving_average(np.nan_to_num(v, nan=np.nanmean(v)), cfg.smooth)
                                 for v in values[group_size]])
            band(ax, smoothed, colours[group_size], f"R = {group_size}")
        ax.set(xlabel="step", title=title)
    axes[0][0].set_ylabel("mean effective rank per group")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"Effective rank of the per-group matrices ({cfg.smooth}-step moving average; {note})", fontsize=9)
    save(fig, "effective_rank")
    # 5. coordinate sparsity of g_hat
    coordinates = (("frac_zero_abs", f"|g_j| <= {cfg.abs_threshold:g}"),
                   ("frac_zero_rel", f"|g_j| <= {cfg.rel_threshold:g} max|g|"),
                   ("frac_structural_zero", "no non-degenerate group touches j"))
    fig, axes = plt.subplots(1, len(coordinates), figsize=(4.2 * len(coordinates), 3.6), sharey=True, squeeze=False)
    for ax, (metric, title) in zip(axes[0], coordinates):
        values = series(rows, metric, cfg)
        for group_size in cfg.group_sizes:
            band(ax, moving_average(values[group_size], cfg.smooth), colours[group_size], f"R = {group_size}")
        ax.set(xlabel="step", title=title)
    axes[0][0].set_ylabel("fraction of gradient coordinates")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"Near-zero coordinates of g_hat ({cfg.smooth}-step moving average; {note})", fontsize=9)
    save(fig, "near_zero_coordinates")
    return written


# == main ============================================================================================


def _int_list(what: str, minimum: int, maximum: int | None = None,
              unique: bool = True) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: comma-separated integers (grpo_verify.empirical's syntax, e.g. 2,4,8), each in
    minimum..maximum, and (if ``unique``) no repeats."""
    def parse(text: str) -> tuple[int, ...]:
        if not text.replace(",", " ").split():
            raise argparse.ArgumentTypeError(f"expected at least one {what}, comma-separated (e.g. 2,4,8); "
                                             f"got {text!r}")
        values = comma_ints(text)
        bad = [v for v in values if v < minimum or (maximum is not None and v > maximum)]
        if bad:
            allowed = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"every {what} must be {allowed}, got {', '.join(map(str, bad))}"
                                             + (GROUP_OF_ONE if what == "group size" and 1 in bad else ""))
        if unique and len(set(values)) != len(values):
            raise argparse.ArgumentTypeError(f"a {what} is repeated in {text!r}")
        return values
    return parse


GROUP_OF_ONE = " (a group of one rollout has no GRPO advantage: A = r - mean(r) = 0)"


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


PLOTS = ("zero_advantage_fraction", "exact_zero_gradient_probability", "success_probability", "effective_rank",
         "near_zero_coordinates")
OUTPUT_FILES = ("metrics.csv", "summary.json") + tuple(f"{name}{suffix}" for name in PLOTS
                                                       for suffix in (".png", ".pdf"))


def build_parser() -> argparse.ArgumentParser:
    d = Config()
    outcomes = d.vocab_size ** d.length
    parser = argparse.ArgumentParser(prog="python experiments/synthetic_training.py",
                                     description=__doc__.split("\n\n")[0], formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--steps", type=positive_int, default=None, metavar="N",
                        help=f"GRPO updates per run (default {d.steps}; 30 with --quick)")
    parser.add_argument("--seeds", type=_int_list("seed", 0), default=None, metavar="S,S,...",
                        help="seeds of the initial parameters and of sampling, e.g. 0,1,2 "
                             f"(default {','.join(map(str, d.seeds))}; 0,1 with --quick)")
    parser.add_argument("--group-sizes", type=_int_list("group size", 2), default=None, metavar="R,R,...",
                        help="group sizes R (rollouts per prompt per step, at least 2), e.g. 2,4,8 "
                             f"(default {','.join(map(str, d.group_sizes))}; 2,4 with --quick)")
    parser.add_argument("--lr", type=_positive_float, default=d.lr, help="learning rate of the optimizer")
    parser.add_argument("--advantage", choices=ADVANTAGE_KINDS, default=d.advantage,
                        help="advantage estimator (grpo_verify.estimators.group_advantages kind)")
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default=d.optimizer,
                        help="sgd: theta += lr * g_hat; adam: torch.optim.Adam on -g_hat")
    parser.add_argument("--policy", choices=("tabular", "features"), default=d.policy,
                        help="tabular: one logit table per prompt; features: one dense W shared by all prompts")
    parser.add_argument("--correct-counts", type=_int_list("correct count", 1, outcomes - 1, unique=False),
                        default=",".join(map(str, d.correct_counts)), metavar="C,C,...",
                        help=f"correct sequences |C_k| of each prompt, out of V^T = {outcomes} (initial p_k ~ "
                             f"|C_k| / {outcomes}); one prompt per value")
    parser.add_argument("--out", type=Path, default=Path(d.out), metavar="DIR",
                        help="output folder; a rerun into it skips finished parts. The committed results are "
                             "regenerated with --out experiments/results/synthetic_training")
    parser.add_argument("--quick", action="store_true", help="30 steps, seeds 0,1, R 2,4 (unless given)")
    return parser


def parse_args(argv: list[str] | None = None) -> Config:
    defaults = Config()
    parser = build_parser()
    args = parser.parse_args(argv)
    quick = {"steps": 30, "seeds": (0, 1), "group_sizes": (2, 4)} if args.quick else {}
    chosen = {name: getattr(args, name) for name in ("steps", "seeds", "group_sizes")
              if getattr(args, name) is not None}
    cfg = replace(defaults, **{**quick, **chosen}, lr=args.lr, advantage=args.advantage, optimizer=args.optimizer,
                  policy=args.policy, correct_counts=tuple(args.correct_counts), out=str(args.out), quick=args.quick)
    problem = output_problem(args.out, files=OUTPUT_FILES)
    if not problem and (args.out / "runs").exists() and not (args.out / "runs").is_dir():
        problem = f"{args.out / 'runs'} is a file; the per-run parts go in that folder"
    if not problem:
        problem = _resume_conflict(cfg)
    if problem:
        parser.error(f"--out {args.out}: {problem}")
    return cfg


def _resume_conflict(cfg: Config) -> str:
    """A finished part in cfg.out written with another config ("" if none): found before any training."""
    for group_size in cfg.group_sizes:
        for seed in cfg.seeds:
            try:
                finished(cfg, Path(cfg.out), seed, group_size)
            except SystemExit as exc:
                return str(exc)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                meta = part_paths(Path(cfg.out), seed, group_size)[1]
                return f"{meta} is unreadable ({exc}); delete it or use another --out"
    return ""


def collect(cfg: Config) -> list[dict]:
    rows = []
    for group_size in cfg.group_sizes:
        for seed in cfg.seeds:
            rows.extend(read_csv(part_paths(Path(cfg.out), seed, group_size)[0]))
    return rows


def main(argv: list[str] | None = None) -> dict:
    cfg = parse_args(argv)
    out = Path(cfg.out)
    start = time.perf_counter()
    run_all(cfg)
    rows = collect(cfg)
    write_csv(out / "metrics.csv", rows)
    summary = summarise(cfg, rows)
    compute = sum(json.loads(part_paths(out, s, r)[1].read_text())["seconds"]
                  for r in cfg.group_sizes for s in cfg.seeds)
    plot_all(cfg, rows, out)
    summary["runtime"] = {"training_seconds_all_parts": round(compute, 1),
                          "this_invocation_seconds": round(time.perf_counter() - start, 1),
                          "torch_threads_in_training": 1, "cpu_count": os.cpu_count()}
    write_text(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    update_readme(out / "README.md", summary)
    print(format_summary(summary))
    print(f"training {compute:.1f} s over all parts; this invocation {time.perf_counter() - start:.1f} s; "
          f"outputs in {out}")
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
