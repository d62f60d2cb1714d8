"""Where Berth's CPU goes from its launch to its first decision: py-spy samples in start-up stages.

The per-pod stages (bench/profile_stages.py) describe a running scheduler; before the
first decision the process mostly imports modules, starts kopf, builds its profile,
takes the Lease and lists the cluster. Each sample goes to the first stage below (most
specific first) one of whose markers is on its stack, the whole stack considered:
imports happen outside the event loop, and a module imported lazily by a handler is
still an import. With one measured pod (`FirstDecision/500Nodes_1Pod`), milliseconds
per pod are milliseconds of start-up.
"""

from __future__ import annotations

from bench.profile_stages import Rule

__all__ = ["STARTUP_STAGES"]

STARTUP_STAGES: tuple[tuple[str, Rule], ...] = (
    # Modules whose byte-code was never stored (a fresh tree, PYTHONDONTWRITEBYTECODE) compile at
    # every start; an installed package (the image) has it.
    ("byte-code compilation (modules without stored byte-code)", (("_compile_bytecode",),)),
    (
        "imports: kubernetes and pykube (kopf probes for them when installed)",
        (("kopf/_cogs/helpers/thirdparty.py",),),
    ),
    (
        "imports: other sub-commands (simulate, capacity, explain, demo, controlplane)",
        (
            ("berth/cli/main.py", "<module> (berth/cli/simulate.py"),
            ("berth/cli/main.py", "<module> (berth/cli/capacity.py"),
            ("berth/cli/main.py", "<module> (berth/cli/explain.py"),
            ("berth/cli/main.py", "<module> (berth/cli/demo.py"),
            ("berth/cli/main.py", "<module> (berth/controlplane/cli.py"),
        ),
    ),
    ("imports: the rest (kopf, aiohttp, numpy, Berth)", (("_find_and_load",),)),
    ("settings and plugin registry (berth run)", (("berth/cli/run.py", "plugin_registry"),)),
    ("SchedulerProfile builds (profile controller)", (("kube/profile_controller.py",),)),
    ("garbage collector freeze (once, after start-up)", (("tune_garbage_collector",),)),
    ("leader's listing and reconcile", (("_reconcile_from_api",),)),
    ("Lease", (("berth/kube/lease",),)),
    (
        "watch intake (nodes, pods, other kinds parsed)",
        (("kube/app.py",), ("kube/handlers.py",), ("berth/engine/model/",)),
    ),
    (
        "first decision and bind",
        (("scheduling/",), ("berth/engine/",), ("kube/binder.py",), ("kube/reporting.py",)),
    ),
    ("kopf: start-up, peering, watch streams", (("kopf/",),)),
    ("Berth wiring (sessions, servers, metrics)", (("berth/",),)),
    ("aiohttp, TLS and the event loop", (("aiohttp/",), ("ssl.py",), ("asyncio/",))),
)
