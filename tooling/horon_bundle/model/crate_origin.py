"""Where a crate of the graph came from, and the package URL that says so (or none).

A purl `pkg:cargo/NAME@VERSION` without qualifiers means the crate of that name on crates.io;
vulnerability scanners match it against crates.io advisories. Only crates cargo took from
crates.io get it. The others (docs/graph-and-qa.md, "Package URLs"):

- another registry: `pkg:cargo/NAME@VERSION?repository_url=INDEX` (the purl spec's qualifier
  for a non-default repository);
- a git repository: `pkg:generic/NAME@VERSION?vcs_url=git+URL@COMMIT` (`generic`: no
  ecosystem's advisories apply to a crate built from someone's repository);
- a path (the workspace, a vendored directory) or a source kind we do not know: no purl at all.

The cargo source id itself is kept beside it (the SBOM's `horon:source` property).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

CRATES_IO_SOURCES = frozenset({
    "registry+https://github.com/rust-lang/crates.io-index",
    "sparse+https://index.crates.io/",
})
_GIT = re.compile(r"git\+(?P<url>[^?#]+)(?:\?[^#]*)?(?:#(?P<commit>[0-9a-fA-F]{7,64}))?")
_REGISTRY = re.compile(r"(?:registry|sparse)\+(?P<url>https?://\S+)")
_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,200}")


@dataclass(frozen=True, slots=True, kw_only=True)
class CrateOrigin:
    kind: str  # "crates.io", "registry", "git", "path" or "unknown"
    purl: str | None


def crate_origin(name: str, version: str, source: str) -> CrateOrigin:
    """The origin of crate `name` `version` whose cargo source id is `source`."""
    if not (_NAME.fullmatch(name) and _NAME.fullmatch(version)):
        return CrateOrigin(kind="unknown", purl=None)
    base = f"{quote(name, safe='')}@{quote(version, safe='')}"
    if source in CRATES_IO_SOURCES:
        return CrateOrigin(kind="crates.io", purl=f"pkg:cargo/{base}")
    if (registry := _REGISTRY.fullmatch(source)) is not None:
        return CrateOrigin(kind="registry",
                           purl=f"pkg:cargo/{base}?repository_url={_qualifier(registry['url'])}")
    if (git := _GIT.fullmatch(source)) is not None:
        vcs = f"git+{git['url']}" + (f"@{git['commit']}" if git["commit"] else "")
        return CrateOrigin(kind="git", purl=f"pkg:generic/{base}?vcs_url={_qualifier(vcs)}")
    if source == "path":
        return CrateOrigin(kind="path", purl=None)
    return CrateOrigin(kind="unknown", purl=None)


def _qualifier(value: str) -> str:
    """A qualifier value as the purl spec encodes it (`:` and `/` left as they are)."""
    return quote(value, safe=":/")
