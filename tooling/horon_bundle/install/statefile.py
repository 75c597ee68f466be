"""Reading and atomically replacing the home's state file, relative to the home's descriptor.

Replacing: a new temp file (`.state.json.<random>.tmp`, O_EXCL, never through a link) gets
the canonical bytes and is fsynced; rename(2) puts it over state.json in one step; the home
directory is fsynced so the rename itself survives a power cut. A kill at any point leaves
the old file or the new one, never a mix; a temp left by a kill is removed by the next
writer (under the lock). The caller holds the home's lock.
"""

from __future__ import annotations

import contextlib
import errno
import os

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.install.dirs import FILE_FLAGS, READ_FLAGS, io_error, regular_fd
from horon_bundle.install.layout import STATE_NAME, STATE_TEMP_PREFIX, STATE_TEMP_SUFFIX
from horon_bundle.install.state import MAX_STATE_BYTES, HomeState, parse_state, state_bytes


def read_state(home_fd: int) -> HomeState:
    """The state in `home_fd`; an empty state when there is no state file yet."""
    try:
        fd = os.open(STATE_NAME, READ_FLAGS, dir_fd=home_fd)
    except FileNotFoundError:
        return HomeState()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused.one(codes.INSTALL_SYMLINK, f"{STATE_NAME} is a symbolic link; it is "
                                                     "not followed") from None
        raise io_error(STATE_NAME, exc) from None
    try:
        if not regular_fd(fd):
            raise Refused.one(codes.INSTALL_HOME, f"{STATE_NAME} is not a regular file")
        info = os.fstat(fd)
        if info.st_size > MAX_STATE_BYTES:
            raise Refused.one(codes.INSTALL_STATE, f"{STATE_NAME}: {info.st_size} bytes, "
                                                   f"limit {MAX_STATE_BYTES}")
        with os.fdopen(os.dup(fd), "rb") as stream:
            data = stream.read(MAX_STATE_BYTES + 1)
    except OSError as exc:
        raise io_error(STATE_NAME, exc) from None
    finally:
        os.close(fd)
    try:
        return parse_state(data, STATE_NAME)
    except Refused as exc:
        if all(f.code is codes.INSTALL_STATE for f in exc.findings):
            raise
        raise Refused([Finding(codes.INSTALL_STATE, f"{STATE_NAME} cannot be read"),
                       *exc.findings]) from None


def state_fitting(state: HomeState) -> bytes:
    """The bytes of `state`, refused (install.state) when they could never be read back. A
    writer calls it before it stages anything, so a state that cannot grow leaves no file."""
    data = state_bytes(state)
    if len(data) > MAX_STATE_BYTES:  # written, it could never be read again
        raise Refused.one(codes.INSTALL_STATE, f"{STATE_NAME} would be {len(data)} bytes, "
                                               f"limit {MAX_STATE_BYTES}; nothing was changed",
                          "The home is full: uninstall what is no longer needed, then install "
                          "again.")
    return data


def replace_state(home_fd: int, state: HomeState) -> None:
    """Write `state` as the home's state file: temp, fsync, rename, fsync the directory."""
    # the writer's own imports, never a reader's (start-up of `list`)
    import secrets  # noqa: PLC0415

    from horon_bundle.core.checkpoint import checkpoint  # noqa: PLC0415

    data = state_fitting(state)
    temp = f"{STATE_TEMP_PREFIX}{secrets.token_hex(8)}{STATE_TEMP_SUFFIX}"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o644,
                     dir_fd=home_fd)
    except OSError as exc:
        raise io_error(STATE_NAME, exc) from None
    try:
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fchmod(stream.fileno(), 0o644)
                os.fsync(stream.fileno())
            checkpoint("state-replace")
            os.rename(temp, STATE_NAME, src_dir_fd=home_fd, dst_dir_fd=home_fd)
            os.fsync(home_fd)
        except OSError as exc:
            raise io_error(STATE_NAME, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=home_fd)
        raise
