"""Real PE and Mach-O libraries for the static-section reader, made with LLVM's own tools.

Only the x86_64 Linux Rust standard library is installed here, so Windows and macOS
libraries cannot come from cargo. They are assembled by `llvm-mc` (Debian's `llvm`) into a
COFF or Mach-O object and linked by a real linker: `lld-link` / `ld64.lld` (Debian's `lld`)
or, where those are absent, the `rust-lld` that ships with the Rust toolchain (the same
binary in `-flavor link` / `-flavor darwin` mode). The linked DLL shows the measured
truncation of `.horon_abi` to `.horon_a`; the dylib keeps `__DATA,__horon_abi`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SECTION_JSON = (b'{"abi_major":1,"abi_minor":0,"features":["clock","greeting"],'
                b'"format":"horon.abi.v1","plugin_id":"example","wire_schema":"horon.wire.v1"}')


def _rust_lld() -> str | None:
    try:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True,
                                 text=True, check=True).stdout.strip()
        host = next(line.split(": ", 1)[1] for line in subprocess.run(
            ["rustc", "-vV"], capture_output=True, text=True, check=True).stdout.splitlines()
            if line.startswith("host: "))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        return None
    candidate = Path(sysroot) / "lib" / "rustlib" / host / "bin" / "rust-lld"
    return str(candidate) if candidate.is_file() else None


def _linker(flavor: str) -> list[str] | None:
    native = {"link": "lld-link", "darwin": "ld64.lld"}[flavor]
    if found := shutil.which(native):
        return [found]
    rust_lld = _rust_lld()
    return [rust_lld, "-flavor", flavor] if rust_lld else None


def require_tools(flavor: str) -> list[str]:
    """The assembler is llvm-mc; the linker of `flavor` (link or darwin); else skip, saying
    which Debian package CI lacks."""
    if shutil.which("llvm-mc") is None:
        pytest.skip("llvm-mc not installed (Debian package `llvm`)")
    linker = _linker(flavor)
    if linker is None:
        pytest.skip(f"no {flavor} linker (Debian package `lld`, or rust-lld)")
    return linker


def _bytes_directive(data: bytes) -> str:
    return "\n".join("\t.byte " + ",".join(str(b) for b in data[i:i + 32])
                     for i in range(0, len(data), 32))


def make_pe(directory: Path, name: str, section: bytes | None = SECTION_JSON) -> Path:
    """A PE32+ DLL exporting horon_agent_plugin_get_api_v1, with `section` as .horon_abi."""
    linker = require_tools("link")
    source = directory / f"{name}.s"
    parts = []
    if section is not None:
        parts += ['\t.section .horon_abi,"dr"', _bytes_directive(section)]
    parts += ["\t.text", "\t.globl horon_agent_plugin_get_api_v1",
              "horon_agent_plugin_get_api_v1:", "\txorl %eax, %eax", "\tretq", ""]
    source.write_text("\n".join(parts))
    obj = directory / f"{name}.obj"
    subprocess.run(["llvm-mc", "-filetype=obj", "-triple=x86_64-pc-windows-msvc", str(source),
                    "-o", str(obj)], check=True)
    dll = directory / f"{name}.dll"
    subprocess.run([*linker, "/dll", "/noentry", "/opt:ref", f"/out:{dll}",
                    "/export:horon_agent_plugin_get_api_v1", str(obj)], check=True,
                   capture_output=True)
    return dll


def make_macho(directory: Path, name: str, section: bytes | None = SECTION_JSON) -> Path:
    """An arm64 Mach-O dylib exporting the entry point, with `section` as __DATA,__horon_abi."""
    linker = require_tools("darwin")
    source = directory / f"{name}.s"
    parts = []
    if section is not None:
        parts += ["\t.section __DATA,__horon_abi", "\t.globl _HORON_ABI",
                  "\t.no_dead_strip _HORON_ABI", "_HORON_ABI:", _bytes_directive(section)]
    parts += ["\t.section __TEXT,__text,regular,pure_instructions",
              "\t.globl _horon_agent_plugin_get_api_v1", "\t.p2align 2",
              "_horon_agent_plugin_get_api_v1:", "\tmov w0, #0", "\tret", ""]
    source.write_text("\n".join(parts))
    obj = directory / f"{name}.o"
    subprocess.run(["llvm-mc", "-filetype=obj", "-triple=arm64-apple-macos11", str(source),
                    "-o", str(obj)], check=True)
    dylib = directory / f"{name}.dylib"
    subprocess.run([*linker, "-arch", "arm64", "-dylib", "-platform_version", "macos", "11.0",
                    "11.0", "-dead_strip", "-o", str(dylib), str(obj)], check=True,
                   capture_output=True)
    return dylib
