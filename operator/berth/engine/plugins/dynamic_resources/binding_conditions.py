"""Device binding conditions: whether an allocated claim's devices are ready to use.

A driver may publish devices that need preparing (attaching a fabric device to the node)
before the pod can be bound: the allocation lists, per device, conditions that must turn
true in the claim's status.devices and failure conditions that must not. Filter treats a
claim whose preparation failed or timed out as not available (so PostFilter can free it);
PreBind waits for the conditions. The texts are kube-scheduler's.
"""

from __future__ import annotations

from datetime import datetime

from berth.engine.dra.claims import ResourceClaim

__all__ = [
    "BINDING_FAILED",
    "BINDING_TIMEOUT",
    "BindingFailed",
    "claim_ready",
    "claim_timed_out",
    "has_binding_conditions",
]

BINDING_TIMEOUT = "device binding timeout"
BINDING_FAILED = "device binding failed"


class BindingFailed(Exception):
    """A binding failure condition is true; `str()` is kube-scheduler's error."""


def has_binding_conditions(claim: ResourceClaim) -> bool:
    allocation = claim.allocation
    return allocation is not None and any(
        device.binding_conditions for device in allocation.devices
    )


def claim_ready(claim: ResourceClaim) -> bool:
    """All binding conditions true (trivially so without any); raises `BindingFailed`."""
    allocation = claim.allocation
    if allocation is None:
        return False
    for device in allocation.devices:
        if not device.binding_conditions:
            continue
        conditions = claim.device_conditions.get(
            (device.driver, device.pool, device.device, device.share_id)
        )
        if conditions is None:
            return False
        for failure in device.binding_failure_conditions:
            status, reason, message = conditions.get(failure, ("", "", ""))
            if status == "True":
                raise BindingFailed(
                    f'{BINDING_FAILED}: claim={claim.name}, reason={reason}, message="{message}"'
                )
        if any(conditions.get(wanted, ("",))[0] != "True" for wanted in device.binding_conditions):
            return False
    return True


def claim_timed_out(claim: ResourceClaim, *, timeout: float, now: float) -> bool:
    """Whether `timeout` seconds passed since the allocation of devices with conditions."""
    if claim.allocation is None or claim.allocation_timestamp is None:
        return False
    if not has_binding_conditions(claim):
        return False
    try:
        allocated = datetime.fromisoformat(claim.allocation_timestamp).timestamp()
    except ValueError:
        return False
    return allocated + timeout < now
