"""`horon-bundle compile`: the library alone plus an artifact record binding it.

Output per target: `<out>/<id>-<version>-<target>.compiled/<library>` and `record.json`
beside it, for `build --prebuilt LIB --record REC` on another machine.
"""

from __future__ import annotations

import os
from pathlib import Path

from horon_bundle.build.compiled import LibraryRequest
from horon_bundle.build.library import compile_library, scratch_directory
from horon_bundle.build.output import output_session
from horon_bundle.build.pipeline import select_targets
from horon_bundle.build.places import resolve_places
from horon_bundle.build.request import Compiled, CompileRequest
from horon_bundle.build.source_facts import dirty_warnings, source_date_epoch, source_facts
from horon_bundle.cargo.toolchain import probe_toolchain, require_targets
from horon_bundle.core.files import remove_tree, rename_no_replace, staging_directory, write_new
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.model.declaration import load_declaration
from horon_bundle.model.manifest import bundle_name
from horon_bundle.model.record import RECORD_NAME, record_json


def compile_records(request: CompileRequest, reporter: Reporter | None = None) -> list[Compiled]:
    reporter = reporter or SilentReporter()
    environ = dict(os.environ)
    places = resolve_places(workspace=request.workspace, out=request.out,
                            target_dir=request.target_dir)
    workspace, out, target_dir = places.workspace, places.out, places.target_dir
    declaration = load_declaration(workspace)
    plugin = declaration.plugin(request.plugin_id)
    if places.found_above:
        reporter.note(f"using the plugin workspace {workspace}")
    toolchain = probe_toolchain(workspace, env=environ)
    targets = select_targets(plugin, request.targets, False, toolchain.host)
    require_targets(workspace, targets, env=environ, toolchain=toolchain)
    facts = source_facts(workspace)
    for warning in dirty_warnings(facts):
        reporter.note(warning)
    epoch, _ = source_date_epoch(facts, environ)
    results = []
    with output_session(out, reporter), scratch_directory(out) as scratch_name:
        for target in targets:
            reporter.step(f"compiling {plugin.package} for {target} ({request.channel})")
            library = compile_library(LibraryRequest(
                declaration=declaration, plugin=plugin, target=target, channel=request.channel,
                scratch=Path(scratch_name), toolchain=toolchain, reporter=reporter,
                probe_timeout=request.probe_timeout, epoch=epoch, environ=environ),
                target_dir=target_dir, source=facts)
            invocation = library.evidence.invocation
            assert invocation is not None
            record = record_json(
                plugin_id=plugin.id, package=plugin.package, version=library.package.version,
                library_name=library.path.name, digest=library.digest, target=target,
                profile=plugin.profile, channel=request.channel, claim=library.judged.claim,
                features=library.judged.features, invocation=invocation,
                graph=library.judged.graph, advertised=library.advertised)
            name = bundle_name(plugin.id, library.package.version, target,
                               request.channel) + ".compiled"
            final = out / name
            with staging_directory(out, f".{name}.staging-") as staging:
                library.path.rename(staging / library.path.name)
                write_new(staging / RECORD_NAME, canonical_bytes(record))
                if final.exists():
                    remove_tree(final)
                rename_no_replace(staging, final)
            results.append(Compiled(library=final / library.path.name,
                                    record=final / RECORD_NAME, sha256=library.digest.sha256,
                                    target=target))
    return results
