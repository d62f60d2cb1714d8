"""StorageClass, as VolumeBinding and VolumeZone read it: who provisions, when, and where.

`volumeBindingMode` is defaulted to Immediate when unset, as the API server does on create.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from berth.engine.errors import FieldError
from berth.engine.model.labels import is_label_value, qualified_name_problem
from berth.engine.model.object_meta import HasMetadata, ObjectMeta, parse_object
from berth.engine.model.parsing import RawObject, as_enum, as_list, as_map, as_str, brief

__all__ = ["NOT_SUPPORTED_PROVISIONER", "BindingMode", "StorageClass", "TopologySelectorTerm"]

NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


class BindingMode(StrEnum):
    IMMEDIATE = "Immediate"
    WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """One `allowedTopologies` term: every key present on the node with one of its values.

    A term upstream cannot turn into a selector (no expressions, an expression without
    values, a key or value that is no valid label) matches no node; it is kept, not refused.
    """

    expressions: tuple[tuple[str, frozenset[str]], ...]
    valid: bool = True

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.valid and all(
            key in labels and labels[key] in values for key, values in self.expressions
        )


@dataclass(frozen=True, slots=True)
class StorageClass(HasMetadata):
    metadata: ObjectMeta
    provisioner: str
    volume_binding_mode: BindingMode  # the API server's default, Immediate, when unset
    allowed_topologies: tuple[TopologySelectorTerm, ...]  # empty: every node
    reclaim_policy: str
    parameters: Mapping[str, str]

    @property
    def waits_for_first_consumer(self) -> bool:
        return self.volume_binding_mode is BindingMode.WAIT_FOR_FIRST_CONSUMER

    def allows_topology(self, labels: Mapping[str, str]) -> bool:
        """Upstream `MatchTopologySelectorTerms`: no terms allow every node, else any term must match."""
        if not self.allowed_topologies:
            return True
        return any(term.matches(labels) for term in self.allowed_topologies)

    @classmethod
    def from_dict(cls, raw: RawObject) -> StorageClass:
        """Parse a storage.k8s.io/v1 StorageClass; raises `InvalidObjectError` naming the field."""
        return parse_object(raw, kind="StorageClass", namespaced=False, parse=_parse_class)


def _parse_topologies(raw: object) -> tuple[TopologySelectorTerm, ...]:
    terms = []
    for index, item in enumerate(as_list(raw, "allowedTopologies")):
        where = f"allowedTopologies[{index}]"
        term = as_map(item, where)
        expressions = []
        for position, expression in enumerate(
            as_list(term.get("matchLabelExpressions"), f"{where}.matchLabelExpressions")
        ):
            at = f"{where}.matchLabelExpressions[{position}]"
            entry = as_map(expression, at)
            key = as_str(entry.get("key"), f"{at}.key")
            if not key:
                raise FieldError(f"{at}.key", "must be set")
            values = frozenset(
                as_str(value, f"{at}.values[{i}]")
                for i, value in enumerate(as_list(entry.get("values"), f"{at}.values"))
            )
            expressions.append((key, values))
        valid = bool(expressions) and all(
            values
            and qualified_name_problem(key) is None
            and all(is_label_value(value) for value in values)
            for key, values in expressions
        )
        terms.append(TopologySelectorTerm(tuple(expressions), valid))
    return tuple(terms)


def _parse_class(metadata: ObjectMeta, raw: RawObject) -> StorageClass:
    parameters = as_map(raw.get("parameters"), "parameters")
    for key, value in parameters.items():
        if not isinstance(value, str):
            raise FieldError(f"parameters[{brief(key)}]", f"expected a string, got {brief(value)}")
    return StorageClass(
        metadata=metadata,
        provisioner=as_str(raw.get("provisioner"), "provisioner"),
        volume_binding_mode=as_enum(
            BindingMode, raw.get("volumeBindingMode"), "volumeBindingMode", BindingMode.IMMEDIATE
        ),
        allowed_topologies=_parse_topologies(raw.get("allowedTopologies")),
        reclaim_policy=as_str(raw.get("reclaimPolicy"), "reclaimPolicy") or "Delete",
        parameters={str(key): str(value) for key, value in parameters.items()},
    )
