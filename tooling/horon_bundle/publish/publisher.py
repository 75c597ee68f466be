"""`publish` and `yank`: gate → preflight → upload every blob → commit every name → receipt.

Nothing is uploaded unless the whole release passed preflight (with `--upload-ahead`, an
oci:// destination receives the bytes into upload sessions meanwhile, but stores nothing
before then: `destinations.oci_ahead`). Uploads go in the order of
(id, version, target); every blob is stored and read back before any name is committed, so
an interruption during uploads leaves nothing visible, and one during commits leaves a
prefix of the plan visible. Running the same command again skips what is already there
(same bytes: "already published") and completes the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.reporter import Reporter
from horon_bundle.publish.destinations.connect import open_destination
from horon_bundle.publish.destinations.interface import (
    ABSENT,
    ALREADY_PUBLISHED,
    Destination,
    YankResult,
    parse_address,
)
from horon_bundle.publish.destinations.store_log import LOG_KEY_VARIABLE
from horon_bundle.publish.gate import Gate, read_gate
from horon_bundle.publish.preflight import PlannedItem, PublishRequest, preflight
from horon_bundle.publish.receipt import WOULD_PUBLISH, bundle_entry, receipt, write_receipt
from horon_bundle.publish.release import BundleKey, ReleaseItem

MAX_REASON = 500


@dataclass(slots=True, kw_only=True)
class PublishOutcome:
    gate: Gate
    destination: str | None = None
    plan: list[PlannedItem] = field(default_factory=list)
    receipt: dict[str, Any] | None = None
    receipt_path: Path | None = None
    marketplace: dict[str, Any] | None = None  # what the store's marketplace became
    log: dict[str, Any] | None = None  # what the store's transparency log became
    notes: list[str] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)  # e.g. publish.no-statement


def _open(gate: Gate, environ: Mapping[str, str], reporter: Reporter) -> Destination:
    assert gate.destination is not None
    address = parse_address(gate.destination)
    return open_destination(address, environ, reporter)


def publish(request: PublishRequest, environ: Mapping[str, str],
            reporter: Reporter) -> PublishOutcome:
    gate = read_gate(environ)
    outcome = PublishOutcome(gate=gate)
    if not gate.open:
        return outcome
    destination = _open(gate, environ, reporter)
    outcome.destination = destination.display
    if request.upload_ahead and not destination.uploads_ahead:
        outcome.notes.append(f"--upload-ahead: {destination.display} is written after the "
                             "preflight (only an oci:// destination takes bytes ahead)")
    try:
        reporter.step(f"checking the release in {request.dist_dir}")
        plan = preflight(request, destination, reporter, outcome.warnings)
        outcome.plan = plan
        if request.dry_run:
            outcome.receipt = receipt(destination.display, dry_run=True, bundles=[
                bundle_entry(p, WOULD_PUBLISH if p.state.status == ABSENT else ALREADY_PUBLISHED,
                             {}) for p in plan])
            return outcome
        entries = _upload_and_commit(plan, destination, reporter)
        outcome.log = _log(destination, [p.item for p in plan], [], reporter)
        if outcome.log is None and environ.get(LOG_KEY_VARIABLE):
            outcome.notes.append(f"{LOG_KEY_VARIABLE} is set, but {destination.display} keeps "
                                 "no transparency log (only a file:// store does)")
        outcome.marketplace = _refresh(destination, [p.item for p in plan], reporter)
    finally:
        destination.close()
    outcome.receipt = receipt(destination.display, dry_run=False, bundles=entries,
                              marketplace=outcome.marketplace, log=outcome.log)
    try:
        outcome.receipt_path = write_receipt(request.dist_dir, outcome.receipt)
    except OSError as exc:
        outcome.notes.append(f"the receipt could not be written into {request.dist_dir}: "
                             f"{exc.strerror}")
    return outcome


def _upload_and_commit(plan: list[PlannedItem], destination: Destination,
                       reporter: Reporter) -> list[dict[str, Any]]:
    pending = [p for p in plan if p.state.status == ABSENT]
    extras: dict[BundleKey, dict[str, str]] = {}
    committed = 0
    destination.begin_writing()
    try:
        for number, planned in enumerate(pending, 1):
            reporter.step(f"uploading {planned.item.label} ({number}/{len(pending)})")
            extras[planned.item.key] = destination.upload(planned.item)
        statuses = {p.item.key: ALREADY_PUBLISHED for p in plan}
        for planned in pending:
            status = destination.commit(planned.item)
            statuses[planned.item.key] = status
            committed += 1
            reporter.step(f"{status} {planned.item.label} -> {planned.location}")
    except Refused as exc:
        suffix = (f" ({committed} of {len(pending)} new bundles were published; running the "
                  "same command again completes the release)")
        raise Refused(Finding(f.code, f.message + suffix, f.hint)
                      for f in exc.findings) from None
    return [bundle_entry(p, statuses[p.item.key], extras.get(p.item.key, {})) for p in plan]


def _log(destination: Destination, items: list[ReleaseItem], yanks: list[YankResult],
         reporter: Reporter) -> dict[str, Any] | None:
    """Append what the run committed to the destination's transparency log (last: a kill
    before its checkpoint leaves the old one valid, and the same command completes it)."""
    try:
        log = destination.log_publications(items, yanks)
    except Refused as exc:
        suffix = (" (every bundle is published; the log was not extended: running the same "
                  "command again adds them)")
        raise Refused(Finding(f.code, f.message + suffix, f.hint)
                      for f in exc.findings) from None
    if log is not None and log["status"] != "not-kept":
        reporter.step(f"log {log['status']}: {len(log.get('added', []))} new leaves, "
                      f"{log.get('size', 0)} in all")
    return log


def _refresh(destination: Destination, items: list[ReleaseItem],
             reporter: Reporter) -> dict[str, Any] | None:
    """Rewrite what the destination derives from its entries, once they are all committed."""
    try:
        listing = destination.refresh_listing(items)
    except Refused as exc:
        suffix = (" (every bundle is published; the marketplace was not rewritten: running the "
                  "same command again writes it)")
        raise Refused(Finding(f.code, f.message + suffix, f.hint)
                      for f in exc.findings) from None
    if listing is not None:
        reporter.step(f"marketplace {listing['name']} {listing['status']} -> {listing['url']}")
    return listing


@dataclass(frozen=True, slots=True, kw_only=True)
class YankRequest:
    plugin_id: str
    version: str
    target: str | None
    reason: str


@dataclass(slots=True, kw_only=True)
class YankOutcome:
    gate: Gate
    destination: str | None = None
    results: list[YankResult] = field(default_factory=list)
    marketplace: dict[str, Any] | None = None
    log: dict[str, Any] | None = None


def reason_problem(reason: str) -> str | None:
    if not reason.strip():
        return "the reason is empty"
    if len(reason) > MAX_REASON:
        return f"the reason has {len(reason)} characters, at most {MAX_REASON}"
    if any(not char.isprintable() for char in reason):
        return "the reason holds a control or format character"
    return None


def yank(request: YankRequest, environ: Mapping[str, str], reporter: Reporter) -> YankOutcome:
    gate = read_gate(environ)
    outcome = YankOutcome(gate=gate)
    if not gate.open:
        return outcome
    problem = reason_problem(request.reason)
    if problem:
        raise Refused.one(codes.YANK_REASON, f"--reason: {problem}")
    for value, valid in ((request.plugin_id, identifiers.PLUGIN_ID.fullmatch(request.plugin_id)),
                         (request.version, identifiers.SEMVER.fullmatch(request.version)),
                         (request.target or "", request.target is None
                          or identifiers.target_problem(request.target) is None)):
        if not valid:
            raise Refused.one(codes.YANK_NOT_PUBLISHED, f"{value[:80]!r} is not a valid plugin "
                                                        "id, version or target")
    destination = _open(gate, environ, reporter)
    outcome.destination = destination.display
    try:
        targets = ([request.target] if request.target
                   else destination.targets_of(request.plugin_id, request.version))
        if not targets:
            raise Refused.one(codes.YANK_NOT_PUBLISHED,
                              f"{request.plugin_id} {request.version}: no target published in "
                              f"{destination.display}")
        for target in targets:
            reporter.step(f"yanking {request.plugin_id} {request.version} {target}")
            outcome.results.append(destination.yank(request.plugin_id, request.version, target,
                                                    request.reason))
        outcome.log = _log(destination, [], outcome.results, reporter)
        outcome.marketplace = _refresh(destination, [], reporter)
    finally:
        destination.close()
    return outcome
