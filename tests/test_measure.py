"""grpo_verify.empirical.measure on one group, against quantities computed here: the sparsity
fractions (a threshold relative to the largest coordinate), which groups are degenerate, and each
condition's weighted spectrum, the singular values of diag(a) G from the per-rollout gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from grpo_verify.empirical import measure, models  # noqa: E402
from grpo_verify.empirical.config import Config  # noqa: E402
from grpo_verify.empirical.sampling import Rollouts  # noqa: E402
from grpo_verify.gram.reference import per_rollout_gradients  # noqa: E402

THRESHOLDS = (1e-6, 1e-4, 1e-2)


# -- sparsity ---------------------------------------------------------------------------------------
def test_sparsity_counts_coordinates_below_a_threshold_relative_to_the_largest():
    """Eight coordinates in two tensors, largest |g| = 2: at or below tau * 2 are 4 (tau = 1e-6:
    0, 0, 5e-7, 1e-8), 5 (1e-4: and 1e-5) and 6 (1e-2: and 0.02, which equals tau * 2 and counts);
    2 are exactly 0. Scaling every coordinate by c changes none of them: the threshold moves with
    the largest coordinate (an absolute threshold would not)."""
    grads = [torch.tensor([0.0, 0.02, -2.0, 5e-7], dtype=torch.float64),
             torch.tensor([[1e-5, 0.0], [0.5, -1e-8]], dtype=torch.float64)]
    expected = {"exact_zero": 2 / 8, "le_1e-06_max": 4 / 8, "le_0.0001_max": 5 / 8, "le_0.01_max": 6 / 8}
    assert measure.sparsity(grads, THRESHOLDS) == expected
    for scale in (2.0**-40, 2.0**-10, 2.0**20, 2.0**40):  # powers of two: the products are exact
        assert measure.sparsity([scale * g for g in grads], THRESHOLDS) == expected, scale
    assert measure.sparsity([torch.tensor([0.5, 0.004, -0.006], dtype=torch.float32)], (0.01,)) == {
        "exact_zero": 0.0, "le_0.01_max": 1 / 3}


def test_sparsity_of_an_all_zero_gradient_is_one():
    zeros = [torch.zeros(3), torch.zeros(2, 2)]
    assert measure.sparsity(zeros, THRESHOLDS) == {"exact_zero": 1.0, "le_1e-06_max": 1.0, "le_0.0001_max": 1.0,
                                                   "le_0.01_max": 1.0}


# -- one group ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def group():
    """A float64 tiny model and 4 right-padded rollouts with ragged completions."""
    tok = models.tiny_tokenizer()
    model = models.tiny_random_model(tok, seed=1).double()
    R, L, start = 4, 12, 5
    ids = torch.randint(4, len(tok), (R, L), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0
    mask[3, 7:] = 0
    ids[mask == 0] = tok.pad_token_id
    rollouts = Rollouts(input_ids=ids, attention_mask=mask, completion_start=torch.full((R,), start),
                        texts=[""] * R, completion_tokens=[int(m.sum()) - start for m in mask])
    store, _ = per_rollout_gradients(model, ids, mask, start, "mean")
    G = torch.cat([store[n] for n in sorted(store)], dim=1).numpy()
    return model, rollouts, G


def _measure(group, rewards, other):
    model, rollouts, _ = group
    cfg = Config(aggregation="mean", controls=True, layer_controls=True)
    return measure.measure_group(model, rollouts, rewards, other, "partial_credit", cfg, seed=3)


def test_a_zero_advantage_in_a_mixed_group_is_not_a_degenerate_group(group):
    """Three reward levels 0, 0.5, 1 (and 0.5 again): the mean is 0.5, so two rollouts get an
    advantage of exactly 0, but the group is mixed and its GRPO gradient is measured. Only equal
    rewards make a degenerate group."""
    record = _measure(group, [0.0, 0.5, 1.0, 0.5], [0.1, 0.5, 0.9, 0.3])
    grpo = record["conditions"]["grpo"]
    assert record["advantages"]["grpo"][1] == 0.0 and record["advantages"]["grpo"][3] == 0.0
    assert record["degenerate"] is False
    assert grpo["zero_gradient"] is False and grpo["gradient_norm"] > 0
    assert {"layers", "sparsity", "gram_vs_direct_rel_err"} <= set(grpo)
    assert grpo["gram_vs_direct_rel_err"] < 1e-10
    assert grpo["weighted"]["metrics"]["tolerance_rank"] == 2  # two non-zero advantages
    degenerate = _measure(group, [0.5] * 4, [0.1, 0.5, 0.9, 0.3])
    assert degenerate["degenerate"] is True
    assert degenerate["conditions"]["grpo"]["zero_gradient"] is True
    assert degenerate["conditions"]["grpo"]["gradient_norm"] == 0.0
    assert "layers" not in degenerate["conditions"]["grpo"]
    assert "layers" in degenerate["conditions"]["gaussian"]  # the controls are measured on it


def test_each_condition_weighted_spectrum_is_that_of_diag_a_G(group):
    """conditions[c]["weighted"] holds the singular values of diag(a_c) G, for each condition's own
    advantage vector a_c (read from the record), computed here by an SVD of the per-rollout
    gradients the naive loop gives, and its rank metrics."""
    _, _, G = group
    record = _measure(group, [0.0, 0.5, 1.0, 0.25], [0.2, 0.9, 0.6, 0.1])
    K = np.asarray(record["K"])
    np.testing.assert_allclose(K, G @ G.T, rtol=1e-9, atol=1e-12 * np.abs(K).max())
    assert set(record["conditions"]) == {"grpo", "gaussian", "gaussian_centred", "ones", "rewards", "partial_credit"}
    spectra = {}
    for condition, entry in record["conditions"].items():
        a = np.asarray(record["advantages"][condition])
        assert a.shape == (4,) and np.any(a)
        sigma = np.linalg.svd(np.diag(a) @ G, compute_uv=False)
        got = np.asarray(entry["weighted"]["singular_values"])
        np.testing.assert_allclose(got, sigma, rtol=1e-7, atol=1e-7 * sigma[0], err_msg=condition)
        assert entry["weighted"]["metrics"]["tolerance_rank"] == int(np.count_nonzero(a)), condition
        assert entry["weighted"]["metrics"]["stable_rank"] == pytest.approx(np.sum(sigma**2) / sigma[0] ** 2,
                                                                            rel=1e-9), condition
        assert entry["gradient_norm"] == pytest.approx(np.linalg.norm(a @ G) / 4, rel=1e-9), condition
        spectra[condition] = tuple(np.round(got / got[0], 6))
    assert len(set(spectra.values())) == len(spectra)  # the conditions' spectra differ: each used its own a
