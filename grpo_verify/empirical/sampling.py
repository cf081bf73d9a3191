"""Prompts and sampling: R completions of one prompt, in one batched ``generate`` call.

Each (prompt, R) pair gets its own seed derived from (--seed, prompt index, R), so an item's
completions do not depend on which items ran before it: reruns reproduce them and --resume can
skip finished items.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import torch

from .data import Problem

INSTRUCTIONS = {
    "sentence": "Solve the problem. Show brief reasoning, then end your reply with 'The answer is N', "
                "where N is the final number.",
    "boxed": "Solve the problem. Show brief reasoning, then give the final number in \\boxed{N}.",
}


def derived_seed(*parts) -> int:
    """A 63-bit seed from any parts, stable across processes (unlike hash())."""
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big") >> 1


def prompt_text(problem: Problem, answer_format: str) -> str:
    return f"{problem.question}\n\n{INSTRUCTIONS[answer_format]}"


def prompt_ids(tokenizer, problem: Problem, answer_format: str) -> list[int]:
    """Token ids of the prompt: through the tokenizer's chat template when it has one (instruct
    models are trained on it), else the plain text followed by 'Answer:'."""
    text = prompt_text(problem, answer_format)
    if getattr(tokenizer, "chat_template", None):
        rendered = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                 tokenize=False)
        return tokenizer(rendered, add_special_tokens=False)["input_ids"]
    return tokenizer(f"{text}\nAnswer:", add_special_tokens=True)["input_ids"]


@dataclass
class Rollouts:
    """R sequences prompt + completion, right-padded: row i is real where attention_mask is 1."""
    input_ids: torch.Tensor        # (R, L)
    attention_mask: torch.Tensor   # (R, L)
    completion_start: torch.Tensor  # (R,) index of the first completion token of each row
    texts: list[str]
    completion_tokens: list[int]


def _eos_ids(tokenizer, model) -> set[int]:
    ids = set()
    for source in (getattr(model, "generation_config", None), model.config, tokenizer):
        eos = getattr(source, "eos_token_id", None)
        if eos is None:
            continue
        ids.update(eos if isinstance(eos, (list, tuple)) else [eos])
    return ids


class _VocabMask:
    """Never sample ids the tokenizer cannot decode (a model whose embedding is larger than the
    tokenizer's vocabulary: padded vocabularies, or the random-weight 4B preset)."""

    def __init__(self, size: int):
        self.size = size

    def __call__(self, input_ids, scores):
        scores[:, self.size:] = float("-inf")
        return scores


@torch.no_grad()
def sample_group(model, tokenizer, prompt: list[int], group_size: int, *, temperature: float, top_p: float,
                 max_new_tokens: int, seed: int) -> Rollouts:
    """``group_size`` sampled completions of one prompt; each ends at its first EOS (kept as a token)."""
    device = next(model.parameters()).device
    ids = torch.tensor([prompt] * group_size, device=device)
    torch.manual_seed(seed)  # seeds the CPU and every CUDA generator used by sampling
    eos = sorted(_eos_ids(tokenizer, model))
    extra = {}
    if model.config.vocab_size > len(tokenizer):
        from transformers import LogitsProcessorList
        extra["logits_processor"] = LogitsProcessorList([_VocabMask(len(tokenizer))])
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=True,
                         temperature=temperature, top_p=top_p, top_k=0, max_new_tokens=max_new_tokens,
                         eos_token_id=eos or None, pad_token_id=tokenizer.pad_token_id, **extra)
    start = len(prompt)
    completion = out[:, start:]
    # real completion tokens: up to and including the first EOS (generate pads after it)
    is_eos = torch.zeros_like(completion, dtype=torch.bool)
    for e in eos:
        is_eos |= completion == e
    after_eos = (is_eos.long().cumsum(dim=1) - is_eos.long()) > 0
    comp_mask = ~after_eos
    lengths = comp_mask.sum(dim=1)
    width = start + int(lengths.max())
    mask = torch.cat([torch.ones(group_size, start, dtype=torch.long, device=device), comp_mask.long()], dim=1)
    input_ids = torch.where(mask.bool(), out, torch.full_like(out, tokenizer.pad_token_id))
    texts = [tokenizer.decode(completion[i, :int(lengths[i])], skip_special_tokens=True) for i in range(group_size)]
    return Rollouts(input_ids[:, :width].cpu(), mask[:, :width].cpu(), torch.full((group_size,), start),
                    texts, lengths.tolist())
