"""What a plugin may use besides its cycle state: the framework's handle.

kube-scheduler hands every plugin factory a `Handle` (its framework) instead of
letting plugins reach for globals. Berth does the same: the handle is built with
the framework and given to each factory, typed, once. Through it a plugin sees
its profile's waiting pods, the nominator, the live cluster, an event recorder,
the API port that posts Bindings, the port that writes volume bindings
(VolumeBinding's PreBind), and the framework's own PreFilter/Filter runners (for
dry runs such as preemption's).

The ports are owned by whoever serves the profile (the scheduling layer); a
framework that nobody serves (the simulator, validation) gets inert ones. They
live in `FrameworkServices`, one per scheduler, attached when a profile starts
being served: a profile is built and validated before anyone knows which
scheduler will run it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework.claim_port import ClaimStatusWriter, UnservedClaimWriter
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Status
from berth.engine.framework.waiting_pods import WaitingPods
from berth.engine.model.pod import Pod

if TYPE_CHECKING:
    from berth.engine.framework.runtime import FilterOutcome

NominatedPods = Mapping[str, Sequence[Pod]]
"""Node name -> the pending pods nominated to it."""


class BindOutcome(Enum):
    BOUND = "bound"
    CONFLICT = "conflict"  # 409: already assigned, UID mismatch, gated or being deleted
    GONE = "gone"  # 404: the pod no longer exists
    FAILED = "failed"  # anything else: retry with backoff


@dataclass(frozen=True, slots=True)
class BindResult:
    outcome: BindOutcome
    message: str = ""


class Binder(Protocol):
    """The API port that binds: the kube layer posts a v1 Binding; tests fake it."""

    async def bind(self, pod: Pod, node_name: str) -> BindResult:
        """POST a v1 Binding (name, namespace and UID of `pod`; target Node `node_name`)."""
        ...


@dataclass(frozen=True, slots=True)
class ClaimReference:
    """The PersistentVolumeClaim a PV's `spec.claimRef` is to name (with the claim's version)."""

    namespace: str
    name: str
    uid: str
    resource_version: str


@dataclass(frozen=True, slots=True)
class VolumeWrite:
    """The answer to one PV or PVC write: the version the API server stored, or its refusal."""

    resource_version: str = ""
    error: str = ""  # "" when written; else the API server's message (or why nothing was sent)

    @property
    def written(self) -> bool:
        return not self.error


class VolumeBindingWriter(Protocol):
    """The API port through which VolumeBinding's PreBind writes what it decided, as
    kube-scheduler's volume binder does, and paces its wait for the PV controller.

    Both writes are optimistic: they carry the version the decision was made on, so the
    API server refuses them (409) when the object changed since.
    """

    async def bind_volume(
        self,
        *,
        volume: str,
        resource_version: str,
        claim: ClaimReference,
        bound_by_controller: bool,
    ) -> VolumeWrite:
        """Set PV `volume`'s claimRef to `claim` (and the bound-by-controller annotation)."""
        ...

    async def select_node(
        self, *, namespace: str, claim: str, resource_version: str, node_name: str
    ) -> VolumeWrite:
        """Annotate claim `namespace/claim` with the node chosen for its provisioning."""
        ...

    def now(self) -> float:
        """Monotonic seconds: what the bind timeout is measured in."""
        ...

    async def pause(self, seconds: float) -> None:
        """Wait between two looks at the cluster while the PV controller binds."""
        ...


class Nominator(Protocol):
    def nominated_pods(self) -> NominatedPods:
        """Pending pods nominated to each node by a preemption."""
        ...


class EventRecorder(Protocol):
    """Events about a pod, as plugins record them through kube-scheduler's handle: reported
    by the profile's schedulerName, repeats aggregated. Must not block."""

    def record(
        self, pod: Pod, *, profile: str, event_type: str, reason: str, action: str, note: str
    ) -> None: ...


_NOT_SERVED = "this profile is not served by a scheduler"


class _Unserved:
    """The ports of a framework that no scheduler serves (simulation, validation)."""

    async def bind(self, pod: Pod, node_name: str) -> BindResult:
        return BindResult(BindOutcome.FAILED, _NOT_SERVED)

    def nominated_pods(self) -> NominatedPods:
        return {}

    async def bind_volume(
        self,
        *,
        volume: str,
        resource_version: str,
        claim: ClaimReference,
        bound_by_controller: bool,
    ) -> VolumeWrite:
        return VolumeWrite(error=_NOT_SERVED)

    async def select_node(
        self, *, namespace: str, claim: str, resource_version: str, node_name: str
    ) -> VolumeWrite:
        return VolumeWrite(error=_NOT_SERVED)

    def now(self) -> float:
        # No time to wait in: a bind timeout measured from here has always run out.
        return math.inf

    async def pause(self, seconds: float) -> None:
        pass

    def record(
        self, pod: Pod, *, profile: str, event_type: str, reason: str, action: str, note: str
    ) -> None:
        pass


_UNSERVED = _Unserved()


@dataclass(slots=True)
class FrameworkServices:
    """The ports one scheduler lends to every profile it serves."""

    binder: Binder = _UNSERVED
    nominator: Nominator = _UNSERVED
    events: EventRecorder = _UNSERVED
    volumes: VolumeBindingWriter = _UNSERVED
    cluster: ClusterState = field(default_factory=ClusterState)
    claims: ClaimStatusWriter = field(default_factory=UnservedClaimWriter)


class PluginsRunner(Protocol):
    """The framework's own PreFilter and Filter passes, for plugins that run dry runs."""

    def run_pre_filter(
        self, state: CycleState, pod: Pod
    ) -> tuple[Status, frozenset[str] | None]: ...

    def run_filters(self, state: CycleState, pod: Pod, slots: NodeSlots) -> FilterOutcome: ...


class Handle(PluginsRunner, Protocol):
    """The framework as a plugin sees it."""

    @property
    def profile_name(self) -> str: ...

    @property
    def waiting_pods(self) -> WaitingPods: ...

    @property
    def services(self) -> FrameworkServices: ...
