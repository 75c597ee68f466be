"""Registry requests through an HTTP proxy (`oci_proxy`): which proxy the environment names for
an origin (NO_PROXY, loopback, the variables' precedence), and the CONNECT tunnel through a
proxy the test serves on 127.0.0.1 (tests/connect_proxy.py) in front of a registry named
`registry.test`, a name nothing but that proxy resolves: the proxy sees one CONNECT and its
own credentials, the registry the registry's credentials inside TLS, and a proxy that
dribbles, asks for credentials or answers garbage is refused within the deadline.

In-process and quick (judges of `nox -s mutants` for the proxy and the transport).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from horon_bundle.publish.destinations.interface import OciAddress, parse_address
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.publish.destinations.oci_deadline import Limits
from horon_bundle.publish.destinations.oci_http import RegistryHttp
from horon_bundle.publish.destinations.oci_origin import Origin
from horon_bundle.publish.destinations.oci_proxy import (
    Proxy,
    ProxyProblem,
    bypassed,
    parse_proxy,
    read_proxies,
)
from tests.connect_proxy import ConnectProxy, ProxyFault, ProxySeen, answer
from tests.helpers import LATE
from tests.hostile_registry import MIB, HostileRegistry, dribble, huge, tls_pair
from tests.transport_support import (
    BASIC,
    CREDENTIALS,
    DISPLAY,
    PASSWORD,
    REPO,
    client_of,
    refusal,
    timed,
)

NAME = "registry.test"  # resolved by the test proxy only
PREFIX = f"oci://{NAME}:"
PROXY_USER, PROXY_PASSWORD = "proxy-user", "proxy-s3cret"
Tls = tuple[ssl.SSLContext, ssl.SSLContext, Path]  # the registry's, the client's, the CA file


@pytest.fixture(name="tls")
def tls_fixture(tmp_path: Path) -> Tls:
    server, trust = tls_pair(tmp_path, NAME)
    return server, trust, tmp_path / "registry.crt"


@pytest.fixture(name="registry")
def registry_fixture(tls: Tls) -> Iterator[HostileRegistry]:
    """A registry on 127.0.0.1 speaking HTTPS for `registry.test`, asking for the credentials."""
    with HostileRegistry(tls=tls[0], credentials=("ci", PASSWORD)) as registry:
        yield registry


def _proxy(credentials: tuple[str, str] | None = None,
           fault: ProxyFault | None = None) -> ConnectProxy:
    return ConnectProxy({NAME: "127.0.0.1"}, credentials=credentials, fault=fault)


def _environ(proxy_url: str, **more: str) -> dict[str, str]:
    return {**CREDENTIALS, "HTTPS_PROXY": proxy_url, **more}


# --- through the tunnel ----------------------------------------------------------------------


def test_a_publish_goes_through_the_proxys_tunnel_with_each_credential_where_it_belongs(
        registry: HostileRegistry, tls: Tls,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The client as publish opens it (its transport from the environment: the proxy from
    HTTPS_PROXY, the test CA as the system's trust store)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(tls[2]))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    address = parse_address(f"oci://{NAME}:{registry.port}/horon")
    assert isinstance(address, OciAddress) and not address.loopback
    with _proxy(credentials=(PROXY_USER, PROXY_PASSWORD)) as proxy:
        client = RegistryClient(address, _environ(proxy.url(PROXY_USER, PROXY_PASSWORD)))
        large = b"z" * (2 * MIB)
        client.push_blob(REPO, large)
        assert client.get_manifest(REPO, "missing") is None
        client.close()
    proxy_basic = "Basic " + base64.b64encode(f"{PROXY_USER}:{PROXY_PASSWORD}".encode()).decode()
    assert {(s.method, s.target) for s in proxy.seen} == {("CONNECT", f"{NAME}:{registry.port}")}
    assert all(s.headers == {"host": f"{NAME}:{registry.port}",
                             "proxy-authorization": proxy_basic} for s in proxy.seen)
    assert len(proxy.seen) == len({s.peer for s in registry.seen})  # a CONNECT per connection
    assert PASSWORD.encode() not in proxy.carried and len(proxy.carried) > 2 * MIB  # TLS inside
    assert {s.authorization for s in registry.seen} == {None, BASIC}
    assert all("proxy-authorization" not in s.headers for s in registry.seen)
    assert all(s.headers["host"] == f"{NAME}:{registry.port}" for s in registry.seen)


def test_no_proxy_sends_the_registry_around_the_proxy(registry: HostileRegistry,
                                                      tls: Tls) -> None:
    with _proxy() as proxy:
        around = client_of(registry, _environ(proxy.url(), NO_PROXY=f"other.test,.{NAME}"),
                           tls=tls[1], named=NAME)
        message = refusal("publish.unreachable", PREFIX, around.get_manifest, REPO, "t")
        assert proxy.seen == [] and "proxy" not in message  # straight to a name no DNS knows
        through = client_of(registry, _environ(proxy.url(), no_proxy="other.test,*.example"),
                            tls=tls[1], named=NAME)
        assert through.get_manifest(REPO, "t") is None
        assert [s.method for s in proxy.seen] == ["CONNECT"]


def test_a_loopback_registry_is_never_proxied() -> None:
    with _proxy() as proxy, HostileRegistry() as registry:
        environ = {"HTTPS_PROXY": proxy.url(), "HTTP_PROXY": proxy.url(), "NO_PROXY": ""}
        assert client_of(registry, environ).get_manifest(REPO, "t") is None
        assert proxy.seen == [] and registry.seen


def test_a_proxy_that_dribbles_its_answer_is_given_up_at_the_deadline(
        registry: HostileRegistry, tls: Tls) -> None:
    connected = b"HTTP/1.1 200 Connection established\r\n\r\n"
    with _proxy(fault=lambda _seen: dribble(connected, 0.1)) as proxy:
        client = client_of(registry, _environ(proxy.url()), tls=tls[1], named=NAME)
        took, message = timed("publish.deadline", PREFIX, client.get_manifest, REPO, "t")
    assert 1.9 <= took < 2.8 + LATE  # QUICK_CLIENT: 2 s for the whole request
    assert message.endswith(f"GET /v2/{REPO}/manifests/t: no complete answer within 2 s "
                            f"through the proxy http://127.0.0.1:{proxy.port}")
    assert registry.seen == []


def test_a_silent_proxy_is_given_up_after_the_idle_limit(
        registry: HostileRegistry, tls: Tls) -> None:
    with _proxy(fault=lambda _seen: dribble(b"HT", 5.0)) as proxy:
        client = client_of(registry, _environ(proxy.url()), tls=tls[1], named=NAME)
        took, message = timed("publish.deadline", PREFIX, client.get_manifest, REPO, "t")
    assert 1.0 <= took < 1.8 + LATE and message.endswith(f"no progress for 1 s through the proxy "
                                                  f"http://127.0.0.1:{proxy.port}")


@pytest.mark.parametrize(("login", "asks", "said"), [
    (None, "Basic", "it asks for credentials (basic); none are in HTTPS_PROXY "
                    "(http://USER:PASSWORD@HOST:PORT)"),
    ((PROXY_USER, "wrong"), "Basic", "it refused the credentials in HTTPS_PROXY"),
    ((PROXY_USER, PROXY_PASSWORD), "Negotiate",
     "it asks for negotiate credentials; only Basic ones, from HTTPS_PROXY, are sent"),
], ids=["none", "wrong", "negotiate"])
def test_a_proxy_answering_407_is_refused_saying_why(
        registry: HostileRegistry, tls: Tls,
        login: tuple[str, str] | None, asks: str, said: str) -> None:
    def fault(seen: ProxySeen) -> list[bytes] | None:
        expected = "Basic " + base64.b64encode(f"{PROXY_USER}:{PROXY_PASSWORD}".encode()).decode()
        if asks == "Basic" and seen.headers.get("proxy-authorization") == expected:
            return None
        return answer(407, "Proxy Authentication Required", {"Proxy-Authenticate": asks})

    with _proxy(fault=fault) as proxy:
        url = proxy.url(*login) if login else proxy.url()
        client = client_of(registry, _environ(url), tls=tls[1], named=NAME)
        message = _refused_push(client)
    assert message.endswith(f"POST /v2/{REPO}/blobs/uploads/: the proxy http://127.0.0.1:"
                            f"{proxy.port} answered 407 to CONNECT {NAME}:{registry.port}: {said}")
    assert PROXY_PASSWORD not in message and "wrong" not in message
    assert registry.seen == [] and len(proxy.seen) == 1


def _refused_push(client: RegistryClient) -> str:
    """The one finding of `check_push` (publish's preflight asks it), checked as a refusal."""
    [finding] = client.check_push(REPO)
    assert finding.code.name == "publish.proxy", finding
    assert "\n" not in finding.message and PASSWORD not in finding.message
    return finding.message


def test_a_407_page_is_never_read(registry: HostileRegistry,
                                  tls: Tls) -> None:
    served: list[int] = []

    def page() -> Iterator[bytes]:
        yield b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n"
        for piece in huge(600 * MIB):
            served.append(len(piece))
            yield piece

    with _proxy(fault=lambda _seen: page()) as proxy:
        client = client_of(registry, _environ(proxy.url()), tls=tls[1], named=NAME)
        took, _ = timed("publish.proxy", PREFIX, client.get_manifest, REPO, "t")
    assert took < 1.5 + LATE and sum(served) < 32 * MIB


@pytest.mark.parametrize(("raw", "said"), [
    ([b"SMTP ready\r\n\r\n"], "no well-formed HTTP answer (BadStatusLine)"),
    ([b"HTTP/1.1 200 OK\r\n", *itertools.repeat(b"X-Junk: 1\r\n", 101), b"\r\n"],
     "no well-formed HTTP answer (HTTPException)"),
    ([b"HTTP/1.1 200 OK\r\nX-Long: " + b"x" * (65 << 10) + b"\r\n\r\n"],
     "no well-formed HTTP answer (LineTooLong)"),
], ids=["garbage", "101-headers", "long-line"])
def test_a_garbled_proxy_answer_is_refused(registry: HostileRegistry,
                                           tls: Tls,
                                           raw: list[bytes], said: str) -> None:
    with _proxy(fault=lambda _seen: raw) as proxy:
        client = client_of(registry, _environ(proxy.url()), tls=tls[1], named=NAME)
        message = refusal("publish.proxy", PREFIX, client.get_manifest, REPO, "t")
    assert message.endswith(f"the proxy http://127.0.0.1:{proxy.port} answered CONNECT with "
                            f"{said}")


def test_a_proxy_answering_300_to_connect_is_refused(registry: HostileRegistry,
                                                    tls: Tls) -> None:
    """Only a 2xx opens a tunnel: a 300 is an answer from the proxy, not from the registry."""
    with _proxy(fault=lambda _seen: answer(300, "Multiple Choices")) as proxy:
        client = client_of(registry, _environ(proxy.url()), tls=tls[1], named=NAME)
        message = refusal("publish.proxy", PREFIX, client.get_manifest, REPO, "t")
    assert message.endswith(f"answered 300 to CONNECT {NAME}:{registry.port}")
    assert registry.seen == []


def test_a_proxy_that_cannot_reach_the_registry_is_refused_with_its_answer(
        registry: HostileRegistry, tls: Tls) -> None:
    with ConnectProxy({}) as proxy:  # it knows no registry.test
        client = client_of(registry, _environ(proxy.url()), tls=tls[1], named=NAME)
        message = refusal("publish.proxy", PREFIX, client.get_manifest, REPO, "t")
    assert message.endswith(f"answered 502 to CONNECT {NAME}:{registry.port}")


def test_a_proxy_refusing_connections_is_retried_then_unreachable(
        registry: HostileRegistry, tls: Tls) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = client_of(registry, _environ(f"http://127.0.0.1:{port}"), tls=tls[1], named=NAME)
    message = refusal("publish.unreachable", PREFIX, client.get_manifest, REPO, "t")
    assert message.endswith(f"connection refused through the proxy http://127.0.0.1:{port} "
                            "(3 attempts)")


def _transport(origin: str, proxy_url: str, trust: ssl.SSLContext) -> RegistryHttp:
    return RegistryHttp(origin, display=DISPLAY, tls=trust,
                        limits=Limits(small=2.0, connect=0.3, retry_delays=()),
                        proxies=read_proxies({"https_proxy": proxy_url}))


def test_a_proxy_that_never_accepts_is_given_up_at_the_connect_limit(tls: Tls) -> None:
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
            http = _transport(f"https://{NAME}:1", f"http://127.0.0.1:{port}", tls[1])
            took, message = timed("publish.unreachable", DISPLAY, http.send, "POST",
                                  f"https://{NAME}:1/v2/", deadline=http.deadline())
        finally:
            for waiting in queued:
                waiting.close()
    assert 0.3 <= took < 1.0 + LATE
    assert message.endswith("POST /v2/: no connection within 0.3 s through the proxy "
                            f"http://127.0.0.1:{port}")


def test_a_registry_that_never_shakes_hands_inside_the_tunnel_is_given_up(tls: Tls) -> None:
    with socket.socket() as mute, ConnectProxy({NAME: "127.0.0.1"}) as proxy:
        mute.bind(("127.0.0.1", 0))
        mute.listen(1)
        origin = f"https://{NAME}:{mute.getsockname()[1]}"
        http = _transport(origin, proxy.url(), tls[1])
        took, message = timed("publish.unreachable", DISPLAY, http.send, "GET", origin + "/v2/",
                              deadline=http.deadline())
    assert 0.3 <= took < 1.0 + LATE
    assert message.endswith("GET /v2/: no connection within 0.3 s through the proxy "
                            f"http://127.0.0.1:{proxy.port}")
    assert [s.method for s in proxy.seen] == ["CONNECT"]


@pytest.mark.parametrize(("value", "said"), [
    ("socks5://ci:hunter2@127.0.0.1:1080", "HTTPS_PROXY names a socks5:// proxy; only an http:// "
                                           "proxy is used, through a CONNECT tunnel"),
    ("https://ci:hunter2@proxy.test", "HTTPS_PROXY names a https:// proxy"),
    ("http://ci:hunter2@proxy.test:99999", "HTTPS_PROXY is not a proxy URL"),
    ("http://ci:hunter2@:3128", "HTTPS_PROXY names no proxy host and port"),
    ("http://ci:hunter 2@proxy.test", "HTTPS_PROXY holds whitespace, a control or a non-ASCII"),
])
def test_an_unusable_proxy_is_refused_without_showing_its_value(
        registry: HostileRegistry, value: str, said: str) -> None:
    client = client_of(registry, _environ(value), named=NAME)
    message = refusal("publish.proxy", PREFIX, client.get_manifest, REPO, "t")
    assert said in message and "hunter" not in message
    assert registry.seen == []


# --- which proxy, decided without a network ---------------------------------------------------


@pytest.mark.parametrize(("no_proxy", "url", "direct"), [
    ("", "https://registry.example", False),
    ("*", "https://registry.example:5000", True),
    ("example", "https://registry.example", True),
    ("registry.example", "https://registry.example", True),
    ("registry.example", "https://eu.registry.example", True),
    ("registry.example", "https://notregistry.example", False),
    ("registry.example", "https://registry.example.evil.test", False),
    (".registry.example", "https://registry.example", True),
    ("*.registry.example", "https://eu.registry.example", True),
    ("REGISTRY.Example", "https://eu.registry.EXAMPLE", True),
    ("registry.example", "https://registry.example./v2/", True),
    ("registry.example:5000", "https://registry.example:5000", True),
    ("registry.example:5000", "https://registry.example", False),
    ("registry.example:443", "https://registry.example", True),
    ("registry.example:x", "https://registry.example", False),
    ("registry.example:123456", "https://registry.example", False),
    ("10.0.0.0/8", "https://10.1.2.3", True),
    ("10.0.0.0/8", "https://11.1.2.3", False),
    ("10.0.0.0/8:5000", "https://10.1.2.3:5000", True),
    ("192.0.2.7", "https://192.0.2.7:5000", True),
    ("2.7", "https://192.0.2.7", False),
    ("fd00::/8", "https://[fd00::1]", True),
    ("[fd00::1]:5000", "https://[fd00::1]:5000", True),
    ("[fd00::1]:5000", "https://[fd00::1]", False),
    ("fd00::1", "https://10.0.0.1", False),
    ("other.test,registry.example", "https://registry.example", True),
    ("other.test registry.example", "https://registry.example", True),
    (" , ,", "https://registry.example", False),
    (".", "https://registry.example", False),
    ("registry.example:50000", "https://registry.example:50000", True),  # five digits
    ("registry.example:x1", "https://registry.example:1", False),  # no port, not port 1
    ("other.test:1,registry.example", "https://registry.example", True),  # after a port
    ("10.0.0.0/8,192.0.2.0/24", "https://192.0.2.7", True),  # after a block
    ("192.0.2.1/24", "https://192.0.2.7", True),  # a block written with host bits
])
def test_no_proxy_names_hosts_suffixes_addresses_blocks_and_ports(no_proxy: str, url: str,
                                                                  direct: bool) -> None:
    assert bypassed(Origin.of(url), no_proxy) is direct


def test_the_proxy_for_an_origin_comes_from_its_schemes_variable() -> None:
    def route(environ: dict[str, str], url: str) -> Proxy | None:
        return read_proxies(environ).route(Origin.of(url))

    https = {"HTTPS_PROXY": "http://p.test:3128", "HTTP_PROXY": "http://q.test:8080"}
    assert route(https, "https://r.example") == Proxy(host="p.test", port=3128,
                                                       variable="HTTPS_PROXY")
    assert route({**https, "https_proxy": "r.test:1"}, "https://r.example") == Proxy(
        host="r.test", port=1, variable="https_proxy")  # the lower case wins
    assert route({**https, "https_proxy": ""}, "https://r.example") is None  # and says none
    assert route({"HTTPS_PROXY": "  "}, "https://r.example") is None
    assert route(https, "http://r.example") == Proxy(host="q.test", port=8080,
                                                      variable="HTTP_PROXY")
    for loopback in ("https://127.0.0.1:5000", "https://127.9.9.9", "https://[::1]:5000",
                     "https://localhost:5000", "http://127.0.0.1"):
        assert route({**https, "HTTPS_PROXY": "socks5://x"}, loopback) is None
    assert route({**https, "no_proxy": "r.example", "NO_PROXY": ""}, "https://r.example") is None
    assert route({**https, "NO_PROXY": "r.example"}, "https://r.example") is None
    assert route({"HTTP_PROXY": "http://q.test"}, "https://r.example") is None  # no fallback
    assert read_proxies({}).route(Origin.of("https://r.example")) is None
    with pytest.raises(ProxyProblem, match="HTTPS_PROXY names a ftp:// proxy"):
        route({"HTTPS_PROXY": "ftp://p.test"}, "https://r.example")


def test_a_proxy_url_gives_host_port_and_the_proxys_own_credentials() -> None:
    assert parse_proxy("V", "proxy.corp:3128") == Proxy(host="proxy.corp", port=3128,
                                                        variable="V")
    assert parse_proxy("V", "HTTP://Proxy.Corp/") == Proxy(host="proxy.corp", port=80,
                                                           variable="V")
    assert parse_proxy("V", "http://[fd00::3]:8080").host == "fd00::3"
    login = parse_proxy("V", "http://u%40corp:p%3Aw%25@proxy.corp:8080")
    assert login.authorization == "Basic " + base64.b64encode(b"u@corp:p:w%").decode()
    assert parse_proxy("V", "http://u@proxy.corp:1").authorization == \
        "Basic " + base64.b64encode(b"u:").decode()
    assert "p%3Aw" not in repr(login) and "Basic" not in repr(login)
    assert login.text == "http://proxy.corp:8080"
    edges = parse_proxy("V", "http://!u:p~@proxy.corp:8080")  # the printable range's two ends
    assert edges.authorization == "Basic " + base64.b64encode(b"!u:p~").decode()
    for value in ("http://proxy.corp:0", "http://", "ftp://proxy.corp", "http://p .corp",
                  "http://proxy.corp:x", "http://pr\u00f6xy.corp"):
        with pytest.raises(ProxyProblem):
            parse_proxy("V", value)

