"""From a finished search to what PreBind writes: one AllocationResult per claim.

Besides the devices, an allocation carries configuration (each used class's config once,
naming the requests that used it, then the claim's own config entries that concern an
allocated request; a list naming every request is shortened to "all") and a node selector:
pinned to the node when any device is local to it or binds to it, the union of the slices'
node selector requirements when devices come from node-selected slices, none otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from berth.engine.dra.allocations import (
    CONFIG_SOURCE_CLAIM,
    CONFIG_SOURCE_CLASS,
    AllocatedDevice,
    AllocationConfiguration,
    AllocationResult,
)
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.errors import AllocationError
from berth.engine.model.labels import (
    FieldRequirement,
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    parse_node_selector,
)

if TYPE_CHECKING:
    from berth.engine.dra.search import ChosenDevice, RequestData, Search

__all__ = ["allocation_results"]


def allocation_results(search: Search) -> tuple[AllocationResult, ...]:
    return tuple(
        _claim_result(search, claim_index, claim) for claim_index, claim in enumerate(search.claims)
    )


def _claim_result(search: Search, claim_index: int, claim: ResourceClaim) -> AllocationResult:
    devices = tuple(_device(chosen) for chosen in search.results[claim_index])
    used = [_used_request(search, claim_index, index) for index in range(len(claim.spec.requests))]
    config = _configs(claim, used)
    node_name = search.node.name
    selector_raw = _node_selector(claim, search.results[claim_index])
    selector: NodeSelector | None
    if isinstance(selector_raw, _Pinned):
        selector_raw = _pinned_to(node_name)
        # The usual case (node-local devices), built directly: parsing it per node is costly.
        selector = NodeSelector(
            (NodeSelectorTerm((), (FieldRequirement(Operator.IN, frozenset((node_name,))),)),)
        )
    else:
        selector = parse_node_selector(selector_raw, "nodeSelector")
    return AllocationResult(
        devices=devices, config=config, node_selector=selector, node_selector_raw=selector_raw
    )


class _Pinned:
    """Some device is local to the node or binds to it: the allocation is for this node only."""


_PINNED = _Pinned()


def _pinned_to(node_name: str) -> dict[str, Any]:
    requirement = {"key": "metadata.name", "operator": "In", "values": [node_name]}
    return {"nodeSelectorTerms": [{"matchFields": [requirement]}]}


def _used_request(search: Search, claim_index: int, request_index: int) -> RequestData:
    """The request, or for firstAvailable the subrequest that was picked."""
    data = search.request_data[(claim_index, request_index, 0)]
    if data.parent:
        data = search.request_data[(claim_index, request_index, data.selected_subrequest)]
    return data


def _device(chosen: ChosenDevice) -> AllocatedDevice:
    candidate = chosen.candidate
    return AllocatedDevice(
        request=chosen.data.name,
        driver=candidate.id.driver,
        pool=candidate.id.pool,
        device=candidate.id.device,
        admin_access=True if chosen.data.spec.admin_access else None,
        tolerations=chosen.data.spec.tolerations,
        binding_conditions=candidate.device.binding_conditions,
        binding_failure_conditions=candidate.device.binding_failure_conditions,
        share_id=chosen.share_id,
        consumed_capacity=chosen.consumed,
    )


def _configs(claim: ResourceClaim, used: list[RequestData]) -> tuple[AllocationConfiguration, ...]:
    configs: list[tuple[str, list[str], Mapping[str, Any]]] = []
    class_ranges: dict[str, range] = {}
    for data in used:
        known = class_ranges.get(data.device_class.name)
        if known is not None:
            for index in known:
                configs[index][1].append(data.name)
            continue
        first = len(configs)
        for class_config in data.device_class.config:
            configs.append((CONFIG_SOURCE_CLASS, [data.name], class_config))
        class_ranges[data.device_class.name] = range(first, len(configs))
    for entry in claim.spec.config:
        if not entry.requests or any(_mentions(entry.requests, data) for data in used):
            configs.append((CONFIG_SOURCE_CLAIM, list(entry.requests), entry.configuration))
    return tuple(
        AllocationConfiguration(
            source=source,
            # A list naming every request is written as "all" (empty).
            requests=()
            if requests and all(_mentions(requests, data) for data in used)
            else tuple(requests),
            configuration=configuration,
        )
        for source, requests, configuration in configs
    )


def _mentions(requests: Sequence[str], data: RequestData) -> bool:
    """Whether a config's request list covers the request (by its name or "req/sub")."""
    return (data.parent or data.spec.name) in requests or (
        bool(data.parent) and data.name in requests
    )


def _requirements_present(existing: list[Any], requirement: Mapping[str, Any]) -> bool:
    wanted = set(requirement.get("values") or ())
    return any(
        other.get("key") == requirement.get("key")
        and other.get("operator") == requirement.get("operator")
        and set(other.get("values") or ()) == wanted
        for other in existing
    )


def _node_selector(
    claim: ResourceClaim, chosen: list[ChosenDevice]
) -> _Pinned | dict[str, Any] | None:
    """`_PINNED`, the merged requirements of node-selected slices, or None (anywhere)."""
    fields: list[Any] = []
    expressions: list[Any] = []
    for device in chosen:
        candidate = device.candidate
        placement = (
            candidate.device.node
            if candidate.slice.per_device_node_selection
            else candidate.slice.node
        )
        if placement.node_name or candidate.device.binds_to_node:
            return _PINNED
        if placement.selector_raw is None:
            continue
        terms = placement.selector_raw.get("nodeSelectorTerms") or []
        if len(terms) > 1:
            raise AllocationError(
                f"create NodeSelector for claim {claim.name}: unsupported "
                f"ResourceSlice.NodeSelector with {len(terms)} terms"
            )
        for term in terms:
            for requirement in term.get("matchFields") or ():
                if not _requirements_present(fields, requirement):
                    fields.append(requirement)
            for requirement in term.get("matchExpressions") or ():
                if not _requirements_present(expressions, requirement):
                    expressions.append(requirement)
    if not fields and not expressions:
        return None
    merged: dict[str, Any] = {}
    if expressions:
        merged["matchExpressions"] = expressions
    if fields:
        merged["matchFields"] = fields
    return {"nodeSelectorTerms": [merged]}
