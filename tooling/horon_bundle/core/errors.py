"""Typed refusals: every problem the toolchain reports is a `Finding` carrying a registered code.

The library never prints. A stage raises `Refused` with one or more findings; the CLI turns
them into `ERROR <code>: <message>` + `hint: …` lines (or JSON) and the exit status.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERNAL = 4


@dataclass(frozen=True, slots=True)
class Code:
    """A stable dotted refusal code, registered once in `horon_bundle.core.codes`."""

    name: str
    summary: str
    hint: str
    exit_status: int = EXIT_REFUSED


_REGISTRY: dict[str, Code] = {}


def register(name: str, summary: str, hint: str, *, exit_status: int = EXIT_REFUSED) -> Code:
    """Add a code to the registry; a second registration of one name is a programming error."""
    if name in _REGISTRY:
        raise RuntimeError(f"refusal code registered twice: {name}")
    code = Code(name=name, summary=summary, hint=hint, exit_status=exit_status)
    _REGISTRY[name] = code
    return code


def registered_codes() -> tuple[Code, ...]:
    """Every registered code, sorted by name (what docs/refusal-codes.md lists)."""
    return tuple(_REGISTRY[name] for name in sorted(_REGISTRY))


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: a code, a one-line message naming file/field/value, and a hint.

    `detail` carries what another tool said about it (cargo's own `error:` lines with their
    context), shown under the message; `file` and `line` say where the problem is when that
    is known (a CI annotation points there).
    """

    code: Code
    message: str
    hint: str = ""
    detail: tuple[str, ...] = ()
    file: str | None = None
    line: int | None = None

    @property
    def effective_hint(self) -> str:
        return self.hint or self.code.hint

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {"code": self.code.name, "message": self.message,
                                    "hint": self.effective_hint}
        if self.detail:
            document["detail"] = list(self.detail)
        if self.file is not None:
            document["file"] = self.file
        if self.line is not None:
            document["line"] = self.line
        return document

    def located(self, file: str, line: int | None = None) -> Finding:
        """The same finding, placed in `file` (unless it already names a place)."""
        if self.file is not None:
            return self
        return Finding(self.code, self.message, self.hint, self.detail, file, line)


class Refused(Exception):
    """Raised by a stage that refuses its input; carries every finding collected so far."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.findings: tuple[Finding, ...] = tuple(findings)
        if not self.findings:
            raise RuntimeError("Refused raised without a finding")
        super().__init__("; ".join(f"{f.code.name}: {f.message}" for f in self.findings))

    @classmethod
    def one(cls, code: Code, message: str, hint: str = "", *, detail: Iterable[str] = (),
            file: str | None = None, line: int | None = None) -> Refused:
        return cls([Finding(code, message, hint, tuple(detail), file, line)])

    @property
    def exit_status(self) -> int:
        return exit_status_for(self.findings)

    def codes(self) -> list[str]:
        return [f.code.name for f in self.findings]


def exit_status_for(findings: Iterable[Finding]) -> int:
    """A refusal of the input (1) outranks an environment problem (3)."""
    statuses = {f.code.exit_status for f in findings}
    if not statuses:
        return EXIT_OK
    if EXIT_REFUSED in statuses:
        return EXIT_REFUSED
    return max(statuses)


@dataclass(slots=True)
class Findings:
    """Collects findings so that a check reports every problem, not only the first."""

    items: list[Finding] = field(default_factory=list)

    def add(self, code: Code, message: str, hint: str = "") -> None:
        self.items.append(Finding(code, message, hint))

    def add_finding(self, finding: Finding) -> None:
        self.items.append(finding)

    def extend(self, findings: Iterable[Finding]) -> None:
        self.items.extend(findings)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise Refused(self.items)
