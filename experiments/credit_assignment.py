"""Is credit assignment what slows outcome-only GRPO on multi-step tasks? Synthetic training on exact chains.

The task of D10 (derivations/d10_credit_assignment.py): H steps, reward 1 iff every step is right; step h
after a right prefix is right with probability q_h = sigmoid(theta_h), so p = q_1 ... q_H. theta_h is the
logit difference of the path row h of grpo_verify.credit.chain_policy (a TabularAutoregressive over
{0, 1}); rows after a wrong prefix cannot change p and are left out. Each update samples R rollouts
(sampled updates: the estimators are noisy, nothing is averaged over the policy) and ascends one of

* grpo:          outcome-only GRPO, A_i = (r_i - rbar) / (sample std + 1e-4), 0 for all-equal groups;
* dr_grpo:       outcome-only, no std, A_i = r_i - rbar (D5: mean (R-1)/R grad p);
* exact_credit:  per-step credit from the current policy, sum_h (Q_h - V_h) u_ih (mean grad p) -- the best
                 a critic or process-reward model could do under the same outcome objective;
* expected:      the exact expected gradient grad p (noise-free; both dr_grpo and exact_credit have this
                 mean, dr_grpo times (R-1)/R),

each averaged over the group, with plain SGD theta <- theta + lr * g_hat for every lr of --lrs; the
number of updates until p >= --target (exact) is recorded, censored at --max-steps. Two starts: every
step at q = 1/2 (p = 2^-H: more steps, rarer success) and every H at the same p0 = --matched-p
(q = p0^(1/H): more steps at equal success probability). The script also writes D10's closed forms:
rollouts needed for SNR 1 per step, against H (theory.csv, theory.png).

    python experiments/credit_assignment.py                       # defaults, into runs/credit_assignment
    python experiments/credit_assignment.py --quick --out /tmp/ca # seconds

Outputs in --out: runs.csv (one row per start x H x method x lr x seed: steps to target), curves.csv (mean p
over seeds every --log-every updates, until every seed of that lr has reached the target), summary.json (per
start x H x method: the lr with the smallest median, its median / quartiles / number reached), theory.csv,
and steps_to_target.png/.pdf, success_curves.png/.pdf, theory.png/.pdf. Every file is written atomically.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from grpo_verify.empirical.config import _DefaultsHelpFormatter as DefaultsHelpFormatter
from grpo_verify.empirical.config import _int_list as comma_ints
from grpo_verify.empirical.config import positive_int
from grpo_verify.outputs import csv_text, output_problem, save_figure, write_atomically

METHODS = ("grpo", "dr_grpo", "exact_credit", "expected")
STARTS = ("per_step", "matched")
FILES = ("runs.csv", "curves.csv", "summary.json", "theory.csv")


@dataclass(frozen=True)
class Config:
    horizons: tuple[int, ...] = (1, 2, 4, 8)
    methods: tuple[str, ...] = METHODS
    lrs: tuple[float, ...] = (0.5, 2.0, 8.0)
    seeds: int = 5
    group_size: int = 8
    target: float = 0.9
    max_steps: int = 4000
    matched_p: float = 1 / 16
    eps: float = 1e-4
    log_every: int = 10
    out: str = "runs/credit_assignment"
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_eps: float = 1e-8
    norm_eps: float = 1e-12


# == estimators (one batch of B independent runs) =====================================================


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def path_scores(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """u_ih = 1[steps < h right] (x_ih - q_h) for rollouts x (B, R, H) and q (B, H)."""
    prefix = np.concatenate([np.ones_like(x[..., :1]), np.cumprod(x, axis=-1)[..., :-1]], axis=-1)
    return prefix * (x - q[:, None, :])


def grpo_advantages(rewards: np.ndarray, scaled: bool, eps: float) -> np.ndarray:
    """A (B, R): r - rbar, divided by (sample std + eps) if ``scaled``; all-equal groups get 0."""
    centred = rewards - rewards.mean(axis=1, keepdims=True)
    if not scaled:
        return centred
    std = rewards.std(axis=1, ddof=1, keepdims=True)
    return np.where(std > 0, centred / (std + eps), 0.0)


def outcome_terms(x: np.ndarray, q: np.ndarray, scaled: bool, eps: float) -> np.ndarray:
    """Per-rollout terms A_i u_ih, shape (B, R, H)."""
    return grpo_advantages(x.prod(axis=-1), scaled, eps)[..., None] * path_scores(x, q)


def outcome_update(x: np.ndarray, q: np.ndarray, scaled: bool, eps: float) -> np.ndarray:
    """(1/R) sum_i A_i u_i, shape (B, H)."""
    return outcome_terms(x, q, scaled, eps).mean(axis=1)


def exact_credit_terms(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-rollout terms (Q_h - V_h) u_ih, shape (B, R, H), with Q_h(right) = prod_{k>h} q_k, Q_h(wrong) = 0,
    V_h = q_h Q_h(right)."""
    later = np.concatenate([np.cumprod(q[:, ::-1], axis=1)[:, ::-1][:, 1:], np.ones_like(q[:, :1])], axis=1)
    return (x * later[:, None, :] - (q * later)[:, None, :]) * path_scores(x, q)


def exact_credit_update(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(1/R) sum_i sum_h (Q_h - V_h) u_ih, shape (B, H)."""
    return exact_credit_terms(x, q).mean(axis=1)


def expected_update(q: np.ndarray) -> np.ndarray:
    """grad p = p (1 - q_h), shape (B, H)."""
    return q.prod(axis=1, keepdims=True) * (1 - q)


def process_reward_advantages(x: np.ndarray, eps: float) -> np.ndarray:
    """Process supervision as in DeepSeekMath: step reward r_ih = 1[steps 1..h all right] (B, R, H); every one of
    the R*H step rewards of a group is normalised by the group's mean and sample std (ddof 1, + eps) over all R*H
    values (0 where they are all equal); the advantage of step h is the reward-to-go sum_{k >= h} rtilde_ik."""
    rewards = np.cumprod(x, axis=-1)
    flat = rewards.reshape(rewards.shape[0], -1)
    std = flat.std(axis=1, ddof=1)[:, None, None]
    normed = np.where(std > 0, (rewards - flat.mean(axis=1)[:, None, None]) / (std + eps), 0.0)
    return np.cumsum(normed[..., ::-1], axis=-1)[..., ::-1]


def process_reward_terms(x: np.ndarray, q: np.ndarray, eps: float) -> np.ndarray:
    """Per-rollout terms A_ih u_ih with A from :func:`process_reward_advantages`, shape (B, R, H)."""
    return process_reward_advantages(x, eps) * path_scores(x, q)


def process_reward_update(x: np.ndarray, q: np.ndarray, eps: float) -> np.ndarray:
    """(1/R) sum_i A_ih u_ih, shape (B, H)."""
    return process_reward_terms(x, q, eps).mean(axis=1)


# == optimizers (ascent; one batch of B runs; lr of shape (B, 1)) =====================================
# Each takes (g, terms, state, lr, cfg) -> (step, state): g the group estimate (B, H), terms the per-rollout
# terms (B, R, H) whose mean over R is g (None for the noise-free gradient), state a dict (empty at the start).


def sgd_step(g, terms, state, lr, cfg):
    """theta += lr g."""
    return lr * g, state


def adam_step(g, terms, state, lr, cfg):
    """Standard Adam (Kingma & Ba), bias-corrected, ascent: m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
    step = lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)."""
    b1, b2 = cfg.adam_beta1, cfg.adam_beta2
    t = state.get("t", 0) + 1
    m = b1 * state.get("m", 0.0) + (1 - b1) * g
    v = b2 * state.get("v", 0.0) + (1 - b2) * g * g
    step = lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + cfg.adam_eps)
    return step, {"t": t, "m": m, "v": v}


def normalised_step(g, terms, state, lr, cfg):
    """Per-step normalised: step_h = lr g_h / (s_h + norm_eps), s_h = sqrt((1/R) sum_i c_ih^2) the group's RMS of
    the per-rollout credit terms c_ih of step h (so |step_h| <= lr: g_h / s_h is a mean over an RMS); 0 where
    s_h = 0 (no rollout gave step h any credit)."""
    if terms is None:
        raise ValueError("the normalised update needs per-rollout terms (not defined for 'expected')")
    scale = np.sqrt((terms ** 2).mean(axis=1))
    return np.where(scale > 0, lr * g / (scale + cfg.norm_eps), 0.0), state


OPTIMIZERS = {"sgd": sgd_step, "adam": adam_step, "normalised": normalised_step}
ARMS = ("grpo+sgd", "grpo+adam", "exact_credit+sgd", "exact_credit+adam", "exact_credit+normalised",
        "process_reward+sgd", "process_reward+adam", "dr_grpo+sgd", "expected+sgd")


def split_arm(arm: str) -> tuple[str, str]:
    """'estimator+optimizer' (a bare estimator means +sgd)."""
    estimator, _, optimizer = arm.partition("+")
    optimizer = optimizer or "sgd"
    if estimator not in METHODS + ("process_reward",) or optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown arm {arm!r}")
    return estimator, optimizer


def update_terms(method: str, x: np.ndarray, q: np.ndarray, eps: float) -> np.ndarray:
    """Per-rollout terms (B, R, H) of a sampled estimator; their mean over R is ``update``."""
    if method in ("grpo", "dr_grpo"):
        return outcome_terms(x, q, method == "grpo", eps)
    if method == "exact_credit":
        return exact_credit_terms(x, q)
    if method == "process_reward":
        return process_reward_terms(x, q, eps)
    raise ValueError(f"no per-rollout terms for {method!r}")


def update(method: str, x: np.ndarray | None, q: np.ndarray, eps: float) -> np.ndarray:
    if method == "grpo":
        return outcome_update(x, q, True, eps)
    if method == "dr_grpo":
        return outcome_update(x, q, False, eps)
    if method == "exact_credit":
        return exact_credit_update(x, q)
    if method == "expected":
        return expected_update(q)
    if method == "process_reward":
        return process_reward_update(x, q, eps)
    raise ValueError(f"unknown method {method!r}")


# == training ========================================================================================


def initial_q(start: str, horizon: int, matched_p: float) -> float:
    return 0.5 if start == "per_step" else matched_p ** (1 / horizon)


def train(cfg: Config, start: str, horizon: int, method: str, seed_base: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """All lrs x seeds at once. ``method`` is an estimator of METHODS (plain SGD, as before) or an arm
    'estimator+optimizer' (ARMS, OPTIMIZERS). Returns steps to target (L, S) (-1: not reached) and mean p curves
    (L, points)."""
    estimator, optimizer = split_arm(method)
    step_fn, state = OPTIMIZERS[optimizer], {}
    key = [seed_base, horizon, STARTS.index(start), METHODS.index(method)] if method in METHODS else \
        [seed_base, horizon, STARTS.index(start), 100 + ARMS.index(method) if method in ARMS else 99]
    lrs = np.repeat(np.asarray(cfg.lrs, dtype=float), cfg.seeds)
    batch = lrs.shape[0]
    q0 = initial_q(start, horizon, cfg.matched_p)
    theta = np.full((batch, horizon), math.log(q0 / (1 - q0)))
    rng = np.random.default_rng(key)
    steps = np.full(batch, -1)
    curve = []
    for step in range(cfg.max_steps + 1):
        q = sigmoid(theta)
        p = q.prod(axis=1)
        newly = (p >= cfg.target) & (steps < 0)
        steps[newly] = step
        if step % cfg.log_every == 0:
            curve.append(p.reshape(len(cfg.lrs), cfg.seeds).mean(axis=1))
        if (steps >= 0).all() or step == cfg.max_steps:
            break
        live = (steps < 0)[:, None]  # runs that reached the target stop moving
        if estimator == "expected":
            terms, g = None, expected_update(q)
        else:
            x = (rng.random((batch, cfg.group_size, horizon)) < q[:, None, :]).astype(float)
            terms = update_terms(estimator, x, q, cfg.eps)
            g = terms.mean(axis=1)
        delta, state = step_fn(g, terms, state, lrs[:, None], cfg)
        theta = theta + live * delta
    while len(curve) <= cfg.max_steps // cfg.log_every:  # finished early: every run holds its final p
        curve.append(curve[-1])
    return steps.reshape(len(cfg.lrs), cfg.seeds), np.stack(curve, axis=1)


# == theory (D10's closed forms) ======================================================================


def theory_rows(horizons=range(1, 17), qs=(0.5, 0.9)) -> list[dict]:
    """Rollouts for SNR 1 at the first and last step, per estimator, from D10's closed forms (lambdified)."""
    import sympy as sp

    from grpo_verify.derivations import d10_credit_assignment as d10

    H, h, q = d10.H, d10.h, d10.q
    p = q ** H
    grad = p * (1 - q)
    variances = {
        "outcome_none": d10.outcome_variance(0),
        "outcome_mean": d10.outcome_variance(p),
        "outcome_optimal": d10.outcome_variance(d10.b_star),
        "exact_credit": d10.exact_credit_variance(),
        "exact_credit_optimal": q ** (2 * H - h + 1) * (1 - q) ** 2 * (1 - q ** (h - 1)),
    }
    functions = {name: sp.lambdify((q, H, h), v / grad ** 2) for name, v in variances.items()}  # 1 / SNR_1
    rows = []
    for q_value in qs:
        for horizon in horizons:
            for step, where in ((1, "first"), (horizon, "last")):
                row = {"q": q_value, "H": horizon, "step": where, "p": q_value ** horizon,
                       "zero_gradient_R8": q_value ** (8 * horizon) + (1 - q_value ** horizon) ** 8}
                for name, fn in functions.items():
                    row[f"rollouts_for_snr1_{name}"] = max(0.0, float(fn(q_value, horizon, step)))
                rows.append(row)
    return rows


# == files, summary, plots ============================================================================


def summarise(cfg: Config, runs: list[dict]) -> list[dict]:
    """Per start x H x method, the lr whose median steps (censored runs count as max_steps + 1) is smallest."""
    out = []
    for start in STARTS:
        for horizon in cfg.horizons:
            for method in cfg.methods:
                best = None
                for lr in cfg.lrs:
                    values = np.array([r["steps"] if r["reached"] else cfg.max_steps + 1 for r in runs
                                       if (r["start"], r["H"], r["method"], r["lr"]) == (start, horizon, method, lr)])
                    entry = {"start": start, "H": horizon, "method": method, "best_lr": lr,
                             "median_steps": float(np.median(values)), "q25": float(np.quantile(values, 0.25)),
                             "q75": float(np.quantile(values, 0.75)), "reached": int((values <= cfg.max_steps).sum()),
                             "seeds": int(values.size), "p0": initial_q(start, horizon, cfg.matched_p) ** horizon}
                    if best is None or entry["median_steps"] < best["median_steps"]:
                        best = entry
                out.append(best)
    return out


def plot(cfg: Config, summary: list[dict], curves: dict, theory: list[dict], out: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []

    def save(fig, name):
        written.extend(save_figure(fig, out / name, bbox_inches="tight"))
        plt.close(fig)

    colours = {"grpo": "C0", "dr_grpo": "C1", "exact_credit": "C2", "expected": "k"}
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, start in zip(axes, STARTS):
        for method in cfg.methods:
            rows = [r for r in summary if r["start"] == start and r["method"] == method]
            hs = [r["H"] for r in rows]
            med = np.array([r["median_steps"] for r in rows])
            ax.errorbar(hs, med, yerr=[med - [r["q25"] for r in rows], [r["q75"] for r in rows] - med], fmt="o-",
                        capsize=3, color=colours.get(method), label=method)
        ax.axhline(cfg.max_steps, color="grey", ls=":", lw=0.8)
        ax.set(xscale="log", yscale="log", xlabel="H (steps)", xticks=list(cfg.horizons),
               xticklabels=[str(x) for x in cfg.horizons],
               title="start q = 1/2 per step (p0 = 2^-H)" if start == "per_step"
               else f"start p0 = {cfg.matched_p:g} for every H")
    axes[0].set_ylabel(f"updates to p >= {cfg.target} (median, IQR; best lr)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"R = {cfg.group_size}, {cfg.seeds} seeds, SGD; dotted: the cap {cfg.max_steps}", fontsize=9)
    save(fig, "steps_to_target")

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    horizon = max(cfg.horizons)
    for ax, start in zip(axes, STARTS):
        for method in cfg.methods:
            best = next(r for r in summary if (r["start"], r["H"], r["method"]) == (start, horizon, method))
            series = curves[(start, horizon, method)][cfg.lrs.index(best["best_lr"])]
            ax.plot(np.arange(series.size) * cfg.log_every, series, color=colours.get(method),
                    label=f"{method} (lr {best['best_lr']:g})")
        ax.axhline(cfg.target, color="grey", ls=":", lw=0.8)
        ax.set(xlabel="update", title=f"H = {horizon}, start {start}")
    axes[0].set_ylabel("exact p (mean over seeds)")
    axes[0].legend(fontsize=8)
    save(fig, "success_curves")

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    names = ("outcome_none", "outcome_optimal", "exact_credit", "exact_credit_optimal")
    for ax, q_value in zip(axes, sorted({r["q"] for r in theory})):
        for n, name in enumerate(names):
            for where, style in (("first", "--"), ("last", "-")):
                rows = [r for r in theory if r["q"] == q_value and r["step"] == where]
                ax.plot([r["H"] for r in rows], [max(r[f"rollouts_for_snr1_{name}"], 1e-3) for r in rows], style,
                        color=f"C{n}", label=f"{name}, {where} step")
        ax.set(yscale="log", xlabel="H", title=f"q = {q_value} per step")
    axes[0].set_ylabel("rollouts for SNR 1 at one step (D10 closed forms)")
    axes[0].legend(fontsize=6)
    save(fig, "theory")
    return written


# == arms: estimator x optimizer, each at its own bracketed best learning rate =========================
ARM_FILES = ("arms_summary.json", "arms_table.md")
ARM_GRID = tuple(4.0 ** k for k in range(-3, 4))  # 1/64 .. 64, extended at an edge that holds the best median
ARM_GRID_LIMIT = (4.0 ** -10, 4.0 ** 10)  # no extension beyond: such an arm is reported "not bracketed"


def arm_medians(cfg: Config, start: str, horizon: int, arm: str, lrs: tuple[float, ...]) -> dict[float, np.ndarray]:
    """Steps to target per lr (censored runs count as max_steps + 1), one array of seeds per lr."""
    run_cfg = Config(**{**asdict(cfg), "lrs": tuple(lrs)})
    with np.errstate(over="ignore", under="ignore"):
        steps, _ = train(run_cfg, start, horizon, arm)
    return {lr: np.where(s >= 0, s, cfg.max_steps + 1) for lr, s in zip(lrs, steps)}


def best_lr_is_bracketed(medians: dict[float, float], max_steps: int) -> tuple[float, bool]:
    """The smallest lr with the best median, and whether the grid brackets it: some lr strictly inside the grid
    attains the best median, and that median is not censored (a flat, all-censored grid brackets nothing)."""
    grid = sorted(medians)
    best = min(medians.values())
    hits = [lr for lr in grid if medians[lr] == best]
    return hits[0], best <= max_steps and any(lr not in (grid[0], grid[-1]) for lr in hits)


def bracketed_arm(cfg: Config, start: str, horizon: int, arm: str, factor: float = 4.0) -> dict:
    """Run the arm on ARM_GRID and extend the grid by ``factor`` at whichever edge holds the best median (at both
    edges while no lr reaches the target) until some interior lr attains it or ARM_GRID_LIMIT is reached; the row
    says which."""
    values = arm_medians(cfg, start, horizon, arm, ARM_GRID)
    while True:
        medians = {lr: float(np.median(v)) for lr, v in values.items()}
        best_lr, bracketed = best_lr_is_bracketed(medians, cfg.max_steps)
        grid = sorted(values)
        if bracketed:
            break
        if min(medians.values()) > cfg.max_steps:  # nothing reached: widen at both edges
            new = tuple(x for x in (grid[0] / factor, grid[-1] * factor) if ARM_GRID_LIMIT[0] <= x <= ARM_GRID_LIMIT[1])
        else:
            new = tuple(x for x in (grid[0] / factor if best_lr == grid[0] else grid[-1] * factor,)
                        if ARM_GRID_LIMIT[0] <= x <= ARM_GRID_LIMIT[1])
        if not new:
            break
        values.update(arm_medians(cfg, start, horizon, arm, new))
    v = values[best_lr]
    return {"start": start, "H": horizon, "arm": arm, "best_lr": best_lr, "bracketed": bracketed,
            "median_steps": float(np.median(v)), "q25": float(np.quantile(v, 0.25)),
            "q75": float(np.quantile(v, 0.75)), "reached": int((v <= cfg.max_steps).sum()), "seeds": int(v.size),
            "grid": sorted(values), "medians": [float(np.median(values[lr])) for lr in sorted(values)]}


def arms_table(rows: list[dict], max_steps: int) -> str:
    """Markdown: updates to target per arm (rows) and H (columns), median (IQR) reached/seeds, best lr."""
    horizons = sorted({r["H"] for r in rows})
    lines = ["| start | arm | " + " | ".join(f"H = {h}" for h in horizons) + " |",
             "|---|---|" + "---|" * len(horizons)]
    for start in dict.fromkeys(r["start"] for r in rows):
        for arm in dict.fromkeys(r["arm"] for r in rows if r["start"] == start):
            cells = []
            for h in horizons:
                r = next((r for r in rows if (r["start"], r["arm"], r["H"]) == (start, arm, h)), None)
                if r is None:
                    cells.append("")
                elif r["reached"] * 2 <= r["seeds"] and r["median_steps"] > max_steps:
                    cells.append(f"not reached ({r['reached']}/{r['seeds']}, any lr of {len(r['grid'])})")
                else:
                    cells.append(f"{r['median_steps']:.0f} ({r['q25']:.0f}-{r['q75']:.0f}), {r['reached']}/"
                                 f"{r['seeds']}, lr {r['best_lr']:g}" + ("" if r["bracketed"] else ", NOT bracketed"))
            lines.append(f"| {start} | {arm} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def arms_main(cfg: Config, arms: tuple[str, ...], out: Path) -> int:
    """Every arm x start x H at its bracketed best lr; one part file per cell (a rerun with the same config skips
    finished cells and refuses a different one); arms_summary.json and arms_table.md at the end."""
    fingerprint = json.dumps({**asdict(cfg), "out": None, "lrs": None, "methods": None, "grid": ARM_GRID,
                              "limit": ARM_GRID_LIMIT, "search": 2}, sort_keys=True)
    parts = out / "arm_parts"
    rows, t_start = [], time.perf_counter()
    for start in STARTS:
        for horizon in cfg.horizons:
            for arm in arms:
                part = parts / f"{start}_H{horizon}_{arm.replace('+', '_')}.json"
                if part.exists():
                    saved = json.loads(part.read_text())
                    if saved["config"] != fingerprint:
                        print(f"error: {part} was written with another config; use a new --out", file=sys.stderr)
                        return 2
                    rows.append(saved["row"])
                    continue
                t0 = time.perf_counter()
                row = bracketed_arm(cfg, start, horizon, arm)
                parts.mkdir(parents=True, exist_ok=True)
                write_atomically(part, json.dumps({"config": fingerprint, "row": row}) + "\n")
                rows.append(row)
                print(f"{start:8s} H={horizon:<3d} {arm:24s} median {row['median_steps']:.0f} at lr "
                      f"{row['best_lr']:g} ({'bracketed' if row['bracketed'] else 'NOT bracketed'}; "
                      f"{len(row['grid'])} lrs; {time.perf_counter() - t0:.1f} s)", flush=True)
    write_atomically(out / "arms_table.md", arms_table(rows, cfg.max_steps))
    write_atomically(out / "arms_summary.json", json.dumps(
        {"config": asdict(cfg), "arms": list(arms), "grid": list(ARM_GRID), "grid_limit": list(ARM_GRID_LIMIT),
         "rows": rows, "wall_seconds": round(time.perf_counter() - t_start, 1)}, indent=1) + "\n")
    print(arms_table(rows, cfg.max_steps))
    print(f"wrote {len(ARM_FILES)} files to {out}")
    return 0


def parser() -> argparse.ArgumentParser:
    d = Config()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=DefaultsHelpFormatter)
    ap.add_argument("--horizons", type=comma_ints, default=d.horizons, help="H values, e.g. 1,2,4,8")
    ap.add_argument("--methods", default=",".join(d.methods), help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument("--lrs", default=",".join(f"{x:g}" for x in d.lrs), help="SGD learning rates, comma-separated")
    ap.add_argument("--seeds", type=positive_int, default=d.seeds)
    ap.add_argument("--group-size", type=positive_int, default=d.group_size, help="R")
    ap.add_argument("--target", type=float, default=d.target, help="success probability to reach")
    ap.add_argument("--max-steps", type=positive_int, default=d.max_steps)
    ap.add_argument("--matched-p", type=float, default=d.matched_p, help="p0 of the matched start")
    ap.add_argument("--log-every", type=positive_int, default=d.log_every)
    ap.add_argument("--arms", default="", help="instead of --methods x --lrs: these estimator+optimizer arms "
                    f"(comma-separated, or 'all' = {','.join(ARMS)}), each at a learning rate its grid brackets; "
                    "writes arms_summary.json, arms_table.md and arm_parts/ (resumable)")
    ap.add_argument("--quick", action="store_true", help="H 1,2,4, 2 seeds, 300 steps")
    ap.add_argument("--out", default=d.out, help="output folder (the committed results: "
                    "experiments/results/credit_assignment)")
    return ap


def config_from(args: argparse.Namespace, ap: argparse.ArgumentParser) -> Config:
    methods = tuple(m for m in args.methods.split(",") if m)
    if not methods or set(methods) - set(METHODS) or len(set(methods)) != len(methods):
        ap.error(f"--methods must be distinct names from {','.join(METHODS)}, got {args.methods!r}")
    try:
        lrs = tuple(float(x) for x in args.lrs.split(","))
    except ValueError:
        ap.error(f"--lrs must be numbers separated by commas, got {args.lrs!r}")
    if not lrs or any(not (x > 0 and math.isfinite(x)) for x in lrs):
        ap.error("--lrs must be positive numbers")
    if any(x < 1 for x in args.horizons) or len(set(args.horizons)) != len(args.horizons):
        ap.error("--horizons must be distinct whole numbers >= 1")
    if args.group_size < 2:
        ap.error("--group-size must be at least 2")
    if not 0 < args.target < 1 or not 0 < args.matched_p < args.target:
        ap.error("--target must lie in (0, 1) and --matched-p in (0, target)")
    cfg = Config(tuple(args.horizons), methods, lrs, args.seeds, args.group_size, args.target, args.max_steps,
                 args.matched_p, 1e-4, args.log_every, args.out)
    if args.quick:
        cfg = Config(tuple(h for h in cfg.horizons if h <= 4) or (1,), methods, lrs, 2, args.group_size, args.target,
                     300, args.matched_p, 1e-4, args.log_every, args.out)
    return cfg


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    cfg = config_from(args, ap)
    out = Path(cfg.out)
    problem = output_problem(out, "folder", FILES + ARM_FILES)
    if problem:
        ap.error(f"--out {cfg.out}: {problem}")
    if args.arms:
        arms = ARMS if args.arms == "all" else tuple(a for a in args.arms.split(",") if a)
        for arm in arms:
            try:
                split_arm(arm)
            except ValueError as exc:
                ap.error(f"--arms: {exc}")
        return arms_main(cfg, arms, out)
    start_time = time.perf_counter()
    runs, curves, curve_rows = [], {}, []
    for start in STARTS:
        for horizon in cfg.horizons:
            for method in cfg.methods:
                t0 = time.perf_counter()
                steps, curve = train(cfg, start, horizon, method)
                curves[(start, horizon, method)] = curve
                for li, lr in enumerate(cfg.lrs):
                    for seed in range(cfg.seeds):
                        value = int(steps[li, seed])
                        runs.append({"start": start, "H": horizon, "method": method, "lr": lr, "seed": seed,
                                     "reached": int(value >= 0), "steps": value if value >= 0 else ""})
                    finished = int(steps[li].max()) if (steps[li] >= 0).all() else cfg.max_steps
                    for point, p in enumerate(curve[li][:finished // cfg.log_every + 2]):  # no rows after the end
                        curve_rows.append({"start": start, "H": horizon, "method": method, "lr": lr,
                                           "step": point * cfg.log_every, "p_mean": float(p)})
                med = [float(np.median(np.where(s >= 0, s, cfg.max_steps + 1))) for s in steps]
                print(f"{start:8s} H={horizon} {method:12s} median updates to p>={cfg.target} per lr "
                      f"{dict(zip(cfg.lrs, med))} ({time.perf_counter() - t0:.1f} s)", flush=True)
    summary = summarise(cfg, runs)
    theory = theory_rows()
    write_atomically(out / "runs.csv", csv_text(runs, line_end="\n"))
    write_atomically(out / "curves.csv", csv_text(curve_rows, line_end="\n"))
    write_atomically(out / "theory.csv", csv_text(theory, line_end="\n"))
    seconds = time.perf_counter() - start_time
    write_atomically(out / "summary.json", json.dumps({"config": asdict(cfg), "best_lr": summary,
                                                       "wall_seconds": round(seconds, 1)}, indent=1) + "\n")
    written = plot(cfg, summary, curves, theory, out)
    for row in summary:
        print(f"{row['start']:8s} H={row['H']} {row['method']:12s} best lr {row['best_lr']:g}: median "
              f"{row['median_steps']:.0f} (IQR {row['q25']:.0f}-{row['q75']:.0f}), reached {row['reached']}/{row['seeds']}")
    print(f"wrote {len(FILES) + len(written)} files to {out} in {time.perf_counter() - start_time:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
