"""Every declared path once, and our own provenance obeys in-toto v1.

- plugin.json may declare a path only once: the sbom asset pointing at `LICENSE` (with a
  false `license.sha256`) made the last declaration win; now `manifest.path-collision`.
- in-toto v1 requires every ResourceDescriptor to have one of `uri`, `digest`, `content`;
  the byproducts and the path crate had none. The writer gives each byproduct the digest of
  its canonical content and each crate its purl as `uri`; the reader refuses a descriptor with
  neither, and a byproduct whose digest is not its content's. Provenance written before this
  fix is refused rather than read with the check weakened (docs/provenance.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.paths import collisions
from tests.conftest import BuiltExample
from tests.helpers import (
    assert_refused,
    cli,
    content_digest,
    copy_bundle,
    edit_manifest,
    edit_provenance,
    tree_snapshot,
)


def test_collisions_report_a_path_given_twice() -> None:
    assert collisions(["LICENSE", "LICENSE"]) == [("LICENSE", "LICENSE")]
    assert collisions(["LICENSE", "license"]) == [("LICENSE", "license")]
    assert collisions(["a", "b"]) == []


def test_an_asset_declared_at_the_licence_path(example_release: BuiltExample,
                                               tmp_path: Path) -> None:
    """The attack of issue 10: the sbom asset points at LICENSE and license.sha256 lies."""
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def point(manifest: dict[str, Any]) -> None:
        for asset in manifest["assets"]:
            if asset["role"] == "sbom":
                asset["path"] = "LICENSE"
                asset["sha256"] = manifest["license"]["sha256"]
                asset["size"] = manifest["license"]["size"]
        manifest["license"]["sha256"] = "0" * 64

    edit_manifest(bundle, point)
    (bundle / "sbom.cdx.json").unlink()
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle)
    assert_refused(result, "manifest.path-collision")
    assert "'LICENSE' is declared twice" in result.stderr
    assert tree_snapshot(tmp_path) == before


def _descriptors(statement: dict[str, Any]) -> list[dict[str, Any]]:
    predicate = statement["predicate"]
    return [*predicate["buildDefinition"]["resolvedDependencies"],
            *predicate["runDetails"]["byproducts"]]


def test_every_descriptor_we_write_has_a_locator(example_release: BuiltExample) -> None:
    statement = json.loads((example_release.bundle / "provenance.json").read_text())
    for descriptor in _descriptors(statement):
        assert {"uri", "digest", "content"} & set(descriptor), descriptor
    for item in statement["predicate"]["runDetails"]["byproducts"]:
        assert item["digest"] == {"sha256": content_digest(item["annotations"])}
    crates = [d for d in _descriptors(statement) if d["name"].startswith("pkg:cargo/")]
    assert crates and all(d["uri"] == d["name"] for d in crates)


@pytest.mark.parametrize("where", ["byproduct", "crate"])
def test_a_descriptor_without_a_locator_is_refused(example_release: BuiltExample,
                                                   tmp_path: Path, where: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def strip(statement: dict[str, Any]) -> None:
        predicate = statement["predicate"]
        if where == "byproduct":
            del predicate["runDetails"]["byproducts"][0]["digest"]
        else:
            for item in predicate["buildDefinition"]["resolvedDependencies"]:
                if item["name"].startswith("pkg:cargo/"):
                    item.pop("uri")
                    item.pop("digest", None)

    edit_provenance(bundle, strip, rebind_byproducts=False)
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle)
    assert_refused(result, "provenance.schema")
    assert "without uri, digest or content: in-toto v1 requires one" in result.stderr
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("name", ["horon:invocation", "horon:graph", "horon:advertised"])
def test_a_byproduct_whose_digest_is_not_its_content(example_release: BuiltExample,
                                                     tmp_path: Path, name: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def tamper(statement: dict[str, Any]) -> None:
        for item in statement["predicate"]["runDetails"]["byproducts"]:
            if item["name"] == name:
                item["annotations"]["tampered"] = True

    edit_provenance(bundle, tamper, rebind_byproducts=False)
    result = cli("verify", bundle)
    assert_refused(result, "provenance.schema")
    assert "is not the digest of the byproduct's content" in result.stderr
