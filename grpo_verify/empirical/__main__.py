"""python -m grpo_verify.empirical: the rank structure of GRPO gradients on a real model.

The pipeline, top to bottom:
  1. options -> Config (config.py); validated before anything is loaded or written
  2. device, model choice, problems (data.py); a bad input fails here, before --out is touched
  3. model and tokenizer (models.py)
  4. --out: a fresh run, or --resume of the same config (store.py)
  5. for each prompt and each R: sample R completions (sampling.py), score them (reward.py),
     measure K, spectra, rank metrics, per-layer spectra and controls (measure.py); append to
     results.jsonl (fsync'ed) as each item finishes
  6. optional GRPO training steps (train.py)
  7. summary.json, table.md, table.tex, plots (report.py)
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
import time
from pathlib import Path

import torch

from . import data, models, report, reward, store
from .config import Config, config_from_args
from .measure import layer_controls_memory_problem, measure_group
from .sampling import derived_seed, prompt_ids, sample_group

PACKAGES = ("torch", "transformers", "numpy", "math-verify", "datasets", "tqdm", "matplotlib", "gguf", "accelerate",
            "tokenizers", "grpo-verify")


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
        return data.make_arith(cfg.num_prompts + cfg.prompt_offset, cfg.arith_digits, cfg.arith_ops,
                               cfg.seed)[cfg.prompt_offset:]
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
    saved = json.loads(config_path.read_text())
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
    try:
        cfg.validate()
        return run(cfg, stop_after_items=stop_after_items)
    except (ValueError, data.DataError, models.ModelError, RunError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        torch.set_num_threads(threads)  # main() may be called in-process (tests): leave no global change


def run(cfg: Config, *, stop_after_items: int | None = None) -> int:
    from tqdm.auto import tqdm
    t_start = time.perf_counter()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    # 2. device, model choice, problems: every input error surfaces before --out is written
    device = models.resolve_device(cfg.device)
    model_spec = cfg.model
    if model_spec is None:
        model_spec, why = models.default_model(torch.cuda.is_available() and device.type == "cuda")
        print(f"no --model given: using {model_spec} ({why})", flush=True)
    models.check_model_arg(model_spec, device)
    problems = load_problems(cfg)
    out, done, records = prepare_out(cfg, model_spec)
    # 3. the model
    t0 = time.perf_counter()
    loaded = models.load(model_spec, device, cfg.dtype, cfg.revision, cfg.trust_remote_code, cfg.seed)
    model, tok = loaded.model, loaded.tokenizer
    print(f"model {loaded.info.get('id')}: {loaded.info['parameters'] / 1e6:.1f}M parameters, {loaded.info['dtype']} "
          f"on {device}, loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    if cfg.controls and cfg.layer_controls and device.type == "cuda":
        problem = layer_controls_memory_problem(loaded.info["parameters"], torch.cuda.mem_get_info(device)[0])
        if problem:
            raise RunError(problem)
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
                      "training": "derived_seed(seed, 'train', step, k)", "bootstrap": "derived_seed(seed, 'bootstrap', row)",
                      "arith": f"arith:{cfg.seed}:{cfg.arith_digits}:{cfg.arith_ops}"}})
        records = []
    # 5. measure every (prompt, R)
    other = "partial" if cfg.reward == "binary" else "binary"
    other_name = "partial_credit" if cfg.reward == "binary" else "binary_reward"
    todo = [(p, R) for p in problems for R in cfg.group_sizes if (p.index, R) not in done]
    bar_gen = tqdm(total=len(todo), desc="generation", disable=not cfg.progress, position=0)
    bar_grad = tqdm(total=len(todo), desc="gradients ", disable=not cfg.progress, position=1)
    finished = 0
    for problem, R in todo:
        seed = derived_seed(cfg.seed, problem.index, R)
        t0 = time.perf_counter()
        ro = sample_group(model, tok, prompt_ids(tok, problem, cfg.answer_format), R, temperature=cfg.temperature,
                          top_p=cfg.top_p, max_new_tokens=cfg.max_new_tokens, seed=seed)
        t_gen = time.perf_counter() - t0
        bar_gen.update()
        rewards = reward.score(ro.texts, problem.reference, cfg.reward, cfg.strict_format)
        other_rewards = reward.score(ro.texts, problem.reference, other, cfg.strict_format)
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
        bar_grad.update()
        finished += 1
        if stop_after_items is not None and finished >= stop_after_items:
            raise Interrupted(f"stopped after {finished} items (test hook)")
    bar_gen.close()
    bar_grad.close()
    # 6. training
    train_records = None
    if cfg.train_steps:
        from .train import train
        train_path = out / "train.jsonl"
        train_records, _ = store.read_jsonl(train_path, repair=True) if cfg.resume else ([], 0)
        if len(train_records) < cfg.train_steps:
            # optimizer state is not saved, so an interrupted training phase restarts from step 0
            # (the measurements above never change the weights, so step 0 sees the same model)
            store.atomic_write_text(train_path, "")
            train_records = []
            train(model, tok, problems, cfg, lambda r: (store.append_jsonl(train_path, r), train_records.append(r)),
                  progress=cfg.progress)
    # 7. report
    records.sort(key=lambda r: (r["prompt"], r["R"]))
    title = f"{loaded.info.get('id')} on {cfg.task}" + (f" ({cfg.arith_digits}-digit)" if cfg.task == "arith" else "")
    summary = report.write_all(records, cfg, out, title, train_records)
    elapsed = time.perf_counter() - t_start
    store.atomic_write_json(out / "run.json", {"seconds_this_invocation": round(elapsed, 1),
                                               "items_this_invocation": finished, "items_total": len(records)})
    print(f"done: {len(records)} items ({finished} this run) in {elapsed:.0f} s; wrote {out}/", flush=True)
    for R, c in summary["counts"].items():
        print(f"  R={R}: {c['items']} groups, {c['degenerate']} degenerate, mean reward {c['mean_reward']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
