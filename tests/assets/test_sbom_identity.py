"""SBOM licences an SPDX parser accepts, and package URLs that claim no crates.io identity for
crates that did not come from crates.io: judged by `license-expression` (strict, the SPDX list)
and `packageurl`, the readers licence and vulnerability tools use."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from license_expression import get_spdx_licensing  # type: ignore[import-untyped]
from packageurl import PackageURL

from horon_bundle.assets.sbom import build_sbom
from horon_bundle.assets.sbom_subject import SbomSubject
from horon_bundle.assets.spdx_expression import spdx_expression
from horon_bundle.model.crate_origin import crate_origin
from horon_bundle.model.graph import Graph, GraphEdge, GraphPackage
from horon_bundle.model.provenance import BuildFacts
from horon_bundle.model.provenance_statement import statement

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"
SPARSE_CRATES_IO = "sparse+https://index.crates.io/"
OTHER_REGISTRY = "sparse+https://crates.example.com/index/"
GIT = "git+https://github.com/example/helper?branch=main#0123456789abcdef0123456789abcdef01234567"
LICENSING = get_spdx_licensing()


def is_spdx(expression: str) -> bool:
    """Strictly valid SPDX, as license-expression judges it (its validate raises on some
    malformed input instead of reporting it, e.g. `MIT/Apache-2.0`: that counts as invalid)."""
    try:
        return not LICENSING.validate(expression, strict=True).errors
    except Exception:  # noqa: BLE001 - any failure of the parser is a refusal
        return False


@pytest.mark.parametrize(("cargo", "expected"), [
    ("MIT/Apache-2.0", "MIT OR Apache-2.0"),
    ("MIT / Apache-2.0", "MIT OR Apache-2.0"),
    ("Apache-2.0/MIT/Zlib", "Apache-2.0 OR MIT OR Zlib"),
    ("mit or apache-2.0", "MIT OR Apache-2.0"),
    ("(MIT OR Apache-2.0) AND Unicode-DFS-2016", "(MIT OR Apache-2.0) AND Unicode-DFS-2016"),
    ("Apache-2.0 with llvm-exception OR MIT", "Apache-2.0 WITH LLVM-exception OR MIT"),
    ("GPL-2.0+", "GPL-2.0+"),
    ("Unlicense/MIT", "Unlicense OR MIT"),
    # not convertible: kept as a named licence by the SBOM, never an expression
    ("MIT/Apache-2.0 AND BSD-3-Clause", None),  # which of / and AND binds tighter?
    ("LicenseRef-acme", None), ("MIT+", None), ("MIT AND", None), ("MIT OR", None),
    ("(MIT", None), ("MIT)", None), ("MIT WITH MIT", None), ("LLVM-exception", None),
    ("", None), ("Proprietary", None), ("MIT, Apache-2.0", None), ("MIT" + " OR MIT" * 300, None),
])
def test_cargo_licences_become_valid_spdx_or_nothing(cargo: str, expected: str | None) -> None:
    converted = spdx_expression(cargo)
    assert converted == expected
    if converted is not None:
        assert is_spdx(converted)
    assert not is_spdx("MIT/Apache-2.0")  # the reason for all this


def test_every_listed_identifier_is_spdx() -> None:
    text = resources.files("horon_bundle.assets").joinpath("spdx_ids.txt").read_text()
    rows = [line.split(" ", 1) for line in text.splitlines() if not line.startswith("#")]
    assert len(rows) > 700
    for kind, name in rows:
        assert is_spdx(name if kind == "license" else f"MIT WITH {name}"), name


@pytest.mark.parametrize(("source", "kind", "purl"), [
    (CRATES_IO, "crates.io", "pkg:cargo/helper@1.2.0"),
    (SPARSE_CRATES_IO, "crates.io", "pkg:cargo/helper@1.2.0"),
    (OTHER_REGISTRY, "registry",
     "pkg:cargo/helper@1.2.0?repository_url=https://crates.example.com/index/"),
    (GIT, "git", "pkg:generic/helper@1.2.0?vcs_url=git%2Bhttps://github.com/example/helper"
                 "%400123456789abcdef0123456789abcdef01234567"),
    ("path", "path", None),
    ("directory+/vendor", "unknown", None),
])
def test_crate_origins(source: str, kind: str, purl: str | None) -> None:
    origin = crate_origin("helper", "1.2.0", source)
    assert (origin.kind, origin.purl) == (kind, purl)
    if purl is not None:
        assert PackageURL.from_string(purl).to_string() == purl  # canonical as the library writes


def _package(name: str, source: str, license_: str | None,
             checksum: str | None = None) -> GraphPackage:
    return GraphPackage(id=f"{name}@1.2.0", name=name, version="1.2.0", source=source,
                        checksum=checksum, license=license_, qa_marker=False, feature_table={},
                        compiled={"target": ()})


GRAPH = Graph(
    root="plugin@1.2.0",
    packages={p.id: p for p in (
        _package("plugin", "path", "MIT/Apache-2.0"),
        _package("serde", CRATES_IO, "MIT/Apache-2.0", "ab" * 32),
        _package("sparse", SPARSE_CRATES_IO, "Apache-2.0 WITH LLVM-exception", "ab" * 32),
        _package("inhouse", OTHER_REGISTRY, "LicenseRef-Acme", "cd" * 32),
        _package("forked", GIT, "MIT/Apache-2.0 AND BSD-3-Clause"),
        _package("helper", "path", "MIT/Apache-2.0"),
    )},
    edges=tuple(GraphEdge(source="plugin@1.2.0", to=f"{name}@1.2.0", kinds=("normal",),
                          dep_key=name, optional=False, default_features=True, features=())
                for name in ("serde", "sparse", "inhouse", "forked", "helper")),
)
SUBJECT = SbomSubject(plugin_id="demo", target="x86_64-unknown-linux-gnu", profile="release",
                      channel="release", library_path="lib/libplugin.so",
                      library_sha256="ef" * 32, epoch=315532800, tool_version="0.1.0")


def _crates_io_identity(purl: str) -> bool:
    parsed = PackageURL.from_string(purl)
    return parsed.type == "cargo" and "repository_url" not in (parsed.qualifiers or {})


def test_sbom_licences_parse_as_spdx_and_purls_say_where_crates_came_from() -> None:
    text = build_sbom(GRAPH, SUBJECT, []).decode()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    sbom = json.loads(text)
    components: dict[str, dict[str, Any]] = {c["name"]: c for c in sbom["components"]}
    components["plugin"] = sbom["metadata"]["component"]
    for component in components.values():
        for licence in component.get("licenses", []):
            if "expression" in licence:
                assert is_spdx(licence["expression"]), licence
    assert components["serde"]["licenses"] == [{"expression": "MIT OR Apache-2.0"}]
    assert components["forked"]["licenses"] == [
        {"license": {"name": "MIT/Apache-2.0 AND BSD-3-Clause"}}]
    assert components["inhouse"]["licenses"] == [{"license": {"name": "LicenseRef-Acme"}}]
    purls: dict[str, str | None] = {name: c.get("purl") for name, c in components.items()}
    assert purls["serde"] == "pkg:cargo/serde@1.2.0"
    assert purls["sparse"] == "pkg:cargo/sparse@1.2.0"
    assert purls["plugin"] is None and purls["helper"] is None
    crates_io = {name for name, purl in purls.items() if purl and _crates_io_identity(purl)}
    assert crates_io == {"serde", "sparse"}
    assert PackageURL.from_string(str(purls["forked"])).qualifiers == {
        "vcs_url": "git+https://github.com/example/helper@0123456789abcdef0123456789abcdef01234567"}
    sources = {name: {p["name"]: p["value"] for p in c["properties"]}["horon:source"]
               for name, c in components.items()}
    assert sources["forked"] == GIT and sources["inhouse"] == OTHER_REGISTRY


def test_provenance_names_no_path_crate_and_no_false_identity() -> None:
    facts = BuildFacts(
        plugin_id="demo", package="plugin", version="1.2.0", target=SUBJECT.target,
        profile="release", channel="release", claim=(), features=(), declaration_sha256="0" * 64,
        source_revision=None, source_dirty=None, source_date_epoch=0, qa_patterns=(),
        qa_markers=(), qa_providers=(), evidence="built", invocation=None, record=None,
        record_sha256=None, graph=GRAPH, advertised=None, cargo_lock_sha256="1" * 64,
        builder_id="urn:test", tool_version="0.1.0")
    resolved = statement(facts, {"lib/libplugin.so": "2" * 64})[
        "predicate"]["buildDefinition"]["resolvedDependencies"]
    names = [d["name"] for d in resolved]
    assert "pkg:cargo/serde@1.2.0" in names and "pkg:cargo/sparse@1.2.0" in names
    assert not [n for n in names if "helper@" in n or "plugin@" in n]
    forked = next(d for d in resolved if d.get("annotations", {}).get("source") == GIT)
    assert forked["uri"].startswith("pkg:generic/forked@1.2.0?vcs_url=")
    for descriptor in resolved:
        assert {"uri", "digest"} & set(descriptor)
