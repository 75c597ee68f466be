"""Opening a bundle: a directory (`verify.reading.directory`) or a validated archive
(`verify.reading.archive_source`), one interface (`verify.reading.interface`).

`verify` works on `BundleSource`, so a directory and its archive get the same checks and an
archive is verified by streaming its entries, with nothing extracted.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.verify.reading.interface import BundleSource


def open_bundle(path: Path) -> BundleSource:
    """A directory bundle or a .zip archive; anything else is refused (nothing is opened that
    could block: a FIFO or device named as the bundle is refused from its lstat)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: no such file or directory") from None
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise Refused.one(codes.LAYOUT_SYMLINK, f"{path}: the bundle path is a symbolic link")
    # each reader imported when a bundle of its kind is opened (start-up: a zip's verify
    # needs no tree walker, a directory's no archive reader beyond the judge's own check)
    if stat.S_ISDIR(info.st_mode):
        from horon_bundle.verify.reading.directory import DirectorySource  # noqa: PLC0415

        return DirectorySource(path)
    if stat.S_ISREG(info.st_mode) and path.suffix == ".zip":
        from horon_bundle.verify.reading.archive_source import ArchiveSource  # noqa: PLC0415

        return ArchiveSource(path)
    raise Refused.one(codes.LAYOUT_NOT_A_BUNDLE, f"{path}: not a directory or .zip archive")
