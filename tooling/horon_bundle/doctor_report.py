"""The doctor's report: one entry per check (pass, fail or skip) with expected and got.

A failed check carries findings with registered codes; the exit status follows from them
(1 for a refused bundle, 3 when only the environment stood in the way). `to_json` is the
`--json` document, format `horon.doctor-report.v1`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from horon_bundle.errors import Code, Finding, exit_status_for

REPORT_FORMAT = "horon.doctor-report.v1"
PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass(slots=True)
class DoctorCheck:
    name: str
    status: str
    expected: Any = None
    got: Any = None
    note: str = ""
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"check": self.name, "result": self.status, "expected": self.expected,
                "got": self.got, "note": self.note,
                "findings": [f.to_dict() for f in self.findings]}


@dataclass(slots=True)
class DoctorReport:
    path: str
    host: str | None = None
    host_source: str = ""
    bundle: dict[str, Any] | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    checks: list[DoctorCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for check in self.checks for f in check.findings]

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def exit_status(self) -> int:
        return exit_status_for(self.findings)

    def passed(self, name: str, *, expected: Any = None, got: Any = None,
               note: str = "") -> None:
        self.checks.append(DoctorCheck(name, PASS, expected, got, note))

    def failed(self, name: str, code: Code, messages: str | list[str], *, expected: Any = None,
               got: Any = None, note: str = "") -> None:
        items = [messages] if isinstance(messages, str) else messages
        self.checks.append(DoctorCheck(name, FAIL, expected, got, note,
                                       [Finding(code, message) for message in items]))

    def failed_with(self, name: str, findings: list[Finding], *, expected: Any = None,
                    got: Any = None, note: str = "") -> None:
        self.checks.append(DoctorCheck(name, FAIL, expected, got, note, list(findings)))

    def judged(self, name: str, findings: list[Finding], *, expected: Any = None,
               got: Any = None, note: str = "") -> None:
        """Pass when `findings` is empty, fail with them otherwise."""
        status = FAIL if findings else PASS
        self.checks.append(DoctorCheck(name, status, expected, got, note, list(findings)))

    def skipped(self, name: str, why: str) -> None:
        self.checks.append(DoctorCheck(name, SKIP, note=why))

    def check(self, name: str) -> DoctorCheck | None:
        for item in self.checks:
            if item.name == name:
                return item
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT, "path": self.path, "ok": self.ok,
            "exit_status": self.exit_status, "host": self.host,
            "host_source": self.host_source, "bundle": self.bundle,
            "environment": dict(self.environment),
            "checks": [c.to_json() for c in self.checks], "notes": list(self.notes),
        }
