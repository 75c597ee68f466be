"""THIRD-PARTY-NOTICES: the licences of every crate the library links, from the resolved graph.

A cdylib statically links every crate compiled into it, so the bundle carries, per crate of
the graph: name, version, the licence expression its Cargo.toml declares (as `cargo metadata`
reports it, recorded in the graph), and the licence texts found in its source directory —
the package's `license-file`, then every `LICENSE*`, `LICENCE*`, `COPYING*`, `COPYRIGHT*`,
`NOTICE*` and `UNLICENSE*` file beside its Cargo.toml. A path package with no text of its
own inside the workspace gets the workspace root's files, labelled as such. A crate with no
text anywhere says so; it is listed all the same.

The plugin crate itself is not repeated: its licence is the bundle's own LICENSE (the
declaration's `license-file`), which the notices point to. Crates compiled only for the
build host (build-script and proc-macro dependencies) are listed and marked as not linked.

A text several crates share (a workspace's LICENSE for each of its path crates, the same
MIT text of many registry crates) is written out in full once, under the first crate that
has it; each later crate names the file and points there.

Deterministic: crates sorted by name, version and id, files by name, line endings folded to
LF, a UTF-8 BOM dropped; no timestamp, no absolute path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from horon_bundle.core.errors import Refused
from horon_bundle.core.inputs import open_regular, read_fd
from horon_bundle.model.graph import Graph, GraphPackage

NOTICES_NAME = "THIRD-PARTY-NOTICES"
NOTICES_ROLE = "notices"
LICENSE_PREFIXES = ("LICENSE", "LICENCE", "COPYING", "COPYRIGHT", "NOTICE", "UNLICENSE")
MAX_TEXT_BYTES = 1 << 20
MAX_FILES_PER_CRATE = 16
_RULE = "=" * 78
_THIN = "-" * 78


class CrateSource(Protocol):
    """Where a crate's sources lie on this machine (cargo metadata's package has all three)."""

    @property
    def directory(self) -> Path: ...

    @property
    def license_file(self) -> str | None: ...

    @property
    def source(self) -> str | None: ...  # None for a path (workspace) package


@dataclass(frozen=True, slots=True, kw_only=True)
class LicenceText:
    name: str
    text: str
    origin: str  # "" (the crate's own directory) or "workspace root"


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.rstrip() + "\n"


def _candidates(directory: Path) -> list[Path]:
    try:
        entries = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    return [p for p in entries if p.name.upper().startswith(LICENSE_PREFIXES)]


def _read_text(path: Path) -> str | None:
    """A licence file's text; None when it is absent or not a regular file (never blocks)."""
    try:
        fd, info = open_regular(path, what="licence file")
    except (OSError, Refused):
        return None
    try:
        if info.st_size > MAX_TEXT_BYTES:
            return f"({path.name} is larger than {MAX_TEXT_BYTES} bytes and is not copied here)\n"
        return _decode(read_fd(fd, limit=MAX_TEXT_BYTES, label=path.name))
    except (OSError, Refused):
        return None
    finally:
        os.close(fd)


def licence_texts(package: CrateSource, workspace_root: Path | None) -> list[LicenceText]:
    """The licence files of `package` (its own, else the workspace root's for a member)."""
    directory = package.directory
    named: list[tuple[Path, str]] = []
    if package.license_file:
        named.append((directory / package.license_file, package.license_file))
    named += [(p, p.name) for p in _candidates(directory) if p not in {n[0] for n in named}]
    texts = []
    for path, name in named[:MAX_FILES_PER_CRATE]:
        text = _read_text(path)
        if text is not None:
            texts.append(LicenceText(name=name, text=text, origin=""))
    if texts or package.source is not None or workspace_root is None:
        return texts
    try:
        directory.resolve().relative_to(workspace_root.resolve())
    except ValueError:
        return texts
    for path in _candidates(workspace_root)[:MAX_FILES_PER_CRATE]:
        text = _read_text(path)
        if text is not None:
            texts.append(LicenceText(name=path.name, text=text, origin="workspace root"))
    return texts


def build_notices(graph: Graph, *, packages: Mapping[str, CrateSource],
                  workspace_root: Path | None, plugin_id: str, target: str,
                  license_path: str) -> bytes:
    """The THIRD-PARTY-NOTICES bytes for `graph`; `packages` maps graph ids to sources."""
    root = graph.root_package
    lines = [
        "THIRD-PARTY NOTICES",
        "",
        f"{plugin_id} {root.version} for {target} is a cdylib: it statically links every crate",
        "listed below (the resolved graph recorded in provenance.json). For each crate: its",
        "version, the licence expression its Cargo.toml declares, and the licence texts found",
        "in its source.",
        "",
        f"The plugin itself ({root.name} {root.version}, {root.license or 'no licence declared'})"
        f": see {license_path} in this bundle.",
    ]
    others = sorted((p for p in graph.packages.values() if p.id != graph.root),
                    key=lambda p: (p.name, p.version, p.id))
    if not others:
        lines += ["", "It links no other crate."]
    shown: dict[str, str] = {}  # a licence text -> where it was first written out in full
    for package in others:
        lines += ["", _RULE, *_entry(package, packages.get(package.id), workspace_root, shown)]
    return ("\n".join(lines).rstrip() + "\n").encode("utf-8")


def _entry(package: GraphPackage, source: CrateSource | None, workspace_root: Path | None,
           shown: dict[str, str]) -> list[str]:
    linked = "target" in package.compiled
    lines = [
        f"{package.name} {package.version}",
        f"License: {package.license or '(none declared in Cargo.toml)'}",
        f"Source: {package.source}",
        "Linked into the library: " + ("yes" if linked else
                                       "no (compiled for the build host only)"),
    ]
    if package.checksum:
        lines.append(f"Checksum (Cargo.lock): sha256 {package.checksum}")
    if source is None:
        lines += [_THIN, "(licence text unavailable: this crate's source is not in the cargo "
                         "metadata of the machine that assembled the bundle)"]
        return lines
    texts = licence_texts(source, workspace_root)
    if not texts:
        lines += [_THIN, "(no licence text found in the crate's source; the expression above "
                         "is what its Cargo.toml declares)"]
    for item in texts:
        origin = f" (from the {item.origin})" if item.origin else ""
        first = shown.get(item.text)
        if first is not None:  # one text shared by many crates (a workspace's LICENSE) once
            lines += [_THIN, f"{item.name}{origin}: the same text as {first} above."]
            continue
        shown[item.text] = f"{item.name} of {package.name} {package.version}"
        lines += [_THIN, f"{item.name}{origin}:", "", item.text.rstrip("\n")]
    return lines
