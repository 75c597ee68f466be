"""The clock of a registry request: one deadline for everything it does.

A per-read timeout bounds nothing (a server sending a byte every second never trips it): every
socket operation of a request — connect, TLS handshake, each send, each read of the status
line, the headers and the body — waits at most the time left before the request's deadline
(and never more than the idle limit for one byte), so the request as a whole is given up at its
deadline however the server dribbles. http.client reads a response through `bounded_response`'s
stream, which arms the socket before each read. Connecting — to the registry or to a proxy,
and the TLS handshake — has the connect limit within the time left (`connecting`).
"""

from __future__ import annotations

import http.client
import io
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

SMALL_REQUEST_DEADLINE = 20.0  # seconds for the whole of a request that is not a blob upload
BLOB_DEADLINE = 20.0  # seconds a blob upload has beyond its size's share, below
MIN_BLOB_RATE = 1 << 20  # bytes per second: a 1 GiB archive has 20 s + 1,024 s
CONNECT_DEADLINE = 10.0  # seconds to connect (and shake hands), within the request's deadline
IDLE_DEADLINE = 60.0  # seconds any one socket operation may wait, even in a long upload
RETRY_DELAYS = (0.5, 2.0)  # seconds before the second and the third attempt of a read
READ_PIECE = 64 << 10  # bytes asked for per read of a body


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The clock's limits: the defaults above, or shorter ones a test gives explicitly."""

    small: float = SMALL_REQUEST_DEADLINE
    blob: float = BLOB_DEADLINE
    min_blob_rate: int = MIN_BLOB_RATE
    connect: float = CONNECT_DEADLINE
    idle: float = IDLE_DEADLINE
    retry_delays: tuple[float, ...] = RETRY_DELAYS


class Deadline:
    """A point on the monotonic clock by which a request must be done."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._at = clock() + seconds

    def left(self) -> float:
        return self._at - self._clock()


class DeadlineSpent(Exception):
    """The request's deadline passed before it was done."""


class NoConnection(Exception):
    """No connection within the connect limit (its one argument, in seconds)."""


@contextmanager
def connecting(deadline: Deadline, limit: float) -> Iterator[float]:
    """The timeout of a connect or handshake: the connect limit within the time left. A
    timeout inside is the deadline's (`DeadlineSpent`) when that came first, else the
    limit's (`NoConnection`)."""
    left = deadline.left()
    if left <= 0:
        raise DeadlineSpent
    timeout = min(left, limit)
    try:
        yield timeout
    except TimeoutError:
        raise DeadlineSpent if timeout == left else NoConnection(timeout) from None


class _DeadlineStream(io.RawIOBase):
    """The socket as http.client reads it: every read waits at most the time left."""

    def __init__(self, sock: socket.socket, deadline: Deadline, idle: float) -> None:
        super().__init__()
        self._sock, self._raw = sock, sock.makefile("rb", buffering=0)
        self._deadline, self._idle = deadline, idle

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int | None:
        arm(self._sock, self._deadline, self._idle)
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


def arm(sock: socket.socket, deadline: Deadline, idle: float) -> None:
    left = deadline.left()
    if left <= 0:
        raise DeadlineSpent
    sock.settimeout(min(left, idle))


def bounded_response(deadline: Deadline, idle: float) -> type[http.client.HTTPResponse]:
    class Bounded(http.client.HTTPResponse):
        def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            self.fp.close()
            self.fp = io.BufferedReader(_DeadlineStream(sock, deadline, idle))
    return Bounded
