"""The static ABI metadata section, read from a library's bytes without loading it.

A library built from the template carries its advertised metadata as compact JSON in a
section: `.horon_abi` in ELF, `.horon_a` in a linked PE image (a PE section header holds
8 bytes of name and images have no string table, so rust-lld and link.exe truncate
`.horon_abi`; a GNU-style `/N` long name resolving to `.horon_abi` is accepted too), and
`__DATA,__horon_abi` in Mach-O. docs/abi-v1.md section 7 defines the content.

`binary_formats` locates the section in the image; this module reads and strictly decodes
it, from a file or from the windows kept while a bundle entry is hashed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path

from horon_bundle.abi.binary_formats import (
    READERS,
    Malformed,
    RandomAccess,
    SectionLocation,
    detect_format,
    read_exact,
)
from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Refused
from horon_bundle.core.fields import describe_value
from horon_bundle.core.streams import ByteStream
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.evidence import Advertised

SECTION_FORMAT = "horon.abi.v1"
OBSERVED_BY = "static-section"

MAX_SECTION_BYTES = 64 << 10
_SECTION_KEYS = ("abi_major", "abi_minor", "features", "format", "plugin_id", "wire_schema")

FORMAT_FOR_OS = {"linux": "ELF", "windows": "PE", "darwin": "Mach-O"}


# --- public entry points -----------------------------------------------------------------
def locate_section(source: RandomAccess, *, name: str,
                   target: str | None = None) -> SectionLocation | None:
    """Where the section is in `source` (None: the library has none); refuses a malformed one.

    With `target`, the library must be of that target's format (ELF, PE or Mach-O).
    """
    try:
        return _locate(source, target)
    except Malformed as exc:
        raise Refused.one(codes.ABI_SECTION, f"{name}: {exc}") from None
    except struct.error as exc:  # pragma: no cover - every unpack is bounds-checked
        raise Refused.one(codes.ABI_SECTION, f"{name}: {exc}") from None


def _locate(source: RandomAccess, target: str | None) -> SectionLocation | None:
    kind = detect_format(read_exact(source, 0, min(4, source.size), "file header"))
    if kind is None:
        raise Malformed("not an ELF, PE or Mach-O file")
    expected = FORMAT_FOR_OS.get(identifiers.target_os(target) or "") if target else None
    if expected is not None and kind != expected:
        raise Malformed(f"a {kind} file, but target {target} libraries are {expected}")
    location = READERS[kind](source)
    if location is None:
        return None
    if location.size > MAX_SECTION_BYTES:
        raise Malformed(f"section {location.name} of {location.size} bytes: over the "
                         f"{MAX_SECTION_BYTES}-byte limit")
    if location.offset + location.size > source.size:
        raise Malformed(f"section {location.name} at bytes {location.offset}.."
                         f"{location.offset + location.size} lies past the end of the file "
                         f"({source.size} bytes)")
    return location


def read_section(source: RandomAccess, *, name: str,
                 target: str | None = None) -> Advertised | None:
    """The advertised metadata of the library's static section, or None when it has none."""
    location = locate_section(source, name=name, target=target)
    if location is None:
        return None
    try:
        data = read_exact(source, location.offset, location.size, f"section {location.name}")
    except Malformed as exc:
        raise Refused.one(codes.ABI_SECTION, f"{name}: {exc}") from None
    if location.trim_nul:
        data = data.rstrip(b"\0")
    return parse_section(data, source=f"{name} {location.name}")


def parse_section(data: bytes, *, source: str) -> Advertised:
    """Strictly decode the section's JSON (docs/abi-v1.md section 7) into `Advertised`."""
    try:
        document = read_json(data, source=source, max_bytes=MAX_SECTION_BYTES, max_depth=2)
    except Refused as exc:  # one code for every malformed section, JSON-level or not
        raise Refused.one(codes.ABI_SECTION, exc.findings[0].message) from None
    problems: list[str] = []
    if not isinstance(document, dict):
        raise Refused.one(codes.ABI_SECTION, f"{source}: {describe_value(document)}, not an object")
    keys = sorted(document)
    if keys != sorted(_SECTION_KEYS):
        missing = sorted(set(_SECTION_KEYS) - set(keys))
        unknown = sorted(set(keys) - set(_SECTION_KEYS))
        raise Refused.one(codes.ABI_SECTION, f"{source}: keys missing {missing}, unknown "
                                             f"{unknown}")
    fmt = document["format"]
    if fmt != SECTION_FORMAT:
        problems.append(f"format {describe_value(fmt)}, expected {SECTION_FORMAT!r}")
    for key in ("abi_major", "abi_minor"):
        value = document[key]
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 0xFFFF:
            problems.append(f"{key} {describe_value(value)} is not a 16-bit integer")
    for key in ("plugin_id", "wire_schema"):
        if not isinstance(document[key], str):
            problems.append(f"{key} {describe_value(document[key])} is not a string")
    features = document["features"]
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        problems.append("features is not an array of strings")
    else:
        bad = [f for f in features if not identifiers.FEATURE.fullmatch(f)]
        if bad:
            problems.append(f"features {bad} are not feature tokens")
        if features != sorted(set(features)):
            problems.append(f"features {features} are not sorted by byte order and unique")
    if not problems:
        compact = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
        if compact != data:
            problems.append("not the compact, key-sorted form (whitespace, padding or a NUL)")
    if problems:
        raise Refused.one(codes.ABI_SECTION, f"{source}: " + "; ".join(problems))
    return Advertised(abi_major=document["abi_major"], abi_minor=document["abi_minor"],
                      wire_schema=document["wire_schema"], features=tuple(features),
                      plugin_id=document["plugin_id"], observed_by=(OBSERVED_BY,))


# --- sources -----------------------------------------------------------------------------
class FileAccess:
    """Random access to a file on disk (seek + read; nothing else is read)."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("rb")
        self.size = path.stat().st_size

    def read_at(self, offset: int, length: int) -> bytes:
        self._file.seek(offset)
        return self._file.read(length)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> FileAccess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StreamWindows:
    """The first and last bytes of a stream, kept while it streams past (e.g. being hashed).

    ELF, PE and Mach-O keep their headers at the start; ELF keeps its section header table
    (and usually the name table) at the end. With both windows most libraries' sections are
    located, and often read, from this one pass; whatever lies outside costs one targeted
    re-read (see `WindowedAccess`). Memory: at most HEAD + TAIL bytes.
    """

    HEAD = 64 << 10
    TAIL = 256 << 10

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.size = 0

    def feed(self, chunk: bytes | memoryview) -> None:
        """Keep copies of what falls in the windows (`chunk` may be a reused buffer)."""
        if len(self.head) < self.HEAD:
            self.head += chunk[:self.HEAD - len(self.head)]
        self.tail += chunk[-self.TAIL:]
        if len(self.tail) > self.TAIL:
            del self.tail[:len(self.tail) - self.TAIL]
        self.size += len(chunk)


class WindowedAccess:
    """Random access served from `StreamWindows`, re-opening the stream for anything else.

    A re-read seeks where the stream can (a file) and otherwise reads forward and discards
    (a deflated archive entry): memory stays bounded by the chunk size either way.
    `rereads` counts them.
    """

    def __init__(self, windows: StreamWindows, reopen: Callable[[], ByteStream]) -> None:
        self._windows = windows
        self._reopen = reopen
        self.size = windows.size
        self.rereads = 0

    def read_at(self, offset: int, length: int) -> bytes:
        head, tail = self._windows.head, self._windows.tail
        if offset + length <= len(head):
            return bytes(head[offset:offset + length])
        tail_start = self.size - len(tail)
        if offset >= tail_start:
            return bytes(tail[offset - tail_start:offset - tail_start + length])
        self.rereads += 1
        stream = self._reopen()
        try:
            seekable = getattr(stream, "seekable", None)
            if callable(seekable) and seekable():
                stream.seek(offset)  # type: ignore[attr-defined]
            else:
                left = offset
                while left > 0:
                    skipped = stream.read(min(left, 1 << 20))
                    if not skipped:
                        return b""
                    left -= len(skipped)
            parts = []
            while length > 0 and (part := stream.read(length)):
                parts.append(part)
                length -= len(part)
            return b"".join(parts)
        finally:
            stream.close()


def read_section_file(path: Path, *, target: str | None = None) -> Advertised | None:
    try:
        access = FileAccess(path)
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: {exc.strerror}") from None
    with access:
        return read_section(access, name=path.name, target=target)
