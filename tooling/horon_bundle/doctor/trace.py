"""Reading an `strace -f -y` log: which file and network system calls ran in which phase.

The doctor's child announces each phase with a readlink of `/.horon-doctor-phase/<phase>-begin`
(see `load.child.loading.marker`); every call after such a marker belongs to that phase, until the
next one. Calls before the first marker are the interpreter starting up and are not judged.
strace is asked for exactly the calls judged here and the marker (`TRACED`), and stops the
traced processes only for those (`--seccomp-bpf`): the interpreter's start-up stats and every
read-only call run untraced.

Only what changes the file system or reaches the network is extracted:
- writes: an open with a write, create, truncate or append flag; creat; mkdir; rmdir;
  unlink; rename; link; symlink; mknod; truncate; chmod; chown; utime(n)s; xattr changes;
- network: connect, sendto, sendmsg and sendmmsg naming an AF_INET or AF_INET6 address
  (Unix-domain and netlink sockets are local and not reported).
Paths are resolved against the directory strace printed for the dirfd (`-y`), else the cwd.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MARKER = "/.horon-doctor-phase/"
_MARKER_RE = re.compile(r'"/\.horon-doctor-phase/([a-z0-9-]+)-begin"')
_LINE_RE = re.compile(r"(?P<pid>[0-9]+)\s+(?P<rest>.*)")
_CALL_RE = re.compile(r"(?P<name>[a-z0-9_]+)\((?P<args>.*)")
_RESUMED_RE = re.compile(r"<\.\.\. (?P<name>[a-z0-9_]+) resumed>(?P<args>.*)")
_UNFINISHED = " <unfinished ...>"
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE")

# syscall -> indexes of (dirfd, path) argument pairs that name something written; a dirfd
# index of None means the path is relative to the cwd.
_WRITES: dict[str, tuple[tuple[int | None, int], ...]] = {
    "creat": ((None, 0),), "mkdir": ((None, 0),), "mkdirat": ((0, 1),),
    "rmdir": ((None, 0),), "unlink": ((None, 0),), "unlinkat": ((0, 1),),
    "rename": ((None, 0), (None, 1)), "renameat": ((0, 1), (2, 3)),
    "renameat2": ((0, 1), (2, 3)), "link": ((None, 1),), "linkat": ((2, 3),),
    "symlink": ((None, 1),), "symlinkat": ((1, 2),), "mknod": ((None, 0),),
    "mknodat": ((0, 1),), "truncate": ((None, 0),), "chmod": ((None, 0),),
    "fchmodat": ((0, 1),), "fchmodat2": ((0, 1),), "chown": ((None, 0),),
    "lchown": ((None, 0),), "fchownat": ((0, 1),), "utime": ((None, 0),),
    "utimes": ((None, 0),), "utimensat": ((0, 1),), "futimesat": ((0, 1),),
    "setxattr": ((None, 0),), "lsetxattr": ((None, 0),), "removexattr": ((None, 0),),
    "lremovexattr": ((None, 0),),
}
_OPENS: dict[str, tuple[int | None, int, int]] = {  # (dirfd, path, flags) indexes
    "open": (None, 0, 1), "openat": (0, 1, 2), "openat2": (0, 1, 2),
}
_NETWORK = ("connect", "sendto", "sendmsg", "sendmmsg")
# The marker's system call: readlink on x86_64's libc, readlinkat where there is no readlink.
MARKER_SYSCALLS = ("readlink", "readlinkat")
# Everything strace is asked to trace: the calls judged below and the marker. A name the
# architecture (or this strace) does not know is skipped by strace (`?name`, see `load.host`).
JUDGED = frozenset(_OPENS) | frozenset(_WRITES) | frozenset(_NETWORK)
TRACED = tuple(sorted(JUDGED | frozenset(MARKER_SYSCALLS)))
_INET4_RE = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([0-9.]+)"\)')
_INET6_RE = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([0-9a-fA-F:.]+)"')


@dataclass(frozen=True, slots=True)
class Call:
    """One completed system call of the log, with the phase it ran in."""

    phase: str | None
    pid: int
    name: str
    args: tuple[str, ...]
    result: str


@dataclass(frozen=True, slots=True)
class Offence:
    """A write or a connection: what, where, and what the kernel answered."""

    phase: str
    kind: str  # "write" or "network"
    syscall: str
    target: str  # a resolved path, or host:port
    detail: str
    result: str


# One token: a string literal (to its closing quote, or the end of a line strace cut), a run
# of ordinary characters, or one bracket or comma.
_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[^"()\[\]{}<>,]+|[()\[\]{}<>,]', re.S)


def split_args(text: str) -> tuple[list[str], str]:
    """Top-level arguments of `name(ARGS) = RESULT`, and RESULT; quotes and brackets respected.

    One pass over the line's tokens (string literals and runs of ordinary characters whole,
    not character by character)."""
    args: list[str] = []
    depth = 0
    current: list[str] = []
    end = len(text)
    for token in _TOKEN_RE.finditer(text):
        piece = token.group()
        char = piece[0]
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            if depth == 0 and char == ")":
                end = token.start()
                break
            depth -= 1
        elif char == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
            continue
        current.append(piece)
    last = "".join(current).strip()
    if last or args:
        args.append(last)
    rest = text[end + 1:]
    result = rest.split("=", 1)[1].strip() if "=" in rest else rest.strip()
    return args, result


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "\\": "\\", '"': '"'}


def decode_string(token: str) -> str | None:
    """An strace string literal (`"…"`, C escapes, maybe `...` when cut) as text."""
    token = token.removesuffix("...")
    if len(token) < 2 or not (token.startswith('"') and token.endswith('"')):
        return None
    body = token[1:-1]
    out = bytearray()
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\":
            out += char.encode("utf-8")
            index += 1
            continue
        nxt = body[index + 1:index + 2]
        if nxt in _ESCAPES:
            out += _ESCAPES[nxt].encode()
            index += 2
        elif nxt == "x":
            out.append(int(body[index + 2:index + 4], 16))
            index += 4
        elif nxt.isdigit():
            digits = re.match(r"[0-7]{1,3}", body[index + 1:])  # prefix match: octal escape
            assert digits is not None
            out.append(int(digits.group(0), 8) & 0xFF)
            index += 1 + len(digits.group(0))
        else:
            out += nxt.encode("utf-8")
            index += 2
    return out.decode("utf-8", errors="backslashreplace")


def _dirfd_path(token: str) -> str | None:
    """`AT_FDCWD</cwd>` or `3</dir>` (strace -y) -> the directory."""
    match = re.search(r"<(.*)>\Z", token)
    return match.group(1) if match else None


def parse_calls(lines: Iterable[str], markers: list[str] | None = None, *,
                judged_only: bool = False) -> Iterator[Call]:
    """Completed calls in log order; `<unfinished ...>` halves are joined per pid.

    Phase markers met on the way are appended to `markers` when given. With `judged_only`,
    only the calls `offences` judges are decoded and yielded (a call of a phase, named in
    `JUDGED`): the interpreter's start-up, most of a log, is skipped unparsed.
    """
    pending: dict[int, tuple[str | None, str, str]] = {}
    phase: str | None = None
    for raw in lines:
        line = raw.rstrip("\n")
        match = _LINE_RE.fullmatch(line)
        if match is None:
            continue
        pid = int(match.group("pid"))
        rest = match.group("rest")
        marker = _MARKER_RE.search(rest)
        if marker is not None:
            phase = marker.group(1)
            if markers is not None:
                markers.append(phase)
            continue
        if rest.endswith(_UNFINISHED):
            call = _CALL_RE.fullmatch(rest[:-len(_UNFINISHED)])
            if call is not None:
                pending[pid] = (phase, call.group("name"), call.group("args"))
            continue
        resumed = _RESUMED_RE.fullmatch(rest)
        if resumed is not None:
            if pid not in pending:
                continue
            started_in, name, head = pending.pop(pid)
            if judged_only and (started_in is None or name not in JUDGED):
                continue
            args, result = split_args(head + resumed.group("args"))
            yield Call(started_in, pid, name, tuple(args), result)
            continue
        call = _CALL_RE.fullmatch(rest)
        if call is not None:
            name = call.group("name")
            if judged_only and (phase is None or name not in JUDGED):
                continue
            args, result = split_args(call.group("args"))
            yield Call(phase, pid, name, tuple(args), result)


def _resolve(args: tuple[str, ...], dirfd: int | None, path: int, cwd: str) -> str | None:
    if path >= len(args):
        return None
    name = decode_string(args[path])
    if name is None:
        return None
    if name.startswith("/"):
        return posixpath.normpath(name)
    base = cwd
    if dirfd is not None and dirfd < len(args):
        base = _dirfd_path(args[dirfd]) or cwd
    return posixpath.normpath(posixpath.join(base, name))


def _address(args: tuple[str, ...]) -> str | None:
    joined = ", ".join(args)
    if "AF_INET6" in joined:
        match = _INET6_RE.search(joined)
        return f"[{match.group(2)}]:{match.group(1)}" if match else "an AF_INET6 address"
    if "AF_INET" in joined:
        match = _INET4_RE.search(joined)
        return f"{match.group(2)}:{match.group(1)}" if match else "an AF_INET address"
    return None


def offences(calls: Iterable[Call], *, cwd: str) -> list[Offence]:
    """Every write and every inet connection attempt made after the first phase marker."""
    found: list[Offence] = []
    for call in calls:
        if call.phase is None:
            continue
        if call.name in _OPENS:
            dirfd, path, flags = _OPENS[call.name]
            flag_text = call.args[flags] if flags < len(call.args) else ""
            if not any(flag in flag_text for flag in _WRITE_FLAGS):
                continue
            target = _resolve(call.args, dirfd, path, cwd)
            if target is not None:
                found.append(Offence(call.phase, "write", call.name, target,
                                     _flags(flag_text), call.result))
        elif call.name in _WRITES:
            for dirfd, path in _WRITES[call.name]:
                target = _resolve(call.args, dirfd, path, cwd)
                if target is not None:
                    found.append(Offence(call.phase, "write", call.name, target, "",
                                         call.result))
        elif call.name in _NETWORK:
            address = _address(call.args)
            if address is not None:
                found.append(Offence(call.phase, "network", call.name, address, "",
                                     call.result))
    return found


def _flags(text: str) -> str:
    match = re.search(r"O_[A-Z_|0-9]+", text)
    return match.group(0) if match else text
