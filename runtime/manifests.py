"""Reading manifests as ``kubectl apply -f`` does, within Kubernetes' limits.

Files, directories (``-R``: with their subdirectories) and ``-`` (stdin);
YAML streams, ``.json`` files and ``v1`` Lists. Each object is checked before
anything is sent: its name and namespace as Kubernetes checks them (RFC 1123,
so no object's state file can land outside the state directory), its Kind's
model, and its size. The API server refuses an object over 3 MiB serialized
(etcd's request limit, 3,145,728 bytes); so does this, naming the file and the
object, instead of applying it and slowing every later run on its state.
A file is read one YAML document at a time: a document too large to be one
object (``MAX_DOCUMENT_CHARS``) is refused before it is parsed, so a huge file
is never held whole in memory.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import yaml
from pydantic import ValidationError

from kccgen.runtime.admission import YAML_LOADER
from kccgen.runtime.registry import types_modules, unknown_kind
from kccgen.runtime.secrets import secret_problem

#: The largest object the API server stores: etcd's request limit.
MAX_OBJECT_BYTES = 3 * 1024 * 1024
#: The longest document text read: a 3 MiB object written as indented YAML (or
#: pretty-printed JSON) takes well under four times its compact JSON size, so a
#: longer document holds no valid object (a ``List`` that long: split it).
MAX_DOCUMENT_CHARS = 4 * MAX_OBJECT_BYTES

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class ManifestError(ValueError):
    """A manifest that cannot be applied; names the file, document and field."""


# What Kubernetes accepts: a custom resource's name is a DNS-1123 subdomain, a
# namespace a DNS-1123 label. Neither can hold "/" or start with ".", so a
# state path made of them stays inside the state directory.
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid metadata.name, or None."""
    if not isinstance(name, str) or not name:
        return "metadata.name must be a non-empty string"
    if len(name) > 253 or not _SUBDOMAIN.fullmatch(name):
        return (
            f"metadata.name {name!r} is not a valid name: lower case letters, digits, '-' and '.', "
            "starting and ending with a letter or digit, at most 253 characters (RFC 1123 subdomain)"
        )
    return None


def namespace_problem(ns: object) -> str | None:
    """Why ``ns`` is not a valid namespace, or None."""
    if not isinstance(ns, str) or len(ns) > 63 or not re.fullmatch(_LABEL, ns):
        return (
            f"namespace {ns!r} is not a valid namespace: lower case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters (RFC 1123 label)"
        )
    return None


def manifest_files(paths: Iterable[Path], recursive: bool) -> list[Path]:
    """Like kubectl apply -f: a directory gives its own manifest files, its
    subdirectories too with ``-R``; ``-`` is standard input."""
    files: list[Path] = []
    for p in paths:
        if str(p) == "-":
            files.append(p)
        elif p.is_dir():
            found = p.rglob("*") if recursive else p.iterdir()
            files.extend(sorted(x for x in found if x.is_file() and x.suffix in MANIFEST_SUFFIXES))
        elif p.exists():
            files.append(p)
        else:
            raise ManifestError(f"{p}: no such file or directory")
    return files


def serialized_size(obj: Any, limit: int = MAX_OBJECT_BYTES) -> int:
    """Bytes of ``obj`` as compact JSON (what the API server is sent), counted
    as it is encoded and given up past ``limit``: a YAML alias bomb (a few lines
    that expand a billion times) is refused without being expanded."""
    size = 0
    encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)
    for chunk in encoder.iterencode(obj):  # lazy: the pure-Python encoder
        size += len(chunk) if chunk.isascii() else len(chunk.encode("utf-8"))
        if size > limit:
            break
    return size


def _document_starts(line: str) -> bool:
    return line.startswith("---") and line[3:4] in ("", " ", "\t", "\r", "\n")


def _yaml_chunks(stream: IO[str], name: str) -> Iterator[str]:
    """The text of a YAML stream cut at its document markers (a ``---`` line at
    column 0; directives stay with the document they precede), one document at a
    time. Parsing each piece gives the documents ``yaml.load_all`` gives, in
    order; a piece longer than ``MAX_DOCUMENT_CHARS`` is refused unparsed."""
    buf: list[str] = []
    size = 0
    directives = False  # buf holds only directives (%YAML, %TAG): the next --- is theirs
    after_end = True  # at the stream start or after "...": where a directive may come
    index = 0
    while line := stream.readline(MAX_DOCUMENT_CHARS - size + 1):
        starts = _document_starts(line)
        directive = after_end and line.startswith("%")
        if (starts and not directives) or (directive and not directives):
            if buf:
                yield "".join(buf)
                index += 1
            buf, size = [], 0
        directives = directive or (directives and not starts)
        blank = not line.strip() or line.lstrip().startswith("#")
        after_end = line.rstrip("\r\n") == "..." or (after_end and not starts and blank)
        buf.append(line)
        size += len(line)
        if size > MAX_DOCUMENT_CHARS:
            raise ManifestError(
                f"{name}#{index}: document over {MAX_DOCUMENT_CHARS:,} characters, refused before parsing: "
                f"no Kubernetes object is over {MAX_OBJECT_BYTES:,} bytes serialized (split a long List into documents)"
            )
    if buf:
        yield "".join(buf)


def _documents(f: Path, stdin: IO[str] | None) -> Iterator[Any]:
    """The documents of one file (YAML stream, or JSON for .json), a ``List``
    unpacked, read and parsed one document at a time."""
    name = "<stdin>" if str(f) == "-" else str(f)
    try:
        opened: contextlib.AbstractContextManager[IO[str]] = contextlib.nullcontext(stdin or sys.stdin) if str(f) == "-" else f.open(encoding="utf-8")
        with opened as stream:  # stdin is read, never closed
            if f.suffix == ".json":
                text = stream.read(MAX_DOCUMENT_CHARS + 1)
                if len(text) > MAX_DOCUMENT_CHARS:
                    raise ManifestError(f"{name}: over {MAX_DOCUMENT_CHARS:,} characters, refused before parsing: no Kubernetes object is over {MAX_OBJECT_BYTES:,} bytes serialized")
                yield from _unpacked([json.loads(text)])
                return
            for chunk in _yaml_chunks(stream, name):
                yield from _unpacked(list(yaml.load_all(chunk, Loader=YAML_LOADER)))
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"{name}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise ManifestError(f"{name}: invalid JSON: {e}") from None
    except yaml.YAMLError as e:
        raise ManifestError(f"{name}: invalid YAML: {e}".replace("\n", " ")) from None


def _unpacked(docs: Iterable[Any]) -> Iterator[Any]:
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            yield from d["items"]  # kubectl get -o yaml writes a v1 List
        else:
            yield d


def load_manifests(paths: Iterable[Path], default_ns: str = "default", *, recursive: bool = False, stdin: IO[str] | None = None) -> list[dict[str, Any]]:
    """Every object in the files, directories (``recursive``: with their
    subdirectories) and ``-`` (stdin), validated by its Kind's model and refused
    over the API server's object size limit."""
    models = types_modules()
    out: list[dict[str, Any]] = []
    for f in manifest_files(paths, recursive):
        for i, doc in enumerate(_documents(f, stdin)):
            if doc is None:
                continue
            where = f"{'<stdin>' if str(f) == '-' else f}#{i}"
            if not isinstance(doc, dict) or not doc.get("kind") or not (doc.get("metadata") or {}).get("name"):
                raise ManifestError(f"{where}: a manifest needs kind and metadata.name")
            kind = str(doc["kind"])
            _check_size(doc, where, kind)
            if kind == "Namespace":
                out.append(_namespace_manifest(doc, where))
                continue
            if kind == "Secret":  # read by sensitive fields (kccgen.runtime.secrets), never stored
                if (problem := secret_problem(doc)) is not None:
                    raise ManifestError(f"{where}: Secret {doc['metadata']['name']!r}: {problem}")
                doc["metadata"].setdefault("namespace", default_ns)
                out.append(doc)
                continue
            if kind not in models:
                raise ManifestError(f"{where}: {unknown_kind(kind, sorted(models))}")
            meta = doc["metadata"]
            problem = name_problem(meta.get("name")) or namespace_problem(meta.get("namespace") or default_ns)
            if problem:
                raise ManifestError(f"{where}: {kind} {meta.get('name')!r}: {problem}")
            try:
                getattr(models[kind], kind).model_validate(doc)
            except ValidationError as e:
                first = e.errors(include_url=False)[0]
                loc = ".".join(str(x) for x in first["loc"])
                raise ManifestError(f"{where}: {kind} {doc['metadata']['name']}: {loc}: {first['msg']}") from None
            doc.setdefault("metadata", {}).setdefault("namespace", default_ns)
            out.append(doc)
    return out


def _check_size(doc: dict[str, Any], where: str, kind: str) -> None:
    """The API server's limit, before the Kind's model reads a huge object."""
    try:
        size = serialized_size(doc)
    except (ValueError, RecursionError):  # a YAML anchor inside itself
        raise ManifestError(f"{where}: {kind} {doc['metadata']['name']!r} contains itself (a recursive YAML alias)") from None
    if size > MAX_OBJECT_BYTES:
        raise ManifestError(
            f"{where}: {kind} {doc['metadata']['name']!r} is over {MAX_OBJECT_BYTES:,} bytes serialized "
            "(3 MiB, the largest object Kubernetes stores): refused"
        )


def _namespace_manifest(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """A ``v1`` Namespace: as in Config Connector, its annotations
    (``cnrm.cloud.google.com/project-id``, ``.../actuation-mode``) are the
    defaults of the objects in it."""
    meta = doc["metadata"]
    if doc.get("apiVersion") != "v1":
        raise ManifestError(f"{where}: Namespace {meta.get('name')!r}: apiVersion must be v1, not {doc.get('apiVersion')!r}")
    problem = namespace_problem(meta.get("name"))
    if problem:
        raise ManifestError(f"{where}: Namespace {meta.get('name')!r}: {problem.replace('namespace', 'metadata.name', 1)}")
    anns = meta.get("annotations") or {}
    if not isinstance(anns, dict) or not all(isinstance(v, str) for v in anns.values()):
        raise ManifestError(f"{where}: Namespace {meta['name']!r}: metadata.annotations must map names to strings")
    meta.pop("namespace", None)
    return doc
