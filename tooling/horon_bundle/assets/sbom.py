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

from collections.abc import Sequence

from horon_bundle.assets.sbom_subject import SbomSubject
from horon_bundle.model.graph import Graph
from horon_bundle.model.qa import QaProvider

SBOM_NAME = "sbom.cdx.json"
SBOM_ROLE = "sbom"


def build_sbom(graph: Graph, subject: SbomSubject,
               qa_providers: Sequence[QaProvider]) -> bytes:
    """The SBOM's canonical JSON bytes; cyclonedx-python-lib is imported only here."""
    from horon_bundle.assets.sbom_cyclonedx import render_sbom  # noqa: PLC0415 - heavy, lazy

    return render_sbom(graph, subject, qa_providers)
