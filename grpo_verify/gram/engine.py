"""``rollout_gram``: the R x R Gram matrix K = G G^T of per-rollout score vectors over all
parameters, from ONE batched forward + backward of sum_i l_i, without materialising G.

Forward hooks on every module that owns trainable parameters keep the module's inputs; tensor
hooks on its outputs receive the output gradients Delta. Because l_j does not depend on rollout
i's row for j != i, rollout i's slice of Delta is exactly dl_i/d(output): the batched backward
yields every rollout's per-rollout output gradients at once. A per-layer-type rule
(:mod:`grpo_verify.gram.layers`) turns them into per-rollout contributions and
:mod:`grpo_verify.gram.contract` contracts them (ghost or materialised, chunked; products in the
model's dtype, K summed in float64) as soon as every use of the parameter has its gradient, so
activations are dropped early.

By default the backward does NOT compute the batch's parameter gradients (the parameters are
frozen for the pass and the roots of the graph - e.g. the input-embedding output - made to
require grad); only activation gradients flow, which the Gram needs. Parameters that were not
trainable (requires_grad False) are not part of theta and are skipped.

The backward differentiates with respect to the engine's roots AND every other leaf requiring grad
that the objectives reach (:func:`_foreign_leaves`): a frozen module the engine does not hook can
output such a leaf (PEFT's / transformers' ``enable_input_require_grads`` on a frozen input embedding,
LoRA's setting under gradient checkpointing); everything downstream of it then already requires grad,
so no hooked output becomes a root, and only that leaf connects the graph to a differentiation input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Mapping

import torch
from torch import nn

from grpo_verify.svd import singular_values

from . import contract
from .contract import Factor
from .layers import exact_fallback, find_rule, tensor_outputs
from .loss import completion_weights, default_constant, position_ids_from_mask, rollout_objectives

GroupSpec = str | Callable[[str], str] | None
_ADVANTAGES = object()  # the label of ``advantages`` among the weight vectors
_LAYER = re.compile(r"^(.*?\.?layers\.\d+)\.")


def group_of(name: str, spec: GroupSpec) -> str:
    """Group label of a parameter name: "parameter" (itself), "module" (owning module),
    "layer" (the transformer block ``...layers.N``, else the owning module), "type" (the name
    with ``layers.N.`` removed, e.g. ``self_attn.q_proj.weight``: one group per kind of
    parameter across blocks), or a callable."""
    if callable(spec):
        return spec(name)
    if spec == "parameter":
        return name
    if spec == "module":
        return name.rsplit(".", 1)[0] if "." in name else name
    if spec == "layer":
        match = _LAYER.match(name)
        return match.group(1) if match else (name.rsplit(".", 1)[0] if "." in name else name)
    if spec == "type":
        return re.sub(r"^(.*?\.?)layers\.\d+\.", "", name)
    raise ValueError(f"groups must be None, 'parameter', 'module', 'layer', 'type' or a callable, got {spec!r}")


@dataclass
class GramResult:
    """K (R x R, float64) = G G^T over all trainable parameters; ``per_parameter`` holds each
    parameter's own Gram matrix (they sum to K); ``groups`` those summed per group."""

    K: torch.Tensor
    per_parameter: dict[str, torch.Tensor]
    objectives: torch.Tensor
    groups: dict[str, torch.Tensor] | None = None
    strategies: dict[str, str] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)
    grpo_gradients: dict[str, torch.Tensor] | None = None
    singular_values: dict[str, torch.Tensor] | None = None
    weighted_gradients: dict[str, dict[str, torch.Tensor]] | None = None
    weighted_singular_values: dict[str, dict[str, torch.Tensor]] | None = None

    def grouped(self, spec: GroupSpec) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        for name, k in self.per_parameter.items():
            label = group_of(name, spec)
            out[label] = out[label] + k if label in out else k.clone()
        return out

    def rank_metrics(self, relative_tolerance: float | None = None):
        from grpo_verify import rank
        kwargs = {} if relative_tolerance is None else {"relative_tolerance": relative_tolerance}
        return rank.rank_metrics_from_gram(self.K.numpy(), **kwargs)

    def group_rank_metrics(self, spec: GroupSpec = None, relative_tolerance: float | None = None):
        from grpo_verify import rank
        kwargs = {} if relative_tolerance is None else {"relative_tolerance": relative_tolerance}
        grams = self.groups if spec is None and self.groups is not None else self.grouped(spec or "layer")
        return {label: rank.rank_metrics_from_gram(k.numpy(), **kwargs) for label, k in grams.items()}


@dataclass
class _Use:
    module: nn.Module
    inputs: tuple
    outputs: list  # (shape, dtype, device) of each tensor output
    grads: list
    waiting: int
    own: dict  # the module's parameter slots -> id of the trainable parameter they held when the engine started
    done: bool = False


@dataclass
class _Accumulator:
    shape: torch.Size
    open_uses: int = 0
    factors: list = field(default_factory=list)
    dense: torch.Tensor | None = None
    rules: set = field(default_factory=set)


def _detach(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple):
        return tuple(_detach(v) for v in value)
    if isinstance(value, list):
        return [_detach(v) for v in value]
    if isinstance(value, dict):
        return {k: _detach(v) for k, v in value.items()}
    return value


def _unsharded_twin(current, original: torch.Tensor) -> bool:
    """``current`` is FSDP2's unsharded copy of the sharded ``original``: during a forward (and its backward) FSDP2
    puts a plain tensor of the full shape into the module's parameter slot, another object than the DTensor shard
    that ``named_parameters`` showed before."""
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:  # a torch without DTensor has no FSDP2
        return False
    return (isinstance(original, DTensor) and isinstance(current, torch.Tensor) and not isinstance(current, DTensor)
            and current.shape == original.shape)


def _reroot(output, roots: list):
    """Make float tensor outputs that do not require grad into graph roots that do. An output that
    requires grad without a graph behind it (a leaf made by another hook, e.g. transformers'
    ``make_inputs_require_grads`` under gradient checkpointing) is a root too: the engine's own copy."""
    if isinstance(output, torch.Tensor):
        if output.is_floating_point() and (not output.requires_grad or output.grad_fn is None):
            output = output.detach().requires_grad_(True)
            roots.append(output)
        return output
    if isinstance(output, tuple):
        items = tuple(_reroot(o, roots) for o in output)
        return type(output)(*items) if hasattr(output, "_fields") else items  # a namedtuple keeps its type
    if isinstance(output, list):
        return [_reroot(o, roots) for o in output]
    if isinstance(output, dict):  # in place, so a ModelOutput keeps its type and attributes
        for key, value in list(output.items()):
            output[key] = _reroot(value, roots)
    return output


def _foreign_leaves(output: torch.Tensor, roots: list) -> list[torch.Tensor]:
    """The leaves requiring grad that ``output``'s graph reaches, other than ``roots``: tensors made to
    require grad outside the engine (e.g. by a forward hook on a frozen module the engine does not hook,
    such as ``enable_input_require_grads`` on a frozen input embedding). Differentiating with respect to
    them too makes the backward run through every hooked output between them and ``output``; their
    own gradients are discarded (``torch.autograd.grad`` accumulates nothing)."""
    if output.grad_fn is None:
        return []
    own = {id(r) for r in roots}
    seen, stack, leaves = set(), [output.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)  # an AccumulateGrad node: a leaf requiring grad
        if isinstance(variable, torch.Tensor):
            if id(variable) not in own:
                leaves.append(variable)
            continue
        stack.extend(next_node for next_node, _ in node.next_functions)
    return leaves


class _GramEngine:
    def __init__(self, model: nn.Module, rollouts: int, *, weights, dtype, product_dtype, chunk_elements,
                 strategy, unknown, skip_weight_grads):
        self.model = model
        self.rollouts = rollouts
        self.labels = list(weights)
        self.W = torch.stack([weights[k] for k in self.labels]) if weights else None  # (C, R) float64
        self.dtype = dtype
        self.product_dtype = product_dtype
        self.chunk = chunk_elements
        self.strategy = strategy
        self.unknown = unknown
        self.skip = skip_weight_grads
        self.names: dict[int, str] = {}
        self.params: dict[int, nn.Parameter] = {}
        for name, p in model.named_parameters():
            if p.requires_grad:
                self.names[id(p)] = name
                self.params[id(p)] = p
        self.acc = {pid: _Accumulator(shape=p.shape) for pid, p in self.params.items()}
        self.per_parameter: dict[str, torch.Tensor] = {}
        self.strategies: dict[str, str] = {}
        self.weighted: dict[str, dict[str, torch.Tensor]] = {label: {} for label in self.labels}
        self.uses: list[_Use] = []
        self.roots: list[torch.Tensor] = []
        self.handles = []
        self.recomputing = False
        self.owners: list[tuple[nn.Module, dict[str, int]]] = []
        for module in model.modules():
            own = {n: id(p) for n, p in module._parameters.items() if p is not None and id(p) in self.params}
            if not own:
                continue
            if find_rule(module) is None and unknown == "error":
                raise TypeError(f"no Gram rule for {type(module).__name__} (owns {sorted(own)}); register one in "
                                "grpo_verify.gram.layers or pass unknown='exact'")
            self.owners.append((module, own))

    # -- hooks -------------------------------------------------------------------------------
    def __enter__(self):
        if self.skip:
            self.frozen = [p for p in self.params.values()]
            for p in self.frozen:
                p.requires_grad_(False)
        for module, own in self.owners:
            self.handles.append(module.register_forward_hook(partial(self._forward_hook, own=own), with_kwargs=True))
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        if self.skip:
            for p in self.frozen:
                p.requires_grad_(True)
        return False

    def _forward_hook(self, module, args, kwargs, output, *, own):
        if self.recomputing or not torch.is_grad_enabled():
            return None
        output = _reroot(output, self.roots)
        outs = tensor_outputs(output)
        use = _Use(module=module, inputs=(_detach(args), _detach(kwargs)),
                   outputs=[(o.shape, o.dtype, o.device) for o in outs], grads=[None] * len(outs), waiting=0,
                   own=own)
        for k, o in enumerate(outs):
            if o.requires_grad:
                use.waiting += 1
                o.register_hook(partial(self._grad_hook, use=use, k=k))
        for pid in own.values():
            self.acc[pid].open_uses += 1
        self.uses.append(use)
        return output

    def _grad_hook(self, grad, *, use, k):
        use.grads[k] = grad.detach()
        use.waiting -= 1
        if use.waiting == 0:
            self._process(use)
        return None

    # -- contributions -----------------------------------------------------------------------
    def _process(self, use: _Use):
        if use.done:
            return
        use.done = True
        self.uses = [u for u in self.uses if u is not use]
        module = use.module
        grads = [g if g is not None else torch.zeros(s, dtype=d, device=dev)
                 for g, (s, d, dev) in zip(use.grads, use.outputs)]
        rule = find_rule(module)
        self.recomputing = True
        try:
            contributions = (rule or exact_fallback)(module, use.inputs, grads, self.rollouts)
        finally:
            self.recomputing = False
        rule_name = (rule or exact_fallback).__name__
        # a contribution belongs to the parameter its slot held when the engine started: FSDP2 swaps an unsharded
        # copy in for the forward (keyed by the tensor now in the slot, such a use was dropped: a silently wrong K)
        for attr, pid in use.own.items():
            current, started = module._parameters.get(attr), self.params[pid]
            if current is not started and not (rule is not None and _unsharded_twin(current, started)):
                raise RuntimeError(f"the Gram engine: {type(module).__name__}.{attr} ({self.names[pid]}) holds another "
                                   "tensor than when the engine started; refusing a K without its contribution")
        for attr, pid in use.own.items():
            acc = self.acc[pid]
            value = contributions.get(attr)
            if value is not None:
                acc.rules.add(rule_name)
                if isinstance(value, Factor):
                    acc.factors.append(value)
                else:
                    value = value.reshape(self.rollouts, -1)
                    acc.dense = value if acc.dense is None else acc.dense + value
            acc.open_uses -= 1
            if acc.open_uses == 0:
                self._finalise(pid)

    def _finalise(self, pid: int):
        acc = self.acc[pid]
        name = self.names[pid]
        R = self.rollouts
        factors, dense = acc.factors, acc.dense
        K = torch.zeros(R, R, dtype=torch.float64)
        outputs: list[torch.Tensor] = []  # sum_i w_i g_i, one per weighting label
        vectors: list[torch.Tensor] = []
        if factors or dense is not None:
            source = factors[0].b.dtype if factors else dense.dtype
            pdtype = self.product_dtype or contract.product_dtype_of(source)
            adtype = self.dtype or pdtype
            device = factors[0].b.device if factors else dense.device
            if self.W is not None:  # one output per label (no stacked copy that would pin all labels together)
                vectors = list(self.W.to(dtype=pdtype, device=device))
                outputs = [torch.empty(acc.shape, dtype=pdtype, device=device) for _ in self.labels]
        if factors:
            if self.strategy == "auto":
                ghost = sum(contract.ghost_cost(u, v) for a, u in enumerate(factors) for v in factors[a:])
                ghost += len(vectors) * contract.weighted_sum_cost(factors)
                materialise = contract.materialise_cost(factors) + len(vectors) * contract.weighted_block_cost(factors)
                use_ghost = dense is None and ghost < materialise
            else:
                use_ghost = dense is None and self.strategy == "ghost"
            Kp = torch.zeros(R, R, dtype=adtype, device=device)
            if use_ghost:
                self.strategies[name] = "ghost"
                for a, u in enumerate(factors):
                    Kp += contract.ghost_cross(u, u, pdtype, self.chunk, adtype)
                    for v in factors[a + 1:]:
                        cross = contract.ghost_cross(u, v, pdtype, self.chunk, adtype)
                        Kp += cross + cross.T
                for w, out in zip(vectors, outputs):
                    contract.weighted_factor_sum(factors, w, pdtype, out=out.view(factors[0].a_size, -1))
            else:
                self.strategies[name] = "materialise"
                d1 = factors[0].b_size
                extra = None if dense is None else dense.reshape(R, -1, d1)
                rows = [out.view(-1, d1) for out in outputs]
                for r0, r1, block in contract.materialised_rows(factors, pdtype, self.chunk):
                    if extra is not None:
                        block += extra[:, r0:r1].to(pdtype)
                    Kp += contract.row_gram(block.reshape(R, -1), adtype)
                    for w, out in zip(vectors, rows):
                        torch.mm(w[None], block.reshape(R, -1), out=out[r0:r1].view(1, -1))
            K += Kp.to(device="cpu", dtype=torch.float64)
        elif dense is not None:
            self.strategies[name] = "dense"
            K += contract.dense_gram(dense, pdtype, self.chunk, adtype).to(device="cpu", dtype=torch.float64)
            for w, out in zip(vectors, outputs):
                torch.mm(w[None], dense.to(pdtype), out=out.view(1, -1))
        else:
            self.strategies[name] = "unused"
        if self.W is not None:
            if not outputs:  # an unused parameter
                dtype = self.product_dtype or contract.product_dtype_of(self.params[pid].dtype)
                outputs = [torch.zeros(acc.shape, dtype=dtype) for _ in self.labels]
            for label, g in zip(self.labels, outputs):
                self.weighted[label][name] = g
        self.per_parameter[name] = K
        acc.factors, acc.dense = [], None
        acc.open_uses = -1  # finalised

    def flush(self):
        for use in list(self.uses):
            self._process(use)
        for pid, acc in self.acc.items():
            if acc.open_uses >= 0:
                self._finalise(pid)

    def release(self):
        """Drop every tensor the engine holds. Its hooks on the autograd graph keep the engine in a
        reference cycle that only Python's cycle collector frees, possibly many GB later (a run
        holding weighted gradients was killed for memory that way)."""
        self.uses, self.roots, self.acc = [], [], {}
        self.per_parameter, self.weighted, self.params = {}, {}, {}
        self.W = None


def rollout_gram(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                 completion_start=0, aggregation: str = "mean", groups: GroupSpec = None, *,
                 constant: float | None = None, advantages=None, weightings: Mapping | None = None,
                 singular_values: bool = False,
                 accumulate_dtype: torch.dtype | None = torch.float64, product_dtype: torch.dtype | None = None,
                 strategy: str = "auto",
                 chunk_elements: int = 1 << 24, unknown: str = "exact",
                 skip_weight_grads: bool = True) -> GramResult:
    """Gram matrix K_ij = <g_i, g_j> of the per-rollout score vectors g_i = grad_theta l_i over
    every trainable parameter of ``model`` (a causal LM returning ``.logits``), from one batched
    forward + backward.

    ``input_ids``/``attention_mask`` (R x L; left or right padding), ``completion_start`` (scalar
    or per rollout, an index into the padded row) and ``aggregation`` ("mean", "sum",
    "constant" with ``constant``, default the padded completion length) define l_i
    (:mod:`grpo_verify.gram.loss`). Positions are counted over real tokens.

    ``groups``: also return K restricted to parameter groups (see :func:`group_of`).
    ``advantages`` (R,): also return each parameter's GRPO gradient sum_i A_i g_i (in the
    parameter's shape; ``singular_values`` adds those of every 2-D one). ``weightings`` ({label:
    (R,) vector w}): the same for each w, in ``weighted_gradients[label]`` (and
    ``weighted_singular_values[label]``), from the same pass: a weighting costs one contraction of
    the materialised per-rollout products, or one GEMM per rollout and factor in the ghost form
    ("auto" counts it when choosing), not another backward. Every weighted gradient is held until the
    call returns: C x (number of parameters) values in the product dtype, on the model's device.
    ``product_dtype``: dtype of the per-rollout gradient products (materialised Delta_i^T X_i,
    ghost inner products) and of the GRPO gradients; None: the model's, float32 for half
    precision (what autograd computes a weight gradient in). ``accumulate_dtype``: dtype in which
    the dot products of K are summed (None: the product dtype); float32 products are summed in
    blocks of 128 and the blocks in float64 (:func:`grpo_verify.gram.contract.row_gram`). ``strategy``: "auto"
    (per parameter, the cheaper of ghost and materialised), "ghost" or "materialise".
    ``chunk_elements`` bounds intermediates. ``unknown``: "exact" (per-rollout re-run of modules
    without a rule) or "error". ``skip_weight_grads``: do not compute the batch gradient.
    """
    if strategy not in ("auto", "ghost", "materialise"):
        raise ValueError(f"strategy must be 'auto', 'ghost' or 'materialise', got {strategy!r}")
    if unknown not in ("exact", "error"):
        raise ValueError(f"unknown must be 'exact' or 'error', got {unknown!r}")
    rollouts, _ = input_ids.shape
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    if aggregation == "constant" and constant is None:
        constant = default_constant(input_ids, completion_start)
    weights = completion_weights(attention_mask, completion_start, aggregation, constant).to(input_ids.device)
    vectors = {}
    named = ([(_ADVANTAGES, advantages)] if advantages is not None else []) + list((weightings or {}).items())
    for label, value in named:
        vector = torch.as_tensor(value, dtype=torch.float64).reshape(-1)
        if vector.shape != (rollouts,):
            what = "advantages" if label is _ADVANTAGES else f"weighting {label!r}"
            raise ValueError(f"{what} must have shape ({rollouts},), got {tuple(vector.shape)}")
        vectors[label] = vector
    engine = _GramEngine(model, rollouts, weights=vectors, dtype=accumulate_dtype, product_dtype=product_dtype,
                         chunk_elements=chunk_elements,
                         strategy=strategy, unknown=unknown, skip_weight_grads=skip_weight_grads)
    try:
        with engine, torch.enable_grad():
            out = model(input_ids=input_ids, attention_mask=attention_mask,
                        position_ids=position_ids_from_mask(attention_mask), use_cache=False)
            objectives = rollout_objectives(out.logits, input_ids, weights)
            del out
            if not bool(torch.isfinite(objectives).all()):
                raise FloatingPointError(
                    f"non-finite rollout objectives {objectives.tolist()}: the model's forward produced NaN/inf "
                    "(e.g. transformers' eager attention in float64 with left padding turns fully masked pad rows "
                    "into NaN, which then leaks through 0 * NaN)")
            # the engine's roots and any other leaf requiring grad behind the objectives (see _foreign_leaves)
            targets = ([*engine.roots, *_foreign_leaves(objectives, engine.roots)] if skip_weight_grads
                       else list(engine.params.values()))
            used = any(acc.open_uses > 0 for acc in engine.acc.values())
            if used and not (objectives.requires_grad and targets):
                # fail closed: the forward used trainable parameters, and without a backward their K would be an
                # exact, silent zero (a parameter the forward never reads has score 0: K = 0 is then right)
                raise RuntimeError("the Gram engine found no graph root to differentiate from (no module output "
                                   "became a root and the objectives do not require grad): refusing to return "
                                   "K = 0 for parameters the forward used")
            if objectives.requires_grad and targets:
                torch.autograd.grad(objectives.sum(), targets, allow_unused=True)
            engine.flush()
        per_parameter = {engine.names[pid]: engine.per_parameter[engine.names[pid]] for pid in engine.params}
        K = torch.zeros(rollouts, rollouts, dtype=torch.float64)
        for k in per_parameter.values():
            K += k
        rules = {engine.names[pid]: ",".join(sorted(a.rules)) or "none" for pid, a in engine.acc.items()}
        result = GramResult(K=K, per_parameter=per_parameter, objectives=objectives.detach().to(torch.float64).cpu(),
                            strategies=dict(engine.strategies), rules=rules)
        if groups is not None:
            result.groups = result.grouped(groups)
        if advantages is not None:
            result.grpo_gradients = engine.weighted.pop(_ADVANTAGES)
            if singular_values:
                result.singular_values = matrix_singular_values(result.grpo_gradients)
        if weightings is not None:
            result.weighted_gradients = dict(engine.weighted)
            if singular_values:
                result.weighted_singular_values = {label: matrix_singular_values(grads)
                                                   for label, grads in result.weighted_gradients.items()}
    finally:
        engine.release()
    return result


def matrix_singular_values(gradients: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Singular values (float64) of every 2-D gradient (:func:`grpo_verify.svd.singular_values`: no weight-sized
    float64 copy)."""
    return {n: singular_values(g) for n, g in gradients.items() if g.ndim == 2}


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """||a - b||_F / ||b||_F (0 when both are 0)."""
    a64, b64 = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    denom = float(torch.linalg.norm(b64))
    num = float(torch.linalg.norm(a64 - b64))
    return num / denom if denom > 0 else num

