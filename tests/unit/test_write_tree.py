"""generated/ is replaced as a whole; unchanged files are linked, not written again."""

from __future__ import annotations

from pathlib import Path

from kccgen.generator.write import write_tree


def _read(root: Path) -> dict[str, str]:
    base = root / "generated"
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(base.rglob("*")) if p.is_file()}


def test_the_tree_is_exactly_the_files_and_unchanged_files_keep_their_inode(tmp_path: Path) -> None:
    first = {"generated/a/x.py": "x = 1\n", "generated/a/y.py": "y = 1\n", "generated/stale.py": "old\n"}
    write_tree(tmp_path, first)
    assert _read(tmp_path) == first
    inode = (tmp_path / "generated/a/x.py").stat().st_ino
    changed_inode = (tmp_path / "generated/a/y.py").stat().st_ino
    second = {"generated/a/x.py": "x = 1\n", "generated/a/y.py": "y = 2\n", "generated/b/z.py": "z\n"}
    write_tree(tmp_path, second)
    assert _read(tmp_path) == second  # the stale file is gone, the changed one changed
    assert (tmp_path / "generated/a/x.py").stat().st_ino == inode
    assert (tmp_path / "generated/a/x.py").stat().st_nlink == 1  # the old tree is gone
    assert (tmp_path / "generated/a/y.py").stat().st_ino != changed_inode
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".generated")]


def test_the_written_tree_has_the_umasks_mode_not_mkdtemps(tmp_path: Path) -> None:
    """mkdtemp's 0700 made generated/ unreadable to other users (a non-root
    image user, kccctl run as another uid) after every regeneration."""
    import os

    mask = os.umask(0o022)
    try:
        write_tree(tmp_path, {"generated/a.txt": "x"})
    finally:
        os.umask(mask)
    assert (tmp_path / "generated").stat().st_mode & 0o777 == 0o755
