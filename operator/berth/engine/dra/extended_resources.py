"""Which DeviceClass stands behind an extended resource name (DRAExtendedResource).

A pod may ask for devices through ordinary container resources: a class serves the name
in its `spec.extendedResourceName` and, implicitly, `deviceclass.resource.kubernetes.io/
<class name>`. kube-scheduler keeps this map in an informer-fed cache; when two classes
name the same extended resource, the one created first serves it (the smaller name on a
tie). Berth derives the map from the classes it holds, with the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from berth.engine.dra.classes import DeviceClass
from berth.engine.model.resources import DEVICE_CLASS_RESOURCE_PREFIX

__all__ = ["RequestMapping", "classes_by_extended_resource", "implicit_resource_name"]


def implicit_resource_name(class_name: str) -> str:
    return DEVICE_CLASS_RESOURCE_PREFIX + class_name


def classes_by_extended_resource(classes: Mapping[str, DeviceClass]) -> dict[str, DeviceClass]:
    """Resource name -> the class that serves it."""
    served: dict[str, DeviceClass] = {}
    # Oldest first, so that the first class to claim an explicit name keeps it.
    for device_class in sorted(
        classes.values(), key=lambda item: (item.creation_timestamp, item.name)
    ):
        explicit = device_class.extended_resource_name
        if explicit is not None:
            served.setdefault(explicit, device_class)
        served[implicit_resource_name(device_class.name)] = device_class
    return served


@dataclass(frozen=True, slots=True)
class RequestMapping:
    """Which device request of the claim serves a container's extended resource.

    kube-scheduler records these in the pod's `status.extendedResourceClaimStatus`.
    """

    container_name: str
    resource_name: str
    request_name: str
