"""sbom.cdx.json: a CycloneDX 1.6 SBOM of the resolved graph, written with cyclonedx-python-lib.

One component per crate of the graph (purl `pkg:cargo/name@version`), the plugin package as
`metadata.component` carrying the library's SHA-256, and the graph's dependency edges.
Per crate, properties record the features cargo actually compiled for each compile kind
(`horon:features:target`, `horon:features:host`; comma-separated, empty when none) and flag
QA providers (`horon:qa-provider` = `crate via <chain>` or `feature F via <chain>`).
Deterministic: the timestamp is the build's SOURCE_DATE_EPOCH and the serial number a UUIDv5
of the document's own digest (computed with a nil serial), so the same inputs give the same
bytes.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from horon_bundle.graph import Graph

SBOM_NAME = "sbom.cdx.json"
SBOM_ROLE = "sbom"
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


def build_sbom(graph: Graph, subject: SbomSubject,
               qa_providers: Sequence[Mapping[str, str | None]]) -> bytes:
    """The SBOM's canonical JSON bytes; cyclonedx-python-lib is imported only here."""
    from horon_bundle.sbom_cyclonedx import render_sbom  # noqa: PLC0415 - heavy, lazy

    return render_sbom(graph, subject, qa_providers)
