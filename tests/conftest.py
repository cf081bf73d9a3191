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

