"""Workloads expand into the pods their controllers in kube-controller-manager v1.37 create.

One table per controller rule: names, labels, replica counts, StatefulSet ordinals, Job
parallelism and completion indexes, DaemonSet node eligibility, owner references, and the
workload fields that are refused.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from berth.cli.controller_names import MAX_GENERATED_PREFIX, generated_name, template_hash
from berth.cli.workloads import expand_workload
from berth.engine.errors import InvalidObjectError
from berth.engine.model.labels import FieldRequirement, Operator
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from tests.builders import make_node

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
NODES = [make_node("n1").build(), make_node("n2").build()]


def workload(
    kind: str, name: str = "web", *, labels: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    """A workload of `kind` whose template runs one container, labelled app=<name>."""
    labels = {"app": name} if labels is None else labels
    api_version = "batch/v1" if kind == "Job" else "apps/v1"
    body: dict[str, Any] = {
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
        **spec,
    }
    if kind != "Job":
        body.setdefault("selector", {"matchLabels": labels})
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "shop"},
        "spec": body,
    }


def expand(raw: dict[str, Any], nodes: list[Node] = NODES) -> list[Pod]:
    return expand_workload(raw, nodes=nodes)


def owner_of(pod: Pod) -> tuple[str, str, str]:
    owner = pod.controller()
    assert owner is not None
    return owner.api_version, owner.kind, owner.name


# --- ReplicaSet and Deployment ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "expected"),
    [(None, 1), (0, 0), (3, 3), (50, 50)],
    ids=["defaults-to-one", "zero", "three", "fifty"],
)
def test_a_replica_set_creates_its_replicas_with_generated_names(
    replicas: int | None, expected: int
) -> None:
    raw = workload("ReplicaSet", "web-rs", **({} if replicas is None else {"replicas": replicas}))
    pods = expand(raw)
    assert len(pods) == expected
    assert all(re.fullmatch(f"web-rs-{SUFFIX}", pod.name) for pod in pods)
    assert len({pod.name for pod in pods}) == expected
    assert len({pod.uid for pod in pods}) == expected
    assert all(pod.namespace == "shop" and pod.labels == {"app": "web-rs"} for pod in pods)
    assert all(owner_of(pod) == ("apps/v1", "ReplicaSet", "web-rs") for pod in pods)


def test_expansion_is_deterministic() -> None:
    raw = workload("Deployment", replicas=4)
    assert [(p.name, p.uid) for p in expand(raw)] == [(p.name, p.uid) for p in expand(raw)]


def test_a_deployment_creates_a_replica_set_named_by_the_template_hash_and_its_pods() -> None:
    raw = workload("Deployment", replicas=2)
    pods = expand(raw)
    hash_ = template_hash(raw["spec"]["template"])
    assert re.fullmatch("[bcdfghjklmnpqrstvwxz2456789]{1,10}", hash_)
    assert all(re.fullmatch(f"web-{hash_}-{SUFFIX}", pod.name) for pod in pods)
    assert all(pod.labels == {"app": "web", "pod-template-hash": hash_} for pod in pods)
    # The pods belong to the ReplicaSet, not to the Deployment.
    assert {owner_of(pod) for pod in pods} == {("apps/v1", "ReplicaSet", f"web-{hash_}")}


def test_the_template_hash_follows_the_template_only() -> None:
    raw = workload("Deployment", replicas=1)
    scaled = workload("Deployment", replicas=5)
    changed = copy.deepcopy(raw)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    assert owner_of(expand(raw)[0]) == owner_of(expand(scaled)[0])
    assert owner_of(expand(raw)[0]) != owner_of(expand(changed)[0])


def test_a_paused_deployment_creates_no_replica_set() -> None:
    assert expand(workload("Deployment", replicas=3, paused=True)) == []


# --- StatefulSet ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ({"replicas": 3}, ["db-0", "db-1", "db-2"]),
        ({}, ["db-0"]),
        ({"replicas": 2, "ordinals": {"start": 5}}, ["db-5", "db-6"]),
        ({"replicas": 0}, []),
    ],
    ids=["ordinals-from-zero", "one-by-default", "ordinals-start", "none"],
)
def test_a_stateful_set_names_its_pods_by_ordinal(spec: dict[str, Any], names: list[str]) -> None:
    pods = expand(workload("StatefulSet", "db", **spec))
    assert [pod.name for pod in pods] == names
    for pod in pods:
        ordinal = pod.name.rsplit("-", 1)[1]
        assert pod.labels["statefulset.kubernetes.io/pod-name"] == pod.name
        assert pod.labels["apps.kubernetes.io/pod-index"] == ordinal
        assert pod.labels["controller-revision-hash"].startswith("db-")
        assert pod.labels["app"] == "db"
        assert owner_of(pod) == ("apps/v1", "StatefulSet", "db")


def test_stateful_set_pods_claim_one_volume_per_claim_template() -> None:
    raw = workload(
        "StatefulSet",
        "db",
        replicas=2,
        volumeClaimTemplates=[{"metadata": {"name": "data"}}, {"metadata": {"name": "logs"}}],
    )
    assert [pod.claim_names for pod in expand(raw)] == [
        ("data-db-0", "logs-db-0"),
        ("data-db-1", "logs-db-1"),
    ]


# --- Job --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "count"),
    [
        ({}, 1),
        ({"parallelism": 3}, 3),
        ({"parallelism": 3, "completions": 2}, 2),
        ({"parallelism": 2, "completions": 5}, 2),
        ({"completions": 4}, 1),
        ({"parallelism": 0}, 0),
        ({"parallelism": 4, "suspend": True}, 0),
    ],
    ids=[
        "one-by-default",
        "parallelism-without-completions",
        "completions-cap-parallelism",
        "parallelism-caps-completions",
        "parallelism-defaults-to-one",
        "parallelism-zero",
        "suspended",
    ],
)
def test_a_job_runs_as_many_pods_as_parallelism_and_completions_allow(
    spec: dict[str, Any], count: int
) -> None:
    pods = expand(workload("Job", "pi", labels={}, **spec))
    assert len(pods) == count
    assert all(re.fullmatch(f"pi-{SUFFIX}", pod.name) for pod in pods)


def test_job_pods_carry_the_generated_selector_labels() -> None:
    raw = workload("Job", "pi", labels={"app": "pi", "job-name": "mine"})
    raw["metadata"]["uid"] = "1234-job"
    (pod,) = expand(raw)
    assert pod.labels == {
        "app": "pi",
        "job-name": "mine",  # a label the user set is kept
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "1234-job",
        "batch.kubernetes.io/controller-uid": "1234-job",
    }
    assert owner_of(pod) == ("batch/v1", "Job", "pi")


def test_a_job_with_a_manual_selector_keeps_the_template_labels() -> None:
    raw = workload("Job", "pi", manualSelector=True, selector={"matchLabels": {"app": "pi"}})
    assert expand(raw)[0].labels == {"app": "pi"}


def test_an_indexed_job_gives_each_pod_its_completion_index() -> None:
    raw = workload("Job", "pi", labels={}, completionMode="Indexed", completions=5, parallelism=3)
    pods = expand(raw)
    assert [pod.labels["batch.kubernetes.io/job-completion-index"] for pod in pods] == [
        "0",
        "1",
        "2",
    ]
    assert all(re.fullmatch(f"pi-{i}-{SUFFIX}", pod.name) for i, pod in enumerate(pods))


def test_an_indexed_job_with_a_long_name_keeps_the_index_in_the_generated_name() -> None:
    name = "j" * 70
    raw = workload("Job", name, labels={}, completionMode="Indexed", completions=2)
    (pod,) = expand(raw)
    assert re.fullmatch(f"j{{55}}-0-{SUFFIX}", pod.name)


# --- DaemonSet --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "template_spec", "runs"),
    [
        (make_node("n"), {}, True),
        (make_node("n").taint("dedicated", "gpu"), {}, False),
        (make_node("n").taint("dedicated", "gpu", effect="NoExecute"), {}, False),
        (make_node("n").taint("dedicated", "gpu", effect="PreferNoSchedule"), {}, True),
        (
            make_node("n").taint("dedicated", "gpu"),
            {"tolerations": [{"key": "dedicated", "operator": "Exists"}]},
            True,
        ),
        (make_node("n").taint("node.kubernetes.io/not-ready", effect="NoExecute"), {}, True),
        (make_node("n").taint("node.kubernetes.io/unreachable", effect="NoExecute"), {}, True),
        (make_node("n").taint("node.kubernetes.io/unschedulable"), {}, True),
        (make_node("n").taint("node.kubernetes.io/disk-pressure"), {}, True),
        (make_node("n").taint("node.kubernetes.io/memory-pressure"), {}, True),
        (make_node("n").taint("node.kubernetes.io/pid-pressure"), {}, True),
        (make_node("n").taint("node.kubernetes.io/network-unavailable"), {}, False),
        (
            make_node("n").taint("node.kubernetes.io/network-unavailable"),
            {"hostNetwork": True},
            True,
        ),
        (make_node("n").unschedulable(), {}, True),
        (make_node("n").labels(disk="ssd"), {"nodeSelector": {"disk": "ssd"}}, True),
        (make_node("n").labels(disk="hdd"), {"nodeSelector": {"disk": "ssd"}}, False),
        (
            make_node("n").labels(disk="hdd"),
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}
                            ]
                        }
                    }
                }
            },
            True,
        ),
        (make_node("n"), {"nodeName": "other"}, False),
    ],
    ids=[
        "plain-node",
        "untolerated-no-schedule",
        "untolerated-no-execute",
        "prefer-no-schedule-ignored",
        "tolerated-by-template",
        "default-toleration-not-ready",
        "default-toleration-unreachable",
        "default-toleration-unschedulable-taint",
        "default-toleration-disk-pressure",
        "default-toleration-memory-pressure",
        "default-toleration-pid-pressure",
        "network-unavailable-needs-host-network",
        "network-unavailable-with-host-network",
        "cordoned-node",
        "node-selector-matches",
        "node-selector-does-not-match",
        "required-affinity-matches",
        "template-node-name-elsewhere",
    ],
)
def test_a_daemon_set_runs_on_the_nodes_its_controller_accepts(
    node: Any, template_spec: dict[str, Any], runs: bool
) -> None:
    raw = workload("DaemonSet", "agent")
    raw["spec"]["template"]["spec"].update(template_spec)
    assert len(expand(raw, [node.build()])) == (1 if runs else 0)


def test_daemon_pods_are_pinned_to_their_node_and_labelled_by_revision() -> None:
    raw = workload("DaemonSet", "agent")
    raw["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]
            }
        }
    }
    nodes = [make_node(name).labels(a="1").build() for name in ("n1", "n2", "n3")]
    pods = expand(raw, nodes)
    assert len({pod.name for pod in pods}) == 3
    assert all(re.fullmatch(f"agent-{SUFFIX}", pod.name) for pod in pods)
    for pod, node in zip(pods, nodes, strict=True):
        # The template's required terms are replaced by the node's name.
        assert pod.required_node_affinity is not None
        (term,) = pod.required_node_affinity.terms
        assert term.expressions == ()
        assert term.fields == (FieldRequirement(Operator.IN, frozenset({node.name})),)
        assert pod.labels == {
            "app": "agent",
            "controller-revision-hash": template_hash(raw["spec"]["template"]),
            "pod-template-generation": "1",
        }
        assert owner_of(pod) == ("apps/v1", "DaemonSet", "agent")
        assert {(t.key, t.effect) for t in pod.tolerations} >= {
            ("node.kubernetes.io/not-ready", "NoExecute"),
            ("node.kubernetes.io/unschedulable", "NoSchedule"),
        }


def test_daemon_pods_do_not_repeat_a_default_toleration_the_template_has() -> None:
    raw = workload("DaemonSet", "agent")
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    raw["spec"]["template"]["spec"]["tolerations"] = [own]
    (pod, _) = expand(raw)
    assert [t.key for t in pod.tolerations].count("node.kubernetes.io/not-ready") == 1
    assert len(pod.tolerations) == 6


# --- generated names --------------------------------------------------------------------------


def test_generated_names_of_one_owner_never_collide() -> None:
    names = {generated_name("web-", index) for index in range(20_000)}
    assert len(names) == 20_000


def test_generated_names_cut_the_prefix_like_the_api_server() -> None:
    name = generated_name("x" * 80 + "-", 0)
    assert name[:MAX_GENERATED_PREFIX] == "x" * MAX_GENERATED_PREFIX
    assert len(name) == MAX_GENERATED_PREFIX + 5


# --- refused fields ---------------------------------------------------------------------------


def _without_selector(raw: dict[str, Any]) -> None:
    del raw["spec"]["selector"]


def _mismatched_selector(raw: dict[str, Any]) -> None:
    raw["spec"]["selector"] = {"matchLabels": {"app": "other"}}


def _bad_cpu(raw: dict[str, Any]) -> None:
    raw["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}


@pytest.mark.parametrize(
    ("kind", "change", "expected"),
    [
        ("Deployment", _without_selector, "spec.selector: must be set and not empty"),
        (
            "ReplicaSet",
            _mismatched_selector,
            "spec.template.metadata.labels: `selector` does not match template `labels`",
        ),
        (
            "Deployment",
            _bad_cpu,
            "spec.template.spec.containers[0].resources.requests.cpu: invalid quantity 'lots'",
        ),
        (
            "StatefulSet",
            lambda raw: raw["spec"].update(replicas=-1),
            "spec.replicas: must be greater than or equal to 0, got -1",
        ),
        (
            "ReplicaSet",
            lambda raw: raw["spec"].update(replicas="3"),
            "spec.replicas: expected an integer, got '3'",
        ),
        (
            "StatefulSet",
            lambda raw: raw["spec"].update(ordinals={"start": -2}),
            "spec.ordinals.start: must be greater than or equal to 0, got -2",
        ),
        (
            "StatefulSet",
            lambda raw: raw["spec"].update(volumeClaimTemplates=[{"metadata": {}}]),
            "spec.volumeClaimTemplates[0].metadata.name: must be set",
        ),
        (
            "Job",
            lambda raw: raw["spec"].update(completionMode="Sometimes"),
            "spec.completionMode: expected NonIndexed or Indexed, got 'Sometimes'",
        ),
        (
            "Job",
            lambda raw: raw["spec"].update(completionMode="Indexed"),
            "spec.completions: must be set when completionMode is Indexed",
        ),
        (
            "DaemonSet",
            lambda raw: raw["spec"]["template"]["spec"].update(tolerations="all"),
            "spec.template.spec.tolerations: expected a list, got str",
        ),
        ("Deployment", lambda raw: raw["metadata"].pop("name"), "metadata.name: must be set"),
    ],
    ids=[
        "no-selector",
        "selector-not-matching-labels",
        "bad-template-field",
        "negative-replicas",
        "replicas-not-an-integer",
        "negative-ordinal-start",
        "unnamed-claim-template",
        "unknown-completion-mode",
        "indexed-without-completions",
        "tolerations-not-a-list",
        "no-name",
    ],
)
def test_bad_workload_fields_are_refused_naming_the_workload_and_field(
    kind: str, change: Any, expected: str
) -> None:
    raw = workload(kind)
    change(raw)
    with pytest.raises(InvalidObjectError) as caught:
        expand(raw)
    assert caught.value.kind == kind
    assert str(caught.value).endswith(expected)
    assert str(caught.value).startswith(f"{kind} shop/")
