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
