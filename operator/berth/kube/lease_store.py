"""The Lease as leader election sees it, and its store on the API server (GET, POST, PUT).

Separate from the election rules (lease.py) so that those are tested on a fake
store; `ApiLeaseStore` is the only place that knows the Lease's JSON and turns
HTTP answers into the two failures the elector distinguishes: the Lease changed
meanwhile (`LeaseConflict`, someone else won the round) or could not be reached
(`LeaseUnavailable`, try again next round).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from berth.kube.api import ApiError, ApiSession, ApiTransportError

__all__ = [
    "ApiLeaseStore",
    "LeaseConflict",
    "LeaseRecord",
    "LeaseSnapshot",
    "LeaseStore",
    "LeaseUnavailable",
]


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The Lease spec fields leader election uses (client-go's LeaderElectionRecord)."""

    holder: str
    lease_duration_seconds: int
    acquire_time: str
    renew_time: str
    transitions: int

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> LeaseRecord:
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder or None,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time or None,
            "renewTime": self.renew_time or None,
            "leaseTransitions": self.transitions,
        }
        return {key: value for key, value in spec.items() if value is not None}


@dataclass(frozen=True, slots=True)
class LeaseSnapshot:
    record: LeaseRecord
    resource_version: str


class LeaseConflict(Exception):
    """The Lease changed since it was read (409), or was created by someone else meanwhile."""


class LeaseUnavailable(Exception):
    """The Lease could not be read or written (network, 5xx, 403...): try again next round."""


class LeaseStore(Protocol):
    async def get(self) -> LeaseSnapshot | None:
        """The Lease as it is now, or None if it does not exist."""
        ...

    async def create(self, record: LeaseRecord) -> str:
        """Create the Lease; its resourceVersion. LeaseConflict if it exists already."""
        ...

    async def update(self, record: LeaseRecord, *, resource_version: str) -> str:
        """Replace the spec if the Lease is still at `resource_version`; the new resourceVersion."""
        ...


class ApiLeaseStore:
    """`LeaseStore` on one named Lease through the shared API session (GET, POST, PUT)."""

    def __init__(self, session: ApiSession, *, namespace: str, name: str) -> None:
        self._session = session
        self._namespace = namespace
        self._name = name
        self._collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self._metadata: dict[str, Any] = {}  # as last read: an update keeps labels and annotations

    def describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    async def get(self) -> LeaseSnapshot | None:
        try:
            lease = await self._session.get_json(f"{self._collection}/{self._name}")
        except ApiError as error:
            if error.status == 404:
                return None
            raise LeaseUnavailable(f"GET lease {self.describe()}: {error}") from error
        except ApiTransportError as error:
            raise LeaseUnavailable(f"GET lease {self.describe()}: {error}") from error
        return self._remember(lease)

    async def create(self, record: LeaseRecord) -> str:
        body = self._body({"name": self._name, "namespace": self._namespace}, record)
        lease = await self._write("POST", self._collection, body)
        return self._remember(lease).resource_version

    async def update(self, record: LeaseRecord, *, resource_version: str) -> str:
        metadata = {
            **(self._metadata or {"name": self._name, "namespace": self._namespace}),
            "resourceVersion": resource_version,
        }
        lease = await self._write(
            "PUT", f"{self._collection}/{self._name}", self._body(metadata, record)
        )
        return self._remember(lease).resource_version

    @staticmethod
    def _body(metadata: dict[str, Any], record: LeaseRecord) -> dict[str, Any]:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": metadata,
            "spec": record.to_spec(),
        }

    async def _write(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            lease: dict[str, Any] = await self._session.request(method, path, body=body)
        except ApiError as error:
            if error.status == 409:
                raise LeaseConflict(f"{method} lease {self.describe()}: {error}") from error
            raise LeaseUnavailable(f"{method} lease {self.describe()}: {error}") from error
        except ApiTransportError as error:
            raise LeaseUnavailable(f"{method} lease {self.describe()}: {error}") from error
        return lease

    def _remember(self, lease: dict[str, Any]) -> LeaseSnapshot:
        metadata = dict(lease.get("metadata") or {})
        self._metadata = {
            key: metadata[key]
            for key in ("name", "namespace", "uid", "labels", "annotations")
            if key in metadata
        }
        return LeaseSnapshot(
            LeaseRecord.from_spec(lease.get("spec") or {}), str(metadata.get("resourceVersion", ""))
        )
