"""PodDisruptionBudget, reduced to what preemption reads: which pods it covers and how many may go."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.labels import LabelSelector, parse_label_selector
from berth.engine.model.parsing import RawObject, as_int, as_map, as_str, display_name


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector | None  # None or empty: covers no pod
    disruptions_allowed: int  # status.disruptionsAllowed
    disrupted_pods: frozenset[str]  # pod names in status.disruptedPods (already counted)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def covers(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Same namespace and a non-empty selector that matches, as kube-scheduler's preemption reads it."""
        return (
            namespace == self.namespace
            and self.selector is not None
            and not self.selector.is_empty
            and self.selector.matches(labels)
        )

    @classmethod
    def from_dict(cls, raw: RawObject) -> PodDisruptionBudget:
        """Parse a policy/v1 PodDisruptionBudget; raises `InvalidObjectError` naming the field."""
        metadata = raw.get("metadata") if isinstance(raw, Mapping) else None
        if not isinstance(metadata, Mapping):
            metadata = {}
        namespace = display_name(metadata.get("namespace"), "default")
        name = display_name(metadata.get("name"))
        try:
            metadata = as_map(raw.get("metadata"), "metadata")
            spec = as_map(raw.get("spec"), "spec")
            status = as_map(raw.get("status"), "status")
            try:
                selector = parse_label_selector(spec.get("selector"), "spec.selector")
            except FieldError:
                # kube-scheduler treats a selector it cannot convert as matching nothing.
                selector = None
            disrupted = as_map(status.get("disruptedPods"), "status.disruptedPods")
            pdb_name = as_str(metadata.get("name"), "metadata.name")
            if not pdb_name:
                raise FieldError("metadata.name", "must be set")
            return cls(
                namespace=as_str(metadata.get("namespace"), "metadata.namespace") or "default",
                name=pdb_name,
                selector=selector,
                disruptions_allowed=as_int(
                    status.get("disruptionsAllowed"), "status.disruptionsAllowed", bits=32
                ),
                disrupted_pods=frozenset(str(pod) for pod in disrupted),
            )
        except FieldError as error:
            raise InvalidObjectError(
                kind="PodDisruptionBudget",
                name=f"{namespace}/{name}",
                field=error.field,
                problem=error.problem,
            ) from None
