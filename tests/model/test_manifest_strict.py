"""Every strict-reading rule of plugin.json, each refused with its own code, nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BuiltExample
from tests.helpers import (
    assert_refused,
    cli,
    copy_bundle,
    edit_manifest,
    tree_snapshot,
    write_manifest_bytes,
)

Edit = Callable[[dict[str, Any]], None]


def _raw(bundle: Path) -> str:
    return (bundle / "plugin.json").read_text()


def _check(bundle: Path, code: str) -> None:
    before = tree_snapshot(bundle)
    for args in (("verify", bundle), ("verify", "--json", bundle)):
        result = cli(*args)
        assert_refused(result, code)
        assert tree_snapshot(bundle) == before
    report = cli("verify", "--json", bundle).json()
    codes = [f["code"] for check in report["checks"] for f in check["findings"]]
    assert code in codes


def _set(*path: str | int, value: Any) -> Edit:
    def change(document: dict[str, Any]) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _delete(*path: str | int) -> Edit:
    def change(document: dict[str, Any]) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


EDITS: dict[str, tuple[Edit, str]] = {
    "unknown field at depth 1": (_set("homepage", value="x"), "manifest.unknown-field"),
    "unknown field at depth 3": (_set("assets", 0, "signature", value="x"),
                                 "manifest.unknown-field"),
    "missing field": (_delete("version"), "manifest.missing-field"),
    "null for a field": (_set("library", "size", value=None), "manifest.missing-field"),
    "bool where an int belongs": (_set("library", "size", value=True), "manifest.type"),
    "string where an int belongs": (_set("abi", "minor", value="0"), "manifest.type"),
    "dot-dot path": (_set("license", "path", value="../LICENSE"), "manifest.path-unsafe"),
    "backslash path": (_set("library", "path", value="lib\\libhoron_example.so"),
                       "manifest.path-unsafe"),
    "absolute path": (_set("license", "path", value="/etc/passwd"), "manifest.path-unsafe"),
    "unsorted features": (_set("features", value=["greeting", "clock"]),
                          "manifest.features-order"),
    "duplicate feature": (_set("features", value=["clock", "clock"]), "manifest.features-order"),
    "library extension of another OS": (_set("library", "path", value="lib/horon_example.dll"),
                                        "manifest.library-extension"),
    "QA feature in a release bundle": (_set("features", value=["clock", "greeting", "qa-provider"]),
                                       "manifest.qa-feature"),
    "unknown channel": (_set("channel", value="beta"), "manifest.value"),
    "malformed id": (_set("id", value="Example"), "manifest.value"),
    "control character in name": (_set("name", value="Ex\u0007ample"), "manifest.value"),
    "uppercase digest": (_set("library", "sha256", value="A" * 64), "manifest.value"),
    "32-bit target": (_set("target", value="i686-unknown-linux-gnu"), "manifest.target"),
    "other format": (_set("format", value="horon.plugin.v2"), "manifest.format"),
    "two provenance assets": (lambda d: d["assets"].append(dict(d["assets"][0])),
                              "manifest.assets"),
    "library outside lib/": (_set("library", "path", value="libhoron_example.so"),
                             "manifest.path-place"),
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_schema_rule_refused(case: str, example_release: BuiltExample, tmp_path: Path) -> None:
    edit, code = EDITS[case]
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_manifest(bundle, edit)
    _check(bundle, code)


def test_case_insensitive_duplicate_path(example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def change(document: dict[str, Any]) -> None:
        document["sidecars"] = [{"name": "twin", "path": "sidecars/Tool", "sha256": "0" * 64,
                                 "size": 1, "executable": False},
                                {"name": "twin-two", "path": "sidecars/tool",
                                 "sha256": "0" * 64, "size": 1, "executable": False}]
    edit_manifest(bundle, change)
    _check(bundle, "manifest.path-collision")


RAW: dict[str, tuple[Callable[[str], bytes], str]] = {
    "duplicate key": (lambda t: t.replace('"channel": "release",',
                                          '"channel": "release", "channel": "qa",', 1).encode(),
                      "json.duplicate-key"),
    "NaN": (lambda t: t.replace('"size": ', '"size": NaN, "x": ', 1).encode(),
            "json.nonfinite"),
    "1e400": (lambda t: t.replace('"minor": 0', '"minor": 1e400', 1).encode(), "json.float"),
    "BOM": (lambda t: b"\xef\xbb\xbf" + t.encode(), "json.encoding"),
    "UTF-16": (lambda t: t.encode("utf-16-le"), "json.encoding"),
    "lone surrogate": (lambda t: t.replace('"Example"', '"Ex\\ud800ample"', 1).encode(),
                       "json.encoding"),
    "trailing data": (lambda t: (t + "{}").encode(), "json.trailing-data"),
    "second document": (lambda t: (t + t).encode(), "json.trailing-data"),
    "20-digit integer": (lambda t: t.replace('"minor": 0', '"minor": 12345678901234567890', 1)
                         .encode(), "json.integer-range"),
    "negative integer": (lambda t: t.replace('"minor": 0', '"minor": -1', 1).encode(),
                         "json.integer-range"),
    "deep nesting": (lambda t: t.replace('"sidecars": []', '"sidecars": ' + "[" * 70 + "]" * 70,
                                         1).encode(), "json.too-deep"),
    "over 1 MiB": (lambda t: t.replace('"name": "Example"', '"name": "' + "x" * (1 << 20) + '"',
                                       1).encode(), "json.too-large"),
    "not JSON": (lambda t: b"{'id': 1}", "json.syntax"),
}


@pytest.mark.parametrize("case", sorted(RAW))
def test_syntax_rule_refused(case: str, example_release: BuiltExample, tmp_path: Path) -> None:
    make, code = RAW[case]
    bundle = copy_bundle(example_release.bundle, tmp_path)
    write_manifest_bytes(bundle, make(_raw(bundle)))
    _check(bundle, code)


def test_findings_are_collected_not_stopped_at_the_first(example_release: BuiltExample,
                                                         tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def change(document: dict[str, Any]) -> None:
        document["homepage"] = "x"
        document["features"] = ["greeting", "clock"]
        document["library"]["size"] = True
    edit_manifest(bundle, change)
    result = cli("verify", bundle)
    assert result.status == 1
    assert {"manifest.unknown-field", "manifest.features-order", "manifest.type"} <= set(
        result.codes)


def test_one_line_message_names_field_and_value(example_release: BuiltExample,
                                                tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_manifest(bundle, _set("library", "size", value=True))
    result = cli("verify", "--json", bundle)
    findings = [f for check in result.json()["checks"] for f in check["findings"]]
    message = next(f["message"] for f in findings if f["code"] == "manifest.type")
    assert "library.size" in message and "true" in message and "\n" not in message
    assert all(f["hint"] for f in findings)


def test_json_report_is_versioned(example_release: BuiltExample) -> None:
    report = cli("verify", "--json", example_release.archive).json()
    assert report["format"] == "horon.verify-report.v1"
    assert report["ok"] is True
    assert all(check["result"] in ("pass", "skip") for check in report["checks"])
    json.dumps(report)


# Direct decoder tables: parse_manifest(bytes) on the real example's plugin.json with one edit,
# asserting the exact (code, message) list of the refusal (each names its field path).

from horon_bundle.core.errors import Refused  # noqa: E402
from horon_bundle.model.manifest import Manifest, bundle_name, parse_manifest  # noqa: E402

_SIDECAR = {"name": "tool", "path": "sidecars/tool", "sha256": "0" * 64, "size": 1,
            "executable": True}


def _document(example: BuiltExample) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((example.bundle / "plugin.json").read_text())
    return loaded


def _bytes(document: dict[str, Any]) -> bytes:
    return json.dumps(document, indent=2, sort_keys=True).encode()


def _refusal(data: bytes, source: str = "plugin.json") -> list[tuple[str, str]]:
    with pytest.raises(Refused) as caught:
        parse_manifest(data, source=source)
    return [(f.code.name, f.message) for f in caught.value.findings]


def _edits(*edits: Edit) -> Edit:
    def change(document: dict[str, Any]) -> None:
        for edit in edits:
            edit(document)
    return change


def _append(key: str, item: Callable[[dict[str, Any]], Any]) -> Edit:
    def change(document: dict[str, Any]) -> None:
        document[key].append(item(document))
    return change


_ROLES = "('provenance', 'sbom', 'notices')"
_P = "plugin.json: "

EXACT: dict[str, tuple[Edit, list[tuple[str, str]]]] = {
    "abi major 2": (_set("abi", "major", value=2), [
        ("manifest.value", _P + "abi.major: 2, a horon.plugin.v1 bundle has ABI major 1")]),
    "abi major 0": (_set("abi", "major", value=0), [
        ("manifest.value", _P + "abi.major: 0, a horon.plugin.v1 bundle has ABI major 1")]),
    "abi minor 65536": (_set("abi", "minor", value=65536), [
        ("manifest.value", _P + "abi.minor: 65536 does not fit 16 bits")]),
    "abi minor 65537": (_set("abi", "minor", value=65537), [
        ("manifest.value", _P + "abi.minor: 65537 does not fit 16 bits")]),
    "unknown role of the provenance asset": (_set("assets", 0, "role", value="bogus"), [
        ("manifest.value", _P + f"assets[0].role: 'bogus' is not one of {_ROLES}")]),
    "sbom twice": (_append("assets", lambda d: {**d["assets"][1], "path": "sbom2.cdx.json"}), [
        ("manifest.assets", _P + "assets: sbom declared more than once")]),
    "notices twice": (_append("assets", lambda d: {**d["assets"][2], "path": "NOTICES-2"}), [
        ("manifest.assets", _P + "assets: notices declared more than once")]),
    "asset below the top level": (_set("assets", 1, "path", value="docs/sbom.cdx.json"), [
        ("manifest.path-place",
         _P + "assets[1].path: 'docs/sbom.cdx.json' is not at the top level of the bundle")]),
    "license at a reserved path": (_set("license", "path", value="SHA256SUMS"), [
        ("manifest.path-unsafe", _P + "license.path: 'SHA256SUMS' is reserved")]),
    "asset at a reserved path": (_set("assets", 2, "path", value="plugin.json"), [
        ("manifest.path-unsafe", _P + "assets[2].path: 'plugin.json' is reserved")]),
    "sidecar at a reserved path": (_set("sidecars", value=[{**_SIDECAR, "path": "plugin.json"}]), [
        ("manifest.path-place", _P + "sidecars[0].path: 'plugin.json' is not under sidecars/"),
        ("manifest.path-unsafe", _P + "sidecars[0].path: 'plugin.json' is reserved")]),
    "one sidecar path twice": (_set("sidecars", value=[_SIDECAR, {**_SIDECAR, "name": "two"}]), [
        ("manifest.path-collision", _P + "paths: 'sidecars/tool' is declared twice")]),
    "sidecar paths differing in case": (
        _set("sidecars", value=[{**_SIDECAR, "path": "sidecars/Tool"}, _SIDECAR]), [
            ("manifest.path-collision",
             _P + "paths: 'sidecars/Tool' and 'sidecars/tool' collide")]),
    "license and asset one path": (_set("assets", 2, "path", value="LICENSE"), [
        ("manifest.path-collision", _P + "paths: 'LICENSE' is declared twice")]),
    "not a target triple": (_set("target", value="x86_64"), [
        ("manifest.target", _P + "target: 'x86_64' is not a target triple")]),
    "malformed profile": (_set("profile", value="Release"), [
        ("manifest.value", _P + "profile: 'Release' is not a cargo profile name")]),
    "unknown channel": (_set("channel", value="beta"), [
        ("manifest.value", _P + "channel: 'beta' is not 'release' or 'qa'")]),
    "other wire schema": (_set("wire_schema", value="horon.wire.v2"), [
        ("manifest.value", _P + "wire_schema: 'horon.wire.v2', expected 'horon.wire.v1'")]),
    "malformed id": (_set("id", value="Example"), [
        ("manifest.value", _P + "id: 'Example' does not match [a-z][a-z0-9-]{1,62}")]),
    "name with trailing space": (_set("name", value="Example "), [
        ("manifest.value", _P + "name: 'Example ': leading or trailing whitespace")]),
    "not a semantic version": (_set("version", value="1.0"), [
        ("manifest.value", _P + "version: '1.0' is not a semantic version")]),
    "sidecar outside sidecars/": (_set("sidecars", value=[{**_SIDECAR, "path": "bin/tool"}]), [
        ("manifest.path-place", _P + "sidecars[0].path: 'bin/tool' is not under sidecars/")]),
    "license below the top level": (_set("license", "path", value="legal/LICENSE"), [
        ("manifest.path-place",
         _P + "license.path: 'legal/LICENSE' is not at the top level of the bundle")]),
    "unsafe library path": (_set("library", "path", value="../x"), [
        ("manifest.path-unsafe", _P + "library.path: '../x': '..' component")]),
    "bad digest and misplaced library": (
        _edits(_set("library", "sha256", value="ABC"),
               _set("library", "path", value="libhoron_example.so")), [
            ("manifest.value", _P + "library.sha256: 'ABC' is not 64 lowercase hex")]),
    "bad asset digest": (_set("assets", 1, "sha256", value="0" * 7), [
        ("manifest.value", _P + "assets[1].sha256: '0000000' is not 64 lowercase hex")]),
    "no size and misplaced library": (
        _edits(_delete("library", "size"), _set("library", "path", value="libhoron_example.so")),
        [("manifest.missing-field", _P + "library.size: required field is missing")]),
    "an asset that is not an object": (_append("assets", lambda d: 5), [
        ("manifest.type", _P + "assets[3]: expected an object, got 5")]),
    "an asset without a role": (_delete("assets", 0, "role"), [
        ("manifest.missing-field", _P + "assets[0].role: required field is missing")]),
    "an asset without a size": (_delete("assets", 2, "size"), [
        ("manifest.missing-field", _P + "assets[2].size: required field is missing")]),
    "library in a subdirectory of lib/": (
        _set("library", "path", value="lib/sub/libhoron_example.so"), [
            ("manifest.path-place",
             _P + "library.path: 'lib/sub/libhoron_example.so' is not a file directly "
                  "under lib/")]),
    "bad spdx and misplaced license": (
        _edits(_set("license", "spdx", value="Apache-2.0!"),
               _set("license", "path", value="legal/LICENSE")), [
            ("manifest.value", _P + "license.spdx: 'Apache-2.0!' is not an SPDX expression")]),
    "bad sidecar name outside sidecars/": (
        _set("sidecars", value=[{**_SIDECAR, "name": "Tool", "path": "bin/tool"}]), [
            ("manifest.value", _P + "sidecars[0].name: 'Tool' is not a sidecar name")]),
    "sidecar without executable outside sidecars/": (
        _set("sidecars", value=[{k: v for k, v in _SIDECAR.items() if k != "executable"}
                                | {"path": "bin/tool"}]), [
            ("manifest.missing-field", _P + "sidecars[0].executable: required field is missing")]),
}


@pytest.mark.parametrize("case", sorted(EXACT))
def test_decoder_refusal_is_exact(case: str, example_release: BuiltExample) -> None:
    edit, expected = EXACT[case]
    document = _document(example_release)
    edit(document)
    assert _refusal(_bytes(document)) == expected


@pytest.mark.parametrize("field", ["id", "name", "version", "target", "profile", "channel",
                                   "wire_schema"])
def test_empty_text_field_is_refused(field: str, example_release: BuiltExample) -> None:
    # the decoder's narrowing asserts rely on this: no empty value reaches a Manifest
    document = _document(example_release)
    document[field] = ""
    found = _refusal(_bytes(document))
    assert len(found) == 1
    assert found[0][0] in ("manifest.value", "manifest.target")
    assert found[0][1].startswith(f"plugin.json: {field}: ")


def test_decoded_manifest_has_every_field(example_release: BuiltExample) -> None:
    document = _document(example_release)
    document["abi"]["minor"] = 0xFFFF
    document["sidecars"] = [_SIDECAR]
    manifest = parse_manifest(_bytes(document))
    assert isinstance(manifest, Manifest)
    assert manifest.to_json() == document
    assert manifest.abi_minor == 65535 and manifest.abi_major == 1
    assert manifest.sidecars[0].executable is True
    assert manifest.asset("sbom") is not None and manifest.asset("sbom") == manifest.assets[1]


def test_source_names_the_file_in_every_message(example_release: BuiltExample) -> None:
    document = _document(example_release)
    document["channel"] = "beta"
    assert _refusal(_bytes(document), source="dist/plugin.json") == [
        ("manifest.value", "dist/plugin.json: channel: 'beta' is not 'release' or 'qa'")]
    assert [code for code, message in _refusal(b"{'id': 1}", source="dist/plugin.json")
            if message.startswith("dist/plugin.json: ")] == ["json.syntax"]


def test_bundle_name() -> None:
    triple = "x86_64-unknown-linux-gnu"
    assert bundle_name("example", "0.1.0", triple, "release") == f"example-0.1.0-{triple}"
    assert bundle_name("example", "0.1.0", triple, "qa") == f"example-0.1.0-{triple}-qa"
