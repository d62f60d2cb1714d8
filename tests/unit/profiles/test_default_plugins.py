"""The default multiPoint list is kube-scheduler v1.37's, in order and with its weights.

The expected list is what `kube-scheduler --write-config-to` writes for v1.37.2; plugins
Berth does not register yet are left out of the comparison (and named, so the gap shows).
"""

from __future__ import annotations

from berth.engine.registry import IN_TREE
from berth.profiles import DEFAULT_MULTI_POINT

KUBE_SCHEDULER_V1_37 = [
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeName", 0),
    ("NodeUnschedulable", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("NodeDeclaredFeatures", 0),
]


def test_the_default_list_is_kube_schedulers_for_the_plugins_berth_has() -> None:
    ours = [(ref.name, ref.weight or 0) for ref in DEFAULT_MULTI_POINT.enabled]
    expected = [(name, weight) for name, weight in KUBE_SCHEDULER_V1_37 if name in IN_TREE]
    assert ours == expected
    missing = {name for name, _ in KUBE_SCHEDULER_V1_37} - IN_TREE.names()
    assert missing <= {"VolumeRestrictions", "NodeVolumeLimits", "VolumeZone"}
