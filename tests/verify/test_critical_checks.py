"""One test per critical check that hand mutation left alive: each edit below is
refused by exactly the check named, so deleting that check makes the test fail (each was
proven so by deleting it locally; docs/threat-model.md lists them).

Every bundle edit fixes all other digests (`tests.bundle_edit`, `edit_provenance`), so no
other rule can refuse it in the check's place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sigstore.models import Bundle

from horon_bundle.core.errors import Refused
from horon_bundle.model.evidence import Advertised
from horon_bundle.model.graph import Graph, GraphEdge, GraphPackage
from horon_bundle.model.qa import BUILTIN_QA_PATTERNS, QaProvider
from horon_bundle.model.signer_identity import CertifiedSource
from horon_bundle.rules.features_and_qa import (
    advertised_findings,
    check_advertised,
    find_qa_providers,
    graph_findings,
    judge_graph,
    recorded_qa_findings,
)
from horon_bundle.rules.policy_requirements import SourceRepositoryIs, Subject
from horon_bundle.verify.judge import verify_path
from tests.bundle_edit import byproduct_of, internal
from tests.conftest import BuiltExample
from tests.helpers import (
    HOST,
    REPO,
    TEMPLATE,
    assert_refused,
    cli,
    copy_bundle,
    edit_manifest,
    edit_provenance,
    tree_snapshot,
)

DATA = REPO / "tests" / "data" / "sigstore"
LIBRARY = "lib/libhoron_example.so"


def _only(result: Any, code: str) -> list[str]:
    """The refusal codes of a `--json` verify run, checked to be exactly `code`."""
    found = [f["code"] for c in result.json()["checks"] for f in c["findings"]]
    assert found and set(found) == {code}, found
    return found


def test_plugin_json_bytes_against_sha256sums(example_release: BuiltExample,
                                              tmp_path: Path) -> None:
    """plugin.json is declared nowhere but SHA256SUMS: a changed display name (still a valid,
    self-consistent plugin.json) is caught only there."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    manifest = bundle / "plugin.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"Example"', b'"Exampl3"'))
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "checksum.mismatch")
    _only(result, "checksum.mismatch")
    assert "'plugin.json' sha256" in result.stdout
    assert tree_snapshot(tmp_path) == before


def test_provenance_features_binding(example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_provenance(bundle, lambda s: internal(s).__setitem__("features", ["clock"]))
    result = cli("verify", bundle, "--json")
    assert_refused(result, "provenance.contradiction")
    _only(result, "provenance.contradiction")
    assert "features ['clock'] != plugin.json ['clock', 'greeting']" in result.stdout


def test_invocation_artifact_size(example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def grow(statement: dict[str, Any]) -> None:
        for artifact in byproduct_of(statement, "horon:invocation")["artifacts"]:
            if artifact["path"].endswith("/libhoron_example.so"):
                artifact["size"] += 1

    edit_provenance(bundle, grow)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "evidence.mismatch")
    _only(result, "evidence.mismatch")


def test_verifys_own_drift_check(example_release: BuiltExample, tmp_path: Path) -> None:
    """Graph and claim agree with each other (no drift by the release rule) but not with
    plugin.json: only verify's own comparison of the compiled set with plugin.json sees it."""
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def narrow(statement: dict[str, Any]) -> None:
        graph = byproduct_of(statement, "horon:graph")
        [root] = [p for p in graph["packages"] if p["id"] == graph["root"]]
        root["compiled"]["target"] = ["clock"]
        statement["predicate"]["buildDefinition"]["externalParameters"]["claim"] = ["clock"]

    edit_provenance(bundle, narrow)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "features.drift")
    _only(result, "features.drift")
    assert "graph: horon-example compiled ['clock'], plugin.json lists ['clock', 'greeting']" \
        in result.stdout


def test_advertised_abi_minor(example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_manifest(bundle, lambda m: m["abi"].__setitem__("minor", 3))
    result = cli("verify", bundle, "--json")
    assert_refused(result, "abi.metadata")
    _only(result, "abi.metadata")
    assert "'s .horon_abi section advertises ABI minor 0, plugin.json says 3" in result.stdout


def test_zero_provenance_assets(example_release: BuiltExample, tmp_path: Path) -> None:
    """No provenance asset and no provenance.json: without the "exactly one" rule nothing
    would be left to judge, and the bundle would verify."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / "provenance.json").unlink()
    sums = bundle / "SHA256SUMS"
    sums.write_text("".join(line + "\n" for line in sums.read_text().splitlines()
                            if not line.endswith("  provenance.json")))
    edit_manifest(bundle, lambda m: m.__setitem__(
        "assets", [a for a in m["assets"] if a["role"] != "provenance"]))
    result = cli("verify", bundle, "--json")
    assert_refused(result, "manifest.assets")
    assert "0 provenance assets, exactly one required" in result.stdout


@pytest.mark.parametrize(("entry", "mode"), [(LIBRARY, 0o4755), ("LICENSE", 0o666),
                                             ("LICENSE", 0o2644)])
def test_unsafe_modes_of_zip_entries(example_release: BuiltExample, tmp_path: Path,
                                     entry: str, mode: int) -> None:
    """The real archive with one entry's mode changed (setuid, world-writable, setgid)."""
    path = tmp_path / example_release.archive.name
    with zipfile.ZipFile(example_release.archive) as source, \
            zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename == entry:
                info.external_attr = (stat.S_IFREG | mode) << 16
            target.writestr(info, source.read(info))
    before = tree_snapshot(tmp_path)
    result = cli("verify", path, "--json")
    assert_refused(result, "layout.mode")
    _only(result, "layout.mode")
    assert tree_snapshot(tmp_path) == before


def test_a_records_embedded_digest(record_example: BuiltExample, tmp_path: Path) -> None:
    """The record byproduct's digest is the record file's; an edited record that keeps its
    old digest is refused (and, rebound, is then refused by the binding it breaks)."""
    bundle = copy_bundle(record_example.bundle, tmp_path)
    edit_provenance(bundle, lambda s: byproduct_of(s, "horon:artifact-record")
                    .__setitem__("profile", "dev"), rebind_byproducts=False)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "provenance.schema")
    _only(result, "provenance.schema")
    assert "is not the digest of the byproduct's content" in result.stdout


@pytest.mark.slow
@pytest.mark.process
def test_the_provenance_signature_digest(example_release: BuiltExample,
                                         tmp_path: Path) -> None:
    """A real DSSE envelope that verifies offline (staging, sigstore-python's test asset),
    over some other statement: refused because its payload is not this provenance.json."""
    archive = tmp_path / example_release.archive.name
    shutil.copy2(example_release.archive, archive)
    shutil.copy2(DATA / "a.dsse.staging-rekor-v2.txt.sigstore.json",
                 tmp_path / f"{archive.name}.provenance.sigstore.json")
    before = tree_snapshot(tmp_path)
    result = cli("verify", archive, "--staging", "--github-repository",
                 "sigstore-conformance/extremely-dangerous-public-oidc-beacon", "--json",
                 prefix=("unshare", "-rn"))
    assert_refused(result, "signature.invalid")
    checks = {c["check"]: c for c in result.json()["checks"]}
    [finding] = checks["signature.provenance"]["findings"]
    provenance = hashlib.sha256((example_release.bundle / "provenance.json").read_bytes())
    assert finding["message"].endswith(
        "signs a statement with sha256 3f79467b52fbab280f08f7eb3bb6098861687b48763162209426053"
        f"048d4c18f, the bundle's provenance.json is {provenance.hexdigest()}")
    assert tree_snapshot(tmp_path) == before


GITHUB_BUILDER = ("https://github.com/sigstore/sigstore-js/.github/workflows/release.yml"
                  "@refs/heads/main")


def test_certificate_commit_against_the_recorded_revision(tmp_path: Path,
                                                          cargo_target_dir: Path) -> None:
    """A real GitHub Actions certificate (sigstore-js) attests repository and commit; the
    provenance of a build naming that workflow records another revision: unmet. With the
    certificate's own commit recorded it is met, so the check is the commit comparison."""
    out = tmp_path / "out"
    assert cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir,
               "--builder-id", GITHUB_BUILDER).status == 0
    report = verify_path(out / f"example-0.1.0-{HOST}.zip")
    assert report.ok and report.provenance is not None
    facts = report.provenance.facts
    certificate = Bundle.from_json((DATA / "github-actions-npm-sigstore-3.1.0.sigstore.json")
                                   .read_bytes()).signing_certificate
    certified = CertifiedSource.of(certificate)
    assert certified.revision == "06cd267cbdc2eeaa04294995622db9f6ad2fa7cf"
    assert facts.source_revision not in (None, certified.revision)
    requirement = SourceRepositoryIs("https://github.com/sigstore/sigstore-js")

    def judged(revision: str | None) -> Any:
        subject = Subject(manifest=report.manifest,
                          facts=dataclasses.replace(facts, source_revision=revision),
                          signature_present=True, signature_verified=True, certified=certified)
        return requirement.check(subject, "policy.toml")

    unmet = judged(facts.source_revision)
    assert unmet.status == "fail"
    assert [f.code.name for f in unmet.findings] == ["policy.unmet"]
    assert f"names commit {certified.revision}, the provenance records source revision " \
           f"{facts.source_revision}" in unmet.findings[0].message
    assert judged(certified.revision).status == "pass"


def test_a_malformed_embedded_record_is_refused_not_crashed_on(record_example: BuiltExample,
                                                               tmp_path: Path) -> None:
    bundle = copy_bundle(record_example.bundle, tmp_path)
    edit_provenance(bundle, lambda s: byproduct_of(s, "horon:artifact-record").pop("profile"))
    result = cli("verify", bundle, "--json")
    assert result.status == 1 and "Traceback" not in result.stderr
    _only(result, "evidence.record")
    [check] = [c for c in result.json()["checks"] if c["findings"]]
    assert check["check"] == "evidence"


def test_the_embedded_record_binds_the_bundles_library(record_example: BuiltExample,
                                                       tmp_path: Path) -> None:
    bundle = copy_bundle(record_example.bundle, tmp_path)
    edit_provenance(bundle, lambda s: byproduct_of(s, "horon:artifact-record")["library"]
                    .__setitem__("size", 1))
    result = cli("verify", bundle, "--json")
    assert_refused(result, "evidence.mismatch")
    _only(result, "evidence.mismatch")
    assert "artifact record size 1 != " in result.stdout


def test_advertised_metadata_the_record_has_and_the_provenance_lacks(record_example: BuiltExample,
                                                                     tmp_path: Path) -> None:
    bundle = copy_bundle(record_example.bundle, tmp_path)

    def drop_advertised(statement: dict[str, Any]) -> None:
        byproducts = statement["predicate"]["runDetails"]["byproducts"]
        byproducts[:] = [b for b in byproducts if b["name"] != "horon:advertised"]

    edit_provenance(bundle, drop_advertised)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "evidence.mismatch")
    assert "provenance.json: advertised metadata nothing, its artifact record says " \
        in result.stdout


@pytest.mark.parametrize(("edit", "words"), [
    (lambda s: s["subject"].append({"name": "lib/extra.so", "digest": {"sha256": "0" * 64}}),
     "subject 'lib/extra.so' is not the library or a sidecar"),
    (lambda s: s["subject"].__setitem__(slice(None), [
        x for x in s["subject"] if x["name"] != LIBRARY]), f"no subject for {LIBRARY!r}"),
    (lambda s: [x["digest"].__setitem__("sha256", "0" * 64) for x in s["subject"]
                if x["name"] == LIBRARY], f"subject {LIBRARY!r} sha256 {'0' * 64} != file "),
])
def test_provenance_subjects_are_the_library_and_sidecars(
        example_release: BuiltExample, tmp_path: Path, edit: Any, words: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_provenance(bundle, edit)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "provenance.subject")
    _only(result, "provenance.subject")
    assert words in result.stdout


def test_a_subject_of_a_missing_file_is_named_missing(example_release: BuiltExample,
                                                      tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_provenance(bundle, lambda s: [x["digest"].__setitem__("sha256", "0" * 64)
                                       for x in s["subject"] if x["name"] == LIBRARY])
    (bundle / LIBRARY).unlink()
    result = cli("verify", bundle, "--json")
    assert result.status == 1 and "Traceback" not in result.stderr
    assert f"subject {LIBRARY!r} sha256 {'0' * 64} != file (missing)" in result.stdout


def test_record_evidence_without_its_record(record_example: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(record_example.bundle, tmp_path)

    def drop_record(statement: dict[str, Any]) -> None:
        byproducts = statement["predicate"]["runDetails"]["byproducts"]
        byproducts[:] = [b for b in byproducts if b["name"] != "horon:artifact-record"]

    edit_provenance(bundle, drop_record)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "evidence.missing")
    assert "evidence 'artifact-record' but no record" in result.stdout


def test_every_declared_file_is_checked_after_a_missing_one(example_release: BuiltExample,
                                                             tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / "LICENSE").unlink()  # sorts before every other declared file
    with (bundle / LIBRARY).open("ab") as library:
        library.write(b"\0")
    result = cli("verify", bundle, "--json")
    assert_refused(result, "layout.missing")
    assert_refused(result, "checksum.size")
    assert_refused(result, "checksum.mismatch")


def test_without_provenance_the_advertised_metadata_is_judged_from_the_library(
        example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / "provenance.json").unlink()
    result = cli("verify", bundle, "--json")
    assert_refused(result, "layout.missing")
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["provenance"]["result"] == "skip"
    assert checks["features.advertised"]["result"] == "pass", checks["features.advertised"]
    assert result.json()["advertised_source"] == "section"


def test_each_metadata_file_is_judged_without_the_other(example_release: BuiltExample,
                                                        tmp_path: Path) -> None:
    without_manifest = copy_bundle(example_release.bundle, tmp_path / "a")
    (without_manifest / "plugin.json").unlink()
    checks = {c["check"]: c for c in cli("verify", without_manifest, "--json").json()["checks"]}
    assert checks["checksums.format"]["result"] == "pass"  # read though plugin.json is absent
    without_sums = copy_bundle(example_release.bundle, tmp_path / "b")
    (without_sums / "SHA256SUMS").unlink()
    result = cli("verify", without_sums, "--json")
    assert_refused(result, "layout.missing")
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["integrity.sha256sums"]["result"] == "skip"
    assert checks["manifest.strict"]["result"] == "pass"


def test_oversized_metadata_files_are_refused_where_they_are_read(
        example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path / "a")
    with (bundle / "plugin.json").open("ab") as manifest:
        manifest.write(b" " * (1 << 20))
    result = cli("verify", bundle, "--json")
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert [f["code"] for f in checks["layout.metadata-files"]["findings"]] == ["json.too-large"]
    bundle = copy_bundle(example_release.bundle, tmp_path / "b")
    with (bundle / "provenance.json").open("ab") as provenance:
        provenance.write(b" " * (32 << 20))
    result = cli("verify", bundle, "--json")
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert [f["code"] for f in checks["provenance.read"]["findings"]] == ["json.too-large"]


def test_a_missing_library_leaves_its_section_unread(example_release: BuiltExample,
                                                     tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / LIBRARY).unlink()
    result = cli("verify", bundle, "--json")
    assert_refused(result, "layout.missing")
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert (checks["features.advertised"]["result"], checks["features.advertised"]["note"]) \
        == ("skip", "the library is missing")


def test_an_entry_failing_its_crc_while_hashed(example_release: BuiltExample,
                                               tmp_path: Path) -> None:
    archive = tmp_path / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    with zipfile.ZipFile(archive) as opened:
        info = opened.getinfo("LICENSE")
    data = bytearray(archive.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    result = cli("verify", archive, "--json")
    assert result.status == 1 and "Traceback" not in result.stderr
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert [f["code"] for f in checks["integrity.read"]["findings"]] == ["archive.format"]
    # the flipped byte either breaks the deflate stream or inflates to other bytes (which
    # level the archive was deflated with decides which): both are found while hashing
    assert re.search(r"entry 'LICENSE': (damaged deflate stream|bad CRC-32 [0-9a-f]{8})",
                     result.stdout), result.stdout


# --- the chain a QA provider is named with (rules/features_and_qa.py: models in, chains out) --
def _crate(name: str, table: dict[str, tuple[str, ...]] | None = None,
           compiled: tuple[str, ...] = (), *, qa: bool = False) -> GraphPackage:
    return GraphPackage(id=f"{name}@0.1.0", name=name, version="0.1.0", source="path",
                        checksum=None, license=None, qa_marker=qa, feature_table=table or {},
                        compiled={"target": compiled})


def _dep(source: str, to: str, *, optional: bool = False, default: bool = True,
         features: tuple[str, ...] = ()) -> GraphEdge:
    return GraphEdge(source=f"{source}@0.1.0", to=f"{to}@0.1.0", kinds=("normal",), dep_key=to,
                     optional=optional, default_features=default, features=features)


def _chains(root: GraphPackage, others: list[GraphPackage], edges: list[GraphEdge],
            claim: list[str]) -> list[tuple[str, str | None, str]]:
    graph = Graph(root=root.id, packages={p.id: p for p in [root, *others]}, edges=tuple(edges))
    return [(p.package, p.feature, p.chain)
            for p in find_qa_providers(graph, patterns=BUILTIN_QA_PATTERNS, claim=claim)]


PLUG = "plug@0.1.0"
CHAIN_CASES: dict[str, tuple[GraphPackage, list[GraphPackage], list[GraphEdge], list[str],
                             list[tuple[str, str | None, str]]]] = {
    # docs/graph-and-qa.md: a dependency's defaults turn on a feature that turns on a QA crate
    "the default-features defect": (
        _crate("mail-plugin", {"imap": ()}, ("imap",)),
        [_crate("mail-helper", {"default": ("qa-provider",), "qa-provider": ("dep:qa-mock",)},
                ("default", "qa-provider")), _crate("qa-mock")],
        [_dep("mail-plugin", "mail-helper"), _dep("mail-helper", "qa-mock", optional=True)],
        ["imap"],
        [("mail-helper@0.1.0", "qa-provider",
          "mail-plugin → mail-helper[default] → feature qa-provider"),
         ("qa-mock@0.1.0", None,
          "mail-plugin → mail-helper[default] → feature qa-provider → dep qa-mock")]),
    # the features an edge asks for, and not the defaults it turned off
    "edge features without defaults": (
        _crate("plug"),
        [_crate("helper", {"default": ("qa-provider",), "extra": ("qa-provider",),
                           "qa-provider": ()}, ("extra", "qa-provider"))],
        [_dep("plug", "helper", default=False, features=("extra",))],
        [],
        [("helper@0.1.0", "qa-provider", "plug → helper[extra] → feature qa-provider")]),
    # the claim walked through the plugin's own table: `dep:` entries skipped (not the rest),
    # `name?/feature` entries followed to the feature `name`, every step named once
    "a walk through the plugin's own table": (
        _crate("plug", {"default": ("dep:zz", "mid?/x"), "mid": ("qa-extra",),
                        "qa-extra": ("dep:qa-mock",)}, ("default", "mid", "qa-extra")),
        [_crate("qa-mock")],
        [_dep("plug", "qa-mock", optional=True)],
        ["default"],
        [("plug@0.1.0", "qa-extra", "plug[default] → feature mid → feature qa-extra"),
         ("qa-mock@0.1.0", None,
          "plug[default] → feature mid → feature qa-extra → dep qa-mock")]),
    # the dependency name of an entry is everything before its first `/`
    "a dependency entry's name ends at its first slash": (
        _crate("plug", {"default": ("mid/x/y",), "mid": ("qa-v",), "qa-v": ()},
               ("default", "mid", "qa-v")),
        [], [], ["default"],
        [(PLUG, "qa-v", "plug[default] → feature mid → feature qa-v")]),
    # of two walks of one length, the first found (in table order) is named
    "a diamond of features": (
        _crate("plug", {"default": ("a", "b"), "a": ("qa-c",), "b": ("qa-c",), "qa-c": ()},
               ("a", "b", "default", "qa-c")),
        [], [], ["default"],
        [(PLUG, "qa-c", "plug[default] → feature a → feature qa-c")]),
    # a claimed feature is named in brackets (once), whether or not the table declares it
    "claimed features": (
        _crate("plug", {"qa-x": ()}, ("qa-x", "qa-y")),
        [], [], ["qa-x", "qa-y"],
        [(PLUG, "qa-x", "plug[qa-x]"), (PLUG, "qa-y", "plug[qa-y]")]),
    # a walk follows declared features only: an entry the table does not declare (nor a
    # `name?` without a slash) is not a step, so the feature is named on its own
    "undeclared entries are not steps": (
        _crate("plug", {"default": ("qa-w", "qa-u?"), "qa-u": ()}, ("default", "qa-u", "qa-w")),
        [], [], ["default"],
        [(PLUG, "qa-u", "plug → feature qa-u"), (PLUG, "qa-w", "plug → feature qa-w")]),
    # the feature whose entries turn the optional dependency on, not any other feature, nor
    # a claimed name that the table does not declare
    "the feature enabling an optional dependency": (
        _crate("plug", {"other": ("x",), "x": (), "z": ("dep:telemetry",)},
               ("other", "x", "z")),
        [_crate("telemetry", qa=True)],
        [_dep("plug", "telemetry", optional=True)],
        ["other", "telemetry", "z"],
        [("telemetry@0.1.0", None, "plug[z] → dep telemetry")]),
}


@pytest.mark.parametrize("case", CHAIN_CASES)
def test_qa_provider_chains(case: str) -> None:
    root, others, edges, claim, expected = CHAIN_CASES[case]
    assert _chains(root, others, edges, claim) == expected


@pytest.mark.parametrize(("table", "claim", "chain"), [
    # cargo: once `dep:telemetry` is written, `telemetry` names a feature only, and this one
    # (`telemetry?/std`) does not turn the dependency on: `zed` does
    ({"telemetry": ("telemetry?/std",), "zed": ("dep:telemetry",)}, ["telemetry", "zed"],
     "plug[zed] → dep telemetry"),
    ({"a": ("telemetry",), "telemetry": ("telemetry?/std",), "zed": ("dep:telemetry",)},
     ["a", "zed"], "plug[zed] → dep telemetry"),
    # a feature of that name that does turn it on is a step like any other
    ({"a": ("telemetry",), "telemetry": ("dep:telemetry", "x"), "x": ()}, ["a"],
     "plug[a] → feature telemetry → dep telemetry"),
    # the implicit feature of an optional dependency is the dependency itself
    ({"default": ("telemetry",), "telemetry": ("dep:telemetry",)}, ["default"],
     "plug[default] → dep telemetry"),
    ({"default": ("telemetry/std",)}, ["default"], "plug[default] → dep telemetry"),
])
def test_the_feature_named_for_an_optional_dependency(table: dict[str, tuple[str, ...]],
                                                      claim: list[str], chain: str) -> None:
    plug = _crate("plug", table, tuple(sorted(table)))
    telemetry = _crate("telemetry", qa=True)
    assert _chains(plug, [telemetry], [_dep("plug", "telemetry", optional=True)], claim) == [
        ("telemetry@0.1.0", None, chain)]


# --- the release gate: QA providers in a release, drift of the compiled features ----------
DRIFT = "features.drift"
QA = "graph.qa-provider"
PLAIN = {"default": ("imap",), "imap": (), "smtp": ()}
GATE_CASES: dict[str, tuple[dict[str, tuple[str, ...]], tuple[str, ...], list[str], str,
                            list[tuple[str, str]]]] = {
    "compiled = closure of the claim": (PLAIN, ("default", "imap"), ["default"], "release", []),
    "an extra feature": (
        PLAIN, ("default", "imap", "smtp"), ["default"], "release",
        [(DRIFT, "plug compiled ['default', 'imap', 'smtp']; the claim ['default'] closes to "
                 "['default', 'imap'] (extra: ['smtp'])")]),
    "a missing feature": (
        PLAIN, ("imap",), ["default"], "release",
        [(DRIFT, "plug compiled ['imap']; the claim ['default'] closes to "
                 "['default', 'imap'] (missing: ['default'])")]),
    "both": (
        PLAIN, ("smtp",), ["imap"], "qa",
        [(DRIFT, "plug compiled ['smtp']; the claim ['imap'] closes to ['imap'] "
                 "(extra: ['smtp']) (missing: ['imap'])")]),
    # `dep:` and `x/y` entries are not features; implicit optional-dependency features are
    # left out on both sides
    "dependency entries and implicit features": (
        {"default": ("imap", "dep:rustls", "helper/std", "tls"), "imap": (), "tls": ("smtp",),
         "smtp": (), "rustls": ("dep:rustls",), "helper": ("dep:helper",)},
        ("default", "helper", "imap", "rustls", "smtp", "tls"), ["default", "helper"],
        "release", []),
    "an implicit feature only looks like one": (
        {"rustls": ("dep:rustls", "imap"), "imap": ()}, ("imap",), ["rustls"], "release",
        [(DRIFT, "plug compiled ['imap']; the claim ['rustls'] closes to ['imap', 'rustls'] "
                 "(missing: ['rustls'])")]),
    "a QA feature in a release": (
        {"qa-tools": ()}, ("qa-tools",), ["qa-tools"], "release",
        [(QA, "feature 'qa-tools' of 'plug' matches QA pattern 'qa-*': plug[qa-tools]")]),
    "a QA feature in a qa build": ({"qa-tools": ()}, ("qa-tools",), ["qa-tools"], "qa", []),
}


@pytest.mark.parametrize("case", GATE_CASES)
def test_the_release_gate(case: str) -> None:
    table, compiled, claim, channel, expected = GATE_CASES[case]
    graph = Graph(root=PLUG, packages={PLUG: _crate("plug", table, compiled)}, edges=())
    providers, findings = graph_findings(graph, claim=claim, channel=channel,
                                         patterns=BUILTIN_QA_PATTERNS)
    assert [(f.code.name, f.message) for f in findings] == expected
    assert [p.feature for p in providers] == (["qa-tools"] if "QA" in case else [])
    if expected:
        with pytest.raises(Refused) as refused:
            judge_graph(graph, claim=claim, channel=channel, patterns=BUILTIN_QA_PATTERNS)
        assert [(f.code.name, f.message) for f in refused.value.findings] == expected
    else:
        assert judge_graph(graph, claim=claim, channel=channel,
                           patterns=BUILTIN_QA_PATTERNS) == providers


def _crates_graph() -> Graph:
    """plug → a → b → helper-qa and plug → c → helper-qa; plug → a → qa-deep;
    plug → telemetry (marked QA)."""
    crates = [_crate("plug"), _crate("a"), _crate("b"), _crate("c"), _crate("helper-qa"),
              _crate("telemetry", qa=True), _crate("qa-deep")]
    edges = [_dep("plug", "a"), _dep("a", "b"), _dep("b", "helper-qa"), _dep("plug", "c"),
             _dep("c", "helper-qa"), _dep("plug", "telemetry"), _dep("a", "qa-deep")]
    return Graph(root=PLUG, packages={p.id: p for p in crates}, edges=tuple(edges))


def test_qa_crates_are_named_with_the_shortest_chain() -> None:
    providers, findings = graph_findings(_crates_graph(), claim=[], channel="release",
                                         patterns=(*BUILTIN_QA_PATTERNS, "acme-*"))
    assert [(f.code.name, f.message) for f in findings] == [
        (QA, "crate 'helper-qa' matches QA pattern '*-qa': plug → c → helper-qa"),
        (QA, "crate 'qa-deep' matches QA pattern 'qa-*': plug → a → qa-deep"),
        (QA, "crate 'telemetry' is marked [package.metadata.horon] qa = true: plug → telemetry")]
    assert providers[0].to_json() == {
        "package": "helper-qa@0.1.0", "feature": None,
        "reason": "crate 'helper-qa' matches QA pattern '*-qa'", "chain": "plug → c → helper-qa"}


def _provider(package: str, feature: str | None = None) -> QaProvider:
    return QaProvider(package=package, feature=feature, reason="recorded", chain="recorded")


@dataclasses.dataclass(frozen=True)
class _Recorded:
    claim: tuple[str, ...] = ()
    qa_patterns: tuple[str, ...] = ()
    qa_markers: tuple[str, ...] = ("telemetry@0.1.0",)
    qa_providers: tuple[QaProvider, ...] = (
        _provider("helper-qa@0.1.0"), _provider("qa-deep@0.1.0"), _provider("telemetry@0.1.0"))


RECORD = "graph.qa-record"
PROVIDERS = "[('helper-qa@0.1.0', ''), ('qa-deep@0.1.0', ''), ('telemetry@0.1.0', '')]"


@pytest.mark.parametrize(("recorded", "expected"), [
    (_Recorded(), []),
    (_Recorded(qa_providers=()),
     [(RECORD, f"provenance.json records QA providers []; its graph, judged with the same 4 "
               f"patterns, holds {PROVIDERS}")]),
    # a recorded pattern is applied too: `a` is then a provider it failed to record
    (_Recorded(qa_patterns=("A", "qa")),
     [(RECORD, f"provenance.json records QA providers {PROVIDERS}; its graph, judged with the "
               f"same 5 patterns, holds [('a@0.1.0', ''), {PROVIDERS[1:]}")]),
    (_Recorded(qa_markers=()),
     [(RECORD, "provenance.json records QA-marked crates []; its graph marks "
               "['telemetry@0.1.0']")]),
    (_Recorded(qa_markers=("a@0.1.0", "telemetry@0.1.0"), qa_providers=(
        _provider("helper-qa@0.1.0", "x"), _provider("qa-deep@0.1.0"),
        _provider("telemetry@0.1.0"))),
     [(RECORD, "provenance.json records QA providers [('helper-qa@0.1.0', 'x'), "
               "('qa-deep@0.1.0', ''), ('telemetry@0.1.0', '')]; its graph, judged with the "
               f"same 4 patterns, holds {PROVIDERS}"),
      (RECORD, "provenance.json records QA-marked crates ['a@0.1.0', 'telemetry@0.1.0']; its "
               "graph marks ['telemetry@0.1.0']")]),
])
def test_the_recorded_qa_judgement_is_recomputed(recorded: _Recorded,
                                                 expected: list[tuple[str, str]]) -> None:
    assert [(f.code.name, f.message)
            for f in recorded_qa_findings(_crates_graph(), recorded)] == expected


GOOD = Advertised(abi_major=1, abi_minor=3, wire_schema="horon.wire.v1",
                  features=("default", "imap"), plugin_id="dev.horon.example",
                  observed_by=("probe",))


@pytest.mark.parametrize(("advertised", "expected"), [
    (GOOD, []),
    (dataclasses.replace(GOOD, features=("imap", "default")),
     [("features.mismatch", "the library advertises ['imap', 'default'], plugin.json would "
                            "list ['default', 'imap'] (compiled)")]),
    (dataclasses.replace(GOOD, plugin_id="dev.horon.other"),
     [("abi.metadata", "the library advertises plugin id 'dev.horon.other', declared "
                       "'dev.horon.example'")]),
    (dataclasses.replace(GOOD, abi_major=2, wire_schema="horon.wire.v2", features=()),
     [("features.mismatch", "the library advertises [], plugin.json would list "
                            "['default', 'imap'] (compiled)"),
      ("abi.metadata", "the library advertises ABI major 2, bundles are ABI v1"),
      ("abi.metadata", "the library advertises wire schema 'horon.wire.v2'")]),
])
def test_advertised_against_claimed(advertised: Advertised,
                                    expected: list[tuple[str, str]]) -> None:
    findings = advertised_findings(advertised, features=["default", "imap"],
                                   plugin_id="dev.horon.example")
    assert [(f.code.name, f.message) for f in findings] == expected
    assert [f.message for f in advertised_findings(
        advertised, features=["default", "imap"], plugin_id="dev.horon.example",
        who="lib/x.so")] == [m.replace("the library", "lib/x.so", 1) for _, m in expected]
    if expected:
        with pytest.raises(Refused) as refused:
            check_advertised(advertised, features=["default", "imap"],
                             plugin_id="dev.horon.example")
        assert [(f.code.name, f.message) for f in refused.value.findings] == expected
    else:
        check_advertised(advertised, features=["default", "imap"], plugin_id="dev.horon.example")


def test_a_qa_crate_no_edge_reaches_is_named_not_crashed_on() -> None:
    """A recorded graph may hold a crate no edge reaches: it is named, from the plugin alone."""
    graph = Graph(root=PLUG, packages={p.id: p for p in [_crate("plug"), _crate("qa-stray")]},
                  edges=())
    _, findings = graph_findings(graph, claim=[], channel="release",
                                 patterns=BUILTIN_QA_PATTERNS)
    assert [(f.code.name, f.message) for f in findings] == [
        (QA, "crate 'qa-stray' matches QA pattern 'qa-*': plug")]
