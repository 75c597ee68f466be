"""`horon-bundle reproduce`: rebuild a bundle from source as recorded and compare, byte by byte.

Order: the bundle must verify; its evidence must be a recorded cargo invocation; the
toolchain here (cargo, rustc, host, horon-bundle) must equal the recorded one, and a git
checkout must be at the recorded revision, clean — both checked *before* anything is built.
Then the same pipeline as `build` (`build.pipeline.build`) rebuilds it into a fresh directory, with
the recorded plugin, target, channel, builder id and SOURCE_DATE_EPOCH, and the recorded
(allowlisted) build environment in place of this shell's. Every file is compared: the
library and sidecars byte for byte (digests, sizes, first differing offset), JSON files
field by field (provenance: every field but the builder identity), the archive by digest.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import horon_bundle
from horon_bundle.build.pipeline import build
from horon_bundle.build.request import BuildRequest
from horon_bundle.build.source_facts import source_facts
from horon_bundle.cargo.invocation import PathNormaliser, recorded_environment
from horon_bundle.cargo.toolchain import probe_toolchain
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.model.evidence import EVIDENCE_INVOCATION
from horon_bundle.model.provenance import BuildFacts
from horon_bundle.reproduce.compare import compare_archive, compare_files
from horon_bundle.reproduce.report import ReproduceReport
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.reading.open import open_bundle

TOOLCHAIN_FACTS = ("cargo", "rustc", "rustc_commit", "host")


def reproduce(path: Path, source: Path, *, out: Path | None = None,
              reporter: Reporter | None = None) -> ReproduceReport:
    """Rebuild the bundle at `path` from the checkout `source` and compare everything."""
    reporter = reporter or SilentReporter()
    if not source.is_dir():
        raise Refused.one(codes.INPUT_UNREADABLE, f"--source {source}: not a directory")
    verified = verify_path(path)
    if not verified.ok:
        raise Refused(verified.findings)
    assert verified.manifest is not None and verified.provenance is not None
    facts = verified.provenance.facts
    report = ReproduceReport(path=str(path), source=str(source), manifest=verified.manifest)
    if facts.evidence != EVIDENCE_INVOCATION or facts.invocation is None:
        raise Refused.one(codes.REPRODUCE_EVIDENCE,
                          f"{path.name}: evidence is {facts.evidence!r}: no cargo invocation "
                          "recorded in this bundle to re-run")
    workspace = source.resolve()
    reporter.step("checking the recorded toolchain and source revision")
    _check_toolchain(workspace, facts, report)
    _check_revision(workspace, facts, report)
    if report.findings:
        return report
    with contextlib.ExitStack() as stack:
        base = out if out is not None else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="horon-reproduce-")))
        target_dir = Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="horon-reproduce-target-")))
        environment = _recorded_environment(facts, workspace=workspace, target_dir=target_dir)
        reporter.step(f"rebuilding {facts.plugin_id} {facts.version} for {facts.target} "
                      f"({facts.channel}) from {workspace}")
        results = build(BuildRequest(
            workspace=workspace, out=base, plugin_id=facts.plugin_id,
            targets=(facts.target,), channel=facts.channel, target_dir=target_dir,
            builder=facts.builder_id, epoch=facts.source_date_epoch,
            environ=environment), reporter)
        report.built = True
        rebuilt = results[0]
        reporter.step("comparing the rebuilt bundle with the recorded one")
        with open_bundle(path) as recorded_source, open_bundle(rebuilt.bundle) as new_source:
            compare_files(recorded_source, new_source, verified.manifest, report)
        if path.is_file():
            compare_archive(path, rebuilt.archive, report)
        if out is not None:
            report.notes.append(f"rebuilt bundle kept in {rebuilt.bundle}")
    return report


def _check_toolchain(workspace: Path, facts: BuildFacts, report: ReproduceReport) -> None:
    assert facts.invocation is not None
    recorded = {key: str(facts.invocation.toolchain.get(key, "(not recorded)"))
                for key in TOOLCHAIN_FACTS}
    recorded["horon-bundle"] = facts.tool_version or "(not recorded)"
    here = dict(probe_toolchain(workspace).to_json())
    here["horon-bundle"] = horon_bundle.__version__
    report.toolchain = {"recorded": recorded, "here": {k: here.get(k, "") for k in recorded}}
    for key, value in recorded.items():
        if here.get(key) != value:
            report.findings.append(Finding(
                codes.REPRODUCE_TOOLCHAIN,
                f"toolchain {key}: recorded {value!r}, here {here.get(key)!r}"))


def _check_revision(workspace: Path, facts: BuildFacts, report: ReproduceReport) -> None:
    here = source_facts(workspace)
    report.revision = {"recorded": facts.source_revision, "recorded_dirty": facts.source_dirty,
                       "here": here.revision, "here_dirty": here.dirty}
    if facts.source_revision is None:
        return
    if here.revision is None:
        report.notes.append(f"{workspace} is not a git checkout: its revision cannot be checked "
                            f"against the recorded {facts.source_revision}")
        return
    if here.revision != facts.source_revision:
        report.findings.append(Finding(
            codes.REPRODUCE_SOURCE, f"{workspace} is at revision {here.revision}, the bundle "
                                    f"was built from {facts.source_revision}"))
    elif here.dirty and not facts.source_dirty:
        report.findings.append(Finding(
            codes.REPRODUCE_SOURCE, f"{workspace} has local changes; the bundle was built from "
                                    f"a clean checkout of {facts.source_revision}"))


def _recorded_environment(facts: BuildFacts, *, workspace: Path,
                          target_dir: Path) -> dict[str, str]:
    """This shell's environment with its allowlisted build variables replaced by the recorded
    ones (placeholders expanded): the environment the rebuild runs in."""
    assert facts.invocation is not None
    places = {"$WORKSPACE": str(workspace), "$TARGET_DIR": str(target_dir),
              "$CARGO_HOME": os.environ.get("CARGO_HOME") or str(Path.home() / ".cargo"),
              "$HOME": str(Path.home())}
    environment = dict(os.environ)
    for name in recorded_environment(os.environ, PathNormaliser({})):
        del environment[name]
    for name, recorded in facts.invocation.env.items():
        value = recorded
        for placeholder, actual in places.items():
            value = value.replace(placeholder, actual)
        environment[name] = value
    return environment
