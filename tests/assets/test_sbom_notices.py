"""The SBOM and notices stages alone, on a graph with the shapes the fixtures lack: a registry
crate with a Cargo.lock checksum, a build-time-only crate, a crate with only a licence file,
one with no licence at all, and licence texts with CRLF line ends and a BOM."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from horon_bundle.assets.notices import build_notices
from horon_bundle.assets.sbom import build_sbom
from horon_bundle.assets.sbom_subject import SbomSubject
from horon_bundle.cargo.metadata import Package
from horon_bundle.model.graph import Graph, GraphEdge, GraphPackage

REGISTRY = "registry+https://github.com/rust-lang/crates.io-index"
CHECKSUM = "ab" * 32


def _package(name: str, *, source: str = "path", checksum: str | None = None,
             license_: str | None = "MIT", compiled: dict[str, tuple[str, ...]] | None = None,
             ) -> GraphPackage:
    return GraphPackage(id=f"{name}@1.0.0", name=name, version="1.0.0", source=source,
                        checksum=checksum, license=license_, qa_marker=False, feature_table={},
                        compiled=compiled if compiled is not None else {"target": ()})


def _edge(source: str, to: str, kinds: tuple[str, ...] = ("normal",)) -> GraphEdge:
    return GraphEdge(source=f"{source}@1.0.0", to=f"{to}@1.0.0", kinds=kinds, dep_key=to,
                     optional=False, default_features=True, features=())


GRAPH = Graph(
    root="plugin@1.0.0",
    packages={p.id: p for p in (
        _package("plugin", license_="Apache-2.0", compiled={"target": ("imap",)}),
        _package("serde", source=REGISTRY, checksum=CHECKSUM, license_="MIT OR Apache-2.0",
                 compiled={"target": ("default", "std"), "host": ("std",)}),
        _package("cc", source=REGISTRY, checksum=CHECKSUM, compiled={"host": ()}),
        _package("odd", license_="LicenseRef-file:COPYING.txt"),
        _package("bare", license_=None),
    )},
    edges=(_edge("plugin", "serde"), _edge("plugin", "cc", ("build",)),
           _edge("plugin", "odd"), _edge("odd", "bare")),
)
SUBJECT = SbomSubject(plugin_id="demo", target="x86_64-unknown-linux-gnu", profile="release",
                      channel="release", library_path="lib/libplugin.so",
                      library_sha256="cd" * 32, epoch=315532800, tool_version="0.1.0")


def test_sbom_shapes_validate_and_carry_the_facts() -> None:
    text = build_sbom(GRAPH, SUBJECT, []).decode()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    sbom = json.loads(text)
    assert sbom["metadata"]["timestamp"] == "1980-01-01T00:00:00+00:00"
    components = {c["name"]: c for c in sbom["components"]}
    assert components["serde"]["hashes"] == [{"alg": "SHA-256", "content": CHECKSUM}]
    assert "hashes" not in components["odd"]
    props = {p["name"]: p["value"] for p in components["serde"]["properties"]}
    assert props["horon:features:target"] == "default,std"
    assert props["horon:features:host"] == "std"
    assert props["horon:source"] == REGISTRY
    assert components["serde"]["licenses"] == [{"expression": "MIT OR Apache-2.0"}]
    assert components["odd"]["licenses"] == [{"license": {"name": "see COPYING.txt"}}]
    assert "licenses" not in components["bare"]
    edges = {d["ref"]: d.get("dependsOn", []) for d in sbom["dependencies"]}
    assert edges["plugin@1.0.0"] == ["cc@1.0.0", "odd@1.0.0", "serde@1.0.0"]
    assert edges["odd@1.0.0"] == ["bare@1.0.0"]


def test_sbom_components_and_dependencies_are_the_librarys_own() -> None:
    """The SBOM's components and dependencies are assembled here, in the library's order (its
    own path is quadratic in the graph): exactly what cyclonedx's `JsonV1Dot6` writes."""
    from cyclonedx.model.bom import Bom, BomMetaData  # noqa: PLC0415
    from cyclonedx.output.json import JsonV1Dot6  # noqa: PLC0415

    from horon_bundle.assets import sbom_cyclonedx  # noqa: PLC0415
    from horon_bundle.model.qa import QaProvider  # noqa: PLC0415

    provider = QaProvider(package="odd@1.0.0", feature=None, reason="marked", chain="plugin → odd")
    ours = json.loads(build_sbom(GRAPH, SUBJECT, [provider]))
    made = {p.id: sbom_cyclonedx._component(p, [provider] if p.id == "odd@1.0.0" else [])
            for p in GRAPH.packages.values()}
    bom = Bom(metadata=BomMetaData(component=made[GRAPH.root]))
    for package_id, component in made.items():
        if package_id != GRAPH.root:
            bom.components.add(component)
        bom.register_dependency(component, [made[e.to] for e in GRAPH.out_edges(package_id)])
    theirs = json.loads(JsonV1Dot6(bom).output_as_string())
    assert ours["components"] == theirs["components"]
    assert ours["dependencies"] == theirs["dependencies"]
    assert [c["name"] for c in ours["components"]] == ["bare", "cc", "odd", "serde"]


def test_sbom_serial_is_derived_from_the_content() -> None:
    first = json.loads(build_sbom(GRAPH, SUBJECT, []))
    again = json.loads(build_sbom(GRAPH, SUBJECT, []))
    other = json.loads(build_sbom(GRAPH, replace(SUBJECT, library_sha256="ef" * 32), []))
    assert first["serialNumber"] == again["serialNumber"]
    assert first["serialNumber"] != other["serialNumber"]
    assert first["serialNumber"] != "urn:uuid:00000000-0000-0000-0000-000000000000"


def _source(tmp_path: Path, name: str, files: dict[str, bytes],
            license_file: str | None = None, source: str | None = None) -> Package:
    directory = tmp_path / name
    directory.mkdir()
    for file_name, data in files.items():
        (directory / file_name).write_bytes(data)
    return Package(id=name, name=name, version="1.0.0", source=source, license=None,
                   license_file=license_file, manifest_path=directory / "Cargo.toml",
                   features={}, dependencies=(), cdylib_name=None, qa_marker=False)


@pytest.fixture
def sources(tmp_path: Path) -> dict[str, Package]:
    return {
        "serde@1.0.0": _source(tmp_path, "serde", {
            "LICENSE-MIT": b"\xef\xbb\xbfMIT text\r\nline two\r\n",
            "LICENSE-APACHE": b"Apache text\n", "README.md": b"not a licence"},
            source=REGISTRY),
        "cc@1.0.0": _source(tmp_path, "cc", {"COPYING": b"cc text"}, source=REGISTRY),
        "odd@1.0.0": _source(tmp_path, "odd", {"COPYING.txt": b"odd text"},
                             license_file="COPYING.txt"),
        "bare@1.0.0": _source(tmp_path, "bare", {}),
    }


def test_notices_entries(sources: dict[str, Package], tmp_path: Path) -> None:
    (tmp_path / "LICENSE").write_text("workspace licence\n")
    text = build_notices(GRAPH, packages=sources, workspace_root=tmp_path, plugin_id="demo",
                         target="x86_64-unknown-linux-gnu", license_path="LICENSE").decode()
    assert "\r" not in text and "\ufeff" not in text
    assert "The plugin itself (plugin 1.0.0, Apache-2.0): see LICENSE in this bundle." in text
    serde = text.split("serde 1.0.0\n", 1)[1]
    assert serde.startswith(f"License: MIT OR Apache-2.0\nSource: {REGISTRY}\n"
                            "Linked into the library: yes\n"
                            f"Checksum (Cargo.lock): sha256 {CHECKSUM}\n")
    assert "LICENSE-APACHE:\n\nApache text" in serde
    assert "LICENSE-MIT:\n\nMIT text\nline two" in serde
    assert "README" not in text
    cc = text.split("cc 1.0.0\n", 1)[1]
    assert "Linked into the library: no (compiled for the build host only)" in cc
    assert "COPYING.txt:\n\nodd text" in text
    bare = text.split("bare 1.0.0\n", 1)[1]
    assert bare.startswith("License: (none declared in Cargo.toml)")
    assert "LICENSE (from the workspace root):\n\nworkspace licence" in bare
    names = [line for line in text.splitlines() if line.endswith(" 1.0.0")]
    assert names == ["bare 1.0.0", "cc 1.0.0", "odd 1.0.0", "serde 1.0.0"]


def test_a_licence_text_shared_by_crates_is_written_once(sources: dict[str, Package],
                                                        tmp_path: Path) -> None:
    """A workspace's path crates each carry its LICENSE (34.9 MB of notices at 3,000 crates
    when each copy was written out): the text once, then a pointer naming file and crate."""
    (tmp_path / "LICENSE").write_text("workspace licence\n")
    (tmp_path / "odd" / "COPYING.txt").write_text("cc text\n")  # the same text as cc's
    text = build_notices(GRAPH, packages=sources, workspace_root=tmp_path, plugin_id="demo",
                         target="x86_64-unknown-linux-gnu", license_path="LICENSE").decode()
    assert text.count("cc text") == 1
    odd = text.split("odd 1.0.0\n", 1)[1]
    assert "COPYING.txt: the same text as COPYING of cc 1.0.0 above." in odd


def test_notices_without_sources_or_texts(tmp_path: Path) -> None:
    text = build_notices(GRAPH, packages={}, workspace_root=None, plugin_id="demo",
                         target="x86_64-unknown-linux-gnu", license_path="LICENSE").decode()
    assert text.count("licence text unavailable") == 4
    outside = _source(tmp_path, "bare", {}, source=None)
    text = build_notices(GRAPH, packages={"bare@1.0.0": outside},
                         workspace_root=tmp_path / "elsewhere", plugin_id="demo",
                         target="x86_64-unknown-linux-gnu", license_path="LICENSE").decode()
    assert "(no licence text found in the crate's source" in text
