"""`horon-bundle compile`: the library alone plus an artifact record binding it.

Output per target: `<out>/<id>-<version>-<target>.compiled/<library>` and `record.json`
beside it, for `build --prebuilt LIB --record REC` on another machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle import codes
from horon_bundle.build import BuildRequest, bundle_name, default_target_dir, select_targets
from horon_bundle.declaration import load_declaration
from horon_bundle.errors import Refused
from horon_bundle.fsutil import remove_tree, rename_no_replace, staging_directory, write_new
from horon_bundle.hashing import Digest
from horon_bundle.library_build import compile_library, scratch_directory
from horon_bundle.record import RECORD_NAME, record_json
from horon_bundle.reporter import Reporter, SilentReporter
from horon_bundle.source_facts import source_date_epoch, source_facts
from horon_bundle.strictjson import canonical_bytes
from horon_bundle.toolchain import probe_toolchain, require_targets


@dataclass(frozen=True, slots=True, kw_only=True)
class CompileRequest:
    workspace: Path
    out: Path
    plugin_id: str | None = None
    targets: tuple[str, ...] = ()
    channel: str = "release"
    target_dir: Path | None = None
    probe_timeout: float = 20.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Compiled:
    library: Path
    record: Path
    sha256: str
    target: str


def compile_records(request: CompileRequest, reporter: Reporter | None = None) -> list[Compiled]:
    reporter = reporter or SilentReporter()
    workspace = request.workspace.resolve()
    declaration = load_declaration(workspace)
    plugin = declaration.plugin(request.plugin_id)
    out = request.out.resolve()
    target_dir = (request.target_dir or default_target_dir(out)).resolve()
    for path in (out, target_dir):
        try:
            path.relative_to(workspace)
        except ValueError:
            continue
        raise Refused.one(codes.OUTPUT_INSIDE_SOURCE,
                          f"{path} lies inside the plugin workspace {workspace}")
    toolchain = probe_toolchain(workspace)
    targets = select_targets(plugin, BuildRequest(workspace=workspace, out=out,
                                                  targets=request.targets), toolchain.host)
    require_targets(workspace, targets)
    facts = source_facts(workspace)
    epoch, _ = source_date_epoch(facts)
    results = []
    with scratch_directory(out) as scratch_name:
        for target in targets:
            reporter.step(f"compiling {plugin.package} for {target} ({request.channel})")
            library = compile_library(
                declaration=declaration, plugin=plugin, target=target, channel=request.channel,
                target_dir=target_dir, scratch=Path(scratch_name), toolchain=toolchain,
                source=facts, reporter=reporter, probe_timeout=request.probe_timeout,
                epoch=epoch)
            assert library.invocation is not None and library.graph is not None
            record = record_json(
                plugin_id=plugin.id, package=plugin.package, version=library.package.version,
                library_name=library.path.name, digest=Digest(library.sha256, library.size),
                target=target, profile=plugin.profile, channel=request.channel,
                claim=library.claim, features=library.features, invocation=library.invocation,
                graph=library.graph, advertised=library.advertised)
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
                                    record=final / RECORD_NAME, sha256=library.sha256,
                                    target=target))
    return results
