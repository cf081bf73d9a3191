r"""Cross-check of ``grpo_verify.estimators`` against verl's ``core_algos`` (needs ``verl``; skipped without it).

What of verl is called, and how
-------------------------------
verl 0.9.1 is installed without its dependency set (``pip install --no-deps verl==0.9.1``) plus the packages that
``from verl.trainer.ppo import core_algos`` imports on a CPU: omegaconf, tensordict (with its pyvers and
cloudpickle), orjson and codetiming; torch, numpy and transformers come with this project; ray is not needed
(below). The functions under test are verl's own, called directly with tensors built here; nothing of verl is
patched:

* ``compute_grpo_outcome_advantage(token_level_rewards, response_mask, index, epsilon, norm_adv_by_std_in_grpo)``:
  the reward of each response sits at its last valid token (as verl's reward managers put it), ``index`` holds
  string group ids (verl's ``uid``), and the rows are shuffled, since verl groups by id, not by position. Compared
  with ``group_advantages`` ("grpo" for ``norm_adv_by_std_in_grpo=True``, "dr_grpo" for False) applied group by
  group, and ``token_advantages``. Groups of 2 to 8 responses in one batch, three reward levels (ties), constant
  groups, continuous rewards, one outlier.
* ``agg_loss(loss_mat, loss_mask, loss_agg_mode)`` in the four modes below, values and gradients with respect to
  ``loss_mat``, on random losses with non-zero garbage at the padding and random lengths:

  ====================================  ===========================================================================
  verl ``loss_agg_mode``                ours
  ====================================  ===========================================================================
  ``token-mean``                        ``aggregate_loss(..., "bnpo")`` = ``"dapo"`` (mean over the batch's tokens)
  ``seq-mean-token-mean``               ``aggregate_loss(..., "grpo")`` (per-sequence mean, then mean over N)
  ``seq-mean-token-sum-norm``           ``aggregate_loss(..., "dr_grpo", L)``; verl's default L is the padded width
  ``seq-mean-token-sum``                no kind of ours; it is L * ``aggregate_loss(..., "dr_grpo", L)`` for any L
  ====================================  ===========================================================================

* ``compute_policy_loss_vanilla(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode, config)`` with a
  real ``verl.workers.config.ActorConfig`` (clip ratios 0.2 / 0.2, and 0.2 / 0.28): value and gradient with respect
  to ``log_prob`` against ``per_token_loss`` + ``aggregate_loss``, with verl's own advantages as input.
* ``compute_grpo_vectorized_outcome_advantage`` (verl's other GRPO estimator): to float32 accuracy only (below).

``ray``: ``import verl`` runs ``verl/protocol.py``, and ``verl.workers.config`` reaches
``verl/single_controller/base/worker.py``; both ``import ray``. Nothing else of ray is touched while these modules
are imported except the name ``ray.ObjectRef`` in two type annotations of ``verl/protocol.py``
(``futures: list[ray.ObjectRef]`` and ``def concat(data: list[ray.ObjectRef])``, evaluated when the class is
built). ray is a 79 MB wheel (200 MB installed) with its own dependencies, so when it is not installed this module
puts a stand-in module into ``sys.modules["ray"]`` for the duration of that one import and removes it right after
(verl's modules keep their reference; the rest of the test session sees no ray). The stand-in provides only
``ObjectRef`` (an empty class), raises ``AttributeError`` for every other name, and records every access with the
accessing file and line; ``test_ray_stand_in_is_only_touched_by_annotations`` checks, after every verl function
here has run, that the only accesses are those two annotations. With a real ray installed the stand-in is not used.

Tolerance: both sides compute in float64 (verl keeps the dtype of its inputs in every function compared, except the
vectorized estimator), so values are compared to 1e-12 relative to max(1, |value|) and gradients to 1e-12 relative
to the largest entry. Observed (verl 0.9.1, torch 2.13 CPU): advantages <= 9.6e-17 (0 on the shuffled mixed-size
batches), aggregated and policy losses <= 2.2e-16, their gradients identical (gap 0), except ``seq-mean-token-mean``,
whose + 1e-8 in each length (convention 6) gives value gaps of 8e-10 to 1.2e-9 and gradient gaps of 1e-8 (a
response of length 1): that mode is compared to 2e-8, and the 1e-8 is pinned exactly.

Convention differences between verl 0.9.1 ``core_algos`` and ``grpo_verify.estimators`` found here
-------------------------------------------------------------------------------------------------
1. eps: verl's ``epsilon`` defaults to 1e-6, ours to 1e-4; both add it to the std (not under a square root). The
   comparison passes 1e-6 to ours; ``test_verl_default_epsilon_differs`` pins the default gap.
2. std: the unbiased sample std (``torch.std``, Bessel), as ours; ``test_crosscheck_is_sensitive`` shows the
   population std is detected.
3. A group of one response: verl sets mean 0 and std 1, so the advantage is the raw reward r / (1 + epsilon)
   (or r without std normalisation), with 1 + epsilon rounded to float32 (its std is ``torch.tensor(1.0)``, a
   float32 scalar, whatever the rewards' dtype); ours refuses R < 2 (ValueError). ``test_singleton_group``.
4. Constant groups: ours are exactly 0; verl computes (r - mean) / (std + epsilon), which is exactly 0 when the
   mean is exact (dyadic rewards) and round-off / epsilon otherwise: 1.1e-10 for three float64 rewards of 0.7,
   0.056 for eight float32 rewards of 0.7 (verl's rewards are float32 in training); without std normalisation it is
   the round-off itself (1.1e-16). ``test_constant_group_round_off_in_verl`` pins both against the same arithmetic.
5. Layout: verl groups rows by ``index`` wherever they are and allows unequal group sizes in one batch; ours take a
   group-major (B, R) tensor. The outcome reward is ``token_level_rewards.sum(-1)`` over the whole row, padding
   included (``test_verl_reward_sum_ignores_the_mask``). Token advantages are A_i * m_it on both sides, and verl
   returns the same tensor as advantages and returns.
6. ``seq-mean-token-mean`` divides each sequence's token sum by (length + 1e-8), so it is ours times
   length / (length + 1e-8), 1e-8 / length relative (``test_seq_mean_token_mean_adds_1e-8_to_the_length``).
7. Sequences with no valid token: verl's seq-mean modes leave them out of the sequence count (divide by the number
   of non-empty sequences); ours count them in 1/N, as TRL. An all-padding batch gives NaN (0/0) in every verl mode
   and 0 in ours. ``test_empty_sequences``.
8. ``seq-mean-token-sum-norm`` divides by ``loss_scale_factor``, default ``loss_mask.shape[-1]``, the padded width of
   the (micro-)batch, like our dr_grpo default T; with ``ActorConfig.loss_scale_factor = L`` it is our dr_grpo with
   ``max_completion_length = L``. verl does not check L against the longest response; ours does.
   ``test_seq_mean_token_sum_modes``.
9. Padding: ``token-mean`` masks with ``where`` as ours, but the seq-mean modes multiply ``loss_mat * loss_mask``,
   so a NaN or inf at a padding position makes their loss NaN; ours ignore it. verl also accepts fractional mask
   weights; ours refuse a mask other than 0/1. ``test_padding_nan_and_fractional_masks``.
10. Dual clip: ``compute_policy_loss_vanilla`` caps the loss of a negative-advantage token at
    ``clip_ratio_c`` * |A| (default 3.0; it must be > 1, so only a value above every ratio turns it off); ours has no
    such cap. The comparison keeps every ratio of a negative-advantage token below 3; ``test_dual_clip`` pins the cap
    and shows ``clip_ratio_c = 1e9`` gives ours.
11. verl clamps the log-ratio to [-20, 20] before exponentiating, so beyond it the value is that of e^{+-20} and the
    gradient is 0; ours are exact. ``test_log_ratio_clamp``.
12. ``compute_grpo_vectorized_outcome_advantage`` computes in float32 whatever the input dtype (with a one-pass
    variance floor eps = 0); it agrees with ours to float32 accuracy only. ``test_vectorized_estimator``.
13. Not compared: verl's ``dp_size``, ``batch_num_tokens`` and ``global_batch_size`` (data-parallel scaling, 1 /
    absent here, as for one process), ``token-sum`` mode (no counterpart), rollout importance weights, the other
    advantage estimators (GRPO pass@k, RLOO, REINFORCE++, ...) and policy losses (gspo, clip_cov, ...), and the KL
    loss (``kl_penalty``).
"""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest

_INSTALL = (
    "pip install --no-deps verl==0.9.1 omegaconf==2.4.0 tensordict==0.10.0 pyvers==0.1.0 cloudpickle==3.1.2 "
    "orjson==3.13.0 codetiming==1.4.0"
)
if importlib.util.find_spec("verl") is None:
    pytest.skip(f"verl is not installed ({_INSTALL})", allow_module_level=True)

import numpy as np  # noqa: E402
import torch  # noqa: E402

# verl's third-party imports, loaded before the ray stand-in exists so their own availability checks never see it
for _name in ("omegaconf", "tensordict", "codetiming", "transformers"):
    pytest.importorskip(_name, reason=f"verl's core_algos needs {_name} ({_INSTALL})")

RAY_STAND_IN_ACCESSES: list[tuple[str, str, int]] = []  # (attribute, file, line) of every access to the stand-in


class _ObjectRefPlaceholder:
    """What ``ray.ObjectRef`` is while no ray is installed: an empty class, for verl's annotations only."""


class _RayStandIn(types.ModuleType):
    """Stand-in for ``ray`` during verl's import: ``ObjectRef`` only, every access recorded, anything else refused."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        caller = sys._getframe(1)
        RAY_STAND_IN_ACCESSES.append((name, caller.f_code.co_filename, caller.f_lineno))
        if name == "ObjectRef":
            return _ObjectRefPlaceholder
        raise AttributeError(f"ray is not installed; the stand-in of test_verl_crosscheck has no ray.{name}")


def _import_core_algos():
    uses_stand_in = importlib.util.find_spec("ray") is None
    if uses_stand_in:
        sys.modules["ray"] = _RayStandIn("ray")
    try:
        try:
            from verl.trainer.ppo import core_algos as module
        except ImportError as error:  # name the module that is missing, e.g. a dependency of a later verl
            pytest.skip(f"verl's core_algos does not import: {error!r} ({_INSTALL})", allow_module_level=True)
    finally:
        if uses_stand_in:
            del sys.modules["ray"]  # verl's modules keep their reference; nothing else sees it
    return module, uses_stand_in


core_algos, USES_RAY_STAND_IN = _import_core_algos()
from verl.workers.config import ActorConfig  # noqa: E402

from grpo_verify.estimators import (  # noqa: E402
    aggregate_loss,
    group_advantages,
    per_token_loss,
    token_advantages,
)

RTOL = 1e-12
SEQ_MEAN_TOKEN_MEAN_RTOL = 2e-8  # convention 6: verl's + 1e-8 in each length
VERL_EPSILON = 1e-6  # compute_grpo_outcome_advantage's default
WIDTH = 8  # padded response width of the generated batches
ADVANTAGE_KIND = {True: "grpo", False: "dr_grpo"}  # norm_adv_by_std_in_grpo -> our kind
VERL_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm", "seq-mean-token-sum")


def relative_value_gap(ours, theirs):
    ours, theirs = torch.as_tensor(ours).double(), torch.as_tensor(theirs).double()
    return ((ours - theirs).abs().max() / max(1.0, theirs.abs().max().item())).item()


def relative_gradient_gap(ours, theirs):
    scale = theirs.abs().max().item()
    assert scale > 0, "no gradient"
    return ((ours - theirs).abs().max() / scale).item()


def our_aggregate(losses, mask, mode, length=None):
    """Our aggregation corresponding to verl's mode (the table of the module docstring)."""
    if mode == "token-mean":
        return aggregate_loss(losses, mask, "bnpo")
    if mode == "seq-mean-token-mean":
        return aggregate_loss(losses, mask, "grpo")
    if mode == "seq-mean-token-sum-norm":
        return aggregate_loss(losses, mask, "dr_grpo", length)
    if mode == "seq-mean-token-sum":
        length = losses.shape[1] if length is None else length
        return length * aggregate_loss(losses, mask, "dr_grpo", length)
    raise ValueError(mode)


# --------------------------------------------------------------------------------------------------------------
# Batches


def _reward_groups(seed, sizes):
    """One reward tensor per group: three levels with ties, binary, continuous, constant, one outlier, in turn."""
    g = torch.Generator().manual_seed(seed)
    makers = [
        lambda r: torch.randint(0, 3, (r,), generator=g).double() / 2,  # three levels 0, 0.5, 1: ties
        lambda r: torch.randint(0, 2, (r,), generator=g).double(),  # binary
        lambda r: 2 * torch.randn(r, generator=g, dtype=torch.float64),  # distinct
        lambda r: torch.full((r,), 0.5, dtype=torch.float64),  # constant (dyadic: exact mean)
        lambda r: torch.tensor([1.0] * (r - 1) + [-0.25], dtype=torch.float64),  # one outlier
        lambda r: torch.zeros(r, dtype=torch.float64),  # constant
    ]
    return [makers[k % len(makers)](size) for k, size in enumerate(sizes)]


def _verl_batch(seed, groups, width=WIDTH):
    """Rows of all groups, shuffled: (token_level_rewards, response_mask, index, rewards, group_of_row, lengths)."""
    g = torch.Generator().manual_seed(1000 + seed)
    rewards = torch.cat(groups)
    group_of_row = torch.cat([torch.full((len(r),), k) for k, r in enumerate(groups)])
    order = torch.randperm(len(rewards), generator=g)
    rewards, group_of_row = rewards[order], group_of_row[order]
    lengths = torch.randint(1, width + 1, (len(rewards),), generator=g)
    mask = (torch.arange(width)[None, :] < lengths[:, None]).to(torch.float64)
    token_level_rewards = torch.zeros(len(rewards), width, dtype=torch.float64)
    token_level_rewards[torch.arange(len(rewards)), lengths - 1] = rewards  # at the last valid token
    index = np.array([f"uid-{int(k)}" for k in group_of_row], dtype=object)
    return token_level_rewards, mask, index, rewards, group_of_row, lengths


def _our_row_advantages(rewards, group_of_row, kind, eps=VERL_EPSILON):
    """group_advantages applied group by group to rewards in verl's row order, the result in that order."""
    out = torch.empty(len(group_of_row), dtype=torch.float64)
    for k in group_of_row.unique():
        rows = group_of_row == k
        out[rows] = group_advantages(rewards[rows].view(1, -1), kind, eps).flatten()
    return out


def _loss_batch(seed, num_sequences=12, width=WIDTH, min_length=1):
    """A random (N, T) float64 loss with garbage at the padding, its 0/1 mask (float64) and the lengths."""
    g = torch.Generator().manual_seed(2000 + seed)
    lengths = torch.randint(min_length, width + 1, (num_sequences,), generator=g)
    lengths[0] = width  # one full-width response
    mask = (torch.arange(width)[None, :] < lengths[:, None]).to(torch.float64)
    losses = torch.randn(num_sequences, width, generator=g, dtype=torch.float64)
    losses = torch.where(mask.bool(), losses, 50.0 + losses)  # finite garbage at the padding
    return losses.requires_grad_(True), mask, lengths


# --------------------------------------------------------------------------------------------------------------
# Advantages


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("norm", [True, False], ids=["std", "no-std"])
def test_advantages_match_verl(seed, norm):
    sizes = [2, 3, 4, 5, 8, 6, 4, 2, 3, 7, 5, 8]  # unequal group sizes in one batch: verl allows it
    groups = _reward_groups(seed, sizes)
    token_level_rewards, mask, index, rewards, group_of_row, _ = _verl_batch(seed, groups)
    advantages, returns = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards, mask, index, epsilon=VERL_EPSILON, norm_adv_by_std_in_grpo=norm
    )
    assert returns is advantages and advantages.dtype == torch.float64 and advantages.shape == mask.shape

    ours = _our_row_advantages(rewards, group_of_row, ADVANTAGE_KIND[norm])
    assert relative_value_gap(token_advantages(ours, mask), advantages) <= RTOL
    # the constant groups (3 and 5, and 9 and 11) are exactly 0 on both sides for these dyadic rewards
    constant = torch.isin(group_of_row, torch.tensor([3, 5, 9, 11]))
    assert (advantages[constant] == 0).all() and (ours[constant] == 0).all()
    assert (ours[~constant] != 0).any()


@pytest.mark.parametrize("group_size", [2, 3, 4, 8])
@pytest.mark.parametrize("norm", [True, False], ids=["std", "no-std"])
def test_advantages_match_verl_group_major(group_size, norm):
    """Equal group sizes in our (B, R) layout, rows group-major and contiguous ids (verl's usual uid order)."""
    groups = _reward_groups(group_size, [group_size] * 6)
    rewards = torch.stack(groups)
    num_rows = rewards.numel()
    lengths = torch.randint(1, WIDTH + 1, (num_rows,), generator=torch.Generator().manual_seed(group_size))
    mask = (torch.arange(WIDTH)[None, :] < lengths[:, None]).to(torch.float64)
    token_level_rewards = torch.zeros(num_rows, WIDTH, dtype=torch.float64)
    token_level_rewards[torch.arange(num_rows), lengths - 1] = rewards.flatten()
    index = np.repeat(np.arange(len(groups)), group_size)
    advantages, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards, mask, index, epsilon=VERL_EPSILON, norm_adv_by_std_in_grpo=norm
    )
    ours = group_advantages(rewards, ADVANTAGE_KIND[norm], VERL_EPSILON)
    assert relative_value_gap(token_advantages(ours, mask), advantages) <= RTOL


def test_verl_default_epsilon_differs():
    """Convention 1: verl's default epsilon 1e-6 vs our 1e-4, both added to the std (not under the square root)."""
    groups = [torch.tensor([0.0, 0.5, 1.0, 1.0], dtype=torch.float64), torch.tensor([0.0, 0.0, 0.0, 0.5],
                                                                                      dtype=torch.float64)]
    token_level_rewards, mask, index, rewards, group_of_row, _ = _verl_batch(0, groups)
    verl_default, _ = core_algos.compute_grpo_outcome_advantage(token_level_rewards, mask, index)
    verl_1e4, _ = core_algos.compute_grpo_outcome_advantage(token_level_rewards, mask, index, epsilon=1e-4)
    ours_default = token_advantages(_our_row_advantages(rewards, group_of_row, "grpo", eps=1e-4), mask)
    ours_1e6 = token_advantages(_our_row_advantages(rewards, group_of_row, "grpo", eps=1e-6), mask)
    assert relative_value_gap(ours_1e6, verl_default) <= RTOL
    assert relative_value_gap(ours_default, verl_1e4) <= RTOL
    assert relative_value_gap(ours_default, verl_default) > 1e-5  # the two defaults differ
    # eps under the square root, (r - mean) / sqrt(var + eps), is not what verl does
    under_sqrt = torch.empty_like(rewards)
    for k in group_of_row.unique():
        r = rewards[group_of_row == k]
        under_sqrt[group_of_row == k] = (r - r.mean()) / torch.sqrt(r.var() + 1e-4)
    assert relative_value_gap(token_advantages(under_sqrt, mask), verl_1e4) > 1e-5


@pytest.mark.parametrize("norm", [True, False], ids=["std", "no-std"])
def test_singleton_group(norm):
    """Convention 3: a group of one response gets its raw reward (mean 0, std 1) in verl; ours refuses R < 2."""
    groups = [torch.tensor([0.75], dtype=torch.float64), torch.tensor([1.0, 0.0, 0.5], dtype=torch.float64)]
    token_level_rewards, mask, index, rewards, group_of_row, _ = _verl_batch(0, groups)
    advantages, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards, mask, index, epsilon=VERL_EPSILON, norm_adv_by_std_in_grpo=norm
    )
    singleton = group_of_row == 0
    # verl's singleton std is torch.tensor(1.0), a float32 scalar, so 1 + epsilon is rounded to float32
    expected = 0.75 / float(np.float32(1 + VERL_EPSILON)) if norm else 0.75
    assert float(np.float32(1 + VERL_EPSILON)) != 1 + VERL_EPSILON
    assert torch.equal(advantages[singleton], expected * mask[singleton])
    with pytest.raises(ValueError, match="at least R = 2"):
        group_advantages(groups[0].view(1, 1), ADVANTAGE_KIND[norm])
    ours_rest = _our_row_advantages(rewards[~singleton], group_of_row[~singleton], ADVANTAGE_KIND[norm])
    assert relative_value_gap(token_advantages(ours_rest, mask[~singleton]), advantages[~singleton]) <= RTOL


@pytest.mark.parametrize(
    ("dtype", "value", "size", "low", "high"),
    [(torch.float64, 0.7, 3, 1e-11, 1e-9), (torch.float32, 0.7, 8, 1e-2, 1e-1)],
    ids=["float64", "float32"],
)
def test_constant_group_round_off_in_verl(dtype, value, size, low, high):
    """Convention 4: a constant group whose mean is inexact gets round-off / (std + epsilon) in verl, 0 in ours."""
    rewards = torch.full((size,), value, dtype=dtype)
    token_level_rewards = torch.zeros(size, 3, dtype=dtype)
    token_level_rewards[:, -1] = rewards
    mask = torch.ones(size, 3, dtype=dtype)
    index = np.array(["uid-0"] * size, dtype=object)
    with_std, _ = core_algos.compute_grpo_outcome_advantage(token_level_rewards, mask, index)
    without_std, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards, mask, index, norm_adv_by_std_in_grpo=False
    )
    # the same arithmetic as verl: torch.mean / torch.std of the stacked group, epsilon 1e-6 added to the std
    round_off = rewards - torch.mean(rewards)
    assert torch.equal(with_std[:, 0], round_off / (torch.std(rewards) + VERL_EPSILON))
    assert torch.equal(without_std[:, 0], round_off)
    assert low < with_std.abs().max().item() < high  # 1.1e-10 (float64), 0.056 (float32)
    assert 0 < without_std.abs().max().item() < 1e-6
    for kind in ("grpo", "dr_grpo"):
        assert (group_advantages(rewards.view(1, -1), kind, VERL_EPSILON) == 0).all()


def test_verl_reward_sum_ignores_the_mask():
    """Convention 5: verl's outcome score is token_level_rewards.sum(-1), padding positions included."""
    groups = [torch.tensor([1.0, 0.0, 0.5, 0.5], dtype=torch.float64)]
    token_level_rewards, mask, index, _, _, lengths = _verl_batch(0, groups)
    assert (lengths < WIDTH).any()
    moved = torch.zeros_like(token_level_rewards)
    moved[:, -1] = token_level_rewards.sum(-1)  # every reward at the last (for short responses: padding) position
    before, _ = core_algos.compute_grpo_outcome_advantage(token_level_rewards, mask, index)
    after, _ = core_algos.compute_grpo_outcome_advantage(moved, mask, index)
    assert torch.equal(before, after)


def test_vectorized_estimator():
    """Convention 12: compute_grpo_vectorized_outcome_advantage computes in float32; float32 accuracy only."""
    groups = _reward_groups(0, [2, 3, 4, 5, 8, 6, 4, 2, 3])
    token_level_rewards, mask, index, rewards, group_of_row, _ = _verl_batch(0, groups)
    index = group_of_row.numpy()  # integer ids for its as_torch_index
    ours = token_advantages(_our_row_advantages(rewards, group_of_row, "grpo"), mask)
    vectorized, _ = core_algos.compute_grpo_vectorized_outcome_advantage(token_level_rewards, mask, index)
    looped, _ = core_algos.compute_grpo_outcome_advantage(token_level_rewards, mask, index)
    assert relative_value_gap(ours, looped) <= RTOL
    assert 1e-12 < relative_value_gap(ours, vectorized) <= 1e-6


# --------------------------------------------------------------------------------------------------------------
# Loss aggregation


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mode", VERL_MODES)
def test_agg_loss_matches_verl(mode, seed):
    losses, mask, lengths = _loss_batch(seed)
    assert lengths.min() < lengths.max()  # unequal lengths: the modes differ
    theirs = core_algos.agg_loss(losses, mask, mode)
    ours = our_aggregate(losses, mask, mode)
    (their_grad,) = torch.autograd.grad(theirs, losses)
    (our_grad,) = torch.autograd.grad(ours, losses)
    tolerance = SEQ_MEAN_TOKEN_MEAN_RTOL if mode == "seq-mean-token-mean" else RTOL
    assert theirs.dtype == torch.float64
    assert relative_value_gap(ours, theirs) <= tolerance
    assert relative_gradient_gap(our_grad, their_grad) <= tolerance
    assert (their_grad[mask == 0] == 0).all() and (our_grad[mask == 0] == 0).all()


def test_seq_mean_token_mean_adds_1e_8_to_the_length():
    """Convention 6: verl divides each token sum by (length + 1e-8): ours * length / (length + 1e-8)."""
    losses, mask, lengths = _loss_batch(0)
    theirs = core_algos.agg_loss(losses, mask, "seq-mean-token-mean")
    masked = torch.where(mask.bool(), losses, 0.0).detach()
    with_1e8 = (masked.sum(1) / (lengths.double() + 1e-8)).mean()
    ours = aggregate_loss(losses, mask, "grpo").detach()
    assert relative_value_gap(with_1e8, theirs) <= RTOL
    assert relative_value_gap(ours, theirs) > 1e-10  # visible in float64 (1e-8 / length relative per sequence)


def test_seq_mean_token_sum_modes():
    """Convention 8: -norm divides by the padded width by default, or by loss_scale_factor; -sum is N x our dr_grpo."""
    losses, mask, lengths = _loss_batch(1)
    num_sequences, width = mask.shape
    total = torch.where(mask.bool(), losses, 0.0).sum()
    assert relative_value_gap(core_algos.agg_loss(losses, mask, "seq-mean-token-sum"), total / num_sequences) <= RTOL
    # verl's default constant is loss_mask.shape[-1]: padding the batch wider changes the loss, as ours
    wider_losses = torch.cat([losses, torch.zeros(num_sequences, 4, dtype=torch.float64)], dim=1)
    wider_mask = torch.cat([mask, torch.zeros(num_sequences, 4, dtype=torch.float64)], dim=1)
    wide = core_algos.agg_loss(wider_losses, wider_mask, "seq-mean-token-sum-norm")
    assert relative_value_gap(aggregate_loss(wider_losses, wider_mask, "dr_grpo"), wide) <= RTOL
    assert relative_value_gap(wide, total / (num_sequences * (width + 4))) <= RTOL
    # a constant loss_scale_factor L is our max_completion_length = L
    for factor in (width, 16, 100):
        theirs = core_algos.agg_loss(losses, mask, "seq-mean-token-sum-norm", loss_scale_factor=factor)
        assert relative_value_gap(aggregate_loss(losses, mask, "dr_grpo", factor), theirs) <= RTOL
    # verl takes an L below the longest response; ours refuses it
    short = core_algos.agg_loss(losses, mask, "seq-mean-token-sum-norm", loss_scale_factor=2)
    assert relative_value_gap(short, total / (num_sequences * 2)) <= RTOL
    with pytest.raises(ValueError, match="below the longest completion"):
        aggregate_loss(losses, mask, "dr_grpo", 2)
    # ActorConfig carries the constant for the actor
    assert ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1).loss_scale_factor is None


@pytest.mark.parametrize("mode", VERL_MODES)
def test_empty_sequences(mode):
    """Convention 7: verl's seq-mean modes divide by the non-empty sequences, ours by N; all-padding: NaN vs 0."""
    losses, mask, _ = _loss_batch(2)
    mask[[3, 7]] = 0.0  # two responses with no valid token
    num_sequences, nonempty = mask.shape[0], int((mask.sum(1) > 0).sum())
    theirs = core_algos.agg_loss(losses, mask, mode)
    ours = our_aggregate(losses, mask, mode)
    scale = 1.0 if mode == "token-mean" else num_sequences / nonempty
    tolerance = SEQ_MEAN_TOKEN_MEAN_RTOL if mode == "seq-mean-token-mean" else RTOL
    assert relative_value_gap(ours * scale, theirs) <= tolerance
    if scale != 1.0:
        assert abs(theirs.item() / ours.item() - 1) > 0.1  # 12 / 10
    empty = torch.zeros_like(mask)
    assert torch.isnan(core_algos.agg_loss(losses, empty, mode))
    assert our_aggregate(losses, empty, mode).item() == 0.0


def test_padding_nan_and_fractional_masks():
    """Convention 9: a NaN at a padding position reaches verl's seq-mean losses (multiplied by the mask), not ours."""
    losses, mask, lengths = _loss_batch(0)
    row = int(torch.nonzero(lengths < WIDTH)[0])
    poisoned = losses.detach().clone()
    poisoned[row, -1] = float("nan")
    for mode in VERL_MODES:
        theirs = core_algos.agg_loss(poisoned, mask, mode)
        ours = our_aggregate(poisoned, mask, mode)
        assert torch.isfinite(ours)
        assert torch.isnan(theirs) == (mode != "token-mean"), mode
        if mode == "token-mean":
            assert relative_value_gap(ours, theirs) <= RTOL
    weights = mask * 0.5
    assert torch.isfinite(core_algos.agg_loss(losses, weights, "token-mean"))
    with pytest.raises(ValueError, match="only 0 and 1"):
        aggregate_loss(losses, weights, "bnpo")


# --------------------------------------------------------------------------------------------------------------
# Policy loss


def _actor_config(eps_low, eps_high, clip_ratio_c=3.0):
    return ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1, clip_ratio=eps_low,
                       clip_ratio_low=eps_low, clip_ratio_high=eps_high, clip_ratio_c=clip_ratio_c)


def _policy_case(seed, noise):
    """verl's token advantages and ours for one batch, log-probs (requiring grad) and perturbed old log-probs."""
    groups = _reward_groups(seed, [4, 4, 3, 5, 4, 2])
    token_level_rewards, mask, index, rewards, group_of_row, _ = _verl_batch(seed, groups)
    verl_advantages, _ = core_algos.compute_grpo_outcome_advantage(token_level_rewards, mask, index)
    ours = _our_row_advantages(rewards, group_of_row, "grpo")
    g = torch.Generator().manual_seed(3000 + seed)
    logps = -torch.rand(mask.shape, generator=g, dtype=torch.float64) * 3
    old_logps = logps + noise * torch.randn(mask.shape, generator=g, dtype=torch.float64) * mask
    return verl_advantages, ours, mask, logps.requires_grad_(True), old_logps


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("eps_high", [0.2, 0.28])
@pytest.mark.parametrize("mode", VERL_MODES)
def test_policy_loss_matches_verl(mode, eps_high, seed):
    verl_advantages, ours, mask, logps, old_logps = _policy_case(seed, noise=0.3)
    ratio = torch.exp(logps.detach() - old_logps)
    valid = mask.bool() & (ours[:, None] != 0)
    clipped = ((ratio < 0.8) & (ours[:, None] < 0)) | ((ratio > 1 + eps_high) & (ours[:, None] > 0))
    assert 0.05 < clipped[valid].double().mean().item() < 0.95  # clipping is active on part of the tokens
    assert ratio[mask.bool() & (ours[:, None] < 0)].max() < 3.0  # below the dual clip (convention 10)
    theirs, metrics = core_algos.compute_policy_loss_vanilla(
        old_logps, logps, verl_advantages, mask, mode, _actor_config(0.2, eps_high)
    )
    assert metrics["actor/pg_clipfrac_lower"] == 0.0
    ours_loss = our_aggregate(per_token_loss(logps, old_logps, ours, mask, 0.2, eps_high), mask, mode)
    (their_grad,) = torch.autograd.grad(theirs, logps)
    (our_grad,) = torch.autograd.grad(ours_loss, logps)
    tolerance = SEQ_MEAN_TOKEN_MEAN_RTOL if mode == "seq-mean-token-mean" else RTOL
    assert relative_value_gap(ours_loss, theirs) <= tolerance
    assert relative_gradient_gap(our_grad, their_grad) <= tolerance


def test_dual_clip():
    """Convention 10: verl caps a negative-advantage token's loss at clip_ratio_c * |A|; ours does not."""
    verl_advantages, ours, mask, logps, old_logps = _policy_case(0, noise=1.5)
    above = mask.bool() & (ours[:, None] < 0) & (torch.exp(logps.detach() - old_logps) > 3.0)
    assert above.sum() >= 3
    theirs, metrics = core_algos.compute_policy_loss_vanilla(
        old_logps, logps, verl_advantages, mask, "token-mean", _actor_config(0.2, 0.2)
    )
    assert metrics["actor/pg_clipfrac_lower"] > 0
    per_token = per_token_loss(logps, old_logps, ours, mask, 0.2)
    capped = torch.where(above, -3.0 * ours[:, None].expand_as(per_token), per_token)
    assert relative_value_gap(aggregate_loss(capped, mask, "bnpo"), theirs) <= RTOL
    assert relative_value_gap(aggregate_loss(per_token, mask, "bnpo"), theirs) > 1e-3
    # a clip_ratio_c beyond every ratio gives our loss again
    no_cap, _ = core_algos.compute_policy_loss_vanilla(
        old_logps, logps, verl_advantages, mask, "token-mean", _actor_config(0.2, 0.2, clip_ratio_c=1e9)
    )
    assert relative_value_gap(aggregate_loss(per_token, mask, "bnpo"), no_cap) <= RTOL


def test_log_ratio_clamp():
    """Convention 11: verl clamps log(ratio) to [-20, 20]: value of e^-20 and zero gradient beyond; ours exact."""
    advantages = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    mask = torch.ones(1, 2, dtype=torch.float64)
    old_logps = torch.tensor([[-1.0, -1.0]], dtype=torch.float64)
    logps = torch.tensor([[-26.0, -1.5]], dtype=torch.float64, requires_grad=True)  # log-ratios -25 and -0.5
    theirs, _ = core_algos.compute_policy_loss_vanilla(
        old_logps, logps, advantages, mask, "token-mean", _actor_config(0.2, 0.2)
    )
    ours = aggregate_loss(per_token_loss(logps, old_logps, advantages[:, 0], mask, 0.2), mask, "bnpo")
    # for A > 0 and a ratio below 1 - 0.2 the unclipped ratio is the minimum: e^-20 (clamped) or e^-25, and e^-0.5
    assert abs(theirs.item() + (np.exp(-20.0) + np.exp(-0.5)) / 2) <= 1e-15
    assert abs(ours.item() + (np.exp(-25.0) + np.exp(-0.5)) / 2) <= 1e-15
    assert theirs.item() != ours.item()
    (their_grad,) = torch.autograd.grad(theirs, logps)
    (our_grad,) = torch.autograd.grad(ours, logps)
    assert their_grad[0, 0] == 0 and our_grad[0, 0] == pytest.approx(-np.exp(-25.0) / 2, rel=1e-12)


# --------------------------------------------------------------------------------------------------------------
# Sensitivity and the ray stand-in


def test_crosscheck_is_sensitive():
    """The comparison detects the population std, a wrong aggregation and a wrong dr_grpo constant."""
    groups = _reward_groups(0, [2, 3, 4, 5, 8])
    token_level_rewards, mask, index, rewards, group_of_row, _ = _verl_batch(0, groups)
    theirs, _ = core_algos.compute_grpo_outcome_advantage(token_level_rewards, mask, index)
    population = token_advantages(_our_row_advantages(rewards, group_of_row, "population"), mask)
    assert relative_value_gap(population, theirs) > 1e-3  # sqrt((R - 1) / R) in every mixed group
    dr_grpo = token_advantages(_our_row_advantages(rewards, group_of_row, "dr_grpo"), mask)
    assert relative_value_gap(dr_grpo, theirs) > 1e-3

    losses, mask, _ = _loss_batch(0)
    for verl_mode, wrong in [("token-mean", "grpo"), ("seq-mean-token-mean", "bnpo"), ("seq-mean-token-sum-norm",
                                                                                        "bnpo")]:
        theirs = core_algos.agg_loss(losses, mask, verl_mode)
        ours = aggregate_loss(losses, mask, wrong)
        assert relative_value_gap(ours, theirs) > 1e-3, verl_mode
        (their_grad,) = torch.autograd.grad(theirs, losses)
        (our_grad,) = torch.autograd.grad(ours, losses)
        assert relative_gradient_gap(our_grad, their_grad) > 1e-3, verl_mode
    norm = core_algos.agg_loss(losses, mask, "seq-mean-token-sum-norm")
    assert relative_value_gap(aggregate_loss(losses, mask, "dr_grpo", WIDTH + 1), norm) > 1e-3


@pytest.mark.skipif(not USES_RAY_STAND_IN, reason="a real ray is installed; the stand-in was not used")
def test_ray_stand_in_is_only_touched_by_annotations():
    """The stand-in saw only the two annotations of verl/protocol.py, after every verl function here has run."""
    import linecache

    import verl.protocol

    for seed in (0, 1):  # run the functions under test again, to be independent of the test order
        test_advantages_match_verl(seed, True)
        test_agg_loss_matches_verl("seq-mean-token-sum-norm", seed)
        test_policy_loss_matches_verl("token-mean", 0.28, seed)
    test_vectorized_estimator()
    assert "ray" not in sys.modules or not isinstance(sys.modules["ray"], _RayStandIn)
    assert isinstance(verl.protocol.ray, _RayStandIn)
    lines = {(name, linecache.getline(path, line).strip()) for name, path, line in RAY_STAND_IN_ACCESSES}
    paths = {path for _, path, _ in RAY_STAND_IN_ACCESSES}
    assert paths == {verl.protocol.__file__}
    assert lines == {
        ("ObjectRef", "futures: list[ray.ObjectRef]"),
        ("ObjectRef", 'def concat(data: list[ray.ObjectRef]) -> "DataProtoFuture":'),
    }
