"""The Hypothesis settings every fuzz test shares: deterministic for CI, cheap by default.

FUZZ_EXAMPLES=500 (more examples) and FUZZ_NO_SHRINK=1 (report the first failure as drawn,
which is much faster than shrinking these large objects) make a longer hunt on a workstation.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "30")),
    deadline=None,
    derandomize=True,  # CI sees the same examples on every run
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate]
    if os.environ.get("FUZZ_NO_SHRINK")
    else list(Phase),
    # Generated clusters are big and each example runs a whole app: slow and large by design.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
