"""Values Claude Code (the pinned host, 2.1.332) parses before it loads a plugin, judged as it
judges them: a URL (a homepage, an HTTP hook's or a remote MCP server's), a semver range (the
`engines` of plugin.json), and where guard hooks may be declared.

A URL is what the WHATWG URL parser takes as absolute: a scheme, then for the special schemes
(http, https, ws, wss, ftp) a host without a space or another forbidden character, and a port
of digits. `https:example.com` is one, `//example.com` and `https://` are not."""

from __future__ import annotations

import re
from collections.abc import Iterator

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)", re.DOTALL)
_SPECIAL = frozenset({"http", "https", "ws", "wss", "ftp"})
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_PORT = re.compile(r"[0-9]*")
_PARTIAL = r"v?(?:[0-9]+|[xX*])(?:\.(?:[0-9]+|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?"
_COMPARATOR = re.compile(rf"(?:<=|>=|<|>|=|~|\^)?\s*{_PARTIAL}|\*|")
_HYPHEN = re.compile(rf"{_PARTIAL}\s+-\s+{_PARTIAL}")
# the events whose hooks guard permissions: the host refuses a plugin that declares them
# anywhere but in the event map, where they would not load (names compared in any case)
GUARD_EVENTS = ("pretooluse", "permissionrequest")


def url_problem(text: str) -> str | None:
    """Why `text` is not an absolute URL the host's parser takes (None: it is one)."""
    text = text.strip("\x00\x20\t\n\r\x0b\x0c")
    found = _SCHEME.fullmatch(text)
    if found is None:
        return "is not an absolute URL (no scheme)"
    scheme, rest = found.group(1).lower(), found.group(2)
    if scheme not in _SPECIAL:
        return None
    rest = rest.replace("\\", "/").lstrip("/")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host_port = authority.rsplit("@", 1)[-1]
    if host_port.startswith("["):
        host, _, port = host_port.partition("]")
        port = port.removeprefix(":")
        if not host[1:]:
            return "has an empty host"
    else:
        host, _, port = host_port.partition(":")
    if not host:
        return "has no host"
    if not host.startswith("[") and _FORBIDDEN_HOST.search(host):
        return f"has a host the URL parser refuses ({host!r})"
    if not _PORT.fullmatch(port) or (port and int(port) > 65535):
        return f"has a port that is not a number up to 65535 ({port!r})"
    return None


def is_version_range(text: str) -> bool:
    """Whether `text` is a semver range the host reads (`>=2.1.0`, `^1.2 || 2.x`, `1 - 2`)."""
    for written in text.split("||"):
        alternative = written.strip()
        if _HYPHEN.fullmatch(alternative):
            continue
        parts = re.sub(r"(<=|>=|<|>|=|~|\^)\s+", r"\1", alternative).split()
        if not all(_COMPARATOR.fullmatch(part) for part in parts):
            return False
    return True


def misplaced_guards(document: object, *, events: bool = False, depth: int = 0,
                     path: str = "") -> Iterator[str]:
    """Where a plugin.json or hooks file declares PreToolUse or PermissionRequest hooks out of
    place: a key of that name (any case) holding anything but null or an empty list, anywhere
    but as a key of the event map — the top-level `hooks` object, or `document` itself when
    `events` says it is the map. Server maps are not searched (a server may be named so)."""
    if depth > 64:
        return
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield from misplaced_guards(item, depth=depth + 1, path=f"{path}[{index}]")
        return
    if not isinstance(document, dict):
        return
    for key, value in document.items():
        where = f"{path}.{key}" if path else str(key)
        if depth == 0 and not events and key in ("mcpServers", "lspServers"):
            continue
        if depth == 0 and not events and key == "hooks" and isinstance(value, dict):
            yield from misplaced_guards(value, events=True, depth=depth + 1, path=where)
        elif not events and str(key).lower() in GUARD_EVENTS and value is not None \
                and value != []:
            yield where
        else:
            yield from misplaced_guards(value, depth=depth + 1, path=where)
