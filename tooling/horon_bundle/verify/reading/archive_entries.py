"""What an archive's entries may be: names, types, modes, duplicates, limits.

The same rules as a directory bundle's (`verify.reading.directory`): regular files only, no setuid,
setgid or world-writable file or directory, no empty directory, safe and unique names, and the
limits of the directory the archive unpacks into (its `TreePolicy`): no entry deeper than its
depth, no more files and directories unpacked than its entries.

The work is linear in the names' bytes (sorts aside), whatever the names: an entry's depth is
judged before its components are, a directory entry's files are found by bisection in the
sorted names, the directories unpacking would create are counted in one pass over them, and
pairs of entries that collide (a chain of files each inside the one before makes as many pairs
as entries times their depth) are listed up to `limits.MAX_LISTED`, and no more are looked for.
"""

from __future__ import annotations

import stat
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings
from horon_bundle.core.inputs import file_kind
from horon_bundle.core.tree_policy import TreePolicy
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
                  findings: Findings, *, unpacked: TreePolicy) -> dict[str, ArchiveEntry]:
    """Names, types, modes, duplicates, collisions and limits (`unpacked`: the policy of the
    directory the archive unpacks into); the file entries by name."""
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
        if bare.count("/") + entry.is_directory > unpacked.max_depth:  # before its components
            findings.add(codes.ARCHIVE_LIMIT, f"{where}: lies deeper than "
                                              f"{unpacked.max_depth} directories")
            continue
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
        if mode and not stat.S_IFMT(mode):
            findings.add(codes.LAYOUT_FILE_TYPE,
                         f"{where}: mode {mode:o} has no file-type bits, so the entry is not "
                         f"marked a regular file (expected {stat.S_IFREG | mode:o})")
            continue
        if mode and not stat.S_ISREG(mode):
            kind = file_kind(mode)
            said = "" if kind == "not a regular file" else f"{kind}, "
            findings.add(codes.LAYOUT_FILE_TYPE,
                         f"{where}: {said}not a regular file (mode {mode:o})")
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
    count = unpacked_entries([*files, *(f"{d}/" for d in directories)])
    if count > unpacked.max_entries:
        findings.add(codes.ARCHIVE_LIMIT, f"{label}: {len(files)} files and "
                                          f"{count - len(files)} directories unpacked, limit "
                                          f"{unpacked.max_entries} entries")
    for listed, (first, second) in enumerate(paths.iter_collisions(files)):
        if listed == limits.MAX_LISTED:  # the rest are not even looked for
            findings.add(codes.ARCHIVE_DUPLICATE, f"{label}: … and more pairs of entries that "
                                                  f"collide (the first {listed} are listed)")
            break
        findings.add(codes.ARCHIVE_DUPLICATE, f"{label}: entries {first!r} and {second!r} collide")
    folded_files = {paths.fold(n) for n in files}
    ordered = sorted(folded_files)
    for directory in sorted(directories):
        folded = paths.fold(directory)
        if folded in folded_files:
            findings.add(codes.ARCHIVE_CONFLICT,
                         f"{label}: {directory!r} is both a file and a directory")
        elif not _holds(ordered, folded):
            findings.add(codes.LAYOUT_UNDECLARED, f"{label}: empty directory {directory!r}")
    return files


def unpacked_entries(names: Iterable[str]) -> int:
    """The files and directories a tree holds once these names are unpacked into it (a name
    ending in '/' is a directory): each file, and each directory once however many names lie
    in it — what the tree reader counts when it walks the unpacked tree. Counted from the
    sorted names: the names under one directory sort together, so a directory is new exactly
    when the name before does not lie in it."""
    count = 0
    previous: list[str] = []
    previous_parent: str | None = None
    for name in sorted(names):
        parent, _, leaf = name.rpartition("/")
        count += leaf != ""
        if parent == previous_parent:  # most names: in the same directory as the one before
            continue
        parents = parent.split("/") if parent else []
        shared = 0
        for mine, theirs in zip(parents, previous, strict=False):
            if mine != theirs:
                break
            shared += 1
        count += len(parents) - shared
        previous, previous_parent = parents, parent
    return count


def _holds(ordered: list[str], directory: str) -> bool:
    """Whether a name of `ordered` (sorted) lies in `directory`: the names under `d/` sort in
    one run from `d/` on, so the first name not below `d/` is the only one to look at."""
    at = bisect_left(ordered, f"{directory}/")
    return at < len(ordered) and ordered[at].startswith(f"{directory}/")


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
