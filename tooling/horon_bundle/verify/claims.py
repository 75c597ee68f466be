"""The claims a bundle's provenance makes, judged against the bundle and recomputed facts.

Reading the statement (provenance.read, provenance.schema), binding (subjects, identity
fields), evidence (the invocation's artifacts, or the embedded artifact record) and the
resolved graph (present, QA providers, compiled = claimed): rows of `verify.judge.NATIVE_CHECKS`,
each judging the context the rows before it filled. Every rule is the verifier's own
(`rules.features_and_qa`, `rules.binding`): the bundle can add QA patterns, never remove one.
"""

from __future__ import annotations

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.model.evidence import EVIDENCE_INVOCATION, EVIDENCE_RECORD
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.provenance import MAX_PROVENANCE_BYTES, BuildFacts, parse_provenance
from horon_bundle.model.qa import BUILTIN_QA_PATTERNS, effective_patterns
from horon_bundle.rules.binding import binding_findings
from horon_bundle.rules.features_and_qa import graph_findings, plugin_features, recorded_qa_findings
from horon_bundle.verify.check_table import Judged, Skipped, Verdict
from horon_bundle.verify.native_context import GraphJudgement, NativeContext


def read_provenance(ctx: NativeContext) -> Verdict | None:
    """provenance.read: the statement plugin.json declares, read once (reported only when it
    cannot be; hashing takes these same bytes)."""
    manifest = ctx.manifest
    if manifest is None or (asset := manifest.asset("provenance")) is None:
        return None
    ctx.provenance_path = asset.file.path
    if ctx.provenance_path not in ctx.source.files:
        return None
    try:
        ctx.provenance_bytes = ctx.source.read_small(ctx.provenance_path, MAX_PROVENANCE_BYTES)
    except Refused as exc:
        return Judged(exc.findings)
    return None


def provenance_absent(ctx: NativeContext) -> Verdict | None:
    """provenance: why none of the provenance checks ran, when they did not."""
    if ctx.manifest is None:
        return Skipped("plugin.json was refused")
    if ctx.provenance_bytes is None:
        return Skipped("provenance.json is missing")
    return None


def check_schema(ctx: NativeContext) -> Verdict | None:
    """provenance.schema: the statement by its strict decoder."""
    if ctx.manifest is None or ctx.provenance_bytes is None:
        return None
    try:
        ctx.provenance = parse_provenance(ctx.provenance_bytes)
    except Refused as exc:
        return Judged(exc.findings)
    ctx.report.provenance = ctx.provenance
    return Judged()


def check_binding(ctx: NativeContext) -> Verdict | None:
    """provenance.binding: its subjects are the library and sidecars, its facts plugin.json's."""
    manifest, provenance, digests = ctx.manifest, ctx.provenance, ctx.digests
    if manifest is None or provenance is None:
        return None
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
    return Judged(list(findings))


def check_evidence(ctx: NativeContext) -> Verdict | None:
    """evidence: the recorded invocation or artifact record produced this very library."""
    manifest, provenance = ctx.manifest, ctx.provenance
    if manifest is None or provenance is None:
        return None
    facts = provenance.facts
    findings = Findings()
    library = ctx.digests.get(manifest.library.path)
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
    return Judged(list(findings), note=facts.evidence)


def check_graph_present(ctx: NativeContext) -> Verdict | None:
    """graph.present: a release records the graph it was built from (a qa bundle may not)."""
    if ctx.manifest is None or ctx.provenance is None:
        return None
    if ctx.provenance.facts.graph is not None:
        return Judged()
    if ctx.manifest.channel == "release":
        return Judged([Finding(codes.GRAPH_MISSING,
                               "provenance.json: release bundle without a recorded graph")])
    return Skipped("qa bundle without a recorded graph")


def check_qa_free(ctx: NativeContext) -> Verdict | None:
    """graph.qa-free: the recorded graph re-judged with the verifier's own patterns: the
    built-in ones, the ones the bundle recorded and the auditor's (a policy's `qa-patterns`);
    a bundle can add patterns, never remove one. The QA judgement the bundle recorded is
    recomputed too; the drift found on the way is `features.compiled`'s (`ctx.graph`)."""
    manifest, provenance = ctx.manifest, ctx.provenance
    if manifest is None or provenance is None or (graph := provenance.facts.graph) is None:
        return None
    facts = provenance.facts
    patterns = effective_patterns(facts.qa_patterns, ctx.qa_patterns)
    providers, findings = graph_findings(graph, claim=facts.claim, channel=manifest.channel,
                                         patterns=patterns)
    qa_findings = [f for f in findings if f.code is codes.GRAPH_QA_PROVIDER]
    drift = [f for f in findings if f.code is not codes.GRAPH_QA_PROVIDER]
    # one search serves both when no policy added patterns (the usual case)
    same = patterns == effective_patterns(facts.qa_patterns)
    qa_findings += recorded_qa_findings(graph, facts, providers if same else None)
    if plugin_features(graph) != tuple(manifest.features):
        drift.append(Finding(codes.FEATURES_DRIFT,
                             f"graph: {graph.root_package.name} compiled "
                             f"{list(plugin_features(graph))}, plugin.json lists "
                             f"{list(manifest.features)}"))
    ctx.report.qa_providers, ctx.report.qa_patterns = tuple(providers), patterns
    ctx.graph = GraphJudgement(providers=tuple(providers), qa_findings=tuple(qa_findings),
                               drift=tuple(drift))
    added = len(patterns) - len(BUILTIN_QA_PATTERNS)
    note = f"{len(patterns)} patterns: {len(BUILTIN_QA_PATTERNS)} built-in, {added} added " \
           f"by the bundle{' and the policy' if ctx.qa_patterns else ''}"
    if manifest.channel == "release" or qa_findings:
        return Judged(qa_findings, note=note)
    return Skipped(f"qa bundle with {len(providers)} QA provider(s)")


def check_compiled(ctx: NativeContext) -> Verdict | None:
    """features.compiled: the graph's compiled features are the claim's and plugin.json's."""
    return None if ctx.graph is None else Judged(ctx.graph.drift)


def record_findings_for_bundle(facts: BuildFacts, manifest: Manifest,
                               library: Digest | None) -> list[Finding]:
    """verify: the record embedded in provenance must bind the bundle's library, and what the
    provenance says about that build must be what the record says (the graph the bundle is
    judged by is the record's graph, the advertised metadata and source are the record's)."""
    # the record's model only for a bundle whose evidence is one (start-up)
    from horon_bundle.model.record import parse_record  # noqa: PLC0415

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
    invocation = record.invocation
    pairs: list[tuple[str, object, object]] = [
        ("package", record.package, facts.package),
        ("version", record.version, facts.version),
        ("source revision", invocation.source_revision, facts.source_revision),
        ("source dirty flag", invocation.source_dirty, facts.source_dirty),
        ("Cargo.lock sha256", invocation.cargo_lock_sha256, facts.cargo_lock_sha256),
    ]
    for what, recorded, stated in pairs:
        if recorded != stated:
            findings.append(Finding(codes.EVIDENCE_MISMATCH,
                                    f"provenance.json: {what} {stated!r}, its artifact record "
                                    f"says {recorded!r}"))
    if facts.graph is None or facts.graph.to_json() != record.graph.to_json():
        findings.append(Finding(codes.EVIDENCE_MISMATCH,
                                "provenance.json: the recorded graph is not the graph of its "
                                "artifact record (the bundle is judged by the graph the library "
                                "was built with)"))
    if record.advertised is not None and (
            facts.advertised is None or not facts.advertised.same_metadata(record.advertised)):
        stated = facts.advertised.summary() if facts.advertised is not None else "nothing"
        findings.append(Finding(codes.EVIDENCE_MISMATCH,
                                f"provenance.json: advertised metadata {stated}, its artifact "
                                f"record says {record.advertised.summary()}"))
    return findings
