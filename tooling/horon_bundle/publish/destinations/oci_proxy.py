"""A registry behind an HTTP proxy: which proxy the environment names for an origin, and the
CONNECT tunnel through it.

The environment the destination was opened with names the proxy, as curl and requests read
it: `https_proxy` or `HTTPS_PROXY` for an https:// origin, `http_proxy` or `HTTP_PROXY` for an
http:// one (the lower-case variable wins when both are set, an empty value means none), and
`no_proxy` or `NO_PROXY` the hosts reached directly (`bypassed`). A loopback host is never
proxied; plain HTTP goes only to loopback, so in practice HTTPS_PROXY is the one used.

Only an `http://[user:password@]host[:port]` proxy is used (port 80 unless named; a value
without a scheme is taken as http://), and only through a CONNECT tunnel: TLS to the registry
runs end to end inside it, so the proxy learns the registry's host and port and nothing more.
The proxy's credentials (from its URL, percent-decoded) go only to the proxy, as
`Proxy-Authorization: Basic` on the CONNECT; the registry's credentials only inside the
tunnel. A proxy of another scheme (https://, socks5://) is refused (`publish.proxy`) where it
would be used, never bypassed in silence.

The tunnel is made under the request's clock (`oci_deadline`): the connect to the proxy and
the TLS handshake inside the tunnel within the connect limit, the CONNECT answer within the
deadline (every read waits at most the time left, as for any answer). The answer's status line
and headers go through http.client's parser, capped as every registry answer's are (64 KiB a
line, 100 headers); its body, a 407 page say, is never read.
"""

from __future__ import annotations

import base64
import http.client
import ipaddress
import re
import socket
import ssl
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field

from horon_bundle.publish.destinations.interface import is_loopback
from horon_bundle.publish.destinations.oci_deadline import (
    Deadline,
    Limits,
    arm,
    bounded_response,
    connecting,
)
from horon_bundle.publish.destinations.oci_origin import Origin, shown

PROXY_VARIABLES = {"https": ("https_proxy", "HTTPS_PROXY"), "http": ("http_proxy", "HTTP_PROXY")}
NO_PROXY_VARIABLES = ("no_proxy", "NO_PROXY")
DEFAULT_PROXY_PORT = 80  # as requests: a proxy URL without a port
_ENTRIES = re.compile(r"[\s,]+")


class ProxyProblem(Exception):
    """A proxy that cannot be used, or that would not open the tunnel (the argument: why)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Proxy:
    host: str  # lower case; an IPv6 literal without brackets
    port: int
    variable: str  # the variable that named it, for messages
    authorization: str | None = field(default=None, repr=False)  # `Basic …` for the CONNECT

    @property
    def text(self) -> str:
        """The proxy as messages show it: never its credentials."""
        return Origin("http", self.host, self.port).text


@dataclass(frozen=True, slots=True, kw_only=True)
class Proxies:
    """The proxies an environment names (none by default)."""

    named: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # scheme: (name, value)
    no_proxy: str = ""

    def route(self, origin: Origin) -> Proxy | None:
        """The proxy to reach `origin` through, or None to connect directly; a proxy named for
        it that cannot be used is a `ProxyProblem`."""
        chosen = self.named.get(origin.scheme)
        if chosen is None or is_loopback(origin.host) or bypassed(origin, self.no_proxy):
            return None
        return parse_proxy(*chosen)


def read_proxies(environ: Mapping[str, str]) -> Proxies:
    """The proxy variables of `environ`, read once; nothing is judged until a proxy is used."""
    named: dict[str, tuple[str, str]] = {}
    for scheme, names in PROXY_VARIABLES.items():
        variable = next((name for name in names if name in environ), None)
        if variable is not None and environ[variable].strip():
            named[scheme] = (variable, environ[variable].strip())
    no_proxy = next((environ[name] for name in NO_PROXY_VARIABLES if name in environ), "")
    return Proxies(named=named, no_proxy=no_proxy)


def parse_proxy(variable: str, value: str) -> Proxy:
    """The proxy a variable's value names; a refusal never shows the value (it may hold a
    password)."""
    if any(not "!" <= c <= "~" for c in value):
        raise ProxyProblem(f"{variable} holds whitespace, a control or a non-ASCII character")
    try:
        parts = urllib.parse.urlsplit(value if "://" in value else f"http://{value}")
        port = parts.port
    except ValueError:
        raise ProxyProblem(f"{variable} is not a proxy URL") from None
    if parts.scheme.lower() != "http":
        raise ProxyProblem(f"{variable} names a {shown(parts.scheme, 20)}:// proxy; only an "
                           "http:// proxy is used, through a CONNECT tunnel")
    if not parts.hostname or port == 0:
        raise ProxyProblem(f"{variable} names no proxy host and port")
    authorization = None
    if "@" in parts.netloc:
        user, password = (urllib.parse.unquote(part or "") for part in (parts.username,
                                                                         parts.password))
        authorization = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    return Proxy(host=parts.hostname.lower(), port=port or DEFAULT_PROXY_PORT,
                 variable=variable, authorization=authorization)


def bypassed(origin: Origin, no_proxy: str) -> bool:
    """Whether NO_PROXY names `origin`'s host: `*` names every one; a host name names itself
    and every name under it (a leading `.` or `*.` changes nothing); an IP address or a CIDR
    block the addresses in it; `:port` after any of them that port only. Entries are
    separated by commas or spaces, compared without regard to case."""
    host = origin.host.rstrip(".")
    address = _address(host)
    for entry in _ENTRIES.split(no_proxy.lower()):
        if entry == "*":
            return True
        name, port = _split_port(entry)
        if not name or port not in (None, origin.port):
            continue
        try:
            network = ipaddress.ip_network(name, strict=False)
        except ValueError:
            network = None
        if network is not None:
            if address is not None and address in network:
                return True
            continue
        name = name.removeprefix("*").strip(".")
        if address is None and name and (host == name or host.endswith("." + name)):
            return True
    return False


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _split_port(entry: str) -> tuple[str, int | None]:
    """An entry's host and port (None: any); a port that is not a number names no port."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
    elif entry.count(":") == 1:
        name, _, port = entry.partition(":")
        rest = ":" + port
    else:
        return entry, None  # a name, an IPv4 address or block, or a bare IPv6 one
    if not rest:
        return name, None
    number = rest.removeprefix(":")
    return name, int(number) if number.isdigit() and len(number) <= 5 else -1


def through(proxy: Proxy, origin: Origin, deadline: Deadline, limits: Limits,
            tls: ssl.SSLContext | None) -> http.client.HTTPConnection:
    """A connection to `origin` inside `proxy`'s CONNECT tunnel (TLS end to end for https)."""
    sock = tunnel(proxy, origin, deadline, limits)
    try:
        if tls is not None:
            with connecting(deadline, limits.connect) as timeout:
                sock.settimeout(timeout)
                sock = tls.wrap_socket(sock, server_hostname=origin.host)
    except BaseException:
        sock.close()
        raise
    connection = (http.client.HTTPSConnection(origin.host, origin.port, context=tls)
                  if tls is not None else http.client.HTTPConnection(origin.host, origin.port))
    connection.sock = sock
    connection.auto_open = 0  # never a connection of its own, around the proxy
    return connection


def tunnel(proxy: Proxy, origin: Origin, deadline: Deadline, limits: Limits) -> socket.socket:
    """A socket to the proxy that now carries bytes to `origin` (before any TLS)."""
    with connecting(deadline, limits.connect) as timeout:
        sock = socket.create_connection((proxy.host, proxy.port), timeout)
    try:
        _ask(sock, proxy, origin, deadline, limits.idle)
    except BaseException:
        sock.close()
        raise
    return sock


def _ask(sock: socket.socket, proxy: Proxy, origin: Origin, deadline: Deadline,
         idle: float) -> None:
    """CONNECT on `sock`, and the proxy's answer: a 2xx, or the refusal it amounts to."""
    head = [f"CONNECT {origin.authority} HTTP/1.1", f"Host: {origin.authority}"]
    if proxy.authorization is not None:
        head.append(f"Proxy-Authorization: {proxy.authorization}")
    arm(sock, deadline, idle)
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("ascii"))
    answer = bounded_response(deadline, idle)(sock, method="CONNECT")
    try:
        answer.begin()  # the status line and headers; no body is read
    except http.client.RemoteDisconnected:
        raise  # a connection lost, as any other
    except http.client.HTTPException as exc:
        raise ProxyProblem(f"the proxy {proxy.text} answered CONNECT with no well-formed HTTP "
                           f"answer ({type(exc).__name__})") from None
    finally:
        answer.close()  # its reader only: the socket stays open
    if not 200 <= answer.status < 300:
        raise ProxyProblem(_refused(proxy, origin, answer))


def _refused(proxy: Proxy, origin: Origin, answer: http.client.HTTPResponse) -> str:
    said = f"the proxy {proxy.text} answered {answer.status} to CONNECT {origin.authority}"
    if answer.status != 407:
        return said
    schemes = sorted({challenge.split()[0].lower() for challenge in
                      answer.headers.get_all("Proxy-Authenticate") or [] if challenge.split()})
    asked = shown(", ".join(schemes), 60) or "no scheme named"
    if proxy.authorization is None:
        return (f"{said}: it asks for credentials ({asked}); none are in {proxy.variable} "
                "(http://USER:PASSWORD@HOST:PORT)")
    if schemes and "basic" not in schemes:
        return (f"{said}: it asks for {asked} credentials; only Basic ones, from "
                f"{proxy.variable}, are sent")
    return f"{said}: it refused the credentials in {proxy.variable}"
