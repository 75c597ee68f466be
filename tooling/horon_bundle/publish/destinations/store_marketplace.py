"""The Claude Code marketplace a `file://` store serves when `HORON_PUBLISH_PUBLIC_URL` is set.

`.claude-plugin/marketplace.json` at the store's root lists, for every harness bundle name in
`harness/index/`, its latest version that has no yank mark in `harness/yanks/` (order:
`core.versions.release_order`), as an `archive` source: the URL of its zip's blob under the
public address and the zip's SHA-256 (`model.harness.hosted_marketplace`). It is derived from
the committed entries alone, so it never lists a version that is not published.

- **Preflight** (`listing_findings`, part of the store's access check, before any upload):
  the marketplace can be named and Claude Code accepts that name and every plugin name it
  would list (`model.harness.host_names`).
- **After the commits** (`refresh`, under an exclusive lock on `.tmp/marketplace.lock`): the
  listing is computed from the store and the file replaced whole (temp file, fsync, rename);
  when it already holds those bytes nothing is written, so a re-run changes nothing.

The name: the marketplace whose index this release carries; else the name the store's
marketplace already has (one store serves one marketplace: another index name is refused);
else the one harness bundle the release holds. The owner is the public address's host.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.files import exclusive_use
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import read_json
from horon_bundle.core.versions import release_order
from horon_bundle.model.harness.catalogue import MAX_CATALOGUE_BYTES, parse_catalogue
from horon_bundle.model.harness.host_names import marketplace_name_problem, plugin_name_problem
from horon_bundle.model.harness.hosted_marketplace import (
    MARKETPLACE_FILE,
    HostedPlugin,
    hosted_marketplace_bytes,
)
from horon_bundle.publish.destinations.store_entries import HARNESS_ENTRY_FORMAT, entry_digest
from horon_bundle.publish.public_url import PublicUrl
from horon_bundle.publish.release import ReleaseItem

LOCK_NAME = "marketplace.lock"
MAX_MARKETPLACE_BYTES = 16 << 20


class Store(Protocol):
    """What the marketplace needs of a `file://` store (`file_store.FileStore`)."""

    root: Path
    public_url: PublicUrl | None

    def read_document(self, path: Path) -> dict[str, Any] | None: ...

    def replace_file(self, final: Path, data: bytes) -> None: ...


def _refused(message: str) -> Refused:
    return Refused.one(codes.PUBLISH_MARKETPLACE, message)


def _read(path: Path, limit: int, what: str) -> bytes | None:
    try:
        return read_input(path, limit=limit, what=what, missing_ok=True, follow_symlinks=False)
    except Refused as exc:
        raise Refused(Finding(codes.PUBLISH_DESTINATION_STATE, f.message)
                      for f in exc.findings) from None


def _current(store: Store) -> tuple[bytes | None, str | None]:
    """The marketplace file's bytes and name, (None, None) when there is none yet."""
    path = store.root / MARKETPLACE_FILE
    data = _read(path, MAX_MARKETPLACE_BYTES, "marketplace")
    if data is None:
        return None, None
    try:
        document = read_json(data, source=str(path), max_bytes=MAX_MARKETPLACE_BYTES)
    except Refused as exc:
        raise Refused(Finding(codes.PUBLISH_DESTINATION_STATE, f.message)
                      for f in exc.findings) from None
    name = document.get("name") if isinstance(document, dict) else None
    if not isinstance(name, str):
        raise Refused.one(codes.PUBLISH_DESTINATION_STATE, f"{path}: a marketplace without a name")
    return data, name


def marketplace_name(items: list[ReleaseItem], current: str | None) -> str | None:
    """The marketplace's name (None: nothing names it, and nothing needs to be listed)."""
    indexed = sorted({i.harness.marketplace for i in items
                      if i.harness is not None and i.harness.marketplace is not None})
    if len(indexed) > 1:
        raise _refused(f"the release holds the indexes of marketplaces {', '.join(indexed)}; "
                       "one store serves one marketplace")
    if indexed:
        if current is not None and current != indexed[0]:
            raise _refused(f"the store serves the marketplace {current!r}; this release's "
                           f"index names {indexed[0]!r} (one store serves one marketplace)")
        return indexed[0]
    if current is not None:
        return current
    names = sorted({i.harness.name for i in items if i.harness is not None})
    if len(names) > 1:
        raise _refused(f"the release holds {', '.join(names)} and no marketplace index, and the "
                       "store has no marketplace yet: nothing names it")
    return names[0] if names else None


def live_versions(store: Store) -> dict[str, list[str]]:
    """Every harness bundle name in the store, with its versions that are not yanked."""
    index = store.root / "harness" / "index"
    found: dict[str, list[str]] = {}
    try:
        directories = sorted(index.iterdir()) if index.is_dir() else []
        for directory in directories:
            if directory.name.startswith(".") or not directory.is_dir() \
                    or directory.is_symlink():
                continue
            yanks = store.root / "harness" / "yanks" / directory.name
            versions = [p.name[: -len(".json")] for p in directory.iterdir()
                        if p.name.endswith(".json") and not p.name.startswith(".")]
            live = [v for v in versions if not (yanks / f"{v}.json").exists()]
            if live:
                found[directory.name] = sorted(live, key=release_order)
    except OSError as exc:
        raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{index}: {exc.strerror}") from None
    return found


def listing_findings(store: Store, items: list[ReleaseItem]) -> list[Finding]:
    """Before anything is uploaded: the marketplace this release leaves the store with can be
    named, and Claude Code accepts its name and the name of every plugin it lists."""
    if store.public_url is None:
        return []
    try:
        name = marketplace_name(items, _current(store)[1])
        listed = set(live_versions(store))
    except Refused as exc:
        return list(exc.findings)
    if name is None:
        return []
    findings = []
    if problem := marketplace_name_problem(name):
        findings.append(Finding(codes.PUBLISH_MARKETPLACE, f"marketplace name {name!r} {problem}"))
    listed |= {i.harness.name for i in items if i.harness is not None}
    findings.extend(Finding(codes.PUBLISH_MARKETPLACE,
                            f"{plugin}: the marketplace would list it, and its name {problem}")
                    for plugin in sorted(listed) if (problem := plugin_name_problem(plugin)))
    return findings


def _listed(store: Store, public_url: PublicUrl, name: str, version: str) -> HostedPlugin:
    """One plugin's marketplace entry, from its store entry and its catalogue's blob."""
    path = store.root / "harness" / "index" / name / f"{version}.json"
    entry = store.read_document(path)
    if entry is None:
        raise Refused.one(codes.PUBLISH_DESTINATION_STATE, f"{path}: vanished while read")
    archive = entry_digest(path, entry, HARNESS_ENTRY_FORMAT)
    catalogue_sha = entry_digest(path, entry, HARNESS_ENTRY_FORMAT, field="catalogue")
    blob = store.root / "blobs" / "sha256" / catalogue_sha
    data = _read(blob, MAX_CATALOGUE_BYTES, "store blob")
    if data is None or hash_bytes(data).sha256 != catalogue_sha:
        raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                          f"{blob}: the catalogue {path} names is missing or holds other bytes")
    try:
        catalogue = parse_catalogue(data, source=str(blob))
    except Refused as exc:
        raise Refused(Finding(codes.PUBLISH_DESTINATION_STATE, f.message)
                      for f in exc.findings) from None
    if (catalogue.name, catalogue.version) != (name, version):
        raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                          f"{path}: its catalogue is {catalogue.name} {catalogue.version}")
    description = catalogue.document["plugin"].get("description")
    return HostedPlugin(name=name, version=version, sha256=archive,
                        url=public_url.of(f"blobs/sha256/{archive}"),
                        description=description if isinstance(description, str) else None)


def refresh(store: Store, items: list[ReleaseItem]) -> dict[str, Any] | None:
    """Rewrite the marketplace from the committed entries; what the receipt says of it."""
    public_url = store.public_url
    if public_url is None:
        return None
    with exclusive_use(store.root / ".tmp", LOCK_NAME):
        before, current = _current(store)
        name = marketplace_name(items, current)
        if name is None:
            return None
        listed = [_listed(store, public_url, plugin, versions[-1])
                  for plugin, versions in live_versions(store).items()]
        problems = [f"marketplace name {name!r} {p}" for p in [marketplace_name_problem(name)]
                    if p]
        problems += [f"{plugin.name}: its name {p}" for plugin in listed
                     if (p := plugin_name_problem(plugin.name))]
        if problems:
            raise _refused("; ".join(problems))
        data = hosted_marketplace_bytes(name, public_url.host, listed)
        path = store.root / MARKETPLACE_FILE
        if data != before:
            store.replace_file(path, data)
    return {"name": name, "location": "file://" + path.as_posix(),
            "url": public_url.of(MARKETPLACE_FILE), "sha256": hash_bytes(data).sha256,
            "plugins": len(listed), "status": "unchanged" if data == before else "written"}
