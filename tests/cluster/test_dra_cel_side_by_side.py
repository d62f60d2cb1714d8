"""DRA selectors calling Kubernetes' CEL libraries, side by side with kube-scheduler v1.37.

The unit tests pin each library function's result and error text; these scenarios check the
same against the oracle on a real control plane: a claim whose selector uses the list, regex,
IP/CIDR and sets functions lands on the same device, and selectors that fail at run time give
byte for byte kube-scheduler's FailedScheduling message (each world's own names put back to
one placeholder, as they differ per world). Compile errors cannot be staged here: the API
server refuses such a claim.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.cluster.dra_driver import Gpu, World
from tests.cluster.test_dra_side_by_side import (  # noqa: F401  # fixtures used by name
    _placement,
    _same_message,
    serves_dra,
)

pytestmark = pytest.mark.cluster


def _claim_with_selectors(world: World, *expressions: str) -> None:
    selectors = [
        {"cel": {"expression": expression.replace("DRIVER", world.driver)}}
        for expression in expressions
    ]
    world.claim("c", world.gpus(selectors=selectors))
    world.pod("p", gpu={"resourceClaimName": "c"})


def test_library_functions_pick_the_same_device(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds(
        [
            [Gpu("gpu-0", model="big", pcie_root="root-a")],
            [Gpu("gpu-1", model="small", pcie_root="root-b")],
        ]
    )
    # One selector per library: the API server refuses a selector whose estimated cost is
    # past the limit, and each selector is estimated on its own.
    expressions = (
        # (indexOf over a list of strings is past the API server's cost estimate)
        "[1, 2, 2].lastIndexOf(2) == 2 && [4, 6].sum() == 10"
        ' && device.attributes["DRIVER"].model == "small"',
        'device.attributes["DRIVER"].pcieRoot.find("[a-z]$") == "b"',
        'sets.contains(["root-a", "root-b"], [device.attributes["DRIVER"].pcieRoot])',
        'cidr("10.0.0.0/8").containsIP("10.1.2.3")',
        "[3, 1, 2].sort().isSorted() && [1, 2].all(i, v, v > i)",
    )
    for world in pair:
        _claim_with_selectors(world, *expressions)
    assert [_placement(world, ["p"]) for world in pair] == [{"p": 1}, {"p": 1}]


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        (
            'ip(device.attributes["DRIVER"].model).family() == 4',
            'CEL runtime error: IP Address "big" parse error during conversion from string:'
            ' ParseAddr("big"): unable to parse IP',
        ),
        (
            'device.attributes["DRIVER"].model.find(device.attributes["DRIVER"].model + "(") == ""',
            "CEL runtime error: Illegal regex: error parsing regexp: missing closing ): `big(`",
        ),
        (
            "[].min() == 0",
            "CEL runtime error: min called on empty list",
        ),
    ],
    ids=["ip-parse", "regex-runtime", "empty-min"],
)
def test_selector_failure_gets_kube_schedulers_message(
    worlds: Callable[..., tuple[World, World]],
    expression: str,
    detail: str,
) -> None:
    pair = worlds([[Gpu("gpu-0")]])
    for world in pair:
        _claim_with_selectors(world, expression)
    assert detail in _same_message(pair, "p", "p")
