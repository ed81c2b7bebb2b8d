"""Stage 5: write the tree atomically, or compare it with what is on disk.

``generate`` renders into a temporary sibling directory and swaps it in, so
a failure leaves the old ``generated/`` untouched and stale files vanish.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: The trees generate writes: the package, and the public-surface record beside
#: it (generator/surface.py), each replaced whole.
TREES = ("generated", "surface")


def _split(files: dict[str, str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {t: {} for t in TREES}
    for rel, text in files.items():
        top = rel.split("/", 1)[0]
        if top not in out:
            raise ValueError(f"{rel}: not under {' or '.join(TREES)}")
        out[top][rel] = text
    return out


def write_trees(root: Path, files: dict[str, str]) -> None:
    """Every tree of ``files``, each replaced atomically; the record last, so a
    failure never records a surface the package does not have."""
    for sub, part in _split(files).items():
        write_tree(root, part, sub)


def compare_trees(root: Path, files: dict[str, str]) -> TreeDiff:
    out = TreeDiff()
    for sub, part in _split(files).items():
        d = compare_tree(root, part, sub)
        out.added += d.added
        out.removed += d.removed
        out.changed.update(d.changed)
    return out


def write_tree(root: Path, files: dict[str, str], subdir: str = "generated") -> None:
    """Replace ``root/subdir`` with exactly ``files`` (paths start with subdir/).
    A file whose bytes are already on disk is hard-linked into the new tree, not
    written again: after a one-API change nearly all of 6,000 files are (writing
    them all took 3 s; reading and linking them, under half of that)."""
    dest = root / subdir
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{subdir}.tmp-", dir=root))
    # mkdtemp makes it 0700: the tree would be unreadable to any other user
    # (an image's non-root user, a CI step) once swapped in.
    mask = os.umask(0)
    os.umask(mask)
    tmp.chmod(0o777 & ~mask)
    try:
        made: set[Path] = set()
        for rel in sorted(files):
            assert rel.startswith(subdir + "/"), rel
            part = rel.removeprefix(subdir + "/")
            p = tmp / part
            if p.parent not in made:
                p.parent.mkdir(parents=True, exist_ok=True)
                made.add(p.parent)
            data = files[rel].encode("utf-8")
            if not _link_if_same(dest / part, p, data):
                p.write_bytes(data)
        old = None
        if dest.exists():
            old = root / f".{subdir}.old-{os.getpid()}"
            dest.rename(old)
        tmp.rename(dest)
        if old is not None:
            shutil.rmtree(old)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def _link_if_same(old: Path, new: Path, data: bytes) -> bool:
    """Hard-link ``old`` to ``new`` when it holds exactly ``data``; False otherwise
    (missing, different, or a file system without hard links)."""
    try:
        if old.stat().st_size != len(data) or old.read_bytes() != data:
            return False
        os.link(old, new)
    except OSError:
        return False
    return True


@dataclass
class TreeDiff:
    added: list[str] = field(default_factory=list)  # would be created
    removed: list[str] = field(default_factory=list)  # stale on disk
    changed: dict[str, str] = field(default_factory=dict)  # path -> unified diff

    @property
    def clean(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def summary(self, max_lines: int = 40) -> str:
        out = [f"generated/ is stale: {len(self.added)} missing, {len(self.removed)} stale, {len(self.changed)} changed"]
        out += [f"  missing  {p}" for p in self.added]
        out += [f"  stale    {p}" for p in self.removed]
        for p, d in sorted(self.changed.items()):
            n = sum(1 for line in d.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))
            out.append(f"  changed  {p} ({n} lines)")
        for _, d in sorted(self.changed.items())[:3]:
            lines = d.splitlines()
            out += lines[:max_lines] + ([f"  ... {len(lines) - max_lines} more diff lines"] if len(lines) > max_lines else [])
        out.append("run `make generate` and commit the result")
        return "\n".join(out)


def compare_tree(root: Path, files: dict[str, str], subdir: str = "generated") -> TreeDiff:
    dest = root / subdir
    on_disk = {
        str(p.relative_to(root))
        for p in dest.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    } if dest.exists() else set()
    diff = TreeDiff()
    for rel in sorted(files):
        if rel not in on_disk:
            diff.added.append(rel)
            continue
        raw = (root / rel).read_bytes()
        if raw != files[rel].encode("utf-8"):
            current = raw.decode("utf-8", errors="replace")
            diff.changed[rel] = "".join(
                difflib.unified_diff(current.splitlines(True), files[rel].splitlines(True), f"a/{rel}", f"b/{rel}", n=1)
            )
    diff.removed = sorted(on_disk - set(files))
    return diff
