"""The auditor's policy (`--policy FILE`, TOML): small requirement objects, each judged alone.

Read strictly (unknown keys refused, `schema = 1`); a policy that requires nothing is
refused rather than accepted as "anything goes". Every key present becomes one requirement
and one named check `policy.<key>` in the verify report: met (pass), unmet (`policy.unmet`,
the message names the key), or skipped when the bundle itself was refused before the fact
could be read. docs/auditing.md lists the keys.

A harness bundle is judged on the facts it has (its provenance's builder id, source revision
and dirty flag; its signature); a key it cannot have (channel, ABI, evidence, a feature graph)
is unmet, never skipped: a policy asking for a fact the bundle cannot prove is not satisfied.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value
from horon_bundle.core.tomlread import read_toml
from horon_bundle.model.checks import FAIL, PASS, SKIP, Check
from horon_bundle.model.evidence import EVIDENCE_KINDS
from horon_bundle.model.harness.statement import HarnessFacts
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.provenance import BuildFacts
from horon_bundle.model.signer import CertifiedSource, SignerIdentity, signer_identity
from horon_bundle.rules.release import graph_findings

POLICY_SCHEMA = 1
MAX_POLICY_BYTES = 1 << 20
NATIVE, HARNESS = "native", "harness"
_GITHUB_WORKFLOW = re.compile(r"^(?P<repository>https://[^@]+?)/\.github/workflows/"
                              r"(?P<workflow>[^@]+)@(?P<ref>.+)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    """What the policy judges: the verified bundle's facts and its signature's outcome."""

    manifest: Manifest | None
    facts: BuildFacts | HarnessFacts | None
    signature_present: bool
    signature_verified: bool
    certified: CertifiedSource | None
    kind: str = NATIVE  # or HARNESS


def _not_native(subject: Subject, what: str) -> Judgement | None:
    """Unmet for a harness bundle, which has no `what` to judge."""
    if subject.kind == HARNESS:
        return unmet(f"a harness bundle has no {what}")
    return None


@dataclass(frozen=True, slots=True)
class Judgement:
    status: str
    note: str = ""
    problem: str = ""


def met(note: str = "") -> Judgement:
    return Judgement(PASS, note)


def unmet(problem: str) -> Judgement:
    return Judgement(FAIL, problem=problem)


def cannot_judge(why: str) -> Judgement:
    return Judgement(SKIP, why)


class Requirement(ABC):
    """One policy key."""

    key: str

    @abstractmethod
    def judge(self, subject: Subject) -> Judgement: ...

    def check(self, subject: Subject, source: str) -> Check:
        judgement = self.judge(subject)
        findings = []
        if judgement.status == FAIL:
            findings = [Finding(codes.POLICY_UNMET, f"{source}: {self.key}: {judgement.problem}")]
        return Check(f"policy.{self.key}", judgement.status, findings, judgement.note)


def glob_matches(pattern: str, value: str) -> bool:
    """`*` matches any run of characters (also `/`); every other character is literal."""
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, value) is not None


@dataclass(frozen=True, slots=True)
class ChannelIs(Requirement):
    channel: str
    key = "channel"

    def judge(self, subject: Subject) -> Judgement:
        if (harness := _not_native(subject, "channel")) is not None:
            return harness
        if subject.manifest is None:
            return cannot_judge("plugin.json was refused")
        if subject.manifest.channel != self.channel:
            return unmet(f"channel {subject.manifest.channel!r}, required {self.channel!r}")
        return met(self.channel)


@dataclass(frozen=True, slots=True)
class BuilderIdIn(Requirement):
    patterns: tuple[str, ...]
    key = "builder-ids"

    def judge(self, subject: Subject) -> Judgement:
        if subject.facts is None:
            return cannot_judge("no readable provenance")
        builder = subject.facts.builder_id
        if not any(glob_matches(p, builder) for p in self.patterns):
            return unmet(f"builder id {builder!r} is not one of {list(self.patterns)}")
        return met(builder)


def _workflow(builder_id: str) -> re.Match[str] | None:
    return _GITHUB_WORKFLOW.match(builder_id)


@dataclass(frozen=True, slots=True)
class SourceRepositoryIs(Requirement):
    """The builder id names a workflow of this repository; a verified GitHub signing
    certificate, when there is one, must say the same (and its commit must be the
    provenance's source revision)."""

    repository: str
    key = "source-repository"

    def judge(self, subject: Subject) -> Judgement:
        if subject.facts is None:
            return cannot_judge("no readable provenance")
        builder = subject.facts.builder_id
        match = _workflow(builder)
        if match is None:
            return unmet(f"builder id {builder!r} names no GitHub workflow, so no repository")
        if match["repository"] != self.repository:
            return unmet(f"built by a workflow of {match['repository']}, required "
                         f"{self.repository}")
        certified = subject.certified
        if certified is None or certified.repository_uri is None:
            return met(f"{self.repository} (from the builder id only: self-asserted unless "
                       "the signature is required)")
        if certified.repository_uri != self.repository:
            return unmet(f"the signing certificate names source repository "
                         f"{certified.repository_uri}, required {self.repository}")
        revision = subject.facts.source_revision
        if certified.revision and revision and certified.revision != revision:
            return unmet(f"the signing certificate names commit {certified.revision}, the "
                         f"provenance records source revision {revision}")
        return met(f"{self.repository} (attested by the signing certificate)")


@dataclass(frozen=True, slots=True)
class SourceRefMatches(Requirement):
    pattern: str
    key = "source-ref"

    def judge(self, subject: Subject) -> Judgement:
        if subject.facts is None:
            return cannot_judge("no readable provenance")
        match = _workflow(subject.facts.builder_id)
        if match is None:
            return unmet(f"builder id {subject.facts.builder_id!r} names no GitHub workflow "
                         "ref")
        if not glob_matches(self.pattern, match["ref"]):
            return unmet(f"built from ref {match['ref']!r}, required {self.pattern!r}")
        certified = subject.certified
        if certified is None or certified.ref is None:
            return met(f"{match['ref']} (from the builder id only)")
        if not glob_matches(self.pattern, certified.ref):
            return unmet(f"the signing certificate names ref {certified.ref!r}, required "
                         f"{self.pattern!r}")
        return met(f"{certified.ref} (attested by the signing certificate)")


@dataclass(frozen=True, slots=True)
class QaFree(Requirement):
    key = "qa-free"

    def judge(self, subject: Subject) -> Judgement:
        if (harness := _not_native(subject, "resolved feature graph")) is not None:
            return harness
        if not isinstance(subject.facts, BuildFacts):
            return cannot_judge("no readable provenance")
        graph = subject.facts.graph
        if graph is None:
            return unmet("the bundle records no resolved feature graph to judge")
        providers, _ = graph_findings(graph, claim=subject.facts.claim, channel="release",
                                      patterns=subject.facts.qa_patterns)
        if providers:
            chains = "; ".join(p.chain for p in providers)
            return unmet(f"{len(providers)} QA provider(s) in the graph: {chains}")
        return met(f"{len(graph.packages)} packages, no QA provider")


@dataclass(frozen=True, slots=True)
class CleanSource(Requirement):
    """Built from a committed tree: a recorded revision and a clean git status (taken by the
    build before it ran cargo, so the build's own outputs never count)."""

    key = "clean-source"

    def judge(self, subject: Subject) -> Judgement:
        if subject.facts is None:
            return cannot_judge("no readable provenance")
        revision = subject.facts.source_revision
        if revision is None:
            return unmet("the provenance records no source revision (built outside git, or "
                         "before the first commit)")
        if subject.facts.source_dirty is not False:
            return unmet(f"built from a dirty tree at {revision}: the source had uncommitted "
                         "changes")
        return met(revision)


@dataclass(frozen=True, slots=True)
class EvidenceIs(Requirement):
    evidence: str
    key = "evidence"

    def judge(self, subject: Subject) -> Judgement:
        if (harness := _not_native(subject, "evidence")) is not None:
            return harness
        if not isinstance(subject.facts, BuildFacts):
            return cannot_judge("no readable provenance")
        if subject.facts.evidence != self.evidence:
            return unmet(f"evidence is {subject.facts.evidence!r}, required {self.evidence!r}")
        return met(self.evidence)


@dataclass(frozen=True, slots=True)
class MinAbiMinor(Requirement):
    minimum: int
    key = "min-abi-minor"

    def judge(self, subject: Subject) -> Judgement:
        if (harness := _not_native(subject, "ABI")) is not None:
            return harness
        if subject.manifest is None:
            return cannot_judge("plugin.json was refused")
        minor = subject.manifest.abi_minor
        if minor < self.minimum:
            return unmet(f"ABI 1.{minor}, required at least 1.{self.minimum}")
        return met(f"ABI 1.{minor}")


@dataclass(frozen=True, slots=True)
class SignatureRequired(Requirement):
    key = "require-signature"

    def judge(self, subject: Subject) -> Judgement:
        if not subject.signature_verified:
            return unmet("no valid signature from the required signer (see signature.*)")
        return met()


@dataclass(frozen=True, slots=True)
class SignedBy(Requirement):
    identity: SignerIdentity
    key = "signer"

    def judge(self, subject: Subject) -> Judgement:
        if not subject.signature_present:
            return cannot_judge("no signature to judge (not required)")
        if not subject.signature_verified:
            return unmet(f"the signature is not a valid one from {self.identity.describe()}")
        return met(self.identity.describe())


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    source: str
    requirements: tuple[Requirement, ...]
    signer: SignerIdentity | None
    require_signature: bool

    def checks(self, subject: Subject) -> list[Check]:
        return [r.check(subject, self.source) for r in self.requirements]


def load_policy(path: Path) -> Policy:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"--policy {path}: {exc.strerror}") from None
    return parse_policy(data, path.name)


def parse_policy(data: bytes, source: str) -> Policy:
    document = read_toml(data, source=source, code=codes.POLICY_INVALID,
                         max_bytes=MAX_POLICY_BYTES)
    findings = Findings()
    reader = FieldReader(source, findings, codes.POLICY_INVALID, codes.POLICY_INVALID,
                         codes.POLICY_INVALID, "key")
    schema = reader.take(document, "schema", int, "")
    if schema is not None and schema != POLICY_SCHEMA:
        reader.report(codes.POLICY_INVALID, "schema", f"{schema}, this toolchain reads "
                                                      f"{POLICY_SCHEMA}")
    requirements: list[Requirement] = []

    def optional(key: str, kind: type[Any]) -> Any:
        return reader.take_optional(document, key, kind, "", None)

    def bad(key: str, message: str) -> None:
        reader.report(codes.POLICY_INVALID, key, message)

    if (channel := optional("channel", str)) is not None:
        if channel in ("release", "qa"):
            requirements.append(ChannelIs(channel))
        else:
            bad("channel", f"{describe_value(channel)}: expected 'release' or 'qa'")
    builders = reader.strings(optional("builder-ids", list), "builder-ids")
    if builders is not None:
        if not builders or not all(builders):
            bad("builder-ids", "list at least one non-empty builder id (`*` is a wildcard)")
        else:
            requirements.append(BuilderIdIn(tuple(builders)))
    if (repository := optional("source-repository", str)) is not None:
        if repository.startswith("https://") and not repository.endswith("/") \
                and "@" not in repository:
            requirements.append(SourceRepositoryIs(repository))
        else:
            bad("source-repository", f"{describe_value(repository)}: expected a repository "
                                     "URL such as https://github.com/owner/name")
    if (ref := optional("source-ref", str)) is not None:
        if ref.startswith("refs/"):
            requirements.append(SourceRefMatches(ref))
        else:
            bad("source-ref", f"{describe_value(ref)}: expected a full ref such as "
                              "refs/tags/v1.2.0 (`*` is a wildcard)")
    if optional("qa-free", bool):
        requirements.append(QaFree())
    if optional("clean-source", bool):
        requirements.append(CleanSource())
    if (evidence := optional("evidence", str)) is not None:
        if evidence in EVIDENCE_KINDS:
            requirements.append(EvidenceIs(evidence))
        else:
            bad("evidence", f"{describe_value(evidence)}: expected one of {EVIDENCE_KINDS}")
    if (minimum := optional("min-abi-minor", int)) is not None:
        if 0 <= minimum <= 0xFFFF:
            requirements.append(MinAbiMinor(minimum))
        else:
            bad("min-abi-minor", f"{minimum}: expected 0 … 65535")
    require_signature = bool(optional("require-signature", bool))
    signer = _signer(reader, optional("signer", dict), source)
    reader.finish(document, "")
    if require_signature:
        requirements.append(SignatureRequired())
    if signer is not None:
        requirements.append(SignedBy(signer))
    if not findings and not requirements:
        bad("", "the policy requires nothing; name at least one requirement")
    findings.raise_if_any()
    return Policy(source=source, requirements=tuple(requirements), signer=signer,
                  require_signature=require_signature)


def _signer(reader: FieldReader, table: dict[str, Any] | None,
            source: str) -> SignerIdentity | None:
    if table is None:
        return None
    values = {key: reader.take_optional(table, key, str, "signer", None)
              for key in ("identity", "issuer", "github-repository", "github-workflow",
                          "github-ref")}
    reader.finish(table, "signer")
    try:
        identity = signer_identity(
            identity=values["identity"], issuer=values["issuer"],
            github_repository=values["github-repository"],
            github_workflow=values["github-workflow"], github_ref=values["github-ref"],
            where=f"{source}: [signer]")
    except Refused as exc:
        for finding in exc.findings:
            reader.findings.add(codes.POLICY_INVALID, finding.message)
        return None
    if identity is None:
        reader.report(codes.POLICY_INVALID, "signer", "names no signer: give identity and "
                                                      "issuer, or github-repository")
    return identity
