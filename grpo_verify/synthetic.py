"""Synthetic policies small enough to enumerate: every outcome with its exact probability and score.

A policy here generates a sequence o = (o_1, ..., o_T) of T tokens from a vocabulary {0, ..., V-1},
token by token: pi_theta(o) = prod_t pi_theta(o_t | o_<t). It has V^T outcomes; a one-step policy
(a bandit) has T = 1 and V = K actions. For each outcome the policy gives

* its probability pi_theta(o), and
* its score vector g(o) = grad_theta log pi_theta(o), flattened over all parameters in the order
  of ``named_parameters()`` (P numbers).

These feed ``grpo_verify.oracle``, which turns them into exact expectations. Everything is float64.

API
---
``DEFAULT_MAX_OUTCOMES = 20_000``  the default enumeration limit (outcomes per policy)
``EnumerationTooLarge``            ValueError raised before an enumeration beyond its limit starts
``Outcomes(sequences, probs, scores)``   all N outcomes: (N, T) int64, (N,) and (N, P) float64;
    ``num_outcomes``, ``num_parameters``, ``length``, ``as_tuples()``
``EnumerablePolicy(vocab_size, length, max_outcomes)``   base class (a torch ``nn.Module``); subclasses
    define ``next_token_logits(prefixes)``. Methods: ``enumerate(max_outcomes=None) -> Outcomes``,
    ``log_prob(sequences)``, ``sample(num_samples, generator=None)``, ``scores(sequences)``,
    ``autograd_scores(sequences, batch_size=256)``, ``flat_gradient(scalar)``, ``all_sequences()``;
    properties ``num_parameters``, ``num_outcomes``; attributes ``vocab_size``, ``length``, ``max_outcomes``
``SoftmaxBandit(num_actions, logits=None, seed=0)``            pi = softmax(theta); score e_a - pi
``LinearSoftmax(features, weights=None, seed=0)``             pi = softmax(features @ w); score phi_a - E_pi[phi]
``TabularAutoregressive(vocab_size, length, shared=False, logits=None, seed=0)``
    one logit row per prefix (shared=False) or per previous token (shared=True)
``TinyCausalTransformer(vocab_size=3, length=2, prompt=(0, 1), hidden_size=16, num_layers=1,
    num_heads=2, init_std=0.2, seed=0, config=None, exact=True)``   a random tiny Llama from
    transformers with a fixed prompt, float64 throughout (``Float64RMSNorm``, ``float64_causal_attention``)
``binary_rewards(outcomes, correct)``               1 for correct outcomes (a predicate or a set), else 0
``tabulated_rewards(outcomes, table, default=None)``   rewards from a mapping or function of the sequence
``policy_strategy(kinds, max_outcomes=9)``          Hypothesis strategy: small closed-form policies
``reward_strategy(num_outcomes, styles)``           Hypothesis strategy: binary, continuous or tied rewards

Every constructor also takes ``max_outcomes`` (default ``DEFAULT_MAX_OUTCOMES``); unspecified
parameters are N(0, 1) draws (the transformer: N(0, init_std^2)) from a generator seeded with ``seed``.

Scores come from a closed form where one exists (bandit, linear softmax, tabular) and from autograd
(``torch.func.vmap`` over ``torch.func.grad``) otherwise; ``autograd_scores`` is always available, so
the two can be compared.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable, Collection, Mapping, Sequence

import torch
from hypothesis import strategies as st
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap

DTYPE = torch.float64
DEFAULT_MAX_OUTCOMES = 20_000
SCORE_BATCH_SIZE = 256  # sequences per vmapped gradient call
_PROBABILITY_TOLERANCE = 1e-9


class EnumerationTooLarge(ValueError):
    """An enumeration would exceed its configured limit; raised before any work is done."""


# == outcomes =====================================================================================


@dataclass(frozen=True, eq=False)
class Outcomes:
    """All N outcomes of a policy: sequences (N, T) int64, probs (N,) and scores (N, P), float64.

    probs[n] = pi_theta(sequences[n]) and scores[n] = grad_theta log pi_theta(sequences[n]).
    The probabilities must be non-negative and sum to 1 (within 1e-9); nothing is renormalised.
    """

    sequences: Tensor
    probs: Tensor
    scores: Tensor

    def __post_init__(self) -> None:
        if self.sequences.ndim != 2 or self.sequences.dtype != torch.int64:
            raise ValueError(f"sequences must be an int64 (N, T) tensor, got {self.sequences.dtype} "
                             f"shape {tuple(self.sequences.shape)}")
        num = self.sequences.shape[0]
        if num == 0:
            raise ValueError("outcomes must hold at least one sequence")
        if self.probs.shape != (num,) or self.probs.dtype != DTYPE:
            raise ValueError(f"probs must be float64 of shape ({num},), got {self.probs.dtype} "
                             f"shape {tuple(self.probs.shape)}")
        if self.scores.ndim != 2 or self.scores.shape[0] != num or self.scores.dtype != DTYPE:
            raise ValueError(f"scores must be float64 of shape ({num}, P), got {self.scores.dtype} "
                             f"shape {tuple(self.scores.shape)}")
        if not (torch.isfinite(self.probs).all() and torch.isfinite(self.scores).all()):
            raise ValueError("probs and scores must be finite")
        if (self.probs < 0).any():
            raise ValueError(f"probabilities must be >= 0, got minimum {self.probs.min().item()!r}")
        total = self.probs.sum().item()
        if abs(total - 1.0) > _PROBABILITY_TOLERANCE:
            raise ValueError(f"probabilities must sum to 1, got {total!r}")

    @property
    def num_outcomes(self) -> int:
        return self.sequences.shape[0]

    @property
    def num_parameters(self) -> int:
        return self.scores.shape[1]

    @property
    def length(self) -> int:
        return self.sequences.shape[1]

    def as_tuples(self) -> list[tuple[int, ...]]:
        """The sequences as tuples of ints, in outcome order (keys for reward tables)."""
        return [tuple(row) for row in self.sequences.tolist()]


# == the base class ===============================================================================


class EnumerablePolicy(nn.Module):
    """A policy over sequences of ``length`` tokens from ``range(vocab_size)`` whose outcomes can be listed.

    Subclasses define ``next_token_logits(prefixes)``: logits (n, V) of pi(o_t | o_<t) for prefixes
    (n, t), t = 0..T-1. From it this class derives

        log pi(o) = sum_t log softmax(next_token_logits(o_<t))[o_t]          (``log_prob``)
        g(o) = grad_theta log pi(o), flattened over ``named_parameters()``   (``autograd_scores``)

    and the enumeration of all V^T outcomes (``enumerate``). ``forward`` is ``log_prob`` without input
    checks, so ``torch.func.functional_call`` can differentiate it per sequence.
    """

    def __init__(self, vocab_size: int, length: int, max_outcomes: int = DEFAULT_MAX_OUTCOMES) -> None:
        super().__init__()
        if not (isinstance(vocab_size, int) and vocab_size >= 2):
            raise ValueError(f"vocab_size must be an int >= 2, got {vocab_size!r}")
        if not (isinstance(length, int) and length >= 1):
            raise ValueError(f"length must be an int >= 1, got {length!r}")
        if not (isinstance(max_outcomes, int) and max_outcomes >= 1):
            raise ValueError(f"max_outcomes must be an int >= 1, got {max_outcomes!r}")
        self.vocab_size = vocab_size
        self.length = length
        self.max_outcomes = max_outcomes

    # -- what a subclass defines ------------------------------------------------------------------

    def next_token_logits(self, prefixes: Tensor) -> Tensor:
        """Logits (n, V) of the next token after each prefix (n, t), 0 <= t < T."""
        raise NotImplementedError

    # -- sizes ------------------------------------------------------------------------------------

    @property
    def num_parameters(self) -> int:
        """P, the length of a score vector."""
        return sum(p.numel() for p in self.parameters())

    @property
    def num_outcomes(self) -> int:
        """N = V^T, the number of distinct sequences."""
        return self.vocab_size ** self.length

    # -- probabilities ----------------------------------------------------------------------------

    def forward(self, sequences: Tensor) -> Tensor:
        """log pi(o) for each row of ``sequences`` (n, T), differentiable; no input checks (vmap-safe)."""
        total = torch.zeros(sequences.shape[0], dtype=DTYPE, device=sequences.device)
        for t in range(self.length):
            log_probs = torch.log_softmax(self.next_token_logits(sequences[:, :t]), dim=-1)
            total = total + log_probs.gather(-1, sequences[:, t:t + 1]).squeeze(-1)
        return total

    def log_prob(self, sequences: Tensor) -> Tensor:
        """log pi(o) (n,) for sequences (n, T) of token ids, differentiable in the parameters."""
        return self(self._checked(sequences))

    @torch.no_grad()
    def sample(self, num_samples: int, generator: torch.Generator | None = None) -> Tensor:
        """``num_samples`` i.i.d. sequences (num_samples, T), drawn token by token."""
        if not (isinstance(num_samples, int) and num_samples >= 0):
            raise ValueError(f"num_samples must be an int >= 0, got {num_samples!r}")
        sequences = torch.zeros(num_samples, 0, dtype=torch.int64)
        if num_samples == 0:
            return torch.zeros(0, self.length, dtype=torch.int64)
        for _ in range(self.length):
            probs = torch.softmax(self.next_token_logits(sequences), dim=-1)
            token = torch.multinomial(probs, 1, replacement=True, generator=generator)
            sequences = torch.cat([sequences, token], dim=1)
        return sequences

    # -- scores -----------------------------------------------------------------------------------

    def scores(self, sequences: Tensor) -> Tensor:
        """Score vectors (n, P) of sequences (n, T). Subclasses with a closed form override this."""
        return self.autograd_scores(sequences)

    def autograd_scores(self, sequences: Tensor, batch_size: int = SCORE_BATCH_SIZE) -> Tensor:
        """Score vectors (n, P) by autograd: one gradient of log pi(o) per sequence (vmapped in batches)."""
        sequences = self._checked(sequences)
        names = [name for name, _ in self.named_parameters()]
        params = {name: p.detach() for name, p in self.named_parameters()}

        def log_prob_of_one(parameters: dict[str, Tensor], sequence: Tensor) -> Tensor:
            return functional_call(self, parameters, (sequence[None],))[0]

        per_sequence_gradient = vmap(grad(log_prob_of_one), in_dims=(None, 0))
        blocks = []
        for start in range(0, sequences.shape[0], batch_size):
            gradients = per_sequence_gradient(params, sequences[start:start + batch_size])
            blocks.append(torch.cat([gradients[name].flatten(1) for name in names], dim=1))
        if not blocks:
            return torch.zeros(0, self.num_parameters, dtype=DTYPE)
        return torch.cat(blocks)

    def flat_gradient(self, scalar: Tensor) -> Tensor:
        """grad_theta of a scalar built from this policy's parameters, flattened as a score vector (P,).

        Parameters the scalar does not depend on get zeros.
        """
        parameters = list(self.parameters())
        gradients = torch.autograd.grad(scalar, parameters, allow_unused=True)
        return torch.cat([torch.zeros_like(p).flatten() if g_ is None else g_.flatten()
                          for p, g_ in zip(parameters, gradients)])

    # -- enumeration ------------------------------------------------------------------------------

    def all_sequences(self, max_outcomes: int | None = None) -> Tensor:
        """All V^T sequences (N, T) in lexicographic order (so outcome n is n written in base V)."""
        limit = self.max_outcomes if max_outcomes is None else max_outcomes
        if self.num_outcomes > limit:
            raise EnumerationTooLarge(
                f"{type(self).__name__} has V^T = {self.vocab_size}^{self.length} = {self.num_outcomes} outcomes, "
                f"more than the limit {limit}; pass a larger max_outcomes or use a smaller policy")
        codes = torch.arange(self.num_outcomes, dtype=torch.int64)
        powers = self.vocab_size ** torch.arange(self.length - 1, -1, -1, dtype=torch.int64)
        return (codes[:, None] // powers) % self.vocab_size

    def enumerate(self, max_outcomes: int | None = None, batch_size: int = 4096) -> Outcomes:
        """Every outcome with its exact probability and score vector.

        Raises EnumerationTooLarge when V^T exceeds ``max_outcomes`` (default: the policy's limit).
        """
        sequences = self.all_sequences(max_outcomes)
        with torch.no_grad():
            log_probs = torch.cat([self(sequences[s:s + batch_size])
                                   for s in range(0, sequences.shape[0], batch_size)])
        return Outcomes(sequences=sequences, probs=torch.exp(log_probs), scores=self.scores(sequences).detach())

    # -- helpers ----------------------------------------------------------------------------------

    def _checked(self, sequences: Tensor) -> Tensor:
        if not isinstance(sequences, Tensor) or sequences.dtype != torch.int64:
            raise ValueError(f"sequences must be an int64 tensor, got "
                             f"{getattr(sequences, 'dtype', type(sequences).__name__)}")
        if sequences.ndim != 2 or sequences.shape[1] != self.length:
            raise ValueError(f"sequences must have shape (n, {self.length}), got {tuple(sequences.shape)}")
        if sequences.numel() and (sequences.min() < 0 or sequences.max() >= self.vocab_size):
            raise ValueError(f"tokens must lie in 0..{self.vocab_size - 1}, got range "
                             f"{sequences.min().item()}..{sequences.max().item()}")
        return sequences


def _initial_values(shape: tuple[int, ...], values: Tensor | Sequence | None, seed: int, scale: float) -> Tensor:
    """Given values as float64, or N(0, scale^2) draws from a generator seeded with ``seed``."""
    if values is None:
        generator = torch.Generator().manual_seed(seed)
        return scale * torch.randn(shape, generator=generator, dtype=DTYPE)
    values = torch.as_tensor(values, dtype=DTYPE).clone()
    if values.shape != shape:
        raise ValueError(f"expected initial values of shape {shape}, got {tuple(values.shape)}")
    if not torch.isfinite(values).all():
        raise ValueError("initial parameter values must be finite")
    return values


# == one-step policies ============================================================================


class SoftmaxBandit(EnumerablePolicy):
    """K actions, pi_a = exp(theta_a) / sum_b exp(theta_b); score g(a) = e_a - pi (D1).

    ``logits`` default to N(0, 1) draws seeded by ``seed``. Outcomes are the sequences (a,) of length 1.
    """

    def __init__(self, num_actions: int, logits: Tensor | Sequence[float] | None = None, seed: int = 0,
                 max_outcomes: int = DEFAULT_MAX_OUTCOMES) -> None:
        super().__init__(num_actions, 1, max_outcomes)
        self.logits = nn.Parameter(_initial_values((num_actions,), logits, seed, 1.0))

    def next_token_logits(self, prefixes: Tensor) -> Tensor:
        return self.logits.expand(prefixes.shape[0], -1)

    def probabilities(self) -> Tensor:
        """pi (K,)."""
        return torch.softmax(self.logits.detach(), dim=0)

    def scores(self, sequences: Tensor) -> Tensor:
        """g(a) = e_a - pi."""
        actions = self._checked(sequences)[:, 0]
        one_hot = nn.functional.one_hot(actions, self.vocab_size).to(DTYPE)
        return one_hot - self.probabilities()


class LinearSoftmax(EnumerablePolicy):
    """K actions with features phi_a (rows of a K x d matrix): pi = softmax(features @ w).

    Score g(a) = phi_a - sum_b pi_b phi_b. ``weights`` (d,) default to N(0, 1) draws seeded by ``seed``.
    """

    def __init__(self, features: Tensor | Sequence[Sequence[float]], weights: Tensor | Sequence[float] | None = None,
                 seed: int = 0, max_outcomes: int = DEFAULT_MAX_OUTCOMES) -> None:
        features = torch.as_tensor(features, dtype=DTYPE)
        if features.ndim != 2 or features.shape[1] < 1:
            raise ValueError(f"features must be a (K, d) matrix with d >= 1, got shape {tuple(features.shape)}")
        if not torch.isfinite(features).all():
            raise ValueError("features must be finite")
        super().__init__(features.shape[0], 1, max_outcomes)
        self.register_buffer("features", features.clone())
        self.weights = nn.Parameter(_initial_values((features.shape[1],), weights, seed, 1.0))

    def next_token_logits(self, prefixes: Tensor) -> Tensor:
        return (self.features @ self.weights).expand(prefixes.shape[0], -1)

    def probabilities(self) -> Tensor:
        """pi (K,)."""
        return torch.softmax(self.features @ self.weights.detach(), dim=0)

    def scores(self, sequences: Tensor) -> Tensor:
        """g(a) = phi_a - E_pi[phi]."""
        actions = self._checked(sequences)[:, 0]
        return self.features[actions] - self.probabilities() @ self.features


# == autoregressive policies ======================================================================


class TabularAutoregressive(EnumerablePolicy):
    """A logit table over V tokens for each context; sequences of T tokens.

    shared=False: one row per prefix o_<t (all prefixes of length 0..T-1, (V^T - 1)/(V - 1) rows), so
    every sequence distribution on V^T outcomes with full support is reachable.
    shared=True: one row per previous token plus a start row (V + 1 rows), shared across positions:
    pi(o_t | o_<t) = softmax(table[o_{t-1}]) with o_0 = start; a row can then be visited several
    times by one sequence, and its score contributions add up.

    Score (both cases; D1's sequence score is the sum of token scores):
        g(o)[row, :] = sum_{t : row(o_<t) = row} (e_{o_t} - softmax(table[row])).
    ``logits`` (rows, V) default to N(0, 1) draws seeded by ``seed``.
    """

    def __init__(self, vocab_size: int, length: int, shared: bool = False,
                 logits: Tensor | Sequence | None = None, seed: int = 0,
                 max_outcomes: int = DEFAULT_MAX_OUTCOMES) -> None:
        super().__init__(vocab_size, length, max_outcomes)
        self.shared = shared
        num_rows = vocab_size + 1 if shared else sum(vocab_size ** t for t in range(length))
        self.table = nn.Parameter(_initial_values((num_rows, vocab_size), logits, seed, 1.0))

    def context_row(self, prefixes: Tensor) -> Tensor:
        """Row index (n,) of the table used after each prefix (n, t)."""
        num, t = prefixes.shape
        if self.shared:
            start = torch.full((num,), self.vocab_size, dtype=torch.int64, device=prefixes.device)
            return start if t == 0 else prefixes[:, -1]
        offset = sum(self.vocab_size ** s for s in range(t))  # rows of shorter prefixes come first
        powers = self.vocab_size ** torch.arange(t - 1, -1, -1, dtype=torch.int64, device=prefixes.device)
        return offset + (prefixes * powers).sum(dim=1)

    def next_token_logits(self, prefixes: Tensor) -> Tensor:
        return self.table[self.context_row(prefixes)]

    def scores(self, sequences: Tensor) -> Tensor:
        """Closed form: each position adds e_{o_t} - pi(. | o_<t) to the row it used."""
        sequences = self._checked(sequences)
        num = sequences.shape[0]
        table = self.table.detach()
        scores = torch.zeros(num, *table.shape, dtype=DTYPE)
        positions = torch.arange(num)
        for t in range(self.length):
            rows = self.context_row(sequences[:, :t])
            token_score = nn.functional.one_hot(sequences[:, t], self.vocab_size).to(DTYPE)
            token_score = token_score - torch.softmax(table[rows], dim=-1)
            scores.index_put_((positions, rows), token_score, accumulate=True)
        return scores.flatten(1)


FLOAT64_ATTENTION = "grpo_verify_float64_causal"


def float64_causal_attention(module: nn.Module, query: Tensor, key: Tensor, value: Tensor,
                             attention_mask: Tensor | None, scaling: float, dropout: float = 0.0,
                             **kwargs) -> tuple[Tensor, Tensor]:
    """Causal softmax attention computed in the input dtype: softmax(q k^T * scaling + causal mask) v.

    transformers' eager attention takes its softmax in float32 even for float64 models; registered
    under ``FLOAT64_ATTENTION`` it replaces that. No padding mask: every sequence here has one length.
    Shapes as transformers' attention functions: query (n, heads, q_len, d), key/value (n, kv_heads, k_len, d).
    """
    groups = query.shape[1] // key.shape[1]
    key = key.repeat_interleave(groups, dim=1)
    value = value.repeat_interleave(groups, dim=1)
    weights = (query @ key.transpose(2, 3)) * scaling
    q_len, k_len = weights.shape[-2:]
    future = torch.ones(q_len, k_len, dtype=torch.bool, device=query.device).triu(k_len - q_len + 1)
    weights = torch.softmax(weights.masked_fill(future, float("-inf")), dim=-1)
    return (weights @ value).transpose(1, 2).contiguous(), weights


class Float64RMSNorm(nn.Module):
    """RMSNorm without the float32 round trip: weight * x / sqrt(mean(x^2) + eps), sharing the old weight."""

    def __init__(self, norm: nn.Module) -> None:
        super().__init__()
        self.weight = norm.weight
        self.variance_epsilon = norm.variance_epsilon

    def forward(self, hidden_states: Tensor) -> Tensor:
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


def _make_float64_exact(model: nn.Module) -> None:
    """Swap every ``*RMSNorm`` module for Float64RMSNorm (transformers' norms compute in float32)."""
    for name, module in list(model.named_modules()):
        if type(module).__name__.endswith("RMSNorm") and hasattr(module, "variance_epsilon"):
            parent, _, attribute = name.rpartition(".")
            setattr(model.get_submodule(parent), attribute, Float64RMSNorm(module))


class TinyCausalTransformer(EnumerablePolicy):
    """A tiny random causal LM from ``transformers`` (Llama by default), float64, with a fixed prompt.

    Outcomes are the V^T completions of length T that follow ``prompt``; the completion vocabulary is
    the whole model vocabulary. log pi(o) = sum_t log softmax(logits at prompt + o_<t)[o_t] is computed
    in one forward pass; scores come from autograd over all parameters (vmap over per-sequence
    gradients). Weights are drawn with std ``init_std`` under ``torch.manual_seed(seed)`` (the global
    RNG is restored afterwards); a larger std than Llama's 0.02 keeps the distribution far from uniform.

    Exactness: transformers computes RMSNorm and the eager attention softmax in float32 even in a
    float64 model, which leaves errors of ~1e-7 in the scores (E[g] = 0 fails at that level). The model
    therefore uses ``float64_causal_attention`` and ``Float64RMSNorm``; ``exact=False`` keeps
    transformers' own eager code (for comparison). ``config`` (a Llama-like causal-LM config) replaces
    the default Llama config; its attention implementation is overridden unless exact=False.
    """

    def __init__(self, vocab_size: int = 3, length: int = 2, prompt: Sequence[int] = (0, 1),
                 hidden_size: int = 16, num_layers: int = 1, num_heads: int = 2, init_std: float = 0.2,
                 seed: int = 0, config=None, exact: bool = True,
                 max_outcomes: int = DEFAULT_MAX_OUTCOMES) -> None:
        from transformers import AttentionInterface, AutoModelForCausalLM, LlamaConfig

        super().__init__(vocab_size, length, max_outcomes)
        prompt = torch.as_tensor(prompt, dtype=torch.int64)
        if prompt.ndim != 1 or prompt.numel() < 1:
            raise ValueError("prompt must be a non-empty 1-D sequence of token ids (the first completion token "
                             "is predicted from its last position)")
        if prompt.min() < 0 or prompt.max() >= vocab_size:
            raise ValueError(f"prompt tokens must lie in 0..{vocab_size - 1}, got {prompt.tolist()}")
        if config is None:
            config = LlamaConfig(
                vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=num_heads,
                max_position_embeddings=len(prompt) + length, initializer_range=init_std,
                tie_word_embeddings=False)
        elif config.vocab_size != vocab_size:
            raise ValueError(f"config.vocab_size = {config.vocab_size} differs from vocab_size = {vocab_size}")
        else:
            config = copy.deepcopy(config)  # the attention implementation is set below
        if exact:
            AttentionInterface.register(FLOAT64_ATTENTION, float64_causal_attention)
        config._attn_implementation = FLOAT64_ATTENTION if exact else "eager"
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.model = AutoModelForCausalLM.from_config(config).to(DTYPE)
        if exact:
            _make_float64_exact(self.model)
        self.model.eval()  # no dropout
        self.register_buffer("prompt", prompt)

    def _logits(self, completions: Tensor) -> Tensor:
        """Logits (n, P + t, V) over prompt + completions (n, t)."""
        inputs = torch.cat([self.prompt.expand(completions.shape[0], -1), completions], dim=1)
        return self.model(input_ids=inputs, use_cache=False).logits

    def next_token_logits(self, prefixes: Tensor) -> Tensor:
        return self._logits(prefixes)[:, -1]

    def forward(self, sequences: Tensor) -> Tensor:
        prompt_length = self.prompt.shape[0]
        logits = self._logits(sequences)[:, prompt_length - 1:-1]  # the positions predicting o_1..o_T
        log_probs = torch.log_softmax(logits, dim=-1)
        return log_probs.gather(-1, sequences[..., None]).squeeze(-1).sum(dim=1)


# == rewards ======================================================================================


def _sequence_tuples(outcomes: Outcomes | Tensor) -> list[tuple[int, ...]]:
    if isinstance(outcomes, Outcomes):
        return outcomes.as_tuples()
    if isinstance(outcomes, Tensor) and outcomes.ndim == 2 and outcomes.dtype == torch.int64:
        return [tuple(row) for row in outcomes.tolist()]
    raise ValueError("pass Outcomes or an int64 (N, T) tensor of sequences")


def binary_rewards(outcomes: Outcomes | Tensor,
                   correct: Callable[[tuple[int, ...]], bool] | Collection[Sequence[int]]) -> Tensor:
    """r(o) = 1 if o is correct, else 0, as a float64 (N,) vector in outcome order.

    ``correct`` is a predicate on the sequence (a tuple of ints) or a collection of correct sequences
    (a bandit's action a is the sequence (a,)). A listed sequence that is not an outcome is an error.
    """
    sequences = _sequence_tuples(outcomes)
    if callable(correct):
        values = [1.0 if correct(seq) else 0.0 for seq in sequences]
    else:
        wanted = {tuple(int(x) for x in seq) for seq in correct}
        unknown = wanted - set(sequences)
        if unknown:
            raise ValueError(f"correct sequences that are not outcomes: {sorted(unknown)[:5]}")
        values = [1.0 if seq in wanted else 0.0 for seq in sequences]
    return torch.tensor(values, dtype=DTYPE)


def tabulated_rewards(outcomes: Outcomes | Tensor,
                      table: Mapping[tuple[int, ...], float] | Callable[[tuple[int, ...]], float],
                      default: float | None = None) -> Tensor:
    """r(o) = table[o] (a mapping from sequence tuples, or a function of the tuple), float64 (N,).

    A sequence missing from a mapping gets ``default``, or raises ValueError when default is None.
    Ties (equal rewards for different outcomes) are allowed and matter: they make zero-variance groups.
    """
    sequences = _sequence_tuples(outcomes)
    if callable(table):
        values = [float(table(seq)) for seq in sequences]
    else:
        missing = [seq for seq in sequences if seq not in table]
        if missing and default is None:
            raise ValueError(f"{len(missing)} outcomes have no reward, e.g. {missing[:3]}; pass default=")
        values = [float(table.get(seq, default)) for seq in sequences]
    rewards = torch.tensor(values, dtype=DTYPE)
    if not torch.isfinite(rewards).all():
        raise ValueError("rewards must be finite")
    return rewards


# == Hypothesis strategies ========================================================================

POLICY_KINDS = ("bandit", "linear", "tabular", "shared")


def policy_strategy(kinds: Sequence[str] = POLICY_KINDS, max_outcomes: int = 9,
                    logit_bound: float = 3.0) -> st.SearchStrategy[EnumerablePolicy]:
    """Hypothesis strategy for small closed-form policies with at most ``max_outcomes`` outcomes.

    kinds: "bandit" (SoftmaxBandit, K = 2..max_outcomes), "linear" (LinearSoftmax, K = 2..max_outcomes,
    d = 1..3, features in [-2, 2]), "tabular" and "shared" (TabularAutoregressive, V^T <= max_outcomes).
    Logits and weights lie in [-logit_bound, logit_bound].
    """
    unknown = set(kinds) - set(POLICY_KINDS)
    if not kinds or unknown:
        raise ValueError(f"kinds must be a non-empty subset of {POLICY_KINDS}, got {tuple(kinds)}")
    if max_outcomes < 2:
        raise ValueError(f"max_outcomes must be >= 2, got {max_outcomes}")
    value = st.floats(-logit_bound, logit_bound, allow_nan=False, allow_subnormal=False)
    shapes = [(v, t) for v in range(2, max_outcomes + 1) for t in range(1, max_outcomes)
              if v ** t <= max_outcomes]

    def values(draw, count: int) -> list[float]:
        return draw(st.lists(value, min_size=count, max_size=count))

    @st.composite
    def policies(draw) -> EnumerablePolicy:
        kind = draw(st.sampled_from(tuple(kinds)))
        if kind == "bandit":
            num_actions = draw(st.integers(2, max_outcomes))
            return SoftmaxBandit(num_actions, logits=values(draw, num_actions))
        if kind == "linear":
            num_actions, dim = draw(st.integers(2, max_outcomes)), draw(st.integers(1, 3))
            feature = st.floats(-2, 2, allow_nan=False, allow_subnormal=False)
            features = draw(st.lists(st.lists(feature, min_size=dim, max_size=dim),
                                     min_size=num_actions, max_size=num_actions))
            return LinearSoftmax(features, weights=values(draw, dim))
        vocab_size, length = draw(st.sampled_from(shapes))
        shared = kind == "shared"
        rows = vocab_size + 1 if shared else sum(vocab_size ** t for t in range(length))
        logits = torch.tensor(values(draw, rows * vocab_size), dtype=DTYPE).reshape(rows, vocab_size)
        return TabularAutoregressive(vocab_size, length, shared=shared, logits=logits)

    return policies()


REWARD_STYLES = ("binary", "continuous", "ties")


def reward_strategy(num_outcomes: int, styles: Sequence[str] = REWARD_STYLES) -> st.SearchStrategy[Tensor]:
    """Hypothesis strategy for a float64 (N,) reward vector over ``num_outcomes`` outcomes.

    "binary": 0/1 rewards; "continuous": floats in [-10, 10]; "ties": values from a pool of 1..3 floats
    (so distinct outcomes share rewards and constant groups are common).
    """
    unknown = set(styles) - set(REWARD_STYLES)
    if not styles or unknown:
        raise ValueError(f"styles must be a non-empty subset of {REWARD_STYLES}, got {tuple(styles)}")

    @st.composite
    def rewards(draw) -> Tensor:
        style = draw(st.sampled_from(tuple(styles)))
        if style == "binary":
            value = st.sampled_from([0.0, 1.0])
        elif style == "continuous":
            value = st.floats(-10, 10, allow_nan=False, allow_subnormal=False)
        else:
            pool = draw(st.lists(st.floats(-10, 10, allow_nan=False, allow_subnormal=False), min_size=1, max_size=3))
            value = st.sampled_from(pool)
        return torch.tensor(draw(st.lists(value, min_size=num_outcomes, max_size=num_outcomes)), dtype=DTYPE)

    return rewards()
