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

from horon_bundle.abi.section import OBSERVED_BY as SECTION_OBSERVER
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding
from horon_bundle.model.evidence import (
    ADVERTISED_FROM_SECTION,
    ADVERTISED_RECORDED_ONLY,
    Advertised,
)
from horon_bundle.rules.features_and_qa import advertised_findings
from horon_bundle.verify.check_table import Judged, Skipped, Verdict
from horon_bundle.verify.native_context import NativeContext


def check_advertised(ctx: NativeContext) -> Verdict | None:
    """Judge the advertised metadata from every source there is, and say which there was
    (with or without a provenance statement that could be read)."""
    manifest, section, report = ctx.manifest, ctx.section, ctx.report
    if manifest is None or section is None:
        return None
    facts = ctx.provenance.facts if ctx.provenance is not None else None
    recorded = facts.advertised if facts is not None else None
    if section.findings:
        return Judged(section.findings, note="the library's .horon_abi section")
    if not section.read:
        return Skipped("the library is missing")
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
        return Skipped("no .horon_abi section and no advertised metadata recorded at build "
                       "time")
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
    return Judged(findings, note=note)
