"""Hypothesis profiles: ``ci`` (default, fast), ``dev`` and ``thorough``.

Choose one with the environment variable ``GRPO_VERIFY_HYPOTHESIS`` (e.g.
``GRPO_VERIFY_HYPOTHESIS=thorough pytest``).
"""

import os

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
