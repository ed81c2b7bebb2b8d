"""Stage 4: render files from templates and format them.

Templates are thin (slots and loops); this module prepares every slot.
Generated Python is normalised (sorted imports, then ``ruff format``, pinned)
so output does not depend on set iteration order inside
datamodel-code-generator. Emitters return unformatted source; the CLI formats
every Python file in one ruff run (``format_many``): one process for the whole
tree instead of one formatter call per file.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Any

import jinja2

from kccgen import data_dir

TEMPLATES = data_dir("templates")
# Black's style at line length 100: ruff format's output equals black's on
# every generated file (tests/unit/test_format.py compares them on a sample).
RUFF_ARGS = ("format", "--isolated", "--no-cache", "--line-length", "100", "--target-version", "py311")


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def split_imports(source: str) -> tuple[list[str], str]:
    """Separate the leading import block (sorted, de-duplicated) from the body."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    froms: dict[str, set[str]] = {}
    plain: set[str] = set()
    end = 0
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                end = node.end_lineno or end
                continue
            if isinstance(node, ast.ImportFrom):
                names = froms.setdefault(node.module or "", set())
                names.update(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names)
            else:
                for a in node.names:
                    plain.add(f"import {a.name}" if a.asname is None else f"import {a.name} as {a.asname}")
            end = node.end_lineno or end
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and end == 0:
            end = node.end_lineno or end  # module docstring
        else:
            break
    body = "".join(lines[end:]).lstrip("\n")
    imports = plain | {f"from {mod} import {', '.join(sorted(names))}" for mod, names in froms.items()}
    return sorted(imports, key=_import_key), body


def used_imports(imports: list[str], body: str) -> list[str]:
    """``from m import a, b`` lines cut to the names ``body`` uses (a class dropped
    from a module can leave its import behind, such as ``StrEnum``)."""
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body))
    out = []
    for line in imports:
        if not line.startswith("from ") or " as " in line:
            out.append(line)
            continue
        mod, names = line[5:].split(" import ", 1)
        keep = [n for n in names.split(", ") if n in used]
        if keep:
            out.append(f"from {mod} import {', '.join(keep)}")
    return out


def drop_classes(body: str, names: set[str]) -> str:
    """Remove top-level classes (and their ``model_rebuild()`` calls) by name.

    Used for ``<Kind>Ref`` placeholders: codegen needs a schema to point at,
    but the class itself is imported from the target's reference module.
    """
    tree = ast.parse(body)
    lines = body.splitlines(keepends=True)
    cut: list[tuple[int, int]] = []
    for node in tree.body:
        drop = isinstance(node, ast.ClassDef) and node.name in names
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            f = node.value.func
            drop = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in names
        if drop:
            start = min([node.lineno, *[d.lineno for d in getattr(node, "decorator_list", [])]])
            cut.append((start - 1, node.end_lineno or node.lineno))
    for start, end in reversed(cut):
        del lines[start:end]
    return "".join(lines)


def _import_key(line: str) -> tuple[int, str]:
    mod = line.split()[1]
    stdlib = mod.split(".")[0] in {"enum", "typing", "collections", "datetime", "dataclasses", "re"}
    local = mod.split(".")[0] == "kccgen"
    return (0 if stdlib else 2 if local else 1, line)


def py_literal(obj: Any, indent: int = 0) -> str:
    """A Python literal for JSON-like data, keys sorted: data files are
    serialized, not templated, and must not depend on dict order."""
    pad = "    " * (indent + 1)
    end = "    " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{pad}{py_literal(str(k))}: {py_literal(v, indent + 1)}," for k, v in sorted(obj.items())]
        return "{\n" + "\n".join(items) + f"\n{end}}}"
    if isinstance(obj, list | tuple):
        if not obj:
            return "[]"
        items = [f"{pad}{py_literal(v, indent + 1)}," for v in obj]
        return "[\n" + "\n".join(items) + f"\n{end}]"
    if obj is None or isinstance(obj, bool | int | float | str):
        return repr(obj)
    raise TypeError(f"cannot serialize {type(obj).__name__}")


def py_source(obj: Any, names: set[str] | None = None, shared: dict[tuple[type, Any], str] | None = None) -> str:
    """Python source for a frozen dataclass value (kccgen.contract shapes): the
    class with its non-default fields by keyword, enums by member. ``names``
    collects the classes the text uses, for the module's imports; ``shared``
    maps values another module defines (by type and value) to the expression to
    write instead."""
    if shared and dataclasses.is_dataclass(obj):
        try:
            name = shared.get((type(obj), obj))
        except TypeError:  # unhashable: never shared
            name = None
        if name is not None:
            return name
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        cls = type(obj)
        if names is not None:
            names.add(cls.__name__)
        args = []
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
                continue
            args.append(f"{f.name}={py_source(value, names, shared)}")
        return f"{cls.__name__}({', '.join(args)})"
    if isinstance(obj, Enum):
        if names is not None:
            names.add(type(obj).__name__)
        return f"{type(obj).__name__}.{obj.name}"
    if isinstance(obj, tuple):
        items = [py_source(v, names, shared) for v in obj]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if obj is None or isinstance(obj, bool | int | str):
        return repr(obj)
    raise TypeError(f"cannot write {type(obj).__name__} as source")


def ruff() -> str:
    """The pinned ruff binary installed beside this interpreter (PATH as fallback)."""
    import shutil

    beside = Path(sys.executable).parent / "ruff"
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if found is None:
        raise RuntimeError("ruff is not installed: generated Python is formatted with the pinned ruff (pip install -e .)")
    return found


def format_python(source: str, where: str) -> str:
    """One file through ``ruff format`` on stdin."""
    proc = subprocess.run([ruff(), *RUFF_ARGS, "--stdin-filename", Path(where).name, "-"], input=source, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{where}: generated code does not parse: {proc.stderr.strip()}")
    return proc.stdout


def format_many(files: dict[str, str]) -> dict[str, str]:
    """Every ``.py`` file of ``files`` formatted by one ruff run over a temp tree;
    other files unchanged. A file ruff cannot parse is named in the error."""
    py = {p: t for p, t in files.items() if p.endswith(".py")}
    if not py:
        return dict(files)
    out = dict(files)
    with tempfile.TemporaryDirectory(prefix="kccgen-format-") as tmp:
        base = Path(tmp)
        for rel, text in py.items():
            dest = base / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
        proc = subprocess.run([ruff(), *RUFF_ARGS, "."], cwd=base, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("generated code does not parse: " + proc.stderr.strip().replace(tmp + "/", ""))
        for rel in py:
            out[rel] = (base / rel).read_text(encoding="utf-8")
    return out


def render_text(template: str, **slots: Any) -> str:
    """The template's text, unformatted."""
    return environment().get_template(template).render(**slots)


def render(template: str, **slots: Any) -> str:
    """The template's text; Python is formatted later, in bulk (``format_many``)."""
    return render_text(template, **slots)
