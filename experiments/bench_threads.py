"""What oversubscribes a small CPU: torch's intra-op threads against other work, measured side by side.

``python -m grpo_verify.empirical`` spends its CPU time in three kinds of kernel: float64 SVDs of
weight-gradient matrices (LAPACK through torch), float32 matmuls (a forward and backward of the
model) and numpy on R x R matrices (negligible). Each is timed here with torch at 1 thread and at
the machine's default, first on an idle machine, then with the same number of busy processes
competing (what a shared CI runner, a second job or a build does), in one run, interleaved, the
median of --repeat. numpy's own BLAS threads are set by environment variables before numpy starts
(OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, OMP_NUM_THREADS); they are reported, not changed here.

    python experiments/bench_threads.py                 # prints the table and the ratios
    python experiments/bench_threads.py --repeat 7 --out runs/bench_threads.json

The ratio "default / 1 thread" above 1 means the default threads lose; the empirical command's
CPU default (--threads 1) is chosen from this measurement (README, "Thread defaults").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grpo_verify.outputs import output_problem, write_atomically  # noqa: E402


def _busy(stop) -> None:
    """A competing process: pure-Python arithmetic until told to stop."""
    x = 0
    while not stop.is_set():
        for k in range(10_000):
            x = (x * 31 + k) % 1_000_003


def _time(fn, repeat: int) -> float:
    fn()  # warm-up (allocations, first-call dispatch)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def kernels(size: int) -> dict:
    """The three kinds of work, on shapes of SmolLM2-135M (hidden 576, MLP 1536)."""
    g = torch.Generator().manual_seed(0)
    w64 = torch.randn(576, 1536, dtype=torch.float64, generator=g)
    a32 = torch.randn(size, 576, generator=g)
    w32 = torch.randn(576, 1536, generator=g, requires_grad=True)

    def matmul_backward():
        out = (a32 @ w32).relu().sum()
        out.backward()
        w32.grad = None

    return {"svd float64 576x1536": lambda: torch.linalg.svdvals(w64),
            f"matmul+backward float32 {size}x576x1536": matmul_backward}


def measure(threads: int, busy: int, repeat: int, size: int) -> dict[str, float]:
    stop = mp.Event()
    workers = [mp.Process(target=_busy, args=(stop,), daemon=True) for _ in range(busy)]
    for w in workers:
        w.start()
    try:
        time.sleep(0.5 if busy else 0)  # let the competitors get scheduled
        torch.set_num_threads(threads)
        return {name: _time(fn, repeat) for name, fn in kernels(size).items()}
    finally:
        stop.set()
        for w in workers:
            w.join()


def main(argv: list[str] | None = None) -> int:
    cores = os.cpu_count() or 1
    default = torch.get_num_threads()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--repeat", type=int, default=5, help="timed calls per kernel (the median is reported)")
    p.add_argument("--busy", type=int, default=cores, help="competing busy processes in the loaded condition")
    p.add_argument("--tokens", type=int, default=512, help="rows of the matmul (tokens of a group)")
    p.add_argument("--out", default=None, help="also write the measurements as JSON to this file")
    args = p.parse_args(argv)
    if args.repeat < 1 or args.busy < 0 or args.tokens < 1:
        p.error("--repeat and --tokens must be >= 1 and --busy >= 0")
    if args.out and (problem := output_problem(Path(args.out), "file")):
        p.error(f"--out {args.out}: {problem}")
    print(f"{cores} cores, torch {torch.__version__}, default torch threads {default}; numpy/BLAS env: "
          + ", ".join(f"{k}={os.environ.get(k, 'unset')}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                                    "MKL_NUM_THREADS")), flush=True)
    rows = []
    for load in (0, args.busy):
        for threads in sorted({1, default}):
            seconds = measure(threads, load, args.repeat, args.tokens)
            for kernel, s in seconds.items():
                rows.append({"busy_processes": load, "threads": threads, "kernel": kernel, "seconds": s})
                print(f"busy {load:>2}  threads {threads:>2}  {kernel:<40} {s * 1e3:9.1f} ms", flush=True)
    print("\nratio default threads / 1 thread (above 1: the default loses):")
    for load in (0, args.busy):
        for kernel in kernels(args.tokens):
            one = next(r["seconds"] for r in rows if r["busy_processes"] == load and r["threads"] == 1
                       and r["kernel"] == kernel)
            dflt = next(r["seconds"] for r in rows if r["busy_processes"] == load and r["threads"] == default
                        and r["kernel"] == kernel)
            print(f"  busy {load:>2}  {kernel:<40} {dflt / one:6.2f}")
    if args.out:
        write_atomically(Path(args.out), json.dumps({"cores": cores, "default_threads": default,
                                                     "torch": torch.__version__, "platform": platform.platform(),
                                                     "rows": rows}, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
