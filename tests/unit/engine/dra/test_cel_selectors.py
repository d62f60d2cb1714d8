"""Device selectors in Kubernetes' CEL environment for DRA, on the cases upstream tests and uses.

The expressions come from k8s.io/dynamic-resource-allocation's cel tests and from the DRA
end-to-end and integration tests of Kubernetes v1.37; the expected results and error texts are
what kube-scheduler gives for them.
"""

from __future__ import annotations

import pytest

from berth.engine.dra.cel import CelError, compile_selector
from berth.engine.dra.cel_device import AttributeValue, find_attribute
from berth.engine.dra.cel_semver import parse_semver
from berth.engine.model.quantity import parse_quantity
from tests.unit.engine.dra.cel_test_device import Device

HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check"
    " with has() for optional fields"
)


GPU = Device(
    driver="gpu.example.com",
    attributes={
        "model": "a100",
        "index": 3,
        "driverVersion": parse_semver("1.2.3"),
        "gpu.example.com/pcieRoot": "pci-0",
        "other.example.com/healthy": True,
    },
    capacity={"memory": parse_quantity("80Gi"), "cores": 108},
)

MATCHES = [
    ("true", Device(), True),
    ("false", Device(), False),
    ('device.driver == ""', Device(driver=""), True),
    ('device.driver == "dra.example.com"', Device(), True),
    ('"no-such-domain" in device.attributes', Device(), False),
    (
        '"dra.example.com" in device.attributes',
        Device(attributes={"dra.example.com/x": True}),
        True,
    ),
    ('device.attributes["dra.example.com"].name', Device(attributes={"name": True}), True),
    ('device.attributes["dra.example.com"]["name"]', Device(attributes={"name": True}), True),
    (
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        Device(attributes={"name": True}),
        True,
    ),
    (
        'device.attributes["other.example.com"].name',
        Device(attributes={"other.example.com/name": True}),
        True,
    ),
    ('device.attributes["dra.example.com"].name > 0', Device(attributes={"name": 1}), True),
    (
        'device.attributes["dra.example.com"].name == "fish"',
        Device(attributes={"name": "fish"}),
        True,
    ),
    (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        Device(attributes={"name": parse_semver("1.0.0")}),
        True,
    ),
    (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true))'
        ' && isSemver("v1.0.0", true)',
        Device(attributes={"name": parse_semver("1.0.0")}),
        True,
    ),
    (
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        Device(capacity={"name": parse_quantity("1Mi")}),
        True,
    ),
    (
        '"name" in device.capacity["dra.example.com"]'
        ' && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        Device(capacity={"name": parse_quantity("1Mi")}),
        True,
    ),
    (
        '!("name" in device.capacity["dra.example.com"])'
        ' || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        Device(),
        True,
    ),
    (
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b',
        Device(attributes={"a": True, "b": True}),
        True,
    ),
    (
        'device.attributes.exists_one(x, x == "dra.example.com")',
        Device(attributes={"services": "some_example_value"}),
        True,
    ),
    (
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        Device(attributes={"services": "some_example_value"}),
        True,
    ),
    (
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        Device(attributes={"services": "some_example_value"}),
        True,
    ),
    (
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        Device(attributes={"services": "asymetric"}),
        True,
    ),
    (
        'device.capacity.exists_one(x, x == "dra.example.com")',
        Device(capacity={"memory": parse_quantity("1Mi")}),
        True,
    ),
    ("device.allowMultipleAllocations == true", Device(allow_multiple_allocations=True), True),
    ("device.allowMultipleAllocations == false", Device(), True),
    # The realistic selector, and the forms the e2e tests write.
    (
        'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"'
        ' && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
        GPU,
        True,
    ),
    (
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("100Gi")) >= 0',
        GPU,
        False,
    ),
    ('device.driver == "a.example.com" || device.driver == "gpu.example.com"', GPU, True),
    ('device.attributes["gpu.example.com"].pcieRoot == "pci-0"', GPU, True),
    ('device.attributes["other.example.com"].healthy', GPU, True),
    ("device.attributes[device.driver].index == 3", GPU, True),
    ('has(device.attributes["nosuch.example.com"].x)', GPU, False),
    ('device.attributes["gpu.example.com"].?numa.orValue(0) == 0', GPU, True),
    ('device.attributes["gpu.example.com"].driverVersion == semver("1.2.3")', GPU, True),
    ('device.attributes["gpu.example.com"].driverVersion.major() == 1', GPU, True),
    ('device.capacity["gpu.example.com"].cores.asInteger() == 108', GPU, True),
    ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', GPU, True),
    (
        'device.capacity["gpu.example.com"].memory.sub(quantity("40Gi"))'
        '.isGreaterThan(quantity("39Gi"))',
        GPU,
        True,
    ),
    ('sign(quantity("-1").add(1)) == 0 && quantity("1.5").asApproximateFloat() == 1.5', GPU, True),
    ('!quantity("500m").isInteger() && isQuantity("1Ki") && !isQuantity("1Kx")', GPU, True),
]


@pytest.mark.parametrize(
    ("expression", "device", "expected"), MATCHES, ids=[case[0][:60] for case in MATCHES]
)
def test_selector_matches_like_kube_scheduler(
    expression: str, device: Device, expected: bool
) -> None:
    assert compile_selector(expression).matches(device) is expected


RUNTIME_ERRORS = [
    (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        Device(),
        "no such key: noSuchAttr" + HINT,
    ),
    (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        Device(),
        "no such key: noSuchAttr" + HINT,
    ),
    ('device.attributes["gpu.example.com"].numa == 0', GPU, "no such key: numa" + HINT),
    ("device.attributes[device.driver].numa == 0", Device(), "no such key: numa" + HINT),
    ('device.attributes["gpu.example.com"].model > 1', GPU, "no such overload"),
    ('1 / (device.attributes["gpu.example.com"].index - 3) == 1', GPU, "division by zero"),
    (
        'device.attributes["gpu.example.com"].model',
        GPU,
        "CEL result of type string could not be converted to bool:"
        " unsupported native conversion from string to 'bool'",
    ),
    ('quantity("1.5").asInteger() == 1', GPU, "cannot convert value to integer"),
    (
        'quantity("x").isInteger()',
        GPU,
        "quantities must match the regular expression"
        " '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    ('semver("01.2.3").major() == 1', GPU, 'Major number must not contain leading zeroes "01"'),
    ('semver("1.2").major() == 1', GPU, "No Major.Minor.Patch elements found"),
]


@pytest.mark.parametrize(
    ("expression", "device", "detail"),
    RUNTIME_ERRORS,
    ids=[case[0][:60] for case in RUNTIME_ERRORS],
)
def test_evaluation_failure_is_reported_in_kube_schedulers_words(
    expression: str, device: Device, detail: str
) -> None:
    selector = compile_selector(expression)
    with pytest.raises(CelError) as failure:
        selector.matches(device)
    assert failure.value.kind == "runtime"
    assert failure.value.detail == detail


def test_runtime_error_report_names_claim_selector_and_device() -> None:
    selector = compile_selector('device.attributes["gpu.example.com"].numa == 0')
    with pytest.raises(CelError) as failure:
        selector.matches(GPU)
    report = failure.value.report(
        owner="claim default/gpu-claim", selector_index=0, device_id="gpu.example.com/node-1/gpu-0"
    )
    assert report == (
        "claim default/gpu-claim: selector #0 on device gpu.example.com/node-1/gpu-0:"
        " CEL runtime error: no such key: numa" + HINT
    )


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        ("?!", "compilation failed: ERROR: <input>:1:1: Syntax error:"),
        ("1", "must evaluate to bool or the unknown type, not int"),
        (
            "device.nosuch == 1",
            "compilation failed: ERROR: <input>:1:7: undefined field 'nosuch'\n"
            " | device.nosuch == 1\n | ......^",
        ),
        ("nosuch == 1", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nosuch'"),
        ('quantity("1") < quantity("2")', "found no matching overload for '_<_'"),
    ],
    ids=["syntax", "not-bool", "undefined-field", "undeclared", "quantity-operator"],
)
def test_invalid_expression_is_a_compile_error(expression: str, detail: str) -> None:
    with pytest.raises(CelError) as failure:
        compile_selector(expression)
    assert failure.value.kind == "compile"
    assert detail in failure.value.detail
    assert failure.value.report(owner="class gpu", selector_index=1, device_id="-").startswith(
        "class gpu: selector #1: CEL compile error: "
    )


def test_kubernetes_functions_berth_lacks_are_named() -> None:
    with pytest.raises(CelError) as failure:
        compile_selector("format.dns1123Label().validate(device.driver) == optional.none()")
    assert failure.value.detail.endswith(
        "(Berth's CEL environment does not provide format, validate)"
    )


def test_compiles_each_expression_once() -> None:
    expression = 'device.driver == "cache.example.com"'
    assert compile_selector(expression) is compile_selector(expression)


@pytest.mark.parametrize(
    ("full_name", "expected"),
    [
        ("gpu.example.com/model", "a100"),  # published short: the driver's own domain
        ("gpu.example.com/pcieRoot", "pci-0"),  # published fully
        ("other.example.com/healthy", True),
        ("other.example.com/model", None),  # a short name is never another domain's
    ],
)
def test_attribute_lookup_by_fully_qualified_name(
    full_name: str, expected: AttributeValue | None
) -> None:
    assert find_attribute(GPU.attributes, full_name, driver=GPU.driver) == expected
