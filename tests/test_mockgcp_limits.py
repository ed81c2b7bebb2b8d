"""mockgcp refuses what GCP refuses beyond a request's shape (mockgcp/limits.yaml,
mockgcp/limits.py, mockgcp/ranges.py): label count and syntax, numeric ranges
stated in the curated documents' descriptions, enum values, location names.
Each refusal is 400 INVALID_ARGUMENT naming the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.discovery.errors import SpecError
from kccgen.mockgcp import MockGCP
from kccgen.mockgcp.limitdata import LIMITS_FILE, load_limits
from kccgen.mockgcp.limits import api_limits
from kccgen.mockgcp.ranges import derive

TOPIC = "/v1/projects/p/topics/t"
SUB = "/v1/projects/p/subscriptions/s"


@pytest.fixture()
def eng() -> MockGCP:
    e = MockGCP()
    e.handle("PUT", TOPIC, {}, {})
    return e


def call(eng: MockGCP, method: str, path: str, body: Any = None, query: dict[str, list[str]] | None = None) -> tuple[int, Any]:
    _, resp = eng.handle(method, path, query or {}, body)
    return resp.status, resp.body


def refused(eng: MockGCP, method: str, path: str, body: Any, field: str, query: dict[str, list[str]] | None = None) -> str:
    status, out = call(eng, method, path, body, query)
    assert status == 400, out
    err = out["error"]
    assert err["status"] == "INVALID_ARGUMENT" and f"'{field}'" in err["message"], err
    return str(err["message"])


# --- labels -----------------------------------------------------------------------------


def test_3000_labels_are_refused_and_64_are_not(eng: MockGCP) -> None:
    msg = refused(eng, "PUT", "/v1/projects/p/topics/many", {"labels": {f"k{i}": "v" for i in range(3000)}}, "labels")
    assert "3000 labels" in msg and "at most 64" in msg
    refused(eng, "PUT", "/v1/projects/p/topics/many", {"labels": {f"k{i}": "v" for i in range(65)}}, "labels")
    assert call(eng, "PUT", "/v1/projects/p/topics/many", {"labels": {f"k{i}": "v" for i in range(64)}})[0] == 200


@pytest.mark.parametrize(
    "labels",
    [
        {"Env": "dev"},  # uppercase
        {"1env": "dev"},  # starts with a digit
        {"_env": "dev"},  # starts with an underscore
        {"": "dev"},  # empty key
        {"k" * 64: "v"},  # 64 characters
        {"env.x": "dev"},  # a dot
        {"env": "Dev"},  # uppercase value
        {"env": "a/b"},  # a slash
        {"env": "v" * 64},  # 64-character value
    ],
    ids=["upper-key", "digit-first", "underscore-first", "empty-key", "long-key", "dot-key", "upper-value", "slash-value", "long-value"],
)
def test_label_syntax_is_refused(eng: MockGCP, labels: dict[str, str]) -> None:
    msg = refused(eng, "PUT", "/v1/projects/p/topics/bad", {"labels": labels}, "labels")
    assert "violates format constraints" in msg


def test_label_syntax_that_google_allows(eng: MockGCP) -> None:
    ok = {"k" * 63: "v" * 63, "env": "", "a-b_c9": "x-y_z0", "日本": "東京", "ключ": "значение", "dev": "été"}
    status, out = call(eng, "PUT", "/v1/projects/p/topics/ok", {"labels": ok})
    assert status == 200 and out["labels"] == ok


def test_labels_of_an_update_and_of_a_legacy_api(eng: MockGCP) -> None:
    refused(eng, "PATCH", TOPIC, {"topic": {"labels": {"Bad": "x"}}, "updateMask": "labels"}, "topic.labels")
    path = "/compute/v1/projects/p/regions/us-central1/addresses"
    msg = refused(eng, "POST", path, {"name": "a", "labels": {"Bad": "x"}}, "resource.labels")
    assert "label key 'Bad'" in msg
    assert call(eng, "POST", path, {"name": "a", "labels": {"good": "x"}})[0] == 200


def test_labels_of_a_non_curated_api() -> None:
    """Every collection's labels map, not only the vendored documents'."""
    eng = MockGCP()
    host = eng.catalog.host_of("workflows.v1")[0]
    path = f"/{host}/v1/projects/p/locations/us-central1/workflows"
    refused(eng, "POST", path, {"labels": {"Bad": "x"}}, "labels", {"workflowId": ["w"]})
    assert call(eng, "POST", path, {"labels": {"good": "x"}}, {"workflowId": ["w"]})[0] == 200


def test_maps_that_are_not_resource_labels_are_exempt() -> None:
    """A notification channel's ``labels`` are its configuration (an e-mail
    address); its ``userLabels`` follow the label rules, as its description says."""
    eng = MockGCP()
    path = "/v3/projects/p/notificationChannels"
    body = {"type": "email", "labels": {"email_address": "Someone@Example.com"}}
    assert call(eng, "POST", path, body)[0] == 200
    refused(eng, "POST", path, {**body, "userLabels": {"Team": "x"}}, "user_labels")


# --- numeric ranges ---------------------------------------------------------------------


def test_ack_deadline_outside_10_to_600_is_refused(eng: MockGCP) -> None:
    body = {"topic": "projects/p/topics/t"}
    msg = refused(eng, "PUT", SUB, {**body, "ackDeadlineSeconds": 100000}, "ack_deadline_seconds")
    assert ">= 10 and <= 600" in msg and "minimum custom deadline" in msg  # the source is quoted
    refused(eng, "PUT", SUB, {**body, "ackDeadlineSeconds": 9}, "ack_deadline_seconds")
    assert call(eng, "PUT", SUB, {**body, "ackDeadlineSeconds": 0})[0] == 200  # 0: the default applies
    assert call(eng, "PATCH", SUB, {"subscription": {"ackDeadlineSeconds": 600}, "updateMask": "ackDeadlineSeconds"})[0] == 200
    refused(eng, "PATCH", SUB, {"subscription": {"ackDeadlineSeconds": 601}, "updateMask": "ackDeadlineSeconds"}, "subscription.ack_deadline_seconds")


def test_message_retention_is_10_minutes_to_31_days(eng: MockGCP) -> None:
    """The document says "Cannot be more than 31 days or less than 10 minutes"."""
    refused(eng, "PUT", "/v1/projects/p/topics/r", {"messageRetentionDuration": "599s"}, "message_retention_duration")
    refused(eng, "PUT", "/v1/projects/p/topics/r", {"messageRetentionDuration": "2678401s"}, "message_retention_duration")
    assert call(eng, "PUT", "/v1/projects/p/topics/r", {"messageRetentionDuration": "2678400s"})[0] == 200
    body = {"topic": "projects/p/topics/t", "messageRetentionDuration": "604800s", "deadLetterPolicy": {"maxDeliveryAttempts": 4}}
    refused(eng, "PUT", SUB, body, "dead_letter_policy.max_delivery_attempts")


def test_nested_and_legacy_ranges(eng: MockGCP) -> None:
    msg = refused(eng, "POST", "/compute/v1/projects/p/global/firewalls", {"name": "f", "network": "global/networks/n", "priority": 70000}, "resource.priority")
    assert "<= 65535" in msg


def test_ranges_are_read_from_the_curated_documents() -> None:
    """How many fields of the vendored documents got a range, and a few of them."""
    eng = MockGCP()
    ranges = {(k, s, f): r for k in eng.catalog.vendored for (s, f), (r, _) in api_limits(eng.apis[k], True).ranges.items()}
    assert len(ranges) >= 95, len(ranges)  # 99 at this writing
    sub = ranges[("pubsub.v1", "Subscription", "ackDeadlineSeconds")]
    assert (sub.low, sub.high) == (10, 600)
    assert (ranges[("cloudkms.v1", "CryptoKey", "rotationPeriod")].low, ranges[("cloudkms.v1", "CryptoKey", "rotationPeriod")].high) == (86400, 876000 * 3600)
    assert ranges[("compute.v1", "BackendService", "timeoutSec")].high == 2147483647
    assert ("compute.v1", "BackendServiceConnectionTrackingPolicy", "idleTimeoutSec") not in ranges  # ranges.skip
    align = ranges[("monitoring.v3", "Aggregation", "alignmentPeriod")]
    assert (align.low, align.high) == (60, None) and "limits.yaml" in align.source  # ranges.add
    assert not api_limits(eng.apis["workflows.v1"], False).ranges  # prose of other documents is not reviewed


@pytest.mark.parametrize(
    "text, kind, field, bounds",
    [
        ("The minimum custom deadline you can specify is 10 seconds. The maximum custom deadline you can specify is 600 seconds (10 minutes).", "number", "ackDeadlineSeconds", (10, 600)),
        ("Cannot be more than 31 days or less than 10 minutes.", "duration", "messageRetentionDuration", (600, 31 * 86400)),
        ("This is an integer between `0` and `65535`, both inclusive.", "number", "priority", (0, 65535)),
        ("Must be in seconds and at least 3600s (1h) and at most 3153600000s (100 years).", "duration", "rotationPeriod", (3600, 3153600000)),
        ("The valid range is [0.0, 1.0].", "number", "maxUtilization", (0, 1)),
        ("Min 1 KB, max 10 GiB.", "number", "maxBytes", (1000, 10 * 1024**3)),
        ("You can specify a commit delay value between 0 and 500 ms.", "duration", "maxCommitDelay", (0, 0.5)),
        ("The value must be between -999,999,999 and +999,999,999 inclusive.", "number", "nanos", (-999999999, 999999999)),
    ],
)
def test_derive_reads_plain_bounds(text: str, kind: str, field: str, bounds: tuple[float, float]) -> None:
    r = derive(text, kind, field)
    assert r is not None and (r.low, r.high) == bounds, r


@pytest.mark.parametrize(
    "text",
    [
        "must be between 0 (inclusive) and 2^31 (exclusive)",  # not a literal bound
        "Must be greater than or equal to 0 and typically must be less than or equal to 23.",  # hedged
        "Output only. Values are between 0 and 100 inclusive.",  # never written
        "The traffic between Google and the customer.",  # no number
    ],
)
def test_derive_gives_no_range_it_cannot_read(text: str) -> None:
    assert derive(text, "number", "x") is None


# --- enums ------------------------------------------------------------------------------


def test_a_value_outside_the_enum_is_refused(eng: MockGCP) -> None:
    msg = refused(eng, "PUT", SUB, {"topic": "projects/p/topics/t", "state": "WRONG"}, "state")
    assert "WRONG" in msg and "ACTIVE" in msg
    path = "/compute/v1/projects/p/global/networks"
    msg = refused(eng, "POST", path, {"name": "n", "routingConfig": {"routingMode": "SIDEWAYS"}}, "resource.routingConfig.routingMode")
    assert "GLOBAL" in msg
    assert call(eng, "POST", path, {"name": "n", "routingConfig": {"routingMode": "REGIONAL"}})[0] == 200


def test_enum_numbers_and_enum_lists(eng: MockGCP) -> None:
    """Proto JSON takes an enum's number too (recorded KMS traffic sends "purpose": 1);
    each item of a repeated enum is checked."""
    ring = "/v1/projects/p/locations/us-central1/keyRings"
    assert call(eng, "POST", ring, {}, {"keyRingId": ["r"]})[0] == 200
    assert call(eng, "POST", f"{ring}/r/cryptoKeys", {"purpose": 1}, {"cryptoKeyId": ["k"]})[0] == 200
    path = "/v3/projects/p/uptimeCheckConfigs"
    body = {"displayName": "u", "httpCheck": {"path": "/"}, "monitoredResource": {"type": "uptime_url", "labels": {"host": "Example.COM"}}}
    refused(eng, "POST", path, {**body, "selectedRegions": ["USA", "MARS"]}, "selected_regions[1]")
    assert call(eng, "POST", path, {**body, "selectedRegions": ["USA", "EUROPE"]})[0] == 200


# --- locations --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, field",
    [
        ("/v1/projects/p/locations/NOWHERE/keyRings", "location"),
        ("/v1/projects/p/locations/us_central1/keyRings", "location"),
        ("/compute/v1/projects/p/regions/NOWHERE/addresses", "region"),
        ("/compute/v1/projects/p/regions/us-central1-a/addresses", "region"),  # a zone is not a region
        ("/compute/v1/projects/p/zones/us-central1/disks", "zone"),  # a region is not a zone
    ],
)
def test_a_location_of_the_wrong_form_in_the_url(eng: MockGCP, path: str, field: str) -> None:
    body = {} if "keyRings" in path else {"name": "x"}
    query = {"keyRingId": ["r"]} if "keyRings" in path else {}
    msg = refused(eng, "POST", path, body, field, query)
    assert "Unknown" in msg
    status, _ = call(eng, "GET", path + "/x")
    assert status == 400  # a read too: the name cannot exist


@pytest.mark.parametrize("location", ["us-central1", "europe-west12", "global", "us", "EU", "nam4", "asia1", "nam-eur-asia1", "us-central1-a"])
def test_locations_of_every_form(eng: MockGCP, location: str) -> None:
    ring = f"/v1/projects/p/locations/{location}/keyRings"
    assert call(eng, "POST", ring, {}, {"keyRingId": ["r"]})[0] == 200


def test_every_location_in_a_list_and_locations_not_under_a_project(eng: MockGCP) -> None:
    assert call(eng, "GET", "/v1/projects/p/locations/-/keyRings")[0] == 200
    host = eng.catalog.host_of("workflows.v1")[0]
    assert call(eng, "GET", f"/{host}/v1/projects/p/locations/-/workflows")[0] == 200


def test_a_bucket_location_field(eng: MockGCP) -> None:
    q = {"project": ["p"]}
    refused(eng, "POST", "/storage/v1/b", {"name": "b1", "location": "NOWHERE"}, "resource.location", q)
    for i, loc in enumerate(["US", "NAM4", "us-central1", "EUROPE-WEST1"]):
        assert call(eng, "POST", "/storage/v1/b", {"name": f"b{i}x", "location": loc}, q)[0] == 200


# --- the table --------------------------------------------------------------------------


def _sorted_keys(node: Any, at: str) -> None:
    if isinstance(node, dict):
        assert list(node) == sorted(node), f"{at}: keys not sorted: {list(node)}"
        for k, v in node.items():
            _sorted_keys(v, f"{at}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _sorted_keys(v, f"{at}/{i}")


def test_limits_table_is_sorted_and_sourced() -> None:
    raw = yaml.safe_load(LIMITS_FILE.read_text(encoding="utf-8"))
    _sorted_keys(raw, "limits.yaml")
    table = load_limits()
    assert table.labels.source.startswith("https://cloud.google.com/resource-manager/docs/labels-overview")
    assert (table.labels.max_entries, table.labels.key_max_length, table.labels.value_max_length) == (64, 63, 63)
    for e in (*table.labels.also, *table.locations.fields, *table.ranges.add):
        assert e.source
    for e in (*table.labels.exempt, *table.ranges.skip):
        assert e.reason


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda raw: raw["labels"].update(maxEntires=3), "/labels/maxEntires"),
        (lambda raw: raw["ranges"]["skip"][0].pop("reason"), "/ranges/skip/0/reason"),
        (lambda raw: raw["ranges"]["add"][0].pop("min"), "/ranges/add/0"),
        (lambda raw: raw["locations"].update(regionPattern="(["), "/locations/regionPattern"),
    ],
    ids=["unknown-key", "no-reason", "no-bound", "bad-pattern"],
)
def test_a_broken_table_is_one_error_naming_file_and_path(tmp_path: Path, edit: Any, where: str) -> None:
    raw = yaml.safe_load(LIMITS_FILE.read_text(encoding="utf-8"))
    edit(raw)
    bad = tmp_path / "limits.yaml"
    bad.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_limits(bad)
    assert str(bad) in str(e.value) and where in str(e.value)
