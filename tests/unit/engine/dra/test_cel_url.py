"""Kubernetes' URL library (`url`, `isURL`, `get*`) in DRA selectors, as Berth evaluates them.

Every case and its expected outcome was produced by k8s.io/dynamic-resource-allocation v0.37.2's
CEL compiler (`GetCompiler(...).CompileCELExpression`, then `DeviceMatches`), built with Go
1.26, on a device of driver "dra.example.com" with the string attribute `endpoint`: a match
result, or the runtime or compile error text kube-scheduler reports after "CEL runtime error: "
or "CEL compile error: ".
"""

from __future__ import annotations

import pytest

from berth.engine.dra.cel import CelError, compile_selector
from tests.unit.engine.dra.cel_test_device import Device

DEVICE = Device(attributes={"endpoint": "https://gpu-0.example.com:8443/metrics"})


def outcome(expression: str) -> tuple[str, bool | str]:
    try:
        return "result", compile_selector(expression).matches(DEVICE)
    except CelError as error:
        return error.kind, error.detail


RESULTS = [
    ('url("https://example.com/").getScheme() == "https"', True),
    ('url("HTTPS://example.com/").getScheme() == "https"', True),
    ('url("https://example.com:80/").getHost() == "example.com:80"', True),
    ('url("https://[::1]:80/").getHost() == "[::1]:80"', True),
    ('url("https://[::1]:80/").getHostname() == "::1"', True),
    ('url("https://[fe80::1%25en0]/").getHostname() == "fe80::1%en0"', True),
    ('url("https://example.com:80/").getHostname() == "example.com"', True),
    ('url("https://example.com:80/").getPort() == "80"', True),
    ('url("https://example.com/").getPort() == ""', True),
    ('url("/path").getHost() == "" && url("/path").getScheme() == ""', True),
    ('url("//host/path").getHost() == "host"', True),
    ('url("https://example.com/a b/%2F").getEscapedPath() == "/a%20b//"', True),
    ('url("https://example.com/%7e").getEscapedPath() == "/%7e"', True),
    ('url("https://example.com/a%2Fb").getEscapedPath() == "/a%2Fb"', True),
    ('url("https://example.com/path?").getEscapedPath() == "/path"', True),
    ('url("mailto:a@example.com").getEscapedPath() == ""', True),
    ('url("https://example.com/?k=v&k=w&x").getQuery() == {"k": ["v", "w"], "x": [""]}', True),
    ('url("https://example.com/?a+b=%2B").getQuery() == {"a b": ["+"]}', True),
    ('url("https://example.com/?a=1;b=2&c=%zz&d=3").getQuery() == {"d": ["3"]}', True),
    ('url("https://example.com/").getQuery() == {}', True),
    ('url("https://example.com/?k=v#frag").getQuery()["k"] == ["v"]', True),
    ('url("https://example.com/?k=%C3%A9").getQuery()["k"][0] == "é"', True),
    ('url("https://example.com/?k=v").getQuery().size() == 1', True),
    ('url("https://example.com/") == url("HTTPS://example.com/")', True),
    ('url("https://example.com/a#x") == url("https://example.com/a#x")', True),
    ('url("https://example.com/a#x") != url("https://example.com/a#y")', True),
    ('url("https://example.com/a%20b") == url("https://example.com/a b")', True),
    ('url("https://example.com/%7e") == url("https://example.com/~")', False),
    ('url("https://example.com/a") != url("https://example.com/b")', True),
    ('isURL("https://example.com/") && isURL("/path") && isURL("*")', True),
    ('!isURL("example.com") && !isURL("") && !isURL("https://[::1")', True),
    ('isURL("https://example.com/#%zz")', False),
    ('isURL("https://example.com/?q#%zz")', True),
    ('!isURL("http://a:b:c/") && isURL("ftp://a:b:80/")', True),
    ('isURL(device.attributes["dra.example.com"].endpoint)', True),
    ('url(device.attributes["dra.example.com"].endpoint).getPort() == "8443"', True),
    ('url(device.attributes["dra.example.com"].endpoint).getEscapedPath() == "/metrics"', True),
]

RUNTIME_ERRORS = [
    (
        'url("example.com").getHost() == ""',
        'URL parse error during conversion from string: parse "example.com": invalid URI for request',
    ),
    (
        'url("").getHost() == ""',
        'URL parse error during conversion from string: parse "": empty url',
    ),
    (
        'url("https://example.com/?q#%zz").getHost() == ""',
        'URL parse error during conversion from string: parse "https://example.com/?q#%zz": invalid URL escape "%zz"',
    ),
    (
        'url("http://a:b:c/").getHost() == ""',
        'URL parse error during conversion from string: parse "http://a:b:c/": invalid port ":b:c" after host',
    ),
    (
        'url("http://[zz]/").getHost() == ""',
        'URL parse error during conversion from string: parse "http://[zz]/": invalid host: ParseAddr("zz"): unable to parse IP',
    ),
    (
        'url("http://[%c2%a0::1]/").getHost() == ""',
        'URL parse error during conversion from string: parse "http://[%c2%a0::1]/": invalid host: ParseAddr("\\u00a0::1"): each colon-separated field must have at least one digit (at "\\u00a0::1")',
    ),
    (
        'url("http://a/\\t").getHost() == ""',
        'URL parse error during conversion from string: parse "http://a/\\t": net/url: invalid control character in URL',
    ),
    (
        'url("http://%41/").getHost() == ""',
        'URL parse error during conversion from string: parse "http://%41/": invalid URL escape "%41"',
    ),
    (
        'url("http://u é@a/").getHost() == ""',
        'URL parse error during conversion from string: parse "http://u é@a/": net/url: invalid userinfo',
    ),
]

COMPILE_ERRORS = [
    (
        'string(url("https://example.com/")) == ""',
        "compilation failed: ERROR: <input>:1:7: found no matching overload for 'string' applied to '(kubernetes.URL)'\n | string(url(\"https://example.com/\")) == \"\"\n | ......^",
    ),
    (
        'url("https://example.com/") == "https://example.com/"',
        "compilation failed: ERROR: <input>:1:29: found no matching overload for '_==_' applied to '(kubernetes.URL, string)'\n | url(\"https://example.com/\") == \"https://example.com/\"\n | ............................^",
    ),
    (
        'url(1) == url("a")',
        "compilation failed: ERROR: <input>:1:4: found no matching overload for 'url' applied to '(int)'\n | url(1) == url(\"a\")\n | ...^",
    ),
]


@pytest.mark.parametrize(("expression", "expected"), RESULTS)
def test_url_functions(expression: str, expected: bool) -> None:
    assert outcome(expression) == ("result", expected)


@pytest.mark.parametrize(("expression", "detail"), RUNTIME_ERRORS)
def test_url_parse_errors(expression: str, detail: str) -> None:
    assert outcome(expression) == ("runtime", detail)


@pytest.mark.parametrize(("expression", "detail"), COMPILE_ERRORS)
def test_url_misuse_is_a_compile_error(expression: str, detail: str) -> None:
    assert outcome(expression) == ("compile", detail)


def test_url_error_report_names_the_selector_and_device() -> None:
    with pytest.raises(CelError) as failure:
        compile_selector('url("nope").getScheme() == "https"').matches(DEVICE)
    assert failure.value.report(
        owner="class gpu", selector_index=0, device_id="dra.example.com/pool/dev-0"
    ) == (
        "class gpu: selector #0 on device dra.example.com/pool/dev-0: CEL runtime error: URL"
        ' parse error during conversion from string: parse "nope": invalid URI for request'
    )
