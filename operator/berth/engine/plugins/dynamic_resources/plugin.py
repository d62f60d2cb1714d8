"""DynamicResources: pods get the devices their ResourceClaims ask for, as kube-scheduler v1.37.

Every extension point upstream implements, each in its own module: the pod's claims
(`pod_claims`, PreEnqueue), PreFilter and Filter (`filtering`), Score (`scoring`),
Reserve/Unreserve/PreBind (`binding`), PostFilter (below: free an allocated claim no
other pod uses when no node could take it) and the events that may help (`queueing`).
Extended resources backed by DRA (DRAExtendedResource: a DeviceClass serving its
`extendedResourceName`, or `deviceclass.resource.kubernetes.io/<class>`) get their devices
through one more claim, the one kube-scheduler creates for the pod (`extended*`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.dra.selection import SelectorCache, cel_selector_cache
from berth.engine.framework import names
from berth.engine.framework.claim_port import (
    ClaimStatusWriter,
    Deallocation,
    Deletion,
    UnservedClaimWriter,
    request_release,
)
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.handle import EventRecorder, Handle
from berth.engine.framework.interfaces import (
    FilterDiagnosis,
    PluginArgs,
    PostFilterResult,
    PreFilterResult,
    Scores,
)
from berth.engine.framework.status import SKIP, SUCCESS, Code, Status, error, unresolvable
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources import binding, queueing
from berth.engine.plugins.dynamic_resources.args import DynamicResourcesArgs
from berth.engine.plugins.dynamic_resources.cache import DraCache
from berth.engine.plugins.dynamic_resources.cycle import PodClaims
from berth.engine.plugins.dynamic_resources.extended import written_extended_claim
from berth.engine.plugins.dynamic_resources.extended_binding import release_extended_hold
from berth.engine.plugins.dynamic_resources.filtering import (
    filter_nodes,
    prepare,
    reserved_elsewhere,
)
from berth.engine.plugins.dynamic_resources.pod_claims import ClaimsNotReady, pod_claims
from berth.engine.plugins.dynamic_resources.scoring import score_nodes
from berth.engine.scoring.normalize import normalize_to_max

__all__ = ["DEALLOCATED", "DELETED", "DynamicResources", "new_plugin"]

DEALLOCATED = "deallocation of ResourceClaim completed"
DELETED = "deletion of ResourceClaim completed"


class _Inert:
    """The event recorder of a plugin built without a handle."""

    def record(
        self, pod: Pod, *, profile: str, event_type: str, reason: str, action: str, note: str
    ) -> None:
        pass


class DynamicResources:
    name = names.DYNAMIC_RESOURCES

    def __init__(
        self,
        args: DynamicResourcesArgs,
        *,
        cluster: Callable[[], ClusterState],  # the live cluster (PreEnqueue, queueing hints)
        writer: Callable[[], ClaimStatusWriter],
        events: Callable[[], EventRecorder],
        profile: Callable[[], str] = lambda: "",  # the schedulerName reporting its events
        clock: Callable[[], float] = time.monotonic,  # test seam: the filter timeout's clock
    ) -> None:
        self.args = args
        self._profile = profile
        self._cluster = cluster
        self._writer = writer
        self._events = events
        self._clock = clock
        # Compiled selectors outlive the cycle, as upstream's CEL cache does.
        self._selectors: SelectorCache | None = None

    def _selector_cache(self) -> SelectorCache:
        # Made with the first pod that has claims: it loads CEL's runtime.
        if self._selectors is None:
            self._selectors = cel_selector_cache()
        return self._selectors

    def _live(self) -> DraCache:
        return self._cluster().dra

    # ------------------------------------------------------------------ before the cycle

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.resource_claims:
            return SUCCESS
        try:
            pod_claims(pod, self._live())
        except ClaimsNotReady as reason:
            return unresolvable(str(reason))
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return queueing.events(self._live)

    # ------------------------------------------------------------------ the scheduling cycle

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        # Written before any check, as upstream does: PostFilter finds it whenever this
        # PreFilter ran, even when it rejected the pod.
        state.write(self.name, PodClaims(claims=[]))
        if not pod.resource_claims and not pod.extended_resource_containers:
            return PreFilterResult(SKIP)
        prepared = prepare(
            pod,
            state.cluster.dra,
            selectors=self._selector_cache(),
            filter_timeout=self.args.filter_timeout,
            clock=self._clock,
        )
        if isinstance(prepared, Status):
            return PreFilterResult(prepared)
        state.write(self.name, prepared)
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        prepared = state.get(self.name, PodClaims)
        if prepared is None or not prepared.claims:
            return accept_all(slots.size)
        return filter_nodes(
            state,
            pod,
            slots,
            prepared,
            binding_timeout=self.args.binding_timeout,
            now=self._writer().wall_time(),
            clock=self._clock,
        )

    def post_filter(
        self, state: CycleState, pod: Pod, diagnosis: FilterDiagnosis
    ) -> PostFilterResult:
        prepared = state.get(self.name, PodClaims)
        if prepared is None:
            # An earlier PreFilter rejected the pod before this one ran: upstream's state
            # lookup fails, and its error ends the pod's message.
            return PostFilterResult(error("not found"))
        for index in prepared.unavailable:
            if index == prepared.extended_index:
                continue
            claim = prepared.claims[index]
            if not reserved_elsewhere(claim, pod):
                # Freed devices may let this pod (or another) in on the next attempt. The
                # write is awaited before the cycle ends; a failure replaces this status.
                request_release(state, Deallocation(claim))
                return PostFilterResult(Status(Code.UNSCHEDULABLE, (DEALLOCATED,)))
        written = written_extended_claim(prepared)
        if written is not None:
            # Left by an earlier attempt: the next one builds the claim anew. Awaited like
            # a deallocation; a failure replaces this status.
            request_release(state, Deletion(written))
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (DELETED,)))
        return PostFilterResult(Status(Code.UNSCHEDULABLE))

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        prepared = state.get(self.name, PodClaims)
        if prepared is None:
            return score_nodes(state, slots, PodClaims(claims=[]))
        return score_nodes(state, slots, prepared)

    def normalize_scores(
        self, state: CycleState, pod: Pod, slots: NodeSlots, scores: Scores
    ) -> Scores:
        return normalize_to_max(scores)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        prepared = state.get(self.name, PodClaims)
        if prepared is None:
            return SUCCESS
        return binding.reserve(prepared, state.cluster.dra, node_name)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        prepared = state.get(self.name, PodClaims)
        if prepared is not None:
            binding.unreserve(state, prepared, pod)

    # ------------------------------------------------------------------ the binding cycle

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        prepared = state.get(self.name, PodClaims)
        return SUCCESS if prepared is not None and prepared.claims else SKIP

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        prepared = state.get(self.name, PodClaims)
        if prepared is None:
            return SUCCESS
        status = await binding.pre_bind(
            prepared,
            pod,
            node_name,
            cache=state.cluster.dra,
            writer=self._writer(),
            events=self._events(),
            profile=self._profile(),
            binding_timeout=self.args.binding_timeout,
        )
        if status.is_success:
            # The created claim now holds the devices Reserve held in flight.
            release_extended_hold(prepared, state.cluster.dra)
        return status


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> DynamicResources:
    """Validates `DynamicResourcesArgs`; without a handle the plugin sees an empty cluster."""
    parsed = DynamicResourcesArgs.parse(args)
    if handle is None:
        alone = ClusterState()
        unserved = UnservedClaimWriter()
        return DynamicResources(
            parsed, cluster=lambda: alone, writer=lambda: unserved, events=_Inert
        )
    # The services are attached when a scheduler starts serving the profile, after building.
    return DynamicResources(
        parsed,
        cluster=lambda: handle.services.cluster,
        writer=lambda: handle.services.claims,
        events=lambda: handle.services.events,
        profile=lambda: handle.profile_name,
    )
