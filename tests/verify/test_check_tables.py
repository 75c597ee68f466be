"""The checks of each bundle kind are one table (`verify.check_table`): verify runs its rows in
their order, and install and publish admit a bundle by its proving rows (`unproven`)."""

from __future__ import annotations

import dataclasses
import zipfile
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.install import admission
from horon_bundle.model.checks import FAIL, PASS, SKIP, WARN, CheckList
from horon_bundle.publish import preflight
from horon_bundle.verify.audit import AuditOptions
from horon_bundle.verify.check_table import (
    CheckRow,
    CheckTable,
    Judged,
    Skipped,
    Verdict,
    run_table,
    unproven,
)
from horon_bundle.verify.harness.judge import HARNESS_CHECKS, judge_harness
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.judge import NATIVE_CHECKS, verify_path
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.report import VerifyReport
from tests.conftest import BuiltExample
from tests.harness_support import write_plugin
from tests.helpers import HOST, cli, copy_bundle, edit_manifest, edit_provenance

# rows a good bundle does not report: they report only a refusal (provenance.read,
# integrity.read) or why the provenance checks did not run (provenance)
NATIVE_QUIET = {"provenance.read", "integrity.read", "provenance"}
HARNESS_QUIET = {"integrity.read"}


def _names(report: CheckList) -> list[str]:
    return [check.name for check in report.checks]


def _in_table_order(names: list[str], table: CheckTable[Any]) -> bool:
    return names == [name for name in table.names if name in names]


def _without(table: CheckTable[Any], name: str) -> CheckTable[Any]:
    return CheckTable(rows=tuple(r for r in table.rows if r.name != name),
                      passing=table.passing)


def test_verify_of_a_good_native_bundle_reports_every_row_of_its_table(
        example_release: BuiltExample) -> None:
    rows = [name for name in NATIVE_CHECKS.names if name not in NATIVE_QUIET]
    for path, before in ((example_release.bundle, []), (example_release.archive, ["archive"])):
        report = verify_path(path)
        assert report.ok, report.findings
        assert _names(report) == [*before, *rows]
        assert {c.status for c in report.checks} == {PASS}
        assert unproven(report, NATIVE_CHECKS, code=codes.INSTALL_UNPROVEN, where="x") == []


def test_verify_of_a_good_harness_zip_reports_every_row_of_its_table(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    assert cli("build", workspace, "--out", tmp_path / "out").status == 0
    [archive] = (tmp_path / "out").glob("*.zip")
    report = HarnessReport(path=str(archive))
    with open_bundle(archive) as source:
        judge_harness(source, report, HarnessOptions())
    assert report.ok, report.findings
    assert _names(report) == [n for n in HARNESS_CHECKS.names if n not in HARNESS_QUIET]
    assert unproven(report, HARNESS_CHECKS, code=codes.PUBLISH_UNPROVEN, where="x") == []


@pytest.mark.parametrize("damage", ["plugin.json", "SHA256SUMS", "provenance.json",
                                    "provenance-schema", "library"])
def test_a_damaged_bundle_reports_only_rows_of_its_table_in_their_order(
        example_release: BuiltExample, tmp_path: Path, damage: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    if damage == "provenance-schema":
        edit_provenance(bundle, lambda statement: statement.update(_type="nonsense"))
    elif damage == "library":
        [library] = (bundle / "lib").iterdir()
        library.unlink()
    else:
        (bundle / damage).unlink()
    report = verify_path(bundle)
    assert not report.ok
    assert _in_table_order(_names(report), NATIVE_CHECKS), _names(report)


def _qa_without_graph(example_release: BuiltExample, tmp_path: Path) -> Path:
    """The example as a qa bundle that records no graph: verify passes it with graph.present
    skipped, graph.qa-free and features.compiled never run."""
    bundle = copy_bundle(example_release.bundle, tmp_path / "work")

    def without_graph(statement: dict[str, Any]) -> None:
        statement["predicate"]["buildDefinition"]["externalParameters"]["channel"] = "qa"
        details = statement["predicate"]["runDetails"]
        details["byproducts"] = [b for b in details["byproducts"] if b["name"] != "horon:graph"]

    edit_provenance(bundle, without_graph)
    edit_manifest(bundle, lambda manifest: manifest.update(channel="qa"))
    return bundle


def test_install_admits_by_the_proving_rows_of_the_table(
        example_release: BuiltExample, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph-less qa bundle with --allow-qa: graph.present and graph.qa-free are waived by
    the table, features.compiled is not; each row changed changes the answer."""
    bundle = _qa_without_graph(example_release, tmp_path)
    with pytest.raises(Refused) as refused:
        admission.admit(bundle, AuditOptions(), allow_qa=True)
    assert [(f.code, f.message) for f in refused.value.findings] == [
        (codes.INSTALL_UNPROVEN, f"{bundle.name}: check features.compiled did not pass "
                                 "(not run)")]
    monkeypatch.setattr(admission, "NATIVE_CHECKS", _without(NATIVE_CHECKS,
                                                             "features.compiled"))
    assert admission.admit(bundle, AuditOptions(), allow_qa=True).manifest.channel == "qa"
    unwaived = CheckTable(passing=NATIVE_CHECKS.passing, rows=tuple(
        dataclasses.replace(r, waived_for_qa=False) for r in NATIVE_CHECKS.rows
        if r.name != "features.compiled"))
    monkeypatch.setattr(admission, "NATIVE_CHECKS", unwaived)
    with pytest.raises(Refused) as refused:
        admission.admit(bundle, AuditOptions(), allow_qa=True)
    assert [f.message for f in refused.value.findings] == [
        f"{bundle.name}: check graph.present did not pass (qa bundle without a recorded graph)",
        f"{bundle.name}: check graph.qa-free did not pass (not run)"]


def test_publish_admits_by_the_proving_rows_of_the_table(
        example_release: BuiltExample, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _qa_without_graph(example_release, tmp_path)
    dist = tmp_path / "dist"
    dist.mkdir()
    archive = dist / f"example-0.1.0-{HOST}-qa.zip"
    with zipfile.ZipFile(example_release.archive) as built, zipfile.ZipFile(archive, "w") as qa:
        for entry in built.infolist():
            qa.writestr(entry, (bundle / entry.filename).read_bytes(),
                        compress_type=zipfile.ZIP_DEFLATED)
    unproven_names = ["graph.present", "graph.qa-free", "features.compiled"]

    def refusals() -> list[str]:
        _item, problems = preflight.check_archive(archive, None)
        return [f.message.split(" ")[2] for f in problems if f.code is codes.PUBLISH_UNPROVEN]

    assert refusals() == unproven_names  # publish waives nothing: it takes release bundles
    table = NATIVE_CHECKS
    for left, name in enumerate(unproven_names, start=1):
        table = _without(table, name)
        monkeypatch.setattr(preflight, "NATIVE_CHECKS", table)
        assert refusals() == unproven_names[left:]


def test_a_harness_check_passes_with_warnings_because_its_table_says_so() -> None:
    report = HarnessReport(path="x.zip")
    for name in HARNESS_CHECKS.proving:
        report.judged(name, [], warnings=[Finding(codes.HOOK_ENV_CREDENTIAL, "reads TOKEN")]
                      if name == "hook.lint" else [])
    assert unproven(report, HARNESS_CHECKS, code=codes.INSTALL_UNPROVEN, where="x.zip") == []
    strict = CheckTable(rows=HARNESS_CHECKS.rows, passing=frozenset([PASS]))
    assert [f.message for f in unproven(report, strict, code=codes.INSTALL_UNPROVEN,
                                        where="x.zip")] == [
        "x.zip: check hook.lint did not pass (warn)"]


def test_unproven_names_each_proving_row_not_run_or_not_passed_and_only_those() -> None:
    report = VerifyReport(path="b.zip")
    report.judged("manifest.strict", [])
    report.skipped("graph.present", "qa bundle without a recorded graph")
    report.checks.append(dataclasses.replace(report.checks[0], name="evidence", status=SKIP))
    report.judged("layout.file-types", [])  # not proving: never asked for
    found = unproven(report, NATIVE_CHECKS, code=codes.PUBLISH_UNPROVEN, where="b.zip")
    assert {f.code for f in found} == {codes.PUBLISH_UNPROVEN}
    assert [f.message for f in found] == [
        f"b.zip: check {name} did not pass ({why})" for name, why in (
            ("integrity.declared", "not run"), ("integrity.sha256sums", "not run"),
            ("provenance.schema", "not run"), ("provenance.binding", "not run"),
            ("evidence", "skip"), ("graph.present", "qa bundle without a recorded graph"),
            ("graph.qa-free", "not run"), ("features.compiled", "not run"),
            ("features.advertised", "not run"))]
    waived = unproven(report, NATIVE_CHECKS, code=codes.PUBLISH_UNPROVEN, where="b.zip",
                      qa_waiver=True)
    assert [f.message.split(" ")[2] for f in waived] == [
        "integrity.declared", "integrity.sha256sums", "provenance.schema",
        "provenance.binding", "evidence", "features.compiled", "features.advertised"]
    report.judged("integrity.declared", [Finding(codes.CHECKSUM_SIZE, "b.zip: too long")])
    assert unproven(report, NATIVE_CHECKS, code=codes.PUBLISH_UNPROVEN, where="b.zip") == []


def test_the_runner_records_each_verdict_under_its_rows_name_and_stops_where_told() -> None:
    refusal = Finding(codes.LAYOUT_MISSING, "gone")
    warning = Finding(codes.HOOK_ENV_CREDENTIAL, "reads TOKEN")
    ran: list[str] = []

    def verdict(name: str, result: Verdict | None) -> CheckRow[list[str]]:
        def judge(context: list[str]) -> Verdict | None:
            context.append(name)
            return result
        return CheckRow(name, judge)

    rows = (verdict("a", Judged()), verdict("b", None), verdict("c", Skipped("no input")),
            verdict("d", Judged(warnings=[warning], note="n")),
            dataclasses.replace(verdict("e", Judged([refusal])), stops=True),
            verdict("f", Judged()))
    report = CheckList()
    run_table(CheckTable(rows=rows, passing=frozenset([PASS])), ran, report)
    assert ran == ["a", "b", "c", "d", "e"]
    assert [(c.name, c.status, c.note) for c in report.checks] == [
        ("a", PASS, ""), ("c", SKIP, "no input"), ("d", WARN, "n"), ("e", FAIL, "")]
    assert report.checks[2].warnings == [warning] and report.checks[3].findings == [refusal]
    passing = dataclasses.replace(verdict("e", Judged()), stops=True)
    report = CheckList()
    run_table(CheckTable(rows=(passing, rows[5]), passing=frozenset([PASS])), [], report)
    assert _names(report) == ["e", "f"]  # only a refusal stops the run


def test_a_table_refuses_a_name_twice_and_a_waiver_of_a_row_that_proves_nothing() -> None:
    def judge(_context: object) -> Verdict | None:
        return None

    with pytest.raises(ValueError, match="named twice"):
        CheckTable(rows=(CheckRow("a", judge), CheckRow("a", judge)), passing=frozenset())
    with pytest.raises(ValueError, match="waived"):
        CheckTable(rows=(CheckRow("a", judge, waived_for_qa=True),), passing=frozenset())
