"""Fluent builders for the raw API dicts that tests feed the engine.

make_pod("web").req(cpu="500m").toleration(key="gpu", operator="Exists").obj()
make_node("n1").capacity(cpu="4", memory="8Gi", pods=110).zone("z1").obj()
"""

from __future__ import annotations

import base64
import copy
import itertools
from typing import Any

from berth.engine.model.node import Node
from berth.engine.model.pod import Pod

_uids = itertools.count(1)


def set_path(raw: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted path in a raw object, creating the maps on the way."""
    target = raw
    *parents, last = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{next(_uids)}"},
            "spec": {"containers": [{"name": "c0", "image": "registry.k8s.io/pause:3.10"}]},
            "status": {},
        }

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._raw["spec"]
        return spec

    def uid(self, uid: str) -> PodBuilder:
        self._raw["metadata"]["uid"] = uid
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self._raw["metadata"].setdefault("labels", {}).update(labels)
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._raw["metadata"].setdefault("labels", {})[key] = value
        return self

    def req(self, container: int = 0, **requests: str | int) -> PodBuilder:
        """Requests of container `container` (added if needed); use memory="1Gi", cpu="500m"."""
        containers = self._spec["containers"]
        while len(containers) <= container:
            containers.append(
                {"name": f"c{len(containers)}", "image": "registry.k8s.io/pause:3.10"}
            )
        resources = containers[container].setdefault("resources", {})
        resources.setdefault("requests", {}).update(_resource_names(requests))
        return self

    def container(
        self, image: str = "registry.k8s.io/pause:3.10", **requests: str | int
    ) -> PodBuilder:
        containers = self._spec["containers"]
        entry: dict[str, Any] = {"name": f"c{len(containers)}", "image": image}
        if requests:
            entry["resources"] = {"requests": _resource_names(requests)}
        containers.append(entry)
        return self

    def init_container(self, *, sidecar: bool = False, **requests: str | int) -> PodBuilder:
        inits = self._spec.setdefault("initContainers", [])
        entry: dict[str, Any] = {"name": f"init{len(inits)}", "image": "busybox"}
        if requests:
            entry["resources"] = {"requests": _resource_names(requests)}
        if sidecar:
            entry["restartPolicy"] = "Always"
        inits.append(entry)
        return self

    def image(self, image: str, container: int = 0) -> PodBuilder:
        self._spec["containers"][container]["image"] = image
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodBuilder:
        entry: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            entry["hostIP"] = host_ip
        self._spec["containers"][0].setdefault("ports", []).append(entry)
        return self

    def node(self, node_name: str) -> PodBuilder:
        self._spec["nodeName"] = node_name
        return self

    def scheduler(self, name: str) -> PodBuilder:
        self._spec["schedulerName"] = name
        return self

    def priority(self, value: int) -> PodBuilder:
        self._spec["priority"] = value
        return self

    def node_selector(self, **labels: str) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {}).update(labels)
        return self

    def toleration(
        self, key: str = "", operator: str = "Equal", value: str = "", effect: str = ""
    ) -> PodBuilder:
        entry: dict[str, Any] = {"key": key, "operator": operator}
        if value:
            entry["value"] = value
        if effect:
            entry["effect"] = effect
        self._spec.setdefault("tolerations", []).append(entry)
        return self

    def _affinity(self) -> dict[str, Any]:
        affinity: dict[str, Any] = self._spec.setdefault("affinity", {})
        return affinity

    def node_affinity_in(self, key: str, *values: str, operator: str = "In") -> PodBuilder:
        """Adds a required term with one expression (terms are ORed)."""
        expression: dict[str, Any] = {"key": key, "operator": operator}
        if values:
            expression["values"] = list(values)
        required = (
            self._affinity()
            .setdefault("nodeAffinity", {})
            .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})
        )
        required["nodeSelectorTerms"].append({"matchExpressions": [expression]})
        return self

    def required_node_terms(self, *terms: dict[str, Any]) -> PodBuilder:
        self._affinity().setdefault("nodeAffinity", {})[
            "requiredDuringSchedulingIgnoredDuringExecution"
        ] = {"nodeSelectorTerms": list(terms)}
        return self

    def preferred_node_term(self, weight: int, term: dict[str, Any]) -> PodBuilder:
        self._affinity().setdefault("nodeAffinity", {}).setdefault(
            "preferredDuringSchedulingIgnoredDuringExecution", []
        ).append({"weight": weight, "preference": term})
        return self

    def pod_affinity(
        self, kind: str, term: dict[str, Any], weight: int | None = None
    ) -> PodBuilder:
        """kind is "podAffinity" or "podAntiAffinity"; weight None = required."""
        section = self._affinity().setdefault(kind, {})
        if weight is None:
            section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            section.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def anti_affinity(self, topology_key: str, **match_labels: str) -> PodBuilder:
        return self.pod_affinity(
            "podAntiAffinity",
            {"labelSelector": {"matchLabels": match_labels}, "topologyKey": topology_key},
        )

    def affinity(self, topology_key: str, **match_labels: str) -> PodBuilder:
        return self.pod_affinity(
            "podAffinity",
            {"labelSelector": {"matchLabels": match_labels}, "topologyKey": topology_key},
        )

    def spread(
        self,
        topology_key: str,
        max_skew: int = 1,
        when: str = "DoNotSchedule",
        selector: dict[str, Any] | None = None,
        **extra: Any,
    ) -> PodBuilder:
        constraint: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when,
        }
        if selector is not None:
            constraint["labelSelector"] = selector
        constraint.update(extra)
        self._spec.setdefault("topologySpreadConstraints", []).append(constraint)
        return self

    def gate(self, name: str) -> PodBuilder:
        self._spec.setdefault("schedulingGates", []).append({"name": name})
        return self

    def pvc(self, claim: str) -> PodBuilder:
        self._spec.setdefault("volumes", []).append(
            {"name": claim, "persistentVolumeClaim": {"claimName": claim}}
        )
        return self

    def ephemeral(self, volume: str, storage_class: str = "", storage: str = "1Gi") -> PodBuilder:
        """A generic ephemeral volume; its claim is named <pod>-<volume>."""
        spec: dict[str, Any] = {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": storage}},
        }
        if storage_class:
            spec["storageClassName"] = storage_class
        self._spec.setdefault("volumes", []).append(
            {"name": volume, "ephemeral": {"volumeClaimTemplate": {"spec": spec}}}
        )
        return self

    def volume(self, name: str, kind: str, **source: Any) -> PodBuilder:
        """An in-line volume, e.g. volume("disk", "gcePersistentDisk", pdName="pd1")."""
        self._spec.setdefault("volumes", []).append({"name": name, kind: source})
        return self

    def resource_claim(self, name: str, template: str = "gpu-template") -> PodBuilder:
        """A DRA claim in spec.resourceClaims, made from a ResourceClaimTemplate."""
        self._spec.setdefault("resourceClaims", []).append(
            {"name": name, "resourceClaimTemplateName": template}
        )
        return self

    def claim(self, name: str, claim: str) -> PodBuilder:
        """A DRA claim in spec.resourceClaims that names an existing ResourceClaim."""
        self._spec.setdefault("resourceClaims", []).append(
            {"name": name, "resourceClaimName": claim}
        )
        return self

    def generated_claim(self, name: str, claim: str | None) -> PodBuilder:
        """status.resourceClaimStatuses: the claim made for entry `name` (None: none needed)."""
        entry: dict[str, Any] = {"name": name}
        if claim is not None:
            entry["resourceClaimName"] = claim
        self._raw.setdefault("status", {}).setdefault("resourceClaimStatuses", []).append(entry)
        return self

    def owner(self, kind: str, name: str, api_version: str = "apps/v1") -> PodBuilder:
        self._raw["metadata"].setdefault("ownerReferences", []).append(
            {
                "apiVersion": api_version,
                "kind": kind,
                "name": name,
                "uid": f"owner-{name}",
                "controller": True,
            }
        )
        return self

    def terminating(self) -> PodBuilder:
        self._raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._raw["status"]["phase"] = phase
        return self

    def nominated(self, node_name: str) -> PodBuilder:
        self._raw["status"]["nominatedNodeName"] = node_name
        return self

    def set(self, path: str, value: Any) -> PodBuilder:
        """Escape hatch: set a dotted path, e.g. set("spec.overhead", {"cpu": "100m"})."""
        set_path(self._raw, path, value)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def build(self) -> Pod:
        return Pod.from_dict(self.obj())


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {
                "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
            },
        }

    def capacity(self, **resources: str | int) -> NodeBuilder:
        """Replaces allocatable (and capacity) with exactly these resources."""
        named = _resource_names(resources)
        self._raw["status"]["allocatable"] = dict(named)
        self._raw["status"]["capacity"] = dict(named)
        return self

    def labels(self, **labels: str) -> NodeBuilder:
        self._raw["metadata"]["labels"].update(labels)
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        self._raw["metadata"]["labels"][key] = value
        return self

    def zone(self, zone: str) -> NodeBuilder:
        return self.label("topology.kubernetes.io/zone", zone)

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._raw["spec"].setdefault("taints", []).append(
            {"key": key, "value": value, "effect": effect}
        )
        return self

    def unschedulable(self, value: bool = True) -> NodeBuilder:
        self._raw["spec"]["unschedulable"] = value
        return self

    def declared_features(self, *features: str) -> NodeBuilder:
        self._raw["status"]["declaredFeatures"] = list(features)
        return self

    def image(self, size_bytes: int, *names: str) -> NodeBuilder:
        self._raw["status"].setdefault("images", []).append(
            {"names": list(names), "sizeBytes": size_bytes}
        )
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

    def build(self) -> Node:
        return Node.from_dict(self.obj())


def _resource_names(values: dict[str, str | int]) -> dict[str, str | int]:
    # Python keywords cannot hold "/" or "-": ephemeral_storage -> ephemeral-storage,
    # and extended names are passed as example_com__gpu -> example.com/gpu.
    renamed: dict[str, str | int] = {}
    for key, value in values.items():
        name = key.replace("__", "/").replace("_", "-") if "__" in key else key.replace("_", "-")
        if "/" in name:
            domain, resource = name.split("/", 1)
            name = f"{domain.replace('-', '.')}/{resource}"
        renamed[name] = value
    return renamed


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


# A PEM header is enough for documents that are only parsed, never used for TLS.
FAKE_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def extender_with_every_field() -> dict[str, Any]:
    """A KubeSchedulerConfiguration `extenders[]` entry that sets every field."""
    pem = base64.b64encode(FAKE_PEM).decode()
    return {
        "urlPrefix": "https://licences.example:8443/scheduler",
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "preemptVerb": "preempt",
        "bindVerb": "bind",
        "weight": 5,
        "enableHTTPS": True,
        "tlsConfig": {
            "insecure": False,
            "serverName": "licences.example",
            "certFile": "/etc/tls/client.crt",
            "keyFile": "/etc/tls/client.key",
            "caFile": "/etc/tls/ca.crt",
            "certData": pem,
            "keyData": base64.b64encode(b"key").decode(),
            "caData": pem,
        },
        "httpTimeout": "1m30s",
        "nodeCacheCapable": True,
        "managedResources": [{"name": "example.com/licence", "ignoredByScheduler": True}],
        "ignorable": True,
    }
