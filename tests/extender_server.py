"""A scriptable scheduler extender on loopback, for kube-scheduler and Berth alike.

kube-scheduler calls extenders over HTTP with JSON bodies whose field names are
Go's (`Pod`, `Nodes`, `NodeNames`...). To prove Berth speaks the same protocol,
the same server must serve both schedulers, record exactly what each sent, and
answer as a test says: fail these nodes, score those, answer late, answer 500,
set `Error`, bind through a callback. It runs in a background thread (plain
`http.server`, HTTP/1.1 keep-alive), so it serves an asyncio test and a Go
process equally, and it counts TCP connections so that tests can check reuse.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ExtenderScript", "ExtenderServer", "RecordedCall", "VerbScript"]

VERBS = ("filter", "prioritize", "preempt", "bind")


@dataclass
class VerbScript:
    """How one verb misbehaves (the defaults: answer at once, 200, no Error)."""

    status: int = 200
    error: str = ""  # the result's `Error` field (filter and bind results have one)
    # Seconds to hold the answer back; ExtenderServer.stop() releases held answers early.
    delay: float = 0.0
    body: str | None = None  # a raw reply body instead of the computed one


@dataclass
class ExtenderScript:
    """What the extender decides; tests mutate it between calls."""

    failed: dict[str, str] = field(default_factory=dict)  # node -> FailedNodes reason
    unresolvable: dict[str, str] = field(default_factory=dict)  # FailedAndUnresolvableNodes
    scores: dict[str, int] = field(default_factory=dict)  # node -> 0..10; absent = 0
    verbs: dict[str, VerbScript] = field(default_factory=dict)
    # Binds a pod (given ExtenderBindingArgs); returns the result's Error ("" = bound).
    bind: Callable[[Mapping[str, Any]], str] | None = None

    def verb(self, name: str) -> VerbScript:
        return self.verbs.get(name, VerbScript())


@dataclass(frozen=True)
class RecordedCall:
    verb: str
    body: Any  # the decoded JSON request body
    connection: int  # which TCP connection carried it (1, 2, ...)


class ExtenderServer:
    """An extender at `url` (http(s)://127.0.0.1:<port>); every request is kept in `calls`.

    With `tls` (a server-side SSLContext) it serves HTTPS.
    """

    def __init__(
        self, script: ExtenderScript | None = None, *, tls: ssl.SSLContext | None = None
    ) -> None:
        self.script = script or ExtenderScript()
        self._scheme = "https" if tls is not None else "http"
        self.calls: list[RecordedCall] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        # A short poll keeps stop() quick (shutdown waits for the next poll).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{self._scheme}://{host!s}:{port}"

    def start(self) -> ExtenderServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> ExtenderServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def bodies(self, verb: str) -> list[Any]:
        with self._lock:
            return [call.body for call in self.calls if call.verb == verb]

    # -- called from the handler threads ------------------------------------------------

    def _new_connection(self) -> int:
        with self._lock:
            self.connections += 1
            return self.connections

    def _record(self, verb: str, body: Any, connection: int) -> None:
        with self._lock:
            self.calls.append(RecordedCall(verb, body, connection))

    def _hold(self, seconds: float) -> None:
        if seconds > 0:
            self._release.wait(seconds)

    def answer(self, verb: str, body: Any) -> Any:
        """The reply body for one call, as the script says."""
        script = self.script
        if verb == "filter":
            return _filter_reply(script, body, script.verb(verb).error)
        if verb == "prioritize":
            return [{"Host": name, "Score": script.scores.get(name, 0)} for name in _names(body)]
        if verb == "preempt":
            return {"NodeNameToMetaVictims": _meta_victims(body)}
        if verb == "bind":
            error = script.verb(verb).error or (script.bind(body) if script.bind else "")
            return {"Error": error}
        raise KeyError(verb)


def _names(args: Mapping[str, Any]) -> list[str]:
    """The node names of an ExtenderArgs, whichever form (names or full nodes) it carries."""
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [node["metadata"]["name"] for node in (args.get("Nodes") or {}).get("items") or []]


def _filter_reply(script: ExtenderScript, args: Mapping[str, Any], error: str) -> dict[str, Any]:
    rejected = script.failed.keys() | script.unresolvable.keys()
    passing = [name for name in _names(args) if name not in rejected]
    offered = set(_names(args))
    reply: dict[str, Any] = {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": {k: v for k, v in script.failed.items() if k in offered},
        "FailedAndUnresolvableNodes": {
            k: v for k, v in script.unresolvable.items() if k in offered
        },
        "Error": error,
    }
    if args.get("NodeNames") is not None:
        reply["NodeNames"] = passing
    else:
        items = [node for node in args["Nodes"]["items"] if node["metadata"]["name"] in passing]
        reply["Nodes"] = {"metadata": {}, "items": items}
    return reply


def _meta_victims(args: Mapping[str, Any]) -> dict[str, Any]:
    """Agree with every candidate: the victims proposed, as UIDs (what an extender must answer)."""
    if args.get("NodeNameToMetaVictims") is not None:
        return dict(args["NodeNameToMetaVictims"])
    return {
        node: {
            "Pods": [{"UID": pod["metadata"]["uid"]} for pod in victims.get("Pods") or []],
            "NumPDBViolations": victims.get("NumPDBViolations", 0),
        }
        for node, victims in (args.get("NodeNameToVictims") or {}).items()
    }


def _handler_for(server: ExtenderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as Go's transport expects

        def setup(self) -> None:
            super().setup()
            self.connection_number = server._new_connection()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the recorded calls are the log

        def do_POST(self) -> None:
            verb = self.path.rstrip("/").rsplit("/", 1)[-1]
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            body = json.loads(raw) if raw else None
            server._record(verb, body, self.connection_number)
            if verb not in VERBS:
                self._reply(404, b"unknown verb")
                return
            script = server.script.verb(verb)
            server._hold(script.delay)
            if script.status != 200:
                self._reply(script.status, b"scripted failure")
                return
            reply = (
                script.body if script.body is not None else json.dumps(server.answer(verb, body))
            )
            self._reply(200, reply.encode())

        def _reply(self, status: int, payload: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the caller gave up (a client-side timeout): nothing to answer

    return Handler
