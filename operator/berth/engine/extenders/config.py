"""A scheduler extender's configuration as the engine takes it: typed, checked, defaulted.

One `ExtenderConfig` is one `extenders[]` entry of kube-scheduler v1.37's
KubeSchedulerConfiguration (k8s.io/kube-scheduler/config/v1 `Extender`). Reading
the document (field names, types, paths in errors) is `berth.profiles`' job;
these values are what the cycles and the HTTP client are built from.
"""

from __future__ import annotations

from dataclasses import dataclass

# kube-scheduler's HTTPExtender uses this when httpTimeout is unset or zero.
DEFAULT_HTTP_TIMEOUT_SECONDS = 5.0
# An extender's prioritize scores run from MIN to MAX (k8s.io/kube-scheduler/extender/v1).
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10


@dataclass(frozen=True, slots=True)
class ExtenderTLSConfig:
    """`tlsConfig`: how to reach an HTTPS extender. `*_data` are PEM bytes (base64 in documents)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True, slots=True)
class ManagedResource:
    """An extended resource the extender manages; `ignored_by_scheduler` hides it from NodeResourcesFit."""

    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtenderConfig:
    """One extender. An empty verb means the extender does not take part in that phase."""

    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    preempt_verb: str = ""
    bind_verb: str = ""
    weight: int = 0  # multiplies prioritize scores; must be positive when prioritize_verb is set
    enable_https: bool = False
    tls: ExtenderTLSConfig | None = None
    http_timeout_seconds: float = DEFAULT_HTTP_TIMEOUT_SECONDS
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False

    @property
    def name(self) -> str:
        """What kube-scheduler calls the extender (in logs and score lists): its urlPrefix."""
        return self.url_prefix

    @property
    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    @property
    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def verb_url(self, verb: str) -> str:
        """The URL kube-scheduler POSTs a verb to: the prefix without trailing slashes, "/", verb."""
        return self.url_prefix.rstrip("/") + "/" + verb


def in_call_order(extenders: tuple[ExtenderConfig, ...]) -> tuple[ExtenderConfig, ...]:
    """The order kube-scheduler calls extenders in: the non-ignorable first, each group as listed."""
    return tuple(e for e in extenders if not e.ignorable) + tuple(
        e for e in extenders if e.ignorable
    )
