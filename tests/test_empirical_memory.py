"""The memory preflight of ``python -m grpo_verify.empirical`` (grpo_verify.empirical.memory): each stage's sum
against the arithmetic written out here for a model of known shapes, the scaling to another depth, and a run
refused in one line, before any group and without writing its output folder, when the estimate exceeds the free
memory; the measured peak written next to the estimate in memory.json."""

from __future__ import annotations

import json
import os

import pytest
import torch

from grpo_verify.empirical import __main__ as cli
from grpo_verify.empirical import memory
from grpo_verify.empirical.config import Config
from grpo_verify.svd import BLOCK_ELEMENTS
from support import listing

V, H, F = 1000, 16, 40
SHAPES = [("model.embed_tokens.weight", (V, H)), ("model.layers.0.q.weight", (H, H)),
          ("model.layers.0.up.weight", (F, H)), ("model.layers.0.norm.weight", (H,)),
          ("model.layers.1.q.weight", (H, H)), ("model.layers.1.up.weight", (F, H)),
          ("model.layers.1.norm.weight", (H,)), ("lm_head.weight", (V, H))]
P = 2 * V * H + 2 * (H * H + F * H + H)


def test_each_stage_adds_up_what_it_holds_at_once():
    cfg = Config(group_sizes=(2, 8), max_new_tokens=10, controls=True, layer_controls=False, train_steps=1,
                 train_prompts_per_step=3, train_group_size=4)
    est = memory.estimate(SHAPES, torch.bfloat16, cfg, V, prompt_tokens=6)
    T, R, io = 6 + 10, 8, 2 * ((H + H) + (F + H))  # the vocabulary-sized weights are the logits' business
    assert est.stages["engine forward"] == {"weights": 2 * P, "logits": R * T * V * (2 + 8),
                                            "kept inputs and output gradients": R * T * io * 2}
    assert est.stages["engine gradients and spectra"] == {"weights": 2 * P, "gradient sets (float32)": 4 * P,
                                                          "SVD": 2 * V * H * 8}
    assert est.stages["training"] == {"weights": 2 * P, "gradients": 2 * P, "AdamW moments": 4 * P,
                                      "callback snapshots": 4 * P, "callback GRPO gradient (float32)": 4 * P,
                                      "logits": 12 * T * V * (2 + 8), "SVD": 2 * V * H * 8,
                                      "W - W_start (float64, largest matrix)": V * H * 8}
    assert est.peak() == ("training", sum(est.stages["training"].values()))  # the larger of the two
    with_controls = memory.estimate(SHAPES, torch.bfloat16, Config(group_sizes=(2,), max_new_tokens=10,
                                                                   layer_controls=True), V, 6)
    assert with_controls.stages["engine gradients and spectra"]["gradient sets (float32)"] == 6 * 4 * P
    assert "training" not in with_controls.stages


def test_a_tall_matrix_beyond_a_block_costs_one_block_and_its_triangle():
    rows = BLOCK_ELEMENTS // 16 * 4  # four blocks of 16 columns
    est = memory.estimate([("lm_head.weight", (rows, 16))], torch.float32, Config(group_sizes=(2,), max_new_tokens=1),
                          rows, 1)
    assert est.stages["engine gradients and spectra"]["SVD"] == (BLOCK_ELEMENTS + 3 * 16 * 16) * 8


def test_scaling_to_another_depth_repeats_block_zero():
    deeper = memory.with_blocks(SHAPES, 5)
    names = [n for n, _ in deeper]
    assert len(deeper) == 2 + 5 * 3 and "model.layers.4.up.weight" in names and "model.layers.10.q.weight" not in names
    assert sum(torch.Size(s).numel() for _, s in deeper) == 2 * V * H + 5 * (H * H + F * H + H)
    assert memory.with_blocks(SHAPES, 2) == [s for s in SHAPES if "layers" not in s[0]] + \
        [s for s in SHAPES if "layers" in s[0]]
    with pytest.raises(ValueError, match="layers.0"):
        memory.with_blocks([("w", (2, 2))], 3)


def test_the_refusal_counts_the_loaded_weights_as_already_held():
    est = memory.Estimate({"measurement": {"weights": 10 * memory.GiB, "gradient sets (float32)": 20 * memory.GiB},
                           "other": {"weights": 10 * memory.GiB}})
    assert memory.problem(est, free=int(25 * memory.GiB), already_held=10 * memory.GiB) is None  # 20 <= 0.8 * 25
    why = memory.problem(est, free=int(24 * memory.GiB), already_held=10 * memory.GiB)
    assert why.startswith("the memory preflight estimates a peak of 30.0 GiB in the measurement stage") and \
        "but 24.0 GiB are free" in why and "\n" not in why
    assert memory.problem(est, free=None) is None  # unknown free memory: not refused, the estimate still printed


def test_a_run_that_would_not_fit_is_refused_before_any_group_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda device: 1000)
    monkeypatch.setattr(cli, "measure_group", lambda *a, **k: pytest.fail("a group was measured"))
    out = tmp_path / "run"
    code = cli.main(["--model", "tiny-random", "--device", "cpu", "--no-progress", "--no-plots", "--group-sizes", "2",
                     "--num-prompts", "1", "--max-new-tokens", "4", "--out", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and err.count("\n") == 1, err
    assert "the memory preflight estimates a peak of" in err and "but 0.0 MiB are free beyond the loaded weights" in err
    assert listing(tmp_path) == []


def test_memory_json_holds_the_estimate_and_the_measured_peak(tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["--model", "tiny-random", "--num-layers", "3", "--device", "cpu", "--no-progress", "--no-plots",
                     "--group-sizes", "2", "--num-prompts", "1", "--max-new-tokens", "4", "--bootstrap", "10",
                     "--out", str(out)])
    assert code == 0
    record = json.loads((out / "memory.json").read_text())
    assert record["estimated_peak_bytes"] == sum(record["estimate"][record["estimated_peak_stage"]].values())
    assert record["measured_peak_bytes"] > 0 and record["longest_prompt_tokens"] > 0
    config = json.loads((out / "config.json").read_text())
    assert config["model"]["architecture_overrides"] == {"num_hidden_layers": 3}
    assert "memory preflight: estimated peak" in capsys.readouterr().out


def test_the_cpu_peak_and_free_memory_are_in_bytes():
    """getrusage's ru_maxrss is in KiB on Linux and /proc/meminfo in kB: both are read as bytes here. A process that
    has touched 64 MiB has a peak of at least that; nothing is above the machine's total memory."""
    import numpy as np

    held = np.ones(64 * 2**20 // 8)  # 64 MiB, written (resident)
    peak = memory.measured_peak_bytes(torch.device("cpu"))
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 64 * 2**20 <= peak <= total, (peak, total)
    free = memory.available_bytes(torch.device("cpu"))
    assert free is None or 2**20 < free <= total, (free, total)
    del held
