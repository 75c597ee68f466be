"""Host profiles (format horon.host-profile.v1): which hook events a host, at one version,
fires, understands without firing, or lacks, and which warnings are broken there (refused
under `--host`: lint's, and frontmatter its own validator rejects).

Shipped profiles are data files of this package (`profiles/<host>@<version>.json`); a user
passes their own with `--host FILE`, read just as strictly (docs/harness.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import read_json

PROFILE_FORMAT = "horon.host-profile.v1"
MAX_PROFILE_BYTES = 1 << 20
HOST = re.compile(r"[a-z][a-z0-9-]{0,62}")
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")
EVENT = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
# the warnings a profile may mark as broken on its host (refusals under --host): lint's, and
# frontmatter the host's own validator rejects
BREAKABLE = ("hook.env-credential", "hook.permission-ask", "hook.http-pretooluse",
             "harness.frontmatter-invalid")
_LISTS = ("fired", "understood", "absent")


@dataclass(frozen=True, slots=True, kw_only=True)
class HostProfile:
    host: str
    version: str
    description: str
    source: str
    fired: tuple[str, ...]
    understood: tuple[str, ...]
    absent: tuple[str, ...]
    broken: dict[str, str]
    origin: str  # where it was read from: "shipped" or the file's path

    @property
    def token(self) -> str:
        return f"{self.host}@{self.version}"

    @property
    def known(self) -> frozenset[str]:
        return frozenset((*self.fired, *self.understood, *self.absent))

    def fate(self, event: str) -> str:
        """fired, understood, absent or unknown (to this profile)."""
        for name in _LISTS:
            if event in getattr(self, name):
                return name
        return "unknown"


def parse_profile(data: bytes, *, source: str, origin: str) -> HostProfile:
    document = read_json(data, source=source, max_bytes=MAX_PROFILE_BYTES, max_depth=8)
    findings = Findings()
    reader = FieldReader(source, findings, codes.PROFILE_INVALID, codes.PROFILE_INVALID,
                         codes.PROFILE_INVALID)
    top = reader.typed(document, dict, "")
    if top is None:
        raise Refused(findings)
    top = dict(top)
    kind = reader.take(top, "format", str, "")
    if kind is not None and kind != PROFILE_FORMAT:
        reader.report(codes.PROFILE_INVALID, "format", f"{kind!r}, expected {PROFILE_FORMAT}")
    host = reader.take(top, "host", str, "")
    version = reader.take(top, "version", str, "")
    description = reader.take(top, "description", str, "") or ""
    origin_text = reader.take(top, "source", str, "") or ""
    events = reader.take(top, "events", dict, "") or {}
    broken = reader.take_optional(top, "broken", dict, "", {}) or {}
    reader.finish(top, "")
    for value, pattern, key in ((host, HOST, "host"), (version, VERSION, "version")):
        if value is not None and not pattern.fullmatch(value):
            reader.report(codes.PROFILE_INVALID, key, f"{describe_value(value)} is malformed")
    lists = _event_lists(reader, dict(events))
    for key, reason in broken.items():
        if key not in BREAKABLE:
            reader.report(codes.PROFILE_INVALID, f"broken.{key}",
                          f"not a lint code a profile can mark ({', '.join(BREAKABLE)})")
        elif not isinstance(reason, str) or not reason:
            reader.report(codes.PROFILE_INVALID, f"broken.{key}", "expected a reason (string)")
    findings.raise_if_any()
    assert host is not None and version is not None
    return HostProfile(host=host, version=version, description=description,
                       source=origin_text, fired=lists["fired"],
                       understood=lists["understood"], absent=lists["absent"],
                       broken=dict(broken), origin=origin)


def _event_lists(reader: FieldReader, events: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    lists: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    for name in _LISTS:
        items = reader.strings(reader.take(events, name, list, "events"), f"events.{name}") or []
        for item in items:
            if not EVENT.fullmatch(item):
                reader.report(codes.PROFILE_INVALID, f"events.{name}",
                              f"{describe_value(item)} is not an event name")
            elif item in seen:
                reader.report(codes.PROFILE_INVALID, f"events.{name}",
                              f"{item} is also listed in events.{seen[item]}")
            seen.setdefault(item, name)
        lists[name] = tuple(items)
    reader.finish(events, "events")
    return lists


def _version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"[.+_-]", version))


def shipped_profiles() -> tuple[HostProfile, ...]:
    """Every profile shipped in the package, sorted by host then version."""
    found = []
    # the package's own folder (as core.shipped finds its data): importlib.resources would
    # import tempfile, shutil and zipfile on every harness verify (start-up)
    for item in (Path(__file__).resolve().parent / "profiles").iterdir():
        if item.name.endswith(".json"):
            found.append(parse_profile(item.read_bytes(), source=f"profiles/{item.name}",
                                       origin="shipped"))
    return tuple(sorted(found, key=lambda p: (p.host, _version_key(p.version))))


def is_profile_path(value: str) -> bool:
    """`--host` takes a file when the value looks like a path (a separator or .json)."""
    return "/" in value or "\\" in value or value.endswith(".json")


def resolve_profile(value: str) -> HostProfile:
    """`--host` NAME (the latest shipped version), NAME@VERSION, or a profile file."""
    if is_profile_path(value):
        path = Path(value)
        data = read_input(path, limit=MAX_PROFILE_BYTES, what="--host profile")
        assert data is not None
        return parse_profile(data, source=str(path), origin=str(path))
    name, _, version = value.partition("@")
    candidates = [p for p in shipped_profiles() if p.host == name]
    if version:
        candidates = [p for p in candidates if p.version == version]
    if not candidates:
        tokens = ", ".join(p.token for p in shipped_profiles())
        raise Refused.one(codes.PROFILE_UNKNOWN,
                          f"--host {value}: no shipped profile (shipped: {tokens})")
    return candidates[-1]
