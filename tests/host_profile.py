"""The pinned Claude Code's hook events, read from the CLI itself, and the shipped profile
rewritten from them: `nox -s host-profile` (`python -m tests.host_profile`) when the pin moves
(docs/development.md, "When the pinned Claude Code moves").

The CLI is one native binary embedding its JavaScript; its event list is the array literal of
HOOK_EVENTS, `["PreToolUse","PostToolUse",…]`, found by its first two names. Subsets of it
appear too (the events one feature takes); the list is the longest, and every array as long
must say the same.
"""

from __future__ import annotations

import json
import mmap
import re
import sys
from pathlib import Path
from typing import Any

from tests.claude_host import CLAUDE_CODE_VERSION, cache_root
from tests.helpers import REPO

PROFILES = REPO / "tooling" / "horon_bundle" / "model" / "harness" / "profiles"
PROFILE = PROFILES / f"claude-code@{CLAUDE_CODE_VERSION}.json"
_START = b'["PreToolUse","PostToolUse"'
_ARRAY = re.compile(rb'\["PreToolUse","PostToolUse"(?:,"[A-Za-z]{1,64}"){0,200}\]')


def binary() -> Path:
    """The pinned CLI's native binary (tests/claude_host.py installs and checks it)."""
    from tests.claude_host import pinned_claude  # noqa: PLC0415 - installs on first use

    return pinned_claude().executable.resolve()


def profile_events(executable: Path | None = None) -> list[str]:
    """HOOK_EVENTS of the pinned CLI, in its order."""
    path = executable or binary()
    with path.open("rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data:
        arrays = set()
        at = data.find(_START)
        while at >= 0:  # find is a memchr scan; the pattern is matched only where it starts
            if (match := _ARRAY.match(data, at)) is not None:
                arrays.add(match.group())
            at = data.find(_START, at + 1)
    lists = [json.loads(array) for array in arrays]
    longest = max(len(found) for found in lists)
    full = [found for found in lists if len(found) == longest]
    if len({tuple(found) for found in full}) != 1:
        raise SystemExit(f"{path}: {len(full)} different event lists of {longest} names")
    return list(full[0])


def shipped_profile() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(PROFILE.read_text())
    return document


def rewritten(events: list[str], others: set[str]) -> dict[str, Any]:
    """The profile with `events` fired, and every event another shipped profile knows that the
    pinned host lacks listed absent."""
    document = shipped_profile() if PROFILE.exists() else {
        "format": "horon.host-profile.v1", "host": "claude-code",
        "version": CLAUDE_CODE_VERSION, "broken": {}}
    document.update({
        "description": f"Claude Code {CLAUDE_CODE_VERSION}: every event of its HOOK_EVENTS "
                       "list fires",
        "source": f"HOOK_EVENTS in the native binary of npm @anthropic-ai/claude-code@"
                  f"{CLAUDE_CODE_VERSION} (read by `nox -s host-profile`)",
        "events": {"fired": events, "understood": [],
                   "absent": sorted(others - set(events))}})
    return document


def main(argv: list[str]) -> int:
    events = profile_events(Path(argv[0]) if argv else None)
    others: set[str] = set()
    for path in PROFILES.glob("*.json"):
        if path != PROFILE:
            lists = json.loads(path.read_text())["events"]
            others.update(*lists.values())
    document = rewritten(events, others)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    PROFILE.write_text(text)
    print(f"{PROFILE.relative_to(REPO)}: {len(events)} events fired, "
          f"{len(document['events']['absent'])} absent (from {cache_root()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
