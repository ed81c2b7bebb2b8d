"""``kccctl get``: the state directory's objects, printed as ``kubectl get`` prints them.

A resource is named as kubectl takes it (Kind, lowercase, plural, short name,
``plural.group``) or by a category the CRDs declare (``gcp``: every Kind), read
from the generated CRDs themselves. Nothing found is kubectl's "No resources
found" on stderr, exit 0; ``-o name`` is ``kind.group/name``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kccgen.runtime.registry import kind_index, resolve_kind


@cache
def categories() -> dict[str, tuple[str, ...]]:
    """Category -> the Kinds whose CRD declares it (``spec.names.categories``).
    Only each CRD's head is read (up to ``versions:``): a few hundred ms for
    every Kind, paid only when a name is not a Kind."""
    root = resources.files("kccgen.generated")
    out: dict[str, list[str]] = {}
    for kind, entry in kind_index().items():
        head: list[str] = []
        with root.joinpath(entry["crd"]).open(encoding="utf-8") as f:
            for line in f:
                if line.startswith("  versions:"):
                    break
                head.append(line)
        crd = yaml.load("".join(head), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
        for category in ((crd.get("spec") or {}).get("names") or {}).get("categories") or []:
            out.setdefault(str(category), []).append(kind)
    return {c: tuple(kinds) for c, kinds in sorted(out.items())}


def resolve_kinds(text: str) -> tuple[list[str], bool]:
    """(the Kinds ``text`` names, whether it named a category); KeyError as
    ``resolve_kind`` when it is neither a Kind nor a category."""
    try:
        return [resolve_kind(text)], False
    except KeyError:
        kinds = categories().get(text.lower())
        if kinds is None:
            raise
        return list(kinds), True


def qualified(kind: str) -> str:
    """``pubsubtopic.pubsub.cnrm.cloud.google.com``: what ``kubectl get -o name`` prints before the name."""
    return f"{kind.lower()}.{kind_index()[kind]['apiVersion'].split('/', 1)[0]}"


def get(kind_arg: str, name: str | None, state_root: Path, namespace: str, all_namespaces: bool, output: str) -> int:
    """Print the objects; exit status as kubectl's (1: a named object not found)."""
    from kccgen.runtime.state import StateDir

    if "/" in kind_arg and name is None:  # kubectl's KIND/NAME
        kind_arg, name = kind_arg.split("/", 1)
    try:
        kinds, by_category = resolve_kinds(kind_arg)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    state = StateDir(state_root)
    wanted_kinds = set(kinds)

    def wanted(o: Mapping[str, Any]) -> bool:
        meta = o.get("metadata") or {}
        return (
            o.get("kind") in wanted_kinds
            and (name is None or meta.get("name") == name)
            and (all_namespaces or (meta.get("namespace") or "default") == namespace)
        )

    objs = [o for o in state.load() if wanted(o)]
    for msg in state.problems:
        print(f"warning: {msg}", file=sys.stderr)
    if name and not objs:
        print(f"error: {kind_arg if by_category else kinds[0]} {namespace}/{name} not found in {state_root}", file=sys.stderr)
        return 1
    if output == "yaml":
        print(yaml.safe_dump_all(objs, sort_keys=True), end="")
    elif output == "json":
        doc: Any = objs[0] if name and len(objs) == 1 else {"apiVersion": "v1", "kind": "List", "items": objs}
        print(json.dumps(doc, indent=2, sort_keys=True))
    elif output == "name":
        for o in objs:
            print(f"{qualified(str(o['kind']))}/{o['metadata']['name']}")
    elif not objs:
        print("No resources found" if all_namespaces else f"No resources found in {namespace} namespace.", file=sys.stderr)
    else:
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for o in objs:
            by_kind.setdefault(str(o["kind"]), []).append(o)
        # As kubectl prints several resource types: a table each, the names qualified.
        tables = [object_table(by_kind[k], wide=output == "wide", namespaces=all_namespaces, prefix=f"{qualified(k)}/" if by_category else "") for k in sorted(by_kind)]
        print("\n\n".join(tables))
    return 0


def object_table(objs: list[dict[str, Any]], wide: bool, namespaces: bool, prefix: str = "") -> str:
    """kubectl get's table: a header, one row per object; wide adds the message."""
    from kccgen.runtime.local import columns

    head = (*(["NAMESPACE"] if namespaces else []), "NAME", "READY", "STATUS", "EXTERNALREF", *(["MESSAGE"] if wide else []))
    rows = []
    for o in objs:
        st = o.get("status") or {}
        ready: dict[str, str] = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), {})
        meta = o["metadata"]
        rows.append(
            (
                *([str(meta.get("namespace") or "default")] if namespaces else []),
                prefix + str(meta["name"]),
                ready.get("status", "Unknown"),
                ready.get("reason", ""),
                str(st.get("externalRef", "")),
                *([ready.get("message", "")] if wide else []),
            )
        )
    return "\n".join(columns(head, rows, "   "))
