"""The claims a bundle's provenance makes, judged against the bundle and recomputed facts.

Binding (subjects, identity fields), evidence (the invocation's artifacts, or the embedded
artifact record), the resolved graph (QA providers, drift) and claimed = advertised. Every
rule is the verifier's own (`rules.release`, `rules.binding`): the bundle can add QA
patterns, never remove one.
"""

from __future__ import annotations

from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.model.evidence import EVIDENCE_INVOCATION, EVIDENCE_RECORD, Advertised
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.provenance import BuildFacts, Provenance
from horon_bundle.model.record import parse_record
from horon_bundle.rules.binding import binding_findings
from horon_bundle.rules.release import advertised_findings, graph_findings, plugin_features
from horon_bundle.verify.report import VerifyReport


@dataclass(frozen=True, slots=True)
class SectionState:
    """What the library's static section said: metadata, absent (None), or refused."""

    advertised: Advertised | None
    findings: tuple[Finding, ...] = ()
    read: bool = True


def check_binding(manifest: Manifest, provenance: Provenance, digests: dict[str, Digest],
                   report: VerifyReport) -> None:
    findings = Findings()
    expected = {manifest.library.path: manifest.library.sha256}
    expected.update({s.file.path: s.file.sha256 for s in manifest.sidecars})
    for name in sorted(set(expected) | set(provenance.subjects)):
        want, got = expected.get(name), provenance.subjects.get(name)
        if want is None:
            findings.add(codes.PROVENANCE_SUBJECT, f"provenance.json: subject {name!r} is not "
                                                   "the library or a sidecar")
        elif got is None:
            findings.add(codes.PROVENANCE_SUBJECT, f"provenance.json: no subject for {name!r}")
        elif got != want or (name in digests and digests[name].sha256 != got):
            actual = digests[name].sha256 if name in digests else "(missing)"
            findings.add(codes.PROVENANCE_SUBJECT,
                         f"provenance.json: subject {name!r} sha256 {got} != file {actual}")
    facts = provenance.facts
    pairs = [("id", facts.plugin_id, manifest.id), ("version", facts.version, manifest.version),
             ("target", facts.target, manifest.target), ("profile", facts.profile,
                                                         manifest.profile),
             ("channel", facts.channel, manifest.channel),
             ("features", list(facts.features), list(manifest.features))]
    for name, recorded, declared in pairs:
        if recorded != declared:
            findings.add(codes.PROVENANCE_CONTRADICTION,
                         f"provenance.json: {name} {recorded!r} != plugin.json {declared!r}")
    report.judged("provenance.binding", findings)


def check_evidence(manifest: Manifest, facts: BuildFacts, digests: dict[str, Digest],
                    report: VerifyReport) -> None:
    findings = Findings()
    library = digests.get(manifest.library.path)
    if facts.evidence == EVIDENCE_INVOCATION:
        if facts.invocation is None:
            findings.add(codes.EVIDENCE_MISSING, "provenance.json: evidence 'invocation' but no "
                                                 "recorded cargo invocation")
        elif library is not None:
            name = manifest.library.path.rsplit("/", 1)[-1]
            matching = [a for a in facts.invocation.artifacts if a.path.endswith("/" + name)]
            if not any(a.sha256 == library.sha256 and a.size == library.size for a in matching):
                findings.add(codes.EVIDENCE_MISMATCH,
                             f"provenance.json: no artifact of the recorded invocation has the "
                             f"library's sha256 {library.sha256}")
    elif facts.evidence == EVIDENCE_RECORD:
        if facts.record is None:
            findings.add(codes.EVIDENCE_MISSING, "provenance.json: evidence 'artifact-record' but "
                                                 "no record")
        else:
            findings.extend(record_findings_for_bundle(facts, manifest, library))
    report.judged("evidence", findings, note=facts.evidence)


def check_graph(manifest: Manifest, facts: BuildFacts, report: VerifyReport) -> None:
    graph = facts.graph
    if graph is None:
        if manifest.channel == "release":
            report.judged("graph.present", [Finding(
                codes.GRAPH_MISSING, "provenance.json: release bundle without a recorded graph")])
        else:
            report.skipped("graph.present", "qa bundle without a recorded graph")
        return
    report.judged("graph.present", [])
    providers, findings = graph_findings(graph, claim=facts.claim, channel=manifest.channel,
                                         patterns=facts.qa_patterns)
    qa_findings = [f for f in findings if f.code is codes.GRAPH_QA_PROVIDER]
    drift = [f for f in findings if f.code is not codes.GRAPH_QA_PROVIDER]
    if manifest.channel == "release":
        report.judged("graph.qa-free", qa_findings)
    else:
        report.skipped("graph.qa-free", f"qa bundle with {len(providers)} QA provider(s)")
    if plugin_features(graph) != tuple(manifest.features):
        drift.append(Finding(codes.FEATURES_DRIFT,
                             f"graph: {graph.root_package.name} compiled "
                             f"{list(plugin_features(graph))}, plugin.json lists "
                             f"{list(manifest.features)}"))
    report.judged("features.compiled", drift)


def check_advertised(manifest: Manifest, facts: BuildFacts | None, section: SectionState,
                      report: VerifyReport) -> None:
    """Claimed = advertised, from the library's static section (any target, nothing loaded)
    and from the advertised metadata recorded at build time; without a section, the recorded
    metadata alone, and the check's note says so."""
    recorded = facts.advertised if facts is not None else None
    if section.findings:
        report.judged("features.advertised", list(section.findings),
                     note="the library's .horon_abi section")
        return
    if not section.read:
        report.skipped("features.advertised", "the library is missing")
        return
    observed = ", ".join(recorded.observed_by) if recorded is not None else ""
    sources: list[tuple[Advertised, str]] = []
    if section.advertised is not None:
        sources.append((section.advertised, f"{manifest.library.path}'s .horon_abi section"))
        note = "read from the library's .horon_abi section"
    elif recorded is not None:
        note = ("no .horon_abi section: using the advertised metadata recorded at build time ("
                f"{observed})")
    else:
        report.skipped("features.advertised", "no .horon_abi section and no advertised metadata "
                                           "recorded at build time")
        return
    if recorded is not None:
        sources.append((recorded, f"the advertised metadata recorded in provenance.json "
                                  f"({observed})"))
    findings: list[Finding] = []
    for advertised, who in sources:
        findings += advertised_findings(advertised, features=manifest.features,
                                        plugin_id=manifest.id, who=who)
        if advertised.abi_minor != manifest.abi_minor:
            findings.append(Finding(codes.ABI_METADATA,
                                    f"{who} advertises ABI minor {advertised.abi_minor}, "
                                    f"plugin.json says {manifest.abi_minor}"))
    if section.advertised is not None and recorded is not None:
        if section.advertised.same_metadata(recorded):
            note += f"; agrees with the metadata recorded at build time ({observed})"
        else:
            findings.append(Finding(
                codes.ABI_SECTION_MISMATCH,
                f"{manifest.library.path}: the .horon_abi section says "
                f"{section.advertised.summary()}; provenance.json recorded "
                f"{recorded.summary()} ({observed}) at build time"))
    report.judged("features.advertised", findings, note=note)


def record_findings_for_bundle(facts: BuildFacts, manifest: Manifest,
                               library: Digest | None) -> list[Finding]:
    """verify: the record embedded in provenance must bind the bundle's library."""
    try:
        record = parse_record(facts.record, "provenance.json artifact record")
    except Refused as exc:
        return list(exc.findings)
    findings: list[Finding] = []
    if library is not None:
        findings += binding_findings(record, library=library,
                                     library_name=manifest.library.path.rsplit("/", 1)[-1],
                                     target=manifest.target, profile=manifest.profile,
                                     claim=tuple(facts.claim), plugin_id=manifest.id)
    if facts.record_sha256 is not None and \
            hash_bytes(canonical_bytes(facts.record)).sha256 != facts.record_sha256:
        findings.append(Finding(codes.EVIDENCE_RECORD,
                                "provenance.json: the embedded artifact record does not match "
                                "its recorded digest"))
    return findings
