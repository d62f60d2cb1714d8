"""DefaultBinder posts the Binding through the serving scheduler's Binder port."""

from __future__ import annotations

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import BindOutcome, FrameworkServices
from berth.engine.framework.interfaces import BindPlugin
from berth.engine.framework.status import Code
from berth.engine.plugins.default_binder import new_plugin
from tests.builders import make_pod
from tests.fakes import FakeBinder
from tests.unit.engine.fakes import framework_with


async def test_binds_through_the_port_of_the_scheduler_serving_the_profile() -> None:
    framework = framework_with()
    binder = FakeBinder()
    framework.serve(FrameworkServices(binder=binder))
    plugin = new_plugin(None, framework)
    assert isinstance(plugin, BindPlugin)
    assert plugin.name == "DefaultBinder"
    status = await plugin.bind(CycleState(ClusterState()), make_pod("p").build(), "n1")
    assert status.is_success
    assert binder.posted == [("p", "n1")]


async def test_a_refused_binding_is_an_error_carrying_the_api_message() -> None:
    framework = framework_with()
    framework.serve(FrameworkServices(binder=FakeBinder(outcomes={"p": BindOutcome.CONFLICT})))
    status = await new_plugin(None, framework).bind(
        CycleState(ClusterState()), make_pod("p").build(), "n1"
    )
    assert status.code is Code.ERROR
    assert status.message == "test"


async def test_an_unserved_profile_binds_nothing() -> None:
    status = await new_plugin(None, framework_with()).bind(
        CycleState(ClusterState()), make_pod("p").build(), "n1"
    )
    assert status.code is Code.ERROR
    assert "not served" in status.message
