"""The kopf handlers write nothing onto objects Berth does not own and never leave the event loop."""

from __future__ import annotations

import inspect

import pytest

from berth.kube import handlers

WATCH_HANDLERS = [
    handlers.pod_event,
    handlers.node_event,
    handlers.namespace_event,
    handlers.service_event,
    handlers.replication_controller_event,
    handlers.replica_set_event,
    handlers.stateful_set_event,
    handlers.pdb_event,
    handlers.profile_event,
    *handlers.STORAGE_HANDLERS.values(),
    *handlers.DRA_HANDLERS.values(),
]


@pytest.mark.parametrize("handler", WATCH_HANDLERS, ids=lambda h: h.__name__)
def test_watch_handlers_are_coroutines(handler: object) -> None:
    # kopf runs plain functions in a thread pool: the cache would be mutated from
    # several threads at once (a real race: a node added during table growth was lost).
    assert inspect.iscoroutinefunction(handler)


def test_only_event_handlers_watch_objects_berth_does_not_own() -> None:
    import kopf

    def resource(handler: object) -> str:
        selector = handler.selector  # type: ignore[attr-defined]
        return str(selector.plural or selector.any_name)

    # kopf's registry is private API; what it holds decides what kopf writes onto objects.
    registry = kopf.get_default_registry()
    for handler in registry._changing.get_all_handlers():  # state-tracking: annotations
        assert resource(handler) == "schedulerprofiles", handler.id
    for handler in registry._spawning.get_all_handlers():  # daemons, timers: finalizers
        assert resource(handler) == "schedulerprofiles", handler.id
