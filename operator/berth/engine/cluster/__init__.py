"""The cluster as the engine sees it: nodes in a structure-of-arrays table, pods indexed for affinity and spread.

`ClusterState` is mutated incrementally (add/update/remove node or pod) by the
cache or the simulator and read by plugins during one decision. Nothing here
is recomputed per pod that can be kept up to date per change instead.
"""

from berth.engine.cluster.state import ClusterState, NodeSlots
from berth.engine.cluster.workloads import Workload

__all__ = ["ClusterState", "NodeSlots", "Workload"]
