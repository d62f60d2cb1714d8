"""Scheduler extenders (kube-scheduler's HTTP webhooks), as pure values and pure functions.

The configuration (`config`), which pods an extender sees and how its scores
count (`interest`), and the JSON bodies of the protocol (`wire`). Calling an
extender over HTTP is the kube layer's job (berth.kube.extender_client).
"""

from berth.engine.extenders.config import (
    DEFAULT_HTTP_TIMEOUT_SECONDS,
    MAX_EXTENDER_PRIORITY,
    MIN_EXTENDER_PRIORITY,
    ExtenderConfig,
    ExtenderTLSConfig,
    ManagedResource,
    in_call_order,
)
from berth.engine.extenders.interest import (
    extended_resource_name_problem,
    ignored_by_scheduler,
    is_interested,
    scaled_extender_score,
)
from berth.engine.extenders.wire import (
    FilterResult,
    HostPriority,
    MetaVictims,
    Victims,
    WireError,
    decode_binding_result,
    decode_filter_result,
    decode_host_priority_list,
    decode_preemption_result,
    encode_binding_args,
    encode_extender_args,
    encode_preemption_args,
    informer_node,
    informer_pod,
)

__all__ = [
    "DEFAULT_HTTP_TIMEOUT_SECONDS",
    "MAX_EXTENDER_PRIORITY",
    "MIN_EXTENDER_PRIORITY",
    "ExtenderConfig",
    "ExtenderTLSConfig",
    "FilterResult",
    "HostPriority",
    "ManagedResource",
    "MetaVictims",
    "Victims",
    "WireError",
    "decode_binding_result",
    "decode_filter_result",
    "decode_host_priority_list",
    "decode_preemption_result",
    "encode_binding_args",
    "encode_extender_args",
    "encode_preemption_args",
    "extended_resource_name_problem",
    "ignored_by_scheduler",
    "in_call_order",
    "informer_node",
    "informer_pod",
    "is_interested",
    "scaled_extender_score",
]
