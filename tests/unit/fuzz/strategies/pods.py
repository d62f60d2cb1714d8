"""Hypothesis strategies for raw v1 Pods as a watch event carries them.

Valid per the API's validation, but extreme: 253-character names, init containers and sidecars,
requests from ``1n`` to ``8Ei`` (limits only, too, which the API defaults into requests),
overhead, host ports, priorities at the int32 limits, scheduling gates, every toleration shape,
node and pod affinity with every operator, spread constraints, unicode annotations, and pods
already bound to nodes that may or may not exist.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st

from tests.unit.fuzz.strategies.api_values import (
    dns_labels,
    dns_subdomains,
    labels,
    qualified_names,
    quantities,
    small_quantities,
    unicode_text,
)
from tests.unit.fuzz.strategies.nodes import EXTENDED_RESOURCES, TAINT_EFFECTS
from tests.unit.fuzz.strategies.selectors import (
    node_affinities,
    pod_affinities,
    spread_constraints,
)

_uids = itertools.count(1)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@st.composite
def _requests(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly cpu and memory that fit a usual node; sometimes anything, up to 8Ei."""
    if draw(st.integers(0, 3)):
        return {
            name: draw(small_quantities())
            for name in draw(st.lists(st.sampled_from(("cpu", "memory")), unique=True))
        }
    names = ("cpu", "memory", "ephemeral-storage", *EXTENDED_RESOURCES)
    return {
        name: draw(st.one_of(small_quantities(), quantities()))
        for name in draw(st.lists(st.sampled_from(names), unique=True, max_size=3))
    }


@st.composite
def resources(draw: st.DrawFn) -> dict[str, Any]:
    """Requests, limits-only, or both equal (a limit below its request would be invalid)."""
    requests = draw(_requests())
    shape = draw(st.integers(0, 3))
    if shape == 0 or not requests:
        return {"requests": requests} if requests else {}
    if shape == 1:
        return {"limits": requests}
    return {"requests": requests, "limits": dict(requests)}


@st.composite
def host_ports(draw: st.DrawFn) -> list[dict[str, Any]]:
    ports = []
    for _ in range(draw(st.integers(0, 2))):
        port = draw(st.sampled_from((80, 443, 1, 65535, 8080)))
        entry: dict[str, Any] = {"containerPort": port, "hostPort": port}
        if draw(st.booleans()):
            entry["protocol"] = draw(st.sampled_from(("TCP", "UDP", "SCTP")))
        if draw(st.integers(0, 3)) == 0:
            entry["hostIP"] = draw(st.sampled_from(("0.0.0.0", "127.0.0.1", "::1")))
        ports.append(entry)
    # The API rejects duplicate (hostPort, protocol, hostIP) within one pod.
    unique = {(p["hostPort"], p.get("protocol", "TCP"), p.get("hostIP", "")): p for p in ports}
    return list(unique.values())


@st.composite
def containers(draw: st.DrawFn, *, prefix: str, sidecars: bool) -> list[dict[str, Any]]:
    listed = []
    for index in range(draw(st.integers(0 if sidecars else 1, 3))):
        container: dict[str, Any] = {
            "name": f"{prefix}{index}",
            "image": draw(st.sampled_from(("nginx:1.25", "busybox", "redis:7", "app@sha256:ab"))),
            "resources": draw(resources()),
        }
        if sidecars and draw(st.booleans()):
            container["restartPolicy"] = "Always"
        if (not sidecars or container.get("restartPolicy") == "Always") and draw(
            st.integers(0, 3)
        ) == 0:
            ports = draw(host_ports())
            if ports:
                container["ports"] = ports
        listed.append(container)
    return listed


@st.composite
def tolerations(draw: st.DrawFn) -> list[dict[str, Any]]:
    shapes = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.integers(0, 2))
        toleration: dict[str, Any]
        if kind == 0:  # empty key with Exists: tolerates everything
            toleration = {"operator": "Exists"}
        elif kind == 1:
            toleration = {"key": draw(qualified_names()), "operator": "Exists"}
        else:
            toleration = {
                "key": draw(st.one_of(st.sampled_from(("dedicated", "gpu")), qualified_names())),
                "value": draw(st.sampled_from(("", "yes", "7"))),
            }
            if draw(st.booleans()):
                toleration["operator"] = "Equal"
        effect = draw(st.sampled_from(("", *TAINT_EFFECTS)))
        if effect:
            toleration["effect"] = effect
        if effect == "NoExecute" and draw(st.booleans()):
            toleration["tolerationSeconds"] = draw(st.integers(-(2**63), 2**63 - 1))
        shapes.append(toleration)
    return shapes


@st.composite
def raw_pods(
    draw: st.DrawFn, *, scheduler_names: list[str], node_names: list[str]
) -> dict[str, Any]:
    """A pending pod for one of `scheduler_names` (or, rarely, for nobody we serve), or a pod
    already running on one of `node_names` (or on a node we never heard of)."""
    spec: dict[str, Any] = {
        "containers": draw(containers(prefix="c", sidecars=False)),
        "schedulerName": draw(
            st.one_of(*(st.just(n) for n in scheduler_names), st.just("someone-else"))
            if scheduler_names
            else st.just("someone-else")
        ),
    }
    init = draw(containers(prefix="init", sidecars=True))
    if init:
        spec["initContainers"] = init
    optional = {
        "overhead": _requests(),
        "priority": st.one_of(st.integers(-10, 10), st.sampled_from((INT32_MIN, INT32_MAX))),
        "preemptionPolicy": st.sampled_from(("Never", "PreemptLowerPriority")),
        "nodeSelector": labels(max_size=2),
        "tolerations": tolerations(),
        "topologySpreadConstraints": spread_constraints(),
        "schedulingGates": st.lists(
            st.builds(lambda name: {"name": name}, qualified_names()),
            max_size=2,
            unique_by=lambda gate: gate["name"],
        ),
        "affinity": st.fixed_dictionaries(
            {},
            optional={
                "nodeAffinity": node_affinities(node_names=node_names),
                "podAffinity": pod_affinities(),
                "podAntiAffinity": pod_affinities(),
            },
        ),
    }
    for key, strategy in optional.items():
        if draw(st.integers(0, 4)) == 0:
            spec[key] = draw(strategy)
    status: dict[str, Any] = {"phase": "Pending"}
    running = node_names and draw(st.integers(0, 4)) == 0
    if running:
        spec["nodeName"] = draw(st.sampled_from(node_names))
        spec.pop("schedulingGates", None)  # the API refuses gates on a bound pod
        status = {"phase": "Running", "startTime": "2026-01-02T03:04:05Z"}
    elif draw(st.integers(0, 9)) == 0:
        spec["nodeName"] = draw(dns_subdomains())  # bound to a node we never saw
        spec.pop("schedulingGates", None)
        status = {"phase": "Running"}
    elif draw(st.integers(0, 5)) == 0:  # nominated by a preemption, maybe to a vanished node
        status["nominatedNodeName"] = draw(
            st.sampled_from(node_names) if node_names else dns_subdomains()
        )
    if draw(st.integers(0, 19)) == 0:
        status["phase"] = draw(st.sampled_from(("Succeeded", "Failed")))
    uid = next(_uids)
    metadata: dict[str, Any] = {}
    if draw(st.integers(0, 19)) == 0:
        metadata["deletionTimestamp"] = "2026-01-02T03:04:05Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata
        | {
            "name": draw(dns_subdomains()),
            "namespace": draw(st.one_of(st.just("default"), dns_labels())),
            "uid": f"pod-uid-{uid}",
            "resourceVersion": str(uid),
            "generation": 1,
            "labels": draw(labels()),
            "annotations": {"example.com/unicode": draw(unicode_text())},
        },
        "spec": spec,
        "status": status,
    }
