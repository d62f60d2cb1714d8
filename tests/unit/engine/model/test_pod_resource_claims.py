"""A pod's DRA claims: parsed from spec and status, and resolved to claim objects as upstream does."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.errors import InvalidObjectError
from berth.engine.model.pod import Pod
from berth.engine.model.pod_resource_claims import (
    ClaimNameError,
    PodResourceClaim,
    ResolvedClaim,
    claim_name,
)


def _pod(claims: list[dict[str, Any]], statuses: list[dict[str, Any]] | None = None) -> Pod:
    raw: dict[str, Any] = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c"}], "resourceClaims": claims},
    }
    if statuses is not None:
        raw["status"] = {"resourceClaimStatuses": statuses}
    return Pod.from_dict(raw)


def test_the_pod_keeps_each_claim_source_and_the_generated_names() -> None:
    pod = _pod(
        [
            {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
            {"name": "shared", "resourceClaimName": "team-gpus"},
            {"name": "skipped", "resourceClaimTemplateName": "maybe"},
        ],
        [
            {"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"},
            {"name": "skipped"},
        ],
    )
    assert pod.resource_claims == (
        PodResourceClaim("gpu", resource_claim_template_name="one-gpu"),
        PodResourceClaim("shared", resource_claim_name="team-gpus"),
        PodResourceClaim("skipped", resource_claim_template_name="maybe"),
    )
    assert pod.resource_claim_statuses == {"gpu": "p-gpu-x7k2q", "skipped": None}


def _resolve(pod: Pod, index: int) -> ResolvedClaim:
    return claim_name(
        namespace=pod.namespace,
        pod_name=pod.name,
        entry=pod.resource_claims[index],
        statuses=pod.resource_claim_statuses,
    )


def test_claims_resolve_as_upstream_names_them() -> None:
    pod = _pod(
        [
            {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
            {"name": "shared", "resourceClaimName": "team-gpus"},
            {"name": "skipped", "resourceClaimTemplateName": "maybe"},
        ],
        [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}, {"name": "skipped"}],
    )
    assert _resolve(pod, 0) == ResolvedClaim("p-gpu-x7k2q", generated=True)
    assert _resolve(pod, 1) == ResolvedClaim("team-gpus", generated=False)
    assert _resolve(pod, 2) == ResolvedClaim(None, generated=True)


@pytest.mark.parametrize(
    ("claims", "message", "not_created"),
    [
        (
            [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            'pod "ns/p": ResourceClaim not created yet',
            True,
        ),
        (
            [{"name": "gpu"}],
            'pod "ns/p", spec.resourceClaim "gpu": none of the supported fields are set',
            False,
        ),
    ],
    ids=["not-created-yet", "no-source"],
)
def test_a_claim_that_cannot_be_named_is_upstreams_error(
    claims: list[dict[str, Any]], message: str, *, not_created: bool
) -> None:
    with pytest.raises(ClaimNameError) as caught:
        _resolve(_pod(claims), 0)
    assert str(caught.value) == message
    assert caught.value.not_created is not_created


def test_the_first_status_of_a_name_counts() -> None:
    pod = _pod(
        [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        [{"name": "gpu", "resourceClaimName": "first"}, {"name": "gpu", "resourceClaimName": "x"}],
    )
    assert pod.resource_claim_statuses == {"gpu": "first"}


@pytest.mark.parametrize(
    ("claims", "statuses", "message"),
    [
        (
            [{"name": "gpu", "resourceClaimName": 3}],
            None,
            "spec.resourceClaims[0].resourceClaimName",
        ),
        ([], [{"resourceClaimName": "x"}], "status.resourceClaimStatuses[0].name: must be set"),
    ],
    ids=["bad-claim-name", "status-without-name"],
)
def test_malformed_claims_name_the_field(
    claims: list[dict[str, Any]], statuses: list[dict[str, Any]] | None, message: str
) -> None:
    with pytest.raises(InvalidObjectError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _pod(claims, statuses)
