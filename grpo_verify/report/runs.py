"""Read the inputs the ledger quotes: empirical run folders (``python -m grpo_verify.empirical``) and the
synthetic-training summary. Every malformed input raises :class:`InputError` naming the file."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path

SUMMARY_ROW_KEYS = ("R", "matrix", "condition", "metric", "n", "mean", "ci_low", "ci_high")
PAPER_MODEL = "Nemotron-4B"
PAPER_TASK = "gsm8k"


class InputError(ValueError):
    """A missing or malformed input file or folder."""


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: malformed JSON ({exc})") from None


@dataclass
class Run:
    path: Path
    config: dict
    summary: dict
    partial: bool  # True: no summary.json; summarised here from results.jsonl (a run in progress)
    items: int
    plots: list[Path] = field(default_factory=list)

    # -- what was measured, in words -------------------------------------------------------------
    @property
    def model(self) -> dict:
        return self.config.get("model") or {}

    @property
    def options(self) -> dict:
        return self.config.get("options") or {}

    @property
    def model_label(self) -> str:
        m = self.model
        params = m.get("parameters")
        size = f", {params / 1e6:.1f}M parameters" if isinstance(params, (int, float)) else ""
        return f"{m.get('id') or m.get('spec') or self.config.get('model_spec') or 'unknown model'}{size}"

    @property
    def task_label(self) -> str:
        o = self.options
        task = o.get("task", "?")
        if task == "arith":
            return f"arith ({o.get('arith_digits')}-digit, ops {o.get('arith_ops')})"
        return "GSM8K" if task == "gsm8k" else str(task)

    @property
    def revision(self) -> str:
        m = self.model
        for key in ("commit", "revision", "sha256"):
            if m.get(key):
                return f"{key} {m[key]}"
        return "not recorded"

    @property
    def hardware(self) -> str:
        c = self.config
        dev = c.get("cuda") or c.get("device") or "?"
        return f"{dev}; {c.get('platform', '?')}; torch threads {c.get('torch_threads', '?')}"

    @property
    def group_sizes(self) -> list[int]:
        return list(self.options.get("group_sizes") or sorted({r["R"] for r in self.summary["rows"]}))

    @property
    def is_paper_setting(self) -> bool:
        """The paper's model (Nemotron-Mini-4B, real checkpoint weights) on GSM8K. A random-weights
        Nemotron architecture, a GGUF of something else or another task never qualifies."""
        m = self.model
        ident = f"{m.get('id', '')} {m.get('spec', '')}".lower()
        real = m.get("kind") in ("hub", "local") and "random" not in ident
        return real and "nemotron" in ident and "4b" in ident and self.options.get("task") == PAPER_TASK

    def row(self, R: int, matrix: str, condition: str, metric: str) -> dict | None:
        for r in self.summary["rows"]:
            if (r["R"], r["matrix"], r["condition"], r["metric"]) == (R, matrix, condition, metric):
                return r
        return None


def load_run(path: Path) -> Run:
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{path}: a file, not a run directory of python -m grpo_verify.empirical")
    if not path.is_dir():
        raise InputError(f"{path}: no such run directory")
    if not (path / "config.json").is_file():
        raise InputError(f"{path}: not a run directory of python -m grpo_verify.empirical (no config.json in it)")
    config = _json(path / "config.json")
    if not isinstance(config, dict) or not isinstance(config.get("options"), dict):
        raise InputError(f"{path / 'config.json'}: not a config.json of python -m grpo_verify.empirical "
                         "(no 'options' object)")
    summary_path = path / "summary.json"
    partial = False
    if summary_path.exists():
        summary = _json(summary_path)
        check_summary(summary, summary_path)
        items = sum(int(c.get("items", 0)) for c in summary["counts"].values())
    else:
        summary, items = _summarise_partial(path, config)
        partial = True
    plots = sorted(p for p in path.iterdir() if p.suffix in (".png", ".pdf") and p.is_file())
    return Run(path, config, summary, partial, items, plots)


def check_summary(summary: object, where: Path) -> None:
    if not isinstance(summary, dict):
        raise InputError(f"{where}: malformed summary (expected a JSON object)")
    for key in ("rows", "counts"):
        if key not in summary:
            raise InputError(f"{where}: malformed summary (no {key!r})")
    if not isinstance(summary["rows"], list) or not isinstance(summary["counts"], dict):
        raise InputError(f"{where}: malformed summary ('rows' must be a list, 'counts' an object)")
    for k, row in enumerate(summary["rows"]):
        if not isinstance(row, dict) or any(key not in row for key in SUMMARY_ROW_KEYS):
            raise InputError(f"{where}: malformed summary row {k} (needs {', '.join(SUMMARY_ROW_KEYS)})")
        numbers = (row["mean"], row["ci_low"], row["ci_high"], row["n"], row["R"])
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in numbers):
            raise InputError(f"{where}: malformed summary row {k} (non-numeric mean, ci or n)")


def _summarise_partial(path: Path, config: dict) -> tuple[dict, int]:
    """A run still in progress has results.jsonl but no summary.json: summarise what is there with
    the run's own code and options (the ledger says so)."""
    from grpo_verify.empirical import report, store
    from grpo_verify.empirical.config import Config

    results = path / "results.jsonl"
    if not results.exists():
        raise InputError(f"{path}: neither summary.json nor results.jsonl; not a run of python -m grpo_verify.empirical")
    try:
        records, _torn = store.read_jsonl(results)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if not records:
        raise InputError(f"{results}: no finished item yet")
    known = {f.name for f in fields(Config)}
    opts = {k: v for k, v in config["options"].items() if k in known}
    for key in ("group_sizes", "sparsity_thresholds"):
        if key in opts and opts[key] is not None:
            opts[key] = tuple(opts[key])
    try:
        cfg = Config(**opts)
        records.sort(key=lambda r: (r["prompt"], r["R"]))
        summary = report.summarise(records, cfg)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{results}: malformed record ({exc!r})") from None
    return summary, len(records)


# -- synthetic training (experiments/synthetic_training.py) ---------------------------------------
@dataclass
class Synthetic:
    path: Path
    summary: dict
    plots: list[Path]

    def change(self, R: str, metric: str = "exact_zero_frac") -> dict:
        return self.summary["per_R"][R][metric]


def load_synthetic(path: Path) -> Synthetic:
    path = Path(path)
    data = _json(path)
    try:
        per_R = data["per_R"]
        for R, entry in per_R.items():
            for part in ("start", "end", "change"):
                v = entry["exact_zero_frac"][part]
                if not all(isinstance(v[k], (int, float)) and math.isfinite(v[k]) for k in ("mean", "se")):
                    raise TypeError(f"per_R[{R}].exact_zero_frac.{part}")
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path}: malformed synthetic-training summary (missing or non-numeric {exc})") from None
    plots = sorted(p for p in path.parent.iterdir() if p.suffix in (".png", ".pdf") and p.is_file())
    return Synthetic(path, data, plots)
