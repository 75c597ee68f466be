"""Checks declared once per bundle kind: a table of rows, run in order, read by admission.

Each kind lists its checks as rows, like goreleaser's list of pipes: the native table is
`verify.judge.NATIVE_CHECKS`, the harness table `verify.harness.judge.HARNESS_CHECKS`. A row
is the check's name, the function that judges it and whether its pass proves a release. A
judge reads one shared context (the bundle source, the report, the options and what earlier
rows produced) and returns its verdict: `Judged` (findings, warnings, a note), `Skipped` (why
it could not be judged), or None: nothing to report (a check reported only when it refuses,
or one whose input an earlier row could not produce). `run_table` records each verdict under
its row's name, so a judge never names its check, and a report holds the table's names in
the table's order. `unproven` is the one answer to "does this report admit its bundle to
install or publish": every proving row must have run and passed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Generic, TypeVar

from horon_bundle.core.errors import Code, Finding
from horon_bundle.model.checks import CheckList

ContextT = TypeVar("ContextT")


@dataclass(frozen=True, slots=True)
class Judged:
    """The check ran: it passes without findings (`warn` with warnings only), fails with."""

    findings: Sequence[Finding] = ()
    warnings: Sequence[Finding] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class Skipped:
    """The check could not be judged; `why` is the report's note."""

    why: str


Verdict = Judged | Skipped


@dataclass(frozen=True, slots=True)
class CheckRow(Generic[ContextT]):
    """One check of a bundle kind.

    `proves_release`: install and publish require it to have run and passed (a skip is not
    good enough). `waived_for_qa`: a qa bundle installed with --allow-qa need not pass it
    (publish, which takes release bundles only, never waives it). `stops`: when it refuses,
    no later row runs (they all need what it could not give)."""

    name: str
    judge: Callable[[ContextT], Verdict | None]
    _: KW_ONLY
    proves_release: bool = False
    waived_for_qa: bool = False
    stops: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckTable(Generic[ContextT]):
    """The rows of one bundle kind in the order they run; `passing` is the statuses a
    proving check may end with (a harness check may pass with warnings)."""

    rows: tuple[CheckRow[ContextT], ...]
    passing: frozenset[str]

    def __post_init__(self) -> None:
        names = [row.name for row in self.rows]
        if len(set(names)) != len(names):
            raise ValueError(f"a check named twice in one table: {names}")
        if any(row.waived_for_qa and not row.proves_release for row in self.rows):
            raise ValueError("only a check that proves a release can be waived")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(row.name for row in self.rows)

    @property
    def proving(self) -> tuple[str, ...]:
        return tuple(row.name for row in self.rows if row.proves_release)


def run_table(table: CheckTable[ContextT], context: ContextT, report: CheckList) -> None:
    """Run every row in order, each verdict recorded under its row's name."""
    for row in table.rows:
        verdict = row.judge(context)
        if verdict is None:
            continue
        if isinstance(verdict, Skipped):
            report.skipped(row.name, verdict.why)
            continue
        passed = report.judged(row.name, list(verdict.findings), warnings=list(verdict.warnings),
                               note=verdict.note)
        if row.stops and not passed:
            return


def unproven(report: CheckList, table: CheckTable[Any], *, code: Code, where: str,
             qa_waiver: bool = False) -> list[Finding]:
    """Why a report that passed still does not admit its bundle: one finding (`code`) per
    proving row of `table` that did not run, or did not end with a passing status, in the
    table's order. `qa_waiver`: the rows waived for qa bundles are not required. A report
    with refusals gets none: its own findings refuse it."""
    if not report.ok:
        return []
    results = {check.name: check for check in report.checks}
    findings = []
    for row in table.rows:
        if not row.proves_release or (qa_waiver and row.waived_for_qa):
            continue
        check = results.get(row.name)
        if check is None or check.status not in table.passing:
            why = "not run" if check is None else (check.note or check.status)
            findings.append(Finding(code, f"{where}: check {row.name} did not pass ({why})"))
    return findings
