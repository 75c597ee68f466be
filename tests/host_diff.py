"""The differential of this toolchain against the pinned Claude Code host (tests/claude_host.py):
the same plugin put to `claude plugin validate --json` and to `build`/`verify --host
claude-code@<pinned>`, each verdict read, and the floor between them (docs/harness.md, "What
the host checks, what we check"):

- what the host rejects, we refuse;
- what the host accepts (or only warns about), we pass, unless the case is one of the
  documented classes where this toolchain is stricter on purpose (`STRICTER`);
- we warn only where the host warns, or for such a class, or for a hook-lint finding.

The cases are tests/host_cases.py; tests/verify/test_host_differential.py runs them, and
`nox -s host-diff -- DIR...` (`python -m tests.host_diff DIR...`) runs the same differential
over any plugin directories and prints the table.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.claude_host import CLAUDE_CODE_VERSION, ClaudeHost
from tests.helpers import cli

HOST_TOKEN = f"claude-code@{CLAUDE_CODE_VERSION}"
NO_NETWORK = ("unshare", "--user", "--map-root-user", "--net", "--")
VERDICTS_HOST = ("accepts", "warns", "rejects")
COMPONENT_DIRECTORIES = ("skills", "commands", "agents")
VERDICTS_OURS = ("passes", "warns", "refuses")
# where this toolchain refuses (or warns about) what the host accepts, on purpose: a guard
# that cannot run is the failure it must not ship
STRICTER = {
    "script": "a hook or MCP script that does not exist: the guard cannot run",
    "path": "a path escaping the plugin",
    "link": "a symlink or hard link out of the plugin: the zip would carry a file of the "
            "builder's machine",
    "duplicate-key": "a duplicate JSON key: readers disagree on which one wins",
    "event": "an unknown event: its hooks never run",
    "type": "a hook (or MCP server) the host drops: a field of the wrong type, an unknown "
            "hook type — it never runs",
    "limit": "a resource limit: work bounded before it is done",
    "file-name": "a name or version that cannot name the bundle's file "
                 "(`<name>-<version>.zip`)",
    "ascii": "a plugin name outside printable ASCII (the host folds it to look-alike letters "
             "first)",
    "lint": "a hook-lint finding (hook lint reads what the host does not)",
    "quiet": "the host warns about what breaks nothing at run time; nothing is said here",
}
# the codes of those classes, for plugins judged without a table row (real plugins, DIRs)
STRICTER_CODES = {
    "hook.command-missing", "hook.command-outside", "harness.path-unsafe", "harness.hard-link",
    "harness.link-loop", "json.duplicate-key", "harness.unknown-event", "harness.json-schema",
    "harness.limit", "harness.tree-limit", "harness.frontmatter"}
LINT_CODES = {"hook.env-credential", "hook.permission-ask", "hook.http-pretooluse",
              "hook.unjudged", "hook.command-unresolved", "hook.not-executable",
              "harness.event-not-fired"}


@dataclass(frozen=True, slots=True)
class Link:
    """A file of a case that is a link: symbolic to `target`, or a hard link to it."""

    target: str
    hard: bool = False


Content = str | bytes | dict[str, Any] | list[Any] | Link


@dataclass(frozen=True, slots=True)
class Case:
    """One row of the table: a plugin the test writes, what the pinned host says of it, what
    this toolchain says with `--host claude-code@<pinned>`, and why they differ (a `STRICTER`
    key) when they do."""

    name: str
    topic: str
    what: str
    files: Mapping[str, Content]
    host: str
    ours: str
    says: str = ""  # words of the host's message naming the rule
    code: str | None = None  # the code of our finding
    why: str = ""
    judged: str = "validate"  # validate (the plugin), marketplace (its root), load (--plugin-dir)
    plugin: str = "plugin"  # the directory the plugin is written to (its name without manifest)


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict: str
    messages: tuple[str, ...] = ()  # the host's messages, or our codes


def write_case(root: Path, files: Mapping[str, Content]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            target = (root / content.target) if not content.target.startswith("/") \
                else Path(content.target)
            if content.hard:
                os.link(target, path)
            else:
                path.symlink_to(content.target)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content)
        else:
            path.write_text(json.dumps(content, indent=2) + "\n")
    return root


def host_verdict(host: ClaudeHost, target: Path, *, judged: str, name: str,
                 home: Path) -> Verdict:
    """What the pinned host says of `target`: `claude plugin validate --json` (its exit status
    and the errors and warnings of the manifest and the files it read), or for `load` whether
    `claude --plugin-dir` loads it."""
    if judged == "load":  # validate takes no plugin without a manifest: its directories
        ran = host.run("--plugin-dir", target.resolve(), "plugin", "details", name, home=home,
                       prefix=NO_NETWORK, timeout=120)
        loaded = Verdict("accepts" if ran.status == 0 else "rejects", (ran.stdout + ran.stderr,))
        return combined([loaded, *(host_verdict(host, target / kind, judged="validate",
                                                name=name, home=home)
                                   for kind in COMPONENT_DIRECTORIES
                                   if (target / kind).is_dir())])
    ran = host.run("plugin", "validate", target.resolve(), "--json", home=home,
                   prefix=NO_NETWORK, timeout=120)
    try:
        document = ran.json()
    except ValueError:
        return Verdict("rejects", (f"exit {ran.status}: {ran.stdout[-300:]}{ran.stderr[-300:]}",))
    assert isinstance(document, dict), document
    parts = [document.get("manifest") or {}, *(document.get("contents") or [])]
    errors = [f"{item.get('path')}: {item.get('message')}" for part in parts
              for item in part.get("errors") or []]
    warnings = [f"{item.get('path')}: {item.get('message')}" for part in parts
                for item in part.get("warnings") or []]
    if not document.get("success") or ran.status != 0:
        return Verdict("rejects", tuple(errors) or (f"exit {ran.status}",))
    return Verdict("warns" if warnings else "accepts", tuple(warnings))


def our_verdict(target: Path, out: Path) -> Verdict:
    """What `build --host` says of `target`, and `verify --host` of every zip it wrote."""
    built = cli("build", target, "--out", out, "--host", HOST_TOKEN)
    if built.status != 0:
        return Verdict("refuses", tuple(built.codes) or (built.stderr[-300:],))
    codes = [line.split()[1].rstrip(":") for line in built.stderr.splitlines()
             if line.startswith("WARNING ")]  # the build's own: a marketplace's
    for archive in sorted(out.glob("*.zip")):
        verified = cli("verify", archive, "--host", HOST_TOKEN, "--json")
        if verified.status != 0:
            return Verdict("refuses", tuple(verified.codes))
        codes += [warning["code"] for warning in verified.json()["warnings"]]
    return Verdict("warns" if codes else "passes", tuple(dict.fromkeys(codes)))


def floor_problems(host: Verdict, ours: Verdict, why: str = "") -> list[str]:
    """Where `ours` falls below the host's floor (empty: it holds). `why` is the documented
    class of a table row; without one, our codes must each belong to a class."""
    problems = []
    if host.verdict == "rejects" and ours.verdict != "refuses":
        problems.append(f"the host rejects it, we say {ours.verdict}")
    if host.verdict != "rejects" and ours.verdict == "refuses":
        strays = sorted(set(ours.messages) - STRICTER_CODES)
        if why not in STRICTER and strays:
            problems.append(f"the host {host.verdict} it, we refuse it ({', '.join(strays)}) "
                            "for no documented class")
    if host.verdict == "accepts" and ours.verdict == "warns":
        strays = sorted(set(ours.messages) - STRICTER_CODES - LINT_CODES)
        if why not in STRICTER and strays:
            problems.append(f"the host says nothing, we warn ({', '.join(strays)}) for no "
                            "documented class")
    return problems


def render_table(cases: Sequence[Case]) -> str:
    """The docs' table of the cases (docs/harness.md holds it between its markers)."""
    lines = ["| rule | `claude plugin validate` | `verify --host " + HOST_TOKEN + "` | "
             "where we differ, and why |", "|---|---|---|---|"]
    topic = ""
    for case in cases:
        if case.topic != topic:
            topic = case.topic
            lines.append(f"| **{topic}** | | | |")
        host = case.host + (f": {case.says}" if case.says else "")
        if case.judged != "validate":
            host += " (of its marketplace)" if case.judged == "marketplace" else \
                " (loads with --plugin-dir)"
        ours = case.ours + (f" `{case.code}`" if case.code else "")
        why = STRICTER[case.why] if case.why else ""
        lines.append(f"| {case.what} | {host} | {ours} | {why} |")
    return "\n".join(lines) + "\n"


def judged_by(directory: Path) -> str:
    """How the host judges `directory`: validate, or, for a plugin without a manifest, whether
    `--plugin-dir` loads it and what validate says of its component directories."""
    manifests = (".claude-plugin/plugin.json", ".claude-plugin/marketplace.json")
    return "validate" if any((directory / m).is_file() for m in manifests) else "load"


def listed_plugins(directory: Path) -> list[Path]:
    """The local plugins with a manifest a marketplace at `directory` lists (validate of a
    marketplace reads their hooks, not their skills, commands or agents: each is validated
    too)."""
    try:
        document = json.loads((directory / ".claude-plugin" / "marketplace.json").read_text())
        entries = document["plugins"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    found = []
    for entry in entries if isinstance(entries, list) else []:
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, str) and source.startswith("./"):
            plugin = (directory / source).resolve()
            if (plugin / ".claude-plugin" / "plugin.json").is_file() and plugin != directory:
                found.append(plugin)
    return found


def combined(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict of several: the worst, with every message."""
    worst = max((v.verdict for v in verdicts), key=VERDICTS_HOST.index)
    return Verdict(worst, tuple(m for v in verdicts for m in v.messages))


def judge_directories(host: ClaudeHost, directories: Iterable[Path]) -> list[tuple[str, ...]]:
    """The differential over plugin or marketplace directories: one row each (a marketplace's
    verdict is the worst of its own and of each plugin it lists)."""
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="horon-host-diff-") as scratch:
        for index, directory in enumerate(directories):
            theirs = combined([
                host_verdict(host, target, judged=judged_by(target), name=target.name,
                             home=Path(scratch) / f"home{index}-{number}")
                for number, target in enumerate([directory, *listed_plugins(directory)])])
            ours = our_verdict(directory, Path(scratch) / f"out{index}")
            problems = floor_problems(theirs, ours)
            rows.append((str(directory), theirs.verdict, ours.verdict,
                         "; ".join(ours.messages), "; ".join(problems) or "holds"))
    return rows


def main(argv: Sequence[str]) -> int:
    """`python -m tests.host_diff DIR...`: the differential over each DIR, as a table."""
    from tests.claude_host import pinned_claude  # noqa: PLC0415 - fetched only when run

    if not argv:
        print("usage: python -m tests.host_diff DIR...", file=sys.stderr)
        return 2
    rows = judge_directories(pinned_claude(), [Path(a).resolve() for a in argv])
    print(f"| directory | claude plugin validate {CLAUDE_CODE_VERSION} | verify --host "
          f"{HOST_TOKEN} | our codes | the floor |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0 if all(row[-1] == "holds" for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
