"""Marketplace indexes in a release: `<marketplace>.index.json` beside the zips it pins.

A marketplace build writes one index pinning each plugin's version to its zip's SHA-256.
Publish reads every `*.index.json` directly in DIST_DIR strictly and requires every plugin it
lists to be a harness zip of this release with exactly that name, version, file name and
digest (an index pointing at bytes that are not published would pin nothing); the index is
then published with each of those zips, as one more file beside it (role
`marketplace-index`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.model.harness.marketplace import parse_index
from horon_bundle.publish.release import (
    MARKETPLACE_INDEX_MEDIA_TYPE,
    MARKETPLACE_INDEX_SUFFIX,
    ROLE_MARKETPLACE_INDEX,
    ReleaseItem,
    SideFile,
    read_side,
)


def find_indexes(dist_dir: Path) -> list[Path]:
    return sorted((p for p in dist_dir.iterdir()
                   if p.name.endswith(MARKETPLACE_INDEX_SUFFIX) and not p.name.startswith(".")),
                  key=lambda p: os.fsencode(p.name))  # a name need not be UTF-8


def attach_indexes(dist_dir: Path, items: list[ReleaseItem],
                   ) -> tuple[list[ReleaseItem], list[Finding]]:
    """The items with the marketplace index that lists each attached, and every problem."""
    findings = Findings()
    by_zip = {item.archive.name: item for item in items if item.harness is not None}
    attached: dict[str, tuple[SideFile, str]] = {}
    for path in find_indexes(dist_dir):
        data = read_side(path, findings)
        if data is None:
            continue
        try:
            index = parse_index(data, source=path.name)
        except Refused as exc:
            findings.extend(exc.findings)
            continue
        side = SideFile(role=ROLE_MARKETPLACE_INDEX, name=path.name, data=data,
                        digest=hash_bytes(data), media_type=MARKETPLACE_INDEX_MEDIA_TYPE)
        for plugin in index.plugins:
            item = by_zip.get(plugin.zip)
            harness = item.harness if item is not None else None
            if item is None or harness is None:
                findings.add(codes.PUBLISH_SIDE_FILE,
                             f"{path.name}: lists {plugin.zip}, which is not a harness zip of "
                             "this release")
            elif (harness.name, harness.version, item.digest.sha256) != (
                    plugin.name, plugin.version, plugin.sha256):
                findings.add(codes.PUBLISH_SIDE_FILE,
                             f"{path.name}: pins {plugin.name} {plugin.version} to sha256 "
                             f"{plugin.sha256}; {plugin.zip} is {harness.name} "
                             f"{harness.version} with sha256 {item.digest.sha256}")
            elif plugin.zip in attached:
                findings.add(codes.PUBLISH_SIDE_FILE,
                             f"{path.name}: {plugin.zip} is also listed by "
                             f"{attached[plugin.zip][0].name}")
            else:
                attached[plugin.zip] = (side, index.marketplace)
    result = []
    for item in items:
        listed = attached.get(item.archive.name)
        if listed is not None and item.harness is not None:
            result.append(replace(item, harness=replace(
                item.harness, marketplace_index=listed[0], marketplace=listed[1])))
        else:
            result.append(item)
    return result, list(findings)
