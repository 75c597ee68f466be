"""The static ABI metadata section reader: real ELF, PE and Mach-O libraries, and hostile bytes.

ELF comes from our own cargo builds; PE and Mach-O from llvm-mc + lld (tests/native_bins.py).
Every malformed input is one `abi.section` refusal, never a traceback.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from horon_bundle.abi import binary_formats
from horon_bundle.abi import section as abi_section
from horon_bundle.abi.section import (
    MAX_SECTION_BYTES,
    StreamWindows,
    WindowedAccess,
    locate_section,
    parse_section,
    read_section,
    read_section_file,
)
from horon_bundle.core.errors import Refused
from tests.conftest import BuiltExample
from tests.native_bins import SECTION_JSON, make_macho, make_pe

pytestmark = pytest.mark.cargo


class Bytes:
    """An in-memory RandomAccess that counts reads."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)
        self.reads = 0

    def read_at(self, offset: int, length: int) -> bytes:
        self.reads += 1
        return self.data[offset:offset + length]


def _refused(data: bytes, *, target: str | None = None, says: str = "") -> str:
    with pytest.raises(Refused) as caught:
        read_section(Bytes(data), name="lib", target=target)
    assert caught.value.codes() == ["abi.section"], caught.value
    message = caught.value.findings[0].message
    assert says in message, message
    return message


@pytest.fixture(scope="module")
def elf(example_release: BuiltExample) -> bytes:
    return (example_release.bundle / "lib" / "libhoron_example.so").read_bytes()


@pytest.fixture(scope="module")
def pe(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return make_pe(tmp_path_factory.mktemp("pe"), "horon_example").read_bytes()


@pytest.fixture(scope="module")
def macho(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return make_macho(tmp_path_factory.mktemp("macho"), "libhoron_example").read_bytes()


# --- the three formats, from real linkers -----------------------------------------------
def test_elf_from_our_build(elf: bytes) -> None:
    location = locate_section(Bytes(elf), name="lib", target="x86_64-unknown-linux-gnu")
    assert location is not None
    assert (location.format, location.name) == ("ELF", ".horon_abi")
    advertised = read_section(Bytes(elf), name="lib", target="x86_64-unknown-linux-gnu")
    assert advertised is not None
    assert advertised.features == ("clock", "greeting")
    assert advertised.plugin_id == "example"
    assert (advertised.abi_major, advertised.abi_minor) == (1, 0)
    assert advertised.wire_schema == "horon.wire.v1"
    assert advertised.observed_by == ("static-section",)


def test_pe_section_name_is_truncated_to_eight_bytes(pe: bytes) -> None:
    location = locate_section(Bytes(pe), name="dll", target="x86_64-pc-windows-msvc")
    assert location is not None
    assert (location.format, location.name) == ("PE", ".horon_a")
    assert location.size == len(SECTION_JSON)  # VirtualSize, not the padded raw size
    advertised = read_section(Bytes(pe), name="dll", target="x86_64-pc-windows-msvc")
    assert advertised is not None
    assert advertised.features == ("clock", "greeting")


def test_macho_section_in_the_data_segment(macho: bytes) -> None:
    location = locate_section(Bytes(macho), name="dylib", target="aarch64-apple-darwin")
    assert location is not None
    assert (location.format, location.name) == ("Mach-O", "__DATA,__horon_abi")
    advertised = read_section(Bytes(macho), name="dylib", target="aarch64-apple-darwin")
    assert advertised is not None
    assert advertised.plugin_id == "example"


def test_libraries_without_the_section(tmp_path: Path, elf: bytes) -> None:
    assert read_section_file(make_pe(tmp_path, "bare", None)) is None
    assert read_section_file(make_macho(tmp_path, "bare", None)) is None
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        pytest.skip("objcopy (binutils) not installed")
    stripped = tmp_path / "stripped.so"
    (tmp_path / "full.so").write_bytes(elf)
    subprocess.run([objcopy, "--remove-section", ".horon_abi", str(tmp_path / "full.so"),
                    str(stripped)], check=True)
    assert read_section_file(stripped, target="x86_64-unknown-linux-gnu") is None


def test_format_must_match_the_target(elf: bytes, pe: bytes, macho: bytes) -> None:
    _refused(elf, target="x86_64-pc-windows-msvc", says="a ELF file, but target")
    _refused(pe, target="aarch64-apple-darwin", says="libraries are Mach-O")
    _refused(macho, target="x86_64-unknown-linux-gnu", says="libraries are ELF")


# --- hostile ELF -------------------------------------------------------------------------
def _elf_section_header(data: bytes) -> int:
    """Byte offset of the .horon_abi section header in an ELF64 LE file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, = struct.unpack_from("<H", data, 0x3C)
    location = locate_section(Bytes(data), name="lib")
    assert location is not None
    for index in range(shnum):
        at = shoff + index * 64
        offset, size = struct.unpack_from("<QQ", data, at + 0x18)
        if (offset, size) == (location.offset, location.size):
            return int(at)
    raise AssertionError("no .horon_abi header")


def test_elf_truncated_headers(elf: bytes) -> None:
    _refused(b"", says="not an ELF, PE or Mach-O")
    _refused(elf[:10], says="past the end")
    _refused(elf[:63], says="ELF header")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    _refused(elf[:shoff + 100], says="section header table")


def test_elf_table_and_section_offsets_past_eof(elf: bytes) -> None:
    data = bytearray(elf)
    struct.pack_into("<Q", data, 0x28, len(elf) + 4096)
    _refused(bytes(data), says="past the end of the file")
    data = bytearray(elf)
    header = _elf_section_header(elf)
    struct.pack_into("<Q", data, header + 0x18, len(elf) - 10)
    _refused(bytes(data), says="past the end of the file")


def test_elf_oversized_section(elf: bytes) -> None:
    data = bytearray(elf)
    struct.pack_into("<Q", data, _elf_section_header(elf) + 0x20, MAX_SECTION_BYTES + 1)
    _refused(bytes(data), says="over the")


def test_elf_32_bit_and_nobits(elf: bytes) -> None:
    data = bytearray(elf)
    data[4] = 1
    _refused(bytes(data), says="64-bit")
    data = bytearray(elf)
    struct.pack_into("<I", data, _elf_section_header(elf) + 4, 8)  # SHT_NOBITS
    _refused(bytes(data), says="SHT_NOBITS")


def test_elf_section_name_offsets(elf: bytes) -> None:
    data = bytearray(elf)
    struct.pack_into("<I", data, _elf_section_header(elf), 0xFFFFFF)
    _refused(bytes(data), says="name offset")


# --- hostile PE and Mach-O -----------------------------------------------------------------
def _pe_section_entry(data: bytes) -> int:
    pe_at, = struct.unpack_from("<I", data, 0x3C)
    count, = struct.unpack_from("<H", data, pe_at + 6)
    optional, = struct.unpack_from("<H", data, pe_at + 20)
    table = pe_at + 24 + optional
    for index in range(count):
        if data[table + index * 40:table + index * 40 + 8] == b".horon_a":
            return int(table + index * 40)
    raise AssertionError("no .horon_a")


def test_pe_hostile(pe: bytes) -> None:
    _refused(pe[:40], says="DOS header")
    entry = _pe_section_entry(pe)
    _refused(pe[:entry + 20], says="PE section table")
    data = bytearray(pe)
    struct.pack_into("<I", data, entry + 20, len(pe) + 1)  # PointerToRawData
    _refused(bytes(data), says="past the end")
    data = bytearray(pe)
    struct.pack_into("<I", data, entry + 8, 0)  # no VirtualSize: SizeOfRawData counts
    struct.pack_into("<I", data, entry + 16, MAX_SECTION_BYTES * 2)
    _refused(bytes(data), says="over the")
    data = bytearray(pe)
    pe_at, = struct.unpack_from("<I", pe, 0x3C)
    struct.pack_into("<H", data, pe_at + 24, 0x10B)
    _refused(bytes(data), says="PE32+")
    data = bytearray(pe)
    struct.pack_into("<I", data, 0x3C, len(pe) - 2)
    _refused(bytes(data), says="past the end")


def test_macho_hostile(macho: bytes) -> None:
    _refused(macho[:20], says="Mach-O header")
    _refused(macho[:100], says="load commands")
    _refused(b"\xca\xfe\xba\xbe" + macho[4:], says="universal")
    _refused(b"\xce\xfa\xed\xfe" + macho[4:], says="32-bit")
    data = bytearray(macho)
    struct.pack_into("<I", data, 16, 1000)  # ncmds beyond sizeofcmds
    _refused(bytes(data), says="load command")
    location = locate_section(Bytes(macho), name="dylib")
    assert location is not None
    at = macho.index(b"__horon_abi\0")
    data = bytearray(macho)
    struct.pack_into("<Q", data, at + 40, MAX_SECTION_BYTES + 8)
    _refused(bytes(data), says="over the")
    data = bytearray(macho)
    struct.pack_into("<I", data, at + 48, len(macho) - 4)
    _refused(bytes(data), says="past the end")


@pytest.mark.slow
@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutations_never_escape_as_tracebacks(elf: bytes, pe: bytes, macho: bytes,
                                              data: st.DataObject) -> None:
    original = data.draw(st.sampled_from([elf, pe, macho]))
    mutated = bytearray(original[:data.draw(st.integers(0, len(original)))])
    for _ in range(data.draw(st.integers(0, 6))):
        if mutated:
            position = data.draw(st.integers(0, min(len(mutated), 70_000) - 1))
            mutated[position] = data.draw(st.integers(0, 255))
    outcome: list[str] = []
    try:
        read_section(Bytes(bytes(mutated)), name="lib")
    except Refused as exc:
        outcome = exc.codes()
    assert outcome in ([], ["abi.section"])


# --- the section's content -----------------------------------------------------------------
CONTENT_FAULTS = {
    "whitespace": b'{"abi_major": 1,"abi_minor":0,"features":[],"format":"horon.abi.v1",'
                  b'"plugin_id":"x1","wire_schema":"horon.wire.v1"}',
    "trailing NUL": SECTION_JSON + b"\0",
    "unknown key": SECTION_JSON[:-1] + b',"zz":1}',
    "missing key": b'{"abi_major":1,"abi_minor":0,"features":[],"format":"horon.abi.v1",'
                   b'"plugin_id":"x1"}',
    "unsorted features": SECTION_JSON.replace(b'"clock","greeting"', b'"greeting","clock"'),
    "bad feature token": SECTION_JSON.replace(b'"clock"', b'"Clock"'),
    "another format": SECTION_JSON.replace(b"horon.abi.v1", b"horon.abi.v2"),
    "bool major": SECTION_JSON.replace(b'"abi_major":1', b'"abi_major":true'),
    "duplicate key": SECTION_JSON[:-1] + b',"format":"horon.abi.v1"}',
    "not an object": b"[]",
    "not JSON": b"\x00\x01",
}


@pytest.mark.parametrize("case", sorted(CONTENT_FAULTS))
def test_section_content_is_strict(case: str) -> None:
    with pytest.raises(Refused) as caught:
        parse_section(CONTENT_FAULTS[case], source="lib .horon_abi")
    assert caught.value.codes() == ["abi.section"]


def test_windowed_access_reads_the_library_once_when_the_windows_cover_it(elf: bytes) -> None:
    windows = StreamWindows()
    for start in range(0, len(elf), 1 << 20):
        windows.feed(elf[start:start + (1 << 20)])
    opened: list[int] = []

    class Stream:
        def __init__(self) -> None:
            self.position = 0
            opened.append(1)

        def read(self, size: int = -1) -> bytes:
            chunk = elf[self.position:self.position + size]
            self.position += len(chunk)
            return chunk

        def close(self) -> None:
            pass

    access = WindowedAccess(windows, Stream)
    assert read_section(access, name="lib") == read_section(Bytes(elf), name="lib")
    small = StreamWindows()
    small.HEAD, small.TAIL = 64, 4096
    for start in range(0, len(elf), 1 << 16):
        small.feed(elf[start:start + (1 << 16)])
    access = WindowedAccess(small, Stream)
    assert read_section(access, name="lib") == read_section(Bytes(elf), name="lib")
    assert access.rereads >= 1 and len(opened) == access.rereads


def test_module_constants_match_the_template() -> None:
    abi_rs = (Path(__file__).parent.parent.parent / "templates" / "plugin" / "src" /
              "abi.rs").read_text()
    assert f'SECTION_NAME_ELF_PE: &str = "{binary_formats.ELF_SECTION}"' in abi_rs
    assert (f'SECTION_NAME_MACHO: &str = "{binary_formats.MACHO_SEGMENT},'
            f'{binary_formats.MACHO_SECTION}"') in abi_rs
    assert f'SECTION_FORMAT: &str = "{abi_section.SECTION_FORMAT}"' in abi_rs
