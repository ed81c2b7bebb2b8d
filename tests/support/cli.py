"""Shared test scaffolding: running our CLIs."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

@dataclass(frozen=True)
class Run:
    """A finished CLI run."""

    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        """Non-empty stderr lines."""
        return [line for line in self.stderr.splitlines() if line.strip()]


def run_module(module: str, *args: str, cwd: Path = REPO, timeout: float = 600) -> Run:
    """``python -m module args...`` from the repo root."""
    r = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=timeout
    )
    return Run(r.returncode, r.stdout, r.stderr)
