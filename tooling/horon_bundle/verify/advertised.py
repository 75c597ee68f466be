"""Claimed = advertised: what the library says about itself, recomputed where it can be.

The library's `.horon_abi` section is read from the bundle's own bytes (any target, nothing
loaded); that is the recomputed fact. The advertised metadata recorded at build time is a
claim: it is compared with the section when there is one, and where there is none the
verdict rests on the recorded claim alone, which the report says (`advertised_source`:
`section` or `recorded-only`) and a policy can refuse (`require-abi-section`). A recorded
claim that the metadata was read from the section (`observed_by` holds `static-section`) is
checked against the library: a section stripped after the build is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from horon_bundle.abi.section import OBSERVED_BY as SECTION_OBSERVER
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding
from horon_bundle.model.evidence import (
    ADVERTISED_FROM_SECTION,
    ADVERTISED_RECORDED_ONLY,
    Advertised,
)
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.provenance import BuildFacts
from horon_bundle.rules.release import advertised_findings
from horon_bundle.verify.report import VerifyReport


@dataclass(frozen=True, slots=True)
class SectionState:
    """What the library's static section said: metadata, absent (None), or refused."""

    advertised: Advertised | None
    findings: tuple[Finding, ...] = ()
    read: bool = True


def check_advertised(manifest: Manifest, facts: BuildFacts | None, section: SectionState,
                     report: VerifyReport) -> None:
    """Judge the advertised metadata from every source there is, and say which there was."""
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
    findings: list[Finding] = []
    if section.advertised is not None:
        report.advertised_source = ADVERTISED_FROM_SECTION
        sources.append((section.advertised, f"{manifest.library.path}'s .horon_abi section"))
        note = "source: section (read from the library's .horon_abi section)"
    elif recorded is not None:
        report.advertised_source = ADVERTISED_RECORDED_ONLY
        note = ("source: recorded-only (no .horon_abi section: the advertised metadata "
                f"recorded at build time ({observed}), not recomputed)")
        if SECTION_OBSERVER in recorded.observed_by:
            findings.append(Finding(
                codes.ABI_SECTION_MISSING,
                f"{manifest.library.path}: provenance.json records the advertised metadata as "
                "read from the library's .horon_abi section, but the library has no such "
                "section (stripped after the build?)"))
    else:
        report.skipped("features.advertised", "no .horon_abi section and no advertised metadata "
                                              "recorded at build time")
        return
    if recorded is not None:
        sources.append((recorded, f"the advertised metadata recorded in provenance.json "
                                  f"({observed})"))
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
