"""Opening an agent home: for reading, or for writing (created if missing, locked, swept).

The home's own path is the user's choice and is resolved once, as given (a link the user made
to put the home elsewhere is honoured); everything below it is reached through descriptors
(`install.dirs`). A writer holds the home's lock for its whole run and, before anything else,
removes what killed writers left (staging and trash directories, state temp files): under
the lock nothing else can be writing them.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.install.dirs import Chain, io_error, remove_debris
from horon_bundle.install.layout import (
    HARNESS_DIR,
    NATIVE_DIR,
    STAGING_PREFIX,
    STATE_TEMP_PREFIX,
    TRASH_PREFIX,
)
from horon_bundle.install.lock import DEFAULT_LOCK_TIMEOUT, HomeLock

_HOME_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def require_posix() -> None:
    if os.name != "posix" or sys.platform == "win32":
        raise Refused.one(codes.INSTALL_UNSUPPORTED,
                          f"installing into an agent home needs POSIX; this is {sys.platform}")


@dataclass(slots=True)
class Home:
    path: Path
    fd: int

    def chain(self) -> Chain:
        return Chain(self.path, self.fd)

    def native(self, *, create: bool) -> Chain | None:
        """A chain opened down to native-plugins/ (None when absent and not created)."""
        return self.area(NATIVE_DIR, create=create)

    def area(self, *names: str, create: bool) -> Chain | None:
        """A chain opened down to `names` (e.g. harness-bundles, sha256); None when one is
        absent and not created."""
        chain = self.chain()
        for name in names:
            if not chain.descend(name, create=create):
                chain.close()
                return None
        return chain

    def recheck(self) -> None:
        try:
            info = self.path.stat()
        except OSError:
            info = None
        current = os.fstat(self.fd)
        if info is None or (info.st_dev, info.st_ino) != (current.st_dev, current.st_ino):
            raise Refused.one(codes.INSTALL_RACE, f"{self.path} was replaced while the command "
                                                  "ran")


def _open(path: Path) -> int | None:
    try:
        fd = os.open(path, _HOME_FLAGS)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise Refused.one(codes.INSTALL_HOME, f"{path}: not a directory") from None
    except OSError as exc:
        raise io_error(str(path), exc) from None
    info = os.fstat(fd)
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        os.close(fd)
        raise Refused.one(codes.INSTALL_HOME,
                          f"{path}: writable by every user (mode {stat.S_IMODE(info.st_mode):o})",
                          "Others could plant links in it: chmod o-w, or choose another home.")
    return fd


def open_home(path: Path) -> Home | None:
    """The home for reading; None when it does not exist."""
    require_posix()
    fd = _open(path)
    return None if fd is None else Home(path, fd)


def _create(path: Path, *, parents: bool) -> Home:
    fd = _open(path)
    if fd is None:
        if parents:
            try:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError as exc:
                raise io_error(str(path.parent), exc) from None
        try:
            path.mkdir(mode=0o700)
        except FileNotFoundError:
            raise Refused.one(codes.INSTALL_HOME,
                              f"{path}: its parent {path.parent} does not exist") from None
        except FileExistsError:
            pass  # made a moment ago by a concurrent first install: opened below
        except OSError as exc:
            raise io_error(str(path), exc) from None
        fd = _open(path)
        if fd is None:
            raise Refused.one(codes.INSTALL_RACE, f"{path} vanished as it was created")
    return Home(path, fd)


@contextlib.contextmanager
def writing(path: Path, *, create: bool = True, parents: bool = False,
            lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[Home]:
    """The home for writing: created if missing (mode 0700) when `create`, locked, swept of
    debris. Without `create` a missing home is install.not-installed (nothing is there)."""
    require_posix()
    if create:
        home = _create(path, parents=parents)
    else:
        fd = _open(path)
        if fd is None:
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{path}: no agent home here, so nothing is installed")
        home = Home(path, fd)
    try:
        with HomeLock(home.fd, timeout=lock_timeout):
            sweep(home)
            yield home
    finally:
        os.close(home.fd)


def sweep(home: Home) -> list[str]:
    """Remove what killed writers left; the caller holds the lock."""
    removed = remove_debris(home.fd, (STATE_TEMP_PREFIX,), str(home.path))
    for name in (NATIVE_DIR, HARNESS_DIR):
        area = home.area(name, create=False)
        if area is not None:
            with area:
                removed += [f"{name}/{debris}" for debris in
                            remove_debris(area.fd, (STAGING_PREFIX, TRASH_PREFIX), name)]
    return removed
