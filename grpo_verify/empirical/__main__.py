"""python -m grpo_verify.empirical: the rank structure of GRPO gradients on a real model.

The pipeline, top to bottom:
  1. options -> Config (config.py); validated before anything is loaded or written
  2. device, model choice, problems (data.py); a bad input fails here, before --out is touched
  3. model and tokenizer (models.py)
  4. --out: a fresh run, or --resume of the same config (store.py)
  5. for each prompt and each R: sample R completions (sampling.py), score them (reward.py),
     measure K, spectra, rank metrics, per-layer spectra and controls (measure.py); append to
     results.jsonl (fsync'ed) as each item finishes
  6. optional GRPO training: TRL's GRPOTrainer with GRPOVerifyCallback (train.py)
  7. summary.json, table.md, table.tex, plots (report.py)
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
import time
from pathlib import Path

import torch

from . import data, memory, models, report, reward, store
from .config import Config, config_from_args
from .measure import advantage_values, advantages_are_zero, layer_controls_memory_problem, measure_group
from .sampling import derived_seed, prompt_ids, sample_group

PACKAGES = ("torch", "transformers", "numpy", "math-verify", "datasets", "tqdm", "matplotlib", "gguf", "accelerate",
            "tokenizers", "trl", "grpo-verify")


class StageTicker:
    """Shows on the progress bar what a group is doing and for how long, refreshed every second from
    a daemon thread, so a long stage (a backward over 135M parameters, the per-layer SVDs) is seen to
    move."""

    def __init__(self, bar, period: float = 1.0):
        import threading
        self.bar, self.period, self.text, self.since = bar, period, "", time.perf_counter()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        if not getattr(bar, "disable", True):
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def enter(self, text: str) -> None:
        with self._lock:
            self.text, self.since = text, time.perf_counter()
        self._show()

    def leave(self) -> None:
        with self._lock:
            self.text = ""
        self._show()

    def _show(self) -> None:
        with self._lock:
            text = f"{self.text} ({time.perf_counter() - self.since:.0f} s)" if self.text else ""
        self.bar.set_postfix_str(text, refresh=True)

    def _tick(self) -> None:
        while not self._stop.wait(self.period):
            self._show()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.bar.close()


class RunError(RuntimeError):
    """A refused run (existing output, a resume with a different config)."""


class Interrupted(RuntimeError):
    """Raised by the test hook ``stop_after_items`` to simulate a kill."""


def package_versions() -> dict[str, str | None]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def load_problems(cfg: Config) -> list[data.Problem]:
    if cfg.task == "arith":
        made = data.make_arith(cfg.num_prompts + cfg.prompt_offset, cfg.arith_digits, cfg.arith_ops, cfg.seed)
        return data.problem_window(made, cfg.num_prompts, cfg.prompt_offset, "arith")  # numbered from 0, as GSM8K
    if cfg.dataset_file:
        return data.load_gsm8k_file(cfg.dataset_file, cfg.num_prompts, cfg.prompt_offset)
    return data.load_gsm8k_hub(cfg.dataset_split, cfg.num_prompts, cfg.prompt_offset)


def prepare_out(cfg: Config, model_spec: str) -> tuple[Path, set[tuple[int, int]], list[dict]]:
    """Check --out (fresh or a compatible resume) WITHOUT writing; return done items and records."""
    out = Path(cfg.out)
    config_path, results_path = out / "config.json", out / "results.jsonl"
    if not cfg.resume:
        if out.exists() and any(out.iterdir()):
            raise RunError(f"--out {out} already holds files; pass --resume to continue that run or choose "
                           "another --out")
        return out, set(), []
    if not config_path.exists():
        if out.exists() and any(out.iterdir()):
            raise RunError(f"--resume: {out} has no config.json, so it is not a run of this tool")
        print(f"--resume: nothing to resume in {out}; starting a fresh run", flush=True)
        return out, set(), []
    import json
    try:
        saved = json.loads(config_path.read_text(encoding="utf-8"))
        if not isinstance(saved, dict) or not isinstance(saved.get("options"), dict):
            raise ValueError("expected an object with an 'options' object")
    except (ValueError, UnicodeDecodeError) as err:
        where = f" (line {err.lineno}, column {err.colno}: {err.msg})" if isinstance(err, json.JSONDecodeError) \
            else f" ({err})"
        raise RunError(f"--resume: {config_path} is not a readable config of this tool{where}; it was not written "
                       "by python -m grpo_verify.empirical, or it was edited or truncated") from None
    diffs = [k for k, v in cfg.compared().items() if saved["options"].get(k) != v]
    if saved.get("model_spec") != model_spec:
        diffs.append(f"model (resolved: saved {saved.get('model_spec')!r}, now {model_spec!r})")
    if diffs:
        detail = ", ".join(f"--{d.replace('_', '-')} (saved {saved['options'].get(d)!r}, now "
                           f"{cfg.compared()[d]!r})" if d in saved["options"] else d for d in diffs)
        raise RunError(f"--resume: the options differ from the saved run in {out}: {detail}")
    records, torn = store.read_jsonl(results_path, repair=False)
    return out, {(r["prompt"], r["R"]) for r in records}, records


def main(argv: list[str] | None = None, *, stop_after_items: int | None = None) -> int:
    cfg = config_from_args(argv)
    threads = torch.get_num_threads()
    state: dict = {}
    try:
        cfg.validate()
        return run(cfg, stop_after_items=stop_after_items, state=state)
    except (ValueError, data.DataError, models.ModelError, RunError, store.OutError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\n" + interrupted_message(state, sys.argv[1:] if argv is None else list(argv)), file=sys.stderr)
        return 130
    finally:
        torch.set_num_threads(threads)  # main() may be called in-process (tests): leave no global change


def interrupted_message(state: dict, argv: list[str]) -> str:
    """One line after Ctrl-C: what is saved and how to continue."""
    out = state.get("out")
    if out is None or not (Path(out) / "config.json").exists():
        return "interrupted before anything was saved; nothing to resume"
    items = state.get("items", 0)
    options = [a for a in argv if a != "--resume"]
    command = "python -m grpo_verify.empirical " + " ".join(options + ["--resume"])
    training = state.get("training")
    steps = "" if training is None else (f", and {len(training)} training steps in {out}/train.jsonl (training "
                                         "restarts from step 0 on --resume)")
    return (f"interrupted: {items} finished groups are saved in {out}/results.jsonl{steps}; continue with: "
            f"{command}")


def memory_preflight(model, tok, problems, cfg: Config, info: dict, device) -> dict:
    """Estimate the run's peak memory (grpo_verify.empirical.memory), refuse in one line when it does not fit in
    what the device has free, print it (and, for a model with fewer blocks than its architecture, the estimate at
    the architecture's depth); the returned record goes to memory.json with the measured peak."""
    shapes = memory.parameter_shapes(model)
    dtype = next(model.parameters()).dtype
    vocab = int(getattr(model.config, "vocab_size", None) or len(tok))
    longest = max(len(prompt_ids(tok, p, cfg.answer_format)) for p in problems)
    est = memory.estimate(shapes, dtype, cfg, vocab, longest)
    free = memory.available_bytes(device)
    weights = est.stages["engine forward"]["weights"]
    record = {"estimate": est.stages, "estimated_peak_stage": est.peak()[0], "estimated_peak_bytes": est.peak()[1],
              "free_bytes_after_loading": free, "longest_prompt_tokens": longest}
    line = f"memory preflight: estimated peak {est.describe()}"
    if free is not None:
        line += f"; {free / memory.GiB:.1f} GiB free after loading the weights"
    depth = info.get("architecture_layers")
    if depth and depth != getattr(model.config, "num_hidden_layers", depth):
        full = memory.estimate(memory.with_blocks(shapes, depth), dtype, cfg, vocab, longest)
        record.update(architecture_layers=depth, estimate_at_architecture_depth=full.stages,
                      estimated_peak_bytes_at_architecture_depth=full.peak()[1])
        line += f"; at the architecture's {depth} blocks: {full.describe()}"
    print(line, flush=True)
    why = memory.problem(est, free, already_held=weights)
    if why:
        raise RunError(why)
    return record


def run(cfg: Config, *, stop_after_items: int | None = None, state: dict | None = None) -> int:
    from tqdm.auto import tqdm
    state = {} if state is None else state
    t_start = time.perf_counter()
    # 2. device, the options left to it, model choice, problems, --out: every input error surfaces
    #    before anything is loaded or written
    device = models.resolve_device(cfg.device)
    cuda = device.type == "cuda"
    cfg, notes = cfg.resolved(cuda)
    cfg.validate()
    for note in notes:
        print(f"default for this machine: {note}", flush=True)
    if not cuda and notes:
        print("the paper's setting (GSM8K, Nemotron-Mini-4B, 20 prompts, R = 2, 4, 8, every control) runs by "
              "default on a CUDA machine: python -m grpo_verify.empirical --out DIR (or see "
              "experiments/empirical_gpu.sh)", flush=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    store.check_out_dir(Path(cfg.out))
    model_spec = cfg.model
    if model_spec is None:
        model_spec, why = models.default_model(torch.cuda.is_available() and device.type == "cuda")
        print(f"no --model given: using {model_spec} ({why})", flush=True)
    models.check_model_arg(model_spec, device, cfg.num_layers, cfg.vocab_size)
    if cfg.train_steps:
        from .train import check_options
        check_options(cfg, device)
    problems = load_problems(cfg)
    out, done, records = prepare_out(cfg, model_spec)
    state["out"], state["items"] = out, len(records)
    # 3. the model
    t0 = time.perf_counter()
    loaded = models.load(model_spec, device, cfg.dtype, cfg.revision, cfg.trust_remote_code, cfg.seed,
                         cfg.num_layers, cfg.vocab_size)
    model, tok = loaded.model, loaded.tokenizer
    print(f"model {loaded.info.get('id')}: {loaded.info['parameters'] / 1e6:.1f}M parameters, {loaded.info['dtype']} "
          f"on {device}, loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    if cfg.controls and cfg.layer_controls and device.type == "cuda":
        problem = layer_controls_memory_problem(loaded.info["parameters"], torch.cuda.mem_get_info(device)[0])
        if problem:
            raise RunError(problem)
    preflight = memory_preflight(model, tok, problems, cfg, loaded.info, device)
    # 4. output directory: config.json on a fresh run; on resume drop a torn last line
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    if cfg.resume and (out / "config.json").exists():
        records, torn = store.read_jsonl(results_path, repair=True)
        if torn:
            print(f"--resume: dropped a torn last line ({torn} bytes) of {results_path}", flush=True)
        print(f"--resume: {len(records)} items already done", flush=True)
    else:
        store.atomic_write_json(out / "config.json", {
            "options": cfg.to_dict(), "model_spec": model_spec, "model": loaded.info,
            "dataset": ({"file_sha256": models.sha256_file(Path(cfg.dataset_file)), "problems": len(problems)}
                        if cfg.task == "gsm8k" and cfg.dataset_file else
                        {"hub": "openai/gsm8k (main)", "split": cfg.dataset_split} if cfg.task == "gsm8k" else
                        {"generated": "arith", "problems": len(problems)}),
            "device": str(device), "cuda": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
            "torch_threads": torch.get_num_threads(), "packages": package_versions(),
            "platform": platform.platform(), "command": "python -m grpo_verify.empirical " + " ".join(sys.argv[1:]),
            "seeds": {"sampling": "derived_seed(seed, prompt, R)", "controls": "derived_seed(seed, 'controls', prompt, R)",
                      "training": "trl.GRPOConfig(seed=seed): TRL's sampling and data order",
                      "bootstrap": "derived_seed(seed, 'bootstrap', row)",
                      "arith": f"arith:{cfg.seed}:{cfg.arith_digits}:{cfg.arith_ops}"}})
        records = []
    # 5. measure every (prompt, R)
    other = "partial" if cfg.reward == "binary" else "binary"
    other_name = "partial_credit" if cfg.reward == "binary" else "binary_reward"
    todo = [(p, R) for p in problems for R in cfg.group_sizes if (p.index, R) not in done]
    bar = tqdm(total=len(todo), desc="groups", unit="group", disable=not cfg.progress, dynamic_ncols=True)
    stage = StageTicker(bar)
    finished = 0
    for problem, R in todo:
        seed = derived_seed(cfg.seed, problem.index, R)
        t0 = time.perf_counter()
        stage.enter(f"prompt {problem.index + 1}/{len(problems)}, R={R}: sampling {R} completions")
        ro = sample_group(model, tok, prompt_ids(tok, problem, cfg.answer_format), R, temperature=cfg.temperature,
                          top_p=cfg.top_p, max_new_tokens=cfg.max_new_tokens, seed=seed)
        t_gen = time.perf_counter() - t0
        rewards = reward.score(ro.texts, problem.reference, cfg.reward, cfg.strict_format)
        other_rewards = reward.score(ro.texts, problem.reference, other, cfg.strict_format)
        shown = "".join(str(int(x)) for x in rewards) if cfg.reward == "binary" else \
            ",".join(f"{x:.2f}" for x in rewards)
        counted = (cfg.degenerate_groups == "count"
                   and advantages_are_zero(advantage_values(rewards, cfg.advantage, cfg.advantage_eps)))
        stage.enter(f"prompt {problem.index + 1}/{len(problems)}, R={R}, rewards {shown}: " +
                    ("all equal, counted (GRPO gradient 0, no backward)" if counted else
                     "forward, backward, per-layer spectra"))
        measured = measure_group(model, ro, rewards, other_rewards, other_name, cfg,
                                 derived_seed(cfg.seed, "controls", problem.index, R))
        measured["seconds"]["generation"] = round(t_gen, 3)
        record = {"prompt": problem.index, "R": R, "source": problem.source, "question": problem.question,
                  "reference": problem.reference, "seed": seed, "completions": ro.texts,
                  "predictions": [reward.extract_answer(t, cfg.strict_format) for t in ro.texts],
                  "completion_tokens": ro.completion_tokens, "rewards": rewards, "other_rewards": other_rewards,
                  "measure": measured}
        store.append_jsonl(results_path, record)
        records.append(record)
        state["items"] = len(records)
        stage.leave()
        bar.update()
        finished += 1
        if stop_after_items is not None and finished >= stop_after_items:
            stage.close()
            raise Interrupted(f"stopped after {finished} items (test hook)")
    stage.close()
    # 6. training
    train_records = None
    if cfg.train_steps:
        from .train import train
        train_path = out / "train.jsonl"
        train_records, _ = store.read_jsonl(train_path, repair=True) if cfg.resume else ([], 0)
        if len(train_records) < cfg.train_steps:
            # TRL's trainer runs without checkpoints (no optimizer state is saved), so an interrupted training
            # phase restarts from step 0 (the measurements above never change the weights: step 0 sees the same
            # model)
            if train_records:
                print(f"--resume: {len(train_records)} of {cfg.train_steps} training steps were done; training "
                      "restarts from step 0 (no optimizer state is saved)", flush=True)
            store.atomic_write_text(train_path, "")
            train_records = []
            state["training"] = train_records
            train(model, tok, problems, cfg, lambda r: (store.append_jsonl(train_path, r), train_records.append(r)),
                  progress=cfg.progress, out_dir=out)
    # 7. report
    records.sort(key=lambda r: (r["prompt"], r["R"]))
    preflight["measured_peak_bytes"] = memory.measured_peak_bytes(device)
    print(f"memory: measured peak {preflight['measured_peak_bytes'] / memory.GiB:.1f} GiB "
          f"({'CUDA max_memory_allocated' if cuda else 'peak resident set of this process'}); the preflight "
          f"estimated {preflight['estimated_peak_bytes'] / memory.GiB:.1f} GiB", flush=True)
    store.atomic_write_json(out / "memory.json", preflight)
    summary = report.write_all(records, cfg, out, report.run_title(loaded.info.get('id'), cfg), train_records)
    elapsed = time.perf_counter() - t_start
    store.atomic_write_json(out / "run.json", {"seconds_this_invocation": round(elapsed, 1),
                                               "items_this_invocation": finished, "items_total": len(records)})
    print(f"done: {len(records)} items ({finished} this run) in {elapsed:.0f} s; wrote {out}/", flush=True)
    for R, c in summary["counts"].items():
        mixed = c["items"] - c["degenerate"]
        print(f"  R={R}: {c['items']} groups, {mixed} with mixed rewards, {c['degenerate']} degenerate (all rewards "
              f"equal), mean reward {c['mean_reward']:.3f}")
    print(f"  table: {out}/table.md" + (f"; plots: {out}/*.png" if cfg.plots and records else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
