"""`build --prebuilt LIB --record REC`: a library built elsewhere, bound by its record.

The record (written by `compile` on the runner that built the library) binds the library by
sha256, size, target, profile and feature set; any difference is refused, one finding per
fact. The record's graph is judged by the same release rules as a fresh build's, and what
the library advertises here (its section, the probe where it can run) must equal what the
record says it advertised on its runner.
"""

from __future__ import annotations

from pathlib import Path

from horon_bundle.build import observation
from horon_bundle.build.ahead import IMPORTS, start_ahead
from horon_bundle.build.compiled import CompiledLibrary, Evidence, LibraryRequest, finish_library
from horon_bundle.cargo.metadata import Metadata, Package, load_metadata
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.file_identity import identity_of
from horon_bundle.core.hashing import copy_and_hash
from horon_bundle.model.evidence import EVIDENCE_RECORD, Advertised
from horon_bundle.model.record import ArtifactRecord, load_record
from horon_bundle.rules.binding import binding_findings
from horon_bundle.rules.features_and_qa import judge_graph


def library_from_record(request: LibraryRequest, *, prebuilt: Path,
                        record_path: Path) -> CompiledLibrary:
    plugin = request.plugin
    request.reporter.step(f"binding prebuilt {prebuilt.name} through {record_path.name}")
    record, record_digest = load_record(record_path)
    copied = request.scratch / prebuilt.name
    try:
        digest = copy_and_hash(prebuilt, copied, crc=True)
        identity = identity_of(copied.stat())
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{prebuilt}: {exc.strerror}") from None
    claim = request.claim
    findings = binding_findings(record, library=digest, library_name=prebuilt.name,
                                target=request.target, profile=plugin.profile, claim=claim,
                                plugin_id=plugin.id)
    if record.package != plugin.package:
        findings.append(Finding(codes.EVIDENCE_MISMATCH,
                                f"artifact record package {record.package!r} != "
                                f"{plugin.package!r}"))
    if findings:
        raise Refused(findings)
    providers = judge_graph(record.graph, claim=claim, channel=request.channel,
                            patterns=request.declaration.qa_patterns)
    start_ahead("imports", IMPORTS)  # while the probe child runs (`build.ahead`)
    advertised, notes = _advertised(record, copied, request)
    package, metadata = _package_facts(record, request)
    invocation = record.invocation
    evidence = Evidence(kind=EVIDENCE_RECORD, invocation=None, record=record.raw,
                        record_sha256=record_digest.sha256,
                        cargo_lock_sha256=invocation.cargo_lock_sha256,
                        source_revision=invocation.source_revision,
                        source_dirty=invocation.source_dirty)
    return finish_library(request, path=copied, digest=digest, identity=identity,
                          package=package, metadata=metadata, graph=record.graph,
                          providers=providers, advertised=advertised, notes=notes,
                          evidence=evidence)


def _advertised(record: ArtifactRecord, library: Path,
                request: LibraryRequest) -> tuple[Advertised | None, list[str]]:
    """What the prebuilt library advertises here (section, probe where it runs), checked
    against what the record says it advertised on the runner that compiled it."""
    here, notes = observation.read_advertised(
        library, target=request.target, toolchain=request.toolchain,
        reporter=request.reporter, timeout=request.probe_timeout)
    recorded = record.advertised
    if recorded is None:
        return here, notes
    if here is None:
        notes.append("advertised ABI metadata taken from the artifact record (probed on the "
                      "runner that compiled it)")
        return recorded, notes
    if not here.same_metadata(recorded):
        code = codes.ABI_METADATA if "probe" in here.observed_by else codes.ABI_SECTION_MISMATCH
        what = "advertises" if "probe" in here.observed_by else "has a .horon_abi section saying"
        raise Refused.one(code, f"{library.name} {what} {here.summary()} here; the artifact "
                                f"record says it advertised {recorded.summary()} on its runner")
    return observation.merge_observations(here, recorded), notes


def _package_facts(record: ArtifactRecord,
                   request: LibraryRequest) -> tuple[Package, Metadata]:
    """The package facts the bundle needs (version, licence, the crates' sources for the
    notices) from this workspace's own cargo metadata."""
    metadata = load_metadata(request.declaration.workspace, target=record.target,
                             package=record.package, claim=record.claim, env=request.environ)
    package = metadata.member(record.package)
    if package is None or package.version != record.version:
        found = package.version if package else "absent"
        raise Refused.one(codes.EVIDENCE_MISMATCH,
                          f"artifact record is for {record.package} {record.version}, the "
                          f"workspace has {found}")
    return package, metadata
