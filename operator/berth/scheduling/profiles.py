"""The live profiles of one process, keyed by schedulerName and swapped whole."""

from __future__ import annotations

from collections.abc import Iterator

from berth.engine.framework.runtime import Framework
from berth.engine.model.pod import Pod


class LiveProfiles:
    """schedulerName -> Framework. A swap replaces a whole Framework, so nothing is half-applied."""

    def __init__(self) -> None:
        self._by_name: dict[str, Framework] = {}

    def set(self, framework: Framework) -> None:
        self._by_name[framework.profile_name] = framework

    def remove(self, scheduler_name: str) -> Framework | None:
        return self._by_name.pop(scheduler_name, None)

    def get(self, scheduler_name: str) -> Framework | None:
        return self._by_name.get(scheduler_name)

    def for_pod(self, pod: Pod) -> Framework | None:
        return self._by_name.get(pod.scheduler_name)

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def __iter__(self) -> Iterator[Framework]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)
