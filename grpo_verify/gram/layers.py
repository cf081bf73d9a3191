"""Per-layer-type rules, in the style of Opacus' ``grad_sample``: one small function per module
type turns a module's captured input and output gradient into per-rollout contributions for each
parameter it owns.

A rule is ``rule(module, inputs, output_grads, rollouts) -> {parameter name: contribution}`` with
``inputs`` the forward call's (args, kwargs), ``output_grads`` the gradients of the loss w.r.t.
the module's tensor outputs (in output order), and a contribution either a
:class:`~grpo_verify.gram.contract.Factor` or a dense (R x numel) block of per-rollout gradients.

A rule applies to a module only if the module's class *is* the registered class or a subclass
that does not override ``forward`` (a subclass with its own forward, e.g. a LoRA or quantised
Linear, could compute something else). Modules without a rule use :func:`exact_fallback`, which
re-runs the module once per rollout and differentiates it, exact for any module that treats the
rollouts (dim 0 of every batched input and output) independently - or, with
``unknown="error"``, raise.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Callable

import torch
from torch import nn

from .contract import Factor

Rule = Callable[[nn.Module, tuple, list, int], dict]
_RULES: dict[type, Rule] = {}


def register(*types: type) -> Callable[[Rule], Rule]:
    def decorate(rule: Rule) -> Rule:
        for t in types:
            _RULES[t] = rule
        return rule
    return decorate


def _first_input(inputs: tuple) -> torch.Tensor:
    args, kwargs = inputs
    if args:
        return args[0]
    for key in ("input", "hidden_states", "x"):
        if key in kwargs:
            return kwargs[key]
    raise ValueError("could not find the module's input tensor")


def _rows(tensor: torch.Tensor, rollouts: int) -> torch.Tensor:
    """(R, ..., d) -> (R, T, d), T = every position of the rollout."""
    if tensor.shape[0] != rollouts:
        raise ValueError(f"expected the rollout dimension {rollouts} first, got shape {tuple(tensor.shape)}")
    return tensor.reshape(rollouts, -1, tensor.shape[-1])


@register(nn.Linear)
def linear_rule(module: nn.Linear, inputs, output_grads, rollouts):
    x = _rows(_first_input(inputs), rollouts)
    delta = _rows(output_grads[0], rollouts)
    out = {"weight": Factor(a=delta, b=x, a_size=module.out_features)}
    if module.bias is not None:
        out["bias"] = delta.sum(dim=1)
    return out


@register(nn.Embedding)
def embedding_rule(module: nn.Embedding, inputs, output_grads, rollouts):
    if module.max_norm is not None or module.scale_grad_by_freq or module.sparse:
        raise NotImplementedError("Embedding with max_norm, scale_grad_by_freq or sparse is not supported")
    ids = _first_input(inputs).reshape(rollouts, -1)
    delta = _rows(output_grads[0], rollouts)
    if module.padding_idx is not None:  # autograd gives the padding row no gradient
        delta = delta * (ids != module.padding_idx).unsqueeze(-1).to(delta.dtype)
    return {"weight": Factor(a=ids, b=delta, a_size=module.num_embeddings)}


@register(nn.LayerNorm)
def layer_norm_rule(module: nn.LayerNorm, inputs, output_grads, rollouts):
    x = _first_input(inputs)
    dims = len(module.normalized_shape)
    xhat = torch.nn.functional.layer_norm(x, module.normalized_shape, None, None, module.eps)
    delta = output_grads[0]
    out = {}
    if module.weight is not None:
        out["weight"] = (delta * xhat).reshape(rollouts, -1, *x.shape[x.ndim - dims:]).sum(1).reshape(rollouts, -1)
    if module.bias is not None:
        out["bias"] = delta.reshape(rollouts, -1, *x.shape[x.ndim - dims:]).sum(1).reshape(rollouts, -1)
    return out


def llama_rms_norm_rule(module: nn.Module, inputs, output_grads, rollouts):
    """y = w * xhat with xhat = (x / rms(x), computed in float32) cast back to x's dtype, so
    dl/dw = sum over positions of delta * xhat, per rollout."""
    x = _first_input(inputs)
    h = x.to(torch.float32)
    xhat = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + module.variance_epsilon)).to(x.dtype)
    grad = output_grads[0] * xhat
    return {"weight": _rows(grad, rollouts).sum(dim=1)}


def _normalised_source(cls: type) -> str:
    return textwrap.dedent(inspect.getsource(cls.forward))


_LLAMA_RMS_SOURCE: str | None = None


def _is_llama_rms_norm(cls: type) -> bool:
    """A class whose forward is, character for character, LlamaRMSNorm's (Mistral, Qwen2, ... copy it)."""
    global _LLAMA_RMS_SOURCE
    if not cls.__name__.endswith("RMSNorm"):
        return False
    try:
        if _LLAMA_RMS_SOURCE is None:
            from transformers.models.llama.modeling_llama import LlamaRMSNorm
            _LLAMA_RMS_SOURCE = _normalised_source(LlamaRMSNorm)
        return _normalised_source(cls) == _LLAMA_RMS_SOURCE
    except (ImportError, OSError, TypeError):
        return False


def gemma3_rms_norm_rule(module: nn.Module, inputs, output_grads, rollouts):
    """Gemma3RMSNorm: y = (xhat * (1 + w.float())).type_as(x), xhat = x / rms(x) computed in float32,
    so dl/dw = sum over positions of float32(delta) * xhat, in float32 (as autograd computes it),
    cast to w's dtype; the 1 in (1 + w) shifts y, not dy/dw."""
    x = _first_input(inputs)
    h = x.float()
    xhat = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + module.eps)
    grad = output_grads[0].float() * xhat
    return {"weight": _rows(grad, rollouts).sum(dim=1).to(module.weight.dtype)}


def gemma3_scaled_embedding_rule(module: nn.Module, inputs, output_grads, rollouts):
    """Gemma3TextScaledWordEmbedding: y = embedding(ids, W) * embed_scale (cast to W's dtype), so
    the nn.Embedding rule with delta * embed_scale."""
    scaled = [output_grads[0] * module.embed_scale.to(module.weight.dtype)] + list(output_grads[1:])
    return embedding_rule(module, inputs, scaled, rollouts)


# rules for classes of optional packages, registered once their module has been imported (a
# model of that class exists then); values: (class name, rule, methods a subclass must not override)
_LAZY: dict[str, list[tuple[str, Rule, tuple[str, ...]]]] = {
    "transformers.models.gemma3.modeling_gemma3": [
        ("Gemma3RMSNorm", gemma3_rms_norm_rule, ("forward", "_norm")),
        ("Gemma3TextScaledWordEmbedding", gemma3_scaled_embedding_rule, ("forward",)),
    ],
}
_FIXED: dict[type, tuple[str, ...]] = {}  # registered class -> methods a subclass must inherit unchanged


def _register_lazy() -> None:
    """Register the rules of the optional modules imported so far. Asked on every lookup, never crossed off: a
    registration made while ``_RULES`` was a temporary copy (a test's) must not be lost with the copy."""
    import sys
    for module_name, entries in _LAZY.items():
        if module_name not in sys.modules:
            continue
        for class_name, rule, fixed in entries:
            cls = getattr(sys.modules[module_name], class_name, None)
            if cls is not None and cls not in _RULES:
                _RULES[cls] = rule
                _FIXED[cls] = fixed


def find_rule(module: nn.Module) -> Rule | None:
    cls = type(module)
    _register_lazy()
    if cls in _RULES:
        return _RULES[cls]
    for base in cls.__mro__[1:]:
        if base in _RULES:
            same = all(getattr(cls, m, None) is getattr(base, m, None) for m in _FIXED.get(base, ("forward",)))
            return _RULES[base] if same else None
    if _is_llama_rms_norm(cls):
        _RULES[cls] = llama_rms_norm_rule
        return llama_rms_norm_rule
    return None


def rule_name(module: nn.Module) -> str:
    rule = find_rule(module)
    return rule.__name__ if rule is not None else "exact_fallback"


def _slice(value, i: int, rollouts: int):
    if isinstance(value, torch.Tensor) and value.ndim >= 1 and value.shape[0] == rollouts:
        return value[i:i + 1]
    if isinstance(value, tuple):
        return tuple(_slice(v, i, rollouts) for v in value)
    if isinstance(value, list):
        return [_slice(v, i, rollouts) for v in value]
    if isinstance(value, dict):
        return {k: _slice(v, i, rollouts) for k, v in value.items()}
    return value


def tensor_outputs(output) -> list[torch.Tensor]:
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (tuple, list)):
        return [o for item in output for o in tensor_outputs(item)]
    if isinstance(output, dict):
        return [o for item in output.values() for o in tensor_outputs(item)]
    return []


def exact_fallback(module: nn.Module, inputs, output_grads, rollouts):
    """Exact per-rollout gradients of the module's own parameters: re-run the module on rollout
    i's slice of every batched input and pull rollout i's slice of the output gradients back.
    Exact whenever the module maps rollout i's inputs to rollout i's outputs alone."""
    names = [n for n, p in module.named_parameters(recurse=False) if p is not None]
    params = dict(module.named_parameters(recurse=False))
    args, kwargs = inputs
    result = {n: torch.zeros(rollouts, params[n].numel(), dtype=params[n].dtype, device=params[n].device)
              for n in names}
    for i in range(rollouts):
        local = {n: params[n].detach().requires_grad_(True) for n in names}
        with torch.enable_grad():
            out = torch.func.functional_call(module, local, _slice(args, i, rollouts), _slice(kwargs, i, rollouts))
            outs = tensor_outputs(out)
            pairs = [(o, g[i:i + 1]) for o, g in zip(outs, output_grads) if g is not None and o.requires_grad]
            if not pairs:
                continue
            grads = torch.autograd.grad([o for o, _ in pairs], [local[n] for n in names],
                                        grad_outputs=[g for _, g in pairs], allow_unused=True)
        for n, g in zip(names, grads):
            if g is not None:
                result[n][i] = g.reshape(-1)
    return result
