"""bench/dra_allocation: time of the DRA allocator for one GPU claim per pod, in milliseconds.

    python bench/dra_allocation.py [--nodes 5000] [--devices 8] [--taken 0.25] [--pods 20]

The cluster the issue asks about: `--nodes` nodes, each publishing one ResourceSlice of
`--devices` GPUs (kube-scheduler's scheduler_perf DRA template: model, memory, index and
PCIe root attributes), a DeviceClass selecting the driver's devices, and a fraction
`--taken` of the GPUs already allocated. Each pod has one claim for one GPU; a decision
builds the pod's Allocator (as PreFilter does) and allocates on nodes until as many are
feasible as kube-scheduler looks for at that size (percentageOfNodesToScore's adaptive
default), and on every node for comparison. Prints median and p99 CPU time (thread time).

Selectors are evaluated by a stand-in for the CEL environment (the expression
`device.driver == "..."` as a Python comparison); each device's answer is remembered
for as long as the slice index lives, so the steady-state figure is the allocator's own
cost. A measurement, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.allocations import AllocatedDevice, AllocationResult
from berth.engine.dra.allocator import Allocated, Allocator
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.pools import SliceIndex
from berth.engine.dra.selection import CelDevice, SelectorCache
from berth.engine.dra.slices import ResourceSlice
from berth.engine.model.node import Node

DRIVER = "gpu.example.com"
SELECTOR = f'device.driver == "{DRIVER}"'


class _DriverIs:
    def __init__(self, driver: str) -> None:
        self.driver = driver

    def matches(self, device: CelDevice, /) -> bool:
        return device.driver == self.driver


class _StandInError(Exception):
    pass


def compile_stand_in(expression: str) -> _DriverIs:
    prefix = 'device.driver == "'
    if not (expression.startswith(prefix) and expression.endswith('"')):
        raise _StandInError(f"the benchmark's stand-in cannot compile {expression!r}")
    return _DriverIs(expression[len(prefix) : -1])


def node_slice(node: str, devices: int) -> ResourceSlice:
    return ResourceSlice.from_dict(
        {
            "metadata": {"name": f"{node}-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{index}",
                        "attributes": {
                            "model": {"string": "LATEST-GPU-MODEL"},
                            "index": {"int": index},
                            "resource.kubernetes.io/pcieRoot": {"string": f"pci{index // 4}"},
                        },
                        "capacity": {"memory": {"value": "80Gi"}},
                    }
                    for index in range(devices)
                ],
            },
        }
    )


def gpu_claim(name: str) -> ResourceClaim:
    return ResourceClaim.from_dict(
        {
            "metadata": {"name": name, "namespace": "bench", "uid": name},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
            },
        }
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def nodes_to_find(nodes: int) -> int:
    """kube-scheduler's adaptive percentageOfNodesToScore: max(5, 50 - nodes/125) %, at least 100."""
    if nodes < 100:
        return nodes
    percentage = max(5, 50 - nodes // 125)
    return max(100, nodes * percentage // 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--taken", type=float, default=0.25)
    parser.add_argument("--pods", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    nodes = [
        Node.from_dict({"metadata": {"name": f"node-{index:05d}", "labels": {}}})
        for index in range(args.nodes)
    ]
    started = time.thread_time()
    slices = [node_slice(node.name, args.devices) for node in nodes]
    parsed = time.thread_time() - started
    started = time.thread_time()
    index = SliceIndex(slices)
    built = time.thread_time() - started
    taken = [
        AllocatedDevice(request="gpu", driver=DRIVER, pool=node.name, device=f"gpu-{device}")
        for node in nodes
        for device in range(args.devices)
        if rng.random() < args.taken
    ]
    allocated = AllocatedState.of([AllocationResult(devices=tuple(taken))])
    classes = {
        "gpu": DeviceClass.from_dict(
            {
                "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": SELECTOR}}]},
            }
        )
    }
    cache = SelectorCache(compile_stand_in, errors=(_StandInError,))
    wanted = nodes_to_find(args.nodes)
    print(
        f"{args.nodes} nodes x {args.devices} GPUs, {len(taken)} taken; slices parsed in "
        f"{parsed * 1000:.0f} ms, indexed in {built * 1000:.0f} ms; a decision stops after "
        f"{wanted} feasible nodes"
    )
    for label, stop_after in (("until enough feasible", wanted), ("every node", args.nodes)):
        timings: list[float] = []
        for pod in range(args.pods):
            claims = [gpu_claim(f"pod-{pod}")]
            started = time.thread_time()
            allocator = Allocator(
                slices=index, classes=classes, allocated=allocated, selectors=cache
            )
            feasible = 0
            for node in nodes:
                if isinstance(allocator.allocate(node, claims), Allocated):
                    feasible += 1
                    if feasible >= stop_after:
                        break
            timings.append(time.thread_time() - started)
        steady = timings[1:] or timings
        print(
            f"  {label:>22}: first pod {timings[0] * 1000:8.1f} ms, then median "
            f"{statistics.median(steady) * 1000:8.1f} ms, p99 {percentile(steady, 0.99) * 1000:8.1f} ms "
            f"({statistics.median(steady) / stop_after * 1e6:.1f} us per node)"
        )


if __name__ == "__main__":
    main()
