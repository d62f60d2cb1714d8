"""Re-capture what the real kube-scheduler v1.37 sends to (and says about) its extenders.

Run `python -m tests.extender_capture` (needs the control-plane binaries) to
rewrite tests/data/extender/. It starts etcd + kube-apiserver, two test
extenders (tests/extender_server.py) and the reference kube-scheduler, then:

1. payloads: extender `full` (nodeCacheCapable off, all four verbs, the only
   binder) and extender `cached` (nodeCacheCapable on, managing
   `example.com/foo` with ignoredByScheduler). Pod `plain` interests only
   `full`; pod `foo` (requesting example.com/foo, which no node has) both;
   pod `preemptor` preempts pod `victim`. Every request body is written whole,
   with the objects the API server returned when the pods and nodes were
   created (`api-objects.json`), so that Berth's encoding can be compared.
2. messages: one non-ignorable extender with httpTimeout 1s that answers late,
   answers 500, sets `Error`, and fails nodes; each pod's PodScheduled=False
   message is kept (`messages.json`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from berth.controlplane import LocalControlPlane
from tests.cluster.helpers import (
    create_namespace,
    create_priority_class,
    get_pod,
    make_nodes,
    pod_body,
    poll,
    wait_bound,
    wait_unschedulable,
)
from tests.extender_server import ExtenderScript, ExtenderServer, VerbScript

DATA = Path(__file__).parent / "data" / "extender"
MANAGED = "example.com/foo"


def api_binder(plane: LocalControlPlane) -> Callable[[Mapping[str, Any]], str]:
    """An extender's bind: POST the Binding kube-scheduler asked for."""

    def bind(args: Mapping[str, Any]) -> str:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": args["PodName"], "uid": args["PodUID"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": args["Node"]},
        }
        path = f"/api/v1/namespaces/{args['PodNamespace']}/pods/{args['PodName']}/binding"
        try:
            plane.request("POST", path, body)
        except Exception as error:  # the extender reports it in Error, as a real one would
            return str(error)
        return ""

    return bind


def _post_pod(plane: LocalControlPlane, namespace: str, body: dict[str, Any]) -> Any:
    return plane.request("POST", f"/api/v1/namespaces/{namespace}/pods", body)


def _nodes(plane: LocalControlPlane, group: str) -> list[Any]:
    listed = plane.request("GET", "/api/v1/nodes", None)["items"]
    return [node for node in listed if node["metadata"]["labels"].get("test-group") == group]


def capture_payloads(plane: LocalControlPlane, out: Path) -> None:
    group = make_nodes(plane, 3)
    small = make_nodes(plane, 1, allocatable={"cpu": "1", "memory": "4Gi", "pods": "110"})
    names = sorted(node["metadata"]["name"] for node in _nodes(plane, group))
    full = ExtenderScript(
        failed={names[2]: "no licence on this node"},
        scores={names[1]: 10, names[0]: 4},
        bind=api_binder(plane),
    )
    cached = ExtenderScript(scores={names[0]: 3})
    with ExtenderServer(full) as full_server, ExtenderServer(cached) as cached_server:
        extenders = [
            {
                "urlPrefix": full_server.url,
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "preemptVerb": "preempt",
                "bindVerb": "bind",
                "weight": 2,
                "httpTimeout": "10s",
            },
            {
                "urlPrefix": cached_server.url + "/cached/",
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "preemptVerb": "preempt",
                "weight": 1,
                "nodeCacheCapable": True,
                "managedResources": [{"name": MANAGED, "ignoredByScheduler": True}],
                "ignorable": True,
            },
        ]
        plane.start_kube_scheduler({"extenders": extenders})
        try:
            namespace = create_namespace(plane, "extender-capture")
            low = create_priority_class(plane, 10)
            high = create_priority_class(plane, 1000)
            created: dict[str, Any] = {}
            plain = pod_body("plain", group, scheduler="default-scheduler")
            created["plain"] = _post_pod(plane, namespace, plain)
            foo = pod_body("foo", group, scheduler="default-scheduler")
            container = foo["spec"]["containers"][0]
            container["resources"]["requests"][MANAGED] = "1"
            container["resources"]["limits"] = {MANAGED: "1"}
            created["foo"] = _post_pod(plane, namespace, foo)
            bound = wait_bound(plane, namespace, ["plain", "foo"])
            victim = pod_body(
                "victim", small, scheduler="default-scheduler", cpu="800m", priorityClassName=low
            )
            created["victim"] = _post_pod(plane, namespace, victim)
            bound |= wait_bound(plane, namespace, ["victim"])
            preemptor = pod_body(
                "preemptor",
                small,
                scheduler="default-scheduler",
                cpu="800m",
                priorityClassName=high,
            )
            preemptor["spec"]["containers"][0]["resources"]["limits"] = {MANAGED: "1"}
            created["preemptor"] = _post_pod(plane, namespace, preemptor)
            bound |= wait_bound(plane, namespace, ["preemptor"])
        finally:
            plane.stop_kube_scheduler()
        objects = {
            "pods": created,
            "nodes": _nodes(plane, group) + _nodes(plane, small),
            "bound": bound,
        }
        _write(out / "config.json", {"extenders": extenders})
        _write(out / "api-objects.json", objects)
        for server, name in ((full_server, "full"), (cached_server, "cached")):
            _write(
                out / f"calls-{name}.json",
                [{"verb": call.verb, "body": call.body} for call in server.calls],
            )


def capture_messages(plane: LocalControlPlane, out: Path) -> None:
    group = make_nodes(plane, 3)
    names = sorted(node["metadata"]["name"] for node in _nodes(plane, group))
    script = ExtenderScript()
    with ExtenderServer(script) as server:
        extender = {"urlPrefix": server.url, "filterVerb": "filter", "httpTimeout": "1s"}
        plane.start_kube_scheduler({"extenders": [extender]})
        messages: dict[str, Any] = {
            "extender": extender,
            "nodes": len(plane.request("GET", "/api/v1/nodes")["items"]),
        }
        scenarios: list[tuple[str, Callable[[], None]]] = [
            ("timeout", lambda: script.verbs.update(filter=VerbScript(delay=3))),
            ("status-500", lambda: script.verbs.update(filter=VerbScript(status=500))),
            (
                "error-field",
                lambda: script.verbs.update(filter=VerbScript(error="licence server down")),
            ),
            ("bad-json", lambda: script.verbs.update(filter=VerbScript(body="not json"))),
            (
                "nodes-failed",
                lambda: (
                    script.verbs.clear(),
                    script.failed.update({names[0]: "no licence", names[1]: "no licence"}),
                    script.unresolvable.update({names[2]: "wrong rack"}),
                ),
            ),
        ]
        try:
            namespace = create_namespace(plane, "extender-messages")
            for index, (name, arrange) in enumerate(scenarios):
                arrange()
                pod = f"pod-{index}-{name}"
                _post_pod(plane, namespace, pod_body(pod, group, scheduler="default-scheduler"))
                messages[name] = wait_unschedulable(plane, namespace, pod)
                reason = poll(
                    lambda pod=pod: (_condition(get_pod(plane, namespace, pod)) or {}).get(
                        "reason"
                    ),
                    timeout=30,
                    description="a reason",
                )
                messages[f"{name}-reason"] = reason
                plane.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{pod}")
        finally:
            plane.stop_kube_scheduler()
        messages["url"] = server.url
    _write(out / "messages.json", messages)


def _condition(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def _write(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args(argv)
    with LocalControlPlane() as plane:
        capture_payloads(plane, args.out)
        capture_messages(plane, args.out)


if __name__ == "__main__":
    main()
