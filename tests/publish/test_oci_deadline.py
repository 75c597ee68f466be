"""The clock of a registry request (`oci_deadline`, as the transport uses it): one deadline
for connect, TLS, sending, the status line, the headers and the body, whatever a hostile
registry served by the test dribbles; the connect and idle limits inside it.

In-process and quick (judges of `nox -s mutants`): the deadlines are given explicitly as short
`Limits`; the real 20 s is exercised once, end to end, in tests/publish/test_hostile_registry.py.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import time
from pathlib import Path

import pytest

from horon_bundle.publish.destinations import oci_deadline
from horon_bundle.publish.destinations.oci_deadline import Deadline, Limits
from horon_bundle.publish.destinations.oci_http import RegistryHttp
from tests.helpers import LATE
from tests.hostile_registry import MIB, HostileRegistry, Reply, Seen, dribble, tls_pair
from tests.transport_support import DISPLAY, get, refusal, timed, transport


def test_a_dribbled_body_is_given_up_at_the_deadline() -> None:
    body = b"{" + b" " * 98 + b"}"
    fault = lambda _seen: Reply(200, {"Content-Length": "100"}, dribble(body, 0.1))  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        took, refused = timed("publish.deadline", DISPLAY, get, transport(registry),
                              registry.origin + "/")
    assert 0.9 <= took < 1.6 + LATE
    assert "GET /: no complete answer within 1 s" in str(refused)


@pytest.mark.parametrize("part", ["status line", "headers"])
def test_a_dribbled_status_line_or_header_is_given_up_at_the_deadline(part: str) -> None:
    head = b"HTTP/1.1 200 OK\r\n" if part == "headers" else b""
    raw = itertools.chain([head], dribble(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"s" * 60
                                          + b"\r\n\r\n", 0.05))
    with HostileRegistry(fault=lambda _seen: Reply(raw=raw)) as registry:
        took, _ = timed("publish.deadline", DISPLAY, get, transport(registry),
                        registry.origin + "/")
    assert 0.9 <= took < 1.6 + LATE


def test_a_silent_server_is_given_up_after_the_idle_limit() -> None:
    def fault(_seen: Seen) -> Reply:
        time.sleep(3)
        return Reply(200)

    with HostileRegistry(fault=fault) as registry:
        http = transport(registry, Limits(small=1.0, idle=0.3))
        took, refused = timed("publish.deadline", DISPLAY, get, http, registry.origin + "/")
    assert 0.3 <= took < 1.0 + LATE
    assert "no progress for 0.3 s" in str(refused)


def test_a_server_that_reads_no_upload_is_given_up_at_the_deadline() -> None:
    def fault(_seen: Seen) -> Reply:
        time.sleep(4)
        return Reply(400)

    upload = b"z" * (64 * MIB)
    with HostileRegistry(fault=fault) as registry:
        http = transport(registry, Limits(small=1.0, blob=1.0, idle=5.0))
        took, refused = timed("publish.deadline", DISPLAY, http.send, "PUT",
                              registry.origin + "/u/1", deadline=http.deadline(blob_size=0),
                              body=upload)
    assert 0.9 <= took < 1.6 + LATE
    assert "PUT /u/1" in str(refused)


def test_a_blob_deadline_grows_with_its_size() -> None:
    http = RegistryHttp("http://127.0.0.1:1", display=DISPLAY)
    assert http.deadline().seconds == oci_deadline.SMALL_REQUEST_DEADLINE == 20.0
    assert http.deadline(blob_size=0).seconds == oci_deadline.BLOB_DEADLINE == 20.0
    assert http.deadline(blob_size=1 << 30).seconds == 20.0 + 1024.0
    assert oci_deadline.MIN_BLOB_RATE == 1 << 20
    custom = RegistryHttp("http://127.0.0.1:1", display=DISPLAY,
                          limits=Limits(small=3.0, blob=2.0, min_blob_rate=10))
    assert custom.deadline().seconds == 3.0
    assert custom.deadline(blob_size=50).seconds == 7.0


def test_a_spent_deadline_opens_no_connection() -> None:
    with HostileRegistry() as registry:
        http = transport(registry)
        refusal("publish.deadline", DISPLAY, http.send, "GET", registry.origin + "/v2/",
                 deadline=Deadline(-1.0))
        assert registry.seen == []


def test_a_deadline_with_no_time_left_sends_nothing() -> None:
    spent = Deadline(0.0, clock=lambda: 5.0)  # exactly nothing left, on a clock that stands
    with HostileRegistry() as registry:
        http = transport(registry)
        refused = refusal("publish.deadline", DISPLAY, http.send, "GET", registry.origin + "/v2/",
                           deadline=spent)
        assert str(refused).endswith("GET /v2/: no complete answer within 0 s")
        assert registry.seen == []
        get(http, registry.origin + "/v2/")  # a kept-alive connection: the same on it
        refusal("publish.deadline", DISPLAY, http.send, "GET", registry.origin + "/v2/",
                deadline=spent)
        assert len(registry.seen) == 1


def test_a_connect_that_hangs_is_given_up_at_the_connect_limit() -> None:
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        queued = [socket.socket() for _ in range(4)]
        for waiting in queued:
            waiting.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                waiting.connect(("127.0.0.1", port))
        try:
            time.sleep(0.05)
            http = RegistryHttp(f"http://127.0.0.1:{port}", display=DISPLAY,
                                limits=Limits(small=1.0, connect=0.3, retry_delays=()))
            took, refused = timed("publish.unreachable", DISPLAY, http.send, "POST",
                                   f"http://127.0.0.1:{port}/", deadline=http.deadline())
            short = RegistryHttp(f"http://127.0.0.1:{port}", display=DISPLAY,
                                 limits=Limits(small=0.2, connect=5.0, retry_delays=()))
            took_short, _ = timed("publish.deadline", DISPLAY, short.send, "POST",
                                   f"http://127.0.0.1:{port}/", deadline=short.deadline())
        finally:
            for waiting in queued:
                waiting.close()
    assert 0.3 <= took < 1.0 + LATE and 0.2 <= took_short < 0.9 + LATE
    assert str(refused).endswith("POST /: no connection within 0.3 s")


def test_a_tls_handshake_that_never_comes_is_given_up(tmp_path: Path) -> None:
    _server, trust = tls_pair(tmp_path)
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(1)
        origin = f"https://127.0.0.1:{mute.getsockname()[1]}"
        http = RegistryHttp(origin, display=DISPLAY, tls=trust,
                            limits=Limits(small=1.0, connect=0.3, retry_delays=()))
        took, refused = timed("publish.unreachable", DISPLAY, http.send, "GET", origin + "/v2/",
                               deadline=http.deadline())
    assert 0.3 <= took < 0.9 + LATE
    assert str(refused).endswith("GET /v2/: no connection within 0.3 s")
