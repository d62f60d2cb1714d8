"""A small volume provisioner for the local control plane: tests and the demo provision claims.

A real cluster runs one external-provisioner per CSI driver next to the
driver itself. Here there is no storage, so this thread stands in for both:
it follows every PersistentVolumeClaim, and when the PV controller has handed
one to its provisioner name and a scheduler has selected a node for it, it
creates the PersistentVolume that external-provisioner would (see
provisioning.py for exactly what). The PV controller in kube-controller-manager
then binds the pair, as it does in a real cluster, which is what a scheduler's
VolumeBinding PreBind waits for.

It reads claims, StorageClasses, Nodes and CSINodes and writes only
PersistentVolumes: never pods, nodes or claims. It never deletes a volume
(there is nothing behind one to release). A claim that cannot be provisioned
yet (say its node's CSINode is not there) is logged and retried every
`retry_interval` seconds until it can, or until it is bound or gone.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path
from typing import Any, Self

from berth.controlplane.client import ApiError, JsonObject, KubeClient
from berth.controlplane.provisioning import (
    SELECTED_NODE,
    ProvisioningError,
    claim_key,
    claim_wants_volume,
    provisioned_volume,
)
from berth.kube.api import ApiTransportError

__all__ = ["VolumeProvisioner"]

logger = logging.getLogger(__name__)

_CLAIMS = "/api/v1/persistentvolumeclaims"


class VolumeProvisioner:
    """Provisions claims handed to `provisioner` (a StorageClass's provisioner name).

    Runs its own event loop in a daemon thread: `start()`, then `stop()` (or
    use it as a context manager). `failures` holds, per claim `ns/name`, why
    its last attempt failed, for tests to show when a claim stays unbound.
    """

    def __init__(
        self,
        kubeconfig: Path,
        *,
        provisioner: str,
        topology: bool = True,
        retry_interval: float = 1.0,
    ) -> None:
        self.kubeconfig = kubeconfig
        self.provisioner = provisioner
        self.topology = topology
        self.retry_interval = retry_interval
        # external-provisioner's identity format: start time in ms, a number, the name.
        self.identity = f"{int(time.time() * 1000)}-{id(self) % 10000}-{provisioner}"
        self.failures: dict[str, str] = {}
        self.provisioned: set[str] = set()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()
        self._crash: BaseException | None = None

    # -- lifecycle (called from the owner's thread) ------------------------------------------

    def start(self) -> Self:
        if self._thread is not None:
            raise RuntimeError("provisioner already started")
        self._thread = threading.Thread(
            target=self._run, name=f"provisioner {self.provisioner}", daemon=True
        )
        self._thread.start()
        self._started.wait()
        return self

    def stop(self, *, timeout: float = 10.0) -> None:
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout)
        self._thread = None

    def failure_message(self) -> str | None:
        """Why the provisioner thread ended, if it ended by itself; None while it runs."""
        if self._crash is not None:
            return f"volume provisioner {self.provisioner} crashed: {self._crash!r}"
        if self._thread is not None and not self._thread.is_alive():
            return f"volume provisioner {self.provisioner} stopped"
        return None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:
            self._crash = error
            logger.exception("volume provisioner %s crashed", self.provisioner)
        finally:
            self._started.set()

    # -- the loop (inside the thread) -------------------------------------------------------

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        self._started.set()
        async with KubeClient.open(self.kubeconfig, concurrency=8) as client:
            tasks = [
                asyncio.create_task(self._follow_claims(client)),
                asyncio.create_task(self._retry_failures(client)),
            ]
            stop = asyncio.create_task(self._stopping.wait())
            done, _ = await asyncio.wait([stop, *tasks], return_when=asyncio.FIRST_COMPLETED)
            for task in [stop, *tasks]:
                task.cancel()
            await asyncio.gather(stop, *tasks, return_exceptions=True)
            for task in done - {stop}:
                error = task.exception()
                if error is not None:
                    raise error

    async def _follow_claims(self, client: KubeClient) -> None:
        """List, then watch, every claim; re-list when the watch ends or the server is away."""
        while True:
            try:
                claims, version = await client.list(_CLAIMS)
                for claim in claims:
                    await self._consider(client, claim)
                async for event in client.watch(_CLAIMS, resource_version=version):
                    if event["type"] in ("ADDED", "MODIFIED"):
                        await self._consider(client, event["object"])
            except ApiError as error:
                if error.status != 410 and error.status < 500:
                    raise
            except ApiTransportError:
                await asyncio.sleep(0.5)  # wait-ok: reconnect pacing while the server is away

    async def _retry_failures(self, client: KubeClient) -> None:
        while True:
            await asyncio.sleep(self.retry_interval)  # wait-ok: retry cadence, as a backoff
            for key in list(self.failures):
                namespace, name = key.split("/", 1)
                try:
                    claim = await client.get(
                        f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
                    )
                except ApiError as error:
                    if error.status == 404:
                        self.failures.pop(key, None)
                        continue
                    raise
                await self._consider(client, claim)

    async def _consider(self, client: KubeClient, claim: JsonObject) -> None:
        key = claim_key(claim)
        if not claim_wants_volume(claim, self.provisioner):
            self.failures.pop(key, None)
            return
        try:
            volume = await self._volume_for(client, claim)
            await client.create("/api/v1/persistentvolumes", volume)
        except ProvisioningError as error:
            self._failed(key, str(error))
            return
        except ApiError as error:
            if error.status != 409:  # 409: created by an earlier attempt (same name per claim)
                self._failed(key, f"claim {key}: {error}")
                return
        self.failures.pop(key, None)
        if key not in self.provisioned:
            self.provisioned.add(key)
            logger.info("provisioned a volume for claim %s", key)

    async def _volume_for(self, client: KubeClient, claim: JsonObject) -> JsonObject:
        key = claim_key(claim)
        class_name = (claim.get("spec") or {}).get("storageClassName")
        if not class_name:
            raise ProvisioningError(f"claim {key}: spec.storageClassName is not set")
        node_name = claim["metadata"]["annotations"][SELECTED_NODE]
        storage_class = await _get_or_none(
            client, f"/apis/storage.k8s.io/v1/storageclasses/{class_name}"
        )
        if storage_class is None:
            raise ProvisioningError(f"claim {key}: StorageClass {class_name} not found")
        node = await _get_or_none(client, f"/api/v1/nodes/{node_name}")
        if node is None:
            raise ProvisioningError(f"claim {key}: selected node {node_name} not found")
        csi_node = await _get_or_none(client, f"/apis/storage.k8s.io/v1/csinodes/{node_name}")
        return provisioned_volume(
            claim,
            storage_class,
            node=node,
            csi_node=csi_node,
            topology=self.topology,
            identity=self.identity,
        )

    def _failed(self, key: str, message: str) -> None:
        if self.failures.get(key) != message:
            logger.warning("cannot provision a volume yet: %s", message)
        self.failures[key] = message


async def _get_or_none(client: KubeClient, path: str) -> Any:
    try:
        return await client.get(path)
    except ApiError as error:
        if error.status == 404:
            return None
        raise
