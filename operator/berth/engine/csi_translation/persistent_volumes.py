"""An in-tree PersistentVolume's node affinity as its CSI translation has it (upstream
`tryTranslatePVToCSI`, for VolumeBinding).

kube-scheduler's volume binder judges a bound in-tree volume by its translated form when its
plugin's migration is on and the node's CSINode lists the plugin as migrated. What changes
for the node-affinity check is the topology: GCE PD, AWS EBS and Cinder move the zone key
(or the PV's zone label, when the affinity has no zone values) to their driver's topology
key, and a beta region key to the GA one. Azure Disk and Portworx keep the affinity as it
is. A volume the translator refuses (a bad EBS ID, a regional GCE PD over several regions, an
unmanaged Azure disk) makes the check fail with the translator's error.
"""

from __future__ import annotations

from collections.abc import Mapping

from berth.engine.csi_translation.handles import (
    AWS_EBS,
    CINDER,
    GCE_PD,
    MIGRATED_ON_CSI_NODES,
    TranslationError,
    in_tree_plugin_of,
    persistent_volume_handle,
)
from berth.engine.model.csi import CSINode
from berth.engine.model.labels import NodeSelector, NodeSelectorTerm, Operator, Requirement
from berth.engine.model.storage import PersistentVolume

__all__ = ["migrated_on_node", "translate_affinity", "translated_affinity"]

_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE_SEPARATOR = "__"  # how a multi-zone PV label lists its zones

_TOPOLOGY_KEYS = {
    GCE_PD: "topology.gke.io/zone",
    AWS_EBS: "topology.ebs.csi.aws.com/zone",
    CINDER: "topology.cinder.csi.openstack.org/zone",
}


def migrated_on_node(plugin: str, csi_node: CSINode | None) -> bool:
    """The scheduler translates `plugin`'s volumes for this node: migration is on for the
    plugin and the CSINode's migrated-plugins annotation names it."""
    if plugin not in MIGRATED_ON_CSI_NODES or csi_node is None:
        return False
    return plugin in csi_node.migrated_plugins.split(",")


def _expressions(affinity: NodeSelector | None) -> list[Requirement]:
    if affinity is None:
        return []
    return [requirement for term in affinity.terms for requirement in term.expressions]


def _values(affinity: NodeSelector | None, key: str) -> set[str]:
    return {value for r in _expressions(affinity) if r.key == key for value in r.values}


def _zone_and_region_keys(
    affinity: NodeSelector | None, labels: Mapping[str, str]
) -> tuple[str, str]:
    """GA or beta keys: whichever zone key the affinity uses, else the PV's labels, else GA."""
    keys = {r.key for r in _expressions(affinity)}
    for zone, region in ((_ZONE, _REGION), (_BETA_ZONE, _BETA_REGION)):
        if zone in keys:
            return zone, region
    for zone, region in ((_ZONE, _REGION), (_BETA_ZONE, _BETA_REGION)):
        if zone in labels:
            return zone, region
    return _ZONE, _REGION


def _rename_key(affinity: NodeSelector, old: str, new: str) -> NodeSelector:
    def renamed(term: NodeSelectorTerm) -> NodeSelectorTerm:
        expressions = tuple(
            Requirement(new, r.operator, r.values) if r.key == old else r for r in term.expressions
        )
        return NodeSelectorTerm(expressions, term.fields, term.valid)

    return NodeSelector(tuple(renamed(term) for term in affinity.terms))


def _with_zones(affinity: NodeSelector | None, key: str, label: str) -> NodeSelector | None:
    """Every term (or one new term) also requires one of the label's zones; an affinity is
    left alone when the label names no zone."""
    zones = frozenset(zone.strip() for zone in label.split(_ZONE_SEPARATOR)) - {""}
    if not zones:
        return affinity
    required = Requirement(key, Operator.IN, zones)
    if affinity is None or not affinity.terms:
        return NodeSelector((NodeSelectorTerm((required,), ()),))
    return NodeSelector(
        tuple(
            NodeSelectorTerm((*term.expressions, required), term.fields, term.valid)
            for term in affinity.terms
        )
    )


def _translated_topology(volume: PersistentVolume, csi_key: str) -> NodeSelector | None:
    affinity = volume.node_affinity
    zone_key, region_key = _zone_and_region_keys(affinity, volume.labels)
    if _values(affinity, zone_key):
        assert affinity is not None  # it has values
        affinity = _rename_key(affinity, zone_key, csi_key)
    elif zone_key in volume.labels:
        affinity = _with_zones(affinity, csi_key, volume.labels[zone_key])
    if region_key == _BETA_REGION and _values(affinity, _BETA_REGION):
        assert affinity is not None
        affinity = _rename_key(affinity, _BETA_REGION, _REGION)
    return affinity


def translate_affinity(volume: PersistentVolume) -> NodeSelector | None:
    """The node affinity of `volume` translated to CSI (a volume of a plugin whose migration
    is on; any other volume keeps its own).

    Raises `TranslationError` with upstream's message when the translator refuses it.
    """
    plugin = in_tree_plugin_of(volume.source)
    if plugin not in MIGRATED_ON_CSI_NODES or volume.source is None:
        return volume.node_affinity
    try:
        persistent_volume_handle(volume.source, volume.labels)
    except TranslationError as problem:
        raise TranslationError(f"could not translate pv: {problem}") from None
    csi_key = _TOPOLOGY_KEYS.get(plugin)
    return volume.node_affinity if csi_key is None else _translated_topology(volume, csi_key)


def translated_affinity(volume: PersistentVolume, csi_node: CSINode | None) -> NodeSelector | None:
    """The node affinity VolumeBinding checks `volume` against on the node of `csi_node`:
    the translated one where the volume's plugin is migrated there, else its own.

    Raises `TranslationError` (see `translate_affinity`).
    """
    plugin = in_tree_plugin_of(volume.source)
    if plugin is None or not migrated_on_node(plugin, csi_node):
        return volume.node_affinity
    return translate_affinity(volume)
