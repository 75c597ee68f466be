"""The child's modules compiled once, by the parent: the child itself never writes bytecode.

The child runs with `-B` (it writes nothing into the toolchain's install), and the parent never
imports `load.child.entry`, `doctor` or `loading`, so where no installer compiled them (an
editable install) the child would compile them from source on every run. Before starting a
child the parent checks their cached bytecode the way the import system does (magic number,
source mtime and size: PEP 552 timestamp pycs) and compiles what is missing or stale, as its
own imports would; nothing when bytecode writing is off (`-B`, `PYTHONDONTWRITEBYTECODE`) or
the install is read-only.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

CHILD_PACKAGE = Path(__file__).resolve().parent / "child"
_HEADER = 16


def _fresh(source: Path, cached: Path) -> bool:
    """True when `cached` is the timestamp pyc of `source` as it is now."""
    try:
        info = source.stat()
        with cached.open("rb") as stream:
            header = stream.read(_HEADER)
    except OSError:
        return False
    return (len(header) == _HEADER and header[:4] == importlib.util.MAGIC_NUMBER
            and int.from_bytes(header[4:8], "little") == 0
            and int.from_bytes(header[8:12], "little") == int(info.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == info.st_size & 0xFFFFFFFF)


def compile_child(package: Path = CHILD_PACKAGE) -> list[Path]:
    """Compile the package's modules whose bytecode is missing or stale; the sources
    compiled (none when bytecode is not written here)."""
    if sys.dont_write_bytecode:
        return []
    compiled = []
    for source in sorted(package.glob("*.py")):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if _fresh(source, cached):
            continue
        import py_compile  # noqa: PLC0415 - only when something is to be compiled

        try:
            py_compile.compile(str(source), cfile=str(cached), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
        except (OSError, py_compile.PyCompileError):
            continue  # a read-only install: the child compiles in memory, as before
        compiled.append(source)
    return compiled

