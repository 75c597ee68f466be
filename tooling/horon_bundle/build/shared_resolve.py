"""One `cargo metadata` for every plugin of a run, where it is provably each plugin's own.

A plugin's graph is walked over the resolve `cargo metadata` gives under that plugin's feature
flags (`--no-default-features --features PKG/f…`). Feature flags change that resolve in one
way only: they activate optional dependencies (`dep:x`, `x/feature`, an implicit feature `x`),
which adds their edges and packages. Versions come from Cargo.lock (`--locked`), platform
edges from `--filter-platform`, dependency kinds from the manifests: none depends on features.
So when no package of the workspace's resolve declares an optional dependency, the resolve
is the same whatever the flags, and one call per target serves every plugin; the graph, the
provenance and the SBOM are the bytes each plugin's own call would have given. When one
does, each plugin keeps its own call (docs/declaration.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from horon_bundle.build.library import metadata_environment
from horon_bundle.cargo.metadata import Metadata, load_workspace_metadata


def resolve_is_feature_free(metadata: Metadata) -> bool:
    """No package of the resolve declares an optional dependency: feature flags cannot add an
    edge or a package to it."""
    return not any(dependency.optional for package in metadata.packages.values()
                   for dependency in package.dependencies)


class SharedResolve:
    """The workspace's metadata per target, asked once; None where a plugin needs its own."""

    def __init__(self, workspace: Path, *, environ: Mapping[str, str],
                 target_dir: Path | None) -> None:
        self._workspace = workspace
        self._env = metadata_environment(environ, target_dir)
        self._by_target: dict[str, Metadata | None] = {}

    def for_target(self, target: str) -> Metadata | None:
        if target not in self._by_target:
            metadata = load_workspace_metadata(self._workspace, target=target, env=self._env)
            self._by_target[target] = metadata if resolve_is_feature_free(metadata) else None
        return self._by_target[target]
