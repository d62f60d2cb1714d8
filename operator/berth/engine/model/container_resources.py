"""Each container's own requests, kept for pods that ask for extended resources DRA may back.

A pod's aggregated `requests` suffice for fitting it on a node, but the claim
kube-scheduler builds for extended resources backed by DRA has one device request per
container (named after the container's position and the resource's place among its
requests), and the pod's status maps each container's resource to its request. Only
pods requesting such a name keep this; every other pod keeps nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from berth.engine.model.requests import ContainerRequests
from berth.engine.model.resources import is_dra_extended_resource

__all__ = ["ContainerResources", "containers_with_extended_resources"]


@dataclass(frozen=True, slots=True)
class ContainerResources:
    index: int  # position in initContainers followed by containers
    name: str
    init: bool  # an init container (a sidecar when `restartable`)
    restartable: bool
    requests: Mapping[str, int]  # every request of the container, zero ones included


def containers_with_extended_resources(
    *,
    init_containers: Sequence[tuple[str, ContainerRequests]],
    containers: Sequence[tuple[str, ContainerRequests]],
) -> tuple[ContainerResources, ...]:
    """Every container (init ones first), or none when no container asks for such a name."""
    listed = [(name, requests, True) for name, requests in init_containers]
    listed += [(name, requests, False) for name, requests in containers]
    if not any(
        is_dra_extended_resource(resource)
        for _, requests, _ in listed
        for resource in requests.requests
    ):
        return ()
    return tuple(
        ContainerResources(
            index=index,
            name=name,
            init=init,
            restartable=requests.restartable,
            requests=requests.requests,
        )
        for index, (name, requests, init) in enumerate(listed)
    )
