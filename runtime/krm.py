"""KRM envelope shared by every generated Kind: metadata, conditions, status.

Generated ``<kind>_types`` modules subclass these, so the rules for what a
Config Connector object looks like are written once.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class KRMModel(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown keys are errors.
    The base of every generated KRM class, so none repeats its config."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class APIModel(BaseModel):
    """The base of every generated API payload class: camelCase on the wire,
    snake_case in Python, and fields the pinned document does not know yet are
    kept (a newer API revision must round-trip)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ObjectMeta(BaseModel):
    """The parts of Kubernetes ObjectMeta the runtime reads; the rest is kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    generation: int | None = None
    uid: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    creation_timestamp: str | None = Field(default=None, alias="creationTimestamp")
    deletion_timestamp: str | None = Field(default=None, alias="deletionTimestamp")
    finalizers: list[str] | None = None
    managed_fields: list[dict[str, Any]] | None = Field(default=None, alias="managedFields")


class Condition(KRMModel):
    """A status condition (``Ready`` with reasons such as ``UpToDate``)."""

    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = Field(default=None, alias="lastTransitionTime")
    observed_generation: int | None = Field(default=None, alias="observedGeneration")


class KRMStatus(KRMModel):
    """Fields every direct Kind's status has; Kinds add ``observedState``."""

    conditions: list[Condition] | None = None
    external_ref: str | None = Field(
        default=None,
        alias="externalRef",
        description="A unique specifier for the resource in GCP (asset-inventory name without the service domain).",
    )
    observed_generation: int | None = Field(default=None, alias="observedGeneration")


class KRMObject(KRMModel):
    """apiVersion/kind/metadata; Kinds add typed ``spec`` and ``status``."""

    api_version: str = Field(alias="apiVersion")
    kind: str
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)


class SecretKeyRef(KRMModel):
    """A key of a Kubernetes Secret in the object's namespace."""

    name: str
    key: str


class SensitiveValueFrom(KRMModel):
    """Where a sensitive value comes from."""

    secret_key_ref: SecretKeyRef = Field(alias="secretKeyRef")


class SensitiveValue(KRMModel):
    """Config Connector's sensitive string: ``value``, or ``valueFrom.secretKeyRef``;
    exactly one, as the CRD's rule says (kccgen.runtime.secrets resolves it)."""

    value: str | None = None
    value_from: SensitiveValueFrom | None = Field(default=None, alias="valueFrom")

    @model_validator(mode="after")
    def _exactly_one(self) -> SensitiveValue:
        if (self.value is None) == (self.value_from is None):
            raise ValueError("set exactly one of value and valueFrom")
        return self
