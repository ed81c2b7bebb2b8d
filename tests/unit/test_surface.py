"""A stable public surface: a spec path leaves, changes type or reference, or
becomes immutable only with an entry in specs/accepted-changes.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from kccgen.discovery.errors import SpecError
from kccgen.generator.emit.surface import parent_path, parse_path_value, path_value
from kccgen.generator.spec.accepted import (
    AcceptedChange,
    AcceptedChangesFile,
    load_accepted_changes,
)
from kccgen.generator.surface import (
    KindSurface,
    PathInfo,
    breaking_changes,
    contradicted,
    previous_surface,
    read_surface,
    surface_problems,
)

FILE = "specs/accepted-changes.yaml"
REC = "surface/pubsub.v1.json"


def _kind(served: tuple[str, ...] = ("v1beta1",), **paths: str) -> KindSurface:
    """A Kind's surface from ``path=entry`` pairs (``__`` stands for ``.`` in the path)."""
    return KindSurface(
        frozenset(served),
        {"spec." + p.replace("__", "."): PathInfo(*parse_path_value(v)) for p, v in paths.items()},
        REC,
    )


BEFORE = {
    "PubSubTopic": _kind(
        kmsKeyRef="object ref=KMSCryptoKey",
        labels="map<string>",
        retention="string(google-duration)",
        schema="string",
        policy="object",
        policy__regions="array<string>",
        policy__enforce="boolean",
    )
}


def _problems(now: dict[str, KindSurface], *entries: AcceptedChange) -> list[str]:
    return surface_problems(breaking_changes(BEFORE, now), AcceptedChangesFile(changes=entries), FILE, now)


def _after(**changed: str | None) -> dict[str, KindSurface]:
    """BEFORE's PubSubTopic with some paths changed (None: removed)."""
    old = BEFORE["PubSubTopic"].paths
    paths = {p.removeprefix("spec.").replace(".", "__"): path_value(i.type, i.ref, i.mutable) for p, i in old.items()}
    for p, v in changed.items():
        if v is None:
            del paths[p]
        else:
            paths[p] = v
    return {"PubSubTopic": _kind(**{p: v for p, v in paths.items()})}


def test_the_same_surface_passes() -> None:
    assert _problems(dict(BEFORE)) == []


@pytest.mark.parametrize(
    ("changed", "path", "change", "says"),
    [
        ({"kmsKeyRef": None, "cryptoKeyRef": "object ref=KMSCryptoKey"}, "spec.kmsKeyRef", "removed", "renamed to spec.cryptoKeyRef?"),
        ({"labels": "array<string>"}, "spec.labels", "type", "type map<string> -> array<string>"),
        ({"retention": "string"}, "spec.retention", "type", "type string(google-duration) -> string"),
        ({"kmsKeyRef": "object"}, "spec.kmsKeyRef", "reference", "reference to KMSCryptoKey -> plain value"),
        ({"schema": "string ref=PubSubSchema"}, "spec.schema", "reference", "plain value -> reference to PubSubSchema"),
        ({"labels": "map<string> immutable"}, "spec.labels", "immutable", "mutable -> immutable"),
    ],
)
def test_each_breaking_change_is_one_line_naming_kind_path_and_the_file(
    changed: dict[str, str | None], path: str, change: str, says: str
) -> None:
    got = _problems(_after(**changed))
    assert len(got) == 1, got
    assert got[0].startswith(f"{REC}: PubSubTopic {path}: ")
    assert says in got[0]
    assert f"accept it in {FILE} (kind: PubSubTopic, path: {path}, change: {change}, reason)" in got[0]


def test_a_version_no_longer_served_is_breaking() -> None:
    now = {"PubSubTopic": KindSurface(frozenset(), BEFORE["PubSubTopic"].paths, REC)}
    (line,) = _problems(now)
    assert "PubSubTopic v1beta1: version v1beta1 no longer served" in line


def test_every_change_of_one_run_is_listed() -> None:
    got = _problems(_after(kmsKeyRef=None, labels="string", schema="string immutable"))
    assert [line.split(": ")[1] for line in got] == ["PubSubTopic spec.kmsKeyRef", "PubSubTopic spec.labels", "PubSubTopic spec.schema"]


def test_paths_under_a_removed_or_immutable_path_are_folded_into_its_line() -> None:
    got = _problems(_after(policy=None, policy__regions=None, policy__enforce=None))
    assert len(got) == 1 and "spec.policy: removed" in got[0] and "(and 2 nested paths)" in got[0]
    got = _problems(_after(policy="object immutable", policy__regions="array<string> immutable", policy__enforce="boolean immutable"))
    assert len(got) == 1 and "spec.policy: mutable -> immutable (and 2 nested paths)" in got[0]
    # one entry accepts the folded paths too
    entry = AcceptedChange(kind="PubSubTopic", path="spec.policy", change="removed", reason="the API dropped it")
    assert _problems(_after(policy=None, policy__regions=None, policy__enforce=None), entry) == []


def test_additive_changes_pass() -> None:
    now = _after(newField="string", labels="map<string>", policy__enforce="boolean")
    now["PubSubTopic"] = KindSurface(frozenset({"v1beta1", "v1"}), now["PubSubTopic"].paths, REC)
    now["PubSubNewKind"] = _kind(name="string immutable")
    assert _problems(now) == []
    # immutable -> mutable is additive too
    before = {"PubSubTopic": _kind(a="string immutable")}
    assert breaking_changes(before, {"PubSubTopic": _kind(a="string")}) == []


def test_a_gone_or_retired_kind_is_kindsets_concern() -> None:
    assert _problems({}) == []
    assert breaking_changes(BEFORE, {"PubSubTopic": _kind()}, retired=frozenset({"PubSubTopic"})) == []


def test_an_accepted_change_passes_and_stays_until_the_surface_undoes_it() -> None:
    entry = AcceptedChange(kind="PubSubTopic", path="spec.kmsKeyRef", change="removed", reason="the API renamed it")
    assert _problems(_after(kmsKeyRef=None), entry) == []
    # the next run: the record holds the change; the entry stays, with its reason
    gone = _after(kmsKeyRef=None)
    assert surface_problems(breaking_changes(gone, gone), AcceptedChangesFile(changes=(entry,)), FILE, gone) == []
    assert contradicted(AcceptedChangesFile(changes=(entry,)), FILE, gone) == []
    # the path is back: the entry no longer holds, and is reported
    assert contradicted(AcceptedChangesFile(changes=(entry,)), FILE, dict(BEFORE)) == [
        f"{FILE}#/changes/0: PubSubTopic has spec.kmsKeyRef again; remove the entry"
    ]
    # an entry for another category of change at the same path accepts nothing
    wrong = AcceptedChange(kind="PubSubTopic", path="spec.kmsKeyRef", change="type", reason="r")
    got = _problems(_after(kmsKeyRef=None), wrong)
    assert len(got) == 2 and got[0].startswith(f"{FILE}#/changes/0: PubSubTopic has no spec.kmsKeyRef") and "spec.kmsKeyRef: removed" in got[1], got
    dup = _problems(_after(kmsKeyRef=None), entry, entry)
    assert dup == [f"{FILE}#/changes/1: the same change as #/changes/0; remove one"]
    typo = AcceptedChange(kind="PubSubTopik", path="spec.x", change="removed", reason="r")
    assert contradicted(AcceptedChangesFile(changes=(typo,)), FILE, gone) == [f"{FILE}#/changes/0: PubSubTopik is not a generated Kind; remove the entry"]
    assert contradicted(AcceptedChangesFile(changes=(typo,)), FILE, gone, frozenset({"PubSubTopik"})) == []


def test_the_accepted_changes_file_is_strict(tmp_path: Path) -> None:
    f = tmp_path / "accepted-changes.yaml"
    f.write_text("changes:\n  - kind: A\n    path: spec.x\n    change: removed\n    reasn: typo\n", encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_accepted_changes(f, FILE)
    assert str(e.value) == f"{FILE}#/changes/0/reasn: unknown key 'reasn' (did you mean 'reason'?)"
    f.write_text("changes:\n  - kind: A\n    path: spec.x\n    change: renamed\n    reason: r\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"accepted-changes\.yaml#/changes/0/change"):
        load_accepted_changes(f, FILE)
    f.write_text("changes:\n  - kind: A\n    path: spec.x\n    change: type\n    reason: ''\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"#/changes/0/reason"):
        load_accepted_changes(f, FILE)


def test_the_record_reads_back_and_a_broken_one_is_named(tmp_path: Path) -> None:
    assert previous_surface(tmp_path) == {}
    d = tmp_path / "surface"
    d.mkdir(parents=True)
    (d / "x.v1.json").write_text(
        '{"format": "", "kinds": {"K": {"paths": {"spec.a": "string ref=B immutable"}, "servedVersions": ["v1"]}}}',
        encoding="utf-8",
    )
    got = previous_surface(tmp_path)
    assert got["K"].paths == {"spec.a": PathInfo("string", "B", False)} and got["K"].served == {"v1"}
    with pytest.raises(ValueError, match=r"surface/y\.json#/kinds/K: not a surface record"):
        read_surface([("surface/y.json", '{"kinds": {"K": {"paths": {"spec.a": "string bogus"}, "servedVersions": []}}}')])
    with pytest.raises(ValueError, match=r"surface/y\.json: not readable JSON"):
        read_surface([("surface/y.json", "{")])


def test_parent_paths() -> None:
    assert parent_path("spec.a[].b") == "spec.a"
    assert parent_path("spec.m.*.b") == "spec.m"
    assert parent_path("spec.a") == "spec"
    assert parent_path("spec") == ""


def test_a_reference_that_became_a_plain_value_names_the_entry_that_keeps_it() -> None:
    """SecurityCenterNotificationConfig's pubsubTopicRef became pubsubTopic when
    Google deleted the field's description: the line says so, and names the
    references entry that keeps the reference."""
    before = {"PubSubTopic": _kind(topicRef="object ref=PubSubTopic api=topic")}
    now = {"PubSubTopic": _kind(topic="string")}
    (line,) = surface_problems(breaking_changes(before, now), AcceptedChangesFile(), FILE, now)
    assert "spec.topicRef: removed (was object, reference to PubSubTopic; the API field topic is a plain value at spec.topic now)" in line
    assert "or keep it with its kind config's references: {topic: {target: PubSubTopic, reason}}" in line
    # and back: a plain value that became a reference keeps its plain form with target none
    (line,) = surface_problems(breaking_changes(now, before), AcceptedChangesFile(), FILE, before)
    assert "the API field topic is a reference to PubSubTopic at spec.topicRef now" in line
    assert "references: {topic: {target: none, reason}}" in line
