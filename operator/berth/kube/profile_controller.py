"""Keeps the live profiles equal to the valid SchedulerProfile resources, and says so in their status.

A valid profile is built completely and swapped in whole; an invalid edit is
reported on the resource (`Accepted=False`, a message naming the field) while
the last good version keeps serving; deleting the resource retires its
schedulerName.
"""

from __future__ import annotations

import copy
import datetime
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.engine.errors import FieldError, InvalidObjectError, capped
from berth.engine.extenders import ExtenderConfig
from berth.engine.framework.runtime import plugin_summary
from berth.engine.registry import Registry
from berth.kube.extender_client import tls_context
from berth.profiles import LoadedProfile, load_profile
from berth.profiles.extenders import extender_document
from berth.profiles.loading import KIND
from berth.scheduling.loop import Scheduler

logger = logging.getLogger(__name__)

PROFILES_PATH = "/apis/berth.dev/v1alpha1/schedulerprofiles"


@dataclass(frozen=True, slots=True)
class Verdict:
    accepted: bool
    reason: str
    message: str
    generation: int
    serving_generation: int | None


def _serving_verdict(loaded: LoadedProfile, generation: int) -> Verdict:
    return Verdict(
        True, "Valid", f"serving schedulerName {loaded.scheduler_name}", generation, generation
    )


class ProfileController:
    def __init__(
        self,
        scheduler: Scheduler,
        session: Any,
        *,
        registry: Registry,
        extenders: tuple[ExtenderConfig, ...] = (),
    ) -> None:
        self._scheduler = scheduler
        self._session = session
        self._registry = registry  # in-tree plugins and installed plugin packages
        self._extenders = extenders  # berth run --config's, called for every profile first
        # resource name -> what it serves (the last good version), and that version's spec
        self._serving: dict[str, LoadedProfile] = {}
        self._serving_specs: dict[str, Any] = {}

    def configz(self) -> dict[str, Any]:
        return {
            loaded.scheduler_name: {
                "resource": name,
                "generation": loaded.generation,
                "plugins": plugin_summary(loaded.framework),
                "scoreWeights": loaded.framework.score_weights,
                "percentageOfNodesToScore": loaded.framework.percentage_of_nodes_to_score,
                # In call order, the global ones included; PEM data redacted.
                "extenders": [extender_document(e) for e in loaded.framework.extenders],
            }
            for name, loaded in sorted(self._serving.items())
        }

    def _check_tls(self, loaded: LoadedProfile) -> None:
        """The profile's own extenders' TLS material loads (kube-scheduler refuses to start on
        material it cannot load; the global extenders were checked when Berth started)."""
        own = loaded.framework.config.extenders[len(self._extenders) :]
        for index, extender in enumerate(own):
            try:
                tls_context(extender)
            except FieldError as bad:
                raise InvalidObjectError(
                    kind=KIND,
                    name=loaded.name,
                    field=f"spec.extenders[{index}].{bad.field}",
                    problem=bad.problem,
                ) from None

    def apply(self, document: Mapping[str, Any]) -> Verdict:
        """Validate one SchedulerProfile and swap it in when valid (pure decision + in-memory swap).

        Never raises: whatever goes wrong with a profile (an invalid document, or a
        plugin that fails while being built) is reported on the resource as `Invalid`,
        and the last good version keeps serving.
        """
        metadata = document.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        name = str(metadata.get("name") or "")
        generation = metadata.get("generation")
        generation = generation if isinstance(generation, int) else 0
        previous = self._serving.get(name)
        serving = previous.generation if previous else None
        spec = document.get("spec")
        if previous is not None and serving == generation and self._serving_specs[name] == spec:
            # A re-delivery of what already serves (Berth's own status write, kopf's
            # bookkeeping, a re-list): building it again would change nothing but cost a
            # whole framework build, three times over at every start-up.
            return _serving_verdict(previous, generation)
        try:
            loaded = load_profile(document, registry=self._registry, extenders=self._extenders)
            self._check_tls(loaded)
            verdict = self._swap_in(name, generation, loaded)
            if verdict.accepted:
                self._serving_specs[name] = copy.deepcopy(spec)
            return verdict
        except InvalidObjectError as error:
            logger.warning("%s (the last good version keeps serving)", error)
            return Verdict(False, "Invalid", f"{error.field}: {error.problem}", generation, serving)
        except Exception as error:  # a bug in building: still the resource's verdict, not a crash
            logger.exception("SchedulerProfile %s could not be applied", name)
            problem = capped(f"cannot build this profile: {type(error).__name__}: {error}")
            return Verdict(False, "Invalid", f"spec: {problem}", generation, serving)

    def _swap_in(self, name: str, generation: int, loaded: LoadedProfile) -> Verdict:
        previous = self._serving.get(name)
        serving = previous.generation if previous else None
        for other_name, other in self._serving.items():
            if other_name != name and other.scheduler_name == loaded.scheduler_name:
                message = (
                    f"spec.schedulerName: {loaded.scheduler_name!r} is already served by "
                    f"SchedulerProfile {other_name}"
                )
                return Verdict(False, "Conflict", message, generation, serving)
        # Swapped in before anything is retired, so that a failure leaves the old state whole.
        self._scheduler.set_profile(loaded.framework)
        if previous is not None and previous.scheduler_name != loaded.scheduler_name:
            self._scheduler.remove_profile(previous.scheduler_name)
        self._serving[name] = loaded
        logger.info(
            "Profile %s serves schedulerName %s (generation %d)",
            name,
            loaded.scheduler_name,
            generation,
        )
        return _serving_verdict(loaded, generation)

    def delete(self, name: str) -> None:
        self._serving_specs.pop(name, None)
        loaded = self._serving.pop(name, None)
        if loaded is not None:
            self._scheduler.remove_profile(loaded.scheduler_name)
            logger.info(
                "Profile %s deleted: schedulerName %s is no longer served",
                name,
                loaded.scheduler_name,
            )

    async def report(self, document: Mapping[str, Any], verdict: Verdict) -> None:
        """Write the verdict to the resource's status, unless it already says exactly that."""
        metadata = document.get("metadata") or {}
        name = metadata.get("name", "")
        status = document.get("status") or {}
        current = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "Accepted"), None
        )
        wanted_status = "True" if verdict.accepted else "False"
        if (
            current is not None
            and current.get("status") == wanted_status
            and current.get("reason") == verdict.reason
            and current.get("message") == verdict.message
            and status.get("observedGeneration") == verdict.generation
            and status.get("servingGeneration") == verdict.serving_generation
        ):
            return
        changed = current is None or current.get("status") != wanted_status
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        condition = {
            "type": "Accepted",
            "status": wanted_status,
            "reason": verdict.reason,
            "message": verdict.message,
            "observedGeneration": verdict.generation,
            "lastTransitionTime": now if changed else current.get("lastTransitionTime", now),  # type: ignore[union-attr]
        }
        body: dict[str, Any] = {
            "status": {
                "observedGeneration": verdict.generation,
                "conditions": [condition],
            }
        }
        if verdict.serving_generation is not None:
            body["status"]["servingGeneration"] = verdict.serving_generation
        try:
            await self._session.patch_json(
                f"{PROFILES_PATH}/{name}/status", body, content_type="merge"
            )
        except Exception as error:  # the status is advisory; the next event retries it
            logger.warning("Could not write the status of SchedulerProfile %s: %s", name, error)
