"""Watch events of event-only kinds reach their handlers without kopf's per-event machinery."""

from __future__ import annotations

import logging
from typing import Any

import kopf
import pytest
from kopf._core.reactor import processing

from berth.kube import event_fast_path, handlers

PODS = kopf.Resource("", "v1", "pods", namespaced=True)
PROFILES = kopf.Resource(handlers.GROUP, handlers.VERSION, handlers.PROFILES, namespaced=False)


def test_berth_s_handlers_take_the_short_path_on_import() -> None:
    # handlers.py installs it before kopf starts: kopf's spawn_tasks reads this attribute.
    assert processing.process_resource_event is event_fast_path._process


def test_every_watch_of_a_kind_berth_does_not_own_is_on_the_short_path() -> None:
    registry = kopf.get_default_registry()
    for handler in registry._watching.get_all_handlers():
        selector = handler.selector
        plural = selector.plural or selector.any_name
        resource = kopf.Resource(selector.group or "", selector.version, plural, namespaced=True)
        expected = None if plural == handlers.PROFILES else [handler.fn]
        assert event_fast_path.short_path_handlers(registry, resource) == expected, handler.id


class Toggles:
    """kopf's indexing toggles: which object toggles were dropped, and the wait."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def drop_toggle(self, toggle: object) -> None:
        self.calls.append(f"drop {toggle}")

    async def wait_for(self, value: bool) -> None:
        self.calls.append(f"wait {value}")


def fresh_registry() -> kopf.OperatorRegistry:
    return kopf.OperatorRegistry()


async def test_an_event_goes_to_the_handler_with_the_memo_after_indexing() -> None:
    registry = fresh_registry()
    seen: list[tuple[Any, Any]] = []

    @kopf.on.event("v1", "pods", registry=registry)
    async def pods(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
        seen.append((event["type"], memo.marker))

    toggles = Toggles()
    event = {"type": "ADDED", "object": {"metadata": {"name": "a", "uid": "1"}}}
    result = await event_fast_path._process(
        registry=registry,
        resource=PODS,
        raw_event=event,
        memobase=kopf.Memo(marker="m"),
        resource_indexed="pod-1",
        operator_indexed=toggles,
        settings=kopf.OperatorSettings(),
    )

    assert result is None
    assert seen == [("ADDED", "m")]
    assert toggles.calls == ["drop pod-1", "wait True"]


async def test_a_failing_handler_is_logged_and_ignored(caplog: pytest.LogCaptureFixture) -> None:
    registry = fresh_registry()

    @kopf.on.event("v1", "pods", registry=registry)
    async def broken(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
        raise ValueError("boom")

    event = {"type": "MODIFIED", "object": {"metadata": {"name": "a", "namespace": "ns"}}}
    with caplog.at_level(logging.ERROR):
        await event_fast_path._process(
            registry=registry, resource=PODS, raw_event=event, memobase=kopf.Memo()
        )

    assert "Handler 'broken' failed on pods ns/a; ignored" in caplog.text


@pytest.mark.parametrize(
    "decorate",
    [
        pytest.param(
            lambda fn, r: kopf.on.event("v1", "pods", registry=r, labels={"a": "b"})(fn),
            id="filtered",
        ),
        pytest.param(
            lambda fn, r: kopf.on.event("v1", "pods", registry=r)(_with_body(fn)), id="reads-body"
        ),
        pytest.param(lambda fn, r: kopf.index("v1", "pods", registry=r)(fn), id="indexed-kind"),
    ],
)
def test_kinds_that_need_kopf_s_arguments_keep_its_full_path(decorate: Any) -> None:
    registry = fresh_registry()

    async def handler(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
        pass

    decorate(handler, registry)
    if not registry._watching.get_all_handlers():  # the index alone: add a plain watch too
        kopf.on.event("v1", "pods", registry=registry)(handler)

    assert event_fast_path.short_path_handlers(registry, PODS) is None


def _with_body(_: Any) -> Any:
    async def reads_body(event: kopf.RawEvent, body: kopf.Body, **__: Any) -> None:
        pass

    return reads_body


async def test_other_kinds_go_through_kopf_s_processing(monkeypatch: pytest.MonkeyPatch) -> None:
    handed: list[Any] = []

    async def kopf_processor(**arguments: Any) -> str:
        handed.append(arguments["resource"])
        return "42"

    monkeypatch.setattr(event_fast_path, "_kopf_processor", kopf_processor)
    result = await event_fast_path._process(
        registry=kopf.get_default_registry(),
        resource=PROFILES,
        raw_event={"type": "ADDED", "object": {}},
        memobase=kopf.Memo(),
    )

    assert result == "42" and handed == [PROFILES]
