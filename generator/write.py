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


def write_tree(root: Path, files: dict[str, str], subdir: str = "generated") -> None:
    """Replace ``root/subdir`` with exactly ``files`` (paths start with subdir/)."""
    dest = root / subdir
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{subdir}.tmp-", dir=root))
    try:
        for rel in sorted(files):
            assert rel.startswith(subdir + "/"), rel
            p = tmp / rel.removeprefix(subdir + "/")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(files[rel], encoding="utf-8")
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
