"""Which nodes a bound volume reaches once in-tree volumes are judged in their CSI form.

Upstream's binder translates an in-tree PV to CSI, node by node, where the node's CSINode
lists the volume's plugin as migrated (`tryTranslatePVToCSI`), and checks the translated
node affinity there. The translation itself does not depend on the node, so a batch splits
in two: the nodes that translate (one translated affinity, or one translator error) and
the others (the volume's own affinity).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.storage import StorageObjects
from berth.engine.csi_translation.handles import TranslationError, in_tree_plugin_of
from berth.engine.csi_translation.persistent_volumes import migrated_on_node, translate_affinity
from berth.engine.model.storage import PersistentVolume
from berth.engine.nodematch import volume_node_affinity_mask

__all__ = ["bound_volume_reach"]

Mask = NDArray[np.bool_]


def bound_volume_reach(
    cluster: ClusterState, storage: StorageObjects, volume: PersistentVolume, slots: NodeSlots
) -> tuple[Mask, dict[str, Mask]]:
    """Per slot: the node passes `volume`'s node affinity; and per translator error, the
    nodes where translating the volume failed with it (they neither pass nor fail)."""
    plugin = in_tree_plugin_of(volume.source)
    own = volume_node_affinity_mask(cluster, volume.node_affinity, slots)
    if plugin is None:
        return own, {}
    migrated = np.fromiter(
        (
            migrated_on_node(plugin, storage.csi_node(cluster.node_at(int(slot)).name))
            for slot in slots
        ),
        dtype=bool,
        count=slots.size,
    )
    if not migrated.any():
        return own, {}
    try:
        affinity = translate_affinity(volume)
    except TranslationError as problem:
        return own & ~migrated, {str(problem): migrated}
    translated = volume_node_affinity_mask(cluster, affinity, slots)
    return np.where(migrated, translated, own), {}
