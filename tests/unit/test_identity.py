"""Resource identity: property tests for every registered Kind, and a table of spellings.

The property tests draw one valid path segment per template parameter
(project IDs, project numbers, service-generated numeric IDs, domain-scoped
projects such as ``example.com:proj``, and arbitrary Unicode without ``/``,
whitespace, ``?``, ``#``, ``{`` or ``}``) and check that formatting, parsing
and normalizing agree for every Kind in ``known_kinds()``.

The table tests pin what ``normalize`` accepts (value -> canonical externalRef)
and what it rejects (value -> an error naming the Kind, the value and the
expected format). A row the runtime gets wrong is kept with the correct
expectation and marked ``xfail(strict=True)``, so fixing it is noticed.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kccgen.runtime.identity import IdentityError, IdentityTemplate, identity_for, known_kinds
from tests.support.kinds import CURATED_KINDS, GENERATED_KINDS, refs, representatives

KINDS = known_kinds()
_PH = re.compile(r"\{([A-Za-z][A-Za-z0-9]*)\}")


def _template_shape(kind: str) -> tuple[object, ...]:
    """What format, parse and normalize depend on: which segments are literals and which
    placeholders, whether the name also has a REST URL (and a different REST path), and
    the extra forms' shapes. A thousand derived Kinds repeat a few dozen of them."""
    ident = identity_for(kind)

    def shape(t: str) -> str:
        return "/".join("{}" if _PH.fullmatch(seg) else "lit" for seg in t.split("/"))

    return (
        shape(ident.template),
        bool(ident.rest_host),
        shape(ident.rest_template) if ident.rest_template else "",
        tuple(shape(f) for f in ident.extra_forms),
    )


#: every curated and external Kind, and one derived Kind per template shape
_OURS = frozenset(GENERATED_KINDS)
SAMPLE = tuple(representatives(KINDS, str, _template_shape, keep=lambda k: k not in _OURS))

# The Kinds kccgen only references: every reference target (tests/kinds/<Kind>/refs.yaml)
# that is not generated.
EXTERNAL_KINDS = tuple(
    sorted({r.target for k in CURATED_KINDS for r in refs(k).references} - set(CURATED_KINDS))
)

_FORBIDDEN = frozenset("/?#{}")

PROPERTY_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _is_segment(s: str) -> bool:
    return bool(s) and not any(c in _FORBIDDEN or c.isspace() for c in s)


_LOWER = "abcdefghijklmnopqrstuvwxyz"
_REALISTIC = st.builds(  # my-proj-123, us-central1
    str.__add__, st.sampled_from(_LOWER), st.text(alphabet=_LOWER + "0123456789-", max_size=29)
)
_NUMERIC = st.integers(min_value=0, max_value=10**19).map(str)  # project numbers, alert policy IDs
_DOMAIN_SCOPED = st.builds(  # example.com:proj
    lambda d, tld, p: f"{d}.{tld}:{p}",
    st.text(alphabet=_LOWER, min_size=1, max_size=10),
    st.sampled_from(["com", "org", "co.uk", "example"]),
    _REALISTIC,
)
_PUNCT = st.text(alphabet="abcXYZ019.-_:~%+@=,;!$&'()*[]", min_size=1, max_size=20)
_ANY = st.text(
    alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="/?#{}"),
    min_size=1,
    max_size=20,
).filter(_is_segment)
SEGMENT = st.one_of(_REALISTIC, _NUMERIC, _DOMAIN_SCOPED, _PUNCT, _ANY)


def _fill(template: str, values: dict[str, str]) -> str:
    return _PH.sub(lambda m: values[m.group(1)], template)


def _draw_params(data: st.DataObject, names: tuple[str, ...]) -> dict[str, str]:
    return {name: data.draw(SEGMENT, label=name) for name in names}


VERSIONS = ["v1", "v2", "v3", "beta", "alpha", "v1beta2", "v2alpha1", "v1p1beta1"]


def _rest_path(ident: IdentityTemplate, values: dict[str, str]) -> str:
    rest = ident.rest_template or ident.template
    names = _PH.findall(rest)
    if not all(n in values for n in names) and len(names) == len(ident.params):
        # the REST path spells the placeholders its own way ({projectId}): same order
        values = {n: values[p] for n, p in zip(names, ident.params, strict=True)}
    return _fill(rest, values)


def _rest_url(ident: IdentityTemplate, values: dict[str, str], host: str | None = None) -> str:
    path = _rest_path(ident, values)
    return f"https://{host or ident.rest_host}/{ident.rest_prefix}{path}"


# --- the registry ---------------------------------------------------------


def test_registry_holds_generated_and_external_kinds() -> None:
    assert "Project" in KINDS
    assert set(GENERATED_KINDS) <= set(KINDS)
    assert set(EXTERNAL_KINDS) <= set(KINDS)
    assert len(KINDS) == len(set(KINDS))  # no duplicates
    assert list(KINDS) == sorted(KINDS)


def test_identity_for_returns_the_registered_kind() -> None:
    """Every registered Kind, the derived ones included (cheap: no sampling)."""
    for kind in KINDS:
        ident = identity_for(kind)
        assert ident.kind == kind
        assert ident.params, f"{kind} template {ident.template!r} has no parameters"
        assert ident.domain.endswith(".googleapis.com"), kind


def test_identity_for_unknown_kind_suggests_close_kinds() -> None:
    with pytest.raises(KeyError) as exc:
        identity_for("NoSuchKind")
    msg = str(exc.value)
    assert "'NoSuchKind'" in msg and f"({len(KINDS)} Kinds known" in msg
    with pytest.raises(KeyError) as exc:
        identity_for("PubSubTopics")
    assert "did you mean 'PubSubTopic'" in str(exc.value)


# --- properties, for every Kind -------------------------------------------


#: Derived Kinds whose identity is known wrong today (the asset-inventory row and the REST
#: path disagree and neither is usable as it stands); kccgen generate warns about each.
IDENTITY_DEFECTS = {
    "AssetFeed": "the REST path v1/{v1}/{v1Id1}/feeds/{feed} has a multi-parent prefix the identity does not model",
    "DataflowJob": "the REST prefix v1b3 is not matched once another API version is written in the URL",
}


@pytest.mark.parametrize(
    "kind",
    [pytest.param(k, marks=[pytest.mark.xfail(strict=True, reason=IDENTITY_DEFECTS[k])] if k in IDENTITY_DEFECTS else []) for k in SAMPLE],
)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_format_parse_normalize_round_trip(kind: str, data: st.DataObject) -> None:
    """One Hypothesis run per Kind checks every property (keeps the file fast)."""
    ident = identity_for(kind)
    x = _draw_params(data, ident.params)
    name = ident.format(**x)

    assert ident.parse(name) == x
    assert ident.normalize(name) == name
    # normalize is idempotent, also through the //domain/ form
    assert ident.normalize(ident.normalize(name)) == name
    assert ident.normalize(f"//{ident.domain}/{name}") == name
    # surrounding whitespace is not part of the name
    assert ident.normalize(f"  {name}\n") == name

    if ident.rest_host:
        url = _rest_url(ident, x)
        assert ident.normalize(url) == name
        assert ident.normalize(ident.normalize(url)) == name
        # the legacy host serves every API under the same path
        assert ident.normalize(_rest_url(ident, x, host="www.googleapis.com")) == name
        # the version segment may be any API version
        version = data.draw(st.sampled_from(VERSIONS), label="version")
        prefix = re.sub(
            r"(^|/)(v\d+[a-z0-9]*|alpha|beta)/", rf"\g<1>{version}/", ident.rest_prefix, count=1
        )
        path = _rest_path(ident, x)
        assert ident.normalize(f"https://{ident.rest_host}/{prefix}{path}") == name
        # a query string or fragment is not part of the name
        assert ident.normalize(url + "?alt=json") == name
        assert ident.normalize(url + "#frag") == name

    # a name cannot swallow a '/': an extra trailing segment is rejected
    extra = data.draw(SEGMENT, label="extra")
    for bad in (f"{name}/{extra}", f"//{ident.domain}/{name}/{extra}"):
        with pytest.raises(IdentityError):
            ident.normalize(bad)
    with pytest.raises(IdentityError):
        ident.parse(f"{name}/{extra}")

    # format rejects a value containing '/'
    victim = data.draw(st.sampled_from(ident.params), label="param")
    left, right = x[victim], extra
    slashed = data.draw(
        st.sampled_from([f"{left}/{right}", f"{left}/", f"/{right}", "/"]), label="slashed"
    )
    with pytest.raises(IdentityError) as exc:
        ident.format(**{**x, victim: slashed})
    msg = str(exc.value)
    assert msg.startswith(f"{kind}: ")
    assert f"{victim}={slashed!r} is not a single path segment" in msg
    assert ident.template in msg


@pytest.mark.parametrize("kind", SAMPLE)
def test_format_rejects_missing_unknown_and_empty_params(kind: str) -> None:
    ident = identity_for(kind)
    full = {p: "x1" for p in ident.params}
    with pytest.raises(IdentityError, match="missing"):
        ident.format(**{p: v for p, v in full.items() if p != ident.params[-1]})
    with pytest.raises(IdentityError, match="missing"):
        ident.format(**{**full, ident.params[0]: ""})
    with pytest.raises(IdentityError, match="unknown bogus"):
        ident.format(**full, bogus="b")
    for bad in (" x", "x y", "x?y", "x#y", "{x}"):
        with pytest.raises(IdentityError, match="single path segment"):
            ident.format(**{**full, ident.params[0]: bad})


# Each declared extra form, filled in, must normalize; the canonical name keeps
# every value the form shares with the template (StorageBucket's
# projects/{project}/buckets/{bucket} carries a project the bucket name lacks).
EXTRA_FORMS = [
    pytest.param(
        kind,
        form,
        id=f"{kind}:{form}",
    )
    for kind in SAMPLE
    for form in identity_for(kind).extra_forms
]


@pytest.mark.parametrize(("kind", "form"), EXTRA_FORMS)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_extra_forms_normalize(kind: str, form: str, data: st.DataObject) -> None:
    ident = identity_for(kind)
    names = tuple(dict.fromkeys(_PH.findall(form)))
    x = _draw_params(data, names)
    value = _fill(form, x)

    got = ident.normalize(value)
    assert ident.normalize(got) == got
    segments = got.split("/")
    for p in names:
        if p in ident.params:
            assert x[p] in segments, (p, x[p], got)


# --- accepted spellings ---------------------------------------------------



def ok(kind: str, value: str, expected: str, xfail: str | None = None) -> Any:
    # today the value is rejected (IdentityError); it should be accepted
    marks = [pytest.mark.xfail(strict=True, raises=IdentityError, reason=xfail)] if xfail else []
    return pytest.param(kind, value, expected, id=f"{kind}:{value!r}", marks=marks)


NET = "projects/p/global/networks/n"
SUBNET = "projects/p/regions/us-central1/subnetworks/s"
TOPIC = "projects/p/topics/t"
KEY = "projects/p/locations/l/keyRings/k/cryptoKeys/c"
ZONE = "projects/p/managedZones/z"
SECRET = "projects/p/secrets/s"

ACCEPTED = [
    # ComputeNetwork: bare, //domain, compute self-links on both hosts and API versions
    ok("ComputeNetwork", NET, NET),
    ok("ComputeNetwork", f"//compute.googleapis.com/{NET}", NET),
    ok("ComputeNetwork", f"https://www.googleapis.com/compute/v1/{NET}", NET),
    ok("ComputeNetwork", f"https://compute.googleapis.com/compute/v1/{NET}", NET),
    ok("ComputeNetwork", f"https://www.googleapis.com/compute/beta/{NET}", NET),
    ok("ComputeNetwork", f"https://compute.googleapis.com/compute/beta/{NET}", NET),
    ok("ComputeNetwork", f"https://compute.googleapis.com/compute/alpha/{NET}", NET),
    ok("ComputeNetwork", f"http://www.googleapis.com/compute/v1/{NET}", NET),
    ok(
        "ComputeNetwork",
        "projects/123456789/global/networks/default",
        "projects/123456789/global/networks/default",
    ),
    ok(
        "ComputeNetwork",
        "projects/example.com:proj/global/networks/n",
        "projects/example.com:proj/global/networks/n",
    ),
    # ComputeSubnetwork
    ok("ComputeSubnetwork", SUBNET, SUBNET),
    ok("ComputeSubnetwork", f"https://www.googleapis.com/compute/v1/{SUBNET}", SUBNET),
    ok("ComputeSubnetwork", f"https://compute.googleapis.com/compute/beta/{SUBNET}", SUBNET),
    ok("ComputeSubnetwork", f"//compute.googleapis.com/{SUBNET}", SUBNET),
    # StorageBucket: every accepted spelling
    ok("StorageBucket", "my-bucket", "my-bucket"),
    ok("StorageBucket", "//storage.googleapis.com/my-bucket", "my-bucket"),
    ok("StorageBucket", "https://storage.googleapis.com/storage/v1/b/my-bucket", "my-bucket"),
    ok("StorageBucket", "https://www.googleapis.com/storage/v1/b/my-bucket", "my-bucket"),
    ok("StorageBucket", "gs://my-bucket", "my-bucket"),
    ok("StorageBucket", "projects/_/buckets/my-bucket", "my-bucket"),
    ok("StorageBucket", "projects/p/buckets/my-bucket", "my-bucket"),
    ok("StorageBucket", "my.bucket.example.com", "my.bucket.example.com"),
    ok(
        "StorageBucket",
        "https://storage.googleapis.com/storage/v1/b/my-bucket?alt=json",
        "my-bucket",
    ),
    # PubSubTopic
    ok("PubSubTopic", TOPIC, TOPIC),
    ok("PubSubTopic", f"//pubsub.googleapis.com/{TOPIC}", TOPIC),
    ok("PubSubTopic", f"https://pubsub.googleapis.com/v1/{TOPIC}", TOPIC),
    ok("PubSubTopic", f"https://pubsub.googleapis.com/v1beta2/{TOPIC}", TOPIC),
    # a query string on a REST URL is dropped; the name never contains it
    ok("PubSubTopic", f"https://pubsub.googleapis.com/v1/{TOPIC}?alt=json", TOPIC),
    ok(
        "PubSubTopic", f"https://pubsub.googleapis.com/v1/{TOPIC}?alt=json&prettyPrint=false", TOPIC
    ),
    ok("ComputeNetwork", f"https://www.googleapis.com/compute/v1/{NET}?alt=json", NET),
    # MonitoringAlertPolicy / NotificationChannel: service-generated numeric IDs,
    # project numbers preserved as given (never converted to IDs, no leading zeros dropped)
    ok(
        "MonitoringAlertPolicy",
        "projects/123456789/alertPolicies/987654321",
        "projects/123456789/alertPolicies/987654321",
    ),
    ok(
        "MonitoringAlertPolicy",
        "projects/my-proj/alertPolicies/987654321",
        "projects/my-proj/alertPolicies/987654321",
    ),
    ok(
        "MonitoringAlertPolicy",
        "//monitoring.googleapis.com/projects/123456789/alertPolicies/987654321",
        "projects/123456789/alertPolicies/987654321",
    ),
    ok(
        "MonitoringAlertPolicy",
        "https://monitoring.googleapis.com/v3/projects/123456789/alertPolicies/987654321",
        "projects/123456789/alertPolicies/987654321",
    ),
    ok(
        "MonitoringAlertPolicy",
        "projects/0123/alertPolicies/00042",
        "projects/0123/alertPolicies/00042",
    ),
    ok(
        "MonitoringNotificationChannel",
        "projects/123456789/notificationChannels/12345678901234567890",
        "projects/123456789/notificationChannels/12345678901234567890",
    ),
    ok(
        "MonitoringNotificationChannel",
        "https://monitoring.googleapis.com/v3/projects/p/notificationChannels/42",
        "projects/p/notificationChannels/42",
    ),
    # KMSCryptoKey
    ok("KMSCryptoKey", KEY, KEY),
    ok("KMSCryptoKey", f"https://cloudkms.googleapis.com/v1/{KEY}", KEY),
    ok("KMSCryptoKey", f"//cloudkms.googleapis.com/{KEY}", KEY),
    # DNSManagedZone
    ok("DNSManagedZone", ZONE, ZONE),
    ok("DNSManagedZone", f"https://dns.googleapis.com/dns/v1/{ZONE}", ZONE),
    ok("DNSManagedZone", f"https://dns.googleapis.com/dns/v1beta2/{ZONE}", ZONE),
    ok("DNSManagedZone", f"https://www.googleapis.com/dns/v1/{ZONE}", ZONE),
    ok("DNSManagedZone", f"//dns.googleapis.com/{ZONE}", ZONE),
    # Project: bare ID or number, as given
    ok("Project", "my-proj", "projects/my-proj"),
    ok("Project", "projects/my-proj", "projects/my-proj"),
    ok("Project", "123456789", "projects/123456789"),
    ok("Project", "projects/123456789", "projects/123456789"),
    ok("Project", "example.com:proj", "projects/example.com:proj"),
    ok("Project", "//cloudresourcemanager.googleapis.com/projects/my-proj", "projects/my-proj"),
    # SecretManagerSecret
    ok("SecretManagerSecret", SECRET, SECRET),
    ok("SecretManagerSecret", f"https://secretmanager.googleapis.com/v1/{SECRET}", SECRET),
    ok("SecretManagerSecret", f"//secretmanager.googleapis.com/{SECRET}", SECRET),
    # whitespace around a value
    ok("PubSubTopic", f"  {TOPIC}\n", TOPIC),
    ok("StorageBucket", "\tgs://my-bucket ", "my-bucket"),
    ok("ComputeNetwork", f" https://www.googleapis.com/compute/v1/{NET}\n", NET),
    ok("Project", " my-proj ", "projects/my-proj"),
    # extra forms of external Kinds
    ok(
        "ContainerCluster",
        "projects/p/zones/us-central1-a/clusters/c",
        "projects/p/locations/us-central1-a/clusters/c",
    ),
    ok(
        "NetworkConnectivityInternalRange",
        "networkconnectivity.googleapis.com/projects/p/locations/global/internalRanges/r",
        "projects/p/locations/global/internalRanges/r",
    ),
    ok(
        "ComputePublicDelegatedPrefix",
        "projects/p/regions/r/publicDelegatedPrefixes/x",
        "projects/p/regions/r/publicDelegatedPrefixes/x",
    ),
    # The bucket's full resource name as IAM and newer asset exports write it.
    ok("StorageBucket", "//storage.googleapis.com/projects/_/buckets/b", "b"),
]


@pytest.mark.parametrize(("kind", "value", "expected"), ACCEPTED)
def test_normalize_accepts(kind: str, value: str, expected: str) -> None:
    ident = identity_for(kind)
    got = ident.normalize(value)
    assert got == expected
    assert ident.normalize(got) == got


def test_table_covers_required_kinds() -> None:
    required = {
        "ComputeNetwork",
        "ComputeSubnetwork",
        "StorageBucket",
        "PubSubTopic",
        "MonitoringAlertPolicy",
        "MonitoringNotificationChannel",
        "KMSCryptoKey",
        "DNSManagedZone",
        "Project",
        "SecretManagerSecret",
    }
    assert required <= {p.values[0] for p in ACCEPTED}
    assert required <= {p.values[0] for p in REJECTED}


# --- rejected spellings ---------------------------------------------------


def bad(kind: str, value: Any, *fragments: str, xfail: str | None = None) -> Any:
    """``fragments``: further text the message must contain (a domain, a host)."""
    # today the value is accepted (pytest.raises fails); it should be rejected
    marks = (
        [pytest.mark.xfail(strict=True, raises=pytest.fail.Exception, reason=xfail)]
        if xfail
        else []
    )
    return pytest.param(kind, value, fragments, id=f"{kind}:{value!r}", marks=marks)


REJECTED = [
    # The global form names another resource than a regional sub-prefix.
    bad("ComputePublicDelegatedPrefix", "projects/p/global/publicDelegatedPrefixes/x"),
    # StorageBucket
    bad("StorageBucket", "projects/p/topics/t"),
    bad("StorageBucket", ""),
    bad("StorageBucket", "   "),
    bad("StorageBucket", "gs://"),
    bad("StorageBucket", "gs://b/object.txt"),
    bad("StorageBucket", "my bucket"),
    bad(
        "StorageBucket",
        "//pubsub.googleapis.com/b",
        "pubsub.googleapis.com",
        "storage.googleapis.com",
    ),
    bad("StorageBucket", "https://storage.googleapis.com/storage/v1/b/b/o/obj"),
    bad("StorageBucket", "https://storage.googleapis.com/my-bucket"),
    bad("StorageBucket", "https://example.com/storage/v1/b/b", "example.com"),
    bad("StorageBucket", "https://storage.googleapis.com/storage/v1/b"),
    bad(
        "StorageBucket",
        "https://storage.googleapis.com/storage/v1/my-bucket",
    ),
    # PubSubTopic
    bad("PubSubTopic", "projects/p/topics/t/extra"),
    bad("PubSubTopic", "projects/p/topics/"),
    bad("PubSubTopic", "projects/p/subscriptions/s"),
    bad("PubSubTopic", "t"),
    bad("PubSubTopic", "projects/p/topics/t x"),
    bad(
        "PubSubTopic",
        "//compute.googleapis.com/projects/p/topics/t",
        "compute.googleapis.com",
        "pubsub.googleapis.com",
    ),
    bad("PubSubTopic", "//pubsub.googleapis.com/projects/p/topics/t/extra"),
    bad("PubSubTopic", "//pubsub.googleapis.com/projects/p/topics/t?alt=json"),
    bad("PubSubTopic", "https://pubsub.googleapis.com/v1/projects/p/topics/t/extra"),
    # a REST URL without its version segment
    bad("PubSubTopic", "https://pubsub.googleapis.com/projects/p/topics/t"),
    bad("PubSubTopic", "https://evil.example.com/v1/projects/p/topics/t", "evil.example.com"),
    # ComputeNetwork
    bad("ComputeNetwork", "projects/p/networks/n"),
    bad("ComputeNetwork", "projects/p/global/networks/n/extra"),
    bad(
        "ComputeNetwork", "https://compute.googleapis.com/compute/v1/projects/p/global/networks/n/"
    ),
    # a REST URL without the compute/ part of the prefix
    bad("ComputeNetwork", "https://compute.googleapis.com/v1/projects/p/global/networks/n"),
    bad(
        "ComputeNetwork",
        "https://evil.example.com/compute/v1/projects/p/global/networks/n",
        "evil.example.com",
    ),
    bad(
        "ComputeNetwork",
        "https://pubsub.googleapis.com/compute/v1/projects/p/global/networks/n",
        "pubsub.googleapis.com",
    ),
    bad(
        "ComputeNetwork",
        "//storage.googleapis.com/projects/p/global/networks/n",
        "storage.googleapis.com",
        "compute.googleapis.com",
    ),
    bad("ComputeNetwork", "ftp://www.googleapis.com/compute/v1/projects/p/global/networks/n"),
    # ComputeSubnetwork
    bad("ComputeSubnetwork", "projects/p/global/networks/n"),
    bad(
        "ComputeSubnetwork",
        "https://www.googleapis.com/compute/v1/projects/p/regions/r/subnetworks/s/extra",
    ),
    # Monitoring
    bad("MonitoringAlertPolicy", "projects/123456789/alertPolicies"),
    bad("MonitoringAlertPolicy", "projects/123456789/alertPolicies/987654321/conditions/1"),
    bad(
        "MonitoringAlertPolicy",
        "https://monitoring.googleapis.com/v3/projects/p/notificationChannels/1",
    ),
    bad("MonitoringNotificationChannel", "projects/p/alertPolicies/1"),
    bad(
        "MonitoringNotificationChannel",
        "//pubsub.googleapis.com/projects/p/notificationChannels/1",
        "pubsub.googleapis.com",
    ),
    # KMSCryptoKey
    bad("KMSCryptoKey", "projects/p/locations/l/keyRings/k"),
    bad("KMSCryptoKey", "projects/p/locations/l/keyRings/k/cryptoKeys/c/cryptoKeyVersions/1"),
    bad(
        "KMSCryptoKey",
        "https://kms.example.com/v1/projects/p/locations/l/keyRings/k/cryptoKeys/c",
        "kms.example.com",
    ),
    # DNSManagedZone
    bad("DNSManagedZone", "projects/p/managedZones/z/rrsets/a"),
    # a REST URL without the dns/ part of the prefix
    bad("DNSManagedZone", "https://dns.googleapis.com/v1/projects/p/managedZones/z"),
    # Project
    bad("Project", "projects/p/extra"),
    bad("Project", "organizations/123"),
    bad("Project", "my proj"),
    bad("Project", "//compute.googleapis.com/projects/p", "compute.googleapis.com"),
    # SecretManagerSecret
    bad("SecretManagerSecret", "projects/p/secrets/s/versions/1"),
    bad("SecretManagerSecret", "projects/p/secrets/"),
    bad(
        "SecretManagerSecret",
        "https://secretmanager.example.org/v1/projects/p/secrets/s",
        "secretmanager.example.org",
    ),
    # not a string
    bad("PubSubTopic", None),
    bad("PubSubTopic", 42),
]


@pytest.mark.parametrize(("kind", "value", "fragments"), REJECTED)
def test_normalize_rejects(kind: str, value: Any, fragments: tuple[str, ...]) -> None:
    ident = identity_for(kind)
    with pytest.raises(IdentityError) as exc:
        ident.normalize(value)
    err = exc.value
    msg = str(err)
    assert isinstance(err, ValueError)
    assert err.kind == kind
    assert err.value == value
    assert msg.startswith(f"{kind}: ")
    assert repr(value) in msg
    assert repr(ident.template) in msg  # the expected format
    assert f"//{ident.domain}/" in msg
    for fragment in fragments:
        assert fragment in msg


@pytest.mark.parametrize("kind", SAMPLE)
def test_expected_lists_every_accepted_form(kind: str) -> None:
    ident = identity_for(kind)
    expected = ident.expected()
    assert repr(ident.template) in expected
    assert repr(f"//{ident.domain}/{ident.template}") in expected
    for form in ident.extra_forms:
        assert repr(form) in expected
    if ident.rest_host:
        assert f"https://{ident.rest_host}/{ident.rest_prefix}" in expected


@pytest.mark.parametrize("kind", SAMPLE)
def test_parse_accepts_only_the_canonical_form(kind: str) -> None:
    ident = identity_for(kind)
    name = ident.format(**{p: f"v{i}" for i, p in enumerate(ident.params)})
    with pytest.raises(IdentityError):
        ident.parse(f"//{ident.domain}/{name}")
    with pytest.raises(IdentityError):
        ident.parse(f" {name}")
    with pytest.raises(IdentityError):
        ident.parse(123)  # type: ignore[arg-type]
