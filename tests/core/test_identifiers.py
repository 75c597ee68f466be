"""Identifiers are matched whole: `$` matches before a final newline, `fullmatch` does not.

Every identifier field of plugin.json and of the release declaration is swept with trailing
(and embedded) `\\n`, `\\r`, NUL, tab and the Unicode line breaks U+0085, U+2028, U+2029; each
value is refused. `publish` can no longer write `index/example/0.1.0\\n/…`. A source scan
keeps the class closed: no `re.match` and no `$`-anchored pattern in the package.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.model.declaration import parse_declaration
from horon_bundle.model.manifest import parse_manifest
from horon_bundle.publish.destinations.file_store import FileStore
from horon_bundle.publish.destinations.interface import FileAddress
from horon_bundle.publish.release import ReleaseItem
from tests.bundle_edit import rezip
from tests.conftest import BuiltExample
from tests.helpers import (
    HOST,
    REPO,
    assert_refused,
    cli,
    copy_bundle,
    edit_manifest,
    edit_provenance,
    tree_snapshot,
)
from tests.publish_support import publish_env

SUFFIXES = ["\n", "\r", "\0", "\t", "\u0085", "\u2028", "\u2029", "\r\n"]
HEX = "a" * 64
MANIFEST: dict[str, Any] = {
    "format": "horon.plugin.v1", "id": "example", "name": "Example", "version": "0.1.0",
    "target": HOST, "profile": "release", "channel": "release",
    "abi": {"major": 1, "minor": 0}, "wire_schema": "horon.wire.v1",
    "features": ["clock", "greeting"],
    "library": {"path": "lib/libhoron_example.so", "sha256": HEX, "size": 1},
    "license": {"spdx": "Apache-2.0", "path": "LICENSE", "sha256": HEX, "size": 1},
    "assets": [{"role": "provenance", "path": "provenance.json", "sha256": HEX, "size": 1},
               {"role": "sbom", "path": "sbom.cdx.json", "sha256": HEX, "size": 1}],
    "sidecars": [{"name": "helper", "path": "sidecars/helper", "sha256": HEX, "size": 1,
                  "executable": True}],
}
# every string field of plugin.json, by its place in the document
FIELDS: list[tuple[str | int, ...]] = [
    ("format",), ("id",), ("name",), ("version",), ("target",), ("profile",), ("channel",),
    ("wire_schema",), ("features", 0), ("features", 1), ("library", "path"),
    ("library", "sha256"), ("license", "spdx"), ("license", "path"), ("license", "sha256"),
    ("assets", 0, "role"), ("assets", 0, "path"), ("assets", 0, "sha256"),
    ("assets", 1, "role"), ("assets", 1, "path"), ("sidecars", 0, "name"),
    ("sidecars", 0, "path"), ("sidecars", 0, "sha256"),
]


def _with(place: tuple[str | int, ...], change: Any) -> bytes:
    document = copy.deepcopy(MANIFEST)
    parent: Any = document
    for key in place[:-1]:
        parent = parent[key]
    parent[place[-1]] = change(parent[place[-1]])
    return json.dumps(document).encode()


def test_the_base_manifest_is_valid() -> None:
    parse_manifest(json.dumps(MANIFEST).encode())


@pytest.mark.parametrize("place", FIELDS, ids=lambda p: ".".join(map(str, p)))
@pytest.mark.parametrize("suffix", SUFFIXES, ids=lambda s: f"U+{ord(s[0]):04X}")
def test_every_manifest_field_refuses_a_line_break_or_control(place: tuple[str | int, ...],
                                                              suffix: str) -> None:
    for change in (lambda v: v + suffix, lambda v: v[:1] + suffix + v[1:],
                   lambda v: suffix + v):
        with pytest.raises(Refused):
            parse_manifest(_with(place, change))


DECLARATION = """schema = 1
[publish]
destination = "unconfigured"
[qa]
providers = ["acme-test-*"]
[[plugin]]
id = "example"
name = "Example"
package = "horon-example"
features = ["clock"]
qa-features = ["qa-provider"]
targets = ["x86_64-unknown-linux-gnu"]
profile = "release"
license-file = "LICENSE"
[[plugin.sidecar]]
name = "helper"
source = "bin/helper"
"""
DECLARED = ['"acme-test-*"', '"example"', '"Example"', '"horon-example"', '"clock"',
            '"qa-provider"', '"x86_64-unknown-linux-gnu"', '"release"', '"LICENSE"', '"helper"',
            '"bin/helper"']
TOML_ESCAPES = {"\n": "\\n", "\r": "\\r", "\0": "\\u0000", "\t": "\\t", "\u0085": "\\u0085",
                "\u2028": "\\u2028", "\u2029": "\\u2029", "\r\n": "\\r\\n"}


def test_the_base_declaration_is_valid(tmp_path: Path) -> None:
    parse_declaration(DECLARATION.encode(), tmp_path / "horon-release.toml")


@pytest.mark.parametrize("value", DECLARED)
@pytest.mark.parametrize("suffix", SUFFIXES, ids=lambda s: f"U+{ord(s[0]):04X}")
def test_every_declaration_field_refuses_a_line_break_or_control(
        tmp_path: Path, value: str, suffix: str) -> None:
    text = DECLARATION.replace(value, value[:-1] + TOML_ESCAPES[suffix] + '"', 1)
    assert text != DECLARATION
    with pytest.raises(Refused) as caught:
        parse_declaration(text.encode(), tmp_path / "horon-release.toml")
    assert {c.split(".")[0] for c in caught.value.codes()} == {"declaration"}


@pytest.mark.parametrize(("field", "code"), [
    ("version", "manifest.value"), ("profile", "manifest.value"),
    ("target", "manifest.target"), ("id", "manifest.value")])
def test_a_trailing_newline_is_refused_by_verify(example_release: BuiltExample,
                                                 tmp_path: Path, field: str,
                                                 code: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_manifest(bundle, lambda m: m.__setitem__(field, m[field] + "\n"))
    before = tree_snapshot(tmp_path)
    assert_refused(cli("verify", bundle), code)
    assert tree_snapshot(tmp_path) == before


def test_license_spdx_with_a_trailing_newline(example_release: BuiltExample,
                                              tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_manifest(bundle, lambda m: m["license"].__setitem__("spdx", "Apache-2.0\n"))
    assert_refused(cli("verify", bundle), "manifest.value")


def test_publish_cannot_write_a_newline_into_the_store(example_release: BuiltExample,
                                                       tmp_path: Path) -> None:
    """The whole attack: version `0.1.0\\n` in plugin.json and the provenance, re-zipped."""
    bundle = copy_bundle(example_release.bundle, tmp_path / "edit")
    edit_provenance(bundle, lambda s: s["predicate"]["buildDefinition"]["externalParameters"]
                    .__setitem__("version", "0.1.0\n"))
    edit_manifest(bundle, lambda m: m.__setitem__("version", "0.1.0\n"))
    dist = tmp_path / "dist"
    dist.mkdir()
    rezip(bundle, dist / f"example-0.1.0-{HOST}.zip")
    store = tmp_path / "store"
    store.mkdir()
    before = tree_snapshot(tmp_path)
    result = cli("publish", dist, env=publish_env(f"file://{store}"))
    assert_refused(result, "manifest.value")
    assert tree_snapshot(tmp_path) == before
    assert not (store / "index").exists()


def test_the_store_names_its_entries_only_from_whole_identifiers(tmp_path: Path) -> None:
    """Defence in depth: the file store's own naming check, whatever plugin.json said."""
    manifest = parse_manifest(json.dumps(MANIFEST).encode())
    store = FileStore(FileAddress(root=tmp_path))
    for field, value in (("version", "0.1.0\n"), ("id", "example\n"), ("target", HOST + "\n")):
        bad = type(manifest)(**{**{f: getattr(manifest, f) for f in manifest.__slots__},
                                field: value})
        item = ReleaseItem(archive=tmp_path / "a.zip", digest=Digest(HEX, 1), manifest=bad,
                           manifest_bytes=b"", signature=None, build_record=None)
        [finding] = store.naming_findings(item)
        assert finding.code.name == "publish.name"
        assert repr(value) in finding.message


PACKAGE = REPO / "tooling" / "horon_bundle"
_PREFIX_MARK = "# prefix match:"


def test_no_identifier_grammar_matches_a_prefix() -> None:
    """`.match(` only where a prefix is meant (and says so); no pattern anchored with `$`."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(PACKAGE)}:{number}"
            if re.search(r"\.match\(", line) and _PREFIX_MARK not in line:
                offenders.append(f"{where}: {line.strip()}")
            if re.search(r"""\$["']\)?\s*(?:,|\)|$)""", line) and "re." in line + "".join(
                    path.read_text(encoding="utf-8").splitlines()[max(0, number - 3):number]):
                offenders.append(f"{where}: {line.strip()}")
    assert offenders == []
