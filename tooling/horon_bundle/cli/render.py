"""Everything the CLI shows a human: refusals, progress, summaries. Always on stderr.

One funnel: every value a command prints goes through `say(markup, *values)`, which escapes
it (`escape`), so no path, id or message — however hostile — can start a line of its own,
forge an `ERROR` line or a `::error` annotation, move the cursor or change colours
(`tests/test_output_escaping.py` checks every command, and that no `print` in `cli/` takes
a value any other way). Colour, bold and the spinner appear only on a terminal and never
under `NO_COLOR`; `--json` prints exactly one document on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape as _markup_escape

from horon_bundle.cli import github
from horon_bundle.cli.escaping import JSON_UNSAFE, plain
from horon_bundle.core.errors import Finding

# no-color.org: present and not empty
NO_COLOR = bool(os.environ.get("NO_COLOR"))
stderr = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False,
                 color_system=None if NO_COLOR else "auto")


def escape(text: str) -> str:
    """`plain(text)`, safe inside rich markup too."""
    return _markup_escape(plain(text))


def say(markup: str, *values: object) -> None:
    """Print one line: `markup` is a literal of this module's callers (rich markup with `{}`
    placeholders); every value is escaped before it is put in its place."""
    stderr.print(markup.format(*(escape(str(value)) for value in values)))


def decorated() -> bool:
    """Spinners and live progress: only on a terminal, and never under NO_COLOR."""
    return stderr.is_terminal and not NO_COLOR


def print_json(document: Any) -> None:
    """The one JSON document of a --json run, on stdout (controls that JSON itself allows
    raw — DEL, C1, the line separators, bidirectional controls — escaped as well)."""
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write(text.translate(JSON_UNSAFE) + "\n")
    sys.stdout.flush()


def findings(items: Iterable[Finding], *, subject: str | None = None) -> None:
    """Each finding as one `ERROR code: message` line, what the tool said under it, its hint;
    under GitHub Actions also as an annotation pointing at its file (or at `subject`)."""
    for finding in items:
        say("[bold red]ERROR[/] [bold]{}[/]: {}", finding.code.name, finding.message)
        for line in finding.detail:
            say("  [dim]│[/] {}", line)
        say("  [dim]hint:[/] {}", finding.effective_hint)
        github.annotate("error", finding.code.name,
                        f"{finding.message} (hint: {finding.effective_hint})",
                        file=finding.file or subject, line=finding.line)


def warning(text: str, *, subject: str | None = None) -> None:
    say("[bold yellow]warning:[/] {}", text)
    github.annotate("warning", "horon-bundle", text, file=subject)


def warnings(items: Iterable[Finding], *, subject: str | None = None) -> None:
    """Each warning as one `WARNING code: message` line and its hint (the exit status is not
    changed by a warning); under GitHub Actions also as a warning annotation."""
    for finding in items:
        say("[bold yellow]WARNING[/] [bold]{}[/]: {}", finding.code.name, finding.message)
        say("  [dim]hint:[/] {}", finding.effective_hint)
        github.annotate("warning", finding.code.name, finding.message,
                        file=finding.file or subject, line=finding.line)


def refusal_document(items: Iterable[Finding], exit_status: int) -> dict[str, Any]:
    return {"ok": False, "exit_status": exit_status, "findings": [f.to_dict() for f in items]}


class ConsoleReporter:
    """Renders a stage's progress: steps as lines; on a terminal the current step's details
    (cargo's compiled units, bytes hashed) as a transient spinner line, folded away when
    the step ends."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self._status: Any = None

    def step(self, text: str) -> None:
        if self.quiet:
            return
        self._stop_status()
        say("[cyan]•[/] {}", text)
        if decorated():
            self._status = stderr.status("", spinner="dots")
            self._status.start()

    def detail(self, text: str) -> None:
        if self._status is not None:
            self._status.update(escape(text))

    def note(self, text: str) -> None:
        if self.quiet:
            return
        self._stop_status()
        say("[yellow]note:[/] {}", text)

    def close(self) -> None:
        self._stop_status()

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
