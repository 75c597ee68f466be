"""Everything the CLI shows a human: results on stdout, refusals, progress and notes on stderr.

Two streams (docs/output.md): `result(markup, *values)` writes a line of the command's result
(a verdict, a list, a report) on stdout; `say(markup, *values)` writes progress, notes and
the `ERROR code:` / `WARNING code:` lines with their hints on stderr. Under `--json`
(`json_run`, set by `cli.main`) stdout carries the one document and nothing else: the result's
human lines then go to stderr.

One funnel: every value a command prints goes through `say(markup, *values)`, which escapes
it (`escape`), so no path, id or message — however hostile — can start a line of its own,
forge an `ERROR` line or a `::error` annotation, move the cursor or change colours
(`tests/cli/test_output_escaping.py` checks every command, and that no `print` in `cli/` takes
a value any other way). Colour, bold and the spinner appear only on a terminal and never
under `NO_COLOR`; `--json` prints exactly one document on stdout.

Only a terminal that can show colour gets rich (imported then, and only then: it costs more
than the rest of a `verify`); anywhere else — a pipe, a CI log, `NO_COLOR` — the markup's
tags are dropped by `strip_markup`, which reads them as rich does, and the same text is
written without it (`tests/cli/test_cli_output.py` compares the two).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable

from horon_bundle.cli import github
from horon_bundle.cli.escaping import JSON_UNSAFE, plain
from horon_bundle.core.errors import Finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any, NoReturn

# rich.markup's tag grammar: `[tag]`, `[/]`, `[link=…]`; an odd run of backslashes escapes it
# a number with a fraction or an exponent ending a line of orjson's indented text, where each
# value ends its line and a string ends with its quote: a float, which orjson may write
# otherwise than the standard encoder (an exponent's sign)
_FLOAT = re.compile(r"[0-9][.eE][-+]?[0-9]+,?\n")
_TAG = re.compile(r"(\\*)\[([a-z#/@][^[]*?)]")
# stderr (False) or stdout (True) -> its rich console, made when first needed
_consoles: dict[bool, Any] = {}
# set by cli.main for each run: under --json, stdout holds the document and nothing else
json_run = False


def _terminal(*, stdout: bool = False) -> bool:
    """Whether rich would treat the stream as a terminal (TTY_COMPATIBLE, FORCE_COLOR,
    isatty)."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    forced = os.environ.get("FORCE_COLOR")
    if forced is not None:
        return forced != ""
    try:
        return (sys.stdout if stdout else sys.stderr).isatty()
    except (AttributeError, ValueError):
        return False


def console(*, stdout: bool = False) -> Any:
    """The rich console for stderr (or stdout), made (and rich imported) on first use; it
    writes to whatever sys.stderr (sys.stdout) is at the time."""
    if stdout not in _consoles:
        from rich.console import Console  # noqa: PLC0415 - only for a terminal

        _consoles[stdout] = Console(stderr=not stdout, highlight=False, soft_wrap=True,
                                    emoji=False, color_system="auto")
    return _consoles[stdout]


def rich_output(*, stdout: bool = False) -> bool:
    """Colour and styles are shown: a terminal, and no NO_COLOR (no-color.org: present and
    not empty), read when asked, as every other setting is."""
    return not os.environ.get("NO_COLOR") and _terminal(stdout=stdout)


def strip_markup(markup: str) -> str:
    """The text rich would show for `markup` without styles: tags dropped, escaped ones kept
    literally (with the backslash that escaped them removed)."""
    def untag(match: re.Match[str]) -> str:
        backslashes, escaped = divmod(len(match.group(1)), 2)
        return "\\" * backslashes + (match.group(0)[len(match.group(1)):] if escaped else "")

    return _TAG.sub(untag, markup)


def escape(text: str) -> str:
    """`plain(text)`, safe inside rich markup too."""
    from rich.markup import escape as markup_escape  # noqa: PLC0415 - only for a terminal

    return markup_escape(plain(text))


def _line(markup: str, values: tuple[object, ...], *, stdout: bool) -> None:
    if rich_output(stdout=stdout):
        console(stdout=stdout).print(markup.format(*(escape(str(value)) for value in values)))
        return
    text = strip_markup(markup).format(*(plain(str(value)) for value in values))
    stream = sys.stdout if stdout else sys.stderr
    stream.write(text + "\n")
    stream.flush()


def say(markup: str, *values: object) -> None:
    """Print one line of progress or diagnostics on stderr: `markup` is a literal of this
    module's callers (rich markup with `{}` placeholders); every value is escaped before it
    is put in its place."""
    _line(markup, values, stdout=False)


def result(markup: str, *values: object) -> None:
    """Print one line of the command's result (as `say`) on stdout; under --json on stderr,
    so that stdout holds the document alone."""
    _line(markup, values, stdout=not json_run)


def page(markdown: str) -> None:
    """A documentation page (our own shipped Markdown, not a value) on stdout: rendered by
    rich for a terminal, the Markdown itself anywhere else or under NO_COLOR."""
    if rich_output(stdout=True):
        from rich.markdown import Markdown  # noqa: PLC0415 - only for a terminal

        console(stdout=True).print(Markdown(markdown))
        return
    sys.stdout.write(markdown)
    sys.stdout.flush()


def decorated() -> bool:
    """Spinners and live progress: only on a terminal, and never under NO_COLOR."""
    return rich_output()


def json_text(document: Any) -> str:
    """`json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)`, written by orjson
    (the same text at C speed: the standard encoder has no C path with an indent, and the
    document of a graph of 10,000 packages takes it most of a second); the standard encoder
    where orjson would write otherwise or refuses (an integer past 2^53, a key that is not a
    string, a float: our documents carry none, and orjson writes some exponents otherwise).
    A non-finite float, which no document carries, comes out as null (the standard encoder
    writes NaN, which is not JSON)."""
    import orjson  # noqa: PLC0415 - only --json runs write a document

    try:
        text = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
                            | orjson.OPT_STRICT_INTEGER | orjson.OPT_PASSTHROUGH_DATACLASS
                            | orjson.OPT_PASSTHROUGH_DATETIME,
                            default=_refuse_to_encode).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = None
    if text is None or _FLOAT.search(text + "\n") is not None:
        text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
    return text


def _refuse_to_encode(value: object) -> NoReturn:
    raise TypeError(type(value).__name__)


def print_json(document: Any) -> None:
    """The one JSON document of a --json run, on stdout (controls that JSON itself allows
    raw — DEL, C1, the line separators, bidirectional controls — escaped as well)."""
    sys.stdout.write(json_text(document).translate(JSON_UNSAFE) + "\n")
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
            self._status = console().status("", spinner="dots")
            self._status.start()

    def detail(self, text: str) -> None:
        if self._status is not None:
            self._status.update(escape(text))  # only set on a terminal

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
