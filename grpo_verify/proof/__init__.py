"""The derivation engine: named results whose steps the kernel checks, and their reports."""

from grpo_verify.proof.build import as_written, computation
from grpo_verify.proof.catalog import Remark
from grpo_verify.proof.definedness import KernelError
from grpo_verify.proof.matrices import MatrixRank
from grpo_verify.proof.result import (
    Assumption,
    ForEach,
    Induction,
    MinimumAt,
    Result,
    ResultReport,
    Step,
    StepReport,
)
from grpo_verify.proof.status import Status

__all__ = ["Assumption", "ForEach", "Induction", "MinimumAt", "KernelError", "MatrixRank", "Remark", "Result", "ResultReport", "Status", "Step", "StepReport",
           "as_written", "computation"]
