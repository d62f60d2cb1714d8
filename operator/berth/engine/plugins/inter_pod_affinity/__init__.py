"""InterPodAffinity: required pod (anti-)affinity as a filter, preferred terms and symmetry as a score.

`filtering` holds PreFilter/Filter, `scoring` PreScore/Score/NormalizeScore, `queueing`
the hints; `plugin` ties them to the extension points and validates the args.
"""

from berth.engine.plugins.inter_pod_affinity.filtering import (
    REASON_AFFINITY_RULES_NOT_MATCH,
    REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from berth.engine.plugins.inter_pod_affinity.plugin import (
    InterPodAffinity,
    InterPodAffinityArgs,
    new_plugin,
)

__all__ = [
    "REASON_AFFINITY_RULES_NOT_MATCH",
    "REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "new_plugin",
]
