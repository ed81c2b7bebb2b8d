"""tools/kcc_evidence on a hand-made mini mirror of Config Connector's repository.

A bare git directory gets two commits holding one file of each source the tool
mines (CRD, static controller table, servicemapping, identity Go file, DCL
schema and metadata, a test case with its _http.log); the extract must name the
exact templates, sources, refs and required paths. The real mirror is never read.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tools import kcc_evidence as ev

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]

CRD_WIDGET = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foowidgets.foo.cnrm.cloud.google.com
spec:
  group: foo.cnrm.cloud.google.com
  names: {kind: FooWidget, plural: foowidgets}
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        required: [spec]
        properties:
          spec:
            required: [projectRef, cluster]
            properties:
              displayName: {type: string}
              projectRef:
                type: object
                oneOf: [{required: [name]}, {required: [external]}]
                properties: {external: {type: string}, name: {type: string}, namespace: {type: string}}
              networkRefs:
                type: array
                items:
                  type: object
                  properties: {external: {type: string}, name: {type: string}, namespace: {type: string}, kind: {type: string}}
              notARef:
                type: object
                properties: {external: {type: string}}
              cluster:
                type: array
                items:
                  type: object
                  required: [clusterId, zone]
                  properties:
                    clusterId: {type: string}
                    zone: {type: string}
                    gadgetRef:
                      type: object
                      properties:
                        external: {type: string, description: "Allowed value: The `name` field of a `FooGadget` resource."}
                        name: {type: string}
                        namespace: {type: string}
                    labels:
                      type: object
                      additionalProperties:
                        type: object
                        properties:
                          thingRef:
                            type: object
                            description: A reference to an externally managed FooThing.
                            properties: {external: {type: string}, name: {type: string}, namespace: {type: string}}
                    autoscaling:
                      type: object
                      required: [maxNodes]
                      properties: {maxNodes: {type: integer}}
          status:
            required: [ignored]
            properties: {ignored: {type: string}}
  - name: v1alpha1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties: {oldField: {type: string}}
  - name: v1alpha0
    served: false
    storage: false
"""

CRD_GADGET = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foogadgets.foo.cnrm.cloud.google.com
spec:
  group: foo.cnrm.cloud.google.com
  names: {kind: FooGadget, plural: foogadgets}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties: {location: {type: string}}
"""


def _crd(kind: str, plural: str, group: str = "foo.cnrm.cloud.google.com") -> str:
    return f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  names: {{kind: {kind}, plural: {plural}}}
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties: {{resourceID: {{type: string}}}}
"""


STATIC_CONFIG = """\
package resourceconfig

var ControllerConfigStatic = ResourcesControllerMap{
\t{Group: "foo.cnrm.cloud.google.com", Kind: "FooGadget"}:   {DefaultController: k8s.ReconcilerTypeDirect, SupportedControllers: []k8s.ReconcilerType{k8s.ReconcilerTypeDirect}},
\t{Group: "foo.cnrm.cloud.google.com", Kind: "FooJob"}:      {DefaultController: k8s.ReconcilerTypeDirect, SupportedControllers: []k8s.ReconcilerType{k8s.ReconcilerTypeDirect}},
\t{Group: "foo.cnrm.cloud.google.com", Kind: "FooThing"}:    {DefaultController: k8s.ReconcilerTypeDCL, SupportedControllers: []k8s.ReconcilerType{k8s.ReconcilerTypeDCL}},
\t{Group: "foo.cnrm.cloud.google.com", Kind: "FooWidget"}:   {DefaultController: k8s.ReconcilerTypeTerraform, SupportedControllers: []k8s.ReconcilerType{k8s.ReconcilerTypeDirect, k8s.ReconcilerTypeTerraform}},
\t{Group: "iam.cnrm.cloud.google.com", Kind: "IAMPolicy"}:    {DefaultController: k8s.ReconcilerTypeIAMPolicy, SupportedControllers: []k8s.ReconcilerType{k8s.ReconcilerTypeIAMPolicy}},
}
"""

SERVICEMAPPING = """\
apiVersion: core.cnrm.cloud.google.com/v1alpha1
kind: ServiceMapping
metadata:
  name: foo.cnrm.cloud.google.com
spec:
  name: Foo
  serviceHostName: "foo.googleapis.com"
  resources:
  - name: google_foo_widget
    kind: FooWidget
    idTemplate: "projects/{{project}}/widgets/{{name}}"
  - name: google_foo_regional_widget
    kind: FooWidget
    idTemplate: "{{project}}/{{region?}}/{{name}}"
"""

# The identity of a direct Kind, in the styles KCC's apis/ folder uses.
GADGET_IDENTITY = """\
package v1alpha1

import (
\t"fmt"

\t"github.com/GoogleCloudPlatform/k8s-config-connector/apis/common/parent"
\t"github.com/GoogleCloudPlatform/k8s-config-connector/pkg/gcpurls"
)

const GadgetURL = "projects/{{projectID}}/locations/{{location}}/gadgets/{{gadgetID}}"

var GadgetFormat = gcpurls.Template[FooGadgetIdentity]("foo.googleapis.com", "projects/{project}/locations/{location}/gadgets/{gadget}")

type FooGadgetIdentity struct {
\tparent *parent.ProjectAndLocationParent
\tid     string
}

// String builds the name from the parent, as most identity files do.
func (i *FooGadgetIdentity) String() string {
\treturn i.parent.String() + "/gadgets/" + i.id
}

func (i *FooGadgetIdentity) Legacy() string {
\treturn fmt.Sprintf("projects/%s/zones/%s/gadgets/%s", "p", "z", i.id)
}

func (i *FooGadgetIdentity) Check(ref string) error {
\treturn fmt.Errorf("format of FooGadget external=%q was not known (use %s)", ref, GadgetURL)
}
"""

PARENT = """\
package parent

type ProjectAndLocationParent struct {
\tProjectID string
\tLocation  string
}

func (p *ProjectAndLocationParent) String() string {
\treturn "projects/" + p.ProjectID + "/locations/" + p.Location
}
"""

# A Kind whose identity is only concatenation through a parent type of its own file.
JOB_IDENTITY = """\
package v1beta1

type FooJobParent struct {
\tProjectID string
\tRegion    string
}

func (p *FooJobParent) String() string {
\treturn "projects/" + p.ProjectID + "/regions/" + p.Region
}

type FooJobIdentity struct {
\tparent *FooJobParent
\tid     string
}

func (i *FooJobIdentity) String() string {
\treturn fmt.Sprintf("%s/jobs/%s", i.parent.String(), i.id)
}
"""

# Names two Kinds: which one it is about cannot be told.
AMBIGUOUS_REFERENCE = """\
package v1beta1

type FooWidgetRef struct{}
type FooGadgetRef struct{}

func (r *FooWidgetRef) x() { _ = *FooWidget; _ = *FooGadget }
type FooWidget struct{}
type FooGadget struct{}
"""

DCL_SCHEMA = """\
info:
  title: Foo/Thing
  x-dcl-struct-name: Thing
components:
  schemas:
    Thing:
      title: Thing
      x-dcl-id: projects/{{project}}/locations/{{location}}/things/{{name}}
      type: object
"""

DCL_METADATA = """\
package metadata

var serviceList = []ServiceMetadata{
\t{
\t\tName:       "Foo",
\t\tAPIVersion: k8s.KCCAPIVersionV1Beta1,
\t\tDCLVersion: "ga",
\t\tResources: []Resource{
\t\t\t{
\t\t\t\tKind:       "FooThing",
\t\t\t\tReleasable: true,
\t\t\t},
\t\t},
\t},
}
"""

WIDGET_CREATE = """\
apiVersion: foo.cnrm.cloud.google.com/v1beta1
kind: FooWidget
metadata:
  name: foowidget-${uniqueId}
spec:
  projectRef:
    external: ${projectId}
"""

WIDGET_LOG = """\
GET https://compute.googleapis.com/compute/v1/projects/${projectId}/global/networks/${networkID}?alt=json
Content-Type: application/json

200 OK

{}

---

POST https://foo.googleapis.com/v1beta2/projects/${projectId}/widgets?alt=json&widgetId=foowidget-${uniqueId}
Content-Type: application/json

{
  "displayName": "x"
}

200 OK

{}

---

GET https://foo.googleapis.com/v1beta2/projects/${projectId}/widgets/foowidget-${uniqueId}?alt=json
Content-Type: application/json

200 OK

{
  "name": "projects/${projectId}/widgets/foowidget-${uniqueId}"
}

---

POST https://foo.googleapis.com/v1beta2/projects/${projectId}/widgets/foowidget-${uniqueId}:setLabels?alt=json
Content-Type: application/json

{}

200 OK

{}
"""

JOB_CREATE = """\
apiVersion: foo.cnrm.cloud.google.com/v1beta1
kind: FooJob
metadata:
  name: foojob-${uniqueId}
spec:
  region: us-central1
"""

# Only a custom method names the object: the extract keeps the verb.
JOB_LOG = """\
POST https://foo.googleapis.com/v1b3/projects/${projectId}/locations/us-central1/flexTemplates:launch?alt=json
Content-Type: application/json

{
  "launchParameter": {"jobName": "foojob-${uniqueId}"}
}

200 OK

{}
"""

GADGET_CREATE = """\
apiVersion: foo.cnrm.cloud.google.com/v1alpha1
kind: FooGadget
metadata:
  name: foogadget-${uniqueId}
"""

# gRPC traffic: the object's name is in the request body.
GADGET_LOG = """\
GRPC /google.foo.v1.GadgetService/GetGadget

{
  "name": "projects/${projectId}/locations/us-central1/gadgets/foogadget-${uniqueId}"
}

NOT_FOUND

---

GRPC /google.foo.v1.GadgetService/ListGadgets

{
  "parent": "projects/${projectId}/locations/us-central1"
}

OK
"""

# Recorded with a placeholder instead of the object's name (as KCC's compute logs are).
THING_LOG = """\
POST https://foo.googleapis.com/v1/projects/${projectId}/global/things?alt=json
Content-Type: application/json

{
  "name": "${thingID}"
}

200 OK

{}

---

GET https://foo.googleapis.com/v1/projects/${projectId}/global/things/${thingID}?alt=json
Content-Type: application/json

200 OK

{}
"""

FIXTURES = "pkg/test/resourcefixture/testdata/basic/foo/"
DCL_DIR = "third_party/github.com/GoogleCloudPlatform/declarative-resource-client-library/services/google/foo/"

FIRST: dict[str, str] = {
    "config/crds/resources/apiextensions.k8s.io_v1_customresourcedefinition_foowidgets.foo.cnrm.cloud.google.com.yaml": CRD_WIDGET,
    "config/crds/resources/apiextensions.k8s.io_v1_customresourcedefinition_foogadgets.foo.cnrm.cloud.google.com.yaml": CRD_GADGET,
    "config/crds/resources/apiextensions.k8s.io_v1_customresourcedefinition_foojobs.foo.cnrm.cloud.google.com.yaml": _crd("FooJob", "foojobs"),
    "config/crds/resources/apiextensions.k8s.io_v1_customresourcedefinition_foothings.foo.cnrm.cloud.google.com.yaml": _crd("FooThing", "foothings"),
    "config/crds/resources/apiextensions.k8s.io_v1_customresourcedefinition_iampolicies.iam.cnrm.cloud.google.com.yaml": _crd("IAMPolicy", "iampolicies", "iam.cnrm.cloud.google.com"),
    "pkg/controller/resourceconfig/static_config.go": STATIC_CONFIG,
    "config/servicemappings/foo.yaml": SERVICEMAPPING,
    "apis/foo/v1alpha1/foogadget_identity.go": GADGET_IDENTITY,
    "apis/foo/v1beta1/foojob_identity.go": JOB_IDENTITY,
    "apis/foo/v1beta1/widgetsandgadgets_reference.go": AMBIGUOUS_REFERENCE,
    "apis/common/parent/projectlocation.go": PARENT,
    DCL_DIR + "thing.yaml": DCL_SCHEMA,
    "pkg/dcl/metadata/metadata.go": DCL_METADATA,
}

SECOND: dict[str, str] = {
    FIXTURES + "v1beta1/foowidget/foowidget-basic/create.yaml": WIDGET_CREATE,
    FIXTURES + "v1beta1/foowidget/foowidget-basic/_http.log": WIDGET_LOG,
    FIXTURES + "v1beta1/foojob/foojob-basic/create.yaml": JOB_CREATE,
    FIXTURES + "v1beta1/foojob/foojob-basic/_http.log": JOB_LOG,
    FIXTURES + "v1alpha1/foogadget/foogadget-basic/create.yaml": GADGET_CREATE,
    FIXTURES + "v1alpha1/foogadget/foogadget-basic/_http.log": GADGET_LOG,
    FIXTURES + "v1beta1/foothing/foothing-basic/create.yaml": WIDGET_CREATE.replace("FooWidget", "FooThing").replace("foowidget", "foothing"),
    FIXTURES + "v1beta1/foothing/foothing-basic/_http.log": THING_LOG,
    FIXTURES + "v1beta1/foothing/no-create/_http.log": THING_LOG,
}


def _commit(git_dir: Path, work: Path, files: dict[str, str], message: str) -> None:
    for path, text in files.items():
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    base = [*GIT, "--git-dir", str(git_dir), "--work-tree", str(work)]
    subprocess.run([*base, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*base, "commit", "-q", "-m", message], check=True, capture_output=True)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kcc")
    git_dir = root / "repo.git"
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
    work = root / "work"
    _commit(git_dir, work, FIRST, "sources")
    _commit(git_dir, work, SECOND, "recorded traffic")
    return git_dir


@pytest.fixture(scope="module")
def extracted(mirror: Path) -> tuple[dict[str, ev.Entry], ev.Stats]:
    return ev.extract(ev.Mirror(mirror))


def _names(entry: ev.Entry) -> list[dict[str, Any]]:
    return [n.as_dict() for n in entry.names]


def test_crd_fields_refs_and_required_paths(extracted: tuple[dict[str, ev.Entry], ev.Stats]) -> None:
    w = extracted[0]["FooWidget"]
    assert (w.group, w.plural) == ("foo.cnrm.cloud.google.com", "foowidgets")
    assert w.versions == ["v1alpha1", "v1beta1"]  # served ones, sorted; v1alpha0 is not served
    assert w.spec == ["cluster", "displayName", "networkRefs", "notARef", "projectRef"]  # the storage version's
    assert w.refs == ["networkRefs", "projectRef"]  # a list of refs counts; external alone does not
    assert w.required == [
        "spec",
        "spec.cluster",
        "spec.cluster[].autoscaling.maxNodes",
        "spec.cluster[].clusterId",
        "spec.cluster[].zone",
        "spec.projectRef",
    ]
    # every reference under spec, nested too, with the one Kind its descriptions name
    assert w.ref_paths == {
        "spec.cluster[].gadgetRef": "FooGadget",
        "spec.cluster[].labels.*.thingRef": "FooThing",
        "spec.networkRefs": "",
        "spec.projectRef": "",
    }
    assert "ref_paths" in w.as_dict() and "ref_texts" not in w.as_dict()


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Allowed value: The `selfLink` field of a `ComputeHealthCheck` resource.", "ComputeHealthCheck"),
        ("The 'name' field of a 'Folder' resource.", "Folder"),
        ("A reference to an externally managed KMSCryptoKey.", "KMSCryptoKey"),
        ("The name of a KMSCryptoKey resource.", "KMSCryptoKey"),
        ("Either a `ComputeHealthCheck` or a `ComputeHTTPHealthCheck`.", ""),  # several: unknown
        ("The URL of a `NotAKind` resource.", ""),
        ("The project that this resource belongs to.", ""),
    ],
)
def test_reference_target_from_descriptions(text: str, kind: str) -> None:
    kinds = {"ComputeHealthCheck", "ComputeHTTPHealthCheck", "Folder", "KMSCryptoKey", "Project"}
    assert ev.ref_target(text, kinds) == kind


def test_controllers_from_the_static_table(extracted: tuple[dict[str, ev.Entry], ev.Stats]) -> None:
    e = extracted[0]
    assert (e["FooWidget"].controller, e["FooWidget"].also) == ("tf", ["direct"])
    assert (e["FooGadget"].controller, e["FooThing"].controller) == ("direct", "dcl")
    assert e["IAMPolicy"].controller == "iam"


def test_servicemapping_templates_and_host(extracted: tuple[dict[str, ev.Entry], ev.Stats]) -> None:
    w = extracted[0]["FooWidget"]
    assert w.host == "foo.googleapis.com"
    assert _names(w) == [
        {"template": "projects/{project}/widgets/{name}", "from": "servicemapping"},
        {"template": "{project}/{region?}/{name}", "from": "servicemapping"},  # kept: a reader decides
        {"template": "projects/{}/widgets/{}", "from": "http-log"},  # GET on the name wins over the POST
    ]


def test_identity_styles_and_parents(extracted: tuple[dict[str, ev.Entry], ev.Stats]) -> None:
    e, stats = extracted
    g = e["FooGadget"]
    assert g.host == "foo.googleapis.com"  # the gcpurls host
    # gcpurls.Template first; the String() through parent.ProjectAndLocationParent gives the same
    # shape, so only the named spelling stays; the gRPC request names it again.
    assert _names(g) == [
        {"template": "projects/{project}/locations/{location}/gadgets/{gadget}", "from": "identity"},
        {"template": "projects/{}/locations/{}/gadgets/{}", "from": "http-log"},
    ]
    j = e["FooJob"]
    # No gcpurls: the Sprintf with the parent's String() (resolved in the same file) is the name.
    assert _names(j) == [
        {"template": "projects/{}/regions/{}/jobs/{}", "from": "identity"},
        {"template": "projects/{}/locations/{}/flexTemplates:launch", "from": "http-log"},  # only a verb names it
    ]
    assert stats.go_skipped == ["apis/foo/v1beta1/widgetsandgadgets_reference.go"]


def test_dcl_schema_and_placeholder_log(extracted: tuple[dict[str, ev.Entry], ev.Stats]) -> None:
    e, stats = extracted
    t = e["FooThing"]
    assert _names(t) == [
        {"template": "projects/{project}/locations/{location}/things/{name}", "from": "dcl"},
        {"template": "projects/{}/global/things/{}", "from": "http-log"},  # ${thingID} in the collection naming the Kind
    ]
    assert t.host == "foo.googleapis.com"  # from the recorded requests: no other source has one
    assert (stats.cases, stats.cases_unusable) == (4, 1)


def test_same_string_from_a_later_source_is_noted_not_repeated() -> None:
    e = ev.Entry("K", "g", "ks", ["v1"], [], [], [])
    e.add("projects/{}/ks/{}", "identity")
    e.add("projects/{x}/ks/{y}", "identity")  # same shape, same source: dropped
    e.add("projects/{}/ks/{}", "http-log")
    e.add("projects/{p}/ks/{k}", "dcl")  # same shape, another source: kept
    assert [n.as_dict() for n in e.names] == [
        {"template": "projects/{}/ks/{}", "from": "identity", "also_from": "http-log"},
        {"template": "projects/{p}/ks/{k}", "from": "dcl"},
    ]


@pytest.mark.parametrize(
    ("url", "template"),
    [
        ("https://compute.googleapis.com/compute/v1/projects/${projectId}/global/networks/${networkID}", "projects/{}/global/networks/{}"),
        ("https://compute.googleapis.com/compute/v1/projects/${projectId}/regions/us-central1/subnetworks/sub-${uniqueId}", "projects/{}/regions/{}/subnetworks/{}"),
        ("https://www.googleapis.com/compute/v1/locations/global/firewallPolicies/${firewallPolicyID}", "locations/{}/firewallPolicies/{}"),
        ("https://storage.googleapis.com/storage/v1/b/bucket-${uniqueId}", "b/{}"),
        ("https://us-central1-pubsublite.googleapis.com/v1/admin/projects/${projectId}/locations/us-central1-a/topics/t", "projects/{}/locations/{}/topics/{}"),
        ("https://eventarc.googleapis.com/v1/projects/${projectId}/locations/us-central1/googleChannelConfig", "projects/{}/locations/{}/googleChannelConfig"),
        ("https://dataflow.googleapis.com/v1b3/projects/${projectId}/locations/us-central1/jobs/${jobID}", "projects/{}/locations/{}/jobs/{}"),
    ],
)
def test_recorded_paths_as_templates(url: str, template: str) -> None:
    path = urlsplit(url).path
    assert ev.template_of_path([s for s in ev.strip_host_and_version(path).split("/") if s]) == template


def test_go_placeholder_styles() -> None:
    assert ev.placeholders("projects/{{project}}/zones/{{zone-name}}/x/%s") == "projects/{project}/zones/{zone-name}/x/{}"
    pattern = r"^((//)?accesscontextmanager.googleapis.com)?/?accessPolicies/(?P<accessPolicies>[[:alnum:]]+)/accessLevels/(?P<accessLevels>[[:alnum:]]+)$"
    assert ev.regex_template(pattern) == "accessPolicies/{accessPolicies}/accessLevels/{accessLevels}"
    assert ev.split_verb("projects/{}/locations/{}/flexTemplates:launch") == ("projects/{}/locations/{}/flexTemplates", "launch")
    assert not ev.looks_like_name("format of X external=%q was not known")
    assert not ev.looks_like_name("accessPolicies/")


def test_render_is_deterministic_and_names_the_commit(mirror: Path) -> None:
    m = ev.Mirror(mirror)
    first = ev.render(ev.extract(m)[0], m.commit)
    second = ev.render(ev.extract(ev.Mirror(mirror))[0], m.commit)
    assert first == second
    assert f"k8s-config-connector@{m.commit[:10]}" in first.splitlines()[1]
    assert "do not edit" in first.splitlines()[1]
    doc = yaml.safe_load(first)
    assert doc["kcc_commit"] == m.commit[:10]
    assert list(doc["kinds"]) == sorted(doc["kinds"])


def test_ref_reads_an_older_commit(mirror: Path) -> None:
    entries, stats = ev.extract(ev.Mirror(mirror, "HEAD~1"))
    assert stats.cases == 0
    assert [n.source for n in entries["FooWidget"].names] == ["servicemapping", "servicemapping"]


CRD_SECRET = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foousers.foo.cnrm.cloud.google.com}
spec:
  group: foo.cnrm.cloud.google.com
  names: {kind: FooUser, plural: foousers}
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              password:
                oneOf: [{required: [value]}, {required: [valueFrom]}]
                properties:
                  value: {type: string}
                  valueFrom:
                    properties:
                      secretKeyRef:
                        properties: {key: {type: string}, name: {type: string}}
                        required: [name, key]
                        type: object
                    type: object
                type: object
              keys:
                type: array
                items:
                  properties:
                    raw:
                      properties:
                        value: {type: string}
                        valueFrom: {properties: {secretKeyRef: {type: object}}, type: object}
                      type: object
                    value: {type: string}
                  type: object
              plain:
                properties: {value: {type: string}}
                type: object
"""


def test_sensitive_fields_are_the_value_or_secret_objects() -> None:
    """KCC's {value | valueFrom.secretKeyRef} objects, nested and in list items;
    an object with only ``value`` (or a ``value`` beside other keys) is none."""
    e = ev.entry_from_crd(yaml.safe_load(CRD_SECRET))
    assert e.sensitive == ["spec.keys[].raw", "spec.password"]
    assert e.as_dict()["sensitive"] == ["spec.keys[].raw", "spec.password"]
    assert "sensitive" not in ev.entry_from_crd(yaml.safe_load(CRD_WIDGET)).as_dict()
