"""The Dynamic Resource Allocation objects the scheduler reads, kept beside nodes and pods.

kube-scheduler's DynamicResources plugin reads DeviceClasses, ResourceClaims (through an
assume cache) and ResourceSlices patched with DeviceTaintRules (through its slice tracker)
from informers. Berth keeps them here, fed by the watches or the simulator's input:

- claims sit in an assume store: Reserve assumes a claim with its allocation so the next
  pod's decision sees those devices taken; Unreserve restores it; the API's newer version
  replaces the assumption;
- the slices, patched with the taint rules, are indexed for the allocator (`slice_index`),
  rebuilt only when a slice or rule changed (`slice_generation`);
- `allocated_state` is what every allocated or assumed claim holds, kept claim by claim and
  copied out again only when a claim changed (`claim_generation`);
- a claim made only in memory (the one for a pod's extended resources backed by DRA,
  which PreBind creates) cannot be assumed: its allocation is held in flight from Reserve
  (`hold_in_flight`) until PreBind succeeded or Unreserve ran, and counts as taken;
- `on_claim_assumption`, when set, hears what upstream's assume cache reports as claim
  updates: assuming a version newer than the API's (what a status write returned) and
  restoring one. An allocation assumed at Reserve (on the API's own version) is in flight
  upstream, outside that cache, and reported to no one.

Every change bumps `generation`, so a plugin can keep what it derives from these objects
for as long as nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from berth.engine.cluster.storage import StorageStore
from berth.engine.cluster.storage_assume import AssumeStore
from berth.engine.dra.allocated_state import AllocatedState, AllocationTally
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.extended_resources import classes_by_extended_resource
from berth.engine.dra.pools import SliceIndex
from berth.engine.dra.slices import ResourceSlice
from berth.engine.dra.taint_rules import DeviceTaintRule, apply_taint_rules

__all__ = ["DRA_KINDS", "DraObject", "DraObjects", "dra_kind"]


class DraObjects:
    """Every DRA object the scheduler reads, with what the allocator derives from them."""

    def __init__(self) -> None:
        self.generation = 0
        self.claim_generation = 0  # bumped on any claim change, assumptions included
        self.slice_generation = 0  # bumped on any slice or taint rule change
        self.classes: StorageStore[DeviceClass] = StorageStore("DeviceClass")
        self.claims: AssumeStore[ResourceClaim] = AssumeStore("ResourceClaim")
        self.slices: StorageStore[ResourceSlice] = StorageStore("ResourceSlice")
        self.taint_rules: StorageStore[DeviceTaintRule] = StorageStore("DeviceTaintRule")
        self._class_map: dict[str, DeviceClass] | None = None
        self._extended_map: dict[str, DeviceClass] | None = None
        # In-memory claims allocated in Reserve, by their temporary UID.
        self._in_flight: dict[str, ResourceClaim] = {}
        self._slice_index: tuple[int, SliceIndex] | None = None
        self._allocated: tuple[int, AllocatedState] | None = None
        self._tally = AllocationTally()
        # (as readers saw it, as they see it now); the live scheduler turns it into an event.
        self.on_claim_assumption: Callable[[ResourceClaim, ResourceClaim], None] | None = None

    # ------------------------------------------------------------------ lookups

    def device_class(self, name: str) -> DeviceClass | None:
        return self.classes.get(name)

    def device_classes(self) -> Mapping[str, DeviceClass]:
        """Every DeviceClass by name (what `Allocator(classes=...)` takes); do not mutate."""
        if self._class_map is None:
            self._class_map = {
                device_class.name: device_class for device_class in self.classes.values()
            }
        return self._class_map

    def classes_by_extended_resource(self) -> Mapping[str, DeviceClass]:
        """Extended resource name -> the DeviceClass serving it; do not mutate."""
        if self._extended_map is None:
            self._extended_map = classes_by_extended_resource(self.device_classes())
        return self._extended_map

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """A ResourceClaim, as assumed (or as the API has it)."""
        return self.claims.get(f"{namespace}/{name}")

    def all_claims(self) -> Iterable[ResourceClaim]:
        """Every claim, each as assumed (or as the API has it)."""
        return self.claims.values()

    def patched_slices(self) -> list[ResourceSlice]:
        """Every ResourceSlice with the DeviceTaintRules' taints added to its devices."""
        rules = list(self.taint_rules.values())
        if not rules:
            return list(self.slices.values())
        return [apply_taint_rules(resource_slice, rules) for resource_slice in self.slices.values()]

    def slice_index(self) -> SliceIndex:
        """The patched slices indexed for the allocator; rebuilt only after a slice or rule change."""
        cached = self._slice_index
        if cached is None or cached[0] != self.slice_generation:
            cached = (self.slice_generation, SliceIndex(self.patched_slices()))
            self._slice_index = cached
        return cached[1]

    def allocated_state(self) -> AllocatedState:
        """Devices (and shared capacity) taken by every allocated claim, assumed ones included.

        Copied from the running tally only after a claim change.
        """
        cached = self._allocated
        if cached is None or cached[0] != self.claim_generation:
            cached = (self.claim_generation, self._tally.state())
            self._allocated = cached
        return cached[1]

    # ------------------------------------------------------------------ assumptions (the plugin)

    def assume_claim(self, claim: ResourceClaim) -> None:
        """Readers see `claim` (e.g. with its allocation) until the API reports a newer version.

        `claim` is made from the cached version, or is what an API write returned. Raises
        `AssumeConflictError` if the cache holds no such claim or a newer version of it.
        """
        seen = self.claims.get(claim.key)
        api = self.claims.get_api(claim.key)
        self.claims.assume(claim)
        self._claims_changed(claim.key)
        self._report(seen, claim, assumed=claim, api=api)

    def restore_claim(self, namespace: str, name: str) -> None:
        """Drop the assumption about a claim (Unreserve, a failed PreBind)."""
        key = f"{namespace}/{name}"
        if self.claims.is_assumed(key):
            assumed = self.claims.get(key)
            self.claims.restore(key)
            self._claims_changed(key)
            api = self.claims.get_api(key)
            self._report(assumed, api, assumed=assumed, api=api)

    def hold_in_flight(self, claim: ResourceClaim) -> None:
        """Count the devices of an allocated claim that exists only in memory (by its UID)."""
        self._in_flight[claim.uid] = claim
        self._in_flight_changed(claim.uid)

    def release_in_flight(self, uid: str) -> bool:
        """Stop counting an in-memory claim's devices; whether one was held."""
        if self._in_flight.pop(uid, None) is None:
            return False
        self._in_flight_changed(uid)
        return True

    def in_flight_claims(self) -> list[ResourceClaim]:
        """The in-memory claims held (what a simulation turns into API objects)."""
        return list(self._in_flight.values())

    def is_assumed(self, namespace: str, name: str) -> bool:
        return self.claims.is_assumed(f"{namespace}/{name}")

    def assumed_claims(self) -> list[ResourceClaim]:
        """Every standing assumption (claims allocated in Reserve, not yet reported back)."""
        return self.claims.assumed_values()

    # ------------------------------------------------------------------ changes (watch, simulator)

    def upsert(self, obj: DraObject) -> DraObject | None:
        """Add or replace any DRA object (the API's version); returns the previous API version."""
        if isinstance(obj, ResourceClaim):
            previous_claim = self.claims.upsert(obj)
            self._claims_changed(obj.key)
            return previous_claim
        if isinstance(obj, DeviceClass):
            self._class_map = self._extended_map = None
            previous: DraObject | None = self.classes.upsert(obj)
        elif isinstance(obj, ResourceSlice):
            previous = self.slices.upsert(obj)
            self.slice_generation += 1
        else:
            previous = self.taint_rules.upsert(obj)
            self.slice_generation += 1
        self.generation += 1
        return previous

    def remove(self, kind: str, key: str) -> DraObject | None:
        """Remove the object of `kind` (an API kind name) with `key`; returns what was held."""
        removed: DraObject | None
        if kind == "ResourceClaim":
            removed = self.claims.remove(key)
            if removed is not None:
                self._claims_changed(key)
            return removed
        if kind == "DeviceClass":
            removed = self.classes.remove(key)
            self._class_map = self._extended_map = None
        elif kind in ("ResourceSlice", "DeviceTaintRule"):
            store = self.slices if kind == "ResourceSlice" else self.taint_rules
            removed = store.remove(key)
            if removed is not None:
                self.slice_generation += 1
        else:
            raise ValueError(f"not a DRA kind: {kind!r}")
        if removed is not None:
            self.generation += 1
        return removed

    def held(self, kind: str) -> dict[str, DraObject]:
        """The API's version of every object of `kind`, by key (what a re-list compares with)."""
        stores: dict[str, Iterable[DraObject]] = {
            "DeviceClass": self.classes.values(),
            "ResourceClaim": self.claims.api_values(),
            "ResourceSlice": self.slices.values(),
            "DeviceTaintRule": self.taint_rules.values(),
        }
        objects = stores.get(kind)
        if objects is None:
            raise ValueError(f"not a DRA kind: {kind!r}")
        return {obj.key: obj for obj in objects}

    def _report(
        self,
        old: ResourceClaim | None,
        new: ResourceClaim | None,
        *,
        assumed: ResourceClaim | None,
        api: ResourceClaim | None,
    ) -> None:
        # Only an assumption on another version than the API's is one upstream's cache holds.
        if self.on_claim_assumption is None or old is None or new is None:
            return
        if (
            assumed is not None
            and api is not None
            and assumed.resource_version != api.resource_version
        ):
            self.on_claim_assumption(old, new)

    def _claims_changed(self, key: str) -> None:
        self._tally_claim(key, self.claims.get(key))

    def _in_flight_changed(self, uid: str) -> None:
        # Tallied under a key no namespace/name key can be.
        self._tally_claim(f"in flight {uid}", self._in_flight.get(uid))

    def _tally_claim(self, key: str, held: ResourceClaim | None) -> None:
        self._tally.set(key, None if held is None else held.allocation)
        self.claim_generation += 1
        self.generation += 1


DraObject = DeviceClass | ResourceClaim | ResourceSlice | DeviceTaintRule
"""Any of the DRA kinds the scheduler reads."""

_KIND_OF: dict[type, str] = {
    DeviceClass: "DeviceClass",
    ResourceClaim: "ResourceClaim",
    ResourceSlice: "ResourceSlice",
    DeviceTaintRule: "DeviceTaintRule",
}

DRA_KINDS: tuple[str, ...] = tuple(_KIND_OF.values())
"""The API kind names of the DRA objects the scheduler reads."""


def dra_kind(obj: DraObject) -> str:
    """The API kind name of a DRA object."""
    return _KIND_OF[type(obj)]
