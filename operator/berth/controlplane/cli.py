"""`berth controlplane up|down|env`: a local control plane for people, not just tests.

The demo and manual experiments need a cluster that outlives one command.
`up` starts one and keeps it running (in the foreground, or detached with
`--detach`), recording what it started in a state file; `down` and `env`
find it there. One control plane per state directory.

It runs etcd, kube-apiserver and kube-controller-manager (the controllers in
controller_manager.py: claims get bound, namespaces finish deleting), and on
request the reference kube-scheduler and a volume provisioner for one
StorageClass provisioner name (provisioner.py), so that claims of such a
class are provisioned once a scheduler has picked their node.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from berth.controlplane.binaries import BinariesNotFound, find_binaries
from berth.controlplane.cluster import LocalControlPlane
from berth.controlplane.provisioner import VolumeProvisioner
from berth.controlplane.run_dirs import pid_alive

__all__ = ["default_state_dir", "main", "register"]

STATE_FILE = "state.json"
STATE_DIR_ENV = "BERTH_CONTROLPLANE_DIR"


def default_state_dir() -> Path:
    """Where `up` puts its run directory unless told otherwise: tmpfs when there is one."""
    configured = os.environ.get(STATE_DIR_ENV)
    if configured:
        return Path(configured)
    parent = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path(tempfile.gettempdir())
    return parent / f"berth-controlplane-{os.getuid()}"


def register(subparsers: Any) -> None:
    """Add the `controlplane` command to the `berth` parser."""
    parser = subparsers.add_parser(
        "controlplane",
        help="run a local etcd + kube-apiserver + kube-controller-manager (+ kube-scheduler)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help=f"state/run directory (default: ${STATE_DIR_ENV} or /dev/shm/berth-controlplane-UID)",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    up = actions.add_parser("up", help="start a control plane and keep it running")
    up.add_argument("--detach", action="store_true", help="run in the background and return")
    up.add_argument(
        "--kube-scheduler",
        action="store_true",
        help="also start the reference kube-scheduler (default-scheduler profile)",
    )
    up.add_argument(
        "--volume-provisioner",
        metavar="NAME",
        default=None,
        help="also provision volumes for StorageClasses whose provisioner is NAME",
    )
    up.add_argument(
        "--no-build",
        action="store_true",
        help="fail instead of building the binaries when they are not cached",
    )
    up.set_defaults(handler=_up)
    down = actions.add_parser("down", help="stop the control plane started by `up`")
    down.set_defaults(handler=_down)
    env = actions.add_parser("env", help="print shell export lines for the running control plane")
    env.set_defaults(handler=_env)


def _state_dir(args: argparse.Namespace) -> Path:
    directory: Path | None = args.dir
    return directory if directory is not None else default_state_dir()


def _read_state(state_dir: Path) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state


def _up(args: argparse.Namespace) -> int:
    state_dir = _state_dir(args)
    existing = _read_state(state_dir)
    if existing is not None and pid_alive(int(existing["pid"])):
        print(
            f"a control plane is already running (pid {existing['pid']}, {existing['server']});"
            " `berth controlplane down` stops it",
            file=sys.stderr,
        )
        return 1
    if existing is not None:
        _remove_leftovers(state_dir, existing)
    if args.detach:
        return _up_detached(args, state_dir)
    return _up_foreground(args, state_dir)


def _up_foreground(args: argparse.Namespace, state_dir: Path) -> int:

    try:
        binaries = find_binaries(build=not args.no_build)
    except BinariesNotFound as error:
        print(f"berth controlplane: {error}", file=sys.stderr)
        return 1
    stop_requested = False

    def request_stop(signum: int, _frame: Any) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    plane = LocalControlPlane(binaries=binaries, run_dir=state_dir)
    provisioner: VolumeProvisioner | None = None
    try:
        plane.start()
        plane.start_kube_controller_manager()
        if args.kube_scheduler:
            plane.start_kube_scheduler()
        if args.volume_provisioner:
            provisioner = VolumeProvisioner(
                plane.admin_kubeconfig, provisioner=args.volume_provisioner
            ).start()
        state = {
            "pid": os.getpid(),
            "server": plane.server,
            "run_dir": str(plane.run_dir),
            "env": plane.env(),
            "processes": {
                name: {"pid": process.pid, "executable": process.argv[0]}
                for name, process in plane.processes.items()
            },
        }
        partial = state_dir / (STATE_FILE + ".tmp")
        partial.write_text(json.dumps(state, indent=2), encoding="utf-8")
        partial.replace(state_dir / STATE_FILE)
        print(
            f"control plane ready at {plane.server} after {plane.ready_after_seconds:.1f}s",
            file=sys.stderr,
        )
        _print_env(plane.env())
        sys.stdout.flush()
        while not stop_requested:
            for name, process in plane.processes.items():
                message = process.failure_message()
                if message is not None:
                    print(f"berth controlplane: {name} died: {message}", file=sys.stderr)
                    return 1
            message = provisioner.failure_message() if provisioner is not None else None
            if message is not None:
                print(f"berth controlplane: {message}", file=sys.stderr)
                return 1
            time.sleep(0.5)
        return 0
    finally:
        if provisioner is not None:
            provisioner.stop()
        plane.stop()


def _up_detached(args: argparse.Namespace, state_dir: Path) -> int:

    # Build in the foreground so that progress and errors reach the user.
    try:
        find_binaries(build=not args.no_build)
    except BinariesNotFound as error:
        print(f"berth controlplane: {error}", file=sys.stderr)
        return 1
    state_dir.mkdir(parents=True, exist_ok=True)
    log_path = state_dir.parent / f"{state_dir.name}.log"
    command = [sys.executable, "-m", "berth.controlplane", "--dir", str(state_dir), "up"]
    if args.kube_scheduler:
        command.append("--kube-scheduler")
    if args.volume_provisioner:
        command += ["--volume-provisioner", args.volume_provisioner]
    environment = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [package_root, environment.get("PYTHONPATH")])
    )
    with log_path.open("wb") as log:
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        state = _read_state(state_dir)
        if state is not None and state.get("pid") == child.pid:
            print(f"control plane running in the background (pid {child.pid})", file=sys.stderr)
            _print_env(state["env"])
            return 0
        if child.poll() is not None:
            print(
                f"berth controlplane: background `up` exited with {child.returncode}; "
                f"log:\n{log_path.read_text(errors='replace')[-4000:]}",
                file=sys.stderr,
            )
            return 1
        time.sleep(0.2)
    print(f"berth controlplane: not ready after 180s; see {log_path}", file=sys.stderr)
    return 1


def _down(args: argparse.Namespace) -> int:
    state_dir = _state_dir(args)
    state = _read_state(state_dir)
    if state is None:
        print(f"no control plane recorded in {state_dir}", file=sys.stderr)
        return 0
    owner = int(state["pid"])
    if pid_alive(owner):
        os.kill(owner, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while pid_alive(owner) and time.monotonic() < deadline:
            time.sleep(0.1)
    _remove_leftovers(state_dir, state)
    print("control plane stopped", file=sys.stderr)
    return 0


def _remove_leftovers(state_dir: Path, state: dict[str, Any]) -> None:
    """Kill recorded processes that survived their owner, then drop the directory.

    A PID is only signalled if it still runs the recorded executable, so a
    recycled PID belonging to something else is never touched.
    """
    for process in state.get("processes", {}).values():
        pid = int(process["pid"])
        try:
            executable = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if executable == process["executable"]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    shutil.rmtree(state_dir, ignore_errors=True)


def _env(args: argparse.Namespace) -> int:
    state = _read_state(_state_dir(args))
    if state is None or not pid_alive(int(state["pid"])):
        print("no control plane is running; `berth controlplane up` starts one", file=sys.stderr)
        return 1
    _print_env(state["env"])
    return 0


def _print_env(environment: dict[str, str]) -> None:
    for name, value in environment.items():
        print(f"export {name}={shlex.quote(value)}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m berth.controlplane`."""
    parser = argparse.ArgumentParser(prog="python -m berth.controlplane", description=__doc__)
    _add_arguments(parser)
    args = parser.parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    return result
