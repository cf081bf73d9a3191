"""The derivation engine: named results whose steps SymPy checks, and their reports."""

from grpo_verify.proof.build import as_written, computation
from grpo_verify.proof.catalog import Remark
from grpo_verify.proof.result import (
    Assumption,
    ForEach,
    Result,
    ResultReport,
    Status,
    Step,
    StepReport,
)

__all__ = ["Assumption", "ForEach", "Remark", "Result", "ResultReport", "Status", "Step", "StepReport", "as_written",
           "computation"]
