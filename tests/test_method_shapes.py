"""Method shapes that no contract variant fits, and kind configs that name methods.

A small Discovery document (the golden ``mini`` API plus a ``gadgets``
collection) gives the generator a create it cannot describe: the Kind is
reported with the method's JSON path and not generated, while the other Kind
is; a ``methods:`` block names the shape where inference cannot tell.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import REPO, Run

GOLDEN = REPO / "tests" / "golden" / "mini" / "specs"
NAME = {"name": {"type": "string", "location": "path", "required": True, "pattern": "^projects/[^/]+/gadgets/[^/]+$"}}


def _gadgets(create_request: str, create_params: dict[str, Any]) -> dict[str, Any]:
    flat = "v1/projects/{projectsId}/gadgets"
    return {
        "methods": {
            "get": {"id": "mini.projects.gadgets.get", "path": "v1/{+name}", "flatPath": flat + "/{gadgetsId}", "httpMethod": "GET", "parameters": NAME, "response": {"$ref": "Gadget"}},
            "create": {
                "id": "mini.projects.gadgets.create",
                "path": "v1/{+parent}/gadgets",
                "flatPath": flat,
                "httpMethod": "POST",
                "parameters": {"parent": {"type": "string", "location": "path", "required": True, "pattern": "^projects/[^/]+$"}, **create_params},
                "request": {"$ref": create_request},
                "response": {"$ref": "Gadget"},
            },
            "delete": {"id": "mini.projects.gadgets.delete", "path": "v1/{+name}", "flatPath": flat + "/{gadgetsId}", "httpMethod": "DELETE", "parameters": NAME, "response": {"$ref": "Empty"}},
        }
    }


def specs_with_gadgets(tmp: Path, create_request: str, create_params: dict[str, Any], methods: dict[str, Any] | None = None) -> Path:
    """The mini specs plus mini.projects.gadgets (Gadget has no name field) and a MiniGadget Kind."""
    specs = tmp / "specs"
    shutil.copytree(GOLDEN, specs)
    doc_path = specs / "discovery" / "mini.v1.json"
    doc = json.loads(doc_path.read_text())
    doc["schemas"]["Gadget"] = {"id": "Gadget", "type": "object", "properties": {"size": {"type": "integer", "format": "int32", "description": "Optional. Size."}}}
    doc["schemas"]["MakeGadgetRequest"] = {"id": "MakeGadgetRequest", "type": "object", "properties": {"size": {"type": "integer", "format": "int32"}}}
    doc["resources"]["projects"]["resources"]["gadgets"] = _gadgets(create_request, create_params)
    doc_path.write_text(json.dumps(doc, indent=1))
    kinds_path = specs / "kinds" / "mini.yaml"
    kinds = yaml.safe_load(kinds_path.read_text())
    gadget: dict[str, Any] = {"kind": "MiniGadget", "resource": "projects.gadgets"}
    if methods is not None:
        gadget["methods"] = methods
    kinds["kinds"].append(gadget)
    kinds_path.write_text(yaml.safe_dump(kinds, sort_keys=False))
    with (specs / "asset-names.yaml").open("a") as f:
        f.write("- asset_type: mini.googleapis.com/Gadget\n  format: //mini.googleapis.com/projects/{project}/gadgets/{gadget}\n")
    return specs


def kccgen(root: Path, specs: Path, *args: str) -> Run:
    r = subprocess.run(
        [sys.executable, "-m", "kccgen.generator.cli", "--root", str(root), "--specs", str(specs), *args],
        cwd=root, capture_output=True, text=True, check=False, timeout=600,
    )
    return Run(r.returncode, r.stdout, r.stderr)


def test_a_create_no_variant_fits_skips_the_kind_with_its_method_path(tmp_path: Path) -> None:
    specs = specs_with_gadgets(tmp_path, "MakeGadgetRequest", {})
    r = kccgen(tmp_path, specs, "generate")
    assert r.code == 1, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: specs/kinds/mini.yaml#/kinds/1: MiniGadget is not generated: mini.v1#/resources/projects/resources/gadgets/methods/create: "
        "MakeGadgetRequest neither is nor wraps Gadget, and the create is a POST, not a PUT to the resource path"
    ], r.stderr
    out = tmp_path / "generated" / "mini" / "v1beta1"
    assert (out / "miniwidget_adapter.py").is_file()  # the other Kind is generated
    assert not list(out.glob("minigadget_*")) and not list((tmp_path / "generated" / "crds").glob("minigadgets.*"))
    check = kccgen(tmp_path, specs, "check")  # the tree matches, but the config asks for a Kind it cannot have
    assert check.code == 1 and "MiniGadget is not generated" in check.stderr


def test_an_id_parameter_inference_cannot_find_is_named_in_the_kind_config(tmp_path: Path) -> None:
    key = {"key": {"type": "string", "location": "query", "description": "The gadget's ID."}}
    specs = specs_with_gadgets(tmp_path, "Gadget", key)
    r = kccgen(tmp_path, specs, "generate")
    assert r.code == 1 and "cannot tell how the ID travels: no ?gadgetId=, no name field in Gadget" in r.stderr, r.stderr
    specs = specs_with_gadgets(tmp_path / "b", "Gadget", key, {"create": {"method": "create", "shape": "id-param", "idParam": "key", "reason": "the API calls its ID parameter key"}})
    r = kccgen(tmp_path / "b", specs, "generate")
    assert r.code == 0, r.stderr
    adapter = (tmp_path / "b" / "generated" / "mini" / "v1beta1" / "minigadget_adapter.py").read_text()
    assert 'create=CreateWithIdParam(' in adapter and 'id_param="key"' in adapter, adapter


@pytest.mark.parametrize(
    ("methods", "where", "message"),
    [
        ({"create": {"method": "create", "shape": "id-param", "idParam": "nope", "reason": "r"}}, "/kinds/1/methods/create/idParam", "MiniGadget: idParam 'nope' is not a query parameter of mini.projects.gadgets.create (have: key)"),
        ({"create": {"method": "make", "shape": "id-param", "reason": "r"}}, "/kinds/1/methods/create/method", "MiniGadget: mini.v1 projects.gadgets has no method 'make' (have: create, delete, get)"),
        ({"create": {"method": "create", "shap": "id-param", "reason": "r"}}, "/kinds/1/methods/create/shap", "unknown key 'shap' (did you mean 'shape'?)"),
        ({"craete": {"method": "create"}}, "/kinds/1/methods/craete", "unknown key 'craete' (did you mean 'create'?)"),
    ],
    ids=["unknown-id-param", "unknown-method", "misspelt-key", "misspelt-role"],
)
def test_a_wrong_methods_block_is_one_line_naming_file_and_key(tmp_path: Path, methods: dict[str, Any], where: str, message: str) -> None:
    specs = specs_with_gadgets(tmp_path, "Gadget", {"key": {"type": "string", "location": "query"}}, methods)
    (tmp_path / "generated").mkdir()
    r = kccgen(tmp_path, specs, "generate")
    assert r.code == 2, r.stderr
    assert r.lines == [f"error: specs/kinds/mini.yaml#{where}: {message}"], r.stderr
    assert list((tmp_path / "generated").iterdir()) == []
