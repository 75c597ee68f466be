"""Hostile trees planted in an installed copy: the agent home's readers (`check`, `status
--verify`) read each copy with the one tree reader (`core.tree`, bundle policy) and refuse
each class with its code, at once, writing nothing.

A hard link to a file outside the home, a link (to itself, to /etc/passwd), a FIFO, a
socket, a device, 1,100 nested directories, a path over PATH_MAX and a 1,950 MiB sparse file
are each planted in the installed copy of example 0.1.0; `check` is install.tampered with the
layout code, in seconds, and the home is byte-identical (content, inodes, modes, times).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import HANG_GUARD, assert_refused
from tests.install_support import Bundles, copy_location, hb, home_state

pytestmark = pytest.mark.cargo


def _nest(root: Path, names: list[str]) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def _hard_link(copy: Path) -> None:
    secret = copy.parents[4] / "secret.txt"
    secret.write_text("not yours\n")
    os.link(secret, copy / "leak.txt")


def _socket(copy: Path) -> None:
    """Bound at a short path (AF_UNIX paths are short) and renamed into the copy."""
    short = Path(tempfile.mkdtemp(dir=copy.parents[4]))
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(short / "s"))
    server.close()
    (short / "s").rename(copy / "sock")
    short.rmdir()


def _device(copy: Path) -> None:
    try:
        os.mknod(copy / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")


def _sparse(copy: Path) -> None:
    with (copy / "big.bin").open("wb") as handle:
        handle.truncate(1950 << 20)


CASES: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "hard link to a file outside": (_hard_link, "layout.file-type",
                                    "'leak.txt' is a hard link (2 links)"),
    "link to itself": (lambda c: (c / "me").symlink_to("me"), "layout.symlink",
                       "'me' is a symbolic link"),
    "link to /etc/passwd": (lambda c: (c / "p").symlink_to("/etc/passwd"), "layout.symlink",
                            "'p' is a symbolic link"),
    "FIFO": (lambda c: os.mkfifo(c / "pipe"), "layout.file-type", "'pipe' is a FIFO"),
    "socket": (_socket, "layout.file-type", "'sock' is a socket"),
    "device": (_device, "layout.file-type", "'null' is a device"),
    "1,100 nested directories": (lambda c: _nest(c, ["d"] * 1100), "layout.limit",
                                 "lies deeper than 32 directories"),
    "a path over PATH_MAX": (lambda c: _nest(c, ["n" * 250] * 20), "layout.limit",
                             "is longer than 512 bytes"),
    "a 1,950 MiB sparse file": (_sparse, "layout.limit",
                                "'big.bin': 2044723200 bytes, limit 1992294400"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_tree_in_an_installed_copy_is_refused(bundles: Bundles, tmp_path: Path,
                                                        case: str) -> None:
    plant, code, words = CASES[case]
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    copy = copy_location(home, "0.1.0")
    copy.chmod(0o755)
    plant(copy)
    try:
        before = home_state(home) if "nested" not in case and "PATH_MAX" not in case else None
        for command in (("check", "example"), ("status", "--verify")):
            start = time.monotonic()
            result = hb(*command, home=home)
            elapsed = time.monotonic() - start
            assert_refused(result, code)
            assert words in result.stderr, result.stderr
            assert elapsed < HANG_GUARD, f"{case}: {command[0]} took {elapsed:.1f} s"
        assert "install.tampered" in hb("check", "example", home=home).codes
        if before is not None:
            assert home_state(home) == before
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=True)
