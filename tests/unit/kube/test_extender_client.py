"""ExtenderClient against the test extender on loopback: real HTTP(S), real timeouts, real sockets.

Each failure must read as kube-scheduler's error for it: the texts come from
tests/data/extender/messages.json, captured from the real kube-scheduler with
the same test extender (only the extender's URL differs).
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.controlplane.pki import CertificateAuthority
from berth.engine.errors import FieldError
from berth.engine.extenders import ExtenderConfig, ExtenderTLSConfig, MetaVictims, Victims
from berth.kube.extender_client import (
    Answered,
    ExtenderClient,
    ExtenderError,
    ExtenderErrorKind,
)
from tests.builders import make_node, make_pod
from tests.extender_server import ExtenderServer, VerbScript

MESSAGES = json.loads(
    (Path(__file__).parents[2] / "data" / "extender" / "messages.json").read_text()
)
NODES = [make_node(name).obj() for name in ("a", "b", "c")]
POD = make_pod("p").uid("uid-p").obj()


def _kube_schedulers_message(scenario: str, url: str) -> str:
    """What kube-scheduler said for `scenario`, as if it had called the extender at `url`."""
    message: str = MESSAGES[scenario]
    return message.replace(MESSAGES["url"], url)


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    with ExtenderServer() as running:
        yield running


def _config(server: ExtenderServer, **fields: Any) -> ExtenderConfig:
    defaults: dict[str, Any] = {
        "url_prefix": server.url,
        "filter_verb": "filter",
        "prioritize_verb": "prioritize",
        "preempt_verb": "preempt",
        "bind_verb": "bind",
        "weight": 1,
    }
    return ExtenderConfig(**{**defaults, **fields})


def _answer(reply: Answered[Any] | ExtenderError) -> Any:
    assert isinstance(reply, Answered), reply
    return reply.value


def _failure(reply: Answered[Any] | ExtenderError) -> ExtenderError:
    assert isinstance(reply, ExtenderError), reply
    return reply


# ------------------------------------------------------------------ answers


@pytest.mark.parametrize("cached", [False, True], ids=["node-objects", "node-names"])
async def test_filter_sends_the_shape_node_caching_asks_for(
    server: ExtenderServer, cached: bool
) -> None:
    server.script.failed = {"b": "no licence"}
    server.script.unresolvable = {"c": "wrong rack"}
    async with ExtenderClient(_config(server, node_cache_capable=cached)) as client:
        result = _answer(await client.filter(pod=POD, nodes=NODES))
    assert result.node_names == ("a",)
    assert result.from_node_objects is not cached
    assert (dict(result.failed), dict(result.failed_and_unresolvable)) == (
        {"b": "no licence"},
        {"c": "wrong rack"},
    )
    (sent,) = server.bodies("filter")
    if cached:
        assert sent["Nodes"] is None and sent["NodeNames"] == ["a", "b", "c"]
    else:
        assert sent["NodeNames"] is None
        assert [n["metadata"]["name"] for n in sent["Nodes"]["items"]] == ["a", "b", "c"]
    assert "kind" not in sent["Pod"] and sent["Pod"]["metadata"]["name"] == "p"


async def test_prioritize_answers_raw_scores(server: ExtenderServer) -> None:
    server.script.scores = {"a": 10, "c": 3}
    async with ExtenderClient(_config(server, node_cache_capable=True)) as client:
        priorities = _answer(await client.prioritize(pod=POD, nodes=NODES))
    assert [(p.host, p.score) for p in priorities] == [("a", 10), ("b", 0), ("c", 3)]


async def test_bind_sends_the_pod_and_node(server: ExtenderServer) -> None:
    bound: list[Any] = []
    server.script.bind = lambda args: bound.append(dict(args)) or ""
    async with ExtenderClient(_config(server)) as client:
        assert _answer(await client.bind(namespace="ns", name="p", uid="u", node="b")) == "b"
    assert bound == [{"PodName": "p", "PodNamespace": "ns", "PodUID": "u", "Node": "b"}]


async def test_bind_error_field_is_the_error(server: ExtenderServer) -> None:
    server.script.bind = lambda args: "node b is out of licences"
    async with ExtenderClient(_config(server)) as client:
        error = _failure(await client.bind(namespace="ns", name="p", uid="u", node="b"))
    assert (error.kind, error.message) == (
        ExtenderErrorKind.ERROR_FIELD,
        "node b is out of licences",
    )


@pytest.mark.parametrize("cached", [False, True], ids=["full-victims", "meta-victims"])
async def test_preempt_answers_victims_by_uid(server: ExtenderServer, cached: bool) -> None:
    victim = make_pod("v").uid("uid-v").node("a").obj()
    async with ExtenderClient(_config(server, node_cache_capable=cached)) as client:
        answer = _answer(
            await client.preempt(pod=POD, victims={"a": Victims((victim,), num_pdb_violations=1)})
        )
    assert answer == {"a": MetaVictims(("uid-v",), 1)}
    (sent,) = server.bodies("preempt")
    if cached:
        assert sent["NodeNameToVictims"] is None
        assert sent["NodeNameToMetaVictims"]["a"]["Pods"] == [{"UID": "uid-v"}]
    else:
        assert sent["NodeNameToMetaVictims"] is None
        assert sent["NodeNameToVictims"]["a"]["Pods"][0]["metadata"]["name"] == "v"


async def test_one_connection_serves_every_call(server: ExtenderServer) -> None:
    async with ExtenderClient(_config(server)) as client:
        for _ in range(3):
            _answer(await client.filter(pod=POD, nodes=NODES))
            _answer(await client.prioritize(pod=POD, nodes=NODES))
    assert len(server.calls) == 6
    assert server.connections == 1
    assert {call.connection for call in server.calls} == {1}


async def test_a_url_prefix_with_a_path_and_trailing_slash(server: ExtenderServer) -> None:
    config = _config(server, url_prefix=server.url + "/scheduler/")
    async with ExtenderClient(config) as client:
        _answer(await client.filter(pod=POD, nodes=NODES))
    assert config.verb_url("filter") == server.url + "/scheduler/filter"


# ------------------------------------------------------------------ failures, in kube-scheduler's words


@pytest.mark.parametrize("ignorable", [False, True], ids=["not-ignorable", "ignorable"])
async def test_a_timeout(server: ExtenderServer, ignorable: bool) -> None:
    # The answer is held back far beyond the client's timeout; stopping the server releases it.
    server.script.verbs["filter"] = VerbScript(delay=60)
    config = _config(server, http_timeout_seconds=0.2, ignorable=ignorable)
    async with ExtenderClient(config) as client:
        error = _failure(await client.filter(pod=POD, nodes=NODES))
    assert error.kind is ExtenderErrorKind.TIMEOUT
    assert error.message == _kube_schedulers_message("timeout", server.url)
    assert (error.extender, error.verb, error.ignorable) == (server.url, "filter", ignorable)


async def test_a_status_other_than_200(server: ExtenderServer) -> None:
    server.script.verbs["filter"] = VerbScript(status=500)
    async with ExtenderClient(_config(server)) as client:
        error = _failure(await client.filter(pod=POD, nodes=NODES))
    assert error.kind is ExtenderErrorKind.HTTP_STATUS
    assert error.message == _kube_schedulers_message("status-500", server.url)


async def test_the_error_field(server: ExtenderServer) -> None:
    server.script.verbs["filter"] = VerbScript(error="licence server down")
    async with ExtenderClient(_config(server)) as client:
        error = _failure(await client.filter(pod=POD, nodes=NODES))
    assert error.kind is ExtenderErrorKind.ERROR_FIELD
    assert error.message == _kube_schedulers_message("error-field", server.url)


async def test_nobody_listening() -> None:
    with ExtenderServer() as gone:
        url = gone.url
    async with ExtenderClient(ExtenderConfig(url_prefix=url, filter_verb="filter")) as client:
        error = _failure(await client.filter(pod=POD, nodes=NODES))
    port = url.rsplit(":", 1)[1]
    assert error.kind is ExtenderErrorKind.TRANSPORT
    assert error.message == (
        f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [("", "EOF"), ("not json", None), ('{"NodeNames": "a"}', "NodeNames: expected a list")],
    ids=["empty", "not-json", "wrong-shape"],
)
async def test_a_reply_that_is_not_the_result(
    server: ExtenderServer, body: str, message: str | None
) -> None:
    server.script.verbs["filter"] = VerbScript(body=body)
    async with ExtenderClient(_config(server, node_cache_capable=True)) as client:
        error = _failure(await client.filter(pod=POD, nodes=NODES))
    assert error.kind is ExtenderErrorKind.BAD_REPLY
    if message is not None:
        assert message in error.message


async def test_a_filtered_node_that_was_not_offered(server: ExtenderServer) -> None:
    server.script.verbs["filter"] = VerbScript(body='{"NodeNames": ["a", "z"]}')
    async with ExtenderClient(_config(server, node_cache_capable=True)) as client:
        error = _failure(await client.filter(pod=POD, nodes=NODES))
    assert error.message == (
        f'extender "{server.url}" claims a filtered node "z" which is not found in the input '
        "node list"
    )


async def test_trailing_data_after_the_reply_is_ignored_as_by_go(server: ExtenderServer) -> None:
    server.script.verbs["filter"] = VerbScript(body='{"NodeNames": ["a"]}\n{"garbage"')
    async with ExtenderClient(_config(server, node_cache_capable=True)) as client:
        assert _answer(await client.filter(pod=POD, nodes=NODES)).node_names == ("a",)


# ------------------------------------------------------------------ HTTPS


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> CertificateAuthority:
    return CertificateAuthority(tmp_path_factory.mktemp("extender-pki"))


def _serving(authority: CertificateAuthority, *, client_ca: bool = False) -> ssl.SSLContext:
    pair = authority.issue_server("extender", dns_names=("extender.example", "localhost"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pair.cert_path, pair.key_path)
    if client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=authority.cert_path)
    return context


@pytest.mark.parametrize(
    "tls",
    [
        lambda ca: None,  # enableHTTPS alone: no CA, so the certificate is not verified
        lambda ca: ExtenderTLSConfig(ca_data=ca.cert_path.read_bytes()),
        lambda ca: ExtenderTLSConfig(ca_file=str(ca.cert_path)),
        lambda ca: ExtenderTLSConfig(
            ca_data=ca.cert_path.read_bytes(), server_name="extender.example"
        ),
    ],
    ids=["https-without-ca", "ca-data", "ca-file", "server-name"],
)
async def test_https(authority: CertificateAuthority, tls: Any) -> None:
    with ExtenderServer(tls=_serving(authority)) as server:
        config = _config(server, enable_https=True, tls=tls(authority))
        async with ExtenderClient(config) as client:
            assert _answer(await client.filter(pod=POD, nodes=NODES)).node_names == ("a", "b", "c")


async def test_https_with_the_wrong_ca_fails_in_transport(
    authority: CertificateAuthority, tmp_path: Path
) -> None:
    other = CertificateAuthority(tmp_path / "other")
    with ExtenderServer(tls=_serving(authority)) as server:
        config = _config(server, tls=ExtenderTLSConfig(ca_data=other.cert_path.read_bytes()))
        async with ExtenderClient(config) as client:
            error = _failure(await client.filter(pod=POD, nodes=NODES))
    assert error.kind is ExtenderErrorKind.TRANSPORT
    assert error.message.startswith(f'Post "{server.url}/filter": ')


@pytest.mark.parametrize("as_data", [True, False], ids=["cert-data", "cert-file"])
async def test_https_with_a_client_certificate(
    authority: CertificateAuthority, as_data: bool
) -> None:
    pair = authority.issue_client("berth-scheduler")
    if as_data:
        tls = ExtenderTLSConfig(
            ca_data=authority.cert_path.read_bytes(),
            cert_data=pair.cert_path.read_bytes(),
            key_data=pair.key_path.read_bytes(),
        )
    else:
        tls = ExtenderTLSConfig(
            ca_file=str(authority.cert_path),
            cert_file=str(pair.cert_path),
            key_file=str(pair.key_path),
        )
    with ExtenderServer(tls=_serving(authority, client_ca=True)) as server:
        async with ExtenderClient(_config(server, tls=tls)) as client:
            _answer(await client.filter(pod=POD, nodes=NODES))
        no_certificate = ExtenderTLSConfig(ca_data=authority.cert_path.read_bytes())
        async with ExtenderClient(_config(server, tls=no_certificate)) as client:
            assert _failure(await client.filter(pod=POD, nodes=NODES)).kind is (
                ExtenderErrorKind.TRANSPORT
            )


@pytest.mark.parametrize(
    ("tls", "field"),
    [
        (ExtenderTLSConfig(ca_file="/nonexistent/ca.crt"), "tlsConfig.caFile"),
        (ExtenderTLSConfig(ca_data=b"not a certificate"), "tlsConfig.caData"),
        (ExtenderTLSConfig(cert_file="/nonexistent/c.crt"), "tlsConfig.certFile"),
        (ExtenderTLSConfig(cert_data=b"not a certificate"), "tlsConfig.certData"),
    ],
    ids=["ca-file", "ca-data", "cert-file", "cert-data"],
)
def test_unusable_tls_material_names_its_field(tls: ExtenderTLSConfig, field: str) -> None:
    with pytest.raises(FieldError) as raised:
        ExtenderClient(ExtenderConfig(url_prefix="https://x", tls=tls))
    assert raised.value.field == field
    assert raised.value.problem.startswith("cannot load: ")
