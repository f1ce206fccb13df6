"""Test-wide settings: every property test is deterministic and timing-independent.

Hypothesis draws its examples from a fixed seed (``derandomize``), so a run on CI tests
exactly what a run here tested, and neither a deadline nor the "too slow" health check
can fail a test because the machine is loaded. Loaded before the test modules are
imported, so their own ``settings(...)`` objects inherit it.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "perceptrons",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("perceptrons")
