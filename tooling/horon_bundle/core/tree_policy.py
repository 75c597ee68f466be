"""What one kind of tree may hold (`core.tree`): its limits, whether links are followed, and
the code of each class of problem in the words of the tree's owner. The policies themselves
live with every other limit, in `verify.limits` (`bundle_tree`, `harness_tree`).
"""

from __future__ import annotations

from dataclasses import dataclass

from horon_bundle.core.errors import Code


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeCodes:
    """The refusal code of each class of problem, in the words of the tree's owner."""

    limit: Code
    link: Code            # a link where none may be; one leading outside the root
    loop: Code            # a link to itself, a cycle of links, a link to a directory above it
    hard_link: Code
    file_type: Code       # a FIFO, socket or device; a link to nothing
    changed: Code         # changed between the walk and the read
    mode: Code | None = None             # None: modes are not judged (the writer sets them)
    empty_directory: Code | None = None  # None: an empty directory is not a finding


@dataclass(frozen=True, slots=True, kw_only=True)
class TreePolicy:
    """What one kind of tree may hold; every limit is checked before the work it bounds."""

    max_entries: int      # files, directories and links listed (a followed link's too)
    max_depth: int        # directory levels below the root
    max_path_bytes: int   # UTF-8 bytes of one relative path
    max_file_bytes: int   # one file, from its lstat
    max_total_bytes: int  # all files together, from their lstat
    follow_links: bool    # in-root links followed (else every link is refused)
    codes: TreeCodes
    skip_names: frozenset[str] = frozenset()  # names never entered, at any level (".git")
    during: str = "while it was verified"     # the end of a `changed` message


@dataclass(frozen=True, slots=True)
class TreeFile:
    path: str                # its relative path in the tree (through links, as followed)
    real: tuple[str, ...]    # where its bytes are, below the root (no link in it)
    size: int
    executable: bool | None  # None: the file system keeps no POSIX mode bits (Windows)
    seen: tuple[int, int, int]  # (st_dev, st_ino, st_size) the walk judged
