"""catalogue.json read back: a bundle's catalogue as data (`CatalogueSummary`), checked as
strictly as listing it needs (its format, plugin and section types).

Apart from the catalogue's models (`model.harness.catalogue`, which a build and a verify
derive from the files) so that reading a home's state file (`list`), which keeps each
catalogue as a document, never loads them (start-up)."""

from __future__ import annotations

from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.strictjson import read_json

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any

CATALOGUE_FORMAT = "horon.harness-catalogue.v1"
MAX_CATALOGUE_BYTES = 16 << 20
_SECTIONS = ("skills", "commands", "agents", "hooks", "mcp_servers")


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
