import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent / "support"))  # the helpers every layer's tests share: tiny models, strategies, fixtures
sys.path.append(str(Path(__file__).parents[1] / "benchmarks"))  # as for a benchmark run as a script: its sibling helpers (ratios.py) import

settings.register_profile("default", deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture
def witness():
    from attncoda.math.synthetic import witness

    return witness()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
