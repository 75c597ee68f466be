"""The artifact record's binding: one finding per fact in which a library differs from it.

A record binds a library built elsewhere by sha256, size, target, profile and feature set
(plus the library's file name and the plugin id); the build's `--prebuilt` step and `verify`
of a record-evidence bundle both judge with this one rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings
from horon_bundle.rules.features_and_qa import plugin_features

if TYPE_CHECKING:  # annotations: a bundle with no record never loads its model (start-up)
    from horon_bundle.core.hashing import Digest
    from horon_bundle.model.record import ArtifactRecord


def binding_findings(record: ArtifactRecord, *, library: Digest, library_name: str,
                     target: str, profile: str, claim: tuple[str, ...], plugin_id: str,
                     ) -> list[Finding]:
    """One finding per differing fact: sha256, size, target, profile, features, identity."""
    findings = Findings()

    def differ(what: str, recorded: object, actual: object) -> None:
        if recorded != actual:
            findings.add(codes.EVIDENCE_MISMATCH,
                         f"artifact record {what} {recorded!r} != {actual!r}")

    differ("sha256", record.sha256, library.sha256)
    differ("size", record.size, library.size)
    differ("target", record.target, target)
    differ("profile", record.profile, profile)
    differ("feature claim", list(record.claim), list(claim))
    compiled = plugin_features(record.graph)
    if record.features != compiled:
        findings.add(codes.EVIDENCE_MISMATCH,
                     f"artifact record features {list(record.features)} != "
                     f"{list(compiled)}, what its graph compiled")
    differ("library name", record.library_name, library_name)
    differ("plugin id", record.plugin_id, plugin_id)
    return list(findings)


