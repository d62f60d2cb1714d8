"""The device requests of a pod's claim for extended resources, and which container uses which.

kube-scheduler turns each container's request of an extended resource DRA must provide on
a node into one ExactCount device request of the serving class, named
`container-<position>-request-<index of the resource among the container's sorted
request names>`. Containers that run together (regular containers and sidecars) each get
their own devices. An init container that runs alone first reuses the devices of the
long-lived containers started after it, and asks only for what they lack; the init
containers' extra requests then collapse into the largest one, since they never run at
the same time. Requests are sorted by name; the mappings list long-lived containers first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.dra.requests import DeviceRequest, RequestSpec
from berth.engine.model.container_resources import ContainerResources
from berth.engine.model.pod import Pod

__all__ = ["claim_requests"]


def _request(name: str, class_name: str, count: int) -> DeviceRequest:
    return DeviceRequest(
        name=name, exactly=RequestSpec(name=name, device_class_name=class_name, count=count)
    )


def _count(request: DeviceRequest) -> int:
    assert request.exactly is not None  # built by `_request`
    return request.exactly.count


def _container_request(
    container: ContainerResources,
    resource: str,
    class_name: str,
    reusable: Sequence[DeviceRequest | None],
) -> tuple[DeviceRequest | None, list[RequestMapping]]:
    """The container's own request of `resource` (None if reused devices suffice)."""
    wanted = container.requests.get(resource, 0)
    if wanted == 0:
        return None, []
    mappings: list[RequestMapping] = []
    covered = 0
    for other in reusable:
        if other is None:
            continue
        covered += _count(other)
        mappings.append(RequestMapping(container.name, resource, other.name))
        if covered >= wanted:
            return None, mappings
    position = sorted(container.requests).index(resource)
    name = f"container-{container.index}-request-{position}"
    mappings.append(RequestMapping(container.name, resource, name))
    return _request(name, class_name, wanted - covered), mappings


def claim_requests(
    pod: Pod, resources: Mapping[str, int], classes: Mapping[str, DeviceClass]
) -> tuple[tuple[DeviceRequest, ...], tuple[RequestMapping, ...]]:
    """The claim's requests for `resources` (the names DRA provides) and the pod's mappings."""
    containers = pod.extended_resource_containers
    long_lived = [item for item in containers if not item.init or item.restartable]
    short_lived = [item for item in containers if item.init and not item.restartable]
    requests: list[DeviceRequest] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(resources):
        device_class = classes.get(resource)
        if device_class is None:
            continue
        by_position: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[RequestMapping] = []
        for container in long_lived:
            own, found = _container_request(container, resource, device_class.name, ())
            by_position[container.index] = own
            long_mappings += found
        largest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[RequestMapping] = []
        for container in short_lived:
            own, found = _container_request(
                container, resource, device_class.name, by_position[container.index :]
            )
            if own is not None:
                short_names.add(own.name)
                if largest is None or _count(largest) < _count(own):
                    largest = own
            short_mappings += found
        if largest is not None:
            # Init containers run one at a time: the largest request serves them all.
            short_mappings = [
                dataclasses.replace(mapping, request_name=largest.name)
                if mapping.request_name in short_names
                else mapping
                for mapping in short_mappings
            ]
            requests.append(largest)
        requests += [request for request in by_position if request is not None]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda request: request.name)
    return tuple(requests), tuple(mappings)
