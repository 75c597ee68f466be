"""The marketplace a `file://` store serves to Claude Code: `.claude-plugin/marketplace.json`.

A Claude Code marketplace (docs/schemas/hosted-marketplace.schema.json) whose every plugin is
an `archive` source — `{"source": "archive", "url": "https://…", "sha256": "<hex>"}` — so the
host downloads the zip, checks its SHA-256 and refuses the install on a difference: the
content address horon-bundle pins is the one the host enforces. One entry per plugin, its
latest published version that is not yanked; written canonically (sorted keys, two-space
indent, final newline) so that the same store state always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from horon_bundle.core.strictjson import canonical_bytes

MARKETPLACE_DIRECTORY = ".claude-plugin"
MARKETPLACE_FILE = f"{MARKETPLACE_DIRECTORY}/marketplace.json"
DESCRIPTION = ("Harness bundles published by horon-bundle: each plugin is a zip whose SHA-256 "
               "Claude Code checks before it installs anything.")
MAX_DESCRIPTION = 500  # the OCI annotation's bound, for the same text


@dataclass(frozen=True, slots=True, kw_only=True)
class HostedPlugin:
    """One plugin as the marketplace lists it: a version, and the URL and digest of its zip."""

    name: str
    version: str
    sha256: str
    url: str
    description: str | None = None


def hosted_marketplace_bytes(name: str, owner: str, plugins: list[HostedPlugin]) -> bytes:
    """The marketplace document, plugins in byte order of their names."""
    entries = []
    for plugin in sorted(plugins, key=lambda p: p.name.encode()):
        entry: dict[str, object] = {
            "name": plugin.name, "version": plugin.version,
            "source": {"source": "archive", "url": plugin.url, "sha256": plugin.sha256},
        }
        if plugin.description:
            entry["description"] = plugin.description[:MAX_DESCRIPTION]
        entries.append(entry)
    return canonical_bytes({"name": name, "owner": {"name": owner},
                            "description": DESCRIPTION, "plugins": entries})
