"""The home's lock: `install.lock`, a file holding no data, flock'ed by every writer.

flock(2) locks are released by the kernel when the holder dies, so a killed install never
leaves a stale lock. Readers (list, status, check) take no lock: every file they read is
either immutable once renamed into place or replaced atomically.
"""

from __future__ import annotations

import errno
import os
import stat
import time

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.install.dirs import FILE_FLAGS, io_error, lstat_at, same
from horon_bundle.install.layout import LOCK_NAME

DEFAULT_LOCK_TIMEOUT = 60.0
_POLL = 0.05


class HomeLock:
    def __init__(self, home_fd: int, *, timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.home_fd = home_fd
        self.timeout = timeout
        self.fd: int | None = None

    def __enter__(self) -> HomeLock:
        import fcntl  # noqa: PLC0415 - POSIX only; the caller has checked the platform

        deadline = time.monotonic() + self.timeout
        while True:
            fd = self._open()
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        os.close(fd)
                        raise Refused.one(
                            codes.INSTALL_BUSY, f"{LOCK_NAME}: held by another process for "
                                                f"more than {self.timeout:g} s") from None
                    time.sleep(_POLL)
                except OSError as exc:
                    os.close(fd)
                    raise io_error(LOCK_NAME, exc) from None
            current = lstat_at(self.home_fd, LOCK_NAME, LOCK_NAME)
            if current is not None and same(current, os.fstat(fd)):
                self.fd = fd
                return self
            os.close(fd)  # the file was replaced while we waited: lock the one now there

    def _open(self) -> int:
        try:
            fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | FILE_FLAGS, 0o600,
                         dir_fd=self.home_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused.one(codes.INSTALL_SYMLINK, f"{LOCK_NAME} is a symbolic link; it "
                                                         "is not followed") from None
            if exc.errno in (errno.EISDIR, errno.ENXIO):
                raise Refused.one(codes.INSTALL_HOME,
                                  f"{LOCK_NAME} is not a regular file") from None
            raise io_error(LOCK_NAME, exc) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise Refused.one(codes.INSTALL_HOME, f"{LOCK_NAME} is not a regular file")
        return fd

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the last descriptor releases the flock
            self.fd = None
