"""A CONNECT proxy served by the test itself on 127.0.0.1, in front of the test registries.

One request per connection: a CONNECT to a host it knows (`routes`: a name or address → the
loopback address serving it, so a registry can be named `registry.test`, which nothing but
this proxy resolves), after checking `Proxy-Authorization` when it has `credentials`; then it
carries bytes both ways until either side closes. Each request head is recorded (method,
target, headers), and so is every byte it carried towards the registry, for the test to
read; a `fault` hook sees each head first and may answer in the proxy's place (a 407, an
answer dribbled, garbage).
"""

from __future__ import annotations

import base64
import contextlib
import socket
import socketserver
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ProxyFault = Callable[["ProxySeen"], "Iterable[bytes] | None"]
_MAX_HEAD_LINES = 100


@dataclass(frozen=True)
class ProxySeen:
    """One request head as the proxy received it."""

    method: str
    target: str
    headers: dict[str, str]  # names lower-cased


def answer(status: int, reason: str, headers: Mapping[str, str] | None = None,
           body: bytes = b"") -> list[bytes]:
    """A whole answer as the pieces a fault returns."""
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in (headers or {}).items()),
             f"Content-Length: {len(body)}"]
    return [("\r\n".join(lines) + "\r\n\r\n").encode() + body]


class ConnectProxy:
    """A proxy on 127.0.0.1 and port 0; a context manager."""

    def __init__(self, routes: Mapping[str, str], *, credentials: tuple[str, str] | None = None,
                 fault: ProxyFault | None = None) -> None:
        self.routes = dict(routes)
        self.credentials = credentials
        self.fault = fault
        self.seen: list[ProxySeen] = []
        self.carried = bytearray()  # every byte carried towards the registry
        self._lock = threading.Lock()
        self._server = _ProxyServer(("127.0.0.1", 0), _ProxyHandler, self)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})

    def url(self, user: str | None = None, password: str | None = None) -> str:
        """The proxy's URL, with credentials when given (as HTTPS_PROXY names it)."""
        login = f"{user}:{password}@" if user is not None else ""
        return f"http://{login}127.0.0.1:{self.port}"

    def __enter__(self) -> ConnectProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def carry(self, data: bytes) -> None:
        with self._lock:
            self.carried.extend(data)

    def authorized(self, seen: ProxySeen) -> bool:
        if self.credentials is None:
            return True
        expected = base64.b64encode(":".join(self.credentials).encode()).decode()
        return seen.headers.get("proxy-authorization") == f"Basic {expected}"


class _ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[_ProxyHandler],
                 proxy: ConnectProxy) -> None:
        self.proxy = proxy
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up is what these tests are about: stay quiet."""


class _ProxyHandler(socketserver.StreamRequestHandler):
    rbufsize = 0  # nothing past the head is read ahead: the tunnel's bytes stay in the socket
    server: _ProxyServer

    def handle(self) -> None:
        proxy = self.server.proxy
        seen = self._head()
        if seen is None:
            return
        proxy.seen.append(seen)
        fault = proxy.fault(seen) if proxy.fault else None
        if fault is not None:
            for piece in fault:
                self.wfile.write(piece)
                self.wfile.flush()
            return
        if seen.method != "CONNECT":
            self.wfile.write(answer(405, "Method Not Allowed")[0])
            return
        if not proxy.authorized(seen):
            self.wfile.write(answer(407, "Proxy Authentication Required",
                                    {"Proxy-Authenticate": 'Basic realm="test proxy"'},
                                    b"no entry")[0])
            return
        host, _, port = seen.target.rpartition(":")
        address = proxy.routes.get(host.strip("[]"))
        if address is None or not port.isdigit():
            self.wfile.write(answer(502, "Bad Gateway")[0])
            return
        with socket.create_connection((address, int(port)), timeout=5) as upstream:
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            upstream.settimeout(30)
            self._relay(self.connection, upstream, proxy)

    def _head(self) -> ProxySeen | None:
        lines: list[str] = []
        for _ in range(_MAX_HEAD_LINES):
            read = self.rfile.readline(65537)
            if read in (b"", b"\r\n", b"\n"):
                break
            lines.append(read.decode("latin-1").rstrip("\r\n"))
        if not lines or len(lines[0].split()) != 3:
            return None
        method, target, _version = lines[0].split()
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return ProxySeen(method, target, headers)

    @staticmethod
    def _relay(client: socket.socket, upstream: socket.socket, proxy: ConnectProxy) -> None:
        def pipe(source: socket.socket, target: socket.socket, towards_registry: bool) -> None:
            try:
                while data := source.recv(65536):
                    if towards_registry:
                        proxy.carry(data)
                    target.sendall(data)
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    target.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pipe, args=(upstream, client, False), daemon=True)
        back.start()
        client.settimeout(30)
        pipe(client, upstream, True)
        back.join(timeout=30)
