"""Plant plausible developer bugs, one at a time, in a copy of the package and run the tests of the module planted.

The mutation pass a change gets before it lands (issue 27, item 5): mutmut's syntactic operators rarely make the
bug a developer makes (an axis swapped, a block forgotten, a union read as each part), so each module touched
has a set of hand-written plants here, and each plant must make that module's tests fail. A plant that leaves
them green is a behaviour no test pins. The proof kernel's plants are ``experiments/kernel_planted_bugs.py``,
which runs the kernel's longer suites with this script's runner. Run from the repository root:

    python experiments/planted_bugs.py                 # every set
    python experiments/planted_bugs.py svd coq         # some sets

Prints one line per plant and a per-set count; exits 1 if a plant survives or no longer applies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# set -> (the tests to run, [(file under grpo_verify/, the text as it is, the planted bug)])
SETS: dict[str, tuple[list[str], list[tuple[str, str, str]]]] = {
    "svd": (["tests/test_svd.py"], [
        ("svd.py", "            triangle = torch.linalg.qr(stacked, mode=\"r\")[1]",
         "            triangle = torch.linalg.qr(block, mode=\"r\")[1]"),  # each block's R alone
        ("svd.py", "    out[:sigma.numel()] = sigma", "    out[out.numel() - sigma.numel():] = sigma"),  # zeros first
        ("svd.py", "        sigma = torch.linalg.svdvals(sub.to(torch.float64))",
         "        sigma = torch.linalg.svdvals(sub).to(torch.float64)"),  # float32 singular values
        ("svd.py", "    rows, cols = nonzero.any(dim=1), nonzero.any(dim=0)",
         "    rows, cols = nonzero.all(dim=1), nonzero.any(dim=0)"),  # rows dropped unless all nonzero
        ("svd.py", "        for start in range(0, r, step):", "        for start in range(0, r - step, step):"),  # last block
        ("svd.py", "            block = sub[start:start + step].to(torch.float64)",
         "            block = sub[start + 1:start + step].to(torch.float64)"),  # a row lost per block
    ]),
    "memory": (["tests/test_empirical_memory.py"], [
        ("empirical/memory.py", "    return outside + [(_BLOCK.sub(lambda m: f\"{m.group(1)}layers.{b}.\", n, count=1), s)\n"
         "                      for b in range(blocks) for n, s in first]",
         "    return outside + [(_BLOCK.sub(lambda m: f\"{m.group(1)}layers.{b}.\", n, count=1), s)\n"
         "                      for b in range(blocks - 1) for n, s in first]"),
        ("empirical/memory.py", "\"logits\": R * T * vocab * (size + 8),\n", "\"logits\": R * T * vocab * size,\n"),
        ("empirical/memory.py", "    sets = 1 + (HELD_GRADIENT_SETS - 1 if cfg.controls and cfg.layer_controls else 0)",
         "    sets = 1 + (HELD_GRADIENT_SETS - 1 if cfg.controls else 0)"),
        ("empirical/memory.py", "    if total - already_held <= budget * free:", "    if total <= budget * free:"),
        ("empirical/memory.py", "        rows = cfg.train_group_size * cfg.train_prompts_per_step",
         "        rows = cfg.train_prompts_per_step"),
        ("empirical/memory.py", "    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024",
         "    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"),
    ]),
    "coq": (["tests/test_coq.py"], [
        ("coq.py", "        if opened != sum(w == \"End\" for w in words):", "        if False:"),  # in a section too
        ("coq.py", "    if union == [CLOSED]:", "    if union:"),  # any answer read as closed
        ("coq.py", "    return {name: answer for (name, _d), answer in zip(printed, each)}",
         "    return {name: each[0] for name, _d in printed}"),
        ("coq.py", "    for m in _PRINT.finditer(code):", "    for m in _PRINT.finditer(source):"),  # comments too
        ("coq.py", "        if len(found) != count:", "        if len(found) < min(count, 1):"),
    ]),
}


def run_plant(work: Path, label: str, file: str, old: str, new: str, tests: list[str],
              workers: str = "0") -> tuple[bool | None, str]:
    """(caught, pytest's closing line) of one plant in a fresh copy of the package, its derivations (where the
    package imports them from, and where the Coq build reads them) and the tests; caught None if the planted text
    is not in the file."""
    tree = work / label
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "grpo_verify", tree / "grpo_verify", ignore=ignore)
    for place in (tree / "derivations", tree / "grpo_verify" / "derivations"):
        shutil.copytree(ROOT / "derivations", place, ignore=ignore)
    shutil.copytree(ROOT / "tests", tree / "tests", ignore=ignore)
    try:
        path = tree / "grpo_verify" / file
        text = path.read_text()
        if old not in text:
            return None, "the planted text is no longer in the code; update the plant"
        path.write_text(text.replace(old, new, 1))
        env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1", GRPO_VERIFY_REQUIRE_COQ="1")
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-n", workers, "-p", "no:randomly", "-p",
                              "no:cacheprovider", *tests], cwd=tree, env=env, capture_output=True, text=True)
        closing = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr.strip()[-200:]
        return run.returncode != 0, closing
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def verdict(caught: bool | None) -> str:
    """How a plant's line reads: caught, SURVIVED, or NOT APPLIED (its text is gone from the code)."""
    return "caught" if caught else "SURVIVED" if caught is False else "NOT APPLIED"


def main(argv: list[str]) -> int:
    unknown = [a for a in argv if a not in SETS]
    if unknown:
        print(f"planted_bugs.py: no plant set {unknown[0]!r}; choose from {', '.join(SETS)}", file=sys.stderr)
        return 2
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for name in argv or list(SETS):
            tests, plants = SETS[name]
            caught_here = 0
            for n, (file, old, new) in enumerate(plants):
                caught, closing = run_plant(Path(work), f"{name}{n}", file, old, new, tests)
                caught_here += bool(caught)
                failures += not caught
                print(f"{name} {n} {file}: {verdict(caught)} ({closing})", flush=True)
            print(f"{name}: {caught_here} of {len(plants)} plants caught by {' '.join(tests)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
