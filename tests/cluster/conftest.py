"""One real control plane for the whole test session, and nothing left behind.

Starting etcd + kube-apiserver + kube-controller-manager takes seconds, so it
happens once per session; tests isolate themselves with fresh namespaces and
uniquely named nodes.
Teardown runs on success, failure, Ctrl-C and SIGTERM; if even that is
skipped (SIGKILL), the children die with this process (see processes.py).
"""

from __future__ import annotations

import atexit
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica, install
from berth.controlplane.processes import ManagedProcess
from berth.controlplane.provisioner import VolumeProvisioner
from tests.cluster.dra_driver import Gpu, World, make_worlds
from tests.cluster.helpers import (
    create_namespace,
)
from tests.cluster.storage import PROVISIONER


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cluster: needs the real local control plane (etcd + kube-apiserver)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heavy modules (`RUNS_LAST = True`: failover, scale) run after the cheap ones."""
    items.sort(key=lambda item: bool(getattr(getattr(item, "module", None), "RUNS_LAST", False)))


def _interrupt_on_sigterm(signum: int, frame: FrameType | None) -> None:
    # Turns `kill <pytest>` into the same orderly unwinding as Ctrl-C.
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def control_plane() -> Iterator[LocalControlPlane]:
    plane = LocalControlPlane(build=True)
    previous_handler = signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    atexit.register(plane.stop)
    try:
        plane.start()
        # Its PV controller binds claims, and namespaces finish deleting (see controller_manager.py).
        plane.start_kube_controller_manager()
        yield plane
    finally:
        plane.stop()
        atexit.unregister(plane.stop)
        signal.signal(signal.SIGTERM, previous_handler)


@pytest.fixture(scope="session")
def kube_scheduler(control_plane: LocalControlPlane) -> Iterator[ManagedProcess]:
    """The reference kube-scheduler with one `default-scheduler` profile."""
    process = control_plane.start_kube_scheduler()
    try:
        yield process
    finally:
        control_plane.stop_kube_scheduler()


@pytest.fixture(scope="session")
def volume_provisioner(control_plane: LocalControlPlane) -> Iterator[VolumeProvisioner]:
    """Provisions claims of StorageClasses whose provisioner is `storage.PROVISIONER`."""
    with VolumeProvisioner(control_plane.admin_kubeconfig, provisioner=PROVISIONER) as provisioner:
        yield provisioner


@pytest.fixture
def namespace(control_plane: LocalControlPlane, request: pytest.FixtureRequest) -> str:
    """A fresh namespace per test."""
    return create_namespace(
        control_plane, request.node.name.replace("_", "-").lower()[:40].strip("-")
    )


@pytest.fixture(scope="module")
def berth(control_plane: LocalControlPlane) -> Iterator[BerthReplica]:
    """One leading `berth run` replica under the manifests' RBAC, for one test module."""
    try:
        install(control_plane)
    except subprocess.CalledProcessError as error:
        pytest.fail(f"installing Berth failed: {error.cmd}\n{error.stderr}")
    replica = BerthReplica(control_plane, "e2e-0").start()
    try:
        replica.wait_leading()
        yield replica
    finally:
        replica.stop()


@pytest.fixture
def replicas(control_plane: LocalControlPlane, tmp_path: Path) -> Iterator[dict[str, BerthReplica]]:
    """Two `berth run` replicas, "a" and "b", electing a leader; logs kept under tmp_path."""
    try:
        install(control_plane)
    except subprocess.CalledProcessError as error:
        pytest.fail(f"installing Berth failed: {error.cmd}\n{error.stderr}")
    started: dict[str, BerthReplica] = {}
    try:
        for name in ("a", "b"):
            started[name] = BerthReplica(control_plane, name).start()
        yield started
    finally:
        for replica in started.values():
            replica.stop()
            # Kept with the report: the run directory goes when the control plane stops.
            shutil.copyfile(replica.process.log_path, tmp_path / replica.process.log_path.name)


@pytest.fixture
def worlds(
    control_plane: LocalControlPlane,
    kube_scheduler: object,
    berth: BerthReplica,
) -> Callable[[list[list[Gpu]]], tuple[World, World]]:
    """DRA scenarios side by side: a builder of two worlds of the same shape (tests/cluster/
    dra_driver.py), Berth's and kube-scheduler's, once Berth sees their nodes."""

    def build(nodes: list[list[Gpu]]) -> tuple[World, World]:
        return make_worlds(control_plane, berth, nodes)

    return build
