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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value
from horon_bundle.core.inputs import read_input
from horon_bundle.core.tomlread import read_toml
from horon_bundle.model.checks import Check
from horon_bundle.model.evidence import EVIDENCE_KINDS
from horon_bundle.model.qa import is_pattern
from horon_bundle.model.signer_identity import SignerIdentity, signer_identity
from horon_bundle.rules.policy_requirements import (
    AbiSectionRequired,
    BuilderIdIn,
    ChannelIs,
    CleanSource,
    EvidenceIs,
    MinAbiMinor,
    QaFree,
    Requirement,
    SignatureRequired,
    SignedBy,
    SourceRefMatches,
    SourceRepositoryIs,
    Subject,
)

POLICY_SCHEMA = 1
MAX_POLICY_BYTES = 1 << 20
@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    source: str
    requirements: tuple[Requirement, ...]
    signer: SignerIdentity | None
    require_signature: bool
    qa_patterns: tuple[str, ...] = ()  # added to every QA judgement (graph.qa-free, qa-free)

    def checks(self, subject: Subject) -> list[Check]:
        return [r.check(subject, self.source) for r in self.requirements]


def load_policy(path: Path) -> Policy:
    data = read_input(path, limit=MAX_POLICY_BYTES, what="--policy")
    assert data is not None
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
    qa_patterns = _qa_patterns(reader, reader.strings(optional("qa-patterns", list),
                                                      "qa-patterns"))
    if optional("qa-free", bool):
        requirements.append(QaFree(qa_patterns))
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
    if optional("require-abi-section", bool):
        requirements.append(AbiSectionRequired())
    require_signature = bool(optional("require-signature", bool))
    signer = _signer(reader, optional("signer", dict), source)
    reader.finish(document, "")
    if require_signature:
        requirements.append(SignatureRequired())
    if signer is not None:
        requirements.append(SignedBy(signer))
    if not findings and not requirements and not qa_patterns:
        bad("", "the policy requires nothing; name at least one requirement")
    findings.raise_if_any()
    return Policy(source=source, requirements=tuple(requirements), signer=signer,
                  require_signature=require_signature, qa_patterns=qa_patterns)


def _qa_patterns(reader: FieldReader, patterns: list[str] | None) -> tuple[str, ...]:
    """`qa-patterns`: extra QA globs, printable ASCII like a declaration's `[qa] providers`."""
    if patterns is None:
        return ()
    if not patterns:
        reader.report(codes.POLICY_INVALID, "qa-patterns", "an empty list adds nothing; "
                                                           "remove the key or name a pattern")
    for index, pattern in enumerate(patterns):
        if not is_pattern(pattern):
            reader.report(codes.POLICY_INVALID, f"qa-patterns[{index}]",
                          f"{describe_value(pattern)} is not a printable ASCII glob")
    return tuple(patterns)


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
