"""catalogue.json: what a harness bundle offers, derived from its files (never written by hand).

A host lists a bundle's skills, commands, agents, hooks and MCP servers from this one file,
with no sandbox running; `verify` recomputes it from the files and refuses a difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.model.harness.catalogue_summary import (
    CATALOGUE_FORMAT,
    MAX_CATALOGUE_BYTES,
    CatalogueSummary,
    check_catalogue,
    parse_catalogue,
)

if TYPE_CHECKING:  # a state file's summary needs neither (start-up of `list`)
    from horon_bundle.model.harness.hooks import Hook
    from horon_bundle.model.harness.mcp import McpServer

__all__ = ["CATALOGUE_FORMAT", "MAX_CATALOGUE_BYTES", "Catalogue", "CatalogueSummary",
           "Component", "check_catalogue", "parse_catalogue"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Component:
    """A skill, command or agent: its id, its file and its frontmatter as the host reads it."""

    id: str
    path: str
    frontmatter: dict[str, Any]
    read_as: str  # yaml, yaml-quoted (the host's second parse), dropped (by the host) or none

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "frontmatter": self.frontmatter,
                "frontmatter_read_as": self.read_as}


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalogue:
    name: str
    version: str
    description: str | None
    manifests: tuple[str, ...]  # the manifest files read ((): metadata from a marketplace)
    hosts: tuple[str, ...]  # claude-code / muse-code: whose layout the manifests are
    skills: tuple[Component, ...]
    commands: tuple[Component, ...]
    agents: tuple[Component, ...]
    hooks: tuple[Hook, ...]
    servers: tuple[McpServer, ...]

    @property
    def events(self) -> tuple[str, ...]:
        return tuple(sorted({hook.event for hook in self.hooks}))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": CATALOGUE_FORMAT,
            "plugin": {"name": self.name, "version": self.version,
                       "description": self.description, "manifests": list(self.manifests),
                       "hosts": list(self.hosts)},
            "skills": [c.to_json() for c in self.skills],
            "commands": [c.to_json() for c in self.commands],
            "agents": [c.to_json() for c in self.agents],
            "hooks": [h.to_catalogue() for h in self.hooks],
            "mcp_servers": [s.to_catalogue() for s in self.servers],
            "events": list(self.events),
        }

    def to_bytes(self) -> bytes:
        return canonical_bytes(self.to_json())
