"""PrioritySort: higher priority first, then the earlier queue timestamp."""

from __future__ import annotations

import pytest

from berth.engine.plugins.priority_sort import new_plugin
from tests.builders import make_pod


@pytest.mark.parametrize(
    ("first", "second", "first_wins"),
    [
        ((10, 5.0), (0, 1.0), True),
        ((0, 5.0), (10, 1.0), False),
        ((3, 1.0), (3, 2.0), True),
        ((3, 2.0), (3, 1.0), False),
        ((-5, 1.0), (0, 9.0), False),
    ],
    ids=["higher-priority", "lower-priority", "tie-earlier-queued", "tie-later-queued", "negative"],
)
def test_order(first: tuple[int, float], second: tuple[int, float], first_wins: bool) -> None:
    plugin = new_plugin(None)
    a = plugin.sort_key(make_pod("a").priority(first[0]).build(), first[1])
    b = plugin.sort_key(make_pod("b").priority(second[0]).build(), second[1])
    assert (a < b) is first_wins


def test_missing_priority_counts_as_zero() -> None:
    plugin = new_plugin(None)
    assert plugin.sort_key(make_pod("a").build(), 1.0) == (0, 1.0)
    assert plugin.name == "PrioritySort"
