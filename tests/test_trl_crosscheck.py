r"""Cross-check of ``grpo_verify.estimators`` against TRL's ``GRPOTrainer`` (needs ``trl``; skipped without it).

What of TRL is driven, and how
------------------------------
A real ``trl.GRPOTrainer`` is constructed (no ``object.__new__``): a tiny random ``LlamaConfig`` model (hidden 16,
one layer, vocabulary 32, float64 weights, LM head scaled by 10 so probabilities vary) and a word-level
``PreTrainedTokenizerFast`` are built here, saved to a temporary folder and passed to the trainer as that local path,
so TRL loads the policy and, for ``beta > 0``, builds its reference model itself
(``model_init_kwargs={"dtype": torch.float64}``); nothing is downloaded (``HF_HUB_OFFLINE`` and friends are set while
the trainers are built and used). Then, on each trainer:

* **Advantages**: the bound method ``_generate`` is replaced by a stub returning fixed prompt and completion ids (the
  only stub), and a plain reward function returns fixed rewards. ``trainer._generate_and_score_completions(inputs)``
  -- TRL's own code -- pads prompts (left) and completions (right), builds the masks, calls the reward function,
  computes the advantages inline (``sum_then_normalize`` branch) and, for ``beta > 0``, the reference log-probs with
  its reference model. Its ``advantages`` are compared with ``group_advantages`` ("group" -> ``"grpo"``, "batch" ->
  ``"batch"``, "none" -> ``"dr_grpo"``) and ``token_advantages``.
* **Loss and gradient**: the dict returned above (for the off-policy case with ``old_per_token_logps`` added: the
  current log-probs plus N(0, 0.4^2) noise, rounded to float32 like TRL's own) goes to
  ``trainer.compute_loss(model, inputs)``, which computes the policy log-probs with TRL's fused, chunked LM-head
  log-prob kernel (its own autograd backward), the clipped surrogate, the KL term and the loss-type
  aggregation. Our side calls the same model plainly (``model(input_ids, attention_mask).logits``, the same call TRL
  makes minus its fused head), takes ``log_softmax`` at the completion positions, and applies ``per_token_loss``
  (clipped surrogate + ``k3_kl``) and ``aggregate_loss``. Loss values and the gradients of every model parameter
  are compared, for loss types grpo, bnpo, dr_grpo, dapo; old log-probs equal to the current ones (on-policy, TRL's
  ``old_per_token_logps`` absent) and perturbed (clipping active, checked); beta = 0 and beta = 0.04 with a reference
  model whose weights are perturbed (so the KL term and its gradient are non-zero).
* The one attribute set by hand is ``current_gradient_accumulation_steps`` (= 1), which ``transformers.Trainer``
  sets only inside its training loop, and ``model.train()`` so that TRL takes its "train" branches.

Tolerance: TRL's log-prob kernel keeps its softmax statistics in float32 even for float64 weights and returns float32
log-probs, and TRL stores rewards as float32, so TRL's side is float32-accurate: values are compared to 1e-6 relative
to max(1, |value|) and each parameter's gradient to 1e-6 relative to that parameter's largest gradient entry.
Observed (TRL 1.16, torch 2.13 CPU): advantages <= 1.8e-7, loss values <= 5e-8, gradients <= 4.9e-7 relative
(a few float32 ulps; up to 1.3e-6 absolute on entries of order 1).

Convention differences between TRL 1.16 ``GRPOTrainer`` and ``grpo_verify.estimators`` found here
------------------------------------------------------------------------------------------------
1. Rewards are cast to float32 in TRL (``_calculate_rewards``), so its advantages are float32 whatever the model
   dtype; its log-probs are float32 too (fused kernel), so its whole surrogate and KL arithmetic is float32.
2. Constant groups: ours are exactly 0; TRL computes (r - mean) / (std + 1e-4) in float32, and for a reward that is
   not a dyadic rational the group mean can miss the common value by an ulp, giving advantages of
   round-off / 1e-4, e.g. about 6e-4 for eight rewards of 0.7 with scale_rewards "group" (with "batch" the
   round-off is divided by the batch std instead, negligible unless the whole batch is constant).
   ``test_constant_group_round_off_in_trl`` pins this. Groups of dyadic rewards (0, 1, 0.5, ...) are exactly 0 on both.
3. eps = 1e-4 is added to the std (not under a square root) and the std is the unbiased one (Bessel), in both.
   scale_rewards "batch" divides group-centred rewards by the std of all rewards of the batch around the batch mean.
4. ``use_bias_correction_kl`` defaults to True in TRL: its KL term is k3 * rho, rho = exp(logp - old_logp), whose
   value equals k3 on-policy but whose gradient has the extra k3 * grad(logp). ``per_token_loss`` has no such factor;
   the cross-check sets ``use_bias_correction_kl=False``, and ``test_trl_default_kl_bias_correction_differs`` shows
   the gradient differs with TRL's default.
5. TRL divides the grpo, bnpo and dr_grpo losses by ``current_gradient_accumulation_steps``; ours never does.
   Checked with 2 steps in ``test_trl_divides_by_gradient_accumulation_steps``.
6. TRL's dapo divides by ``num_items_in_batch`` (valid tokens over all processes and the whole generation batch)
   / num_processes * current_gradient_accumulation_steps / steps_per_generation; on one process with one
   accumulation step and steps_per_generation = 1 this is the batch's valid-token count, i.e. our dapo = bnpo.
7. dr_grpo divides by N * ``max_completion_length`` from the config; ``aggregate_loss(..., "dr_grpo")`` defaults to
   the padded width T. The cross-check uses max_completion_length = 8 > T = 6 and passes it to ours;
   ``test_crosscheck_is_sensitive`` shows the default T does not match.
8. TRL divides the logits by ``temperature`` before the log-softmax; the cross-check uses temperature 1.
9. TRL's per-token log-probs at padding positions are 0 (labels -100); ours are whatever the logits give there, and
   the per-token loss masks them with ``where``; neither contributes to the loss or the gradient.
10. TRL does not pass ``position_ids`` (Llama then uses 0..L-1, counting left padding); both sides make the same
    forward call, so this does not separate them.
11. A sequence with no valid token counts in grpo's 1/N on both sides (both clamp its length at 1); read from the
    source, not exercised here (TRL cannot pad an empty completion list).
12. Not compared: two-sided clipping ``delta``, sequence-level importance sampling, vLLM importance-sampling
    correction, ``mask_truncated_completions`` (default False: completions without EOS keep their mask, as here),
    entropy masks/bonus, ``num_iterations > 1`` buffering, and the cispo, sapo, luspo and vespo loss types.
"""

from __future__ import annotations

import dataclasses

import pytest

trl = pytest.importorskip("trl")

# transformers deprecation noise from TRL's GRPOConfig defaults (gradient_checkpointing=True), not from this suite
pytestmark = pytest.mark.filterwarnings("ignore:.*gradient_checkpointing.* is deprecated:FutureWarning")

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402

from grpo_verify.estimators import (  # noqa: E402
    aggregate_loss,
    group_advantages,
    per_token_loss,
    token_advantages,
)

VOCAB_SIZE = 32
PAD_ID, EOS_ID = 0, 1
MAX_COMPLETION_LENGTH = 8  # larger than the padded width of the fixed batch (6), so dr_grpo's constant matters
BETA = 0.04
EPS_LOW = 0.2
RTOL = 1e-6
LM_HEAD_SCALE = 10.0  # larger logits than the default init, so probabilities and ratios vary
ADVANTAGE_KIND = {"group": "grpo", "batch": "batch", "none": "dr_grpo"}
# scale_rewards used with each loss type in the loss cross-check (all three appear)
LOSS_SCALE = {"grpo": "group", "bnpo": "batch", "dr_grpo": "none", "dapo": "group"}
LOSS_EPS_HIGH = {"grpo": None, "bnpo": None, "dr_grpo": None, "dapo": 0.28}

# The fixed batch of the loss cross-check: B = 2 prompts (lengths 2 and 3, so one is left-padded), R = 4 completions
# each, of unequal lengths 1..6, some ending in EOS.
LOSS_PROMPTS = [[3, 4], [5, 6, 7]]
LOSS_COMPLETIONS = [
    [8, 9, 10, EOS_ID], [11, EOS_ID], [12, 13, 14, 15, 16, EOS_ID], [17],
    [9, 9, EOS_ID], [20, 21, 22, 23, 24, 25], [5, EOS_ID], [30, 31, EOS_ID],
]
LOSS_REWARDS = [1.0, 0.0, 0.5, 0.25, 0.75, 0.75, 0.0, 1.0]


# --------------------------------------------------------------------------------------------------------------
# Building TRL trainers


class _Harness:
    """Builds (and caches) GRPOTrainers on one tiny local model; feeds them fixed completions and rewards."""

    def __init__(self, root):
        self.root = root
        self.model_dir = root / "tiny-llama"
        self.tokenizer = self._tokenizer()
        config = LlamaConfig(
            vocab_size=VOCAB_SIZE, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
            num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
            pad_token_id=PAD_ID, eos_token_id=EOS_ID, bos_token_id=EOS_ID, tie_word_embeddings=False,
        )
        torch.manual_seed(0)
        model = LlamaForCausalLM(config).to(torch.float64)
        with torch.no_grad():
            model.lm_head.weight.mul_(LM_HEAD_SCALE)
        model.save_pretrained(self.model_dir)
        self.tokenizer.save_pretrained(self.model_dir)
        self.trainers = {}
        self.rewards = None  # what the reward function returns next
        self.completions = None  # (prompt_ids_list, completion_ids_list) the stubbed _generate returns next

    @staticmethod
    def _tokenizer():
        vocab = {"[PAD]": PAD_ID, "[EOS]": EOS_ID, "[UNK]": 2, **{f"w{i}": i for i in range(3, VOCAB_SIZE)}}
        backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
        backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        return PreTrainedTokenizerFast(
            tokenizer_object=backend, pad_token="[PAD]", eos_token="[EOS]", unk_token="[UNK]"
        )

    def fixed_reward(self, prompts, completions, **kwargs):
        assert len(self.rewards) == len(prompts)
        return list(self.rewards)

    def _stub_generate(self, prompts):
        prompt_ids, completion_ids = self.completions
        assert len(prompt_ids) == len(prompts)
        # (prompt_ids, completion_ids, tool_mask, completions, sampling_logps, extra_fields, images, tool_images)
        return prompt_ids, completion_ids, None, ["-"] * len(prompts), None, {}, None, None

    def trainer(self, *, loss_type="grpo", scale_rewards="group", beta=0.0, epsilon_high=None, num_generations=4,
                batch_size=8, use_bias_correction_kl=False):
        key = (loss_type, scale_rewards, beta, epsilon_high, num_generations, batch_size, use_bias_correction_kl)
        if key in self.trainers:
            return self.trainers[key]
        optional = {"use_bias_correction_kl": use_bias_correction_kl}  # absent (= no correction) in older TRL
        known = {f.name for f in dataclasses.fields(trl.GRPOConfig)}
        if "use_bias_correction_kl" not in known:
            if use_bias_correction_kl:
                pytest.skip("this TRL has no use_bias_correction_kl option")
            optional = {}
        args = trl.GRPOConfig(
            output_dir=str(self.root / f"out{len(self.trainers)}"), report_to=[], use_cpu=True, bf16=False,
            fp16=False, per_device_train_batch_size=batch_size, num_generations=num_generations,
            max_completion_length=MAX_COMPLETION_LENGTH, beta=beta, loss_type=loss_type, scale_rewards=scale_rewards,
            epsilon=EPS_LOW, epsilon_high=epsilon_high, temperature=1.0,
            disable_dropout=True, model_init_kwargs={"dtype": torch.float64}, save_strategy="no",
            logging_strategy="no", seed=0, **optional,
        )
        dataset = Dataset.from_dict({"prompt": ["w3 w4", "w5 w6 w7"]})
        trainer = trl.GRPOTrainer(model=str(self.model_dir), reward_funcs=self.fixed_reward, args=args,
                                  train_dataset=dataset, processing_class=self.tokenizer)
        assert trainer.model.dtype == torch.float64
        trainer._generate = self._stub_generate  # the only stub: no sampling, fixed completions
        trainer.model.train()  # TRL's "train" branches
        trainer.current_gradient_accumulation_steps = 1  # set by Trainer's training loop, not by __init__
        if trainer.ref_model is not None:
            generator = torch.Generator().manual_seed(1)
            with torch.no_grad():  # a reference policy different from the current one
                for parameter in trainer.ref_model.parameters():
                    parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator, dtype=parameter.dtype))
        self.trainers[key] = trainer
        return trainer

    def score(self, trainer, prompt_ids, completion_ids, rewards):
        """Run TRL's _generate_and_score_completions on fixed ids and rewards; return its inputs dict."""
        self.completions = (prompt_ids, completion_ids)
        self.rewards = rewards
        inputs = [{"prompt": " ".join(f"w{t}" for t in ids)} for ids in prompt_ids]
        return trainer._generate_and_score_completions(inputs)


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    import huggingface_hub.constants

    with pytest.MonkeyPatch.context() as patch:
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            patch.setenv(name, "1")
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        yield _Harness(tmp_path_factory.mktemp("trl_crosscheck"))


# --------------------------------------------------------------------------------------------------------------
# Our pipeline


def _pad(rows, side, value=PAD_ID):
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), value, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        span = slice(width - len(r), width) if side == "left" else slice(0, len(r))
        ids[i, span] = torch.tensor(r, dtype=torch.long)
        mask[i, span] = 1
    return ids, mask


def our_batch(prompt_ids, completion_ids):
    prompt, prompt_mask = _pad(prompt_ids, "left")
    completion, completion_mask = _pad(completion_ids, "right")
    return {"prompt_ids": prompt, "prompt_mask": prompt_mask, "completion_ids": completion,
            "completion_mask": completion_mask}


def our_logps(model, batch):
    """log pi(y_t | x, y_<t) at the completion positions: log_softmax of the model's logits, in float64."""
    input_ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    width = batch["completion_ids"].shape[1]
    logps = torch.log_softmax(logits[:, -width - 1:-1].double(), dim=-1)
    return logps.gather(-1, batch["completion_ids"].unsqueeze(-1)).squeeze(-1)


def our_loss(model, ref_model, batch, rewards, *, kind, advantage_kind, beta, eps_high, old_logps=None,
             max_completion_length=MAX_COMPLETION_LENGTH, group_size=4):
    logps = our_logps(model, batch)
    advantages = group_advantages(torch.tensor(rewards, dtype=torch.float64).view(-1, group_size), advantage_kind)
    old = logps.detach() if old_logps is None else old_logps.double()
    ref = None
    if beta:
        with torch.no_grad():
            ref = our_logps(ref_model, batch)
    losses = per_token_loss(logps, old, advantages, batch["completion_mask"], EPS_LOW, eps_high, beta, ref)
    return aggregate_loss(losses, batch["completion_mask"], kind, max_completion_length)


def gradients(model, loss):
    model.zero_grad(set_to_none=True)
    loss.backward()
    grads = {name: p.grad.detach().clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return grads


def relative_value_gap(ours, theirs):
    ours, theirs = torch.as_tensor(ours).double(), torch.as_tensor(theirs).double()
    return ((ours - theirs).abs().max() / max(1.0, theirs.abs().max().item())).item()


def relative_gradient_gap(ours, theirs):
    """Largest, over parameters, of max |g_ours - g_trl| / max |g_trl| for that parameter."""
    assert ours.keys() == theirs.keys()
    worst = 0.0
    for name in theirs:
        scale = theirs[name].abs().max().item()
        assert scale > 0, f"no gradient reaches {name}"
        worst = max(worst, ((ours[name] - theirs[name]).abs().max() / scale).item())
    return worst


def _loss_case(harness, loss_type, beta, policy, *, use_bias_correction_kl=False, ours_kind=None,
               ours_max_length=MAX_COMPLETION_LENGTH):
    """TRL's loss and gradients and ours on the fixed batch: (trl_loss, our_loss, trl_grads, our_grads, info)."""
    trainer = harness.trainer(loss_type=loss_type, scale_rewards=LOSS_SCALE[loss_type], beta=beta,
                              epsilon_high=LOSS_EPS_HIGH[loss_type], use_bias_correction_kl=use_bias_correction_kl)
    inputs = harness.score(trainer, [LOSS_PROMPTS[i // 4] for i in range(8)], LOSS_COMPLETIONS, LOSS_REWARDS)
    batch = our_batch([LOSS_PROMPTS[i // 4] for i in range(8)], LOSS_COMPLETIONS)
    for key, value in batch.items():  # identical inputs on both sides
        assert torch.equal(inputs[key], value), key
    assert inputs["completion_ids"].shape[1] == 6 < trainer.max_completion_length == MAX_COMPLETION_LENGTH
    model = trainer.model
    info = {}
    old_logps = None
    if policy == "off":
        generator = torch.Generator().manual_seed(2)
        with torch.no_grad():
            current = our_logps(model, batch)
        noise = 0.4 * torch.randn(current.shape, generator=generator, dtype=torch.float64)
        old_logps = (current + noise * batch["completion_mask"]).float()  # TRL's logps are float32
        inputs = {**inputs, "old_per_token_logps": old_logps}
        ratio = torch.exp(current - old_logps.double())
        advantages = inputs["advantages"][:, None]
        eps_high = trainer.epsilon_high
        clipped = ((ratio < 1 - EPS_LOW) & (advantages < 0)) | ((ratio > 1 + eps_high) & (advantages > 0))
        valid = batch["completion_mask"].bool() & (advantages != 0)
        info["clipped_fraction"] = clipped[valid].double().mean().item()
    else:
        assert "old_per_token_logps" not in inputs  # TRL's on-policy path: old = current.detach()
    if beta:
        assert "ref_per_token_logps" in inputs
    trl_loss = trainer.compute_loss(model, inputs)
    trl_grads = gradients(model, trl_loss)
    loss = our_loss(model, trainer.ref_model, batch, LOSS_REWARDS, kind=ours_kind or loss_type,
                    advantage_kind=ADVANTAGE_KIND[LOSS_SCALE[loss_type]], beta=beta,
                    eps_high=LOSS_EPS_HIGH[loss_type], old_logps=old_logps, max_completion_length=ours_max_length)
    our_grads = gradients(model, loss)
    return trl_loss.detach(), loss.detach(), trl_grads, our_grads, info


# --------------------------------------------------------------------------------------------------------------
# Advantages


def _advantage_batch(seed, num_groups=6, group_size=4):
    """Rewards with ties and constant groups, and random completions, for `num_groups` groups."""
    g = torch.Generator().manual_seed(seed)
    groups = [
        torch.randint(0, 2, (group_size,), generator=g).double(),  # binary: ties
        torch.randint(0, 5, (group_size,), generator=g).double() / 4,  # grid: ties
        3 * torch.randn(group_size, generator=g, dtype=torch.float64),  # distinct
        torch.ones(group_size, dtype=torch.float64),  # constant
        torch.zeros(group_size, dtype=torch.float64),  # constant
        torch.tensor([0.5] * (group_size - 1) + [-0.25], dtype=torch.float64),  # one outlier
    ][:num_groups]
    rewards = torch.cat(groups).tolist()
    prompts = [[3 + b, 4 + b] for b in range(num_groups) for _ in range(group_size)]
    lengths = torch.randint(1, 7, (len(rewards),), generator=g).tolist()
    completions = [torch.randint(3, VOCAB_SIZE, (n,), generator=g).tolist() for n in lengths]
    return prompts, completions, rewards


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scale_rewards", ["group", "batch", "none"])
def test_advantages_match_trl(harness, scale_rewards, seed):
    trainer = harness.trainer(scale_rewards=scale_rewards)
    prompts, completions, rewards = _advantage_batch(seed)
    inputs = harness.score(trainer, prompts, completions, rewards)
    theirs = inputs["advantages"]
    assert theirs.dtype == torch.float32 and theirs.shape == (len(rewards),)

    ours = group_advantages(torch.tensor(rewards, dtype=torch.float64).view(-1, 4), ADVANTAGE_KIND[scale_rewards])
    assert relative_value_gap(ours.flatten(), theirs) <= RTOL
    # constant groups (3 and 4) are exactly zero on both sides for these dyadic rewards
    assert (theirs.view(-1, 4)[3:5] == 0).all() and (ours[3:5] == 0).all()

    mask = inputs["completion_mask"]
    assert torch.equal(mask, our_batch(prompts, completions)["completion_mask"])
    ours_per_token = token_advantages(ours, mask)
    assert relative_value_gap(ours_per_token, theirs[:, None] * mask) <= RTOL


def test_constant_group_round_off_in_trl(harness):
    """Convention 2: a constant group of eight float32 rewards of 0.7 gets TRL's (r - mean)/(std + 1e-4), whose
    numerator is the float32 round-off of the mean (how large depends on the summation order, so it is compared
    with the same float32 computation, not with a fixed size); ours are exactly 0."""
    trainer = harness.trainer(scale_rewards="group", num_generations=8)
    rewards = [0.7] * 8 + [1.0, 0.0] * 4
    prompts = [[3, 4]] * 8 + [[5, 6]] * 8
    completions = [[8 + i % 5, EOS_ID] for i in range(16)]
    theirs = harness.score(trainer, prompts, completions, rewards)["advantages"].view(2, 8)
    ours = group_advantages(torch.tensor(rewards, dtype=torch.float64).view(2, 8), "grpo")
    assert (ours[0] == 0).all()
    from trl.trainer.utils import nanstd

    grouped = torch.tensor(rewards, dtype=torch.float32).view(-1, 8)  # TRL's own reductions, in its order
    mean, std = torch.nanmean(grouped, dim=1), nanstd(grouped, dim=1)
    float32_convention = (grouped[0] - mean[0]) / (std[0] + 1e-4)
    assert torch.equal(theirs[0].to(torch.float32), float32_convention)
    assert theirs[0].abs().max().item() < 1e-3  # at most round-off / 1e-4, whatever the order
    assert relative_value_gap(ours[1], theirs[1]) <= RTOL


# --------------------------------------------------------------------------------------------------------------
# Loss values and gradients


@pytest.mark.parametrize("policy", ["on", "off"])
@pytest.mark.parametrize("beta", [0.0, BETA])
@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo"])
def test_loss_and_gradient_match_trl(harness, loss_type, beta, policy):
    trl_loss, loss, trl_grads, our_grads, info = _loss_case(harness, loss_type, beta, policy)
    if policy == "off":
        assert 0.05 < info["clipped_fraction"] < 0.95, info  # clipping is active on part of the tokens
    assert loss.item() != 0.0 or policy == "on"
    assert relative_value_gap(loss, trl_loss) <= RTOL
    assert relative_gradient_gap(our_grads, trl_grads) <= RTOL


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo"])
def test_trl_divides_by_gradient_accumulation_steps(harness, loss_type):
    """Convention 5: with 2 accumulation steps TRL's loss and gradient are ours / 2."""
    trainer = harness.trainer(loss_type=loss_type, scale_rewards=LOSS_SCALE[loss_type], beta=0.0,
                              epsilon_high=LOSS_EPS_HIGH[loss_type])
    trainer.current_gradient_accumulation_steps = 2
    try:
        trl_loss, loss, trl_grads, our_grads, _ = _loss_case(harness, loss_type, 0.0, "off")
    finally:
        trainer.current_gradient_accumulation_steps = 1
    assert relative_value_gap(loss / 2, trl_loss) <= RTOL
    assert relative_gradient_gap({k: g / 2 for k, g in our_grads.items()}, trl_grads) <= RTOL


def test_trl_default_kl_bias_correction_differs(harness):
    """Convention 4: TRL's default use_bias_correction_kl=True changes the KL gradient even on-policy."""
    trl_loss, loss, trl_grads, our_grads, _ = _loss_case(harness, "grpo", BETA, "on", use_bias_correction_kl=True)
    assert relative_value_gap(loss, trl_loss) <= RTOL  # rho = 1 on-policy: same value
    assert relative_gradient_gap(our_grads, trl_grads) > 1e-3  # different gradient


@pytest.mark.parametrize(
    ("trl_loss_type", "ours_kind", "ours_max_length"),
    [("dapo", "grpo", MAX_COMPLETION_LENGTH), ("grpo", "dapo", MAX_COMPLETION_LENGTH), ("dr_grpo", "dr_grpo", None)],
    ids=["ours-grpo-vs-trl-dapo", "ours-dapo-vs-trl-grpo", "dr_grpo-padded-width-vs-max-length"],
)
def test_crosscheck_is_sensitive(harness, trl_loss_type, ours_kind, ours_max_length):
    """The comparison detects a wrong aggregation on unequal lengths (and dr_grpo's L = T default vs TRL's config)."""
    trl_loss, loss, trl_grads, our_grads, _ = _loss_case(
        harness, trl_loss_type, 0.0, "off", ours_kind=ours_kind, ours_max_length=ours_max_length
    )
    assert relative_value_gap(loss, trl_loss) > 1e-3
    assert relative_gradient_gap(our_grads, trl_grads) > 1e-3
