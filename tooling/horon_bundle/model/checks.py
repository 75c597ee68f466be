"""The check/report model every judge shares (verify, doctor, install's status).

A report is a list of named checks, each `pass`, `fail` (with findings carrying registered
codes), `warn` (passed, with warnings that carry codes too) or `skip` (with the reason). The
exit status follows from the failing findings only: 1 when the input was refused, 3 when only
the environment stood in the way; warnings never change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from horon_bundle.core.errors import Code, Finding, exit_status_for

PASS, FAIL, SKIP, WARN = "pass", "fail", "skip", "warn"


@dataclass(slots=True)
class Check:
    name: str
    status: str
    findings: list[Finding] = field(default_factory=list)
    note: str = ""
    expected: Any = None
    got: Any = None
    warnings: list[Finding] = field(default_factory=list)

    def to_json(self, *, values: bool = False) -> dict[str, Any]:
        """The check as data; `values` adds what was expected and what was seen."""
        document: dict[str, Any] = {"check": self.name, "result": self.status,
                                    "note": self.note,
                                    "findings": [f.to_dict() for f in self.findings]}
        if self.warnings:
            document["warnings"] = [f.to_dict() for f in self.warnings]
        if values:
            document["expected"] = self.expected
            document["got"] = self.got
        return document


@dataclass(slots=True)
class CheckList:
    """The checks of one report, in the order they ran."""

    checks: list[Check] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for check in self.checks for f in check.findings]

    @property
    def warnings(self) -> list[Finding]:
        """Findings that are reported but do not refuse (see `judged(..., warnings=)`)."""
        return [f for check in self.checks for f in check.warnings]

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def exit_status(self) -> int:
        return exit_status_for(self.findings)

    def judged(self, name: str, findings: list[Finding] | Any, *, note: str = "",
               expected: Any = None, got: Any = None,
               warnings: list[Finding] | Any = ()) -> bool:
        """Pass when `findings` is empty (`warn` when there are `warnings`), fail with them
        otherwise; True when it passed."""
        items, warned = list(findings), list(warnings)
        status = FAIL if items else WARN if warned else PASS
        self.checks.append(Check(name, status, items, note, expected, got, warned))
        return not items

    def passed(self, name: str, *, note: str = "", expected: Any = None,
               got: Any = None) -> None:
        self.checks.append(Check(name, PASS, [], note, expected, got))

    def failed(self, name: str, code: Code, messages: str | list[str], *, note: str = "",
               expected: Any = None, got: Any = None) -> None:
        items = [messages] if isinstance(messages, str) else messages
        self.checks.append(Check(name, FAIL, [Finding(code, message) for message in items],
                                 note, expected, got))

    def failed_with(self, name: str, findings: list[Finding], *, note: str = "",
                    expected: Any = None, got: Any = None) -> None:
        self.checks.append(Check(name, FAIL, list(findings), note, expected, got))

    def skipped(self, name: str, why: str) -> None:
        self.checks.append(Check(name, SKIP, [], why))

    def find(self, name: str) -> Check | None:
        for item in self.checks:
            if item.name == name:
                return item
        return None
