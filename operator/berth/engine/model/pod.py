"""The Pod as the scheduler sees it, with its requests computed once at parse time."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.container_resources import (
    ContainerResources,
    containers_with_extended_resources,
)
from berth.engine.model.labels import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    Requirement,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
)
from berth.engine.model.node import Taint, TaintEffect
from berth.engine.model.node_features import required_node_features
from berth.engine.model.parsing import (
    RawObject,
    as_int,
    as_list,
    as_map,
    as_str,
    as_string_map,
    brief,
    display_name,
    is_version_of,
)
from berth.engine.model.pod_resource_claims import (
    PodResourceClaim,
    parse_pod_resource_claims,
    parse_resource_claim_statuses,
)
from berth.engine.model.pod_volumes import PodVolume, parse_pod_volumes
from berth.engine.model.requests import ContainerRequests, compute_pod_requests
from berth.engine.model.resources import parse_resource_list
from berth.engine.model.shared_sets import shared_set

DEFAULT_SCHEDULER_NAME = "default-scheduler"


class TolerationOperator(StrEnum):
    EQUAL = "Equal"
    EXISTS = "Exists"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: TolerationOperator
    value: str
    effect: TaintEffect | None  # None tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect is not None and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator is TolerationOperator.EXISTS:
            return True
        return self.value == taint.value


def tolerates_taint(tolerations: tuple[Toleration, ...], taint: Taint) -> bool:
    return any(toleration.tolerates(taint) for toleration in tolerations)


@dataclass(frozen=True, slots=True)
class HostPort:
    protocol: str
    host_ip: str
    port: int

    def conflicts_with(self, other: HostPort) -> bool:
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wildcard = ("", "0.0.0.0")
        return (
            self.host_ip in wildcard or other.host_ip in wildcard or self.host_ip == other.host_ip
        )


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """One (anti-)affinity term with its namespace scope resolved as far as the pod alone allows.

    `selector` None matches no pod (a nil selector); `namespace_selector` None with
    empty `namespaces` was resolved to the owning pod's namespace at parse time.
    """

    selector: LabelSelector | None
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str

    def matches_namespace(self, namespace: str, namespace_labels: Mapping[str, str]) -> bool:
        if namespace in self.namespaces:
            return True
        return self.namespace_selector is not None and self.namespace_selector.matches(
            namespace_labels
        )

    def matches(
        self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]
    ) -> bool:
        return (
            self.selector is not None
            and self.matches_namespace(namespace, namespace_labels)
            and self.selector.matches(labels)
        )


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PreferredNodeTerm:
    weight: int
    term: NodeSelectorTerm


class UnsatisfiableAction(StrEnum):
    DO_NOT_SCHEDULE = "DoNotSchedule"
    SCHEDULE_ANYWAY = "ScheduleAnyway"


class InclusionPolicy(StrEnum):
    HONOR = "Honor"
    IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: UnsatisfiableAction
    selector: LabelSelector | None
    min_domains: int = 1
    node_affinity_policy: InclusionPolicy = InclusionPolicy.HONOR
    node_taints_policy: InclusionPolicy = InclusionPolicy.IGNORE


@dataclass(frozen=True, slots=True)
class OwnerReference:
    api_version: str
    kind: str
    name: str
    controller: bool


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    scheduler_name: str
    node_name: str
    nominated_node_name: str
    priority: int
    phase: str
    terminating: bool
    requests: dict[str, int]
    # cpu (millicores) and memory (bytes) with kube-scheduler's per-container
    # defaults for missing requests; used only by NodeResourcesFit scoring.
    nonzero_cpu: int
    nonzero_memory: int
    host_ports: tuple[HostPort, ...] = ()
    images: tuple[str, ...] = ()
    container_count: int = 0
    image_volumes: tuple[str, ...] = ()  # spec.volumes[].image.reference
    node_selector: dict[str, str] = field(default_factory=dict)
    required_node_affinity: NodeSelector | None = None
    preferred_node_affinity: tuple[PreferredNodeTerm, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    required_affinity: tuple[PodAffinityTerm, ...] = ()
    required_anti_affinity: tuple[PodAffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedPodAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedPodAffinityTerm, ...] = ()
    spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    # PersistentVolumeClaims the pod uses: persistentVolumeClaim volumes' claimName and
    # generic ephemeral volumes' <pod>-<volume>, in `spec.volumes` order.
    claim_names: tuple[str, ...] = ()
    volumes: tuple[PodVolume, ...] = ()  # spec.volumes, each with its claim or in-line source
    resource_claims: tuple[PodResourceClaim, ...] = ()  # spec.resourceClaims (DRA)
    # status.resourceClaimStatuses: pod claim name -> claim generated from its template.
    resource_claim_statuses: Mapping[str, str | None] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    preemption_policy: str = "PreemptLowerPriority"
    resource_version: str = ""
    generation: int = 0
    # status.startTime in seconds since the epoch; None until the kubelet starts the pod.
    start_time: float | None = None
    # Condition DisruptionTarget=True with reason PreemptionByScheduler (a preemption victim).
    preempted_by_scheduler: bool = False
    # Every resource named in a container's or init container's requests or limits, even
    # at zero: what decides whether an extender managing resources is interested.
    container_resource_names: frozenset[str] = frozenset()
    # Features a node must declare (status.declaredFeatures) to run this pod.
    required_node_features: frozenset[str] = frozenset()
    # Each container's requests, only when one asks for a name DRA may back (else empty).
    extended_resource_containers: tuple[ContainerResources, ...] = ()
    # The object as read, kept only for a pod not yet assigned, and by `berth run` only when
    # an extender is interested in it (berth.scheduling.source_retention): extenders are
    # sent the pending pod whole; assigned pods, the many, keep no copy.
    source: RawObject | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def assigned_to(self, node_name: str) -> Pod:
        """This pod with `spec.nodeName` set: what the cache assumes after a decision.

        Copies the slots directly; `dataclasses.replace` re-runs `__init__` and
        costs more than a whole decision's bookkeeping.
        """
        copy = object.__new__(Pod)
        for set_slot, value in zip(_SLOT_SETTERS, _READ_FIELDS(self), strict=True):
            set_slot(copy, value)
        _SET_NODE_NAME(copy, node_name)
        return copy

    @property
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def has_required_affinity_terms(self) -> bool:
        return bool(self.required_affinity or self.required_anti_affinity)

    @property
    def has_any_affinity_terms(self) -> bool:
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )

    def controller(self) -> OwnerReference | None:
        return next((ref for ref in self.owner_references if ref.controller), None)

    def remember_source(self, raw: RawObject) -> bool:
        """Keep `raw` as this pod's source if it is this very version; whether it was kept.

        Sets the source of a pod just parsed without it, or of one whose object was read
        again from the API server for an extender (so the next call need not read it).
        """
        if not is_version_of(raw, self.resource_version):
            return False
        _SET_SOURCE(self, raw)  # compare=False: value semantics unchanged
        return True

    @classmethod
    def from_dict(cls, raw: RawObject, *, keep_source: bool = True) -> Pod:
        """Parse a v1 Pod; raises `InvalidObjectError` naming the pod and the field.

        A pod not yet assigned keeps the object as read unless `keep_source=False`.
        """
        metadata = raw.get("metadata") if isinstance(raw, Mapping) else None
        if isinstance(metadata, Mapping):
            display = f"{display_name(metadata.get('namespace'), 'default')}/{display_name(metadata.get('name'))}"
        else:
            display = "<unnamed>"
        try:
            pod = _parse_pod(raw)
        except FieldError as error:
            raise InvalidObjectError(
                kind="Pod", name=display, field=error.field, problem=error.problem
            ) from None
        if keep_source and not pod.node_name:
            _SET_SOURCE(pod, raw)
        return pod


_POD_FIELDS = tuple(field.name for field in dataclasses.fields(Pod))
# The slots' own descriptors write past the frozen guard; one attrgetter reads them all.
_READ_FIELDS = operator.attrgetter(*_POD_FIELDS)
_SLOT_SETTERS = tuple(getattr(Pod, name).__set__ for name in _POD_FIELDS)
_SET_NODE_NAME = _SLOT_SETTERS[_POD_FIELDS.index("node_name")]
_SET_SOURCE = _SLOT_SETTERS[_POD_FIELDS.index("source")]


def _parse_containers(raw: object, field: str) -> list[tuple[RawObject, ContainerRequests]]:
    parsed = []
    for index, item in enumerate(as_list(raw, field)):
        where = f"{field}[{index}]"
        container = as_map(item, where)
        resources = as_map(container.get("resources"), f"{where}.resources")
        try:
            requests = parse_resource_list(resources.get("requests"))
        except FieldError as error:
            raise error.under(f"{where}.resources.requests") from None
        try:
            limits = parse_resource_list(resources.get("limits"))
        except FieldError as error:
            raise error.under(f"{where}.resources.limits") from None
        # The API server defaults a missing request to its limit; do the same so
        # that pods read from files schedule as they would once admitted.
        for name, amount in limits.items():
            requests.setdefault(name, amount)
        sidecar = as_str(container.get("restartPolicy"), f"{where}.restartPolicy") == "Always"
        parsed.append((container, ContainerRequests(requests=requests, restartable=sidecar)))
    return parsed


def _merge_label_keys(
    selector: LabelSelector | None,
    match_keys: list[str],
    mismatch_keys: list[str],
    labels: Mapping[str, str],
) -> LabelSelector | None:
    # The API server folds matchLabelKeys/mismatchLabelKeys into the selector at
    # admission; repeating that here is idempotent (an AND of equal requirements)
    # and makes pods read from files behave the same.
    if selector is None:
        return None
    extra = [
        Requirement(k, Operator.IN, frozenset((labels[k],))) for k in match_keys if k in labels
    ]
    extra += [
        Requirement(k, Operator.NOT_IN, frozenset((labels[k],)))
        for k in mismatch_keys
        if k in labels
    ]
    return selector.with_requirements(extra) if extra else selector


def _parse_affinity_term(
    raw: object, field: str, namespace: str, labels: Mapping[str, str]
) -> PodAffinityTerm:
    term = as_map(raw, field)
    topology_key = as_str(term.get("topologyKey"), f"{field}.topologyKey")
    if not topology_key:
        raise FieldError(f"{field}.topologyKey", "must be set")
    selector = parse_label_selector(term.get("labelSelector"), f"{field}.labelSelector")
    namespace_selector = parse_label_selector(
        term.get("namespaceSelector"), f"{field}.namespaceSelector"
    )
    namespaces = frozenset(
        as_str(n, f"{field}.namespaces")
        for n in as_list(term.get("namespaces"), f"{field}.namespaces")
    )
    if not namespaces and namespace_selector is None:
        namespaces = frozenset((namespace,))
    match_keys = [
        as_str(k, f"{field}.matchLabelKeys")
        for k in as_list(term.get("matchLabelKeys"), f"{field}.matchLabelKeys")
    ]
    mismatch_keys = [
        as_str(k, f"{field}.mismatchLabelKeys")
        for k in as_list(term.get("mismatchLabelKeys"), f"{field}.mismatchLabelKeys")
    ]
    return PodAffinityTerm(
        selector=_merge_label_keys(selector, match_keys, mismatch_keys, labels),
        namespaces=namespaces,
        namespace_selector=namespace_selector,
        topology_key=topology_key,
    )


def _parse_pod_affinity(
    raw: object, field: str, namespace: str, labels: Mapping[str, str]
) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    section = as_map(raw, field)
    required_field = f"{field}.requiredDuringSchedulingIgnoredDuringExecution"
    required = tuple(
        _parse_affinity_term(item, f"{required_field}[{index}]", namespace, labels)
        for index, item in enumerate(
            as_list(section.get("requiredDuringSchedulingIgnoredDuringExecution"), required_field)
        )
    )
    preferred_field = f"{field}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred = []
    for index, item in enumerate(
        as_list(section.get("preferredDuringSchedulingIgnoredDuringExecution"), preferred_field)
    ):
        where = f"{preferred_field}[{index}]"
        weighted = as_map(item, where)
        weight = as_int(weighted.get("weight"), f"{where}.weight", bits=32)
        if not 1 <= weight <= 100:
            raise FieldError(f"{where}.weight", f"must be between 1 and 100, got {weight}")
        preferred.append(
            WeightedPodAffinityTerm(
                weight,
                _parse_affinity_term(
                    weighted.get("podAffinityTerm"), f"{where}.podAffinityTerm", namespace, labels
                ),
            )
        )
    return required, tuple(preferred)


def _parse_tolerations(raw: object) -> tuple[Toleration, ...]:
    tolerations = []
    for index, item in enumerate(as_list(raw, "spec.tolerations")):
        where = f"spec.tolerations[{index}]"
        toleration = as_map(item, where)
        try:
            operator = TolerationOperator(toleration.get("operator") or "Equal")
        except ValueError:
            raise FieldError(
                f"{where}.operator", f"unknown operator {brief(toleration.get('operator'))}"
            ) from None
        effect_raw = toleration.get("effect") or None
        try:
            effect = TaintEffect(effect_raw) if effect_raw is not None else None
        except ValueError:
            raise FieldError(
                f"{where}.effect", f"unknown taint effect {brief(effect_raw)}"
            ) from None
        tolerations.append(
            Toleration(
                key=as_str(toleration.get("key"), f"{where}.key"),
                operator=operator,
                value=as_str(toleration.get("value"), f"{where}.value"),
                effect=effect,
            )
        )
    return tuple(tolerations)


def _parse_spread(raw: object, labels: Mapping[str, str]) -> tuple[TopologySpreadConstraint, ...]:
    constraints = []
    for index, item in enumerate(as_list(raw, "spec.topologySpreadConstraints")):
        where = f"spec.topologySpreadConstraints[{index}]"
        constraint = as_map(item, where)
        max_skew = as_int(constraint.get("maxSkew"), f"{where}.maxSkew", bits=32)
        if max_skew < 1:
            raise FieldError(f"{where}.maxSkew", f"must be at least 1, got {max_skew}")
        topology_key = as_str(constraint.get("topologyKey"), f"{where}.topologyKey")
        if not topology_key:
            raise FieldError(f"{where}.topologyKey", "must be set")
        try:
            action = UnsatisfiableAction(str(constraint.get("whenUnsatisfiable")))
        except ValueError:
            raise FieldError(
                f"{where}.whenUnsatisfiable",
                f"unknown value {brief(constraint.get('whenUnsatisfiable'))}",
            ) from None
        min_domains = as_int(constraint.get("minDomains"), f"{where}.minDomains", 1, bits=32)
        if min_domains < 1:
            raise FieldError(f"{where}.minDomains", f"must be at least 1, got {min_domains}")
        policies = []
        for policy_field, default in (
            ("nodeAffinityPolicy", "Honor"),
            ("nodeTaintsPolicy", "Ignore"),
        ):
            try:
                policies.append(InclusionPolicy(constraint.get(policy_field) or default))
            except ValueError:
                raise FieldError(
                    f"{where}.{policy_field}",
                    f"unknown policy {brief(constraint.get(policy_field))}",
                ) from None
        match_keys = [
            as_str(k, f"{where}.matchLabelKeys")
            for k in as_list(constraint.get("matchLabelKeys"), f"{where}.matchLabelKeys")
        ]
        selector = parse_label_selector(constraint.get("labelSelector"), f"{where}.labelSelector")
        constraints.append(
            TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=topology_key,
                when_unsatisfiable=action,
                selector=_merge_label_keys(selector, match_keys, [], labels),
                min_domains=min_domains,
                node_affinity_policy=policies[0],
                node_taints_policy=policies[1],
            )
        )
    return tuple(constraints)


def _parse_node_affinity(
    raw: object,
) -> tuple[NodeSelector | None, tuple[PreferredNodeTerm, ...]]:
    field = "spec.affinity.nodeAffinity"
    section = as_map(raw, field)
    required = parse_node_selector(
        section.get("requiredDuringSchedulingIgnoredDuringExecution"),
        f"{field}.requiredDuringSchedulingIgnoredDuringExecution",
    )
    preferred = []
    preferred_field = f"{field}.preferredDuringSchedulingIgnoredDuringExecution"
    for index, item in enumerate(
        as_list(section.get("preferredDuringSchedulingIgnoredDuringExecution"), preferred_field)
    ):
        where = f"{preferred_field}[{index}]"
        weighted = as_map(item, where)
        weight = as_int(weighted.get("weight"), f"{where}.weight", bits=32)
        if not 0 <= weight <= 100:
            raise FieldError(f"{where}.weight", f"must be between 0 and 100, got {weight}")
        preferred.append(
            PreferredNodeTerm(
                weight, parse_node_selector_term(weighted.get("preference"), f"{where}.preference")
            )
        )
    return required, tuple(preferred)


def _parse_host_ports(
    containers: list[tuple[RawObject, ContainerRequests]],
    init_containers: list[tuple[RawObject, ContainerRequests]],
) -> tuple[HostPort, ...]:
    # Sidecars (restartable init containers) hold their host ports for the pod's whole life.
    listed = [
        ("spec.initContainers", index, container)
        for index, (container, requests) in enumerate(init_containers)
        if requests.restartable
    ]
    listed += [
        ("spec.containers", index, container) for index, (container, _) in enumerate(containers)
    ]
    ports = []
    for section, index, container in listed:
        for port_index, item in enumerate(
            as_list(container.get("ports"), f"{section}[{index}].ports")
        ):
            where = f"{section}[{index}].ports[{port_index}]"
            port = as_map(item, where)
            host_port = as_int(port.get("hostPort"), f"{where}.hostPort", bits=32)
            if host_port <= 0:
                continue
            ports.append(
                HostPort(
                    protocol=as_str(port.get("protocol"), f"{where}.protocol", default="TCP")
                    or "TCP",
                    host_ip=as_str(port.get("hostIP"), f"{where}.hostIP"),
                    port=host_port,
                )
            )
    return tuple(ports)


def _parse_image_volumes(raw: object) -> tuple[str, ...]:
    references = []
    for index, item in enumerate(as_list(raw, "spec.volumes")):
        image = as_map(item, f"spec.volumes[{index}]").get("image")
        if image is not None:
            where = f"spec.volumes[{index}].image"
            references.append(as_str(as_map(image, where).get("reference"), f"{where}.reference"))
    return tuple(references)


def _parse_pod(raw: RawObject) -> Pod:
    metadata = as_map(raw.get("metadata"), "metadata")
    name = as_str(metadata.get("name"), "metadata.name")
    if not name:
        raise FieldError("metadata.name", "must be set")
    namespace = as_str(metadata.get("namespace"), "metadata.namespace") or "default"
    labels = as_string_map(metadata.get("labels"), "metadata.labels")
    spec = as_map(raw.get("spec"), "spec")
    status = as_map(raw.get("status"), "status")

    containers = _parse_containers(spec.get("containers"), "spec.containers")
    init_containers = _parse_containers(spec.get("initContainers"), "spec.initContainers")
    try:
        overhead = parse_resource_list(spec.get("overhead"))
    except FieldError as error:
        raise error.under("spec.overhead") from None
    pod_resources = as_map(spec.get("resources"), "spec.resources")
    try:
        pod_level = parse_resource_list(pod_resources.get("requests"))
        pod_limits = parse_resource_list(pod_resources.get("limits"))
    except FieldError as error:
        raise error.under("spec.resources") from None
    for resource_name, amount in pod_limits.items():
        pod_level.setdefault(resource_name, amount)
    computed = compute_pod_requests(
        containers=[requests for _, requests in containers],
        init_containers=[requests for _, requests in init_containers],
        overhead=overhead,
        pod_level=pod_level,
    )

    affinity = as_map(spec.get("affinity"), "spec.affinity")
    required_node, preferred_node = _parse_node_affinity(affinity.get("nodeAffinity"))
    required_affinity, preferred_affinity = _parse_pod_affinity(
        affinity.get("podAffinity"), "spec.affinity.podAffinity", namespace, labels
    )
    required_anti, preferred_anti = _parse_pod_affinity(
        affinity.get("podAntiAffinity"), "spec.affinity.podAntiAffinity", namespace, labels
    )

    owners = []
    for index, item in enumerate(
        as_list(metadata.get("ownerReferences"), "metadata.ownerReferences")
    ):
        where = f"metadata.ownerReferences[{index}]"
        owner = as_map(item, where)
        owners.append(
            OwnerReference(
                api_version=as_str(owner.get("apiVersion"), f"{where}.apiVersion"),
                kind=as_str(owner.get("kind"), f"{where}.kind"),
                name=as_str(owner.get("name"), f"{where}.name"),
                controller=owner.get("controller") is True,
            )
        )
    gates = tuple(
        as_str(
            as_map(gate, f"spec.schedulingGates[{i}]").get("name"),
            f"spec.schedulingGates[{i}].name",
        )
        for i, gate in enumerate(as_list(spec.get("schedulingGates"), "spec.schedulingGates"))
    )
    volumes = parse_pod_volumes(spec.get("volumes"), pod_name=name, namespace=namespace)
    images = tuple(
        as_str(container.get("image"), f"{section}[{index}].image")
        for section, listed in (
            ("spec.initContainers", init_containers),
            ("spec.containers", containers),
        )
        for index, (container, _) in enumerate(listed)
        if container.get("image")
    )
    return Pod(
        namespace=namespace,
        name=name,
        uid=as_str(metadata.get("uid"), "metadata.uid"),
        labels=labels,
        scheduler_name=as_str(spec.get("schedulerName"), "spec.schedulerName")
        or DEFAULT_SCHEDULER_NAME,
        node_name=as_str(spec.get("nodeName"), "spec.nodeName"),
        nominated_node_name=as_str(status.get("nominatedNodeName"), "status.nominatedNodeName"),
        priority=as_int(spec.get("priority"), "spec.priority", bits=32),
        phase=as_str(status.get("phase"), "status.phase"),
        terminating=metadata.get("deletionTimestamp") is not None,
        requests=computed.requests,
        nonzero_cpu=computed.nonzero_cpu,
        nonzero_memory=computed.nonzero_memory,
        host_ports=_parse_host_ports(containers, init_containers),
        images=images,
        container_count=len(containers) + len(init_containers),
        image_volumes=_parse_image_volumes(spec.get("volumes")),
        node_selector=as_string_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        required_node_affinity=required_node,
        preferred_node_affinity=preferred_node,
        tolerations=_parse_tolerations(spec.get("tolerations")),
        required_affinity=required_affinity,
        required_anti_affinity=required_anti,
        preferred_affinity=preferred_affinity,
        preferred_anti_affinity=preferred_anti,
        spread_constraints=_parse_spread(spec.get("topologySpreadConstraints"), labels),
        scheduling_gates=gates,
        claim_names=tuple(volume.claim_name for volume in volumes if volume.claim_name),
        volumes=volumes,
        resource_claims=parse_pod_resource_claims(spec.get("resourceClaims")),
        resource_claim_statuses=parse_resource_claim_statuses(status.get("resourceClaimStatuses")),
        owner_references=tuple(owners),
        preemption_policy=as_str(spec.get("preemptionPolicy"), "spec.preemptionPolicy")
        or "PreemptLowerPriority",
        resource_version=as_str(metadata.get("resourceVersion"), "metadata.resourceVersion"),
        generation=as_int(metadata.get("generation"), "metadata.generation"),
        start_time=_parse_time(status.get("startTime"), "status.startTime"),
        preempted_by_scheduler=_preempted_by_scheduler(status.get("conditions")),
        container_resource_names=shared_set(
            frozenset(
                name
                for _, requests in (*containers, *init_containers)
                for name in requests.requests
            )
        ),
        required_node_features=shared_set(required_node_features(spec)),
        extended_resource_containers=containers_with_extended_resources(
            init_containers=[
                (as_str(container.get("name"), f"spec.initContainers[{index}].name"), requests)
                for index, (container, requests) in enumerate(init_containers)
            ],
            containers=[
                (as_str(container.get("name"), f"spec.containers[{index}].name"), requests)
                for index, (container, requests) in enumerate(containers)
            ],
        ),
    )


def _parse_time(raw: object, field: str) -> float | None:
    text = as_str(raw, field)
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise FieldError(field, f"expected an RFC 3339 time, got {brief(text)}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _preempted_by_scheduler(raw: object) -> bool:
    # Only the first DisruptionTarget condition counts, as in kube-scheduler.
    for index, item in enumerate(as_list(raw, "status.conditions")):
        condition = as_map(item, f"status.conditions[{index}]")
        if condition.get("type") == "DisruptionTarget":
            return condition.get("status") == "True" and (
                condition.get("reason") == "PreemptionByScheduler"
            )
    return False
