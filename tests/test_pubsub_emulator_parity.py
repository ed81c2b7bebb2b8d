"""mockgcp against Google's Pub/Sub emulator, step by step, judged by real GCP.

One scenario (topics, a dead-letter topic, a subscription, patches, list,
404/409 errors, deletes) runs through the same google-api-python-client
client built from ``specs/discovery/pubsub.v1.json``, once against mockgcp
and once against Google's Pub/Sub emulator (``gcloud beta emulators pubsub``;
started here straight from its launcher, see tests/support/emulators.py).
Every exchange is recorded on both sides.

The emulator is not real GCP either. ``EMULATOR_DIFFERENCES`` lists where it
departs from real Pub/Sub; applying that table to the emulator's answer gives
what real GCP would answer, and mockgcp must match that, per step:

* the HTTP status code, always;
* the set of top-level response fields (and ``error.status`` on errors, and
  the topic names a list returns).

Each table entry is backed by a ``RealGcp`` fact that ``test_real_gcp_facts``
checks against Config Connector's recordings of real traffic
(``../shared/compat/kcc/fixtures/basic/pubsub/**/_http.log``), and each entry
must actually show up on the emulator, so the table cannot go stale silently.

Where mockgcp itself departs from real GCP, the step is an expected failure
listed in ``MOCKGCP_GAPS`` (strict: the step must then differ in exactly the
listed ways, and it fails once the gap is fixed, so the entry is removed).

Not compared: error messages. Real Pub/Sub says ``Resource not found
(resource=<short id>).``; the emulator says ``Topic not found``,
``Subscription does not exist``, ``Topic already exists``; mockgcp says
``Resource not found (resource=projects/p/topics/t).`` and ``Resource already
exists in the project (resource=...)``. Only ``error.status`` is compared.

Without the emulator or Java the tests that need it skip with
"Pub/Sub emulator not found: <what is missing>".
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from google.auth.credentials import AnonymousCredentials
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build_from_document
from googleapiclient.errors import HttpError

from kccgen.mockgcp.httplog import HttpLogEntry, read_http_log
from kccgen.mockgcp.server import MockServer
from tests.conftest import COMPAT, REPO
from tests.support.emulators import (
    PubSubEmulator,
    RecordingHttp,
    running_pubsub_emulator,
)

DISCOVERY = REPO / "specs" / "discovery" / "pubsub.v1.json"
RECORDINGS = COMPAT / "fixtures" / "basic" / "pubsub"

PROJECT = "projects/kccgen-parity"
TOPIC = f"{PROJECT}/topics/parity-topic"
DEAD_LETTER = f"{PROJECT}/topics/parity-dead-letter"
SUBSCRIPTION = f"{PROJECT}/subscriptions/parity-sub"
MISSING = f"{PROJECT}/topics/parity-missing"


# --- the scenario ----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    id: str
    call: Callable[[Any], Any]  # pubsub client -> googleapiclient HttpRequest


def _topics(ps: Any) -> Any:
    return ps.projects().topics()


def _subs(ps: Any) -> Any:
    return ps.projects().subscriptions()


STEPS: tuple[Step, ...] = (
    Step(
        "create-topic", lambda ps: _topics(ps).create(name=TOPIC, body={"labels": {"env": "test"}})
    ),
    Step("get-topic", lambda ps: _topics(ps).get(topic=TOPIC)),
    Step("create-dead-letter-topic", lambda ps: _topics(ps).create(name=DEAD_LETTER, body={})),
    Step(
        "create-subscription",
        lambda ps: _subs(ps).create(
            name=SUBSCRIPTION,
            body={
                "topic": TOPIC,
                "ackDeadlineSeconds": 15,
                "labels": {"env": "test"},
                "deadLetterPolicy": {"deadLetterTopic": DEAD_LETTER, "maxDeliveryAttempts": 5},
            },
        ),
    ),
    Step("get-subscription", lambda ps: _subs(ps).get(subscription=SUBSCRIPTION)),
    Step(
        "patch-subscription-ack-deadline",
        lambda ps: _subs(ps).patch(
            name=SUBSCRIPTION,
            body={"subscription": {"ackDeadlineSeconds": 30}, "updateMask": "ackDeadlineSeconds"},
        ),
    ),
    Step(
        "patch-topic-labels",
        lambda ps: _topics(ps).patch(
            name=TOPIC,
            body={"topic": {"labels": {"env": "prod", "team": "kcc"}}, "updateMask": "labels"},
        ),
    ),
    Step("get-topic-after-patch", lambda ps: _topics(ps).get(topic=TOPIC)),
    Step("list-topics", lambda ps: _topics(ps).list(project=PROJECT)),
    Step("get-missing-topic", lambda ps: _topics(ps).get(topic=MISSING)),
    Step(
        "create-existing-topic",
        lambda ps: _topics(ps).create(name=TOPIC, body={"labels": {"env": "test"}}),
    ),
    Step("delete-subscription", lambda ps: _subs(ps).delete(subscription=SUBSCRIPTION)),
    Step("delete-topic", lambda ps: _topics(ps).delete(topic=TOPIC)),
    Step("delete-dead-letter-topic", lambda ps: _topics(ps).delete(topic=DEAD_LETTER)),
    Step("get-deleted-topic", lambda ps: _topics(ps).get(topic=TOPIC)),
    Step("get-deleted-subscription", lambda ps: _subs(ps).get(subscription=SUBSCRIPTION)),
)
STEP_IDS = tuple(s.id for s in STEPS)
TOPIC_STEPS = frozenset(
    {
        "create-topic",
        "get-topic",
        "create-dead-letter-topic",
        "patch-topic-labels",
        "get-topic-after-patch",
    }
)
SUBSCRIPTION_STEPS = frozenset(
    {"create-subscription", "get-subscription", "patch-subscription-ack-deadline"}
)


# --- what real GCP does (checked against KCC's recordings) ---------------------------------


@dataclass(frozen=True)
class RealGcp:
    """A fact about real Pub/Sub; ``test_real_gcp_facts`` checks it in the recordings.

    claim: ``always`` - every 200 GET/PUT/PATCH answer for the collection has
    the field; ``never`` - none has it; ``omitted-when-unset`` - a create that
    does not set the field gets an answer without it; ``mask-accepted`` - a
    PATCH whose updateMask names the field answers 200 with the resource.
    """

    collection: str  # "topics" | "subscriptions"
    field: str
    claim: str


TOPIC_HAS_NO_STATE = RealGcp("topics", "state", "never")
TOPIC_LABELS_PATCHABLE = RealGcp("topics", "labels", "mask-accepted")
SUBSCRIPTION_HAS_STATE = RealGcp("subscriptions", "state", "always")
SUBSCRIPTION_HAS_EXPIRATION = RealGcp("subscriptions", "expirationPolicy", "always")
SUBSCRIPTION_RETENTION_NOT_DEFAULTED = RealGcp(
    "subscriptions", "messageRetentionDuration", "omitted-when-unset"
)


@dataclass(frozen=True)
class EmulatorDifference:
    """Where Google's emulator (0.8.20) departs from real Pub/Sub.

    effect: ``omits`` - real GCP returns ``field``, the emulator does not;
    ``adds`` - the emulator returns ``field``, real GCP does not;
    ``rejects`` - the emulator answers ``emulator_status`` where real GCP
    answers ``real_status`` with a resource whose fields are ``real_fields``.
    """

    what: str
    steps: frozenset[str]
    effect: str
    fact: RealGcp
    field: str = ""
    emulator_status: int = 0
    real_status: int = 0
    real_fields: frozenset[str] = frozenset()


# Known emulator differences: applied to the emulator's answer they give real GCP's.
EMULATOR_DIFFERENCES: tuple[EmulatorDifference, ...] = (
    # The emulator's Subscription has no state; real GCP answers state ACTIVE
    # (``"state": 1`` with enum-encoding=int in the recordings).
    EmulatorDifference(
        "emulator omits Subscription.state",
        SUBSCRIPTION_STEPS,
        "omits",
        SUBSCRIPTION_HAS_STATE,
        field="state",
    ),
    # Real GCP fills the default expiration policy (ttl 2678400s = 31 days).
    EmulatorDifference(
        "emulator omits the default Subscription.expirationPolicy",
        SUBSCRIPTION_STEPS,
        "omits",
        SUBSCRIPTION_HAS_EXPIRATION,
        field="expirationPolicy",
    ),
    # The emulator echoes the 7-day default retention; real GCP leaves an unset
    # messageRetentionDuration out (bigquerypubsubsubscription's create).
    EmulatorDifference(
        "emulator adds a defaulted Subscription.messageRetentionDuration (604800s)",
        SUBSCRIPTION_STEPS,
        "adds",
        SUBSCRIPTION_RETENTION_NOT_DEFAULTED,
        field="messageRetentionDuration",
    ),
    # "Invalid update_mask provided in the UpdateTopicRequest: labels is not a
    # known Topic field." Real GCP accepts labels in a topic's updateMask
    # (pubsubtopic's PATCH, mask "labels,messageRetentionDuration,...") and
    # answers the Topic; ours has only name and labels.
    EmulatorDifference(
        "emulator rejects updateMask=labels on topics.patch",
        frozenset({"patch-topic-labels"}),
        "rejects",
        TOPIC_LABELS_PATCHABLE,
        emulator_status=400,
        real_status=200,
        real_fields=frozenset({"name", "labels"}),
    ),
)


@dataclass(frozen=True)
class MockgcpGap:
    """Where mockgcp departs from real GCP (expected failures until fixed).

    effect: ``adds`` - mockgcp returns ``field``, real GCP does not;
    ``omits`` - real GCP returns it, mockgcp does not.
    """

    what: str
    steps: frozenset[str]
    effect: str
    field: str
    fact: RealGcp


MOCKGCP_GAPS: tuple[MockgcpGap, ...] = (
    # (Fixed: mockgcp used to omit a Subscription's pushConfig {} and default
    # expirationPolicy, and to add Topic.state, which real GCP leaves out of
    # every topic answer in the recordings (mockgcp/quirks.state_omitted).)
)


# --- running it ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One side's exchanges, one per step."""

    side: str
    by_step: dict[str, HttpLogEntry]


def _client(endpoint: str) -> tuple[Any, RecordingHttp]:
    rec = RecordingHttp()
    # build_from_document takes credentials or http, not both: wrap the
    # recorder in the same AuthorizedHttp that credentials= would build.
    http = AuthorizedHttp(AnonymousCredentials(), http=rec)
    client = build_from_document(
        DISCOVERY.read_text(encoding="utf-8"), client_options={"api_endpoint": endpoint}, http=http
    )
    return client, rec


def run_scenario(side: str, endpoint: str) -> Run:
    client, rec = _client(endpoint)
    by_step: dict[str, HttpLogEntry] = {}
    for step in STEPS:
        before = len(rec.log)
        with contextlib.suppress(HttpError):  # recorded; statuses are compared per step
            step.call(client).execute()
        new = rec.log[before:]
        assert len(new) == 1, f"{side}: step {step.id} made {len(new)} HTTP exchanges, expected 1"
        by_step[step.id] = new[0]
    return Run(side, by_step)


@pytest.fixture(scope="module")
def pubsub_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PubSubEmulator]:
    yield from running_pubsub_emulator(tmp_path_factory.mktemp("pubsub-emulator"))


@pytest.fixture(scope="module")
def mockgcp_run() -> tuple[Run, list[HttpLogEntry]]:
    with MockServer() as server:
        run = run_scenario("mockgcp", server.endpoint("pubsub"))
        return run, list(server.log)


@pytest.fixture(scope="module")
def emulator_run(pubsub_emulator: PubSubEmulator) -> Run:
    return run_scenario("emulator", pubsub_emulator.base_url)


# --- comparing ------------------------------------------------------------------------------


def _fields(e: HttpLogEntry) -> frozenset[str]:
    body = e.response_json
    return frozenset(body) if isinstance(body, dict) else frozenset()


def _error_status(e: HttpLogEntry) -> str | None:
    body = e.response_json
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("status"))
    return None


def _listed(e: HttpLogEntry) -> list[str] | None:
    body = e.response_json
    if isinstance(body, dict) and isinstance(body.get("topics"), list):
        return sorted(t.get("name", "?") for t in body["topics"])
    return None


def _show(e: HttpLogEntry) -> str:
    parts = urlsplit(e.url)
    body = (
        json.dumps(e.response_json, sort_keys=True)
        if e.response_json is not None
        else e.response_body
    )
    return f"{e.method} {parts.path} -> {e.status}\n      {body}"


def expected_real_gcp(step: str, emu: HttpLogEntry) -> tuple[int, frozenset[str], list[str]]:
    """Real GCP's status and fields for a step: the emulator's, corrected by the table.

    Also returns the problems with the table itself (an entry that did not show).
    """
    status = emu.status_code or 0
    fields = _fields(emu)
    stale: list[str] = []
    for d in EMULATOR_DIFFERENCES:
        if step not in d.steps:
            continue
        if d.effect == "omits":
            if d.field in fields:
                stale.append(f"documented '{d.what}', but the emulator returned {d.field}")
            fields |= {d.field}
        elif d.effect == "adds":
            if d.field not in fields:
                stale.append(f"documented '{d.what}', but the emulator did not return {d.field}")
            fields -= {d.field}
        elif d.effect == "rejects":
            if status != d.emulator_status:
                stale.append(
                    f"documented '{d.what}' (status {d.emulator_status}), but the emulator answered {status}"
                )
            status, fields = d.real_status, d.real_fields
        else:  # pragma: no cover - a typo in the table
            raise AssertionError(f"unknown effect {d.effect!r} in {d}")
    return status, fields, stale


@pytest.mark.parametrize("step", STEP_IDS)
def test_step_matches_real_gcp_semantics(
    step: str, mockgcp_run: tuple[Run, list[HttpLogEntry]], emulator_run: Run
) -> None:
    mock = mockgcp_run[0].by_step[step]
    emu = emulator_run.by_step[step]
    real_status, real_fields, stale = expected_real_gcp(step, emu)
    mock_fields = _fields(mock)

    problems: list[str] = [f"stale EMULATOR_DIFFERENCES entry: {s}" for s in stale]
    if mock.status_code != real_status:
        problems.append(
            f"status: mockgcp {mock.status_code}, real GCP (emulator {emu.status_code} + table) {real_status}"
        )
    if real_status == emu.status_code and _error_status(mock) != _error_status(emu):
        problems.append(
            f"error.status: mockgcp {_error_status(mock)}, emulator {_error_status(emu)}"
        )
    if real_status == emu.status_code and _listed(mock) != _listed(emu):
        problems.append(f"listed topics: mockgcp {_listed(mock)}, emulator {_listed(emu)}")

    gaps_seen: set[tuple[str, str]] = set()
    for f in sorted(mock_fields - real_fields):
        gaps_seen.add(("adds", f))
    for f in sorted(real_fields - mock_fields):
        gaps_seen.add(("omits", f))
    documented = {(g.effect, g.field): g for g in MOCKGCP_GAPS if step in g.steps}
    for effect, f in sorted(gaps_seen - set(documented)):
        problems.append(
            f"field {f}: "
            + (
                "mockgcp returns it, real GCP does not"
                if effect == "adds"
                else "real GCP returns it, mockgcp does not"
            )
        )
    for key in sorted(set(documented) - gaps_seen):
        problems.append(f"stale MOCKGCP_GAPS entry (fixed? remove it): {documented[key].what}")

    detail = (
        f"\n  mockgcp:  {_show(mock)}\n  emulator: {_show(emu)}"
        f"\n  fields mockgcp {sorted(mock_fields)}; emulator {sorted(_fields(emu))}; real GCP (expected) {sorted(real_fields)}"
    )
    assert not problems, (
        f"{step}: mockgcp departs from real GCP semantics:\n  - " + "\n  - ".join(problems) + detail
    )
    if documented:
        pytest.xfail(
            f"{step}: known mockgcp gaps: " + "; ".join(g.what for g in documented.values())
        )


def test_mockgcp_request_log_agrees_with_the_client_recording(
    mockgcp_run: tuple[Run, list[HttpLogEntry]],
) -> None:
    """mockgcp's own log and the client-side recorder saw the same exchanges."""
    run, server_log = mockgcp_run

    def key(e: HttpLogEntry) -> tuple[str, str, int | None]:
        # The client may address the API by its host path (/pubsub.googleapis.com/v1/...);
        # mockgcp logs the API path, as the real service would see it.
        u = urlsplit(e.url)
        path = re.sub(r"^/[a-z0-9-]+\.googleapis\.com(?=/)", "", u.path)
        return e.method, f"{path}?{u.query}", e.status_code

    assert [key(e) for e in server_log] == [key(run.by_step[s]) for s in STEP_IDS]


def test_tables_name_real_steps() -> None:
    for entry in (*EMULATOR_DIFFERENCES, *MOCKGCP_GAPS):
        assert entry.steps and entry.steps <= set(STEP_IDS), entry.what
        assert entry.effect in ("omits", "adds", "rejects"), entry.what


# --- evidence from real GCP ------------------------------------------------------------------


def _real_exchanges(collection: str) -> list[tuple[Path, HttpLogEntry]]:
    out = []
    for log in sorted(RECORDINGS.rglob("_http.log")):
        for e in read_http_log(log):
            u = urlsplit(e.url)
            parts = u.path.strip("/").split("/")  # v1 projects p <collection> <id>
            if (
                u.netloc == "pubsub.googleapis.com"
                and len(parts) == 5
                and parts[3] == collection
                and ":" not in parts[4]
            ):
                out.append((log, e))
    return out


def _check_fact(fact: RealGcp) -> str | None:
    """None when the recordings bear the fact out, else why not."""
    exchanges = _real_exchanges(fact.collection)
    answers = [
        (p, e) for p, e in exchanges if e.method in ("GET", "PUT", "PATCH") and e.status_code == 200
    ]
    if fact.claim in ("always", "never"):
        if not answers:
            return f"no 200 answers for {fact.collection} in the recordings"
        bad = [p for p, e in answers if (fact.field in _fields(e)) != (fact.claim == "always")]
        return f"{len(bad)}/{len(answers)} answers contradict it, e.g. {bad[0]}" if bad else None
    if fact.claim == "omitted-when-unset":
        unset = [
            (p, e)
            for p, e in answers
            if e.method == "PUT" and fact.field not in (e.request_json or {})
        ]
        if not unset:
            return "no create without the field in the recordings"
        bad = [p for p, e in unset if fact.field in _fields(e)]
        return f"the field came back on {bad[0]}" if bad else None
    if fact.claim == "mask-accepted":
        patches = [
            (p, e)
            for p, e in exchanges
            if e.method == "PATCH"
            and fact.field in str((e.request_json or {}).get("updateMask", "")).split(",")
        ]
        if not patches:
            return f"no PATCH with {fact.field} in updateMask in the recordings"
        bad = [p for p, e in patches if e.status_code != 200 or "name" not in _fields(e)]
        return f"answered other than 200 + resource on {bad[0]}" if bad else None
    return f"unknown claim {fact.claim!r}"


FACTS = sorted(
    {d.fact for d in EMULATOR_DIFFERENCES} | {g.fact for g in MOCKGCP_GAPS},
    key=lambda f: (f.collection, f.field, f.claim),
)


@pytest.mark.skipif(not RECORDINGS.is_dir(), reason=f"KCC recordings not found at {RECORDINGS}")
@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f"{f.collection}.{f.field}-{f.claim}")
def test_real_gcp_facts(fact: RealGcp) -> None:
    """Every difference in the tables rests on what real GCP did in KCC's recordings."""
    problem = _check_fact(fact)
    assert problem is None, f"real GCP {fact}: {problem}"
