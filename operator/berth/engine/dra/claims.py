"""ResourceClaim and ResourceClaimTemplate (resource.k8s.io/v1), parsed once.

A claim asks for devices through requests: each either names a DeviceClass directly
(`exactly`) or lists alternatives in order of preference (`firstAvailable`, each a
subrequest). Constraints tie requests together (same or distinct attribute values);
config is opaque driver configuration copied into the allocation. The status says what
was allocated and which pods use it; a template holds the spec that
kube-controller-manager copies into a claim per pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from berth.engine.dra.allocations import AllocationResult, parse_allocation
from berth.engine.dra.requests import (
    DeviceRequest,
    parse_request,
)
from berth.engine.dra.values import parse_object, required_name
from berth.engine.errors import FieldError
from berth.engine.model.object_meta import controller_uid
from berth.engine.model.parsing import (
    RawObject,
    as_list,
    as_map,
    as_str,
    as_string_map,
)

_Parsed = TypeVar("_Parsed")

# Marks the claim kube-scheduler creates for a pod's extended resources backed by DRA.
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"

__all__ = [
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "ClaimConfiguration",
    "ClaimSpec",
    "ConsumerReference",
    "DeviceConstraint",
    "ResourceClaim",
    "ResourceClaimTemplate",
]


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """One of matchAttribute / distinctAttribute, over `requests` (empty: all requests)."""

    requests: tuple[str, ...]
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimConfiguration:
    """Opaque driver configuration for some requests (empty: all), copied into the allocation."""

    requests: tuple[str, ...]
    configuration: Mapping[str, Any]  # the DeviceConfiguration as written (`opaque`)


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[ClaimConfiguration, ...] = ()


@dataclass(frozen=True, slots=True)
class ConsumerReference:
    """An entry of status.reservedFor: who may use the allocated devices (usually a pod)."""

    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    uid: str
    spec: ClaimSpec
    allocation: AllocationResult | None = None
    reserved_for: tuple[ConsumerReference, ...] = ()
    deletion_timestamp: str | None = None
    resource_version: str = ""
    controller_uid: str = ""  # the controlling owner's UID (the pod, for a generated claim)
    finalizers: tuple[str, ...] = ()
    allocation_timestamp: str | None = None  # status.allocation.allocationTimestamp
    # status.devices: the drivers' conditions per allocated device, which binding conditions
    # wait on: (driver, pool, device, shareID) -> condition type -> (status, reason, message).
    device_conditions: Mapping[
        tuple[str, str, str, str | None], Mapping[str, tuple[str, str, str]]
    ] = field(default_factory=dict)
    # Annotated as the claim for a pod's extended resources backed by DRA.
    extended_resource_claim: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_dict(cls, raw: RawObject) -> ResourceClaim:
        """Parse a ResourceClaim; raises `InvalidObjectError` naming the claim and the field."""
        return parse_object("ResourceClaim", raw, _parse_claim, namespaced=True)


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    spec: ClaimSpec
    labels: Mapping[str, str]  # spec.metadata: copied onto each claim made from the template
    annotations: Mapping[str, str]

    @classmethod
    def from_dict(cls, raw: RawObject) -> ResourceClaimTemplate:
        """Parse a ResourceClaimTemplate; raises `InvalidObjectError` naming the field."""
        return parse_object("ResourceClaimTemplate", raw, _parse_template, namespaced=True)


def _parse_claim(raw: RawObject) -> ResourceClaim:
    metadata = as_map(raw.get("metadata"), "metadata")
    status = as_map(raw.get("status"), "status")
    allocation = status.get("allocation")
    return ResourceClaim(
        namespace=as_str(metadata.get("namespace"), "metadata.namespace") or "default",
        name=required_name(metadata, "metadata"),
        uid=as_str(metadata.get("uid"), "metadata.uid"),
        spec=parse_claim_spec(raw.get("spec"), "spec"),
        allocation=None
        if allocation is None
        else parse_allocation(allocation, "status.allocation"),
        reserved_for=tuple(
            _parse_consumer(item, f"status.reservedFor[{index}]")
            for index, item in enumerate(as_list(status.get("reservedFor"), "status.reservedFor"))
        ),
        deletion_timestamp=as_str(metadata.get("deletionTimestamp"), "metadata.deletionTimestamp")
        or None,
        resource_version=as_str(metadata.get("resourceVersion"), "metadata.resourceVersion"),
        controller_uid=controller_uid(metadata),
        finalizers=_names(metadata.get("finalizers"), "metadata.finalizers"),
        allocation_timestamp=None
        if allocation is None
        else as_str(
            as_map(allocation, "status.allocation").get("allocationTimestamp"),
            "status.allocation.allocationTimestamp",
        )
        or None,
        device_conditions=_parse_device_conditions(status.get("devices")),
        extended_resource_claim=as_string_map(
            metadata.get("annotations"), "metadata.annotations"
        ).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION)
        == "true",
    )


def _parse_device_conditions(
    raw: object,
) -> dict[tuple[str, str, str, str | None], Mapping[str, tuple[str, str, str]]]:
    devices: dict[tuple[str, str, str, str | None], Mapping[str, tuple[str, str, str]]] = {}
    for index, item in enumerate(as_list(raw, "status.devices")):
        where = f"status.devices[{index}]"
        entry = as_map(item, where)
        conditions: dict[str, tuple[str, str, str]] = {}
        for number, condition_raw in enumerate(
            as_list(entry.get("conditions"), f"{where}.conditions")
        ):
            at = f"{where}.conditions[{number}]"
            condition = as_map(condition_raw, at)
            conditions[as_str(condition.get("type"), f"{at}.type")] = (
                as_str(condition.get("status"), f"{at}.status"),
                as_str(condition.get("reason"), f"{at}.reason"),
                as_str(condition.get("message"), f"{at}.message"),
            )
        key = (
            as_str(entry.get("driver"), f"{where}.driver"),
            as_str(entry.get("pool"), f"{where}.pool"),
            as_str(entry.get("device"), f"{where}.device"),
            as_str(entry.get("shareID"), f"{where}.shareID") or None,
        )
        devices[key] = conditions
    return devices


def _parse_template(raw: RawObject) -> ResourceClaimTemplate:
    metadata = as_map(raw.get("metadata"), "metadata")
    spec = as_map(raw.get("spec"), "spec")
    claim_metadata = as_map(spec.get("metadata"), "spec.metadata")
    return ResourceClaimTemplate(
        namespace=as_str(metadata.get("namespace"), "metadata.namespace") or "default",
        name=required_name(metadata, "metadata"),
        spec=parse_claim_spec(spec.get("spec"), "spec.spec"),
        labels=as_string_map(claim_metadata.get("labels"), "spec.metadata.labels"),
        annotations=as_string_map(claim_metadata.get("annotations"), "spec.metadata.annotations"),
    )


def _names(raw: object, field: str) -> tuple[str, ...]:
    return tuple(
        as_str(item, f"{field}[{index}]") for index, item in enumerate(as_list(raw, field))
    )


def parse_claim_spec(raw: object, field: str) -> ClaimSpec:
    """A ResourceClaimSpec (a claim's spec, or a template's spec.spec)."""
    spec = as_map(raw, field)
    devices = as_map(spec.get("devices"), f"{field}.devices")
    where = f"{field}.devices"
    requests = tuple(
        parse_request(item, f"{where}.requests[{index}]")
        for index, item in enumerate(as_list(devices.get("requests"), f"{where}.requests"))
    )
    seen: set[str] = set()
    for index, request in enumerate(requests):
        if request.name in seen:
            raise FieldError(f"{where}.requests[{index}].name", f"duplicate name {request.name}")
        seen.add(request.name)
    return ClaimSpec(
        requests=requests,
        constraints=tuple(
            _parse_constraint(item, f"{where}.constraints[{index}]")
            for index, item in enumerate(
                as_list(devices.get("constraints"), f"{where}.constraints")
            )
        ),
        config=tuple(
            _parse_config(item, f"{where}.config[{index}]")
            for index, item in enumerate(as_list(devices.get("config"), f"{where}.config"))
        ),
    )


def _parse_constraint(raw: object, field: str) -> DeviceConstraint:
    constraint = as_map(raw, field)
    match = as_str(constraint.get("matchAttribute"), f"{field}.matchAttribute") or None
    distinct = as_str(constraint.get("distinctAttribute"), f"{field}.distinctAttribute") or None
    if match is not None and distinct is not None:
        raise FieldError(field, "at most one of matchAttribute, distinctAttribute may be set")
    for name in (match, distinct):
        if name is not None and "/" not in name:
            raise FieldError(field, f"attribute {name} must be fully qualified (domain/name)")
    # Neither set (a constraint type from a newer API) is kept: the allocator refuses the claim.
    return DeviceConstraint(
        requests=_names(constraint.get("requests"), f"{field}.requests"),
        match_attribute=match,
        distinct_attribute=distinct,
    )


def _parse_config(raw: object, field: str) -> ClaimConfiguration:
    config = as_map(raw, field)
    return ClaimConfiguration(
        requests=_names(config.get("requests"), f"{field}.requests"),
        configuration={key: value for key, value in config.items() if key != "requests"},
    )


def _parse_consumer(raw: object, field: str) -> ConsumerReference:
    consumer = as_map(raw, field)
    return ConsumerReference(
        resource=as_str(consumer.get("resource"), f"{field}.resource"),
        name=as_str(consumer.get("name"), f"{field}.name"),
        uid=as_str(consumer.get("uid"), f"{field}.uid"),
        api_group=as_str(consumer.get("apiGroup"), f"{field}.apiGroup"),
    )
