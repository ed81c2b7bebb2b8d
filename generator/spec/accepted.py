"""``specs/accepted-changes.yaml``: breaking changes to Kinds' public surface, each accepted with a reason.

A regeneration that removes a spec path, changes its type or its reference, makes
it immutable, or stops serving a version breaks users' manifests; the generator
refuses it (generator/surface.py) unless an entry here names the change. Strict
like the other spec files: an unknown key is an error naming the file and JSON path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kccgen.generator.spec.kinds import load_strict

#: removed: the spec path is gone (renamed or dropped); type: its type changed;
#: reference: it became a reference, stopped being one, or names another Kind;
#: immutable: a change to it no longer applies; version: the CRD stops serving
#: the version ``path`` names (``v1alpha1``).
ChangeName = Literal["removed", "type", "reference", "immutable", "version"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class AcceptedChange(_Strict):
    """One breaking change, accepted: the Kind, the spec path (``spec.kmsKeyRef``), what changed, why."""

    kind: str = Field(min_length=1)
    path: str = Field(min_length=1)
    change: ChangeName
    reason: str = Field(min_length=1)


class AcceptedChangesFile(_Strict):
    changes: tuple[AcceptedChange, ...] = ()


def load_accepted_changes(path: Path, display: str | None = None) -> AcceptedChangesFile:
    return load_strict(AcceptedChangesFile, path, display)
