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


def test_sparsity_counts_of_row_pieces_add_up_to_the_whole_with_the_global_maximum():
    """FSDP2 gives each process some rows of every gradient: the counts of the pieces, taken against the largest
    coordinate of all pieces, sum to the counts of the whole (the example above, split in rows across two
    "processes"); against a piece's own maximum they would not (piece 0's largest is 0.5, not 2: 0.02 is then above
    the 1e-2 threshold)."""
    grads = [torch.tensor([0.0, 0.02, -2.0, 5e-7], dtype=torch.float64),
             torch.tensor([[1e-5, 0.0], [0.5, -1e-8]], dtype=torch.float64)]
    pieces = [[grads[0][:2], grads[1][1:]], [grads[0][2:], grads[1][:1]]]
    counts = [measure.sparsity_counts(piece, THRESHOLDS, 2.0) for piece in pieces]
    summed = [a + b for a, b in zip(*counts)]
    assert summed == [8, 2, 4, 5, 6]
    assert measure.sparsity_from_counts(summed, THRESHOLDS, 2.0) == measure.sparsity(grads, THRESHOLDS)
    assert measure.sparsity_counts(pieces[0], THRESHOLDS, 0.5) != counts[0]


def test_chunked_norm_and_sparsity_equal_the_whole_tensor_computation(monkeypatch):
    """Chunks of 7 values (a chunk boundary inside every tensor, the last chunk short): the float64 squared norm and
    the sparsity counts equal those computed on whole tensors here. Planted bug seen to fail: counting only the
    first chunk of each tensor."""
    g = torch.Generator().manual_seed(3)
    grads = [torch.randn(5, 6, generator=g), torch.randn(11, generator=g) * 1e-3, torch.zeros(4)]
    grads[0][1, 2] = 0.0
    monkeypatch.setattr(measure, "CHUNK", 7)
    whole = sum(float((t.double() ** 2).sum()) for t in grads)
    assert measure.squared_norm(grads[0]) + measure.squared_norm(grads[1]) == pytest.approx(whole, rel=1e-15)
    top = max(float(t.abs().max()) for t in grads)
    flat = torch.cat([t.reshape(-1) for t in grads]).abs()
    expected = [flat.numel(), int((flat == 0).sum())] + [int((flat <= tau * top).sum()) for tau in THRESHOLDS]
    assert measure.sparsity_counts(grads, THRESHOLDS, top) == expected


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


# -- helpers, the engine call and the record's fields (found by mutation testing) ------------------
def test_summarise_quartiles_by_linear_interpolation():
    assert measure.summarise([4, 1, 3, 2]) == {"median": 2.5, "q25": 1.75, "q75": 3.25, "mean": 2.5, "min": 1.0,
                                               "max": 4.0, "count": 4}
    assert measure.summarise([5.0]) == {"median": 5.0, "q25": 5.0, "q75": 5.0, "mean": 5.0, "min": 5.0, "max": 5.0,
                                        "count": 1}
    assert measure.summarise([]) == {}


def test_derived_grams_and_gradient_norm():
    G = np.array([[1.0, 0.0], [1.0, 2.0], [0.0, 1.0]])
    K = G @ G.T
    a = np.array([1.0, -1.0, 2.0])
    grams = measure.derived_grams(K, a)
    C = np.eye(3) - 1 / 3
    assert set(grams) == {"G", "centred", "weighted"} and grams["G"] is K
    np.testing.assert_allclose(grams["centred"], (C @ G) @ (C @ G).T, atol=1e-15)
    np.testing.assert_allclose(grams["weighted"], (a[:, None] * G) @ (a[:, None] * G).T, atol=1e-15)
    assert measure.group_gradient_norm(K, a) == pytest.approx(np.linalg.norm(a @ G) / 3, rel=1e-15)


def test_sparsity_needs_a_coordinate():
    with pytest.raises(ValueError) as raised:
        measure.sparsity([torch.zeros(0)], THRESHOLDS)
    assert str(raised.value) == "sparsity needs at least one coordinate"
    assert measure.sparsity([torch.zeros(0), torch.tensor([3.0])], (0.5,)) == {"exact_zero": 0.0, "le_0.5_max": 0.0}


def test_layer_controls_memory_message_and_budget():
    # 6 float32 sets of 2^29 parameters are 12 GiB, exactly 0.8 of 15 GiB: that fits.
    assert measure.layer_controls_memory_problem(2**29, 15 * 2**30) is None
    assert measure.layer_controls_memory_problem(2**29, 15 * 2**30 - 1) is not None
    assert measure.layer_controls_memory_problem(1_235_000_001, 16 * 2**30) == (
        "the controls' per-layer spectra hold 6 float32 gradient sets at once (28 GiB for 1.24B parameters) but "
        "only 16 GiB of device memory is free: pass --no-layer-controls (the controls are then measured on the "
        "R x R matrices only)")


def test_conditions_are_float64_advantages_with_the_given_eps():
    rewards, other = [0, 1, 1, 0], [0.2, 0.9, 0.6, 0.1]
    out = measure.conditions(rewards, other, "partial_credit", "grpo", 0.5, controls=True, seed=3)
    # GRPO with eps = 0.5: (r - 1/2) / (std + 0.5), std = sqrt(1/3) (sample std of 0, 1, 1, 0).
    np.testing.assert_array_equal(out["grpo"], (np.array(rewards) - 0.5) / (np.sqrt(1 / 3) + 0.5))
    o = np.array(other)
    np.testing.assert_allclose(out["partial_credit"], (o - o.mean()) / (o.std(ddof=1) + 0.5), rtol=1e-15)
    assert all(a.dtype == np.float64 for a in out.values())
    assert out["rewards"].tolist() == [0.0, 1.0, 1.0, 0.0]
    assert abs(out["gaussian_centred"].sum()) < 1e-15
    np.testing.assert_allclose(out["gaussian"] - out["gaussian_centred"], out["gaussian"].mean())


def test_layer_record_rounds_per_layer_values_to_six_decimals():
    svals = {"b": torch.tensor([2.0, 1.0]), "a": torch.tensor([1.0, 0.3])}
    record = measure.layer_record(svals, 0.4)  # tolerance ranks 1 (0.3 < 0.4 * 1) and 2 (1 > 0.4 * 2)
    p = np.array([2 / 3, 1 / 3])
    erank_b = float(np.exp(-np.sum(p * np.log(p))))  # 1.8898815748...
    q = np.array([1 / 1.3, 0.3 / 1.3])
    erank_a = float(np.exp(-np.sum(q * np.log(q))))
    assert record["per_layer"]["effective_rank"] == [round(erank_a, 6), round(erank_b, 6)]  # sorted names
    assert record["per_layer"]["stable_rank"] == [1.09, 1.25]
    assert record["summary"]["tolerance_rank"]["count"] == 2
    assert record["summary"]["tolerance_rank"]["max"] == 2 and record["summary"]["tolerance_rank"]["min"] == 1


class _Clock:
    """time.perf_counter stand-in: 1.0 at the first call, 1.23456 at the second, then +1."""

    def __init__(self):
        self.values = iter([1.0, 1.23456] + [2.0 + k for k in range(100)])

    def __call__(self):
        return next(self.values)


def _spy_measure(group, monkeypatch, rewards, other, **config):
    model, rollouts, _ = group
    calls = []
    real = measure.rollout_gram

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        result = real(*args, **kwargs)
        return result

    monkeypatch.setattr(measure, "rollout_gram", spy)
    monkeypatch.setattr(measure.time, "perf_counter", _Clock())
    cfg = Config(**{"aggregation": "mean", "controls": True, "layer_controls": True, **config})
    record = measure.measure_group(model, rollouts, rewards, other, "partial_credit", cfg, seed=3)
    monkeypatch.undo()
    (args, kwargs), = calls
    return record, args, kwargs


def test_the_engine_is_asked_for_exactly_what_is_recorded(group, monkeypatch):
    model, rollouts, G = group
    record, args, kwargs = _spy_measure(group, monkeypatch, [0.0, 0.5, 1.0, 0.25], [0.2, 0.9, 0.6, 0.1])
    assert args[4] == "mean" and kwargs["accumulate_dtype"] == torch.float64
    np.testing.assert_array_equal(kwargs["advantages"], record["advantages"]["grpo"])
    # The five controls' weightings, never the GRPO advantages themselves (held once, as advantages).
    assert set(kwargs["weightings"]) == {"gaussian", "gaussian_centred", "ones", "rewards", "partial_credit"}
    assert record["seconds"] == {"gram_and_spectra": 0.235}
    layer_names = sorted(n for n, p in model.named_parameters() if p.ndim == 2)
    assert record["layer_names"] == layer_names
    for condition, entry in record["conditions"].items():
        a = np.asarray(record["advantages"][condition])
        expected = measure.sparsity([torch.from_numpy(a @ G)], THRESHOLDS)
        for key, value in expected.items():  # the same fractions up to a coordinate at a threshold
            assert abs(entry["sparsity"][key] - value) <= 1 / G.shape[1], (condition, key)
        assert set(entry["layers"]) == {"summary", "per_layer"}
        assert len(entry["layers"]["per_layer"]["stable_rank"]) == len(layer_names)
    assert set(record["layer_gram"]) == set(measure.METRICS)
    assert record["layer_gram"]["stable_rank"]["count"] >= 1


def test_a_degenerate_group_asks_for_no_grpo_gradient_and_skips_zero_controls(group, monkeypatch):
    model, _, _ = group
    record, _, kwargs = _spy_measure(group, monkeypatch, [0.0] * 4, [0.2, 0.9, 0.6, 0.1])
    assert record["degenerate"] is True and kwargs["advantages"] is None
    # The raw rewards are all 0: that control is zero and gets no per-layer spectra either.
    assert set(kwargs["weightings"]) == {"gaussian", "gaussian_centred", "ones", "partial_credit"}
    assert "layers" not in record["conditions"]["rewards"] and record["conditions"]["rewards"]["zero_gradient"]
    assert record["layer_names"] == sorted(n for n, p in model.named_parameters() if p.ndim == 2)


@pytest.mark.parametrize("config", [{"controls": False}, {"layer_controls": False}])
def test_without_layer_controls_no_weightings_are_requested(group, monkeypatch, config):
    record, _, kwargs = _spy_measure(group, monkeypatch, [0.0, 0.5, 1.0, 0.25], [0.2, 0.9, 0.6, 0.1], **config)
    assert kwargs["weightings"] is None
    assert all("layers" not in entry for name, entry in record["conditions"].items() if name != "grpo")
    model, _, _ = group
    assert record["layer_names"] == sorted(n for n, p in model.named_parameters() if p.ndim == 2)


def test_aggregation_and_relative_tolerance_reach_the_measurements(group, monkeypatch):
    model, rollouts, _ = group
    store, _ = per_rollout_gradients(model, rollouts.input_ids, rollouts.attention_mask, 5, "sum")
    G_sum = torch.cat([store[n] for n in sorted(store)], dim=1).numpy()
    sigma = np.linalg.svd(G_sum, compute_uv=False)
    tolerance = float((sigma[-1] + sigma[-2]) / 2 / sigma[0])  # between the two smallest: rank 3
    record, _, _ = _spy_measure(group, monkeypatch, [0.0, 0.5, 1.0, 0.25], [0.2, 0.9, 0.6, 0.1],
                                aggregation="sum", relative_tolerance=tolerance)
    K = np.asarray(record["K"])
    np.testing.assert_allclose(K, G_sum @ G_sum.T, rtol=1e-9, atol=1e-12 * np.abs(K).max())
    assert record["G"]["metrics"]["tolerance_rank"] == 3  # at the default 1e-6 all four rollouts count
    assert record["layer_gram"]["tolerance_rank"]["max"] < 4


def test_gram_vs_direct_error_is_relative_to_the_gradient_norm(group, monkeypatch):
    """With the engine's GRPO gradients doubled, the direct norm is twice sqrt(a^T K a): a relative
    error of exactly 1, whatever the size of the gradient (here small: Dr. GRPO advantages of 1e-3)."""
    real = measure.rollout_gram

    def doubled(*args, **kwargs):
        result = real(*args, **kwargs)
        for name in result.grpo_gradients:
            result.grpo_gradients[name] = 2 * result.grpo_gradients[name]
        return result

    model, rollouts, _ = group
    monkeypatch.setattr(measure, "rollout_gram", doubled)
    cfg = Config(aggregation="mean", controls=False, advantage="dr_grpo")
    record = measure.measure_group(model, rollouts, [0.0, 1e-3, 2e-3, 0.0], [0.0] * 4, "partial_credit", cfg, seed=3)
    assert record["conditions"]["grpo"]["gradient_norm"] < 1e-2
    assert record["conditions"]["grpo"]["gram_vs_direct_rel_err"] == pytest.approx(1.0, rel=1e-8)


def _leaves(tree, path=()):
    """(path, value) for every leaf of a JSON-like record."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, tree


def test_a_counted_degenerate_group_records_what_the_measured_path_records_without_an_engine_pass(group, monkeypatch):
    """--degenerate-groups count: no rollout_gram call, and every value the counted record holds (the advantages of
    every condition, GRPO's zero gradient, its norm and the weighted spectrum of diag(0) G) equals the measured
    path's value at the same key, which does run the engine; the measured path's K, G and controls are what the
    counted record says it lacks ("measured": false)."""
    model, rollouts, _ = group
    rewards, other = [1.0] * 4, [0.1, 0.5, 0.9, 0.3]
    full = measure.measure_group(model, rollouts, rewards, other, "partial_credit",
                                 Config(aggregation="mean", controls=True, layer_controls=True,
                                        degenerate_groups="measure"), seed=3)
    calls = []
    monkeypatch.setattr(measure, "rollout_gram", lambda *a, **k: calls.append(1))
    counted = measure.measure_group(model, rollouts, rewards, other, "partial_credit",
                                    Config(aggregation="mean", controls=True, layer_controls=True,
                                           degenerate_groups="count"), seed=3)
    assert calls == []
    assert counted["measured"] is False and full["measured"] is True
    assert full["degenerate"] is counted["degenerate"] is True
    flat_full = dict(_leaves(full))
    compared = [(path, value) for path, value in _leaves(counted) if path not in (("measured",),
                                                                                   ("seconds", "gram_and_spectra"))]
    assert len(compared) >= 15  # 6 advantage vectors, the flag, GRPO's 3 entries, 7 weighted metrics and sigma
    for path, value in compared:
        assert path in flat_full, path
        np.testing.assert_equal(value, flat_full[path], err_msg=str(path))
    assert "K" in full and "K" not in counted and "gaussian" not in counted["conditions"]
    # a mixed group is measured whatever the option says
    class EngineCalled(Exception):
        pass

    def engine(*args, **kwargs):
        raise EngineCalled
    monkeypatch.setattr(measure, "rollout_gram", engine)
    with pytest.raises(EngineCalled):
        measure.measure_group(model, rollouts, [0.0, 1.0, 1.0, 0.0], other, "partial_credit",
                              Config(aggregation="mean", controls=True, layer_controls=False,
                                     degenerate_groups="count"), seed=3)
