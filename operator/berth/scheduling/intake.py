"""Watch intake: pods, nodes and profiles as the watches and re-lists deliver them.

kube-scheduler's event handlers: assigned pods go to the cache, pending pods of a
served profile to the queue (with their nomination), everything else waits until
a profile serves it. A full listing converges cache and queue after a gap in the
watches; whatever the watch changed while the listing was taken is newer and wins.
Every change that may help pending pods is turned into a cluster event for the queue.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from berth.engine.framework.events import ClusterEvent
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.scheduling import cluster_events
from berth.scheduling.cache import SchedulerCache
from berth.scheduling.ports import Reporter
from berth.scheduling.profiles import LiveProfiles
from berth.scheduling.queue import SchedulingQueue

logger = logging.getLogger(__name__)


class Intake:
    def __init__(
        self,
        *,
        cache: SchedulerCache,
        queue: SchedulingQueue,
        profiles: LiveProfiles,
        reporter: Reporter,
    ) -> None:
        self._cache = cache
        self._queue = queue
        self._profiles = profiles
        self._reporter = reporter
        # Unassigned pods naming a schedulerName no live profile serves: they
        # join the queue as soon as a profile for their name appears.
        self._unserved: dict[str, Pod] = {}
        # While a full listing is being taken: nodes (names) and pods (UIDs) the watch
        # changed meanwhile, which the listing must not override (see reconcile()).
        self._watched_during_listing: tuple[set[str], set[str]] | None = None

    # ------------------------------------------------------------------ pods

    def on_pod(self, pod: Pod) -> None:
        """A pod was listed, added or changed."""
        if self._watched_during_listing is not None:
            self._watched_during_listing[1].add(pod.uid)
        self._apply_pod(pod)

    def _apply_pod(self, pod: Pod) -> None:
        if pod.is_terminal:
            self.on_pod_deleted(pod)
            return
        queue = self._queue
        if pod.node_name:
            self._unserved.pop(pod.uid, None)
            queue.delete(pod)
            previous = self._cache.upsert_pod(pod)
            event = (
                cluster_events.ASSIGNED_POD_ADD
                if previous is None
                else cluster_events.assigned_pod_update_event(previous, pod)
            )
            self.notify(event, previous, pod)
            return
        if self._profiles.for_pod(pod) is None or pod.terminating:
            queue.delete(pod)
            if pod.terminating:
                self._unserved.pop(pod.uid, None)
            else:
                self._unserved[pod.uid] = pod
            return
        self._unserved.pop(pod.uid, None)
        if self._cache.is_assumed(pod.uid):
            # Its binding cycle is under way (and may have published the chosen node as
            # its nomination): it holds its node as an assumed pod, not as a nomination.
            return
        queue.nominator.nominate(pod, pod.nominated_node_name)
        existing = queue.get(pod.uid)
        if existing is None:
            queue.add(pod)
        else:
            queue.update(existing.pod, pod)

    def on_pod_deleted(self, pod: Pod) -> None:
        if self._watched_during_listing is not None:
            self._watched_during_listing[1].add(pod.uid)
        self._unserved.pop(pod.uid, None)
        self._reporter.forget(pod.uid)
        framework = self._profiles.for_pod(pod)
        if framework is not None:
            # A pod deleted while it waits at Permit stops waiting (and is not bound).
            framework.waiting_pods.reject(pod.uid)
        self._queue.delete(pod)
        removed = self._cache.remove_pod(pod.uid)
        if removed is not None:
            self.notify(cluster_events.ASSIGNED_POD_DELETE, removed, None)

    # ------------------------------------------------------------------ nodes

    def on_node(self, node: Node) -> None:
        if self._watched_during_listing is not None:
            self._watched_during_listing[0].add(node.name)
        previous = self._cache.upsert_node(node)
        if previous is None:
            self.notify(cluster_events.NODE_ADD, None, node)
        else:
            self.notify(cluster_events.node_update_event(previous, node), previous, node)

    def on_node_deleted(self, name: str) -> None:
        if self._watched_during_listing is not None:
            self._watched_during_listing[0].add(name)
        previous = self._cache.remove_node(name)
        if previous is not None:
            self.notify(cluster_events.NODE_DELETE, previous, None)

    # ------------------------------------------------------------------ re-lists

    def begin_listing(self) -> None:
        """A full listing is about to be requested; remember what the watch changes meanwhile."""
        self._watched_during_listing = (set(), set())

    def reconcile(self, nodes: Iterable[Node], pods: Iterable[Pod]) -> None:
        """Converge the cache and the queue to a full listing from the API.

        The listing is a snapshot from when it was taken; whatever the watch changed
        since `begin_listing()` is newer and wins over it.
        """
        fresher_nodes, fresher_pods = self._watched_during_listing or (set(), set())
        self._watched_during_listing = None
        pod_list = [pod for pod in pods if pod.uid not in fresher_pods]
        ghosts = self._cache.reconcile(
            nodes, pod_list, fresher_nodes=fresher_nodes, fresher_pods=fresher_pods
        )
        if any(ghosts):
            logger.info("Reconciled the cache: dropped %d ghost node(s), %d ghost pod(s)", *ghosts)
        listed = {pod.uid for pod in pod_list} | fresher_pods
        self._unserved = {uid: pod for uid, pod in self._unserved.items() if uid in listed}
        for info in list(self._queue):
            if info.pod.uid not in listed:
                self._queue.delete(info.pod)
        for pod in pod_list:
            self._apply_pod(pod)

    # ------------------------------------------------------------------ profiles

    def profile_served(self, framework: Framework) -> None:
        """Pods that were waiting for this schedulerName join the queue."""
        for pod in [
            p for p in self._unserved.values() if p.scheduler_name == framework.profile_name
        ]:
            self._apply_pod(pod)

    def profile_removed(self, scheduler_name: str) -> None:
        for info in list(self._queue):
            if info.pod.scheduler_name == scheduler_name:
                self._queue.delete(info.pod)
                self._unserved[info.pod.uid] = info.pod

    def notify(
        self,
        event: ClusterEvent | None,
        old: object,
        new: object,
        *,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None:
        if event is not None:
            self._queue.on_cluster_event(event, old, new, pre_check=pre_check)
