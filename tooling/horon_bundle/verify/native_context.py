"""What the native checks share while one bundle is judged (`verify.judge.NATIVE_CHECKS`).

The source and the report, the auditor's QA patterns, and what each row produced for the
rows after it: the metadata files' bytes, plugin.json, SHA256SUMS, the provenance bytes and
statement, every declared file's digest, the library's static section and the graph's
judgement. A value still None is one an earlier row could not produce.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from horon_bundle.core.errors import Finding
from horon_bundle.core.hashing import Digest
from horon_bundle.model.evidence import Advertised
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.provenance import Provenance
from horon_bundle.model.qa import QaProvider
from horon_bundle.verify.reading.interface import BundleSource
from horon_bundle.verify.report import VerifyReport


@dataclass(frozen=True, slots=True)
class SectionState:
    """What the library's static section said: metadata, absent (None), or refused."""

    advertised: Advertised | None
    findings: tuple[Finding, ...] = ()
    read: bool = True


@dataclass(frozen=True, slots=True)
class GraphJudgement:
    """The recorded graph re-judged once, by `graph.qa-free`, for `features.compiled` too."""

    providers: tuple[QaProvider, ...]
    qa_findings: tuple[Finding, ...]  # QA providers in a release, the recorded QA judgement
    drift: tuple[Finding, ...]  # compiled features that are not the claim's


@dataclass(slots=True)
class NativeContext:
    source: BundleSource
    report: VerifyReport
    qa_patterns: Sequence[str] = ()
    metadata: dict[str, bytes] = field(default_factory=dict)  # plugin.json, SHA256SUMS read
    manifest: Manifest | None = None  # plugin.json parsed (manifest.strict)
    listed: dict[str, str] | None = None  # SHA256SUMS parsed (checksums.format)
    provenance_path: str | None = None  # provenance.json as plugin.json declares it
    provenance_bytes: bytes | None = None  # read (provenance.read)
    digests: dict[str, Digest] = field(default_factory=dict)  # every file hashed once
    section: SectionState | None = None  # the library's .horon_abi section
    provenance: Provenance | None = None  # the statement parsed (provenance.schema)
    graph: GraphJudgement | None = None  # the recorded graph re-judged (graph.qa-free)
