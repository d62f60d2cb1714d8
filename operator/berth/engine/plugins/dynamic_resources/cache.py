"""What DynamicResources reads and assumes of the cluster's DRA objects, and in-flight claims.

kube-scheduler's plugin goes through its DRA manager: claims from an assume cache, device
classes, slices, the devices taken, and a separate record of allocations "in flight"
(decided in Reserve, not yet written by PreBind) that the claim lookups do not show.
Berth's `ClusterState.dra` keeps a single assume store instead: Reserve assumes the claim
with its allocation (so the devices count as taken at once), and PreBind assumes what the
API answered. An assumption made from the API's own version that added an allocation
the API does not have yet is therefore an allocation in flight; `visible_claim` shows such
a claim as upstream's lookups do, unallocated, and `in_flight` tells its allocation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.pools import SliceIndex

__all__ = ["DraCache", "in_flight", "visible_claim"]


class ApiClaims(Protocol):
    def get_api(self, key: str) -> ResourceClaim | None:
        """The claim as the API last reported it, ignoring any assumption."""
        ...


class DraCache(Protocol):
    """The part of `ClusterState.dra` the plugin uses."""

    @property
    def claims(self) -> ApiClaims: ...

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim, an assumed version overriding the API's."""
        ...

    def all_claims(self) -> Iterable[ResourceClaim]: ...

    def device_classes(self) -> Mapping[str, DeviceClass]: ...

    def classes_by_extended_resource(self) -> Mapping[str, DeviceClass]: ...

    def slice_index(self) -> SliceIndex: ...

    def allocated_state(self) -> AllocatedState:
        """Devices taken by allocated claims, assumed ones included."""
        ...

    def is_assumed(self, namespace: str, name: str) -> bool: ...

    def assume_claim(self, claim: ResourceClaim) -> None: ...

    def restore_claim(self, namespace: str, name: str) -> None: ...

    def hold_in_flight(self, claim: ResourceClaim) -> None: ...

    def release_in_flight(self, uid: str) -> bool: ...


def _split(
    cache: DraCache, namespace: str, name: str
) -> tuple[ResourceClaim | None, AllocationResult | None]:
    latest = cache.claim(namespace, name)
    if latest is None or latest.allocation is None or not cache.is_assumed(namespace, name):
        return latest, None
    api = cache.claims.get_api(f"{namespace}/{name}")
    if api is None or api.allocation is not None or api.resource_version != latest.resource_version:
        return latest, None  # the assumption is an API answer: written, not in flight
    return api, latest.allocation


def visible_claim(cache: DraCache, namespace: str, name: str) -> ResourceClaim | None:
    """The claim as kube-scheduler's lookups show it: without an allocation still in flight."""
    return _split(cache, namespace, name)[0]


def in_flight(cache: DraCache, claim: ResourceClaim) -> AllocationResult | None:
    """The allocation a Reserve decided for `claim` that PreBind has not written yet."""
    return _split(cache, claim.namespace, claim.name)[1]
