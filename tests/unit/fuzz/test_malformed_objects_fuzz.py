"""Valid generated objects with one field of the wrong type, fed through the live intake.

The intake must never raise: the object is either refused, with a logged error naming the
broken field (or a field that encloses it), or read as if the field said nothing harmful.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from berth.engine.errors import InvalidObjectError
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from tests.unit.fuzz.budget import FUZZ
from tests.unit.fuzz.live_path import PROFILES, SCHEDULER_NAMES, LivePath, run_live
from tests.unit.fuzz.outcomes import classify
from tests.unit.fuzz.strategies.corruption import corrupted
from tests.unit.fuzz.strategies.nodes import raw_nodes
from tests.unit.fuzz.strategies.pods import raw_pods


def _related(error_field: str, broken: str) -> bool:
    """The error names the broken field, one enclosing it, or one inside it (map keys
    spelled `labels['k']` in errors are `labels.k` in the broken path; a long key is shown
    cut, `head...tail`)."""
    named = re.sub(r"\['([^']*)'\]", r".\1", error_field)
    prefix = "".join(
        ".*" if part == "..." else re.escape(part) for part in re.split(r"(\.\.\.)", named)
    )
    return bool(re.match(prefix, broken)) or named.startswith(broken)


@st.composite
def broken_objects(draw: st.DrawFn) -> tuple[str, dict[str, Any], str, str]:
    """(kind, broken object, the broken field's path, the object's name or UID)."""
    if draw(st.booleans()):
        raw = draw(raw_nodes())
        kind, key = "node", raw["metadata"]["name"]
    else:
        raw = draw(raw_pods(scheduler_names=SCHEDULER_NAMES, node_names=["n1"]))
        kind, key = "pod", raw["metadata"]["uid"]
    broken, where = draw(corrupted(raw))
    return kind, broken, where, key


@FUZZ
@given(broken_objects())
def test_a_field_of_the_wrong_type_is_refused_naming_it(
    drawn: tuple[str, dict[str, Any], str, str],
) -> None:
    kind, raw, where, key = drawn
    parse = Node.from_dict if kind == "node" else Pod.from_dict
    try:
        parse(raw)
    except InvalidObjectError as error:
        assert _related(error.field, where), f"broke {where}, error names {error.field}: {error}"

    async def scenario(live: LivePath) -> None:
        for profile in PROFILES:
            live.apply_profile(profile)
        await live.start()
        if kind == "node":
            live.node_event("ADDED", raw, name=key)
        else:
            live.pod_event("ADDED", raw, uid=key)
        await live.settle()
        assert live.loop_running()
        assert not live.logs.messages(logging.ERROR)
        if kind == "pod":
            classify(live)

    run_live(scenario)
