"""summary.json, table.md, table.tex and plots from results.jsonl (and train.jsonl).

Every number in the tables is a mean over prompts at one R with a seeded percentile bootstrap
confidence interval over prompts. GRPO rows use the non-degenerate groups only (a degenerate
group's GRPO gradient is zero: counted, not ranked), and so do the controls' weighted and per-layer
rows; G, centred G and the per-block Grams use every group whose K was measured (with
--degenerate-groups count, the mixed ones).
"""

from __future__ import annotations

import io
import json
from collections import defaultdict

import numpy as np

from .measure import METRICS
from .sampling import derived_seed
from .store import atomic_write_bytes, atomic_write_json, atomic_write_text

TABLE_METRICS = ("effective_rank", "stable_rank", "participation_ratio", "energy_rank_90", "energy_rank_99",
                 "tolerance_rank")


def bootstrap_ci(values, resamples: int, confidence: float, seed: int) -> tuple[float, float]:
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return float("nan"), float("nan")
    if v.size == 1 or resamples == 0:
        return float(v.mean()), float(v.mean())
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(resamples, v.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(lo), float(hi)


def rows_of(records: list[dict]) -> dict[tuple, list[float]]:
    """{(R, matrix, condition, metric): [value per prompt]}; matrix is G, centred, weighted or layers. The weighted
    and per-layer rows of every condition use the groups with mixed rewards only (those where GRPO's gradient is
    not zero), so GRPO and its controls are compared on the same groups."""
    rows: dict[tuple, list[float]] = defaultdict(list)
    for rec in records:
        R, m = rec["R"], rec["measure"]
        for metric in METRICS if m.get("measured", True) else ():  # a counted degenerate group has no K
            rows[(R, "G", "-", metric)].append(m["G"]["metrics"][metric])
            rows[(R, "centred", "-", metric)].append(m["centred"]["metrics"][metric])
            rows[(R, "layer_gram", "-", metric)].append(m["layer_gram"][metric]["median"])
        if m["degenerate"]:
            # GRPO's gradient is zero here and has no rank: the controls skip the group too, so that every weighting
            # is summarised over the same (mixed) groups as GRPO and the comparison is paired
            continue
        for cond, entry in m["conditions"].items():
            if entry["zero_gradient"]:
                continue  # a zero gradient has no rank; counted in "counts"
            for metric in METRICS:
                rows[(R, "weighted", cond, metric)].append(entry["weighted"]["metrics"][metric])
                if "layers" in entry:
                    rows[(R, "layers", cond, metric)].append(entry["layers"]["summary"][metric]["median"])
            rows[(R, "gradient_norm", cond, "value")].append(entry["gradient_norm"])
    return rows


def summarise(records: list[dict], cfg, train_records: list[dict] | None = None) -> dict:
    counts = {}
    for R in cfg.group_sizes:
        mine = [r for r in records if r["R"] == R]
        counts[str(R)] = {"items": len(mine), "degenerate": sum(r["measure"]["degenerate"] for r in mine),
                          "counted_without_k": sum(not r["measure"].get("measured", True) for r in mine),
                          "all_zero_reward": sum(max(r["rewards"]) == 0 for r in mine),
                          "all_one_reward": sum(min(r["rewards"]) == 1 for r in mine),
                          "mean_reward": float(np.mean([np.mean(r["rewards"]) for r in mine])) if mine else None}
    table = []
    for key, values in sorted(rows_of(records).items(), key=lambda kv: tuple(map(str, kv[0]))):
        R, matrix, cond, metric = key
        lo, hi = bootstrap_ci(values, cfg.bootstrap, cfg.confidence, derived_seed(cfg.seed, "bootstrap", *key) % 2**32)
        table.append({"R": R, "matrix": matrix, "condition": cond, "metric": metric, "n": len(values),
                      "mean": float(np.mean(values)), "median": float(np.median(values)), "ci_low": lo, "ci_high": hi})
    out = {"counts": counts, "rows": table,
           "notes": {"ci": f"{cfg.confidence:.0%} percentile bootstrap over prompts, {cfg.bootstrap} resamples",
                     "matrices": {"G": "per-rollout score vectors g_i (rows), from K = G G^T",
                                  "centred": "C G, C = I - 11^T/R",
                                  "weighted": "diag(a) G for the condition's advantages a",
                                  "layers": "median over 2-D weights of the metric of that weight's gradient "
                                            "sum_i a_i dl_i/dW",
                                  "layer_gram": "median over transformer blocks of the metric of G restricted "
                                                "to the block's parameters",
                                  "gradient_norm": "||(1/R) sum_i a_i g_i|| = sqrt(a^T K a)/R"}}}
    if train_records:
        out["train"] = train_records
    return out


def _lookup(summary: dict) -> dict:
    return {(r["R"], r["matrix"], r["condition"], r["metric"]): r for r in summary["rows"]}


def _row_keys(summary: dict) -> list[tuple[str, str]]:
    order = {"G": 0, "centred": 1, "weighted": 2, "layers": 3, "layer_gram": 4}
    keys = {(r["matrix"], r["condition"]) for r in summary["rows"] if r["matrix"] in order}
    return sorted(keys, key=lambda k: (order[k[0]], k[1] != "grpo", k[1]))


def markdown(summary: dict, cfg, title: str) -> str:
    look, Rs = _lookup(summary), list(cfg.group_sizes)
    lines = [f"# {title}", "", f"Means over prompts with {summary['notes']['ci']}. "
             "Weighted and per-layer rows (GRPO and every control): non-degenerate groups only, the same groups for "
             "every weighting. n = groups measured." + (
                 " Degenerate groups were counted without an engine pass (--degenerate-groups count): the G, "
                 "centred and layer_gram rows are over the mixed groups." if any(
                     c.get("counted_without_k") for c in summary["counts"].values()) else ""), "",
             "| R | items | degenerate (all rewards equal) | all 0 | all 1 | mean reward |", "|---|---|---|---|---|---|"]
    for R in Rs:
        c = summary["counts"][str(R)]
        mean = "-" if c["mean_reward"] is None else f"{c['mean_reward']:.3f}"
        lines.append(f"| {R} | {c['items']} | {c['degenerate']} | {c['all_zero_reward']} | {c['all_one_reward']} | {mean} |")
    for metric in TABLE_METRICS:
        lines += ["", f"## {metric}", "", "| matrix | condition | " + " | ".join(f"R={R}" for R in Rs) + " |",
                  "|---|---|" + "---|" * len(Rs)]
        for matrix, cond in _row_keys(summary):
            cells = []
            for R in Rs:
                r = look.get((R, matrix, cond, metric))
                cells.append("-" if r is None else f"{r['mean']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] (n={r['n']})")
            lines.append(f"| {matrix} | {cond} | " + " | ".join(cells) + " |")
    lines += ["", "## gradient norm ||(1/R) sum_i a_i g_i||", "", "| condition | " + " | ".join(f"R={R}" for R in Rs)
              + " |", "|---|" + "---|" * len(Rs)]
    for cond in sorted({r["condition"] for r in summary["rows"] if r["matrix"] == "gradient_norm"}):
        cells = []
        for R in Rs:
            r = look.get((R, "gradient_norm", cond, "value"))
            cells.append("-" if r is None else f"{r['mean']:.4g} [{r['ci_low']:.4g}, {r['ci_high']:.4g}]")
        lines.append(f"| {cond} | " + " | ".join(cells) + " |")
    train = summary.get("train") or []
    if train:
        keys = sorted({k for t in train if t.get("sparsity") for k in t["sparsity"]}, key=_threshold_order)
        lines += ["", f"## training ({len(train)} GRPO steps)", "",
                  "A step whose groups all have equal rewards has a zero gradient (marked 'none'): the hand-written "
                  "loop made no update; TRL's AdamW still moves the weights by its momentum.", "",
                  "| step | mean reward | zero-advantage groups | gradient norm | "
                  + " | ".join(f"sparsity {k}" for k in keys) + " |", "|---|---|---|---|" + "---|" * len(keys)]
        for t in train:
            norm = t.get("gradient_norm")
            shown = "none" if not norm else f"{norm:.4g}"
            cells = [f"{t['sparsity'][k]:.3f}" if t.get("sparsity") and k in t["sparsity"] else "-" for k in keys]
            lines.append(f"| {t['step']} | {t['mean_reward']:.3f} | {t['zero_advantage_group_fraction']:.2f} | {shown} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _threshold_order(key: str) -> tuple:
    """Sparsity keys in numeric order: exact_zero, then le_1e-06_max, le_0.0001_max, le_0.01_max."""
    if key == "exact_zero":
        return (0, 0.0)
    try:
        return (1, float(key.removeprefix("le_").removesuffix("_max")))
    except ValueError:
        return (2, key)


def latex(summary: dict, cfg) -> str:
    look, Rs = _lookup(summary), list(cfg.group_sizes)
    esc = lambda s: s.replace("_", r"\_")  # noqa: E731
    out = [r"% generated by python -m grpo_verify.empirical; needs \usepackage{booktabs}"]
    for metric in TABLE_METRICS:
        out += [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{ll" + "c" * len(Rs) + "}",
                r"\toprule", "matrix & condition & " + " & ".join(f"$R={R}$" for R in Rs) + r" \\", r"\midrule"]
        for matrix, cond in _row_keys(summary):
            cells = []
            for R in Rs:
                r = look.get((R, matrix, cond, metric))
                cells.append("--" if r is None else f"{r['mean']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]")
            out.append(f"{esc(matrix)} & {esc(cond)} & " + " & ".join(cells) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}",
                rf"\caption{{{esc(metric)}: mean over prompts [{cfg.confidence:.0%} bootstrap CI].}}", r"\end{table}", ""]
    return "\n".join(out)


def _save(fig, out_dir, stem: str) -> list[str]:
    names = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=130, bbox_inches="tight")
        atomic_write_bytes(out_dir / f"{stem}.{ext}", buf.getvalue())
        names.append(f"{stem}.{ext}")
    return names


def plots(records: list[dict], summary: dict, cfg, out_dir) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written, Rs = [], list(cfg.group_sizes)
    # 1. singular-value spectra (sigma_k / sigma_1, mean over prompts) per R
    fig, axes = plt.subplots(1, len(Rs), figsize=(4 * len(Rs), 3.4), squeeze=False)
    for ax, R in zip(axes[0], Rs):
        mine = [r["measure"] for r in records if r["R"] == R and r["measure"].get("measured", True)]
        series = {"G": [m["G"] for m in mine], "centred G": [m["centred"] for m in mine]}
        for cond in ("grpo", "gaussian", "ones"):
            series[f"diag(a) G, {cond}"] = [m["conditions"][cond]["weighted"] for m in mine
                                             if cond in m["conditions"] and not m["conditions"][cond]["zero_gradient"]]
        # diag(1) G is G itself: its line lies on G's, so each series has its own marker and dash
        styles = {"G": ("o", "-", 7), "centred G": ("s", "-", 5), "diag(a) G, grpo": ("^", "-", 5),
                  "diag(a) G, gaussian": ("v", ":", 5), "diag(a) G, ones": ("x", "--", 9)}
        for label, specs in series.items():
            norm = [np.asarray(s["singular_values"]) / s["singular_values"][0] for s in specs if s["singular_values"][0] > 0]
            if norm:
                marker, dash, size = styles.get(label, ("o", "-", 5))
                shown = label + (" (= G)" if label.endswith("ones") else "")
                ax.semilogy(np.arange(1, R + 1), np.maximum(np.mean(norm, axis=0), 1e-12), marker=marker, ls=dash,
                            ms=size, fillstyle="none", label=shown)
        ax.set_title(f"R = {R}")
        ax.set_xlabel("k")
        ax.set_xticks(range(1, R + 1))
        ax.set_ylabel(r"mean $\sigma_k / \sigma_1$")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("singular values of the R x R matrices, relative to the largest (mean over prompts)", fontsize=9)
    written += _save(fig, out_dir, "spectra")
    plt.close(fig)
    # 2. effective rank vs R per condition: R x R matrices (left) and per-layer weight gradients (right)
    look = _lookup(summary)
    drawn: list[str] = []
    fig, (ax, axl) = plt.subplots(1, 2, figsize=(11, 4))
    for matrix, cond in _row_keys(summary):
        if matrix == "layer_gram":
            continue
        pts = [(R, look[(R, matrix, cond, "effective_rank")]) for R in Rs if (R, matrix, cond, "effective_rank") in look]
        if not pts:
            continue
        x = [p[0] for p in pts]
        y = [p[1]["mean"] for p in pts]
        err = [[p[1]["mean"] - p[1]["ci_low"] for p in pts], [p[1]["ci_high"] - p[1]["mean"] for p in pts]]
        label = matrix if cond == "-" else f"{matrix}: {cond}"
        ones = matrix == "weighted" and cond == "ones"  # diag(1) G = G: the two lines coincide
        marker = "x" if ones else "osD^v<>ph*"[len(drawn) % 10]
        (axl if matrix == "layers" else ax).errorbar(x, y, yerr=err, marker=marker, ms=9 if ones else 6,
                                                     ls="--" if ones else "-", fillstyle="none", capsize=3,
                                                     label=label + (" (= G)" if ones else ""))
        drawn.append(label)
    ax.plot(Rs, Rs, color="grey", lw=0.8, ls="--", label="R (full rank)")
    for a_ in (ax, axl):
        a_.axhline(2, color="black", lw=0.8, ls="-.", label="2 (the paper's claim)")
        a_.set_xlabel("group size R")
        a_.set_xticks(Rs)
        a_.legend(fontsize=6, ncol=2)
    ax.set_ylabel("effective rank (mean, bootstrap CI)")
    ax.set_title("R x R: G, centred G, diag(a) G", fontsize=9)
    axl.set_title("per 2-D weight gradient (median over weights)", fontsize=9)
    written += _save(fig, out_dir, "effective_rank_vs_R")
    plt.close(fig)
    # 3. sparsity vs training step
    train = summary.get("train") or []
    if train:
        fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
        steps = [t["step"] for t in train]
        from matplotlib.ticker import MaxNLocator
        keys = sorted({k for t in train if t["sparsity"] for k in t["sparsity"]}, key=_threshold_order)
        for n, k in enumerate(keys):  # the thresholds' curves may coincide: each its own marker
            ax[0].plot(steps, [t["sparsity"][k] if t["sparsity"] else np.nan for t in train], marker="osD^v"[n % 5],
                       fillstyle="none", label=k)
        ax[0].set_ylabel("fraction of gradient coordinates")
        ax[0].set_title("coordinate sparsity of the step's gradient", fontsize=9)
        ax[1].plot(steps, [t["zero_advantage_group_fraction"] for t in train], marker=".", label="zero-advantage groups")
        ax[1].plot(steps, [t["mean_reward"] for t in train], marker=".", label="mean reward")
        ax[1].set_title("groups with no gradient, and the reward", fontsize=9)
        idle = [t["step"] for t in train if not t.get("gradient_norm")]
        # every group degenerate: a zero gradient (the old hand-written loop skipped the update; TRL's AdamW still
        # moves the weights by its momentum)
        shade = " (grey: zero gradient)" if any(t.get("trainer") for t in train) else " (grey: no update)"
        for a_ in ax:
            for step in idle:
                a_.axvspan(step - 0.5, step + 0.5, color="grey", alpha=0.2, lw=0)
            a_.set_xlabel("training step" + (shade if idle else ""))
            a_.xaxis.set_major_locator(MaxNLocator(integer=True))
            a_.legend(fontsize=7)
        written += _save(fig, out_dir, "train_sparsity")
        plt.close(fig)
        if any(t.get("update_unchanged") for t in train):
            written += _train_updates_plot(plt, train, out_dir, idle, shade)
    return written


def _train_updates_plot(plt, train: list[dict], out_dir, idle: list[int], shade: str) -> list[str]:
    """TRL runs (GRPOVerifyCallback): reward and zero-advantage groups, update sparsity in the model's dtype and in
    bfloat16 (Mukherjee et al. 2025), the rank of Delta W = W - W_start, the Gram ranks: over the steps."""
    from matplotlib.ticker import MaxNLocator
    steps = [t["step"] for t in train]

    def series(get):
        out = []
        for t in train:
            try:
                value = get(t)
            except (KeyError, TypeError):
                value = None
            out.append(np.nan if value is None else value)
        return out

    fig, ax = plt.subplots(2, 2, figsize=(10, 6.4))
    a = ax[0, 0]
    a.plot(steps, series(lambda t: t["mean_reward"]), marker=".", label="mean reward")
    a.plot(steps, series(lambda t: t["zero_advantage_group_fraction"]), marker=".", label="zero-advantage groups")
    a.plot(steps, series(lambda t: t["frac_reward_zero_std"]), ls="none", marker="x", ms=4,
           label="TRL frac_reward_zero_std")
    a.set_ylim(-0.05, 1.05)
    a.set_title("reward and groups with no gradient", fontsize=9)
    a = ax[0, 1]
    for label, key, style in (("since start, model dtype", ("since_start", "model"), "-"),
                              ("since start, bf16", ("since_start", "bf16"), "--"),
                              ("this step, model dtype", ("step", "model"), ":"),
                              ("this step, bf16", ("step", "bf16"), "-.")):
        a.plot(steps, series(lambda t, k=key: t["update_unchanged"][k[0]][k[1]]), ls=style, marker=".", ms=3,
               label=label)
    a.set_ylim(-0.05, 1.05)
    a.set_ylabel("fraction of parameters unchanged")
    a.set_title("update sparsity (Mukherjee et al.: 0.70-0.95 in bf16)", fontsize=9)
    a = ax[1, 0]
    measured = [t for t in train if t.get("delta_rank_fraction")]
    if measured:
        x = [t["step"] for t in measured]
        med = [t["delta_rank_fraction"]["median"] for t in measured]
        a.errorbar(x, med, yerr=[[m - t["delta_rank_fraction"]["q25"] for m, t in zip(med, measured)],
                                 [t["delta_rank_fraction"]["q75"] - m for m, t in zip(med, measured)]],
                   marker="o", capsize=3, label="tolerance rank / min(m, n) (median, IQR)")
    a.set_ylim(-0.05, 1.05)
    a.set_title("rank of W - W_start per 2-D weight", fontsize=9)
    a = ax[1, 1]
    for name, label in (("gram", "K (all rollouts of a group)"), ("gram_weighted", "diag(A) K diag(A)")):
        pts = [(t["step"], t[name]["effective_rank"]) for t in train if t.get(name)]
        if pts:
            a.plot(*zip(*pts), marker="o", label=f"effective rank of {label}")
    a.set_title("Gram ranks of the measured groups (mean)", fontsize=9)
    for a_ in ax.flat:
        for step in idle:
            a_.axvspan(step - 0.5, step + 0.5, color="grey", alpha=0.2, lw=0)
        a_.set_xlabel("training step" + (shade if idle else ""))
        a_.xaxis.set_major_locator(MaxNLocator(integer=True))
        if a_.get_legend_handles_labels()[0]:
            a_.legend(fontsize=7)
    fig.tight_layout()
    written = _save(fig, out_dir, "train_updates")
    plt.close(fig)
    return written


def run_title(model_id: str, cfg) -> str:
    """The title of a run's table: the model and the task."""
    return f"{model_id} on {cfg.task}" + (f" ({cfg.arith_digits}-digit)" if cfg.task == "arith" else "")


def write_all(records: list[dict], cfg, out_dir, title: str, train_records: list[dict] | None = None) -> dict:
    summary = summarise(records, cfg, train_records)
    atomic_write_json(out_dir / "summary.json", summary)
    atomic_write_text(out_dir / "table.md", markdown(summary, cfg, title))
    atomic_write_text(out_dir / "table.tex", latex(summary, cfg))
    if cfg.plots and records:
        plots(records, summary, cfg, out_dir)
    return summary


def rewrite(run_dir) -> dict:
    """Summary, tables and plots of a finished run rewritten from its stored records (results.jsonl, train.jsonl)
    and options (config.json), without loading the model: how a change to the summary reaches committed runs."""
    from pathlib import Path

    from .config import Config
    from .store import read_jsonl

    run_dir = Path(run_dir)
    saved = json.loads((run_dir / "config.json").read_text())
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in saved["options"].items()
               if k in Config.__dataclass_fields__}
    cfg = Config(**options)
    records, _torn = read_jsonl(run_dir / "results.jsonl")
    train_records = read_jsonl(run_dir / "train.jsonl")[0] if (run_dir / "train.jsonl").exists() else None
    records.sort(key=lambda r: (r["prompt"], r["R"]))
    return write_all(records, cfg, run_dir, run_title(saved.get("model", {}).get("id", "?"), cfg), train_records)


def main(argv: list[str] | None = None) -> int:
    """``python -m grpo_verify.empirical.report DIR...``: rewrite each finished run's summary from its records."""
    import sys
    from pathlib import Path

    dirs = sys.argv[1:] if argv is None else argv
    if not dirs:
        print("usage: python -m grpo_verify.empirical.report RUN_DIR [RUN_DIR ...]", file=sys.stderr)
        return 2
    for d in map(Path, dirs):
        missing = [n for n in ("config.json", "results.jsonl") if not (d / n).is_file()]
        if missing:
            print(f"error: {d}: not a run directory of python -m grpo_verify.empirical (no {missing[0]})",
                  file=sys.stderr)
            return 2
    for d in map(Path, dirs):
        try:
            summary = rewrite(d)
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
            print(f"error: {d}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
        print(f"rewrote {d}/summary.json ({len(summary['rows'])} rows), table.md, table.tex", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
