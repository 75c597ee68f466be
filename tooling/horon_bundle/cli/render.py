"""Everything the CLI shows a human: refusals, progress, summaries. Always on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape

from horon_bundle.core.errors import Finding

stderr = Console(stderr=True, highlight=False, soft_wrap=True)
_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F]}
_CONTROL.update({0x85: "\\x85", 0x2028: "\\u2028", 0x2029: "\\u2029"})


def escape(text: str) -> str:
    """`text` safe to print inside markup: rich's markup escaped, control characters (a
    newline, an escape sequence, a Unicode line separator) shown as `\\xNN`, so no value the
    CLI prints can forge a line of its own."""
    return _markup_escape(text.translate(_CONTROL))


def print_json(document: Any) -> None:
    """The one JSON document of a --json run, on stdout."""
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def findings(items: Iterable[Finding]) -> None:
    for finding in items:
        stderr.print(f"[bold red]ERROR[/] [bold]{finding.code.name}[/]: {escape(finding.message)}")
        stderr.print(f"  [dim]hint:[/] {escape(finding.effective_hint)}")


def warnings(items: Iterable[Finding]) -> None:
    for finding in items:
        stderr.print(f"[bold yellow]WARNING[/] [bold]{finding.code.name}[/]: "
                     f"{escape(finding.message)}")
        stderr.print(f"  [dim]hint:[/] {escape(finding.effective_hint)}")


def refusal_document(items: Iterable[Finding], exit_status: int) -> dict[str, Any]:
    return {"ok": False, "exit_status": exit_status, "findings": [f.to_dict() for f in items]}


class ConsoleReporter:
    """Renders a stage's progress: steps as lines, details as a transient status on a TTY."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self._status: Any = None

    def step(self, text: str) -> None:
        if self.quiet:
            return
        self._stop_status()
        stderr.print(f"[cyan]•[/] {escape(text)}")
        if stderr.is_terminal:
            self._status = stderr.status("", spinner="dots")
            self._status.start()

    def detail(self, text: str) -> None:
        if self._status is not None:
            self._status.update(escape(text))

    def note(self, text: str) -> None:
        if self.quiet:
            return
        self._stop_status()
        stderr.print(f"[yellow]note:[/] {escape(text)}")

    def close(self) -> None:
        self._stop_status()

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
