"""What an archive's entries may be: names, types, modes, duplicates, limits.

The same rules as a directory bundle's (`verify.reading.directory`): regular files only, no setuid,
setgid or world-writable file or directory, no empty directory, safe and unique names.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings
from horon_bundle.verify import limits

STORED, DEFLATED = 0, 8


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """One central-directory record, as the bytes say (and as the local header agreed)."""

    name: str
    raw_name: bytes
    size: int
    compressed_size: int
    method: int
    flags: int
    crc: int
    time: int
    date: int
    version_needed: int
    mode: int
    header_offset: int
    data_offset: int = 0
    local_header: bytes = b""  # the local header's bytes (name included), as validated
    descriptor: bytes = b""  # the data descriptor's bytes after the data, if any

    @property
    def is_directory(self) -> bool:
        return self.name.endswith("/")


def judge_entries(entries: list[ArchiveEntry], archive_size: int, label: str,
                   findings: Findings) -> dict[str, ArchiveEntry]:
    """Names, types, modes, duplicates, collisions and limits; the file entries by name."""
    files: dict[str, ArchiveEntry] = {}
    directories: dict[str, ArchiveEntry] = {}
    total = 0
    for entry in entries:
        name = entry.name
        where = f"{label}: entry {name!r}"
        mode = entry.mode
        if stat.S_ISLNK(mode):
            findings.add(codes.ARCHIVE_LINK, f"{where}: symbolic link")
            continue
        bare = name[:-1] if entry.is_directory else name
        if _name_refused(bare, where, findings):
            continue
        if mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH):
            findings.add(codes.LAYOUT_MODE, f"{where}: mode {stat.S_IMODE(mode):o}")
        if entry.is_directory:
            if mode and not stat.S_ISDIR(mode):
                findings.add(codes.ARCHIVE_FORMAT, f"{where}: a directory entry with file mode "
                                                   f"{mode:o}")
            if entry.size or entry.compressed_size > 2:
                findings.add(codes.ARCHIVE_FORMAT, f"{where}: a directory entry with content")
            if bare in directories:
                findings.add(codes.ARCHIVE_DUPLICATE, f"{where}: appears twice")
            directories[bare] = entry
            continue
        if mode and not stat.S_ISREG(mode):
            findings.add(codes.LAYOUT_FILE_TYPE, f"{where}: not a regular file (mode {mode:o})")
            continue
        if name in files:
            findings.add(codes.ARCHIVE_DUPLICATE, f"{where}: appears twice")
            continue
        total += entry.size
        if entry.size > limits.MAX_ENTRY_BYTES:
            findings.add(codes.ARCHIVE_LIMIT, f"{where}: {entry.size} bytes uncompressed, limit "
                                              f"{limits.MAX_ENTRY_BYTES}")
        if entry.size > limits.RATIO_FLOOR and \
                entry.size > limits.MAX_RATIO * max(entry.compressed_size, 1):
            findings.add(codes.ARCHIVE_LIMIT, f"{where}: compression ratio over "
                                              f"{limits.MAX_RATIO}")
        files[name] = entry
    if total > limits.MAX_TOTAL_BYTES:
        findings.add(codes.ARCHIVE_LIMIT, f"{label}: {total} bytes uncompressed, limit "
                                          f"{limits.MAX_TOTAL_BYTES}")
    elif total > limits.TOTAL_RATIO_FLOOR and total > limits.MAX_TOTAL_RATIO * archive_size:
        findings.add(codes.ARCHIVE_LIMIT, f"{label}: {total} bytes uncompressed from a "
                                          f"{archive_size}-byte archive, ratio over "
                                          f"{limits.MAX_TOTAL_RATIO}")
    for first, second in paths.collisions(files):
        findings.add(codes.ARCHIVE_DUPLICATE, f"{label}: entries {first!r} and {second!r} collide")
    folded_files = {paths.fold(n) for n in files}
    holding = {"/".join(parts[:depth]) for parts in (f.split("/") for f in folded_files)
               for depth in range(1, len(parts))}  # every directory some file lies in
    for directory in sorted(directories):
        if paths.fold(directory) in folded_files:
            findings.add(codes.ARCHIVE_CONFLICT,
                         f"{label}: {directory!r} is both a file and a directory")
        elif paths.fold(directory) not in holding:
            findings.add(codes.LAYOUT_UNDECLARED, f"{label}: empty directory {directory!r}")
    return files


def _name_refused(name: str, where: str, findings: Findings) -> bool:
    problem = paths.path_problem(name)
    if problem is None:
        return False
    if name.startswith("/") or problem == "drive letter in path":
        findings.add(codes.ARCHIVE_ABSOLUTE, f"{where}: {problem}")
    elif problem in ("'..' component", "'.' component"):
        findings.add(codes.ARCHIVE_TRAVERSAL, f"{where}: {problem}")
    else:
        findings.add(codes.ARCHIVE_UNSAFE_NAME, f"{where}: {problem}")
    return True
