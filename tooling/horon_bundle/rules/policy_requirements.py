"""The audit policy's requirements: one small object per key, each judging one fact alone.

`rules/policy.py` reads the policy file into these; verify's audit step judges a bundle's
facts (`Subject`) with each and reports one `policy.<key>` check per requirement.
"""


from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.checks import FAIL, PASS, SKIP, Check
from horon_bundle.model.evidence import ADVERTISED_FROM_SECTION
from horon_bundle.model.harness.statement import HarnessFacts
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.provenance import BuildFacts
from horon_bundle.model.qa import effective_patterns
from horon_bundle.model.signer_identity import CertifiedSource, SignerIdentity
from horon_bundle.rules.features_and_qa import graph_findings

_GITHUB_WORKFLOW = re.compile(r"(?P<repository>https://[^@]+?)/\.github/workflows/"
                              r"(?P<workflow>[^@]+)@(?P<ref>.+)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    """What the policy judges: the verified bundle's facts and its signature's outcome."""

    manifest: Manifest | None
    facts: BuildFacts | HarnessFacts | None
    signature_present: bool
    signature_verified: bool
    certified: CertifiedSource | None
    advertised_source: str | None = None  # verify's `advertised_source`
    kind: BundleKind = BundleKind.NATIVE


def _not_native(subject: Subject, what: str) -> Judgement | None:
    """Unmet for a harness bundle, which has no `what` to judge."""
    if subject.kind == BundleKind.HARNESS:
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
    return _GITHUB_WORKFLOW.fullmatch(builder_id)


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
    """No QA provider, judged with the built-in patterns, the bundle's and the policy's."""

    patterns: tuple[str, ...] = ()
    key = "qa-free"

    def judge(self, subject: Subject) -> Judgement:
        if (harness := _not_native(subject, "resolved feature graph")) is not None:
            return harness
        if not isinstance(subject.facts, BuildFacts):
            return cannot_judge("no readable provenance")
        graph = subject.facts.graph
        if graph is None:
            return unmet("the bundle records no resolved feature graph to judge")
        patterns = effective_patterns(subject.facts.qa_patterns, self.patterns)
        providers, _ = graph_findings(graph, claim=subject.facts.claim, channel="release",
                                      patterns=patterns)
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
class AbiSectionRequired(Requirement):
    """The advertised metadata was recomputed from the library's section, not taken from
    what the build recorded."""

    key = "require-abi-section"

    def judge(self, subject: Subject) -> Judgement:
        if (harness := _not_native(subject, "library and no .horon_abi section")) is not None:
            return harness
        if subject.manifest is None:
            return cannot_judge("plugin.json was refused")
        if subject.advertised_source == ADVERTISED_FROM_SECTION:
            return met("the library's .horon_abi section was read")
        if subject.advertised_source is None:
            return unmet("the library's advertised metadata could not be read at all")
        return unmet(f"the library has no .horon_abi section: its advertised metadata is "
                     f"only what the build recorded ({subject.advertised_source})")


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


