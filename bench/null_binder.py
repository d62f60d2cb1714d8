"""The null binder: binds every pending pod to the next node round-robin, with no logic.

It measures the ceiling C of this machine's control plane for "create + bind +
watch": whatever a real scheduler adds on top is scheduling. It runs as its
own process (`python -m bench.null_binder`) so the driver measures it exactly
like the other schedulers (its own /proc CPU and RSS, and no share of the
driver's event loop). The only filters: pods labelled as churn (built to be
unschedulable) are left alone, and nodes with no pod capacity get no pods.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from pathlib import Path
from typing import Any

from bench.workloads import CHURN_LABEL
from berth.controlplane.client import ApiError, KubeClient

logger = logging.getLogger("null-binder")

SCHEDULER_NAME = "bench-null-binder"
IN_FLIGHT = 64


class NodeRing:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.next = 0
        self.changed = asyncio.Event()

    def update(self, kind: str, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        capacity = (node.get("status") or {}).get("capacity") or {}
        usable = kind != "DELETED" and capacity.get("pods", "0") != "0"
        if usable and name not in self.names:
            self.names.append(name)
            self.changed.set()
        elif not usable and name in self.names:
            self.names.remove(name)

    async def take(self) -> str:
        while not self.names:
            self.changed.clear()
            await self.changed.wait()
        name = self.names[self.next % len(self.names)]
        self.next += 1
        return name


async def _follow(
    client: KubeClient, path: str, params: dict[str, str], handle: Any, listed: asyncio.Event
) -> None:
    """List, then watch from the list's resourceVersion, forever (re-listing on 410)."""
    while True:
        items, version = await client.list(path, params=params)
        for item in items:
            handle("ADDED", item)
        listed.set()
        try:
            while True:
                async for event in client.watch(
                    path, resource_version=version, params=params, timeout_seconds=1800
                ):
                    kind = event["type"]
                    obj = event["object"]
                    version = obj.get("metadata", {}).get("resourceVersion", version)
                    if kind != "BOOKMARK":
                        handle(kind, obj)
        except ApiError as error:
            if error.status != 410:
                raise


async def run(kubeconfig: Path, ready_file: Path | None) -> None:
    async with KubeClient.open(kubeconfig, concurrency=IN_FLIGHT) as client:
        ring = NodeRing()
        seen: set[tuple[str, str]] = set()
        tasks: set[asyncio.Task[None]] = set()
        pods_listed, nodes_listed = asyncio.Event(), asyncio.Event()

        async def bind(namespace: str, name: str) -> None:
            node = await ring.take()
            body = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            }
            for attempt in range(5):
                try:
                    await client.create(f"/api/v1/namespaces/{namespace}/pods/{name}/binding", body)
                    return
                except ApiError as error:
                    if error.status in (404, 409):  # deleted, or bound already
                        return
                    logger.warning(
                        "bind %s/%s failed (attempt %d): %s", namespace, name, attempt, error
                    )
                    await asyncio.sleep(0.1 * (attempt + 1))

        def on_pod(kind: str, pod: dict[str, Any]) -> None:
            metadata = pod["metadata"]
            key = (metadata["namespace"], metadata["name"])
            if kind == "DELETED":
                seen.discard(key)
                return
            if key in seen or pod["spec"].get("nodeName"):
                return
            seen.add(key)
            task = asyncio.get_running_loop().create_task(bind(*key))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        pods = _follow(
            client,
            "/api/v1/pods",
            {
                "fieldSelector": f"spec.schedulerName={SCHEDULER_NAME},spec.nodeName=",
                "labelSelector": f"!{CHURN_LABEL}",
            },
            on_pod,
            pods_listed,
        )
        nodes = _follow(client, "/api/v1/nodes", {}, ring.update, nodes_listed)
        watchers = [asyncio.ensure_future(nodes), asyncio.ensure_future(pods)]
        await pods_listed.wait()
        await nodes_listed.wait()
        if ready_file is not None:
            ready_file.write_text("ready\n")
        try:
            await asyncio.gather(*watchers)
        finally:
            for watcher in watchers:
                watcher.cancel()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--ready-file", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    loop = asyncio.new_event_loop()
    main_task = loop.create_task(run(args.kubeconfig, args.ready_file))
    loop.add_signal_handler(signal.SIGTERM, main_task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        loop.run_until_complete(main_task)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
