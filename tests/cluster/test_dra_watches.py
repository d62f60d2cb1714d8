"""Berth's DRA watches fill its cache from a real API server, through kopf, as its ServiceAccount.

Berth's own kopf handlers for DeviceClasses, ResourceClaims, ResourceSlices and
DeviceTaintRules (resource.k8s.io/v1, served by default) run in-process on a private
registry, authenticated as ServiceAccount berth-system/berth bound to exactly
manifests/rbac.yaml: the watches, the re-list and a claim status write prove its DRA rules.
The objects are created as admin and arrive exactly as the API server serves them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.cli.cluster_snapshot import read_snapshot
from berth.controlplane import LocalControlPlane
from berth.controlplane.objects import unique_name
from berth.engine.dra.values import DeviceID
from berth.kube import handlers
from berth.kube.api import ApiSession, connection_info_from_kubeconfig
from berth.kube.app import BerthApp, Settings
from tests.cluster.in_process_watch import kopf_watching, until
from tests.fakes import FakeBinder, FakeReporter

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
RESOURCE = "/apis/resource.k8s.io/v1"


def _objects(tag: str, namespace: str) -> dict[str, tuple[str, dict[str, Any]]]:
    driver = f"{tag}.gpu.test"
    return {
        "DeviceClass": (
            f"{RESOURCE}/deviceclasses",
            {
                "metadata": {"name": f"{tag}-gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
            },
        ),
        "ResourceSlice": (
            f"{RESOURCE}/resourceslices",
            {
                "metadata": {"name": f"{tag}-node-a"},
                "spec": {
                    "driver": driver,
                    "nodeName": f"{tag}-node-a",
                    "pool": {"name": f"{tag}-node-a", "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {"name": f"gpu-{index}", "attributes": {"index": {"int": index}}}
                        for index in range(2)
                    ],
                },
            },
        ),
        "ResourceClaim": (
            f"{RESOURCE}/namespaces/{namespace}/resourceclaims",
            {
                "metadata": {"name": "one-gpu"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": f"{tag}-gpu"}}]
                    }
                },
            },
        ),
        "DeviceTaintRule": (
            f"{RESOURCE}/devicetaintrules",
            {
                "metadata": {"name": f"{tag}-broken"},
                "spec": {
                    "deviceSelector": {"driver": driver, "device": "gpu-1"},
                    "taint": {"key": "broken", "effect": "NoSchedule"},
                },
            },
        ),
    }


async def test_the_dra_watches_fill_the_cache_and_a_relist_converges_it(
    control_plane: LocalControlPlane, namespace: str
) -> None:
    tag = unique_name("dra")
    driver, pool = f"{tag}.gpu.test", f"{tag}-node-a"
    created = _objects(tag, namespace)
    keys = {
        "DeviceClass": f"{tag}-gpu",
        "ResourceSlice": f"{tag}-node-a",
        "ResourceClaim": f"{namespace}/one-gpu",
        "DeviceTaintRule": f"{tag}-broken",
    }
    berth_kubeconfig = control_plane.serviceaccount_kubeconfig("berth-system", "berth")
    control_plane.kubectl("apply", "-f", str(REPO / "manifests" / "rbac.yaml"))
    info, _ = connection_info_from_kubeconfig(berth_kubeconfig)
    admin = ApiSession.from_kubeconfig(control_plane.admin_kubeconfig)
    session = ApiSession.from_connection_info(info)
    app = BerthApp(
        settings=Settings(), session=session, binder=FakeBinder(), reporter=FakeReporter()
    )
    dra = app.scheduler.cache.cluster.dra
    claim_path = f"{RESOURCE}/namespaces/{namespace}/resourceclaims/one-gpu"
    cluster_scoped = [
        f"{path}/{keys[kind]}" for kind, (path, _) in created.items() if "/namespaces/" not in path
    ]
    try:
        async with kopf_watching(app, info=info, register=handlers.watch_dra):
            for path, raw in created.values():
                await admin.post_json(path, raw)
            for kind, key in keys.items():
                await until(lambda kind=kind, key=key: key in dra.held(kind), f"{kind} {key}")

            assert f"{tag}-gpu" in dra.device_classes()
            (patched,) = [s for s in dra.patched_slices() if s.driver == driver]
            assert [[t.key for t in device.taints] for device in patched.devices] == [
                [],
                ["broken"],
            ]
            assert not {d for d in dra.allocated_state().devices if d.driver == driver}

            # Allocating the claim (as the scheduler's PreBind does, through the status
            # subresource, as Berth) reaches the cache: the device is taken.
            await session.patch_json(
                f"{claim_path}/status",
                {
                    "status": {
                        "allocation": {
                            "devices": {
                                "results": [
                                    {
                                        "request": "gpu",
                                        "driver": driver,
                                        "pool": pool,
                                        "device": "gpu-0",
                                    }
                                ]
                            }
                        }
                    }
                },
            )
            await until(
                lambda: (
                    (claim := dra.claim(namespace, "one-gpu")) is not None
                    and claim.allocation is not None
                ),
                "the claim's allocation",
            )
            assert {d for d in dra.allocated_state().devices if d.driver == driver} == {
                DeviceID(driver, pool, "gpu-0")
            }

            await admin.delete_json(f"{RESOURCE}/devicetaintrules/{tag}-broken")
            cluster_scoped.remove(f"{RESOURCE}/devicetaintrules/{tag}-broken")
            await until(lambda: not dra.held("DeviceTaintRule"), "the rule's deletion")
            assert all(
                not device.taints
                for device in next(s for s in dra.patched_slices() if s.driver == driver).devices
            )

        # With the watch stopped, the API changes; a re-list (as on taking the lead) converges.
        await admin.delete_json(f"{RESOURCE}/deviceclasses/{tag}-gpu")
        cluster_scoped.remove(f"{RESOURCE}/deviceclasses/{tag}-gpu")
        await admin.delete_json(claim_path)
        await app._reconcile_from_api()
        assert dra.device_class(f"{tag}-gpu") is None
        assert dra.claim(namespace, "one-gpu") is None
        assert not {d for d in dra.allocated_state().devices if d.driver == driver}
        assert f"{tag}-node-a" in dra.held("ResourceSlice")
    finally:
        for path in cluster_scoped:
            await admin.delete_json(path)
        await admin.close()
        await session.close()


async def test_a_cluster_snapshot_reads_every_dra_kind_and_claim_templates(
    control_plane: LocalControlPlane, namespace: str
) -> None:
    tag = unique_name("drasnap")
    created = _objects(tag, namespace)
    template = {
        "metadata": {"name": "one-gpu"},
        "spec": {"spec": created["ResourceClaim"][1]["spec"]},
    }
    async with ApiSession.from_kubeconfig(control_plane.admin_kubeconfig) as admin:
        for path, raw in created.values():
            await admin.post_json(path, raw)
        await admin.post_json(f"{RESOURCE}/namespaces/{namespace}/resourceclaimtemplates", template)
        try:
            snapshot = await read_snapshot(admin)
        finally:
            for path, raw in created.values():
                if "/namespaces/" not in path:
                    await admin.delete_json(f"{path}/{raw['metadata']['name']}")
    # This test's objects: cluster-scoped ones carry its tag, namespaced ones its namespace.
    found = {
        (type(obj).__name__, obj.name)
        for obj in snapshot.dra
        if tag in obj.name or getattr(obj, "namespace", None) == namespace
    }
    assert found == {
        ("DeviceClass", f"{tag}-gpu"),
        ("ResourceSlice", f"{tag}-node-a"),
        ("DeviceTaintRule", f"{tag}-broken"),
        ("ResourceClaim", "one-gpu"),
        ("ResourceClaimTemplate", "one-gpu"),
    }
    assert not [w for w in snapshot.warnings if "resource.k8s.io" in w]
