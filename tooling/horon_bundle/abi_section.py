"""The static ABI metadata section, read from a library's bytes without loading it.

A library built from the template carries its advertised metadata as compact JSON in a
section: `.horon_abi` in ELF, `.horon_a` in a linked PE image (a PE section header holds
8 bytes of name and images have no string table, so rust-lld and link.exe truncate
`.horon_abi`; a GNU-style `/N` long name resolving to `.horon_abi` is accepted too), and
`__DATA,__horon_abi` in Mach-O. docs/abi-v1.md section 7 defines the content.

A small struct-based reader rather than a binary-format library: it needs four header
structures per format, it must treat every offset and count as hostile (a truncated header,
a table or section past the end of the file, an oversized section are refusals, never a
traceback), and it must work on any random-access source (a file, or a bundle entry read
through bounded windows) without holding the library in memory. Only 64-bit images are
accepted (ABI v1 is 64-bit only); a universal (fat) Mach-O is refused, since a bundle
carries one target.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from horon_bundle import codes, paths
from horon_bundle.errors import Refused
from horon_bundle.evidence import Advertised
from horon_bundle.fields import describe_value
from horon_bundle.strictjson import read_json

SECTION_FORMAT = "horon.abi.v1"
ELF_SECTION = ".horon_abi"
PE_SECTION = ".horon_a"
MACHO_SEGMENT = "__DATA"
MACHO_SECTION = "__horon_abi"
OBSERVED_BY = "static-section"

MAX_SECTION_BYTES = 64 << 10
MAX_TABLE_BYTES = 4 << 20
MAX_STRTAB_BYTES = 1 << 20
_SECTION_KEYS = ("abi_major", "abi_minor", "features", "format", "plugin_id", "wire_schema")

FORMAT_FOR_OS = {"linux": "ELF", "windows": "PE", "darwin": "Mach-O"}


class RandomAccess(Protocol):
    """Bytes of one file by offset: `read_at` returns exactly `length` bytes or raises."""

    size: int

    def read_at(self, offset: int, length: int) -> bytes: ...


class _Malformed(Exception):
    """A structural problem; turned into one `abi.section` refusal naming the library."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SectionLocation:
    format: str  # "ELF", "PE", "Mach-O"
    name: str
    offset: int
    size: int
    trim_nul: bool = False  # PE without a usable VirtualSize: raw data padded with NULs


def _read(source: RandomAccess, offset: int, length: int, what: str) -> bytes:
    if offset < 0 or length < 0 or offset + length > source.size:
        raise _Malformed(f"{what} at bytes {offset}..{offset + length} lies past the end of the "
                         f"file ({source.size} bytes)")
    data = source.read_at(offset, length)
    if len(data) != length:
        raise _Malformed(f"{what}: short read at byte {offset}")
    return data


def detect_format(head: bytes) -> str | None:
    if head[:4] == b"\x7fELF":
        return "ELF"
    if head[:2] == b"MZ":
        return "PE"
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe",
                    b"\xfe\xed\xfa\xce", b"\xca\xfe\xba\xbe", b"\xbe\xba\xfe\xca"):
        return "Mach-O"
    return None


# --- ELF ---------------------------------------------------------------------------------
def _elf(source: RandomAccess) -> SectionLocation | None:
    ident = _read(source, 0, 16, "ELF identification")
    if ident[4] != 2:
        raise _Malformed(f"ELF class {ident[4]}: ABI v1 libraries are 64-bit (ELFCLASS64)")
    if ident[5] not in (1, 2):
        raise _Malformed(f"ELF data encoding {ident[5]} is neither little nor big endian")
    end = "<" if ident[5] == 1 else ">"
    header = _read(source, 0, 64, "ELF header")
    shoff, = struct.unpack_from(end + "Q", header, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", header, 0x3A)
    if shoff == 0:
        return None  # no section header table: nothing names a section
    if shentsize != 64:
        raise _Malformed(f"ELF section header size {shentsize}, expected 64")
    if shnum == 0 or shstrndx == 0xFFFF:  # extended numbering lives in section header 0
        first = _read(source, shoff, 64, "ELF section header 0")
        size0, = struct.unpack_from(end + "Q", first, 0x20)
        link0, = struct.unpack_from(end + "I", first, 0x28)
        shnum = shnum or size0
        shstrndx = link0 if shstrndx == 0xFFFF else shstrndx
    if shnum * 64 > MAX_TABLE_BYTES:
        raise _Malformed(f"{shnum} ELF section headers: over the limit")
    table = _read(source, shoff, shnum * 64, "ELF section header table")
    headers = [struct.unpack_from(end + "IIQQQQIIQQ", table, i * 64) for i in range(shnum)]
    if not 0 < shstrndx < shnum:
        raise _Malformed(f"ELF section name table index {shstrndx} of {shnum} sections")
    _, str_type, _, _, str_offset, str_size, *_ = headers[shstrndx]
    if str_type != 3:  # SHT_STRTAB
        raise _Malformed(f"ELF section name table has type {str_type}, not SHT_STRTAB")
    if str_size > MAX_STRTAB_BYTES:
        raise _Malformed(f"ELF section name table of {str_size} bytes: over the limit")
    names = _read(source, str_offset, str_size, "ELF section name table")
    found = []
    for name_offset, sh_type, _, _, offset, size, *_ in headers:
        if name_offset >= len(names):
            raise _Malformed(f"ELF section name offset {name_offset} past the name table")
        terminator = names.find(b"\0", name_offset)
        if terminator < 0:
            raise _Malformed("ELF section name table is not NUL-terminated")
        if names[name_offset:terminator] == ELF_SECTION.encode():
            if sh_type == 8:  # SHT_NOBITS: no bytes in the file
                raise _Malformed(f"{ELF_SECTION} is SHT_NOBITS (no content in the file)")
            found.append(SectionLocation(format="ELF", name=ELF_SECTION, offset=offset,
                                         size=size))
    return _one(found)


# --- PE ----------------------------------------------------------------------------------
def _pe(source: RandomAccess) -> SectionLocation | None:
    dos = _read(source, 0, 64, "DOS header")
    pe_offset, = struct.unpack_from("<I", dos, 0x3C)
    coff = _read(source, pe_offset, 24, "PE signature and COFF header")
    if coff[:4] != b"PE\0\0":
        raise _Malformed(f"no PE signature at byte {pe_offset}")
    count, = struct.unpack_from("<H", coff, 6)
    symbols_at, symbol_count = struct.unpack_from("<II", coff, 12)
    optional_size, = struct.unpack_from("<H", coff, 20)
    if optional_size < 2:
        raise _Malformed(f"PE optional header of {optional_size} bytes")
    magic, = struct.unpack("<H", _read(source, pe_offset + 24, 2, "PE optional header"))
    if magic != 0x20B:
        raise _Malformed(f"PE optional header magic {magic:#x}: ABI v1 libraries are PE32+ "
                         "(64-bit)")
    table = _read(source, pe_offset + 24 + optional_size, count * 40, "PE section table")
    strings: bytes | None = None
    found = []
    for index in range(count):
        raw_name, virtual_size, _, raw_size, raw_at = struct.unpack_from("<8sIIII", table,
                                                                          index * 40)
        name = raw_name.rstrip(b"\0")
        if name.startswith(b"/") and name[1:].isdigit():  # GNU long name in the string table
            if strings is None:
                strings = _pe_strings(source, symbols_at, symbol_count)
            name = _pe_long_name(strings, int(name[1:]))
        if name not in (PE_SECTION.encode(), ELF_SECTION.encode()):
            continue
        exact = 0 < virtual_size <= raw_size
        found.append(SectionLocation(format="PE", name=name.decode(), offset=raw_at,
                                     size=virtual_size if exact else raw_size,
                                     trim_nul=not exact))
    return _one(found)


def _pe_strings(source: RandomAccess, symbols_at: int, symbol_count: int) -> bytes:
    if symbols_at == 0:
        raise _Malformed("PE long section name without a COFF string table")
    start = symbols_at + symbol_count * 18
    length, = struct.unpack("<I", _read(source, start, 4, "PE string table size"))
    if not 4 <= length <= MAX_STRTAB_BYTES:
        raise _Malformed(f"PE string table of {length} bytes")
    return _read(source, start, length, "PE string table")


def _pe_long_name(strings: bytes, offset: int) -> bytes:
    if not 4 <= offset < len(strings):
        raise _Malformed(f"PE long section name offset {offset} past the string table")
    end = strings.find(b"\0", offset)
    return strings[offset:] if end < 0 else strings[offset:end]


# --- Mach-O ------------------------------------------------------------------------------
_LC_SEGMENT_64 = 0x19
_ZEROFILL_TYPES = (0x01, 0x0C, 0x12)


def _macho(source: RandomAccess) -> SectionLocation | None:
    magic = _read(source, 0, 4, "Mach-O header")
    if magic in (b"\xca\xfe\xba\xbe", b"\xbe\xba\xfe\xca"):
        raise _Malformed("a universal (fat) Mach-O: a bundle carries one target's thin library")
    if magic in (b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xce"):
        raise _Malformed("a 32-bit Mach-O: ABI v1 libraries are 64-bit")
    end = "<" if magic == b"\xcf\xfa\xed\xfe" else ">"
    header = _read(source, 0, 32, "Mach-O header")
    ncmds, sizeofcmds = struct.unpack_from(end + "II", header, 16)
    if sizeofcmds > MAX_TABLE_BYTES:
        raise _Malformed(f"Mach-O load commands of {sizeofcmds} bytes: over the limit")
    commands = _read(source, 32, sizeofcmds, "Mach-O load commands")
    at = 0
    found = []
    for index in range(ncmds):
        if at + 8 > len(commands):
            raise _Malformed(f"Mach-O load command {index} past the load command area")
        cmd, cmdsize = struct.unpack_from(end + "II", commands, at)
        if cmdsize < 8 or cmdsize % 8 or at + cmdsize > len(commands):
            raise _Malformed(f"Mach-O load command {index} has size {cmdsize}")
        if cmd == _LC_SEGMENT_64:
            if cmdsize < 72:
                raise _Malformed(f"Mach-O segment command {index} has size {cmdsize}")
            nsects, = struct.unpack_from(end + "I", commands, at + 64)
            if 72 + nsects * 80 > cmdsize:
                raise _Malformed(f"Mach-O segment command {index}: {nsects} sections do not fit")
            for number in range(nsects):
                base = at + 72 + number * 80
                sectname, segname = struct.unpack_from("16s16s", commands, base)
                size, = struct.unpack_from(end + "Q", commands, base + 40)
                offset, = struct.unpack_from(end + "I", commands, base + 48)
                flags, = struct.unpack_from(end + "I", commands, base + 64)
                if (segname.rstrip(b"\0"), sectname.rstrip(b"\0")) != (
                        MACHO_SEGMENT.encode(), MACHO_SECTION.encode()):
                    continue
                if flags & 0xFF in _ZEROFILL_TYPES:
                    raise _Malformed(f"{MACHO_SEGMENT},{MACHO_SECTION} is zero-fill (no content "
                                     "in the file)")
                found.append(SectionLocation(format="Mach-O",
                                             name=f"{MACHO_SEGMENT},{MACHO_SECTION}",
                                             offset=offset, size=size))
        at += cmdsize
    return _one(found)


def _one(found: list[SectionLocation]) -> SectionLocation | None:
    if len(found) > 1:
        raise _Malformed(f"{len(found)} sections named {found[0].name}: ambiguous")
    return found[0] if found else None


_READERS: dict[str, Callable[[RandomAccess], SectionLocation | None]] = {
    "ELF": _elf, "PE": _pe, "Mach-O": _macho}


# --- public entry points -----------------------------------------------------------------
def locate_section(source: RandomAccess, *, name: str,
                   target: str | None = None) -> SectionLocation | None:
    """Where the section is in `source` (None: the library has none); refuses a malformed one.

    With `target`, the library must be of that target's format (ELF, PE or Mach-O).
    """
    try:
        return _locate(source, target)
    except _Malformed as exc:
        raise Refused.one(codes.ABI_SECTION, f"{name}: {exc}") from None
    except struct.error as exc:  # pragma: no cover - every unpack is bounds-checked
        raise Refused.one(codes.ABI_SECTION, f"{name}: {exc}") from None


def _locate(source: RandomAccess, target: str | None) -> SectionLocation | None:
    kind = detect_format(_read(source, 0, min(4, source.size), "file header"))
    if kind is None:
        raise _Malformed("not an ELF, PE or Mach-O file")
    expected = FORMAT_FOR_OS.get(paths.target_os(target) or "") if target else None
    if expected is not None and kind != expected:
        raise _Malformed(f"a {kind} file, but target {target} libraries are {expected}")
    location = _READERS[kind](source)
    if location is None:
        return None
    if location.size > MAX_SECTION_BYTES:
        raise _Malformed(f"section {location.name} of {location.size} bytes: over the "
                         f"{MAX_SECTION_BYTES}-byte limit")
    if location.offset + location.size > source.size:
        raise _Malformed(f"section {location.name} at bytes {location.offset}.."
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
        data = _read(source, location.offset, location.size, f"section {location.name}")
    except _Malformed as exc:
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
        bad = [f for f in features if not paths.FEATURE.match(f)]
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

    def feed(self, chunk: bytes) -> None:
        if len(self.head) < self.HEAD:
            self.head += chunk[:self.HEAD - len(self.head)]
        self.tail += chunk[-self.TAIL:]
        if len(self.tail) > self.TAIL:
            del self.tail[:len(self.tail) - self.TAIL]
        self.size += len(chunk)


class ByteStream(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...

    def close(self) -> None: ...


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
