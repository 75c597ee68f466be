"""What changes when a file is written, replaced or touched: its identity as `stat` gives it.

(device, inode, size, mtime, ctime): a write through any descriptor moves the ctime, which
no program can set back, and a replacement changes the inode. Two equal identities around a
read, or around a kernel copy, mean the bytes are the ones another read of that identity saw.
"""

from __future__ import annotations

import os

FileIdentity = tuple[int, int, int, int, int]


def identity_of(info: os.stat_result) -> FileIdentity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
