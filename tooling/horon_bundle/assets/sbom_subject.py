"""What an SBOM describes besides the graph (kept apart from the cyclonedx rendering)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

# Namespace of the content-derived serial numbers (a UUIDv5 of a fixed URL).
SERIAL_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://horon.dev/horon-bundle/sbom/v1")


@dataclass(frozen=True, slots=True, kw_only=True)
class SbomSubject:
    """What the SBOM describes besides the graph: the bundle's library and its identity."""

    plugin_id: str
    target: str
    profile: str
    channel: str
    library_path: str
    library_sha256: str
    epoch: int
    tool_version: str
