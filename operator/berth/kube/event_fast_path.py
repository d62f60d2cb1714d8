"""A short path through kopf for watch events of kinds that only have plain `on.event` handlers.

kopf stays what watches every kind: its LIST and WATCH, reconnects, 410 re-lists,
pausing by peering and its per-object ordering are untouched. What it does *per
event* before calling an `@kopf.on.event` handler is built for state-tracking
handlers and costs most of its time: a per-object memory kept until the object is
deleted, a body wrapper, a patch, three loggers, cause detection with a diff-base,
handler state and the keyword arguments of every handler (about half a millisecond
per event on a 2-core machine, two events per scheduled pod).

For a kind whose only handlers are `async def` `on.event` handlers without filters,
timeouts or retries that take nothing but `event` and `memo` (every watch of Berth's
is written that way, so any kind added later gets the short path by following the
same shape), each event is handed straight to them. What kopf promises those
handlers stays: they run in order per object, after every kind's initial listing is
indexed, and an exception is logged and ignored, never retried. Every other kind
(Berth's own SchedulerProfiles, with a daemon) goes through kopf's full processing.

kopf has no public hook for its event processor, so `install()` replaces the module
attribute that kopf's `spawn_tasks` reads (kopf._core.reactor.processing) before the
operator starts; the eligibility checks read kopf's registry, which is private too.
Both are pinned by tests against the installed kopf; if its layout differs, nothing
is replaced and kopf's own path runs.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import kopf

logger = logging.getLogger(__name__)

__all__ = ["install", "short_path_handlers"]

# The only arguments a handler on the short path may name; anything else would need
# kopf's full keyword arguments.
SHORT_PATH_ARGUMENTS = frozenset({"event", "memo"})

EventHandler = Callable[..., Awaitable[Any]]
_processing: Any = None  # kopf._core.reactor.processing, once installed
_kopf_processor: Any = None
# (registry, resource) -> the handlers of the short path, or None: decided on first use.
_decided: dict[tuple[int, Any], list[EventHandler] | None] = {}


def _takes_only_event_and_memo(fn: Callable[..., Any]) -> bool:
    if not inspect.iscoroutinefunction(fn):
        return False  # kopf runs sync handlers in its thread pool: keep its way
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        if parameter.name not in SHORT_PATH_ARGUMENTS or parameter.kind not in (
            inspect.Parameter.KEYWORD_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            return False
    return True


def short_path_handlers(registry: Any, resource: Any) -> list[EventHandler] | None:
    """The handlers to call directly for `resource`'s events, or None for kopf's full path."""
    matching = [
        handler
        for handler in registry._watching.get_all_handlers()
        if handler.selector is not None and handler.selector.check(resource)
    ]
    if not matching:
        return None
    for other in (registry._changing, registry._spawning, registry._indexing):
        if other.has_handlers(resource=resource):
            return None
    for handler in matching:
        plain = (
            handler.labels is None
            and handler.annotations is None
            and handler.when is None
            and handler.field is None
            and handler.value is None
            and handler.timeout is None
            and handler.retries is None
        )
        if not plain or not _takes_only_event_and_memo(handler.fn):
            return None
    return [handler.fn for handler in matching]


async def _process(
    *,
    registry: Any,
    resource: Any,
    raw_event: Mapping[str, Any],
    memobase: Any,
    resource_indexed: Any = None,
    operator_indexed: Any = None,
    **kopf_arguments: Any,
) -> str | None:
    """kopf's event processor, with the short path for event-only kinds."""
    key = (id(registry), resource)
    try:
        handlers = _decided[key]
    except KeyError:
        handlers = _decided[key] = short_path_handlers(registry, resource)
    if handlers is None:
        result: str | None = await _kopf_processor(
            registry=registry,
            resource=resource,
            raw_event=raw_event,
            memobase=memobase,
            resource_indexed=resource_indexed,
            operator_indexed=operator_indexed,
            **kopf_arguments,
        )
        return result
    # As kopf does: this object counts as indexed now, and no handler runs before every
    # kind's initial listing has been indexed.
    if operator_indexed is not None and resource_indexed is not None:
        await operator_indexed.drop_toggle(resource_indexed)
    if operator_indexed is not None:
        await operator_indexed.wait_for(True)
    for handler in handlers:
        try:
            await handler(event=raw_event, memo=memobase)
        except Exception:  # kopf's on.event contract: log, ignore, never retry
            metadata = raw_event.get("object", {}).get("metadata", {})
            logger.exception(
                "Handler %r failed on %s %s/%s; ignored",
                getattr(handler, "__name__", handler),
                resource.plural,
                metadata.get("namespace", ""),
                metadata.get("name", ""),
            )
    return None


def install() -> bool:
    """Put the short path in front of kopf's event processor (before the operator starts)."""
    global _processing, _kopf_processor
    if _processing is not None:
        return True
    from kopf._core.reactor import processing

    registry = kopf.get_default_registry()
    parts = ("_watching", "_changing", "_spawning", "_indexing")
    if not callable(getattr(processing, "process_resource_event", None)) or not all(
        hasattr(registry, part) for part in parts
    ):
        logger.warning("kopf's event processor is not where Berth expects it: no short path")
        return False
    _processing, _kopf_processor = processing, processing.process_resource_event
    processing.process_resource_event = _process  # type: ignore[assignment]
    return True
