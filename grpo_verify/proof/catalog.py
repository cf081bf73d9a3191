"""The catalogue of derivations: every ``Result`` of every module in ``grpo_verify.derivations``.

Derivation modules are named ``dN_<family>`` (e.g. ``d4_zero_sum``) and read top to bottom; their
results are collected in definition order.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType

from grpo_verify.proof.result import Result


@dataclass(frozen=True)
class Family:
    """One derivation module: a claim family such as D4 (zero-sum advantages)."""

    key: str  # "d4_zero_sum"
    label: str  # "D4"
    title: str  # first line of the module docstring
    text: str  # the rest of the module docstring
    results: tuple[Result, ...]
    remarks: tuple["Remark", ...]


@dataclass(frozen=True)
class Remark:
    """Prose that belongs to the proof but is not a checked statement: scope, what is left open."""

    name: str
    text: str


def _module_family(module: ModuleType) -> Family:
    key = module.__name__.rsplit(".", 1)[-1]
    doc = (module.__doc__ or "").strip()
    if not doc:
        raise ValueError(f"derivation module {key} needs a docstring stating its claim family")
    title, _, text = doc.partition("\n")
    results, remarks, seen = [], [], set()
    for value in vars(module).values():
        # results imported from another family (to cite them) belong to that family, not this one
        if isinstance(value, Result) and value.defined_in == module.__name__ and id(value) not in seen:
            seen.add(id(value))
            value.family = key
            results.append(value)
        elif isinstance(value, Remark):
            remarks.append(value)
    return Family(key, key.split("_", 1)[0].upper(), title.strip(), text.strip(), tuple(results), tuple(remarks))


def families() -> list[Family]:
    """Every derivation family, in order D1, D2, ..."""
    import grpo_verify.derivations as package

    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: _order(m.name)):
        if info.name.startswith("d") and info.name[1:2].isdigit():
            found.append(_module_family(importlib.import_module(f"{package.__name__}.{info.name}")))
    names = [r.name for f in found for r in f.results]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"result names must be unique across derivations; repeated: {duplicates}")
    return found


def _order(name: str) -> tuple[int, str]:
    digits = "".join(ch for ch in name[1:].split("_", 1)[0] if ch.isdigit())
    return (int(digits) if digits else 10**6, name)


def all_results() -> list[Result]:
    return [r for f in families() for r in f.results]


def result(name: str) -> Result:
    for r in all_results():
        if r.name == name:
            return r
    raise KeyError(f"no derivation result named {name!r}")
