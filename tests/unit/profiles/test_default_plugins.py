"""The default multiPoint list is kube-scheduler v1.37's, in its order and with its weights."""

from __future__ import annotations

from berth.engine.registry import IN_TREE
from berth.profiles import DEFAULT_MULTI_POINT

# What `kube-scheduler --write-config-to` writes for v1.37.2 (apis/config/v1/default_plugins.go
# inserts DynamicResources, weight 2, before DefaultPreemption: its feature gate is on).
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


def test_default_multi_point_is_kube_schedulers_list() -> None:
    assert [(ref.name, ref.weight) for ref in DEFAULT_MULTI_POINT.enabled] == KUBE_SCHEDULER_V1_37


def test_every_default_plugin_is_registered() -> None:
    assert {ref.name for ref in DEFAULT_MULTI_POINT.enabled} <= IN_TREE.names()
