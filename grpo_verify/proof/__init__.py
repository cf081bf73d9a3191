"""The derivation engine: named results whose steps the kernel's rules check, and their reports.

The kernel (the trusted base): ``terms``, ``arith``, ``definedness``, ``theorem`` and the rules in
``rules/``. Everything else here (``result``, ``check``, ``catalog``, ``build``) only asks the kernel.
"""

from grpo_verify.proof import rules
from grpo_verify.proof.build import as_written, computation
from grpo_verify.proof.catalog import Remark
from grpo_verify.proof.operators import Expectation, IidExpectation, MatrixRank, SquareMatrix
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
from grpo_verify.proof.terms import KernelError

__all__ = ["Assumption", "Expectation", "ForEach", "IidExpectation", "Induction", "MinimumAt", "KernelError",
           "MatrixRank", "Remark", "Result", "ResultReport", "SquareMatrix", "Status", "Step", "StepReport",
           "as_written", "computation", "rules"]
