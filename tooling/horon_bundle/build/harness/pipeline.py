"""`horon-bundle build` of a harness workspace: one plugin, or every plugin a marketplace lists.

One public entry, `build_harness`, taking a `HarnessBuildRequest`. Every plugin is read and
judged before anything is written; then each is zipped, verified and moved into place with its
ref, and a marketplace build writes its index pinning each plugin's version to its digest.
"""

from __future__ import annotations

import os
from pathlib import Path

from horon_bundle.build.archive import ZIP_EPOCH_MIN, clamp_epoch
from horon_bundle.build.harness.files import plugin_directory, source_state
from horon_bundle.build.harness.plugin import PlannedPlugin, SourceInfo, plan, write
from horon_bundle.build.harness.request import HarnessBuildRequest, HarnessBuildResult
from horon_bundle.build.release_statement import write_build_statement
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.files import write_atomic, write_failed
from horon_bundle.core.inputs import read_input
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.model.harness.layout import MARKETPLACE_PATH, MAX_JSON_BYTES, manifest_paths
from horon_bundle.model.harness.marketplace import Marketplace, index_bytes, parse_marketplace
from horon_bundle.model.release_statement import run_identity

INDEX_SUFFIX = ".index.json"


def build_harness(request: HarnessBuildRequest,
                  reporter: Reporter | None = None) -> HarnessBuildResult:
    reporter = reporter or SilentReporter()
    request = _resolved(request)
    root = request.workspace
    planned, skipped, warnings, marketplace = _plan_all(root, request, reporter)
    try:
        source = _source_info(root, request)
        if len({p.zip_name for p in planned}) != len(planned):
            raise Refused.one(codes.MARKETPLACE_INVALID,
                              "two listed plugins have the same name and version")
        built = []
        for item in planned:
            reporter.step(f"bundling {item.catalogue.name} {item.catalogue.version}")
            built.append(write(item, request, source))
    finally:
        for item in planned:
            item.close()
    index = None
    if marketplace is not None:
        index = request.out / f"{marketplace}{INDEX_SUFFIX}"
        try:
            request.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_failed(request.out, exc) from None
        write_atomic(index, index_bytes(marketplace, [
            {"name": b.name, "version": b.version, "zip": b.zip.name, "sha256": b.sha256}
            for b in built], [{"name": name, "source": why} for name, why in skipped]))
    notes = [] if source.revision else ["the workspace is not a git checkout: no source "
                                        "revision is recorded"]
    notes += [note for item in built for note in item.notes]
    run = run_identity(os.environ if request.environ is None else request.environ,
                       builder=request.builder, source_revision=source.revision,
                       source_dirty=source.dirty)
    statement = None
    if built:
        statement, removed = write_build_statement(request.out, {b.zip.name: b.sha256
                                                                 for b in built}, run)
        notes += removed
    return HarnessBuildResult(built=tuple(built), warnings=tuple(warnings),
                              skipped=tuple(name for name, _ in skipped), index=index,
                              notes=tuple(notes), statement=statement)


def _resolved(request: HarnessBuildRequest) -> HarnessBuildRequest:
    from dataclasses import replace  # noqa: PLC0415 - only here

    try:  # the user's own paths: links in them are theirs, but a loop is refused, not raised
        return replace(request, workspace=request.workspace.resolve(),
                       out=request.out.resolve())
    except (OSError, RuntimeError) as exc:
        raise Refused.one(codes.INPUT_UNREADABLE,
                          f"{request.workspace} or --out {request.out}: {exc}") from None


def _plan_all(root: Path, request: HarnessBuildRequest, reporter: Reporter,
              ) -> tuple[list[PlannedPlugin], list[tuple[str, str]], list[Finding], str | None]:
    marketplace_file = root / MARKETPLACE_PATH
    if not marketplace_file.is_file():
        reporter.step(f"reading the harness plugin at {root.name}")
        item = plan(root, request)
        return [item], [], list(item.warnings), None
    data = read_input(marketplace_file, limit=MAX_JSON_BYTES, what="marketplace",
                      follow_symlinks=False)
    assert data is not None
    market = parse_marketplace(data, source=MARKETPLACE_PATH)
    reporter.step(f"reading marketplace {market.name}: {len(market.plugins)} plugin(s)")
    planned: list[PlannedPlugin] = []
    skipped: list[tuple[str, str]] = []
    warnings: list[Finding] = []
    refusals = Findings()
    try:
        _plan_listed(root, request, market, planned=planned, skipped=skipped,
                     warnings=warnings, refusals=refusals)
    except BaseException:
        for item in planned:
            item.close()
        raise
    if refusals:
        for item in planned:
            item.close()
    refusals.raise_if_any()
    return planned, skipped, warnings, market.name


def _plan_listed(root: Path, request: HarnessBuildRequest, market: Marketplace, *,
                 planned: list[PlannedPlugin], skipped: list[tuple[str, str]],
                 warnings: list[Finding], refusals: Findings) -> None:
    for listed in market.plugins:
        if listed.local is None:
            skipped.append((listed.name, listed.remote or "remote"))
            warnings.append(Finding(codes.MARKETPLACE_SKIPPED,
                                    f"{MARKETPLACE_PATH}: {listed.name}: {listed.remote} "
                                    "source, cannot be built offline; skipped"))
            continue
        plugin_root = plugin_directory(root, listed.local)
        if plugin_root is None:
            refusals.add(codes.MARKETPLACE_INVALID,
                         f"{MARKETPLACE_PATH}: {listed.name}: ./{listed.local} is not a "
                         "directory of the repository")
            continue
        try:
            item = plan(plugin_root, request, entry=listed.entry, marketplace=market.name)
        except Refused as exc:
            refusals.extend(exc.findings)
            continue
        planned.append(item)
        warnings.extend(Finding(w.code, f"{listed.name}: {w.message}") for w in item.warnings)
    listed_roots = {p.root for p in planned}
    if root not in listed_roots and any((root / p).is_file() for p in manifest_paths()):
        try:
            item = plan(root, request)
            planned.append(item)
            warnings.extend(item.warnings)
        except Refused as exc:
            refusals.extend(exc.findings)


def _source_info(root: Path, request: HarnessBuildRequest) -> SourceInfo:
    revision, dirty, commit_time = source_state(root, (request.out,))
    environ = os.environ if request.environ is None else request.environ
    if request.epoch is not None:
        epoch = clamp_epoch(request.epoch)
    elif (raw := environ.get("SOURCE_DATE_EPOCH")) is not None:
        if not raw.isdigit():
            raise Refused.one(codes.ENVIRONMENT_VALUE,
                              f"SOURCE_DATE_EPOCH={raw!r} is not a non-negative integer")
        epoch = clamp_epoch(int(raw))
    else:
        epoch = clamp_epoch(commit_time) if commit_time is not None else ZIP_EPOCH_MIN
    return SourceInfo(revision=revision, dirty=dirty, epoch=epoch)
