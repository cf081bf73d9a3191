"""Exact variance and MSE of the group gradient estimators as functions of the group size R (D9).

For each enumerable policy below and each R, every estimator's mean, total variance tr Cov and MSE
E||f - grad J||^2 are computed exactly by enumerating every group of R rollouts (``grpo_verify.oracle``,
multisets with multinomial weights); nothing is sampled. Estimators (one group, (1/R) sum_i A_i g_i):

* oracle: A_i = r_i - E[r] (the population mean as a constant baseline);
* b_star: A_i = r_i - b*, b* = E[r ||g||^2]/E||g||^2 (D8's optimal constant baseline);
* rloo: A_i = r_i - mean_{j != i} r_j;
* no_std: A_i = r_i - mean(r) (Dr. GRPO; (R-1)/R times rloo, D5);
* grpo_sample / grpo_population: A_i = (r_i - mean(r))/(std + eps), Bessel or population std (GRPO).

The std-scaled estimators estimate a rescaled gradient (c_R(p) grad J for binary rewards, D5), so their MSE
against grad J mostly measures the scale; the relative variance tr Cov f / ||E f||^2 does not depend on it.

Closed forms of D9 (``derivations/d9_group_size.py``) are written next to the enumerated values where they
exist (V_or/R, V(b*)/R, V_or/R (1 + c/(R-1)), ((R-1)/R)^2 Var(U) + ||grad J||^2/R^2), with the largest gap.

Policies: ``bandit_binary`` (3-action softmax bandit, pi = (1/2, 1/4, 1/4), rewards (1, 0, 0): D8's example,
b* != E[r]); ``bandit_three_levels`` (pi = (1/2, 1/3, 1/6), rewards (1, 1/2, 0): D5's example, std scaling
biases the direction); ``tabular_partial_credit`` (a tabular autoregressive policy over 2^3 sequences, seed 0,
reward = the fraction of 1 tokens).

    python experiments/group_size_variance.py                         # R = 2..8, into runs/group_size_variance
    python experiments/group_size_variance.py --group-sizes 2,4 --out /tmp/gsv

The committed results are the defaults with ``--out experiments/results/group_size_variance``.
Outputs in --out: table.csv (one row per policy x R x estimator), constants.json (per policy: E[r], V_or,
V(b*), Var(r), E||g||^2, ||grad J||^2, c, kappa), mse_ratio.png (MSE / (V_or/R) against R). Every file is
written atomically; bad options and an --out that cannot be written are refused before any work.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

from grpo_verify.empirical.config import _DefaultsHelpFormatter as DefaultsHelpFormatter
from grpo_verify.empirical.config import _int_list as comma_ints
from grpo_verify.estimators import DEFAULT_EPS
from grpo_verify.oracle import (
    baseline_total_variance,
    constant_baseline_group_gradient,
    expect_group,
    expected_reward,
    group_gradient,
    num_group_tuples,
    optimal_baseline,
    policy_gradient,
    score_norm_moment,
)
from grpo_verify.outputs import csv_text, output_problem, write_atomically
from grpo_verify.synthetic import DTYPE, Outcomes, SoftmaxBandit, TabularAutoregressive

DEFAULT_GROUP_SIZES = (2, 3, 4, 5, 6, 7, 8)
MAX_GROUP_SIZE = 12  # C(8 + 12 - 1, 12) = 50388 multisets for the largest policy: seconds
ESTIMATORS = ("oracle", "b_star", "rloo", "no_std", "grpo_sample", "grpo_population")
OUTPUT_FILES = ("table.csv", "constants.json", "mse_ratio.png")
COLUMNS = ("policy", "R", "estimator", "variance", "mse", "bias_norm", "mean_cosine", "mse_ratio_to_oracle",
           "relative_variance", "relative_variance_ratio_to_oracle", "closed_form", "closed_form_gap")


# == the policies ====================================================================================


def policies() -> dict[str, tuple[Outcomes, torch.Tensor]]:
    """name -> (outcomes, rewards), every one exactly enumerable."""
    binary = SoftmaxBandit(3, logits=[math.log(2), 0.0, 0.0]).enumerate()
    levels = SoftmaxBandit(3, logits=[math.log(3), math.log(2), 0.0]).enumerate()
    tabular = TabularAutoregressive(2, 3, seed=0).enumerate()
    partial = tabular.sequences.to(DTYPE).mean(dim=1)  # fraction of 1 tokens: 0, 1/3, 2/3, 1
    return {"bandit_binary": (binary, torch.tensor([1.0, 0.0, 0.0], dtype=DTYPE)),
            "bandit_three_levels": (levels, torch.tensor([1.0, 0.5, 0.0], dtype=DTYPE)),
            "tabular_partial_credit": (tabular, partial)}


def constants(outcomes: Outcomes, rewards: torch.Tensor) -> dict:
    """The single-rollout constants of D9's closed forms."""
    mean = expected_reward(outcomes, rewards)
    grad = policy_gradient(outcomes, rewards)
    spread = float(outcomes.probs @ (rewards - mean) ** 2)
    score_sq = score_norm_moment(outcomes, rewards, 0)
    v_or = baseline_total_variance(outcomes, rewards, mean)
    b_star = optimal_baseline(outcomes, rewards)
    j2 = float(grad @ grad)
    c = (spread * score_sq + j2) / v_or
    return {"mean_reward": mean, "b_star": b_star, "V_or": v_or,
            "V_b_star": baseline_total_variance(outcomes, rewards, b_star), "var_reward": spread,
            "mean_squared_score_norm": score_sq, "grad_J_squared_norm": j2, "c": c, "kappa": j2 / v_or,
            "outcomes": outcomes.num_outcomes, "parameters": outcomes.num_parameters}


def estimator(name: str, k: dict, eps: float):
    return {"oracle": lambda: constant_baseline_group_gradient(k["mean_reward"]),
            "b_star": lambda: constant_baseline_group_gradient(k["b_star"]),
            "rloo": lambda: group_gradient("rloo"),
            "no_std": lambda: group_gradient("dr_grpo"),
            "grpo_sample": lambda: group_gradient("grpo", eps),
            "grpo_population": lambda: group_gradient("population", eps)}[name]()


def closed_form(name: str, k: dict, size: int) -> float | None:
    """D9's closed form of the MSE (= the variance for the unbiased ones); None where there is none."""
    var_u = k["V_or"] / size * (1 + k["c"] / (size - 1))
    return {"oracle": k["V_or"] / size, "b_star": k["V_b_star"] / size, "rloo": var_u,
            "no_std": ((size - 1) / size) ** 2 * var_u + k["grad_J_squared_norm"] / size ** 2}.get(name)


def measure(outcomes: Outcomes, rewards: torch.Tensor, size: int, name: str, k: dict, eps: float) -> dict:
    """Exact mean, variance and MSE of one estimator at one R, by one enumeration of all multisets."""
    f = estimator(name, k, eps)

    def value_and_square(rewards_, scores_, indices_):
        values = f(rewards_, scores_, indices_)
        return torch.cat([values, (values ** 2).sum(dim=1, keepdim=True)], dim=1)

    moments = expect_group(outcomes, rewards, size, value_and_square, symmetric=True)
    mean, second = moments[:-1], float(moments[-1])
    grad = policy_gradient(outcomes, rewards)
    variance = second - float(mean @ mean)
    bias = mean - grad
    mse = variance + float(bias @ bias)
    cosine = float(mean @ grad) / (float(mean.norm() * grad.norm()) or float("nan"))
    exact = closed_form(name, k, size)
    relative = variance / float(mean @ mean)  # noise to signal: free of the estimator's scale (a step size)
    oracle_relative = k["V_or"] / size / k["grad_J_squared_norm"]
    return {"variance": variance, "mse": mse, "bias_norm": float(bias.norm()), "mean_cosine": cosine,
            "mse_ratio_to_oracle": mse / (k["V_or"] / size), "relative_variance": relative,
            "relative_variance_ratio_to_oracle": relative / oracle_relative, "closed_form": "" if exact is None else exact,
            "closed_form_gap": "" if exact is None else abs(mse - exact)}


def run(group_sizes: tuple[int, ...], eps: float, log=print) -> tuple[list[dict], dict]:
    rows, table = [], {}
    for policy, (outcomes, rewards) in policies().items():
        k = constants(outcomes, rewards)
        table[policy] = k
        for size in group_sizes:
            start = time.perf_counter()
            for name in ESTIMATORS:
                rows.append({"policy": policy, "R": size, "estimator": name,
                             **measure(outcomes, rewards, size, name, k, eps)})
            log(f"{policy:24s} R={size:2d}: {num_group_tuples(outcomes.num_outcomes, size, True):6d} groups, "
                f"{time.perf_counter() - start:.2f} s")
    return rows, table


# == outputs =========================================================================================


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(row["policy"] for row in rows))
    fig, axes = plt.subplots(2, len(names), figsize=(4.6 * len(names), 7.2), squeeze=False)
    metrics = (("mse_ratio_to_oracle", "MSE / (V_or / R)"),
               ("relative_variance_ratio_to_oracle", "tr Cov f / ||E f||^2, over the oracle's"))
    for row_axes, (metric, label) in zip(axes, metrics):
        for ax, policy in zip(row_axes, names):
            for name in ESTIMATORS:
                points = [(row["R"], row[metric]) for row in rows
                          if row["policy"] == policy and row["estimator"] == name]
                ax.plot(*zip(*points), marker="o", markersize=3, label=name)
            ax.axhline(1.0, color="grey", linewidth=0.8)
            ax.set_yscale("log")
            ax.set_title(policy, fontsize=10)
            ax.set_xlabel("group size R")
        row_axes[0].set_ylabel(label + "   (exact)", fontsize=9)
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    write_atomically(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120, metadata={"Software": None}))
    plt.close(fig)


# == main ============================================================================================


def group_size_list(text: str) -> tuple[int, ...]:
    if not text.replace(",", " ").split():
        raise argparse.ArgumentTypeError(f"expected at least one group size, comma-separated (e.g. 2,4,8); got {text!r}")
    values = comma_ints(text)
    bad = [v for v in values if not 2 <= v <= MAX_GROUP_SIZE]
    if bad:
        raise argparse.ArgumentTypeError(f"every group size must be 2..{MAX_GROUP_SIZE}, got {', '.join(map(str, bad))}"
                                         " (a group of one has no baseline; larger groups take long to enumerate)")
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"a group size is repeated in {text!r}")
    return tuple(sorted(values))


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python experiments/group_size_variance.py",
                                     description=__doc__.split("\n\n")[0], formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--group-sizes", type=group_size_list, default=",".join(map(str, DEFAULT_GROUP_SIZES)),
                        metavar="R,R,...", help=f"group sizes R, each 2..{MAX_GROUP_SIZE}")
    parser.add_argument("--eps", type=non_negative_float, default=DEFAULT_EPS,
                        help="std stabiliser of the grpo_sample / grpo_population advantages (TRL's default)")
    parser.add_argument("--out", type=Path, default=Path("runs/group_size_variance"), metavar="DIR",
                        help="output folder; the committed results: --out experiments/results/group_size_variance")
    return parser


def main(argv: list[str] | None = None) -> dict:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = output_problem(args.out, files=OUTPUT_FILES)
    if problem:
        parser.error(f"--out {args.out}: {problem}")
    torch.set_num_threads(1)
    start = time.perf_counter()
    rows, table = run(tuple(args.group_sizes), args.eps)
    write_atomically(args.out / "table.csv", csv_text(rows, COLUMNS, line_end="\n", float_format="{:.12g}"))
    gaps = [row["closed_form_gap"] for row in rows if row["closed_form_gap"] != ""]
    summary = {"group_sizes": list(args.group_sizes), "eps": args.eps, "policies": table,
               "largest_closed_form_gap": max(gaps, default=0.0),
               "seconds": round(time.perf_counter() - start, 2)}
    write_atomically(args.out / "constants.json", json.dumps(summary, indent=1) + "\n")
    plot(rows, args.out / "mse_ratio.png")
    print(f"largest |enumerated - closed form| = {summary['largest_closed_form_gap']:.3g}; "
          f"{summary['seconds']} s; outputs in {args.out}")
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
