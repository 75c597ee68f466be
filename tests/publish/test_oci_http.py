"""The registry transport (`oci_http`, `oci_deadline`) against a hostile registry served by the
test itself on loopback: capped bodies, one deadline per request, our own redirects, bounded
retries, and credentials that never leave the registry's origin.

In-process and quick (the judges of `nox -s mutants` for these modules): the deadlines are
given explicitly as short `Limits`; the real ones are exercised end to end in
tests/publish/test_hostile_registry.py.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.publish.destinations import oci_deadline, oci_http
from horon_bundle.publish.destinations.oci_deadline import Deadline, Limits
from horon_bundle.publish.destinations.oci_http import (
    MAX_ERROR_BYTES,
    MAX_JSON_BYTES,
    Origin,
    RegistryHttp,
    path_of,
    shown,
)
from tests.hostile_registry import (
    MIB,
    HostileRegistry,
    Reply,
    Seen,
    dribble,
    huge,
    tls_pair,
)

QUICK = Limits(small=1.0, blob=1.0, min_blob_rate=1 << 20, connect=0.5, idle=0.6,
               retry_delays=(0.01, 0.02))
DISPLAY = "oci://test/ns"
SECRET = {"Authorization": "Basic c2VjcmV0"}


def _http(registry: HostileRegistry, limits: Limits = QUICK, *,
          on_retry: Callable[[str], None] | None = None,
          tls: ssl.SSLContext | None = None) -> RegistryHttp:
    return RegistryHttp(registry.origin, display=DISPLAY, limits=limits, on_retry=on_retry,
                        tls=tls)


def _get(http: RegistryHttp, url: str, **options: object) -> oci_http.Answer:
    return http.send("GET", url, deadline=http.deadline(), **options)  # type: ignore[arg-type]


def _refused(code: str, call: object, *args: object, **kwargs: object) -> Refused:
    with pytest.raises(Refused) as refused:
        call(*args, **kwargs)  # type: ignore[operator]
    assert refused.value.codes() == [code], refused.value
    [finding] = refused.value.findings
    assert finding.message.startswith(DISPLAY + ": "), finding.message
    assert "\n" not in finding.message and len(finding.message) < 600
    return refused.value


@pytest.fixture(name="other_host")
def other_host_fixture() -> Iterator[HostileRegistry]:
    """A second server on another loopback address: "another host"."""
    with HostileRegistry("127.0.0.2") as other:
        yield other


# --- memory: every body capped ----------------------------------------------------------------
@pytest.mark.parametrize("with_length", [True, False])
def test_a_body_at_the_cap_is_read_and_one_byte_more_is_refused(with_length: bool) -> None:
    def fault(seen: Seen) -> Reply:
        size = MAX_JSON_BYTES + (seen.path == "/over")
        return Reply(200, {"Content-Length": str(size)} if with_length else {}, huge(size))

    with HostileRegistry(fault=fault) as registry:
        http = _http(registry)
        assert len(_get(http, registry.origin + "/at").body) == MAX_JSON_BYTES
        refused = _refused("publish.too-large", _get, http, registry.origin + "/over")
        assert f"/over: the answer is larger than {MAX_JSON_BYTES} bytes" in str(refused)


def test_a_chunked_body_is_capped_too() -> None:
    chunk = b"%x\r\n%s\r\n" % (MIB, b"c" * MIB)
    raw = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", *[chunk] * 5, b"0\r\n\r\n"]
    with HostileRegistry(fault=lambda _seen: Reply(raw=raw)) as registry:
        http = _http(registry)
        assert len(_get(http, registry.origin + "/", limit=5 * MIB).body) == 5 * MIB
        _refused("publish.too-large", _get, http, registry.origin + "/", limit=5 * MIB - 1)


def test_a_caller_names_a_smaller_cap() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(200, {}, b"0123456789")) as registry:
        http = _http(registry)
        assert _get(http, registry.origin + "/", limit=10).body == b"0123456789"
        _refused("publish.too-large", _get, http, registry.origin + "/", limit=9)


def test_an_error_body_is_cut_at_its_cap_and_its_connection_dropped() -> None:
    def fault(seen: Seen) -> Reply:
        size = MAX_ERROR_BYTES + (1 if seen.path == "/long" else 0)
        return Reply(500 if seen.path != "/fine" else 200, {"Content-Length": str(size)},
                     huge(size, b"e"))

    with HostileRegistry(fault=fault) as registry:
        http = _http(registry, Limits(small=1.0, retry_delays=()))
        long = http.send("GET", registry.origin + "/long", deadline=http.deadline())
        assert long.status == 500 and long.body == b"e" * MAX_ERROR_BYTES
        exact = http.send("GET", registry.origin + "/exact", deadline=http.deadline())
        assert exact.body == b"e" * MAX_ERROR_BYTES
        http.send("GET", registry.origin + "/fine", deadline=http.deadline())
        peers = [seen.peer for seen in registry.seen]
        assert peers[0] != peers[1] == peers[2], "cut short: closed; read whole: kept alive"


def test_a_huge_error_body_is_never_read() -> None:
    served: list[int] = []

    def counted() -> Iterator[bytes]:
        for piece in huge(600 * MIB):
            served.append(len(piece))
            yield piece

    with HostileRegistry(fault=lambda _seen: Reply(400, {}, counted())) as registry:
        http = _http(registry)
        answer = http.send("POST", registry.origin + "/v2/x/blobs/uploads/",
                           deadline=http.deadline())
        assert answer.status == 400 and len(answer.body) == MAX_ERROR_BYTES
    assert sum(served) < 32 * MIB  # what the socket buffers took before it was closed


def test_a_redirect_or_other_3xx_body_is_capped_as_an_error() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(300, {}, b"m" * (MAX_ERROR_BYTES + 9))) \
            as registry:
        answer = _get(_http(registry), registry.origin + "/")
    assert answer.status == 300 and answer.body == b"m" * MAX_ERROR_BYTES


def test_head_and_no_content_answers_keep_the_connection() -> None:
    with HostileRegistry() as registry:
        http = _http(registry)
        for method in ("HEAD", "GET", "DELETE"):
            http.send(method, registry.origin + "/v2/", deadline=http.deadline())
        assert len({seen.peer for seen in registry.seen}) == 1


def test_a_kept_connection_the_server_closed_is_opened_again() -> None:
    """A server may close a kept-alive connection without a word: the next request finds it
    closed and goes out again on a new one (a POST too: nothing of it was received)."""
    with HostileRegistry(fault=lambda _seen: Reply(200, {}, b"{}", hang_up=True)) as registry:
        http = _http(registry)
        for method in ("GET", "POST", "GET"):
            answer = http.send(method, registry.origin + "/v2/", deadline=http.deadline())
            assert (answer.status, answer.body, answer.attempts) == (200, b"{}", 1)
        assert len(registry.seen) == 3 and len({seen.peer for seen in registry.seen}) == 3
        http.close()
        _get(http, registry.origin + "/v2/")


# --- the clock: one deadline per request ----------------------------------------------------
def _timed(code: str, call: object, *args: object, **kwargs: object) -> tuple[float, Refused]:
    started = time.monotonic()
    refused = _refused(code, call, *args, **kwargs)
    return time.monotonic() - started, refused


def test_a_dribbled_body_is_given_up_at_the_deadline() -> None:
    body = b"{" + b" " * 98 + b"}"
    fault = lambda _seen: Reply(200, {"Content-Length": "100"}, dribble(body, 0.1))  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        took, refused = _timed("publish.deadline", _get, _http(registry), registry.origin + "/")
    assert 0.9 <= took < 1.6
    assert "GET /: no complete answer within 1 s" in str(refused)


@pytest.mark.parametrize("part", ["status line", "headers"])
def test_a_dribbled_status_line_or_header_is_given_up_at_the_deadline(part: str) -> None:
    head = b"HTTP/1.1 200 OK\r\n" if part == "headers" else b""
    raw = itertools.chain([head], dribble(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"s" * 60
                                          + b"\r\n\r\n", 0.05))
    with HostileRegistry(fault=lambda _seen: Reply(raw=raw)) as registry:
        took, _ = _timed("publish.deadline", _get, _http(registry), registry.origin + "/")
    assert 0.9 <= took < 1.6


def test_a_silent_server_is_given_up_after_the_idle_limit() -> None:
    def fault(_seen: Seen) -> Reply:
        time.sleep(3)
        return Reply(200)

    with HostileRegistry(fault=fault) as registry:
        http = _http(registry, Limits(small=1.0, idle=0.3))
        took, refused = _timed("publish.deadline", _get, http, registry.origin + "/")
    assert 0.3 <= took < 1.0
    assert "no progress for 0.3 s" in str(refused)


def test_a_server_that_reads_no_upload_is_given_up_at_the_deadline() -> None:
    def fault(_seen: Seen) -> Reply:
        time.sleep(4)
        return Reply(400)

    upload = b"z" * (64 * MIB)
    with HostileRegistry(fault=fault) as registry:
        http = _http(registry, Limits(small=1.0, blob=1.0, idle=5.0))
        took, refused = _timed("publish.deadline", http.send, "PUT", registry.origin + "/u/1",
                               deadline=http.deadline(blob_size=0), body=upload)
    assert 0.9 <= took < 1.6
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
        http = _http(registry)
        _refused("publish.deadline", http.send, "GET", registry.origin + "/v2/",
                 deadline=Deadline(-1.0))
        assert registry.seen == []


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
            took, refused = _timed("publish.unreachable", http.send, "POST",
                                   f"http://127.0.0.1:{port}/", deadline=http.deadline())
            short = RegistryHttp(f"http://127.0.0.1:{port}", display=DISPLAY,
                                 limits=Limits(small=0.2, connect=5.0, retry_delays=()))
            took_short, _ = _timed("publish.deadline", short.send, "POST",
                                   f"http://127.0.0.1:{port}/", deadline=short.deadline())
        finally:
            for waiting in queued:
                waiting.close()
    assert 0.3 <= took < 1.0 and 0.2 <= took_short < 0.9
    assert str(refused).endswith("POST /: no connection within 0.3 s")


# --- retries: bounded and said --------------------------------------------------------------
def test_a_read_answered_503_is_retried_and_each_retry_said() -> None:
    said: list[str] = []
    statuses = iter([503, 429, 200])
    with HostileRegistry(fault=lambda _seen: Reply(next(statuses))) as registry:
        http = _http(registry, on_retry=said.append)
        answer = _get(http, registry.origin + "/v2/")
    assert (answer.status, answer.attempts) == (200, 3)
    assert said == ["oci://test/ns: GET /v2/: 503; attempt 2 of 3 in 0.01 s",
                    "oci://test/ns: GET /v2/: 429; attempt 3 of 3 in 0.02 s"]


@pytest.mark.parametrize("status", sorted(oci_http.RETRY_STATUSES))
def test_retries_stop_after_the_last_attempt(status: int) -> None:
    with HostileRegistry(fault=lambda _seen: Reply(status)) as registry:
        http = _http(registry)
        answer = http.send("HEAD", registry.origin + "/x", deadline=http.deadline())
        assert (answer.status, answer.attempts) == (status, 3)
        assert len(registry.seen) == oci_http.MAX_ATTEMPTS == 3
    assert oci_deadline.RETRY_DELAYS == (0.5, 2.0)


@pytest.mark.parametrize("status", [400, 404, 501, 505])
def test_other_statuses_are_not_retried(status: int) -> None:
    with HostileRegistry(fault=lambda _seen: Reply(status)) as registry:
        assert _get(_http(registry), registry.origin + "/x").attempts == 1
        assert len(registry.seen) == 1


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_a_write_is_never_repeated(method: str) -> None:
    with HostileRegistry(fault=lambda _seen: Reply(503)) as registry:
        http = _http(registry)
        assert http.send(method, registry.origin + "/x", deadline=http.deadline()).status == 503
        assert len(registry.seen) == 1


def test_no_retry_when_the_deadline_has_no_room_for_its_delay() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(500)) as registry:
        http = _http(registry, Limits(small=1.0, retry_delays=(5.0, 5.0)))
        assert _get(http, registry.origin + "/x").attempts == 1


def test_a_refused_connection_is_retried_then_refused_with_its_attempts() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    said: list[str] = []
    http = RegistryHttp(f"http://127.0.0.1:{port}", display=DISPLAY,
                        limits=QUICK, on_retry=said.append)
    refused = _refused("publish.unreachable", http.send, "GET",
                       f"http://127.0.0.1:{port}/v2/", deadline=http.deadline())
    assert str(refused).endswith("GET /v2/: connection refused (3 attempts)")
    assert len(said) == 2
    post = _refused("publish.unreachable", http.send, "POST",
                    f"http://127.0.0.1:{port}/v2/", deadline=http.deadline())
    assert str(post).endswith("POST /v2/: connection refused")


def test_a_connection_lost_mid_answer_is_retried() -> None:
    raw = [b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"]
    with HostileRegistry(fault=lambda _seen: Reply(raw=raw)) as registry:
        refused = _refused("publish.unreachable", _get, _http(registry), registry.origin + "/")
        assert "connection lost (3 attempts)" in str(refused)
        assert len(registry.seen) == 3


def test_a_garbled_answer_is_destination_state() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(raw=[b"SMTP ready\r\n\r\n"])) as registry:
        refused = _refused("publish.destination-state", _get, _http(registry),
                           registry.origin + "/")
    assert "not a well-formed HTTP answer (BadStatusLine)" in str(refused)


# --- redirects and locations -----------------------------------------------------------------
def test_redirects_are_followed_by_us_with_a_hop_limit() -> None:
    def fault(seen: Seen) -> Reply | None:
        hop = int(seen.path.rsplit("/", 1)[1])
        return Reply(302, {"Location": f"/r/{hop - 1}"}) if hop else Reply(200, {}, b"ok")

    with HostileRegistry(fault=fault) as registry:
        http = _http(registry)
        assert _get(http, registry.origin + "/r/3", headers=SECRET).body == b"ok"
        assert all(seen.authorization == SECRET["Authorization"] for seen in registry.seen)
        refused = _refused("publish.unsafe-location", _get, http, registry.origin + "/r/4")
        assert "GET /r/4: more than 3 redirects" in str(refused)
        assert len(registry.seen) == 4 + 4


def test_a_redirect_to_another_host_is_followed_without_credentials(
        other_host: HostileRegistry) -> None:
    fault = lambda _seen: Reply(307, {"Location": other_host.origin + "/v2/"})  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        answer = _get(_http(registry), registry.origin + "/v2/", headers=SECRET)
    assert answer.status == 200 and answer.url == other_host.origin + "/v2/"
    [seen] = other_host.seen
    assert seen.authorization is None


def test_a_request_to_another_origin_never_carries_credentials(
        other_host: HostileRegistry) -> None:
    with HostileRegistry() as registry:
        http = _http(registry)
        for origin in (other_host.origin, f"http://localhost:{registry.port}"):
            http.send("DELETE", origin + "/u/1", deadline=http.deadline(),
                      headers={"authorization": "Bearer t", "Accept": "x"})
        http.send("GET", registry.origin + "/v2/", deadline=http.deadline(), headers=SECRET)
    assert [s.authorization for s in other_host.seen] == [None]
    assert [s.headers.get("accept") for s in other_host.seen] == ["x"]
    assert [s.authorization for s in registry.seen] == [None, SECRET["Authorization"]]


def test_a_write_answered_with_a_redirect_is_not_followed() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(307, {"Location": "/x"})) as registry:
        http = _http(registry)
        answer = http.send("PUT", registry.origin + "/m", deadline=http.deadline(), body=b"{}")
        assert answer.status == 307 and len(registry.seen) == 1


@pytest.mark.parametrize(("location", "problem"), [
    ("http://registry.invalid/u/1", "is plain HTTP to a host that is not loopback"),
    ("ftp://127.0.0.1/u/1", "is neither HTTP nor HTTPS"),
    ("http://user:pw@127.0.0.2/u/1", "holds user information"),
    ("https:///u/1", "has no host"),
    ("http://127.0.0.2:99999/u", "is not a URL"),
    ("/u/1\r\nX-Injected: 1", "holds whitespace, a control or a non-ASCII character"),
    ("/u/\u00e9", "holds whitespace, a control or a non-ASCII character"),
])
def test_unsafe_locations_are_refused_before_anything_is_sent(location: str,
                                                              problem: str) -> None:
    with HostileRegistry() as registry:
        http = _http(registry)
        base = registry.origin + "/v2/x/blobs/uploads/"
        refused = _refused("publish.unsafe-location", http.resolve, base, location, "POST x")
        assert "POST x: the location " in str(refused)
        assert str(refused).endswith(f"{problem}; nothing was sent there")
        assert "pw" not in str(refused) and "/u/1" not in str(refused)
        assert registry.seen == []


def test_locations_resolve_against_the_request() -> None:
    http = RegistryHttp("http://127.0.0.1:5000", display=DISPLAY)
    base = "http://127.0.0.1:5000/v2/ns/x/blobs/uploads/"
    assert http.resolve(base, "7?s=1", "w") == base + "7?s=1"
    assert http.resolve(base, "/v2/u/8", "w") == "http://127.0.0.1:5000/v2/u/8"
    assert http.resolve(base, "//127.0.0.2:6/u", "w") == "http://127.0.0.2:6/u"
    assert http.resolve(base, "https://127.0.0.2/u", "w") == "https://127.0.0.2/u"
    assert http.resolve(base, "https://registry.example/u", "w") == "https://registry.example/u"
    assert http.resolve(base, "/u/!~", "w") == "http://127.0.0.1:5000/u/!~"
    _refused("publish.destination-state", http.resolve, base, None, "w")
    _refused("publish.destination-state", http.resolve, base, "", "w")
    _refused("publish.unsafe-location", http.send, "GET", "ftp://127.0.0.1:1/v2/",
             deadline=http.deadline())


def test_https_never_downgrades_to_plain_http(tmp_path: Path,
                                              other_host: HostileRegistry) -> None:
    server, client = tls_pair(tmp_path)
    fault = lambda seen: (Reply(302, {"Location": other_host.origin + "/v2/"})  # noqa: E731
                          if seen.path == "/redirect" else None)
    with HostileRegistry(tls=server, fault=fault) as registry:
        http = _http(registry, tls=client)
        assert registry.origin.startswith("https://")
        assert _get(http, registry.origin + "/v2/", headers=SECRET).status == 200
        assert registry.seen[0].authorization == SECRET["Authorization"]
        refused = _refused("publish.unsafe-location", _get, http, registry.origin + "/redirect")
        assert "would downgrade HTTPS to plain HTTP" in str(refused)
        _refused("publish.unsafe-location", http.resolve, registry.origin + "/v2/x/",
                 other_host.origin + "/u/1", "POST")
    assert other_host.seen == []


def test_an_untrusted_certificate_is_unreachable(tmp_path: Path) -> None:
    server, _client = tls_pair(tmp_path)
    with HostileRegistry(tls=server) as registry:
        refused = _refused("publish.unreachable", _get, _http(registry), registry.origin + "/")
    assert "TLS handshake or certificate verification failed" in str(refused)


# --- what messages show ------------------------------------------------------------------------
def test_registry_text_is_shown_escaped_and_short() -> None:
    assert shown("a\nb\x1b[31m\u202e") == "a\\x0ab\\x1b[31m\\u202e"
    assert shown(" a b~") == " a b~" and shown("\x7f") == "\\x7f"
    assert shown("x" * 500) == "x" * 200 + "…"
    assert shown("abc", 2) == "ab…" and shown("ab", 2) == "ab"
    assert oci_http.MAX_SHOWN_CHARS == 200
    assert path_of("http://h:1/v2/x/blobs/uploads/9?_state=secret") == "/v2/x/blobs/uploads/9"
    assert path_of("http://h:1") == "/"


def test_origins_compare_scheme_host_and_port() -> None:
    assert Origin.of("http://127.0.0.1/x") == Origin("http", "127.0.0.1", 80)
    assert Origin.of("https://GHCR.io/x") == Origin("https", "ghcr.io", 443)
    assert Origin.of("http://[::1]:5000/").text == "http://[::1]:5000"
    assert Origin.of("https://h/") != Origin.of("http://h:443/")


# --- more of the clock and the wire ------------------------------------------------------
def test_a_deadline_with_no_time_left_sends_nothing() -> None:
    spent = Deadline(0.0, clock=lambda: 5.0)  # exactly nothing left, on a clock that stands
    with HostileRegistry() as registry:
        http = _http(registry)
        refused = _refused("publish.deadline", http.send, "GET", registry.origin + "/v2/",
                           deadline=spent)
        assert str(refused).endswith("GET /v2/: no complete answer within 0 s")
        assert registry.seen == []
        _get(http, registry.origin + "/v2/")  # a kept-alive connection: the same on it
        _refused("publish.deadline", http.send, "GET", registry.origin + "/v2/", deadline=spent)
        assert len(registry.seen) == 1


def test_retries_start_again_after_a_redirect() -> None:
    fault = lambda seen: Reply(302, {"Location": "/b"}) if seen.path == "/a" else Reply(503)  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        answer = _get(_http(registry), registry.origin + "/a")
    assert (answer.status, answer.attempts) == (503, 3)
    assert [seen.path for seen in registry.seen] == ["/a", "/b", "/b", "/b"]


def test_two_attempts_are_said_as_two() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    http = RegistryHttp(f"http://127.0.0.1:{port}", display=DISPLAY,
                        limits=Limits(small=1.0, retry_delays=(0.01,)))
    refused = _refused("publish.unreachable", http.send, "HEAD", f"http://127.0.0.1:{port}/",
                       deadline=http.deadline())
    assert str(refused).endswith("HEAD /: connection refused (2 attempts)")


def test_the_length_sent_is_the_bodys_own() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(200)) as registry:
        http = _http(registry)
        http.send("PUT", registry.origin + "/m", deadline=http.deadline(), body=b"{}",
                  headers={"Content-Length": "999", "content-type": "x"})
        http.send("POST", registry.origin + "/p", deadline=http.deadline())
        http.send("GET", registry.origin + "/g", deadline=http.deadline())
    put, post, get = registry.seen
    assert (put.headers["content-length"], put.headers["content-type"]) == ("2", "x")
    assert post.headers["content-length"] == "0"
    assert "content-length" not in get.headers


class _Pieces:
    """A streamed body: pieces of several sizes, one over SEND_PIECE."""

    def __init__(self, *pieces: bytes) -> None:
        self.pieces = pieces

    def __len__(self) -> int:
        return sum(map(len, self.pieces))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.pieces)


def test_a_streamed_body_arrives_whole() -> None:
    body = _Pieces(os.urandom(10), os.urandom(oci_http.SEND_PIECE + 7), b"", os.urandom(3))
    data = b"".join(body.pieces)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    with HostileRegistry() as registry:
        http = _http(registry)
        opened = http.send("POST", registry.origin + "/v2/x/blobs/uploads/",
                           deadline=http.deadline())
        location = http.resolve(opened.url, opened.header("Location"), "POST")
        stored = http.send("PUT", f"{location}?digest={digest}", body=body,
                           deadline=http.deadline(blob_size=len(body)))
        assert stored.status == 201, stored.body
        assert registry.store.blobs[digest] == data


def test_a_tls_handshake_that_never_comes_is_given_up(tmp_path: Path) -> None:
    _server, trust = tls_pair(tmp_path)
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(1)
        origin = f"https://127.0.0.1:{mute.getsockname()[1]}"
        http = RegistryHttp(origin, display=DISPLAY, tls=trust,
                            limits=Limits(small=1.0, connect=0.3, retry_delays=()))
        took, refused = _timed("publish.unreachable", http.send, "GET", origin + "/v2/",
                               deadline=http.deadline())
    assert 0.3 <= took < 0.9
    assert str(refused).endswith("GET /v2/: no connection within 0.3 s")


def test_another_network_failure_says_what_the_system_said(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure loopback cannot produce (an unreachable network), simulated at the socket."""
    def unreachable(*_args: object, **_kwargs: object) -> socket.socket:
        raise OSError(errno.ENETUNREACH, "Network is unreachable")

    monkeypatch.setattr(socket, "create_connection", unreachable)
    http = RegistryHttp("http://127.0.0.1:9", display=DISPLAY, limits=QUICK)
    refused = _refused("publish.unreachable", http.send, "GET", "http://127.0.0.1:9/v2/",
                       deadline=http.deadline())
    assert str(refused).endswith("GET /v2/: Network is unreachable")


def test_the_system_trust_store_is_used_and_certifi_only_without_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _server, with_one_ca = tls_pair(tmp_path)
    empty = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for system, more_than_one in ((with_one_ca, False), (empty, True)):
        monkeypatch.setattr(ssl, "create_default_context", lambda system=system: system)
        context = RegistryHttp("https://127.0.0.1:9", display=DISPLAY)._tls_context()
        assert context is system
        assert (context.cert_store_stats()["x509_ca"] > 1) is more_than_one
