"""The strace log reader doctor judges side effects with: phases, writes, connections."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.doctor.trace import decode_string, offences, parse_calls, split_args

LOG = """\
100 openat(AT_FDCWD</w>, "/home/x/early", O_WRONLY|O_CREAT, 0644) = 3</home/x/early>
100 newfstatat(AT_FDCWD</w>, "/.horon-doctor-phase/load-begin", 0x7ff, 0) = -1 ENOENT (No such file)
100 openat(AT_FDCWD</w>, "/usr/lib/libc.so.6", O_RDONLY|O_CLOEXEC) = 3</usr/lib/libc.so.6>
100 newfstatat(AT_FDCWD</w>, "/.horon-doctor-phase/handshake-begin", 0x7ff, 0) = -1 ENOENT
100 openat(AT_FDCWD</w>, "rel/file", O_RDWR|O_CREAT|O_TRUNC, 0666 <unfinished ...>
101 connect(5<socket:[1]>, {sa_family=AF_UNIX, sun_path="/run/nscd/socket"}, 110) = -1 ENOENT
100 <... openat resumed>) = 4</w/rel/file>
101 renameat2(3</dir>, "a", AT_FDCWD</w>, "/etc/b", RENAME_NOREPLACE) = 0
100 newfstatat(AT_FDCWD</w>, "/.horon-doctor-phase/describe-begin", 0x7ff, 0) = -1 ENOENT
100 connect(3<socket:[2]>, {sa_family=AF_INET, sin_port=htons(9), \
sin_addr=inet_addr("127.0.0.1")}, 16) = -1 ENETUNREACH (Network is unreachable)
100 sendto(4<socket:[3]>, "q", 1, 0, {sa_family=AF_INET6, sin6_port=htons(53), \
sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 1
100 mkdir("/tmp/new\\303\\251", 0777) = 0
100 +++ exited with 0 +++
"""


def test_offences_by_phase() -> None:
    markers: list[str] = []
    found = offences(parse_calls(LOG.splitlines(), markers), cwd="/w")
    assert markers == ["load", "handshake", "describe"]
    summary = [(o.phase, o.kind, o.syscall, o.target) for o in found]
    assert summary == [
        ("handshake", "write", "openat", "/w/rel/file"),
        ("handshake", "write", "renameat2", "/dir/a"),
        ("handshake", "write", "renameat2", "/etc/b"),
        ("describe", "network", "connect", "127.0.0.1:9"),
        ("describe", "network", "sendto", "[::1]:53"),
        ("describe", "write", "mkdir", "/tmp/new\u00e9"),
    ]
    assert found[0].result == "4</w/rel/file>"
    assert found[0].detail == "O_RDWR|O_CREAT|O_TRUNC"


def test_split_args_respects_quotes_and_brackets() -> None:
    args, result = split_args('AT_FDCWD</a,b>, "x, \\"y\\")", {flags=O_RDONLY, x=1}, 8) = 3')
    assert args == ["AT_FDCWD</a,b>", '"x, \\"y\\")"', "{flags=O_RDONLY, x=1}", "8"]
    assert result == "3"


@given(st.text())
def test_reader_never_raises(text: str) -> None:
    list(offences(parse_calls(text.splitlines()), cwd="/"))
    split_args(text)
    decode_string(text)


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126,
                                      blacklist_characters='"\\')))
def test_plain_strings_decode_to_themselves(text: str) -> None:
    assert decode_string(f'"{text}"') == text


@pytest.mark.process
@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_real_strace_log(tmp_path: Path) -> None:
    """The format this reader expects is the one strace writes here."""
    log = tmp_path / "trace.log"
    script = ("import os\n"
              "try: os.stat('/.horon-doctor-phase/load-begin')\nexcept OSError: pass\n"
              "open('made', 'w').close()\nos.rename('made', 'moved')\n")
    subprocess.run(["strace", "-f", "-qq", "-y", "-s", "4096", "-e", "trace=%file,%network",
                    "-e", "signal=none", "-o", str(log), sys.executable, "-c", script],
                   cwd=tmp_path, check=True)
    with log.open() as lines:
        found = offences(parse_calls(lines), cwd=str(tmp_path))
    targets = [(o.syscall, Path(o.target).name) for o in found]
    assert ("openat", "made") in targets
    assert ("rename", "made") in targets
    assert ("rename", "moved") in targets
