"""Where things live in a harness plugin and in its bundle zip (docs/harness.md)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from horon_bundle.core import paths

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
# paths, checked before any is read: a zip holds at most 10,000 files (verify/limits.py), so a
# longer list can only repeat itself (harness.limit)
MAX_COMPONENT_PATHS = 10_000
# hook declarations (events, matcher groups and hooks) and MCP servers one plugin declares,
# counted before any is read, and the strings lint lexes as shell (commands, arguments,
# headers, server env): lexed twice, a fraction of a second. Real plugins declare tens of
# hooks with commands of a hundred characters (harness.limit)
MAX_HOOKS = 1_000
MAX_SERVERS = 1_000
MAX_COMMAND_TEXT = 64 << 10


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
