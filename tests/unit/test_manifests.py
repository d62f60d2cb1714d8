"""The shipped YAML is valid, least-privilege and consistent with itself, without a cluster.

These tests read crds/, manifests/, examples/profiles/ and the Dockerfile as plain files. The
cluster tests apply the same files to a real API server; these catch the mistakes that are cheap
to catch early (a non-structural schema, a forgotten kustomization entry, a new RBAC permission,
a security context that Pod Security Admission would reject) and pin the contract between the
manifests and `berth run` (port, env, peering name, profile names).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.engine.profile import ALL_POINTS
from berth.kube.app import Settings

REPO = Path(__file__).resolve().parents[2]
KUSTOMIZE_DIRS = ("crds", "manifests")
PROFILE_CRD = "schedulerprofiles.berth.dev"
PEERING_CRD = "clusterkopfpeerings.kopf.dev"
METRICS_PORT = 10260
RUN_AS_USER = 10001

Doc = dict[str, Any]


# --- loading -------------------------------------------------------------------------------------


@functools.cache
def load_yaml_documents(path: Path) -> tuple[Doc, ...]:
    """Parsed once per session; callers must not mutate what they get."""
    with path.open() as stream:
        return tuple(doc for doc in yaml.safe_load_all(stream) if doc is not None)


def yaml_files(folder: str) -> list[Path]:
    return sorted(
        path
        for path in (REPO / folder).iterdir()
        if path.suffix in {".yaml", ".yml"} and path.name != "kustomization.yaml"
    )


def documents(*folders: str) -> list[Doc]:
    return [
        doc
        for folder in folders
        for path in yaml_files(folder)
        for doc in load_yaml_documents(path)
    ]


def the_one(kind: str, name: str | None = None, *folders: str) -> Doc:
    matches = [
        doc
        for doc in documents(*(folders or KUSTOMIZE_DIRS))
        if doc["kind"] == kind and (name is None or doc["metadata"]["name"] == name)
    ]
    assert len(matches) == 1, f"expected exactly one {kind} {name or ''}, found {len(matches)}"
    return matches[0]


def crd_schema(crd_name: str) -> Doc:
    (version,) = the_one("CustomResourceDefinition", crd_name)["spec"]["versions"]
    schema: Doc = version["schema"]["openAPIV3Schema"]
    return schema


def pod_spec() -> Doc:
    spec: Doc = the_one("Deployment", "berth")["spec"]["template"]["spec"]
    return spec


def berth_container() -> Doc:
    (container,) = pod_spec()["containers"]
    return container


# --- kustomizations ------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", KUSTOMIZE_DIRS)
def test_kustomization_lists_every_yaml_file_of_its_folder(folder: str) -> None:
    kustomization = load_yaml_documents(REPO / folder / "kustomization.yaml")[0]
    listed = {entry for entry in kustomization["resources"] if not entry.startswith("..")}
    assert listed == {path.name for path in yaml_files(folder)}


def test_manifests_include_the_crds() -> None:
    kustomization = load_yaml_documents(REPO / "manifests" / "kustomization.yaml")[0]
    assert "../crds" in kustomization["resources"]


# --- CRDs ----------------------------------------------------------------------------------------


def walk_schema(node: Doc, path: str) -> Iterator[tuple[str, Doc]]:
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from walk_schema(child, f"{path}.{name}")
    if "items" in node:
        yield from walk_schema(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from walk_schema(node["additionalProperties"], f"{path}{{}}")


@pytest.mark.parametrize("crd_name", [PROFILE_CRD, PEERING_CRD])
def test_crd_schema_is_structural(crd_name: str) -> None:
    for path, node in walk_schema(crd_schema(crd_name), "<root>"):
        assert "type" in node or node.get("x-kubernetes-preserve-unknown-fields") is True, path
        if node.get("type") == "array":
            assert "items" in node, path
        assert not ("properties" in node and "additionalProperties" in node), path
        if node.get("x-kubernetes-list-type") == "map":
            keys = node["x-kubernetes-list-map-keys"]
            assert set(keys) <= set(node["items"].get("required", [])), path


@pytest.mark.parametrize(
    ("crd_name", "group", "kind", "plural", "version"),
    [
        (PROFILE_CRD, "berth.dev", "SchedulerProfile", "schedulerprofiles", "v1alpha1"),
        (PEERING_CRD, "kopf.dev", "ClusterKopfPeering", "clusterkopfpeerings", "v1"),
    ],
    ids=["SchedulerProfile", "ClusterKopfPeering"],
)
def test_crd_names_and_single_storage_version(
    crd_name: str, group: str, kind: str, plural: str, version: str
) -> None:
    spec = the_one("CustomResourceDefinition", crd_name)["spec"]
    assert crd_name == f"{spec['names']['plural']}.{spec['group']}"
    assert (spec["group"], spec["names"]["kind"], spec["names"]["plural"]) == (group, kind, plural)
    assert spec["scope"] == "Cluster"
    assert [(v["name"], v["served"], v["storage"]) for v in spec["versions"]] == [
        (version, True, True)
    ]


def test_peering_crd_keeps_status_on_the_main_resource() -> None:
    # kopf merge-patches .status on the object itself; a status subresource would drop it.
    (version,) = the_one("CustomResourceDefinition", PEERING_CRD)["spec"]["versions"]
    assert "status" not in version.get("subresources", {})
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]
    assert status["x-kubernetes-preserve-unknown-fields"] is True


def test_profile_crd_has_status_subresource_short_name_and_columns() -> None:
    spec = the_one("CustomResourceDefinition", PROFILE_CRD)["spec"]
    (version,) = spec["versions"]
    assert version["subresources"] == {"status": {}}
    assert spec["names"]["shortNames"] == ["sp"]
    columns = {column["name"]: column["jsonPath"] for column in version["additionalPrinterColumns"]}
    assert columns["SchedulerName"] == ".spec.schedulerName"
    assert columns["Accepted"] == '.status.conditions[?(@.type=="Accepted")].status'
    assert columns["Age"] == ".metadata.creationTimestamp"


def test_profile_scheduler_name_is_immutable() -> None:
    scheduler_name = crd_schema(PROFILE_CRD)["properties"]["spec"]["properties"]["schedulerName"]
    rules = [
        (rule["rule"], "message" in rule) for rule in scheduler_name["x-kubernetes-validations"]
    ]
    assert rules == [("self == oldSelf", True)]


def test_every_extension_point_has_the_same_plugin_set_schema() -> None:
    plugins = crd_schema(PROFILE_CRD)["properties"]["spec"]["properties"]["plugins"]["properties"]
    # The CRD offers exactly the extension points the engine's profile parser reads.
    assert tuple(plugins) == ALL_POINTS
    # queueSort alone allows one enabled plugin; otherwise the schemas are identical.
    normalised = {}
    for point, schema in plugins.items():
        copy = json.loads(json.dumps(schema))
        copy.pop("description")
        copy["properties"]["enabled"].pop("maxItems")
        normalised[point] = copy
    assert all(schema == normalised["multiPoint"] for schema in normalised.values())
    assert plugins["queueSort"]["properties"]["enabled"]["maxItems"] == 1


# A minimal validator of the OpenAPI subset our schema uses, to check example objects both ways.
# It does not evaluate CEL; the only CEL rule is a transition rule, which needs an update anyway.


def schema_errors(value: Any, schema: Doc, path: str = "spec") -> list[str]:
    json_types = {"object": dict, "array": list, "string": str, "integer": int, "boolean": bool}
    expected = schema.get("type")
    if expected in json_types and (
        not isinstance(value, json_types[expected]) or (expected == "integer" and value is True)
    ):
        return [f"{path}: expected {expected}"]
    errors = []
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        errors += [
            f"{path}.{key}: required" for key in schema.get("required", []) if key not in value
        ]
        for key, item in value.items():
            if key in properties:
                errors += schema_errors(item, properties[key], f"{path}.{key}")
            elif not schema.get("x-kubernetes-preserve-unknown-fields"):
                errors.append(f"{path}.{key}: unknown field")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            errors.append(f"{path}: too many items")
        if schema.get("x-kubernetes-list-type") == "map":
            keys = [
                tuple(item.get(k) for k in schema["x-kubernetes-list-map-keys"]) for item in value
            ]
            errors += [f"{path}: duplicate {key}" for key in set(keys) if keys.count(key) > 1]
        for index, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{path}[{index}]")
    if isinstance(value, int) and not (
        schema.get("minimum", value) <= value <= schema.get("maximum", value)
    ):
        errors.append(f"{path}: out of range")
    if isinstance(value, str):
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            errors.append(f"{path}: bad length")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: does not match {schema['pattern']}")
        if "enum" in schema and value not in schema["enum"]:
            errors.append(f"{path}: not one of {schema['enum']}")
    return errors


def profile_spec_errors(spec: Doc) -> list[str]:
    return schema_errors(spec, crd_schema(PROFILE_CRD)["properties"]["spec"])


def shipped_profiles() -> list[Doc]:
    return [
        doc
        for doc in documents("manifests", "examples/profiles")
        if doc["kind"] == "SchedulerProfile"
    ]


@pytest.mark.parametrize(
    "profile", shipped_profiles(), ids=lambda profile: profile["metadata"]["name"]
)
def test_shipped_profiles_pass_the_schema(profile: Doc) -> None:
    assert profile["apiVersion"] == "berth.dev/v1alpha1"
    assert profile_spec_errors(profile["spec"]) == []


def test_default_profile_is_kube_schedulers_defaults_under_berth() -> None:
    profile = the_one("SchedulerProfile", "berth")
    assert profile["spec"] == {"schedulerName": "berth"}


def plugin_set(enabled: list[Doc] | None = None, disabled: list[Doc] | None = None) -> Doc:
    return {"enabled": enabled or [], "disabled": disabled or []}


def berth_profile(**fields: Any) -> Doc:
    return {"schedulerName": "berth", **fields}


def named(*names: str) -> list[Doc]:
    return [{"name": name} for name in names]


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        pytest.param({}, "spec.schedulerName: required", id="no-scheduler-name"),
        pytest.param(
            {"schedulerName": "Berth"}, "spec.schedulerName: does not match", id="uppercase-name"
        ),
        pytest.param(
            {"schedulerName": "-berth"}, "spec.schedulerName: does not match", id="leading-dash"
        ),
        pytest.param(
            berth_profile(percentageOfNodesToScore=101),
            "spec.percentageOfNodesToScore: out of range",
            id="percentage-over-100",
        ),
        pytest.param(
            berth_profile(percentageOfNodesToScore=-1),
            "spec.percentageOfNodesToScore: out of range",
            id="percentage-negative",
        ),
        pytest.param(
            berth_profile(plugins={"score": plugin_set([{"name": "A", "weight": 0}])}),
            "spec.plugins.score.enabled[0].weight: out of range",
            id="weight-0",
        ),
        pytest.param(
            berth_profile(plugins={"multiPoint": plugin_set([{"name": "A", "weight": 101}])}),
            "spec.plugins.multiPoint.enabled[0].weight: out of range",
            id="weight-101",
        ),
        pytest.param(
            berth_profile(plugins={"filter": plugin_set(named("A", "A"))}),
            "spec.plugins.filter.enabled: duplicate ('A',)",
            id="duplicate-enabled",
        ),
        pytest.param(
            berth_profile(plugins={"filter": plugin_set(disabled=named("A", "A"))}),
            "spec.plugins.filter.disabled: duplicate ('A',)",
            id="duplicate-disabled",
        ),
        pytest.param(
            berth_profile(plugins={"queueSort": plugin_set(named("A", "B"))}),
            "spec.plugins.queueSort.enabled: too many items",
            id="two-queue-sorts",
        ),
        pytest.param(
            berth_profile(pluginConfig=[{"name": "A", "args": {}}, {"name": "A"}]),
            "spec.pluginConfig: duplicate ('A',)",
            id="duplicate-plugin-config",
        ),
        pytest.param(
            berth_profile(plugins={"sort": {}}),
            "spec.plugins.sort: unknown field",
            id="unknown-extension-point",
        ),
    ],
)
def test_profile_schema_rejects(spec: Doc, error: str) -> None:
    errors = profile_spec_errors(spec)
    assert any(message.startswith(error) for message in errors), errors


def test_profile_schema_accepts_omitted_weight_and_free_form_args() -> None:
    spec = {
        "schedulerName": "berth.example.com",
        "percentageOfNodesToScore": 0,
        "plugins": {"multiPoint": plugin_set([{"name": "A"}], [{"name": "*"}])},
        "pluginConfig": [{"name": "A", "args": {"anything": [{"nested": True}]}}],
    }
    assert profile_spec_errors(spec) == []


# --- RBAC ----------------------------------------------------------------------------------------

# (apiGroup, resource, verb, resourceName or "*"): every permission Berth holds, and why it needs it
# is written next to the rule in manifests/rbac.yaml. Adding one here is a conscious change.
EXPECTED_PERMISSIONS = {
    ("", "pods", "get", "*"),
    ("", "pods", "list", "*"),
    ("", "pods", "watch", "*"),
    ("", "pods", "delete", "*"),
    ("", "pods/binding", "create", "*"),
    ("", "pods/status", "patch", "*"),
    ("", "nodes", "get", "*"),
    ("", "nodes", "list", "*"),
    ("", "nodes", "watch", "*"),
    ("events.k8s.io", "events", "create", "*"),
    ("events.k8s.io", "events", "patch", "*"),
    ("berth.dev", "schedulerprofiles", "get", "*"),
    ("berth.dev", "schedulerprofiles", "list", "*"),
    ("berth.dev", "schedulerprofiles", "watch", "*"),
    ("berth.dev", "schedulerprofiles", "patch", "*"),
    ("berth.dev", "schedulerprofiles/status", "patch", "*"),
    ("kopf.dev", "clusterkopfpeerings", "list", "*"),
    ("kopf.dev", "clusterkopfpeerings", "watch", "*"),
    ("kopf.dev", "clusterkopfpeerings", "get", "berth"),
    ("kopf.dev", "clusterkopfpeerings", "patch", "berth"),
    ("apiextensions.k8s.io", "customresourcedefinitions", "list", "*"),
    ("apiextensions.k8s.io", "customresourcedefinitions", "watch", "*"),
    ("", "namespaces", "list", "*"),
    ("", "namespaces", "watch", "*"),
    ("", "services", "list", "*"),
    ("", "services", "watch", "*"),
    ("", "replicationcontrollers", "list", "*"),
    ("", "replicationcontrollers", "watch", "*"),
    ("apps", "replicasets", "list", "*"),
    ("apps", "replicasets", "watch", "*"),
    ("apps", "statefulsets", "list", "*"),
    ("apps", "statefulsets", "watch", "*"),
    ("policy", "poddisruptionbudgets", "get", "*"),
    ("policy", "poddisruptionbudgets", "list", "*"),
    ("policy", "poddisruptionbudgets", "watch", "*"),
    *(
        ("", resource, verb, "*")
        for resource in ("persistentvolumes", "persistentvolumeclaims")
        for verb in ("get", "list", "watch", "update", "patch")
    ),
    *(
        ("storage.k8s.io", resource, verb, "*")
        for resource in (
            "storageclasses",
            "csinodes",
            "csidrivers",
            "csistoragecapacities",
            "volumeattachments",
        )
        for verb in ("get", "list", "watch")
    ),
    # Dynamic Resource Allocation: upstream's system:kube-scheduler grants under v1.37's default
    # gates, without DRAExtendedResource's create/delete of claims (not implemented).
    *(
        ("resource.k8s.io", resource, verb, "*")
        for resource in ("deviceclasses", "resourceslices", "devicetaintrules")
        for verb in ("get", "list", "watch")
    ),
    *(
        ("resource.k8s.io", resource, verb, "*")
        for resource in ("resourceclaims", "resourceclaims/status")
        for verb in ("get", "list", "watch", "update", "patch")
    ),
    ("resource.k8s.io", "resourceclaims", "create", "*"),
    ("resource.k8s.io", "resourceclaims", "delete", "*"),
    ("resource.k8s.io", "resourceclaims/binding", "update", "*"),
    ("resource.k8s.io", "resourceclaims/binding", "patch", "*"),
}


def granted_permissions(role: Doc) -> set[tuple[str, str, str, str]]:
    return {
        (group, resource, verb, name)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
        for name in rule.get("resourceNames", ["*"])
    }


def test_cluster_role_grants_exactly_the_expected_permissions() -> None:
    granted = granted_permissions(the_one("ClusterRole", "berth"))
    assert sorted(granted - EXPECTED_PERMISSIONS) == [], "new permission"
    assert sorted(EXPECTED_PERMISSIONS - granted) == [], "missing permission"


# The leader-election Lease, in Berth's own namespace only: create cannot be narrowed by name.
EXPECTED_LEASE_PERMISSIONS = {
    ("coordination.k8s.io", "leases", "create", "*"),
    ("coordination.k8s.io", "leases", "get", "berth"),
    ("coordination.k8s.io", "leases", "update", "berth"),
}


def test_lease_role_grants_exactly_create_and_get_update_of_the_berth_lease() -> None:
    role = the_one("Role", "berth-leader-election")
    assert role["metadata"]["namespace"] == the_one("Namespace")["metadata"]["name"]
    assert granted_permissions(role) == EXPECTED_LEASE_PERMISSIONS


def test_lease_role_is_bound_to_the_deployments_service_account() -> None:
    binding = the_one("RoleBinding", "berth-leader-election")
    deployment = the_one("Deployment", "berth")
    assert binding["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "berth-leader-election",
    }
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": pod_spec()["serviceAccountName"],
            "namespace": deployment["metadata"]["namespace"],
        }
    ]


def test_the_lease_settings_default_to_the_role_s_lease_and_namespace() -> None:
    settings = Settings()
    assert settings.lease_name == "berth"
    assert (
        settings.lease_namespace
        == the_one("Role", "berth-leader-election")["metadata"]["namespace"]
    )


def test_there_are_no_other_roles() -> None:
    roles = [
        (doc["kind"], doc["metadata"]["name"])
        for doc in documents("manifests")
        if doc["kind"] in {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
    ]
    assert sorted(roles) == [
        ("ClusterRole", "berth"),
        ("ClusterRoleBinding", "berth"),
        ("Role", "berth-leader-election"),
        ("RoleBinding", "berth-leader-election"),
    ]


def test_cluster_role_is_bound_to_the_deployments_service_account() -> None:
    binding = the_one("ClusterRoleBinding", "berth")
    deployment = the_one("Deployment", "berth")
    account = the_one("ServiceAccount", pod_spec()["serviceAccountName"])
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "berth",
    }
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": account["metadata"]["name"],
            "namespace": deployment["metadata"]["namespace"],
        }
    ]
    assert account["metadata"]["namespace"] == deployment["metadata"]["namespace"]


# --- Pod Security "restricted" -------------------------------------------------------------------

RESTRICTED_VOLUME_TYPES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def test_namespace_enforces_pod_security_restricted() -> None:
    namespace = the_one("Namespace", the_one("Deployment", "berth")["metadata"]["namespace"])
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def effective_security(field: str) -> Any:
    """A container setting, falling back to the pod-level one as the kubelet does."""
    container_value = berth_container().get("securityContext", {}).get(field)
    return (
        container_value if container_value is not None else pod_spec()["securityContext"].get(field)
    )


@pytest.mark.parametrize(
    ("field", "check"),
    [
        pytest.param(field, check, id=field)
        for field, check in [
            ("runAsNonRoot", lambda value: value is True),
            ("runAsUser", lambda value: value == RUN_AS_USER),
            ("runAsGroup", lambda value: isinstance(value, int) and value > 0),
            ("seccompProfile", lambda value: value == {"type": "RuntimeDefault"}),
            ("allowPrivilegeEscalation", lambda value: value is False),
            ("privileged", lambda value: value in (None, False)),
            ("readOnlyRootFilesystem", lambda value: value is True),
            ("capabilities", lambda value: value == {"drop": ["ALL"]}),
        ]
    ],
)
def test_container_security_context_meets_restricted(field: str, check: Any) -> None:
    assert check(effective_security(field)), f"{field} = {effective_security(field)!r}"


def test_pod_uses_no_host_namespaces_ports_or_volumes() -> None:
    spec = pod_spec()
    assert not any(spec.get(field) for field in ("hostNetwork", "hostPID", "hostIPC"))
    assert all("hostPort" not in port for port in berth_container()["ports"])
    for volume in spec.get("volumes", []):
        assert set(volume) - {"name"} <= RESTRICTED_VOLUME_TYPES, volume["name"]


# --- Deployment wiring: what `berth run` and the other manifests agree on -----------------------


def test_deployment_runs_berth_with_two_replicas() -> None:
    deployment = the_one("Deployment", "berth")
    container = berth_container()
    assert deployment["spec"]["replicas"] == 2
    assert container["command"] == ["berth", "run"]
    assert container["image"] == "berth-scheduler:0.1.0"
    assert f"--metrics-port={METRICS_PORT}" in container["args"]
    # Berth is placed by the default scheduler, never by itself.
    assert pod_spec()["schedulerName"] == "default-scheduler"


def test_deployment_selector_matches_its_pods() -> None:
    deployment = the_one("Deployment", "berth")
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


def test_peering_argument_names_a_shipped_peering_object() -> None:
    (peering,) = [
        arg.split("=", 1)[1] for arg in berth_container()["args"] if arg.startswith("--peering=")
    ]
    assert the_one("ClusterKopfPeering", peering)["apiVersion"] == "kopf.dev/v1"


def test_kopf_identity_and_pod_facts_come_from_the_downward_api() -> None:
    env = {
        item["name"]: item["valueFrom"]["fieldRef"]["fieldPath"]
        for item in berth_container()["env"]
    }
    assert env == {
        "POD_ID": "metadata.name",
        "POD_NAME": "metadata.name",
        "POD_NAMESPACE": "metadata.namespace",
        "POD_IP": "status.podIP",
    }


@pytest.mark.parametrize(
    ("probe", "path"),
    [("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")],
)
def test_probe_targets_the_metrics_port(probe: str, path: str) -> None:
    http_get = berth_container()[probe]["httpGet"]
    ports = {port["name"]: port["containerPort"] for port in berth_container()["ports"]}
    assert (http_get["path"], ports[http_get["port"]]) == (path, METRICS_PORT)


def test_container_has_requests_and_limits() -> None:
    resources = berth_container()["resources"]
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}


def test_priority_class_is_shipped() -> None:
    assert the_one("PriorityClass", pod_spec()["priorityClassName"])["globalDefault"] is False


def test_metrics_service_selects_the_pods_and_port() -> None:
    service = the_one("Service", "berth-metrics")["spec"]
    pod_labels = the_one("Deployment", "berth")["spec"]["template"]["metadata"]["labels"]
    assert service["selector"].items() <= pod_labels.items()
    assert [(port["name"], port["port"], port["targetPort"]) for port in service["ports"]] == [
        ("metrics", METRICS_PORT, "metrics")
    ]


# --- Dockerfile ----------------------------------------------------------------------------------


def final_stage_instructions() -> list[tuple[str, str]]:
    lines = (REPO / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
    instructions = [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip())
        for line in lines
        if line.strip() and not line.lstrip().startswith("#")
    ]
    last_from = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    return instructions[last_from:]


def test_image_runs_as_the_deployments_numeric_user_with_an_exec_form_entrypoint() -> None:
    stage = final_stage_instructions()
    users = [value for keyword, value in stage if keyword == "USER"]
    assert users and re.fullmatch(r"(\d+)(:\d+)?", users[-1])
    assert int(users[-1].split(":")[0]) == RUN_AS_USER == effective_security("runAsUser")
    (entrypoint,) = [value for keyword, value in stage if keyword == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["berth"]
    # The final stage installs nothing: it copies the builder's virtualenv.
    assert not any("pip install" in value for keyword, value in stage if keyword == "RUN")
