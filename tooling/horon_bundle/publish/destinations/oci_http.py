"""Every request to an OCI registry: one deadline, capped bodies, our own redirects, bounded
retries, and credentials for the registry's own origin only.

A registry is a server someone else runs; a broken or hostile one must control neither our
memory, our clock nor our credentials (docs/threat-model.md, "A hostile registry"):

- **Memory.** A body is read piece by piece up to a cap and never further: a manifest, an
  index, a tag page, a token answer `MAX_JSON_BYTES` (more is `publish.too-large`); an error
  answer `MAX_ERROR_BYTES` (the rest is left unread and the connection closed), of which at
  most `MAX_SHOWN_CHARS` (`oci_origin`) characters, escaped, reach a message.
- **Clock.** A request has one deadline for everything it does — connect, TLS handshake,
  sending, the status line and headers, the body, its retries and redirects: each socket
  operation waits at most the time left (`oci_deadline`), so a server dribbling a byte a
  second is given up at the deadline, not after its last byte (`publish.deadline`). A small
  request has `SMALL_REQUEST_DEADLINE`; a blob upload `BLOB_DEADLINE` plus one second per
  `MIN_BLOB_RATE` bytes.
- **Credentials.** A request to any origin (scheme, host, port) but the one its credentials
  are for — the registry's own, or a token realm `oci_realms` allows — is sent without its
  `Authorization` header, whoever built the headers; redirects are followed here
  (for GET and HEAD, at most `MAX_REDIRECTS`), never by the HTTP library, and every URL the
  registry names — an upload `Location`, a redirect, a next page, a token realm — is refused
  (`publish.unsafe-location`) when it would take HTTPS to plain HTTP, plain HTTP to a host
  that is not loopback, carry user information or use another scheme.
- **Retries** are bounded and said: a read (GET, HEAD) answered 429, 500, 502, 503 or 504, or
  whose connection was refused or lost, is tried `MAX_ATTEMPTS` times in all, after
  `RETRY_DELAYS`, within its one deadline; each retry is reported (`on_retry`), and the
  refusal names the attempts. A write is never repeated: a re-run completes a release.
- **Proxies** the environment names are used through a CONNECT tunnel (`oci_proxy`), under
  the same clock; a proxy that cannot be used or refuses the tunnel is `publish.proxy`.

Built on http.client, which reads the status line, headers and body through the
deadline-bound stream of `oci_deadline`; requests can bound none of those reads as a whole,
and its redirects keep credentials across origins.
"""

from __future__ import annotations

import http.client
import ssl
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass, replace
from email.message import Message
from typing import Protocol

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.publish.destinations.interface import is_loopback
from horon_bundle.publish.destinations.oci_deadline import (
    READ_PIECE,
    RETRY_DELAYS,
    Deadline,
    DeadlineSpent,
    Limits,
    NoConnection,
    arm,
    bounded_response,
    connecting,
)
from horon_bundle.publish.destinations.oci_origin import Origin, path_of, where
from horon_bundle.publish.destinations.oci_proxy import Proxies, ProxyProblem, through

MAX_JSON_BYTES = 4 << 20  # a manifest, an index, a tag page, a token or ping answer
MAX_ERROR_BYTES = 64 << 10  # read of an error answer (401, 4xx, 5xx); the rest never is
MAX_REDIRECTS = 3  # hops followed for one GET or HEAD
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1  # a read is tried 3 times in all
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
RETRIED_METHODS = frozenset({"GET", "HEAD"})
SEND_PIECE = 256 << 10  # bytes per send: each one waits at most the time left
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class Body(Sized, Iterable[bytes], Protocol):
    """A request body streamed in pieces, with a known length (see `FileBody`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    status: int
    headers: Message  # names matched case-insensitively
    body: bytes  # capped; an error answer's first MAX_ERROR_BYTES
    url: str  # where it came from, after redirects
    attempts: int = 1

    def header(self, name: str) -> str | None:
        value = self.headers.get(name)
        return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class _Call:
    method: str
    headers: dict[str, str]
    body: bytes | Body | None
    limit: int
    deadline: Deadline
    authorized: Origin  # the one origin its Authorization header may go to


class RegistryHttp:
    """The transport of one registry client: kept-alive connections per origin."""

    def __init__(self, registry: str, *, display: str, limits: Limits | None = None,
                 tls: ssl.SSLContext | None = None, proxies: Proxies | None = None,
                 on_retry: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.origin = Origin.of(registry)
        self.display = display
        self.limits = limits or Limits()
        self._tls = tls  # None: the system's trust store, loaded on the first HTTPS connect
        self.proxies = proxies or Proxies()  # None: every origin connected to directly
        self._on_retry = on_retry
        self._sleep = sleep
        self._pool: dict[Origin, http.client.HTTPConnection] = {}
        # kept-alive connections are closed with the transport, even one nobody closed
        weakref.finalize(self, _close_all, self._pool)

    def deadline(self, blob_size: int | None = None) -> Deadline:
        """A small request's deadline, or a blob upload's (longer with its size)."""
        if blob_size is None:
            return Deadline(self.limits.small)
        return Deadline(self.limits.blob + blob_size / self.limits.min_blob_rate)

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = _system_tls()
        return self._tls

    def close(self) -> None:
        _close_all(self._pool)

    # --- URLs ------------------------------------------------------------------------------
    def url_problem(self, url: str) -> str | None:
        """Why a URL must not be requested, or None."""
        if any(not "!" <= c <= "~" for c in url):
            return "holds whitespace, a control or a non-ASCII character"
        try:
            parts = urllib.parse.urlsplit(url)
            parts.port  # noqa: B018 - parsed for its ValueError
        except ValueError:
            return "is not a URL"
        if parts.scheme not in ("http", "https"):
            return "is neither HTTP nor HTTPS"
        if "@" in parts.netloc:
            return "holds user information"
        if not parts.hostname:
            return "has no host"
        if parts.scheme == "http" and self.origin.scheme == "https":
            return "would downgrade HTTPS to plain HTTP"
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            return "is plain HTTP to a host that is not loopback"
        return None

    def resolve(self, request_url: str, location: str | None, what: str) -> str:
        """A `Location` (relative: against the request's URL) as a URL safe to request."""
        if not location:
            raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                              f"{self.display}: {what}: the answer names no Location")
        url = urllib.parse.urljoin(request_url, location)
        problem = self.url_problem(url)
        if problem is not None:
            raise Refused.one(codes.PUBLISH_UNSAFE_LOCATION,
                              f"{self.display}: {what}: the location {where(url)} {problem}; "
                              "nothing was sent there")
        return url

    # --- requests --------------------------------------------------------------------------
    def send(self, method: str, url: str, *, deadline: Deadline,
             headers: dict[str, str] | None = None, body: bytes | Body | None = None,
             limit: int = MAX_JSON_BYTES, authorized: Origin | None = None) -> Answer:
        """One request to its answer: redirects of a GET or HEAD followed, a read retried;
        an `Authorization` header only to `authorized` (by default the registry's origin)."""
        what = f"{method} {path_of(url)}"
        problem = self.url_problem(url)
        if problem is not None:
            raise Refused.one(codes.PUBLISH_UNSAFE_LOCATION,
                              f"{self.display}: {what}: {where(url)} {problem}")
        call = _Call(method, headers or {}, body, limit, deadline, authorized or self.origin)
        hops = attempts = 0
        most = len(self.limits.retry_delays) + 1  # MAX_ATTEMPTS unless a test says otherwise
        while True:
            attempts += 1
            failure, answer = self._attempt(call, url)
            if (method in RETRIED_METHODS and attempts < most
                    and (answer is None or answer.status in RETRY_STATUSES)):
                delay = self.limits.retry_delays[attempts - 1]
                if deadline.left() > delay:
                    said = failure if answer is None else str(answer.status)
                    if self._on_retry is not None:
                        self._on_retry(f"{self.display}: {what}: {said}; attempt "
                                       f"{attempts + 1} of {most} in {delay:g} s")
                    self._sleep(delay)
                    continue
            if answer is None:
                raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{self.display}: {what}: "
                                  f"{failure}{_tries(attempts)}")
            if method not in RETRIED_METHODS or answer.status not in _REDIRECTS:
                return replace(answer, attempts=attempts)
            hops += 1
            if hops > MAX_REDIRECTS:
                raise Refused.one(codes.PUBLISH_UNSAFE_LOCATION, f"{self.display}: {what}: "
                                  f"more than {MAX_REDIRECTS} redirects")
            url = self.resolve(url, answer.header("Location"), f"{what}: redirect")
            attempts = 0

    def _attempt(self, call: _Call, url: str) -> tuple[str, Answer | None]:
        """(why it failed, None) for a failure worth retrying; refuses every other one."""
        what = f"{self.display}: {call.method} {path_of(url)}"
        try:
            return "", self._exchange(call, url)
        except ProxyProblem as exc:
            raise Refused.one(codes.PUBLISH_PROXY, f"{what}: {exc}") from None
        except NoConnection as exc:
            raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{what}: no connection within "
                              f"{exc.args[0]:g} s{self._via(url)}") from None
        except (DeadlineSpent, TimeoutError):
            spent = call.deadline.left() <= 0
            raise Refused.one(codes.PUBLISH_DEADLINE, f"{what}: " + (
                f"no complete answer within {call.deadline.seconds:g} s" if spent
                else f"no progress for {self.limits.idle:g} s") + self._via(url)) from None
        except ssl.SSLError:
            raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{what}: TLS handshake or certificate "
                              f"verification failed{self._via(url)}") from None
        except ConnectionRefusedError:
            return f"connection refused{self._via(url)}", None
        except (ConnectionError, http.client.IncompleteRead):
            return f"connection lost{self._via(url)}", None
        except http.client.HTTPException as exc:
            raise Refused.one(codes.PUBLISH_DESTINATION_STATE, f"{what}: not a well-formed "
                              f"HTTP answer ({type(exc).__name__})") from None
        except OSError as exc:
            raise Refused.one(codes.PUBLISH_UNREACHABLE, f"{what}: "
                              f"{exc.strerror or type(exc).__name__}{self._via(url)}") from None

    def _via(self, url: str) -> str:
        """How a message says the request went through a proxy ("" when it did not)."""
        try:
            proxy = self.proxies.route(Origin.of(url))
        except ProxyProblem:
            return ""
        return "" if proxy is None else f" through the proxy {proxy.text}"

    def _exchange(self, call: _Call, url: str) -> Answer:
        origin = Origin.of(url)
        # credentials never leave the origin they are for, whoever built the headers
        sent = {name: value for name, value in call.headers.items()
                if origin == call.authorized or name.lower() != "authorization"}
        parts = urllib.parse.urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection = self._pool.pop(origin, None)
        response: http.client.HTTPResponse | None = None
        try:
            if connection is not None:
                try:  # kept alive: the server may have closed it meanwhile
                    response = self._request(connection, call, target, sent)
                except (ConnectionError, http.client.RemoteDisconnected, ssl.SSLError):
                    connection.close()
                    connection = None
            if connection is None:
                connection = self._connect(origin, call.deadline)
                response = self._request(connection, call, target, sent)
            assert response is not None
            data, whole = self._read(response, url, call.limit)
        except BaseException:
            if response is not None:
                response.close()
            if connection is not None:
                connection.close()
            raise
        response.close()
        if whole and not response.will_close:
            self._pool[origin] = connection
        else:
            connection.close()
        return Answer(status=response.status, headers=response.headers, body=data, url=url)

    def _connect(self, origin: Origin, deadline: Deadline) -> http.client.HTTPConnection:
        proxy = self.proxies.route(origin)
        tls = self._tls_context() if origin.scheme == "https" else None
        if proxy is not None:
            return through(proxy, origin, deadline, self.limits, tls)
        with connecting(deadline, self.limits.connect) as timeout:
            connection = (http.client.HTTPSConnection(origin.host, origin.port, timeout=timeout,
                                                      context=tls) if tls is not None
                          else http.client.HTTPConnection(origin.host, origin.port,
                                                          timeout=timeout))
            connection.connect()
        return connection

    def _request(self, connection: http.client.HTTPConnection, call: _Call, target: str,
                 headers: dict[str, str]) -> http.client.HTTPResponse:
        sock, body, deadline = connection.sock, call.body, call.deadline
        connection.response_class = bounded_response(deadline, self.limits.idle)
        connection.putrequest(call.method, target)  # with Accept-Encoding: identity
        for name, value in headers.items():
            if name.lower() != "content-length":
                connection.putheader(name, value)
        if body is not None or call.method in ("POST", "PUT", "PATCH"):
            # the length of what is sent, never a caller's word for it
            connection.putheader("Content-Length", str(0 if body is None else len(body)))
        arm(sock, deadline, self.limits.idle)
        connection.endheaders()
        chunks: Iterable[bytes] = () if body is None else [body] if isinstance(body, bytes) \
            else body
        by_kernel = getattr(body, "send_by_kernel", None)
        try:
            if by_kernel is not None and not isinstance(sock, ssl.SSLSocket):
                chunks = ()  # a file on a plain connection: sendfile(2), no copy through here
                by_kernel(sock, lambda: arm(sock, deadline, self.limits.idle))
            for chunk in chunks:
                view = memoryview(chunk)
                for start in range(0, len(view), SEND_PIECE):
                    arm(sock, deadline, self.limits.idle)
                    sock.sendall(view[start:start + SEND_PIECE])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may have answered early (401, 413): its answer says why
        return connection.getresponse()

    def _read(self, response: http.client.HTTPResponse, url: str,
              limit: int) -> tuple[bytes, bool]:
        """The body, capped; and whether it was read whole (the connection can be kept)."""
        error = response.status >= 300
        cap = MAX_ERROR_BYTES if error else limit
        if not error and response.length is not None and response.length > cap:
            raise self._too_large(url, cap)
        pieces: list[bytes] = []
        size = 0
        while size <= cap:  # past the cap by at most one piece
            piece = response.read(READ_PIECE)
            if not piece:
                if response.length:  # http.client's read(n) takes an early end for the end
                    raise http.client.IncompleteRead(b"")
                return b"".join(pieces), True
            pieces.append(piece)
            size += len(piece)
        if not error:
            raise self._too_large(url, cap)
        return b"".join(pieces)[:cap], False

    def _too_large(self, url: str, cap: int) -> Refused:
        return Refused.one(codes.PUBLISH_TOO_LARGE, f"{self.display}: {path_of(url)}: the "
                           f"answer is larger than {cap} bytes; nothing more was read")


def _system_tls() -> ssl.SSLContext:
    """Certificates verified against the system's trust store (`SSL_CERT_FILE` and
    `SSL_CERT_DIR` name others); where Python finds none there (python.org's macOS builds),
    against certifi's bundle, as requests did."""
    context = ssl.create_default_context()
    if not context.cert_store_stats()["x509_ca"]:
        try:
            import certifi  # noqa: PLC0415 - only where the system store is empty
        except ImportError:
            return context
        context.load_verify_locations(certifi.where())
    return context


def _close_all(pool: dict[Origin, http.client.HTTPConnection]) -> None:
    for connection in pool.values():
        connection.close()
    pool.clear()


def _tries(attempts: int) -> str:
    return f" ({attempts} attempts)" if attempts > 1 else ""
