"""NodeVolumeLimits: per-node CSI attach limits (CSINode `allocatable.count`), as kube-scheduler v1.37 counts them."""

from berth.engine.plugins.node_volume_limits.plugin import (
    REASON,
    NodeVolumeLimits,
    driver_not_installed,
    new_plugin,
)

__all__ = ["REASON", "NodeVolumeLimits", "driver_not_installed", "new_plugin"]
