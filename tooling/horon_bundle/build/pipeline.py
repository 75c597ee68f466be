"""`horon-bundle build`: declaration → cargo → graph → gates → evidence → bundle → archive.

One public entry, `build`, taking a `BuildRequest` and returning one `BuildResult` per
target. Every gate runs before anything is written under the output directory.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import horon_bundle
from horon_bundle.build.ahead import PROBES, start_ahead
from horon_bundle.build.builder_identity import builder_id
from horon_bundle.build.bundle import package_bundle
from horon_bundle.build.compiled import CompiledLibrary, LibraryRequest
from horon_bundle.build.library import (
    CargoStep,
    Observed,
    finish_compiled,
    observe_library,
    run_declared_cargo,
    scratch_directory,
)
from horon_bundle.build.output import output_session
from horon_bundle.build.overlap import SerialReporter, overlapped
from horon_bundle.build.places import resolve_places
from horon_bundle.build.prebuilt import library_from_record
from horon_bundle.build.release_statement import write_build_statement
from horon_bundle.build.request import CHANNELS, BuildRequest, BuildResult
from horon_bundle.build.shared_resolve import SharedResolve
from horon_bundle.build.source_facts import (
    SourceFacts,
    dirty_warnings,
    source_date_epoch,
    source_facts,
)
from horon_bundle.cargo.metadata import Metadata
from horon_bundle.cargo.toolchain import Toolchain, probe_toolchain, require_targets
from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.files import write_atomic, write_failed
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.model.declaration import (
    DECLARATION_NAME,
    Declaration,
    PluginDeclaration,
    load_declaration,
)
from horon_bundle.model.release_statement import run_identity
from horon_bundle.model.sidefiles import BUILD_RECORD_FORMAT, BUILD_RECORD_SUFFIX, beside

Made = tuple[datetime.datetime, CargoStep, Future[Observed]]  # a cargo step, its probe started


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildContext:
    """What every target of one run shares."""

    request: BuildRequest
    declaration: Declaration
    plugin: PluginDeclaration
    out: Path
    target_dir: Path | None  # None: cargo's own
    scratch: Path
    toolchain: Toolchain
    facts: SourceFacts
    epoch: int
    epoch_origin: str
    reporter: Reporter
    environ: dict[str, str]
    signed_record: str | None  # the record's digest, checked against its signature


def select_targets(plugin: PluginDeclaration, targets: tuple[str, ...], all_targets: bool,
                   host: str) -> list[str]:
    if all_targets:
        return list(plugin.targets)
    if targets:
        for target in targets:
            if target not in plugin.targets:
                raise Refused.one(codes.DECLARATION_TARGET,
                                  f"target {target} is not declared for plugin {plugin.id} "
                                  f"(declared: {', '.join(plugin.targets)})")
        return list(targets)
    if host not in plugin.targets:
        raise Refused.one(codes.DECLARATION_TARGET,
                          f"the host target {host} is not declared for plugin {plugin.id}; "
                          f"pass --target (declared: {', '.join(plugin.targets)})")
    return [host]


def build(request: BuildRequest, reporter: Reporter | None = None) -> list[BuildResult]:
    reporter = reporter or SilentReporter()
    start_ahead("probes", PROBES)  # the containment, while rustc and cargo run
    environ = dict(os.environ if request.environ is None else request.environ)
    if request.channel not in CHANNELS:
        raise Refused.one(codes.DECLARATION_VALUE,
                          f"--channel {request.channel!r}: expected release or qa")
    places = resolve_places(workspace=request.workspace, out=request.out,
                            target_dir=request.target_dir)
    workspace, out, target_dir = places.workspace, places.out, places.target_dir
    declaration = load_declaration(workspace)
    plugins = _chosen_plugins(request, declaration)
    if places.found_above:
        reporter.note(f"using the plugin workspace {workspace}")
    if request.prebuilt is not None and request.record is None:
        raise Refused.one(codes.EVIDENCE_MISSING,
                          f"--prebuilt {request.prebuilt.name} has no artifact record: nothing "
                          "binds it to the declared build")
    signed_record = None
    if request.record_signer is not None:
        if request.record is None or request.prebuilt is None:
            raise Refused.one(codes.SIGNATURE_OPTIONS,
                              "--require-signed-record needs --prebuilt LIB --record REC")
        from horon_bundle.verify.signature import require_signature  # noqa: PLC0415 - rare

        signed_record = require_signature(request.record, request.record_signer).sha256
    toolchain = probe_toolchain(workspace, env=environ)
    work = [(plugin, select_targets(plugin, request.targets, request.all_targets,
                                    toolchain.host)) for plugin in plugins]
    if not request.targets and not request.all_targets:
        reporter.note(f"building the host target {toolchain.host} (declared)")
    for plugin, _ in work:
        _require_declared_files(workspace, plugin)
    if request.prebuilt is None:
        require_targets(workspace, sorted({t for _, targets in work for t in targets}),
                        env=environ, toolchain=toolchain)
    facts = source_facts(workspace)
    warnings = dirty_warnings(facts)
    epoch, epoch_origin = ((request.epoch, "requested") if request.epoch is not None
                           else source_date_epoch(facts, environ))
    items = [(plugin, target) for plugin, targets in work for target in targets]
    several = len(items) > 1 and request.prebuilt is None
    if several:  # the worker thread reports too
        reporter = SerialReporter(reporter)
    with output_session(out, reporter), scratch_directory(out) as scratch_name:
        contexts = {plugin.id: BuildContext(
            request=request, declaration=declaration, plugin=plugin, out=out,
            target_dir=target_dir, scratch=Path(scratch_name), toolchain=toolchain,
            facts=facts, epoch=epoch, epoch_origin=epoch_origin, reporter=reporter,
            environ=environ, signed_record=signed_record) for plugin, _ in work}
        if several:
            built = _build_overlapped(contexts, items)
        else:
            built = [_build_target(contexts[plugin.id], target) for plugin, target in items]
        results = [dataclasses.replace(result, warnings=(*warnings, *result.warnings))
                   for result in built]
        run = run_identity(environ, builder=request.builder, source_revision=facts.revision,
                           source_dirty=facts.dirty)
        statement, removed = write_build_statement(
            out, {r.archive.name: r.archive_sha256 for r in results}, run)
    return [dataclasses.replace(r, statement=statement,
                                notes=(*r.notes, *(removed if i == 0 else ())))
            for i, r in enumerate(results)]


def _chosen_plugins(request: BuildRequest,
                    declaration: Declaration) -> tuple[PluginDeclaration, ...]:
    """`--plugin ID`, the only one declared, or with `--all-plugins` every one, in declared
    order: one run shares the toolchain probe, the source facts and cargo's warm target dir."""
    if not request.all_plugins:
        return (declaration.plugin(request.plugin_id),)
    if request.plugin_id is not None or request.prebuilt is not None:
        raise Refused.one(codes.USAGE_INVALID,
                          "--all-plugins builds every declared plugin from source: not with "
                          "--plugin or --prebuilt")
    return declaration.plugins


def _build_target(context: BuildContext, target: str) -> BuildResult:
    request = context.request
    if request.prebuilt is None:
        return _bundle(context, _cargo_step(context, target, scratch=context.scratch))
    started = datetime.datetime.now(datetime.timezone.utc)
    assert request.record is not None
    library = library_from_record(_library_request(context, target, context.scratch),
                                  prebuilt=request.prebuilt, record_path=request.record)
    if (context.signed_record is not None
            and library.evidence.record_sha256 != context.signed_record):
        raise Refused.one(codes.SIGNATURE_INVALID,
                          f"{request.record.name} changed after its signature was checked")
    return _bundle(context, (started, library))


def _library_request(context: BuildContext, target: str, scratch: Path) -> LibraryRequest:
    request = context.request
    return LibraryRequest(
        declaration=context.declaration, plugin=context.plugin, target=target,
        channel=request.channel, scratch=scratch, toolchain=context.toolchain,
        reporter=context.reporter, probe_timeout=request.probe_timeout, epoch=context.epoch,
        environ=context.environ)


def _cargo_step(context: BuildContext, target: str, *, scratch: Path,
                metadata: Metadata | None = None) -> tuple[datetime.datetime, CargoStep]:
    started = datetime.datetime.now(datetime.timezone.utc)
    context.reporter.step(f"building {context.plugin.package} for {target} "
                          f"({context.request.channel})")
    return started, run_declared_cargo(_library_request(context, target, scratch),
                                       target_dir=context.target_dir, source=context.facts,
                                       metadata=metadata)


def _bundle(context: BuildContext,
            made: tuple[datetime.datetime, CargoStep | CompiledLibrary],
            observed: Callable[[], Observed] | None = None) -> BuildResult:
    """From the cargo step (or a prebuilt library) to the bundle, its archive and run record."""
    started, step = made
    library = finish_compiled(step, observed) if isinstance(step, CargoStep) else step
    context.reporter.step(f"assembling {context.plugin.id} {library.package.version} for "
                          f"{library.target}")
    result = package_bundle(declaration=context.declaration, plugin=context.plugin,
                            library=library, out=context.out, epoch=context.epoch,
                            builder=builder_id(context.request.builder, context.environ))
    _write_run_record(result, context, started=started, log=library.log)
    return result


def _build_overlapped(contexts: dict[str, BuildContext],
                      items: list[tuple[PluginDeclaration, str]]) -> list[BuildResult]:
    """Several libraries from source: cargo runs for the next while the previous is bundled,
    and each library's probe child starts as soon as cargo has made it (on its own thread:
    the child's start-up is mostly waiting); each library in its own scratch directory (two
    targets' libraries share a file name). With `--all-plugins`, one `cargo metadata` per
    target where it is every plugin's own (build/shared_resolve.py)."""
    first = next(iter(contexts.values()))
    shared = (SharedResolve(first.declaration.workspace, environ=first.environ,
                            target_dir=first.target_dir)
              if first.request.all_plugins else None)
    numbered = list(enumerate(items))
    probes = ThreadPoolExecutor(max_workers=2, thread_name_prefix="horon-probe")

    def cargo(item: tuple[int, tuple[PluginDeclaration, str]]) -> Made:
        index, (plugin, target) = item
        scratch = first.scratch / str(index)
        try:
            scratch.mkdir()
        except OSError as exc:
            raise write_failed(scratch, exc) from None
        started, step = _cargo_step(contexts[plugin.id], target, scratch=scratch,
                                    metadata=shared.for_target(target) if shared else None)
        return started, step, probes.submit(observe_library, step)

    def bundle(item: tuple[int, tuple[PluginDeclaration, str]], made: Made) -> BuildResult:
        started, step, observed = made
        return _bundle(contexts[item[1][0].id], (started, step), observed.result)

    try:
        return overlapped(numbered, cargo, bundle)
    finally:  # a failed run: the probes of libraries never to be bundled are not started
        probes.shutdown(wait=True, cancel_futures=True)


def _require_declared_files(workspace: Path, plugin: PluginDeclaration) -> None:
    """The licence and sidecars are regular files of the workspace, checked before building."""
    findings = Findings()
    wanted = [("license-file", plugin.license_file, codes.DECLARATION_VALUE)]
    wanted += [(f"sidecar {s.name}", s.source, codes.SIDECAR_INVALID) for s in plugin.sidecars]
    for what, relative, code in wanted:
        path = workspace / relative
        if path.is_symlink() or not path.is_file():
            findings.add(code, f"{DECLARATION_NAME}: {what} {relative!r} is not a regular file "
                               "in the workspace")
    findings.raise_if_any()


def _write_run_record(result: BuildResult, context: BuildContext, *,
                      started: datetime.datetime, log: str) -> None:
    """`<archive>.build.json`: this run's non-deterministic facts, outside the content address."""
    finished = datetime.datetime.now(datetime.timezone.utc)
    record = {
        "format": BUILD_RECORD_FORMAT,
        "archive": {"name": result.archive.name, "sha256": result.archive_sha256},
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        # no host or runner name: the record is published beside the archive
        "runner": {"os": platform.system(), "machine": platform.machine()},
        "source_date_epoch": {"value": context.epoch, "from": context.epoch_origin},
        "toolchain": context.toolchain.to_json(),
        "horon_bundle": horon_bundle.__version__,
        "cargo_log": log[-200_000:],
    }
    write_atomic(beside(result.archive, BUILD_RECORD_SUFFIX), canonical_bytes(record))
