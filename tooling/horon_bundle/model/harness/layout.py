"""Where things live in a harness plugin and in its bundle zip (docs/harness.md)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING

from horon_bundle.core import paths

if TYPE_CHECKING:
    from pathlib import Path

# manifest directory -> the host family whose layout it is
MANIFEST_DIRS = {".claude-plugin": "claude-code", ".muse-plugin": "muse-code"}
MANIFEST_FILE = "plugin.json"
MARKETPLACE_PATH = ".claude-plugin/marketplace.json"
HOOKS_DEFAULT = "hooks/hooks.json"
MCP_DEFAULT = ".mcp.json"
COMPONENT_DEFAULTS = {"skills": "skills", "commands": "commands", "agents": "agents"}

# written by the build at the zip's root, beside the plugin's own files
CHECKSUMS_NAME = "SHA256SUMS"
CATALOGUE_NAME = "catalogue.json"
PROVENANCE_NAME = "provenance.json"
ENTRY_NAME = "marketplace-entry.json"  # the listing a plugin was built from, if any
REQUIRED = (CHECKSUMS_NAME, CATALOGUE_NAME, PROVENANCE_NAME)
RESERVED = (*REQUIRED, ENTRY_NAME)
REF_SUFFIX = ".ref.json"
PLUGIN_ROOT_VARIABLE = "CLAUDE_PLUGIN_ROOT"

# SHA256SUMS of a harness bundle: a line for each other file of its zip, which holds at most
# 65,534 entries (a zip without ZIP64 counts them in 16 bits, 0xFFFF being ZIP64's marker:
# verify/limits.py), each line 64 hex digits, two spaces, a path of at most 512 bytes and a
# newline. About 38 MB at most; 2 MB for 20,000 files of 40-byte paths (a native bundle's
# 1 MiB holds about 9,000 such lines)
MAX_SUMS_BYTES = (0xFFFF - 1) * (64 + 2 + paths.MAX_PATH_BYTES + 1)
MAX_JSON_BYTES = 4 << 20
# plugin.json, hooks.json, .mcp.json and a marketplace entry nest about 8 deep (an mcp_tool
# hook's `input` a few more); deeper is refused (json.too-deep) before the parser recurses
MAX_JSON_DEPTH = 32
# every JSON file one read of a plugin parses (its manifests, hooks and MCP files) together, as
# much as one file may be: the strict reader takes about a second for 4 MiB, and a zip can list
# thousands of such files, each compressed a thousandfold (harness.limit)
MAX_RUN_JSON_BYTES = MAX_JSON_BYTES
MAX_TEXT_BYTES = 4 << 20
# one plugin.json component field (commands, agents, skills, hooks …) names at most this many
# paths, checked before any is read (harness.limit): real plugins name tens, and each path is
# looked up and its file read
MAX_COMPONENT_PATHS = 10_000
# hook declarations (events, matcher groups and hooks) and MCP servers one plugin declares,
# counted before any is read, and the strings lint lexes as shell (commands, arguments,
# headers, server env): lexed twice, a fraction of a second. Real plugins declare tens of
# hooks with commands of a hundred characters (harness.limit)
MAX_HOOKS = 1_000
MAX_SERVERS = 1_000
MAX_COMMAND_TEXT = 64 << 10


def ref_path(archive: Path) -> Path:
    """`X.zip.ref.json` for `X.zip`: the ref beside it."""
    return archive.with_name(archive.name + REF_SUFFIX)


def manifest_paths() -> tuple[str, ...]:
    return tuple(f"{directory}/{MANIFEST_FILE}" for directory in MANIFEST_DIRS)


def component_path(value: str) -> tuple[str | None, str | None]:
    """A manifest component path (`./x/y`) as a bundle path ('' for the root), or the reason
    it is refused: the host documents ./-relative POSIX paths that stay inside the root."""
    if not value.startswith("./"):
        return None, "does not start with ./"
    rest = value[2:].rstrip("/")
    if rest in ("", "."):
        return "", None
    if problem := paths.path_problem(rest):
        return None, problem
    return posixpath.normpath(rest), None


def is_harness(files: Mapping[str, object]) -> bool:
    """A harness bundle by its content: a harness manifest or a catalogue, no native plugin.json
    at the root."""
    return "plugin.json" not in files and (
        CATALOGUE_NAME in files or any(p in files for p in manifest_paths()))
