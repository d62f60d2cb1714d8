"""URLs parsed, escaped and printed as Go's net/url does, for CEL's `url()` and `isURL()`.

The cases and their expected values were produced by Go 1.26's net/url (a module at `go 1.26`,
as kube-scheduler's), read the way k8s.io/apiserver's URL library reads them: `ParseRequestURI`
to validate (`isURL`), then `Parse` for the value, whose `Scheme`, `Host`, `Hostname()`,
`Port()`, `EscapedPath()`, `Query()` and `String()` are below. kube-scheduler reports the parse
errors verbatim in FailedScheduling messages.
"""

from __future__ import annotations

import pytest

from berth.engine.dra.cel_url_parse import URLError, go_string, parse_request_uri, parse_url

# text, (scheme, host, hostname, port, escaped path), query, printed form
URLS = [
    (
        "https://kubernetes.io:80/a%2fb?x=1&x=2&y=%zz&z",
        ("https", "kubernetes.io:80", "kubernetes.io", "80", "/a%2fb"),
        {"x": ["1", "2"], "z": [""]},
        "https://kubernetes.io:80/a%2fb?x=1&x=2&y=%zz&z",
    ),
    (
        "https://kubernetes.io",
        ("https", "kubernetes.io", "kubernetes.io", "", ""),
        {},
        "https://kubernetes.io",
    ),
    (
        "http://example.com/",
        ("http", "example.com", "example.com", "", "/"),
        {},
        "http://example.com/",
    ),
    (
        "HTTPS://Example.COM/Path",
        ("https", "Example.COM", "Example.COM", "", "/Path"),
        {},
        "https://Example.COM/Path",
    ),
    ("*", ("", "", "", "", "*"), {}, "*"),
    ("/", ("", "", "", "", "/"), {}, "/"),
    ("/a/b c", ("", "", "", "", "/a/b%20c"), {}, "/a/b%20c"),
    ("//foo/bar", ("", "foo", "foo", "", "/bar"), {}, "//foo/bar"),
    ("///foo", ("", "", "", "", "///foo"), {}, "///foo"),
    ("http:///foo", ("http", "", "", "", "/foo"), {}, "http:///foo"),
    ("http:/foo", ("http", "", "", "", "/foo"), {}, "http:/foo"),
    ("http:foo", ("http", "", "", "", ""), {}, "http:foo"),
    ("mailto:user@example.com", ("mailto", "", "", "", ""), {}, "mailto:user@example.com"),
    ("http://[::1]:8080/x", ("http", "[::1]:8080", "::1", "8080", "/x"), {}, "http://[::1]:8080/x"),
    ("http://[::1]", ("http", "[::1]", "::1", "", ""), {}, "http://[::1]"),
    (
        "http://[fe80::1%25en0]/",
        ("http", "[fe80::1%en0]", "fe80::1%en0", "", "/"),
        {},
        "http://[fe80::1%25en0]/",
    ),
    (
        "http://[fe80::1%25a%20b]/",
        ("http", "[fe80::1%a b]", "fe80::1%a b", "", "/"),
        {},
        "http://[fe80::1%25a%20b]/",
    ),
    (
        "http://[fe80::1%25%41]/",
        ("http", "[fe80::1%A]", "fe80::1%A", "", "/"),
        {},
        "http://[fe80::1%25A]/",
    ),
    ("ftp://a:b:80/", ("ftp", "a:b:80", "a:b", "80", "/"), {}, "ftp://a:b:80/"),
    ("http://a:/", ("http", "a:", "a", "", "/"), {}, "http://a:/"),
    ("http://user:pass@host/", ("http", "host", "host", "", "/"), {}, "http://user:pass@host/"),
    ("http://us%40er@host/", ("http", "host", "host", "", "/"), {}, "http://us%40er@host/"),
    ("http://u@v@host/", ("http", "host", "host", "", "/"), {}, "http://u%40v@host/"),
    ("http://%c3%a9/", ("http", "é", "é", "", "/"), {}, "http://%C3%A9/"),
    ("http://é.com/", ("http", "é.com", "é.com", "", "/"), {}, "http://%C3%A9.com/"),
    ("http://a%25b/", ("http", "a%b", "a%b", "", "/"), {}, "http://a%25b/"),
    ("http://a<b/", ("http", "a<b", "a<b", "", "/"), {}, "http://a<b/"),
    ("http://a/p?%zz", ("http", "a", "a", "", "/p"), {}, "http://a/p?%zz"),
    ("http://a/?q#frag", ("http", "a", "a", "", "/"), {"q": [""]}, "http://a/?q#frag"),
    ("http://a/p#", ("http", "a", "a", "", "/p"), {}, "http://a/p"),
    ("http://a/?", ("http", "a", "a", "", "/"), {}, "http://a/?"),
    ("http://a/??", ("http", "a", "a", "", "/"), {"?": [""]}, "http://a/??"),
    ("http://a/?x?", ("http", "a", "a", "", "/"), {"x?": [""]}, "http://a/?x?"),
    ("http://a?", ("http", "a", "a", "", ""), {}, "http://a?"),
    ("http://a/a%20b", ("http", "a", "a", "", "/a%20b"), {}, "http://a/a%20b"),
    ("http://a/a b", ("http", "a", "a", "", "/a%20b"), {}, "http://a/a%20b"),
    ("http://a/a+b", ("http", "a", "a", "", "/a+b"), {}, "http://a/a+b"),
    ("http://a/a%2Bb", ("http", "a", "a", "", "/a%2Bb"), {}, "http://a/a%2Bb"),
    ("http://a/%7e", ("http", "a", "a", "", "/%7e"), {}, "http://a/%7e"),
    ("http://a/~", ("http", "a", "a", "", "/~"), {}, "http://a/~"),
    ("http://a/é", ("http", "a", "a", "", "/%C3%A9"), {}, "http://a/%C3%A9"),
    ("http://a/%c3%a9", ("http", "a", "a", "", "/%c3%a9"), {}, "http://a/%c3%a9"),
    ("http://a/%ff", ("http", "a", "a", "", "/%ff"), {}, "http://a/%ff"),
    ("http://a/;,=@:!$&'()*", ("http", "a", "a", "", "/;,=@:!$&'()*"), {}, "http://a/;,=@:!$&'()*"),
    ("http://a/[x]", ("http", "a", "a", "", "/[x]"), {}, "http://a/[x]"),
    ("http://a/a%2f%2F", ("http", "a", "a", "", "/a%2f%2F"), {}, "http://a/a%2f%2F"),
    ("http://a/?a=1;b=2", ("http", "a", "a", "", "/"), {}, "http://a/?a=1;b=2"),
    (
        "http://a/?a=1&a=2&b",
        ("http", "a", "a", "", "/"),
        {"a": ["1", "2"], "b": [""]},
        "http://a/?a=1&a=2&b",
    ),
    ("http://a/?a+b=c+d", ("http", "a", "a", "", "/"), {"a b": ["c d"]}, "http://a/?a+b=c+d"),
    ("http://a/?a%20b=%2B", ("http", "a", "a", "", "/"), {"a b": ["+"]}, "http://a/?a%20b=%2B"),
    ("http://a/?=x", ("http", "a", "a", "", "/"), {"": ["x"]}, "http://a/?=x"),
    ("http://a/?&&", ("http", "a", "a", "", "/"), {}, "http://a/?&&"),
    ("http://a/?%ff=%fe", ("http", "a", "a", "", "/"), {"�": ["�"]}, "http://a/?%ff=%fe"),
    ("http://a/?%e2%82=1", ("http", "a", "a", "", "/"), {"��": ["1"]}, "http://a/?%e2%82=1"),
    ("http://a/?k=%zz&j=1", ("http", "a", "a", "", "/"), {"j": ["1"]}, "http://a/?k=%zz&j=1"),
    ("http://a/?k=v=w", ("http", "a", "a", "", "/"), {"k": ["v=w"]}, "http://a/?k=v=w"),
    ("http://[::1]:/", ("http", "[::1]:", "::1", "", "/"), {}, "http://[::1]:/"),
    ("http:", ("http", "", "", "", ""), {}, "http:"),
    ("http:?", ("http", "", "", "", ""), {}, "http:?"),
    ("http://", ("http", "", "", "", ""), {}, "http:"),
    ("scheme+x.y-z://h/", ("scheme+x.y-z", "h", "h", "", "/"), {}, "scheme+x.y-z://h/"),
    ("a1+.-:x", ("a1+.-", "", "", "", ""), {}, "a1+.-:x"),
    ("/a:b", ("", "", "", "", "/a:b"), {}, "/a:b"),
    ("a:b/c", ("a", "", "", "", ""), {}, "a:b/c"),
    ("//", ("", "", "", "", ""), {}, ""),
    ("/?a=b", ("", "", "", "", "/"), {"a": ["b"]}, "/?a=b"),
    ("/#x", ("", "", "", "", "/"), {}, "/#x"),
    ("http://a/..//b", ("http", "a", "a", "", "/..//b"), {}, "http://a/..//b"),
    (
        "http://127.0.0.1:6443/api",
        ("http", "127.0.0.1:6443", "127.0.0.1", "6443", "/api"),
        {},
        "http://127.0.0.1:6443/api",
    ),
    (
        "https://[2001:db8::1]:443/",
        ("https", "[2001:db8::1]:443", "2001:db8::1", "443", "/"),
        {},
        "https://[2001:db8::1]:443/",
    ),
    ("http://a/path/?", ("http", "a", "a", "", "/path/"), {}, "http://a/path/?"),
    (
        "http://[::ffff:1.2.3.4]/",
        ("http", "[::ffff:1.2.3.4]", "::ffff:1.2.3.4", "", "/"),
        {},
        "http://[::ffff:1.2.3.4]/",
    ),
    ("http://]/", ("http", "]", "]", "", "/"), {}, "http://]/"),
    ("http://a]/", ("http", "a]", "a]", "", "/"), {}, "http://a]/"),
    ('http://"/', ("http", '"', '"', "", "/"), {}, 'http://"/'),
    ("http://a:80/b", ("http", "a:80", "a", "80", "/b"), {}, "http://a:80/b"),
    ("x://:80/", ("x", ":80", "", "80", "/"), {}, "x://:80/"),
    ("http://:80/", ("http", ":80", "", "80", "/"), {}, "http://:80/"),
    ("http://@/", ("http", "", "", "", "/"), {}, "http://@/"),
    ("http://a@/", ("http", "", "", "", "/"), {}, "http://a@/"),
    (
        "https://kubernetes.io/docs/?a=b#c",
        ("https", "kubernetes.io", "kubernetes.io", "", "/docs/"),
        {"a": ["b"]},
        "https://kubernetes.io/docs/?a=b#c",
    ),
    (
        "https://x/%E2%9C%93?%E2%9C%93=%E2%9C%93",
        ("https", "x", "x", "", "/%E2%9C%93"),
        {"✓": ["✓"]},
        "https://x/%E2%9C%93?%E2%9C%93=%E2%9C%93",
    ),
    ("http://a/?a=%C3", ("http", "a", "a", "", "/"), {"a": ["�"]}, "http://a/?a=%C3"),
]

# text, whether ParseRequestURI accepts it, the first error of ParseRequestURI then Parse
URL_ERRORS = [
    ("a", False, 'parse "a": invalid URI for request'),
    ("", False, 'parse "": empty url'),
    ("1http://x", False, 'parse "1http://x": invalid URI for request'),
    (":foo", False, 'parse ":foo": missing protocol scheme'),
    ("http://[fe80::1%en0]/", False, 'parse "http://[fe80::1%en0]/": invalid URL escape "%en"'),
    ("http://[1.2.3.4]/", False, 'parse "http://[1.2.3.4]/": invalid IP-literal'),
    ("http://[::1]x/", False, 'parse "http://[::1]x/": invalid port "x" after host'),
    ("http://x[::1]/", False, 'parse "http://x[::1]/": invalid IP-literal'),
    ("http://[::1/", False, "parse \"http://[::1/\": missing ']' in host"),
    (
        "http://[zz]/",
        False,
        'parse "http://[zz]/": invalid host: ParseAddr("zz"): unable to parse IP',
    ),
    ("http://[::1%25%ff]/", False, 'parse "http://[::1%25%ff]/": invalid URL escape "%ff"'),
    (
        "http://[%ff::1]/",
        False,
        'parse "http://[%ff::1]/": invalid host: ParseAddr("\\xff::1"): each colon-separated field must have at least one digit (at "\\xff::1")',
    ),
    (
        "http://[%c2%a0::1]/",
        False,
        'parse "http://[%c2%a0::1]/": invalid host: ParseAddr("\\u00a0::1"): each colon-separated field must have at least one digit (at "\\u00a0::1")',
    ),
    ("http://a:b:c/", False, 'parse "http://a:b:c/": invalid port ":b:c" after host'),
    ("ftp://a:b:c/", False, 'parse "ftp://a:b:c/": invalid port ":c" after host'),
    ("http://a:80:90/", False, 'parse "http://a:80:90/": invalid port ":80:90" after host'),
    ("http://a:8x/", False, 'parse "http://a:8x/": invalid port ":8x" after host'),
    ("http://u é@host/", False, 'parse "http://u é@host/": net/url: invalid userinfo'),
    ("http://u%zz@host/", False, 'parse "http://u%zz@host/": invalid URL escape "%zz"'),
    ("http://%41/", False, 'parse "http://%41/": invalid URL escape "%41"'),
    ("http://a b/", False, 'parse "http://a b/": invalid character " " in host name'),
    ("http://a/%zz", False, 'parse "http://a/%zz": invalid URL escape "%zz"'),
    ("http://a/%", False, 'parse "http://a/%": invalid URL escape "%"'),
    ("http://a/%a", False, 'parse "http://a/%a": invalid URL escape "%a"'),
    ("http://a/#%zz", False, 'parse "http://a/#%zz": invalid URL escape "%zz"'),
    ("http://a/?q#%zz", True, 'parse "http://a/?q#%zz": invalid URL escape "%zz"'),
    ("http://a\x7f/", False, 'parse "http://a\\x7f/": net/url: invalid control character in URL'),
    ("http://a/\x00", False, 'parse "http://a/\\x00": net/url: invalid control character in URL'),
    ("http://a/\t", False, 'parse "http://a/\\t": net/url: invalid control character in URL'),
    ("\x01", False, 'parse "\\x01": net/url: invalid control character in URL'),
    ("http://[::1]:80x/", False, 'parse "http://[::1]:80x/": invalid port ":80x" after host'),
    ("./a:b", False, 'parse "./a:b": invalid URI for request'),
    ("?", False, 'parse "?": invalid URI for request'),
    ("#x", False, 'parse "#x": invalid URI for request'),
    (
        "http://[1:2]/",
        False,
        'parse "http://[1:2]/": invalid host: ParseAddr("1:2"): address string too short',
    ),
    (
        "http://[::1%25]/",
        False,
        'parse "http://[::1%25]/": invalid host: ParseAddr("::1%"): zone must be a non-empty string',
    ),
    ("http://[]/", False, 'parse "http://[]/": invalid host: ParseAddr(""): unable to parse IP'),
    ("http://[", False, "parse \"http://[\": missing ']' in host"),
    ("http://a[/", False, 'parse "http://a[/": invalid IP-literal'),
    ("http://%30/", False, 'parse "http://%30/": invalid URL escape "%30"'),
    ("http://a%/", False, 'parse "http://a%/": invalid URL escape "%"'),
    ("http://a%2/", False, 'parse "http://a%2/": invalid URL escape "%2"'),
]


def _fields(text: str) -> tuple[str, ...]:
    url = parse_url(text)
    return tuple(
        go_string(part)
        for part in (url.scheme, url.host, url.hostname(), url.port(), url.escaped_path())
    )


def _query(text: str) -> dict[str, list[str]]:
    query = parse_url(text).query()
    return {go_string(key): [go_string(value) for value in values] for key, values in query.items()}


@pytest.mark.parametrize(("text", "fields", "query", "printed"), URLS)
def test_url_parts_are_gos(
    text: str, fields: tuple[str, ...], query: dict[str, list[str]], printed: str
) -> None:
    parse_request_uri(text)
    assert _fields(text) == fields
    assert _query(text) == query
    assert go_string(parse_url(text).string()) == printed


@pytest.mark.parametrize(("text", "is_url", "message"), URL_ERRORS)
def test_parse_errors_are_gos(text: str, is_url: bool, message: str) -> None:
    with pytest.raises(URLError) as failure:
        if is_url:  # only Parse, which cuts the fragment off first, refuses it
            parse_request_uri(text)
            parse_url(text)
        else:
            parse_request_uri(text)
    assert str(failure.value) == message


def test_query_beyond_ten_thousand_parameters_is_empty() -> None:
    # Go 1.26's ParseQuery refuses more than 10,000 parameters; Query() drops the error.
    assert _query("http://a/?" + "&".join(["a=1"] * 10000)) == {"a": ["1"] * 10000}
    assert _query("http://a/?" + "&".join(["a=1"] * 10001)) == {}
