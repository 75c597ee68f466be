"""catalogue.json: what a harness bundle offers, derived from its files (never written by hand).

A host lists a bundle's skills, commands, agents, hooks and MCP servers from this one file,
with no sandbox running; `verify` recomputes it from the files and refuses a difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.strictjson import canonical_bytes, read_json

if TYPE_CHECKING:  # a state file's summary needs neither (start-up of `list`)
    from horon_bundle.model.harness.hooks import Hook
    from horon_bundle.model.harness.mcp import McpServer

CATALOGUE_FORMAT = "horon.harness-catalogue.v1"
MAX_CATALOGUE_BYTES = 16 << 20
_SECTIONS = ("skills", "commands", "agents", "hooks", "mcp_servers")


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


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogueSummary:
    """A catalogue read back (e.g. by an install): the plugin and its entries as data."""

    name: str
    version: str
    document: dict[str, Any]

    def entries(self, section: str) -> list[dict[str, Any]]:
        return list(self.document[section])


def parse_catalogue(data: bytes, *, source: str = "catalogue.json") -> CatalogueSummary:
    """Read a catalogue strictly enough to list it: its format, plugin and section types."""
    document = read_json(data, source=source, max_bytes=MAX_CATALOGUE_BYTES, max_depth=32)
    return check_catalogue(document, source=source)


def check_catalogue(document: object, *, source: str) -> CatalogueSummary:
    """A decoded catalogue (e.g. the copy an install kept in its state file), checked as
    `parse_catalogue` checks the bytes of one."""
    problem = None
    if not isinstance(document, dict) or document.get("format") != CATALOGUE_FORMAT:
        problem = f"not a {CATALOGUE_FORMAT} document"
    elif set(document) != {"format", "plugin", "events", *_SECTIONS}:
        problem = f"fields {sorted(document)}"
    elif not all(isinstance(document[s], list) and all(isinstance(e, dict) for e in document[s])
                 for s in _SECTIONS):
        problem = "a section is not an array of objects"
    elif not (isinstance(document["events"], list)
              and all(isinstance(e, str) for e in document["events"])):
        problem = "events is not an array of strings"
    else:
        plugin = document["plugin"]
        if not (isinstance(plugin, dict) and isinstance(plugin.get("name"), str)
                and isinstance(plugin.get("version"), str)):
            problem = "plugin has no name and version"
    if problem is not None:
        raise Refused.one(codes.HARNESS_CATALOGUE, f"{source}: {problem}")
    assert isinstance(document, dict)
    return CatalogueSummary(name=document["plugin"]["name"],
                            version=document["plugin"]["version"], document=document)
