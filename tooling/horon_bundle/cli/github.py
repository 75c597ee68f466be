"""Output for GitHub Actions, only when `GITHUB_ACTIONS=true`: refusals and warnings as
workflow-command annotations (`::error file=…,line=…,title=…::…`, written to stderr, which the
runner reads like stdout, so a `--json` document on stdout stays one document), and a
Markdown summary appended to `$GITHUB_STEP_SUMMARY`.

Every value is escaped twice: control characters as `\\xNN` (no value can end the command's
line and start another), then the runner's own escapes (`%25`, `%0D`, `%0A`, and `%3A`, `%2C`
in properties). Markdown cells are escaped so a value cannot close its cell or inject HTML.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from horon_bundle.cli.escaping import plain

_SUMMARY_LIMIT = 1 << 20  # GitHub refuses a step summary above 1 MiB


def active() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _data(text: str) -> str:
    return plain(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _relative(file: str) -> str:
    """Annotations link to files of the repository: paths relative to the checkout."""
    root = os.environ.get("GITHUB_WORKSPACE") or Path.cwd()
    try:
        return Path(file).resolve().relative_to(Path(root).resolve()).as_posix()
    except (ValueError, OSError):
        return file


def annotate(kind: str, title: str, message: str, *, file: str | None = None,
             line: int | None = None) -> None:
    """`::error …::` / `::warning …::` for the runner; nothing outside GitHub Actions."""
    if not active():
        return
    properties = []
    if file:
        properties.append(f"file={_property(_relative(file))}")
        if line is not None:
            properties.append(f"line={line}")
    properties.append(f"title={_property(title)}")
    sys.stderr.write(f"::{kind} {','.join(properties)}::{_data(message)}\n")
    sys.stderr.flush()


def cell(value: object) -> str:
    """A value inside a Markdown table cell (as code when it is an identifier or digest)."""
    text = plain(str(value))
    for raw, safe in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"),
                      ("`", "'")):
        text = text.replace(raw, safe)
    return text


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines


def summary(title: str, lines: Iterable[str]) -> None:
    """Append a `### title` section to the job's step summary (Markdown)."""
    if not active():
        return
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    text = "\n".join([f"### {cell(title)}", "", *lines, "", ""])
    try:
        target = Path(path)
        if target.is_file() and target.stat().st_size + len(text) > _SUMMARY_LIMIT:
            return
        with target.open("a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError:
        return  # a summary is a courtesy: never a reason to fail the command
