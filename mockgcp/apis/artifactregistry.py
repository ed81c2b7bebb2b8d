"""Artifact Registry: a Docker repository's registry URI."""

from __future__ import annotations

from kccgen.mockgcp.apis import Fill, Profile


class ArtifactRegistry(Profile):
    proto_package_name = "google.devtools.artifactregistry"

    def fill(self, f: Fill) -> None:
        """Artifact Registry answers with the repository's host path for Docker
        repositories, e.g. ``us-west1-docker.pkg.dev/p/repo``."""
        parts = f.key.split("/")  # projects/p/locations/l/repositories/r
        if f.schema == "Repository" and f.created and len(parts) == 6 and str(f.resource.get("format", "DOCKER")) in ("DOCKER", "1"):
            f.resource.setdefault("registryUri", f"{parts[3]}-docker.pkg.dev/{parts[1]}/{parts[5]}")


PROFILE = ArtifactRegistry()
