"""Hypothesis profiles: ``ci`` (default, fast), ``dev`` and ``thorough``.

Choose one with the environment variable ``GRPO_VERIFY_HYPOTHESIS`` (e.g.
``GRPO_VERIFY_HYPOTHESIS=thorough pytest``).
"""

import os
import tempfile
from pathlib import Path

import pytest

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])

PROFILE = os.environ.get("GRPO_VERIFY_HYPOTHESIS", "ci")
if PROFILE not in ("ci", "dev", "thorough"):
    raise ValueError(f"GRPO_VERIFY_HYPOTHESIS={PROFILE!r}: choose one of ci, dev, thorough")
settings.load_profile(PROFILE)


@pytest.fixture
def locked_folder(tmp_path, monkeypatch):
    """A folder in which no file can be created: chmod 0500, or, where that does not bind (root writes
    through permission bits), creation refused there as on a read-only mount."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    if os.access(folder, os.W_OK):
        folder.chmod(0o700)
        real = tempfile.NamedTemporaryFile

        def refusing(*args, dir=None, **kwargs):
            if dir is not None and Path(dir).resolve() == folder.resolve():
                raise OSError(30, "Read-only file system")
            return real(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "NamedTemporaryFile", refusing)
    return folder



# -- parallel runs (pytest-xdist; `-n auto` is in the default options) ---------------------------------------------
def pytest_configure(config):
    """One torch thread per core in each xdist worker: torch's default (every core) in every worker oversubscribes
    the CPU, and on a 2-core machine that slows BLAS calls several-fold. OMP_NUM_THREADS, when set, wins."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and "OMP_NUM_THREADS" not in os.environ:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workers)))


# Work units of a parallel run (our own scheduler: xdist's loadgroup reads markers through a node id that pytest 9
# no longer lets it change). A module whose tests share a module-scoped fixture (a trained TRL run, a compiled Coq
# tree) is one unit, so the fixture is built once per run, not once per worker; the tests that read the whole
# catalogue's kernel reports are one unit, so each result is checked once (the reports, and the evaluator's verdicts
# that the check computes and the evaluator's own test reads, are cached per process);
# every other module is cut into a few units, handed out as workers free up.
SHARED_FIXTURE_MODULES = ("test_coq.py", "test_empirical.py", "test_measure.py", "test_oracle.py",
                          "test_properties.py", "test_synthetic.py", "test_trl_callback.py", "test_trl_callback_lora.py",
                          "test_trl_callback_matrix.py", "test_trl_callback_refusals.py", "test_trl_crosscheck.py",
                          "test_trl_callback_behaviours.py")
CATALOGUE_UNIT = ("tests/test_derivations.py::test_derivation_is_proved",
                  "tests/test_derivations.py::test_the_evaluator_finds_every_result_true_at_small_sizes",
                  "tests/test_render.py::test_every_derivation",
                  "tests/test_render.py::test_document_compiles_to_pdf",
                  # its workers check in fresh processes, but it compares them with this process's reports of D1
                  "tests/test_render.py::test_worker_processes_report_what_this_process_checks",
                  "tests/test_entry_points.py::")
UNITS_PER_MODULE = 4


def work_unit(nodeid: str) -> str:
    """The work unit of a test (see above)."""
    import zlib

    module = nodeid.split("::", 1)[0]
    if module.rsplit("/", 1)[-1] in SHARED_FIXTURE_MODULES:
        return module
    if nodeid.startswith(CATALOGUE_UNIT):
        return "the catalogue's kernel reports"
    return f"{module}@{zlib.crc32(nodeid.encode()) % UNITS_PER_MODULE}"


# The longest units, handed out first (measured with --durations on the 2-core machine at the start of 2026-12-04:
# 208, 98, 55, 37, 27 s of about 770 s in all). xdist otherwise orders units by their number of tests, so the Coq unit (21 tests, 98 s) and
# the TRL callback's (9 tests, 37 s) started last and set the run's wall time, one worker idle meanwhile.
LONGEST_UNITS = ("the catalogue's kernel reports", "tests/test_coq.py", "tests/test_trl_callback.py",
                 "tests/test_empirical.py", "tests/test_trl_callback_refusals.py", "tests/test_trl_callback_matrix.py")


_RANK = {unit: n for n, unit in enumerate(LONGEST_UNITS)}


class _LongestFirst(dict):
    """xdist's queue of work units (it takes the next with ``popitem(last=False)``): the units of LONGEST_UNITS
    first, in that order, then the others in xdist's own order."""

    def popitem(self, last: bool = True):
        if last:
            raise NotImplementedError("the work queue is taken from its front only")
        unit = min(self, key=lambda u: _RANK.get(u, len(LONGEST_UNITS)))  # min keeps the first of equal ranks
        return unit, self.pop(unit)


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            self.workqueue = _LongestFirst()

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnits(config, log)
