"""`cargo metadata`: package facts and resolved dependency edges, straight from cargo.

The toolchain never parses Cargo.toml by hand. Note (measured): metadata resolves the whole
workspace, so a package in `resolve.nodes` is not thereby in the plugin's graph; the graph
stage walks edges from the plugin's own node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.cargo.diagnostics import explainer
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import run_text
from horon_bundle.core.strictjson import read_json

MAX_METADATA_BYTES = 512 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class DependencyDecl:
    """One `[dependencies]`-style entry of a package, as cargo reports it."""

    name: str
    rename: str | None
    kind: str  # "normal", "build" or "dev"
    optional: bool
    uses_default_features: bool
    features: tuple[str, ...]

    @property
    def key(self) -> str:
        """The name features refer to (`dep:key`, `key/feature`)."""
        return self.rename or self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class Package:
    id: str
    name: str
    version: str
    source: str | None
    license: str | None
    license_file: str | None
    manifest_path: Path
    features: dict[str, tuple[str, ...]]
    dependencies: tuple[DependencyDecl, ...]
    cdylib_name: str | None
    qa_marker: bool

    @property
    def directory(self) -> Path:
        return self.manifest_path.parent


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedEdge:
    to: str
    dep_name: str
    kinds: tuple[str, ...]  # normal/build/dev, for the filtered platform


@dataclass(frozen=True, slots=True, kw_only=True)
class Metadata:
    workspace_root: Path
    packages: dict[str, Package]
    edges: dict[str, tuple[ResolvedEdge, ...]]
    workspace_members: tuple[str, ...]
    target_directory: Path  # where cargo builds unless told otherwise

    def member(self, name: str) -> Package | None:
        for package_id in self.workspace_members:
            if self.packages[package_id].name == name:
                return self.packages[package_id]
        return None


def feature_flags(package: str, claim: Sequence[str]) -> list[str]:
    """The feature flags of the declared command: only the claim, nothing by default."""
    flags = ["--no-default-features"]
    if claim:
        flags += ["--features", ",".join(f"{package}/{f}" for f in claim)]
    return flags


def load_metadata(workspace: Path, *, target: str, package: str, claim: Sequence[str],
                  env: Mapping[str, str] | None = None) -> Metadata:
    argv = ["cargo", "metadata", "--format-version", "1", "--locked",
            "--filter-platform", target, *feature_flags(package, claim)]
    return _read(run_text(argv, cwd=workspace, env=env, explain=explainer(workspace)))


def load_workspace_metadata(workspace: Path, *, target: str,
                            env: Mapping[str, str] | None = None) -> Metadata:
    """The whole workspace's resolve for `target` without default features and without any
    plugin's feature flags: one call a run of several plugins may share
    (build/shared_resolve.py says when it equals each plugin's own)."""
    argv = ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform",
            target, "--no-default-features"]
    return _read(run_text(argv, cwd=workspace, env=env, explain=explainer(workspace)))


def workspace_members(workspace: Path, *, env: Mapping[str, str] | None = None) -> Metadata:
    """The workspace's own packages only (`--no-deps`): cheap, and needs no feature flags."""
    argv = ["cargo", "metadata", "--format-version", "1", "--locked", "--no-deps"]
    return _read(run_text(argv, cwd=workspace, env=env, explain=explainer(workspace)))


def _read(output: str) -> Metadata:
    document = read_json(output.encode("utf-8"), source="cargo metadata",
                         max_bytes=MAX_METADATA_BYTES, any_number=True)
    try:
        return _decode(document)  # type: ignore[arg-type]
    except (KeyError, TypeError, AttributeError) as exc:
        raise Refused.one(codes.CARGO_OUTPUT,
                          f"cargo metadata: unexpected output ({type(exc).__name__}: "
                          f"{exc})") from None


def _decode(document: dict[str, Any]) -> Metadata:
    packages: dict[str, Package] = {}
    for raw in document["packages"]:
        cdylibs = [t["name"] for t in raw["targets"] if "cdylib" in t["crate_types"]]
        horon = ((raw.get("metadata") or {}).get("horon") or {})
        packages[raw["id"]] = Package(
            id=raw["id"], name=raw["name"], version=raw["version"], source=raw["source"],
            license=raw.get("license"), license_file=raw.get("license_file"),
            manifest_path=Path(raw["manifest_path"]),
            features={k: tuple(v) for k, v in raw["features"].items()},
            dependencies=tuple(
                DependencyDecl(name=d["name"], rename=d.get("rename"),
                               kind=d.get("kind") or "normal", optional=d["optional"],
                               uses_default_features=d["uses_default_features"],
                               features=tuple(d["features"]))
                for d in raw["dependencies"]),
            cdylib_name=cdylibs[0] if cdylibs else None,
            qa_marker=horon.get("qa") is True)
    edges: dict[str, tuple[ResolvedEdge, ...]] = {}
    for node in (document.get("resolve") or {}).get("nodes", []):
        edges[node["id"]] = tuple(
            ResolvedEdge(to=dep["pkg"], dep_name=dep["name"],
                         kinds=tuple(sorted({k["kind"] or "normal" for k in dep["dep_kinds"]})))
            for dep in node["deps"])
    return Metadata(workspace_root=Path(document["workspace_root"]), packages=packages,
                    edges=edges, workspace_members=tuple(document["workspace_members"]),
                    target_directory=Path(document["target_directory"]))
