"""The Kubernetes CEL libraries of kube-scheduler's DRA environment, as Berth evaluates them.

Each case is a selector and what kube-scheduler v1.37 gives for it: a match result, or the
runtime or compile error text it reports. The expected values follow k8s.io/apiserver's
library documentation and tests (lists, regex, IP, CIDR), cel-go's ext.Lists, ext.Sets and
two-variable comprehensions, and the `includes` cases of k8s.io/dynamic-resource-allocation's
compile tests.
"""

from __future__ import annotations

import pytest

from berth.engine.dra.cel import CelError, compile_selector
from berth.engine.dra.cel_device import AttributeValue
from berth.engine.dra.cel_semver import parse_semver
from tests.unit.engine.dra.cel_test_device import Device


def matches(expression: str, device: Device | None = None) -> bool:
    return compile_selector(expression).matches(device or Device())


def runtime_error(expression: str, device: Device | None = None) -> str:
    with pytest.raises(CelError) as failure:
        matches(expression, device)
    assert failure.value.kind == "runtime"
    return failure.value.detail


def compile_error(expression: str) -> str:
    with pytest.raises(CelError) as failure:
        compile_selector(expression)
    assert failure.value.kind == "compile"
    return failure.value.detail


TRUE = [
    # Kubernetes' lists library.
    "[1, 2, 3].isSorted()",
    "['a', 'b', 'b', 'c'].isSorted()",
    "![2.0, 1.0].isSorted()",
    "[1].isSorted() && [].isSorted()",
    "[1, 3].sum() == 4",
    "[1.0, 3.0].sum() == 4.0",
    "[].sum() == 0",
    "[1u, 2u].sum() == 3u",
    "[1, 3].min() == 1 && [1, 3].max() == 3",
    "['b', 'a', 'c'].min() == 'a'",
    "([0] + []).min() == 0",
    "[1, 2, 2, 3].indexOf(2) == 1",
    "['a', 'b', 'b', 'c'].lastIndexOf('b') == 2",
    "[1.0].indexOf(1.1) == -1",
    "[].indexOf('string') == -1",
    "[true, 1].indexOf(1) == 1",  # a bool never equals a number
    "[1, 2].indexOf(2.0) == 1",  # numbers compare across int and double
    '[quantity("1")].indexOf(quantity("1000m")) == 0',
    "[1, 2, 3].includes(2) && ![1, 2, 3].includes(4)",
    "'model-a'.includes('model-a') && !'model-a'.includes('model-b')",
    "!'a'.includes(1)",
    # The strings extension keeps its own indexOf.
    "'abcb'.indexOf('b') == 1 && 'abcb'.lastIndexOf('b') == 3",
    # Regex library.
    "'abc 123'.find('[0-9]+') == '123'",
    "'abc'.find('[0-9]+') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
    "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    "'123 abc 456'.findAll('[0-9]+', 0) == []",
    "'baaa'.findAll('a*') == ['', 'aaa']",  # Go drops an empty match after a match
    "'x1y'.find('\\\\d') == '1'",
    # cel-go's ext.Lists and ext.Sets.
    "[3, 1, 2].sort() == [1, 2, 3]",
    "[1, 2, 2, 3].distinct() == [1, 2, 3]",
    "[[1], [2, 3]].flatten() == [1, 2, 3]",
    "[1, 2, 3, 4].slice(1, 3) == [2, 3]",
    "[5, 3, 1, 2].reverse() == [2, 1, 3, 5]",
    "lists.range(3) == [0, 1, 2]",
    "[{'a': 2}, {'a': 1}].sortBy(e, e.a) == [{'a': 1}, {'a': 2}]",
    "sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1], [2])",
    "sets.equivalent([1, 2], [2, 1, 1])",
    "sets.intersects([1, 2], [2, 3])",
    # Two-variable comprehensions.
    "[10, 20].all(i, v, v > i)",
    "{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)",
    "[1, 2, 3].existsOne(i, v, v == 2)",
    "[1, 2].transformList(i, v, i + v) == [1, 3]",
    # IP library.
    'ip("10.0.0.1").family() == 4 && ip("::1").family() == 6',
    'ip("::1") == ip("0:0::1")',
    'string(ip("2001:DB8::1")) == "2001:db8::1"',
    'ip.isCanonical("10.0.0.1") && !ip.isCanonical("2001:DB8::1")',
    'isIP("10.0.0.1") && !isIP("1.2.3") && !isIP("fe80::1%eth0")',
    'ip("127.0.0.1").isLoopback() && ip("::1").isLoopback()',
    'ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified()',
    'ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()',
    'ip("169.254.1.1").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()',
    'ip("8.8.8.8").isGlobalUnicast() && !ip("255.255.255.255").isGlobalUnicast()',
    # CIDR library.
    'cidr("10.0.0.0/8").containsIP("10.1.2.3") && !cidr("10.0.0.0/8").containsIP(ip("11.0.0.1"))',
    'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")',
    '!cidr("10.0.0.0/8").containsCIDR(cidr("10.0.0.0/7"))',
    '!cidr("10.0.0.0/8").containsIP("::1")',
    'cidr("10.0.0.1/8").ip() == ip("10.0.0.1")',
    'cidr("10.0.0.1/8").masked() == cidr("10.0.0.0/8")',
    'cidr("10.0.0.1/8") != cidr("10.0.0.0/8")',  # a CIDR keeps its host bits
    'cidr("2001:db8::/32").prefixLength() == 32',
    'isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0")',
]


@pytest.mark.parametrize("expression", TRUE)
def test_library_function_gives_upstream_result(expression: str) -> None:
    assert matches(expression)


# From k8s.io/dynamic-resource-allocation's compile tests: `includes` on attributes.
INCLUDES = [
    ('device.attributes["dra.example.com"].name.includes("fish")', "fish", True),
    ('device.attributes["dra.example.com"].name.includes("bird")', "fish", False),
    ('device.attributes["dra.example.com"].name.includes(true)', True, True),
    ('device.attributes["dra.example.com"].name.includes(false)', True, False),
    ('device.attributes["dra.example.com"].name.includes(1)', 1, True),
    ('device.attributes["dra.example.com"].name.includes(3)', 1, False),
    (
        'device.attributes["dra.example.com"].name.includes(semver("1.0.0"))',
        parse_semver("1.0.0"),
        True,
    ),
    (
        'device.attributes["dra.example.com"].name.includes(semver("2.0.0"))',
        parse_semver("1.0.0"),
        False,
    ),
]


@pytest.mark.parametrize(("expression", "value", "expected"), INCLUDES)
def test_includes_on_an_attribute(expression: str, value: AttributeValue, expected: bool) -> None:
    assert matches(expression, Device(attributes={"name": value})) is expected


def test_list_functions_on_a_dynamic_value() -> None:
    device = Device(attributes={"model": "a100"})
    assert matches(
        '["a100", "h100"].indexOf(device.attributes["dra.example.com"].model) == 0', device
    )
    assert matches('device.attributes["dra.example.com"].model.find("[0-9]+") == "100"', device)


RUNTIME_ERRORS = [
    ("[].min() == 0", "min called on empty list"),
    ("[].max() == 0", "max called on empty list"),
    ("[[1], [2]].max() == [2]", "no such overload"),
    ("[1, 'a'].isSorted()", "no such overload"),
    ("[9223372036854775807, 1].sum() > 0", "integer overflow"),
    (
        "'abc'.find(device.driver) == ''",
        "Illegal regex: error parsing regexp: missing closing ): `(`",
    ),
    (
        'ip("1.2.3") == ip("1.2.3.4")',
        'IP Address "1.2.3" parse error during conversion from string:'
        ' ParseAddr("1.2.3"): IPv4 address too short',
    ),
    (
        'ip("fe80::1%eth0").isLinkLocalUnicast()',
        'IP address "fe80::1%eth0" with zone value is not allowed',
    ),
    (
        'ip("::ffff:1.2.3.4").family() == 6',
        'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed',
    ),
    (
        'ip.isCanonical("foo")',
        'IP Address "foo" parse error during conversion from string:'
        ' ParseAddr("foo"): unable to parse IP',
    ),
    (
        'cidr("10.0.0.0").prefixLength() == 8',
        "network address parse error during conversion from string: network address parse error"
        " during conversion from string: netip.ParsePrefix(\"10.0.0.0\"): no '/'",
    ),
    (
        'cidr("::ffff:1.2.3.4/120").prefixLength() == 120',
        "network address parse error during conversion from string: IPv4-mapped IPv6 address"
        ' "::ffff:1.2.3.4/120" is not allowed',
    ),
    (
        'cidr("10.0.0.0/8").containsIP("bad")',
        'IP Address "bad" parse error during conversion from string:'
        ' ParseAddr("bad"): unable to parse IP',
    ),
]


@pytest.mark.parametrize(("expression", "detail"), RUNTIME_ERRORS)
def test_library_error_has_upstream_text(expression: str, detail: str) -> None:
    assert runtime_error(expression, Device(driver="(")) == detail


def test_invalid_literal_pattern_is_a_compile_error() -> None:
    assert compile_error('device.driver.find("(") == ""') == (
        "program instantiation failed: error parsing regexp: missing closing ): `(`"
    )
    assert compile_error('device.driver.findAll("a**").size() == 0') == (
        "program instantiation failed: error parsing regexp: invalid nested repetition operator:"
        " `**`"
    )


def test_functions_only_cel_cpp_has_are_rejected_as_upstream_does() -> None:
    assert compile_error("[1, 2].first() == optional.of(1)") == (
        "compilation failed: ERROR: <input>:1:13: undeclared reference to 'first'"
        " (in container '')\n | [1, 2].first() == optional.of(1)\n | ............^"
    )


@pytest.mark.parametrize(
    ("expression", "missing"),
    [
        ('format.dns1123Label().validate("a") == optional.none()', "format, validate"),
        ("{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}", "transformMap"),
        ('string(cidr("10.0.0.0/8")) == "10.0.0.0/8"', "string(cidr)"),
    ],
)
def test_compile_error_names_what_berth_lacks(expression: str, missing: str) -> None:
    assert compile_error(expression).endswith(
        f"(Berth's CEL environment does not provide {missing})"
    )


def test_runaway_comprehension_is_stopped_with_a_clear_error() -> None:
    # k8s.io/dynamic-resource-allocation's "expensive" case: kube-scheduler stops it on cost.
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expression = "int('1'.find('[0-9]*')) < 100"
    for depth in range(7):
        expression = f"{ten}.all(x{depth}, {expression})"
    assert runtime_error(expression).startswith("comprehension iteration budget exceeded")


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        ("lists.range(-1).size() == 0", "lists.range: size must be non-negative, got -1"),
        (
            "lists.range(1000001).size() > 0",
            "lists.range: size 1000001 exceeds maximum allowed (1000000)",
        ),
        ("[[1]].flatten(-1) == []", "level must be non-negative"),
        ("dyn([1, 'a']).sort() == []", "list elements must have the same type"),
        ("dyn([[1], [2]]).sort() == []", "list elements must be comparable"),
        ("[1, 2].slice(0, 3) == []", "cannot slice(0, 3), list is length 2"),
    ],
)
def test_cel_go_list_extension_errors(expression: str, detail: str) -> None:
    assert runtime_error(expression) == detail


def test_range_check_leaves_a_valid_size_alone() -> None:
    assert matches("lists.range(1000000).size() == 1000000")
    assert matches("lists.range(size(lists.range(2))) == [0, 1]")


def test_sum_of_durations_is_a_named_gap() -> None:
    assert runtime_error("[duration('1m'), duration('1s')].sum() == duration('61s')") == (
        "sum of durations or timestamps is not provided by Berth's CEL environment"
    )
