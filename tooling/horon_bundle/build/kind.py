"""Which kind of bundle a workspace builds: native (horon-release.toml) or harness (a
`.claude-plugin/` or `.muse-plugin/` manifest, or a `.claude-plugin/marketplace.json`; or, with
neither manifest nor declaration, a plugin's own content: `skills/`, `commands/`, `agents/` or
`hooks/hooks.json`, which Claude Code loads as a plugin named after its directory).

Decided from the workspace root alone; both present is ambiguous unless `--kind` says which
(docs/harness.md). `is_workspace_root` is the test a walk up from the current directory uses
(by the manifests and the declaration only: a parent holding a `commands/` directory is no
plugin for that); the directory the walk starts from is a plugin by its content too.
"""

from __future__ import annotations

from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.model.bundle_kind import KIND_NAMES, BundleKind
from horon_bundle.model.declaration import DECLARATION_NAME
from horon_bundle.model.harness.layout import MARKETPLACE_PATH, manifest_paths

CONTENT_DIRECTORIES = ("skills", "commands", "agents")
CONTENT_FILES = ("hooks/hooks.json",)


def harness_markers(root: Path) -> list[str]:
    return [p for p in (*manifest_paths(), MARKETPLACE_PATH) if (root / p).is_file()]


def content_markers(root: Path) -> list[str]:
    """What makes `root` a plugin without a manifest: its component directories or hooks."""
    return [*(f"{d}/" for d in CONTENT_DIRECTORIES if (root / d).is_dir()),
            *(f for f in CONTENT_FILES if (root / f).is_file())]


# what only a harness plugin holds, though not enough to build one (no manifest, no content)
HARNESS_SIGNS = (".claude-plugin/", ".muse-plugin/", ".mcp.json", ".lsp.json", "hooks/")


def harness_signs(root: Path) -> list[str]:
    """Signs that `root` was meant as a harness plugin: its manifest directory without
    plugin.json, a server or hooks configuration (so a refusal speaks of plugin.json, not of
    the native declaration)."""
    return [sign for sign in HARNESS_SIGNS
            if ((root / sign.rstrip("/")).is_dir() if sign.endswith("/")
                else (root / sign).is_file())]


def is_workspace_root(directory: Path) -> bool:
    return (directory / DECLARATION_NAME).is_file() or bool(harness_markers(directory))


def find_workspace_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a declaration or a harness manifest;
    else `start` itself when it is a plugin by its content."""
    for directory in (start.resolve(), *start.resolve().parents):
        if is_workspace_root(directory):
            return directory
    return start.resolve() if content_markers(start.resolve()) else None


def workspace_kind(root: Path, requested: str | None = None) -> BundleKind:
    native = (root / DECLARATION_NAME).is_file()
    harness = harness_markers(root) or ([] if native else content_markers(root))
    if requested is not None:
        if requested not in KIND_NAMES:
            raise Refused.one(codes.HARNESS_KIND_AMBIGUOUS,
                              f"--kind {requested!r}: expected native or harness")
        return BundleKind(requested)
    if native and harness:
        raise Refused.one(codes.HARNESS_KIND_AMBIGUOUS,
                          f"{root}: holds {DECLARATION_NAME} and {', '.join(harness)}")
    if not native and not harness and (signs := harness_signs(root)):
        raise Refused.one(codes.HARNESS_MANIFEST_MISSING,
                          f"{root}: holds {', '.join(signs)} but no .claude-plugin/plugin.json "
                          "(nor skills/, commands/, agents/ or hooks/hooks.json), so it is no "
                          "harness plugin yet",
                          "Add .claude-plugin/plugin.json with the plugin's name, or one of its "
                          "component directories (`horon-bundle docs harness`); a native "
                          f"plugin holds {DECLARATION_NAME} instead.")
    return BundleKind.HARNESS if harness else BundleKind.NATIVE
