"""Berth's storage watches fill its cache from a real API server, through kopf.

Berth's own kopf handlers for the seven storage kinds run in-process on a private registry
(so the test reads the app's cache directly); the API server is the real one, so the objects
arrive exactly as it serves them, defaults and all. A re-list then converges the cache to the
API after changes the watch did not see.
"""

from __future__ import annotations

from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.objects import unique_name
from berth.kube import handlers
from berth.kube.api import ApiSession, connection_info_from_kubeconfig
from berth.kube.app import BerthApp, Settings
from tests.cluster.in_process_watch import api_ready, kopf_watching, until
from tests.fakes import FakeBinder, FakeReporter
from tests.storage_builders import (
    make_attachment,
    make_capacity,
    make_class,
    make_csi_driver,
    make_csi_node,
    make_pv,
    make_pvc,
)

pytestmark = pytest.mark.cluster

STORAGE = "/apis/storage.k8s.io/v1"


async def test_the_storage_watches_fill_the_cache_and_a_relist_converges_it(
    control_plane: LocalControlPlane, namespace: str
) -> None:
    tag = unique_name("sw")
    node = f"{tag}-node"
    created = {
        "StorageClass": (f"{STORAGE}/storageclasses", make_class(f"{tag}-fast").obj()),
        "PersistentVolume": (
            "/api/v1/persistentvolumes",
            make_pv(f"{tag}-pv")
            .storage_class(f"{tag}-fast")
            .node_affinity("kubernetes.io/hostname", node)
            .obj(),
        ),
        "PersistentVolumeClaim": (
            f"/api/v1/namespaces/{namespace}/persistentvolumeclaims",
            make_pvc("data", namespace).storage_class(f"{tag}-fast").request("2Gi").obj(),
        ),
        "CSIDriver": (f"{STORAGE}/csidrivers", make_csi_driver(f"{tag}.csi.test").obj()),
        "CSINode": (
            f"{STORAGE}/csinodes",
            make_csi_node(node).driver(f"{tag}.csi.test", count=3).obj(),
        ),
        "CSIStorageCapacity": (
            f"{STORAGE}/namespaces/{namespace}/csistoragecapacities",
            make_capacity("cap", f"{tag}-fast", namespace)
            .topology(zone="a")
            .capacity("10Gi")
            .obj(),
        ),
        "VolumeAttachment": (
            f"{STORAGE}/volumeattachments",
            make_attachment(
                f"{tag}-va", attacher=f"{tag}.csi.test", node=node, pv=f"{tag}-pv"
            ).obj(),
        ),
    }
    keys = {
        "StorageClass": f"{tag}-fast",
        "PersistentVolume": f"{tag}-pv",
        "PersistentVolumeClaim": f"{namespace}/data",
        "CSIDriver": f"{tag}.csi.test",
        "CSINode": node,
        "CSIStorageCapacity": f"{namespace}/cap",
        "VolumeAttachment": f"{tag}-va",
    }
    info, _ = connection_info_from_kubeconfig(control_plane.admin_kubeconfig)
    session = ApiSession.from_connection_info(info)
    app = BerthApp(
        settings=Settings(), session=session, binder=FakeBinder(), reporter=FakeReporter()
    )
    storage = app.scheduler.cache.cluster.storage

    def held(kind: str) -> dict[str, Any]:
        return storage.held(kind)

    cluster_scoped: list[str] = []
    async with kopf_watching(app, info=info, register=handlers.watch_storage):
        for kind, (path, raw) in created.items():
            await session.post_json(path, api_ready(raw))
            if "/namespaces/" not in path:
                cluster_scoped.append(f"{path}/{keys[kind]}")
        for kind, key in keys.items():
            await until(lambda kind=kind, key=key: key in held(kind), f"{kind} {key}")

        claim = storage.claim(namespace, "data")
        assert claim is not None and claim.requested == 2 * 1024**3
        assert claim.storage_class == f"{tag}-fast"
        volume = storage.volume(f"{tag}-pv")
        assert volume is not None and volume.node_affinity_matches({"kubernetes.io/hostname": node})
        csi_node = storage.csi_node(node)
        assert csi_node is not None and csi_node.volume_limits() == {f"{tag}.csi.test": 3}
        assert [a.name for a in storage.attachments_on(node)] == [f"{tag}-va"]
        assert [c.name for c in storage.capacities_of_class(f"{tag}-fast")] == ["cap"]

        # An update and a deletion arrive through the watch.
        await session.patch_json(
            f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/data",
            {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": node}}},
        )
        await until(
            lambda: (c := storage.claim(namespace, "data")) is not None and c.selected_node == node,
            "the claim's selected node",
        )
        await session.delete_json(f"{STORAGE}/csidrivers/{tag}.csi.test")
        cluster_scoped.remove(f"{STORAGE}/csidrivers/{tag}.csi.test")
        await until(lambda: f"{tag}.csi.test" not in held("CSIDriver"), "the driver's deletion")

    # With the watch stopped, the API changes; a re-list (as on taking the lead) converges.
    try:
        await session.delete_json(f"{STORAGE}/storageclasses/{tag}-fast")
        cluster_scoped.remove(f"{STORAGE}/storageclasses/{tag}-fast")
        await session.post_json(
            f"/api/v1/namespaces/{namespace}/persistentvolumeclaims",
            api_ready(make_pvc("later", namespace).obj()),
        )
        await app._reconcile_from_api()
        assert f"{tag}-fast" not in held("StorageClass")
        assert storage.claim(namespace, "later") is not None
        assert storage.volume(f"{tag}-pv") is not None
    finally:
        for path in cluster_scoped:
            await session.delete_json(path)
        await session.close()
