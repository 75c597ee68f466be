"""Where a section lies in an ELF, PE or Mach-O image, read without loading anything.

A small struct-based reader rather than a binary-format library: it needs four header
structures per format, it must treat every offset and count as hostile (a truncated header,
a table or section past the end of the file, an oversized section are `Malformed`, never a
traceback), and it must work on any random-access source (a file, or a bundle entry read
through bounded windows) without holding the library in memory. Only 64-bit images are
accepted (ABI v1 is 64-bit only); a universal (fat) Mach-O is refused, since a bundle
carries one target.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

ELF_SECTION = ".horon_abi"
PE_SECTION = ".horon_a"
MACHO_SEGMENT = "__DATA"
MACHO_SECTION = "__horon_abi"
MAX_TABLE_BYTES = 4 << 20
MAX_STRTAB_BYTES = 1 << 20


class RandomAccess(Protocol):
    """Bytes of one file by offset: `read_at` returns exactly `length` bytes or raises."""

    size: int

    def read_at(self, offset: int, length: int) -> bytes: ...


class Malformed(Exception):
    """A structural problem; turned into one `abi.section` refusal naming the library."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SectionLocation:
    format: str  # "ELF", "PE", "Mach-O"
    name: str
    offset: int
    size: int
    trim_nul: bool = False  # PE without a usable VirtualSize: raw data padded with NULs


def read_exact(source: RandomAccess, offset: int, length: int, what: str) -> bytes:
    if offset < 0 or length < 0 or offset + length > source.size:
        raise Malformed(f"{what} at bytes {offset}..{offset + length} lies past the end of the "
                         f"file ({source.size} bytes)")
    data = source.read_at(offset, length)
    if len(data) != length:
        raise Malformed(f"{what}: short read at byte {offset}")
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
    ident = read_exact(source, 0, 16, "ELF identification")
    if ident[4] != 2:
        raise Malformed(f"ELF class {ident[4]}: ABI v1 libraries are 64-bit (ELFCLASS64)")
    if ident[5] not in (1, 2):
        raise Malformed(f"ELF data encoding {ident[5]} is neither little nor big endian")
    end = "<" if ident[5] == 1 else ">"
    header = read_exact(source, 0, 64, "ELF header")
    shoff, = struct.unpack_from(end + "Q", header, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", header, 0x3A)
    if shoff == 0:
        return None  # no section header table: nothing names a section
    if shentsize != 64:
        raise Malformed(f"ELF section header size {shentsize}, expected 64")
    if shnum == 0 or shstrndx == 0xFFFF:  # extended numbering lives in section header 0
        first = read_exact(source, shoff, 64, "ELF section header 0")
        size0, = struct.unpack_from(end + "Q", first, 0x20)
        link0, = struct.unpack_from(end + "I", first, 0x28)
        shnum = shnum or size0
        shstrndx = link0 if shstrndx == 0xFFFF else shstrndx
    if shnum * 64 > MAX_TABLE_BYTES:
        raise Malformed(f"{shnum} ELF section headers: over the limit")
    table = read_exact(source, shoff, shnum * 64, "ELF section header table")
    headers = [struct.unpack_from(end + "IIQQQQIIQQ", table, i * 64) for i in range(shnum)]
    if not 0 < shstrndx < shnum:
        raise Malformed(f"ELF section name table index {shstrndx} of {shnum} sections")
    _, str_type, _, _, str_offset, str_size, *_ = headers[shstrndx]
    if str_type != 3:  # SHT_STRTAB
        raise Malformed(f"ELF section name table has type {str_type}, not SHT_STRTAB")
    if str_size > MAX_STRTAB_BYTES:
        raise Malformed(f"ELF section name table of {str_size} bytes: over the limit")
    names = read_exact(source, str_offset, str_size, "ELF section name table")
    found = []
    for name_offset, sh_type, _, _, offset, size, *_ in headers:
        if name_offset >= len(names):
            raise Malformed(f"ELF section name offset {name_offset} past the name table")
        terminator = names.find(b"\0", name_offset)
        if terminator < 0:
            raise Malformed("ELF section name table is not NUL-terminated")
        if names[name_offset:terminator] == ELF_SECTION.encode():
            if sh_type == 8:  # SHT_NOBITS: no bytes in the file
                raise Malformed(f"{ELF_SECTION} is SHT_NOBITS (no content in the file)")
            found.append(SectionLocation(format="ELF", name=ELF_SECTION, offset=offset,
                                         size=size))
    return _one(found)


# --- PE ----------------------------------------------------------------------------------
def _pe(source: RandomAccess) -> SectionLocation | None:
    dos = read_exact(source, 0, 64, "DOS header")
    pe_offset, = struct.unpack_from("<I", dos, 0x3C)
    coff = read_exact(source, pe_offset, 24, "PE signature and COFF header")
    if coff[:4] != b"PE\0\0":
        raise Malformed(f"no PE signature at byte {pe_offset}")
    count, = struct.unpack_from("<H", coff, 6)
    symbols_at, symbol_count = struct.unpack_from("<II", coff, 12)
    optional_size, = struct.unpack_from("<H", coff, 20)
    if optional_size < 2:
        raise Malformed(f"PE optional header of {optional_size} bytes")
    magic, = struct.unpack("<H", read_exact(source, pe_offset + 24, 2, "PE optional header"))
    if magic != 0x20B:
        raise Malformed(f"PE optional header magic {magic:#x}: ABI v1 libraries are PE32+ "
                         "(64-bit)")
    table = read_exact(source, pe_offset + 24 + optional_size, count * 40, "PE section table")
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
        raise Malformed("PE long section name without a COFF string table")
    start = symbols_at + symbol_count * 18
    length, = struct.unpack("<I", read_exact(source, start, 4, "PE string table size"))
    if not 4 <= length <= MAX_STRTAB_BYTES:
        raise Malformed(f"PE string table of {length} bytes")
    return read_exact(source, start, length, "PE string table")


def _pe_long_name(strings: bytes, offset: int) -> bytes:
    if not 4 <= offset < len(strings):
        raise Malformed(f"PE long section name offset {offset} past the string table")
    end = strings.find(b"\0", offset)
    return strings[offset:] if end < 0 else strings[offset:end]


# --- Mach-O ------------------------------------------------------------------------------
_LC_SEGMENT_64 = 0x19
_ZEROFILL_TYPES = (0x01, 0x0C, 0x12)


def _macho(source: RandomAccess) -> SectionLocation | None:
    magic = read_exact(source, 0, 4, "Mach-O header")
    if magic in (b"\xca\xfe\xba\xbe", b"\xbe\xba\xfe\xca"):
        raise Malformed("a universal (fat) Mach-O: a bundle carries one target's thin library")
    if magic in (b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xce"):
        raise Malformed("a 32-bit Mach-O: ABI v1 libraries are 64-bit")
    end = "<" if magic == b"\xcf\xfa\xed\xfe" else ">"
    header = read_exact(source, 0, 32, "Mach-O header")
    ncmds, sizeofcmds = struct.unpack_from(end + "II", header, 16)
    if sizeofcmds > MAX_TABLE_BYTES:
        raise Malformed(f"Mach-O load commands of {sizeofcmds} bytes: over the limit")
    commands = read_exact(source, 32, sizeofcmds, "Mach-O load commands")
    at = 0
    found = []
    for index in range(ncmds):
        if at + 8 > len(commands):
            raise Malformed(f"Mach-O load command {index} past the load command area")
        cmd, cmdsize = struct.unpack_from(end + "II", commands, at)
        if cmdsize < 8 or cmdsize % 8 or at + cmdsize > len(commands):
            raise Malformed(f"Mach-O load command {index} has size {cmdsize}")
        if cmd == _LC_SEGMENT_64:
            if cmdsize < 72:
                raise Malformed(f"Mach-O segment command {index} has size {cmdsize}")
            nsects, = struct.unpack_from(end + "I", commands, at + 64)
            if 72 + nsects * 80 > cmdsize:
                raise Malformed(f"Mach-O segment command {index}: {nsects} sections do not fit")
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
                    raise Malformed(f"{MACHO_SEGMENT},{MACHO_SECTION} is zero-fill (no content "
                                     "in the file)")
                found.append(SectionLocation(format="Mach-O",
                                             name=f"{MACHO_SEGMENT},{MACHO_SECTION}",
                                             offset=offset, size=size))
        at += cmdsize
    return _one(found)


def _one(found: list[SectionLocation]) -> SectionLocation | None:
    if len(found) > 1:
        raise Malformed(f"{len(found)} sections named {found[0].name}: ambiguous")
    return found[0] if found else None


READERS: dict[str, Callable[[RandomAccess], SectionLocation | None]] = {
    "ELF": _elf, "PE": _pe, "Mach-O": _macho}
