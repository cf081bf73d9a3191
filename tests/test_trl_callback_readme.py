"""The README's ``GRPOVerifyCallback`` example, run as written (skipped without ``trl``).

The python block of the README section "Inside a TRL run: `GRPOVerifyCallback`" is extracted literally and executed
with the one substitution the README states: the hub model id ``"HuggingFaceTB/SmolLM2-135M-Instruct"`` is replaced by
the path of the tests' tiny float64 Llama (``tests/trl_two_process_worker.py``, saved with ``save_pretrained`` with its
tokenizer), offline, in a temporary working directory. The run's log history must hold TRL's keys and the callback's,
and in every log line (``logging_steps`` > 1, ``every`` > 1) the zero-advantage fraction must equal TRL's
``frac_reward_zero_std``, both being means over the same logging window.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

trl = pytest.importorskip("trl")

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")

sys.path.insert(0, str(Path(__file__).parent))
from trl_two_process_worker import OFFLINE, build_tiny_model  # noqa: E402

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Inside a TRL run: `GRPOVerifyCallback`"
HUB_MODEL = '"HuggingFaceTB/SmolLM2-135M-Instruct"'
P = "grpo_verify/"


def readme_block() -> str:
    """The section's one python block, verbatim."""
    text = README.read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    blocks = re.findall(r"^```python\n(.*?)^```$", text[start:end], flags=re.S | re.M)
    assert len(blocks) == 1, f"expected one python block in {SECTION!r}, found {len(blocks)}"
    return blocks[0]


def test_the_substitution_is_the_documented_one():
    text = README.read_text()
    section = text[text.index(SECTION):text.index("## Cross-check against TRL")]
    assert "the tests run this block with the model replaced by a tiny local one" in " ".join(section.split())
    assert readme_block().count(HUB_MODEL) == 1


@pytest.fixture
def run_readme(tmp_path, monkeypatch):
    import huggingface_hub.constants

    for name in OFFLINE:
        monkeypatch.setenv(name, "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    model_dir = build_tiny_model(tmp_path / "tiny")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # the block's output_dir="out" lands here

    def run(transform=lambda code: code):
        code = readme_block().replace(HUB_MODEL, repr(str(model_dir)))  # the one documented substitution
        namespace = {"__name__": "__readme__"}
        exec(compile(transform(code), str(README), "exec"), namespace)
        return namespace

    return run


def _lines(trainer):
    return [entry for entry in trainer.state.log_history if "loss" in entry]


def check_log(trainer, callback):
    """TRL's keys and the callback's in every log line; the zero-advantage fraction equal to TRL's window mean."""
    lines = _lines(trainer)
    logging_steps, every = trainer.args.logging_steps, callback.config.every
    assert logging_steps > 1 and every > 1  # the case where the windows matter
    assert [line["step"] for line in lines] == list(range(logging_steps, trainer.args.max_steps + 1, logging_steps))
    for line in lines:
        for key in ("reward", "frac_reward_zero_std", "loss", P + "zero_adv/group_fraction",
                    P + "zero_adv/exact_fraction"):
            assert key in line, (key, sorted(line))
        assert line[P + "zero_adv/group_fraction"] == pytest.approx(line["frac_reward_zero_std"], abs=1e-6)
        # the every-k keys say which step they were measured on: the window's measured step (every == logging_steps)
        window = range(line["step"] - logging_steps + 1, line["step"] + 1)
        measured = [s for s in window if (s - 1) % every == 0]
        assert line[P + "measured_step"] == pytest.approx(sum(measured) / len(measured))
        assert P + "gram/effective_rank" in line and P + "update/unchanged_step/bf16" in line


def test_the_readme_example_runs_and_logs_tr_ls_and_the_callbacks_keys(run_readme, capsys):
    from grpo_verify.trl_callback import GRPOVerifyCallback

    namespace = run_readme()
    trainer = namespace["trainer"]
    callbacks = [c for c in trainer.callback_handler.callbacks if isinstance(c, GRPOVerifyCallback)]
    assert len(callbacks) == 1
    callback = callbacks[0]
    check_log(trainer, callback)
    # zero_adv was measured on every step, the rest on the every-k steps only
    assert sorted(callback.logged) == list(range(1, trainer.args.max_steps + 1))
    assert [r["step"] for r in callback.records] == list(range(1, trainer.args.max_steps + 1, callback.config.every))
    lines = _lines(trainer)
    # the window mean of the per-step fractions (what TRL's log() computes), not one step's value
    for line in lines:
        steps = range(line["step"] - trainer.args.logging_steps + 1, line["step"] + 1)
        per_step = [callback.logged[s][P + "zero_adv/group_fraction"] for s in steps]
        assert line[P + "zero_adv/group_fraction"] == pytest.approx(sum(per_step) / len(per_step), abs=1e-12)
    # the check can tell a window mean from one step's value: some window's steps differ
    assert any(len({callback.logged[s][P + "zero_adv/group_fraction"]
                    for s in range(line["step"] - trainer.args.logging_steps + 1, line["step"] + 1)}) > 1
               for line in lines), callback.logged
    printed = [row for row in capsys.readouterr().out.splitlines() if re.fullmatch(r"\d+( \S+){4}", row)]
    assert [int(row.split()[0]) for row in printed] == [line["step"] for line in lines]  # the block's print loop
