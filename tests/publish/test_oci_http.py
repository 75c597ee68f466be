"""The registry transport (`oci_http`) against a hostile registry served by the test itself on
loopback: capped bodies, bounded retries, our own redirects, credentials that never leave the
registry's origin, and what is sent.

In-process and quick (judges of `nox -s mutants` for the transport): the deadlines are given
explicitly as short `Limits` (tests/transport_support.py); the clock is
tests/publish/test_oci_deadline.py, and the real limits are exercised end to end in
tests/publish/test_hostile_registry.py.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import ssl
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest

from horon_bundle.publish.destinations import oci_http, oci_origin
from horon_bundle.publish.destinations.oci_deadline import RETRY_DELAYS, Limits
from horon_bundle.publish.destinations.oci_http import (
    MAX_ERROR_BYTES,
    MAX_JSON_BYTES,
    Answer,
    RegistryHttp,
)
from horon_bundle.publish.destinations.oci_origin import Origin, path_of, shown, where
from tests.hostile_registry import MIB, HostileRegistry, Reply, Seen, huge, tls_pair
from tests.transport_support import DISPLAY, QUICK_HTTP, get, refusal, transport

SECRET = {"Authorization": "Basic c2VjcmV0"}


@pytest.fixture(name="other_host")
def other_host_fixture() -> Iterator[HostileRegistry]:
    """A second server on another loopback address: "another host"."""
    with HostileRegistry("127.0.0.2") as other:
        yield other


# --- memory: every body capped ---------------------------------------------------------------


@pytest.mark.parametrize("with_length", [True, False])
def test_a_body_at_the_cap_is_read_and_one_byte_more_is_refused(with_length: bool) -> None:
    def fault(seen: Seen) -> Reply:
        size = MAX_JSON_BYTES + (seen.path == "/over")
        return Reply(200, {"Content-Length": str(size)} if with_length else {}, huge(size))

    with HostileRegistry(fault=fault) as registry:
        http = transport(registry)
        assert len(get(http, registry.origin + "/at").body) == MAX_JSON_BYTES
        refused = refusal("publish.too-large", DISPLAY, get, http, registry.origin + "/over")
        assert f"/over: the answer is larger than {MAX_JSON_BYTES} bytes" in str(refused)


def test_a_chunked_body_is_capped_too() -> None:
    chunk = b"%x\r\n%s\r\n" % (MIB, b"c" * MIB)
    raw = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", *[chunk] * 5, b"0\r\n\r\n"]
    with HostileRegistry(fault=lambda _seen: Reply(raw=raw)) as registry:
        http = transport(registry)
        assert len(get(http, registry.origin + "/", limit=5 * MIB).body) == 5 * MIB
        refusal("publish.too-large", DISPLAY, get, http, registry.origin + "/", limit=5 * MIB - 1)


def test_a_caller_names_a_smaller_cap() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(200, {}, b"0123456789")) as registry:
        http = transport(registry)
        assert get(http, registry.origin + "/", limit=10).body == b"0123456789"
        refusal("publish.too-large", DISPLAY, get, http, registry.origin + "/", limit=9)


def test_an_error_body_is_cut_at_its_cap_and_its_connection_dropped() -> None:
    def fault(seen: Seen) -> Reply:
        size = MAX_ERROR_BYTES + (1 if seen.path == "/long" else 0)
        return Reply(500 if seen.path != "/fine" else 200, {"Content-Length": str(size)},
                     huge(size, b"e"))

    with HostileRegistry(fault=fault) as registry:
        http = transport(registry, Limits(small=1.0, retry_delays=()))
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
        http = transport(registry)
        answer = http.send("POST", registry.origin + "/v2/x/blobs/uploads/",
                           deadline=http.deadline())
        assert answer.status == 400 and len(answer.body) == MAX_ERROR_BYTES
    assert sum(served) < 32 * MIB  # what the socket buffers took before it was closed


def test_a_redirect_or_other_3xx_body_is_capped_as_an_error() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(300, {}, b"m" * (MAX_ERROR_BYTES + 9))) \
            as registry:
        answer = get(transport(registry), registry.origin + "/")
    assert answer.status == 300 and answer.body == b"m" * MAX_ERROR_BYTES


def test_head_and_no_content_answers_keep_the_connection() -> None:
    with HostileRegistry() as registry:
        http = transport(registry)
        for method in ("HEAD", "GET", "DELETE"):
            http.send(method, registry.origin + "/v2/", deadline=http.deadline())
        assert len({seen.peer for seen in registry.seen}) == 1


def test_a_kept_connection_the_server_closed_is_opened_again() -> None:
    """A server may close a kept-alive connection without a word: the next request finds it
    closed and goes out again on a new one (a POST too: nothing of it was received)."""
    with HostileRegistry(fault=lambda _seen: Reply(200, {}, b"{}", hang_up=True)) as registry:
        http = transport(registry)
        for method in ("GET", "POST", "GET"):
            answer = http.send(method, registry.origin + "/v2/", deadline=http.deadline())
            assert (answer.status, answer.body, answer.attempts) == (200, b"{}", 1)
        assert len(registry.seen) == 3 and len({seen.peer for seen in registry.seen}) == 3
        http.close()
        get(http, registry.origin + "/v2/")


# --- retries: bounded and said ---------------------------------------------------------------


def test_a_read_answered_503_is_retried_and_each_retry_said() -> None:
    said: list[str] = []
    statuses = iter([503, 429, 200])
    with HostileRegistry(fault=lambda _seen: Reply(next(statuses))) as registry:
        http = transport(registry, on_retry=said.append)
        answer = get(http, registry.origin + "/v2/")
    assert (answer.status, answer.attempts) == (200, 3)
    assert said == ["oci://test/ns: GET /v2/: 503; attempt 2 of 3 in 0.01 s",
                    "oci://test/ns: GET /v2/: 429; attempt 3 of 3 in 0.02 s"]


@pytest.mark.parametrize("status", sorted(oci_http.RETRY_STATUSES))
def test_retries_stop_after_the_last_attempt(status: int) -> None:
    with HostileRegistry(fault=lambda _seen: Reply(status)) as registry:
        http = transport(registry)
        answer = http.send("HEAD", registry.origin + "/x", deadline=http.deadline())
        assert (answer.status, answer.attempts) == (status, 3)
        assert len(registry.seen) == oci_http.MAX_ATTEMPTS == 3
    assert RETRY_DELAYS == (0.5, 2.0)


@pytest.mark.parametrize("status", [400, 404, 501, 505])
def test_other_statuses_are_not_retried(status: int) -> None:
    with HostileRegistry(fault=lambda _seen: Reply(status)) as registry:
        assert get(transport(registry), registry.origin + "/x").attempts == 1
        assert len(registry.seen) == 1


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_a_write_is_never_repeated(method: str) -> None:
    with HostileRegistry(fault=lambda _seen: Reply(503)) as registry:
        http = transport(registry)
        assert http.send(method, registry.origin + "/x", deadline=http.deadline()).status == 503
        assert len(registry.seen) == 1


def test_no_retry_when_the_deadline_has_no_room_for_its_delay() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(500)) as registry:
        http = transport(registry, Limits(small=1.0, retry_delays=(5.0, 5.0)))
        assert get(http, registry.origin + "/x").attempts == 1


def test_a_refused_connection_is_retried_then_refused_with_its_attempts() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    said: list[str] = []
    http = RegistryHttp(f"http://127.0.0.1:{port}", display=DISPLAY,
                        limits=QUICK_HTTP, on_retry=said.append)
    refused = refusal("publish.unreachable", DISPLAY, http.send, "GET",
                       f"http://127.0.0.1:{port}/v2/", deadline=http.deadline())
    assert str(refused).endswith("GET /v2/: connection refused (3 attempts)")
    assert len(said) == 2
    post = refusal("publish.unreachable", DISPLAY, http.send, "POST",
                    f"http://127.0.0.1:{port}/v2/", deadline=http.deadline())
    assert str(post).endswith("POST /v2/: connection refused")


def test_two_attempts_are_said_as_two() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    http = RegistryHttp(f"http://127.0.0.1:{port}", display=DISPLAY,
                        limits=Limits(small=1.0, retry_delays=(0.01,)))
    refused = refusal("publish.unreachable", DISPLAY, http.send, "HEAD", f"http://127.0.0.1:{port}/",
                       deadline=http.deadline())
    assert str(refused).endswith("HEAD /: connection refused (2 attempts)")


def test_retries_start_again_after_a_redirect() -> None:
    fault = lambda seen: Reply(302, {"Location": "/b"}) if seen.path == "/a" else Reply(503)  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        answer = get(transport(registry), registry.origin + "/a")
    assert (answer.status, answer.attempts) == (503, 3)
    assert [seen.path for seen in registry.seen] == ["/a", "/b", "/b", "/b"]


def test_a_connection_lost_mid_answer_is_retried() -> None:
    raw = [b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"]
    with HostileRegistry(fault=lambda _seen: Reply(raw=raw)) as registry:
        refused = refusal("publish.unreachable", DISPLAY, get, transport(registry),
                          registry.origin + "/")
        assert "connection lost (3 attempts)" in str(refused)
        assert len(registry.seen) == 3


def test_a_garbled_answer_is_destination_state() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(raw=[b"SMTP ready\r\n\r\n"])) as registry:
        refused = refusal("publish.destination-state", DISPLAY, get, transport(registry),
                           registry.origin + "/")
    assert "not a well-formed HTTP answer (BadStatusLine)" in str(refused)


def test_another_network_failure_says_what_the_system_said(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure loopback cannot produce (an unreachable network), simulated at the socket."""
    def unreachable(*_args: object, **_kwargs: object) -> socket.socket:
        raise OSError(errno.ENETUNREACH, "Network is unreachable")

    monkeypatch.setattr(socket, "create_connection", unreachable)
    http = RegistryHttp("http://127.0.0.1:9", display=DISPLAY, limits=QUICK_HTTP)
    refused = refusal("publish.unreachable", DISPLAY, http.send, "GET", "http://127.0.0.1:9/v2/",
                       deadline=http.deadline())
    assert str(refused).endswith("GET /v2/: Network is unreachable")


# --- redirects and locations -----------------------------------------------------------------


def test_redirects_are_followed_by_us_with_a_hop_limit() -> None:
    def fault(seen: Seen) -> Reply | None:
        hop = int(seen.path.rsplit("/", 1)[1])
        return Reply(302, {"Location": f"/r/{hop - 1}"}) if hop else Reply(200, {}, b"ok")

    with HostileRegistry(fault=fault) as registry:
        http = transport(registry)
        assert get(http, registry.origin + "/r/3", headers=SECRET).body == b"ok"
        assert all(seen.authorization == SECRET["Authorization"] for seen in registry.seen)
        refused = refusal("publish.unsafe-location", DISPLAY, get, http, registry.origin + "/r/4")
        assert "GET /r/4: more than 3 redirects" in str(refused)
        assert len(registry.seen) == 4 + 4


def test_a_redirect_to_another_host_is_followed_without_credentials(
        other_host: HostileRegistry) -> None:
    fault = lambda _seen: Reply(307, {"Location": other_host.origin + "/v2/"})  # noqa: E731
    with HostileRegistry(fault=fault) as registry:
        answer = get(transport(registry), registry.origin + "/v2/", headers=SECRET)
    assert answer.status == 200 and answer.url == other_host.origin + "/v2/"
    [seen] = other_host.seen
    assert seen.authorization is None


def test_a_request_to_another_origin_never_carries_credentials(
        other_host: HostileRegistry) -> None:
    with HostileRegistry() as registry:
        http = transport(registry)
        for origin in (other_host.origin, f"http://localhost:{registry.port}"):
            http.send("DELETE", origin + "/u/1", deadline=http.deadline(),
                      headers={"authorization": "Bearer t", "Accept": "x"})
        http.send("GET", registry.origin + "/v2/", deadline=http.deadline(), headers=SECRET)
    assert [s.authorization for s in other_host.seen] == [None]
    assert [s.headers.get("accept") for s in other_host.seen] == ["x"]
    assert [s.authorization for s in registry.seen] == [None, SECRET["Authorization"]]


def test_a_write_answered_with_a_redirect_is_not_followed() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(307, {"Location": "/x"})) as registry:
        http = transport(registry)
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
        http = transport(registry)
        base = registry.origin + "/v2/x/blobs/uploads/"
        refused = refusal("publish.unsafe-location", DISPLAY, http.resolve, base, location,
                          "POST x")
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
    refusal("publish.destination-state", DISPLAY, http.resolve, base, None, "w")
    refusal("publish.destination-state", DISPLAY, http.resolve, base, "", "w")
    refusal("publish.unsafe-location", DISPLAY, http.send, "GET", "ftp://127.0.0.1:1/v2/",
             deadline=http.deadline())


def test_https_never_downgrades_to_plaintransport(tmp_path: Path,
                                              other_host: HostileRegistry) -> None:
    server, client = tls_pair(tmp_path)
    fault = lambda seen: (Reply(302, {"Location": other_host.origin + "/v2/"})  # noqa: E731
                          if seen.path == "/redirect" else None)
    with HostileRegistry(tls=server, fault=fault) as registry:
        http = transport(registry, tls=client)
        assert registry.origin.startswith("https://")
        assert get(http, registry.origin + "/v2/", headers=SECRET).status == 200
        assert registry.seen[0].authorization == SECRET["Authorization"]
        refused = refusal("publish.unsafe-location", DISPLAY, get, http,
                          registry.origin + "/redirect")
        assert "would downgrade HTTPS to plain HTTP" in str(refused)
        refusal("publish.unsafe-location", DISPLAY, http.resolve, registry.origin + "/v2/x/",
                 other_host.origin + "/u/1", "POST")
    assert other_host.seen == []


def test_an_untrusted_certificate_is_unreachable(tmp_path: Path) -> None:
    server, _client = tls_pair(tmp_path)
    with HostileRegistry(tls=server) as registry:
        refused = refusal("publish.unreachable", DISPLAY, get, transport(registry),
                          registry.origin + "/")
    assert "TLS handshake or certificate verification failed" in str(refused)


def test_the_system_trust_store_is_used_and_certifi_only_without_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _server, with_one_ca = tls_pair(tmp_path)
    empty = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for system, more_than_one in ((with_one_ca, False), (empty, True)):
        monkeypatch.setattr(ssl, "create_default_context", lambda system=system: system)
        context = RegistryHttp("https://127.0.0.1:9", display=DISPLAY)._tls_context()
        assert context is system
        assert (context.cert_store_stats()["x509_ca"] > 1) is more_than_one


# --- what is sent, and what messages show ----------------------------------------------------


def test_the_length_sent_is_the_bodys_own() -> None:
    with HostileRegistry(fault=lambda _seen: Reply(200)) as registry:
        http = transport(registry)
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
        http = transport(registry)
        opened = http.send("POST", registry.origin + "/v2/x/blobs/uploads/",
                           deadline=http.deadline())
        location = http.resolve(opened.url, opened.header("Location"), "POST")
        stored = http.send("PUT", f"{location}?digest={digest}", body=body,
                           deadline=http.deadline(blob_size=len(body)))
        assert stored.status == 201, stored.body
        assert registry.store.blobs[digest] == data


def test_registry_text_is_shown_escaped_and_short() -> None:
    assert shown("a\nb\x1b[31m\u202e") == "a\\x0ab\\x1b[31m\\u202e"
    assert shown(" a b~") == " a b~" and shown("\x7f") == "\\x7f"
    assert shown("x" * 500) == "x" * 200 + "…"
    assert shown("abc", 2) == "ab…" and shown("ab", 2) == "ab"
    assert oci_origin.MAX_SHOWN_CHARS == 200
    assert path_of("http://h:1/v2/x/blobs/uploads/9?_state=secret") == "/v2/x/blobs/uploads/9"
    assert path_of("http://h:1") == "/"


def test_origins_compare_scheme_host_and_port() -> None:
    assert Origin.of("http://127.0.0.1/x") == Origin("http", "127.0.0.1", 80)
    assert Origin.of("https://GHCR.io/x") == Origin("https", "ghcr.io", 443)
    assert Origin.of("http://[::1]:5000/").text == "http://[::1]:5000"
    assert Origin.of("https://h/") != Origin.of("http://h:443/")


def test_a_message_names_an_origin_never_its_path_and_an_absent_header_is_none() -> None:
    assert where("https://Registry.example:5000/v2/x/blobs/uploads/?state=secret") == \
        "https://registry.example:5000"
    assert where("https://[::1") == "<unparsable>"
    headers = Message()
    headers["Location"] = "/v2/x"
    answer = Answer(status=202, headers=headers, body=b"", url="https://registry.example")
    assert answer.header("location") == "/v2/x"
    assert answer.header("Docker-Content-Digest") is None  # absent: never the text "None"
