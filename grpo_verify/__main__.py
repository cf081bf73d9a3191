"""``python -m grpo_verify`` (or ``grpo-verify``): what the package offers, and a dispatcher.

    grpo-verify                      this overview
    grpo-verify COMMAND [OPTIONS]    run COMMAND (render, report, empirical) with its own options;
                                     grpo-verify COMMAND --help lists them
"""

from __future__ import annotations

import importlib
import sys

# command -> (module whose main(argv) runs it, what it does)
COMMANDS = {
    "render": ("grpo_verify.render",
               "check every derivation with the proof kernel; write it as LaTeX (and PDF)"),
    "report": ("grpo_verify.report.__main__",
               "the claims ledger: proofs, property tests, runs and a verdict per claim"),
    "empirical": ("grpo_verify.empirical.__main__",
                  "rank and sparsity of GRPO gradients measured on a real model"),
}
# scripts of the source checkout (not installed with the package), run from the repository root
SCRIPTS = {
    "experiments/synthetic_training.py": "GRPO training dynamics on exact synthetic tasks",
    "experiments/bench_gram.py": "Gram engine vs GRPO step vs naive loop vs torch.func",
}


def overview() -> str:
    lines = ["grpo-verify: a verification suite for the mathematics of GRPO.", "",
             "Commands (python -m grpo_verify.COMMAND or grpo-verify COMMAND; add --help for the options):"]
    width = max(len(f"python -m {module.removesuffix('.__main__')}") for module, _ in COMMANDS.values())
    for module, what in COMMANDS.values():
        lines.append(f"  {'python -m ' + module.removesuffix('.__main__'):{width}}  {what}")
    lines += ["", "Experiment scripts (in a source checkout, from the repository root):"]
    width = max(len(f"python {script}") for script in SCRIPTS)
    for script, what in SCRIPTS.items():
        lines.append(f"  {'python ' + script:{width}}  {what}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(overview())
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"usage: grpo-verify [{'|'.join(COMMANDS)}] [OPTIONS]\n"
              f"grpo-verify: error: unknown command {command!r}; choose one of {', '.join(COMMANDS)} "
              "(grpo-verify alone lists what each does)", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
