"""The three volume plugins against plain per-node references, on random clusters."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins import node_volume_limits, volume_restrictions, volume_zone
from tests.builders import make_node
from tests.unit.engine.plugins.node_plugin_support import Judgement, judge
from tests.unit.engine.plugins.volume_objects import (
    Raw,
    attachment,
    claim,
    claim_volume,
    csi_node,
    csi_volume,
    ephemeral_volume,
    inline,
    persistent_volume,
    pod_with,
    storage_class,
    storage_cycle,
)
from tests.unit.engine.reference import node_volume_limits as limits_reference
from tests.unit.engine.reference import volume_restrictions as restrictions_reference
from tests.unit.engine.reference import volume_zone as zone_reference

NODES = ("n0", "n1", "n2")
_CODES = {
    "unschedulable": Code.UNSCHEDULABLE,
    "unresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    "error": Code.ERROR,
}


# ---------------------------------------------------------------------- VolumeRestrictions

restricted_volume_st = st.one_of(
    st.builds(
        lambda pd, ro: inline("v", "gcePersistentDisk", pdName=pd, readOnly=ro),
        st.sampled_from("ab"),
        st.booleans(),
    ),
    st.builds(
        lambda vid, ro: inline("v", "awsElasticBlockStore", volumeID=vid, readOnly=ro),
        st.sampled_from(("vol-1", "vol-2")),
        st.booleans(),
    ),
    st.builds(
        lambda iqn, ro: inline("v", "iscsi", targetPortal="p", iqn=iqn, lun=0, readOnly=ro),
        st.sampled_from(("i1", "i2")),
        st.booleans(),
    ),
    st.builds(
        lambda monitors, pool, ro: inline(
            "v", "rbd", monitors=sorted(monitors), image="img", pool=pool, readOnly=ro
        ),
        st.sets(st.sampled_from(("m1", "m2", "m3")), min_size=1),
        st.sampled_from(("", "rbd", "other")),
        st.booleans(),
    ),
    st.builds(claim_volume, st.sampled_from(("solo", "shared", "missing"))),
)


def _named(volumes: list[Raw]) -> list[Raw]:
    return [{**volume, "name": f"v{index}"} for index, volume in enumerate(volumes)]


@settings(max_examples=150, deadline=None)
@given(
    placed=st.lists(
        st.tuples(st.sampled_from(NODES), st.lists(restricted_volume_st, max_size=2)), max_size=6
    ),
    wanted=st.lists(restricted_volume_st, min_size=1, max_size=3),
)
def test_volume_restrictions_matches_reference(
    placed: list[tuple[str, list[Raw]]], wanted: list[Raw]
) -> None:
    claims = {
        ("default", "solo"): claim("solo", modes=("ReadWriteOncePod",)),
        ("default", "shared"): claim("shared", modes=("ReadWriteMany",)),
    }
    raw_pods = [
        pod_with(f"p{index}", *_named(volumes), node=node)
        for index, (node, volumes) in enumerate(placed)
    ]
    raw_pod = pod_with("incoming", *_named(wanted))
    state = storage_cycle(
        tuple(make_node(name).obj() for name in NODES),
        pods=tuple(raw_pods),
        objects=tuple(claims.values()),
    )
    expected = {
        node: restrictions_reference.verdict(
            raw_pod, [p for p in raw_pods if p["spec"]["nodeName"] == node], raw_pods, claims
        )
        for node in NODES
    }
    assert judge(volume_restrictions.new_plugin(None), Pod.from_dict(raw_pod), state) == (
        _shape(expected)
    )


def _shape(verdicts: dict[str, tuple[str, str]]) -> dict[str, Judgement]:
    kinds = {kind for kind, _ in verdicts.values()}
    if kinds == {"skip"}:
        return {"*": (Code.SKIP, ())}
    if "prefilter" in kinds:
        (message,) = {message for _, message in verdicts.values()}
        return {"*": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))}
    return {
        node: (Code.SUCCESS, ()) if kind == "pass" else (_CODES[kind], (message,))
        for node, (kind, message) in verdicts.items()
    }


# ---------------------------------------------------------------------- VolumeZone

ZONE_KEYS = st.sampled_from(zone_reference.LABELS)
zone_value_st = st.sampled_from(("a", "b", "a__b", "a__", " b "))


@settings(max_examples=150, deadline=None)
@given(
    node_labels=st.lists(st.dictionaries(ZONE_KEYS, st.sampled_from("ab")), min_size=3, max_size=3),
    volume_labels=st.lists(
        st.dictionaries(ZONE_KEYS, zone_value_st, max_size=2), min_size=2, max_size=2
    ),
    claim_states=st.lists(
        st.sampled_from(
            ("bound-0", "bound-1", "missing", "late", "now", "no-class", "lost-volume")
        ),
        min_size=1,
        max_size=2,
    ),
)
def test_volume_zone_matches_reference(
    node_labels: list[dict[str, str]],
    volume_labels: list[dict[str, str]],
    claim_states: list[str],
) -> None:
    nodes = []
    for name, labels in zip(NODES, node_labels, strict=True):
        builder = make_node(name)
        for key, value in labels.items():
            builder.label(key, value)
        nodes.append(builder.obj())
    volumes = {
        f"pv{i}": persistent_volume(f"pv{i}", labels=labels)
        for i, labels in enumerate(volume_labels)
    }
    classes = {"late": storage_class("late"), "now": storage_class("now", wait=False)}
    claims: dict[str, Raw] = {}
    pod_volumes = []
    for index, kind in enumerate(claim_states):
        name = f"c{index}"
        pod_volumes.append(claim_volume(name))
        if kind.startswith("bound"):
            claims[name] = claim(name, volume=f"pv{kind[-1]}")
        elif kind in ("late", "now"):
            claims[name] = claim(name, storage_class=kind)
        elif kind == "no-class":
            claims[name] = claim(name)
        elif kind == "lost-volume":
            claims[name] = claim(name, volume="gone")
    raw_pod = pod_with("incoming", *pod_volumes)
    state = storage_cycle(
        tuple(nodes), objects=(*claims.values(), *volumes.values(), *classes.values())
    )
    expected = {
        node["metadata"]["name"]: zone_reference.verdict(raw_pod, node, claims, volumes, classes)
        for node in nodes
    }
    assert judge(volume_zone.new_plugin(None), Pod.from_dict(raw_pod), state) == _shape(expected)


# ---------------------------------------------------------------------- NodeVolumeLimits

DRIVER = "csi.example.com"
limits_volume_st = st.one_of(
    st.builds(claim_volume, st.sampled_from(("h1", "h2", "h3", "shared", "late", "missing"))),
    st.just(ephemeral_volume("scratch")),
    st.builds(lambda pd: inline("v", "gcePersistentDisk", pdName=pd), st.sampled_from("ab")),
    st.builds(
        lambda vid: inline("v", "awsElasticBlockStore", volumeID=vid),
        st.sampled_from(("vol-1", "aws://z/vol-1", "vol-2")),
    ),
)
limit_st = st.one_of(st.none(), st.integers(0, 3))


@settings(max_examples=200, deadline=None)
@given(
    csi_limits=st.lists(
        st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {DRIVER: limit_st, "pd.csi.storage.gke.io": limit_st, "ebs.csi.aws.com": limit_st}
            ),
        ),
        min_size=3,
        max_size=3,
    ),
    placed=st.lists(
        st.tuples(st.sampled_from(NODES), st.lists(limits_volume_st, max_size=2)), max_size=5
    ),
    attached=st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(("h1", "h3"))), max_size=2),
    wanted=st.lists(limits_volume_st, min_size=1, max_size=3),
)
def test_node_volume_limits_matches_reference(
    csi_limits: list[dict[str, int | None] | None],
    placed: list[tuple[str, list[Raw]]],
    attached: list[tuple[str, str]],
    wanted: list[Raw],
) -> None:
    world: dict[str, dict[str, Raw]] = {
        "claims": {},
        "volumes": {},
        "classes": {"fast": storage_class("fast", DRIVER)},
        "csi_nodes": {},
        "drivers": {},
        "attachments": {},
    }
    for handle in ("h1", "h2", "h3"):
        world["claims"][f"default/{handle}"] = claim(handle, volume=f"pv-{handle}")
        world["volumes"][f"pv-{handle}"] = csi_volume(f"pv-{handle}", DRIVER, handle)
    world["claims"]["default/shared"] = claim("shared", volume="pv-shared")
    world["volumes"]["pv-shared"] = csi_volume("pv-shared", DRIVER, "h1")
    world["claims"]["default/late"] = claim("late", storage_class="fast")
    world["claims"]["default/incoming-v0"] = claim(
        "incoming-v0", storage_class="fast", owner_uid="incoming-uid"
    )
    for node, limits in zip(NODES, csi_limits, strict=True):
        if limits is not None:
            world["csi_nodes"][node] = csi_node(node, limits)
    for index, (node, handle) in enumerate(attached):
        world["attachments"][f"va{index}"] = attachment(
            f"va{index}", node=node, attacher=DRIVER, volume=f"pv-{handle}"
        )
    raw_pods = [
        pod_with(f"p{index}", *_named(volumes), node=node)
        for index, (node, volumes) in enumerate(placed)
    ]
    raw_pod = pod_with("incoming", *_named(wanted), uid="incoming-uid")
    objects = tuple(raw for kind in world.values() for raw in kind.values())
    state = storage_cycle(
        tuple(make_node(n).obj() for n in NODES), pods=tuple(raw_pods), objects=objects
    )
    expected = {
        node: limits_reference.verdict(
            raw_pod, node, [p for p in raw_pods if p["spec"]["nodeName"] == node], world
        )
        for node in NODES
    }
    assert judge(node_volume_limits.new_plugin(None), Pod.from_dict(raw_pod), state) == (
        _shape(expected)
    )
