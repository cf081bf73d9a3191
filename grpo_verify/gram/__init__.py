"""Exact R x R Gram matrices of per-rollout GRPO score vectors without materialising them.

``rollout_gram`` (the engine, :mod:`.engine`), per-layer rules (:mod:`.layers`), contractions
(:mod:`.contract`), the per-rollout objective (:mod:`.loss`) and naive / torch.func references
(:mod:`.reference`).
"""

from .contract import Factor
from .engine import GramResult, group_of, relative_error, rollout_gram
from .layers import register
from .loss import completion_weights, position_ids_from_mask, rollout_objectives
from .reference import func_gram, naive_gram

__all__ = ["Factor", "GramResult", "completion_weights", "func_gram", "group_of", "naive_gram", "position_ids_from_mask",
           "register", "relative_error", "rollout_gram", "rollout_objectives"]
