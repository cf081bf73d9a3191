"""The outcome of checking a step or a result."""

from __future__ import annotations

from enum import Enum
from typing import Iterable


class Status(str, Enum):
    """Outcome of checking one step or one result, from strongest to weakest."""

    PROVED = "proved"  # for every admissible value of every symbol
    PROVED_FOR_RANGE = "proved for a range"  # only for each concrete value of one integer symbol
    UNPROVED = "unproved"  # SymPy could not decide; no counterexample found either
    REFUTED = "refuted"  # a counterexample satisfying the assumptions exists

    @property
    def passed(self) -> bool:
        return self in (Status.PROVED, Status.PROVED_FOR_RANGE)


_SEVERITY = {Status.PROVED: 0, Status.PROVED_FOR_RANGE: 1, Status.UNPROVED: 2, Status.REFUTED: 3}


def weakest(statuses: Iterable[Status]) -> Status:
    """The weakest of several statuses (a chain is only as strong as its weakest link)."""
    return max(statuses, key=_SEVERITY.__getitem__, default=Status.PROVED)
