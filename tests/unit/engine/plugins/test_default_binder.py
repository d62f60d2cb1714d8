"""DefaultBinder claims every pod."""

from __future__ import annotations

from berth.engine.framework.interfaces import BindPlugin
from berth.engine.plugins.default_binder import new_plugin
from tests.builders import make_pod


def test_binds_every_pod() -> None:
    plugin = new_plugin(None)
    assert isinstance(plugin, BindPlugin)
    assert plugin.name == "DefaultBinder"
    assert plugin.binds(make_pod("p").build())
